/* gpubench compare OLD.json NEW.json: which benchmarks got slower, as a table or
 * JSON, and an exit status that a CI job can gate on (docs/compare.md). The
 * statistics are report/compare/compare.h's; this file reads the arguments, pairs the
 * entries by name and prints. Pure CPU: it touches no GPU library. */
#include "cli/args.h"
#include "cli/cli.h"
#include "report/compare/compare.h"
#include "report/table.h"

#include "base/json.h"

#include <getopt.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char USAGE[] =
    "usage: %s compare [options] OLD.json NEW.json\n"
    "\n"
    "Compares two benchmark runs entry by entry (by name) and says, for each, whether\n"
    "NEW is FASTER, SLOWER, the SAME or whether the samples cannot tell (UNSURE). The\n"
    "files are gpubench JSON runs (every sample of each entry) or Google Benchmark\n"
    "JSON output (its repetitions are the samples; run with --benchmark_repetitions).\n"
    "\n"
    "options:\n"
    "  --threshold PCT  the smallest change that counts, in percent (default 2)\n"
    "  --alpha A        the significance level of the test (default 0.05)\n"
    "  --all            also compare the trials of gpubench runs, not only the best\n"
    "                   and baseline entries\n"
    "  --filter REGEX   only the entries whose name matches REGEX (POSIX extended)\n"
    "  --json           machine-readable output\n"
    "  -h, --help       this text\n"
    "\n"
    "Per entry: a Mann-Whitney U test (two-sided) and a bootstrap 95%% interval of the\n"
    "ratio of medians (new/old). SLOWER: p < A and the ratio above 1 + PCT%%; FASTER:\n"
    "p < A and below 1 - PCT%%; SAME: significant but within PCT%%, or the whole\n"
    "interval within PCT%%; UNSURE otherwise, and always with fewer than 5 samples on a\n"
    "side. The last line gives the geometric mean of new/old and the counts:\n"
    "  compare: N pairs, geomean new/old R (+C%%): F faster, S slower, M same, U unsure\n"
    "(then \", K failed in NEW only\" when some did)\n"
    "\n"
    "exit status: 0 nothing SLOWER; 1 at least one entry SLOWER, or failed in NEW\n"
    "only; 2 usage, or a file that cannot be read or is not a benchmark run.\n";

typedef struct compare_args {
    const char *prog, *old_path, *new_path, *filter_text;
    gb_compare_opts opts;
    bool all, json, has_filter;
    regex_t filter;
} compare_args;

/* One name in both files, and what the comparison said. */
typedef struct pair {
    const gb_sample_set *old, *new_;
    gb_compare_result r;
} pair;

typedef struct pairing {
    pair *pairs;
    int n;
    const char **only_old, **only_new;
    int n_only_old, n_only_new;
    int counts[GB_VERDICT_COUNT];
    double geomean;
} pairing;

enum { OPT_THRESHOLD = 256, OPT_ALPHA, OPT_ALL, OPT_FILTER, OPT_JSON };

