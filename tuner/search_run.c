/* Tuning a shape through its strategy. The strategy proposes configurations;
 * their compiles run ahead on the pool, a window of 2 x --jobs deep, while the
 * GPU times the oldest; each result is told back as it ends. Trials an earlier
 * run recorded for the shape are told first, so a rerun (or a run with a larger
 * budget) goes on from them instead of starting over. Every trial is announced in
 * the cache before it runs and recorded when it ends, so a tuner killed at any
 * moment loses nothing. */
#include "tuner/run.h"

#include "engine/interrupt.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_EXHAUSTIVE_MAX 512
#define DEFAULT_AUTO_EVALS     200
#define COUNT_ALL_MAX          (UINT64_C(1) << 20) /* exhaustive counts its work up to this */

const char *gb_search_end_name(gb_search_end end)
{
    static const char *const names[] = {"", "space", "evals", "seconds", "strategy", "interrupt"};
    return (unsigned)end < sizeof names / sizeof names[0] ? names[end] : "";
}

/* ---- the plan --------------------------------------------------------------- */

int gb_search_count_valid(run *r, uint64_t limit, uint64_t *out)
{
    *out = 0;
    for (uint64_t o = 0; o < r->search.size && *out <= limit; o++) {
        bool ok;
        int rc = gb_search_valid(&r->search, o, &ok, r->err);
        if (rc) return rc;
        *out += ok;
    }
    return GB_OK;
}

/* The valid configurations of the whole space, every shard's, up to limit: the
 * default rule decides on them, so that every shard picks the same strategy as an
 * unsharded run. The constraints' answers for other shards are not kept. */
static int count_space_valid(run *r, uint64_t limit, uint64_t *out)
{
    *out = 0;
    for (uint64_t o = 0; o < r->search.size && *out <= limit; o++) {
        bool ok;
        gb_config c;
        int rc;
        if (gb_shard_owns(&r->search.shard, o)) {
            rc = gb_search_valid(&r->search, o, &ok, r->err);
        } else {
            gb_search_config(&r->search, o, &c);
            rc = gb_tune_accept((void *)r->k, &c, &ok, r->err);
        }
        if (rc) return rc;
        *out += ok;
    }
    return GB_OK;
}

int64_t gb_run_shard_share(const run *r, int64_t evals)
{
    int64_t n = r->opts->shard.count;
    return n > 1 && evals > 0 ? (evals + n - 1) / n : evals;
}

int gb_search_plan(run *r, gb_shape_result *res)
{
    const gb_tune_request *q = r->req;
    const gb_tuner_opts *o = r->opts;
    res->seed = q->has_seed ? q->seed : o->seed;
    int rc =
        gb_search_init(&r->search, &r->k->space, gb_tune_accept, (void *)r->k, res->seed, r->err);
    if (rc) return rc;
    gb_search_set_shard(&r->search, &o->shard);
    r->kind = NULL;
    r->custom = o->strategy ? NULL : q->custom;
    const char *name = o->strategy ? o->strategy : q->custom ? q->custom->name : q->strategy;
    res->budget_evals = q->max_evals;
    res->budget_seconds = q->max_seconds;
    bool budgeted = q->max_evals > 0 || q->max_seconds > 0;
    uint64_t valid = 0,
             small = (uint64_t)(o->exhaustive_max > 0 ? o->exhaustive_max : DEFAULT_EXHAUSTIVE_MAX);
    int64_t auto_evals = o->auto_evals > 0 ? o->auto_evals : DEFAULT_AUTO_EVALS;
    if (!name) { /* the default rule */
        if ((rc = count_space_valid(r, small, &valid))) return rc;
        name = valid <= small ? "exhaustive" : "auto";
    }
    if (!r->custom && !(r->kind = gb_strategy_find(name))) {
        gb_strbuf names = GB_STRBUF_INIT;
        gb_strategy_append_names(&names);
        rc = gb_err_set(r->err, GB_ESCRIPT, "kernel %s: strategy \"%s\" is not one of %s",
                        r->k->name, name, gb_sb_str(&names));
        gb_sb_free(&names);
        return rc;
    }
    gb_strlcpy(res->strategy, name, sizeof res->strategy);
    /* Every strategy but exhaustive gets a budget: without one it would run until
     * the space is used up, which is exhaustive's job. */
    if (!budgeted && strcmp(name, "exhaustive") != 0) res->budget_evals = auto_evals;
    res->budget_evals = gb_run_shard_share(r, res->budget_evals); /* the run's, shared out */
    r->planned = -1;
    if (res->budget_evals > 0)
        r->planned = res->budget_evals;
    else if (strcmp(name, "exhaustive") == 0 && valid > 0 && valid <= small && o->shard.count <= 1)
        r->planned = (int64_t)valid; /* the default rule counted them all */
    else if (strcmp(name, "exhaustive") == 0 && r->search.size <= COUNT_ALL_MAX &&
             (rc = gb_search_count_valid(r, r->search.size, &valid)) == GB_OK)
        r->planned = (int64_t)valid;
    return rc;
}

/* ---- the search ------------------------------------------------------------- */

typedef struct searcher {
    run *r;
    const gb_fields *shape;
    const gb_record_id *id;
    gb_shape_result *res;
    leader *best;
    gb_strategy *strategy;
    gb_pending ring[GB_WINDOW_MAX];
    int head, count;
    double t0_s;
} searcher;

