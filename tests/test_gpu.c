/* The GPU session on a real device: buffers, launches, the check, timing, faults,
 * and whole tuning runs through the Lua binding, the memory-bound suite's kernels
 * among them (each on one small shape; scripts/gpu-validate.sh runs the suite's
 * sweeps). Every test skips when there is no CUDA driver or no device, so the
 * program passes on machines without a GPU. With one, it holds the GPU's lease
 * (gpu_present.h): the scripts run in this process, on a worker that takes none. */
#include "gpu_present.h"
#include "scratch.h"
#include "cache/cache.h"
#include "exec/exec.h"
#include "engine/gpu.h"
#include "engine/nvrtc.h"
#include "exec/worker.h"
#include "lua/binding.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char KERNELS[] =
    "extern \"C\" __global__ void copy(const float *in, float *out, int n)\n"
    "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) out[i] = in[i]; }\n"
    "extern \"C\" __global__ void copy_plus(const float *in, float *out, int n)\n"
    "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) out[i] = in[i] + 1.0f; }\n"
    "extern \"C\" __global__ void copy_half(const float *in, float *out, int n)\n"
    "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n / 2) out[i] = in[i]; }\n"
    "extern \"C\" __global__ void write_far(const float *in, float *out, int n)\n"
    "{ if (threadIdx.x == 0) out[(size_t)n << 28] = 1.0f; }\n"
    "extern \"C\" __global__ void big_smem(const float *in, float *out, int n)\n"
    "{ extern __shared__ float s[]; int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  s[threadIdx.x * 64] = i < n ? in[i] : 0.f; __syncthreads();\n"
    "  if (i < n) out[i] = s[threadIdx.x * 64]; }\n";

enum { N = 1 << 20 };

typedef struct fixture {
    gb_gpu *gpu;
    gb_compile_out cubin;
    gb_check_spec check;
    gb_launch launch;
} fixture;

static void compile_kernels(const char *arch, gb_compile_out *out)
{
    gb_compile_req req = {
        .source = KERNELS,
        .source_name = "test_gpu.cu",
        .arch = arch,
        .name_exprs = {"copy"},
        .n_name_exprs = 1,
    };
    gb_err err;
    assert_int_equal(gb_nvrtc_compile(&req, out, &err), GB_OK);
}

/* in -> out, n: the problem every test but the in-place one uses. */
static void copy_args(gb_arg args[3])
{
    gb_arg copy[3] = {
        {.kind = GB_ARG_TENSOR,
         .dtype = GB_DT_F32,
         .n_dims = 1,
         .dims = {N},
         .init = GB_INIT_RANDN},
        {.kind = GB_ARG_TENSOR,
         .dtype = GB_DT_F32,
         .n_dims = 1,
         .dims = {N},
         .init = GB_INIT_OUTPUT,
         .checked = true},
        {.kind = GB_ARG_SCALAR, .dtype = GB_DT_I32, .int_value = N},
    };
    memcpy(args, copy, sizeof copy);
}

static void set_copy_problem(gb_gpu *gpu, uint64_t seed)
{
    gb_arg args[3];
    copy_args(args);
    gb_err err;
    assert_int_equal(gb_gpu_set_problem(gpu, args, 3, seed, &err), GB_OK);
}

static int setup(void **state)
{
    *state = NULL;
    gb_gpu *gpu;
    int rc = gpu_session_open(&gpu);
    if (rc || !gpu) return rc;
    fixture *f = calloc(1, sizeof *f);
    f->gpu = gpu;
    compile_kernels(gb_gpu_device(f->gpu)->arch, &f->cubin);
    set_copy_problem(f->gpu, 42);
    f->check = (gb_check_spec){.n_outputs = 1, .outputs = {1}, .rtol = 0, .atol = 0};
    f->launch = (gb_launch){.grid = {N / 256, 1, 1}, .block = {256, 1, 1}};
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    if (!f) return 0;
    gb_gpu_close(f->gpu);
    gb_compile_out_free(&f->cubin);
    free(f);
    return 0;
}

