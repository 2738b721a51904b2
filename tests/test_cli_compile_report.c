/* The reports of a --compile-only run as a user meets them: every format says
 * what became of each shape in the same words, carries the compile table (the
 * JSON, the CSV and the HTML as the terminal shows it), and `gpubench report`
 * renders the saved run again byte for byte. Runs the real binaries from
 * GB_BINARY_DIR/cli; needs NVRTC, never a GPU. */
#include "scratch.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* tiny: S=2 and 3 compile, 4 is rejected; e: V=1 compiles, V=2 fails to compile. */
static const char TWO_KERNELS[] =
    "local gb = require 'gpubench'\n"
    "local tiny = gb.kernel { name = 'tiny', entry = 'scale<${S}>',\n"
    "  source = [[template <int S> __global__ void scale(float *x, int n)\n"
    "    { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= S; }]],\n"
    "  params = { S = {2, 3, 4} },\n"
    "  constraints = { function(c) return c.S ~= 4 end },\n"
    "  args = function(s) return { gb.tensor('f32', {s.N}, 'randn'), gb.i32(s.N) } end,\n"
    "  grid = function(c, s) return gb.cdiv(s.N, 256) end, block = 256 }\n"
    "gb.tune(tiny, { shapes = { {N = 1024}, {N = 4096} } })\n"
    "local e = gb.kernel { name = 'e', entry = 'k<${V}>', params = { V = {1, 2} },\n"
    "  source = 'template <int V> __global__ void k(float *x)\\n"
    "{ static_assert(V != 2, \"V must not be 2\"); x[0] = V; }',\n"
    "  args = function(s) return { gb.tensor('f32', {4}) } end, grid = 1, block = 1 }\n"
    "gb.tune(e, { shapes = { {N = 1} } })\n";

/* Constraints that leave nothing: the shape failed, for a reason of its own. */
static const char NONE_VALID[] =
    "local gb = require 'gpubench'\n"
    "local k = gb.kernel { name = 'none', entry = 'k<${S}>',\n"
    "  source = 'template <int S> __global__ void k(float *x) { x[0] = S; }',\n"
    "  params = { S = {1, 2, 3} }, constraints = { function(c) return c.S > 9 end },\n"
    "  args = function(s) return { gb.tensor('f32', {4}) } end, grid = 1, block = 1 }\n"
    "gb.tune(k, { shapes = { {N = 7} } })\n";

#define BIG (1 << 20)

static char *slurp(scratch_command *c, const char *name)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", c->dir, name);
    char *text = calloc(1, BIG);
    assert_non_null(text);
    scratch_read(path, text, BIG);
    return text;
}

static json_t *load(scratch_command *c, const char *name)
{
    char *text = slurp(c, name);
    json_error_t error;
    json_t *doc = json_loads(text, 0, &error);
    free(text);
    assert_non_null(doc);
    return doc;
}

static int tune(scratch_command *c, const char *script, const char *args)
{
    return scratch_command_run(c,
                               "NO_COLOR=1 %s/cli/gpubench-tune %s --compile-only --arch sm_90a "
                               "--no-cache -q %s",
                               getenv("GB_BINARY_DIR"), script, args);
}

static int report(scratch_command *c, const char *args)
{
    return scratch_command_run(c, "NO_COLOR=1 %s/cli/gpubench report %s", getenv("GB_BINARY_DIR"),
                               args);
}

static int setup(void **state)
{
    scratch_command *c = scratch_command_new("cli-compile-report");
    if (!c || scratch_write(c->dir, "two.lua", TWO_KERNELS) ||
        scratch_write(c->dir, "none.lua", NONE_VALID))
        return -1;
    *state = c;
    return 0;
}

static int teardown(void **state)
{
    scratch_command_free(*state);
    return 0;
}

static const char COMPILED[] = "compile-only: 2 variants compiled, 1 configuration rejected by "
                               "the constraints; nothing was timed";

/* Every best row of the JSON says "compiled" and why; the compile table is there,
 * a call per gb.tune, with each compile's resources and status. */
