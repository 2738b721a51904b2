/* gpubench repro RUN.json RUN.json ...: how reproducible a tuning is, from the JSON
 * reports of repeated runs of it (docs/reproducibility.md). The figures are
 * report/repro.h's; this file reads the arguments and the files, prints a table or
 * JSON, and checks the goals (--max-spread, --max-regret) that make the exit status
 * a CI gate. Pure CPU: it touches no GPU library. */
#include "cli/args.h"
#include "cli/cli.h"
#include "report/repro.h"
#include "report/table.h"

#include "base/json.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char USAGE[] =
    "usage: %s repro [options] RUN.json RUN.json [RUN.json ...]\n"
    "\n"
    "How reproducible a tuning is, from the JSON reports of N runs of it, each a\n"
    "separate process with a fresh cache (gpubench-tune SCRIPT --json FILE;\n"
    "bench/repro.sh runs them). One row per (kernel, shape):\n"
    "  runs      runs with a best / runs that hold the shape\n"
    "  winners   distinct best configurations\n"
    "  flips     share of the runs whose best is not the most frequent one\n"
    "  best      min and max of the runs' best medians; spread: (max - min) / min\n"
    "  regret    each run's winner as the OTHER runs timed it, against the fastest\n"
    "            configuration by those runs: the worst and the median run\n"
    "  vs base   baseline median / best median over the runs, and its spread\n"
    "  alarms    pairs of runs in which `compare` calls the best FASTER or SLOWER:\n"
    "            false alarms, since every run is of the same tuning\n"
    "A configuration's time in a run is the best's (raced) median where it won, else\n"
    "its screening trial's median.\n"
    "\n"
    "options:\n"
    "  --max-spread PCT  goal: every shape's spread at most PCT percent\n"
    "  --max-regret PCT  goal: every run's regret at most PCT percent, on every shape\n"
    "  --threshold PCT   compare's threshold for the false alarms (default 2)\n"
    "  --alpha A         compare's significance level (default 0.05)\n"
    "  --json            machine-readable output\n"
    "  -h, --help        this text\n"
    "\n"
    "A goal is checked on every shape that has a best in some run; it is missed by a\n"
    "figure above it, by a figure that cannot be had (a run whose winner no other run\n"
    "timed) and by a run that holds the shape without a best.\n"
    "\n"
    "exit status: 0 done, goals met; 1 a goal missed; 2 usage, or a file that cannot\n"
    "be read or is not a gpubench run that timed something.\n";

typedef struct repro_args {
    const char *prog;
    const char *const *paths;
    int n_paths;
    gb_compare_opts opts;
    double max_spread, max_regret; /* relative; NaN: no goal */
    bool json;
} repro_args;

/* A goal a shape missed, and why. */
typedef struct miss {
    const gb_repro_shape *shape;
    const char *goal; /* "spread" or "regret" */
    double value;     /* the figure, relative; NaN when it could not be had */
    const char *why;
} miss;

typedef struct misses {
    miss *list;
    int n;
} misses;

enum { OPT_MAX_SPREAD = 256, OPT_MAX_REGRET, OPT_THRESHOLD, OPT_ALPHA, OPT_JSON };

static const struct option long_options[] = {
    {"max-spread", required_argument, NULL, OPT_MAX_SPREAD},
    {"max-regret", required_argument, NULL, OPT_MAX_REGRET},
    {"threshold", required_argument, NULL, OPT_THRESHOLD},
    {"alpha", required_argument, NULL, OPT_ALPHA},
    {"json", no_argument, NULL, OPT_JSON},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* A percentage of at least 0, as a fraction; false otherwise. */
static bool percent(const char *text, double *out)
{
    double pct;
    if (!gb_cli_number(text, 0, INFINITY, false, &pct) || !isfinite(pct)) return false;
    *out = pct / 100;
    return true;
}

/* Returns -1 to go on, or an exit status. */
static int apply_option(int c, repro_args *a)
{
    switch (c) {
    case OPT_MAX_SPREAD:
        return percent(optarg, &a->max_spread)
                   ? -1
                   : gb_cli_usage_error(a->prog, "repro",
                                        "--max-spread needs a percentage, 0 or more", "");
    case OPT_MAX_REGRET:
        return percent(optarg, &a->max_regret)
                   ? -1
                   : gb_cli_usage_error(a->prog, "repro",
                                        "--max-regret needs a percentage, 0 or more", "");
    case OPT_THRESHOLD:
    case OPT_ALPHA:
        return gb_cli_compare_option(a->prog, "repro", c == OPT_ALPHA, optarg, &a->opts);
    case OPT_JSON:
        a->json = true;
        return -1;
    case 'h':
        printf(USAGE, a->prog);
        return 0;
    default:
        return gb_cli_usage_error(a->prog, "repro", "unknown option or missing argument", "");
    }
}

static int parse_args(int argc, char **argv, repro_args *a)
{
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", long_options, NULL)) != -1) {
        if (c == '?') return gb_cli_bad_option(a->prog, "repro", argv, long_options);
        int status = apply_option(c, a);
        if (status >= 0) return status;
    }
    if (argc - optind < 2)
        return gb_cli_usage_error(a->prog, "repro",
                                  "at least two run files are needed: RUN.json RUN.json ...", "");
    a->paths = (const char *const *)argv + optind;
    a->n_paths = argc - optind;
    return -1;
}

