/* The search toolkit every strategy uses: the seeded generator, the constraints
 * asked once per configuration, uniform samples of the valid set without repeats,
 * neighbours, and the lazy walk of a large space under a selective constraint. */
#include "tuner/search.h"
#include "tuner/strategy.h"

#include "base/clock.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* A space of n_params parameters with the given value counts: values 1, 2, 4, ...
 * (up to 16 of them), else 1, 2, 3, ... */
static void make_space(gb_space *space, const int *counts, int n_params)
{
    gb_err err = {0};
    *space = (gb_space){0};
    for (int p = 0; p < n_params; p++) {
        gb_value values[128];
        for (int j = 0; j < counts[p]; j++)
            values[j] = gb_value_int(counts[p] <= 16 ? (int64_t)1 << j : j + 1);
        char name[16];
        snprintf(name, sizeof name, "P%d", p);
        assert_int_equal(gb_space_add(space, name, values, counts[p], &err), GB_OK);
    }
}

typedef struct filter_ctx {
    uint64_t modulus; /* accept ordinals divisible by it */
    long calls;
} filter_ctx;

static int every_kth(void *ctx, const gb_config *c, bool *ok, gb_err *err)
{
    (void)err;
    filter_ctx *f = ctx;
    f->calls++;
    *ok = c->ordinal % f->modulus == 0;
    return GB_OK;
}

static void rng_is_reproducible(void **state)
{
    (void)state;
    gb_rng a, b;
    gb_rng_seed(&a, 42);
    gb_rng_seed(&b, 42);
    for (int i = 0; i < 100; i++)
        assert_true(gb_rng_next(&a) == gb_rng_next(&b));
    gb_rng_seed(&b, 43);
    assert_false(gb_rng_next(&a) == gb_rng_next(&b));
    for (int i = 0; i < 1000; i++) {
        double u = gb_rng_uniform(&a);
        assert_true(u >= 0 && u < 1);
        assert_true(gb_rng_below(&a, 7) < 7);
    }
}

/* Every valid configuration comes out once, then ENOTFOUND; the constraint is
 * asked at most once per configuration. */
static void random_covers_valid_set_once(void **state)
{
    (void)state;
    gb_space space;
    make_space(&space, (int[]){4, 5, 6}, 3);
    filter_ctx f = {.modulus = 3};
    gb_search s;
    gb_err err = {0};
    assert_int_equal(gb_search_init(&s, &space, every_kth, &f, 7, &err), GB_OK);
    bool got[120] = {0};
    gb_config c;
    int n = 0;
    while (gb_search_random(&s, &c, &err) == GB_OK) {
        assert_int_equal(c.ordinal % 3, 0);
        assert_false(got[c.ordinal]);
        got[c.ordinal] = true;
        n++;
    }
    assert_int_equal(n, 40);
    assert_true(s.exhausted);
    assert_true(f.calls <= 120);
    assert_int_equal(gb_search_random(&s, &c, &err), GB_ENOTFOUND);
    gb_search_free(&s);
    gb_space_free(&space);
}

/* The first draws of many seeds land on each valid configuration about equally
 * often: the sampler is uniform over the valid set, not over the raw space. */
static void random_is_uniform_over_valid(void **state)
{
    (void)state;
    gb_space space;
    make_space(&space, (int[]){10, 10}, 2);
    int hits[100] = {0};
    for (uint64_t seed = 1; seed <= 20000; seed++) {
        filter_ctx f = {.modulus = 10};
        gb_search s;
        gb_err err = {0};
        gb_config c;
        assert_int_equal(gb_search_init(&s, &space, every_kth, &f, seed, &err), GB_OK);
        assert_int_equal(gb_search_random(&s, &c, &err), GB_OK);
        hits[c.ordinal]++;
        gb_search_free(&s);
    }
    for (int o = 0; o < 100; o++)
        if (o % 10 == 0)
            assert_true(hits[o] > 1700 && hits[o] < 2300); /* 2000 expected, 4.7 sigma */
        else
            assert_int_equal(hits[o], 0);
    gb_space_free(&space);
}

/* Peeking draws valid unseen configurations without claiming them: the seen set
 * does not grow, what was claimed is never peeked, and when nothing is left
 * unseen peeking says so, listed or not. */
