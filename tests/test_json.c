#include "base/json.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static gb_json *parse_ok(const char *text)
{
    gb_json *json = NULL;
    gb_err err;
    gb_err_clear(&err);
    int rc = gb_json_parse(text, strlen(text), &json, &err);
    if (rc) fail_msg("parse of %s failed: %s", text, err.msg);
    return json;
}

/* Parses text and returns the message of the failure. */
static const char *parse_error(const char *text, gb_err *err)
{
    gb_json *json = NULL;
    gb_err_clear(err);
    assert_int_equal(gb_json_parse(text, strlen(text), &json, err), GB_EINVAL);
    assert_null(json);
    return err->msg;
}

/* Writes json compactly (or pretty) and returns the malloc'd text. */
static char *write_json(const gb_json *json, bool pretty)
{
    gb_strbuf sb = GB_STRBUF_INIT;
    gb_jw w;
    gb_jw_init(&w, &sb, pretty);
    gb_jw_value(&w, json);
    assert_int_equal(gb_sb_status(&sb), GB_OK);
    return gb_sb_take(&sb);
}

static void assert_round_trip(const char *text)
{
    gb_json *json = parse_ok(text);
    char *back = write_json(json, false);
    assert_string_equal(back, text);
    free(back);
    gb_json_free(json);
}

static void test_compact_text_round_trips(void **state)
{
    assert_round_trip("{}");
    assert_round_trip("[]");
    assert_round_trip("null");
    assert_round_trip("[true,false,null,0,-1,0.5,\"x\"]");
    assert_round_trip("{\"b\":1,\"a\":2}"); /* keys keep the order they were read in */
    assert_round_trip("{\"a\":[1,{\"b\":[[],{}]}],\"c\":{\"d\":\"e\"}}");
}

static void test_whitespace_is_skipped(void **state)
{
    gb_json *json = parse_ok(" \t\r\n{ \"a\" : [ 1 , 2 ] }\n");
    char *back = write_json(json, false);
    assert_string_equal(back, "{\"a\":[1,2]}");
    free(back);
    gb_json_free(json);
}

static void test_escapes_are_decoded_and_written_back(void **state)
{
    gb_json *json = parse_ok("\"q\\\" b\\\\ s\\/ \\b\\f\\n\\r\\t\"");
    assert_string_equal(gb_json_str(json, NULL), "q\" b\\ s/ \b\f\n\r\t");
    char *back = write_json(json, false);
    assert_string_equal(back, "\"q\\\" b\\\\ s/ \\u0008\\u000c\\n\\r\\t\"");
    free(back);
    gb_json_free(json);
}

static void test_unicode_escapes_become_utf8(void **state)
{
    gb_json *json = parse_ok("[\"\\u0041\", \"\\u00e9\", \"\\u20AC\", \"\\ud83d\\ude00\"]");
    assert_string_equal(gb_json_str(gb_json_at(json, 0), NULL), "A");
    assert_string_equal(gb_json_str(gb_json_at(json, 1), NULL), "\xc3\xa9");
    assert_string_equal(gb_json_str(gb_json_at(json, 2), NULL), "\xe2\x82\xac");
    assert_string_equal(gb_json_str(gb_json_at(json, 3), NULL), "\xf0\x9f\x98\x80");
    char *back = write_json(json, false); /* UTF-8 is written as is */
    assert_string_equal(back, "[\"A\",\"\xc3\xa9\",\"\xe2\x82\xac\",\"\xf0\x9f\x98\x80\"]");
    free(back);
    gb_json_free(json);
}

static void test_bad_unicode_escapes_are_refused(void **state)
{
    gb_err err;
    assert_non_null(strstr(parse_error("\"\\ud83d\"", &err), "surrogate"));
    assert_non_null(strstr(parse_error("\"\\ud83d\\u0041\"", &err), "surrogate"));
    assert_non_null(strstr(parse_error("\"\\u0000\"", &err), "NUL"));
    assert_non_null(strstr(parse_error("\"\\u12\"", &err), "escape"));
    assert_non_null(strstr(parse_error("\"\\x\"", &err), "bad escape"));
}

static void test_nested_values_are_reachable_by_lookups(void **state)
{
    gb_json *json = parse_ok("{\"stats\": {\"median_ms\": 1.25, \"samples\": [3, 4, 5]},"
                             " \"ok\": true, \"name\": \"gemm\"}");
    const gb_json *stats = gb_json_get(json, "stats");
    assert_true(gb_json_num(gb_json_get(stats, "median_ms"), 0) == 1.25);
    assert_int_equal(gb_json_len(gb_json_get(stats, "samples")), 3);
    assert_true(gb_json_num(gb_json_at(gb_json_get(stats, "samples"), 2), 0) == 5);
    assert_true(gb_json_bool(gb_json_get(json, "ok"), false));
    assert_string_equal(gb_json_str(gb_json_get(json, "name"), NULL), "gemm");
    gb_json_free(json);
}

