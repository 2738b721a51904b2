/* gpubench replay FILE... --score: the autotuning methodology's score of every
 * strategy on each table and over all of them (tuner/replay.h, docs/replay.md). */
#include "cli/replay_score.h"

#include "base/file.h"
#include "base/json.h"
#include "report/table.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct scored {
    const char *file;
    gb_replay_table table;
    gb_score_space space;
} scored;

typedef struct strategy_scores {
    const char *name;
    double *per_space; /* NAN where the space is not scored */
    double *curve;     /* summed over the scored spaces, then their mean */
    int n_spaces;      /* scored */
    double score, error;
} strategy_scores;

/* ---- the spaces ------------------------------------------------------------------ */

static int load_spaces(const gb_replay_score_args *a, scored *s, gb_err *err)
{
    for (int i = 0; i < a->n_files; i++) {
        s[i].file = a->files[i];
        int rc = gb_replay_load(a->files[i], a->sel, &s[i].table, err);
        if (rc) return rc;
        if ((rc = gb_score_space_init(&s[i].table, &a->opts, &s[i].space, err))) return rc;
    }
    return GB_OK;
}

static void print_spaces(const gb_replay_score_args *a, const scored *s)
{
    const gb_score_opts *o = &a->opts;
    printf("score: %s\n", GB_SCORE_METHOD);
    printf("  cut-offs %g to %g of the way from the median to the optimum, %d points, %d "
           "repeats per strategy, batch %d\n",
           o->cutoff_start, o->cutoff, o->resolution, o->repeats, o->batch ? o->batch : 1);
    for (int i = 0; i < a->n_files; i++) {
        const gb_replay_table *t = &s[i].table;
        const gb_score_space *sp = &s[i].space;
        printf("  [%d] %s: %s\n", i + 1, s[i].file, t->what);
        printf("      %zu configurations, %zu timed; optimum %.6g ms, median %.6g ms; ",
               t->n_entries, sp->n, sp->optimum, sp->median);
        if (!sp->scorable) {
            printf("not scored: %s\n", sp->why);
            continue;
        }
        printf("random search's %d to %d evaluations, budget %d; %s\n", sp->fevals_start,
               sp->fevals_end, sp->max_fevals,
               sp->costs_known ? "evaluations cost what the file says"
                               : "each evaluation costs 1 (the file has no costs)");
    }
}

/* ---- the strategies ---------------------------------------------------------------- */

/* Room for a strategy's scores, one per file. */
static int scores_init(strategy_scores *out, const char *name, int n_files, int resolution)
{
    out->name = name;
    out->per_space = malloc((size_t)n_files * sizeof *out->per_space);
    out->curve = calloc((size_t)resolution, sizeof *out->curve);
    if (!out->per_space || !out->curve) return GB_ENOMEM;
    for (int i = 0; i < n_files; i++)
        out->per_space[i] = NAN;
    return GB_OK;
}

static void scores_add(strategy_scores *out, int space, const double *curve, double score, int r)
{
    out->per_space[space] = score;
    for (int j = 0; j < r; j++)
        out->curve[j] += curve[j];
    out->n_spaces++;
}

/* The curves averaged over the spaces; the score their mean, the error their
 * spread over the axis. */
static void scores_finish(strategy_scores *out, int r)
{
    if (out->n_spaces == 0) return;
    double sum = 0, sq = 0;
    for (int j = 0; j < r; j++)
        sum += out->curve[j] /= out->n_spaces;
    out->score = sum / r;
    for (int j = 0; j < r; j++)
        sq += (out->curve[j] - out->score) * (out->curve[j] - out->score);
    out->error = sqrt(sq / r);
}

static int score_kind(const gb_replay_score_args *a, const scored *s, const gb_strategy_kind *kind,
                      strategy_scores *out, gb_err *err)
{
    int r = a->opts.resolution, rc = GB_OK;
    double *curve = malloc((size_t)r * sizeof *curve), score;
    if (!curve || scores_init(out, kind->name, a->n_files, r))
        return free(curve), gb_err_set(err, GB_ENOMEM, "out of memory");
    for (int i = 0; rc == GB_OK && i < a->n_files; i++) {
        if (!s[i].space.scorable) continue;
        rc = gb_score_strategy(&s[i].table, &s[i].space, kind, &a->opts, curve, &score, err);
        if (rc)
            gb_err_prefix(err, "%s", s[i].file);
        else
            scores_add(out, i, curve, score, r);
    }
    free(curve);
    if (rc == GB_OK) scores_finish(out, r);
    return rc;
}

