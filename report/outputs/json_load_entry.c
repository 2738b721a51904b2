/*
 * The rows of one (kernel, shape) entry of a saved run, read back into its
 * gb_shape_result (report/outputs/json_load.c groups the rows; report/outputs/json_read.h checks
 * each field). A row's measurement keeps what the JSON holds: the statistics as
 * written (a baseline taken from the cache has no samples to compute them from),
 * every sample, the median clock, the throttled count. The per-sample clocks and
 * throttle flags are not saved: read back they are 0 (unknown) and false.
 */
#include "report/outputs/json_read.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int oom(gb_reader *r)
{
    return gb_err_set(r->err, GB_ENOMEM, "%s: out of memory", r->file);
}

/* ---- a measurement ----------------------------------------------------------------- */

static int read_stats(gb_reader *r, const json_t *row, const char *where, gb_stats *out)
{
    static const struct {
        const char *key;
        size_t offset;
    } fields[] = {
        {"min_ms", offsetof(gb_stats, min)},       {"max_ms", offsetof(gb_stats, max)},
        {"mean_ms", offsetof(gb_stats, mean)},     {"stddev_ms", offsetof(gb_stats, stddev)},
        {"median_ms", offsetof(gb_stats, median)}, {"q1_ms", offsetof(gb_stats, q1)},
        {"q3_ms", offsetof(gb_stats, q3)},         {"ci_lo_ms", offsetof(gb_stats, ci_lo)},
        {"ci_hi_ms", offsetof(gb_stats, ci_hi)},
    };
    const json_t *o;
    char at[96];
    int64_t n;
    *out = (gb_stats){0};
    int rc = gb_read_field(r, row, where, "statistics", &o);
    if (rc || json_is_null(o)) return rc;
    if (!json_is_object(o))
        return gb_read_bad(r, where, "statistics", "expected an object or null");
    snprintf(at, sizeof at, "%s.statistics", where);
    rc = gb_read_int(r, o, at, "n", 0, INT32_MAX, &n);
    for (size_t i = 0; !rc && i < sizeof fields / sizeof fields[0]; i++)
        rc = gb_read_num(r, o, at, fields[i].key, GB_READ_NULLABLE,
                         (double *)((char *)out + fields[i].offset));
    out->n = (int)n;
    return rc;
}

/* Every sample, with room for the per-sample clocks and flags (unknown). */
static int read_samples(gb_reader *r, const json_t *row, const char *where, gb_measurement *m)
{
    const json_t *list;
    int rc = gb_read_field(r, row, where, "samples_ms", &list);
    if (rc) return rc;
    size_t n = json_array_size(list);
    for (size_t i = 0; i < n; i++)
        if (!json_is_number(json_array_get(list, i)) && !json_is_null(json_array_get(list, i)))
            list = NULL;
    if (!json_is_array(list) || n > GB_MEASURE_MAX_SAMPLES)
        return gb_read_bad(r, where, "samples_ms", "expected a list of numbers");
    if (n == 0) return GB_OK;
    m->samples_ms = calloc(n, sizeof *m->samples_ms);
    m->clock_mhz = calloc(n, sizeof *m->clock_mhz);
    m->throttled = calloc(n, sizeof *m->throttled);
    if (!m->samples_ms || !m->clock_mhz || !m->throttled) return oom(r);
    for (size_t i = 0; i < n; i++) {
        const json_t *v = json_array_get(list, i);
        m->samples_ms[i] = json_is_null(v) ? NAN : json_number_value(v);
    }
    m->n_samples = (int)n;
    return GB_OK;
}

static int read_mode(gb_reader *r, const json_t *row, const char *where, gb_measure_mode *out)
{
    char name[16];
    int rc = gb_read_chars(r, row, where, "mode", name, sizeof name);
    if (!rc && *name && gb_measure_mode_parse(name, out) != GB_OK)
        rc = gb_read_bad(r, where, "mode", "expected \"cold\", \"hot\" or null");
    return rc;
}

