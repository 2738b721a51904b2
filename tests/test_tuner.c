/* The tuning loop, run against a fake GPU backend: which variant wins, what is
 * recorded, what a rerun reuses, and how failures of every kind are counted.
 * Compiles are real (NVRTC); only the GPU is faked (tuner_fixture.h). Sharing the
 * GPU (contention, the lease, two tuners on one cache) is test_tuner_share.c. */
#include "base/clock.h"
#include "cache/cache.h"
#include "cache/inspect.h"
#include "cache/record.h"
#include "exec/exec.h"
#include "exec/interrupt.h"
#include "exec/lease.h"
#include "exec/worker.h"
#include "report/table.h"
#include "tuner/tune.h"

#include "tuner_fixture.h"

#include "cache/inspect.h"
#include "exec/interrupt.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- tests -------------------------------------------------------------- */

static void test_fastest_correct_variant_wins_and_ties_go_to_the_earlier_config(void **state)
{
    fixture *f = *state;
    assert_int_equal(tune(f, 1), GB_OK);
    const gb_shape_result *s = &f->result.shapes[0];
    assert_true(s->has_best);
    assert_int_equal(gb_fields_get(&s->best_config, "V")->i, 2);
    assert_float_equal(s->best.median, 1.0, 1e-9);
    assert_float_equal(s->flops, 2e9, 0);
}

static void test_every_status_is_counted(void **state)
{
    fixture *f = *state;
    f->fake.fault_v = 6;
    assert_int_equal(tune(f, 1), GB_OK);
    const gb_shape_result *s = &f->result.shapes[0];
    assert_int_equal(s->n_configs, 8);
    assert_int_equal(s->n_rejected, 1);                       /* V=5 */
    assert_int_equal(s->n_status[GB_TRIAL_COMPILE_ERROR], 1); /* V=7 */
    assert_int_equal(s->n_status[GB_TRIAL_WRONG], 1);         /* V=3 */
    assert_int_equal(s->n_status[GB_TRIAL_LAUNCH_ERROR], 1);  /* V=4 */
    assert_int_equal(s->n_status[GB_TRIAL_CRASHED], 1);       /* V=6 */
    assert_int_equal(s->n_status[GB_TRIAL_OK], 3);            /* V=1, 2, 8 */
    assert_int_equal(s->n_compiled, 6);
    assert_int_equal(s->n_timed, 3);
}

static void test_every_trial_is_recorded_with_its_status(void **state)
{
    fixture *f = *state;
    assert_int_equal(tune(f, 1), GB_OK);
    assert_int_equal(count(f, GB_DB_TRIALS), 7); /* all but the rejected V=5 */
    assert_int_equal(count(f, GB_DB_BEST), 1);
    gb_record_id id = {.kernel = "fake_kernel",
                       .kernel_fp = f->result.kernel_fp,
                       .device = f->result.device,
                       .shape = f->shapes[0]};
    gb_fields config = {0};
    gb_value v = gb_value_int(7);
    gb_fields_set(&config, "V", &v);
    gb_key key;
    json_t *json = NULL;
    gb_trial_record rec;
    assert_int_equal(gb_record_trial_key(&id, &config, &key), GB_OK);
    assert_int_equal(gb_cache_get_json(f->cache, GB_DB_TRIALS, &key, &json, NULL), GB_OK);
    assert_int_equal(gb_trial_record_from_json(json, &rec, NULL), GB_OK);
    assert_int_equal(rec.status, GB_TRIAL_COMPILE_ERROR);
    assert_non_null(strstr(rec.reason, "fake.cu:3: error"));
    assert_non_null(strstr(rec.log, "seven does not compile")); /* NVRTC's whole log */
    gb_trial_record_free(&rec);
    json_decref(json);
    v = gb_value_int(2); /* an ok trial keeps its clock */
    gb_fields_set(&config, "V", &v);
    assert_int_equal(gb_record_trial_key(&id, &config, &key), GB_OK);
    assert_int_equal(gb_cache_get_json(f->cache, GB_DB_TRIALS, &key, &json, NULL), GB_OK);
    assert_int_equal(gb_trial_record_from_json(json, &rec, NULL), GB_OK);
    assert_int_equal(rec.status, GB_TRIAL_OK);
    assert_float_equal(rec.clock_mhz, 1980, 0);
    assert_string_equal(rec.mode, "cold");
    assert_int_equal(gb_json_len(gb_json_get(json, "samples_ms")), 11);
    assert_int_equal(rec.n_samples, 11); /* read back, owned by the record */
    assert_true(rec.samples_ms[10] > rec.samples_ms[0]);
    gb_trial_record_free(&rec);
    json_decref(json);
    gb_fields_free(&config);
}

