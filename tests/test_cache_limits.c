/* The cache at the edges of what the system allows: files it may read but not
 * write (permissions, a read-only file system), a full disk, a file size limit, and
 * a writer killed in the middle of its run. Each is read as far as it can be, a
 * write it cannot make fails with a message, and nothing committed is lost. */
#include "cache/check.h"
#include "tests/cache_helpers.h"

#include <errno.h>
#include <grp.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#define NOBODY 65534

/* ---- read-only caches ------------------------------------------------------ */

/* In a child: takes write access away. Root writes through permission bits, so it
 * becomes an unprivileged user instead (the files stay root's, readable by all);
 * anyone else removes its own write permission. */
static int lose_write_access(cache_fixture *f, char *msg, size_t n)
{
    char data[256], lock[256];
    path_in(data, sizeof data, f->dir, "data.mdb");
    path_in(lock, sizeof lock, f->dir, "lock.mdb");
    if (geteuid() != 0) {
        chmod(data, 0444);
        chmod(lock, 0444); /* may be gone */
        chmod(f->dir, 0555);
        return 0;
    }
    if (chmod(f->root, 0755) || setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY)) {
        snprintf(msg, n, "cannot become an unprivileged user: %s", strerror(errno));
        return CHILD_SKIP;
    }
    return 0;
}

/* Reads the whole standard cache through a handle opened with flags, and checks
 * that a write fails with want_errno, naming the cache and saying why. */
static int read_and_try_to_write(const char *dir, unsigned flags, int want_errno, char *msg,
                                 size_t n)
{
    gb_cache *cache = NULL;
    gb_err err;
    if (gb_cache_open(dir, flags, &cache, &err)) {
        snprintf(msg, n, "open: %s", err.msg);
        return 1;
    }
    int failed = verify_test_cache(cache, msg, n);
    gb_key key = test_key("best", 1000);
    int rc = failed ? GB_OK : gb_cache_put(cache, GB_DB_BEST, &key, "{}", 2, &err);
    if (!failed && (rc != want_errno || !strstr(err.msg, dir) || !strstr(err.msg, "read-only"))) {
        snprintf(msg, n, "put gave %d (wanted %d): %s", rc, want_errno, err.msg);
        failed = 1;
    }
    gb_cache_close(cache);
    return failed;
}

static int read_without_write_access(void *ctx, char *msg, size_t n)
{
    cache_fixture *f = ctx;
    int rc = lose_write_access(f, msg, n);
    if (!rc) rc = read_and_try_to_write(f->dir, 0, EACCES, msg, n);
    if (!rc)
        rc = read_and_try_to_write(f->dir, GB_CACHE_READONLY, GB_EINVAL, msg, n); /* cache ls */
    return rc;
}

/* Neither data.mdb nor lock.mdb can be written: read without a reader slot. */
static void test_a_cache_that_cannot_be_written_is_read_and_refuses_writes(void **state)
{
    cache_fixture *f = *state;
    fill_test_cache(f->dir);
    expect_child_ok(read_without_write_access, f);
}

static void test_a_cache_without_lock_file_in_a_locked_directory_is_read(void **state)
{
    cache_fixture *f = *state;
    char lock[256];
    fill_test_cache(f->dir);
    path_in(lock, sizeof lock, f->dir, "lock.mdb");
    assert_int_equal(unlink(lock), 0); /* and it cannot be made again */
    expect_child_ok(read_without_write_access, f);
    assert_int_equal(access(lock, F_OK), -1);
}

/* In a private mount namespace, so the mount goes with the child. */
static int private_mounts(char *msg, size_t n)
{
    if (unshare(CLONE_NEWNS) == 0 && mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0)
        return 0;
    snprintf(msg, n, "no private mount namespace here: %s", strerror(errno));
    return CHILD_SKIP;
}

static int read_on_a_read_only_mount(void *ctx, char *msg, size_t n)
{
    cache_fixture *f = ctx;
    int rc = private_mounts(msg, n);
    if (rc) return rc;
    if (mount(f->dir, f->dir, NULL, MS_BIND, NULL) ||
        mount(NULL, f->dir, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL)) {
        snprintf(msg, n, "cannot mount read-only here: %s", strerror(errno));
        return CHILD_SKIP;
    }
    rc = read_and_try_to_write(f->dir, 0, EROFS, msg, n);
    if (!rc) rc = read_and_try_to_write(f->dir, GB_CACHE_READONLY, GB_EINVAL, msg, n);
    return rc;
}

