/* Sharing the GPU, run against the fake backend of tuner_fixture.h: a trial or a
 * race measured while another process used the GPU (contended) is measured again,
 * and a best that stays contended is reported but never stored or answered from
 * the cache; a run that measures holds the GPU's lease until its session ends,
 * waits for a busy GPU and gives up naming the holder, and one answered from the
 * cache takes no lease; two tuner processes on one cache (on the fake GPU worker)
 * take turns on one GPU, run side by side on two, and lose no record. */
#include "lease_holder.h"
#include "tuner_fixture.h"

#include "base/clock.h"
#include "exec/lease.h"
#include "exec/worker.h"
#include "report/table.h"
#include "session/session.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- sharing the GPU: contended measurements ------------------------------ */

static void forget_best(fixture *f)
{
    gb_record_id id = {.kernel = "fake_kernel",
                       .kernel_fp = f->result.kernel_fp,
                       .device = f->result.device,
                       .shape = f->shapes[0]};
    gb_key key;
    assert_int_equal(gb_record_best_key(&id, &key), GB_OK);
    assert_int_equal(gb_cache_del(f->cache, GB_DB_BEST, &key, NULL), GB_OK);
}

static void test_a_contended_trial_is_measured_again_and_the_clean_result_stands(void **state)
{
    fixture *f = *state;
    f->fake.contended_trials[1] = 1; /* someone else was on the GPU the first time only */
    assert_int_equal(tune(f, 1), GB_OK);
    assert_int_equal(f->fake.ran[1], 2);
    assert_int_equal(f->fake.ran[2], 1);
    assert_int_equal(f->result.shapes[0].n_contended, 0);
    gb_trial_record rec;
    assert_int_equal(read_trial_of(f, 1, &rec), GB_OK);
    assert_int_equal(rec.status, GB_TRIAL_OK);
    assert_false(rec.contended);
    gb_trial_record_free(&rec);
}

static void
test_a_trial_that_stays_contended_is_kept_marked_and_measured_again_by_a_rerun(void **state)
{
    fixture *f = *state;
    f->fake.contended_trials[1] = -1;
    assert_int_equal(tune(f, 1), GB_OK);
    const gb_shape_result *s = &f->result.shapes[0];
    assert_int_equal(f->fake.ran[1], 2);
    assert_int_equal(s->n_contended, 1);
    assert_int_equal(s->n_status[GB_TRIAL_OK], 4); /* V=1 is still an ok trial */
    gb_trial_record rec;
    assert_int_equal(read_trial_of(f, 1, &rec), GB_OK);
    assert_int_equal(rec.status, GB_TRIAL_OK);
    assert_true(rec.contended);
    gb_trial_record_free(&rec);
    assert_int_equal(count(f, GB_DB_BEST), 1); /* the race was clean */
    forget_best(f);
    memset(f->fake.ran, 0, sizeof f->fake.ran);
    f->fake.contended_trials[1] = 0;
    assert_int_equal(tune(f, 1), GB_OK);
    assert_int_equal(f->fake.ran[1], 1); /* measured again, not resumed */
    assert_int_equal(f->fake.ran[2], 0); /* resumed */
    assert_int_equal(read_trial_of(f, 1, &rec), GB_OK);
    assert_false(rec.contended);
    gb_trial_record_free(&rec);
}

static void test_once_the_gpu_stays_shared_later_trials_are_not_measured_twice(void **state)
{
    fixture *f = *state;
    for (int v = 0; v < 16; v++)
        f->fake.contended_trials[v] = -1;
    assert_int_equal(tune(f, 1), GB_OK);
    assert_int_equal(f->fake.ran[1], 2);
    assert_int_equal(f->fake.ran[2] + f->fake.ran[6] + f->fake.ran[8], 3);
    assert_int_equal(f->result.shapes[0].n_contended, 4); /* V = 1, 2, 6, 8 */
}

