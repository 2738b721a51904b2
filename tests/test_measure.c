/*
 * The timing method of engine/measure.h, driven by the fake samplers of
 * measure_fake.h on a simulated clock: the options and their checks, when a run
 * stops (the noise target, the caps on time and samples), a race of variants
 * sampled in turn, sampler errors, and copying and summarising a measurement.
 * What the device does to the samples (the clock's warm-up, throttling, other
 * processes on the GPU) is test_measure_device.c.
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

/* ---- the options ---------------------------------------------------------- */

static void test_defaults_are_the_full_criterion(void **state)
{
    gb_measure_opts o = gb_measure_defaults();
    assert_int_equal(o.mode, GB_MODE_COLD);
    assert_near(o.noise, 0.005);
    assert_int_equal(o.min_samples, 10);
    assert_int_equal(o.max_samples, 100000);
    assert_near(o.max_ms, 1000.0);
    assert_near(o.warmup_ms, 20.0);
    assert_near(o.warmup_max_ms, 1000.0);
    assert_near(o.clock_tolerance, 0.01);
    assert_near(o.throttle_threshold, 0.75);
    assert_near(o.hot_min_ms, 0.1);
    assert_near(o.rewarm_after_ms, 1000.0);
    assert_int_equal(o.timer, GB_TIMER_AUTO);
}

static void test_screening_is_looser_than_the_full_criterion(void **state)
{
    gb_measure_opts full = gb_measure_defaults();
    gb_measure_opts s = gb_measure_screening(&full);
    assert_near(s.noise, 0.02);
    assert_true(s.noise > full.noise);
    assert_int_equal(s.min_samples, 3);
    assert_near(s.max_ms, 100.0);
    assert_true(s.max_ms < full.max_ms);
    assert_near(s.warmup_ms, 10.0);
}

static void test_screening_keeps_the_rest_of_the_full_criterion(void **state)
{
    gb_measure_opts full = gb_measure_defaults();
    full.mode = GB_MODE_HOT;
    full.max_samples = 777;
    full.warmup_max_ms = 321.0;
    full.clock_tolerance = 0.02;
    full.throttle_threshold = 0.6;
    full.timer = GB_TIMER_EVENTS;
    full.hot_min_ms = 0.25;
    gb_measure_opts s = gb_measure_screening(&full);
    assert_int_equal(s.mode, GB_MODE_HOT);
    assert_int_equal(s.max_samples, 777);
    assert_near(s.warmup_max_ms, 321.0);
    assert_near(s.clock_tolerance, 0.02);
    assert_near(s.throttle_threshold, 0.6);
    assert_int_equal(s.timer, GB_TIMER_EVENTS);
    assert_near(s.hot_min_ms, 0.25);
}

static void test_check_accepts_the_defaults_and_screening(void **state)
{
    gb_measure_opts full = gb_measure_defaults();
    gb_measure_opts screening = gb_measure_screening(&full);
    gb_err err = {0};
    assert_int_equal(gb_measure_check(&full, &err), GB_OK);
    assert_int_equal(gb_measure_check(&screening, &err), GB_OK);
}

static void assert_refused(gb_measure_opts opts, const char *field)
{
    gb_err err = {0};
    assert_int_equal(gb_measure_check(&opts, &err), GB_EINVAL);
    assert_int_equal(err.code, GB_EINVAL);
    if (!strstr(err.msg, field)) fail_msg("message \"%s\" does not name %s", err.msg, field);
}

static void test_check_refuses_a_noise_target_not_above_zero(void **state)
{
    assert_refused(defaults_with_noise(0.0), "noise");
    assert_refused(defaults_with_noise(-0.01), "noise");
}

static void test_check_refuses_fewer_than_one_min_sample(void **state)
{
    gb_measure_opts opts = gb_measure_defaults();
    opts.min_samples = 0;
    assert_refused(opts, "min_samples");
}

