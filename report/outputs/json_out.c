/*
 * The JSON output: a run as one document that Google Benchmark's tools read
 * (tools/compare.py compares two of them) and that `gpubench report` reads back
 * (report/outputs/json_load.c). docs/report-json.md is the schema as a user reads it.
 *
 * Entries are collected as the run goes and the whole document is written at
 * end, through a temporary file renamed into place (gb_export_save), so an
 * interrupted run never leaves half a file. Every figure is written so that
 * reading it back and writing again gives the same text: doubles with 17
 * significant digits, NaN and infinities as null (as json_load.c reads them), and
 * derived figures (tflops, speedup, percent of peak) computed only from what the
 * document itself holds.
 */
#include "base/json.h"
#include "report/export/export.h"
#include "report/output.h"
#include "report/outputs/json_parts.h"
#include "report/outputs/json_rows.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct json_out {
    gb_output base;
    char *path;
    const gb_run_context *ctx; /* from begin to end */
    json_t *benchmarks;
    json_t *compiles; /* a compile-only call's rows, per call (gb_json_compile_call) */
    int n_families;   /* (kernel, shape) entries so far */
} json_out;

/* ---- values ------------------------------------------------------------------- */

/* A figure that is 0 when unknown: null then. */
static json_t *known(double v)
{
    return v != 0 ? gb_json_real(v) : json_null();
}

static json_t *text_or_null(const char *s)
{
    return s && *s ? gb_json_text(s, 0) : json_null();
}

/* ---- the context ------------------------------------------------------------------ */

static json_t *math_object(const double *per_math)
{
    json_t *o = json_object();
    for (int m = 0; o && m < GB_MATH_COUNT; m++)
        if (gb_json_set(o, gb_math_name((gb_math)m), known(per_math[m]))) {
            json_decref(o);
            return NULL;
        }
    return o;
}

