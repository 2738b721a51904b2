/*
 * The timing method of engine/measure.h, driven by fake samplers on a simulated
 * clock: each sample moves the clock on by the sample's own time plus a fixed
 * overhead, so every test is deterministic and takes no real time. Noisy streams
 * come from a seeded xorshift generator. Every call is logged (which sampler, when,
 * how long, what it returned), so a test can tell the warm-up from the kept samples
 * and see the order in which a race sampled.
 */
#include "engine/measure.h"

#include "base/error.h"
#include "engine/stats.h"

#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define MAX_CALLS   20000 /* a run that samples more than this has run away */
#define MAX_RACE    4
#define OVERHEAD_MS 0.01
#define STEADY_MHZ  1980.0

/* ---- the fake world: one clock and the log of every sample call ---------- */

typedef struct call {
    int sampler;
    double took_ms; /* how far the clock moved: the sample's time plus the overhead */
    gb_sample sample;
} call;

static struct {
    double now_ms;
    int n;
    call calls[MAX_CALLS];
} world;

static int reset_world(void **state)
{
    world.now_ms = 0.0;
    world.n = 0;
    return 0;
}

typedef struct fake fake;
typedef gb_sample (*stream_fn)(fake *f, int i, double t_ms);

struct fake {
    int id;
    stream_fn stream; /* the i-th sample of this sampler, taken at fake time t_ms */
    double base_ms;
    double spread; /* noisy streams: ±this, relative */
    double overhead_ms;
    uint64_t rng;
    int n_calls;    /* samples returned */
    int n_attempts; /* calls, failed ones included */
    int fail_at;    /* this call fails with GB_ECUDA; -1 for never */
    int others[4];  /* what each look at the other processes answers */
    int n_looks;
    int look_at[4]; /* sample calls made (world.n) when each look came */
};

static int fake_sample(void *ctx, gb_sample *out, gb_err *err)
{
    fake *f = ctx;
    if (f->n_attempts++ == f->fail_at)
        return gb_err_set(err, GB_ECUDA, "fake sampler %d: launch %d failed", f->id, f->n_calls);
    if (world.n == MAX_CALLS) return gb_err_set(err, GB_ELIMIT, "fake sampler %d ran away", f->id);
    gb_sample s = f->stream(f, f->n_calls++, world.now_ms);
    world.calls[world.n++] =
        (call){.sampler = f->id, .took_ms = s.ms + f->overhead_ms, .sample = s};
    world.now_ms += s.ms + f->overhead_ms;
    *out = s;
    return GB_OK;
}

static double fake_now(void *ctx)
{
    return world.now_ms;
}

static fake make_fake(int id, stream_fn stream, double base_ms, double spread)
{
    return (fake){.id = id,
                  .stream = stream,
                  .base_ms = base_ms,
                  .spread = spread,
                  .overhead_ms = OVERHEAD_MS,
                  .rng = 0x9E3779B97F4A7C15ull * (uint64_t)(id + 1),
                  .fail_at = -1};
}

static int fake_others(void *ctx)
{
    fake *f = ctx;
    if (f->n_looks == 4) fail_msg("fake sampler %d: asked about other processes again", f->id);
    f->look_at[f->n_looks] = world.n;
    return f->others[f->n_looks++];
}

static gb_sampler sampler_of(fake *f)
{
    return (gb_sampler){
        .sample = fake_sample, .now_ms = fake_now, .ctx = f, .other_processes = fake_others};
}

/* ---- the streams ---------------------------------------------------------- */