static void test_lookups_tolerate_null_and_the_wrong_type(void **state)
{
    gb_json *json = parse_ok("{\"n\": 7, \"s\": \"x\", \"a\": [1]}");
    const gb_json *n = gb_json_get(json, "n");
    assert_null(gb_json_get(NULL, "n"));
    assert_null(gb_json_get(n, "n"));
    assert_null(gb_json_get(json, "missing"));
    assert_null(gb_json_get(gb_json_get(gb_json_get(json, "x"), "y"), "z"));
    assert_null(gb_json_at(NULL, 0));
    assert_null(gb_json_at(n, 0));
    assert_null(gb_json_at(gb_json_get(json, "a"), 1));
    assert_int_equal(gb_json_len(NULL), 0);
    assert_int_equal(gb_json_len(n), 0);
    assert_true(gb_json_num(gb_json_get(json, "s"), -1) == -1);
    assert_true(gb_json_num(NULL, 2.5) == 2.5);
    assert_string_equal(gb_json_str(n, "fallback"), "fallback");
    assert_null(gb_json_str(NULL, NULL));
    assert_true(gb_json_bool(n, true));
    assert_false(gb_json_bool(NULL, false));
    gb_json_free(json);
    gb_json_free(NULL);
}

static void test_errors_name_line_and_column(void **state)
{
    gb_err err;
    const char *msg = parse_error("{\n  \"a\": 1,\n  \"b\" 2\n}", &err);
    assert_non_null(strstr(msg, "line 3, column 7"));
    assert_non_null(strstr(msg, "expected ':'"));
    msg = parse_error("[1, 2,\n oops]", &err);
    assert_non_null(strstr(msg, "line 2, column 2"));
    msg = parse_error("[1 2]", &err);
    assert_non_null(strstr(msg, "line 1, column 4"));
    assert_non_null(strstr(msg, "expected ',' or ']'"));
}

static void test_malformed_text_is_refused(void **state)
{
    gb_err err;
    assert_non_null(strstr(parse_error("", &err), "end of text"));
    assert_non_null(strstr(parse_error("{\"a\":1} x", &err), "text after the value"));
    assert_non_null(strstr(parse_error("\"abc", &err), "unterminated string"));
    assert_non_null(strstr(parse_error("\"a\tb\"", &err), "control character"));
    assert_non_null(strstr(parse_error("{1: 2}", &err), "string key"));
    assert_non_null(strstr(parse_error("[1,]", &err), "unexpected character"));
    assert_non_null(strstr(parse_error("tru", &err), "unexpected character"));
    assert_non_null(strstr(parse_error("-", &err), "malformed number"));
    assert_non_null(strstr(parse_error("1.2.3", &err), "malformed number"));
}

static void test_parse_stops_at_the_given_length(void **state)
{
    gb_json *json = NULL;
    assert_int_equal(gb_json_parse("[1]garbage", 3, &json, NULL), GB_OK);
    assert_int_equal(gb_json_len(json), 1);
    gb_json_free(json);
}

static void test_deep_nesting_is_refused_not_crashed(void **state)
{
    size_t depth = 100000;
    char *text = malloc(depth + 1);
    assert_non_null(text);
    memset(text, '[', depth);
    text[depth] = '\0';
    gb_err err;
    assert_non_null(strstr(parse_error(text, &err), "nested too deeply"));
    free(text);
}

static char *write_one_number(double v)
{
    gb_strbuf sb = GB_STRBUF_INIT;
    gb_jw w;
    gb_jw_init(&w, &sb, false);
    gb_jw_num(&w, v);
    return gb_sb_take(&sb);
}

static void assert_number_written_as(double v, const char *text)
{
    char *got = write_one_number(v);
    assert_string_equal(got, text);
    free(got);
}

static void test_nan_and_infinity_are_written_as_null(void **state)
{
    assert_number_written_as(NAN, "null");
    assert_number_written_as(INFINITY, "null");
    assert_number_written_as(-INFINITY, "null");
}

static void test_integers_are_written_without_exponent(void **state)
{
    assert_number_written_as(0, "0");
    assert_number_written_as(-0.0, "0");
    assert_number_written_as(1e15, "1000000000000000");
    assert_number_written_as(-123456789, "-123456789");
    assert_number_written_as(9007199254740991.0, "9007199254740991");
    assert_number_written_as(0.1, "0.10000000000000001");
    assert_number_written_as(0.25, "0.25");
    assert_number_written_as(3.0517578125e-05, "3.0517578125e-05"); /* 2^-15, exact */

    gb_strbuf sb = GB_STRBUF_INIT;
    gb_jw w;
    gb_jw_init(&w, &sb, false);
    gb_jw_arr_begin(&w);
    gb_jw_int(&w, INT64_MIN);
    gb_jw_int(&w, INT64_MAX);
    gb_jw_arr_end(&w);
    assert_string_equal(gb_sb_str(&sb), "[-9223372036854775808,9223372036854775807]");
    gb_sb_free(&sb);
}

