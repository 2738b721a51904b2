/*
 * Reading a run back from the JSON that report/outputs/json_out.c wrote, into the result
 * model (report/result.h), so that every output renders a saved run as it
 * rendered the live one.
 *
 * The file may come from anywhere (another machine, an edited copy, a newer
 * gpubench), so nothing is trusted: every field is looked up with its type
 * checked, and the first one that is missing or of the wrong kind is the error,
 * naming the file and the field's path ("run.json: benchmarks[3].samples_ms:
 * expected a list of numbers"). Fields the writer derives (names, Google
 * Benchmark's times, tflops, speedup, percent of peak) are not read: they are
 * computed again from what is read. Fields this reader does not know are
 * ignored, so a later writer may add some without a new schema version.
 *
 * The benchmarks list is flat: an entry's "best" starts it, its "baseline" and
 * "trial" rows follow. The loader groups them back, reading each row through its
 * wire view (report/outputs/json_rows.h), the same lists the writer uses.
 */
#include "base/json.h"
#include "report/outputs/json_read.h"
#include "report/outputs/json_rows.h"
#include "report/result.h"

#include "base/file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the context ------------------------------------------------------------------ */

/* "13.0" -> 13000, as CUDA numbers versions; null -> 0. */
static int read_driver(gb_reader *r, const json_t *o, const char *where, int *out)
{
    char text[32];
    int major, minor;
    char extra;
    int rc = gb_read_chars(r, o, where, "driver_version", text, sizeof text);
    if (rc || !*text) return rc;
    if (sscanf(text, "%d.%d%c", &major, &minor, &extra) != 2 || major < 0 || minor < 0 ||
        minor > 99 || major > 1000000)
        return gb_read_bad(r, where, "driver_version", "expected a version like \"13.0\"");
    *out = major * 1000 + minor * 10;
    return GB_OK;
}

static int read_cc(gb_reader *r, const json_t *o, const char *where, gb_device_info *d)
{
    char text[16];
    char extra;
    int rc = gb_read_chars(r, o, where, "cc", text, sizeof text);
    if (!rc && (sscanf(text, "%d.%d%c", &d->cc_major, &d->cc_minor, &extra) != 2 ||
                d->cc_major < 0 || d->cc_minor < 0))
        rc = gb_read_bad(r, where, "cc", "expected a compute capability like \"9.0\"");
    return rc;
}

/* MHz as written -> the kHz the device info keeps. */
static int read_khz(gb_reader *r, const json_t *o, const char *where, const char *key, int *out)
{
    double mhz;
    int rc = gb_read_num(r, o, where, key, GB_READ_REQUIRED, &mhz);
    if (!rc && !(mhz >= 0 && mhz < 2e6)) rc = gb_read_bad(r, where, key, "out of range");
    if (!rc) *out = (int)(mhz * 1e3 + 0.5);
    return rc;
}

static int read_device(gb_reader *r, const json_t *o, const char *where, gb_device_info *d)
{
    int64_t sms, bus, l2, mem;
    int rc = gb_read_chars(r, o, where, "name", d->name, sizeof d->name);
    if (!rc) rc = read_cc(r, o, where, d);
    if (!rc) rc = gb_read_int(r, o, where, "sms", 0, INT32_MAX, &sms);
    if (!rc) rc = read_khz(r, o, where, "sm_clock_mhz", &d->sm_clock_khz);
    if (!rc) rc = read_khz(r, o, where, "mem_clock_mhz", &d->mem_clock_khz);
    if (!rc) rc = gb_read_int(r, o, where, "bus_width_bits", 0, INT32_MAX, &bus);
    if (!rc) rc = gb_read_int(r, o, where, "l2_bytes", 0, INT64_MAX, &l2);
    if (!rc) rc = gb_read_int(r, o, where, "mem_bytes", 0, INT64_MAX, &mem);
    if (!rc)
        rc = gb_read_chars(r, o, where, "clock_source", d->clock_source, sizeof d->clock_source);
    if (!rc && json_object_get(o, "timer")) /* files from before CUPTI timing lack them */
        rc = gb_read_chars(r, o, where, "timer", d->timer, sizeof d->timer);
    if (!rc && json_object_get(o, "timer_note"))
        rc = gb_read_chars(r, o, where, "timer_note", d->timer_note, sizeof d->timer_note);
    if (!rc) rc = gb_read_chars(r, o, where, "uuid", d->uuid, sizeof d->uuid);
    if (!rc) rc = gb_read_chars(r, o, where, "pci_bus_id", d->pci_bus_id, sizeof d->pci_bus_id);
    if (rc) return rc;
    d->sms = (int)sms;
    d->bus_width_bits = (int)bus;
    d->l2_bytes = l2;
    d->mem_bytes = mem;
    return GB_OK;
}

