/*
 * The HTML report (report/output.h): one self-contained page with charts. The
 * run's figures go into the page as JSON inside <script type="application/json">,
 * and the page's own script (report/outputs/html_page.js, embedded at build time) builds
 * the header, the tables and the charts from it with textContent, never innerHTML:
 * kernel names, configurations and reasons may come from a copied cache, so no
 * byte of them is ever parsed as markup. Chart.js is inlined from a file (the
 * build's GB_CHART_JS, Debian's libjs-chart.js), so the page loads nothing.
 *
 * begin reads Chart.js (a missing file fails there, before anything is run);
 * shape turns each entry into JSON; end writes the page whole, atomically.
 */
#include "base/json.h"
#include "report/export/export.h"
#include "report/output.h"
#include "report/outputs/json_parts.h"
#include "report/table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#ifndef GB_CHART_JS
#define GB_CHART_JS "/usr/share/javascript/chart.js/chart.min.js"
#endif

/* The page's script and style (report/outputs/html_page.{js,css}, embedded by gb_embed). */
extern const char gb_html_page_js[];
extern const char gb_html_page_css[];

/* Chart.js 3.9.1's chart.min.js is 200 KB; a file far past that is not it. */
#define CHART_JS_MAX_BYTES ((long)16 << 20)

typedef struct html_out {
    gb_output base;
    char *path;
    char *chart_js_path;       /* as given, or NULL: the environment's or the build's */
    char *chart_js;            /* its text, read at begin */
    const gb_run_context *ctx; /* valid from begin to end */
    json_t *context;
    json_t *entries;
    json_t *compiles; /* compile-only calls, as the run's JSON has them, with their summary */
    int n_entries;
} html_out;

/* ---- Chart.js ------------------------------------------------------------- */

static const char *chart_js_path(const html_out *h)
{
    if (h->chart_js_path) return h->chart_js_path;
    const char *env = getenv("GPUBENCH_CHART_JS");
    return env && *env ? env : GB_CHART_JS;
}

/* A script element's text ends at the first "</script" in any case. */
static bool ends_a_script(const char *text)
{
    for (const char *p = strstr(text, "</"); p; p = strstr(p + 2, "</"))
        if (strncasecmp(p + 2, "script", 6) == 0) return true;
    return false;
}

static int read_chart_js(const char *path, char **out, gb_err *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return gb_err_set(err, GB_EIO,
                          "html report: cannot read Chart.js at %s (%s); install the "
                          "libjs-chart.js package, or set GPUBENCH_CHART_JS to its chart.min.js",
                          path, strerror(errno));
    char *text = NULL;
    long len = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    int rc = GB_OK;
    if (len < 0 || len > CHART_JS_MAX_BYTES)
        rc = gb_err_set(err, GB_EIO, "html report: %s is not a Chart.js file (%ld bytes)", path,
                        len);
    else if (!(text = malloc((size_t)len + 1)))
        rc = gb_err_set(err, GB_ENOMEM, "out of memory");
    else if (fseek(f, 0, SEEK_SET) != 0 || fread(text, 1, (size_t)len, f) != (size_t)len)
        rc = gb_err_set(err, GB_EIO, "html report: reading %s: %s", path, strerror(errno));
    fclose(f);
    if (!rc) text[len] = '\0';
    if (!rc && (strlen(text) != (size_t)len || ends_a_script(text)))
        rc = gb_err_set(err, GB_EINVAL,
                        "html report: %s cannot be inlined in a page (it holds a NUL byte "
                        "or \"</script\")",
                        path);
    if (rc)
        free(text);
    else
        *out = text;
    return rc;
}

/* ---- the run as JSON ------------------------------------------------------ */

static json_t *text_or_null(const char *s)
{
    return s ? gb_json_text(s, 0) : json_null();
}

static json_t *samples_json(const gb_measurement *m)
{
    json_t *a = json_array();
    for (int i = 0; a && i < m->n_samples; i++)
        if (json_array_append_new(a, gb_json_real(m->samples_ms[i]))) {
            json_decref(a);
            return NULL;
        }
    return a;
}

/* A five-number summary and the samples it came from, in ms; null when there is
 * neither (the best's statistics are the shape's, its samples the race's). */
