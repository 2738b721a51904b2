/* Replaying strategies against recorded tables (tuner/replay.h): the three file
 * formats read into the same table, the statistics over seeds, and the messages
 * for files that are not tables.
 *
 * tests/data/replay_kt.json is a synthetic Kernel Tuner cache written by
 * `bench/replay_table.py --size small` (a made-up model, not a GPU: 216 entries
 * of a 240-configuration space, 7 compile failures and 7 launch failures).
 * tests/data/replay_export.json holds the same results in gpubench's export
 * format, made by `gpubench cache load --from kernel-tuner` of that file (kernel
 * synthetic_small, shape n=4096) and `gpubench cache save`. */
#include "tuner/replay.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define OPTIMUM_TEXT "block_size_x=64,block_size_y=4,layout=\"row\",tile=4,use_shmem=1"

static char *data_path(const char *name)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/tests/data/%s", getenv("GB_SOURCE_DIR"), name);
    return path;
}

static void load(const char *name, const gb_replay_select *sel, gb_replay_table *t)
{
    gb_err err = {0};
    int rc = gb_replay_load(data_path(name), sel, t, &err);
    if (rc) print_message("%s\n", err.msg);
    assert_int_equal(rc, GB_OK);
}

/* The export file as JSON, to make variants of. */
static json_t *export_doc(void)
{
    json_error_t jerr;
    json_t *doc = json_load_file(data_path("replay_export.json"), 0, &jerr);
    assert_non_null(doc);
    return doc;
}

static int parse_doc(const json_t *doc, const gb_replay_select *sel, gb_replay_table *t,
                     gb_err *err)
{
    char *text = json_dumps(doc, JSON_COMPACT);
    assert_non_null(text);
    int rc = gb_replay_parse(text, strlen(text), "doc.json", sel, t, err);
    free(text);
    return rc;
}

static void config_text(const gb_replay_table *t, uint64_t ordinal, char *buf, size_t n)
{
    gb_config c;
    gb_strbuf sb = GB_STRBUF_INIT;
    gb_config_at(&t->space, ordinal, &c);
    gb_config_append_canonical(&sb, &c);
    gb_strlcpy(buf, gb_sb_str(&sb), n);
    gb_sb_free(&sb);
}

static void assert_same_table(const gb_replay_table *a, const gb_replay_table *b)
{
    assert_int_equal(a->space.n_params, b->space.n_params);
    for (int p = 0; p < a->space.n_params; p++) {
        const gb_param *x = &a->space.params[p], *y = &b->space.params[p];
        assert_string_equal(x->name, y->name);
        assert_int_equal(x->n_values, y->n_values);
        for (int j = 0; j < x->n_values; j++)
            assert_true(gb_value_equal(&x->values[j], &y->values[j]));
    }
    assert_int_equal(a->n_entries, b->n_entries);
    for (size_t i = 0; i < a->n_entries; i++) {
        const gb_replay_entry *e = &a->entries[i], *f = gb_replay_find(b, e->ordinal);
        assert_non_null(f);
        assert_int_equal(e->status, f->status);
        if (e->status == GB_TRIAL_OK) assert_true(e->ms == f->ms);
    }
    assert_int_equal(a->entries[a->optimum].ordinal, b->entries[b->optimum].ordinal);
}

/* ---- the formats ------------------------------------------------------------ */

static void kernel_tuner_file_reads_as_its_table(void **state)
{
    (void)state;
    gb_replay_table t;
    char text[512];
    load("replay_kt.json", NULL, &t);
    assert_int_equal(t.format, GB_REPLAY_KTUNER);
    assert_int_equal(t.space_size, 240);
    assert_int_equal(t.n_entries, 216);
    assert_int_equal(t.n_status[GB_TRIAL_OK], 202);
    assert_int_equal(t.n_status[GB_TRIAL_COMPILE_ERROR], 7); /* CompilationFailedConfig */
    assert_int_equal(t.n_status[GB_TRIAL_LAUNCH_ERROR], 7);  /* InvalidConfig, RuntimeFailed */
    /* tune_params lists block_size_x as 64, 16, 256, 32, 128: the space sorts them. */
    const gb_param *bx = &t.space.params[0];
    assert_string_equal(bx->name, "block_size_x");
    for (int j = 1; j < bx->n_values; j++)
        assert_true(bx->values[j - 1].i < bx->values[j].i);
    assert_true(t.entries[t.optimum].ms == 0.191243);
    config_text(&t, t.entries[t.optimum].ordinal, text, sizeof text);
    assert_string_equal(text, OPTIMUM_TEXT);
    for (size_t i = 0; i < t.n_entries; i++)
        if (t.entries[i].status == GB_TRIAL_OK) assert_true(t.entries[i].ms >= 0.191243);
    gb_replay_table_free(&t);
}

