/*
 * Tuning through the Lua binding, on the fixture of lua_fixture.h: gb.device
 * without a driver, when compiling only and on the fake GPU; gb.tune compiling
 * only (every shape reported, compile errors counted, constraints and key
 * fields applied, sweeps of shapes); kernels declared and tuned after the
 * script; arg; timing on the fake GPU (the best picked, cached per measurement
 * mode, gb.best, gb.bench and its options); and the gemm example compiling.
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

/* ---- the device ---------------------------------------------------------- */

static void test_device_is_nil_without_a_driver(void **state)
{
    fixture *f = *state;
    f->host.session.tuner.compile_only = false; /* the driver is missing, not switched off */
    EXPECT_OK(f, run(f, REQUIRE "local d, why = gb.device()\n"
                                "assert(d == nil)\n"
                                "assert(why:find('libcuda.so.1', 1, true), why)\n"));
    assert_true(f->host.session.gpu_missing);
    assert_int_equal(f->host.session.gpu_missing_err.code, GB_ENODRIVER);
    expect_text(read_back(f, f->host.session.tuner.log), "compiling only");
}

static void test_device_is_nil_when_compiling_only(void **state)
{
    fixture *f = *state;
    EXPECT_OK(f, run(f, REQUIRE "local d, why = gb.device()\n"
                                "assert(d == nil and why == '--compile-only', why)\n"));
}

static void test_device_describes_the_gpu(void **state)
{
    fixture *f = *state;
    use_fake_gpu(f);
    EXPECT_OK(f, run(f, REQUIRE "local d = assert(gb.device())\n"
                                "assert(d.name == 'Fake H100' and d.cc == '9.0' and d.sms == 132)\n"
                                "assert(d.arch == 'sm_90a' and d.l2_bytes == 50 << 20)\n"
                                "assert(d.smem_per_block_optin == 232448 and d.peak_gbps == 3352)\n"
                                "assert(d.sm_clock_mhz == 1980 and d.sm_clock_khz == 1980000)\n"
                                "assert(d.mem_clock_mhz == 0 and d.driver == 12040)\n"
                                "assert(d.uuid == 'GPU-12345678-9abc-def0-1234-56789abcdef0')\n"
                                "assert(math.type(d.mem_bytes) == 'integer')\n"
                                "assert(gb.device().name == d.name)\n"));
    assert_int_equal(f->gpu.n_opened, 1);
}

static void test_no_gpu_with_require_gpu_keeps_its_code(void **state)
{
    fixture *f = *state;
    f->host.session.tuner.compile_only = false;
    f->host.session.require_gpu = true;
    const char *text = REQUIRE TILED_KERNEL("tiled") "gb.tune(k, { shapes = { { n = 256 } } })\n";
    int rc = run(f, text);
    assert_int_equal(rc, GB_ENODRIVER);
    expect_text(f->err.msg, "libcuda.so.1");
    char where[160];
    snprintf(where, sizeof where, "%s:%d:", f->path, line_of(text, "gb.tune"));
    expect_text(f->err.msg, where);
}

/* ---- tuning without a GPU ---------------------------------------------- */

static void test_tune_compile_only_reports_every_shape(void **state)
{
    fixture *f = *state;
    use_cache(f);
    f->host.session.tuner.jobs = 2;
    const char *text = REQUIRE TILED_KERNEL("tiled") //
        "local res = gb.tune(k, { shapes = { { n = 256 }, { n = 1000 } } })\n"
        "assert(#res == 2)\n"
        "assert(res[1].shape.n == 256 and res[2].shape.n == 1000)\n"
        "assert(res[1].key == 'n=256' and res[2].key == 'n=1000', res[1].key)\n"
        "for _, r in ipairs(res) do\n"
        "  assert(r.best == nil)\n"
        "  assert(r.counts.configs == 3 and r.counts.compiled == 3)\n"
        "  assert(r.counts.rejected == 0 and r.counts.compile_error == 0)\n"
        "  assert(r.counts.timed == 0)\n"
        "end\n"
        "assert(gb.best(k, { n = 256 }) == nil)\n";
    EXPECT_OK(f, run(f, text));
    assert_int_equal(f->host.session.n_tuned, 1);
    assert_int_equal(f->host.session.n_shapes_failed, 0);
    const char *table = read_back(f, f->out);
    expect_text(table, "tiled");
    expect_text(table, "B=64");
    expect_text(table, "B=256");
    expect_text(table, "regs");
}

