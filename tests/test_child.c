/* The child processes' supervisor (exec/child.c): a child started with its socket
 * on GB_CHILD_FD, seen to end without being reaped, ended with its whole process
 * group, and its end told in one sentence. The children are this test program,
 * started again with one of the arguments main() reads. */
#include "exec/child.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void pause_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

static gb_child start(const char *arg)
{
    char exe[4096];
    gb_err err = {0};
    assert_int_equal(gb_child_self_exe(exe, sizeof exe, &err), GB_OK);
    gb_child_spec spec = {.exe = exe, .arg = arg};
    gb_child c;
    assert_int_equal(gb_child_start(&c, &spec, &err), GB_OK);
    assert_true(c.pid > 0);
    assert_true(c.fd >= 0);
    return c;
}

/* A process that is gone or a zombie (its parent, the child, was killed). */
static bool process_gone(pid_t pid)
{
    char path[64], stat[256] = "";
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) return true;
    bool zombie = fgets(stat, sizeof stat, f) && strstr(stat, ") Z ");
    fclose(f);
    return zombie;
}

static void test_exit_status_is_told(void **state)
{
    (void)state;
    gb_child c = start("--exit7");
    int status = 0;
    assert_true(gb_child_end(&c, 5000, &status)); /* it leaves by itself */
    assert_true(WIFEXITED(status));
    char how[128];
    gb_child_describe("the test child", status, how, sizeof how);
    assert_string_equal(how, "the test child exited with status 7");
    assert_int_equal(c.pid, 0);
    assert_int_equal(c.fd, -1);
}

static void test_killed_child_is_told(void **state)
{
    (void)state;
    gb_child c = start("--hang");
    int status = 0;
    assert_true(gb_child_end(&c, 0, &status));
    assert_true(WIFSIGNALED(status));
    char how[128];
    gb_child_describe("the GPU worker", status, how, sizeof how);
    assert_non_null(strstr(how, "the GPU worker was killed by signal 9 ("));
}

static void test_exit_is_seen_before_the_reap(void **state)
{
    (void)state;
    gb_child c = start("--quick");
    bool exited = false;
    for (int i = 0; i < 500 && !exited; i++, pause_ms(10))
        exited = gb_child_exited(&c);
    assert_true(exited);
    assert_true(gb_child_exited(&c)); /* still there to reap */
    int status = -1;
    assert_true(gb_child_end(&c, 0, &status));
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_false(gb_child_exited(&c));
}

/* The child starts a grandchild and says its pid on the socket: ending the child
 * ends the grandchild too. */
static void test_the_whole_group_is_ended(void **state)
{
    (void)state;
    gb_child c = start("--group");
    struct pollfd p = {.fd = c.fd, .events = POLLIN};
    assert_int_equal(poll(&p, 1, 10000), 1);
    int grandchild = 0;
    assert_int_equal(read(c.fd, &grandchild, sizeof grandchild), (ssize_t)sizeof grandchild);
    assert_true(grandchild > 0);
    assert_false(process_gone(grandchild));
    assert_true(gb_child_end(&c, 0, NULL));
    bool gone = false;
    for (int i = 0; i < 500 && !gone; i++, pause_ms(10))
        gone = process_gone(grandchild);
    if (!gone) kill(grandchild, SIGKILL); /* no orphan left behind by a failure */
    assert_true(gone);
}

static void test_a_program_that_is_not_there(void **state)
{
    (void)state;
    gb_child_spec spec = {.exe = "/nonexistent/gpubench", .arg = "--worker"};
    gb_child c;
    gb_err err = {0};
    assert_int_equal(gb_child_start(&c, &spec, &err), GB_EIO);
    assert_non_null(strstr(err.msg, "starting /nonexistent/gpubench --worker: "));
    assert_int_equal(c.pid, 0);
    assert_int_equal(c.fd, -1);
    assert_false(gb_child_end(&c, 0, NULL)); /* no child: nothing to do */
}

/* The children's side. */
static int child_main(const char *arg)
{
    if (strcmp(arg, "--exit7") == 0) return 7;
    if (strcmp(arg, "--quick") == 0) return 0;
    if (strcmp(arg, "--group") == 0) {
        pid_t pid = fork();
        if (pid == 0)
            for (;;)
                pause();
        int sent = (int)pid;
        if (write(GB_CHILD_FD, &sent, sizeof sent) != (ssize_t)sizeof sent) return 1;
    }
    for (;;)
        pause(); /* --hang, --group: until killed */
}

int main(int argc, char **argv)
{
    if (argc == 2 && strncmp(argv[1], "--", 2) == 0) return child_main(argv[1]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exit_status_is_told),
        cmocka_unit_test(test_killed_child_is_told),
        cmocka_unit_test(test_exit_is_seen_before_the_reap),
        cmocka_unit_test(test_the_whole_group_is_ended),
        cmocka_unit_test(test_a_program_that_is_not_there),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