static const struct option long_options[] = {
    {"threshold", required_argument, NULL, OPT_THRESHOLD},
    {"alpha", required_argument, NULL, OPT_ALPHA},
    {"all", no_argument, NULL, OPT_ALL},
    {"filter", required_argument, NULL, OPT_FILTER},
    {"json", no_argument, NULL, OPT_JSON},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* Returns -1 to go on, or an exit status. */
static int apply_option(int c, compare_args *a)
{
    switch (c) {
    case OPT_THRESHOLD:
    case OPT_ALPHA:
        return gb_cli_compare_option(a->prog, "compare", c == OPT_ALPHA, optarg, &a->opts);
    case OPT_ALL:
        a->all = true;
        return -1;
    case OPT_FILTER:
        a->filter_text = optarg;
        return -1;
    case OPT_JSON:
        a->json = true;
        return -1;
    case 'h':
        printf(USAGE, a->prog);
        return 0;
    default:
        return gb_cli_usage_error(a->prog, "compare", "unknown option or missing argument", "");
    }
}

static int compile_filter(compare_args *a)
{
    int rc = regcomp(&a->filter, a->filter_text, REG_EXTENDED | REG_NOSUB);
    if (rc) {
        char msg[256];
        regerror(rc, &a->filter, msg, sizeof msg);
        return gb_cli_usage_error(a->prog, "compare", "--filter: ", msg);
    }
    a->has_filter = true;
    return -1;
}

static int parse_args(int argc, char **argv, compare_args *a)
{
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", long_options, NULL)) != -1) {
        if (c == '?') return gb_cli_bad_option(a->prog, "compare", argv, long_options);
        int status = apply_option(c, a);
        if (status >= 0) return status;
    }
    if (argc - optind < 2)
        return gb_cli_usage_error(a->prog, "compare", "two files are needed: OLD.json NEW.json",
                                  "");
    if (argc - optind > 2)
        return gb_cli_usage_error(a->prog, "compare", "unexpected argument: ", argv[optind + 2]);
    a->old_path = argv[optind];
    a->new_path = argv[optind + 1];
    return a->filter_text ? compile_filter(a) : -1;
}

/* ---- pairing ------------------------------------------------------------------ */

static bool wanted(const compare_args *a, const char *name)
{
    return !a->has_filter || regexec(&a->filter, name, 0, NULL, 0) == 0;
}

static int compare_pair(const compare_args *a, pair *p, gb_err *err)
{
    int rc = gb_compare_samples(p->old->samples_ms, p->old->n, p->new_->samples_ms, p->new_->n,
                                &a->opts, &p->r, err);
    if (rc) return gb_err_prefix(err, "%s", p->old->name);
    if (p->old->error || p->new_->error) p->r.reason = "the benchmark failed";
    return GB_OK;
}

/* The names of `from` that `other` lacks, into *out (n of them). */
static int unmatched(const compare_args *a, const gb_sample_file *from, const gb_sample_file *other,
                     const char ***out, int *out_n)
{
    *out = calloc((size_t)from->n + 1, sizeof **out);
    if (!*out) return GB_ENOMEM;
    for (int i = 0; i < from->n; i++)
        if (wanted(a, from->sets[i].name) && !gb_sample_file_find(other, from->sets[i].name))
            (*out)[(*out_n)++] = from->sets[i].name;
    return GB_OK;
}

static int pair_up(const compare_args *a, const gb_sample_file *old, const gb_sample_file *new_,
                   pairing *out, gb_err *err)
{
    double *ratios = calloc((size_t)old->n + 1, sizeof *ratios);
    out->pairs = calloc((size_t)old->n + 1, sizeof *out->pairs);
    int rc = ratios && out->pairs ? unmatched(a, old, new_, &out->only_old, &out->n_only_old)
                                  : GB_ENOMEM;
    if (!rc) rc = unmatched(a, new_, old, &out->only_new, &out->n_only_new);
    if (rc) gb_err_set(err, rc, "out of memory");
    for (int i = 0; !rc && i < old->n; i++) {
        const gb_sample_set *o = &old->sets[i], *n = gb_sample_file_find(new_, o->name);
        if (!n || !wanted(a, o->name)) continue;
        pair *p = &out->pairs[out->n];
        *p = (pair){.old = o, .new_ = n};
        rc = compare_pair(a, p, err);
        if (rc) break;
        out->counts[p->r.verdict]++;
        ratios[out->n++] = p->r.ratio;
    }
    out->geomean = gb_compare_geomean(ratios, out->n);
    free(ratios);
    return rc;
}

static void pairing_free(pairing *p)
{
    free(p->pairs);
    free(p->only_old);
    free(p->only_new);
}

/* ---- the table ------------------------------------------------------------------ */

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

static bool use_colour(void)
{
    const char *no_colour = getenv("NO_COLOR");
    return isatty(fileno(stdout)) && !(no_colour && *no_colour);
}

