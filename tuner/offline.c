#include "tuner/offline.h"

#include <math.h>
#include <stdlib.h>

#define BATCH_MAX 256

static void note(gb_offline_result *res, const gb_offline_opts *opts, const gb_observation *o)
{
    res->n_evals++;
    if (opts->on_eval) opts->on_eval(opts->on_eval_ctx, o);
    if (o->status != GB_TRIAL_OK) {
        res->n_failed++;
        return;
    }
    if (!res->has_best || o->ms < res->best_ms) {
        res->has_best = true;
        res->best_ms = o->ms;
        res->best = o->config;
    }
    if (opts->target_ms > 0 && res->evals_to_target < 0 && o->ms <= opts->target_ms)
        res->evals_to_target = res->n_evals;
}

int gb_offline_search(gb_strategy *s, gb_objective_fn objective, void *ctx,
                      const gb_offline_opts *opts, gb_offline_result *out, gb_err *err)
{
    gb_config asked[BATCH_MAX];
    gb_observation obs[BATCH_MAX];
    int batch = opts->batch > 0 ? (opts->batch < BATCH_MAX ? opts->batch : BATCH_MAX) : 1;
    *out = (gb_offline_result){.evals_to_target = -1};
    for (;;) {
        if (opts->target_ms > 0 && out->evals_to_target >= 0) break;
        int want = batch, n = 0, rc;
        if (opts->max_evals > 0 && opts->max_evals - out->n_evals < want)
            want = opts->max_evals - out->n_evals;
        if (want <= 0) break;
        if ((rc = gb_strategy_ask(s, want, asked, &n, err))) return rc;
        if (n == 0) break; /* nothing is in flight here: the strategy is done */
        for (int i = 0; i < n; i++) {
            obs[i] = (gb_observation){.config = asked[i], .ms = NAN};
            if ((rc = objective(ctx, &asked[i], &obs[i].status, &obs[i].ms, err))) return rc;
            if (obs[i].status != GB_TRIAL_OK) obs[i].ms = NAN;
            note(out, opts, &obs[i]);
        }
        if ((rc = gb_strategy_tell(s, obs, n, err))) return rc;
    }
    out->exhausted = s->search->exhausted;
    return GB_OK;
}
