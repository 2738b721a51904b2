/*
 * gpubench repro: the figures of report/repro.h on runs built in memory, whose
 * answers are worked out by hand (winner flips, the spread of the best, the regret,
 * the baseline's ratio, compare's false alarms), then the command end to end on
 * run files the JSON output writes from such runs: the table, --json, the goals'
 * exit status 1, and exit status 2 for too few, unreadable or foreign files. The
 * tool comes from GB_BINARY_DIR/cli.
 */
#include "scratch.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "base/json.h"
#include "report/output.h"
#include "report/repro.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#define N_SAMPLES 20
#define KEY       "M=1024"
#define SHAPE     "gemm_f32/" KEY

/* ---- runs in memory -------------------------------------------------------------- */

static char *copy_text(const char *s)
{
    char *d = strdup(s);
    assert_non_null(d);
    return d;
}

static gb_fields one_field(const char *name, int64_t v)
{
    gb_fields f = {0};
    gb_value value = gb_value_int(v);
    assert_int_equal(gb_fields_set(&f, name, &value), GB_OK);
    return f;
}

/* N_SAMPLES samples spread evenly, ±0.1%, around ms: their median is ms. The same
 * ms always gives the same samples, so two runs of equal times compare as equal. */
static gb_measurement measured(double ms)
{
    gb_measurement m = {.mode = GB_MODE_COLD, .launches_per_sample = 1, .n_samples = N_SAMPLES};
    m.samples_ms = calloc(N_SAMPLES, sizeof *m.samples_ms);
    m.clock_mhz = calloc(N_SAMPLES, sizeof *m.clock_mhz);
    m.throttled = calloc(N_SAMPLES, sizeof *m.throttled);
    assert_true(m.samples_ms && m.clock_mhz && m.throttled);
    for (int k = 0; k < N_SAMPLES; k++)
        m.samples_ms[k] = ms * (1 + 0.002 * (k - (N_SAMPLES - 1) / 2.0) / N_SAMPLES);
    assert_int_equal(gb_measurement_summarise(&m), GB_OK);
    return m;
}

/* A shape M=1024 (or key_m) with no best yet. */
static gb_shape_result *new_shape(int64_t m)
{
    gb_shape_result *s = calloc(1, sizeof *s);
    assert_non_null(s);
    s->shape = one_field("M", m);
    char key[32];
    snprintf(key, sizeof key, "M=%lld", (long long)m);
    s->key_text = copy_text(key);
    return s;
}

/* A screening trial of BM=bm that ended ok in ms. */
static void trial(gb_shape_result *s, int64_t bm, double ms)
{
    s->trials = realloc(s->trials, (size_t)(s->n_trials + 1) * sizeof *s->trials);
    assert_non_null(s->trials);
    char text[32];
    snprintf(text, sizeof text, "BM=%lld", (long long)bm);
    s->trials[s->n_trials++] = (gb_trial_note){.config_text = copy_text(text),
                                               .config = one_field("BM", bm),
                                               .status = GB_TRIAL_OK,
                                               .reason = copy_text(""),
                                               .measurement = measured(ms)};
    s->n_status[GB_TRIAL_OK]++;
    s->n_timed++;
}

/* The best: BM=bm, raced at ms. */
static void best(gb_shape_result *s, int64_t bm, double ms)
{
    s->has_best = true;
    s->best_config = one_field("BM", bm);
    s->best_measurement = measured(ms);
    s->best = s->best_measurement.stats;
    s->n_leaders = 2;
}

static void baseline(gb_shape_result *s, double ms)
{
    s->has_baseline = true;
    s->baseline = measured(ms);
}

static void context(gb_run_context *c)
{
    *c = (gb_run_context){.schema_version = GB_REPORT_SCHEMA_VERSION,
                          .engine_version = copy_text("0.1.0"),
                          .date = copy_text("2026-11-24T12:00:00+00:00"),
                          .host_name = copy_text("bench-host"),
                          .executable = copy_text("gpubench-tune"),
                          .command_line = copy_text("gpubench-tune gemm.lua --json run.json"),
                          .script = copy_text("gemm.lua"),
                          .num_cpus = 2,
                          .nvrtc_version = "13.0",
                          .arch = "sm_90a"};
}

