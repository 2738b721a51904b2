/* gpubench-tune --arch and --compile-only as a user meets them: a target NVRTC
 * does not compile for is refused before anything is compiled, and the table of
 * compiles ends with its summary line. Runs the real binary from
 * GB_BINARY_DIR/cli; needs NVRTC, never a GPU. */
#include "scratch.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct fixture {
    char dir[64];
    char cache[128];
    int status;
    char out[1 << 16];
    char err[1 << 16];
} fixture;

/* Runs gpubench-tune with the arguments (NULL-terminated), capturing its output. */
#define tune(f, ...)                                                                               \
    do {                                                                                           \
        (f)->status = scratch_tune((f)->dir, (f)->out, sizeof(f)->out, (f)->err, sizeof(f)->err,   \
                                   __VA_ARGS__);                                                   \
        assert_true((f)->status >= 0);                                                             \
    } while (0)

static void write_script(fixture *f, const char *name, const char *text)
{
    assert_int_equal(scratch_write(f->dir, name, text), 0);
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f) return -1;
    snprintf(f->dir, sizeof f->dir, "/tmp/gb-test-cli-compile-XXXXXX");
    if (!mkdtemp(f->dir)) return -1;
    snprintf(f->cache, sizeof f->cache, "%s/cache", f->dir);
    if (chdir(f->dir) != 0) return -1;
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

/* Two variants that compile in a blink; the second with a larger block. */
static const char TINY[] =
    "local gb = require 'gpubench'\n"
    "local k = gb.kernel { name = 'tiny', entry = 'scale<${S}>',\n"
    "  source = [[template <int S> __global__ void scale(float *x, int n)\n"
    "    { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= S; }]],\n"
    "  params = { S = {2, 3, 4} },\n"
    "  constraints = { function(c) return c.S ~= 4 end },\n"
    "  args = function(s) return { gb.tensor('f32', {s.N}, 'randn'), gb.i32(s.N) } end,\n"
    "  grid = function(c, s) return gb.cdiv(s.N, 256) end, block = 256 }\n"
    "gb.tune(k, { shapes = { {N = 1024} } })\n";

/* V = 2 and 3 fail their static_assert, each with its own message. */
static const char ERRORS[] =
    "local gb = require 'gpubench'\n"
    "local k = gb.kernel { name = 'e', entry = 'k<${V}>', params = { V = {1, 2, 3} },\n"
    "  source = 'template <int V> __global__ void k(float *x)\\n"
    "{ static_assert(V != 2, \"V must not be 2\");\\n"
    "  static_assert(V != 3, \"V must not be 3\"); x[0] = V; }',\n"
    "  args = function(s) return { gb.tensor('f32', {4}) } end, grid = 1, block = 1 }\n"
    "gb.tune(k, { shapes = { {N = 1} } })\n";

static int oldest_nvrtc_arch(void)
{
    int n = 0, archs[64];
    assert_int_equal(nvrtcGetNumSupportedArchs(&n), NVRTC_SUCCESS);
    assert_true(n > 0 && n <= 64);
    assert_int_equal(nvrtcGetSupportedArchs(archs), NVRTC_SUCCESS);
    return archs[0];
}

static void test_an_arch_nvrtc_lacks_exits_2_before_anything_is_compiled(void **state)
{
    fixture *f = *state;
    write_script(f, "tiny.lua", TINY);
    char arch[16], oldest[16];
    snprintf(arch, sizeof arch, "sm_%d", oldest_nvrtc_arch() - 1);
    snprintf(oldest, sizeof oldest, "sm_%d ", oldest_nvrtc_arch());
    tune(f, "tiny.lua", "--compile-only", "--arch", arch, "--cache", f->cache, NULL);
    assert_int_equal(f->status, 2);
    assert_non_null(strstr(f->err, "gpubench-tune: --arch: NVRTC "));
    assert_non_null(strstr(f->err, "does not compile for"));
    assert_non_null(strstr(f->err, oldest)); /* the list of what it does compile for */
    assert_string_equal(f->out, "");
    assert_int_equal(access(f->cache, F_OK), -1); /* the cache was not even opened */
}

