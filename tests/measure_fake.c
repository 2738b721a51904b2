/* The fake world of the tests of engine/measure.h: see measure_fake.h. */
#include "measure_fake.h"

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

/* ---- the fake world: one clock and the log of every sample call ---------- */

world_log world;

int reset_world(void **state)
{
    world.now_ms = 0.0;
    world.n = 0;
    return 0;
}

int fake_sample(void *ctx, gb_sample *out, gb_err *err)
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

double fake_now(void *ctx)
{
    return world.now_ms;
}

fake make_fake(int id, stream_fn stream, double base_ms, double spread)
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

gb_sampler sampler_of(fake *f)
{
    return (gb_sampler){.sample = fake_sample,
                        .now_ms = fake_now,
                        .ctx = f,
                        .other_processes = fake_others,
                        .peak_clock_mhz = STEADY_MHZ};
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

gb_sample constant(fake *f, int i, double t_ms)
{
    return at_clock(f->base_ms, STEADY_MHZ);
}

gb_sample noisy(fake *f, int i, double t_ms)
{
    return at_clock(noisy_ms(f), STEADY_MHZ);
}

/* Each sample 0.1% slower than the one before. */
gb_sample drifting(fake *f, int i, double t_ms)
{
    return at_clock(f->base_ms * pow(1.001, i), STEADY_MHZ);
}

/* The first three samples five times as slow. */
gb_sample cold_start(fake *f, int i, double t_ms)
{
    return at_clock(i < 3 ? 5.0 * f->base_ms : f->base_ms, STEADY_MHZ);
}

/* 1000 MHz rising to 1980 over the first 40 ms, then flat; slower while lower. */
gb_sample ramping_clock(fake *f, int i, double t_ms)
{
    double mhz = 1000.0 + (STEADY_MHZ - 1000.0) * fmin(t_ms, 40.0) / 40.0;
    return at_clock(f->base_ms * STEADY_MHZ / mhz, mhz);
}

gb_sample alternating_clock(fake *f, int i, double t_ms)
{
    return at_clock(f->base_ms, i % 2 ? 1200.0 : 1800.0);
}

gb_sample unknown_clock(fake *f, int i, double t_ms)
{
    return at_clock(f->base_ms, 0.0);
}

/* Clocks within ±0.5% of 1980: steady, never throttled, but not all equal. */
gb_sample wobbling_clock(fake *f, int i, double t_ms)
{
    static const double mhz[] = {1975, 1985, 1990, 1970, 1980, 1982, 1978};
    return at_clock(noisy_ms(f), mhz[i % 7]);
}

/* From 30 to 40 ms the clock is 1200 MHz, under 75% of the 1980 MHz peak, and
 * samples take three times as long. */
gb_sample flagged_block(fake *f, int i, double t_ms)
{
    bool slow = t_ms >= 30.0 && t_ms < 40.0;
    return at_clock(slow ? 3.0 * f->base_ms : noisy_ms(f), slow ? 1200.0 : STEADY_MHZ);
}

/* From 30 to 40 ms the clock is 1400 MHz, under 75% of the peak (twice as slow);
 * from 40 to 50 ms 1600 MHz, 19% under the steady clock but above the threshold. */
gb_sample clock_drops(fake *f, int i, double t_ms)
{
    if (t_ms >= 30.0 && t_ms < 40.0) return at_clock(2.0 * f->base_ms, 1400.0);
    return at_clock(noisy_ms(f), t_ms >= 40.0 && t_ms < 50.0 ? 1600.0 : STEADY_MHZ);
}

/* Every sample at 1000 MHz, half the peak. */
gb_sample always_flagged(fake *f, int i, double t_ms)
{
    return at_clock(noisy_ms(f), 1000.0);
}

/* ---- reading the log ------------------------------------------------------ */

/* Fake time taken by calls [first, end) of one sampler (its own count). */
double time_of_calls(int id, int first, int end)
{
    double sum_ms = 0.0;
    for (int i = 0, k = 0; i < world.n; i++) {
        if (world.calls[i].sampler != id) continue;
        if (k >= first && k < end) sum_ms += world.calls[i].took_ms;
        k++;
    }
    return sum_ms;
}

double sampling_time(const gb_measurement *m, int id)
{
    return time_of_calls(id, m->n_warmup, INT_MAX);
}

/* A call after the sampler's warm-up that follows another sampler's call: in a
 * race, the first of a turn, set apart from the samples. */
static bool set_apart(int i, int k, const gb_measurement *m)
{
    return k >= m->n_warmup && i > 0 && world.calls[i - 1].sampler != world.calls[i].sampler;
}

/* Every call is either warm-up (the first n_warmup), set apart (a race's first
 * of a turn), or a kept sample, in order, tagged throttled when its clock is
 * under the threshold of the fake GPU's peak. */
static void assert_accounts_for_every_call(const gb_measurement *m, int id)
{
    int k = 0, n_apart = 0;
    for (int i = 0; i < world.n; i++) {
        const call *c = &world.calls[i];
        if (c->sampler != id) continue;
        if (set_apart(i, k, m)) {
            k++, n_apart++;
            continue;
        }
        int j = k++ - m->n_warmup - n_apart;
        if (j < 0 || j >= m->n_samples) continue;
        if (m->samples_ms[j] != c->sample.ms || m->clock_mhz[j] != c->sample.clock_mhz)
            fail_msg("sampler %d: sample %d is %g ms at %g MHz, the sampler gave %g at %g", id, j,
                     m->samples_ms[j], m->clock_mhz[j], c->sample.ms, c->sample.clock_mhz);
        bool under = c->sample.clock_mhz > 0 && c->sample.clock_mhz < 0.75 * STEADY_MHZ;
        if (m->throttled[j] && !under) /* (a threshold of 0 tags nothing) */
            fail_msg("sampler %d: sample %d at %g MHz is tagged throttled", id, j,
                     c->sample.clock_mhz);
    }
    if (n_apart != m->n_switch)
        fail_msg("sampler %d: %d calls were set apart, the measurement counts %d", id, n_apart,
                 m->n_switch);
    if (k != m->n_warmup + m->n_samples + m->n_switch)
        fail_msg("sampler %d was called %d times: %d warm-up + %d samples + %d set apart", id, k,
                 m->n_warmup, m->n_samples, m->n_switch);
}

/* ---- comparing ------------------------------------------------------------ */

void near_at(double got, double want, const char *what, const char *file, int line)
{
    if (fabs(got - want) <= 1e-9 * (1.0 + fabs(want))) return;
    print_error("%s is %.17g, expected %.17g\n", what, got, want);
    _fail(file, line);
}

void assert_stats_equal(const gb_stats *got, const gb_stats *want)
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
gb_stats expected_stats(const gb_measurement *m)
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

void assert_reports_its_samples_stats(const gb_measurement *m)
{
    gb_stats want = expected_stats(m);
    assert_stats_equal(&m->stats, &want);
    assert_true(m->stats.ci_lo <= m->stats.median && m->stats.median <= m->stats.ci_hi);
}

int count_tagged(const gb_measurement *m)
{
    int n = 0;
    for (int i = 0; i < m->n_samples; i++)
        n += m->throttled[i];
    return n;
}

void assert_measurement_equal(const gb_measurement *a, const gb_measurement *b)
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

gb_measurement measure(fake *f, const gb_measure_opts *opts)
{
    return measure_warm(f, opts, NULL);
}

gb_measurement measure_warm(fake *f, const gb_measure_opts *opts, gb_warmth *warmth)
{
    gb_sampler sampler = sampler_of(f);
    sampler.warmth = warmth;
    gb_measurement m;
    memset(&m, 0, sizeof m);
    gb_err err = {0};
    int rc = gb_measure_run(&sampler, opts, &m, &err);
    if (rc) fail_msg("gb_measure_run: %s (%s)", err.msg, gb_strerror(rc));
    assert_accounts_for_every_call(&m, f->id);
    return m;
}

void race(fake *f, int n, const gb_measure_opts *opts, gb_measurement *out)
{
    gb_sampler samplers[MAX_RACE] = {0}; /* all n are set: this quiets gcc -O2 */
    for (int i = 0; i < n; i++)
        samplers[i] = sampler_of(&f[i]);
    memset(out, 0, (size_t)n * sizeof *out);
    gb_err err = {0};
    int rc = gb_measure_race(samplers, n, opts, out, &err);
    if (rc) fail_msg("gb_measure_race: %s (%s)", err.msg, gb_strerror(rc));
    for (int i = 0; i < n; i++)
        assert_accounts_for_every_call(&out[i], f[i].id);
}

gb_measure_opts defaults_with_noise(double noise)
{
    gb_measure_opts opts = gb_measure_defaults();
    opts.noise = noise;
    return opts;
}

gb_measure_opts opts_sampling_past_50_ms(void)
{
    gb_measure_opts opts = gb_measure_defaults();
    opts.min_samples = 40; /* from the end of the warm-up at ~20 ms to past 60 ms */
    return opts;
}
