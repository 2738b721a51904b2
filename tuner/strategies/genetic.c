/* genetic: a population bred by tournament selection, uniform crossover and
 * mutation to neighbouring values, with elitism.
 *
 * The population is the best `size` configurations told so far (recorded trials
 * included), failures ranked last: a steady-state scheme, which suits results that
 * arrive one at a time in any order better than generations would, and keeps the
 * best configurations by construction (elitism). It starts as uniform samples;
 * once two of them have run, each proposal is a child: two parents chosen by
 * binary tournaments, each parameter taken from either parent with even odds, and
 * each parameter moved with probability 1/d (d: parameters that have a choice) to
 * an adjacent value, now and then to any value. A child that the constraints
 * reject or that was seen already is moved again (repaired) a few times, then
 * bred anew from other parents, and if that keeps failing a uniform sample is
 * proposed instead, so an ask is answered while the space has anything left. */
#include "tuner/strategies/book.h"

#include <math.h>
#include <stdlib.h>

#define POP_MAX      16 /* the population of a space of 128 configurations and up */
#define POP_MIN      4
#define TOURNAMENT   3   /* entrants per selection: moderate pressure, some variety */
#define MUTATE_NEAR  0.8 /* a mutation goes to an adjacent value this often */
#define REPAIR_TRIES 8   /* moves of a rejected or seen child before breeding anew */
#define BREED_TRIES  4

typedef struct member {
    gb_config config;
    double cost; /* log(ms); INFINITY for a failure */
} member;

typedef struct genetic {
    gb_strategy base;
    member *pop; /* best first */
    int n_pop, size;
    int n_ok;       /* members that ran (they come before the failures) */
    int n_seeded;   /* uniform samples proposed for the first population */
    int n_recorded; /* recorded trials told: they stand in for samples */
    int movable;    /* parameters with more than one value */
} genetic;

/* The better of TOURNAMENT members that ran, drawn uniformly (the population is
 * sorted, so the better is the one with the lower place). */
static int tournament(genetic *g)
{
    gb_rng *rng = &g->base.search->rng;
    int best = (int)gb_rng_below(rng, (uint64_t)g->n_ok);
    for (int i = 1; i < TOURNAMENT; i++) {
        int k = (int)gb_rng_below(rng, (uint64_t)g->n_ok);
        best = k < best ? k : best;
    }
    return best;
}

static void crossover(genetic *g, const gb_config *a, const gb_config *b, gb_config *child)
{
    gb_search *s = g->base.search;
    *child = *a;
    for (int p = 0; p < s->space->n_params; p++)
        if (gb_rng_below(&s->rng, 2)) gb_book_move(s, child, p, b->index[p]);
}

static void mutate(genetic *g, gb_config *child)
{
    gb_search *s = g->base.search;
    for (int p = 0; p < s->space->n_params; p++) {
        int n = s->space->params[p].n_values, v = child->index[p];
        if (n < 2 || gb_rng_uniform(&s->rng) * g->movable >= 1) continue;
        if (gb_rng_uniform(&s->rng) < MUTATE_NEAR) {
            v += (v == 0 || (v < n - 1 && gb_rng_below(&s->rng, 2))) ? 1 : -1;
        } else {
            int w = (int)gb_rng_below(&s->rng, (uint64_t)n - 1);
            v = w >= v ? w + 1 : w;
        }
        gb_book_move(s, child, p, v);
    }
}

/* A child of two tournament winners, claimed; *got false when breeding and
 * repair kept landing on rejected or seen configurations. */
static int breed(genetic *g, gb_config *out, bool *got, gb_err *err)
{
    gb_search *s = g->base.search;
    *got = false;
    for (int t = 0; t < BREED_TRIES; t++) {
        int a = tournament(g), b = tournament(g);
        if (b == a) b = tournament(g); /* one more chance at two parents */
        gb_config child;
        crossover(g, &g->pop[a].config, &g->pop[b].config, &child);
        mutate(g, &child);
        for (int r = 0; r <= REPAIR_TRIES; r++) {
            int rc = gb_search_claim(s, child.ordinal, got, err);
            if (rc) return rc;
            if (*got) {
                *out = child;
                return GB_OK;
            }
            if (!gb_book_random_move(s, &child, MUTATE_NEAR)) return GB_OK;
        }
    }
    return GB_OK;
}

static int ask(gb_strategy *st, int n, gb_config *out, int *out_n, gb_err *err)
{
    genetic *g = (genetic *)st;
    while (*out_n < n) {
        bool got = false;
        int rc;
        bool seeding = g->n_seeded + g->n_recorded < g->size;
        if (!seeding && g->n_ok >= 2 && (rc = breed(g, &out[*out_n], &got, err))) return rc;
        if (!got) {
            rc = gb_search_random(st->search, &out[*out_n], err);
            if (rc == GB_ENOTFOUND) break;
            if (rc) return rc;
            g->n_seeded += seeding;
        }
        (*out_n)++;
    }
    return GB_OK;
}

/* Whether x ranks before y: lower cost, ties by ordinal (the canonical order). */
static bool before(const member *x, const member *y)
{
    if (x->cost != y->cost) return x->cost < y->cost;
    return x->config.ordinal < y->config.ordinal;
}

/* Takes a result into the population when it has room or beats the worst. */
static void admit(genetic *g, const gb_config *c, double cost)
{
    member m = {*c, cost};
    for (int i = 0; i < g->n_pop; i++)
        if (g->pop[i].config.ordinal == c->ordinal) return; /* told twice: keep the first */
    if (g->n_pop == g->size) {
        if (!before(&m, &g->pop[g->n_pop - 1])) return;
        g->n_pop--; /* the worst makes room */
    }
    int i = g->n_pop++;
    for (; i > 0 && before(&m, &g->pop[i - 1]); i--)
        g->pop[i] = g->pop[i - 1];
    g->pop[i] = m;
    g->n_ok = 0;
    while (g->n_ok < g->n_pop && isfinite(g->pop[g->n_ok].cost))
        g->n_ok++;
}

static int tell(gb_strategy *st, const gb_observation *obs, int n, gb_err *err)
{
    genetic *g = (genetic *)st;
    (void)err;
    for (int i = 0; i < n; i++) {
        g->n_recorded += obs[i].recorded;
        admit(g, &obs[i].config, gb_book_cost(&obs[i]));
    }
    return GB_OK;
}

static void destroy(gb_strategy *st)
{
    genetic *g = (genetic *)st;
    free(g->pop);
    free(g);
}

static const gb_strategy_ops OPS = {ask, tell, destroy};

int gb_strategy_genetic(gb_search *search, gb_strategy **out, gb_err *err)
{
    genetic *g = calloc(1, sizeof *g);
    /* About one member per eight configurations in a small space. */
    uint64_t size = search->size / 8;
    size = size < POP_MIN ? POP_MIN : size > POP_MAX ? POP_MAX : size;
    if (g) g->pop = calloc(size, sizeof *g->pop);
    if (!g || !g->pop) {
        free(g);
        return gb_err_set(err, GB_ENOMEM, "out of memory (genetic strategy)");
    }
    g->base = (gb_strategy){&OPS, search};
    g->size = (int)size;
    for (int p = 0; p < search->space->n_params; p++)
        g->movable += search->space->params[p].n_values > 1;
    *out = &g->base;
    return GB_OK;
}
