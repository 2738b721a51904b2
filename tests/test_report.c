/*
 * The run summary's account of where the trials' time went (report/table.c): the
 * per-trial averages of the phases the GPU session timed, the overhead around
 * them split between the worker and the round trip to it, and what the timer cost
 * a sample; and the lines a shape's best gets for what its race saw.
 */
#include "report/table.h"

#include "engine/nvml.h"

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
static char *report_timed_by(const gb_tune_timing *timing, const char *timer)
{
    gb_tune_result result = {.timing = *timing};
    snprintf(result.timer, sizeof result.timer, "%s", timer);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_non_null(out);
    gb_report_opts opts = {0};
    gb_report_tune(out, "k", &result, &opts);
    fclose(out);
    return text;
}

static char *report(const gb_tune_timing *timing)
{
    return report_timed_by(timing, "");
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

static void test_the_timer_line_gives_what_reading_it_cost_a_sample(void **state)
{
    (void)state;
    gb_tune_timing t = {
        .total_s = 1,
        .screening_s = 0.5,
        .n_trials = 2,
        .trial_phases = {
            .sample_ms = 10, .timer_ms = 2, .n_samples = 100, .session_ms = 12, .total_ms = 13}};
    char *text = report_timed_by(&t, "cupti");
    assert_contains(text, "  timer: CUPTI's kernel records, 0.020 ms a sample to read\n");
    free(text);
    text = report_timed_by(&t, "events");
    assert_contains(text, "  timer: CUDA events, 0.020 ms a sample to read\n");
    free(text);
}

static char *shape_lines(const gb_shape_result *s)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_non_null(out);
    gb_summary_shape(out, s, false, false);
    fclose(out);
    return text;
}

static void
test_a_best_says_what_its_first_launches_cost_and_why_samples_were_left_out(void **state)
{
    (void)state;
    gb_shape_result s = {.has_best = true,
                         .best = {.median = 0.025},
                         .best_measurement = {.switch_ms = 0.028,
                                              .n_switch = 5,
                                              .n_samples = 20,
                                              .n_throttled = 3,
                                              .throttle_reasons = GB_NVML_REASON_SW_POWER_CAP,
                                              .n_lost = 2}};
    char *text = shape_lines(&s);
    assert_contains(text, "    its first launch after another kernel: 0.028 ms (+12.0%), 5 such "
                          "launches in the race, kept apart\n");
    assert_contains(text, "    3 of 20 samples taken while the GPU throttled (SM clock under the "
                          "threshold; NVML: sw_power_cap) were left out\n");
    assert_contains(text, "    2 sample(s) taken again: CUPTI lost their kernel records\n");
    free(text);
}

/* A run read back from a JSON file written before switch_launches knows the first
 * launches' time, not their count. */
static void test_a_first_launch_figure_without_its_count_says_no_count(void **state)
{
    (void)state;
    gb_shape_result s = {.has_best = true,
                         .best = {.median = 0.025},
                         .best_measurement = {.switch_ms = 0.028, .n_samples = 20}};
    char *text = shape_lines(&s);
    assert_contains(text, "    its first launch after another kernel: 0.028 ms (+12.0%), kept "
                          "apart\n");
    assert_null(strstr(text, "such launches"));
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_timer_line_gives_what_reading_it_cost_a_sample),
        cmocka_unit_test(
            test_a_best_says_what_its_first_launches_cost_and_why_samples_were_left_out),
        cmocka_unit_test(test_a_first_launch_figure_without_its_count_says_no_count),
        cmocka_unit_test(test_each_trial_line_gives_the_average_phases_and_splits_the_overhead),
        cmocka_unit_test(test_no_phases_no_line),
        cmocka_unit_test(test_an_overhead_below_zero_shows_as_zero),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
