/*
 * The supervisor of the GPU worker (exec/supervisor.c) and the executor's
 * recovery (exec/exec.c), driven against tests/fake_worker.c: a worker that
 * needs no GPU and crashes, hangs, talks garbage or reports a fault on request.
 * Each test gets a fresh directory for the fake's state file, which records every
 * message each worker received.
 */
#include "exec/interrupt.h"
#include "exec/proto.h"
#include "exec/worker.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

typedef struct fixture {
    char dir[64];
    char state_path[128];
    char exe[PATH_MAX];
    gb_exec *exec;
} fixture;

static void contains_at(const char *text, const char *part, const char *file, int line)
{
    if (strstr(text, part)) return;
    print_error("\"%s\" does not contain \"%s\"\n", text, part);
    _fail(file, line);
}
#define assert_contains(text, part) contains_at((text), (part), __FILE__, __LINE__)

/* $GB_BINARY_DIR/tests/fake_worker under ctest, else the one beside this program. */
static void find_fake_worker(char *out, size_t out_bytes)
{
    const char *build = getenv("GB_BINARY_DIR");
    if (build) {
        snprintf(out, out_bytes, "%s/tests/fake_worker", build);
        return;
    }
    gb_err err;
    assert_int_equal(gb_child_self_exe(out, out_bytes, &err), GB_OK);
    char *slash = strrchr(out, '/');
    assert_non_null(slash);
    snprintf(slash + 1, out_bytes - (size_t)(slash + 1 - out), "fake_worker");
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f) return -1;
    strcpy(f->dir, "/tmp/gb-test-worker-XXXXXX");
    if (!mkdtemp(f->dir)) return -1;
    snprintf(f->state_path, sizeof f->state_path, "%s/state", f->dir);
    setenv("GB_FAKE_STATE", f->state_path, 1);
    unsetenv("GB_FAKE_WORKER");
    find_fake_worker(f->exe, sizeof f->exe);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    char pid_path[160];
    gb_exec_destroy(f->exec);
    snprintf(pid_path, sizeof pid_path, "%s.pid", f->state_path);
    unlink(f->state_path);
    unlink(pid_path);
    rmdir(f->dir);
    unsetenv("GB_FAKE_WORKER");
    gb_interrupt_clear();
    free(f);
    return 0;
}

/* ---- helpers ------------------------------------------------------------ */

/* An executor on the fake worker, which misbehaves as `misbehaviour` says (NULL: not). */
static gb_exec *start(fixture *f, const char *misbehaviour)
{
    if (misbehaviour) setenv("GB_FAKE_WORKER", misbehaviour, 1);
    gb_worker_opts opts = {.exe = f->exe, .start_timeout_s = 10, .op_timeout_s = 10};
    gb_err err;
    assert_int_equal(gb_exec_worker(&opts, &f->exec, &err), GB_OK);
    return f->exec;
}

static const char fake_cubin[] = "not really a cubin";

static gb_variant variant(const char *name, uint32_t grid_x)
{
    return (gb_variant){.cubin = fake_cubin,
                        .cubin_bytes = sizeof fake_cubin,
                        .lowered_name = name,
                        .launch = {.grid = {grid_x, 1, 1}, .block = {256, 1, 1}}};
}

/* Opens the worker, sets a problem (x -> y, n) and runs a reference on it. */
static void set_up_problem(gb_exec *exec)
{
    gb_arg args[] = {
        {.kind = GB_ARG_TENSOR, .dtype = GB_DT_F32, .n_dims = 1, .dims = {1024}},
        {.kind = GB_ARG_TENSOR, .dtype = GB_DT_F32, .n_dims = 1, .dims = {1024}},
        {.kind = GB_ARG_SCALAR, .dtype = GB_DT_I64, .int_value = 1024},
    };
    args[1].init = GB_INIT_OUTPUT;
    gb_variant ref = variant("reference", 4);
    gb_device_info device;
    gb_err err;
    assert_int_equal(gb_exec_device(exec, &device, &err), GB_OK);
    assert_int_equal(gb_exec_set_problem(exec, args, 3, 42, &err), GB_OK);
    assert_int_equal(gb_exec_reference(exec, &ref, &err), GB_OK);
}

