/*
 * A Gaussian-process model of a function on [0, 1]^dim: the surrogate the auto
 * strategy (strategies/auto.c) searches with, over configurations encoded by
 * gb_search_encode and their log run times.
 *
 * The kernel is Matérn 5/2 with one length scale per dimension, so a parameter
 * that does not matter gets a long scale and stops pulling the model around. The
 * targets are standardised; the signal variance is profiled out of the likelihood
 * and the length scales and the noise (a nugget, relative to the signal) are
 * chosen by maximising it over a grid, one dimension at a time. All the linear
 * algebra is GSL's: a Cholesky factorisation of the kernel matrix, triangular
 * solves through its BLAS.
 *
 * A batch (gb_gp_batch) holds the posterior at a set of candidates and can be
 * conditioned on some of them as if they had been observed at the predicted mean
 * (the "kriging believer"): the mean stays, the variance near them shrinks. That
 * is how configurations still being timed, and those already picked for the same
 * batch, push the next pick elsewhere, at the cost of one kernel row each.
 *
 * GSL's default error handler aborts the process; gb_gp_fit turns it off (for
 * the whole process) and reads the status codes instead.
 */
#ifndef GB_TUNER_GP_H
#define GB_TUNER_GP_H

#include "base/error.h"
#include "tuner/space.h"

#include <stdbool.h>

typedef struct gb_gp {
    int dim;
    int n;                        /* observations in the model */
    double *x;                    /* n × dim, row-major */
    double *alpha;                /* R^-1 (y - mean), standardised */
    double *chol;                 /* n × n: the lower Cholesky factor of R (row-major) */
    double y_mean, y_scale;       /* standardisation of the targets */
    double length[GB_MAX_PARAMS]; /* per-dimension length scales */
    double noise;                 /* the nugget, relative to the signal variance */
    double signal;                /* the signal variance, in standardised units */
    double best_y;                /* the smallest target, standardised */
} gb_gp;

typedef struct gb_gp_hyper {
    double length[GB_MAX_PARAMS];
    double noise;
} gb_gp_hyper;

/* Chooses hyperparameters for the observations (x: n × dim, y: n targets) by the
 * largest penalised marginal likelihood; start (may be NULL) is where the search
 * begins, so a refit moves from the last choice. *out_ok false when no choice
 * gave a positive-definite kernel matrix. GB_ENOMEM. */
int gb_gp_tune(int dim, const double *x, const double *y, int n, const gb_gp_hyper *start,
               gb_gp_hyper *out, bool *out_ok, gb_err *err);

/* Conditions the model on n observations with the given hyperparameters (x and y
 * copied). *out_ok false when the kernel matrix is not positive definite even
 * with extra jitter: the model is then empty and the caller must do without.
 * GB_ENOMEM. */
int gb_gp_fit(gb_gp *gp, int dim, const double *x, const double *y, int n, const gb_gp_hyper *h,
              bool *out_ok, gb_err *err);

/* Frees what the model holds; it can be fitted again. NULL is a no-op. */
void gb_gp_free(gb_gp *gp);

/* The kernel's correlation between two points (1 at distance 0). */
double gb_gp_correlation(const gb_gp *gp, const double *a, const double *b);

/* The posterior at m candidates, in standardised units. */
typedef struct gb_gp_batch {
    int m;
    const double *xs; /* m × dim, borrowed */
    double *mean;     /* m */
    double *var;      /* m: the latent function's variance, conditioned on picks */
    double *v;        /* m × n: k(candidate, X) L^-T, row by row */
    double *u;        /* picks × m: the rank-one updates made so far */
    int cap, n_picks, cap_picks;
} gb_gp_batch;

/* The posterior mean and variance at the candidates xs[b->m .. m) (xs: m × dim,
 * kept borrowed; the earlier candidates must be where they were): a zeroed batch
 * gets all of them, and more can be added until the first gb_gp_condition.
 * GB_EINVAL after a condition, GB_ENOMEM. */
int gb_gp_predict(const gb_gp *gp, const double *xs, int m, gb_gp_batch *b, gb_err *err);

/* Conditions the batch on candidate j observed at its mean: the variance of the
 * candidates near it shrinks. A configuration in flight goes into the batch as a
 * candidate that is conditioned on and never picked. GB_ENOMEM. */
int gb_gp_condition(const gb_gp *gp, gb_gp_batch *b, int j, gb_err *err);

void gb_gp_batch_free(gb_gp_batch *b);

#endif
