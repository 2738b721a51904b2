/* The command-line tools as a user meets them: help, versions, exit statuses and
 * messages. The binaries come from GB_BINARY_DIR/cli (ctest sets it). Tests that
 * pin the no-GPU behaviour skip on a machine with a GPU driver. */
#include "scratch.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cache/cache.h"

#include <dlfcn.h>
#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

typedef struct run_result {
    int status;
    char out[1 << 16];
    char err[1 << 16];
} run_result;

typedef struct fixture {
    char dir[64];
    char cache[128];
    run_result r;
} fixture;

/* Runs bin/<tool> with the arguments (NULL-terminated) and captures its output;
 * with interrupt_after_ms > 0, sends it SIGINT that long after it starts. */
static void run_interrupted(fixture *f, int interrupt_after_ms, const char *tool, va_list ap);

static void run(fixture *f, const char *tool, ...)
{
    va_list ap;
    va_start(ap, tool);
    run_interrupted(f, 0, tool, ap);
    va_end(ap);
}

static void run_with_sigint(fixture *f, int after_ms, const char *tool, ...)
{
    va_list ap;
    va_start(ap, tool);
    run_interrupted(f, after_ms, tool, ap);
    va_end(ap);
}

static void run_interrupted(fixture *f, int interrupt_after_ms, const char *tool, va_list ap)
{
    char exe[4096], out_path[128], err_path[128];
    snprintf(exe, sizeof exe, "%s/cli/%s", getenv("GB_BINARY_DIR"), tool);
    snprintf(out_path, sizeof out_path, "%s/stdout", f->dir);
    snprintf(err_path, sizeof err_path, "%s/stderr", f->dir);
    char *argv[32] = {exe};
    int argc = 1;
    for (char *a; argc < 31 && (a = va_arg(ap, char *));)
        argv[argc++] = a;
    argv[argc] = NULL;
    f->r.status = scratch_spawn(argv, out_path, err_path, interrupt_after_ms);
    assert_true(f->r.status >= 0);
    scratch_read(out_path, f->r.out, sizeof f->r.out);
    scratch_read(err_path, f->r.err, sizeof f->r.err);
}

static void write_script(fixture *f, const char *name, const char *text)
{
    assert_int_equal(scratch_write(f->dir, name, text), 0);
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/gb-test-cli-XXXXXX");
    if (!mkdtemp(f->dir)) return -1;
    snprintf(f->cache, sizeof f->cache, "%s/cache", f->dir);
    assert_int_equal(chdir(f->dir), 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    scratch_remove(f->dir);
    free(f);
    return 0;
}

static bool have_driver(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib) dlclose(lib);
    return lib != NULL;
}

/* A kernel small enough to compile in a blink, with two variants. */
static const char TINY[] =
    "local gb = require 'gpubench'\n"
    "local k = gb.kernel { name = 'tiny', entry = 'scale<${S}>',\n"
    "  source = [[template <int S> __global__ void scale(float *x, int n)\n"
    "    { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= S; }]],\n"
    "  params = { S = {2, 3} },\n"
    "  args = function(s) return { gb.tensor('f32', {s.N}, 'randn'), gb.i32(s.N) } end,\n"
    "  grid = function(c, s) return gb.cdiv(s.N, 256) end, block = 256 }\n"
    "gb.tune(k, { shapes = { {N = 1024} } })\n";

static void test_gpubench_version_and_help(void **state)
{
    fixture *f = *state;
    run(f, "gpubench", "--version", NULL);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, "gpubench 0."));
    run(f, "gpubench", "--help", NULL);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, "tune SCRIPT"));
    assert_non_null(strstr(f->r.out, "cache ls"));
}

static void test_gpubench_tune_help_lists_the_options(void **state)
{
    fixture *f = *state;
    run(f, "gpubench-tune", "--help", NULL);
    assert_int_equal(f->r.status, 0);
    const char *options[] = {"--cache DIR", "--force",       "--compile-only",
                             "--arch",      "--require-gpu", "--lease-wait S"};
    for (size_t i = 0; i < sizeof options / sizeof *options; i++)
        assert_non_null(strstr(f->r.out, options[i]));
}

static void test_usage_errors_exit_with_2(void **state)
{
    fixture *f = *state;
    run(f, "gpubench-tune", NULL);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "no SCRIPT"));
    run(f, "gpubench-tune", "x.lua", "--no-such-option", NULL);
    assert_int_equal(f->r.status, 2);
    run(f, "gpubench", "frobnicate", NULL);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "unknown command 'frobnicate'"));
    run(f, "gpubench-tune", "--jobs", "many", "x.lua", NULL);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "--jobs"));
    run(f, "gpubench-tune", "--noise", "5", "x.lua", NULL);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "--noise is a fraction below 1"));
    run(f, "gpubench-tune", "--max-ms", "-1", "x.lua", NULL);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "--max-ms needs a number above 0"));
    run(f, "gpubench-tune", "--mode", "warm", "x.lua", NULL);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "--mode"));
    run(f, "gpubench-tune", "--lease-wait", "soon", "x.lua", NULL);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "--lease-wait needs seconds from 0 to 1e6 or 'forever'"));
    run(f, "gpubench-tune", "--lease-wait", "-5", "x.lua", NULL);
    assert_int_equal(f->r.status, 2);
}

/* The one line an option the command does not have gets, exit status 2. */
static void expect_option_line(fixture *f, const char *line)
{
    assert_int_equal(f->r.status, 2);
    if (strcmp(f->r.err, line) != 0) fail_msg("expected exactly\n%s\ngot\n%s", line, f->r.err);
}

/* An unknown option is one line in every command: the nearest option within two
 * edits, or the options an ambiguous prefix could mean, or what is wrong with a
 * known one, and where the options are listed; not getopt's words and the whole
 * usage after them. */
