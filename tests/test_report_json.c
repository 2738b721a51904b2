/*
 * The JSON output and its reader (report/outputs/json_out.c, report/outputs/json_load.c): the
 * fixed run's document is the golden file, it validates against the published
 * schema, Google Benchmark's compare.py reads two of them, reading one back and
 * writing it again gives the same text, and bad files are errors that name the
 * file and the field, never crashes.
 */
#include "report/output.h"
#include "report/outputs/json_parts.h"
#include "report/outputs/json_rows.h"
#include "report/result.h"
#include "report_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#define PYTHON     "/usr/bin/python3"
#define COMPARE_PY "/usr/share/benchmark/compare.py"

typedef struct dir {
    char path[64];
} dir;

static int make_dir(void **state)
{
    dir *d = calloc(1, sizeof *d);
    assert_non_null(d);
    snprintf(d->path, sizeof d->path, "/tmp/gb_report_json_XXXXXX");
    assert_non_null(mkdtemp(d->path));
    *state = d;
    return 0;
}

static int remove_dir(void **state)
{
    dir *d = *state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", d->path);
    int rc = system(cmd);
    free(d);
    return rc == 0 ? 0 : -1;
}

static char *in(const dir *d, const char *name)
{
    static char path[4][256];
    static int next;
    char *p = path[next++ % 4];
    snprintf(p, sizeof path[0], "%s/%s", d->path, name);
    return p;
}

static void write_report(const gb_report *r, const char *path)
{
    gb_output *o;
    gb_err err = {0};
    assert_int_equal(gb_output_json(path, &o, &err), GB_OK);
    int rc = gb_output_render(o, r, &err);
    if (rc) print_error("%s\n", err.msg);
    assert_int_equal(rc, GB_OK);
    gb_output_destroy(o);
}

static void write_fixture(const char *path)
{
    gb_report r;
    report_fixture(&r);
    write_report(&r, path);
    gb_report_free(&r);
}

static char *read_or_fail(const char *path)
{
    char *text = report_fixture_read(path);
    assert_non_null(text);
    return text;
}

/* ---- the document -------------------------------------------------------------------- */

static void test_the_fixed_run_writes_the_golden_file(void **state)
{
    const char *path = in(*state, "run.json");
    write_fixture(path);
    char *text = read_or_fail(path);
    report_fixture_golden(text, "run.json");
    free(text);
    assert_int_equal(access(in(*state, "run.json.tmp"), F_OK), -1); /* renamed into place */
}

static void test_a_saved_run_reads_back_whole(void **state)
{
    const char *path = in(*state, "run.json");
    write_fixture(path);
    gb_report r;
    gb_err err = {0};
    assert_int_equal(gb_report_load_json(path, &r, &err), GB_OK);
    assert_int_equal(r.n_entries, 4);
    assert_string_equal(r.context.host_name, "bench-host");
    assert_true(r.context.has_device);
    assert_int_equal(r.context.device.sm_clock_khz, 1980000);
    assert_int_equal(r.context.device.driver_version, 13000);
    assert_true(r.context.roofs.ceiling_gbps == 4220);

    const gb_shape_result *s = r.entries[0].result;
    assert_string_equal(r.entries[0].kernel, "gemm_f32");
    assert_null(r.entries[0].call);
    assert_string_equal(s->key_text, "K=1024,M=1024,N=1024");
    assert_true(s->has_best && s->has_baseline);
    assert_int_equal(s->best_measurement.n_samples, 12);
    assert_true(s->best_measurement.samples_ms[3] == 0.1004);
    assert_int_equal(s->baseline.n_samples, 10);
    assert_int_equal(s->n_trials, 5);
    assert_string_equal(s->trials[1].config_text, "BK=8,BM=64,BN=128");
    assert_int_equal(s->trials[3].status, GB_TRIAL_WRONG);
    assert_int_equal(s->n_status[GB_TRIAL_OK], 3);
    assert_int_equal(s->ended_by, GB_END_SPACE);

    assert_false(r.entries[1].result->has_best);
    assert_null(r.entries[1].result->failure);
    assert_true(r.entries[2].result->cached);
    assert_true(r.entries[3].bench);
    assert_true(r.entries[3].result->flops == 0);
    gb_report_free(&r);
}

