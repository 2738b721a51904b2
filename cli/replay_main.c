/* gpubench replay FILE [options]: search strategies run against a recorded table
 * instead of the GPU (tuner/replay.h, docs/replay.md). Pure CPU. */
#include "cache/inspect.h"
#include "cli/args.h"
#include "cli/cli.h"
#include "cli/replay_score.h"
#include "report/table.h"
#include "session/session.h"
#include "tuner/replay.h"

#include "base/clock.h"

#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char USAGE[] =
    "usage: %s replay FILE [options]\n"
    "       %s replay --cached --kernel K [--cache DIR] [options]\n"
    "       %s replay FILE... --score [--cutoff P] [--cutoff-start P] [--resolution N]\n"
    "                              [--seeds N] [--strategy S|all] [--batch N]\n"
    "                              [--runs FILE]... [--json]\n"
    "\n"
    "Runs search strategies against a recorded table instead of the GPU, and says how\n"
    "many evaluations each needs to find a configuration within PCT%% of the table's\n"
    "optimum: the benchmark for strategies. FILE is a gpubench transfer file (`gpubench\n"
    "cache save`), what `gpubench cache show KERNEL SHAPE --json` prints, a Kernel\n"
    "Tuner cache file or a T4 results file, plain or gzipped; the format is told from\n"
    "its content. With --cached the table is read from the cache instead: the trials\n"
    "gpubench-tune recorded for the kernel (with --shape, --device and --kernel-fp\n"
    "when it holds several). The configurations in the table are the valid set; one\n"
    "that failed costs an evaluation, as on the GPU.\n"
    "\n"
    "options:\n"
    "  --strategy S|all  the strategy to replay, or all of them (default all): %s\n"
    "  --seeds N         searches per strategy (default 30) ...\n"
    "  --seed S          ... with seeds S..S+N-1 (default 1), as gpubench-tune --seed\n"
    "  --within PCT      the target: a time at most PCT%% above the optimum (default 5)\n"
    "  --budget N        evaluations per search (default: the table's size)\n"
    "  --batch N         configurations asked for at a time, 1 to 256 (default 1)\n"
    "  --kernel K, --shape SHAPE, --device D, --kernel-fp FP\n"
    "                    which table of a file (or, with --cached, the cache) that holds\n"
    "                    several (SHAPE as `gpubench cache ls` prints it; D and FP may be\n"
    "                    a part, a start)\n"
    "  --cached          the table from the cache, not a file (--kernel needed)\n"
    "  --cache DIR       the cache --cached reads (default $GPUBENCH_CACHE, else\n"
    "                    $XDG_CACHE_HOME/gpubench, else ~/.cache/gpubench)\n"
    "  --json            machine-readable output\n"
    "  -h, --help        this text\n"
    "\n"
    "--score scores every strategy on each FILE and over them all as the autotuning\n"
    "methodology does (autotuning_methodology 1.1.0: best-so-far over the time the\n"
    "evaluations cost, against random search's expected best and the optimum; 0 is\n"
    "random search, 1 the optimum throughout; docs/replay.md):\n"
    "  --cutoff P        the range's end, P of the way from the median to the\n"
    "                    optimum (default 0.96)\n"
    "  --cutoff-start P  its start (default 0.5)\n"
    "  --resolution N    points on the time axis (default 1000)\n"
    "  --seeds N         repeats per strategy (default 100 with --score)\n"
    "  --runs FILE       another tool's searches of one of the FILEs, scored beside\n"
    "                    ours (bench/score_vs_kernel_tuner.sh writes Kernel Tuner's):\n"
    "                    {\"space\": FILE, \"strategy\": NAME, \"runs\": [{\"costs_s\": [...],\n"
    "                    \"times_ms\": [...]}]}; may be given many times\n"
    "The last line: score: best=NAME score=X error=Y spaces=N\n"
    "\n"
    "Per strategy: the median and 90th percentile of the evaluations to the target over\n"
    "the seeds (a search that never reached it counts as infinite: `inf`), the\n"
    "fraction of seeds that reached it, the mean evaluations spent and the time taken.\n"
    "The last line names the best strategy (lowest median, then p90):\n"
    "  replay: strategy=NAME seeds=N within=P%% median_evals=X p90_evals=Y reached=F\n"
    "\n"
    "exit status: 0 ok; 1 the file (or the cache) holds no table to replay, or a\n"
    "strategy failed; 2 usage, or the file or cache cannot be read.\n";

