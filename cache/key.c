#include "cache/key.h"

#include "base/error.h"

#include <math.h>
#include <string.h>
#include <xxhash.h>

/* One tag byte per field. A NULL string has its own tag, so it differs from "". */
enum {
    TAG_STR = 0x01,
    TAG_BYTES = 0x02,
    TAG_I64 = 0x03,
    TAG_F64 = 0x04,
    TAG_NULL_STR = 0x05,
};

/* The quiet NaN every NaN is encoded as, so a NaN's payload never changes a key. */
#define CANONICAL_NAN_BITS 0x7ff8000000000000ull

static void put_u64_be(gb_keybuf *kb, uint64_t v)
{
    uint8_t be[8];
    for (int i = 0; i < 8; i++)
        be[i] = (uint8_t)(v >> (56 - 8 * i));
    gb_sb_append(&kb->enc, be, sizeof be);
}

static void put_tag(gb_keybuf *kb, uint8_t tag)
{
    gb_sb_append(&kb->enc, &tag, 1);
}

static void put_sized(gb_keybuf *kb, uint8_t tag, const void *bytes, size_t n)
{
    put_tag(kb, tag);
    put_u64_be(kb, (uint64_t)n);
    if (n) gb_sb_append(&kb->enc, bytes, n);
}

void gb_key_begin(gb_keybuf *kb, const char *kind)
{
    kb->enc = (gb_strbuf)GB_STRBUF_INIT;
    gb_key_add_str(kb, kind);
}

void gb_key_add_str(gb_keybuf *kb, const char *s)
{
    if (!s)
        put_tag(kb, TAG_NULL_STR);
    else
        put_sized(kb, TAG_STR, s, strlen(s));
}

void gb_key_add_i64(gb_keybuf *kb, int64_t v)
{
    put_tag(kb, TAG_I64);
    put_u64_be(kb, (uint64_t)v);
}

void gb_key_add_f64(gb_keybuf *kb, double v)
{
    uint64_t bits;
    if (v == 0.0) v = 0.0; /* folds -0.0 into 0.0 */
    memcpy(&bits, &v, sizeof bits);
    if (isnan(v)) bits = CANONICAL_NAN_BITS;
    put_tag(kb, TAG_F64);
    put_u64_be(kb, bits);
}

void gb_key_add_bytes(gb_keybuf *kb, const void *bytes, size_t n)
{
    put_sized(kb, TAG_BYTES, bytes, n);
}

static gb_key key_of_hash(XXH128_hash_t hash)
{
    XXH128_canonical_t canonical;
    XXH128_canonicalFromHash(&canonical, hash);
    gb_key key;
    memcpy(key.bytes, canonical.digest, GB_KEY_BYTES);
    return key;
}

int gb_key_finish(gb_keybuf *kb, gb_key *out)
{
    int rc = gb_sb_status(&kb->enc);
    if (rc == GB_OK) *out = key_of_hash(XXH3_128bits(kb->enc.data, kb->enc.len));
    gb_sb_free(&kb->enc);
    return rc;
}

gb_key gb_key_of_bytes(const void *bytes, size_t n)
{
    return key_of_hash(XXH3_128bits(n ? bytes : "", n));
}

void gb_key_hex(const gb_key *key, char out[2 * GB_KEY_BYTES + 1])
{
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < GB_KEY_BYTES; i++) {
        out[2 * i] = digits[key->bytes[i] >> 4];
        out[2 * i + 1] = digits[key->bytes[i] & 0x0f];
    }
    out[2 * GB_KEY_BYTES] = '\0';
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

int gb_key_from_hex(const char *hex, gb_key *out)
{
    gb_key key;
    if (!hex || strlen(hex) != 2 * GB_KEY_BYTES) return GB_EINVAL;
    for (int i = 0; i < GB_KEY_BYTES; i++) {
        int hi = hex_digit(hex[2 * i]), lo = hex_digit(hex[2 * i + 1]);
        if (hi < 0 || lo < 0) return GB_EINVAL;
        key.bytes[i] = (uint8_t)(hi << 4 | lo);
    }
    *out = key;
    return GB_OK;
}