/* What timed the row: "cupti" or "events"; absent (a file from before CUPTI
 * timing) or null (nothing timed) reads as events. */
static int read_timer(gb_reader *r, const json_t *row, const char *where, gb_timer *out)
{
    char name[16] = "";
    *out = GB_TIMER_EVENTS;
    int rc = json_object_get(row, "timer")
                 ? gb_read_chars(r, row, where, "timer", name, sizeof name)
                 : GB_OK;
    if (!rc && *name && (gb_timer_parse(name, out) != GB_OK || *out == GB_TIMER_AUTO))
        rc = gb_read_bad(r, where, "timer", "expected \"cupti\", \"events\" or null");
    return rc;
}

/* The measurement fields every row has; the statistics go to stats (the best
 * keeps them apart from its measurement). */
static int read_measurement(gb_reader *r, const json_t *row, const char *where, gb_stats *stats,
                            gb_measurement *m)
{
    int64_t throttled;
    int rc = read_stats(r, row, where, stats);
    if (!rc) rc = read_samples(r, row, where, m);
    if (!rc) rc = gb_read_num(r, row, where, "clock_mhz", GB_READ_NULL_ZERO, &m->clock_mhz_median);
    if (!rc) rc = read_mode(r, row, where, &m->mode);
    if (!rc) rc = read_timer(r, row, where, &m->timer);
    if (!rc && json_object_get(row, "switch_ms"))
        rc = gb_read_num(r, row, where, "switch_ms", GB_READ_NULL_ZERO, &m->switch_ms);
    if (!rc) rc = gb_read_bool(r, row, where, "capped", &m->capped);
    if (!rc) rc = gb_read_bool(r, row, where, "contended", &m->contended);
    if (!rc) rc = gb_read_int(r, row, where, "throttled_samples", 0, INT32_MAX, &throttled);
    if (rc) return rc;
    m->stats = *stats;
    m->n_throttled = (int)throttled;
    m->all_throttled = throttled > 0 && throttled == m->n_samples;
    return GB_OK;
}

/* A trial's status by its name (gb_trial_status_name). */
static int read_status(gb_reader *r, const json_t *row, const char *where, int *out)
{
    char name[32];
    gb_trial_status status;
    int rc = gb_read_chars(r, row, where, "status", name, sizeof name);
    if (!rc && gb_trial_status_parse(name, &status) != GB_OK)
        rc = gb_read_bad(r, where, "status", "expected a trial status (\"ok\", \"wrong\", ...)");
    if (!rc) *out = (int)status;
    return rc;
}

/* ---- the best's own fields ------------------------------------------------------------- */

static int read_ended_by(gb_reader *r, const json_t *o, const char *where, gb_search_end *out)
{
    char name[16];
    int rc = gb_read_chars(r, o, where, "ended_by", name, sizeof name);
    *out = GB_END_NONE;
    for (int e = GB_END_SPACE; !rc && *name && e <= GB_END_INTERRUPT; e++)
        if (strcmp(name, gb_search_end_name((gb_search_end)e)) == 0) *out = (gb_search_end)e;
    if (!rc && *name && *out == GB_END_NONE)
        rc = gb_read_bad(r, where, "ended_by", "expected what ended a search (\"space\", ...)");
    return rc;
}

