/*
 * What a driver (search_run.c tunes through a strategy, bench_run.c times fixed
 * configurations, compile_run.c only compiles) sees of a tuning run: a pipeline
 * that takes one shape's configurations from start (the configuration's identity
 * and its compile submitted, or its trial resumed from the cache) to ready
 * (compiled, and cleared to run or already ended) to finish (recorded and
 * counted), with the shape's set-up and end around it. The run's state is
 * tuner/run.h's, behind the gb_pipeline handle: a driver reads what it needs
 * through the calls at the end and changes nothing of it directly.
 */
#ifndef GB_TUNER_PIPELINE_H
#define GB_TUNER_PIPELINE_H

#include "cache/record.h"
#include "engine/arch.h"
#include "tuner/compiler.h"
#include "tuner/history.h"
#include "tuner/kernel.h"
#include "tuner/opts.h"
#include "tuner/result.h"
#include "tuner/search.h"
#include "tuner/strategy.h"

#include <stdbool.h>
#include <stdint.h>

/* One gb_tune call (tuner/run.h's struct run). */
typedef struct run gb_pipeline;

/* A configuration on its way through the pipeline. */
typedef struct gb_pending {
    gb_trial_ident ident;
    gb_compile_job *job; /* NULL for a trial resumed from the cache */
    gb_launch launch;
    bool resumed;
    gb_trial_result earlier; /* the resumed trial */
} gb_pending;

/* The fastest correct trial of a shape so far. */
typedef struct leader {
    bool has;
    gb_config config;
    gb_stats stats;
    bool contended; /* its measurement saw other processes on the GPU */
} leader;

/* ---- the drivers, which tune.c calls ---------------------------------------- */

/* Tunes the shape through its strategy (search_run.c). */
int gb_search_shape(gb_pipeline *r, const gb_fields *shape, const gb_record_id *id,
                    gb_shape_result *res, leader *best);
/* Times the configuration asked for (or the cached best) with the full criterion
 * (bench_run.c). */
int gb_bench_shape(gb_pipeline *r, const gb_fields *shape, const gb_record_id *id,
                   gb_shape_result *res);

/* Compiles every accepted configuration, and the reference (compile_run.c). */
int gb_compile_shape(gb_pipeline *r, const gb_fields *shape, const gb_record_id *id,
                     gb_shape_result *res);

/* ---- a configuration's way: start, ready, finish (trial.c) ------------------ */

/* The most configurations a driver keeps between the strategy and the GPU. */
#define GB_WINDOW_MAX 64

/* How many configurations run ahead of the GPU: 2 x --jobs (1 job without
 * threads), at most GB_WINDOW_MAX. */
int gb_run_window(const gb_pipeline *r);

/* Makes the configuration's identity and launch, then either finds its trial in
 * the cache (resume) or submits its compile. */
int gb_pending_start(gb_pipeline *r, const gb_fields *shape, const gb_record_id *id,
                     const gb_config *config, bool resume, gb_pending *p);
/* Waits for the compile (counting the GPU's wait and NVRTC's time). Returns the
 * compile's status: GB_OK with *out, or its error in cerr. */
int gb_pending_compile(gb_pipeline *r, gb_pending *p, const gb_compile_out **out, gb_err *cerr);
/* Frees what the pending configuration holds, letting a queued compile end first. */
void gb_pending_free(gb_pipeline *r, gb_pending *p);

/* Compiles (or resumes) and runs the trial of p with opts, records it unless
 * benchmarking, and counts it in res and best. *out_t, when not NULL, gets the
 * outcome (the caller frees it). GB_EINTR when interrupted. */
int gb_pending_finish(gb_pipeline *r, const gb_record_id *id, gb_pending *p,
                      const gb_measure_opts *opts, gb_shape_result *res, leader *best,
                      gb_trial_result *out_t);

/* gb_pending_finish in two halves, for trials that run elsewhere meanwhile (on a
 * pool of GPUs, search_run.c). ready: the compile (or the resumed trial), the
 * reasons not to run it; *out_run true: *out_v is to run on a GPU, and its
 * write-ahead record is in the cache; false: t holds the result. done: records
 * the trial (unless benchmarking) and counts it. */
int gb_pending_ready(gb_pipeline *r, const gb_record_id *id, gb_pending *p, gb_shape_result *res,
                     leader *best, gb_variant *out_v, gb_trial_result *t, bool *out_run);
int gb_pending_done(gb_pipeline *r, const gb_record_id *id, gb_pending *p, gb_trial_result *t,
                    gb_shape_result *res, leader *best);
/* Counts a trial's time (rc: what running it returned); an interrupted one's
 * write-ahead record is taken back. */
void gb_trial_account(gb_pipeline *r, const gb_pending *p, int rc, double took_s,
                      const gb_trial_result *t);

/* Counts a finished trial (run now or resumed) in res, keeps its failure, and
 * considers it for best (which may be NULL). */
int gb_trial_tally(gb_pipeline *r, const gb_trial_ident *t, bool resumed,
                   const gb_trial_result *res_t, gb_shape_result *res, leader *best);

/* The watchdog's deadline for the next trial, from the shape's trials so far. */
double gb_trial_timeout_s(const gb_pipeline *r);

