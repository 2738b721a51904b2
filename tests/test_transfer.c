/* Moving results between caches: export files, import, merge, the rule for equal
 * keys, Kernel Tuner files, and base64.
 *
 * tests/data/ktuner_small.json is Kernel Tuner's own test/test_cache_file.json
 * (github.com/KernelTuner/kernel_tuner, commit a36ec5ac, Apache License 2.0): 15
 * configurations of vector_add on an NVIDIA RTX A4000. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cache/base64.h"
#include "cache/ktuner.h"
#include "cache_fixtures.h"
#include "tuner/variant.h"

#include <math.h>

static gb_transfer_opts opts_for(fixture *f, bool cubins)
{
    return (gb_transfer_opts){
        .cubins = cubins, .engine = "0.1.0", .now = 1795300000, .note = fx_note, .note_ctx = f};
}

/* The cache's export as the file's text. */
static char *export_text(fixture *f, gb_cache *cache, bool cubins, gb_transfer_summary *sum)
{
    json_t *doc = NULL;
    gb_transfer_opts o = opts_for(f, cubins);
    assert_int_equal(gb_transfer_file_make(cache, &o, &doc, sum, &f->err), GB_OK);
    char *text = gb_transfer_file_dump(doc);
    json_decref(doc);
    assert_non_null(text);
    return text;
}

static int import_text(fixture *f, gb_cache *cache, const char *text, bool cubins,
                       gb_transfer_summary *sum)
{
    gb_transfer_opts o = opts_for(f, cubins);
    return gb_transfer_file_read(cache, text, strlen(text), &o, sum, &f->err);
}

/* A cache with two bests, three trials (one failed with its log, one naming a cubin)
 * and that cubin. */
static void fill(fixture *f, char cubin_hex[33])
{
    gb_best_record b1 = fx_best("gemm", "NVIDIA H200/sm_90/132", 1024, 64, 0.5, 1795000000);
    gb_best_record b2 = fx_best("scale", "NVIDIA H200/sm_90/132", 4096, 256, 0.01, 1795000100);
    b1.sources = calloc(1, sizeof *b1.sources);
    b1.sources[0].path = strdup("/opt/templates/sgemm.cuh");
    strcpy(b1.sources[0].hash, "00112233445566778899aabbccddeeff");
    b1.n_sources = 1;
    fx_put_best(f->cache, &b1, NULL);
    fx_put_best(f->cache, &b2, NULL);
    gb_trial_record t1 = fx_trial("gemm", "NVIDIA H200/sm_90/132", 1024, 64, 0.51, 1795000000);
    gb_trial_record t2 = fx_trial("gemm", "NVIDIA H200/sm_90/132", 1024, 128, 0.6, 1795000001);
    gb_trial_record t3 = fx_trial("gemm", "NVIDIA H200/sm_90/132", 1024, 32, 0, 1795000002);
    fx_put_cubin(f->cache, 1, "13.0", 600, cubin_hex);
    strcpy(t1.cubin, cubin_hex);
    t3.status = GB_TRIAL_COMPILE_ERROR;
    t3.has_stats = false;
    free(t3.reason);
    t3.reason = strdup("e.cu:2: error: static assertion failed");
    t3.log = strdup("e.cu(2): error: static assertion failed with \"V must be 1\"\n");
    t3.registers = -1;
    fx_put_trial(f->cache, &t1, NULL);
    fx_put_trial(f->cache, &t2, NULL);
    fx_put_trial(f->cache, &t3, NULL);
    gb_best_record_free(&b1);
    gb_best_record_free(&b2);
    gb_trial_record_free(&t1);
    gb_trial_record_free(&t2);
    gb_trial_record_free(&t3);
}

