/* Reading JSON into a struct by its wire type (base/wire.h): every field checked,
 * every error naming the field's path. */
#include "base/wire.h"

#include "base/value.h"
#include "base/wire_internal.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The most keys a FIELDS object may have unless the field says otherwise. */
#define DEFAULT_MAX_FIELDS 1024

static void *item_mut(const gb_wire_field *f, void *obj, int i)
{
    return (void *)gb_wire_item(f, obj, i);
}

/* Where the decoder is: "measurement.samples_ms[3]". */
typedef struct reader {
    char path[256];
    size_t len;
    gb_err *err;
    void *ctx; /* for virtual fields' .set */
} reader;

/* Appends a piece to the path; returns the length to go back to. */
static size_t path_add(reader *r, const char *piece)
{
    size_t was = r->len;
    r->len += gb_strlcpy(r->path + r->len, piece, sizeof r->path - r->len);
    if (r->len >= sizeof r->path) r->len = sizeof r->path - 1; /* cut: it is only a message */
    return was;
}

/* ".name", or name alone at the start of a path (a view of a whole document). */
static size_t path_key(reader *r, const char *name)
{
    size_t was = r->len ? path_add(r, ".") : r->len;
    path_add(r, name);
    return was;
}

static size_t path_index(reader *r, int i)
{
    char piece[16];
    snprintf(piece, sizeof piece, "[%d]", i);
    return path_add(r, piece);
}

static void path_pop(reader *r, size_t was)
{
    r->len = was;
    r->path[was] = '\0';
}

static int expected(reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int expected(reader *r, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return gb_err_set(r->err, GB_EINVAL, "%s: expected %s", r->path, what);
}

static int out_of_memory(reader *r)
{
    return gb_err_set(r->err, GB_ENOMEM, "%s: out of memory", r->path);
}

/* The integer bounds of a field: its C type's, narrowed by its range. */
static void int_bounds(const gb_wire_field *f, long long *lo, long long *hi)
{
    *lo = f->kind == GB_WIRE_INT ? INT_MIN : f->kind == GB_WIRE_UINT32 ? 0 : LLONG_MIN;
    *hi = f->kind == GB_WIRE_INT ? INT_MAX : f->kind == GB_WIRE_UINT32 ? UINT32_MAX : LLONG_MAX;
    if (!f->ranged) return;
    if (f->min > (double)*lo) *lo = (long long)ceil(f->min);
    if (f->max < (double)*hi) *hi = (long long)floor(f->max);
}

/* An integer, or a real that is one (older writers wrote counts as numbers). */
static bool integer_of(const json_t *v, long long *out)
{
    if (json_is_integer(v)) {
        *out = json_integer_value(v);
        return true;
    }
    double d = json_is_real(v) ? json_real_value(v) : NAN;
    if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0) || d != floor(d)) return false;
    *out = (long long)d;
    return true;
}

/* GB_WIRE_U64_TEXT: an integer >= 0, or (past INT64_MAX) its decimal digits. */
static int decode_u64_text(reader *r, const json_t *v, void *p)
{
    const char *s = json_string_value(v);
    uint64_t u = 0;
    bool ok = json_is_integer(v) && json_integer_value(v) >= 0;
    if (ok) {
        u = (uint64_t)json_integer_value(v);
    } else if (s && *s >= '0' && *s <= '9') {
        char *end;
        errno = 0;
        u = strtoull(s, &end, 10);
        ok = *end == '\0' && errno == 0;
    }
    if (!ok) return expected(r, "an integer >= 0, or its decimal digits");
    memcpy(p, &u, sizeof u);
    return GB_OK;
}

static int decode_int(reader *r, const gb_wire_field *f, const json_t *v, void *p)
{
    long long lo, hi, x;
    if (f->kind == GB_WIRE_UINT64 && f->flags & GB_WIRE_U64_TEXT) return decode_u64_text(r, v, p);
    if (f->kind == GB_WIRE_UINT64) {
        if (!json_is_integer(v)) return expected(r, "an integer");
        int64_t bits = json_integer_value(v);
        memcpy(p, &bits, sizeof bits);
        return GB_OK;
    }
    int_bounds(f, &lo, &hi);
    if (!integer_of(v, &x) || x < lo || x > hi)
        return expected(r, "an integer from %lld to %lld", lo, hi);
    if (f->kind == GB_WIRE_INT)
        *(int *)p = (int)x;
    else if (f->kind == GB_WIRE_UINT32)
        *(uint32_t *)p = (uint32_t)x;
    else
        *(int64_t *)p = (int64_t)x;
    return GB_OK;
}