typedef struct replay_args {
    const char *prog, *file, *strategy;
    bool cached;           /* --cached: the table from the cache */
    const char *cache_dir; /* --cache; NULL: the default */
    uint64_t seed;         /* --seed: the first search's */
    gb_replay_select sel;
    const char *shape_text;
    gb_fields shape;
    gb_replay_opts opts;
    bool json;
    bool score, seeds_given;
    gb_score_opts score_opts;
    char **files;
    int n_files;
    char **runs_files; /* --runs, in order */
    int n_runs_files;
} replay_args;

enum {
    OPT_STRATEGY = 256,
    OPT_SEEDS,
    OPT_WITHIN,
    OPT_BUDGET,
    OPT_BATCH,
    OPT_KERNEL,
    OPT_SHAPE,
    OPT_DEVICE,
    OPT_KERNEL_FP,
    OPT_JSON,
    OPT_SCORE,
    OPT_CUTOFF,
    OPT_CUTOFF_START,
    OPT_RESOLUTION,
    OPT_RUNS,
    OPT_SEED,
    OPT_CACHED,
    OPT_CACHE,
};

static const struct option long_options[] = {
    {"strategy", required_argument, NULL, OPT_STRATEGY},
    {"seeds", required_argument, NULL, OPT_SEEDS},
    {"within", required_argument, NULL, OPT_WITHIN},
    {"budget", required_argument, NULL, OPT_BUDGET},
    {"batch", required_argument, NULL, OPT_BATCH},
    {"kernel", required_argument, NULL, OPT_KERNEL},
    {"shape", required_argument, NULL, OPT_SHAPE},
    {"device", required_argument, NULL, OPT_DEVICE},
    {"kernel-fp", required_argument, NULL, OPT_KERNEL_FP},
    {"json", no_argument, NULL, OPT_JSON},
    {"score", no_argument, NULL, OPT_SCORE},
    {"cutoff", required_argument, NULL, OPT_CUTOFF},
    {"cutoff-start", required_argument, NULL, OPT_CUTOFF_START},
    {"resolution", required_argument, NULL, OPT_RESOLUTION},
    {"runs", required_argument, NULL, OPT_RUNS},
    {"seed", required_argument, NULL, OPT_SEED},
    {"cached", no_argument, NULL, OPT_CACHED},
    {"cache", required_argument, NULL, OPT_CACHE},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static void print_usage(FILE *out, const char *prog)
{
    gb_strbuf names = GB_STRBUF_INIT;
    gb_strategy_append_names(&names);
    fprintf(out, USAGE, prog, prog, prog, gb_sb_str(&names));
    gb_sb_free(&names);
}

static int usage_error(const char *prog, const char *msg, const char *what)
{
    fprintf(stderr, "%s replay: %s%s\n", prog, msg, what);
    fprintf(stderr, "(`%s replay --help` lists the options)\n", prog);
    return 2;
}

/* A whole number in [lo, hi]; false otherwise. */
static bool whole(const char *text, long lo, long hi, int *out)
{
    char *end = NULL;
    long v = strtol(text, &end, 10);
    if (!*text || *end || v < lo || v > hi) return false;
    *out = (int)v;
    return true;
}

/* A fraction in [lo, hi), or in [lo, hi] with closed; false otherwise. */
static bool fraction(const char *text, double lo, double hi, bool closed, double *out)
{
    char *end = NULL;
    double v = strtod(text, &end);
    if (!*text || *end || !(v >= lo) || !(closed ? v <= hi : v < hi)) return false;
    *out = v;
    return true;
}

static int apply_score_option(int c, replay_args *a)
{
    gb_score_opts *o = &a->score_opts;
    switch (c) {
    case OPT_SCORE:
        a->score = true;
        return -1;
    case OPT_CUTOFF:
        return fraction(optarg, 0, 1, true, &o->cutoff) && o->cutoff > 0
                   ? -1
                   : usage_error(a->prog, "--cutoff needs a fraction above 0, at most 1", "");
    case OPT_CUTOFF_START:
        return fraction(optarg, 0, 1, false, &o->cutoff_start)
                   ? -1
                   : usage_error(a->prog, "--cutoff-start needs a fraction from 0, below 1", "");
    case OPT_RUNS: {
        char **grown = realloc(a->runs_files, (size_t)(a->n_runs_files + 1) * sizeof *grown);
        if (!grown) return fprintf(stderr, "%s replay: out of memory\n", a->prog), 1;
        a->runs_files = grown;
        a->runs_files[a->n_runs_files++] = optarg;
        return -1;
    }
    default: /* OPT_RESOLUTION */
        return whole(optarg, 2, 1000000, &o->resolution)
                   ? -1
                   : usage_error(a->prog, "--resolution needs a whole number from 2 to 1000000",
                                 "");
    }
}

/* Returns -1 to go on, or an exit status. */
static int apply_option(int c, replay_args *a)
{
    char *end = NULL;
    if (c >= OPT_SCORE && c <= OPT_RUNS) return apply_score_option(c, a);
    switch (c) {
    case OPT_STRATEGY:
        a->strategy = optarg;
        return -1;
    case OPT_SEEDS:
        a->seeds_given = true;
        return whole(optarg, 1, 100000, &a->opts.n_seeds)
                   ? -1
                   : usage_error(a->prog, "--seeds needs a whole number from 1 to 100000", "");
    case OPT_WITHIN:
        a->opts.within_pct = strtod(optarg, &end);
        return *optarg && !*end && a->opts.within_pct >= 0 && a->opts.within_pct <= 1e6
                   ? -1
                   : usage_error(a->prog, "--within needs a percentage from 0 to 1000000", "");
    case OPT_BUDGET:
        return whole(optarg, 1, 2000000000, &a->opts.budget)
                   ? -1
                   : usage_error(a->prog, "--budget needs a whole number of 1 or more", "");
    case OPT_BATCH:
        return whole(optarg, 1, 256, &a->opts.batch)
                   ? -1
                   : usage_error(a->prog, "--batch needs a whole number from 1 to 256", "");
    case OPT_KERNEL:
        a->sel.kernel = optarg;
        return -1;
    case OPT_SHAPE:
        a->shape_text = optarg;
        return -1;
    case OPT_DEVICE:
        a->sel.device = optarg;
        return -1;
    case OPT_KERNEL_FP:
        a->sel.kernel_fp = optarg;
        return -1;
    case OPT_JSON:
        a->json = true;
        return -1;
    case OPT_SEED:
        a->seed = strtoull(optarg, &end, 10);
        return *optarg && *optarg != '-' && !*end && a->seed > 0
                   ? -1
                   : usage_error(a->prog, "--seed needs a whole number of 1 or more", "");
    case OPT_CACHED:
        a->cached = true;
        return -1;
    case OPT_CACHE:
        a->cache_dir = optarg;
        return -1;
    case 'h':
        print_usage(stdout, a->prog);
        return 0;
    default:
        return usage_error(a->prog, "unknown option or missing argument", "");
    }
}

static int check_strategy(const replay_args *a)
{
    if (!strcmp(a->strategy, "all") || gb_strategy_find(a->strategy)) return -1;
    gb_strbuf names = GB_STRBUF_INIT;
    gb_strategy_append_names(&names);
    fprintf(stderr, "%s replay: unknown strategy '%s': the strategies are %s (or all)\n", a->prog,
            a->strategy, gb_sb_str(&names));
    gb_sb_free(&names);
    return 2;
}

static int parse_args(int argc, char **argv, replay_args *a)
{
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", long_options, NULL)) != -1) {
        if (c == '?') return gb_cli_bad_option(a->prog, "replay", argv, long_options);
        int status = apply_option(c, a);
        if (status >= 0) return status;
    }
    if (a->cached && a->score)
        return usage_error(a->prog, "--score reads FILEs, not the cache (--cached)", "");
    if (a->cached && optind < argc)
        return usage_error(a->prog, "--cached reads the cache, not a FILE: ", argv[optind]);
    if (a->cached && !a->sel.kernel) return usage_error(a->prog, "--cached needs --kernel", "");
    if (a->cache_dir && !a->cached) return usage_error(a->prog, "--cache needs --cached", "");
    if (!a->cached && optind >= argc) return usage_error(a->prog, "no FILE given", "");
    if (a->seed != 1 && a->score) return usage_error(a->prog, "--score runs seeds 1..N", "");
    if (a->n_runs_files && !a->score) return usage_error(a->prog, "--runs needs --score", "");
    if (optind + 1 < argc && !a->score)
        return usage_error(a->prog,
                           "unexpected argument (several FILEs need --score): ", argv[optind + 1]);
    if (a->score_opts.cutoff_start >= a->score_opts.cutoff)
        return usage_error(a->prog, "--cutoff-start must be below --cutoff", "");
    a->file = a->cached ? NULL : argv[optind];
    a->files = argv + optind;
    a->n_files = argc - optind;
    if (a->shape_text) {
        gb_err err = {0};
        if (gb_cache_parse_shape(a->shape_text, &a->shape, &err))
            return usage_error(a->prog, "--shape: ", err.msg);
        a->sel.shape = &a->shape;
    }
    return check_strategy(a);
}

