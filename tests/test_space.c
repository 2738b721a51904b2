#include "tuner/space.h"

#include "base/json.h"
#include "base/value.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* Each test gets an empty space and a cleared error; teardown frees whatever the
 * test added, so the sanitizer build catches leaks in the space and its values. */
typedef struct fixture {
    gb_space space;
    gb_err err;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f) return -1;
    gb_err_clear(&f->err);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    gb_space_free(&f->space);
    free(f);
    return 0;
}

/* ---- helpers ------------------------------------------------------------ */

#define N_OF(array) ((int)(sizeof(array) / sizeof *(array)))

static void add_ints(fixture *f, const char *name, const int64_t *ints, int n)
{
    gb_value values[16];
    assert_true(n <= N_OF(values));
    for (int i = 0; i < n; i++)
        values[i] = gb_value_int(ints[i]);
    int rc = gb_space_add(&f->space, name, values, n, &f->err);
    if (rc) fail_msg("gb_space_add(%s): %s", name, f->err.msg);
}

/* BK in {8, 16}, BM in {32, 64, 128}: six configurations, BK slowest. */
static void add_bk_bm(fixture *f)
{
    add_ints(f, "BM", (const int64_t[]){32, 64, 128}, 3);
    add_ints(f, "BK", (const int64_t[]){8, 16}, 2);
}

static gb_value str_value(const char *s)
{
    gb_value v;
    assert_int_equal(gb_value_str(s, &v), GB_OK);
    return v;
}

static gb_config config_at(const gb_space *space, uint64_t ordinal)
{
    gb_config config;
    assert_int_equal(gb_config_at(space, ordinal, &config), GB_OK);
    return config;
}

static int64_t int_of(const gb_config *config, const char *name)
{
    const gb_value *v = gb_config_get(config, name);
    assert_non_null(v);
    assert_int_equal(v->kind, GB_VAL_INT);
    return v->i;
}

/* The text appended to sb so far, malloc'd ("" when nothing was). */
static char *take_text(gb_strbuf *sb)
{
    assert_int_equal(gb_sb_status(sb), GB_OK);
    char *text = gb_sb_take(sb);
    return text ? text : strdup("");
}

static char *config_text(const gb_config *config)
{
    gb_strbuf sb = GB_STRBUF_INIT;
    gb_config_append_canonical(&sb, config);
    return take_text(&sb);
}

static void assert_config_text(const gb_config *config, const char *want)
{
    char *text = config_text(config);
    assert_string_equal(text, want);
    free(text);
}

static void set_int(gb_fields *fields, const char *name, int64_t i)
{
    gb_value v = gb_value_int(i);
    assert_int_equal(gb_fields_set(fields, name, &v), GB_OK);
}

static void set_str(gb_fields *fields, const char *name, const char *s)
{
    gb_value v = str_value(s);
    assert_int_equal(gb_fields_set(fields, name, &v), GB_OK);
    gb_value_free(&v);
}

static char *fields_text(const gb_fields *fields, const char *const *only, int n_only)
{
    gb_strbuf sb = GB_STRBUF_INIT;
    gb_fields_append_canonical(&sb, fields, only, n_only);
    return take_text(&sb);
}

static void assert_fields_text(const gb_fields *fields, const char *const *only, int n_only,
                               const char *want)
{
    char *text = fields_text(fields, only, n_only);
    assert_string_equal(text, want);
    free(text);
}

static json_t *parse_ok(const char *text)
{
    json_t *json = NULL;
    gb_err err;
    gb_err_clear(&err);
    if (gb_json_parse(text, strlen(text), &json, &err)) fail_msg("parse of %s: %s", text, err.msg);
    return json;
}

/* ---- adding parameters -------------------------------------------------- */

static void test_params_are_kept_sorted_by_name(void **state)
{
    fixture *f = *state;
    add_ints(f, "TN", (const int64_t[]){4}, 1);
    add_ints(f, "BM", (const int64_t[]){64}, 1);
    add_ints(f, "TM", (const int64_t[]){8}, 1);
    add_ints(f, "BK", (const int64_t[]){8}, 1);
    const char *want[] = {"BK", "BM", "TM", "TN"};
    assert_int_equal(f->space.n_params, 4);
    for (int i = 0; i < 4; i++)
        assert_string_equal(f->space.params[i].name, want[i]);
}

