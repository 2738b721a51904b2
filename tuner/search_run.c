/* Tuning a shape through its strategy. The strategy proposes configurations;
 * their compiles run ahead on the pool, a window of 2 x --jobs deep, while the
 * GPU times the oldest; each result is told back as it ends. Trials an earlier
 * run recorded for the shape are told first, so a rerun (or a run with a larger
 * budget) goes on from them instead of starting over. Every trial is announced in
 * the cache before it runs and recorded when it ends, so a tuner killed at any
 * moment loses nothing. */
#include "tuner/pipeline.h"

#include "base/clock.h"

#include "exec/pool.h"
#include "exec/interrupt.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the search ------------------------------------------------------------- */

/* Where a configuration of the window is, with several GPUs. */
enum { WAITING, RUNNING, DONE };

typedef struct searcher {
    gb_pipeline *r;
    const gb_fields *shape;
    const gb_record_id *id;
    gb_shape_result *res;
    leader *best;
    gb_strategy *strategy;
    gb_pending ring[GB_WINDOW_MAX];
    int head, count;
    double t0_s;
    gb_exec_pool *pool; /* several GPUs: trials run on all at once; NULL: one */
    unsigned char state[GB_WINDOW_MAX];
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
    gb_pipeline *r = s->r;
    bool fresh;
    gb_trial_ident ident;
    int rc = gb_search_claim(gb_pipeline_search(r), config->ordinal, &fresh, gb_pipeline_err(r));
    if (rc || !fresh) return rc; /* rejected by today's constraints, or seen */
    if ((rc = gb_history_ident(gb_pipeline_history(r), s->id, config, &ident))) return rc;
    rc = gb_trial_tally(r, &ident, true, t, s->res, s->best);
    gb_history_ident_free(&ident);
    gb_observation obs = observe(config, t, true);
    if (rc == GB_OK) rc = gb_strategy_tell(s->strategy, &obs, 1, gb_pipeline_err(r));
    s->res->n_evals++;
    s->res->n_recorded++;
    return rc;
}

/* Asks the strategy for what the window and the budget have room for, and starts
 * each. *out_idle: it proposed nothing. */
static int fill(searcher *s, int window, bool *out_idle)
{
    gb_pipeline *r = s->r;
    gb_config asked[GB_WINDOW_MAX];
    int want = window - s->count, n = 0;
    if (evals_left(s) < want) want = evals_left(s);
    *out_idle = false;
    if (want <= 0 || out_of_time(s)) return GB_OK;
    int rc = gb_strategy_ask(s->strategy, want, asked, &n, gb_pipeline_err(r));
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
    gb_pipeline *r = s->r;
    gb_pending *p = &s->ring[s->head];
    gb_trial_result t = {0};
    int rc = gb_pending_finish(r, s->id, p, gb_pipeline_screening(r), s->res, s->best, &t);
    if (rc == GB_OK) {
        gb_observation obs = observe(&p->ident.config, &t, false);
        rc = gb_strategy_tell(s->strategy, &obs, 1, gb_pipeline_err(r));
    }
    gb_trial_result_free(&t);
    gb_pending_free(r, p);
    s->head = (s->head + 1) % GB_WINDOW_MAX;
    s->count--;
    return rc;
}

/* ---- several GPUs ---------------------------------------------------------- */

/* The trial of ring[i] ended (t): recorded, counted, told. */
static int conclude(searcher *s, int i, gb_trial_result *t)
{
    gb_pipeline *r = s->r;
    gb_pending *p = &s->ring[i];
    int rc = gb_pending_done(r, s->id, p, t, s->res, s->best);
    if (rc == GB_OK) {
        gb_observation obs = observe(&p->ident.config, t, false);
        rc = gb_strategy_tell(s->strategy, &obs, 1, gb_pipeline_err(r));
    }
    s->state[i] = DONE;
    return rc;
}

/* Starts ring[i] on an idle GPU, or concludes it at once when it needs none
 * (resumed, a compile error, skipped). */
static int launch(searcher *s, int i)
{
    gb_pipeline *r = s->r;
    gb_trial_result t = {0};
    gb_variant v;
    bool run_it;
    int rc = gb_pending_ready(r, s->id, &s->ring[i], s->res, s->best, &v, &t, &run_it);
    if (rc == GB_OK && run_it) {
        rc = gb_exec_pool_submit(s->pool, (uint64_t)i, &v, gb_pipeline_check(r),
                                 gb_pipeline_screening(r), gb_trial_timeout_s(r),
                                 gb_pipeline_err(r));
        if (rc == GB_OK) s->state[i] = RUNNING;
    } else if (rc == GB_OK) {
        rc = conclude(s, i, &t);
    }
    gb_trial_result_free(&t);
    return rc;
}

/* Takes in the first trial to end on any GPU. Without tell (the search is ending
 * on an error) it is recorded and counted, not told to the strategy. */
