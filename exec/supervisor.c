/* The supervisor's side: start the worker, send it requests, give every answer a
 * deadline, and name what went wrong when the worker does not answer. */
#include "exec/child.h"
#include "exec/proto.h"
#include "exec/worker.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct supervisor {
    gb_worker_opts opts;
    char *exe;
    gb_child child;
} supervisor;

/* ---- the process -------------------------------------------------------- */

static int spawn(supervisor *s, gb_err *err)
{
    gb_child_spec spec = {.exe = s->exe, .arg = "--worker"};
    int rc = gb_child_start(&s->child, &spec, err);
    if (rc) gb_err_prefix(err, "the GPU worker");
    return rc;
}

/* Describes how the worker ended, giving it a second to leave (it closed its end
 * but may linger); it is ended either way. */
static void describe_exit(supervisor *s, char *out, size_t n)
{
    int status;
    if (gb_child_end(&s->child, 1000, &status))
        gb_child_describe("the GPU worker", status, out, n);
    else
        snprintf(out, n, "the GPU worker is gone");
}

static void kill_worker(supervisor *s)
{
    gb_child_end(&s->child, 0, NULL);
}

/* Asks a worker to leave; kills it if it has not within a second. */
static void stop_worker(supervisor *s)
{
    gb_err ignored;
    if (s->child.fd >= 0) gb_proto_send(s->child.fd, GB_MSG_QUIT, NULL, NULL, 0, &ignored);
    gb_child_end(&s->child, 1000, NULL);
}

/* ---- requests ----------------------------------------------------------- */

/* Turns a failed exchange into the code the executor acts on: the worker is lost
 * (GB_EFAULT for a death or garbage, GB_ETIMEOUT for silence) or the tuner was
 * interrupted (GB_EINTR); in each case the worker is ended. */
static int lost(supervisor *s, int rc, double timeout_s, gb_err *err)
{
    char why[256];
    if (rc == GB_ECLOSED) {
        describe_exit(s, why, sizeof why); /* it is ended there */
        return gb_err_set(err, GB_EFAULT, "%s", why);
    }
    kill_worker(s);
    if (rc == GB_ETIMEOUT)
        return gb_err_set(err, GB_ETIMEOUT,
                          "no answer within %.1f s: the GPU worker was killed (watchdog)",
                          timeout_s);
    if (rc == GB_EINTR) return gb_err_set(err, GB_EINTR, "interrupted");
    gb_err_prefix(err, "the GPU worker was killed after a bad exchange");
    return err ? (err->code = GB_EFAULT) : GB_EFAULT;
}

/* Sends a request and waits for its answer, which must be the one it is due
 * (gb_proto_answer) or ERROR. An ERROR's code comes back as the result. */
static int exchange(supervisor *s, gb_msg_type type, const void *payload, const void *blob,
                    size_t blob_bytes, double timeout_s, gb_msg *reply, gb_err *err)
{
    memset(reply, 0, sizeof *reply);
    int rc = gb_proto_send(s->child.fd, type, payload, blob, blob_bytes, err);
    double deadline = timeout_s > 0 ? gb_now_ms() + timeout_s * 1e3 : -1;
    if (rc == GB_OK) rc = gb_proto_recv(s->child.fd, deadline, reply, err);
    if (rc == GB_ENOMEM) { /* the stream is mid-message: this worker cannot go on */
        kill_worker(s);
        return rc;
    }
    if (rc) return lost(s, rc, timeout_s, err);
    if (reply->type == GB_MSG_ERROR) {
        gb_proto_error e;
        rc = gb_proto_decode(reply, &e, err);
        if (rc == GB_OK) rc = gb_err_set(err, e.code, "%s", e.message);
        if (rc == GB_EFAULT || rc == GB_EPROTO) stop_worker(s); /* it is ending anyway */
    } else if (reply->type != gb_proto_answer(type)) {
        rc = gb_err_set(err, GB_EPROTO, "malformed message: a %s answer to a %s request",
                        gb_msg_type_name(reply->type), gb_msg_type_name(type));
        rc = lost(s, rc, timeout_s, err);
    }
    if (rc) gb_msg_free(reply);
    return rc;
}

