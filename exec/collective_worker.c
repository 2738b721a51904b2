/* The child of gb.collective (exec/collective_run.h): every listed GPU driven from
 * one thread, one NCCL communicator each; per (dtype, size) a check of every
 * output element, then samples timed with events on each GPU's stream. */
#include "exec/collective_run.h"

#include "base/clock.h"
#include "engine/driver.h"
#include "engine/nccl.h"
#include "exec/proto.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

/* The inputs are integers in [-amp, amp] repeating with a period of 2 * amp + 1
 * (amp <= MAX_AMP): any partial sum of n of them stays within 256 in magnitude,
 * an integer that bf16 (8 significant bits) and f16 hold exactly, whatever order
 * NCCL adds them in. So every output element has one right value. */
#define MAX_AMP    15
#define MAX_PERIOD (2 * MAX_AMP + 1)

typedef struct rank {
    int ordinal;
    CUdevice dev;
    CUcontext ctx; /* the device's primary context, retained */
    CUstream stream;
    CUevent start, stop;
    CUdeviceptr in, out;
    size_t in_cap, out_cap; /* bytes allocated */
    ncclComm_t comm;
} rank;

typedef struct bench {
    int fd;
    gb_collective_request req; /* gpus resolved */
    int n;                     /* ranks */
    rank ranks[GB_COLLECTIVE_MAX_GPUS];
    void *host; /* one rank's largest buffer, to fill and to check */
    size_t host_bytes;
    /* the inputs: values[r][j] of rank r at phase j; sums[j] over the ranks */
    int amp, period;
    float values[GB_COLLECTIVE_MAX_GPUS][MAX_PERIOD];
    float sums[MAX_PERIOD];
    /* the step under way */
    gb_dtype dtype;
    int64_t bytes;
    gb_collective_shape shape;
} bench;

/* ---- element encodings ---------------------------------------------------- */

/* f16 bits of an integer of magnitude below 2048 (exact). */
static uint16_t half_of_int(int v)
{
    if (v == 0) return 0;
    unsigned a = (unsigned)abs(v);
    int e = 31 - __builtin_clz(a); /* a = 1.m * 2^e */
    uint16_t bits = (uint16_t)((e + 15) << 10 | ((a << (10 - e)) & 0x3ff));
    return v < 0 ? (uint16_t)(bits | 0x8000) : bits;
}

static float half_to_float(uint16_t h)
{
    int exp = h >> 10 & 0x1f, man = h & 0x3ff;
    float v = exp == 0    ? ldexpf((float)man, -24)
              : exp == 31 ? (man ? NAN : INFINITY)
                          : ldexpf((float)(man | 0x400), exp - 25);
    return h & 0x8000 ? -v : v;
}

