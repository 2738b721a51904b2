/* The Hopper tensor-core GEMM without a GPU: examples/gemm_tc.lua compiles its
 * whole valid space for sm_90a in both 16-bit types, and the PTX of a variant
 * holds what the template is built from (TMA loads on mbarriers, wgmma, register
 * hand-over). The GPU side (HGMMA in the SASS, correctness, the tune) is
 * scripts/gpu-validate.sh's. */
#include "engine/nvrtc.h"
#include "suite_fixture.h"

#include <nvrtc.h>
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

static void expect_whole_space(suite_fixture *f, const char *dtype)
{
    char script[4096];
    script_path(script, sizeof script);
    suite_tune(f, script, "--compile-only", "--arch", "sm_90a", "--jobs", "2", "--cache", f->cache,
               "--", dtype, (char *)NULL);
    if (f->status != 0) fprintf(stderr, "%s\n%s\n", f->out, f->err);
    assert_int_equal(f->status, 0);
    if (!strstr(f->out, "32 compiled") || !strstr(f->out, " 0 failed"))
        fail_msg("%s: expected 32 variants compiled and none failed:\n%s", dtype, f->out);
}

static void test_every_configuration_compiles_in_bf16_and_f16(void **state)
{
    expect_whole_space(*state, "bf16");
    expect_whole_space(*state, "f16");
}

/* The PTX of one variant, compiled for compute_90a with templates/ on the path. */
static char *ptx_of(const char *name_expr, const char *type_define)
{
    char templates[4096], include[4200], cuda[4200];
    source_dir(templates, sizeof templates);
    strncat(templates, "/templates", sizeof templates - strlen(templates) - 1);
    snprintf(include, sizeof include, "-I%s", templates);
    snprintf(cuda, sizeof cuda, "-I%s", gb_nvrtc_cuda_include());
    const char *source = "#include \"gemm_wgmma.cuh\"\n";
    const char *options[] = {"--gpu-architecture=compute_90a", "--std=c++17", include, cuda,
                             type_define};
    nvrtcProgram prog;
    assert_int_equal(nvrtcCreateProgram(&prog, source, "gemm_tc.cu", 0, NULL, NULL), NVRTC_SUCCESS);
    assert_int_equal(nvrtcAddNameExpression(prog, name_expr), NVRTC_SUCCESS);
    nvrtcResult rc = nvrtcCompileProgram(prog, 5, options);
    if (rc != NVRTC_SUCCESS) {
        size_t n = 0;
        nvrtcGetProgramLogSize(prog, &n);
        char *log = malloc(n + 1);
        nvrtcGetProgramLog(prog, log);
        fail_msg("%s", log);
    }
    size_t bytes = 0;
    assert_int_equal(nvrtcGetPTXSize(prog, &bytes), NVRTC_SUCCESS);
    char *ptx = malloc(bytes);
    assert_int_equal(nvrtcGetPTX(prog, ptx), NVRTC_SUCCESS);
    nvrtcDestroyProgram(&prog);
    return ptx;
}

static void test_the_ptx_holds_wgmma_tma_and_register_hand_over(void **state)
{
    (void)state;
    char *ptx = ptx_of("gemm_wgmma<128,256,64,4,2,8,0>", "-DGEMM_T=__nv_bfloat16");
    static const char *const needles[] = {
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16",
        "wgmma.commit_group.sync.aligned",
        "wgmma.wait_group.sync.aligned",
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
        "mbarrier.try_wait.parity",
        "setmaxnreg.inc.sync.aligned.u32 232",
        "setmaxnreg.dec.sync.aligned.u32 40",
    };
    for (size_t i = 0; i < sizeof needles / sizeof needles[0]; i++)
        if (!strstr(ptx, needles[i])) fail_msg("the PTX has no %s", needles[i]);
    free(ptx);
    ptx = ptx_of("gemm_wgmma<128,128,64,4,2,8,1>", "-DGEMM_T=__half");
    assert_non_null(strstr(ptx, "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16"));
    free(ptx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_configuration_compiles_in_bf16_and_f16),
        cmocka_unit_test(test_the_ptx_holds_wgmma_tma_and_register_hand_over),
    };
    return cmocka_run_group_tests(tests, setup, suite_teardown);
}
