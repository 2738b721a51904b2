/* The JSON form of an exported table: written for builds that are not C, and read
 * back (or written by hand) as a source of tables that needs no cache. */
#include "base/json.h"
#include "report/export.h"

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

static void write_columns(gb_jw *w, const char *key, const gb_export_column *c, int n)
{
    gb_jw_key(w, key);
    gb_jw_arr_begin(w);
    for (int i = 0; i < n; i++) {
        gb_jw_obj_begin(w);
        gb_jw_key(w, "name");
        gb_jw_str(w, c[i].name);
        gb_jw_key(w, "type");
        gb_jw_str(w, type_name(c[i].kind));
        gb_jw_obj_end(w);
    }
    gb_jw_arr_end(w);
}

/* Values as their column's type: a NUM column's integers are written as doubles. */
static void write_values(gb_jw *w, const gb_export_column *c, int n, const gb_value *v)
{
    gb_jw_obj_begin(w);
    for (int i = 0; i < n; i++) {
        gb_jw_key(w, c[i].name);
        if (c[i].kind == GB_VAL_NUM)
            gb_jw_num(w, gb_value_as_number(&v[i]));
        else
            gb_value_write_json(w, &v[i]);
    }
    gb_jw_obj_end(w);
}

static void write_entry(gb_jw *w, const gb_export_table *t, const gb_export_row *r)
{
    char when[32] = "";
    time_t tt = (time_t)r->when;
    struct tm tm;
    if (r->when > 0 && gmtime_r(&tt, &tm)) strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    gb_jw_obj_begin(w);
    gb_jw_key(w, "shape");
    write_values(w, t->keys, t->n_keys, r->key);
    gb_jw_key(w, "config");
    write_values(w, t->params, t->n_params, r->config);
    gb_jw_key(w, "config_id");
    gb_jw_int(w, r->config_id);
    gb_jw_key(w, "median_ms");
    gb_jw_num(w, r->median_ms);
    gb_jw_key(w, "when");
    gb_jw_int(w, r->when);
    gb_jw_key(w, "tuned");
    if (*when)
        gb_jw_str(w, when);
    else
        gb_jw_null(w);
    gb_jw_key(w, "engine");
    gb_jw_str(w, r->engine);
    gb_jw_key(w, "kernel_fp");
    gb_jw_str(w, r->kernel_fp);
    gb_jw_obj_end(w);
}

static void write_str_field(gb_jw *w, const char *key, const char *value)
{
    gb_jw_key(w, key);
    gb_jw_str(w, value);
}

int gb_export_write_json(const gb_export_table *t, const char *version, gb_strbuf *out, gb_err *err)
{
    if (!t->finished)
        return gb_err_set(err, GB_EINVAL, "kernel %s: the table is not finished", t->kernel);
    gb_jw w;
    gb_jw_init(&w, out, true);
    gb_jw_obj_begin(&w);
    write_str_field(&w, "format", FORMAT_NAME);
    gb_jw_key(&w, "version");
    gb_jw_int(&w, 1);
    write_str_field(&w, "kernel", t->kernel);
    write_str_field(&w, "prefix", t->prefix);
    write_str_field(&w, "device", t->device);
    write_str_field(&w, "hash", t->hash);
    write_str_field(&w, "gpubench", version);
    write_str_field(&w, "source", t->source);
    if (t->note) write_str_field(&w, "note", t->note);
    write_columns(&w, "keys", t->keys, t->n_keys);
    write_columns(&w, "params", t->params, t->n_params);
    gb_jw_key(&w, "configs");
    gb_jw_arr_begin(&w);
    for (int c = 0; c < t->n_configs; c++)
        write_values(&w, t->params, t->n_params, &t->configs[c * t->n_params]);
    gb_jw_arr_end(&w);
    gb_jw_key(&w, "max_distance");
    if (t->max_distance >= 0)
        gb_jw_num(&w, t->max_distance);
    else
        gb_jw_null(&w);
    gb_jw_key(&w, "default_id");
    gb_jw_int(&w, t->default_id);
    gb_jw_key(&w, "default_given");
    gb_jw_bool(&w, t->default_given);
    gb_jw_key(&w, "default");
    write_values(&w, t->params, t->n_params, &t->configs[t->default_id * t->n_params]);
    gb_jw_key(&w, "entries");
    gb_jw_arr_begin(&w);
    for (int r = 0; r < t->n_rows; r++)
        write_entry(&w, t, &t->rows[r]);
    gb_jw_arr_end(&w);
    gb_jw_key(&w, "older_left_out");
    gb_jw_int(&w, t->n_older);
    gb_jw_obj_end(&w);
    gb_sb_putc(out, '\n');
    if (gb_sb_status(out)) return gb_err_set(err, GB_ENOMEM, "out of memory");
    return GB_OK;
}

/* ---- reading ------------------------------------------------------------ */

