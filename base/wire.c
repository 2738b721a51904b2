#include "base/wire.h"

#include "base/value.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The most keys a FIELDS object may have unless the field says otherwise. */
#define DEFAULT_MAX_FIELDS 1024

/* ---- layout ------------------------------------------------------------- */

static size_t elem_size(const gb_wire_field *f)
{
    switch (f->kind) {
    case GB_WIRE_INT:
    case GB_WIRE_ENUM:
        return sizeof(int);
    case GB_WIRE_INT64:
        return sizeof(int64_t);
    case GB_WIRE_UINT32:
        return sizeof(uint32_t);
    case GB_WIRE_UINT64:
        return sizeof(uint64_t);
    case GB_WIRE_DOUBLE:
        return sizeof(double);
    case GB_WIRE_BOOL:
        return sizeof(bool);
    case GB_WIRE_CHARS:
        return f->size;
    case GB_WIRE_STRING:
        return sizeof(char *);
    case GB_WIRE_FIELDS:
        return sizeof(gb_fields);
    case GB_WIRE_STRUCT:
        return f->type ? f->type->size : 0;
    }
    return 0;
}

static int *count_of(const gb_wire_field *f, const void *obj)
{
    return (int *)((char *)obj + f->count);
}

static int capacity(const gb_wire_field *f)
{
    return (int)(f->size / elem_size(f));
}

int gb_wire_items(const gb_wire_field *f, const void *obj)
{
    switch (f->arity) {
    case GB_WIRE_ONE:
        return 1;
    case GB_WIRE_FIXED:
        return capacity(f);
    default:
        return *count_of(f, obj);
    }
}

const void *gb_wire_item(const gb_wire_field *f, const void *obj, int i)
{
    const char *member = (const char *)obj + f->offset;
    if (f->arity == GB_WIRE_OWNED) member = *(const char *const *)member;
    return member ? member + (size_t)i * elem_size(f) : NULL;
}

static void *item_mut(const gb_wire_field *f, void *obj, int i)
{
    return (void *)gb_wire_item(f, obj, i);
}

static bool *present_flag(const gb_wire_field *f, const void *obj)
{
    return (bool *)((char *)obj + f->present);
}

/* ---- encoding ----------------------------------------------------------- */

static json_t *encode_struct(const gb_wire_type *t, const void *obj);
static int encode_fields(const gb_wire_type *t, const void *obj, json_t *out);

static json_t *encode_value(const gb_wire_field *f, const void *p)
{
    switch (f->kind) {
    case GB_WIRE_INT:
        return json_integer(*(const int *)p);
    case GB_WIRE_INT64:
        return json_integer(*(const int64_t *)p);
    case GB_WIRE_UINT32:
        return json_integer(*(const uint32_t *)p);
    case GB_WIRE_UINT64: {
        int64_t bits;
        memcpy(&bits, p, sizeof bits);
        return json_integer(bits);
    }
    case GB_WIRE_DOUBLE:
        return gb_json_real(*(const double *)p);
    case GB_WIRE_BOOL:
        return json_boolean(*(const bool *)p);
    case GB_WIRE_ENUM: {
        int v = *(const int *)p;
        const char *name = v >= 0 && v < f->enumeration->count ? f->enumeration->name(v) : NULL;
        return name ? json_string(name) : json_null(); /* null: the reader refuses it */
    }
    case GB_WIRE_CHARS: {
        if (memchr(p, '\0', f->size)) return gb_json_text(p, f->size - 1);
        char *text = strndup(p, f->size); /* a struct's array need not be terminated */
        json_t *j = text ? gb_json_text(text, f->size - 1) : NULL;
        free(text);
        return j;
    }
    case GB_WIRE_STRING: {
        const char *s = *(const char *const *)p;
        return s ? gb_json_text(s, f->max_len ? f->max_len : GB_WIRE_MAX_STRING) : json_null();
    }
    case GB_WIRE_FIELDS:
        return gb_fields_to_json(p);
    case GB_WIRE_STRUCT:
        return encode_struct(f->type, p);
    }
    return NULL;
}

static json_t *encode_array(const gb_wire_field *f, const void *obj)
{
    json_t *arr = json_array();
    int n = gb_wire_items(f, obj);
    for (int i = 0; arr && i < n; i++) {
        if (json_array_append_new(arr, encode_value(f, gb_wire_item(f, obj, i)))) {
            json_decref(arr);
            return NULL;
        }
    }
    return arr;
}

