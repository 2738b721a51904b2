/*
 * The worker protocol's payloads (exec/proto.h): every payload goes through a
 * socket pair and reads back equal, and a payload whose fields are wrong is
 * refused, with a sentence that says what, leaving nothing half-decoded. The
 * framing and what the reader refuses before a payload is decoded is
 * test_proto_frame.c.
 */
#include "exec/proto.h"

#include "exec/proto.h"

#include "exec/interrupt.h"
#include "proto_fixture.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#define N_OF(array) ((int)(sizeof(array) / sizeof *(array)))

static void contains_at(const char *text, const char *part, const char *file, int line)
{
    if (strstr(text, part)) return;
    print_error("\"%s\" does not contain \"%s\"\n", text, part);
    _fail(file, line);
}
#define assert_contains(text, part) contains_at((text), (part), __FILE__, __LINE__)

/* ---- payloads through the socket ---------------------------------------- */

/* Sends payload as a message of this type from [0] to [1] and decodes what
 * arrived into out; returns the text that went over the wire (free it). */
static char *deliver(const int *fds, gb_msg_type type, const void *payload, void *out)
{
    gb_err err;
    gb_msg m;
    assert_int_equal(gb_proto_send(fds[0], type, payload, NULL, 0, &err), GB_OK);
    assert_int_equal(gb_proto_recv(fds[1], gb_now_ms() + 5000, &m, &err), GB_OK);
    assert_int_equal(m.type, type);
    if (gb_proto_decode(&m, out, &err))
        fail_msg("decoding a %s: %s", gb_msg_type_name(type), err.msg);
    char *text = gb_json_dump(m.json, false);
    gb_msg_free(&m);
    return text;
}

static void assert_same_arg(const gb_arg *got, const gb_arg *want)
{
    assert_int_equal(got->kind, want->kind);
    assert_string_equal(gb_dtype_name(got->dtype), gb_dtype_name(want->dtype));
    if (want->kind == GB_ARG_SCALAR) {
        assert_true(got->int_value == want->int_value);
        assert_true(got->float_value == want->float_value);
        return;
    }
    assert_int_equal(got->n_dims, want->n_dims);
    for (int d = 0; d < want->n_dims; d++)
        assert_true(got->dims[d] == want->dims[d]);
    assert_string_equal(gb_init_name(got->init), gb_init_name(want->init));
    assert_true(got->init_value == want->init_value);
    assert_int_equal(got->checked, want->checked);
}

static gb_arg tensor(gb_dtype dtype, gb_init init, int n_dims, const int64_t *dims)
{
    gb_arg a = {.kind = GB_ARG_TENSOR, .dtype = dtype, .init = init, .n_dims = n_dims};
    memcpy(a.dims, dims, (size_t)n_dims * sizeof *dims);
    return a;
}

static gb_arg int_scalar(gb_dtype dtype, int64_t v)
{
    return (gb_arg){.kind = GB_ARG_SCALAR, .dtype = dtype, .int_value = v};
}

static gb_arg float_scalar(gb_dtype dtype, double v)
{
    return (gb_arg){.kind = GB_ARG_SCALAR, .dtype = dtype, .float_value = v};
}

