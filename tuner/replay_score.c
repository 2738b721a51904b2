/* The autotuning methodology's score (replay.h, docs/replay.md): the space's
 * cut-offs and time axis, random search's analytic curve on it (smoothed by a
 * monotone cubic, PCHIP), a strategy's searches pooled into one best-so-far curve
 * by a decreasing isotonic regression, and the two set against the optimum.
 *
 * Numbers follow the package (autotuning_methodology 1.1.0): rounding is half to
 * even (rint), the axis is numpy's linspace, medians are numpy's. Where the package
 * fits its curve by bagging without a seed, this fits the plain isotonic
 * regression it bags, so the score is the same for the same seeds. */
#include "tuner/replay.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- numbers as numpy has them ---------------------------------------------------- */

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of sorted values (the mean of the two middle ones for an even n). */
static double median_sorted(const double *v, size_t n)
{
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double linspace_at(double start, double stop, int n, int i)
{
    if (n < 2) return start;
    if (i == n - 1) return stop;
    return start + (stop - start) / (n - 1) * i;
}

/* ---- the space ------------------------------------------------------------------------ */

/* Random search's expected best of k draws, as the package ranks it: the value at
 * 0-based place round(k (N + 1) / (k + 1)) of the valid times, worst first. */
static double random_best(const gb_score_space *sp, double k)
{
    double place = rint(k * ((double)sp->n + 1) / (k + 1));
    size_t i = place > (double)sp->n - 1 ? sp->n - 1 : (size_t)place;
    return sp->asc[sp->n - 1 - i];
}

/* Evaluations random search needs in expectation to reach percentile p: the first
 * place (worst first) at or under opt + (median - opt)(1 - p), i, gives
 * ceil(i / (N + 1 - i)). */
static int cutoff_fevals(const gb_score_space *sp, double p)
{
    double target = sp->optimum + (sp->median - sp->optimum) * (1 - p);
    size_t i = 0;
    while (i < sp->n && sp->asc[sp->n - 1 - i] > target)
        i++;
    return (int)ceil((double)i / ((double)sp->n + 1 - (double)i));
}

/* Evaluation costs: the median over the entries that have one, and the package's
 * "mean per evaluation" (the valid entries' mean, plus the invalid ones' mean
 * weighted by their share). Without costs each evaluation costs 1. */
static int costs(const gb_replay_table *t, gb_score_space *sp)
{
    double *c = malloc((t->n_entries ? t->n_entries : 1) * sizeof *c);
    if (!c) return GB_ENOMEM;
    size_t n = 0, n_valid = 0, n_invalid = 0;
    double valid = 0, invalid = 0;
    for (size_t i = 0; i < t->n_entries; i++) {
        double cost = t->entries[i].cost_s;
        if (!isfinite(cost)) continue;
        c[n++] = cost;
        if (t->entries[i].status == GB_TRIAL_OK)
            valid += cost, n_valid++;
        else
            invalid += cost, n_invalid++;
    }
    sp->costs_known = n > 0;
    if (n == 0) {
        sp->cost_median = sp->cost_per_eval = 1;
    } else {
        qsort(c, n, sizeof *c, by_value);
        sp->cost_median = median_sorted(c, n);
        sp->cost_per_eval = n_invalid == 0 ? valid / (double)n_valid
                            : n_valid == 0
                                ? invalid / (double)n_invalid
                                : valid / (double)n_valid +
                                      (double)n_invalid / (double)n * (invalid / (double)n_invalid);
    }
    free(c);
    return GB_OK;
}

/* ---- PCHIP: the monotone cubic scipy's PchipInterpolator fits ---------------------------- */

static int sign(double v)
{
    return (v > 0) - (v < 0);
}

static double pchip_end(double h0, double h1, double m0, double m1)
{
    double d = ((2 * h0 + h1) * m0 - h0 * m1) / (h0 + h1);
    if (sign(d) != sign(m0)) return 0;
    if (sign(m0) != sign(m1) && fabs(d) > 3 * fabs(m0)) return 3 * m0;
    return d;
}

/* The slopes at the n points (x increasing). */
static void pchip_slopes(const double *x, const double *y, int n, double *d)
{
    if (n == 2) {
        d[0] = d[1] = (y[1] - y[0]) / (x[1] - x[0]);
        return;
    }
    for (int k = 1; k < n - 1; k++) {
        double h0 = x[k] - x[k - 1], h1 = x[k + 1] - x[k];
        double m0 = (y[k] - y[k - 1]) / h0, m1 = (y[k + 1] - y[k]) / h1;
        if (m0 == 0 || m1 == 0 || (m0 > 0) != (m1 > 0)) {
            d[k] = 0;
            continue;
        }
        double w1 = 2 * h1 + h0, w2 = h1 + 2 * h0;
        d[k] = (w1 + w2) / (w1 / m0 + w2 / m1);
    }
    double h0 = x[1] - x[0], h1 = x[2] - x[1];
    d[0] = pchip_end(h0, h1, (y[1] - y[0]) / h0, (y[2] - y[1]) / h1);
    h0 = x[n - 1] - x[n - 2], h1 = x[n - 2] - x[n - 3];
    d[n - 1] = pchip_end(h0, h1, (y[n - 1] - y[n - 2]) / h0, (y[n - 2] - y[n - 3]) / h1);
}

static double pchip_at(const double *x, const double *y, const double *d, int n, double at)
{
    int k = 0;
    while (k < n - 2 && at > x[k + 1])
        k++;
    double h = x[k + 1] - x[k], s = (at - x[k]) / h, s2 = s * s, s3 = s2 * s;
    return y[k] * (2 * s3 - 3 * s2 + 1) + h * d[k] * (s3 - 2 * s2 + s) +
           y[k + 1] * (-2 * s3 + 3 * s2) + h * d[k + 1] * (s3 - s2);
}

/* Random search's curve on the axis: its expected best after round(t / cost)
 * evaluations (at least 1), smoothed through the distinct evaluation counts and
 * read at evenly spaced counts between the first and the last. */
static int baseline_curve(gb_score_space *sp)
{
    int r = sp->resolution, n = 0;
    double *f = malloc(3 * (size_t)r * sizeof *f);
    if (!f) return GB_ENOMEM;
    double *ux = f + r, *uy = f + 2 * r;
    for (int j = 0; j < r; j++) {
        f[j] = rint(fmax(sp->time[j] / sp->cost_per_eval, 1));
        sp->baseline[j] = random_best(sp, f[j]);
        if (n == 0 || f[j] != ux[n - 1]) ux[n] = f[j], uy[n++] = sp->baseline[j];
    }
    if (r > 2 && n >= 2) {
        double *d = malloc((size_t)n * sizeof *d);
        if (!d) return free(f), GB_ENOMEM;
        pchip_slopes(ux, uy, n, d);
        for (int j = 0; j < r; j++)
            sp->baseline[j] = pchip_at(ux, uy, d, n, linspace_at(f[0], f[r - 1], r, j));
        free(d);
    } else if (r > 2) {
        snprintf(sp->why, sizeof sp->why,
                 "random search's curve has one point over the range: nothing to smooth");
        sp->scorable = false;
    }
    free(f);
    return GB_OK;
}

int gb_score_space_init(const gb_replay_table *t, const gb_score_opts *o, gb_score_space *out,
                        gb_err *err)
{
    memset(out, 0, sizeof *out);
    out->resolution = o->resolution >= 2 ? o->resolution : 2;
    out->asc = malloc((t->n_entries ? t->n_entries : 1) * sizeof *out->asc);
    out->time = malloc((size_t)out->resolution * sizeof *out->time);
    out->baseline = malloc((size_t)out->resolution * sizeof *out->baseline);
    if (!out->asc || !out->time || !out->baseline || costs(t, out))
        return gb_score_space_free(out), gb_err_set(err, GB_ENOMEM, "out of memory");
    for (size_t i = 0; i < t->n_entries; i++)
        if (t->entries[i].status == GB_TRIAL_OK) out->asc[out->n++] = t->entries[i].ms;
    out->scorable = out->n >= 2;
    if (!out->scorable) {
        snprintf(out->why, sizeof out->why, "fewer than two configurations have a time");
        return GB_OK;
    }
    qsort(out->asc, out->n, sizeof *out->asc, by_value);
    out->optimum = out->asc[0];
    out->median = median_sorted(out->asc, out->n);
    out->fevals_start = cutoff_fevals(out, o->cutoff_start);
    out->fevals_end = cutoff_fevals(out, o->cutoff);
    double budget = ceil(out->fevals_end * 1.1);
    out->max_fevals = budget < (double)t->n_entries ? (int)budget : (int)t->n_entries;
    for (int j = 0; j < out->resolution; j++)
        out->time[j] = linspace_at(out->fevals_start * out->cost_median,
                                   out->fevals_end * out->cost_median, out->resolution, j);
    if (out->fevals_start >= out->fevals_end) {
        out->scorable = false;
        snprintf(out->why, sizeof out->why,
                 "both cut-offs fall at %d evaluation(s) of random search: the space is too "
                 "small for them",
                 out->fevals_end);
        return GB_OK;
    }
    if (baseline_curve(out))
        return gb_score_space_free(out), gb_err_set(err, GB_ENOMEM, "out of memory");
    for (int j = 0; out->scorable && j < out->resolution; j++)
        if (out->baseline[j] <= out->optimum) {
            out->scorable = false;
            snprintf(out->why, sizeof out->why,
                     "random search is expected at the optimum within the range (the score "
                     "would divide by 0): the space is too small for these cut-offs");
        }
    return GB_OK;
}

void gb_score_space_free(gb_score_space *s)
{
    if (!s) return;
    free(s->asc);
    free(s->time);
    free(s->baseline);
    memset(s, 0, sizeof *s);
}

/* ---- the strategy's curve -------------------------------------------------------------- */

typedef struct point {
    double x, rank;
} point;

static int by_x(const void *a, const void *b)
{
    double x = ((const point *)a)->x, y = ((const point *)b)->x;
    return (x > y) - (x < y);
}

/* The place of a time among the valid ones (the first equal one). */
static double rank_of(const gb_score_space *sp, double y)
{
    size_t lo = 0, hi = sp->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (sp->asc[mid] < y)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (double)lo;
}

/* A decreasing isotonic fit of the points, sorted by x: equal x pooled (their
 * mean, weighted by count), then pool adjacent violators. Leaves n knots in
 * kx, ky. */
static int isotonic(const point *p, int n, double *kx, double *ky, int *out_n)
{
    double *w = malloc((size_t)n * sizeof *w);
    int *len = malloc((size_t)n * sizeof *len);
    if (!w || !len) return free(w), free(len), GB_ENOMEM;
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (m > 0 && p[i].x == kx[m - 1]) {
            ky[m - 1] = (ky[m - 1] * w[m - 1] + p[i].rank) / (w[m - 1] + 1);
            w[m - 1] += 1;
            continue;
        }
        kx[m] = p[i].x, ky[m] = p[i].rank, w[m] = 1, m++;
    }
    /* blocks: value, weight and how many knots each spans */
    double *bv = malloc((size_t)m * sizeof *bv), *bw = malloc((size_t)m * sizeof *bw);
    if (!bv || !bw) return free(w), free(len), free(bv), free(bw), GB_ENOMEM;
    int nb = 0;
    for (int i = 0; i < m; i++) {
        bv[nb] = ky[i], bw[nb] = w[i], len[nb] = 1, nb++;
        while (nb > 1 && bv[nb - 2] < bv[nb - 1]) { /* not decreasing: pool */
            double wt = bw[nb - 2] + bw[nb - 1];
            bv[nb - 2] = (bv[nb - 2] * bw[nb - 2] + bv[nb - 1] * bw[nb - 1]) / wt;
            bw[nb - 2] = wt;
            len[nb - 2] += len[nb - 1];
            nb--;
        }
    }
    for (int b = 0, i = 0; b < nb; b++)
        for (int k = 0; k < len[b]; k++)
            ky[i++] = bv[b];
    *out_n = m;
    free(w), free(len), free(bv), free(bw);
    return GB_OK;
}