static void test_an_unknown_option_is_one_line_with_the_nearest(void **state)
{
    fixture *f = *state;
    run(f, "gpubench-tune", "x.lua", "--max_ms", "5", NULL);
    expect_option_line(f, "gpubench-tune: unknown option '--max_ms' (did you mean '--max-ms'?) "
                          "(see `gpubench-tune --help`)\n");
    run(f, "gpubench-tune", "x.lua", "--c", NULL);
    expect_option_line(f, "gpubench-tune: option '--c' is ambiguous: --cache, --compile-only, "
                          "--csv, --csv-format (see `gpubench-tune --help`)\n");
    run(f, "gpubench-tune", "x.lua", "--cache", NULL);
    expect_option_line(f, "gpubench-tune: option '--cache' needs a value "
                          "(see `gpubench-tune --help`)\n");
    run(f, "gpubench-tune", "-x", "x.lua", NULL);
    expect_option_line(f, "gpubench-tune: unknown option '-x' (see `gpubench-tune --help`)\n");
    run(f, "gpubench", "tune", "--quiett", "x.lua", NULL);
    expect_option_line(f, "gpubench tune: unknown option '--quiett' (did you mean '--quiet'?) "
                          "(see `gpubench tune --help`)\n");
    run(f, "gpubench", "replay", "--stratgy", "random", "t.json", NULL);
    expect_option_line(f, "gpubench replay: unknown option '--stratgy' (did you mean "
                          "'--strategy'?) (see `gpubench replay --help`)\n");
    run(f, "gpubench", "cache", "ls", "--jsn", NULL);
    expect_option_line(f, "gpubench cache: unknown option '--jsn' (did you mean '--json'?) "
                          "(see `gpubench cache --help`)\n");
    run(f, "gpubench", "info", "--json=yes", NULL);
    expect_option_line(f, "gpubench info: option '--json' takes no value "
                          "(see `gpubench info --help`)\n");
    run(f, "gpubench", "compare", "--nothing-like-it", "a.json", "b.json", NULL);
    expect_option_line(f, "gpubench compare: unknown option '--nothing-like-it' "
                          "(see `gpubench compare --help`)\n");
    const char *const others[] = {"export", "repro", "report"};
    for (size_t i = 0; i < 3; i++) {
        run(f, "gpubench", others[i], "--helpp", NULL);
        char line[256];
        snprintf(line, sizeof line,
                 "gpubench %s: unknown option '--helpp' (did you mean '--help'?) "
                 "(see `gpubench %s --help`)\n",
                 others[i], others[i]);
        expect_option_line(f, line);
    }
}

/* A script that tunes nothing says so (exit 0: it may only have asked gb.device);
 * one that tunes does not. */
static void test_a_script_that_tunes_nothing_says_so(void **state)
{
    fixture *f = *state;
    write_script(f, "empty.lua", "");
    run(f, "gpubench-tune", "empty.lua", "--cache", f->cache, NULL);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.err, "gpubench-tune: empty.lua called no gb.tune, gb.bench or "
                                     "gb.collective: nothing was tuned or timed"));
    write_script(f, "tiny.lua", TINY);
    run(f, "gpubench-tune", "tiny.lua", "--compile-only", "--cache", f->cache, NULL);
    assert_int_equal(f->r.status, 0);
    assert_null(strstr(f->r.err, "called no gb.tune"));
}

static void test_a_script_error_exits_with_2_and_names_the_line(void **state)
{
    fixture *f = *state;
    write_script(f, "bad.lua",
                 "local gb = require 'gpubench'\n\nlocal k = gb.kernel { nme = 'x' }\n");
    run(f, "gpubench-tune", "bad.lua", "--cache", f->cache, NULL);
    assert_int_equal(f->r.status, 2);
    assert_non_null(
        strstr(f->r.err, "bad.lua:3: gb.kernel: unknown field 'nme' (did you mean 'name'?)"));
    run(f, "gpubench-tune", "missing.lua", "--cache", f->cache, NULL);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "missing.lua"));
}

static void test_without_a_gpu_every_variant_is_compiled_and_the_run_succeeds(void **state)
{
    fixture *f = *state;
    if (have_driver()) skip();
    write_script(f, "tiny.lua", TINY);
    run(f, "gpubench-tune", "tiny.lua", "--cache", f->cache, NULL);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.err, "timing needs a GPU"));
    assert_non_null(strstr(f->r.out, "S=2"));
    assert_non_null(strstr(f->r.out, "S=3"));
    assert_non_null(strstr(f->r.out, "regs"));
}

static bool file_exists(const fixture *f, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", f->dir, name);
    return access(path, R_OK) == 0;
}

/* --out writes every format into one folder, and `gpubench report` renders the
 * saved run again (the table, and a file it is asked for). */
static void test_out_writes_every_format_and_report_renders_the_run_again(void **state)
{
    fixture *f = *state;
    write_script(f, "tiny.lua", TINY);
    run(f, "gpubench-tune", "tiny.lua", "--no-cache", "--compile-only", "-q", "--out",
        "results/run1", NULL);
    assert_int_equal(f->r.status, 0);
    assert_true(file_exists(f, "results/run1/run.txt"));
    assert_true(file_exists(f, "results/run1/run.json"));
    assert_true(file_exists(f, "results/run1/run.csv"));
    assert_true(file_exists(f, "results/run1/run.html"));
    json_error_t error;
    json_t *doc = json_load_file("results/run1/run.json", 0, &error);
    assert_non_null(doc);
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(doc, "context"), "schema_version")), 2);
    assert_non_null(
        strstr(json_string_value(json_object_get(json_object_get(doc, "context"), "command_line")),
               "--out results/run1"));
    json_decref(doc);
    run(f, "gpubench", "report", "results/run1/run.json", NULL);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, "tiny"));
    assert_non_null(strstr(f->r.out, "S=2")); /* its compile table */
    run(f, "gpubench", "report", "results/run1/run.json", "--csv", "again.csv", NULL);
    assert_int_equal(f->r.status, 0);
    assert_string_equal(f->r.out, ""); /* a file was named: no table */
    assert_true(file_exists(f, "again.csv"));
}

