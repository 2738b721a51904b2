/*
 * The worker protocol (engine/proto.h): every payload goes through a socket pair
 * and reads back equal, and the reader refuses, with a sentence that says what,
 * every way a message can be wrong.
 */
#include "engine/proto.h"

#include "engine/interrupt.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#define N_OF(array) ((int)(sizeof(array) / sizeof *(array)))

/* The fixture: a connected socket pair; messages go from [0] to [1]. */
static int setup(void **state)
{
    int *fds = malloc(2 * sizeof *fds);
    if (!fds || socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) return -1;
    *state = fds;
    return 0;
}

static int teardown(void **state)
{
    int *fds = *state;
    if (fds[0] >= 0) close(fds[0]);
    if (fds[1] >= 0) close(fds[1]);
    free(fds);
    gb_interrupt_clear();
    return 0;
}

static void hang_up(int *fd)
{
    close(*fd);
    *fd = -1;
}

static void contains_at(const char *text, const char *part, const char *file, int line)
{
    if (strstr(text, part)) return;
    print_error("\"%s\" does not contain \"%s\"\n", text, part);
    _fail(file, line);
}
#define assert_contains(text, part) contains_at((text), (part), __FILE__, __LINE__)

static void refused_at(int rc, const gb_err *err, const char *what, const char *file, int line)
{
    if (rc == GB_EPROTO && err->code == GB_EPROTO && strstr(err->msg, what)) return;
    print_error("got %d (%s) \"%s\", expected GB_EPROTO naming \"%s\"\n", rc, gb_strerror(rc),
                err->msg, what);
    _fail(file, line);
}
/* The call failed with GB_EPROTO and a message that contains `what`. */
#define assert_refused(rc, err, what) refused_at((rc), (err), (what), __FILE__, __LINE__)

/* ---- payloads through the socket ---------------------------------------- */

/* A payload in transit: {"v": <written by a gb_proto_write_*>} and what arrived. */
typedef struct payload {
    gb_strbuf text;
    gb_jw w;
    gb_msg msg;
} payload;

static gb_jw *payload_begin(payload *p)
{
    memset(p, 0, sizeof *p);
    gb_jw_init(&p->w, &p->text, false);
    gb_jw_obj_begin(&p->w);
    gb_jw_key(&p->w, "v");
    return &p->w;
}

/* Sends the payload through the socket pair; returns the value that arrived. */
static const gb_json *payload_deliver(payload *p, const int *fds)
{
    gb_err err;
    gb_jw_obj_end(&p->w);
    assert_int_equal(gb_sb_status(&p->text), GB_OK);
    assert_int_equal(gb_proto_send(fds[0], GB_MSG_PROBLEM, gb_sb_str(&p->text), NULL, 0, &err),
                     GB_OK);
    assert_int_equal(gb_proto_recv(fds[1], gb_now_ms() + 5000, &p->msg, &err), GB_OK);
    assert_int_equal(p->msg.type, GB_MSG_PROBLEM);
    return gb_json_get(p->msg.json, "v");
}

static void payload_free(payload *p)
{
    gb_sb_free(&p->text);
    gb_msg_free(&p->msg);
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

static void test_args_of_every_init_and_extreme_scalars_round_trip(void **state)
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
    gb_arg got[GB_MAX_ARGS];
    int n_got = -1;
    gb_err err;
    payload p;
    gb_proto_write_args(payload_begin(&p), sent, N_OF(sent));
    assert_int_equal(gb_proto_read_args(payload_deliver(&p, *state), got, &n_got, &err), GB_OK);
    payload_free(&p);
    assert_int_equal(n_got, N_OF(sent));
    for (int i = 0; i < n_got; i++)
        assert_same_arg(&got[i], &sent[i]);
}

static void test_no_args_round_trip(void **state)
{
    gb_arg got[GB_MAX_ARGS];
    int n_got = -1;
    gb_err err;
    payload p;
    gb_proto_write_args(payload_begin(&p), NULL, 0);
    assert_int_equal(gb_proto_read_args(payload_deliver(&p, *state), got, &n_got, &err), GB_OK);
    payload_free(&p);
    assert_int_equal(n_got, 0);
}

