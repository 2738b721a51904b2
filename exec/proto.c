#include "exec/proto.h"

#include "engine/ceilings.h"
#include "exec/interrupt.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static const char MAGIC[4] = {'G', 'B', 'W', 'P'};

const char *gb_msg_type_name(gb_msg_type type)
{
#define NAME(name, payload) [GB_MSG_##name] = #name,
    static const char *const names[GB_MSG_TYPE_END] = {GB_PROTO_MESSAGES(NAME)};
#undef NAME
    return (unsigned)type < GB_MSG_TYPE_END && names[type] ? names[type] : "?";
}

gb_msg_type gb_proto_answer(gb_msg_type request)
{
#define ANSWER(req, ans, handler) [GB_MSG_##req] = GB_MSG_##ans,
    static const gb_msg_type answers[GB_MSG_TYPE_END] = {GB_PROTO_CALLS(ANSWER)};
#undef ANSWER
    return (unsigned)request < GB_MSG_TYPE_END ? answers[request] : GB_MSG_NONE;
}

void gb_msg_free(gb_msg *msg)
{
    if (!msg) return;
    json_decref(msg->json);
    free(msg->blob);
    memset(msg, 0, sizeof *msg);
}

/* ---- framing ------------------------------------------------------------ */

static void put_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static void put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (24 - 8 * i));
}

static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

int gb_proto_write_all(int fd, const void *bytes, size_t n, gb_err *err)
{
    const uint8_t *p = bytes;
    while (n > 0) {
        /* A socket, so a reader that is gone is EPIPE, not a SIGPIPE that kills us. */
        ssize_t done = send(fd, p, n, MSG_NOSIGNAL);
        if (done < 0 && errno == ENOTSOCK) done = write(fd, p, n);
        if (done < 0 && errno == EINTR) continue;
        if (done < 0 && errno == EPIPE)
            return gb_err_set(err, GB_ECLOSED, "the other process closed the connection");
        if (done < 0)
            return gb_err_set(err, GB_EPROTO, "writing to the other process failed: %s",
                              strerror(errno));
        p += done;
        n -= (size_t)done;
    }
    return GB_OK;
}

static int send_text(int fd, gb_msg_type type, const char *json, const void *blob,
                     size_t blob_bytes, gb_err *err)
{
    size_t json_bytes = strlen(json);
    if (json_bytes > GB_PROTO_MAX_JSON || blob_bytes > GB_PROTO_MAX_BLOB)
        return gb_err_set(err, GB_EINVAL, "message too large (%zu + %zu bytes)", json_bytes,
                          blob_bytes);
    uint8_t header[GB_PROTO_HEADER_BYTES];
    memcpy(header, MAGIC, 4);
    put_u16(header + 4, GB_PROTO_VERSION);
    put_u16(header + 6, (uint16_t)type);
    put_u32(header + 8, (uint32_t)json_bytes);
    put_u32(header + 12, (uint32_t)blob_bytes);
    int rc = gb_proto_write_all(fd, header, sizeof header, err);
    if (rc == GB_OK) rc = gb_proto_write_all(fd, json, json_bytes, err);
    if (rc == GB_OK && blob_bytes) rc = gb_proto_write_all(fd, blob, blob_bytes, err);
    return rc;
}

int gb_proto_send_json(int fd, gb_msg_type type, const json_t *json, const void *blob,
                       size_t blob_bytes, gb_err *err)
{
    char *text = json ? gb_json_dump(json, false) : strdup("{}");
    if (!text)
        return gb_err_set(err, GB_ENOMEM, "out of memory writing a %s message",
                          gb_msg_type_name(type));
    int rc = send_text(fd, type, text, blob, blob_bytes, err);
    free(text);
    return rc;
}

int gb_proto_send(int fd, gb_msg_type type, const void *payload, const void *blob,
                  size_t blob_bytes, gb_err *err)
{
    const gb_wire_type *t = gb_proto_payload(type);
    if (!t) return gb_proto_send_json(fd, type, NULL, blob, blob_bytes, err);
    json_t *json = gb_wire_encode(t, payload);
    if (!json)
        return gb_err_set(err, GB_ENOMEM, "out of memory writing a %s message",
                          gb_msg_type_name(type));
    int rc = gb_proto_send_json(fd, type, json, blob, blob_bytes, err);
    json_decref(json);
    return rc;
}