static int number_expected(reader *r, const gb_wire_field *f)
{
    const char *or_null = f->flags & GB_WIRE_NULL_NAN ? " or null" : "";
    if (!f->ranged) return expected(r, "a number%s", or_null);
    if (isinf(f->max)) return expected(r, "a number >= %.17g%s", f->min, or_null);
    if (isinf(f->min)) return expected(r, "a number <= %.17g%s", f->max, or_null);
    return expected(r, "a number from %.17g to %.17g%s", f->min, f->max, or_null);
}

static int decode_double(reader *r, const gb_wire_field *f, const json_t *v, double *p)
{
    if (json_is_null(v) && f->flags & GB_WIRE_NULL_NAN) {
        *p = NAN;
        return GB_OK;
    }
    if (!json_is_number(v)) return number_expected(r, f);
    double d = json_number_value(v);
    if (f->ranged && !(d >= f->min && d <= f->max)) return number_expected(r, f);
    *p = d;
    return GB_OK;
}

static int decode_enum(reader *r, const gb_wire_field *f, const json_t *v, int *p)
{
    const gb_wire_enum *e = f->enumeration;
    const char *s = json_string_value(v);
    for (int i = 0; s && i < e->count; i++) {
        if (e->name(i) && strcmp(s, e->name(i)) == 0) {
            *p = i;
            return GB_OK;
        }
    }
    char names[256] = "";
    for (int i = 0, at = 0; i < e->count && at < (int)sizeof names; i++)
        if (e->name(i))
            at +=
                snprintf(names + at, sizeof names - (size_t)at, "%s%s", at ? ", " : "", e->name(i));
    return expected(r, "one of %s", names);
}

/* A string with no NUL inside and at most max bytes. */
static const char *string_of(const json_t *v, size_t max)
{
    const char *s = json_string_value(v);
    size_t n = s ? json_string_length(v) : 0;
    return s && n <= max && !memchr(s, '\0', n) ? s : NULL;
}

static int decode_fields_kind(reader *r, const gb_wire_field *f, const json_t *v, gb_fields *p)
{
    int max = f->max_items ? f->max_items : DEFAULT_MAX_FIELDS;
    if (!json_is_object(v) || (int)json_object_size(v) > max)
        return expected(r, "an object of at most %d fields", max);
    const char *name;
    json_t *item;
    json_object_foreach((json_t *)v, name, item)
    {
        gb_value value;
        int rc = gb_value_from_json(item, &value);
        if (rc == GB_EINVAL) {
            size_t was = path_key(r, name);
            rc = expected(r, "a number, string or boolean");
            path_pop(r, was);
            return rc;
        }
        if (rc == GB_OK) rc = gb_fields_set(p, name, &value);
        gb_value_free(&value);
        if (rc) return out_of_memory(r);
    }
    return GB_OK;
}

static int decode_struct(reader *r, const gb_wire_type *t, const json_t *j, void *obj);

static int decode_value(reader *r, const gb_wire_field *f, const json_t *v, void *p)
{
    const char *s;
    if (json_is_null(v) && f->flags & GB_WIRE_NULL_ZERO && f->kind != GB_WIRE_STRUCT &&
        f->kind != GB_WIRE_FIELDS) {
        memset(p, 0, gb_wire_elem_size(f)); /* zero, "", NULL */
        return GB_OK;
    }
    switch (f->kind) {
    case GB_WIRE_INT:
    case GB_WIRE_INT64:
    case GB_WIRE_UINT32:
    case GB_WIRE_UINT64:
        return decode_int(r, f, v, p);
    case GB_WIRE_DOUBLE:
        return decode_double(r, f, v, p);
    case GB_WIRE_BOOL:
        if (!json_is_boolean(v)) return expected(r, "true or false");
        *(bool *)p = json_is_true(v);
        return GB_OK;
    case GB_WIRE_ENUM:
        return decode_enum(r, f, v, p);
    case GB_WIRE_CHARS:
        if (!(s = string_of(v, f->size - 1)))
            return expected(r, "a string of at most %zu bytes", f->size - 1);
        memcpy(p, s, strlen(s) + 1);
        return GB_OK;
    case GB_WIRE_STRING: {
        size_t max = f->max_len ? f->max_len : GB_WIRE_MAX_STRING;
        if (!(s = string_of(v, max))) return expected(r, "a string of at most %zu bytes", max);
        return (*(char **)p = strdup(s)) ? GB_OK : out_of_memory(r);
    }
    case GB_WIRE_FIELDS:
        return decode_fields_kind(r, f, v, p);
    case GB_WIRE_STRUCT:
        return decode_struct(r, f->type, v, p);
    }
    return expected(r, "a known kind");
}