static float bf16_to_float(uint16_t b)
{
    uint32_t bits = (uint32_t)b << 16;
    float v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

static float element(gb_dtype t, const void *p, size_t i)
{
    if (t == GB_DT_F32) return ((const float *)p)[i];
    uint16_t bits = ((const uint16_t *)p)[i];
    return t == GB_DT_F16 ? half_to_float(bits) : bf16_to_float(bits);
}

/* ---- inputs and the expected outputs -------------------------------------- */

/* Rank r's value at phase j: the pattern shifted by 8 places per rank. The period
 * is odd, so no two of its first `period` ranks share a pattern, and a block that
 * came from the wrong rank, or landed in the wrong place, shows. */
static void plan_values(bench *b)
{
    b->amp = 256 / b->n < MAX_AMP ? 256 / b->n : MAX_AMP;
    if (b->amp < 1) b->amp = 1;
    b->period = 2 * b->amp + 1;
    for (int j = 0; j < b->period; j++) {
        b->sums[j] = 0;
        for (int r = 0; r < b->n; r++) {
            b->values[r][j] = (float)((j + r * 8) % b->period - b->amp);
            b->sums[j] += b->values[r][j];
        }
    }
}

/* Fills n elements of rank r's input, starting at phase 0. */
static void fill_input(const bench *b, int r, void *host, size_t n)
{
    uint32_t codes[MAX_PERIOD];
    for (int j = 0; j < b->period; j++) {
        float v = b->values[r][j];
        uint32_t f32;
        memcpy(&f32, &v, sizeof f32);
        codes[j] = b->dtype == GB_DT_F32   ? f32
                   : b->dtype == GB_DT_F16 ? half_of_int((int)v)
                                           : f32 >> 16; /* exact: few significant bits */
    }
    size_t period = (size_t)b->period;
    if (b->dtype == GB_DT_F32) {
        for (size_t i = 0, j = 0; i < n; i++, j = j + 1 == period ? 0 : j + 1)
            ((uint32_t *)host)[i] = codes[j];
        return;
    }
    for (size_t i = 0, j = 0; i < n; i++, j = j + 1 == period ? 0 : j + 1)
        ((uint16_t *)host)[i] = (uint16_t)codes[j];
}

typedef struct tally {
    int64_t errors;
    bool has_first;
    gb_collective_mismatch first;
} tally;

/* Compares len elements of rank r's output from `base` with row[] from phase. */
static void compare(const bench *b, int r, size_t base, size_t len, const float *row, int phase,
                    tally *t)
{
    for (size_t i = 0, j = (size_t)phase; i < len;
         i++, j = j + 1 == (size_t)b->period ? 0 : j + 1) {
        float got = element(b->dtype, b->host, base + i);
        if (got == row[j]) continue; /* NaN, the poison of an unwritten element, never is */
        t->errors++;
        if (!t->has_first) {
            t->has_first = true;
            t->first = (gb_collective_mismatch){r, (int64_t)(base + i), got, row[j]};
        }
    }
}

/* Checks rank r's output, copied to b->host, against what the op must leave. */
static void check_output(const bench *b, int r, tally *t)
{
    size_t part = b->shape.count, out = b->shape.out_elems;
    switch (b->req.op) {
    case GB_COLL_ALL_REDUCE:
        compare(b, r, 0, out, b->sums, 0, t);
        break;
    case GB_COLL_REDUCE_SCATTER: /* the sums of the rank's part of the whole */
        compare(b, r, 0, out, b->sums, (int)(r * part % (size_t)b->period), t);
        break;
    case GB_COLL_ALL_GATHER: /* every rank's input, in rank order */
        for (int src = 0; src < b->n; src++)
            compare(b, r, (size_t)src * part, part, b->values[src], 0, t);
        break;
    default: /* broadcast: rank 0's input everywhere */
        compare(b, r, 0, out, b->values[0], 0, t);
        break;
    }
}

/* ---- the GPUs ------------------------------------------------------------- */

static int resolve_gpus(bench *b, gb_err *err)
{
    int count = 0;
    CUresult cr = gb_cu.cuDeviceGetCount(&count);
    if (cr != CUDA_SUCCESS) return gb_cu_fail(err, cr, "cuDeviceGetCount");
    if (count < 1) return gb_err_set(err, GB_ENOGPU, "no GPU: the CUDA driver shows none");
    gb_collective_request *req = &b->req;
    if (req->n_gpus == 0)
        for (; req->n_gpus < count && req->n_gpus < GB_COLLECTIVE_MAX_GPUS; req->n_gpus++)
            req->gpus[req->n_gpus] = req->n_gpus;
    for (int i = 0; i < req->n_gpus; i++)
        if (req->gpus[i] >= count)
            return gb_err_set(err, GB_EINVAL,
                              "gpus: GPU %d does not exist: the CUDA driver shows %d (0 to %d%s)",
                              req->gpus[i], count, count - 1,
                              getenv("CUDA_VISIBLE_DEVICES") ? ", under CUDA_VISIBLE_DEVICES" : "");
    b->n = req->n_gpus;
    return gb_collective_check(req, err); /* the sizes, now that the ranks are known */
}

/* Each rank's largest buffers over the sizes (they do not depend on the dtype). */
static void buffer_bytes(const bench *b, size_t *out_in, size_t *out_out)
{
    *out_in = *out_out = 0;
    for (int i = 0; i < b->req.n_sizes; i++) {
        gb_collective_shape s = gb_collective_shape_of(b->req.op, b->req.sizes[i], 1, b->n);
        if (s.in_elems > *out_in) *out_in = s.in_elems;
        if (s.out_elems > *out_out) *out_out = s.out_elems;
    }
}

static int open_rank(rank *k, size_t in_bytes, size_t out_bytes, gb_err *err)
{
    int rc = GB_OK;
    char in[32], out[32];
    GB_CU_CHECK(rc, err, cuDeviceGet, (&k->dev, k->ordinal));
    GB_CU_CHECK(rc, err, cuDevicePrimaryCtxRetain, (&k->ctx, k->dev));
    GB_CU_CHECK(rc, err, cuCtxSetCurrent, (k->ctx));
    GB_CU_CHECK(rc, err, cuStreamCreate, (&k->stream, CU_STREAM_NON_BLOCKING));
    GB_CU_CHECK(rc, err, cuEventCreate, (&k->start, CU_EVENT_DEFAULT));
    GB_CU_CHECK(rc, err, cuEventCreate, (&k->stop, CU_EVENT_DEFAULT));
    GB_CU_CHECK(rc, err, cuMemAlloc, (&k->in, in_bytes));
    k->in_cap = in_bytes;
    GB_CU_CHECK(rc, err, cuMemAlloc, (&k->out, out_bytes));
    k->out_cap = out_bytes;
cleanup:
    gb_collective_format_bytes((int64_t)in_bytes, in, sizeof in);
    gb_collective_format_bytes((int64_t)out_bytes, out, sizeof out);
    if (rc) gb_err_prefix(err, "GPU %d (buffers of %s in, %s out)", k->ordinal, in, out);
    return rc;
}

static int open_comms(bench *b, gb_err *err)
{
    int rc = GB_OK, devs[GB_COLLECTIVE_MAX_GPUS];
    ncclComm_t comms[GB_COLLECTIVE_MAX_GPUS] = {0};
    for (int r = 0; r < b->n; r++)
        devs[r] = b->ranks[r].ordinal;
    GB_NCCL_CHECK(rc, err, ncclCommInitAll, (comms, b->n, devs));
    for (int r = 0; r < b->n; r++)
        b->ranks[r].comm = comms[r];
cleanup:
    return rc;
}

/* The driver, the GPUs, NCCL, every rank's context, stream, events and buffers,
 * and the communicators. */
static int open_all(bench *b, gb_err *err)
{
    int rc = gb_driver_load(err);
    if (rc == GB_OK) rc = resolve_gpus(b, err);
    if (rc == GB_OK) rc = gb_nccl_load(err);
    if (rc) return rc; /* these say what is missing in a sentence of their own */
    size_t in_bytes, out_bytes;
    buffer_bytes(b, &in_bytes, &out_bytes);
    b->host_bytes = in_bytes > out_bytes ? in_bytes : out_bytes;
    if (!(b->host = malloc(b->host_bytes)))
        return gb_err_set(err, GB_ENOMEM, "out of host memory for a buffer of %zu bytes",
                          b->host_bytes);
    for (int r = 0; rc == GB_OK && r < b->n; r++) {
        b->ranks[r].ordinal = b->req.gpus[r];
        rc = open_rank(&b->ranks[r], in_bytes, out_bytes, err);
    }
    if (rc == GB_OK) rc = open_comms(b, err);
    if (rc == GB_OK) plan_values(b);
    return rc;
}

/* Tears everything down: communicators first (abort after a failure: a destroy
 * would wait for work that may never finish), then each rank's resources. */
static void close_all(bench *b, bool clean)
{
    for (int r = 0; r < b->n; r++) {
        rank *k = &b->ranks[r];
        if (k->comm) (clean ? gb_nccl.ncclCommDestroy : gb_nccl.ncclCommAbort)(k->comm);
        if (!k->ctx) continue;
        gb_cu.cuCtxSetCurrent(k->ctx);
        if (k->in) gb_cu.cuMemFree(k->in);
        if (k->out) gb_cu.cuMemFree(k->out);
        if (k->start) gb_cu.cuEventDestroy(k->start);
        if (k->stop) gb_cu.cuEventDestroy(k->stop);
        if (k->stream) gb_cu.cuStreamDestroy(k->stream);
        gb_cu.cuDevicePrimaryCtxRelease(k->dev);
    }
    free(b->host);
}

/* ---- one collective on every GPU ------------------------------------------ */

static ncclDataType_t nccl_type(gb_dtype t)
{
    return t == GB_DT_F32 ? ncclFloat32 : t == GB_DT_F16 ? ncclFloat16 : ncclBfloat16;
}

static const char *const NCCL_CALLS[GB_COLL_OP_COUNT] = {
    [GB_COLL_ALL_REDUCE] = "ncclAllReduce",
    [GB_COLL_ALL_GATHER] = "ncclAllGather",
    [GB_COLL_REDUCE_SCATTER] = "ncclReduceScatter",
    [GB_COLL_BROADCAST] = "ncclBroadcast",
};

static ncclResult_t launch_one(const bench *b, const rank *k)
{
    ncclDataType_t t = nccl_type(b->dtype);
    const void *in = (const void *)(uintptr_t)k->in;
    void *out = (void *)(uintptr_t)k->out;
    switch (b->req.op) {
    case GB_COLL_ALL_REDUCE:
        return gb_nccl.ncclAllReduce(in, out, b->shape.count, t, ncclSum, k->comm, k->stream);
    case GB_COLL_ALL_GATHER:
        return gb_nccl.ncclAllGather(in, out, b->shape.count, t, k->comm, k->stream);
    case GB_COLL_REDUCE_SCATTER:
        return gb_nccl.ncclReduceScatter(in, out, b->shape.count, t, ncclSum, k->comm, k->stream);
    default:
        return gb_nccl.ncclBroadcast(in, out, b->shape.count, t, 0, k->comm, k->stream);
    }
}

/* One process calls for every rank, so the calls go in one group: NCCL launches
 * them together at ncclGroupEnd (called even after a failed call, which the group
 * needs to end). */
static int launch_all(const bench *b, gb_err *err)
{
    int rc = GB_OK;
    GB_NCCL_CHECK(rc, err, ncclGroupStart, ());
    for (int r = 0; r < b->n; r++) {
        ncclResult_t res = launch_one(b, &b->ranks[r]);
        if (res != ncclSuccess && rc == GB_OK)
            rc = gb_nccl_fail(err, res, NCCL_CALLS[b->req.op], b->ranks[r].comm);
    }
    ncclResult_t end = gb_nccl.ncclGroupEnd();
    if (end != ncclSuccess && rc == GB_OK) rc = gb_nccl_fail(err, end, "ncclGroupEnd", NULL);
cleanup:
    return rc;
}

static int record(const bench *b, bool stop, gb_err *err)
{
    int rc = GB_OK;
    for (int r = 0; r < b->n; r++) {
        const rank *k = &b->ranks[r];
        GB_CU_CHECK(rc, err, cuCtxSetCurrent, (k->ctx)); /* NCCL may have changed it */
        GB_CU_CHECK(rc, err, cuEventRecord, (stop ? k->stop : k->start, k->stream));
    }
cleanup:
    return rc;
}

/* A sample: one collective on every GPU; its time is the slowest GPU's. */
static int sample(void *ctx, gb_sample *out, gb_err *err)
{
    const bench *b = ctx;
    int rc = record(b, false, err);
    if (rc == GB_OK) rc = launch_all(b, err);
    if (rc == GB_OK) rc = record(b, true, err);
    double slowest = 0;
    for (int r = 0; rc == GB_OK && r < b->n; r++) {
        const rank *k = &b->ranks[r];
        float ms = 0;
        GB_CU_CHECK(rc, err, cuCtxSetCurrent, (k->ctx));
        GB_CU_CHECK(rc, err, cuEventSynchronize, (k->stop));
        GB_CU_CHECK(rc, err, cuEventElapsedTime, (&ms, k->start, k->stop));
        if (ms > slowest) slowest = ms;
    }
    *out = (gb_sample){.ms = slowest};
cleanup:
    return rc;
}

static double now_ms(void *ctx)
{
    (void)ctx;
    return gb_now_ms();
}

/* ---- one step --------------------------------------------------------------- */

/* Inputs in place, outputs poisoned (0xFF bytes are NaN in f32, f16 and bf16). A
 * copy from pageable memory may still be in flight on the legacy stream when
 * cuMemcpyHtoD returns, and the ranks' streams do not wait for that one: it is
 * synchronised. (Not with cuCtxSynchronize: at CUDA 13's API version the driver
 * hands out its variant that takes a context.) */
static int prepare(bench *b, gb_err *err)
{
    int rc = GB_OK;
    size_t elt = gb_dtype_bytes(b->dtype);
    for (int r = 0; r < b->n; r++) {
        rank *k = &b->ranks[r];
        fill_input(b, r, b->host, b->shape.in_elems);
        GB_CU_CHECK(rc, err, cuCtxSetCurrent, (k->ctx));
        GB_CU_CHECK(rc, err, cuMemcpyHtoD, (k->in, b->host, b->shape.in_elems * elt));
        GB_CU_CHECK(rc, err, cuMemsetD8Async, (k->out, 0xFF, b->shape.out_elems * elt, k->stream));
        GB_CU_CHECK(rc, err, cuStreamSynchronize, (CU_STREAM_LEGACY));
    }
cleanup:
    return rc;
}

/* Runs the collective once and compares every element of every rank's output. */
static int check_step(bench *b, tally *t, gb_err *err)
{
    int rc = prepare(b, err);
    if (rc == GB_OK) rc = launch_all(b, err);
    for (int r = 0; rc == GB_OK && r < b->n; r++) {
        rank *k = &b->ranks[r];
        GB_CU_CHECK(rc, err, cuCtxSetCurrent, (k->ctx));
        GB_CU_CHECK(rc, err, cuStreamSynchronize, (k->stream));
        size_t bytes = b->shape.out_elems * gb_dtype_bytes(b->dtype);
        GB_CU_CHECK(rc, err, cuMemcpyDtoH, (b->host, k->out, bytes));
        check_output(b, r, t);
    }
cleanup:
    return rc;
}

/* A failure NCCL noticed after the calls returned (a peer's, a network's). */
static int async_errors(const bench *b, gb_err *err)
{
    for (int r = 0; r < b->n; r++) {
        ncclResult_t async = ncclSuccess, res;
        res = gb_nccl.ncclCommGetAsyncError(b->ranks[r].comm, &async);
        if (res != ncclSuccess)
            return gb_nccl_fail(err, res, "ncclCommGetAsyncError", b->ranks[r].comm);
        if (async != ncclSuccess)
            return gb_nccl_fail(err, async, "the communicator (asynchronous error)",
                                b->ranks[r].comm);
    }
    return GB_OK;
}

static void fill_row(const bench *b, const gb_measurement *m, const tally *t,
                     gb_collective_row *row)
{
    *row = (gb_collective_row){
        .op = b->req.op,
        .dtype = b->dtype,
        .bytes = b->bytes,
        .count = b->bytes / (int64_t)gb_dtype_bytes(b->dtype),
        .n_gpus = b->n,
        .ms = m->stats,
        .capped = m->capped,
        .n_warmup = m->n_warmup,
        .errors = t->errors,
        .has_first_error = t->has_first,
        .first_error = t->first,
    };
    memcpy(row->gpus, b->req.gpus, sizeof row->gpus);
}

/* Step i: check, warm up and sample, then send the row. */
static int run_step(bench *b, int i, gb_err *err)
{
    const gb_collective_request *req = &b->req;
    b->dtype = req->dtypes[i / req->n_sizes];
    b->bytes = req->sizes[i % req->n_sizes];
    b->shape = gb_collective_shape_of(req->op, b->bytes, gb_dtype_bytes(b->dtype), b->n);
    tally t = {0};
    gb_measurement m = {0};
    gb_sampler sampler = {.sample = sample, .now_ms = now_ms, .ctx = b};
    int rc = check_step(b, &t, err);
    if (rc == GB_OK) rc = gb_measure_run(&sampler, &req->measure, &m, err);
    if (rc == GB_OK) rc = async_errors(b, err);
    if (rc == GB_OK) {
        gb_collective_row row;
        fill_row(b, &m, &t, &row);
        rc = gb_collective_send(b->fd, "row", &gb_wire_collective_row, &row, err);
    }
    gb_measurement_free(&m);
    return rc;
}

/* ---- the process -------------------------------------------------------------- */

static int read_request(bench *b, gb_err *err)
{
    gb_collective_reader reader = {.fd = b->fd};
    json_t *line = NULL;
    const char *kind = NULL;
    const json_t *payload = NULL;
    int rc = gb_collective_recv(&reader, -1, &line, &kind, &payload, err);
    if (rc == GB_OK && strcmp(kind, "request") != 0)
        rc = gb_err_set(err, GB_EPROTO, "a \"%s\" line where the request was due", kind);
    if (rc == GB_OK) rc = gb_wire_decode(&gb_wire_collective_request, payload, &b->req, err);
    json_decref(line);
    gb_collective_reader_free(&reader);
    return rc == GB_EINVAL ? (err->code = GB_EPROTO) : rc;
}

static void send_error(bench *b, int code, const gb_err *err)
{
    gb_proto_error e = {.code = code ? code : GB_EPROTO};
    gb_strlcpy(e.message, err->msg, sizeof e.message);
    gb_err ignored;
    gb_collective_send(b->fd, "error", &gb_wire_proto_error, &e, &ignored);
}

static int serve(bench *b, gb_err *err)
{
    char name[640];
    gb_collective_ready ready = {.n_gpus = b->n};
    memcpy(ready.gpus, b->req.gpus, sizeof ready.gpus);
    int rc = gb_nccl.ncclGetVersion(&ready.nccl_version) == ncclSuccess ? GB_OK : GB_ECUDA;
    if (rc) return gb_err_set(err, rc, "ncclGetVersion failed");
    rc = gb_collective_send(b->fd, "ready", &gb_wire_collective_ready, &ready, err);
    int n_steps = b->req.n_dtypes * b->req.n_sizes;
    for (int i = 0; rc == GB_OK && i < n_steps; i++) {
        rc = run_step(b, i, err);
        gb_collective_step_name(&b->req, i, b->req.gpus, b->n, name, sizeof name);
        if (rc && rc != GB_ECLOSED) gb_err_prefix(err, "%s", name);
    }
    return rc;
}

int gb_collective_main(int fd)
{
    /* Die with the parent: a child must never outlive it and hold the GPUs. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() == 1) return 1;
    bench *b = calloc(1, sizeof *b);
    if (!b) return 1;
    b->fd = fd;
    gb_err err = {0};
    char name[640];
    int rc = read_request(b, &err);
    if (rc == GB_OK && (rc = open_all(b, &err)) && b->host) { /* past the load errors */
        gb_collective_step_name(&b->req, -1, b->req.gpus, b->n, name, sizeof name);
        gb_err_prefix(&err, "%s", name);
    }
    if (rc == GB_OK) rc = serve(b, &err);
    if (rc == GB_OK) rc = gb_collective_send(fd, "done", NULL, NULL, &err);
    if (rc && rc != GB_ECLOSED) send_error(b, rc, &err); /* before a teardown that may hang */
    close_all(b, rc == GB_OK);
    free(b);
    return rc ? 1 : 0;
}