static int encode_field(const gb_wire_field *f, const void *obj, json_t *out)
{
    const void *member = (const char *)obj + f->offset;
    if (f->flags & GB_WIRE_DERIVED || (f->when && !f->when(obj))) return GB_OK;
    if (f->flags & GB_WIRE_NULLABLE && !*present_flag(f, obj))
        return gb_json_set(out, f->name, json_null());
    if (f->flags & GB_WIRE_INLINE_STRUCT) return encode_fields(f->type, member, out);
    if (f->arity != GB_WIRE_ONE) return gb_json_set(out, f->name, encode_array(f, obj));
    if (f->kind == GB_WIRE_STRING && !*(const char *const *)member) return GB_OK;
    return gb_json_set(out, f->name, encode_value(f, member));
}

static int encode_fields(const gb_wire_type *t, const void *obj, json_t *out)
{
    for (int i = 0; i < t->n_fields; i++) {
        int rc = encode_field(&t->fields[i], obj, out);
        if (rc) return rc;
    }
    return GB_OK;
}

static json_t *encode_struct(const gb_wire_type *t, const void *obj)
{
    json_t *out = json_object();
    if (out && encode_fields(t, obj, out) != GB_OK) {
        json_decref(out);
        return NULL;
    }
    return out;
}

json_t *gb_wire_encode(const gb_wire_type *t, const void *obj)
{
    return encode_struct(t, obj);
}

/* ---- decoding ----------------------------------------------------------- */

/* Where the decoder is: "measurement.samples_ms[3]". */
typedef struct reader {
    char path[256];
    size_t len;
    gb_err *err;
} reader;

/* Appends a piece to the path; returns the length to go back to. */
static size_t path_add(reader *r, const char *piece)
{
    size_t was = r->len;
    r->len += gb_strlcpy(r->path + r->len, piece, sizeof r->path - r->len);
    if (r->len >= sizeof r->path) r->len = sizeof r->path - 1; /* cut: it is only a message */
    return was;
}

