/* Damaged caches: pages overwritten or flipped, files truncated, from another LMDB
 * version, a bad lock file, records that fail their checksum; and the damage check
 * itself (its counts, its stamp, its time limit). Whatever the damage, gpubench must
 * refuse the cache with a message or read it intact: never die of a signal. */
#include "cache/check.h"
#include "tests/cache_helpers.h"

#include <errno.h>
#include <fcntl.h>
#include <lmdb.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

/* How a child that opened a damaged cache ended (its exit status). */
enum {
    OUT_INTACT = 0,       /* opened, every record as written, writes and a reopen work */
    OUT_REFUSED = 3,      /* refused with a message that names the cache and what to do */
    OUT_BAD_MESSAGE = 4,  /* refused, but the message lacks the path or the advice */
    OUT_LOST = 5,         /* opened, but a record is missing or different */
    OUT_WRITE_FAILED = 6, /* opened, but a write failed */
    OUT_REOPEN_FAILED = 7,
};

static uint64_t next_random(uint64_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return *state;
}

static size_t page_bytes(void)
{
    return (size_t)sysconf(_SC_PAGESIZE); /* LMDB's page is the OS page */
}

static bool says_what_to_do(const char *msg, const char *dir)
{
    return strstr(msg, dir) && (strstr(msg, "--cache DIR") || strstr(msg, "lock.mdb"));
}

static int count_visit(void *ctx, const gb_key *key, const void *value, size_t len)
{
    ++*(size_t *)ctx;
    return 0;
}

/* Puts a few records (one past a page, so LMDB takes pages from its free list),
 * deletes one, and reads them back. */
static int write_some(gb_cache *cache, char *msg, size_t n)
{
    gb_err err;
    static uint8_t big[6000];
    memset(big, 0x5a, sizeof big);
    for (int i = 0; i < 3; i++) {
        gb_key key = test_key("new", i);
        if (gb_cache_put(cache, GB_DB_CUBINS, &key, big, sizeof big - (size_t)i, &err) ||
            gb_cache_put(cache, GB_DB_BEST, &key, "{}", 2, &err)) {
            snprintf(msg, n, "put: %s", err.msg);
            return 1;
        }
    }
    gb_key gone = test_key("new", 0);
    if (gb_cache_del(cache, GB_DB_BEST, &gone, &err)) {
        snprintf(msg, n, "del: %s", err.msg);
        return 1;
    }
    return 0;
}

static int rewrite_db(MDB_txn *txn, const char *name)
{
    MDB_dbi dbi;
    MDB_cursor *cursor;
    MDB_val k, v;
    int rc = mdb_dbi_open(txn, name, 0, &dbi);
    if (rc == MDB_NOTFOUND) return 0;
    if (rc || (rc = mdb_cursor_open(txn, dbi, &cursor))) return rc;
    /* Key and value are copied first: they may lie in the page the put rewrites. */
    for (MDB_cursor_op op = MDB_FIRST; !(rc = mdb_cursor_get(cursor, &k, &v, op)); op = MDB_NEXT) {
        uint8_t key[512], *value = malloc(v.mv_size ? v.mv_size : 1);
        assert_true(k.mv_size <= sizeof key);
        memcpy(key, k.mv_data, k.mv_size);
        memcpy(value, v.mv_data, v.mv_size);
        MDB_val same_key = {k.mv_size, key}, same = {v.mv_size, value};
        rc = mdb_cursor_put(cursor, &same_key, &same, MDB_CURRENT);
        free(value);
        if (rc) break;
    }
    mdb_cursor_close(cursor);
    return rc == MDB_NOTFOUND ? 0 : rc;
}

/* The worst a writer can do to the pages a check passed: rewrite every record in
 * place, in one transaction, so LMDB copies every page on every path, takes pages
 * from its free list and frees the old ones. Through LMDB itself; the cache's own
 * writes take one transaction each. */
