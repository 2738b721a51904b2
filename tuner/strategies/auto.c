/* auto: the default strategy, a portfolio of two searches that see each other's
 * results. After a few uniform samples, its proposals alternate between a model
 * and a descent. A Gaussian process (tuner/gp.h) models the run times over the
 * encoded parameters, and the model's proposal is the candidate with the lowest
 * optimistic bound on its time (the predicted time less KAPPA standard
 * deviations) among those likely to run at all. The descent is the local strategy
 * (tuner/strategies/local.c: first-improvement descent, kicks, restarts), told
 * every result: a fast configuration the model finds becomes its incumbent, and
 * its neighbours sharpen the model where it matters. The model finds good regions
 * in few evaluations; the descent still gets to the bottom of one where the model
 * can no longer tell the candidates apart (thousands of them, an isolated optimum).
 *
 * Candidates are valid unseen configurations: a pool of uniform samples kept from
 * ask to ask, the one-parameter neighbours of the best results and random
 * variations of them, grown by a few rounds of local search on the model itself
 * (the neighbours of the candidates it likes best). Configurations in flight, and
 * those already picked for the batch, are believed to take their predicted time:
 * the uncertainty around them shrinks and the next pick goes elsewhere. Without a
 * model (too few results, or none that can be fitted) the search takes the
 * neighbours of the best results, then uniform samples. See docs/search.md. */
#include "tuner/gp.h"
#include "tuner/strategy.h"

#include <gsl/gsl_cdf.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Uniform samples before the model and the descent lead: enough for a first
 * model, few enough that a budget of a dozen evaluations is not all sampling. */
#define N_INIT 5
/* Of every DESCENT_PERIOD proposals after those, DESCENT_SHARE are the descent's. */
#define DESCENT_PERIOD 2
#define DESCENT_SHARE  1
/* Successful results the model needs at least. */
#define MIN_OK 3
/* Candidates kept from uniform samples; spaces this small are scored whole. More
 * would spread the picks over the whole space, fewer would miss regions. */
#define POOL 512
/* Of the pool, how many are replaced by fresh samples at each ask. */
#define REFRESH (POOL / 8)
/* The best results whose neighbours and variations are candidates. */
#define N_TOP 5
/* Random variations (two or three parameters changed) of each of the best. */
#define N_VARIATIONS 48
/* Rounds of local search on the model, and the candidates whose neighbours join
 * in each round: that many by predicted time and as many by bound. */
#define EXPAND_ROUNDS 3
#define EXPAND_SEEDS  4
/* Observations the model is fitted to (the best half of them, then a spread of
 * the rest), and the fewer its hyperparameters are chosen on: bounds on the cost
 * of a proposal, whatever the number of results. */
#define MODEL_MAX 96
#define TUNE_MAX  64
/* The hyperparameters are chosen again when the results have grown by a quarter. */
#define RETUNE_GROWTH 1.25
/* Standard deviations in the optimistic bound: 2 is one chance in 44 that the
 * time is below it. */
#define KAPPA 2.0
/* The weight, in results, of the overall success rate in the estimate of a
 * candidate's chance to run, and the chance below which it is passed over. */
#define PRIOR_WEIGHT 1.0
#define MIN_ODDS     0.5

typedef struct candidate {
    uint64_t ordinal;
    bool expanded; /* its neighbours were added */
} candidate;

typedef struct cand_list {
    candidate *c;
    int n, cap;
} cand_list;

typedef struct auto_strategy {
    gb_strategy base;
    int dim;
    /* What was told: encodings, log run times (NAN: failed), ordinals. */
    double *x, *y;
    uint64_t *told;
    int n_told, n_ok, cap_told;
    /* Proposed, not told yet. */
    uint64_t *pending;
    int n_pending, cap_pending;
    /* Uniform samples, peeked (not claimed). */
    uint64_t *pool;
    int n_pool;
    gb_gp_hyper hyper;
    bool have_hyper;
    int n_at_tune;        /* successful results when the hyperparameters were last chosen */
    gb_strategy *descent; /* the local strategy, on the same search */
    uint64_t n_turns;     /* proposals after the uniform samples: whose turn it is */
} auto_strategy;