/* Appends a gemm_f32 entry holding s to run. */
static void add(gb_report *run, gb_shape_result *s)
{
    if (!run->context.schema_version) context(&run->context);
    run->entries = realloc(run->entries, (size_t)(run->n_entries + 1) * sizeof *run->entries);
    assert_non_null(run->entries);
    run->entries[run->n_entries++] =
        (gb_report_entry){.kernel = copy_text("gemm_f32"), .result = s};
}

/* A run of one shape: its best BM=bm at best_ms, and a trial of each of the
 * n_trials configurations BM=trial_bm[i] at trial_ms[i]. */
static void one_shape_run(gb_report *run, int64_t bm, double best_ms, int n_trials,
                          const int64_t *trial_bm, const double *trial_ms)
{
    gb_shape_result *s = new_shape(1024);
    for (int i = 0; i < n_trials; i++)
        trial(s, trial_bm[i], trial_ms[i]);
    best(s, bm, best_ms);
    add(run, s);
}

static void free_runs(gb_report *runs, int n)
{
    for (int i = 0; i < n; i++)
        gb_report_free(&runs[i]);
}

static void compute(const gb_report *runs, int n, gb_repro *out)
{
    gb_err err;
    if (gb_repro_compute(runs, n, NULL, out, &err)) fail_msg("%s", err.msg);
}

/* ---- the figures ------------------------------------------------------------------ */

static void winner_flips_are_counted_against_the_modal_winner(void **state)
{
    (void)state;
    gb_report runs[4] = {0};
    static const int64_t winners[] = {64, 64, 128, 64};
    for (int i = 0; i < 4; i++)
        one_shape_run(&runs[i], winners[i], 1.0, 0, NULL, NULL);
    ((gb_shape_result *)runs[3].entries[0].result)->cached = true; /* counted, not dropped */
    gb_repro r;
    compute(runs, 4, &r);
    assert_int_equal(r.n_shapes, 1);
    const gb_repro_shape *s = &r.shapes[0];
    assert_string_equal(s->kernel, "gemm_f32");
    assert_string_equal(s->key_text, KEY);
    assert_int_equal(s->n_best, 4);
    assert_int_equal(s->n_cached, 1);
    assert_int_equal(s->n_winners, 2);
    assert_string_equal(s->winners[s->modal].config, "BM=64");
    assert_int_equal(s->winners[s->modal].n_runs, 3);
    assert_float_equal(s->flip_share, 0.25, 1e-12);
    assert_int_equal(s->winner_of[2], 1);
    assert_int_equal(r.n_flipped, 1);
    gb_repro_free(&r);
    free_runs(runs, 4);
}

static void a_tie_for_the_modal_winner_goes_to_the_first(void **state)
{
    (void)state;
    gb_report runs[4] = {0};
    static const int64_t winners[] = {128, 64, 64, 128};
    for (int i = 0; i < 4; i++)
        one_shape_run(&runs[i], winners[i], 1.0, 0, NULL, NULL);
    gb_repro r;
    compute(runs, 4, &r);
    assert_string_equal(r.shapes[0].winners[r.shapes[0].modal].config, "BM=128");
    assert_float_equal(r.shapes[0].flip_share, 0.5, 1e-12);
    gb_repro_free(&r);
    free_runs(runs, 4);
}

static void spread_is_max_less_min_over_min_of_the_best_medians(void **state)
{
    (void)state;
    gb_report runs[3] = {0};
    static const double ms[] = {1.00, 1.05, 1.02};
    for (int i = 0; i < 3; i++)
        one_shape_run(&runs[i], 64, ms[i], 0, NULL, NULL);
    gb_repro r;
    compute(runs, 3, &r);
    const gb_repro_shape *s = &r.shapes[0];
    assert_float_equal(s->best_min_ms, 1.00, 1e-9);
    assert_float_equal(s->best_max_ms, 1.05, 1e-9);
    assert_float_equal(s->spread, 0.05, 1e-9);
    assert_float_equal(r.spread_max, 0.05, 1e-9);
    assert_int_equal(s->n_winners, 1);
    assert_float_equal(s->flip_share, 0.0, 0);
    gb_repro_free(&r);
    free_runs(runs, 3);
}

