/*
 * How a variant is timed: the method, apart from the GPU.
 *
 * A sampler takes one sample at a time (engine/gpu.c has the real ones: cold,
 * with L2 flushed before each launch, and hot, a CUDA graph of back-to-back
 * launches); this module decides how many samples to take and what they mean:
 *
 *   1. Warm up only when the GPU needs it. A GPU that another measurement left
 *      steady moments ago (gb_warmth: less than rewarm_after_ms ago) needs one
 *      sample, the kernel's first launch, whose clock must still be the steady
 *      one. Otherwise warm up by time, not by count: sample for at least
 *      warmup_ms, and on until the SM clock of the last five samples is steady
 *      (within clock_tolerance of their median), or warmup_max_ms has passed; of
 *      the last three, when those alone lasted warmup_ms (a long kernel). Warm-up
 *      samples are not kept. The steady clock is the median clock of those last
 *      samples.
 *   2. Sample until the 95% confidence interval of the median is within ±noise of
 *      the median (at least min_samples), or until max_ms of sampling or
 *      max_samples: a variant stopped there is marked capped and reports the
 *      interval it reached, never a pretended one.
 *   3. A sample taken while the GPU throttled (its SM clock below
 *      throttle_threshold of the GPU's peak clock) is kept and tagged, and left
 *      out of the statistics; the count is reported. If every sample is
 *      throttled the statistics use them all and say so.
 *   4. Just before the first sample and after the last, the sampler is asked how
 *      many other processes are using the GPU (NVML, where the sampler has it).
 *      Any at all make the measurement contended: its samples may include another
 *      process's work, and the tuner never keeps such a result as a best. Asking
 *      per sample would cost a millisecond each; a process that comes and goes
 *      between the two looks is not seen (the GPU lease, exec/lease.h, keeps
 *      other gpubench processes away).
 *
 * The race (gb_measure_race) measures several variants interleaved, a few samples
 * each in turn (A A A B B B ...), so that slow drifts of clock or temperature
 * affect them alike; each stops on its own criterion, within a shared cap. The
 * first sample of a turn follows another variant's launches, and a kernel can pay
 * for that (its code is no longer in the SMs' instruction caches): those samples
 * are kept apart, their median reported as switch_ms, so the figure a variant is
 * ranked by is the same one screening measures, whatever shared its race.
 *
 * Everything here is deterministic given the samples and the clock it is fed, so
 * tests drive it with fake samplers.
 */
#ifndef GB_ENGINE_MEASURE_H
#define GB_ENGINE_MEASURE_H

#include "base/error.h"
#include "engine/stats.h"

#include <stdbool.h>
#include <stdint.h>

/* Samples a race variant takes in each of its turns, after the one set apart. */
#define GB_RACE_TURN 2

typedef enum gb_measure_mode {
    GB_MODE_COLD, /* flush L2 before each sample; one launch per sample */
    GB_MODE_HOT,  /* a CUDA graph of K launches per sample; time / K */
} gb_measure_mode;

const char *gb_measure_mode_name(gb_measure_mode mode); /* "cold", "hot" */
int gb_measure_mode_parse(const char *name, gb_measure_mode *out);

/* What times a sample (engine/timing.c): CUPTI's kernel records, stamped by the
 * GPU on the kernel itself, or CUDA events around the launch. */
typedef enum gb_timer {
    GB_TIMER_EVENTS, /* events, even where CUPTI works (what a zeroed measurement says) */
    GB_TIMER_CUPTI,  /* CUPTI, or fail: a run that must not fall back */
    GB_TIMER_AUTO,   /* CUPTI where it works, else events (options only) */
} gb_timer;

const char *gb_timer_name(gb_timer timer); /* "auto", "cupti", "events" */
int gb_timer_parse(const char *name, gb_timer *out);

