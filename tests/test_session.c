/* The tuning session (session/session.c) over the tuner's fake GPU backend
 * (tuner_fixture.h): the GPU opened once and its device noted in the run's
 * context, every call counted, noted once per kernel and device and handed to
 * the outputs; no GPU switches the session to compiling only, or is the call's
 * error with require_gpu; a request that does not check never opens the GPU. */
#include "session/session.h"
#include "tuner_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An output that counts what it is given. */
typedef struct counting {
    gb_output base;
    int shapes, calls;
    char kernel[64];
} counting;

static int count_shape(gb_output *o, const gb_report_entry *e, gb_err *err)
{
    (void)err;
    counting *c = (counting *)o;
    c->shapes++;
    snprintf(c->kernel, sizeof c->kernel, "%s", e->kernel);
    return GB_OK;
}

static int count_call(gb_output *o, const char *kernel, const gb_tune_result *call, gb_err *err)
{
    (void)kernel, (void)call, (void)err;
    ((counting *)o)->calls++;
    return GB_OK;
}

static const gb_output_ops COUNTING = {
    .name = "counting", .shape = count_shape, .call_end = count_call};

typedef struct opener {
    fixture *f;
    int opened;
    int fail; /* GB_OK, or what opening returns (GB_ENOGPU: no GPU) */
} opener;

/* The session's own executor over the fixture's fake (destroying it leaves the
 * fake alone). */
static int open_fake(void *ctx, gb_exec **out, gb_err *err)
{
    opener *o = ctx;
    o->opened++;
    if (o->fail) return gb_err_set(err, o->fail, "no CUDA-capable device is detected");
    return gb_exec_create(&fake_ops, &o->f->fake, out, err);
}

static gb_session session_of(fixture *f, opener *o, counting *out, gb_run_context *ctx)
{
    gb_session s = {.tuner = f->opts,
                    .open_exec = open_fake,
                    .open_exec_ctx = o,
                    .output = &out->base,
                    .context = ctx};
    s.tuner.exec = NULL; /* opened by the session, the first time it is needed */
    return s;
}

static void test_tunes_counts_notes_and_reports(void **state)
{
    fixture *f = *state;
    opener o = {.f = f};
    counting out = {.base = {.ops = &COUNTING}};
    gb_run_context ctx = {0};
    gb_session s = session_of(f, &o, &out, &ctx);
    gb_tune_request req = {.shapes = f->shapes, .n_shapes = 2};
    gb_tune_result r;
    gb_err err = {0};
    assert_int_equal(gb_session_tune(&s, &f->kernel, &req, &r, &err), GB_OK);
    assert_int_equal(r.n_shapes, 2);
    assert_true(r.shapes[0].has_best && r.shapes[1].has_best);
    gb_tune_result_free(&r);
    assert_int_equal(o.opened, 1);
    assert_true(ctx.has_device); /* the context learned the device */
    assert_int_equal(s.n_tuned, 1);
    assert_int_equal(s.n_shapes_failed, 0);
    assert_int_equal(out.shapes, 2);
    assert_int_equal(out.calls, 1);
    assert_string_equal(out.kernel, "fake_kernel");
    assert_int_equal(s.n_tuned_kernels, 1);
    assert_string_equal(s.tuned[0].kernel, "fake_kernel");
    assert_true(s.tuned[0].device[0] != '\0');
    /* Again: the same GPU, and the kernel noted once. */
    assert_int_equal(gb_session_tune(&s, &f->kernel, &req, &r, &err), GB_OK);
    gb_tune_result_free(&r);
    assert_int_equal(o.opened, 1);
    assert_int_equal(s.n_tuned, 2);
    assert_int_equal(s.n_tuned_kernels, 1);
    assert_int_equal(out.shapes, 4);
    gb_session_close(&s);
    assert_null(s.tuner.exec);
    assert_int_equal(s.n_tuned_kernels, 0);
}

static void test_no_gpu_compiles_only_and_says_so(void **state)
{
    fixture *f = *state;
    opener o = {.f = f, .fail = GB_ENOGPU};
    counting out = {.base = {.ops = &COUNTING}};
    gb_run_context ctx = {0};
    gb_session s = session_of(f, &o, &out, &ctx);
    char *log = NULL;
    size_t log_len = 0;
    s.tuner.log = open_memstream(&log, &log_len);
    gb_tune_request req = {.shapes = f->shapes, .n_shapes = 1};
    gb_tune_result r;
    gb_err err = {0};
    assert_int_equal(gb_session_tune(&s, &f->kernel, &req, &r, &err), GB_OK);
    assert_true(r.compile_only);
    assert_int_equal(f->fake.trials, 0);
    gb_tune_result_free(&r);
    assert_true(s.gpu_missing);
    assert_string_equal(s.gpu_missing_err.msg, "no CUDA-capable device is detected");
    /* A second call does not try the GPU again. */
    assert_int_equal(gb_session_tune(&s, &f->kernel, &req, &r, &err), GB_OK);
    gb_tune_result_free(&r);
    assert_int_equal(o.opened, 1);
    fclose(s.tuner.log);
    assert_non_null(strstr(log, "no CUDA-capable device is detected; compiling only"));
    free(log);
    assert_int_equal(gb_session_gpu(&s, NULL, &err), GB_ENOGPU);
    gb_session_close(&s);
}

static void test_require_gpu_makes_no_gpu_the_error(void **state)
{
    fixture *f = *state;
    opener o = {.f = f, .fail = GB_ENOGPU};
    counting out = {.base = {.ops = &COUNTING}};
    gb_session s = session_of(f, &o, &out, NULL);
    s.require_gpu = true;
    gb_tune_request req = {.shapes = f->shapes, .n_shapes = 1};
    gb_tune_result r;
    gb_err err = {0};
    assert_int_equal(gb_session_tune(&s, &f->kernel, &req, &r, &err), GB_ENOGPU);
    assert_string_equal(err.msg, "no CUDA-capable device is detected");
    gb_tune_result_free(&r);
    assert_false(s.gpu_missing);
    assert_int_equal(s.n_tuned, 0);
    assert_int_equal(out.shapes, 0);
    gb_session_close(&s);
}

static void test_a_request_that_does_not_check_never_opens_the_gpu(void **state)
{
    fixture *f = *state;
    opener o = {.f = f};
    counting out = {.base = {.ops = &COUNTING}};
    gb_session s = session_of(f, &o, &out, NULL);
    f->hooks.args_fail = true;
    gb_tune_request req = {.shapes = f->shapes, .n_shapes = 1};
    gb_tune_result r;
    gb_err err = {0};
    assert_int_equal(gb_session_tune(&s, &f->kernel, &req, &r, &err), GB_ESCRIPT);
    gb_tune_result_free(&r);
    assert_int_equal(o.opened, 0);
    assert_int_equal(s.n_tuned, 0);
    gb_session_close(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_tunes_counts_notes_and_reports, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_gpu_compiles_only_and_says_so, setup, teardown),
        cmocka_unit_test_setup_teardown(test_require_gpu_makes_no_gpu_the_error, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_request_that_does_not_check_never_opens_the_gpu,
                                        setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