static void test_reading_back_and_writing_again_gives_the_same_text(void **state)
{
    const char *first = in(*state, "run.json"), *second = in(*state, "again.json");
    write_fixture(first);
    gb_report r;
    gb_err err = {0};
    assert_int_equal(gb_report_load_json(first, &r, &err), GB_OK);
    write_report(&r, second);
    gb_report_free(&r);
    char *a = read_or_fail(first), *b = read_or_fail(second);
    assert_string_equal(a, b);
    free(a);
    free(b);
}

/* The table of a run read back is the run's own table, the search lines under it
 * included ("constraints rejected 11 of 16 looked at (1.6 M/s)"). */
static void test_a_saved_run_renders_the_runs_table(void **state)
{
    const char *path = in(*state, "run.json");
    write_fixture(path);
    gb_report r;
    gb_err err = {0};
    assert_int_equal(gb_report_load_json(path, &r, &err), GB_OK);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_non_null(out);
    gb_output *o = NULL;
    assert_int_equal(gb_output_table(out, &(gb_table_opts){0}, &o, &err), GB_OK);
    assert_int_equal(gb_output_render(o, &r, &err), GB_OK);
    gb_output_destroy(o);
    fclose(out);
    gb_report_free(&r);
    assert_non_null(strstr(text, "constraints rejected 11 of 16 looked at (1.6 M/s)"));
    report_fixture_golden(text, "run.txt");
    free(text);
}

/* ---- other readers ------------------------------------------------------------------------ */

static bool python_has(const char *module)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, PYTHON " -c 'import %s' >/dev/null 2>&1", module);
    return access(PYTHON, X_OK) == 0 && system(cmd) == 0;
}

/* Runs cmd with its output in out_path; returns its exit status. */
static int run(const char *cmd, const char *out_path)
{
    char full[2048];
    snprintf(full, sizeof full, "%s >'%s' 2>&1", cmd, out_path);
    int rc = system(full);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

static void test_the_golden_file_validates_against_the_schema(void **state)
{
    if (!python_has("jsonschema")) skip();
    const char *src = getenv("GB_SOURCE_DIR");
    assert_non_null(src);
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             PYTHON " -c 'import json, sys, jsonschema\n"
                    "schema = json.load(open(sys.argv[1]))\n"
                    "jsonschema.validators.validator_for(schema).check_schema(schema)\n"
                    "jsonschema.validate(json.load(open(sys.argv[2])), schema)'"
                    " %s/docs/report-json.schema.json %s/tests/report/run.json",
             src, src);
    const char *out = in(*state, "validate.txt");
    int rc = run(cmd, out);
    char *text = read_or_fail(out);
    if (rc) print_error("%s\n", text);
    free(text);
    assert_int_equal(rc, 0);
}

/* bench/gemm_list.py, which makes the GEMM list's table from gemm_tc.lua's runs,
 * reads what the writer writes: the fixed run, its kernels renamed as
 * gemm_tc.lua names them and its shapes given a batch (the copy's M and K too),
 * gives a row for each shape (figures where a best was measured, its status
 * where none), the count against the baseline and the rows below 0.95x, with
 * three decimals (0.947x is 0.95x in a row). It broke silently once,
 * when the JSON's status words changed. */
