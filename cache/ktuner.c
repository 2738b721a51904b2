/* Kernel Tuner cache files (ktuner.h). */
#include "cache/ktuner.h"

#include "engine/stats.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* One tuning parameter of the file, in gpubench's terms. */
typedef struct kt_param {
    const char *name; /* points into the document */
    gb_value *values;
    int n_values;
} kt_param;

typedef struct kt_file {
    json_t *doc;
    kt_param params[GB_KTUNER_MAX_PARAMS]; /* in tune_params_keys order */
    int n_params;
    const json_t *cache;
    char kernel_fp[80];
    char space_fp[33];
    uint64_t n_configs;
} kt_file;

typedef struct kt_run {
    gb_cache *cache;
    const gb_ktuner_opts *opts;
    gb_ktuner_summary *sum;
    kt_file *f;
    gb_record_id id;
    int64_t newest;
    gb_err *err;
} kt_run;

static void note(const kt_run *r, const char *entry, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void note(const kt_run *r, const char *entry, const char *fmt, ...)
{
    char what[GB_ERR_MSG_BYTES], line[GB_ERR_MSG_BYTES + 128], shown[64];
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)entry; *p && n + 1 < sizeof shown; p++)
        shown[n++] = *p < 0x20 || *p == 0x7f ? '?' : (char)*p; /* the key is the file's */
    shown[n] = '\0';
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(line, sizeof line, "cache entry \"%s%s\": %s; skipped", shown, entry[n] ? "..." : "",
             what);
    r->sum->n_skipped++;
    if (r->opts->note) r->opts->note(r->opts->note_ctx, line);
}

/* ---- the file ------------------------------------------------------------- */

/* Kernel Tuner appends to its cache as it goes; a run that was stopped leaves the
 * file without its closing braces. Close it the way Kernel Tuner itself does. */
static json_t *load(const char *text, size_t len, gb_err *err)
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

static int read_param(kt_file *f, const char *name, gb_err *err)
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
    kt_param *p = &f->params[f->n_params++];
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

static int read_params(kt_file *f, gb_err *err)
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

static int by_name(const void *a, const void *b)
{
    return strcmp((*(const kt_param *const *)a)->name, (*(const kt_param *const *)b)->name);
}

/* The space's fingerprint exactly as tuner/variant.c's gb_variant_space_fp makes it
 * (parameters by name, values in the order given), so a gpubench kernel with the same
 * parameters and values finds the imported best; and the default kernel fingerprint,
 * a hash of the same. */
static int fingerprints(kt_file *f, const char *kernel_fp, gb_err *err)
{
    const kt_param *sorted[GB_KTUNER_MAX_PARAMS];
    gb_keybuf space, kernel;
    gb_key key;
    f->n_configs = 1;
    for (int i = 0; i < f->n_params; i++) {
        sorted[i] = &f->params[i];
        uint64_t n = (uint64_t)f->params[i].n_values;
        f->n_configs = f->n_configs > UINT64_MAX / n ? UINT64_MAX : f->n_configs * n;
    }
    qsort(sorted, (size_t)f->n_params, sizeof *sorted, by_name);
    gb_key_begin(&space, "space");
    gb_key_begin(&kernel, "kernel-tuner");
    for (int i = 0; i < f->n_params; i++) {
        gb_strbuf values = GB_STRBUF_INIT;
        for (int j = 0; j < sorted[i]->n_values; j++) {
            gb_value_append_canonical(&values, &sorted[i]->values[j]);
            gb_sb_putc(&values, ',');
        }
        gb_key_add_str(&space, sorted[i]->name);
        gb_key_add_str(&space, gb_sb_str(&values));
        gb_key_add_str(&kernel, sorted[i]->name);
        gb_key_add_str(&kernel, gb_sb_str(&values));
        if (gb_sb_status(&values)) space.enc.failed = 1;
        gb_sb_free(&values);
    }
    int rc = gb_key_finish(&space, &key);
    gb_key_hex(&key, f->space_fp);
    if (gb_key_finish(&kernel, &key) || rc) return gb_err_set(err, GB_ENOMEM, "out of memory");
    if (kernel_fp) {
        gb_strlcpy(f->kernel_fp, kernel_fp, sizeof f->kernel_fp);
    } else {
        char hex[33];
        gb_key_hex(&key, hex);
        snprintf(f->kernel_fp, sizeof f->kernel_fp, "kernel-tuner-%s", hex);
    }
    return GB_OK;
}

