/*
 * Typed lookups for the JSON loader (report/outputs/json_read.h): each checks that the
 * field is there and of its kind, and otherwise says which field of which file.
 */
#include "report/outputs/json_read.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int gb_read_bad(gb_reader *r, const char *where, const char *key, const char *what)
{
    const char *dot = where && key ? "." : "";
    if (!where && !key) return gb_err_set(r->err, GB_EINVAL, "%s: %s", r->file, what);
    return gb_err_set(r->err, GB_EINVAL, "%s: %s%s%s: %s", r->file, where ? where : "", dot,
                      key ? key : "", what);
}

int gb_read_field(gb_reader *r, const json_t *o, const char *where, const char *key,
                  const json_t **out)
{
    *out = json_object_get(o, key);
    return *out ? GB_OK : gb_read_bad(r, where, key, "missing");
}

int gb_read_object(gb_reader *r, const json_t *o, const char *where, const char *key,
                   const json_t **out)
{
    int rc = gb_read_field(r, o, where, key, out);
    if (!rc && !json_is_object(*out)) rc = gb_read_bad(r, where, key, "expected an object");
    return rc;
}

int gb_read_num(gb_reader *r, const json_t *o, const char *where, const char *key,
                gb_read_null null, double *out)
{
    const json_t *v;
    int rc = gb_read_field(r, o, where, key, &v);
    if (rc) return rc;
    if (json_is_number(v))
        *out = json_number_value(v);
    else if (json_is_null(v) && null != GB_READ_REQUIRED)
        *out = null == GB_READ_NULLABLE ? NAN : 0;
    else
        return gb_read_bad(r, where, key, null ? "expected a number or null" : "expected a number");
    return GB_OK;
}

int gb_read_int(gb_reader *r, const json_t *o, const char *where, const char *key, int64_t min,
                int64_t max, int64_t *out)
{
    const json_t *v;
    int rc = gb_read_field(r, o, where, key, &v);
    if (rc) return rc;
    if (!json_is_integer(v)) return gb_read_bad(r, where, key, "expected an integer");
    json_int_t i = json_integer_value(v);
    if (i < min || i > max) return gb_read_bad(r, where, key, "out of range");
    *out = i;
    return GB_OK;
}

int gb_read_bool(gb_reader *r, const json_t *o, const char *where, const char *key, bool *out)
{
    const json_t *v;
    int rc = gb_read_field(r, o, where, key, &v);
    if (rc) return rc;
    if (!json_is_boolean(v)) return gb_read_bad(r, where, key, "expected true or false");
    *out = json_is_true(v);
    return GB_OK;
}

int gb_read_str(gb_reader *r, const json_t *o, const char *where, const char *key,
                gb_read_null null, char **out)
{
    const json_t *v;
    int rc = gb_read_field(r, o, where, key, &v);
    if (rc) return rc;
    *out = NULL;
    if (json_is_null(v) && null == GB_READ_NULLABLE) return GB_OK;
    if (!json_is_string(v))
        return gb_read_bad(r, where, key, null ? "expected a string or null" : "expected a string");
    if (!(*out = strdup(json_string_value(v))))
        return gb_err_set(r->err, GB_ENOMEM, "%s: out of memory", r->file);
    return GB_OK;
}

int gb_read_chars(gb_reader *r, const json_t *o, const char *where, const char *key, char *out,
                  size_t size)
{
    const json_t *v;
    int rc = gb_read_field(r, o, where, key, &v);
    if (rc) return rc;
    if (json_is_null(v)) {
        out[0] = '\0';
        return GB_OK;
    }
    if (!json_is_string(v)) return gb_read_bad(r, where, key, "expected a string or null");
    if (json_string_length(v) >= size) return gb_read_bad(r, where, key, "too long");
    memcpy(out, json_string_value(v), json_string_length(v) + 1);
    return GB_OK;
}

int gb_read_fields(gb_reader *r, const json_t *o, const char *where, const char *key,
                   gb_fields *out)
{
    const json_t *v;
    gb_err e = {0};
    int rc = gb_read_object(r, o, where, key, &v);
    if (!rc) rc = gb_fields_from_json(v, out, &e);
    if (rc == GB_ENOMEM) return gb_err_set(r->err, rc, "%s: out of memory", r->file);
    return rc == GB_EINVAL && e.code ? gb_read_bad(r, where, key, e.msg) : rc;
}