/* ---- another tool's runs (--runs) ------------------------------------------------------ */

/* One --runs file: another tool's searches of one of the FILEs, as evaluations
 * in order, each with what it cost and the time it found (null: none). */
typedef struct external {
    char *strategy;
    int space;
    gb_score_run *runs;
    int n_runs;
} external;

static void external_free(external *e)
{
    for (int i = 0; i < e->n_runs; i++) {
        free(e->runs[i].x);
        free(e->runs[i].y);
    }
    free(e->runs);
    free(e->strategy);
}

/* The FILE a runs file names: the same path, or the same last part. */
static int space_of(const gb_replay_score_args *a, const char *path)
{
    for (int i = 0; i < a->n_files; i++)
        if (!strcmp(a->files[i], path)) return i;
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    for (int i = 0; i < a->n_files; i++) {
        const char *b = strrchr(a->files[i], '/') ? strrchr(a->files[i], '/') + 1 : a->files[i];
        if (!strcmp(b, base)) return i;
    }
    return -1;
}

/* One search: the clock and the best so far after each evaluation. Every
 * evaluation the tool returned counts, a configuration it asked for again too
 * (Kernel Tuner's budget counts distinct ones; its runs cost what the file says,
 * a second visit only the framework's time), as the methodology counts them. */
static int read_run(const gb_score_space *sp, const json_t *run, gb_score_run *out)
{
    const json_t *costs = json_object_get(run, "costs_s"),
                 *times = json_object_get(run, "times_ms");
    if (!json_is_array(costs) || !json_is_array(times) ||
        json_array_size(costs) != json_array_size(times))
        return GB_EINVAL;
    size_t n = json_array_size(times);
    out->x = malloc((n ? n : 1) * sizeof *out->x);
    out->y = malloc((n ? n : 1) * sizeof *out->y);
    if (!out->x || !out->y) return GB_ENOMEM;
    double spent = 0, best = NAN;
    for (size_t e = 0; e < n; e++) {
        const json_t *c = json_array_get(costs, e), *t = json_array_get(times, e);
        spent += !sp->costs_known ? 1 : json_is_number(c) ? json_number_value(c) : sp->cost_median;
        double ms = json_is_number(t) ? json_number_value(t) : NAN;
        if (ms > 0 && (isnan(best) || ms < best)) best = ms;
        out->x[e] = spent;
        out->y[e] = best;
        out->n++;
    }
    return GB_OK;
}

static int read_external(const gb_replay_score_args *a, const scored *s, const char *path,
                         external *out, gb_err *err)
{
    char *text = NULL;
    size_t len = 0;
    json_t *doc = NULL;
    int rc = gb_read_file(path, GB_REPLAY_MAX_FILE_BYTES, "", &text, &len, err);
    if (rc == GB_OK && (rc = gb_json_parse(text, len, &doc, err))) gb_err_prefix(err, "%s", path);
    free(text);
    if (rc) return rc;
    const char *space = json_string_value(json_object_get(doc, "space"));
    const char *strategy = json_string_value(json_object_get(doc, "strategy"));
    const json_t *runs = json_object_get(doc, "runs");
    if (!space || !strategy || !json_is_array(runs))
        rc =
            gb_err_set(err, GB_EINVAL,
                       "%s: expected {\"space\": FILE, \"strategy\": NAME, \"runs\": [...]}", path);
    else if ((out->space = space_of(a, space)) < 0)
        rc = gb_err_set(err, GB_EINVAL, "%s: its space %s is none of the FILEs given", path, space);
    else if (!(out->strategy = strdup(strategy)) ||
             !(out->runs = calloc(json_array_size(runs) + 1, sizeof *out->runs)))
        rc = gb_err_set(err, GB_ENOMEM, "out of memory");
    for (size_t i = 0; rc == GB_OK && i < json_array_size(runs); i++) {
        out->n_runs++;
        rc = read_run(&s[out->space].space, json_array_get(runs, i), &out->runs[i]);
        if (rc == GB_EINVAL)
            gb_err_set(err, rc,
                       "%s: runs[%zu]: expected \"costs_s\" and \"times_ms\", two lists of one "
                       "length",
                       path, i);
        else if (rc)
            gb_err_set(err, rc, "out of memory");
    }
    json_decref(doc);
    return rc;
}