static void test_check_refuses_max_samples_below_min_samples(void **state)
{
    gb_measure_opts opts = gb_measure_defaults();
    opts.max_samples = opts.min_samples - 1;
    assert_refused(opts, "max_samples");
}

static void test_check_refuses_a_time_cap_not_above_zero(void **state)
{
    gb_measure_opts opts = gb_measure_defaults();
    opts.max_ms = 0.0;
    assert_refused(opts, "max_ms");
    opts.max_ms = -5.0;
    assert_refused(opts, "max_ms");
}

static void test_mode_names_round_trip(void **state)
{
    gb_measure_mode mode = GB_MODE_COLD;
    assert_string_equal(gb_measure_mode_name(GB_MODE_COLD), "cold");
    assert_string_equal(gb_measure_mode_name(GB_MODE_HOT), "hot");
    assert_int_equal(gb_measure_mode_parse("hot", &mode), GB_OK);
    assert_int_equal(mode, GB_MODE_HOT);
    assert_int_equal(gb_measure_mode_parse("cold", &mode), GB_OK);
    assert_int_equal(mode, GB_MODE_COLD);
    assert_int_equal(gb_measure_mode_parse("warm", &mode), GB_EINVAL);
}

/* ---- when to stop --------------------------------------------------------- */

static void test_constant_samples_stop_at_min_samples_with_a_zero_width_interval(void **state)
{
    fake f = make_fake(0, constant, 1.0, 0.0);
    gb_measure_opts opts = gb_measure_defaults();
    gb_measurement m = measure(&f, &opts);
    assert_int_equal(m.n_samples, opts.min_samples);
    assert_int_equal(m.stats.n, opts.min_samples);
    assert_near(m.stats.median, 1.0);
    assert_near(m.stats.ci_lo, 1.0);
    assert_near(m.stats.ci_hi, 1.0);
    assert_false(m.capped);
    gb_measurement_free(&m);
}

static void test_noisy_samples_stop_once_the_median_is_known_to_the_target(void **state)
{
    fake f = make_fake(0, noisy, 1.0, 0.02);
    gb_measure_opts opts = gb_measure_defaults();
    gb_measurement m = measure(&f, &opts);
    assert_false(m.capped);
    assert_true(m.n_samples > opts.min_samples);
    assert_int_equal(m.n_throttled, 0);
    assert_reports_its_samples_stats(&m);
    assert_int_equal(m.stats.n, m.n_samples);
    assert_true(gb_stats_rel_ci(&m.stats) <= opts.noise);
    gb_measurement_free(&m);
}

static void test_noisy_samples_stop_at_the_first_sample_that_meets_the_target(void **state)
{
    fake f = make_fake(0, noisy, 1.0, 0.02);
    gb_measure_opts opts = gb_measure_defaults();
    gb_measurement m = measure(&f, &opts);
    for (int n = opts.min_samples; n < m.n_samples; n++) {
        gb_stats before;
        assert_int_equal(gb_stats_compute(m.samples_ms, n, &before), GB_OK);
        if (gb_stats_rel_ci(&before) <= opts.noise)
            fail_msg("the target was met at %d samples, but it went on to %d", n, m.n_samples);
    }
    gb_measurement_free(&m);
}

static void test_a_tighter_noise_target_takes_more_samples(void **state)
{
    fake loose_fake = make_fake(0, noisy, 1.0, 0.02);
    gb_measure_opts opts = defaults_with_noise(0.005);
    gb_measurement loose = measure(&loose_fake, &opts);
    reset_world(state);
    fake tight_fake = make_fake(0, noisy, 1.0, 0.02);
    opts.noise = 0.002;
    gb_measurement tight = measure(&tight_fake, &opts);
    assert_false(tight.capped);
    assert_true(gb_stats_rel_ci(&tight.stats) <= 0.002);
    assert_true(tight.n_samples > loose.n_samples);
    gb_measurement_free(&loose);
    gb_measurement_free(&tight);
}