static void test_problem_args_of_every_init_and_extreme_scalars_round_trip(void **state)
{
    gb_arg sent[] = {
        tensor(GB_DT_F32, GB_INIT_RANDN, 2, (int64_t[]){2, 3}),
        tensor(GB_DT_BF16, GB_INIT_RAND, 1, (int64_t[]){(int64_t)1 << 40}),
        tensor(GB_DT_I32, GB_INIT_ZEROS, 8, (int64_t[]){1, 2, 3, 4, 5, 6, 7, 8}),
        tensor(GB_DT_F16, GB_INIT_ONES, 1, (int64_t[]){0}),
        tensor(GB_DT_F64, GB_INIT_OUTPUT, 1, (int64_t[]){5}),
        tensor(GB_DT_FP8_E4M3, GB_INIT_VALUE, 1, (int64_t[]){4}),
        int_scalar(GB_DT_I64, INT64_MIN),
        int_scalar(GB_DT_I64, INT64_MAX),
        int_scalar(GB_DT_I32, -1),
        int_scalar(GB_DT_U32, UINT32_MAX),
        float_scalar(GB_DT_F32, 0.1),
        float_scalar(GB_DT_F64, -1e300),
    };
    sent[5].init_value = -2.5;
    sent[4].checked = true;
    gb_proto_problem problem = {.seed = UINT64_MAX, .n_args = N_OF(sent)}, got;
    memcpy(problem.args, sent, sizeof sent);
    char *text = deliver(*state, GB_MSG_PROBLEM, &problem, &got);
    /* 64-bit integers are JSON integers, exact; the seed travels as its int64 bits */
    assert_contains(text, "\"int_value\":-9223372036854775808");
    assert_contains(text, "\"int_value\":9223372036854775807");
    assert_contains(text, "\"seed\":-1");
    free(text);
    assert_true(got.seed == UINT64_MAX);
    assert_int_equal(got.n_args, N_OF(sent));
    for (int i = 0; i < got.n_args; i++)
        assert_same_arg(&got.args[i], &sent[i]);
}

static void test_a_tensormap_arg_round_trips_with_its_view_and_modes(void **state)
{
    gb_arg sent[] = {
        tensor(GB_DT_BF16, GB_INIT_RANDN, 3, (int64_t[]){4, 300, 1024}),
        {.kind = GB_ARG_TENSORMAP,
         .dtype = GB_DT_BF16,
         .tensor = 0,
         .n_dims = 2,
         .dims = {1200, 1000},
         .n_strides = 2,
         .strides = {1024, 1},
         .n_box = 2,
         .box = {256, 64},
         .swizzle = GB_SWIZZLE_128B,
         .l2_promotion = GB_L2_PROMOTION_256B,
         .oob_fill = GB_OOB_NAN},
    };
    gb_proto_problem problem = {.seed = 1, .n_args = N_OF(sent)}, got;
    memcpy(problem.args, sent, sizeof sent);
    char *text = deliver(*state, GB_MSG_PROBLEM, &problem, &got);
    assert_contains(text, "\"kind\":\"tensormap\"");
    assert_contains(text, "\"swizzle\":\"128B\"");
    free(text);
    const gb_arg *m = &got.args[1];
    assert_int_equal(m->kind, GB_ARG_TENSORMAP);
    assert_int_equal(m->tensor, 0);
    assert_int_equal(m->n_dims, 2);
    assert_true(m->dims[0] == 1200 && m->dims[1] == 1000);
    assert_int_equal(m->n_strides, 2);
    assert_true(m->strides[0] == 1024 && m->strides[1] == 1);
    assert_int_equal(m->n_box, 2);
    assert_true(m->box[0] == 256 && m->box[1] == 64);
    assert_int_equal(m->swizzle, GB_SWIZZLE_128B);
    assert_int_equal(m->l2_promotion, GB_L2_PROMOTION_256B);
    assert_int_equal(m->oob_fill, GB_OOB_NAN);
}

static void test_a_problem_without_args_round_trips(void **state)
{
    gb_proto_problem problem = {.seed = 7}, got;
    free(deliver(*state, GB_MSG_PROBLEM, &problem, &got));
    assert_int_equal(got.n_args, 0);
    assert_true(got.seed == 7);
}

static void test_reference_variant_round_trips(void **state)
{
    gb_proto_variant sent = {.name = "_Z5sgemmILi64EEvPKfS1_Pf",
                             .launch = {.grid = {UINT32_MAX, 2, 3},
                                        .block = {128, 2, 1},
                                        .smem_bytes = 232448,
                                        .cluster = {2, 1, 1}},
                             .kernel = "sgemm",
                             .config = "BK=8,BM=64"},
                     got;
    free(deliver(*state, GB_MSG_REFERENCE, &sent, &got));
    assert_string_equal(got.name, sent.name);
    assert_string_equal(got.kernel, "sgemm"); /* the names of the worker's NVTX ranges */
    assert_string_equal(got.config, "BK=8,BM=64");
    for (int i = 0; i < 3; i++) {
        assert_int_equal(got.launch.grid[i], sent.launch.grid[i]);
        assert_int_equal(got.launch.block[i], sent.launch.block[i]);
    }
    assert_int_equal(got.launch.smem_bytes, sent.launch.smem_bytes);
    assert_int_equal(gb_launch_cluster_blocks(&got.launch), 2);
    gb_proto_free(GB_MSG_REFERENCE, &got);
}

