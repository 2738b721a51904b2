#include "engine/proto.h"

#include "engine/interrupt.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static const char MAGIC[4] = {'G', 'B', 'W', 'P'};

void gb_msg_free(gb_msg *msg)
{
    if (!msg) return;
    gb_json_free(msg->json);
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

static int write_all(int fd, const void *bytes, size_t n, gb_err *err)
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

int gb_proto_send(int fd, gb_msg_type type, const char *json, const void *blob, size_t blob_bytes,
                  gb_err *err)
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
    int rc = write_all(fd, header, sizeof header, err);
    if (rc == GB_OK) rc = write_all(fd, json, json_bytes, err);
    if (rc == GB_OK && blob_bytes) rc = write_all(fd, blob, blob_bytes, err);
    return rc;
}

/* Waits until fd is readable, the deadline passes or an interrupt is asked for. */
static int wait_readable(int fd, double deadline_ms, gb_err *err)
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
        int rc = wait_readable(fd, deadline_ms, err);
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
    if (rc == GB_OK && out->json->type != GB_JSON_OBJECT)
        rc = gb_err_set(err, GB_EPROTO, "malformed message: the payload is not a JSON object");
    free(text);
    if (rc) gb_msg_free(out);
    return rc;
}

/* ---- reading fields ----------------------------------------------------- */

static int bad_field(gb_err *err, const char *key, const char *expected)
{
    return gb_err_set(err, GB_EPROTO, "malformed message: field '%s' must be %s", key, expected);
}

static int get_num(const gb_json *obj, const char *key, double *out, gb_err *err)
{
    const gb_json *j = gb_json_get(obj, key);
    if (!j || j->type != GB_JSON_NUMBER) return bad_field(err, key, "a number");
    *out = j->number;
    return GB_OK;
}

static int get_int(const gb_json *obj, const char *key, long long lo, long long hi, long long *out,
                   gb_err *err)
{
    double v = 0;
    if (get_num(obj, key, &v, err) || v != floor(v) || v < (double)lo || v > (double)hi)
        return bad_field(err, key, "an integer in range");
    *out = (long long)v;
    return GB_OK;
}

static int get_str(const gb_json *obj, const char *key, const char **out, gb_err *err)
{
    const char *s = gb_json_str(gb_json_get(obj, key), NULL);
    if (!s) return bad_field(err, key, "a string");
    *out = s;
    return GB_OK;
}

void gb_proto_write_u64(gb_jw *w, uint64_t v)
{
    char text[24];
    snprintf(text, sizeof text, "%" PRIu64, v);
    gb_jw_str(w, text);
}

int gb_proto_read_u64(const gb_json *j, uint64_t *out)
{
    const char *s = gb_json_str(j, NULL);
    if (!s || !*s || strspn(s, "0123456789") != strlen(s) || strlen(s) > 20) return GB_EPROTO;
    errno = 0;
    unsigned long long v = strtoull(s, NULL, 10);
    if (errno) return GB_EPROTO;
    *out = v;
    return GB_OK;
}

static void key_num(gb_jw *w, const char *key, double v)
{
    gb_jw_key(w, key);
    gb_jw_num(w, v);
}

/* ---- arguments ---------------------------------------------------------- */

static void write_arg(gb_jw *w, const gb_arg *a)
{
    gb_jw_obj_begin(w);
    gb_jw_key(w, "kind");
    gb_jw_str(w, a->kind == GB_ARG_TENSOR ? "tensor" : "scalar");
    gb_jw_key(w, "dtype");
    gb_jw_str(w, gb_dtype_name(a->dtype));
    if (a->kind == GB_ARG_TENSOR) {
        gb_jw_key(w, "dims");
        gb_jw_arr_begin(w);
        for (int d = 0; d < a->n_dims; d++)
            gb_jw_int(w, a->dims[d]);
        gb_jw_arr_end(w);
        gb_jw_key(w, "init");
        gb_jw_str(w, gb_init_name(a->init));
        key_num(w, "value", a->init_value);
        gb_jw_key(w, "checked");
        gb_jw_bool(w, a->checked);
    } else {
        gb_jw_key(w, "int");
        gb_proto_write_u64(w, (uint64_t)a->int_value);
        key_num(w, "float", a->float_value);
    }
    gb_jw_obj_end(w);
}