static int read_file(kt_file *f, const char *text, size_t len, const gb_ktuner_opts *o, gb_err *err)
{
    if (len > GB_KTUNER_MAX_FILE_BYTES)
        return gb_err_set(err, GB_ELIMIT, "%zu bytes, more than the %zu MiB an import reads", len,
                          GB_KTUNER_MAX_FILE_BYTES >> 20);
    if (!(f->doc = load(text, len, err))) return GB_EINVAL;
    if (!json_is_object(f->doc)) return gb_err_set(err, GB_EINVAL, "not a JSON object");
    int rc = read_params(f, err);
    if (rc) return rc;
    f->cache = json_object_get(f->doc, "cache");
    if (!json_is_object(f->cache)) return gb_err_set(err, GB_EINVAL, "no \"cache\" object");
    if (json_object_size(f->cache) > GB_KTUNER_MAX_ENTRIES)
        return gb_err_set(err, GB_ELIMIT, "%zu cache entries, more than the %d an import takes",
                          json_object_size(f->cache), GB_KTUNER_MAX_ENTRIES);
    return fingerprints(f, o->kernel_fp, err);
}

static void free_file(kt_file *f)
{
    for (int i = 0; i < f->n_params; i++) {
        for (int j = 0; j < f->params[i].n_values; j++)
            gb_value_free(&f->params[i].values[j]);
        free(f->params[i].values);
    }
    json_decref(f->doc);
}

/* ---- entries -------------------------------------------------------------- */

/* "2023-12-22 09:54:05.502007+00:00" (UTC, as Kernel Tuner writes it); fallback
 * when absent or not in that form. */