/* ---- the files ---------------------------------------------------------------- */

/* A run that timed nothing has no figure to reproduce. */
static int check_run(const char *path, const gb_report *run, gb_err *err)
{
    if (run->context.compile_only)
        return gb_err_set(err, GB_EINVAL,
                          "%s: a --compile-only run: it timed nothing, so there is nothing to "
                          "reproduce",
                          path);
    return GB_OK;
}

static const char *device_name(const gb_report *run)
{
    return run->context.has_device ? run->context.device.name : "";
}

/* Runs of another script or on another GPU still compare, but not as repeats. */
static void warn_mismatch(const repro_args *a, const gb_report *runs)
{
    for (int i = 1; i < a->n_paths; i++) {
        const char *s0 = runs[0].context.script, *si = runs[i].context.script;
        if (strcmp(device_name(&runs[0]), device_name(&runs[i])))
            fprintf(stderr, "%s repro: warning: %s ran on '%s', %s on '%s': not repeats\n", a->prog,
                    a->paths[0], device_name(&runs[0]), a->paths[i], device_name(&runs[i]));
        if (s0 && si && strcmp(s0, si))
            fprintf(stderr, "%s repro: warning: %s ran %s, %s ran %s: not repeats\n", a->prog,
                    a->paths[0], s0, a->paths[i], si);
    }
}

static int load_runs(const repro_args *a, gb_report *runs, gb_err *err)
{
    for (int i = 0; i < a->n_paths; i++) {
        int rc = gb_report_load_json(a->paths[i], &runs[i], err);
        if (!rc) rc = check_run(a->paths[i], &runs[i], err);
        if (rc) return rc;
    }
    warn_mismatch(a, runs);
    return GB_OK;
}

/* ---- the goals ------------------------------------------------------------------ */

/* Lists a miss; out of memory, it is only counted (the exit status still says it). */
static void add_miss(misses *m, const gb_repro_shape *s, const char *goal, double value,
                     const char *why)
{
    miss *grown = realloc(m->list, (size_t)(m->n + 1) * sizeof *grown);
    if (!grown) return;
    m->list = grown;
    m->list[m->n++] = (miss){s, goal, value, why};
}

/* One goal on one shape: its figure known (unknown: why not, or NULL) and at most the
 * limit, and a best in every run that holds the shape. Returns 1 when missed. */
static int check_goal(misses *m, const gb_repro_shape *s, const char *goal, double value,
                      const char *unknown, double limit)
{
    const char *why = s->n_best < s->n_present ? "no best in some runs"
                      : unknown                ? unknown
                      : value > limit          ? "above the goal"
                                               : NULL;
    if (why) add_miss(m, s, goal, value, why);
    return why != NULL;
}

/* Returns the count of misses; m lists them (as far as memory allowed). */
static int check_goals(const repro_args *a, const gb_repro *r, misses *m)
{
    int n = 0;
    for (int k = 0; k < r->n_shapes; k++) {
        const gb_repro_shape *s = &r->shapes[k];
        if (s->n_best == 0) continue; /* tuned in no run: nothing to reproduce */
        if (!isnan(a->max_spread))
            n += check_goal(m, s, "spread", s->spread,
                            isnan(s->spread) ? "a best in one run only" : NULL, a->max_spread);
        if (!isnan(a->max_regret))
            n += check_goal(m, s, "regret", s->regret_max,
                            s->n_regret < s->n_best ? "a run's winner was timed by no other run"
                                                    : NULL,
                            a->max_regret);
    }
    return n;
}

/* ---- the table ------------------------------------------------------------------- */