static void test_launch_round_trips(void **state)
{
    const gb_launch sent = {.grid = {UINT32_MAX, 2, 3}, .block = {128, 2, 1}, .smem_bytes = 232448};
    gb_launch got;
    gb_err err;
    payload p;
    gb_proto_write_launch(payload_begin(&p), &sent);
    assert_int_equal(gb_proto_read_launch(payload_deliver(&p, *state), &got, &err), GB_OK);
    payload_free(&p);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(got.grid[i], sent.grid[i]);
        assert_int_equal(got.block[i], sent.block[i]);
    }
    assert_int_equal(got.smem_bytes, sent.smem_bytes);
}

static void test_check_round_trips(void **state)
{
    const gb_check_spec sent = {.n_outputs = 3, .outputs = {1, 4, 31}, .rtol = 1e-3, .atol = 1e-7};
    gb_check_spec got;
    gb_err err;
    payload p;
    gb_proto_write_check(payload_begin(&p), &sent);
    assert_int_equal(gb_proto_read_check(payload_deliver(&p, *state), &got, &err), GB_OK);
    payload_free(&p);
    assert_int_equal(got.n_outputs, 3);
    for (int i = 0; i < 3; i++)
        assert_int_equal(got.outputs[i], sent.outputs[i]);
    assert_true(got.rtol == sent.rtol);
    assert_true(got.atol == sent.atol);
}

static void test_measure_options_round_trip(void **state)
{
    gb_measure_opts sent = gb_measure_defaults();
    sent.mode = GB_MODE_HOT;
    sent.warmup_ms = 20.5;
    sent.min_samples = 3;
    sent.max_samples = 70000;
    sent.max_ms = 1234.25;
    sent.noise = 0.0125;
    sent.hot_min_ms = 0.25;
    gb_measure_opts got;
    gb_err err;
    payload p;
    gb_proto_write_measure(payload_begin(&p), &sent);
    assert_int_equal(gb_proto_read_measure(payload_deliver(&p, *state), &got, &err), GB_OK);
    payload_free(&p);
    /* field by field: the struct has padding */
    assert_int_equal(got.mode, sent.mode);
    assert_int_equal(got.min_samples, sent.min_samples);
    assert_int_equal(got.max_samples, sent.max_samples);
    const double *d[][2] = {
        {&got.noise, &sent.noise},
        {&got.max_ms, &sent.max_ms},
        {&got.warmup_ms, &sent.warmup_ms},
        {&got.warmup_max_ms, &sent.warmup_max_ms},
        {&got.clock_tolerance, &sent.clock_tolerance},
        {&got.throttle_drop, &sent.throttle_drop},
        {&got.hot_min_ms, &sent.hot_min_ms},
    };
    for (size_t i = 0; i < sizeof d / sizeof *d; i++)
        assert_true(*d[i][0] == *d[i][1]);
}

