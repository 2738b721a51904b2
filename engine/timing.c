/* The GPU's samplers for engine/measure.h: cold samples (L2 flushed before each
 * launch), hot samples (a CUDA graph of back-to-back launches), each timed by
 * CUPTI's kernel records where CUPTI works (engine/cupti.h) and by CUDA events
 * otherwise, and the SM clock of each sample, from NVML or from a probe kernel. */
#include "base/clock.h"
#include "engine/gpu_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIN_FLUSH_BYTES  (8u << 20)
#define MAX_HOT_LAUNCHES 10000
/* A sample whose CUPTI records are lost is taken again; after this many tries in
 * a row it keeps its events' time (the loss is counted either way). */
#define MAX_TRIES 4

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

/* The clock below which a sample counts as throttled is a share of this one. */
static double peak_clock(gb_gpu *gpu)
{
    double mhz = 0;
    gb_err ignored;
    if (gpu->nvml && gb_nvml_max_sm_clock(gpu->nvml, &mhz, &ignored) == GB_OK && mhz > 0)
        return mhz;
    return gpu->info.sm_clock_khz / 1e3;
}

/* CUPTI where it works; otherwise events, and the sentence that says why. */
static void open_cupti(gb_gpu *gpu)
{
    gb_err why = {0};
    if (gb_cupti_open(&gpu->cupti, &why) == GB_OK) return;
    gpu->cupti = NULL;
    gb_strlcpy(gpu->timer_note, why.msg, sizeof gpu->timer_note);
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
    gpu->peak_clock_mhz = peak_clock(gpu);
    open_cupti(gpu);
cleanup:
    if (rc) gb_err_prefix(err, "setting up timing");
    return rc;
}

void gb_gpu_timing_close(gb_gpu *gpu)
{
    if (gpu->flush_buf) gb_cu.cuMemFree(gpu->flush_buf);
    if (gpu->probe_out) gb_cu.cuMemFree(gpu->probe_out);
    gb_nvml_close(gpu->nvml);
    gb_cupti_close(gpu->cupti);
    gpu->flush_buf = gpu->probe_out = 0;
    gpu->nvml = NULL;
    gpu->cupti = NULL;
}

const char *gb_gpu_clock_source(const gb_gpu *gpu)
{
    return gpu->nvml ? "nvml" : "probe";
}

const char *gb_gpu_timer(const gb_gpu *gpu, const char **out_note)
{
    if (out_note) *out_note = gpu->cupti ? "" : gpu->timer_note;
    return gpu->cupti ? "cupti" : "events";
}

/* ---- between samples -------------------------------------------------------- */

/* Writes, then reads, the flush buffer: whatever the kernel left in L2 is evicted
 * (written back now, not during the next sample) and L2 ends full of clean lines. */
int gb_gpu_flush_l2(gb_gpu *gpu, gb_err *err)
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

/* The SM clock right after a sample: NVML's reading, or cycles over
 * %globaltimer nanoseconds from the probe kernel. */