static void test_trial_check_and_measure_options_round_trip(void **state)
{
    gb_proto_trial
        sent =
            {
                .variant = {.name = "k", .launch = {.grid = {1, 1, 1}, .block = {32, 1, 1}}},
                .check = {.n_outputs = 3, .outputs = {1, 4, 31}, .rtol = 1e-3, .atol = 1e-7},
                .measure = gb_measure_defaults(),
            },
        got;
    sent.measure.mode = GB_MODE_HOT;
    sent.measure.warmup_ms = 20.5;
    sent.measure.min_samples = 3;
    sent.measure.max_samples = 70000;
    sent.measure.max_ms = 1234.25;
    sent.measure.noise = 0.0125;
    sent.measure.hot_min_ms = 0.25;
    char *text = deliver(*state, GB_MSG_TRIAL, &sent, &got);
    assert_contains(text, "{\"name\":\"k\",\"launch\":"); /* the variant inline */
    free(text);
    assert_string_equal(got.variant.name, "k");
    assert_null(got.variant.kernel); /* not sent: the ranges' names are optional */
    assert_null(got.variant.config);
    assert_int_equal(got.check.n_outputs, 3);
    for (int i = 0; i < 3; i++)
        assert_int_equal(got.check.outputs[i], sent.check.outputs[i]);
    assert_true(got.check.rtol == sent.check.rtol);
    assert_true(got.check.atol == sent.check.atol);
    assert_true(gb_wire_equal(&gb_wire_measure_opts, &got.measure, &sent.measure));
    assert_int_equal(got.measure.mode, GB_MODE_HOT);
    assert_int_equal(got.measure.max_samples, 70000);
    assert_true(got.measure.hot_min_ms == 0.25);
    gb_proto_free(GB_MSG_TRIAL, &got);
}

static void test_device_round_trips(void **state)
{
    gb_device_info sent =
                       {
                           .ordinal = 3,
                           .cc_major = 9,
                           .cc_minor = 0,
                           .sms = 132,
                           .smem_per_block_optin = 232448,
                           .smem_per_sm = 233472,
                           .regs_per_sm = 65536,
                           .max_threads_per_block = 1024,
                           .l2_bytes = 52428800,
                           .mem_bytes = 150754820096,
                           .mem_clock_khz = 3201000,
                           .bus_width_bits = 6144,
                           .sm_clock_khz = 1980000,
                           .peak_gbps = 4915.2,
                           .driver_version = 13000,
                       },
                   got;
    strcpy(sent.name, "NVIDIA \"H200\" \\ test");
    strcpy(sent.arch, "sm_90a");
    strcpy(sent.clock_source, "nvml");
    strcpy(sent.uuid, "GPU-5b4e3c2a-1f0e-4d3c-9b8a-7f6e5d4c3b2a");
    strcpy(sent.pci_bus_id, "0000:3B:00.0");
    free(deliver(*state, GB_MSG_DEVICE, &sent, &got));
    assert_true(gb_wire_equal(&gb_wire_device_info, &got, &sent));
    assert_string_equal(got.name, sent.name);
    assert_string_equal(got.uuid, sent.uuid);
    assert_string_equal(got.pci_bus_id, sent.pci_bus_id);
    assert_true(got.mem_bytes == sent.mem_bytes);
    assert_true(got.peak_gbps == sent.peak_gbps);
}

static void test_error_round_trips(void **state)
{
    gb_proto_error sent = {.code = GB_EFAULT}, got;
    strcpy(sent.message, "cuLaunchKernel: CUDA_ERROR_ILLEGAL_ADDRESS");
    free(deliver(*state, GB_MSG_ERROR, &sent, &got));
    assert_int_equal(got.code, GB_EFAULT);
    assert_string_equal(got.message, sent.message);
}

