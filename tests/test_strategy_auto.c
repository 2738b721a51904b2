/* The auto strategy (tuner/strategies/auto.c) and its model (tuner/gp.c): on a
 * GEMM-like space with a failing region it finds a configuration within 5% of the
 * best in far fewer evaluations than uniform sampling; proposals are reproducible,
 * valid and never repeated, batches may be asked for before earlier ones are told,
 * recorded results are learnt from and never proposed, and a model that cannot be
 * fitted leaves a working search. */
#include "tuner/gp.h"
#include "tuner/offline.h"
#include "tuner/strategy.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* ---- a GEMM-like space ---------------------------------------------------------
 * Tile sizes BM, BN, BK, warps per block, pipeline stages and vector width for a
 * 4096^3 single-precision GEMM on a 132-SM GPU: the time is a roofline of compute
 * (efficiency from the tile's arithmetic intensity, occupancy, latency hiding,
 * wave quantisation) and memory traffic, with 1% of deterministic noise. Blocks
 * whose shared memory exceeds 100 KB fail to compile: the failing region borders
 * the fast one, as it does on real GPUs. The constraints reject blocks whose
 * threads would own fewer outputs than the vector width, or more than 256. */

enum { P_BK, P_BM, P_BN, P_STAGES, P_VEC, P_WARPS }; /* the space sorts by name */

static const int BM_VALUES[] = {16, 32, 64, 128, 256};
static const int BK_VALUES[] = {8, 16, 32, 64};
static const int WARP_VALUES[] = {1, 2, 4, 8};
static const int STAGE_VALUES[] = {1, 2, 3, 4};
static const int VEC_VALUES[] = {1, 2, 4, 8};

static void add_param(gb_space *space, const char *name, const int *values, int n)
{
    gb_value v[8];
    gb_err err = {0};
    for (int i = 0; i < n; i++)
        v[i] = gb_value_int(values[i]);
    assert_int_equal(gb_space_add(space, name, v, n, &err), GB_OK);
}

static void make_gemm_space(gb_space *space)
{
    *space = (gb_space){0};
    add_param(space, "BM", BM_VALUES, 5);
    add_param(space, "BN", BM_VALUES, 5);
    add_param(space, "BK", BK_VALUES, 4);
    add_param(space, "WARPS", WARP_VALUES, 4);
    add_param(space, "STAGES", STAGE_VALUES, 4);
    add_param(space, "VEC", VEC_VALUES, 4);
}

typedef struct tile {
    int bm, bn, bk, warps, stages, vec;
} tile;

static tile tile_of(const gb_config *c)
{
    return (tile){BM_VALUES[c->index[P_BM]],        BM_VALUES[c->index[P_BN]],
                  BK_VALUES[c->index[P_BK]],        WARP_VALUES[c->index[P_WARPS]],
                  STAGE_VALUES[c->index[P_STAGES]], VEC_VALUES[c->index[P_VEC]]};
}

static int gemm_valid(void *ctx, const gb_config *c, bool *ok, gb_err *err)
{
    (void)ctx, (void)err;
    tile t = tile_of(c);
    int per_thread = t.bm * t.bn / (t.warps * 32);
    *ok = per_thread >= t.vec && per_thread <= 256;
    return GB_OK;
}

/* A fixed pseudo-random factor in [0.99, 1.01) per configuration. */
static double noise_of(uint64_t ordinal)
{
    uint64_t z = ordinal * 0x9e3779b97f4a7c15ULL + 0x632be59bd9b4e019ULL;
    z = (z ^ (z >> 31)) * 0xbf58476d1ce4e5b9ULL;
    z ^= z >> 29;
    return 0.99 + 0.02 * (double)(z >> 11) * 0x1.0p-53;
}

