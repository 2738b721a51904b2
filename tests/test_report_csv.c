/*
 * The CSV output (report/outputs/csv_out.c, report/outputs/csv_cutlass.c; docs/report-csv.md):
 * the fixed run in both formats against golden files, RFC 4180 quoting, the
 * field columns' union, errors that name the file, and no file before the end.
 */
#include "report/output.h"
#include "report_fixture.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

/* A fresh folder for one test's files. */
static char *scratch(void)
{
    char *dir = strdup("/tmp/gb_csv_XXXXXX");
    assert_non_null(dir);
    assert_non_null(mkdtemp(dir));
    return dir;
}

static char *path_in(const char *dir, const char *name)
{
    char *p = malloc(strlen(dir) + strlen(name) + 2);
    assert_non_null(p);
    sprintf(p, "%s/%s", dir, name);
    return p;
}

/* Renders r in format to DIR/name and returns the file's text. */
static char *render(const gb_report *r, gb_csv_format format, const char *dir, const char *name)
{
    char *path = path_in(dir, name);
    gb_output *o;
    gb_err err = {0};
    assert_int_equal(gb_output_csv(path, format, &o, &err), GB_OK);
    int rc = gb_output_render(o, r, &err);
    if (rc) print_error("%s\n", err.msg);
    assert_int_equal(rc, GB_OK);
    gb_output_destroy(o);
    char *text = report_fixture_read(path);
    assert_non_null(text);
    unlink(path);
    free(path);
    return text;
}

static void test_the_fixed_run_as_trials_matches_its_golden_file(void **state)
{
    (void)state;
    gb_report r;
    report_fixture(&r);
    char *dir = scratch();
    char *text = render(&r, GB_CSV_TRIALS, dir, "run.csv");
    report_fixture_golden(text, "run.csv");
    /* the union of the fields: N of the copy shares the GEMMs' column, BLOCK is the
     * copy's alone and empty on the GEMMs' rows */
    assert_non_null(strstr(text, "kernel,shape,K,M,N,BK,BLOCK,BM,BN,config,role,is_best,"));
    assert_non_null(strstr(text, "\ncopy_f32,N=16777216,,,16777216,,256,,,BLOCK=256,trial,1,ok,"));
    /* a failed trial has no figures, and no "nan" anywhere */
    assert_non_null(strstr(text, ",compile_error,,,,,,,,,,,,,,,,0,"));
    assert_null(strstr(text, "nan"));
    free(text);
    rmdir(dir);
    free(dir);
    gb_report_free(&r);
}

static void test_the_fixed_run_in_cutlass_columns_matches_its_golden_file(void **state)
{
    (void)state;
    gb_report r;
    report_fixture(&r);
    char *dir = scratch();
    char *text = render(&r, GB_CSV_CUTLASS, dir, "run-cutlass.csv");
    report_fixture_golden(text, "run-cutlass.csv");
    assert_true(strncmp(text,
                        "Problem,Provider,OperationKind,Operation,Disposition,Status,"
                        "gemm_kind,m,n,k,",
                        60) == 0);
    /* the copy has no M, N, K: no row */
    assert_null(strstr(text, "copy_f32"));
    /* the best's row carries the race's median, its tile from BM, BN, BK */
    assert_non_null(strstr(text, "\n1,gpubench,gemm,gemm_f32:BK=8:BM=128:BN=128,passed,success,,"
                                 "1024,1024,1024,"));
    assert_non_null(strstr(text, ",128,128,8,"));
    free(text);
    rmdir(dir);
    free(dir);
    gb_report_free(&r);
}

static void test_a_reason_with_a_comma_a_quote_and_a_newline_is_quoted(void **state)
{
    (void)state;
    gb_report r;
    report_fixture(&r);
    gb_trial_note *t = &((gb_shape_result *)r.entries[1].result)->trials[0];
    free(t->reason);
    t->reason = strdup("bad, \"very\" bad\nsecond line");
    assert_non_null(t->reason);
    char *dir = scratch();
    char *text = render(&r, GB_CSV_TRIALS, dir, "quoted.csv");
    assert_non_null(
        strstr(text, ",crashed,,,,,,,,,,,,,,,,0,,,,,,\"bad, \"\"very\"\" bad\nsecond line\"\n"));
    free(text);
    rmdir(dir);
    free(dir);
    gb_report_free(&r);
}

