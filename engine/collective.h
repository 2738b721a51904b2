/*
 * NCCL collectives timed across the GPUs of one machine (gb.collective).
 *
 * A collective that never completes (a wrong topology setting, a GPU that fell off
 * the bus, NVLink multicast on a host that cannot do it) blocks in the driver for
 * good. So the GPUs belong to a child process (exec/collective_run.h): this same
 * program started with the hidden argument "--collective" (gb_collective_main), as
 * the tuner starts its worker (exec/worker.h). The parent (gb_collective_run,
 * exec/collective_run.c) sends it the request and reads one JSON line per step,
 * each under a deadline; a step that misses it has the child's process group
 * killed and becomes an error that names the step:
 * "all_reduce bf16 1 GiB on GPUs 0,1 did not finish within 60 s: killed". The
 * rows that finished are kept.
 *
 * The child drives every GPU from one thread: a primary context, a stream and two
 * events per GPU, one communicator each from ncclCommInitAll, and ncclGroupStart/
 * End around the per-GPU calls. For each (dtype, size), in that order, it checks
 * the result element by element first (inputs are small integers, so sums are
 * exact in bf16 and f16 too), then times samples with engine/measure.h's method:
 * one sample is one collective on every GPU, timed by events on each GPU's stream,
 * and its time is the slowest GPU's.
 *
 * Bandwidths follow nccl-tests (its doc/PERFORMANCE.md), so figures compare one
 * for one: algbw = size / time, with size the total output of all_gather, the total
 * input of reduce_scatter and the buffer of all_reduce and broadcast (nccl-tests'
 * "size" column); busbw = algbw * 2(n-1)/n for all_reduce, * (n-1)/n for all_gather
 * and reduce_scatter, * 1 for broadcast. docs/collectives.md says more.
 */
#ifndef GB_ENGINE_COLLECTIVE_H
#define GB_ENGINE_COLLECTIVE_H

#include "base/error.h"
#include "base/wire.h"
#include "engine/measure.h"
#include "engine/spec.h"
#include "engine/stats.h"
#include "engine/wire_types.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GB_COLLECTIVE_MAX_GPUS   64
#define GB_COLLECTIVE_MAX_SIZES  64
#define GB_COLLECTIVE_MAX_DTYPES 3           /* f32, f16, bf16 */
#define GB_COLLECTIVE_MAX_BYTES  (1ll << 40) /* one message: 1 TiB */

typedef enum gb_collective_op {
    GB_COLL_ALL_REDUCE,
    GB_COLL_ALL_GATHER,
    GB_COLL_REDUCE_SCATTER,
    GB_COLL_BROADCAST, /* from rank 0 */
    GB_COLL_OP_COUNT,
} gb_collective_op;

/* "all_reduce", "all_gather", "reduce_scatter", "broadcast"; NULL for others. */
const char *gb_collective_op_name(gb_collective_op op);
/* 0 and *out set for a name above, GB_EINVAL otherwise. */
int gb_collective_op_parse(const char *name, gb_collective_op *out);

/* ---- the request --------------------------------------------------------- */

typedef struct gb_collective_request {
    gb_collective_op op;
    int n_dtypes;
    gb_dtype dtypes[GB_COLLECTIVE_MAX_DTYPES]; /* f32, f16, bf16, each once */
    int n_sizes;
    int64_t sizes[GB_COLLECTIVE_MAX_SIZES]; /* bytes: nccl-tests' size (see above) */
    int n_gpus;                             /* 0: every GPU the child sees */
    int gpus[GB_COLLECTIVE_MAX_GPUS];       /* CUDA ordinals, rank i on gpus[i] */
    bool nvls;                              /* leave NVLink SHARP (multicast) to NCCL */
    gb_measure_opts measure;                /* warm-up, noise target, cap per size */
} gb_collective_request;

