/*
 * The public C API (include/gpubench/gpubench.h) end to end, as a program that
 * links libgpubench.so sees it: a session on the fake GPU worker
 * (tests/fake_worker.c, whose samples last launch.grid[0] milliseconds) and a
 * cache in a scratch folder; a kernel declared, tuned (compiled by NVRTC for
 * real), answered from the cache, looked up exact and nearest; the errors of bad
 * declarations, callbacks and options; compiling only.
 */
#include "scratch.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "gpubench/gpubench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef GB_FAKE_WORKER
#define GB_FAKE_WORKER ""
#endif

/* y = 2x, ITEMS elements a thread, blocks of BLOCK threads. */
static const char SOURCE[] =
    "template <int BLOCK, int ITEMS>\n"
    "__global__ void scale(const float *x, float *y, int n)\n"
    "{\n"
    "    int first = (blockIdx.x * BLOCK + threadIdx.x) * ITEMS;\n"
    "    for (int i = first; i < first + ITEMS && i < n; i++) y[i] = 2.0f * x[i];\n"
    "}\n";

typedef struct fixture {
    char dir[64];
    char cache[128];
    gpubench_session *session;
    gpubench_kernel *kernel;
    gpubench_error err;
} fixture;

static int64_t field_int(const gpubench_fields *f, const char *name)
{
    int64_t v = -1;
    assert_int_equal(gpubench_fields_get_int(f, name, &v), GPUBENCH_OK);
    return v;
}

/* ---- the kernel's callbacks ---------------------------------------------------- */

static int scale_args(void *user, const gpubench_fields *shape, gpubench_args *a,
                      gpubench_error *err)
{
    (void)user, (void)err;
    int64_t n = field_int(shape, "n");
    gpubench_args_tensor(a, "f32", 1, &n, "randn");
    gpubench_args_tensor(a, "f32", 1, &n, "output");
    gpubench_args_i32(a, (int32_t)n);
    return GPUBENCH_OK;
}

static int scale_launch(void *user, const gpubench_fields *config, const gpubench_fields *shape,
                        gpubench_launch *out, gpubench_error *err)
{
    (void)user, (void)err;
    int64_t per_block = field_int(config, "BLOCK") * field_int(config, "ITEMS");
    out->grid[0] = (uint32_t)((field_int(shape, "n") + per_block - 1) / per_block);
    out->block[0] = (uint32_t)field_int(config, "BLOCK");
    return GPUBENCH_OK;
}

/* At most 512 elements a block: 256 x 3 is dropped. */
static int scale_constraint(void *user, const gpubench_fields *config, int *keep,
                            gpubench_error *err)
{
    (void)user, (void)err;
    *keep = field_int(config, "BLOCK") * field_int(config, "ITEMS") <= 512;
    return GPUBENCH_OK;
}

static gpubench_kernel *scale_kernel(fixture *f, const char *name)
{
    gpubench_kernel *k = NULL;
    const int64_t blocks[] = {64, 128, 256}, items[] = {1, 3};
    gpubench_callbacks cb = {
        .args = scale_args, .launch = scale_launch, .constraint = scale_constraint, .user = f};
    if (gpubench_kernel_new(name, &k, &f->err) || gpubench_kernel_source(k, SOURCE, &f->err) ||
        gpubench_kernel_entry(k, "scale<${BLOCK}, ${ITEMS}>", &f->err) ||
        gpubench_kernel_param_ints(k, "BLOCK", blocks, 3, &f->err) ||
        gpubench_kernel_param_ints(k, "ITEMS", items, 2, &f->err) ||
        gpubench_kernel_callbacks(k, &cb, &f->err))
        fail_msg("declaring %s: %s", name, f->err.message);
    return k;
}

static gpubench_fields *shape_n(int64_t n)
{
    gpubench_fields *s = NULL;
    assert_int_equal(gpubench_fields_new(&s), GPUBENCH_OK);
    assert_int_equal(gpubench_fields_set_int(s, "n", n), GPUBENCH_OK);
    return s;
}

static gpubench_session *open_session(fixture *f, int compile_only)
{
    gpubench_session_options o;
    gpubench_session_options_init(&o);
    o.cache_dir = f->cache;
    o.worker = GB_FAKE_WORKER;
    o.jobs = 2;
    o.compile_only = compile_only;
    gpubench_session *s = NULL;
    if (gpubench_session_open(&o, &s, &f->err)) fail_msg("open: %s", f->err.message);
    return s;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/gb-test-api-XXXXXX");
    if (!f || !mkdtemp(f->dir)) return -1;
    snprintf(f->cache, sizeof f->cache, "%s/cache", f->dir);
    char leases[128];
    snprintf(leases, sizeof leases, "%s/leases", f->dir);
    setenv("GPUBENCH_LEASE_DIR", leases, 1);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    gpubench_kernel_free(f->kernel);
    gpubench_session_close(f->session);
    scratch_remove(f->dir);
    free(f);
    return 0;
}