/* A time in the unit that suits it. */
static const char *time_text(double ms, char *buf, size_t n)
{
    if (!isfinite(ms)) return "-";
    if (ms >= 1e3)
        snprintf(buf, n, "%.3f s", ms / 1e3);
    else if (ms >= 1)
        snprintf(buf, n, "%.3f ms", ms);
    else if (ms >= 1e-3)
        snprintf(buf, n, "%.3f us", ms * 1e3);
    else
        snprintf(buf, n, "%.1f ns", ms * 1e6);
    return buf;
}

/* A relative figure as a percentage, "-" when unknown. */
static void pct_cell(gb_table *t, double x)
{
    if (isfinite(x))
        gb_table_cell(t, "%.2f%%", 100 * x);
    else
        gb_table_cell(t, "-");
}

static void shape_row(gb_table *t, const gb_repro_shape *s)
{
    char name[512], lo[32], hi[32];
    gb_table_cell(t, "%s", gb_repro_shape_name(s, name, sizeof name));
    gb_table_cell(t, "%d/%d", s->n_best, s->n_present);
    gb_table_cell(t, "%d", s->n_winners);
    pct_cell(t, s->flip_share);
    gb_table_cell(t, "%s", time_text(s->best_min_ms, lo, sizeof lo));
    gb_table_cell(t, "%s", time_text(s->best_max_ms, hi, sizeof hi));
    pct_cell(t, s->spread);
    pct_cell(t, s->regret_max);
    pct_cell(t, s->regret_median);
    if (s->n_baseline)
        gb_table_cell(t, "%.3fx-%.3fx", s->speedup_min, s->speedup_max);
    else
        gb_table_cell(t, "-");
    pct_cell(t, s->speedup_spread);
    gb_table_cell(t, "%d/%d", s->n_alarms, s->n_pairs);
}

/* The shapes whose winner changed, with each winner's count. */
static void print_winners(const gb_repro *r)
{
    if (!r->n_flipped) return;
    printf("\nwinners where they changed:\n");
    for (int k = 0; k < r->n_shapes; k++) {
        const gb_repro_shape *s = &r->shapes[k];
        char name[512];
        if (s->n_winners < 2) continue;
        printf("  %s:\n", gb_repro_shape_name(s, name, sizeof name));
        for (int w = 0; w < s->n_winners; w++)
            printf("    %d of %d runs: %s%s\n", s->winners[w].n_runs, s->n_best,
                   s->winners[w].config, w == s->modal ? " (modal)" : "");
    }
}

static void print_alarms(const repro_args *a, const gb_repro *r)
{
    if (!r->n_alarmed_pairs) return;
    printf("\nfalse alarms (compare --threshold %g --alpha %g, on the best):\n",
           100 * a->opts.threshold, a->opts.alpha);
    for (int k = 0; k < r->n_shapes; k++) {
        const gb_repro_shape *s = &r->shapes[k];
        char name[512];
        for (int i = 0; i < s->n_alarms; i++) {
            const gb_repro_alarm *x = &s->alarms[i];
            printf("  %s: %s vs %s: %s %+.2f%% (p %.3g)\n",
                   gb_repro_shape_name(s, name, sizeof name), a->paths[x->old_run],
                   a->paths[x->new_run], gb_verdict_name(x->verdict), 100 * (x->ratio - 1),
                   x->p_value);
        }
    }
}

static void print_cached(const gb_repro *r)
{
    for (int k = 0; k < r->n_shapes; k++) {
        const gb_repro_shape *s = &r->shapes[k];
        char name[512];
        if (s->n_cached)
            printf("note: %s: %d of %d bests came from a cache, not measured in that run: "
                   "run each with a fresh cache\n",
                   gb_repro_shape_name(s, name, sizeof name), s->n_cached, s->n_best);
    }
}

static void print_summary(const repro_args *a, const gb_repro *r)
{
    char spread[32] = "-", worst[32] = "-", median[32] = "-";
    if (isfinite(r->spread_max)) snprintf(spread, sizeof spread, "%.2f%%", 100 * r->spread_max);
    if (isfinite(r->regret_max)) snprintf(worst, sizeof worst, "%.2f%%", 100 * r->regret_max);
    if (isfinite(r->regret_median))
        snprintf(median, sizeof median, "%.2f%%", 100 * r->regret_median);
    printf("repro: %d runs, %d shape(s): winner changed in %d, spread max %s, regret worst %s "
           "(median %s), false alarms in %d of %d run pairs (%.1f%%)\n",
           a->n_paths, r->n_shapes, r->n_flipped, spread, worst, median, r->n_alarmed_pairs,
           r->n_run_pairs, 100.0 * r->n_alarmed_pairs / r->n_run_pairs);
}