static double gemm_ms(const gb_config *c)
{
    tile t = tile_of(c);
    const double n = 4096, sms = 132, peak = 60e12, bandwidth = 3e12;
    int threads = t.warps * 32, smem = (t.bm + t.bn) * t.bk * 4 * t.stages;
    int per_sm = 2048 / threads;
    if (smem > 0 && 228 * 1024 / smem < per_sm) per_sm = 228 * 1024 / smem;
    if (per_sm < 1) per_sm = 1;
    double tiles = ceil(n / t.bm) * ceil(n / t.bn);
    double waves = ceil(tiles / (sms * per_sm));
    double intensity = (double)t.bm * t.bn / (t.bm + t.bn);
    double eff = pow(fmin(1.0, intensity / 48.0), 0.7);
    eff *= pow(fmin(1.0, per_sm * threads / 1024.0), 0.05);
    eff *= t.stages == 1 ? 0.55 : t.stages == 2 ? 0.9 : 1.0;
    eff *= t.vec == 1 ? 0.7 : t.vec == 2 ? 0.9 : 1.0;
    eff *= t.bk == 8 ? 0.85 : t.bk == 64 ? 0.95 : 1.0;
    eff *= tiles / (waves * sms * per_sm);
    double compute_s = 2 * n * n * n / (peak * eff);
    double memory_s = 4 * (n * n + n * (n * ceil(n / t.bn) + n * ceil(n / t.bm))) / bandwidth;
    return 1e3 * (fmax(compute_s, memory_s) + 3e-6) * noise_of(c->ordinal);
}

static bool gemm_fails(const gb_config *c)
{
    tile t = tile_of(c);
    return (t.bm + t.bn) * t.bk * 4 * t.stages > 100 * 1024;
}

typedef struct table {
    long evals; /* objective calls, to check none repeats */
    bool *evaluated;
    uint64_t size;
    int mode; /* NORMAL, CONSTANT (every configuration takes 1 ms), FAILING (none runs) */
} table;

enum { NORMAL, CONSTANT, FAILING };

static int gemm_objective(void *ctx, const gb_config *c, gb_trial_status *st, double *ms,
                          gb_err *err)
{
    (void)err;
    table *t = ctx;
    bool ok;
    gemm_valid(NULL, c, &ok, NULL);
    assert_true(ok);                        /* never an invalid proposal */
    assert_false(t->evaluated[c->ordinal]); /* never a repeated one */
    t->evaluated[c->ordinal] = true;
    t->evals++;
    *st = t->mode == FAILING ? GB_TRIAL_CRASHED
          : gemm_fails(c)    ? GB_TRIAL_COMPILE_ERROR
                             : GB_TRIAL_OK;
    *ms = *st != GB_TRIAL_OK ? NAN : t->mode == CONSTANT ? 1.0 : gemm_ms(c);
    return GB_OK;
}

/* The fastest valid configuration that runs. */
static double gemm_best_ms(const gb_space *space, int *out_n_valid, int *out_n_failed)
{
    double best = INFINITY;
    *out_n_valid = *out_n_failed = 0;
    for (uint64_t o = 0; o < gb_space_size(space); o++) {
        gb_config c;
        bool ok;
        gb_config_at(space, o, &c);
        gemm_valid(NULL, &c, &ok, NULL);
        if (!ok) continue;
        (*out_n_valid)++;
        if (gemm_fails(&c))
            (*out_n_failed)++;
        else
            best = fmin(best, gemm_ms(&c));
    }
    return best;
}

typedef struct ranked_ms {
    double ms;
    uint64_t ordinal;
} ranked_ms;

static int by_ms(const void *p, const void *q)
{
    const ranked_ms *a = p, *b = q;
    return a->ms < b->ms ? -1 : a->ms > b->ms;
}

/* Evaluations until a configuration within 5% of the best, for one seed. */
static int evals_to_target(const gb_space *space, gb_strategy_create_fn create, uint64_t seed,
                           double target_ms, int batch)
{
    gb_search s;
    gb_strategy *st;
    gb_err err = {0};
    table t = {.size = gb_space_size(space)};
    t.evaluated = calloc(t.size, sizeof *t.evaluated);
    assert_non_null(t.evaluated);
    assert_int_equal(gb_search_init(&s, space, gemm_valid, NULL, seed, &err), GB_OK);
    assert_int_equal(create(&s, &st, &err), GB_OK);
    gb_offline_opts opts = {.batch = batch, .target_ms = target_ms};
    gb_offline_result res;
    assert_int_equal(gb_offline_search(st, gemm_objective, &t, &opts, &res, &err), GB_OK);
    assert_true(res.evals_to_target > 0);
    assert_int_equal(res.n_evals, t.evals);
    gb_strategy_destroy(st);
    gb_search_free(&s);
    free(t.evaluated);
    return res.evals_to_target;
}