typedef struct gb_measure_opts {
    gb_measure_mode mode;
    double noise;              /* target: CI95 of the median within ±noise (0.005 = ±0.5%) */
    int min_samples;           /* never fewer kept samples */
    int max_samples;           /* never more samples in all */
    double max_ms;             /* wall-time cap for the sampling of one variant */
    double warmup_ms;          /* warm up at least this long */
    double warmup_max_ms;      /* stop waiting for a steady clock after this long */
    double clock_tolerance;    /* steady: the last clocks within ± this of their median */
    double throttle_threshold; /* throttled: a clock below this share of the peak (0: never) */
    double hot_min_ms;         /* hot mode: one graph replay lasts at least this */
    double rewarm_after_ms;    /* a GPU left steady longer ago than this warms up again */
    gb_timer timer;
} gb_measure_opts;

/* The most samples one measurement may hold (and a worker may send). */
#define GB_MEASURE_MAX_SAMPLES 10000000

/* The wire description (base/wire.h; gb_wire_measure_opts); the type's check is
 * gb_measure_check. */
#define GB_MEASURE_OPTS_WIRE(X)                                                                    \
    X(mode, ENUM, "mode", .enumeration = &gb_wire_enum_mode)                                       \
    X(noise, DOUBLE, "noise")                                                                      \
    X(min_samples, INT, "min_samples", GB_WIRE_RANGE(1, GB_MEASURE_MAX_SAMPLES))                   \
    X(max_samples, INT, "max_samples", GB_WIRE_RANGE(1, GB_MEASURE_MAX_SAMPLES))                   \
    X(max_ms, DOUBLE, "max_ms")                                                                    \
    X(warmup_ms, DOUBLE, "warmup_ms")                                                              \
    X(warmup_max_ms, DOUBLE, "warmup_max_ms")                                                      \
    X(clock_tolerance, DOUBLE, "clock_tolerance")                                                  \
    X(throttle_threshold, DOUBLE, "throttle_threshold", GB_WIRE_RANGE(0, 1))                       \
    X(hot_min_ms, DOUBLE, "hot_min_ms")                                                            \
    X(rewarm_after_ms, DOUBLE, "rewarm_after_ms", GB_WIRE_RANGE(0, INFINITY))                      \
    X(timer, ENUM, "timer", .enumeration = &gb_wire_enum_timer)

/* The full criterion: cold, ±0.5%, 10..100000 samples, 1 s cap, 20..1000 ms warm-up
 * (none within 1 s of a steady GPU), clock steady within ±1%, throttled below 75%
 * of the peak clock, hot replays of at least 0.1 ms, CUPTI where it works. */
gb_measure_opts gb_measure_defaults(void);

/* The screening criterion used for every variant of a tuning run before the
 * leaders race: never tighter than full, and at most ±2%, 5 samples at least, a
 * 100 ms cap and a 10 ms warm-up (from the defaults: exactly those). A fixed count
 * of samples (min_samples == max_samples) is kept as it is. */
gb_measure_opts gb_measure_screening(const gb_measure_opts *full);

/* GB_EINVAL with a message naming the field when opts cannot work. */
int gb_measure_check(const gb_measure_opts *opts, gb_err *err);

typedef struct gb_sample {
    double ms;        /* time of one launch (a hot sample is divided by its launches) */
    double clock_mhz; /* SM clock during or just after the sample; 0 when unknown */
    double timer_ms;  /* host time spent reading the sample's timer */
    int n_lost;       /* attempts before this one whose timer records were lost */
} gb_sample;

/* What one measurement leaves for the next on the same GPU, so that the next
 * need not warm up again: the steady clock it found and when it ended (on the
 * sampler's now_ms). The sampler's owner keeps it; zeroed, it says nothing. */
typedef struct gb_warmth {
    double steady_mhz; /* 0: none was found */
    double ended_ms;
} gb_warmth;