static void test_report_options_name_what_is_wrong_and_exit_2(void **state)
{
    fixture *f = *state;
    write_script(f, "tiny.lua", TINY);
    write_script(f, "plain-file", "x");
    run(f, "gpubench-tune", "tiny.lua", "--no-cache", "--csv-format", "tsv", NULL);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "--csv-format is trials or cutlass, not 'tsv'"));
    /* a file that could not be written at the end is said before the run starts */
    run(f, "gpubench-tune", "tiny.lua", "--no-cache", "--json", "no-such-folder/run.json", NULL);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "--json no-such-folder/run.json: its folder no-such-folder: "
                                     "No such file or directory"));
    assert_null(strstr(f->r.out, "S=2")); /* nothing was compiled */
    run(f, "gpubench-tune", "tiny.lua", "--no-cache", "--out", "plain-file/sub", NULL);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "plain-file"));
    run(f, "gpubench", "report", "missing.json", NULL);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "missing.json"));
    write_script(f, "bad.json", "{\"context\": {\"schema_version\": 99}, \"benchmarks\": []}");
    run(f, "gpubench", "report", "bad.json", NULL);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "schema_version"));
    run(f, "gpubench", "report", NULL);
    assert_int_equal(f->r.status, 2);
}

/* gpubench info: the device and its peaks on a GPU; exit 3 and the reason without. */
static void test_info_describes_the_gpu_or_says_why_there_is_none(void **state)
{
    fixture *f = *state;
    run(f, "gpubench", "info", "--device", "x", NULL);
    assert_int_equal(f->r.status, 2);
    run(f, "gpubench", "info", "--json", NULL);
    if (!have_driver()) { /* the reason on stderr, and in the JSON asked for */
        assert_int_equal(f->r.status, 3);
        assert_non_null(strstr(f->r.err, "gpubench info: no CUDA driver"));
        json_error_t error;
        json_t *doc = json_loads(f->r.out, 0, &error);
        assert_non_null(doc);
        assert_true(json_is_null(json_object_get(doc, "device")));
        assert_non_null(strstr(json_string_value(json_object_get(doc, "error")), "no CUDA driver"));
        json_decref(doc);
        return;
    }
    assert_int_equal(f->r.status, 0);
    json_error_t error;
    json_t *doc = json_loads(f->r.out, 0, &error);
    assert_non_null(doc);
    assert_true(json_integer_value(json_object_get(json_object_get(doc, "device"), "sms")) > 0);
    assert_true(json_number_value(json_object_get(json_object_get(doc, "roofs"), "peak_gbps")) > 0);
    json_decref(doc);
    run(f, "gpubench", "info", NULL);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, "compute capability"));
    assert_non_null(strstr(f->r.out, "memory bandwidth"));
}

static void test_require_gpu_exits_with_3_without_a_gpu(void **state)
{
    fixture *f = *state;
    if (have_driver()) skip();
    write_script(f, "tiny.lua", TINY);
    run(f, "gpubench-tune", "tiny.lua", "--require-gpu", "--cache", f->cache, NULL);
    assert_int_equal(f->r.status, 3);
    assert_non_null(strstr(f->r.err, "libcuda.so.1"));
    run(f, "gpubench-tune", "tiny.lua", "--lease-wait", "forever", "--cache", f->cache, NULL);
    assert_int_equal(f->r.status, 0); /* compiling only: no lease, no wait */
}

static void test_compile_only_reports_compile_errors_without_failing_the_run(void **state)
{
    fixture *f = *state;
    write_script(
        f, "err.lua",
        "local gb = require 'gpubench'\n"
        "local k = gb.kernel { name = 'e', entry = 'k<${V}>', params = { V = {1, 2} },\n"
        "  source = 'template <int V> __global__ void k(float *x)\\n"
        "{ static_assert(V == 1, \"V must be 1\"); }',\n"
        "  args = function(s) return { gb.tensor('f32', {4}) } end, grid = 1, block = 1 }\n"
        "gb.tune(k, { shapes = { {N = 1} } })\n");
    run(f, "gpubench-tune", "err.lua", "--compile-only", "--cache", f->cache, NULL);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, "error 1 (1 configuration): e.cu:2: error"));
    assert_non_null(strstr(f->r.out, "V must be 1"));
}

static void test_cache_ls_and_path(void **state)
{
    fixture *f = *state;
    run(f, "gpubench", "cache", "path", "--cache", f->cache, NULL);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, f->cache));
    run(f, "gpubench", "cache", "ls", "--cache", f->cache, NULL);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, "no cache here yet"));
    assert_int_equal(access(f->cache, F_OK), -1); /* looking creates nothing */
    write_script(f, "tiny.lua", TINY);
    run(f, "gpubench-tune", "tiny.lua", "--compile-only", "--cache", f->cache, NULL);
    run(f, "gpubench", "cache", "ls", "--cache", f->cache, NULL);
    assert_int_equal(f->r.status, 0);
    /* Compiling only stores cubins: ls says so rather than just "nothing tuned". */
    assert_non_null(
        strstr(f->r.out, "0 tuned shape(s), 0 stale; 0 trial(s); 2 compiled variant(s)"));
}

/* An export file as docs/cache.md describes it: two bests on two devices, a gemm
 * trial that passed and one that did not compile. Records are whole, as in the
 * cache: their statistics and check have every field. */
