/*
 * gpubench compare's files and command: the loader on our JSON runs (roles, every
 * sample) and on Google Benchmark's (repetitions, aggregates only, errors), its
 * messages for bad files, and `gpubench compare` end to end: the table, --json,
 * --filter, the entries only in one file and the exit statuses 0, 1 and 2. The
 * samples are drawn from a seeded generator; the tool comes from GB_BINARY_DIR/cli.
 */
#include "scratch.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "base/json.h"
#include "report/compare/compare.h"
#include "tuner/search.h"

#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

typedef scratch_command fixture;

static int setup(void **state)
{
    *state = scratch_command_new("compare");
    return *state ? 0 : -1;
}

static int teardown(void **state)
{
    scratch_command_free(*state);
    return 0;
}

/* ---- helpers ------------------------------------------------------------------- */

static const char *path_of(fixture *f, const char *name)
{
    static char path[4][128];
    static int next;
    char *p = path[next++ % 4];
    snprintf(p, sizeof path[0], "%s/%s", f->dir, name);
    return p;
}

static void write_text(fixture *f, const char *name, const char *text)
{
    assert_int_equal(scratch_write(f->dir, name, text), 0);
}

/* `gpubench compare ARGS` in the fixture's folder; status and output land in f. */
static int compare(fixture *f, const char *args)
{
    return scratch_command_run(f, "NO_COLOR=1 %s/cli/gpubench compare %s", getenv("GB_BINARY_DIR"),
                               args);
}

static void expect_status(fixture *f, int want)
{
    if (f->status != want)
        fail_msg("exit status %d, not %d\nstdout: %s\nstderr: %s", f->status, want, f->out, f->err);
}

/* One entry of our JSON: n samples around base_ms with a relative normal noise. */
static void add_entry(json_t *list, const char *name, const char *role, double base_ms,
                      double noise, int n, uint64_t seed)
{
    json_t *samples = json_array();
    gb_rng rng;
    gb_rng_seed(&rng, seed);
    double values[256];
    assert_true(n <= 256);
    for (int i = 0; i < n; i++) {
        double u1 = 1.0 - gb_rng_uniform(&rng), u2 = gb_rng_uniform(&rng);
        double z = sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
        values[i] = base_ms * (1.0 + noise * z);
        json_array_append_new(samples, json_real(values[i]));
    }
    double median = n > 0 ? gb_compare_median(values, n) : base_ms; /* as gpubench writes it */
    json_t *e = json_pack("{s:s, s:s, s:s, s:s, s:i, s:f, s:f, s:s, s:s, s:s, s:o, s:{s:i, s:f}}",
                          "name", name, "run_name", name, "run_type", "aggregate", "aggregate_name",
                          "median", "iterations", n, "real_time", base_ms * 1e3, "cpu_time",
                          base_ms * 1e3, "time_unit", "us", "role", role, "kernel", "gemm_f32",
                          "samples_ms", samples, "statistics", "n", n, "median_ms", median);
    assert_non_null(e);
    json_array_append_new(list, e);
}

static void write_run(fixture *f, const char *file, json_t *list)
{
    json_t *doc = json_pack("{s:{s:s}, s:o}", "context", "host", "test", "benchmarks", list);
    char *text = gb_json_dump(doc, true);
    write_text(f, file, text);
    free(text);
    json_decref(doc);
}

#define BEST  "gemm_f32/K=1024,M=1024,N=1024/best"
#define REF   "gemm_f32/K=1024,M=1024,N=1024/reference"
#define TRIAL "gemm_f32/K=1024,M=1024,N=1024/BK=8,BM=64,BN=64"