#define NEED_GPU(f)                                                                                \
    do {                                                                                           \
        if (!(f)) skip();                                                                          \
    } while (0)

static gb_gpu_kernel *load(fixture *f, const char *name, uint32_t smem)
{
    gb_gpu_kernel *k = NULL;
    gb_err err;
    assert_int_equal(
        gb_gpu_load(f->gpu, f->cubin.cubin, f->cubin.cubin_bytes, name, smem, &k, &err), GB_OK);
    return k;
}

static void test_device_properties_are_read(void **state)
{
    fixture *f = *state;
    NEED_GPU(f);
    const gb_device_info *d = gb_gpu_device(f->gpu);
    assert_true(d->sms > 0);
    assert_true(d->l2_bytes > 0);
    assert_true(d->mem_bytes > 0);
    assert_true(d->smem_per_block_optin >= 48 * 1024);
    assert_true(strncmp(d->arch, "sm_", 3) == 0);
    printf("# %s, cc %d.%d, %d SMs, L2 %lld MiB, peak %.0f GB/s\n", d->name, d->cc_major,
           d->cc_minor, d->sms, (long long)(d->l2_bytes >> 20), d->peak_gbps);
}

static void test_buffers_are_the_same_for_the_same_seed(void **state)
{
    fixture *f = *state;
    NEED_GPU(f);
    float *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
    gb_err err;
    assert_int_equal(gb_gpu_read_arg(f->gpu, 0, false, a, N * sizeof *a, &err), GB_OK);
    set_copy_problem(f->gpu, 42);
    assert_int_equal(gb_gpu_read_arg(f->gpu, 0, false, b, N * sizeof *b, &err), GB_OK);
    assert_memory_equal(a, b, N * sizeof *a);
    double sum = 0, sq = 0;
    for (int i = 0; i < N; i++)
        sum += a[i], sq += (double)a[i] * a[i];
    assert_true(fabs(sum / N) < 0.01);      /* randn: mean 0 */
    assert_true(fabs(sq / N - 1.0) < 0.01); /* and variance 1 */
    set_copy_problem(f->gpu, 43);
    assert_int_equal(gb_gpu_read_arg(f->gpu, 0, false, b, N * sizeof *b, &err), GB_OK);
    assert_true(memcmp(a, b, N * sizeof *a) != 0);
    free(a);
    free(b);
}

static void test_outputs_start_poisoned_with_nan(void **state)
{
    fixture *f = *state;
    NEED_GPU(f);
    float *out = malloc(N * sizeof *out);
    gb_err err;
    assert_int_equal(gb_gpu_read_arg(f->gpu, 1, false, out, N * sizeof *out, &err), GB_OK);
    for (int i = 0; i < N; i += 4099)
        assert_true(isnan(out[i]));
    free(out);
}

static void check_variant(fixture *f, const char *name, int64_t expect_bad)
{
    gb_gpu_kernel *ref = load(f, "copy", 0), *k = load(f, name, 0);
    gb_check_result res;
    gb_err err;
    assert_int_equal(gb_gpu_run_reference(f->gpu, ref, &f->launch, &err), GB_OK);
    assert_int_equal(gb_gpu_verify(f->gpu, k, &f->launch, &f->check, &res, &err), GB_OK);
    assert_true(res.checked);
    assert_int_equal(res.n_compared, N);
    assert_int_equal(res.n_bad, expect_bad);
    gb_gpu_unload(f->gpu, k);
    gb_gpu_unload(f->gpu, ref);
}

static void test_a_correct_variant_passes_the_check(void **state)
{
    fixture *f = *state;
    NEED_GPU(f);
    check_variant(f, "copy", 0);
}

static void test_a_wrong_variant_fails_every_element(void **state)
{
    fixture *f = *state;
    NEED_GPU(f);
    check_variant(f, "copy_plus", N);
}

static void test_unwritten_outputs_fail_the_check(void **state)
{
    fixture *f = *state;
    NEED_GPU(f);
    check_variant(f, "copy_half", N / 2);
}

