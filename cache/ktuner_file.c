/* Reading Kernel Tuner cache files (ktuner_file.h). */
#include "cache/ktuner_file.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the document ---------------------------------------------------------- */

json_t *gb_ktuner_parse(const char *text, size_t len, gb_err *err)
{
    json_error_t jerr, ignored;
    json_t *doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (doc) return doc;
    size_t n = len;
    while (n && (text[n - 1] == ' ' || text[n - 1] == '\n' || text[n - 1] == '\r' ||
                 text[n - 1] == '\t'))
        n--;
    if (n && text[n - 1] == ',') n--;
    char *closed = malloc(n + 4);
    if (closed) {
        memcpy(closed, text, n);
        memcpy(closed + n, "}\n}", 3);
        doc = json_loadb(closed, n + 3, JSON_REJECT_DUPLICATES, &ignored);
        free(closed);
    }
    if (!doc)
        gb_err_set(err, GB_EINVAL, "not JSON: line %d, column %d: %s", jerr.line, jerr.column,
                   jerr.text);
    return doc;
}

bool gb_ktuner_is_cache(const json_t *doc)
{
    return json_is_object(doc) && json_object_get(doc, "tune_params") &&
           json_object_get(doc, "cache");
}

/* ---- the parameters -------------------------------------------------------- */

static int to_value(const json_t *j, gb_value *out)
{
    if (json_is_integer(j))
        *out = gb_value_int((int64_t)json_integer_value(j));
    else if (json_is_real(j) && isfinite(json_real_value(j)))
        *out = gb_value_num(json_real_value(j));
    else if (json_is_boolean(j))
        *out = gb_value_bool(json_is_true(j));
    else if (json_is_string(j) && json_string_length(j) <= 256)
        return gb_value_str(json_string_value(j), out);
    else
        return GB_EINVAL;
    return GB_OK;
}

static bool is_identifier(const char *s)
{
    size_t n = strlen(s);
    return n > 0 && n <= 64 && !(s[0] >= '0' && s[0] <= '9') &&
           strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") == n;
}

static int read_param(gb_ktuner_file *f, const char *name, gb_err *err)
{
    const json_t *list = json_object_get(json_object_get(f->doc, "tune_params"), name);
    if (!is_identifier(name))
        return gb_err_set(err, GB_EINVAL, "tune parameter '%.64s' is not a name", name);
    if (!json_is_array(list) || json_array_size(list) == 0 ||
        json_array_size(list) > GB_KTUNER_MAX_VALUES)
        return gb_err_set(err, GB_EINVAL, "tune_params[\"%s\"] is not a list of 1 to %d values",
                          name, GB_KTUNER_MAX_VALUES);
    for (int i = 0; i < f->n_params; i++)
        if (!strcmp(f->params[i].name, name))
            return gb_err_set(err, GB_EINVAL, "tune parameter %s is listed twice", name);
    gb_ktuner_param *p = &f->params[f->n_params++];
    p->name = name;
    if (!(p->values = calloc(json_array_size(list), sizeof *p->values)))
        return gb_err_set(err, GB_ENOMEM, "out of memory");
    size_t i;
    const json_t *v;
    json_array_foreach(list, i, v)
    {
        if (to_value(v, &p->values[p->n_values]))
            return gb_err_set(err, GB_EINVAL,
                              "tune_params[\"%s\"][%zu] is not a number, boolean or short string",
                              name, i);
        p->n_values++;
    }
    return GB_OK;
}

static int read_params(gb_ktuner_file *f, gb_err *err)
{
    const json_t *tune = json_object_get(f->doc, "tune_params");
    const json_t *keys = json_object_get(f->doc, "tune_params_keys");
    if (!json_is_object(tune) || json_object_size(tune) == 0)
        return gb_err_set(err, GB_EINVAL, "no \"tune_params\" object");
    if (json_object_size(tune) > GB_KTUNER_MAX_PARAMS)
        return gb_err_set(err, GB_EINVAL, "more than %d tune parameters", GB_KTUNER_MAX_PARAMS);
    if (keys && (!json_is_array(keys) || json_array_size(keys) != json_object_size(tune)))
        return gb_err_set(err, GB_EINVAL, "\"tune_params_keys\" does not list the tune_params");
    size_t i;
    const json_t *v;
    const char *name;
    int rc = GB_OK;
    if (keys) {
        json_array_foreach(keys, i, v)
        {
            name = json_string_value(v);
            if (!rc && (!name || !json_object_get(tune, name)))
                rc = gb_err_set(err, GB_EINVAL, "tune_params_keys[%zu] is not in tune_params", i);
            if (!rc) rc = read_param(f, name, err);
        }
        return rc;
    }
    json_object_foreach((json_t *)tune, name, v)
    {
        if (!rc) rc = read_param(f, name, err);
    }
    return rc;
}