static int oom(gb_err *err)
{
    return gb_err_set(err, GB_ENOMEM, "auto strategy: out of memory");
}

/* ---- bookkeeping ------------------------------------------------------------- */

/* p with room for need elements of size bytes (*cap updated), or NULL with p
 * left as it was. */
static void *reserve(void *p, int *cap, int need, size_t size)
{
    if (need <= *cap) return p;
    int c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    void *q = realloc(p, (size_t)c * size);
    if (q) *cap = c;
    return q;
}

static int add_pending(auto_strategy *a, uint64_t ordinal, gb_err *err)
{
    uint64_t *p = reserve(a->pending, &a->cap_pending, a->n_pending + 1, sizeof *p);
    if (!p) return oom(err);
    a->pending = p;
    a->pending[a->n_pending++] = ordinal;
    return GB_OK;
}

static void drop_pending(auto_strategy *a, uint64_t ordinal)
{
    for (int i = 0; i < a->n_pending; i++)
        if (a->pending[i] == ordinal) {
            memmove(&a->pending[i], &a->pending[i + 1],
                    (size_t)(a->n_pending - i - 1) * sizeof *a->pending);
            a->n_pending--;
            return;
        }
}

static bool was_told(const auto_strategy *a, uint64_t ordinal)
{
    for (int i = 0; i < a->n_told; i++)
        if (a->told[i] == ordinal) return true;
    return false;
}

static int add_told(auto_strategy *a, const gb_observation *o, gb_err *err)
{
    if (a->n_told == a->cap_told) {
        size_t cap = a->cap_told ? 2 * (size_t)a->cap_told : 64;
        double *x = realloc(a->x, cap * (size_t)(a->dim + 1) * sizeof *x);
        if (x) a->x = x;
        double *y = x ? realloc(a->y, cap * sizeof *y) : NULL;
        if (y) a->y = y;
        uint64_t *told = y ? realloc(a->told, cap * sizeof *told) : NULL;
        if (!told) return oom(err);
        a->told = told, a->cap_told = (int)cap;
    }
    gb_search_encode(a->base.search, &o->config, &a->x[a->n_told * a->dim]);
    bool ok = o->status == GB_TRIAL_OK && isfinite(o->ms) && o->ms > 0;
    a->y[a->n_told] = ok ? log(o->ms) : NAN;
    a->told[a->n_told++] = o->config.ordinal;
    a->n_ok += ok;
    return GB_OK;
}

/* ---- the model ------------------------------------------------------------------ */

typedef struct ranked {
    double key;
    int i;
} ranked;

static int by_key(const void *p, const void *q)
{
    const ranked *a = p, *b = q;
    return a->key < b->key ? -1 : a->key > b->key ? 1 : a->i - b->i;
}

/* Indices (into idx, room for n_told) of at most max successful results, fastest
 * first: the best half of max, then an even spread of the others, so the model is
 * sharp where it matters and still knows what the rest looks like. The number of
 * them, or -1 on ENOMEM. */
static int select_ok(const auto_strategy *a, int max, int *idx)
{
    ranked *r = malloc((size_t)a->n_told * sizeof *r + 1);
    if (!r) return -1;
    int n = 0;
    for (int i = 0; i < a->n_told; i++)
        if (!isnan(a->y[i])) r[n++] = (ranked){a->y[i], i};
    qsort(r, (size_t)n, sizeof *r, by_key);
    int keep = n <= max ? n : max / 2, want = n <= max ? 0 : max - keep, rest = n - keep;
    for (int k = 0; k < keep; k++)
        idx[k] = r[k].i;
    for (int k = 0; k < want; k++)
        idx[keep + k] = r[keep + (int)((long)k * rest / want)].i;
    free(r);
    return keep + want;
}

/* The selected results as the model sees them: their encodings, and their ranks
 * as normal scores. Times spread over orders of magnitude, and a 10x slower
 * configuration would otherwise bend the model more than the 2% differences among
 * the fast ones that decide the search; ranks keep only the order. */
