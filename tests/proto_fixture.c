/* The fixture of the worker protocol's tests: see proto_fixture.h. */
#include "proto_fixture.h"

#include "exec/interrupt.h"
#include "exec/proto.h"

#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

/* The fixture: a connected socket pair; messages go from [0] to [1]. */
int setup(void **state)
{
    int *fds = malloc(2 * sizeof *fds);
    if (!fds || socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) return -1;
    *state = fds;
    return 0;
}

int teardown(void **state)
{
    int *fds = *state;
    if (fds[0] >= 0) close(fds[0]);
    if (fds[1] >= 0) close(fds[1]);
    free(fds);
    gb_interrupt_clear();
    return 0;
}

void refused_at(int rc, const gb_err *err, const char *what, const char *file, int line)
{
    if (rc == GB_EPROTO && err->code == GB_EPROTO && strstr(err->msg, what)) return;
    print_error("got %d (%s) \"%s\", expected GB_EPROTO naming \"%s\"\n", rc, gb_strerror(rc),
                err->msg, what);
    _fail(file, line);
}

void send_raw(int fd, const void *bytes, size_t n)
{
    assert_int_equal(write(fd, bytes, n), (ssize_t)n);
}

static void put_be(uint8_t *p, uint32_t v, int n_bytes)
{
    for (int i = 0; i < n_bytes; i++)
        p[i] = (uint8_t)(v >> (8 * (n_bytes - 1 - i)));
}

/* Sends a header with these fields, right or wrong. */
void send_header(int fd, const char magic[4], unsigned version, unsigned type, uint32_t json_bytes,
                 uint32_t blob_bytes)
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
void send_message(int fd, const char magic[4], unsigned version, unsigned type, const char *json)
{
    send_header(fd, magic, version, type, (uint32_t)strlen(json), 0);
    send_raw(fd, json, strlen(json));
}
