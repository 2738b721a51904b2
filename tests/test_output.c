/*
 * The output seam (report/output.h): the multiplexer feeds every output, puts
 * begin off until the first entry, goes on past an output that fails and returns
 * the first error; and the roofs an entry is set against (engine/roofs.h,
 * report/result.h).
 */
#include "report/output.h"
#include "report_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* An output that writes each call it gets into a log, and fails on request. */
typedef struct spy {
    gb_output base;
    char log[512];
    const char *fail_on; /* "begin", "shape", "end" or NULL */
    char *device_seen;   /* the device name begin saw */
} spy;

static int note(gb_output *o, const char *call, const char *detail, gb_err *err)
{
    spy *s = (spy *)o;
    size_t len = strlen(s->log);
    snprintf(s->log + len, sizeof s->log - len, "%s%s%s;", call, detail ? " " : "",
             detail ? detail : "");
    if (s->fail_on && strcmp(s->fail_on, call) == 0)
        return gb_err_set(err, GB_EIO, "spy: %s failed", call);
    return GB_OK;
}

static int spy_begin(gb_output *o, const gb_run_context *ctx, gb_err *err)
{
    ((spy *)o)->device_seen = strdup(ctx->has_device ? ctx->device.name : "none");
    return note(o, "begin", NULL, err);
}

static int spy_shape(gb_output *o, const gb_report_entry *e, gb_err *err)
{
    return note(o, "shape", e->result->key_text, err);
}

static int spy_call_end(gb_output *o, const char *kernel, const gb_tune_result *call, gb_err *err)
{
    return note(o, "call_end", kernel, err);
}

static int spy_end(gb_output *o, gb_err *err)
{
    return note(o, "end", NULL, err);
}

static void spy_destroy(gb_output *o)
{
    (void)o; /* the test owns its spies */
}

static const gb_output_ops spy_ops = {"spy",        spy_begin, spy_shape,
                                      spy_call_end, spy_end,   spy_destroy};

static void test_the_mux_begins_at_the_first_entry_with_the_context_as_it_is_then(void **state)
{
    (void)state;
    gb_report r;
    report_fixture(&r);
    gb_run_context ctx = r.context;
    ctx.has_device = false;
    spy a = {.base.ops = &spy_ops};
    gb_output *mux;
    gb_err err = {0};
    assert_int_equal(gb_output_mux(&mux, &err), GB_OK);
    assert_int_equal(gb_output_mux_add(mux, &a.base, &err), GB_OK);
    assert_int_equal(gb_output_begin(mux, &ctx, &err), GB_OK);
    assert_string_equal(a.log, "");
    ctx.has_device = true; /* the GPU was found when the first call needed it */
    assert_int_equal(gb_output_shape(mux, &r.entries[0], &err), GB_OK);
    assert_int_equal(gb_output_call_end(mux, "gemm_f32", NULL, &err), GB_OK);
    assert_int_equal(gb_output_end(mux, &err), GB_OK);
    assert_string_equal(a.log, "begin;shape K=1024,M=1024,N=1024;call_end gemm_f32;end;");
    assert_string_equal(a.device_seen, "NVIDIA H200");
    free(a.device_seen);
    gb_output_destroy(mux);
    gb_report_free(&r);
}

static void test_a_failing_output_stops_alone_and_its_first_error_is_returned(void **state)
{
    (void)state;
    gb_report r;
    report_fixture(&r);
    spy bad = {.base.ops = &spy_ops, .fail_on = "shape"}, good = {.base.ops = &spy_ops};
    gb_output *mux;
    gb_err err = {0};
    assert_int_equal(gb_output_mux(&mux, &err), GB_OK);
    assert_int_equal(gb_output_mux_add(mux, &bad.base, &err), GB_OK);
    assert_int_equal(gb_output_mux_add(mux, &good.base, &err), GB_OK);
    assert_int_equal(gb_output_mux_count(mux), 2);
    assert_int_equal(gb_output_render(mux, &r, &err), GB_EIO);
    assert_string_equal(err.msg, "spy: shape failed");
    /* the failed one got nothing more; the other got the whole run */
    assert_string_equal(bad.log, "begin;shape K=1024,M=1024,N=1024;");
    assert_string_equal(good.log, "begin;shape K=1024,M=1024,N=1024;shape K=2048,M=2048,N=2048;"
                                  "shape K=4096,M=4096,N=4096;shape N=16777216;end;");
    free(bad.device_seen);
    free(good.device_seen);
    gb_output_destroy(mux);
    gb_report_free(&r);
}

static void test_peaks_come_from_the_sms_the_clock_and_the_units_of_the_architecture(void **state)
{
    (void)state;
    gb_device_info h200 = {.cc_major = 9, .sms = 132, .sm_clock_khz = 1980000, .peak_gbps = 4800};
    gb_roofs roofs;
    gb_roofs_peaks(&h200, &roofs);
    assert_float_equal(roofs.peak_gbps, 4800, 1e-9);
    assert_float_equal(roofs.peak_tflops[GB_MATH_BF16], 132 * 4096 * 1.98e9 / 1e12, 1e-6);
    assert_float_equal(roofs.peak_tflops[GB_MATH_FP32], 132 * 256 * 1.98e9 / 1e12, 1e-6);
    gb_device_info unknown = {.cc_major = 6, .cc_minor = 1, .sms = 20, .sm_clock_khz = 1e6};
    gb_roofs_peaks(&unknown, &roofs);
    assert_float_equal(roofs.peak_tflops[GB_MATH_FP32], 0, 0);
}

static void test_an_entry_sits_under_the_lower_of_its_memory_and_compute_roofs(void **state)
{
    (void)state;
    gb_report r;
    report_fixture(&r);
    const gb_roofs *roofs = &r.context.roofs;
    bool memory_bound;
    /* sgemm 1024: 2*1024^3 flops over 12 MiB is 170.7 flop/B: under fp32's 66.9 TF roof */
    const gb_report_entry *gemm = &r.entries[0];
    assert_float_equal(gb_entry_intensity(gemm), 2.0 * 1024 / 12, 1e-9);
    double roof = gb_entry_roof_tflops(gemm, roofs, false, &memory_bound);
    assert_float_equal(roof, roofs->peak_tflops[GB_MATH_FP32], 1e-9);
    assert_false(memory_bound);
    /* the copy moves bytes and does no flops: bandwidth is its only roof */
    const gb_report_entry *copy = &r.entries[3];
    assert_float_equal(gb_entry_intensity(copy), 0, 0);
    assert_float_equal(gb_entry_gbps(copy), 2.0 * 4 * 16777216 / 0.0330e-3 / 1e9, 1e-6);
    gb_report_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_mux_begins_at_the_first_entry_with_the_context_as_it_is_then),
        cmocka_unit_test(test_a_failing_output_stops_alone_and_its_first_error_is_returned),
        cmocka_unit_test(test_peaks_come_from_the_sms_the_clock_and_the_units_of_the_architecture),
        cmocka_unit_test(test_an_entry_sits_under_the_lower_of_its_memory_and_compute_roofs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