static void test_a_cache_on_a_read_only_file_system_is_read_and_refuses_writes(void **state)
{
    cache_fixture *f = *state;
    fill_test_cache(f->dir);
    expect_child_ok(read_on_a_read_only_mount, f);
}

/* ---- full disks ------------------------------------------------------------- */

/* Stores records until a put fails; the failure must be want_errno with a message
 * that names the cache and says "what was stored before is kept", which then must
 * hold: every record stored reads back after a reopen, and the check passes. */
static int fill_until_full(const char *dir, int want_errno, const char *want_text, char *msg,
                           size_t n)
{
    gb_cache *cache = NULL;
    gb_err err;
    static uint8_t record[8000];
    int stored = 0, rc = gb_cache_open(dir, 0, &cache, &err);
    for (; !rc && stored < 100000; stored++) {
        gb_key key = test_key("trial", stored);
        memset(record, stored & 0xff, sizeof record);
        rc = gb_cache_put(cache, GB_DB_TRIALS, &key, record, 1000 + (size_t)stored * 977 % 7000,
                          &err);
        if (rc) break;
    }
    gb_cache_close(cache);
    if (rc != want_errno || !strstr(err.msg, dir) || !strstr(err.msg, want_text) ||
        !strstr(err.msg, "what was stored before is kept")) {
        snprintf(msg, n, "after %d records: status %d: %s", stored, rc, err.msg);
        return 1;
    }
    if (gb_cache_open(dir, 0, &cache, &err)) {
        snprintf(msg, n, "reopen after %d records: %s", stored, err.msg);
        return 1;
    }
    for (int i = 0; i < stored; i++) {
        gb_key key = test_key("trial", i);
        void *value = NULL;
        size_t len = 0;
        rc = gb_cache_get(cache, GB_DB_TRIALS, &key, &value, &len, &err);
        bool same = !rc && len == 1000 + (size_t)i * 977 % 7000 &&
                    ((uint8_t *)value)[len - 1] == (uint8_t)(i & 0xff);
        free(value);
        if (!same) {
            snprintf(msg, n, "record %d of %d is lost: %s", i, stored, rc ? err.msg : "");
            gb_cache_close(cache);
            return 1;
        }
    }
    snprintf(msg, n, "%d records stored before the disk was full", stored);
    gb_cache_close(cache);
    return 0;
}

static int fill_a_small_tmpfs(void *ctx, char *msg, size_t n)
{
    cache_fixture *f = ctx;
    char small[128], dir[160];
    int rc = private_mounts(msg, n);
    if (rc) return rc;
    snprintf(small, sizeof small, "%s/small", f->root);
    snprintf(dir, sizeof dir, "%s/cache", small);
    if (mkdir(small, 0755) || mount("tmpfs", small, "tmpfs", 0, "size=512k")) {
        snprintf(msg, n, "cannot mount a tmpfs here: %s", strerror(errno));
        return CHILD_SKIP;
    }
    return fill_until_full(dir, ENOSPC, "the disk is full", msg, n);
}

static void test_a_full_disk_fails_the_put_and_keeps_what_was_stored(void **state)
{
    expect_child_ok(fill_a_small_tmpfs, *state);
}

/* Fills the file system dir is on, to the last block. */
static void fill_the_disk(const char *dir)
{
    char path[256];
    static char block[65536];
    snprintf(path, sizeof path, "%s/filler", dir);
    FILE *fp = fopen(path, "wb");
    if (!fp) return;
    for (size_t chunk = sizeof block; chunk > 0; chunk /= 2)
        while (fwrite(block, 1, chunk, fp) == chunk && fflush(fp) == 0)
            ;
    fclose(fp);
}

/* A cache on a disk with no room left, lock.mdb gone: LMDB would make a sparse
 * lock.mdb and die of SIGBUS writing it. It is read without the lock instead, and a
 * new cache there is refused or read as empty, with the disk named as the reason. */