static void test_gemm_list_py_reads_the_runs(void **state)
{
    if (!python_has("json")) skip();
    const char *src = getenv("GB_SOURCE_DIR");
    assert_non_null(src);
    gb_report r;
    report_fixture(&r);
    for (int i = 0; i < r.n_entries; i++) {
        free((char *)r.entries[i].kernel);
        r.entries[i].kernel = strdup("gemm_tc_bf16_nt");
        assert_non_null(r.entries[i].kernel);
        gb_shape_result *s = (gb_shape_result *)r.entries[i].result;
        gb_value one = {.kind = GB_VAL_INT, .i = 1};
        assert_int_equal(gb_fields_set(&s->shape, "batch", &one), GB_OK);
        if (!gb_fields_get(&s->shape, "M")) {
            assert_int_equal(gb_fields_set(&s->shape, "M", &one), GB_OK);
            assert_int_equal(gb_fields_set(&s->shape, "K", &one), GB_OK);
        }
    }
    write_report(&r, in(*state, "gemm_list_bf16_list.json"));
    /* the same in f16, its tuned best 6 times slower: 0.83x, named below 0.95x */
    for (int i = 0; i < r.n_entries; i++) {
        free((char *)r.entries[i].kernel);
        r.entries[i].kernel = strdup("gemm_tc_f16_nt");
        assert_non_null(r.entries[i].kernel);
    }
    ((gb_shape_result *)r.entries[0].result)->best.median *= 6;
    write_report(&r, in(*state, "gemm_list_f16_list.json"));
    gb_report_free(&r);

    char cmd[1024];
    snprintf(cmd, sizeof cmd, PYTHON " %s/bench/gemm_list.py '%s'", src, ((dir *)*state)->path);
    const char *out = in(*state, "gemm_list.md");
    int rc = run(cmd, out);
    char *text = read_or_fail(out);
    if (rc) print_error("%s\n", text);
    assert_int_equal(rc, 0);
    static const char *const rows[] = {
        "| bf16 | NT | 1024 x 1024 x 1024 | 1 | 128x128, ", /* tuned, raced against the baseline */
        "| bf16 | NT | 2048 x 2048 x 2048 | 1 | (",         /* no valid variant: its status */
        "| bf16 | NT | 4096 x 4096 x 4096 | 1 | 128x128, ", /* from the cache */
        "| fp16 | NT | 1024 x 1024 x 1024 | 1 | 128x128, ",
        "2 rows against cuBLAS: 1 at 1.00x or more, 1 at 0.95x or more; the worst 0.828x "
        "(fp16 NT 1024 x 1024 x 1024, batch 1).\n"
        "Below 0.95x: fp16 NT 1024 x 1024 x 1024, batch 1, 0.828x."};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (!strstr(text, rows[i])) fail_msg("no \"%s\" in:\n%s", rows[i], text);
    free(text);
}

static void test_compare_py_reads_two_runs_and_shows_the_change(void **state)
{
    if (access(COMPARE_PY, R_OK) != 0 || !python_has("scipy")) skip();
    const char *before = in(*state, "before.json"), *after = in(*state, "after.json");
    gb_report r;
    report_fixture(&r);
    write_report(&r, before);
    gb_shape_result *s = (gb_shape_result *)r.entries[0].result;
    s->best.median *= 1.2; /* the tuned 1024 best, 20% slower */
    write_report(&r, after);
    gb_report_free(&r);

    char cmd[1024];
    snprintf(cmd, sizeof cmd, PYTHON " " COMPARE_PY " --no-color benchmarks '%s' '%s'", before,
             after);
    const char *out = in(*state, "compare.txt");
    int rc = run(cmd, out);
    char *text = read_or_fail(out);
    if (rc) print_error("%s\n", text);
    assert_int_equal(rc, 0);
    const char *line = strstr(text, "gemm_f32/K=1024,M=1024,N=1024/best ");
    assert_non_null(line);
    assert_non_null(strstr(line, "+0.2000")); /* the change, on that line */
    assert_true(strstr(line, "+0.2000") < strchr(line, '\n'));
    assert_non_null(strstr(text, "copy_f32/N=16777216/best "));
    free(text);
}

/* ---- bad files ----------------------------------------------------------------------------- */

static void expect_load_error(const char *path, const char *message)
{
    gb_report r;
    gb_err err = {0};
    assert_int_equal(gb_report_load_json(path, &r, &err), GB_EINVAL);
    if (!strstr(err.msg, message)) print_error("got: %s\nwanted: %s\n", err.msg, message);
    assert_non_null(strstr(err.msg, message));
    assert_int_equal(r.n_entries, 0);
}

/* The fixture's document, parsed, for a test to damage. */
static json_t *fixture_doc(const dir *d)
{
    write_fixture(in(d, "run.json"));
    json_t *doc = json_load_file(in(d, "run.json"), 0, NULL);
    assert_non_null(doc);
    return doc;
}