static void test_second_run_reports_from_the_cache_without_trials(void **state)
{
    fixture *f = *state;
    assert_int_equal(tune(f, 2), GB_OK);
    int trials = f->fake.trials;
    assert_int_equal(tune(f, 2), GB_OK);
    assert_int_equal(f->fake.trials, trials);
    for (int i = 0; i < 2; i++) {
        assert_true(f->result.shapes[i].cached);
        assert_int_equal(gb_fields_get(&f->result.shapes[i].best_config, "V")->i, 2);
    }
}

static void test_force_tunes_again(void **state)
{
    fixture *f = *state;
    assert_int_equal(tune(f, 1), GB_OK);
    int trials = f->fake.trials;
    f->opts.force = true;
    assert_int_equal(tune(f, 1), GB_OK);
    assert_int_equal(f->fake.trials, 2 * trials);
    assert_false(f->result.shapes[0].cached);
}

static void test_a_changed_space_is_tuned_again(void **state)
{
    fixture *f = *state;
    assert_int_equal(tune(f, 1), GB_OK);
    int trials = f->fake.trials;
    static const int W[] = {0, 1};
    add_param(&f->kernel.space, "W", W, 2);
    free(f->kernel.entry);
    f->kernel.entry = strdup("k<${V} + ${W}>");
    assert_int_equal(tune(f, 1), GB_OK);
    assert_true(f->fake.trials > trials);
    assert_false(f->result.shapes[0].cached);
}

static void test_compiles_are_reused_from_the_cache(void **state)
{
    fixture *f = *state;
    f->opts.compile_only = true;
    f->opts.exec = NULL;
    assert_int_equal(tune(f, 2), GB_OK);
    /* One row per compile, not per shape: seven variants and the reference. */
    assert_int_equal(f->result.n_compiles, 8);
    assert_int_equal(f->result.compiles[0].config.n, 0); /* the reference, first */
    for (int i = 0; i < f->result.n_compiles; i++)
        assert_false(f->result.compiles[i].cached);
    assert_int_equal(tune(f, 1), GB_OK);
    int errors = 0;
    for (int i = 0; i < f->result.n_compiles; i++) {
        errors += f->result.compiles[i].error != NULL;
        if (!f->result.compiles[i].error)
            assert_true(f->result.compiles[i].cached);
        else
            assert_non_null(strstr(f->result.compiles[i].error, "seven does not compile"));
    }
    assert_int_equal(errors, 1); /* failed compiles are not cached: they are retried */
    assert_int_equal(f->fake.trials, 0);
}

static void test_a_crash_restarts_the_backend_and_replays_the_problem(void **state)
{
    fixture *f = *state;
    f->fake.fault_v = 6;
    assert_int_equal(tune(f, 1), GB_OK);
    assert_int_equal(f->fake.opens, 2);
    assert_int_equal(f->fake.closes, 1);
    assert_int_equal(f->fake.problems, 2);
    assert_int_equal(f->fake.references, 2);
    assert_int_equal(f->fake.last_seed, 7);
    assert_int_equal(gb_fields_get(&f->result.shapes[0].best_config, "V")->i, 2);
}

static void test_a_failing_reference_fails_the_shape_not_the_run(void **state)
{
    fixture *f = *state;
    f->fake.reference_faults = true;
    assert_int_equal(tune(f, 2), GB_OK);
    for (int i = 0; i < 2; i++) {
        assert_false(f->result.shapes[i].has_best);
        assert_non_null(strstr(f->result.shapes[i].failure, "reference fake_ref"));
    }
    assert_int_equal(f->fake.trials, 0);
}

