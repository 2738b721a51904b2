/*
 * The cache records (cache/record.h): records written by the previous release
 * still read, with their layout kept; every field round-trips; and a record that
 * does not make sense is refused with the field's path, leaving nothing behind.
 */
#include "cache/record.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

/* Written by gpubench 0.1.0's hand-made JSON writer (integral doubles as integers,
 * NaN as null, control characters as \u00XX). */
static const char OLD_BEST[] =
    "{\"kernel\":\"gemm_f32\",\"kernel_fp\":\"0b74386f143d60936c49694fb8c0a7f6\",\"device\":"
    "\"NVIDIA H200/sm_90/132\",\"shape\":{\"K\":1024,\"M\":1024},\"space_fp\":\"67f8717bbe373"
    "b1a4835acf980318b8f\",\"config\":{\"BM\":64,\"alpha\":0.5,\"dt\":\"f16\",\"trans\":true}"
    ",\"stats\":{\"n\":24,\"min_ms\":0.090310000000000001,\"max_ms\":0.091329999999999995,\"m"
    "ean_ms\":0.090819999999999998,\"stddev_ms\":0.00031,\"median_ms\":0.090829999999999994,"
    "\"q1_ms\":0.090569999999999998,\"q3_ms\":0.091050000000000006,\"ci_lo_ms\":0.09050999999"
    "9999993,\"ci_hi_ms\":0.091160000000000005},\"mode\":\"hot\",\"clock_mhz\":1980,\"n_throt"
    "tled\":1,\"capped\":true,\"samples_ms\":[0.090870000000000006,0.090829999999999994,0.090"
    "880000000000002,0.10000000000000001],\"tie\":[\"BK=32,BM=64\",\"BK=16,BM=64\"],\"n_leade"
    "rs\":3,\"flops\":2147483648,\"bytes\":12582912,\"baseline\":{\"n\":1,\"min_ms\":0.577200"
    "00000000005,\"max_ms\":0.57720000000000005,\"mean_ms\":0.57720000000000005,\"stddev_ms\""
    ":null,\"median_ms\":0.57720000000000005,\"q1_ms\":0.57720000000000005,\"q3_ms\":0.577200"
    "00000000005,\"ci_lo_ms\":0.57720000000000005,\"ci_hi_ms\":0.57720000000000005},\"complet"
    "e\":false,\"n_configs\":48,\"n_rejected\":2,\"n_timed\":40,\"n_failed\":6,\"when\":17953"
    "00000,\"engine\":\"0.1.0\",\"nvrtc\":\"13.0\",\"driver\":13000}";

static const char OLD_TRIAL_OK[] =
    "{\"kernel\":\"gemm_f32\",\"kernel_fp\":\"0b74386f143d60936c49694fb8c0a7f6\",\"device\":"
    "\"NVIDIA H200/sm_90/132\",\"shape\":{\"K\":1024,\"M\":1024},\"config\":{\"BM\":64,\"alph"
    "a\":0.5,\"dt\":\"f16\",\"trans\":true},\"status\":\"ok\",\"in_flight\":false,\"reason\":"
    "\"\",\"check\":{\"checked\":true,\"n_bad\":0,\"n_compared\":1048576,\"max_abs_err\":1.00"
    "00004768371582e-06,\"max_rel_err\":0.25},\"stats\":{\"n\":24,\"min_ms\":0.09031000000000"
    "0001,\"max_ms\":0.091329999999999995,\"mean_ms\":0.090819999999999998,\"stddev_ms\":0.00"
    "031,\"median_ms\":0.090829999999999994,\"q1_ms\":0.090569999999999998,\"q3_ms\":0.091050"
    "000000000006,\"ci_lo_ms\":0.090509999999999993,\"ci_hi_ms\":0.091160000000000005},\"mode"
    "\":\"cold\",\"clock_mhz\":1965.5,\"samples_ms\":[0.090870000000000006,0.0908299999999999"
    "94,0.090880000000000002,0.10000000000000001],\"registers\":40,\"when\":1795300001}";

