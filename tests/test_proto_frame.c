/*
 * The worker protocol's framing (exec/proto.h): the header is big-endian and the
 * blob follows the JSON; the reader refuses, with a sentence that says what, a bad
 * magic, another version, an unknown type, sizes over the limits (before reading
 * them), a payload that is not a JSON object and a truncated message; a peer gone
 * reads as closed, silence past the deadline times out, an interrupt ends a wait.
 */

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

static void hang_up(int *fd)
{
    close(*fd);
    *fd = -1;
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
    assert_int_equal(gb_proto_send_json(fds[0], GB_MSG_REFERENCE, NULL, cubin, sizeof cubin, &err),
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
    json_t *json = json_pack("{s:s}", "name", "k");
    assert_int_equal(gb_proto_send_json(fds[0], GB_MSG_TRIAL, json, cubin, sizeof cubin, &err),
                     GB_OK);
    json_decref(json);
    assert_int_equal(gb_proto_recv(fds[1], -1, &m, &err), GB_OK);
    assert_int_equal(m.type, GB_MSG_TRIAL);
    assert_string_equal(gb_json_str(gb_json_get(m.json, "name"), NULL), "k");
    assert_int_equal(m.blob_bytes, sizeof cubin);
    assert_memory_equal(m.blob, cubin, sizeof cubin);
    gb_msg_free(&m);
}

/* ---- what the reader refuses -------------------------------------------- */

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
    char expect[64];
    snprintf(expect, sizeof expect, "protocol version %d, expected %d", GB_PROTO_VERSION + 1,
             GB_PROTO_VERSION);
    send_message(fds[0], "GBWP", GB_PROTO_VERSION + 1, GB_MSG_OK, "{}");
    assert_refused(receive(fds[1], &err), &err, expect);
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
    assert_int_equal(gb_proto_send(fds[0], GB_MSG_QUIT, NULL, NULL, 0, &err), GB_OK);
    hang_up(&fds[1]);
    assert_int_equal(receive(fds[0], &err), GB_ECLOSED);
}

static void test_send_to_a_reader_that_is_gone_is_closed(void **state)
{
    int *fds = *state;
    gb_err err;
    hang_up(&fds[1]);
    assert_int_equal(gb_proto_send(fds[0], GB_MSG_OK, NULL, NULL, 0, &err), GB_ECLOSED);
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
    assert_int_equal(
        gb_proto_send_json(fds[0], GB_MSG_TRIAL, NULL, &byte, GB_PROTO_MAX_BLOB + 1, &err),
        GB_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define TEST(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
        TEST(test_header_is_big_endian_and_the_blob_follows_the_json),
        TEST(test_blob_round_trips),
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
#undef TEST
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
