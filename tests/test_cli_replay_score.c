/* `gpubench replay FILE... --score` as a user meets it: the method named, each
 * space's set-up, a score per strategy and space, the last line, the same figures
 * on a second run, --json, a space too small for the cut-offs, and usage errors.
 * Runs the real binary from GB_BINARY_DIR/cli; CPU only. */
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

static int replay(scratch_command *c, const char *args)
{
    char src[1024];
    source_dir(src, sizeof src);
    return scratch_command_run(c,
                               "%s/cli/gpubench replay %s/tests/data/replay_kt.json "
                               "%s/tests/data/replay_export.json %s",
                               getenv("GB_BINARY_DIR"), src, src, args);
}

static int setup(void **state)
{
    return (*state = scratch_command_new("cli-replay-score")) ? 0 : -1;
}

static int teardown(void **state)
{
    scratch_command_free(*state);
    return 0;
}

static void test_score_prints_each_space_and_strategy_and_the_best(void **state)
{
    scratch_command *c = *state;
    assert_int_equal(replay(c, "--score --cutoff 0.8 --resolution 100 --seeds 5"), 0);
    assert_non_null(strstr(c->out, "score: autotuning_methodology 1.1.0 (b0075f8), calculated "
                                   "baseline, time axis\n"));
    assert_non_null(strstr(c->out, "cut-offs 0.5 to 0.8 of the way from the median to the "
                                   "optimum, 100 points, 5 repeats per strategy"));
    assert_non_null(strstr(c->out, "random search's 6 to 22 evaluations, budget 25; each "
                                   "evaluation costs 1 (the file has no costs)"));
    assert_non_null(strstr(c->out, "\nrandom "));
    assert_non_null(strstr(c->out, "\nauto "));
    const char *last = strstr(c->out, "\nscore: best=");
    assert_non_null(last);
    char first[sizeof c->out];
    snprintf(first, sizeof first, "%s", c->out);
    assert_int_equal(replay(c, "--score --cutoff 0.8 --resolution 100 --seeds 5"), 0);
    assert_string_equal(c->out, first); /* the same seeds: the same scores */
}

static void test_score_json_has_every_space_and_strategy(void **state)
{
    scratch_command *c = *state;
    assert_int_equal(replay(c, "--score --cutoff 0.8 --resolution 50 --seeds 3 --strategy random "
                               "--json"),
                     0);
    json_error_t jerr;
    json_t *doc = json_loads(c->out, 0, &jerr);
    assert_non_null(doc);
    assert_non_null(strstr(json_string_value(json_object_get(doc, "method")), "1.1.0"));
    assert_int_equal(json_array_size(json_object_get(doc, "spaces")), 2);
    json_t *random = json_array_get(json_object_get(doc, "strategies"), 0);
    assert_string_equal(json_string_value(json_object_get(random, "strategy")), "random");
    assert_int_equal(json_array_size(json_object_get(random, "spaces")), 2);
    assert_true(json_is_real(json_object_get(random, "score")));
    assert_string_equal(json_string_value(json_object_get(doc, "best")), "random");
    json_decref(doc);
}

/* At the default cut-offs these 216 configurations are too few: random search is
 * expected at the optimum within the range. Said per space; nothing scored is
 * exit status 1. */
static void test_a_space_too_small_is_said_and_nothing_scored_exits_1(void **state)
{
    scratch_command *c = *state;
    assert_int_equal(replay(c, "--score --seeds 2 --strategy random"), 1);
    assert_non_null(strstr(c->out, "not scored: random search is expected at the optimum within "
                                   "the range (the score would divide by 0)"));
    assert_non_null(strstr(c->out, "\nscore: no space could be scored\n"));
}

/* Another tool's searches, given with --runs, are scored on the same axis: runs
 * that find the optimum at once score 1 on their space and nothing on the other;
 * a runs file naming a space not given is refused. */
static void test_runs_of_another_tool_are_scored_beside_ours(void **state)
{
    scratch_command *c = *state;
    char text[2048] = "{\"space\": \"replay_export.json\", \"strategy\": \"other:fixed\", "
                      "\"runs\": [{\"costs_s\": [";
    for (int i = 0; i < 30; i++)
        strcat(text, i ? ", 1" : "1");
    strcat(text, "], \"times_ms\": [");
    for (int i = 0; i < 30; i++)
        strcat(text, i ? ", 0.191243" : "0.191243");
    strcat(text, "]}]}");
    assert_int_equal(scratch_write(c->dir, "runs.json", text), 0);
    assert_int_equal(replay(c, "--score --cutoff 0.8 --resolution 100 --seeds 3 --strategy random "
                               "--runs runs.json"),
                     0);
    const char *row = strstr(c->out, "\nother:fixed *");
    assert_non_null(row);
    char cells[4][16];
    assert_int_equal(
        sscanf(row, " other:fixed * %15s %15s %15s %15s", cells[0], cells[1], cells[2], cells[3]),
        4);
    assert_string_equal(cells[0], "-"); /* no runs on the first space */
    assert_string_equal(cells[1], "1.000");
    assert_string_equal(cells[2], "1.000");
    assert_string_equal(cells[3], "0.000");
    assert_non_null(strstr(c->out, "\nscore: best=other:fixed score=1.000 error=0.000 spaces=1\n"));
    memcpy(strstr(text, "replay_export"), "nowhere_there", 13); /* a space not given */
    assert_int_equal(scratch_write(c->dir, "runs.json", text), 0);
    assert_int_equal(replay(c, "--score --cutoff 0.8 --seeds 1 --strategy random --runs runs.json"),
                     1);
    assert_non_null(strstr(c->err, "runs.json: its space nowhere_there.json is none of the FILEs "
                                   "given"));
}

static void test_score_usage_errors_exit_2(void **state)
{
    scratch_command *c = *state;
    assert_int_equal(replay(c, "--seeds 2"), 2);
    assert_non_null(strstr(c->err, "several FILEs need --score"));
    assert_int_equal(replay(c, "--score --cutoff 0.6 --cutoff-start 0.7"), 2);
    assert_non_null(strstr(c->err, "--cutoff-start must be below --cutoff"));
    assert_int_equal(replay(c, "--runs x.json"), 2);
    assert_non_null(strstr(c->err, "--runs needs --score"));
    assert_int_equal(replay(c, "--score --resolution 1"), 2);
    assert_non_null(strstr(c->err, "--resolution needs a whole number from 2 to 1000000"));
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_score_prints_each_space_and_strategy_and_the_best),
        T(test_score_json_has_every_space_and_strategy),
        T(test_a_space_too_small_is_said_and_nothing_scored_exits_1),
        T(test_runs_of_another_tool_are_scored_beside_ours),
        T(test_score_usage_errors_exit_2),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
