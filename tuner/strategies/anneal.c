/* anneal: simulated annealing over one-parameter neighbours, on log(time), with
 * restarts from a fresh uniform sample once a cold walk stops improving.
 *
 * A run starts at the first configuration of it that runs (uniform samples until
 * one does) and proposes random one-parameter moves from its current
 * configuration. Each result of the run is a candidate move: taken when it is no
 * slower, else with probability exp(-(log slower - log current) / T). T starts
 * where the mean uphill move met so far is taken with odds P_START and falls
 * geometrically with the run's evaluations, 50-fold over COOL_MIN..COOL_MAX of
 * them, after which the walk is greedy; a cold run that has not beaten its own
 * best for a while, or whose current configuration has no unseen neighbour left,
 * ends, and the next one starts from a fresh uniform sample.
 *
 * Asks run ahead of tells: every proposal is a neighbour of the current
 * configuration when it was made, and results are taken in the order they come.
 * Results of a run that has ended are kept in the book (never proposed again) but
 * no longer move anything. A recorded trial is a candidate that is taken only
 * when it is no slower (or when the run has no current configuration yet), so a
 * resumed run starts its walk from the best of its records. Failures cost
 * +infinity: never taken. */
#include "tuner/strategies/book.h"

#include <math.h>
#include <stdlib.h>

#define P_START      0.1  /* the odds of taking a typical uphill move, at first ... */
#define T_END_RATIO  0.02 /* ... and at the end: T falls 50-fold, the odds to 0.1^50 */
#define NEAR         0.5  /* a move goes to an adjacent value this often, else anywhere */
#define MOVE_TRIES   16   /* random moves to try before listing the neighbourhood */
#define COOL_MIN     40   /* evaluations from the start to the end of the schedule: */
#define COOL_MAX     300  /* 3 per neighbour, within what a budget usually allows */
#define PATIENCE_MIN 20   /* results without a gain that end a cold run: */
#define PATIENCE_MAX 100  /* 1 per neighbour, within the same bounds */

typedef struct anneal {
    gb_strategy base;
    gb_book book;
    uint32_t run; /* restarts so far; the tag of every proposal */
    bool has_current;
    gb_config current;
    double current_cost;
    double run_best;   /* the lowest cost this run met */
    int run_evals;     /* results of this run told */
    int since_gain;    /* of them, since run_best last fell */
    double uphill_sum; /* the uphill moves considered, in log(ms): the landscape's scale */
    int n_uphill;
    int cool_evals;    /* evaluations from the start of the schedule to its end */
    int patience;      /* a cold run ends after this many results without a gain */
    gb_config *around; /* room for the whole neighbourhood */
    int max_around;
} anneal;

static int clamp(int x, int lo, int hi)
{
    return x < lo ? lo : x > hi ? hi : x;
}

/* The starting temperature takes the mean uphill move with odds P_START: the
 * scale of the objective's steps (a few % for one kernel, tens of % for another)
 * is learnt from the walk itself instead of assumed. */
static double temperature(const anneal *a)
{
    double f = a->run_evals >= a->cool_evals ? 1 : (double)a->run_evals / a->cool_evals;
    double t_start = a->uphill_sum / a->n_uphill / -log(P_START);
    return t_start * pow(T_END_RATIO, f);
}

static void restart(anneal *a)
{
    a->run++;
    a->has_current = false;
    a->run_best = INFINITY;
    a->run_evals = a->since_gain = 0;
}

static bool stagnant(const anneal *a)
{
    return a->run_evals >= a->cool_evals && a->since_gain >= a->patience;
}

/* One unseen valid neighbour of the current configuration, chosen uniformly when
 * random moves keep missing; *got false when it has none. */
