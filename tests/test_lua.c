/*
 * The Lua binding: the contract of DESIGN.md section 3, as a script sees it.
 *
 * Each test writes its script to a fresh folder (so the line numbers in messages
 * are exact), runs it through gb_lua_run on a host without a GPU and checks the
 * status, the "file:line:" an error names, or what the script asserted itself (a
 * failed assert is GB_ESCRIPT, so a clean run proves the script's checks).
 *
 * The host compiles only, as on a machine with no GPU. The hooks that only run when
 * timing (args, check.outputs) are driven through a fake backend instead:
 * gb_exec_create with ops that "time" a variant by its block size, so the best
 * configuration of a run is known in advance.
 */
#include "cache/cache.h"
#include "engine/exec.h"
#include "lua/binding.h"

#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

/* ---- a fake GPU --------------------------------------------------------- */

typedef struct fake_gpu {
    int n_opened;
    int n_problems;
    int n_references;
    int n_trials;
    gb_arg args[GB_MAX_ARGS]; /* of the last problem */
    int n_args;
} fake_gpu;

static int fake_open(void *self, gb_device_info *out, gb_err *err)
{
    fake_gpu *gpu = self;
    gpu->n_opened++;
    *out = (gb_device_info){.cc_major = 9,
                            .sms = 132,
                            .smem_per_block_optin = 232448,
                            .max_threads_per_block = 1024,
                            .l2_bytes = 50 << 20,
                            .mem_bytes = 80LL << 30,
                            .peak_gbps = 3352.0,
                            .sm_clock_khz = 1980000,
                            .driver_version = 12040};
    snprintf(out->name, sizeof out->name, "Fake H100");
    snprintf(out->uuid, sizeof out->uuid, "GPU-12345678-9abc-def0-1234-56789abcdef0");
    snprintf(out->arch, sizeof out->arch, "sm_90a");
    return GB_OK;
}

static int fake_set_problem(void *self, const gb_arg *args, int n_args, uint64_t seed, gb_err *err)
{
    fake_gpu *gpu = self;
    gpu->n_problems++;
    gpu->n_args = n_args;
    memcpy(gpu->args, args, (size_t)n_args * sizeof *args);
    return GB_OK;
}

static int fake_reference(void *self, const gb_variant *ref, gb_err *err)
{
    ((fake_gpu *)self)->n_references++;
    return GB_OK;
}

/* A variant takes block.x microseconds, in each of 10 samples: the smallest block
 * wins. */
static void fake_measurement(const gb_variant *v, const gb_measure_opts *opts, gb_measurement *m)
{
    *m = (gb_measurement){.n_samples = 10, .launches_per_sample = 1, .mode = opts->mode};
    m->samples_ms = malloc(10 * sizeof *m->samples_ms);
    m->clock_mhz = calloc(10, sizeof *m->clock_mhz);
    m->throttled = calloc(10, sizeof *m->throttled);
    for (int j = 0; j < 10; j++)
        m->samples_ms[j] = v->launch.block[0] / 1000.0;
    gb_measurement_summarise(m);
}

static int fake_trial(void *self, const gb_variant *v, const gb_check_spec *check,
                      const gb_measure_opts *opts, double timeout_s, gb_trial_result *out,
                      gb_err *err)
{
    ((fake_gpu *)self)->n_trials++;
    out->status = GB_TRIAL_OK;
    fake_measurement(v, opts, &out->measurement);
    return GB_OK;
}

/* The race measures what the trial did. */
static int fake_race(void *self, const gb_variant *vs, int n, const gb_measure_opts *opts,
                     double timeout_s, gb_measurement *out, gb_err *err)
{
    for (int i = 0; i < n; i++)
        fake_measurement(&vs[i], opts, &out[i]);
    return GB_OK;
}

static void fake_close(void *self) {}

static const gb_backend_ops fake_ops = {
    .open = fake_open,
    .set_problem = fake_set_problem,
    .reference = fake_reference,
    .trial = fake_trial,
    .race = fake_race,
    .close = fake_close,
    .destroy = fake_close,
};

/* ---- the fixture -------------------------------------------------------- */

typedef struct fixture {
    char dir[64];
    char path[128]; /* the last script written */
    char templates[PATH_MAX];
    const char *template_path[1];
    gb_lua_host host;
    lua_State *L;
    gb_cache *cache;
    fake_gpu gpu;
    gb_err err;
    char *text; /* what read_back read last */
} fixture;

static int open_no_driver(void *ctx, gb_exec **out, gb_err *err)
{
    return gb_err_set(err, GB_ENODRIVER, "cannot load libcuda.so.1 (a test without a driver)");
}

static int open_fake_gpu(void *ctx, gb_exec **out, gb_err *err)
{
    fixture *f = ctx;
    return gb_exec_create(&fake_ops, &f->gpu, out, err);
}

/* The source tree: from ctest's environment, else from where this file lies. */
static void source_dir(char *out, size_t n)
{
    const char *env = getenv("GB_SOURCE_DIR");
    if (env && *env) {
        snprintf(out, n, "%s", env);
        return;
    }
    snprintf(out, n, "%s", __FILE__);
    char *tests = strstr(out, "/tests/test_lua.c");
    if (tests) *tests = '\0';
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f) return -1;
    strcpy(f->dir, "/tmp/gb-lua-XXXXXX");
    if (!mkdtemp(f->dir)) {
        free(f);
        return -1;
    }
    char src[PATH_MAX - 16];
    source_dir(src, sizeof src);
    snprintf(f->templates, sizeof f->templates, "%s/templates", src);
    f->template_path[0] = f->templates;
    gb_lua_host *h = &f->host;
    h->tuner.compile_only = true;
    h->tuner.arch = "sm_90a";
    h->tuner.seed = 1;
    h->tuner.measure = gb_measure_defaults();
    h->tuner.log = tmpfile();
    h->out = tmpfile();
    h->open_exec = open_no_driver;
    h->open_exec_ctx = f;
    h->template_path = f->template_path;
    h->n_template_path = 1;
    *state = f;
    return h->tuner.log && h->out ? 0 : -1;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    return remove(path);
}