/* The earlier array field that shares f's count, if any: it set the count. */
static const gb_wire_field *count_owner(const gb_wire_type *t, const gb_wire_field *f)
{
    for (const gb_wire_field *g = t->fields; g < f; g++)
        if (g->arity >= GB_WIRE_INLINE && g->count == f->count) return g;
    return NULL;
}

static int decode_array(reader *r, const gb_wire_type *t, const gb_wire_field *f, const json_t *v,
                        void *obj)
{
    int n = json_is_array(v) ? (int)json_array_size(v) : -1;
    int max = f->arity == GB_WIRE_OWNED                        ? f->max_items
              : f->arity == GB_WIRE_INLINE && f->max_items > 0 ? f->max_items
                                                               : gb_wire_capacity(f);
    int min = f->arity == GB_WIRE_FIXED ? max : f->min_items;
    const gb_wire_field *owner = f->arity == GB_WIRE_FIXED ? NULL : count_owner(t, f);
    bool fits = n >= 0 && n >= min && n <= max && (!owner || n == *gb_wire_count_of(f, obj));
    if (!fits && f->expect) return expected(r, "%s", f->expect);
    if (owner && n != *gb_wire_count_of(f, obj))
        return expected(r, "a list of %d items, as many as %s", *gb_wire_count_of(f, obj),
                        owner->name);
    if (!fits)
        return min == max ? expected(r, "a list of %d items", max)
                          : expected(r, "a list of %d to %d items", min, max);
    if (f->arity == GB_WIRE_OWNED && n > 0) {
        void *items = calloc((size_t)n, gb_wire_elem_size(f));
        if (!items) return out_of_memory(r);
        *(void **)((char *)obj + f->offset) = items;
    }
    if (f->arity != GB_WIRE_FIXED) *gb_wire_count_of(f, obj) = n;
    for (int i = 0; i < n; i++) {
        size_t was = path_index(r, i);
        int rc = decode_value(r, f, json_array_get(v, (size_t)i), item_mut(f, obj, i));
        path_pop(r, was);
        if (rc) return rc;
    }
    return GB_OK;
}

static int set_default(reader *r, const gb_wire_field *f, void *obj);

static void set_struct_defaults(reader *r, const gb_wire_type *t, void *obj)
{
    for (int i = 0; i < t->n_fields; i++)
        set_default(r, &t->fields[i], obj);
}

/* What an absent field reads as. */
static int set_default(reader *r, const gb_wire_field *f, void *obj)
{
    void *p = (char *)obj + f->offset;
    if (f->arity != GB_WIRE_ONE || f->flags & GB_WIRE_DERIVED) return GB_OK; /* empty, zero */
    switch (f->kind) {
    case GB_WIRE_INT:
    case GB_WIRE_ENUM:
        *(int *)p = (int)f->dflt;
        return GB_OK;
    case GB_WIRE_INT64:
        *(int64_t *)p = (int64_t)f->dflt;
        return GB_OK;
    case GB_WIRE_UINT32:
        *(uint32_t *)p = (uint32_t)f->dflt;
        return GB_OK;
    case GB_WIRE_UINT64:
        *(uint64_t *)p = (uint64_t)f->dflt;
        return GB_OK;
    case GB_WIRE_DOUBLE:
        *(double *)p = f->dflt;
        return GB_OK;
    case GB_WIRE_BOOL:
        *(bool *)p = f->dflt != 0;
        return GB_OK;
    case GB_WIRE_CHARS:
        gb_strlcpy(p, f->dflt_str ? f->dflt_str : "", f->size);
        return GB_OK;
    case GB_WIRE_STRING:
        if (f->dflt_str && !(*(char **)p = strdup(f->dflt_str))) return out_of_memory(r);
        return GB_OK;
    case GB_WIRE_STRUCT:
        set_struct_defaults(r, f->type, p);
        return GB_OK;
    default:
        return GB_OK;
    }
}

static int decode_field(reader *r, const gb_wire_type *t, const gb_wire_field *f, const json_t *j,
                        void *obj);

static int decode_members(reader *r, const gb_wire_type *t, const json_t *j, void *obj)
{
    for (int i = 0; i < t->n_fields; i++) {
        int rc = decode_field(r, t, &t->fields[i], j, obj);
        if (rc) return rc;
    }
    return t->finish ? t->finish(obj, r->path, r->err) : GB_OK;
}

/* The object that holds f in j: j itself, or f's group in it (*out NULL when the
 * group is absent). A group that is not an object is an error. */
