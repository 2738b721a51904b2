/*
 * CUPTI's kernel records turned into samples (engine/cupti.h), against the fake
 * libcupti of tests/fake_cupti.c: the test plays the driver, making CUDA calls
 * and their kernels' records, and checks which records a sample is given. Loading
 * runs in a fresh copy of this program ("test_cupti --open LIBRARY"), since CUPTI
 * is loaded once per process. No GPU is needed.
 */
#include "engine/cupti.h"

#include <cupti_result.h>
#include <dlfcn.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#define MISSING_LIB "/nonexistent/gpubench-test/libcupti.so.13"

static struct {
    uint32_t (*call)(void);
    void (*kernel)(uint32_t id, uint64_t start_ns, uint64_t end_ns);
    void (*hold_back)(int n);
    void (*refuse)(CUptiResult result);
    int (*queued)(void);
} fake;

static void load_controls(void)
{
    void *lib = dlopen(GB_FAKE_CUPTI, RTLD_NOW);
    if (!lib) fail_msg("dlopen %s: %s", GB_FAKE_CUPTI, dlerror());
    *(void **)&fake.call = dlsym(lib, "fake_cupti_call");
    *(void **)&fake.kernel = dlsym(lib, "fake_cupti_kernel");
    *(void **)&fake.hold_back = dlsym(lib, "fake_cupti_hold_back");
    *(void **)&fake.refuse = dlsym(lib, "fake_cupti_refuse");
    *(void **)&fake.queued = dlsym(lib, "fake_cupti_queued");
    assert_non_null(fake.call);
    assert_non_null(fake.queued);
}

static int open_tracer(void **state)
{
    gb_cupti *c = NULL;
    gb_err err = {0};
    if (gb_cupti_open(&c, &err) != GB_OK) fail_msg("gb_cupti_open: %s", err.msg);
    load_controls();
    fake.hold_back(0);
    *state = c;
    return 0;
}

static int close_tracer(void **state)
{
    gb_cupti_close(*state);
    return 0;
}

/* A sample of one launch whose kernel ran from start_ns to end_ns. */
static uint32_t launch_one(gb_cupti *c)
{
    gb_cupti_begin(c);
    uint32_t id = fake.call();
    gb_cupti_end(c);
    return id;
}

static int collect(gb_cupti *c, int launches, int *kernels_per_launch, double *ms)
{
    gb_err err = {0};
    int rc = gb_cupti_collect(c, launches, kernels_per_launch, ms, &err);
    if (rc == GB_ENOTFOUND && !strstr(err.msg, "CUPTI gave"))
        fail_msg("a lost sample says \"%s\"", err.msg);
    return rc;
}

static void test_a_kernel_record_becomes_the_samples_time(void **state)
{
    gb_cupti *c = *state;
    uint32_t id = launch_one(c);
    fake.kernel(id, 1000000, 1004250); /* 4.25 us */
    int per_launch = 0;
    double ms = -1;
    assert_int_equal(collect(c, 1, &per_launch, &ms), GB_OK);
    assert_true(ms > 0.00424999 && ms < 0.00425001);
    assert_int_equal(per_launch, 1);
}

static void test_a_graphs_launches_each_count_and_are_averaged(void **state)
{
    gb_cupti *c = *state;
    uint32_t id = launch_one(c); /* cuGraphLaunch: every kernel carries its id */
    for (int k = 1; k <= 4; k++)
        fake.kernel(id, 10000 * (uint64_t)k, 10000 * (uint64_t)k + 1000 * (uint64_t)k);
    int per_launch = 0;
    double ms = -1;
    assert_int_equal(collect(c, 4, &per_launch, &ms), GB_OK);
    assert_true(fabs(ms - 0.0025) < 1e-12); /* (1 + 2 + 3 + 4) us / 4 */
    assert_int_equal(per_launch, 1);
}