static int rewrite_everything(const char *dir, char *msg, size_t n)
{
    MDB_env *env;
    MDB_txn *txn = NULL;
    const char *names[] = {"best", "trials", "cubins", "meta"};
    int rc = mdb_env_create(&env);
    if (!rc) rc = mdb_env_set_maxdbs(env, 8);
    if (!rc) rc = mdb_env_open(env, dir, 0, 0644);
    if (!rc) rc = mdb_txn_begin(env, NULL, 0, &txn);
    for (int i = 0; i < 4 && !rc; i++)
        rc = rewrite_db(txn, names[i]);
    if (!rc)
        rc = mdb_txn_commit(txn);
    else if (txn)
        mdb_txn_abort(txn);
    mdb_env_close(env);
    if (rc) snprintf(msg, n, "rewriting every record: %s", mdb_strerror(rc));
    return rc;
}

/* As `gpubench cache ls` opens (read-only, every database walked), then as a tuning
 * run does (read-write, reads, writes), then once more after the writes. */
static int open_damaged(void *ctx, char *msg, size_t n)
{
    cache_fixture *f = ctx;
    gb_cache *cache = NULL;
    gb_err err;
    size_t seen = 0;
    if (gb_cache_open(f->dir, GB_CACHE_READONLY, &cache, &err)) {
        snprintf(msg, n, "%s", err.msg);
        return says_what_to_do(err.msg, f->dir) ? OUT_REFUSED : OUT_BAD_MESSAGE;
    }
    for (int db = 0; db < GB_DB_COUNT; db++)
        if (gb_cache_foreach(cache, (gb_cache_db)db, count_visit, &seen, &err)) {
            snprintf(msg, n, "foreach: %s", err.msg);
            return OUT_LOST;
        }
    int lost = verify_test_cache(cache, msg, n);
    gb_cache_close(cache);
    if (lost) return OUT_LOST;
    if (gb_cache_open(f->dir, 0, &cache, &err)) {
        snprintf(msg, n, "read-write after read-only: %s", err.msg);
        return OUT_REOPEN_FAILED;
    }
    int failed = write_some(cache, msg, n);
    gb_cache_close(cache);
    if (failed || rewrite_everything(f->dir, msg, n)) return OUT_WRITE_FAILED;
    if (gb_cache_open(f->dir, 0, &cache, &err)) {
        snprintf(msg, n, "reopen after writing: %s", err.msg);
        return OUT_REOPEN_FAILED;
    }
    lost = verify_test_cache(cache, msg, n);
    gb_cache_close(cache);
    return lost ? OUT_LOST : OUT_INTACT;
}

typedef void (*damage_fn)(uint8_t *page, size_t n, uint64_t *rng);

static void overwrite_page(uint8_t *page, size_t n, uint64_t *rng)
{
    for (size_t i = 0; i < n; i++)
        page[i] = (uint8_t)next_random(rng);
}

static void flip_one_byte(uint8_t *page, size_t n, uint64_t *rng)
{
    page[next_random(rng) % n] ^= (uint8_t)(1 + next_random(rng) % 255);
}

/* Damages each page of the standard cache in turn, opening each damaged copy in a
 * child process; every child must end intact or refused, none on a signal. For a
 * longer hunt, GB_TEST_DAMAGE_ROUNDS=N goes over every page N times with fresh
 * random damage (GB_TEST_DAMAGE_SEED changes the first round's). */
