#include "engine/stats.h"

#include "base/error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double gb_stats_quantile(const double *sorted, int n, double q)
{
    if (n <= 0) return NAN;
    double pos = q * (n - 1);
    int lo = (int)floor(pos);
    if (lo >= n - 1) return sorted[n - 1];
    double frac = pos - lo;
    return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

/* log of C(n, k) / 2^n, through lgamma so n can be large. */
static double log_binomial_half(int n, int k)
{
    return lgamma(n + 1.0) - lgamma(k + 1.0) - lgamma(n - k + 1.0) - n * log(2.0);
}

void gb_stats_median_ci_ranks(int n, double confidence, int *out_lo, int *out_hi)
{
    /* With 0-based ranks, [x_(j), x_(n-1-j)] covers the median with probability
     * 1 - 2 P(B <= j), B ~ Bin(n, 1/2): the median is below x_(j) exactly when at
     * most j samples are below it. So j is the largest k with P(B <= k) <= alpha/2;
     * when even k = 0 fails (n < 6 at 95%), the extremes are the best there is. */
    double tail = (1.0 - confidence) / 2.0, cdf = 0.0;
    int j = 0;
    for (int k = 0; k < n; k++) {
        cdf += exp(log_binomial_half(n, k));
        if (cdf > tail) break;
        j = k;
    }
    if (j > (n - 1) / 2) j = (n - 1) / 2;
    *out_lo = j;
    *out_hi = n - 1 - j;
}

int gb_stats_compute(const double *samples, int n, gb_stats *out)
{
    memset(out, 0, sizeof *out);
    if (n < 1) return GB_EINVAL;
    double *sorted = malloc((size_t)n * sizeof *sorted);
    if (!sorted) return GB_ENOMEM;
    memcpy(sorted, samples, (size_t)n * sizeof *sorted);
    qsort(sorted, (size_t)n, sizeof *sorted, compare_doubles);
    double sum = 0.0;
    for (int i = 0; i < n; i++)
        sum += sorted[i];
    double mean = sum / n, ss = 0.0;
    for (int i = 0; i < n; i++)
        ss += (sorted[i] - mean) * (sorted[i] - mean);
    int lo, hi;
    gb_stats_median_ci_ranks(n, 0.95, &lo, &hi);
    *out = (gb_stats){
        .n = n,
        .min = sorted[0],
        .max = sorted[n - 1],
        .mean = mean,
        .stddev = n > 1 ? sqrt(ss / (n - 1)) : 0.0,
        .median = gb_stats_quantile(sorted, n, 0.5),
        .q1 = gb_stats_quantile(sorted, n, 0.25),
        .q3 = gb_stats_quantile(sorted, n, 0.75),
        .ci_lo = sorted[lo],
        .ci_hi = sorted[hi],
    };
    free(sorted);
    return GB_OK;
}

double gb_stats_rel_ci(const gb_stats *stats)
{
    if (stats->n < 1 || stats->median <= 0.0) return INFINITY;
    return (stats->ci_hi - stats->ci_lo) / 2.0 / stats->median;
}
