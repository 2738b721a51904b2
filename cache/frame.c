#include "cache/frame.h"

#include <stdint.h>
#include <xxhash.h>

#define V1_HEADER_BYTES 4

static uint64_t checksum(const void *key, size_t key_bytes, const uint8_t *payload, size_t n)
{
    return XXH3_64bits_withSeed(payload, n, XXH3_64bits(key, key_bytes));
}

void gb_frame_seal(const void *key, size_t key_bytes, void *record, size_t record_bytes)
{
    uint8_t *p = record;
    uint64_t sum = checksum(key, key_bytes, p + GB_FRAME_BYTES, record_bytes - GB_FRAME_BYTES);
    p[0] = 'G';
    p[1] = 'B';
    p[2] = (uint8_t)(GB_FRAME_SCHEMA >> 8);
    p[3] = (uint8_t)(GB_FRAME_SCHEMA & 0xff);
    for (int i = 0; i < 8; i++)
        p[4 + i] = (uint8_t)(sum >> (56 - 8 * i));
}

gb_frame_verdict gb_frame_check(const void *key, size_t key_bytes, const void *record,
                                size_t record_bytes, size_t *out_header_bytes)
{
    const uint8_t *p = record;
    if (record_bytes < V1_HEADER_BYTES || p[0] != 'G' || p[1] != 'B') return GB_FRAME_NOT_OURS;
    unsigned schema = (unsigned)p[2] << 8 | p[3];
    if (schema == 0) return GB_FRAME_NOT_OURS;
    if (schema > GB_FRAME_SCHEMA) return GB_FRAME_NEWER;
    size_t header_bytes = schema == 1 ? V1_HEADER_BYTES : GB_FRAME_BYTES;
    if (record_bytes < header_bytes) return GB_FRAME_NOT_OURS;
    if (schema >= 2) {
        uint64_t stored = 0;
        for (int i = 0; i < 8; i++)
            stored = stored << 8 | p[4 + i];
        if (stored != checksum(key, key_bytes, p + header_bytes, record_bytes - header_bytes))
            return GB_FRAME_BAD_CHECKSUM;
    }
    if (out_header_bytes) *out_header_bytes = header_bytes;
    return GB_FRAME_OK;
}

const char *gb_frame_verdict_text(gb_frame_verdict verdict)
{
    switch (verdict) {
    case GB_FRAME_OK:
        return "is sound";
    case GB_FRAME_NOT_OURS:
        return "has a bad header";
    case GB_FRAME_NEWER:
        return "is from a newer schema";
    case GB_FRAME_BAD_CHECKSUM:
        return "fails its checksum";
    }
    return "is unreadable";
}
