/*
 * The tuning loop: for each shape, enumerate the kernel's configuration space,
 * compile every accepted configuration (ahead of the GPU, through the compiler
 * pool), check and time it on the executor, record each trial in the cache as it
 * finishes, and keep the fastest correct configuration as the shape's best.
 *
 * The tuner knows nothing of Lua: the script's functions reach it as hooks. A hook
 * that fails returns GB_ESCRIPT with the script's file:line in the message; that
 * stops the run (it is a bug in the script, not in a variant).
 *
 * Only one process measures on a GPU at a time: before a run first touches the
 * GPU for a shape it must measure, it claims the GPU (gb_gpu_claim: the
 * session's lease, session/session.h), which the session keeps until it ends. A measurement that
 * still saw another process on the GPU (contended, engine/measure.h) is measured again once after a
 * pause; a best whose race stays contended is reported as such and never stored.
 */
#ifndef GB_TUNER_TUNE_H
#define GB_TUNER_TUNE_H

#include "base/error.h"
#include "base/value.h"
#include "cache/cache.h"
#include "cache/key.h"
#include "exec/exec.h"
#include "engine/gemm.h"
#include "engine/measure.h"
#include "engine/nvrtc.h"
#include "engine/roofs.h"
#include "engine/spec.h"
#include "engine/stats.h"
#include "tuner/shard.h"
#include "tuner/space.h"
#include "tuner/strategy.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* The script's functions, called on the tuner's thread. NULL hooks are allowed
 * where noted. */
typedef struct gb_kernel_hooks {
    /* The constraints: *out_ok false drops the configuration (NULL: keep all). */
    int (*accept)(void *ctx, const gb_config *config, bool *out_ok, gb_err *err);
    /* The kernel's arguments for a shape (at most GB_MAX_ARGS). */
    int (*args)(void *ctx, const gb_fields *shape, gb_arg *out_args, int *out_n_args, gb_err *err);
    /* Grid, block and dynamic shared memory. */
    int (*launch)(void *ctx, const gb_config *config, const gb_fields *shape, gb_launch *out,
                  gb_err *err);
    /* Extra -D macros (NULL: none). */
    int (*defines)(void *ctx, const gb_config *config, const gb_fields *shape, gb_fields *out,
                   gb_err *err);
    /* Floating-point operations and bytes moved per launch (NULL: unknown). */
    int (*work)(void *ctx, const gb_fields *shape, double *out_flops, double *out_bytes,
                gb_err *err);
    /* Set for a reference that is a library call, not a kernel (gb.cublas.gemm): the
     * GEMM it runs on a shape. Such a kernel has no source, is never compiled, and
     * needs no other hook. */
    int (*gemm)(void *ctx, const gb_fields *shape, gb_gemm *out, gb_err *err);
} gb_kernel_hooks;

/* What a kernel's compile may show that makes the tuner skip the variant (the
 * script's `reject`): spilled registers; wgmmas ptxas serialised. */
enum { GB_REJECT_SPILLS = 1u << 0, GB_REJECT_SERIALIZED_WGMMA = 1u << 1 };

typedef struct gb_kernel_def gb_kernel_def;
struct gb_kernel_def {
    char *name;
    char *source;      /* CUDA C++ text */
    char *source_name; /* how logs name it: the template's path, or "<name>.cu" */
    char **include_dirs;
    int n_include_dirs;
    char *entry;      /* name expression with ${P} placeholders */
    char *args_where; /* where the script defines args ("suite.lua:42"), or NULL */
    char *defined_at; /* where the script calls gb.kernel ("suite.lua:30: "), or NULL */
    gb_space space;
    char **options;
    int n_options;
    bool macros;     /* also pass every parameter as -DNAME=value */
    gb_math math;    /* what its flops run on, for the reports' compute roof */
    unsigned reject; /* GB_REJECT_* bits: compiles skipped, not run */
    gb_check_spec check;
    char **key_fields; /* shape fields that form the cache key (NULL: all) */
    int n_key_fields;
    gb_kernel_def *reference; /* owned; a kernel with no parameters, or NULL */
    bool has_measure;         /* the kernel's own measurement method, over the run's */
    gb_measure_opts measure;
    gb_kernel_hooks hooks;
    void *hooks_ctx;
};