/* ---- output --------------------------------------------------------------------- */

static const char *format_name(gb_replay_format f)
{
    return f == GB_REPLAY_TRANSFER ? "export"
           : f == GB_REPLAY_TRIALS ? "trials"
           : f == GB_REPLAY_KTUNER ? "kernel-tuner"
           : f == GB_REPLAY_T4     ? "t4"
           : f == GB_REPLAY_CACHE  ? "cache"
                                   : "built";
}

static void config_text(const gb_replay_table *t, uint64_t ordinal, gb_strbuf *sb)
{
    gb_config c;
    gb_config_at(&t->space, ordinal, &c);
    gb_config_append_canonical(sb, &c);
}

/* "inf" or the count. */
static const char *evals_text(int evals, char *buf, size_t n)
{
    if (evals == GB_REPLAY_INF) return "inf";
    snprintf(buf, n, "%d", evals);
    return buf;
}

static void print_header(const replay_args *a, const gb_replay_table *t, double load_s)
{
    size_t n_ok = t->n_status[GB_TRIAL_OK], failed = t->n_entries - n_ok;
    const gb_replay_entry *best = &t->entries[t->optimum];
    gb_strbuf sb = GB_STRBUF_INIT;
    printf("replay %s: %s\n", a->file, t->what);
    printf("  table    %zu configurations of a space of %llu: %zu timed, %zu failed", t->n_entries,
           (unsigned long long)t->space_size, n_ok, failed);
    const char *sep = " (";
    for (int s = 1; s < GB_TRIAL_STATUS_COUNT; s++) {
        if (!t->n_status[s]) continue;
        printf("%s%zu %s", sep, t->n_status[s], gb_trial_status_name((gb_trial_status)s));
        sep = ", ";
    }
    printf("%s\n", failed ? ")" : "");
    if (t->n_unmeasured) printf("  (%zu ok trials without statistics left out)\n", t->n_unmeasured);
    config_text(t, best->ordinal, &sb);
    printf("  optimum  %.6g ms: %s\n", best->ms, gb_sb_str(&sb));
    printf("  target   within %g%% (at most %.6g ms): %zu configurations\n", a->opts.within_pct,
           gb_replay_target_ms(t, a->opts.within_pct), gb_replay_n_within(t, a->opts.within_pct));
    char from[48] = "";
    if (a->seed != 1) snprintf(from, sizeof from, " from %llu", (unsigned long long)a->seed);
    printf("  run      %d seeds%s per strategy, budget %d evaluations, batch %d; table read in "
           "%.2f s\n",
           a->opts.n_seeds, from, a->opts.budget ? a->opts.budget : (int)t->n_entries,
           a->opts.batch ? a->opts.batch : 1, load_s);
    gb_sb_free(&sb);
}

