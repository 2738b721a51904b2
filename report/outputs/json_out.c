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
 * document itself holds. What each part holds is its wire view: the rows'
 * (report/outputs/json_rows.h), the context's and the compile-only calls'
 * (report/outputs/json_parts.h).
 */
#include "base/json.h"
#include "report/export/export.h"
#include "report/output.h"
#include "report/outputs/json_parts.h"
#include "report/outputs/json_rows.h"

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
