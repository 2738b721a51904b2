/* Compile targets (engine/arch.h): which names NVRTC takes, and which variants fit
 * a target's per-block limits, all without a GPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine/arch.h"

#include <nvrtc.h>
#include <stdio.h>
#include <string.h>

#define KIB 1024

static gb_arch_limits limits(const char *arch)
{
    gb_arch_limits lim;
    gb_err err = {0};
    assert_int_equal(gb_arch_limits_for(arch, &lim, &err), GB_OK);
    return lim;
}

static gb_resources resources(int registers, int smem_static_bytes)
{
    return (gb_resources){.registers = registers,
                          .spill_store_bytes = 0,
                          .spill_load_bytes = 0,
                          .stack_bytes = 0,
                          .smem_static_bytes = smem_static_bytes};
}

static gb_launch launch(uint32_t bx, uint32_t by, uint32_t bz, uint32_t smem_bytes)
{
    return (gb_launch){.grid = {128, 1, 1}, .block = {bx, by, bz}, .smem_bytes = smem_bytes};
}

static void test_names_parse_into_capability_and_suffix(void **state)
{
    gb_arch a;
    gb_err err = {0};
    assert_int_equal(gb_arch_parse("sm_90a", &a, &err), GB_OK);
    assert_int_equal(a.cc, 90);
    assert_int_equal(a.suffix, 'a');
    assert_int_equal(gb_arch_parse("sm_120", &a, &err), GB_OK);
    assert_int_equal(a.cc, 120);
    assert_int_equal(a.suffix, 0);
    assert_int_equal(gb_arch_parse("sm_100f", &a, &err), GB_OK);
    assert_int_equal(a.suffix, 'f');
}

static void test_malformed_names_are_refused_with_what_a_target_looks_like(void **state)
{
    static const char *const bad[] = {"",      "90",     "sm90",    "sm_9",  "sm_1000",
                                      "sm_09", "sm_90b", "sm_90aa", "SM_90", "sm_90 "};
    gb_arch a;
    gb_err err = {0};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(gb_arch_parse(bad[i], &a, &err), GB_EINVAL);
        assert_non_null(strstr(err.msg, "sm_XY, sm_XYa or sm_XYf"));
    }
    assert_int_equal(gb_arch_parse("compute_90", &a, &err), GB_EINVAL);
    assert_non_null(strstr(err.msg, "virtual architecture"));
}

/* NVRTC's own list decides, so the test reads it rather than naming a release's. */
static int nvrtc_list(int *archs)
{
    int n = 0;
    assert_int_equal(nvrtcGetNumSupportedArchs(&n), NVRTC_SUCCESS);
    assert_true(n > 0 && n <= 64);
    assert_int_equal(nvrtcGetSupportedArchs(archs), NVRTC_SUCCESS);
    return n;
}

static void test_targets_nvrtc_lists_are_valid(void **state)
{
    int archs[64], n = nvrtc_list(archs);
    gb_err err = {0};
    char name[16];
    snprintf(name, sizeof name, "sm_%d", archs[0]);
    assert_int_equal(gb_arch_validate(name, &err), GB_OK);
    snprintf(name, sizeof name, "sm_%d", archs[n - 1]);
    assert_int_equal(gb_arch_validate(name, &err), GB_OK);
    if (archs[n - 1] >= 90) { /* every NVRTC that lists 9.0 has sm_90a */
        assert_int_equal(gb_arch_validate("sm_90a", &err), GB_OK);
    }
}

static void test_a_target_nvrtc_lacks_is_refused_with_the_supported_list(void **state)
{
    int archs[64];
    nvrtc_list(archs);
    gb_err err = {0};
    char name[16];
    snprintf(name, sizeof name, "sm_%d", archs[0] - 1); /* below the oldest it supports */
    assert_int_equal(gb_arch_validate(name, &err), GB_EINVAL);
    assert_non_null(strstr(err.msg, "does not compile for"));
    assert_non_null(strstr(err.msg, name));
    snprintf(name, sizeof name, "sm_%d", archs[0]);
    assert_non_null(strstr(err.msg, name)); /* the list */
    assert_non_null(strstr(err.msg, "NVRTC "));
}

static void test_an_arch_specific_suffix_nvrtc_refuses_is_invalid(void **state)
{
    gb_err err = {0};
    /* There has never been an sm_80a or sm_80f: a and f targets start at 9.0 and 10.0. */
    int rc = gb_arch_validate("sm_80a", &err);
    assert_int_equal(rc, GB_EINVAL);
    assert_non_null(strstr(err.msg, "does not compile for sm_80a"));
    assert_null(strstr(err.msg, "sm_80a "));
    assert_int_equal(gb_arch_validate("sm_80f", &err), GB_EINVAL);
}