static void test_values_keep_the_order_the_script_gave(void **state)
{
    fixture *f = *state;
    add_ints(f, "BM", (const int64_t[]){128, 32, 64}, 3);
    const gb_param *p = &f->space.params[0];
    assert_int_equal(p->n_values, 3);
    assert_int_equal(p->values[0].i, 128);
    assert_int_equal(p->values[1].i, 32);
    assert_int_equal(p->values[2].i, 64);
}

static void test_add_copies_the_name_and_the_values(void **state)
{
    fixture *f = *state;
    char name[] = "LAYOUT";
    gb_value values[] = {str_value("row"), str_value("col")};
    assert_int_equal(gb_space_add(&f->space, name, values, 2, &f->err), GB_OK);
    strcpy(name, "XXXXXX");
    values[0].str[0] = 'X';
    gb_value_free(&values[0]);
    gb_value_free(&values[1]);
    assert_string_equal(f->space.params[0].name, "LAYOUT");
    assert_string_equal(f->space.params[0].values[0].str, "row");
    assert_string_equal(f->space.params[0].values[1].str, "col");
}

static void test_a_duplicate_name_is_refused(void **state)
{
    fixture *f = *state;
    add_ints(f, "BM", (const int64_t[]){64}, 1);
    gb_value v = gb_value_int(128);
    assert_int_equal(gb_space_add(&f->space, "BM", &v, 1, &f->err), GB_EINVAL);
    assert_non_null(strstr(f->err.msg, "BM"));
    assert_int_equal(f->space.n_params, 1);
    assert_int_equal(f->space.params[0].values[0].i, 64);
}

static void test_an_empty_value_list_is_refused(void **state)
{
    fixture *f = *state;
    gb_value v = gb_value_int(1);
    assert_int_equal(gb_space_add(&f->space, "BM", &v, 0, &f->err), GB_EINVAL);
    assert_non_null(strstr(f->err.msg, "BM"));
    assert_int_equal(f->space.n_params, 0);
}

static void test_a_repeated_value_is_refused(void **state)
{
    fixture *f = *state;
    gb_value ints[] = {gb_value_int(8), gb_value_int(16), gb_value_int(8)};
    assert_int_equal(gb_space_add(&f->space, "BK", ints, 3, &f->err), GB_EINVAL);
    assert_non_null(strstr(f->err.msg, "BK"));
    gb_value strs[] = {str_value("row"), str_value("row")};
    assert_int_equal(gb_space_add(&f->space, "LAYOUT", strs, 2, &f->err), GB_EINVAL);
    gb_value_free(&strs[0]);
    gb_value_free(&strs[1]);
    assert_int_equal(f->space.n_params, 0);
}

/* 8.0 from a script is the integer 8, so listing both is a repeat. */
static void test_an_integral_number_repeats_the_same_integer(void **state)
{
    fixture *f = *state;
    gb_value values[] = {gb_value_int(8), gb_value_num(8.0)};
    assert_int_equal(gb_space_add(&f->space, "BK", values, 2, &f->err), GB_EINVAL);
}

static void test_values_of_different_kinds_are_distinct(void **state)
{
    fixture *f = *state;
    gb_value values[] = {gb_value_int(1), gb_value_bool(true), gb_value_num(1.5), str_value("1")};
    assert_int_equal(gb_space_add(&f->space, "X", values, 4, &f->err), GB_OK);
    gb_value_free(&values[3]);
    assert_int_equal(gb_space_size(&f->space), 4);
}

static void test_more_than_max_params_are_refused(void **state)
{
    fixture *f = *state;
    char name[16];
    for (int i = 0; i < GB_MAX_PARAMS; i++) {
        snprintf(name, sizeof name, "P%02d", i);
        add_ints(f, name, (const int64_t[]){1}, 1);
    }
    gb_value v = gb_value_int(1);
    assert_int_equal(gb_space_add(&f->space, "Z", &v, 1, &f->err), GB_EINVAL);
    assert_non_null(strstr(f->err.msg, "too many"));
    assert_int_equal(f->space.n_params, GB_MAX_PARAMS);
}

static void test_free_empties_the_space_and_takes_null(void **state)
{
    fixture *f = *state;
    add_bk_bm(f);
    gb_space_free(&f->space);
    assert_int_equal(f->space.n_params, 0);
    assert_int_equal(gb_space_size(&f->space), 1);
    add_ints(f, "BK", (const int64_t[]){8}, 1); /* usable again */
    gb_space_free(NULL);
}

