/*
 * The wire codec (base/wire.h): a struct described once encodes, decodes back
 * equal, and decoding refuses every way a field can be wrong with the field's path,
 * leaving nothing allocated behind. Every table of the engine, the protocol and the
 * cache checks out.
 */
#include "base/wire.h"

#include "cache/record.h"
#include "exec/proto.h"
#include "engine/wire_types.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

/* ---- a struct with every kind of field ---------------------------------- */

typedef struct inner {
    int a;
    double d;
} inner;

#define INNER_WIRE(X)                                                                              \
    X(a, INT, "a", GB_WIRE_RANGE(0, 9), .flags = GB_WIRE_OPTIONAL, .dflt = 7)                      \
    X(d, DOUBLE, "d", .flags = GB_WIRE_NULL_NAN)

typedef enum colour { RED, GREEN, BLUE } colour;

typedef struct sample {
    int i;
    int64_t big;
    uint32_t u;
    uint64_t seed;
    double x;
    bool b;
    colour c;
    char name[8];
    char *text;
    gb_fields config;
    inner in;
    bool has_opt;
    inner opt;
    int n_values;
    double *values;
    bool *flags;
    uint32_t fixed[3];
    int n_small;
    int small[4];
    int n_items;
    inner *items;
    int n_words;
    char **words;
    bool gated;
    int only_when_gated;
    int sum; /* derived: i + n_values */
} sample;

static bool is_gated(const void *obj)
{
    return ((const sample *)obj)->gated;
}

static const char *colour_name(int v)
{
    static const char *const names[] = {"red", "green", "blue"};
    return v >= 0 && v < 3 ? names[v] : NULL;
}

static const gb_wire_enum colours = {3, colour_name};

#define SAMPLE_WIRE(X)                                                                             \
    X(i, INT, "i", GB_WIRE_RANGE(-5, 5))                                                           \
    X(big, INT64, "big")                                                                           \
    X(u, UINT32, "u")                                                                              \
    X(seed, UINT64, "seed")                                                                        \
    X(x, DOUBLE, "x", GB_WIRE_RANGE(0, INFINITY))                                                  \
    X(b, BOOL, "b")                                                                                \
    X(c, ENUM, "c", .enumeration = &colours)                                                       \
    X(name, CHARS, "name", .flags = GB_WIRE_OPTIONAL, .dflt_str = "anon")                          \
    X(text, STRING, "text", .max_len = 10, .flags = GB_WIRE_OPTIONAL)                              \
    X(config, FIELDS, "config", .max_items = 3)                                                    \
    X(in, STRUCT, "in", .type = &inner_wire, .flags = GB_WIRE_OPTIONAL)                            \
    X(opt, STRUCT, "opt", .type = &inner_wire, .flags = GB_WIRE_NULLABLE,                          \
      .present = offsetof(sample, has_opt))                                                        \
    X(values, DOUBLE, "values", .arity = GB_WIRE_OWNED, .count = offsetof(sample, n_values),       \
      .max_items = 5, .flags = GB_WIRE_NULL_NAN)                                                   \
    X(flags, BOOL, "flags", .arity = GB_WIRE_OWNED, .count = offsetof(sample, n_values),           \
      .max_items = 5)                                                                              \
    X(fixed, UINT32, "fixed", .arity = GB_WIRE_FIXED)                                              \
    X(small, INT, "small", .arity = GB_WIRE_INLINE, .count = offsetof(sample, n_small))            \
    X(items, STRUCT, "items", .type = &inner_wire, .arity = GB_WIRE_OWNED,                         \
      .count = offsetof(sample, n_items), .max_items = 4, .flags = GB_WIRE_OPTIONAL)               \
    X(words, STRING, "words", .arity = GB_WIRE_OWNED, .count = offsetof(sample, n_words),          \
      .max_items = 4, .flags = GB_WIRE_OPTIONAL)                                                   \
    X(gated, BOOL, "gated", .flags = GB_WIRE_OPTIONAL)                                             \
    X(only_when_gated, INT, "only_when_gated", .when = is_gated)                                   \
    X(sum, INT, "sum", .flags = GB_WIRE_DERIVED)