static void test_malformed_and_virtual_archs_exit_2_with_what_a_target_looks_like(void **state)
{
    fixture *f = *state;
    write_script(f, "tiny.lua", TINY);
    tune(f, "tiny.lua", "--arch", "compute_90", "--cache", f->cache, NULL);
    assert_int_equal(f->status, 2);
    assert_non_null(strstr(f->err, "virtual architecture"));
    tune(f, "tiny.lua", "--arch", "90a", "--cache", f->cache, NULL);
    assert_int_equal(f->status, 2);
    assert_non_null(strstr(f->err, "sm_XY, sm_XYa or sm_XYf"));
    tune(f, "tiny.lua", "--arch", "sm_80a", "--cache", f->cache, NULL); /* never existed */
    assert_int_equal(f->status, 2);
    assert_non_null(strstr(f->err, "does not compile for sm_80a"));
}

/* Writes TINY as name with its text `old` (which it must hold) replaced by `new`. */
static void write_tiny_with(fixture *f, const char *name, const char *old, const char *new)
{
    char script[sizeof TINY + 128];
    const char *at = strstr(TINY, old);
    assert_non_null(at);
    snprintf(script, sizeof script, "%.*s%s%s", (int)(at - TINY), TINY, new, at + strlen(old));
    write_script(f, name, script);
}

/* Constraints that leave nothing are no valid configuration, as a timed run
 * says: exit 1, the shape named with how many were rejected; a shard that owns
 * nothing of a space is not. */
static void test_compile_only_with_no_valid_configuration_exits_1(void **state)
{
    fixture *f = *state;
    write_tiny_with(f, "none.lua", "c.S ~= 4", "c.S >= 9");
    tune(f, "none.lua", "--compile-only", "--arch", "sm_90a", "--cache", f->cache, NULL);
    assert_int_equal(f->status, 1);
    assert_non_null(strstr(f->out, "0 compiled, 0 failed, 3 rejected by constraints"));
    assert_non_null(strstr(f->err, "tiny [N=1024]: no valid configuration: the constraints "
                                   "rejected all 3 of the space"));
    write_script(f, "tiny.lua", TINY);
    tune(f, "tiny.lua", "--compile-only", "--arch", "sm_90a", "--shard", "3/4", "--cache", f->cache,
         NULL);
    assert_int_equal(f->status, 0);
}

/* An args list that does not match the kernel's parameters, found without a GPU
 * from the cubin (count and sizes), at the args line with both lists: exit 1;
 * compiled again from the cache, the same. */
static void test_compile_only_checks_args_against_the_kernels_parameters(void **state)
{
    fixture *f = *state;
    write_tiny_with(f, "extra.lua", "gb.tensor('f32', {s.N}, 'randn'), gb.i32(s.N)",
                    "gb.tensor('f32', {s.N}, 'randn'), gb.i32(s.N), gb.f32(1)");
    for (int run = 0; run < 2; run++) {
        tune(f, "extra.lua", "--compile-only", "--arch", "sm_90a", "--cache", f->cache, NULL);
        assert_int_equal(f->status, 1);
        assert_non_null(strstr(f->err, "tiny [N=1024]: extra.lua:7: args gives 3 arguments "
                                       "(tensor (a pointer), i32, f32: 8, 4, 4 bytes) but the "
                                       "kernel takes 2 parameters (8, 4 bytes)"));
    }
    write_tiny_with(f, "wide.lua", "gb.tensor('f32', {s.N}, 'randn'), gb.i32(s.N)",
                    "gb.tensor('f32', {s.N}, 'randn'), gb.i64(s.N)");
    tune(f, "wide.lua", "--compile-only", "--arch", "sm_90a", "--cache", f->cache, NULL);
    assert_int_equal(f->status, 1);
    assert_non_null(strstr(f->err, "args gives 2 arguments (tensor (a pointer), i64: 8, 8 "
                                   "bytes) but the kernel takes 2 parameters (8, 4 bytes)"));
}

/* An entry NVRTC cannot resolve (a template argument too many) is told at the
 * gb.kernel line with the entry as written, once for all configurations, not at
 * NVRTC's own file for name expressions (__nv_name_map). */
static void test_an_entry_that_names_no_instance_is_told_at_the_kernels_line(void **state)
{
    fixture *f = *state;
    write_tiny_with(f, "entry.lua", "'scale<${S}>'", "'scale<${S}, 3>'");
    tune(f, "entry.lua", "--compile-only", "--arch", "sm_90a", "--cache", f->cache, NULL);
    assert_int_equal(f->status, 1);
    assert_non_null(strstr(f->out, "error 1 (2 configurations): entry.lua:2: error: entry "
                                   "'scale<${S}, 3>': cannot determine which instance of function "
                                   "template \"scale\" is intended"));
    assert_null(strstr(f->out, "error 2"));
}

