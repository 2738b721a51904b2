/* A finished table's answer for a shape at run time (report/export/export.h): the
 * rule the header's lookup follows (export_c.c writes it as C), here as a call. */
#include "report/export/export.h"

#include <math.h>
#include <string.h>

static bool is_numeric(const gb_export_column *c)
{
    return c->kind == GB_VAL_INT || c->kind == GB_VAL_NUM;
}

/* The asked values of the table's key fields, in the columns' order. */
static int asked_values(const gb_export_table *t, const gb_fields *shape, const gb_value **out,
                        gb_err *err)
{
    for (int k = 0; k < t->n_keys; k++) {
        const gb_export_column *c = &t->keys[k];
        const gb_value *v = gb_fields_get(shape, c->name);
        if (!v)
            return gb_err_set(err, GB_EINVAL, "the shape has no field '%s', a key field of %s",
                              c->name, t->kernel);
        bool fits =
            is_numeric(c) ? v->kind == GB_VAL_INT || v->kind == GB_VAL_NUM : v->kind == c->kind;
        if (!fits)
            return gb_err_set(err, GB_EINVAL, "the shape's '%s' is a %s; %s's entries have a %s",
                              c->name, v->kind == GB_VAL_STR ? "string" : "number or boolean",
                              t->kernel,
                              c->kind == GB_VAL_STR    ? "string"
                              : c->kind == GB_VAL_BOOL ? "boolean"
                                                       : "number");
        out[k] = v;
    }
    return GB_OK;
}

static bool same(const gb_export_column *c, const gb_value *asked, const gb_value *entry)
{
    if (c->kind == GB_VAL_STR) return strcmp(asked->str, entry->str) == 0;
    if (c->kind == GB_VAL_BOOL) return asked->b == entry->b;
    return gb_value_as_number(asked) == gb_value_as_number(entry);
}

/* 2^distance of one numeric field: larger/smaller when both are positive, else
 * 1 + |a - b|; the product over the fields orders the entries as the sum of the
 * logarithms does. */
static double factor(double a, double b)
{
    if (a > 0.0 && b > 0.0) return a > b ? a / b : b / a;
    return 1.0 + fabs(a - b);
}

static bool exact(const gb_export_table *t, const gb_export_row *r, const gb_value *const *asked)
{
    for (int k = 0; k < t->n_keys; k++)
        if (!same(&t->keys[k], asked[k], &r->key[k])) return false;
    return true;
}

/* The entry's distance as a factor, or -1 when a string or boolean differs. */
static double distance(const gb_export_table *t, const gb_export_row *r,
                       const gb_value *const *asked)
{
    double d = 1.0;
    for (int k = 0; k < t->n_keys; k++) {
        const gb_export_column *c = &t->keys[k];
        if (!is_numeric(c) && !same(c, asked[k], &r->key[k])) return -1.0;
        if (is_numeric(c))
            d *= factor(gb_value_as_number(asked[k]), gb_value_as_number(&r->key[k]));
    }
    return d;
}

int gb_export_table_lookup(const gb_export_table *t, const gb_fields *shape, int *out_row,
                           gb_export_match *out_match, gb_err *err)
{
    const gb_value *asked[GB_EXPORT_MAX_KEYS];
    if (!t->finished)
        return gb_err_set(err, GB_EINVAL, "the table of %s is not finished", t->kernel);
    if (t->n_keys > GB_EXPORT_MAX_KEYS)
        return gb_err_set(err, GB_EINVAL, "%s has %d key fields; a lookup takes at most %d",
                          t->kernel, t->n_keys, GB_EXPORT_MAX_KEYS);
    int rc = asked_values(t, shape, asked, err);
    if (rc) return rc;
    *out_row = -1;
    *out_match = GB_EXPORT_DEFAULT;
    double best = 0.0;
    for (int i = 0; i < t->n_rows; i++) {
        if (exact(t, &t->rows[i], asked)) {
            *out_row = i;
            *out_match = GB_EXPORT_EXACT;
            return GB_OK;
        }
        double d = distance(t, &t->rows[i], asked);
        if (d >= 0.0 && (*out_row < 0 || d < best)) *out_row = i, best = d;
    }
    if (*out_row >= 0 && (t->max_distance < 0 || best <= exp2(t->max_distance)))
        *out_match = GB_EXPORT_NEAREST;
    else
        *out_row = -1;
    return GB_OK;
}
