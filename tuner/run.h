/*
 * Internal to tuner/: the state of one gb_tune call and the parts that work on
 * it, from the top down:
 *   tune.c        the call: the run's identity, each shape to its driver;
 *   the drivers   search_run.c tunes through a strategy, bench_run.c times fixed
 *                 configurations, compile_run.c only compiles;
 *   what they share: plan.c (the strategy and budget), shape.c (the claim, the
 *                 problem and the reference; the best kept), trial.c (a
 *                 configuration's way from compile to a counted trial), race.c
 *                 (the leaders, and the reference timed alone);
 *   run.c         the log, the GPUs, the pause for contention.
 * Each calls only those below it. The drivers see the run through
 * tuner/pipeline.h alone (start, ready, finish, and what they may read); this
 * header is for tune.c and what the drivers share. What the cache keeps and what
 * a rerun may reuse is behind a handle of its own (tuner/history.h), which the
 * run holds.
 */
#ifndef GB_TUNER_RUN_H
#define GB_TUNER_RUN_H

#include "base/clock.h"
#include "engine/arch.h"
#include "tuner/pipeline.h"

#include <stdbool.h>
#include <string.h>

/* The state of the shape being tuned: set up when its turn comes (tune.c,
 * gb_trial_shape_begin), and good for that shape only. The buffers are kept from
 * shape to shape and freed with the run. */
typedef struct shape_state {
    gb_check_spec check; /* the kernel's, with defaults filled in for the shape */
    gb_gemm ref_gemm;    /* a library reference's GEMM on the shape */
    double *trial_s;     /* wall time of the finished trials, for the watchdog */
    int n_trial_s;
    int cap_trial_s;
    gb_config *ok; /* the configurations that ended ok ... */
    double *ok_ms; /* ... and their screening medians */
    int n_ok;
    int cap_ok;
    gb_progress progress;              /* the counts, for opts->progress */
    gb_search search;                  /* the space, its constraints, what was seen */
    const gb_strategy_kind *kind;      /* the strategy: a built-in one ... */
    const gb_strategy_factory *custom; /* ... or the script's */
    int64_t planned;                   /* configurations it will try; -1: unknown */
    double start_ms;
    bool progress_started; /* START was sent, END not yet */
    bool gpu_shared;       /* a contended trial stayed contended when measured again, so
                              later ones are not measured twice */
} shape_state;

/* The state of one gb_tune call: what holds for every shape (the options, the
 * kernel, the compiler, the device, the criteria, the trial history), and the
 * current shape's. */
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
    gb_measure_opts full;   /* the criterion the leaders race with (and benchmarks use) */
    gb_measure_opts screen; /* the criterion every variant is screened with */
    bool bench;             /* timing fixed configurations, not tuning */
    gb_history history;     /* what the cache keeps and what may be reused (tuner/history.h) */
    gb_arch_limits limits;  /* the target's, for what can be checked without running */
    gb_err *err;
    shape_state current; /* the shape being tuned */
} run;

/* ---- plan.c ------------------------------------------------------------- */

/* The strategy and budget a request gets for a shape (the default rule when it
 * names none); fills res's strategy, seed and budget. */
int gb_search_plan(run *r, gb_shape_result *res);

/* ---- shape.c ------------------------------------------------------------ */

/* The timer this run's samples come from ("cupti" or "events"): events when the
 * run asks for them or the device has no CUPTI. A timing by another timer is
 * neither resumed nor answered from the cache. */
static inline const char *gb_run_timer(const run *r)
{
    if (r->full.timer == GB_TIMER_EVENTS || strcmp(r->dev.timer, "cupti") != 0) return "events";
    return "cupti";
}
/* ---- trial.c ------------------------------------------------------------ */

/* Runs a trial of v with opts. An ok trial whose measurement was contended is run
 * once more after a pause, and that second result stands (unless it failed); once
 * a second one stays contended too, the GPU is taken as shared for the rest of the
 * shape and later trials are not run twice. */
int gb_trial_measure(run *r, const gb_variant *v, const gb_measure_opts *opts, gb_trial_result *t);

/* Starts a shape's bookkeeping (the watchdog's history, the ok list, progress). */
void gb_trial_shape_begin(run *r, const gb_shape_result *res);

/* ---- race.c ------------------------------------------------------------- */

/* Re-measures the shape's leaders (the ok configurations within the margin of the
 * fastest screened, at most the limit) interleaved with the full criterion, and
 * chooses the best; ties (overlapping intervals) go to the earliest configuration
 * in the canonical order. When the run wants a baseline, the reference races too
 * (never crowned) and its measurement becomes res->baseline. When the race cannot
 * run, the screening's best stands, no baseline is kept, and res->race_failure
 * says why. */
int gb_race_leaders(run *r, const gb_fields *shape, gb_shape_result *res, leader *best);

/* ---- run.c -------------------------------------------------------------- */

void gb_run_log(const run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The pause before a contended measurement is taken again (opts->contended_pause_s);
 * GB_EINTR, with r->err set, when the user interrupts it. */
int gb_run_pause_for_contention(run *r);

#endif
