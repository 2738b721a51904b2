/*
 * gpubench compare (report/compare/compare.h, cli/compare_main.c): the Mann-Whitney test
 * against a brute-force count of every ordering, the bootstrap interval, the
 * verdicts on crafted pairs of samples and on hand-made figures. Every sample
 * comes from a seeded generator, so each run sees the same numbers. The loader and
 * the command are tests/test_compare_cli.c's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "report/compare/compare.h"
#include "tuner/search.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* n samples around base with a relative normal noise (Box-Muller). */
static void draw(double *out, int n, double base, double noise, uint64_t seed)
{
    gb_rng rng;
    gb_rng_seed(&rng, seed);
    for (int i = 0; i < n; i++) {
        double u1 = 1.0 - gb_rng_uniform(&rng), u2 = gb_rng_uniform(&rng);
        double z = sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
        out[i] = base * (1.0 + noise * z);
    }
}

static gb_compare_result compare(double old_base, double new_base, double noise, int n,
                                 const gb_compare_opts *opts)
{
    double old[64], new_[64];
    gb_compare_result r;
    gb_err err;
    assert_true(n <= 64);
    draw(old, n, old_base, noise, 11);
    draw(new_, n, new_base, noise, 22);
    if (gb_compare_samples(old, n, new_, n, opts, &r, &err)) fail_msg("%s", err.msg);
    return r;
}

/* ---- the test ------------------------------------------------------------------ */

/* Every split of 1..9 into 4 and 5 values: the p-value must be what counting all
 * 126 orderings gives. */
static void exact_p_matches_a_count_of_every_ordering(void **state)
{
    enum { M = 4, N = 5, ALL = M + N };
    int u_of[1 << ALL], counts[M * N + 1] = {0}, total = 0;
    for (int mask = 0; mask < 1 << ALL; mask++) {
        if (__builtin_popcount((unsigned)mask) != M) continue;
        int u = 0;
        for (int i = 0; i < ALL; i++)
            for (int j = 0; j < ALL; j++)
                u += (mask >> i & 1) && !(mask >> j & 1) && i > j;
        u_of[mask] = u;
        counts[u]++, total++;
    }
    assert_int_equal(total, 126);
    for (int mask = 0; mask < 1 << ALL; mask++) {
        if (__builtin_popcount((unsigned)mask) != M) continue;
        double a[M], b[N];
        int na = 0, nb = 0, below = 0, above = 0;
        for (int i = 0; i < ALL; i++)
            (mask >> i & 1) ? (a[na++] = i + 1) : (b[nb++] = i + 1);
        for (int u = 0; u <= M * N; u++)
            below += u <= u_of[mask] ? counts[u] : 0, above += u >= u_of[mask] ? counts[u] : 0;
        double want = fmin(1.0, 2.0 * (below < above ? below : above) / total);
        gb_mwu t;
        gb_err err;
        assert_int_equal(gb_mann_whitney(a, M, b, N, &t, &err), GB_OK);
        assert_true(t.exact);
        assert_float_equal(t.u, u_of[mask], 0);
        assert_float_equal(t.p_value, want, 1e-12);
    }
}

static void exact_p_of_fully_separated_sets(void **state)
{
    double a[] = {1, 2, 3, 4, 5}, b[] = {6, 7, 8, 9, 10};
    gb_mwu t;
    gb_err err;
    assert_int_equal(gb_mann_whitney(a, 5, b, 5, &t, &err), GB_OK);
    assert_float_equal(t.u, 0, 0);
    assert_float_equal(t.p_value, 2.0 / 252.0, 1e-15); /* 2 of C(10, 5) orderings */
    assert_int_equal(gb_mann_whitney(b, 5, a, 5, &t, &err), GB_OK);
    assert_float_equal(t.u, 25, 0);
    assert_float_equal(t.p_value, 2.0 / 252.0, 1e-15);
}

/* Two 25-sample sets, exact; a tie added to one value forces the normal
 * approximation, whose p-value must land close to the exact one. */
static void normal_approximation_agrees_with_the_exact_test(void **state)
{
    double a[25], b[25];
    for (int i = 0; i < 25; i++)
        a[i] = 2 * i, b[i] = 2 * i + 9; /* b a little larger */
    gb_mwu exact, normal;
    gb_err err;
    assert_int_equal(gb_mann_whitney(a, 25, b, 25, &exact, &err), GB_OK);
    assert_true(exact.exact);
    a[0] = b[0]; /* one tie: U moves by 1/2 */
    assert_int_equal(gb_mann_whitney(a, 25, b, 25, &normal, &err), GB_OK);
    assert_false(normal.exact);
    assert_true(exact.p_value > 0.01 && exact.p_value < 0.2);
    assert_float_equal(normal.p_value, exact.p_value, 0.01);
    assert_true(normal.z < 0);
}