/* ---- size and ordinals -------------------------------------------------- */

static void test_size_is_the_product_of_the_value_counts(void **state)
{
    fixture *f = *state;
    add_bk_bm(f);
    assert_int_equal(gb_space_size(&f->space), 6);
    add_ints(f, "TM", (const int64_t[]){2, 4, 8, 16}, 4);
    assert_int_equal(gb_space_size(&f->space), 24);
}

static void test_a_space_without_params_has_one_empty_config(void **state)
{
    fixture *f = *state;
    assert_int_equal(gb_space_size(&f->space), 1);
    gb_config config = config_at(&f->space, 0);
    assert_config_text(&config, "");
    assert_null(gb_config_get(&config, "BM"));
    assert_int_equal(gb_config_at(&f->space, 1, &config), GB_ENOTFOUND);
}

static void test_size_saturates_at_uint64_max(void **state)
{
    fixture *f = *state;
    char name[16];
    for (int i = 0; i < GB_MAX_PARAMS - 1; i++) {
        snprintf(name, sizeof name, "P%02d", i);
        add_ints(f, name, (const int64_t[]){1, 2, 3, 4}, 4);
    }
    assert_true(gb_space_size(&f->space) == UINT64_C(1) << 62); /* 4^31 still fits */
    add_ints(f, "Z", (const int64_t[]){1, 2, 3, 4}, 4);         /* 4^32 = 2^64 does not */
    assert_true(gb_space_size(&f->space) == UINT64_MAX);
}

static void test_config_at_counts_with_the_first_param_slowest(void **state)
{
    fixture *f = *state;
    add_bk_bm(f);
    const int64_t want[6][2] = {{8, 32}, {8, 64}, {8, 128}, {16, 32}, {16, 64}, {16, 128}};
    for (int n = 0; n < 6; n++) {
        gb_config config = config_at(&f->space, (uint64_t)n);
        assert_int_equal(config.ordinal, n);
        assert_ptr_equal(config.space, &f->space);
        assert_int_equal(int_of(&config, "BK"), want[n][0]);
        assert_int_equal(int_of(&config, "BM"), want[n][1]);
        assert_int_equal(config.index[0], n / 3); /* BK */
        assert_int_equal(config.index[1], n % 3); /* BM */
    }
}

static void test_config_at_past_the_end_is_notfound(void **state)
{
    fixture *f = *state;
    add_bk_bm(f);
    gb_config config;
    assert_int_equal(gb_config_at(&f->space, 6, &config), GB_ENOTFOUND);
    assert_int_equal(gb_config_at(&f->space, UINT64_MAX, &config), GB_ENOTFOUND);
}

static void test_config_get_of_an_unknown_name_is_null(void **state)
{
    fixture *f = *state;
    add_bk_bm(f);
    gb_config config = config_at(&f->space, 0);
    assert_null(gb_config_get(&config, "TM"));
    assert_null(gb_config_get(&config, "bk")); /* names are case-sensitive */
}

/* ---- canonical text and fields ------------------------------------------ */

static void test_canonical_text_lists_params_by_name(void **state)
{
    fixture *f = *state;
    add_bk_bm(f);
    gb_config config = config_at(&f->space, 1);
    assert_config_text(&config, "BK=8,BM=64");
}

static void test_canonical_text_quotes_strings_as_json(void **state)
{
    fixture *f = *state;
    gb_value layout[] = {str_value("row \"major\"")};
    assert_int_equal(gb_space_add(&f->space, "LAYOUT", layout, 1, &f->err), GB_OK);
    gb_value_free(&layout[0]);
    gb_value alpha = gb_value_num(0.5), split = gb_value_bool(true);
    assert_int_equal(gb_space_add(&f->space, "ALPHA", &alpha, 1, &f->err), GB_OK);
    assert_int_equal(gb_space_add(&f->space, "SPLIT", &split, 1, &f->err), GB_OK);
    gb_config config = config_at(&f->space, 0);
    assert_config_text(&config, "ALPHA=0.5,LAYOUT=\"row \\\"major\\\"\",SPLIT=true");
}

