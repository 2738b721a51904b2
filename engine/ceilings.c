#include "engine/ceilings.h"

#include "base/strbuf.h"
#include "engine/driver.h"
#include "engine/gpu_internal.h"
#include "engine/stats.h"
#include "engine/wire_types.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define GB_WIRE_T gb_ceilings
GB_WIRE_TABLE(gb_wire_ceilings, "ceilings", GB_CEILINGS_WIRE, NULL)
#undef GB_WIRE_T

double gb_ceilings_tflops(const gb_ceilings *c, gb_math math)
{
    switch (math) {
    case GB_MATH_FP32:
        return c->gemm_fp32;
    case GB_MATH_TF32:
        return c->gemm_tf32;
    case GB_MATH_FP16:
        return c->gemm_fp16;
    case GB_MATH_BF16:
        return c->gemm_bf16;
    case GB_MATH_FP8:
        return c->gemm_fp8;
    default:
        return 0;
    }
}

void gb_ceilings_to_roofs(const gb_ceilings *c, gb_roofs *roofs)
{
    roofs->ceiling_gbps = c->copy_gbps;
    for (int m = 0; m < GB_MATH_COUNT; m++)
        roofs->ceiling_tflops[m] = gb_ceilings_tflops(c, (gb_math)m);
}

/* Copies per measurement: a few warm-ups, then this many samples, each of
 * COPY_BATCH copies back to back between two events (so that the events' own
 * cost is a quarter of what it would be on one). */
#define COPY_WARMUPS 2
#define COPY_SAMPLES 15
#define COPY_BATCH   4

/* The array size: 8x the L2 (so the copy streams from DRAM), at least 1 GiB, and
 * at most a quarter of the free memory for the pair. */
static int64_t copy_size(const gb_device_info *d)
{
    int64_t bytes = 8 * d->l2_bytes;
    if (bytes < ((int64_t)1 << 30)) bytes = (int64_t)1 << 30;
    size_t free_bytes = 0, total = 0;
    if (gb_cu.cuMemGetInfo(&free_bytes, &total) == CUDA_SUCCESS && bytes > (int64_t)free_bytes / 4)
        bytes = (int64_t)free_bytes / 4;
    return bytes & ~(int64_t)0xFFFFF; /* whole MiB */
}

/* How a copy is made: cuMemcpyDtoDAsync (threads 0), or the builtins' gb_copy
 * with blocks x threads. */
typedef struct copy_way {
    int blocks, threads;
} copy_way;

/* One sample: L2 flushed (no dirty lines of the last copy to write back), then
 * one copy, timed by the kernel's own stamps (CUPTI) where they are to be had
 * (the kernel's, with CUPTI on), else between events. */
static int time_sample(gb_gpu *gpu, CUdeviceptr dst, CUdeviceptr src, size_t bytes, copy_way way,
                       bool *cupti, double *ms, gb_err *err)
{
    int rc = gb_gpu_flush_l2(gpu, err), per_launch = 1;
    uint64_t n = bytes / 16; /* whole MiB: no tail */
    void *params[] = {&src, &dst, &n};
    float t = 0;
    bool tracing = *cupti;
    if (rc) return rc;
    if (tracing) gb_cupti_begin(gpu->cupti);
    GB_CU_CHECK(rc, err, cuEventRecord, (gpu->start, gpu->stream));
    if (way.threads == 0)
        GB_CU_CHECK(rc, err, cuMemcpyDtoDAsync, (dst, src, bytes, gpu->stream));
    else
        GB_CU_CHECK(rc, err, cuLaunchKernel,
                    (gpu->copy, (unsigned)way.blocks, 1, 1, (unsigned)way.threads, 1, 1, 0,
                     gpu->stream, params, NULL));
    GB_CU_CHECK(rc, err, cuEventRecord, (gpu->stop, gpu->stream));
    if (tracing) gb_cupti_end(gpu->cupti);
    tracing = false;
    GB_CU_CHECK(rc, err, cuEventSynchronize, (gpu->stop));
    GB_CU_CHECK(rc, err, cuEventElapsedTime, (&t, gpu->start, gpu->stop));
    *ms = t;
    gb_err lost = {0};
    if (*cupti && gb_cupti_collect(gpu->cupti, 1, &per_launch, ms, &lost) != GB_OK) {
        *cupti = false; /* records missing: this way is timed by events */
        *ms = t;
    }
cleanup:
    if (tracing) gb_cupti_end(gpu->cupti);
    return rc;
}

static int time_copies(gb_gpu *gpu, CUdeviceptr dst, CUdeviceptr src, size_t bytes, copy_way way,
                       bool *cupti, double *ms, gb_err *err)
{
    *cupti = gpu->cupti && way.threads > 0; /* a driver copy makes no kernel record */
    for (int i = 0; i < COPY_WARMUPS + COPY_SAMPLES; i++) {
        double sample = 0;
        int rc = time_sample(gpu, dst, src, bytes, way, cupti, &sample, err);
        if (rc) return rc;
        if (i >= COPY_WARMUPS) ms[i - COPY_WARMUPS] = sample;
    }
    return GB_OK;
}

/* The ways tried: the driver's copy, and gpubench's copy kernel with a vector
 * per thread (a block per 256 to 1024 vectors), or over a grid of 1 to 8
 * resident blocks of 256 to 1024 threads per SM. */
