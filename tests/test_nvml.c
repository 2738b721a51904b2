#include "engine/driver.h"
#include "engine/nvml.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

/* NVML is loaded once per process, so the tests of loading run in a fresh copy of
 * this program ("test_nvml --open LIBRARY", "-" for the default), which prints the
 * status and message of one gb_nvml_open(). They pass on machines without NVML.
 * The tests of a real GPU open the device at GB_TEST_PCI_BUS_ID ("0000:3B:00.0"),
 * else CUDA device 0, and skip when there is no GPU or NVML is unavailable. */

#define ANY_BUS_ID     "0000:00:00.0"
#define MISSING_BUS_ID "0000:FF:1F.7" /* well formed; NVML may call it invalid */
#define MISSING_LIB    "/nonexistent/gpubench-test/libnvidia-ml.so.1"

typedef struct open_result {
    int rc;
    char msg[GB_ERR_MSG_BYTES];
} open_result;

/* The --open mode: one gb_nvml_open() with GPUBENCH_LIBNVML set to lib. */
static int open_child(const char *lib)
{
    if (strcmp(lib, "-") == 0)
        unsetenv("GPUBENCH_LIBNVML");
    else
        setenv("GPUBENCH_LIBNVML", lib, 1);
    gb_nvml_device *dev = NULL;
    gb_err err = {0};
    int rc = gb_nvml_open(ANY_BUS_ID, &dev, &err);
    gb_nvml_close(dev);
    printf("%d\n%s", rc, rc == GB_OK ? "" : err.msg);
    return 0;
}

static void read_all(int fd, char *buf, size_t n)
{
    size_t len = 0;
    ssize_t got;
    while (len + 1 < n && (got = read(fd, buf + len, n - 1 - len)) > 0)
        len += (size_t)got;
    buf[len] = '\0';
}

/* The --others mode: the processes gb_nvml_other_processes() counts with
 * GPUBENCH_LIBNVML set to lib and GB_FAKE_NVML_PIDS to pids (tests/fake_nvml.c). */
static int others_child(const char *lib, const char *pids)
{
    setenv("GPUBENCH_LIBNVML", lib, 1);
    setenv("GB_FAKE_NVML_PIDS", pids, 1);
    gb_nvml_device *dev = NULL;
    gb_err err = {0};
    int n = -1, rc = gb_nvml_open(ANY_BUS_ID, &dev, &err);
    if (rc == GB_OK) rc = gb_nvml_other_processes(dev, &n, &err);
    gb_nvml_close(dev);
    printf("%d\n%s", rc, rc == GB_OK ? "" : err.msg);
    if (rc == GB_OK) printf("%d", n);
    return 0;
}

