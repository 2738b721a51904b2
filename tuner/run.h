/*
 * Internal to tuner/: the state of one gb_tune call, shared by tune.c (shapes,
 * the problem and the reference), explore.c (the pipeline of configurations and
 * the trials) and history.c (what the cache keeps: trials, the write-ahead
 * record, the best, what a rerun may reuse).
 */
#ifndef GB_TUNER_RUN_H
#define GB_TUNER_RUN_H

#include "base/clock.h"
#include "cache/record.h"
#include "tuner/compiler.h"
#include "tuner/tune.h"

#include <stdbool.h>

typedef struct run {
    const gb_tuner_opts *opts;
    const gb_kernel_def *k;
    const gb_tune_request *req;
    gb_compiler *compiler;
    gb_key source_fp;
    gb_record_source *sources; /* the source closure's files, for the best records */
    int n_sources;
    char space_fp[33];
    gb_device_info dev;
    const char *arch;
    gb_tune_result *result;
    gb_check_spec check;    /* the kernel's, with defaults filled in for the current shape */
    gb_measure_opts full;   /* the criterion the leaders race with (and benchmarks use) */
    gb_measure_opts screen; /* the criterion every variant is screened with */
    bool bench;             /* timing fixed configurations, not tuning */
    const gb_fields *fixed; /* benchmarking: the current shape's configuration */
    double *trial_s;        /* wall time of this shape's finished trials, for the watchdog */
    int n_trial_s;
    int cap_trial_s;
    gb_config *ok; /* this shape's configurations that ended ok ... */
    double *ok_ms; /* ... and their screening medians */
    int n_ok;
    int cap_ok;
    bool warned_cache;
    bool gpu_shared; /* this shape: a contended trial stayed contended when measured again,
                        so later ones are not measured twice */
    gb_err *err;
} run;

/* The fastest correct trial of a shape so far. */
typedef struct leader {
    bool has;
    gb_config config;
    gb_stats stats;
    bool contended; /* its measurement saw other processes on the GPU */
} leader;

void gb_run_log(const run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The pause before a contended measurement is taken again (opts->contended_pause_s);
 * GB_EINTR, with r->err set, when the user interrupts it. */
int gb_run_pause_for_contention(run *r);

/* ---- history.c ---------------------------------------------------------- */

/* The cache identity of a shape (its key fields). */
int gb_history_shape_id(const run *r, const gb_fields *shape, gb_record_id *out);

/* The configuration of the shape's cached best, whatever space it came from;
 * GB_ENOTFOUND when there is none. */
int gb_history_best_config(run *r, const gb_record_id *id, gb_fields *out);

/* A cached best chosen from the same space answers the shape without trials. */
bool gb_history_cached_best(run *r, const gb_record_id *id, gb_shape_result *res);
void gb_history_store_best(run *r, const gb_record_id *id, const gb_shape_result *res);

/* A finished trial of an earlier run that this run reuses instead of running it
 * again; an interrupted one (the write-ahead record) comes back as crashed. */
bool gb_history_resume(run *r, const gb_record_id *id, const gb_config *config,
                       gb_trial_result *out);

/* The write-ahead record, committed before a trial reaches the GPU; cubin is the
 * key of the cubin it runs. */
void gb_history_in_flight(run *r, const gb_record_id *id, const gb_config *config,
                          const gb_key *cubin);
/* The trial's outcome, replacing the write-ahead record; log is NVRTC's for a
 * compile error, else NULL; cubin is NULL when there is none. */
void gb_history_trial(run *r, const gb_record_id *id, const gb_config *config,
                      const gb_trial_result *t, int registers, const char *log,
                      const gb_key *cubin);
/* Drops the write-ahead record of a trial the user interrupted. */
void gb_history_forget(run *r, const gb_record_id *id, const gb_config *config);

/* Warns once that the cache could not be written. */
void gb_history_warn(run *r, const gb_err *e);

/* ---- explore.c ---------------------------------------------------------- */

/* Compiles and tries the shape's configurations (best may be NULL when compiling
 * only). GB_EINTR when interrupted: what finished is counted and recorded. */
int gb_explore(run *r, const gb_fields *shape, const gb_record_id *id, gb_shape_result *res,
               leader *best);

/* The watchdog's deadline for the next trial, from the shape's trials so far. */
double gb_explore_timeout_s(const run *r);

/* Runs a trial of v with opts. An ok trial whose measurement was contended is run
 * once more after a pause, and that second result stands (unless it failed); once
 * a second one stays contended too, the GPU is taken as shared for the rest of the
 * shape and later trials are not run twice. */
int gb_explore_trial(run *r, const gb_variant *v, const gb_measure_opts *opts, gb_trial_result *t);

/* ---- race.c ------------------------------------------------------------- */

/* Re-measures the shape's leaders (the ok configurations within the margin of the
 * fastest screened, at most the limit) interleaved with the full criterion, and
 * chooses the best; ties (overlapping intervals) go to the earliest configuration
 * in the canonical order. When the race cannot run, the screening's best stands
 * and res->race_failure says why. */
int gb_race_leaders(run *r, const gb_fields *shape, gb_shape_result *res, leader *best);

#endif