static void measure_mode(fixture *f, gb_measure_mode mode, gb_measurement *m)
{
    gb_gpu_kernel *k = load(f, "copy", 0);
    gb_measure_opts opts = gb_measure_defaults();
    opts.mode = mode;
    gb_err err;
    assert_int_equal(gb_gpu_measure(f->gpu, k, &f->launch, &opts, m, &err), GB_OK);
    gb_gpu_unload(f->gpu, k);
    assert_true(m->stats.n >= opts.min_samples);
    assert_true(m->stats.min > 0 && isfinite(m->stats.max));
    assert_true(m->stats.min <= m->stats.median && m->stats.median <= m->stats.max);
    assert_true(m->stats.ci_lo <= m->stats.median && m->stats.median <= m->stats.ci_hi);
    assert_true(m->clock_mhz_median > 100 && m->clock_mhz_median < 5000); /* recorded */
    for (int i = 0; i < m->n_samples; i++)
        assert_true(m->clock_mhz[i] > 0);
    printf("# %s copy of %d floats: median %.4f ms +/-%.2f%% over %d samples (%d launches "
           "each), %.0f MHz (%s), %d throttled, warm-up %.1f ms, %.0f GB/s\n",
           gb_measure_mode_name(mode), N, m->stats.median, 100 * gb_stats_rel_ci(&m->stats),
           m->stats.n, m->launches_per_sample, m->clock_mhz_median, gb_gpu_clock_source(f->gpu),
           m->n_throttled, m->warmup_ms, 8.0 * N / (m->stats.median * 1e-3) / 1e9);
}

static void test_cold_and_hot_measurements_are_finite_ordered_and_clocked(void **state)
{
    fixture *f = *state;
    NEED_GPU(f);
    gb_measurement cold, hot;
    measure_mode(f, GB_MODE_COLD, &cold);
    measure_mode(f, GB_MODE_HOT, &hot);
    assert_int_equal(cold.launches_per_sample, 1);
    assert_true(hot.launches_per_sample > 1); /* a few-microsecond kernel: a graph of many */
    /* 8 MiB read and written fit in L2: hot runs from it, cold from memory. */
    assert_true(hot.stats.median < cold.stats.median);
    gb_measurement_free(&cold);
    gb_measurement_free(&hot);
}

static void test_a_race_measures_every_entrant(void **state)
{
    fixture *f = *state;
    NEED_GPU(f);
    gb_gpu_kernel *k[2] = {load(f, "copy", 0), load(f, "copy_plus", 0)};
    gb_launch launches[2] = {f->launch, f->launch};
    gb_measure_opts opts = gb_measure_defaults();
    gb_measurement m[2];
    gb_err err;
    assert_int_equal(gb_gpu_race(f->gpu, k, launches, 2, &opts, m, &err), GB_OK);
    for (int i = 0; i < 2; i++) {
        assert_true(m[i].stats.n >= opts.min_samples && m[i].stats.median > 0);
        gb_measurement_free(&m[i]);
        gb_gpu_unload(f->gpu, k[i]);
    }
}

/* A trial in the in-process backend, of the kernel named name. */
static void local_trial(fixture *f, gb_exec *exec, const char *name, gb_trial_result *out)
{
    gb_variant v = {.cubin = f->cubin.cubin,
                    .cubin_bytes = f->cubin.cubin_bytes,
                    .lowered_name = name,
                    .launch = f->launch};
    gb_measure_opts defaults = gb_measure_defaults(), opts = gb_measure_screening(&defaults);
    gb_err err;
    assert_int_equal(gb_exec_trial(exec, &v, &f->check, &opts, 0, out, &err), GB_OK);
}

/* The run's breakdown of a trial's time: each phase the session went through is
 * timed, the warm-up and samples are the measurement's own, and the phases fit
 * inside the session, which fits inside the executor's call. */