static void test_export_then_import_round_trips_every_record(void **state)
{
    fixture *f = *state;
    char hex[33];
    gb_transfer_summary sum;
    fill(f, hex);
    char *first = export_text(f, f->cache, true, &sum);
    assert_int_equal(sum.best.imported, 2);
    assert_int_equal(sum.trials.imported, 3);
    assert_int_equal(sum.cubins.imported, 1);
    assert_non_null(strstr(first, "\"format\":\"gpubench-cache-export\",\"version\":1"));

    fx_open2(f);
    assert_int_equal(import_text(f, f->cache2, first, true, &sum), GB_OK);
    assert_int_equal(sum.best.imported, 2);
    assert_int_equal(sum.trials.imported, 3);
    assert_int_equal(sum.cubins.imported, 1);
    assert_int_equal(gb_transfer_skipped(&sum), 0);

    char *second = export_text(f, f->cache2, true, &sum);
    json_t *a = json_loads(first, 0, NULL), *b = json_loads(second, 0, NULL);
    static const char *const lists[] = {"best", "trials", "cubins"};
    for (int i = 0; i < 3; i++)
        assert_true(json_equal(json_object_get(a, lists[i]), json_object_get(b, lists[i])));
    /* Importing the same file again changes nothing: every key holds an equal record. */
    assert_int_equal(import_text(f, f->cache2, first, true, &sum), GB_OK);
    assert_int_equal(sum.best.kept, 2);
    assert_int_equal(sum.trials.kept, 3);
    assert_int_equal(sum.cubins.kept, 1);
    json_decref(a);
    json_decref(b);
    free(first);
    free(second);
}

static void test_cubins_travel_only_when_asked_for(void **state)
{
    fixture *f = *state;
    char hex[33];
    gb_transfer_summary sum;
    fill(f, hex);
    char *plain = export_text(f, f->cache, false, &sum);
    assert_null(strstr(plain, "\"cubins\""));
    free(plain);
    char *with = export_text(f, f->cache, true, &sum);
    fx_open2(f);
    assert_int_equal(import_text(f, f->cache2, with, false, &sum), GB_OK);
    assert_int_equal(sum.cubins_ignored, 1);
    assert_int_equal(fx_count(f->cache2, GB_DB_CUBINS), 0);
    assert_int_equal(fx_count(f->cache2, GB_DB_TRIALS), 3);
    free(with);
}

static void test_export_filters_by_kernel_and_takes_only_its_cubins(void **state)
{
    fixture *f = *state;
    char hex[33];
    gb_transfer_summary sum;
    fill(f, hex);
    fx_put_cubin(f->cache, 2, "13.0", 100, NULL); /* named by no trial */
    json_t *doc = NULL;
    gb_transfer_opts o = opts_for(f, true);
    o.filter.kernel = "scale";
    assert_int_equal(gb_transfer_file_make(f->cache, &o, &doc, &sum, &f->err), GB_OK);
    assert_int_equal(json_array_size(json_object_get(doc, "best")), 1);
    assert_int_equal(json_array_size(json_object_get(doc, "trials")), 0);
    assert_int_equal(json_array_size(json_object_get(doc, "cubins")), 0);
    json_decref(doc);
    o.filter.kernel = "gemm";
    assert_int_equal(gb_transfer_file_make(f->cache, &o, &doc, &sum, &f->err), GB_OK);
    assert_int_equal(json_array_size(json_object_get(doc, "cubins")), 1);
    assert_string_equal(json_string_value(json_object_get(
                            json_array_get(json_object_get(doc, "cubins"), 0), "key")),
                        hex);
    json_decref(doc);
}

static void test_import_keys_records_by_content_and_skips_bad_ones_by_index(void **state)
{
    fixture *f = *state;
    gb_transfer_summary sum;
    gb_best_record good = fx_best("gemm", "dev", 64, 8, 0.2, 1795000000);
    json_t *good_json = gb_best_record_to_json(&good);
    json_t *no_kernel = json_deep_copy(good_json), *bad_name = json_deep_copy(good_json);
    json_object_del(no_kernel, "kernel");
    json_object_set_new(bad_name, "kernel", json_string("rm -rf /;x"));
    json_t *bad_field = json_deep_copy(good_json);
    json_object_set_new(json_object_get(bad_field, "config"), "B\nx", json_integer(1));
    json_t *doc = json_pack("{s:s, s:i, s:[o,o,o,o]}", "format", GB_TRANSFER_FORMAT, "version", 1,
                            "best", good_json, no_kernel, bad_name, bad_field);
    char *text = json_dumps(doc, 0);
    assert_int_equal(import_text(f, f->cache, text, false, &sum), GB_OK);
    assert_int_equal(sum.best.imported, 1);
    assert_int_equal(sum.best.skipped, 3);
    assert_int_equal(gb_transfer_skipped(&sum), 3);
    assert_non_null(strstr(f->notes, "best[1]: "));
    assert_non_null(strstr(f->notes, "best[2]: kernel name"));
    assert_non_null(strstr(f->notes, "best[3]: config field"));
    assert_null(strstr(f->notes, "best[0]"));
    gb_key key;
    assert_int_equal(gb_record_best_key(&good.id, &key), GB_OK);
    assert_true(fx_has(f->cache, GB_DB_BEST, &key));
    assert_int_equal(fx_count(f->cache, GB_DB_BEST), 1);
    free(text);
    json_decref(doc);
    gb_best_record_free(&good);
}