void gb_kernel_def_free(gb_kernel_def *def);

/* True for a kernel that is a library call (hooks.gemm), not compiled source;
 * false for NULL. */
bool gb_kernel_is_library(const gb_kernel_def *def);

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

/* One compile, as --compile-only reports it. */
typedef struct gb_compile_row {
    gb_key key; /* of the cubin */
    gb_fields config;
    gb_resources resources;
    double compile_ms;
    bool cached;
    char *error; /* the first diagnostic, or NULL */
    char *limit; /* the variant compiled but exceeds the target's limits: why (gb_arch_check) */
} gb_compile_row;

/* What ended a search. */
typedef enum gb_search_end {
    GB_END_NONE,      /* not a search (cached, benchmarked, compiled only, failed) */
    GB_END_SPACE,     /* every valid configuration was tried */
    GB_END_EVALS,     /* the budget's evaluations */
    GB_END_SECONDS,   /* the budget's seconds */
    GB_END_STRATEGY,  /* the strategy proposed nothing more */
    GB_END_INTERRUPT, /* the user */
} gb_search_end;

const char *gb_search_end_name(gb_search_end end);

/* One configuration a shape tried, or took from an earlier run's records, as it
 * ended: what the reports list trial by trial. */
typedef struct gb_trial_note {
    char *config_text; /* canonical text, "BK=8,BM=64" */
    gb_fields config;
    gb_trial_status status;
    char *reason; /* "" when ok */
    bool resumed; /* recorded by an earlier run */
    /* ok: the screening measurement, its samples included (a resumed trial has the
     * samples and clock its record kept); empty otherwise. */
    gb_measurement measurement;
} gb_trial_note;

typedef struct gb_shape_result {
    gb_fields shape;
    char *key_text; /* "K=1024,M=1024,N=1024" */
    bool cached;    /* reported from the cache; nothing was measured now */
    bool has_best;
    gb_fields best_config;
    gb_stats best;                   /* milliseconds */
    gb_measurement best_measurement; /* the race's (or the benchmark's) samples and clock;
                                        from the cache: its samples, clock, throttling */
    char **tie; /* leaders whose interval overlapped the fastest's (canonical text),
                   which the canonical order decided between; the winner first */
    int n_tie;
    int n_leaders;      /* how many raced */
    char *race_failure; /* the race could not run: the best is the screening's */
    double flops;       /* per launch; 0 when unknown */
    double bytes;
    bool has_baseline;
    gb_measurement baseline; /* the reference's timing (from the cache: its statistics only) */
    uint64_t n_configs;      /* size of the space */
    uint64_t n_rejected;     /* of the configurations looked at, dropped by the constraints */
    uint64_t n_checked;      /* configurations the constraints were asked about */
    double check_s;          /* time spent in the constraints */
    /* The search: which strategy, from which seed, under which budget (0: none on
     * that axis), what ended it and how much of the space it saw. */
    char strategy[32];
    uint64_t seed;
    int64_t budget_evals;
    double budget_seconds;
    gb_search_end ended_by;
    int n_evals;    /* configurations tried, recorded ones included */
    int n_recorded; /* of them, trials of earlier runs the search went on from */
    int n_skipped;  /* compiled but not run: over --arch's limits, or spilling with --no-spills */
    int n_compiled; /* compiled now or found compiled in the cache */
    int n_status[GB_TRIAL_STATUS_COUNT];
    int n_timed;           /* trials that ended ok (and so were timed) */
    int n_resumed;         /* trials taken from an earlier run's records */
    gb_trial_note *trials; /* every trial, in the order they ended, failed ones included */
    int n_trials;
    bool contended;          /* the best's measurement saw other processes on the GPU, again when
                                measured a second time: reported, never stored as the best */
    int n_contended;         /* ok trials whose screening stayed contended (kept, marked so) */
    bool baseline_contended; /* the reference's timing stayed contended: not kept */
    bool interrupted;        /* the run stopped during this shape: best is of what finished */
    bool complete;           /* every accepted configuration was tried */
    bool compile_only;       /* its variants were compiled, nothing was timed */
    char *failure;           /* why the shape has no result (e.g. the reference failed) */
} gb_shape_result;