int gb_proto_wait_readable(int fd, double deadline_ms, gb_err *err)
{
    for (;;) {
        if (gb_interrupted()) return gb_err_set(err, GB_EINTR, "interrupted");
        double left = deadline_ms < 0 ? 100 : deadline_ms - gb_now_ms();
        if (left <= 0) return gb_err_set(err, GB_ETIMEOUT, "no answer in time");
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int n = poll(&p, 1, left > 100 ? 100 : (int)ceil(left)); /* wake to see interrupts */
        if (n > 0) return GB_OK;
        if (n < 0 && errno != EINTR) return gb_err_set(err, GB_EPROTO, "poll: %s", strerror(errno));
    }
}

static int read_exact(int fd, void *bytes, size_t n, double deadline_ms, gb_err *err)
{
    uint8_t *p = bytes;
    while (n > 0) {
        int rc = gb_proto_wait_readable(fd, deadline_ms, err);
        if (rc) return rc;
        ssize_t got = read(fd, p, n);
        if (got < 0 && errno == EINTR) continue;
        /* A peer that died with bytes still queued to it leaves a reset, not an end of file. */
        if (got == 0 || (got < 0 && errno == ECONNRESET))
            return gb_err_set(err, GB_ECLOSED, "the other process closed the connection");
        if (got < 0) return gb_err_set(err, GB_EPROTO, "read: %s", strerror(errno));
        p += got;
        n -= (size_t)got;
    }
    return GB_OK;
}

static int check_header(const uint8_t *h, gb_msg *out, uint32_t *json_bytes, gb_err *err)
{
    if (memcmp(h, MAGIC, 4) != 0)
        return gb_err_set(err, GB_EPROTO, "malformed message: bad magic %02x%02x%02x%02x", h[0],
                          h[1], h[2], h[3]);
    unsigned version = (unsigned)h[4] << 8 | h[5], type = (unsigned)h[6] << 8 | h[7];
    if (version != GB_PROTO_VERSION)
        return gb_err_set(err, GB_EPROTO, "protocol version %u, expected %d", version,
                          GB_PROTO_VERSION);
    if (type < GB_MSG_OPEN || type >= GB_MSG_TYPE_END)
        return gb_err_set(err, GB_EPROTO, "malformed message: unknown type %u", type);
    *json_bytes = get_u32(h + 8);
    out->type = (gb_msg_type)type;
    out->blob_bytes = get_u32(h + 12);
    if (*json_bytes > GB_PROTO_MAX_JSON || out->blob_bytes > GB_PROTO_MAX_BLOB)
        return gb_err_set(err, GB_EPROTO, "malformed message: %u + %zu bytes is over the limit",
                          *json_bytes, out->blob_bytes);
    return GB_OK;
}

int gb_proto_recv(int fd, double deadline_ms, gb_msg *out, gb_err *err)
{
    memset(out, 0, sizeof *out);
    uint8_t header[GB_PROTO_HEADER_BYTES];
    uint32_t json_bytes = 0;
    char *text = NULL;
    int rc = read_exact(fd, header, sizeof header, deadline_ms, err);
    if (rc == GB_OK) rc = check_header(header, out, &json_bytes, err);
    if (rc == GB_OK && !(text = malloc(json_bytes + 1)))
        rc = gb_err_set(err, GB_ENOMEM, "out of memory");
    if (rc == GB_OK) rc = read_exact(fd, text, json_bytes, deadline_ms, err);
    if (rc == GB_OK && out->blob_bytes && !(out->blob = malloc(out->blob_bytes)))
        rc = gb_err_set(err, GB_ENOMEM, "out of memory");
    if (rc == GB_OK && out->blob_bytes)
        rc = read_exact(fd, out->blob, out->blob_bytes, deadline_ms, err);
    if (rc == GB_ECLOSED && text) /* the header came, the rest did not */
        rc = gb_err_set(err, GB_EPROTO, "malformed message: truncated (%u + %zu bytes announced)",
                        json_bytes, out->blob_bytes);
    if (rc == GB_OK && gb_json_parse(text, json_bytes, &out->json, err) != GB_OK) {
        gb_err_prefix(err, "malformed message");
        rc = err ? (err->code = GB_EPROTO) : GB_EPROTO;
    }
    if (rc == GB_OK && !json_is_object(out->json))
        rc = gb_err_set(err, GB_EPROTO, "malformed message: the payload is not a JSON object");
    free(text);
    if (rc) gb_msg_free(out);
    return rc;
}