static int sample_finish(void *obj, const char *path, gb_err *err)
{
    sample *s = obj;
    s->sum = s->i + s->n_values;
    return s->c == BLUE && s->b ? gb_err_set(err, GB_EINVAL, "%s: blue cannot be true", path)
                                : GB_OK;
}

#define GB_WIRE_T inner
GB_WIRE_TABLE(inner_wire, "inner", INNER_WIRE, NULL)
#undef GB_WIRE_T
#define GB_WIRE_T sample
GB_WIRE_TABLE(sample_wire, "sample", SAMPLE_WIRE, sample_finish)
#undef GB_WIRE_T

static const char FULL[] =
    "{\"i\":-5,\"big\":-9223372036854775808,\"u\":4294967295,\"seed\":-1,\"x\":0.1,\"b\":false,"
    "\"c\":\"blue\",\"name\":\"seven77\",\"text\":\"hello\",\"config\":{\"BM\":64,\"dt\":\"f16\","
    "\"t\":true},\"in\":{\"a\":9,\"d\":null},\"opt\":{\"a\":1,\"d\":2.5},"
    "\"values\":[1.5,null,3],\"flags\":[true,false,true],\"fixed\":[1,2,3],\"small\":[4,5],"
    "\"items\":[{\"a\":0,\"d\":1.0},{\"d\":2}],\"words\":[\"x\",\"\"],\"gated\":true,"
    "\"only_when_gated\":12}";

static json_t *parse(const char *text)
{
    json_t *j = NULL;
    gb_err err;
    if (gb_json_parse(text, strlen(text), &j, &err)) fail_msg("%s: %s", text, err.msg);
    return j;
}

/* Decodes text into out, which must succeed. */
static void decode_ok(const char *text, sample *out)
{
    json_t *j = parse(text);
    gb_err err;
    if (gb_wire_decode(&sample_wire, j, out, &err)) fail_msg("%s", err.msg);
    json_decref(j);
}

/* The text with one field replaced (or removed when value is NULL). */
static char *with(const char *key, const char *value)
{
    json_t *j = parse(FULL);
    if (value) {
        json_t *v = parse(value);
        json_object_set_new(j, key, v);
    } else {
        json_object_del(j, key);
    }
    char *text = gb_json_dump(j, false);
    json_decref(j);
    return text;
}

static void refused_at(const char *key, const char *value, const char *what, const char *file,
                       int line)
{
    char *text = with(key, value);
    json_t *j = parse(text);
    sample out;
    gb_err err;
    gb_err_clear(&err);
    int rc = gb_wire_decode(&sample_wire, j, &out, &err);
    json_decref(j);
    static const sample zero;
    if (rc == GB_EINVAL && strstr(err.msg, what) && memcmp(&out, &zero, sizeof out) == 0) {
        free(text);
        return;
    }
    print_error("%s\n  gave %d \"%s\", expected GB_EINVAL naming \"%s\" and a zeroed struct\n",
                text, rc, err.msg, what);
    free(text);
    _fail(file, line);
}
/* FULL with key set to value (removed for NULL) is refused with `what`. */
#define assert_refused(key, value, what) refused_at((key), (value), (what), __FILE__, __LINE__)

/* ---- round trips -------------------------------------------------------- */

