/* Split K's arithmetic on the CPU (templates/splitk.h, the code the GEMM kernel
 * runs): how a tile's K loop is cut into parts, where each warp's part waits in
 * the workspace, that examples/gemm_tc.lua's workspace and counters hold every
 * slot of every configuration it may launch, and the fix-up's model: whichever
 * part arrives last, exactly one warp sums, in part order, to the same bits, and
 * the counter is zero again for the next launch. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "splitk.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cdiv(int a, int b)
{
    return (a + b - 1) / b;
}

/* Every slice in exactly one part, the parts in order, none empty, no more than
 * asked for; one part when split is 1. */
static void test_the_parts_cover_the_k_loop_once(void **state)
{
    (void)state;
    for (int slices = 1; slices <= 300; slices++)
        for (int split = 1; split <= 16; split++) {
            int parts = splitk_parts(slices, split), next = 0;
            assert_true(parts >= 1 && parts <= split);
            if (split == 1) assert_int_equal(parts, 1);
            for (int p = 0; p < parts; p++) {
                int k0, k1;
                splitk_range(slices, split, p, &k0, &k1);
                assert_int_equal(k0, next);
                assert_true(k1 > k0);
                next = k1;
            }
            assert_int_equal(next, slices);
        }
}

/* 9 slices in 4 parts would leave the fourth empty: 3 parts of 3. */
static void test_a_part_that_would_be_empty_is_not_made(void **state)
{
    (void)state;
    assert_int_equal(splitk_parts(9, 4), 3);
    assert_int_equal(splitk_parts(10, 4), 4);
    assert_int_equal(splitk_parts(3, 8), 3);
    int k0, k1;
    splitk_range(10, 4, 3, &k0, &k1);
    assert_int_equal(k0, 9);
    assert_int_equal(k1, 10);
}

/* One configuration's launch, as gemm_wgmma.cuh walks it: its tiles (a cluster's
 * blocks each on their own row tile), the consumers' shares of a tile's rows,
 * four warps each. */
typedef struct launch {
    int M, N, batch, BM, BN, cluster, consumers, pingpong, split;
} launch;

/* The script's sizes (examples/gemm_tc.lua, workspace() and counters()), for a
 * space that splits K into at most `split` parts. */
static unsigned long long script_counters(const launch *l)
{
    return (unsigned long long)l->batch * (cdiv(l->M, 64) + 4) * cdiv(l->N, 8) * 4;
}

static unsigned long long script_workspace(const launch *l)
{
    return (unsigned long long)l->batch * l->split * cdiv(l->M, 512) * 512 * (l->N + 256);
}

/* Every (slot, part) of a launch is a different place, and all of them lie
 * inside what the script allocates. */
static void expect_slots_fit(const launch *l)
{
    int unit_rows = cdiv(cdiv(l->M, l->BM), l->cluster), tiles_n = cdiv(l->N, l->BN);
    int tiles = l->batch * unit_rows * tiles_n, shares = l->pingpong ? 1 : l->consumers;
    int rows = (l->pingpong ? l->BM : l->BM / l->consumers) / 64; /* m64 blocks a consumer */
    int per_warp = 32 * rows * l->BN / 2;
    unsigned long long count = 0, last_slot = 0, last_end = 0;
    for (int t = 0; t < tiles; t++)
        for (int rank = 0; rank < l->cluster; rank++)
            for (int share = 0; share < shares; share++)
                for (int warp = 0; warp < 4; warp++) {
                    unsigned long long slot = splitk_slot(t, l->cluster, rank, shares, share, warp);
                    /* slots are dense and in order, so distinct */
                    assert_int_equal(slot, count);
                    count++;
                    last_slot = slot;
                    last_end = splitk_offset(slot, l->split, l->split - 1, per_warp) + per_warp;
                }
    if (last_slot + 1 > script_counters(l) || last_end > script_workspace(l))
        fail_msg("M=%d N=%d batch=%d BM=%d BN=%d cluster=%d consumers=%d split=%d: slots %llu of "
                 "%llu, floats %llu of %llu",
                 l->M, l->N, l->batch, l->BM, l->BN, l->cluster, l->consumers, l->split,
                 last_slot + 1, script_counters(l), last_end, script_workspace(l));
}

