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
 * Each calls only those below it. What the cache keeps and what a rerun may reuse
 * is behind a handle of its own (tuner/history.h), which the run holds.
 */
#ifndef GB_TUNER_RUN_H
#define GB_TUNER_RUN_H

#include "base/clock.h"
#include "engine/arch.h"
#include "cache/record.h"
#include "tuner/compiler.h"
#include "tuner/history.h"
#include "tuner/strategy.h"
#include "tuner/kernel.h"
#include "tuner/opts.h"
#include "tuner/result.h"

#include <stdbool.h>
#include <string.h>

/* A configuration on its way through the pipeline. */
typedef struct gb_pending {
    gb_trial_ident ident;
    gb_compile_job *job; /* NULL for a trial resumed from the cache */
    gb_launch launch;
    bool resumed;
    gb_trial_result earlier; /* the resumed trial */
} gb_pending;

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

/* The fastest correct trial of a shape so far. */
typedef struct leader {
    bool has;
    gb_config config;
    gb_stats stats;
    bool contended; /* its measurement saw other processes on the GPU */
} leader;

/* ---- the drivers (search_run.c, bench_run.c, compile_run.c) ---------------- */

/* Tunes the shape through its strategy (search_run.c). */
int gb_search_shape(run *r, const gb_fields *shape, const gb_record_id *id, gb_shape_result *res,
                    leader *best);
/* Times the configuration asked for (or the cached best) with the full criterion
 * (bench_run.c). */
int gb_bench_shape(run *r, const gb_fields *shape, const gb_record_id *id, gb_shape_result *res);

/* Compiles every accepted configuration, and the reference (compile_run.c). */
int gb_compile_shape(run *r, const gb_fields *shape, const gb_record_id *id, gb_shape_result *res);

/* ---- plan.c ------------------------------------------------------------- */

/* The strategy and budget a request gets for a shape (the default rule when it
 * names none); fills res's strategy, seed and budget. */
int gb_search_plan(run *r, gb_shape_result *res);

/* The valid configurations of this shard (of the space, unsharded), counted up to
 * limit (more: *out is limit + 1). */
int gb_search_count_valid(run *r, uint64_t limit, uint64_t *out);

/* A shard's part of a budget of evals: the run's budget is shared out among its
 * shards (rounded up); 0 (none) stays 0. */
int64_t gb_run_shard_share(const run *r, int64_t evals);

/* ---- shape.c ------------------------------------------------------------ */

/* Claims the GPU, sets up the problem on it and runs the reference; a
 * failure of the shape (not the run) is left in res->failure. *out_cached says a
 * process that had the GPU meanwhile tuned the shape (res then holds its best). */
int gb_run_prepare(run *r, const gb_fields *shape, const gb_record_id *id, gb_shape_result *res,
                   bool *out_cached);
/* The reference, compiled (or found in the cubin cache) for this shape. A compile
 * error is in e; other failures are the run's, in r->err. The job owns the cubin
 * that v points into: free it after use. A library reference (gb_kernel_is_library)
 * is not compiled: *job is NULL and v is its GEMM on the shape (r->current.ref_gemm, which
 * gb_run_shape_args set). */
int gb_run_reference_variant(run *r, const gb_fields *shape, gb_compile_job **job, gb_variant *v,
                             gb_err *e);
/* Whether the run times the reference too (baseline = "reference"). */
static inline bool gb_run_wants_baseline(const run *r)
{
    return r->req->baseline && r->k->reference;
}
/* The timer this run's samples come from ("cupti" or "events"): events when the
 * run asks for them or the device has no CUPTI. A timing by another timer is
 * neither resumed nor answered from the cache. */
static inline const char *gb_run_timer(const run *r)
{
    if (r->full.timer == GB_TIMER_EVENTS || strcmp(r->dev.timer, "cupti") != 0) return "events";
    return "cupti";
}
/* A space the constraints left empty: the shape fails ("no valid configuration:
 * the constraints rejected all N of the space"), in a timed run as in a
 * compile-only one, when the search saw the whole space and tried nothing. A
 * shard that owns none of the space is not such a shape. */
int gb_run_none_valid(run *r, gb_shape_result *res, int64_t tried);

/* Keeps the best of what finished in res, and stores it unless the run was
 * interrupted, only benchmarked, or contended. Returns rc. */
int gb_run_settle(run *r, const gb_record_id *id, const leader *best, gb_shape_result *res, int rc);
/* The script's view of the shape: its arguments, check and work. */
int gb_run_shape_args(run *r, const gb_fields *shape, gb_shape_result *res, gb_arg *args,
                      int *n_args);

/* ---- trial.c ------------------------------------------------------------ */

/* The most configurations a driver keeps between the strategy and the GPU. */
#define GB_WINDOW_MAX 64

