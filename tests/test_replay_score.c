/* The autotuning methodology's score (tuner/replay_score.c): on hand-made spaces
 * whose figures are worked out by the package's rules (docs/replay.md), its
 * refusal of a space too small for the cut-offs, T4 and Kernel Tuner files with
 * their evaluation costs, and the same score for the same seeds. */
#include "tuner/replay.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Configurations x = 0 .. n-1 taking times[x] ms, each costing 1 s to evaluate. */
static void table_of(gb_replay_table *t, const double *times, int n)
{
    gb_space space = {0};
    gb_value values[64];
    gb_err err = {0};
    for (int i = 0; i < n; i++)
        values[i] = gb_value_int(i);
    assert_int_equal(gb_space_add(&space, "x", values, n, &err), GB_OK);
    assert_int_equal(gb_replay_table_init(t, &space, 0, &err), GB_OK);
    for (int i = 0; i < n; i++) {
        assert_int_equal(gb_replay_table_add(t, (uint64_t)i, GB_TRIAL_OK, times[i], &err), GB_OK);
        t->entries[i].cost_s = 1;
    }
}

/* Times 1 .. 8; a search that evaluates 5, then 1 (the optimum), then 3; cut-offs
 * 0.5 and 0.01. By the package's rules: random search's curve 4, 3.5, 3, 2.5, 2
 * over 1 to 2 s, the search's 5, 4, 3, 2, 1, and so the standardised curve
 * -1/3, -0.2, 0, 1/3, 1: score 0.16 (0.1054691249 at 1000 points). */
static void a_hand_made_space_scores_as_the_methodology_says(void **state)
{
    (void)state;
    static const double times[] = {1, 2, 3, 4, 5, 6, 7, 8};
    gb_replay_table t;
    table_of(&t, times, 8);
    gb_score_opts o = {.cutoff = 0.5, .cutoff_start = 0.01, .resolution = 5};
    gb_score_space sp;
    gb_err err = {0};
    assert_int_equal(gb_score_space_init(&t, &o, &sp, &err), GB_OK);
    assert_true(sp.scorable);
    assert_int_equal(sp.fevals_start, 1);
    assert_int_equal(sp.fevals_end, 2);
    assert_int_equal(sp.max_fevals, 3);
    static const double baseline[] = {4, 3.5, 3, 2.5, 2}, want[] = {-1.0 / 3, -0.2, 0, 1.0 / 3, 1};
    double x[] = {1, 2, 3}, y[] = {5, 1, 1}, curve[5], score;
    gb_score_run run = {x, y, 3};
    for (int j = 0; j < 5; j++)
        assert_true(fabs(sp.baseline[j] - baseline[j]) < 1e-12);
    assert_int_equal(gb_score_curve(&sp, &run, 1, curve, &score, &err), GB_OK);
    for (int j = 0; j < 5; j++)
        assert_true(fabs(curve[j] - want[j]) < 1e-12);
    assert_true(fabs(score - 0.16) < 1e-12);
    gb_score_space_free(&sp);

    o.resolution = 1000;
    double fine[1000];
    assert_int_equal(gb_score_space_init(&t, &o, &sp, &err), GB_OK);
    assert_int_equal(gb_score_curve(&sp, &run, 1, fine, &score, &err), GB_OK);
    assert_true(fabs(score - 0.1054691249) < 1e-9);
    gb_score_space_free(&sp);
    gb_replay_table_free(&t);
}

/* Times 1 .. 4 with cut-offs 0.96 and 0.01: random search is expected at the
 * optimum inside the range, where the score would divide by 0. */
static void a_space_too_small_for_the_cut_offs_is_not_scored(void **state)
{
    (void)state;
    static const double times[] = {1, 2, 3, 4};
    gb_replay_table t;
    table_of(&t, times, 4);
    gb_score_opts o = {.cutoff = 0.96, .cutoff_start = 0.01, .resolution = 5};
    gb_score_space sp;
    gb_err err = {0};
    assert_int_equal(gb_score_space_init(&t, &o, &sp, &err), GB_OK);
    assert_false(sp.scorable);
    assert_non_null(strstr(sp.why, "would divide by 0"));
    gb_score_space_free(&sp);
    o.cutoff_start = 0.5; /* both at 2 evaluations */
    assert_int_equal(gb_score_space_init(&t, &o, &sp, &err), GB_OK);
    assert_false(sp.scorable);
    assert_non_null(strstr(sp.why, "both cut-offs fall at 2 evaluation(s)"));
    gb_score_space_free(&sp);
    gb_replay_table_free(&t);
}

/* The same seeds give the same score; random search scores near 0 against its
 * own expectation, the optimum's place known first scores near 1. */