static void damage_every_page(cache_fixture *f, damage_fn damage, const char *what)
{
    char data[256], stamp[256], msg[1024];
    size_t n = 0, psize = page_bytes();
    int tally[8] = {0}, n_crashes = 0;
    const char *seed = getenv("GB_TEST_DAMAGE_SEED"), *rounds = getenv("GB_TEST_DAMAGE_ROUNDS");
    uint64_t rng = seed ? strtoull(seed, NULL, 10) | 1 : 0x9e3779b97f4a7c15u;
    int n_rounds = rounds ? atoi(rounds) : 1;
    fill_test_cache(f->dir);
    path_in(data, sizeof data, f->dir, "data.mdb");
    path_in(stamp, sizeof stamp, f->dir, "check.stamp");
    uint8_t *pristine = read_whole_file(data, &n), *copy = malloc(n);
    assert_non_null(copy);
    for (int round = 0; round < n_rounds; round++) {
        for (size_t page = 0; page < n / psize; page++) {
            memcpy(copy, pristine, n);
            damage(copy + page * psize, psize, &rng);
            write_whole_file(data, copy, n);
            unlink(stamp);
            int status = run_in_child(open_damaged, f, msg, sizeof msg);
            if (WIFSIGNALED(status))
                fail_msg("%s, page %zu: the process died of signal %d", what, page,
                         WTERMSIG(status));
            int out = WEXITSTATUS(status);
            if (out != OUT_INTACT && out != OUT_REFUSED)
                fail_msg("%s, page %zu: outcome %d: %s", what, page, out, msg);
            if (strstr(msg, "crashed with")) {
                n_crashes++;
                assert_non_null(strstr(msg, "SIG"));
            }
            tally[out]++;
        }
    }
    print_message("%s: %d x %zu pages: %d read intact, %d refused (%d after the walk died of a "
                  "signal in its child)\n",
                  what, n_rounds, n / psize, tally[OUT_INTACT], tally[OUT_REFUSED], n_crashes);
    assert_true(tally[OUT_REFUSED] > 0);
    free(pristine);
    free(copy);
}

static void test_a_page_overwritten_anywhere_is_refused_or_harmless(void **state)
{
    damage_every_page(*state, overwrite_page, "random page");
}

static void test_a_byte_flipped_in_any_page_is_refused_or_harmless(void **state)
{
    damage_every_page(*state, flip_one_byte, "flipped byte");
}

/* ---- whole-file damage ---------------------------------------------------- */

static int open_read_write(void *ctx, char *msg, size_t n)
{
    cache_fixture *f = ctx;
    gb_cache *cache = NULL;
    gb_err err;
    if (gb_cache_open(f->dir, 0, &cache, &err)) {
        snprintf(msg, n, "%s", err.msg);
        return OUT_REFUSED;
    }
    int lost = verify_test_cache(cache, msg, n);
    gb_cache_close(cache);
    return lost ? OUT_LOST : OUT_INTACT;
}

/* Opens in a child and expects a refusal whose message holds every part. */
static void expect_refusal(cache_fixture *f, const char *const *parts)
{
    char msg[1024];
    int status = run_in_child(open_read_write, f, msg, sizeof msg);
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) != OUT_REFUSED) fail_msg("not refused (%d): %s", status, msg);
    if (!says_what_to_do(msg, f->dir)) fail_msg("no advice: %s", msg);
    for (; *parts; parts++)
        if (!strstr(msg, *parts)) fail_msg("message \"%s\" lacks \"%s\"", msg, *parts);
}

static void test_a_truncated_data_file_is_refused_with_its_sizes(void **state)
{
    cache_fixture *f = *state;
    char data[256], stamp[256];
    size_t n = 0, psize = page_bytes();
    fill_test_cache(f->dir);
    path_in(data, sizeof data, f->dir, "data.mdb");
    path_in(stamp, sizeof stamp, f->dir, "check.stamp");
    uint8_t *pristine = read_whole_file(data, &n);
    const size_t cut[] = {2 * psize, n / 2, n - psize};
    for (size_t i = 0; i < sizeof cut / sizeof *cut; i++) {
        char have[64];
        snprintf(have, sizeof have, "it has %zu bytes", cut[i]);
        const char *parts[] = {"truncated", have, "mv ", NULL};
        write_whole_file(data, pristine, cut[i]);
        expect_refusal(f, parts);
        assert_int_equal(access(stamp, F_OK), -1); /* a refused file gets no stamp */
    }
    const char *parts[] = {"not an LMDB file", "MDB_INVALID", NULL};
    write_whole_file(data, pristine, 64); /* not even a meta page */
    expect_refusal(f, parts);
    free(pristine);
}