static void test_import_refuses_other_files_and_newer_versions(void **state)
{
    fixture *f = *state;
    gb_transfer_summary sum;
    assert_int_equal(import_text(f, f->cache,
                                 "{\"format\":\"gpubench-cache-export\",\"version\":2}", false,
                                 &sum),
                     GB_EINVAL);
    assert_non_null(strstr(f->err.msg, "version 2 is newer"));
    assert_int_equal(import_text(f, f->cache, "{\"version\":1}", false, &sum), GB_EINVAL);
    assert_non_null(strstr(f->err.msg, "not a gpubench export file"));
    assert_int_equal(import_text(f, f->cache, "{\"format\": [1,\n", false, &sum), GB_EINVAL);
    assert_non_null(strstr(f->err.msg, "line 2"));
    assert_int_equal(import_text(f, f->cache,
                                 "{\"format\":\"gpubench-cache-export\",\"version\":1,\"best\":{}}",
                                 false, &sum),
                     GB_EINVAL);
    assert_int_equal(fx_count(f->cache, GB_DB_BEST), 0);
}

/* Imports one best record over whatever the key holds. */
static gb_transfer_summary import_best(fixture *f, const gb_best_record *rec)
{
    gb_transfer_summary sum = {0};
    assert_int_equal(gb_transfer_put_best(f->cache, rec, &sum, &f->err), GB_OK);
    return sum;
}

static double stored_median(fixture *f, const gb_record_id *id)
{
    gb_key key;
    void *value;
    size_t len;
    gb_best_record rec;
    assert_int_equal(gb_record_best_key(id, &key), GB_OK);
    assert_int_equal(gb_cache_get(f->cache, GB_DB_BEST, &key, &value, &len, &f->err), GB_OK);
    assert_int_equal(gb_cache_read_best(value, len, &rec, &f->err), GB_OK);
    double median = rec.stats.median;
    gb_best_record_free(&rec);
    free(value);
    return median;
}

static void test_equal_keys_a_clean_best_beats_then_more_timed_then_newer(void **state)
{
    fixture *f = *state;
    gb_best_record clean = fx_best("k", "d", 1, 1, 1.0, 1000);
    gb_best_record capped = fx_best("k", "d", 1, 2, 2.0, 5000);
    capped.capped = true;
    assert_int_equal(import_best(f, &clean).best.imported, 1);
    assert_int_equal(import_best(f, &capped).best.kept, 1); /* newer, but not clean */
    assert_true(stored_median(f, &clean.id) == 1.0);
    gb_best_record wider = fx_best("k", "d", 1, 3, 3.0, 500);
    wider.n_timed = 9;
    assert_int_equal(import_best(f, &wider).best.replaced, 1); /* older, but more timed */
    assert_true(stored_median(f, &clean.id) == 3.0);
    gb_best_record newer = fx_best("k", "d", 1, 4, 4.0, 600);
    newer.n_timed = 9;
    assert_int_equal(import_best(f, &newer).best.replaced, 1);
    assert_int_equal(import_best(f, &wider).best.kept, 1);
    assert_true(stored_median(f, &clean.id) == 4.0);
    gb_best_record throttled = fx_best("k", "d", 1, 5, 5.0, 9000);
    throttled.n_timed = 99;
    throttled.n_throttled = 1;
    assert_int_equal(import_best(f, &throttled).best.kept, 1);
    gb_best_record contended = fx_best("k", "d", 1, 6, 6.0, 9000);
    contended.n_timed = 99;
    contended.contended = true; /* another process used the GPU while it was timed */
    assert_int_equal(import_best(f, &contended).best.kept, 1);
    assert_false(gb_transfer_best_wins(&newer, &newer)); /* a full tie keeps what is there */
    gb_best_record *all[] = {&clean, &capped, &wider, &newer, &throttled, &contended};
    for (int i = 0; i < 6; i++)
        gb_best_record_free(all[i]);
}

