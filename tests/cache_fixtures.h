/* Records and caches for the tests of the cache commands (test_transfer.c,
 * test_inspect.c): a fresh temporary directory per test and small records built in
 * C, so nothing needs a GPU. */
#ifndef GB_TESTS_CACHE_FIXTURES_H
#define GB_TESTS_CACHE_FIXTURES_H

#include "cache/transfer.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct fixture {
    char root[64];
    char dir[128];  /* the cache under test */
    char dir2[128]; /* a second one */
    gb_cache *cache;
    gb_cache *cache2;
    gb_err err;
    char notes[8192]; /* what the library noted, one per line */
} fixture;

static inline void fx_note(void *ctx, const char *msg)
{
    fixture *f = ctx;
    size_t n = strlen(f->notes);
    snprintf(f->notes + n, sizeof f->notes - n, "%s\n", msg);
}

static inline int fx_setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f) return -1;
    strcpy(f->root, "/tmp/gb-test-xfer-XXXXXX");
    if (!mkdtemp(f->root)) return -1;
    snprintf(f->dir, sizeof f->dir, "%s/a", f->root);
    snprintf(f->dir2, sizeof f->dir2, "%s/b", f->root);
    if (gb_cache_open(f->dir, 0, &f->cache, &f->err)) return -1;
    *state = f;
    return 0;
}

