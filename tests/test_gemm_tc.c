/* The Hopper tensor-core GEMM without a GPU: examples/gemm_tc.lua compiles its
 * whole valid space for sm_90a in bf16 (and a part of it in f16, fp8 e4m3,
 * tf32, e5m2 x e4m3, e5m2 x e5m2 and the transposed layouts of each, with the
 * double-precision reference where cuBLASLt has no GEMM), and the PTX of a
 * variant holds what the template is built from (TMA loads on mbarriers, wgmma
 * of each type, transposed operands, the shared-memory transpose of fp8 and
 * tf32 ones or their K-major copy first, register hand-over, multicast in a cluster, TMA stores);
 * where the toolkit has cuobjdump (a GPU machine's), the SASS holds HGMMA. Correctness and the
 * default tune on a GPU are scripts/gpu-validate.sh's. */
#include "engine/nvrtc.h"
#include "suite_fixture.h"
#include "template_compile.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* Compiles the space for the script arguments in `words` (at most 14,
 * NULL-terminated: types, layouts, shapes, parameters fixed to one value; the
 * shape is 4096³ unless one is given) and expects `compiled` variants, none
 * failed. */
static void expect_compiled(suite_fixture *f, const char *compiled, const char *const *words)
{
    char script[4096];
    script_path(script, sizeof script);
    const char *w[15] = {NULL};
    for (int i = 0; i < 14 && words[i]; i++)
        w[i] = words[i];
    suite_tune(f, script, "--compile-only", "--arch", "sm_90a", "--jobs", "2", "--cache", f->cache,
               "--", w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7], w[8], w[9], w[10], w[11],
               w[12], w[13], (char *)NULL);
    if (f->status != 0) fprintf(stderr, "%s\n%s\n", f->out, f->err);
    assert_int_equal(f->status, 0);
    if (!strstr(f->out, compiled) || !strstr(f->out, " 0 failed"))
        fail_msg("%s %s %s: expected %s and none failed:\n%s", w[0], w[1] ? w[1] : "",
                 w[2] ? w[2] : "", compiled, f->out);
}

#define EXPECT_COMPILED(f, compiled, ...)                                                          \
    do {                                                                                           \
        static const char *const words_[] = {__VA_ARGS__, NULL};                                   \
        expect_compiled(f, compiled, words_);                                                      \
    } while (0)

/* The sub-space each size of shape gets by default, whole in bf16: a large
 * one's (4096^3), a medium one's (2048^3) and a small one's (512^3: 64-row
 * tiles, tiles of 8 to 32 columns); the other types' large sub-space with one
 * group size (tf32's 4-byte C leaves room for fewer staged epilogues). */
static void test_every_configuration_compiles_in_each_type(void **state)
{
    EXPECT_COMPILED(*state, "  28 compiled", "bf16");
    EXPECT_COMPILED(*state, "  14 compiled", "bf16", "2048");
    EXPECT_COMPILED(*state, "  28 compiled", "bf16", "512");
    EXPECT_COMPILED(*state, "  14 compiled", "f16", "GROUP=8");
    EXPECT_COMPILED(*state, "  14 compiled", "e4m3", "GROUP=8");
    EXPECT_COMPILED(*state, "  8 compiled", "tf32", "GROUP=8");
}

/* gemm_tc.lua refuses the script argument `word`, naming it. */
static void expect_word_refused(suite_fixture *f, const char *word)
{
    char script[4096], named[128];
    script_path(script, sizeof script);
    suite_tune(f, script, "--compile-only", "--cache", f->cache, "--", "bf16", word, (char *)NULL);
    assert_int_not_equal(f->status, 0);
    snprintf(named, sizeof named, "got '%s'", word);
    if (!strstr(f->err, named)) fail_msg("expected %s:\n%s", named, f->err);
}

/* PARAM=value[,value...] sets a parameter's values whatever the sub-space
 * (128 x 128 tiles in 8 stages take more shared memory than a block has), a
 * value given twice counting once; a list with an empty value is refused,
 * naming the word. */