static void test_a_contended_race_is_run_again_and_a_clean_one_is_stored(void **state)
{
    fixture *f = *state;
    f->fake.contended_races = 1;
    assert_int_equal(tune(f, 1), GB_OK);
    const gb_shape_result *s = &f->result.shapes[0];
    assert_int_equal(f->fake.races, 2);
    assert_true(s->has_best);
    assert_false(s->contended);
    assert_false(s->best_measurement.contended);
    assert_int_equal(count(f, GB_DB_BEST), 1);
}

static void test_a_race_that_stays_contended_is_reported_and_never_stored(void **state)
{
    fixture *f = *state;
    f->fake.contended_races = -1;
    assert_int_equal(tune(f, 1), GB_OK);
    const gb_shape_result *s = &f->result.shapes[0];
    assert_int_equal(f->fake.races, 2);
    assert_true(s->has_best); /* shown, with its figures ... */
    assert_true(s->contended);
    assert_int_equal(s->best_measurement.n_other_procs, 2);
    assert_int_equal(gb_fields_get(&s->best_config, "V")->i, 2);
    assert_int_equal(count(f, GB_DB_BEST), 0); /* ... but not kept */
    f->fake.contended_races = 0;
    assert_int_equal(tune(f, 1), GB_OK); /* so the next run tunes it again */
    assert_false(f->result.shapes[0].cached);
    assert_int_equal(f->fake.races, 3);
    assert_int_equal(count(f, GB_DB_BEST), 1);
}

static void test_the_table_says_contended_and_that_the_best_was_not_stored(void **state)
{
    fixture *f = *state;
    f->fake.contended_races = -1;
    f->fake.contended_trials[1] = -1;
    assert_int_equal(tune(f, 1), GB_OK);
    f->result.timing.lease_wait_s = 2.5; /* as if it had waited for the lease */
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    gb_report_tune(out, "fake_kernel", &f->result, &(gb_report_opts){0});
    fclose(out);
    assert_non_null(strstr(text, "contended │\n")); /* the row's last column */
    assert_non_null(strstr(text, "the GPU was in use by 2 other process(es) while the best was "
                                 "measured, and again after a pause: the best is not stored (tune "
                                 "again when the GPU is free)"));
    assert_non_null(strstr(text, "1 trial(s) were screened while another process used the GPU"));
    assert_non_null(strstr(text, "2.5 s waiting for the GPU's lease"));
    free(text);
}

static void test_a_contended_screening_best_is_not_stored_when_the_race_fails(void **state)
{
    fixture *f = *state;
    f->fake.race_fails = true;
    f->fake.contended_trials[2] = -1; /* the fastest */
    assert_int_equal(tune(f, 1), GB_OK);
    const gb_shape_result *s = &f->result.shapes[0];
    assert_non_null(s->race_failure);
    assert_int_equal(gb_fields_get(&s->best_config, "V")->i, 2);
    assert_true(s->contended);
    assert_int_equal(count(f, GB_DB_BEST), 0);
}

static void test_a_best_record_marked_contended_does_not_answer_from_the_cache(void **state)
{
    fixture *f = *state;
    assert_int_equal(tune(f, 1), GB_OK);
    gb_key key;
    gb_best_record rec;
    assert_int_equal(read_best_of(f, &rec, &key), GB_OK);
    assert_false(rec.contended);
    rec.contended = true; /* as another writer might have stored it */
    json_t *json = gb_best_record_to_json(&rec);
    assert_int_equal(gb_cache_put_json(f->cache, GB_DB_BEST, &key, json, NULL), GB_OK);
    json_decref(json);
    gb_best_record_free(&rec);
    assert_int_equal(tune(f, 1), GB_OK);
    assert_false(f->result.shapes[0].cached);
}

static void test_a_benchmark_that_stays_contended_says_so(void **state)
{
    fixture *f = *state;
    gb_fields config = {0};
    gb_value v = gb_value_int(2);
    gb_fields_set(&config, "V", &v);
    f->fake.contended_trials[2] = -1;
    gb_tune_request req = {.shapes = f->shapes, .n_shapes = 1, .fixed_config = &config};
    assert_int_equal(gb_tune(&f->opts, &f->kernel, &req, &f->result, &f->err), GB_OK);
    const gb_shape_result *s = &f->result.shapes[0];
    assert_int_equal(f->fake.ran[2], 2);
    assert_true(s->has_best);
    assert_true(s->contended);
    assert_true(s->best_measurement.contended);
    gb_fields_free(&config);
}

