/*
 * The frame around every record in the cache: a header that says the record is
 * gpubench's and which schema wrote it and, from schema 2 on, a checksum, so that a
 * damaged record is found when it is read instead of reaching the JSON decoder or
 * the cubin parser.
 *
 *   schema 1: 'G' 'B' 0x00 0x01                                        4 bytes
 *   schema 2: 'G' 'B' 0x00 0x02, then XXH3-64 of the payload seeded
 *             with XXH3-64 of the record's key, big-endian              12 bytes
 *
 * The payload follows the header. The checksum covers the key as well, so a record
 * whose key was damaged is caught too, not just left unreachable. Writers frame with
 * the newest schema; readers accept both, so caches written before the checksum
 * existed stay readable.
 */
#ifndef GB_CACHE_FRAME_H
#define GB_CACHE_FRAME_H

#include <stddef.h>

/* The header gb_frame_seal writes (schema 2). */
#define GB_FRAME_BYTES 12
/* The schema gb_frame_seal writes; cache.h's GB_CACHE_SCHEMA is the same number. */
#define GB_FRAME_SCHEMA 2

typedef enum gb_frame_verdict {
    GB_FRAME_OK,
    GB_FRAME_NOT_OURS,     /* shorter than a header, or not 'G' 'B', or schema 0 */
    GB_FRAME_NEWER,        /* written by a newer schema than this gpubench knows */
    GB_FRAME_BAD_CHECKSUM, /* the payload or the key is not what was written */
} gb_frame_verdict;

/* Fills in the header of record (record_bytes long, of which the first
 * GB_FRAME_BYTES are the header and the rest the payload, already in place). */
void gb_frame_seal(const void *key, size_t key_bytes, void *record, size_t record_bytes);

/* Checks a stored record under its key. On GB_FRAME_OK, *out_header_bytes (which
 * may be NULL) is where the payload starts: 4 for schema 1, 12 for schema 2. */
gb_frame_verdict gb_frame_check(const void *key, size_t key_bytes, const void *record,
                                size_t record_bytes, size_t *out_header_bytes);

/* The verdict as the end of a sentence about a record: "fails its checksum". */
const char *gb_frame_verdict_text(gb_frame_verdict verdict);

#endif