/* ---- tests --------------------------------------------------------------------- */

static void test_tune_then_answer_from_the_cache_then_look_up_exact_and_nearest(void **state)
{
    fixture *f = *state;
    f->session = open_session(f, 0);
    f->kernel = scale_kernel(f, "scale.f32");
    gpubench_fields *shape = shape_n(3840);
    gpubench_best best = {0};
    if (gpubench_tune(f->session, f->kernel, shape, NULL, &best, &f->err))
        fail_msg("tune: %s", f->err.message);
    /* The fake GPU's time is the grid: 3840 / (128 x 3) = 10 blocks is the least. */
    assert_int_equal(field_int(best.config, "BLOCK"), 128);
    assert_int_equal(field_int(best.config, "ITEMS"), 3);
    assert_true(best.median_ms == 10.0);
    assert_int_equal(best.match, GPUBENCH_EXACT);
    assert_false(best.cached);
    assert_int_equal(field_int(best.shape, "n"), 3840);
    assert_non_null(strstr(best.device, "/"));
    char device[320];
    snprintf(device, sizeof device, "%s", best.device);
    gpubench_best_clear(&best);

    /* Again: the cache answers, nothing is measured. */
    if (gpubench_tune(f->session, f->kernel, shape, NULL, &best, &f->err))
        fail_msg("tune again: %s", f->err.message);
    assert_true(best.cached && best.median_ms == 10.0);
    gpubench_best_clear(&best);

    /* Looked up: this shape exactly; 4000 is nearest to it. */
    assert_int_equal(gpubench_lookup(f->session, f->kernel, shape, &best, &f->err), 0);
    assert_int_equal(best.match, GPUBENCH_EXACT);
    assert_int_equal(field_int(best.config, "BLOCK"), 128);
    gpubench_best_clear(&best);
    gpubench_fields *other = shape_n(4000);
    assert_int_equal(gpubench_lookup(f->session, f->kernel, other, &best, &f->err), 0);
    assert_int_equal(best.match, GPUBENCH_NEAREST);
    assert_int_equal(field_int(best.shape, "n"), 3840);
    assert_string_equal(best.device, device);
    gpubench_best_clear(&best);

    /* A lookup reads the kernel's entries once; a tune in the session adds its own. */
    gpubench_fields *more = shape_n(7680);
    assert_int_equal(gpubench_tune(f->session, f->kernel, more, NULL, &best, &f->err), 0);
    gpubench_best_clear(&best);
    assert_int_equal(gpubench_lookup(f->session, f->kernel, more, &best, &f->err), 0);
    assert_int_equal(best.match, GPUBENCH_EXACT);
    assert_int_equal(field_int(best.shape, "n"), 7680);
    gpubench_best_clear(&best);
    gpubench_fields_free(more);

    /* A later process: a new session answers from the cache without a GPU. */
    gpubench_session_close(f->session);
    f->session = open_session(f, 0);
    assert_int_equal(gpubench_lookup(f->session, f->kernel, other, &best, &f->err), 0);
    assert_int_equal(best.match, GPUBENCH_NEAREST);
    assert_int_equal(field_int(best.config, "ITEMS"), 3);
    gpubench_best_clear(&best);
    gpubench_fields_free(other);
    gpubench_fields_free(shape);
}

static void test_a_kernel_with_no_entry_is_not_found_and_an_odd_shape_is_refused(void **state)
{
    fixture *f = *state;
    f->session = open_session(f, 0);
    f->kernel = scale_kernel(f, "never_tuned");
    gpubench_fields *shape = shape_n(10);
    gpubench_best best = {0};
    int rc = gpubench_lookup(f->session, f->kernel, shape, &best, &f->err);
    if (rc != GPUBENCH_ENOTFOUND) fail_msg("%d: %s", rc, f->err.message);
    assert_int_equal(f->err.code, GPUBENCH_ENOTFOUND);
    assert_non_null(strstr(f->err.message, "looking up never_tuned"));
    assert_null(best.config);
    gpubench_fields_free(shape);

    /* The key is the shape's fields; a lookup without one is refused by name. */
    const char *key[] = {"n"};
    assert_int_equal(gpubench_kernel_key(f->kernel, key, 1, &f->err), GPUBENCH_OK);
    gpubench_fields *empty = NULL;
    gpubench_fields_new(&empty);
    assert_int_equal(gpubench_lookup(f->session, f->kernel, empty, &best, &f->err),
                     GPUBENCH_EINVAL);
    assert_non_null(strstr(f->err.message, "key field n is not in the shape"));
    gpubench_fields_free(empty);
}

