/*
 * What a kernel launch needs, described without CUDA types: element types, the
 * argument list (tensors with their initialisation, and scalars), the launch
 * geometry and what to compare against the reference. The tuner fills these from
 * the script; the GPU side (engine/gpu.c, and the worker process) acts on them.
 */
#ifndef GB_ENGINE_SPEC_H
#define GB_ENGINE_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GB_MAX_ARGS 32
#define GB_MAX_DIMS 8

typedef enum gb_dtype {
    GB_DT_F64,
    GB_DT_F32,
    GB_DT_F16,
    GB_DT_BF16,
    GB_DT_FP8_E4M3,
    GB_DT_FP8_E5M2,
    GB_DT_I8,
    GB_DT_U8,
    GB_DT_I32,
    GB_DT_U32,
    GB_DT_I64,
    GB_DT_COUNT,
} gb_dtype;

/* "f32", "bf16", ...; NULL for an invalid value. */
const char *gb_dtype_name(gb_dtype dtype);
/* 0 and *out set when name is a dtype, GB_EINVAL otherwise. */
int gb_dtype_parse(const char *name, gb_dtype *out);
size_t gb_dtype_bytes(gb_dtype dtype);
bool gb_dtype_is_float(gb_dtype dtype);

/* How a tensor starts. OUTPUT buffers are filled with NaN (0xFF bytes for integer
 * types) before every checked launch, so an element the kernel never writes fails. */
typedef enum gb_init {
    GB_INIT_RANDN,
    GB_INIT_RAND,
    GB_INIT_ZEROS,
    GB_INIT_ONES,
    GB_INIT_OUTPUT,
    GB_INIT_VALUE,
} gb_init;

const char *gb_init_name(gb_init init);
int gb_init_parse(const char *name, gb_init *out);

/* A tensormap is a TMA descriptor (CUtensorMap, 128 bytes by value) of another
 * argument, a tensor, encoded on the host when the problem is set
 * (engine/tensormap.h). */
typedef enum gb_arg_kind { GB_ARG_TENSOR, GB_ARG_SCALAR, GB_ARG_TENSORMAP } gb_arg_kind;

/* How a tensormap lays its box out in shared memory, how far L2 fetches around
 * each load, and what a load reads past the tensor's edge: CUDA's
 * CU_TENSOR_MAP_SWIZZLE_*, CU_TENSOR_MAP_L2_PROMOTION_*, CU_TENSOR_MAP_FLOAT_OOB_FILL_*. */
typedef enum gb_swizzle {
    GB_SWIZZLE_NONE,
    GB_SWIZZLE_32B,
    GB_SWIZZLE_64B,
    GB_SWIZZLE_128B,
    GB_SWIZZLE_COUNT,
} gb_swizzle;
typedef enum gb_l2_promotion {
    GB_L2_PROMOTION_NONE,
    GB_L2_PROMOTION_64B,
    GB_L2_PROMOTION_128B,
    GB_L2_PROMOTION_256B,
    GB_L2_PROMOTION_COUNT,
} gb_l2_promotion;
typedef enum gb_oob_fill { GB_OOB_ZERO, GB_OOB_NAN, GB_OOB_COUNT } gb_oob_fill;

/* "none", "32B", ...; NULL for an invalid value. The parsers return GB_EINVAL for
 * an unknown name. */
const char *gb_swizzle_name(gb_swizzle swizzle);
int gb_swizzle_parse(const char *name, gb_swizzle *out);
const char *gb_l2_promotion_name(gb_l2_promotion promotion);
int gb_l2_promotion_parse(const char *name, gb_l2_promotion *out);
const char *gb_oob_fill_name(gb_oob_fill fill);
int gb_oob_fill_parse(const char *name, gb_oob_fill *out);

/* A tensormap's rank: TMA takes 1 to 5 dimensions. */
#define GB_TENSORMAP_MAX_RANK 5

/* Values planted into a float tensor after its init, at given element indices, so
 * a kernel's handling of NaN and infinities is checked against the reference's. */
typedef enum gb_special {
    GB_SPECIAL_NAN,
    GB_SPECIAL_INF,
    GB_SPECIAL_NINF,
    GB_SPECIAL_COUNT,
} gb_special;

/* Most planted positions of one kind in one tensor (the script allows 16 in all). */
#define GB_MAX_PLANTED 16

/* Scalars are i32, u32, i64, f32 or f64; the value is kept as the widest type of its
 * family and narrowed when the launch packs it. */