static const char EXPORT[] =
    "{\"format\":\"gpubench-cache-export\",\"version\":1,\"engine\":\"0.1.0\",\"schema\":1,"
    "\"exported\":1795300000,\n\"best\":[\n"
    "{\"kernel\":\"gemm\",\"kernel_fp\":\"0b74386f143d60936c49694fb8c0a7f6\","
    "\"device\":\"NVIDIA H200/sm_90/132\",\"shape\":{\"K\":1024,\"M\":1024,\"N\":1024},"
    "\"space_fp\":\"67f8717bbe373b1a4835acf980318b8f\",\"config\":{\"BK\":32,\"BM\":64},"
    "\"stats\":{\"n\":3,\"min_ms\":0.09,\"max_ms\":0.092,\"mean_ms\":0.091,\"stddev_ms\":0.001,"
    "\"median_ms\":0.091,\"q1_ms\":0.0905,\"q3_ms\":0.0915,\"ci_lo_ms\":0.09,\"ci_hi_ms\":0.092},"
    "\"mode\":\"cold\",\"clock_mhz\":1980,\"n_throttled\":0,\"capped\":false,"
    "\"samples_ms\":[0.09,0.091,0.092],\"tie\":[],\"n_leaders\":2,\"flops\":2147483648,"
    "\"bytes\":12582912,\"baseline\":null,\"complete\":true,\"n_configs\":4,\"n_rejected\":0,"
    "\"n_timed\":4,\"n_failed\":1,\"when\":1795300000,\"engine\":\"\",\"nvrtc\":\"\",\"driver\":0,"
    "\"sources\":[]},\n"
    "{\"kernel\":\"scale\",\"kernel_fp\":\"d28ba93103b67ceed123e2472417c395\","
    "\"device\":\"NVIDIA H100 80GB HBM3/sm_90/132\",\"shape\":{\"n\":4096},\"space_fp\":\"\","
    "\"config\":{\"B\":256},\"stats\":{\"n\":1,\"min_ms\":0.01,\"max_ms\":0.01,"
    "\"mean_ms\":0.01,\"stddev_ms\":0,\"median_ms\":0.01,\"q1_ms\":0.01,\"q3_ms\":0.01,"
    "\"ci_lo_ms\":0.01,\"ci_hi_ms\":0.01},\"mode\":\"cold\","
    "\"complete\":true,\"n_timed\":1,\"when\":1795300000}\n],\n\"trials\":[\n"
    "{\"kernel\":\"gemm\",\"kernel_fp\":\"0b74386f143d60936c49694fb8c0a7f6\","
    "\"device\":\"NVIDIA H200/sm_90/132\",\"shape\":{\"K\":1024,\"M\":1024,\"N\":1024},"
    "\"config\":{\"BK\":32,\"BM\":64},\"status\":\"ok\",\"in_flight\":false,\"reason\":\"\","
    "\"check\":{\"checked\":true,\"n_bad\":0,\"n_compared\":1048576,\"max_abs_err\":0,"
    "\"max_rel_err\":0},\"stats\":{\"n\":1,\"min_ms\":0.093,\"max_ms\":0.093,"
    "\"mean_ms\":0.093,\"stddev_ms\":0,\"median_ms\":0.093,\"q1_ms\":0.093,\"q3_ms\":0.093,"
    "\"ci_lo_ms\":0.093,\"ci_hi_ms\":0.093},\"mode\":\"cold\",\"samples_ms\":[0.093],"
    "\"registers\":40,\"when\":1795300000},\n"
    "{\"kernel\":\"gemm\",\"kernel_fp\":\"0b74386f143d60936c49694fb8c0a7f6\","
    "\"device\":\"NVIDIA H200/sm_90/132\",\"shape\":{\"K\":1024,\"M\":1024,\"N\":1024},"
    "\"config\":{\"BK\":8,\"BM\":64},\"status\":\"compile_error\",\"in_flight\":false,"
    "\"reason\":\"e.cu:2: error: too many resources\",\"check\":{\"checked\":false,"
    "\"n_bad\":0,\"n_compared\":0,\"max_abs_err\":null,\"max_rel_err\":null},"
    "\"stats\":null,\"registers\":-1,"
    "\"when\":1795300000}\n]}\n";

static json_t *run_json(fixture *f)
{
    json_error_t jerr;
    json_t *json = json_loads(f->r.out, 0, &jerr);
    if (!json) fail_msg("not JSON (%s): %s", jerr.text, f->r.out);
    return json;
}

static void test_cache_help_lists_every_command_and_what_stale_means(void **state)
{
    fixture *f = *state;
    run(f, "gpubench", "cache", "--help", NULL);
    assert_int_equal(f->r.status, 0);
    const char *words[] = {"ls [--kernel K] [--device D] [--all | --stale]",
                           "show KERNEL [SHAPE]",
                           "rm [--kernel K]",
                           "save FILE",
                           "(or: export)",
                           "load FILE [--cubins]",
                           "(or: import)",
                           "load --from kernel-tuner FILE --kernel NAME --shape SHAPE",
                           "merge DIR",
                           "verify",
                           "gc [--unnamed] [--compact] [--dry-run]",
                           "path",
                           "--json",
                           "no cache here yet",
                           "stale when",
                           "source, as\nrecorded when it was tuned, now has other content",
                           "exit status"};
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        if (!strstr(f->r.out, words[i])) fail_msg("--help lacks '%s'", words[i]);
}

static void test_cache_commands_that_look_create_nothing(void **state)
{
    fixture *f = *state;
    const char *looks[][3] = {
        {"ls", NULL}, {"verify", NULL}, {"gc", NULL}, {"rm", "--stale"}, {"show", "gemm"}};
    for (size_t i = 0; i < sizeof looks / sizeof *looks; i++) {
        run(f, "gpubench", "cache", looks[i][0], "--cache", f->cache, looks[i][1], NULL);
        assert_int_equal(f->r.status, strcmp(looks[i][0], "show") ? 0 : 1);
        assert_non_null(strstr(f->r.out, strcmp(looks[i][0], "show")
                                             ? "no cache here yet"
                                             : "no results for kernel gemm"));
        assert_int_equal(access(f->cache, F_OK), -1);
    }
    run(f, "gpubench", "cache", "ls", "--cache", f->cache, "--json", NULL);
    json_t *json = run_json(f);
    assert_true(json_is_false(json_object_get(json, "exists")));
    json_decref(json);
    run(f, "gpubench", "cache", "export", "out.json", "--cache", f->cache, NULL);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "no cache here yet"));
}

static void test_cache_import_then_ls_filters_and_json(void **state)
{
    fixture *f = *state;
    write_script(f, "export.json", EXPORT);
    run(f, "gpubench", "cache", "import", "export.json", "--cache", f->cache, NULL);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, "best    2 new, 0 replaced, 0 kept, 0 skipped"));
    assert_non_null(strstr(f->r.out, "trials  2 new, 0 replaced, 0 kept, 0 skipped"));
    run(f, "gpubench", "cache", "ls", "--cache", f->cache, NULL);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, "2 tuned shape(s), 0 stale; 2 trial(s)"));
    assert_non_null(strstr(f->r.out, "trials: 1 ok, 1 compile_error"));
    assert_non_null(strstr(f->r.out, "K=1024,M=1024,N=1024  BK=32,BM=64"));
    assert_non_null(strstr(f->r.out, "scale"));
    run(f, "gpubench", "cache", "ls", "--kernel", "gemm", "--cache", f->cache, NULL);
    assert_non_null(strstr(f->r.out, "gemm"));
    assert_null(strstr(f->r.out, "scale"));
    run(f, "gpubench", "cache", "ls", "--device", "NVIDIA H100 80GB HBM3/sm_90/132", "--cache",
        f->cache, "--json", NULL);
    assert_int_equal(f->r.status, 0);
    json_t *json = run_json(f), *best = json_object_get(json, "best");
    assert_int_equal(json_array_size(best), 1);
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(json_array_get(best, 0), "record"), "kernel")),
                        "scale");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(json, "counts"), "tuned")),
                     1);
    json_decref(json);
    run(f, "gpubench", "cache", "show", "gemm", "K=1024,M=1024,N=1024", "--cache", f->cache, NULL);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, "best        BK=32,BM=64: median 0.091 ms"));
    assert_non_null(strstr(f->r.out, "trials      2: 1 ok, 1 compile_error"));
    assert_non_null(strstr(f->r.out, "e.cu:2: error: too many resources"));
    run(f, "gpubench", "cache", "show", "gemm", "K=1", "--cache", f->cache, NULL);
    assert_int_equal(f->r.status, 1);
}

