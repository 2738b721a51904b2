/*
 * The two timers on a real GPU (engine/timing.c): CUPTI's kernel records and
 * CUDA events time a 1 ms kernel alike, CUPTI leaves out the launch's way in and
 * out that events include, hot samples take each launch's own record, and a race
 * sets apart the samples that follow another kernel's. Every test skips without
 * a GPU, and the CUPTI ones without CUPTI (the sentence why is printed).
 */
#include "gpu_present.h"
#include "engine/gpu.h"
#include "engine/nvrtc.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* spin: one block that waits `ns` nanoseconds of %globaltimer; short: a tiny
 * kernel of one block that writes one value. */
static const char KERNELS[] =
    "extern \"C\" __global__ void spin(float *out, long long ns)\n"
    "{ unsigned long long t0, t; asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t0));\n"
    "  do { asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t)); } while (t - t0 < ns);\n"
    "  if (threadIdx.x == 0) out[blockIdx.x] = (float)(t - t0); }\n"
    "extern \"C\" __global__ void spin2(float *out, long long ns)\n"
    "{ unsigned long long t0, t; asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t0));\n"
    "  do { asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t)); } while (t - t0 < ns);\n"
    "  if (threadIdx.x == 0) out[blockIdx.x] = 2.0f * (float)(t - t0); }\n";

typedef struct fixture {
    gb_gpu *gpu;
    gb_compile_out cubin;
    bool cupti;
} fixture;