/* OLD and NEW of our kind; best is best_change slower in NEW, the rest unchanged. */
static void write_pair(fixture *f, double best_change)
{
    json_t *old = json_array(), *new_ = json_array();
    add_entry(old, BEST, "best", 1.0, 0.005, 30, 1);
    add_entry(old, REF, "baseline", 2.0, 0.005, 30, 2);
    add_entry(old, TRIAL, "trial", 1.5, 0.005, 30, 3);
    add_entry(old, "gemm_f32/K=64,M=64,N=64/best", "best", 0.01, 0.005, 30, 4);
    add_entry(new_, BEST, "best", 1.0 + best_change, 0.005, 30, 5);
    add_entry(new_, REF, "baseline", 2.0, 0.005, 30, 6);
    add_entry(new_, TRIAL, "trial", 1.8, 0.005, 30, 7);
    add_entry(new_, "gemm_f32/K=4096,M=4096,N=4096/best", "best", 3.0, 0.005, 30, 8);
    write_run(f, "old.json", old);
    write_run(f, "new.json", new_);
}

/* Google Benchmark's output with `reps` repetitions of BM_gemm/512 (ns), and BM_copy
 * reported only as aggregates. */
static void write_google(fixture *f, const char *file, double gemm_ns, int reps, uint64_t seed)
{
    json_t *list = json_array();
    gb_rng rng;
    gb_rng_seed(&rng, seed);
    for (int i = 0; i < reps; i++) {
        double t = gemm_ns * (1.0 + 0.004 * (gb_rng_uniform(&rng) - 0.5));
        json_array_append_new(list, json_pack("{s:s, s:s, s:s, s:i, s:i, s:f, s:f, s:s}", "name",
                                              "BM_gemm/512", "run_name", "BM_gemm/512", "run_type",
                                              "iteration", "repetition_index", i, "iterations", 100,
                                              "real_time", t, "cpu_time", t, "time_unit", "ns"));
    }
    static const char *const aggregates[] = {"mean", "median", "stddev"};
    for (int i = 0; i < 3; i++) {
        char name[64];
        snprintf(name, sizeof name, "BM_gemm/512_%s", aggregates[i]);
        json_array_append_new(list,
                              json_pack("{s:s, s:s, s:s, s:s, s:f, s:s}", "name", name, "run_name",
                                        "BM_gemm/512", "run_type", "aggregate", "aggregate_name",
                                        aggregates[i], "real_time", 1.0, "time_unit", "ns"));
        snprintf(name, sizeof name, "BM_copy_%s", aggregates[i]);
        json_array_append_new(list,
                              json_pack("{s:s, s:s, s:s, s:s, s:f, s:s}", "name", name, "run_name",
                                        "BM_copy", "run_type", "aggregate", "aggregate_name",
                                        aggregates[i], "real_time", 2.0 + i, "time_unit", "us"));
    }
    write_run(f, file, list);
}

/* ---- the loader ------------------------------------------------------------------ */

static void loader_reads_best_and_baseline_and_trials_with_all(void **state)
{
    fixture *f = *state;
    gb_sample_file file;
    gb_err err;
    write_pair(f, 0.1);
    if (gb_sample_file_load(path_of(f, "old.json"), false, &file, &err)) fail_msg("%s", err.msg);
    assert_string_equal(file.format, "gpubench");
    assert_int_equal(file.n, 3);
    assert_string_equal(file.sets[0].name, BEST);
    assert_int_equal(file.sets[0].n, 30);
    assert_float_equal(gb_compare_median(file.sets[0].samples_ms, 30), 1.0, 0.01);
    assert_null(gb_sample_file_find(&file, TRIAL));
    gb_sample_file_free(&file);
    if (gb_sample_file_load(path_of(f, "old.json"), true, &file, &err)) fail_msg("%s", err.msg);
    assert_int_equal(file.n, 4);
    assert_non_null(gb_sample_file_find(&file, TRIAL));
    gb_sample_file_free(&file);
    gb_sample_file_free(NULL);
}

