/*
 * gb.cublas.gemm as a script meets it, on the fixture of lua_fixture.h: every
 * field is checked at the call (each message at the script's line, an unknown
 * field with the nearest name), types that do not go together are refused there
 * too, what needs a shape is checked before anything compiles (naming the call's
 * line or the kernel), --compile-only compiles the kernel and not the cuBLAS
 * reference, a timed run's table says "vs cuBLAS", and a cached baseline is shown
 * only under the kind of reference that was timed.
 */

#include "lua_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* A tiny kernel with the arguments of an sgemm (A [M, K], B [K, N], C [M, N]),
 * never run here, whose reference is the gb.cublas.gemm call on line 2 with the
 * fields given. */
#define CALL_LINE 2
static const char *script(char *out, size_t n, const char *fields, const char *c_init,
                          const char *extra)
{
    snprintf(out, n,
             REQUIRE "local ref = gb.cublas.gemm { %s }\n"
                     "local k = gb.kernel { name = 'mm', entry = 'mm',\n"
                     "  source = [[extern \"C\" __global__ void mm(const float *a, const float "
                     "*b, float *c, int m, int n, int k) {}]],\n"
                     "  args = function(s) return { gb.tensor('f32', { s.M, s.K }, 'randn'),\n"
                     "    gb.tensor('f32', { s.K, s.N }, 'randn'), gb.tensor('f32', { s.M, s.N "
                     "}, '%s'),\n"
                     "    gb.i32(s.M), gb.i32(s.N), gb.i32(s.K) } end,\n"
                     "  grid = 1, block = 64, reference = ref, %s }\n"
                     "gb.tune(k, { shapes = { { M = 64, N = 32, K = 16 } }, baseline = "
                     "'reference' })\n",
             fields, c_init ? c_init : "output", extra ? extra : "");
    return out;
}

#define SGEMM     "a = 1, b = 2, c = 3, m = 'M', n = 'N', k = 'K', dtype = 'f32'"
#define TUNE_LINE 9

static void expect_call_error(fixture *f, const char *fields, const char *needle)
{
    char text[4096];
    int rc = run(f, script(text, sizeof text, fields, NULL, NULL));
    EXPECT_ERROR_AT(f, rc, CALL_LINE, "gb.cublas.gemm", needle);
}

static void test_a_well_formed_call_serves_as_a_reference(void **state)
{
    fixture *f = *state;
    char text[4096];
    EXPECT_OK(f, run(f, script(text, sizeof text, SGEMM, NULL, NULL)));
    assert_int_equal(f->host.session.n_tuned, 1);
    assert_int_equal(f->host.session.n_shapes_failed, 0);
}

static void test_every_field_is_checked_at_the_call(void **state)
{
    fixture *f = *state;
    expect_call_error(f, SGEMM ", trans_c = true",
                      "unknown field 'trans_c' (did you mean 'trans_a'?)");
    expect_call_error(f, SGEMM ", colour = 1", "unknown field 'colour'");
    expect_call_error(f, "b = 2, c = 3, m = 'M', n = 'N', k = 'K', dtype = 'f32'",
                      "a must be the 1-based position of a tensor in the kernel's args (1 to 32), "
                      "got nil");
    expect_call_error(f, SGEMM ", d = 33", "d must be the 1-based position");
    expect_call_error(f, "a = 1, b = 2, c = 3, m = 0, n = 'N', k = 'K', dtype = 'f32'",
                      "m must be a shape field's name, a positive integer or a function(s), got "
                      "integer 0");
    expect_call_error(f, SGEMM ", batch = '2x'", "batch must be a shape field's name");
    expect_call_error(f, SGEMM ", lda = 0", "lda must be a shape field's name, a positive integer");
    expect_call_error(f, SGEMM ", ldc = true", "ldc must be a shape field's name");
    expect_call_error(f, SGEMM ", lda_ = 16", "unknown field 'lda_' (did you mean 'lda'?)");
    expect_call_error(
        f, "a = 1, b = 2, c = 3, m = 'M', n = 'N', k = 'K', dtype = 'f64'",
        "dtype must be one of f32, f16, bf16, fp8_e4m3, fp8_e5m2, got string \"f64\"");
    expect_call_error(f, SGEMM ", out = 'fp8_e4m3'", "out must be one of f32, f16, bf16");
    expect_call_error(f, SGEMM ", dtype_b = 'i8'", "dtype_b must be one of f32, f16, bf16");
    expect_call_error(f, SGEMM ", compute = 'fp64'", "compute must be one of fp32, tf32, fp16");
    expect_call_error(f, SGEMM ", trans_a = 1", "trans_a must be a boolean, got integer 1");
    expect_call_error(f, SGEMM ", beta = 0/0", "beta must be a finite number");
    expect_call_error(f, SGEMM ", name = 'a b'", "name must be a string of letters");
    int rc = run(f, REQUIRE "local r = gb.cublas.gemm 'sgemm'\n");
    EXPECT_ERROR_AT(f, rc, 2, "gb.cublas.gemm: expected a table of fields, got string");
}