static void gather(const auto_strategy *a, const int *idx, int n, double *x, double *y)
{
    for (int k = 0; k < n; k++) {
        memcpy(&x[k * a->dim], &a->x[idx[k] * a->dim], (size_t)a->dim * sizeof *x);
        y[k] = gsl_cdf_ugaussian_Pinv((k + 0.5) / n); /* idx is in order of time */
    }
}

/* Fits the model to the results, choosing its hyperparameters again when the
 * results have grown enough. *out_ok false when there is no usable model. */
static int fit_model(auto_strategy *a, gb_gp *gp, bool *out_ok, gb_err *err)
{
    int *idx = malloc((size_t)a->n_told * sizeof *idx + 1), n;
    double *x = malloc((size_t)MODEL_MAX * (size_t)a->dim * sizeof *x + 1);
    double *y = malloc((size_t)MODEL_MAX * sizeof *y);
    int rc = idx && x && y ? GB_OK : oom(err);
    *out_ok = false;
    if (rc) goto cleanup;
    if (a->n_at_tune == 0 || a->n_ok >= RETUNE_GROWTH * a->n_at_tune) {
        if ((n = select_ok(a, TUNE_MAX, idx)) < 0) {
            rc = oom(err);
            goto cleanup;
        }
        gather(a, idx, n, x, y);
        bool tuned;
        const gb_gp_hyper *start = a->have_hyper ? &a->hyper : NULL;
        if ((rc = gb_gp_tune(a->dim, x, y, n, start, &a->hyper, &tuned, err))) goto cleanup;
        a->have_hyper = a->have_hyper || tuned;
        a->n_at_tune = a->n_ok;
    }
    if (!a->have_hyper) goto cleanup;
    if ((n = select_ok(a, MODEL_MAX, idx)) < 0) {
        rc = oom(err);
        goto cleanup;
    }
    gather(a, idx, n, x, y);
    rc = gb_gp_fit(gp, a->dim, x, y, n, &a->hyper, out_ok, err);
cleanup:
    free(idx), free(x), free(y);
    return rc;
}

/* ---- candidates ------------------------------------------------------------------- */

static int push(cand_list *l, uint64_t ordinal, gb_err *err)
{
    candidate *c = reserve(l->c, &l->cap, l->n + 1, sizeof *c);
    if (!c) return oom(err);
    l->c = c;
    l->c[l->n++] = (candidate){.ordinal = ordinal};
    return GB_OK;
}

static int by_ordinal(const void *p, const void *q)
{
    const candidate *a = p, *b = q;
    return a->ordinal < b->ordinal ? -1 : a->ordinal > b->ordinal;
}

/* Sorted by ordinal, each once. */
static void dedupe(cand_list *l)
{
    if (l->n == 0) return;
    qsort(l->c, (size_t)l->n, sizeof *l->c, by_ordinal);
    int k = 0;
    for (int i = 0; i < l->n; i++)
        if (k == 0 || l->c[k - 1].ordinal != l->c[i].ordinal) l->c[k++] = l->c[i];
    l->n = k;
}

/* Keeps the pool's unseen samples, replaces REFRESH of them (so that the pool
 * does not go stale) and tops it up to POOL; a small space is listed whole. */
static int add_pool(auto_strategy *a, cand_list *out, gb_err *err)
{
    gb_search *s = a->base.search;
    int rc = GB_OK;
    if (s->size <= POOL) {
        for (uint64_t o = 0; rc == GB_OK && o < s->size; o++) {
            bool ok;
            rc = gb_search_valid(s, o, &ok, err);
            if (rc == GB_OK && ok && !gb_search_seen(s, o)) rc = push(out, o, err);
        }
        return rc;
    }
    if (!a->pool && !(a->pool = malloc(POOL * sizeof *a->pool))) return oom(err);
    int k = 0;
    for (int i = 0; i < a->n_pool; i++)
        if (!gb_search_seen(s, a->pool[i])) a->pool[k++] = a->pool[i];
    a->n_pool = k;
    for (int r = 0; r < REFRESH && a->n_pool > 0; r++) {
        uint64_t i = gb_rng_below(&s->rng, (uint64_t)a->n_pool);
        a->pool[i] = a->pool[--a->n_pool];
    }
    while (a->n_pool < POOL) {
        gb_config c;
        rc = gb_search_peek_random(s, &c, err);
        if (rc == GB_ENOTFOUND) break;
        if (rc) return rc;
        a->pool[a->n_pool++] = c.ordinal;
    }
    for (int i = 0; i < a->n_pool; i++)
        if ((rc = push(out, a->pool[i], err))) return rc;
    return GB_OK;
}