#define GB_COLLECTIVE_REQUEST_WIRE(X)                                                              \
    X(op, ENUM, "op", .enumeration = &gb_wire_enum_collective_op)                                  \
    X(dtypes, ENUM, "dtypes", .enumeration = &gb_wire_enum_dtype, .arity = GB_WIRE_INLINE,         \
      .count = offsetof(gb_collective_request, n_dtypes), .min_items = 1)                          \
    X(sizes, INT64, "sizes", .arity = GB_WIRE_INLINE,                                              \
      .count = offsetof(gb_collective_request, n_sizes), .min_items = 1,                           \
      GB_WIRE_RANGE(1, GB_COLLECTIVE_MAX_BYTES))                                                   \
    X(gpus, INT, "gpus", .arity = GB_WIRE_INLINE,                                                  \
      .count = offsetof(gb_collective_request, n_gpus), GB_WIRE_RANGE(0, INT_MAX))                 \
    X(nvls, BOOL, "nvls")                                                                          \
    X(measure, STRUCT, "measure", .type = &gb_wire_measure_opts)

/* The defaults of gb.collective: f32, f16 and bf16; 4 KiB to 1 GiB by powers of
 * two; every GPU; no multicast; engine/measure.h's default method. */
void gb_collective_request_defaults(gb_collective_op op, gb_collective_request *out);

/* Checks a request before anything starts: a known op; dtypes among f32, f16 and
 * bf16, each once; sizes from 1 byte to 1 TiB that hold whole elements of every
 * dtype and, for all_gather and reduce_scatter over the GPUs listed, split into
 * equal whole parts; GPU ordinals >= 0, each once; a measurement method that
 * works. GB_EINVAL naming what is wrong ("all_gather over 2 GPUs: 4 B does not
 * split into 2 parts of whole f32 elements: sizes must be multiples of 8 B").
 * Whether the GPUs exist is the child's check (it needs the driver). */
int gb_collective_check(const gb_collective_request *req, gb_err *err);

/* Element counts of one step with n ranks and elements of elt_bytes: count is what
 * the NCCL call takes (sendcount of all_gather, recvcount of reduce_scatter);
 * in_elems and out_elems are each rank's buffers. */
typedef struct gb_collective_shape {
    size_t count;
    size_t in_elems;
    size_t out_elems;
} gb_collective_shape;
gb_collective_shape gb_collective_shape_of(gb_collective_op op, int64_t bytes, size_t elt_bytes,
                                           int n_ranks);

/* algbw and busbw in GB/s (1e9 bytes per second) of a step of `bytes` over n ranks
 * that took ms milliseconds, as nccl-tests computes them; 0 for ms <= 0. */
void gb_collective_bandwidth(gb_collective_op op, int64_t bytes, int n_ranks, double ms,
                             double *out_algbw_gbps, double *out_busbw_gbps);

/* "4 KiB", "1 GiB", "6 B": a whole number of the largest binary unit that divides
 * bytes. */
void gb_collective_format_bytes(int64_t bytes, char *out, size_t out_bytes);

/* Names step i of req (the order the child follows: each dtype, then each size)
 * on the GPUs given: "all_reduce bf16 1 GiB on GPUs 0,1"; "all_reduce on GPUs
 * 0,1" for the set-up (i < 0) or past the last step; "on every GPU" when n_gpus
 * is 0. */
void gb_collective_step_name(const gb_collective_request *req, int i, const int *gpus, int n_gpus,
                             char *out, size_t out_bytes);

/* ---- the results --------------------------------------------------------- */

/* The first element that differed, on the host after copying back. */
typedef struct gb_collective_mismatch {
    int rank;      /* position in gpus */
    int64_t index; /* element of that rank's output */
    double got;    /* NaN for an element never written */
    double expected;
} gb_collective_mismatch;

#define GB_COLLECTIVE_MISMATCH_WIRE(X)                                                             \
    X(rank, INT, "rank", GB_WIRE_RANGE(0, GB_COLLECTIVE_MAX_GPUS - 1))                             \
    X(index, INT64, "index", GB_WIRE_RANGE(0, INT64_MAX))                                          \
    X(got, DOUBLE, "got", .flags = GB_WIRE_NULL_NAN)                                               \
    X(expected, DOUBLE, "expected")

/* One (dtype, size) step: what the child sends, and a row of gb.collective's
 * results (the Lua names are the JSON names). */