static void test_limits_follow_the_programming_guide(void **state)
{
    gb_arch_limits lim = limits("sm_90a");
    assert_string_equal(lim.arch, "sm_90a");
    assert_int_equal(lim.max_threads_per_block, 1024);
    assert_int_equal(lim.max_block[2], 64);
    assert_int_equal(lim.max_grid[0], 2147483647);
    assert_int_equal(lim.max_grid[1], 65535);
    assert_int_equal(lim.smem_optin_max_bytes, 227 * KIB);
    assert_int_equal(lim.smem_static_max_bytes, 48 * KIB);
    assert_int_equal(lim.regs_per_block_max, 65536);
    assert_int_equal(limits("sm_80").smem_optin_max_bytes, 163 * KIB);
    assert_int_equal(limits("sm_87").smem_optin_max_bytes, 163 * KIB);
    assert_int_equal(limits("sm_89").smem_optin_max_bytes, 99 * KIB);
    assert_int_equal(limits("sm_75").smem_optin_max_bytes, 64 * KIB);
    assert_int_equal(limits("sm_70").smem_optin_max_bytes, 96 * KIB);
    assert_int_equal(limits("sm_100f").smem_optin_max_bytes, 227 * KIB);
    assert_int_equal(limits("sm_120a").smem_optin_max_bytes, 99 * KIB);
    assert_int_equal(limits("sm_62").regs_per_block_max, 32768);
}

static void test_a_capability_the_guide_lacks_checks_only_the_common_limits(void **state)
{
    gb_arch_limits lim = limits("sm_88");
    assert_int_equal(lim.smem_optin_max_bytes, -1);
    assert_int_equal(lim.regs_per_block_max, -1);
    assert_int_equal(lim.max_threads_per_block, 1024);
    gb_launch l = launch(256, 1, 1, 500 * KIB);
    gb_resources r = resources(255, 1024);
    assert_true(gb_arch_check(&lim, &l, &r, NULL, 0));
}

static void test_a_variant_within_the_limits_fits(void **state)
{
    gb_arch_limits lim = limits("sm_90a");
    gb_launch l = launch(32, 32, 1, 200 * KIB);
    gb_resources r = resources(64, 27 * KIB); /* 64 x 1024 = 65536 registers: exactly */
    char reason[256] = "stale";
    assert_true(gb_arch_check(&lim, &l, &r, reason, sizeof reason));
    assert_string_equal(reason, "");
}

static void test_too_many_threads_says_how_many_and_the_limit(void **state)
{
    gb_arch_limits lim = limits("sm_90a");
    gb_launch l = launch(512, 3, 1, 0);
    char reason[256];
    assert_false(gb_arch_check(&lim, &l, NULL, reason, sizeof reason));
    assert_string_equal(reason, "needs 1536 threads per block (block 512x3x1); sm_90a allows 1024");
}

static void test_block_and_grid_dimensions_are_checked_per_axis(void **state)
{
    gb_arch_limits lim = limits("sm_90a");
    gb_launch l = launch(1, 1, 128, 0);
    l.grid[1] = 70000;
    char reason[256];
    assert_false(gb_arch_check(&lim, &l, NULL, reason, sizeof reason));
    assert_string_equal(reason, "block z is 128; sm_90a allows 64; grid y is 70000; sm_90a allows "
                                "65535");
    l = launch(0, 1, 1, 0);
    assert_false(gb_arch_check(&lim, &l, NULL, reason, sizeof reason));
    assert_string_equal(reason, "block 0x1x1 has a zero dimension");
}

static void test_shared_memory_over_the_opt_in_limit_names_both_parts(void **state)
{
    gb_arch_limits lim = limits("sm_90a");
    gb_launch l = launch(128, 1, 1, 200 * KIB);
    gb_resources r = resources(32, 40 * KIB);
    char reason[256];
    assert_false(gb_arch_check(&lim, &l, &r, reason, sizeof reason));
    assert_string_equal(reason, "uses 240 KiB of shared memory (static 40 KiB + dynamic 200 KiB); "
                                "sm_90a allows 227 KiB with opt-in");
    l.smem_bytes = 100 * KIB;
    lim = limits("sm_89");
    assert_false(gb_arch_check(&lim, &l, NULL, reason, sizeof reason));
    assert_string_equal(reason,
                        "uses 100 KiB of dynamic shared memory; sm_89 allows 99 KiB with opt-in");
}

static void test_static_shared_memory_over_48_kib_is_refused(void **state)
{
    gb_arch_limits lim = limits("sm_90a");
    gb_resources r = resources(32, 48 * KIB + 512);
    char reason[256];
    assert_false(gb_arch_check(&lim, NULL, &r, reason, sizeof reason));
    assert_string_equal(reason, "uses 48.5 KiB of static shared memory; sm_90a allows 48 KiB "
                                "(more must be dynamic)");
}