static void test_parameter_values_on_the_command_line(void **state)
{
    suite_fixture *f = *state;
    EXPECT_COMPILED(f, "  3 compiled", "bf16", "512", "BM=64,128", "BN=64,128", "STAGES=8",
                    "STORE=1");
    EXPECT_COMPILED(f, "  1 compiled", "bf16", "512", "BM=128", "BN=64", "STAGES=8", "STORE=1");
    EXPECT_COMPILED(f, "  1 compiled", "bf16", "512", "BM=64,64", "BN=64", "STAGES=8", "STORE=1");
    expect_word_refused(f, "BM=64,");
}

/* alpha=X and beta=X: with beta not 0 the kernel has a name of its own (a best
 * checked without reading C must not answer for a run that reads it); a value
 * that is no finite number is refused, naming the word. */
static void test_alpha_and_beta_on_the_command_line(void **state)
{
    suite_fixture *f = *state;
    EXPECT_COMPILED(f, "  2 compiled", "bf16", "512", "alpha=0.5", "beta=0.75", "BM=64", "BN=64",
                    "STAGES=4", "STORE=0,1");
    if (!strstr(f->out, "gemm_tc_bf16_nt_beta ")) fail_msg("no kernel named _beta:\n%s", f->out);
    EXPECT_COMPILED(f, "  1 compiled", "bf16", "512", "alpha=2", "BM=64", "BN=64", "STAGES=4",
                    "STORE=1");
    if (strstr(f->out, "_beta")) fail_msg("beta 0 named _beta:\n%s", f->out);
    expect_word_refused(f, "beta=x");
    expect_word_refused(f, "alpha=inf");
    expect_word_refused(f, "beta=1e40");
}

/* Pairs of blocks that share A (PAIR 1) over the small sub-space, narrow
 * tiles included, and the large one (both kinds of pair are also in the full
 * space of test_rows_of_any_length_compile_padded). */
static void test_pairs_that_share_a_compile(void **state)
{
    EXPECT_COMPILED(*state, "  28 compiled", "bf16", "512", "CLUSTER=2", "PAIR=1");
    EXPECT_COMPILED(*state, "  14 compiled", "bf16", "CLUSTER=2", "PAIR=1", "GROUP=8");
}

static void test_mixed_fp8_and_the_transposed_layouts_compile(void **state)
{
    EXPECT_COMPILED(*state, "  10 compiled", "e5m2", "BN=128", "GROUP=8");
    EXPECT_COMPILED(*state, "  10 compiled", "NN", "BN=128", "GROUP=8");
    EXPECT_COMPILED(*state, "  10 compiled", "TN", "BN=128", "GROUP=8");
    EXPECT_COMPILED(*state, "  10 compiled", "TT", "BN=128", "GROUP=8");
}

/* Split K over the whole space's SPLIT (1, 2, 4, 8): bf16 in 64 x 64 tiles, and
 * e4m3 with both operands copied K-major first (PRE=1), which splits as NT does
 * (the reference: gemm_tc_ref.cuh). */
static void test_split_k_compiles(void **state)
{
    EXPECT_COMPILED(*state, "  4 compiled", "bf16", "512", "space=full", "BM=64", "BN=64",
                    "CONSUMERS=1", "STORE=0", "CLUSTER=1", "PINGPONG=0", "STAGES=4", "GROUP=8",
                    "RASTER=0");
    EXPECT_COMPILED(*state, "  5 compiled", "e4m3", "TN", "1024", "space=full", "BM=128", "BN=128",
                    "CONSUMERS=2", "STORE=0", "CLUSTER=1", "PINGPONG=0", "STAGES=4", "GROUP=8",
                    "RASTER=0", "PRE=1");
}

/* fp8 and tf32 in the layouts whose operands the kernel transposes (in shared
 * memory or, PRE=1, into a K-major copy first: every configuration twice where
 * PRE=0's raw buffers fit; no clusters there), and e5m2 x e5m2; the counts
 * include the
 * reference, compiled from gemm_tc_ref.cuh where cuBLASLt has no such GEMM
 * (fp8 with an MN-major operand, e5m2 x e5m2). */