/* Beyond 2^53 a double is written with %.17g, even when it is integral. */
static void test_huge_numbers_are_written_with_an_exponent(void **state)
{
    assert_number_written_as(1e300, "1.0000000000000001e+300");
    assert_number_written_as(-6.02214076e23, "-6.0221407599999999e+23");
}

static void test_numbers_round_trip_exactly(void **state)
{
    const double values[] = {0.1, 1.0 / 3, 6.02214076e23, -2.2250738585072014e-308, 123.5};
    for (size_t i = 0; i < sizeof values / sizeof *values; i++) {
        char *text = write_one_number(values[i]);
        gb_json *json = parse_ok(text);
        assert_true(gb_json_num(json, NAN) == values[i]);
        gb_json_free(json);
        free(text);
    }
}

static void test_pretty_output_indents_by_two(void **state)
{
    gb_strbuf sb = GB_STRBUF_INIT;
    gb_jw w;
    gb_jw_init(&w, &sb, true);
    gb_jw_obj_begin(&w);
    gb_jw_key(&w, "a");
    gb_jw_int(&w, 1);
    gb_jw_key(&w, "b");
    gb_jw_arr_begin(&w);
    gb_jw_bool(&w, true);
    gb_jw_null(&w);
    gb_jw_arr_end(&w);
    gb_jw_key(&w, "c");
    gb_jw_obj_begin(&w);
    gb_jw_obj_end(&w);
    gb_jw_key(&w, "d");
    gb_jw_str(&w, NULL);
    gb_jw_obj_end(&w);
    assert_string_equal(gb_sb_str(&sb), "{\n"
                                        "  \"a\": 1,\n"
                                        "  \"b\": [\n"
                                        "    true,\n"
                                        "    null\n"
                                        "  ],\n"
                                        "  \"c\": {},\n"
                                        "  \"d\": null\n"
                                        "}");
    gb_sb_free(&sb);
}

static void test_pretty_output_parses_back_to_the_same_value(void **state)
{
    const char *text = "{\"a\":[1,{\"b\":[[],{}]}],\"c\":{\"d\":\"e\\n\"}}";
    gb_json *json = parse_ok(text);
    char *pretty = write_json(json, true);
    gb_json *again = parse_ok(pretty);
    char *compact = write_json(again, false);
    assert_string_equal(compact, text);
    free(compact);
    free(pretty);
    gb_json_free(again);
    gb_json_free(json);
}

static void test_control_characters_are_escaped(void **state)
{
    gb_strbuf sb = GB_STRBUF_INIT;
    gb_json_quote(&sb, "a\x01z\x1f");
    assert_string_equal(gb_sb_str(&sb), "\"a\\u0001z\\u001f\"");
    gb_sb_free(&sb);
}

static void test_writer_refuses_nesting_beyond_its_depth(void **state)
{
    gb_strbuf sb = GB_STRBUF_INIT;
    gb_jw w;
    gb_jw_init(&w, &sb, false);
    for (int i = 0; i < GB_JSON_MAX_DEPTH + 1; i++)
        gb_jw_arr_begin(&w);
    assert_int_equal(gb_sb_status(&sb), GB_ENOMEM);
    gb_sb_free(&sb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compact_text_round_trips),
        cmocka_unit_test(test_whitespace_is_skipped),
        cmocka_unit_test(test_escapes_are_decoded_and_written_back),
        cmocka_unit_test(test_unicode_escapes_become_utf8),
        cmocka_unit_test(test_bad_unicode_escapes_are_refused),
        cmocka_unit_test(test_nested_values_are_reachable_by_lookups),
        cmocka_unit_test(test_lookups_tolerate_null_and_the_wrong_type),
        cmocka_unit_test(test_errors_name_line_and_column),
        cmocka_unit_test(test_malformed_text_is_refused),
        cmocka_unit_test(test_parse_stops_at_the_given_length),
        cmocka_unit_test(test_deep_nesting_is_refused_not_crashed),
        cmocka_unit_test(test_nan_and_infinity_are_written_as_null),
        cmocka_unit_test(test_integers_are_written_without_exponent),
        cmocka_unit_test(test_huge_numbers_are_written_with_an_exponent),
        cmocka_unit_test(test_numbers_round_trip_exactly),
        cmocka_unit_test(test_pretty_output_indents_by_two),
        cmocka_unit_test(test_pretty_output_parses_back_to_the_same_value),
        cmocka_unit_test(test_control_characters_are_escaped),
        cmocka_unit_test(test_writer_refuses_nesting_beyond_its_depth),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
