#include "base/wire.h"

#include "base/value.h"
#include "base/wire_internal.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- layout ------------------------------------------------------------- */

size_t gb_wire_elem_size(const gb_wire_field *f)
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

int *gb_wire_count_of(const gb_wire_field *f, const void *obj)
{
    return (int *)((char *)obj + f->count);
}

int gb_wire_capacity(const gb_wire_field *f)
{
    return (int)(f->size / gb_wire_elem_size(f));
}

int gb_wire_items(const gb_wire_field *f, const void *obj)
{
    switch (f->arity) {
    case GB_WIRE_ONE:
        return 1;
    case GB_WIRE_FIXED:
        return gb_wire_capacity(f);
    default:
        return *gb_wire_count_of(f, obj);
    }
}

const void *gb_wire_item(const gb_wire_field *f, const void *obj, int i)
{
    const char *member = (const char *)obj + f->offset;
    if (f->arity == GB_WIRE_OWNED) member = *(const char *const *)member;
    return member ? member + (size_t)i * gb_wire_elem_size(f) : NULL;
}

static void *item_mut(const gb_wire_field *f, void *obj, int i)
{
    return (void *)gb_wire_item(f, obj, i);
}

bool *gb_wire_present_flag(const gb_wire_field *f, const void *obj)
{
    return (bool *)((char *)obj + f->present);
}

bool gb_wire_value_is_zero(const gb_wire_field *f, const void *p)
{
    switch (f->kind) {
    case GB_WIRE_DOUBLE: {
        double v = *(const double *)p;
        return v == 0 || !isfinite(v);
    }
    case GB_WIRE_BOOL:
        return !*(const bool *)p;
    case GB_WIRE_CHARS:
        return !*(const char *)p;
    case GB_WIRE_STRING: {
        const char *s = *(const char *const *)p;
        return !s || !*s;
    }
    case GB_WIRE_INT:
    case GB_WIRE_ENUM:
        return *(const int *)p == 0;
    case GB_WIRE_INT64:
    case GB_WIRE_UINT64:
        return *(const int64_t *)p == 0;
    case GB_WIRE_UINT32:
        return *(const uint32_t *)p == 0;
    default:
        return false;
    }
}

/* ---- encoding ----------------------------------------------------------- */

static json_t *encode_struct(const gb_wire_type *t, const void *obj, const void *ctx);

/* A UINT64 with GB_WIRE_U64_TEXT: its value, exactly, for any JSON reader. */
static json_t *encode_u64_text(uint64_t v)
{
    if (v <= INT64_MAX) return json_integer((json_int_t)v);
    char digits[24];
    snprintf(digits, sizeof digits, "%llu", (unsigned long long)v);
    return json_string(digits);
}

static json_t *encode_value(const gb_wire_field *f, const void *p, const void *ctx)
{
    if (f->flags & GB_WIRE_NULL_ZERO && gb_wire_value_is_zero(f, p)) return json_null();
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
        return f->flags & GB_WIRE_U64_TEXT ? encode_u64_text(*(const uint64_t *)p)
                                           : json_integer(bits);
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
        return encode_struct(f->type, p, ctx);
    }
    return NULL;
}

static json_t *encode_array(const gb_wire_field *f, const void *obj, const void *ctx)
{
    json_t *arr = json_array();
    int n = gb_wire_items(f, obj);
    for (int i = 0; arr && i < n; i++) {
        if (json_array_append_new(arr, encode_value(f, gb_wire_item(f, obj, i), ctx))) {
            json_decref(arr);
            return NULL;
        }
    }
    return arr;
}

/* A keyed array: each item as a field of out, named by its key. */
static int encode_keyed(const gb_wire_field *f, const void *obj, const void *ctx, json_t *out)
{
    for (int i = 0; i < gb_wire_items(f, obj); i++) {
        int rc = gb_json_set(out, f->keys->name(i), encode_value(f, gb_wire_item(f, obj, i), ctx));
        if (rc) return rc;
    }
    return GB_OK;
}

bool gb_wire_group_next(const char **group, char part[GB_WIRE_GROUP_PART])
{
    const char *g = *group;
    if (!g || !*g) return false;
    size_t len = strcspn(g, ".");
    size_t kept = len < GB_WIRE_GROUP_PART ? len : GB_WIRE_GROUP_PART - 1; /* checked: fits */
    memcpy(part, g, kept);
    part[kept] = '\0';
    *group = g + len + (g[len] == '.');
    return true;
}

/* The object a field is written into: out, or its group in out (each part made on
 * first use, so a group sits where its first field is). NULL on ENOMEM. */
static json_t *target_of(const gb_wire_field *f, json_t *out)
{
    char part[GB_WIRE_GROUP_PART];
    for (const char *g = f->group; out && gb_wire_group_next(&g, part);) {
        if (!json_object_get(out, part) && gb_json_set(out, part, json_object())) return NULL;
        out = json_object_get(out, part);
    }
    return out;
}

/* A virtual field's value, from .get: written like a member's. */
static int encode_virtual(const gb_wire_field *f, const void *obj, const void *ctx, json_t *out)
{
    gb_wire_value value;
    memset(&value, 0, sizeof value);
    f->get(obj, ctx, &value);
    return gb_json_set(out, f->name, encode_value(f, &value, ctx));
}

static int encode_fields(const gb_wire_type *t, const void *obj, const void *ctx, json_t *out);