/* {"fp32": ..., "int8": ...}, null for unknown (0). */
static int read_per_math(gb_reader *r, const json_t *o, const char *where, const char *key,
                         double *out)
{
    const json_t *per;
    char at[256];
    int rc = gb_read_object(r, o, where, key, &per);
    snprintf(at, sizeof at, "%s.%s", where, key);
    for (int m = 0; !rc && m < GB_MATH_COUNT; m++)
        rc = gb_read_num(r, per, at, gb_math_name((gb_math)m), GB_READ_NULL_ZERO, &out[m]);
    return rc;
}

static int read_roofs(gb_reader *r, const json_t *o, const char *where, gb_roofs *out)
{
    int rc = gb_read_num(r, o, where, "peak_gbps", GB_READ_NULL_ZERO, &out->peak_gbps);
    if (!rc) rc = read_per_math(r, o, where, "peak_tflops", out->peak_tflops);
    if (!rc) rc = gb_read_num(r, o, where, "ceiling_gbps", GB_READ_NULL_ZERO, &out->ceiling_gbps);
    if (!rc) rc = read_per_math(r, o, where, "ceiling_tflops", out->ceiling_tflops);
    return rc;
}

static int read_version(gb_reader *r, const json_t *o, gb_run_context *c)
{
    int64_t version;
    int rc = gb_read_int(r, o, "context", "schema_version", 0, INT32_MAX, &version);
    if (!rc && version != GB_REPORT_SCHEMA_VERSION) {
        char what[128];
        snprintf(what, sizeof what, "version %lld is not one this gpubench reads (%d)",
                 (long long)version, GB_REPORT_SCHEMA_VERSION);
        rc = gb_read_bad(r, "context", "schema_version", what);
    }
    c->schema_version = (int)version;
    return rc;
}

static int read_strings(gb_reader *r, const json_t *o, gb_run_context *c)
{
    int64_t cpus;
    const char *w = "context";
    int rc = gb_read_str(r, o, w, "date", GB_READ_NULLABLE, &c->date);
    if (!rc) rc = gb_read_str(r, o, w, "host_name", GB_READ_NULLABLE, &c->host_name);
    if (!rc) rc = gb_read_str(r, o, w, "executable", GB_READ_NULLABLE, &c->executable);
    if (!rc) rc = gb_read_int(r, o, w, "num_cpus", 0, INT32_MAX, &cpus);
    if (!rc) rc = gb_read_str(r, o, w, "gpubench_version", GB_READ_NULLABLE, &c->engine_version);
    if (!rc) rc = gb_read_str(r, o, w, "command_line", GB_READ_NULLABLE, &c->command_line);
    if (!rc) rc = gb_read_str(r, o, w, "script", GB_READ_NULLABLE, &c->script);
    if (!rc)
        rc = gb_read_chars(r, o, w, "nvrtc_version", c->nvrtc_version, sizeof c->nvrtc_version);
    if (!rc) rc = gb_read_chars(r, o, w, "arch", c->arch, sizeof c->arch);
    if (!rc) rc = gb_read_bool(r, o, w, "compile_only", &c->compile_only);
    if (!rc) c->num_cpus = (int)cpus;
    return rc;
}