static void test_budget_limits_the_trials(void **state)
{
    fixture *f = *state;
    gb_tune_request req = {.shapes = f->shapes, .n_shapes = 1, .max_evals = 3};
    assert_int_equal(gb_tune(&f->opts, &f->kernel, &req, &f->result, &f->err), GB_OK);
    assert_int_equal(f->fake.trials, 3); /* V = 1, 2, 3 (V = 5 is rejected, not counted) */
    assert_int_equal(gb_fields_get(&f->result.shapes[0].best_config, "V")->i, 2);
}

static void test_a_script_error_in_a_hook_stops_the_run(void **state)
{
    fixture *f = *state;
    f->hooks.args_fail = true;
    assert_int_equal(tune(f, 2), GB_ESCRIPT);
    assert_non_null(
        strstr(f->err.msg, "test.lua:7: tuning fake_kernel: attempt to index a nil value"));
    assert_int_equal(f->fake.trials, 0);
}

static void test_no_correct_variant_leaves_the_shape_without_a_best(void **state)
{
    fixture *f = *state;
    for (int v = 0; v < 16; v++)
        f->fake.status[v] = GB_TRIAL_WRONG;
    assert_int_equal(tune(f, 1), GB_OK);
    assert_false(f->result.shapes[0].has_best);
    assert_int_equal(count(f, GB_DB_BEST), 0);
}

static void test_check_defaults_to_the_output_tensors_with_dtype_tolerances(void **state)
{
    fixture *f = *state;
    assert_int_equal(tune(f, 1), GB_OK);
    assert_int_equal(f->fake.last_check.n_outputs, 1);
    assert_int_equal(f->fake.last_check.outputs[0], 0);
    assert_float_equal(f->fake.last_check.rtol, 1e-5, 0); /* f32 */
    assert_float_equal(f->fake.last_check.atol, 1e-6, 0);
}

static void test_check_outputs_must_name_tensors(void **state)
{
    fixture *f = *state;
    f->kernel.check = (gb_check_spec){.n_outputs = 1, .outputs = {1}, .rtol = -1, .atol = -1};
    assert_int_equal(tune(f, 1), GB_ESCRIPT); /* argument 2 is a scalar */
    assert_non_null(strstr(f->err.msg, "check.outputs names argument 2"));
}

static void test_a_rerun_resumes_and_skips_finished_trials(void **state)
{
    fixture *f = *state;
    gb_tune_request req = {.shapes = f->shapes, .n_shapes = 1, .max_evals = 3};
    assert_int_equal(gb_tune(&f->opts, &f->kernel, &req, &f->result, &f->err), GB_OK);
    assert_int_equal(count_trials(f), 3); /* V = 1, 2, 3 */
    memset(f->fake.ran, 0, sizeof f->fake.ran);
    assert_int_equal(tune(f, 1), GB_OK); /* no budget: the rest of the space */
    assert_int_equal(f->fake.ran[1] + f->fake.ran[2] + f->fake.ran[3], 0);
    assert_int_equal(f->fake.ran[4] + f->fake.ran[6] + f->fake.ran[8], 3);
    const gb_shape_result *s = &f->result.shapes[0];
    assert_int_equal(s->n_resumed, 3);
    assert_int_equal(s->n_status[GB_TRIAL_WRONG], 1); /* V=3, from the first run */
    assert_int_equal(gb_fields_get(&s->best_config, "V")->i, 2);
}

/* A value added to a parameter's list makes a new space (no cached best answers it),
 * but the configurations measured before are resumed from their trial records:
 * only the new ones reach the GPU. */
