/* Reading a JSON run file into named sample sets for `gpubench compare`
 * (report/compare/compare.h): ours, whose entries carry every sample, and Google
 * Benchmark's, whose repetitions are the samples. */
#include "report/compare/compare.h"

#include "base/file.h"
#include "base/json.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct loader {
    const char *path;
    bool all_roles;
    gb_sample_file *f;
    gb_err *err;
} loader;

/* An error about entry i of the file: "PATH: benchmarks[i] ("NAME"): ...". */
static int entry_error(loader *l, size_t i, const json_t *entry, const char *what)
{
    const char *name = gb_json_str(gb_json_get(entry, "name"), NULL);
    if (name)
        return gb_err_set(l->err, GB_EINVAL, "%s: benchmarks[%zu] (\"%s\"): %s", l->path, i, name,
                          what);
    return gb_err_set(l->err, GB_EINVAL, "%s: benchmarks[%zu]: %s", l->path, i, what);
}

static int find_index(const gb_sample_file *f, const char *name)
{
    for (int i = 0; i < f->n; i++)
        if (!strcmp(f->sets[i].name, name)) return i;
    return -1;
}

const gb_sample_set *gb_sample_file_find(const gb_sample_file *f, const char *name)
{
    int i = find_index(f, name);
    return i < 0 ? NULL : &f->sets[i];
}

/* The set named name, added (empty) when new; NULL when memory runs out. */
static gb_sample_set *set_for(loader *l, const char *name)
{
    gb_sample_file *f = l->f;
    int i = find_index(f, name);
    if (i >= 0) return &f->sets[i];
    gb_sample_set *sets = realloc(f->sets, (size_t)(f->n + 1) * sizeof *sets);
    if (!sets) return NULL;
    f->sets = sets;
    gb_sample_set *s = &sets[f->n];
    *s = (gb_sample_set){.name = strdup(name)};
    if (!s->name) return NULL;
    f->n++;
    return s;
}

static int add_sample(loader *l, gb_sample_set *s, double ms)
{
    double *grown = realloc(s->samples_ms, (size_t)(s->n + 1) * sizeof *grown);
    if (!grown) return gb_err_set(l->err, GB_ENOMEM, "%s: out of memory", l->path);
    s->samples_ms = grown;
    s->samples_ms[s->n++] = ms;
    return GB_OK;
}

/* Milliseconds per time_unit (Google Benchmark's default is ns); 0 when unknown. */
static double unit_ms(const json_t *entry)
{
    const char *unit = gb_json_str(gb_json_get(entry, "time_unit"), "ns");
    return !strcmp(unit, "ns")   ? 1e-6
           : !strcmp(unit, "us") ? 1e-3
           : !strcmp(unit, "ms") ? 1.0
           : !strcmp(unit, "s")  ? 1e3
                                 : 0.0;
}

/* An entry that failed: its set keeps the message and no samples. */
static int mark_error(loader *l, gb_sample_set *s, const json_t *entry)
{
    const char *msg = gb_json_str(gb_json_get(entry, "error_message"), "error_occurred");
    free(s->error);
    s->error = strdup(msg);
    return s->error ? GB_OK : gb_err_set(l->err, GB_ENOMEM, "%s: out of memory", l->path);
}

/* ---- ours ------------------------------------------------------------------- */

static bool role_wanted(loader *l, const char *role)
{
    return !strcmp(role, "best") || !strcmp(role, "baseline") ||
           (l->all_roles && !strcmp(role, "trial"));
}

static int add_samples_ms(loader *l, size_t i, const json_t *entry, gb_sample_set *s)
{
    const json_t *samples = gb_json_get(entry, "samples_ms");
    if (!json_is_array(samples)) return entry_error(l, i, entry, "no \"samples_ms\" array");
    for (size_t k = 0; k < json_array_size(samples); k++) {
        double ms = gb_json_num(gb_json_at(samples, k), NAN);
        if (!isfinite(ms) || ms < 0) {
            char what[96];
            snprintf(what, sizeof what, "samples_ms[%zu] is not a time in milliseconds", k);
            return entry_error(l, i, entry, what);
        }
        int rc = add_sample(l, s, ms);
        if (rc) return rc;
    }
    /* gpubench writes the median of exactly these samples: one that differs means
     * the file was changed since, and the verdict would rest on numbers its own
     * summary contradicts */
    double stated = gb_json_num(gb_json_get(gb_json_get(entry, "statistics"), "median_ms"), NAN);
    double median = gb_compare_median(s->samples_ms, s->n);
    if (isfinite(stated) && s->n > 0 && fabs(stated - median) > 1e-9 * fmax(1.0, median)) {
        char what[160];
        snprintf(what, sizeof what,
                 "statistics.median_ms %g is not the median of its samples_ms (%g): the file "
                 "was changed after it was written",
                 stated, median);
        return entry_error(l, i, entry, what);
    }
    return GB_OK;
}