static void test_fp8_and_tf32_in_the_transposed_layouts_compile(void **state)
{
    EXPECT_COMPILED(*state, "  34 compiled", "e4m3", "NN", "space=full", "BN=128", "STAGES=4",
                    "GROUP=8", "RASTER=0", "SPLIT=1");
    EXPECT_COMPILED(*state, "  26 compiled", "tf32", "TN", "space=full", "BN=128", "STAGES=4",
                    "GROUP=8", "RASTER=0", "SPLIT=1");
    EXPECT_COMPILED(*state, "  33 compiled", "e5m2_e5m2", "TT", "space=full", "BN=128", "STAGES=4",
                    "GROUP=8", "RASTER=0", "SPLIT=1");
}

/* K, M and N that are no multiple of 16 bytes: A's and B's rows are padded to
 * one (the tensor maps' strides), so these shapes compile where TMA refused the
 * packed rows. bf16 in TT (rows of M and K; single blocks and pairs that share
 * B or A), e4m3 in TN (rows of M and N, and its reference, gemm_tc_ref.cuh),
 * tf32 in NN (rows of K and N). */
static void test_rows_of_any_length_compile_padded(void **state)
{
    EXPECT_COMPILED(*state, "  27 compiled", "TT", "1001x1003x1001", "space=full", "SPLIT=1",
                    "BN=128", "BM=128", "STAGES=4", "GROUP=8", "RASTER=0");
    EXPECT_COMPILED(*state, "  18 compiled", "e4m3", "TN", "1001x1003x1001", "space=full",
                    "SPLIT=1", "BN=128", "BM=128", "STAGES=4", "GROUP=8", "RASTER=0");
    EXPECT_COMPILED(*state, "  16 compiled", "tf32", "NN", "1001x1003x1001", "space=full",
                    "SPLIT=1", "BN=128", "BM=128", "STAGES=4", "GROUP=8", "RASTER=0");
}

/* The PTX of one bf16 kernel of gemm_wgmma.cuh (the caller frees it). */
static char *bf16_ptx(const char *name_expr)
{
    const char *bf16[3] = {"-DGEMM_T=__nv_bfloat16"};
    size_t bytes;
    return template_compile("gemm_wgmma.cuh", name_expr, "--gpu-architecture=compute_90a", bf16,
                            &bytes);
}

/* How many times needle occurs in text. */
static int count_of(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, needle)); p++)
        n++;
    return n;
}

static void expect_in_ptx(const char *name_expr, const char *defines[3], const char *const *needles,
                          size_t n)
{
    size_t bytes;
    char *ptx = template_compile("gemm_wgmma.cuh", name_expr, "--gpu-architecture=compute_90a",
                                 defines, &bytes);
    for (size_t i = 0; i < n; i++)
        if (!strstr(ptx, needles[i])) fail_msg("%s: the PTX has no %s", name_expr, needles[i]);
    free(ptx);
}

#define EXPECT_IN_PTX(expr, defines, ...)                                                          \
    do {                                                                                           \
        static const char *const needles[] = {__VA_ARGS__};                                        \
        expect_in_ptx(expr, defines, needles, sizeof needles / sizeof needles[0]);                 \
    } while (0)

