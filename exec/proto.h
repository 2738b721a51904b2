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
 * Requests and their answers, each JSON object a payload struct below described
 * by a wire type (base/wire.h), so both sides read and write it the same way:
 *
 * (GB_PROTO_MESSAGES and GB_PROTO_CALLS below list them once for the code):
 *
 *   OPEN gb_proto_open                     -> DEVICE gb_device_info | ERROR
 *   PROBLEM gb_proto_problem               -> OK | ERROR
 *   REFERENCE gb_proto_variant + cubin     -> OK | ERROR
 *   TRIAL gb_proto_trial + cubin           -> RESULT gb_trial_result | ERROR
 *   RACE gb_proto_race + the cubins one after another
 *                                          -> RACED gb_proto_raced | ERROR
 *   MEASURE_CEILINGS (empty)               -> CEILINGS gb_ceilings | ERROR
 *   RATE gb_proto_rate                     -> RATED gb_proto_rated | ERROR
 *   QUIT {}                                -> (the worker exits)
 *
 * A variant that is a library GEMM (gb_variant.gemm) carries its description in
 * the optional "gemm" field instead of a cubin: its blob (or its share of a
 * race's) is empty.
 *
 * ERROR is gb_proto_error {code, message}; a code of GB_EFAULT means the worker's
 * CUDA context is gone and the worker exits after sending it. Both sides check the
 * magic, the version, the type, the lengths against limits, and every field of a
 * payload (gb_wire_decode); anything else is GB_EPROTO. Version 2: 64-bit integers
 * are plain JSON integers (version 1 sent them as decimal strings).
 */
#ifndef GB_EXEC_PROTO_H
#define GB_EXEC_PROTO_H

#include "base/clock.h"
#include "base/error.h"
#include "base/json.h"
#include "base/wire.h"
#include "engine/device.h"
#include "exec/exec.h"
#include "engine/gemm.h"
#include "engine/gpu.h"
#include "engine/roofs.h"
#include "engine/spec.h"
#include "engine/wire_types.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GB_PROTO_VERSION      2
#define GB_PROTO_HEADER_BYTES 16
#define GB_PROTO_MAX_JSON     (16u << 20)
#define GB_PROTO_MAX_BLOB     (256u << 20)

/* Every message type, once: its name and its payload's wire type (declared below;
 * NULL: an empty object). A type's place in the list is its number on the wire,
 * from 1: append only. */
#define GB_PROTO_MESSAGES(X)                                                                       \
    X(OPEN, &gb_wire_proto_open)                                                                   \
    X(DEVICE, &gb_wire_device_info)                                                                \
    X(PROBLEM, &gb_wire_proto_problem)                                                             \
    X(REFERENCE, &gb_wire_proto_variant)                                                           \
    X(TRIAL, &gb_wire_proto_trial)                                                                 \
    X(RESULT, &gb_wire_trial_result)                                                               \
    X(OK, NULL)                                                                                    \
    X(ERROR, &gb_wire_proto_error)                                                                 \
    X(QUIT, NULL)                                                                                  \
    X(RACE, &gb_wire_proto_race)                                                                   \
    X(RACED, &gb_wire_proto_raced)                                                                 \
    X(MEASURE_CEILINGS, NULL)                                                                      \
    X(CEILINGS, &gb_wire_ceilings)                                                                 \
    X(RATE, &gb_wire_proto_rate)                                                                   \
    X(RATED, &gb_wire_proto_rated)

/* The requests, once: each with its answer (ERROR may answer any of them) and the
 * name of the worker's handler (exec/worker.c: on_NAME). QUIT has no answer. */
#define GB_PROTO_CALLS(X)                                                                          \
    X(OPEN, DEVICE, open)                                                                          \
    X(PROBLEM, OK, problem)                                                                        \
    X(REFERENCE, OK, reference)                                                                    \
    X(TRIAL, RESULT, trial)                                                                        \
    X(RACE, RACED, race)                                                                           \
    X(MEASURE_CEILINGS, CEILINGS, ceilings)                                                        \
    X(RATE, RATED, rate)

#define GB_PROTO_ENUM_ENTRY(name, payload) GB_MSG_##name,
typedef enum gb_msg_type {
    GB_MSG_NONE, /* not a type: numbers start at 1 */
    GB_PROTO_MESSAGES(GB_PROTO_ENUM_ENTRY) GB_MSG_TYPE_END,
} gb_msg_type;
#undef GB_PROTO_ENUM_ENTRY

/* The answer a request is due (GB_MSG_NONE for QUIT and for what is not a
 * request). */
gb_msg_type gb_proto_answer(gb_msg_type request);

/* "OPEN", "DEVICE", ...; "?" for a value that is not a type. */
const char *gb_msg_type_name(gb_msg_type type);

typedef struct gb_msg {
    gb_msg_type type;
    json_t *json; /* an object */
    void *blob;
    size_t blob_bytes;
} gb_msg;

void gb_msg_free(gb_msg *msg);

/* ---- payloads ----------------------------------------------------------- */

typedef struct gb_proto_open {
    int ordinal;
} gb_proto_open;
#define GB_PROTO_OPEN_WIRE(X) X(ordinal, INT, "ordinal", GB_WIRE_RANGE(0, INT_MAX))

typedef struct gb_proto_problem {
    uint64_t seed;
    int n_args;
    gb_arg args[GB_MAX_ARGS];
} gb_proto_problem;
#define GB_PROTO_PROBLEM_WIRE(X)                                                                   \
    X(seed, UINT64, "seed")                                                                        \
    X(args, STRUCT, "args", .type = &gb_wire_arg, .arity = GB_WIRE_INLINE,                         \
      .count = offsetof(gb_proto_problem, n_args))

/* A kernel to launch (REFERENCE; part of TRIAL and RACE); its cubin is the blob.
 * The strings are owned when decoded, borrowed when sent. kernel and config name
 * the worker's NVTX ranges only (gb_variant); they may be absent. A library GEMM
 * has its description in gemm (has_gemm) and no cubin; "gemm" is left out of the
 * JSON otherwise, and a message without it is a cubin's, as before it existed. */
typedef struct gb_proto_variant {
    char *name; /* the lowered (mangled) name */
    gb_launch launch;
    char *kernel; /* the script's name: "sgemm" */
    char *config; /* "BK=8,BM=64" */
    bool has_gemm;
    gb_gemm gemm;
} gb_proto_variant;
#define GB_PROTO_VARIANT_WIRE(X)                                                                   \
    X(name, STRING, "name")                                                                        \
    X(launch, STRUCT, "launch", .type = &gb_wire_launch)                                           \
    X(kernel, STRING, "kernel", .flags = GB_WIRE_OPTIONAL, .max_len = 256)                         \
    X(config, STRING, "config", .flags = GB_WIRE_OPTIONAL, .max_len = 1024)                        \
    X(gemm, STRUCT, "gemm", .type = &gb_wire_gemm, .flags = GB_WIRE_NULLABLE,                      \
      .present = offsetof(gb_proto_variant, has_gemm), .when = gb_proto_has_gemm)

/* A gb_proto_variant's gemm is on the wire when it has one. */
bool gb_proto_has_gemm(const void *variant);

typedef struct gb_proto_trial {
    gb_proto_variant variant; /* its fields sit in the message itself */
    gb_check_spec check;
    gb_measure_opts measure;
} gb_proto_trial;
#define GB_PROTO_TRIAL_WIRE(X)                                                                     \
    X(variant, STRUCT, "variant", .type = &gb_wire_proto_variant, .flags = GB_WIRE_INLINE_STRUCT)  \
    X(check, STRUCT, "check", .type = &gb_wire_check_spec)                                         \
    X(measure, STRUCT, "measure", .type = &gb_wire_measure_opts)

typedef struct gb_proto_race_variant {
    gb_proto_variant variant;
    int64_t cubin_bytes; /* its cubin's share of the blob (0 for a library GEMM) */
} gb_proto_race_variant;
#define GB_PROTO_RACE_VARIANT_WIRE(X)                                                              \
    X(variant, STRUCT, "variant", .type = &gb_wire_proto_variant, .flags = GB_WIRE_INLINE_STRUCT)  \
    X(cubin_bytes, INT64, "cubin_bytes", GB_WIRE_RANGE(0, GB_PROTO_MAX_BLOB))

typedef struct gb_proto_race {
    int n_variants;
    gb_proto_race_variant variants[GB_MAX_RACE];
    gb_measure_opts measure;
} gb_proto_race;
#define GB_PROTO_RACE_WIRE(X)                                                                      \
    X(variants, STRUCT, "variants", .type = &gb_wire_proto_race_variant, .arity = GB_WIRE_INLINE,  \
      .count = offsetof(gb_proto_race, n_variants), .min_items = 1)                                \
    X(measure, STRUCT, "measure", .type = &gb_wire_measure_opts)

typedef struct gb_proto_raced {
    int n_measurements;
    gb_measurement measurements[GB_MAX_RACE];
} gb_proto_raced;
#define GB_PROTO_RACED_WIRE(X)                                                                     \
    X(measurements, STRUCT, "measurements", .type = &gb_wire_measurement, .arity = GB_WIRE_INLINE, \
      .count = offsetof(gb_proto_raced, n_measurements), .min_items = 1)

/* cuBLASLt's GEMM rate for a kind of math at M x N x K (gb_exec_cublas_rate). */
typedef struct gb_proto_rate {
    gb_math math;
    int64_t m, n, k;
} gb_proto_rate;
#define GB_PROTO_RATE_WIRE(X)                                                                      \
    X(math, ENUM, "math", .enumeration = &gb_wire_enum_math)                                       \
    X(m, INT64, "m", GB_WIRE_RANGE(1, GB_GEMM_MAX_DIM))                                            \
    X(n, INT64, "n", GB_WIRE_RANGE(1, GB_GEMM_MAX_DIM))                                            \
    X(k, INT64, "k", GB_WIRE_RANGE(1, GB_GEMM_MAX_DIM))

typedef struct gb_proto_rated {
    double tflops;
} gb_proto_rated;
#define GB_PROTO_RATED_WIRE(X) X(tflops, DOUBLE, "tflops", GB_WIRE_RANGE(0, INFINITY))

typedef struct gb_proto_error {
    int code; /* a gpubench status (never 0) */
    char message[GB_ERR_MSG_BYTES];
} gb_proto_error;
#define GB_PROTO_ERROR_WIRE(X)                                                                     \
    X(code, INT, "code")                                                                           \
    X(message, CHARS, "message")

extern const gb_wire_type gb_wire_proto_open;
extern const gb_wire_type gb_wire_proto_problem;
extern const gb_wire_type gb_wire_proto_variant;
extern const gb_wire_type gb_wire_proto_trial;
extern const gb_wire_type gb_wire_proto_race_variant;
extern const gb_wire_type gb_wire_proto_race;
extern const gb_wire_type gb_wire_proto_raced;
extern const gb_wire_type gb_wire_proto_rate;
extern const gb_wire_type gb_wire_proto_rated;
extern const gb_wire_type gb_wire_proto_error;

/* The payload of each message type: OPEN gb_wire_proto_open, DEVICE
 * gb_wire_device_info, ..., RESULT gb_wire_trial_result; NULL for OK and QUIT,
 * whose payload is an empty object. */
const gb_wire_type *gb_proto_payload(gb_msg_type type);

/* ---- sending and receiving ---------------------------------------------- */

/* Sends one message whose payload is the struct gb_proto_payload(type) describes
 * (NULL for OK and QUIT), and the blob. A reader that is gone gives GB_ECLOSED. */
int gb_proto_send(int fd, gb_msg_type type, const void *payload, const void *blob,
                  size_t blob_bytes, gb_err *err);

/* Sends a JSON object as it is (NULL: {}): for messages made by hand in tests. */
int gb_proto_send_json(int fd, gb_msg_type type, const json_t *json, const void *blob,
                       size_t blob_bytes, gb_err *err);

/* Reads one message. deadline_ms is an absolute gb_now_ms() time in
 * milliseconds, or a negative number to wait for ever. Returns GB_ETIMEOUT when
 * the deadline passes, GB_EINTR when gb_interrupted() became true while waiting,
 * GB_ECLOSED at end of file, GB_EPROTO for a malformed message. */
int gb_proto_recv(int fd, double deadline_ms, gb_msg *out, gb_err *err);

/* The two halves of the transport, for other line protocols over a socket or pipe
 * (engine/collective.c). write_all: all n bytes, EINTR retried, a reader that is
 * gone is GB_ECLOSED (no SIGPIPE). wait_readable: until fd is readable, GB_ETIMEOUT
 * past deadline_ms (gb_now_ms; < 0: none), GB_EINTR once an interrupt is asked for. */
int gb_proto_write_all(int fd, const void *bytes, size_t n, gb_err *err);
int gb_proto_wait_readable(int fd, double deadline_ms, gb_err *err);

/* Reads msg's payload into out, the struct of its type (zeroed first; free it with
 * gb_proto_free). GB_EPROTO "malformed TYPE message: FIELD: expected ..." for a
 * payload that does not read, GB_ENOMEM. */
int gb_proto_decode(const gb_msg *msg, void *out, gb_err *err);

/* Frees what gb_proto_decode allocated in a payload of this type. */
void gb_proto_free(gb_msg_type type, void *payload);

#endif
