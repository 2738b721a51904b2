/* The lines the collectives' parent and child exchange (exec/collective_run.h):
 * one JSON object per line, each read under a deadline. */
#include "exec/collective_run.h"

#include "base/json.h"
#include "exec/proto.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A row is a few hundred bytes; a line past this is not one of ours. */
#define MAX_LINE_BYTES ((size_t)1 << 20)

/* ---- lines --------------------------------------------------------------- */

int gb_collective_send(int fd, const char *kind, const gb_wire_type *t, const void *obj,
                       gb_err *err)
{
    json_t *line = json_object();
    int rc = line ? gb_json_set(line, kind, t ? gb_wire_encode(t, obj) : json_object()) : GB_ENOMEM;
    char *text = rc == GB_OK ? gb_json_dump(line, false) : NULL;
    json_decref(line);
    if (!text) return gb_err_set(err, GB_ENOMEM, "out of memory writing a %s line", kind);
    size_t n = strlen(text);
    text[n] = '\n'; /* replaces the terminator: the line is written by length */
    rc = gb_proto_write_all(fd, text, n + 1, err);
    free(text);
    return rc;
}

/* Reads more bytes into r->buf; GB_ECLOSED at end of file. */
static int fill(gb_collective_reader *r, double deadline_ms, gb_err *err)
{
    if (r->len >= MAX_LINE_BYTES)
        return gb_err_set(err, GB_EPROTO, "malformed line: longer than %zu bytes", MAX_LINE_BYTES);
    if (r->cap - r->len < 4096) {
        size_t cap = r->cap ? r->cap * 2 : 8192;
        char *grown = realloc(r->buf, cap);
        if (!grown) return gb_err_set(err, GB_ENOMEM, "out of memory");
        r->buf = grown;
        r->cap = cap;
    }
    int rc = gb_proto_wait_readable(r->fd, deadline_ms, err);
    if (rc) return rc;
    ssize_t got;
    while ((got = read(r->fd, r->buf + r->len, r->cap - r->len)) < 0 && errno == EINTR) {
    }
    /* A peer that died with bytes still queued to it leaves a reset, not an end of file. */
    if (got == 0 || (got < 0 && errno == ECONNRESET))
        return gb_err_set(err, GB_ECLOSED, "the other process closed the connection");
    if (got < 0) return gb_err_set(err, GB_EPROTO, "read: %s", strerror(errno));
    r->len += (size_t)got;
    return GB_OK;
}

/* The line as {"<kind>": payload}. */
static int parse_line(const char *text, size_t n, json_t **out, const char **out_kind,
                      const json_t **out_payload, gb_err *err)
{
    json_t *j = NULL;
    if (gb_json_parse(text, n, &j, err) != GB_OK) {
        gb_err_prefix(err, "malformed line");
        return err ? (err->code = GB_EPROTO) : GB_EPROTO;
    }
    if (!json_is_object(j) || json_object_size(j) != 1) {
        json_decref(j);
        return gb_err_set(err, GB_EPROTO, "malformed line: expected {\"kind\": payload}");
    }
    void *it = json_object_iter(j);
    *out = j;
    *out_kind = json_object_iter_key(it);
    *out_payload = json_object_iter_value(it);
    return GB_OK;
}

int gb_collective_recv(gb_collective_reader *r, double deadline_ms, json_t **out,
                       const char **out_kind, const json_t **out_payload, gb_err *err)
{
    *out = NULL;
    char *nl;
    while (!(nl = r->len ? memchr(r->buf, '\n', r->len) : NULL)) {
        int rc = fill(r, deadline_ms, err);
        if (rc == GB_ECLOSED && r->len)
            return gb_err_set(err, GB_EPROTO, "malformed line: cut off by the end of the stream");
        if (rc) return rc;
    }
    size_t n = (size_t)(nl - r->buf);
    int rc = parse_line(r->buf, n, out, out_kind, out_payload, err);
    memmove(r->buf, nl + 1, r->len - n - 1);
    r->len -= n + 1;
    return rc;
}

void gb_collective_reader_free(gb_collective_reader *r)
{
    if (!r) return;
    free(r->buf);
    r->buf = NULL;
    r->len = r->cap = 0;
}