/* Reads an answer's payload; one that does not read means the worker is lost. */
static int read_answer(supervisor *s, const gb_msg *reply, void *out, double timeout_s, gb_err *err)
{
    int rc = gb_proto_decode(reply, out, err);
    return rc ? lost(s, rc, timeout_s, err) : GB_OK;
}

static int worker_open(void *self, gb_device_info *out, gb_err *err)
{
    supervisor *s = self;
    int rc = spawn(s, err);
    if (rc) return rc;
    gb_proto_open open = {.ordinal = s->opts.ordinal};
    gb_msg reply;
    rc = exchange(s, GB_MSG_OPEN, &open, NULL, 0, s->opts.start_timeout_s, &reply, err);
    if (rc == GB_OK) rc = gb_proto_decode(&reply, out, err);
    gb_msg_free(&reply);
    if (rc) stop_worker(s);
    return rc;
}

static int worker_set_problem(void *self, const gb_arg *args, int n_args, uint64_t seed,
                              gb_err *err)
{
    supervisor *s = self;
    gb_proto_problem problem = {.seed = seed, .n_args = n_args};
    gb_msg reply;
    if (n_args < 0 || n_args > GB_MAX_ARGS)
        return gb_err_set(err, GB_EINVAL, "%d arguments: at most %d", n_args, GB_MAX_ARGS);
    memcpy(problem.args, args, (size_t)n_args * sizeof *args);
    int rc = exchange(s, GB_MSG_PROBLEM, &problem, NULL, 0, s->opts.op_timeout_s, &reply, err);
    gb_msg_free(&reply);
    return rc;
}

/* The payload form of a variant; the names are borrowed, not copied. */
static gb_proto_variant payload_of(const gb_variant *v)
{
    gb_proto_variant p = {.name = (char *)v->lowered_name,
                          .launch = v->launch,
                          .kernel = (char *)v->kernel_name,
                          .config = (char *)v->config_text,
                          .has_gemm = v->gemm != NULL};
    if (v->gemm) p.gemm = *v->gemm;
    return p;
}

static int worker_reference(void *self, const gb_variant *ref, gb_err *err)
{
    supervisor *s = self;
    gb_proto_variant payload = payload_of(ref);
    gb_msg reply;
    int rc = exchange(s, GB_MSG_REFERENCE, &payload, ref->cubin, ref->cubin_bytes,
                      s->opts.op_timeout_s, &reply, err);
    gb_msg_free(&reply);
    return rc;
}

static int worker_trial(void *self, const gb_variant *v, const gb_check_spec *check,
                        const gb_measure_opts *opts, double timeout_s, gb_trial_result *out,
                        gb_err *err)
{
    supervisor *s = self;
    gb_proto_trial trial = {.variant = payload_of(v), .check = *check, .measure = *opts};
    gb_msg reply;
    int rc = exchange(s, GB_MSG_TRIAL, &trial, v->cubin, v->cubin_bytes, timeout_s, &reply, err);
    if (rc == GB_OK) rc = read_answer(s, &reply, out, timeout_s, err);
    gb_msg_free(&reply);
    return rc;
}

/* The variants' cubins go one after another in the blob. */
static int race_blob(const gb_variant *vs, int n, void **out, size_t *out_bytes)
{
    size_t total = 0;
    for (int i = 0; i < n; i++)
        total += vs[i].cubin_bytes;
    char *blob = malloc(total ? total : 1);
    if (!blob) return GB_ENOMEM;
    for (size_t i = 0, at = 0; i < (size_t)n; at += vs[i].cubin_bytes, i++)
        memcpy(blob + at, vs[i].cubin, vs[i].cubin_bytes);
    *out = blob;
    *out_bytes = total;
    return GB_OK;
}

