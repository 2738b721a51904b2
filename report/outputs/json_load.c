/*
 * Reading a run back from the JSON that report/outputs/json_out.c wrote, into the result
 * model (report/result.h), so that every output renders a saved run as it
 * rendered the live one.
 *
 * The file may come from anywhere (another machine, an edited copy, a newer
 * gpubench), so nothing is trusted: every part is read through the wire view the
 * writer wrote it with (base/wire.h), which checks each field's type and range,
 * and the first field that is missing or wrong is the error, naming the file and
 * the field's path ("run.json: benchmarks[3].samples_ms: expected a list of
 * numbers"). Fields the writer derives (names, Google Benchmark's times, tflops,
 * speedup, percent of peak) are not read: they are computed again from what is
 * read. Fields no view knows are ignored, so a later writer may add some without
 * a new schema version.
 *
 * The context's version is read first, alone, so that a file of another version
 * is refused as such. The benchmarks list is flat: an entry's "best" starts it,
 * its "baseline" and "trial" rows follow. The loader groups them back, reading
 * each row through its view (report/outputs/json_rows.h); the context and the
 * compile-only calls have theirs (report/outputs/json_parts.h).
 */
#include "base/file.h"
#include "base/json.h"
#include "report/outputs/json_parts.h"
#include "report/outputs/json_rows.h"
#include "report/result.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The file being read, as the user named it, and where its errors go. */
typedef struct loader {
    const char *file;
    gb_err *err;
} loader;

/* Records "file: where: what" and returns GB_EINVAL. */
static int bad(loader *l, const char *where, const char *what)
{
    return gb_err_set(l->err, GB_EINVAL, "%s: %s: %s", l->file, where, what);
}

static int out_of_memory(loader *l)
{
    return gb_err_set(l->err, GB_ENOMEM, "%s: out of memory", l->file);
}

/* j into obj through view (base/wire.h), errors naming the file and where. */
static int read_view(loader *l, const gb_wire_type *view, const json_t *j, const char *where,
                     void *obj, void *ctx)
{
    int rc = gb_wire_read(view, j, obj, ctx, where, l->err);
    return rc ? gb_err_prefix(l->err, "%s", l->file) : GB_OK;
}

/* ---- the context ------------------------------------------------------------------ */

static int read_context(loader *l, const json_t *doc, gb_run_context *c)
{
    const json_t *o = json_object_get(doc, "context");
    int rc = read_view(l, &gb_wire_report_version, o, "context", c, NULL);
    return rc ? rc : read_view(l, &gb_wire_report_context, o, "context", c, NULL);
}

/* ---- the benchmarks ---------------------------------------------------------------- */

/* A new entry, counted at once so that gb_report_free frees it after an error. */
static int new_entry(loader *l, gb_report *report, gb_report_entry **out)
{
    gb_report_entry *grown =
        realloc(report->entries, (size_t)(report->n_entries + 1) * sizeof *grown);
    if (!grown) return out_of_memory(l);
    report->entries = grown;
    gb_report_entry *e = &grown[report->n_entries];
    *e = (gb_report_entry){0};
    gb_shape_result *s = calloc(1, sizeof *s);
    if (!s) return out_of_memory(l);
    e->result = s;
    report->n_entries++;
    *out = e;
    return GB_OK;
}

/* A row into obj through its view (report/outputs/json_rows.h). */
static int read_row_view(loader *l, const gb_wire_type *view, const json_t *row, const char *where,
                         void *obj, gb_report_entry *e)
{
    gb_json_row_ctx ctx = {.entry = e};
    return read_view(l, view, row, where, obj, &ctx);
}

/* A string field of row that Google Benchmark's fields or the role hold: no view
 * reads them. NULL (an error set) when it is missing or no string. */
static const char *row_text(loader *l, const json_t *row, const char *where, const char *key)
{
    const char *text = json_string_value(json_object_get(row, key));
    char at[96];
    snprintf(at, sizeof at, "%s.%s", where, key);
    if (!text) bad(l, at, json_object_get(row, key) ? "expected a string" : "missing");
    return text;
}