void gb_proto_write_args(gb_jw *w, const gb_arg *args, int n_args)
{
    gb_jw_arr_begin(w);
    for (int i = 0; i < n_args; i++)
        write_arg(w, &args[i]);
    gb_jw_arr_end(w);
}

static int read_tensor(const gb_json *obj, gb_arg *a, gb_err *err)
{
    const gb_json *dims = gb_json_get(obj, "dims");
    const char *init = NULL;
    a->n_dims = (int)gb_json_len(dims);
    if (!dims || dims->type != GB_JSON_ARRAY || a->n_dims < 1 || a->n_dims > GB_MAX_DIMS)
        return bad_field(err, "dims", "a list of 1 to 8 sizes");
    for (int d = 0; d < a->n_dims; d++) {
        double v = gb_json_num(gb_json_at(dims, (size_t)d), -1);
        if (v < 0 || v != floor(v) || v > 9.0e15) return bad_field(err, "dims", "sizes >= 0");
        a->dims[d] = (int64_t)v;
    }
    int rc = get_str(obj, "init", &init, err);
    if (rc == GB_OK && strcmp(init, "value") == 0)
        a->init = GB_INIT_VALUE;
    else if (rc == GB_OK && gb_init_parse(init, &a->init) != GB_OK)
        return bad_field(err, "init", "an initialisation");
    const gb_json *checked = gb_json_get(obj, "checked");
    if (rc == GB_OK && (!checked || checked->type != GB_JSON_BOOL))
        return bad_field(err, "checked", "true or false");
    if (rc == GB_OK) a->checked = checked->boolean;
    return rc ? rc : get_num(obj, "value", &a->init_value, err);
}

static int read_arg(const gb_json *obj, gb_arg *a, gb_err *err)
{
    const char *kind = NULL, *dtype = NULL;
    memset(a, 0, sizeof *a);
    int rc = get_str(obj, "kind", &kind, err);
    if (rc == GB_OK) rc = get_str(obj, "dtype", &dtype, err);
    if (rc == GB_OK && gb_dtype_parse(dtype, &a->dtype) != GB_OK)
        return bad_field(err, "dtype", "a dtype");
    if (rc) return rc;
    if (strcmp(kind, "tensor") == 0) {
        a->kind = GB_ARG_TENSOR;
        return read_tensor(obj, a, err);
    }
    if (strcmp(kind, "scalar") != 0) return bad_field(err, "kind", "tensor or scalar");
    a->kind = GB_ARG_SCALAR;
    uint64_t bits;
    if (gb_proto_read_u64(gb_json_get(obj, "int"), &bits))
        return bad_field(err, "int", "a decimal string");
    a->int_value = (int64_t)bits;
    return get_num(obj, "float", &a->float_value, err);
}

int gb_proto_read_args(const gb_json *arr, gb_arg *out, int *out_n, gb_err *err)
{
    size_t n = gb_json_len(arr);
    if (!arr || arr->type != GB_JSON_ARRAY || n > GB_MAX_ARGS)
        return bad_field(err, "args", "a list of at most 32 arguments");
    for (size_t i = 0; i < n; i++) {
        int rc = read_arg(gb_json_at(arr, i), &out[i], err);
        if (rc) return gb_err_prefix(err, "argument %zu", i + 1);
    }
    *out_n = (int)n;
    return GB_OK;
}

/* ---- launch, check, measurement options --------------------------------- */

static void write_dims(gb_jw *w, const char *key, const uint32_t v[3])
{
    gb_jw_key(w, key);
    gb_jw_arr_begin(w);
    for (int i = 0; i < 3; i++)
        gb_jw_int(w, v[i]);
    gb_jw_arr_end(w);
}

void gb_proto_write_launch(gb_jw *w, const gb_launch *l)
{
    gb_jw_obj_begin(w);
    write_dims(w, "grid", l->grid);
    write_dims(w, "block", l->block);
    key_num(w, "smem", l->smem_bytes);
    gb_jw_obj_end(w);
}

