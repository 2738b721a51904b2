/* The GPU lease (exec/lease.c): one holder at a time, waiters that wait and say
 * for whom, a wait that runs out, and a lease that the kernel frees when its
 * holder dies. Holders other than the test itself are child processes. */
#include "scratch.h"
#include "exec/interrupt.h"
#include "exec/lease.h"
#include "lease_holder.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define GPU "GPU-5d2c0a4e-1b7f-4c1e-9a3d-0123456789ab"

typedef struct fixture {
    char dir[64];
    char leases[128]; /* $GPUBENCH_LEASE_DIR, made by the lease code */
    pid_t holder;     /* a child holding a lease, or 0 */
} fixture;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/gb-test-lease-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->leases, sizeof f->leases, "%s/leases", f->dir);
    setenv("GPUBENCH_LEASE_DIR", f->leases, 1);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    if (f->holder > 0) {
        kill(f->holder, SIGKILL);
        waitpid(f->holder, NULL, 0);
    }
    gb_interrupt_clear();
    scratch_remove(f->dir);
    unsetenv("GPUBENCH_LEASE_DIR");
    free(f);
    return 0;
}

/* Starts a child that holds the lease of name (lease_holder.c) and remembers it
 * for the teardown. */
static pid_t hold_in_child(fixture *f, const char *name, const char *activity)
{
    f->holder = hold_lease_in_child(name, activity);
    return f->holder;
}

static char *read_file(const char *path)
{
    static char text[4096];
    FILE *file = fopen(path, "r");
    size_t n = file ? fread(text, 1, sizeof text - 1, file) : 0;
    if (file) fclose(file);
    text[n] = '\0';
    return text;
}

/* ---- tests -------------------------------------------------------------- */

