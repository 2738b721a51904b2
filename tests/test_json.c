/*
 * base/json.h, the layer over jansson: what it refuses (with the position), how it
 * writes numbers, and the lookups that tolerate NULL and the wrong type.
 */
#include "base/json.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static json_t *parse_ok(const char *text)
{
    json_t *json = NULL;
    gb_err err;
    gb_err_clear(&err);
    int rc = gb_json_parse(text, strlen(text), &json, &err);
    if (rc) fail_msg("parse of %s failed: %s", text, err.msg);
    return json;
}

/* Parses text, expects a refusal, and returns its message. */
static const char *parse_error(const char *text, size_t len, gb_err *err)
{
    json_t *json = (json_t *)(uintptr_t)1;
    gb_err_clear(err);
    assert_int_equal(gb_json_parse(text, len, &json, err), GB_EINVAL);
    assert_null(json);
    assert_int_equal(err->code, GB_EINVAL);
    return err->msg;
}

static void refused_at(const char *text, size_t len, const char *part, const char *file, int line)
{
    gb_err err;
    const char *msg = parse_error(text, len, &err);
    if (strstr(msg, part)) return;
    print_error("refusing %s: \"%s\" does not contain \"%s\"\n", text, msg, part);
    _fail(file, line);
}
/* The text is refused with a message containing part. */
#define assert_refused(text, part) refused_at((text), strlen(text), (part), __FILE__, __LINE__)

/* Dumps j and compares the text. */
static void dumps_at(const json_t *j, bool pretty, const char *want, const char *file, int line)
{
    char *got = gb_json_dump(j, pretty);
    if (got && strcmp(got, want) == 0) {
        free(got);
        return;
    }
    print_error("dumped as \"%s\", expected \"%s\"\n", got ? got : "(NULL)", want);
    free(got);
    _fail(file, line);
}
#define assert_dumps(j, pretty, want) dumps_at((j), (pretty), (want), __FILE__, __LINE__)

static void assert_round_trip(const char *text)
{
    json_t *json = parse_ok(text);
    assert_dumps(json, false, text);
    json_decref(json);
}

static void test_compact_text_round_trips_with_keys_in_insertion_order(void **state)
{
    assert_round_trip("{}");
    assert_round_trip("[]");
    assert_round_trip("null");
    assert_round_trip("[true,false,null,0,-1,0.5,\"x\"]");
    assert_round_trip("{\"b\":1,\"a\":2}");
    assert_round_trip("{\"a\":[1,{\"b\":[[],{}]}],\"c\":{\"d\":\"e\"}}");
}

static void test_whitespace_is_skipped(void **state)
{
    json_t *json = parse_ok(" \t\r\n{ \"a\" : [ 1 , 2 ] }\n");
    assert_dumps(json, false, "{\"a\":[1,2]}");
    json_decref(json);
}

static void test_escapes_are_decoded_and_written_back(void **state)
{
    json_t *json = parse_ok("\"q\\\" b\\\\ s\\/ \\b\\f\\n\\r\\t \\u0001\"");
    assert_string_equal(gb_json_str(json, NULL), "q\" b\\ s/ \b\f\n\r\t \x01");
    assert_dumps(json, false, "\"q\\\" b\\\\ s/ \\b\\f\\n\\r\\t \\u0001\"");
    json_decref(json);
}

static void test_unicode_escapes_become_utf8_written_as_is(void **state)
{
    json_t *json = parse_ok("[\"\\u0041\", \"\\u00e9\", \"\\u20AC\", \"\\ud83d\\ude00\"]");
    assert_string_equal(gb_json_str(gb_json_at(json, 0), NULL), "A");
    assert_string_equal(gb_json_str(gb_json_at(json, 1), NULL), "\xc3\xa9");
    assert_string_equal(gb_json_str(gb_json_at(json, 2), NULL), "\xe2\x82\xac");
    assert_string_equal(gb_json_str(gb_json_at(json, 3), NULL), "\xf0\x9f\x98\x80");
    assert_dumps(json, false, "[\"A\",\"\xc3\xa9\",\"\xe2\x82\xac\",\"\xf0\x9f\x98\x80\"]");
    json_decref(json);
}

