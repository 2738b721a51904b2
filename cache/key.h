/*
 * Cache keys: XXH3-128 over a canonical byte encoding.
 *
 * A key is built from a kind ("best", "trial", "cubin", ...) and a sequence of
 * fields. Each field is written with a one-byte type tag and a big-endian length or
 * value, so no two different field sequences share an encoding ("ab","c" differs
 * from "a","bc"; the string "8" differs from the integer 8). The 128-bit hash is
 * stored in xxHash's canonical (big-endian) form, so keys sort and compare the same
 * on every machine.
 */
#ifndef GB_CACHE_KEY_H
#define GB_CACHE_KEY_H

#include "base/strbuf.h"

#include <stddef.h>
#include <stdint.h>

#define GB_KEY_BYTES 16

typedef struct gb_key {
    uint8_t bytes[GB_KEY_BYTES]; /* canonical (big-endian) XXH3-128 */
} gb_key;

typedef struct gb_keybuf {
    gb_strbuf enc; /* the canonical encoding so far */
} gb_keybuf;

/* Starts a key of the given kind; the kind is the first field, so keys of
 * different kinds never collide. */
void gb_key_begin(gb_keybuf *kb, const char *kind);
void gb_key_add_str(gb_keybuf *kb, const char *s);
void gb_key_add_i64(gb_keybuf *kb, int64_t v);
void gb_key_add_f64(gb_keybuf *kb, double v); /* -0.0 is encoded as 0.0 */
void gb_key_add_bytes(gb_keybuf *kb, const void *bytes, size_t n);

/* Hashes the encoding into out and frees kb's buffer. GB_ENOMEM if any add failed. */
int gb_key_finish(gb_keybuf *kb, gb_key *out);

/* One-shot hash of a byte string (content hashes: sources, cubins). */
gb_key gb_key_of_bytes(const void *bytes, size_t n);

/* 32 lowercase hex digits and a NUL. */
void gb_key_hex(const gb_key *key, char out[2 * GB_KEY_BYTES + 1]);

/* Parses 32 hex digits; GB_EINVAL otherwise. */
int gb_key_from_hex(const char *hex, gb_key *out);

#endif
