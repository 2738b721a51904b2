/* The --compile-only table (report/compile_table.c) as a user reads it: rows,
 * each distinct compile error once, the full compiler output with -v, and the
 * summary line. The results are built by hand: no NVRTC, no GPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "report/table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* NVRTC's log for a template that names something undefined, instantiated with
 * BM: the first line is the same for every BM, the second is not. */
#define UNDEFINED_LOG(BM)                                                                          \
    "k.cuh(4): error: identifier \"undefined_thing\" is undefined\n"                               \
    "          detected during instantiation of \"void k<" BM ">(float *)\"\n"                     \
    "\n"                                                                                           \
    "1 error detected in the compilation of \"k.cuh\".\n"

#define MISSING_SEMICOLON_LOG                                                                      \
    "k.cuh(9): error: expected a \";\"\n"                                                          \
    "\n"                                                                                           \
    "1 error detected in the compilation of \"k.cuh\".\n"

typedef struct fixture {
    gb_tune_result result;
    char *text; /* what the report printed */
    size_t len;
} fixture;

static gb_compile_row *add_row(fixture *f, int bm)
{
    gb_tune_result *r = &f->result;
    r->compiles = realloc(r->compiles, (size_t)(r->n_compiles + 1) * sizeof *r->compiles);
    assert_non_null(r->compiles);
    gb_compile_row *row = &r->compiles[r->n_compiles++];
    *row = (gb_compile_row){.resources = {96, 0, 0, 0, 4096}, .compile_ms = 310};
    gb_value v = gb_value_int(bm);
    assert_int_equal(gb_fields_set(&row->config, "BM", &v), GB_OK);
    return row;
}

static void add_error(fixture *f, int bm, const char *log)
{
    add_row(f, bm)->error = strdup(log);
}

static void add_shape(fixture *f, uint64_t n_rejected)
{
    gb_tune_result *r = &f->result;
    r->shapes = realloc(r->shapes, (size_t)(r->n_shapes + 1) * sizeof *r->shapes);
    assert_non_null(r->shapes);
    r->shapes[r->n_shapes++] = (gb_shape_result){.n_rejected = n_rejected};
}

/* Two that compiled (one from the cache), one over the target's limits, three
 * that failed in two ways (two share their first line, not their whole log). */
static void typical_run(fixture *f)
{
    add_row(f, 64);
    add_row(f, 128)->cached = true;
    add_row(f, 256)->limit =
        strdup("needs 2048 threads per block (block 2048x1x1); sm_90a allows 1024");
    add_error(f, 32, UNDEFINED_LOG("32"));
    add_error(f, 16, UNDEFINED_LOG("16"));
    add_error(f, 8, MISSING_SEMICOLON_LOG);
    add_shape(f, 4);
    f->result.timing.compile_cpu_s = 3.2;
}

static void report(fixture *f, bool verbose, int jobs, const char *arch)
{
    free(f->text);
    FILE *out = open_memstream(&f->text, &f->len);
    assert_non_null(out);
    gb_report_opts opts = {.compile_only = true, .verbose = verbose, .jobs = jobs, .arch = arch};
    gb_report_tune(out, "k", &f->result, &opts);
    fclose(out);
}

static int count(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, what)); p += strlen(what))
        n++;
    return n;
}

/* The line that holds what, for assertions on whole lines. */
static void assert_line(const fixture *f, const char *line)
{
    char *want = NULL;
    assert_true(asprintf(&want, "\n%s\n", line) > 0);
    if (!strstr(f->text, want)) fail_msg("no line \"%s\" in:\n%s", line, f->text);
    free(want);
}

static int setup(void **state)
{
    *state = calloc(1, sizeof(fixture));
    return *state ? 0 : -1;
}

static int teardown(void **state)
{
    fixture *f = *state;
    for (int i = 0; i < f->result.n_compiles; i++) { /* whether or not gb_tune_result_free
                                                          frees it, once */
        free(f->result.compiles[i].limit);
        f->result.compiles[i].limit = NULL;
    }
    gb_tune_result_free(&f->result);
    free(f->text);
    free(f);
    return 0;
}

static void test_rows_say_compiled_cache_over_limits_or_which_error(void **state)
{
    fixture *f = *state;
    typical_run(f);
    report(f, false, 2, "sm_90a");
    assert_line(f, "config  regs  local B  spill B  smem B   ms");
    assert_line(f, "BM=64     96        0        0    4096  310  compiled");
    assert_line(f, "BM=128    96        0        0    4096  310  cache");
    assert_line(f, "BM=256    96        0        0    4096  310  over limits: needs 2048 threads "
                   "per block (block 2048x1x1); sm_90a allows 1024");
    assert_line(f, "BM=32      -        -        -       -    -  error 1");
    assert_line(f, "BM=16      -        -        -       -    -  error 1");
    assert_line(f, "BM=8       -        -        -       -    -  error 2");
}

