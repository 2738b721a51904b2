/* The command-line tools as a user meets them: help, versions, exit statuses and
 * messages. The binaries come from GB_BINARY_DIR/cli (ctest sets it). Tests that
 * pin the no-GPU behaviour skip on a machine with a GPU driver. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

typedef struct run_result {
    int status;
    char out[1 << 16];
    char err[1 << 16];
} run_result;

typedef struct fixture {
    char dir[64];
    char cache[128];
    run_result r;
} fixture;

static void read_all(const char *path, char *buf, size_t n)
{
    FILE *f = fopen(path, "r");
    size_t got = f ? fread(buf, 1, n - 1, f) : 0;
    buf[got] = '\0';
    if (f) fclose(f);
}

/* Runs bin/<tool> with the arguments (NULL-terminated) and captures its output;
 * with interrupt_after_ms > 0, sends it SIGINT that long after it starts. */
static void run_interrupted(fixture *f, int interrupt_after_ms, const char *tool, va_list ap);

static void run(fixture *f, const char *tool, ...)
{
    va_list ap;
    va_start(ap, tool);
    run_interrupted(f, 0, tool, ap);
    va_end(ap);
}

static void run_with_sigint(fixture *f, int after_ms, const char *tool, ...)
{
    va_list ap;
    va_start(ap, tool);
    run_interrupted(f, after_ms, tool, ap);
    va_end(ap);
}

static void run_interrupted(fixture *f, int interrupt_after_ms, const char *tool, va_list ap)
{
    char exe[4096], out_path[128], err_path[128];
    snprintf(exe, sizeof exe, "%s/cli/%s", getenv("GB_BINARY_DIR"), tool);
    snprintf(out_path, sizeof out_path, "%s/stdout", f->dir);
    snprintf(err_path, sizeof err_path, "%s/stderr", f->dir);
    char *argv[32] = {exe};
    int argc = 1;
    for (char *a; argc < 31 && (a = va_arg(ap, char *));)
        argv[argc++] = a;
    argv[argc] = NULL;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid;
    assert_int_equal(posix_spawn(&pid, exe, &fa, NULL, argv, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    if (interrupt_after_ms > 0) {
        usleep((useconds_t)interrupt_after_ms * 1000);
        kill(pid, SIGINT);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    f->r.status = WEXITSTATUS(status);
    read_all(out_path, f->r.out, sizeof f->r.out);
    read_all(err_path, f->r.err, sizeof f->r.err);
}

static void write_script(fixture *f, const char *name, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", f->dir, name);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/gb-test-cli-XXXXXX");
    if (!mkdtemp(f->dir)) return -1;
    snprintf(f->cache, sizeof f->cache, "%s/cache", f->dir);
    assert_int_equal(chdir(f->dir), 0);
    *state = f;
    return 0;
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    return remove(path);
}

static int teardown(void **state)
{
    fixture *f = *state;
    nftw(f->dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
    free(f);
    return 0;
}

static bool have_driver(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib) dlclose(lib);
    return lib != NULL;
}

/* A kernel small enough to compile in a blink, with two variants. */
static const char TINY[] =
    "local gb = require 'gpubench'\n"
    "local k = gb.kernel { name = 'tiny', entry = 'scale<${S}>',\n"
    "  source = [[template <int S> __global__ void scale(float *x, int n)\n"
    "    { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= S; }]],\n"
    "  params = { S = {2, 3} },\n"
    "  args = function(s) return { gb.tensor('f32', {s.N}, 'randn'), gb.i32(s.N) } end,\n"
    "  grid = function(c, s) return gb.cdiv(s.N, 256) end, block = 256 }\n"
    "gb.tune(k, { shapes = { {N = 1024} } })\n";

static void test_gpubench_version_and_help(void **state)
{
    fixture *f = *state;
    run(f, "gpubench", "--version", NULL);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, "gpubench 0."));
    run(f, "gpubench", "--help", NULL);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, "tune SCRIPT"));
    assert_non_null(strstr(f->r.out, "cache ls"));
}

static void test_gpubench_tune_help_lists_the_options(void **state)
{
    fixture *f = *state;
    run(f, "gpubench-tune", "--help", NULL);
    assert_int_equal(f->r.status, 0);
    const char *options[] = {"--cache DIR", "--force",       "--compile-only",
                             "--arch",      "--require-gpu", "--lease-wait S"};
    for (size_t i = 0; i < sizeof options / sizeof *options; i++)
        assert_non_null(strstr(f->r.out, options[i]));
}

static void test_usage_errors_exit_with_2(void **state)
{
    fixture *f = *state;
    run(f, "gpubench-tune", NULL);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "no SCRIPT"));
    run(f, "gpubench-tune", "x.lua", "--no-such-option", NULL);
    assert_int_equal(f->r.status, 2);
    run(f, "gpubench", "frobnicate", NULL);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "unknown command 'frobnicate'"));
    run(f, "gpubench-tune", "--jobs", "many", "x.lua", NULL);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "--jobs"));
    run(f, "gpubench-tune", "--noise", "5", "x.lua", NULL);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "--noise is a fraction below 1"));
    run(f, "gpubench-tune", "--max-ms", "-1", "x.lua", NULL);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "--max-ms needs a number above 0"));
    run(f, "gpubench-tune", "--mode", "warm", "x.lua", NULL);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "--mode"));
    run(f, "gpubench-tune", "--lease-wait", "soon", "x.lua", NULL);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "--lease-wait needs seconds from 0 to 1e6 or 'forever'"));
    run(f, "gpubench-tune", "--lease-wait", "-5", "x.lua", NULL);
    assert_int_equal(f->r.status, 2);
}