/* Every --runs file's strategy scored on its space, one row per strategy. */
static int score_external(const gb_replay_score_args *a, const scored *s, const external *ext,
                          int n_ext, strategy_scores *st, int *n, gb_err *err)
{
    int r = a->opts.resolution, rc = GB_OK, first = *n;
    double *curve = malloc((size_t)r * sizeof *curve), score;
    if (!curve) return gb_err_set(err, GB_ENOMEM, "out of memory");
    for (int e = 0; rc == GB_OK && e < n_ext; e++) {
        int k = first;
        while (k < *n && strcmp(st[k].name, ext[e].strategy))
            k++;
        if (k == *n && scores_init(&st[(*n)++], ext[e].strategy, a->n_files, r))
            rc = gb_err_set(err, GB_ENOMEM, "out of memory");
        if (rc || !s[ext[e].space].space.scorable) continue;
        rc = gb_score_curve(&s[ext[e].space].space, ext[e].runs, ext[e].n_runs, curve, &score, err);
        if (rc)
            gb_err_prefix(err, "%s on %s", ext[e].strategy, s[ext[e].space].file);
        else
            scores_add(&st[k], ext[e].space, curve, score, r);
    }
    for (int k = first; rc == GB_OK && k < *n; k++)
        scores_finish(&st[k], r);
    free(curve);
    return rc;
}

static void free_scores(strategy_scores *s, int n)
{
    for (int i = 0; i < n; i++) {
        free(s[i].per_space);
        free(s[i].curve);
    }
    free(s);
}

/* ---- output ------------------------------------------------------------------------- */

static void print_table(const gb_replay_score_args *a, const strategy_scores *st, int n, int best)
{
    const char *headers[GB_TABLE_MAX_COLS + 1];
    char names[GB_TABLE_MAX_COLS][16], align[GB_TABLE_MAX_COLS + 1];
    int shown = a->n_files < GB_TABLE_MAX_COLS - 3 ? a->n_files : GB_TABLE_MAX_COLS - 3, c = 0;
    headers[c] = "strategy", align[c++] = 'l';
    for (int i = 0; i < shown; i++) {
        snprintf(names[i], sizeof names[i], "[%d]", i + 1);
        headers[c] = names[i], align[c++] = 'r';
    }
    headers[c] = "score", align[c++] = 'r';
    headers[c] = "error", align[c++] = 'r';
    headers[c] = NULL, align[c] = '\0';
    gb_table t;
    gb_table_init(&t, headers, align);
    for (int k = 0; k < n; k++) {
        gb_table_cell(&t, "%s%s", st[k].name, k == best ? " *" : "");
        for (int i = 0; i < shown; i++)
            if (isnan(st[k].per_space[i]))
                gb_table_cell(&t, "-");
            else
                gb_table_cell(&t, "%.3f", st[k].per_space[i]);
        if (st[k].n_spaces)
            gb_table_cell(&t, "%.3f", st[k].score), gb_table_cell(&t, "%.3f", st[k].error);
        else
            gb_table_cell(&t, "-"), gb_table_cell(&t, "-");
    }
    printf("\n");
    gb_table_print(&t, stdout);
    gb_table_free(&t);
    if (shown < a->n_files)
        printf("(%d spaces; the columns show the first %d, --json has them all)\n", a->n_files,
               shown);
}