static void test_tune_without_a_driver_compiles_only(void **state)
{
    fixture *f = *state;
    f->host.session.tuner.compile_only = false;      /* a GPU was wanted; there is no driver */
    const char *text = REQUIRE TILED_KERNEL("tiled") //
        "local res = gb.tune(k, { shapes = { { n = 256 } } })\n"
        "assert(#res == 1 and res[1].best == nil and res[1].counts.compiled == 3)\n";
    EXPECT_OK(f, run(f, text));
    assert_int_equal(f->host.session.n_tuned, 1);
    assert_true(f->host.session.gpu_missing);
    expect_text(read_back(f, f->host.session.tuner.log),
                "libcuda.so.1 (a test without a driver); compiling only");
    expect_text(read_back(f, f->out), "B=128");
}

static void test_tune_counts_compile_errors(void **state)
{
    fixture *f = *state;
    f->host.session.tuner.jobs = 2;
    EXPECT_OK(f, run(f, REQUIRE
                     "local k = gb.kernel {\n"
                     "  name = \"broken\", entry = \"broken\", grid = 1, block = 32,\n"
                     "  source = [[extern \"C\" __global__ void broken(float *x) { x[0] = y; }]],\n"
                     "  args = function(s) return { gb.tensor(\"f32\", 1) } end,\n"
                     "}\n"
                     "local res = gb.tune(k, { shapes = { { n = 1 } } })\n"
                     "assert(#res == 1 and res[1].best == nil)\n"
                     "assert(res[1].counts.compile_error == 1 and res[1].counts.compiled == 0)\n"));
    assert_int_equal(f->host.session.n_tuned, 1);
    assert_int_equal(f->host.session.n_shapes_failed, 1);
    expect_text(read_back(f, f->out), "error");
}

static void test_constraints_reject_configs(void **state)
{
    fixture *f = *state;
    EXPECT_OK(f,
              run(f, REQUIRE
                  "local k = gb.kernel {\n"
                  "  name = \"tiled\", source = " TILED_SRC ", entry = \"tiled<${B}>\",\n"
                  "  params = { B = { 32, 64, 96, 128 } },\n"
                  "  constraints = { function(c) return c.B % 64 == 0 end },\n" SCALE_ARGS
                  "  grid = function(c, s) return { gb.cdiv(s.n, c.B) } end,\n"
                  "  block = function(c, s) return { c.B } end,\n"
                  "}\n"
                  "local res = gb.tune(k, { shapes = gb.zip { n = { 256, 512 } } })\n"
                  "assert(#res == 2)\n"
                  "for _, r in ipairs(res) do\n"
                  "  assert(r.counts.configs == 4 and r.counts.rejected == 2, r.counts.rejected)\n"
                  "  assert(r.counts.compiled == 2)\n"
                  "end\n"));
    const char *table = read_back(f, f->out);
    expect_text(table, "B=64");
    if (strstr(table, "B=32") || strstr(table, "B=96"))
        fail_msg("rejected configs compiled:\n%s", table);
}

