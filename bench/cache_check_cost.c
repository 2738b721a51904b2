/*
 * What the damage check (cache/check.h) costs.
 *
 *   cache_check_cost DIR [N_RECORDS]   fills a new cache in DIR with N_RECORDS
 *                                      (default 10000) trial-sized records, then times
 *   cache_check_cost --existing DIR    times the cache already in DIR (opened
 *                                      read-only; the check leaves its stamp)
 *
 * Timed, 10 times each (median, min and max, in ms): the check walking the file with
 * the file in the page cache and with it evicted (posix_fadvise DONTNEED, so from
 * disk), the check when the stamp matches, and gb_cache_open + gb_cache_close with
 * the check skipped, with the stamp matching, and after a write (which walks).
 * Built with the tests (tests/CMakeLists.txt); bench/cache_damage.sh runs it.
 */
#include "base/clock.h"
#include "cache/cache.h"
#include "cache/check.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REPEATS 10

static void die(const char *what, const gb_err *err)
{
    fprintf(stderr, "cache_check_cost: %s: %s\n", what, err ? err->msg : "");
    exit(1);
}

static gb_key record_key(int i)
{
    gb_keybuf kb;
    gb_key key;
    gb_key_begin(&kb, "trial");
    gb_key_add_i64(&kb, i);
    if (gb_key_finish(&kb, &key)) die("gb_key_finish", NULL);
    return key;
}

/* A trial record is JSON of 0.6 to 2.6 KB (statistics, and the samples when timed). */
static void fill(const char *dir, int n_records)
{
    gb_cache *cache = NULL;
    gb_err err;
    char record[2600];
    double start_ms = gb_now_ms();
    if (gb_cache_open(dir, 0, &cache, &err)) die("open", &err);
    for (int i = 0; i < n_records; i++) {
        size_t n = 600 + (size_t)(i * 7919) % 2000;
        for (size_t j = 0; j < n; j++)
            record[j] = (char)('0' + (i + j) % 10);
        gb_key key = record_key(i);
        if (gb_cache_put(cache, GB_DB_TRIALS, &key, record, n, &err)) die("put", &err);
    }
    gb_cache_close(cache);
    printf("cache_check_cost: filled %d records in %.1f s\n", n_records,
           (gb_now_ms() - start_ms) / 1000);
}

static void evict(const char *dir)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/data.mdb", dir);
    int fd = open(path, O_RDONLY);
    if (fd < 0) die("open data.mdb", NULL);
    fdatasync(fd);
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
}

static int compare(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void report(const char *what, double *ms)
{
    qsort(ms, REPEATS, sizeof *ms, compare);
    printf("cache_check_cost: %-44s median %9.3f ms  (min %.3f, max %.3f)\n", what,
           (ms[REPEATS / 2 - 1] + ms[REPEATS / 2]) / 2, ms[0], ms[REPEATS - 1]);
}

typedef enum step { WALK_WARM, WALK_COLD, STAMP, OPEN_SKIP, OPEN_STAMP, OPEN_AFTER_WRITE } step;

static double time_once(const char *dir, step s, bool writable, int n_records)
{
    gb_cache_check_report rep;
    gb_cache *cache = NULL;
    gb_err err;
    unsigned open_flags = writable ? 0 : GB_CACHE_READONLY;
    if (s == WALK_COLD) evict(dir);
    if (s == OPEN_STAMP && gb_cache_check(dir, 0, &rep, &err)) die("check", &err);
    if (s == OPEN_AFTER_WRITE) {
        gb_key key = record_key(n_records + 1);
        if (gb_cache_open(dir, GB_CACHE_SKIP_CHECK, &cache, &err) ||
            gb_cache_put(cache, GB_DB_TRIALS, &key, "{}", 2, &err))
            die("write", &err);
        gb_cache_close(cache);
    }
    double start_ms = gb_now_ms();
    int rc;
    if (s <= STAMP) {
        rc = gb_cache_check(dir, s == STAMP ? 0 : GB_CACHE_CHECK_FORCE, &rep, &err);
        if (!rc && (s == STAMP) != rep.skipped) die("the stamp did not do what was asked", NULL);
    } else {
        rc = gb_cache_open(dir, open_flags | (s == OPEN_SKIP ? GB_CACHE_SKIP_CHECK : 0), &cache,
                           &err);
        gb_cache_close(cache);
    }
    if (rc) die("check", &err);
    return gb_now_ms() - start_ms;
}

int main(int argc, char **argv)
{
    bool existing = argc == 3 && !strcmp(argv[1], "--existing");
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: cache_check_cost DIR [N_RECORDS] | --existing DIR\n");
        return 2;
    }
    const char *dir = existing ? argv[2] : argv[1];
    int n_records = !existing && argc == 3 ? atoi(argv[2]) : 10000;
    if (!existing) fill(dir, n_records);
    gb_cache_check_report rep;
    gb_err err;
    if (gb_cache_check(dir, GB_CACHE_CHECK_FORCE, &rep, &err)) die("check", &err);
    printf("cache_check_cost: %s: data.mdb %zu bytes, %zu records (best %zu, trials %zu, "
           "cubins %zu), %zu pages in use, %zu free\n",
           dir, rep.file_bytes,
           rep.n_records[GB_DB_BEST] + rep.n_records[GB_DB_TRIALS] + rep.n_records[GB_DB_CUBINS],
           rep.n_records[GB_DB_BEST], rep.n_records[GB_DB_TRIALS], rep.n_records[GB_DB_CUBINS],
           rep.n_used_pages, rep.n_free_pages);
    const struct {
        step s;
        const char *what;
    } steps[] = {
        {WALK_WARM, "check, walk (file in the page cache)"},
        {WALK_COLD, "check, walk (file evicted: read from disk)"},
        {STAMP, "check, stamp matches (no walk)"},
        {OPEN_SKIP, "open+close, check skipped"},
        {OPEN_STAMP, "open+close, stamp matches"},
        {OPEN_AFTER_WRITE, "open+close after a write (walks)"},
    };
    for (size_t i = 0; i < sizeof steps / sizeof *steps; i++) {
        if (existing && steps[i].s == OPEN_AFTER_WRITE) continue; /* leaves it unchanged */
        double ms[REPEATS];
        for (int r = 0; r < REPEATS; r++)
            ms[r] = time_once(dir, steps[i].s, !existing, n_records);
        report(steps[i].what, ms);
    }
    return 0;
}
