/* Reproducibility over repeated runs (report/repro.h): the runs' entries grouped
 * by (kernel, shape), then per shape the winners, the spread of the best, the
 * regret, the baseline's ratio and compare's false alarms. No I/O. */
#include "report/repro.h"

#include "base/strbuf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What compute works on: the shapes found so far, and for each its result in each
 * run (NULL where the run lacks it), row-major, n_runs a row. */
typedef struct grouping {
    gb_repro *out;
    const gb_shape_result **cells;
    int cap_shapes;
    bool *alarmed; /* n_runs * n_runs: the pair (i, j) has an alarm on some shape */
    gb_err *err;
} grouping;

static int oom(gb_err *err)
{
    return gb_err_set(err, GB_ENOMEM, "repro: out of memory");
}

const char *gb_repro_shape_name(const gb_repro_shape *s, char *buf, size_t n)
{
    snprintf(buf, n, "%s/%s", s->kernel, s->key_text);
    return buf;
}

/* A time in ms that can be used: finite and above 0. */
static bool usable_ms(double ms)
{
    return isfinite(ms) && ms > 0;
}

static double best_ms(const gb_shape_result *s)
{
    return s && s->has_best && usable_ms(s->best.median) ? s->best.median : NAN;
}

/* The best's configuration as canonical text (malloc'd); NULL when memory runs out. */
static char *best_text(const gb_shape_result *s)
{
    gb_strbuf sb = GB_STRBUF_INIT;
    gb_fields_append_canonical(&sb, &s->best_config, NULL, 0);
    char *text = gb_sb_status(&sb) ? NULL : strdup(gb_sb_str(&sb));
    gb_sb_free(&sb);
    return text;
}

/* ---- grouping ---------------------------------------------------------------- */

static int find_shape(const gb_repro *r, const char *kernel, const char *key)
{
    for (int i = 0; i < r->n_shapes; i++)
        if (!strcmp(r->shapes[i].kernel, kernel) && !strcmp(r->shapes[i].key_text, key)) return i;
    return -1;
}

static int grow(grouping *g)
{
    gb_repro *r = g->out;
    int cap = g->cap_shapes ? 2 * g->cap_shapes : 8;
    gb_repro_shape *shapes = realloc(r->shapes, (size_t)cap * sizeof *shapes);
    if (!shapes) return oom(g->err);
    r->shapes = shapes;
    const gb_shape_result **cells = realloc(g->cells, (size_t)cap * r->n_runs * sizeof *cells);
    if (!cells) return oom(g->err);
    g->cells = cells;
    g->cap_shapes = cap;
    return GB_OK;
}

static int add_shape(grouping *g, const char *kernel, const char *key, int *out_index)
{
    gb_repro *r = g->out;
    if (r->n_shapes == g->cap_shapes && grow(g)) return GB_ENOMEM;
    gb_repro_shape *s = &r->shapes[r->n_shapes];
    *s = (gb_repro_shape){.kernel = strdup(kernel), .key_text = strdup(key), .modal = -1};
    r->n_shapes++; /* counted now: freed with the rest on failure */
    if (!s->kernel || !s->key_text) return oom(g->err);
    for (int i = 0; i < r->n_runs; i++)
        g->cells[(size_t)(r->n_shapes - 1) * r->n_runs + i] = NULL;
    *out_index = r->n_shapes - 1;
    return GB_OK;
}

static int group_run(grouping *g, const gb_report *run, int run_index)
{
    for (int e = 0; e < run->n_entries; e++) {
        const gb_report_entry *entry = &run->entries[e];
        if (!entry->result || !entry->kernel || !entry->result->key_text) continue;
        int i = find_shape(g->out, entry->kernel, entry->result->key_text);
        if (i < 0 && add_shape(g, entry->kernel, entry->result->key_text, &i)) return GB_ENOMEM;
        const gb_shape_result **cell = &g->cells[(size_t)i * g->out->n_runs + run_index];
        if (!*cell) *cell = entry->result; /* a second entry of the shape: the first counts */
    }
    return GB_OK;
}

/* ---- winners, spread, baseline --------------------------------------------------- */

static int add_winner(gb_repro_shape *s, const gb_shape_result *res, int run, gb_err *err)
{
    char *text = best_text(res);
    if (!text) return oom(err);
    for (int w = 0; w < s->n_winners; w++)
        if (!strcmp(s->winners[w].config, text)) {
            free(text);
            s->winners[w].n_runs++;
            s->winner_of[run] = w;
            return GB_OK;
        }
    gb_repro_winner *grown = realloc(s->winners, (size_t)(s->n_winners + 1) * sizeof *grown);
    if (!grown) return free(text), oom(err);
    s->winners = grown;
    s->winners[s->n_winners] = (gb_repro_winner){.config = text, .n_runs = 1};
    s->winner_of[run] = s->n_winners++;
    return GB_OK;
}

