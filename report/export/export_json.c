/* The JSON form of an exported table: written for builds that are not C, and read
 * back (or written by hand) as a source of tables that needs no cache. */
#include "base/file.h"
#include "base/json.h"
#include "report/export/export.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FORMAT_NAME   "gpubench-tuned-table"
#define MAX_JSON_SIZE (64L << 20)

static const char *type_name(gb_value_kind kind)
{
    switch (kind) {
    case GB_VAL_INT:
        return "int";
    case GB_VAL_NUM:
        return "double";
    case GB_VAL_STR:
        return "string";
    default:
        return "bool";
    }
}

/* The columns as [{"name": ..., "type": ...}]; NULL on ENOMEM. */
static json_t *columns_json(const gb_export_column *c, int n)
{
    json_t *arr = json_array();
    for (int i = 0; arr && i < n; i++) {
        json_t *col = json_pack("{s:o, s:s}", "name", gb_json_text(c[i].name, 0), "type",
                                type_name(c[i].kind));
        if (json_array_append_new(arr, col)) {
            json_decref(arr);
            arr = NULL;
        }
    }
    return arr;
}

/* Values as their column's type: a NUM column's integers are written as doubles. */
static json_t *values_json(const gb_export_column *c, int n, const gb_value *v)
{
    json_t *obj = json_object();
    for (int i = 0; obj && i < n; i++) {
        json_t *value = c[i].kind == GB_VAL_NUM ? gb_json_real(gb_value_as_number(&v[i]))
                                                : gb_value_to_json(&v[i]);
        if (gb_json_set(obj, c[i].name, value)) {
            json_decref(obj);
            obj = NULL;
        }
    }
    return obj;
}

static json_t *entry_json(const gb_export_table *t, const gb_export_row *r)
{
    char when[32] = "";
    time_t tt = (time_t)r->when;
    struct tm tm;
    if (r->when > 0 && gmtime_r(&tt, &tm)) strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    /* "o" takes the references, also when the pack fails. */
    return json_pack("{s:o, s:o, s:i, s:o, s:I, s:o, s:o, s:o}", "shape",
                     values_json(t->keys, t->n_keys, r->key), "config",
                     values_json(t->params, t->n_params, r->config), "config_id", r->config_id,
                     "median_ms", gb_json_real(r->median_ms), "when", (json_int_t)r->when, "tuned",
                     *when ? json_string(when) : json_null(), "engine",
                     gb_json_text(r->engine ? r->engine : "", 0), "kernel_fp",
                     gb_json_text(r->kernel_fp ? r->kernel_fp : "", 0));
}

static json_t *configs_json(const gb_export_table *t)
{
    json_t *arr = json_array();
    for (int c = 0; arr && c < t->n_configs; c++) {
        if (json_array_append_new(
                arr, values_json(t->params, t->n_params, &t->configs[c * t->n_params]))) {
            json_decref(arr);
            arr = NULL;
        }
    }
    return arr;
}

static json_t *entries_json(const gb_export_table *t)
{
    json_t *arr = json_array();
    for (int r = 0; arr && r < t->n_rows; r++) {
        if (json_array_append_new(arr, entry_json(t, &t->rows[r]))) {
            json_decref(arr);
            arr = NULL;
        }
    }
    return arr;
}

/* The table as a JSON object, in the order docs/export.md shows; NULL on ENOMEM. */
static json_t *table_json(const gb_export_table *t, const char *version)
{
    json_t *root =
        json_pack("{s:s, s:i, s:o, s:o, s:o, s:o, s:o, s:o}", "format", FORMAT_NAME, "version", 1,
                  "kernel", gb_json_text(t->kernel, 0), "prefix", gb_json_text(t->prefix, 0),
                  "device", gb_json_text(t->device, 0), "hash", gb_json_text(t->hash, 0),
                  "gpubench", gb_json_text(version, 0), "source", gb_json_text(t->source, 0));
    int rc = root ? GB_OK : GB_ENOMEM;
    if (!rc && t->note) rc = gb_json_set(root, "note", gb_json_text(t->note, 0));
    if (!rc) rc = gb_json_set(root, "keys", columns_json(t->keys, t->n_keys));
    if (!rc) rc = gb_json_set(root, "params", columns_json(t->params, t->n_params));
    if (!rc) rc = gb_json_set(root, "configs", configs_json(t));
    if (!rc)
        rc = gb_json_set(root, "max_distance",
                         t->max_distance >= 0 ? gb_json_real(t->max_distance) : json_null());
    if (!rc) rc = gb_json_set(root, "default_id", json_integer(t->default_id));
    if (!rc) rc = gb_json_set(root, "default_given", json_boolean(t->default_given));
    if (!rc)
        rc = gb_json_set(
            root, "default",
            values_json(t->params, t->n_params, &t->configs[t->default_id * t->n_params]));
    if (!rc) rc = gb_json_set(root, "entries", entries_json(t));
    if (!rc) rc = gb_json_set(root, "older_left_out", json_integer(t->n_older));
    if (rc) {
        json_decref(root);
        return NULL;
    }
    return root;
}

int gb_export_write_json(const gb_export_table *t, const char *version, gb_strbuf *out, gb_err *err)
{
    if (!t->finished)
        return gb_err_set(err, GB_EINVAL, "kernel %s: the table is not finished", t->kernel);
    json_t *root = table_json(t, version);
    char *text = root ? gb_json_dump(root, true) : NULL;
    json_decref(root);
    if (text) {
        gb_sb_puts(out, text);
        gb_sb_putc(out, '\n');
    }
    free(text);
    if (!text || gb_sb_status(out)) return gb_err_set(err, GB_ENOMEM, "out of memory");
    return GB_OK;
}