static void test_very_noisy_samples_are_capped_by_time_with_their_real_interval(void **state)
{
    fake f = make_fake(0, noisy, 1.0, 0.30);
    gb_measure_opts opts = gb_measure_defaults();
    opts.max_ms = 20.0;
    gb_measurement m = measure(&f, &opts);
    assert_true(m.capped);
    assert_true(m.wall_ms >= opts.max_ms);
    assert_true(m.wall_ms <= opts.max_ms + 1.3 + OVERHEAD_MS);
    assert_reports_its_samples_stats(&m);
    assert_true(gb_stats_rel_ci(&m.stats) > opts.noise);
    gb_measurement_free(&m);
}

static void test_very_noisy_samples_are_capped_by_max_samples(void **state)
{
    fake f = make_fake(0, noisy, 1.0, 0.30);
    gb_measure_opts opts = gb_measure_defaults();
    opts.max_samples = 25;
    gb_measurement m = measure(&f, &opts);
    assert_true(m.capped);
    assert_int_equal(m.n_samples, 25);
    assert_reports_its_samples_stats(&m);
    assert_true(gb_stats_rel_ci(&m.stats) > opts.noise);
    gb_measurement_free(&m);
}

/* The cap is on wall time: a sampler that spends 0.9 ms around a 0.1 ms sample
 * gets about 20 samples in 20 ms, not 200. */
static void test_the_time_cap_counts_the_samplers_overhead(void **state)
{
    fake f = make_fake(0, noisy, 0.1, 0.30);
    f.overhead_ms = 0.9;
    gb_measure_opts opts = gb_measure_defaults();
    opts.max_ms = 20.0;
    gb_measurement m = measure(&f, &opts);
    assert_true(m.capped);
    assert_true(m.n_samples <= 21);
    assert_near(m.wall_ms, sampling_time(&m, 0));
    gb_measurement_free(&m);
}

/* The run's breakdown takes a trial's warm-up and samples from these two: between
 * them they cover the measurement's whole time, with nothing counted twice. */
static void test_warmup_and_sampling_times_add_up_to_the_measurement(void **state)
{
    fake f = make_fake(0, noisy, 0.5, 0.02);
    gb_measure_opts defaults = gb_measure_defaults(), opts = gb_measure_screening(&defaults);
    gb_measurement m = measure(&f, &opts);
    assert_near(m.warmup_ms, time_of_calls(0, 0, m.n_warmup));
    assert_near(m.wall_ms, sampling_time(&m, 0));
    assert_near(m.warmup_ms + m.wall_ms, world.now_ms);
    assert_true(m.warmup_ms >= opts.warmup_ms);
    gb_measurement_free(&m);
}

static void test_a_drifting_stream_stops_at_the_cap_marked_capped(void **state)
{
    fake f = make_fake(0, drifting, 1.0, 0.0);
    gb_measure_opts opts = defaults_with_noise(0.002);
    opts.max_ms = 200.0;
    gb_measurement m = measure(&f, &opts);
    assert_true(m.capped);
    assert_true(m.wall_ms >= opts.max_ms);
    assert_true(m.wall_ms <= opts.max_ms + 1.5);
    assert_true(gb_stats_rel_ci(&m.stats) > opts.noise);
    gb_measurement_free(&m);
}

/* ---- what else is reported ------------------------------------------------ */

static void test_cold_mode_is_one_launch_per_sample(void **state)
{
    fake f = make_fake(0, constant, 1.0, 0.0);
    gb_measure_opts opts = gb_measure_defaults();
    gb_measurement m = measure(&f, &opts);
    assert_int_equal(m.mode, GB_MODE_COLD);
    assert_int_equal(m.launches_per_sample, 1);
    gb_measurement_free(&m);
}

static void test_hot_mode_is_reported(void **state)
{
    fake f = make_fake(0, constant, 1.0, 0.0);
    gb_measure_opts opts = gb_measure_defaults();
    opts.mode = GB_MODE_HOT;
    gb_measurement m = measure(&f, &opts);
    assert_int_equal(m.mode, GB_MODE_HOT);
    assert_true(m.launches_per_sample >= 1);
    gb_measurement_free(&m);
}

