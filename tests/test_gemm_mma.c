/* The mma.sync tensor-core GEMM without a GPU: examples/gemm_mma.lua compiles its
 * whole valid space for sm_80 (A100) and sm_89 (L40) in both 16-bit types, and the
 * PTX of a variant holds what the template is built from (cp.async into shared
 * memory, ldmatrix, mma.sync m16n8k16). Correctness and the tune against cuBLAS
 * need a GPU. */
#include "suite_fixture.h"
#include "template_compile.h"

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
    strncat(out, "/examples/gemm_mma.lua", n - strlen(out) - 1);
}

static void expect_whole_space(suite_fixture *f, const char *arch, const char *dtype)
{
    char script[4096];
    script_path(script, sizeof script);
    suite_tune(f, script, "--compile-only", "--arch", arch, "--jobs", "2", "--cache", f->cache,
               "--", dtype, (char *)NULL);
    if (f->status != 0) fprintf(stderr, "%s\n%s\n", f->out, f->err);
    assert_int_equal(f->status, 0);
    if (!strstr(f->out, "30 compiled") || !strstr(f->out, " 0 failed"))
        fail_msg("%s %s: expected 30 variants compiled and none failed:\n%s", arch, dtype, f->out);
}

static void test_every_configuration_compiles_for_sm_80(void **state)
{
    expect_whole_space(*state, "sm_80", "bf16");
    expect_whole_space(*state, "sm_80", "f16");
}

/* sm_89 allows a block 99 KiB of shared memory, not sm_80's 163: the space is
 * sized for it, so no variant is over the target's limits. */
static void test_every_configuration_compiles_for_sm_89(void **state)
{
    expect_whole_space(*state, "sm_89", "bf16");
    expect_whole_space(*state, "sm_89", "f16");
}

/* The PTX of one variant, compiled for compute_80. */
static char *ptx_of(const char *name_expr, const char *type_define)
{
    const char *defines[3] = {type_define};
    size_t bytes;
    return template_compile("gemm_mma.cuh", name_expr, "--gpu-architecture=compute_80", defines,
                            &bytes);
}

static void test_the_ptx_holds_cp_async_ldmatrix_and_mma_sync(void **state)
{
    (void)state;
    char *ptx = ptx_of("gemm_mma<128,128,32,64,64,4>", "-DGEMM_T=__nv_bfloat16");
    static const char *const needles[] = {
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16",
        "ldmatrix.sync.aligned.m8n8.x4.shared.b16",
        "cp.async.cg.shared.global",
        "cp.async.commit_group",
        "cp.async.wait_group 2", /* 4 stages: wait until slice k landed, 2 still in flight */
    };
    for (size_t i = 0; i < sizeof needles / sizeof needles[0]; i++)
        if (!strstr(ptx, needles[i])) fail_msg("the PTX has no %s", needles[i]);
    free(ptx);
    ptx = ptx_of("gemm_mma<64,128,64,64,32,2>", "-DGEMM_T=__half");
    assert_non_null(strstr(ptx, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16"));
    assert_non_null(strstr(ptx, "cp.async.wait_group 0"));
    free(ptx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_configuration_compiles_for_sm_80),
        cmocka_unit_test(test_every_configuration_compiles_for_sm_89),
        cmocka_unit_test(test_the_ptx_holds_cp_async_ldmatrix_and_mma_sync),
    };
    return cmocka_run_group_tests(tests, setup, suite_teardown);
}