static void test_a_value_added_to_a_parameter_measures_only_the_new_configs(void **state)
{
    fixture *f = *state;
    assert_int_equal(tune(f, 1), GB_OK);
    size_t recorded = count(f, GB_DB_TRIALS); /* V=7's compile error too */
    memset(f->fake.ran, 0, sizeof f->fake.ran);
    static const int V[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    gb_space_free(&f->kernel.space);
    add_param(&f->kernel.space, "V", V, 9);
    assert_int_equal(tune(f, 1), GB_OK);
    const gb_shape_result *s = &f->result.shapes[0];
    assert_false(s->cached);
    assert_int_equal(count_trials(f), 1);
    assert_int_equal(f->fake.ran[9], 1);
    assert_int_equal(s->n_resumed, recorded);
    assert_int_equal(gb_fields_get(&s->best_config, "V")->i, 2);
}

/* Runs the tuner in a child process that hangs in the trial of V=4 and is then
 * killed, as kill -9 or a power cut would end it. */
static void kill_tuner_during_v4(fixture *f)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        /* The child opens its own handles: LMDB's must not cross a fork. */
        gb_cache *cache = NULL;
        gb_exec *exec = NULL;
        f->fake.hang_v = 4;
        if (gb_cache_open(f->dir, 0, &cache, NULL) ||
            gb_exec_create(&fake_ops, &f->fake, &exec, NULL))
            _exit(1);
        f->opts.cache = cache;
        f->opts.exec = exec;
        gb_tune_result result;
        gb_tune_request req = {.shapes = f->shapes, .n_shapes = 1};
        gb_tune(&f->opts, &f->kernel, &req, &result, NULL);
        _exit(2); /* not reached: V=4 hangs */
    }
    size_t n = 0;
    for (int i = 0; i < 3000 && n < 4; i++) { /* V=1..3 done and V=4's write-ahead record */
        usleep(10000);
        gb_cache_count(f->cache, GB_DB_TRIALS, &n, NULL);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    assert_int_equal(n, 4);
}

static void
test_a_trial_that_was_running_when_the_tuner_died_is_crashed_and_not_retried(void **state)
{
    fixture *f = *state;
    kill_tuner_during_v4(f);
    assert_int_equal(tune(f, 1), GB_OK);
    assert_int_equal(f->fake.ran[4], 0);
    assert_int_equal(f->fake.ran[1] + f->fake.ran[2] + f->fake.ran[3], 0); /* resumed */
    const gb_shape_result *s = &f->result.shapes[0];
    assert_int_equal(s->n_status[GB_TRIAL_CRASHED], 1);
    bool found = false;
    for (int i = 0; i < s->n_trials; i++)
        found |= !strcmp(s->trials[i].config_text, "V=4") &&
                 strstr(s->trials[i].reason, "the tuner stopped while this trial was running");
    assert_true(found);
    assert_int_equal(gb_fields_get(&s->best_config, "V")->i, 2);
}

static void test_retry_crashed_runs_an_interrupted_trial_again(void **state)
{
    fixture *f = *state;
    kill_tuner_during_v4(f);
    f->opts.retry_crashed = true;
    assert_int_equal(tune(f, 1), GB_OK);
    assert_int_equal(f->fake.ran[4], 1);
    assert_int_equal(f->result.shapes[0].n_status[GB_TRIAL_CRASHED], 0);
}

static void test_an_interrupt_keeps_finished_trials_and_stores_no_best(void **state)
{
    fixture *f = *state;
    f->fake.interrupt_v = 2;
    assert_int_equal(tune(f, 2), GB_EINTR);
    gb_interrupt_clear();
    assert_int_equal(f->result.n_shapes, 1);
    assert_true(f->result.shapes[0].interrupted);
    assert_int_equal(count(f, GB_DB_TRIALS), 2); /* V=1 and V=2 finished */
    assert_int_equal(count(f, GB_DB_BEST), 0);
    f->fake.interrupt_v = 0;
    memset(f->fake.ran, 0, sizeof f->fake.ran);
    assert_int_equal(tune(f, 2), GB_OK);
    assert_int_equal(f->result.shapes[0].n_resumed, 2);
    assert_int_equal(f->fake.ran[1] + f->fake.ran[2], 2); /* the second shape's only */
}

static void test_the_watchdog_deadline_follows_the_shape_s_trials(void **state)
{
    fixture *f = *state;
    f->opts.trial_timeout_s = 30;
    assert_int_equal(tune(f, 1), GB_OK);
    assert_float_equal(f->fake.timeouts[1], 30, 0); /* nothing known yet: the cap */
    assert_float_equal(f->fake.timeouts[8], 5, 0);  /* fast trials so far: the floor */
    f->opts.trial_timeout_s = 2;
    f->opts.force = true;
    assert_int_equal(tune(f, 1), GB_OK);
    assert_float_equal(f->fake.timeouts[8], 2, 0); /* never above the cap */
}