static void verdict_cell(gb_table *t, gb_verdict v, bool colour)
{
    static const char *const codes[] = {"", "\033[32m", "\033[31m", "\033[33m"};
    if (colour && *codes[v])
        gb_table_cell(t, "%s%s\033[0m", codes[v], gb_verdict_name(v));
    else
        gb_table_cell(t, "%s", gb_verdict_name(v));
}

static void pair_row(gb_table *t, const pair *p, bool colour)
{
    const gb_compare_result *r = &p->r;
    char a[32], b[32];
    gb_table_cell(t, "%s", p->old->name);
    gb_table_cell(t, "%d/%d", r->n_old, r->n_new);
    gb_table_cell(t, "%s", time_text(r->old_median, a, sizeof a));
    gb_table_cell(t, "%s", time_text(r->new_median, b, sizeof b));
    if (isfinite(r->ratio))
        gb_table_cell(t, "%+.2f%%", 100 * (r->ratio - 1));
    else
        gb_table_cell(t, "-");
    if (isfinite(r->ci_lo))
        gb_table_cell(t, "[%+.2f%%, %+.2f%%]", 100 * (r->ci_lo - 1), 100 * (r->ci_hi - 1));
    else
        gb_table_cell(t, "-");
    if (isfinite(r->test.p_value))
        gb_table_cell(t, "%.3g", r->test.p_value);
    else
        gb_table_cell(t, "-");
    verdict_cell(t, r->verdict, colour);
}

static void print_only(const char *which, const char *path, const char **names, int n)
{
    if (!n) return;
    printf("\nonly in %s (%s): %d\n", which, path, n);
    for (int i = 0; i < n; i++)
        printf("  %s\n", names[i]);
}

static void print_failures(const pairing *p)
{
    for (int i = 0; i < p->n; i++) {
        const pair *q = &p->pairs[i];
        if (q->old->error) printf("  %s: failed in OLD: %s\n", q->old->name, q->old->error);
        if (q->new_->error) printf("  %s: failed in NEW: %s\n", q->new_->name, q->new_->error);
    }
}

/* Pairs that worked in OLD and failed in NEW: as much a regression as a slowdown. */
static int newly_failed(const pairing *p)
{
    int n = 0;
    for (int i = 0; i < p->n; i++)
        n += !p->pairs[i].old->error && p->pairs[i].new_->error;
    return n;
}

static void print_table(const compare_args *a, const pairing *p)
{
    static const char *const headers[] = {"benchmark", "n",       "old",     "new", "change",
                                          "95% CI",    "p-value", "verdict", NULL};
    gb_table t;
    bool colour = use_colour();
    gb_table_init(&t, headers, "lrrrrrrl");
    for (int i = 0; i < p->n; i++)
        pair_row(&t, &p->pairs[i], colour);
    if (p->n) gb_table_print(&t, stdout);
    gb_table_free(&t);
    print_failures(p);
    print_only("OLD", a->old_path, p->only_old, p->n_only_old);
    print_only("NEW", a->new_path, p->only_new, p->n_only_new);
    printf("%scompare: %d pairs, geomean new/old ",
           p->n || p->n_only_old || p->n_only_new ? "\n" : "", p->n);
    if (isfinite(p->geomean))
        printf("%.4f (%+.2f%%)", p->geomean, 100 * (p->geomean - 1));
    else
        printf("-");
    printf(": %d faster, %d slower, %d same, %d unsure", p->counts[GB_VERDICT_FASTER],
           p->counts[GB_VERDICT_SLOWER], p->counts[GB_VERDICT_SAME], p->counts[GB_VERDICT_UNSURE]);
    if (newly_failed(p)) printf(", %d failed in NEW only", newly_failed(p));
    putchar('\n');
}

/* ---- JSON ------------------------------------------------------------------------ */

static json_t *names_json(const char **names, int n)
{
    json_t *list = json_array();
    for (int i = 0; list && i < n; i++)
        if (json_array_append_new(list, json_string(names[i]))) return json_decref(list), NULL;
    return list;
}

