#include "cache/base64.h"

#include "base/error.h"

#include <stdbool.h>
#include <stdint.h>

static const char ALPHABET[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t gb_base64_encoded_len(size_t n)
{
    return (n + 2) / 3 * 4;
}

void gb_base64_encode(const void *bytes, size_t n, char *out)
{
    const uint8_t *p = bytes;
    size_t i = 0;
    for (; i + 3 <= n; i += 3, out += 4) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
        out[0] = ALPHABET[v >> 18];
        out[1] = ALPHABET[v >> 12 & 63];
        out[2] = ALPHABET[v >> 6 & 63];
        out[3] = ALPHABET[v & 63];
    }
    if (n - i == 1) {
        uint32_t v = (uint32_t)p[i] << 16;
        out[0] = ALPHABET[v >> 18];
        out[1] = ALPHABET[v >> 12 & 63];
        out[2] = out[3] = '=';
        out += 4;
    } else if (n - i == 2) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8;
        out[0] = ALPHABET[v >> 18];
        out[1] = ALPHABET[v >> 12 & 63];
        out[2] = ALPHABET[v >> 6 & 63];
        out[3] = '=';
        out += 4;
    }
    *out = '\0';
}

static int sextet(char c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

int gb_base64_decode(const char *text, size_t len, void *out, size_t out_bytes, size_t *out_len)
{
    uint8_t *o = out;
    size_t n = 0;
    if (len % 4) return GB_EINVAL;
    for (size_t i = 0; i < len; i += 4) {
        bool last = i + 4 == len;
        int pad = last ? (text[i + 3] == '=') + (text[i + 2] == '=' && text[i + 3] == '=') : 0;
        int s[4];
        for (int j = 0; j < 4 - pad; j++)
            if ((s[j] = sextet(text[i + j])) < 0) return GB_EINVAL;
        for (int j = 4 - pad; j < 4; j++)
            s[j] = 0;
        uint32_t v = (uint32_t)s[0] << 18 | (uint32_t)s[1] << 12 | (uint32_t)s[2] << 6 | s[3];
        /* Canonical: the bits the padding drops are zero. */
        if ((pad == 1 && (v & 0xff)) || (pad == 2 && (v & 0xffff))) return GB_EINVAL;
        size_t take = 3 - (size_t)pad;
        if (n + take > out_bytes) return GB_ELIMIT;
        for (size_t j = 0; j < take; j++)
            o[n++] = (uint8_t)(v >> (16 - 8 * j));
    }
    *out_len = n;
    return GB_OK;
}
