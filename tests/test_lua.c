/*
 * The Lua binding's contract (DESIGN.md section 3), as a script sees it, on the
 * fixture of lua_fixture.h: a script's own errors, gb.kernel's fields and their
 * checks, tensors and scalars, errors raised in the script's hooks (each naming
 * its file and line, and the kernel), gb.tune's options, the shape helpers and
 * gb.template. Tuning through Lua (the device table, tuning with and without a
 * GPU, declared kernels, gb.bench, the example) is test_lua_tune.c.
 */

#include "lua/internal.h"
#include "lua_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* A script whose gb.kernel call is on line 2: the fields of the scale kernel, less
 * the one named skip, plus extra lines. */
#define KERNEL_LINE 2
static const char *kernel_script(char *out, size_t n, const char *skip, const char *extra)
{
    static const char *const fields[][2] = {
        {"name", "  name = \"scale\",\n"},   {"source", "  source = " SCALE_SRC ",\n"},
        {"entry", "  entry = \"scale\",\n"}, {"grid", "  grid = 1,\n"},
        {"block", "  block = 128,\n"},
    };
    size_t len = (size_t)snprintf(out, n, REQUIRE "local k = gb.kernel {\n");
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (!skip || strcmp(skip, fields[i][0]) != 0)
            len += (size_t)snprintf(out + len, n - len, "%s", fields[i][1]);
    snprintf(out + len, n - len, "%s}\n", extra ? extra : "");
    return out;
}

/* Runs the scale kernel with one field replaced and expects an error at gb.kernel. */
static void expect_kernel_error(fixture *f, const char *skip, const char *extra, const char *needle)
{
    char text[2048];
    int rc = run(f, kernel_script(text, sizeof text, skip, extra));
    EXPECT_ERROR_AT(f, rc, KERNEL_LINE, "gb.kernel", needle);
}

/* ---- errors in the script body ------------------------------------------ */

static void test_syntax_error_names_file_and_line(void **state)
{
    fixture *f = *state;
    int rc = run(f, REQUIRE "local x = 1\n"
                            "local y = = 2\n");
    EXPECT_ERROR_AT(f, rc, 3, "unexpected symbol");
    assert_int_equal(f->host.session.n_tuned, 0);
}

static void test_runtime_error_names_file_and_line(void **state)
{
    fixture *f = *state;
    int rc = run(f, REQUIRE "local t = nil\n"
                            "\n"
                            "print(t.field)\n");
    EXPECT_ERROR_AT(f, rc, 4, "attempt to index a nil value", "stack traceback");
    rc = run(f, REQUIRE "error(\"no such size\")\n");
    EXPECT_ERROR_AT(f, rc, 2, "no such size");
    /* An error object that looks like the engine's still fails the run. */
    rc = run(f, REQUIRE "error({ code = 0, message = 'odd' })\n");
    assert_int_equal(rc, GB_ESCRIPT);
    expect_text(f->err.msg, "odd");
}

/* ---- gb.kernel ---------------------------------------------------------- */

static void test_kernel_well_formed_is_accepted(void **state)
{
    fixture *f = *state;
    char text[2048];
    EXPECT_OK(f, run(f, kernel_script(text, sizeof text, NULL,
                                      "  smem = 0, options = { \"-lineinfo\" }, key = { \"n\" },\n"
                                      "  check = { outputs = { 1 }, rtol = 0, atol = 1e-6 },\n")));
    assert_int_equal(f->host.session.n_tuned, 0);
}

static void test_kernel_unknown_field_suggests_the_nearest(void **state)
{
    fixture *f = *state;
    expect_kernel_error(f, "grid", "  gird = 1,\n", "unknown field 'gird' (did you mean 'grid'?)");
    expect_kernel_error(f, NULL, "  colour = \"blue\",\n", "unknown field 'colour'");
}

static void test_kernel_required_fields_are_named(void **state)
{
    fixture *f = *state;
    static const char *const required[] = {"name", "source", "entry", "grid", "block"};
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++) {
        char needle[64];
        snprintf(needle, sizeof needle, "field '%s' is required", required[i]);
        expect_kernel_error(f, required[i], NULL, needle);
    }
}