static json_t *number_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static int print_json(const gb_replay_score_args *a, const scored *s, const strategy_scores *st,
                      int n, int best)
{
    json_t *spaces = json_array(), *list = json_array();
    for (int i = 0; i < a->n_files; i++) {
        const gb_score_space *sp = &s[i].space;
        json_array_append_new(
            spaces,
            json_pack("{s:s, s:s, s:I, s:I, s:b, s:s, s:i, s:i, s:i, s:b, s:o, s:o}", "file",
                      s[i].file, "table", s[i].table.what, "entries",
                      (json_int_t)s[i].table.n_entries, "timed", (json_int_t)sp->n, "scored",
                      sp->scorable, "why", sp->scorable ? "" : sp->why, "fevals_start",
                      sp->fevals_start, "fevals_end", sp->fevals_end, "budget", sp->max_fevals,
                      "costs_known", sp->costs_known, "optimum_ms", number_or_null(sp->optimum),
                      "median_ms", number_or_null(sp->median)));
    }
    for (int k = 0; k < n; k++) {
        json_t *per = json_array();
        for (int i = 0; i < a->n_files; i++)
            json_array_append_new(per, number_or_null(st[k].per_space[i]));
        json_array_append_new(
            list, json_pack("{s:s, s:o, s:o, s:o, s:i}", "strategy", st[k].name, "spaces", per,
                            "score", number_or_null(st[k].n_spaces ? st[k].score : NAN), "error",
                            number_or_null(st[k].n_spaces ? st[k].error : NAN), "scored_spaces",
                            st[k].n_spaces));
    }
    json_t *doc = json_pack("{s:s, s:f, s:f, s:i, s:i, s:o, s:o, s:s?}", "method", GB_SCORE_METHOD,
                            "cutoff", a->opts.cutoff, "cutoff_start", a->opts.cutoff_start,
                            "resolution", a->opts.resolution, "repeats", a->opts.repeats, "spaces",
                            spaces, "strategies", list, "best", best >= 0 ? st[best].name : NULL);
    if (!doc) return fprintf(stderr, "%s replay: out of memory\n", a->prog), 1;
    json_dumpf(doc, stdout, JSON_INDENT(2));
    fputc('\n', stdout);
    json_decref(doc);
    return 0;
}

/* ---- the command ---------------------------------------------------------------------- */

int gb_replay_score(const gb_replay_score_args *a)
{
    gb_err err = {0};
    scored *s = calloc((size_t)a->n_files, sizeof *s);
    external *ext = calloc((size_t)a->n_runs_files + 1, sizeof *ext);
    strategy_scores *st = calloc((size_t)gb_strategy_n_kinds + (size_t)a->n_runs_files, sizeof *st);
    int n = 0, best = -1, status = 0, n_ext = 0;
    int rc =
        s && st && ext ? load_spaces(a, s, &err) : gb_err_set(&err, GB_ENOMEM, "out of memory");
    for (; rc == GB_OK && n_ext < a->n_runs_files; n_ext++)
        rc = read_external(a, s, a->runs_files[n_ext], &ext[n_ext], &err);
    if (rc) {
        fprintf(stderr, "%s replay: %s\n", a->prog, err.msg);
        status = rc == GB_EIO ? 2 : 1;
    }
    if (!status && !a->json) print_spaces(a, s), fflush(stdout);
    for (int i = 0; !status && i < gb_strategy_n_kinds; i++) {
        const gb_strategy_kind *kind = &gb_strategy_kinds[i];
        if (strcmp(a->strategy, "all") && strcmp(a->strategy, kind->name)) continue;
        if (score_kind(a, s, kind, &st[n++], &err)) {
            fprintf(stderr, "%s replay: %s\n", a->prog, err.msg);
            status = 1;
        }
    }
    if (!status && score_external(a, s, ext, n_ext, st, &n, &err)) {
        fprintf(stderr, "%s replay: %s\n", a->prog, err.msg);
        status = 1;
    }
    for (int k = 0; !status && k < n; k++)
        if (st[k].n_spaces && (best < 0 || st[k].score > st[best].score)) best = k;
    if (!status && a->json) status = print_json(a, s, st, n, best);
    if (!status && !a->json) {
        print_table(a, st, n, best);
        if (best >= 0)
            printf("\nscore: best=%s score=%.3f error=%.3f spaces=%d\n", st[best].name,
                   st[best].score, st[best].error, st[best].n_spaces);
        else
            printf("\nscore: no space could be scored\n");
    }
    if (!status && best < 0) status = 1;
    for (int i = 0; s && i < a->n_files; i++) {
        gb_score_space_free(&s[i].space);
        gb_replay_table_free(&s[i].table);
    }
    for (int i = 0; ext && i < a->n_runs_files; i++)
        external_free(&ext[i]);
    free(ext);
    free(s);
    if (st) free_scores(st, n);
    return status;
}
