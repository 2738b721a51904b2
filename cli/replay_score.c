/* gpubench replay FILE... --score: the autotuning methodology's score of every
 * strategy on each table and over all of them (tuner/replay.h, docs/replay.md). */
#include "cli/replay_score.h"

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

static int score_kind(const gb_replay_score_args *a, const scored *s, const gb_strategy_kind *kind,
                      strategy_scores *out, gb_err *err)
{
    int r = a->opts.resolution;
    double *curve = malloc((size_t)r * sizeof *curve);
    out->name = kind->name;
    out->per_space = malloc((size_t)a->n_files * sizeof *out->per_space);
    out->curve = calloc((size_t)r, sizeof *out->curve);
    if (!curve || !out->per_space || !out->curve)
        return free(curve), gb_err_set(err, GB_ENOMEM, "out of memory");
    int rc = GB_OK;
    for (int i = 0; rc == GB_OK && i < a->n_files; i++) {
        out->per_space[i] = NAN;
        if (!s[i].space.scorable) continue;
        rc = gb_score_strategy(&s[i].table, &s[i].space, kind, &a->opts, curve, &out->per_space[i],
                               err);
        if (rc) {
            gb_err_prefix(err, "%s", s[i].file);
            break;
        }
        for (int j = 0; j < r; j++)
            out->curve[j] += curve[j];
        out->n_spaces++;
    }
    free(curve);
    if (rc || out->n_spaces == 0) return rc;
    double sum = 0, sq = 0;
    for (int j = 0; j < r; j++)
        sum += out->curve[j] /= out->n_spaces;
    out->score = sum / r;
    for (int j = 0; j < r; j++)
        sq += (out->curve[j] - out->score) * (out->curve[j] - out->score);
    out->error = sqrt(sq / r);
    return GB_OK;
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
    strategy_scores *st = calloc((size_t)gb_strategy_n_kinds, sizeof *st);
    int n = 0, best = -1, status = 0;
    int rc = s && st ? load_spaces(a, s, &err) : gb_err_set(&err, GB_ENOMEM, "out of memory");
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
    free(s);
    if (st) free_scores(st, n);
    return status;
}