static json_t *measurement_json(const gb_stats *s, const gb_measurement *m)
{
    if (s->n <= 0 && m->n_samples <= 0) return json_null();
    json_t *o = json_object();
    int rc = o ? GB_OK : GB_ENOMEM;
    if (!rc) rc = gb_json_set(o, "n", json_integer(s->n));
    if (!rc) rc = gb_json_set(o, "min", gb_json_real(s->min));
    if (!rc) rc = gb_json_set(o, "q1", gb_json_real(s->q1));
    if (!rc) rc = gb_json_set(o, "median", gb_json_real(s->median));
    if (!rc) rc = gb_json_set(o, "q3", gb_json_real(s->q3));
    if (!rc) rc = gb_json_set(o, "max", gb_json_real(s->max));
    if (!rc) rc = gb_json_set(o, "ci_lo", gb_json_real(s->ci_lo));
    if (!rc) rc = gb_json_set(o, "ci_hi", gb_json_real(s->ci_hi));
    if (!rc) rc = gb_json_set(o, "samples", samples_json(m));
    if (!rc) rc = gb_json_set(o, "contended", json_boolean(m->contended));
    if (rc) json_decref(o);
    return rc ? NULL : o;
}

static json_t *trial_json(const gb_trial_note *t)
{
    json_t *o = json_object();
    int rc = o ? GB_OK : GB_ENOMEM;
    if (!rc) rc = gb_json_set(o, "config", text_or_null(t->config_text));
    if (!rc) rc = gb_json_set(o, "status", json_string(gb_trial_status_name(t->status)));
    if (!rc) rc = gb_json_set(o, "reason", text_or_null(t->reason));
    if (!rc) rc = gb_json_set(o, "resumed", json_boolean(t->resumed));
    if (!rc)
        rc = gb_json_set(o, "time",
                         t->status == GB_TRIAL_OK
                             ? measurement_json(&t->measurement.stats, &t->measurement)
                             : json_null());
    if (rc) json_decref(o);
    return rc ? NULL : o;
}

static json_t *trials_json(const gb_shape_result *s)
{
    json_t *a = json_array();
    for (int i = 0; a && i < s->n_trials; i++)
        if (json_array_append_new(a, trial_json(&s->trials[i]))) {
            json_decref(a);
            return NULL;
        }
    return a;
}

static json_t *config_text(const gb_fields *config)
{
    gb_strbuf sb = GB_STRBUF_INIT;
    gb_fields_append_canonical(&sb, config, NULL, 0);
    json_t *j = gb_json_text(gb_sb_str(&sb), 0);
    gb_sb_free(&sb);
    return j;
}

/* What the entry's best came to against the roofs, for the table: as the text
 * table has it, % of the measured ceiling and % of the theoretical peak (each 0
 * when unknown), and whether the roof it sits under is memory's. */
static int figures_json(json_t *o, const gb_report_entry *e, const gb_run_context *ctx)
{
    const gb_roofs *roofs = &ctx->roofs;
    bool memory_bound = false;
    double ceil = ctx->has_device ? gb_entry_fraction(e, roofs, true) : 0;
    double peak = ctx->has_device ? gb_entry_fraction(e, roofs, false) : 0;
    if (ctx->has_device) gb_entry_roof_tflops(e, roofs, ceil > 0, &memory_bound);
    int rc = gb_json_set(o, "tflops", gb_json_real(gb_entry_tflops(e)));
    if (!rc) rc = gb_json_set(o, "gbps", gb_json_real(gb_entry_gbps(e)));
    if (!rc) rc = gb_json_set(o, "intensity", gb_json_real(gb_entry_intensity(e)));
    if (!rc) rc = gb_json_set(o, "pct_ceil", gb_json_real(100 * ceil));
    if (!rc) rc = gb_json_set(o, "pct_peak", gb_json_real(100 * peak));
    if (!rc) rc = gb_json_set(o, "memory_bound", json_boolean(memory_bound));
    return rc;
}