static int read_dims(const gb_json *obj, const char *key, uint32_t out[3], gb_err *err)
{
    const gb_json *arr = gb_json_get(obj, key);
    if (gb_json_len(arr) != 3 || arr->type != GB_JSON_ARRAY)
        return bad_field(err, key, "a list of 3 sizes");
    for (size_t i = 0; i < 3; i++) {
        double v = gb_json_num(gb_json_at(arr, i), -1);
        if (v < 1 || v > 4294967295.0 || v != floor(v)) return bad_field(err, key, "sizes >= 1");
        out[i] = (uint32_t)v;
    }
    return GB_OK;
}

int gb_proto_read_launch(const gb_json *obj, gb_launch *out, gb_err *err)
{
    long long smem = 0;
    int rc = read_dims(obj, "grid", out->grid, err);
    if (rc == GB_OK) rc = read_dims(obj, "block", out->block, err);
    if (rc == GB_OK) rc = get_int(obj, "smem", 0, UINT32_MAX, &smem, err);
    out->smem_bytes = (uint32_t)smem;
    return rc;
}

void gb_proto_write_check(gb_jw *w, const gb_check_spec *c)
{
    gb_jw_obj_begin(w);
    gb_jw_key(w, "outputs");
    gb_jw_arr_begin(w);
    for (int i = 0; i < c->n_outputs; i++)
        gb_jw_int(w, c->outputs[i]);
    gb_jw_arr_end(w);
    key_num(w, "rtol", c->rtol);
    key_num(w, "atol", c->atol);
    gb_jw_obj_end(w);
}

int gb_proto_read_check(const gb_json *obj, gb_check_spec *out, gb_err *err)
{
    const gb_json *outputs = gb_json_get(obj, "outputs");
    size_t n = gb_json_len(outputs);
    if (!outputs || outputs->type != GB_JSON_ARRAY || n > GB_MAX_ARGS)
        return bad_field(err, "outputs", "a list of argument positions");
    out->n_outputs = (int)n;
    for (size_t i = 0; i < n; i++) {
        double v = gb_json_num(gb_json_at(outputs, i), -1);
        if (v < 0 || v >= GB_MAX_ARGS || v != floor(v))
            return bad_field(err, "outputs", "positions");
        out->outputs[i] = (int)v;
    }
    int rc = get_num(obj, "rtol", &out->rtol, err);
    return rc ? rc : get_num(obj, "atol", &out->atol, err);
}

void gb_proto_write_measure(gb_jw *w, const gb_measure_opts *o)
{
    gb_jw_obj_begin(w);
    gb_jw_key(w, "mode");
    gb_jw_str(w, gb_measure_mode_name(o->mode));
    key_num(w, "noise", o->noise);
    key_num(w, "min_samples", o->min_samples);
    key_num(w, "max_samples", o->max_samples);
    key_num(w, "max_ms", o->max_ms);
    key_num(w, "warmup_ms", o->warmup_ms);
    key_num(w, "warmup_max_ms", o->warmup_max_ms);
    key_num(w, "clock_tolerance", o->clock_tolerance);
    key_num(w, "throttle_drop", o->throttle_drop);
    key_num(w, "hot_min_ms", o->hot_min_ms);
    gb_jw_obj_end(w);
}

int gb_proto_read_measure(const gb_json *obj, gb_measure_opts *out, gb_err *err)
{
    long long min_samples = 0, max_samples = 0;
    const char *mode = NULL;
    int rc = get_str(obj, "mode", &mode, err);
    if (rc == GB_OK && gb_measure_mode_parse(mode, &out->mode) != GB_OK)
        rc = bad_field(err, "mode", "cold or hot");
    if (rc == GB_OK) rc = get_num(obj, "noise", &out->noise, err);
    if (rc == GB_OK) rc = get_int(obj, "min_samples", 1, 10000000, &min_samples, err);
    if (rc == GB_OK) rc = get_int(obj, "max_samples", min_samples, 10000000, &max_samples, err);
    if (rc == GB_OK) rc = get_num(obj, "max_ms", &out->max_ms, err);
    if (rc == GB_OK) rc = get_num(obj, "warmup_ms", &out->warmup_ms, err);
    if (rc == GB_OK) rc = get_num(obj, "warmup_max_ms", &out->warmup_max_ms, err);
    if (rc == GB_OK) rc = get_num(obj, "clock_tolerance", &out->clock_tolerance, err);
    if (rc == GB_OK) rc = get_num(obj, "throttle_drop", &out->throttle_drop, err);
    if (rc == GB_OK) rc = get_num(obj, "hot_min_ms", &out->hot_min_ms, err);
    out->min_samples = (int)min_samples;
    out->max_samples = (int)max_samples;
    if (rc == GB_OK && gb_measure_check(out, err) != GB_OK) rc = GB_EPROTO;
    return rc;
}