static int open_on_a_full_disk(void *ctx, char *msg, size_t n)
{
    cache_fixture *f = ctx;
    char small[128], dir[160], lock[200], fresh[160];
    gb_cache *cache = NULL;
    gb_err err;
    int rc = private_mounts(msg, n);
    if (rc) return rc;
    snprintf(small, sizeof small, "%s/small", f->root);
    if (mkdir(small, 0755) || mount("tmpfs", small, "tmpfs", 0, "size=1m")) {
        snprintf(msg, n, "cannot mount a tmpfs here: %s", strerror(errno));
        return CHILD_SKIP;
    }
    snprintf(dir, sizeof dir, "%s/cache", small);
    snprintf(lock, sizeof lock, "%s/lock.mdb", dir);
    snprintf(fresh, sizeof fresh, "%s/fresh", small);
    fill_test_cache(dir);
    unlink(lock);
    fill_the_disk(small);
    rc = read_and_try_to_write(dir, 0, ENOSPC, msg, n);
    if (!rc) rc = read_and_try_to_write(dir, GB_CACHE_READONLY, GB_EINVAL, msg, n);
    if (rc) return rc;
    rc = gb_cache_open(fresh, 0, &cache, &err);
    gb_cache_close(cache);
    if (rc && (rc != ENOSPC || !strstr(err.msg, "the disk is full"))) {
        snprintf(msg, n, "a new cache on a full disk: status %d: %s", rc, err.msg);
        return 1;
    }
    return 0;
}

static void test_a_cache_on_a_full_disk_without_its_lock_file_is_read(void **state)
{
    expect_child_ok(open_on_a_full_disk, *state);
}

/* The file size limit (ulimit -f): writes past it fail with EFBIG, or come out
 * short, which LMDB reports as EIO. */
static int fill_to_the_file_size_limit(void *ctx, char *msg, size_t n)
{
    cache_fixture *f = ctx;
    struct rlimit limit = {512 * 1024, 512 * 1024};
    signal(SIGXFSZ, SIG_IGN);
    if (setrlimit(RLIMIT_FSIZE, &limit)) {
        snprintf(msg, n, "setrlimit: %s", strerror(errno));
        return 1;
    }
    return fill_until_full(f->dir, EFBIG, "ulimit -f", msg, n);
}

static void test_a_file_size_limit_fails_the_put_and_keeps_what_was_stored(void **state)
{
    expect_child_ok(fill_to_the_file_size_limit, *state);
}

/* ---- killed writers ----------------------------------------------------------- */

#define KILLED_RECORD_BYTES 50000

static size_t killed_record_bytes(int i)
{
    return KILLED_RECORD_BYTES + (size_t)i * 131 % 20000;
}

/* Writes records until killed, telling the parent each one that is committed. */
_Noreturn static void write_until_killed(const char *dir, int first, int report_fd)
{
    gb_cache *cache = NULL;
    gb_err err;
    static uint8_t record[KILLED_RECORD_BYTES + 20000];
    if (gb_cache_open(dir, 0, &cache, &err)) _exit(1);
    for (int i = first;; i++) {
        gb_key key = test_key("trial", i);
        memset(record, i & 0xff, sizeof record);
        if (gb_cache_put(cache, GB_DB_TRIALS, &key, record, killed_record_bytes(i), &err)) _exit(2);
        if (write(report_fd, &i, sizeof i) != sizeof i) _exit(3);
    }
}

/* Starts a writer, lets it commit at least n_before records, kills it with SIGKILL
 * (most likely in the middle of a transaction) and returns the last record it
 * reported committed. */
static int kill_a_writer(const char *dir, int first, int n_before)
{
    int fds[2], last = -1, i;
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_int_not_equal(pid, -1);
    if (pid == 0) {
        close(fds[0]);
        write_until_killed(dir, first, fds[1]);
    }
    close(fds[1]);
    while (last < first + n_before - 1 && read(fds[0], &i, sizeof i) == sizeof i)
        last = i;
    kill(pid, SIGKILL);
    while (read(fds[0], &i, sizeof i) == sizeof i) /* committed before the kill landed */
        last = i;
    close(fds[0]);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    return last;
}