/* ---- sharing the GPU: the lease ------------------------------------------- */

/* Starts a child that holds the fake GPU's lease, saying it is busy with
 * activity (lease_holder.c), and remembers it for the teardown. */
static pid_t hold_fake_gpu_lease(fixture *f, const char *activity)
{
    f->holder = hold_lease_in_child(FAKE_UUID, activity);
    return f->holder;
}

/* The claim's context for the runs of one test: a session holding only the GPU's
 * lease (tests run one at a time, so one will do). */
static gb_session claimer;

/* The fixture's runs claim the GPU as a session's runs do: its lease, waited for
 * up to wait_s (after the log, if the test sets one). */
static gb_session_lease *claim_with_lease(fixture *f, double wait_s)
{
    gb_session_init(&claimer);
    claimer.lease.wait_s = wait_s;
    claimer.tuner.exec = f->opts.exec;
    claimer.tuner.log = f->opts.log;
    f->opts.claim = gb_session_claim(&claimer);
    return &claimer.lease;
}

static void test_a_run_that_measures_holds_the_gpu_s_lease_until_the_session_ends(void **state)
{
    fixture *f = *state;
    gb_session_lease *lease = claim_with_lease(f, 0);
    assert_int_equal(tune(f, 1), GB_OK);
    assert_non_null(lease->held);
    char path[160];
    snprintf(path, sizeof path, "%s/" FAKE_UUID ".lock", f->leases);
    assert_string_equal(gb_lease_path(lease->held), path);
    gb_lease *other = NULL;
    assert_int_equal(gb_lease_acquire(FAKE_UUID, 0, &other, NULL), GB_EBUSY);
    char text[2048] = "";
    FILE *file = fopen(path, "r");
    text[fread(text, 1, sizeof text - 1, file)] = '\0';
    fclose(file);
    assert_non_null(strstr(text, "activity=tuning fake_kernel\n"));
    gb_session_lease_end(lease);
    assert_null(lease->held);
    assert_int_equal(gb_lease_acquire(FAKE_UUID, 0, &other, NULL), GB_OK);
    gb_lease_release(other);
}

static void test_a_run_answered_from_the_cache_or_compiling_only_takes_no_lease(void **state)
{
    fixture *f = *state;
    assert_int_equal(tune(f, 1), GB_OK); /* fills the cache, without a lease */
    gb_session_lease *lease = claim_with_lease(f, 0);
    int trials = f->fake.trials;
    assert_int_equal(tune(f, 1), GB_OK);
    assert_true(f->result.shapes[0].cached);
    assert_null(lease->held);
    f->opts.compile_only = true;
    f->opts.exec = NULL;
    assert_int_equal(tune(f, 2), GB_OK);
    assert_null(lease->held);
    assert_int_equal(f->fake.trials, trials);
}

static void test_a_busy_gpu_makes_the_run_wait_then_give_up_naming_the_holder(void **state)
{
    fixture *f = *state;
    pid_t holder = hold_fake_gpu_lease(f, "tuning other.lua");
    char log_path[128], who[64];
    snprintf(log_path, sizeof log_path, "%s/log", f->dir);
    f->opts.log = fopen(log_path, "w");
    gb_session_lease *lease = claim_with_lease(f, 0.3);
    assert_int_equal(tune(f, 1), GB_EBUSY);
    double end_ms = gb_now_ms();
    fclose(f->opts.log);
    f->opts.log = NULL;
    snprintf(who, sizeof who, "is in use by pid %ld (", (long)holder);
    assert_non_null(strstr(f->err.msg, FAKE_UUID));
    assert_non_null(strstr(f->err.msg, who));
    assert_non_null(strstr(f->err.msg, "tuning other.lua"));
    assert_null(lease->held);
    assert_int_equal(f->fake.trials, 0); /* nothing was measured */
    assert_int_equal(f->fake.problems, 0);
    /* The worker was ended before the wait, not after: no context of ours on the GPU
     * while waiting. */
    assert_true(f->fake.closes >= 1 && f->fake.first_close_ms < end_ms - 250);
    assert_true(f->result.timing.lease_wait_s >= 0.3);
    char text[1024] = "";
    FILE *log = fopen(log_path, "r");
    text[fread(text, 1, sizeof text - 1, log)] = '\0';
    fclose(log);
    assert_non_null(strstr(text, who));
    assert_non_null(strstr(text, "waiting up to 0.3 s (--lease-wait)"));
}

