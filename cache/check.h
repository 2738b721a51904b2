/*
 * The damage check. LMDB trusts the pages of its file: a damaged data.mdb can send
 * it through a wild pointer and kill the process with SIGSEGV or SIGBUS, or trip an
 * assertion (SIGABRT) when a write lands on a damaged page. So before gpubench
 * trusts a cache file, a forked child (cache/check_walk.c) opens it and reads
 * everything a reader or a writer of it would read, in one snapshot:
 *   - that the file holds every page its meta page counts (a truncated copy);
 *   - LMDB's free list: each entry's page numbers inside the file, none twice;
 *   - every page in use: its own number, its kind, the bounds of its free space and
 *     its nodes (LMDB copies pages by these when it writes); pages in use, free and
 *     meta add up to the file and to what the databases count;
 *   - every key and value of every database, overflow pages included: keys ascend,
 *     each is found again by a lookup (a damaged branch page misleads lookups),
 *     each record's frame holds (cache/frame.h: header and checksum), and each
 *     database holds as many records as its header counts.
 * The parent waits, with a time limit (a walk caught in a loop is killed), and
 * turns the child's death (with what LMDB wrote to stderr), its time-out or the
 * first problem it found into one message that names the cache, says what happened
 * and what to do. A problem found while data.mdb changed under the walk (another
 * process writing) is checked again, up to three walks, before it is reported.
 *
 * A clean check leaves a stamp, DIR/check.stamp, that holds data.mdb's device,
 * inode, size, mtime and ctime; while all of them are unchanged, a later check skips
 * the walk. Any write to data.mdb changes its mtime and ctime, a write by this very
 * process included, so the next open after a write walks again: nothing but a clean
 * walk of the file as it is now ever writes a stamp. A cache that cannot be written
 * (read-only media) keeps no stamp and is walked at every open.
 *
 * The child uses a reader slot in lock.mdb, like any reader, so that a writer in
 * another process cannot reuse pages under it; where lock.mdb cannot be written, or
 * the disk has no room for it, it reads without one (MDB_NOLOCK), as gb_cache_open
 * does.
 *
 * fork() from a process with several threads is safe only while no other thread
 * holds a lock the child needs (malloc's among them). Call gb_cache_check, and
 * gb_cache_open, which calls it, before starting threads.
 */
#ifndef GB_CACHE_CHECK_H
#define GB_CACHE_CHECK_H

#include "base/error.h"
#include "cache/cache.h"

#include <stdbool.h>
#include <stddef.h>

#define GB_CACHE_CHECK_PROBLEM_BYTES 512

typedef struct gb_cache_check_report {
    size_t n_records[GB_DB_COUNT]; /* records walked in each of gpubench's databases */
    size_t n_other_records;        /* in named databases that are not gpubench's */
    size_t n_free_pages;           /* pages on LMDB's free list */
    size_t n_used_pages;           /* pages in use: branch, leaf and overflow pages */
    size_t n_bad;                  /* records whose frame failed (header, checksum, key) */
    size_t file_bytes;             /* data.mdb's size */
    bool absent;                   /* no data.mdb, or an empty one: nothing to check */
    bool skipped;                  /* the stamp matched: nothing was walked */
    double elapsed_ms;             /* the whole check, fork and wait included */
    char problem[GB_CACHE_CHECK_PROBLEM_BYTES]; /* the first problem; "" when clean */
} gb_cache_check_report;

enum {
    GB_CACHE_CHECK_FORCE = 1 << 0,    /* walk even when the stamp matches */
    GB_CACHE_CHECK_NO_STAMP = 1 << 1, /* neither read nor write the stamp */
};

/* Checks the cache in dir; out (required) is filled in whatever the outcome.
 * Returns GB_OK when the file is sound, absent or empty, or unchanged since its last
 * clean check; GB_ECACHE when it is damaged, not an LMDB file, from another LMDB
 * version, or its lock file is unusable, with a message that says what to do; an
 * errno when the file cannot be read at all (EACCES); GB_ENOMEM or the errno of
 * pipe/fork/mmap when the check itself cannot run.
 *
 * Test hook: GB_CACHE_CHECK_TIMEOUT_MS (milliseconds) replaces the time limit,
 * which is otherwise 30 s plus 1 s per 20 MB of data.mdb. */
int gb_cache_check(const char *dir, unsigned flags, gb_cache_check_report *out, gb_err *err);

#endif