static void test_kernel_field_types_are_checked(void **state)
{
    fixture *f = *state;
    expect_kernel_error(f, "grid", "  grid = \"x\",\n", "field 'grid' must be a function(c, s)");
    expect_kernel_error(f, "name", "  name = 42,\n", "field 'name' must be a string");
    expect_kernel_error(f, "source", "  source = 7,\n", "field 'source' must be a string of CUDA");
    expect_kernel_error(f, NULL, "  smem = \"big\",\n",
                        "field 'smem' must be a number or a function");
    expect_kernel_error(f, NULL, "  args = { 1 },\n", "field 'args' must be a function");
    expect_kernel_error(f, NULL, "  macros = 1,\n", "field 'macros' must be a boolean");
    expect_kernel_error(f, NULL, "  options = { 1 },\n", "options[1] must be a string");
    expect_kernel_error(f, NULL, "  reference = {},\n", "field 'reference' must be a kernel");
}

static void test_kernel_name_characters(void **state)
{
    fixture *f = *state;
    expect_kernel_error(f, "name", "  name = \"my kernel\",\n", "may use only letters");
    expect_kernel_error(f, "name", "  name = \"a/b\",\n", "\"a/b\"");
    char text[2048];
    EXPECT_OK(f, run(f, kernel_script(text, sizeof text, "name", "  name = \"gemm-f32.v2_x\",\n")));
}

static void test_kernel_params_must_be_lists_of_values(void **state)
{
    fixture *f = *state;
    expect_kernel_error(f, NULL, "  params = { BM = {} },\n", "params.BM must be a non-empty list");
    expect_kernel_error(f, NULL, "  params = { BM = 64 },\n", "params.BM must be a non-empty list");
    expect_kernel_error(f, NULL, "  params = { BM = { 64, { 128 } } },\n",
                        "params.BM[2] must be a number, string or boolean, got table");
    expect_kernel_error(f, NULL, "  params = { [\"B M\"] = { 64 } },\n",
                        "is not a valid parameter name");
}

static void test_kernel_constraints_must_be_functions(void **state)
{
    fixture *f = *state;
    expect_kernel_error(f, NULL, "  constraints = { function(c) return true end, 1 },\n",
                        "constraints[2] must be a function");
    expect_kernel_error(f, NULL, "  constraints = function(c) return true end,\n",
                        "field 'constraints' must be a table");
}

static void test_kernel_reject_lists_known_reasons(void **state)
{
    fixture *f = *state;
    expect_kernel_error(f, NULL, "  reject = { 'spills', 'serialised' },\n",
                        "reject[2] must be \"spills\" or \"serialized_wgmma\", got \"serialised\"");
    expect_kernel_error(f, NULL, "  reject = 'spills',\n", "field 'reject' must be a table");
    expect_kernel_error(f, NULL, "  reject = { 1 },\n", "reject[1] must be a string");
}

static void test_kernel_check_outputs_are_positions(void **state)
{
    fixture *f = *state;
    expect_kernel_error(f, NULL, "  check = { outputs = { 0 } },\n",
                        "check.outputs[1] must be a 1-based argument position");
    expect_kernel_error(f, NULL, "  check = { outputs = { 1, 2.5 } },\n",
                        "check.outputs[2] must be a 1-based argument position");
    expect_kernel_error(f, NULL, "  check = { outputs = 3 },\n", "check.outputs must be a list");
    expect_kernel_error(f, NULL, "  check = { rtol = -1 },\n", "check.rtol must be a non-negative");
    expect_kernel_error(f, NULL, "  check = { output = { 1 } },\n",
                        "check has an unknown field 'output'");
}

static void test_kernel_reference_must_have_no_params(void **state)
{
    fixture *f = *state;
    const char *text = REQUIRE TILED_KERNEL("tiled") //
        "local k2 = gb.kernel {\n"
        "  name = \"scale\", source = " SCALE_SRC ", entry = \"scale\", grid = 1, block = 64,\n"
        "  reference = k,\n"
        "}\n";
    int rc = run(f, text);
    EXPECT_ERROR_AT(f, rc, line_of(text, "local k2"), "reference tiled has tuning parameters");
}