/* Runs 0 and 1 choose BM=64 (raced 1.00 ms; screened 1.01) over BM=128 (screened
 * 1.10); run 2 screened BM=64 at 1.00 but raced BM=128 at a lucky 0.99 and chose
 * it. By the other runs, run 2's BM=128 takes median(1.10, 1.10) = 1.10 ms and
 * the fastest, BM=64, median(1.00, 1.00) = 1.00 ms (the races, not the 1.01
 * screenings): a regret of 10%. Runs 0 and 1 chose what the others find fastest:
 * 0. */
static void regret_judges_each_winner_by_the_other_runs(void **state)
{
    (void)state;
    gb_report runs[3] = {0};
    static const int64_t bms[] = {64, 128};
    static const double own[] = {1.01, 1.10}, other[] = {1.00, 1.00};
    one_shape_run(&runs[0], 64, 1.00, 2, bms, own);
    one_shape_run(&runs[1], 64, 1.00, 2, bms, own);
    one_shape_run(&runs[2], 128, 0.99, 2, bms, other);
    gb_repro r;
    compute(runs, 3, &r);
    const gb_repro_shape *s = &r.shapes[0];
    assert_float_equal(s->regret_of[0], 0.0, 1e-9);
    assert_float_equal(s->regret_of[1], 0.0, 1e-9);
    assert_float_equal(s->regret_of[2], 0.10, 1e-9);
    assert_int_equal(s->n_regret, 3);
    assert_float_equal(s->regret_max, 0.10, 1e-9);
    assert_float_equal(s->regret_median, 0.0, 1e-9);
    assert_float_equal(r.regret_max, 0.10, 1e-9);
    assert_string_equal(s->fastest, "BM=64");
    assert_float_equal(s->fastest_ms, 1.00, 1e-9);
    assert_int_equal(s->fastest_n_runs, 3);
    assert_int_equal(s->n_configs, 2);
    gb_repro_free(&r);
    free_runs(runs, 3);
}

/* Run 0's winner, BM=256, was timed by no other run: it has no regret. Runs 1 and
 * 2 chose BM=64 (1.10 ms); by the runs other than 1, the fastest is BM=256 at
 * 1.00 ms (run 0's race), so run 1's regret is 1.10 / 1.00 - 1 = 10%, and so is
 * run 2's. */
static void a_winner_no_other_run_timed_has_no_regret(void **state)
{
    (void)state;
    gb_report runs[3] = {0};
    static const int64_t bms[] = {128};
    static const double ms[] = {1.05};
    one_shape_run(&runs[0], 256, 1.00, 0, NULL, NULL);
    one_shape_run(&runs[1], 64, 1.10, 0, NULL, NULL);
    one_shape_run(&runs[2], 64, 1.10, 1, bms, ms);
    gb_repro r;
    compute(runs, 3, &r);
    const gb_repro_shape *s = &r.shapes[0];
    assert_true(isnan(s->regret_of[0]));
    assert_float_equal(s->regret_of[1], 0.10, 1e-9);
    assert_float_equal(s->regret_of[2], 0.10, 1e-9);
    assert_int_equal(s->n_regret, 2);
    assert_float_equal(s->regret_median, 0.10, 1e-9);
    assert_int_equal(s->n_configs, 3);
    gb_repro_free(&r);
    free_runs(runs, 3);
}

static void baseline_ratio_is_taken_run_by_run(void **state)
{
    (void)state;
    gb_report runs[3] = {0};
    for (int i = 0; i < 3; i++)
        one_shape_run(&runs[i], 64, 1.0, 0, NULL, NULL);
    baseline((gb_shape_result *)runs[0].entries[0].result, 2.0);
    baseline((gb_shape_result *)runs[1].entries[0].result, 2.1);
    gb_repro r; /* run 2 timed no baseline */
    compute(runs, 3, &r);
    const gb_repro_shape *s = &r.shapes[0];
    assert_int_equal(s->n_baseline, 2);
    assert_float_equal(s->speedup_min, 2.0, 1e-9);
    assert_float_equal(s->speedup_max, 2.1, 1e-9);
    assert_float_equal(s->speedup_spread, 0.05, 1e-9);
    gb_repro_free(&r);
    free_runs(runs, 3);
}