/* The shape's key text, from the best's name "<kernel>/<key>/best". */
static int read_key_text(loader *l, const json_t *row, const char *where, const gb_report_entry *e,
                         gb_shape_result *s)
{
    const char *name = row_text(l, row, where, "name");
    if (!name) return GB_EINVAL;
    size_t len = strlen(name), k = strlen(e->kernel), tail = strlen("/best");
    if (len < k + 1 + tail || strncmp(name, e->kernel, k) != 0 || name[k] != '/' ||
        strcmp(name + len - tail, "/best") != 0) {
        char at[96];
        snprintf(at, sizeof at, "%s.name", where);
        return bad(l, at, "expected \"<kernel>/<shape>/best\"");
    }
    s->key_text = strndup(name + k + 1, len - tail - k - 1);
    return s->key_text ? GB_OK : out_of_memory(l);
}

static int read_best(loader *l, const json_t *row, const char *where, gb_report *report)
{
    gb_report_entry *e = NULL;
    int rc = new_entry(l, report, &e);
    if (rc) return rc;
    gb_shape_result *s = (gb_shape_result *)e->result;
    rc = read_row_view(l, &gb_wire_best_row, row, where, s, e);
    return rc ? rc : read_key_text(l, row, where, e, s);
}

static int read_trial(loader *l, const json_t *row, const char *where, gb_report_entry *e)
{
    gb_shape_result *s = (gb_shape_result *)e->result;
    gb_trial_note *grown = realloc(s->trials, (size_t)(s->n_trials + 1) * sizeof *grown);
    if (!grown) return out_of_memory(l);
    s->trials = grown;
    gb_trial_note *t = &grown[s->n_trials++]; /* freed with the entry, whole or not */
    *t = (gb_trial_note){0};
    return read_row_view(l, &gb_wire_trial_row, row, where, t, e);
}

static int read_row(loader *l, const json_t *row, const char *where, gb_report *report)
{
    const char *role = row_text(l, row, where, "role");
    gb_report_entry *e = report->n_entries ? &report->entries[report->n_entries - 1] : NULL;
    char at[96];
    snprintf(at, sizeof at, "%s.role", where);
    if (!role) return GB_EINVAL;
    if (strcmp(role, "best") == 0) return read_best(l, row, where, report);
    if (strcmp(role, "baseline") != 0 && strcmp(role, "trial") != 0)
        return bad(l, at, "expected \"best\", \"baseline\" or \"trial\"");
    if (!e) return bad(l, at, "a row before its entry's \"best\"");
    gb_shape_result *s = (gb_shape_result *)e->result;
    if (role[0] == 't') return read_trial(l, row, where, e);
    if (s->has_baseline) return bad(l, at, "a second baseline for one entry");
    s->has_baseline = true; /* set first: what was read is freed with the entry */
    return read_row_view(l, &gb_wire_baseline_row, row, where, s, e);
}

static int read_benchmarks(loader *l, const json_t *doc, gb_report *report)
{
    const json_t *list = json_object_get(doc, "benchmarks");
    if (!json_is_array(list)) return bad(l, "benchmarks", list ? "expected a list" : "missing");
    for (size_t i = 0; i < json_array_size(list); i++) {
        char where[64];
        snprintf(where, sizeof where, "benchmarks[%zu]", i);
        const json_t *row = json_array_get(list, i);
        int rc = json_is_object(row) ? read_row(l, row, where, report)
                                     : bad(l, where, "expected an object");
        if (rc) return rc;
    }
    return GB_OK;
}

/* ---- the compile-only calls -------------------------------------------------------- */

/* After the benchmarks: a call names the entries it made. */
static int read_compiles(loader *l, const json_t *doc, gb_report *report)
{
    gb_json_calls_ctx ctx = {.report = report};
    return read_view(l, &gb_wire_report_compiles, doc, "", report, &ctx);
}

int gb_report_load_json(const char *path, gb_report *out, gb_err *err)
{
    memset(out, 0, sizeof *out);
    char *text = NULL;
    size_t len = 0;
    json_t *doc = NULL;
    loader l = {.file = path, .err = err};
    int rc = gb_read_file(path, GB_JSON_MAX_TEXT, "reading ", &text, &len, err);
    if (!rc && (rc = gb_json_parse(text, len, &doc, err))) gb_err_prefix(err, "%s", path);
    if (!rc && !json_is_object(doc))
        rc = gb_err_set(err, GB_EINVAL, "%s: expected a JSON object", path);
    if (!rc) rc = read_context(&l, doc, &out->context);
    if (!rc) rc = read_benchmarks(&l, doc, out);
    if (!rc) rc = read_compiles(&l, doc, out);
    json_decref(doc);
    free(text);
    if (rc) gb_report_free(out);
    return rc;
}