/* ---- the device ---------------------------------------------------------- */

void gb_proto_write_device(gb_jw *w, const gb_device_info *d)
{
    gb_jw_obj_begin(w);
    gb_jw_key(w, "name");
    gb_jw_str(w, d->name);
    gb_jw_key(w, "arch");
    gb_jw_str(w, d->arch);
    gb_jw_key(w, "clock_source");
    gb_jw_str(w, d->clock_source);
    const struct {
        const char *key;
        double value;
    } fields[] = {
        {"ordinal", d->ordinal},
        {"cc_major", d->cc_major},
        {"cc_minor", d->cc_minor},
        {"sms", d->sms},
        {"smem_optin", d->smem_per_block_optin},
        {"smem_per_sm", d->smem_per_sm},
        {"regs_per_sm", d->regs_per_sm},
        {"max_threads", d->max_threads_per_block},
        {"l2_bytes", (double)d->l2_bytes},
        {"mem_bytes", (double)d->mem_bytes},
        {"mem_clock_khz", d->mem_clock_khz},
        {"bus_width_bits", d->bus_width_bits},
        {"sm_clock_khz", d->sm_clock_khz},
        {"peak_gbps", d->peak_gbps},
        {"driver", d->driver_version},
    };
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++)
        key_num(w, fields[i].key, fields[i].value);
    gb_jw_obj_end(w);
}

int gb_proto_read_device(const gb_json *obj, gb_device_info *d, gb_err *err)
{
    memset(d, 0, sizeof *d);
    const char *name = NULL, *arch = NULL;
    int rc = get_str(obj, "name", &name, err);
    if (rc == GB_OK) rc = get_str(obj, "arch", &arch, err);
    if (rc) return rc;
    gb_strlcpy(d->name, name, sizeof d->name);
    gb_strlcpy(d->arch, arch, sizeof d->arch);
    gb_strlcpy(d->clock_source, gb_json_str(gb_json_get(obj, "clock_source"), ""),
               sizeof d->clock_source);
    int *ints[] = {&d->ordinal,
                   &d->cc_major,
                   &d->cc_minor,
                   &d->sms,
                   &d->smem_per_block_optin,
                   &d->smem_per_sm,
                   &d->regs_per_sm,
                   &d->max_threads_per_block,
                   &d->mem_clock_khz,
                   &d->bus_width_bits,
                   &d->sm_clock_khz,
                   &d->driver_version};
    const char *keys[] = {"ordinal",       "cc_major",       "cc_minor",     "sms",
                          "smem_optin",    "smem_per_sm",    "regs_per_sm",  "max_threads",
                          "mem_clock_khz", "bus_width_bits", "sm_clock_khz", "driver"};
    for (size_t i = 0; rc == GB_OK && i < sizeof keys / sizeof *keys; i++) {
        long long v = 0;
        rc = get_int(obj, keys[i], -1, INT32_MAX, &v, err);
        *ints[i] = (int)v;
    }
    double l2 = 0, mem = 0;
    if (rc == GB_OK) rc = get_num(obj, "l2_bytes", &l2, err);
    if (rc == GB_OK) rc = get_num(obj, "mem_bytes", &mem, err);
    if (rc == GB_OK) rc = get_num(obj, "peak_gbps", &d->peak_gbps, err);
    d->l2_bytes = (int64_t)l2;
    d->mem_bytes = (int64_t)mem;
    return rc;
}

/* ---- trial results ------------------------------------------------------ */

