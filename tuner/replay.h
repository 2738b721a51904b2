/*
 * Replaying search strategies against a recorded table instead of the GPU
 * (`gpubench replay`, docs/replay.md): the benchmark for strategies.
 *
 * A table is what one kernel at one shape on one device measured: a time, or the
 * reason there is none, per configuration. Its space is built from the table's
 * parameters and values; the configurations the table holds are the valid set (the
 * constraint filter is "is in the table", a hash lookup by ordinal), so a strategy
 * sees the same space, the same valid set and the same times a tuning run saw, and
 * a failed configuration costs an evaluation as it did on the GPU.
 *
 * The table comes from a file (gb_replay_load): a gpubench transfer file, what
 * `gpubench cache show --json` prints, a Kernel Tuner cache file or a T4 results
 * file; or straight from a cache (gb_replay_load_cache). The run
 * (gb_replay_run) gives a strategy one search per seed and counts the evaluations
 * it needs to find a configuration within a given percentage of the table's
 * optimum.
 */
#ifndef GB_TUNER_REPLAY_H
#define GB_TUNER_REPLAY_H

#include "cache/cache.h"
#include "tuner/offline.h"
#include "tuner/strategy.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The largest file gb_replay_load reads (the transfer file's own bound). */
#define GB_REPLAY_MAX_FILE_BYTES ((size_t)256 << 20)

/* One configuration of the table. */
typedef struct gb_replay_entry {
    uint64_t ordinal;       /* in the table's space */
    gb_trial_status status; /* ok, or why it has no time */
    double ms;              /* ok: its time (a median); NAN otherwise */
    double cost_s;          /* what evaluating it took (compile, benchmark, ...), s; NAN: unknown */
} gb_replay_entry;

typedef enum gb_replay_format {
    GB_REPLAY_BUILT,    /* made with gb_replay_table_init and _add */
    GB_REPLAY_TRANSFER, /* a transfer file: `gpubench cache save` */
    GB_REPLAY_TRIALS,   /* `gpubench cache show --json` */
    GB_REPLAY_KTUNER,   /* a Kernel Tuner cache file */
    GB_REPLAY_T4,       /* the Autotuning Association's T4 results format */
    GB_REPLAY_CACHE,    /* a gpubench cache's trials (gb_replay_load_cache) */
} gb_replay_format;

typedef struct gb_replay_table {
    gb_space space;
    uint64_t space_size;
    gb_replay_entry *entries; /* in the file's order */
    size_t n_entries, cap_entries;
    size_t *slots; /* open addressing by ordinal: entry index + 1, 0 when empty */
    size_t cap_slots;
    size_t n_status[GB_TRIAL_STATUS_COUNT]; /* entries by status */
    size_t n_unmeasured; /* export files: ok trials without statistics, left out */
    bool has_optimum;
    size_t optimum; /* the fastest ok entry; the first in canonical order on a tie */
    gb_replay_format format;
    char what[600]; /* where it came from: "Kernel Tuner cache, device ..." */
} gb_replay_table;

/* Which table of a transfer file to replay: NULL fields match everything. */
typedef struct gb_replay_select {
    const char *kernel;     /* the kernel's name */
    const gb_fields *shape; /* the shape's key fields, all of them */
    const char *device;     /* the device fingerprint, or a part of it */
    const char *kernel_fp;  /* the kernel fingerprint, or its start */
} gb_replay_select;

/* Reads the table in the file at path (format detected from its content); sel
 * picks one kernel, shape and device of a transfer file (NULL: the file must hold just
 * one). Errors start with the path and say what is wrong: GB_EIO when it cannot be
 * read, GB_ELIMIT over GB_REPLAY_MAX_FILE_BYTES, GB_EINVAL for a file that is not
 * a table, a bad entry (a missing field, a parameter value not in tune_params, a
 * configuration given twice), no timed configuration, or a selection that names
 * no table or several (the message lists them); GB_ENOMEM. */
int gb_replay_load(const char *path, const gb_replay_select *sel, gb_replay_table *out,
                   gb_err *err);