/* ---- trial results ------------------------------------------------------ */

static void test_ok_result_brings_its_samples_and_recomputes_the_statistics(void **state)
{
    double samples_ms[] = {1.5, 1.25, 1.75, 1.5, 2.0, 1.0, 1.5, 1.5, 1.25, 1.75, 3.0};
    double clocks[] = {1980, 1980, 1980, 1980, 1980, 1980, 1980, 1980, 1980, 1980, 1500};
    bool throttled[] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}; /* the last, slow sample */
    gb_trial_result sent = {
        .status = GB_TRIAL_OK,
        .check = {.checked = true,
                  .n_compared = ((int64_t)1 << 40) + 3,
                  .max_abs_err = 1e-6,
                  .max_rel_err = 2e-4,
                  .first_bad_output = -1,
                  .first_bad_index = -1},
        .measurement = {.samples_ms = samples_ms,
                        .clock_mhz = clocks,
                        .throttled = throttled,
                        .n_samples = N_OF(samples_ms),
                        .wall_ms = 20.5,
                        .capped = true,
                        .launches_per_sample = 1,
                        .contended = true,
                        .n_other_procs = 2,
                        .stats = {.median = 999}}, /* wrong on purpose: not sent */
        .phases = {.load_ms = 0.75,
                   .check_ms = 1.5,
                   .warmup_ms = 10.25,
                   .sample_ms = 20.5,
                   .kernel_ms = 17.0,
                   .session_ms = 33.0,
                   .total_ms = 99.0}, /* the executor's own: not sent */
    };
    gb_stats want; /* of the samples not throttled */
    assert_int_equal(gb_stats_compute(samples_ms, N_OF(samples_ms) - 1, &want), GB_OK);
    gb_trial_result got;
    char *text = deliver(*state, GB_MSG_RESULT, &sent, &got);
    assert_null(strstr(text, "median")); /* derived, never sent */
    assert_null(strstr(text, "total_ms"));
    free(text);
    assert_string_equal(gb_trial_status_name(got.status), "ok");
    assert_string_equal(got.reason, "");
    assert_true(gb_wire_equal(&gb_wire_check_result, &got.check, &sent.check));
    assert_true(got.check.n_compared == sent.check.n_compared);
    const gb_measurement *m = &got.measurement;
    assert_int_equal(m->n_samples, N_OF(samples_ms));
    for (int i = 0; i < m->n_samples; i++)
        assert_true(m->samples_ms[i] == samples_ms[i] && m->clock_mhz[i] == clocks[i]);
    assert_true(m->wall_ms == 20.5);
    assert_true(m->capped);
    assert_true(m->contended);
    assert_int_equal(m->n_other_procs, 2);
    assert_int_equal(m->n_throttled, 1);
    assert_true(m->throttled[10] && !m->throttled[0]);
    assert_true(m->clock_mhz_median == 1980);
    assert_true(gb_wire_equal(&gb_wire_stats, &m->stats, &want));
    assert_true(gb_wire_equal(&gb_wire_trial_phases, &got.phases, &sent.phases));
    assert_true(got.phases.load_ms == 0.75 && got.phases.session_ms == 33.0);
    assert_true(got.phases.total_ms == 0);
    gb_trial_result_free(&got);
}

/* A failed trial's phases travel too: its load and check took time. */
static void test_a_failed_result_brings_the_phases_it_reached(void **state)
{
    gb_trial_result sent = {.status = GB_TRIAL_WRONG,
                            .check = {.checked = true, .n_bad = 1, .n_compared = 4},
                            .phases = {.load_ms = 0.5, .check_ms = 2.25, .session_ms = 3.0}};
    gb_trial_result got;
    char *text = deliver(*state, GB_MSG_RESULT, &sent, &got);
    assert_contains(text, "\"phases\":{\"load_ms\":0.5,\"check_ms\":2.25,\"warmup_ms\":0.0");
    free(text);
    assert_true(got.phases.load_ms == 0.5 && got.phases.check_ms == 2.25);
    assert_true(got.phases.warmup_ms == 0 && got.phases.sample_ms == 0);
    assert_true(got.phases.session_ms == 3.0);
}