static const char OLD_TRIAL_WRONG[] =
    "{\"kernel\":\"gemm_f32\",\"kernel_fp\":\"0b74386f143d60936c49694fb8c0a7f6\",\"device\":"
    "\"NVIDIA H200/sm_90/132\",\"shape\":{\"K\":1024,\"M\":1024},\"config\":{\"BM\":64,\"alph"
    "a\":0.5,\"dt\":\"f16\",\"trans\":true},\"status\":\"wrong\",\"in_flight\":false,\"reason"
    "\":\"1048576 of 1048576 elements outside the tolerance\",\"check\":{\"checked\":true,\"n"
    "_bad\":1048576,\"n_compared\":1048576,\"max_abs_err\":null,\"max_rel_err\":869325.37},\""
    "stats\":null,\"registers\":12,\"when\":1795297727}";

static const char OLD_TRIAL_IN_FLIGHT[] =
    "{\"kernel\":\"gemm_f32\",\"kernel_fp\":\"0b74386f143d60936c49694fb8c0a7f6\",\"device\":"
    "\"NVIDIA H200/sm_90/132\",\"shape\":{\"K\":1024,\"M\":1024},\"config\":{\"BM\":64,\"alph"
    "a\":0.5,\"dt\":\"f16\",\"trans\":true},\"status\":\"crashed\",\"in_flight\":true,\"owner"
    "_pid\":4242,\"owner_boot\":\"0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0\",\"reason\":\"the tun"
    "er stopped while this trial was running\",\"check\":{\"checked\":false,\"n_bad\":0,\"n_c"
    "ompared\":0,\"max_abs_err\":0,\"max_rel_err\":0},\"stats\":null,\"registers\":-1,\"when"
    "\":1795297728}";

static const char OLD_TRIAL_COMPILE_ERROR[] =
    "{\"kernel\":\"gemm_f32\",\"kernel_fp\":\"0b74386f143d60936c49694fb8c0a7f6\",\"device\":"
    "\"NVIDIA H200/sm_90/132\",\"shape\":{\"K\":1024,\"M\":1024},\"config\":{\"BM\":64,\"alph"
    "a\":0.5,\"dt\":\"f16\",\"trans\":true},\"status\":\"compile_error\",\"in_flight\":false,"
    "\"reason\":\"fake.cu:3: error: expected a ';'\",\"check\":{\"checked\":false,\"n_bad\":0"
    ",\"n_compared\":0,\"max_abs_err\":0,\"max_rel_err\":0},\"stats\":null,\"registers\":-1,"
    "\"log\":\"fake.cu(3): error: expected a \\\";\\\"\\n\\t\\u0001 bell\",\"when\":179529772"
    "9}";

static json_t *parse(const char *text)
{
    json_t *j = NULL;
    gb_err err;
    if (gb_json_parse(text, strlen(text), &j, &err)) fail_msg("%s", err.msg);
    return j;
}

static void read_best(const char *text, gb_best_record *out)
{
    json_t *j = parse(text);
    gb_err err;
    if (gb_best_record_from_json(j, out, &err)) fail_msg("%s", err.msg);
    json_decref(j);
}

static void read_trial(const char *text, gb_trial_record *out)
{
    json_t *j = parse(text);
    gb_err err;
    if (gb_trial_record_from_json(j, out, &err)) fail_msg("%s", err.msg);
    json_decref(j);
}

/* The keys of an object, in order, as "a,b,c". */
static void keys_of(const json_t *obj, char *out, size_t n)
{
    const char *key;
    json_t *value;
    out[0] = '\0';
    json_object_foreach((json_t *)obj, key, value)
    {
        if (out[0]) strncat(out, ",", n - strlen(out) - 1);
        strncat(out, key, n - strlen(out) - 1);
    }
}

/* Every key of the old text is in the new one, in the same order (new keys may
 * come in between or after). */
