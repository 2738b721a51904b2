/* The collectives' model (engine/collective.h): names, defaults, the request's
 * checks, nccl-tests' bandwidths and the wire tables. */
#include "engine/collective.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const OP_NAMES[GB_COLL_OP_COUNT] = {
    [GB_COLL_ALL_REDUCE] = "all_reduce",
    [GB_COLL_ALL_GATHER] = "all_gather",
    [GB_COLL_REDUCE_SCATTER] = "reduce_scatter",
    [GB_COLL_BROADCAST] = "broadcast",
};

const char *gb_collective_op_name(gb_collective_op op)
{
    return (unsigned)op < GB_COLL_OP_COUNT ? OP_NAMES[op] : NULL;
}

int gb_collective_op_parse(const char *name, gb_collective_op *out)
{
    for (int op = 0; name && op < GB_COLL_OP_COUNT; op++) {
        if (strcmp(name, OP_NAMES[op]) == 0) {
            *out = (gb_collective_op)op;
            return GB_OK;
        }
    }
    return GB_EINVAL;
}

void gb_collective_request_defaults(gb_collective_op op, gb_collective_request *out)
{
    *out = (gb_collective_request){.op = op, .n_dtypes = 3, .measure = gb_measure_defaults()};
    out->dtypes[0] = GB_DT_F32;
    out->dtypes[1] = GB_DT_F16;
    out->dtypes[2] = GB_DT_BF16;
    for (int shift = 12; shift <= 30; shift++) /* 4 KiB .. 1 GiB */
        out->sizes[out->n_sizes++] = (int64_t)1 << shift;
}

/* ---- checks ------------------------------------------------------------- */

static bool is_collective_dtype(gb_dtype t)
{
    return t == GB_DT_F32 || t == GB_DT_F16 || t == GB_DT_BF16;
}

static int check_dtypes(const gb_collective_request *req, gb_err *err)
{
    if (req->n_dtypes < 1 || req->n_dtypes > GB_COLLECTIVE_MAX_DTYPES)
        return gb_err_set(err, GB_EINVAL, "dtypes: 1 to %d of f32, f16 and bf16, got %d",
                          GB_COLLECTIVE_MAX_DTYPES, req->n_dtypes);
    for (int i = 0; i < req->n_dtypes; i++) {
        const char *name = gb_dtype_name(req->dtypes[i]);
        if (!is_collective_dtype(req->dtypes[i]))
            return gb_err_set(err, GB_EINVAL, "dtypes: %s is not one of f32, f16 and bf16",
                              name ? name : "an unknown type");
        for (int j = 0; j < i; j++)
            if (req->dtypes[j] == req->dtypes[i])
                return gb_err_set(err, GB_EINVAL, "dtypes: %s is listed twice", name);
    }
    return GB_OK;
}

static int check_gpus(const gb_collective_request *req, gb_err *err)
{
    if (req->n_gpus < 0 || req->n_gpus > GB_COLLECTIVE_MAX_GPUS)
        return gb_err_set(err, GB_EINVAL, "gpus: at most %d, got %d", GB_COLLECTIVE_MAX_GPUS,
                          req->n_gpus);
    for (int i = 0; i < req->n_gpus; i++) {
        if (req->gpus[i] < 0)
            return gb_err_set(err, GB_EINVAL, "gpus: %d is not a GPU ordinal", req->gpus[i]);
        for (int j = 0; j < i; j++)
            if (req->gpus[j] == req->gpus[i])
                return gb_err_set(err, GB_EINVAL, "gpus: GPU %d is listed twice", req->gpus[i]);
    }
    return GB_OK;
}

/* A size holds whole elements and, where the op splits it over the ranks, equal
 * whole parts. */