static void assert_records_committed(cache_fixture *f, gb_cache *cache, int first, int last)
{
    for (int i = first; i <= last; i++) {
        gb_key key = test_key("trial", i);
        void *value = NULL;
        size_t len = 0;
        if (gb_cache_get(cache, GB_DB_TRIALS, &key, &value, &len, &f->err))
            fail_msg("record %d (of %d..%d): %s", i, first, last, f->err.msg);
        assert_int_equal(len, killed_record_bytes(i));
        assert_int_equal(((uint8_t *)value)[len - 1], (uint8_t)(i & 0xff));
        free(value);
    }
}

static void test_a_writer_killed_mid_run_keeps_its_commits_and_the_cache_opens_clean(void **state)
{
    cache_fixture *f = *state;
    gb_cache_check_report report;
    gb_cache *cache = NULL;
    int first = 0;
    for (int round = 0; round < 3; round++) {
        int last = kill_a_writer(f->dir, first, 20 + 7 * round);
        assert_int_equal(gb_cache_check(f->dir, GB_CACHE_CHECK_FORCE, &report, &f->err), GB_OK);
        assert_int_equal(gb_cache_open(f->dir, 0, &cache, &f->err), GB_OK);
        assert_records_committed(f, cache, 0, last);
        gb_key key = test_key("best", round); /* the dead writer's lock is recovered */
        assert_int_equal(gb_cache_put(cache, GB_DB_BEST, &key, "{}", 2, &f->err), GB_OK);
        gb_cache_close(cache);
        cache = NULL;
        first = last + 1;
    }
}

/* Writes, rewrites and deletes records until killed, so pages keep moving between
 * use and LMDB's free list. */
_Noreturn static void churn(const char *dir)
{
    gb_cache *cache = NULL;
    gb_err err;
    static uint8_t record[9000];
    if (gb_cache_open(dir, 0, &cache, &err)) _exit(1);
    for (int i = 0;; i++) {
        gb_key key = test_key("trial", i % 200);
        memset(record, i & 0xff, sizeof record);
        int rc = i % 7 == 3 ? gb_cache_del(cache, GB_DB_TRIALS, &key, &err)
                            : gb_cache_put(cache, GB_DB_TRIALS, &key, record,
                                           100 + (size_t)i * 613 % 8900, &err);
        if (rc && rc != GB_ENOTFOUND) _exit(2);
    }
}

/* The check reads a snapshot: a cache that another process writes all along is
 * sound at every moment, and the check must say so every time. */
static void test_the_check_passes_while_another_process_writes(void **state)
{
    cache_fixture *f = *state;
    gb_cache_check_report report;
    fill_test_cache(f->dir);
    pid_t writer = fork();
    assert_int_not_equal(writer, -1);
    if (writer == 0) churn(f->dir);
    int failed = 0;
    for (int i = 0; i < 60 && !failed; i++) {
        failed = gb_cache_check(f->dir, GB_CACHE_CHECK_FORCE, &report, &f->err);
        usleep(5000);
    }
    int status = 0;
    kill(writer, SIGKILL);
    assert_int_equal(waitpid(writer, &status, 0), writer);
    if (failed) fail_msg("check %d: %s", failed, f->err.msg);
    assert_true(WIFSIGNALED(status)); /* it was still writing, not failed */
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, cache_fixture_setup, cache_fixture_teardown)
    const struct CMUnitTest tests[] = {
        T(test_a_cache_that_cannot_be_written_is_read_and_refuses_writes),
        T(test_a_cache_without_lock_file_in_a_locked_directory_is_read),
        T(test_a_cache_on_a_read_only_file_system_is_read_and_refuses_writes),
        T(test_a_full_disk_fails_the_put_and_keeps_what_was_stored),
        T(test_a_cache_on_a_full_disk_without_its_lock_file_is_read),
        T(test_a_file_size_limit_fails_the_put_and_keeps_what_was_stored),
        T(test_a_writer_killed_mid_run_keeps_its_commits_and_the_cache_opens_clean),
        T(test_the_check_passes_while_another_process_writes),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