static int teardown(void **state)
{
    fixture *f = *state;
    gb_lua_close(f->L, &f->host);
    gb_cache_close(f->cache);
    if (f->host.tuner.log) fclose(f->host.tuner.log);
    if (f->host.out) fclose(f->host.out);
    free(f->text);
    int rc = nftw(f->dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(f);
    return rc;
}

/* ---- helpers ------------------------------------------------------------ */

static void write_file(const char *path, const char *text, const char *tail)
{
    FILE *file = fopen(path, "w");
    assert_non_null(file);
    assert_true(fputs(text, file) >= 0 && fputs(tail, file) >= 0);
    assert_int_equal(fclose(file), 0);
}

/* Set by the line run_script adds after the script's own, so that a run that
 * stopped early but reported success cannot pass for a script that ran through. */
#define REACHED_THE_END "gb_test_reached_the_end"

/* Writes the script as f->dir/name and runs it in a fresh state. */
static int run_script(fixture *f, const char *name, const char *text, int argc, char **argv)
{
    snprintf(f->path, sizeof f->path, "%s/%s", f->dir, name);
    write_file(f->path, text, "\n" REACHED_THE_END " = true\n");
    gb_lua_close(f->L, &f->host);
    f->L = NULL;
    gb_err_clear(&f->err);
    assert_int_equal(gb_lua_new(&f->host, &f->L, &f->err), GB_OK);
    return gb_lua_run(f->L, f->path, argc, argv, &f->err);
}

static int run(fixture *f, const char *text)
{
    return run_script(f, "script.lua", text, 0, NULL);
}

/* Everything written to file so far. */
static const char *read_back(fixture *f, FILE *file)
{
    fflush(file);
    long n = ftell(file);
    assert_true(n >= 0);
    free(f->text);
    f->text = calloc((size_t)n + 1, 1);
    assert_non_null(f->text);
    rewind(file);
    assert_int_equal(fread(f->text, 1, (size_t)n, file), (size_t)n);
    return f->text;
}

static void use_cache(fixture *f)
{
    char dir[96];
    snprintf(dir, sizeof dir, "%s/cache", f->dir);
    assert_int_equal(gb_cache_open(dir, 0, &f->cache, &f->err), GB_OK);
    f->host.tuner.cache = f->cache;
}

/* The host of a machine with a GPU (the fake one): scripts are timed. */
static void use_fake_gpu(fixture *f)
{
    f->host.tuner.compile_only = false;
    f->host.open_exec = open_fake_gpu;
}

/* The 1-based line of text that holds marker. */
static int line_of(const char *text, const char *marker)
{
    const char *at = strstr(text, marker);
    if (!at) fail_msg("marker %s is not in the script", marker);
    int line = 1;
    for (const char *p = text; p < at; p++)
        line += *p == '\n';
    return line;
}

#define EXPECT_OK(f, rc) expect_ok(f, rc, __LINE__)
static void expect_ok(fixture *f, int rc, int test_line)
{
    if (rc != GB_OK)
        fail_msg("line %d: the script failed (%d, %s):\n%s", test_line, rc, gb_strerror(rc),
                 f->err.msg);
    lua_getglobal(f->L, REACHED_THE_END);
    bool reached = lua_toboolean(f->L, -1);
    lua_pop(f->L, 1);
    if (!reached) fail_msg("line %d: the run succeeded but the script stopped early", test_line);
}

/* A script error whose message starts with "<script>:<line>:" (at_start) or holds
 * it (a hook's error, which the tuner prefixes with the kernel), and that holds
 * every needle. */
#define EXPECT_ERROR_AT(f, rc, line, ...)                                                          \
    expect_error(f, rc, true, line, __LINE__, __VA_ARGS__, (const char *)NULL)
#define EXPECT_ERROR_NAMING(f, rc, line, ...)                                                      \
    expect_error(f, rc, false, line, __LINE__, __VA_ARGS__, (const char *)NULL)
static void expect_error(fixture *f, int rc, bool at_start, int line, int test_line, ...)
{
    char where[160];
    snprintf(where, sizeof where, "%s:%d:", f->path, line);
    if (rc != GB_ESCRIPT)
        fail_msg("line %d: expected a script error at %s, got %d (%s): %s", test_line, where, rc,
                 gb_strerror(rc), f->err.msg);
    const char *found = strstr(f->err.msg, where);
    if (!found || (at_start && found != f->err.msg))
        fail_msg("line %d: expected the message to %s %s:\n%s", test_line,
                 at_start ? "start with" : "name", where, f->err.msg);
    va_list ap;
    va_start(ap, test_line);
    for (const char *needle; (needle = va_arg(ap, const char *));)
        if (!strstr(f->err.msg, needle))
            fail_msg("line %d: expected the message to mention \"%s\":\n%s", test_line, needle,
                     f->err.msg);
    va_end(ap);
}

static void expect_text(const char *text, const char *needle)
{
    if (!strstr(text, needle)) fail_msg("expected \"%s\" in:\n%s", needle, text);
}

/* ---- scripts ------------------------------------------------------------ */

#define REQUIRE "local gb = require \"gpubench\"\n"
/* Kernels small enough to compile in a moment. */
#define SCALE_SRC                                                                                  \
    "[[extern \"C\" __global__ void scale(float *x, int n) { int i = blockIdx.x * blockDim.x "     \
    "+ threadIdx.x; if (i < n) x[i] *= 2.0f; }]]"
#define TILED_SRC                                                                                  \
    "[[template <int B> __global__ void tiled(float *x, int n) { int i = blockIdx.x * B + "        \
    "threadIdx.x; if (i < n) x[i] += 1.0f; }]]"
#define SCALE_ARGS                                                                                 \
    "  args = function(s) return { gb.tensor(\"f32\", { s.n }, \"output\"), gb.i32(s.n) } end,\n"
/* A tunable kernel: blocks of B threads, B in {64, 128, 256}. */
#define TILED_KERNEL(name)                                                                         \
    "local k = gb.kernel {\n"                                                                      \
    "  name = \"" name "\", source = " TILED_SRC ", entry = \"tiled<${B}>\",\n"                    \
    "  params = { B = { 64, 128, 256 } },\n" SCALE_ARGS                                            \
    "  grid = function(c, s) return { gb.cdiv(s.n, c.B) } end,\n"                                  \
    "  block = function(c, s) return { c.B } end,\n"                                               \
    "}\n"

/* A script whose gb.kernel call is on line 2: the fields of the scale kernel, less
 * the one named skip, plus extra lines. */
#define KERNEL_LINE 2
static const char *kernel_script(char *out, size_t n, const char *skip, const char *extra)
{
    static const char *const fields[][2] = {
        {"name", "  name = \"scale\",\n"},   {"source", "  source = " SCALE_SRC ",\n"},
        {"entry", "  entry = \"scale\",\n"}, {"grid", "  grid = 1,\n"},
        {"block", "  block = 128,\n"},
    };
    size_t len = (size_t)snprintf(out, n, REQUIRE "local k = gb.kernel {\n");
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (!skip || strcmp(skip, fields[i][0]) != 0)
            len += (size_t)snprintf(out + len, n - len, "%s", fields[i][1]);
    snprintf(out + len, n - len, "%s}\n", extra ? extra : "");
    return out;
}

/* Runs the scale kernel with one field replaced and expects an error at gb.kernel. */
static void expect_kernel_error(fixture *f, const char *skip, const char *extra, const char *needle)
{
    char text[2048];
    int rc = run(f, kernel_script(text, sizeof text, skip, extra));
    EXPECT_ERROR_AT(f, rc, KERNEL_LINE, "gb.kernel", needle);
}

/* ---- errors in the script body ------------------------------------------ */

static void test_syntax_error_names_file_and_line(void **state)
{
    fixture *f = *state;
    int rc = run(f, REQUIRE "local x = 1\n"
                            "local y = = 2\n");
    EXPECT_ERROR_AT(f, rc, 3, "unexpected symbol");
    assert_int_equal(f->host.n_tuned, 0);
}

static void test_runtime_error_names_file_and_line(void **state)
{
    fixture *f = *state;
    int rc = run(f, REQUIRE "local t = nil\n"
                            "\n"
                            "print(t.field)\n");
    EXPECT_ERROR_AT(f, rc, 4, "attempt to index a nil value", "stack traceback");
    rc = run(f, REQUIRE "error(\"no such size\")\n");
    EXPECT_ERROR_AT(f, rc, 2, "no such size");
    /* An error object that looks like the engine's still fails the run. */
    rc = run(f, REQUIRE "error({ code = 0, message = 'odd' })\n");
    assert_int_equal(rc, GB_ESCRIPT);
    expect_text(f->err.msg, "odd");
}

/* ---- gb.kernel ---------------------------------------------------------- */

static void test_kernel_well_formed_is_accepted(void **state)
{
    fixture *f = *state;
    char text[2048];
    EXPECT_OK(f, run(f, kernel_script(text, sizeof text, NULL,
                                      "  smem = 0, options = { \"-lineinfo\" }, key = { \"n\" },\n"
                                      "  check = { outputs = { 1 }, rtol = 0, atol = 1e-6 },\n")));
    assert_int_equal(f->host.n_tuned, 0);
}

static void test_kernel_unknown_field_suggests_the_nearest(void **state)
{
    fixture *f = *state;
    expect_kernel_error(f, "grid", "  gird = 1,\n", "unknown field 'gird' (did you mean 'grid'?)");
    expect_kernel_error(f, NULL, "  colour = \"blue\",\n", "unknown field 'colour'");
}

static void test_kernel_required_fields_are_named(void **state)
{
    fixture *f = *state;
    static const char *const required[] = {"name", "source", "entry", "grid", "block"};
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++) {
        char needle[64];
        snprintf(needle, sizeof needle, "field '%s' is required", required[i]);
        expect_kernel_error(f, required[i], NULL, needle);
    }
}