static void test_kernel_entry_names_only_params(void **state)
{
    fixture *f = *state;
    expect_kernel_error(f, "entry", "  entry = \"scale<${BM}>\", params = { BN = { 64 } },\n",
                        "uses ${BM}, which is not in params");
}

static void test_kernel_static_geometry_is_checked(void **state)
{
    fixture *f = *state;
    expect_kernel_error(f, "grid", "  grid = { 1, 2, 3, 4 },\n",
                        "field 'grid' must be a list of 1 to 3 sizes");
    expect_kernel_error(f, "block", "  block = 0,\n", "block[1] must be a positive integer");
    expect_kernel_error(f, "block", "  block = { 32, 0.5 },\n",
                        "block[2] must be a positive integer");
    expect_kernel_error(f, NULL, "  smem = -1,\n", "smem must be a non-negative integer");
    expect_kernel_error(f, NULL, "  flops = -1,\n", "flops must be a non-negative number");
}

static void test_kernel_measure_table_is_checked(void **state)
{
    fixture *f = *state;
    expect_kernel_error(f, NULL, "  measure = { mode = \"warm\" },\n", "measure.mode must be");
    expect_kernel_error(f, NULL, "  measure = { noise = 2 },\n", "measure.noise must be");
    expect_kernel_error(f, NULL, "  measure = { samples = 2 },\n",
                        "measure has an unknown field 'samples'");
}

/* ---- tensors and scalars ------------------------------------------------ */

/* A script whose args call gb.tensor with the given arguments on a marked line. */
static void expect_tensor_error(fixture *f, const char *tensor_call, const char *needle)
{
    char text[2048];
    snprintf(text, sizeof text,
             REQUIRE "local k = gb.kernel {\n"
                     "  name = \"scale\", source = " SCALE_SRC ", entry = \"scale\",\n"
                     "  grid = 1, block = 128,\n"
                     "  args = function(s)\n"
                     "    local x = gb.tensor(\"f32\", { s.n }, \"output\")\n"
                     "    local y = %s --@\n"
                     "    return { x, gb.i32(s.n) }\n"
                     "  end,\n"
                     "}\n"
                     "gb.tune(k, { shapes = { { n = 256 } } })\n",
             tensor_call);
    int rc = run(f, text);
    EXPECT_ERROR_NAMING(f, rc, line_of(text, "--@"), "gb.tensor", needle);
}

static void test_tensor_errors_name_the_line_in_args(void **state)
{
    fixture *f = *state;
    use_fake_gpu(f);
    expect_tensor_error(f, "gb.tensor(\"f33\", { s.n }, \"randn\")",
                        "unknown dtype string \"f33\"");
    expect_tensor_error(f, "gb.tensor(\"f32\", { s.n, -1 }, \"randn\")",
                        "dims[2] must be a non-negative integer");
    expect_tensor_error(f, "gb.tensor(\"f32\", { s.n }, \"random\")",
                        "init must be a number, one of randn rand zeros ones output");
    expect_tensor_error(f, "gb.tensor(\"f32\", {}, \"zeros\")", "dims must be a list of 1 to 8");
    expect_tensor_error(f, "gb.tensor(\"i32\", { s.n }, { \"randn\", nan = { 1 } })",
                        "i32 cannot hold nan");
    expect_tensor_error(f, "gb.tensor(\"fp8_e4m3\", { s.n }, { \"randn\", inf = { 1 } })",
                        "fp8_e4m3 has no infinity");
    expect_tensor_error(f, "gb.tensor(\"f32\", { s.n }, { \"randn\", ninf = { 256 } })",
                        "init.ninf[1] must be an element index in [0, 256), got integer 256");
    expect_tensor_error(f, "gb.tensor(\"f32\", { s.n }, { \"randn\", nan = { 3 }, inf = { 3 } })",
                        "element 3 is planted twice");
    expect_tensor_error(f, "gb.tensor(\"f32\", { s.n }, { \"randn\", nans = { 3 } })",
                        "init has an unknown field 'nans'");
    expect_tensor_error(f, "gb.tensor(\"f32\", { s.n }, \"randn\", { in_out = true })",
                        "unknown option 'in_out'");
    expect_tensor_error(f, "gb.tensor(\"f32\", { s.n }, \"output\", { inout = true })",
                        "an inout tensor starts with data");
    expect_tensor_error(f,
                        "gb.tensor(\"f32\", { s.n }, { \"randn\", nan = { 0, 1, 2, 3, 4, 5, 6, 7, "
                        "8, 9, 10, 11, 12, 13, 14, 15, 16 } })",
                        "at most 16 NaN/Inf positions, got 17");
    assert_int_equal(f->host.session.n_tuned, 0);
}

