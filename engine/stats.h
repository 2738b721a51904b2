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

/* The wire description (base/wire.h; the table is engine/wire_types.c's
 * gb_wire_stats): the JSON names are the cache records', in milliseconds; Lua's
 * results tables use the short names. Times are >= 0; null stands for NaN. */
#define GB_STATS_WIRE(X)                                                                           \
    X(n, INT, "n", GB_WIRE_RANGE(0, INT_MAX))                                                      \
    X(min, DOUBLE, "min_ms", .lua = "min", GB_WIRE_TIME)                                           \
    X(max, DOUBLE, "max_ms", .lua = "max", GB_WIRE_TIME)                                           \
    X(mean, DOUBLE, "mean_ms", .lua = "mean", GB_WIRE_TIME)                                        \
    X(stddev, DOUBLE, "stddev_ms", .lua = "stddev", GB_WIRE_TIME)                                  \
    X(median, DOUBLE, "median_ms", .lua = "median", GB_WIRE_TIME)                                  \
    X(q1, DOUBLE, "q1_ms", .lua = "q1", GB_WIRE_TIME)                                              \
    X(q3, DOUBLE, "q3_ms", .lua = "q3", GB_WIRE_TIME)                                              \
    X(ci_lo, DOUBLE, "ci_lo_ms", .lua = "ci_lo", GB_WIRE_TIME)                                     \
    X(ci_hi, DOUBLE, "ci_hi_ms", .lua = "ci_hi", GB_WIRE_TIME)

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