static void print_goal(const char *option, const char *goal, double limit, const misses *m)
{
    if (isnan(limit)) return;
    int n = 0;
    for (int i = 0; i < m->n; i++)
        n += !strcmp(m->list[i].goal, goal);
    printf("goal %s %g%%: %s\n", option, 100 * limit, n ? "missed" : "met");
    for (int i = 0; i < m->n; i++) {
        const miss *x = &m->list[i];
        char name[512], value[32] = "-";
        if (strcmp(x->goal, goal)) continue;
        if (isfinite(x->value)) snprintf(value, sizeof value, "%.2f%%", 100 * x->value);
        printf("  %s: %s (%s)\n", gb_repro_shape_name(x->shape, name, sizeof name), value, x->why);
    }
}

static void print_table(const repro_args *a, const gb_repro *r, const misses *m)
{
    static const char *const headers[] = {
        "shape",      "runs",       "winners", "flips",       "best min", "best max", "spread",
        "regret max", "regret med", "vs base", "base spread", "alarms",   NULL};
    gb_table t;
    gb_table_init(&t, headers, "lrrrrrrrrrrr");
    for (int k = 0; k < r->n_shapes; k++)
        shape_row(&t, &r->shapes[k]);
    if (r->n_shapes) gb_table_print(&t, stdout);
    gb_table_free(&t);
    print_winners(r);
    print_alarms(a, r);
    printf("\n");
    print_cached(r);
    print_summary(a, r);
    print_goal("--max-spread", "spread", a->max_spread, m);
    print_goal("--max-regret", "regret", a->max_regret, m);
}

/* ---- JSON -------------------------------------------------------------------------- */

/* A relative figure as a percentage, null when unknown. */
static json_t *pct_json(double x)
{
    return gb_json_real(100 * x);
}

static json_t *winners_json(const gb_repro_shape *s)
{
    json_t *list = json_array();
    for (int w = 0; list && w < s->n_winners; w++)
        if (json_array_append_new(list, json_pack("{s:s, s:i}", "config", s->winners[w].config,
                                                  "runs", s->winners[w].n_runs)))
            return json_decref(list), NULL;
    return list;
}

/* Per run: its winner (null: none), and its regret in percent (null: none). */
static json_t *per_run_json(const gb_repro_shape *s, int n_runs, bool regret)
{
    json_t *list = json_array();
    for (int i = 0; list && i < n_runs; i++) {
        int w = s->winner_of[i];
        json_t *v = regret ? pct_json(s->regret_of[i])
                           : (w < 0 ? json_null() : json_string(s->winners[w].config));
        if (json_array_append_new(list, v)) return json_decref(list), NULL;
    }
    return list;
}

static json_t *alarms_json(const repro_args *a, const gb_repro_shape *s)
{
    json_t *list = json_array();
    for (int i = 0; list && i < s->n_alarms; i++) {
        const gb_repro_alarm *x = &s->alarms[i];
        json_t *o =
            json_pack("{s:s, s:s, s:i, s:i, s:s, s:o, s:o, s:o}", "old", a->paths[x->old_run],
                      "new", a->paths[x->new_run], "old_run", x->old_run, "new_run", x->new_run,
                      "verdict", gb_verdict_name(x->verdict), "ratio", gb_json_real(x->ratio),
                      "change_pct", pct_json(x->ratio - 1), "p_value", gb_json_real(x->p_value));
        if (json_array_append_new(list, o)) return json_decref(list), NULL;
    }
    return list;
}

static json_t *fastest_json(const gb_repro_shape *s)
{
    if (!s->fastest) return json_null();
    return json_pack("{s:s, s:o, s:i}", "config", s->fastest, "median_ms",
                     gb_json_real(s->fastest_ms), "runs", s->fastest_n_runs);
}

static json_t *shape_json(const repro_args *a, const gb_repro_shape *s)
{
    char name[512];
    const char *modal = s->modal >= 0 ? s->winners[s->modal].config : NULL;
    return json_pack(
        "{s:s, s:s, s:s, s:i, s:i, s:i, s:o, s:s?, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, "
        "s:o, s:i, s:{s:i, s:o, s:o, s:o}, s:i, s:o}",
        "name", gb_repro_shape_name(s, name, sizeof name), "kernel", s->kernel, "shape",
        s->key_text, "runs", s->n_present, "runs_with_best", s->n_best, "cached", s->n_cached,
        "winners", winners_json(s), "modal_winner", modal, "flip_share",
        gb_json_real(s->flip_share), "run_winners", per_run_json(s, a->n_paths, false),
        "best_min_ms", gb_json_real(s->best_min_ms), "best_max_ms", gb_json_real(s->best_max_ms),
        "spread_pct", pct_json(s->spread), "regret_pct", per_run_json(s, a->n_paths, true),
        "regret_max_pct", pct_json(s->regret_max), "regret_median_pct", pct_json(s->regret_median),
        "fastest", fastest_json(s), "configs", s->n_configs, "baseline", "runs", s->n_baseline,
        "speedup_min", gb_json_real(s->speedup_min), "speedup_max", gb_json_real(s->speedup_max),
        "spread_pct", pct_json(s->speedup_spread), "pairs", s->n_pairs, "alarms",
        alarms_json(a, s));
}