static void test_kernel_field_types_are_checked(void **state)
{
    fixture *f = *state;
    expect_kernel_error(f, "grid", "  grid = \"x\",\n", "field 'grid' must be a function(c, s)");
    expect_kernel_error(f, "name", "  name = 42,\n", "field 'name' must be a string");
    expect_kernel_error(f, "source", "  source = 7,\n", "field 'source' must be a string of CUDA");
    expect_kernel_error(f, NULL, "  smem = \"big\",\n",
                        "field 'smem' must be a number or a function");
    expect_kernel_error(f, NULL, "  args = { 1 },\n", "field 'args' must be a function");
    expect_kernel_error(f, NULL, "  macros = 1,\n", "field 'macros' must be a boolean");
    expect_kernel_error(f, NULL, "  options = { 1 },\n", "options[1] must be a string");
    expect_kernel_error(f, NULL, "  reference = {},\n", "field 'reference' must be a kernel");
}

static void test_kernel_name_characters(void **state)
{
    fixture *f = *state;
    expect_kernel_error(f, "name", "  name = \"my kernel\",\n", "may use only letters");
    expect_kernel_error(f, "name", "  name = \"a/b\",\n", "\"a/b\"");
    char text[2048];
    EXPECT_OK(f, run(f, kernel_script(text, sizeof text, "name", "  name = \"gemm-f32.v2_x\",\n")));
}

static void test_kernel_params_must_be_lists_of_values(void **state)
{
    fixture *f = *state;
    expect_kernel_error(f, NULL, "  params = { BM = {} },\n", "params.BM must be a non-empty list");
    expect_kernel_error(f, NULL, "  params = { BM = 64 },\n", "params.BM must be a non-empty list");
    expect_kernel_error(f, NULL, "  params = { BM = { 64, { 128 } } },\n",
                        "params.BM[2] must be a number, string or boolean, got table");
    expect_kernel_error(f, NULL, "  params = { [\"B M\"] = { 64 } },\n",
                        "is not a valid parameter name");
}

static void test_kernel_constraints_must_be_functions(void **state)
{
    fixture *f = *state;
    expect_kernel_error(f, NULL, "  constraints = { function(c) return true end, 1 },\n",
                        "constraints[2] must be a function");
    expect_kernel_error(f, NULL, "  constraints = function(c) return true end,\n",
                        "field 'constraints' must be a table");
}

static void test_kernel_check_outputs_are_positions(void **state)
{
    fixture *f = *state;
    expect_kernel_error(f, NULL, "  check = { outputs = { 0 } },\n",
                        "check.outputs[1] must be a 1-based argument position");
    expect_kernel_error(f, NULL, "  check = { outputs = { 1, 2.5 } },\n",
                        "check.outputs[2] must be a 1-based argument position");
    expect_kernel_error(f, NULL, "  check = { outputs = 3 },\n", "check.outputs must be a list");
    expect_kernel_error(f, NULL, "  check = { rtol = -1 },\n", "check.rtol must be a non-negative");
    expect_kernel_error(f, NULL, "  check = { output = { 1 } },\n",
                        "check has an unknown field 'output'");
}

static void test_kernel_reference_must_have_no_params(void **state)
{
    fixture *f = *state;
    const char *text = REQUIRE TILED_KERNEL("tiled") //
        "local k2 = gb.kernel {\n"
        "  name = \"scale\", source = " SCALE_SRC ", entry = \"scale\", grid = 1, block = 64,\n"
        "  reference = k,\n"
        "}\n";
    int rc = run(f, text);
    EXPECT_ERROR_AT(f, rc, line_of(text, "local k2"), "reference tiled has tuning parameters");
}

static void test_kernel_entry_names_only_params(void **state)
{
    fixture *f = *state;
    expect_kernel_error(f, "entry", "  entry = \"scale<${BM}>\", params = { BN = { 64 } },\n",
                        "uses ${BM}, which is not in params");
}

static void test_kernel_static_geometry_is_checked(void **state)
{
    fixture *f = *state;
    expect_kernel_error(f, "grid", "  grid = { 1, 2, 3, 4 },\n",
                        "field 'grid' must be a list of 1 to 3 sizes");
    expect_kernel_error(f, "block", "  block = 0,\n", "block[1] must be a positive integer");
    expect_kernel_error(f, "block", "  block = { 32, 0.5 },\n",
                        "block[2] must be a positive integer");
    expect_kernel_error(f, NULL, "  smem = -1,\n", "smem must be a non-negative integer");
    expect_kernel_error(f, NULL, "  flops = -1,\n", "flops must be a non-negative number");
}

/* ---- tensors and scalars ------------------------------------------------ */

/* A script whose args call gb.tensor with the given arguments on a marked line. */
static void expect_tensor_error(fixture *f, const char *tensor_call, const char *needle)
{
    char text[2048];
    snprintf(text, sizeof text,
             REQUIRE "local k = gb.kernel {\n"
                     "  name = \"scale\", source = " SCALE_SRC ", entry = \"scale\",\n"
                     "  grid = 1, block = 128,\n"
                     "  args = function(s)\n"
                     "    local x = gb.tensor(\"f32\", { s.n }, \"output\")\n"
                     "    local y = %s --@\n"
                     "    return { x, gb.i32(s.n) }\n"
                     "  end,\n"
                     "}\n"
                     "gb.tune(k, { shapes = { { n = 256 } } })\n",
             tensor_call);
    int rc = run(f, text);
    EXPECT_ERROR_NAMING(f, rc, line_of(text, "--@"), "gb.tensor", needle);
}

static void test_tensor_errors_name_the_line_in_args(void **state)
{
    fixture *f = *state;
    use_fake_gpu(f);
    expect_tensor_error(f, "gb.tensor(\"f33\", { s.n }, \"randn\")",
                        "unknown dtype string \"f33\"");
    expect_tensor_error(f, "gb.tensor(\"f32\", { s.n, -1 }, \"randn\")",
                        "dims[2] must be a non-negative integer");
    expect_tensor_error(f, "gb.tensor(\"f32\", { s.n }, \"random\")",
                        "init must be a number or one of randn rand zeros ones output");
    expect_tensor_error(f, "gb.tensor(\"f32\", {}, \"zeros\")", "dims must be a list of 1 to 8");
    assert_int_equal(f->host.n_tuned, 0);
}