static void test_a_trial_in_flight_elsewhere_comes_in_as_crashed_and_never_wins(void **state)
{
    fixture *f = *state;
    gb_transfer_summary sum = {0};
    gb_trial_record flying = fx_trial("k", "d", 1, 1, 0, 9000);
    flying.in_flight = true;
    flying.status = GB_TRIAL_CRASHED;
    flying.has_stats = false;
    flying.owner_pid = 4242;
    strcpy(flying.owner_boot, "1b2c");
    assert_int_equal(gb_transfer_put_trial(f->cache, &flying, &sum, &f->err), GB_OK);
    assert_int_equal(sum.trials.imported, 1);
    assert_int_equal(sum.in_flight, 1);
    gb_key key;
    void *value;
    size_t len;
    gb_trial_record got;
    assert_int_equal(gb_record_trial_key(&flying.id, &flying.config, &key), GB_OK);
    assert_int_equal(gb_cache_get(f->cache, GB_DB_TRIALS, &key, &value, &len, &f->err), GB_OK);
    assert_int_equal(gb_cache_read_trial(value, len, &got, &f->err), GB_OK);
    assert_false(got.in_flight);
    assert_int_equal(got.status, GB_TRIAL_CRASHED);
    assert_string_equal(got.reason, GB_IMPORTED_IN_FLIGHT_REASON);
    gb_trial_record_free(&got);
    free(value);
    /* A finished trial replaces it; a later one in flight does not replace that. */
    gb_trial_record done = fx_trial("k", "d", 1, 1, 0.3, 100);
    assert_int_equal(gb_transfer_put_trial(f->cache, &done, &sum, &f->err), GB_OK);
    assert_int_equal(sum.trials.replaced, 0); /* the stored one is crashed, not in flight */
    assert_int_equal(sum.trials.kept, 1);     /* ... and newer */
    gb_trial_record later = fx_trial("k", "d", 1, 1, 0.3, 10000);
    assert_int_equal(gb_transfer_put_trial(f->cache, &later, &sum, &f->err), GB_OK);
    assert_int_equal(sum.trials.replaced, 1);
    flying.when = 20000;
    assert_int_equal(gb_transfer_put_trial(f->cache, &flying, &sum, &f->err), GB_OK);
    assert_int_equal(sum.trials.kept, 2);
    /* The rule itself: finished beats in flight whatever the times. */
    gb_trial_record local = fx_trial("k", "d", 1, 1, 0, 99999);
    local.in_flight = true;
    assert_true(gb_transfer_trial_wins(&done, &local));
    assert_false(gb_transfer_trial_wins(&local, &done));
    gb_trial_record *all[] = {&flying, &done, &later, &local};
    for (int i = 0; i < 4; i++)
        gb_trial_record_free(all[i]);
}

static void test_merge_folds_another_cache_in_by_the_same_rule(void **state)
{
    fixture *f = *state;
    gb_transfer_summary sum;
    fx_open2(f);
    gb_best_record here = fx_best("gemm", "d", 1, 1, 1.0, 1000);
    gb_best_record there_newer = fx_best("gemm", "d", 1, 2, 0.9, 2000);
    gb_best_record only_there = fx_best("scale", "d", 7, 2, 0.1, 2000);
    gb_trial_record trial = fx_trial("gemm", "d", 1, 2, 0.9, 2000);
    fx_put_best(f->cache, &here, NULL);
    fx_put_best(f->cache2, &there_newer, NULL);
    fx_put_best(f->cache2, &only_there, NULL);
    fx_put_trial(f->cache2, &trial, NULL);
    fx_put_cubin(f->cache2, 3, "13.0", 64, NULL);
    gb_key wrong = {{0}};
    fx_put_best(f->cache2, &only_there, &wrong); /* a record under a key it does not own */
    gb_transfer_opts o = opts_for(f, false);
    assert_int_equal(gb_cache_merge(f->cache, f->cache2, &o, &sum, &f->err), GB_OK);
    assert_int_equal(sum.best.replaced, 1);
    assert_int_equal(sum.best.imported, 1);
    assert_int_equal(sum.best.kept, 1); /* the misplaced copy, keyed by its content */
    assert_int_equal(sum.trials.imported, 1);
    assert_int_equal(sum.cubins_ignored, 1);
    assert_int_equal(fx_count(f->cache, GB_DB_BEST), 2);
    assert_false(fx_has(f->cache, GB_DB_BEST, &wrong));
    assert_true(stored_median(f, &here.id) == 0.9);
    o.cubins = true;
    assert_int_equal(gb_cache_merge(f->cache, f->cache2, &o, &sum, &f->err), GB_OK);
    assert_int_equal(sum.cubins.imported, 1);
    assert_int_equal(sum.best.kept, 3);
    assert_int_equal(gb_cache_merge(f->cache, f->cache, &o, &sum, &f->err), GB_EINVAL);
    assert_non_null(strstr(f->err.msg, "into itself"));
    gb_best_record_free(&here);
    gb_best_record_free(&there_newer);
    gb_best_record_free(&only_there);
    gb_trial_record_free(&trial);
}

