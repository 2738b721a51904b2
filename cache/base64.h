/*
 * Base64 (RFC 4648, standard alphabet, with padding) for the cubins in an export
 * file. The decoder is strict, since its input comes from other machines: only the
 * alphabet, padding only at the end, no line breaks, and never a write past the
 * output it was given.
 */
#ifndef GB_CACHE_BASE64_H
#define GB_CACHE_BASE64_H

#include <stddef.h>

/* Bytes the encoding of n bytes takes, without the NUL. */
size_t gb_base64_encoded_len(size_t n);

/* Writes the encoding of bytes[0..n) and a NUL into out, which must hold
 * gb_base64_encoded_len(n) + 1 bytes. */
void gb_base64_encode(const void *bytes, size_t n, char *out);

/* Decodes text[0..len) into out (out_bytes available); the decoded length comes back
 * in *out_len. GB_EINVAL for text that is not canonical base64, GB_ELIMIT when out is
 * too small. */
int gb_base64_decode(const char *text, size_t len, void *out, size_t out_bytes, size_t *out_len);

#endif
