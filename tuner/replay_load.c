/* Reading a replay table from a file (replay.h): the format is told by the content.
 * Kernel Tuner files go through the importer's reader (cache/ktuner_file.h); our own
 * transfer files and `cache show --json` output through the cache's trial records. */
#include "tuner/replay.h"

#include "base/file.h"

#include "cache/inspect.h"
#include "cache/ktuner_file.h"
#include "cache/record.h"
#include "cache/transfer.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Text from the file, fit for a message: control characters become '?', and it is
 * cut to n - 1 bytes (with "..." when cut). */
static const char *shown(const char *s, char *buf, size_t n)
{
    size_t k = 0;
    for (const unsigned char *p = (const unsigned char *)(s ? s : "-"); *p && k + 1 < n; p++)
        buf[k++] = *p < 0x20 || *p == 0x7f ? '?' : (char)*p;
    buf[k] = '\0';
    if (s && s[k] && n > 4) memcpy(buf + n - 4, "...", 4);
    return buf;
}

static bool selects_anything(const gb_replay_select *sel)
{
    return sel && (sel->kernel || sel->shape || sel->device || sel->kernel_fp);
}

/* ---- Kernel Tuner files ----------------------------------------------------- */

typedef struct kt_space {
    int *order[GB_KTUNER_MAX_PARAMS];      /* per file parameter: each value's place in the space */
    uint64_t stride[GB_KTUNER_MAX_PARAMS]; /* per file parameter: its ordinal stride */
} kt_space;

static void kt_space_free(kt_space *k)
{
    for (int i = 0; i < GB_KTUNER_MAX_PARAMS; i++)
        free(k->order[i]);
}

/* The space of tune_params: parameters by name, values sorted (gb_replay_space_add). */
static int kt_make_space(const gb_ktuner_file *f, gb_space *space, kt_space *k, gb_err *err)
{
    int rc = GB_OK;
    for (int i = 0; rc == GB_OK && i < f->n_params; i++) {
        const gb_ktuner_param *p = &f->params[i];
        if (!(k->order[i] = malloc((size_t)p->n_values * sizeof(int))))
            return gb_err_set(err, GB_ENOMEM, "out of memory");
        rc = gb_replay_space_add(space, p->name, p->values, p->n_values, k->order[i], err);
    }
    for (int i = 0; rc == GB_OK && i < f->n_params; i++) {
        k->stride[i] = 1;
        for (int p = space->n_params - 1;
             p >= 0 && strcmp(space->params[p].name, f->params[i].name); p--)
            k->stride[i] *= (uint64_t)space->params[p].n_values;
    }
    if (rc == GB_OK && gb_space_size(space) == UINT64_MAX)
        rc =
            gb_err_set(err, GB_ELIMIT, "tune_params span more configurations than gpubench counts");
    return rc;
}

/* What evaluating a configuration took, in the file's unit: the sum of the times a
 * brute-force run records (compiling, benchmarking, Kernel Tuner's own, the
 * strategy's, verifying), as autotuning_methodology sums them; NAN when none is
 * there. */
static double eval_cost(const json_t *times, const char *const *keys)
{
    double sum = 0;
    bool any = false;
    for (int i = 0; keys[i]; i++) {
        const json_t *v = json_object_get(times, keys[i]);
        if (!json_is_number(v) || !isfinite(json_number_value(v))) continue;
        sum += json_number_value(v);
        any = true;
    }
    return any ? sum : NAN;
}

static const char *const kt_time_keys[] = {"compile_time",  "benchmark_time",    "framework_time",
                                           "strategy_time", "verification_time", NULL};

static int kt_entries(const gb_ktuner_file *f, const kt_space *k, gb_replay_table *t, gb_err *err)
{
    const char *key;
    const json_t *entry;
    json_object_foreach((json_t *)f->cache, key, entry)
    {
        gb_ktuner_entry e;
        char buf[80];
        int rc = gb_ktuner_entry_read(f, entry, &e, err);
        uint64_t ordinal = 0;
        for (int i = 0; rc == GB_OK && i < f->n_params; i++)
            ordinal += (uint64_t)k->order[i][e.index[i]] * k->stride[i];
        if (rc == GB_OK) rc = gb_replay_table_add(t, ordinal, e.status, e.time_ms, err);
        if (rc == GB_OK)
            t->entries[t->n_entries - 1].cost_s = eval_cost(entry, kt_time_keys) / 1e3; /* ms */
        if (rc == GB_EINVAL) gb_err_prefix(err, "cache entry \"%s\"", shown(key, buf, sizeof buf));
        if (rc) return rc;
    }
    return GB_OK;
}