static int search_json(json_t *o, const gb_shape_result *s)
{
    int rc = gb_json_set(o, "strategy", gb_json_text(s->strategy, 0));
    if (!rc) rc = gb_json_set(o, "n_configs", json_integer((json_int_t)s->n_configs));
    if (!rc) rc = gb_json_set(o, "n_evals", json_integer(s->n_evals));
    if (!rc) rc = gb_json_set(o, "n_timed", json_integer(s->n_timed));
    if (!rc) rc = gb_json_set(o, "n_failed", json_integer(gb_shape_n_failed(s)));
    if (!rc) rc = gb_json_set(o, "ended_by", json_string(gb_search_end_name(s->ended_by)));
    if (!rc) rc = gb_json_set(o, "cached", json_boolean(s->cached));
    if (!rc) rc = gb_json_set(o, "contended", json_boolean(s->contended));
    if (!rc) rc = gb_json_set(o, "interrupted", json_boolean(s->interrupted));
    if (!rc) rc = gb_json_set(o, "failure", text_or_null(s->failure));
    return rc;
}

/* What became of the entry, in the words every output uses (report/result.h). */
static int outcome_json(json_t *o, const gb_report_entry *e)
{
    gb_outcome outcome = gb_entry_outcome(e);
    gb_strbuf why = GB_STRBUF_INIT;
    gb_entry_reason(e, &why);
    int rc = gb_sb_status(&why) ? GB_ENOMEM : GB_OK;
    if (!rc) rc = gb_json_set(o, "status", json_string(gb_outcome_name(outcome)));
    if (!rc) rc = gb_json_set(o, "status_bad", json_boolean(gb_outcome_is_bad(outcome)));
    if (!rc) rc = gb_json_set(o, "reason", gb_json_text(gb_sb_str(&why), 0));
    gb_sb_free(&why);
    return rc;
}

static json_t *entry_json(const gb_report_entry *e, const gb_run_context *ctx)
{
    const gb_shape_result *s = e->result;
    json_t *o = json_object();
    int rc = o ? GB_OK : GB_ENOMEM;
    if (!rc) rc = gb_json_set(o, "kernel", text_or_null(e->kernel));
    if (!rc) rc = gb_json_set(o, "math", json_string(gb_math_name(e->math)));
    if (!rc) rc = gb_json_set(o, "bench", json_boolean(e->bench));
    if (!rc) rc = gb_json_set(o, "key", text_or_null(s->key_text));
    if (!rc) rc = gb_json_set(o, "shape", gb_fields_to_json(&s->shape));
    if (!rc) rc = gb_json_set(o, "flops", gb_json_real(s->flops));
    if (!rc) rc = gb_json_set(o, "bytes", gb_json_real(s->bytes));
    if (!rc)
        rc =
            gb_json_set(o, "best_config", s->has_best ? config_text(&s->best_config) : json_null());
    if (!rc)
        rc = gb_json_set(o, "best",
                         s->has_best ? measurement_json(&s->best, &s->best_measurement)
                                     : json_null());
    if (!rc)
        rc = gb_json_set(o, "baseline",
                         s->has_baseline ? measurement_json(&s->baseline.stats, &s->baseline)
                                         : json_null());
    if (!rc) rc = figures_json(o, e, ctx);
    if (!rc) rc = search_json(o, s);
    if (!rc) rc = outcome_json(o, e);
    if (!rc) rc = gb_json_set(o, "trials", trials_json(s));
    if (rc) json_decref(o);
    return rc ? NULL : o;
}

/* ---- the page --------------------------------------------------------------- */

/* The run as JSON that a script element can hold: '<', '>' and '&' only occur
 * inside JSON strings, where \u003c and friends mean the same characters, so no
 * "</script" or "<!--" can end or bend the element. */
static int data_text(const html_out *h, gb_strbuf *out)
{
    json_t *data = json_pack("{s:O,s:O,s:O}", "context", h->context, "entries", h->entries,
                             "compiles", h->compiles);
    char *text = data ? gb_json_dump(data, false) : NULL;
    json_decref(data);
    if (!text) return GB_ENOMEM;
    for (const char *p = text; *p; p++) {
        if (*p == '<')
            gb_sb_puts(out, "\\u003c");
        else if (*p == '>')
            gb_sb_puts(out, "\\u003e");
        else if (*p == '&')
            gb_sb_puts(out, "\\u0026");
        else
            gb_sb_putc(out, *p);
    }
    free(text);
    return GB_OK;
}