static int read_search(gb_reader *r, const json_t *row, const char *where, gb_shape_result *s)
{
    const json_t *o;
    char at[96];
    int64_t evals, n_evals, n_recorded;
    snprintf(at, sizeof at, "%s.search", where);
    int rc = gb_read_object(r, row, where, "search", &o);
    if (!rc) rc = gb_read_chars(r, o, at, "strategy", s->strategy, sizeof s->strategy);
    if (!rc) rc = gb_read_u64(r, o, at, "seed", &s->seed);
    if (!rc) rc = gb_read_int(r, o, at, "budget_evals", 0, INT64_MAX, &evals);
    if (!rc) rc = gb_read_num(r, o, at, "budget_seconds", GB_READ_REQUIRED, &s->budget_seconds);
    if (!rc) rc = read_ended_by(r, o, at, &s->ended_by);
    if (!rc) rc = gb_read_int(r, o, at, "n_evals", 0, INT32_MAX, &n_evals);
    if (!rc) rc = gb_read_int(r, o, at, "n_recorded", 0, INT32_MAX, &n_recorded);
    if (!rc) rc = gb_read_u64(r, o, at, "n_configs", &s->n_configs);
    if (!rc) rc = gb_read_u64(r, o, at, "n_rejected", &s->n_rejected);
    if (!rc) rc = gb_read_u64(r, o, at, "n_checked", &s->n_checked);
    if (!rc) rc = gb_read_num(r, o, at, "check_s", GB_READ_REQUIRED, &s->check_s);
    if (!rc) rc = gb_read_bool(r, o, at, "complete", &s->complete);
    s->budget_evals = evals;
    s->n_evals = (int)n_evals;
    s->n_recorded = (int)n_recorded;
    return rc;
}

static int read_count(gb_reader *r, const json_t *o, const char *at, const char *key, int *out)
{
    int64_t n;
    int rc = gb_read_int(r, o, at, key, 0, INT32_MAX, &n);
    *out = (int)n;
    return rc;
}

static int read_counts(gb_reader *r, const json_t *row, const char *where, gb_shape_result *s)
{
    const json_t *o;
    char at[96];
    snprintf(at, sizeof at, "%s.counts", where);
    int rc = gb_read_object(r, row, where, "counts", &o);
    for (int i = 0; !rc && i < GB_TRIAL_STATUS_COUNT; i++)
        rc = read_count(r, o, at, gb_trial_status_name((gb_trial_status)i), &s->n_status[i]);
    if (!rc) rc = read_count(r, o, at, "timed", &s->n_timed);
    if (!rc) rc = read_count(r, o, at, "resumed", &s->n_resumed);
    if (!rc) rc = read_count(r, o, at, "compiled", &s->n_compiled);
    if (!rc) rc = read_count(r, o, at, "contended", &s->n_contended);
    s->n_skipped = s->n_status[GB_TRIAL_SKIPPED];
    return rc;
}

static int read_tie(gb_reader *r, const json_t *row, const char *where, gb_shape_result *s)
{
    const json_t *list;
    int rc = gb_read_field(r, row, where, "tie", &list);
    if (rc) return rc;
    size_t n = json_array_size(list);
    for (size_t i = 0; i < n; i++)
        if (!json_is_string(json_array_get(list, i))) list = NULL;
    if (!json_is_array(list) || n > INT32_MAX)
        return gb_read_bad(r, where, "tie", "expected a list of strings");
    if (n && !(s->tie = calloc(n, sizeof *s->tie))) return oom(r);
    for (size_t i = 0; i < n; i++, s->n_tie++)
        if (!(s->tie[i] = strdup(json_string_value(json_array_get(list, i))))) return oom(r);
    return GB_OK;
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
    return s->key_text ? GB_OK : oom(r);
}

static int read_math(gb_reader *r, const json_t *row, const char *where, gb_math *out)
{
    char name[16];
    int rc = gb_read_chars(r, row, where, "math", name, sizeof name);
    if (!rc && gb_math_parse(name, out) != GB_OK)
        rc = gb_read_bad(r, where, "math", "expected what the flops run on (\"fp32\", ...)");
    return rc;
}

/* The best's own facts. Its status and reason are the outcome's, derived from
 * them (report/result.h), and are not read. */
