/* NVTX ranges as a profiler sees them: gpubench-tune runs under a stand-in tool
 * (tests/nvtx_recorder.c, loaded through NVTX_INJECTION64_PATH as nsys loads its
 * own), which writes down every range the tuner and its GPU worker open. Compiling
 * needs NVRTC only; the check, measure and race ranges need a GPU and are skipped
 * without one. */
#include "gpu_present.h"
#include "scratch.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine/nvtx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool tool_at_start; /* this test itself runs under a profiler */

typedef struct fixture {
    char dir[64];
    char script[128];
    char record_path[128];
    int status;
    char err[1 << 16];
    char record[1 << 16]; /* what the tool wrote down, "" when nothing */
} fixture;

/* Two variants of a kernel that scales a vector, S = 2 and 3, and a reference
 * that scales by 2: S = 3 fails its check, so only S = 2 is measured and raced. */
static const char SCALE[] =
    "local gb = require 'gpubench'\n"
    "local ref = gb.kernel { name = 'ref_scale', entry = 'ref_scale',\n"
    "  source = [[extern \"C\" __global__ void ref_scale(const float *x, float *y, int n)\n"
    "    { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = 2 * x[i]; }]],\n"
    "  grid = function(c, s) return gb.cdiv(s.N, 256) end, block = 256 }\n"
    "local k = gb.kernel { name = 'tiny', entry = 'scale<${S}>',\n"
    "  source = [[template <int S> __global__ void scale(const float *x, float *y, int n)\n"
    "    { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = S * x[i]; }]],\n"
    "  params = { S = {2, 3} },\n"
    "  args = function(s) return { gb.tensor('f32', {s.N}, 'randn'),\n"
    "                              gb.tensor('f32', {s.N}, 'output'), gb.i32(s.N) } end,\n"
    "  grid = function(c, s) return gb.cdiv(s.N, 256) end, block = 256, reference = ref }\n"
    "gb.tune(k, { shapes = { {N = 4096} } })\n";

/* Runs gpubench-tune on the script with the arguments (NULL-terminated), under the
 * recording tool when with_tool, and reads back what the tool wrote down. */
static void tune(fixture *f, bool with_tool, ...)
{
    char exe[4096], err_path[128];
    snprintf(exe, sizeof exe, "%s/cli/gpubench-tune", getenv("GB_BINARY_DIR"));
    snprintf(err_path, sizeof err_path, "%s/stderr", f->dir);
    char *argv[32] = {exe, f->script};
    int argc = 2;
    va_list ap;
    va_start(ap, with_tool);
    for (char *a; argc < 31 && (a = va_arg(ap, char *));)
        argv[argc++] = a;
    va_end(ap);
    argv[argc] = NULL;
    remove(f->record_path);
    if (with_tool)
        setenv("NVTX_INJECTION64_PATH", GB_NVTX_RECORDER, 1);
    else
        unsetenv("NVTX_INJECTION64_PATH");
    setenv("GB_NVTX_RECORD", f->record_path, 1);
    f->status = scratch_spawn(argv, "/dev/null", err_path, 0);
    unsetenv("NVTX_INJECTION64_PATH");
    assert_true(f->status >= 0);
    scratch_read(err_path, f->err, sizeof f->err);
    scratch_read(f->record_path, f->record, sizeof f->record);
}

/* How many lines of the record are exactly line. */
static int count_lines(const char *record, const char *line)
{
    int n = 0;
    size_t len = strlen(line);
    for (const char *p = record; (p = strstr(p, line)); p += len)
        n += (p == record || p[-1] == '\n') && p[len] == '\n';
    return n;
}