/* NaN and infinities planted at element indices, an inout tensor and a norm check
 * reach the executor: the inout tensor is checked by default, with the f32
 * tolerances unless the script gives its own. */
static void test_planted_and_inout_tensors_reach_the_gpu(void **state)
{
    fixture *f = *state;
    use_fake_gpu(f);
    const char *text = REQUIRE
        "local k = gb.kernel {\n"
        "  name = \"scale\", source = " SCALE_SRC ", entry = \"scale\", grid = 1, block = 128,\n"
        "  args = function(s) return {\n"
        "    gb.tensor(\"bf16\", { s.n }, { \"randn\", nan = { 7, 0 }, inf = { 3 }, ninf = { 255 } "
        "}),\n"
        "    gb.tensor(\"f32\", s.n, \"randn\", { inout = true }), gb.i32(s.n),\n"
        "  } end,\n"
        "  check = { norm = true, rtol = 1e-3 },\n"
        "}\n"
        "gb.tune(k, { shapes = { { n = 256 } } })\n";
    EXPECT_OK(f, run(f, text));
    const gb_arg *a = f->gpu.args;
    assert_int_equal(a[0].n_planted[GB_SPECIAL_NAN], 2);
    assert_int_equal(a[0].planted[GB_SPECIAL_NAN][0], 0); /* sorted */
    assert_int_equal(a[0].planted[GB_SPECIAL_NAN][1], 7);
    assert_int_equal(a[0].n_planted[GB_SPECIAL_INF], 1);
    assert_int_equal(a[0].planted[GB_SPECIAL_INF][0], 3);
    assert_int_equal(a[0].planted[GB_SPECIAL_NINF][0], 255);
    assert_int_equal(a[0].init, GB_INIT_RANDN);
    assert_false(a[0].inout);
    assert_false(a[0].checked);
    assert_true(a[1].inout);
    assert_true(a[1].checked);
    assert_int_equal(f->gpu.check.n_outputs, 1);
    assert_int_equal(f->gpu.check.outputs[0], 1);
    assert_true(f->gpu.check.norm);
    assert_float_equal(f->gpu.check.rtol, 1e-3, 0);
    assert_float_equal(f->gpu.check.atol, 1e-6, 0); /* f32's */
}

static void test_tensor_and_scalars_reach_the_gpu(void **state)
{
    fixture *f = *state;
    use_fake_gpu(f);
    const char *text = REQUIRE
        "local k = gb.kernel {\n"
        "  name = \"scale\", source = " SCALE_SRC ", entry = \"scale\", grid = 1, block = 128,\n"
        "  args = function(s) return {\n"
        "    gb.tensor(\"bf16\", { s.n, 3 }, 0.5), gb.tensor(\"i8\", 4),\n"
        "    gb.tensor(\"f32\", { s.n }),\n"
        "    gb.i32(-7), gb.u32(4294967295), gb.i64(1 << 40), gb.f32(1.5), gb.f64(2),\n"
        "  } end,\n"
        "}\n"
        "gb.tune(k, { shapes = { { n = 256 } } })\n";
    EXPECT_OK(f, run(f, text));
    assert_int_equal(f->gpu.n_args, 8);
    const gb_arg *a = f->gpu.args;
    assert_int_equal(a[0].kind, GB_ARG_TENSOR);
    assert_int_equal(a[0].dtype, GB_DT_BF16);
    assert_int_equal(a[0].n_dims, 2);
    assert_int_equal(a[0].dims[0], 256);
    assert_int_equal(a[0].dims[1], 3);
    assert_int_equal(a[0].init, GB_INIT_VALUE);
    assert_true(a[0].init_value == 0.5);
    assert_int_equal(a[1].n_dims, 1);
    assert_int_equal(a[1].dims[0], 4);
    assert_int_equal(a[2].init, GB_INIT_OUTPUT); /* the default */
    assert_int_equal(a[3].kind, GB_ARG_SCALAR);
    assert_int_equal(a[3].dtype, GB_DT_I32);
    assert_int_equal(a[3].int_value, -7);
    assert_int_equal(a[4].int_value, 4294967295LL);
    assert_int_equal(a[5].int_value, 1LL << 40);
    assert_int_equal(a[6].dtype, GB_DT_F32);
    assert_true(a[6].float_value == 1.5);
    assert_true(a[7].float_value == 2.0);
}