static inline int fx_remove(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static inline int fx_teardown(void **state)
{
    fixture *f = *state;
    gb_cache_close(f->cache);
    gb_cache_close(f->cache2);
    nftw(f->root, fx_remove, 16, FTW_DEPTH | FTW_PHYS);
    free(f);
    return 0;
}

static inline void fx_open2(fixture *f)
{
    if (!f->cache2 && gb_cache_open(f->dir2, 0, &f->cache2, &f->err))
        fail_msg("opening %s: %s", f->dir2, f->err.msg);
}

static inline gb_fields fx_fields(const char *name, int64_t v)
{
    gb_fields out = {0};
    gb_value value = gb_value_int(v);
    assert_int_equal(gb_fields_set(&out, name, &value), GB_OK);
    return out;
}

static inline gb_record_id fx_id(const char *kernel, const char *device, int64_t n)
{
    return (gb_record_id){.kernel = strdup(kernel),
                          .kernel_fp = strdup("0b74386f143d60936c49694fb8c0a7f6"),
                          .device = strdup(device),
                          .shape = fx_fields("N", n)};
}

/* A clean best: complete, not capped, nothing throttled; free with
 * gb_best_record_free. */
static inline gb_best_record fx_best(const char *kernel, const char *device, int64_t n, int64_t b,
                                     double median_ms, int64_t when)
{
    gb_best_record r = {.id = fx_id(kernel, device, n),
                        .space_fp = strdup("67f8717bbe373b1a4835acf980318b8f"),
                        .config = fx_fields("B", b),
                        .stats = {.n = 3,
                                  .min = median_ms * 0.99,
                                  .max = median_ms * 1.01,
                                  .mean = median_ms,
                                  .stddev = median_ms * 0.01,
                                  .median = median_ms,
                                  .q1 = median_ms * 0.995,
                                  .q3 = median_ms * 1.005,
                                  .ci_lo = median_ms * 0.99,
                                  .ci_hi = median_ms * 1.01},
                        .clock_mhz = 1980,
                        .n_leaders = 2,
                        .flops = 2e9,
                        .complete = true,
                        .n_configs = 4,
                        .n_timed = 4,
                        .when = when,
                        .driver_version = 13000};
    r.samples_ms = malloc(3 * sizeof *r.samples_ms);
    r.samples_ms[0] = median_ms * 0.99, r.samples_ms[1] = median_ms,
    r.samples_ms[2] = median_ms * 1.01;
    r.n_samples = 3;
    strcpy(r.mode, "cold");
    strcpy(r.engine_version, "0.1.0");
    strcpy(r.nvrtc_version, "13.0");
    return r;
}

/* An ok trial with its samples; free with gb_trial_record_free. */
static inline gb_trial_record fx_trial(const char *kernel, const char *device, int64_t n, int64_t b,
                                       double median_ms, int64_t when)
{
    gb_trial_record t = {
        .id = fx_id(kernel, device, n),
        .config = fx_fields("B", b),
        .status = GB_TRIAL_OK,
        .reason = strdup(""),
        .check = {.checked = true, .n_compared = 1024, .max_abs_err = 0, .max_rel_err = 0},
        .has_stats = true,
        .stats = {.n = 2,
                  .min = median_ms,
                  .max = median_ms,
                  .mean = median_ms,
                  .stddev = 0,
                  .median = median_ms,
                  .q1 = median_ms,
                  .q3 = median_ms,
                  .ci_lo = median_ms,
                  .ci_hi = median_ms},
        .clock_mhz = 1980,
        .registers = 16,
        .when = when};
    t.samples_ms = malloc(2 * sizeof *t.samples_ms);
    t.samples_ms[0] = t.samples_ms[1] = median_ms;
    t.n_samples = 2;
    strcpy(t.mode, "cold");
    return t;
}

/* Stores a record as the tuner would: its JSON under the key its content gives (or
 * under `key` when not NULL). */
static inline void fx_put_best(gb_cache *cache, const gb_best_record *rec, const gb_key *key)
{
    gb_key k;
    gb_err err;
    json_t *json = gb_best_record_to_json(rec);
    char *text = json_dumps(json, JSON_COMPACT);
    assert_int_equal(gb_record_best_key(&rec->id, &k), GB_OK);
    assert_int_equal(gb_cache_put(cache, GB_DB_BEST, key ? key : &k, text, strlen(text), &err),
                     GB_OK);
    free(text);
    json_decref(json);
}

static inline void fx_put_trial(gb_cache *cache, const gb_trial_record *rec, const gb_key *key)
{
    gb_key k;
    gb_err err;
    json_t *json = gb_trial_record_to_json(rec);
    char *text = json_dumps(json, JSON_COMPACT);
    assert_int_equal(gb_record_trial_key(&rec->id, &rec->config, &k), GB_OK);
    assert_int_equal(gb_cache_put(cache, GB_DB_TRIALS, key ? key : &k, text, strlen(text), &err),
                     GB_OK);
    free(text);
    json_decref(json);
}

/* A fake cubin (an ELF magic and some bytes) stored under a key of n; its hex in
 * out_hex. */
static inline gb_key fx_put_cubin(gb_cache *cache, int n, const char *nvrtc, size_t bytes,
                                  char out_hex[33])
{
    gb_keybuf kb;
    gb_key key;
    gb_err err;
    gb_key_begin(&kb, "cubin");
    gb_key_add_i64(&kb, n);
    assert_int_equal(gb_key_finish(&kb, &key), GB_OK);
    unsigned char *cubin = calloc(1, bytes);
    memcpy(cubin, "\177ELF", 4);
    for (size_t i = 4; i < bytes; i++)
        cubin[i] = (unsigned char)(i * 7 + (size_t)n);
    char meta[256];
    snprintf(meta, sizeof meta,
             "{\"lowered\":[\"_Z5scaleILi%dEEvPfi\"],\"log\":\"\",\"compile_ms\":12.5,"
             "\"resources\":[16,0,0,0,0],\"nvrtc\":\"%s\",\"arch\":\"sm_90a\"}",
             n, nvrtc);
    assert_int_equal(gb_cache_put_cubin(cache, &key, meta, cubin, bytes, &err), GB_OK);
    free(cubin);
    if (out_hex) gb_key_hex(&key, out_hex);
    return key;
}

static inline bool fx_has(gb_cache *cache, gb_cache_db db, const gb_key *key)
{
    void *value = NULL;
    size_t len = 0;
    gb_err err;
    int rc = gb_cache_get(cache, db, key, &value, &len, &err);
    free(value);
    return rc == GB_OK;
}

static inline size_t fx_count(gb_cache *cache, gb_cache_db db)
{
    size_t n = 0;
    gb_err err;
    assert_int_equal(gb_cache_count(cache, db, &n, &err), GB_OK);
    return n;
}

#endif