static int pick_listed(anneal *a, gb_config *out, bool *got, gb_err *err)
{
    gb_search *s = a->base.search;
    int n, n_unseen = 0;
    int rc = gb_search_neighbours(s, &a->current, 0, a->around, a->max_around, &n, err);
    if (rc) return rc;
    for (int i = 0; i < n; i++)
        if (!gb_search_seen(s, a->around[i].ordinal)) a->around[n_unseen++] = a->around[i];
    *got = n_unseen > 0;
    if (!*got) return GB_OK;
    const gb_config *c = &a->around[gb_rng_below(&s->rng, (uint64_t)n_unseen)];
    return gb_book_claim(&a->book, s, c, a->run, out, got, err);
}

static int propose_move(anneal *a, gb_config *out, bool *got, gb_err *err)
{
    gb_search *s = a->base.search;
    for (int i = 0; i < MOVE_TRIES; i++) {
        gb_config c = a->current;
        if (!gb_book_random_move(s, &c, NEAR)) break;
        int rc = gb_book_claim(&a->book, s, &c, a->run, out, got, err);
        if (rc || *got) return rc;
    }
    return pick_listed(a, out, got, err);
}

static int ask(gb_strategy *st, int n, gb_config *out, int *out_n, gb_err *err)
{
    anneal *a = (anneal *)st;
    while (*out_n < n) {
        bool got = false;
        int rc;
        if (a->has_current && stagnant(a)) restart(a);
        if (a->has_current) {
            if ((rc = propose_move(a, &out[*out_n], &got, err))) return rc;
            if (!got) restart(a); /* every neighbour was seen: a dead end */
        }
        if (!got) {
            rc = gb_book_random(&a->book, st->search, a->run, &out[*out_n], err);
            if (rc == GB_ENOTFOUND) break;
            if (rc) return rc;
        }
        (*out_n)++;
    }
    return GB_OK;
}

/* One result of the current run (or a recorded one) as a candidate move. */
static void consider(anneal *a, const gb_config *c, double cost, bool recorded)
{
    if (!recorded) a->run_evals++;
    if (cost < a->run_best)
        a->run_best = cost, a->since_gain = 0;
    else if (!recorded)
        a->since_gain++;
    if (!isfinite(cost)) return;
    bool take = !a->has_current || cost <= a->current_cost;
    if (!take && !recorded) {
        a->uphill_sum += cost - a->current_cost;
        a->n_uphill++;
        take =
            gb_rng_uniform(&a->base.search->rng) < exp(-(cost - a->current_cost) / temperature(a));
    }
    if (!take) return;
    a->current = *c;
    a->current_cost = cost;
    a->has_current = true;
}

static int tell(gb_strategy *st, const gb_observation *obs, int n, gb_err *err)
{
    anneal *a = (anneal *)st;
    for (int i = 0; i < n; i++) {
        gb_book_entry *e;
        bool mine;
        int rc = gb_book_tell(&a->book, &obs[i], &e, &mine, err);
        if (rc) return rc;
        if (mine && e->tag != a->run) continue; /* that walk is over */
        consider(a, &obs[i].config, e->cost, !mine);
    }
    return GB_OK;
}

static void destroy(gb_strategy *st)
{
    anneal *a = (anneal *)st;
    gb_book_free(&a->book);
    free(a->around);
    free(a);
}

static const gb_strategy_ops OPS = {ask, tell, destroy};

int gb_strategy_anneal(gb_search *search, gb_strategy **out, gb_err *err)
{
    anneal *a = calloc(1, sizeof *a);
    int max_around = gb_search_max_neighbours(search);
    if (a) a->around = malloc((size_t)(max_around > 0 ? max_around : 1) * sizeof *a->around);
    if (!a || !a->around) {
        free(a);
        return gb_err_set(err, GB_ENOMEM, "out of memory (anneal strategy)");
    }
    a->base = (gb_strategy){&OPS, search};
    a->max_around = max_around;
    /* Long enough to try each neighbour about three times while it cools, within
     * the few hundred evaluations a budget usually allows. */
    a->cool_evals = clamp(3 * max_around, COOL_MIN, COOL_MAX);
    a->patience = clamp(max_around, PATIENCE_MIN, PATIENCE_MAX);
    a->run_best = INFINITY;
    *out = &a->base;
    return GB_OK;
}