static int read_clock(gb_gpu *gpu, gb_sample *s, gb_err *err)
{
    if (gpu->nvml) {
        gb_err ignored;
        if (gb_nvml_sm_clock(gpu->nvml, &s->clock_mhz, &ignored) != GB_OK) s->clock_mhz = 0;
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
    gb_cupti *cupti;        /* NULL: events time the samples */
    int kernels_per_launch; /* CUPTI records one launch makes; 0 until known */
} sampler_ctx;

/* What timed() saw of one launch (or graph replay). */
typedef struct timing {
    double ms;       /* per launch: CUPTI's kernel time, else the events' */
    double timer_ms; /* host time spent reading CUPTI's records */
    bool lost;       /* CUPTI's records of it were missing: ms is the events' */
} timing;

static int launch_work(sampler_ctx *c, gb_err *err)
{
    if (!c->exec) return gb_gpu_launch(c->gpu, c->kernel, c->launch, false, err);
    CUresult r = gb_cu.cuGraphLaunch(c->exec, c->gpu->stream);
    return r == CUDA_SUCCESS ? GB_OK : gb_cu_fail(err, r, "cuGraphLaunch");
}

/* The kernels' own time from CUPTI, once the stop event says they are done. */
static void read_records(sampler_ctx *c, timing *t)
{
    double start_ms = gb_now_ms(), ms;
    gb_err lost;
    t->lost = gb_cupti_collect(c->cupti, c->launches, &c->kernels_per_launch, &ms, &lost) != GB_OK;
    t->timer_ms = gb_now_ms() - start_ms;
    if (!t->lost) t->ms = ms;
}

/* Times the work between two events on the session's stream (nothing else is
 * queued between them), and by CUPTI's records of its kernels. */
static int timed(sampler_ctx *c, timing *out, gb_err *err)
{
    gb_gpu *gpu = c->gpu;
    int rc = GB_OK;
    float ms = 0;
    *out = (timing){0};
    GB_CU_CHECK(rc, err, cuEventRecord, (gpu->start, gpu->stream));
    if (c->cupti) gb_cupti_begin(c->cupti);
    rc = launch_work(c, err);
    if (c->cupti) gb_cupti_end(c->cupti);
    if (rc) return rc;
    GB_CU_CHECK(rc, err, cuEventRecord, (gpu->stop, gpu->stream));
    GB_CU_CHECK(rc, err, cuEventSynchronize, (gpu->stop));
    GB_CU_CHECK(rc, err, cuEventElapsedTime, (&ms, gpu->start, gpu->stop));
    out->ms = ms / c->launches;
    if (c->cupti) read_records(c, out);
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

/* NVML's reasons (power, thermal...) for the slow sample just taken; 0 unknown. */
static unsigned long long sampler_throttle_reasons(void *ctx)
{
    gb_gpu *gpu = ((sampler_ctx *)ctx)->gpu;
    unsigned long long reasons = 0;
    bool throttled;
    gb_err ignored;
    if (!gpu->nvml || gb_nvml_throttled(gpu->nvml, &throttled, &reasons, &ignored) != GB_OK)
        return 0;
    return reasons;
}

/* One sample; taken again when CUPTI lost its records, up to MAX_TRIES times. */
static int take_sample(void *ctx, gb_sample *out, gb_err *err)
{
    sampler_ctx *c = ctx;
    timing t = {.lost = true};
    int rc = GB_OK;
    for (int try = 0; rc == GB_OK && t.lost && try < MAX_TRIES; try++) {
        out->n_lost += try > 0;
        rc = c->mode == GB_MODE_COLD ? gb_gpu_flush_l2(c->gpu, err) : GB_OK;
        if (rc == GB_OK) rc = timed(c, &t, err);
        out->timer_ms += t.timer_ms;
    }
    out->n_lost += rc == GB_OK && t.lost;
    if (rc == GB_OK) rc = read_clock(c->gpu, out, err);
    out->ms = t.ms;
    return gb_gpu_note_fault(c->gpu, rc, err);
}

/* Where the session notes that CUPTI was seen to record this kind of launch. */
static bool *seen_recorded(sampler_ctx *c)
{
    return c->exec           ? &c->gpu->cupti_seen.graph
           : c->kernel->gemm ? &c->gpu->cupti_seen.library
                             : &c->gpu->cupti_seen.kernel;
}

/* After a launch timed with CUPTI: a kind of launch CUPTI gave no records for
 * is timed with events from then on (a sampler falls back, and the session
 * notes why); one it did record needs no more looking at. */
static void judge_cupti(sampler_ctx *c, const timing *t)
{
    if (!c->cupti) return;
    bool *seen = seen_recorded(c);
    if (!t->lost) {
        *seen = true;
        return;
    }
    snprintf(c->gpu->timer_note, sizeof c->gpu->timer_note, "CUPTI gave no kernel records for %s",
             c->exec           ? "a graph's launches"
             : c->kernel->gemm ? "a library GEMM"
                               : "a kernel");
    c->cupti = NULL;
}

/* The fastest of n single launches; the first also tells whether CUPTI records
 * the kernel, until the session has seen it record one like it. */
static int probe_launches(sampler_ctx *c, int n, double *out_ms, gb_err *err)
{
    timing t;
    int rc = GB_OK;
    *out_ms = INFINITY;
    for (int i = 0; rc == GB_OK && i < n; i++)
        if ((rc = timed(c, &t, err)) == GB_OK) {
            if (i == 0) judge_cupti(c, &t);
            *out_ms = fmin(*out_ms, t.ms);
        }
    return rc;
}

/* One replay of the graph, which tells whether CUPTI gives a record for each of
 * its launches (it should: they carry the graph launch's correlation id). */
static int probe_graph(sampler_ctx *c, gb_err *err)
{
    timing t;
    if (!c->cupti || *seen_recorded(c)) return GB_OK;
    int rc = timed(c, &t, err);
    if (rc == GB_OK) judge_cupti(c, &t);
    return rc;
}

/* Hot mode: K launches captured into a graph, K such that one replay lasts at
 * least hot_min_ms (judged from the fastest of a few single launches). */
static int build_graph(sampler_ctx *c, double hot_min_ms, gb_err *err)
{
    gb_gpu *gpu = c->gpu;
    double best;
    int rc = probe_launches(c, 3, &best, err);
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
    rc = probe_graph(c, err);
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

/* The timer a measurement asked for: GB_ENODRIVER when it must be CUPTI and the
 * session has none. */
static int pick_timer(gb_gpu *gpu, const gb_measure_opts *opts, gb_cupti **out, gb_err *err)
{
    *out = opts->timer == GB_TIMER_EVENTS ? NULL : gpu->cupti;
    if (opts->timer == GB_TIMER_CUPTI && !gpu->cupti)
        return gb_err_set(err, GB_ENODRIVER, "--timer cupti was asked for, but %s",
                          gpu->timer_note);
    return GB_OK;
}

static int make_sampler(gb_gpu *gpu, gb_gpu_kernel *k, const gb_launch *l,
                        const gb_measure_opts *opts, sampler_ctx *c, gb_sampler *out, gb_err *err)
{
    *c = (sampler_ctx){.gpu = gpu, .kernel = k, .launch = l, .mode = opts->mode, .launches = 1};
    int rc = pick_timer(gpu, opts, &c->cupti, err);
    double ms;
    if (rc == GB_OK && opts->mode == GB_MODE_HOT)
        rc = build_graph(c, opts->hot_min_ms, err);
    else if (rc == GB_OK && c->cupti && !*seen_recorded(c))
        rc = probe_launches(c, 1, &ms, err);
    *out = (gb_sampler){
        .sample = take_sample,
        .now_ms = now_ms,
        .ctx = c,
        .other_processes = sampler_others,
        .peak_clock_mhz = gpu->peak_clock_mhz,
        .throttle_reasons = sampler_throttle_reasons,
        .timer = c->cupti ? GB_TIMER_CUPTI : GB_TIMER_EVENTS,
        .warmth = &gpu->warmth,
    };
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