static void test_tune_accepts_a_sweep_of_shapes(void **state)
{
    fixture *f = *state;
    EXPECT_OK(f,
              run(f, REQUIRE
                  "local k = gb.kernel {\n"
                  "  name = \"scale\", source = " SCALE_SRC ", entry = \"scale\",\n"
                  "  grid = function(c, s) return { gb.cdiv(s.M * s.N, 128) } end, block = 128,\n"
                  "  args = function(s)\n"
                  "    return { gb.tensor(\"f32\", { s.M, s.N }), gb.i32(s.M * s.N) }\n"
                  "  end,\n"
                  "  key = { 'M', 'N' },\n"
                  "}\n"
                  "local shapes = gb.sweep { M = { 1, 2 }, N = gb.same 'M', tag = 'x' }\n"
                  "local res = gb.tune(k, { shapes = shapes })\n"
                  "assert(#res == 2)\n"
                  "assert(res[1].key == 'M=1,N=1' and res[2].key == 'M=2,N=2', res[1].key)\n"
                  "assert(res[2].shape.tag == 'x')\n"));
}

static void test_key_field_missing_from_the_shape_is_a_script_error(void **state)
{
    fixture *f = *state;
    int rc = run(f, REQUIRE "local k = gb.kernel {\n"
                            "  name = \"scale\", source = " SCALE_SRC ",\n"
                            "  entry = \"scale\", grid = 1, block = 128,\n" //
                 SCALE_ARGS "  key = { 'n', 'batch' },\n"
                            "}\n"
                            "gb.tune(k, { shapes = { { n = 4 } } })\n");
    assert_int_equal(rc, GB_ESCRIPT);
    expect_text(f->err.msg, "key field batch is not in the shape");
}

/* ---- declarative use ---------------------------------------------------- */

static void test_declared_kernels_are_tuned_after_the_script(void **state)
{
    fixture *f = *state;
    EXPECT_OK(f, run(f, REQUIRE
                     "gb.kernel {\n"
                     "  name = \"declared\", source = " SCALE_SRC ", entry = \"scale\",\n"
                     "  grid = 1, block = 128,\n" SCALE_ARGS "  shapes = { { n = 256 } },\n"
                     "}\n"
                     /* a kernel with no shapes (a reference, say) is not tuned */
                     "gb.kernel { name = \"idle\", entry = \"scale\", grid = 1, block = 1,\n"
                     "            source = " SCALE_SRC " }\n"));
    assert_int_equal(f->host.session.n_tuned, 1);
    const char *table = read_back(f, f->out);
    expect_text(table, "declared");
    if (strstr(table, "idle")) fail_msg("a kernel without shapes was tuned:\n%s", table);
}

static void test_declared_kernels_are_not_tuned_after_gb_tune(void **state)
{
    fixture *f = *state;
    EXPECT_OK(f,
              run(f, REQUIRE "local a = gb.kernel {\n"
                             "  name = \"first\", source = " SCALE_SRC ", entry = \"scale\",\n"
                             "  grid = 1, block = 128,\n" SCALE_ARGS "  shapes = { { n = 256 } },\n"
                             "}\n"
                             "local b = gb.kernel {\n"
                             "  name = \"second\", source = " SCALE_SRC ", entry = \"scale\",\n"
                             "  grid = 1, block = 128,\n" SCALE_ARGS "  shapes = { { n = 256 } },\n"
                             "}\n"
                             "gb.tune(a)\n"));
    assert_int_equal(f->host.session.n_tuned, 1);
    const char *table = read_back(f, f->out);
    expect_text(table, "first");
    if (strstr(table, "second")) fail_msg("a declared kernel was tuned after gb.tune:\n%s", table);
}

static void test_declared_kernel_without_args_names_its_line(void **state)
{
    fixture *f = *state;
    const char *text = REQUIRE "\n"
                               "gb.kernel {\n"
                               "  name = \"declared\", source = " SCALE_SRC ", entry = \"scale\",\n"
                               "  grid = 1, block = 128, shapes = { { n = 256 } },\n"
                               "}\n";
    int rc = run(f, text);
    EXPECT_ERROR_AT(f, rc, 3, "declared", "args");
    assert_int_equal(f->host.session.n_tuned, 0);
}

