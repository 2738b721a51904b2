/* Replay through the session (session/session.h): the session's cache gives the
 * table, its strategy and seed the searches. */
#include "session/session.h"

#include <string.h>

int gb_session_replay_table(gb_session *s, const gb_replay_select *sel, gb_replay_table *out,
                            gb_err *err)
{
    if (!s->tuner.cache) {
        memset(out, 0, sizeof *out);
        return gb_err_set(err, GB_EINVAL, "replay: the session has no cache to read a table from");
    }
    return gb_replay_load_cache(s->tuner.cache, sel, out, err);
}

int gb_session_replay(gb_session *s, const gb_replay_table *t, const gb_replay_opts *opts,
                      gb_replay_stats *out, int *out_n, int *out_best, gb_err *err)
{
    const char *only = s->tuner.strategy;
    *out_n = *out_best = 0;
    if (only && !gb_strategy_find(only))
        return gb_err_set(err, GB_EINVAL, "replay: no strategy '%s'", only);
    gb_replay_opts o = *opts;
    o.first_seed = s->tuner.seed ? s->tuner.seed : 1;
    for (int i = 0; i < gb_strategy_n_kinds; i++) {
        const gb_strategy_kind *kind = &gb_strategy_kinds[i];
        if (only && strcmp(only, kind->name)) continue;
        int rc = gb_replay_run(t, kind, &o, &out[*out_n], err);
        if (rc) return rc;
        if (*out_n && gb_replay_compare(&out[*out_n], &out[*out_best]) < 0) *out_best = *out_n;
        (*out_n)++;
    }
    return GB_OK;
}