static void test_wrong_result_has_no_measurement_and_nan_errors_travel_as_null(void **state)
{
    double samples_ms[] = {1.0, 2.0};
    gb_trial_result sent = {
        .status = GB_TRIAL_WRONG,
        .check = {.checked = true,
                  .n_bad = 3,
                  .n_compared = 1024,
                  .max_abs_err = NAN,
                  .max_rel_err = NAN,
                  .first_bad_output = 2,
                  .first_bad_index = 5000000000},
        .measurement = {.samples_ms = samples_ms, .n_samples = 2}, /* not sent for wrong */
    };
    strcpy(sent.reason, "3 of 1024 elements differ");
    gb_trial_result got;
    char *text = deliver(*state, GB_MSG_RESULT, &sent, &got);
    assert_contains(text, "\"max_abs_err\":null");
    assert_null(strstr(text, "measurement"));
    free(text);
    assert_string_equal(gb_trial_status_name(got.status), "wrong");
    assert_string_equal(got.reason, "3 of 1024 elements differ");
    assert_int_equal(got.check.n_bad, 3);
    assert_int_equal(got.check.n_compared, 1024);
    assert_true(isnan(got.check.max_abs_err));
    assert_true(isnan(got.check.max_rel_err));
    assert_int_equal(got.check.first_bad_output, 2);
    assert_true(got.check.first_bad_index == 5000000000);
    assert_null(got.measurement.samples_ms);
    assert_int_equal(got.measurement.n_samples, 0);
}

static void test_launch_error_result_has_no_measurement(void **state)
{
    gb_trial_result sent = {.status = GB_TRIAL_LAUNCH_ERROR,
                            .check = {.first_bad_output = -1, .first_bad_index = -1}};
    strcpy(sent.reason, "cuLaunchKernel: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES");
    gb_trial_result got;
    free(deliver(*state, GB_MSG_RESULT, &sent, &got));
    assert_string_equal(gb_trial_status_name(got.status), "launch_error");
    assert_string_equal(got.reason, sent.reason);
    assert_false(got.check.checked);
    assert_null(got.measurement.samples_ms);
}

static void test_a_race_and_its_measurements_round_trip(void **state)
{
    gb_proto_race race = {.n_variants = 2, .measure = gb_measure_defaults()}, got_race;
    race.variants[0] = (gb_proto_race_variant){
        .variant = {.name = "a", .launch = {.grid = {1, 1, 1}, .block = {1, 1, 1}}},
        .cubin_bytes = 10};
    race.variants[1] = (gb_proto_race_variant){
        .variant = {.name = "b", .launch = {.grid = {2, 1, 1}, .block = {64, 1, 1}}},
        .cubin_bytes = 20};
    free(deliver(*state, GB_MSG_RACE, &race, &got_race));
    assert_int_equal(got_race.n_variants, 2);
    assert_string_equal(got_race.variants[1].variant.name, "b");
    assert_true(got_race.variants[1].cubin_bytes == 20);
    gb_proto_free(GB_MSG_RACE, &got_race);

    double a_ms[] = {1, 2, 3}, b_ms[] = {4}, a_clk[] = {0, 0, 0}, b_clk[] = {1500};
    bool a_thr[] = {0, 0, 0}, b_thr[] = {1};
    gb_proto_raced raced = {.n_measurements = 2}, got;
    raced.measurements[0] = (gb_measurement){
        .samples_ms = a_ms, .clock_mhz = a_clk, .throttled = a_thr, .n_samples = 3};
    raced.measurements[1] = (gb_measurement){.mode = GB_MODE_HOT,
                                             .samples_ms = b_ms,
                                             .clock_mhz = b_clk,
                                             .throttled = b_thr,
                                             .n_samples = 1,
                                             .launches_per_sample = 40,
                                             .contended = true,
                                             .n_other_procs = 3};
    free(deliver(*state, GB_MSG_RACED, &raced, &got));
    assert_int_equal(got.n_measurements, 2);
    assert_true(got.measurements[0].stats.median == 2);
    assert_true(got.measurements[1].all_throttled && got.measurements[1].stats.median == 4);
    assert_int_equal(got.measurements[1].mode, GB_MODE_HOT);
    assert_int_equal(got.measurements[1].launches_per_sample, 40);
    assert_false(got.measurements[0].contended);
    assert_true(got.measurements[1].contended);
    assert_int_equal(got.measurements[1].n_other_procs, 3);
    gb_proto_free(GB_MSG_RACED, &got);
}