static void test_every_kind_round_trips_and_compares_equal(void **state)
{
    sample a, b;
    decode_ok(FULL, &a);
    assert_int_equal(a.i, -5);
    assert_true(a.big == INT64_MIN);
    assert_true(a.u == UINT32_MAX);
    assert_true(a.seed == UINT64_MAX);
    assert_true(a.x == 0.1);
    assert_int_equal(a.c, BLUE);
    assert_string_equal(a.name, "seven77");
    assert_string_equal(a.text, "hello");
    assert_int_equal(gb_fields_get(&a.config, "BM")->i, 64);
    assert_int_equal(a.in.a, 9);
    assert_true(isnan(a.in.d));
    assert_true(a.has_opt && a.opt.d == 2.5);
    assert_int_equal(a.n_values, 3);
    assert_true(isnan(a.values[1]) && a.flags[2]);
    assert_int_equal(a.fixed[2], 3);
    assert_int_equal(a.n_small, 2);
    assert_int_equal(a.small[1], 5);
    assert_int_equal(a.n_items, 2);
    assert_int_equal(a.items[1].a, 7); /* absent: its default */
    assert_string_equal(a.words[0], "x");
    assert_int_equal(a.only_when_gated, 12);
    assert_int_equal(a.sum, -2); /* computed by the finish hook */

    json_t *j = gb_wire_encode(&sample_wire, &a);
    char *text = gb_json_dump(j, false);
    assert_null(strstr(text, "sum")); /* derived: not written */
    gb_err err;
    assert_int_equal(gb_wire_decode(&sample_wire, j, &b, &err), GB_OK);
    assert_true(gb_wire_equal(&sample_wire, &a, &b));
    b.values[0] = 9;
    assert_false(gb_wire_equal(&sample_wire, &a, &b));
    json_decref(j);
    free(text);
    gb_wire_free(&sample_wire, &a);
    gb_wire_free(&sample_wire, &b);
    gb_wire_free(&sample_wire, NULL);
}

static void test_optional_fields_read_their_defaults_nested_too(void **state)
{
    sample s;
    char *text = with("name", NULL);
    json_t *j = parse(text);
    json_object_del(j, "in");
    json_object_del(j, "items");
    json_object_del(j, "text");
    json_object_set_new(j, "opt", json_null());
    free(text);
    gb_err err;
    assert_int_equal(gb_wire_decode(&sample_wire, j, &s, &err), GB_OK);
    json_decref(j);
    assert_string_equal(s.name, "anon");
    assert_int_equal(s.in.a, 7);
    assert_null(s.text);
    assert_false(s.has_opt);
    assert_int_equal(s.n_items, 0);
    assert_null(s.items);
    gb_wire_free(&sample_wire, &s);
}

static void test_fields_with_when_or_a_flag_are_written_only_then(void **state)
{
    sample s;
    decode_ok(FULL, &s);
    s.gated = false;
    s.has_opt = false;
    free(s.text);
    s.text = NULL;
    json_t *j = gb_wire_encode(&sample_wire, &s);
    assert_null(gb_json_get(j, "only_when_gated"));
    assert_true(json_is_null(gb_json_get(j, "opt")));
    assert_null(gb_json_get(j, "text")); /* a NULL string is left out */
    json_decref(j);
    gb_wire_free(&sample_wire, &s);
}

static void test_text_is_cut_on_writing_to_what_its_field_takes(void **state)
{
    sample s;
    decode_ok(FULL, &s);
    free(s.text);
    s.text = strdup("0123456789abcdef");
    json_t *j = gb_wire_encode(&sample_wire, &s);
    assert_string_equal(gb_json_str(gb_json_get(j, "text"), NULL), "0123456789");
    json_decref(j);
    strcpy(s.name, "\xff\xff\xff"); /* each bad byte becomes U+FFFD, 3 bytes: two fit in 7 */
    j = gb_wire_encode(&sample_wire, &s);
    assert_string_equal(gb_json_str(gb_json_get(j, "name"), NULL), "\xef\xbf\xbd\xef\xbf\xbd");
    json_decref(j);
    gb_wire_free(&sample_wire, &s);
}

/* ---- refusals ----------------------------------------------------------- */

static void test_a_missing_field_names_its_path(void **state)
{
    assert_refused("b", NULL, "sample.b: missing");
    char *text = with("opt", "{\"a\": 1}");
    json_t *j = parse(text);
    sample s;
    gb_err err;
    assert_int_equal(gb_wire_decode(&sample_wire, j, &s, &err), GB_EINVAL);
    assert_string_equal(err.msg, "sample.opt.d: missing");
    json_decref(j);
    free(text);
}

