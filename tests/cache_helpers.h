/*
 * What the cache's robustness tests (test_cache_damage, test_cache_limits) share: a
 * temporary directory per test, a standard cache whose every record can be
 * recomputed and so verified byte for byte, and a way to run a piece of a test in
 * a child process, so that a crash, a lost privilege or a private mount namespace
 * stays there and comes back as a status and a message.
 */
#ifndef GB_TESTS_CACHE_HELPERS_H
#define GB_TESTS_CACHE_HELPERS_H

#include "cache/cache.h"

#include <stddef.h>
#include <stdint.h>

typedef struct cache_fixture {
    char root[64]; /* made for the test, removed after it */
    char dir[128]; /* root/cache */
    gb_err err;
} cache_fixture;

int cache_fixture_setup(void **state);
int cache_fixture_teardown(void **state);

gb_key test_key(const char *kind, int64_t n);

/* The standard cache: trials (some deleted, some rewritten, so LMDB's free list has
 * entries), best records, and cubins large enough for overflow pages. Fails the
 * test when it cannot be written. */
void fill_test_cache(const char *dir);

/* The payload of record i of db in the standard cache, as written the generation-th
 * time (malloc'd). */
uint8_t *test_payload(gb_cache_db db, int i, int generation, size_t *out_n);

/* Checks every record of the standard cache through cache; 0 when all are as
 * written, else nonzero with what differs in msg. */
int verify_test_cache(gb_cache *cache, char *msg, size_t n);

/* Runs fn(ctx, msg, n) in a child process and returns its wait status; what fn put
 * in msg comes back in msg. fn returns the child's exit status. */
typedef int (*child_fn)(void *ctx, char *msg, size_t n);
int run_in_child(child_fn fn, void *ctx, char *msg, size_t n);

/* Fails the test unless fn ran in a child and returned 0; skips the test when it
 * returned CHILD_SKIP (something the machine does not allow, such as mounting). */
#define CHILD_SKIP 77
void expect_child_ok(child_fn fn, void *ctx);

/* Whole files. read_whole_file returns a malloc'd buffer. */
void *read_whole_file(const char *path, size_t *out_n);
void write_whole_file(const char *path, const void *bytes, size_t n);
void path_in(char *out, size_t n, const char *dir, const char *name);

#endif