static void test_every_config_round_trips_through_fields(void **state)
{
    fixture *f = *state;
    add_bk_bm(f);
    gb_value layouts[] = {str_value("row"), str_value("col")};
    assert_int_equal(gb_space_add(&f->space, "LAYOUT", layouts, 2, &f->err), GB_OK);
    gb_value_free(&layouts[0]);
    gb_value_free(&layouts[1]);
    for (uint64_t n = 0; n < gb_space_size(&f->space); n++) {
        gb_config config = config_at(&f->space, n), back;
        gb_fields fields;
        assert_int_equal(gb_config_to_fields(&config, &fields), GB_OK);
        assert_int_equal(fields.n, 3);
        assert_int_equal(gb_config_from_fields(&f->space, &fields, &back), GB_OK);
        assert_int_equal(back.ordinal, n);
        assert_memory_equal(back.index, config.index, 3 * sizeof(int));
        gb_fields_free(&fields);
    }
}

static void test_config_fields_are_copies_in_canonical_order(void **state)
{
    fixture *f = *state;
    add_bk_bm(f);
    gb_config config = config_at(&f->space, 5);
    gb_fields fields;
    assert_int_equal(gb_config_to_fields(&config, &fields), GB_OK);
    assert_fields_text(&fields, NULL, 0, "BK=16,BM=128");
    assert_ptr_not_equal(gb_fields_get(&fields, "BM"), gb_config_get(&config, "BM"));
    gb_fields_free(&fields);
}

static void test_from_fields_with_a_value_outside_the_space_is_notfound(void **state)
{
    fixture *f = *state;
    add_bk_bm(f);
    gb_fields fields = {0};
    gb_config config;
    set_int(&fields, "BK", 8);
    set_int(&fields, "BM", 256);
    assert_int_equal(gb_config_from_fields(&f->space, &fields, &config), GB_ENOTFOUND);
    gb_value as_bool = gb_value_bool(true); /* right name, wrong kind */
    set_int(&fields, "BM", 64);
    assert_int_equal(gb_fields_set(&fields, "BK", &as_bool), GB_OK);
    assert_int_equal(gb_config_from_fields(&f->space, &fields, &config), GB_ENOTFOUND);
    gb_fields_free(&fields);
}

static void test_from_fields_with_a_missing_or_extra_field_is_notfound(void **state)
{
    fixture *f = *state;
    add_bk_bm(f);
    gb_fields fields = {0};
    gb_config config;
    set_int(&fields, "BK", 8);
    assert_int_equal(gb_config_from_fields(&f->space, &fields, &config), GB_ENOTFOUND);
    set_int(&fields, "TM", 8); /* right count, wrong name */
    assert_int_equal(gb_config_from_fields(&f->space, &fields, &config), GB_ENOTFOUND);
    set_int(&fields, "BM", 32);
    assert_int_equal(gb_config_from_fields(&f->space, &fields, &config), GB_ENOTFOUND);
    gb_fields_free(&fields);
}

/* ---- iteration ---------------------------------------------------------- */

/* Records the ordinals it saw; rejects those in `reject` (a bit per ordinal);
 * fails with GB_ESCRIPT at ordinal `fail_at` (when >= 0). */
typedef struct filter_calls {
    uint64_t seen[64];
    int n_seen;
    uint64_t reject;
    int fail_at;
} filter_calls;

static int recording_filter(void *ctx, const gb_config *config, bool *out_ok, gb_err *err)
{
    filter_calls *calls = ctx;
    assert_true(calls->n_seen < N_OF(calls->seen));
    calls->seen[calls->n_seen++] = config->ordinal;
    if ((int64_t)config->ordinal == calls->fail_at)
        return gb_err_set(err, GB_ESCRIPT, "constraint failed at %llu",
                          (unsigned long long)config->ordinal);
    *out_ok = !((calls->reject >> config->ordinal) & 1);
    return GB_OK;
}

static void test_iteration_without_a_filter_visits_every_config_in_order(void **state)
{
    fixture *f = *state;
    add_bk_bm(f);
    gb_space_iter it;
    gb_space_iter_init(&it, &f->space);
    gb_config config;
    for (uint64_t n = 0; n < 6; n++) {
        assert_int_equal(gb_space_next(&it, NULL, NULL, &config, &f->err), GB_OK);
        assert_int_equal(config.ordinal, n);
    }
    assert_int_equal(gb_space_next(&it, NULL, NULL, &config, &f->err), GB_ENOTFOUND);
    assert_int_equal(it.n_rejected, 0);
}