/* Every message type's table is well formed. */
static void test_every_payload_table_checks_out(void **state)
{
    for (int type = GB_MSG_OPEN; type < GB_MSG_TYPE_END; type++) {
        const gb_wire_type *t = gb_proto_payload((gb_msg_type)type);
        gb_err err;
        if (t && gb_wire_check_type(t, &err)) fail_msg("%s", err.msg);
    }
    assert_null(gb_proto_payload(GB_MSG_OK));
    assert_null(gb_proto_payload(GB_MSG_QUIT));
}

/* ---- field validation --------------------------------------------------- */

/* Sends a message of this type with the JSON text as given; expects the payload
 * to be refused with a message naming `what`. */
static void expect_payload_refused_at(const int *fds, gb_msg_type type, const char *json,
                                      const char *what, const char *file, int line)
{
    gb_msg m;
    gb_err err;
    send_message(fds[0], "GBWP", GB_PROTO_VERSION, type, json);
    assert_int_equal(gb_proto_recv(fds[1], gb_now_ms() + 5000, &m, &err), GB_OK);
    union { /* room for any payload type */
        gb_proto_error error;
        gb_proto_race race;
        gb_proto_problem problem;
        gb_proto_trial trial;
        gb_proto_raced raced;
        gb_trial_result result;
    } out;
    const gb_wire_type *t = gb_proto_payload(type);
    assert_true(t->size <= sizeof out);
    memset(&out, 0x5a, sizeof out);
    int rc = gb_proto_decode(&m, &out, &err);
    gb_msg_free(&m);
    refused_at(rc, &err, what, file, line);
    for (size_t i = 0; i < t->size; i++) /* nothing half-decoded is left behind */
        if (((const unsigned char *)&out)[i]) fail_msg("byte %zu of a refused payload is set", i);
}
#define expect_payload_refused(fds, type, json, what)                                              \
    expect_payload_refused_at((fds), (type), (json), (what), __FILE__, __LINE__)

#define SCALAR(dtype, int_value)                                                                   \
    "{\"kind\":\"scalar\",\"dtype\":\"" dtype                                                      \
    "\",\"dims\":[],\"init\":\"randn\",\"init_value\":0,"                                          \
    "\"checked\":false,\"int_value\":" int_value ",\"float_value\":0}"
#define TENSOR(dims)                                                                               \
    "{\"kind\":\"tensor\",\"dtype\":\"f32\",\"dims\":" dims                                        \
    ",\"init\":\"randn\",\"init_value\":0,"                                                        \
    "\"checked\":false,\"int_value\":0,\"float_value\":0}"
#define TRIAL(check, measure)                                                                      \
    "{\"name\":\"k\",\"launch\":{\"grid\":[1,1,1],\"block\":[1,1,1],\"smem_bytes\":0},"            \
    "\"check\":" check ",\"measure\":" measure "}"
#define CHECK_OK "{\"outputs\":[1],\"rtol\":0,\"atol\":0}"
#define MEASURE(min, max)                                                                          \
    "{\"mode\":\"cold\",\"noise\":0.005,\"min_samples\":" min ",\"max_samples\":" max              \
    ",\"max_ms\":1000,\"warmup_ms\":20,\"warmup_max_ms\":1000,\"clock_tolerance\":0.01,"           \
    "\"throttle_threshold\":0.75,\"hot_min_ms\":0.1,\"rewarm_after_ms\":1000,"                     \
    "\"timer\":\"auto\"}"
#define RESULT_OK(measurement)                                                                     \
    "{\"status\":\"ok\",\"reason\":\"\",\"check\":{\"checked\":true,\"n_bad\":0,\"n_compared\":4," \
    "\"max_abs_err\":0,\"max_rel_err\":0}" measurement "}"