static void test_device_round_trips(void **state)
{
    gb_device_info sent = {
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
    };
    strcpy(sent.name, "NVIDIA \"H200\" \\ test");
    strcpy(sent.arch, "sm_90a");
    gb_device_info got;
    gb_err err;
    payload p;
    gb_proto_write_device(payload_begin(&p), &sent);
    assert_int_equal(gb_proto_read_device(payload_deliver(&p, *state), &got, &err), GB_OK);
    payload_free(&p);
    assert_string_equal(got.name, sent.name);
    assert_string_equal(got.arch, sent.arch);
    assert_int_equal(got.ordinal, sent.ordinal);
    assert_int_equal(got.cc_major, sent.cc_major);
    assert_int_equal(got.cc_minor, sent.cc_minor);
    assert_int_equal(got.sms, sent.sms);
    assert_int_equal(got.smem_per_block_optin, sent.smem_per_block_optin);
    assert_int_equal(got.smem_per_sm, sent.smem_per_sm);
    assert_int_equal(got.regs_per_sm, sent.regs_per_sm);
    assert_int_equal(got.max_threads_per_block, sent.max_threads_per_block);
    assert_true(got.l2_bytes == sent.l2_bytes);
    assert_true(got.mem_bytes == sent.mem_bytes);
    assert_int_equal(got.mem_clock_khz, sent.mem_clock_khz);
    assert_int_equal(got.bus_width_bits, sent.bus_width_bits);
    assert_int_equal(got.sm_clock_khz, sent.sm_clock_khz);
    assert_true(got.peak_gbps == sent.peak_gbps);
    assert_int_equal(got.driver_version, sent.driver_version);
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
                        .stats = {.median = 999}}, /* wrong on purpose: not sent */
    };
    gb_stats want; /* of the samples not throttled */
    assert_int_equal(gb_stats_compute(samples_ms, N_OF(samples_ms) - 1, &want), GB_OK);
    gb_trial_result got;
    gb_err err;
    payload p;
    gb_proto_write_result(payload_begin(&p), &sent);
    assert_int_equal(gb_proto_read_result(payload_deliver(&p, *state), &got, &err), GB_OK);
    payload_free(&p);
    assert_string_equal(gb_trial_status_name(got.status), "ok");
    assert_string_equal(got.reason, "");
    assert_true(got.check.checked);
    assert_int_equal(got.check.n_bad, 0);
    assert_true(got.check.n_compared == sent.check.n_compared);
    assert_true(got.check.max_abs_err == 1e-6);
    assert_true(got.check.max_rel_err == 2e-4);
    assert_int_equal(got.check.first_bad_output, -1);
    assert_true(got.check.first_bad_index == -1);
    const gb_measurement *m = &got.measurement;
    assert_int_equal(m->n_samples, N_OF(samples_ms));
    for (int i = 0; i < m->n_samples; i++)
        assert_true(m->samples_ms[i] == samples_ms[i]);
    assert_true(m->wall_ms == 20.5);
    assert_true(m->capped);
    assert_int_equal(m->n_throttled, 1);
    assert_true(m->throttled[10] && !m->throttled[0]);
    assert_true(m->clock_mhz_median == 1980);
    assert_int_equal(m->stats.n, want.n);
    assert_true(m->stats.median == want.median);
    assert_true(m->stats.mean == want.mean);
    assert_true(m->stats.min == want.min && m->stats.max == want.max);
    assert_true(m->stats.ci_lo == want.ci_lo && m->stats.ci_hi == want.ci_hi);
    gb_trial_result_free(&got);
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
    gb_err err;
    payload p;
    gb_proto_write_result(payload_begin(&p), &sent);
    const gb_json *v = payload_deliver(&p, *state);
    assert_contains(gb_sb_str(&p.text), "\"max_abs_err\":null");
    assert_null(gb_json_get(v, "measurement"));
    assert_int_equal(gb_proto_read_result(v, &got, &err), GB_OK);
    payload_free(&p);
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
    gb_err err;
    payload p;
    gb_proto_write_result(payload_begin(&p), &sent);
    assert_int_equal(gb_proto_read_result(payload_deliver(&p, *state), &got, &err), GB_OK);
    payload_free(&p);
    assert_string_equal(gb_trial_status_name(got.status), "launch_error");
    assert_string_equal(got.reason, sent.reason);
    assert_false(got.check.checked);
    assert_null(got.measurement.samples_ms);
}

/* ---- framing ------------------------------------------------------------ */

static void test_header_is_big_endian_and_the_blob_follows_the_json(void **state)
{
    int *fds = *state;
    const uint8_t cubin[] = {0x7f, 'E', 'L', 'F', 0x00, 0xff};
    const uint8_t want_header[GB_PROTO_HEADER_BYTES] = {
        'G', 'B', 'W', 'P', 0, GB_PROTO_VERSION, 0, GB_MSG_REFERENCE, 0, 0, 0, 2, 0, 0, 0, 6};
    uint8_t raw[GB_PROTO_HEADER_BYTES + 2 + sizeof cubin];
    gb_err err;
    assert_int_equal(gb_proto_send(fds[0], GB_MSG_REFERENCE, "{}", cubin, sizeof cubin, &err),
                     GB_OK);
    assert_int_equal(read(fds[1], raw, sizeof raw), (ssize_t)sizeof raw);
    assert_memory_equal(raw, want_header, GB_PROTO_HEADER_BYTES);
    assert_memory_equal(raw + GB_PROTO_HEADER_BYTES, "{}", 2);
    assert_memory_equal(raw + GB_PROTO_HEADER_BYTES + 2, cubin, sizeof cubin);
}

static void test_blob_round_trips(void **state)
{
    int *fds = *state;
    const uint8_t cubin[] = {0x7f, 'E', 'L', 'F', 0x00, 0xff};
    gb_msg m;
    gb_err err;
    assert_int_equal(
        gb_proto_send(fds[0], GB_MSG_TRIAL, "{\"name\": \"k\"}", cubin, sizeof cubin, &err), GB_OK);
    assert_int_equal(gb_proto_recv(fds[1], -1, &m, &err), GB_OK);
    assert_int_equal(m.type, GB_MSG_TRIAL);
    assert_string_equal(gb_json_str(gb_json_get(m.json, "name"), NULL), "k");
    assert_int_equal(m.blob_bytes, sizeof cubin);
    assert_memory_equal(m.blob, cubin, sizeof cubin);
    gb_msg_free(&m);
}