static void loader_groups_google_benchmark_repetitions(void **state)
{
    fixture *f = *state;
    gb_sample_file file;
    gb_err err;
    write_google(f, "gb.json", 2000.0, 7, 1);
    if (gb_sample_file_load(path_of(f, "gb.json"), false, &file, &err)) fail_msg("%s", err.msg);
    assert_string_equal(file.format, "google-benchmark");
    assert_int_equal(file.n, 2);
    const gb_sample_set *gemm = gb_sample_file_find(&file, "BM_gemm/512");
    const gb_sample_set *copy = gb_sample_file_find(&file, "BM_copy");
    assert_non_null(gemm);
    assert_int_equal(gemm->n, 7); /* the repetitions, not the aggregates */
    for (int i = 0; i < 7; i++)
        assert_float_equal(gemm->samples_ms[i], 0.002, 0.002 * 0.003); /* 2000 ns in ms */
    assert_non_null(copy);
    assert_int_equal(copy->n, 1); /* its median: 3 us */
    assert_float_equal(copy->samples_ms[0], 0.003, 1e-12);
    gb_sample_file_free(&file);
}

static void loader_keeps_the_error_of_a_failed_entry(void **state)
{
    fixture *f = *state;
    gb_sample_file file;
    gb_err err;
    write_text(f, "failed.json",
               "{\"benchmarks\": [{\"name\": \"BM_x\", \"run_name\": \"BM_x\", \"run_type\": "
               "\"iteration\", \"error_occurred\": true, \"error_message\": \"out of memory\"},"
               "{\"name\": \"g/best\", \"role\": \"best\", \"error_occurred\": true, "
               "\"error_message\": \"launch failed\"}]}");
    if (gb_sample_file_load(path_of(f, "failed.json"), false, &file, &err)) fail_msg("%s", err.msg);
    assert_int_equal(file.n, 2);
    assert_int_equal(file.sets[0].n, 0);
    assert_string_equal(file.sets[0].error, "out of memory");
    assert_string_equal(file.sets[1].error, "launch failed");
    gb_sample_file_free(&file);
}

/* Each message names the file and, where there is one, the entry and its name. */
static void expect_load_error(fixture *f, const char *text, int code, const char *what)
{
    gb_sample_file file;
    gb_err err;
    write_text(f, "bad.json", text);
    assert_int_equal(gb_sample_file_load(path_of(f, "bad.json"), false, &file, &err), code);
    assert_int_equal(file.n, 0);
    if (!strstr(err.msg, "bad.json") || !strstr(err.msg, what))
        fail_msg("'%s' lacks 'bad.json' or '%s'", err.msg, what);
}

static void loader_errors_name_the_file_and_the_entry(void **state)
{
    fixture *f = *state;
    expect_load_error(f, "{\"context\": {}}", GB_EINVAL, "no \"benchmarks\" array");
    expect_load_error(f, "{\"benchmarks\": [", GB_EINVAL, "JSON");
    expect_load_error(
        f,
        "{\"benchmarks\": [{\"name\": \"a\", \"role\": \"best\", \"samples_ms\": [1]}, "
        "{\"name\": \"b\", \"role\": \"best\", \"samples_ms\": [1, \"x\"]}]}",
        GB_EINVAL, "benchmarks[1] (\"b\"): samples_ms[1]");
    expect_load_error(f, "{\"benchmarks\": [{\"name\": \"a\", \"role\": \"worst\"}]}", GB_EINVAL,
                      "benchmarks[0] (\"a\"): \"role\"");
    expect_load_error(f,
                      "{\"benchmarks\": [{\"name\": \"a\", \"role\": \"best\", \"samples_ms\": []},"
                      "{\"name\": \"a\", \"role\": \"best\", \"samples_ms\": []}]}",
                      GB_EINVAL, "benchmarks[1] (\"a\"): a second entry");
    expect_load_error(f,
                      "{\"benchmarks\": [{\"name\": \"BM\", \"real_time\": 1, \"time_unit\": "
                      "\"fortnights\"}]}",
                      GB_EINVAL, "benchmarks[0] (\"BM\"): \"time_unit\"");
    expect_load_error(f, "{\"benchmarks\": [{\"run_type\": \"iteration\"}]}", GB_EINVAL,
                      "benchmarks[0]: not an object with a \"name\"");
    /* a median its own samples contradict: the file was edited */
    expect_load_error(f,
                      "{\"benchmarks\": [{\"name\": \"a\", \"role\": \"best\", \"samples_ms\": "
                      "[1, 2, 3], \"statistics\": {\"median_ms\": 1.5}}]}",
                      GB_EINVAL,
                      "benchmarks[0] (\"a\"): statistics.median_ms 1.5 is not the median of its "
                      "samples_ms (2)");
    gb_sample_file file;
    gb_err err;
    assert_int_equal(gb_sample_file_load(path_of(f, "absent.json"), false, &file, &err), GB_EIO);
    assert_non_null(strstr(err.msg, "absent.json"));
}

