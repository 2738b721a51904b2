/*
 * JSON in and out: the cache's record values, the worker's reports and the report
 * files are all JSON text, so one small reader and one writer serve every layer.
 *
 * The reader builds a tree (gb_json) that the caller frees with gb_json_free;
 * objects keep their keys in the order they were read. Numbers are doubles, so
 * integers are exact up to 2^53, which is all a shape or a count needs here.
 * The writer appends to a gb_strbuf and takes care of commas and escaping; a
 * double that is NaN or infinite is written as null, since JSON cannot hold it.
 */
#ifndef GB_BASE_JSON_H
#define GB_BASE_JSON_H

#include "base/error.h"
#include "base/strbuf.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    GB_JSON_NULL,
    GB_JSON_BOOL,
    GB_JSON_NUMBER,
    GB_JSON_STRING,
    GB_JSON_ARRAY,
    GB_JSON_OBJECT,
} gb_json_type;

typedef struct gb_json gb_json;
struct gb_json {
    gb_json_type type;
    bool boolean;
    double number;
    char *string;   /* GB_JSON_STRING: NUL-terminated (embedded NULs are refused) */
    size_t n_items; /* ARRAY and OBJECT */
    gb_json **items;
    char **keys; /* OBJECT only: keys[i] names items[i] */
};

/* Parses len bytes of text. On failure err says where ("line 3, column 14: ..."). */
int gb_json_parse(const char *text, size_t len, gb_json **out, gb_err *err);
void gb_json_free(gb_json *json);

/* Lookups that tolerate NULL and the wrong type, so a chain of them needs no checks. */
const gb_json *gb_json_get(const gb_json *obj, const char *key);
const gb_json *gb_json_at(const gb_json *arr, size_t i);
size_t gb_json_len(const gb_json *json);
double gb_json_num(const gb_json *json, double fallback);
const char *gb_json_str(const gb_json *json, const char *fallback);
bool gb_json_bool(const gb_json *json, bool fallback);

/* The writer. Nesting deeper than GB_JSON_MAX_DEPTH sets sb->failed. */
#define GB_JSON_MAX_DEPTH 32
typedef struct gb_jw {
    gb_strbuf *sb;
    int depth;
    bool pretty;
    bool after_key;
    bool has_items[GB_JSON_MAX_DEPTH];
} gb_jw;

void gb_jw_init(gb_jw *w, gb_strbuf *sb, bool pretty);
void gb_jw_obj_begin(gb_jw *w);
void gb_jw_obj_end(gb_jw *w);
void gb_jw_arr_begin(gb_jw *w);
void gb_jw_arr_end(gb_jw *w);
void gb_jw_key(gb_jw *w, const char *key);
void gb_jw_str(gb_jw *w, const char *s);
void gb_jw_num(gb_jw *w, double v);
void gb_jw_int(gb_jw *w, int64_t v);
void gb_jw_bool(gb_jw *w, bool v);
void gb_jw_null(gb_jw *w);
/* Copies an already parsed value into the output. */
void gb_jw_value(gb_jw *w, const gb_json *v);

/* Appends s as a quoted JSON string (used by the writer and by error messages). */
void gb_json_quote(gb_strbuf *sb, const char *s);

#endif
