/* local: multi-start greedy descent over one-parameter neighbours, then iterated
 * local search (kicks from the best of the start), restarting from uniform
 * samples when the kicks stop paying.
 *
 * Descent is first-improvement: the incumbent's neighbours are proposed one by
 * one, the near ones first (each parameter one value either way), then the far
 * ones (up to FAR_STEP values away), each ring in a shuffled order, and the first
 * result that beats the incumbent becomes the incumbent. Neighbours whose cost is
 * already known (an earlier proposal, a recorded trial) are read from the book,
 * not proposed again. Once every neighbour is told and none is better, the
 * incumbent is a local optimum: the next epoch starts from a kick, KICK_MOVES
 * random one-parameter moves away from the best configuration of this start (the
 * elite), and descends again. After KICKS_PER_START local optima in a row that
 * did not improve the elite, the next start begins from uniform samples.
 *
 * Asks run ahead of tells. While every neighbour of the incumbent is proposed and
 * some are in flight, an ask is answered speculatively with two random moves from
 * the incumbent (a uniform sample when those keep missing); results of the
 * current epoch that beat the incumbent move it whatever proposed them. While an
 * epoch waits for its first result, its asks are answered with more kicks (or
 * samples), and the best of them that runs is where the descent begins. Results
 * of earlier epochs are kept (never proposed again, used when a descent meets
 * them) and may improve the elite; recorded trials count as results of the
 * current epoch. Failures cost +infinity: never an incumbent. */
#include "tuner/strategies/book.h"

#include <math.h>
#include <stdlib.h>

#define STEP            1   /* near neighbours: this many values either way */
#define FAR_STEP        3   /* far ones: up to this many (farther is left to kicks) */
#define KICK_MOVES      3   /* one-parameter moves in a kick */
#define KICKS_PER_START 10  /* fruitless local optima before a fresh start */
#define MOVE_NEAR       0.5 /* a random move goes to an adjacent value this often */
#define TRIES           32  /* draws of a kick or speculation before a uniform sample */

typedef struct local {
    gb_strategy base;
    gb_book book;
    uint32_t epoch;       /* starts and kicks so far: the tag of every proposal */
    uint32_t start_epoch; /* the epoch the current start began with */
    bool kicking;         /* this epoch begins with kicks, else with uniform samples */
    bool has_inc, stale;  /* stale: the incumbent moved since its lists were made */
    gb_config inc;
    double inc_cost;
    bool has_elite, gained; /* gained: the elite improved since the last local optimum */
    gb_config elite;
    double elite_cost;
    int fruitless; /* local optima in a row that did not improve the elite */
    gb_config *near, *far;
    int n_near, near_next, max_near;
    int n_far, far_next, max_far;
    bool far_listed;
} local;

enum { PROPOSED, MOVED, RAN_OUT };

static void move_to(local *l, const gb_config *c, double cost)
{
    l->inc = *c;
    l->inc_cost = cost;
    l->has_inc = l->stale = true;
}

static void shuffle(gb_rng *rng, gb_config *list, int n)
{
    for (int i = n - 1; i > 0; i--) {
        int j = (int)gb_rng_below(rng, (uint64_t)i + 1);
        gb_config t = list[i];
        list[i] = list[j], list[j] = t;
    }
}

static int list_near(local *l, gb_err *err)
{
    gb_search *s = l->base.search;
    int rc = gb_search_neighbours(s, &l->inc, STEP, l->near, l->max_near, &l->n_near, err);
    if (rc) return rc;
    shuffle(&s->rng, l->near, l->n_near);
    l->near_next = l->far_next = l->n_far = 0;
    l->far_listed = l->stale = false;
    return GB_OK;
}

/* The one-parameter neighbours beyond STEP and within FAR_STEP, shuffled. */
static int list_far(local *l, gb_err *err)
{
    gb_search *s = l->base.search;
    int n, rc = gb_search_neighbours(s, &l->inc, FAR_STEP, l->far, l->max_far, &n, err);
    if (rc) return rc;
    l->n_far = 0;
    for (int i = 0; i < n; i++)
        for (int p = 0; p < s->space->n_params; p++)
            if (abs(l->far[i].index[p] - l->inc.index[p]) > STEP) {
                l->far[l->n_far++] = l->far[i];
                break;
            }
    shuffle(&s->rng, l->far, l->n_far);
    l->far_listed = true;
    return GB_OK;
}

/* Proposes the next unseen configuration of list, or moves the incumbent to a
 * told one that beats it; *outcome says which, or that the list ran out. */
static int walk(local *l, const gb_config *list, int n, int *next, gb_config *out, int *outcome,
                gb_err *err)
{
    while (*next < n) {
        const gb_config *c = &list[(*next)++];
        const gb_book_entry *e = gb_book_find(&l->book, c->ordinal);
        if (e && !e->pending && e->cost < l->inc_cost) {
            move_to(l, c, e->cost);
            *outcome = MOVED;
            return GB_OK;
        }
        bool got;
        int rc = gb_book_claim(&l->book, l->base.search, c, l->epoch, out, &got, err);
        if (rc) return rc;
        if (got) {
            *outcome = PROPOSED;
            return GB_OK;
        }
    }
    *outcome = RAN_OUT;
    return GB_OK;
}

/* Once both lists ran out: moves to a told neighbour that beats the incumbent
 * (*moved), else says whether one is still in flight. */