static void test_a_trial_times_each_phase_it_reaches(void **state)
{
    fixture *f = *state;
    NEED_GPU(f);
    gb_exec *exec = NULL;
    gb_arg args[3];
    gb_variant ref = {.cubin = f->cubin.cubin,
                      .cubin_bytes = f->cubin.cubin_bytes,
                      .lowered_name = "copy",
                      .launch = f->launch};
    gb_err err;
    copy_args(args);
    assert_int_equal(gb_exec_local(0, &exec, &err), GB_OK);
    assert_int_equal(gb_exec_set_problem(exec, args, 3, 42, &err), GB_OK);
    assert_int_equal(gb_exec_reference(exec, &ref, &err), GB_OK);
    gb_trial_result ok, wrong;
    local_trial(f, exec, "copy", &ok);
    local_trial(f, exec, "copy_plus", &wrong);
    const gb_trial_phases *p = &ok.phases;
    assert_int_equal(ok.status, GB_TRIAL_OK);
    assert_true(p->load_ms > 0 && p->check_ms > 0);
    assert_true(p->warmup_ms == ok.measurement.warmup_ms && p->warmup_ms >= 10);
    assert_true(p->sample_ms == ok.measurement.wall_ms);
    assert_true(p->kernel_ms > 0 && p->kernel_ms <= p->sample_ms);
    assert_true(p->session_ms >= p->load_ms + p->check_ms + p->warmup_ms + p->sample_ms);
    assert_true(p->total_ms >= p->session_ms);
    printf("# a screening trial of a copy: load %.2f ms, check %.2f ms, warm-up %.2f ms, samples "
           "%.2f ms (kernel %.2f ms), session %.2f ms, call %.2f ms\n",
           p->load_ms, p->check_ms, p->warmup_ms, p->sample_ms, p->kernel_ms, p->session_ms,
           p->total_ms);
    assert_int_equal(wrong.status, GB_TRIAL_WRONG); /* checked, never measured */
    assert_true(wrong.phases.check_ms > 0);
    assert_true(wrong.phases.warmup_ms == 0 && wrong.phases.sample_ms == 0);
    gb_trial_result_free(&ok);
    gb_trial_result_free(&wrong);
    gb_exec_destroy(exec);
}

static void test_dynamic_shared_memory_above_48k_is_granted(void **state)
{
    fixture *f = *state;
    NEED_GPU(f);
    uint32_t smem = 256 * 64 * sizeof(float); /* 64 KiB */
    gb_gpu_kernel *ref = load(f, "copy", 0), *k = load(f, "big_smem", smem);
    gb_launch launch = f->launch;
    launch.smem_bytes = smem;
    gb_check_result res;
    gb_err err;
    assert_int_equal(gb_gpu_run_reference(f->gpu, ref, &f->launch, &err), GB_OK);
    assert_int_equal(gb_gpu_verify(f->gpu, k, &launch, &f->check, &res, &err), GB_OK);
    assert_int_equal(res.n_bad, 0);
    gb_gpu_unload(f->gpu, k);
    gb_gpu_unload(f->gpu, ref);
}

static void test_an_impossible_launch_is_refused(void **state)
{
    fixture *f = *state;
    NEED_GPU(f);
    gb_gpu_kernel *k = load(f, "copy", 0);
    gb_launch launch = {.grid = {1, 1, 1}, .block = {4096, 1, 1}};
    gb_check_result res;
    gb_err err;
    assert_int_equal(gb_gpu_verify(f->gpu, k, &launch, &f->check, &res, &err), GB_ELAUNCH);
    assert_non_null(strstr(err.msg, "cuLaunchKernel"));
    /* the session is still usable */
    assert_int_equal(gb_gpu_verify(f->gpu, k, &f->launch, &f->check, &res, &err), GB_OK);
    gb_gpu_unload(f->gpu, k);
}

/* Runs last: after an illegal address the CUDA driver refuses all further work in
 * the process, a fresh context included. That is why tuning runs variants in a
 * worker process. */
static void test_a_fault_is_reported_and_poisons_the_session(void **state)
{
    fixture *f = *state;
    NEED_GPU(f);
    gb_gpu_kernel *k = load(f, "write_far", 0);
    gb_check_result res;
    gb_err err;
    assert_int_equal(gb_gpu_verify(f->gpu, k, &f->launch, &f->check, &res, &err), GB_EFAULT);
    assert_non_null(strstr(err.msg, "CUDA_ERROR_ILLEGAL_ADDRESS"));
    assert_int_equal(gb_gpu_verify(f->gpu, k, &f->launch, &f->check, &res, &err), GB_EFAULT);
    assert_non_null(strstr(err.msg, "unusable"));
    gb_gpu_unload(f->gpu, k);
}