/* ---- the script's environment ------------------------------------------- */

static void test_arg_holds_the_script_and_its_arguments(void **state)
{
    fixture *f = *state;
    char *argv[] = {"--size", "4096", "fast"};
    EXPECT_OK(f, run_script(f, "args.lua",
                            REQUIRE
                            "assert(arg[0] == debug.getinfo(1, 'S').source:sub(2), arg[0])\n"
                            "assert(arg[0]:match('/args%.lua$'))\n"
                            "assert(#arg == 3, #arg)\n"
                            "assert(arg[1] == '--size' and arg[2] == '4096' and arg[3] == 'fast')\n"
                            "assert(type(gb.version) == 'string')\n",
                            3, argv));
    EXPECT_OK(f, run_script(f, "none.lua", "assert(#arg == 0 and arg[0]:match('none%.lua$'))\n", 0,
                            NULL));
}

/* ---- timing (on the fake GPU) ------------------------------------------- */

/* A tiled kernel checked against a reference, with extra fields (a string of
 * "  field = value,\n" lines) before its closing brace. */
#define TILED_WITH_REFERENCE(extra)                                                                \
    "local ref = gb.kernel {\n"                                                                    \
    "  name = \"scale_ref\", source = " SCALE_SRC ", entry = \"scale\",\n"                         \
    "  grid = function(c, s) return { gb.cdiv(s.n, 128) } end, block = 128,\n"                     \
    "}\n"                                                                                          \
    "local k = gb.kernel {\n"                                                                      \
    "  name = \"tiled\", source = " TILED_SRC ", entry = \"tiled<${B}>\",\n"                       \
    "  params = { B = { 256, 64, 128 } },\n" SCALE_ARGS                                            \
    "  grid = function(c, s) return { gb.cdiv(s.n, c.B) } end,\n"                                  \
    "  block = function(c, s) return { c.B } end,\n"                                               \
    "  reference = ref, check = { outputs = { 1 } },\n" extra "}\n"

static void test_tune_with_a_gpu_picks_and_caches_the_best(void **state)
{
    fixture *f = *state;
    use_cache(f);
    use_fake_gpu(f);
    const char *text = REQUIRE TILED_WITH_REFERENCE(
        "  flops = function(s) return 2 * s.n end, bytes = function(s) return 8 * s.n "
        "end,\n") "local res = gb.tune(k, { shapes = { { n = 64000 } }, baseline = "
                  "'reference' })\n"
                  "local r = res[1]\n"
                  "assert(r.best and r.best.config.B == 64, 'best')\n"
                  "assert(math.abs(r.best.ms - 0.064) < 1e-12, r.best.ms)\n"
                  "assert(math.abs(r.speedup - 2) < 1e-12, r.speedup)\n"
                  "assert(r.cached == (arg[1] == 'again'))\n"
                  "assert(#r.best.samples == 10 and r.best.mode == 'cold', 'samples, "
                  "cached or not')\n"
                  "assert(r.best.stats.median == r.best.ms and r.best.stats.median_ms == "
                  "nil, 'lua names')\n"
                  "assert(math.type(r.best.stats.n) == 'integer' and r.best.stats.ci_lo <= "
                  "r.best.ms)\n"
                  "assert(r.baseline.median and r.best.n_throttled == 0 and r.best.capped "
                  "~= nil)\n"
                  "assert(r.best.contended == false and r.best.n_other_procs == 0)\n"
                  "assert(r.best.clocks_mhz == nil and r.best.throttled == nil, 'not for "
                  "Lua')\n"
                  "assert((r.best.launches_per_sample == 1) == not r.cached, 'known when "
                  "measured')\n"
                  "if not r.cached then\n"
                  "  assert(r.counts.timed == 3 and r.counts.ok == 3)\n"
                  "  assert(math.abs(r.best.tflops - 128000 / 0.064e-3 / 1e12) < 1e-9, "
                  "r.best.tflops)\n"
                  "  assert(math.abs(r.best.gbps - 512000 / 0.064e-3 / 1e9) < 1e-9, "
                  "r.best.gbps)\n"
                  "end\n"
                  "local best = gb.best(k, { n = 64000 })\n"
                  "assert(best and best.B == 64)\n"
                  "assert(gb.best(k, { n = 1 }) == nil)\n";
    EXPECT_OK(f, run(f, text));
    assert_int_equal(f->host.session.n_tuned, 1);
    assert_int_equal(f->gpu.n_trials, 3); /* three variants; the baseline ran in the race */
    assert_true(f->gpu.n_references >= 1);
    char *again[] = {"again"};
    EXPECT_OK(f, run_script(f, "script.lua", text, 1, again));
    assert_int_equal(f->gpu.n_trials, 3); /* answered by the cache */
    expect_text(read_back(f, f->out), "cache");
}

