/* The Hopper tensor-core GEMM's small-problem variants on a GPU
 * (examples/gemm_tc.lua): 64-row and narrow tiles, pairs of blocks that share
 * A, and split K, correct on irregular shapes in bf16, f16 and e4m3 against
 * cuBLAS or the double-precision reference, with alpha and beta too (C read by
 * every epilogue); and split K's result the same bit for bit from launch to
 * launch (the script's `same`). Each test skips without
 * a GPU (sm_90a); gpubench-tune takes the GPU's lease itself, so this program
 * does not. The whole space's sweeps are scripts/gpu-validate.sh's. */
#include "gpu_present.h"
#include "suite_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static int setup(void **state)
{
    return suite_setup(state, "stream"); /* any group: only its scratch folder is used */
}

static void script_path(char *out, size_t n)
{
    source_dir(out, n);
    strncat(out, "/examples/gemm_tc.lua", n - strlen(out) - 1);
}

/* How many per-shape summaries say "<shapes>: N ok" and nothing else (no wrong,
 * failed, crashed or timed-out variant). */
static int shapes_all_ok(const char *out)
{
    int ok = 0;
    for (const char *line = out; line && *line; line = strchr(line, '\n'), line += line != NULL) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        if (len < 6 || strncmp(line, "  K=", 4) != 0) continue;
        const char *colon = memchr(line, ':', len);
        if (!colon) continue;
        char rest[128];
        snprintf(rest, sizeof rest, "%.*s", (int)(len - (size_t)(colon - line)), colon);
        int n, used = 0;
        if (sscanf(rest, ": %d ok%n", &n, &used) == 1 && rest[used] == '\0') ok++;
    }
    return ok;
}

/* Tunes gemm_tc.lua with the script arguments `words` (NULL-terminated, at most
 * 16) and expects exit 0 and `shapes` shapes whose every variant was right. */
static void expect_all_right(suite_fixture *f, int shapes, const char *const *words)
{
    char script[4096];
    script_path(script, sizeof script);
    const char *w[17] = {NULL};
    for (int i = 0; i < 16 && words[i]; i++)
        w[i] = words[i];
    suite_tune(f, script, "--cache", f->cache, "--max-ms", "20", "--", w[0], w[1], w[2], w[3], w[4],
               w[5], w[6], w[7], w[8], w[9], w[10], w[11], w[12], w[13], w[14], w[15],
               (char *)NULL);
    suite_assert_exit_0(f);
    int ok = shapes_all_ok(f->out);
    if (ok != shapes)
        fail_msg("expected %d shapes with every variant right, got %d:\n%s", shapes, ok, f->out);
}

#define EXPECT_ALL_RIGHT(f, shapes, ...)                                                           \
    do {                                                                                           \
        static const char *const words_[] = {__VA_ARGS__, NULL};                                   \
        expect_all_right(f, shapes, words_);                                                       \
    } while (0)

/* The small problems' sub-space (64- and 128-row tiles, 8 to 256 columns),
 * irregular shapes, a batch of 3, three types; NT and TT (B K-major, so the
 * narrow tiles too). */
static void test_small_problem_variants_are_right_on_irregular_shapes(void **state)
{
    if (!gpu_present()) skip();
    EXPECT_ALL_RIGHT(*state, 18, "bf16", "f16", "e4m3", "1x1x16", "17x33x64", "1001x1003x1008",
                     "batch=1,3", "space=small", "STAGES=4", "STORE=0");
    EXPECT_ALL_RIGHT(*state, 6, "TT", "1x1x16", "17x33x64", "1001x1003x1001", "batch=1,3",
                     "space=small", "STAGES=4", "STORE=0", "BM=64");
}

/* Pairs of blocks that share A (PAIR 1): the same shapes in bf16 and e4m3
 * (odd counts of column tiles: a pair's second tile outside C), narrow tiles
 * included; in TT, whole boxes of a B read MN-major. */
static void test_pairs_that_share_a_are_right_on_irregular_shapes(void **state)
{
    if (!gpu_present()) skip();
    EXPECT_ALL_RIGHT(*state, 12, "bf16", "e4m3", "1x1x16", "17x33x64", "1001x1003x1008",
                     "batch=1,3", "space=small", "STAGES=4", "STORE=0", "CLUSTER=2", "PAIR=1");
    EXPECT_ALL_RIGHT(*state, 2, "TT", "1001x1003x1001", "batch=1,3", "space=small", "STAGES=4",
                     "BM=128", "CLUSTER=2", "PAIR=1");
}

/* alpha and beta not 0 or 1: C read in every epilogue (from registers, through
 * TMA's staging a box column at a time, in halves, split K's last part), against
 * cuBLAS (bf16) and the double-precision reference (e5m2 in TN, transposed in
 * shared memory). */
static void test_alpha_and_beta_are_applied(void **state)
{
    if (!gpu_present()) skip();
    EXPECT_ALL_RIGHT(*state, 8, "bf16", "e5m2", "17x33x64", "1001x1003x1008", "batch=1,3",
                     "space=small", "STAGES=4", "alpha=0.5", "beta=0.75");
    EXPECT_ALL_RIGHT(*state, 2, "TN", "e5m2", "1001x1003x1001", "batch=1,3", "space=medium",
                     "alpha=-1.5", "beta=1");
    EXPECT_ALL_RIGHT(*state, 1, "bf16", "17x33x4096", "space=deep", "BN=64", "STAGES=4", "alpha=2",
                     "beta=-0.5");
}

/* Split K in 1, 2, 4 and 8 parts, every tile width, a long K that is no
 * multiple of a slice. */
static void test_split_k_is_right(void **state)
{
    if (!gpu_present()) skip();
    EXPECT_ALL_RIGHT(*state, 4, "bf16", "e4m3", "17x33x4100", "1001x1003x8000", "space=full",
                     "BM=64", "CONSUMERS=1", "STAGES=4", "STORE=0", "CLUSTER=1", "PINGPONG=0",
                     "GROUP=8", "RASTER=0", "PRE=0");
}

/* `same`: the variant against itself launched apart, bit for bit; split K sums
 * its parts in part order whichever arrives last. */
static void test_split_k_is_the_same_bit_for_bit(void **state)
{
    if (!gpu_present()) skip();
    EXPECT_ALL_RIGHT(*state, 2, "1001x1003x8001", "batch=1,3", "space=small", "BM=64", "BN=16",
                     "SPLIT=8", "STORE=0", "same");
    EXPECT_ALL_RIGHT(*state, 1, "e4m3", "1001x1003x8192", "space=full", "BM=128", "BN=128",
                     "CONSUMERS=2", "SPLIT=4", "STORE=0", "PINGPONG=0", "CLUSTER=1", "same");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_problem_variants_are_right_on_irregular_shapes),
        cmocka_unit_test(test_pairs_that_share_a_are_right_on_irregular_shapes),
        cmocka_unit_test(test_alpha_and_beta_are_applied),
        cmocka_unit_test(test_split_k_is_right),
        cmocka_unit_test(test_split_k_is_the_same_bit_for_bit),
    };
    return cmocka_run_group_tests(tests, setup, suite_teardown);
}