/* ---- a whole tuning run ------------------------------------------------- */

/* The GPU in a worker process, as gpubench-tune runs it: the worker is the
 * gpubench binary of this build. */
static int open_worker(void *ctx, gb_exec **out, gb_err *err)
{
    static char exe[4096];
    snprintf(exe, sizeof exe, "%s/cli/gpubench", getenv("GB_BINARY_DIR"));
    gb_worker_opts opts = {.exe = exe, .ordinal = 0};
    return gb_exec_worker(&opts, out, err);
}

static int run_script(const char *script, const char *mode, const char *cache_dir,
                      gb_lua_host *host, gb_err *err)
{
    static const char *templates[1];
    static char template_dir[4096];
    snprintf(template_dir, sizeof template_dir, "%s/templates", getenv("GB_SOURCE_DIR"));
    templates[0] = template_dir;
    static gb_run_context context;
    *host = (gb_lua_host){
        .session = {.open_exec = open_worker}, .template_path = templates, .n_template_path = 1};
    /* the tables on stdout, as gpubench-tune prints them */
    gb_output *table = NULL;
    assert_int_equal(gb_output_table(stdout, &(gb_table_opts){0}, &table, err), GB_OK);
    gb_session_begin_outputs(&host->session, table, &context, err);
    host->session.tuner = (gb_tuner_opts){.jobs = 4,
                                          .seed = 1,
                                          .measure = gb_measure_defaults(),
                                          .log = stderr,
                                          .verbose = true,
                                          .trial_timeout_s = 20};
    assert_int_equal(gb_cache_open(cache_dir, 0, &host->session.tuner.cache, err), GB_OK);
    lua_State *L = NULL;
    int rc = gb_lua_new(host, &L, err);
    char *argv[] = {(char *)mode};
    if (rc == GB_OK) rc = gb_lua_run(L, script, 1, argv, err);
    gb_lua_close(L, host);
    gb_cache_close(host->session.tuner.cache);
    gb_session_end_outputs(&host->session, &(gb_err){0});
    gb_run_context_free(&context);
    return rc;
}

static const char TUNE_SCRIPT[] =
    "local gb = require 'gpubench'\n"
    "local ref = gb.kernel { name = 'ref', source = gb.template 'gemm_ref.cuh',\n"
    "  entry = 'gemm_ref_f32', block = {16, 16},\n"
    "  grid = function(c, s) return { gb.cdiv(s.N, 16), gb.cdiv(s.M, 16) } end }\n"
    "local k = gb.kernel { name = 'sgemm_test', source = gb.template 'sgemm.cuh',\n"
    "  entry = 'sgemm<${BM},${BN},${BK},${TM},${TN}>',\n"
    "  params = { BM = {64, 128}, BN = {64}, BK = {8, 16}, TM = {4, 8}, TN = {4} },\n"
    "  args = function(s) return { gb.tensor('f32', {s.M, s.K}, 'randn'),\n"
    "    gb.tensor('f32', {s.K, s.N}, 'randn'), gb.tensor('f32', {s.M, s.N}),\n"
    "    gb.i32(s.M), gb.i32(s.N), gb.i32(s.K) } end,\n"
    "  grid = function(c, s) return { gb.cdiv(s.N, c.BN), gb.cdiv(s.M, c.BM) } end,\n"
    "  block = function(c) return (c.BM // c.TM) * (c.BN // c.TN) end,\n"
    "  reference = ref, check = { rtol = 1e-3, atol = 1e-3 },\n"
    "  flops = function(s) return 2 * s.M * s.N * s.K end }\n"
    "local r = gb.tune(k, { shapes = { {M = 512, N = 512, K = 512}, {M = 333, N = 517, K = 129} } "
    "})\n"
    "for _, x in ipairs(r) do\n"
    "  assert(x.best, 'no best for ' .. x.key)\n"
    "  assert(x.best.ms > 0 and x.best.tflops > 0)\n"
    "  assert(x.cached == (arg[1] == 'rerun'), 'cached flag for ' .. x.key)\n"
    "  if not x.cached then assert(x.counts.ok == 8 and x.counts.wrong == 0, 'statuses') end\n"
    "end\n"
    "assert(gb.best(k, {M = 512, N = 512, K = 512}), 'gb.best finds the winner')\n";