static void test_u64_travels_as_a_decimal_string(void **state)
{
    const uint64_t values[] = {0, 1, (uint64_t)1 << 53 | 1, UINT64_MAX};
    for (int i = 0; i < N_OF(values); i++) {
        gb_strbuf text = GB_STRBUF_INIT;
        gb_jw w;
        gb_json *j = NULL;
        uint64_t got = 0;
        gb_jw_init(&w, &text, false);
        gb_proto_write_u64(&w, values[i]);
        assert_int_equal(text.data[0], '"');
        assert_int_equal(gb_json_parse(gb_sb_str(&text), text.len, &j, NULL), GB_OK);
        assert_int_equal(gb_proto_read_u64(j, &got), GB_OK);
        assert_true(got == values[i]);
        gb_json_free(j);
        gb_sb_free(&text);
    }
}

static void test_u64_refuses_what_is_not_a_decimal_string(void **state)
{
    const char *texts[] = {"5",
                           "\"\"",
                           "\"-1\"",
                           "\"12x\"",
                           "\" 12\"",
                           "\"18446744073709551616\"",
                           "\"123456789012345678901\"",
                           "null"};
    for (int i = 0; i < N_OF(texts); i++) {
        gb_json *j = NULL;
        uint64_t got = 0;
        assert_int_equal(gb_json_parse(texts[i], strlen(texts[i]), &j, NULL), GB_OK);
        if (gb_proto_read_u64(j, &got) != GB_EPROTO)
            fail_msg("%s was read as %llu", texts[i], (unsigned long long)got);
        gb_json_free(j);
    }
}

/* ---- what the reader refuses -------------------------------------------- */

static void send_raw(int fd, const void *bytes, size_t n)
{
    assert_int_equal(write(fd, bytes, n), (ssize_t)n);
}

static void put_be(uint8_t *p, uint32_t v, int n_bytes)
{
    for (int i = 0; i < n_bytes; i++)
        p[i] = (uint8_t)(v >> (8 * (n_bytes - 1 - i)));
}

/* Sends a header with these fields, right or wrong. */
static void send_header(int fd, const char magic[4], unsigned version, unsigned type,
                        uint32_t json_bytes, uint32_t blob_bytes)
{
    uint8_t header[GB_PROTO_HEADER_BYTES];
    memcpy(header, magic, 4);
    put_be(header + 4, version, 2);
    put_be(header + 6, type, 2);
    put_be(header + 8, json_bytes, 4);
    put_be(header + 12, blob_bytes, 4);
    send_raw(fd, header, sizeof header);
}

/* Sends a header and a JSON text as given, without checking either. */
static void send_message(int fd, const char magic[4], unsigned version, unsigned type,
                         const char *json)
{
    send_header(fd, magic, version, type, (uint32_t)strlen(json), 0);
    send_raw(fd, json, strlen(json));
}

/* Receives with a deadline a few seconds away; returns the code, err says why. */
static int receive(int fd, gb_err *err)
{
    gb_msg m;
    gb_err_clear(err);
    int rc = gb_proto_recv(fd, gb_now_ms() + 5000, &m, err);
    if (rc == GB_OK) gb_msg_free(&m);
    return rc;
}

static void test_bad_magic_is_refused(void **state)
{
    int *fds = *state;
    gb_err err;
    send_message(fds[0], "GBWX", GB_PROTO_VERSION, GB_MSG_OK, "{}");
    assert_refused(receive(fds[1], &err), &err, "bad magic 47425758");
}

static void test_other_protocol_version_is_refused(void **state)
{
    int *fds = *state;
    gb_err err;
    send_message(fds[0], "GBWP", GB_PROTO_VERSION + 1, GB_MSG_OK, "{}");
    assert_refused(receive(fds[1], &err), &err, "protocol version 2");
}

static void test_unknown_types_are_refused(void **state)
{
    int *fds = *state;
    gb_err err;
    /* Bare headers: a refused header leaves whatever follows it unread. */
    send_header(fds[0], "GBWP", GB_PROTO_VERSION, 0, 0, 0);
    assert_refused(receive(fds[1], &err), &err, "unknown type 0");
    send_header(fds[0], "GBWP", GB_PROTO_VERSION, GB_MSG_TYPE_END, 0, 0);
    char expect[32];
    snprintf(expect, sizeof expect, "unknown type %d", GB_MSG_TYPE_END);
    assert_refused(receive(fds[1], &err), &err, expect);
}

