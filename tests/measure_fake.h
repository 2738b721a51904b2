/*
 * The fake world of the tests of engine/measure.h (test_measure.c,
 * test_measure_device.c): fake samplers on a simulated
 * clock: each sample moves the clock on by the sample's own time plus a fixed
 * overhead, so every test is deterministic and takes no real time. Noisy streams
 * come from a seeded xorshift generator. Every call is logged (which sampler, when,
 * how long, what it returned), so a test can tell the warm-up from the kept samples
 * and see the order in which a race sampled. The names are the ones the tests
 * were written with: only these two programs link measure_fake.c.
 */
#include "engine/measure.h"
#include "engine/stats.h"

#ifndef GB_TESTS_MEASURE_FAKE_H
#define GB_TESTS_MEASURE_FAKE_H

#include "engine/measure.h"
#include "engine/stats.h"

#include <stdbool.h>
#include <stdint.h>

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

/* The clock and the log, reset before each test (reset_world is its cmocka setup). */
typedef struct world_log {
    double now_ms;
    int n;
    call calls[MAX_CALLS];
} world_log;
extern world_log world;
int reset_world(void **state);

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

/* The sampler's calls, for a test that builds its own gb_sampler. */
int fake_sample(void *ctx, gb_sample *out, gb_err *err);
double fake_now(void *ctx);

/* A sampler with this id whose i-th sample is stream(f, i, now), the usual
 * overhead, a seeded generator, never failing and seeing no other process. */
fake make_fake(int id, stream_fn stream, double base_ms, double spread);
gb_sampler sampler_of(fake *f);

/* ---- the streams (measure_fake.c says what each does) --------------------- */

gb_sample constant(fake *f, int i, double t_ms);
gb_sample noisy(fake *f, int i, double t_ms);
gb_sample drifting(fake *f, int i, double t_ms);
gb_sample cold_start(fake *f, int i, double t_ms);
gb_sample ramping_clock(fake *f, int i, double t_ms);
gb_sample alternating_clock(fake *f, int i, double t_ms);
gb_sample unknown_clock(fake *f, int i, double t_ms);
gb_sample wobbling_clock(fake *f, int i, double t_ms);
gb_sample flagged_block(fake *f, int i, double t_ms);
gb_sample clock_drops(fake *f, int i, double t_ms);
gb_sample always_flagged(fake *f, int i, double t_ms);

/* ---- reading the log ------------------------------------------------------ */

/* Fake time taken by calls [first, end) of one sampler (its own count). */
double time_of_calls(int id, int first, int end);
/* Fake time of the kept samples of sampler id. */
double sampling_time(const gb_measurement *m, int id);

/* ---- comparing ------------------------------------------------------------ */

void near_at(double got, double want, const char *what, const char *file, int line);
#define assert_near(got, want) near_at((got), (want), #got, __FILE__, __LINE__)
void assert_stats_equal(const gb_stats *got, const gb_stats *want);
/* What the contract says the stats are: of the samples not throttled, or of all. */
gb_stats expected_stats(const gb_measurement *m);
void assert_reports_its_samples_stats(const gb_measurement *m);
int count_tagged(const gb_measurement *m);
void assert_measurement_equal(const gb_measurement *a, const gb_measurement *b);

/* ---- running -------------------------------------------------------------- */

/* gb_measure_run on f's sampler (fails the test on an error), checking that every
 * call is accounted for as warm-up or a kept sample. */
gb_measurement measure(fake *f, const gb_measure_opts *opts);
/* The same, with what the last measurement left (NULL: warm up every time). */
gb_measurement measure_warm(fake *f, const gb_measure_opts *opts, gb_warmth *warmth);
/* gb_measure_race over n fakes into out[n], checked the same way. */
void race(fake *f, int n, const gb_measure_opts *opts, gb_measurement *out);
gb_measure_opts defaults_with_noise(double noise);
/* Defaults with 40 samples at least: from the end of the warm-up to past 60 ms. */
gb_measure_opts opts_sampling_past_50_ms(void);

#endif
