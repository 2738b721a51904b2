/* The fixture of the Lua binding's tests: see lua_fixture.h. */
#include "scratch.h"
#include "lua_fixture.h"

#include <ftw.h>
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
    ((fake_gpu *)self)->check = *check;
    ((fake_gpu *)self)->launch = v->launch;
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
int setup(void **state)
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
    h->session.tuner.compile_only = true;
    h->session.tuner.arch = "sm_90a";
    h->session.tuner.seed = 1;
    h->session.tuner.measure = gb_measure_defaults();
    h->session.tuner.log = tmpfile();
    f->out = tmpfile();
    gb_err err = {0};
    gb_output *table = NULL;
    if (!f->out || gb_output_table(f->out, &(gb_table_opts){0}, &table, &err) != GB_OK) return -1;
    gb_session_begin_outputs(&h->session, table, &f->context, &err);
    h->session.open_exec = open_no_driver;
    h->session.open_exec_ctx = f;
    h->template_path = f->template_path;
    h->n_template_path = 1;
    *state = f;
    return h->session.tuner.log ? 0 : -1;
}

int teardown(void **state)
{
    fixture *f = *state;
    gb_lua_close(f->L, &f->host);
    gb_session_end_outputs(&f->host.session, &(gb_err){0});
    gb_cache_close(f->cache);
    if (f->host.session.tuner.log) fclose(f->host.session.tuner.log);
    if (f->out) fclose(f->out);
    gb_run_context_free(&f->context);
    free(f->text);
    int rc = scratch_remove(f->dir);
    free(f);
    return rc;
}

/* ---- helpers ------------------------------------------------------------ */

void write_file(const char *path, const char *text, const char *tail)
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
int run_script(fixture *f, const char *name, const char *text, int argc, char **argv)
{
    snprintf(f->path, sizeof f->path, "%s/%s", f->dir, name);
    write_file(f->path, text, "\n" REACHED_THE_END " = true\n");
    gb_lua_close(f->L, &f->host);
    f->L = NULL;
    gb_err_clear(&f->err);
    assert_int_equal(gb_lua_new(&f->host, &f->L, &f->err), GB_OK);
    return gb_lua_run(f->L, f->path, argc, argv, &f->err);
}

int run(fixture *f, const char *text)
{
    return run_script(f, "script.lua", text, 0, NULL);
}

/* Everything written to file so far. */
const char *read_back(fixture *f, FILE *file)
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

void use_cache(fixture *f)
{
    char dir[96];
    snprintf(dir, sizeof dir, "%s/cache", f->dir);
    assert_int_equal(gb_cache_open(dir, 0, &f->cache, &f->err), GB_OK);
    f->host.session.tuner.cache = f->cache;
}

/* The host of a machine with a GPU (the fake one): scripts are timed. */
void use_fake_gpu(fixture *f)
{
    f->host.session.tuner.compile_only = false;
    f->host.session.open_exec = open_fake_gpu;
}

/* The 1-based line of text that holds marker. */
int line_of(const char *text, const char *marker)
{
    const char *at = strstr(text, marker);
    if (!at) fail_msg("marker %s is not in the script", marker);
    int line = 1;
    for (const char *p = text; p < at; p++)
        line += *p == '\n';
    return line;
}

void expect_ok(fixture *f, int rc, int test_line)
{
    if (rc != GB_OK)
        fail_msg("line %d: the script failed (%d, %s):\n%s", test_line, rc, gb_strerror(rc),
                 f->err.msg);
    lua_getglobal(f->L, REACHED_THE_END);
    bool reached = lua_toboolean(f->L, -1);
    lua_pop(f->L, 1);
    if (!reached) fail_msg("line %d: the run succeeded but the script stopped early", test_line);
}

void expect_error(fixture *f, int rc, bool at_start, int line, int test_line, ...)
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

void expect_text(const char *text, const char *needle)
{
    if (!strstr(text, needle)) fail_msg("expected \"%s\" in:\n%s", needle, text);
}