/* A best timed cold does not answer a hot run, nor the other way round. */
static void test_cached_best_is_per_measurement_mode(void **state)
{
    fixture *f = *state;
    use_cache(f);
    use_fake_gpu(f);
    const char *text =
        REQUIRE TILED_KERNEL("tiled") "local r = gb.tune(k, { shapes = { { n = 64 } } })[1]\n"
                                      "assert(r.best.mode == arg[1], r.best.mode)\n"
                                      "assert(r.cached == (arg[2] == 'cached'), 'cached')\n";
    char *cold[] = {"cold", "new"}, *hot[] = {"hot", "new"}, *hot_again[] = {"hot", "cached"};
    EXPECT_OK(f, run_script(f, "script.lua", text, 2, cold));
    assert_int_equal(f->gpu.n_trials, 3);
    f->host.session.tuner.measure.mode = GB_MODE_HOT;
    f->host.measure_set |= GB_MEASURE_SET_MODE;
    EXPECT_OK(f, run_script(f, "script.lua", text, 2, hot));
    assert_int_equal(f->gpu.n_trials, 6); /* tuned again, hot */
    EXPECT_OK(f, run_script(f, "script.lua", text, 2, hot_again));
    assert_int_equal(f->gpu.n_trials, 6);
}

static void test_bench_times_the_configuration_asked_for(void **state)
{
    fixture *f = *state;
    use_cache(f);
    use_fake_gpu(f);
    const char *text = REQUIRE TILED_KERNEL(
        "tiled") "local r = gb.bench(k, { shapes = { { n = 64000 } }, config = { B = 128 } })[1]\n"
                 "assert(r.best and r.best.config.B == 128, 'the configuration asked for')\n"
                 "assert(math.abs(r.best.ms - 0.128) < 1e-12, r.best.ms)\n"
                 "assert(#r.best.samples == 10 and r.best.mode == 'cold', 'samples kept')\n"
                 "local bad = gb.bench(k, { shapes = { { n = 64 } }, config = { B = 100 } })[1]\n"
                 "assert(not bad.best and bad.failure:find('not in the kernel', 1, true), "
                 "bad.failure)\n"
                 "local none = gb.bench(k, { shapes = { { n = 64 } }, config = 'best' })[1]\n"
                 "assert(not none.best and none.failure:find('tune it first', 1, true), "
                 "none.failure)\n"
                 "gb.tune(k, { shapes = { { n = 64 } } })\n"
                 "local best = gb.bench(k, { shapes = { { n = 64 } }, config = 'best' })[1]\n"
                 "assert(best.best and best.best.config.B == 64, 'the tuned best')\n";
    EXPECT_OK(f, run(f, text));
    assert_int_equal(f->gpu.n_trials, 1 + 3 + 1); /* nothing is resumed or cached by bench */
}