static void test_integers_are_range_checked_and_exact(void **state)
{
    assert_refused("i", "6", "sample.i: expected an integer from -5 to 5");
    assert_refused("i", "2.5", "sample.i: expected an integer from -5 to 5");
    assert_refused("i", "\"2\"", "sample.i: expected an integer");
    assert_refused("u", "-1", "sample.u: expected an integer from 0 to 4294967295");
    assert_refused("u", "4294967296", "sample.u: expected an integer from 0 to 4294967295");
    assert_refused("big", "1e19", "sample.big: expected an integer");
    assert_refused("seed", "1.0", "sample.seed: expected an integer");
    sample s;
    char *text = with("i", "3.0"); /* a real that is an integer: older writers wrote those */
    decode_ok(text, &s);
    assert_int_equal(s.i, 3);
    gb_wire_free(&sample_wire, &s);
    free(text);
    text = with("big", "9007199254740993");
    decode_ok(text, &s);
    assert_true(s.big == ((int64_t)1 << 53) + 1);
    gb_wire_free(&sample_wire, &s);
    free(text);
}

static void test_doubles_are_range_checked_and_null_only_where_nan_is_allowed(void **state)
{
    assert_refused("x", "-0.5", "sample.x: expected a number >= 0");
    assert_refused("x", "null", "sample.x: expected a number >= 0");
    assert_refused("x", "true", "sample.x: expected a number");
    assert_refused("in", "{\"d\": \"1\"}", "sample.in.d: expected a number or null");
}

static void test_booleans_enums_and_strings_are_type_checked(void **state)
{
    assert_refused("b", "0", "sample.b: expected true or false");
    assert_refused("c", "\"mauve\"", "sample.c: expected one of red, green, blue");
    assert_refused("c", "2", "sample.c: expected one of red, green, blue");
    assert_refused("name", "\"eight888\"", "sample.name: expected a string of at most 7 bytes");
    assert_refused("text", "\"01234567890\"", "sample.text: expected a string of at most 10 bytes");
    assert_refused("text", "7", "sample.text: expected a string of at most 10 bytes");
}

static void test_lists_are_checked_for_length_and_every_item(void **state)
{
    assert_refused("values", "[1,2,3,4,5,6]", "sample.values: expected a list of 0 to 5 items");
    assert_refused("values", "{}", "sample.values: expected a list of 0 to 5 items");
    assert_refused("flags", "[true]",
                   "sample.flags: expected a list of 3 items, as many as values");
    assert_refused("flags", "[true,false,1]", "sample.flags[2]: expected true or false");
    assert_refused("fixed", "[1,2]", "sample.fixed: expected a list of 3 items");
    assert_refused("small", "[1,2,3,4,5]", "sample.small: expected a list of 0 to 4 items");
    assert_refused("items", "[{\"d\":1},{\"a\":10,\"d\":1}]",
                   "sample.items[1].a: expected an integer from 0 to 9");
    assert_refused("words", "[\"a\",null]", "sample.words[1]: expected a string");
}

static void test_fields_objects_hold_only_scalars_and_are_capped(void **state)
{
    assert_refused("config", "{\"K\":[1]}",
                   "sample.config.K: expected a number, string or boolean");
    assert_refused("config", "{\"K\":null}", "sample.config.K: expected a number, string");
    assert_refused("config", "{\"a\":1,\"b\":2,\"c\":3,\"d\":4}",
                   "sample.config: expected an object of at most 3 fields");
    assert_refused("config", "[1]", "sample.config: expected an object");
}

static void test_a_nested_value_that_is_not_an_object_is_refused(void **state)
{
    assert_refused("in", "[1]", "sample.in: expected an object");
    assert_refused("opt", "3", "sample.opt: expected an object");
    json_t *j = parse("[1]");
    sample s;
    gb_err err;
    assert_int_equal(gb_wire_decode(&sample_wire, j, &s, &err), GB_EINVAL);
    assert_string_equal(err.msg, "sample: expected an object");
    json_decref(j);
}

static void test_the_finish_hook_refuses_what_the_fields_allow(void **state)
{
    /* Fails after every allocation was made: nothing may leak (the ASan build
     * checks), and the struct is zeroed. */
    assert_refused("b", "true", "sample: blue cannot be true");
}

/* ---- views: groups, keyed arrays, nulls for zero, virtual fields --------- */

typedef struct view {
    uint64_t seed;
    double rate; /* 0: unknown */
    char *note;  /* NULL: none */
    int counts[3];
    int total;
    bool timed;
    double median;
    int n_values;
    double *values;
} view;

