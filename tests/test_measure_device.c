/*
 * What the device does to the samples, as engine/measure.h handles it, driven by
 * the fake samplers of measure_fake.h on a simulated clock: the warm-up lasts
 * until the SM clock is steady (or gives up), samples taken while the GPU
 * throttles are kept tagged and left out of the statistics, the clock reported is
 * that of the kept samples, and another process on the GPU before or after the
 * samples marks the measurement (or every variant of a race) contended.
 */

#include "measure_fake.h"

#include "base/error.h"
#include "engine/stats.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* ---- warm-up -------------------------------------------------------------- */

static void test_a_cold_start_is_left_in_the_warmup(void **state)
{
    fake f = make_fake(0, cold_start, 1.0, 0.0);
    gb_measure_opts opts = gb_measure_defaults();
    gb_measurement m = measure(&f, &opts);
    assert_true(m.n_warmup >= 3);
    for (int i = 0; i < m.n_samples; i++)
        assert_near(m.samples_ms[i], 1.0);
    assert_near(m.stats.max, 1.0);
    gb_measurement_free(&m);
}

static void test_warmup_lasts_at_least_warmup_ms_of_clock_time(void **state)
{
    fake f = make_fake(0, constant, 1.0, 0.0);
    gb_measure_opts opts = gb_measure_defaults();
    opts.warmup_ms = 50.0;
    gb_measurement m = measure(&f, &opts);
    double warmup_ms = time_of_calls(0, 0, m.n_warmup);
    assert_true(warmup_ms >= opts.warmup_ms);
    assert_near(m.warmup_ms, warmup_ms);
    assert_true(m.clock_steady);
    assert_near(m.steady_clock_mhz, STEADY_MHZ);
    gb_measurement_free(&m);
}

static void test_warmup_waits_for_a_ramping_clock_to_settle(void **state)
{
    fake f = make_fake(0, ramping_clock, 2.0, 0.0);
    gb_measure_opts opts = gb_measure_defaults();
    gb_measurement m = measure(&f, &opts);
    assert_true(m.clock_steady);
    assert_true(fabs(m.steady_clock_mhz - STEADY_MHZ) <= opts.clock_tolerance * STEADY_MHZ);
    assert_true(m.warmup_ms >= 40.0);
    assert_true(m.warmup_ms < opts.warmup_max_ms);
    for (int i = 0; i < m.n_samples; i++)
        assert_true(m.clock_mhz[i] >= (1.0 - opts.clock_tolerance) * STEADY_MHZ);
    assert_near(m.clock_mhz_median, STEADY_MHZ);
    gb_measurement_free(&m);
}

/* 5 ms samples, screened (10 ms of warm-up at least): three of them already last
 * the warm-up's minimum and show a steady clock, so a fourth and fifth would add
 * 10 ms to every trial and nothing to the check. */
static void test_a_long_kernel_warms_up_over_three_samples(void **state)
{
    fake f = make_fake(0, constant, 5.0, 0.0);
    gb_measure_opts defaults = gb_measure_defaults(), opts = gb_measure_screening(&defaults);
    gb_measurement m = measure(&f, &opts);
    assert_int_equal(m.n_warmup, 3);
    assert_true(m.clock_steady);
    assert_near(m.steady_clock_mhz, STEADY_MHZ);
    assert_near(m.warmup_ms, time_of_calls(0, 0, 3));
    gb_measurement_free(&m);
}

/* 3 ms samples: three last 9 ms, less than the 10 ms minimum, so the clock is
 * judged over five, as for any short kernel. */
static void test_three_samples_short_of_the_warmup_are_not_enough(void **state)
{
    fake f = make_fake(0, constant, 3.0, 0.0);
    gb_measure_opts defaults = gb_measure_defaults(), opts = gb_measure_screening(&defaults);
    gb_measurement m = measure(&f, &opts);
    assert_int_equal(m.n_warmup, 5);
    assert_true(m.clock_steady);
    gb_measurement_free(&m);
}

/* Three long samples are enough only when their clocks agree: a clock still
 * ramping up keeps the warm-up going until it is flat. */
static void test_a_long_kernel_still_waits_for_a_ramping_clock(void **state)
{
    fake f = make_fake(0, ramping_clock, 6.0, 0.0);
    gb_measure_opts defaults = gb_measure_defaults(), opts = gb_measure_screening(&defaults);
    gb_measurement m = measure(&f, &opts);
    assert_true(m.clock_steady);
    assert_true(fabs(m.steady_clock_mhz - STEADY_MHZ) <= opts.clock_tolerance * STEADY_MHZ);
    assert_true(m.warmup_ms >= 40.0); /* the ramp's length */
    for (int i = 0; i < m.n_samples; i++)
        assert_true(m.clock_mhz[i] >= (1.0 - opts.clock_tolerance) * STEADY_MHZ);
    gb_measurement_free(&m);
}

