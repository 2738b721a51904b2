/* The model of an exported table: rows, typed columns, the default, the hash. */
#include "cache/key.h"
#include "report/export/export.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_WHEN INT64_C(253402300800) /* the year 10000, in unix seconds */

int gb_export_table_init(gb_export_table *t, const char *kernel, const char *device,
                         const char *source, gb_err *err)
{
    memset(t, 0, sizeof *t);
    t->kernel = strdup(kernel ? kernel : "");
    t->device = strdup(device ? device : "");
    t->source = strdup(source ? source : "");
    t->max_distance = -1;
    if (t->kernel && t->device && t->source) return GB_OK;
    gb_export_table_free(t);
    return gb_err_set(err, GB_ENOMEM, "out of memory");
}

static void free_values(gb_value *v, int n)
{
    for (int i = 0; v && i < n; i++)
        gb_value_free(&v[i]);
    free(v);
}

static void free_columns(gb_export_column *c, int n)
{
    for (int i = 0; c && i < n; i++)
        free(c[i].name);
    free(c);
}

static void free_row(gb_export_row *r, int n_keys, int n_params)
{
    free_values(r->key, n_keys);
    free_values(r->config, n_params);
    free(r->engine);
    free(r->kernel_fp);
}

void gb_export_table_free(gb_export_table *t)
{
    if (!t) return;
    for (int i = 0; i < t->n_rows; i++)
        free_row(&t->rows[i], t->n_keys, t->n_params);
    free(t->rows);
    free_columns(t->keys, t->n_keys);
    free_columns(t->params, t->n_params);
    free_values(t->configs, t->n_configs * t->n_params);
    free(t->kernel);
    free(t->device);
    free(t->source);
    free(t->prefix);
    free(t->note);
    memset(t, 0, sizeof *t);
}

/* ---- adding rows -------------------------------------------------------- */

static int set_columns(gb_export_column **out, int *out_n, const gb_fields *f)
{
    gb_export_column *c = calloc((size_t)(f->n ? f->n : 1), sizeof *c);
    if (!c) return GB_ENOMEM;
    for (int i = 0; i < f->n; i++) {
        c[i].kind = f->values[i].kind;
        if (!(c[i].name = strdup(f->names[i]))) {
            free_columns(c, f->n);
            return GB_ENOMEM;
        }
    }
    *out = c;
    *out_n = f->n;
    return GB_OK;
}

static void append_names(gb_strbuf *sb, const gb_export_column *c, int n)
{
    for (int i = 0; i < n; i++)
        gb_sb_printf(sb, "%s%s", i ? "," : "", c[i].name);
    if (!n) gb_sb_puts(sb, "(none)");
}

/* The row's fields must be the columns' (same names; gb_fields keeps them sorted, as
 * the columns are) with kinds that fit: INT and NUM share a column. */
static int check_fields(const gb_export_table *t, const char *what, const gb_export_column *c,
                        int n, const gb_fields *f, const gb_fields *shape, gb_err *err)
{
    bool same = f->n == n;
    for (int i = 0; same && i < n; i++)
        same = !strcmp(c[i].name, f->names[i]);
    gb_strbuf sb = GB_STRBUF_INIT;
    int rc = GB_OK;
    gb_fields_append_canonical(&sb, shape, NULL, 0);
    for (int i = 0; same && i < n && rc == GB_OK; i++) {
        const gb_value *v = &f->values[i];
        bool numeric = v->kind == GB_VAL_INT || v->kind == GB_VAL_NUM;
        bool column_numeric = c[i].kind == GB_VAL_INT || c[i].kind == GB_VAL_NUM;
        if (v->kind == GB_VAL_NUM && !isfinite(v->num))
            rc = gb_err_set(err, GB_EINVAL, "kernel %s, shape %s: %s %s is not a finite number",
                            t->kernel, gb_sb_str(&sb), what, c[i].name);
        else if (v->kind != c[i].kind && !(numeric && column_numeric))
            rc = gb_err_set(err, GB_EINVAL,
                            "kernel %s, shape %s: %s %s is a %s here and a %s in other entries",
                            t->kernel, gb_sb_str(&sb), what, c[i].name,
                            numeric                 ? "number"
                            : v->kind == GB_VAL_STR ? "string"
                                                    : "boolean",
                            column_numeric            ? "number"
                            : c[i].kind == GB_VAL_STR ? "string"
                                                      : "boolean");
    }
    if (!same) {
        gb_strbuf names = GB_STRBUF_INIT;
        append_names(&names, c, n);
        rc = gb_err_set(err, GB_EINVAL,
                        "kernel %s, shape %s: its %s names differ from the other entries' (%s)",
                        t->kernel, gb_sb_str(&sb), what, gb_sb_str(&names));
        gb_sb_free(&names);
    }
    gb_sb_free(&sb);
    return rc;
}