static void test_iteration_skips_rejected_configs_and_counts_them(void **state)
{
    fixture *f = *state;
    add_bk_bm(f);
    filter_calls calls = {.reject = 0x2d, .fail_at = -1}; /* ordinals 0, 2, 3, 5 */
    gb_space_iter it;
    gb_space_iter_init(&it, &f->space);
    gb_config config;
    assert_int_equal(gb_space_next(&it, recording_filter, &calls, &config, &f->err), GB_OK);
    assert_int_equal(config.ordinal, 1);
    assert_int_equal(it.n_rejected, 1);
    assert_int_equal(gb_space_next(&it, recording_filter, &calls, &config, &f->err), GB_OK);
    assert_int_equal(config.ordinal, 4);
    assert_int_equal(it.n_rejected, 3);
    assert_int_equal(gb_space_next(&it, recording_filter, &calls, &config, &f->err), GB_ENOTFOUND);
    assert_int_equal(it.n_rejected, 4);
}

static void test_the_filter_is_called_lazily_once_per_config_in_order(void **state)
{
    fixture *f = *state;
    add_bk_bm(f);
    filter_calls calls = {.reject = 0x3, .fail_at = -1};
    gb_space_iter it;
    gb_space_iter_init(&it, &f->space);
    gb_config config;
    assert_int_equal(gb_space_next(&it, recording_filter, &calls, &config, &f->err), GB_OK);
    assert_int_equal(calls.n_seen, 3); /* 0 and 1 rejected, 2 accepted, 3.. not yet asked */
    while (gb_space_next(&it, recording_filter, &calls, &config, &f->err) == GB_OK)
        ;
    assert_int_equal(calls.n_seen, 6);
    for (int i = 0; i < 6; i++)
        assert_int_equal(calls.seen[i], i);
}

static void test_a_filter_error_is_returned_as_is(void **state)
{
    fixture *f = *state;
    add_bk_bm(f);
    filter_calls calls = {.reject = 0x1, .fail_at = 2};
    gb_space_iter it;
    gb_space_iter_init(&it, &f->space);
    gb_config config;
    assert_int_equal(gb_space_next(&it, recording_filter, &calls, &config, &f->err), GB_OK);
    assert_int_equal(gb_space_next(&it, recording_filter, &calls, &config, &f->err), GB_ESCRIPT);
    assert_string_equal(f->err.msg, "constraint failed at 2");
    assert_int_equal(it.n_rejected, 1); /* an error is not a rejection */
}

static void test_a_space_that_is_all_rejected_ends_at_once(void **state)
{
    fixture *f = *state;
    add_bk_bm(f);
    filter_calls calls = {.reject = ~UINT64_C(0), .fail_at = -1};
    gb_space_iter it;
    gb_space_iter_init(&it, &f->space);
    gb_config config;
    assert_int_equal(gb_space_next(&it, recording_filter, &calls, &config, &f->err), GB_ENOTFOUND);
    assert_int_equal(it.n_rejected, 6);
    assert_int_equal(gb_space_next(&it, recording_filter, &calls, &config, &f->err), GB_ENOTFOUND);
    assert_int_equal(calls.n_seen, 6); /* the end stays the end without asking again */
}

static void test_iterating_an_empty_space_yields_the_empty_config_once(void **state)
{
    fixture *f = *state;
    gb_space_iter it;
    gb_space_iter_init(&it, &f->space);
    gb_config config;
    assert_int_equal(gb_space_next(&it, NULL, NULL, &config, &f->err), GB_OK);
    assert_int_equal(gb_space_next(&it, NULL, NULL, &config, &f->err), GB_ENOTFOUND);
}

/* ---- gb_fields (configurations and shapes) ------------------------------ */

static void test_fields_set_inserts_in_name_order(void **state)
{
    gb_fields fields = {0};
    set_int(&fields, "N", 2);
    set_int(&fields, "K", 3);
    set_int(&fields, "M", 1);
    set_int(&fields, "A", 0);
    assert_int_equal(fields.n, 4);
    const char *want[] = {"A", "K", "M", "N"};
    for (int i = 0; i < 4; i++)
        assert_string_equal(fields.names[i], want[i]);
    assert_int_equal(gb_fields_get(&fields, "M")->i, 1);
    gb_fields_free(&fields);
}