/* Where a tuning run's wall time went. */
typedef struct gb_tune_timing {
    double total_s;
    double screening_s;    /* trials on the GPU (checks and screening measurements) */
    double racing_s;       /* the leaders' races */
    double compile_wait_s; /* the GPU sat idle waiting for a compile it needed */
    double compile_cpu_s;  /* NVRTC's own time, summed over the compile threads */
    int compile_threads;   /* how many (0: compiles ran on the tuner's own thread) */
    double lease_wait_s;   /* waiting for another process to let go of the GPU's lease */
    int n_trials;          /* trials run (not resumed) */
    /* The trials' phases summed (gb_trial_phases_add), in ms: where screening_s went. */
    gb_trial_phases trial_phases;
} gb_tune_timing;

typedef struct gb_tune_result {
    gb_shape_result *shapes;
    int n_shapes;
    gb_compile_row *compiles; /* --compile-only: one row per distinct compile */
    int n_compiles;
    char kernel_fp[33];
    char device[320];       /* device fingerprint, "" without a device */
    char clock_source[8];   /* "nvml" or "probe"; "" without a device */
    char timer[8];          /* what times the samples: "cupti" or "events"; "" without a device */
    char timer_note[512];   /* with events where CUPTI was wanted: why not CUPTI */
    char arch[16];          /* the compile target ("sm_90a") */
    char reference_lib[16]; /* "cuBLAS" when the reference is a library call, else "" */
    bool bench;             /* a benchmark of fixed configurations, not a tuning run */
    bool compile_only;      /* compiled every variant, timed nothing */
    gb_tune_timing timing;
} gb_tune_result;

/* Tunes kernel over the request's shapes. Returns GB_OK when the run completed
 * (shapes may still have failed: see failure and has_best); GB_ESCRIPT for a
 * script error, GB_ENODRIVER / GB_ENOGPU when timing is impossible, GB_EINTR when
 * interrupted: out then holds what finished, every finished trial is in the cache,
 * and a rerun resumes from there. */
int gb_tune(const gb_tuner_opts *opts, const gb_kernel_def *kernel, const gb_tune_request *req,
            gb_tune_result *out, gb_err *err);

void gb_tune_result_free(gb_tune_result *result);

void gb_trial_note_free(gb_trial_note *t);

/* Trials of the shape that did not end ok (skipped ones included). */
int gb_shape_n_failed(const gb_shape_result *s);

/* Calls the script's hooks for every shape and (up to 100000 in all) every
 * accepted configuration, without compiling or touching the GPU, so that a bug in
 * the script stops the run before anything starts. GB_ESCRIPT with the script's
 * line on failure. gb_tune does not call it: the front end does, before it opens
 * the GPU. */
int gb_tune_check(const gb_kernel_def *kernel, const gb_tune_request *req, gb_err *err);

/* The constraints of kernel as a gb_config_filter (ctx is the kernel). */
int gb_tune_accept(void *ctx, const gb_config *config, bool *out_ok, gb_err *err);

/* The entry expression with ${P} replaced by the configuration's values. */
int gb_tune_expand_entry(const char *entry, const gb_config *config, gb_strbuf *out, gb_err *err);

/* The shape's fields that key the cache (the kernel's key list, or all of them). */
int gb_tune_key_fields(const gb_kernel_def *kernel, const gb_fields *shape, gb_fields *out,
                       gb_err *err);

/* The kernel fingerprint (hex): source closure, entry, options, macros. */
int gb_tune_kernel_fingerprint(const gb_kernel_def *kernel, char out[33], gb_err *err);

#endif
