/*
 * What a tuning run is asked to do: the options every run of a session shares
 * (the cache, the executors, the GPU's claim, the budgets' defaults, the
 * criterion, the log and the progress display) and one call's request (the
 * shapes, the budget, the strategy, a benchmark's fixed configuration).
 */
#ifndef GB_TUNER_OPTS_H
#define GB_TUNER_OPTS_H

#include "base/error.h"
#include "base/value.h"
#include "cache/cache.h"
#include "engine/measure.h"
#include "exec/exec.h"
#include "tuner/shard.h"
#include "tuner/strategy.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* The front end's claim on the GPU (the session's lease, session/session.h),
 * which the tuner makes just before it first sets a shape up on the GPU to
 * measure it (a shape answered from the cache, or compiling only, never does).
 * take returns GB_OK when the run may measure, with *out_waited true when it
 * first waited for another process (which may have tuned this very shape
 * meanwhile) and *out_waited_s the seconds waited; any other code stops the run
 * (GB_EBUSY: the other process kept the GPU). held says whether the claim is
 * held: a front end that claims the GPU keeps no idle worker on it without the
 * claim, where the holder's contention check would count it. take NULL: no
 * claim is made. */
typedef struct gb_gpu_claim {
    int (*take)(void *ctx, const char *activity, bool *out_waited, double *out_waited_s,
                gb_err *err);
    bool (*held)(void *ctx);
    void *ctx;
} gb_gpu_claim;

/* Where a run stands, for a progress display (report/progress.h). Sent after each
 * compile and each trial ends, and when a shape starts and ends. */
typedef enum gb_progress_phase {
    GB_PROGRESS_START,   /* a shape begins (nothing compiled or timed yet) */
    GB_PROGRESS_COMPILE, /* a compile ended */
    GB_PROGRESS_TRIAL,   /* a trial ended (ok or failed), or was taken from the cache */
    GB_PROGRESS_RACE,    /* the leaders' race begins */
    GB_PROGRESS_END,     /* the shape ended */
} gb_progress_phase;

typedef struct gb_progress {
    gb_progress_phase phase;
    const char *kernel;
    const char *shape; /* the key text, "K=1024,M=1024,N=1024" */
    int shape_index;   /* 0-based, of n_shapes */
    int n_shapes;
    bool compile_only;
    int n_compiled; /* this shape: compiles ended (ok or not, the cache's included) */
    int n_timed;    /* trials that ended ok */
    int n_failed;   /* trials that failed, compile errors included */
    int n_planned;  /* configurations this shape will try: the budget or the valid
                       count when known; -1 when unknown */
    bool has_best;
    double best_ms;          /* the fastest screened so far */
    const char *best_config; /* its canonical text; valid during the call */
    double elapsed_s;        /* since the shape began */
} gb_progress;

typedef void (*gb_progress_fn)(void *ctx, const gb_progress *p);

/* What every tuning run of a session shares. */
typedef struct gb_tuner_opts {
    gb_cache *cache; /* NULL: remember nothing */
    gb_exec *exec;   /* NULL with compile_only */
    /* --gpus: trials are spread over these executors, one per GPU, all at once
     * (exec/pool.h); execs[0] is exec, which also races the leaders and
     * times the baseline. n_execs 0 or 1: exec alone. gpus are their ordinals. */
    gb_exec *const *execs;
    const int *gpus;
    int n_execs;
    const char *arch;         /* compile target when there is no device ("sm_90a") */
    int jobs;                 /* compile threads (0: compile on the tuner's thread) */
    bool force;               /* re-tune shapes that have a cached best */
    gb_shard shard;           /* this process's part of every space (tuner/shard.h) */
    bool compile_only;        /* compile every variant, time nothing */
    bool verbose;             /* a line per trial on log */
    bool retry_crashed;       /* run again trials an earlier run recorded as crashed or timeout */
    double trial_timeout_s;   /* the watchdog's cap for one trial (0: 60 s) */
    uint64_t seed;            /* for the argument buffers, and the strategies' unless a
                                 request brings its own */
    const char *strategy;     /* overrides every request's strategy (--strategy); NULL: theirs */
    int exhaustive_max;       /* the default rule: exhaustive up to this many valid
                                 configurations (0: 512) ... */
    int auto_evals;           /* ... else auto with this many evaluations (0: 200) */
    bool no_spills;           /* skip variants whose compile spills registers */
    gb_measure_opts measure;  /* the full criterion; each variant is screened with
                                 gb_measure_screening() of it, the leaders race with it */
    double race_margin;       /* leaders: within this of the fastest screened (0: 0.10) */
    int race_leaders;         /* at most this many leaders (0: 8) */
    gb_gpu_claim claim;       /* the GPU's lease, taken before measuring (take NULL: none) */
    double contended_pause_s; /* the pause before measuring a contended result again (0: 1 s) */
    FILE *log;                /* warnings (and -v's lines); NULL for silence */
    gb_progress_fn progress;  /* NULL: no progress display */
    void *progress_ctx;
} gb_tuner_opts;

typedef struct gb_tune_request {
    const gb_fields *shapes;
    int n_shapes;
    int64_t max_evals;  /* per shape; 0: no limit */
    double max_seconds; /* per shape; 0: no limit */
    /* The strategy: a built-in kind by name, or the script's own (custom wins);
     * neither: the default rule (exhaustive for small spaces, else auto with a
     * budget; see gb_tuner_opts). */
    const char *strategy;
    const gb_strategy_factory *custom;
    bool has_seed; /* the strategy's seed is this one, not the run's */
    uint64_t seed;
    bool baseline; /* also time the reference */
    /* Benchmark instead of tune: time only this configuration (for every shape),
     * with the full criterion; nothing is resumed or recorded. */
    const gb_fields *fixed_config;
    bool fixed_best; /* benchmark each shape's cached best configuration */
} gb_tune_request;

#endif