typedef struct view_ctx {
    int factor;
    int label; /* what "label" read */
} view_ctx;

static void get_scaled(const void *obj, const void *ctx, void *out)
{
    *(double *)out = ((const view *)obj)->median * ((const view_ctx *)ctx)->factor;
}

static void get_label(const void *obj, const void *ctx, void *out)
{
    (void)obj;
    *(int *)out = ((const view_ctx *)ctx)->label;
}

static int set_label(void *obj, void *ctx, void *value, const char *path, gb_err *err)
{
    (void)obj;
    ((view_ctx *)ctx)->label = *(int *)value;
    return *(int *)value < 0 ? gb_err_set(err, GB_EINVAL, "%s: below zero", path) : GB_OK;
}

static bool is_timed(const void *obj)
{
    return ((const view *)obj)->timed;
}

#define VIEW_WIRE(X, V)                                                                            \
    X(seed, UINT64, "seed", .flags = GB_WIRE_U64_TEXT, .group = "search")                          \
    X(rate, DOUBLE, "rate", .flags = GB_WIRE_NULL_ZERO, .group = "search")                         \
    X(note, STRING, "note", .flags = GB_WIRE_NULL_ZERO)                                            \
    X(counts, INT, "counts", .arity = GB_WIRE_FIXED, .keys = &colours, .group = "counts")          \
    X(total, INT, "total", .group = "counts")                                                      \
    X(timed, BOOL, "timed")                                                                        \
    X(median, DOUBLE, "median", .null_unless = is_timed)                                           \
    X(values, DOUBLE, "values", .arity = GB_WIRE_OWNED, .count = offsetof(view, n_values),         \
      .max_items = 3, .expect = "a list of numbers")                                               \
    V(DOUBLE, "scaled", .get = get_scaled, .flags = GB_WIRE_NULL_ZERO)                             \
    V(INT, "label", .get = get_label, .set = set_label)

#define GB_WIRE_T view
GB_WIRE_VIEW_TABLE(view_wire, "view", VIEW_WIRE, NULL)
#undef GB_WIRE_T

static char *view_text(const view *v, const view_ctx *ctx)
{
    json_t *o = json_object();
    assert_int_equal(gb_wire_encode_into(&view_wire, v, ctx, o), GB_OK);
    char *text = gb_json_dump(o, false);
    json_decref(o);
    return text;
}

static void test_a_view_writes_groups_keys_nulls_and_virtual_fields(void **state)
{
    view v = {.seed = UINT64_MAX, .counts = {1, 2, 3}, .total = 6, .median = 2.5};
    view_ctx ctx = {.factor = 2, .label = 7};
    char *text = view_text(&v, &ctx);
    assert_string_equal(text, "{\"search\":{\"seed\":\"18446744073709551615\",\"rate\":null},"
                              "\"note\":null,\"counts\":{\"red\":1,\"green\":2,\"blue\":3,"
                              "\"total\":6},\"timed\":false,\"median\":null,\"values\":[],"
                              "\"scaled\":5.0,\"label\":7}");
    free(text);
    v = (view){.seed = 5, .rate = 1.5, .note = "n", .timed = true, .median = 0.5};
    text = view_text(&v, &ctx);
    assert_non_null(strstr(text, "{\"search\":{\"seed\":5,\"rate\":1.5},\"note\":\"n\""));
    assert_non_null(strstr(text, "\"median\":0.5,"));
    free(text);
}

static void test_a_view_reads_back_into_the_struct_and_the_context(void **state)
{
    view v = {.seed = UINT64_MAX,
              .rate = 0,
              .counts = {1, 2, 3},
              .total = 6,
              .timed = true,
              .median = 2.5};
    view_ctx ctx = {.factor = 2, .label = 7};
    char *text = view_text(&v, &ctx);
    json_t *j = parse(text);
    view back = {.note = NULL};
    view_ctx got = {0};
    gb_err err = {0};
    if (gb_wire_read(&view_wire, j, &back, &got, "doc[0]", &err)) fail_msg("%s", err.msg);
    assert_true(back.seed == UINT64_MAX && back.rate == 0 && back.note == NULL);
    assert_int_equal(back.counts[2], 3);
    assert_int_equal(back.total, 6);
    assert_true(back.median == 2.5);
    assert_int_equal(got.label, 7); /* "scaled" has no .set: not read */
    json_decref(j);
    free(text);
}