static void test_bench_refuses_a_configuration_the_constraints_drop(void **state)
{
    fixture *f = *state;
    use_fake_gpu(f);
    const char *text = REQUIRE TILED_KERNEL(
        "tiled") "k.constraints = { function(c) return c.B ~= 256 end }\n"
                 "local r = gb.bench(k, { shapes = { { n = 64 } }, config = { B = 256 } })[1]\n"
                 "assert(not r.best and r.failure:find('B=256 is rejected by the kernel', 1, "
                 "true), r.failure)\n";
    EXPECT_OK(f, run(f, text));
    assert_int_equal(f->gpu.n_trials, 0);
}

static void test_bench_options_are_checked(void **state)
{
    fixture *f = *state;
    const char *no_config =
        REQUIRE TILED_KERNEL("tiled") "gb.bench(k, { shapes = { { n = 1 } } }) --@\n";
    EXPECT_ERROR_AT(f, run(f, no_config), line_of(no_config, "--@"), "config must be");
    const char *unknown = REQUIRE TILED_KERNEL(
        "tiled") "gb.bench(k, { shapes = { { n = 1 } }, config = {}, mode = 1 }) --@\n";
    EXPECT_ERROR_AT(f, run(f, unknown), line_of(unknown, "--@"), "gb.bench: unknown option 'mode'");
    const char *no_ref =
        REQUIRE TILED_KERNEL("tiled") "gb.bench(k, { shapes = { { n = 1 } }, config = { B = 64 "
                                      "}, baseline = 'reference' }) --@\n";
    EXPECT_ERROR_AT(f, run(f, no_ref), line_of(no_ref, "--@"), "needs a kernel with a reference");
}

/* ---- the example --------------------------------------------------------- */

static void test_gemm_example_compiles(void **state)
{
    fixture *f = *state;
    char src[PATH_MAX - 32], path[PATH_MAX];
    source_dir(src, sizeof src);
    snprintf(path, sizeof path, "%s/examples/gemm.lua", src);
    use_cache(f);
    f->host.session.tuner.jobs = 2;
    gb_err_clear(&f->err);
    assert_int_equal(gb_lua_new(&f->host, &f->L, &f->err), GB_OK);
    int rc = gb_lua_run(f->L, path, 0, NULL, &f->err);
    if (rc) fail_msg("examples/gemm.lua failed (%d): %s", rc, f->err.msg);
    assert_int_equal(f->host.session.n_tuned, 1);
    assert_int_equal(f->host.session.n_shapes_failed, 0);
    const char *table = read_back(f, f->out);
    expect_text(table, "gemm_f32");
    expect_text(table, "BK=8,BM=64,BN=64,TM=4,TN=4");
    if (strstr(table, "error:")) fail_msg("a gemm variant failed to compile:\n%s", table);
}

/* bench/vs_kernel_tuner.sh tunes the example at one shape, without the
 * reference's timing, through the script's arguments. */
static void test_gemm_example_takes_its_shapes_from_the_script_arguments(void **state)
{
    fixture *f = *state;
    char src[PATH_MAX - 32], path[PATH_MAX];
    source_dir(src, sizeof src);
    snprintf(path, sizeof path, "%s/examples/gemm.lua", src);
    use_cache(f);
    f->host.session.tuner.jobs = 2;
    assert_int_equal(gb_lua_new(&f->host, &f->L, &f->err), GB_OK);
    char *ok_args[] = {"64x32x16", "nobaseline"};
    int rc = gb_lua_run(f->L, path, 2, ok_args, &f->err);
    if (rc) fail_msg("examples/gemm.lua -- 64x32x16 nobaseline failed (%d): %s", rc, f->err.msg);
    assert_int_equal(f->host.session.n_tuned, 1);
    char *bad_args[] = {"2048", "20x48"};
    gb_err_clear(&f->err);
    assert_int_not_equal(gb_lua_run(f->L, path, 2, bad_args, &f->err), GB_OK);
    expect_text(f->err.msg, "examples/gemm.lua:");
    expect_text(f->err.msg,
                "a script argument is a shape (N or MxNxK), nobaseline or cublas, got '20x48'");
}