static void export_and_kernel_tuner_files_give_the_same_table(void **state)
{
    (void)state;
    gb_replay_table kt, ex;
    load("replay_kt.json", NULL, &kt);
    load("replay_export.json", NULL, &ex);
    assert_int_equal(ex.format, GB_REPLAY_TRANSFER);
    assert_same_table(&kt, &ex);
    assert_non_null(strstr(ex.what, "kernel synthetic_small, shape n=4096, device synthetic"));
    gb_replay_table_free(&kt);
    gb_replay_table_free(&ex);
}

/* What `gpubench cache show KERNEL SHAPE --json` prints: groups, each with its
 * trials. */
static void cache_show_json_reads_as_the_export(void **state)
{
    (void)state;
    json_t *doc = export_doc();
    json_t *group = json_pack("{s:s, s:O}", "kernel", "synthetic_small", "trials",
                              json_object_get(doc, "trials"));
    json_t *show = json_pack("{s:s, s:s, s:[o]}", "cache", "/tmp/c", "kernel", "synthetic_small",
                             "groups", group);
    gb_replay_table kt, tr;
    gb_err err = {0};
    load("replay_kt.json", NULL, &kt);
    assert_int_equal(parse_doc(show, NULL, &tr, &err), GB_OK);
    assert_int_equal(tr.format, GB_REPLAY_TRIALS);
    assert_same_table(&kt, &tr);
    gb_replay_table_free(&kt);
    gb_replay_table_free(&tr);
    json_decref(show);
    json_decref(doc);
}

/* Kernel Tuner appends to its cache as it runs: a stopped run leaves it open. */
static void kernel_tuner_file_left_open_is_read(void **state)
{
    (void)state;
    const char *text = "{\"tune_params_keys\": [\"bx\"], \"tune_params\": {\"bx\": [1, 2, 4]},\n"
                       "\"cache\": {\n\"1\": {\"bx\": 1, \"time\": 3.0},\n"
                       "\"2\": {\"bx\": 2, \"time\": 2.0},\n";
    gb_replay_table t;
    gb_err err = {0};
    assert_int_equal(gb_replay_parse(text, strlen(text), "open.json", NULL, &t, &err), GB_OK);
    assert_int_equal(t.n_entries, 2);
    assert_int_equal(t.space_size, 3);
    assert_true(t.entries[t.optimum].ms == 2.0);
    gb_replay_table_free(&t);
}

/* ---- the run ------------------------------------------------------------------ */

static void run(const gb_replay_table *t, const char *kind, const gb_replay_opts *o,
                gb_replay_stats *s)
{
    gb_err err = {0};
    int rc = gb_replay_run(t, gb_strategy_find(kind), o, s, &err);
    if (rc) print_message("%s\n", err.msg);
    assert_int_equal(rc, GB_OK);
}

/* Exhaustive walks the canonical order, so with the target at the optimum itself
 * it needs one evaluation per valid configuration up to and including it. */
static void exhaustive_reaches_the_optimum_at_its_canonical_place(void **state)
{
    (void)state;
    gb_replay_table t;
    gb_replay_stats s;
    load("replay_kt.json", NULL, &t);
    int place = 1;
    for (size_t i = 0; i < t.n_entries; i++)
        place += t.entries[i].ordinal < t.entries[t.optimum].ordinal;
    run(&t, "exhaustive", &(gb_replay_opts){.n_seeds = 3, .within_pct = 0}, &s);
    for (int i = 0; i < 3; i++)
        assert_int_equal(s.evals[i], place);
    assert_int_equal(s.median, place);
    assert_int_equal(s.p90, place);
    assert_int_equal(s.n_reached, 3);
    assert_int_equal(place, 120); /* as the CLI test expects */
    gb_replay_stats_free(&s);
    gb_replay_table_free(&t);
}