#define MEASUREMENT(samples, clocks, throttled)                                                    \
    ",\"measurement\":{\"mode\":\"cold\",\"samples_ms\":" samples ",\"clocks_mhz\":" clocks        \
    ",\"throttled\":" throttled ",\"steady_clock_mhz\":0,\"clock_steady\":true,\"n_warmup\":0,"    \
    "\"warmup_ms\":0,\"wall_ms\":1,\"capped\":false,\"launches_per_sample\":1}"

static void test_tensor_without_dims_is_refused(void **state)
{
    expect_payload_refused(*state, GB_MSG_PROBLEM, "{\"seed\":1,\"args\":[" TENSOR("[]") "]}",
                           "malformed message: problem.args[0].dims: expected 1 to 8 sizes");
    expect_payload_refused(*state, GB_MSG_PROBLEM,
                           "{\"seed\":1,\"args\":[" TENSOR("[1,2,3,4,5,6,7,8,9]") "]}",
                           "problem.args[0].dims: expected a list of 0 to 8 items");
}

static void test_unknown_dtype_is_refused(void **state)
{
    expect_payload_refused(*state, GB_MSG_PROBLEM,
                           "{\"seed\":1,\"args\":[" SCALAR("f32", "0") "," SCALAR("f31", "0") "]}",
                           "problem.args[1].dtype: expected one of f64, f32, f16");
}

static void test_scalar_int_that_is_not_an_integer_is_refused(void **state)
{
    expect_payload_refused(*state, GB_MSG_PROBLEM,
                           "{\"seed\":1,\"args\":[" SCALAR("i64", "\"5\"") "]}",
                           "problem.args[0].int_value: expected an integer");
    expect_payload_refused(*state, GB_MSG_PROBLEM,
                           "{\"seed\":1,\"args\":[" SCALAR("i64", "0.5") "]}",
                           "problem.args[0].int_value: expected an integer");
}

static void test_launch_with_two_grid_sizes_is_refused(void **state)
{
    expect_payload_refused(*state, GB_MSG_REFERENCE,
                           "{\"name\":\"k\",\"launch\":{\"grid\":[4,1],\"block\":[128,1,1],"
                           "\"smem_bytes\":0}}",
                           "variant.launch.grid: expected a list of 3 items");
    expect_payload_refused(*state, GB_MSG_REFERENCE,
                           "{\"name\":\"k\",\"launch\":{\"grid\":[4,1,0],\"block\":[128,1,1],"
                           "\"smem_bytes\":0}}",
                           "variant.launch.grid[2]: expected an integer from 1 to 4294967295");
}

static void test_check_of_output_40_is_refused(void **state)
{
    expect_payload_refused(*state, GB_MSG_TRIAL,
                           TRIAL("{\"outputs\":[1,40],\"rtol\":0,\"atol\":0}", MEASURE("1", "2")),
                           "trial.check.outputs[1]: expected an integer from 0 to 31");
}

static void test_measure_options_that_cannot_work_are_refused(void **state)
{
    expect_payload_refused(*state, GB_MSG_TRIAL, TRIAL(CHECK_OK, MEASURE("10", "5")),
                           "trial.measure: measure: max_samples (5) is below min_samples (10)");
    expect_payload_refused(*state, GB_MSG_TRIAL, TRIAL(CHECK_OK, MEASURE("0", "5")),
                           "trial.measure.min_samples: expected an integer from 1 to 10000000");
}

static void test_an_ok_result_without_measurement_is_refused(void **state)
{
    expect_payload_refused(*state, GB_MSG_RESULT, RESULT_OK(""),
                           "trial_result.measurement: missing");
}