static int read_context(gb_reader *r, const json_t *doc, gb_run_context *c)
{
    const json_t *o, *device;
    int rc = gb_read_object(r, doc, NULL, "context", &o);
    if (!rc) rc = read_version(r, o, c);
    if (!rc) rc = read_strings(r, o, c);
    if (!rc) rc = gb_read_field(r, o, "context", "device", &device);
    if (!rc && !json_is_null(device) && !json_is_object(device))
        rc = gb_read_bad(r, "context", "device", "expected an object or null");
    c->has_device = !rc && json_is_object(device);
    if (!rc && c->has_device) rc = read_device(r, device, "context.device", &c->device);
    if (!rc && c->has_device) rc = read_driver(r, o, "context", &c->device.driver_version);
    if (!rc) rc = gb_read_object(r, o, "context", "roofs", &o);
    if (!rc) rc = read_roofs(r, o, "context.roofs", &c->roofs);
    if (!rc && c->has_device) {
        c->device.peak_gbps = c->roofs.peak_gbps;
        memcpy(c->device.arch, c->arch, sizeof c->arch);
    }
    return rc;
}

/* ---- the benchmarks ---------------------------------------------------------------- */

/* A new entry, counted at once so that gb_report_free frees it after an error. */
static int new_entry(gb_reader *r, gb_report *report, gb_report_entry **out)
{
    gb_report_entry *grown =
        realloc(report->entries, (size_t)(report->n_entries + 1) * sizeof *grown);
    if (!grown) return gb_err_set(r->err, GB_ENOMEM, "%s: out of memory", r->file);
    report->entries = grown;
    gb_report_entry *e = &grown[report->n_entries];
    *e = (gb_report_entry){0};
    gb_shape_result *s = calloc(1, sizeof *s);
    if (!s) return gb_err_set(r->err, GB_ENOMEM, "%s: out of memory", r->file);
    e->result = s;
    report->n_entries++;
    *out = e;
    return GB_OK;
}

/* A row into obj through its view (report/outputs/json_rows.h). */
static int read_view(gb_reader *r, const gb_wire_type *view, const json_t *row, const char *where,
                     void *obj, gb_report_entry *e)
{
    gb_json_row_ctx ctx = {.entry = e};
    int rc = gb_wire_read(view, row, obj, &ctx, where, r->err);
    return rc ? gb_err_prefix(r->err, "%s", r->file) : GB_OK;
}

/* The shape's key text, from the best's name "<kernel>/<key>/best". */
static int read_key_text(gb_reader *r, const json_t *row, const char *where,
                         const gb_report_entry *e, gb_shape_result *s)
{
    char *name;
    int rc = gb_read_str(r, row, where, "name", GB_READ_REQUIRED, &name);
    if (rc) return rc;
    size_t len = strlen(name), k = strlen(e->kernel), tail = strlen("/best");
    if (len < k + 1 + tail || strncmp(name, e->kernel, k) != 0 || name[k] != '/' ||
        strcmp(name + len - tail, "/best") != 0) {
        free(name);
        return gb_read_bad(r, where, "name", "expected \"<kernel>/<shape>/best\"");
    }
    name[len - tail] = '\0';
    s->key_text = strdup(name + k + 1);
    free(name);
    return s->key_text ? GB_OK : gb_err_set(r->err, GB_ENOMEM, "%s: out of memory", r->file);
}

static int read_best(gb_reader *r, const json_t *row, const char *where, gb_report *report)
{
    gb_report_entry *e = NULL;
    int rc = new_entry(r, report, &e);
    if (rc) return rc;
    gb_shape_result *s = (gb_shape_result *)e->result;
    rc = read_view(r, &gb_wire_best_row, row, where, s, e);
    return rc ? rc : read_key_text(r, row, where, e, s);
}

static int read_trial(gb_reader *r, const json_t *row, const char *where, gb_report_entry *e)
{
    gb_shape_result *s = (gb_shape_result *)e->result;
    gb_trial_note *grown = realloc(s->trials, (size_t)(s->n_trials + 1) * sizeof *grown);
    if (!grown) return gb_err_set(r->err, GB_ENOMEM, "%s: out of memory", r->file);
    s->trials = grown;
    gb_trial_note *t = &grown[s->n_trials++]; /* freed with the entry, whole or not */
    *t = (gb_trial_note){0};
    return read_view(r, &gb_wire_trial_row, row, where, t, e);
}