/* Runs a variant whose fake timings are grid_x milliseconds. */
static int run_trial(gb_exec *exec, uint32_t grid_x, double timeout_s, gb_trial_result *out,
                     gb_err *err)
{
    gb_variant v = variant("candidate", grid_x);
    gb_check_spec check = {.n_outputs = 1, .outputs = {1}, .rtol = 1e-5, .atol = 1e-6};
    gb_measure_opts opts = gb_measure_defaults();
    return gb_exec_trial(exec, &v, &check, &opts, timeout_s, out, err);
}

/* A trial that must come back ok, timed at grid_x ms. */
static void expect_ok_trial(gb_exec *exec, uint32_t grid_x)
{
    gb_trial_result result;
    gb_err err;
    assert_int_equal(run_trial(exec, grid_x, 5, &result, &err), GB_OK);
    assert_string_equal(gb_trial_status_name(result.status), "ok");
    assert_true(result.measurement.n_samples >= 10);
    assert_true(result.measurement.stats.median == grid_x);
    gb_trial_result_free(&result);
}

/* A trial that must come back as a result (not an error of the run) with this status. */
static void expect_lost_trial(gb_exec *exec, gb_trial_status status, double timeout_s,
                              gb_trial_result *out)
{
    gb_err err = {0};
    int rc = run_trial(exec, 2, timeout_s, out, &err);
    if (rc != GB_OK) fail_msg("the trial failed the run: %s (%s)", gb_strerror(rc), err.msg);
    assert_string_equal(gb_trial_status_name(out->status), gb_trial_status_name(status));
    assert_null(out->measurement.samples_ms);
}

/* How many lines of the state file say `message`. */
static int count_records(const fixture *f, const char *message)
{
    FILE *file = fopen(f->state_path, "r");
    char line[64];
    int n = 0;
    while (file && fgets(line, sizeof line, file)) {
        line[strcspn(line, "\n")] = '\0';
        n += strcmp(line, message) == 0;
    }
    if (file) fclose(file);
    return n;
}

/* The pid of the last fake worker started. */
static pid_t last_worker_pid(const fixture *f)
{
    char path[160];
    long pid = 0;
    snprintf(path, sizeof path, "%s.pid", f->state_path);
    FILE *file = fopen(path, "r");
    assert_non_null(file);
    assert_int_equal(fscanf(file, "%ld", &pid), 1);
    fclose(file);
    assert_true(pid > 0);
    return (pid_t)pid;
}

static void assert_process_gone(pid_t pid)
{
    errno = 0;
    assert_int_equal(kill(pid, 0), -1);
    assert_int_equal(errno, ESRCH);
}

/* ---- a healthy worker --------------------------------------------------- */

static void test_healthy_worker_reports_its_device_and_times_trials(void **state)
{
    fixture *f = *state;
    gb_exec *exec = start(f, NULL);
    gb_device_info device;
    gb_err err;
    assert_int_equal(gb_exec_device(exec, &device, &err), GB_OK);
    assert_string_equal(device.name, "Fake GPU");
    assert_string_equal(device.arch, "sm_90a");
    assert_int_equal(device.sms, 7);
    assert_true(device.mem_bytes == 85520809984);
    set_up_problem(exec);
    expect_ok_trial(exec, 3);
    expect_ok_trial(exec, 5);
    assert_int_equal(gb_exec_backends_started(exec), 1);
    assert_int_equal(count_records(f, "OPEN"), 1);
    assert_int_equal(count_records(f, "TRIAL"), 2);
}

/* The tuner's breakdown of a run's time: the session's phases cross the protocol
 * as the worker measured them, and the executor adds the whole call's time. */