static void write_numbers(gb_jw *w, const char *key, const double *v, int n)
{
    gb_jw_key(w, key);
    gb_jw_arr_begin(w);
    for (int i = 0; i < n; i++)
        gb_jw_num(w, v[i]);
    gb_jw_arr_end(w);
}

void gb_proto_write_measurement(gb_jw *w, const gb_measurement *m)
{
    gb_jw_obj_begin(w);
    gb_jw_key(w, "mode");
    gb_jw_str(w, gb_measure_mode_name(m->mode));
    write_numbers(w, "samples_ms", m->samples_ms, m->n_samples);
    write_numbers(w, "clock_mhz", m->clock_mhz, m->n_samples);
    gb_jw_key(w, "throttled");
    gb_jw_arr_begin(w);
    for (int i = 0; i < m->n_samples; i++)
        gb_jw_int(w, m->throttled[i]);
    gb_jw_arr_end(w);
    key_num(w, "steady_clock_mhz", m->steady_clock_mhz);
    gb_jw_key(w, "clock_steady");
    gb_jw_bool(w, m->clock_steady);
    key_num(w, "n_warmup", m->n_warmup);
    key_num(w, "warmup_ms", m->warmup_ms);
    key_num(w, "wall_ms", m->wall_ms);
    gb_jw_key(w, "capped");
    gb_jw_bool(w, m->capped);
    key_num(w, "launches_per_sample", m->launches_per_sample);
    gb_jw_obj_end(w);
}

/* One of the per-sample arrays, of exactly n entries, each >= 0. */
static int read_numbers(const gb_json *obj, const char *key, int n, double *out, gb_err *err)
{
    const gb_json *arr = gb_json_get(obj, key);
    if (!arr || arr->type != GB_JSON_ARRAY || gb_json_len(arr) != (size_t)n)
        return bad_field(err, key, "a list with one entry per sample");
    for (int i = 0; i < n; i++) {
        const gb_json *v = gb_json_at(arr, (size_t)i);
        if (!v || v->type != GB_JSON_NUMBER || !(v->number >= 0))
            return bad_field(err, key, "non-negative numbers");
        out[i] = v->number;
    }
    return GB_OK;
}

static int read_samples(const gb_json *obj, gb_measurement *m, gb_err *err)
{
    size_t n = gb_json_len(gb_json_get(obj, "samples_ms"));
    if (n < 1 || n > 10000000) return bad_field(err, "samples_ms", "a non-empty list");
    m->n_samples = (int)n;
    m->samples_ms = malloc(n * sizeof *m->samples_ms);
    m->clock_mhz = malloc(n * sizeof *m->clock_mhz);
    m->throttled = malloc(n * sizeof *m->throttled);
    double *flags = malloc(n * sizeof *flags);
    int rc = m->samples_ms && m->clock_mhz && m->throttled && flags
                 ? GB_OK
                 : gb_err_set(err, GB_ENOMEM, "out of memory");
    if (rc == GB_OK) rc = read_numbers(obj, "samples_ms", m->n_samples, m->samples_ms, err);
    if (rc == GB_OK) rc = read_numbers(obj, "clock_mhz", m->n_samples, m->clock_mhz, err);
    if (rc == GB_OK) rc = read_numbers(obj, "throttled", m->n_samples, flags, err);
    for (size_t i = 0; rc == GB_OK && i < n; i++)
        m->throttled[i] = flags[i] != 0;
    free(flags);
    return rc;
}

int gb_proto_read_measurement(const gb_json *obj, gb_measurement *m, gb_err *err)
{
    memset(m, 0, sizeof *m);
    const char *mode = NULL;
    double n_warmup = 0, launches = 0;
    int rc = get_str(obj, "mode", &mode, err);
    if (rc == GB_OK && gb_measure_mode_parse(mode, &m->mode) != GB_OK)
        rc = bad_field(err, "mode", "cold or hot");
    if (rc == GB_OK) rc = read_samples(obj, m, err);
    if (rc == GB_OK) rc = get_num(obj, "steady_clock_mhz", &m->steady_clock_mhz, err);
    if (rc == GB_OK) rc = get_num(obj, "n_warmup", &n_warmup, err);
    if (rc == GB_OK) rc = get_num(obj, "warmup_ms", &m->warmup_ms, err);
    if (rc == GB_OK) rc = get_num(obj, "wall_ms", &m->wall_ms, err);
    if (rc == GB_OK) rc = get_num(obj, "launches_per_sample", &launches, err);
    m->n_warmup = (int)n_warmup;
    m->launches_per_sample = (int)launches;
    m->clock_steady = gb_json_bool(gb_json_get(obj, "clock_steady"), false);
    m->capped = gb_json_bool(gb_json_get(obj, "capped"), false);
    if (rc == GB_OK && gb_measurement_summarise(m) != GB_OK)
        rc = gb_err_set(err, GB_ENOMEM, "out of memory");
    if (rc) gb_measurement_free(m);
    return rc;
}