/* ---- errors --------------------------------------------------------------- */

static void assert_run_fails_at(int fail_at)
{
    fake f = make_fake(0, noisy, 1.0, 0.02);
    f.fail_at = fail_at;
    gb_sampler sampler = sampler_of(&f);
    gb_measure_opts opts = gb_measure_defaults();
    gb_measurement m;
    memset(&m, 0, sizeof m);
    gb_err err = {0};
    assert_int_equal(gb_measure_run(&sampler, &opts, &m, &err), GB_ECUDA);
    assert_int_equal(err.code, GB_ECUDA);
    if (!strstr(err.msg, "launch")) fail_msg("message \"%s\" lost the sampler's", err.msg);
    assert_int_equal(f.n_attempts, fail_at + 1); /* not called again after the error */
    gb_measurement_free(&m);
}

static void test_a_sampler_error_in_the_warmup_is_returned(void **state)
{
    assert_run_fails_at(2);
}

static void test_a_sampler_error_while_sampling_is_returned(void **state)
{
    assert_run_fails_at(40);
}

static void test_freeing_null_or_an_empty_measurement_is_harmless(void **state)
{
    gb_measurement m;
    memset(&m, 0, sizeof m);
    gb_measurement_free(NULL);
    gb_measurement_free(&m);
    gb_measurement_free(&m);
}

/* ---- copy and summarise --------------------------------------------------- */

static void test_copy_is_deep_and_equal(void **state)
{
    fake f = make_fake(0, flagged_block, 1.0, 0.01);
    gb_measure_opts opts = opts_sampling_past_50_ms();
    gb_measurement m = measure(&f, &opts), copy;
    assert_int_equal(gb_measurement_copy(&m, &copy), GB_OK);
    assert_measurement_equal(&copy, &m);
    assert_ptr_not_equal(copy.samples_ms, m.samples_ms);
    assert_ptr_not_equal(copy.clock_mhz, m.clock_mhz);
    assert_ptr_not_equal(copy.throttled, m.throttled);
    gb_measurement_free(&m); /* the copy outlives its source */
    gb_stats want = expected_stats(&copy);
    assert_stats_equal(&copy.stats, &want);
    gb_measurement_free(&copy);
}

static void test_summarise_recomputes_what_copy_carried(void **state)
{
    fake f = make_fake(0, clock_drops, 1.0, 0.01);
    gb_measure_opts opts = opts_sampling_past_50_ms();
    gb_measurement m = measure(&f, &opts), copy;
    assert_int_equal(gb_measurement_copy(&m, &copy), GB_OK);
    memset(&copy.stats, 0, sizeof copy.stats);
    copy.n_throttled = 0;
    copy.clock_mhz_median = 0.0;
    assert_int_equal(gb_measurement_summarise(&copy), GB_OK);
    assert_measurement_equal(&copy, &m);
    gb_measurement_free(&m);
    gb_measurement_free(&copy);
}

static void test_summarise_of_received_samples_leaves_throttled_ones_out(void **state)
{
    double samples_ms[] = {1.0, 9.0, 2.0, 3.0, 9.5};
    double clock_mhz[] = {1980, 1700, 1970, 1990, 1600};
    bool throttled[] = {false, true, false, false, true};
    gb_measurement m = {.n_samples = 5,
                        .samples_ms = samples_ms,
                        .clock_mhz = clock_mhz,
                        .throttled = throttled,
                        .launches_per_sample = 1};
    assert_int_equal(gb_measurement_summarise(&m), GB_OK);
    assert_int_equal(m.n_throttled, 2);
    assert_int_equal(m.stats.n, 3);
    assert_near(m.stats.median, 2.0);
    assert_near(m.stats.max, 3.0);
    assert_near(m.clock_mhz_median, 1980.0); /* of the kept samples: 1970, 1980, 1990 */
}