static void test_a_trial_brings_its_phases_and_the_executor_times_the_call(void **state)
{
    fixture *f = *state;
    gb_exec *exec = start(f, NULL);
    set_up_problem(exec);
    gb_trial_result result;
    gb_err err;
    double begun_ms = gb_now_ms();
    assert_int_equal(run_trial(exec, 3, 5, &result, &err), GB_OK);
    double took_ms = gb_now_ms() - begun_ms;
    const gb_trial_phases *ph = &result.phases;
    assert_true(ph->load_ms == 0.25 && ph->check_ms == 0.5);
    assert_true(ph->warmup_ms == 6);
    assert_true(ph->sample_ms == result.measurement.wall_ms && ph->sample_ms == 30);
    assert_true(ph->kernel_ms == 30);
    assert_true(ph->session_ms == 0.25 + 0.5 + 6 + 30 + 0.125);
    assert_true(ph->total_ms > 0 && ph->total_ms <= took_ms);
    /* The tuner's totals: a second trial's phases add to the first's. */
    gb_trial_phases sum = {0};
    gb_trial_result second;
    assert_int_equal(run_trial(exec, 1, 5, &second, &err), GB_OK);
    gb_trial_phases_add(&sum, &result.phases);
    gb_trial_phases_add(&sum, &second.phases);
    assert_true(sum.load_ms == 0.5 && sum.check_ms == 1.0 && sum.warmup_ms == 8);
    assert_true(sum.sample_ms == 40 && sum.kernel_ms == 40);
    assert_true(sum.session_ms == result.phases.session_ms + second.phases.session_ms);
    assert_true(sum.total_ms == result.phases.total_ms + second.phases.total_ms);
    gb_trial_result_free(&result);
    gb_trial_result_free(&second);
}

/* A trial the watchdog ended still counts its time: the run's breakdown must not
 * lose the seconds a hang cost. */
static void test_a_lost_trial_is_timed_to_the_watchdog(void **state)
{
    fixture *f = *state;
    gb_exec *exec = start(f, "hang_on_trial=1");
    gb_trial_result result;
    set_up_problem(exec);
    expect_lost_trial(exec, GB_TRIAL_TIMEOUT, 0.5, &result);
    assert_true(result.phases.total_ms >= 450 && result.phases.total_ms < 3000);
    assert_true(result.phases.session_ms == 0); /* the worker never answered */
}

static void test_a_race_measures_every_variant_and_the_worker_serves_on(void **state)
{
    fixture *f = *state;
    gb_exec *exec = start(f, NULL);
    set_up_problem(exec);
    gb_variant vs[] = {variant("a", 3), variant("b", 1), variant("c", 2)};
    gb_measurement ms[3];
    gb_measure_opts opts = gb_measure_defaults();
    gb_err err;
    assert_int_equal(gb_exec_race(exec, vs, 3, &opts, 5, ms, &err), GB_OK);
    for (int i = 0; i < 3; i++) {
        assert_true(ms[i].n_samples >= 10);
        assert_true(ms[i].stats.median == vs[i].launch.grid[0]); /* recomputed by the reader */
        assert_true(ms[i].clock_mhz_median == 1980);
        gb_measurement_free(&ms[i]);
    }
    assert_int_equal(count_records(f, "RACE"), 1);
    expect_ok_trial(exec, 4); /* the same worker goes on */
    assert_int_equal(gb_exec_backends_started(exec), 1);
}

/* The tuner names the GPU's lease by the UUID the worker sends, and keeps no best
 * measured while other processes used the GPU: both must cross the protocol. */
static void test_the_worker_sends_the_gpu_s_uuid_bus_id_and_contention(void **state)
{
    fixture *f = *state;
    gb_exec *exec = start(f, "others=2");
    gb_device_info device;
    gb_err err;
    assert_int_equal(gb_exec_device(exec, &device, &err), GB_OK);
    assert_string_equal(device.uuid, "GPU-00000000-0000-0000-0000-000000000000");
    assert_string_equal(device.pci_bus_id, "0000:3B:00.0");
    set_up_problem(exec);
    gb_trial_result result;
    assert_int_equal(run_trial(exec, 3, 5, &result, &err), GB_OK);
    assert_true(result.measurement.contended);
    assert_int_equal(result.measurement.n_other_procs, 2);
    gb_trial_result_free(&result);
    gb_variant vs[] = {variant("a", 3), variant("b", 1)};
    gb_measurement ms[2];
    gb_measure_opts opts = gb_measure_defaults();
    assert_int_equal(gb_exec_race(exec, vs, 2, &opts, 5, ms, &err), GB_OK);
    for (int i = 0; i < 2; i++) {
        assert_true(ms[i].contended);
        assert_int_equal(ms[i].n_other_procs, 2);
        gb_measurement_free(&ms[i]);
    }
}