static void test_the_scripts_workspace_holds_every_slot(void **state)
{
    (void)state;
    static const int sizes[] = {1, 17, 63, 64, 65, 255, 256, 257, 511, 513, 1001};
    static const int bms[] = {64, 128, 256}, bns[] = {8, 16, 32, 64, 128, 192, 256};
    for (size_t m = 0; m < sizeof sizes / sizeof *sizes; m++)
        for (size_t n = 0; n < sizeof sizes / sizeof *sizes; n += 2)
            for (size_t i = 0; i < sizeof bms / sizeof *bms; i++)
                for (size_t j = 0; j < sizeof bns / sizeof *bns; j++)
                    for (int cluster = 1; cluster <= 2; cluster++)
                        for (int consumers = 1; consumers <= 2; consumers++) {
                            /* a consumer owns whole m64 blocks */
                            if (bms[i] / consumers < 64) continue;
                            launch l = {sizes[m], sizes[n],  3, bms[i], bns[j],
                                        cluster,  consumers, 0, 8};
                            expect_slots_fit(&l);
                        }
}

/* The fix-up of one slot, as settle() in gemm_wgmma.cuh does it: the parts
 * arrive in `order`; each writes its values to its place, then counts itself;
 * the one that sees parts - 1 sums every place in part order and sets the
 * counter back. Returns which part summed, with the sums in out. */
static int settle_model(const float *parts_values, int parts, int split, int per_warp,
                        const int *order, float *workspace, unsigned *counter, float *out)
{
    int summer = -1;
    for (int a = 0; a < parts; a++) {
        int part = order[a];
        float *mine = workspace + splitk_offset(0, split, part, per_warp);
        memcpy(mine, parts_values + (size_t)part * per_warp, per_warp * sizeof *mine);
        unsigned arrived = (*counter)++;
        if (arrived != (unsigned)parts - 1) continue;
        assert_int_equal(summer, -1); /* one warp sums */
        summer = part;
        *counter = 0;
        for (int i = 0; i < per_warp; i++) {
            float sum = workspace[splitk_offset(0, split, 0, per_warp) + i];
            for (int p = 1; p < parts; p++)
                sum += workspace[splitk_offset(0, split, p, per_warp) + i];
            out[i] = sum;
        }
    }
    return summer;
}

/* Values spread over many magnitudes, so that a sum in another order would
 * round differently. */
static float spread(unsigned *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    float x = (float)((*seed >> 8) & 0xFFFF) / 65536.0f - 0.5f;
    return ldexpf(x, (int)((*seed >> 4) % 24) - 12);
}

static void test_the_fix_up_sums_the_same_bits_whoever_arrives_last(void **state)
{
    (void)state;
    enum { SPLIT = 8, PER_WARP = 256 };
    unsigned seed = 7;
    float values[SPLIT * PER_WARP], workspace[SPLIT * PER_WARP], first[PER_WARP], again[PER_WARP];
    for (int i = 0; i < SPLIT * PER_WARP; i++)
        values[i] = spread(&seed);
    for (int parts = 1; parts <= SPLIT; parts++) {
        unsigned counter = 0;
        int order[SPLIT];
        for (int p = 0; p < parts; p++)
            order[p] = p;
        int summer =
            settle_model(values, parts, SPLIT, PER_WARP, order, workspace, &counter, first);
        assert_int_equal(summer, parts - 1);
        assert_int_equal(counter, 0);
        /* against the exact sum: within fp32's rounding of parts additions */
        for (int i = 0; i < PER_WARP; i++) {
            double exact = 0, size = 0;
            for (int p = 0; p < parts; p++) {
                exact += values[p * PER_WARP + i];
                size += fabs(values[p * PER_WARP + i]);
            }
            assert_true(fabs(first[i] - exact) <= parts * 6e-8 * size);
        }
        /* 50 other arrival orders: the same bits, whoever was last */
        for (int trial = 0; trial < 50; trial++) {
            for (int p = parts - 1; p > 0; p--) {
                seed = seed * 1103515245u + 12345u;
                int q = (int)((seed >> 8) % (unsigned)(p + 1)), swap = order[p];
                order[p] = order[q];
                order[q] = swap;
            }
            memset(workspace, 0xFF, sizeof workspace); /* stale values from before */
            summer =
                settle_model(values, parts, SPLIT, PER_WARP, order, workspace, &counter, again);
            assert_int_equal(summer, order[parts - 1]);
            assert_int_equal(counter, 0);
            assert_memory_equal(first, again, sizeof first);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_parts_cover_the_k_loop_once),
        cmocka_unit_test(test_a_part_that_would_be_empty_is_not_made),
        cmocka_unit_test(test_the_scripts_workspace_holds_every_slot),
        cmocka_unit_test(test_the_fix_up_sums_the_same_bits_whoever_arrives_last),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