static void test_a_zero_length_data_file_reads_empty_and_starts_afresh(void **state)
{
    cache_fixture *f = *state;
    char data[256];
    gb_cache *cache = NULL;
    size_t n = 1;
    fill_test_cache(f->dir);
    path_in(data, sizeof data, f->dir, "data.mdb");
    assert_int_equal(truncate(data, 0), 0);
    assert_int_equal(gb_cache_open(f->dir, GB_CACHE_READONLY, &cache, &f->err), GB_OK);
    assert_int_equal(gb_cache_count(cache, GB_DB_TRIALS, &n, &f->err), GB_OK);
    assert_int_equal(n, 0);
    gb_key key = test_key("best", 1);
    assert_int_equal(gb_cache_put(cache, GB_DB_BEST, &key, "x", 1, &f->err), GB_EINVAL);
    gb_cache_close(cache);
    assert_int_equal(gb_cache_open(f->dir, 0, &cache, &f->err), GB_OK);
    assert_int_equal(gb_cache_put(cache, GB_DB_BEST, &key, "x", 1, &f->err), GB_OK);
    gb_cache_close(cache);
}

/* An LMDB meta page: a 16-byte page header, then the meta, whose second 32-bit word
 * is the data format's version. */
#define META_VERSION_OFFSET 20

static void test_a_data_file_from_another_lmdb_version_is_refused(void **state)
{
    cache_fixture *f = *state;
    char data[256];
    size_t n = 0;
    fill_test_cache(f->dir);
    path_in(data, sizeof data, f->dir, "data.mdb");
    uint8_t *bytes = read_whole_file(data, &n);
    const uint32_t other = 999;
    for (size_t meta = 0; meta < 2; meta++)
        memcpy(bytes + meta * page_bytes() + META_VERSION_OFFSET, &other, sizeof other);
    write_whole_file(data, bytes, n);
    const char *parts[] = {"incompatible version of LMDB", "MDB_VERSION_MISMATCH", NULL};
    expect_refusal(f, parts);
    free(bytes);
}

/* Overwrites lock.mdb in place, keeping its size and inode (and so the locks that
 * another process holds on it). */
static void garble_lock_file(const char *dir)
{
    char lock[256];
    path_in(lock, sizeof lock, dir, "lock.mdb");
    struct stat st;
    assert_int_equal(stat(lock, &st), 0);
    uint8_t *junk = malloc((size_t)st.st_size);
    assert_non_null(junk);
    memset(junk, 0xab, (size_t)st.st_size);
    int fd = open(lock, O_WRONLY);
    assert_true(fd >= 0);
    assert_int_equal(pwrite(fd, junk, (size_t)st.st_size, 0), st.st_size);
    close(fd);
    free(junk);
}

static void test_a_garbage_lock_file_that_nobody_holds_is_rebuilt(void **state)
{
    cache_fixture *f = *state;
    fill_test_cache(f->dir);
    garble_lock_file(f->dir);
    expect_child_ok(open_read_write, f);
}

static void test_a_garbage_lock_file_held_by_another_process_is_named(void **state)
{
    cache_fixture *f = *state;
    int ready[2], hold[2];
    fill_test_cache(f->dir);
    assert_int_equal(pipe(ready), 0);
    assert_int_equal(pipe(hold), 0);
    pid_t holder = fork();
    assert_int_not_equal(holder, -1);
    if (holder == 0) { /* keeps the cache open until the test is done with it */
        gb_cache *cache = NULL;
        gb_err err;
        char byte = gb_cache_open(f->dir, GB_CACHE_READONLY, &cache, &err) ? 'n' : 'y';
        ssize_t ignored = write(ready[1], &byte, 1);
        ignored = read(hold[0], &byte, 1);
        (void)ignored;
        _exit(0); /* without closing: its view of lock.mdb is garbage now */
    }
    char byte = 0;
    assert_int_equal(read(ready[0], &byte, 1), 1);
    assert_int_equal(byte, 'y');
    garble_lock_file(f->dir);
    const char *parts[] = {"lock.mdb", "another process", NULL};
    expect_refusal(f, parts);
    kill(holder, SIGKILL);
    assert_int_equal(waitpid(holder, NULL, 0), holder);
    expect_child_ok(open_read_write, f); /* with the holder gone, LMDB rebuilds it */
    close(ready[0]);
    close(ready[1]);
    close(hold[0]);
    close(hold[1]);
}