static int load_ktuner(json_t *doc, const gb_replay_select *sel, gb_replay_table *t, gb_err *err)
{
    gb_ktuner_file f;
    gb_space space = {0};
    kt_space k = {0};
    char kernel[200], device[300];
    int rc = gb_ktuner_file_open(&f, doc, err);
    if (rc == GB_OK && selects_anything(sel))
        rc = gb_err_set(err, GB_EINVAL,
                        "a Kernel Tuner cache file holds one table: --kernel, --shape, --device "
                        "and --kernel-fp pick one of a gpubench transfer file's");
    if (rc == GB_OK) rc = kt_make_space(&f, &space, &k, err);
    if (rc == GB_OK) rc = gb_replay_table_init(t, &space, json_object_size(f.cache), err);
    if (rc == GB_OK) rc = kt_entries(&f, &k, t, err);
    if (rc == GB_OK) {
        t->format = GB_REPLAY_KTUNER;
        snprintf(
            t->what, sizeof t->what, "Kernel Tuner cache, kernel %s, device %s",
            shown(json_string_value(json_object_get(doc, "kernel_name")), kernel, sizeof kernel),
            shown(json_string_value(json_object_get(doc, "device_name")), device, sizeof device));
    }
    gb_space_free(&space);
    kt_space_free(&k);
    gb_ktuner_file_close(&f);
    return rc;
}

/* ---- our transfer files and `cache show --json` ---------------------------------- */

/* A trial of the file, reduced to what the table needs. */
typedef struct trial {
    gb_fields config;
    gb_trial_status status;
    double ms;       /* ok: the median */
    double cost_s;   /* what evaluating it took; NAN: unknown */
    bool unmeasured; /* ok but without statistics */
    int group;
} trial;

/* One kernel, kernel fingerprint, device and shape of the file. */
typedef struct group {
    gb_record_id id;
    size_t n_trials;
    bool selected;
} group;

typedef struct reading {
    const gb_replay_select *sel;
    trial *trials; /* of the selected groups */
    size_t n_trials, cap_trials;
    group *groups;
    int n_groups, cap_groups;
    int last; /* the group found last: trials of one group tend to come together */
} reading;

static void reading_free(reading *r)
{
    for (size_t i = 0; i < r->n_trials; i++)
        gb_fields_free(&r->trials[i].config);
    for (int i = 0; i < r->n_groups; i++)
        gb_record_id_free(&r->groups[i].id);
    free(r->trials);
    free(r->groups);
}

static bool selected(const gb_replay_select *sel, const gb_record_id *id)
{
    if (!sel) return true;
    return (!sel->kernel || !strcmp(sel->kernel, id->kernel)) &&
           (!sel->shape || gb_fields_equal(sel->shape, &id->shape)) &&
           (!sel->device || strstr(id->device, sel->device)) &&
           (!sel->kernel_fp || !strncmp(id->kernel_fp, sel->kernel_fp, strlen(sel->kernel_fp)));
}

/* The group of id, added when new; -1 on ENOMEM. */
static int group_of(reading *r, const gb_record_id *id)
{
    if (r->last < r->n_groups && gb_record_id_equal(&r->groups[r->last].id, id)) return r->last;
    for (int i = 0; i < r->n_groups; i++)
        if (gb_record_id_equal(&r->groups[i].id, id)) return r->last = i;
    if (r->n_groups == r->cap_groups) {
        int cap = r->cap_groups ? 2 * r->cap_groups : 16;
        group *grown = realloc(r->groups, (size_t)cap * sizeof *grown);
        if (!grown) return -1;
        r->groups = grown;
        r->cap_groups = cap;
    }
    group *g = &r->groups[r->n_groups];
    *g = (group){.selected = selected(r->sel, id)};
    if (gb_record_id_copy(id, &g->id)) return -1;
    return r->last = r->n_groups++;
}

