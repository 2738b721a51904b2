/* The GPU's samplers for engine/measure.h: cold samples (L2 flushed before each
 * launch), hot samples (a CUDA graph of back-to-back launches), and the SM clock
 * of each sample, from NVML or from a probe kernel. */
#include "base/clock.h"
#include "engine/gpu_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIN_FLUSH_BYTES  (8u << 20)
#define MAX_HOT_LAUNCHES 10000

static double now_ms(void *ctx)
{
    (void)ctx;
    return gb_now_ms();
}

/* ---- set-up --------------------------------------------------------------- */

/* NVML names the device by PCI bus id; without NVML (or the id) the clock comes
 * from the probe kernel. */
static void open_nvml(gb_gpu *gpu)
{
    char bus_id[64];
    gb_err ignored;
    if (!gb_cu.cuDeviceGetPCIBusId ||
        gb_cu.cuDeviceGetPCIBusId(bus_id, sizeof bus_id, gpu->dev) != CUDA_SUCCESS)
        return;
    if (gb_nvml_open(bus_id, &gpu->nvml, &ignored) != GB_OK) gpu->nvml = NULL;
}

int gb_gpu_timing_open(gb_gpu *gpu, gb_err *err)
{
    size_t bytes = 2 * (size_t)gpu->info.l2_bytes;
    if (bytes < MIN_FLUSH_BYTES) bytes = MIN_FLUSH_BYTES;
    gpu->flush_words = bytes / sizeof(uint32_t);
    int rc = GB_OK;
    GB_CU_CHECK(rc, err, cuMemAlloc, (&gpu->flush_buf, bytes));
    GB_CU_CHECK(rc, err, cuMemAlloc, (&gpu->probe_out, 2 * sizeof(uint64_t)));
    open_nvml(gpu);
cleanup:
    if (rc) gb_err_prefix(err, "setting up timing");
    return rc;
}

void gb_gpu_timing_close(gb_gpu *gpu)
{
    if (gpu->flush_buf) gb_cu.cuMemFree(gpu->flush_buf);
    if (gpu->probe_out) gb_cu.cuMemFree(gpu->probe_out);
    gb_nvml_close(gpu->nvml);
    gpu->flush_buf = gpu->probe_out = 0;
    gpu->nvml = NULL;
}

const char *gb_gpu_clock_source(const gb_gpu *gpu)
{
    return gpu->nvml ? "nvml" : "probe";
}

/* ---- between samples -------------------------------------------------------- */

/* Writes, then reads, the flush buffer: whatever the kernel left in L2 is evicted
 * (written back now, not during the next sample) and L2 ends full of clean lines. */
static int flush_l2(gb_gpu *gpu, gb_err *err)
{
    int rc = GB_OK;
    uint32_t value = ++gpu->flush_value, key = ~value; /* XORs of value are 0 or value */
    if (key == 0 || key == value) key = 1;
    void *write_params[] = {&gpu->flush_buf, &gpu->flush_words, &value};
    void *read_params[] = {&gpu->flush_buf, &gpu->flush_words, &key, &gpu->probe_out};
    uint32_t blocks = gb_gpu_grid_for(gpu->flush_words);
    GB_CU_CHECK(rc, err, cuLaunchKernel,
                (gpu->flush, blocks, 1, 1, 256, 1, 1, 0, gpu->stream, write_params, NULL));
    GB_CU_CHECK(rc, err, cuLaunchKernel,
                (gpu->flush_read, blocks, 1, 1, 256, 1, 1, 0, gpu->stream, read_params, NULL));
cleanup:
    return rc;
}

/* The SM clock and throttling right after a sample: NVML's reading, or cycles
 * over %globaltimer nanoseconds from the probe kernel. */
static int read_clock(gb_gpu *gpu, gb_sample *s, gb_err *err)
{
    if (gpu->nvml) {
        unsigned long long reasons = 0;
        gb_err ignored;
        if (gb_nvml_sm_clock(gpu->nvml, &s->clock_mhz, &ignored) != GB_OK) s->clock_mhz = 0;
        if (gb_nvml_throttled(gpu->nvml, &s->throttled, &reasons, &ignored) != GB_OK)
            s->throttled = false;
        return GB_OK;
    }
    uint64_t probe[2] = {0, 0};
    void *params[] = {&gpu->probe_out};
    int rc = GB_OK;
    GB_CU_CHECK(rc, err, cuLaunchKernel,
                (gpu->clock_probe, 1, 1, 1, 1, 1, 1, 0, gpu->stream, params, NULL));
    if ((rc = gb_gpu_sync(gpu, err))) return rc;
    GB_CU_CHECK(rc, err, cuMemcpyDtoH, (probe, gpu->probe_out, sizeof probe));
    s->clock_mhz = probe[1] ? probe[0] * 1e3 / (double)probe[1] : 0;
cleanup:
    return rc;
}

/* ---- samplers ------------------------------------------------------------- */

typedef struct sampler_ctx {
    gb_gpu *gpu;
    gb_gpu_kernel *kernel;
    const gb_launch *launch;
    gb_measure_mode mode;
    CUgraph graph; /* hot mode */
    CUgraphExec exec;
    int launches;
} sampler_ctx;

/* Times the work between two events on the session's stream; nothing else is
 * queued between them. */