/* ---- the command ------------------------------------------------------------------ */

static void slower_entry_exits_1(void **state)
{
    fixture *f = *state;
    write_pair(f, 0.10);
    compare(f, "old.json new.json");
    expect_status(f, 1);
    char *row = strstr(f->out, BEST);
    assert_non_null(row);
    assert_non_null(strstr(row, "SLOWER"));
    assert_non_null(strstr(f->out, "only in OLD (old.json): 1\n  gemm_f32/K=64,M=64,N=64/best"));
    assert_non_null(strstr(f->out, "only in NEW (new.json): 1\n  gemm_f32/K=4096"));
    assert_non_null(strstr(f->out, "compare: 2 pairs"));
    assert_non_null(strstr(f->out, "0 faster, 1 slower, 1 same, 0 unsure"));
    assert_null(strstr(f->out, TRIAL));   /* trials only with --all */
    assert_null(strstr(f->out, "\033[")); /* no colour off a terminal */
}

static void same_or_faster_exits_0(void **state)
{
    fixture *f = *state;
    write_pair(f, -0.10);
    compare(f, "old.json new.json");
    expect_status(f, 0);
    assert_non_null(strstr(f->out, "1 faster, 0 slower, 1 same"));
    write_pair(f, 0.10); /* slower, but not by more than 15% */
    compare(f, "--threshold 15 old.json new.json");
    expect_status(f, 0);
    assert_non_null(strstr(f->out, "0 faster, 0 slower, 2 same"));
}

/* A benchmark that worked in OLD and reports an error in NEW broke: exit 1. One
 * that failed in both, or only in OLD, does not fail the gate. */
static void an_entry_that_fails_in_new_only_exits_1(void **state)
{
    fixture *f = *state;
    json_t *old = json_array(), *new_ = json_array();
    add_entry(old, BEST, "best", 1.0, 0.005, 30, 1);
    json_array_append_new(new_, json_pack("{s:s, s:s, s:b, s:s, s:f, s:f, s:s}", "name", BEST,
                                          "role", "best", "error_occurred", 1, "error_message",
                                          "no configuration passed (2 wrong)", "real_time", 0.0,
                                          "cpu_time", 0.0, "time_unit", "us"));
    write_run(f, "old.json", old);
    write_run(f, "new.json", new_);
    compare(f, "old.json new.json");
    expect_status(f, 1);
    assert_non_null(strstr(f->out, "failed in NEW: no configuration passed (2 wrong)"));
    assert_non_null(strstr(f->out, ", 1 failed in NEW only\n"));
    compare(f, "new.json old.json"); /* fixed: not a regression */
    expect_status(f, 0);
}

static void all_and_filter_choose_the_entries(void **state)
{
    fixture *f = *state;
    write_pair(f, 0.0);
    compare(f, "--all old.json new.json"); /* the trial went from 1.5 to 1.8 ms */
    expect_status(f, 1);
    assert_non_null(strstr(strstr(f->out, TRIAL), "SLOWER"));
    compare(f, "--all --filter '/(best|reference)$' old.json new.json");
    expect_status(f, 0);
    assert_null(strstr(f->out, TRIAL));
    assert_non_null(strstr(f->out, "compare: 2 pairs"));
}

