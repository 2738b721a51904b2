/*
 * The run summary's account of where the trials' time went (report/table.c): the
 * per-trial averages of the phases the GPU session timed, and the overhead around
 * them split between the worker and the round trip to it.
 */
#include "report/table.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static void contains_at(const char *text, const char *part, const char *file, int line)
{
    if (strstr(text, part)) return;
    print_error("\"%s\" does not contain \"%s\"\n", text, part);
    _fail(file, line);
}
#define assert_contains(text, part) contains_at((text), (part), __FILE__, __LINE__)

/* The summary of a run with no shapes and this timing (free the text). */
static char *report(const gb_tune_timing *timing)
{
    gb_tune_result result = {.timing = *timing};
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_non_null(out);
    gb_report_opts opts = {0};
    gb_report_tune(out, "k", &result, &opts);
    fclose(out);
    return text;
}

static void test_each_trial_line_gives_the_average_phases_and_splits_the_overhead(void **state)
{
    (void)state;
    /* Four trials: 2 s of screening, as the tuner and the executor saw it. */
    gb_tune_timing t = {.total_s = 3,
                        .screening_s = 2,
                        .n_trials = 4,
                        .trial_phases = {.load_ms = 4,
                                         .check_ms = 8,
                                         .warmup_ms = 1200,
                                         .sample_ms = 600,
                                         .kernel_ms = 400,
                                         .session_ms = 1900,
                                         .total_ms = 2000}};
    char *text = report(&t);
    assert_contains(text, "  time 3.0 s: 2.0 s in 4 trials (500 ms each)");
    assert_contains(text, "  each trial: 1.0 ms loading, 2.0 ms checking, 300.0 ms warming up, "
                          "150.0 ms sampling (100.0 ms in the kernel), 47.0 ms overhead "
                          "(22.0 ms in the worker, 25.0 ms round trip)\n");
    free(text);
}

/* Trials whose phases were never summed (no executor timed them) get no line
 * rather than a line of zeros. */
static void test_no_phases_no_line(void **state)
{
    (void)state;
    gb_tune_timing t = {.total_s = 1, .screening_s = 0.5, .n_trials = 2};
    char *text = report(&t);
    assert_contains(text, "in 2 trials");
    assert_null(strstr(text, "each trial:"));
    free(text);
}

/* Clocks read on two sides can disagree by a hair: no negative overhead. */
static void test_an_overhead_below_zero_shows_as_zero(void **state)
{
    (void)state;
    gb_tune_timing t = {.total_s = 1,
                        .screening_s = 0.01,
                        .n_trials = 1,
                        .trial_phases = {.load_ms = 1,
                                         .check_ms = 1,
                                         .warmup_ms = 4,
                                         .sample_ms = 4,
                                         .kernel_ms = 3,
                                         .session_ms = 9.9,
                                         .total_ms = 9.8}};
    char *text = report(&t);
    assert_contains(text, "0.0 ms overhead (0.0 ms in the worker, 0.0 ms round trip)");
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_trial_line_gives_the_average_phases_and_splits_the_overhead),
        cmocka_unit_test(test_no_phases_no_line),
        cmocka_unit_test(test_an_overhead_below_zero_shows_as_zero),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
