#include "cache/record.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int gb_record_id_copy(const gb_record_id *src, gb_record_id *out)
{
    *out = (gb_record_id){
        .kernel = strdup(src->kernel),
        .kernel_fp = strdup(src->kernel_fp),
        .device = strdup(src->device),
    };
    int rc = gb_fields_copy(&src->shape, &out->shape);
    if (rc || !out->kernel || !out->kernel_fp || !out->device) {
        gb_record_id_free(out);
        return GB_ENOMEM;
    }
    return GB_OK;
}

void gb_record_id_free(gb_record_id *id)
{
    if (!id) return;
    free(id->kernel);
    free(id->kernel_fp);
    free(id->device);
    gb_fields_free(&id->shape);
    memset(id, 0, sizeof *id);
}

static void add_id(gb_keybuf *kb, const gb_record_id *id)
{
    gb_strbuf shape = GB_STRBUF_INIT;
    gb_fields_append_canonical(&shape, &id->shape, NULL, 0);
    gb_key_add_str(kb, id->kernel);
    gb_key_add_str(kb, id->kernel_fp);
    gb_key_add_str(kb, id->device);
    gb_key_add_str(kb, gb_sb_str(&shape));
    if (gb_sb_status(&shape)) kb->enc.failed = 1;
    gb_sb_free(&shape);
}

int gb_record_best_key(const gb_record_id *id, gb_key *out)
{
    gb_keybuf kb;
    gb_key_begin(&kb, "best");
    add_id(&kb, id);
    return gb_key_finish(&kb, out);
}

int gb_record_trial_key(const gb_record_id *id, const gb_fields *config, gb_key *out)
{
    gb_keybuf kb;
    gb_strbuf text = GB_STRBUF_INIT;
    gb_fields_append_canonical(&text, config, NULL, 0);
    gb_key_begin(&kb, "trial");
    add_id(&kb, id);
    gb_key_add_str(&kb, gb_sb_str(&text));
    if (gb_sb_status(&text)) kb.enc.failed = 1;
    gb_sb_free(&text);
    return gb_key_finish(&kb, out);
}

/* ---- JSON --------------------------------------------------------------- */

void gb_stats_write_json(gb_jw *w, const gb_stats *s)
{
    gb_jw_obj_begin(w);
    gb_jw_key(w, "n");
    gb_jw_int(w, s->n);
    const struct {
        const char *name;
        double value;
    } fields[] = {
        {"min_ms", s->min},       {"max_ms", s->max},       {"mean_ms", s->mean},
        {"stddev_ms", s->stddev}, {"median_ms", s->median}, {"q1_ms", s->q1},
        {"q3_ms", s->q3},         {"ci_lo_ms", s->ci_lo},   {"ci_hi_ms", s->ci_hi},
    };
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) {
        gb_jw_key(w, fields[i].name);
        gb_jw_num(w, fields[i].value);
    }
    gb_jw_obj_end(w);
}

void gb_stats_read_json(const gb_json *obj, gb_stats *out)
{
    out->n = (int)gb_json_num(gb_json_get(obj, "n"), 0);
    out->min = gb_json_num(gb_json_get(obj, "min_ms"), NAN);
    out->max = gb_json_num(gb_json_get(obj, "max_ms"), NAN);
    out->mean = gb_json_num(gb_json_get(obj, "mean_ms"), NAN);
    out->stddev = gb_json_num(gb_json_get(obj, "stddev_ms"), NAN);
    out->median = gb_json_num(gb_json_get(obj, "median_ms"), NAN);
    out->q1 = gb_json_num(gb_json_get(obj, "q1_ms"), NAN);
    out->q3 = gb_json_num(gb_json_get(obj, "q3_ms"), NAN);
    out->ci_lo = gb_json_num(gb_json_get(obj, "ci_lo_ms"), NAN);
    out->ci_hi = gb_json_num(gb_json_get(obj, "ci_hi_ms"), NAN);
}

static void write_id(gb_jw *w, const gb_record_id *id)
{
    gb_jw_key(w, "kernel");
    gb_jw_str(w, id->kernel);
    gb_jw_key(w, "kernel_fp");
    gb_jw_str(w, id->kernel_fp);
    gb_jw_key(w, "device");
    gb_jw_str(w, id->device);
    gb_jw_key(w, "shape");
    gb_fields_write_json(w, &id->shape);
}