static void test_the_lease_directory_is_created_shared_and_sticky(void **state)
{
    fixture *f = *state;
    gb_lease *lease = NULL;
    assert_int_equal(gb_lease_acquire(GPU, 0, &lease, NULL), GB_OK);
    struct stat st;
    assert_int_equal(stat(f->leases, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(st.st_mode & 07777, 01777); /* whatever the umask */
    assert_int_equal(stat(gb_lease_path(lease), &st), 0);
    assert_int_equal(st.st_mode & 0777, 0666);
    gb_lease_release(lease);
}

static void test_the_holder_describes_itself_and_release_clears_it(void **state)
{
    fixture *f = *state;
    gb_lease *lease = NULL;
    assert_int_equal(gb_lease_acquire_as(GPU, 0, "tuning gemm_f32", NULL, &lease, NULL), GB_OK);
    char path[256], pid[32];
    snprintf(path, sizeof path, "%s/" GPU ".lock", f->leases);
    assert_string_equal(gb_lease_path(lease), path);
    snprintf(pid, sizeof pid, "pid=%ld\n", (long)getpid());
    const char *text = read_file(path);
    assert_non_null(strstr(text, pid));
    assert_non_null(strstr(text, "command=test_lease"));
    assert_non_null(strstr(text, "activity=tuning gemm_f32\n"));
    gb_lease_set_activity(lease, "benchmarking gemm_f32");
    assert_non_null(strstr(read_file(path), "activity=benchmarking gemm_f32\n"));
    assert_float_equal(gb_lease_waited_s(lease), 0, 0.05);
    gb_lease_release(lease);
    assert_string_equal(read_file(path), "");
    assert_int_equal(gb_lease_acquire(GPU, 0, &lease, NULL), GB_OK); /* free again */
    gb_lease_release(lease);
}

static void test_a_second_process_waits_until_the_first_releases(void **state)
{
    fixture *f = *state;
    char log_path[128];
    snprintf(log_path, sizeof log_path, "%s/waiter.log", f->dir);
    /* The waiter is forked before this process takes the lease: a child forked
     * after it would share the lock through the inherited descriptor. */
    int go[2], result[2];
    assert_int_equal(pipe(go), 0);
    assert_int_equal(pipe(result), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        char c;
        if (read(go[0], &c, 1) != 1) _exit(3);
        FILE *log = fopen(log_path, "w");
        gb_lease *lease = NULL;
        int rc = gb_lease_acquire_as(GPU, 10, NULL, log, &lease, NULL);
        double waited = gb_lease_waited_s(lease);
        if (write(result[1], &waited, sizeof waited) != sizeof waited) _exit(3);
        _exit(rc == GB_OK ? 0 : 1);
    }
    close(go[0]);
    close(result[1]);
    gb_lease *mine = NULL;
    assert_int_equal(gb_lease_acquire_as(GPU, 0, "tuning gemm_f32", NULL, &mine, NULL), GB_OK);
    assert_int_equal(write(go[1], "g", 1), 1);
    usleep(600 * 1000); /* the child polls about 12 times meanwhile */
    gb_lease_release(mine);
    double waited = 0;
    int status = 0;
    assert_int_equal(read(result[0], &waited, sizeof waited), sizeof waited);
    close(result[0]);
    close(go[1]);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_true(waited > 0.1 && waited < 5); /* it polled until the release */
    /* The wait was announced once, naming this process and what it was doing. */
    const char *log = read_file(log_path);
    char who[128];
    snprintf(who, sizeof who, GPU " is in use by pid %ld (", (long)getpid());
    assert_non_null(strstr(log, who));
    assert_non_null(strstr(log, ", tuning gemm_f32); waiting up to 10 s (--lease-wait)\n"));
    int lines = 0;
    for (const char *c = log; *c; c++)
        lines += *c == '\n';
    assert_int_equal(lines, 1);
}

static void test_the_wait_runs_out_with_ebusy_naming_the_holder(void **state)
{
    fixture *f = *state;
    pid_t holder = hold_in_child(f, GPU, "tuning examples/gemm.lua");
    gb_lease *lease = NULL;
    gb_err err = {0};
    double start = now_s();
    assert_int_equal(gb_lease_acquire_as(GPU, 0.3, NULL, NULL, &lease, &err), GB_EBUSY);
    double took = now_s() - start;
    assert_null(lease);
    assert_true(took >= 0.3 && took < 2);
    char who[64];
    snprintf(who, sizeof who, "is in use by pid %ld (", (long)holder);
    assert_non_null(strstr(err.msg, GPU));
    assert_non_null(strstr(err.msg, who));
    assert_non_null(strstr(err.msg, "test_lease")); /* the holder's command */
    assert_non_null(strstr(err.msg, "tuning examples/gemm.lua"));
    assert_non_null(strstr(err.msg, "gave up after 0.3 s (--lease-wait)"));
}

static void test_a_wait_of_zero_tries_once(void **state)
{
    fixture *f = *state;
    hold_in_child(f, GPU, NULL);
    gb_lease *lease = NULL;
    gb_err err = {0};
    double start = now_s();
    assert_int_equal(gb_lease_acquire_as(GPU, 0, NULL, NULL, &lease, &err), GB_EBUSY);
    assert_true(now_s() - start < 1);
    assert_non_null(strstr(err.msg, "not waiting (--lease-wait 0)"));
}

static void test_another_gpu_s_lease_is_not_held(void **state)
{
    fixture *f = *state;
    hold_in_child(f, GPU, NULL);
    gb_lease *lease = NULL;
    assert_int_equal(gb_lease_acquire("GPU-00000000-0000-0000-0000-000000000001", 0, &lease, NULL),
                     GB_OK);
    gb_lease_release(lease);
}

static void test_a_holder_killed_with_sigkill_frees_the_lease(void **state)
{
    fixture *f = *state;
    pid_t holder = hold_in_child(f, GPU, "tuning gemm_f32");
    gb_lease *lease = NULL;
    assert_int_equal(gb_lease_acquire(GPU, 0, &lease, NULL), GB_EBUSY);
    kill(holder, SIGKILL);
    waitpid(holder, NULL, 0);
    f->holder = 0;
    /* Its description is still in the file; the lock is not. */
    assert_int_equal(gb_lease_acquire(GPU, 0, &lease, NULL), GB_OK);
    char pid[32];
    snprintf(pid, sizeof pid, "pid=%ld\n", (long)getpid());
    assert_non_null(strstr(read_file(gb_lease_path(lease)), pid));
    gb_lease_release(lease);
}

static void test_ctrl_c_stops_the_wait(void **state)
{
    fixture *f = *state;
    hold_in_child(f, GPU, NULL);
    gb_lease *lease = NULL;
    gb_err err = {0};
    gb_interrupt_request();
    assert_int_equal(gb_lease_acquire_as(GPU, -1, NULL, NULL, &lease, &err), GB_EINTR);
    assert_non_null(strstr(err.msg, "interrupted while waiting for " GPU));
}

static void test_a_bad_name_is_hashed_into_the_lease_directory(void **state)
{
    fixture *f = *state;
    const char *bad[] = {"../../etc/passwd", "pci-0000:3B:00.0", "GPU-1/..", "a b",
                         "GPU-0123456789012345678901234567890123456789012345678901234567890123"};
    char seen[5][4096];
    for (int i = 0; i < 5; i++) {
        gb_lease *lease = NULL;
        assert_int_equal(gb_lease_acquire(bad[i], 0, &lease, NULL), GB_OK);
        const char *path = gb_lease_path(lease);
        assert_int_equal(strncmp(path, f->leases, strlen(f->leases)), 0);
        const char *base = path + strlen(f->leases);
        assert_int_equal(strncmp(base, "/hashed_", 8), 0);
        assert_int_equal(strlen(base), strlen("/hashed_") + 16 + strlen(".lock"));
        assert_int_equal(strspn(base + 8, "0123456789abcdef"), 16);
        strcpy(seen[i], path);
        for (int j = 0; j < i; j++)
            assert_string_not_equal(seen[i], seen[j]);
        gb_lease_release(lease);
    }
}

static void test_an_empty_name_is_invalid(void **state)
{
    gb_lease *lease = NULL;
    gb_err err = {0};
    assert_int_equal(gb_lease_acquire("", 0, &lease, &err), GB_EINVAL);
    assert_int_equal(gb_lease_acquire(NULL, 0, &lease, &err), GB_EINVAL);
    assert_null(lease);
}

static void test_a_lease_directory_that_cannot_be_made_is_an_io_error(void **state)
{
    fixture *f = *state;
    char path[160];
    snprintf(path, sizeof path, "%s/file", f->dir);
    fclose(fopen(path, "w"));
    snprintf(path, sizeof path, "%s/file/leases", f->dir); /* under a plain file */
    setenv("GPUBENCH_LEASE_DIR", path, 1);
    gb_lease *lease = NULL;
    gb_err err = {0};
    assert_int_equal(gb_lease_acquire(GPU, 0, &lease, &err), GB_EIO);
    assert_non_null(strstr(err.msg, path));
}

static void test_a_device_s_lease_name_is_its_uuid_else_bus_id_else_host_and_ordinal(void **state)
{
    gb_device_info dev = {.ordinal = 3};
    char name[320], host[256] = "";
    strcpy(dev.uuid, GPU);
    strcpy(dev.pci_bus_id, "0000:3B:00.0");
    gb_lease_name(&dev, name, sizeof name);
    assert_string_equal(name, GPU);
    dev.uuid[0] = '\0';
    gb_lease_name(&dev, name, sizeof name);
    assert_string_equal(name, "pci-0000:3B:00.0");
    dev.pci_bus_id[0] = '\0';
    gb_lease_name(&dev, name, sizeof name);
    gethostname(host, sizeof host);
    assert_non_null(strstr(name, host));
    assert_non_null(strstr(name, "-device-3"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_the_lease_directory_is_created_shared_and_sticky,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_the_holder_describes_itself_and_release_clears_it,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_second_process_waits_until_the_first_releases, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_the_wait_runs_out_with_ebusy_naming_the_holder, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_wait_of_zero_tries_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_another_gpu_s_lease_is_not_held, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_holder_killed_with_sigkill_frees_the_lease, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_ctrl_c_stops_the_wait, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_bad_name_is_hashed_into_the_lease_directory, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_an_empty_name_is_invalid, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_lease_directory_that_cannot_be_made_is_an_io_error,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_a_device_s_lease_name_is_its_uuid_else_bus_id_else_host_and_ordinal, setup,
            teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