static void test_tensor_and_scalars_reach_the_gpu(void **state)
{
    fixture *f = *state;
    use_fake_gpu(f);
    const char *text = REQUIRE
        "local k = gb.kernel {\n"
        "  name = \"scale\", source = " SCALE_SRC ", entry = \"scale\", grid = 1, block = 128,\n"
        "  args = function(s) return {\n"
        "    gb.tensor(\"bf16\", { s.n, 3 }, 0.5), gb.tensor(\"i8\", 4),\n"
        "    gb.tensor(\"f32\", { s.n }),\n"
        "    gb.i32(-7), gb.u32(4294967295), gb.i64(1 << 40), gb.f32(1.5), gb.f64(2),\n"
        "  } end,\n"
        "}\n"
        "gb.tune(k, { shapes = { { n = 256 } } })\n";
    EXPECT_OK(f, run(f, text));
    assert_int_equal(f->gpu.n_args, 8);
    const gb_arg *a = f->gpu.args;
    assert_int_equal(a[0].kind, GB_ARG_TENSOR);
    assert_int_equal(a[0].dtype, GB_DT_BF16);
    assert_int_equal(a[0].n_dims, 2);
    assert_int_equal(a[0].dims[0], 256);
    assert_int_equal(a[0].dims[1], 3);
    assert_int_equal(a[0].init, GB_INIT_VALUE);
    assert_true(a[0].init_value == 0.5);
    assert_int_equal(a[1].n_dims, 1);
    assert_int_equal(a[1].dims[0], 4);
    assert_int_equal(a[2].init, GB_INIT_OUTPUT); /* the default */
    assert_int_equal(a[3].kind, GB_ARG_SCALAR);
    assert_int_equal(a[3].dtype, GB_DT_I32);
    assert_int_equal(a[3].int_value, -7);
    assert_int_equal(a[4].int_value, 4294967295LL);
    assert_int_equal(a[5].int_value, 1LL << 40);
    assert_int_equal(a[6].dtype, GB_DT_F32);
    assert_true(a[6].float_value == 1.5);
    assert_true(a[7].float_value == 2.0);
}

static void test_scalars_out_of_range_are_refused(void **state)
{
    fixture *f = *state;
    int rc = run(f, REQUIRE "local ok = gb.i32(2147483647)\n"
                            "local bad = gb.i32(2147483648)\n");
    EXPECT_ERROR_AT(f, rc, 3, "gb.i32: expected an integer in [-2147483648, 2147483647]",
                    "integer 2147483648");
    rc = run(f, REQUIRE "local bad = gb.u32(-1)\n");
    EXPECT_ERROR_AT(f, rc, 2, "gb.u32: expected an integer in [0, 4294967295]");
    rc = run(f, REQUIRE "local bad = gb.i32(1.5)\n");
    EXPECT_ERROR_AT(f, rc, 2, "gb.i32", "float 1.5");
    rc = run(f, REQUIRE "local bad = gb.f32(\"1\")\n");
    EXPECT_ERROR_AT(f, rc, 2, "gb.f32: expected a number");
}

/* ---- errors in the script's functions ----------------------------------- */

static void test_args_error_names_its_line_and_kernel(void **state)
{
    fixture *f = *state;
    use_fake_gpu(f);
    const char *text = REQUIRE "local k = gb.kernel {\n"
                               "  name = \"scale\", source = " SCALE_SRC ",\n"
                               "  entry = \"scale\", grid = 1, block = 128,\n"
                               "  args = function(s)\n"
                               "    return { gb.tensor(\"f32\", { s.size.n }) } --@\n"
                               "  end,\n"
                               "}\n"
                               "gb.tune(k, { shapes = { { n = 256 } } })\n";
    int rc = run(f, text);
    EXPECT_ERROR_NAMING(f, rc, line_of(text, "--@"), "scale", "attempt to index a nil value");
    assert_int_equal(f->gpu.n_problems, 0);
}

static void test_args_must_return_tensors_and_scalars(void **state)
{
    fixture *f = *state;
    use_fake_gpu(f);
    const char *text = REQUIRE "local k = gb.kernel {\n"
                               "  name = \"scale\", source = " SCALE_SRC ",\n"
                               "  entry = \"scale\", grid = 1, block = 128,\n"
                               "  args = function(s) return { gb.tensor(\"f32\", 4), 7 } end, --@\n"
                               "}\n"
                               "gb.tune(k, { shapes = { { n = 256 } } })\n";
    int rc = run(f, text);
    EXPECT_ERROR_NAMING(f, rc, line_of(text, "--@"), "element 2 is not a gb.tensor or a scalar");
}

/* A tuned kernel whose hook (given on the marked line) fails. */
static void expect_hook_error(fixture *f, const char *field, const char *needle)
{
    char text[2048];
    snprintf(text, sizeof text,
             REQUIRE "local k = gb.kernel {\n"
                     "  name = \"tiled\", source = " TILED_SRC ", entry = \"tiled<${B}>\",\n"
                     "  params = { B = { 64, 128 } },\n" SCALE_ARGS
                     "  grid = function(c, s) return { gb.cdiv(s.n, c.B) } end,\n"
                     "  block = function(c, s) return { c.B } end,\n"
                     "  %s --@\n"
                     "}\n"
                     "gb.tune(k, { shapes = { { n = 256 } } })\n",
             field);
    int rc = run(f, text);
    EXPECT_ERROR_NAMING(f, rc, line_of(text, "--@"), "tiled", needle);
    assert_int_equal(f->host.n_tuned, 0);
}

static void test_geometry_hooks_are_checked(void **state)
{
    fixture *f = *state;
    expect_hook_error(f, "grid = function(c, s) return { 0 } end,",
                      "grid[1] must be a positive integer");
    expect_hook_error(f, "grid = function(c, s) return { 1, 1, 1, 1 } end,",
                      "grid must give 1 to 3 sizes, got 4");
    expect_hook_error(f, "block = function(c, s) return { c.B, 0.5 } end,",
                      "block[2] must be a positive integer");
    expect_hook_error(f, "smem = function(c, s) return -4 end,",
                      "smem must be a non-negative integer");
    expect_hook_error(f, "constraints = { function(c) return c.missing.B end },",
                      "attempt to index a nil value");
}

static void test_hook_error_in_a_nested_call_names_that_line(void **state)
{
    fixture *f = *state;
    const char *text =
        REQUIRE "local function threads(c)\n"
                "  error(\"no threads for B=\" .. c.B) --@\n"
                "end\n"
                "local k = gb.kernel {\n"
                "  name = \"tiled\", source = " TILED_SRC ", entry = \"tiled<${B}>\",\n"
                "  params = { B = { 64 } },\n" SCALE_ARGS
                "  grid = 1, block = function(c, s) return { threads(c) } end,\n"
                "}\n"
                "gb.tune(k, { shapes = { { n = 256 } } })\n";
    int rc = run(f, text);
    EXPECT_ERROR_NAMING(f, rc, line_of(text, "--@"), "no threads for B=64", "stack traceback");
}

/* ---- gb.tune ------------------------------------------------------------ */

static void expect_tune_error(fixture *f, const char *kernel_extra, const char *tune_call,
                              const char *needle)
{
    char text[2048];
    snprintf(text, sizeof text,
             REQUIRE "local k = gb.kernel {\n"
                     "  name = \"scale\", source = " SCALE_SRC ", entry = \"scale\",\n"
                     "  grid = 1, block = 128,\n"
                     "%s"
                     "}\n"
                     "%s --@\n",
             kernel_extra, tune_call);
    int rc = run(f, text);
    EXPECT_ERROR_AT(f, rc, line_of(text, "--@"), "gb.tune", needle);
    assert_int_equal(f->host.n_tuned, 0);
}

static void test_tune_options_are_checked(void **state)
{
    fixture *f = *state;
    const char *shapes = "{ { n = 256 } }";
    char call[256];
    expect_tune_error(f, SCALE_ARGS, "gb.tune({ name = \"scale\" }, {})",
                      "expected a kernel made by gb.kernel, got table");
    snprintf(call, sizeof call, "gb.tune(k, { shape = %s })", shapes);
    expect_tune_error(f, SCALE_ARGS, call, "unknown option 'shape'");
    snprintf(call, sizeof call, "gb.tune(k, { shapes = %s, strategy = \"bayes\" })", shapes);
    expect_tune_error(f, SCALE_ARGS, call, "strategy string \"bayes\"");
    expect_tune_error(f, SCALE_ARGS, "gb.tune(k, {})", "no shapes");
    expect_tune_error(f, SCALE_ARGS, "gb.tune(k, { shapes = {} })",
                      "shapes must be a non-empty list");
    expect_tune_error(f, SCALE_ARGS, "gb.tune(k, { shapes = { 1024 } })",
                      "shapes[1] must be a table of fields");
    snprintf(call, sizeof call, "gb.tune(k, { shapes = %s, baseline = \"reference\" })", shapes);
    expect_tune_error(f, SCALE_ARGS, call, "needs a kernel with a reference");
    snprintf(call, sizeof call, "gb.tune(k, { shapes = %s, budget = { evals = 0 } })", shapes);
    expect_tune_error(f, SCALE_ARGS, call, "budget.evals");
    snprintf(call, sizeof call, "gb.tune(k, { shapes = %s })", shapes);
    expect_tune_error(f, "", call, "kernel scale has no args function");
}