static int read_id(const gb_json *json, gb_record_id *out, gb_err *err)
{
    const char *kernel = gb_json_str(gb_json_get(json, "kernel"), NULL);
    const char *fp = gb_json_str(gb_json_get(json, "kernel_fp"), NULL);
    const char *device = gb_json_str(gb_json_get(json, "device"), NULL);
    if (!kernel || !fp || !device)
        return gb_err_set(err, GB_ECACHE, "record lacks kernel, kernel_fp or device");
    *out =
        (gb_record_id){.kernel = strdup(kernel), .kernel_fp = strdup(fp), .device = strdup(device)};
    int rc = gb_fields_from_json(gb_json_get(json, "shape"), &out->shape, err);
    if (rc == GB_OK && (!out->kernel || !out->kernel_fp || !out->device))
        rc = gb_err_set(err, GB_ENOMEM, "out of memory");
    if (rc) gb_record_id_free(out);
    return rc ? gb_err_prefix(err, "record") : GB_OK;
}

static void write_num(gb_jw *w, const char *key, double v)
{
    gb_jw_key(w, key);
    gb_jw_num(w, v);
}

static void write_samples(gb_jw *w, const double *samples_ms, int n)
{
    gb_jw_key(w, "samples_ms");
    gb_jw_arr_begin(w);
    for (int i = 0; i < n; i++)
        gb_jw_num(w, samples_ms[i]);
    gb_jw_arr_end(w);
}

void gb_best_record_write(gb_jw *w, const gb_best_record *rec)
{
    gb_jw_obj_begin(w);
    write_id(w, &rec->id);
    gb_jw_key(w, "space_fp");
    gb_jw_str(w, rec->space_fp);
    gb_jw_key(w, "config");
    gb_fields_write_json(w, &rec->config);
    gb_jw_key(w, "stats");
    gb_stats_write_json(w, &rec->stats);
    gb_jw_key(w, "mode");
    gb_jw_str(w, rec->mode);
    write_num(w, "clock_mhz", rec->clock_mhz);
    write_num(w, "n_throttled", rec->n_throttled);
    gb_jw_key(w, "capped");
    gb_jw_bool(w, rec->capped);
    gb_jw_key(w, "contended");
    gb_jw_bool(w, rec->contended);
    write_samples(w, rec->samples_ms, rec->n_samples);
    gb_jw_key(w, "tie");
    gb_jw_arr_begin(w);
    for (int i = 0; i < rec->n_tie; i++)
        gb_jw_str(w, rec->tie[i]);
    gb_jw_arr_end(w);
    write_num(w, "n_leaders", rec->n_leaders);
    write_num(w, "flops", rec->flops);
    write_num(w, "bytes", rec->bytes);
    gb_jw_key(w, "baseline");
    if (rec->has_baseline)
        gb_stats_write_json(w, &rec->baseline);
    else
        gb_jw_null(w);
    gb_jw_key(w, "complete");
    gb_jw_bool(w, rec->complete);
    write_num(w, "n_configs", rec->n_configs);
    write_num(w, "n_rejected", rec->n_rejected);
    write_num(w, "n_timed", rec->n_timed);
    write_num(w, "n_failed", rec->n_failed);
    write_num(w, "when", (double)rec->when);
    gb_jw_key(w, "engine");
    gb_jw_str(w, rec->engine_version);
    gb_jw_key(w, "nvrtc");
    gb_jw_str(w, rec->nvrtc_version);
    write_num(w, "driver", rec->driver_version);
    gb_jw_key(w, "sources");
    gb_jw_arr_begin(w);
    for (int i = 0; i < rec->n_sources; i++) {
        gb_jw_obj_begin(w);
        gb_jw_key(w, "path");
        gb_jw_str(w, rec->sources[i].path);
        gb_jw_key(w, "hash");
        gb_jw_str(w, rec->sources[i].hash);
        gb_jw_obj_end(w);
    }
    gb_jw_arr_end(w);
    gb_jw_obj_end(w);
}

/* The source closure's files; entries without a path are dropped. */
static int read_sources(const gb_json *list, gb_best_record *out)
{
    size_t n = gb_json_len(list);
    if (n && !(out->sources = calloc(n, sizeof *out->sources))) return GB_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        const char *path = gb_json_str(gb_json_get(gb_json_at(list, i), "path"), NULL);
        if (!path) continue;
        gb_record_source *s = &out->sources[out->n_sources++];
        gb_strlcpy(s->hash, gb_json_str(gb_json_get(gb_json_at(list, i), "hash"), ""),
                   sizeof s->hash);
        if (!(s->path = strdup(path))) return GB_ENOMEM;
    }
    return GB_OK;
}