static void test_nul_characters_lone_surrogates_and_bad_utf8_are_refused(void **state)
{
    assert_refused("\"a\\u0000b\"", "\\u0000 is not allowed");
    assert_refused("\"\\ud83d\"", "invalid Unicode");
    assert_refused("\"\\u12\"", "invalid escape");
    assert_refused("\"\\x\"", "invalid escape");
    assert_refused("\"\xc3\x28\"", "unable to decode byte 0xc3");
    refused_at("\"a\0b\"", 5, "control character 0x0", __FILE__, __LINE__); /* a raw NUL */
}

static void test_duplicate_keys_are_refused(void **state)
{
    assert_refused("{\"n\": 1, \"m\": 2, \"n\": 3}", "duplicate object key");
    assert_refused("{\"a\": {\"k\": 1, \"k\": 1}}", "duplicate object key");
}

static void test_errors_name_line_column_and_byte(void **state)
{
    gb_err err;
    const char *text = "{\n  \"a\": 1,\n  \"b\" 2\n}";
    const char *msg = parse_error(text, strlen(text), &err);
    assert_non_null(strstr(msg, "JSON line 3, column 7 (byte 19)"));
    assert_non_null(strstr(msg, "':' expected"));
    assert_refused("[1, 2,\n oops]", "JSON line 2");
    assert_refused("[1 2]", "line 1, column 4");
}

static void test_malformed_text_is_refused(void **state)
{
    assert_refused("", "end of file");
    assert_refused("{\"a\":1} x", "end of file expected");
    assert_refused("\"abc", "premature end of input");
    assert_refused("\"a\tb\"", "control character");
    assert_refused("{1: 2}", "string or '}' expected");
    assert_refused("[1,]", "unexpected token");
    assert_refused("tru", "invalid token");
    assert_refused("-", "invalid token");
    assert_refused("1.2.3", "end of file expected");
    assert_refused("NaN", "invalid token");
}

static void test_parse_stops_at_the_given_length(void **state)
{
    json_t *json = NULL;
    assert_int_equal(gb_json_parse("[1]garbage", 3, &json, NULL), GB_OK);
    assert_int_equal(gb_json_len(json), 1);
    json_decref(json);
}

static void test_deep_nesting_is_refused_not_crashed(void **state)
{
    size_t depth = 100000;
    char *text = malloc(depth);
    assert_non_null(text);
    memset(text, '[', depth);
    refused_at(text, depth, "maximum parsing depth", __FILE__, __LINE__);
    free(text);
}

static void test_text_over_the_limit_is_refused_before_it_is_read(void **state)
{
    /* Never touched: the length alone is refused. */
    char *text = malloc(GB_JSON_MAX_TEXT + 1);
    assert_non_null(text);
    refused_at(text, GB_JSON_MAX_TEXT + 1, "over the limit", __FILE__, __LINE__);
    free(text);
}

static void test_a_large_array_parses(void **state)
{
    size_t n = 1000000;
    char *text = malloc(2 * n + 2);
    assert_non_null(text);
    text[0] = '[';
    for (size_t i = 0; i < n; i++) {
        text[1 + 2 * i] = '7';
        text[2 + 2 * i] = i + 1 < n ? ',' : ']';
    }
    json_t *json = NULL;
    assert_int_equal(gb_json_parse(text, 2 * n + 1, &json, NULL), GB_OK);
    assert_int_equal(gb_json_len(json), n);
    json_decref(json);
    free(text);
}

static void test_64_bit_integers_are_exact_and_wider_ones_refused(void **state)
{
    json_t *json = parse_ok("[-9223372036854775808, 9223372036854775807, 9007199254740993]");
    assert_true(json_integer_value(gb_json_at(json, 0)) == INT64_MIN);
    assert_true(json_integer_value(gb_json_at(json, 1)) == INT64_MAX);
    assert_true(json_integer_value(gb_json_at(json, 2)) == ((int64_t)1 << 53) + 1);
    assert_dumps(json, false, "[-9223372036854775808,9223372036854775807,9007199254740993]");
    json_decref(json);
    assert_refused("9223372036854775808", "too big integer");
    assert_refused("-9223372036854775809", "too big negative integer");
    assert_refused("1e400", "real number overflow");
}