static void test_without_v_each_first_diagnostic_is_shown_once(void **state)
{
    fixture *f = *state;
    typical_run(f);
    report(f, false, 2, "sm_90a");
    assert_line(f, "  error 1 (2 configurations): k.cuh:4: error: identifier \"undefined_thing\" "
                   "is undefined");
    assert_line(f, "  error 2 (1 configuration): k.cuh:9: error: expected a \";\"");
    assert_int_equal(count(f->text, "undefined_thing"), 1);
    assert_null(strstr(f->text, "detected during instantiation"));
    assert_line(f, "  -v shows the full compiler output");
}

static void test_with_v_each_error_is_shown_whole_with_its_configurations(void **state)
{
    fixture *f = *state;
    typical_run(f);
    report(f, true, 2, "sm_90a");
    assert_line(f, "  error 1, in 2 configurations: BM=32; BM=16");
    assert_line(f, "    k.cuh(4): error: identifier \"undefined_thing\" is undefined");
    assert_line(f, "              detected during instantiation of \"void k<32>(float *)\"");
    /* The blank line of the log stays blank: no indentation, no trailing blanks. */
    assert_line(f, "\n    1 error detected in the compilation of \"k.cuh\".");
    assert_int_equal(count(f->text, "k<16>"), 0); /* BM=16's differs only there */
    assert_line(f, "    (the output for BM=32; for the others it differs after the first error)");
    assert_line(f, "  error 2, in 1 configuration: BM=8");
    assert_line(f, "BM=8       -        -        -       -    -  error 2"); /* as without -v */
    assert_null(strstr(f->text, "-v shows"));
}

static void test_with_v_an_output_many_configurations_share_is_printed_once(void **state)
{
    fixture *f = *state;
    for (int bm = 8; bm <= 64; bm *= 2)
        add_error(f, bm, MISSING_SEMICOLON_LOG);
    add_shape(f, 0);
    report(f, true, 2, NULL);
    assert_line(f, "  error 1, in 4 configurations: BM=8; BM=16; BM=32; BM=64");
    assert_int_equal(count(f->text, "expected a"), 1);
    assert_null(strstr(f->text, "differs"));          /* the same output: nothing to qualify */
    assert_int_equal(count(f->text, "error 1\n"), 4); /* the rows */
}

static void test_a_one_line_error_gives_no_hint_that_v_shows_more(void **state)
{
    fixture *f = *state;
    add_error(f, 8, "k.cuh:9: error: expected a \";\"");
    add_shape(f, 0);
    report(f, false, 2, NULL);
    assert_line(f, "  error 1 (1 configuration): k.cuh:9: error: expected a \";\"");
    assert_null(strstr(f->text, "-v shows"));
}

static void test_the_summary_line_counts_each_kind_once_and_ends_the_table(void **state)
{
    fixture *f = *state;
    typical_run(f);
    report(f, false, 2, "sm_90a");
    const char *line = "  2 compiled (1 from the cache), 3 failed, 4 rejected by constraints, 1 "
                       "over sm_90a's limits; NVRTC 3.2 s over 2 threads\n";
    assert_line(f, "  2 compiled (1 from the cache), 3 failed, 4 rejected by constraints, 1 over "
                   "sm_90a's limits; NVRTC 3.2 s over 2 threads");
    assert_int_equal(strcmp(f->text + f->len - strlen(line), line), 0); /* the last line */
    report(f, true, 2, "sm_90a");
    assert_int_equal(strcmp(f->text + f->len - strlen(line), line), 0);
}

static void test_the_summary_line_without_failures_names_no_limit_count(void **state)
{
    fixture *f = *state;
    add_row(f, 64);
    add_row(f, 128);
    add_shape(f, 0);
    add_shape(f, 0); /* none rejected: no need to say per shape */
    f->result.timing.compile_cpu_s = 0.44;
    report(f, false, 0, NULL); /* --jobs 0: on the tuner's thread */
    assert_line(f, "  2 compiled, 0 failed, 0 rejected by constraints; NVRTC 0.4 s over 1 thread");
    assert_null(strstr(f->text, "error"));
}

static void test_the_summary_line_says_when_shapes_reject_differently(void **state)
{
    fixture *f = *state;
    add_row(f, 64)->limit = strdup("uses 300 KiB of dynamic shared memory; sm_90a allows 227 KiB "
                                   "with opt-in");
    add_shape(f, 2);
    add_shape(f, 6);
    report(f, false, 4, NULL);
    assert_line(f, "  0 compiled, 0 failed, 2 to 6 rejected by constraints per shape, 1 over the "
                   "target's limits; NVRTC 0.0 s over 4 threads");
    f->result.shapes[1].n_rejected = 2;
    report(f, false, 4, NULL);
    assert_non_null(strstr(f->text, ", 2 rejected by constraints in each of 2 shapes, "));
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_rows_say_compiled_cache_over_limits_or_which_error),
        T(test_without_v_each_first_diagnostic_is_shown_once),
        T(test_with_v_each_error_is_shown_whole_with_its_configurations),
        T(test_with_v_an_output_many_configurations_share_is_printed_once),
        T(test_a_one_line_error_gives_no_hint_that_v_shows_more),
        T(test_the_summary_line_counts_each_kind_once_and_ends_the_table),
        T(test_the_summary_line_without_failures_names_no_limit_count),
        T(test_the_summary_line_says_when_shapes_reject_differently),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