static int keep_trial(reading *r, gb_trial_record *rec, int g)
{
    if (r->n_trials == r->cap_trials) {
        size_t cap = r->cap_trials ? 2 * r->cap_trials : 256;
        trial *grown = realloc(r->trials, cap * sizeof *grown);
        if (!grown) return GB_ENOMEM;
        r->trials = grown;
        r->cap_trials = cap;
    }
    trial *t = &r->trials[r->n_trials++];
    *t =
        (trial){.config = rec->config, .status = rec->status, .ms = NAN, .cost_s = NAN, .group = g};
    rec->config = (gb_fields){0};
    if (rec->in_flight) t->status = GB_TRIAL_CRASHED; /* it never ended where it ran */
    if (t->status == GB_TRIAL_OK && rec->has_stats) t->ms = rec->stats.median;
    t->unmeasured = t->status == GB_TRIAL_OK && !rec->has_stats;
    return GB_OK;
}

/* Counts the record in its group, and keeps it (taking its configuration) when the
 * group is selected. */
static int take_record(reading *r, gb_trial_record *rec, gb_err *err)
{
    int g = group_of(r, &rec->id);
    if (g < 0 || (r->groups[g].selected && keep_trial(r, rec, g)))
        return gb_err_set(err, GB_ENOMEM, "out of memory");
    r->groups[g].n_trials++;
    return GB_OK;
}

/* Decodes the trial records of list; place is how messages name the list. */
static int read_trials(reading *r, const json_t *list, const char *place, gb_err *err)
{
    if (!list) return GB_OK;
    if (!json_is_array(list)) return gb_err_set(err, GB_EINVAL, "%s is not a list", place);
    size_t i;
    const json_t *item;
    json_array_foreach(list, i, item)
    {
        gb_trial_record rec;
        int rc = gb_trial_record_from_json(item, &rec, err);
        if (rc == GB_ECACHE) {
            gb_err_prefix(err, "%s[%zu]", place, i);
            return err->code = GB_EINVAL;
        }
        if (rc) return gb_err_set(err, rc, "out of memory");
        rc = take_record(r, &rec, err);
        gb_trial_record_free(&rec);
        if (rc) return rc;
    }
    return GB_OK;
}

static void describe(const group *g, gb_strbuf *sb)
{
    char kernel[140], device[300], fp[80];
    gb_strbuf shape = GB_STRBUF_INIT;
    gb_fields_append_canonical(&shape, &g->id.shape, NULL, 0);
    char shape_text[400];
    gb_sb_printf(sb, "kernel %s, shape %s, device %s, kernel_fp %s",
                 shown(g->id.kernel, kernel, sizeof kernel),
                 shown(shape.len ? gb_sb_str(&shape) : "-", shape_text, sizeof shape_text),
                 shown(g->id.device, device, sizeof device), shown(g->id.kernel_fp, fp, sizeof fp));
    gb_sb_free(&shape);
}

/* The groups, a line each (with only_selected, the selected ones), at most 12. */
static void list_groups(const reading *r, bool only_selected, gb_strbuf *sb)
{
    int n = 0, listed = 0;
    for (int i = 0; i < r->n_groups; i++) {
        if (only_selected && !r->groups[i].selected) continue;
        if (++n > 12) continue;
        gb_sb_puts(sb, "\n  ");
        describe(&r->groups[i], sb);
        gb_sb_printf(sb, " (%zu trials)", r->groups[i].n_trials);
        listed++;
    }
    if (n > listed) gb_sb_printf(sb, "\n  and %d more", n - listed);
}

/* The one selected group, or an error that lists what the file holds. */
static int pick_group(const reading *r, bool any_selection, int *out, gb_err *err)
{
    int n = 0;
    for (int i = 0; i < r->n_groups; i++)
        if (r->groups[i].selected) *out = i, n++;
    if (n == 1) return GB_OK;
    if (r->n_groups == 0) return gb_err_set(err, GB_EINVAL, "holds no trial records");
    gb_strbuf sb = GB_STRBUF_INIT;
    if (n == 0) {
        gb_sb_printf(&sb, "no trials match the --kernel, --shape, --device and "
                          "--kernel-fp given; it holds trials of");
        list_groups(r, false, &sb);
    } else {
        gb_sb_printf(&sb,
                     "holds trials of %d kernels, shapes or devices%s; pick one with --kernel, "
                     "--shape, --device or --kernel-fp:",
                     n, any_selection ? " that match" : "");
        list_groups(r, true, &sb);
    }
    int rc = gb_err_set(err, GB_EINVAL, "%s", gb_sb_status(&sb) ? "out of memory" : gb_sb_str(&sb));
    gb_sb_free(&sb);
    return rc;
}