static void test_the_ptx_holds_wgmma_tma_and_register_hand_over(void **state)
{
    (void)state;
    const char *bf16[3] = {"-DGEMM_T=__nv_bfloat16"};
    EXPECT_IN_PTX(
        "gemm_wgmma<128,256,64,4,2,8,0,0,0,1,0,0>", bf16,
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16", "wgmma.commit_group.sync.aligned",
        "wgmma.wait_group.sync.aligned",
        "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
        "mbarrier.try_wait.parity", "setmaxnreg.inc.sync.aligned.u32 232",
        "setmaxnreg.dec.sync.aligned.u32 40");
    const char *f16[3] = {"-DGEMM_T=__half"};
    EXPECT_IN_PTX("gemm_wgmma<128,128,64,4,2,8,1,0,0,1,0,0>", f16,
                  "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16");
    /* a pair of blocks: B multicast into both, releases on both blocks' barriers */
    EXPECT_IN_PTX("gemm_wgmma<128,128,64,4,2,8,0,0,0,2,0,0>", bf16,
                  "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                  ".multicast::cluster",
                  "mapa.shared::cluster.u32", "mbarrier.arrive.shared::cluster.b64",
                  "barrier.cluster.arrive.relaxed.aligned");
    /* a pair that shares A (PAIR 1): A multicast into both, B each block's own;
     * with 64 x 16 tiles, B through the map of 8-row boxes */
    EXPECT_IN_PTX("gemm_wgmma<64,16,64,4,1,8,0,0,0,2,0,0,0,1,1>", bf16,
                  "wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16",
                  "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                  ".multicast::cluster",
                  "mapa.shared::cluster.u32", "barrier.cluster.arrive");
    /* tiles walked along N */
    EXPECT_IN_PTX("gemm_wgmma<128,128,64,4,2,8,0,0,0,1,0,1>", bf16,
                  "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16");
    /* the epilogue through shared memory (16-bit C by stmatrix) and TMA stores,
     * a box column at a time through half as many slots */
    EXPECT_IN_PTX("gemm_wgmma<128,256,64,4,2,8,0,0,0,1,2,0>", bf16, "fence.proxy.async.shared::cta",
                  "stmatrix.sync.aligned.m8n8.x4.shared.b16",
                  "cp.async.bulk.tensor.3d.global.shared::cta.bulk_group",
                  "cp.async.bulk.commit_group", "cp.async.bulk.wait_group.read 1");
}

/* A narrow B (BN 8, 16 or 32) comes in one box a slice, through the map of
 * its width: its tile issues as many TMA loads as a 64 x 64 one. */
static void test_a_narrow_b_is_one_box_a_slice(void **state)
{
    (void)state;
    static const char load[] =
        "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes";
    char *wide = bf16_ptx("gemm_wgmma<64,64,64,4,1,8,0,0,0,1,0,0>");
    int loads = count_of(wide, load);
    free(wide);
    assert_true(loads > 0);
    static const char *const narrow[] = {"gemm_wgmma<64,8,64,4,1,8,0,0,0,1,0,0>",
                                         "gemm_wgmma<64,16,64,4,1,8,0,0,0,1,0,0>",
                                         "gemm_wgmma<64,32,64,4,1,8,0,0,0,1,0,0>"};
    for (size_t i = 0; i < sizeof narrow / sizeof narrow[0]; i++) {
        char *ptx = bf16_ptx(narrow[i]);
        int n = count_of(ptx, load);
        free(ptx);
        if (n != loads) fail_msg("%s: %d TMA loads, the 64 x 64 tile %d", narrow[i], n, loads);
    }
}

/* The first of the needles after p, or NULL where none follows. */
static const char *first_of(const char *p, const char *const *needles, size_t n)
{
    const char *first = NULL;
    for (size_t i = 0; i < n; i++) {
        const char *x = strstr(p, needles[i]);
        if (x && (!first || x < first)) first = x;
    }
    return first;
}

/* A pair's blocks arrive at the cluster's barrier relaxed, before the register
 * hand-over, and wait on it after it (producer and consumers alike), before
 * either touches a barrier or loads: each setmaxnreg is followed by the wait
 * before any mbarrier, TMA or wgmma instruction. */
static void test_a_pair_waits_for_its_other_block_after_the_register_hand_over(void **state)
{
    (void)state;
    char *ptx = bf16_ptx("gemm_wgmma<128,128,64,4,2,8,0,0,0,2,0,0>");
    assert_null(strstr(ptx, "barrier.cluster.arrive.release"));
    const char *arrive = strstr(ptx, "barrier.cluster.arrive.relaxed.aligned");
    const char *hand_over = strstr(ptx, "setmaxnreg.");
    assert_non_null(arrive);
    assert_non_null(hand_over);
    assert_true(arrive < hand_over);
    static const char *const work[] = {"mbarrier.", "cp.async.bulk", "wgmma."};
    int waits = 0;
    for (const char *p = hand_over; p; p = strstr(p + 1, "setmaxnreg.")) {
        const char *wait = strstr(p, "barrier.cluster.wait.acquire.aligned");
        const char *next = first_of(p, work, sizeof work / sizeof work[0]);
        assert_non_null(wait);
        if (next && next < wait)
            fail_msg("after a setmaxnreg, %.40s before the cluster's wait", next);
        waits++;
    }
    free(ptx);
    assert_int_equal(waits, 2);
}