static int check_size(const gb_collective_request *req, int64_t bytes, gb_dtype t, gb_err *err)
{
    char size[32], multiple[32];
    int64_t elt = (int64_t)gb_dtype_bytes(t);
    gb_collective_format_bytes(bytes, size, sizeof size);
    if (bytes % elt)
        return gb_err_set(err, GB_EINVAL,
                          "%s: %s is not a whole number of %s elements (%lld B each)",
                          gb_collective_op_name(req->op), size, gb_dtype_name(t), (long long)elt);
    bool splits = req->op == GB_COLL_ALL_GATHER || req->op == GB_COLL_REDUCE_SCATTER;
    int n = req->n_gpus;
    if (!splits || n < 2 || (bytes / elt) % n == 0) return GB_OK;
    gb_collective_format_bytes(elt * n, multiple, sizeof multiple);
    return gb_err_set(err, GB_EINVAL,
                      "%s over %d GPUs: %s does not split into %d parts of whole %s elements: "
                      "sizes must be multiples of %s",
                      gb_collective_op_name(req->op), n, size, n, gb_dtype_name(t), multiple);
}

static int check_sizes(const gb_collective_request *req, gb_err *err)
{
    if (req->n_sizes < 1 || req->n_sizes > GB_COLLECTIVE_MAX_SIZES)
        return gb_err_set(err, GB_EINVAL, "sizes: 1 to %d sizes, got %d", GB_COLLECTIVE_MAX_SIZES,
                          req->n_sizes);
    for (int i = 0; i < req->n_sizes; i++) {
        int64_t bytes = req->sizes[i];
        if (bytes < 1 || bytes > GB_COLLECTIVE_MAX_BYTES)
            return gb_err_set(err, GB_EINVAL, "sizes[%d]: %lld bytes is outside 1 B to 1 TiB",
                              i + 1, (long long)bytes);
        for (int d = 0; d < req->n_dtypes; d++) {
            int rc = check_size(req, bytes, req->dtypes[d], err);
            if (rc) return rc;
        }
    }
    return GB_OK;
}

int gb_collective_check(const gb_collective_request *req, gb_err *err)
{
    if (!gb_collective_op_name(req->op))
        return gb_err_set(err, GB_EINVAL,
                          "unknown collective %d: all_reduce, all_gather, reduce_scatter or "
                          "broadcast",
                          (int)req->op);
    int rc = check_dtypes(req, err);
    if (rc == GB_OK) rc = check_gpus(req, err);
    if (rc == GB_OK) rc = check_sizes(req, err);
    if (rc == GB_OK) rc = gb_measure_check(&req->measure, err);
    return rc;
}

/* ---- sizes and bandwidths ------------------------------------------------ */

gb_collective_shape gb_collective_shape_of(gb_collective_op op, int64_t bytes, size_t elt_bytes,
                                           int n_ranks)
{
    size_t total = (size_t)bytes / elt_bytes, part = n_ranks > 0 ? total / (size_t)n_ranks : 0;
    switch (op) {
    case GB_COLL_ALL_GATHER: /* each rank brings a part; every rank gets the whole */
        return (gb_collective_shape){.count = part, .in_elems = part, .out_elems = total};
    case GB_COLL_REDUCE_SCATTER: /* each rank brings the whole; gets its part of the sum */
        return (gb_collective_shape){.count = part, .in_elems = total, .out_elems = part};
    default:
        return (gb_collective_shape){.count = total, .in_elems = total, .out_elems = total};
    }
}

void gb_collective_bandwidth(gb_collective_op op, int64_t bytes, int n_ranks, double ms,
                             double *out_algbw_gbps, double *out_busbw_gbps)
{
    double n = n_ranks, factor = 1;
    if (op == GB_COLL_ALL_REDUCE)
        factor = 2 * (n - 1) / n;
    else if (op == GB_COLL_ALL_GATHER || op == GB_COLL_REDUCE_SCATTER)
        factor = (n - 1) / n;
    double algbw = ms > 0 && n_ranks > 0 ? (double)bytes / 1e9 / (ms / 1e3) : 0;
    *out_algbw_gbps = algbw;
    *out_busbw_gbps = algbw * factor;
}