/* j with key (in group, when not NULL) set to value, read as a view, fails with what. */
static void view_refused(const char *group, const char *key, const char *value, const char *what)
{
    view v = {.counts = {1, 2, 3}};
    view_ctx ctx = {0};
    char *text = view_text(&v, &ctx);
    json_t *j = parse(text);
    json_t *in = group ? json_object_get(j, group) : j;
    if (value)
        json_object_set_new(in, key, parse(value));
    else
        json_object_del(in, key);
    view back = {0};
    gb_err err = {0};
    assert_int_equal(gb_wire_read(&view_wire, j, &back, &ctx, "doc[0]", &err), GB_EINVAL);
    if (!strstr(err.msg, what)) fail_msg("got \"%s\", wanted \"%s\"", err.msg, what);
    gb_wire_free(&view_wire, &back);
    json_decref(j);
    free(text);
}

static void test_a_view_refuses_what_is_wrong_naming_the_path(void **state)
{
    view_refused("search", "seed", "-1",
                 "doc[0].search.seed: expected an integer >= 0, or its decimal digits");
    view_refused("search", "seed", "\"12x\"", "doc[0].search.seed: expected an integer >= 0");
    view_refused(NULL, "search", "[]", "doc[0].search: expected an object");
    view_refused("counts", "green", NULL, "doc[0].counts.green: missing");
    view_refused(NULL, "values", "\"1 2\"", "doc[0].values: expected a list of numbers");
    view_refused(NULL, "label", "-3", "doc[0].label: below zero");
    view_refused(NULL, "median", "\"x\"", "doc[0].median: expected a number");
}

/* ---- views: nested groups, formatted text, a whole document ------------- */

typedef struct budget_view {
    int evals;
    double seconds;
    int cc_major, cc_minor;
} budget_view;

static void get_cc(const void *obj, const void *ctx, void *out)
{
    (void)ctx;
    const budget_view *b = obj;
    gb_wire_value *v = out;
    snprintf(v->text.buf, sizeof v->text.buf, "%d.%d", b->cc_major, b->cc_minor);
    v->text.string = v->text.buf;
}

#define BUDGET_WIRE(X, V)                                                                          \
    X(evals, INT, "evals", .group = "search.budget")                                               \
    X(seconds, DOUBLE, "seconds", .group = "search.budget")                                        \
    V(STRING, "cc", .get = get_cc, .group = "search")

#define GB_WIRE_T budget_view
GB_WIRE_VIEW_TABLE(budget_wire, "budget", BUDGET_WIRE, NULL)
#undef GB_WIRE_T

static void test_a_dotted_group_nests_and_a_virtual_field_may_format_its_text(void **state)
{
    budget_view b = {.evals = 3, .seconds = 1.5, .cc_major = 9, .cc_minor = 0};
    json_t *o = json_object();
    assert_int_equal(gb_wire_encode_into(&budget_wire, &b, NULL, o), GB_OK);
    char *text = gb_json_dump(o, false);
    assert_string_equal(text, "{\"search\":{\"budget\":{\"evals\":3,\"seconds\":1.5},"
                              "\"cc\":\"9.0\"}}");
    budget_view back = {0};
    gb_err err = {0};
    if (gb_wire_read(&budget_wire, o, &back, NULL, "", &err)) fail_msg("%s", err.msg);
    assert_true(back.evals == 3 && back.seconds == 1.5);
    free(text);
    json_decref(o);
}

static void test_a_view_of_a_whole_document_names_its_fields_without_a_dot(void **state)
{
    budget_view back = {0};
    gb_err err = {0};
    json_t *j = parse("{\"search\": {\"budget\": {\"evals\": \"x\", \"seconds\": 1}}}");
    assert_int_equal(gb_wire_read(&budget_wire, j, &back, NULL, "", &err), GB_EINVAL);
    assert_string_equal(err.msg, "search.budget.evals: expected an integer from -2147483648 to "
                                 "2147483647");
    json_decref(j);
    j = parse("{\"search\": {\"budget\": 4}}");
    assert_int_equal(gb_wire_read(&budget_wire, j, &back, NULL, "", &err), GB_EINVAL);
    assert_string_equal(err.msg, "search.budget: expected an object");
    json_decref(j);
}