static void test_summarise_of_all_throttled_samples_uses_them_all(void **state)
{
    double samples_ms[] = {4.0, 1.0, 3.0, 2.0};
    double clock_mhz[] = {1500, 1500, 1500, 1500};
    bool throttled[] = {true, true, true, true};
    gb_measurement m = {.n_samples = 4,
                        .samples_ms = samples_ms,
                        .clock_mhz = clock_mhz,
                        .throttled = throttled,
                        .launches_per_sample = 1};
    assert_int_equal(gb_measurement_summarise(&m), GB_OK);
    assert_int_equal(m.n_throttled, 4);
    assert_int_equal(m.stats.n, 4);
    assert_near(m.stats.median, 2.5);
}

/* ---- the race ------------------------------------------------------------- */

static int next_in_turn(int prev, const int *seen, const int *total, int n)
{
    for (int k = 1; k <= n; k++) {
        int s = (prev + k) % n;
        if (seen[s] < total[s]) return s;
    }
    return -1;
}

/* Once every sampler has warmed up, the calls come in turns, each sampler's in
 * order (A A A B B B C C C A ...), skipping those that have stopped: a turn is a
 * call set apart and at most GB_RACE_TURN samples. Returns the turns checked. */
static int assert_sampling_alternates(const gb_measurement *m, int n)
{
    int total[MAX_RACE], seen[MAX_RACE] = {0}, last_warmup = -1, checked = 0, in_turn = 0;
    for (int s = 0; s < n; s++)
        total[s] = m[s].n_warmup + m[s].n_samples + m[s].n_switch;
    for (int i = 0; i < world.n; i++)
        if (++seen[world.calls[i].sampler] <= m[world.calls[i].sampler].n_warmup) last_warmup = i;
    memset(seen, 0, sizeof seen);
    for (int i = 0; i < world.n; i++) {
        int s = world.calls[i].sampler;
        if (i > last_warmup) {
            int prev = world.calls[i - 1].sampler;
            if (s == prev && ++in_turn > GB_RACE_TURN && next_in_turn(prev, seen, total, n) != s)
                fail_msg("call %d: %c's turn is longer than 1 + %d calls", i, 'A' + s,
                         GB_RACE_TURN);
            if (s != prev) {
                int want = next_in_turn(prev, seen, total, n);
                if (s != want)
                    fail_msg("call %d is %c's, expected %c's (after %c's)", i, 'A' + s, 'A' + want,
                             'A' + prev);
                in_turn = 0, checked++;
            }
        }
        seen[s]++;
    }
    return checked;
}

static void test_race_samplers_take_turns_after_the_warmup(void **state)
{
    fake f[3] = {make_fake(0, noisy, 1.0, 0.02), make_fake(1, noisy, 1.1, 0.02),
                 make_fake(2, noisy, 0.9, 0.02)};
    gb_measure_opts opts = gb_measure_defaults();
    gb_measurement m[3];
    race(f, 3, &opts, m);
    assert_true(assert_sampling_alternates(m, 3) >= 3 * opts.min_samples / GB_RACE_TURN);
    for (int i = 0; i < 3; i++) {
        assert_false(m[i].capped);
        assert_reports_its_samples_stats(&m[i]);
        gb_measurement_free(&m[i]);
    }
}

static void test_race_variants_stop_on_their_own_criterion(void **state)
{
    fake f[3] = {make_fake(0, constant, 1.0, 0.0), make_fake(1, noisy, 1.0, 0.02),
                 make_fake(2, noisy, 1.2, 0.02)};
    gb_measure_opts opts = gb_measure_defaults();
    gb_measurement m[3];
    race(f, 3, &opts, m);
    assert_int_equal(m[0].n_samples, opts.min_samples);
    assert_false(m[0].capped);
    for (int i = 1; i < 3; i++) {
        assert_true(m[i].n_samples > m[0].n_samples);
        assert_false(m[i].capped);
        assert_true(gb_stats_rel_ci(&m[i].stats) <= opts.noise);
    }
    /* B and C keep taking turns after A stopped. */
    assert_true(assert_sampling_alternates(m, 3) > 3 * opts.min_samples / GB_RACE_TURN);
    for (int i = 0; i < 3; i++)
        gb_measurement_free(&m[i]);
}