static void test_json_over_the_limit_is_refused_before_it_is_read(void **state)
{
    int *fds = *state;
    gb_err err;
    send_header(fds[0], "GBWP", GB_PROTO_VERSION, GB_MSG_OK, GB_PROTO_MAX_JSON + 1, 0);
    assert_refused(receive(fds[1], &err), &err, "over the limit");
}

static void test_blob_over_the_limit_is_refused_before_it_is_read(void **state)
{
    int *fds = *state;
    gb_err err;
    send_header(fds[0], "GBWP", GB_PROTO_VERSION, GB_MSG_OK, 2, GB_PROTO_MAX_BLOB + 1);
    assert_refused(receive(fds[1], &err), &err, "over the limit");
}

static void test_payload_that_is_not_json_is_refused(void **state)
{
    int *fds = *state;
    gb_err err;
    send_message(fds[0], "GBWP", GB_PROTO_VERSION, GB_MSG_OK, "{oops");
    assert_refused(receive(fds[1], &err), &err, "JSON line 1");
}

static void test_payload_that_is_a_json_array_is_refused(void **state)
{
    int *fds = *state;
    gb_err err;
    send_message(fds[0], "GBWP", GB_PROTO_VERSION, GB_MSG_OK, "[1, 2]");
    assert_refused(receive(fds[1], &err), &err, "not a JSON object");
}

static void test_truncated_message_is_refused(void **state)
{
    int *fds = *state;
    gb_err err;
    send_header(fds[0], "GBWP", GB_PROTO_VERSION, GB_MSG_OK, 100, 0);
    send_raw(fds[0], "{\"a\": 1, ", 9);
    hang_up(&fds[0]);
    assert_refused(receive(fds[1], &err), &err, "truncated");
}

static void test_end_of_file_before_a_whole_header_is_closed(void **state)
{
    int *fds = *state;
    gb_err err;
    send_raw(fds[0], "GBWP\0\1", 6);
    hang_up(&fds[0]);
    assert_int_equal(receive(fds[1], &err), GB_ECLOSED);
    assert_int_equal(receive(fds[1], &err), GB_ECLOSED);
}

static void test_peer_gone_with_unread_data_reads_as_closed(void **state)
{
    /* A process that dies with bytes still queued to it leaves a reset, not an end
     * of file; it is gone all the same. */
    int *fds = *state;
    gb_err err;
    assert_int_equal(gb_proto_send(fds[0], GB_MSG_QUIT, "{}", NULL, 0, &err), GB_OK);
    hang_up(&fds[1]);
    assert_int_equal(receive(fds[0], &err), GB_ECLOSED);
}

static void test_send_to_a_reader_that_is_gone_is_closed(void **state)
{
    int *fds = *state;
    gb_err err;
    hang_up(&fds[1]);
    assert_int_equal(gb_proto_send(fds[0], GB_MSG_OK, "{}", NULL, 0, &err), GB_ECLOSED);
}

static void test_silence_past_the_deadline_times_out(void **state)
{
    int *fds = *state;
    gb_msg m;
    gb_err err;
    double begun_ms = gb_now_ms();
    assert_int_equal(gb_proto_recv(fds[1], begun_ms + 150, &m, &err), GB_ETIMEOUT);
    double took_ms = gb_now_ms() - begun_ms;
    assert_true(took_ms >= 140 && took_ms < 2000);
}

static void *interrupt_soon(void *unused)
{
    usleep(200 * 1000);
    gb_interrupt_request();
    return NULL;
}

static void test_interrupt_ends_a_wait_without_deadline(void **state)
{
    int *fds = *state;
    gb_msg m;
    gb_err err;
    pthread_t thread;
    double begun_ms = gb_now_ms();
    assert_int_equal(pthread_create(&thread, NULL, interrupt_soon, NULL), 0);
    int rc = gb_proto_recv(fds[1], -1, &m, &err);
    pthread_join(thread, NULL);
    gb_interrupt_clear();
    assert_int_equal(rc, GB_EINTR);
    assert_true(gb_now_ms() - begun_ms < 2000);
}

static void test_send_refuses_a_blob_over_the_limit(void **state)
{
    int *fds = *state;
    gb_err err;
    static const char byte = 0;
    assert_int_equal(gb_proto_send(fds[0], GB_MSG_TRIAL, "{}", &byte, GB_PROTO_MAX_BLOB + 1, &err),
                     GB_EINVAL);
}

/* ---- field validation --------------------------------------------------- */

