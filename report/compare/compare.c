/* The statistics of `gpubench compare` (report/compare/compare.h): the Mann-Whitney U test,
 * the bootstrap interval of the ratio of medians, and the verdict. No I/O. */
#include "report/compare/compare.h"

#include "engine/stats.h"
#include "tuner/search.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *gb_verdict_name(gb_verdict v)
{
    static const char *const names[] = {"SAME", "FASTER", "SLOWER", "UNSURE"};
    return v >= 0 && v < GB_VERDICT_COUNT ? names[v] : "?";
}

gb_compare_opts gb_compare_opts_default(void)
{
    return (gb_compare_opts){.threshold = 0.02,
                             .alpha = 0.05,
                             .confidence = 0.95,
                             .n_resamples = 2000,
                             .seed = 1,
                             .min_samples = 5};
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A sorted malloc'd copy; NULL when memory runs out. */
static double *sorted_copy(const double *x, int n)
{
    double *s = malloc((size_t)(n > 0 ? n : 1) * sizeof *s);
    if (!s) return NULL;
    memcpy(s, x, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, compare_doubles);
    return s;
}

static double sorted_median(const double *s, int n)
{
    return (s[(n - 1) / 2] + s[n / 2]) / 2.0;
}

double gb_compare_median(const double *x, int n)
{
    if (n < 1) return NAN;
    double *s = sorted_copy(x, n);
    if (!s) return NAN;
    double m = sorted_median(s, n);
    free(s);
    return m;
}

/* ---- Mann-Whitney U ---------------------------------------------------------- */

typedef struct tagged {
    double v;
    int from_a;
} tagged;

static int compare_tagged(const void *a, const void *b)
{
    return compare_doubles(&((const tagged *)a)->v, &((const tagged *)b)->v);
}

/* The rank sum of a's values (ties get their mean rank) and the ties' term
 * sum(t^3 - t) over the groups of t equal values. */
static void rank_sum(const tagged *all, int n, double *out_rank_sum_a, double *out_ties)
{
    double sum_a = 0, ties = 0;
    for (int i = 0; i < n;) {
        int j = i;
        while (j < n && all[j].v == all[i].v)
            j++;
        double mid_rank = (i + 1 + j) / 2.0; /* ranks i+1 .. j */
        for (int k = i; k < j; k++)
            if (all[k].from_a) sum_a += mid_rank;
        double t = j - i;
        ties += t * t * t - t;
        i = j;
    }
    *out_rank_sum_a = sum_a;
    *out_ties = ties;
}

/* The counts of U = 0 .. m*n over the C(m+n, m) orderings without ties: the
 * coefficients of the Gaussian binomial [m+n choose m]_q, built as the product of
 * (1 - q^(n+i)) / (1 - q^i) for i = 1..m. Each partial product is itself a
 * Gaussian binomial, so every intermediate is an integer no larger than twice the
 * final total: exact in doubles for m + n <= GB_MWU_EXACT_MAX. */
static double *u_counts(int m, int n)
{
    size_t size = (size_t)m * (size_t)n + (size_t)m + 1;
    double *c = calloc(size, sizeof *c);
    if (!c) return NULL;
    c[0] = 1;
    for (int i = 1; i <= m; i++) {
        int k = n + i, deg = (i - 1) * n;
        for (int d = deg + k; d >= k; d--) /* times (1 - q^k) */
            c[d] -= c[d - k];
        for (int d = i; d <= deg + k; d++) /* divided by (1 - q^i) */
            c[d] += c[d - i];
    }
    return c;
}

static int exact_p(int na, int nb, double u, gb_mwu *out, gb_err *err)
{
    double *c = u_counts(na, nb);
    if (!c) return gb_err_set(err, GB_ENOMEM, "Mann-Whitney: out of memory");
    int top = na * nb, k = (int)llround(u);
    double total = 0, below = 0, above = 0;
    for (int i = 0; i <= top; i++) {
        total += c[i];
        if (i <= k) below += c[i];
        if (i >= k) above += c[i];
    }
    double p = 2.0 * fmin(below, above) / total;
    out->p_value = p < 1.0 ? p : 1.0;
    out->z = 0;
    out->exact = true;
    free(c);
    return GB_OK;
}

/* The normal approximation: the variance of U shrinks by the ties, and the
 * distance from the mean by 0.5 (U moves in steps of 1/2 or 1). */
static void normal_p(int na, int nb, double u, double ties, gb_mwu *out)
{
    double n = (double)na + nb, mean = (double)na * nb / 2.0;
    double var = (double)na * nb / 12.0 * ((n + 1) - ties / (n * (n - 1)));
    out->exact = false;
    if (!(var > 0)) { /* every value equal: nothing tells the sets apart */
        out->z = 0, out->p_value = 1.0;
        return;
    }
    double dist = fmax(fabs(u - mean) - 0.5, 0.0);
    out->z = copysign(dist / sqrt(var), u - mean);
    out->p_value = fmin(1.0, erfc(dist / sqrt(var) / sqrt(2.0)));
}

static int check_set(const double *x, int n, const char *what, gb_err *err)
{
    if (n < 1) return gb_err_set(err, GB_EINVAL, "%s: no samples", what);
    for (int i = 0; i < n; i++)
        if (isnan(x[i])) return gb_err_set(err, GB_EINVAL, "%s: sample %d is NaN", what, i);
    return GB_OK;
}

int gb_mann_whitney(const double *a, int na, const double *b, int nb, gb_mwu *out, gb_err *err)
{
    memset(out, 0, sizeof *out);
    int rc = check_set(a, na, "Mann-Whitney, first set", err);
    if (!rc) rc = check_set(b, nb, "Mann-Whitney, second set", err);
    if (rc) return rc;
    int n = na + nb;
    tagged *all = malloc((size_t)n * sizeof *all);
    if (!all) return gb_err_set(err, GB_ENOMEM, "Mann-Whitney: out of memory");
    for (int i = 0; i < n; i++)
        all[i] = i < na ? (tagged){a[i], 1} : (tagged){b[i - na], 0};
    qsort(all, (size_t)n, sizeof *all, compare_tagged);
    double sum_a, ties;
    rank_sum(all, n, &sum_a, &ties);
    free(all);
    out->u = sum_a - (double)na * (na + 1) / 2.0;
    if (ties == 0 && n <= GB_MWU_EXACT_MAX) return exact_p(na, nb, out->u, out, err);
    normal_p(na, nb, out->u, ties, out);
    return GB_OK;
}

/* ---- the bootstrap ------------------------------------------------------------ */

/* n draws of an index below n, two from each 64-bit number: the high half of a
 * 32-bit number times n (Lemire's multiply-shift). Its bias, below n / 2^32, is far
 * under the bootstrap's own noise, and it spares the two 64-bit divisions per draw
 * of gb_rng_below, which dominated the time of a comparison of large sets. */
static void count_draws(int n, int *counts, gb_rng *rng)
{
    memset(counts, 0, (size_t)n * sizeof *counts);
    for (int j = 0; j < n; j += 2) {
        uint64_t x = gb_rng_next(rng);
        counts[((x & 0xffffffffu) * (uint64_t)n) >> 32]++;
        if (j + 1 < n) counts[((x >> 32) * (uint64_t)n) >> 32]++;
    }
}

/* The median of a resample (n draws with replacement) of sorted[0..n): since the
 * values are sorted, it is the value at the median of the drawn indices, which a
 * count per index finds in O(n) without sorting anything. */
static double resampled_median(const double *sorted, int n, int *counts, gb_rng *rng)
{
    count_draws(n, counts, rng);
    int lo_rank = (n - 1) / 2, hi_rank = n / 2, seen = 0;
    double lo = NAN;
    for (int i = 0; i < n; i++) {
        if (isnan(lo) && seen + counts[i] > lo_rank) lo = sorted[i];
        seen += counts[i];
        if (seen > hi_rank) return (lo + sorted[i]) / 2.0;
    }
    return sorted[n - 1]; /* not reached: the counts add up to n */
}

static int bootstrap_check(const double *old, int n_old, const double *new_, int n_new,
                           const gb_compare_opts *o, gb_err *err)
{
    int rc = check_set(old, n_old, "bootstrap, old set", err);
    if (!rc) rc = check_set(new_, n_new, "bootstrap, new set", err);
    if (rc) return rc;
    if (o->n_resamples < 1 || !(o->confidence > 0 && o->confidence < 1))
        return gb_err_set(err, GB_EINVAL, "bootstrap: %d resamples at confidence %g",
                          o->n_resamples, o->confidence);
    for (int i = 0; i < n_old; i++)
        if (!(old[i] > 0))
            return gb_err_set(err, GB_EINVAL,
                              "bootstrap: old sample %d is %g; a ratio needs times above 0", i,
                              old[i]);
    return GB_OK;
}

int gb_bootstrap_ratio(const double *old, int n_old, const double *new_, int n_new,
                       const gb_compare_opts *opts, double *out_lo, double *out_hi, gb_err *err)
{
    *out_lo = *out_hi = NAN;
    int rc = bootstrap_check(old, n_old, new_, n_new, opts, err);
    if (rc) return rc;
    double *so = sorted_copy(old, n_old), *sn = sorted_copy(new_, n_new);
    double *ratios = malloc((size_t)opts->n_resamples * sizeof *ratios);
    int *counts = malloc((size_t)(n_old > n_new ? n_old : n_new) * sizeof *counts);
    if (!so || !sn || !ratios || !counts) {
        rc = gb_err_set(err, GB_ENOMEM, "bootstrap: out of memory");
        goto cleanup;
    }
    gb_rng rng;
    gb_rng_seed(&rng, opts->seed);
    for (int b = 0; b < opts->n_resamples; b++) {
        double m_old = resampled_median(so, n_old, counts, &rng);
        ratios[b] = resampled_median(sn, n_new, counts, &rng) / m_old;
    }
    qsort(ratios, (size_t)opts->n_resamples, sizeof *ratios, compare_doubles);
    double tail = (1.0 - opts->confidence) / 2.0;
    *out_lo = gb_stats_quantile(ratios, opts->n_resamples, tail);
    *out_hi = gb_stats_quantile(ratios, opts->n_resamples, 1.0 - tail);
cleanup:
    free(so), free(sn), free(ratios), free(counts);
    return rc;
}

/* ---- the verdict --------------------------------------------------------------- */

static void set_verdict(gb_compare_result *r, gb_verdict v, const char *reason)
{
    r->verdict = v;
    r->reason = reason;
}

void gb_compare_verdict(gb_compare_result *r, const gb_compare_opts *o)
{
    double t = o->threshold;
    bool significant = r->test.p_value < o->alpha; /* false for NaN */
    if (r->n_old < o->min_samples || r->n_new < o->min_samples)
        set_verdict(r, GB_VERDICT_UNSURE, "too few samples");
    else if (!isfinite(r->ratio))
        set_verdict(r, GB_VERDICT_UNSURE, "no ratio: the old median is 0");
    else if (significant && r->ratio > 1 + t)
        set_verdict(r, GB_VERDICT_SLOWER, "significant and above the threshold");
    else if (significant && r->ratio < 1 - t)
        set_verdict(r, GB_VERDICT_FASTER, "significant and above the threshold");
    else if (significant)
        set_verdict(r, GB_VERDICT_SAME, "significant but within the threshold");
    else if (r->ci_lo >= 1 - t && r->ci_hi <= 1 + t)
        set_verdict(r, GB_VERDICT_SAME, "interval within the threshold");
    else
        set_verdict(r, GB_VERDICT_UNSURE, "not significant; interval wider than the threshold");
}

static int check_times(const double *x, int n, const char *what, gb_err *err)
{
    for (int i = 0; i < n; i++)
        if (!isfinite(x[i]) || x[i] < 0)
            return gb_err_set(err, GB_EINVAL, "%s sample %d is %g, not a time", what, i, x[i]);
    return GB_OK;
}

static bool all_positive(const double *x, int n)
{
    for (int i = 0; i < n; i++)
        if (!(x[i] > 0)) return false;
    return true;
}

int gb_compare_samples(const double *old, int n_old, const double *new_, int n_new,
                       const gb_compare_opts *opts, gb_compare_result *out, gb_err *err)
{
    *out = (gb_compare_result){.n_old = n_old,
                               .n_new = n_new,
                               .old_median = gb_compare_median(old, n_old),
                               .new_median = gb_compare_median(new_, n_new),
                               .ratio = NAN,
                               .ci_lo = NAN,
                               .ci_hi = NAN,
                               .test = {.p_value = NAN}};
    int rc = check_times(old, n_old, "old", err);
    if (!rc) rc = check_times(new_, n_new, "new", err);
    if (rc) return rc;
    if (out->old_median > 0) out->ratio = out->new_median / out->old_median;
    int min_n = opts->min_samples > 1 ? opts->min_samples : 1;
    if (n_old >= min_n && n_new >= min_n && isfinite(out->ratio)) {
        /* U of new: large when new's times are the larger ones. */
        rc = gb_mann_whitney(new_, n_new, old, n_old, &out->test, err);
        if (!rc && all_positive(old, n_old)) /* a resampled old median of 0: no ratio */
            rc = gb_bootstrap_ratio(old, n_old, new_, n_new, opts, &out->ci_lo, &out->ci_hi, err);
        if (rc) return rc;
    }
    gb_compare_verdict(out, opts);
    return GB_OK;
}

double gb_compare_geomean(const double *ratios, int n)
{
    double sum_log = 0;
    int used = 0;
    for (int i = 0; i < n; i++) {
        if (!isfinite(ratios[i]) || !(ratios[i] > 0)) continue;
        sum_log += log(ratios[i]);
        used++;
    }
    return used ? exp(sum_log / used) : NAN;
}