/* The fit read at x: linear between knots, the end knots' values outside. */
static double interpolate(const double *kx, const double *ky, int n, double x)
{
    if (x <= kx[0]) return ky[0];
    if (x >= kx[n - 1]) return ky[n - 1];
    int k = 0;
    while (kx[k + 1] < x)
        k++;
    return ky[k] + (ky[k + 1] - ky[k]) * (x - kx[k]) / (kx[k + 1] - kx[k]);
}

/* The points of the searches within the axis, with a margin of a tenth each side,
 * and where the searches stop: the median over them of their last valid time. */
static int pool(const gb_score_space *sp, const gb_score_run *runs, int n_runs, point **out,
                int *out_n, double *out_stop)
{
    int total = 0;
    for (int r = 0; r < n_runs; r++)
        total += runs[r].n;
    point *p = malloc(((size_t)total + 1) * sizeof *p);
    double *last = malloc(((size_t)n_runs + 1) * sizeof *last);
    if (!p || !last) return free(p), free(last), GB_ENOMEM;
    double lo = 0.9 * sp->time[0], hi = 1.1 * sp->time[sp->resolution - 1];
    int n = 0, n_last = 0;
    for (int r = 0; r < n_runs; r++) {
        double end = NAN;
        for (int e = 0; e < runs[r].n; e++) {
            if (isnan(runs[r].y[e])) continue;
            end = runs[r].x[e];
            if (runs[r].x[e] >= lo && runs[r].x[e] <= hi)
                p[n++] = (point){runs[r].x[e], rank_of(sp, runs[r].y[e])};
        }
        if (!isnan(end)) last[n_last++] = end;
    }
    qsort(last, (size_t)n_last, sizeof *last, by_value);
    *out_stop = n_last ? median_sorted(last, (size_t)n_last) : NAN;
    free(last);
    qsort(p, (size_t)n, sizeof *p, by_x);
    *out = p;
    *out_n = n;
    return GB_OK;
}