/* save and load are export and import under their names since "export" means the
 * C header alone: the same commands. */
static void test_cache_save_and_load_are_export_and_import(void **state)
{
    fixture *f = *state;
    char other[160];
    snprintf(other, sizeof other, "%s/other", f->dir);
    write_script(f, "export.json", EXPORT);
    run(f, "gpubench", "cache", "load", "export.json", "--cache", f->cache, NULL);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, "best    2 new, 0 replaced, 0 kept, 0 skipped"));
    run(f, "gpubench", "cache", "save", "saved.json", "--cache", f->cache, NULL);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, "exported 2 best, 2 trial(s) and 0 cubin(s) to saved.json"));
    run(f, "gpubench", "cache", "import", "saved.json", "--cache", other, NULL);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, "best    2 new, 0 replaced, 0 kept, 0 skipped"));
    run(f, "gpubench", "cache", "save", "out.json", "--cache", f->cache, "--json", NULL);
    assert_int_equal(f->r.status, 2); /* save takes no --json, as export did not */
}

static void test_cache_export_and_import_round_trip_between_caches(void **state)
{
    fixture *f = *state;
    char other[160];
    snprintf(other, sizeof other, "%s/other", f->dir);
    write_script(f, "export.json", EXPORT);
    run(f, "gpubench", "cache", "import", "export.json", "--cache", f->cache, NULL);
    run(f, "gpubench", "cache", "export", "again.json", "--cache", f->cache, NULL);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, "exported 2 best, 2 trial(s) and 0 cubin(s) to again.json"));
    run(f, "gpubench", "cache", "import", "again.json", "--cache", other, NULL);
    assert_int_equal(f->r.status, 0);
    run(f, "gpubench", "cache", "ls", "--cache", f->cache, "--json", NULL);
    json_t *a = run_json(f);
    run(f, "gpubench", "cache", "ls", "--cache", other, "--json", NULL);
    json_t *b = run_json(f);
    assert_true(json_equal(json_object_get(a, "best"), json_object_get(b, "best")));
    json_decref(a);
    json_decref(b);
    run(f, "gpubench", "cache", "import", "again.json", "--cache", other, "--json", NULL);
    json_t *again = run_json(f);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(again, "best"), "kept")),
                     2);
    json_decref(again);
    run(f, "gpubench", "cache", "merge", other, "--cache", f->cache, NULL);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, "best    0 new, 0 replaced, 2 kept, 0 skipped"));
    run(f, "gpubench", "cache", "merge", f->cache, "--cache", f->cache, NULL);
    assert_int_equal(f->r.status, 2);
}

static void test_cache_import_skips_a_bad_record_by_index_and_exits_1(void **state)
{
    fixture *f = *state;
    write_script(f, "bad.json",
                 "{\"format\":\"gpubench-cache-export\",\"version\":1,\"best\":[{\"kernel\":"
                 "\"$(reboot)\",\"kernel_fp\":\"ab\",\"device\":\"d\",\"shape\":{},\"config\":{},"
                 "\"stats\":{\"n\":1,\"min_ms\":1,\"max_ms\":1,\"mean_ms\":1,\"stddev_ms\":0,"
                 "\"median_ms\":1,\"q1_ms\":1,\"q3_ms\":1,\"ci_lo_ms\":1,\"ci_hi_ms\":1}}]}");
    run(f, "gpubench", "cache", "import", "bad.json", "--cache", f->cache, NULL);
    assert_int_equal(f->r.status, 1);
    assert_non_null(strstr(f->r.err, "best[0]: kernel name is not"));
    assert_non_null(strstr(f->r.out, "best    0 new, 0 replaced, 0 kept, 1 skipped"));
    write_script(f, "newer.json", "{\"format\":\"gpubench-cache-export\",\"version\":7}");
    run(f, "gpubench", "cache", "import", "newer.json", "--cache", f->cache, NULL);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "newer.json: export format version 7 is newer"));
}

static void test_cache_verify_exits_1_when_a_record_sits_under_another_key(void **state)
{
    fixture *f = *state;
    write_script(f, "export.json", EXPORT);
    run(f, "gpubench", "cache", "import", "export.json", "--cache", f->cache, NULL);
    run(f, "gpubench", "cache", "verify", "--cache", f->cache, NULL);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, "checked 2 best, 2 trial and 0 cubin record(s): no problems"));
    gb_cache *cache = NULL;
    gb_err err;
    assert_int_equal(gb_cache_open(f->cache, 0, &cache, &err), GB_OK);
    const char *copy = strstr(EXPORT, "{\"kernel\":\"scale\""); /* its record, under a wrong key */
    gb_key wrong = gb_key_of_bytes("wrong", 5);
    assert_int_equal(gb_cache_put(cache, GB_DB_BEST, &wrong, copy, strcspn(copy, "\n"), &err),
                     GB_OK);
    gb_cache_close(cache);
    run(f, "gpubench", "cache", "verify", "--cache", f->cache, NULL);
    assert_int_equal(f->r.status, 1);
    assert_non_null(strstr(f->r.err, "its content belongs under key"));
    assert_non_null(strstr(f->r.out, "1 problem(s)"));
    run(f, "gpubench", "cache", "verify", "--cache", f->cache, "--json", NULL);
    assert_int_equal(f->r.status, 1);
    json_t *json = run_json(f);
    assert_int_equal(json_array_size(json_object_get(json, "problems")), 1);
    json_decref(json);
}