static int read_best_status(gb_reader *r, const json_t *row, const char *where, gb_shape_result *s)
{
    char status[32];
    const json_t *config;
    int rc = gb_read_chars(r, row, where, "status", status, sizeof status);
    if (!rc) rc = gb_read_field(r, row, where, "config", &config);
    if (!rc && !json_is_null(config)) rc = gb_read_fields(r, row, where, "config", &s->best_config);
    s->has_best = !rc && !json_is_null(config);
    if (!rc) rc = gb_read_str(r, row, where, "failure", GB_READ_NULLABLE, &s->failure);
    if (!rc) rc = gb_read_str(r, row, where, "race_failure", GB_READ_NULLABLE, &s->race_failure);
    if (!rc) rc = gb_read_bool(r, row, where, "interrupted", &s->interrupted);
    if (!rc) rc = gb_read_bool(r, row, where, "compile_only", &s->compile_only);
    return rc;
}

static int read_best_extras(gb_reader *r, const json_t *row, const char *where, gb_report_entry *e,
                            gb_shape_result *s)
{
    int64_t leaders;
    int rc = read_math(r, row, where, &e->math);
    if (!rc) rc = gb_read_bool(r, row, where, "bench", &e->bench);
    if (!rc) rc = gb_read_bool(r, row, where, "cached", &s->cached);
    if (!rc) rc = gb_read_num(r, row, where, "flops", GB_READ_NULL_ZERO, &s->flops);
    if (!rc) rc = gb_read_num(r, row, where, "bytes", GB_READ_NULL_ZERO, &s->bytes);
    if (!rc) rc = gb_read_int(r, row, where, "leaders", 0, INT32_MAX, &leaders);
    if (!rc) rc = read_tie(r, row, where, s);
    if (!rc) rc = read_search(r, row, where, s);
    if (!rc) rc = read_counts(r, row, where, s);
    s->n_leaders = (int)leaders;
    return rc;
}

int gb_read_best(gb_reader *r, const json_t *row, const char *where, gb_report_entry *e)
{
    gb_shape_result *s = (gb_shape_result *)e->result;
    char *kernel;
    int rc = gb_read_str(r, row, where, "kernel", GB_READ_REQUIRED, &kernel);
    if (rc) return rc;
    e->kernel = kernel;
    rc = read_key_text(r, row, where, e, s);
    if (!rc) rc = gb_read_fields(r, row, where, "shape", &s->shape);
    if (!rc) rc = read_best_status(r, row, where, s);
    if (!rc) rc = read_measurement(r, row, where, &s->best, &s->best_measurement);
    if (!rc) s->contended = s->best_measurement.contended;
    if (!rc) rc = read_best_extras(r, row, where, e, s);
    return rc;
}

/* ---- the baseline and the trials --------------------------------------------------------- */

int gb_read_baseline(gb_reader *r, const json_t *row, const char *where, gb_shape_result *s)
{
    gb_stats stats;
    s->has_baseline = true; /* set first: what was read is freed with the entry */
    return read_measurement(r, row, where, &stats, &s->baseline);
}

int gb_read_trial(gb_reader *r, const json_t *row, const char *where, gb_shape_result *s)
{
    gb_trial_note *grown = realloc(s->trials, (size_t)(s->n_trials + 1) * sizeof *grown);
    if (!grown) return oom(r);
    s->trials = grown;
    gb_trial_note *t = &grown[s->n_trials++];
    *t = (gb_trial_note){0};
    int status = 0;
    gb_stats stats;
    int rc = gb_read_fields(r, row, where, "config", &t->config);
    if (!rc) rc = read_status(r, row, where, &status);
    if (!rc) rc = gb_read_str(r, row, where, "reason", GB_READ_REQUIRED, &t->reason);
    if (!rc) rc = gb_read_bool(r, row, where, "resumed", &t->resumed);
    if (!rc) rc = read_measurement(r, row, where, &stats, &t->measurement);
    t->status = (gb_trial_status)status;
    if (rc) return rc;
    gb_strbuf text = GB_STRBUF_INIT;
    gb_fields_append_canonical(&text, &t->config, NULL, 0);
    t->config_text = gb_sb_status(&text) ? NULL : strdup(gb_sb_str(&text));
    gb_sb_free(&text);
    return t->config_text ? GB_OK : oom(r);
}