/* The distinct values of one parameter, in the order first seen (shallow copies of
 * the trials' values). */
typedef struct seen_values {
    gb_value *values;
    int n, cap;
    int *order; /* after the space is made: each value's place in it */
} seen_values;

static int value_place(const seen_values *v, const gb_value *value)
{
    for (int j = 0; j < v->n; j++)
        if (gb_value_equal(&v->values[j], value)) return j;
    return -1;
}

static int see_value(seen_values *v, const gb_value *value)
{
    if (value_place(v, value) >= 0) return GB_OK;
    if (v->n == v->cap) {
        int cap = v->cap ? 2 * v->cap : 16;
        gb_value *grown = realloc(v->values, (size_t)cap * sizeof *grown);
        if (!grown) return GB_ENOMEM;
        v->values = grown;
        v->cap = cap;
    }
    v->values[v->n++] = *value;
    return GB_OK;
}

static bool same_names(const gb_fields *a, const gb_fields *b)
{
    if (a->n != b->n) return false;
    for (int i = 0; i < a->n; i++)
        if (strcmp(a->names[i], b->names[i])) return false;
    return true;
}

static int names_differ(const gb_fields *a, const gb_fields *b, gb_err *err)
{
    gb_strbuf sa = GB_STRBUF_INIT, sb = GB_STRBUF_INIT;
    char ta[300], tb[300];
    gb_fields_append_canonical(&sa, a, NULL, 0);
    gb_fields_append_canonical(&sb, b, NULL, 0);
    gb_err_set(err, GB_EINVAL, "its trials do not all have the same parameters: %s and %s",
               shown(gb_sb_str(&sa), ta, sizeof ta), shown(gb_sb_str(&sb), tb, sizeof tb));
    gb_sb_free(&sa);
    gb_sb_free(&sb);
    return GB_EINVAL;
}

/* The space of the group's trials: their parameters, the values they hold. */
static int trials_space(const reading *r, int g, seen_values *seen, gb_space *space, gb_err *err)
{
    const gb_fields *first = NULL;
    int rc = GB_OK;
    for (size_t i = 0; rc == GB_OK && i < r->n_trials; i++) {
        const gb_fields *c = &r->trials[i].config;
        if (r->trials[i].group != g) continue;
        if (!first) first = c;
        if (!same_names(first, c)) return names_differ(first, c, err);
        if (c->n > GB_MAX_PARAMS)
            return gb_err_set(err, GB_EINVAL, "its trials have %d parameters, more than %d", c->n,
                              GB_MAX_PARAMS);
        for (int p = 0; rc == GB_OK && p < c->n; p++)
            rc = see_value(&seen[p], &c->values[p]);
    }
    for (int p = 0; rc == GB_OK && first && p < first->n; p++) {
        if (!(seen[p].order = malloc((size_t)seen[p].n * sizeof(int)))) rc = GB_ENOMEM;
        if (rc == GB_OK)
            rc = gb_replay_space_add(space, first->names[p], seen[p].values, seen[p].n,
                                     seen[p].order, err);
    }
    if (rc == GB_OK && gb_space_size(space) == UINT64_MAX)
        rc = gb_err_set(err, GB_ELIMIT, "its trials span more configurations than gpubench counts");
    return rc == GB_ENOMEM ? gb_err_set(err, rc, "out of memory") : rc;
}

/* The group's trials as entries. Both the trial's fields and the space's parameters
 * are sorted by name, so parameter p of one is parameter p of the other. */