static void test_a_measurement_whose_lists_disagree_is_refused(void **state)
{
    expect_payload_refused(*state, GB_MSG_RESULT,
                           RESULT_OK(MEASUREMENT("[1,2,3]", "[0,0]", "[false,false,false]")),
                           "trial_result.measurement.clocks_mhz: expected a list of 3 items, as "
                           "many as samples_ms");
    expect_payload_refused(*state, GB_MSG_RESULT,
                           RESULT_OK(MEASUREMENT("[1,2,3,-4]", "[0,0,0,0]", "[0,0,0,0]")),
                           "trial_result.measurement.samples_ms[3]: expected a number >= 0");
    expect_payload_refused(*state, GB_MSG_RESULT, RESULT_OK(MEASUREMENT("[]", "[]", "[]")),
                           "trial_result.measurement.samples_ms: expected a list of 1 to");
}

static void test_a_result_without_phases_reads_as_zero_phases(void **state)
{
    int *fds = *state;
    gb_err err;
    gb_msg m;
    send_message(fds[0], "GBWP", GB_PROTO_VERSION, GB_MSG_RESULT,
                 RESULT_OK(MEASUREMENT("[1]", "[0]", "[false]")));
    assert_int_equal(gb_proto_recv(fds[1], gb_now_ms() + 5000, &m, &err), GB_OK);
    gb_trial_result got;
    assert_int_equal(gb_proto_decode(&m, &got, &err), GB_OK);
    gb_msg_free(&m);
    assert_true(got.phases.load_ms == 0 && got.phases.session_ms == 0);
    gb_trial_result_free(&got);
}

static void test_a_negative_phase_is_refused(void **state)
{
    expect_payload_refused(*state, GB_MSG_RESULT,
                           "{\"status\":\"wrong\",\"reason\":\"\",\"check\":{\"checked\":true,"
                           "\"n_bad\":1,\"n_compared\":4,\"max_abs_err\":0,\"max_rel_err\":0},"
                           "\"phases\":{\"load_ms\":-1,\"check_ms\":0,\"warmup_ms\":0,"
                           "\"sample_ms\":0,\"kernel_ms\":0,\"session_ms\":0}}",
                           "trial_result.phases.load_ms: expected a number >= 0");
}

static void test_more_bad_elements_than_compared_is_refused(void **state)
{
    expect_payload_refused(
        *state, GB_MSG_RESULT,
        "{\"status\":\"wrong\",\"reason\":\"\",\"check\":{\"checked\":true,"
        "\"n_bad\":5,\"n_compared\":4,\"max_abs_err\":null,\"max_rel_err\":null}}",
        "trial_result.check: n_bad (5) is more than n_compared (4)");
}

static void test_an_error_of_code_0_is_refused(void **state)
{
    expect_payload_refused(*state, GB_MSG_ERROR, "{\"code\":0,\"message\":\"fine\"}",
                           "error.code: expected a failure, not 0");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define TEST(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
        TEST(test_problem_args_of_every_init_and_extreme_scalars_round_trip),
        TEST(test_a_tensormap_arg_round_trips_with_its_view_and_modes),
        TEST(test_a_problem_without_args_round_trips),
        TEST(test_reference_variant_round_trips),
        TEST(test_trial_check_and_measure_options_round_trip),
        TEST(test_device_round_trips),
        TEST(test_error_round_trips),
        TEST(test_ok_result_brings_its_samples_and_recomputes_the_statistics),
        TEST(test_wrong_result_has_no_measurement_and_nan_errors_travel_as_null),
        TEST(test_launch_error_result_has_no_measurement),
        TEST(test_a_failed_result_brings_the_phases_it_reached),
        TEST(test_a_race_and_its_measurements_round_trip),
        TEST(test_every_payload_table_checks_out),
        TEST(test_tensor_without_dims_is_refused),
        TEST(test_unknown_dtype_is_refused),
        TEST(test_scalar_int_that_is_not_an_integer_is_refused),
        TEST(test_launch_with_two_grid_sizes_is_refused),
        TEST(test_check_of_output_40_is_refused),
        TEST(test_measure_options_that_cannot_work_are_refused),
        TEST(test_an_ok_result_without_measurement_is_refused),
        TEST(test_a_measurement_whose_lists_disagree_is_refused),
        TEST(test_a_result_without_phases_reads_as_zero_phases),
        TEST(test_a_negative_phase_is_refused),
        TEST(test_more_bad_elements_than_compared_is_refused),
        TEST(test_an_error_of_code_0_is_refused),
#undef TEST
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