void gb_proto_write_result(gb_jw *w, const gb_trial_result *r)
{
    gb_jw_obj_begin(w);
    gb_jw_key(w, "status");
    gb_jw_str(w, gb_trial_status_name(r->status));
    gb_jw_key(w, "reason");
    gb_jw_str(w, r->reason);
    gb_jw_key(w, "check");
    gb_jw_obj_begin(w);
    gb_jw_key(w, "checked");
    gb_jw_bool(w, r->check.checked);
    gb_jw_key(w, "n_bad");
    gb_proto_write_u64(w, (uint64_t)r->check.n_bad);
    gb_jw_key(w, "n_compared");
    gb_proto_write_u64(w, (uint64_t)r->check.n_compared);
    key_num(w, "max_abs_err", r->check.max_abs_err);
    key_num(w, "max_rel_err", r->check.max_rel_err);
    key_num(w, "first_bad_output", r->check.first_bad_output);
    gb_jw_key(w, "first_bad_index");
    gb_proto_write_u64(w, (uint64_t)r->check.first_bad_index);
    gb_jw_obj_end(w);
    if (r->status == GB_TRIAL_OK) {
        gb_jw_key(w, "measurement");
        gb_proto_write_measurement(w, &r->measurement);
    }
    gb_jw_obj_end(w);
}

static int read_check_result(const gb_json *obj, gb_check_result *c, gb_err *err)
{
    uint64_t n_bad, n_compared, first_index;
    if (!obj || obj->type != GB_JSON_OBJECT) return bad_field(err, "check", "an object");
    if (gb_proto_read_u64(gb_json_get(obj, "n_bad"), &n_bad) ||
        gb_proto_read_u64(gb_json_get(obj, "n_compared"), &n_compared) ||
        gb_proto_read_u64(gb_json_get(obj, "first_bad_index"), &first_index))
        return bad_field(err, "check", "counts as decimal strings");
    c->checked = gb_json_bool(gb_json_get(obj, "checked"), false);
    c->n_bad = (int64_t)n_bad;
    c->n_compared = (int64_t)n_compared;
    c->first_bad_index = (int64_t)first_index;
    /* NaN errors travel as null (JSON has no NaN). */
    c->max_abs_err = gb_json_num(gb_json_get(obj, "max_abs_err"), NAN);
    c->max_rel_err = gb_json_num(gb_json_get(obj, "max_rel_err"), NAN);
    c->first_bad_output = (int)gb_json_num(gb_json_get(obj, "first_bad_output"), -1);
    return GB_OK;
}

int gb_proto_read_result(const gb_json *obj, gb_trial_result *out, gb_err *err)
{
    memset(out, 0, sizeof *out);
    const char *status = NULL, *reason = NULL;
    int rc = get_str(obj, "status", &status, err);
    if (rc == GB_OK && gb_trial_status_parse(status, &out->status) != GB_OK)
        rc = bad_field(err, "status", "a trial status");
    if (rc == GB_OK) rc = get_str(obj, "reason", &reason, err);
    if (rc == GB_OK) rc = read_check_result(gb_json_get(obj, "check"), &out->check, err);
    if (rc == GB_OK && out->status == GB_TRIAL_OK)
        rc = gb_proto_read_measurement(gb_json_get(obj, "measurement"), &out->measurement, err);
    if (rc == GB_OK) gb_strlcpy(out->reason, reason, sizeof out->reason);
    if (rc) gb_trial_result_free(out);
    return rc;
}