static int find_winners(gb_repro_shape *s, const gb_shape_result *const *row, int n_runs,
                        gb_err *err)
{
    for (int i = 0; i < n_runs; i++) {
        s->winner_of[i] = -1;
        s->n_present += row[i] != NULL;
        if (!row[i] || !row[i]->has_best) continue;
        s->n_best++;
        s->n_cached += row[i]->cached;
        if (add_winner(s, row[i], i, err)) return GB_ENOMEM;
    }
    for (int w = 0; w < s->n_winners; w++)
        if (s->modal < 0 || s->winners[w].n_runs > s->winners[s->modal].n_runs) s->modal = w;
    s->flip_share = s->n_best ? (double)(s->n_best - s->winners[s->modal].n_runs) / s->n_best : NAN;
    return GB_OK;
}

/* (max - min) / min of x[0..n) with its min and max; NaN below two values. */
static double spread_of(const double *x, int n, double *out_min, double *out_max)
{
    double lo = NAN, hi = NAN;
    for (int i = 0; i < n; i++) {
        if (!(x[i] >= lo)) lo = x[i];
        if (!(x[i] <= hi)) hi = x[i];
    }
    *out_min = lo, *out_max = hi;
    return n >= 2 ? (hi - lo) / lo : NAN;
}

/* The spread of the bests and of the speedups over the baseline. */
static int spreads(gb_repro_shape *s, const gb_shape_result *const *row, int n_runs, gb_err *err)
{
    double *bests = calloc((size_t)n_runs, sizeof *bests);
    double *speedups = calloc((size_t)n_runs, sizeof *speedups);
    int n_bests = 0;
    if (!bests || !speedups) return free(bests), free(speedups), oom(err);
    for (int i = 0; i < n_runs; i++) {
        double ms = best_ms(row[i]);
        if (isnan(ms)) continue;
        bests[n_bests++] = ms;
        if (row[i]->has_baseline && usable_ms(row[i]->baseline.stats.median))
            speedups[s->n_baseline++] = row[i]->baseline.stats.median / ms;
    }
    s->spread = spread_of(bests, n_bests, &s->best_min_ms, &s->best_max_ms);
    s->speedup_spread = spread_of(speedups, s->n_baseline, &s->speedup_min, &s->speedup_max);
    free(bests);
    free(speedups);
    return GB_OK;
}

/* ---- regret ------------------------------------------------------------------------ */

/* One time of a configuration in a run; order 0 is the run's best, which comes
 * before the same configuration's screening trial. */
typedef struct timed {
    const char *config;
    int run, order;
    double ms;
} timed;

/* Every configuration measured in some run (in canonical-text order; the texts
 * borrowed from the results) and its time in each run (NaN: not measured there),
 * n_runs a row. */
typedef struct config_times {
    const char **texts;
    double *ms;
    int n, n_runs;
} config_times;

static int compare_timed(const void *a, const void *b)
{
    const timed *x = a, *y = b;
    int c = strcmp(x->config, y->config);
    if (c) return c;
    return x->run != y->run ? (x->run > y->run) - (x->run < y->run) : x->order - y->order;
}

/* The times run i gives: its best's race, and each trial that ended ok. Appended to
 * list (room for them is there); returns how many. */
static int run_times(const gb_shape_result *res, int run, const char *best, timed *list)
{
    int n = 0;
    if (!isnan(best_ms(res))) list[n++] = (timed){best, run, 0, res->best.median};
    for (int t = 0; t < res->n_trials; t++) {
        const gb_trial_note *trial = &res->trials[t];
        double ms = trial->measurement.stats.median;
        if (trial->status == GB_TRIAL_OK && trial->measurement.stats.n > 0 && usable_ms(ms) &&
            trial->config_text)
            list[n++] = (timed){trial->config_text, run, t + 1, ms};
    }
    return n;
}

/* From the sorted times: one row per configuration, the first time of a run kept. */
static int fill_times(config_times *ct, const timed *list, int n)
{
    ct->texts = calloc((size_t)n + 1, sizeof *ct->texts);
    ct->ms = malloc(((size_t)n + 1) * ct->n_runs * sizeof *ct->ms);
    if (!ct->texts || !ct->ms) return GB_ENOMEM;
    for (int i = 0; i < n; i++) {
        if (!ct->n || strcmp(ct->texts[ct->n - 1], list[i].config)) {
            ct->texts[ct->n++] = list[i].config;
            for (int r = 0; r < ct->n_runs; r++)
                ct->ms[(size_t)(ct->n - 1) * ct->n_runs + r] = NAN;
        }
        double *slot = &ct->ms[(size_t)(ct->n - 1) * ct->n_runs + list[i].run];
        if (isnan(*slot)) *slot = list[i].ms;
    }
    return GB_OK;
}

