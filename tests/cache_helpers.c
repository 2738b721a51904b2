#include "scratch.h"
#include "tests/cache_helpers.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#define N_TRIALS 150
#define N_BEST   20
#define N_CUBINS 12

int cache_fixture_setup(void **state)
{
    cache_fixture *f = calloc(1, sizeof *f);
    if (!f) return -1;
    strcpy(f->root, "/tmp/gb-test-cache-XXXXXX");
    if (!mkdtemp(f->root)) {
        free(f);
        return -1;
    }
    snprintf(f->dir, sizeof f->dir, "%s/cache", f->root);
    *state = f;
    return 0;
}

/* Permission tests take write access away; give it back so the tree can go. */
static int restore(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    if (flag == FTW_D || flag == FTW_DNR) chmod(path, 0755);
    return 0;
}

int cache_fixture_teardown(void **state)
{
    cache_fixture *f = *state;
    unsetenv("GB_CACHE_INITIAL_MAPSIZE");
    unsetenv("GB_CACHE_CHECK_TIMEOUT_MS");
    nftw(f->root, restore, 16, FTW_PHYS);
    int rc = scratch_remove(f->root);
    free(f);
    return rc;
}

gb_key test_key(const char *kind, int64_t n)
{
    gb_keybuf kb;
    gb_key key;
    gb_key_begin(&kb, kind);
    gb_key_add_i64(&kb, n);
    assert_int_equal(gb_key_finish(&kb, &key), GB_OK);
    return key;
}

/* ---- the standard cache ------------------------------------------------- */

typedef struct record_kind {
    gb_cache_db db;
    const char *kind;
    int count;
} record_kind;

static const record_kind kinds[] = {
    {GB_DB_TRIALS, "trial", N_TRIALS},
    {GB_DB_BEST, "best", N_BEST},
    {GB_DB_CUBINS, "cubin", N_CUBINS},
};

static size_t payload_bytes(gb_cache_db db, int i)
{
    if (db == GB_DB_TRIALS) return 100 + (size_t)(i * 53) % 1400;
    if (db == GB_DB_BEST) return 300;
    return 3000 + (size_t)i * 1700; /* beyond a page: overflow pages */
}

/* Bytes that differ from record to record everywhere (no two windows alike), so
 * that a test can find one record's bytes in data.mdb. */
uint8_t *test_payload(gb_cache_db db, int i, int generation, size_t *out_n)
{
    size_t n = payload_bytes(db, i);
    uint8_t *p = malloc(n);
    uint64_t x =
        0x9e3779b97f4a7c15u ^ ((uint64_t)db << 48 | (uint64_t)i << 16 | (uint64_t)generation);
    assert_non_null(p);
    for (size_t j = 0; j < n; j++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        p[j] = (uint8_t)(x >> 24);
    }
    *out_n = n;
    return p;
}

/* What became of record i after the fill: -1 deleted, else its generation. */
static int fate(gb_cache_db db, int i)
{
    if (db == GB_DB_TRIALS) return i % 10 == 3 ? -1 : i % 10 == 5 ? 1 : 0;
    if (db == GB_DB_CUBINS) return i == 4 ? -1 : i == 7 ? 1 : 0;
    return 0;
}

static void put_generation(gb_cache *cache, const record_kind *k, int i, int generation)
{
    gb_err err;
    size_t n;
    gb_key key = test_key(k->kind, i);
    uint8_t *p = test_payload(k->db, i, generation, &n);
    if (gb_cache_put(cache, k->db, &key, p, n, &err)) fail_msg("fill: %s", err.msg);
    free(p);
}

void fill_test_cache(const char *dir)
{
    gb_cache *cache = NULL;
    gb_err err;
    if (gb_cache_open(dir, 0, &cache, &err)) fail_msg("fill: %s", err.msg);
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++)
        for (int i = 0; i < kinds[k].count; i++)
            put_generation(cache, &kinds[k], i, 0);
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
        for (int i = 0; i < kinds[k].count; i++) {
            gb_key key = test_key(kinds[k].kind, i);
            int becomes = fate(kinds[k].db, i);
            if (becomes > 0) put_generation(cache, &kinds[k], i, becomes);
            if (becomes < 0 && gb_cache_del(cache, kinds[k].db, &key, &err))
                fail_msg("fill: %s", err.msg);
        }
    }
    gb_cache_close(cache);
}

static int verify_one(gb_cache *cache, const record_kind *k, int i, char *msg, size_t n)
{
    gb_err err;
    void *value = NULL;
    size_t len = 0, want_len = 0;
    gb_key key = test_key(k->kind, i);
    int generation = fate(k->db, i);
    int rc = gb_cache_get(cache, k->db, &key, &value, &len, &err);
    if (generation < 0) {
        if (rc == GB_ENOTFOUND) return 0;
        snprintf(msg, n, "%s %d was deleted but reads with status %d", k->kind, i, rc);
        free(value);
        return 1;
    }
    if (rc) {
        snprintf(msg, n, "%s %d: %s", k->kind, i, err.msg);
        return 1;
    }
    uint8_t *want = test_payload(k->db, i, generation, &want_len);
    int differs = len != want_len || memcmp(value, want, len) != 0;
    if (differs) snprintf(msg, n, "%s %d reads back different bytes", k->kind, i);
    free(want);
    free(value);
    return differs;
}

int verify_test_cache(gb_cache *cache, char *msg, size_t n)
{
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++)
        for (int i = 0; i < kinds[k].count; i++)
            if (verify_one(cache, &kinds[k], i, msg, n)) return 1;
    return 0;
}

/* ---- children ------------------------------------------------------------- */

int run_in_child(child_fn fn, void *ctx, char *msg, size_t n)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_int_not_equal(pid, -1);
    if (pid == 0) {
        close(fds[0]);
        char text[1024] = "";
        int code = fn(ctx, text, sizeof text);
        ssize_t ignored = write(fds[1], text, strlen(text));
        (void)ignored;
        _exit(code);
    }
    close(fds[1]);
    size_t got = 0;
    ssize_t r;
    while (got + 1 < n && (r = read(fds[0], msg + got, n - 1 - got)) != 0) {
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) break;
        got += (size_t)r;
    }
    msg[got] = '\0';
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return status;
}

void expect_child_ok(child_fn fn, void *ctx)
{
    char msg[1024];
    int status = run_in_child(fn, ctx, msg, sizeof msg);
    if (WIFSIGNALED(status)) fail_msg("the child died of signal %d: %s", WTERMSIG(status), msg);
    if (WEXITSTATUS(status) == CHILD_SKIP) {
        print_message("skipped: %s\n", msg);
        skip();
    }
    if (WEXITSTATUS(status) != 0) fail_msg("the child failed (%d): %s", WEXITSTATUS(status), msg);
}

/* ---- files ---------------------------------------------------------------- */

void *read_whole_file(const char *path, size_t *out_n)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    char *bytes = malloc((size_t)st.st_size + 1);
    assert_non_null(bytes);
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    assert_int_equal(fread(bytes, 1, (size_t)st.st_size, fp), (size_t)st.st_size);
    fclose(fp);
    *out_n = (size_t)st.st_size;
    return bytes;
}

void write_whole_file(const char *path, const void *bytes, size_t n)
{
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(bytes, 1, n, fp), n);
    assert_int_equal(fclose(fp), 0);
}

void path_in(char *out, size_t n, const char *dir, const char *name)
{
    snprintf(out, n, "%s/%s", dir, name);
}
