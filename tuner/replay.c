/* The replay run (replay.h): each seed a fresh search over the table's space, the
 * strategy run by gb_offline_search until it finds a configuration within the
 * target or spends its budget, and the statistics over the seeds. */
#include "tuner/replay.h"

#include "base/clock.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double gb_replay_target_ms(const gb_replay_table *t, double within_pct)
{
    if (!t->has_optimum) return 0;
    return t->entries[t->optimum].ms * (1 + within_pct / 100);
}

size_t gb_replay_n_within(const gb_replay_table *t, double within_pct)
{
    double target = gb_replay_target_ms(t, within_pct);
    size_t n = 0;
    for (size_t i = 0; i < t->n_entries; i++)
        n += t->entries[i].status == GB_TRIAL_OK && t->entries[i].ms <= target;
    return n;
}

/* One search: evaluations to the target (GB_REPLAY_INF when not reached) and
 * evaluations spent. */
static int run_seed(const gb_replay_table *t, const gb_strategy_kind *kind,
                    const gb_offline_opts *o, uint64_t seed, int *out_evals, int *out_spent,
                    gb_err *err)
{
    gb_search search;
    gb_strategy *strategy = NULL;
    gb_offline_result res;
    int rc = gb_search_init(&search, &t->space, gb_replay_accept, (void *)t, seed, err);
    if (rc) return rc;
    rc = kind->create(&search, &strategy, err);
    if (rc == GB_OK) rc = gb_offline_search(strategy, gb_replay_objective, (void *)t, o, &res, err);
    if (rc == GB_OK) {
        *out_evals = res.evals_to_target >= 0 ? res.evals_to_target : GB_REPLAY_INF;
        *out_spent = res.n_evals;
    }
    gb_strategy_destroy(strategy);
    gb_search_free(&search);
    if (rc) gb_err_prefix(err, "strategy %s, seed %llu", kind->name, (unsigned long long)seed);
    return rc;
}

/* Unreached searches sort after every number. */
static int by_evals(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    if (x == y) return 0;
    if (x == GB_REPLAY_INF) return 1;
    if (y == GB_REPLAY_INF) return -1;
    return x < y ? -1 : 1;
}

/* The k-th smallest (1-based) of sorted evaluations, k = ceil(q * n): the nearest
 * rank, so a percentile is always one search's count. */
static int nearest_rank(const int *sorted, int n, double q)
{
    int k = (int)ceil(q * n - 1e-9);
    return sorted[(k < 1 ? 1 : k > n ? n : k) - 1];
}

static int summarise(gb_replay_stats *s, const int *spent)
{
    int *sorted = malloc((size_t)s->n_seeds * sizeof *sorted);
    if (!sorted) return GB_ENOMEM;
    memcpy(sorted, s->evals, (size_t)s->n_seeds * sizeof *sorted);
    qsort(sorted, (size_t)s->n_seeds, sizeof *sorted, by_evals);
    s->median = nearest_rank(sorted, s->n_seeds, 0.5);
    s->p90 = nearest_rank(sorted, s->n_seeds, 0.9);
    double total = 0;
    for (int i = 0; i < s->n_seeds; i++) {
        s->n_reached += s->evals[i] != GB_REPLAY_INF;
        total += spent[i];
    }
    s->mean_evals = total / s->n_seeds;
    free(sorted);
    return GB_OK;
}

int gb_replay_run(const gb_replay_table *t, const gb_strategy_kind *kind,
                  const gb_replay_opts *opts, gb_replay_stats *out, gb_err *err)
{
    memset(out, 0, sizeof *out);
    if (opts->n_seeds < 1) return gb_err_set(err, GB_EINVAL, "replay needs at least one seed");
    if (!t->has_optimum) return gb_err_set(err, GB_EINVAL, "the table has no timed configuration");
    int budget = opts->budget > 0           ? opts->budget
                 : t->n_entries > INT32_MAX ? INT32_MAX
                                            : (int)t->n_entries;
    gb_offline_opts o = {.max_evals = budget,
                         .batch = opts->batch > 0 ? opts->batch : 1,
                         .target_ms = gb_replay_target_ms(t, opts->within_pct)};
    *out = (gb_replay_stats){.strategy = kind->name, .n_seeds = opts->n_seeds, .budget = budget};
    out->evals = malloc((size_t)opts->n_seeds * sizeof *out->evals);
    int *spent = malloc((size_t)opts->n_seeds * sizeof *spent);
    int rc = out->evals && spent ? GB_OK : gb_err_set(err, GB_ENOMEM, "out of memory");
    double t0 = gb_now_ms();
    uint64_t first = opts->first_seed ? opts->first_seed : 1;
    for (int i = 0; rc == GB_OK && i < opts->n_seeds; i++)
        rc = run_seed(t, kind, &o, first + (uint64_t)i, &out->evals[i], &spent[i], err);
    out->seconds = (gb_now_ms() - t0) / 1e3;
    if (rc == GB_OK && summarise(out, spent)) rc = gb_err_set(err, GB_ENOMEM, "out of memory");
    free(spent);
    if (rc) gb_replay_stats_free(out);
    return rc;
}

void gb_replay_stats_free(gb_replay_stats *s)
{
    if (!s) return;
    free(s->evals);
    memset(s, 0, sizeof *s);
}

/* Evaluation counts in order, unreached last. */
static int order_evals(int a, int b)
{
    return by_evals(&a, &b);
}

int gb_replay_compare(const gb_replay_stats *a, const gb_replay_stats *b)
{
    int c = order_evals(a->median, b->median);
    if (!c) c = order_evals(a->p90, b->p90);
    double reached_a = (double)a->n_reached / a->n_seeds,
           reached_b = (double)b->n_reached / b->n_seeds;
    if (!c) c = (reached_b > reached_a) - (reached_b < reached_a);
    if (!c) c = (a->mean_evals > b->mean_evals) - (a->mean_evals < b->mean_evals);
    return c;
}
