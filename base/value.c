#include "base/value.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

gb_value gb_value_int(int64_t i)
{
    return (gb_value){.kind = GB_VAL_INT, .i = i};
}

gb_value gb_value_num(double num)
{
    if (isfinite(num) && num == floor(num) && fabs(num) < 9007199254740992.0)
        return gb_value_int((int64_t)num);
    return (gb_value){.kind = GB_VAL_NUM, .num = num};
}

gb_value gb_value_bool(bool b)
{
    return (gb_value){.kind = GB_VAL_BOOL, .b = b};
}

int gb_value_str(const char *s, gb_value *out)
{
    *out = (gb_value){.kind = GB_VAL_STR, .str = strdup(s)};
    return out->str ? GB_OK : GB_ENOMEM;
}

int gb_value_copy(const gb_value *src, gb_value *out)
{
    if (src->kind == GB_VAL_STR) return gb_value_str(src->str, out);
    *out = *src;
    return GB_OK;
}

void gb_value_free(gb_value *v)
{
    if (!v) return;
    if (v->kind == GB_VAL_STR) free(v->str);
    v->str = NULL;
}

bool gb_value_equal(const gb_value *a, const gb_value *b)
{
    if (a->kind != b->kind) return false;
    switch (a->kind) {
    case GB_VAL_INT:
        return a->i == b->i;
    case GB_VAL_NUM:
        return a->num == b->num;
    case GB_VAL_STR:
        return strcmp(a->str, b->str) == 0;
    default:
        return a->b == b->b;
    }
}

double gb_value_as_number(const gb_value *v)
{
    switch (v->kind) {
    case GB_VAL_INT:
        return (double)v->i;
    case GB_VAL_NUM:
        return v->num;
    case GB_VAL_BOOL:
        return v->b ? 1.0 : 0.0;
    default:
        return NAN;
    }
}

void gb_value_append_source(gb_strbuf *sb, const gb_value *v)
{
    switch (v->kind) {
    case GB_VAL_INT:
        gb_sb_printf(sb, "%lld", (long long)v->i);
        break;
    case GB_VAL_NUM:
        gb_sb_printf(sb, "%.17g", v->num);
        break;
    case GB_VAL_STR:
        gb_sb_puts(sb, v->str);
        break;
    default:
        gb_sb_puts(sb, v->b ? "true" : "false");
        break;
    }
}

void gb_value_append_canonical(gb_strbuf *sb, const gb_value *v)
{
    if (v->kind == GB_VAL_STR)
        gb_json_quote(sb, v->str);
    else
        gb_value_append_source(sb, v);
}

json_t *gb_value_to_json(const gb_value *v)
{
    switch (v->kind) {
    case GB_VAL_INT:
        return json_integer(v->i);
    case GB_VAL_NUM:
        return gb_json_real(v->num);
    case GB_VAL_STR:
        return gb_json_text(v->str, 0);
    default:
        return json_boolean(v->b);
    }
}

int gb_value_from_json(const json_t *j, gb_value *out)
{
    if (json_is_integer(j)) {
        *out = gb_value_int(json_integer_value(j));
        return GB_OK;
    }
    if (json_is_real(j)) {
        *out = gb_value_num(json_real_value(j));
        return GB_OK;
    }
    if (json_is_boolean(j)) {
        *out = gb_value_bool(json_is_true(j));
        return GB_OK;
    }
    if (json_is_string(j)) return gb_value_str(json_string_value(j), out);
    return GB_EINVAL;
}

/* ---- fields ------------------------------------------------------------- */