static void test_a_trial_in_flight_in_a_live_tuner_is_not_taken_for_a_crash(void **state)
{
    fixture *f = *state;
    assert_int_equal(tune(f, 1), GB_OK);
    /* Rewrite V=2's record as in flight in a tuner that is alive: our parent. */
    gb_record_id id = {.kernel = "fake_kernel",
                       .kernel_fp = f->result.kernel_fp,
                       .device = f->result.device,
                       .shape = f->shapes[0]};
    gb_fields config = {0};
    gb_value v = gb_value_int(2);
    gb_fields_set(&config, "V", &v);
    gb_trial_record rec = {.id = id,
                           .config = config,
                           .in_flight = true,
                           .status = GB_TRIAL_CRASHED,
                           .reason = "in flight",
                           .owner_pid = getppid()};
    FILE *boot = fopen("/proc/sys/kernel/random/boot_id", "r");
    assert_non_null(fgets(rec.owner_boot, sizeof rec.owner_boot, boot));
    fclose(boot);
    rec.owner_boot[strcspn(rec.owner_boot, "\n")] = '\0';
    json_t *json = gb_trial_record_to_json(&rec);
    gb_key key;
    assert_int_equal(gb_record_trial_key(&id, &config, &key), GB_OK);
    assert_int_equal(gb_cache_put_json(f->cache, GB_DB_TRIALS, &key, json, NULL), GB_OK);
    json_decref(json);
    gb_fields_free(&config);
    assert_int_equal(gb_record_best_key(&id, &key), GB_OK); /* tune the shape again */
    assert_int_equal(gb_cache_del(f->cache, GB_DB_BEST, &key, NULL), GB_OK);
    memset(f->fake.ran, 0, sizeof f->fake.ran);
    assert_int_equal(tune(f, 1), GB_OK);
    assert_int_equal(f->fake.ran[2], 1); /* run, not reported as crashed */
    assert_int_equal(f->fake.ran[1], 0); /* resumed */
}

static void test_the_leaders_race_and_the_race_decides(void **state)
{
    fixture *f = *state;
    f->fake.race_ms[8] = 0.5; /* screened as fast as V=2; raced, faster */
    assert_int_equal(tune(f, 1), GB_OK);
    const gb_shape_result *s = &f->result.shapes[0];
    assert_int_equal(f->fake.races, 1);
    assert_int_equal(s->n_leaders, 2); /* V=2 and V=8; V=1 (3 ms) is out of the margin */
    assert_int_equal(gb_fields_get(&s->best_config, "V")->i, 8);
    assert_float_equal(s->best.median, 0.5, 1e-3);
    assert_int_equal(s->n_tie, 0);
}

static void test_overlapping_intervals_are_a_tie_won_by_the_canonical_order(void **state)
{
    fixture *f = *state;
    assert_int_equal(tune(f, 1), GB_OK); /* V=2 and V=8 race to the same time */
    const gb_shape_result *s = &f->result.shapes[0];
    assert_int_equal(s->n_tie, 2);
    assert_string_equal(s->tie[0], "V=2");
    assert_string_equal(s->tie[1], "V=8");
    assert_int_equal(gb_fields_get(&s->best_config, "V")->i, 2);
}

static void test_a_failed_race_keeps_the_screening_best(void **state)
{
    fixture *f = *state;
    f->fake.race_fails = true;
    assert_int_equal(tune(f, 1), GB_OK);
    const gb_shape_result *s = &f->result.shapes[0];
    assert_non_null(strstr(s->race_failure, "killed by signal 9"));
    assert_int_equal(gb_fields_get(&s->best_config, "V")->i, 2);
}

/* The reference's launch puts 1 in grid[0]: the fake times it as V=1. */
static void test_the_baseline_races_with_the_leaders_and_is_never_crowned(void **state)
{
    fixture *f = *state;
    f->baseline = true;
    f->fake.race_ms[1] = 0.25; /* the reference, faster than every leader */
    assert_int_equal(tune(f, 1), GB_OK);
    const gb_shape_result *s = &f->result.shapes[0];
    assert_int_equal(f->fake.races, 1);
    assert_int_equal(f->fake.raced, 3); /* V=2, V=8 and the reference */
    assert_int_equal(s->n_leaders, 2);
    assert_int_equal(gb_fields_get(&s->best_config, "V")->i, 2);
    assert_true(s->has_baseline);
    assert_float_equal(s->baseline.stats.median, 0.25, 1e-3);
    assert_int_equal(s->baseline.n_samples, 11); /* the race's samples, kept */
    assert_int_equal(f->fake.ran[1], 1);         /* V=1's screening; no timing of its own */
}

