/*
 * Internal to cache/: what cache/cache.c (the LMDB store and its raw records)
 * lends cache/cache_records.c (the JSON and cubin records built on them).
 */
#ifndef GB_CACHE_CACHE_INTERNAL_H
#define GB_CACHE_CACHE_INTERNAL_H

#include "cache/cache.h"

#include <stddef.h>

/* One piece of a value being stored; a record is the frame and its pieces, copied
 * straight into the space LMDB reserves. */
typedef struct gb_cache_piece {
    const void *bytes;
    size_t n;
} gb_cache_piece;

/* gb_cache_put with the value given in pieces. */
int gb_cache_put_pieces(gb_cache *cache, gb_cache_db db, const gb_key *key,
                        const gb_cache_piece *pieces, size_t n_pieces, gb_err *err);

/* GB_ECACHE naming the record, what (and detail, which may be "") is wrong with it,
 * and what to do about a damaged cache. */
int gb_cache_bad_record(const gb_cache *c, gb_cache_db db, const gb_key *key, const char *what,
                        const char *detail, gb_err *err);

#endif