static void settle(local *l, bool *moved, bool *in_flight)
{
    *moved = *in_flight = false;
    for (int i = 0; i < l->n_near + l->n_far; i++) {
        const gb_config *c = i < l->n_near ? &l->near[i] : &l->far[i - l->n_near];
        const gb_book_entry *e = gb_book_find(&l->book, c->ordinal);
        if (!e) continue; /* seen by someone who never told us */
        if (e->pending) {
            *in_flight = true;
        } else if (e->cost < l->inc_cost) {
            move_to(l, c, e->cost);
            *moved = true;
            return;
        }
    }
}

/* The incumbent is a local optimum: the next epoch kicks from the elite, or,
 * after too many fruitless ones, begins a fresh start. */
static void next_epoch(local *l)
{
    l->fruitless = l->gained ? 0 : l->fruitless + 1;
    l->gained = l->has_inc = false;
    l->epoch++;
    l->kicking = l->has_elite && l->fruitless < KICKS_PER_START;
    if (l->kicking) return;
    l->start_epoch = l->epoch;
    l->has_elite = false;
    l->fruitless = 0;
}

/* count random moves from base, claimed, tagged with the epoch; a uniform sample
 * when TRIES draws all land on seen or rejected configurations. */
static int jump(local *l, const gb_config *base, int count, gb_config *out, gb_err *err)
{
    gb_search *s = l->base.search;
    for (int t = 0; t < TRIES; t++) {
        gb_config c = *base;
        for (int k = 0; k < count; k++)
            gb_book_random_move(s, &c, MOVE_NEAR);
        bool got;
        int rc = gb_book_claim(&l->book, s, &c, l->epoch, out, &got, err);
        if (rc || got) return rc;
    }
    return gb_book_random(&l->book, s, l->epoch, out, err);
}

/* The next proposal of the descent; *got false when the incumbent turned out to
 * be a local optimum (the epoch moved on). */
static int descend(local *l, gb_config *out, bool *got, gb_err *err)
{
    int rc, outcome;
    *got = false;
    for (;;) {
        if (l->stale && (rc = list_near(l, err))) return rc;
        if ((rc = walk(l, l->near, l->n_near, &l->near_next, out, &outcome, err))) return rc;
        if (outcome == MOVED) continue;
        if (outcome == PROPOSED) break;
        if (!l->far_listed && (rc = list_far(l, err))) return rc;
        if ((rc = walk(l, l->far, l->n_far, &l->far_next, out, &outcome, err))) return rc;
        if (outcome == MOVED) continue;
        if (outcome == PROPOSED) break;
        bool moved, in_flight;
        settle(l, &moved, &in_flight);
        if (moved) continue;
        if (!in_flight) {
            next_epoch(l);
            return GB_OK;
        }
        if ((rc = jump(l, &l->inc, 2, out, err))) return rc; /* waiting: speculate */
        break;
    }
    *got = true;
    return GB_OK;
}

static int ask(gb_strategy *st, int n, gb_config *out, int *out_n, gb_err *err)
{
    local *l = (local *)st;
    while (*out_n < n) {
        bool got = true;
        int rc;
        if (l->has_inc)
            rc = descend(l, &out[*out_n], &got, err);
        else if (l->kicking)
            rc = jump(l, &l->elite, KICK_MOVES, &out[*out_n], err);
        else
            rc = gb_book_random(&l->book, st->search, l->epoch, &out[*out_n], err);
        if (rc == GB_ENOTFOUND) break;
        if (rc) return rc;
        *out_n += got;
    }
    return GB_OK;
}

static void take(local *l, const gb_config *c, double cost, uint32_t tag, bool mine)
{
    if (!isfinite(cost)) return;
    if ((!mine || tag >= l->start_epoch) && (!l->has_elite || cost < l->elite_cost)) {
        l->elite = *c;
        l->elite_cost = cost;
        l->has_elite = l->gained = true;
    }
    if ((!mine || tag == l->epoch) && (!l->has_inc || cost < l->inc_cost)) move_to(l, c, cost);
}

static int tell(gb_strategy *st, const gb_observation *obs, int n, gb_err *err)
{
    local *l = (local *)st;
    for (int i = 0; i < n; i++) {
        gb_book_entry *e;
        bool mine;
        int rc = gb_book_tell(&l->book, &obs[i], &e, &mine, err);
        if (rc) return rc;
        take(l, &obs[i].config, e->cost, e->tag, mine);
    }
    return GB_OK;
}

static void destroy(gb_strategy *st)
{
    local *l = (local *)st;
    gb_book_free(&l->book);
    free(l->near);
    free(l->far);
    free(l);
}

static const gb_strategy_ops OPS = {ask, tell, destroy};

int gb_strategy_local(gb_search *search, gb_strategy **out, gb_err *err)
{
    local *l = calloc(1, sizeof *l);
    int max_near = 2 * STEP * search->space->n_params;
    int max_far = 2 * FAR_STEP * search->space->n_params;
    if (l) {
        l->near = malloc((size_t)(max_near > 0 ? max_near : 1) * sizeof *l->near);
        l->far = malloc((size_t)(max_far > 0 ? max_far : 1) * sizeof *l->far);
    }
    if (!l || !l->near || !l->far) {
        if (l) free(l->near), free(l->far);
        free(l);
        return gb_err_set(err, GB_ENOMEM, "out of memory (local strategy)");
    }
    l->base = (gb_strategy){&OPS, search};
    l->max_near = max_near;
    l->max_far = max_far;
    *out = &l->base;
    return GB_OK;
}
