/* Sharding (tuner/shard.h): which configurations a shard owns, where --shard auto
 * finds its number, and, on the fake backend of tuner_fixture.h, that the shards
 * of a run together run every trial once and, merged, leave the cache holding what
 * one unsharded run leaves. */
#include "tuner_fixture.h"

#include "cache/transfer.h"
#include "tuner/shard.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- the partition ---------------------------------------------------------- */

static void test_every_ordinal_belongs_to_exactly_one_shard(void **state)
{
    (void)state;
    static const int counts[] = {1, 2, 3, 7, 64};
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        int n = counts[c], per[64] = {0};
        for (uint64_t o = 0; o < 20000; o++) {
            int owners = 0;
            for (int i = 0; i < n; i++)
                if (gb_shard_owns(&(gb_shard){i, n}, o)) owners++, per[i]++;
            assert_int_equal(owners, 1);
        }
        for (int i = 0; i < n; i++) /* each about its share: 20000/n, within 20% */
            assert_true(per[i] > 0.8 * 20000 / n && per[i] < 1.2 * 20000 / n);
    }
    assert_true(gb_shard_owns(NULL, 5));
    assert_true(gb_shard_owns(&(gb_shard){0, 0}, 5));
}

static void test_shard_text_is_i_of_n_from_zero(void **state)
{
    (void)state;
    gb_shard s = {0};
    gb_err err = {0};
    assert_int_equal(gb_shard_parse("3/8", &s, &err), GB_OK);
    assert_int_equal(s.index, 3);
    assert_int_equal(s.count, 8);
    static const char *const bad[] = {"8/8", "1/0",  "-1/2", "1/",    "/2",
                                      "12",  "1/2x", " 1/2", "0/5000"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(gb_shard_parse(bad[i], &s, &err), GB_EINVAL);
        assert_non_null(strstr(err.msg, bad[i]));
    }
}

/* ---- --shard auto --------------------------------------------------------------- */

static const char *const *env_table;

static char *fake_getenv(const char *name)
{
    for (int i = 0; env_table[i]; i += 2)
        if (strcmp(env_table[i], name) == 0) return (char *)env_table[i + 1];
    return NULL;
}

/* The shard --shard auto finds in this environment (name, value, ..., NULL). */
static int from_env(const char *const *vars, gb_shard *out, const char **source, gb_err *err)
{
    env_table = vars;
    return gb_shard_from_env(fake_getenv, out, source, err);
}

static void assert_shard(const char *const *vars, int index, int count, const char *source)
{
    gb_shard s = {0};
    const char *src = NULL;
    gb_err err = {0};
    assert_int_equal(from_env(vars, &s, &src, &err), GB_OK);
    assert_int_equal(s.index, index);
    assert_int_equal(s.count, count);
    assert_string_equal(src, source);
}

static void test_auto_reads_each_scheduler_s_variables(void **state)
{
    (void)state;
    assert_shard((const char *[]){"SLURM_ARRAY_TASK_ID", "5", "SLURM_ARRAY_TASK_COUNT", "8",
                                  "SLURM_ARRAY_TASK_MIN", "0", "SLURM_PROCID", "0", "SLURM_NTASKS",
                                  "1", NULL},
                 5, 8, "SLURM_ARRAY_TASK_ID");
    /* --array=1-8 and --array=0-14:2 number their tasks from 0 here */
    assert_shard((const char *[]){"SLURM_ARRAY_TASK_ID", "1", "SLURM_ARRAY_TASK_COUNT", "8",
                                  "SLURM_ARRAY_TASK_MIN", "1", NULL},
                 0, 8, "SLURM_ARRAY_TASK_ID");
    assert_shard((const char *[]){"SLURM_ARRAY_TASK_ID", "14", "SLURM_ARRAY_TASK_COUNT", "8",
                                  "SLURM_ARRAY_TASK_MIN", "0", "SLURM_ARRAY_TASK_STEP", "2", NULL},
                 7, 8, "SLURM_ARRAY_TASK_ID");
    /* an MPI launcher inside a Slurm allocation: the launcher's rank, not srun's */
    assert_shard((const char *[]){"OMPI_COMM_WORLD_RANK", "3", "OMPI_COMM_WORLD_SIZE", "4",
                                  "SLURM_PROCID", "0", "SLURM_NTASKS", "1", NULL},
                 3, 4, "OMPI_COMM_WORLD_RANK");
    assert_shard((const char *[]){"PMI_RANK", "2", "PMI_SIZE", "3", NULL}, 2, 3, "PMI_RANK");
    assert_shard((const char *[]){"MV2_COMM_WORLD_RANK", "1", "MV2_COMM_WORLD_SIZE", "2", NULL}, 1,
                 2, "MV2_COMM_WORLD_RANK");
    assert_shard((const char *[]){"SLURM_PROCID", "6", "SLURM_NTASKS", "16", NULL}, 6, 16,
                 "SLURM_PROCID");
    assert_shard((const char *[]){"JOB_COMPLETION_INDEX", "4", "GPUBENCH_SHARD_COUNT", "10", NULL},
                 4, 10, "JOB_COMPLETION_INDEX");
}

