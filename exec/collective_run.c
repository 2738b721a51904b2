/* The parent's side of gb.collective (exec/collective_run.h): start the child,
 * send the request, give the set-up and every step a deadline, and name the step
 * that missed it. */
#include "exec/collective_run.h"

#include "base/clock.h"
#include "exec/child.h"
#include "exec/proto.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

extern char **environ;

typedef struct run {
    const gb_collective_request *req;
    gb_collective_opts opts;
    gb_child child;
    gb_collective_reader reader;
    gb_collective_result *out;
} run;

/* ---- the process --------------------------------------------------------- */

/* The parent's environment, with NCCL_NVLS_ENABLE=0 in it unless multicast was
 * asked for: NVLS reserves memory and, on hosts where the fabric manager cannot
 * set it up, makes communicator set-up fail or hang. */
static char **child_environment(bool nvls)
{
    size_t n = 0;
    while (environ[n])
        n++;
    char **env = calloc(n + 2, sizeof *env);
    if (!env) return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (nvls || strncmp(environ[i], "NCCL_NVLS_ENABLE=", 17) != 0) env[k++] = environ[i];
    if (!nvls) env[k++] = "NCCL_NVLS_ENABLE=0";
    return env;
}

/* NCCL writes its warnings to stdout: the child's goes to stderr, out of the
 * script's output. */
static int spawn(run *r, gb_err *err)
{
    char **env = child_environment(r->req->nvls);
    if (!env) return gb_err_set(err, GB_ENOMEM, "out of memory");
    gb_child_spec spec = {
        .exe = r->opts.exe, .arg = "--collective", .env = env, .stdout_to_stderr = true};
    int rc = gb_child_start(&r->child, &spec, err);
    free(env);
    return rc;
}

/* Ends the child and its process group, waiting up to wait_ms for the child to
 * leave by itself first (tearing down communicators takes a moment); returns its
 * wait status (0 when there was none to reap). */
static int end_child(run *r, int wait_ms)
{
    int status = 0;
    gb_child_end(&r->child, wait_ms, &status);
    return status;
}

static void reap(run *r)
{
    end_child(r, 5000);
}

/* ---- naming the step ----------------------------------------------------- */

/* The GPUs as the child resolved them, else as the request lists them. */
static void step_name(const run *r, int step, char *out, size_t n)
{
    bool resolved = r->out->n_gpus > 0;
    gb_collective_step_name(r->req, step, resolved ? r->out->gpus : r->req->gpus,
                            resolved ? r->out->n_gpus : r->req->n_gpus, out, n);
}

/* Turns a failed read into the error the caller sees; the child is ended. */
static int lost(run *r, int step, double timeout_s, int rc, gb_err *err)
{
    char name[640];
    step_name(r, step, name, sizeof name);
    const char *what = step < 0 ? ": setting up CUDA, NCCL's communicators and the buffers" : "";
    /* A child that closed its end is leaving: let it, to tell its exit status. */
    int status = end_child(r, rc == GB_ECLOSED ? 1000 : 0);
    if (rc == GB_ETIMEOUT)
        return gb_err_set(err, GB_ETIMEOUT, "%s%s did not finish within %g s: killed", name, what,
                          timeout_s);
    if (rc == GB_EINTR) return gb_err_set(err, GB_EINTR, "%s: interrupted", name);
    if (rc == GB_ECLOSED) {
        char how[128];
        gb_child_describe("the collective process", status, how, sizeof how);
        return gb_err_set(err, GB_EFAULT, "%s: %s%s", name, how,
                          WIFSIGNALED(status) ? "" : " without a word");
    }
    gb_err_prefix(err, "%s", name);
    return rc;
}

/* ---- the exchange -------------------------------------------------------- */

/* The child's "error" line: its code and message, which already names the step. */
static int child_error(run *r, const json_t *payload, gb_err *err)
{
    gb_proto_error e;
    int rc = gb_wire_decode(&gb_wire_proto_error, payload, &e, err);
    reap(r);
    if (rc) return gb_err_set(err, GB_EPROTO, "malformed error line from the collective process");
    return gb_err_set(err, e.code, "%s", e.message);
}