static void test_warmup_gives_up_on_an_unsteady_clock_at_warmup_max_ms(void **state)
{
    fake f = make_fake(0, alternating_clock, 1.0, 0.0);
    gb_measure_opts opts = gb_measure_defaults();
    opts.warmup_max_ms = 100.0;
    opts.max_ms = 50.0;
    gb_measurement m = measure(&f, &opts);
    assert_false(m.clock_steady);
    assert_near(m.warmup_ms, time_of_calls(0, 0, m.n_warmup));
    assert_true(m.warmup_ms >= opts.warmup_max_ms);
    assert_true(m.warmup_ms <= opts.warmup_max_ms + 1.0 + OVERHEAD_MS);
    gb_measurement_free(&m);
}

static void test_an_unknown_clock_does_not_hold_up_the_warmup(void **state)
{
    fake f = make_fake(0, unknown_clock, 1.0, 0.0);
    gb_measure_opts opts = gb_measure_defaults();
    gb_measurement m = measure(&f, &opts);
    assert_true(m.warmup_ms >= opts.warmup_ms);
    assert_true(m.warmup_ms < 2.0 * opts.warmup_ms);
    assert_near(m.steady_clock_mhz, 0.0);
    assert_near(m.clock_mhz_median, 0.0);
    assert_int_equal(m.n_throttled, 0);
    assert_int_equal(m.n_samples, opts.min_samples);
    gb_measurement_free(&m);
}

/* ---- no warm-up when the GPU is already warm ------------------------------ */

/* Two measurements back to back: the second needs only its first launch. */
static void test_a_measurement_right_after_another_warms_up_over_one_sample(void **state)
{
    fake a = make_fake(0, noisy, 1.0, 0.01), b = make_fake(1, noisy, 1.0, 0.01);
    gb_measure_opts opts = gb_measure_defaults();
    gb_warmth warmth = {0};
    gb_measurement first = measure_warm(&a, &opts, &warmth);
    assert_true(first.n_warmup >= 5);
    assert_near(warmth.steady_mhz, STEADY_MHZ);
    assert_near(warmth.ended_ms, world.now_ms);
    gb_measurement second = measure_warm(&b, &opts, &warmth);
    assert_int_equal(second.n_warmup, 1);
    assert_true(second.clock_steady);
    assert_near(second.steady_clock_mhz, STEADY_MHZ);
    assert_true(second.warmup_ms < opts.warmup_ms);
    gb_measurement_free(&first);
    gb_measurement_free(&second);
}

/* The GPU sat idle longer than rewarm_after_ms: a whole warm-up again. */
static void test_an_idle_gpu_warms_up_again(void **state)
{
    fake a = make_fake(0, noisy, 1.0, 0.01), b = make_fake(1, noisy, 1.0, 0.01);
    gb_measure_opts opts = gb_measure_defaults();
    gb_warmth warmth = {0};
    gb_measurement first = measure_warm(&a, &opts, &warmth);
    world.now_ms += opts.rewarm_after_ms + 1.0;
    gb_measurement second = measure_warm(&b, &opts, &warmth);
    assert_true(second.n_warmup >= 5);
    assert_true(second.warmup_ms >= opts.warmup_ms);
    gb_measurement_free(&first);
    gb_measurement_free(&second);
}

/* The clock moved since (the first launch ran 20% slower): warm up properly. */
static void test_a_clock_that_moved_since_warms_up_again(void **state)
{
    fake a = make_fake(0, noisy, 1.0, 0.01), b = make_fake(1, ramping_clock, 1.0, 0.0);
    gb_measure_opts opts = gb_measure_defaults();
    gb_warmth warmth = {0};
    gb_measurement first = measure_warm(&a, &opts, &warmth);
    world.now_ms = 0.0; /* the ramp starts now, and only a moment after the first */
    warmth.ended_ms = 0.0;
    gb_measurement second = measure_warm(&b, &opts, &warmth);
    assert_true(second.n_warmup > 1);
    assert_true(second.warmup_ms >= 40.0); /* the ramp's length */
    gb_measurement_free(&first);
    gb_measurement_free(&second);
}

/* ---- throttling ----------------------------------------------------------- */

static void test_samples_under_the_threshold_are_kept_tagged_and_left_out_of_the_stats(void **state)
{
    fake f = make_fake(0, flagged_block, 1.0, 0.01);
    gb_measure_opts opts = opts_sampling_past_50_ms();
    gb_measurement m = measure(&f, &opts);
    for (int i = 0; i < m.n_samples; i++)
        assert_int_equal(m.throttled[i], m.samples_ms[i] > 2.0);
    assert_true(m.n_throttled >= 3);
    assert_int_equal(m.n_throttled, count_tagged(&m));
    assert_false(m.all_throttled);
    assert_int_equal(m.stats.n, m.n_samples - m.n_throttled);
    assert_true(m.stats.max < 1.5);
    assert_reports_its_samples_stats(&m);
    gb_measurement_free(&m);
}