static void test_the_compile_only_table_ends_with_its_summary_line(void **state)
{
    fixture *f = *state;
    write_script(f, "tiny.lua", TINY);
    tune(f, "tiny.lua", "--compile-only", "--arch", "sm_90a", "--jobs", "2", "--cache", f->cache,
         NULL);
    assert_int_equal(f->status, 0);
    assert_non_null(strstr(f->out, "S=2"));
    assert_non_null(strstr(f->out, "2 compiled, 0 failed, 1 rejected by constraints; NVRTC "));
    assert_non_null(strstr(f->out, " s over 2 threads\n"));
    tune(f, "tiny.lua", "--compile-only", "--arch", "sm_90a", "--jobs", "2", "--cache", f->cache,
         NULL);
    assert_non_null(strstr(f->out, "2 compiled (2 from the cache), 0 failed"));
}

/* The compiles a --compile-only run reports ("7 compiled, ..."). */
static int n_compiled(const fixture *f)
{
    const char *line = strstr(f->out, " compiled, ");
    while (line > f->out && line[-1] >= '0' && line[-1] <= '9')
        line--;
    return line ? atoi(line) : -1;
}

static void test_compile_only_shards_compile_every_variant_once(void **state)
{
    fixture *f = *state;
    static const char MANY[] =
        "local gb = require 'gpubench'\n"
        "local k = gb.kernel { name = 'many', entry = 'scale<${S}>',\n"
        "  source = [[template <int S> __global__ void scale(float *x) { x[0] *= S; }]],\n"
        "  params = { S = {2, 3, 4, 5, 6, 7, 8, 9} },\n"
        "  constraints = { function(c) return c.S ~= 4 end },\n"
        "  args = function(s) return { gb.tensor('f32', {4}) } end, grid = 1, block = 1 }\n"
        "gb.tune(k, { shapes = { {N = 4} } })\n";
    char outs[2][1 << 14];
    int total = 0;
    write_script(f, "many.lua", MANY);
    for (int i = 0; i < 2; i++) {
        tune(f, "many.lua", "--compile-only", "--arch", "sm_90a", "--no-cache", "--shard",
             i ? "1/2" : "0/2", NULL);
        assert_int_equal(f->status, 0);
        total += n_compiled(f);
        snprintf(outs[i], sizeof outs[i], "%.16000s", f->out);
    }
    assert_int_equal(total, 7);
    for (int v = 2; v <= 9; v++) {
        char row[8];
        snprintf(row, sizeof row, "S=%d", v);
        int where = (strstr(outs[0], row) != NULL) + (strstr(outs[1], row) != NULL);
        assert_int_equal(where, v == 4 ? 0 : 1);
    }
}

static void test_a_shard_that_does_not_make_sense_exits_2(void **state)
{
    fixture *f = *state;
    write_script(f, "tiny.lua", TINY);
    tune(f, "tiny.lua", "--compile-only", "--shard", "2/2", NULL);
    assert_int_equal(f->status, 2);
    assert_non_null(strstr(f->err, "--shard: 2/2: shard 2 is not below the count 2"));
    unsetenv("SLURM_ARRAY_TASK_ID");
    unsetenv("OMPI_COMM_WORLD_RANK");
    unsetenv("PMI_RANK");
    unsetenv("MV2_COMM_WORLD_RANK");
    unsetenv("SLURM_PROCID");
    unsetenv("JOB_COMPLETION_INDEX");
    tune(f, "tiny.lua", "--compile-only", "--shard", "auto", NULL);
    assert_int_equal(f->status, 2);
    assert_non_null(strstr(f->err, "--shard auto: no scheduler's variables are set"));
    tune(f, "tiny.lua", "--shard", "0/2", "--export-header", "t.h", NULL);
    assert_int_equal(f->status, 2);
    assert_non_null(strstr(f->err, "merge the shards' caches"));
}