static void assert_refused(const char *const *vars, const char *words)
{
    gb_shard s = {0};
    const char *src = NULL;
    gb_err err = {0};
    assert_int_equal(from_env(vars, &s, &src, &err), GB_EINVAL);
    if (!strstr(err.msg, words)) fail_msg("'%s' does not say '%s'", err.msg, words);
}

static void test_auto_refuses_what_does_not_make_a_shard(void **state)
{
    (void)state;
    assert_refused((const char *[]){NULL}, "no scheduler's variables are set");
    assert_refused((const char *[]){"JOB_COMPLETION_INDEX", "4", NULL},
                   "GPUBENCH_SHARD_COUNT, the count, is not");
    assert_refused((const char *[]){"PMI_RANK", "two", "PMI_SIZE", "3", NULL},
                   "PMI_RANK is 'two', not a whole number");
    assert_refused((const char *[]){"OMPI_COMM_WORLD_RANK", "4", "OMPI_COMM_WORLD_SIZE", "4", NULL},
                   "shard 4 is not below the count 4");
    /* --array=1,4,9 has no step to count by */
    assert_refused((const char *[]){"SLURM_ARRAY_TASK_ID", "4", "SLURM_ARRAY_TASK_COUNT", "3",
                                    "SLURM_ARRAY_TASK_MIN", "1", "SLURM_ARRAY_TASK_STEP", "2",
                                    NULL},
                   "give the array as a range");
}

/* ---- tuning in shards --------------------------------------------------------- */

/* Every trial record of a cache: its key and status, sorted by key. */
typedef struct trial_set {
    char keys[64][80];
    int n;
} trial_set;

static int add_trial(void *ctx, const gb_cache_item *item)
{
    trial_set *set = ctx;
    gb_trial_record rec;
    gb_err err;
    char hex[33];
    assert_int_equal(gb_cache_read_trial(item->value, item->len, &rec, &err), GB_OK);
    assert_false(rec.in_flight);
    assert_true(set->n < 64);
    gb_key_hex(&item->key, hex);
    snprintf(set->keys[set->n++], sizeof set->keys[0], "%s %s", hex,
             gb_trial_status_name(rec.status));
    gb_trial_record_free(&rec);
    return 0;
}

static int by_text(const void *a, const void *b)
{
    return strcmp(a, b);
}

static void read_trials(gb_cache *cache, trial_set *out)
{
    out->n = 0;
    assert_int_equal(gb_cache_walk(cache, GB_DB_TRIALS, add_trial, out, NULL), GB_OK);
    qsort(out->keys, (size_t)out->n, sizeof out->keys[0], by_text);
}

/* A cache of its own in the fixture's folder, for one shard. */
static gb_cache *open_cache(fixture *f, const char *name)
{
    char dir[128];
    gb_cache *c = NULL;
    snprintf(dir, sizeof dir, "%s/%s", f->dir, name);
    assert_int_equal(mkdir(dir, 0700), 0);
    assert_int_equal(gb_cache_open(dir, 0, &c, NULL), GB_OK);
    return c;
}

static void tune_shard(fixture *f, gb_cache *cache, int index, int count)
{
    f->opts.cache = cache;
    f->opts.shard = (gb_shard){index, count};
    assert_int_equal(tune(f, 1), GB_OK);
}

static void test_the_shards_together_run_every_trial_once(void **state)
{
    fixture *f = *state;
    int ran_alone[16];
    tune(f, 1);
    memcpy(ran_alone, f->fake.ran, sizeof ran_alone);
    int evals = f->result.shapes[0].n_evals;
    memset(f->fake.ran, 0, sizeof f->fake.ran);
    int sum = 0;
    for (int i = 0; i < 3; i++) {
        gb_cache *c = open_cache(f, (char[]){'s', (char)('0' + i), 0});
        tune_shard(f, c, i, 3);
        sum += f->result.shapes[0].n_evals;
        gb_cache_close(c);
    }
    f->opts.cache = f->cache;
    assert_int_equal(sum, evals);
    for (int v = 0; v < 16; v++) /* the race runs a shard's leaders again: count trials only */
        assert_int_equal(f->fake.ran[v] > 0, ran_alone[v] > 0);
}