static void test_a_worker_on_another_ordinal_is_another_gpu(void **state)
{
    fixture *f = *state;
    gb_worker_opts opts = {.exe = f->exe, .ordinal = 1, .start_timeout_s = 10, .op_timeout_s = 10};
    gb_device_info device;
    gb_err err;
    assert_int_equal(gb_exec_worker(&opts, &f->exec, &err), GB_OK);
    assert_int_equal(gb_exec_device(f->exec, &device, &err), GB_OK);
    assert_int_equal(device.ordinal, 1);
    assert_string_equal(device.uuid, "GPU-00000000-0000-0000-0000-000000000001");
    assert_string_equal(device.pci_bus_id, "0000:3C:00.0");
}

static void test_destroy_asks_a_healthy_worker_to_quit(void **state)
{
    fixture *f = *state;
    gb_exec *exec = start(f, NULL);
    set_up_problem(exec);
    expect_ok_trial(exec, 1);
    pid_t pid = last_worker_pid(f);
    gb_exec_destroy(exec);
    f->exec = NULL;
    assert_int_equal(count_records(f, "QUIT"), 1);
    assert_process_gone(pid);
}

/* ---- a worker lost in a trial ------------------------------------------- */

static void test_crash_is_a_result_and_a_fresh_worker_replays_the_problem(void **state)
{
    fixture *f = *state;
    gb_exec *exec = start(f, "crash_on_trial=2");
    gb_trial_result result;
    set_up_problem(exec);
    expect_ok_trial(exec, 1);
    expect_lost_trial(exec, GB_TRIAL_CRASHED, 5, &result);
    assert_contains(result.reason, "signal 11");
    assert_contains(result.reason, "Segmentation fault");
    expect_ok_trial(exec, 6);
    assert_int_equal(gb_exec_backends_started(exec), 2);
    assert_int_equal(count_records(f, "OPEN"), 2);
    assert_int_equal(count_records(f, "PROBLEM"), 2);
    assert_int_equal(count_records(f, "REFERENCE"), 2);
    assert_int_equal(count_records(f, "TRIAL"), 3);
}

static void test_hang_is_ended_by_the_watchdog_and_the_next_trial_runs(void **state)
{
    fixture *f = *state;
    gb_exec *exec = start(f, "hang_on_trial=1");
    gb_trial_result result;
    set_up_problem(exec);
    double begun_ms = gb_now_ms();
    expect_lost_trial(exec, GB_TRIAL_TIMEOUT, 0.5, &result);
    double took_ms = gb_now_ms() - begun_ms;
    assert_contains(result.reason, "watchdog");
    assert_true(took_ms >= 450 && took_ms < 3000);
    expect_ok_trial(exec, 2);
    assert_int_equal(gb_exec_backends_started(exec), 2);
}

static void test_garbage_answer_is_a_crash_not_a_hang(void **state)
{
    fixture *f = *state;
    gb_exec *exec = start(f, "garbage_on_trial=1");
    gb_trial_result result;
    set_up_problem(exec);
    double begun_ms = gb_now_ms();
    expect_lost_trial(exec, GB_TRIAL_CRASHED, 5, &result);
    assert_true(gb_now_ms() - begun_ms < 3000);
    assert_contains(result.reason, "malformed message");
    expect_ok_trial(exec, 2);
}

static void test_fault_reply_is_a_crash_that_names_the_cuda_error(void **state)
{
    fixture *f = *state;
    gb_exec *exec = start(f, "fault_on_trial=1");
    gb_trial_result result;
    set_up_problem(exec);
    expect_lost_trial(exec, GB_TRIAL_CRASHED, 5, &result);
    assert_contains(result.reason, "CUDA_ERROR_ILLEGAL_ADDRESS");
    expect_ok_trial(exec, 2);
    assert_int_equal(gb_exec_backends_started(exec), 2);
}