static int page_text(const html_out *h, gb_strbuf *out)
{
    gb_sb_puts(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                    "<title>gpubench report</title>\n<style>\n");
    gb_sb_puts(out, gb_html_page_css);
    gb_sb_puts(out, "</style>\n</head>\n<body>\n<main id=\"report\"></main>\n"
                    "<script type=\"application/json\" id=\"gb-data\">");
    int rc = data_text(h, out);
    gb_sb_puts(out, "</script>\n<script>\n");
    gb_sb_puts(out, h->chart_js);
    gb_sb_puts(out, "\n</script>\n<script>\n");
    gb_sb_puts(out, gb_html_page_js);
    gb_sb_puts(out, "</script>\n</body>\n</html>\n");
    return rc ? rc : gb_sb_status(out);
}

/* ---- the output ------------------------------------------------------------- */

static int html_begin(gb_output *o, const gb_run_context *ctx, gb_err *err)
{
    html_out *h = (html_out *)o;
    const char *js = chart_js_path(h);
    int rc = read_chart_js(js, &h->chart_js, err);
    if (rc) return rc;
    json_decref(h->context);
    h->context = gb_json_context(ctx); /* as the run's JSON has it */
    if (!h->context) return gb_err_set(err, GB_ENOMEM, "html report %s: out of memory", h->path);
    h->ctx = ctx;
    return GB_OK;
}

static int html_shape(gb_output *o, const gb_report_entry *entry, gb_err *err)
{
    html_out *h = (html_out *)o;
    if (json_array_append_new(h->entries, entry_json(entry, h->ctx)))
        return gb_err_set(err, GB_ENOMEM, "html report %s: out of memory", h->path);
    h->n_entries++;
    return GB_OK;
}

/* A compile-only call: its rows and the text table's summary line under them. */
static int html_call_end(gb_output *o, const char *kernel, const gb_tune_result *call, gb_err *err)
{
    html_out *h = (html_out *)o;
    if (!call->compile_only) return GB_OK;
    json_t *c = gb_json_compile_call(kernel, call, h->n_entries - call->n_shapes);
    gb_strbuf summary = GB_STRBUF_INIT;
    gb_compile_summary(&summary, call, h->ctx && h->ctx->arch[0] ? h->ctx->arch : NULL, 0);
    int rc = !c || gb_sb_status(&summary) ||
             gb_json_set(c, "summary", gb_json_text(gb_sb_str(&summary), 0)) ||
             json_array_append(h->compiles, c);
    json_decref(c);
    gb_sb_free(&summary);
    return rc ? gb_err_set(err, GB_ENOMEM, "html report %s: out of memory", h->path) : GB_OK;
}

static int html_end(gb_output *o, gb_err *err)
{
    html_out *h = (html_out *)o;
    if (!h->chart_js)
        return gb_err_set(err, GB_EINVAL, "html report %s: ended before begin", h->path);
    gb_strbuf page = GB_STRBUF_INIT;
    int rc = page_text(h, &page);
    bool unchanged;
    gb_err saving = {0};
    if (rc)
        gb_err_set(err, rc, "html report %s: out of memory", h->path);
    else if ((rc = gb_export_save(h->path, gb_sb_str(&page), page.len, &unchanged, &saving)))
        gb_err_set(err, rc, "html report: %s", saving.msg); /* "renaming over PATH: ..." */
    gb_sb_free(&page);
    return rc;
}

static void html_destroy(gb_output *o)
{
    html_out *h = (html_out *)o;
    free(h->path);
    free(h->chart_js_path);
    free(h->chart_js);
    json_decref(h->context);
    json_decref(h->entries);
    json_decref(h->compiles);
    free(h);
}

static const gb_output_ops html_ops = {
    .name = "html",
    .begin = html_begin,
    .shape = html_shape,
    .call_end = html_call_end,
    .end = html_end,
    .destroy = html_destroy,
};

int gb_output_html(const char *path, const char *chart_js, gb_output **out, gb_err *err)
{
    if (!path || !*path) return gb_err_set(err, GB_EINVAL, "html report: no file name given");
    html_out *h = calloc(1, sizeof *h);
    if (h) {
        h->base.ops = &html_ops;
        h->path = strdup(path);
        h->chart_js_path = chart_js ? strdup(chart_js) : NULL;
        h->entries = json_array();
        h->compiles = json_array();
    }
    if (!h || !h->path || (chart_js && !h->chart_js_path) || !h->entries || !h->compiles) {
        gb_output_destroy(h ? &h->base : NULL);
        return gb_err_set(err, GB_ENOMEM, "out of memory");
    }
    *out = &h->base;
    return GB_OK;
}