/* ---- reading ------------------------------------------------------------ */

/* Seconds from a JSON number; anything that is not a plausible time is 0 (unknown). */
static int64_t unix_time(double v)
{
    return v >= 0 && v < 253402300800.0 ? (int64_t)v : 0; /* before the year 10000 */
}

static int read_entry(const json_t *e, gb_export_table *t, size_t i, gb_err *err)
{
    gb_fields shape = {0}, config = {0};
    const json_t *median = gb_json_get(e, "median_ms");
    int rc = gb_fields_from_json(gb_json_get(e, "shape"), &shape, err);
    if (rc) gb_err_prefix(err, "entry %zu: shape", i + 1);
    if (!rc && (rc = gb_fields_from_json(gb_json_get(e, "config"), &config, err)))
        gb_err_prefix(err, "entry %zu: config", i + 1);
    if (!rc && !json_is_number(median))
        rc = gb_err_set(err, GB_EINVAL, "entry %zu: no median_ms number", i + 1);
    if (!rc)
        rc = gb_export_table_add(t, &shape, &config, json_number_value(median),
                                 unix_time(gb_json_num(gb_json_get(e, "when"), 0)),
                                 gb_json_str(gb_json_get(e, "engine"), ""),
                                 gb_json_str(gb_json_get(e, "kernel_fp"), ""), err);
    gb_fields_free(&shape);
    gb_fields_free(&config);
    return rc;
}

/* The default as "k=v,..." text, which gb_export_table_finish parses like --default.
 * A string value with a comma cannot travel that way and is refused. */
static int default_text(const json_t *obj, char **out, gb_err *err)
{
    gb_fields f = {0};
    int rc = gb_fields_from_json(obj, &f, err);
    if (rc) return gb_err_prefix(err, "default");
    gb_strbuf sb = GB_STRBUF_INIT;
    for (int i = 0; i < f.n && !rc; i++) {
        const gb_value *v = &f.values[i];
        if (v->kind == GB_VAL_STR && strchr(v->str, ','))
            rc = gb_err_set(err, GB_EINVAL, "default: %s has a comma, which a default cannot hold",
                            f.names[i]);
        gb_sb_printf(&sb, "%s%s=", i ? "," : "", f.names[i]);
        if (v->kind == GB_VAL_STR)
            gb_sb_puts(&sb, v->str);
        else
            gb_value_append_source(&sb, v);
    }
    gb_fields_free(&f);
    if (!rc && gb_sb_status(&sb)) rc = gb_err_set(err, GB_ENOMEM, "out of memory");
    *out = rc ? NULL : gb_sb_take(&sb);
    if (!rc && !*out) *out = strdup("");
    gb_sb_free(&sb);
    if (!rc && !*out) rc = gb_err_set(err, GB_ENOMEM, "out of memory");
    return rc;
}

static int read_table(const json_t *root, const char *path, gb_export_table *out,
                      char **out_default, gb_err *err)
{
    const char *kernel = gb_json_str(gb_json_get(root, "kernel"), NULL);
    const char *device = gb_json_str(gb_json_get(root, "device"), NULL);
    const json_t *entries = gb_json_get(root, "entries");
    if (!kernel || !device || !json_is_array(entries))
        return gb_err_set(err, GB_EINVAL, "needs \"kernel\", \"device\" and an \"entries\" array");
    char source[4200];
    snprintf(source, sizeof source, "table %s", path);
    int rc = gb_export_table_init(out, kernel, device, source, err);
    for (size_t i = 0; !rc && i < gb_json_len(entries); i++)
        rc = read_entry(gb_json_at(entries, i), out, i, err);
    const char *note = gb_json_str(gb_json_get(root, "note"), NULL);
    if (!rc && note && !(out->note = strdup(note)))
        rc = gb_err_set(err, GB_ENOMEM, "out of memory");
    const json_t *max = gb_json_get(root, "max_distance");
    if (!rc && max && !json_is_null(max)) {
        if (!json_is_number(max) || !(json_number_value(max) >= 0))
            rc = gb_err_set(err, GB_EINVAL, "max_distance is not a number >= 0");
        else
            out->max_distance = json_number_value(max);
    }
    const json_t *def = gb_json_get(root, "default");
    bool given = gb_json_bool(gb_json_get(root, "default_given"), true);
    if (!rc && def && !json_is_null(def) && given) rc = default_text(def, out_default, err);
    return rc;
}

int gb_export_read_json(const char *path, gb_export_table *out, char **out_default, gb_err *err)
{
    char *text = NULL;
    size_t len = 0;
    json_t *root = NULL;
    *out_default = NULL;
    memset(out, 0, sizeof *out);
    int rc = gb_read_file(path, MAX_JSON_SIZE, "table ", &text, &len, err);
    if (rc) return rc;
    if ((rc = gb_json_parse(text, len, &root, err)) == GB_OK) {
        if (!json_is_object(root))
            rc = gb_err_set(err, GB_EINVAL, "not a JSON object");
        else
            rc = read_table(root, path, out, out_default, err);
    }
    if (rc && rc != GB_ENOMEM) gb_err_prefix(err, "table %s", path);
    if (rc == GB_ENOMEM) gb_err_set(err, rc, "out of memory");
    if (rc) {
        gb_export_table_free(out);
        free(*out_default);
        *out_default = NULL;
    }
    json_decref(root);
    free(text);
    return rc;
}
