/* The Gaussian-process surrogate of the auto strategy: Matérn 5/2 with per-dimension
 * length scales, hyperparameters by a grid search of the profiled likelihood,
 * posteriors and kriging-believer conditioning. Linear algebra through GSL. */
#include "tuner/gp.h"

#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The length scales tried, in units of the encoded [0, 1] range: from "only the
 * neighbouring value is alike" to "this parameter hardly matters". */
static const double LENGTHS[] = {0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 6.4, 12.8, 25.6};
#define N_LENGTHS (int)(sizeof LENGTHS / sizeof LENGTHS[0])
/* The nuggets tried, relative to the signal variance: timing noise is about a
 * percent, but a table's cliffs (a tile that spills registers) look like noise to
 * a smooth model too. */
static const double NOISES[] = {1e-6, 1e-4, 1e-3, 1e-2, 0.05, 0.2};
#define N_NOISES (int)(sizeof NOISES / sizeof NOISES[0])
/* The log-normal prior on each length scale that keeps a handful of points from
 * choosing extreme scales: centred on 1.4, a factor e^0.75 (about 2) either way
 * per sigma. Centred on 0.5 it held the model to short scales, which over a
 * dozen parameters and a few dozen results predict the mean everywhere but next
 * to a result; 1.4 lets a trend along a parameter carry (docs/search.md). */
#define PRIOR_LENGTH 1.4
#define PRIOR_SIGMA  0.75
#define SWEEPS       2

static double matern52(double r2)
{
    double r = sqrt(5.0 * r2);
    return (1.0 + r + 5.0 * r2 / 3.0) * exp(-r);
}

static double scaled_r2(const double *a, const double *b, const double *length, int dim)
{
    double r2 = 0;
    for (int k = 0; k < dim; k++) {
        double d = (a[k] - b[k]) / length[k];
        r2 += d * d;
    }
    return r2;
}

double gb_gp_correlation(const gb_gp *gp, const double *a, const double *b)
{
    return matern52(scaled_r2(a, b, gp->length, gp->dim));
}

static void standardise(const double *y, int n, double *out, double *out_mean, double *out_scale)
{
    double mean = 0, ss = 0;
    for (int i = 0; i < n; i++)
        mean += y[i];
    mean /= n;
    for (int i = 0; i < n; i++)
        ss += (y[i] - mean) * (y[i] - mean);
    double scale = n > 1 && ss > 0 ? sqrt(ss / (n - 1)) : 1.0;
    for (int i = 0; i < n; i++)
        out[i] = (y[i] - mean) / scale;
    *out_mean = mean, *out_scale = scale;
}

/* ---- the likelihood ------------------------------------------------------- */

/* What the grid search evaluates again and again: the squared differences of every
 * pair of points per dimension, so that a new set of length scales costs a sum. */
typedef struct tune_ctx {
    int dim, n;
    const double *y; /* standardised */
    double *diff2;   /* pairs × dim */
    double *r;       /* n × n work */
    double *alpha;   /* n work */
} tune_ctx;

/* R (lower triangle and diagonal) for the length scales and nugget. */
static void fill_r(const tune_ctx *t, const double *length, double noise)
{
    double inv2[GB_MAX_PARAMS];
    for (int k = 0; k < t->dim; k++)
        inv2[k] = 1.0 / (length[k] * length[k]);
    const double *d = t->diff2;
    for (int i = 0; i < t->n; i++) {
        for (int j = 0; j < i; j++, d += t->dim) {
            double r2 = 0;
            for (int k = 0; k < t->dim; k++)
                r2 += d[k] * inv2[k];
            t->r[i * t->n + j] = t->r[j * t->n + i] = matern52(r2);
        }
        t->r[i * t->n + i] = 1.0 + noise;
    }
}

static double log_prior(const double *length, int dim)
{
    double lp = 0;
    for (int k = 0; k < dim; k++) {
        double z = log(length[k] / PRIOR_LENGTH) / PRIOR_SIGMA;
        lp -= 0.5 * z * z;
    }
    return lp;
}

/* The profiled log likelihood (signal variance at its best value) plus the prior;
 * -INFINITY when R is not positive definite. */