static int land(searcher *s, bool tell)
{
    gb_pipeline *r = s->r;
    uint64_t tag;
    int gpu, trial_rc;
    gb_trial_result t = {0};
    gb_err e = {0};
    int rc = gb_exec_pool_poll(s->pool, &tag, &gpu, &t, &trial_rc, &e);
    if (rc) return gb_err_copy(gb_pipeline_err(r), &e);
    int i = (int)tag;
    gb_trial_account(r, &s->ring[i], trial_rc, t.phases.total_ms / 1e3, &t);
    if (trial_rc == GB_OK)
        gb_trial_phases_add(&gb_pipeline_result(r)->timing.trial_phases, &t.phases);
    if (trial_rc)
        rc = gb_err_copy(gb_pipeline_err(r), &e);
    else if (tell)
        rc = conclude(s, i, &t);
    else
        rc = gb_pending_done(r, s->id, &s->ring[i], &t, s->res, s->best);
    s->state[i] = DONE;
    gb_trial_result_free(&t);
    return rc;
}

/* Starts the oldest waiting configurations on the idle GPUs, takes in the first
 * trial to end, and lets go of the window's concluded head. Trials end, and are
 * told to the strategy, in the order they end. */
static int advance(searcher *s)
{
    int rc = GB_OK;
    for (int k = 0; rc == GB_OK && k < s->count && gb_exec_pool_idle(s->pool) > 0; k++) {
        int i = (s->head + k) % GB_WINDOW_MAX;
        if (s->state[i] == WAITING) rc = launch(s, i);
    }
    if (rc == GB_OK && gb_exec_pool_pending(s->pool) > 0) rc = land(s, true);
    for (; s->count > 0 && s->state[s->head] == DONE; s->count--) {
        gb_pending_free(s->r, &s->ring[s->head]);
        s->state[s->head] = WAITING;
        s->head = (s->head + 1) % GB_WINDOW_MAX;
    }
    return rc;
}

/* The search ends while trials run (an error, an interrupt): what ends is
 * recorded, what was interrupted is taken back. */
static void drain(searcher *s)
{
    gb_err ignored = {0}, *keep = gb_pipeline_set_err(s->r, &ignored); /* the search's own stands */
    while (gb_exec_pool_pending(s->pool) > 0)
        land(s, false);
    gb_pipeline_set_err(s->r, keep);
}

static int open_pool(searcher *s)
{
    gb_pipeline *r = s->r;
    if (gb_run_n_gpus(r) < 2) return GB_OK;
    gb_exec *execs[GB_POOL_MAX];
    for (int i = 0; i < gb_run_n_gpus(r) && i < GB_POOL_MAX; i++)
        execs[i] = gb_run_exec(r, i);
    return gb_exec_pool_create(execs, gb_pipeline_opts(r)->gpus, gb_run_n_gpus(r), &s->pool,
                               gb_pipeline_err(r));
}

static gb_search_end ending(const searcher *s, int rc)
{
    if (rc == GB_EINTR) return GB_END_INTERRUPT;
    if (gb_pipeline_search(s->r)->exhausted) return GB_END_SPACE;
    if (evals_left(s) == 0) return GB_END_EVALS;
    if (out_of_time(s)) return GB_END_SECONDS;
    return GB_END_STRATEGY;
}

int gb_search_shape(gb_pipeline *r, const gb_fields *shape, const gb_record_id *id,
                    gb_shape_result *res, leader *best)
{
    searcher s = {.r = r, .shape = shape, .id = id, .res = res, .best = best};
    int window = gb_run_window(r), rc = gb_pipeline_create_strategy(r, &s.strategy);
    bool idle = false;
    if (rc == GB_OK) rc = open_pool(&s);
    if (s.pool && window < 2 * gb_run_n_gpus(r)) /* a configuration ahead for every GPU */
        window = 2 * gb_run_n_gpus(r) < GB_WINDOW_MAX ? 2 * gb_run_n_gpus(r) : GB_WINDOW_MAX;
    if (rc == GB_OK) rc = gb_history_recorded(gb_pipeline_history(r), id, on_recorded, &s);
    s.t0_s = gb_now_ms() / 1e3;
    while (rc == GB_OK) {
        if (!idle) rc = fill(&s, window, &idle);
        if (rc || s.count == 0) break; /* nothing in flight and nothing proposed: done */
        if (gb_interrupted()) {
            rc = gb_err_set(gb_pipeline_err(r), GB_EINTR, "interrupted");
            break;
        }
        rc = s.pool ? advance(&s) : finish_oldest(&s);
        idle = false; /* it knows more now */
    }
    if (s.pool) drain(&s);
    gb_exec_pool_destroy(s.pool);
    for (; s.count > 0; s.count--, s.head = (s.head + 1) % GB_WINDOW_MAX)
        gb_pending_free(r, &s.ring[s.head]);
    res->ended_by = rc && rc != GB_EINTR ? GB_END_NONE : ending(&s, rc);
    res->complete = res->ended_by == GB_END_SPACE;
    res->n_rejected = gb_pipeline_search(r)->n_rejected;
    res->n_checked = gb_pipeline_search(r)->n_checked;
    res->check_s = gb_pipeline_search(r)->check_s;
    gb_strategy_destroy(s.strategy);
    return rc;
}