static json_t *misses_json(const misses *m)
{
    json_t *list = json_array();
    for (int i = 0; list && i < m->n; i++) {
        char name[512];
        const miss *x = &m->list[i];
        json_t *o = json_pack("{s:s, s:s, s:o, s:s}", "name",
                              gb_repro_shape_name(x->shape, name, sizeof name), "goal", x->goal,
                              "value_pct", pct_json(x->value), "why", x->why);
        if (json_array_append_new(list, o)) return json_decref(list), NULL;
    }
    return list;
}

static json_t *summary_json(const repro_args *a, const gb_repro *r, const misses *m, int n_missed)
{
    json_t *files = json_array();
    for (int i = 0; files && i < a->n_paths; i++)
        if (json_array_append_new(files, json_string(a->paths[i])))
            json_decref(files), files = NULL;
    return json_pack(
        "{s:o, s:f, s:f, s:{s:i, s:i, s:o, s:o, s:o, s:i, s:i, s:f}, s:{s:o, s:o, s:b, s:o}}",
        "runs", files, "threshold", a->opts.threshold, "alpha", a->opts.alpha, "summary", "shapes",
        r->n_shapes, "flipped", r->n_flipped, "spread_max_pct", pct_json(r->spread_max),
        "regret_max_pct", pct_json(r->regret_max), "regret_median_pct", pct_json(r->regret_median),
        "run_pairs", r->n_run_pairs, "alarmed_pairs", r->n_alarmed_pairs, "false_alarm_rate",
        (double)r->n_alarmed_pairs / r->n_run_pairs, "goals", "max_spread_pct",
        pct_json(a->max_spread), "max_regret_pct", pct_json(a->max_regret), "met", n_missed == 0,
        "missed", misses_json(m));
}

static int print_json(const repro_args *a, const gb_repro *r, const misses *m, int n_missed)
{
    json_t *doc = summary_json(a, r, m, n_missed), *list = json_array();
    for (int k = 0; doc && list && k < r->n_shapes; k++)
        if (json_array_append_new(list, shape_json(a, &r->shapes[k])))
            json_decref(list), list = NULL;
    char *text = doc && list && !gb_json_set(doc, "shapes", list) ? gb_json_dump(doc, true) : NULL;
    if (!doc) json_decref(list);
    json_decref(doc);
    if (!text) return fprintf(stderr, "%s repro: out of memory\n", a->prog), 2;
    printf("%s\n", text);
    free(text);
    return 0;
}

/* ---- the run ------------------------------------------------------------------------- */

static int repro(const repro_args *a)
{
    gb_report *runs = calloc((size_t)a->n_paths, sizeof *runs);
    gb_repro r = {0};
    misses m = {0};
    gb_err err = {0};
    int status = 2;
    if (!runs) {
        fprintf(stderr, "%s repro: out of memory\n", a->prog);
        return 2;
    }
    if (load_runs(a, runs, &err) || gb_repro_compute(runs, a->n_paths, &a->opts, &r, &err)) {
        fprintf(stderr, "%s repro: %s\n", a->prog, err.msg);
        goto cleanup;
    }
    int n_missed = check_goals(a, &r, &m);
    status = a->json ? print_json(a, &r, &m, n_missed) : (print_table(a, &r, &m), 0);
    if (status == 0 && n_missed) status = 1;
cleanup:
    free(m.list);
    gb_repro_free(&r);
    for (int i = 0; i < a->n_paths; i++)
        gb_report_free(&runs[i]);
    free(runs);
    return status;
}

int gb_cli_repro(int argc, char **argv)
{
    repro_args a = {
        .prog = argv[0], .opts = gb_compare_opts_default(), .max_spread = NAN, .max_regret = NAN};
    int status = parse_args(argc, argv, &a);
    return status < 0 ? repro(&a) : status;
}