/* What a gb.tune call measured reaches the outputs whole: the JSON of the run,
 * read back, has the device, the best, the baseline and every trial with its
 * samples. */
static void test_the_outputs_get_every_trial_with_its_samples_and_the_device(void **state)
{
    fixture *f = *state;
    use_fake_gpu(f);
    gb_output *mux = NULL, *json = NULL;
    gb_err err = {0};
    char path[256];
    snprintf(path, sizeof path, "%s/run.json", f->dir);
    assert_int_equal(gb_output_mux(&mux, &err), GB_OK);
    assert_int_equal(gb_output_mux_add(mux, f->host.session.output, &err), GB_OK); /* the table */
    assert_int_equal(gb_output_json(path, &json, &err), GB_OK);
    assert_int_equal(gb_output_mux_add(mux, json, &err), GB_OK);
    gb_session_begin_outputs(&f->host.session, mux, f->host.session.context, &err);
    const char *text = REQUIRE TILED_WITH_REFERENCE(
        "  math = 'bf16', bytes = function(s) return 8 * s.n end,\n") "gb.tune(k, { shapes = { { n "
                                                                      "= 64000 } }, baseline = "
                                                                      "'reference' })\n";
    EXPECT_OK(f, run(f, text));
    assert_int_equal(gb_session_end_outputs(&f->host.session, &err), GB_OK);
    gb_report r;
    if (gb_report_load_json(path, &r, &err) != GB_OK) fail_msg("%s", err.msg);
    assert_true(r.context.has_device);
    assert_string_equal(r.context.device.name, "Fake H100");
    assert_true(r.context.roofs.peak_tflops[GB_MATH_BF16] > 0);
    assert_int_equal(r.n_entries, 1);
    const gb_report_entry *e = &r.entries[0];
    assert_string_equal(e->kernel, "tiled");
    assert_int_equal(e->math, GB_MATH_BF16);
    assert_true(e->result->has_best && e->result->has_baseline);
    assert_int_equal(e->result->baseline.n_samples, 10);
    assert_int_equal(e->result->n_trials, 3);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(e->result->trials[i].status, GB_TRIAL_OK);
        assert_int_equal(e->result->trials[i].measurement.n_samples, 10);
    }
    gb_report_free(&r);
    expect_text(read_back(f, f->out), "tiled");
}

#define TEST(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_device_is_nil_without_a_driver),
        TEST(test_device_is_nil_when_compiling_only),
        TEST(test_device_describes_the_gpu),
        TEST(test_no_gpu_with_require_gpu_keeps_its_code),
        TEST(test_tune_compile_only_reports_every_shape),
        TEST(test_tune_without_a_driver_compiles_only),
        TEST(test_tune_counts_compile_errors),
        TEST(test_constraints_reject_configs),
        TEST(test_tune_accepts_a_sweep_of_shapes),
        TEST(test_key_field_missing_from_the_shape_is_a_script_error),
        TEST(test_declared_kernels_are_tuned_after_the_script),
        TEST(test_declared_kernels_are_not_tuned_after_gb_tune),
        TEST(test_declared_kernel_without_args_names_its_line),
        TEST(test_arg_holds_the_script_and_its_arguments),
        TEST(test_tune_with_a_gpu_picks_and_caches_the_best),
        TEST(test_cached_best_is_per_measurement_mode),
        TEST(test_the_outputs_get_every_trial_with_its_samples_and_the_device),
        TEST(test_bench_times_the_configuration_asked_for),
        TEST(test_bench_refuses_a_configuration_the_constraints_drop),
        TEST(test_bench_options_are_checked),
        TEST(test_gemm_example_compiles),
        TEST(test_gemm_example_takes_its_shapes_from_the_script_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