static int read_row(gb_reader *r, const json_t *row, const char *where, gb_report *report)
{
    char role[16];
    int rc = gb_read_chars(r, row, where, "role", role, sizeof role);
    gb_report_entry *e = report->n_entries ? &report->entries[report->n_entries - 1] : NULL;
    if (rc) return rc;
    if (strcmp(role, "best") == 0) return read_best(r, row, where, report);
    if (strcmp(role, "baseline") != 0 && strcmp(role, "trial") != 0)
        return gb_read_bad(r, where, "role", "expected \"best\", \"baseline\" or \"trial\"");
    if (!e) return gb_read_bad(r, where, "role", "a row before its entry's \"best\"");
    gb_shape_result *s = (gb_shape_result *)e->result;
    if (role[0] == 't') return read_trial(r, row, where, e);
    if (s->has_baseline) return gb_read_bad(r, where, "role", "a second baseline for one entry");
    s->has_baseline = true; /* set first: what was read is freed with the entry */
    return read_view(r, &gb_wire_baseline_row, row, where, s, e);
}

static int read_benchmarks(gb_reader *r, const json_t *doc, gb_report *report)
{
    const json_t *list;
    int rc = gb_read_field(r, doc, NULL, "benchmarks", &list);
    if (!rc && !json_is_array(list)) rc = gb_read_bad(r, NULL, "benchmarks", "expected a list");
    for (size_t i = 0; !rc && i < json_array_size(list); i++) {
        char where[64];
        snprintf(where, sizeof where, "benchmarks[%zu]", i);
        const json_t *row = json_array_get(list, i);
        if (!json_is_object(row)) return gb_read_bad(r, where, NULL, "expected an object");
        rc = read_row(r, row, where, report);
    }
    return rc;
}

/* ---- the compile-only calls -------------------------------------------------------- */

static int read_bytes(gb_reader *r, const json_t *o, const char *where, const char *key, int *out)
{
    double v;
    int rc = gb_read_num(r, o, where, key, GB_READ_NULLABLE, &v);
    if (!rc && v == v && !(v >= 0 && v <= INT32_MAX))
        rc = gb_read_bad(r, where, key, "expected a count of bytes or null");
    if (!rc) *out = v == v ? (int)v : -1;
    return rc;
}

static int read_compile_row(gb_reader *r, const json_t *o, const char *where, gb_compile_row *row)
{
    char status[32];
    int rc = gb_read_fields(r, o, where, "config", &row->config);
    if (!rc) rc = gb_read_chars(r, o, where, "status", status, sizeof status);
    if (!rc) rc = gb_read_str(r, o, where, "error", GB_READ_NULLABLE, &row->error);
    if (!rc && !strcmp(status, "over limits"))
        rc = gb_read_str(r, o, where, "reason", GB_READ_REQUIRED, &row->limit);
    row->cached = !strcmp(status, "cache");
    if (!rc && strcmp(gb_compile_row_status(row), status))
        rc = gb_read_bad(r, where, "status",
                         "expected \"compiled\", \"cache\", \"over limits\" or \"compile_error\" "
                         "(with an error)");
    gb_resources *res = &row->resources;
    if (!rc) rc = read_bytes(r, o, where, "registers", &res->registers);
    if (!rc) rc = read_bytes(r, o, where, "stack_bytes", &res->stack_bytes);
    if (!rc) rc = read_bytes(r, o, where, "spill_store_bytes", &res->spill_store_bytes);
    if (!rc) rc = read_bytes(r, o, where, "spill_load_bytes", &res->spill_load_bytes);
    if (!rc) rc = read_bytes(r, o, where, "smem_static_bytes", &res->smem_static_bytes);
    if (!rc) rc = gb_read_num(r, o, where, "compile_ms", GB_READ_REQUIRED, &row->compile_ms);
    return rc;
}

static int read_call_rows(gb_reader *r, const json_t *o, const char *where, gb_tune_result *call)
{
    const json_t *list;
    char at[96];
    int rc = gb_read_field(r, o, where, "rows", &list);
    if (!rc && !json_is_array(list)) rc = gb_read_bad(r, where, "rows", "expected a list");
    size_t n = rc ? 0 : json_array_size(list);
    if (n && !(call->compiles = calloc(n, sizeof *call->compiles)))
        return gb_err_set(r->err, GB_ENOMEM, "%s: out of memory", r->file);
    for (size_t i = 0; !rc && i < n; i++) {
        snprintf(at, sizeof at, "%s.rows[%zu]", where, i);
        const json_t *row = json_array_get(list, i);
        call->n_compiles++; /* freed with the others, whole or not */
        rc = json_is_object(row) ? read_compile_row(r, row, at, &call->compiles[i])
                                 : gb_read_bad(r, at, NULL, "expected an object");
    }
    return rc;
}