/* The unseen one-parameter neighbours of the configuration at ordinal. */
static int add_neighbours(auto_strategy *a, uint64_t ordinal, cand_list *out, gb_err *err)
{
    gb_search *s = a->base.search;
    int max = gb_search_max_neighbours(s), n;
    gb_config c, *nb = malloc((size_t)(max > 0 ? max : 1) * sizeof *nb);
    if (!nb) return oom(err);
    gb_search_config(s, ordinal, &c);
    int rc = gb_search_neighbours(s, &c, 0, nb, max, &n, err);
    for (int i = 0; rc == GB_OK && i < n; i++)
        if (!gb_search_seen(s, nb[i].ordinal)) rc = push(out, nb[i].ordinal, err);
    free(nb);
    return rc;
}

/* Valid unseen configurations that differ from the one at ordinal in two or
 * three parameters: steps that one-parameter moves cannot take when the
 * constraints tie parameters together (a tile and the threads that cover it). */
static int add_variations(auto_strategy *a, uint64_t ordinal, cand_list *out, gb_err *err)
{
    gb_search *s = a->base.search;
    const gb_space *space = s->space;
    gb_config c;
    gb_search_config(s, ordinal, &c);
    for (int v = 0; v < N_VARIATIONS && s->size < UINT64_MAX; v++) { /* ordinals fit */
        int index[GB_MAX_PARAMS], changes = 2 + (int)gb_rng_below(&s->rng, 2);
        memcpy(index, c.index, sizeof index);
        for (int k = 0; k < changes; k++) {
            int p = (int)gb_rng_below(&s->rng, (uint64_t)space->n_params);
            index[p] = (int)gb_rng_below(&s->rng, (uint64_t)space->params[p].n_values);
        }
        uint64_t o = 0;
        for (int p = 0; p < space->n_params; p++)
            o = o * (uint64_t)space->params[p].n_values + (uint64_t)index[p];
        bool ok;
        int rc = gb_search_valid(s, o, &ok, err);
        if (rc == GB_OK && ok && !gb_search_seen(s, o)) rc = push(out, o, err);
        if (rc) return rc;
    }
    return GB_OK;
}

/* Neighbours and variations of the best few results. */
static int add_local(auto_strategy *a, cand_list *out, gb_err *err)
{
    int *idx = malloc((size_t)a->n_told * sizeof *idx + 1);
    int n = idx ? select_ok(a, N_TOP, idx) : -1, rc = n < 0 ? oom(err) : GB_OK;
    for (int k = 0; rc == GB_OK && k < n; k++) {
        rc = add_neighbours(a, a->told[idx[k]], out, err);
        if (rc == GB_OK) rc = add_variations(a, a->told[idx[k]], out, err);
    }
    free(idx);
    return rc;
}

/* ---- proposals without a model ------------------------------------------------------ */

/* Claims ordinal and returns it in out[*out_n]. */
static int propose(auto_strategy *a, uint64_t ordinal, gb_config *out, int *out_n, gb_err *err)
{
    bool fresh;
    int rc = gb_search_claim(a->base.search, ordinal, &fresh, err);
    if (rc || !fresh) return rc;
    if ((rc = add_pending(a, ordinal, err))) return rc;
    gb_search_config(a->base.search, ordinal, &out[(*out_n)++]);
    return GB_OK;
}