static int copy_ways(const gb_device_info *d, uint64_t vectors, copy_way *out)
{
    static const int resident[][2] = {{256, 2}, {256, 4}, {256, 8},  {512, 1},
                                      {512, 2}, {512, 4}, {1024, 1}, {1024, 2}};
    int n = 0, sms = d->sms > 0 ? d->sms : 1;
    out[n++] = (copy_way){0, 0};
    for (int threads = 256; threads <= 1024; threads *= 2)
        if (vectors / (uint64_t)threads <= INT32_MAX)
            out[n++] =
                (copy_way){(int)((vectors + (uint64_t)threads - 1) / (uint64_t)threads), threads};
    for (size_t i = 0; i < sizeof resident / sizeof *resident; i++)
        out[n++] = (copy_way){sms * resident[i][1], resident[i][0]};
    return n;
}

/* The copy ceiling: the best median bandwidth of the ways to copy between two
 * fresh arrays, the driver's and gpubench's own kernel's, so that no kernel the
 * suite times runs "above its ceiling". */
static int measure_copy(gb_gpu *gpu, gb_ceilings *out, gb_err *err)
{
    int64_t bytes = copy_size(&gpu->info);
    CUdeviceptr a = 0, b = 0;
    double ms[COPY_SAMPLES];
    copy_way ways[16];
    int n_ways = copy_ways(&gpu->info, (uint64_t)bytes / 16, ways), rc = GB_OK;
    if (bytes <= 0) return gb_err_set(err, GB_ENOMEM, "no memory free for the copy ceiling");
    GB_CU_CHECK(rc, err, cuMemAlloc, (&a, (size_t)bytes));
    GB_CU_CHECK(rc, err, cuMemAlloc, (&b, (size_t)bytes));
    GB_CU_CHECK(rc, err, cuMemsetD8Async, (a, 0x3C, (size_t)bytes, gpu->stream));
    out->copy_bytes = bytes;
    for (int w = 0; w < n_ways; w++) {
        bool cupti = false;
        if ((rc = time_copies(gpu, b, a, (size_t)bytes, ways[w], &cupti, ms, err))) goto cleanup;
        gb_stats st;
        gb_stats_compute(ms, COPY_SAMPLES, &st);
        double gbps = st.median > 0 ? 2.0 * (double)bytes / (st.median * 1e-3) / 1e9 : 0;
        if (gbps <= out->copy_gbps) continue;
        out->copy_gbps = gbps;
        if (ways[w].threads == 0)
            snprintf(out->copy_how, sizeof out->copy_how, "cuMemcpyDtoD");
        else
            snprintf(out->copy_how, sizeof out->copy_how, "copy kernel, %d blocks of %d threads%s",
                     ways[w].blocks, ways[w].threads, cupti ? ", timed by CUPTI" : "");
    }
cleanup:
    if (a) gb_cu.cuMemFree(a);
    if (b) gb_cu.cuMemFree(b);
    return rc ? gb_err_prefix(err, "measuring the copy ceiling") : GB_OK;
}

/* The GEMM size: large enough that cuBLAS runs at its best rate (on an H200,
 * bf16 at 8192 cubed is within a few percent of its peak over sizes). */
#define GEMM_SIZE 8192

/* cuBLAS's rate for each kind of math it has; a missing library or a kind the
 * GPU lacks (fp8 before sm_89) leaves 0 and a note, not an error. */
static int measure_gemms(gb_gpu *gpu, gb_ceilings *out, gb_err *err)
{
    static const gb_math maths[] = {GB_MATH_FP32, GB_MATH_TF32, GB_MATH_FP16, GB_MATH_BF16,
                                    GB_MATH_FP8};
    double *slots[] = {&out->gemm_fp32, &out->gemm_tf32, &out->gemm_fp16, &out->gemm_bf16,
                       &out->gemm_fp8};
    out->gemm_size = GEMM_SIZE;
    for (size_t i = 0; i < sizeof maths / sizeof *maths; i++) {
        gb_err e = {0};
        int rc = gb_gpu_cublas_rate(gpu, maths[i], GEMM_SIZE, GEMM_SIZE, GEMM_SIZE, slots[i], &e);
        if (rc == GB_EFAULT) return gb_err_copy(err, &e);
        if (rc && !out->gemm_note[0]) {
            gb_strbuf sb = {0};
            gb_sb_printf(&sb, "no cuBLAS %s rate: %s", gb_math_name(maths[i]), e.msg);
            gb_strlcpy(out->gemm_note, sb.len ? gb_sb_str(&sb) : "", sizeof out->gemm_note);
            gb_sb_free(&sb);
        }
        if (rc == GB_ENODRIVER) break; /* no cuBLASLt at all */
    }
    return GB_OK;
}

int gb_gpu_measure_ceilings(gb_gpu *gpu, gb_ceilings *out, gb_err *err)
{
    memset(out, 0, sizeof *out);
    int rc = gb_gpu_check_usable(gpu, err);
    if (rc == GB_OK) rc = gb_gpu_sync(gpu, err);
    if (rc == GB_OK) rc = measure_copy(gpu, out, err);
    if (rc == GB_OK) rc = measure_gemms(gpu, out, err);
    if (rc) return gb_gpu_note_fault(gpu, rc, err);
    time_t now = time(NULL);
    struct tm tm;
    strftime(out->measured_at, sizeof out->measured_at, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
    return GB_OK;
}