static void test_gemm_sizes_are_found_in_any_case_and_other_shapes_are_left_out(void **state)
{
    (void)state;
    gb_report r;
    report_fixture(&r);
    /* the copy, renamed to a lower-case GEMM shape */
    gb_shape_result *s = (gb_shape_result *)r.entries[3].result;
    gb_value v = gb_value_int(64);
    assert_int_equal(gb_fields_set(&s->shape, "m", &v), GB_OK);
    assert_int_equal(gb_fields_set(&s->shape, "k", &v), GB_OK);
    char *dir = scratch();
    char *text = render(&r, GB_CSV_CUTLASS, dir, "lower.csv");
    assert_non_null(strstr(text, "\n4,gpubench,gemm,copy_f32:BLOCK=256,passed,success,,"
                                 "64,16777216,64,"));
    free(text);
    rmdir(dir);
    free(dir);
    gb_report_free(&r);
}

static void test_there_is_no_file_until_the_end(void **state)
{
    (void)state;
    gb_report r;
    report_fixture(&r);
    char *dir = scratch();
    char *path = path_in(dir, "late.csv");
    gb_output *o;
    gb_err err = {0};
    assert_int_equal(gb_output_csv(path, GB_CSV_TRIALS, &o, &err), GB_OK);
    assert_int_equal(gb_output_begin(o, &r.context, &err), GB_OK);
    for (int i = 0; i < r.n_entries; i++)
        assert_int_equal(gb_output_shape(o, &r.entries[i], &err), GB_OK);
    struct stat st;
    assert_int_equal(stat(path, &st), -1);
    assert_int_equal(errno, ENOENT);
    assert_int_equal(gb_output_end(o, &err), GB_OK);
    assert_int_equal(stat(path, &st), 0);
    /* nothing else was left in the folder: the temporary file was renamed */
    unlink(path);
    assert_int_equal(rmdir(dir), 0);
    gb_output_destroy(o);
    free(path);
    free(dir);
    gb_report_free(&r);
}

static void test_a_folder_that_does_not_exist_is_named_at_once(void **state)
{
    (void)state;
    gb_output *o = (gb_output *)1;
    gb_err err = {0};
    int rc = gb_output_csv("/nonexistent-gb-folder/run.csv", GB_CSV_TRIALS, &o, &err);
    assert_int_equal(rc, ENOENT);
    assert_null(o);
    assert_non_null(strstr(err.msg, "/nonexistent-gb-folder/run.csv"));
}

static void test_a_file_that_cannot_be_written_at_the_end_names_it_and_the_call(void **state)
{
    (void)state;
    gb_report r;
    report_fixture(&r);
    char *dir = scratch();
    char *path = path_in(dir, "taken");
    assert_int_equal(mkdir(path, 0700), 0); /* a folder where the file should go */
    gb_output *o;
    gb_err err = {0};
    assert_int_equal(gb_output_csv(path, GB_CSV_CUTLASS, &o, &err), GB_OK);
    assert_int_not_equal(gb_output_render(o, &r, &err), GB_OK);
    assert_non_null(strstr(err.msg, "csv output: renaming over "));
    assert_non_null(strstr(err.msg, path));
    assert_true(o->failed);
    gb_output_destroy(o);
    rmdir(path);
    assert_int_equal(rmdir(dir), 0); /* the temporary file is gone */
    free(path);
    free(dir);
    gb_report_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_fixed_run_as_trials_matches_its_golden_file),
        cmocka_unit_test(test_the_fixed_run_in_cutlass_columns_matches_its_golden_file),
        cmocka_unit_test(test_a_reason_with_a_comma_a_quote_and_a_newline_is_quoted),
        cmocka_unit_test(test_gemm_sizes_are_found_in_any_case_and_other_shapes_are_left_out),
        cmocka_unit_test(test_there_is_no_file_until_the_end),
        cmocka_unit_test(test_a_folder_that_does_not_exist_is_named_at_once),
        cmocka_unit_test(test_a_file_that_cannot_be_written_at_the_end_names_it_and_the_call),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