static int collect_times(const gb_repro_shape *s, const gb_shape_result *const *row,
                         config_times *ct)
{
    int cap = 0, n = 0;
    for (int i = 0; i < ct->n_runs; i++)
        cap += row[i] ? row[i]->n_trials + 1 : 0;
    timed *list = malloc(((size_t)cap + 1) * sizeof *list);
    if (!list) return GB_ENOMEM;
    for (int i = 0; i < ct->n_runs; i++)
        if (row[i])
            n +=
                run_times(row[i], i, s->winner_of[i] >= 0 ? s->winners[s->winner_of[i]].config : "",
                          list + n);
    qsort(list, (size_t)n, sizeof *list, compare_timed);
    int rc = fill_times(ct, list, n);
    free(list);
    return rc;
}

static int find_config(const config_times *ct, const char *text)
{
    for (int i = 0; i < ct->n; i++)
        if (!strcmp(ct->texts[i], text)) return i;
    return -1;
}

/* The median of configuration c's times over the runs other than skip (-1: all),
 * in *out_ms (NaN when none); returns how many runs measured it. */
static int median_without(const config_times *ct, int c, int skip, double *buf, double *out_ms)
{
    int n = 0;
    for (int r = 0; r < ct->n_runs; r++) {
        double ms = ct->ms[(size_t)c * ct->n_runs + r];
        if (r != skip && !isnan(ms)) buf[n++] = ms;
    }
    *out_ms = gb_compare_median(buf, n);
    return n;
}

/* The configuration with the smallest median over the runs other than skip. */
static int fastest_without(const config_times *ct, int skip, double *buf, double *out_ms)
{
    int best = -1;
    *out_ms = NAN;
    for (int c = 0; c < ct->n; c++) {
        double ms;
        median_without(ct, c, skip, buf, &ms);
        if (!isnan(ms) && !(ms >= *out_ms)) *out_ms = ms, best = c;
    }
    return best;
}

/* regret_of[i] for each run with a best that another run measured too; buf and
 * vals hold n_runs each. */
static void regrets(gb_repro_shape *s, const config_times *ct, double *buf, double *vals)
{
    s->regret_max = NAN;
    for (int i = 0; i < ct->n_runs; i++) {
        s->regret_of[i] = NAN;
        int w = s->winner_of[i];
        int c = w < 0 ? -1 : find_config(ct, s->winners[w].config);
        double mine, fastest;
        if (c < 0 || median_without(ct, c, i, buf, &mine) < 1) continue;
        fastest_without(ct, i, buf, &fastest);
        s->regret_of[i] = vals[s->n_regret++] = mine / fastest - 1;
        if (!(s->regret_of[i] <= s->regret_max)) s->regret_max = s->regret_of[i];
    }
    s->regret_median = gb_compare_median(vals, s->n_regret);
}

static int regret(gb_repro_shape *s, const gb_shape_result *const *row, int n_runs, gb_err *err)
{
    config_times ct = {.n_runs = n_runs};
    double *buf = calloc((size_t)n_runs, sizeof *buf), *vals = calloc((size_t)n_runs, sizeof *vals);
    int rc = buf && vals ? collect_times(s, row, &ct) : GB_ENOMEM;
    if (!rc) {
        s->n_configs = ct.n;
        int c = fastest_without(&ct, -1, buf, &s->fastest_ms);
        if (c >= 0) s->fastest_n_runs = median_without(&ct, c, -1, buf, &s->fastest_ms);
        if (c >= 0 && !(s->fastest = strdup(ct.texts[c]))) rc = GB_ENOMEM;
        regrets(s, &ct, buf, vals);
    }
    free(buf);
    free(vals);
    free(ct.texts);
    free(ct.ms);
    return rc ? oom(err) : GB_OK;
}

/* ---- false alarms ---------------------------------------------------------------------- */

static int add_alarm(gb_repro_shape *s, int i, int j, const gb_compare_result *c, gb_err *err)
{
    gb_repro_alarm *grown = realloc(s->alarms, (size_t)(s->n_alarms + 1) * sizeof *grown);
    if (!grown) return oom(err);
    s->alarms = grown;
    s->alarms[s->n_alarms++] = (gb_repro_alarm){.old_run = i,
                                                .new_run = j,
                                                .verdict = c->verdict,
                                                .ratio = c->ratio,
                                                .p_value = c->test.p_value};
    return GB_OK;
}