static void test_records_of_calls_outside_the_sample_are_ignored(void **state)
{
    gb_cupti *c = *state;
    uint32_t flush = fake.call(); /* the L2 flush before the sample */
    uint32_t id = launch_one(c);
    uint32_t probe = fake.call(); /* the clock probe after it */
    fake.kernel(flush, 0, 60000);
    fake.kernel(id, 60500, 62500);
    fake.kernel(probe, 63000, 90000);
    int per_launch = 0;
    double ms = -1;
    assert_int_equal(collect(c, 1, &per_launch, &ms), GB_OK);
    assert_true(fabs(ms - 0.002) < 1e-12);
}

static void test_a_lost_record_loses_the_sample_and_never_counts_in_the_next(void **state)
{
    gb_cupti *c = *state;
    uint32_t first = launch_one(c); /* its record does not come in time */
    int per_launch = 1;
    double ms = -1;
    assert_int_equal(collect(c, 1, &per_launch, &ms), GB_ENOTFOUND);
    assert_true(ms == 0);
    uint32_t second = launch_one(c);
    fake.kernel(first, 100, 900000); /* late, and far longer */
    fake.kernel(second, 1000, 4000);
    assert_int_equal(collect(c, 1, &per_launch, &ms), GB_OK);
    assert_true(fabs(ms - 0.003) < 1e-12);
}

static void test_records_out_of_order_or_still_held_are_found(void **state)
{
    gb_cupti *c = *state;
    uint32_t id = launch_one(c);
    fake.kernel(id, 5000, 6000);
    fake.kernel(id, 1000, 3000); /* a graph's records, the later one first */
    fake.kernel(id, 3000, 4000);
    fake.hold_back(2); /* two sit in a buffer CUPTI is still filling */
    int per_launch = 0;
    double ms = -1;
    assert_int_equal(collect(c, 3, &per_launch, &ms), GB_OK);
    assert_true(fabs(ms - 0.004 / 3) < 1e-12);
    assert_int_equal(fake.queued(), 0);
}

static void test_a_record_without_timestamps_loses_the_sample(void **state)
{
    gb_cupti *c = *state;
    uint32_t id = launch_one(c);
    fake.kernel(id, 0, 0);
    int per_launch = 0;
    double ms = -1;
    assert_int_equal(collect(c, 1, &per_launch, &ms), GB_ENOTFOUND);
}

/* A library GEMM that runs two kernels a call: learnt from the first sample,
 * then a sample with one of them missing is lost, not half as long. */
static void test_kernels_per_launch_are_learnt_and_then_required(void **state)
{
    gb_cupti *c = *state;
    uint32_t id = launch_one(c);
    fake.kernel(id, 1000, 9000);
    fake.kernel(id, 9500, 10500);
    int per_launch = 0;
    double ms = -1;
    assert_int_equal(collect(c, 1, &per_launch, &ms), GB_OK);
    assert_int_equal(per_launch, 2);
    assert_true(fabs(ms - 0.009) < 1e-12);
    id = launch_one(c);
    fake.kernel(id, 20000, 28000);
    assert_int_equal(collect(c, 1, &per_launch, &ms), GB_ENOTFOUND);
}

/* A graph of 3 launches that gave 4 records cannot be split into launches. */
static void test_records_that_do_not_divide_into_launches_lose_the_sample(void **state)
{
    gb_cupti *c = *state;
    uint32_t id = launch_one(c);
    for (int k = 0; k < 4; k++)
        fake.kernel(id, 1000 * (uint64_t)k, 1000 * (uint64_t)k + 500);
    int per_launch = 0;
    double ms = -1;
    assert_int_equal(collect(c, 3, &per_launch, &ms), GB_ENOTFOUND);
}

/* ---- loading, in a fresh process -------------------------------------------- */

/* The --open mode: one gb_cupti_open() with GPUBENCH_LIBCUPTI set to lib, the
 * next subscription refused when refuse is set. Prints the status and message. */