static void test_answer_of_the_wrong_type_is_a_crash(void **state)
{
    fixture *f = *state;
    gb_exec *exec = start(f, "wrong_type_on_trial=1");
    gb_trial_result result;
    set_up_problem(exec);
    expect_lost_trial(exec, GB_TRIAL_CRASHED, 5, &result);
    assert_contains(result.reason, "malformed message");
    expect_ok_trial(exec, 2);
}

/* ---- a worker that cannot start ----------------------------------------- */

static void test_worker_that_exits_on_open_is_named_by_its_exit_status(void **state)
{
    fixture *f = *state;
    gb_exec *exec = start(f, "exit_on_open=7");
    gb_device_info device;
    gb_err err;
    assert_int_not_equal(gb_exec_device(exec, &device, &err), GB_OK);
    assert_contains(err.msg, "exited with status 7");
}

static void test_no_driver_in_the_worker_comes_back_with_its_message(void **state)
{
    fixture *f = *state;
    gb_exec *exec = start(f, "no_gpu");
    gb_device_info device;
    gb_err err;
    assert_int_equal(gb_exec_device(exec, &device, &err), GB_ENODRIVER);
    assert_string_equal(err.msg, "no CUDA driver: libcuda.so.1 could not be loaded");
    assert_int_equal(count_records(f, "QUIT"), 1); /* the worker was not left behind */
}

static void test_answer_in_another_protocol_version_is_refused(void **state)
{
    fixture *f = *state;
    gb_exec *exec = start(f, "bad_version");
    gb_device_info device;
    gb_err err;
    assert_int_not_equal(gb_exec_device(exec, &device, &err), GB_OK);
    assert_contains(err.msg, "protocol version 99");
    assert_process_gone(last_worker_pid(f));
}

/* ---- Ctrl-C ------------------------------------------------------------- */

static void *interrupt_soon(void *unused)
{
    usleep(300 * 1000);
    gb_interrupt_request();
    return NULL;
}

static void test_interrupt_ends_a_hanging_trial_promptly_and_its_worker(void **state)
{
    fixture *f = *state;
    gb_exec *exec = start(f, "hang_on_trial=1");
    gb_trial_result result;
    gb_err err;
    pthread_t thread;
    set_up_problem(exec);
    pid_t pid = last_worker_pid(f);
    double begun_ms = gb_now_ms();
    assert_int_equal(pthread_create(&thread, NULL, interrupt_soon, NULL), 0);
    int rc = run_trial(exec, 2, 60, &result, &err);
    double took_ms = gb_now_ms() - begun_ms;
    pthread_join(thread, NULL);
    gb_interrupt_clear();
    assert_int_equal(rc, GB_EINTR);
    assert_true(took_ms < 2000);
    assert_process_gone(pid);
    expect_ok_trial(exec, 4); /* once the interrupt is cleared, a fresh worker serves */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define TEST(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
        TEST(test_healthy_worker_reports_its_device_and_times_trials),
        TEST(test_a_trial_brings_its_phases_and_the_executor_times_the_call),
        TEST(test_a_lost_trial_is_timed_to_the_watchdog),
        TEST(test_a_race_measures_every_variant_and_the_worker_serves_on),
        TEST(test_the_worker_sends_the_gpu_s_uuid_bus_id_and_contention),
        TEST(test_a_worker_on_another_ordinal_is_another_gpu),
        TEST(test_destroy_asks_a_healthy_worker_to_quit),
        TEST(test_crash_is_a_result_and_a_fresh_worker_replays_the_problem),
        TEST(test_hang_is_ended_by_the_watchdog_and_the_next_trial_runs),
        TEST(test_garbage_answer_is_a_crash_not_a_hang),
        TEST(test_fault_reply_is_a_crash_that_names_the_cuda_error),
        TEST(test_answer_of_the_wrong_type_is_a_crash),
        TEST(test_worker_that_exits_on_open_is_named_by_its_exit_status),
        TEST(test_no_driver_in_the_worker_comes_back_with_its_message),
        TEST(test_answer_in_another_protocol_version_is_refused),
        TEST(test_interrupt_ends_a_hanging_trial_promptly_and_its_worker),
#undef TEST
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