static void identical_runs_give_no_false_alarm(void **state)
{
    (void)state;
    gb_report runs[4] = {0};
    for (int i = 0; i < 4; i++)
        one_shape_run(&runs[i], 64, 1.0, 0, NULL, NULL);
    gb_repro r;
    compute(runs, 4, &r);
    assert_int_equal(r.n_run_pairs, 6);
    assert_int_equal(r.shapes[0].n_pairs, 6);
    assert_int_equal(r.shapes[0].n_alarms, 0);
    assert_int_equal(r.n_alarmed_pairs, 0);
    assert_float_equal(r.shapes[0].spread, 0.0, 1e-12);
    gb_repro_free(&r);
    free_runs(runs, 4);
}

/* Run 2's best is 10% slower: compare tells it from runs 0 and 1 (SLOWER as the
 * newer of the pair), and not 0 from 1. */
static void a_clear_shift_is_counted_as_a_false_alarm(void **state)
{
    (void)state;
    gb_report runs[3] = {0};
    static const double ms[] = {1.0, 1.0, 1.1};
    for (int i = 0; i < 3; i++)
        one_shape_run(&runs[i], 64, ms[i], 0, NULL, NULL);
    gb_repro r;
    compute(runs, 3, &r);
    const gb_repro_shape *s = &r.shapes[0];
    assert_int_equal(s->n_alarms, 2);
    assert_int_equal(s->alarms[0].old_run, 0);
    assert_int_equal(s->alarms[0].new_run, 2);
    assert_int_equal(s->alarms[0].verdict, GB_VERDICT_SLOWER);
    assert_float_equal(s->alarms[0].ratio, 1.1, 1e-9);
    assert_true(s->alarms[0].p_value < 0.05);
    assert_int_equal(s->alarms[1].old_run, 1);
    assert_int_equal(r.n_alarmed_pairs, 2);
    gb_repro_free(&r);
    free_runs(runs, 3);
}

/* Shapes are paired by kernel and key; a shape some runs lack counts where it is,
 * a second entry of a shape in one run is left out, and one run is too few. */
static void shapes_pair_by_kernel_and_key(void **state)
{
    (void)state;
    gb_report runs[2] = {0};
    one_shape_run(&runs[0], 64, 1.0, 0, NULL, NULL);
    one_shape_run(&runs[1], 64, 1.0, 0, NULL, NULL);
    one_shape_run(&runs[1], 128, 3.0, 0, NULL, NULL); /* the same shape again */
    gb_shape_result *other = new_shape(2048);         /* only in run 1, no best */
    add(&runs[1], other);
    gb_repro r;
    compute(runs, 2, &r);
    assert_int_equal(r.n_shapes, 2);
    assert_int_equal(r.shapes[0].n_present, 2);
    assert_int_equal(r.shapes[0].n_winners, 1);
    assert_float_equal(r.shapes[0].spread, 0.0, 1e-12);
    assert_string_equal(r.shapes[1].key_text, "M=2048");
    assert_int_equal(r.shapes[1].n_present, 1);
    assert_int_equal(r.shapes[1].n_best, 0);
    assert_int_equal(r.shapes[1].modal, -1);
    assert_true(isnan(r.shapes[1].spread));
    gb_repro_free(&r);
    gb_err err;
    assert_int_equal(gb_repro_compute(runs, 1, NULL, &r, &err), GB_EINVAL);
    assert_int_equal(r.n_shapes, 0);
    free_runs(runs, 2);
}

/* ---- the command -------------------------------------------------------------------- */

typedef scratch_command fixture;

static int setup(void **state)
{
    *state = scratch_command_new("repro");
    return *state ? 0 : -1;
}

static int teardown(void **state)
{
    scratch_command_free(*state);
    return 0;
}

/* Saves run as dir/name through the JSON output, as gpubench-tune --json would. */
static void save(fixture *f, const char *name, gb_report *run)
{
    char path[256];
    gb_output *o = NULL;
    gb_err err;
    snprintf(path, sizeof path, "%s/%s", f->dir, name);
    if (gb_output_json(path, &o, &err) || gb_output_render(o, run, &err)) fail_msg("%s", err.msg);
    gb_output_destroy(o);
    gb_report_free(run);
}