static void test_scalars_out_of_range_are_refused(void **state)
{
    fixture *f = *state;
    int rc = run(f, REQUIRE "local ok = gb.i32(2147483647)\n"
                            "local bad = gb.i32(2147483648)\n");
    EXPECT_ERROR_AT(f, rc, 3, "gb.i32: expected an integer in [-2147483648, 2147483647]",
                    "integer 2147483648");
    rc = run(f, REQUIRE "local bad = gb.u32(-1)\n");
    EXPECT_ERROR_AT(f, rc, 2, "gb.u32: expected an integer in [0, 4294967295]");
    rc = run(f, REQUIRE "local bad = gb.i32(1.5)\n");
    EXPECT_ERROR_AT(f, rc, 2, "gb.i32", "float 1.5");
    rc = run(f, REQUIRE "local bad = gb.f32(\"1\")\n");
    EXPECT_ERROR_AT(f, rc, 2, "gb.f32: expected a number");
}

/* ---- errors in the script's functions ----------------------------------- */

static void test_args_error_names_its_line_and_kernel(void **state)
{
    fixture *f = *state;
    use_fake_gpu(f);
    const char *text = REQUIRE "local k = gb.kernel {\n"
                               "  name = \"scale\", source = " SCALE_SRC ",\n"
                               "  entry = \"scale\", grid = 1, block = 128,\n"
                               "  args = function(s)\n"
                               "    return { gb.tensor(\"f32\", { s.size.n }) } --@\n"
                               "  end,\n"
                               "}\n"
                               "gb.tune(k, { shapes = { { n = 256 } } })\n";
    int rc = run(f, text);
    EXPECT_ERROR_NAMING(f, rc, line_of(text, "--@"), "scale", "attempt to index a nil value");
    assert_int_equal(f->gpu.n_problems, 0);
}

static void test_args_must_return_tensors_and_scalars(void **state)
{
    fixture *f = *state;
    use_fake_gpu(f);
    const char *text = REQUIRE "local k = gb.kernel {\n"
                               "  name = \"scale\", source = " SCALE_SRC ",\n"
                               "  entry = \"scale\", grid = 1, block = 128,\n"
                               "  args = function(s) return { gb.tensor(\"f32\", 4), 7 } end, --@\n"
                               "}\n"
                               "gb.tune(k, { shapes = { { n = 256 } } })\n";
    int rc = run(f, text);
    EXPECT_ERROR_NAMING(
        f, rc, line_of(text, "--@"),
        "element 2 is not a gb.tensor, a scalar (gb.i32, gb.f32, ...) or a gb.tensormap");
}

/* A tuned kernel whose hook (given on the marked line) fails. */
static void expect_hook_error(fixture *f, const char *field, const char *needle)
{
    char text[2048];
    snprintf(text, sizeof text,
             REQUIRE "local k = gb.kernel {\n"
                     "  name = \"tiled\", source = " TILED_SRC ", entry = \"tiled<${B}>\",\n"
                     "  params = { B = { 64, 128 } },\n" SCALE_ARGS
                     "  grid = function(c, s) return { gb.cdiv(s.n, c.B) } end,\n"
                     "  block = function(c, s) return { c.B } end,\n"
                     "  %s --@\n"
                     "}\n"
                     "gb.tune(k, { shapes = { { n = 256 } } })\n",
             field);
    int rc = run(f, text);
    EXPECT_ERROR_NAMING(f, rc, line_of(text, "--@"), "tiled", needle);
    assert_int_equal(f->host.session.n_tuned, 0);
}

