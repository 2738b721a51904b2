/*
 * TMA descriptors and thread block clusters as a script gives them: gb.tensormap
 * arguments reach the GPU side with their box, view and modes; each rule TMA has
 * (engine/tensormap.c) is refused with a sentence at the gb.tensormap's line; a
 * kernel's cluster reaches the launch. The encoding itself needs a driver
 * (test_gpu.c).
 */

#include "engine/tensormap.h"
#include "lua_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

/* A script whose args are A (bf16 M x K), then the lines of maps (each ending
 * "--@" on the line a failure should name), with cluster as the kernel's field. */
static const char *script(char *out, size_t n, const char *maps, const char *extra)
{
    snprintf(out, n,
             REQUIRE "local k = gb.kernel {\n"
                     "  name = \"scale\", source = " SCALE_SRC ", entry = \"scale\",\n"
                     "  grid = 4, block = 128,%s\n"
                     "  args = function(s) return {\n"
                     "    gb.tensor(\"bf16\", { s.m, s.k }, \"randn\"),\n"
                     "%s"
                     "  } end,\n"
                     "}\n"
                     "gb.tune(k, { shapes = { { m = 300, k = 1024 } } })\n",
             extra ? extra : "", maps);
    return out;
}

static void test_tensormaps_reach_the_gpu_with_their_modes(void **state)
{
    fixture *f = *state;
    use_fake_gpu(f);
    char text[2048];
    script(text, sizeof text,
           "    gb.tensormap { tensor = 1, box = { 128, 64 }, swizzle = \"128B\",\n"
           "                   l2_promotion = \"256B\", oob_fill = \"nan\" },\n"
           "    gb.tensormap { tensor = 1, box = { 1, 8 }, dims = { 150, 512 },\n"
           "                   strides = { 2048, 1 } },\n",
           NULL);
    EXPECT_OK(f, run(f, text));
    assert_int_equal(f->gpu.n_args, 3);
    const gb_arg *m = &f->gpu.args[1];
    assert_int_equal(m->kind, GB_ARG_TENSORMAP);
    assert_int_equal(m->tensor, 0);
    assert_int_equal(m->dtype, GB_DT_BF16); /* the tensor's */
    assert_int_equal(m->n_box, 2);
    assert_int_equal(m->box[0], 128);
    assert_int_equal(m->box[1], 64);
    assert_int_equal(m->n_dims, 0); /* the tensor's own */
    assert_int_equal(m->swizzle, GB_SWIZZLE_128B);
    assert_int_equal(m->l2_promotion, GB_L2_PROMOTION_256B);
    assert_int_equal(m->oob_fill, GB_OOB_NAN);
    assert_false(m->checked);
    m = &f->gpu.args[2];
    assert_int_equal(m->swizzle, GB_SWIZZLE_NONE); /* the defaults */
    assert_int_equal(m->l2_promotion, GB_L2_PROMOTION_NONE);
    assert_int_equal(m->oob_fill, GB_OOB_ZERO);
    assert_int_equal(m->n_dims, 2);
    assert_int_equal(m->dims[0], 150);
    assert_int_equal(m->strides[0], 2048);
    /* TMA's order is innermost first, strides in bytes */
    gb_tensormap_view v;
    assert_int_equal(gb_tensormap_check(f->gpu.args, 3, 2, &v, &f->err), GB_OK);
    assert_int_equal(v.rank, 2);
    assert_int_equal(v.dims[0], 512);
    assert_int_equal(v.dims[1], 150);
    assert_int_equal(v.strides[0], 4096);
    assert_int_equal(v.box[0], 8);
    assert_int_equal(v.box[1], 1);
}

/* Runs a script whose one map (on its own line) breaks a TMA rule. */
static void expect_refused(fixture *f, const char *map, const char *needle)
{
    char maps[512], text[2048];
    snprintf(maps, sizeof maps, "    %s, --@\n", map);
    script(text, sizeof text, maps, NULL);
    int rc = run(f, text);
    EXPECT_ERROR_AT(f, rc, line_of(text, "--@"), needle);
}