/* ---- records ---------------------------------------------------------------- */

/* Changes one byte of a stored value through LMDB itself, frame untouched. */
static void flip_stored_byte(const char *dir, const char *db, const gb_key *key, size_t at)
{
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi dbi;
    MDB_val k = {GB_KEY_BYTES, (void *)key->bytes}, v;
    assert_int_equal(mdb_env_create(&env), 0);
    assert_int_equal(mdb_env_set_maxdbs(env, 8), 0);
    assert_int_equal(mdb_env_open(env, dir, 0, 0644), 0);
    assert_int_equal(mdb_txn_begin(env, NULL, 0, &txn), 0);
    assert_int_equal(mdb_dbi_open(txn, db, 0, &dbi), 0);
    assert_int_equal(mdb_get(txn, dbi, &k, &v), 0);
    uint8_t *copy = malloc(v.mv_size);
    assert_non_null(copy);
    memcpy(copy, v.mv_data, v.mv_size);
    copy[at] ^= 0x01;
    v.mv_data = copy;
    assert_int_equal(mdb_put(txn, dbi, &k, &v, 0), 0);
    assert_int_equal(mdb_txn_commit(txn), 0);
    mdb_env_close(env);
    free(copy);
}

static void test_a_record_that_fails_its_checksum_is_refused_and_reported_by_get(void **state)
{
    cache_fixture *f = *state;
    gb_cache *cache = NULL;
    gb_key key = test_key("trial", 7);
    char hex[2 * GB_KEY_BYTES + 1];
    void *value = NULL;
    size_t len = 0, seen = 0;
    fill_test_cache(f->dir);
    flip_stored_byte(f->dir, "trials", &key, 40);
    gb_key_hex(&key, hex);
    const char *parts[] = {"db trials", hex, "fails its checksum", "mv ", NULL};
    expect_refusal(f, parts);

    assert_int_equal(gb_cache_open(f->dir, GB_CACHE_SKIP_CHECK, &cache, &f->err), GB_OK);
    assert_int_equal(gb_cache_get(cache, GB_DB_TRIALS, &key, &value, &len, &f->err), GB_ECACHE);
    assert_non_null(strstr(f->err.msg, "fails its checksum"));
    assert_non_null(strstr(f->err.msg, hex));
    assert_null(value);
    assert_int_equal(gb_cache_foreach(cache, GB_DB_TRIALS, count_visit, &seen, &f->err), GB_OK);
    gb_cache_close(cache);
}

/* Schema 1 records: 'G', 'B', 0, 1, then the payload, with no checksum. */
static void put_raw(MDB_txn *txn, MDB_dbi dbi, const void *key, size_t key_len, const void *value,
                    size_t value_len)
{
    MDB_val k = {key_len, (void *)key}, v = {value_len, (void *)value};
    assert_int_equal(mdb_put(txn, dbi, &k, &v, 0), 0);
}

static void make_schema_1_cache(const char *dir)
{
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi dbi[4];
    const char *names[] = {"best", "trials", "cubins", "meta"};
    gb_key key = test_key("trial", 1);
    assert_int_equal(mkdir(dir, 0755), 0);
    assert_int_equal(mdb_env_create(&env), 0);
    assert_int_equal(mdb_env_set_maxdbs(env, 8), 0);
    assert_int_equal(mdb_env_open(env, dir, 0, 0644), 0);
    assert_int_equal(mdb_txn_begin(env, NULL, 0, &txn), 0);
    for (int i = 0; i < 4; i++)
        assert_int_equal(mdb_dbi_open(txn, names[i], MDB_CREATE, &dbi[i]), 0);
    put_raw(txn, dbi[3], "schema", 6,
            "GB\x00\x01"
            "1",
            5);
    put_raw(txn, dbi[1], key.bytes, GB_KEY_BYTES, "GB\x00\x01{\"old\":1}", 13);
    assert_int_equal(mdb_txn_commit(txn), 0);
    mdb_env_close(env);
}

