/* The parent's side of gb.collective (engine/collective.h): start the child, send
 * the request, give the set-up and every step a deadline, and name the step that
 * missed it. */
#include "engine/collective.h"

#include "base/clock.h"
#include "engine/proto.h"
#include "engine/worker.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* The child's end of the socket is this descriptor in the child. */
#define CHILD_FD 3

typedef struct run {
    const gb_collective_request *req;
    gb_collective_opts opts;
    pid_t pid;
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

static void spawn_actions(posix_spawn_file_actions_t *fa, posix_spawnattr_t *attr, int child)
{
    posix_spawn_file_actions_init(fa);
    posix_spawn_file_actions_adddup2(fa, child, CHILD_FD);
    /* NCCL writes its warnings to stdout: keep them out of the script's output. */
    posix_spawn_file_actions_adddup2(fa, STDERR_FILENO, STDOUT_FILENO);
    posix_spawnattr_init(attr);
    /* Its own process group, so that one kill ends it and anything it started, and
     * a terminal's Ctrl-C reaches only the parent, which then ends the child. */
    posix_spawnattr_setpgroup(attr, 0);
    sigset_t none;
    sigemptyset(&none);
    posix_spawnattr_setsigmask(attr, &none);
    posix_spawnattr_setflags(attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
}

static int spawn(run *r, int *out_fd, gb_err *err)
{
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
        return gb_err_set(err, GB_EIO, "socketpair: %s", strerror(errno));
    /* Off CHILD_FD, so that dup2 really copies (and clears close-on-exec). */
    int child = fcntl(pair[1], F_DUPFD_CLOEXEC, CHILD_FD + 1);
    close(pair[1]);
    char **env = child_environment(r->req->nvls);
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    spawn_actions(&fa, &attr, child);
    char *argv[] = {(char *)r->opts.exe, "--collective", NULL};
    int rc = child < 0 ? errno
             : !env    ? ENOMEM
                       : posix_spawn(&r->pid, argv[0], &fa, &attr, argv, env);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    free(env);
    if (child >= 0) close(child);
    if (rc) {
        close(pair[0]);
        r->pid = 0;
        return gb_err_set(err, GB_EIO, "starting %s --collective: %s", r->opts.exe, strerror(rc));
    }
    *out_fd = pair[0];
    return GB_OK;
}

/* Ends the child and its process group, waiting up to wait_ms for the child to
 * leave by itself first (tearing down communicators takes a moment); returns its
 * wait status. The group is killed while the child is still a zombie, so that
 * its id cannot have been reused by then: nothing the child started outlives it. */
static int end_child(run *r, int wait_ms)
{
    siginfo_t info = {0};
    for (int waited = 0; r->pid > 0 && waited < wait_ms; waited += 10) {
        int got = waitid(P_PID, (id_t)r->pid, &info, WEXITED | WNOHANG | WNOWAIT);
        if (got == 0 && info.si_pid == r->pid) break;
        if (got < 0 && errno != EINTR) break;
        usleep(10000);
    }
    int status = 0;
    if (r->pid <= 0) return status;
    kill(-r->pid, SIGKILL);
    while (waitpid(r->pid, &status, 0) < 0 && errno == EINTR) {
    }
    r->pid = 0;
    return status;
}

static int kill_child(run *r)
{
    return end_child(r, 0);
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
    if (rc == GB_ECLOSED && WIFSIGNALED(status))
        return gb_err_set(err, GB_EFAULT, "%s: the collective process was killed by signal %d (%s)",
                          name, WTERMSIG(status), strsignal(WTERMSIG(status)));
    if (rc == GB_ECLOSED)
        return gb_err_set(err, GB_EFAULT,
                          "%s: the collective process exited with status %d without a word", name,
                          WEXITSTATUS(status));
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

static bool child_exited(const run *r)
{
    siginfo_t info = {0};
    return waitid(P_PID, (id_t)r->pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
           info.si_pid == r->pid;
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
        if (child_exited(r)) return gb_err_set(err, GB_ECLOSED, "the collective process ended");
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
    run r = {.req = req, .opts = opts ? *opts : (gb_collective_opts){0}, .out = out};
    int rc = gb_collective_check(req, err), fd = -1;
    if (rc == GB_OK && !r.opts.exe && (rc = gb_worker_self_exe(exe, sizeof exe, err)) == GB_OK)
        r.opts.exe = exe;
    if (!(r.opts.step_timeout_s > 0)) r.opts.step_timeout_s = 60;
    if (!(r.opts.setup_timeout_s > 0)) r.opts.setup_timeout_s = 120;
    if (rc == GB_OK) rc = spawn(&r, &fd, err);
    if (rc) return rc;
    r.reader.fd = fd;
    rc = gb_collective_send(fd, "request", &gb_wire_collective_request, req, err);
    if (rc) rc = lost(&r, -1, r.opts.setup_timeout_s, rc, err);
    if (rc == GB_OK) rc = collect(&r, err);
    kill_child(&r); /* a no-op once reaped */
    close(fd);
    gb_collective_reader_free(&r.reader);
    return rc;
}