typedef struct gb_arg {
    gb_arg_kind kind;
    gb_dtype dtype;
    int n_dims; /* tensor */
    int64_t dims[GB_MAX_DIMS];
    gb_init init;
    double init_value; /* GB_INIT_VALUE */
    bool checked;      /* compared with the reference: the reference gets its own copy */
    bool inout;        /* an in-place tensor: starts with data, the kernel overwrites it */
    int n_planted[GB_SPECIAL_COUNT];
    int64_t planted[GB_SPECIAL_COUNT][GB_MAX_PLANTED]; /* 0-based element indices */
    int64_t int_value;                                 /* integer scalar */
    double float_value;                                /* floating scalar */
    /* A tensormap: the tensor it describes (0-based position), seen as dims
     * (n_dims 0: the tensor's own) with strides in elements (n_strides 0: packed;
     * the innermost is 1), loaded box by box. Dims, strides and box run outermost
     * first, like a tensor's dims; dtype is the tensor's. */
    int tensor;
    int n_strides;
    int64_t strides[GB_TENSORMAP_MAX_RANK];
    int n_box;
    uint32_t box[GB_TENSORMAP_MAX_RANK];
    gb_swizzle swizzle;
    gb_l2_promotion l2_promotion;
    gb_oob_fill oob_fill;
} gb_arg;

/* The wire description (base/wire.h; gb_wire_arg): every field is sent whatever
 * the kind; the type's check refuses a tensor without dims or a scalar with some. */
#define GB_ARG_WIRE(X)                                                                             \
    X(kind, ENUM, "kind", .enumeration = &gb_wire_enum_arg_kind)                                   \
    X(dtype, ENUM, "dtype", .enumeration = &gb_wire_enum_dtype)                                    \
    X(dims, INT64, "dims", .arity = GB_WIRE_INLINE, .count = offsetof(gb_arg, n_dims),             \
      GB_WIRE_RANGE(0, 9.0e15))                                                                    \
    X(init, ENUM, "init", .enumeration = &gb_wire_enum_init)                                       \
    X(init_value, DOUBLE, "init_value", .flags = GB_WIRE_NULL_NAN)                                 \
    X(checked, BOOL, "checked")                                                                    \
    X(inout, BOOL, "inout", .flags = GB_WIRE_OPTIONAL)                                             \
    X(planted[GB_SPECIAL_NAN], INT64, "nan_at", .arity = GB_WIRE_INLINE,                           \
      .count = offsetof(gb_arg, n_planted[GB_SPECIAL_NAN]), GB_WIRE_RANGE(0, 9.0e15),              \
      .flags = GB_WIRE_OPTIONAL)                                                                   \
    X(planted[GB_SPECIAL_INF], INT64, "inf_at", .arity = GB_WIRE_INLINE,                           \
      .count = offsetof(gb_arg, n_planted[GB_SPECIAL_INF]), GB_WIRE_RANGE(0, 9.0e15),              \
      .flags = GB_WIRE_OPTIONAL)                                                                   \
    X(planted[GB_SPECIAL_NINF], INT64, "ninf_at", .arity = GB_WIRE_INLINE,                         \
      .count = offsetof(gb_arg, n_planted[GB_SPECIAL_NINF]), GB_WIRE_RANGE(0, 9.0e15),             \
      .flags = GB_WIRE_OPTIONAL)                                                                   \
    X(int_value, INT64, "int_value")                                                               \
    X(float_value, DOUBLE, "float_value", .flags = GB_WIRE_NULL_NAN)                               \
    X(tensor, INT, "tensor", GB_WIRE_RANGE(0, GB_MAX_ARGS - 1), .flags = GB_WIRE_OPTIONAL)         \
    X(strides, INT64, "strides", .arity = GB_WIRE_INLINE, .count = offsetof(gb_arg, n_strides),    \
      GB_WIRE_RANGE(1, 9.0e15), .flags = GB_WIRE_OPTIONAL)                                         \
    X(box, UINT32, "box", .arity = GB_WIRE_INLINE, .count = offsetof(gb_arg, n_box),               \
      GB_WIRE_RANGE(1, 256), .flags = GB_WIRE_OPTIONAL)                                            \
    X(swizzle, ENUM, "swizzle", .enumeration = &gb_wire_enum_swizzle, .flags = GB_WIRE_OPTIONAL)   \
    X(l2_promotion, ENUM, "l2_promotion", .enumeration = &gb_wire_enum_l2_promotion,               \
      .flags = GB_WIRE_OPTIONAL)                                                                   \
    X(oob_fill, ENUM, "oob_fill", .enumeration = &gb_wire_enum_oob_fill, .flags = GB_WIRE_OPTIONAL)

/* Elements of a tensor argument (product of its dims). */
int64_t gb_arg_elements(const gb_arg *arg);
/* Bytes of a tensor argument. */
size_t gb_arg_bytes(const gb_arg *arg);

/* What the kernel's parameter for the argument holds, in bytes: a pointer for a
 * tensor, a CUtensorMap (128) for a tensormap, the value for a scalar; and the
 * words an error names it by ("tensor (a pointer)", "i32"). */