static void test_the_json_holds_the_status_and_the_compile_table(void **state)
{
    scratch_command *c = *state;
    assert_int_equal(tune(c, "two.lua", "--out rep"), 0);
    json_t *doc = load(c, "rep/run.json");
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(doc, "context"), "schema_version")), 2);
    json_t *best = json_array_get(json_object_get(doc, "benchmarks"), 0);
    assert_string_equal(json_string_value(json_object_get(best, "status")), "compiled");
    assert_string_equal(json_string_value(json_object_get(best, "reason")), COMPILED);
    assert_true(json_is_true(json_object_get(best, "compile_only")));

    json_t *compiles = json_object_get(doc, "compiles");
    assert_int_equal(json_array_size(compiles), 2);
    json_t *tiny = json_array_get(compiles, 0), *e = json_array_get(compiles, 1);
    assert_string_equal(json_string_value(json_object_get(tiny, "kernel")), "tiny");
    assert_string_equal(json_string_value(json_object_get(tiny, "arch")), "sm_90a");
    assert_int_equal(json_integer_value(json_object_get(tiny, "first_family")), 0);
    assert_int_equal(json_integer_value(json_object_get(tiny, "families")), 2);
    json_t *rows = json_object_get(tiny, "rows");
    assert_int_equal(json_array_size(rows), 2);
    json_t *row = json_array_get(rows, 0);
    assert_string_equal(json_string_value(json_object_get(row, "status")), "compiled");
    assert_true(json_integer_value(json_object_get(row, "registers")) > 0);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(row, "config"), "S")), 2);
    assert_true(json_real_value(json_object_get(row, "compile_ms")) > 0);

    assert_int_equal(json_integer_value(json_object_get(e, "first_family")), 2);
    row = json_array_get(json_object_get(e, "rows"), 1);
    assert_string_equal(json_string_value(json_object_get(row, "status")), "compile_error");
    assert_non_null(strstr(json_string_value(json_object_get(row, "reason")), "V must not be 2"));
    assert_true(json_is_null(json_object_get(row, "registers")));
    json_decref(doc);
}

/* A compile-only run's JSON is what docs/report-json.schema.json describes. */
static void test_the_json_validates_against_the_schema(void **state)
{
    scratch_command *c = *state;
    if (scratch_command_run(c, "python3 -c 'import jsonschema'") != 0) skip();
    assert_int_equal(tune(c, "two.lua", "--json run.json"), 0);
    char src[1024];
    source_dir(src, sizeof src);
    int rc = scratch_command_run(c,
                                 "python3 -c 'import json, sys, jsonschema\n"
                                 "jsonschema.validate(json.load(open(sys.argv[2])), "
                                 "json.load(open(sys.argv[1])))' %s/docs/report-json.schema.json "
                                 "run.json",
                                 src);
    if (rc) print_error("%s\n", c->err);
    assert_int_equal(rc, 0);
}

/* The CSV: a row per compile (its resources in their columns), and a row per
 * shape with the same status and reason as the JSON. */
static void test_the_csv_has_a_row_per_compile_and_per_shape(void **state)
{
    scratch_command *c = *state;
    assert_int_equal(tune(c, "two.lua", "--csv run.csv"), 0);
    char *csv = slurp(c, "run.csv");
    assert_non_null(
        strstr(csv, ",registers,local_bytes,spill_bytes,smem_bytes,compile_ms,reason\n"));
    char line[512];
    snprintf(line, sizeof line, "tiny,N=1024,1024,,,,shape,0,compiled,");
    assert_non_null(strstr(csv, line));
    snprintf(line, sizeof line, ",\"%s\"\n", COMPILED);
    assert_non_null(strstr(csv, line));
    assert_non_null(strstr(csv, "tiny,,,2,,S=2,compile,0,compiled,"));
    assert_non_null(strstr(csv, "e,,,,2,V=2,compile,0,compile_error,"));
    assert_non_null(strstr(csv, "V must not be 2"));
    free(csv);
}