static void test_nan_and_infinity_are_written_as_null(void **state)
{
    const double values[] = {NAN, INFINITY, -INFINITY};
    for (size_t i = 0; i < sizeof values / sizeof *values; i++) {
        json_t *j = gb_json_real(values[i]);
        assert_true(json_is_null(j));
        json_decref(j);
    }
}

static void assert_real_written_as(double v, const char *text)
{
    json_t *j = gb_json_real(v);
    assert_dumps(j, false, text);
    json_decref(j);
}

static void test_reals_are_written_with_17_digits_and_stay_reals(void **state)
{
    assert_real_written_as(0.1, "0.10000000000000001");
    assert_real_written_as(0.25, "0.25");
    assert_real_written_as(2.0, "2.0"); /* a real, not the integer 2 */
    assert_real_written_as(1e300, "1.0000000000000001e300");
    assert_real_written_as(3.0517578125e-05, "3.0517578125e-5"); /* 2^-15, exact */
}

static void test_reals_round_trip_exactly(void **state)
{
    const double values[] = {0.1, 1.0 / 3, 6.02214076e23, -2.2250738585072014e-308, 123.5, -0.0};
    for (size_t i = 0; i < sizeof values / sizeof *values; i++) {
        json_t *j = gb_json_real(values[i]);
        char *text = gb_json_dump(j, false);
        json_t *back = parse_ok(text);
        assert_true(json_is_real(back));
        assert_true(gb_json_num(back, NAN) == values[i]);
        assert_true(signbit(gb_json_num(back, NAN)) == signbit(values[i]));
        json_decref(back);
        json_decref(j);
        free(text);
    }
}

static void test_pretty_output_indents_by_two(void **state)
{
    json_t *json = parse_ok("{\"a\": 1, \"b\": [true, null], \"c\": {}, \"d\": \"x\"}");
    assert_dumps(json, true,
                 "{\n"
                 "  \"a\": 1,\n"
                 "  \"b\": [\n"
                 "    true,\n"
                 "    null\n"
                 "  ],\n"
                 "  \"c\": {},\n"
                 "  \"d\": \"x\"\n"
                 "}");
    json_decref(json);
}

static void test_nested_values_are_reachable_by_lookups(void **state)
{
    json_t *json = parse_ok("{\"stats\": {\"median_ms\": 1.25, \"samples\": [3, 4, 5]},"
                            " \"ok\": true, \"name\": \"gemm\"}");
    const json_t *stats = gb_json_get(json, "stats");
    assert_true(gb_json_num(gb_json_get(stats, "median_ms"), 0) == 1.25);
    assert_int_equal(gb_json_len(gb_json_get(stats, "samples")), 3);
    assert_true(gb_json_num(gb_json_at(gb_json_get(stats, "samples"), 2), 0) == 5); /* integer */
    assert_true(gb_json_bool(gb_json_get(json, "ok"), false));
    assert_string_equal(gb_json_str(gb_json_get(json, "name"), NULL), "gemm");
    assert_int_equal(gb_json_len(json), 3); /* an object's keys */
    json_decref(json);
}