static void widen_columns(gb_export_column *c, const gb_fields *f)
{
    for (int i = 0; i < f->n; i++)
        if (c[i].kind == GB_VAL_INT && f->values[i].kind == GB_VAL_NUM) c[i].kind = GB_VAL_NUM;
}

static int copy_values(const gb_fields *f, gb_value **out)
{
    gb_value *v = calloc((size_t)(f->n ? f->n : 1), sizeof *v);
    if (!v) return GB_ENOMEM;
    for (int i = 0; i < f->n; i++)
        if (gb_value_copy(&f->values[i], &v[i])) {
            free_values(v, i);
            return GB_ENOMEM;
        }
    *out = v;
    return GB_OK;
}

static int check_row(const gb_export_table *t, const gb_fields *shape, const gb_fields *config,
                     double median_ms, gb_err *err)
{
    int rc = check_fields(t, "key field", t->keys, t->n_keys, shape, shape, err);
    if (!rc) rc = check_fields(t, "parameter", t->params, t->n_params, config, shape, err);
    if (!rc && !(isfinite(median_ms) && median_ms > 0)) {
        gb_strbuf sb = GB_STRBUF_INIT;
        gb_fields_append_canonical(&sb, shape, NULL, 0);
        rc = gb_err_set(err, GB_EINVAL, "kernel %s, shape %s: no valid median time (%g ms)",
                        t->kernel, gb_sb_str(&sb), median_ms);
        gb_sb_free(&sb);
    }
    return rc;
}

int gb_export_table_add(gb_export_table *t, const gb_fields *shape, const gb_fields *config,
                        double median_ms, int64_t when, const char *engine, const char *kernel_fp,
                        gb_err *err)
{
    if (t->n_rows == 0 && !t->keys) {
        if (set_columns(&t->keys, &t->n_keys, shape) ||
            set_columns(&t->params, &t->n_params, config))
            return gb_err_set(err, GB_ENOMEM, "out of memory");
    }
    int rc = check_row(t, shape, config, median_ms, err);
    if (rc) return rc;
    gb_export_row *grown = realloc(t->rows, (size_t)(t->n_rows + 1) * sizeof *grown);
    if (!grown) return gb_err_set(err, GB_ENOMEM, "out of memory");
    t->rows = grown;
    /* A time no calendar can show (a record from a broken clock or another tool) is
     * kept as unknown rather than passed to gmtime. */
    gb_export_row r = {.median_ms = median_ms, .when = when >= 0 && when < MAX_WHEN ? when : 0};
    r.engine = strdup(engine ? engine : "");
    r.kernel_fp = strdup(kernel_fp ? kernel_fp : "");
    if (!r.engine || !r.kernel_fp || copy_values(shape, &r.key) || copy_values(config, &r.config)) {
        free_row(&r, r.key ? t->n_keys : 0, r.config ? t->n_params : 0);
        return gb_err_set(err, GB_ENOMEM, "out of memory");
    }
    widen_columns(t->keys, shape);
    widen_columns(t->params, config);
    t->rows[t->n_rows++] = r;
    return GB_OK;
}

/* ---- names -------------------------------------------------------------- */

/* C11 and C++17 keywords, and macros of the standard headers the generated header
 * includes or a consumer is likely to: a field named after one would not compile. */
static const char *const reserved[] = {
    "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break",
    "case", "catch", "char", "char16_t", "char32_t", "class", "compl", "const", "const_cast",
    "constexpr", "continue", "decltype", "default", "delete", "do", "double", "dynamic_cast",
    "else", "enum", "explicit", "export", "extern", "false", "float", "for", "friend", "goto", "if",
    "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq", "nullptr",
    "operator", "or", "or_eq", "private", "protected", "public", "register", "reinterpret_cast",
    "restrict", "return", "short", "signed", "sizeof", "static", "static_assert", "static_cast",
    "struct", "switch", "template", "this", "thread_local", "throw", "true", "try", "typedef",
    "typeid", "typename", "union", "unsigned", "using", "virtual", "void", "volatile", "wchar_t",
    "while", "xor", "xor_eq", "NULL", "EOF", "errno", "assert", "offsetof", "complex", "imaginary",
    "noreturn",
    /* the generated functions' own locals and parameters */
    "tuned_e_", "tuned_i_", "tuned_d_", "tuned_best_", "tuned_best_d_", "tuned_exact_",
    "tuned_match_"};