static double score(tune_ctx *t, const double *length, double noise)
{
    fill_r(t, length, noise);
    gsl_matrix_view r = gsl_matrix_view_array(t->r, (size_t)t->n, (size_t)t->n);
    if (gsl_linalg_cholesky_decomp1(&r.matrix) != GSL_SUCCESS) return -INFINITY;
    gsl_vector_const_view y = gsl_vector_const_view_array(t->y, (size_t)t->n);
    gsl_vector_view a = gsl_vector_view_array(t->alpha, (size_t)t->n);
    if (gsl_linalg_cholesky_solve(&r.matrix, &y.vector, &a.vector) != GSL_SUCCESS) return -INFINITY;
    double quad, log_det = 0;
    gsl_blas_ddot(&y.vector, &a.vector, &quad);
    for (int i = 0; i < t->n; i++)
        log_det += log(t->r[i * t->n + i]);
    if (!(quad > 0) || !isfinite(log_det)) return -INFINITY;
    return -0.5 * t->n * log(quad / t->n) - log_det + log_prior(length, t->dim);
}

/* One length scale for every dimension, with each nugget: where the search starts
 * when there is no earlier choice. */
static double start_shared(tune_ctx *t, gb_gp_hyper *h)
{
    double best = -INFINITY;
    gb_gp_hyper trial = {0};
    for (int g = 0; g < N_LENGTHS; g++)
        for (int e = 0; e < N_NOISES; e++) {
            for (int k = 0; k < t->dim; k++)
                trial.length[k] = LENGTHS[g];
            trial.noise = NOISES[e];
            double sc = score(t, trial.length, trial.noise);
            if (sc > best) best = sc, *h = trial;
        }
    return best;
}

/* Each dimension's length scale in turn over the grid, then the nugget. */
static double sweep(tune_ctx *t, gb_gp_hyper *h, double best)
{
    for (int k = 0; k < t->dim; k++) {
        double keep = h->length[k];
        for (int g = 0; g < N_LENGTHS; g++) {
            if (LENGTHS[g] == keep) continue;
            h->length[k] = LENGTHS[g];
            double sc = score(t, h->length, h->noise);
            if (sc > best) best = sc, keep = LENGTHS[g];
        }
        h->length[k] = keep;
    }
    double keep = h->noise;
    for (int e = 0; e < N_NOISES; e++) {
        double sc = NOISES[e] == keep ? -INFINITY : score(t, h->length, NOISES[e]);
        if (sc > best) best = sc, keep = NOISES[e];
    }
    h->noise = keep;
    return best;
}

int gb_gp_tune(int dim, const double *x, const double *y, int n, const gb_gp_hyper *start,
               gb_gp_hyper *out, bool *out_ok, gb_err *err)
{
    gsl_set_error_handler_off();
    *out_ok = false;
    size_t pairs = (size_t)n * (size_t)(n - 1) / 2;
    tune_ctx t = {.dim = dim, .n = n};
    double *ys = malloc((size_t)n * sizeof *ys), mean, scale;
    t.diff2 = malloc((pairs ? pairs : 1) * (size_t)dim * sizeof *t.diff2 + 1);
    t.r = malloc((size_t)n * (size_t)n * sizeof *t.r);
    t.alpha = malloc((size_t)n * sizeof *t.alpha);
    int rc = ys && t.diff2 && t.r && t.alpha ? GB_OK : GB_ENOMEM;
    if (rc || n < 2 || dim < 1) goto cleanup;
    standardise(y, n, ys, &mean, &scale);
    t.y = ys;
    double *d = t.diff2;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++, d += dim)
            for (int k = 0; k < dim; k++)
                d[k] = (x[i * dim + k] - x[j * dim + k]) * (x[i * dim + k] - x[j * dim + k]);
    gb_gp_hyper h;
    double best;
    if (start) {
        h = *start;
        best = score(&t, h.length, h.noise);
    } else {
        best = start_shared(&t, &h);
    }
    for (int s = 0; s < SWEEPS; s++)
        best = sweep(&t, &h, best);
    if (isfinite(best)) *out = h, *out_ok = true;
cleanup:
    free(ys), free(t.diff2), free(t.r), free(t.alpha);
    return rc ? gb_err_set(err, rc, "gaussian process: out of memory") : GB_OK;
}

/* ---- the posterior --------------------------------------------------------- */