static int trials_entries(const reading *r, int g, const seen_values *seen, gb_replay_table *t,
                          gb_err *err)
{
    for (size_t i = 0; i < r->n_trials; i++) {
        const trial *tr = &r->trials[i];
        if (tr->group != g) continue;
        if (tr->unmeasured) {
            t->n_unmeasured++;
            continue;
        }
        uint64_t ordinal = 0;
        for (int p = 0; p < t->space.n_params; p++)
            ordinal = ordinal * (uint64_t)t->space.params[p].n_values +
                      (uint64_t)seen[p].order[value_place(&seen[p], &tr->config.values[p])];
        int rc = gb_replay_table_add(t, ordinal, tr->status, tr->ms, err);
        if (rc) return rc;
        t->entries[t->n_entries - 1].cost_s = tr->cost_s;
    }
    return GB_OK;
}

static int trials_table(const reading *r, int g, gb_replay_table *t, gb_err *err)
{
    seen_values seen[GB_MAX_PARAMS] = {0};
    gb_space space = {0};
    int rc = trials_space(r, g, seen, &space, err);
    if (rc == GB_OK) rc = gb_replay_table_init(t, &space, r->groups[g].n_trials, err);
    if (rc == GB_OK) rc = trials_entries(r, g, seen, t, err);
    for (int p = 0; p < GB_MAX_PARAMS; p++) {
        free(seen[p].values);
        free(seen[p].order);
    }
    gb_space_free(&space);
    return rc;
}

/* The table of the one group the selection picks, and what it is. */
static int selected_table(const reading *r, gb_replay_format format, gb_replay_table *t,
                          gb_err *err)
{
    int g = -1;
    int rc = pick_group(r, selects_anything(r->sel), &g, err);
    if (rc == GB_OK) rc = trials_table(r, g, t, err);
    if (rc == GB_OK) {
        gb_strbuf sb = GB_STRBUF_INIT;
        describe(&r->groups[g], &sb);
        t->format = format;
        gb_strlcpy(t->what, gb_sb_str(&sb), sizeof t->what);
        gb_sb_free(&sb);
    }
    return rc;
}

/* A transfer file (format "gpubench-cache-export") or `cache show --json` output. */
static int load_trials(const json_t *doc, gb_replay_format format, const gb_replay_select *sel,
                       gb_replay_table *t, gb_err *err)
{
    reading r = {.sel = sel};
    int rc = GB_OK;
    if (format == GB_REPLAY_TRANSFER) {
        rc = read_trials(&r, json_object_get(doc, "trials"), "trials", err);
    } else {
        const json_t *groups = json_object_get(doc, "groups"), *item;
        size_t i;
        json_array_foreach(groups, i, item)
        {
            char place[64];
            snprintf(place, sizeof place, "groups[%zu].trials", i);
            if (rc == GB_OK) rc = read_trials(&r, json_object_get(item, "trials"), place, err);
        }
    }
    if (rc == GB_OK) rc = selected_table(&r, format, t, err);
    reading_free(&r);
    return rc;
}

static int check_transfer_version(const json_t *doc, gb_err *err)
{
    const json_t *version = json_object_get(doc, "version");
    if (!json_is_integer(version))
        return gb_err_set(err, GB_EINVAL, "a transfer file without a \"version\" number");
    if (json_integer_value(version) > GB_TRANSFER_VERSION)
        return gb_err_set(err, GB_EINVAL,
                          "export format version %lld is newer than this gpubench reads (%d): "
                          "upgrade gpubench",
                          (long long)json_integer_value(version), GB_TRANSFER_VERSION);
    return GB_OK;
}

/* ---- T4 files --------------------------------------------------------------------- */

/* The Autotuning Association's results format (T4, schema 1.0.0): "results", each
 * with its "configuration", "invalidity" ("correct", or why it has no time:
 * "compile", "runtime", "timeout", "correctness", "constraints"), "measurements"
 * ({name, value, unit}; the objective is the one named "time") and "times" of the
 * evaluation (ms, or metadata.timeunit). A configuration the constraints rejected
 * is not in the space's valid set: it is left out, as Kernel Tuner leaves it out
 * of its cache. */
static const char *const t4_time_keys[] = {"compilation",      "benchmark",  "framework",
                                           "search_algorithm", "validation", NULL};