/* gb_collective_recv in slices of 100 ms, looking between them whether the child
 * is still there: something it started may hold its end of the socket open, and
 * then its death would look like silence until the deadline. */
static int recv_line(run *r, double deadline_ms, json_t **line, const char **kind,
                     const json_t **payload, gb_err *err)
{
    for (;;) {
        double slice = gb_now_ms() + 100;
        int rc = gb_collective_recv(&r->reader, slice < deadline_ms ? slice : deadline_ms, line,
                                    kind, payload, err);
        if (rc != GB_ETIMEOUT || gb_now_ms() >= deadline_ms) return rc;
        if (gb_child_exited(&r->child))
            return gb_err_set(err, GB_ECLOSED, "the collective process ended");
    }
}

/* Reads the next line, which must be `kind` or "error", into obj (type t). */
static int expect(run *r, int step, double timeout_s, const char *kind, const gb_wire_type *t,
                  void *obj, gb_err *err)
{
    json_t *line = NULL;
    const char *got = NULL;
    const json_t *payload = NULL;
    int rc = recv_line(r, gb_now_ms() + timeout_s * 1e3, &line, &got, &payload, err);
    if (rc == GB_OK && strcmp(got, "error") == 0)
        rc = child_error(r, payload, err);
    else if (rc == GB_OK && strcmp(got, kind) != 0)
        rc = lost(r, step, timeout_s,
                  gb_err_set(err, GB_EPROTO, "a \"%s\" line where \"%s\" was due", got, kind), err);
    else if (rc == GB_OK && t && gb_wire_decode(t, payload, obj, err) != GB_OK)
        rc = lost(r, step, timeout_s, GB_EPROTO, err);
    else if (rc)
        rc = lost(r, step, timeout_s, rc, err);
    json_decref(line);
    return rc;
}

static int collect(run *r, gb_err *err)
{
    gb_collective_ready ready;
    int rc =
        expect(r, -1, r->opts.setup_timeout_s, "ready", &gb_wire_collective_ready, &ready, err);
    if (rc) return rc;
    r->out->n_gpus = ready.n_gpus;
    memcpy(r->out->gpus, ready.gpus, sizeof ready.gpus);
    r->out->nccl_version = ready.nccl_version;
    int n_steps = r->req->n_dtypes * r->req->n_sizes;
    r->out->rows = calloc((size_t)n_steps, sizeof *r->out->rows);
    if (!r->out->rows) return gb_err_set(err, GB_ENOMEM, "out of memory");
    for (int i = 0; i < n_steps; i++) {
        rc = expect(r, i, r->opts.step_timeout_s, "row", &gb_wire_collective_row, &r->out->rows[i],
                    err);
        if (rc) return rc;
        r->out->n_rows++;
    }
    rc = expect(r, n_steps, r->opts.step_timeout_s, "done", NULL, NULL, err);
    if (rc == GB_OK) reap(r);
    return rc;
}

int gb_collective_run(const gb_collective_opts *opts, const gb_collective_request *req,
                      gb_collective_result *out, gb_err *err)
{
    memset(out, 0, sizeof *out);
    char exe[4096];
    run r = {.req = req,
             .opts = opts ? *opts : (gb_collective_opts){0},
             .child = GB_CHILD_NONE,
             .out = out};
    int rc = gb_collective_check(req, err);
    if (rc == GB_OK && !r.opts.exe && (rc = gb_child_self_exe(exe, sizeof exe, err)) == GB_OK)
        r.opts.exe = exe;
    if (!(r.opts.step_timeout_s > 0)) r.opts.step_timeout_s = 60;
    if (!(r.opts.setup_timeout_s > 0)) r.opts.setup_timeout_s = 120;
    if (rc == GB_OK) rc = spawn(&r, err);
    if (rc) return rc;
    r.reader.fd = r.child.fd;
    rc = gb_collective_send(r.child.fd, "request", &gb_wire_collective_request, req, err);
    if (rc) rc = lost(&r, -1, r.opts.setup_timeout_s, rc, err);
    if (rc == GB_OK) rc = collect(&r, err);
    end_child(&r, 0); /* a no-op once reaped */
    gb_collective_reader_free(&r.reader);
    return rc;
}