static void test_compiling_only_compiles_every_kept_variant_and_times_nothing(void **state)
{
    fixture *f = *state;
    f->session = open_session(f, 1);
    f->kernel = scale_kernel(f, "scale.compile");
    gpubench_fields *shape = shape_n(1000);
    gpubench_best best = {0};
    assert_int_equal(gpubench_tune(f->session, f->kernel, shape, NULL, &best, &f->err),
                     GPUBENCH_ENOGPU);
    assert_non_null(strstr(f->err.message, "compiled 5 variants"));
    assert_null(best.config);
    gpubench_fields_free(shape);
}

/* Each declaration error names the kernel and what is wrong with it. */
static void test_bad_declarations_are_refused_with_what_is_wrong(void **state)
{
    fixture *f = *state;
    gpubench_kernel *k = NULL;
    assert_int_equal(gpubench_kernel_new("two words", &k, &f->err), GPUBENCH_EINVAL);
    assert_non_null(strstr(f->err.message, "'two words' may use only"));
    assert_int_equal(gpubench_kernel_new("k", &k, &f->err), GPUBENCH_OK);
    f->kernel = k;
    const int64_t one[] = {1}, twice[] = {2, 2};
    assert_int_equal(gpubench_kernel_param_ints(k, "int", one, 1, &f->err), GPUBENCH_EINVAL);
    assert_non_null(strstr(f->err.message, "kernel k: parameter 'int'"));
    assert_int_equal(gpubench_kernel_param_ints(k, "B", twice, 2, &f->err), GPUBENCH_EINVAL);
    assert_int_equal(gpubench_kernel_param_ints(k, "B", one, 0, &f->err), GPUBENCH_EINVAL);
    assert_int_equal(gpubench_kernel_math(k, "fp7", &f->err), GPUBENCH_EINVAL);
    assert_non_null(strstr(f->err.message, "math 'fp7'"));
    assert_int_equal(gpubench_kernel_template(k, "no_such_template.cuh", &f->err),
                     GPUBENCH_ENOTFOUND);
    assert_non_null(strstr(f->err.message, "no_such_template.cuh not found (looked in"));
    const int bad_output[] = {40};
    assert_int_equal(gpubench_kernel_check(k, bad_output, 1, -1, -1, 0, &f->err), GPUBENCH_EINVAL);

    /* A reference may have no parameters. */
    gpubench_kernel *ref = scale_kernel(f, "ref");
    assert_int_equal(gpubench_kernel_reference(k, ref, &f->err), GPUBENCH_EINVAL);
    assert_non_null(strstr(f->err.message, "reference ref has tuning parameters"));
    gpubench_kernel_free(ref);

    /* What tuning needs is checked before anything runs. */
    f->session = open_session(f, 0);
    gpubench_fields *shape = shape_n(64);
    gpubench_best best = {0};
    assert_int_equal(gpubench_tune(f->session, k, shape, NULL, &best, &f->err), GPUBENCH_EINVAL);
    assert_non_null(strstr(f->err.message, "kernel k has no source"));
    assert_int_equal(gpubench_kernel_source(k, SOURCE, &f->err), GPUBENCH_OK);
    assert_int_equal(gpubench_kernel_entry(k, "scale<${BLOCK}, 1>", &f->err), GPUBENCH_OK);
    gpubench_callbacks cb = {.args = scale_args, .launch = scale_launch, .user = f};
    assert_int_equal(gpubench_kernel_callbacks(k, &cb, &f->err), GPUBENCH_OK);
    assert_int_equal(gpubench_tune(f->session, k, shape, NULL, &best, &f->err), GPUBENCH_EINVAL);
    assert_non_null(strstr(f->err.message, "uses ${BLOCK}, which is not a parameter"));
    gpubench_fields_free(shape);
}

static int bad_dtype_args(void *user, const gpubench_fields *shape, gpubench_args *a,
                          gpubench_error *err)
{
    (void)user, (void)shape, (void)err;
    const int64_t n = 16;
    gpubench_args_tensor(a, "f33", 1, &n, "randn"); /* ignored return: the list keeps it */
    return GPUBENCH_OK;
}

static int failing_launch(void *user, const gpubench_fields *config, const gpubench_fields *shape,
                          gpubench_launch *out, gpubench_error *err)
{
    (void)user, (void)config, (void)shape, (void)out;
    return gpubench_error_set(err, GPUBENCH_EINVAL, "no launch for n=%d", 7);
}