void gb_gp_free(gb_gp *gp)
{
    if (!gp) return;
    free(gp->x), free(gp->alpha), free(gp->chol);
    memset(gp, 0, sizeof *gp);
}

/* R with the nugget, factorised in place; false when not positive definite. */
static bool factorise(gb_gp *gp, double noise)
{
    int n = gp->n;
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < i; j++)
            gp->chol[i * n + j] = gp->chol[j * n + i] =
                gb_gp_correlation(gp, &gp->x[i * gp->dim], &gp->x[j * gp->dim]);
        gp->chol[i * n + i] = 1.0 + noise;
    }
    gsl_matrix_view l = gsl_matrix_view_array(gp->chol, (size_t)n, (size_t)n);
    return gsl_linalg_cholesky_decomp1(&l.matrix) == GSL_SUCCESS;
}

/* alpha = R^-1 y, and the signal variance at its most likely value. */
static bool solve(gb_gp *gp, const double *ys)
{
    int n = gp->n;
    gsl_matrix_view l = gsl_matrix_view_array(gp->chol, (size_t)n, (size_t)n);
    gsl_vector_const_view y = gsl_vector_const_view_array(ys, (size_t)n);
    gsl_vector_view a = gsl_vector_view_array(gp->alpha, (size_t)n);
    if (gsl_linalg_cholesky_solve(&l.matrix, &y.vector, &a.vector) != GSL_SUCCESS) return false;
    double quad;
    gsl_blas_ddot(&y.vector, &a.vector, &quad);
    gp->signal = quad / n;
    return isfinite(quad) && quad > 0;
}

int gb_gp_fit(gb_gp *gp, int dim, const double *x, const double *y, int n, const gb_gp_hyper *h,
              bool *out_ok, gb_err *err)
{
    gsl_set_error_handler_off();
    gb_gp_free(gp);
    *out_ok = false;
    *gp = (gb_gp){.dim = dim, .n = n, .noise = h->noise};
    memcpy(gp->length, h->length, sizeof gp->length);
    gp->x = malloc((size_t)n * (size_t)dim * sizeof *gp->x + 1);
    gp->alpha = malloc((size_t)n * sizeof *gp->alpha + 1);
    gp->chol = malloc((size_t)n * (size_t)n * sizeof *gp->chol + 1);
    double *ys = malloc((size_t)n * sizeof *ys + 1);
    if (!gp->x || !gp->alpha || !gp->chol || !ys) {
        free(ys);
        gb_gp_free(gp);
        return gb_err_set(err, GB_ENOMEM, "gaussian process: out of memory");
    }
    memcpy(gp->x, x, (size_t)n * (size_t)dim * sizeof *x);
    standardise(y, n, ys, &gp->y_mean, &gp->y_scale);
    gp->best_y = INFINITY;
    for (int i = 0; i < n; i++)
        gp->best_y = fmin(gp->best_y, ys[i]);
    /* More jitter each time the factorisation fails: near-duplicate points under
     * long length scales make R singular in floating point. */
    for (double noise = fmax(h->noise, 1e-8); noise <= 0.5 && !*out_ok; noise *= 10) {
        gp->noise = noise;
        *out_ok = n > 0 && factorise(gp, noise) && solve(gp, ys);
    }
    free(ys);
    if (!*out_ok) gb_gp_free(gp);
    return GB_OK;
}

void gb_gp_batch_free(gb_gp_batch *b)
{
    if (!b) return;
    free(b->mean), free(b->var), free(b->v), free(b->u);
    memset(b, 0, sizeof *b);
}

/* Room for m candidates in every array of the batch. */
static int reserve(gb_gp_batch *b, int n, int m)
{
    if (m <= b->cap) return GB_OK;
    int cap = b->cap ? b->cap : 256;
    while (cap < m)
        cap *= 2;
    double *mean = realloc(b->mean, (size_t)cap * sizeof *mean);
    if (mean) b->mean = mean;
    double *var = mean ? realloc(b->var, (size_t)cap * sizeof *var) : NULL;
    if (var) b->var = var;
    double *v = var ? realloc(b->v, (size_t)cap * (size_t)n * sizeof *v + 1) : NULL;
    if (!v) return GB_ENOMEM;
    b->v = v, b->cap = cap;
    return GB_OK;
}

