/* A shape's search plan (tuner/run.h): the strategy and budget a request gets
 * (the default rule when it names none), the valid configurations counted, and
 * a shard's share of a budget. */
#include "tuner/run.h"

#include <string.h>

#define DEFAULT_EXHAUSTIVE_MAX 512
#define DEFAULT_AUTO_EVALS     200
#define COUNT_ALL_MAX          (UINT64_C(1) << 20) /* exhaustive counts its work up to this */

int gb_search_count_valid(run *r, uint64_t limit, uint64_t *out)
{
    *out = 0;
    for (uint64_t o = 0; o < r->current.search.size && *out <= limit; o++) {
        bool ok;
        int rc = gb_search_valid(&r->current.search, o, &ok, r->err);
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
    for (uint64_t o = 0; o < r->current.search.size && *out <= limit; o++) {
        bool ok;
        gb_config c;
        int rc;
        if (gb_shard_owns(&r->current.search.shard, o)) {
            rc = gb_search_valid(&r->current.search, o, &ok, r->err);
        } else {
            gb_search_config(&r->current.search, o, &c);
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
    int rc = gb_search_init(&r->current.search, &r->k->space, gb_tune_accept, (void *)r->k,
                            res->seed, r->err);
    if (rc) return rc;
    gb_search_set_shard(&r->current.search, &o->shard);
    r->current.kind = NULL;
    r->current.custom = o->strategy ? NULL : q->custom;
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
    if (!r->current.custom && !(r->current.kind = gb_strategy_find(name))) {
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
    r->current.planned = -1;
    if (res->budget_evals > 0)
        r->current.planned = res->budget_evals;
    else if (strcmp(name, "exhaustive") == 0 && valid > 0 && valid <= small && o->shard.count <= 1)
        r->current.planned = (int64_t)valid; /* the default rule counted them all */
    else if (strcmp(name, "exhaustive") == 0 && r->current.search.size <= COUNT_ALL_MAX &&
             (rc = gb_search_count_valid(r, r->current.search.size, &valid)) == GB_OK)
        r->current.planned = (int64_t)valid;
    return rc;
}

int gb_pipeline_create_strategy(gb_pipeline *r, gb_strategy **out)
{
    if (r->current.custom)
        return r->current.custom->create(r->current.custom->ctx, &r->current.search, out, r->err);
    return r->current.kind->create(&r->current.search, out, r->err);
}