static void test_a_different_cubin_under_a_known_key_is_reported_not_stored(void **state)
{
    fixture *f = *state;
    char hex[33];
    gb_transfer_summary sum;
    fill(f, hex);
    char *text = export_text(f, f->cache, true, &sum);
    fx_open2(f);
    gb_key key;
    gb_key_from_hex(hex, &key);
    unsigned char other[64] = {0x7f, 'E', 'L', 'F', 9, 9, 9};
    assert_int_equal(gb_cache_put_cubin(f->cache2, &key,
                                        "{\"lowered\":[\"x\"],\"log\":\"\","
                                        "\"resources\":[1,0,0,0,0]}",
                                        other, sizeof other, &f->err),
                     GB_OK);
    assert_int_equal(import_text(f, f->cache2, text, true, &sum), GB_OK);
    assert_int_equal(sum.cubins.skipped, 1);
    assert_non_null(strstr(f->notes, "cubins[0]: differs from the cubin this cache holds"));
    char *meta;
    void *cubin;
    size_t bytes;
    assert_int_equal(gb_cache_get_cubin(f->cache2, &key, &meta, &cubin, &bytes, &f->err), GB_OK);
    assert_int_equal(bytes, sizeof other);
    free(meta);
    free(cubin);
    free(text);
}

static void test_a_cubin_that_is_not_elf_or_not_base64_is_skipped(void **state)
{
    fixture *f = *state;
    gb_transfer_summary sum;
    const char *text =
        "{\"format\":\"gpubench-cache-export\",\"version\":1,\"cubins\":["
        "{\"key\":\"00112233445566778899aabbccddeeff\",\"meta\":{\"lowered\":[\"x\"],\"log\":\"\","
        "\"resources\":[1,0,0,0,0]},\"cubin\":\"aGVsbG8gd29ybGQ=\"},"
        "{\"key\":\"00112233445566778899aabbccddeeff\",\"meta\":{},\"cubin\":\"f0VMRg==\"},"
        "{\"key\":\"00112233445566778899aabbccddeeff\",\"meta\":{},\"cubin\":\"f0V$RgAA\"},"
        "{\"key\":\"nothex\",\"meta\":{},\"cubin\":\"\"}]}";
    assert_int_equal(import_text(f, f->cache, text, true, &sum), GB_OK);
    assert_int_equal(sum.cubins.skipped, 4);
    assert_non_null(strstr(f->notes, "cubins[0]: not an ELF cubin"));
    assert_non_null(strstr(f->notes, "cubins[1]: its JSON lacks"));
    assert_non_null(strstr(f->notes, "cubins[2]: its cubin is not base64"));
    assert_non_null(strstr(f->notes, "cubins[3]: it needs key"));
    assert_int_equal(fx_count(f->cache, GB_DB_CUBINS), 0);
}

/* ---- Kernel Tuner --------------------------------------------------------- */

static char *read_data(const char *name, size_t *len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/data/%s", getenv("GB_SOURCE_DIR"), name);
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    char *text = malloc(1 << 20);
    *len = fread(text, 1, (1 << 20) - 1, fp);
    text[*len] = '\0';
    fclose(fp);
    return text;
}

static gb_ktuner_opts kt_opts(fixture *f, const gb_fields *shape)
{
    return (gb_ktuner_opts){
        .kernel = "vector_add", .shape = shape, .now = 1795300000, .note = fx_note, .note_ctx = f};
}