static int by_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* The same seeds give the same searches; the median and p90 are nearest ranks of
 * the counts; every search finds the target within the table's size. */
static void random_stats_are_deterministic_for_the_seeds(void **state)
{
    (void)state;
    gb_replay_table t;
    gb_replay_stats a, b;
    load("replay_kt.json", NULL, &t);
    gb_replay_opts o = {.n_seeds = 30, .within_pct = 5};
    run(&t, "random", &o, &a);
    run(&t, "random", &o, &b);
    assert_memory_equal(a.evals, b.evals, 30 * sizeof(int));
    assert_int_equal(a.budget, 216);
    assert_int_equal(a.n_reached, 30);
    int sorted[30];
    memcpy(sorted, a.evals, sizeof sorted);
    qsort(sorted, 30, sizeof *sorted, by_int);
    assert_int_equal(a.median, sorted[14]); /* the 15th of 30 */
    assert_int_equal(a.p90, sorted[26]);    /* the 27th of 30 */
    bool differ = false;
    for (int i = 1; i < 30; i++)
        differ = differ || a.evals[i] != a.evals[0];
    assert_true(differ); /* the seeds are not all the same search */
    gb_replay_stats_free(&a);
    gb_replay_stats_free(&b);
    gb_replay_table_free(&t);
}

static void both_formats_give_the_same_stats(void **state)
{
    (void)state;
    gb_replay_table kt, ex;
    load("replay_kt.json", NULL, &kt);
    load("replay_export.json", NULL, &ex);
    for (int k = 0; k < gb_strategy_n_kinds; k++) {
        gb_replay_stats a, b;
        gb_replay_opts o = {.n_seeds = 10, .within_pct = 2, .batch = 4};
        run(&kt, gb_strategy_kinds[k].name, &o, &a);
        run(&ex, gb_strategy_kinds[k].name, &o, &b);
        assert_memory_equal(a.evals, b.evals, 10 * sizeof(int));
        gb_replay_stats_free(&a);
        gb_replay_stats_free(&b);
    }
    gb_replay_table_free(&kt);
    gb_replay_table_free(&ex);
}

/* A table of ten values, failures in front, the fastest last: failures cost an
 * evaluation, and a search whose budget ends before the target counts as
 * infinitely long. */
static void built_table(gb_replay_table *t)
{
    gb_space space = {0};
    gb_value values[10];
    gb_err err = {0};
    for (int i = 0; i < 10; i++)
        values[i] = gb_value_int(i);
    assert_int_equal(gb_space_add(&space, "x", values, 10, &err), GB_OK);
    assert_int_equal(gb_replay_table_init(t, &space, 0, &err), GB_OK);
    for (int i = 0; i < 10; i++)
        assert_int_equal(gb_replay_table_add(t, (uint64_t)i, i < 3 ? GB_TRIAL_WRONG : GB_TRIAL_OK,
                                             10.0 - i, &err),
                         GB_OK);
    assert_int_equal(gb_replay_table_add(t, 4, GB_TRIAL_OK, 1, &err), GB_EINVAL);
    assert_non_null(strstr(err.msg, "configuration x=4 is in the table twice"));
}

static void unreached_searches_count_as_infinite(void **state)
{
    (void)state;
    gb_replay_table t;
    gb_replay_stats s;
    built_table(&t);
    assert_int_equal(gb_replay_n_within(&t, 0), 1);
    run(&t, "exhaustive", &(gb_replay_opts){.n_seeds = 4, .within_pct = 0}, &s);
    assert_int_equal(s.median, 10); /* three failures, six slower ones, then the optimum */
    gb_replay_stats_free(&s);
    run(&t, "exhaustive", &(gb_replay_opts){.n_seeds = 4, .within_pct = 0, .budget = 9}, &s);
    assert_int_equal(s.median, GB_REPLAY_INF);
    assert_int_equal(s.p90, GB_REPLAY_INF);
    assert_int_equal(s.n_reached, 0);
    assert_true(s.mean_evals == 9);
    gb_replay_stats_free(&s);
    /* Within 100%: 2 ms or faster, so x = 8 or 9; random reaches one in some seeds
     * within a budget of 3 and misses in others. */
    run(&t, "random", &(gb_replay_opts){.n_seeds = 20, .within_pct = 100, .budget = 3}, &s);
    assert_true(s.n_reached > 0 && s.n_reached < 20);
    int n_inf = 0;
    for (int i = 0; i < 20; i++)
        n_inf += s.evals[i] == GB_REPLAY_INF;
    assert_int_equal(n_inf, 20 - s.n_reached);
    assert_int_equal(s.p90 == GB_REPLAY_INF, n_inf >= 3); /* the 18th of 20 */
    gb_replay_stats_free(&s);
    gb_replay_table_free(&t);
}