static json_t *pair_json(const pair *p)
{
    const gb_compare_result *r = &p->r;
    const char *test = isnan(r->test.p_value) ? NULL : r->test.exact ? "exact" : "normal";
    return json_pack("{s:s, s:i, s:i, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o*, s:s, s:s, s:s*, "
                     "s:s*}",
                     "name", p->old->name, "n_old", r->n_old, "n_new", r->n_new, "old_median_ms",
                     gb_json_real(r->old_median), "new_median_ms", gb_json_real(r->new_median),
                     "ratio", gb_json_real(r->ratio), "change_pct",
                     gb_json_real(100 * (r->ratio - 1)), "ci_lo", gb_json_real(r->ci_lo), "ci_hi",
                     gb_json_real(r->ci_hi), "p_value", gb_json_real(r->test.p_value), "test",
                     test ? json_string(test) : json_null(), "verdict", gb_verdict_name(r->verdict),
                     "reason", r->reason, "old_error", p->old->error, "new_error", p->new_->error);
}

static json_t *file_json(const char *path, const gb_sample_file *f)
{
    return json_pack("{s:s, s:s, s:i}", "file", path, "format", f->format, "entries", f->n);
}

static json_t *summary_json(const compare_args *a, const pairing *p, const gb_sample_file *old,
                            const gb_sample_file *new_)
{
    return json_pack(
        "{s:o, s:o, s:f, s:f, s:f, s:i, s:I, s:o, s:{s:i, s:i, s:i, s:i, s:i}, s:o, s:o}", "old",
        file_json(a->old_path, old), "new", file_json(a->new_path, new_), "threshold",
        a->opts.threshold, "alpha", a->opts.alpha, "confidence", a->opts.confidence, "resamples",
        a->opts.n_resamples, "seed", (json_int_t)a->opts.seed, "geomean_ratio",
        gb_json_real(p->geomean), "counts", "faster", p->counts[GB_VERDICT_FASTER], "slower",
        p->counts[GB_VERDICT_SLOWER], "same", p->counts[GB_VERDICT_SAME], "unsure",
        p->counts[GB_VERDICT_UNSURE], "newly_failed", newly_failed(p), "only_old",
        names_json(p->only_old, p->n_only_old), "only_new", names_json(p->only_new, p->n_only_new));
}

static int print_json(const compare_args *a, const pairing *p, const gb_sample_file *old,
                      const gb_sample_file *new_)
{
    json_t *doc = summary_json(a, p, old, new_), *list = json_array();
    for (int i = 0; doc && list && i < p->n; i++)
        if (json_array_append_new(list, pair_json(&p->pairs[i]))) json_decref(list), list = NULL;
    char *text = doc && list && !gb_json_set(doc, "pairs", list) ? gb_json_dump(doc, true) : NULL;
    if (!doc) json_decref(list);
    json_decref(doc);
    if (!text) return fprintf(stderr, "%s compare: out of memory\n", a->prog), 2;
    printf("%s\n", text);
    free(text);
    return 0;
}

/* ---- the run ---------------------------------------------------------------------- */

static int compare(const compare_args *a)
{
    gb_sample_file old = {0}, new_ = {0};
    pairing p = {0};
    gb_err err = {0};
    int status = 2;
    if (gb_sample_file_load(a->old_path, a->all, &old, &err) ||
        gb_sample_file_load(a->new_path, a->all, &new_, &err) ||
        pair_up(a, &old, &new_, &p, &err)) {
        fprintf(stderr, "%s compare: %s\n", a->prog, err.msg);
        goto cleanup;
    }
    status = a->json ? print_json(a, &p, &old, &new_) : (print_table(a, &p), 0);
    if (status == 0 && (p.counts[GB_VERDICT_SLOWER] || newly_failed(&p))) status = 1;
cleanup:
    pairing_free(&p);
    gb_sample_file_free(&old);
    gb_sample_file_free(&new_);
    return status;
}

int gb_cli_compare(int argc, char **argv)
{
    compare_args a = {.prog = argv[0], .opts = gb_compare_opts_default()};
    int status = parse_args(argc, argv, &a);
    if (status < 0) status = compare(&a);
    if (a.has_filter) regfree(&a.filter);
    return status;
}