/* The HTML page carries the same status, reason and compile rows, and the summary
 * line the terminal prints under its table. */
static void test_the_html_shows_the_compile_table_and_its_summary(void **state)
{
    scratch_command *c = *state;
    assert_int_equal(tune(c, "two.lua", "--out rep"), 0);
    char *html = slurp(c, "rep/run.html"), *txt = slurp(c, "rep/run.txt");
    assert_non_null(strstr(html, "\"status\":\"compiled\""));
    assert_non_null(strstr(html, COMPILED));
    assert_non_null(strstr(html, "\"compiles\":[{"));
    assert_non_null(strstr(html, "\"summary\":\"2 compiled, 0 failed, 1 rejected by constraints in "
                                 "each of 2 shapes; NVRTC "));
    assert_non_null(strstr(txt, "  2 compiled, 0 failed, 1 rejected by constraints in each of 2 "
                                "shapes; NVRTC "));
    assert_non_null(strstr(txt, "  1 compiled, 1 failed, 0 rejected by constraints; NVRTC "));
    free(html);
    free(txt);
}

/* `gpubench report` gives back the compile tables and every file, byte for byte. */
static void test_report_renders_the_saved_run_as_it_was(void **state)
{
    scratch_command *c = *state;
    assert_int_equal(tune(c, "two.lua", "--out rep"), 0);
    assert_int_equal(report(c, "rep/run.json"), 0);
    char *txt = slurp(c, "rep/run.txt");
    assert_string_equal(c->out, txt);
    free(txt);
    assert_int_equal(report(c, "rep/run.json --out again"), 0);
    static const char *const files[] = {"run.json", "run.csv", "run.html"};
    for (int i = 0; i < 3; i++) {
        char first[64], second[64];
        snprintf(first, sizeof first, "rep/%s", files[i]);
        snprintf(second, sizeof second, "again/%s", files[i]);
        char *a = slurp(c, first), *b = slurp(c, second);
        assert_string_equal(a, b);
        free(a);
        free(b);
    }
}

/* A shape that failed is "failed", with the same reason, in all four formats. */
static void test_a_failed_shape_reads_the_same_in_every_format(void **state)
{
    scratch_command *c = *state;
    static const char WHY[] = "no valid configuration: the constraints rejected all 3 of the space";
    assert_int_equal(tune(c, "none.lua", "--out rep"), 1);
    json_t *doc = load(c, "rep/run.json");
    json_t *best = json_array_get(json_object_get(doc, "benchmarks"), 0);
    assert_string_equal(json_string_value(json_object_get(best, "status")), "failed");
    assert_string_equal(json_string_value(json_object_get(best, "reason")), WHY);
    json_decref(doc);
    char *csv = slurp(c, "rep/run.csv"), *html = slurp(c, "rep/run.html");
    char line[256];
    snprintf(line, sizeof line, ",shape,0,failed,,,,,,,,,,,,,,,,,,,,,,%s\n", WHY);
    assert_non_null(strstr(csv, line));
    assert_non_null(strstr(html, "\"status\":\"failed\""));
    assert_non_null(strstr(html, WHY));
    free(csv);
    free(html);
    /* the terminal: the compile table, then the shape, its status and why */
    char *txt = slurp(c, "rep/run.txt");
    assert_non_null(strstr(txt, "0 compiled, 0 failed, 3 rejected by constraints"));
    snprintf(line, sizeof line, "\n  N=7: failed: %s\n", WHY);
    assert_non_null(strstr(txt, line));
    free(txt);
    assert_int_equal(report(c, "rep/run.json"), 0);
    assert_non_null(strstr(c->out, line));
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_the_json_holds_the_status_and_the_compile_table),
        T(test_the_json_validates_against_the_schema),
        T(test_the_csv_has_a_row_per_compile_and_per_shape),
        T(test_the_html_shows_the_compile_table_and_its_summary),
        T(test_report_renders_the_saved_run_as_it_was),
        T(test_a_failed_shape_reads_the_same_in_every_format),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