static void test_tma_rules_are_refused_at_the_maps_line(void **state)
{
    fixture *f = *state;
    use_fake_gpu(f);
    expect_refused(f, "gb.tensormap { tensor = 1, box = { 64, 128 }, swizzle = \"128B\" }",
                   "gb.tensormap (argument 2 of args at ");
    expect_refused(f, "gb.tensormap { tensor = 1, box = { 64, 128 }, swizzle = \"128B\" }",
                   "box[2] is 128 bf16 = 256 bytes; swizzle 128B takes at most 128");
    expect_refused(f, "gb.tensormap { tensor = 1, box = { 64, 4 } }",
                   "box[2] is 4 bf16 = 8 bytes; TMA needs a multiple of 16 bytes");
    expect_refused(f, "gb.tensormap { tensor = 1, box = { 64 } }",
                   "box has 1 sizes for 2 dimensions");
    expect_refused(f, "gb.tensormap { tensor = 2, box = { 64, 64 } }",
                   "tensor = 2 is not a tensor argument");
    expect_refused(f, "gb.tensormap { tensor = 1, box = { 8, 8 }, dims = { 300, 1001 } }",
                   "dimension 1's stride is 1001 bf16 = 2002 bytes; TMA needs a multiple of 16");
    expect_refused(f,
                   "gb.tensormap { tensor = 1, box = { 8, 8 }, dims = { 300, 1024 }, "
                   "strides = { 1032, 1 } }",
                   "the view reaches element 309591 of a tensor of 307200 elements");
    expect_refused(f,
                   "gb.tensormap { tensor = 1, box = { 8, 8 }, dims = { 30, 1024 }, "
                   "strides = { 1024, 2 } }",
                   "strides[2] is 2; the innermost stride must be 1");
}

static void test_tensormap_fields_are_checked_where_it_is_made(void **state)
{
    fixture *f = *state;
    int rc = run(f, REQUIRE "local m = gb.tensormap { tensor = 1, box = { 300 } }\n");
    EXPECT_ERROR_AT(f, rc, 2, "gb.tensormap: box[1] must be an integer from 1 to 256");
    rc = run(f, REQUIRE "local m = gb.tensormap { tensor = 0, box = { 8 } }\n");
    EXPECT_ERROR_AT(f, rc, 2, "gb.tensormap: tensor must be the 1-based position");
    rc = run(f, REQUIRE "local m = gb.tensormap { tensor = 1, box = { 8 }, swizzle = \"16B\" }\n");
    EXPECT_ERROR_AT(f, rc, 2, "gb.tensormap: swizzle must be one of none 32B 64B 128B");
    rc = run(f, REQUIRE "local m = gb.tensormap { tensor = 1, box = { 8 }, swizle = \"32B\" }\n");
    EXPECT_ERROR_AT(f, rc, 2, "gb.tensormap: unknown field 'swizle'");
    rc = run(f, REQUIRE "local m = gb.tensormap { tensor = 1 }\n");
    EXPECT_ERROR_AT(f, rc, 2, "gb.tensormap: box is required");
    rc = run(f, REQUIRE "local m = gb.tensormap { tensor = 1, box = { 1, 2, 3, 4, 5, 6 } }\n");
    EXPECT_ERROR_AT(f, rc, 2, "gb.tensormap: box must be a list of 1 to 5 sizes");
}

static void test_a_kernels_cluster_reaches_the_launch(void **state)
{
    fixture *f = *state;
    use_fake_gpu(f);
    char text[2048];
    script(text, sizeof text, "", "\n  cluster = function(c, s) return { 2, 1 } end,");
    EXPECT_OK(f, run(f, text));
    assert_int_equal(f->gpu.launch.cluster[0], 2);
    assert_int_equal(f->gpu.launch.cluster[1], 1);
    assert_int_equal(f->gpu.launch.cluster[2], 1);
    assert_int_equal(gb_launch_cluster_blocks(&f->gpu.launch), 2);
    script(text, sizeof text, "", NULL); /* none */
    EXPECT_OK(f, run(f, text));
    assert_int_equal(gb_launch_cluster_blocks(&f->gpu.launch), 1);
    script(text, sizeof text, "", "\n  cluster = { 2, 0 },");
    int rc = run(f, text);
    EXPECT_ERROR_AT(f, rc, 2, "gb.kernel: cluster[2] must be a positive integer");
}

#define TEST(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_tensormaps_reach_the_gpu_with_their_modes),
        TEST(test_tma_rules_are_refused_at_the_maps_line),
        TEST(test_tensormap_fields_are_checked_where_it_is_made),
        TEST(test_a_kernels_cluster_reaches_the_launch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