static int compare_pair(grouping *g, gb_repro_shape *s, const gb_shape_result *a,
                        const gb_shape_result *b, int i, int j)
{
    const gb_measurement *old = &a->best_measurement, *new_ = &b->best_measurement;
    gb_compare_result c;
    s->n_pairs++;
    int rc = gb_compare_samples(old->samples_ms, old->n_samples, new_->samples_ms, new_->n_samples,
                                &g->out->opts, &c, g->err);
    if (rc) {
        char name[512];
        return gb_err_prefix(g->err, "%s, runs %d and %d",
                             gb_repro_shape_name(s, name, sizeof name), i + 1, j + 1);
    }
    if (c.verdict != GB_VERDICT_FASTER && c.verdict != GB_VERDICT_SLOWER) return GB_OK;
    g->alarmed[i * g->out->n_runs + j] = true;
    return add_alarm(s, i, j, &c, g->err);
}

static int alarms(grouping *g, gb_repro_shape *s, const gb_shape_result *const *row)
{
    int n = g->out->n_runs;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            if (!row[i] || !row[i]->has_best || !row[j] || !row[j]->has_best) continue;
            int rc = compare_pair(g, s, row[i], row[j], i, j);
            if (rc) return rc;
        }
    return GB_OK;
}

/* ---- the whole ----------------------------------------------------------------------------- */

static int shape_figures(grouping *g, gb_repro_shape *s, const gb_shape_result *const *row)
{
    int n = g->out->n_runs;
    s->winner_of = calloc((size_t)n, sizeof *s->winner_of);
    s->regret_of = calloc((size_t)n, sizeof *s->regret_of);
    if (!s->winner_of || !s->regret_of) return oom(g->err);
    int rc = find_winners(s, row, n, g->err);
    if (!rc) rc = spreads(s, row, n, g->err);
    if (!rc) rc = regret(s, row, n, g->err);
    if (!rc) rc = alarms(g, s, row);
    return rc;
}

/* The figures over every shape: the largest spread, the worst and median regret. */
static int totals(grouping *g)
{
    gb_repro *r = g->out;
    double *all = calloc((size_t)r->n_shapes * r->n_runs + 1, sizeof *all);
    int n_all = 0;
    if (!all) return oom(g->err);
    r->spread_max = r->regret_max = NAN;
    for (int k = 0; k < r->n_shapes; k++) {
        const gb_repro_shape *s = &r->shapes[k];
        r->n_flipped += s->n_winners > 1;
        if (!(s->spread <= r->spread_max)) r->spread_max = s->spread;
        for (int i = 0; i < r->n_runs; i++)
            if (!isnan(s->regret_of[i])) all[n_all++] = s->regret_of[i];
    }
    for (int i = 0; i < n_all; i++)
        if (!(all[i] <= r->regret_max)) r->regret_max = all[i];
    r->regret_median = gb_compare_median(all, n_all);
    r->n_run_pairs = r->n_runs * (r->n_runs - 1) / 2;
    for (int i = 0; i < r->n_runs * r->n_runs; i++)
        r->n_alarmed_pairs += g->alarmed[i];
    free(all);
    return GB_OK;
}

int gb_repro_compute(const gb_report *runs, int n_runs, const gb_compare_opts *opts, gb_repro *out,
                     gb_err *err)
{
    *out = (gb_repro){.n_runs = n_runs, .opts = opts ? *opts : gb_compare_opts_default()};
    if (n_runs < 2)
        return gb_err_set(err, GB_EINVAL, "repro: %d run(s); at least 2 are needed", n_runs);
    grouping g = {.out = out, .err = err};
    int rc = (g.alarmed = calloc((size_t)n_runs * n_runs, sizeof *g.alarmed)) ? GB_OK : oom(err);
    for (int i = 0; !rc && i < n_runs; i++)
        rc = group_run(&g, &runs[i], i);
    for (int k = 0; !rc && k < out->n_shapes; k++)
        rc = shape_figures(&g, &out->shapes[k], &g.cells[(size_t)k * n_runs]);
    if (!rc) rc = totals(&g);
    free(g.cells);
    free(g.alarmed);
    if (rc) gb_repro_free(out);
    return rc;
}

static void shape_free(gb_repro_shape *s)
{
    free(s->kernel);
    free(s->key_text);
    for (int w = 0; w < s->n_winners; w++)
        free(s->winners[w].config);
    free(s->winners);
    free(s->winner_of);
    free(s->regret_of);
    free(s->fastest);
    free(s->alarms);
}

void gb_repro_free(gb_repro *r)
{
    if (!r) return;
    for (int k = 0; k < r->n_shapes; k++)
        shape_free(&r->shapes[k]);
    free(r->shapes);
    *r = (gb_repro){0};
}