static void assert_layout_kept(const char *old_text, const json_t *now)
{
    json_t *old = parse(old_text);
    char old_keys[1024], new_keys[1024];
    keys_of(old, old_keys, sizeof old_keys);
    keys_of(now, new_keys, sizeof new_keys);
    const char *at = new_keys;
    for (char *key = strtok(old_keys, ","); key; key = strtok(NULL, ",")) {
        char *found = strstr(at, key);
        if (!found) fail_msg("key %s of the old layout is missing or moved in %s", key, new_keys);
        at = found + strlen(key);
    }
    json_decref(old);
}

/* ---- the previous release's records ------------------------------------- */

static void test_a_best_record_of_the_previous_release_reads(void **state)
{
    gb_best_record rec;
    read_best(OLD_BEST, &rec);
    assert_string_equal(rec.id.kernel, "gemm_f32");
    assert_string_equal(rec.id.device, "NVIDIA H200/sm_90/132");
    assert_int_equal(rec.id.shape.n, 2);
    assert_string_equal(rec.space_fp, "67f8717bbe373b1a4835acf980318b8f");
    assert_true(gb_fields_get(&rec.config, "alpha")->num == 0.5);
    assert_string_equal(gb_fields_get(&rec.config, "dt")->str, "f16");
    assert_true(rec.stats.median == 0.09083);
    assert_int_equal(rec.stats.n, 24);
    assert_string_equal(rec.mode, "hot");
    assert_true(rec.clock_mhz == 1980);
    assert_int_equal(rec.n_throttled, 1);
    assert_true(rec.capped);
    assert_int_equal(rec.n_samples, 4);
    assert_true(rec.samples_ms[3] == 0.1);
    assert_int_equal(rec.n_tie, 2);
    assert_string_equal(rec.tie[1], "BK=16,BM=64");
    assert_true(rec.flops == 2147483648.0);
    assert_true(rec.has_baseline);
    assert_true(isnan(rec.baseline.stddev)); /* null */
    assert_false(rec.complete);
    assert_int_equal(rec.n_failed, 6);
    assert_true(rec.when == 1795300000);
    assert_string_equal(rec.nvrtc_version, "13.0");
    assert_int_equal(rec.driver_version, 13000);
    assert_false(rec.contended); /* not in the old record */
    assert_int_equal(rec.n_sources, 0);
    assert_null(rec.sources);
    json_t *again = gb_best_record_to_json(&rec);
    assert_layout_kept(OLD_BEST, again);
    json_decref(again);
    gb_best_record_free(&rec);
}

static void test_trial_records_of_the_previous_release_read(void **state)
{
    gb_trial_record rec;
    read_trial(OLD_TRIAL_OK, &rec);
    assert_int_equal(rec.status, GB_TRIAL_OK);
    assert_true(rec.has_stats);
    assert_true(rec.clock_mhz == 1965.5);
    assert_int_equal(rec.n_samples, 4);
    assert_true(rec.check.n_compared == 1048576);
    assert_int_equal(rec.check.first_bad_output, -1); /* not in the old record */
    assert_true(rec.check.first_bad_index == -1);
    assert_int_equal(rec.registers, 40);
    assert_string_equal(rec.cubin, ""); /* not in the old record */
    assert_false(rec.contended);
    json_t *again = gb_trial_record_to_json(&rec);
    assert_layout_kept(OLD_TRIAL_OK, again);
    assert_null(gb_json_get(again, "cubin")); /* only when there is one */
    json_decref(again);
    gb_trial_record_free(&rec);

    read_trial(OLD_TRIAL_WRONG, &rec);
    assert_int_equal(rec.status, GB_TRIAL_WRONG);
    assert_false(rec.has_stats);
    assert_string_equal(rec.mode, "cold"); /* without stats there is no mode: the default */
    assert_true(isnan(rec.check.max_abs_err));
    assert_null(rec.log);
    again = gb_trial_record_to_json(&rec);
    assert_layout_kept(OLD_TRIAL_WRONG, again);
    assert_true(json_is_null(gb_json_get(again, "stats")));
    assert_null(gb_json_get(again, "mode"));
    assert_null(gb_json_get(again, "contended")); /* only with stats */
    json_decref(again);
    gb_trial_record_free(&rec);

    read_trial(OLD_TRIAL_IN_FLIGHT, &rec);
    assert_true(rec.in_flight);
    assert_true(rec.owner_pid == 4242);
    assert_string_equal(rec.owner_boot, "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0");
    again = gb_trial_record_to_json(&rec);
    assert_layout_kept(OLD_TRIAL_IN_FLIGHT, again);
    json_decref(again);
    gb_trial_record_free(&rec);

    read_trial(OLD_TRIAL_COMPILE_ERROR, &rec);
    assert_string_equal(rec.log, "fake.cu(3): error: expected a \";\"\n\t\x01 bell");
    again = gb_trial_record_to_json(&rec);
    assert_layout_kept(OLD_TRIAL_COMPILE_ERROR, again);
    assert_null(gb_json_get(again, "owner_pid")); /* only in flight */
    json_decref(again);
    gb_trial_record_free(&rec);
}

