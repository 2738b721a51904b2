/*
 * Comparing two runs: is NEW slower than OLD? The statistics behind `gpubench
 * compare` (cli/compare_main.c, docs/compare.md), with no I/O so that tests can
 * call them on plain arrays.
 *
 * Per benchmark, the two sample sets (times; any unit, the same on both sides) go
 * through three steps:
 *   1. a Mann-Whitney U test (two-sided): are the two distributions shifted?
 *      Exact when the samples have no ties and the sets are small (m + n <=
 *      GB_MWU_EXACT_MAX); otherwise the normal approximation with the tie
 *      correction of the variance and a continuity correction of 0.5;
 *   2. a seeded bootstrap percentile interval of the ratio of the medians
 *      (new / old): how large is the change, and how sure are we of its size?
 *   3. the verdict (gb_compare_verdict), which needs both a significant test and
 *      a change larger than the threshold to call a benchmark FASTER or SLOWER.
 *
 * The loader (report/compare/compare_load.c) turns a JSON run file, ours or Google
 * Benchmark's, into named sample sets (gb_sample_file).
 */
#ifndef GB_REPORT_COMPARE_H
#define GB_REPORT_COMPARE_H

#include "base/error.h"

#include <stdbool.h>
#include <stdint.h>

/* The largest m + n for the exact distribution of U: every count of it is then an
 * integer below 2^53 (C(50, 25) < 2^47), so doubles hold the counts exactly. */
#define GB_MWU_EXACT_MAX 50

typedef enum gb_verdict {
    GB_VERDICT_SAME,
    GB_VERDICT_FASTER,
    GB_VERDICT_SLOWER,
    GB_VERDICT_UNSURE,
    GB_VERDICT_COUNT
} gb_verdict;

/* "SAME", "FASTER", "SLOWER", "UNSURE". */
const char *gb_verdict_name(gb_verdict v);

typedef struct gb_compare_opts {
    double threshold;  /* the smallest change that counts, relative: 0.02 = 2% */
    double alpha;      /* the test's significance level: 0.05 */
    double confidence; /* of the bootstrap interval: 0.95 */
    int n_resamples;   /* bootstrap resamples: 2000 */
    uint64_t seed;     /* of the bootstrap's random numbers: 1 */
    int min_samples;   /* fewer on either side: UNSURE, whatever the numbers say: 5 */
} gb_compare_opts;

/* The defaults above. */
gb_compare_opts gb_compare_opts_default(void);

typedef struct gb_mwu {
    double u;       /* U of the first set: pairs (a, b) with a > b, ties counting 1/2 */
    double z;       /* the standardised statistic (signed, corrected); 0 when exact */
    double p_value; /* two-sided */
    bool exact;     /* from the exact distribution, not the normal approximation */
} gb_mwu;

/* The Mann-Whitney U test of a[0..na) against b[0..nb) (na, nb >= 1; the arrays
 * are not modified). GB_EINVAL for empty sets or NaN, GB_ENOMEM. */
int gb_mann_whitney(const double *a, int na, const double *b, int nb, gb_mwu *out, gb_err *err);

/* The median of x[0..n) (n >= 1; not modified): the middle value, or the mean of
 * the middle two. NaN for n < 1 or when memory runs out. */
double gb_compare_median(const double *x, int n);

/* The bootstrap percentile interval, at opts->confidence, of median(new)/median(old):
 * opts->n_resamples resamples of each set with replacement, from opts->seed, so the
 * same input gives the same interval. GB_EINVAL for empty sets or a resampled
 * median of old that is not above 0; GB_ENOMEM. */
int gb_bootstrap_ratio(const double *old, int n_old, const double *new_, int n_new,
                       const gb_compare_opts *opts, double *out_lo, double *out_hi, gb_err *err);

/* One pair's comparison. NaN where a figure could not be had (the interval and the
 * test are not computed below min_samples, nor the ratio when old's median is 0). */
typedef struct gb_compare_result {
    int n_old, n_new;
    double old_median, new_median;
    double ratio;        /* new_median / old_median */
    double ci_lo, ci_hi; /* bootstrap interval of the ratio */
    gb_mwu test;
    gb_verdict verdict;
    const char *reason; /* a few words on why (static text) */
} gb_compare_result;

/* The verdict from the figures already in r (n_old, n_new, ratio, ci_lo, ci_hi,
 * test.p_value); sets r->verdict and r->reason. The rules, in order:
 *   UNSURE  fewer than min_samples on either side, or no ratio;
 *   SLOWER  p < alpha and ratio > 1 + threshold;
 *   FASTER  p < alpha and ratio < 1 - threshold;
 *   SAME    p < alpha (the change is real but within the threshold), or the whole
 *           interval lies within [1 - threshold, 1 + threshold];
 *   UNSURE  otherwise: no significant change, but one as large as the threshold
 *           cannot be ruled out. */
void gb_compare_verdict(gb_compare_result *r, const gb_compare_opts *opts);

/* Everything for one pair: medians, ratio, test, interval, verdict. Samples must be
 * finite and >= 0 (GB_EINVAL otherwise); empty sets are allowed and give UNSURE. */
int gb_compare_samples(const double *old, int n_old, const double *new_, int n_new,
                       const gb_compare_opts *opts, gb_compare_result *out, gb_err *err);

/* The geometric mean of the ratios that are finite and > 0; NaN when there is none. */
double gb_compare_geomean(const double *ratios, int n);

/* ---- run files (report/compare/compare_load.c) ---------------------------------------- */

/* One benchmark's samples, in milliseconds. An entry that reported an error has no
 * samples and its message in error. */
typedef struct gb_sample_set {
    char *name;
    double *samples_ms;
    int n;
    char *error;
} gb_sample_set;

typedef struct gb_sample_file {
    gb_sample_set *sets; /* in the file's order, one per name */
    int n;
    const char *format; /* "gpubench" or "google-benchmark" (static) */
} gb_sample_file;

/* Reads a JSON run file. Ours (entries with "role" and "samples_ms"): every sample
 * of roles best and baseline, and of trial too with all_roles. Google Benchmark's:
 * the real_time of each "iteration" entry, grouped by run_name (the repetitions);
 * a benchmark with only aggregates gives its median (else its mean) as its one
 * value. GB_EIO when the file cannot be read, GB_EINVAL naming the file and the
 * entry when it is not such a file; *out is empty then. */
int gb_sample_file_load(const char *path, bool all_roles, gb_sample_file *out, gb_err *err);

/* The set named name, or NULL. */
const gb_sample_set *gb_sample_file_find(const gb_sample_file *f, const char *name);

/* Takes NULL and an empty file. */
void gb_sample_file_free(gb_sample_file *f);

#endif