/* The measurement's details and the tie; all optional (older records lack them). */
static int read_measurement_fields(const gb_json *json, gb_best_record *out)
{
    gb_strlcpy(out->mode, gb_json_str(gb_json_get(json, "mode"), "cold"), sizeof out->mode);
    out->clock_mhz = gb_json_num(gb_json_get(json, "clock_mhz"), 0);
    out->n_throttled = (int)gb_json_num(gb_json_get(json, "n_throttled"), 0);
    out->capped = gb_json_bool(gb_json_get(json, "capped"), false);
    out->contended = gb_json_bool(gb_json_get(json, "contended"), false);
    out->n_leaders = (int)gb_json_num(gb_json_get(json, "n_leaders"), 0);
    const gb_json *samples = gb_json_get(json, "samples_ms"), *tie = gb_json_get(json, "tie");
    size_t n = gb_json_len(samples), t = gb_json_len(tie);
    if (n && !(out->samples_ms = malloc(n * sizeof *out->samples_ms))) return GB_ENOMEM;
    for (size_t i = 0; i < n; i++)
        out->samples_ms[out->n_samples++] = gb_json_num(gb_json_at(samples, i), NAN);
    if (t && !(out->tie = calloc(t, sizeof *out->tie))) return GB_ENOMEM;
    for (size_t i = 0; i < t; i++)
        if (!(out->tie[out->n_tie++] = strdup(gb_json_str(gb_json_at(tie, i), ""))))
            return GB_ENOMEM;
    return GB_OK;
}

int gb_best_record_read(const gb_json *json, gb_best_record *out, gb_err *err)
{
    memset(out, 0, sizeof *out);
    int rc = read_id(json, &out->id, err);
    if (rc) return rc;
    out->space_fp = strdup(gb_json_str(gb_json_get(json, "space_fp"), ""));
    rc = gb_fields_from_json(gb_json_get(json, "config"), &out->config, err);
    if (rc || !out->space_fp) {
        gb_best_record_free(out);
        return rc ? gb_err_prefix(err, "best record config") : GB_ENOMEM;
    }
    gb_stats_read_json(gb_json_get(json, "stats"), &out->stats);
    if (read_measurement_fields(json, out) != GB_OK) {
        gb_best_record_free(out);
        return gb_err_set(err, GB_ENOMEM, "out of memory");
    }
    out->flops = gb_json_num(gb_json_get(json, "flops"), 0);
    out->bytes = gb_json_num(gb_json_get(json, "bytes"), 0);
    const gb_json *base = gb_json_get(json, "baseline");
    out->has_baseline = base && base->type == GB_JSON_OBJECT;
    if (out->has_baseline) gb_stats_read_json(base, &out->baseline);
    out->complete = gb_json_bool(gb_json_get(json, "complete"), true);
    out->n_configs = (int)gb_json_num(gb_json_get(json, "n_configs"), 0);
    out->n_rejected = (int)gb_json_num(gb_json_get(json, "n_rejected"), 0);
    out->n_timed = (int)gb_json_num(gb_json_get(json, "n_timed"), 0);
    out->n_failed = (int)gb_json_num(gb_json_get(json, "n_failed"), 0);
    out->when = (int64_t)gb_json_num(gb_json_get(json, "when"), 0);
    gb_strlcpy(out->engine_version, gb_json_str(gb_json_get(json, "engine"), ""),
               sizeof out->engine_version);
    gb_strlcpy(out->nvrtc_version, gb_json_str(gb_json_get(json, "nvrtc"), ""),
               sizeof out->nvrtc_version);
    out->driver_version = (int)gb_json_num(gb_json_get(json, "driver"), 0);
    if (read_sources(gb_json_get(json, "sources"), out) != GB_OK) {
        gb_best_record_free(out);
        return gb_err_set(err, GB_ENOMEM, "out of memory");
    }
    return GB_OK;
}

void gb_best_record_free(gb_best_record *rec)
{
    if (!rec) return;
    gb_record_id_free(&rec->id);
    gb_fields_free(&rec->config);
    free(rec->space_fp);
    free(rec->samples_ms);
    for (int i = 0; i < rec->n_tie; i++)
        free(rec->tie[i]);
    free(rec->tie);
    for (int i = 0; i < rec->n_sources; i++)
        free(rec->sources[i].path);
    free(rec->sources);
    memset(rec, 0, sizeof *rec);
}

static void write_check(gb_jw *w, const gb_check_result *c)
{
    gb_jw_obj_begin(w);
    gb_jw_key(w, "checked");
    gb_jw_bool(w, c->checked);
    write_num(w, "n_bad", (double)c->n_bad);
    write_num(w, "n_compared", (double)c->n_compared);
    write_num(w, "max_abs_err", c->max_abs_err);
    write_num(w, "max_rel_err", c->max_rel_err);
    gb_jw_obj_end(w);
}

static void read_check(const gb_json *obj, gb_check_result *c)
{
    c->checked = gb_json_bool(gb_json_get(obj, "checked"), false);
    c->n_bad = (int64_t)gb_json_num(gb_json_get(obj, "n_bad"), 0);
    c->n_compared = (int64_t)gb_json_num(gb_json_get(obj, "n_compared"), 0);
    c->max_abs_err = gb_json_num(gb_json_get(obj, "max_abs_err"), NAN);
    c->max_rel_err = gb_json_num(gb_json_get(obj, "max_rel_err"), NAN);
    c->first_bad_output = -1;
}