static int setup(void **state)
{
    *state = NULL;
    gb_gpu *gpu;
    int rc = gpu_session_open(&gpu);
    if (rc || !gpu) return rc;
    fixture *f = calloc(1, sizeof *f);
    f->gpu = gpu;
    gb_err err;
    const char *note = NULL;
    f->cupti = strcmp(gb_gpu_timer(f->gpu, &note), "cupti") == 0;
    if (!f->cupti) fprintf(stderr, "no CUPTI: %s\n", note);
    gb_compile_req req = {.source = KERNELS,
                          .source_name = "test_gpu_timer.cu",
                          .arch = gb_gpu_device(f->gpu)->arch,
                          .name_exprs = {"spin", "spin2"},
                          .n_name_exprs = 2};
    assert_int_equal(gb_nvrtc_compile(&req, &f->cubin, &err), GB_OK);
    *state = f; /* each test sets its problem: spin_for */
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

static fixture *need_cupti(void **state)
{
    fixture *f = *state;
    if (!f || !f->cupti) skip();
    return f;
}

/* The problem: out[132] and the spin time in ns. */
static void spin_for(fixture *f, long long ns)
{
    gb_arg args[2] = {
        {.kind = GB_ARG_TENSOR,
         .dtype = GB_DT_F32,
         .n_dims = 1,
         .dims = {132},
         .init = GB_INIT_OUTPUT},
        {.kind = GB_ARG_SCALAR, .dtype = GB_DT_I64, .int_value = ns},
    };
    gb_err err;
    assert_int_equal(gb_gpu_set_problem(f->gpu, args, 2, 1, &err), GB_OK);
}

static gb_gpu_kernel *load(fixture *f, const char *name)
{
    gb_gpu_kernel *k = NULL;
    gb_err err;
    assert_int_equal(gb_gpu_load(f->gpu, f->cubin.cubin, f->cubin.cubin_bytes, name, 0, &k, &err),
                     GB_OK);
    return k;
}

static void measure(fixture *f, gb_gpu_kernel *k, gb_measure_mode mode, gb_timer timer,
                    gb_measurement *out)
{
    gb_launch launch = {.grid = {132, 1, 1}, .block = {128, 1, 1}};
    gb_measure_opts opts = gb_measure_defaults();
    opts.mode = mode;
    opts.timer = timer;
    gb_err err = {0};
    if (gb_gpu_measure(f->gpu, k, &launch, &opts, out, &err) != GB_OK)
        fail_msg("gb_gpu_measure: %s", err.msg);
    printf("# %s %s: median %.5f ms +/-%.2f%%, n %d, %d a sample, timer %.4f ms a sample, "
           "%d lost\n",
           gb_measure_mode_name(mode), gb_timer_name(timer), out->stats.median,
           100 * gb_stats_rel_ci(&out->stats), out->stats.n, out->launches_per_sample,
           out->timer_ms / (out->n_warmup + out->n_samples), out->n_lost);
}

/* The spin kernel, spinning for ns, measured cold by CUPTI and by events. */
static void by_both_timers(fixture *f, long long ns, gb_measurement *cupti, gb_measurement *events)
{
    spin_for(f, ns);
    gb_gpu_kernel *k = load(f, "spin");
    measure(f, k, GB_MODE_COLD, GB_TIMER_CUPTI, cupti);
    measure(f, k, GB_MODE_COLD, GB_TIMER_EVENTS, events);
    assert_int_equal(cupti->timer, GB_TIMER_CUPTI);
    assert_int_equal(events->timer, GB_TIMER_EVENTS);
    gb_gpu_unload(f->gpu, k);
}

static void test_cupti_and_events_agree_on_a_1_ms_kernel(void **state)
{
    fixture *f = need_cupti(state);
    gb_measurement cupti, events;
    by_both_timers(f, 1000000, &cupti, &events);
    double ratio = cupti.stats.median / events.stats.median;
    if (fabs(ratio - 1) > 0.01)
        fail_msg("CUPTI %.5f ms against events %.5f ms: %.2f%% apart", cupti.stats.median,
                 events.stats.median, 100 * (ratio - 1));
    assert_true(cupti.stats.median >= 1.0);
    gb_measurement_free(&cupti);
    gb_measurement_free(&events);
}

/* Events include the launch's way in and out (2 to 3 us on an H200); CUPTI's
 * record is the kernel's own. */
static void test_cupti_leaves_out_what_events_add_to_a_short_kernel(void **state)
{
    fixture *f = need_cupti(state);
    gb_measurement cupti, events;
    by_both_timers(f, 2000, &cupti, &events);
    assert_true(cupti.stats.median >= 0.002);
    assert_true(cupti.stats.median < events.stats.median);
    gb_measurement_free(&cupti);
    gb_measurement_free(&events);
}

/* A hot sample is the mean of its launches' own records: each launch of a graph
 * of K spins at least its 5 us, so the sample does too. */
static void test_hot_samples_are_each_launchs_own_record(void **state)
{
    fixture *f = need_cupti(state);
    spin_for(f, 5000);
    gb_gpu_kernel *k = load(f, "spin");
    gb_measurement hot;
    measure(f, k, GB_MODE_HOT, GB_TIMER_CUPTI, &hot);
    assert_int_equal(hot.timer, GB_TIMER_CUPTI);
    assert_true(hot.launches_per_sample > 1);
    assert_true(hot.stats.min >= 0.005);
    assert_true(hot.stats.median < 0.0065);
    gb_measurement_free(&hot);
    gb_gpu_unload(f->gpu, k);
}

static void test_a_race_sets_apart_the_samples_after_another_kernel(void **state)
{
    fixture *f = *state;
    if (!f) skip();
    spin_for(f, 20000);
    gb_gpu_kernel *k[2] = {load(f, "spin"), load(f, "spin2")};
    gb_launch launch = {.grid = {132, 1, 1}, .block = {128, 1, 1}};
    gb_launch launches[2] = {launch, launch};
    gb_measure_opts opts = gb_measure_defaults();
    gb_measurement m[2];
    gb_err err;
    assert_int_equal(gb_gpu_race(f->gpu, k, launches, 2, &opts, m, &err), GB_OK);
    for (int i = 0; i < 2; i++) {
        printf("# race entrant %d: median %.5f ms, first after the other %.5f ms (%d)\n", i,
               m[i].stats.median, m[i].switch_ms, m[i].n_switch);
        assert_true(m[i].n_switch > 0 && m[i].switch_ms > 0);
        assert_true(m[i].stats.median >= 0.020);
        gb_measurement_free(&m[i]);
        gb_gpu_unload(f->gpu, k[i]);
    }
}

#define T(name) cmocka_unit_test(name)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_cupti_and_events_agree_on_a_1_ms_kernel),
        T(test_cupti_leaves_out_what_events_add_to_a_short_kernel),
        T(test_hot_samples_are_each_launchs_own_record),
        T(test_a_race_sets_apart_the_samples_after_another_kernel),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