/* ---- tables ------------------------------------------------------------- */

static void test_every_table_checks_out(void **state)
{
    const gb_wire_type *types[] = {
        &sample_wire,           &gb_wire_stats,       &gb_wire_check_result,
        &gb_wire_check_spec,    &gb_wire_launch,      &gb_wire_arg,
        &gb_wire_measure_opts,  &gb_wire_measurement, &gb_wire_device_info,
        &gb_wire_trial_result,  &gb_wire_record_id,   &gb_wire_best_record,
        &gb_wire_trial_record,  &gb_wire_proto_open,  &gb_wire_proto_problem,
        &gb_wire_proto_variant, &gb_wire_proto_trial, &gb_wire_proto_race,
        &gb_wire_proto_raced,   &gb_wire_proto_error, &gb_wire_record_source,
        &gb_wire_trial_phases,  &view_wire,           &budget_wire,
    };
    for (size_t i = 0; i < sizeof types / sizeof *types; i++) {
        gb_err err;
        if (gb_wire_check_type(types[i], &err)) fail_msg("%s", err.msg);
    }
}

static void test_a_wrong_table_is_caught(void **state)
{
    const gb_wire_field wrong_size[] = {GB_WIRE_FIELD(sample, big, INT, "big")};
    const gb_wire_field no_cap[] = {
        GB_WIRE_FIELD(sample, values, DOUBLE, "values", .arity = GB_WIRE_OWNED)};
    const gb_wire_field no_type[] = {GB_WIRE_FIELD(sample, in, STRUCT, "in")};
    const gb_wire_field empty_part[] = {GB_WIRE_FIELD(sample, i, INT, "i", .group = "a..b")};
    const struct {
        const gb_wire_field *field;
        const char *problem;
    } cases[] = {
        {wrong_size, "field big has a size that does not match its kind"},
        {no_cap, "field values is OWNED without .max_items"},
        {no_type, "field in is a STRUCT without .type"},
        {empty_part, "field i has a group with an empty or too long part"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        gb_wire_type t = {"broken", sizeof(sample), cases[i].field, 1, NULL};
        gb_err err;
        assert_int_equal(gb_wire_check_type(&t, &err), GB_EINVAL);
        assert_non_null(strstr(err.msg, cases[i].problem));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_kind_round_trips_and_compares_equal),
        cmocka_unit_test(test_optional_fields_read_their_defaults_nested_too),
        cmocka_unit_test(test_fields_with_when_or_a_flag_are_written_only_then),
        cmocka_unit_test(test_text_is_cut_on_writing_to_what_its_field_takes),
        cmocka_unit_test(test_a_missing_field_names_its_path),
        cmocka_unit_test(test_integers_are_range_checked_and_exact),
        cmocka_unit_test(test_doubles_are_range_checked_and_null_only_where_nan_is_allowed),
        cmocka_unit_test(test_booleans_enums_and_strings_are_type_checked),
        cmocka_unit_test(test_lists_are_checked_for_length_and_every_item),
        cmocka_unit_test(test_fields_objects_hold_only_scalars_and_are_capped),
        cmocka_unit_test(test_a_nested_value_that_is_not_an_object_is_refused),
        cmocka_unit_test(test_the_finish_hook_refuses_what_the_fields_allow),
        cmocka_unit_test(test_a_view_writes_groups_keys_nulls_and_virtual_fields),
        cmocka_unit_test(test_a_view_reads_back_into_the_struct_and_the_context),
        cmocka_unit_test(test_a_view_refuses_what_is_wrong_naming_the_path),
        cmocka_unit_test(test_a_dotted_group_nests_and_a_virtual_field_may_format_its_text),
        cmocka_unit_test(test_a_view_of_a_whole_document_names_its_fields_without_a_dot),
        cmocka_unit_test(test_every_table_checks_out),
        cmocka_unit_test(test_a_wrong_table_is_caught),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