static char schema_of(const char *dir)
{
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi dbi;
    MDB_val k = {6, "schema"}, v;
    assert_int_equal(mdb_env_create(&env), 0);
    assert_int_equal(mdb_env_set_maxdbs(env, 8), 0);
    assert_int_equal(mdb_env_open(env, dir, MDB_RDONLY, 0644), 0);
    assert_int_equal(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn), 0);
    assert_int_equal(mdb_dbi_open(txn, "meta", 0, &dbi), 0);
    assert_int_equal(mdb_get(txn, dbi, &k, &v), 0);
    char schema = ((const char *)v.mv_data)[4];
    mdb_txn_abort(txn);
    mdb_env_close(env);
    return schema;
}

static void assert_old_record_reads(cache_fixture *f, gb_cache *cache)
{
    gb_key key = test_key("trial", 1);
    void *value = NULL;
    size_t len = 0;
    assert_int_equal(gb_cache_get(cache, GB_DB_TRIALS, &key, &value, &len, &f->err), GB_OK);
    assert_int_equal(len, 9);
    assert_memory_equal(value, "{\"old\":1}", 9);
    free(value);
}

static void test_schema_1_records_stay_readable_and_a_write_upgrades_the_cache(void **state)
{
    cache_fixture *f = *state;
    gb_cache *cache = NULL;
    make_schema_1_cache(f->dir);
    assert_int_equal(gb_cache_open(f->dir, GB_CACHE_READONLY, &cache, &f->err), GB_OK);
    assert_old_record_reads(f, cache);
    gb_cache_close(cache);
    assert_int_equal(schema_of(f->dir), '1'); /* reading changes nothing */
    assert_int_equal(gb_cache_open(f->dir, 0, &cache, &f->err), GB_OK);
    assert_old_record_reads(f, cache);
    gb_cache_close(cache);
    assert_int_equal(schema_of(f->dir), '2');
}

/* ---- the check -------------------------------------------------------------- */

static void test_the_check_counts_every_record_and_free_page(void **state)
{
    cache_fixture *f = *state;
    gb_cache_check_report report;
    fill_test_cache(f->dir);
    assert_int_equal(gb_cache_check(f->dir, GB_CACHE_CHECK_FORCE, &report, &f->err), GB_OK);
    assert_false(report.skipped);
    assert_int_equal(report.n_records[GB_DB_TRIALS], 135); /* 150, 15 of them deleted */
    assert_int_equal(report.n_records[GB_DB_BEST], 20);
    assert_int_equal(report.n_records[GB_DB_CUBINS], 11);
    assert_int_equal(report.n_records[GB_DB_META], 1);
    assert_int_equal(report.n_bad, 0);
    assert_true(report.n_free_pages > 0);
    assert_string_equal(report.problem, "");
}

static void test_a_missing_cache_is_nothing_to_check(void **state)
{
    cache_fixture *f = *state;
    gb_cache_check_report report;
    assert_int_equal(gb_cache_check(f->dir, 0, &report, &f->err), GB_OK);
    assert_true(report.absent);
}

/* Where cubin 11's payload is in data.mdb (written once, so found once). */
static size_t find_cubin_11(const uint8_t *file, size_t n)
{
    size_t len = 0;
    uint8_t *payload = test_payload(GB_DB_CUBINS, 11, 0, &len);
    for (size_t at = 0; at + 64 <= n; at++) {
        if (memcmp(file + at, payload, 64)) continue;
        free(payload);
        return at;
    }
    fail_msg("cubin 11 is not in data.mdb");
    return 0;
}