static void test_a_best_record_from_before_the_measurement_fields_reads_with_defaults(void **state)
{
    gb_best_record rec;
    read_best("{\"kernel\":\"k\",\"kernel_fp\":\"00ff\",\"device\":\"D/sm_80/1\",\"shape\":{},"
              "\"space_fp\":\"ab\",\"config\":{},\"stats\":{\"n\":1,\"min_ms\":1,\"max_ms\":1,"
              "\"mean_ms\":1,\"stddev_ms\":0,\"median_ms\":1,\"q1_ms\":1,\"q3_ms\":1,"
              "\"ci_lo_ms\":1,\"ci_hi_ms\":1},\"flops\":0,\"bytes\":0,\"baseline\":null,"
              "\"n_configs\":1,\"n_rejected\":0,\"n_timed\":1,\"n_failed\":0,\"when\":1,"
              "\"engine\":\"0.0.9\",\"nvrtc\":\"12.4\",\"driver\":12040}",
              &rec);
    assert_string_equal(rec.mode, "cold");
    assert_true(rec.complete);
    assert_int_equal(rec.n_samples, 0);
    assert_null(rec.samples_ms);
    assert_int_equal(rec.n_tie, 0);
    assert_int_equal(rec.n_leaders, 0);
    assert_false(rec.has_baseline);
    gb_best_record_free(&rec);
}

/* ---- round trips -------------------------------------------------------- */

static void test_a_best_record_round_trips_field_for_field(void **state)
{
    gb_best_record rec, back;
    read_best(OLD_BEST, &rec);
    rec.contended = true;
    json_t *j = gb_best_record_to_json(&rec);
    char *text = gb_json_dump(j, false);
    json_decref(j);
    read_best(text, &back);
    free(text);
    assert_true(gb_wire_equal(&gb_wire_best_record, &rec, &back));
    assert_true(back.contended);
    gb_best_record_free(&rec);
    gb_best_record_free(&back);
}

static void test_a_trial_record_keeps_its_samples_and_cuts_its_log(void **state)
{
    gb_trial_record rec, back;
    read_trial(OLD_TRIAL_OK, &rec);
    rec.log = malloc(GB_RECORD_MAX_LOG + 100);
    memset(rec.log, 'x', GB_RECORD_MAX_LOG + 99);
    rec.log[GB_RECORD_MAX_LOG + 99] = '\0';
    json_t *j = gb_trial_record_to_json(&rec);
    char *text = gb_json_dump(j, false);
    json_decref(j);
    read_trial(text, &back);
    free(text);
    assert_int_equal(strlen(back.log), GB_RECORD_MAX_LOG);
    assert_int_equal(back.n_samples, 4);
    assert_true(back.samples_ms[2] == rec.samples_ms[2]);
    gb_trial_record_free(&rec);
    gb_trial_record_free(&back);
}

