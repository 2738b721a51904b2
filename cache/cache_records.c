/*
 * The cache's typed records over its raw ones (cache/cache.c): JSON records (the
 * best and trial records), and cubin records, a length-prefixed JSON header
 * followed by the cubin, stored in one piece-wise put.
 */
#include "base/json.h"
#include "cache/cache.h"
#include "cache/cache_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int gb_cache_get_json(gb_cache *cache, gb_cache_db db, const gb_key *key, json_t **out, gb_err *err)
{
    void *text = NULL;
    size_t len = 0;
    int rc = gb_cache_get(cache, db, key, &text, &len, err);
    if (rc) return rc;
    gb_err why;
    gb_err_clear(&why);
    rc = gb_json_parse(text, len, out, &why);
    if (rc == GB_ENOMEM)
        gb_err_copy(err, &why);
    else if (rc)
        rc = gb_cache_bad_record(cache, db, key, "does not parse: ", why.msg, err);
    free(text);
    return rc;
}

int gb_cache_put_json(gb_cache *cache, gb_cache_db db, const gb_key *key, const json_t *json,
                      gb_err *err)
{
    if (!json) return gb_err_set(err, GB_EINVAL, "cache %s: no JSON to store", gb_cache_dir(cache));
    char *text = gb_json_dump(json, false);
    if (!text) return gb_err_set(err, GB_ENOMEM, "cache %s: out of memory", gb_cache_dir(cache));
    int rc = gb_cache_put(cache, db, key, text, strlen(text), err);
    free(text);
    return rc;
}

int gb_cache_split_cubin(const void *payload, size_t len, const char **out_meta,
                         size_t *out_meta_len, const void **out_cubin, size_t *out_cubin_len)
{
    const uint8_t *p = payload;
    if (!p || len < 4) return GB_ECACHE;
    size_t meta_bytes = (size_t)p[0] << 24 | (size_t)p[1] << 16 | (size_t)p[2] << 8 | p[3];
    if (meta_bytes >= len - 4) return GB_ECACHE;
    *out_meta = (const char *)p + 4;
    *out_meta_len = meta_bytes;
    *out_cubin = p + 4 + meta_bytes;
    *out_cubin_len = len - 4 - meta_bytes;
    return GB_OK;
}

/* Splits a cubin payload in place: the cubin moves to the front of the buffer. */
static int split_cubin(gb_cache *cache, const gb_key *key, uint8_t *payload, size_t len,
                       char **out_meta_json, size_t *out_cubin_bytes, gb_err *err)
{
    if (len < 4)
        return gb_cache_bad_record(cache, GB_DB_CUBINS, key, "is too short for a cubin", "", err);
    size_t meta_bytes =
        (size_t)payload[0] << 24 | (size_t)payload[1] << 16 | (size_t)payload[2] << 8 | payload[3];
    if (meta_bytes >= len - 4)
        return gb_cache_bad_record(cache, GB_DB_CUBINS, key, "has a bad length or no cubin", "",
                                   err);
    if (memchr(payload + 4, '\0', meta_bytes))
        return gb_cache_bad_record(cache, GB_DB_CUBINS, key, "has a NUL in its JSON", "", err);
    char *meta = malloc(meta_bytes + 1);
    if (!meta) return gb_err_set(err, GB_ENOMEM, "cache %s: out of memory", gb_cache_dir(cache));
    memcpy(meta, payload + 4, meta_bytes);
    meta[meta_bytes] = '\0';
    *out_cubin_bytes = len - 4 - meta_bytes;
    memmove(payload, payload + 4 + meta_bytes, *out_cubin_bytes);
    *out_meta_json = meta;
    return GB_OK;
}

int gb_cache_get_cubin(gb_cache *cache, const gb_key *key, char **out_meta_json, void **out_cubin,
                       size_t *out_cubin_bytes, gb_err *err)
{
    void *payload = NULL;
    size_t len = 0;
    int rc = gb_cache_get(cache, GB_DB_CUBINS, key, &payload, &len, err);
    if (rc) return rc;
    rc = split_cubin(cache, key, payload, len, out_meta_json, out_cubin_bytes, err);
    if (rc)
        free(payload);
    else
        *out_cubin = payload;
    return rc;
}

/* An empty cubin is refused: no compile produces one, so it can only be a bug. */
int gb_cache_put_cubin(gb_cache *cache, const gb_key *key, const char *meta_json, const void *cubin,
                       size_t cubin_bytes, gb_err *err)
{
    if (!meta_json || !cubin || cubin_bytes == 0)
        return gb_err_set(err, GB_EINVAL,
                          "cache %s: a cubin record needs JSON and a non-empty cubin",
                          gb_cache_dir(cache));
    size_t meta_bytes = strlen(meta_json);
    if (meta_bytes > UINT32_MAX)
        return gb_err_set(err, GB_EINVAL, "cache %s: cubin JSON too long", gb_cache_dir(cache));
    uint8_t be[4] = {(uint8_t)(meta_bytes >> 24), (uint8_t)(meta_bytes >> 16),
                     (uint8_t)(meta_bytes >> 8), (uint8_t)meta_bytes};
    gb_cache_piece pieces[] = {{be, 4}, {meta_json, meta_bytes}, {cubin, cubin_bytes}};
    return gb_cache_put_pieces(cache, GB_DB_CUBINS, key, pieces, 3, err);
}