/* A callback's failure stops the tune with its message, before the GPU is used. */
static void test_a_failing_callback_stops_the_tune_with_its_message(void **state)
{
    fixture *f = *state;
    f->session = open_session(f, 0);
    f->kernel = scale_kernel(f, "cb");
    gpubench_callbacks cb = {.args = bad_dtype_args, .launch = scale_launch, .user = f};
    assert_int_equal(gpubench_kernel_callbacks(f->kernel, &cb, &f->err), GPUBENCH_OK);
    gpubench_fields *shape = shape_n(16);
    gpubench_best best = {0};
    assert_int_equal(gpubench_tune(f->session, f->kernel, shape, NULL, &best, &f->err),
                     GPUBENCH_ECALLBACK);
    assert_non_null(
        strstr(f->err.message, "the args callback: argument 1: a tensor's dtype 'f33'"));
    cb = (gpubench_callbacks){.args = scale_args, .launch = failing_launch};
    gpubench_kernel_callbacks(f->kernel, &cb, &f->err);
    assert_int_equal(gpubench_tune(f->session, f->kernel, shape, NULL, &best, &f->err),
                     GPUBENCH_ECALLBACK);
    assert_non_null(strstr(f->err.message, "the launch callback: no launch for n=7"));
    gpubench_fields_free(shape);
}

static void test_options_of_another_size_and_a_missing_worker_are_refused(void **state)
{
    fixture *f = *state;
    gpubench_session_options o;
    gpubench_session_options_init(&o);
    o.size = 8;
    gpubench_session *s = NULL;
    assert_int_equal(gpubench_session_open(&o, &s, &f->err), GPUBENCH_EINVAL);
    assert_non_null(strstr(f->err.message, "gpubench_session_options_init"));
    gpubench_session_options_init(&o);
    o.cache_dir = f->cache;
    o.worker = "/nonexistent/gpubench-tune";
    assert_int_equal(gpubench_session_open(&o, &s, &f->err), GPUBENCH_EINVAL);
    assert_non_null(strstr(f->err.message, "/nonexistent/gpubench-tune is not an executable"));
    assert_null(s);
}

static void test_fields_keep_kinds_and_print_canonically(void **state)
{
    (void)state;
    gpubench_fields *f = NULL;
    assert_int_equal(gpubench_fields_new(&f), GPUBENCH_OK);
    assert_int_equal(gpubench_fields_set_int(f, "M", 1024), GPUBENCH_OK);
    assert_int_equal(gpubench_fields_set_string(f, "dtype", "bf16"), GPUBENCH_OK);
    assert_int_equal(gpubench_fields_set_number(f, "alpha", 0.5), GPUBENCH_OK);
    assert_int_equal(gpubench_fields_set_bool(f, "batched", 1), GPUBENCH_OK);
    assert_int_equal(gpubench_fields_set_int(f, "", 1), GPUBENCH_EINVAL);
    assert_int_equal(gpubench_fields_count(f), 4);
    assert_string_equal(gpubench_fields_name(f, 0), "M");
    assert_null(gpubench_fields_name(f, 4));
    int64_t i;
    double x;
    const char *s;
    int b;
    gpubench_kind kind;
    assert_int_equal(gpubench_fields_get_int(f, "dtype", &i), GPUBENCH_EINVAL);
    assert_int_equal(gpubench_fields_get_int(f, "N", &i), GPUBENCH_ENOTFOUND);
    assert_int_equal(gpubench_fields_get_number(f, "M", &x), GPUBENCH_OK); /* an int reads */
    assert_true(x == 1024.0);
    assert_int_equal(gpubench_fields_get_string(f, "dtype", &s), GPUBENCH_OK);
    assert_string_equal(s, "bf16");
    assert_int_equal(gpubench_fields_get_bool(f, "batched", &b), GPUBENCH_OK);
    assert_int_equal(gpubench_fields_kind(f, "alpha", &kind), GPUBENCH_OK);
    assert_int_equal(kind, GPUBENCH_NUMBER);
    char text[64];
    size_t len = gpubench_fields_text(f, text, sizeof text);
    assert_string_equal(text, "M=1024,alpha=0.5,batched=true,dtype=\"bf16\"");
    assert_int_equal(len, strlen(text));
    assert_int_equal(gpubench_fields_text(f, text, 4), len); /* cut, as snprintf */
    assert_string_equal(text, "M=1");
    gpubench_fields_free(f);
    int major = -1;
    assert_non_null(gpubench_version(&major, NULL, NULL));
    assert_int_equal(major, GPUBENCH_VERSION_MAJOR);
    assert_string_equal(gpubench_strerror(GPUBENCH_ENOTFOUND), "not found");
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_tune_then_answer_from_the_cache_then_look_up_exact_and_nearest),
        T(test_a_kernel_with_no_entry_is_not_found_and_an_odd_shape_is_refused),
        T(test_compiling_only_compiles_every_kept_variant_and_times_nothing),
        T(test_bad_declarations_are_refused_with_what_is_wrong),
        T(test_a_failing_callback_stops_the_tune_with_its_message),
        T(test_options_of_another_size_and_a_missing_worker_are_refused),
        T(test_fields_keep_kinds_and_print_canonically),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