static void test_a_script_error_exits_with_2_and_names_the_line(void **state)
{
    fixture *f = *state;
    write_script(f, "bad.lua",
                 "local gb = require 'gpubench'\n\nlocal k = gb.kernel { nme = 'x' }\n");
    run(f, "gpubench-tune", "bad.lua", "--cache", f->cache, NULL);
    assert_int_equal(f->r.status, 2);
    assert_non_null(
        strstr(f->r.err, "bad.lua:3: gb.kernel: unknown field 'nme' (did you mean 'name'?)"));
    run(f, "gpubench-tune", "missing.lua", "--cache", f->cache, NULL);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "missing.lua"));
}

static void test_without_a_gpu_every_variant_is_compiled_and_the_run_succeeds(void **state)
{
    fixture *f = *state;
    if (have_driver()) skip();
    write_script(f, "tiny.lua", TINY);
    run(f, "gpubench-tune", "tiny.lua", "--cache", f->cache, NULL);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.err, "timing needs a GPU"));
    assert_non_null(strstr(f->r.out, "S=2"));
    assert_non_null(strstr(f->r.out, "S=3"));
    assert_non_null(strstr(f->r.out, "regs"));
}

static void test_require_gpu_exits_with_3_without_a_gpu(void **state)
{
    fixture *f = *state;
    if (have_driver()) skip();
    write_script(f, "tiny.lua", TINY);
    run(f, "gpubench-tune", "tiny.lua", "--require-gpu", "--cache", f->cache, NULL);
    assert_int_equal(f->r.status, 3);
    assert_non_null(strstr(f->r.err, "libcuda.so.1"));
    run(f, "gpubench-tune", "tiny.lua", "--lease-wait", "forever", "--cache", f->cache, NULL);
    assert_int_equal(f->r.status, 0); /* compiling only: no lease, no wait */
}

static void test_compile_only_reports_compile_errors_without_failing_the_run(void **state)
{
    fixture *f = *state;
    write_script(
        f, "err.lua",
        "local gb = require 'gpubench'\n"
        "local k = gb.kernel { name = 'e', entry = 'k<${V}>', params = { V = {1, 2} },\n"
        "  source = 'template <int V> __global__ void k(float *x)\\n"
        "{ static_assert(V == 1, \"V must be 1\"); }',\n"
        "  args = function(s) return { gb.tensor('f32', {4}) } end, grid = 1, block = 1 }\n"
        "gb.tune(k, { shapes = { {N = 1} } })\n");
    run(f, "gpubench-tune", "err.lua", "--compile-only", "--cache", f->cache, NULL);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, "error: e.cu:2: error"));
    assert_non_null(strstr(f->r.out, "V must be 1"));
}

static void test_cache_ls_and_path(void **state)
{
    fixture *f = *state;
    run(f, "gpubench", "cache", "path", "--cache", f->cache, NULL);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, f->cache));
    run(f, "gpubench", "cache", "ls", "--cache", f->cache, NULL);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, "no cache here yet"));
    assert_int_equal(access(f->cache, F_OK), -1); /* looking creates nothing */
    write_script(f, "tiny.lua", TINY);
    run(f, "gpubench-tune", "tiny.lua", "--compile-only", "--cache", f->cache, NULL);
    run(f, "gpubench", "cache", "ls", "--cache", f->cache, NULL);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, "0 tuned shape(s)"));
}

static void test_a_corrupt_cache_is_named_and_exits_with_2(void **state)
{
    fixture *f = *state;
    mkdir(f->cache, 0755);
    write_script(f, "cache/data.mdb",
                 "this is not an LMDB file, not at all, and it is long enough\n");
    run(f, "gpubench", "cache", "ls", "--cache", f->cache, NULL);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, f->cache));
    write_script(f, "tiny.lua", TINY);
    run(f, "gpubench-tune", "tiny.lua", "--cache", f->cache, NULL);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "--cache DIR"));
}

static void test_script_arguments_reach_arg(void **state)
{
    fixture *f = *state;
    write_script(f, "args.lua",
                 "assert(arg[1] == 'one' and arg[2] == '--two', 'args')\n"
                 "print('script saw ' .. #arg)\n");
    run(f, "gpubench-tune", "args.lua", "--no-cache", "--", "one", "--two", NULL);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, "script saw 2"));
}

static void test_ctrl_c_stops_a_script_with_status_130(void **state)
{
    fixture *f = *state;
    write_script(f, "spin.lua", "local n = 0\nwhile true do n = n + 1 end\n");
    run_with_sigint(f, 500, "gpubench-tune", "spin.lua", "--no-cache", NULL);
    assert_int_equal(f->r.status, 130);
    assert_non_null(strstr(f->r.err, "interrupted"));
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_gpubench_version_and_help),
        T(test_gpubench_tune_help_lists_the_options),
        T(test_usage_errors_exit_with_2),
        T(test_a_script_error_exits_with_2_and_names_the_line),
        T(test_without_a_gpu_every_variant_is_compiled_and_the_run_succeeds),
        T(test_require_gpu_exits_with_3_without_a_gpu),
        T(test_compile_only_reports_compile_errors_without_failing_the_run),
        T(test_cache_ls_and_path),
        T(test_a_corrupt_cache_is_named_and_exits_with_2),
        T(test_script_arguments_reach_arg),
        T(test_ctrl_c_stops_a_script_with_status_130),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