static void test_race_cap_is_shared_n_times_max_ms(void **state)
{
    fake f[3] = {make_fake(0, noisy, 1.0, 0.30), make_fake(1, noisy, 1.0, 0.30),
                 make_fake(2, noisy, 1.0, 0.30)};
    gb_measure_opts opts = gb_measure_defaults();
    opts.max_ms = 30.0;
    gb_measurement m[3];
    race(f, 3, &opts, m);
    double sampling_ms = 0.0;
    for (int i = 0; i < 3; i++) {
        assert_true(m[i].capped);
        assert_reports_its_samples_stats(&m[i]);
        sampling_ms += sampling_time(&m[i], i);
    }
    assert_true(sampling_ms >= opts.max_ms);
    if (sampling_ms > 3 * opts.max_ms + 3 * (1.3 + OVERHEAD_MS))
        fail_msg("the race sampled for %g ms, past 3 x %g", sampling_ms, opts.max_ms);
    assert_sampling_alternates(m, 3);
    for (int i = 0; i < 3; i++)
        gb_measurement_free(&m[i]);
}

/* A kernel that pays on its first launch after another's: three times as slow
 * then, its usual time when it follows itself. */
static gb_sample slow_after_another(fake *f, int i, double t_ms)
{
    bool after_another = world.n > 0 && world.calls[world.n - 1].sampler != f->id;
    return (gb_sample){.ms = after_another ? 3.0 * f->base_ms : f->base_ms,
                       .clock_mhz = STEADY_MHZ};
}

static void test_a_race_sets_the_first_launch_after_another_apart(void **state)
{
    fake f[3] = {make_fake(0, slow_after_another, 1.0, 0.0),
                 make_fake(1, slow_after_another, 1.1, 0.0),
                 make_fake(2, slow_after_another, 0.9, 0.0)};
    gb_measure_opts opts = gb_measure_defaults();
    gb_measurement m[3];
    race(f, 3, &opts, m);
    assert_sampling_alternates(m, 3);
    for (int i = 0; i < 3; i++) {
        /* ranked on the kernel's own time, as a measurement of it alone gives ... */
        assert_near(m[i].stats.median, f[i].base_ms);
        assert_near(m[i].stats.max, f[i].base_ms);
        /* ... and what a switch costs reported beside it */
        assert_true(m[i].n_switch >= opts.min_samples / GB_RACE_TURN);
        assert_near(m[i].switch_ms, 3.0 * f[i].base_ms);
        assert_reports_its_samples_stats(&m[i]);
        gb_measurement_free(&m[i]);
    }
}

/* Each sample's timer cost 0.02 ms to read; every fourth was lost once first. */
static gb_sample costly_timer(fake *f, int i, double t_ms)
{
    return (gb_sample){
        .ms = f->base_ms, .clock_mhz = STEADY_MHZ, .timer_ms = 0.02, .n_lost = i % 4 == 0};
}

static void test_the_timers_cost_and_losses_are_summed_over_every_sample(void **state)
{
    fake f = make_fake(0, costly_timer, 1.0, 0.0);
    gb_measure_opts opts = gb_measure_defaults();
    gb_measurement m = measure(&f, &opts);
    int taken = m.n_warmup + m.n_samples;
    assert_near(m.timer_ms, 0.02 * taken);
    assert_int_equal(m.n_lost, (taken + 3) / 4);
    gb_measurement_free(&m);
}