static void test_check_outputs_naming_a_scalar_names_the_kernel(void **state)
{
    fixture *f = *state;
    use_fake_gpu(f);
    const char *text = REQUIRE "local k = gb.kernel {\n"
                               "  name = \"scale\", source = " SCALE_SRC ",\n"
                               "  entry = \"scale\", grid = 1, block = 128,\n" //
        SCALE_ARGS "  check = { outputs = { 2 } },\n"
                               "}\n"
                               "gb.tune(k, { shapes = { { n = 256 } } })\n";
    int rc = run(f, text);
    assert_int_equal(rc, GB_ESCRIPT);
    expect_text(f->err.msg, "kernel scale");
    expect_text(f->err.msg, "check.outputs names argument 2, which is not a tensor");
    assert_int_equal(f->gpu.n_trials, 0);
}

/* ---- shapes ------------------------------------------------------------- */

static void test_shape_helpers(void **state)
{
    fixture *f = *state;
    EXPECT_OK(f,
              run(f, REQUIRE
                  "local s = gb.sweep { M = { 1, 2 }, N = { 10, 20, 30 }, K = 5 }\n"
                  "assert(#s == 6)\n"
                  "local seen = {}\n"
                  "for _, x in ipairs(s) do\n"
                  "  assert(x.K == 5)\n"
                  "  seen[x.M .. 'x' .. x.N] = true\n"
                  "end\n"
                  "for _, m in ipairs { 1, 2 } do for _, n in ipairs { 10, 20, 30 } do\n"
                  "  assert(seen[m .. 'x' .. n], m .. 'x' .. n)\n"
                  "end end\n"
                  /* the last name varies fastest */
                  "assert(s[1].M == 1 and s[1].N == 10 and s[2].N == 20 and s[4].M == 2)\n"
                  "local t = gb.sweep { M = gb.pow2(10, 12), N = gb.same 'M', K = gb.same 'M' }\n"
                  "assert(#t == 3)\n"
                  "for i, x in ipairs(t) do\n"
                  "  assert(x.M == 1 << (9 + i) and x.N == x.M and x.K == x.M)\n"
                  "end\n"
                  "local p = gb.pow2(10, 12)\n"
                  "assert(#p == 3 and p[1] == 1024 and p[2] == 2048 and p[3] == 4096)\n"
                  "assert(math.type(p[1]) == 'integer')\n"
                  "local r = gb.range(1, 10, 4)\n"
                  "assert(#r == 3 and r[1] == 1 and r[2] == 5 and r[3] == 9)\n"
                  "r = gb.range(3, 5)\n"
                  "assert(#r == 3 and r[3] == 5)\n"
                  "r = gb.range(8, 2, -3)\n"
                  "assert(#r == 3 and r[1] == 8 and r[3] == 2)\n"
                  "local z = gb.zip { M = { 1, 2, 3 }, N = { 4, 5, 6 } }\n"
                  "assert(#z == 3 and z[2].M == 2 and z[2].N == 5 and z[3].N == 6)\n"
                  "assert(gb.cdiv(10, 3) == 4 and gb.cdiv(9, 3) == 3 and gb.cdiv(0, 8) == 0)\n"
                  "assert(gb.cdiv(1, 1024) == 1)\n"));
}

static void test_shape_helper_errors(void **state)
{
    fixture *f = *state;
    int rc = run(f, REQUIRE "local s = gb.sweep { M = { 1, 2 }, N = gb.same 'Q' }\n");
    EXPECT_ERROR_AT(f, rc, 2, "gb.sweep", "field N is tied to Q, which is not in the sweep");
    rc = run(f, REQUIRE "local s = gb.sweep { M = {} }\n");
    EXPECT_ERROR_AT(f, rc, 2, "gb.sweep", "non-empty list");
    rc = run(f, REQUIRE "local z = gb.zip { M = { 1, 2, 3 }, N = { 4, 5 } }\n");
    EXPECT_ERROR_AT(f, rc, 2, "gb.zip", "has 2 values, others have 3");
    rc = run(f, REQUIRE "local p = gb.pow2(12, 10)\n");
    EXPECT_ERROR_AT(f, rc, 2, "gb.pow2");
    rc = run(f, REQUIRE "local r = gb.range(1, 10, 0)\n");
    EXPECT_ERROR_AT(f, rc, 2, "gb.range");
    rc = run(f, REQUIRE "local r = gb.range(1, 1e12)\n");
    EXPECT_ERROR_AT(f, rc, 2, "gb.range", "too many");
    rc = run(f, REQUIRE "local n = gb.cdiv(10, 0)\n");
    EXPECT_ERROR_AT(f, rc, 2, "gb.cdiv");
    rc = run(f, REQUIRE "local n = gb.cdiv(10.5, 2)\n");
    EXPECT_ERROR_AT(f, rc, 2, "gb.cdiv");
}

/* ---- gb.template -------------------------------------------------------- */

static void test_template_prefers_the_scripts_folder(void **state)
{
    fixture *f = *state;
    char local[160];
    /* sgemm.cuh is also on the templates path; the script's copy wins. */
    snprintf(local, sizeof local, "%s/sgemm.cuh", f->dir);
    write_file(local, "// the script's own copy\n", "");
    char *argv[] = {local};
    EXPECT_OK(f, run_script(f, "script.lua",
                            REQUIRE "local t = gb.template 'sgemm.cuh'\n"
                                    "assert(t.path == arg[1], t.path)\n"
                                    "assert(t.text == \"// the script's own copy\\n\")\n",
                            1, argv));
}

static void test_template_falls_back_to_the_templates_path(void **state)
{
    fixture *f = *state;
    char expect[PATH_MAX + 32];
    snprintf(expect, sizeof expect, "%s/gemm_ref.cuh", f->templates);
    char *argv[] = {expect};
    EXPECT_OK(f, run_script(f, "script.lua",
                            REQUIRE "local t = gb.template 'gemm_ref.cuh'\n"
                                    "assert(t.path == arg[1], t.path)\n"
                                    "assert(t.text:find('gemm_ref_f32', 1, true))\n",
                            1, argv));
}

static void test_template_not_found_lists_the_folders(void **state)
{
    fixture *f = *state;
    int rc = run(f, REQUIRE "\n"
                            "local t = gb.template 'nowhere.cuh'\n");
    EXPECT_ERROR_AT(f, rc, 3, "gb.template: nowhere.cuh not found", f->dir, f->templates);
}

/* ---- the device ---------------------------------------------------------- */

static void test_device_is_nil_without_a_driver(void **state)
{
    fixture *f = *state;
    f->host.tuner.compile_only = false; /* the driver is missing, not switched off */
    EXPECT_OK(f, run(f, REQUIRE "local d, why = gb.device()\n"
                                "assert(d == nil)\n"
                                "assert(why:find('libcuda.so.1', 1, true), why)\n"));
    assert_true(f->host.gpu_missing);
    assert_int_equal(f->host.gpu_missing_err.code, GB_ENODRIVER);
    expect_text(read_back(f, f->host.tuner.log), "compiling only");
}