/* Sends the shape's progress to opts->progress, if any. */
void gb_run_progress(gb_pipeline *r, gb_progress_phase phase, const leader *best);

/* ---- the shape around it (shape.c, plan.c, race.c) ------------------------- */

/* Claims the GPU, sets up the problem on it and runs the reference; a
 * failure of the shape (not the run) is left in res->failure. *out_cached says a
 * process that had the GPU meanwhile tuned the shape (res then holds its best). */
int gb_run_prepare(gb_pipeline *r, const gb_fields *shape, const gb_record_id *id,
                   gb_shape_result *res, bool *out_cached);
/* The reference, compiled (or found in the cubin cache) for this shape. A compile
 * error is in e; other failures are the run's, in r->err. The job owns the cubin
 * that v points into: free it after use. A library reference (gb_kernel_is_library)
 * is not compiled: *job is NULL and v is its GEMM on the shape (r->current.ref_gemm, which
 * gb_run_shape_args set). */
int gb_run_reference_variant(gb_pipeline *r, const gb_fields *shape, gb_compile_job **job,
                             gb_variant *v, gb_err *e);
/* Whether the run times the reference too (baseline = "reference"). */
bool gb_run_wants_baseline(const gb_pipeline *r);
/* A space the constraints left empty: the shape fails ("no valid configuration:
 * the constraints rejected all N of the space"), in a timed run as in a
 * compile-only one, when the search saw the whole space and tried nothing. A
 * shard that owns none of the space is not such a shape. */
int gb_run_none_valid(gb_pipeline *r, gb_shape_result *res, int64_t tried);

/* Keeps the best of what finished in res, and stores it unless the run was
 * interrupted, only benchmarked, or contended. Returns rc. */
int gb_run_settle(gb_pipeline *r, const gb_record_id *id, const leader *best, gb_shape_result *res,
                  int rc);
/* The script's view of the shape: its arguments, check and work. */
int gb_run_shape_args(gb_pipeline *r, const gb_fields *shape, gb_shape_result *res, gb_arg *args,
                      int *n_args);

/* The valid configurations of this shard (of the space, unsharded), counted up to
 * limit (more: *out is limit + 1). */
int gb_search_count_valid(gb_pipeline *r, uint64_t limit, uint64_t *out);

/* A shard's part of a budget of evals: the run's budget is shared out among its
 * shards (rounded up); 0 (none) stays 0. */
int64_t gb_run_shard_share(const gb_pipeline *r, int64_t evals);

/* Times the reference alone with the full criterion, for the "vs ref" column. */
int gb_run_time_reference(gb_pipeline *r, const gb_fields *shape, gb_shape_result *res);
/* Keeps the reference's measurement m as the shape's baseline (moved out of m), or
 * marks the baseline contended and keeps nothing. */
void gb_run_keep_baseline(gb_shape_result *res, gb_measurement *m);

/* ---- what a driver reads of the run (run.c) ---------------------------------- */

/* The GPUs trials run on (gb_tuner_opts.execs; 1 without --gpus) and the executor
 * of the i-th; the 0th is opts->exec. */
int gb_run_n_gpus(const gb_pipeline *r);
gb_exec *gb_run_exec(const gb_pipeline *r, int i);

/* The run's error, which every failing call above has set; set_err puts another
 * in its place (a driver ending on its own error, whose clean-up's must not
 * overwrite it) and returns the one it replaced. */
gb_err *gb_pipeline_err(gb_pipeline *r);
gb_err *gb_pipeline_set_err(gb_pipeline *r, gb_err *err);
/* The kernel, the request and the session's options. */
const gb_kernel_def *gb_pipeline_kernel(const gb_pipeline *r);
const gb_tune_request *gb_pipeline_request(const gb_pipeline *r);
const gb_tuner_opts *gb_pipeline_opts(const gb_pipeline *r);
/* The criteria every variant is screened with and the leaders race with. */
const gb_measure_opts *gb_pipeline_screening(const gb_pipeline *r);
const gb_measure_opts *gb_pipeline_full(const gb_pipeline *r);
/* The shape's check (the kernel's, with defaults for the shape) and its search:
 * the space, the constraints' answers, what was seen. */
const gb_check_spec *gb_pipeline_check(const gb_pipeline *r);
gb_search *gb_pipeline_search(gb_pipeline *r);
/* The shape's progress counts, which the display shows (gb_run_progress). */
gb_progress *gb_pipeline_progress(gb_pipeline *r);
/* What the cache keeps and what may be reused (tuner/history.h). */
gb_history *gb_pipeline_history(gb_pipeline *r);
/* The call's result, for what is the run's rather than a shape's (compile rows,
 * timing). */
gb_tune_result *gb_pipeline_result(gb_pipeline *r);
/* The compiler pool and the target's limits, for compiling only. */
gb_compiler *gb_pipeline_compiler(gb_pipeline *r);
const gb_arch_limits *gb_pipeline_limits(const gb_pipeline *r);
/* The strategy the shape's plan chose (gb_search_plan), over its search. */
int gb_pipeline_create_strategy(gb_pipeline *r, gb_strategy **out);

#endif