static void test_cache_import_from_kernel_tuner(void **state)
{
    fixture *f = *state;
    char data[4096];
    snprintf(data, sizeof data, "%s/tests/data/ktuner_small.json", getenv("GB_SOURCE_DIR"));
    run(f, "gpubench", "cache", "import", "--from", "kernel-tuner", data, "--kernel", "vector_add",
        "--cache", f->cache, NULL);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "needs --kernel NAME and --shape SHAPE"));
    run(f, "gpubench", "cache", "import", "--from", "kernel-tuner", data, "--kernel", "vector_add",
        "--shape", "n=100", "--cache", f->cache, NULL);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, "device NVIDIA RTX A4000, fingerprint kernel-tuner-"));
    assert_non_null(strstr(f->r.out, "entries 15: 15 timed, 0 failed, 0 skipped"));
    assert_non_null(strstr(f->r.out, "fastest block_size_x=768 at 0.031758 ms"));
    run(f, "gpubench", "cache", "show", "vector_add", "--cache", f->cache, NULL);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, "best        block_size_x=768"));
    assert_non_null(strstr(f->r.out, "trials      15: 15 ok"));
    assert_non_null(strstr(f->r.out, "(5 more ok trials; --json lists them all)"));
}

static void test_cache_rm_and_gc(void **state)
{
    fixture *f = *state;
    write_script(f, "tiny.lua", TINY);
    run(f, "gpubench-tune", "tiny.lua", "--compile-only", "--cache", f->cache, NULL);
    write_script(f, "export.json", EXPORT);
    run(f, "gpubench", "cache", "import", "export.json", "--cache", f->cache, NULL);
    run(f, "gpubench", "cache", "rm", "--cache", f->cache, NULL);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "say what to remove"));
    run(f, "gpubench", "cache", "rm", "--kernel", "gemm", "--dry-run", "--cache", f->cache, NULL);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, "would remove 1 best record(s) and 2 trial(s)"));
    run(f, "gpubench", "cache", "rm", "--kernel", "gemm", "--cache", f->cache, NULL);
    assert_non_null(strstr(f->r.out, "removed 1 best record(s) and 2 trial(s)"));
    run(f, "gpubench", "cache", "ls", "--cache", f->cache, NULL);
    assert_non_null(strstr(f->r.out, "1 tuned shape(s), 0 stale; 0 trial(s); 2 compiled"));
    /* a compile-only run's cubins stay for a GPU to time, unless asked */
    run(f, "gpubench", "cache", "gc", "--cache", f->cache, NULL);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, "removed 0 of 2 cubin(s)"));
    assert_non_null(strstr(f->r.out, "kept 2 cubin(s) that no trial names"));
    run(f, "gpubench", "cache", "gc", "--unnamed", "--cache", f->cache, NULL);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, "removed 2 of 2 cubin(s)"));
    assert_non_null(strstr(f->r.out, "2 named by no trial"));
    run(f, "gpubench", "cache", "gc", "--compact", "--cache", f->cache, NULL);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, "compacted data.mdb from"));
    run(f, "gpubench", "cache", "ls", "--cache", f->cache, NULL);
    assert_non_null(strstr(f->r.out, "1 tuned shape(s), 0 stale; 0 trial(s); 0 compiled"));
}

static void test_cache_usage_errors_exit_with_2(void **state)
{
    fixture *f = *state;
    const char *cases[][4] = {
        {"ls", "--cubins", NULL},
        {"show", NULL},
        {"ls", "--all", "--stale"},
        {"import", "x.json", "--kernel", "k"},
        {"import", "--from", "kt", "x.json"},
        {"frobnicate", NULL},
        {"rm", "--shape", "K"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        run(f, "gpubench", "cache", cases[i][0], cases[i][1], cases[i][2], cases[i][3], NULL);
        if (f->r.status != 2) fail_msg("case %zu exited %d: %s", i, f->r.status, f->r.err);
        assert_non_null(strstr(f->r.err, "gpubench cache"));
    }
    /* a missing argument is named, with what the command takes */
    run(f, "gpubench", "cache", "show", NULL);
    assert_non_null(
        strstr(f->r.err, "gpubench cache show: missing argument KERNEL (it takes KERNEL [SHAPE])"));
    run(f, "gpubench", "cache", "merge", NULL);
    assert_non_null(strstr(f->r.err, "gpubench cache merge: missing argument DIR (it takes DIR)"));
    /* a file for --cache: one sentence, whether the command reads or writes */
    write_script(f, "afile", "");
    const char *const commands[] = {"ls", "verify", "gc"};
    for (size_t i = 0; i < 3; i++) {
        run(f, "gpubench", "cache", commands[i], "--cache", "afile", NULL);
        assert_int_equal(f->r.status, 2);
        assert_non_null(strstr(f->r.err, "cache afile: not a directory; pass --cache DIR"));
    }
}

static void test_a_corrupt_cache_is_named_and_exits_with_2(void **state)
{
    fixture *f = *state;
    mkdir(f->cache, 0755);
    write_script(f, "cache/data.mdb",
                 "this is not an LMDB file, not at all, and it is long enough\n");
    run(f, "gpubench", "cache", "ls", "--cache", f->cache, NULL);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, f->cache));
    write_script(f, "tiny.lua", TINY);
    run(f, "gpubench-tune", "tiny.lua", "--cache", f->cache, NULL);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "--cache DIR"));
}

static void test_script_arguments_reach_arg(void **state)
{
    fixture *f = *state;
    write_script(f, "args.lua",
                 "assert(arg[1] == 'one' and arg[2] == '--two', 'args')\n"
                 "print('script saw ' .. #arg)\n");
    run(f, "gpubench-tune", "args.lua", "--no-cache", "--", "one", "--two", NULL);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, "script saw 2"));
}

static void test_ctrl_c_stops_a_script_with_status_130(void **state)
{
    fixture *f = *state;
    write_script(f, "spin.lua", "local n = 0\nwhile true do n = n + 1 end\n");
    run_with_sigint(f, 500, "gpubench-tune", "spin.lua", "--no-cache", NULL);
    assert_int_equal(f->r.status, 130);
    assert_non_null(strstr(f->r.err, "interrupted"));
}

/* ---- gpubench replay -------------------------------------------------------- */