static int read_text(const char *path, char **out, size_t *out_len, gb_err *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) return gb_err_set(err, errno, "table %s: %s", path, strerror(errno));
    gb_strbuf sb = GB_STRBUF_INIT;
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0 && sb.len <= (size_t)MAX_JSON_SIZE)
        gb_sb_append(&sb, buf, n);
    int failed = ferror(f);
    fclose(f);
    int rc = GB_OK;
    if (failed)
        rc = gb_err_set(err, GB_EIO, "table %s: read error", path);
    else if (sb.len > (size_t)MAX_JSON_SIZE)
        rc = gb_err_set(err, GB_EINVAL, "table %s: larger than 64 MiB", path);
    else if (gb_sb_status(&sb))
        rc = gb_err_set(err, GB_ENOMEM, "out of memory");
    *out_len = sb.len;
    *out = rc ? NULL : gb_sb_take(&sb);
    if (!rc && !*out) *out = strdup("");
    gb_sb_free(&sb);
    if (!rc && !*out) rc = gb_err_set(err, GB_ENOMEM, "out of memory");
    return rc;
}

/* Seconds from a JSON number; anything that is not a plausible time is 0 (unknown). */
static int64_t unix_time(double v)
{
    return v >= 0 && v < 253402300800.0 ? (int64_t)v : 0; /* before the year 10000 */
}

static int read_entry(const gb_json *e, gb_export_table *t, size_t i, gb_err *err)
{
    gb_fields shape = {0}, config = {0};
    const gb_json *median = gb_json_get(e, "median_ms");
    int rc = gb_fields_from_json(gb_json_get(e, "shape"), &shape, err);
    if (rc) gb_err_prefix(err, "entry %zu: shape", i + 1);
    if (!rc && (rc = gb_fields_from_json(gb_json_get(e, "config"), &config, err)))
        gb_err_prefix(err, "entry %zu: config", i + 1);
    if (!rc && (!median || median->type != GB_JSON_NUMBER))
        rc = gb_err_set(err, GB_EINVAL, "entry %zu: no median_ms number", i + 1);
    if (!rc)
        rc = gb_export_table_add(t, &shape, &config, median->number,
                                 unix_time(gb_json_num(gb_json_get(e, "when"), 0)),
                                 gb_json_str(gb_json_get(e, "engine"), ""),
                                 gb_json_str(gb_json_get(e, "kernel_fp"), ""), err);
    gb_fields_free(&shape);
    gb_fields_free(&config);
    return rc;
}

/* The default as "k=v,..." text, which gb_export_table_finish parses like --default.
 * A string value with a comma cannot travel that way and is refused. */
static int default_text(const gb_json *obj, char **out, gb_err *err)
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

static int read_table(const gb_json *root, const char *path, gb_export_table *out,
                      char **out_default, gb_err *err)
{
    const char *kernel = gb_json_str(gb_json_get(root, "kernel"), NULL);
    const char *device = gb_json_str(gb_json_get(root, "device"), NULL);
    const gb_json *entries = gb_json_get(root, "entries");
    if (!kernel || !device || !entries || entries->type != GB_JSON_ARRAY)
        return gb_err_set(err, GB_EINVAL, "needs \"kernel\", \"device\" and an \"entries\" array");
    char source[4200];
    snprintf(source, sizeof source, "table %s", path);
    int rc = gb_export_table_init(out, kernel, device, source, err);
    for (size_t i = 0; !rc && i < gb_json_len(entries); i++)
        rc = read_entry(gb_json_at(entries, i), out, i, err);
    const char *note = gb_json_str(gb_json_get(root, "note"), NULL);
    if (!rc && note && !(out->note = strdup(note)))
        rc = gb_err_set(err, GB_ENOMEM, "out of memory");
    const gb_json *max = gb_json_get(root, "max_distance");
    if (!rc && max && max->type != GB_JSON_NULL) {
        if (max->type != GB_JSON_NUMBER || !(max->number >= 0))
            rc = gb_err_set(err, GB_EINVAL, "max_distance is not a number >= 0");
        else
            out->max_distance = max->number;
    }
    const gb_json *def = gb_json_get(root, "default");
    bool given = gb_json_bool(gb_json_get(root, "default_given"), true);
    if (!rc && def && def->type != GB_JSON_NULL && given) rc = default_text(def, out_default, err);
    return rc;
}

int gb_export_read_json(const char *path, gb_export_table *out, char **out_default, gb_err *err)
{
    char *text = NULL;
    size_t len = 0;
    gb_json *root = NULL;
    *out_default = NULL;
    memset(out, 0, sizeof *out);
    int rc = read_text(path, &text, &len, err);
    if (rc) return rc;
    if ((rc = gb_json_parse(text, len, &root, err)) == GB_OK) {
        if (root->type != GB_JSON_OBJECT)
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
    gb_json_free(root);
    free(text);
    return rc;
}