static int encode_field(const gb_wire_field *f, const void *obj, const void *ctx, json_t *out)
{
    const void *member = (const char *)obj + f->offset;
    if (f->flags & GB_WIRE_DERIVED || (f->when && !f->when(obj))) return GB_OK;
    if (!(out = target_of(f, out))) return GB_ENOMEM;
    if ((f->flags & GB_WIRE_NULLABLE && !*gb_wire_present_flag(f, obj)) ||
        (f->null_unless && !f->null_unless(obj)))
        return gb_json_set(out, f->name, json_null());
    if (f->get) return encode_virtual(f, obj, ctx, out);
    if (f->flags & GB_WIRE_INLINE_STRUCT) return encode_fields(f->type, member, ctx, out);
    if (f->keys) return encode_keyed(f, obj, ctx, out);
    if (f->arity != GB_WIRE_ONE) return gb_json_set(out, f->name, encode_array(f, obj, ctx));
    if (f->kind == GB_WIRE_STRING && !*(const char *const *)member &&
        !(f->flags & GB_WIRE_NULL_ZERO))
        return GB_OK;
    return gb_json_set(out, f->name, encode_value(f, member, ctx));
}

static int encode_fields(const gb_wire_type *t, const void *obj, const void *ctx, json_t *out)
{
    for (int i = 0; i < t->n_fields; i++) {
        int rc = encode_field(&t->fields[i], obj, ctx, out);
        if (rc) return rc;
    }
    return GB_OK;
}

static json_t *encode_struct(const gb_wire_type *t, const void *obj, const void *ctx)
{
    json_t *out = json_object();
    if (out && encode_fields(t, obj, ctx, out) != GB_OK) {
        json_decref(out);
        return NULL;
    }
    return out;
}

json_t *gb_wire_encode(const gb_wire_type *t, const void *obj)
{
    return encode_struct(t, obj, NULL);
}

int gb_wire_encode_into(const gb_wire_type *t, const void *obj, const void *ctx, json_t *out)
{
    return encode_fields(t, obj, ctx, out);
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
        if (f->get) continue; /* no member */
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
        return memcmp(a, b, gb_wire_elem_size(f)) == 0;
    }
}

static bool equal_field(const gb_wire_field *f, const void *a, const void *b)
{
    if (f->get) return true; /* no member */
    if (f->when) {
        bool in_a = f->when(a), in_b = f->when(b);
        if (in_a != in_b || !in_a) return in_a == in_b; /* not written: nothing to compare */
    }
    if (f->flags & GB_WIRE_NULLABLE) {
        if (*gb_wire_present_flag(f, a) != *gb_wire_present_flag(f, b)) return false;
        if (!*gb_wire_present_flag(f, a)) return true;
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
    size_t elem = gb_wire_elem_size(f);
    if (!f->name || !f->name[0]) return "has no JSON name";
    if (f->kind == GB_WIRE_STRUCT && !f->type) return "is a STRUCT without .type";
    if (f->kind == GB_WIRE_ENUM && !f->enumeration) return "is an ENUM without .enumeration";
    if (f->kind == GB_WIRE_CHARS && (f->arity != GB_WIRE_ONE || f->size < 2))
        return "is CHARS but not a char array of at least 2";
    if (f->kind == GB_WIRE_UINT64 && f->ranged) return "is UINT64 with a range";
    if (f->flags & GB_WIRE_INLINE_STRUCT && (f->kind != GB_WIRE_STRUCT || f->arity != GB_WIRE_ONE))
        return "is inline but not a single STRUCT";
    if (f->get &&
        (f->kind == GB_WIRE_CHARS || f->kind == GB_WIRE_STRUCT || f->arity != GB_WIRE_ONE))
        return "is virtual but of a kind or arity a virtual field cannot be";
    if (f->keys && (f->arity != GB_WIRE_FIXED || gb_wire_capacity(f) > f->keys->count))
        return "has .keys but is not a FIXED array with a key for every item";
    if (f->flags & GB_WIRE_U64_TEXT && f->kind != GB_WIRE_UINT64)
        return "is U64_TEXT but not UINT64";
    switch (f->arity) {
    case GB_WIRE_ONE:
        return f->size == elem ? NULL : "has a size that does not match its kind";
    case GB_WIRE_OWNED:
        if (f->size != sizeof(void *)) return "is OWNED but not a pointer";
        return f->max_items > 0 ? NULL : "is OWNED without .max_items";
    default:
        if (f->size % elem || f->size < elem) return "is an array of another kind";
        return f->max_items <= gb_wire_capacity(f) ? NULL : "has .max_items over its capacity";
    }
}

/* Every part of a dotted group is a name that fits GB_WIRE_GROUP_PART. */
static bool group_fits(const char *group)
{
    for (; group; group++) {
        size_t len = strcspn(group, ".");
        if (len == 0 || len >= GB_WIRE_GROUP_PART) return false;
        group += len;
        if (!*group) return true;
    }
    return true;
}

int gb_wire_check_type(const gb_wire_type *t, gb_err *err)
{
    for (const gb_wire_field *f = t->fields; f < t->fields + t->n_fields; f++) {
        const char *problem =
            group_fits(f->group) ? field_problem(f) : "has a group with an empty or too long part";
        if (problem)
            return gb_err_set(err, GB_EINVAL, "wire type %s: field %s %s", t->name,
                              f->name ? f->name : "(unnamed)", problem);
        if (!f->get && f->offset + f->size > t->size)
            return gb_err_set(err, GB_EINVAL, "wire type %s: field %s is outside the struct",
                              t->name, f->name);
        if (f->kind == GB_WIRE_STRUCT) {
            int rc = gb_wire_check_type(f->type, err);
            if (rc) return rc;
        }
    }
    return GB_OK;
}