/* The same for text already read; name is what messages call it. */
int gb_replay_parse(const char *text, size_t len, const char *name, const gb_replay_select *sel,
                    gb_replay_table *out, gb_err *err);

/* The same from the trials a cache holds: sel must name the kernel, and picks
 * one shape, device and kernel fingerprint among its trials as it does in a
 * transfer file. Errors start with the cache's folder: GB_EINVAL when it holds
 * no trials of the kernel (or of that shape), when the selection picks none or
 * several (the message lists them), or nothing was timed; the cache's errors;
 * GB_ENOMEM. */
int gb_replay_load_cache(gb_cache *cache, const gb_replay_select *sel, gb_replay_table *out,
                         gb_err *err);

/* An empty table over space (moved into the table: space is zeroed). hint: how
 * many entries to make room for. GB_ENOMEM. */
int gb_replay_table_init(gb_replay_table *t, gb_space *space, size_t hint, gb_err *err);

/* Adds the configuration at ordinal (below the space's size) with its status and,
 * when ok, its time (finite, > 0). GB_EINVAL when the table holds it already, or
 * for a bad time; GB_ENOMEM. */
int gb_replay_table_add(gb_replay_table *t, uint64_t ordinal, gb_trial_status status, double ms,
                        gb_err *err);

/* NULL and a zeroed table are no-ops. */
void gb_replay_table_free(gb_replay_table *t);

/* The entry at ordinal, or NULL when the table does not hold it. */
const gb_replay_entry *gb_replay_find(const gb_replay_table *t, uint64_t ordinal);

/* The constraint filter (gb_config_filter) and the objective (gb_objective_fn) of
 * a table; ctx is the gb_replay_table. The objective fails with GB_EINVAL for a
 * configuration the table does not hold. */
int gb_replay_accept(void *ctx, const gb_config *config, bool *out_ok, gb_err *err);
int gb_replay_objective(void *ctx, const gb_config *config, gb_trial_status *out_status,
                        double *out_ms, gb_err *err);

/* Adds to the space the parameter name with the values given (copied), sorted:
 * numbers by value, then false and true, then strings by their bytes. A file's
 * order cannot serve: a transfer file lists its trials in the order of their keys'
 * hashes, so the same table read from a Kernel Tuner file and from a transfer file would
 * otherwise have different canonical orders. order[i] (room for n_values)
 * receives the place of values[i] in the parameter. */
int gb_replay_space_add(gb_space *space, const char *name, const gb_value *values, int n_values,
                        int *order, gb_err *err);

/* ---- the run ---------------------------------------------------------------- */

typedef struct gb_replay_opts {
    int n_seeds;         /* searches per strategy ... */
    uint64_t first_seed; /* ... with seeds first_seed .. first_seed + n_seeds - 1 (0: 1) */
    double within_pct;   /* the target: at most optimum * (1 + within_pct / 100) */
    int budget;          /* evaluations per search; 0: the table's size */
    int batch;           /* configurations asked for at a time; 0: 1 */
} gb_replay_opts;

/* A percentile that fell on a search that never reached the target. */
#define GB_REPLAY_INF (-1)

typedef struct gb_replay_stats {
    const char *strategy;
    int n_seeds;
    int budget;
    int *evals;        /* per seed: evaluations until the target was reached; GB_REPLAY_INF */
    int median;        /* the ceil(n/2)-th smallest of evals, unreached ones counted as larger
                          than any number; GB_REPLAY_INF when that is an unreached one */
    int p90;           /* the ceil(0.9 n)-th smallest, likewise */
    int n_reached;     /* seeds that reached the target */
    double mean_evals; /* evaluations spent per seed, reached or not */
    double seconds;    /* wall time of all the seeds */
} gb_replay_stats;

/* The target time of a table: optimum * (1 + within_pct / 100). */
double gb_replay_target_ms(const gb_replay_table *t, double within_pct);

/* How many of the table's configurations reach the target. */
size_t gb_replay_n_within(const gb_replay_table *t, double within_pct);