int gb_ktuner_file_open(gb_ktuner_file *f, json_t *doc, gb_err *err)
{
    memset(f, 0, sizeof *f);
    f->doc = json_incref(doc);
    if (!json_is_object(doc)) return gb_err_set(err, GB_EINVAL, "not a JSON object");
    int rc = read_params(f, err);
    if (rc) return rc;
    f->cache = json_object_get(doc, "cache");
    if (!json_is_object(f->cache)) return gb_err_set(err, GB_EINVAL, "no \"cache\" object");
    if (json_object_size(f->cache) > GB_KTUNER_MAX_ENTRIES)
        return gb_err_set(err, GB_ELIMIT, "%zu cache entries, more than the %d gpubench reads",
                          json_object_size(f->cache), GB_KTUNER_MAX_ENTRIES);
    return GB_OK;
}

void gb_ktuner_file_close(gb_ktuner_file *f)
{
    if (!f) return;
    for (int i = 0; i < f->n_params; i++) {
        for (int j = 0; j < f->params[i].n_values; j++)
            gb_value_free(&f->params[i].values[j]);
        free(f->params[i].values);
    }
    json_decref(f->doc);
    memset(f, 0, sizeof *f);
}

/* ---- entries --------------------------------------------------------------- */

/* Each parameter's value, as its place in the parameter's list. */
static int entry_indices(const gb_ktuner_file *f, const json_t *entry, gb_ktuner_entry *out,
                         gb_err *err)
{
    for (int i = 0; i < f->n_params; i++) {
        const gb_ktuner_param *p = &f->params[i];
        gb_value v;
        int rc = to_value(json_object_get(entry, p->name), &v);
        if (rc == GB_ENOMEM) return gb_err_set(err, rc, "out of memory");
        if (rc) return gb_err_set(err, GB_EINVAL, "%s is missing or not a value", p->name);
        out->index[i] = -1;
        for (int j = 0; out->index[i] < 0 && j < p->n_values; j++)
            if (gb_value_equal(&v, &p->values[j])) out->index[i] = j;
        gb_value_free(&v);
        if (out->index[i] < 0)
            return gb_err_set(err, GB_EINVAL, "%s is not one of tune_params' values", p->name);
    }
    return GB_OK;
}

int gb_ktuner_entry_read(const gb_ktuner_file *f, const json_t *entry, gb_ktuner_entry *out,
                         gb_err *err)
{
    const json_t *time = json_object_get(entry, "time");
    *out = (gb_ktuner_entry){.time_ms = NAN};
    if (!json_is_object(entry)) return gb_err_set(err, GB_EINVAL, "not an object");
    if (!json_is_number(time) && !json_is_string(time))
        return gb_err_set(err, GB_EINVAL, "no \"time\"");
    if (json_is_number(time)) {
        out->time_ms = json_number_value(time);
        if (!(isfinite(out->time_ms) && out->time_ms > 0))
            return gb_err_set(err, GB_EINVAL, "time is not a positive number");
        out->status = GB_TRIAL_OK;
    } else {
        out->failure = json_string_value(time);
        out->status = gb_ktuner_failure_status(out->failure);
    }
    return entry_indices(f, entry, out, err);
}

gb_trial_status gb_ktuner_failure_status(const char *failure)
{
    if (!strncmp(failure, "Compilation", 11)) return GB_TRIAL_COMPILE_ERROR;
    return GB_TRIAL_LAUNCH_ERROR; /* RuntimeFailedConfig, InvalidConfig, anything else */
}
