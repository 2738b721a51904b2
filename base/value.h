/*
 * Values of tuning parameters and shape fields, and named lists of them.
 *
 * A script's parameters and shape fields are integers, other numbers, strings or
 * booleans. gb_fields keeps a list of (name, value) pairs sorted by name: the sorted
 * order is the canonical order, used for cache keys ("BK=8,BM=64,...") and for the
 * enumeration order of a configuration space.
 */
#ifndef GB_BASE_VALUE_H
#define GB_BASE_VALUE_H

#include "base/error.h"
#include "base/json.h"
#include "base/strbuf.h"

#include <stdbool.h>
#include <stdint.h>

typedef enum gb_value_kind { GB_VAL_INT, GB_VAL_NUM, GB_VAL_STR, GB_VAL_BOOL } gb_value_kind;

typedef struct gb_value {
    gb_value_kind kind;
    int64_t i;  /* GB_VAL_INT */
    double num; /* GB_VAL_NUM */
    char *str;  /* GB_VAL_STR, owned */
    bool b;     /* GB_VAL_BOOL */
} gb_value;

gb_value gb_value_int(int64_t i);
gb_value gb_value_num(double num); /* integral doubles become GB_VAL_INT */
gb_value gb_value_bool(bool b);
/* Copies s; GB_ENOMEM when the copy fails. */
int gb_value_str(const char *s, gb_value *out);

int gb_value_copy(const gb_value *src, gb_value *out);
void gb_value_free(gb_value *v);
bool gb_value_equal(const gb_value *a, const gb_value *b);
/* The value as a double (strings: NaN, booleans: 0/1). */
double gb_value_as_number(const gb_value *v);

/* Appends the value as source text: 64, 0.5, true, or the string as it is. This is
 * what ${P} in an entry expression and -DP=value become. */
void gb_value_append_source(gb_strbuf *sb, const gb_value *v);
/* Appends the value unambiguously: strings quoted as JSON strings. */
void gb_value_append_canonical(gb_strbuf *sb, const gb_value *v);

/* The value as JSON: an integer, a real (null when not finite), a string or a
 * boolean; NULL on ENOMEM. */
json_t *gb_value_to_json(const gb_value *v);
/* Numbers, strings and booleans; GB_EINVAL for anything else, GB_ENOMEM. */
int gb_value_from_json(const json_t *j, gb_value *out);

/* A list of named values, kept sorted by name; names are unique. */
typedef struct gb_fields {
    int n;
    char **names;
    gb_value *values;
} gb_fields;

/* Inserts or replaces name (copied) with a copy of v. */
int gb_fields_set(gb_fields *f, const char *name, const gb_value *v);
const gb_value *gb_fields_get(const gb_fields *f, const char *name);
int gb_fields_copy(const gb_fields *src, gb_fields *out);
void gb_fields_free(gb_fields *f);
bool gb_fields_equal(const gb_fields *a, const gb_fields *b);

/* "K=1024,M=1024,N=1024"; with only != NULL, just the fields named there (in the
 * canonical order); a named field that is missing is skipped. */
void gb_fields_append_canonical(gb_strbuf *sb, const gb_fields *f, const char *const *only,
                                int n_only);
/* The fields as a JSON object (values as JSON numbers, strings, booleans), in
 * the canonical order; NULL on ENOMEM. */
json_t *gb_fields_to_json(const gb_fields *f);
/* An object of numbers, strings and booleans; GB_EINVAL naming the first field
 * that is something else. */
int gb_fields_from_json(const json_t *obj, gb_fields *out, gb_err *err);

#endif