static void test_geometry_hooks_are_checked(void **state)
{
    fixture *f = *state;
    expect_hook_error(f, "grid = function(c, s) return { 0 } end,",
                      "grid[1] must be a positive integer, got 0 (configuration B=");
    expect_hook_error(f, "grid = function(c, s) return { 1, 1, 1, 1 } end,",
                      "grid must give 1 to 3 sizes, got 4");
    expect_hook_error(f, "block = function(c, s) return { c.B, 0.5 } end,",
                      "block[2] must be a positive integer, got 0.5 (configuration B=");
    expect_hook_error(f, "smem = function(c, s) return -4 end,",
                      "smem must be a non-negative integer");
    expect_hook_error(f, "constraints = { function(c) return c.missing.B end },",
                      "attempt to index a nil value");
}

static void test_hook_error_in_a_nested_call_names_that_line(void **state)
{
    fixture *f = *state;
    const char *text =
        REQUIRE "local function threads(c)\n"
                "  error(\"no threads for B=\" .. c.B) --@\n"
                "end\n"
                "local k = gb.kernel {\n"
                "  name = \"tiled\", source = " TILED_SRC ", entry = \"tiled<${B}>\",\n"
                "  params = { B = { 64 } },\n" SCALE_ARGS
                "  grid = 1, block = function(c, s) return { threads(c) } end,\n"
                "}\n"
                "gb.tune(k, { shapes = { { n = 256 } } })\n";
    int rc = run(f, text);
    EXPECT_ERROR_NAMING(f, rc, line_of(text, "--@"), "no threads for B=64", "stack traceback");
}

/* ---- gb.tune ------------------------------------------------------------ */

static void expect_tune_error(fixture *f, const char *kernel_extra, const char *tune_call,
                              const char *needle)
{
    char text[2048];
    snprintf(text, sizeof text,
             REQUIRE "local k = gb.kernel {\n"
                     "  name = \"scale\", source = " SCALE_SRC ", entry = \"scale\",\n"
                     "  grid = 1, block = 128,\n"
                     "%s"
                     "}\n"
                     "%s --@\n",
             kernel_extra, tune_call);
    int rc = run(f, text);
    EXPECT_ERROR_AT(f, rc, line_of(text, "--@"), "gb.tune", needle);
    assert_int_equal(f->host.session.n_tuned, 0);
}

static void test_tune_options_are_checked(void **state)
{
    fixture *f = *state;
    const char *shapes = "{ { n = 256 } }";
    char call[256];
    expect_tune_error(f, SCALE_ARGS, "gb.tune({ name = \"scale\" }, {})",
                      "expected a kernel made by gb.kernel, got table");
    snprintf(call, sizeof call, "gb.tune(k, { shape = %s })", shapes);
    expect_tune_error(f, SCALE_ARGS, call, "unknown option 'shape'");
    snprintf(call, sizeof call, "gb.tune(k, { shapes = %s, strategy = \"bayes\" })", shapes);
    expect_tune_error(f, SCALE_ARGS, call, "strategy string \"bayes\"");
    expect_tune_error(f, SCALE_ARGS, "gb.tune(k, {})", "no shapes");
    expect_tune_error(f, SCALE_ARGS, "gb.tune(k, { shapes = {} })",
                      "shapes must be a non-empty list");
    expect_tune_error(f, SCALE_ARGS, "gb.tune(k, { shapes = { 1024 } })",
                      "shapes[1] must be a table of fields");
    snprintf(call, sizeof call, "gb.tune(k, { shapes = %s, baseline = \"reference\" })", shapes);
    expect_tune_error(f, SCALE_ARGS, call, "needs a kernel with a reference");
    snprintf(call, sizeof call, "gb.tune(k, { shapes = %s, budget = { evals = 0 } })", shapes);
    expect_tune_error(f, SCALE_ARGS, call, "budget.evals");
    snprintf(call, sizeof call, "gb.tune(k, { shapes = %s })", shapes);
    expect_tune_error(f, "", call, "kernel scale has no args function");
}