static void test_each_compile_error_is_listed_once_below_the_table(void **state)
{
    fixture *f = *state;
    write_script(f, "err.lua", ERRORS);
    tune(f, "err.lua", "--compile-only", "--cache", f->cache, NULL);
    assert_int_equal(f->status, 0); /* V=1 compiled */
    assert_non_null(strstr(f->out, "error 1 (1 configuration): e.cu:2: error: static assertion "
                                   "failed with \"V must not be 2\""));
    assert_non_null(strstr(f->out, "error 2 (1 configuration): e.cu:3: error"));
    assert_non_null(strstr(f->out, "1 compiled, 2 failed, 0 rejected by constraints; NVRTC"));
    tune(f, "err.lua", "--compile-only", "-v", "--cache", f->cache, NULL);
    assert_non_null(strstr(f->out, "  error 1, in 1 configuration: V=2\n    e.cu"));
    assert_non_null(strstr(f->out, "  error 2, in 1 configuration: V=3\n    e.cu"));
    assert_null(strstr(f->out, "-v shows"));
}

/* A reference with a syntax error, and a variant of 2048 threads per block. */
static const char BAD_REFERENCE[] =
    "local gb = require 'gpubench'\n"
    "local ref = gb.kernel { name = 'badref', entry = 'r',\n"
    "  source = 'extern \"C\" __global__ void r(float *x) { x[0] = ; }',\n"
    "  grid = 1, block = 1 }\n"
    "local k = gb.kernel { name = 'big', entry = 'k<${B}>', params = { B = {256, 2048} },\n"
    "  source = 'template <int B> __global__ void k(float *x) { x[threadIdx.x] = B; }',\n"
    "  args = function(s) return { gb.tensor('f32', {4096}, 'output') } end,\n"
    "  grid = 1, block = function(c) return c.B end, reference = ref }\n"
    "gb.tune(k, { shapes = { {N = 1} } })\n";

/* Compiling only finds a reference that does not compile (exit 1, the shape
 * fails naming it) and a variant over the target's limits, with no GPU. */
static void test_compile_only_compiles_the_reference_and_checks_limits(void **state)
{
    fixture *f = *state;
    write_script(f, "badref.lua", BAD_REFERENCE);
    tune(f, "badref.lua", "--compile-only", "--arch", "sm_90a", "--cache", f->cache, NULL);
    assert_int_equal(f->status, 1);
    assert_non_null(strstr(f->err, "reference badref: "));
    assert_non_null(strstr(f->out, "expected an expression"));
    assert_non_null(strstr(f->out, "2048 threads per block"));
    assert_non_null(strstr(f->out, "1 over sm_90a's limits"));
}

/* A reference whose parameters are not the arguments every kernel of the shape
 * is given: found from its cubin without a GPU, named, with both lists. */
static const char REFERENCE_ONE_SHORT[] =
    "local gb = require 'gpubench'\n"
    "local ref = gb.kernel { name = 'shortref', entry = 'r',\n"
    "  source = 'extern \"C\" __global__ void r(float *x) { x[0] = 1; }',\n"
    "  grid = 1, block = 1 }\n"
    "local k = gb.kernel { name = 'k', entry = 'k',\n"
    "  source = 'extern \"C\" __global__ void k(float *x, int n) { x[0] = n; }',\n"
    "  args = function(s) return { gb.tensor('f32', {4}, 'output'), gb.i32(4) } end,\n"
    "  grid = 1, block = 1, reference = ref }\n"
    "gb.tune(k, { shapes = { {N = 1} } })\n";

static void test_compile_only_checks_args_against_the_references_parameters(void **state)
{
    fixture *f = *state;
    write_script(f, "shortref.lua", REFERENCE_ONE_SHORT);
    tune(f, "shortref.lua", "--compile-only", "--arch", "sm_90a", "--cache", f->cache, NULL);
    assert_int_equal(f->status, 1);
    assert_non_null(strstr(f->err, "k [N=1]: reference shortref: shortref.lua:7: args gives 2 "
                                   "arguments (tensor (a pointer), i32: 8, 4 bytes) but the "
                                   "reference takes 1 parameter (8 bytes)"));
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_an_arch_nvrtc_lacks_exits_2_before_anything_is_compiled),
        T(test_malformed_and_virtual_archs_exit_2_with_what_a_target_looks_like),
        T(test_the_compile_only_table_ends_with_its_summary_line),
        T(test_compile_only_with_no_valid_configuration_exits_1),
        T(test_compile_only_checks_args_against_the_kernels_parameters),
        T(test_an_entry_that_names_no_instance_is_told_at_the_kernels_line),
        T(test_each_compile_error_is_listed_once_below_the_table),
        T(test_compile_only_compiles_the_reference_and_checks_limits),
        T(test_compile_only_checks_args_against_the_references_parameters),
        T(test_compile_only_shards_compile_every_variant_once),
        T(test_a_shard_that_does_not_make_sense_exits_2),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