static gb_trial_status t4_status(const char *invalidity)
{
    if (!invalidity || !strcmp(invalidity, "correct")) return GB_TRIAL_OK;
    if (!strcmp(invalidity, "compile")) return GB_TRIAL_COMPILE_ERROR;
    if (!strcmp(invalidity, "timeout")) return GB_TRIAL_TIMEOUT;
    if (!strcmp(invalidity, "correctness")) return GB_TRIAL_WRONG;
    return GB_TRIAL_LAUNCH_ERROR; /* "runtime" and anything else */
}

/* The "time" measurement (a number; a string is a failure), else the mean of the
 * runtimes; NAN when there is neither. */
static double t4_time_ms(const json_t *result)
{
    size_t i;
    const json_t *m, *runtimes = json_object_get(json_object_get(result, "times"), "runtimes");
    json_array_foreach(json_object_get(result, "measurements"), i, m)
    {
        const char *name = json_string_value(json_object_get(m, "name"));
        const json_t *value = json_object_get(m, "value");
        if (name && !strcmp(name, "time"))
            return json_is_number(value) ? json_number_value(value) : NAN;
    }
    double sum = 0;
    size_t n = 0;
    json_array_foreach(runtimes, i, m)
    {
        if (!json_is_number(m)) continue;
        sum += json_number_value(m);
        n++;
    }
    return n ? sum / (double)n : NAN;
}

/* metadata.timeunit as seconds per unit: milliseconds unless it says otherwise
 * (benchmark_hub writes "miliseconds"). */
static double t4_unit_s(const json_t *doc)
{
    const char *unit =
        json_string_value(json_object_get(json_object_get(doc, "metadata"), "timeunit"));
    if (!unit) return 1e-3;
    if (!strcmp(unit, "seconds") || !strcmp(unit, "s")) return 1;
    if (!strcmp(unit, "microseconds") || !strcmp(unit, "us")) return 1e-6;
    return 1e-3;
}

static int t4_trial(reading *r, const json_t *result, double unit_s, size_t i, gb_err *err)
{
    const char *invalidity = json_string_value(json_object_get(result, "invalidity"));
    if (invalidity && !strcmp(invalidity, "constraints")) return GB_OK;
    gb_trial_record rec = {.status = t4_status(invalidity)};
    int rc = gb_fields_from_json(json_object_get(result, "configuration"), &rec.config, err);
    if (rc) return gb_err_prefix(err, "results[%zu].configuration", i), err->code = GB_EINVAL;
    double ms = t4_time_ms(result);
    if (rec.status == GB_TRIAL_OK && !(ms > 0)) rec.status = GB_TRIAL_LAUNCH_ERROR;
    rec.has_stats = rec.status == GB_TRIAL_OK;
    rec.stats.median = ms;
    /* a T4 file holds one table: its trials make one group, of no name */
    if (r->n_groups == 0 &&
        group_of(r, &(gb_record_id){.kernel = "", .kernel_fp = "", .device = ""}) < 0)
        rc = GB_ENOMEM;
    if (rc == GB_OK && keep_trial(r, &rec, 0)) rc = GB_ENOMEM;
    gb_fields_free(&rec.config);
    if (rc) return gb_err_set(err, rc, "out of memory");
    r->groups[0].n_trials++;
    r->trials[r->n_trials - 1].cost_s =
        eval_cost(json_object_get(result, "times"), t4_time_keys) * unit_s;
    return GB_OK;
}

static int load_t4(const json_t *doc, const gb_replay_select *sel, gb_replay_table *t, gb_err *err)
{
    if (selects_anything(sel))
        return gb_err_set(err, GB_EINVAL,
                          "a T4 file holds one table: --kernel, --shape, --device and --kernel-fp "
                          "pick one of a gpubench transfer file's");
    reading r = {0};
    const json_t *results = json_object_get(doc, "results"), *item;
    double unit_s = t4_unit_s(doc);
    size_t i;
    int rc = GB_OK;
    json_array_foreach(results, i, item)
    {
        if (rc == GB_OK) rc = t4_trial(&r, item, unit_s, i, err);
    }
    if (rc == GB_OK && r.n_groups == 0)
        rc = gb_err_set(err, GB_EINVAL, "a T4 file with no results");
    if (rc == GB_OK) rc = trials_table(&r, 0, t, err);
    if (rc == GB_OK) {
        t->format = GB_REPLAY_T4;
        snprintf(t->what, sizeof t->what, "T4 results, schema %s",
                 json_string_value(json_object_get(doc, "schema_version")));
    }
    reading_free(&r);
    return rc;
}