/* run-1.json .. run-3.json: BM=64 wins runs 1 and 2 (1.00 ms, BM=128 screened at
 * 1.10), BM=128 wins run 3 at 1.10 ms (BM=64 screened there at 1.00): a flip, a
 * 10% spread, a 10% regret and two false alarms. A baseline at 2 ms in each. */
static void write_runs(fixture *f)
{
    static const int64_t bms[] = {64, 128};
    static const double ms[] = {1.00, 1.10};
    for (int i = 0; i < 3; i++) {
        gb_report run = {0};
        char name[32];
        one_shape_run(&run, i < 2 ? 64 : 128, i < 2 ? 1.00 : 1.10, 2, bms, ms);
        baseline((gb_shape_result *)run.entries[0].result, 2.0);
        snprintf(name, sizeof name, "run-%d.json", i + 1);
        save(f, name, &run);
    }
}

/* `gpubench repro ARGS` in the fixture's folder; status and output land in f. */
static int repro(fixture *f, const char *args)
{
    return scratch_command_run(f, "%s/cli/gpubench repro %s", getenv("GB_BINARY_DIR"), args);
}

static void expect(fixture *f, int status, const char *in_out, const char *in_err)
{
    if (f->status != status || (in_out && !strstr(f->out, in_out)) ||
        (in_err && !strstr(f->err, in_err)))
        fail_msg("exit status %d (wanted %d)\nstdout (wanted '%s'): %s\nstderr (wanted '%s'): %s",
                 f->status, status, in_out ? in_out : "", f->out, in_err ? in_err : "", f->err);
}

static void the_table_has_a_row_per_shape_and_a_summary(void **state)
{
    fixture *f = *state;
    write_runs(f);
    repro(f, "run-1.json run-2.json run-3.json");
    expect(f, 0,
           "repro: 3 runs, 1 shape(s): winner changed in 1, spread max 10.00%, regret "
           "worst 10.00% (median 0.00%), false alarms in 2 of 3 run pairs (66.7%)",
           NULL);
    const char *row = strstr(f->out, "\n" SHAPE " ");
    assert_non_null(row);
    assert_non_null(strstr(row, "3/3"));
    assert_non_null(strstr(row, "33.33%"));
    assert_non_null(strstr(row, "1.818x-2.000x"));
    assert_non_null(strstr(f->out, "2 of 3 runs: BM=64 (modal)"));
    assert_non_null(strstr(f->out, SHAPE ": run-1.json vs run-3.json: SLOWER +10.00%"));
    assert_null(strstr(f->out, "goal"));
}

static void json_output_holds_the_figures(void **state)
{
    fixture *f = *state;
    json_t *doc = NULL;
    gb_err err;
    write_runs(f);
    repro(f, "--json run-1.json run-2.json run-3.json");
    expect(f, 0, NULL, NULL);
    if (gb_json_parse(f->out, strlen(f->out), &doc, &err)) fail_msg("%s\n%s", err.msg, f->out);
    const json_t *summary = gb_json_get(doc, "summary");
    assert_int_equal((int)gb_json_num(gb_json_get(summary, "alarmed_pairs"), -1), 2);
    assert_float_equal(gb_json_num(gb_json_get(summary, "spread_max_pct"), 0), 10.0, 1e-6);
    const json_t *s = gb_json_at(gb_json_get(doc, "shapes"), 0);
    assert_string_equal(gb_json_str(gb_json_get(s, "name"), ""), SHAPE);
    assert_string_equal(gb_json_str(gb_json_get(s, "modal_winner"), ""), "BM=64");
    assert_string_equal(gb_json_str(gb_json_at(gb_json_get(s, "run_winners"), 2), ""), "BM=128");
    assert_float_equal(gb_json_num(gb_json_at(gb_json_get(s, "regret_pct"), 2), 0), 10.0, 1e-6);
    assert_float_equal(gb_json_num(gb_json_get(s, "regret_max_pct"), 0), 10.0, 1e-6);
    const json_t *alarm = gb_json_at(gb_json_get(s, "alarms"), 0);
    assert_string_equal(gb_json_str(gb_json_get(alarm, "new"), ""), "run-3.json");
    assert_true(gb_json_bool(gb_json_get(gb_json_get(doc, "goals"), "met"), false));
    json_decref(doc);
}