static void test_types_that_do_not_go_together_are_refused_at_the_call(void **state)
{
    fixture *f = *state;
    expect_call_error(f, SGEMM ", compute = 'fp16'",
                      "compute fp16 (fp16 sums) needs f16 operands and an f16 C, not f32 and f32");
    expect_call_error(f,
                      "a = 1, b = 2, c = 3, m = 'M', n = 'N', k = 'K', dtype = 'bf16', "
                      "compute = 'tf32'",
                      "compute tf32 needs f32 operands");
    expect_call_error(f, "a = 1, b = 2, c = 3, m = 'M', n = 'N', k = 'K', dtype = 'fp8_e5m2'",
                      "fp8_e5m2 for both A and B");
    expect_call_error(f, SGEMM ", dtype_b = 'bf16'", "A is f32 and B is bf16");
    expect_call_error(f, SGEMM ", c = 1", "C (argument 1) must not be A or B");
}

static void test_what_needs_a_shape_is_checked_before_anything_compiles(void **state)
{
    fixture *f = *state;
    char text[4096];
    int rc =
        run(f, script(text, sizeof text,
                      "a = 1, b = 2, c = 3, m = 'M', n = 'N', k = 'Q', dtype = 'f32'", NULL, NULL));
    EXPECT_ERROR_NAMING(f, rc, CALL_LINE, "gb.cublas.gemm: k: the shape has no field Q");
    rc = run(f, script(text, sizeof text,
                       "a = 1, b = 2, c = 3, m = 'M', n = 'N', k = function(s) return 0 end, "
                       "dtype = 'f32'",
                       NULL, NULL));
    EXPECT_ERROR_NAMING(f, rc, CALL_LINE, "k must be a positive integer, got integer 0");
    rc = run(f, script(text, sizeof text, SGEMM ", batch = 2", NULL, NULL));
    EXPECT_ERROR_NAMING(f, rc, TUNE_LINE, "kernel mm: reference cublas_gemm:",
                        "a (argument 1) holds 1024 elements, M*K*batch = 64*16*2 needs 2048");
    rc = run(f,
             script(text, sizeof text,
                    "a = 1, b = 2, c = 3, m = 'M', n = 'N', k = 'K', dtype = 'bf16'", NULL, NULL));
    EXPECT_ERROR_NAMING(f, rc, TUNE_LINE, "a (argument 1) is f32, the GEMM's a is bf16");
    rc = run(f, script(text, sizeof text, SGEMM ", lda = 8", NULL, NULL));
    EXPECT_ERROR_NAMING(f, rc, CALL_LINE,
                        "gb.cublas.gemm: lda = 8: A's stored rows are 16 "
                        "elements, so it must be 0 (packed) or from 16");
    rc = run(f,
             script(text, sizeof text, SGEMM ", ldb = function(s) return s.N + 4 end", NULL, NULL));
    EXPECT_ERROR_NAMING(f, rc, TUNE_LINE,
                        "b (argument 2) holds 512 elements, K*ldb*batch = 16*36*1 needs 576");
    /* packed rows named as leading dimensions: the same GEMM */
    EXPECT_OK(
        f, run(f, script(text, sizeof text, SGEMM ", lda = 'K', ldb = 'N', ldc = 32", NULL, NULL)));
    rc = run(f, script(text, sizeof text, SGEMM ", beta = 1", NULL, NULL));
    EXPECT_ERROR_NAMING(f, rc, TUNE_LINE, "beta = 1 reads C, but c (argument 3) is an \"output\"");
    rc = run(f, script(text, sizeof text, SGEMM ", beta = 1", "randn", NULL));
    EXPECT_ERROR_NAMING(f, rc, TUNE_LINE, "the result, c (argument 3), is not checked");
    /* C in and out: given data and compared, beta reads it */
    EXPECT_OK(f, run(f, script(text, sizeof text, SGEMM ", beta = 1", "randn",
                               "check = { outputs = { 3 } }")));
    assert_int_equal(f->host.session.n_shapes_failed, 0);
}

static void test_a_cublas_call_is_not_tuned_or_benchmarked(void **state)
{
    fixture *f = *state;
    int rc = run(f, REQUIRE "local r = gb.cublas.gemm { " SGEMM ", name = 'lt' }\n"
                            "gb.tune(r, { shapes = { { M = 1, N = 1, K = 1 } } })\n");
    EXPECT_ERROR_AT(f, rc, 3, "gb.tune: lt is a cuBLAS call: it serves as a kernel's reference");
    rc = run(f, REQUIRE "local r = gb.cublas.gemm { " SGEMM " }\n"
                        "gb.bench(r, { shapes = { { M = 1, N = 1, K = 1 } } })\n");
    EXPECT_ERROR_AT(f, rc, 3, "gb.bench: cublas_gemm is a cuBLAS call");
}