/* ---- the file ------------------------------------------------------------------ */

static int load_doc(json_t *doc, const gb_replay_select *sel, gb_replay_table *t, gb_err *err)
{
    const char *format = json_string_value(json_object_get(doc, "format"));
    if (format && !strcmp(format, GB_TRANSFER_FORMAT)) {
        int rc = check_transfer_version(doc, err);
        return rc ? rc : load_trials(doc, GB_REPLAY_TRANSFER, sel, t, err);
    }
    if (json_is_array(json_object_get(doc, "groups")))
        return load_trials(doc, GB_REPLAY_TRIALS, sel, t, err);
    if (gb_ktuner_is_cache(doc)) return load_ktuner(doc, sel, t, err);
    if (json_is_array(json_object_get(doc, "results")) &&
        json_is_string(json_object_get(doc, "schema_version")))
        return load_t4(doc, sel, t, err);
    return gb_err_set(err, GB_EINVAL,
                      "not a table replay reads: expected a gpubench transfer file (\"format\": "
                      "\"%s\"), the output of `gpubench cache show --json` (\"groups\"), a "
                      "Kernel Tuner cache file (\"tune_params\" and \"cache\") or a T4 results "
                      "file (\"schema_version\" and \"results\")",
                      GB_TRANSFER_FORMAT);
}

/* A table with nothing timed has no optimum to replay towards. */
static int check_timed(const gb_replay_table *t, gb_err *err)
{
    if (t->has_optimum) return GB_OK;
    return gb_err_set(err, GB_EINVAL,
                      "no configuration has a time: every one of its %zu entries failed",
                      t->n_entries);
}

int gb_replay_parse(const char *text, size_t len, const char *name, const gb_replay_select *sel,
                    gb_replay_table *out, gb_err *err)
{
    memset(out, 0, sizeof *out);
    json_t *doc = gb_ktuner_parse(text, len, err); /* closes a file Kernel Tuner left open */
    int rc = doc ? load_doc(doc, sel, out, err) : GB_EINVAL;
    json_decref(doc);
    if (rc == GB_OK) rc = check_timed(out, err);
    if (rc) {
        gb_replay_table_free(out);
        gb_err_prefix(err, "%s", name);
    }
    return rc;
}

int gb_replay_load(const char *path, const gb_replay_select *sel, gb_replay_table *out, gb_err *err)
{
    char *text = NULL;
    size_t len = 0;
    memset(out, 0, sizeof *out);
    int rc = gb_read_file(path, GB_REPLAY_MAX_FILE_BYTES, "", &text, &len, err);
    if (rc == GB_OK) rc = gb_replay_parse(text, len, path, sel, out, err);
    free(text);
    return rc;
}

/* Keeps a trial record of the kernel (and shape) as a transfer file's would be. */
static int walk_trial(void *ctx, gb_trial_record *rec, gb_err *err)
{
    return take_record(ctx, rec, err);
}

int gb_replay_load_cache(gb_cache *cache, const gb_replay_select *sel, gb_replay_table *out,
                         gb_err *err)
{
    memset(out, 0, sizeof *out);
    reading r = {.sel = sel};
    int rc = sel && sel->kernel
                 ? GB_OK
                 : gb_err_set(err, GB_EINVAL, "replaying from a cache needs the kernel's name");
    if (rc == GB_OK) {
        gb_cache_filter filter = {.kernel = sel->kernel, .shape = sel->shape};
        rc = gb_cache_walk_trials(cache, &filter, walk_trial, &r, NULL, err);
    }
    if (rc == GB_OK && r.n_groups == 0)
        rc = gb_err_set(err, GB_EINVAL, "holds no trials of kernel %s%s", sel->kernel,
                        sel->shape ? " at that shape" : "");
    if (rc == GB_OK) rc = selected_table(&r, GB_REPLAY_CACHE, out, err);
    if (rc == GB_OK) rc = check_timed(out, err);
    reading_free(&r);
    if (rc) {
        gb_replay_table_free(out);
        if (rc != GB_ENOMEM) gb_err_prefix(err, "%s", gb_cache_dir(cache));
    }
    return rc;
}