static void test_a_best_record_names_its_source_files_after_the_driver(void **state)
{
    gb_best_record rec, back;
    read_best(OLD_BEST, &rec);
    rec.sources = calloc(2, sizeof *rec.sources);
    rec.n_sources = 2;
    rec.sources[0].path = strdup("/home/me/gpubench/templates/sgemm.cuh");
    strcpy(rec.sources[0].hash, "5d0c3a6f0e2b41c7a9d8e1f2b3c4d5e6");
    rec.sources[1].path = strdup("/home/me/gpubench/templates/tile.cuh");
    strcpy(rec.sources[1].hash, "00112233445566778899aabbccddeeff");
    json_t *j = gb_best_record_to_json(&rec);
    char keys[1024];
    keys_of(j, keys, sizeof keys);
    assert_non_null(strstr(keys, ",driver,sources"));
    assert_string_equal(
        gb_json_str(gb_json_get(gb_json_at(gb_json_get(j, "sources"), 1), "path"), ""),
        "/home/me/gpubench/templates/tile.cuh");
    char *text = gb_json_dump(j, false);
    json_decref(j);
    read_best(text, &back);
    free(text);
    assert_int_equal(back.n_sources, 2);
    assert_string_equal(back.sources[1].path, rec.sources[1].path);
    assert_string_equal(back.sources[0].hash, rec.sources[0].hash);
    assert_true(gb_wire_equal(&gb_wire_best_record, &rec, &back));
    gb_best_record_free(&rec);
    gb_best_record_free(&back);
}

static void test_a_trial_record_names_its_cubin_and_contention_when_it_has_them(void **state)
{
    gb_trial_record rec, back;
    read_trial(OLD_TRIAL_OK, &rec);
    strcpy(rec.cubin, "9c1f6a0e2b7d4c3a8e5f1d0b6a2c4e8f");
    rec.contended = true;
    json_t *j = gb_trial_record_to_json(&rec);
    char keys[1024];
    keys_of(j, keys, sizeof keys);
    assert_non_null(strstr(keys, ",registers,cubin,"));
    assert_non_null(strstr(keys, ",clock_mhz,contended,samples_ms,"));
    char *text = gb_json_dump(j, false);
    json_decref(j);
    read_trial(text, &back);
    free(text);
    assert_string_equal(back.cubin, rec.cubin);
    assert_true(back.contended);
    assert_true(gb_wire_equal(&gb_wire_trial_record, &rec, &back));
    gb_trial_record_free(&rec);
    gb_trial_record_free(&back);
}

/* ---- records that make no sense ----------------------------------------- */

/* OLD_BEST with key set to value (removed for NULL) is refused naming `what`. */
static void best_refused_at(const char *key, const char *value, const char *what, const char *file,
                            int line)
{
    json_t *j = parse(OLD_BEST);
    if (value)
        json_object_set_new(j, key, parse(value));
    else
        json_object_del(j, key);
    gb_best_record rec;
    gb_err err;
    gb_err_clear(&err);
    int rc = gb_best_record_from_json(j, &rec, &err);
    json_decref(j);
    static const gb_best_record zero;
    if (rc == GB_ECACHE && err.code == GB_ECACHE && strstr(err.msg, what) &&
        memcmp(&rec, &zero, sizeof rec) == 0)
        return;
    print_error("%s = %s: got %d \"%s\", expected GB_ECACHE naming \"%s\"\n", key,
                value ? value : "(absent)", rc, err.msg, what);
    _fail(file, line);
}
#define assert_best_refused(key, value, what)                                                      \
    best_refused_at((key), (value), (what), __FILE__, __LINE__)

