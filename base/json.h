/*
 * JSON through jansson: the cache's records, the worker's messages and the cubin
 * metadata are all JSON text, read and written by one library.
 *
 * Code uses jansson's json_t directly. This header adds what every caller would
 * otherwise repeat: a parser with gpubench's error messages and limits, a writer
 * with its formatting, and lookups that tolerate NULL and the wrong type, so a
 * chain of them needs no checks. Numbers keep jansson's two kinds: integers are
 * exact 64-bit values (json_integer), others are doubles (json_real); a double that
 * is NaN or infinite becomes null, since JSON cannot hold it.
 *
 * Typed, bounds-checked reading of whole structs is base/wire.h's job; these
 * helpers are for the few ad-hoc fields that do not deserve a wire type.
 */
#ifndef GB_BASE_JSON_H
#define GB_BASE_JSON_H

#include "base/error.h"
#include "base/strbuf.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* The longest text gb_json_parse reads: past it, a corrupt length or a hostile
 * peer would make it allocate without bound. */
#define GB_JSON_MAX_TEXT ((size_t)256 << 20)

/* Parses len bytes of text (any JSON value, not only objects). Duplicate keys in an
 * object, a NUL character in a string ("\u0000"), invalid UTF-8, integers outside
 * 64 bits, nesting deeper than jansson's limit (2048) and text longer than
 * GB_JSON_MAX_TEXT are refused with GB_EINVAL, err saying where: "JSON line 3,
 * column 14 (byte 40): ..."; GB_ENOMEM when memory runs out. *out is the caller's
 * reference (json_decref); NULL on failure. */
int gb_json_parse(const char *text, size_t len, json_t **out, gb_err *err);

/* The value as text: compact ("{"a":1}") or pretty (two-space indentation, one
 * item a line); keys in insertion order; doubles with 17 significant digits, so
 * they read back exactly. Malloc'd, NUL-terminated; NULL when memory runs out or j
 * is NULL. */
char *gb_json_dump(const json_t *j, bool pretty);

/* json_real(v), or json_null() for NaN and infinities. NULL only on ENOMEM. */
json_t *gb_json_real(double v);

/* A JSON string from arbitrary bytes: invalid UTF-8 sequences become U+FFFD, and
 * the text is cut, on a character boundary, to at most max_bytes bytes (0: no
 * limit). jansson refuses invalid UTF-8, and compiler logs or device names are
 * not guaranteed to be valid. NULL only on ENOMEM. */
json_t *gb_json_text(const char *s, size_t max_bytes);

/* Sets obj[key] = value and takes the reference to value, as json_object_set_new,
 * but returns GB_ENOMEM (after dropping value) when value is NULL or the set fails,
 * so a sequence of sets needs one check. */
int gb_json_set(json_t *obj, const char *key, json_t *value);

/* Lookups that tolerate NULL and the wrong type. get and at return borrowed
 * references. gb_json_num reads integers and reals; gb_json_len counts the items
 * of an array or the keys of an object. */
const json_t *gb_json_get(const json_t *obj, const char *key);
const json_t *gb_json_at(const json_t *arr, size_t i);
size_t gb_json_len(const json_t *j);
double gb_json_num(const json_t *j, double fallback);
const char *gb_json_str(const json_t *j, const char *fallback);
bool gb_json_bool(const json_t *j, bool fallback);

/* Appends s as a quoted JSON string. Cache keys are built from this text
 * (base/value.h's canonical form), so its escaping never changes: \" \\ \n \r \t,
 * \u00XX for other control characters, every other byte as it is. */
void gb_json_quote(gb_strbuf *sb, const char *s);

#endif