static void test_lookups_tolerate_null_and_the_wrong_type(void **state)
{
    json_t *json = parse_ok("{\"n\": 7, \"s\": \"x\", \"a\": [1]}");
    const json_t *n = gb_json_get(json, "n");
    assert_null(gb_json_get(NULL, "n"));
    assert_null(gb_json_get(n, "n"));
    assert_null(gb_json_get(json, "missing"));
    assert_null(gb_json_get(gb_json_get(gb_json_get(json, "x"), "y"), "z"));
    assert_null(gb_json_at(NULL, 0));
    assert_null(gb_json_at(n, 0));
    assert_null(gb_json_at(json, 0)); /* an object is not indexed */
    assert_null(gb_json_at(gb_json_get(json, "a"), 1));
    assert_int_equal(gb_json_len(NULL), 0);
    assert_int_equal(gb_json_len(n), 0);
    assert_true(gb_json_num(gb_json_get(json, "s"), -1) == -1);
    assert_true(gb_json_num(NULL, 2.5) == 2.5);
    assert_string_equal(gb_json_str(n, "fallback"), "fallback");
    assert_null(gb_json_str(NULL, NULL));
    assert_true(gb_json_bool(n, true));
    assert_false(gb_json_bool(NULL, false));
    assert_null(gb_json_dump(NULL, false));
    json_decref(json);
}

static void test_text_replaces_bad_utf8_and_cuts_on_a_character_boundary(void **state)
{
    json_t *j = gb_json_text("ok \xff \xc3\xa9 \xed\xa0\x80!", 0);
    assert_string_equal(json_string_value(j), "ok \xef\xbf\xbd \xc3\xa9 \xef\xbf\xbd\xef\xbf\xbd"
                                              "\xef\xbf\xbd!");
    json_decref(j);
    j = gb_json_text("ab\xc3\xa9", 3); /* é would end past 3 bytes: cut before it */
    assert_string_equal(json_string_value(j), "ab");
    json_decref(j);
    j = gb_json_text("", 0);
    assert_string_equal(json_string_value(j), "");
    json_decref(j);
}

static void test_set_reports_a_missing_value_as_out_of_memory(void **state)
{
    json_t *obj = json_object();
    assert_int_equal(gb_json_set(obj, "a", json_integer(1)), GB_OK);
    assert_int_equal(gb_json_set(obj, "b", NULL), GB_ENOMEM);
    assert_int_equal(gb_json_len(obj), 1);
    json_decref(obj);
}

static void test_quote_escapes_as_cache_keys_were_always_made(void **state)
{
    gb_strbuf sb = GB_STRBUF_INIT;
    gb_json_quote(&sb, "a\x01z\x1f \"q\" \\ / \n\r\t \xc3\xa9");
    assert_string_equal(gb_sb_str(&sb), "\"a\\u0001z\\u001f \\\"q\\\" \\\\ / \\n\\r\\t \xc3\xa9\"");
    gb_sb_free(&sb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compact_text_round_trips_with_keys_in_insertion_order),
        cmocka_unit_test(test_whitespace_is_skipped),
        cmocka_unit_test(test_escapes_are_decoded_and_written_back),
        cmocka_unit_test(test_unicode_escapes_become_utf8_written_as_is),
        cmocka_unit_test(test_nul_characters_lone_surrogates_and_bad_utf8_are_refused),
        cmocka_unit_test(test_duplicate_keys_are_refused),
        cmocka_unit_test(test_errors_name_line_column_and_byte),
        cmocka_unit_test(test_malformed_text_is_refused),
        cmocka_unit_test(test_parse_stops_at_the_given_length),
        cmocka_unit_test(test_deep_nesting_is_refused_not_crashed),
        cmocka_unit_test(test_text_over_the_limit_is_refused_before_it_is_read),
        cmocka_unit_test(test_a_large_array_parses),
        cmocka_unit_test(test_64_bit_integers_are_exact_and_wider_ones_refused),
        cmocka_unit_test(test_nan_and_infinity_are_written_as_null),
        cmocka_unit_test(test_reals_are_written_with_17_digits_and_stay_reals),
        cmocka_unit_test(test_reals_round_trip_exactly),
        cmocka_unit_test(test_pretty_output_indents_by_two),
        cmocka_unit_test(test_nested_values_are_reachable_by_lookups),
        cmocka_unit_test(test_lookups_tolerate_null_and_the_wrong_type),
        cmocka_unit_test(test_text_replaces_bad_utf8_and_cuts_on_a_character_boundary),
        cmocka_unit_test(test_set_reports_a_missing_value_as_out_of_memory),
        cmocka_unit_test(test_quote_escapes_as_cache_keys_were_always_made),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