typedef struct gb_sampler {
    int (*sample)(void *ctx, gb_sample *out, gb_err *err);
    double (*now_ms)(void *ctx); /* a monotonic wall clock */
    void *ctx;
    /* Optional: how many other processes use the GPU now; NULL, or an answer
     * below 0, when that cannot be known (no NVML): then nothing is contended. */
    int (*other_processes)(void *ctx);
    double peak_clock_mhz; /* the GPU's highest SM clock; 0 when unknown: nothing throttles */
    /* Optional: why the GPU is slow right now (NVML's GB_NVML_REASON_* bits; 0 when
     * unknown), asked right after a sample that was throttled, and only then. */
    unsigned long long (*throttle_reasons)(void *ctx);
    gb_timer timer;    /* which timer the samples come from (CUPTI or events) */
    gb_warmth *warmth; /* optional: NULL warms up every time */
} gb_sampler;

typedef struct gb_measurement {
    gb_measure_mode mode;
    gb_stats stats; /* of the samples not throttled (of all, if all were) */
    int n_samples;  /* every sample, in the order taken (warm-up excluded) */
    double *samples_ms;
    double *clock_mhz;
    bool *throttled;
    int n_throttled;
    bool all_throttled;
    double clock_mhz_median; /* of the samples the statistics use; 0 when unknown */
    double steady_clock_mhz; /* at the end of the warm-up; 0 when unknown */
    bool clock_steady;       /* the warm-up saw a steady clock */
    int n_warmup;
    double warmup_ms;
    double wall_ms;           /* sampling time, warm-up excluded */
    bool capped;              /* stopped by max_ms or max_samples above the noise target */
    int launches_per_sample;  /* 1 cold; K hot */
    bool contended;           /* other processes used the GPU before or after the samples */
    int n_other_procs;        /* the most of them seen (0: none, or unknown without NVML) */
    gb_timer timer;           /* what timed the samples: GB_TIMER_CUPTI or GB_TIMER_EVENTS */
    double timer_ms;          /* host time spent reading the timer, warm-up included */
    int n_lost;               /* samples taken again because their timer records were lost */
    int64_t throttle_reasons; /* NVML's reasons seen on the throttled samples, OR'ed */
    double switch_ms;         /* race: median of the samples that followed another variant's
                                 launches, kept apart from the statistics; 0: none */
    int n_switch;
} gb_measurement;

/* A per-sample array of gb_measurement: n_samples long, values >= 0. */
#define GB_WIRE_SAMPLES(min)                                                                       \
    .arity = GB_WIRE_OWNED, .count = offsetof(gb_measurement, n_samples), .min_items = (min),      \
    .max_items = GB_MEASURE_MAX_SAMPLES, GB_WIRE_RANGE(0, INFINITY)

/* The wire description (base/wire.h; gb_wire_measurement). The statistics, the
 * throttled count and the median clock are not sent: the reader computes them from
 * the samples (gb_measurement_summarise), so they always agree with them. Lua sees
 * the fields a results table's `best` has: samples, clock_mhz (the median),
 * n_throttled, capped, mode, launches_per_sample, contended, n_other_procs,
 * timer, switch_ms. */