static void test_the_stamp_skips_an_unchanged_file_and_nothing_else(void **state)
{
    cache_fixture *f = *state;
    gb_cache_check_report report;
    gb_cache *cache = NULL;
    char data[256];
    struct stat st;
    size_t n = 0;
    fill_test_cache(f->dir); /* it wrote after its open: no stamp fits the file */
    assert_int_equal(gb_cache_check(f->dir, 0, &report, &f->err), GB_OK);
    assert_false(report.skipped);
    assert_int_equal(gb_cache_check(f->dir, 0, &report, &f->err), GB_OK);
    assert_true(report.skipped);

    assert_int_equal(gb_cache_open(f->dir, 0, &cache, &f->err), GB_OK); /* skips: stamp */
    gb_key key = test_key("best", 99);
    assert_int_equal(gb_cache_put(cache, GB_DB_BEST, &key, "{}", 2, &f->err), GB_OK);
    gb_cache_close(cache);
    assert_int_equal(gb_cache_check(f->dir, 0, &report, &f->err), GB_OK);
    assert_false(report.skipped); /* our own write changed the file: walked again */

    /* Damage that puts the mtime back is still seen: the ctime moved. */
    path_in(data, sizeof data, f->dir, "data.mdb");
    assert_int_equal(stat(data, &st), 0);
    uint8_t *bytes = read_whole_file(data, &n);
    bytes[find_cubin_11(bytes, n) + 100] ^= 0x10;
    write_whole_file(data, bytes, n);
    struct timespec times[2] = {st.st_atim, st.st_mtim};
    assert_int_equal(utimensat(AT_FDCWD, data, times, 0), 0);
    assert_int_equal(gb_cache_check(f->dir, 0, &report, &f->err), GB_ECACHE);
    assert_false(report.skipped);
    assert_non_null(strstr(f->err.msg, "fails its checksum"));
    free(bytes);
}

static void test_a_check_past_its_time_limit_is_stopped_and_reported(void **state)
{
    cache_fixture *f = *state;
    gb_cache_check_report report;
    gb_cache *cache = NULL;
    fill_test_cache(f->dir);
    setenv("GB_CACHE_CHECK_TIMEOUT_MS", "0", 1);
    assert_int_equal(gb_cache_check(f->dir, GB_CACHE_CHECK_FORCE, &report, &f->err), GB_ECACHE);
    assert_non_null(strstr(f->err.msg, "did not finish within 0.0 s"));
    assert_non_null(strstr(f->err.msg, f->dir));
    unsetenv("GB_CACHE_CHECK_TIMEOUT_MS");
    /* the killed child's reader slot is freed: the cache opens and writes */
    assert_int_equal(gb_cache_open(f->dir, 0, &cache, &f->err), GB_OK);
    gb_key key = test_key("best", 99);
    assert_int_equal(gb_cache_put(cache, GB_DB_BEST, &key, "{}", 2, &f->err), GB_OK);
    gb_cache_close(cache);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, cache_fixture_setup, cache_fixture_teardown)
    const struct CMUnitTest tests[] = {
        T(test_a_page_overwritten_anywhere_is_refused_or_harmless),
        T(test_a_byte_flipped_in_any_page_is_refused_or_harmless),
        T(test_a_truncated_data_file_is_refused_with_its_sizes),
        T(test_a_zero_length_data_file_reads_empty_and_starts_afresh),
        T(test_a_data_file_from_another_lmdb_version_is_refused),
        T(test_a_garbage_lock_file_that_nobody_holds_is_rebuilt),
        T(test_a_garbage_lock_file_held_by_another_process_is_named),
        T(test_a_record_that_fails_its_checksum_is_refused_and_reported_by_get),
        T(test_schema_1_records_stay_readable_and_a_write_upgrades_the_cache),
        T(test_the_check_counts_every_record_and_free_page),
        T(test_a_missing_cache_is_nothing_to_check),
        T(test_the_stamp_skips_an_unchanged_file_and_nothing_else),
        T(test_a_check_past_its_time_limit_is_stopped_and_reported),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