/* ---- payloads ----------------------------------------------------------- */

static int variant_finish(void *obj, const char *path, gb_err *err)
{
    const gb_proto_variant *v = obj;
    return v->name && v->name[0]
               ? GB_OK
               : gb_err_set(err, GB_EINVAL, "%s.name: expected a kernel name", path);
}

bool gb_proto_has_gemm(const void *variant)
{
    return ((const gb_proto_variant *)variant)->has_gemm;
}

static int error_finish(void *obj, const char *path, gb_err *err)
{
    const gb_proto_error *e = obj;
    return e->code ? GB_OK : gb_err_set(err, GB_EINVAL, "%s.code: expected a failure, not 0", path);
}

#define GB_WIRE_T gb_proto_open
GB_WIRE_TABLE(gb_wire_proto_open, "open", GB_PROTO_OPEN_WIRE, NULL)
#undef GB_WIRE_T
#define GB_WIRE_T gb_proto_problem
GB_WIRE_TABLE(gb_wire_proto_problem, "problem", GB_PROTO_PROBLEM_WIRE, NULL)
#undef GB_WIRE_T
#define GB_WIRE_T gb_proto_variant
GB_WIRE_TABLE(gb_wire_proto_variant, "variant", GB_PROTO_VARIANT_WIRE, variant_finish)
#undef GB_WIRE_T
#define GB_WIRE_T gb_proto_trial
GB_WIRE_TABLE(gb_wire_proto_trial, "trial", GB_PROTO_TRIAL_WIRE, NULL)
#undef GB_WIRE_T
#define GB_WIRE_T gb_proto_race_variant
GB_WIRE_TABLE(gb_wire_proto_race_variant, "race_variant", GB_PROTO_RACE_VARIANT_WIRE, NULL)
#undef GB_WIRE_T
#define GB_WIRE_T gb_proto_race
GB_WIRE_TABLE(gb_wire_proto_race, "race", GB_PROTO_RACE_WIRE, NULL)
#undef GB_WIRE_T
#define GB_WIRE_T gb_proto_raced
GB_WIRE_TABLE(gb_wire_proto_raced, "raced", GB_PROTO_RACED_WIRE, NULL)
#undef GB_WIRE_T
#define GB_WIRE_T gb_proto_rate
GB_WIRE_TABLE(gb_wire_proto_rate, "rate", GB_PROTO_RATE_WIRE, NULL)
#undef GB_WIRE_T
#define GB_WIRE_T gb_proto_rated
GB_WIRE_TABLE(gb_wire_proto_rated, "rated", GB_PROTO_RATED_WIRE, NULL)
#undef GB_WIRE_T
#define GB_WIRE_T gb_proto_error
GB_WIRE_TABLE(gb_wire_proto_error, "error", GB_PROTO_ERROR_WIRE, error_finish)
#undef GB_WIRE_T

const gb_wire_type *gb_proto_payload(gb_msg_type type)
{
#define PAYLOAD(name, payload) [GB_MSG_##name] = payload,
    static const gb_wire_type *const payloads[GB_MSG_TYPE_END] = {GB_PROTO_MESSAGES(PAYLOAD)};
#undef PAYLOAD
    return (unsigned)type < GB_MSG_TYPE_END ? payloads[type] : NULL;
}

int gb_proto_decode(const gb_msg *msg, void *out, gb_err *err)
{
    const gb_wire_type *t = gb_proto_payload(msg->type);
    if (!t) return GB_OK; /* OK and QUIT carry nothing */
    int rc = gb_wire_decode(t, msg->json, out, err);
    if (rc == GB_EINVAL) {
        gb_err_prefix(err, "malformed message");
        rc = err ? (err->code = GB_EPROTO) : GB_EPROTO;
    }
    return rc;
}

void gb_proto_free(gb_msg_type type, void *payload)
{
    const gb_wire_type *t = gb_proto_payload(type);
    if (t) gb_wire_free(t, payload);
}
