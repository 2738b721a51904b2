/*
 * The child's side of the damage check (cache/check.h), internal to cache/: it
 * opens the environment and reads everything, noting the first problem, and
 * where it is, in memory it shares with the parent, so that even a walk that
 * dies of a signal has said where.
 */
#ifndef GB_CACHE_CHECK_WALK_H
#define GB_CACHE_CHECK_WALK_H

#include "cache/check.h"

#include <stdint.h>

typedef enum gb_check_kind {
    GB_CHECK_CLEAN,
    GB_CHECK_DAMAGE, /* the file: move it aside */
    GB_CHECK_LOCK,   /* lock.mdb, held by another process */
    GB_CHECK_ERRNO,  /* the system: permissions, memory */
} gb_check_kind;

typedef struct gb_check_shared {
    gb_cache_check_report report;
    char stage[128];    /* what the walk was reading: "db cubins" */
    gb_check_kind kind; /* of report.problem */
    int errno_code;     /* with GB_CHECK_ERRNO */
    int finished;       /* the walk ran to its end */
    uint64_t touched;   /* hashes of values read without a checksum: keeps the reads */
} gb_check_shared;

/* Walks the cache in dir, filling s as it goes; s->finished is set at the end. */
void gb_check_walk(gb_check_shared *s, const char *dir);

/* LMDB sizes lock.mdb with ftruncate and then writes it through a map: on a full
 * disk, the first write to a page with no block behind it kills the process with
 * SIGBUS. This allocates the blocks first (creating the file if need be), which
 * turns that into an error. Returns 0 when the lock file is ready, or may simply not
 * need it; ENOSPC, EDQUOT or EFBIG when there is no room for it (read without it);
 * another errno when it cannot be opened (LMDB will say why). Like LMDB, it assumes
 * this process has not opened the environment already: closing the file would drop
 * that handle's locks. */
int gb_check_reserve_lock(const char *dir);

#endif