static void print_results(const gb_replay_stats *stats, int n)
{
    static const char *const headers[] = {"strategy",   "median evals", "p90 evals", "reached",
                                          "mean evals", "seconds",      NULL};
    gb_table t;
    char a[32], b[32];
    gb_table_init(&t, headers, "lrrrrr");
    for (int i = 0; i < n; i++) {
        const gb_replay_stats *s = &stats[i];
        gb_table_cell(&t, "%s", s->strategy);
        gb_table_cell(&t, "%s", evals_text(s->median, a, sizeof a));
        gb_table_cell(&t, "%s", evals_text(s->p90, b, sizeof b));
        gb_table_cell(&t, "%.2f", (double)s->n_reached / s->n_seeds);
        gb_table_cell(&t, "%.1f", s->mean_evals);
        gb_table_cell(&t, "%.3f", s->seconds);
    }
    printf("\n");
    gb_table_print(&t, stdout);
    gb_table_free(&t);
}

static void print_last_line(const replay_args *a, const gb_replay_stats *best)
{
    char m[32], p[32];
    printf("\nreplay: strategy=%s seeds=%d within=%g%% median_evals=%s p90_evals=%s reached=%.2f\n",
           best->strategy, best->n_seeds, a->opts.within_pct, evals_text(best->median, m, sizeof m),
           evals_text(best->p90, p, sizeof p), (double)best->n_reached / best->n_seeds);
}

