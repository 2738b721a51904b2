#include "base/json.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int gb_json_parse(const char *text, size_t len, json_t **out, gb_err *err)
{
    *out = NULL;
    if (len > GB_JSON_MAX_TEXT)
        return gb_err_set(err, GB_EINVAL, "JSON text of %zu bytes is over the limit of %zu", len,
                          GB_JSON_MAX_TEXT);
    json_error_t why;
    /* No JSON_ALLOW_NUL: a C string cannot hold "\u0000", so it is refused. */
    json_t *j = json_loadb(text, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &why);
    if (j) {
        *out = j;
        return GB_OK;
    }
    if (json_error_code(&why) == json_error_out_of_memory)
        return gb_err_set(err, GB_ENOMEM, "out of memory reading JSON");
    return gb_err_set(err, GB_EINVAL, "JSON line %d, column %d (byte %d): %s", why.line, why.column,
                      why.position, why.text);
}

char *gb_json_dump(const json_t *j, bool pretty)
{
    if (!j) return NULL;
    size_t flags = JSON_ENCODE_ANY | JSON_REAL_PRECISION(17);
    flags |= pretty ? JSON_INDENT(2) : JSON_COMPACT;
    return json_dumps(j, flags);
}

json_t *gb_json_real(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

/* Length of the valid UTF-8 sequence at p (at most n bytes), or 0 if there is none:
 * overlong forms, surrogates and code points past U+10FFFF are invalid. */
static size_t utf8_length(const unsigned char *p, size_t n)
{
    if (p[0] < 0x80) return 1;
    size_t len = p[0] >= 0xF0 ? 4 : p[0] >= 0xE0 ? 3 : p[0] >= 0xC2 ? 2 : 0;
    if (len == 0 || p[0] > 0xF4 || len > n) return 0;
    for (size_t i = 1; i < len; i++)
        if ((p[i] & 0xC0) != 0x80) return 0;
    if (len == 3 && p[0] == 0xE0 && p[1] < 0xA0) return 0;  /* overlong */
    if (len == 3 && p[0] == 0xED && p[1] >= 0xA0) return 0; /* surrogate */
    if (len == 4 && p[0] == 0xF0 && p[1] < 0x90) return 0;  /* overlong */
    if (len == 4 && p[0] == 0xF4 && p[1] >= 0x90) return 0; /* past U+10FFFF */
    return len;
}

json_t *gb_json_text(const char *s, size_t max_bytes)
{
    static const char REPLACEMENT[] = "\xEF\xBF\xBD";
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s), limit = max_bytes ? max_bytes : (size_t)-1;
    gb_strbuf sb = GB_STRBUF_INIT;
    for (size_t i = 0; i < n;) {
        size_t len = utf8_length(p + i, n - i);
        const char *piece = len ? s + i : REPLACEMENT;
        size_t piece_bytes = len ? len : 3;
        if (sb.len + piece_bytes > limit) break;
        gb_sb_append(&sb, piece, piece_bytes);
        i += len ? len : 1;
    }
    if (gb_sb_status(&sb)) {
        gb_sb_free(&sb);
        return NULL;
    }
    json_t *j = json_stringn(sb.data ? sb.data : "", sb.len);
    gb_sb_free(&sb);
    return j;
}

int gb_json_set(json_t *obj, const char *key, json_t *value)
{
    if (!value) return GB_ENOMEM;
    return json_object_set_new(obj, key, value) == 0 ? GB_OK : GB_ENOMEM;
}

const json_t *gb_json_get(const json_t *obj, const char *key)
{
    return json_is_object(obj) ? json_object_get(obj, key) : NULL;
}

const json_t *gb_json_at(const json_t *arr, size_t i)
{
    return json_is_array(arr) ? json_array_get(arr, i) : NULL;
}

size_t gb_json_len(const json_t *j)
{
    if (json_is_array(j)) return json_array_size(j);
    if (json_is_object(j)) return json_object_size(j);
    return 0;
}

double gb_json_num(const json_t *j, double fallback)
{
    return json_is_number(j) ? json_number_value(j) : fallback;
}

const char *gb_json_str(const json_t *j, const char *fallback)
{
    return json_is_string(j) ? json_string_value(j) : fallback;
}

bool gb_json_bool(const json_t *j, bool fallback)
{
    return json_is_boolean(j) ? json_is_true(j) : fallback;
}

void gb_json_quote(gb_strbuf *sb, const char *s)
{
    gb_sb_putc(sb, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"':
            gb_sb_puts(sb, "\\\"");
            break;
        case '\\':
            gb_sb_puts(sb, "\\\\");
            break;
        case '\n':
            gb_sb_puts(sb, "\\n");
            break;
        case '\r':
            gb_sb_puts(sb, "\\r");
            break;
        case '\t':
            gb_sb_puts(sb, "\\t");
            break;
        default:
            if (*p < 0x20)
                gb_sb_printf(sb, "\\u%04x", *p);
            else
                gb_sb_putc(sb, (char)*p);
        }
    }
    gb_sb_putc(sb, '"');
}