static int timed(sampler_ctx *c, double *out_ms, gb_err *err)
{
    gb_gpu *gpu = c->gpu;
    int rc = GB_OK;
    float ms = 0;
    GB_CU_CHECK(rc, err, cuEventRecord, (gpu->start, gpu->stream));
    if (c->exec)
        GB_CU_CHECK(rc, err, cuGraphLaunch, (c->exec, gpu->stream));
    else if ((rc = gb_gpu_launch(gpu, c->kernel, c->launch, false, err)))
        return rc;
    GB_CU_CHECK(rc, err, cuEventRecord, (gpu->stop, gpu->stream));
    GB_CU_CHECK(rc, err, cuEventSynchronize, (gpu->stop));
    GB_CU_CHECK(rc, err, cuEventElapsedTime, (&ms, gpu->start, gpu->stop));
    *out_ms = ms;
cleanup:
    return rc;
}

/* Other processes with a context on the GPU, which may be running kernels while
 * ours are timed; -1 (unknown) without NVML or when the query fails. */
static int sampler_others(void *ctx)
{
    gb_gpu *gpu = ((sampler_ctx *)ctx)->gpu;
    int n = -1;
    gb_err ignored;
    if (!gpu->nvml || gb_nvml_other_processes(gpu->nvml, &n, &ignored) != GB_OK) return -1;
    return n;
}

static int take_sample(void *ctx, gb_sample *out, gb_err *err)
{
    sampler_ctx *c = ctx;
    double ms = 0;
    int rc = c->mode == GB_MODE_COLD ? flush_l2(c->gpu, err) : GB_OK;
    if (rc == GB_OK) rc = timed(c, &ms, err);
    if (rc == GB_OK) rc = read_clock(c->gpu, out, err);
    out->ms = ms / c->launches;
    return gb_gpu_note_fault(c->gpu, rc, err);
}

/* Hot mode: K launches captured into a graph, K such that one replay lasts at
 * least hot_min_ms (judged from the fastest of a few single launches). */
static int build_graph(sampler_ctx *c, double hot_min_ms, gb_err *err)
{
    gb_gpu *gpu = c->gpu;
    double best = INFINITY, ms;
    int rc = GB_OK;
    for (int i = 0; rc == GB_OK && i < 3; i++)
        if ((rc = timed(c, &ms, err)) == GB_OK) best = fmin(best, ms);
    if (rc) return rc;
    double k = best > 0 ? ceil(hot_min_ms / best) : MAX_HOT_LAUNCHES;
    c->launches = k < 1 ? 1 : k > MAX_HOT_LAUNCHES ? MAX_HOT_LAUNCHES : (int)k;
    GB_CU_CHECK(rc, err, cuStreamBeginCapture, (gpu->stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    for (int i = 0; rc == GB_OK && i < c->launches; i++)
        rc = gb_gpu_launch(gpu, c->kernel, c->launch, false, err);
    CUresult cr = gb_cu.cuStreamEndCapture(gpu->stream, &c->graph);
    if (rc) return rc;
    if (cr != CUDA_SUCCESS) return gb_cu_fail(err, cr, "cuStreamEndCapture");
    GB_CU_CHECK(rc, err, cuGraphInstantiateWithFlags, (&c->exec, c->graph, 0));
cleanup:
    return rc;
}

static void free_sampler(sampler_ctx *c)
{
    if (c->exec) gb_cu.cuGraphExecDestroy(c->exec);
    if (c->graph) gb_cu.cuGraphDestroy(c->graph);
    c->exec = NULL;
    c->graph = NULL;
}

static int make_sampler(gb_gpu *gpu, gb_gpu_kernel *k, const gb_launch *l,
                        const gb_measure_opts *opts, sampler_ctx *c, gb_sampler *out, gb_err *err)
{
    *c = (sampler_ctx){.gpu = gpu, .kernel = k, .launch = l, .mode = opts->mode, .launches = 1};
    *out = (gb_sampler){
        .sample = take_sample, .now_ms = now_ms, .ctx = c, .other_processes = sampler_others};
    int rc = opts->mode == GB_MODE_HOT ? build_graph(c, opts->hot_min_ms, err) : GB_OK;
    return gb_gpu_note_fault(gpu, rc, err);
}

int gb_gpu_measure(gb_gpu *gpu, gb_gpu_kernel *kernel, const gb_launch *launch,
                   const gb_measure_opts *opts, gb_measurement *out, gb_err *err)
{
    return gb_gpu_race(gpu, &kernel, launch, 1, opts, out, err);
}

int gb_gpu_race(gb_gpu *gpu, gb_gpu_kernel *const *kernels, const gb_launch *launches, int n,
                const gb_measure_opts *opts, gb_measurement *out, gb_err *err)
{
    memset(out, 0, (size_t)n * sizeof *out);
    int rc = gb_gpu_check_usable(gpu, err), made = 0;
    sampler_ctx *ctx = calloc((size_t)n, sizeof *ctx);
    gb_sampler *samplers = calloc((size_t)n, sizeof *samplers);
    if (rc == GB_OK && (!ctx || !samplers)) rc = gb_err_set(err, GB_ENOMEM, "out of memory");
    for (; rc == GB_OK && made < n; made++)
        rc = make_sampler(gpu, kernels[made], &launches[made], opts, &ctx[made], &samplers[made],
                          err);
    if (rc == GB_OK)
        rc = n == 1 ? gb_measure_run(samplers, opts, out, err)
                    : gb_measure_race(samplers, n, opts, out, err);
    for (int i = 0; rc == GB_OK && i < n; i++)
        out[i].launches_per_sample = ctx[i].launches;
    for (int i = 0; i < made; i++)
        free_sampler(&ctx[i]);
    free(ctx);
    free(samplers);
    return gb_gpu_note_fault(gpu, rc, err);
}
