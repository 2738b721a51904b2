/*
 * Summary statistics of timing samples. The confidence interval of the median is
 * distribution-free: it is the pair of order statistics that the binomial
 * distribution Bin(n, 1/2) puts around the middle, so it holds for the skewed,
 * long-tailed distributions that GPU timings have.
 */
#ifndef GB_ENGINE_STATS_H
#define GB_ENGINE_STATS_H

typedef struct gb_stats {
    int n;
    double min;
    double max;
    double mean;
    double stddev; /* sample standard deviation (n - 1) */
    double median;
    double q1; /* quartiles, linear interpolation between order statistics */
    double q3;
    double ci_lo; /* 95% confidence interval of the median */
    double ci_hi;
} gb_stats;

/* Summarises n samples (n >= 1; the array is not modified). GB_EINVAL for n < 1,
 * GB_ENOMEM when the sorted copy cannot be made. */
int gb_stats_compute(const double *samples, int n, gb_stats *out);

/* The quantile q in [0, 1] of sorted[0..n), interpolating linearly. */
double gb_stats_quantile(const double *sorted, int n, double q);

/* 0-based ranks (lo, hi) of the order statistics that bound the median with at least
 * the given confidence (e.g. 0.95). For n too small to reach it, the extremes. */
void gb_stats_median_ci_ranks(int n, double confidence, int *out_lo, int *out_hi);

/* Half the width of the median's CI relative to the median: 0.004 means ±0.4%. */
double gb_stats_rel_ci(const gb_stats *stats);

#endif