/* Runs the strategy kind once per seed against the table and summarises
 * (gb_session_replay runs it with the session's strategy and seed). Errors are
 * the strategy's (a strategy that proposes a configuration twice or outside the
 * table, a script error) or GB_ENOMEM. Free out with gb_replay_stats_free. */
int gb_replay_run(const gb_replay_table *t, const gb_strategy_kind *kind,
                  const gb_replay_opts *opts, gb_replay_stats *out, gb_err *err);
void gb_replay_stats_free(gb_replay_stats *s);

/* Negative when a did better than b: the lower median, then the lower p90, then
 * more seeds reached, then fewer evaluations spent. 0 when they are equal. */
int gb_replay_compare(const gb_replay_stats *a, const gb_replay_stats *b);

/* ---- the autotuning methodology's score ---------------------------------------- */

/* The score of the Autotuning Association's methodology (Willemsen et al., "A
 * methodology for comparing optimization algorithms for auto-tuning", FGCS 2024),
 * as its package autotuning_methodology 1.1.0 (commit b0075f8) computes it, but
 * deterministic: a strategy's best-so-far over the time its evaluations cost,
 * against random search's expected best-so-far (an analytic baseline) and the
 * optimum, 0 meaning as good as random search and 1 the optimum at every point,
 * averaged over a time range set by two cut-offs. docs/replay.md has every
 * definition; GB_SCORE_METHOD names the one followed. */
#define GB_SCORE_METHOD "autotuning_methodology 1.1.0 (b0075f8), calculated baseline, time axis"

typedef struct gb_score_opts {
    double cutoff;       /* the range's end: this far from the median to the optimum (0.96) */
    double cutoff_start; /* its start (0.5) */
    int resolution;      /* time points (1000) */
    int repeats;         /* searches per strategy, seeds 1 .. repeats (100) */
    int batch;           /* configurations asked for at a time (1) */
} gb_score_opts;

/* A space set up for scoring: its valid times sorted, the cut-offs, the time axis
 * and random search's curve on it. */
typedef struct gb_score_space {
    double *asc; /* the valid times, ascending */
    size_t n;
    double optimum, median;
    double cost_median;   /* per evaluation, s (1 per evaluation where the table has no costs) */
    double cost_per_eval; /* the methodology's mean per evaluation */
    bool costs_known;     /* the table has evaluation costs (else each evaluation costs 1) */
    int fevals_start, fevals_end, max_fevals;
    int resolution;
    double *time;     /* the axis: resolution points from the start's time to the end's */
    double *baseline; /* random search's value at each point */
    bool scorable;
    char why[200]; /* when not scorable */
} gb_score_space;

/* Sets up the table's space (GB_ENOMEM only: a space that cannot be scored has
 * scorable false and why says why). Free with gb_score_space_free. */
int gb_score_space_init(const gb_replay_table *t, const gb_score_opts *o, gb_score_space *out,
                        gb_err *err);
void gb_score_space_free(gb_score_space *s);

/* One search as the methodology sees it: after each evaluation, the time spent so
 * far (s) and the best valid time so far (NAN before the first). */
typedef struct gb_score_run {
    double *x, *y;
    int n;
} gb_score_run;

/* The strategy's standardised curve on the space's axis from its searches (their
 * best-so-far ranks pooled and fitted by a decreasing isotonic regression):
 * curve[resolution], each (strategy - baseline) / (optimum - baseline); *out_score
 * their mean. GB_EINVAL when the searches give fewer than two points in range. */
int gb_score_curve(const gb_score_space *sp, const gb_score_run *runs, int n_runs, double *curve,
                   double *out_score, gb_err *err);

/* Runs the strategy kind opts->repeats times (seeds 1 ..) against the table for
 * the space's budget and scores it (gb_score_curve). */
int gb_score_strategy(const gb_replay_table *t, const gb_score_space *sp,
                      const gb_strategy_kind *kind, const gb_score_opts *o, double *curve,
                      double *out_score, gb_err *err);

#endif