static void compare_ranks_by_median_then_p90(void **state)
{
    (void)state;
    gb_replay_stats a = {.n_seeds = 10, .median = 5, .p90 = 50, .n_reached = 10};
    gb_replay_stats b = {.n_seeds = 10, .median = 6, .p90 = 7, .n_reached = 10};
    gb_replay_stats c = {.n_seeds = 10, .median = 5, .p90 = GB_REPLAY_INF, .n_reached = 8};
    assert_true(gb_replay_compare(&a, &b) < 0);
    assert_true(gb_replay_compare(&a, &c) < 0);
    assert_true(gb_replay_compare(&c, &b) < 0);
    assert_int_equal(gb_replay_compare(&a, &a), 0);
}

/* ---- what is not a table ------------------------------------------------------ */

static void expect_error(const char *text, const char *want)
{
    gb_replay_table t;
    gb_err err = {0};
    assert_int_not_equal(gb_replay_parse(text, strlen(text), "bad.json", NULL, &t, &err), GB_OK);
    if (!strstr(err.msg, want) || strncmp(err.msg, "bad.json: ", 10))
        fail_msg("got \"%s\", wanted \"bad.json: ...%s...\"", err.msg, want);
}

#define KT_HEAD "{\"tune_params\": {\"bx\": [1, 2], \"by\": [\"a\", \"b\"]}, \"cache\": {"

static void bad_files_say_what_is_wrong(void **state)
{
    (void)state;
    expect_error("{\"tune_params\": ", "not JSON: line 1");
    expect_error("{\"hello\": 1}", "not a table replay reads");
    expect_error(KT_HEAD "\"1,c\": {\"bx\": 1, \"by\": \"c\", \"time\": 1.0}}}",
                 "cache entry \"1,c\": by is not one of tune_params' values");
    expect_error(KT_HEAD "\"1,a\": {\"bx\": 1, \"time\": 1.0}}}",
                 "cache entry \"1,a\": by is missing or not a value");
    expect_error(KT_HEAD "\"1,a\": {\"bx\": 1, \"by\": \"a\"}}}",
                 "cache entry \"1,a\": no \"time\"");
    expect_error(KT_HEAD "\"1,a\": {\"bx\": 1, \"by\": \"a\", \"time\": -2}}}",
                 "time is not a positive number");
    expect_error(KT_HEAD "\"1,a\": {\"bx\": 1, \"by\": \"a\", \"time\": 1.0},"
                         "\"1.0,a\": {\"bx\": 1.0, \"by\": \"a\", \"time\": 2.0}}}",
                 "cache entry \"1.0,a\": configuration bx=1,by=\"a\" is in the table twice");
    expect_error(KT_HEAD "\"1,a\": {\"bx\": 1, \"by\": \"a\", \"time\": \"InvalidConfig\"}}}",
                 "no configuration has a time: every one of its 1 entries failed");
    expect_error("{\"tune_params\": {\"bx\": []}, \"cache\": {}}",
                 "tune_params[\"bx\"] is not a list of 1 to");
    expect_error("{\"format\": \"gpubench-cache-export\", \"version\": 9, \"trials\": []}",
                 "export format version 9 is newer than this gpubench reads (1)");
    expect_error("{\"format\": \"gpubench-cache-export\", \"version\": 1, \"trials\": []}",
                 "holds no trial records");
    expect_error("{\"format\": \"gpubench-cache-export\", \"version\": 1, \"trials\": [{}]}",
                 "trials[0]: ");
}

static void missing_file_names_its_path(void **state)
{
    (void)state;
    gb_replay_table t;
    gb_err err = {0};
    assert_int_equal(gb_replay_load("/nonexistent/table.json", NULL, &t, &err), GB_EIO);
    assert_string_equal(err.msg, "/nonexistent/table.json: No such file or directory");
}