static void test_fields_set_replaces_an_existing_name(void **state)
{
    gb_fields fields = {0};
    set_str(&fields, "dtype", "f16");
    set_int(&fields, "M", 64);
    set_str(&fields, "dtype", "bf16"); /* the old string is freed (ASan checks) */
    set_int(&fields, "M", 128);
    assert_int_equal(fields.n, 2);
    assert_string_equal(gb_fields_get(&fields, "dtype")->str, "bf16");
    assert_int_equal(gb_fields_get(&fields, "M")->i, 128);
    gb_fields_free(&fields);
}

static void test_fields_get_of_a_missing_name_is_null(void **state)
{
    gb_fields fields = {0};
    assert_null(gb_fields_get(&fields, "M"));
    set_int(&fields, "M", 1);
    set_int(&fields, "O", 1);
    assert_null(gb_fields_get(&fields, "N"));
    assert_null(gb_fields_get(&fields, "A"));
    assert_null(gb_fields_get(&fields, "Z"));
    gb_fields_free(&fields);
    gb_fields_free(NULL);
}

static void test_fields_copy_is_deep_and_equal(void **state)
{
    gb_fields fields = {0}, copy;
    set_int(&fields, "M", 1024);
    set_str(&fields, "dtype", "f32");
    assert_int_equal(gb_fields_copy(&fields, &copy), GB_OK);
    assert_true(gb_fields_equal(&fields, &copy));
    assert_ptr_not_equal(copy.names[0], fields.names[0]);
    assert_ptr_not_equal(gb_fields_get(&copy, "dtype")->str, gb_fields_get(&fields, "dtype")->str);
    gb_fields_free(&fields);
    assert_string_equal(gb_fields_get(&copy, "dtype")->str, "f32");
    gb_fields_free(&copy);
}

static void test_fields_equal_compares_names_values_and_kinds(void **state)
{
    gb_fields a = {0}, b = {0};
    assert_true(gb_fields_equal(&a, &b));
    set_int(&a, "M", 1);
    assert_false(gb_fields_equal(&a, &b));
    set_int(&b, "N", 1);
    assert_false(gb_fields_equal(&a, &b)); /* same value, another name */
    gb_fields_free(&b);
    gb_value one_as_bool = gb_value_bool(true);
    assert_int_equal(gb_fields_set(&b, "M", &one_as_bool), GB_OK);
    assert_false(gb_fields_equal(&a, &b)); /* same name, another kind */
    set_int(&b, "M", 2);
    assert_false(gb_fields_equal(&a, &b));
    set_int(&b, "M", 1);
    assert_true(gb_fields_equal(&a, &b));
    gb_fields_free(&a);
    gb_fields_free(&b);
}

static void test_fields_canonical_text_follows_name_order(void **state)
{
    gb_fields fields = {0};
    set_int(&fields, "N", 1024);
    set_int(&fields, "K", 512);
    set_str(&fields, "dtype", "f16");
    set_int(&fields, "M", 2048);
    assert_fields_text(&fields, NULL, 0, "K=512,M=2048,N=1024,dtype=\"f16\"");
    gb_fields_free(&fields);
}

static void test_fields_canonical_text_can_be_limited_to_named_fields(void **state)
{
    gb_fields fields = {0};
    set_int(&fields, "K", 512);
    set_int(&fields, "M", 2048);
    set_int(&fields, "N", 1024);
    const char *only[] = {"N", "missing", "K"};
    assert_fields_text(&fields, only, 3, "K=512,N=1024");
    assert_fields_text(&fields, only, 0, ""); /* an empty list names nothing */
    gb_fields_free(&fields);
}

static void test_fields_json_round_trips(void **state)
{
    gb_fields fields = {0}, back;
    set_int(&fields, "M", 4096);
    set_str(&fields, "dtype", "f\"16");
    gb_value alpha = gb_value_num(0.25), trans = gb_value_bool(false);
    assert_int_equal(gb_fields_set(&fields, "alpha", &alpha), GB_OK);
    assert_int_equal(gb_fields_set(&fields, "trans", &trans), GB_OK);
    json_t *written = gb_fields_to_json(&fields);
    char *text = gb_json_dump(written, false);
    assert_string_equal(text, "{\"M\":4096,\"alpha\":0.25,\"dtype\":\"f\\\"16\",\"trans\":false}");
    json_t *json = parse_ok(text);
    gb_err err;
    assert_int_equal(gb_fields_from_json(json, &back, &err), GB_OK);
    assert_true(gb_fields_equal(&fields, &back));
    assert_int_equal(gb_fields_get(&back, "M")->kind, GB_VAL_INT);
    json_decref(json);
    json_decref(written);
    free(text);
    gb_fields_free(&fields);
    gb_fields_free(&back);
}