/* alpha scales a consumer's accumulators once, in place, where it is not 1: the
 * 128 x 256 kernel's PTX multiplies 128 floats (a thread's share of a consumer's
 * 64 x 256 rows), not again in each epilogue (the TMA one with C read or not,
 * the one from registers), which scale by 1 and so by nothing. */
static void test_alpha_is_applied_once(void **state)
{
    (void)state;
    char *ptx = bf16_ptx("gemm_wgmma<128,256,64,4,2,8,0,0,0,1,2,0>");
    int muls = count_of(ptx, "mul.f32");
    free(ptx);
    assert_int_equal(muls, 128);
}

/* A tile of 16 columns takes m64n16 wgmmas (and with 64 rows one consumer:
 * 256 threads); split K writes its parts and reads the others' through L2
 * (st.global.cg, ld.global.cg), fenced, and counts them with an atomic add. */
static void test_the_ptx_holds_narrow_tiles_and_split_k(void **state)
{
    (void)state;
    const char *bf16[3] = {"-DGEMM_T=__nv_bfloat16"};
    EXPECT_IN_PTX("gemm_wgmma<64,16,64,4,1,8,0,0,0,1,0,0,0,1>", bf16,
                  "wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16", ".maxntid 256");
    EXPECT_IN_PTX("gemm_wgmma<64,8,64,4,1,8,0,0,0,1,0,0,0,4>", bf16,
                  "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16", "st.global.cg.v4.f32",
                  "ld.global.cg.v4.f32", "membar.gl", "atom.global.add.u32", "shfl.sync.idx.b32");
    const char *e4m3[3] = {"-DGEMM_T=__nv_fp8_e4m3", "-DGEMM_OUT=__nv_bfloat16"};
    EXPECT_IN_PTX("gemm_wgmma<128,128,128,4,2,8,0,0,0,1,0,0,0,8>", e4m3,
                  "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3", "st.global.cg.v4.f32",
                  "atom.global.add.u32");
}

/* fp8 (e4m3 and the e5m2 x e4m3 mix, to bf16) takes k32 wgmmas over 128-element
 * slices; tf32 k8 over 32; a transposed operand sets wgmma's transpose bit (the
 * last two operands: A's, B's). */
static void test_each_type_and_layout_takes_its_own_wgmma(void **state)
{
    (void)state;
    const char *e4m3[3] = {"-DGEMM_T=__nv_fp8_e4m3", "-DGEMM_OUT=__nv_bfloat16"};
    EXPECT_IN_PTX("gemm_wgmma<128,256,128,4,2,8,0,0,0,1,0,0>", e4m3,
                  "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3");
    const char *e5m2[3] = {"-DGEMM_T=__nv_fp8_e5m2", "-DGEMM_TB=__nv_fp8_e4m3",
                           "-DGEMM_OUT=__nv_bfloat16"};
    EXPECT_IN_PTX("gemm_wgmma<128,128,128,4,2,8,0,0,0,1,0,0>", e5m2,
                  "wgmma.mma_async.sync.aligned.m64n128k32.f32.e5m2.e4m3");
    const char *tf32[3] = {"-DGEMM_T=float"};
    EXPECT_IN_PTX("gemm_wgmma<128,192,32,4,2,8,0,0,0,1,0,0>", tf32,
                  "wgmma.mma_async.sync.aligned.m64n192k8.f32.tf32.tf32");
    const char *bf16[3] = {"-DGEMM_T=__nv_bfloat16"};
    EXPECT_IN_PTX("gemm_wgmma<128,128,64,4,2,8,0,1,0,1,0,0>", bf16, "p, 1, 1, 1, 0;");
    EXPECT_IN_PTX("gemm_wgmma<128,128,64,4,2,8,0,0,1,1,0,0>", bf16, "p, 1, 1, 0, 1;");
}