static void save(json_t *doc, const char *path)
{
    assert_int_equal(json_dump_file(doc, path, JSON_INDENT(1)), 0);
}

static void test_a_truncated_file_is_an_error_naming_it(void **state)
{
    const char *path = in(*state, "run.json");
    write_fixture(path);
    char *text = read_or_fail(path);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fwrite(text, 1, strlen(text) / 2, f);
    fclose(f);
    free(text);
    char wanted[300];
    snprintf(wanted, sizeof wanted, "%s: JSON line", path);
    expect_load_error(path, wanted);
}

static void test_another_schema_version_is_refused(void **state)
{
    json_t *doc = fixture_doc(*state);
    json_object_set_new(json_object_get(doc, "context"), "schema_version", json_integer(99));
    save(doc, in(*state, "v99.json"));
    json_decref(doc);
    expect_load_error(in(*state, "v99.json"),
                      "v99.json: context.schema_version: version 99 is not one");
}

static void test_samples_of_the_wrong_kind_name_the_field(void **state)
{
    json_t *doc = fixture_doc(*state);
    json_t *row = json_array_get(json_object_get(doc, "benchmarks"), 3);
    json_object_set_new(row, "samples_ms", json_string("0.1 0.2"));
    save(doc, in(*state, "bad.json"));
    json_decref(doc);
    expect_load_error(in(*state, "bad.json"),
                      "bad.json: benchmarks[3].samples_ms: expected a list of numbers");
}

static void test_a_missing_file_is_an_io_error(void **state)
{
    gb_report r;
    gb_err err = {0};
    assert_int_equal(gb_report_load_json(in(*state, "none.json"), &r, &err), GB_EIO);
    assert_non_null(strstr(err.msg, "none.json: No such file"));
}

/* Every field of every row and of the context, replaced in turn by a value of no
 * kind the schema uses: the load either ignores the field (one it derives) or
 * fails naming it; it never crashes (run under the sanitizers in CI). */
static void damage_each_field(const dir *d, json_t *doc, json_t *obj, const char *where)
{
    const char *key;
    json_t *value;
    void *tmp;
    json_object_foreach_safe(obj, tmp, key, value)
    {
        json_t *kept = json_incref(value);
        json_object_set_new(obj, key, json_pack("[{}]"));
        save(doc, in(d, "damaged.json"));
        json_object_set_new(obj, key, kept);
        gb_report r;
        gb_err err = {0};
        int rc = gb_report_load_json(in(d, "damaged.json"), &r, &err);
        char named[256];
        snprintf(named, sizeof named, "%s.%s", where, key);
        if (rc && !strstr(err.msg, named)) print_error("%s: %s\n", named, err.msg);
        assert_true(rc == GB_OK || (rc == GB_EINVAL && strstr(err.msg, named)));
        gb_report_free(&r);
    }
}

static void test_a_field_of_the_wrong_kind_is_ignored_or_named_never_a_crash(void **state)
{
    json_t *doc = fixture_doc(*state);
    damage_each_field(*state, doc, json_object_get(doc, "context"), "context");
    json_t *benchmarks = json_object_get(doc, "benchmarks");
    for (size_t i = 0; i < json_array_size(benchmarks); i++) {
        char where[48];
        snprintf(where, sizeof where, "benchmarks[%zu]", i);
        damage_each_field(*state, doc, json_array_get(benchmarks, i), where);
    }
    json_decref(doc);
}

static void test_a_trial_before_any_best_is_an_error(void **state)
{
    json_t *doc = fixture_doc(*state);
    json_array_remove(json_object_get(doc, "benchmarks"), 0);
    save(doc, in(*state, "headless.json"));
    json_decref(doc);
    expect_load_error(in(*state, "headless.json"), "benchmarks[0].role: a row before");
}

/* A compile-only call with one row that failed to compile, added to the
 * fixture's document (which has none). */
static json_t *doc_with_a_compile_call(const dir *d)
{
    json_t *doc = fixture_doc(d);
    gb_compile_row row = {.compile_ms = 12.5, .error = (char *)"k.cu:1: error: no"};
    gb_tune_result call = {.compiles = &row, .n_compiles = 1, .n_shapes = 1};
    json_t *c = gb_json_compile_call("gemm_f32", &call, 0);
    assert_non_null(c);
    json_array_append_new(json_object_get(doc, "compiles"), c);
    return doc;
}