static int holder_of(reader *r, const gb_wire_field *f, const json_t *j, const json_t **out)
{
    char part[GB_WIRE_GROUP_PART];
    size_t was = r->len;
    int rc = GB_OK;
    *out = j;
    for (const char *g = f->group; rc == GB_OK && *out && gb_wire_group_next(&g, part);) {
        path_key(r, part);
        *out = json_object_get(*out, part);
        if (*out && !json_is_object(*out)) rc = expected(r, "an object");
    }
    path_pop(r, was);
    return rc;
}

/* A keyed array: each item from the field of holder named by its key. */
static int decode_keyed(reader *r, const gb_wire_field *f, const json_t *holder, void *obj)
{
    int rc = GB_OK;
    for (int i = 0; rc == GB_OK && i < gb_wire_items(f, obj); i++) {
        const json_t *v = json_object_get(holder, f->keys->name(i));
        size_t was = path_key(r, f->keys->name(i));
        if (v)
            rc = decode_value(r, f, v, item_mut(f, obj, i));
        else if (!(f->flags & GB_WIRE_OPTIONAL))
            rc = gb_err_set(r->err, GB_EINVAL, "%s: missing", r->path);
        path_pop(r, was);
    }
    return rc;
}

/* A virtual field: the value read goes to its .set. */
static int decode_virtual(reader *r, const gb_wire_field *f, const json_t *v, void *obj)
{
    gb_wire_value value;
    memset(&value, 0, sizeof value);
    int rc = decode_value(r, f, v, &value);
    if (rc == GB_OK) return f->set(obj, r->ctx, &value, r->path, r->err);
    if (f->kind == GB_WIRE_FIELDS) gb_fields_free(&value.fields); /* what it read before failing */
    return rc;
}

/* A field whose value v is there. */
static int decode_present(reader *r, const gb_wire_type *t, const gb_wire_field *f, const json_t *v,
                          void *obj)
{
    if (f->flags & GB_WIRE_NULLABLE && json_is_null(v)) {
        *gb_wire_present_flag(f, obj) = false;
        return GB_OK;
    }
    if (f->null_unless && json_is_null(v)) return set_default(r, f, obj);
    if (f->get) return decode_virtual(r, f, v, obj);
    int rc = f->arity != GB_WIRE_ONE ? decode_array(r, t, f, v, obj)
                                     : decode_value(r, f, v, (char *)obj + f->offset);
    if (rc == GB_OK && f->flags & GB_WIRE_NULLABLE) *gb_wire_present_flag(f, obj) = true;
    return rc;
}

static int decode_field(reader *r, const gb_wire_type *t, const gb_wire_field *f, const json_t *j,
                        void *obj)
{
    if (f->flags & (GB_WIRE_DERIVED | GB_WIRE_WRITE_ONLY)) return GB_OK;
    if (f->get && !f->set) return GB_OK;
    if (f->flags & GB_WIRE_INLINE_STRUCT)
        return decode_members(r, f->type, j, (char *)obj + f->offset);
    const json_t *holder;
    int rc = holder_of(r, f, j, &holder);
    if (rc) return rc;
    size_t was = f->group ? path_key(r, f->group) : r->len;
    const json_t *v = f->keys ? holder : json_object_get(holder, f->name);
    if (!f->keys) path_key(r, f->name);
    if (v && f->keys)
        rc = decode_keyed(r, f, v, obj);
    else if (v)
        rc = decode_present(r, t, f, v, obj);
    else if (f->flags & GB_WIRE_NULLABLE)
        *gb_wire_present_flag(f, obj) = false;
    else if (f->flags & GB_WIRE_OPTIONAL || f->when)
        rc = f->get ? GB_OK : set_default(r, f, obj);
    else
        rc = gb_err_set(r->err, GB_EINVAL, "%s: missing", r->path);
    path_pop(r, was);
    return rc;
}

static int decode_struct(reader *r, const gb_wire_type *t, const json_t *j, void *obj)
{
    if (!json_is_object(j)) return expected(r, "an object");
    return decode_members(r, t, j, obj);
}

int gb_wire_decode(const gb_wire_type *t, const json_t *j, void *obj, gb_err *err)
{
    reader r = {.err = err};
    gb_strlcpy(r.path, t->name, sizeof r.path);
    r.len = strlen(r.path);
    memset(obj, 0, t->size);
    int rc = decode_struct(&r, t, j, obj);
    if (rc) gb_wire_free(t, obj);
    return rc;
}

int gb_wire_read(const gb_wire_type *t, const json_t *j, void *obj, void *ctx, const char *path,
                 gb_err *err)
{
    reader r = {.err = err, .ctx = ctx};
    gb_strlcpy(r.path, path, sizeof r.path);
    r.len = strlen(r.path);
    return decode_struct(&r, t, j, obj);
}