/* Uniform samples until n proposals or the space runs out. */
static int propose_random(auto_strategy *a, int n, gb_config *out, int *out_n, gb_err *err)
{
    while (*out_n < n) {
        gb_config c;
        int rc = gb_search_random(a->base.search, &c, err);
        if (rc == GB_ENOTFOUND) return GB_OK;
        if (rc || (rc = add_pending(a, c.ordinal, err))) return rc;
        out[(*out_n)++] = c;
    }
    return GB_OK;
}

/* The unseen neighbours and variations of the best results, nearest first, then
 * uniform samples. */
static int propose_local(auto_strategy *a, int n, gb_config *out, int *out_n, gb_err *err)
{
    cand_list l = {0};
    int rc = add_local(a, &l, err);
    for (int i = 0; rc == GB_OK && i < l.n && *out_n < n; i++)
        rc = propose(a, l.c[i].ordinal, out, out_n, err);
    free(l.c);
    return rc ? rc : propose_random(a, n, out, out_n, err);
}

/* ---- scoring candidates ------------------------------------------------------------------ */

/* The candidates of one ask and their posterior: the pending configurations come
 * first in the batch (believed, never picked), then the candidates. */
typedef struct scoring {
    auto_strategy *a;
    const gb_gp *gp;
    cand_list l;
    double *xs; /* the encodings of the batch's entries */
    gb_gp_batch b;
    int np;        /* pending entries */
    double *p_ok;  /* per entry: the chance to run; NAN until worked out */
    ranked *order; /* work */
    bool *taken;
} scoring;

static const candidate *entry(const scoring *sc, int j)
{
    return &sc->l.c[j - sc->np];
}

/* Entry j's chance to run: the overall success rate, corrected by the results near
 * it (weighted by the model's correlation). It costs a pass over every result, so
 * it is worked out only for the candidates that could be picked. */
static double odds(scoring *sc, int j)
{
    const auto_strategy *a = sc->a;
    if (a->n_ok == a->n_told) return 1.0;
    if (!isnan(sc->p_ok[j])) return sc->p_ok[j];
    double w_ok = PRIOR_WEIGHT * a->n_ok / a->n_told, w = PRIOR_WEIGHT;
    for (int i = 0; i < a->n_told; i++) {
        double r = gb_gp_correlation(sc->gp, &sc->xs[j * a->dim], &a->x[i * a->dim]);
        w += r, w_ok += isnan(a->y[i]) ? 0 : r;
    }
    return sc->p_ok[j] = w_ok / w;
}

static double bound(const scoring *sc, int j)
{
    return sc->b.mean[j] - KAPPA * sqrt(sc->b.var[j]);
}

/* The candidate to propose next: the lowest bound among those likely to run (or
 * the lowest, if none is); -1 when none is left. */
static int pick(scoring *sc)
{
    int n = 0;
    for (int j = sc->np; j < sc->b.m; j++)
        if (!sc->taken[j]) sc->order[n++] = (ranked){bound(sc, j), j};
    qsort(sc->order, (size_t)n, sizeof *sc->order, by_key);
    for (int k = 0; k < n; k++)
        if (odds(sc, sc->order[k].i) >= MIN_ODDS) return sc->order[k].i;
    return n > 0 ? sc->order[0].i : -1;
}

/* Encodes the candidates added since the last call and adds them to the posterior. */
static int score_more(scoring *sc, gb_err *err)
{
    auto_strategy *a = sc->a;
    gb_search *s = a->base.search;
    int m = sc->np + sc->l.n;
    double *xs = realloc(sc->xs, (size_t)m * (size_t)a->dim * sizeof *xs + 1);
    if (!xs) return oom(err);
    sc->xs = xs;
    for (int j = sc->b.m; j < m; j++) {
        gb_config c;
        gb_search_config(s, j < sc->np ? a->pending[j] : entry(sc, j)->ordinal, &c);
        gb_search_encode(s, &c, &xs[j * a->dim]);
    }
    return gb_gp_predict(sc->gp, xs, m, &sc->b, err);
}