int gb_gp_predict(const gb_gp *gp, const double *xs, int m, gb_gp_batch *b, gb_err *err)
{
    int n = gp->n, first = b->m;
    if (b->n_picks > 0 || m < first)
        return gb_err_set(err, GB_EINVAL, "gaussian process: candidates added after a pick");
    if (reserve(b, n, m)) return gb_err_set(err, GB_ENOMEM, "gaussian process: out of memory");
    b->xs = xs, b->m = m;
    if (m == first || n == 0) return GB_OK;
    /* Row j of v: the correlations of candidate j with the observations, then
     * solved against L^T (v = k L^-T), so the variance is 1 - |v_j|^2. */
    int k = m - first;
    double *v = &b->v[(size_t)first * (size_t)n];
    for (int j = 0; j < k; j++)
        for (int i = 0; i < n; i++)
            v[j * n + i] = gb_gp_correlation(gp, &gp->x[i * gp->dim], &xs[(first + j) * gp->dim]);
    gsl_matrix_view vm = gsl_matrix_view_array(v, (size_t)k, (size_t)n);
    gsl_vector_const_view alpha = gsl_vector_const_view_array(gp->alpha, (size_t)n);
    gsl_vector_view mean = gsl_vector_view_array(&b->mean[first], (size_t)k);
    gsl_blas_dgemv(CblasNoTrans, 1.0, &vm.matrix, &alpha.vector, 0.0, &mean.vector);
    gsl_matrix_const_view l = gsl_matrix_const_view_array(gp->chol, (size_t)n, (size_t)n);
    gsl_blas_dtrsm(CblasRight, CblasLower, CblasTrans, CblasNonUnit, 1.0, &l.matrix, &vm.matrix);
    for (int j = 0; j < k; j++) {
        gsl_vector_const_view row = gsl_vector_const_view_array(&v[j * n], (size_t)n);
        double q = gsl_blas_dnrm2(&row.vector);
        b->var[first + j] = gp->signal * fmax(1.0 - q * q, 0.0);
    }
    return GB_OK;
}

int gb_gp_condition(const gb_gp *gp, gb_gp_batch *b, int j, gb_err *err)
{
    int m = b->m, n = gp->n;
    if (b->n_picks == b->cap_picks) {
        int cap = b->cap_picks ? 2 * b->cap_picks : 8;
        double *grown = realloc(b->u, (size_t)cap * (size_t)m * sizeof *grown + 1);
        if (!grown) return gb_err_set(err, GB_ENOMEM, "gaussian process: out of memory");
        b->u = grown, b->cap_picks = cap;
    }
    double *u = &b->u[(size_t)b->n_picks * (size_t)m];
    /* The prior covariance with j, less what the observations explain ... */
    for (int a = 0; a < m; a++)
        u[a] = gb_gp_correlation(gp, &b->xs[a * gp->dim], &b->xs[j * gp->dim]);
    gsl_vector_view uv = gsl_vector_view_array(u, (size_t)m);
    if (n > 0) {
        gsl_matrix_const_view v = gsl_matrix_const_view_array(b->v, (size_t)m, (size_t)n);
        gsl_vector_const_view vj = gsl_matrix_const_row(&v.matrix, (size_t)j);
        gsl_blas_dgemv(CblasNoTrans, -1.0, &v.matrix, &vj.vector, 1.0, &uv.vector);
    }
    gsl_blas_dscal(gp->signal, &uv.vector);
    /* ... and what the earlier picks explain. */
    if (b->n_picks > 0) {
        gsl_matrix_const_view up = gsl_matrix_const_view_array(b->u, (size_t)b->n_picks, (size_t)m);
        gsl_vector_const_view uj = gsl_matrix_const_column(&up.matrix, (size_t)j);
        gsl_blas_dgemv(CblasTrans, -1.0, &up.matrix, &uj.vector, 1.0, &uv.vector);
    }
    double denom = sqrt(b->var[j] + gp->signal * gp->noise);
    for (int a = 0; a < m; a++) {
        u[a] = denom > 0 ? u[a] / denom : 0;
        b->var[a] = fmax(b->var[a] - u[a] * u[a], 0.0);
    }
    b->n_picks++;
    return GB_OK;
}