static const char *replay_data(const char *name)
{
    static char path[2][4096];
    static int which;
    which ^= 1;
    snprintf(path[which], sizeof path[which], "%s/tests/data/%s", getenv("GB_SOURCE_DIR"), name);
    return path[which];
}

/* The last line of the output, without its newline. */
static const char *last_line(const char *out, char *buf, size_t n)
{
    size_t len = strlen(out);
    while (len && out[len - 1] == '\n')
        len--;
    size_t start = len;
    while (start && out[start - 1] != '\n')
        start--;
    snprintf(buf, n, "%.*s", (int)(len - start), out + start);
    return buf;
}

static void test_replay_prints_the_table_and_ends_with_the_best(void **state)
{
    fixture *f = *state;
    char line[512];
    run(f, "gpubench", "--help", NULL);
    assert_non_null(strstr(f->r.out, "replay FILE [options]"));
    run(f, "gpubench", "replay", replay_data("replay_kt.json"), "--strategy", "exhaustive",
        "--seeds", "5", "--within", "0", NULL);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, "216 configurations of a space of 240: 202 timed, 14 failed "
                                     "(7 compile_error, 7 launch_error)"));
    assert_non_null(strstr(f->r.out, "optimum  0.191243 ms: block_size_x=64,block_size_y=4,"
                                     "layout=\"row\",tile=4,use_shmem=1"));
    assert_non_null(strstr(f->r.out, "target   within 0% (at most 0.191243 ms): 1 configurations"));
    /* exhaustive meets the optimum at its place among the valid configurations */
    assert_string_equal(last_line(f->r.out, line, sizeof line),
                        "replay: strategy=exhaustive seeds=5 within=0% median_evals=120 "
                        "p90_evals=120 reached=1.00");
}

/* Every strategy, both formats of the same table: the same figures. */
static void test_replay_of_an_export_and_a_kernel_tuner_file_agree(void **state)
{
    fixture *f = *state;
    char kt[512], ex[512];
    run(f, "gpubench", "replay", replay_data("replay_kt.json"), "--seeds", "7", "--within", "10",
        NULL);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, "\nexhaustive "));
    assert_non_null(strstr(f->r.out, "\nrandom "));
    last_line(f->r.out, kt, sizeof kt);
    assert_int_equal(strncmp(kt, "replay: strategy=", 17), 0);
    assert_non_null(strstr(kt, " seeds=7 within=10% median_evals="));
    assert_non_null(strstr(kt, " p90_evals="));
    assert_non_null(strstr(kt, " reached="));
    run(f, "gpubench", "replay", replay_data("replay_export.json"), "--seeds", "7", "--within",
        "10", NULL);
    assert_int_equal(f->r.status, 0);
    assert_string_equal(last_line(f->r.out, ex, sizeof ex), kt);
    run(f, "gpubench", "replay", replay_data("replay_export.json"), "--seeds", "7", "--json", NULL);
    assert_int_equal(f->r.status, 0);
    json_error_t jerr;
    json_t *doc = json_loads(f->r.out, 0, &jerr);
    assert_non_null(doc);
    assert_string_equal(json_string_value(json_object_get(doc, "format")), "export");
    assert_int_equal(json_integer_value(json_object_get(doc, "entries")), 216);
    assert_true(json_array_size(json_object_get(doc, "strategies")) >= 2);
    assert_non_null(json_string_value(json_object_get(doc, "best")));
    json_decref(doc);
}

/* The cache gets the Kernel Tuner table of tests/data/ktuner_small.json: 15
 * configurations of vector_add at n=100 on an RTX A4000. */
static void import_vector_add(fixture *f)
{
    run(f, "gpubench", "cache", "import", "--from", "kernel-tuner",
        replay_data("ktuner_small.json"), "--kernel", "vector_add", "--shape", "n=100", "--cache",
        f->cache, NULL);
    assert_int_equal(f->r.status, 0);
}

/* `cache show KERNEL SHAPE --json` is a trials file replay reads. */
static void test_replay_reads_what_cache_show_json_prints(void **state)
{
    fixture *f = *state;
    import_vector_add(f);
    run(f, "gpubench", "cache", "show", "vector_add", "n=100", "--json", "--cache", f->cache, NULL);
    assert_int_equal(f->r.status, 0);
    write_script(f, "trials.json", f->r.out);
    run(f, "gpubench", "replay", "trials.json", "--seeds", "3", NULL);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, "replay trials.json: kernel vector_add, shape n=100, device "
                                     "NVIDIA RTX A4000"));
    assert_non_null(strstr(f->r.out, "15 configurations of a space of 15: 15 timed, 0 failed"));
}

/* --cached replays the cache's own trials, the same table as the file `cache show
 * --json` writes, through a session with --seed as its seed. */
static void test_replay_cached_reads_the_cache_and_agrees_with_its_file(void **state)
{
    fixture *f = *state;
    import_vector_add(f);
    run(f, "gpubench", "cache", "show", "vector_add", "--json", "--cache", f->cache, NULL);
    write_script(f, "trials.json", f->r.out);
    run(f, "gpubench", "replay", "trials.json", "--seeds", "4", "--seed", "9", NULL);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, "4 seeds from 9 per strategy"));
    char from_file[256];
    const char *last = strstr(f->r.out, "\nreplay: ");
    assert_non_null(last);
    snprintf(from_file, sizeof from_file, "%s", last);
    run(f, "gpubench", "replay", "--cached", "--kernel", "vector_add", "--cache", f->cache,
        "--seeds", "4", "--seed", "9", NULL);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, ": kernel vector_add, shape n=100, device NVIDIA RTX A4000"));
    assert_non_null(strstr(f->r.out, "15 configurations of a space of 15: 15 timed, 0 failed"));
    assert_non_null(strstr(f->r.out, from_file)); /* the same searches, the same counts */
    run(f, "gpubench", "replay", "--cached", "--kernel", "vector_add", "--cache", f->cache,
        "--json", "--strategy", "random", NULL);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, "\"format\": \"cache\""));
    assert_non_null(strstr(f->r.out, "\"first_seed\": 1"));
    /* what is missing or contradictory is said */
    run(f, "gpubench", "replay", "--cached", "--kernel", "nothing", "--cache", f->cache, NULL);
    assert_int_equal(f->r.status, 1);
    assert_non_null(strstr(f->r.err, "holds no trials of kernel nothing"));
    run(f, "gpubench", "replay", "--cached", "--kernel", "vector_add", "--cache", "no-cache", NULL);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "no-cache: mdb_env_open: No such file or directory"));
    run(f, "gpubench", "replay", "--cached", "--cache", f->cache, NULL);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "--cached needs --kernel"));
    run(f, "gpubench", "replay", "trials.json", "--cached", "--kernel", "vector_add", NULL);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "--cached reads the cache, not a FILE: trials.json"));
    run(f, "gpubench", "replay", "trials.json", "--cache", f->cache, NULL);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "--cache needs --cached"));
    run(f, "gpubench", "replay", "trials.json", "--seed", "0", NULL);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "--seed needs a whole number of 1 or more"));
}