static void test_a_tuning_run_finds_a_correct_best_and_a_rerun_uses_the_cache(void **state)
{
    if (!gpu_lease_take()) skip();
    char dir[] = "/tmp/gb-test-gpu-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char script[4096];
    snprintf(script, sizeof script, "%s/tune.lua", dir);
    FILE *fp = fopen(script, "w");
    fputs(TUNE_SCRIPT, fp);
    fclose(fp);
    char cache_dir[4200];
    snprintf(cache_dir, sizeof cache_dir, "%s/cache", dir);
    gb_lua_host host;
    gb_err err = {0};
    int rc = run_script(script, "first", cache_dir, &host, &err);
    if (rc) fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, GB_OK);
    assert_int_equal(host.session.n_tuned, 1);
    assert_int_equal(host.session.n_shapes_failed, 0);
    size_t n_best = 0;
    gb_cache *cache = NULL;
    assert_int_equal(gb_cache_open(cache_dir, 0, &cache, &err), GB_OK);
    assert_int_equal(gb_cache_count(cache, GB_DB_BEST, &n_best, &err), GB_OK);
    assert_int_equal(n_best, 2);
    gb_cache_close(cache);
    rc = run_script(script, "rerun", cache_dir, &host, &err); /* all from the cache */
    if (rc) fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, GB_OK);
    scratch_remove(dir);
}

static void test_faulty_variants_are_recorded_and_the_fastest_correct_one_wins(void **state)
{
    if (!gpu_lease_take()) skip();
    char dir[] = "/tmp/gb-test-faults-XXXXXX", script[4096], cache_dir[64];
    assert_non_null(mkdtemp(dir));
    snprintf(script, sizeof script, "%s/tests/faults/faults.lua", getenv("GB_SOURCE_DIR"));
    snprintf(cache_dir, sizeof cache_dir, "%s/cache", dir);
    gb_lua_host host;
    gb_err err = {0};
    int rc = run_script(script, "check", cache_dir, &host, &err); /* faults.lua asserts */
    if (rc) fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, GB_OK);
    scratch_remove(dir);
}

/* tests/checks/checks.lua asserts what the check makes of an inout tensor, planted
 * NaN and infinities, a norm check, and a pebibyte tensor (refused up front). */
static void test_inout_planted_norm_and_oversized_tensors_through_a_script(void **state)
{
    if (!gpu_lease_take()) skip();
    char dir[] = "/tmp/gb-test-checks-XXXXXX", script[4096], cache_dir[64];
    assert_non_null(mkdtemp(dir));
    snprintf(script, sizeof script, "%s/tests/checks/checks.lua", getenv("GB_SOURCE_DIR"));
    snprintf(cache_dir, sizeof cache_dir, "%s/cache", dir);
    gb_lua_host host;
    gb_err err = {0};
    int rc = run_script(script, "check", cache_dir, &host, &err);
    if (rc) fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, GB_OK);
    scratch_remove(dir);
}

/* Every kernel of the memory-bound suite (examples/suite/) through the tuner on
 * one small shape with NaN and infinities planted, two configurations each:
 * tests/suite/small.lua fails unless each has a correct best and no variant was
 * wrong, crashed, timed out or refused. */
static void test_each_suite_kernel_tunes_to_a_correct_best_on_a_small_nan_shape(void **state)
{
    if (!gpu_lease_take()) skip();
    char dir[] = "/tmp/gb-test-suite-XXXXXX", script[4096], cache_dir[64];
    assert_non_null(mkdtemp(dir));
    snprintf(script, sizeof script, "%s/tests/suite/small.lua", getenv("GB_SOURCE_DIR"));
    snprintf(cache_dir, sizeof cache_dir, "%s/cache", dir);
    gb_lua_host host;
    gb_err err = {0};
    int rc = run_script(script, "check", cache_dir, &host, &err);
    if (rc) fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, GB_OK);
    assert_int_equal(host.session.n_shapes_failed, 0);
    scratch_remove(dir);
}