/* --compile-only (the fixture's host compiles only): the kernel's one variant,
 * no row for the reference, and a line that says why. */
static void test_compile_only_compiles_the_kernel_and_not_the_cublas_reference(void **state)
{
    fixture *f = *state;
    char text[4096];
    EXPECT_OK(f, run(f, script(text, sizeof text, SGEMM, NULL, NULL)));
    const char *table = read_back(f, f->out);
    expect_text(table, "1 compiled, 0 failed");
    expect_text(table, "the reference is a cuBLAS call: not compiled");
}

static void test_the_example_takes_cublas_as_its_reference(void **state)
{
    fixture *f = *state;
    char src[PATH_MAX - 32], path[PATH_MAX];
    source_dir(src, sizeof src);
    snprintf(path, sizeof path, "%s/examples/gemm.lua", src);
    f->host.session.tuner.jobs = 2;
    assert_int_equal(gb_lua_new(&f->host, &f->L, &f->err), GB_OK);
    char *args[] = {"64x32x16", "cublas"};
    int rc = gb_lua_run(f->L, path, 2, args, &f->err);
    if (rc) fail_msg("examples/gemm.lua -- 64x32x16 cublas failed (%d): %s", rc, f->err.msg);
    assert_int_equal(f->host.session.n_tuned, 1);
    assert_int_equal(f->host.session.n_shapes_failed, 0);
    expect_text(read_back(f, f->out), "the reference is a cuBLAS call: not compiled");
}

/* Timed (on the fake GPU): the reference goes to the backend as a GEMM, its
 * timing is the baseline, and the column says whose it is. */
static void test_a_timed_run_says_vs_cublas(void **state)
{
    fixture *f = *state;
    char text[4096];
    use_fake_gpu(f);
    EXPECT_OK(f, run(f, script(text, sizeof text, SGEMM, NULL, NULL)));
    assert_int_equal(f->gpu.n_references, 1);
    const char *table = read_back(f, f->out);
    expect_text(table, "vs cuBLAS");
    if (strstr(table, "vs ref")) fail_msg("the column still says vs ref:\n%s", table);
}

/* The reference can change between runs while the kernel stays (its cached best
 * stands): a cached baseline is shown only under the kind of reference it was
 * timed with. */
static const char SWITCHING[] =
    REQUIRE "local ref = arg[1] == 'cublas' and gb.cublas.gemm { " SGEMM " } or gb.kernel {\n"
            "  name = 'naive', entry = 'naive', grid = 1, block = 64,\n"
            "  source = [[extern \"C\" __global__ void naive(const float *a, const float *b, "
            "float *c, int m, int n, int k) {}]] }\n"
            "local k = gb.kernel { name = 'mm', entry = 'mm', grid = 1, block = 64,\n"
            "  source = [[extern \"C\" __global__ void mm(const float *a, const float *b, float "
            "*c, int m, int n, int k) {}]],\n"
            "  args = function(s) return { gb.tensor('f32', { s.M, s.K }, 'randn'),\n"
            "    gb.tensor('f32', { s.K, s.N }, 'randn'), gb.tensor('f32', { s.M, s.N }),\n"
            "    gb.i32(s.M), gb.i32(s.N), gb.i32(s.K) } end, reference = ref }\n"
            "local r = gb.tune(k, { shapes = { { M = 64, N = 32, K = 16 } }, baseline = "
            "'reference' })\n"
            "assert(r[1].cached == (arg[2] == 'cached'), 'cached: ' .. tostring(r[1].cached))\n"
            "assert((r[1].baseline ~= nil) == (arg[3] == 'baseline'), 'the baseline')\n";

static void test_a_cached_baseline_is_shown_only_under_its_own_reference(void **state)
{
    fixture *f = *state;
    use_fake_gpu(f);
    use_cache(f);
    char *tuned[] = {"cublas", "tuned", "baseline"}, *by_kernel[] = {"kernel", "cached", "none"},
         *by_cublas[] = {"cublas", "cached", "baseline"};
    EXPECT_OK(f, run_script(f, "switch.lua", SWITCHING, 3, tuned));
    EXPECT_OK(f, run_script(f, "switch.lua", SWITCHING, 3, by_kernel));
    EXPECT_OK(f, run_script(f, "switch.lua", SWITCHING, 3, by_cublas));
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_a_well_formed_call_serves_as_a_reference),
        T(test_every_field_is_checked_at_the_call),
        T(test_types_that_do_not_go_together_are_refused_at_the_call),
        T(test_what_needs_a_shape_is_checked_before_anything_compiles),
        T(test_a_cublas_call_is_not_tuned_or_benchmarked),
        T(test_compile_only_compiles_the_kernel_and_not_the_cublas_reference),
        T(test_the_example_takes_cublas_as_its_reference),
        T(test_a_timed_run_says_vs_cublas),
        T(test_a_cached_baseline_is_shown_only_under_its_own_reference),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