int gb_score_curve(const gb_score_space *sp, const gb_score_run *runs, int n_runs, double *curve,
                   double *out_score, gb_err *err)
{
    point *p = NULL;
    int n = 0, m = 0, r = sp->resolution;
    double stop;
    if (pool(sp, runs, n_runs, &p, &n, &stop)) return gb_err_set(err, GB_ENOMEM, "out of memory");
    if (n < 2) {
        free(p);
        return gb_err_set(err, GB_EINVAL,
                          "its searches give %d best-so-far point(s) within the range: too few "
                          "to fit a curve",
                          n);
    }
    double *kx = malloc(2 * (size_t)n * sizeof *kx);
    if (!kx || isotonic(p, n, kx, kx + n, &m)) {
        free(p), free(kx);
        return gb_err_set(err, GB_ENOMEM, "out of memory");
    }
    double sum = 0;
    int held = r;
    if (stop < sp->time[r - 1]) /* no search went on: the curve stays where they stopped */
        for (held = 0; held < r - 1 && sp->time[held] <= stop; held++)
            ;
    for (int j = 0; j < r; j++) {
        double rank = rint(interpolate(kx, kx + n, m, sp->time[j < held ? j : held]));
        size_t at = rank < 0 ? 0 : rank > (double)sp->n - 1 ? sp->n - 1 : (size_t)rank;
        double value = sp->asc[at];
        curve[j] = (value - sp->baseline[j]) / (sp->optimum - sp->baseline[j]);
        sum += curve[j];
    }
    *out_score = sum / r;
    free(p);
    free(kx);
    return GB_OK;
}