static void test_merged_shard_caches_hold_what_one_unsharded_run_holds(void **state)
{
    fixture *f = *state;
    tune(f, 1); /* the unsharded run, in the fixture's cache */
    gb_cache *parts[2], *merged = open_cache(f, "merged");
    for (int i = 0; i < 2; i++) {
        parts[i] = open_cache(f, i ? "s1" : "s0");
        tune_shard(f, parts[i], i, 2);
    }
    gb_transfer_opts opts = {0};
    gb_transfer_summary sum = {0};
    for (int i = 1; i >= 0; i--) /* in either order */
        assert_int_equal(gb_cache_merge(merged, parts[i], &opts, &sum, &f->err), GB_OK);
    assert_int_equal(sum.best.combined, 1);

    trial_set *alone = calloc(2, sizeof *alone), *both = alone + 1;
    read_trials(f->cache, alone);
    read_trials(merged, both);
    assert_int_equal(alone->n, both->n);
    for (int i = 0; i < alone->n; i++)
        assert_string_equal(alone->keys[i], both->keys[i]);
    free(alone);

    gb_best_record one, folded;
    assert_int_equal(read_best_of(f, &one, NULL), GB_OK);
    gb_cache_close(f->cache);
    f->cache = f->opts.cache = merged; /* read_best_of reads the fixture's cache */
    assert_int_equal(read_best_of(f, &folded, NULL), GB_OK);
    assert_true(gb_fields_equal(&one.config, &folded.config));
    assert_int_equal(folded.shard_count, 2);
    assert_int_equal(folded.n_shards, 2);
    assert_true(gb_best_record_whole(&folded));
    assert_true(folded.complete);
    assert_int_equal(folded.n_timed, one.n_timed);
    assert_int_equal(folded.n_failed, one.n_failed);
    assert_int_equal(folded.n_rejected, one.n_rejected);
    gb_best_record_free(&one);
    gb_best_record_free(&folded);
    gb_cache_close(parts[0]);
    gb_cache_close(parts[1]);
}

static void test_two_shards_on_one_cache_fold_their_bests(void **state)
{
    fixture *f = *state;
    tune_shard(f, f->cache, 0, 2);
    assert_int_equal(tune(f, 1), GB_OK); /* shard 0 again: answered from the cache */
    assert_true(f->result.shapes[0].cached);
    f->opts.shard = (gb_shard){1, 2}; /* shard 1 is not answered by shard 0's best */
    assert_int_equal(tune(f, 1), GB_OK);
    assert_false(f->result.shapes[0].cached);
    assert_true(f->result.shapes[0].n_timed > 0);
    gb_best_record rec;
    assert_int_equal(read_best_of(f, &rec, NULL), GB_OK);
    assert_int_equal(rec.n_shards, 2);
    gb_best_record_free(&rec);
    int trials = count_trials(f);
    f->opts.shard = (gb_shard){0, 0}; /* the whole space is in: an unsharded run is answered */
    assert_int_equal(tune(f, 1), GB_OK);
    assert_true(f->result.shapes[0].cached);
    assert_int_equal(count_trials(f), trials);
}

static void test_a_budget_is_shared_out_among_the_shards(void **state)
{
    fixture *f = *state;
    gb_tune_request req = {
        .shapes = f->shapes, .n_shapes = 1, .max_evals = 5, .strategy = "random"};
    f->opts.shard = (gb_shard){1, 2};
    assert_int_equal(gb_tune(&f->opts, &f->kernel, &req, &f->result, &f->err), GB_OK);
    assert_int_equal(f->result.shapes[0].budget_evals, 3);
    assert_true(f->result.shapes[0].n_evals <= 3);
}

static void test_a_merge_keeps_a_whole_best_over_a_shard_s(void **state)
{
    fixture *f = *state;
    gb_cache *part = open_cache(f, "s0");
    tune_shard(f, part, 0, 2);
    f->opts.shard = (gb_shard){0, 0};
    tune_shard(f, f->cache, 0, 0);
    gb_transfer_opts opts = {0};
    gb_transfer_summary sum = {0};
    assert_int_equal(gb_cache_merge(f->cache, part, &opts, &sum, &f->err), GB_OK);
    assert_int_equal(sum.best.kept, 1);
    gb_best_record rec;
    assert_int_equal(read_best_of(f, &rec, NULL), GB_OK);
    assert_int_equal(rec.shard_count, 0);
    gb_best_record_free(&rec);
    gb_cache_close(part);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_ordinal_belongs_to_exactly_one_shard),
        cmocka_unit_test(test_shard_text_is_i_of_n_from_zero),
        cmocka_unit_test(test_auto_reads_each_scheduler_s_variables),
        cmocka_unit_test(test_auto_refuses_what_does_not_make_a_shard),
        cmocka_unit_test_setup_teardown(test_the_shards_together_run_every_trial_once, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_merged_shard_caches_hold_what_one_unsharded_run_holds,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_two_shards_on_one_cache_fold_their_bests, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_budget_is_shared_out_among_the_shards, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_merge_keeps_a_whole_best_over_a_shard_s, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