static void test_a_lease_wait_of_zero_gives_up_at_once(void **state)
{
    fixture *f = *state;
    hold_fake_gpu_lease(f, NULL);
    claim_with_lease(f, 0);
    assert_int_equal(tune(f, 1), GB_EBUSY);
    assert_non_null(strstr(f->err.msg, "not waiting (--lease-wait 0)"));
    assert_true(f->result.timing.lease_wait_s == 0);
    assert_int_equal(f->fake.trials, 0);
}

static void test_a_session_without_the_lease_keeps_no_worker_between_runs(void **state)
{
    fixture *f = *state;
    assert_int_equal(tune(f, 1), GB_OK); /* fills the cache, without leases */
    assert_int_equal(f->fake.closes, 0);
    gb_session_lease *lease = claim_with_lease(f, 0);
    assert_int_equal(tune(f, 1), GB_OK); /* from the cache: no lease taken ... */
    assert_true(f->result.shapes[0].cached);
    assert_int_equal(f->fake.closes, 1); /* ... and the worker is not left on the GPU */
    assert_int_equal(tune(f, 1), GB_OK);
    assert_int_equal(f->fake.opens, 1);  /* the device is known: no worker started for it */
    assert_int_equal(tune(f, 2), GB_OK); /* the second shape measures: the lease, a worker */
    assert_non_null(lease->held);
    assert_int_equal(f->fake.opens, 2);
    assert_int_equal(f->fake.closes, 1); /* the holder keeps its worker */
    gb_session_lease_end(lease);
}

static void test_an_unusable_lease_directory_is_warned_about_and_measuring_goes_on(void **state)
{
    fixture *f = *state;
    char path[160];
    snprintf(path, sizeof path, "%s/file", f->dir);
    fclose(fopen(path, "w"));
    snprintf(path, sizeof path, "%s/file/leases", f->dir);
    setenv("GPUBENCH_LEASE_DIR", path, 1);
    gb_session_lease *lease = claim_with_lease(f, 0);
    assert_int_equal(tune(f, 2), GB_OK);
    assert_true(lease->broken);
    assert_null(lease->held);
    assert_int_equal(count(f, GB_DB_BEST), 2);
}

/* ---- two tuner processes on one cache, with the fake GPU worker ----------- */

typedef struct child_report {
    int rc;
    double waited_s;
    bool cached[2], has_best[2];
} child_report;

static void find_fake_worker(char *out, size_t n)
{
    const char *build = getenv("GB_BINARY_DIR");
    if (build) {
        snprintf(out, n, "%s/tests/fake_worker", build);
        return;
    }
    ssize_t len = readlink("/proc/self/exe", out, n - 1);
    out[len > 0 ? len : 0] = '\0';
    char *slash = strrchr(out, '/');
    snprintf(slash ? slash + 1 : out, n - (size_t)(slash ? slash + 1 - out : 0), "fake_worker");
}

/* Tunes both shapes in a child process of its own, on the fake worker as GPU
 * ordinal, holding the lease as gpubench-tune does; reports through report_fd. */