static void test_a_failed_race_times_the_baseline_alone(void **state)
{
    fixture *f = *state;
    f->baseline = true;
    f->fake.race_fails = true;
    assert_int_equal(tune(f, 1), GB_OK);
    const gb_shape_result *s = &f->result.shapes[0];
    assert_non_null(s->race_failure);
    assert_true(s->has_baseline);
    assert_float_equal(s->baseline.stats.median, 3.0, 1e-3); /* median_ms[1], timed alone */
    assert_int_equal(f->fake.ran[1], 2);
}

static void test_a_baseline_contended_in_both_races_is_left_out(void **state)
{
    fixture *f = *state;
    f->baseline = true;
    f->fake.contended_races = -1;
    assert_int_equal(tune(f, 1), GB_OK);
    const gb_shape_result *s = &f->result.shapes[0];
    assert_int_equal(f->fake.races, 2);
    assert_false(s->has_baseline);
    assert_true(s->baseline_contended);
    assert_int_equal(f->fake.ran[1], 1); /* not timed again alone */
}

static void test_the_best_record_keeps_the_race_s_samples_clock_and_tie(void **state)
{
    fixture *f = *state;
    assert_int_equal(tune(f, 1), GB_OK);
    gb_best_record rec;
    assert_int_equal(read_best_of(f, &rec, NULL), GB_OK);
    assert_int_equal(rec.n_samples, 11);
    assert_float_equal(rec.clock_mhz, 1980, 0);
    assert_string_equal(rec.mode, "cold");
    assert_int_equal(rec.n_tie, 2);
    assert_int_equal(rec.n_leaders, 2);
    gb_best_record_free(&rec);
    assert_int_equal(tune(f, 1), GB_OK); /* from the cache: the tie comes back too */
    assert_true(f->result.shapes[0].cached);
    assert_int_equal(f->result.shapes[0].n_tie, 2);
}

