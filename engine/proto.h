/*
 * The protocol between the tuner and its GPU worker process.
 *
 * Every message is a 16-byte header followed by a JSON object and an optional
 * binary blob (a cubin). The header, in big-endian order:
 *
 *   0  "GBWP"      magic
 *   4  u16         protocol version (GB_PROTO_VERSION)
 *   6  u16         message type (gb_msg_type)
 *   8  u32         JSON length in bytes
 *  12  u32         blob length in bytes
 *
 * Requests and their answers:
 *
 *   OPEN {ordinal}                         -> DEVICE {device} | ERROR
 *   PROBLEM {seed, args}                   -> OK | ERROR
 *   REFERENCE {name, launch} + cubin       -> OK | ERROR
 *   TRIAL {name, launch, check, measure} + cubin -> RESULT {trial result} | ERROR
 *   RACE {variants: [{name, launch, bytes}], measure} + the cubins one after
 *        another                           -> RACED {measurements} | ERROR
 *   QUIT {}                                -> (the worker exits)
 *
 * ERROR carries {code, message}; a code of GB_EFAULT means the worker's CUDA
 * context is gone and the worker exits after sending it. Both sides check the
 * magic, the version, the type, the lengths against limits, and every field they
 * read; anything else is GB_EPROTO. 64-bit integers travel as decimal strings so
 * no precision is lost to JSON's doubles.
 */
#ifndef GB_ENGINE_PROTO_H
#define GB_ENGINE_PROTO_H

#include "base/clock.h"
#include "base/error.h"
#include "base/json.h"
#include "engine/device.h"
#include "engine/exec.h"
#include "engine/gpu.h"
#include "engine/spec.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GB_PROTO_VERSION      1
#define GB_PROTO_HEADER_BYTES 16
#define GB_PROTO_MAX_JSON     (16u << 20)
#define GB_PROTO_MAX_BLOB     (256u << 20)

typedef enum gb_msg_type {
    GB_MSG_OPEN = 1,
    GB_MSG_DEVICE,
    GB_MSG_PROBLEM,
    GB_MSG_REFERENCE,
    GB_MSG_TRIAL,
    GB_MSG_RESULT,
    GB_MSG_OK,
    GB_MSG_ERROR,
    GB_MSG_QUIT,
    GB_MSG_RACE,
    GB_MSG_RACED,
    GB_MSG_TYPE_END,
} gb_msg_type;

typedef struct gb_msg {
    gb_msg_type type;
    gb_json *json; /* an object */
    void *blob;
    size_t blob_bytes;
} gb_msg;

void gb_msg_free(gb_msg *msg);

/* Writes one message; a reader that is gone gives GB_ECLOSED. */
int gb_proto_send(int fd, gb_msg_type type, const char *json, const void *blob, size_t blob_bytes,
                  gb_err *err);

/* Reads one message. deadline_ms is an absolute gb_now_ms() time in
 * milliseconds, or a negative number to wait for ever. Returns GB_ETIMEOUT when
 * the deadline passes, GB_EINTR when gb_interrupted() became true while waiting,
 * GB_ECLOSED at end of file, GB_EPROTO for a malformed message. */
int gb_proto_recv(int fd, double deadline_ms, gb_msg *out, gb_err *err);

/* ---- payloads ----------------------------------------------------------- */

void gb_proto_write_args(gb_jw *w, const gb_arg *args, int n_args);
int gb_proto_read_args(const gb_json *arr, gb_arg *out, int *out_n, gb_err *err);

void gb_proto_write_launch(gb_jw *w, const gb_launch *launch);
int gb_proto_read_launch(const gb_json *obj, gb_launch *out, gb_err *err);

void gb_proto_write_check(gb_jw *w, const gb_check_spec *check);
int gb_proto_read_check(const gb_json *obj, gb_check_spec *out, gb_err *err);

void gb_proto_write_measure(gb_jw *w, const gb_measure_opts *opts);
int gb_proto_read_measure(const gb_json *obj, gb_measure_opts *out, gb_err *err);

void gb_proto_write_device(gb_jw *w, const gb_device_info *info);
int gb_proto_read_device(const gb_json *obj, gb_device_info *out, gb_err *err);

void gb_proto_write_measurement(gb_jw *w, const gb_measurement *m);
/* Statistics are recomputed from the samples, so they always agree with them. */
int gb_proto_read_measurement(const gb_json *obj, gb_measurement *out, gb_err *err);

void gb_proto_write_result(gb_jw *w, const gb_trial_result *result);
int gb_proto_read_result(const gb_json *obj, gb_trial_result *out, gb_err *err);

/* 64-bit integers as decimal strings. */
void gb_proto_write_u64(gb_jw *w, uint64_t v);
int gb_proto_read_u64(const gb_json *j, uint64_t *out);

#endif