static uint64_t xorshift(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* Uniform in [-1, 1). */
static double uniform(fake *f)
{
    return (double)(xorshift(&f->rng) >> 11) * 0x1p-52 - 1.0;
}

static double noisy_ms(fake *f)
{
    return f->base_ms * (1.0 + f->spread * uniform(f));
}

static gb_sample at_clock(double ms, double clock_mhz)
{
    return (gb_sample){.ms = ms, .clock_mhz = clock_mhz};
}

static gb_sample constant(fake *f, int i, double t_ms)
{
    return at_clock(f->base_ms, STEADY_MHZ);
}

static gb_sample noisy(fake *f, int i, double t_ms)
{
    return at_clock(noisy_ms(f), STEADY_MHZ);
}

/* Each sample 0.1% slower than the one before. */
static gb_sample drifting(fake *f, int i, double t_ms)
{
    return at_clock(f->base_ms * pow(1.001, i), STEADY_MHZ);
}

/* The first three samples five times as slow. */
static gb_sample cold_start(fake *f, int i, double t_ms)
{
    return at_clock(i < 3 ? 5.0 * f->base_ms : f->base_ms, STEADY_MHZ);
}

/* 1000 MHz rising to 1980 over the first 40 ms, then flat; slower while lower. */
static gb_sample ramping_clock(fake *f, int i, double t_ms)
{
    double mhz = 1000.0 + (STEADY_MHZ - 1000.0) * fmin(t_ms, 40.0) / 40.0;
    return at_clock(f->base_ms * STEADY_MHZ / mhz, mhz);
}

static gb_sample alternating_clock(fake *f, int i, double t_ms)
{
    return at_clock(f->base_ms, i % 2 ? 1200.0 : 1800.0);
}

static gb_sample unknown_clock(fake *f, int i, double t_ms)
{
    return at_clock(f->base_ms, 0.0);
}

/* Clocks within ±0.5% of 1980: steady, never throttled, but not all equal. */
static gb_sample wobbling_clock(fake *f, int i, double t_ms)
{
    static const double mhz[] = {1975, 1985, 1990, 1970, 1980, 1982, 1978};
    return at_clock(noisy_ms(f), mhz[i % 7]);
}

/* From 30 to 40 ms the device reports throttling and samples take three times as long. */
static gb_sample flagged_block(fake *f, int i, double t_ms)
{
    bool slow = t_ms >= 30.0 && t_ms < 40.0;
    gb_sample s = at_clock(slow ? 3.0 * f->base_ms : noisy_ms(f), STEADY_MHZ);
    s.throttled = slow;
    return s;
}

/* From 30 to 40 ms the clock is 9% below the steady one (twice as slow); from 40 to
 * 50 ms 4% below it, which is within throttle_drop. Nothing is flagged. */
static gb_sample clock_drops(fake *f, int i, double t_ms)
{
    if (t_ms >= 30.0 && t_ms < 40.0) return at_clock(2.0 * f->base_ms, 1800.0);
    return at_clock(noisy_ms(f), t_ms >= 40.0 && t_ms < 50.0 ? 1900.0 : STEADY_MHZ);
}

static gb_sample always_flagged(fake *f, int i, double t_ms)
{
    gb_sample s = noisy(f, i, t_ms);
    s.throttled = true;
    return s;
}

/* ---- reading the log ------------------------------------------------------ */

/* Fake time taken by calls [first, end) of one sampler (its own count). */
static double time_of_calls(int id, int first, int end)
{
    double sum_ms = 0.0;
    for (int i = 0, k = 0; i < world.n; i++) {
        if (world.calls[i].sampler != id) continue;
        if (k >= first && k < end) sum_ms += world.calls[i].took_ms;
        k++;
    }
    return sum_ms;
}

static double sampling_time(const gb_measurement *m, int id)
{
    return time_of_calls(id, m->n_warmup, INT_MAX);
}

/* Every call is either warm-up (the first n_warmup) or a kept sample, in order,
 * and what the sampler flagged is tagged. */
static void assert_accounts_for_every_call(const gb_measurement *m, int id)
{
    int k = 0;
    for (int i = 0; i < world.n; i++) {
        const call *c = &world.calls[i];
        if (c->sampler != id) continue;
        int j = k++ - m->n_warmup;
        if (j < 0 || j >= m->n_samples) continue;
        if (m->samples_ms[j] != c->sample.ms || m->clock_mhz[j] != c->sample.clock_mhz)
            fail_msg("sampler %d: sample %d is %g ms at %g MHz, the sampler gave %g at %g", id, j,
                     m->samples_ms[j], m->clock_mhz[j], c->sample.ms, c->sample.clock_mhz);
        if (c->sample.throttled && !m->throttled[j])
            fail_msg("sampler %d: sample %d was flagged throttled but is not tagged", id, j);
    }
    if (k != m->n_warmup + m->n_samples)
        fail_msg("sampler %d was called %d times: %d warm-up + %d samples", id, k, m->n_warmup,
                 m->n_samples);
}

/* ---- comparing ------------------------------------------------------------ */

static void near_at(double got, double want, const char *what, const char *file, int line)
{
    if (fabs(got - want) <= 1e-9 * (1.0 + fabs(want))) return;
    print_error("%s is %.17g, expected %.17g\n", what, got, want);
    _fail(file, line);
}
#define assert_near(got, want) near_at((got), (want), #got, __FILE__, __LINE__)

static void assert_stats_equal(const gb_stats *got, const gb_stats *want)
{
    assert_int_equal(got->n, want->n);
    assert_near(got->min, want->min);
    assert_near(got->max, want->max);
    assert_near(got->mean, want->mean);
    assert_near(got->stddev, want->stddev);
    assert_near(got->median, want->median);
    assert_near(got->q1, want->q1);
    assert_near(got->q3, want->q3);
    assert_near(got->ci_lo, want->ci_lo);
    assert_near(got->ci_hi, want->ci_hi);
}

/* What the contract says the stats are: of the samples not throttled, or of all. */
static gb_stats expected_stats(const gb_measurement *m)
{
    double *kept = malloc((size_t)m->n_samples * sizeof *kept);
    assert_non_null(kept);
    int n = 0;
    for (int i = 0; i < m->n_samples; i++)
        if (!m->throttled[i]) kept[n++] = m->samples_ms[i];
    if (n == 0) {
        memcpy(kept, m->samples_ms, (size_t)m->n_samples * sizeof *kept);
        n = m->n_samples;
    }
    gb_stats stats;
    int rc = gb_stats_compute(kept, n, &stats);
    free(kept);
    assert_int_equal(rc, GB_OK);
    return stats;
}

static void assert_reports_its_samples_stats(const gb_measurement *m)
{
    gb_stats want = expected_stats(m);
    assert_stats_equal(&m->stats, &want);
    assert_true(m->stats.ci_lo <= m->stats.median && m->stats.median <= m->stats.ci_hi);
}

static int count_tagged(const gb_measurement *m)
{
    int n = 0;
    for (int i = 0; i < m->n_samples; i++)
        n += m->throttled[i];
    return n;
}

static void assert_measurement_equal(const gb_measurement *a, const gb_measurement *b)
{
    assert_int_equal(a->mode, b->mode);
    assert_stats_equal(&a->stats, &b->stats);
    assert_int_equal(a->n_samples, b->n_samples);
    assert_memory_equal(a->samples_ms, b->samples_ms, (size_t)a->n_samples * sizeof(double));
    assert_memory_equal(a->clock_mhz, b->clock_mhz, (size_t)a->n_samples * sizeof(double));
    assert_memory_equal(a->throttled, b->throttled, (size_t)a->n_samples * sizeof(bool));
    assert_int_equal(a->n_throttled, b->n_throttled);
    assert_int_equal(a->all_throttled, b->all_throttled);
    assert_near(a->clock_mhz_median, b->clock_mhz_median);
    assert_near(a->steady_clock_mhz, b->steady_clock_mhz);
    assert_int_equal(a->clock_steady, b->clock_steady);
    assert_int_equal(a->n_warmup, b->n_warmup);
    assert_near(a->warmup_ms, b->warmup_ms);
    assert_near(a->wall_ms, b->wall_ms);
    assert_int_equal(a->capped, b->capped);
    assert_int_equal(a->launches_per_sample, b->launches_per_sample);
    assert_int_equal(a->contended, b->contended);
    assert_int_equal(a->n_other_procs, b->n_other_procs);
}

/* ---- running -------------------------------------------------------------- */

static gb_measurement measure(fake *f, const gb_measure_opts *opts)
{
    gb_sampler sampler = sampler_of(f);
    gb_measurement m;
    memset(&m, 0, sizeof m);
    gb_err err = {0};
    int rc = gb_measure_run(&sampler, opts, &m, &err);
    if (rc) fail_msg("gb_measure_run: %s (%s)", err.msg, gb_strerror(rc));
    assert_accounts_for_every_call(&m, f->id);
    return m;
}

static void race(fake *f, int n, const gb_measure_opts *opts, gb_measurement *out)
{
    gb_sampler samplers[MAX_RACE];
    for (int i = 0; i < n; i++)
        samplers[i] = sampler_of(&f[i]);
    memset(out, 0, (size_t)n * sizeof *out);
    gb_err err = {0};
    int rc = gb_measure_race(samplers, n, opts, out, &err);
    if (rc) fail_msg("gb_measure_race: %s (%s)", err.msg, gb_strerror(rc));
    for (int i = 0; i < n; i++)
        assert_accounts_for_every_call(&out[i], f[i].id);
}

static gb_measure_opts defaults_with_noise(double noise)
{
    gb_measure_opts opts = gb_measure_defaults();
    opts.noise = noise;
    return opts;
}

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
    assert_near(o.throttle_drop, 0.05);
    assert_near(o.hot_min_ms, 0.1);
}