void gb_trial_record_write(gb_jw *w, const gb_trial_record *rec)
{
    gb_jw_obj_begin(w);
    write_id(w, &rec->id);
    gb_jw_key(w, "config");
    gb_fields_write_json(w, &rec->config);
    gb_jw_key(w, "status");
    gb_jw_str(w, gb_trial_status_name(rec->status));
    gb_jw_key(w, "in_flight");
    gb_jw_bool(w, rec->in_flight);
    if (rec->in_flight) {
        write_num(w, "owner_pid", (double)rec->owner_pid);
        gb_jw_key(w, "owner_boot");
        gb_jw_str(w, rec->owner_boot);
    }
    gb_jw_key(w, "reason");
    gb_jw_str(w, rec->reason ? rec->reason : "");
    gb_jw_key(w, "check");
    write_check(w, &rec->check);
    gb_jw_key(w, "stats");
    if (rec->has_stats) {
        gb_stats_write_json(w, &rec->stats);
        gb_jw_key(w, "mode");
        gb_jw_str(w, rec->mode[0] ? rec->mode : "cold");
        write_num(w, "clock_mhz", rec->clock_mhz);
        gb_jw_key(w, "contended");
        gb_jw_bool(w, rec->contended);
        write_samples(w, rec->samples_ms, rec->n_samples);
    } else {
        gb_jw_null(w);
    }
    write_num(w, "registers", rec->registers);
    if (rec->cubin[0]) {
        gb_jw_key(w, "cubin");
        gb_jw_str(w, rec->cubin);
    }
    if (rec->log) {
        char log[16384];
        gb_strlcpy(log, rec->log, sizeof log);
        gb_jw_key(w, "log");
        gb_jw_str(w, log);
    }
    write_num(w, "when", (double)rec->when);
    gb_jw_obj_end(w);
}

int gb_trial_record_read(const gb_json *json, gb_trial_record *out, gb_err *err)
{
    memset(out, 0, sizeof *out);
    int rc = read_id(json, &out->id, err);
    if (rc) return rc;
    if ((rc = gb_fields_from_json(gb_json_get(json, "config"), &out->config, err))) {
        gb_trial_record_free(out);
        return gb_err_prefix(err, "trial record config");
    }
    const char *status = gb_json_str(gb_json_get(json, "status"), "");
    if (gb_trial_status_parse(status, &out->status) != GB_OK) {
        gb_trial_record_free(out);
        return gb_err_set(err, GB_ECACHE, "trial record has an unknown status '%s'", status);
    }
    out->in_flight = gb_json_bool(gb_json_get(json, "in_flight"), false);
    out->owner_pid = (int64_t)gb_json_num(gb_json_get(json, "owner_pid"), 0);
    gb_strlcpy(out->owner_boot, gb_json_str(gb_json_get(json, "owner_boot"), ""),
               sizeof out->owner_boot);
    out->reason = strdup(gb_json_str(gb_json_get(json, "reason"), ""));
    read_check(gb_json_get(json, "check"), &out->check);
    const gb_json *stats = gb_json_get(json, "stats");
    out->has_stats = stats && stats->type == GB_JSON_OBJECT;
    if (out->has_stats) gb_stats_read_json(stats, &out->stats);
    gb_strlcpy(out->mode, gb_json_str(gb_json_get(json, "mode"), "cold"), sizeof out->mode);
    out->clock_mhz = gb_json_num(gb_json_get(json, "clock_mhz"), 0);
    out->contended = gb_json_bool(gb_json_get(json, "contended"), false);
    out->registers = (int)gb_json_num(gb_json_get(json, "registers"), -1);
    gb_strlcpy(out->cubin, gb_json_str(gb_json_get(json, "cubin"), ""), sizeof out->cubin);
    const gb_json *samples = gb_json_get(json, "samples_ms");
    size_t n = gb_json_len(samples);
    if (n && !(out->samples_ms = malloc(n * sizeof *out->samples_ms))) {
        gb_trial_record_free(out);
        return GB_ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        out->samples_ms[out->n_samples++] = gb_json_num(gb_json_at(samples, i), NAN);
    const char *log = gb_json_str(gb_json_get(json, "log"), NULL);
    if (log && !(out->log = strdup(log))) {
        gb_trial_record_free(out);
        return GB_ENOMEM;
    }
    out->when = (int64_t)gb_json_num(gb_json_get(json, "when"), 0);
    return out->reason ? GB_OK : GB_ENOMEM;
}

void gb_trial_record_free(gb_trial_record *rec)
{
    if (!rec) return;
    gb_record_id_free(&rec->id);
    gb_fields_free(&rec->config);
    free(rec->reason);
    free(rec->log);
    free(rec->samples_ms);
    memset(rec, 0, sizeof *rec);
}