static int cmp_int(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

static int median_evals(const gb_space *space, gb_strategy_create_fn create, int seeds,
                        double target_ms, int batch)
{
    int evals[32];
    for (int i = 0; i < seeds; i++)
        evals[i] = evals_to_target(space, create, 100 + (uint64_t)i, target_ms, batch);
    qsort(evals, (size_t)seeds, sizeof *evals, cmp_int);
    return evals[seeds / 2];
}

/* The acceptance test in small: over 15 seeds, auto's median evaluations to within
 * 5% of the best are at most half of random's, batches of one and of four. */
static void auto_finds_near_best_faster_than_random(void **state)
{
    (void)state;
    gb_space space;
    make_gemm_space(&space);
    int n_valid, n_failed;
    double target = 1.05 * gemm_best_ms(&space, &n_valid, &n_failed);
    int random1 = median_evals(&space, gb_strategy_random, 15, target, 1);
    int auto1 = median_evals(&space, gb_strategy_auto, 15, target, 1);
    int auto4 = median_evals(&space, gb_strategy_auto, 15, target, 4);
    print_message("gemm-like space: %d valid, %d failing; median evaluations to within 5%%: "
                  "random %d, auto %d (batch 1), %d (batch 4)\n",
                  n_valid, n_failed, random1, auto1, auto4);
    assert_true(n_failed > n_valid / 10);
    assert_true(2 * auto1 <= random1);
    assert_true(2 * auto4 <= random1);
    gb_space_free(&space);
}

/* Runs auto on the GEMM-like space under accept, batch at a time, for at most
 * max_evals (0: to the end); the number of evaluations. */
static int run_auto(const gb_space *space, gb_config_filter accept, uint64_t seed, int batch,
                    int max_evals, int mode)
{
    gb_search s;
    gb_strategy *st;
    gb_err err = {0};
    table t = {.size = gb_space_size(space), .mode = mode};
    t.evaluated = calloc(t.size, sizeof *t.evaluated);
    assert_non_null(t.evaluated);
    assert_int_equal(gb_search_init(&s, space, accept, NULL, seed, &err), GB_OK);
    assert_int_equal(gb_strategy_auto(&s, &st, &err), GB_OK);
    gb_offline_opts opts = {.max_evals = max_evals, .batch = batch};
    gb_offline_result res;
    assert_int_equal(gb_offline_search(st, gemm_objective, &t, &opts, &res, &err), GB_OK);
    assert_int_equal(res.n_evals, t.evals);
    gb_strategy_destroy(st);
    gb_search_free(&s);
    free(t.evaluated);
    return (int)res.n_evals;
}

static void evaluate(table *t, const gb_config *asked, int n, gb_observation *obs)
{
    gb_err err = {0};
    for (int i = 0; i < n; i++) {
        obs[i] = (gb_observation){.config = asked[i]};
        assert_int_equal(gemm_objective(t, &asked[i], &obs[i].status, &obs[i].ms, &err), GB_OK);
    }
}

/* The first 40 proposals for seed, asked batch at a time and told as they come. */
static void first_proposals(const gb_space *space, uint64_t seed, int batch, uint64_t *seq)
{
    gb_search s;
    gb_strategy *st;
    gb_err err = {0};
    table t = {.size = gb_space_size(space)};
    t.evaluated = calloc(t.size, sizeof *t.evaluated);
    assert_int_equal(gb_search_init(&s, space, gemm_valid, NULL, seed, &err), GB_OK);
    assert_int_equal(gb_strategy_auto(&s, &st, &err), GB_OK);
    for (int k = 0; k < 40; k += batch) {
        gb_config asked[4];
        gb_observation obs[4];
        int n;
        assert_int_equal(gb_strategy_ask(st, batch, asked, &n, &err), GB_OK);
        assert_int_equal(n, batch);
        for (int i = 0; i < n; i++)
            seq[k + i] = asked[i].ordinal;
        evaluate(&t, asked, n, obs);
        assert_int_equal(gb_strategy_tell(st, obs, n, &err), GB_OK);
    }
    gb_strategy_destroy(st);
    gb_search_free(&s);
    free(t.evaluated);
}

/* The same seed gives the same proposals in the same order; another seed does not.
 * Asked in fours, each ask has turns of both searches; asked one at a time, the
 * model is left out of the descent's turns. */
static void same_seed_same_proposals(void **state)
{
    (void)state;
    gb_space space;
    make_gemm_space(&space);
    for (int batch = 4; batch >= 1; batch -= 3) {
        uint64_t seq[3][40];
        for (int r = 0; r < 3; r++)
            first_proposals(&space, r < 2 ? 7 : 8, batch, seq[r]);
        assert_memory_equal(seq[0], seq[1], sizeof seq[0]);
        assert_memory_not_equal(seq[0], seq[2], sizeof seq[0]);
    }
    gb_space_free(&space);
}

/* The pipeline asks again before it has told: every proposal is new, in the
 * random start and once the model leads, and late tells are taken in any order. */
static void batches_asked_before_told(void **state)
{
    (void)state;
    gb_space space;
    make_gemm_space(&space);
    gb_search s;
    gb_strategy *st;
    gb_err err = {0};
    table t = {.size = gb_space_size(&space)};
    t.evaluated = calloc(t.size, sizeof *t.evaluated); /* the objective checks repeats */
    assert_int_equal(gb_search_init(&s, &space, gemm_valid, NULL, 3, &err), GB_OK);
    assert_int_equal(gb_strategy_auto(&s, &st, &err), GB_OK);
    gb_config first[6], second[6];
    gb_observation obs1[6], obs2[6];
    int n1, n2;
    for (int round = 0; round < 8; round++) {
        assert_int_equal(gb_strategy_ask(st, 6, first, &n1, &err), GB_OK);
        assert_int_equal(gb_strategy_ask(st, 6, second, &n2, &err), GB_OK);
        assert_int_equal(n1, 6);
        assert_int_equal(n2, 6);
        evaluate(&t, first, n1, obs1);
        evaluate(&t, second, n2, obs2);
        assert_int_equal(gb_strategy_tell(st, obs2, n2, &err), GB_OK); /* the later batch first */
        assert_int_equal(gb_strategy_tell(st, obs1, n1, &err), GB_OK);
    }
    assert_int_equal(t.evals, 8 * 12);
    gb_strategy_destroy(st);
    gb_search_free(&s);
    free(t.evaluated);
    gb_space_free(&space);
}

/* Results recorded by an earlier run, told before the first ask, are never
 * proposed and steer the model: with everything recorded but five of the fastest
 * and five of the slowest configurations, the first proposals are fast ones. */
static void recorded_results_are_used_not_proposed(void **state)
{
    (void)state;
    gb_space space;
    make_gemm_space(&space);
    gb_search s;
    gb_strategy *st;
    gb_err err = {0};
    table t = {.size = gb_space_size(&space)};
    t.evaluated = calloc(t.size, sizeof *t.evaluated);
    /* The ok configurations by time; the five fastest and five slowest stay unseen. */
    int n_ok = 0;
    ranked_ms *r = malloc(t.size * sizeof *r);
    for (uint64_t o = 0; o < t.size; o++) {
        gb_config c;
        bool ok;
        gb_config_at(&space, o, &c);
        gemm_valid(NULL, &c, &ok, NULL);
        if (ok && !gemm_fails(&c)) r[n_ok++] = (ranked_ms){gemm_ms(&c), o};
    }
    qsort(r, (size_t)n_ok, sizeof *r, by_ms);
    bool *unseen = calloc(t.size, sizeof *unseen), *fast = calloc(t.size, sizeof *fast);
    for (int i = 0; i < 5; i++) {
        unseen[r[i].ordinal] = fast[r[i].ordinal] = true;
        unseen[r[n_ok - 1 - i].ordinal] = true;
    }
    assert_int_equal(gb_search_init(&s, &space, gemm_valid, NULL, 5, &err), GB_OK);
    assert_int_equal(gb_strategy_auto(&s, &st, &err), GB_OK);
    int n_recorded = 0;
    for (uint64_t o = 0; o < t.size; o++) {
        gb_config c;
        bool ok;
        gb_config_at(&space, o, &c);
        gemm_valid(NULL, &c, &ok, NULL);
        if (!ok || unseen[o]) continue;
        gb_observation obs = {.config = c, .recorded = true};
        assert_int_equal(gemm_objective(&t, &c, &obs.status, &obs.ms, &err), GB_OK);
        assert_int_equal(gb_strategy_tell(st, &obs, 1, &err), GB_OK);
        n_recorded++;
    }
    gb_config asked[16];
    int n, n_fast = 0;
    assert_int_equal(gb_strategy_ask(st, 3, asked, &n, &err), GB_OK);
    assert_int_equal(n, 3);
    for (int i = 0; i < n; i++) {
        assert_true(unseen[asked[i].ordinal]);
        n_fast += fast[asked[i].ordinal];
    }
    assert_int_equal(n_fast, 3);
    assert_int_equal(gb_strategy_ask(st, 16, asked, &n, &err), GB_OK);
    assert_int_equal(n, 7); /* the rest of the unseen, then nothing */
    for (int i = 0; i < n; i++)
        assert_true(unseen[asked[i].ordinal]);
    assert_int_equal(gb_strategy_ask(st, 16, asked, &n, &err), GB_OK);
    assert_int_equal(n, 0);
    assert_true(n_recorded > 4000);
    gb_strategy_destroy(st);
    gb_search_free(&s);
    free(t.evaluated), free(r), free(unseen), free(fast);
    gb_space_free(&space);
}

static int count_valid(const gb_space *space, gb_config_filter accept)
{
    int n = 0;
    for (uint64_t o = 0; o < gb_space_size(space); o++) {
        gb_config c;
        bool ok;
        gb_config_at(space, o, &c);
        accept(NULL, &c, &ok, NULL);
        n += ok;
    }
    return n;
}

/* A constraint that keeps one configuration in seven of those gemm_valid keeps. */
static int sparse_valid(void *ctx, const gb_config *c, bool *ok, gb_err *err)
{
    gemm_valid(ctx, c, ok, err);
    *ok = *ok && c->ordinal % 7 == 3;
    return GB_OK;
}

/* Under a selective constraint every proposal is valid and new (the objective
 * checks both), to the last of the valid set; then the search is over. */
static void constrained_space_to_exhaustion(void **state)
{
    (void)state;
    gb_space space;
    make_gemm_space(&space);
    int n_valid = count_valid(&space, sparse_valid);
    assert_true(n_valid > 500 && n_valid < 1000);
    assert_int_equal(run_auto(&space, sparse_valid, 9, 5, 0, NORMAL), n_valid);
    gb_space_free(&space);
}

/* Models that cannot be fitted (every time equal) or have nothing to learn from
 * (everything fails) leave a search that still proposes each valid configuration
 * once. */
static void degenerate_results_still_search(void **state)
{
    (void)state;
    gb_space space;
    make_gemm_space(&space);
    int n_valid = count_valid(&space, sparse_valid);
    assert_int_equal(run_auto(&space, sparse_valid, 4, 3, 0, CONSTANT), n_valid);
    assert_int_equal(run_auto(&space, sparse_valid, 4, 3, 0, FAILING), n_valid);
    gb_space_free(&space);
}

/* The model interpolates what it was told, is unsure away from it, and believing
 * a candidate shrinks the uncertainty next to it, not far away; targets that do
 * not vary give no model. */
static void gp_interpolates_and_believes(void **state)
{
    (void)state;
    double x[10], y[10];
    for (int i = 0; i < 10; i++)
        x[i] = 0.1 * i, y[i] = sin(6 * x[i]);
    gb_gp_hyper h;
    gb_gp gp = {0};
    gb_err err = {0};
    bool ok;
    assert_int_equal(gb_gp_tune(1, x, y, 10, NULL, &h, &ok, &err), GB_OK);
    assert_true(ok);
    assert_int_equal(gb_gp_fit(&gp, 1, x, y, 10, &h, &ok, &err), GB_OK);
    assert_true(ok);
    double xs[4] = {0.3, 0.35, 3.0, 0.36};
    gb_gp_batch b = {0};
    assert_int_equal(gb_gp_predict(&gp, xs, 4, &b, &err), GB_OK);
    assert_true(fabs(gp.y_mean + gp.y_scale * b.mean[0] - sin(1.8)) < 0.05);
    assert_true(fabs(gp.y_mean + gp.y_scale * b.mean[1] - sin(2.1)) < 0.1);
    assert_true(b.var[0] < b.var[1] && b.var[1] < b.var[2]);
    double near = b.var[3], far = b.var[2];
    assert_int_equal(gb_gp_condition(&gp, &b, 1, &err), GB_OK);
    assert_true(b.var[3] < 0.5 * near);
    assert_true(b.var[2] > 0.99 * far);
    assert_int_equal(gb_gp_predict(&gp, xs, 4, &b, &err), GB_EINVAL); /* after a pick */
    gb_gp_batch_free(&b);
    gb_gp_free(&gp);
    for (int i = 0; i < 10; i++)
        y[i] = 2.0;
    assert_int_equal(gb_gp_tune(1, x, y, 10, NULL, &h, &ok, &err), GB_OK);
    assert_false(ok);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gp_interpolates_and_believes),
        cmocka_unit_test(auto_finds_near_best_faster_than_random),
        cmocka_unit_test(same_seed_same_proposals),
        cmocka_unit_test(batches_asked_before_told),
        cmocka_unit_test(recorded_results_are_used_not_proposed),
        cmocka_unit_test(constrained_space_to_exhaustion),
        cmocka_unit_test(degenerate_results_still_search),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