static void test_device_is_nil_when_compiling_only(void **state)
{
    fixture *f = *state;
    EXPECT_OK(f, run(f, REQUIRE "local d, why = gb.device()\n"
                                "assert(d == nil and why == '--compile-only', why)\n"));
}

static void test_device_describes_the_gpu(void **state)
{
    fixture *f = *state;
    use_fake_gpu(f);
    EXPECT_OK(f, run(f, REQUIRE "local d = assert(gb.device())\n"
                                "assert(d.name == 'Fake H100' and d.cc == '9.0' and d.sms == 132)\n"
                                "assert(d.arch == 'sm_90a' and d.l2_bytes == 50 << 20)\n"
                                "assert(d.smem_per_block_optin == 232448 and d.peak_gbps == 3352)\n"
                                "assert(d.sm_clock_mhz == 1980 and d.sm_clock_khz == 1980000)\n"
                                "assert(d.mem_clock_mhz == 0 and d.driver == 12040)\n"
                                "assert(d.uuid == 'GPU-12345678-9abc-def0-1234-56789abcdef0')\n"
                                "assert(math.type(d.mem_bytes) == 'integer')\n"
                                "assert(gb.device().name == d.name)\n"));
    assert_int_equal(f->gpu.n_opened, 1);
}

static void test_no_gpu_with_require_gpu_keeps_its_code(void **state)
{
    fixture *f = *state;
    f->host.tuner.compile_only = false;
    f->host.require_gpu = true;
    const char *text = REQUIRE TILED_KERNEL("tiled") "gb.tune(k, { shapes = { { n = 256 } } })\n";
    int rc = run(f, text);
    assert_int_equal(rc, GB_ENODRIVER);
    expect_text(f->err.msg, "libcuda.so.1");
    char where[160];
    snprintf(where, sizeof where, "%s:%d:", f->path, line_of(text, "gb.tune"));
    expect_text(f->err.msg, where);
}

/* ---- tuning without a GPU ---------------------------------------------- */

static void test_tune_compile_only_reports_every_shape(void **state)
{
    fixture *f = *state;
    use_cache(f);
    f->host.tuner.jobs = 2;
    const char *text = REQUIRE TILED_KERNEL("tiled") //
        "local res = gb.tune(k, { shapes = { { n = 256 }, { n = 1000 } } })\n"
        "assert(#res == 2)\n"
        "assert(res[1].shape.n == 256 and res[2].shape.n == 1000)\n"
        "assert(res[1].key == 'n=256' and res[2].key == 'n=1000', res[1].key)\n"
        "for _, r in ipairs(res) do\n"
        "  assert(r.best == nil)\n"
        "  assert(r.counts.configs == 3 and r.counts.compiled == 3)\n"
        "  assert(r.counts.rejected == 0 and r.counts.compile_error == 0)\n"
        "  assert(r.counts.timed == 0)\n"
        "end\n"
        "assert(gb.best(k, { n = 256 }) == nil)\n";
    EXPECT_OK(f, run(f, text));
    assert_int_equal(f->host.n_tuned, 1);
    assert_int_equal(f->host.n_shapes_failed, 0);
    const char *table = read_back(f, f->host.out);
    expect_text(table, "tiled");
    expect_text(table, "B=64");
    expect_text(table, "B=256");
    expect_text(table, "regs");
}

static void test_tune_without_a_driver_compiles_only(void **state)
{
    fixture *f = *state;
    f->host.tuner.compile_only = false;              /* a GPU was wanted; there is no driver */
    const char *text = REQUIRE TILED_KERNEL("tiled") //
        "local res = gb.tune(k, { shapes = { { n = 256 } } })\n"
        "assert(#res == 1 and res[1].best == nil and res[1].counts.compiled == 3)\n";
    EXPECT_OK(f, run(f, text));
    assert_int_equal(f->host.n_tuned, 1);
    assert_true(f->host.gpu_missing);
    expect_text(read_back(f, f->host.tuner.log),
                "libcuda.so.1 (a test without a driver); compiling only");
    expect_text(read_back(f, f->host.out), "B=128");
}

static void test_tune_counts_compile_errors(void **state)
{
    fixture *f = *state;
    f->host.tuner.jobs = 2;
    EXPECT_OK(f, run(f, REQUIRE
                     "local k = gb.kernel {\n"
                     "  name = \"broken\", entry = \"broken\", grid = 1, block = 32,\n"
                     "  source = [[extern \"C\" __global__ void broken(float *x) { x[0] = y; }]],\n"
                     "  args = function(s) return { gb.tensor(\"f32\", 1) } end,\n"
                     "}\n"
                     "local res = gb.tune(k, { shapes = { { n = 1 } } })\n"
                     "assert(#res == 1 and res[1].best == nil)\n"
                     "assert(res[1].counts.compile_error == 1 and res[1].counts.compiled == 0)\n"));
    assert_int_equal(f->host.n_tuned, 1);
    assert_int_equal(f->host.n_shapes_failed, 1);
    expect_text(read_back(f, f->host.out), "error");
}

static void test_constraints_reject_configs(void **state)
{
    fixture *f = *state;
    EXPECT_OK(f,
              run(f, REQUIRE
                  "local k = gb.kernel {\n"
                  "  name = \"tiled\", source = " TILED_SRC ", entry = \"tiled<${B}>\",\n"
                  "  params = { B = { 32, 64, 96, 128 } },\n"
                  "  constraints = { function(c) return c.B % 64 == 0 end },\n" SCALE_ARGS
                  "  grid = function(c, s) return { gb.cdiv(s.n, c.B) } end,\n"
                  "  block = function(c, s) return { c.B } end,\n"
                  "}\n"
                  "local res = gb.tune(k, { shapes = gb.zip { n = { 256, 512 } } })\n"
                  "assert(#res == 2)\n"
                  "for _, r in ipairs(res) do\n"
                  "  assert(r.counts.configs == 4 and r.counts.rejected == 2, r.counts.rejected)\n"
                  "  assert(r.counts.compiled == 2)\n"
                  "end\n"));
    const char *table = read_back(f, f->host.out);
    expect_text(table, "B=64");
    if (strstr(table, "B=32") || strstr(table, "B=96"))
        fail_msg("rejected configs compiled:\n%s", table);
}

static void test_tune_accepts_a_sweep_of_shapes(void **state)
{
    fixture *f = *state;
    EXPECT_OK(f,
              run(f, REQUIRE
                  "local k = gb.kernel {\n"
                  "  name = \"scale\", source = " SCALE_SRC ", entry = \"scale\",\n"
                  "  grid = function(c, s) return { gb.cdiv(s.M * s.N, 128) } end, block = 128,\n"
                  "  args = function(s)\n"
                  "    return { gb.tensor(\"f32\", { s.M, s.N }), gb.i32(s.M * s.N) }\n"
                  "  end,\n"
                  "  key = { 'M', 'N' },\n"
                  "}\n"
                  "local shapes = gb.sweep { M = { 1, 2 }, N = gb.same 'M', tag = 'x' }\n"
                  "local res = gb.tune(k, { shapes = shapes })\n"
                  "assert(#res == 2)\n"
                  "assert(res[1].key == 'M=1,N=1' and res[2].key == 'M=2,N=2', res[1].key)\n"
                  "assert(res[2].shape.tag == 'x')\n"));
}

static void test_key_field_missing_from_the_shape_is_a_script_error(void **state)
{
    fixture *f = *state;
    int rc = run(f, REQUIRE "local k = gb.kernel {\n"
                            "  name = \"scale\", source = " SCALE_SRC ",\n"
                            "  entry = \"scale\", grid = 1, block = 128,\n" //
                 SCALE_ARGS "  key = { 'n', 'batch' },\n"
                            "}\n"
                            "gb.tune(k, { shapes = { { n = 4 } } })\n");
    assert_int_equal(rc, GB_ESCRIPT);
    expect_text(f->err.msg, "key field batch is not in the shape");
}