static void test_a_compile_call_reads_back_and_its_status_must_agree(void **state)
{
    json_t *doc = doc_with_a_compile_call(*state);
    save(doc, in(*state, "compiled.json"));
    gb_report r;
    gb_err err = {0};
    if (gb_report_load_json(in(*state, "compiled.json"), &r, &err)) fail_msg("%s", err.msg);
    assert_int_equal(r.n_calls, 1);
    assert_string_equal(r.calls[0].kernel, "gemm_f32");
    assert_int_equal(r.calls[0].result.n_shapes, 1);
    assert_string_equal(gb_compile_row_status(&r.calls[0].result.compiles[0]), "compile_error");
    assert_int_equal(r.calls[0].result.compiles[0].resources.registers, -1); /* null */
    gb_report_free(&r);
    json_t *rows = json_object_get(json_array_get(json_object_get(doc, "compiles"), 0), "rows");
    json_object_set_new(json_array_get(rows, 0), "status", json_string("compiled"));
    save(doc, in(*state, "disagrees.json"));
    json_decref(doc);
    expect_load_error(in(*state, "disagrees.json"),
                      "disagrees.json: compiles[0].rows[0].error: does not go with the status "
                      "\"compiled\"");
}

static void test_every_view_of_the_report_checks_out(void **state)
{
    (void)state;
    const gb_wire_type *views[] = {
        &gb_wire_best_row,           &gb_wire_baseline_row,    &gb_wire_trial_row,
        &gb_wire_report_context,     &gb_wire_report_version,  &gb_wire_report_call,
        &gb_wire_report_compile_row, &gb_wire_report_compiles,
    };
    for (size_t i = 0; i < sizeof views / sizeof *views; i++) {
        gb_err err;
        if (gb_wire_check_type(views[i], &err)) fail_msg("%s", err.msg);
    }
}

static void test_an_unwritable_path_is_an_error_naming_it(void **state)
{
    gb_report r;
    report_fixture(&r);
    gb_output *o;
    gb_err err = {0};
    const char *path = in(*state, "no/such/dir/run.json");
    assert_int_equal(gb_output_json(path, &o, &err), GB_OK);
    assert_int_not_equal(gb_output_render(o, &r, &err), GB_OK);
    assert_non_null(strstr(err.msg, path));
    gb_output_destroy(o);
    gb_report_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_the_fixed_run_writes_the_golden_file, make_dir,
                                        remove_dir),
        cmocka_unit_test_setup_teardown(test_a_saved_run_reads_back_whole, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_reading_back_and_writing_again_gives_the_same_text,
                                        make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_a_saved_run_renders_the_runs_table, make_dir,
                                        remove_dir),
        cmocka_unit_test_setup_teardown(test_the_golden_file_validates_against_the_schema, make_dir,
                                        remove_dir),
        cmocka_unit_test_setup_teardown(test_gemm_list_py_reads_the_runs, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_compare_py_reads_two_runs_and_shows_the_change,
                                        make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_a_truncated_file_is_an_error_naming_it, make_dir,
                                        remove_dir),
        cmocka_unit_test_setup_teardown(test_another_schema_version_is_refused, make_dir,
                                        remove_dir),
        cmocka_unit_test_setup_teardown(test_samples_of_the_wrong_kind_name_the_field, make_dir,
                                        remove_dir),
        cmocka_unit_test_setup_teardown(test_a_missing_file_is_an_io_error, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(
            test_a_field_of_the_wrong_kind_is_ignored_or_named_never_a_crash, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_a_trial_before_any_best_is_an_error, make_dir,
                                        remove_dir),
        cmocka_unit_test_setup_teardown(test_a_compile_call_reads_back_and_its_status_must_agree,
                                        make_dir, remove_dir),
        cmocka_unit_test(test_every_view_of_the_report_checks_out),
        cmocka_unit_test_setup_teardown(test_an_unwritable_path_is_an_error_naming_it, make_dir,
                                        remove_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
