#include "scratch.h"
#include "cache/cache.h"
#include "cache/ceilings.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <lmdb.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

/* Each test gets a fresh temporary root; the cache lives two levels below it so
 * that opening has to create directories. */
typedef struct fixture {
    char root[64];
    char dir[128];
    gb_cache *cache;
    gb_err err;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f) return -1;
    strcpy(f->root, "/tmp/gb-test-cache-XXXXXX");
    if (!mkdtemp(f->root)) {
        free(f);
        return -1;
    }
    snprintf(f->dir, sizeof f->dir, "%s/sub/cache", f->root);
    gb_err_clear(&f->err);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    gb_cache_close(f->cache);
    unsetenv("GB_CACHE_INITIAL_MAPSIZE");
    int rc = scratch_remove(f->root);
    free(f);
    return rc;
}

/* ---- helpers ------------------------------------------------------------ */

static void open_cache(fixture *f, unsigned flags)
{
    int rc = gb_cache_open(f->dir, flags, &f->cache, &f->err);
    if (rc) fail_msg("gb_cache_open: %s", f->err.msg);
}

static void reopen_cache(fixture *f, unsigned flags)
{
    gb_cache_close(f->cache);
    f->cache = NULL;
    open_cache(f, flags);
}

static gb_key key_n(const char *kind, int64_t n)
{
    gb_keybuf kb;
    gb_key key;
    gb_key_begin(&kb, kind);
    gb_key_add_i64(&kb, n);
    assert_int_equal(gb_key_finish(&kb, &key), GB_OK);
    return key;
}

static void put_text(fixture *f, gb_cache_db db, const gb_key *key, const char *text)
{
    int rc = gb_cache_put(f->cache, db, key, text, strlen(text), &f->err);
    if (rc) fail_msg("gb_cache_put: %s", f->err.msg);
}

static void assert_text_stored(fixture *f, gb_cache_db db, const gb_key *key, const char *text)
{
    void *value = NULL;
    size_t len = 0;
    int rc = gb_cache_get(f->cache, db, key, &value, &len, &f->err);
    if (rc) fail_msg("gb_cache_get: %s", f->err.msg);
    assert_int_equal(len, strlen(text));
    assert_memory_equal(value, text, len);
    free(value);
}

static size_t count_of(fixture *f, gb_cache_db db)
{
    size_t n = 0;
    int rc = gb_cache_count(f->cache, db, &n, &f->err);
    if (rc) fail_msg("gb_cache_count: %s", f->err.msg);
    return n;
}

static void assert_msg_has(const gb_err *err, const char *part)
{
    if (!strstr(err->msg, part)) fail_msg("message \"%s\" lacks \"%s\"", err->msg, part);
}

/* Writes a raw value into a named db of the environment in dir, through LMDB itself
 * (the cache must not hold it open for writing meanwhile). */
static void raw_put(const char *dir, const char *db, const void *key, size_t key_len,
                    const void *value, size_t value_len)
{
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi dbi;
    assert_int_equal(mdb_env_create(&env), 0);
    assert_int_equal(mdb_env_set_maxdbs(env, 8), 0);
    assert_int_equal(mdb_env_open(env, dir, 0, 0644), 0);
    assert_int_equal(mdb_txn_begin(env, NULL, 0, &txn), 0);
    assert_int_equal(mdb_dbi_open(txn, db, MDB_CREATE, &dbi), 0);
    MDB_val k = {key_len, (void *)key}, v = {value_len, (void *)value};
    assert_int_equal(mdb_put(txn, dbi, &k, &v, 0), 0);
    assert_int_equal(mdb_txn_commit(txn), 0);
    mdb_env_close(env);
}

static void write_file(const char *path, const void *bytes, size_t n)
{
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(bytes, 1, n, fp), n);
    assert_int_equal(fclose(fp), 0);
}

/* Raw schema records as LMDB holds them: header, then the version as text. */
static const char schema_2[] = {'G', 'B', 0, 2, '2'};
static const char schema_3[] = {'G', 'B', 0, 3, '3'};
static const char schema_junk[] = {'G', 'B', 0, 1, 'o', 'n', 'e'};