/* ---- declarative use ---------------------------------------------------- */

static void test_declared_kernels_are_tuned_after_the_script(void **state)
{
    fixture *f = *state;
    EXPECT_OK(f, run(f, REQUIRE
                     "gb.kernel {\n"
                     "  name = \"declared\", source = " SCALE_SRC ", entry = \"scale\",\n"
                     "  grid = 1, block = 128,\n" SCALE_ARGS "  shapes = { { n = 256 } },\n"
                     "}\n"
                     /* a kernel with no shapes (a reference, say) is not tuned */
                     "gb.kernel { name = \"idle\", entry = \"scale\", grid = 1, block = 1,\n"
                     "            source = " SCALE_SRC " }\n"));
    assert_int_equal(f->host.n_tuned, 1);
    const char *table = read_back(f, f->host.out);
    expect_text(table, "declared");
    if (strstr(table, "idle")) fail_msg("a kernel without shapes was tuned:\n%s", table);
}

static void test_declared_kernels_are_not_tuned_after_gb_tune(void **state)
{
    fixture *f = *state;
    EXPECT_OK(f,
              run(f, REQUIRE "local a = gb.kernel {\n"
                             "  name = \"first\", source = " SCALE_SRC ", entry = \"scale\",\n"
                             "  grid = 1, block = 128,\n" SCALE_ARGS "  shapes = { { n = 256 } },\n"
                             "}\n"
                             "local b = gb.kernel {\n"
                             "  name = \"second\", source = " SCALE_SRC ", entry = \"scale\",\n"
                             "  grid = 1, block = 128,\n" SCALE_ARGS "  shapes = { { n = 256 } },\n"
                             "}\n"
                             "gb.tune(a)\n"));
    assert_int_equal(f->host.n_tuned, 1);
    const char *table = read_back(f, f->host.out);
    expect_text(table, "first");
    if (strstr(table, "second")) fail_msg("a declared kernel was tuned after gb.tune:\n%s", table);
}

static void test_declared_kernel_without_args_names_its_line(void **state)
{
    fixture *f = *state;
    const char *text = REQUIRE "\n"
                               "gb.kernel {\n"
                               "  name = \"declared\", source = " SCALE_SRC ", entry = \"scale\",\n"
                               "  grid = 1, block = 128, shapes = { { n = 256 } },\n"
                               "}\n";
    int rc = run(f, text);
    EXPECT_ERROR_AT(f, rc, 3, "declared", "args");
    assert_int_equal(f->host.n_tuned, 0);
}

/* ---- the script's environment ------------------------------------------- */

static void test_arg_holds_the_script_and_its_arguments(void **state)
{
    fixture *f = *state;
    char *argv[] = {"--size", "4096", "fast"};
    EXPECT_OK(f, run_script(f, "args.lua",
                            REQUIRE
                            "assert(arg[0] == debug.getinfo(1, 'S').source:sub(2), arg[0])\n"
                            "assert(arg[0]:match('/args%.lua$'))\n"
                            "assert(#arg == 3, #arg)\n"
                            "assert(arg[1] == '--size' and arg[2] == '4096' and arg[3] == 'fast')\n"
                            "assert(type(gb.version) == 'string')\n",
                            3, argv));
    EXPECT_OK(f, run_script(f, "none.lua", "assert(#arg == 0 and arg[0]:match('none%.lua$'))\n", 0,
                            NULL));
}

/* ---- timing (on the fake GPU) ------------------------------------------- */

static void test_tune_with_a_gpu_picks_and_caches_the_best(void **state)
{
    fixture *f = *state;
    use_cache(f);
    use_fake_gpu(f);
    const char *text = REQUIRE
        "local ref = gb.kernel {\n"
        "  name = \"scale_ref\", source = " SCALE_SRC ", entry = \"scale\",\n"
        "  grid = function(c, s) return { gb.cdiv(s.n, 128) } end, block = 128,\n"
        "}\n"
        "local k = gb.kernel {\n"
        "  name = \"tiled\", source = " TILED_SRC ", entry = \"tiled<${B}>\",\n"
        "  params = { B = { 256, 64, 128 } },\n" SCALE_ARGS
        "  grid = function(c, s) return { gb.cdiv(s.n, c.B) } end,\n"
        "  block = function(c, s) return { c.B } end,\n"
        "  reference = ref, check = { outputs = { 1 } },\n"
        "  flops = function(s) return 2 * s.n end, bytes = function(s) return 8 * s.n end,\n"
        "}\n"
        "local res = gb.tune(k, { shapes = { { n = 64000 } }, baseline = 'reference' })\n"
        "local r = res[1]\n"
        "assert(r.best and r.best.config.B == 64, 'best')\n"
        "assert(math.abs(r.best.ms - 0.064) < 1e-12, r.best.ms)\n"
        "assert(math.abs(r.speedup - 2) < 1e-12, r.speedup)\n"
        "assert(r.cached == (arg[1] == 'again'))\n"
        "assert(#r.best.samples == 10 and r.best.mode == 'cold', 'samples, cached or not')\n"
        "assert(r.best.stats.median == r.best.ms and r.best.stats.median_ms == nil, 'lua names')\n"
        "assert(math.type(r.best.stats.n) == 'integer' and r.best.stats.ci_lo <= r.best.ms)\n"
        "assert(r.baseline.median and r.best.n_throttled == 0 and r.best.capped ~= nil)\n"
        "assert(r.best.contended == false and r.best.n_other_procs == 0)\n"
        "assert(r.best.clocks_mhz == nil and r.best.throttled == nil, 'not for Lua')\n"
        "assert((r.best.launches_per_sample == 1) == not r.cached, 'known when measured')\n"
        "if not r.cached then\n"
        "  assert(r.counts.timed == 3 and r.counts.ok == 3)\n"
        "  assert(math.abs(r.best.tflops - 128000 / 0.064e-3 / 1e12) < 1e-9, r.best.tflops)\n"
        "  assert(math.abs(r.best.gbps - 512000 / 0.064e-3 / 1e9) < 1e-9, r.best.gbps)\n"
        "end\n"
        "local best = gb.best(k, { n = 64000 })\n"
        "assert(best and best.B == 64)\n"
        "assert(gb.best(k, { n = 1 }) == nil)\n";
    EXPECT_OK(f, run(f, text));
    assert_int_equal(f->host.n_tuned, 1);
    assert_int_equal(f->gpu.n_trials, 4); /* three variants and the baseline */
    assert_true(f->gpu.n_references >= 1);
    char *again[] = {"again"};
    EXPECT_OK(f, run_script(f, "script.lua", text, 1, again));
    assert_int_equal(f->gpu.n_trials, 4); /* answered by the cache */
    expect_text(read_back(f, f->host.out), "cache");
}

/* A best timed cold does not answer a hot run, nor the other way round. */
static void test_cached_best_is_per_measurement_mode(void **state)
{
    fixture *f = *state;
    use_cache(f);
    use_fake_gpu(f);
    const char *text =
        REQUIRE TILED_KERNEL("tiled") "local r = gb.tune(k, { shapes = { { n = 64 } } })[1]\n"
                                      "assert(r.best.mode == arg[1], r.best.mode)\n"
                                      "assert(r.cached == (arg[2] == 'cached'), 'cached')\n";
    char *cold[] = {"cold", "new"}, *hot[] = {"hot", "new"}, *hot_again[] = {"hot", "cached"};
    EXPECT_OK(f, run_script(f, "script.lua", text, 2, cold));
    assert_int_equal(f->gpu.n_trials, 3);
    f->host.tuner.measure.mode = GB_MODE_HOT;
    f->host.measure_set |= GB_MEASURE_SET_MODE;
    EXPECT_OK(f, run_script(f, "script.lua", text, 2, hot));
    assert_int_equal(f->gpu.n_trials, 6); /* tuned again, hot */
    EXPECT_OK(f, run_script(f, "script.lua", text, 2, hot_again));
    assert_int_equal(f->gpu.n_trials, 6);
}

