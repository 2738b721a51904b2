#include "engine/spec.h"

#include "base/error.h"
#include "engine/tensormap.h"

#include <string.h>

static const struct {
    const char *name;
    size_t bytes;
    bool is_float;
} dtypes[GB_DT_COUNT] = {
    [GB_DT_F64] = {"f64", 8, true},
    [GB_DT_F32] = {"f32", 4, true},
    [GB_DT_F16] = {"f16", 2, true},
    [GB_DT_BF16] = {"bf16", 2, true},
    [GB_DT_FP8_E4M3] = {"fp8_e4m3", 1, true},
    [GB_DT_FP8_E5M2] = {"fp8_e5m2", 1, true},
    [GB_DT_I8] = {"i8", 1, false},
    [GB_DT_U8] = {"u8", 1, false},
    [GB_DT_I32] = {"i32", 4, false},
    [GB_DT_U32] = {"u32", 4, false},
    [GB_DT_I64] = {"i64", 8, false},
};

const char *gb_dtype_name(gb_dtype dtype)
{
    return (unsigned)dtype < GB_DT_COUNT ? dtypes[dtype].name : NULL;
}

int gb_dtype_parse(const char *name, gb_dtype *out)
{
    for (int i = 0; i < GB_DT_COUNT; i++) {
        if (strcmp(name, dtypes[i].name) == 0) {
            *out = (gb_dtype)i;
            return GB_OK;
        }
    }
    return GB_EINVAL;
}

size_t gb_dtype_bytes(gb_dtype dtype)
{
    return (unsigned)dtype < GB_DT_COUNT ? dtypes[dtype].bytes : 0;
}

bool gb_dtype_is_float(gb_dtype dtype)
{
    return (unsigned)dtype < GB_DT_COUNT && dtypes[dtype].is_float;
}

static const char *const init_names[] = {
    [GB_INIT_RANDN] = "randn", [GB_INIT_RAND] = "rand",     [GB_INIT_ZEROS] = "zeros",
    [GB_INIT_ONES] = "ones",   [GB_INIT_OUTPUT] = "output", [GB_INIT_VALUE] = "value",
};

const char *gb_init_name(gb_init init)
{
    return (unsigned)init <= GB_INIT_VALUE ? init_names[init] : NULL;
}

int gb_init_parse(const char *name, gb_init *out)
{
    for (int i = 0; i < GB_INIT_VALUE; i++) { /* "value" is spelled as a number */
        if (strcmp(name, init_names[i]) == 0) {
            *out = (gb_init)i;
            return GB_OK;
        }
    }
    return GB_EINVAL;
}

/* Looks name up in names[0..count); GB_EINVAL when it is not there. */
static int parse_name(const char *const *names, int count, const char *name, int *out)
{
    for (int i = 0; name && i < count; i++)
        if (strcmp(name, names[i]) == 0) {
            *out = i;
            return GB_OK;
        }
    return GB_EINVAL;
}

/* A tensormap mode's name and parser, over its table of names. */
#define GB_MODE_NAMES(type, fn, count, ...)                                                        \
    static const char *const fn##_names[count] = {__VA_ARGS__};                                    \
    const char *gb_##fn##_name(type v)                                                             \
    {                                                                                              \
        return (unsigned)v < (count) ? fn##_names[v] : NULL;                                       \
    }                                                                                              \
    int gb_##fn##_parse(const char *name, type *out)                                               \
    {                                                                                              \
        int v, rc = parse_name(fn##_names, (count), name, &v);                                     \
        if (rc == GB_OK) *out = (type)v;                                                           \
        return rc;                                                                                 \
    }

GB_MODE_NAMES(gb_swizzle, swizzle, GB_SWIZZLE_COUNT, "none", "32B", "64B", "128B")
GB_MODE_NAMES(gb_l2_promotion, l2_promotion, GB_L2_PROMOTION_COUNT, "none", "64B", "128B", "256B")
GB_MODE_NAMES(gb_oob_fill, oob_fill, GB_OOB_COUNT, "zero", "nan")

int64_t gb_arg_elements(const gb_arg *arg)
{
    if (arg->kind != GB_ARG_TENSOR) return 0;
    int64_t n = 1;
    for (int i = 0; i < arg->n_dims; i++)
        n *= arg->dims[i];
    return n;
}

size_t gb_arg_param_bytes(const gb_arg *arg)
{
    return arg->kind == GB_ARG_TENSOR      ? sizeof(void *)
           : arg->kind == GB_ARG_TENSORMAP ? GB_TENSORMAP_BYTES
                                           : gb_dtype_bytes(arg->dtype);
}

const char *gb_arg_param_what(const gb_arg *arg)
{
    return arg->kind == GB_ARG_TENSOR      ? "tensor (a pointer)"
           : arg->kind == GB_ARG_TENSORMAP ? "tensormap (a CUtensorMap)"
                                           : gb_dtype_name(arg->dtype);
}

size_t gb_arg_bytes(const gb_arg *arg)
{
    if (arg->kind == GB_ARG_SCALAR) return gb_dtype_bytes(arg->dtype);
    return (size_t)gb_arg_elements(arg) * gb_dtype_bytes(arg->dtype);
}

uint64_t gb_launch_cluster_blocks(const gb_launch *l)
{
    uint64_t n = 1;
    for (int i = 0; i < 3; i++)
        n *= l->cluster[i] ? l->cluster[i] : 1;
    return n;
}
