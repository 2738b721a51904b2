/* Kernel Tuner cache files (ktuner.h). */
#include "cache/ktuner.h"

#include "engine/stats.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The file as the shared reader reads it, and what the import adds. */
typedef struct kt_file {
    gb_ktuner_file file;
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

static int by_name(const void *a, const void *b)
{
    return strcmp((*(const gb_ktuner_param *const *)a)->name,
                  (*(const gb_ktuner_param *const *)b)->name);
}

/* The space's fingerprint exactly as tuner/variant.c's gb_variant_space_fp makes it
 * (parameters by name, values in the order given), so a gpubench kernel with the same
 * parameters and values finds the imported best; and the default kernel fingerprint,
 * a hash of the same. */
static int fingerprints(kt_file *f, const char *kernel_fp, gb_err *err)
{
    const gb_ktuner_param *sorted[GB_KTUNER_MAX_PARAMS];
    int n_params = f->file.n_params;
    gb_keybuf space, kernel;
    gb_key key;
    f->n_configs = 1;
    for (int i = 0; i < n_params; i++) {
        sorted[i] = &f->file.params[i];
        uint64_t n = (uint64_t)sorted[i]->n_values;
        f->n_configs = f->n_configs > UINT64_MAX / n ? UINT64_MAX : f->n_configs * n;
    }
    qsort(sorted, (size_t)n_params, sizeof *sorted, by_name);
    gb_key_begin(&space, "space");
    gb_key_begin(&kernel, "kernel-tuner");
    for (int i = 0; i < n_params; i++) {
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
    json_t *doc = gb_ktuner_parse(text, len, err);
    if (!doc) return GB_EINVAL;
    int rc = gb_ktuner_file_open(&f->file, doc, err);
    json_decref(doc);
    return rc ? rc : fingerprints(f, o->kernel_fp, err);
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

/* The entry's configuration as named values. */
static int entry_config(kt_run *r, const gb_ktuner_entry *e, gb_fields *out)
{
    memset(out, 0, sizeof *out);
    for (int i = 0; i < r->f->file.n_params; i++) {
        const gb_ktuner_param *p = &r->f->file.params[i];
        if (gb_fields_set(out, p->name, &p->values[e->index[i]]))
            return gb_err_set(r->err, GB_ENOMEM, "out of memory");
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
    gb_trial_record t = {.id = r->id, .registers = -1, .gpu = -1, .reason = ""};
    gb_ktuner_entry e;
    gb_err why = {0};
    char reason[320];
    int rc = gb_ktuner_entry_read(&r->f->file, entry, &e, &why);
    if (rc == GB_EINVAL) return note(r, key, "%s", why.msg), GB_OK;
    if (rc) return gb_err_copy(r->err, &why);
    double time_ms = e.time_ms;
    if ((rc = entry_config(r, &e, &t.config))) return gb_fields_free(&t.config), rc;
    t.when = timestamp(entry, r->opts->now);
    if (t.when > r->newest) r->newest = t.when;
    if (e.status != GB_TRIAL_OK) {
        snprintf(reason, sizeof reason, "Kernel Tuner: %.256s", e.failure);
        t.status = e.status;
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
    *device =
        o->device ? o->device : json_string_value(json_object_get(f->file.doc, "device_name"));
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
        out->n_entries = json_object_size(f.file.cache);
    }
    int64_t now = opts->now ? opts->now : (int64_t)time(NULL);
    gb_ktuner_opts timed = *opts;
    timed.now = now;
    r.opts = &timed;
    const char *key;
    const json_t *entry;
    json_object_foreach((json_t *)f.file.cache, key, entry)
    {
        if (rc == GB_OK) rc = read_entry(&r, key, entry, &best);
    }
    if (r.newest == 0) r.newest = now;
    if (rc == GB_OK && best.has) rc = store_best(&r, &best);
    gb_fields_free(&best.config);
    free(best.samples_ms);
    gb_ktuner_file_close(&f.file);
    return rc;
}