/* Its place among the entries, and what the summary counts of each. */
static int read_call_entries(gb_reader *r, const json_t *o, const char *where,
                             const gb_report *report, gb_report_call *c)
{
    int64_t first, n;
    int rc = gb_read_int(r, o, where, "first_family", 0, report->n_entries, &first);
    if (!rc) rc = gb_read_int(r, o, where, "families", 0, report->n_entries - first, &n);
    if (rc) return rc;
    c->first_entry = (int)first;
    if (n && !(c->result.shapes = calloc((size_t)n, sizeof *c->result.shapes)))
        return gb_err_set(r->err, GB_ENOMEM, "%s: out of memory", r->file);
    c->result.n_shapes = (int)n;
    for (int i = 0; i < n; i++)
        c->result.shapes[i].n_rejected = report->entries[first + i].result->n_rejected;
    return GB_OK;
}

static int read_call(gb_reader *r, const json_t *o, const char *where, gb_report *report)
{
    gb_report_call *grown = realloc(report->calls, (size_t)(report->n_calls + 1) * sizeof *grown);
    if (!grown) return gb_err_set(r->err, GB_ENOMEM, "%s: out of memory", r->file);
    report->calls = grown;
    gb_report_call *c = &grown[report->n_calls++];
    *c = (gb_report_call){0};
    gb_tune_result *t = &c->result;
    int64_t threads;
    t->compile_only = true;
    int rc = gb_read_str(r, o, where, "kernel", GB_READ_REQUIRED, &c->kernel);
    if (!rc) rc = gb_read_chars(r, o, where, "kernel_fp", t->kernel_fp, sizeof t->kernel_fp);
    if (!rc) rc = gb_read_chars(r, o, where, "arch", t->arch, sizeof t->arch);
    if (!rc)
        rc = gb_read_chars(r, o, where, "reference_lib", t->reference_lib, sizeof t->reference_lib);
    if (!rc) rc = read_call_entries(r, o, where, report, c);
    if (!rc) rc = gb_read_num(r, o, where, "nvrtc_s", GB_READ_REQUIRED, &t->timing.compile_cpu_s);
    if (!rc) rc = gb_read_int(r, o, where, "compile_threads", 0, INT32_MAX, &threads);
    if (!rc) t->timing.compile_threads = (int)threads;
    if (!rc) rc = read_call_rows(r, o, where, t);
    return rc;
}

static int read_compiles(gb_reader *r, const json_t *doc, gb_report *report)
{
    const json_t *list;
    int rc = gb_read_field(r, doc, NULL, "compiles", &list);
    if (!rc && !json_is_array(list)) rc = gb_read_bad(r, NULL, "compiles", "expected a list");
    for (size_t i = 0; !rc && i < json_array_size(list); i++) {
        char where[64];
        snprintf(where, sizeof where, "compiles[%zu]", i);
        const json_t *call = json_array_get(list, i);
        rc = json_is_object(call) ? read_call(r, call, where, report)
                                  : gb_read_bad(r, where, NULL, "expected an object");
    }
    return rc;
}

int gb_report_load_json(const char *path, gb_report *out, gb_err *err)
{
    memset(out, 0, sizeof *out);
    char *text = NULL;
    size_t len = 0;
    json_t *doc = NULL;
    gb_reader r = {.file = path, .err = err};
    int rc = gb_read_file(path, GB_JSON_MAX_TEXT, "reading ", &text, &len, err);
    if (!rc && (rc = gb_json_parse(text, len, &doc, err))) gb_err_prefix(err, "%s", path);
    if (!rc && !json_is_object(doc)) rc = gb_read_bad(&r, NULL, NULL, "expected a JSON object");
    if (!rc) rc = read_context(&r, doc, &out->context);
    if (!rc) rc = read_benchmarks(&r, doc, out);
    if (!rc) rc = read_compiles(&r, doc, out);
    json_decref(doc);
    free(text);
    if (rc) gb_report_free(out);
    return rc;
}