json_t *gb_json_roofs(const gb_roofs *r)
{
    json_t *o = json_object();
    if (!o || gb_json_set(o, "peak_gbps", known(r->peak_gbps)) ||
        gb_json_set(o, "peak_tflops", math_object(r->peak_tflops)) ||
        gb_json_set(o, "ceiling_gbps", known(r->ceiling_gbps)) ||
        gb_json_set(o, "ceiling_tflops", math_object(r->ceiling_tflops))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *gb_json_device(const gb_device_info *d)
{
    char cc[16];
    snprintf(cc, sizeof cc, "%d.%d", d->cc_major, d->cc_minor);
    json_t *o = json_object();
    if (!o || gb_json_set(o, "name", gb_json_text(d->name, 0)) ||
        gb_json_set(o, "cc", json_string(cc)) || gb_json_set(o, "sms", json_integer(d->sms)) ||
        gb_json_set(o, "sm_clock_mhz", gb_json_real(d->sm_clock_khz / 1e3)) ||
        gb_json_set(o, "mem_clock_mhz", gb_json_real(d->mem_clock_khz / 1e3)) ||
        gb_json_set(o, "bus_width_bits", json_integer(d->bus_width_bits)) ||
        gb_json_set(o, "l2_bytes", json_integer(d->l2_bytes)) ||
        gb_json_set(o, "mem_bytes", json_integer(d->mem_bytes)) ||
        gb_json_set(o, "clock_source", text_or_null(d->clock_source)) ||
        gb_json_set(o, "timer", text_or_null(d->timer)) ||
        gb_json_set(o, "timer_note", text_or_null(d->timer_note)) ||
        gb_json_set(o, "uuid", text_or_null(d->uuid)) ||
        gb_json_set(o, "pci_bus_id", text_or_null(d->pci_bus_id))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* The driver's version as CUDA numbers it (13000) written as "13.0". */
static json_t *driver_json(const gb_run_context *c)
{
    int v = c->has_device ? c->device.driver_version : 0;
    if (v <= 0) return json_null();
    char text[32];
    snprintf(text, sizeof text, "%d.%d", v / 1000, v % 1000 / 10);
    return json_string(text);
}

json_t *gb_json_context(const gb_run_context *c)
{
    json_t *o = json_object();
    if (!o || gb_json_set(o, "date", text_or_null(c->date)) ||
        gb_json_set(o, "host_name", text_or_null(c->host_name)) ||
        gb_json_set(o, "executable", text_or_null(c->executable)) ||
        gb_json_set(o, "num_cpus", json_integer(c->num_cpus)) ||
        gb_json_set(o, "library_build_type", json_string("release")) ||
        gb_json_set(o, "gpubench_version", text_or_null(c->engine_version)) ||
        gb_json_set(o, "schema_version", json_integer(GB_REPORT_SCHEMA_VERSION)) ||
        gb_json_set(o, "command_line", text_or_null(c->command_line)) ||
        gb_json_set(o, "script", text_or_null(c->script)) ||
        gb_json_set(o, "nvrtc_version", text_or_null(c->nvrtc_version)) ||
        gb_json_set(o, "driver_version", driver_json(c)) ||
        gb_json_set(o, "arch", text_or_null(c->arch)) ||
        gb_json_set(o, "compile_only", json_boolean(c->compile_only)) ||
        gb_json_set(o, "device", c->has_device ? gb_json_device(&c->device) : json_null()) ||
        gb_json_set(o, "roofs", gb_json_roofs(&c->roofs))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* ---- one benchmark entry ------------------------------------------------------------ */

/* What Google Benchmark's fields of a row show; the rest of the row is its view
 * of the result (report/outputs/json_rows.h). */
typedef struct row {
    const char *part;  /* the name's last part: "best", "reference", the config */
    const char *error; /* no time: why (error_message) */
    bool timed;
    const gb_stats *stats;
} row;

/* Google Benchmark's fields: an aggregate (the median) of one repetition, its
 * iterations the samples kept, its time the median in microseconds. real_time and
 * cpu_time are both the GPU time: we measure nothing on the CPU. */
static int benchmark_fields(json_t *o, const char *name, int family, int instance, const row *r)
{
    int rc = gb_json_set(o, "name", json_string(name)) ||
             gb_json_set(o, "family_index", json_integer(family)) ||
             gb_json_set(o, "per_family_instance_index", json_integer(instance)) ||
             gb_json_set(o, "run_name", json_string(name)) ||
             gb_json_set(o, "run_type", json_string("aggregate")) ||
             gb_json_set(o, "repetitions", json_integer(1)) ||
             gb_json_set(o, "repetition_index", json_integer(0)) ||
             gb_json_set(o, "threads", json_integer(1)) ||
             gb_json_set(o, "aggregate_name", json_string("median"));
    if (!rc && !r->timed)
        rc = gb_json_set(o, "error_occurred", json_true()) ||
             gb_json_set(o, "error_message", gb_json_text(r->error, 0));
    if (!rc) rc = gb_json_set(o, "iterations", json_integer(r->timed ? r->stats->n : 0));
    /* A row without a time says 0, as Google Benchmark writes an errored run, so
     * that compare.py can set it against a row that has one. */
    double us = r->timed ? r->stats->median * 1e3 : 0;
    if (!rc)
        rc = gb_json_set(o, "real_time", gb_json_real(us)) ||
             gb_json_set(o, "cpu_time", gb_json_real(us));
    if (!rc) rc = gb_json_set(o, "time_unit", json_string("us"));
    return rc ? GB_ENOMEM : GB_OK;
}

/* Appends a row: Google Benchmark's fields, then view's of obj. */
static int add_row(json_out *j, int instance, const row *r, const gb_wire_type *view,
                   const void *obj, const gb_json_row_ctx *ctx)
{
    const gb_report_entry *e = ctx->entry;
    gb_strbuf name = GB_STRBUF_INIT;
    gb_sb_printf(&name, "%s/%s/%s", e->kernel, e->result->key_text, r->part);
    json_t *o = json_object();
    int rc = !o || gb_sb_status(&name) ? GB_ENOMEM : GB_OK;
    if (!rc) rc = benchmark_fields(o, gb_sb_str(&name), j->n_families, instance, r);
    if (!rc) rc = gb_wire_encode_into(view, obj, ctx, o);
    gb_sb_free(&name);
    if (rc) {
        json_decref(o);
        return rc;
    }
    return json_array_append_new(j->benchmarks, o) ? GB_ENOMEM : GB_OK;
}

/* The best's status is the entry's outcome, its reason the outcome's sentence
 * (report/result.h: the words every output uses). */
static int add_best(json_out *j, const gb_report_entry *e)
{
    const gb_shape_result *s = e->result;
    const char *status = gb_outcome_name(gb_entry_outcome(e));
    gb_strbuf why = GB_STRBUF_INIT;
    gb_entry_reason(e, &why);
    row r = {.part = "best",
             .error = why.len ? gb_sb_str(&why) : status,
             .timed = s->has_best,
             .stats = &s->best};
    gb_json_row_ctx ctx = {.entry = (gb_report_entry *)e,
                           .roofs = &j->ctx->roofs,
                           .status = status,
                           .reason = gb_sb_str(&why)};
    int rc = gb_sb_status(&why) ? GB_ENOMEM : add_row(j, 0, &r, &gb_wire_best_row, s, &ctx);
    gb_sb_free(&why);
    return rc;
}

static int add_baseline(json_out *j, const gb_report_entry *e, int instance)
{
    row r = {.part = "reference", .timed = true, .stats = &e->result->baseline.stats};
    gb_json_row_ctx ctx = {.entry = (gb_report_entry *)e};
    return add_row(j, instance, &r, &gb_wire_baseline_row, e->result, &ctx);
}

static int add_trial(json_out *j, const gb_report_entry *e, const gb_trial_note *t, int instance)
{
    const char *status = gb_trial_status_name(t->status);
    row r = {.part = t->config_text,
             .error = t->reason && *t->reason ? t->reason : status,
             .timed = t->status == GB_TRIAL_OK,
             .stats = &t->measurement.stats};
    gb_json_row_ctx ctx = {.entry = (gb_report_entry *)e};
    return add_row(j, instance, &r, &gb_wire_trial_row, t, &ctx);
}

/* ---- a compile-only call's rows ---------------------------------------------------------- */

static json_t *bytes_or_null(int v)
{
    return v >= 0 ? json_integer(v) : json_null();
}

static json_t *compile_row_json(const gb_compile_row *c)
{
    char reason[1024];
    const gb_resources *res = &c->resources;
    bool built = !c->error;
    json_t *o = json_object();
    if (!o || gb_json_set(o, "config", gb_fields_to_json(&c->config)) ||
        gb_json_set(o, "status", json_string(gb_compile_row_status(c))) ||
        gb_json_set(o, "reason",
                    gb_json_text(gb_compile_row_reason(c, reason, sizeof reason), 0)) ||
        gb_json_set(o, "registers", built ? json_integer(res->registers) : json_null()) ||
        gb_json_set(o, "stack_bytes", built ? json_integer(res->stack_bytes) : json_null()) ||
        gb_json_set(o, "spill_store_bytes",
                    built ? bytes_or_null(res->spill_store_bytes) : json_null()) ||
        gb_json_set(o, "spill_load_bytes",
                    built ? bytes_or_null(res->spill_load_bytes) : json_null()) ||
        gb_json_set(o, "smem_static_bytes",
                    built ? json_integer(res->smem_static_bytes) : json_null()) ||
        gb_json_set(o, "compile_ms", gb_json_real(c->compile_ms)) ||
        gb_json_set(o, "error", text_or_null(c->error))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *gb_json_compile_call(const char *kernel, const gb_tune_result *call, int first_family)
{
    json_t *rows = json_array();
    for (int i = 0; rows && i < call->n_compiles; i++)
        if (json_array_append_new(rows, compile_row_json(&call->compiles[i])))
            json_decref(rows), rows = NULL;
    json_t *o = rows ? json_object() : NULL;
    if (!o || gb_json_set(o, "kernel", gb_json_text(kernel, 0)) ||
        gb_json_set(o, "kernel_fp", text_or_null(call->kernel_fp)) ||
        gb_json_set(o, "arch", text_or_null(call->arch)) ||
        gb_json_set(o, "reference_lib", text_or_null(call->reference_lib)) ||
        gb_json_set(o, "first_family", json_integer(first_family)) ||
        gb_json_set(o, "families", json_integer(call->n_shapes)) ||
        gb_json_set(o, "nvrtc_s", gb_json_real(call->timing.compile_cpu_s)) ||
        gb_json_set(o, "compile_threads", json_integer(call->timing.compile_threads)) ||
        gb_json_set(o, "rows", json_incref(rows))) {
        json_decref(o);
        o = NULL;
    }
    json_decref(rows);
    return o;
}

/* ---- the output ------------------------------------------------------------------------ */

static int json_begin(gb_output *o, const gb_run_context *ctx, gb_err *err)
{
    (void)err;
    ((json_out *)o)->ctx = ctx;
    return GB_OK;
}

static int json_shape(gb_output *o, const gb_report_entry *e, gb_err *err)
{
    json_out *j = (json_out *)o;
    const gb_shape_result *s = e->result;
    if (!j->ctx)
        return gb_err_set(err, GB_EINVAL, "%s: an entry before the run's context", j->path);
    int instance = 0;
    int rc = add_best(j, e);
    instance++;
    if (!rc && s->has_baseline) rc = add_baseline(j, e, instance++);
    for (int i = 0; !rc && i < s->n_trials; i++)
        rc = add_trial(j, e, &s->trials[i], instance++);
    j->n_families++;
    return rc ? gb_err_set(err, rc, "%s: out of memory", j->path) : GB_OK;
}

static int json_call_end(gb_output *o, const char *kernel, const gb_tune_result *call, gb_err *err)
{
    json_out *j = (json_out *)o;
    if (!call->compile_only) return GB_OK;
    /* the call's entries are the last of the run's */
    json_t *c = gb_json_compile_call(kernel, call, j->n_families - call->n_shapes);
    if (!c || json_array_append_new(j->compiles, c))
        return gb_err_set(err, GB_ENOMEM, "%s: out of memory", j->path);
    return GB_OK;
}

static int json_end(gb_output *o, gb_err *err)
{
    json_out *j = (json_out *)o;
    if (!j->ctx)
        return gb_err_set(err, GB_EINVAL, "%s: the run has no context (end before begin)", j->path);
    json_t *doc = json_object();
    int rc = !doc || gb_json_set(doc, "context", gb_json_context(j->ctx)) ||
             gb_json_set(doc, "benchmarks", json_incref(j->benchmarks)) ||
             gb_json_set(doc, "compiles", json_incref(j->compiles));
    char *text = rc ? NULL : gb_json_dump(doc, true);
    json_decref(doc);
    if (!text) return gb_err_set(err, GB_ENOMEM, "%s: out of memory", j->path);
    size_t len = strlen(text);
    char *grown = realloc(text, len + 2); /* a text file ends with a newline */
    if (!grown) return free(text), gb_err_set(err, GB_ENOMEM, "%s: out of memory", j->path);
    grown[len] = '\n';
    grown[len + 1] = '\0';
    bool unchanged;
    rc = gb_export_save(j->path, grown, len + 1, &unchanged, err);
    free(grown);
    return rc;
}

static void json_destroy(gb_output *o)
{
    json_out *j = (json_out *)o;
    json_decref(j->benchmarks);
    json_decref(j->compiles);
    free(j->path);
    free(j);
}

static const gb_output_ops json_ops = {
    .name = "json",
    .begin = json_begin,
    .shape = json_shape,
    .call_end = json_call_end,
    .end = json_end,
    .destroy = json_destroy,
};

int gb_output_json(const char *path, gb_output **out, gb_err *err)
{
    json_out *j = calloc(1, sizeof *j);
    if (j) j->path = strdup(path);
    if (j) j->benchmarks = json_array();
    if (j) j->compiles = json_array();
    if (!j || !j->path || !j->benchmarks || !j->compiles) {
        if (j) json_destroy(&j->base);
        return gb_err_set(err, GB_ENOMEM, "out of memory");
    }
    j->base.ops = &json_ops;
    *out = &j->base;
    return GB_OK;
}