static void test_only_samples_below_the_share_of_the_peak_clock_are_throttled(void **state)
{
    fake f = make_fake(0, clock_drops, 1.0, 0.01);
    gb_measure_opts opts = opts_sampling_past_50_ms();
    gb_measurement m = measure(&f, &opts);
    assert_near(m.steady_clock_mhz, STEADY_MHZ);
    int n_slightly_low = 0;
    for (int i = 0; i < m.n_samples; i++) {
        assert_int_equal(m.throttled[i], m.clock_mhz[i] == 1400.0);
        n_slightly_low += m.clock_mhz[i] == 1600.0;
    }
    assert_true(n_slightly_low > 0);
    assert_true(m.n_throttled >= 3);
    assert_int_equal(m.n_throttled, count_tagged(&m));
    assert_int_equal(m.stats.n, m.n_samples - m.n_throttled);
    assert_true(m.stats.max < 1.5);
    assert_reports_its_samples_stats(&m);
    gb_measurement_free(&m);
}

static int n_asked;

static unsigned long long power_capped(void *ctx)
{
    (void)ctx;
    n_asked++;
    return 0x4; /* NVML's software power cap */
}

/* NVML is asked why only after the samples it tagged, and its answers are kept. */
static void test_the_sampler_is_asked_why_only_for_throttled_samples(void **state)
{
    gb_measure_opts opts = opts_sampling_past_50_ms();
    fake f = make_fake(0, flagged_block, 1.0, 0.01);
    gb_sampler s = sampler_of(&f);
    s.throttle_reasons = power_capped;
    gb_measurement m;
    gb_err err = {0};
    n_asked = 0;
    assert_int_equal(gb_measure_run(&s, &opts, &m, &err), GB_OK);
    assert_true(m.n_throttled > 0);
    assert_int_equal(n_asked, m.n_throttled);
    assert_int_equal(m.throttle_reasons, 0x4);
    gb_measurement_free(&m);
    reset_world(state);
    fake g = make_fake(0, constant, 1.0, 0.0);
    s = sampler_of(&g);
    s.throttle_reasons = power_capped;
    n_asked = 0;
    assert_int_equal(gb_measure_run(&s, &opts, &m, &err), GB_OK);
    assert_int_equal(n_asked, 0);
    assert_int_equal(m.throttle_reasons, 0);
    gb_measurement_free(&m);
}

static void test_a_threshold_of_zero_tags_nothing(void **state)
{
    fake f = make_fake(0, always_flagged, 1.0, 0.01);
    gb_measure_opts opts = gb_measure_defaults();
    opts.throttle_threshold = 0.0;
    opts.max_ms = 50.0;
    gb_measurement m = measure(&f, &opts);
    assert_int_equal(m.n_throttled, 0);
    assert_false(m.all_throttled);
    gb_measurement_free(&m);
}

static void test_when_every_sample_is_throttled_the_stats_use_them_all(void **state)
{
    fake f = make_fake(0, always_flagged, 1.0, 0.01);
    gb_measure_opts opts = gb_measure_defaults();
    opts.max_ms = 100.0;
    gb_measurement m = measure(&f, &opts);
    assert_true(m.all_throttled);
    assert_int_equal(m.n_throttled, m.n_samples);
    assert_int_equal(m.stats.n, m.n_samples);
    assert_reports_its_samples_stats(&m);
    gb_measurement_free(&m);
}

/* ---- the clock reported -------------------------------------------------- */

static void test_clock_median_is_of_the_kept_samples(void **state)
{
    fake f = make_fake(0, wobbling_clock, 1.0, 0.02);
    gb_measure_opts opts = gb_measure_defaults();
    gb_measurement m = measure(&f, &opts);
    assert_int_equal(m.n_throttled, 0);
    gb_stats clocks;
    assert_int_equal(gb_stats_compute(m.clock_mhz, m.n_samples, &clocks), GB_OK);
    assert_near(m.clock_mhz_median, clocks.median);
    gb_measurement_free(&m);
}

/* ---- other processes on the GPU ------------------------------------------- */

static void test_other_processes_are_looked_for_before_and_after_the_samples(void **state)
{
    fake f = make_fake(0, constant, 1.0, 0);
    gb_measure_opts opts = gb_measure_defaults();
    gb_measurement m = measure(&f, &opts);
    assert_int_equal(f.n_looks, 2);
    assert_int_equal(f.look_at[0], m.n_warmup); /* after the warm-up, before the first sample */
    assert_int_equal(f.look_at[1], m.n_warmup + m.n_samples); /* after the last */
    assert_false(m.contended);
    assert_int_equal(m.n_other_procs, 0);
    gb_measurement_free(&m);
}