static bool out_of_time(const searcher *s)
{
    double limit = s->res->budget_seconds;
    return limit > 0 && gb_now_ms() / 1e3 - s->t0_s >= limit;
}

/* How many more configurations the budget allows (INT32_MAX: no limit). */
static int evals_left(const searcher *s)
{
    int64_t limit = s->res->budget_evals;
    if (limit <= 0) return INT32_MAX;
    int64_t left = limit - s->res->n_evals;
    return left > 0 ? (int)(left < INT32_MAX ? left : INT32_MAX) : 0;
}

static gb_observation observe(const gb_config *config, const gb_trial_result *t, bool recorded)
{
    return (gb_observation){.config = *config,
                            .status = t->status,
                            .ms = t->status == GB_TRIAL_OK ? t->measurement.stats.median : NAN,
                            .recorded = recorded};
}

/* A trial an earlier run recorded: counted, and told to the strategy. */
static int on_recorded(void *ctx, const gb_config *config, const gb_trial_result *t)
{
    searcher *s = ctx;
    run *r = s->r;
    bool fresh;
    gb_trial_ident ident;
    int rc = gb_search_claim(&r->search, config->ordinal, &fresh, r->err);
    if (rc || !fresh) return rc; /* rejected by today's constraints, or seen */
    if ((rc = gb_history_ident(r, s->id, config, &ident))) return rc;
    rc = gb_trial_tally(r, &ident, true, t, s->res, s->best);
    gb_history_ident_free(&ident);
    gb_observation obs = observe(config, t, true);
    if (rc == GB_OK) rc = gb_strategy_tell(s->strategy, &obs, 1, r->err);
    s->res->n_evals++;
    s->res->n_recorded++;
    return rc;
}

/* Asks the strategy for what the window and the budget have room for, and starts
 * each. *out_idle: it proposed nothing. */
static int fill(searcher *s, int window, bool *out_idle)
{
    run *r = s->r;
    gb_config asked[GB_WINDOW_MAX];
    int want = window - s->count, n = 0;
    if (evals_left(s) < want) want = evals_left(s);
    *out_idle = false;
    if (want <= 0 || out_of_time(s)) return GB_OK;
    int rc = gb_strategy_ask(s->strategy, want, asked, &n, r->err);
    *out_idle = rc == GB_OK && n == 0;
    for (int i = 0; rc == GB_OK && i < n; i++) {
        gb_pending *p = &s->ring[(s->head + s->count) % GB_WINDOW_MAX];
        rc = gb_pending_start(r, s->shape, s->id, &asked[i], true, p);
        if (rc) {
            gb_pending_free(r, p);
            break;
        }
        s->count++;
        s->res->n_evals++;
    }
    return rc;
}

/* The oldest configuration in the window: its trial, told to the strategy. */
static int finish_oldest(searcher *s)
{
    run *r = s->r;
    gb_pending *p = &s->ring[s->head];
    gb_trial_result t = {0};
    int rc = gb_pending_finish(r, s->id, p, &r->screen, s->res, s->best, &t);
    if (rc == GB_OK) {
        gb_observation obs = observe(&p->ident.config, &t, false);
        rc = gb_strategy_tell(s->strategy, &obs, 1, r->err);
    }
    gb_trial_result_free(&t);
    gb_pending_free(r, p);
    s->head = (s->head + 1) % GB_WINDOW_MAX;
    s->count--;
    return rc;
}

static gb_search_end ending(const searcher *s, int rc)
{
    if (rc == GB_EINTR) return GB_END_INTERRUPT;
    if (s->r->search.exhausted) return GB_END_SPACE;
    if (evals_left(s) == 0) return GB_END_EVALS;
    if (out_of_time(s)) return GB_END_SECONDS;
    return GB_END_STRATEGY;
}

static int create_strategy(run *r, gb_strategy **out)
{
    if (r->custom) return r->custom->create(r->custom->ctx, &r->search, out, r->err);
    return r->kind->create(&r->search, out, r->err);
}

int gb_search_shape(run *r, const gb_fields *shape, const gb_record_id *id, gb_shape_result *res,
                    leader *best)
{
    searcher s = {.r = r, .shape = shape, .id = id, .res = res, .best = best};
    int window = gb_run_window(r), rc = create_strategy(r, &s.strategy);
    bool idle = false;
    if (rc == GB_OK) rc = gb_history_recorded(r, id, on_recorded, &s);
    s.t0_s = gb_now_ms() / 1e3;
    while (rc == GB_OK) {
        if (!idle) rc = fill(&s, window, &idle);
        if (rc || s.count == 0) break; /* nothing in flight and nothing proposed: done */
        if (gb_interrupted()) {
            rc = gb_err_set(r->err, GB_EINTR, "interrupted");
            break;
        }
        rc = finish_oldest(&s);
        idle = false; /* it knows more now */
    }
    for (; s.count > 0; s.count--, s.head = (s.head + 1) % GB_WINDOW_MAX)
        gb_pending_free(r, &s.ring[s.head]);
    res->ended_by = rc && rc != GB_EINTR ? GB_END_NONE : ending(&s, rc);
    res->complete = res->ended_by == GB_END_SPACE;
    res->n_rejected = r->search.n_rejected;
    res->n_checked = r->search.n_checked;
    res->check_s = r->search.check_s;
    gb_strategy_destroy(s.strategy);
    return rc;
}