/* An fp8 or tf32 MN-major operand is transposed in shared memory by the
 * producer warpgroup's spare warps (byte permutes for fp8, shared loads and
 * stores, a named barrier, the proxy fence before wgmma reads it), which keep
 * 56 registers; wgmma then reads it K-major, without transpose bits. */
static void test_fp8_and_tf32_transposed_operands_go_through_shared_memory(void **state)
{
    (void)state;
    const char *e4m3[3] = {"-DGEMM_T=__nv_fp8_e4m3", "-DGEMM_OUT=__nv_bfloat16"};
    EXPECT_IN_PTX("gemm_wgmma<128,128,128,4,2,8,0,0,1,1,0,0>", e4m3,
                  "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3", "prmt.b32",
                  "ld.shared.b32", "st.shared.v2.b32", "bar.sync", "fence.proxy.async.shared::cta",
                  "setmaxnreg.dec.sync.aligned.u32 56", "setmaxnreg.inc.sync.aligned.u32 224");
    const char *tf32[3] = {"-DGEMM_T=float"};
    EXPECT_IN_PTX("gemm_wgmma<128,128,32,4,2,8,0,1,1,1,0,0>", tf32,
                  "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32", "ld.shared.b32",
                  "st.shared.v4.b32", "fence.proxy.async.shared::cta");
}

/* PRE = 1: the grid first copies an fp8 or tf32 MN-major operand K-major (TMA
 * loads, the shared-memory transpose, TMA stores, each team at its own named
 * barrier), meets at a grid-wide barrier (an atomic add, acquire loads, the
 * global proxy fence for the TMA loads that follow), and the producer then needs
 * no transposing warps: it keeps 40 registers, the consumers 232. */
static void test_fp8_and_tf32_operands_can_be_copied_k_major_first(void **state)
{
    (void)state;
    const char *e4m3[3] = {"-DGEMM_T=__nv_fp8_e4m3", "-DGEMM_OUT=__nv_bfloat16"};
    EXPECT_IN_PTX("gemm_wgmma<128,128,128,4,2,8,0,0,1,1,0,0,1>", e4m3,
                  "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3",
                  "cp.async.bulk.tensor.3d.global.shared::cta.bulk_group", "prmt.b32",
                  "bar.sync %r", "atom.global.add.u32", "ld.acquire.gpu.global.u32",
                  "fence.proxy.async.global", "mbarrier.inval.shared::cta.b64",
                  "setmaxnreg.dec.sync.aligned.u32 40", "setmaxnreg.inc.sync.aligned.u32 232");
    const char *tf32[3] = {"-DGEMM_T=float"};
    EXPECT_IN_PTX("gemm_wgmma<128,128,32,4,2,8,0,1,1,1,0,0,1>", tf32,
                  "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32", "st.shared.v4.b32",
                  "fence.proxy.async.global", "setmaxnreg.dec.sync.aligned.u32 40");
}

/* The toolkit's cuobjdump: beside the include folder NVRTC is given
 * (include/ or targets/<arch>/include/), else on PATH. */
static bool find_cuobjdump(char *out, size_t n)
{
    const char *include = gb_nvrtc_cuda_include();
    snprintf(out, n, "%s/../bin/cuobjdump", include);
    if (access(out, X_OK) == 0) return true;
    snprintf(out, n, "%s/../../../bin/cuobjdump", include);
    if (access(out, X_OK) == 0) return true;
    const char *path = getenv("PATH");
    for (const char *dir = path; dir && *dir;) {
        size_t len = strcspn(dir, ":");
        snprintf(out, n, "%.*s/cuobjdump", (int)len, dir);
        if (len > 0 && access(out, X_OK) == 0) return true;
        dir += len + (dir[len] == ':');
    }
    return false;
}