static void test_fields_from_json_sorts_keys(void **state)
{
    json_t *json = parse_ok("{\"N\": 4, \"K\": 1.0, \"M\": 2}");
    gb_fields fields;
    gb_err err;
    assert_int_equal(gb_fields_from_json(json, &fields, &err), GB_OK);
    assert_fields_text(&fields, NULL, 0, "K=1,M=2,N=4");
    assert_int_equal(gb_fields_get(&fields, "K")->kind, GB_VAL_INT); /* 1.0 is integral */
    gb_fields_free(&fields);
    json_decref(json);
}

static void test_fields_from_json_refuses_non_objects_and_nested_values(void **state)
{
    const char *bad[] = {"[1, 2]", "3", "{\"M\": null}", "{\"M\": [1]}", "{\"M\": {\"x\": 1}}"};
    for (int i = 0; i < N_OF(bad); i++) {
        json_t *json = parse_ok(bad[i]);
        gb_fields fields;
        gb_err err;
        gb_err_clear(&err);
        assert_int_equal(gb_fields_from_json(json, &fields, &err), GB_EINVAL);
        assert_int_equal(fields.n, 0);
        assert_true(err.msg[0] != '\0');
        json_decref(json);
    }
    gb_fields fields;
    assert_int_equal(gb_fields_from_json(NULL, &fields, NULL), GB_EINVAL);
}

static void test_a_field_error_names_the_field(void **state)
{
    json_t *json = parse_ok("{\"K\": 1, \"layout\": null}");
    gb_fields fields;
    gb_err err;
    assert_int_equal(gb_fields_from_json(json, &fields, &err), GB_EINVAL);
    assert_non_null(strstr(err.msg, "'layout'"));
    json_decref(json);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_params_are_kept_sorted_by_name),
        T(test_values_keep_the_order_the_script_gave),
        T(test_add_copies_the_name_and_the_values),
        T(test_a_duplicate_name_is_refused),
        T(test_an_empty_value_list_is_refused),
        T(test_a_repeated_value_is_refused),
        T(test_an_integral_number_repeats_the_same_integer),
        T(test_values_of_different_kinds_are_distinct),
        T(test_more_than_max_params_are_refused),
        T(test_free_empties_the_space_and_takes_null),
        T(test_size_is_the_product_of_the_value_counts),
        T(test_a_space_without_params_has_one_empty_config),
        T(test_size_saturates_at_uint64_max),
        T(test_config_at_counts_with_the_first_param_slowest),
        T(test_config_at_past_the_end_is_notfound),
        T(test_config_get_of_an_unknown_name_is_null),
        T(test_canonical_text_lists_params_by_name),
        T(test_canonical_text_quotes_strings_as_json),
        T(test_every_config_round_trips_through_fields),
        T(test_config_fields_are_copies_in_canonical_order),
        T(test_from_fields_with_a_value_outside_the_space_is_notfound),
        T(test_from_fields_with_a_missing_or_extra_field_is_notfound),
        T(test_iteration_without_a_filter_visits_every_config_in_order),
        T(test_iteration_skips_rejected_configs_and_counts_them),
        T(test_the_filter_is_called_lazily_once_per_config_in_order),
        T(test_a_filter_error_is_returned_as_is),
        T(test_a_space_that_is_all_rejected_ends_at_once),
        T(test_iterating_an_empty_space_yields_the_empty_config_once),
        cmocka_unit_test(test_fields_set_inserts_in_name_order),
        cmocka_unit_test(test_fields_set_replaces_an_existing_name),
        cmocka_unit_test(test_fields_get_of_a_missing_name_is_null),
        cmocka_unit_test(test_fields_copy_is_deep_and_equal),
        cmocka_unit_test(test_fields_equal_compares_names_values_and_kinds),
        cmocka_unit_test(test_fields_canonical_text_follows_name_order),
        cmocka_unit_test(test_fields_canonical_text_can_be_limited_to_named_fields),
        cmocka_unit_test(test_fields_json_round_trips),
        cmocka_unit_test(test_fields_from_json_sorts_keys),
        cmocka_unit_test(test_fields_from_json_refuses_non_objects_and_nested_values),
        cmocka_unit_test(test_a_field_error_names_the_field),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
