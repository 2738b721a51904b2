/*
 * Worker protocol messages from raw bytes: what the tuner reads from a worker (and
 * the worker from the tuner) when the other side is broken or hostile. The bytes
 * go through a socket pair into gb_proto_recv, message after message until the
 * stream ends or is refused; each message that arrives is decoded as its type's
 * payload, and whatever decodes must encode, print, parse and decode again equal.
 */
#include "exec/proto.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Larger inputs would not fit the socket's buffer without a second thread. */
#define MAX_INPUT (64 * 1024)

static void fail(gb_msg_type type, const char *what, const char *detail)
{
    fprintf(stderr, "fuzz_proto: %s message: %s%s%s\n", gb_msg_type_name(type), what,
            detail ? ": " : "", detail ? detail : "");
    abort();
}

static void round_trip(const gb_msg *m)
{
    const gb_wire_type *t = gb_proto_payload(m->type);
    if (!t) return; /* OK and QUIT carry nothing */
    void *first = calloc(1, t->size), *second = calloc(1, t->size);
    gb_err err;
    if (!first || !second) fail(m->type, "out of memory", NULL);
    int rc = gb_proto_decode(m, first, &err);
    if (rc != GB_OK && rc != GB_EPROTO) fail(m->type, "an unexpected error code", err.msg);
    if (rc == GB_OK) {
        json_t *again = gb_wire_encode(t, first);
        char *text = gb_json_dump(again, false);
        gb_msg parsed = {.type = m->type};
        if (!text) fail(m->type, "a decoded payload does not encode", NULL);
        if (gb_json_parse(text, strlen(text), &parsed.json, &err))
            fail(m->type, "its encoding does not parse", err.msg);
        if (gb_proto_decode(&parsed, second, &err))
            fail(m->type, "its encoding does not decode", err.msg);
        if (!gb_wire_equal(t, first, second)) fail(m->type, "it decodes to another payload", text);
        json_decref(parsed.json);
        json_decref(again);
        free(text);
    }
    gb_proto_free(m->type, first);
    gb_proto_free(m->type, second);
    free(first);
    free(second);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fds[2];
    if (size > MAX_INPUT || socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) return 0;
    int buffer = 4 * MAX_INPUT;
    setsockopt(fds[0], SOL_SOCKET, SO_SNDBUF, &buffer, sizeof buffer);
    setsockopt(fds[1], SOL_SOCKET, SO_RCVBUF, &buffer, sizeof buffer);
    if (size && write(fds[0], data, size) != (ssize_t)size) abort(); /* the harness, not us */
    close(fds[0]); /* the stream ends where the input does */
    for (;;) {
        gb_msg m;
        gb_err err;
        int rc = gb_proto_recv(fds[1], -1, &m, &err);
        if (rc == GB_ECLOSED || rc == GB_EPROTO) break;
        if (rc != GB_OK) fail(GB_MSG_TYPE_END, "gb_proto_recv failed unexpectedly", err.msg);
        round_trip(&m);
        gb_msg_free(&m);
    }
    close(fds[1]);
    return 0;
}