static void test_a_kernel_tuner_file_becomes_trials_and_a_best(void **state)
{
    fixture *f = *state;
    size_t len;
    char *text = read_data("ktuner_small.json", &len);
    gb_fields shape = fx_fields("n", 100);
    gb_ktuner_opts o = kt_opts(f, &shape);
    gb_ktuner_summary sum;
    assert_int_equal(gb_ktuner_import(f->cache, text, len, &o, &sum, &f->err), GB_OK);
    assert_int_equal(sum.n_entries, 15);
    assert_int_equal(sum.n_ok, 15);
    assert_int_equal(sum.n_skipped, 0);
    assert_int_equal(sum.stored.trials.imported, 15);
    assert_int_equal(sum.stored.best.imported, 1);
    assert_true(sum.has_best);
    assert_string_equal(sum.best_config, "block_size_x=768");
    assert_true(sum.best_ms == 0.03175771422684193);
    assert_string_equal(sum.device, "NVIDIA RTX A4000");
    assert_int_equal(strncmp(sum.kernel_fp, "kernel-tuner-", 13), 0);

    gb_record_id id = {.kernel = "vector_add",
                       .kernel_fp = sum.kernel_fp,
                       .device = "NVIDIA RTX A4000",
                       .shape = shape};
    gb_key key;
    void *value;
    size_t n;
    gb_best_record best;
    assert_int_equal(gb_record_best_key(&id, &key), GB_OK);
    assert_int_equal(gb_cache_get(f->cache, GB_DB_BEST, &key, &value, &n, &f->err), GB_OK);
    assert_int_equal(gb_cache_read_best(value, n, &best, &f->err), GB_OK);
    free(value);
    assert_int_equal(best.n_samples, 7); /* the entry's "times" */
    assert_int_equal(best.stats.n, 7);
    assert_true(fabs(best.stats.median - 0.02672000043094158) < 1e-15);
    assert_true(best.complete); /* all 15 values of the one parameter are there */
    assert_int_equal(best.n_configs, 15);
    assert_int_equal(best.n_timed, 15);
    assert_string_equal(best.mode, "hot");
    assert_int_equal(best.when, 1671797486); /* the newest entry: 2022-12-23 12:11:26 UTC */
    gb_best_record_free(&best);
    gb_fields_free(&shape);
    free(text);
}

static void test_kernel_tuner_failures_become_statuses_and_bad_entries_are_skipped(void **state)
{
    fixture *f = *state;
    const char *text =
        "{\"device_name\": \"Testing\", \"tune_params_keys\": [\"bx\", \"by\"],\n"
        " \"tune_params\": {\"bx\": [16, 32], \"by\": [1, 2]}, \"objective\": \"time\",\n"
        " \"cache\": {\n"
        "  \"16,1\": {\"bx\": 16, \"by\": 1, \"time\": 3.5, \"timestamp\": \"2023-12-22 "
        "09:54:05.5+00:00\"},\n"
        "  \"16,2\": {\"bx\": 16, \"by\": 2, \"time\": \"CompilationFailedConfig\"},\n"
        "  \"32,1\": {\"bx\": 32, \"by\": 1, \"time\": \"RuntimeFailedConfig\"},\n"
        "  \"32,2\": {\"bx\": 32, \"by\": 2, \"time\": \"InvalidConfig\"},\n"
        "  \"64,1\": {\"bx\": 64, \"by\": 1, \"time\": 1.0},\n"
        "  \"16,\\u001b[1\": {\"bx\": 16, \"by\": 1},\n"
        "  \"x\": {\"bx\": 16, \"by\": 1, \"time\": -1}}}";
    gb_fields shape = fx_fields("n", 4096);
    gb_ktuner_opts o = kt_opts(f, &shape);
    o.kernel = "conv";
    gb_ktuner_summary sum;
    assert_int_equal(gb_ktuner_import(f->cache, text, strlen(text), &o, &sum, &f->err), GB_OK);
    assert_int_equal(sum.n_ok, 1);
    assert_int_equal(sum.n_failed, 3);
    assert_int_equal(sum.n_skipped, 3);
    assert_non_null(strstr(f->notes, "cache entry \"64,1\": bx is not one of tune_params' values"));
    assert_non_null(strstr(f->notes, "cache entry \"16,?[1\": no \"time\""));
    assert_non_null(strstr(f->notes, "cache entry \"x\": time is not a positive number"));
    assert_string_equal(sum.best_config, "bx=16,by=1");

    gb_cache_group *groups;
    int n, unreadable;
    gb_cache_filter filter = {.kernel = "conv"};
    assert_int_equal(gb_cache_show(f->cache, &filter, NULL, &groups, &n, &unreadable, &f->err),
                     GB_OK);
    assert_int_equal(n, 1);
    assert_int_equal(groups[0].n_trials, 4);
    assert_true(groups[0].has_best);
    /* The best is as new as the newest entry: those without a timestamp are "now". */
    assert_int_equal(groups[0].best.rec.when, 1795300000);
    assert_int_equal(groups[0].trials[0].when, 1703238845); /* 2023-12-22 09:54:05 UTC */
    assert_true(groups[0].best.rec.complete);    /* all 4 were tried: 1 timed, 3 failed */
    const gb_trial_record *t = groups[0].trials; /* by status */
    assert_int_equal(t[0].status, GB_TRIAL_OK);
    assert_int_equal(t[1].status, GB_TRIAL_COMPILE_ERROR);
    assert_string_equal(t[1].reason, "Kernel Tuner: CompilationFailedConfig");
    assert_int_equal(t[2].status, GB_TRIAL_LAUNCH_ERROR);
    assert_int_equal(t[3].status, GB_TRIAL_LAUNCH_ERROR);
    assert_non_null(strstr(t[2].reason, "Config"));
    gb_cache_groups_free(groups, n);
    gb_fields_free(&shape);
}