static void the_same_seeds_give_the_same_score(void **state)
{
    (void)state;
    double times[64];
    for (int i = 0; i < 64; i++)
        times[i] = 1 + (double)((i * 37) % 64); /* a permutation of 1 .. 64 */
    gb_replay_table t;
    table_of(&t, times, 64);
    gb_score_opts o = {.cutoff = 0.96, .cutoff_start = 0.5, .resolution = 100, .repeats = 50};
    gb_score_space sp;
    gb_err err = {0};
    double curve[100], a, b;
    assert_int_equal(gb_score_space_init(&t, &o, &sp, &err), GB_OK);
    assert_true(sp.scorable);
    const gb_strategy_kind *random = gb_strategy_find("random");
    assert_non_null(random);
    assert_int_equal(gb_score_strategy(&t, &sp, random, &o, curve, &a, &err), GB_OK);
    assert_int_equal(gb_score_strategy(&t, &sp, random, &o, curve, &b, &err), GB_OK);
    assert_true(a == b);
    assert_true(fabs(a) < 0.5);
    gb_score_space_free(&sp);
    gb_replay_table_free(&t);
}

static const char T4[] =
    "{\"schema_version\": \"1.0.0\", \"metadata\": {\"timeunit\": \"miliseconds\"},\n"
    " \"results\": [\n"
    "  {\"configuration\": {\"b\": 32, \"u\": 1}, \"invalidity\": \"correct\",\n"
    "   \"times\": {\"compilation\": 500, \"benchmark\": 100, \"framework\": 0.5,\n"
    "             \"search_algorithm\": 0, \"validation\": 0, \"runtimes\": [2.0, 2.2]},\n"
    "   \"measurements\": [{\"name\": \"time\", \"value\": 2.1, \"unit\": \"ms\"}]},\n"
    "  {\"configuration\": {\"b\": 64, \"u\": 1}, \"invalidity\": \"compile\",\n"
    "   \"times\": {\"compilation\": 300},\n"
    "   \"measurements\": [{\"name\": \"time\", \"value\": \"CompilationFailedConfig\"}]},\n"
    "  {\"configuration\": {\"b\": 64, \"u\": 2}, \"invalidity\": \"constraints\"},\n"
    "  {\"configuration\": {\"b\": 32, \"u\": 2}, \"invalidity\": \"correct\",\n"
    "   \"times\": {\"compilation\": 400, \"benchmark\": 80, \"runtimes\": [1.5, 1.7]}}\n"
    " ]}\n";

static const char KT[] =
    "{\"device_name\": \"NVIDIA A100\", \"kernel_name\": \"k\", \"tune_params_keys\": [\"b\", "
    "\"u\"],\n"
    " \"tune_params\": {\"b\": [32, 64], \"u\": [1, 2]}, \"objective\": \"time\",\n"
    " \"cache\": {\n"
    "  \"32,1\": {\"b\": 32, \"u\": 1, \"time\": 2.1, \"compile_time\": 500, \"benchmark_time\": "
    "100,\n"
    "           \"framework_time\": 0.5, \"strategy_time\": 0, \"verification_time\": 0},\n"
    "  \"64,1\": {\"b\": 64, \"u\": 1, \"time\": \"CompilationFailedConfig\", \"compile_time\": "
    "300},\n"
    "  \"32,2\": {\"b\": 32, \"u\": 2, \"time\": 1.6, \"compile_time\": 400, \"benchmark_time\": "
    "80}\n"
    " }}\n";

/* Both of benchmark_hub's formats: the same configurations, statuses, times and
 * evaluation costs (the sum of the times a brute-force run records, in s); a T4
 * result the constraints rejected is not in the table. */
static void t4_and_kernel_tuner_files_read_with_their_costs(void **state)
{
    (void)state;
    gb_replay_table a, b;
    gb_err err = {0};
    assert_int_equal(gb_replay_parse(T4, strlen(T4), "t4.json", NULL, &a, &err), GB_OK);
    assert_int_equal(gb_replay_parse(KT, strlen(KT), "kt.json", NULL, &b, &err), GB_OK);
    assert_int_equal(a.format, GB_REPLAY_T4);
    assert_int_equal(a.n_entries, 3);
    assert_int_equal(b.n_entries, 3);
    for (size_t i = 0; i < a.n_entries; i++) {
        const gb_replay_entry *x = &a.entries[i], *y = gb_replay_find(&b, x->ordinal);
        assert_non_null(y);
        assert_int_equal(x->status, y->status);
        assert_true(x->status != GB_TRIAL_OK || fabs(x->ms - y->ms) < 1e-12);
        assert_true(fabs(x->cost_s - y->cost_s) < 1e-12);
    }
    assert_int_equal(a.n_status[GB_TRIAL_COMPILE_ERROR], 1);
    assert_true(fabs(a.entries[a.optimum].ms - 1.6) < 1e-12); /* the mean of its runtimes */
    assert_true(fabs(a.entries[0].cost_s - 0.6005) < 1e-12);
    gb_replay_table_free(&a);
    gb_replay_table_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_hand_made_space_scores_as_the_methodology_says),
        cmocka_unit_test(a_space_too_small_for_the_cut_offs_is_not_scored),
        cmocka_unit_test(the_same_seeds_give_the_same_score),
        cmocka_unit_test(t4_and_kernel_tuner_files_read_with_their_costs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