static void test_registers_per_block_count_whole_warps(void **state)
{
    gb_arch_limits lim = limits("sm_90a");
    gb_launch l = launch(1000, 1, 1, 0); /* 32 warps: 1024 threads' registers */
    gb_resources r = resources(65, 0);
    char reason[256];
    assert_false(gb_arch_check(&lim, &l, &r, reason, sizeof reason));
    assert_string_equal(
        reason, "uses 66560 registers per block (65 per thread x 1024 threads, in whole warps); "
                "sm_90a allows 65536");
    r.registers = 64;
    assert_true(gb_arch_check(&lim, &l, &r, reason, sizeof reason));
    r.registers = -1; /* unknown: not checked */
    l = launch(1024, 1, 1, 0);
    assert_true(gb_arch_check(&lim, &l, &r, reason, sizeof reason));
}

static void test_clusters_need_sm_90_whole_clusters_and_at_most_16_blocks(void **state)
{
    gb_arch_limits lim = limits("sm_90a");
    gb_launch l = launch(128, 1, 1, 0); /* grid 128 x 1 x 1 */
    l.cluster[0] = 2;
    char reason[256];
    assert_true(gb_arch_check(&lim, &l, NULL, reason, sizeof reason));
    l.cluster[0] = 16; /* non-portable, which the engine opts into */
    assert_true(gb_arch_check(&lim, &l, NULL, reason, sizeof reason));
    l.cluster[0] = 3;
    assert_false(gb_arch_check(&lim, &l, NULL, reason, sizeof reason));
    assert_string_equal(reason, "grid x is 128, not a multiple of the cluster's 3");
    l.cluster[0] = 4;
    l.cluster[1] = 8;
    assert_false(gb_arch_check(&lim, &l, NULL, reason, sizeof reason));
    assert_string_equal(reason, "uses a cluster of 32 blocks (4x8x1); sm_90a allows 16; grid y is "
                                "1, not a multiple of the cluster's 8");
    lim = limits("sm_89");
    l.cluster[1] = 0;
    assert_false(gb_arch_check(&lim, &l, NULL, reason, sizeof reason));
    assert_string_equal(
        reason, "uses a cluster of 4 blocks; sm_89 has no thread block clusters (sm_90 and newer)");
    l.cluster[0] = 1; /* a cluster of one block is none */
    assert_true(gb_arch_check(&lim, &l, NULL, reason, sizeof reason));
}

static void test_a_short_reason_buffer_is_cut_not_overrun(void **state)
{
    gb_arch_limits lim = limits("sm_90a");
    gb_launch l = launch(2048, 1, 128, 300 * KIB);
    char reason[16 + 1];
    memset(reason, 'x', sizeof reason);
    assert_false(gb_arch_check(&lim, &l, NULL, reason, 16));
    assert_int_equal(strlen(reason), 15);
    assert_int_equal(reason[16], 'x');
}

static void test_a_device_overrides_what_it_reports(void **state)
{
    gb_device_info info = {.cc_major = 9,
                           .cc_minor = 0,
                           .smem_per_block_optin = 232448,
                           .max_threads_per_block = 1024};
    snprintf(info.arch, sizeof info.arch, "sm_90a");
    gb_arch_limits lim;
    gb_arch_limits_from_device(&info, &lim);
    assert_int_equal(lim.smem_optin_max_bytes, 232448);
    assert_string_equal(lim.arch, "sm_90a");
    info.smem_per_block_optin = 0; /* not reported: the table's */
    snprintf(info.arch, sizeof info.arch, "sm_86");
    gb_arch_limits_from_device(&info, &lim);
    assert_int_equal(lim.smem_optin_max_bytes, 99 * KIB);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names_parse_into_capability_and_suffix),
        cmocka_unit_test(test_malformed_names_are_refused_with_what_a_target_looks_like),
        cmocka_unit_test(test_targets_nvrtc_lists_are_valid),
        cmocka_unit_test(test_a_target_nvrtc_lacks_is_refused_with_the_supported_list),
        cmocka_unit_test(test_an_arch_specific_suffix_nvrtc_refuses_is_invalid),
        cmocka_unit_test(test_limits_follow_the_programming_guide),
        cmocka_unit_test(test_a_capability_the_guide_lacks_checks_only_the_common_limits),
        cmocka_unit_test(test_a_variant_within_the_limits_fits),
        cmocka_unit_test(test_too_many_threads_says_how_many_and_the_limit),
        cmocka_unit_test(test_block_and_grid_dimensions_are_checked_per_axis),
        cmocka_unit_test(test_shared_memory_over_the_opt_in_limit_names_both_parts),
        cmocka_unit_test(test_static_shared_memory_over_48_kib_is_refused),
        cmocka_unit_test(test_registers_per_block_count_whole_warps),
        cmocka_unit_test(test_clusters_need_sm_90_whole_clusters_and_at_most_16_blocks),
        cmocka_unit_test(test_a_short_reason_buffer_is_cut_not_overrun),
        cmocka_unit_test(test_a_device_overrides_what_it_reports),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