static int64_t timestamp(const json_t *entry, int64_t fallback)
{
    const char *text = json_string_value(json_object_get(entry, "timestamp"));
    struct tm tm = {0};
    if (!text || sscanf(text, "%d-%d-%d %d:%d:%d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                        &tm.tm_hour, &tm.tm_min, &tm.tm_sec) != 6)
        return fallback;
    if (tm.tm_year < 1970 || tm.tm_year > 9999) return fallback;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    time_t t = timegm(&tm);
    return t == (time_t)-1 ? fallback : (int64_t)t;
}

/* The entry's configuration: every parameter, with a value from its list. */
static int entry_config(kt_run *r, const char *key, const json_t *entry, gb_fields *out)
{
    memset(out, 0, sizeof *out);
    for (int i = 0; i < r->f->n_params; i++) {
        const kt_param *p = &r->f->params[i];
        gb_value v;
        if (to_value(json_object_get(entry, p->name), &v)) {
            note(r, key, "%s is missing or not a value", p->name);
            return GB_EINVAL;
        }
        bool listed = false;
        for (int j = 0; !listed && j < p->n_values; j++)
            listed = gb_value_equal(&v, &p->values[j]);
        int rc = listed ? gb_fields_set(out, p->name, &v) : GB_EINVAL;
        gb_value_free(&v);
        if (rc == GB_EINVAL) note(r, key, "%s is not one of tune_params' values", p->name);
        if (rc == GB_ENOMEM) gb_err_set(r->err, rc, "out of memory");
        if (rc) return rc;
    }
    return GB_OK;
}

/* "times" when it is a list of positive numbers, else "time" alone. */
static int entry_samples(kt_run *r, const char *key, const json_t *entry, double time_ms,
                         double **out, int *out_n)
{
    const json_t *times = json_object_get(entry, "times");
    size_t n = json_is_array(times) && json_array_size(times) ? json_array_size(times) : 1;
    if (n > GB_KTUNER_MAX_TIMES) {
        note(r, key, "more than %d times", GB_KTUNER_MAX_TIMES);
        return GB_EINVAL;
    }
    double *samples = malloc(n * sizeof *samples);
    if (!samples) return gb_err_set(r->err, GB_ENOMEM, "out of memory");
    samples[0] = time_ms;
    for (size_t i = 0; json_is_array(times) && i < json_array_size(times); i++) {
        const json_t *t = json_array_get(times, i);
        samples[i] = json_number_value(t);
        if (!json_is_number(t) || !isfinite(samples[i]) || samples[i] <= 0) {
            free(samples);
            note(r, key, "times[%zu] is not a positive number", i);
            return GB_EINVAL;
        }
    }
    *out = samples;
    *out_n = (int)n;
    return GB_OK;
}

/* Kernel Tuner's failure strings, as statuses. It raises on a failed verification
 * instead of caching it, so none of them means `wrong`. */
static gb_trial_status failure_status(const char *what)
{
    if (!strncmp(what, "Compilation", 11)) return GB_TRIAL_COMPILE_ERROR;
    return GB_TRIAL_LAUNCH_ERROR; /* RuntimeFailedConfig, InvalidConfig, anything else */
}

/* The fastest entry so far. */
typedef struct kt_best {
    bool has;
    double time_ms;
    gb_fields config;
    gb_stats stats;
    double *samples_ms;
    int n_samples;
    int64_t when;
} kt_best;

static int store_trial(kt_run *r, gb_trial_record *t)
{
    gb_err why = {0};
    if (!r->cache) return gb_transfer_check_trial(t, r->err);
    int rc = gb_transfer_put_trial(r->cache, t, &r->sum->stored, &why);
    if (rc) gb_err_copy(r->err, &why);
    return rc;
}

static int read_entry(kt_run *r, const char *key, const json_t *entry, kt_best *best)
{
    gb_trial_record t = {.id = r->id, .registers = -1, .reason = ""};
    const json_t *time = json_object_get(entry, "time");
    double time_ms = json_number_value(time);
    char reason[320];
    if (!json_is_object(entry)) return note(r, key, "not an object"), GB_OK;
    if (!json_is_number(time) && !json_is_string(time)) return note(r, key, "no \"time\""), GB_OK;
    if (json_is_number(time) && !(isfinite(time_ms) && time_ms > 0))
        return note(r, key, "time is not a positive number"), GB_OK;
    int rc = entry_config(r, key, entry, &t.config);
    if (rc) return gb_fields_free(&t.config), rc == GB_EINVAL ? GB_OK : rc;
    t.when = timestamp(entry, r->opts->now);
    if (t.when > r->newest) r->newest = t.when;
    if (json_is_string(time)) {
        snprintf(reason, sizeof reason, "Kernel Tuner: %.256s", json_string_value(time));
        t.status = failure_status(json_string_value(time));
        t.reason = reason;
        r->sum->n_failed++;
    } else if ((rc = entry_samples(r, key, entry, time_ms, &t.samples_ms, &t.n_samples))) {
        gb_fields_free(&t.config);
        return rc == GB_EINVAL ? GB_OK : rc;
    } else {
        t.status = GB_TRIAL_OK;
        t.has_stats = true;
        strcpy(t.mode, "hot");
        if ((rc = gb_stats_compute(t.samples_ms, t.n_samples, &t.stats)))
            rc = gb_err_set(r->err, rc, "out of memory");
        r->sum->n_ok++;
    }
    if (!rc) rc = store_trial(r, &t);
    if (rc == GB_EINVAL) {
        note(r, key, "%s", r->err->msg);
        rc = GB_OK;
    } else if (!rc && t.status == GB_TRIAL_OK && (!best->has || time_ms < best->time_ms)) {
        gb_fields_free(&best->config);
        free(best->samples_ms);
        *best = (kt_best){.has = true,
                          .time_ms = time_ms,
                          .config = t.config,
                          .stats = t.stats,
                          .samples_ms = t.samples_ms,
                          .n_samples = t.n_samples,
                          .when = t.when};
        t.config = (gb_fields){0};
        t.samples_ms = NULL;
    }
    gb_fields_free(&t.config);
    free(t.samples_ms);
    return rc;
}

/* ---- the best ------------------------------------------------------------- */

static int store_best(kt_run *r, kt_best *b)
{
    gb_best_record rec = {
        .id = r->id,
        .space_fp = r->f->space_fp,
        .config = b->config,
        .stats = b->stats,
        .samples_ms = b->samples_ms,
        .n_samples = b->n_samples,
        .complete = r->sum->n_ok + r->sum->n_failed >= r->f->n_configs,
        .n_configs = r->f->n_configs > INT32_MAX ? INT32_MAX : (int)r->f->n_configs,
        .n_timed = (int)r->sum->n_ok,
        .n_failed = (int)r->sum->n_failed,
        .when = r->newest,
    };
    strcpy(rec.mode, "hot");
    r->sum->has_best = true;
    r->sum->best_ms = b->time_ms;
    gb_strbuf text = GB_STRBUF_INIT;
    gb_fields_append_canonical(&text, &b->config, NULL, 0);
    gb_strlcpy(r->sum->best_config, gb_sb_str(&text), sizeof r->sum->best_config);
    gb_sb_free(&text);
    if (!r->cache) return gb_transfer_check_best(&rec, r->err);
    return gb_transfer_put_best(r->cache, &rec, &r->sum->stored, r->err);
}

static int check_opts(const gb_ktuner_opts *o, const kt_file *f, const char **device, gb_err *err)
{
    *device = o->device ? o->device : json_string_value(json_object_get(f->doc, "device_name"));
    if (!*device || !**device)
        return gb_err_set(err, GB_EINVAL,
                          "the file names no device (device_name is empty or "
                          "missing): pass --device");
    if (!o->kernel || !o->shape)
        return gb_err_set(err, GB_EINVAL, "a Kernel Tuner import needs a kernel name and a shape");
    return GB_OK;
}

int gb_ktuner_import(gb_cache *cache, const char *text, size_t len, const gb_ktuner_opts *opts,
                     gb_ktuner_summary *out, gb_err *err)
{
    kt_file f = {0};
    kt_best best = {0};
    const char *device = NULL;
    memset(out, 0, sizeof *out);
    int rc = read_file(&f, text, len, opts, err);
    if (rc == GB_OK) rc = check_opts(opts, &f, &device, err);
    kt_run r = {.cache = cache,
                .opts = opts,
                .sum = out,
                .f = &f,
                .id = {.kernel = (char *)opts->kernel,
                       .kernel_fp = f.kernel_fp,
                       .device = (char *)device,
                       .shape = opts->shape ? *opts->shape : (gb_fields){0}},
                .err = err};
    if (rc == GB_OK) {
        gb_err why = {0};
        if ((rc = gb_transfer_check_id(&r.id, &why)))
            gb_err_set(err, rc, "%s (set it with --kernel, --kernel-fp, --device or --shape)",
                       why.msg);
        gb_strlcpy(out->kernel_fp, f.kernel_fp, sizeof out->kernel_fp);
        gb_strlcpy(out->device, device, sizeof out->device);
        out->n_entries = json_object_size(f.cache);
    }
    int64_t now = opts->now ? opts->now : (int64_t)time(NULL);
    gb_ktuner_opts timed = *opts;
    timed.now = now;
    r.opts = &timed;
    const char *key;
    const json_t *entry;
    json_object_foreach((json_t *)f.cache, key, entry)
    {
        if (rc == GB_OK) rc = read_entry(&r, key, entry, &best);
    }
    if (r.newest == 0) r.newest = now;
    if (rc == GB_OK && best.has) rc = store_best(&r, &best);
    gb_fields_free(&best.config);
    free(best.samples_ms);
    free_file(&f);
    return rc;
}