static void test_check_outputs_naming_a_scalar_names_the_kernel(void **state)
{
    fixture *f = *state;
    use_fake_gpu(f);
    const char *text = REQUIRE "local k = gb.kernel {\n"
                               "  name = \"scale\", source = " SCALE_SRC ",\n"
                               "  entry = \"scale\", grid = 1, block = 128,\n" //
        SCALE_ARGS "  check = { outputs = { 2 } },\n"
                               "}\n"
                               "gb.tune(k, { shapes = { { n = 256 } } })\n";
    int rc = run(f, text);
    assert_int_equal(rc, GB_ESCRIPT);
    expect_text(f->err.msg, "kernel scale");
    expect_text(f->err.msg, "check.outputs names argument 2, which is not a tensor");
    assert_int_equal(f->gpu.n_trials, 0);
}

/* ---- shapes ------------------------------------------------------------- */

static void test_shape_helpers(void **state)
{
    fixture *f = *state;
    EXPECT_OK(f,
              run(f, REQUIRE
                  "local s = gb.sweep { M = { 1, 2 }, N = { 10, 20, 30 }, K = 5 }\n"
                  "assert(#s == 6)\n"
                  "local seen = {}\n"
                  "for _, x in ipairs(s) do\n"
                  "  assert(x.K == 5)\n"
                  "  seen[x.M .. 'x' .. x.N] = true\n"
                  "end\n"
                  "for _, m in ipairs { 1, 2 } do for _, n in ipairs { 10, 20, 30 } do\n"
                  "  assert(seen[m .. 'x' .. n], m .. 'x' .. n)\n"
                  "end end\n"
                  /* the last name varies fastest */
                  "assert(s[1].M == 1 and s[1].N == 10 and s[2].N == 20 and s[4].M == 2)\n"
                  "local t = gb.sweep { M = gb.pow2(10, 12), N = gb.same 'M', K = gb.same 'M' }\n"
                  "assert(#t == 3)\n"
                  "for i, x in ipairs(t) do\n"
                  "  assert(x.M == 1 << (9 + i) and x.N == x.M and x.K == x.M)\n"
                  "end\n"
                  "local p = gb.pow2(10, 12)\n"
                  "assert(#p == 3 and p[1] == 1024 and p[2] == 2048 and p[3] == 4096)\n"
                  "assert(math.type(p[1]) == 'integer')\n"
                  "local r = gb.range(1, 10, 4)\n"
                  "assert(#r == 3 and r[1] == 1 and r[2] == 5 and r[3] == 9)\n"
                  "r = gb.range(3, 5)\n"
                  "assert(#r == 3 and r[3] == 5)\n"
                  "r = gb.range(8, 2, -3)\n"
                  "assert(#r == 3 and r[1] == 8 and r[3] == 2)\n"
                  "local z = gb.zip { M = { 1, 2, 3 }, N = { 4, 5, 6 } }\n"
                  "assert(#z == 3 and z[2].M == 2 and z[2].N == 5 and z[3].N == 6)\n"
                  "assert(gb.cdiv(10, 3) == 4 and gb.cdiv(9, 3) == 3 and gb.cdiv(0, 8) == 0)\n"
                  "assert(gb.cdiv(1, 1024) == 1)\n"));
}

static void test_shape_helper_errors(void **state)
{
    fixture *f = *state;
    int rc = run(f, REQUIRE "local s = gb.sweep { M = { 1, 2 }, N = gb.same 'Q' }\n");
    EXPECT_ERROR_AT(f, rc, 2, "gb.sweep", "field N is tied to Q, which is not in the sweep");
    rc = run(f, REQUIRE "local s = gb.sweep { M = {} }\n");
    EXPECT_ERROR_AT(f, rc, 2, "gb.sweep", "non-empty list");
    rc = run(f, REQUIRE "local z = gb.zip { M = { 1, 2, 3 }, N = { 4, 5 } }\n");
    EXPECT_ERROR_AT(f, rc, 2, "gb.zip", "has 2 values, others have 3");
    rc = run(f, REQUIRE "local p = gb.pow2(12, 10)\n");
    EXPECT_ERROR_AT(f, rc, 2, "gb.pow2");
    rc = run(f, REQUIRE "local r = gb.range(1, 10, 0)\n");
    EXPECT_ERROR_AT(f, rc, 2, "gb.range");
    rc = run(f, REQUIRE "local r = gb.range(1, 1e12)\n");
    EXPECT_ERROR_AT(f, rc, 2, "gb.range", "too many");
    rc = run(f, REQUIRE "local n = gb.cdiv(10, 0)\n");
    EXPECT_ERROR_AT(f, rc, 2, "gb.cdiv");
    rc = run(f, REQUIRE "local n = gb.cdiv(10.5, 2)\n");
    EXPECT_ERROR_AT(f, rc, 2, "gb.cdiv");
}