/* An export of two kernels: without a choice the error lists both; --kernel picks
 * one; a choice that matches nothing lists what there is. */
static void export_with_several_tables_needs_a_choice(void **state)
{
    (void)state;
    json_t *doc = export_doc(), *trials = json_object_get(doc, "trials");
    json_t *other = json_deep_copy(json_array_get(trials, 0));
    json_object_set_new(other, "kernel", json_string("other_kernel"));
    json_array_append_new(trials, other);
    gb_replay_table t;
    gb_err err = {0};
    assert_int_equal(parse_doc(doc, NULL, &t, &err), GB_EINVAL);
    assert_non_null(strstr(err.msg, "doc.json: holds trials of 2 kernels, shapes or devices; pick "
                                    "one with --kernel"));
    assert_non_null(strstr(err.msg, "\n  kernel synthetic_small, shape n=4096, device synthetic"));
    assert_non_null(strstr(err.msg, "(216 trials)"));
    assert_non_null(strstr(err.msg, "\n  kernel other_kernel, shape n=4096"));
    gb_replay_select sel = {.kernel = "synthetic_small"};
    assert_int_equal(parse_doc(doc, &sel, &t, &err), GB_OK);
    assert_int_equal(t.n_entries, 216);
    gb_replay_table_free(&t);
    sel = (gb_replay_select){.device = "nothing-like-it"};
    assert_int_equal(parse_doc(doc, &sel, &t, &err), GB_EINVAL);
    assert_non_null(strstr(err.msg, "no trials match"));
    assert_non_null(strstr(err.msg, "kernel other_kernel"));
    /* A Kernel Tuner file holds one table: a choice is a mistake. */
    assert_int_equal(gb_replay_load(data_path("replay_kt.json"), &sel, &t, &err), GB_EINVAL);
    assert_non_null(strstr(err.msg, "a Kernel Tuner cache file holds one table"));
    json_decref(doc);
}

/* An ok trial without statistics has no time: it is left out and counted; a trial
 * in flight where it was exported never ended, and counts as crashed. */
static void export_trials_without_a_time(void **state)
{
    (void)state;
    json_t *doc = export_doc(), *trials = json_object_get(doc, "trials");
    size_t i;
    json_t *trial;
    int n_changed = 0;
    json_array_foreach(trials, i, trial)
    {
        if (strcmp(json_string_value(json_object_get(trial, "status")), "ok")) continue;
        if (n_changed == 0) json_object_set_new(trial, "stats", json_null());
        if (n_changed == 1) {
            json_object_set_new(trial, "in_flight", json_true());
            json_object_set_new(trial, "owner_pid", json_integer(1));
            json_object_set_new(trial, "owner_boot", json_string("b"));
        }
        if (++n_changed == 2) break;
    }
    gb_replay_table t;
    gb_err err = {0};
    assert_int_equal(parse_doc(doc, NULL, &t, &err), GB_OK);
    assert_int_equal(t.n_unmeasured, 1);
    assert_int_equal(t.n_entries, 215);
    assert_int_equal(t.n_status[GB_TRIAL_OK], 200);
    assert_int_equal(t.n_status[GB_TRIAL_CRASHED], 1);
    gb_replay_table_free(&t);
    json_decref(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(kernel_tuner_file_reads_as_its_table),
        cmocka_unit_test(export_and_kernel_tuner_files_give_the_same_table),
        cmocka_unit_test(cache_show_json_reads_as_the_export),
        cmocka_unit_test(kernel_tuner_file_left_open_is_read),
        cmocka_unit_test(exhaustive_reaches_the_optimum_at_its_canonical_place),
        cmocka_unit_test(random_stats_are_deterministic_for_the_seeds),
        cmocka_unit_test(both_formats_give_the_same_stats),
        cmocka_unit_test(unreached_searches_count_as_infinite),
        cmocka_unit_test(compare_ranks_by_median_then_p90),
        cmocka_unit_test(bad_files_say_what_is_wrong),
        cmocka_unit_test(missing_file_names_its_path),
        cmocka_unit_test(export_with_several_tables_needs_a_choice),
        cmocka_unit_test(export_trials_without_a_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