/* Runs "test_nvml MODE lib [pids]" and parses what it printed. */
static open_result run_in_fresh_process(const char *mode, const char *lib, const char *pids)
{
    open_result result = {.rc = 1};
    char out[GB_ERR_MSG_BYTES + 32];
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(fds[1], STDOUT_FILENO);
        close(fds[0]);
        close(fds[1]);
        execl("/proc/self/exe", "test_nvml", mode, lib, pids, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    read_all(fds[0], out, sizeof out);
    close(fds[0]);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    char *msg = NULL;
    result.rc = (int)strtol(out, &msg, 10);
    snprintf(result.msg, sizeof result.msg, "%s", *msg == '\n' ? msg + 1 : msg);
    return result;
}

static open_result open_in_fresh_process(const char *lib)
{
    return run_in_fresh_process("--open", lib, NULL);
}

static void assert_contains(const char *text, const char *part)
{
    if (!strstr(text, part)) fail_msg("\"%s\" does not contain \"%s\"", text, part);
}

static void test_open_without_nvml_is_no_driver_naming_the_library(void **state)
{
    open_result r = open_in_fresh_process("-");
    if (r.rc == GB_OK || r.rc == GB_ENOTFOUND) skip(); /* NVML is installed here */
    assert_int_equal(r.rc, GB_ENODRIVER);
    assert_contains(r.msg, "libnvidia-ml.so.1");
}

static void test_libnvml_naming_a_missing_file_names_that_file(void **state)
{
    open_result r = open_in_fresh_process(MISSING_LIB);
    assert_int_equal(r.rc, GB_ENODRIVER);
    assert_contains(r.msg, MISSING_LIB);
}

static void test_a_library_without_nvml_entry_points_names_the_missing_one(void **state)
{
    open_result r = open_in_fresh_process("libc.so.6");
    assert_int_equal(r.rc, GB_ENODRIVER);
    assert_contains(r.msg, "libc.so.6 has no nvml");
}

static void test_open_without_a_bus_id_is_invalid(void **state)
{
    gb_nvml_device *dev = (gb_nvml_device *)&dev;
    gb_err err = {0};
    assert_int_equal(gb_nvml_open("", &dev, &err), GB_EINVAL);
    assert_null(dev);
}

static void test_close_null_is_a_no_op(void **state)
{
    gb_nvml_close(NULL);
}

static void test_throttling_reasons_are_the_slowdowns_only(void **state)
{
    assert_int_equal(GB_NVML_THROTTLE_REASONS, 0x04 | 0x08 | 0x20 | 0x40 | 0x80);
    assert_false(GB_NVML_THROTTLE_REASONS &
                 (GB_NVML_REASON_GPU_IDLE | GB_NVML_REASON_SYNC_BOOST |
                  GB_NVML_REASON_APPLICATIONS_CLOCKS | GB_NVML_REASON_DISPLAY_CLOCK));
}

static void test_reasons_text_names_known_bits_in_order(void **state)
{
    char buf[GB_NVML_REASONS_TEXT_BYTES];
    unsigned long long reasons = GB_NVML_REASON_HW_THERMAL_SLOWDOWN | GB_NVML_REASON_SW_POWER_CAP;
    assert_string_equal(gb_nvml_reasons_text(reasons, buf, sizeof buf), "sw_power_cap,hw_thermal");
    assert_string_equal(gb_nvml_reasons_text(GB_NVML_REASON_GPU_IDLE, buf, sizeof buf), "gpu_idle");
}

static void test_reasons_text_of_zero_is_none(void **state)
{
    char buf[GB_NVML_REASONS_TEXT_BYTES];
    assert_string_equal(gb_nvml_reasons_text(0, buf, sizeof buf), "none");
}

static void test_reasons_text_shows_unknown_bits_in_hex(void **state)
{
    char buf[GB_NVML_REASONS_TEXT_BYTES];
    unsigned long long unknown = 1ULL << 40 | 1ULL << 63;
    assert_string_equal(gb_nvml_reasons_text(unknown, buf, sizeof buf),
                        "unknown(0x8000010000000000)");
    assert_string_equal(gb_nvml_reasons_text(unknown | GB_NVML_REASON_HW_SLOWDOWN, buf, sizeof buf),
                        "hw_slowdown,unknown(0x8000010000000000)");
}

static void test_reasons_text_fits_every_bit_and_truncates_small_buffers(void **state)
{
    char buf[GB_NVML_REASONS_TEXT_BYTES];
    gb_nvml_reasons_text(~0ULL, buf, sizeof buf);
    assert_true(strlen(buf) < sizeof buf - 1);
    assert_contains(buf, "gpu_idle,applications_clocks,sw_power_cap,hw_slowdown,sync_boost,");
    assert_contains(buf, ",reliability,unknown(0xfffffffffffff800)");

    char small[8] = "xxxxxxx";
    assert_string_equal(gb_nvml_reasons_text(GB_NVML_REASON_SW_POWER_CAP, small, 8), "sw_powe");
    assert_string_equal(gb_nvml_reasons_text(GB_NVML_REASON_SW_POWER_CAP, small, 0), "");
    assert_string_equal(small, "sw_powe");
}

/* The bus id of CUDA device 0, or NULL without a driver or a device. */
static const char *cuda_device_bus_id(void)
{
    static char bus_id[64];
    CUdevice dev;
    gb_err ignored;
    if (gb_driver_load(&ignored) != GB_OK || !gb_cu.cuDeviceGetPCIBusId ||
        gb_cu.cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
        gb_cu.cuDeviceGetPCIBusId(bus_id, sizeof bus_id, dev) != CUDA_SUCCESS)
        return NULL;
    return bus_id;
}

/* The other processes on the fake NVML's GPU (tests/fake_nvml.c) whose compute
 * process list is pids; fails the test when the query fails. */
static int others_with_fake_nvml(const char *pids)
{
    char lib[4096];
    const char *bin = getenv("GB_BINARY_DIR");
    snprintf(lib, sizeof lib, "%s/tests/libfake_nvml.so", bin ? bin : ".");
    open_result r = run_in_fresh_process("--others", lib, pids);
    if (r.rc != GB_OK) fail_msg("gb_nvml_other_processes with %s: %s", lib, r.msg);
    return (int)strtol(r.msg, NULL, 10);
}

static void test_other_processes_are_the_other_pids_when_ours_is_listed(void **state)
{
    assert_int_equal(others_with_fake_nvml("self"), 0);
    assert_int_equal(others_with_fake_nvml("self,4242"), 1);
    assert_int_equal(others_with_fake_nvml("4242,self,4242,777"), 2); /* pids, not entries */
}

static void test_other_processes_are_the_count_less_one_when_ours_is_not_listed(void **state)
{
    /* A PID namespace: NVML lists the host's pids, ours among them unrecognised. */
    assert_int_equal(others_with_fake_nvml("4242"), 0);
    assert_int_equal(others_with_fake_nvml("4242,777"), 1);
    assert_int_equal(others_with_fake_nvml(""), 0); /* NVML shows nothing at all */
}

static void test_a_process_list_longer_than_the_buffer_counts_all_but_one(void **state)
{
    char pids[1024] = "self";
    for (int i = 1; i < 100; i++)
        snprintf(pids + strlen(pids), sizeof pids - strlen(pids), ",%d", 10000 + i);
    assert_int_equal(others_with_fake_nvml(pids), 99);
}

/* The device at GB_TEST_PCI_BUS_ID, else CUDA device 0's; NULL (and the test
 * skips) when there is none. */
static gb_nvml_device *open_test_device(void)
{
    const char *bus_id = getenv("GB_TEST_PCI_BUS_ID");
    if (!bus_id || !*bus_id) bus_id = cuda_device_bus_id();
    if (!bus_id) return NULL;
    gb_nvml_device *dev = NULL;
    gb_err err = {0};
    int rc = gb_nvml_open(bus_id, &dev, &err);
    if (rc == GB_ENODRIVER) {
        print_message("NVML unavailable: %s\n", err.msg);
        return NULL;
    }
    if (rc != GB_OK) fail_msg("gb_nvml_open(%s): %s", bus_id, err.msg);
    return dev;
}

static void test_sm_clock_is_positive_and_at_most_the_max(void **state)
{
    gb_nvml_device *dev = open_test_device();
    if (!dev) skip();
    double sm_mhz = 0, max_mhz = 0;
    gb_err err = {0};
    assert_int_equal(gb_nvml_sm_clock(dev, &sm_mhz, &err), GB_OK);
    assert_int_equal(gb_nvml_max_sm_clock(dev, &max_mhz, &err), GB_OK);
    print_message("SM clock %.0f MHz of at most %.0f MHz\n", sm_mhz, max_mhz);
    assert_true(sm_mhz > 0 && max_mhz > 0);
    assert_true(sm_mhz <= max_mhz * 1.01); /* NVML: P0 clocks may pass the max by a few MHz */
    gb_nvml_close(dev);
}

static void test_throttled_agrees_with_the_reasons_it_returns(void **state)
{
    gb_nvml_device *dev = open_test_device();
    if (!dev) skip();
    bool throttled = true;
    unsigned long long reasons = ~0ULL;
    char text[GB_NVML_REASONS_TEXT_BYTES];
    gb_err err = {0};
    assert_int_equal(gb_nvml_throttled(dev, &throttled, &reasons, &err), GB_OK);
    print_message("reasons %s\n", gb_nvml_reasons_text(reasons, text, sizeof text));
    assert_int_equal(throttled, (reasons & GB_NVML_THROTTLE_REASONS) != 0);
    assert_int_equal(gb_nvml_throttled(dev, &throttled, NULL, &err), GB_OK);
    gb_nvml_close(dev);
}

static void test_bus_ids_without_a_gpu_are_not_found(void **state)
{
    gb_nvml_device *dev = open_test_device();
    if (!dev) skip();
    const char *bus_ids[] = {MISSING_BUS_ID, "not-a-bus-id"};
    for (size_t i = 0; i < 2; i++) {
        gb_nvml_device *missing = (gb_nvml_device *)&missing;
        gb_err err = {0};
        assert_int_equal(gb_nvml_open(bus_ids[i], &missing, &err), GB_ENOTFOUND);
        assert_null(missing);
        assert_contains(err.msg, bus_ids[i]);
    }
    gb_nvml_close(dev);
}

static void test_nvml_stays_up_until_the_last_device_closes_and_starts_again(void **state)
{
    gb_nvml_device *first = open_test_device();
    if (!first) skip();
    gb_nvml_device *second = open_test_device();
    double mhz = 0;
    gb_err err = {0};
    gb_nvml_close(first);
    assert_int_equal(gb_nvml_sm_clock(second, &mhz, &err), GB_OK);
    gb_nvml_close(second);
    gb_nvml_device *again = open_test_device(); /* after nvmlShutdown */
    assert_non_null(again);
    assert_int_equal(gb_nvml_sm_clock(again, &mhz, &err), GB_OK);
    gb_nvml_close(again);
}

static void test_other_processes_on_a_real_gpu_can_be_counted(void **state)
{
    gb_nvml_device *dev = open_test_device();
    if (!dev) skip();
    int n = -1;
    gb_err err = {0};
    int rc = gb_nvml_other_processes(dev, &n, &err);
    if (rc == GB_ENOTFOUND) skip(); /* a driver without the query */
    assert_int_equal(rc, GB_OK);
    print_message("%d other process(es) on the GPU\n", n);
    assert_true(n >= 0);
    gb_nvml_close(dev);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--open") == 0) return open_child(argv[2]);
    if (argc == 4 && strcmp(argv[1], "--others") == 0) return others_child(argv[2], argv[3]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_open_without_nvml_is_no_driver_naming_the_library),
        cmocka_unit_test(test_libnvml_naming_a_missing_file_names_that_file),
        cmocka_unit_test(test_a_library_without_nvml_entry_points_names_the_missing_one),
        cmocka_unit_test(test_open_without_a_bus_id_is_invalid),
        cmocka_unit_test(test_close_null_is_a_no_op),
        cmocka_unit_test(test_throttling_reasons_are_the_slowdowns_only),
        cmocka_unit_test(test_reasons_text_names_known_bits_in_order),
        cmocka_unit_test(test_reasons_text_of_zero_is_none),
        cmocka_unit_test(test_reasons_text_shows_unknown_bits_in_hex),
        cmocka_unit_test(test_reasons_text_fits_every_bit_and_truncates_small_buffers),
        cmocka_unit_test(test_sm_clock_is_positive_and_at_most_the_max),
        cmocka_unit_test(test_throttled_agrees_with_the_reasons_it_returns),
        cmocka_unit_test(test_bus_ids_without_a_gpu_are_not_found),
        cmocka_unit_test(test_nvml_stays_up_until_the_last_device_closes_and_starts_again),
        cmocka_unit_test(test_other_processes_are_the_other_pids_when_ours_is_listed),
        cmocka_unit_test(test_other_processes_are_the_count_less_one_when_ours_is_not_listed),
        cmocka_unit_test(test_a_process_list_longer_than_the_buffer_counts_all_but_one),
        cmocka_unit_test(test_other_processes_on_a_real_gpu_can_be_counted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