/* Every range closed, all of them in gpubench's domain. */
static void assert_balanced(const char *record)
{
    int pushes = 0;
    for (const char *p = record; (p = strstr(p, "push ")); p++)
        pushes += p == record || p[-1] == '\n';
    assert_true(pushes > 0);
    assert_int_equal(count_lines(record, "pop"), pushes);
    assert_null(strstr(record, "foreign-domain"));
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f) return -1;
    snprintf(f->dir, sizeof f->dir, "/tmp/gb-test-nvtx-XXXXXX");
    if (!mkdtemp(f->dir)) return -1;
    snprintf(f->script, sizeof f->script, "%s/scale.lua", f->dir);
    snprintf(f->record_path, sizeof f->record_path, "%s/record", f->dir);
    FILE *fp = fopen(f->script, "w");
    if (!fp) return -1;
    fputs(SCALE, fp);
    fclose(fp);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    scratch_remove(f->dir);
    free(f);
    return 0;
}

static void test_each_compile_is_a_range_named_by_kernel_and_configuration(void **state)
{
    fixture *f = *state;
    tune(f, true, "--compile-only", "--no-cache", "--arch", "sm_90a", "--jobs", "2", NULL);
    assert_int_equal(f->status, 0);
    assert_int_equal(count_lines(f->record, "domain gpubench"), 1);
    assert_int_equal(count_lines(f->record, "push compile tiny S=2"), 1);
    assert_int_equal(count_lines(f->record, "push compile tiny S=3"), 1);
    assert_int_equal(count_lines(f->record, "push compile ref_scale"), 1); /* no parameters */
    assert_balanced(f->record);
}

static void test_compiles_on_the_waiting_thread_are_ranges_too(void **state)
{
    fixture *f = *state;
    tune(f, true, "--compile-only", "--no-cache", "--arch", "sm_90a", "--jobs", "0", NULL);
    assert_int_equal(f->status, 0);
    assert_int_equal(count_lines(f->record, "push compile tiny S=2"), 1);
    assert_int_equal(count_lines(f->record, "push compile tiny S=3"), 1);
    assert_balanced(f->record);
}

/* The recorder is only reachable through NVTX_INJECTION64_PATH: without it nvtx3
 * loads nothing, and the run is the same. */
static void test_without_a_tool_the_run_works_and_nothing_is_recorded(void **state)
{
    fixture *f = *state;
    tune(f, false, "--compile-only", "--no-cache", "--arch", "sm_90a", NULL);
    assert_int_equal(f->status, 0);
    assert_int_equal(access(f->record_path, F_OK), -1);
    assert_string_equal(f->record, "");
    if (tool_at_start) return;
    assert_false(gb_nvtx_active()); /* and in this process, which loaded no tool */
    gb_nvtx_push("unseen %d", 1);
    gb_nvtx_pop();
}

/* On a GPU, the worker's ranges: each variant checked and measured, then the race
 * of the leaders; the reference's own run is not a range. gpubench-tune takes
 * the GPU's lease itself, waiting for it: this process must not hold it. */
static void test_a_tuning_run_names_each_check_measurement_and_the_race(void **state)
{
    fixture *f = *state;
    if (!gpu_present()) skip();
    tune(f, true, "--no-cache", "--jobs", "2", "--samples", "5", "--max-ms", "50", NULL);
    if (f->status != 0) fprintf(stderr, "%s", f->err);
    assert_int_equal(f->status, 0);
    /* With --no-cache the race compiles its leaders again: once per use at least. */
    assert_true(count_lines(f->record, "push compile tiny S=2") >= 1);
    /* A trial that saw another process on the GPU is run again: at least once. */
    assert_true(count_lines(f->record, "push check tiny S=2") >= 1);
    assert_true(count_lines(f->record, "push measure tiny S=2") >= 1);
    assert_int_equal(count_lines(f->record, "push check tiny S=3"), 1);
    assert_int_equal(count_lines(f->record, "push measure tiny S=3"), 0); /* wrong: not timed */
    assert_true(count_lines(f->record, "push race tiny") >= 1);
    assert_balanced(f->record);
}

int main(void)
{
    tool_at_start = getenv("NVTX_INJECTION64_PATH") != NULL;
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_each_compile_is_a_range_named_by_kernel_and_configuration),
        T(test_compiles_on_the_waiting_thread_are_ranges_too),
        T(test_without_a_tool_the_run_works_and_nothing_is_recorded),
        T(test_a_tuning_run_names_each_check_measurement_and_the_race),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