static void json_output_parses(void **state)
{
    fixture *f = *state;
    json_t *doc = NULL;
    gb_err err;
    write_pair(f, 0.10);
    compare(f, "--json old.json new.json");
    expect_status(f, 1);
    if (gb_json_parse(f->out, strlen(f->out), &doc, &err)) fail_msg("%s\n%s", err.msg, f->out);
    const json_t *pairs = gb_json_get(doc, "pairs");
    assert_int_equal(gb_json_len(pairs), 2);
    const json_t *best = gb_json_at(pairs, 0);
    assert_string_equal(gb_json_str(gb_json_get(best, "name"), ""), BEST);
    assert_string_equal(gb_json_str(gb_json_get(best, "verdict"), ""), "SLOWER");
    assert_string_equal(gb_json_str(gb_json_get(best, "test"), ""), "normal");
    assert_int_equal((int)gb_json_num(gb_json_get(best, "n_old"), 0), 30);
    assert_float_equal(gb_json_num(gb_json_get(best, "ratio"), 0), 1.1, 0.01);
    assert_true(gb_json_num(gb_json_get(best, "p_value"), 1) < 1e-6);
    assert_int_equal((int)gb_json_num(gb_json_get(gb_json_get(doc, "counts"), "slower"), 0), 1);
    assert_float_equal(gb_json_num(gb_json_get(doc, "geomean_ratio"), 0), sqrt(1.1), 0.01);
    assert_int_equal(gb_json_len(gb_json_get(doc, "only_old")), 1);
    assert_int_equal(gb_json_len(gb_json_get(doc, "only_new")), 1);
    json_decref(doc);
}

static void google_benchmark_repetitions_are_compared(void **state)
{
    fixture *f = *state;
    write_google(f, "old.json", 2000.0, 10, 1);
    write_google(f, "new.json", 2400.0, 10, 2);
    compare(f, "old.json new.json");
    expect_status(f, 1);
    assert_non_null(strstr(strstr(f->out, "BM_gemm/512"), "SLOWER"));
    assert_non_null(strstr(strstr(f->out, "BM_copy"), "UNSURE")); /* one value a side */
    assert_non_null(strstr(f->out, " us ")); /* 2000 ns shown in microseconds */
    write_google(f, "new.json", 2000.0, 10, 3);
    compare(f, "old.json new.json");
    expect_status(f, 0);
    assert_non_null(strstr(strstr(f->out, "BM_gemm/512"), "SAME"));
}

static void usage_and_unreadable_files_exit_2(void **state)
{
    fixture *f = *state;
    write_pair(f, 0.0);
    compare(f, "old.json");
    expect_status(f, 2);
    assert_non_null(strstr(f->err, "two files are needed"));
    compare(f, "old.json new.json extra.json");
    expect_status(f, 2);
    compare(f, "--threshold -1 old.json new.json");
    expect_status(f, 2);
    compare(f, "--alpha 1 old.json new.json");
    expect_status(f, 2);
    compare(f, "--filter '(' old.json new.json");
    expect_status(f, 2);
    compare(f, "old.json absent.json");
    expect_status(f, 2);
    assert_non_null(strstr(f->err, "absent.json"));
    write_text(f, "text.json", "not json");
    compare(f, "text.json new.json");
    expect_status(f, 2);
    assert_non_null(strstr(f->err, "text.json"));
    compare(f, "--help");
    expect_status(f, 0);
    assert_non_null(strstr(f->out, "exit status: 0 nothing SLOWER"));
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(loader_reads_best_and_baseline_and_trials_with_all),
        T(loader_groups_google_benchmark_repetitions),
        T(loader_keeps_the_error_of_a_failed_entry),
        T(loader_errors_name_the_file_and_the_entry),
        T(slower_entry_exits_1),
        T(same_or_faster_exits_0),
        T(an_entry_that_fails_in_new_only_exits_1),
        T(all_and_filter_choose_the_entries),
        T(json_output_parses),
        T(google_benchmark_repetitions_are_compared),
        T(usage_and_unreadable_files_exit_2),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