/* A block with TMA stores (STORE 1 and 2) ends once the stores have read its
 * staging (cp.async.bulk.wait_group.read 0), not once their writes are done:
 * the grid's end waits for the writes. */
static void test_a_block_ends_once_its_stores_have_read_the_staging(void **state)
{
    (void)state;
    static const char *const stored[] = {"gemm_wgmma<64,128,64,8,1,8,0,0,0,1,1,0>",
                                         "gemm_wgmma<128,256,64,4,2,8,0,0,0,1,2,0>"};
    for (size_t i = 0; i < sizeof stored / sizeof stored[0]; i++) {
        char *ptx = bf16_ptx(stored[i]);
        int read = count_of(ptx, "cp.async.bulk.wait_group.read 0;");
        int whole = count_of(ptx, "cp.async.bulk.wait_group 0;");
        free(ptx);
        if (read < 1 || whole > 0)
            fail_msg("%s: %d waits for the reads, %d for the writes", stored[i], read, whole);
    }
}

/* The cubin's SASS, as the toolkit's cuobjdump shows it, runs the products on
 * HGMMA. cuobjdump comes with a GPU machine's toolkit; where it is missing (CI)
 * the test skips. */
static void test_the_sass_holds_hgmma(void **state)
{
    suite_fixture *f = *state;
    char tool[4200], cubin[256], sass[256];
    if (!find_cuobjdump(tool, sizeof tool)) skip();
    const char *bf16[3] = {"-DGEMM_T=__nv_bfloat16"};
    size_t bytes;
    char *image = template_compile("gemm_wgmma.cuh", "gemm_wgmma<128,256,64,4,2,8,0,0,0,1,2,0>",
                                   "--gpu-architecture=sm_90a", bf16, &bytes);
    snprintf(cubin, sizeof cubin, "%s/gemm.cubin", f->dir);
    snprintf(sass, sizeof sass, "%s/gemm.sass", f->dir);
    FILE *out = fopen(cubin, "wb");
    assert_non_null(out);
    assert_int_equal(fwrite(image, 1, bytes, out), bytes);
    assert_int_equal(fclose(out), 0);
    free(image);
    char *argv[] = {tool, "-sass", cubin, NULL};
    assert_int_equal(scratch_spawn(argv, sass, "/dev/null", 0), 0);
    static char text[1 << 22];
    scratch_read(sass, text, sizeof text);
    if (!strstr(text, "HGMMA.")) fail_msg("no HGMMA in the SASS:\n%.2000s", text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_configuration_compiles_in_each_type),
        cmocka_unit_test(test_parameter_values_on_the_command_line),
        cmocka_unit_test(test_alpha_and_beta_on_the_command_line),
        cmocka_unit_test(test_pairs_that_share_a_compile),
        cmocka_unit_test(test_mixed_fp8_and_the_transposed_layouts_compile),
        cmocka_unit_test(test_fp8_and_tf32_in_the_transposed_layouts_compile),
        cmocka_unit_test(test_rows_of_any_length_compile_padded),
        cmocka_unit_test(test_split_k_compiles),
        cmocka_unit_test(test_the_ptx_holds_wgmma_tma_and_register_hand_over),
        cmocka_unit_test(test_the_ptx_holds_narrow_tiles_and_split_k),
        cmocka_unit_test(test_a_pair_waits_for_its_other_block_after_the_register_hand_over),
        cmocka_unit_test(test_a_narrow_b_is_one_box_a_slice),
        cmocka_unit_test(test_alpha_is_applied_once),
        cmocka_unit_test(test_each_type_and_layout_takes_its_own_wgmma),
        cmocka_unit_test(test_fp8_and_tf32_transposed_operands_go_through_shared_memory),
        cmocka_unit_test(test_fp8_and_tf32_operands_can_be_copied_k_major_first),
        cmocka_unit_test(test_a_block_ends_once_its_stores_have_read_the_staging),
        cmocka_unit_test(test_the_sass_holds_hgmma),
    };
    return cmocka_run_group_tests(tests, setup, suite_teardown);
}
