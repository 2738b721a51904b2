/* The fixture of the worker protocol's tests (test_proto.c, test_proto_frame.c):
 * a connected socket pair, and ways to send bytes the library's writer never
 * would. The names are the ones the tests were written with: only these two
 * programs link proto_fixture.c. */
#ifndef GB_TESTS_PROTO_FIXTURE_H
#define GB_TESTS_PROTO_FIXTURE_H

#include "base/error.h"

#include <stddef.h>
#include <stdint.h>

/* cmocka setup: a connected socket pair (int[2]); messages go from [0] to [1].
 * teardown closes what is still open and clears an interrupt a test requested. */
int setup(void **state);
int teardown(void **state);

/* Fails the test at file:line unless rc and err are GB_EPROTO with a message that
 * contains what. */
void refused_at(int rc, const gb_err *err, const char *what, const char *file, int line);
/* The call failed with GB_EPROTO and a message that contains `what`. */
#define assert_refused(rc, err, what) refused_at((rc), (err), (what), __FILE__, __LINE__)

/* Writes these bytes to fd, all of them. */
void send_raw(int fd, const void *bytes, size_t n);
/* Sends a header with these fields, right or wrong. */
void send_header(int fd, const char magic[4], unsigned version, unsigned type, uint32_t json_bytes,
                 uint32_t blob_bytes);
/* Sends a header and a JSON text as given, without checking either. */
void send_message(int fd, const char magic[4], unsigned version, unsigned type, const char *json);

#endif