static void test_kernel_tuner_space_fingerprint_is_the_tuner_s(void **state)
{
    fixture *f = *state;
    const char *text = "{\"device_name\": \"D\", \"tune_params\": {\"by\": [1, 2], \"bx\": [16, "
                       "32, 64], \"mode\": [\"a\", \"b\"]}, \"cache\": {\"16,1,a\": {\"bx\": 16, "
                       "\"by\": 1, \"mode\": \"a\", \"time\": 2.0}}}";
    gb_fields shape = fx_fields("n", 1);
    gb_ktuner_opts o = kt_opts(f, &shape);
    gb_ktuner_summary sum;
    assert_int_equal(gb_ktuner_import(f->cache, text, strlen(text), &o, &sum, &f->err), GB_OK);
    gb_space space = {0};
    gb_value bx[] = {gb_value_int(16), gb_value_int(32), gb_value_int(64)};
    gb_value by[] = {gb_value_int(1), gb_value_int(2)};
    gb_value mode[2];
    gb_value_str("a", &mode[0]);
    gb_value_str("b", &mode[1]);
    assert_int_equal(gb_space_add(&space, "by", by, 2, &f->err), GB_OK);
    assert_int_equal(gb_space_add(&space, "mode", mode, 2, &f->err), GB_OK);
    assert_int_equal(gb_space_add(&space, "bx", bx, 3, &f->err), GB_OK);
    char expect[33];
    gb_variant_space_fp(&space, expect);
    gb_cache_group *groups;
    int n, unreadable;
    gb_cache_filter filter = {.kernel = "vector_add"};
    assert_int_equal(gb_cache_show(f->cache, &filter, NULL, &groups, &n, &unreadable, &f->err),
                     GB_OK);
    assert_int_equal(n, 1);
    assert_string_equal(groups[0].best.rec.space_fp, expect);
    assert_false(groups[0].best.rec.complete); /* 1 of 12 configurations */
    gb_cache_groups_free(groups, n);
    gb_space_free(&space);
    gb_value_free(&mode[0]);
    gb_value_free(&mode[1]);
    gb_fields_free(&shape);
}

static void test_kernel_tuner_file_left_open_is_closed_as_kernel_tuner_does(void **state)
{
    fixture *f = *state;
    const char *text = "{\"device_name\": \"D\", \"tune_params\": {\"b\": [1, 2]},\n"
                       "\"cache\": {\n\"1\": {\"b\": 1, \"time\": 2.0},\n";
    gb_fields shape = fx_fields("n", 1);
    gb_ktuner_opts o = kt_opts(f, &shape);
    gb_ktuner_summary sum;
    assert_int_equal(gb_ktuner_import(NULL, text, strlen(text), &o, &sum, &f->err), GB_OK);
    assert_int_equal(sum.n_ok, 1);
    assert_int_equal(fx_count(f->cache, GB_DB_TRIALS), 0); /* no cache: checked only */
    gb_fields_free(&shape);
}