static void test_another_process_before_or_after_makes_the_measurement_contended(void **state)
{
    const int answers[3][2] = {{2, 0}, {0, 1}, {1, 3}};
    for (int i = 0; i < 3; i++) {
        reset_world(state);
        fake f = make_fake(0, constant, 1.0, 0);
        f.others[0] = answers[i][0];
        f.others[1] = answers[i][1];
        gb_measure_opts opts = gb_measure_defaults();
        gb_measurement m = measure(&f, &opts);
        assert_true(m.contended);
        assert_int_equal(m.n_other_procs,
                         answers[i][0] > answers[i][1] ? answers[i][0] : answers[i][1]);
        assert_near(m.stats.median, 1.0); /* the samples are kept as they are */
        gb_measurement_free(&m);
    }
}

static void test_an_unknown_answer_or_no_way_to_ask_is_not_contended(void **state)
{
    fake f = make_fake(0, constant, 1.0, 0);
    f.others[0] = f.others[1] = -1; /* NVML could not say */
    gb_measure_opts opts = gb_measure_defaults();
    gb_measurement m = measure(&f, &opts);
    assert_false(m.contended);
    gb_measurement_free(&m);
    reset_world(state);
    f = make_fake(0, constant, 1.0, 0);
    gb_sampler no_nvml = {.sample = fake_sample, .now_ms = fake_now, .ctx = &f};
    gb_err err = {0};
    assert_int_equal(gb_measure_run(&no_nvml, &opts, &m, &err), GB_OK);
    assert_false(m.contended);
    gb_measurement_free(&m);
}

static void test_a_race_looks_once_before_and_after_and_marks_every_variant(void **state)
{
    fake f[3] = {make_fake(0, constant, 1.0, 0), make_fake(1, constant, 2.0, 0),
                 make_fake(2, constant, 3.0, 0)};
    f[0].others[1] = 1; /* someone came during the race */
    gb_measure_opts opts = gb_measure_defaults();
    gb_measurement m[3];
    race(f, 3, &opts, m);
    assert_int_equal(f[0].n_looks, 2);
    assert_int_equal(f[1].n_looks + f[2].n_looks, 0);
    for (int i = 0; i < 3; i++) {
        assert_true(m[i].contended);
        assert_int_equal(m[i].n_other_procs, 1);
        gb_measurement_free(&m[i]);
    }
}

static void test_a_copy_keeps_the_contention(void **state)
{
    fake f = make_fake(0, constant, 1.0, 0);
    f.others[0] = 2;
    gb_measure_opts opts = gb_measure_defaults();
    gb_measurement m = measure(&f, &opts), copy;
    assert_int_equal(gb_measurement_copy(&m, &copy), GB_OK);
    assert_true(copy.contended);
    assert_int_equal(copy.n_other_procs, 2);
    gb_measurement_free(&copy);
    gb_measurement_free(&m);
}

#define T(name) cmocka_unit_test_setup(name, reset_world)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_a_cold_start_is_left_in_the_warmup),
        T(test_warmup_lasts_at_least_warmup_ms_of_clock_time),
        T(test_warmup_waits_for_a_ramping_clock_to_settle),
        T(test_a_long_kernel_warms_up_over_three_samples),
        T(test_three_samples_short_of_the_warmup_are_not_enough),
        T(test_a_long_kernel_still_waits_for_a_ramping_clock),
        T(test_warmup_gives_up_on_an_unsteady_clock_at_warmup_max_ms),
        T(test_an_unknown_clock_does_not_hold_up_the_warmup),
        T(test_a_measurement_right_after_another_warms_up_over_one_sample),
        T(test_an_idle_gpu_warms_up_again),
        T(test_a_clock_that_moved_since_warms_up_again),
        T(test_samples_under_the_threshold_are_kept_tagged_and_left_out_of_the_stats),
        T(test_only_samples_below_the_share_of_the_peak_clock_are_throttled),
        T(test_a_threshold_of_zero_tags_nothing),
        T(test_the_sampler_is_asked_why_only_for_throttled_samples),
        T(test_when_every_sample_is_throttled_the_stats_use_them_all),
        T(test_clock_median_is_of_the_kept_samples),
        T(test_other_processes_are_looked_for_before_and_after_the_samples),
        T(test_another_process_before_or_after_makes_the_measurement_contended),
        T(test_an_unknown_answer_or_no_way_to_ask_is_not_contended),
        T(test_a_race_looks_once_before_and_after_and_marks_every_variant),
        T(test_a_copy_keeps_the_contention),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