int gb_export_check_name(const char *name, const char *what, gb_err *err)
{
    bool ok = name && (isalpha((unsigned char)name[0]) || name[0] == '_');
    for (const char *p = name; ok && *p; p++)
        ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
             *p == '_';
    if (!ok)
        return gb_err_set(err, GB_EINVAL,
                          "%s '%s' is not a C identifier (letters, digits and _, not starting "
                          "with a digit)",
                          what, name ? name : "");
    if (name[0] == '_' && (name[1] == '_' || isupper((unsigned char)name[1])))
        return gb_err_set(err, GB_EINVAL,
                          "%s '%s' is reserved in C and C++ (it starts with __ or _ and a "
                          "capital)",
                          what, name);
    for (size_t i = 0; i < sizeof reserved / sizeof *reserved; i++)
        if (!strcmp(name, reserved[i]))
            return gb_err_set(err, GB_EINVAL, "%s '%s' is a C or C++ keyword or reserved name",
                              what, name);
    return GB_OK;
}

static int check_names(gb_export_table *t, const char *prefix, gb_err *err)
{
    int rc = gb_export_check_name(prefix, "the prefix", err);
    if (rc && !strcmp(prefix, t->kernel))
        return gb_err_set(err, GB_EINVAL,
                          "kernel name '%s' cannot name C functions and macros: give a C "
                          "identifier with --prefix NAME",
                          t->kernel);
    for (int i = 0; !rc && i < t->n_keys; i++)
        rc = gb_export_check_name(t->keys[i].name, "key field", err);
    for (int i = 0; !rc && i < t->n_params; i++) {
        rc = gb_export_check_name(t->params[i].name, "parameter", err);
        if (!rc && (!strcmp(t->params[i].name, "id") || !strcmp(t->params[i].name, "median_ms")))
            rc = gb_err_set(err, GB_EINVAL,
                            "parameter '%s' has the name of a member the header adds to each "
                            "configuration (id, median_ms)",
                            t->params[i].name);
    }
    if (rc && strcmp(prefix, t->kernel)) gb_err_prefix(err, "kernel %s", t->kernel);
    return rc;
}

/* ---- values ------------------------------------------------------------- */

/* Orders two values of one column: numbers by value, strings bytewise, false first. */
static int compare_values(const gb_value *a, const gb_value *b)
{
    if (a->kind == GB_VAL_STR && b->kind == GB_VAL_STR) return strcmp(a->str, b->str);
    if (a->kind == GB_VAL_INT && b->kind == GB_VAL_INT) return (a->i > b->i) - (a->i < b->i);
    double x = gb_value_as_number(a), y = gb_value_as_number(b);
    return (x > y) - (x < y);
}

static int compare_rows(const void *pa, const void *pb, void *ctx)
{
    const gb_export_row *a = pa, *b = pb;
    int n = *(const int *)ctx;
    for (int i = 0; i < n; i++) {
        int c = compare_values(&a->key[i], &b->key[i]);
        if (c) return c;
    }
    return 0;
}

static bool same_values(const gb_value *a, const gb_value *b, int n)
{
    for (int i = 0; i < n; i++)
        if (compare_values(&a[i], &b[i])) return false;
    return true;
}

static int sort_rows(gb_export_table *t, gb_err *err)
{
    qsort_r(t->rows, (size_t)t->n_rows, sizeof *t->rows, compare_rows, &t->n_keys);
    for (int i = 1; i < t->n_rows; i++) {
        if (!same_values(t->rows[i - 1].key, t->rows[i].key, t->n_keys)) continue;
        gb_strbuf sb = GB_STRBUF_INIT;
        for (int k = 0; k < t->n_keys; k++) {
            gb_sb_printf(&sb, "%s%s=", k ? "," : "", t->keys[k].name);
            gb_value_append_canonical(&sb, &t->rows[i].key[k]);
        }
        gb_err_set(err, GB_EINVAL, "kernel %s: shape %s has two entries", t->kernel,
                   gb_sb_str(&sb));
        gb_sb_free(&sb);
        return GB_EINVAL;
    }
    return GB_OK;
}