static int find(const gb_fields *f, const char *name, bool *found)
{
    int lo = 0, hi = f->n;
    while (lo < hi) {
        int mid = (lo + hi) / 2, c = strcmp(f->names[mid], name);
        if (c == 0) {
            *found = true;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = false;
    return lo;
}

static int insert_at(gb_fields *f, int at, const char *name, const gb_value *v)
{
    char **names = realloc(f->names, (size_t)(f->n + 1) * sizeof *names);
    if (!names) return GB_ENOMEM;
    f->names = names;
    gb_value *values = realloc(f->values, (size_t)(f->n + 1) * sizeof *values);
    if (!values) return GB_ENOMEM;
    f->values = values;
    char *copy = strdup(name);
    gb_value vcopy;
    if (!copy || gb_value_copy(v, &vcopy) != GB_OK) {
        free(copy);
        return GB_ENOMEM;
    }
    memmove(names + at + 1, names + at, (size_t)(f->n - at) * sizeof *names);
    memmove(values + at + 1, values + at, (size_t)(f->n - at) * sizeof *values);
    names[at] = copy;
    values[at] = vcopy;
    f->n++;
    return GB_OK;
}

int gb_fields_set(gb_fields *f, const char *name, const gb_value *v)
{
    bool found;
    int at = find(f, name, &found);
    if (!found) return insert_at(f, at, name, v);
    gb_value copy;
    if (gb_value_copy(v, &copy) != GB_OK) return GB_ENOMEM;
    gb_value_free(&f->values[at]);
    f->values[at] = copy;
    return GB_OK;
}

const gb_value *gb_fields_get(const gb_fields *f, const char *name)
{
    bool found;
    int at = find(f, name, &found);
    return found ? &f->values[at] : NULL;
}

int gb_fields_copy(const gb_fields *src, gb_fields *out)
{
    *out = (gb_fields){0};
    for (int i = 0; i < src->n; i++) {
        if (insert_at(out, i, src->names[i], &src->values[i]) != GB_OK) {
            gb_fields_free(out);
            return GB_ENOMEM;
        }
    }
    return GB_OK;
}

void gb_fields_free(gb_fields *f)
{
    if (!f) return;
    for (int i = 0; i < f->n; i++) {
        free(f->names[i]);
        gb_value_free(&f->values[i]);
    }
    free(f->names);
    free(f->values);
    *f = (gb_fields){0};
}

bool gb_fields_equal(const gb_fields *a, const gb_fields *b)
{
    if (a->n != b->n) return false;
    for (int i = 0; i < a->n; i++)
        if (strcmp(a->names[i], b->names[i]) || !gb_value_equal(&a->values[i], &b->values[i]))
            return false;
    return true;
}

static bool wanted(const char *name, const char *const *only, int n_only)
{
    if (!only) return true;
    for (int i = 0; i < n_only; i++)
        if (strcmp(only[i], name) == 0) return true;
    return false;
}

void gb_fields_append_canonical(gb_strbuf *sb, const gb_fields *f, const char *const *only,
                                int n_only)
{
    bool first = true;
    for (int i = 0; i < f->n; i++) {
        if (!wanted(f->names[i], only, n_only)) continue;
        if (!first) gb_sb_putc(sb, ',');
        first = false;
        gb_sb_printf(sb, "%s=", f->names[i]);
        gb_value_append_canonical(sb, &f->values[i]);
    }
}

json_t *gb_fields_to_json(const gb_fields *f)
{
    json_t *obj = json_object();
    for (int i = 0; obj && i < f->n; i++) {
        if (gb_json_set(obj, f->names[i], gb_value_to_json(&f->values[i])) != GB_OK) {
            json_decref(obj);
            return NULL;
        }
    }
    return obj;
}

int gb_fields_from_json(const json_t *obj, gb_fields *out, gb_err *err)
{
    *out = (gb_fields){0};
    if (!json_is_object(obj)) return gb_err_set(err, GB_EINVAL, "expected a JSON object of fields");
    const char *name;
    json_t *item;
    json_object_foreach((json_t *)obj, name, item)
    {
        gb_value v;
        int rc = gb_value_from_json(item, &v);
        if (rc == GB_EINVAL) {
            gb_fields_free(out);
            return gb_err_set(err, GB_EINVAL, "field '%s' is not a number, string or boolean",
                              name);
        }
        if (rc == GB_OK) rc = gb_fields_set(out, name, &v);
        gb_value_free(&v);
        if (rc) {
            gb_fields_free(out);
            return gb_err_set(err, rc, "out of memory");
        }
    }
    return GB_OK;
}