/* ---- opening ------------------------------------------------------------ */

static void test_open_creates_the_directory_and_databases(void **state)
{
    fixture *f = *state;
    open_cache(f, 0);
    struct stat st;
    assert_int_equal(stat(f->dir, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_string_equal(gb_cache_dir(f->cache), f->dir);
    for (int db = 0; db < GB_DB_META; db++)
        assert_int_equal(count_of(f, (gb_cache_db)db), 0);
    assert_int_equal(count_of(f, GB_DB_META), 1); /* the schema record */

    /* The four named databases exist, and meta holds the schema as a record. */
    gb_cache_close(f->cache);
    f->cache = NULL;
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi dbi;
    MDB_val k = {6, "schema"}, v;
    assert_int_equal(mdb_env_create(&env), 0);
    assert_int_equal(mdb_env_set_maxdbs(env, 8), 0);
    assert_int_equal(mdb_env_open(env, f->dir, MDB_RDONLY, 0644), 0);
    assert_int_equal(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn), 0);
    const char *names[] = {"best", "trials", "cubins", "meta"};
    for (int i = 0; i < 4; i++)
        assert_int_equal(mdb_dbi_open(txn, names[i], 0, &dbi), 0);
    assert_int_equal(mdb_get(txn, dbi, &k, &v), 0);
    assert_int_equal(v.mv_size, sizeof schema_2);
    assert_memory_equal(v.mv_data, schema_2, sizeof schema_2);
    mdb_txn_abort(txn);
    mdb_env_close(env);
}

static void test_close_of_null_is_a_no_op(void **state)
{
    gb_cache_close(NULL);
}

static void test_reopen_sees_what_was_stored(void **state)
{
    fixture *f = *state;
    gb_key key = key_n("best", 1);
    open_cache(f, 0);
    put_text(f, GB_DB_BEST, &key, "{\"durable\":true}");
    reopen_cache(f, 0);
    assert_text_stored(f, GB_DB_BEST, &key, "{\"durable\":true}");
    assert_int_equal(count_of(f, GB_DB_META), 1); /* the schema is not written twice */
}

static void test_newer_schema_is_refused_naming_the_path(void **state)
{
    fixture *f = *state;
    open_cache(f, 0);
    gb_cache_close(f->cache);
    f->cache = NULL;
    raw_put(f->dir, "meta", "schema", 6, schema_3, sizeof schema_3);
    assert_int_equal(gb_cache_open(f->dir, 0, &f->cache, &f->err), GB_ECACHE);
    assert_null(f->cache);
    assert_msg_has(&f->err, f->dir);
    assert_msg_has(&f->err, "schema 3");
    assert_msg_has(&f->err, "schema 2");
    assert_msg_has(&f->err, "--cache DIR");
    assert_int_equal(gb_cache_open(f->dir, GB_CACHE_READONLY, &f->cache, &f->err), GB_ECACHE);
}

static void test_unreadable_schema_record_is_refused(void **state)
{
    fixture *f = *state;
    open_cache(f, 0);
    gb_cache_close(f->cache);
    f->cache = NULL;
    raw_put(f->dir, "meta", "schema", 6, schema_junk, sizeof schema_junk);
    assert_int_equal(gb_cache_open(f->dir, 0, &f->cache, &f->err), GB_ECACHE);
    assert_msg_has(&f->err, f->dir);
}

static void test_garbage_data_file_is_refused_naming_the_path(void **state)
{
    fixture *f = *state;
    char path[256];
    static char garbage[65536];
    memset(garbage, 'x', sizeof garbage);
    snprintf(path, sizeof path, "%s/sub", f->root);
    assert_int_equal(mkdir(path, 0755), 0);
    assert_int_equal(mkdir(f->dir, 0755), 0);
    snprintf(path, sizeof path, "%s/data.mdb", f->dir);
    write_file(path, garbage, sizeof garbage);
    assert_int_equal(gb_cache_open(f->dir, 0, &f->cache, &f->err), GB_ECACHE);
    assert_null(f->cache);
    assert_msg_has(&f->err, f->dir);
    assert_msg_has(&f->err, "mdb_env_open");
    assert_msg_has(&f->err, "MDB_INVALID");
    assert_msg_has(&f->err, "--cache DIR");
}

static void test_a_file_in_place_of_the_directory_is_refused(void **state)
{
    fixture *f = *state;
    char path[256];
    snprintf(path, sizeof path, "%s/file", f->root);
    write_file(path, "x", 1);
    assert_int_not_equal(gb_cache_open(path, 0, &f->cache, &f->err), GB_OK);
    assert_null(f->cache);
    assert_msg_has(&f->err, path);
}

static void test_readonly_open_of_a_missing_directory_fails_cleanly(void **state)
{
    fixture *f = *state;
    int rc = gb_cache_open(f->dir, GB_CACHE_READONLY, &f->cache, &f->err);
    assert_int_equal(rc, ENOENT);
    assert_null(f->cache);
    assert_msg_has(&f->err, f->dir);
    assert_msg_has(&f->err, "mdb_env_open");
    struct stat st;
    assert_int_equal(stat(f->dir, &st), -1); /* nothing was created */
}

static void test_readonly_open_reads_but_refuses_writes(void **state)
{
    fixture *f = *state;
    gb_key key = key_n("trial", 7);
    open_cache(f, 0);
    put_text(f, GB_DB_TRIALS, &key, "{\"status\":\"ok\"}");
    reopen_cache(f, GB_CACHE_READONLY);
    assert_text_stored(f, GB_DB_TRIALS, &key, "{\"status\":\"ok\"}");
    assert_int_equal(gb_cache_put(f->cache, GB_DB_TRIALS, &key, "x", 1, &f->err), GB_EINVAL);
    assert_msg_has(&f->err, "read-only");
    assert_int_equal(gb_cache_del(f->cache, GB_DB_TRIALS, &key, &f->err), GB_EINVAL);
}

static void test_readonly_open_treats_missing_databases_as_empty(void **state)
{
    fixture *f = *state;
    char path[256];
    snprintf(path, sizeof path, "%s/sub", f->root);
    assert_int_equal(mkdir(path, 0755), 0);
    assert_int_equal(mkdir(f->dir, 0755), 0);
    raw_put(f->dir, "unrelated", "k", 1, "v", 1); /* an environment without our dbs */
    open_cache(f, GB_CACHE_READONLY);
    gb_key key = key_n("best", 1);
    void *value = NULL;
    size_t len = 0;
    assert_int_equal(gb_cache_get(f->cache, GB_DB_BEST, &key, &value, &len, &f->err), GB_ENOTFOUND);
    assert_int_equal(count_of(f, GB_DB_BEST), 0);
    assert_int_equal(count_of(f, GB_DB_META), 0);
}

static void test_default_dir_prefers_gpubench_cache_then_xdg_then_home(void **state)
{
    char *saved[3];
    const char *names[3] = {"GPUBENCH_CACHE", "XDG_CACHE_HOME", "HOME"};
    for (int i = 0; i < 3; i++)
        saved[i] = getenv(names[i]) ? strdup(getenv(names[i])) : NULL;
    char out[256];
    gb_err err;
    setenv("GPUBENCH_CACHE", "/own", 1);
    setenv("XDG_CACHE_HOME", "/xdg", 1);
    setenv("HOME", "/home/me", 1);
    assert_int_equal(gb_cache_default_dir(out, sizeof out, &err), GB_OK);
    assert_string_equal(out, "/own");
    setenv("GPUBENCH_CACHE", "", 1); /* empty counts as unset */
    assert_int_equal(gb_cache_default_dir(out, sizeof out, &err), GB_OK);
    assert_string_equal(out, "/xdg/gpubench");
    unsetenv("XDG_CACHE_HOME");
    assert_int_equal(gb_cache_default_dir(out, sizeof out, &err), GB_OK);
    assert_string_equal(out, "/home/me/.cache/gpubench");
    assert_int_equal(gb_cache_default_dir(out, 8, &err), GB_EINVAL); /* too long */
    unsetenv("HOME");
    assert_int_equal(gb_cache_default_dir(out, sizeof out, &err), GB_EINVAL);
    assert_non_null(strstr(err.msg, "--cache DIR"));
    for (int i = 0; i < 3; i++) {
        if (saved[i])
            setenv(names[i], saved[i], 1);
        else
            unsetenv(names[i]);
        free(saved[i]);
    }
}

/* ---- raw records -------------------------------------------------------- */

static void test_put_then_get_round_trips_in_every_db(void **state)
{
    fixture *f = *state;
    const char *texts[] = {"best value", "trial value", "cubin value", "meta value"};
    open_cache(f, 0);
    for (int db = 0; db < GB_DB_COUNT; db++) {
        gb_key key = key_n("any", db);
        put_text(f, (gb_cache_db)db, &key, texts[db]);
    }
    for (int db = 0; db < GB_DB_COUNT; db++) {
        gb_key key = key_n("any", db);
        assert_text_stored(f, (gb_cache_db)db, &key, texts[db]);
    }
}

static void test_get_of_a_missing_key_is_notfound(void **state)
{
    fixture *f = *state;
    gb_key key = key_n("best", 99);
    void *value = NULL;
    size_t len = 0;
    open_cache(f, 0);
    assert_int_equal(gb_cache_get(f->cache, GB_DB_BEST, &key, &value, &len, &f->err), GB_ENOTFOUND);
    assert_null(value);
    char hex[2 * GB_KEY_BYTES + 1];
    gb_key_hex(&key, hex);
    assert_msg_has(&f->err, hex);
}

static void test_put_replaces_and_del_removes(void **state)
{
    fixture *f = *state;
    gb_key key = key_n("trial", 3);
    open_cache(f, 0);
    put_text(f, GB_DB_TRIALS, &key, "first");
    put_text(f, GB_DB_TRIALS, &key, "second, longer");
    assert_text_stored(f, GB_DB_TRIALS, &key, "second, longer");
    assert_int_equal(count_of(f, GB_DB_TRIALS), 1);
    assert_int_equal(gb_cache_del(f->cache, GB_DB_TRIALS, &key, &f->err), GB_OK);
    assert_int_equal(count_of(f, GB_DB_TRIALS), 0);
    assert_int_equal(gb_cache_del(f->cache, GB_DB_TRIALS, &key, &f->err), GB_ENOTFOUND);
}

static void test_empty_payload_round_trips(void **state)
{
    fixture *f = *state;
    gb_key key = key_n("best", 0);
    open_cache(f, 0);
    put_text(f, GB_DB_BEST, &key, "");
    assert_text_stored(f, GB_DB_BEST, &key, "");
}

static void test_a_bad_db_number_is_refused(void **state)
{
    fixture *f = *state;
    gb_key key = key_n("best", 0);
    size_t n;
    open_cache(f, 0);
    assert_int_equal(gb_cache_put(f->cache, GB_DB_COUNT, &key, "x", 1, &f->err), GB_EINVAL);
    assert_int_equal(gb_cache_count(f->cache, (gb_cache_db)-1, &n, &f->err), GB_EINVAL);
}

static void test_a_record_with_a_bad_header_is_reported_by_get(void **state)
{
    fixture *f = *state;
    gb_key key = key_n("trial", 5);
    open_cache(f, 0);
    gb_cache_close(f->cache);
    f->cache = NULL;
    raw_put(f->dir, "trials", key.bytes, GB_KEY_BYTES, "XX\x00\x01{}", 6);
    open_cache(f, GB_CACHE_SKIP_CHECK); /* the check would refuse the whole cache */
    void *value = NULL;
    size_t len = 0;
    assert_int_equal(gb_cache_get(f->cache, GB_DB_TRIALS, &key, &value, &len, &f->err), GB_ECACHE);
    char hex[2 * GB_KEY_BYTES + 1];
    gb_key_hex(&key, hex);
    assert_msg_has(&f->err, "trials");
    assert_msg_has(&f->err, hex);
    assert_msg_has(&f->err, f->dir);
}

static void test_a_record_from_a_newer_schema_is_reported_by_get(void **state)
{
    fixture *f = *state;
    gb_key key = key_n("best", 5);
    open_cache(f, 0);
    gb_cache_close(f->cache);
    f->cache = NULL;
    raw_put(f->dir, "best", key.bytes, GB_KEY_BYTES, "GB\x00\x03{}", 6);
    open_cache(f, GB_CACHE_SKIP_CHECK);
    void *value = NULL;
    size_t len = 0;
    assert_int_equal(gb_cache_get(f->cache, GB_DB_BEST, &key, &value, &len, &f->err), GB_ECACHE);
    assert_msg_has(&f->err, "is from a newer schema");
}

/* ---- walking ------------------------------------------------------------ */

typedef struct walk {
    gb_key keys[64];
    size_t n;
    size_t n_bad;
    size_t stop_after; /* 0: never stop */
} walk;

static int collect(void *ctx, const gb_key *key, const void *value, size_t len)
{
    walk *w = ctx;
    if (!value)
        w->n_bad++;
    else
        assert_int_equal(len, 5);
    w->keys[w->n++] = *key;
    return w->stop_after && w->n == w->stop_after ? 42 : 0;
}

static void test_foreach_walks_in_key_order_and_matches_count(void **state)
{
    fixture *f = *state;
    open_cache(f, 0);
    for (int i = 0; i < 50; i++) {
        gb_key key = key_n("trial", i);
        put_text(f, GB_DB_TRIALS, &key, "value");
    }
    walk w = {.n = 0};
    assert_int_equal(gb_cache_foreach(f->cache, GB_DB_TRIALS, collect, &w, &f->err), GB_OK);
    assert_int_equal(w.n, 50);
    assert_int_equal(w.n, count_of(f, GB_DB_TRIALS));
    for (size_t i = 1; i < w.n; i++)
        assert_true(memcmp(w.keys[i - 1].bytes, w.keys[i].bytes, GB_KEY_BYTES) < 0);
    assert_int_equal(w.n_bad, 0);
}

static void test_foreach_stops_when_the_callback_says_so(void **state)
{
    fixture *f = *state;
    open_cache(f, 0);
    for (int i = 0; i < 10; i++) {
        gb_key key = key_n("best", i);
        put_text(f, GB_DB_BEST, &key, "value");
    }
    walk w = {.stop_after = 3};
    assert_int_equal(gb_cache_foreach(f->cache, GB_DB_BEST, collect, &w, &f->err), 42);
    assert_int_equal(w.n, 3);
}

static void test_foreach_passes_bad_records_as_null_and_skips_meta_schema(void **state)
{
    fixture *f = *state;
    gb_key good = key_n("best", 1), bad = key_n("best", 2);
    open_cache(f, 0);
    put_text(f, GB_DB_META, &good, "value");
    gb_cache_close(f->cache);
    f->cache = NULL;
    raw_put(f->dir, "meta", bad.bytes, GB_KEY_BYTES, "junk", 4);
    open_cache(f, GB_CACHE_SKIP_CHECK);
    walk w = {.n = 0};
    assert_int_equal(gb_cache_foreach(f->cache, GB_DB_META, collect, &w, &f->err), GB_OK);
    assert_int_equal(w.n, 2); /* "schema" is not a 16-byte key and is skipped */
    assert_int_equal(w.n_bad, 1);
}

/* ---- JSON and cubin records --------------------------------------------- */

static void test_json_records_round_trip(void **state)
{
    fixture *f = *state;
    gb_key key = key_n("best", 1);
    json_t *json = NULL, *put = json_pack("{s:s, s:f}", "key", "gemm m=1024", "median_ms", 0.25);
    open_cache(f, 0);
    assert_int_equal(gb_cache_put_json(f->cache, GB_DB_BEST, &key, put, &f->err), GB_OK);
    json_decref(put);
    assert_int_equal(gb_cache_get_json(f->cache, GB_DB_BEST, &key, &json, &f->err), GB_OK);
    assert_string_equal(gb_json_str(gb_json_get(json, "key"), ""), "gemm m=1024");
    assert_true(gb_json_num(gb_json_get(json, "median_ms"), 0) == 0.25);
    json_decref(json);
}

static void test_a_json_record_that_does_not_parse_is_a_cache_error(void **state)
{
    fixture *f = *state;
    gb_key key = key_n("trial", 1);
    json_t *json = NULL;
    open_cache(f, 0);
    put_text(f, GB_DB_TRIALS, &key, "{\"cut off");
    assert_int_equal(gb_cache_get_json(f->cache, GB_DB_TRIALS, &key, &json, &f->err), GB_ECACHE);
    assert_null(json);
    char hex[2 * GB_KEY_BYTES + 1];
    gb_key_hex(&key, hex);
    assert_msg_has(&f->err, "trials");
    assert_msg_has(&f->err, hex);
    assert_msg_has(&f->err, "premature end of input");
}

static void test_cubin_records_round_trip(void **state)
{
    fixture *f = *state;
    gb_key key = gb_key_of_bytes("source", 6);
    const uint8_t cubin[] = {0x7f, 'E', 'L', 'F', 0, 1, 2, 0, 0xff};
    const char *meta = "{\"registers\":32,\"log\":\"\"}";
    open_cache(f, 0);
    assert_int_equal(gb_cache_put_cubin(f->cache, &key, meta, cubin, sizeof cubin, &f->err), GB_OK);
    char *meta_back = NULL;
    void *cubin_back = NULL;
    size_t n = 0;
    int rc = gb_cache_get_cubin(f->cache, &key, &meta_back, &cubin_back, &n, &f->err);
    assert_int_equal(rc, GB_OK);
    assert_string_equal(meta_back, meta);
    assert_int_equal(n, sizeof cubin);
    assert_memory_equal(cubin_back, cubin, n);
    free(meta_back);
    free(cubin_back);
}

/* Pinned decision: no compile produces an empty cubin, so one is refused on put and
 * reported as a corrupt record on get. */
static void test_an_empty_cubin_is_refused(void **state)
{
    fixture *f = *state;
    gb_key key = gb_key_of_bytes("empty", 5);
    open_cache(f, 0);
    assert_int_equal(gb_cache_put_cubin(f->cache, &key, "{}", "", 0, &f->err), GB_EINVAL);
    assert_int_equal(gb_cache_put_cubin(f->cache, &key, NULL, "x", 1, &f->err), GB_EINVAL);
    /* a record whose JSON takes all of the payload */
    gb_cache_put(f->cache, GB_DB_CUBINS, &key, "\x00\x00\x00\x02{}", 6, &f->err);
    char *meta = NULL;
    void *cubin = NULL;
    size_t n = 0;
    assert_int_equal(gb_cache_get_cubin(f->cache, &key, &meta, &cubin, &n, &f->err), GB_ECACHE);
    assert_null(meta);
    assert_null(cubin);
}

static void test_a_cubin_record_with_a_bad_length_is_a_cache_error(void **state)
{
    fixture *f = *state;
    gb_key key = gb_key_of_bytes("bad", 3);
    char *meta = NULL;
    void *cubin = NULL;
    size_t n = 0;
    open_cache(f, 0);
    gb_cache_put(f->cache, GB_DB_CUBINS, &key, "\x00\x00\x01\x00{}xx", 8, &f->err);
    assert_int_equal(gb_cache_get_cubin(f->cache, &key, &meta, &cubin, &n, &f->err), GB_ECACHE);
    assert_msg_has(&f->err, "cubins");
    gb_cache_put(f->cache, GB_DB_CUBINS, &key, "\x00\x00", 2, &f->err);
    assert_int_equal(gb_cache_get_cubin(f->cache, &key, &meta, &cubin, &n, &f->err), GB_ECACHE);
}

/* ---- growth and concurrency --------------------------------------------- */

static void test_the_map_grows_when_full(void **state)
{
    fixture *f = *state;
    size_t record_bytes = 256 * 1024;
    char *record = malloc(record_bytes);
    assert_non_null(record);
    setenv("GB_CACHE_INITIAL_MAPSIZE", "1048576", 1);
    open_cache(f, 0);
    for (int i = 0; i < 16; i++) { /* 4 MiB into a 1 MiB map */
        gb_key key = key_n("cubin", i);
        memset(record, 'a' + i, record_bytes);
        int rc = gb_cache_put(f->cache, GB_DB_CUBINS, &key, record, record_bytes, &f->err);
        if (rc) fail_msg("put %d: %s", i, f->err.msg);
    }
    reopen_cache(f, 0);
    for (int i = 0; i < 16; i++) {
        gb_key key = key_n("cubin", i);
        void *value = NULL;
        size_t len = 0;
        assert_int_equal(gb_cache_get(f->cache, GB_DB_CUBINS, &key, &value, &len, &f->err), GB_OK);
        assert_int_equal(len, record_bytes);
        assert_int_equal(((char *)value)[len - 1], 'a' + i);
        free(value);
    }
    free(record);
}

#define N_PER_WRITER 200
#define RECORD_BYTES 2048

/* Writes N_PER_WRITER records whose keys and contents depend on writer; 0 on success. */
static int write_records(gb_cache *cache, int writer, gb_err *err)
{
    char record[RECORD_BYTES];
    for (int i = 0; i < N_PER_WRITER; i++) {
        gb_keybuf kb;
        gb_key key;
        gb_key_begin(&kb, "trial");
        gb_key_add_i64(&kb, writer);
        gb_key_add_i64(&kb, i);
        if (gb_key_finish(&kb, &key)) return -1;
        memset(record, 'A' + writer, sizeof record);
        int rc = gb_cache_put(cache, GB_DB_TRIALS, &key, record, sizeof record, err);
        if (rc) return rc;
    }
    return 0;
}

static void assert_all_records_present(fixture *f, int n_writers)
{
    assert_int_equal(count_of(f, GB_DB_TRIALS), (size_t)n_writers * N_PER_WRITER);
    for (int writer = 0; writer < n_writers; writer++) {
        gb_keybuf kb;
        gb_key key;
        gb_key_begin(&kb, "trial");
        gb_key_add_i64(&kb, writer);
        gb_key_add_i64(&kb, N_PER_WRITER - 1);
        assert_int_equal(gb_key_finish(&kb, &key), GB_OK);
        void *value = NULL;
        size_t len = 0;
        assert_int_equal(gb_cache_get(f->cache, GB_DB_TRIALS, &key, &value, &len, &f->err), GB_OK);
        assert_int_equal(len, RECORD_BYTES);
        assert_int_equal(((char *)value)[0], 'A' + writer);
        free(value);
    }
}

/* The child writes through its own handle and reports through its exit status. */
static void child_writer(const char *dir, int writer)
{
    gb_cache *cache = NULL;
    gb_err err;
    int rc = gb_cache_open(dir, 0, &cache, &err);
    if (!rc) rc = write_records(cache, writer, &err);
    if (rc) fprintf(stderr, "writer %d: %s\n", writer, err.msg);
    gb_cache_close(cache);
    _exit(rc ? 1 : 0);
}

/* A small map makes the processes grow it under each other (MDB_MAP_FULL in one,
 * MDB_MAP_RESIZED in the others). */
static void test_two_processes_write_one_cache_and_lose_nothing(void **state)
{
    fixture *f = *state;
    pid_t children[2];
    setenv("GB_CACHE_INITIAL_MAPSIZE", "131072", 1);
    for (int i = 0; i < 2; i++) {
        children[i] = fork();
        assert_int_not_equal(children[i], -1);
        if (children[i] == 0) child_writer(f->dir, i + 1);
    }
    open_cache(f, 0);
    int rc = write_records(f->cache, 0, &f->err);
    if (rc) fail_msg("parent writer: %s", f->err.msg);
    for (int i = 0; i < 2; i++) {
        int status = 0;
        assert_int_equal(waitpid(children[i], &status, 0), children[i]);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
    assert_all_records_present(f, 3);
}

typedef struct thread_job {
    gb_cache *cache;
    int writer;
    int rc;
    gb_err err;
} thread_job;

static void *thread_writer(void *arg)
{
    thread_job *job = arg;
    job->rc = write_records(job->cache, job->writer, &job->err);
    return NULL;
}

static void test_threads_share_one_handle_while_the_map_grows(void **state)
{
    fixture *f = *state;
    enum { N_THREADS = 4 };
    pthread_t threads[N_THREADS];
    thread_job jobs[N_THREADS];
    setenv("GB_CACHE_INITIAL_MAPSIZE", "131072", 1);
    open_cache(f, 0);
    for (int i = 0; i < N_THREADS; i++) {
        jobs[i] = (thread_job){.cache = f->cache, .writer = i};
        assert_int_equal(pthread_create(&threads[i], NULL, thread_writer, &jobs[i]), 0);
    }
    for (int i = 0; i < N_THREADS; i++) {
        assert_int_equal(pthread_join(threads[i], NULL), 0);
        if (jobs[i].rc) fail_msg("thread %d: %s", i, jobs[i].err.msg);
    }
    assert_all_records_present(f, N_THREADS);
}

/* A device's ceilings come back as they were put, the way the copy was made
 * included; another GPU (another UUID) has none. */
static void test_ceilings_come_back_with_the_way_the_copy_was_made(void **state)
{
    fixture *f = *state;
    open_cache(f, 0);
    gb_device_info d = {0};
    snprintf(d.name, sizeof d.name, "NVIDIA H100 80GB HBM3");
    snprintf(d.uuid, sizeof d.uuid, "GPU-2eb96706");
    gb_ceilings c = {
        .copy_gbps = 3076, .copy_bytes = 1 << 30, .gemm_bf16 = 671.2, .gemm_size = 8192};
    snprintf(c.copy_how, sizeof c.copy_how,
             "copy kernel, 65536 blocks of 1024 threads, timed by CUPTI");
    snprintf(c.measured_at, sizeof c.measured_at, "2026-12-06T11:52:41Z");
    assert_int_equal(gb_cache_put_ceilings(f->cache, &d, &c, &f->err), GB_OK);
    gb_ceilings back;
    assert_int_equal(gb_cache_get_ceilings(f->cache, &d, &back, &f->err), GB_OK);
    assert_string_equal(back.copy_how, c.copy_how);
    assert_true(back.copy_gbps == 3076 && back.copy_bytes == 1 << 30 && back.gemm_bf16 == 671.2);
    snprintf(d.uuid, sizeof d.uuid, "GPU-66b42bea");
    assert_int_equal(gb_cache_get_ceilings(f->cache, &d, &back, &f->err), GB_ENOTFOUND);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_ceilings_come_back_with_the_way_the_copy_was_made),
        T(test_open_creates_the_directory_and_databases),
        T(test_close_of_null_is_a_no_op),
        T(test_reopen_sees_what_was_stored),
        T(test_newer_schema_is_refused_naming_the_path),
        T(test_unreadable_schema_record_is_refused),
        T(test_garbage_data_file_is_refused_naming_the_path),
        T(test_a_file_in_place_of_the_directory_is_refused),
        T(test_readonly_open_of_a_missing_directory_fails_cleanly),
        T(test_readonly_open_reads_but_refuses_writes),
        T(test_readonly_open_treats_missing_databases_as_empty),
        T(test_default_dir_prefers_gpubench_cache_then_xdg_then_home),
        T(test_put_then_get_round_trips_in_every_db),
        T(test_get_of_a_missing_key_is_notfound),
        T(test_put_replaces_and_del_removes),
        T(test_empty_payload_round_trips),
        T(test_a_bad_db_number_is_refused),
        T(test_a_record_with_a_bad_header_is_reported_by_get),
        T(test_a_record_from_a_newer_schema_is_reported_by_get),
        T(test_foreach_walks_in_key_order_and_matches_count),
        T(test_foreach_stops_when_the_callback_says_so),
        T(test_foreach_passes_bad_records_as_null_and_skips_meta_schema),
        T(test_json_records_round_trip),
        T(test_a_json_record_that_does_not_parse_is_a_cache_error),
        T(test_cubin_records_round_trip),
        T(test_an_empty_cubin_is_refused),
        T(test_a_cubin_record_with_a_bad_length_is_a_cache_error),
        T(test_the_map_grows_when_full),
        T(test_two_processes_write_one_cache_and_lose_nothing),
        T(test_threads_share_one_handle_while_the_map_grows),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