static size_t path_key(reader *r, const char *name)
{
    size_t was = path_add(r, ".");
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

static int decode_int(reader *r, const gb_wire_field *f, const json_t *v, void *p)
{
    long long lo, hi, x;
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
                                                               : capacity(f);
    int min = f->arity == GB_WIRE_FIXED ? max : f->min_items;
    const gb_wire_field *owner = f->arity == GB_WIRE_FIXED ? NULL : count_owner(t, f);
    if (owner && n != *count_of(f, obj))
        return expected(r, "a list of %d items, as many as %s", *count_of(f, obj), owner->name);
    if (n < 0 || n < min || n > max)
        return min == max ? expected(r, "a list of %d items", max)
                          : expected(r, "a list of %d to %d items", min, max);
    if (f->arity == GB_WIRE_OWNED && n > 0) {
        void *items = calloc((size_t)n, elem_size(f));
        if (!items) return out_of_memory(r);
        *(void **)((char *)obj + f->offset) = items;
    }
    if (f->arity != GB_WIRE_FIXED) *count_of(f, obj) = n;
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

static int decode_field(reader *r, const gb_wire_type *t, const gb_wire_field *f, const json_t *j,
                        void *obj)
{
    void *member = (char *)obj + f->offset;
    if (f->flags & GB_WIRE_DERIVED) return GB_OK;
    if (f->flags & GB_WIRE_INLINE_STRUCT) return decode_members(r, f->type, j, member);
    const json_t *v = json_object_get(j, f->name);
    size_t was = path_key(r, f->name);
    int rc = GB_OK;
    if (f->flags & GB_WIRE_NULLABLE && (!v || json_is_null(v)))
        *present_flag(f, obj) = false;
    else if (!v && (f->flags & GB_WIRE_OPTIONAL || f->when))
        rc = set_default(r, f, obj);
    else if (!v)
        rc = gb_err_set(r->err, GB_EINVAL, "%s: missing", r->path);
    else if (f->arity != GB_WIRE_ONE)
        rc = decode_array(r, t, f, v, obj);
    else
        rc = decode_value(r, f, v, member);
    if (rc == GB_OK && f->flags & GB_WIRE_NULLABLE && v && !json_is_null(v))
        *present_flag(f, obj) = true;
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

/* ---- freeing ------------------------------------------------------------ */

static void free_members(const gb_wire_type *t, void *obj);

static void free_value(const gb_wire_field *f, void *p)
{
    if (f->kind == GB_WIRE_STRING) {
        free(*(char **)p);
        *(char **)p = NULL;
    } else if (f->kind == GB_WIRE_FIELDS) {
        gb_fields_free(p);
    } else if (f->kind == GB_WIRE_STRUCT) {
        free_members(f->type, p);
    }
}

static void free_members(const gb_wire_type *t, void *obj)
{
    for (const gb_wire_field *f = t->fields; f < t->fields + t->n_fields; f++) {
        int n = gb_wire_items(f, obj);
        bool owns =
            f->kind == GB_WIRE_STRING || f->kind == GB_WIRE_FIELDS || f->kind == GB_WIRE_STRUCT;
        for (int i = 0; owns && i < n && gb_wire_item(f, obj, i); i++)
            free_value(f, item_mut(f, obj, i));
        if (f->arity == GB_WIRE_OWNED) {
            void **items = (void **)((char *)obj + f->offset);
            free(*items);
            *items = NULL;
        }
    }
}

void gb_wire_free(const gb_wire_type *t, void *obj)
{
    if (!obj) return;
    free_members(t, obj);
    memset(obj, 0, t->size);
}

/* ---- comparing ---------------------------------------------------------- */

static bool equal_members(const gb_wire_type *t, const void *a, const void *b);

static bool equal_value(const gb_wire_field *f, const void *a, const void *b)
{
    switch (f->kind) {
    case GB_WIRE_DOUBLE: {
        double x = *(const double *)a, y = *(const double *)b;
        return x == y || (isnan(x) && isnan(y));
    }
    case GB_WIRE_BOOL:
        return *(const bool *)a == *(const bool *)b;
    case GB_WIRE_CHARS:
        return strncmp(a, b, f->size) == 0;
    case GB_WIRE_STRING: {
        const char *x = *(const char *const *)a, *y = *(const char *const *)b;
        return x == y || (x && y && strcmp(x, y) == 0);
    }
    case GB_WIRE_FIELDS:
        return gb_fields_equal(a, b);
    case GB_WIRE_STRUCT:
        return equal_members(f->type, a, b);
    default: /* the integers and enums */
        return memcmp(a, b, elem_size(f)) == 0;
    }
}

static bool equal_field(const gb_wire_field *f, const void *a, const void *b)
{
    if (f->when) {
        bool in_a = f->when(a), in_b = f->when(b);
        if (in_a != in_b || !in_a) return in_a == in_b; /* not written: nothing to compare */
    }
    if (f->flags & GB_WIRE_NULLABLE) {
        if (*present_flag(f, a) != *present_flag(f, b)) return false;
        if (!*present_flag(f, a)) return true;
    }
    int n = gb_wire_items(f, a);
    if (n != gb_wire_items(f, b)) return false;
    for (int i = 0; i < n; i++)
        if (!equal_value(f, gb_wire_item(f, a, i), gb_wire_item(f, b, i))) return false;
    return true;
}

static bool equal_members(const gb_wire_type *t, const void *a, const void *b)
{
    for (int i = 0; i < t->n_fields; i++)
        if (!equal_field(&t->fields[i], a, b)) return false;
    return true;
}

bool gb_wire_equal(const gb_wire_type *t, const void *a, const void *b)
{
    return equal_members(t, a, b);
}

/* ---- checking a table --------------------------------------------------- */

static const char *field_problem(const gb_wire_field *f)
{
    size_t elem = elem_size(f);
    if (!f->name || !f->name[0]) return "has no JSON name";
    if (f->kind == GB_WIRE_STRUCT && !f->type) return "is a STRUCT without .type";
    if (f->kind == GB_WIRE_ENUM && !f->enumeration) return "is an ENUM without .enumeration";
    if (f->kind == GB_WIRE_CHARS && (f->arity != GB_WIRE_ONE || f->size < 2))
        return "is CHARS but not a char array of at least 2";
    if (f->kind == GB_WIRE_UINT64 && f->ranged) return "is UINT64 with a range";
    if (f->flags & GB_WIRE_INLINE_STRUCT && (f->kind != GB_WIRE_STRUCT || f->arity != GB_WIRE_ONE))
        return "is inline but not a single STRUCT";
    switch (f->arity) {
    case GB_WIRE_ONE:
        return f->size == elem ? NULL : "has a size that does not match its kind";
    case GB_WIRE_OWNED:
        if (f->size != sizeof(void *)) return "is OWNED but not a pointer";
        return f->max_items > 0 ? NULL : "is OWNED without .max_items";
    default:
        if (f->size % elem || f->size < elem) return "is an array of another kind";
        return f->max_items <= capacity(f) ? NULL : "has .max_items over its capacity";
    }
}

int gb_wire_check_type(const gb_wire_type *t, gb_err *err)
{
    for (const gb_wire_field *f = t->fields; f < t->fields + t->n_fields; f++) {
        const char *problem = field_problem(f);
        if (problem)
            return gb_err_set(err, GB_EINVAL, "wire type %s: field %s %s", t->name,
                              f->name ? f->name : "(unnamed)", problem);
        if (f->offset + f->size > t->size)
            return gb_err_set(err, GB_EINVAL, "wire type %s: field %s is outside the struct",
                              t->name, f->name);
        if (f->kind == GB_WIRE_STRUCT) {
            int rc = gb_wire_check_type(f->type, err);
            if (rc) return rc;
        }
    }
    return GB_OK;
}