static json_t *evals_json(int evals)
{
    return evals == GB_REPLAY_INF ? json_null() : json_integer(evals);
}

static json_t *stats_json(const gb_replay_stats *s)
{
    json_t *per_seed = json_array();
    for (int i = 0; per_seed && i < s->n_seeds; i++)
        json_array_append_new(per_seed, evals_json(s->evals[i]));
    return json_pack("{s:s, s:o, s:o, s:f, s:i, s:f, s:f, s:i, s:o*}", "strategy", s->strategy,
                     "median_evals", evals_json(s->median), "p90_evals", evals_json(s->p90),
                     "reached", (double)s->n_reached / s->n_seeds, "n_reached", s->n_reached,
                     "mean_evals", s->mean_evals, "seconds", s->seconds, "budget", s->budget,
                     "evals", per_seed);
}

static json_t *table_json(const replay_args *a, const gb_replay_table *t)
{
    json_t *failures = json_object(), *optimum = NULL;
    gb_config c;
    gb_fields fields;
    for (int s = 1; failures && s < GB_TRIAL_STATUS_COUNT; s++)
        json_object_set_new(failures, gb_trial_status_name((gb_trial_status)s),
                            json_integer((json_int_t)t->n_status[s]));
    gb_config_at(&t->space, t->entries[t->optimum].ordinal, &c);
    if (gb_config_to_fields(&c, &fields) == GB_OK) {
        optimum = gb_fields_to_json(&fields);
        gb_fields_free(&fields);
    }
    return json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:o, s:I, s:f, s:o*, s:f, s:f, s:I}",
                     "file", a->file, "format", format_name(t->format), "table", t->what,
                     "space_size", (json_int_t)t->space_size, "entries", (json_int_t)t->n_entries,
                     "timed", (json_int_t)t->n_status[GB_TRIAL_OK], "failed",
                     (json_int_t)(t->n_entries - t->n_status[GB_TRIAL_OK]), "failures", failures,
                     "unmeasured", (json_int_t)t->n_unmeasured, "optimum_ms",
                     t->entries[t->optimum].ms, "optimum", optimum, "within_pct",
                     a->opts.within_pct, "target_ms", gb_replay_target_ms(t, a->opts.within_pct),
                     "n_within", (json_int_t)gb_replay_n_within(t, a->opts.within_pct));
}

static int print_json(const replay_args *a, const gb_replay_table *t, const gb_replay_stats *stats,
                      int n, int best)
{
    json_t *doc = table_json(a, t), *list = json_array();
    for (int i = 0; doc && list && i < n; i++)
        json_array_append_new(list, stats_json(&stats[i]));
    if (!doc || !list) {
        json_decref(doc), json_decref(list);
        return fprintf(stderr, "%s replay: out of memory\n", a->prog), 1;
    }
    json_object_set_new(doc, "seeds", json_integer(a->opts.n_seeds));
    json_object_set_new(doc, "first_seed", json_integer((json_int_t)a->seed));
    json_object_set_new(doc, "batch", json_integer(a->opts.batch ? a->opts.batch : 1));
    json_object_set_new(doc, "strategies", list);
    json_object_set_new(doc, "best", json_string(stats[best].strategy));
    json_dumpf(doc, stdout, JSON_INDENT(2));
    fputc('\n', stdout);
    json_decref(doc);
    return 0;
}