/* With ties the variance shrinks: n = 10 (5 + 5), ties {1,1}, {2,2,2}, {3,3}:
 * sum(t^3 - t) = 6 + 24 + 6 = 36; var = 25/12 * (11 - 36/90) = 22.083;
 * U of a = 4, mean 12.5: z = (8.5 - 0.5) / sqrt(22.083) = 1.7024, p = 0.0887. */
static void normal_approximation_corrects_for_ties(void **state)
{
    double a[] = {1, 1, 2, 2, 5}, b[] = {2, 3, 3, 6, 7};
    gb_mwu t;
    gb_err err;
    assert_int_equal(gb_mann_whitney(a, 5, b, 5, &t, &err), GB_OK);
    assert_false(t.exact);
    assert_float_equal(t.u, 4, 0);
    assert_float_equal(t.z, -8.0 / sqrt(25.0 / 12.0 * (11.0 - 36.0 / 90.0)), 1e-12);
    assert_float_equal(t.p_value, 0.08868, 1e-4);
}

static void identical_values_are_not_significant(void **state)
{
    double a[] = {3, 3, 3, 3, 3, 3}, b[] = {3, 3, 3, 3, 3, 3};
    gb_mwu t;
    gb_err err;
    assert_int_equal(gb_mann_whitney(a, 6, b, 6, &t, &err), GB_OK);
    assert_float_equal(t.p_value, 1.0, 0);
    assert_int_equal(gb_mann_whitney(a, 0, b, 6, &t, &err), GB_EINVAL);
    a[2] = NAN;
    assert_int_equal(gb_mann_whitney(a, 6, b, 6, &t, &err), GB_EINVAL);
    assert_non_null(strstr(err.msg, "NaN"));
}

/* ---- the bootstrap and the verdicts ------------------------------------------------- */

static void bootstrap_is_seeded_and_covers_the_true_ratio(void **state)
{
    double old[40], new_[40], lo, hi, lo2, hi2;
    gb_compare_opts o = gb_compare_opts_default();
    gb_err err;
    draw(old, 40, 1.0, 0.01, 1);
    draw(new_, 40, 1.05, 0.01, 2);
    assert_int_equal(gb_bootstrap_ratio(old, 40, new_, 40, &o, &lo, &hi, &err), GB_OK);
    assert_int_equal(gb_bootstrap_ratio(old, 40, new_, 40, &o, &lo2, &hi2, &err), GB_OK);
    assert_float_equal(lo, lo2, 0);
    assert_float_equal(hi, hi2, 0);
    assert_true(lo < 1.05 && hi > 1.05 && hi - lo < 0.02);
    o.seed = 99; /* another seed: another interval, but about the same */
    assert_int_equal(gb_bootstrap_ratio(old, 40, new_, 40, &o, &lo2, &hi2, &err), GB_OK);
    assert_true(lo2 != lo || hi2 != hi);
    assert_float_equal(lo2, lo, 0.005);
    old[3] = 0;
    assert_int_equal(gb_bootstrap_ratio(old, 40, new_, 40, &o, &lo, &hi, &err), GB_EINVAL);
}

static void clearly_slower_is_slower(void **state)
{
    gb_compare_opts o = gb_compare_opts_default();
    gb_compare_result r = compare(1.0, 1.10, 0.005, 30, &o);
    assert_int_equal(r.verdict, GB_VERDICT_SLOWER);
    assert_float_equal(r.ratio, 1.10, 0.01);
    assert_true(r.test.p_value < 1e-6 && r.ci_lo > 1.08 && r.ci_hi < 1.12);
}

static void clearly_faster_is_faster(void **state)
{
    gb_compare_opts o = gb_compare_opts_default();
    gb_compare_result r = compare(1.0, 0.90, 0.005, 30, &o);
    assert_int_equal(r.verdict, GB_VERDICT_FASTER);
    assert_true(r.test.p_value < 1e-6 && r.ratio < 0.91);
}

static void same_within_noise_is_same(void **state)
{
    gb_compare_opts o = gb_compare_opts_default();
    gb_compare_result r = compare(1.0, 1.0, 0.005, 30, &o);
    assert_int_equal(r.verdict, GB_VERDICT_SAME);
    assert_true(r.ci_lo >= 0.98 && r.ci_hi <= 1.02);
}

static void too_few_samples_are_unsure(void **state)
{
    gb_compare_opts o = gb_compare_opts_default();
    gb_compare_result r = compare(1.0, 1.5, 0.005, 4, &o);
    assert_int_equal(r.verdict, GB_VERDICT_UNSURE);
    assert_string_equal(r.reason, "too few samples");
    assert_true(isnan(r.test.p_value) && isnan(r.ci_lo));
    assert_float_equal(r.ratio, 1.5, 0.02); /* the medians are still reported */
    r = compare(1.0, 1.5, 0.005, 5, &o);    /* five a side is enough */
    assert_int_equal(r.verdict, GB_VERDICT_SLOWER);
}