typedef struct gb_collective_row {
    gb_collective_op op;
    gb_dtype dtype;
    int64_t bytes; /* nccl-tests' size */
    int64_t count; /* elements in bytes */
    int n_gpus;
    int gpus[GB_COLLECTIVE_MAX_GPUS];
    gb_stats ms;    /* per collective, the slowest GPU's time */
    bool capped;    /* sampling stopped at the time cap before the noise target */
    int n_warmup;   /* collectives run to warm up, not counted */
    int64_t errors; /* output elements, of all ranks, that differed */
    bool has_first_error;
    gb_collective_mismatch first_error;
    /* Derived from the fields above when the row is read (gb_wire_decode). */
    double algbw_gbps; /* of the median time */
    double busbw_gbps;
    bool correct; /* no element differed */
} gb_collective_row;

bool gb_collective_row_has_error(const void *row);

#define GB_COLLECTIVE_ROW_WIRE(X)                                                                  \
    X(op, ENUM, "op", .enumeration = &gb_wire_enum_collective_op)                                  \
    X(dtype, ENUM, "dtype", .enumeration = &gb_wire_enum_dtype)                                    \
    X(bytes, INT64, "bytes", GB_WIRE_RANGE(1, GB_COLLECTIVE_MAX_BYTES))                            \
    X(count, INT64, "count", GB_WIRE_RANGE(1, GB_COLLECTIVE_MAX_BYTES))                            \
    X(gpus, INT, "gpus", .arity = GB_WIRE_INLINE, .count = offsetof(gb_collective_row, n_gpus),    \
      .min_items = 1, GB_WIRE_RANGE(0, INT_MAX))                                                   \
    X(ms, STRUCT, "ms", .type = &gb_wire_stats)                                                    \
    X(capped, BOOL, "capped")                                                                      \
    X(n_warmup, INT, "n_warmup", GB_WIRE_RANGE(0, INT_MAX))                                        \
    X(errors, INT64, "errors", GB_WIRE_RANGE(0, INT64_MAX))                                        \
    X(first_error, STRUCT, "first_error", .type = &gb_wire_collective_mismatch,                    \
      .flags = GB_WIRE_NULLABLE, .present = offsetof(gb_collective_row, has_first_error),          \
      .when = gb_collective_row_has_error)                                                         \
    X(algbw_gbps, DOUBLE, "algbw_gbps", .flags = GB_WIRE_DERIVED)                                  \
    X(busbw_gbps, DOUBLE, "busbw_gbps", .flags = GB_WIRE_DERIVED)                                  \
    X(correct, BOOL, "correct", .flags = GB_WIRE_DERIVED)

/* What the child says once its GPUs and communicators are ready. */
typedef struct gb_collective_ready {
    int n_gpus;
    int gpus[GB_COLLECTIVE_MAX_GPUS]; /* "every GPU" resolved */
    int nccl_version;                 /* ncclGetVersion's code */
} gb_collective_ready;

#define GB_COLLECTIVE_READY_WIRE(X)                                                                \
    X(gpus, INT, "gpus", .arity = GB_WIRE_INLINE, .count = offsetof(gb_collective_ready, n_gpus),  \
      .min_items = 1, GB_WIRE_RANGE(0, INT_MAX))                                                   \
    X(nccl_version, INT, "nccl_version", GB_WIRE_RANGE(0, INT_MAX))

extern const gb_wire_enum gb_wire_enum_collective_op;
extern const gb_wire_type gb_wire_collective_request;
extern const gb_wire_type gb_wire_collective_mismatch;
extern const gb_wire_type gb_wire_collective_row;
extern const gb_wire_type gb_wire_collective_ready;

typedef struct gb_collective_result {
    int n_gpus;
    int gpus[GB_COLLECTIVE_MAX_GPUS]; /* as the child resolved them; 0 before it did */
    int nccl_version;                 /* 0 when the child did not get that far */
    int n_rows;
    gb_collective_row *rows; /* the steps that finished, in order: dtypes, then sizes */
} gb_collective_result;

void gb_collective_result_free(gb_collective_result *result);

#endif
