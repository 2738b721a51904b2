#include "base/json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- reader ------------------------------------------------------------- */

typedef struct reader {
    const char *text;
    size_t len;
    size_t pos;
    int depth;
    gb_err *err;
} reader;

static int fail(reader *r, const char *what)
{
    size_t line = 1, col = 1;
    for (size_t i = 0; i < r->pos && i < r->len; i++) {
        if (r->text[i] == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    return gb_err_set(r->err, GB_EINVAL, "JSON line %zu, column %zu: %s", line, col, what);
}

static void skip_space(reader *r)
{
    while (r->pos < r->len && strchr(" \t\r\n", r->text[r->pos]) && r->text[r->pos])
        r->pos++;
}

static int peek(reader *r)
{
    return r->pos < r->len ? (unsigned char)r->text[r->pos] : -1;
}

static gb_json *new_node(gb_json_type type)
{
    gb_json *node = calloc(1, sizeof *node);
    if (node) node->type = type;
    return node;
}

static int parse_value(reader *r, gb_json **out);

static int literal(reader *r, const char *word, gb_json_type type, bool value, gb_json **out)
{
    size_t n = strlen(word);
    if (r->len - r->pos < n || memcmp(r->text + r->pos, word, n) != 0)
        return fail(r, "unexpected character");
    r->pos += n;
    *out = new_node(type);
    if (!*out) return gb_err_set(r->err, GB_ENOMEM, "out of memory reading JSON");
    (*out)->boolean = value;
    return GB_OK;
}

static int parse_number(reader *r, gb_json **out)
{
    size_t start = r->pos;
    while (r->pos < r->len && strchr("+-0123456789.eE", r->text[r->pos]) && r->text[r->pos])
        r->pos++;
    char digits[64];
    size_t n = r->pos - start;
    if (n == 0 || n >= sizeof digits) return fail(r, "malformed number");
    memcpy(digits, r->text + start, n);
    digits[n] = '\0';
    char *end = NULL;
    double v = strtod(digits, &end);
    if (*end != '\0') return fail(r, "malformed number");
    *out = new_node(GB_JSON_NUMBER);
    if (!*out) return gb_err_set(r->err, GB_ENOMEM, "out of memory reading JSON");
    (*out)->number = v;
    return GB_OK;
}

static int hex4(reader *r, unsigned *out)
{
    if (r->len - r->pos < 4) return fail(r, "short \\u escape");
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = r->text[r->pos++];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (unsigned)(c - 'A' + 10);
        else
            return fail(r, "bad \\u escape");
    }
    *out = v;
    return GB_OK;
}

static void put_utf8(gb_strbuf *sb, unsigned cp)
{
    if (cp < 0x80) {
        gb_sb_putc(sb, (char)cp);
    } else if (cp < 0x800) {
        gb_sb_putc(sb, (char)(0xC0 | (cp >> 6)));
        gb_sb_putc(sb, (char)(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
        gb_sb_putc(sb, (char)(0xE0 | (cp >> 12)));
        gb_sb_putc(sb, (char)(0x80 | ((cp >> 6) & 0x3F)));
        gb_sb_putc(sb, (char)(0x80 | (cp & 0x3F)));
    } else {
        gb_sb_putc(sb, (char)(0xF0 | (cp >> 18)));
        gb_sb_putc(sb, (char)(0x80 | ((cp >> 12) & 0x3F)));
        gb_sb_putc(sb, (char)(0x80 | ((cp >> 6) & 0x3F)));
        gb_sb_putc(sb, (char)(0x80 | (cp & 0x3F)));
    }
}

static int escape(reader *r, gb_strbuf *sb)
{
    if (r->pos >= r->len) return fail(r, "unterminated string");
    char c = r->text[r->pos++];
    const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
    const char *hit = c ? strchr(from, c) : NULL;
    if (hit) {
        gb_sb_putc(sb, to[hit - from]);
        return GB_OK;
    }
    if (c != 'u') return fail(r, "bad escape in string");
    unsigned cp;
    int rc = hex4(r, &cp);
    if (rc) return rc;
    if (cp >= 0xD800 && cp < 0xDC00) {
        unsigned low;
        if (r->len - r->pos < 2 || r->text[r->pos] != '\\' || r->text[r->pos + 1] != 'u')
            return fail(r, "lone surrogate in string");
        r->pos += 2;
        if ((rc = hex4(r, &low))) return rc;
        if (low < 0xDC00 || low > 0xDFFF) return fail(r, "bad surrogate pair");
        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
    }
    if (cp == 0) return fail(r, "NUL in string");
    put_utf8(sb, cp);
    return GB_OK;
}

static int parse_string_text(reader *r, char **out)
{
    gb_strbuf sb = GB_STRBUF_INIT;
    r->pos++; /* the opening quote */
    int rc = GB_OK;
    for (;;) {
        if (r->pos >= r->len) {
            rc = fail(r, "unterminated string");
            break;
        }
        char c = r->text[r->pos++];
        if (c == '"') break;
        if ((unsigned char)c < 0x20) {
            rc = fail(r, "control character in string");
            break;
        }
        if (c == '\\') {
            if ((rc = escape(r, &sb))) break;
        } else {
            gb_sb_putc(&sb, c);
        }
    }
    if (rc == GB_OK && gb_sb_status(&sb))
        rc = gb_err_set(r->err, GB_ENOMEM, "out of memory reading JSON");
    if (rc) {
        gb_sb_free(&sb);
        return rc;
    }
    *out = gb_sb_take(&sb);
    return *out ? GB_OK : gb_err_set(r->err, GB_ENOMEM, "out of memory reading JSON");
}

static int push_item(gb_json *list, gb_json *item, char *key)
{
    size_t n = list->n_items + 1;
    gb_json **items = realloc(list->items, n * sizeof *items);
    if (!items) return GB_ENOMEM;
    list->items = items;
    if (list->type == GB_JSON_OBJECT) {
        char **keys = realloc(list->keys, n * sizeof *keys);
        if (!keys) return GB_ENOMEM;
        list->keys = keys;
        keys[n - 1] = key;
    }
    items[n - 1] = item;
    list->n_items = n;
    return GB_OK;
}

static int parse_member(reader *r, gb_json *list)
{
    char *key = NULL;
    gb_json *item = NULL;
    int rc = GB_OK;
    if (list->type == GB_JSON_OBJECT) {
        skip_space(r);
        if (peek(r) != '"') return fail(r, "expected a string key");
        if ((rc = parse_string_text(r, &key))) return rc;
        skip_space(r);
        if (peek(r) != ':') {
            free(key);
            return fail(r, "expected ':' after key");
        }
        r->pos++;
    }
    if ((rc = parse_value(r, &item)) == GB_OK && push_item(list, item, key) != GB_OK)
        rc = gb_err_set(r->err, GB_ENOMEM, "out of memory reading JSON");
    if (rc) {
        free(key);
        gb_json_free(item);
    }
    return rc;
}

static int parse_list(reader *r, gb_json_type type, gb_json **out)
{
    char close = type == GB_JSON_OBJECT ? '}' : ']';
    if (++r->depth > 512) return fail(r, "nested too deeply");
    gb_json *list = new_node(type);
    if (!list) return gb_err_set(r->err, GB_ENOMEM, "out of memory reading JSON");
    r->pos++;
    skip_space(r);
    int rc = GB_OK;
    if (peek(r) == close) {
        r->pos++;
    } else {
        for (;;) {
            if ((rc = parse_member(r, list))) break;
            skip_space(r);
            int c = peek(r);
            r->pos++;
            if (c == close) break;
            if (c != ',') {
                r->pos--;
                rc =
                    fail(r, type == GB_JSON_OBJECT ? "expected ',' or '}'" : "expected ',' or ']'");
                break;
            }
        }
    }
    r->depth--;
    if (rc) {
        gb_json_free(list);
        return rc;
    }
    *out = list;
    return GB_OK;
}

static int parse_value(reader *r, gb_json **out)
{
    *out = NULL;
    skip_space(r);
    int c = peek(r);
    switch (c) {
    case '{':
        return parse_list(r, GB_JSON_OBJECT, out);
    case '[':
        return parse_list(r, GB_JSON_ARRAY, out);
    case 't':
        return literal(r, "true", GB_JSON_BOOL, true, out);
    case 'f':
        return literal(r, "false", GB_JSON_BOOL, false, out);
    case 'n':
        return literal(r, "null", GB_JSON_NULL, false, out);
    case '"': {
        char *s;
        int rc = parse_string_text(r, &s);
        if (rc) return rc;
        if (!(*out = new_node(GB_JSON_STRING))) {
            free(s);
            return gb_err_set(r->err, GB_ENOMEM, "out of memory reading JSON");
        }
        (*out)->string = s;
        return GB_OK;
    }
    case -1:
        return fail(r, "unexpected end of text");
    default:
        if (c == '-' || (c >= '0' && c <= '9')) return parse_number(r, out);
        return fail(r, "unexpected character");
    }
}

int gb_json_parse(const char *text, size_t len, gb_json **out, gb_err *err)
{
    reader r = {.text = text, .len = len, .err = err};
    gb_json *root = NULL;
    int rc = parse_value(&r, &root);
    if (rc) return rc;
    skip_space(&r);
    if (r.pos != r.len) {
        gb_json_free(root);
        return fail(&r, "text after the value");
    }
    *out = root;
    return GB_OK;
}

void gb_json_free(gb_json *json)
{
    if (!json) return;
    for (size_t i = 0; i < json->n_items; i++) {
        gb_json_free(json->items[i]);
        if (json->keys) free(json->keys[i]);
    }
    free(json->items);
    free(json->keys);
    free(json->string);
    free(json);
}

const gb_json *gb_json_get(const gb_json *obj, const char *key)
{
    if (!obj || obj->type != GB_JSON_OBJECT) return NULL;
    for (size_t i = 0; i < obj->n_items; i++)
        if (strcmp(obj->keys[i], key) == 0) return obj->items[i];
    return NULL;
}

const gb_json *gb_json_at(const gb_json *arr, size_t i)
{
    if (!arr || (arr->type != GB_JSON_ARRAY && arr->type != GB_JSON_OBJECT)) return NULL;
    return i < arr->n_items ? arr->items[i] : NULL;
}

size_t gb_json_len(const gb_json *json)
{
    if (!json || (json->type != GB_JSON_ARRAY && json->type != GB_JSON_OBJECT)) return 0;
    return json->n_items;
}

double gb_json_num(const gb_json *json, double fallback)
{
    return json && json->type == GB_JSON_NUMBER ? json->number : fallback;
}

const char *gb_json_str(const gb_json *json, const char *fallback)
{
    return json && json->type == GB_JSON_STRING ? json->string : fallback;
}

bool gb_json_bool(const gb_json *json, bool fallback)
{
    return json && json->type == GB_JSON_BOOL ? json->boolean : fallback;
}

/* ---- writer ------------------------------------------------------------- */

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

void gb_jw_init(gb_jw *w, gb_strbuf *sb, bool pretty)
{
    memset(w, 0, sizeof *w);
    w->sb = sb;
    w->pretty = pretty;
}

static void newline(gb_jw *w)
{
    if (!w->pretty) return;
    gb_sb_putc(w->sb, '\n');
    for (int i = 0; i < w->depth; i++)
        gb_sb_puts(w->sb, "  ");
}

/* Called before every value and key: writes the separator the position needs. */
static void before_item(gb_jw *w)
{
    if (w->after_key) {
        w->after_key = false;
        return;
    }
    if (w->depth == 0) return;
    if (w->has_items[w->depth]) gb_sb_putc(w->sb, ',');
    w->has_items[w->depth] = true;
    newline(w);
}

static void open_list(gb_jw *w, char c)
{
    before_item(w);
    gb_sb_putc(w->sb, c);
    if (w->depth + 1 >= GB_JSON_MAX_DEPTH) {
        w->sb->failed = 1;
        return;
    }
    w->has_items[++w->depth] = false;
}

static void close_list(gb_jw *w, char c)
{
    if (w->depth == 0) return;
    bool had_items = w->has_items[w->depth];
    w->depth--;
    if (had_items) newline(w);
    gb_sb_putc(w->sb, c);
}

void gb_jw_obj_begin(gb_jw *w)
{
    open_list(w, '{');
}

void gb_jw_obj_end(gb_jw *w)
{
    close_list(w, '}');
}

void gb_jw_arr_begin(gb_jw *w)
{
    open_list(w, '[');
}

void gb_jw_arr_end(gb_jw *w)
{
    close_list(w, ']');
}

void gb_jw_key(gb_jw *w, const char *key)
{
    before_item(w);
    gb_json_quote(w->sb, key);
    gb_sb_puts(w->sb, w->pretty ? ": " : ":");
    w->after_key = true;
}

void gb_jw_str(gb_jw *w, const char *s)
{
    before_item(w);
    if (s)
        gb_json_quote(w->sb, s);
    else
        gb_sb_puts(w->sb, "null");
}

void gb_jw_num(gb_jw *w, double v)
{
    before_item(w);
    if (!isfinite(v)) {
        gb_sb_puts(w->sb, "null");
    } else if (fabs(v) < 9007199254740992.0 && v == (double)(int64_t)v) {
        gb_sb_printf(w->sb, "%lld", (long long)v);
    } else {
        gb_sb_printf(w->sb, "%.17g", v);
    }
}

void gb_jw_int(gb_jw *w, int64_t v)
{
    before_item(w);
    gb_sb_printf(w->sb, "%lld", (long long)v);
}

void gb_jw_bool(gb_jw *w, bool v)
{
    before_item(w);
    gb_sb_puts(w->sb, v ? "true" : "false");
}

void gb_jw_null(gb_jw *w)
{
    before_item(w);
    gb_sb_puts(w->sb, "null");
}

void gb_jw_value(gb_jw *w, const gb_json *v)
{
    if (!v) {
        gb_jw_null(w);
        return;
    }
    switch (v->type) {
    case GB_JSON_NULL:
        gb_jw_null(w);
        break;
    case GB_JSON_BOOL:
        gb_jw_bool(w, v->boolean);
        break;
    case GB_JSON_NUMBER:
        gb_jw_num(w, v->number);
        break;
    case GB_JSON_STRING:
        gb_jw_str(w, v->string);
        break;
    case GB_JSON_ARRAY:
        gb_jw_arr_begin(w);
        for (size_t i = 0; i < v->n_items; i++)
            gb_jw_value(w, v->items[i]);
        gb_jw_arr_end(w);
        break;
    case GB_JSON_OBJECT:
        gb_jw_obj_begin(w);
        for (size_t i = 0; i < v->n_items; i++) {
            gb_jw_key(w, v->keys[i]);
            gb_jw_value(w, v->items[i]);
        }
        gb_jw_obj_end(w);
        break;
    }
}