static gb_json *parse(const char *text)
{
    gb_json *j = NULL;
    gb_err err;
    if (gb_json_parse(text, strlen(text), &j, &err)) fail_msg("%s: %s", text, err.msg);
    return j;
}

/* Reads a list of arguments and expects the refusal to name `what`. */
static void expect_args_refused(const char *text, const char *what)
{
    gb_json *j = parse(text);
    gb_arg args[GB_MAX_ARGS];
    int n = 0;
    gb_err err;
    assert_refused(gb_proto_read_args(j, args, &n, &err), &err, what);
    gb_json_free(j);
}

static void test_tensor_without_dims_is_refused(void **state)
{
    expect_args_refused("[{\"kind\": \"tensor\", \"dtype\": \"f32\", \"init\": \"randn\", "
                        "\"value\": 0}]",
                        "argument 1: malformed message: field 'dims'");
}

static void test_unknown_dtype_is_refused(void **state)
{
    expect_args_refused("[{\"kind\": \"scalar\", \"dtype\": \"f32\", \"int\": \"0\", "
                        "\"float\": 1}, {\"kind\": \"scalar\", \"dtype\": \"f31\", \"int\": "
                        "\"0\", \"float\": 1}]",
                        "argument 2: malformed message: field 'dtype'");
}

static void test_scalar_int_that_is_not_a_decimal_string_is_refused(void **state)
{
    expect_args_refused("[{\"kind\": \"scalar\", \"dtype\": \"i64\", \"int\": 5, \"float\": 0}]",
                        "field 'int' must be a decimal string");
    expect_args_refused("[{\"kind\": \"scalar\", \"dtype\": \"i64\", \"int\": \"-5\", "
                        "\"float\": 0}]",
                        "field 'int' must be a decimal string");
}

static void test_launch_with_two_grid_sizes_is_refused(void **state)
{
    gb_json *j = parse("{\"grid\": [4, 1], \"block\": [128, 1, 1], \"smem\": 0}");
    gb_launch launch;
    gb_err err;
    assert_refused(gb_proto_read_launch(j, &launch, &err), &err, "field 'grid'");
    gb_json_free(j);
}

static void test_check_of_output_40_is_refused(void **state)
{
    gb_json *j = parse("{\"outputs\": [1, 40], \"rtol\": 0, \"atol\": 0}");
    gb_check_spec check;
    gb_err err;
    assert_refused(gb_proto_read_check(j, &check, &err), &err, "field 'outputs'");
    gb_json_free(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define TEST(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
        TEST(test_args_of_every_init_and_extreme_scalars_round_trip),
        TEST(test_no_args_round_trip),
        TEST(test_launch_round_trips),
        TEST(test_check_round_trips),
        TEST(test_measure_options_round_trip),
        TEST(test_device_round_trips),
        TEST(test_ok_result_brings_its_samples_and_recomputes_the_statistics),
        TEST(test_wrong_result_has_no_measurement_and_nan_errors_travel_as_null),
        TEST(test_launch_error_result_has_no_measurement),
        TEST(test_header_is_big_endian_and_the_blob_follows_the_json),
        TEST(test_blob_round_trips),
        TEST(test_u64_travels_as_a_decimal_string),
        TEST(test_u64_refuses_what_is_not_a_decimal_string),
        TEST(test_bad_magic_is_refused),
        TEST(test_other_protocol_version_is_refused),
        TEST(test_unknown_types_are_refused),
        TEST(test_json_over_the_limit_is_refused_before_it_is_read),
        TEST(test_blob_over_the_limit_is_refused_before_it_is_read),
        TEST(test_payload_that_is_not_json_is_refused),
        TEST(test_payload_that_is_a_json_array_is_refused),
        TEST(test_truncated_message_is_refused),
        TEST(test_end_of_file_before_a_whole_header_is_closed),
        TEST(test_peer_gone_with_unread_data_reads_as_closed),
        TEST(test_send_to_a_reader_that_is_gone_is_closed),
        TEST(test_silence_past_the_deadline_times_out),
        TEST(test_interrupt_ends_a_wait_without_deadline),
        TEST(test_send_refuses_a_blob_over_the_limit),
        TEST(test_tensor_without_dims_is_refused),
        TEST(test_unknown_dtype_is_refused),
        TEST(test_scalar_int_that_is_not_a_decimal_string_is_refused),
        TEST(test_launch_with_two_grid_sizes_is_refused),
        TEST(test_check_of_output_40_is_refused),
#undef TEST
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