static void test_screening_is_looser_than_the_full_criterion(void **state)
{
    gb_measure_opts full = gb_measure_defaults();
    gb_measure_opts s = gb_measure_screening(&full);
    assert_near(s.noise, 0.02);
    assert_true(s.noise > full.noise);
    assert_int_equal(s.min_samples, 5);
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
    full.throttle_drop = 0.08;
    full.hot_min_ms = 0.25;
    gb_measure_opts s = gb_measure_screening(&full);
    assert_int_equal(s.mode, GB_MODE_HOT);
    assert_int_equal(s.max_samples, 777);
    assert_near(s.warmup_max_ms, 321.0);
    assert_near(s.clock_tolerance, 0.02);
    assert_near(s.throttle_drop, 0.08);
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

/* ---- throttling ----------------------------------------------------------- */

static gb_measure_opts opts_sampling_past_50_ms(void)
{
    gb_measure_opts opts = gb_measure_defaults();
    opts.min_samples = 40; /* from the end of the warm-up at ~20 ms to past 60 ms */
    return opts;
}

static void test_samples_the_device_flags_are_kept_tagged_and_left_out_of_the_stats(void **state)
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

static void test_samples_well_below_the_steady_clock_are_tagged_throttled(void **state)
{
    fake f = make_fake(0, clock_drops, 1.0, 0.01);
    gb_measure_opts opts = opts_sampling_past_50_ms();
    gb_measurement m = measure(&f, &opts);
    assert_near(m.steady_clock_mhz, STEADY_MHZ);
    int n_slightly_low = 0;
    for (int i = 0; i < m.n_samples; i++) {
        assert_int_equal(m.throttled[i], m.clock_mhz[i] == 1800.0);
        n_slightly_low += m.clock_mhz[i] == 1900.0;
    }
    assert_true(n_slightly_low > 0);
    assert_true(m.n_throttled >= 3);
    assert_int_equal(m.n_throttled, count_tagged(&m));
    assert_int_equal(m.stats.n, m.n_samples - m.n_throttled);
    assert_true(m.stats.max < 1.5);
    assert_reports_its_samples_stats(&m);
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

/* ---- what else is reported ------------------------------------------------ */

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

/* Once every sampler has warmed up, each call is by the next sampler in turn
 * (A B C A B C ...), skipping those that have stopped. Returns the turns checked. */
static int assert_sampling_alternates(const gb_measurement *m, int n)
{
    int total[MAX_RACE], seen[MAX_RACE] = {0}, last_warmup = -1, checked = 0;
    for (int s = 0; s < n; s++)
        total[s] = m[s].n_warmup + m[s].n_samples;
    for (int i = 0; i < world.n; i++)
        if (++seen[world.calls[i].sampler] <= m[world.calls[i].sampler].n_warmup) last_warmup = i;
    memset(seen, 0, sizeof seen);
    for (int i = 0; i < world.n; i++) {
        int s = world.calls[i].sampler;
        if (i >= last_warmup + 2) {
            int prev = world.calls[i - 1].sampler, want = next_in_turn(prev, seen, total, n);
            if (s != want)
                fail_msg("call %d is %c's, expected %c's (after %c's)", i, 'A' + s, 'A' + want,
                         'A' + prev);
            checked++;
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
    assert_true(assert_sampling_alternates(m, 3) >= 3 * opts.min_samples);
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
    assert_true(assert_sampling_alternates(m, 3) > 3 * opts.min_samples);
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
        T(test_a_drifting_stream_stops_at_the_cap_marked_capped),
        T(test_a_cold_start_is_left_in_the_warmup),
        T(test_warmup_lasts_at_least_warmup_ms_of_clock_time),
        T(test_warmup_waits_for_a_ramping_clock_to_settle),
        T(test_warmup_gives_up_on_an_unsteady_clock_at_warmup_max_ms),
        T(test_an_unknown_clock_does_not_hold_up_the_warmup),
        T(test_samples_the_device_flags_are_kept_tagged_and_left_out_of_the_stats),
        T(test_samples_well_below_the_steady_clock_are_tagged_throttled),
        T(test_when_every_sample_is_throttled_the_stats_use_them_all),
        T(test_clock_median_is_of_the_kept_samples),
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
        T(test_other_processes_are_looked_for_before_and_after_the_samples),
        T(test_another_process_before_or_after_makes_the_measurement_contended),
        T(test_an_unknown_answer_or_no_way_to_ask_is_not_contended),
        T(test_a_race_looks_once_before_and_after_and_marks_every_variant),
        T(test_a_copy_keeps_the_contention),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