static int by_value(const void *p, const void *q)
{
    uint64_t a = *(const uint64_t *)p, b = *(const uint64_t *)q;
    return a < b ? -1 : a > b;
}

/* Of the candidates from `from` on, keeps those not among the earlier ones, once. */
static int keep_new(cand_list *l, int from, gb_err *err)
{
    if (l->n == from) return GB_OK;
    uint64_t *known = malloc((size_t)from * sizeof *known + 1);
    if (!known) return oom(err);
    for (int i = 0; i < from; i++)
        known[i] = l->c[i].ordinal;
    qsort(known, (size_t)from, sizeof *known, by_value);
    qsort(&l->c[from], (size_t)(l->n - from), sizeof *l->c, by_ordinal);
    int k = from;
    for (int i = from; i < l->n; i++)
        if ((k == from || l->c[k - 1].ordinal != l->c[i].ordinal) &&
            !bsearch(&l->c[i].ordinal, known, (size_t)from, sizeof *known, by_value))
            l->c[k++] = l->c[i];
    l->n = k;
    free(known);
    return GB_OK;
}

/* Of the first n candidates, the one not expanded yet with the lowest bound (or
 * predicted time); -1 when none is left. */
static int best_unexpanded(const scoring *sc, int n, bool by_bound)
{
    int best = -1;
    double best_key = INFINITY;
    for (int i = 0; i < n; i++) {
        int j = sc->np + i;
        double key = by_bound ? bound(sc, j) : sc->b.mean[j];
        if (!sc->l.c[i].expanded && key < best_key) best_key = key, best = i;
    }
    return best;
}

/* A few rounds of local search on the model: the neighbours of the candidates with
 * the best bounds and predicted times become candidates too, so that a region the
 * model likes is looked at closely even where no sample fell. */
static int expand(scoring *sc, gb_err *err)
{
    for (int round = 0; round < EXPAND_ROUNDS; round++) {
        int from = sc->l.n, rc = GB_OK;
        for (int k = 0; rc == GB_OK && k < 2 * EXPAND_SEEDS; k++) {
            int i = best_unexpanded(sc, from, k % 2);
            if (i < 0) break;
            sc->l.c[i].expanded = true;
            rc = add_neighbours(sc->a, sc->l.c[i].ordinal, &sc->l, err);
        }
        if (rc || (rc = keep_new(&sc->l, from, err))) return rc;
        if (sc->l.n == from) break;
        if ((rc = score_more(sc, err))) return rc;
    }
    return GB_OK;
}

/* The model's proposals: candidates gathered and scored, the pending ones
 * believed, then picks, each believed in turn. */
static int propose_model(auto_strategy *a, const gb_gp *gp, int n, gb_config *out, int *out_n,
                         gb_err *err)
{
    scoring sc = {.a = a, .gp = gp, .np = a->n_pending};
    int rc = add_pool(a, &sc.l, err);
    if (rc == GB_OK) rc = add_local(a, &sc.l, err);
    if (rc) goto cleanup;
    dedupe(&sc.l);
    if ((rc = score_more(&sc, err)) || (rc = expand(&sc, err))) goto cleanup;
    int m = sc.b.m;
    sc.p_ok = malloc((size_t)m * sizeof *sc.p_ok + 1);
    sc.order = malloc((size_t)m * sizeof *sc.order + 1);
    sc.taken = calloc((size_t)m + 1, sizeof *sc.taken);
    if (!sc.p_ok || !sc.order || !sc.taken) {
        rc = oom(err);
        goto cleanup;
    }
    for (int j = 0; j < m; j++)
        sc.p_ok[j] = NAN;
    for (int j = 0; rc == GB_OK && j < sc.np; j++)
        rc = gb_gp_condition(gp, &sc.b, j, err);
    while (rc == GB_OK && *out_n < n) {
        int j = pick(&sc);
        if (j < 0) break;
        sc.taken[j] = true;
        if ((rc = propose(a, entry(&sc, j)->ordinal, out, out_n, err))) break;
        rc = gb_gp_condition(gp, &sc.b, j, err);
    }
cleanup:
    gb_gp_batch_free(&sc.b);
    free(sc.l.c), free(sc.xs), free(sc.p_ok), free(sc.order), free(sc.taken);
    return rc;
}