/* The RACED answer must measure every variant raced. */
static int read_raced(supervisor *s, const gb_msg *reply, int n, gb_measurement *out,
                      double timeout_s, gb_err *err)
{
    gb_proto_raced raced;
    int rc = gb_proto_decode(reply, &raced, err);
    if (rc == GB_OK && raced.n_measurements != n) {
        rc = gb_err_set(err, GB_EPROTO, "malformed message: %d measurements for a race of %d",
                        raced.n_measurements, n);
        gb_proto_free(GB_MSG_RACED, &raced);
    }
    if (rc) return lost(s, rc, timeout_s, err);
    memcpy(out, raced.measurements, (size_t)n * sizeof *out); /* the arrays move to out */
    return GB_OK;
}

static int worker_race(void *self, const gb_variant *vs, int n, const gb_measure_opts *opts,
                       double timeout_s, gb_measurement *out, gb_err *err)
{
    supervisor *s = self;
    memset(out, 0, (size_t)n * sizeof *out);
    if (n < 1 || n > GB_MAX_RACE)
        return gb_err_set(err, GB_EINVAL, "a race of %d variants: 1 to %d", n, GB_MAX_RACE);
    gb_proto_race race = {.n_variants = n, .measure = *opts};
    for (int i = 0; i < n; i++)
        race.variants[i] = (gb_proto_race_variant){.variant = payload_of(&vs[i]),
                                                   .cubin_bytes = (int64_t)vs[i].cubin_bytes};
    void *blob = NULL;
    size_t blob_bytes = 0;
    if (race_blob(vs, n, &blob, &blob_bytes)) return gb_err_set(err, GB_ENOMEM, "out of memory");
    gb_msg reply;
    int rc = exchange(s, GB_MSG_RACE, &race, blob, blob_bytes, timeout_s, &reply, err);
    free(blob);
    if (rc == GB_OK) rc = read_raced(s, &reply, n, out, timeout_s, err);
    gb_msg_free(&reply);
    return rc;
}

static int worker_cublas_rate(void *self, gb_math math, int64_t m, int64_t n, int64_t k,
                              double *out_tflops, gb_err *err)
{
    supervisor *s = self;
    gb_proto_rate rate = {.math = math, .m = m, .n = n, .k = k};
    gb_proto_rated rated = {0};
    gb_msg reply;
    int rc = exchange(s, GB_MSG_RATE, &rate, NULL, 0, s->opts.op_timeout_s, &reply, err);
    if (rc == GB_OK) rc = read_answer(s, &reply, &rated, s->opts.op_timeout_s, err);
    gb_msg_free(&reply);
    *out_tflops = rc == GB_OK ? rated.tflops : 0;
    return rc;
}

static void worker_close(void *self)
{
    stop_worker(self);
}

static void worker_destroy(void *self)
{
    supervisor *s = self;
    stop_worker(s);
    free(s->exe);
    free(s);
}

/* The ceilings take a few seconds: the bound of setting up a problem. */
static int worker_ceilings(void *self, gb_ceilings *out, gb_err *err)
{
    supervisor *s = self;
    gb_msg reply;
    int rc = exchange(s, GB_MSG_MEASURE_CEILINGS, NULL, NULL, 0, s->opts.op_timeout_s, &reply, err);
    if (rc == GB_OK) rc = gb_proto_decode(&reply, out, err);
    gb_msg_free(&reply);
    return rc;
}

static const gb_backend_ops worker_ops = {
    .open = worker_open,
    .set_problem = worker_set_problem,
    .reference = worker_reference,
    .trial = worker_trial,
    .race = worker_race,
    .ceilings = worker_ceilings,
    .cublas_rate = worker_cublas_rate,
    .close = worker_close,
    .destroy = worker_destroy,
};

int gb_exec_worker(const gb_worker_opts *opts, gb_exec **out, gb_err *err)
{
    supervisor *s = calloc(1, sizeof *s);
    if (!s || !(s->exe = strdup(opts->exe))) {
        free(s);
        return gb_err_set(err, GB_ENOMEM, "out of memory");
    }
    s->opts = *opts;
    s->opts.exe = s->exe;
    if (s->opts.start_timeout_s <= 0) s->opts.start_timeout_s = 120;
    if (s->opts.op_timeout_s <= 0) s->opts.op_timeout_s = 600;
    s->child = GB_CHILD_NONE;
    return gb_exec_create(&worker_ops, s, out, err);
}