static void test_a_lone_measurement_sets_nothing_apart(void **state)
{
    fake f = make_fake(0, slow_after_another, 1.0, 0.0);
    gb_measure_opts opts = gb_measure_defaults();
    gb_measurement m = measure(&f, &opts);
    assert_int_equal(m.n_switch, 0);
    assert_near(m.switch_ms, 0.0);
    assert_near(m.stats.median, 1.0);
    gb_measurement_free(&m);
}

static void assert_race_fails_at(int fail_at)
{
    fake f[3] = {make_fake(0, noisy, 1.0, 0.02), make_fake(1, noisy, 1.0, 0.02),
                 make_fake(2, noisy, 1.0, 0.02)};
    f[1].fail_at = fail_at;
    gb_sampler samplers[3] = {sampler_of(&f[0]), sampler_of(&f[1]), sampler_of(&f[2])};
    gb_measure_opts opts = gb_measure_defaults();
    gb_measurement m[3];
    memset(m, 0, sizeof m);
    gb_err err = {0};
    assert_int_equal(gb_measure_race(samplers, 3, &opts, m, &err), GB_ECUDA);
    assert_int_equal(err.code, GB_ECUDA);
    if (!strstr(err.msg, "fake sampler 1")) fail_msg("message \"%s\" lost the sampler's", err.msg);
    assert_int_equal(f[1].n_attempts, fail_at + 1);
    for (int i = 0; i < 3; i++)
        gb_measurement_free(&m[i]);
}

static void test_a_race_sampler_error_is_returned_and_nothing_leaks(void **state)
{
    assert_race_fails_at(2); /* in the warm-up */
    reset_world(state);
    assert_race_fails_at(30); /* while sampling */
}

#define T(name) cmocka_unit_test_setup(name, reset_world)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_defaults_are_the_full_criterion),
        T(test_screening_is_looser_than_the_full_criterion),
        T(test_screening_keeps_the_rest_of_the_full_criterion),
        T(test_check_accepts_the_defaults_and_screening),
        T(test_check_refuses_a_noise_target_not_above_zero),
        T(test_check_refuses_fewer_than_one_min_sample),
        T(test_check_refuses_max_samples_below_min_samples),
        T(test_check_refuses_a_time_cap_not_above_zero),
        T(test_mode_names_round_trip),
        T(test_constant_samples_stop_at_min_samples_with_a_zero_width_interval),
        T(test_noisy_samples_stop_once_the_median_is_known_to_the_target),
        T(test_noisy_samples_stop_at_the_first_sample_that_meets_the_target),
        T(test_a_tighter_noise_target_takes_more_samples),
        T(test_very_noisy_samples_are_capped_by_time_with_their_real_interval),
        T(test_very_noisy_samples_are_capped_by_max_samples),
        T(test_the_time_cap_counts_the_samplers_overhead),
        T(test_warmup_and_sampling_times_add_up_to_the_measurement),
        T(test_a_drifting_stream_stops_at_the_cap_marked_capped),
        T(test_cold_mode_is_one_launch_per_sample),
        T(test_hot_mode_is_reported),
        T(test_a_sampler_error_in_the_warmup_is_returned),
        T(test_a_sampler_error_while_sampling_is_returned),
        T(test_freeing_null_or_an_empty_measurement_is_harmless),
        T(test_copy_is_deep_and_equal),
        T(test_summarise_recomputes_what_copy_carried),
        T(test_summarise_of_received_samples_leaves_throttled_ones_out),
        T(test_summarise_of_all_throttled_samples_uses_them_all),
        T(test_race_samplers_take_turns_after_the_warmup),
        T(test_race_variants_stop_on_their_own_criterion),
        T(test_race_cap_is_shared_n_times_max_ms),
        T(test_a_race_sampler_error_is_returned_and_nothing_leaks),
        T(test_a_race_sets_the_first_launch_after_another_apart),
        T(test_a_lone_measurement_sets_nothing_apart),
        T(test_the_timers_cost_and_losses_are_summed_over_every_sample),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
