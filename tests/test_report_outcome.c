/* What became of a shape, in the one word every output uses (report/result.h):
 * which situation wins when several hold, and the sentence each gives. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "report/result.h"

#include <string.h>

static const char *word(const gb_shape_result *s, bool bench)
{
    gb_report_entry e = {.kernel = "k", .result = s, .bench = bench};
    return gb_outcome_name(gb_entry_outcome(&e));
}

static void reason(const gb_shape_result *s, char *out, size_t n)
{
    gb_report_entry e = {.kernel = "k", .result = s};
    gb_strbuf sb = GB_STRBUF_INIT;
    gb_entry_reason(&e, &sb);
    assert_int_equal(gb_sb_status(&sb), 0);
    snprintf(out, n, "%s", gb_sb_str(&sb));
    gb_sb_free(&sb);
}

static void test_a_best_is_tuned_resumed_cache_bench_or_contended(void **state)
{
    (void)state;
    gb_shape_result s = {.has_best = true, .n_evals = 3};
    assert_string_equal(word(&s, false), "tuned");
    assert_string_equal(word(&s, true), "bench");
    s.n_resumed = 2;
    assert_string_equal(word(&s, false), "resumed");
    char text[256];
    reason(&s, text, sizeof text);
    assert_string_equal(text, "went on from 2 trials of an earlier run");
    s.cached = true;
    assert_string_equal(word(&s, false), "cache");
    s.contended = true;
    assert_string_equal(word(&s, false), "cache"); /* nothing was measured now */
    s.cached = false;
    assert_string_equal(word(&s, false), "contended");
    s.interrupted = true;
    assert_string_equal(word(&s, false), "interrupted");
    reason(&s, text, sizeof text);
    assert_string_equal(text, "interrupted: the best of what finished");
}

static void test_no_best_is_no_valid_variant_or_the_shapes_own_failure(void **state)
{
    (void)state;
    char text[256];
    gb_shape_result s = {.n_evals = 3};
    s.n_status[GB_TRIAL_WRONG] = 2;
    s.n_status[GB_TRIAL_CRASHED] = 1;
    assert_string_equal(word(&s, false), "no valid variant");
    reason(&s, text, sizeof text);
    assert_string_equal(text, "no configuration passed (2 wrong, 1 crashed)");
    s.failure = "reference ref: it faulted";
    assert_string_equal(word(&s, false), "failed");
    assert_true(gb_outcome_is_bad(GB_OUTCOME_FAILED));
    reason(&s, text, sizeof text);
    assert_string_equal(text, "reference ref: it faulted");
}

static void test_compile_only_is_compiled_unless_nothing_compiled(void **state)
{
    (void)state;
    char text[256];
    gb_shape_result s = {.compile_only = true, .n_compiled = 1, .n_rejected = 4};
    s.n_status[GB_TRIAL_COMPILE_ERROR] = 2;
    assert_string_equal(word(&s, false), "compiled");
    assert_false(gb_outcome_is_bad(GB_OUTCOME_COMPILED));
    reason(&s, text, sizeof text);
    assert_string_equal(text, "compile-only: 1 variant compiled, 2 failed to compile, 4 "
                              "configurations rejected by the constraints; nothing was timed");
    s.n_compiled = 0;
    assert_string_equal(word(&s, false), "no valid variant");
    reason(&s, text, sizeof text);
    assert_string_equal(text, "no configuration passed (2 compile_error)");
}

static void test_a_compile_rows_status(void **state)
{
    (void)state;
    gb_compile_row row = {0};
    assert_string_equal(gb_compile_row_status(&row), "compiled");
    row.cached = true;
    assert_string_equal(gb_compile_row_status(&row), "cache");
    row.limit = "too much shared memory";
    assert_string_equal(gb_compile_row_status(&row), "over limits");
    row.error = "k.cu:1: error";
    assert_string_equal(gb_compile_row_status(&row), "compile_error");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_best_is_tuned_resumed_cache_bench_or_contended),
        cmocka_unit_test(test_no_best_is_no_valid_variant_or_the_shapes_own_failure),
        cmocka_unit_test(test_compile_only_is_compiled_unless_nothing_compiled),
        cmocka_unit_test(test_a_compile_rows_status),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