/* ---- gb.template -------------------------------------------------------- */

static void test_template_prefers_the_scripts_folder(void **state)
{
    fixture *f = *state;
    char local[160];
    /* sgemm.cuh is also on the templates path; the script's copy wins. */
    snprintf(local, sizeof local, "%s/sgemm.cuh", f->dir);
    write_file(local, "// the script's own copy\n", "");
    char *argv[] = {local};
    EXPECT_OK(f, run_script(f, "script.lua",
                            REQUIRE "local t = gb.template 'sgemm.cuh'\n"
                                    "assert(t.path == arg[1], t.path)\n"
                                    "assert(t.text == \"// the script's own copy\\n\")\n",
                            1, argv));
}

static void test_template_falls_back_to_the_templates_path(void **state)
{
    fixture *f = *state;
    char expect[PATH_MAX + 32];
    snprintf(expect, sizeof expect, "%s/gemm_ref.cuh", f->templates);
    char *argv[] = {expect};
    EXPECT_OK(f, run_script(f, "script.lua",
                            REQUIRE "local t = gb.template 'gemm_ref.cuh'\n"
                                    "assert(t.path == arg[1], t.path)\n"
                                    "assert(t.text:find('gemm_ref_f32', 1, true))\n",
                            1, argv));
}

static void test_template_not_found_lists_the_folders(void **state)
{
    fixture *f = *state;
    int rc = run(f, REQUIRE "\n"
                            "local t = gb.template 'nowhere.cuh'\n");
    EXPECT_ERROR_AT(f, rc, 3, "gb.template: nowhere.cuh not found", f->dir, f->templates);
}

/* The results table is a wire view (lua/results.c): its table is static data,
 * so one check covers every run. */
static void test_the_results_view_checks_out(void **state)
{
    (void)state;
    gb_err err;
    if (gb_wire_check_type(&gb_lua_result_wire, &err)) fail_msg("%s", err.msg);
}

#define TEST(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_syntax_error_names_file_and_line),
        TEST(test_runtime_error_names_file_and_line),
        TEST(test_kernel_well_formed_is_accepted),
        TEST(test_kernel_unknown_field_suggests_the_nearest),
        TEST(test_kernel_required_fields_are_named),
        TEST(test_kernel_field_types_are_checked),
        TEST(test_kernel_name_characters),
        TEST(test_kernel_params_must_be_lists_of_values),
        TEST(test_kernel_constraints_must_be_functions),
        TEST(test_kernel_check_outputs_are_positions),
        TEST(test_kernel_reject_lists_known_reasons),
        TEST(test_kernel_reference_must_have_no_params),
        TEST(test_kernel_entry_names_only_params),
        TEST(test_kernel_static_geometry_is_checked),
        TEST(test_tensor_errors_name_the_line_in_args),
        TEST(test_planted_and_inout_tensors_reach_the_gpu),
        TEST(test_tensor_and_scalars_reach_the_gpu),
        TEST(test_scalars_out_of_range_are_refused),
        TEST(test_args_error_names_its_line_and_kernel),
        TEST(test_args_must_return_tensors_and_scalars),
        TEST(test_geometry_hooks_are_checked),
        TEST(test_hook_error_in_a_nested_call_names_that_line),
        TEST(test_tune_options_are_checked),
        TEST(test_check_outputs_naming_a_scalar_names_the_kernel),
        TEST(test_shape_helpers),
        TEST(test_shape_helper_errors),
        TEST(test_template_prefers_the_scripts_folder),
        TEST(test_template_falls_back_to_the_templates_path),
        TEST(test_template_not_found_lists_the_folders),
        TEST(test_kernel_measure_table_is_checked),
        cmocka_unit_test(test_the_results_view_checks_out),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