size_t gb_arg_param_bytes(const gb_arg *arg);
const char *gb_arg_param_what(const gb_arg *arg);

/* grid counts blocks, not clusters: with a cluster, each grid dimension is a
 * multiple of the cluster's. A cluster of {0,0,0} (or {1,1,1}) is none. */
typedef struct gb_launch {
    uint32_t grid[3];
    uint32_t block[3];
    uint32_t smem_bytes; /* dynamic shared memory */
    uint32_t cluster[3]; /* blocks per thread block cluster (sm_90 and newer) */
} gb_launch;

#define GB_LAUNCH_WIRE(X)                                                                          \
    X(grid, UINT32, "grid", .arity = GB_WIRE_FIXED, GB_WIRE_RANGE(1, UINT32_MAX))                  \
    X(block, UINT32, "block", .arity = GB_WIRE_FIXED, GB_WIRE_RANGE(1, UINT32_MAX))                \
    X(smem_bytes, UINT32, "smem_bytes")                                                            \
    X(cluster, UINT32, "cluster", .arity = GB_WIRE_FIXED, GB_WIRE_RANGE(0, 65535),                 \
      .flags = GB_WIRE_OPTIONAL)

/* Blocks in one cluster of l (1 when it has none). */
uint64_t gb_launch_cluster_blocks(const gb_launch *l);

/* Which arguments are compared with the reference, and how closely. Element by
 * element: x == r, or both NaN, or |x - r| <= atol + rtol * |r|. With norm, each
 * output as a whole: ||x - r||_2 <= rtol * ||r||_2 + atol over the elements where
 * neither is NaN, and NaN only where the reference has NaN. Without a reference
 * a NaN never passes. */
typedef struct gb_check_spec {
    int n_outputs;
    int outputs[GB_MAX_ARGS]; /* 0-based argument positions */
    double rtol;
    double atol;
    bool norm;
} gb_check_spec;

#define GB_CHECK_SPEC_WIRE(X)                                                                      \
    X(outputs, INT, "outputs", .arity = GB_WIRE_INLINE,                                            \
      .count = offsetof(gb_check_spec, n_outputs), GB_WIRE_RANGE(0, GB_MAX_ARGS - 1))              \
    X(rtol, DOUBLE, "rtol", GB_WIRE_RANGE(0, INFINITY))                                            \
    X(atol, DOUBLE, "atol", GB_WIRE_RANGE(0, INFINITY))                                            \
    X(norm, BOOL, "norm", .flags = GB_WIRE_OPTIONAL)

/* The outcome of comparing one variant's outputs with the reference's. */
typedef struct gb_check_result {
    bool checked;  /* false when there was no reference */
    int64_t n_bad; /* elements outside the tolerance (NaN included) */
    int64_t n_compared;
    double max_abs_err; /* over all compared elements, NaN excluded */
    double max_rel_err;
    int first_bad_output; /* argument position of the first failing output, or -1 */
    int64_t first_bad_index;
    bool norm;       /* judged by norms (gb_check_spec.norm) */
    double norm_err; /* the largest ||x - r|| / ||r|| of the outputs (norm checks only) */
} gb_check_result;

/* The wire description (gb_wire_check_result): the trial records' "check" and the
 * worker's results. The first bad element is optional: older records lack it. */
#define GB_CHECK_RESULT_WIRE(X)                                                                    \
    X(checked, BOOL, "checked")                                                                    \
    X(n_bad, INT64, "n_bad", GB_WIRE_RANGE(0, INT64_MAX))                                          \
    X(n_compared, INT64, "n_compared", GB_WIRE_RANGE(0, INT64_MAX))                                \
    X(max_abs_err, DOUBLE, "max_abs_err", GB_WIRE_RANGE(0, INFINITY), .flags = GB_WIRE_NULL_NAN)   \
    X(max_rel_err, DOUBLE, "max_rel_err", GB_WIRE_RANGE(0, INFINITY), .flags = GB_WIRE_NULL_NAN)   \
    X(first_bad_output, INT, "first_bad_output", GB_WIRE_RANGE(-1, GB_MAX_ARGS - 1),               \
      .flags = GB_WIRE_OPTIONAL, .dflt = -1)                                                       \
    X(first_bad_index, INT64, "first_bad_index", GB_WIRE_RANGE(-1, INT64_MAX),                     \
      .flags = GB_WIRE_OPTIONAL, .dflt = -1)                                                       \
    X(norm, BOOL, "norm", .flags = GB_WIRE_OPTIONAL)                                               \
    X(norm_err, DOUBLE, "norm_err", GB_WIRE_RANGE(0, INFINITY),                                    \
      .flags = GB_WIRE_OPTIONAL | GB_WIRE_NULL_NAN)

#endif