void gb_collective_format_bytes(int64_t bytes, char *out, size_t out_bytes)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (u < 4 && bytes >= 1024 && bytes % 1024 == 0) {
        bytes /= 1024;
        u++;
    }
    snprintf(out, out_bytes, "%lld %s", (long long)bytes, units[u]);
}

static void gpu_list(const int *gpus, int n_gpus, char *out, size_t n)
{
    if (n_gpus < 1) {
        snprintf(out, n, "every GPU");
        return;
    }
    size_t at = (size_t)snprintf(out, n, "GPU%s ", n_gpus > 1 ? "s" : "");
    for (int i = 0; i < n_gpus && at < n; i++)
        at += (size_t)snprintf(out + at, n - at, "%s%d", i ? "," : "", gpus[i]);
}

void gb_collective_step_name(const gb_collective_request *req, int i, const int *gpus, int n_gpus,
                             char *out, size_t out_bytes)
{
    char on[512], size[32];
    gpu_list(gpus, n_gpus, on, sizeof on);
    const char *op = gb_collective_op_name(req->op);
    if (i < 0 || req->n_sizes < 1 || i >= req->n_dtypes * req->n_sizes) {
        snprintf(out, out_bytes, "%s on %s", op ? op : "?", on);
        return;
    }
    gb_collective_format_bytes(req->sizes[i % req->n_sizes], size, sizeof size);
    snprintf(out, out_bytes, "%s %s %s on %s", op ? op : "?",
             gb_dtype_name(req->dtypes[i / req->n_sizes]), size, on);
}

/* ---- wire tables --------------------------------------------------------- */

static const char *op_name(int v)
{
    return gb_collective_op_name((gb_collective_op)v);
}

const gb_wire_enum gb_wire_enum_collective_op = {GB_COLL_OP_COUNT, op_name};

bool gb_collective_row_has_error(const void *row)
{
    return ((const gb_collective_row *)row)->has_first_error;
}

/* A row's count agrees with its bytes, and its bandwidths come from its median. */
static int row_finish(void *obj, const char *path, gb_err *err)
{
    gb_collective_row *r = obj;
    if (!is_collective_dtype(r->dtype))
        return gb_err_set(err, GB_EINVAL, "%s.dtype: expected f32, f16 or bf16", path);
    if (r->count * (int64_t)gb_dtype_bytes(r->dtype) != r->bytes)
        return gb_err_set(err, GB_EINVAL, "%s.count: %lld %s elements are not %lld bytes", path,
                          (long long)r->count, gb_dtype_name(r->dtype), (long long)r->bytes);
    gb_collective_bandwidth(r->op, r->bytes, r->n_gpus, r->ms.median, &r->algbw_gbps,
                            &r->busbw_gbps);
    r->correct = r->errors == 0;
    return GB_OK;
}

#define GB_WIRE_T gb_collective_request
GB_WIRE_TABLE(gb_wire_collective_request, "collective_request", GB_COLLECTIVE_REQUEST_WIRE, NULL)
#undef GB_WIRE_T
#define GB_WIRE_T gb_collective_mismatch
GB_WIRE_TABLE(gb_wire_collective_mismatch, "mismatch", GB_COLLECTIVE_MISMATCH_WIRE, NULL)
#undef GB_WIRE_T
#define GB_WIRE_T gb_collective_row
GB_WIRE_TABLE(gb_wire_collective_row, "row", GB_COLLECTIVE_ROW_WIRE, row_finish)
#undef GB_WIRE_T
#define GB_WIRE_T gb_collective_ready
GB_WIRE_TABLE(gb_wire_collective_ready, "ready", GB_COLLECTIVE_READY_WIRE, NULL)
#undef GB_WIRE_T

void gb_collective_result_free(gb_collective_result *result)
{
    if (!result) return;
    free(result->rows);
    memset(result, 0, sizeof *result);
}