/* ---- the strategy ------------------------------------------------------------------------- */

/* The model's proposals, or, without one (too few results, or none that can be
 * fitted) or once its candidates run out, local search and uniform samples. */
static int propose_modelled(auto_strategy *a, int n, gb_config *out, int *out_n, gb_err *err)
{
    if (a->n_ok < MIN_OK || a->dim == 0) return propose_random(a, n, out, out_n, err);
    gb_gp gp = {0};
    bool model;
    int rc = fit_model(a, &gp, &model, err);
    if (rc == GB_OK && model) rc = propose_model(a, &gp, n, out, out_n, err);
    gb_gp_free(&gp);
    return rc || *out_n == n ? rc : propose_local(a, n, out, out_n, err);
}

/* Up to n of the descent's proposals, pending like the model's. */
static int propose_descent(auto_strategy *a, int n, gb_config *out, int *out_n, gb_err *err)
{
    int got, rc = gb_strategy_ask(a->descent, n - *out_n, &out[*out_n], &got, err);
    for (int i = 0; rc == GB_OK && i < got; i++)
        rc = add_pending(a, out[*out_n + i].ordinal, err);
    *out_n += got;
    return rc;
}

static int ask(gb_strategy *s, int n, gb_config *out, int *out_n, gb_err *err)
{
    auto_strategy *a = (auto_strategy *)s;
    int init_left = N_INIT - a->n_told - a->n_pending;
    int rc = propose_random(a, init_left < n ? init_left : n, out, out_n, err);
    if (rc || *out_n == n) return rc;
    /* The turns of this ask: so many to the descent, the rest to the model; what
     * one of them cannot propose (the descent waits on its results) the other does. */
    int turns = n - *out_n, to_descent = 0;
    for (int i = 0; i < turns; i++)
        to_descent += (a->n_turns + (uint64_t)i) % DESCENT_PERIOD < DESCENT_SHARE;
    a->n_turns += (uint64_t)turns;
    int want = *out_n + to_descent;
    if ((rc = propose_descent(a, want, out, out_n, err)) || *out_n == n) return rc;
    /* Only when the model has a turn: fitting it and scoring its candidates is
     * nearly all of an ask's cost, wasted on a turn the descent has filled. */
    if ((rc = propose_modelled(a, n, out, out_n, err)) || *out_n == n) return rc;
    return propose_descent(a, n, out, out_n, err);
}

static int tell(gb_strategy *s, const gb_observation *obs, int n, gb_err *err)
{
    auto_strategy *a = (auto_strategy *)s;
    int rc = gb_strategy_tell(a->descent, obs, n, err);
    if (rc) return rc;
    for (int i = 0; i < n; i++) {
        uint64_t o = obs[i].config.ordinal;
        drop_pending(a, o);
        if (was_told(a, o)) continue;
        bool fresh; /* a recorded result was never proposed, and must not be */
        rc = gb_search_claim(s->search, o, &fresh, err);
        if (rc || (rc = add_told(a, &obs[i], err))) return rc;
    }
    return GB_OK;
}

static void destroy(gb_strategy *s)
{
    auto_strategy *a = (auto_strategy *)s;
    if (!a) return;
    free(a->x), free(a->y), free(a->told), free(a->pending), free(a->pool);
    gb_strategy_destroy(a->descent);
    free(a);
}

static const gb_strategy_ops OPS = {ask, tell, destroy};

int gb_strategy_auto(gb_search *search, gb_strategy **out, gb_err *err)
{
    auto_strategy *a = calloc(1, sizeof *a);
    if (!a) return oom(err);
    a->base = (gb_strategy){&OPS, search};
    a->dim = search->space->n_params;
    int rc = gb_strategy_local(search, &a->descent, err);
    if (rc) {
        free(a);
        return rc;
    }
    *out = &a->base;
    return GB_OK;
}