#define GB_MEASUREMENT_WIRE(X)                                                                     \
    X(mode, ENUM, "mode", .enumeration = &gb_wire_enum_mode)                                       \
    X(stats, STRUCT, "stats", .type = &gb_wire_stats, .flags = GB_WIRE_DERIVED | GB_WIRE_NO_LUA)   \
    X(samples_ms, DOUBLE, "samples_ms", .lua = "samples", GB_WIRE_SAMPLES(1),                      \
      .flags = GB_WIRE_LUA_OMIT_ZERO)                                                              \
    X(clock_mhz, DOUBLE, "clocks_mhz", GB_WIRE_SAMPLES(0), .flags = GB_WIRE_NO_LUA)                \
    X(throttled, BOOL, "throttled", .arity = GB_WIRE_OWNED,                                        \
      .count = offsetof(gb_measurement, n_samples), .max_items = GB_MEASURE_MAX_SAMPLES,           \
      .flags = GB_WIRE_NO_LUA)                                                                     \
    X(n_throttled, INT, "n_throttled", .flags = GB_WIRE_DERIVED)                                   \
    X(all_throttled, BOOL, "all_throttled", .flags = GB_WIRE_DERIVED | GB_WIRE_NO_LUA)             \
    X(clock_mhz_median, DOUBLE, "clock_mhz_median", .lua = "clock_mhz",                            \
      .flags = GB_WIRE_DERIVED | GB_WIRE_LUA_OMIT_ZERO)                                            \
    X(steady_clock_mhz, DOUBLE, "steady_clock_mhz", GB_WIRE_RANGE(0, INFINITY),                    \
      .flags = GB_WIRE_NO_LUA)                                                                     \
    X(clock_steady, BOOL, "clock_steady", .flags = GB_WIRE_NO_LUA)                                 \
    X(n_warmup, INT, "n_warmup", GB_WIRE_RANGE(0, INT_MAX), .flags = GB_WIRE_NO_LUA)               \
    X(warmup_ms, DOUBLE, "warmup_ms", GB_WIRE_RANGE(0, INFINITY), .flags = GB_WIRE_NO_LUA)         \
    X(wall_ms, DOUBLE, "wall_ms", GB_WIRE_RANGE(0, INFINITY), .flags = GB_WIRE_NO_LUA)             \
    X(capped, BOOL, "capped")                                                                      \
    X(launches_per_sample, INT, "launches_per_sample", GB_WIRE_RANGE(0, INT_MAX),                  \
      .flags = GB_WIRE_LUA_OMIT_ZERO)                                                              \
    X(contended, BOOL, "contended", .flags = GB_WIRE_OPTIONAL)                                     \
    X(n_other_procs, INT, "n_other_procs", GB_WIRE_RANGE(0, INT_MAX), .flags = GB_WIRE_OPTIONAL)   \
    X(timer, ENUM, "timer", .enumeration = &gb_wire_enum_timer, .flags = GB_WIRE_OPTIONAL,         \
      .dflt = GB_TIMER_EVENTS)                                                                     \
    X(timer_ms, DOUBLE, "timer_ms", GB_WIRE_RANGE(0, INFINITY),                                    \
      .flags = GB_WIRE_OPTIONAL | GB_WIRE_NO_LUA)                                                  \
    X(n_lost, INT, "n_lost", GB_WIRE_RANGE(0, INT_MAX),                                            \
      .flags = GB_WIRE_OPTIONAL | GB_WIRE_NO_LUA)                                                  \
    X(throttle_reasons, INT64, "throttle_reasons", GB_WIRE_RANGE(0, INT64_MAX),                    \
      .flags = GB_WIRE_OPTIONAL | GB_WIRE_NO_LUA)                                                  \
    X(switch_ms, DOUBLE, "switch_ms", GB_WIRE_RANGE(0, INFINITY),                                  \
      .flags = GB_WIRE_OPTIONAL | GB_WIRE_LUA_OMIT_ZERO)                                           \
    X(n_switch, INT, "n_switch", GB_WIRE_RANGE(0, INT_MAX),                                        \
      .flags = GB_WIRE_OPTIONAL | GB_WIRE_NO_LUA)

void gb_measurement_free(gb_measurement *m);

/* "cupti" or "events": what timed m (events for one that never said: it was
 * taken before CUPTI timing). */
const char *gb_measurement_timer(const gb_measurement *m);

/* Copies src into out (the arrays too). */
int gb_measurement_copy(const gb_measurement *src, gb_measurement *out);

/* Recomputes stats, n_throttled and clock_mhz_median from the samples (after
 * they were received from another process, say). */
int gb_measurement_summarise(gb_measurement *m);

/* Measures one variant. */
int gb_measure_run(const gb_sampler *sampler, const gb_measure_opts *opts, gb_measurement *out,
                   gb_err *err);

/* Measures n variants interleaved, GB_RACE_TURN samples each in turn after one
 * set apart (the turn's first, when the sample before it was another variant's);
 * out has n entries (cleared here first). The cap is opts->max_ms for each
 * variant, shared: the race ends after n * max_ms of sampling at the latest. */
int gb_measure_race(const gb_sampler *samplers, int n, const gb_measure_opts *opts,
                    gb_measurement *out, gb_err *err);

#endif