/* How many configurations run ahead of the GPU: 2 x --jobs (1 job without
 * threads), at most GB_WINDOW_MAX. */
int gb_run_window(const run *r);

/* Makes the configuration's identity and launch, then either finds its trial in
 * the cache (resume) or submits its compile. */
int gb_pending_start(run *r, const gb_fields *shape, const gb_record_id *id,
                     const gb_config *config, bool resume, gb_pending *p);
/* Waits for the compile (counting the GPU's wait and NVRTC's time). Returns the
 * compile's status: GB_OK with *out, or its error in cerr. */
int gb_pending_compile(run *r, gb_pending *p, const gb_compile_out **out, gb_err *cerr);
/* Frees what the pending configuration holds, letting a queued compile end first. */
void gb_pending_free(run *r, gb_pending *p);

/* Compiles (or resumes) and runs the trial of p with opts, records it unless
 * benchmarking, and counts it in res and best. *out_t, when not NULL, gets the
 * outcome (the caller frees it). GB_EINTR when interrupted. */
int gb_pending_finish(run *r, const gb_record_id *id, gb_pending *p, const gb_measure_opts *opts,
                      gb_shape_result *res, leader *best, gb_trial_result *out_t);

/* gb_pending_finish in two halves, for trials that run elsewhere meanwhile (on a
 * pool of GPUs, search_run.c). ready: the compile (or the resumed trial), the
 * reasons not to run it; *out_run true: *out_v is to run on a GPU, and its
 * write-ahead record is in the cache; false: t holds the result. done: records
 * the trial (unless benchmarking) and counts it. */
int gb_pending_ready(run *r, const gb_record_id *id, gb_pending *p, gb_shape_result *res,
                     leader *best, gb_variant *out_v, gb_trial_result *t, bool *out_run);
int gb_pending_done(run *r, const gb_record_id *id, gb_pending *p, gb_trial_result *t,
                    gb_shape_result *res, leader *best);
/* Counts a trial's time (rc: what running it returned); an interrupted one's
 * write-ahead record is taken back. */
void gb_trial_account(run *r, const gb_pending *p, int rc, double took_s, const gb_trial_result *t);

/* The watchdog's deadline for the next trial, from the shape's trials so far. */
double gb_trial_timeout_s(const run *r);

/* Runs a trial of v with opts. An ok trial whose measurement was contended is run
 * once more after a pause, and that second result stands (unless it failed); once
 * a second one stays contended too, the GPU is taken as shared for the rest of the
 * shape and later trials are not run twice. */
int gb_trial_measure(run *r, const gb_variant *v, const gb_measure_opts *opts, gb_trial_result *t);

/* Counts a finished trial (run now or resumed) in res, keeps its failure, and
 * considers it for best (which may be NULL). */
int gb_trial_tally(run *r, const gb_trial_ident *t, bool resumed, const gb_trial_result *res_t,
                   gb_shape_result *res, leader *best);

/* Starts a shape's bookkeeping (the watchdog's history, the ok list, progress). */
void gb_trial_shape_begin(run *r, const gb_shape_result *res);

/* Sends the shape's progress to opts->progress, if any. */
void gb_run_progress(run *r, gb_progress_phase phase, const leader *best);

/* ---- race.c ------------------------------------------------------------- */

/* Re-measures the shape's leaders (the ok configurations within the margin of the
 * fastest screened, at most the limit) interleaved with the full criterion, and
 * chooses the best; ties (overlapping intervals) go to the earliest configuration
 * in the canonical order. When the run wants a baseline, the reference races too
 * (never crowned) and its measurement becomes res->baseline. When the race cannot
 * run, the screening's best stands, no baseline is kept, and res->race_failure
 * says why. */
int gb_race_leaders(run *r, const gb_fields *shape, gb_shape_result *res, leader *best);

/* Times the reference alone with the full criterion, for the "vs ref" column. */
int gb_run_time_reference(run *r, const gb_fields *shape, gb_shape_result *res);
/* Keeps the reference's measurement m as the shape's baseline (moved out of m), or
 * marks the baseline contended and keeps nothing. */
void gb_run_keep_baseline(gb_shape_result *res, gb_measurement *m);

/* ---- run.c -------------------------------------------------------------- */

void gb_run_log(const run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The GPUs trials run on (gb_tuner_opts.execs; 1 without --gpus) and the executor
 * of the i-th; the 0th is opts->exec. */
int gb_run_n_gpus(const run *r);
gb_exec *gb_run_exec(const run *r, int i);

/* The pause before a contended measurement is taken again (opts->contended_pause_s);
 * GB_EINTR, with r->err set, when the user interrupts it. */
int gb_run_pause_for_contention(run *r);

#endif