static int load_ours(loader *l, size_t i, const json_t *entry, const char *name)
{
    const char *role = gb_json_str(gb_json_get(entry, "role"), NULL);
    if (!role || (strcmp(role, "best") && strcmp(role, "baseline") && strcmp(role, "trial")))
        return entry_error(l, i, entry, "\"role\" is not best, baseline or trial");
    if (!role_wanted(l, role)) return GB_OK;
    if (find_index(l->f, name) >= 0) return entry_error(l, i, entry, "a second entry of that name");
    gb_sample_set *s = set_for(l, name);
    if (!s) return gb_err_set(l->err, GB_ENOMEM, "%s: out of memory", l->path);
    if (gb_json_bool(gb_json_get(entry, "error_occurred"), false)) return mark_error(l, s, entry);
    return add_samples_ms(l, i, entry, s);
}

/* ---- Google Benchmark's --------------------------------------------------------- */

/* The repetitions of a benchmark share its run_name (older files: its name). */
static const char *run_name(const json_t *entry, const char *name)
{
    return gb_json_str(gb_json_get(entry, "run_name"), name);
}

static int add_real_time(loader *l, size_t i, const json_t *entry, gb_sample_set *s)
{
    if (gb_json_bool(gb_json_get(entry, "error_occurred"), false)) return mark_error(l, s, entry);
    double per_unit = unit_ms(entry), t = gb_json_num(gb_json_get(entry, "real_time"), NAN);
    if (per_unit == 0) return entry_error(l, i, entry, "\"time_unit\" is not ns, us, ms or s");
    if (!isfinite(t) || t < 0) return entry_error(l, i, entry, "no \"real_time\" (a time)");
    return add_sample(l, s, t * per_unit);
}

static int load_iteration(loader *l, size_t i, const json_t *entry, const char *name)
{
    gb_sample_set *s = set_for(l, run_name(entry, name));
    if (!s) return gb_err_set(l->err, GB_ENOMEM, "%s: out of memory", l->path);
    return add_real_time(l, i, entry, s);
}

/* A benchmark reported only as aggregates: its `aggregate` value is its one sample. */
static int load_aggregate(loader *l, size_t i, const json_t *entry, const char *name,
                          const char *aggregate)
{
    if (strcmp(gb_json_str(gb_json_get(entry, "aggregate_name"), ""), aggregate)) return GB_OK;
    const char *run = run_name(entry, name);
    if (find_index(l->f, run) >= 0) return GB_OK; /* repetitions, or a median already */
    gb_sample_set *s = set_for(l, run);
    if (!s) return gb_err_set(l->err, GB_ENOMEM, "%s: out of memory", l->path);
    return add_real_time(l, i, entry, s);
}

/* ---- the file ------------------------------------------------------------------- */

/* One pass over the entries: pass 0 reads ours and the repetitions, pass 1 the
 * medians of benchmarks that have none, pass 2 their means. */
static int load_pass(loader *l, const json_t *list, int pass, bool *out_ours)
{
    for (size_t i = 0; i < json_array_size(list); i++) {
        const json_t *entry = gb_json_at(list, i);
        const char *name = gb_json_str(gb_json_get(entry, "name"), NULL);
        if (!json_is_object(entry) || !name)
            return entry_error(l, i, entry, "not an object with a \"name\"");
        bool ours = gb_json_get(entry, "role") != NULL;
        const char *type = gb_json_str(gb_json_get(entry, "run_type"), "iteration");
        int rc = GB_OK;
        if (ours) *out_ours = true;
        if (pass == 0 && ours)
            rc = load_ours(l, i, entry, name);
        else if (pass == 0 && !strcmp(type, "iteration"))
            rc = load_iteration(l, i, entry, name);
        else if (pass > 0 && !ours && !strcmp(type, "aggregate"))
            rc = load_aggregate(l, i, entry, name, pass == 1 ? "median" : "mean");
        if (rc) return rc;
    }
    return GB_OK;
}

static int load_doc(loader *l, const json_t *doc)
{
    const json_t *list = gb_json_get(doc, "benchmarks");
    if (!json_is_array(list))
        return gb_err_set(l->err, GB_EINVAL,
                          "%s: no \"benchmarks\" array: not a gpubench or Google Benchmark JSON "
                          "file",
                          l->path);
    bool ours = false;
    for (int pass = 0; pass < 3; pass++) {
        int rc = load_pass(l, list, pass, &ours);
        if (rc) return rc;
    }
    l->f->format = ours ? "gpubench" : "google-benchmark";
    return GB_OK;
}

int gb_sample_file_load(const char *path, bool all_roles, gb_sample_file *out, gb_err *err)
{
    *out = (gb_sample_file){.format = "gpubench"};
    char *text = NULL;
    size_t len = 0;
    json_t *doc = NULL;
    int rc = gb_read_file(path, GB_JSON_MAX_TEXT, "", &text, &len, err);
    if (!rc && (rc = gb_json_parse(text, len, &doc, err)) != GB_OK) gb_err_prefix(err, "%s", path);
    if (!rc) {
        loader l = {path, all_roles, out, err};
        rc = load_doc(&l, doc);
    }
    if (rc) gb_sample_file_free(out);
    json_decref(doc);
    free(text);
    return rc;
}

void gb_sample_file_free(gb_sample_file *f)
{
    if (!f) return;
    for (int i = 0; i < f->n; i++) {
        free(f->sets[i].name);
        free(f->sets[i].samples_ms);
        free(f->sets[i].error);
    }
    free(f->sets);
    *f = (gb_sample_file){.format = "gpubench"};
}