/* ---- the run ------------------------------------------------------------------ */

/* The table: the file's, or with --cached the session's cache's (a->file then
 * names the cache's folder). Returns -1 to go on, or an exit status. */
static int load_table(replay_args *a, gb_session *s, gb_replay_table *t)
{
    gb_err err = {0};
    int rc;
    bool unreadable = false; /* a usage error, as in every command */
    if (a->cached) {
        rc = gb_cache_open_or_default(a->cache_dir, GB_CACHE_READONLY, &s->tuner.cache, &err);
        unreadable = rc != GB_OK;
        if (rc == GB_OK) {
            a->file = gb_cache_dir(s->tuner.cache);
            rc = gb_session_replay_table(s, &a->sel, t, &err);
        }
    } else {
        rc = gb_replay_load(a->file, &a->sel, t, &err);
    }
    if (rc == GB_OK) return -1;
    fprintf(stderr, "%s replay: %s\n", a->prog, err.msg);
    return unreadable || rc == GB_EIO || rc == GB_ECACHE ? 2 : 1;
}

/* Every strategy asked for, through the session, then the results printed. */
static int run_strategies(const replay_args *a, gb_session *session, const gb_replay_table *t,
                          double load_s)
{
    gb_replay_stats *stats = calloc((size_t)gb_strategy_n_kinds, sizeof *stats);
    gb_err err = {0};
    int n = 0, best = 0, status = 0;
    if (!stats) gb_err_set(&err, GB_ENOMEM, "out of memory");
    if (!a->json) print_header(a, t, load_s);
    fflush(stdout);
    if (!stats || gb_session_replay(session, t, &a->opts, stats, &n, &best, &err)) {
        fprintf(stderr, "%s replay: %s\n", a->prog, err.msg);
        status = 1;
    }
    if (!status && a->json) status = print_json(a, t, stats, n, best);
    if (!status && !a->json) {
        print_results(stats, n);
        print_last_line(a, &stats[best]);
    }
    for (int i = 0; stats && i < n; i++)
        gb_replay_stats_free(&stats[i]);
    free(stats);
    return status;
}

/* The searches run as a session with the strategy and seed asked for would run
 * them, against the table instead of the GPU. */
static int replay(replay_args *a)
{
    gb_replay_table t;
    gb_session session;
    gb_session_init(&session);
    session.tuner.strategy = strcmp(a->strategy, "all") ? a->strategy : NULL;
    session.tuner.seed = a->seed;
    double t0 = gb_now_ms();
    int status = load_table(a, &session, &t);
    if (status < 0) {
        status = run_strategies(a, &session, &t, (gb_now_ms() - t0) / 1e3);
        gb_replay_table_free(&t);
    }
    gb_cache_close(session.tuner.cache);
    gb_session_close(&session);
    return status;
}

static int score(const replay_args *a)
{
    gb_replay_score_args s = {.prog = a->prog,
                              .files = a->files,
                              .n_files = a->n_files,
                              .strategy = a->strategy,
                              .sel = &a->sel,
                              .runs_files = a->runs_files,
                              .n_runs_files = a->n_runs_files,
                              .opts = a->score_opts,
                              .json = a->json};
    s.opts.repeats = a->seeds_given ? a->opts.n_seeds : 100;
    s.opts.batch = a->opts.batch;
    return gb_replay_score(&s);
}

int gb_cli_replay(int argc, char **argv)
{
    replay_args a = {.prog = argv[0],
                     .strategy = "all",
                     .seed = 1,
                     .opts = {.n_seeds = 30, .within_pct = 5},
                     .score_opts = {.cutoff = 0.96, .cutoff_start = 0.5, .resolution = 1000}};
    int status = parse_args(argc, argv, &a);
    if (status < 0) status = a.score ? score(&a) : replay(&a);
    gb_fields_free(&a.shape);
    free(a.runs_files);
    return status;
}