static void goals_missed_exit_1_and_goals_met_exit_0(void **state)
{
    fixture *f = *state;
    write_runs(f);
    repro(f, "--max-spread 5 run-1.json run-2.json run-3.json");
    expect(f, 1, "goal --max-spread 5%: missed\n  " SHAPE ": 10.00% (above the goal)", NULL);
    repro(f, "--max-regret 9.5 run-1.json run-2.json run-3.json");
    expect(f, 1, "goal --max-regret 9.5%: missed", NULL);
    repro(f, "--max-spread 11 --max-regret 11 run-1.json run-2.json");
    expect(f, 0, "goal --max-spread 11%: met\ngoal --max-regret 11%: met", NULL);
    repro(f, "--max-spread 0 run-1.json run-2.json"); /* identical runs: no spread */
    expect(f, 0, "false alarms in 0 of 1 run pairs (0.0%)", NULL);
}

/* A run that holds the shape but found no best for it: the figures go on over the
 * others, but a goal cannot pass on the shape. */
static void a_shape_without_a_best_in_some_run_misses_every_goal(void **state)
{
    fixture *f = *state;
    gb_report failed = {0};
    write_runs(f);
    add(&failed, new_shape(1024));
    save(f, "failed.json", &failed);
    repro(f, "run-1.json run-2.json failed.json");
    expect(f, 0, "\n" SHAPE "   2/3 ", NULL);
    repro(f, "--max-spread 50 --max-regret 50 run-1.json run-2.json failed.json");
    expect(f, 1, "goal --max-spread 50%: missed\n  " SHAPE ": 0.00% (no best in some runs)", NULL);
    expect(f, 1, "goal --max-regret 50%: missed\n  " SHAPE ": 0.00% (no best in some runs)", NULL);
}

static void bad_input_exits_2_naming_the_file(void **state)
{
    fixture *f = *state;
    write_runs(f);
    repro(f, "run-1.json");
    expect(f, 2, NULL, "at least two run files are needed");
    repro(f, "run-1.json absent.json");
    expect(f, 2, NULL, "absent.json");
    scratch_write(f->dir, "google.json",
                  "{\"context\": {\"library_build_type\": \"release\"}, \"benchmarks\": "
                  "[{\"name\": \"BM_x\", \"real_time\": 1, \"time_unit\": \"ns\"}]}");
    repro(f, "run-1.json google.json");
    expect(f, 2, NULL, "google.json: context");
    scratch_write(f->dir, "text.json", "not json");
    repro(f, "text.json run-1.json");
    expect(f, 2, NULL, "text.json");
    gb_report compiled = {0};
    one_shape_run(&compiled, 64, 1.0, 0, NULL, NULL);
    compiled.context.compile_only = true;
    save(f, "compiled.json", &compiled);
    repro(f, "run-1.json compiled.json");
    expect(f, 2, NULL, "compiled.json: a --compile-only run");
    repro(f, "--max-spread x run-1.json run-2.json");
    expect(f, 2, NULL, "--max-spread needs a percentage");
    repro(f, "--help");
    expect(f, 0, "exit status: 0 done, goals met; 1 a goal missed", NULL);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(winner_flips_are_counted_against_the_modal_winner),
        cmocka_unit_test(a_tie_for_the_modal_winner_goes_to_the_first),
        cmocka_unit_test(spread_is_max_less_min_over_min_of_the_best_medians),
        cmocka_unit_test(regret_judges_each_winner_by_the_other_runs),
        cmocka_unit_test(a_winner_no_other_run_timed_has_no_regret),
        cmocka_unit_test(baseline_ratio_is_taken_run_by_run),
        cmocka_unit_test(identical_runs_give_no_false_alarm),
        cmocka_unit_test(a_clear_shift_is_counted_as_a_false_alarm),
        cmocka_unit_test(shapes_pair_by_kernel_and_key),
        T(the_table_has_a_row_per_shape_and_a_summary),
        T(json_output_holds_the_figures),
        T(goals_missed_exit_1_and_goals_met_exit_0),
        T(a_shape_without_a_best_in_some_run_misses_every_goal),
        T(bad_input_exits_2_naming_the_file),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