static void significant_but_below_the_threshold_is_same(void **state)
{
    gb_compare_opts o = gb_compare_opts_default();
    gb_compare_result r = compare(1.0, 1.01, 0.002, 30, &o);
    assert_true(r.test.p_value < 1e-6);
    assert_int_equal(r.verdict, GB_VERDICT_SAME);
    assert_string_equal(r.reason, "significant but within the threshold");
    o.threshold = 0.005; /* a finer threshold sees it */
    r = compare(1.0, 1.01, 0.002, 30, &o);
    assert_int_equal(r.verdict, GB_VERDICT_SLOWER);
}

static void noisy_and_inconclusive_is_unsure(void **state)
{
    gb_compare_opts o = gb_compare_opts_default();
    gb_compare_result r = compare(1.0, 1.0, 0.10, 10, &o);
    assert_true(r.test.p_value >= 0.05);
    assert_int_equal(r.verdict, GB_VERDICT_UNSURE);
    assert_true(r.ci_lo < 0.98 || r.ci_hi > 1.02);
}

/* The rules on hand-made figures, including the edges of the threshold. */
static void verdict_rules_on_figures(void **state)
{
    gb_compare_opts o = gb_compare_opts_default();
    gb_compare_result r = {.n_old = 10, .n_new = 10, .ratio = 1.03, .ci_lo = 1.01, .ci_hi = 1.05};
    r.test.p_value = 0.01;
    gb_compare_verdict(&r, &o);
    assert_int_equal(r.verdict, GB_VERDICT_SLOWER);
    r.ratio = 1.02; /* not above 1 + threshold */
    gb_compare_verdict(&r, &o);
    assert_int_equal(r.verdict, GB_VERDICT_SAME);
    r.ratio = 0.97, r.ci_lo = 0.95, r.ci_hi = 0.99;
    gb_compare_verdict(&r, &o);
    assert_int_equal(r.verdict, GB_VERDICT_FASTER);
    r.test.p_value = 0.2, r.ratio = 1.0, r.ci_lo = 0.985, r.ci_hi = 1.02;
    gb_compare_verdict(&r, &o);
    assert_int_equal(r.verdict, GB_VERDICT_SAME);
    r.ci_hi = 1.021;
    gb_compare_verdict(&r, &o);
    assert_int_equal(r.verdict, GB_VERDICT_UNSURE);
    r.test.p_value = 0.001, r.ratio = 1.5, r.n_new = 4;
    gb_compare_verdict(&r, &o);
    assert_int_equal(r.verdict, GB_VERDICT_UNSURE);
}

static void geomean_of_ratios(void **state)
{
    double r1[] = {2.0, 0.5}, r2[] = {1.1, 1.1, NAN, 0.0}, r3[] = {NAN};
    assert_float_equal(gb_compare_geomean(r1, 2), 1.0, 1e-12);
    assert_float_equal(gb_compare_geomean(r2, 4), 1.1, 1e-12);
    assert_true(isnan(gb_compare_geomean(r3, 1)));
    assert_true(isnan(gb_compare_geomean(r3, 0)));
}

static void median_of_odd_and_even_counts(void **state)
{
    double odd[] = {5, 1, 3}, even[] = {4, 1, 3, 2};
    assert_float_equal(gb_compare_median(odd, 3), 3, 0);
    assert_float_equal(gb_compare_median(even, 4), 2.5, 0);
    assert_true(isnan(gb_compare_median(odd, 0)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exact_p_matches_a_count_of_every_ordering),
        cmocka_unit_test(exact_p_of_fully_separated_sets),
        cmocka_unit_test(normal_approximation_agrees_with_the_exact_test),
        cmocka_unit_test(normal_approximation_corrects_for_ties),
        cmocka_unit_test(identical_values_are_not_significant),
        cmocka_unit_test(bootstrap_is_seeded_and_covers_the_true_ratio),
        cmocka_unit_test(clearly_slower_is_slower),
        cmocka_unit_test(clearly_faster_is_faster),
        cmocka_unit_test(same_within_noise_is_same),
        cmocka_unit_test(too_few_samples_are_unsure),
        cmocka_unit_test(significant_but_below_the_threshold_is_same),
        cmocka_unit_test(noisy_and_inconclusive_is_unsure),
        cmocka_unit_test(verdict_rules_on_figures),
        cmocka_unit_test(geomean_of_ratios),
        cmocka_unit_test(median_of_odd_and_even_counts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