/* Copies the fixture's file `from` to `to`, gzipped. */
static void gzip_copy(const fixture *f, const char *from, const char *to)
{
    char in[512], out[512];
    snprintf(in, sizeof in, "%s/%s", f->dir, from);
    snprintf(out, sizeof out, "%s/%s", f->dir, to);
    static char text[1 << 20];
    scratch_read(in, text, sizeof text);
    gzFile gz = gzopen(out, "wb");
    assert_non_null(gz);
    assert_int_equal(gzwrite(gz, text, (unsigned)strlen(text)), (int)strlen(text));
    assert_int_equal(gzclose(gz), Z_OK);
}

/* Every command that reads a JSON file reads it gzipped as well: the shipped
 * tables (bench/tables/, .json.gz) replay and import, a saved run renders and
 * compares; a damaged one is a file that cannot be read (exit 2). */
static void test_every_json_reader_takes_it_gzipped(void **state)
{
    fixture *f = *state;
    char table[4096];
    snprintf(table, sizeof table, "%s/bench/tables/sgemm_space.json.gz", getenv("GB_SOURCE_DIR"));
    run(f, "gpubench", "replay", table, "--strategy", "random", "--seeds", "2", NULL);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, "replay: strategy=random seeds=2"));
    run(f, "gpubench", "cache", "import", table, "--cache", f->cache, NULL);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, "12208 new"));

    write_script(f, "tiny.lua", TINY);
    run(f, "gpubench-tune", "tiny.lua", "--no-cache", "--compile-only", "-q", "--json", "run.json",
        NULL);
    assert_int_equal(f->r.status, 0);
    gzip_copy(f, "run.json", "run.json.gz");
    run(f, "gpubench", "report", "run.json", NULL);
    assert_int_equal(f->r.status, 0);
    static char plain[1 << 16];
    snprintf(plain, sizeof plain, "%s", f->r.out);
    run(f, "gpubench", "report", "run.json.gz", NULL);
    assert_int_equal(f->r.status, 0);
    assert_string_equal(f->r.out, plain);
    run(f, "gpubench", "compare", "run.json.gz", "run.json", NULL);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, "compare: 1 pairs"));

    write_script(f, "cut.json.gz", "\x1f\x8b\x08");
    run(f, "gpubench", "replay", "cut.json.gz", NULL);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "cut.json.gz: a damaged gzip stream"));
}

static void test_replay_usage_errors_and_unreadable_files_exit_2_bad_tables_1(void **state)
{
    fixture *f = *state;
    const char *kt = replay_data("replay_kt.json");
    run(f, "gpubench", "replay", "--help", NULL);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, "--strategy S|all"));
    run(f, "gpubench", "replay", kt, "--strategy", "nope", NULL);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "unknown strategy 'nope': the strategies are exhaustive, "
                                     "random"));
    run(f, "gpubench", "replay", kt, "--within", "-1", NULL);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "--within needs a percentage"));
    run(f, "gpubench", "replay", kt, "--seeds", "0", NULL);
    assert_int_equal(f->r.status, 2);
    run(f, "gpubench", "replay", NULL);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "no FILE given"));
    run(f, "gpubench", "replay", "missing.json", NULL);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "gpubench replay: missing.json: No such file or directory"));
    write_script(f, "other.json", "{\"hello\": 1}");
    run(f, "gpubench", "replay", "other.json", NULL);
    assert_int_equal(f->r.status, 1);
    assert_non_null(strstr(f->r.err, "other.json: not a table replay reads"));
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_gpubench_version_and_help),
        T(test_gpubench_tune_help_lists_the_options),
        T(test_usage_errors_exit_with_2),
        T(test_an_unknown_option_is_one_line_with_the_nearest),
        T(test_a_script_that_tunes_nothing_says_so),
        T(test_a_script_error_exits_with_2_and_names_the_line),
        T(test_without_a_gpu_every_variant_is_compiled_and_the_run_succeeds),
        T(test_out_writes_every_format_and_report_renders_the_run_again),
        T(test_report_options_name_what_is_wrong_and_exit_2),
        T(test_info_describes_the_gpu_or_says_why_there_is_none),
        T(test_require_gpu_exits_with_3_without_a_gpu),
        T(test_compile_only_reports_compile_errors_without_failing_the_run),
        T(test_cache_ls_and_path),
        T(test_cache_help_lists_every_command_and_what_stale_means),
        T(test_cache_commands_that_look_create_nothing),
        T(test_cache_import_then_ls_filters_and_json),
        T(test_cache_save_and_load_are_export_and_import),
        T(test_cache_export_and_import_round_trip_between_caches),
        T(test_cache_import_skips_a_bad_record_by_index_and_exits_1),
        T(test_cache_verify_exits_1_when_a_record_sits_under_another_key),
        T(test_cache_import_from_kernel_tuner),
        T(test_cache_rm_and_gc),
        T(test_cache_usage_errors_exit_with_2),
        T(test_a_corrupt_cache_is_named_and_exits_with_2),
        T(test_script_arguments_reach_arg),
        T(test_ctrl_c_stops_a_script_with_status_130),
        T(test_replay_prints_the_table_and_ends_with_the_best),
        T(test_replay_of_an_export_and_a_kernel_tuner_file_agree),
        T(test_replay_reads_what_cache_show_json_prints),
        T(test_replay_cached_reads_the_cache_and_agrees_with_its_file),
        T(test_replay_usage_errors_and_unreadable_files_exit_2_bad_tables_1),
        T(test_every_json_reader_takes_it_gzipped),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