/* The configuration's id, adding it to the distinct list when it is new. */
static int config_id(gb_export_table *t, const gb_value *config, int *out)
{
    for (int c = 0; c < t->n_configs; c++)
        if (same_values(&t->configs[c * t->n_params], config, t->n_params)) {
            *out = c;
            return GB_OK;
        }
    size_t n = (size_t)(t->n_configs + 1) * (size_t)t->n_params;
    gb_value *grown = realloc(t->configs, (n ? n : 1) * sizeof *grown);
    if (!grown) return GB_ENOMEM;
    t->configs = grown;
    gb_value *slot = &grown[t->n_configs * t->n_params];
    for (int p = 0; p < t->n_params; p++)
        if (gb_value_copy(&config[p], &slot[p])) {
            while (p-- > 0)
                gb_value_free(&slot[p]);
            return GB_ENOMEM;
        }
    *out = t->n_configs++;
    return GB_OK;
}

/* One value of the --default text, read as its column's kind. */
static int parse_value(const gb_export_column *c, const char *text, gb_value *out)
{
    char *end = NULL;
    errno = 0;
    if (c->kind == GB_VAL_INT) {
        long long v = strtoll(text, &end, 10);
        if (!*text || *end || errno) return GB_EINVAL;
        *out = gb_value_int(v);
    } else if (c->kind == GB_VAL_NUM) {
        double v = strtod(text, &end);
        if (!*text || *end || !isfinite(v)) return GB_EINVAL;
        *out = gb_value_num(v);
    } else if (c->kind == GB_VAL_BOOL) {
        bool yes = !strcmp(text, "true") || !strcmp(text, "1");
        if (!yes && strcmp(text, "false") && strcmp(text, "0")) return GB_EINVAL;
        *out = gb_value_bool(yes);
    } else {
        return gb_value_str(text, out);
    }
    return GB_OK;
}

static int find_param(const gb_export_table *t, const char *name)
{
    for (int p = 0; p < t->n_params; p++)
        if (!strcmp(t->params[p].name, name)) return p;
    return -1;
}

/* One NAME=VALUE item of the --default text into out[p]; seen marks what is set. */
static int parse_default_item(gb_export_table *t, const char *text, char *item, gb_value *out,
                              bool *seen, gb_err *err)
{
    char *eq = strchr(item, '=');
    if (eq) *eq = '\0';
    int p = eq ? find_param(t, item) : -1;
    if (!eq || p < 0 || seen[p])
        return gb_err_set(err, GB_EINVAL,
                          "--default '%s': %s '%s'; give each parameter once as NAME=VALUE", text,
                          !eq     ? "no '=' in"
                          : p < 0 ? "no parameter"
                                  : "twice",
                          item);
    int rc = parse_value(&t->params[p], eq + 1, &out[p]);
    if (rc == GB_ENOMEM) return gb_err_set(err, rc, "out of memory");
    if (rc)
        return gb_err_set(err, GB_EINVAL, "--default '%s': '%s' is not a valid %s for %s", text,
                          eq + 1, t->params[p].kind == GB_VAL_BOOL ? "boolean" : "number", item);
    seen[p] = true;
    return GB_OK;
}

/* The --default text as a configuration (out: n_params values, freed on failure). */
static int parse_default(gb_export_table *t, const char *text, gb_value *out, gb_err *err)
{
    char *copy = strdup(text), *save = NULL;
    bool *seen = calloc((size_t)t->n_params + 1, sizeof *seen);
    int rc = copy && seen ? GB_OK : gb_err_set(err, GB_ENOMEM, "out of memory");
    for (char *item = rc ? NULL : strtok_r(copy, ",", &save); item && !rc;
         item = strtok_r(NULL, ",", &save))
        rc = parse_default_item(t, text, item, out, seen, err);
    for (int p = 0; !rc && p < t->n_params; p++)
        if (!seen[p])
            rc = gb_err_set(err, GB_EINVAL, "--default '%s' gives no value for %s", text,
                            t->params[p].name);
    for (int p = 0; rc && seen && p < t->n_params; p++)
        if (seen[p]) gb_value_free(&out[p]);
    free(copy);
    free(seen);
    return rc;
}

/* The rule without --default: the configuration that is best for the most shapes;
 * on a tie, the one that comes first in table order (the lowest id). */
static int most_common_config(const gb_export_table *t)
{
    int *count = calloc((size_t)t->n_configs + 1, sizeof *count), best = 0;
    if (!count) return 0; /* the first is as good a default as any when memory is out */
    for (int r = 0; r < t->n_rows; r++)
        count[t->rows[r].config_id]++;
    for (int c = 1; c < t->n_configs; c++)
        if (count[c] > count[best]) best = c;
    free(count);
    return best;
}

