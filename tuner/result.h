/*
 * What a tuning run found, shape by shape: the best configuration with its
 * measurement and the baseline's, the search (strategy, budget, what ended it),
 * every trial as it ended, the counts, and where the run's time went; and the
 * rows of a compile-only run. The outputs (report/) and the front ends read it.
 */
#ifndef GB_TUNER_RESULT_H
#define GB_TUNER_RESULT_H

#include "cache/key.h"
#include "engine/nvrtc.h"
#include "engine/stats.h"
#include "engine/trial.h"
#include "base/value.h"

#include <stdbool.h>
#include <stdint.h>

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

void gb_tune_result_free(gb_tune_result *result);

void gb_trial_note_free(gb_trial_note *t);

/* Trials of the shape that did not end ok (skipped ones included). */
int gb_shape_n_failed(const gb_shape_result *s);

#endif