/* ---- running the strategy ---------------------------------------------------------------- */

typedef struct tracer {
    const gb_replay_table *t;
    const gb_score_space *sp;
    gb_score_run *run;
    double spent, best;
} tracer;

static void trace(void *ctx, const gb_observation *o)
{
    tracer *tr = ctx;
    const gb_replay_entry *e = gb_replay_find(tr->t, o->config.ordinal);
    double cost = e && isfinite(e->cost_s) ? e->cost_s : tr->sp->cost_median;
    tr->spent += tr->sp->costs_known ? cost : 1;
    if (o->status == GB_TRIAL_OK && (isnan(tr->best) || o->ms < tr->best)) tr->best = o->ms;
    tr->run->x[tr->run->n] = tr->spent;
    tr->run->y[tr->run->n++] = tr->best;
}

static int search_once(const gb_replay_table *t, const gb_score_space *sp,
                       const gb_strategy_kind *kind, const gb_score_opts *o, uint64_t seed,
                       gb_score_run *run, gb_err *err)
{
    gb_search search;
    gb_strategy *strategy = NULL;
    gb_offline_result res;
    tracer tr = {.t = t, .sp = sp, .run = run, .best = NAN};
    gb_offline_opts oo = {.max_evals = sp->max_fevals,
                          .batch = o->batch > 0 ? o->batch : 1,
                          .on_eval = trace,
                          .on_eval_ctx = &tr};
    int rc = gb_search_init(&search, &t->space, gb_replay_accept, (void *)t, seed, err);
    if (rc) return rc;
    rc = kind->create(&search, &strategy, err);
    if (rc == GB_OK)
        rc = gb_offline_search(strategy, gb_replay_objective, (void *)t, &oo, &res, err);
    gb_strategy_destroy(strategy);
    gb_search_free(&search);
    if (rc) gb_err_prefix(err, "strategy %s, seed %llu", kind->name, (unsigned long long)seed);
    return rc;
}

int gb_score_strategy(const gb_replay_table *t, const gb_score_space *sp,
                      const gb_strategy_kind *kind, const gb_score_opts *o, double *curve,
                      double *out_score, gb_err *err)
{
    int repeats = o->repeats > 0 ? o->repeats : 1, rc = GB_OK;
    gb_score_run *runs = calloc((size_t)repeats, sizeof *runs);
    double *buf = malloc(2 * (size_t)repeats * (size_t)(sp->max_fevals + 1) * sizeof *buf);
    if (!runs || !buf) rc = gb_err_set(err, GB_ENOMEM, "out of memory");
    for (int i = 0; rc == GB_OK && i < repeats; i++) {
        runs[i].x = buf + 2 * (size_t)i * (size_t)(sp->max_fevals + 1);
        runs[i].y = runs[i].x + sp->max_fevals + 1;
        rc = search_once(t, sp, kind, o, (uint64_t)i + 1, &runs[i], err);
    }
    if (rc == GB_OK) rc = gb_score_curve(sp, runs, repeats, curve, out_score, err);
    free(runs);
    free(buf);
    return rc;
}