static void write_file(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

static void hex_of(const char *text, char out[33])
{
    gb_key key = gb_key_of_bytes(text, strlen(text));
    gb_key_hex(&key, out);
}

/* What `gpubench cache ls --stale` and `cache gc` rely on: a best lists the files of
 * its kernel's source closure with their hashes, a trial names its cubin, and a
 * cubin record says which NVRTC compiled it. */
static void test_records_name_their_source_files_and_cubins(void **state)
{
    fixture *f = *state;
    char source_path[128], header_path[128], source[1024], hex[33], *real = NULL;
    const char *header = "#define FAKE_COMMON 1\n";
    snprintf(source_path, sizeof source_path, "%s/fake.cu", f->dir);
    snprintf(header_path, sizeof header_path, "%s/fake_common.cuh", f->dir);
    snprintf(source, sizeof source, "#include \"fake_common.cuh\"\n%s", SOURCE);
    write_file(source_path, source);
    write_file(header_path, header);
    gb_kernel_def *k = &f->kernel;
    free(k->source);
    free(k->source_name);
    k->source = strdup(source);
    k->source_name = strdup(source_path);
    k->include_dirs = calloc(1, sizeof *k->include_dirs);
    k->include_dirs[0] = strdup(f->dir);
    k->n_include_dirs = 1;
    assert_int_equal(tune(f, 1), GB_OK);

    gb_record_id id = {.kernel = "fake_kernel",
                       .kernel_fp = f->result.kernel_fp,
                       .device = f->result.device,
                       .shape = f->shapes[0]};
    gb_key key;
    void *value;
    size_t len;
    gb_best_record best;
    assert_int_equal(gb_record_best_key(&id, &key), GB_OK);
    assert_int_equal(gb_cache_get(f->cache, GB_DB_BEST, &key, &value, &len, NULL), GB_OK);
    assert_int_equal(gb_cache_read_best(value, len, &best, NULL), GB_OK);
    free(value);
    assert_int_equal(best.n_sources, 2);
    assert_non_null(real = realpath(source_path, NULL));
    assert_string_equal(best.sources[0].path, real);
    hex_of(source, hex);
    assert_string_equal(best.sources[0].hash, hex);
    free(real);
    assert_non_null(real = realpath(header_path, NULL));
    assert_string_equal(best.sources[1].path, real);
    hex_of(header, hex);
    assert_string_equal(best.sources[1].hash, hex);
    free(real);
    gb_best_record_free(&best);

    gb_fields config = {0};
    gb_value v = gb_value_int(2);
    gb_trial_record trial;
    char *meta = NULL;
    void *cubin = NULL;
    char nvrtc[16], expect[40];
    gb_fields_set(&config, "V", &v);
    assert_int_equal(gb_record_trial_key(&id, &config, &key), GB_OK);
    assert_int_equal(gb_cache_get(f->cache, GB_DB_TRIALS, &key, &value, &len, NULL), GB_OK);
    assert_int_equal(gb_cache_read_trial(value, len, &trial, NULL), GB_OK);
    free(value);
    assert_int_equal(gb_key_from_hex(trial.cubin, &key), GB_OK);
    assert_int_equal(gb_cache_get_cubin(f->cache, &key, &meta, &cubin, &len, NULL), GB_OK);
    gb_nvrtc_version(nvrtc);
    snprintf(expect, sizeof expect, "\"nvrtc\":\"%s\"", nvrtc);
    assert_non_null(strstr(meta, expect));
    free(meta);
    free(cubin);
    gb_trial_record_free(&trial);
    gb_cache_gc_summary gc;
    assert_int_equal(gb_cache_gc(f->cache, nvrtc, true, false, &gc, NULL), GB_OK);
    assert_true(gb_cache_get_cubin(f->cache, &key, &meta, &cubin, &len, NULL) == GB_OK);
    free(meta);
    free(cubin);
    v = gb_value_int(7); /* did not compile: no cubin to name */
    gb_fields_set(&config, "V", &v);
    assert_int_equal(gb_record_trial_key(&id, &config, &key), GB_OK);
    assert_int_equal(gb_cache_get(f->cache, GB_DB_TRIALS, &key, &value, &len, NULL), GB_OK);
    assert_int_equal(gb_cache_read_trial(value, len, &trial, NULL), GB_OK);
    free(value);
    assert_string_equal(trial.cubin, "");
    gb_trial_record_free(&trial);
    gb_fields_free(&config);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_fastest_correct_variant_wins_and_ties_go_to_the_earlier_config, setup, teardown),
        cmocka_unit_test_setup_teardown(test_every_status_is_counted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_every_trial_is_recorded_with_its_status, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_second_run_reports_from_the_cache_without_trials,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_force_tunes_again, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_changed_space_is_tuned_again, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_a_value_added_to_a_parameter_measures_only_the_new_configs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compiles_are_reused_from_the_cache, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_crash_restarts_the_backend_and_replays_the_problem,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_failing_reference_fails_the_shape_not_the_run, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_budget_limits_the_trials, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_script_error_in_a_hook_stops_the_run, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_no_correct_variant_leaves_the_shape_without_a_best,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_check_defaults_to_the_output_tensors_with_dtype_tolerances, setup, teardown),
        cmocka_unit_test_setup_teardown(test_check_outputs_must_name_tensors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_rerun_resumes_and_skips_finished_trials, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            test_a_trial_that_was_running_when_the_tuner_died_is_crashed_and_not_retried, setup,
            teardown),
        cmocka_unit_test_setup_teardown(test_retry_crashed_runs_an_interrupted_trial_again, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_an_interrupt_keeps_finished_trials_and_stores_no_best,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_the_watchdog_deadline_follows_the_shape_s_trials,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_a_trial_in_flight_in_a_live_tuner_is_not_taken_for_a_crash, setup, teardown),
        cmocka_unit_test_setup_teardown(test_the_leaders_race_and_the_race_decides, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            test_overlapping_intervals_are_a_tie_won_by_the_canonical_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_failed_race_keeps_the_screening_best, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            test_the_baseline_races_with_the_leaders_and_is_never_crowned, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_failed_race_times_the_baseline_alone, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_baseline_contended_in_both_races_is_left_out, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_the_best_record_keeps_the_race_s_samples_clock_and_tie,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_records_name_their_source_files_and_cubins, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