static pid_t tune_in_child(fixture *f, int ordinal, int report_fd)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid) return pid;
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    char exe[4096];
    find_fake_worker(exe, sizeof exe);
    gb_worker_opts wo = {.exe = exe, .ordinal = ordinal};
    gb_cache *cache = NULL; /* LMDB's handles must not cross a fork: a fresh one */
    gb_exec *exec = NULL;
    child_report report = {.rc = -1};
    if (gb_cache_open(f->dir, 0, &cache, NULL) || gb_exec_worker(&wo, &exec, NULL)) _exit(1);
    f->opts.cache = cache;
    f->opts.exec = exec;
    gb_session_lease *lease = claim_with_lease(f, 60);
    gb_tune_result result;
    gb_tune_request req = {.shapes = f->shapes, .n_shapes = 2};
    report.rc = gb_tune(&f->opts, &f->kernel, &req, &result, NULL);
    report.waited_s = result.timing.lease_wait_s;
    for (int i = 0; i < result.n_shapes && i < 2; i++) {
        report.cached[i] = result.shapes[i].cached;
        report.has_best[i] = result.shapes[i].has_best;
    }
    gb_tune_result_free(&result);
    gb_exec_destroy(exec); /* the worker first, then the lease, as gpubench-tune does */
    gb_session_lease_end(lease);
    gb_cache_close(cache);
    bool sent = write(report_fd, &report, sizeof report) == sizeof report;
    _exit(sent ? 0 : 1);
}

static void run_two_tuners(fixture *f, int ordinal_b, child_report out[2])
{
    int fds[2][2];
    pid_t pids[2];
    for (int i = 0; i < 2; i++) {
        assert_int_equal(pipe(fds[i]), 0);
        pids[i] = tune_in_child(f, i == 0 ? 0 : ordinal_b, fds[i][1]);
        close(fds[i][1]);
    }
    for (int i = 0; i < 2; i++) {
        int status = 0;
        assert_int_equal(read(fds[i][0], &out[i], sizeof out[i]), sizeof out[i]);
        close(fds[i][0]);
        assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        assert_int_equal(out[i].rc, GB_OK);
        assert_true(out[i].has_best[0] && out[i].has_best[1]);
    }
    /* Nothing lost: every trial of both shapes and one best per shape. */
    assert_int_equal(count(f, GB_DB_TRIALS), 14);
    assert_int_equal(count(f, GB_DB_BEST), 2);
}

static void test_two_tuners_on_one_gpu_take_turns_and_the_second_finds_the_results(void **state)
{
    fixture *f = *state;
    child_report r[2];
    run_two_tuners(f, 0, r);
    /* One measured; the other waited for the lease and was then answered from the
     * cache for both shapes. */
    int waited = r[0].waited_s > 0 ? 0 : 1;
    assert_true(r[waited].waited_s > 0);
    assert_true(r[waited].cached[0] && r[waited].cached[1]);
    assert_true(r[1 - waited].waited_s == 0);
    assert_false(r[1 - waited].cached[0] || r[1 - waited].cached[1]);
}

static void test_two_tuners_on_two_gpus_share_one_cache_and_lose_nothing(void **state)
{
    fixture *f = *state;
    child_report r[2];
    run_two_tuners(f, 1, r); /* two ordinals: two leases, measured at once */
    assert_true(r[0].waited_s == 0 && r[1].waited_s == 0);
}

/* ---- several GPUs in one run (--gpus) ---------------------------------------- */

/* A second fake GPU beside the fixture's, its executor in *out_exec. */
static fake *second_gpu(fixture *f, gb_exec **out_exec, gb_exec **execs, int *gpus)
{
    fake *g = malloc(sizeof *g);
    *g = f->fake;
    g->ordinal = 1;
    assert_int_equal(gb_exec_create(&fake_ops, g, out_exec, NULL), GB_OK);
    execs[0] = f->exec, execs[1] = *out_exec;
    gpus[0] = 0, gpus[1] = 1;
    f->opts.execs = execs;
    f->opts.gpus = gpus;
    f->opts.n_execs = 2;
    return g;
}