static void test_a_best_record_that_makes_no_sense_is_refused(void **state)
{
    assert_best_refused("kernel", "\"\"", "best_record.kernel: expected a name");
    assert_best_refused("kernel", NULL, "best_record.kernel: missing");
    assert_best_refused("kernel_fp", "\"0b 74\"", "best_record.kernel_fp: expected 1 to 64 of");
    assert_best_refused("kernel_fp", "\"\"", "best_record.kernel_fp: expected 1 to 64 of");
    assert_best_refused("device", "\"\"", "best_record.device: expected a fingerprint");
    assert_best_refused("shape", "[1024]", "best_record.shape: expected an object");
    assert_best_refused("config", "{\"BM\":[64]}",
                        "best_record.config.BM: expected a number, string or boolean");
    assert_best_refused("config", NULL, "best_record.config: missing");
    assert_best_refused("space_fp", "\"not hex\"", "best_record.space_fp: expected 1 to 64 of");
    assert_best_refused("stats", "{\"n\":1}", "best_record.stats.min_ms: missing");
    assert_best_refused("stats", "null", "best_record.stats: expected an object");
    assert_best_refused("mode", "\"warm\"", "best_record.mode: expected one of cold, hot");
    assert_best_refused("mode", "\"coldcoldcold\"", "best_record.mode: expected a string of at");
    assert_best_refused("samples_ms", "[1,-2]",
                        "best_record.samples_ms[1]: expected a number >= 0");
    assert_best_refused("tie", "[1]", "best_record.tie[0]: expected a string");
    assert_best_refused("n_timed", "-1", "best_record.n_timed: expected an integer from 0");
    assert_best_refused("baseline", "7", "best_record.baseline: expected an object");
    assert_best_refused("sources", "[{\"hash\":\"00\"}]", "best_record.sources[0].path: missing");
    assert_best_refused("sources", "{}", "best_record.sources: expected a list");
    assert_best_refused("engine", "\"0123456789012345678901234567890123\"",
                        "best_record.engine: expected a string of at most 31 bytes");
}

static void test_a_trial_record_that_makes_no_sense_is_refused(void **state)
{
    const struct {
        const char *key, *value, *what;
    } cases[] = {
        {"status", "\"great\"", "trial_record.status: expected one of ok, wrong, compile_error"},
        {"check",
         "{\"checked\":true,\"n_bad\":2,\"n_compared\":1,\"max_abs_err\":0,"
         "\"max_rel_err\":0}",
         "trial_record.check: n_bad (2) is more than n_compared (1)"},
        {"registers", "-2", "trial_record.registers: expected an integer from -1"},
        {"samples_ms", "\"fast\"", "trial_record.samples_ms: expected a list"},
        {"kernel_fp", "7", "trial_record.kernel_fp: expected a string"},
        {"cubin", "\"9c1f6a0e2b7d4c3a8e5f1d0b6a2c4e8f00\"",
         "trial_record.cubin: expected a string of at most 32 bytes"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        json_t *j = parse(OLD_TRIAL_OK);
        json_object_set_new(j, cases[i].key, parse(cases[i].value));
        gb_trial_record rec;
        gb_err err;
        assert_int_equal(gb_trial_record_from_json(j, &rec, &err), GB_ECACHE);
        if (!strstr(err.msg, cases[i].what))
            fail_msg("\"%s\" lacks \"%s\"", err.msg, cases[i].what);
        json_decref(j);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_best_record_of_the_previous_release_reads),
        cmocka_unit_test(test_trial_records_of_the_previous_release_read),
        cmocka_unit_test(test_a_best_record_from_before_the_measurement_fields_reads_with_defaults),
        cmocka_unit_test(test_a_best_record_round_trips_field_for_field),
        cmocka_unit_test(test_a_trial_record_keeps_its_samples_and_cuts_its_log),
        cmocka_unit_test(test_a_best_record_names_its_source_files_after_the_driver),
        cmocka_unit_test(test_a_trial_record_names_its_cubin_and_contention_when_it_has_them),
        cmocka_unit_test(test_a_best_record_that_makes_no_sense_is_refused),
        cmocka_unit_test(test_a_trial_record_that_makes_no_sense_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