static int open_child(const char *lib, bool refuse)
{
    setenv("GPUBENCH_LIBCUPTI", lib, 1);
    if (refuse) {
        void *fake_lib = dlopen(lib, RTLD_NOW);
        void (*refuse_next)(CUptiResult) =
            fake_lib ? (void (*)(CUptiResult))dlsym(fake_lib, "fake_cupti_refuse") : NULL;
        if (refuse_next) refuse_next(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
    }
    gb_cupti *c = NULL;
    gb_err err = {0};
    int rc = gb_cupti_open(&c, &err);
    gb_cupti_close(c);
    printf("%d\n%s", rc, rc == GB_OK ? "" : err.msg);
    return 0;
}

typedef struct open_result {
    int rc;
    char msg[GB_ERR_MSG_BYTES];
} open_result;

static open_result open_in_child(const char *lib, bool refuse)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(fds[1], STDOUT_FILENO);
        close(fds[0]);
        execl("/proc/self/exe", "test_cupti", refuse ? "--refused" : "--open", lib, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    char out[GB_ERR_MSG_BYTES + 32] = "";
    size_t len = 0;
    ssize_t got;
    while (len + 1 < sizeof out && (got = read(fds[0], out + len, sizeof out - 1 - len)) > 0)
        len += (size_t)got;
    out[len] = '\0';
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    open_result r = {0};
    char *nl = strchr(out, '\n');
    assert_non_null(nl);
    r.rc = atoi(out);
    snprintf(r.msg, sizeof r.msg, "%s", nl + 1);
    return r;
}

static void test_a_missing_library_is_one_sentence_naming_it(void **state)
{
    open_result r = open_in_child(MISSING_LIB, false);
    assert_int_equal(r.rc, GB_ENODRIVER);
    if (!strstr(r.msg, "CUPTI is unavailable") || !strstr(r.msg, MISSING_LIB) ||
        !strstr(r.msg, "GPUBENCH_LIBCUPTI") || strchr(r.msg, '\n'))
        fail_msg("the message does not name CUPTI, the file and the variable: \"%s\"", r.msg);
}

static void test_a_tool_holding_cupti_is_said_so(void **state)
{
    open_result r = open_in_child(GB_FAKE_CUPTI, true);
    assert_int_equal(r.rc, GB_ENODRIVER);
    if (!strstr(r.msg, "another tool")) fail_msg("the message is \"%s\"", r.msg);
}

static void test_the_fake_library_opens(void **state)
{
    open_result r = open_in_child(GB_FAKE_CUPTI, false);
    if (r.rc != GB_OK) fail_msg("gb_cupti_open: %s", r.msg);
}

#define T(name) cmocka_unit_test_setup_teardown(name, open_tracer, close_tracer)

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--open") == 0) return open_child(argv[2], false);
    if (argc == 3 && strcmp(argv[1], "--refused") == 0) return open_child(argv[2], true);
    setenv("GPUBENCH_LIBCUPTI", GB_FAKE_CUPTI, 1);
    const struct CMUnitTest tests[] = {
        T(test_a_kernel_record_becomes_the_samples_time),
        T(test_a_graphs_launches_each_count_and_are_averaged),
        T(test_records_of_calls_outside_the_sample_are_ignored),
        T(test_a_lost_record_loses_the_sample_and_never_counts_in_the_next),
        T(test_records_out_of_order_or_still_held_are_found),
        T(test_a_record_without_timestamps_loses_the_sample),
        T(test_kernels_per_launch_are_learnt_and_then_required),
        T(test_records_that_do_not_divide_into_launches_lose_the_sample),
        cmocka_unit_test(test_a_missing_library_is_one_sentence_naming_it),
        cmocka_unit_test(test_a_tool_holding_cupti_is_said_so),
        cmocka_unit_test(test_the_fake_library_opens),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