/* The GPU each trial record of the first shape names, counted by ordinal. */
static void count_trial_gpus(fixture *f, int *out)
{
    for (int v = 1; v <= 8; v++) {
        gb_trial_record rec;
        if (read_trial_of(f, v, &rec) != GB_OK) continue;
        if (rec.gpu >= 0 && rec.gpu < 2) out[rec.gpu]++;
        if (rec.status == GB_TRIAL_OK || rec.status == GB_TRIAL_WRONG)
            assert_true(rec.gpu == 0 || rec.gpu == 1);
        else
            assert_true(rec.gpu == -1 || rec.status == GB_TRIAL_LAUNCH_ERROR);
        gb_trial_record_free(&rec);
    }
}

static void test_two_gpus_run_trials_at_once_and_each_record_names_its_gpu(void **state)
{
    fixture *f = *state;
    gb_exec *execs[2], *exec2;
    int gpus[2], per_gpu[2] = {0};
    f->fake.trial_ms = 40;
    fake_most_running = 0;
    fake *g = second_gpu(f, &exec2, execs, gpus);
    assert_int_equal(tune(f, 1), GB_OK);
    assert_int_equal(fake_most_running, 2);
    assert_true(f->fake.trials > 0 && g->trials > 0);
    for (int v = 1; v <= 8; v++) /* each configuration once, on one GPU or the other */
        assert_int_equal(f->fake.ran[v] + g->ran[v], v == 5 || v == 7 ? 0 : 1);
    assert_int_equal(g->problems, 1); /* every GPU has the problem and the reference */
    assert_int_equal(g->references, 1);
    assert_true(f->result.shapes[0].has_best);
    assert_int_equal(gb_fields_get(&f->result.shapes[0].best_config, "V")->i, 2);
    count_trial_gpus(f, per_gpu);
    assert_true(per_gpu[0] > 0 && per_gpu[1] > 0);
    assert_int_equal(f->fake.races, 1); /* the leaders race on the first GPU */
    assert_int_equal(g->races, 0);
    gb_exec_destroy(exec2);
    free(g);
}

static void test_gpus_of_different_kinds_are_refused(void **state)
{
    fixture *f = *state;
    gb_exec *execs[2], *exec2;
    int gpus[2];
    fake *g = second_gpu(f, &exec2, execs, gpus);
    g->sms = 8;
    assert_int_equal(tune(f, 1), GB_EINVAL);
    assert_non_null(strstr(f->err.msg, "--gpus: GPU 0 is Fake GPU/sm_90/7 and GPU 1 is Fake "
                                       "GPU/sm_90/8: the GPUs of one run must be of one kind"));
    assert_int_equal(count_trials(f) + g->trials, 0);
    gb_exec_destroy(exec2);
    free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_a_contended_trial_is_measured_again_and_the_clean_result_stands, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_a_trial_that_stays_contended_is_kept_marked_and_measured_again_by_a_rerun, setup,
            teardown),
        cmocka_unit_test_setup_teardown(
            test_once_the_gpu_stays_shared_later_trials_are_not_measured_twice, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_a_contended_race_is_run_again_and_a_clean_one_is_stored, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_a_race_that_stays_contended_is_reported_and_never_stored, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_the_table_says_contended_and_that_the_best_was_not_stored, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_a_contended_screening_best_is_not_stored_when_the_race_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_a_best_record_marked_contended_does_not_answer_from_the_cache, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_benchmark_that_stays_contended_says_so, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            test_a_run_that_measures_holds_the_gpu_s_lease_until_the_session_ends, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_a_run_answered_from_the_cache_or_compiling_only_takes_no_lease, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_a_busy_gpu_makes_the_run_wait_then_give_up_naming_the_holder, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_lease_wait_of_zero_gives_up_at_once, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            test_a_session_without_the_lease_keeps_no_worker_between_runs, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_an_unusable_lease_directory_is_warned_about_and_measuring_goes_on, setup,
            teardown),
        cmocka_unit_test_setup_teardown(
            test_two_tuners_on_one_gpu_take_turns_and_the_second_finds_the_results, setup,
            teardown),
        cmocka_unit_test_setup_teardown(
            test_two_tuners_on_two_gpus_share_one_cache_and_lose_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_two_gpus_run_trials_at_once_and_each_record_names_its_gpu, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gpus_of_different_kinds_are_refused, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