static void peek_does_not_claim(void **state)
{
    (void)state;
    gb_space space;
    make_space(&space, (int[]){4, 5, 6}, 3);
    filter_ctx f = {.modulus = 3};
    gb_search s;
    gb_err err = {0};
    assert_int_equal(gb_search_init(&s, &space, every_kth, &f, 11, &err), GB_OK);
    gb_config c, claimed[40];
    bool peeked[120] = {0};
    for (int i = 0; i < 200; i++) {
        assert_int_equal(gb_search_peek_random(&s, &c, &err), GB_OK);
        assert_int_equal(c.ordinal % 3, 0);
        peeked[c.ordinal] = true;
    }
    assert_int_equal(s.n_seen, 0);
    int distinct = 0;
    for (int o = 0; o < 120; o++)
        distinct += peeked[o];
    assert_true(distinct > 30); /* 200 draws over 40: all but a few come up */
    for (int i = 0; i < 39; i++)
        assert_int_equal(gb_search_random(&s, &claimed[i], &err), GB_OK);
    uint64_t last = 0;
    for (uint64_t o = 0; o < 120; o += 3)
        if (!gb_search_seen(&s, o)) last = o;
    for (int i = 0; i < 20; i++) {
        assert_int_equal(gb_search_peek_random(&s, &c, &err), GB_OK);
        assert_int_equal(c.ordinal, last);
    }
    bool fresh;
    assert_int_equal(gb_search_claim(&s, last, &fresh, &err), GB_OK);
    assert_true(fresh);
    assert_int_equal(gb_search_peek_random(&s, &c, &err), GB_ENOTFOUND);
    assert_true(s.exhausted);
    assert_int_equal(gb_search_random(&s, &c, &err), GB_ENOTFOUND);
    gb_search_free(&s);
    gb_space_free(&space);
}

static void neighbours_differ_in_one_parameter(void **state)
{
    (void)state;
    gb_space space;
    make_space(&space, (int[]){3, 4, 5}, 3);
    gb_search s;
    gb_err err = {0};
    assert_int_equal(gb_search_init(&s, &space, NULL, NULL, 1, &err), GB_OK);
    gb_config c, out[16];
    int n;
    gb_config_at(&space, 1 * 20 + 2 * 5 + 3, &c); /* index 1, 2, 3 */
    assert_int_equal(gb_search_max_neighbours(&s), 9);
    assert_int_equal(gb_search_neighbours(&s, &c, 0, out, 16, &n, &err), GB_OK);
    assert_int_equal(n, 9);
    for (int i = 0; i < n; i++) {
        int differ = 0;
        for (int p = 0; p < 3; p++)
            differ += out[i].index[p] != c.index[p];
        assert_int_equal(differ, 1);
    }
    assert_int_equal(gb_search_neighbours(&s, &c, 1, out, 16, &n, &err), GB_OK);
    assert_int_equal(n, 6); /* one step either way in each parameter */
    double x[3];
    gb_search_encode(&s, &c, x);
    assert_true(x[0] == 0.5); /* 1, 2, 4 on a log scale: the middle */
    gb_search_free(&s);
    gb_space_free(&space);
}

/* 10^6 configurations, 99% rejected: the exhaustive walk lists the 10^4 valid ones
 * without materialising the space (the constraint is asked once each), and the
 * random sampler finds valid ones by rejection. Prints the rate. */
static void lazy_walk_of_a_million(void **state)
{
    (void)state;
    gb_space space;
    make_space(&space, (int[]){100, 100, 100}, 3);
    filter_ctx f = {.modulus = 100};
    gb_search s;
    gb_strategy *ex;
    gb_err err = {0};
    assert_int_equal(gb_search_init(&s, &space, every_kth, &f, 1, &err), GB_OK);
    assert_int_equal(gb_strategy_exhaustive(&s, &ex, &err), GB_OK);
    gb_config batch[64];
    int n, total = 0;
    double t0 = gb_now_ms();
    do {
        assert_int_equal(gb_strategy_ask(ex, 64, batch, &n, &err), GB_OK);
        total += n;
    } while (n > 0);
    double s_taken = (gb_now_ms() - t0) / 1e3;
    assert_int_equal(total, 10000);
    assert_true(s.exhausted);
    assert_int_equal(f.calls, 1000000);
    assert_int_equal(s.n_rejected, 990000);
    print_message("lazy walk: 10^6 configurations, 99%% rejected, %.2f M configs/s\n",
                  1e6 / s_taken / 1e6);
    gb_strategy_destroy(ex);
    gb_search_free(&s);

    f.calls = 0;
    assert_int_equal(gb_search_init(&s, &space, every_kth, &f, 2, &err), GB_OK);
    gb_config c;
    for (int i = 0; i < 100; i++) {
        assert_int_equal(gb_search_random(&s, &c, &err), GB_OK);
        assert_int_equal(c.ordinal % 100, 0);
    }
    assert_false(s.listed); /* found by rejection, the space never listed */
    assert_true(f.calls < 100000);
    gb_search_free(&s);
    gb_space_free(&space);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rng_is_reproducible),
        cmocka_unit_test(random_covers_valid_set_once),
        cmocka_unit_test(random_is_uniform_over_valid),
        cmocka_unit_test(peek_does_not_claim),
        cmocka_unit_test(neighbours_differ_in_one_parameter),
        cmocka_unit_test(lazy_walk_of_a_million),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