static void test_kernel_tuner_files_that_cannot_be_used_say_why(void **state)
{
    fixture *f = *state;
    gb_fields shape = fx_fields("n", 1);
    gb_ktuner_opts o = kt_opts(f, &shape);
    gb_ktuner_summary sum;
    const struct {
        const char *text, *says;
    } cases[] = {
        {"[1, 2", "not JSON"},
        {"{\"cache\": {}}", "no \"tune_params\""},
        {"{\"tune_params\": {\"b\": [1]}, \"device_name\": \"D\"}", "no \"cache\""},
        {"{\"tune_params\": {\"b\": [1]}, \"cache\": {}}", "pass --device"},
        {"{\"tune_params\": {\"b c\": [1]}, \"cache\": {}}", "is not a name"},
        {"{\"tune_params\": {\"b\": [[1]]}, \"cache\": {}}", "not a number, boolean"},
        {"{\"tune_params\": {\"b\": [1]}, \"tune_params_keys\": [\"c\"], \"cache\": {}}",
         "tune_params_keys[0]"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int rc =
            gb_ktuner_import(f->cache, cases[i].text, strlen(cases[i].text), &o, &sum, &f->err);
        assert_int_equal(rc, GB_EINVAL);
        if (!strstr(f->err.msg, cases[i].says)) fail_msg("case %zu: %s", i, f->err.msg);
    }
    o.kernel = "bad kernel";
    const char *ok = "{\"device_name\": \"D\", \"tune_params\": {\"b\": [1]}, \"cache\": {}}";
    assert_int_equal(gb_ktuner_import(f->cache, ok, strlen(ok), &o, &sum, &f->err), GB_EINVAL);
    assert_non_null(strstr(f->err.msg, "--kernel"));
    gb_fields_free(&shape);
}

/* ---- base64 --------------------------------------------------------------- */

static void test_base64_round_trips_and_refuses_what_is_not_canonical(void **state)
{
    (void)state;
    unsigned char bytes[256], back[300];
    char text[400];
    size_t n;
    for (int i = 0; i < 256; i++)
        bytes[i] = (unsigned char)(i * 37);
    for (size_t len = 0; len < 10; len++) {
        gb_base64_encode(bytes, len, text);
        assert_int_equal(strlen(text), gb_base64_encoded_len(len));
        assert_int_equal(gb_base64_decode(text, strlen(text), back, sizeof back, &n), GB_OK);
        assert_int_equal(n, len);
        assert_memory_equal(back, bytes, len);
    }
    gb_base64_encode("hello", 5, text);
    assert_string_equal(text, "aGVsbG8=");
    const char *bad[] = {"aGVsbG8", "aGV=bG8=", "aGVsbG9=", "aG\nsbG8=", "====", "aGVsbG8!"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_equal(gb_base64_decode(bad[i], strlen(bad[i]), back, sizeof back, &n),
                         GB_EINVAL);
    assert_int_equal(gb_base64_decode("aGVsbG8=", 8, back, 4, &n), GB_ELIMIT);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, fx_setup, fx_teardown)
    const struct CMUnitTest tests[] = {
        T(test_export_then_import_round_trips_every_record),
        T(test_cubins_travel_only_when_asked_for),
        T(test_export_filters_by_kernel_and_takes_only_its_cubins),
        T(test_import_keys_records_by_content_and_skips_bad_ones_by_index),
        T(test_import_refuses_other_files_and_newer_versions),
        T(test_equal_keys_a_clean_best_beats_then_more_timed_then_newer),
        T(test_a_trial_in_flight_elsewhere_comes_in_as_crashed_and_never_wins),
        T(test_merge_folds_another_cache_in_by_the_same_rule),
        T(test_a_different_cubin_under_a_known_key_is_reported_not_stored),
        T(test_a_cubin_that_is_not_elf_or_not_base64_is_skipped),
        T(test_a_kernel_tuner_file_becomes_trials_and_a_best),
        T(test_kernel_tuner_failures_become_statuses_and_bad_entries_are_skipped),
        T(test_kernel_tuner_space_fingerprint_is_the_tuner_s),
        T(test_kernel_tuner_file_left_open_is_closed_as_kernel_tuner_does),
        T(test_kernel_tuner_files_that_cannot_be_used_say_why),
        T(test_base64_round_trips_and_refuses_what_is_not_canonical),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