static void test_bench_times_the_configuration_asked_for(void **state)
{
    fixture *f = *state;
    use_cache(f);
    use_fake_gpu(f);
    const char *text = REQUIRE TILED_KERNEL(
        "tiled") "local r = gb.bench(k, { shapes = { { n = 64000 } }, config = { B = 128 } })[1]\n"
                 "assert(r.best and r.best.config.B == 128, 'the configuration asked for')\n"
                 "assert(math.abs(r.best.ms - 0.128) < 1e-12, r.best.ms)\n"
                 "assert(#r.best.samples == 10 and r.best.mode == 'cold', 'samples kept')\n"
                 "local bad = gb.bench(k, { shapes = { { n = 64 } }, config = { B = 100 } })[1]\n"
                 "assert(not bad.best and bad.failure:find('not in the kernel', 1, true), "
                 "bad.failure)\n"
                 "local none = gb.bench(k, { shapes = { { n = 64 } }, config = 'best' })[1]\n"
                 "assert(not none.best and none.failure:find('tune it first', 1, true), "
                 "none.failure)\n"
                 "gb.tune(k, { shapes = { { n = 64 } } })\n"
                 "local best = gb.bench(k, { shapes = { { n = 64 } }, config = 'best' })[1]\n"
                 "assert(best.best and best.best.config.B == 64, 'the tuned best')\n";
    EXPECT_OK(f, run(f, text));
    assert_int_equal(f->gpu.n_trials, 1 + 3 + 1); /* nothing is resumed or cached by bench */
}

static void test_bench_refuses_a_configuration_the_constraints_drop(void **state)
{
    fixture *f = *state;
    use_fake_gpu(f);
    const char *text = REQUIRE TILED_KERNEL(
        "tiled") "k.constraints = { function(c) return c.B ~= 256 end }\n"
                 "local r = gb.bench(k, { shapes = { { n = 64 } }, config = { B = 256 } })[1]\n"
                 "assert(not r.best and r.failure:find('B=256 is rejected by the kernel', 1, "
                 "true), r.failure)\n";
    EXPECT_OK(f, run(f, text));
    assert_int_equal(f->gpu.n_trials, 0);
}

static void test_bench_options_are_checked(void **state)
{
    fixture *f = *state;
    const char *no_config =
        REQUIRE TILED_KERNEL("tiled") "gb.bench(k, { shapes = { { n = 1 } } }) --@\n";
    EXPECT_ERROR_AT(f, run(f, no_config), line_of(no_config, "--@"), "config must be");
    const char *unknown = REQUIRE TILED_KERNEL(
        "tiled") "gb.bench(k, { shapes = { { n = 1 } }, config = {}, mode = 1 }) --@\n";
    EXPECT_ERROR_AT(f, run(f, unknown), line_of(unknown, "--@"), "gb.bench: unknown option 'mode'");
    const char *no_ref =
        REQUIRE TILED_KERNEL("tiled") "gb.bench(k, { shapes = { { n = 1 } }, config = { B = 64 "
                                      "}, baseline = 'reference' }) --@\n";
    EXPECT_ERROR_AT(f, run(f, no_ref), line_of(no_ref, "--@"), "needs a kernel with a reference");
}

static void test_kernel_measure_table_is_checked(void **state)
{
    fixture *f = *state;
    expect_kernel_error(f, NULL, "  measure = { mode = \"warm\" },\n", "measure.mode must be");
    expect_kernel_error(f, NULL, "  measure = { noise = 2 },\n", "measure.noise must be");
    expect_kernel_error(f, NULL, "  measure = { samples = 2 },\n",
                        "measure has an unknown field 'samples'");
}

/* ---- the example --------------------------------------------------------- */

static void test_gemm_example_compiles(void **state)
{
    fixture *f = *state;
    char src[PATH_MAX - 32], path[PATH_MAX];
    source_dir(src, sizeof src);
    snprintf(path, sizeof path, "%s/examples/gemm.lua", src);
    use_cache(f);
    f->host.tuner.jobs = 2;
    gb_err_clear(&f->err);
    assert_int_equal(gb_lua_new(&f->host, &f->L, &f->err), GB_OK);
    int rc = gb_lua_run(f->L, path, 0, NULL, &f->err);
    if (rc) fail_msg("examples/gemm.lua failed (%d): %s", rc, f->err.msg);
    assert_int_equal(f->host.n_tuned, 1);
    assert_int_equal(f->host.n_shapes_failed, 0);
    const char *table = read_back(f, f->host.out);
    expect_text(table, "gemm_f32");
    expect_text(table, "BK=8,BM=64,BN=64,TM=4,TN=4");
    if (strstr(table, "error:")) fail_msg("a gemm variant failed to compile:\n%s", table);
}

#define TEST(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_syntax_error_names_file_and_line),
        TEST(test_runtime_error_names_file_and_line),
        TEST(test_kernel_well_formed_is_accepted),
        TEST(test_kernel_unknown_field_suggests_the_nearest),
        TEST(test_kernel_required_fields_are_named),
        TEST(test_kernel_field_types_are_checked),
        TEST(test_kernel_name_characters),
        TEST(test_kernel_params_must_be_lists_of_values),
        TEST(test_kernel_constraints_must_be_functions),
        TEST(test_kernel_check_outputs_are_positions),
        TEST(test_kernel_reference_must_have_no_params),
        TEST(test_kernel_entry_names_only_params),
        TEST(test_kernel_static_geometry_is_checked),
        TEST(test_tensor_errors_name_the_line_in_args),
        TEST(test_tensor_and_scalars_reach_the_gpu),
        TEST(test_scalars_out_of_range_are_refused),
        TEST(test_args_error_names_its_line_and_kernel),
        TEST(test_args_must_return_tensors_and_scalars),
        TEST(test_geometry_hooks_are_checked),
        TEST(test_hook_error_in_a_nested_call_names_that_line),
        TEST(test_tune_options_are_checked),
        TEST(test_check_outputs_naming_a_scalar_names_the_kernel),
        TEST(test_shape_helpers),
        TEST(test_shape_helper_errors),
        TEST(test_template_prefers_the_scripts_folder),
        TEST(test_template_falls_back_to_the_templates_path),
        TEST(test_template_not_found_lists_the_folders),
        TEST(test_device_is_nil_without_a_driver),
        TEST(test_device_is_nil_when_compiling_only),
        TEST(test_device_describes_the_gpu),
        TEST(test_no_gpu_with_require_gpu_keeps_its_code),
        TEST(test_tune_compile_only_reports_every_shape),
        TEST(test_tune_without_a_driver_compiles_only),
        TEST(test_tune_counts_compile_errors),
        TEST(test_constraints_reject_configs),
        TEST(test_tune_accepts_a_sweep_of_shapes),
        TEST(test_key_field_missing_from_the_shape_is_a_script_error),
        TEST(test_declared_kernels_are_tuned_after_the_script),
        TEST(test_declared_kernels_are_not_tuned_after_gb_tune),
        TEST(test_declared_kernel_without_args_names_its_line),
        TEST(test_arg_holds_the_script_and_its_arguments),
        TEST(test_tune_with_a_gpu_picks_and_caches_the_best),
        TEST(test_cached_best_is_per_measurement_mode),
        TEST(test_bench_times_the_configuration_asked_for),
        TEST(test_bench_refuses_a_configuration_the_constraints_drop),
        TEST(test_bench_options_are_checked),
        TEST(test_kernel_measure_table_is_checked),
        TEST(test_gemm_example_compiles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