static const char IN_PLACE[] =
    "extern \"C\" __global__ void twice(float *x, int n)\n"
    "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= 2.0f; }\n"
    "extern \"C\" __global__ void thrice(float *x, int n)\n"
    "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= 3.0f; }\n";

/* An in-place kernel: the checked tensor is an input too; the reference gets its
 * own copy with the same data. */
static void test_an_in_place_kernel_is_checked_on_its_own_input(void **state)
{
    fixture *f = *state;
    NEED_GPU(f);
    gb_compile_req req = {.source = IN_PLACE,
                          .source_name = "in_place.cu",
                          .arch = gb_gpu_device(f->gpu)->arch,
                          .name_exprs = {"twice"},
                          .n_name_exprs = 1};
    gb_compile_out out;
    gb_err err;
    assert_int_equal(gb_nvrtc_compile(&req, &out, &err), GB_OK);
    gb_arg args[2] = {
        {.kind = GB_ARG_TENSOR,
         .dtype = GB_DT_F32,
         .n_dims = 1,
         .dims = {N},
         .init = GB_INIT_RANDN,
         .checked = true},
        {.kind = GB_ARG_SCALAR, .dtype = GB_DT_I32, .int_value = N},
    };
    assert_int_equal(gb_gpu_set_problem(f->gpu, args, 2, 5, &err), GB_OK);
    gb_gpu_kernel *twice = NULL, *thrice = NULL;
    assert_int_equal(gb_gpu_load(f->gpu, out.cubin, out.cubin_bytes, "twice", 0, &twice, &err),
                     GB_OK);
    assert_int_equal(gb_gpu_load(f->gpu, out.cubin, out.cubin_bytes, "thrice", 0, &thrice, &err),
                     GB_OK);
    gb_check_spec check = {.n_outputs = 1, .outputs = {0}, .rtol = 0, .atol = 0};
    gb_check_result res;
    assert_int_equal(gb_gpu_run_reference(f->gpu, twice, &f->launch, &err), GB_OK);
    assert_int_equal(gb_gpu_verify(f->gpu, twice, &f->launch, &check, &res, &err), GB_OK);
    assert_int_equal(res.n_bad, 0);
    assert_int_equal(gb_gpu_verify(f->gpu, thrice, &f->launch, &check, &res, &err), GB_OK);
    assert_true(res.n_bad > N / 2); /* all but the zeros */
    gb_gpu_unload(f->gpu, twice);
    gb_gpu_unload(f->gpu, thrice);
    gb_compile_out_free(&out);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_device_properties_are_read),
        T(test_buffers_are_the_same_for_the_same_seed),
        T(test_outputs_start_poisoned_with_nan),
        T(test_a_correct_variant_passes_the_check),
        T(test_a_wrong_variant_fails_every_element),
        T(test_unwritten_outputs_fail_the_check),
        T(test_cold_and_hot_measurements_are_finite_ordered_and_clocked),
        T(test_a_race_measures_every_entrant),
        T(test_a_trial_times_each_phase_it_reaches),
        T(test_dynamic_shared_memory_above_48k_is_granted),
        T(test_an_impossible_launch_is_refused),
        T(test_an_in_place_kernel_is_checked_on_its_own_input),
        cmocka_unit_test(test_inout_planted_norm_and_oversized_tensors_through_a_script),
        cmocka_unit_test(test_a_tuning_run_finds_a_correct_best_and_a_rerun_uses_the_cache),
        cmocka_unit_test(test_faulty_variants_are_recorded_and_the_fastest_correct_one_wins),
        cmocka_unit_test(test_each_suite_kernel_tunes_to_a_correct_best_on_a_small_nan_shape),
        T(test_a_fault_is_reported_and_poisons_the_session), /* last: see there */
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