static int choose_default(gb_export_table *t, const char *default_text, gb_err *err)
{
    if (!default_text) {
        t->default_id = most_common_config(t);
        return GB_OK;
    }
    gb_value *config = calloc((size_t)t->n_params + 1, sizeof *config);
    if (!config) return gb_err_set(err, GB_ENOMEM, "out of memory");
    int rc = parse_default(t, default_text, config, err);
    if (rc == GB_OK) {
        if (config_id(t, config, &t->default_id)) /* copies the values */
            rc = gb_err_set(err, GB_ENOMEM, "out of memory");
        else
            t->default_given = true;
        for (int p = 0; p < t->n_params; p++)
            gb_value_free(&config[p]);
    }
    free(config);
    return rc;
}

/* ---- the hash ----------------------------------------------------------- */

static void hash_value(gb_keybuf *kb, const gb_export_column *c, const gb_value *v)
{
    if (c->kind == GB_VAL_NUM)
        gb_key_add_f64(kb, gb_value_as_number(v));
    else if (c->kind == GB_VAL_INT)
        gb_key_add_i64(kb, v->i);
    else if (c->kind == GB_VAL_BOOL)
        gb_key_add_i64(kb, v->b);
    else
        gb_key_add_str(kb, v->str);
}

static void hash_columns(gb_keybuf *kb, const gb_export_column *c, int n)
{
    gb_key_add_i64(kb, n);
    for (int i = 0; i < n; i++) {
        gb_key_add_str(kb, c[i].name);
        gb_key_add_i64(kb, c[i].kind);
    }
}

/* XXH3-128 over the canonical encoding of cache keys (cache/key.h): kernel, device,
 * the columns, every row's key, configuration and median, and the default. Not the
 * prefix, the dates, the versions or the source: the same table has the same hash
 * wherever and whenever it is exported. */
static int hash_table(gb_export_table *t, gb_err *err)
{
    gb_keybuf kb;
    gb_key key;
    gb_key_begin(&kb, "gpubench-tuned-table-1");
    gb_key_add_str(&kb, t->kernel);
    gb_key_add_str(&kb, t->device);
    hash_columns(&kb, t->keys, t->n_keys);
    hash_columns(&kb, t->params, t->n_params);
    gb_key_add_i64(&kb, t->n_rows);
    for (int r = 0; r < t->n_rows; r++) {
        for (int k = 0; k < t->n_keys; k++)
            hash_value(&kb, &t->keys[k], &t->rows[r].key[k]);
        for (int p = 0; p < t->n_params; p++)
            hash_value(&kb, &t->params[p], &t->rows[r].config[p]);
        gb_key_add_f64(&kb, t->rows[r].median_ms);
    }
    for (int p = 0; p < t->n_params; p++)
        hash_value(&kb, &t->params[p], &t->configs[t->default_id * t->n_params + p]);
    if (t->max_distance >= 0) gb_key_add_f64(&kb, t->max_distance);
    if (gb_key_finish(&kb, &key)) return gb_err_set(err, GB_ENOMEM, "out of memory");
    gb_key_hex(&key, t->hash);
    return GB_OK;
}

int gb_export_table_finish(gb_export_table *t, const char *prefix, const char *default_text,
                           gb_err *err)
{
    if (t->finished) return GB_OK;
    if (t->n_rows == 0)
        return gb_err_set(err, GB_ENOTFOUND, "kernel %s: no entries to export", t->kernel);
    if (!prefix) prefix = t->kernel;
    if (isnan(t->max_distance) || isinf(t->max_distance) || t->max_distance > 1000)
        return gb_err_set(err, GB_EINVAL, "--max-distance must be a number from 0 to 1000");
    int rc = check_names(t, prefix, err);
    if (rc) return rc;
    if (!(t->prefix = strdup(prefix))) return gb_err_set(err, GB_ENOMEM, "out of memory");
    if ((rc = sort_rows(t, err))) return rc;
    for (int r = 0; r < t->n_rows; r++)
        if (config_id(t, t->rows[r].config, &t->rows[r].config_id))
            return gb_err_set(err, GB_ENOMEM, "out of memory");
    if ((rc = choose_default(t, default_text, err))) return rc;
    if ((rc = hash_table(t, err))) return rc;
    t->finished = true;
    return GB_OK;
}
