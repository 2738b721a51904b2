/* The worker's side: read a request, act on the in-process GPU backend, answer. */
#include "exec/worker.h"

#include "exec/proto.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

typedef struct worker {
    int fd;
    void *backend;
    const gb_backend_ops *ops;
    bool open;
    bool parent_gone; /* a reply could not be sent */
} worker;

/* Sends a reply. Handlers return the code of their work, not of the reply: a
 * failed reply only marks the parent as gone. */
static void reply(worker *w, gb_msg_type type, const void *payload)
{
    gb_err err;
    if (gb_proto_send(w->fd, type, payload, NULL, 0, &err)) w->parent_gone = true;
}

static int reply_error(worker *w, int code, const char *message)
{
    if (code == GB_OK) code = GB_EPROTO; /* an error reply never reads as success */
    gb_proto_error e = {.code = code};
    gb_strlcpy(e.message, message, sizeof e.message);
    reply(w, GB_MSG_ERROR, &e);
    return code;
}

/* Answers request m, whose work returned rc (with err set on failure): the answer
 * it is due (gb_proto_answer) with the payload, or ERROR. */
static int answer(worker *w, const gb_msg *m, int rc, const gb_err *err, const void *payload)
{
    if (rc) return reply_error(w, rc, err->msg);
    reply(w, gb_proto_answer(m->type), payload);
    return GB_OK;
}

static int on_open(worker *w, const gb_msg *m)
{
    gb_proto_open open;
    gb_device_info info;
    gb_err err = {0};
    int rc = gb_proto_decode(m, &open, &err);
    if (rc) return reply_error(w, rc, err.msg);
    if (!w->backend && !(w->backend = gb_local_backend_new(open.ordinal)))
        return reply_error(w, GB_ENOMEM, "out of memory");
    rc = w->ops->open(w->backend, &info, &err);
    if (rc == GB_OK) w->open = true;
    return answer(w, m, rc, &err, &info);
}

static int on_problem(worker *w, const gb_msg *m)
{
    gb_proto_problem problem;
    gb_err err = {0};
    int rc = gb_proto_decode(m, &problem, &err);
    if (rc == GB_OK)
        rc = w->ops->set_problem(w->backend, problem.args, problem.n_args, problem.seed, &err);
    return answer(w, m, rc, &err, NULL);
}

/* The launchable variant of a decoded payload; its cubin is (a part of) the blob,
 * or it is a library GEMM and has none. */
static gb_variant variant_of(const gb_proto_variant *v, const void *cubin, size_t cubin_bytes)
{
    return (gb_variant){
        .cubin = cubin_bytes ? cubin : NULL,
        .cubin_bytes = cubin_bytes,
        .lowered_name = v->name,
        .launch = v->launch,
        .kernel_name = v->kernel,
        .config_text = v->config,
        .gemm = v->has_gemm ? &v->gemm : NULL,
    };
}

/* A variant brings a cubin or a GEMM's description, never both. */
static int check_code(const gb_proto_variant *v, size_t cubin_bytes, const char *what, gb_err *err)
{
    if (v->has_gemm && cubin_bytes)
        return gb_err_set(err, GB_EPROTO, "malformed message: %s has a GEMM and a cubin", what);
    if (!v->has_gemm && !cubin_bytes)
        return gb_err_set(err, GB_EPROTO, "malformed message: %s needs a cubin", what);
    return GB_OK;
}

static int on_reference(worker *w, const gb_msg *m)
{
    gb_proto_variant ref;
    gb_err err = {0};
    int rc = gb_proto_decode(m, &ref, &err);
    if (rc == GB_OK) rc = check_code(&ref, m->blob_bytes, "a REFERENCE", &err);
    if (rc == GB_OK) {
        gb_variant v = variant_of(&ref, m->blob, m->blob_bytes);
        rc = w->ops->reference(w->backend, &v, &err);
    }
    gb_proto_free(GB_MSG_REFERENCE, &ref);
    return answer(w, m, rc, &err, NULL);
}

static int on_trial(worker *w, const gb_msg *m)
{
    gb_proto_trial trial;
    gb_trial_result result = {0};
    gb_err err = {0};
    int rc = gb_proto_decode(m, &trial, &err);
    if (rc == GB_OK) rc = check_code(&trial.variant, m->blob_bytes, "a TRIAL", &err);
    if (rc == GB_OK) {
        gb_variant v = variant_of(&trial.variant, m->blob, m->blob_bytes);
        rc = w->ops->trial(w->backend, &v, &trial.check, &trial.measure, 0, &result, &err);
    }
    gb_proto_free(GB_MSG_TRIAL, &trial);
    rc = answer(w, m, rc, &err, &result);
    gb_trial_result_free(&result);
    return rc;
}

/* The variants of a RACE: their cubins lie one after another in the blob. */
static int race_variants(const gb_msg *m, const gb_proto_race *race, gb_variant *out, gb_err *err)
{
    size_t offset = 0;
    for (int i = 0; i < race->n_variants; i++) {
        size_t bytes = (size_t)race->variants[i].cubin_bytes;
        if (bytes > m->blob_bytes - offset)
            return gb_err_set(err, GB_EPROTO,
                              "malformed message: race variant %d: its cubin "
                              "is past the end of the blob",
                              i + 1);
        int rc = check_code(&race->variants[i].variant, bytes, "a race variant", err);
        if (rc) return rc;
        out[i] = variant_of(&race->variants[i].variant, (const char *)m->blob + offset, bytes);
        offset += bytes;
    }
    return offset == m->blob_bytes ? GB_OK
                                   : gb_err_set(err, GB_EPROTO,
                                                "malformed message: race "
                                                "cubins do not add up to the blob");
}

static int on_race(worker *w, const gb_msg *m)
{
    gb_proto_race race;
    gb_proto_raced raced = {0};
    gb_variant vs[GB_MAX_RACE];
    gb_err err = {0};
    int rc = gb_proto_decode(m, &race, &err);
    if (rc == GB_OK) rc = race_variants(m, &race, vs, &err);
    if (rc == GB_OK)
        rc = w->ops->race(w->backend, vs, race.n_variants, &race.measure, 0, raced.measurements,
                          &err);
    raced.n_measurements = rc == GB_OK ? race.n_variants : 0;
    gb_proto_free(GB_MSG_RACE, &race);
    rc = answer(w, m, rc, &err, &raced);
    gb_proto_free(GB_MSG_RACED, &raced);
    return rc;
}

static int on_ceilings(worker *w, const gb_msg *m)
{
    gb_ceilings ceilings;
    gb_err err = {0};
    int rc = w->ops->ceilings(w->backend, &ceilings, &err);
    return answer(w, m, rc, &err, &ceilings);
}

static int on_rate(worker *w, const gb_msg *m)
{
    gb_proto_rate rate;
    gb_proto_rated rated = {0};
    gb_err err = {0};
    int rc = gb_proto_decode(m, &rate, &err);
    if (rc == GB_OK)
        rc =
            w->ops->cublas_rate(w->backend, rate.math, rate.m, rate.n, rate.k, &rated.tflops, &err);
    return answer(w, m, rc, &err, &rated);
}

typedef int (*handler)(worker *w, const gb_msg *m);

#define HANDLER(request, answer, name) [GB_MSG_##request] = on_##name,
static const handler HANDLERS[GB_MSG_TYPE_END] = {GB_PROTO_CALLS(HANDLER)};
#undef HANDLER

/* Handles one request and returns the code of its work. */
static int serve(worker *w, const gb_msg *m)
{
    if (m->type != GB_MSG_OPEN && !w->open)
        return reply_error(w, GB_EPROTO, "the GPU is not open: OPEN must come first");
    handler h = (unsigned)m->type < GB_MSG_TYPE_END ? HANDLERS[m->type] : NULL;
    return h ? h(w, m) : reply_error(w, GB_EPROTO, "unexpected message type");
}

int gb_worker_main(int fd)
{
    /* Die with the tuner: a worker must never outlive it and hold the GPU. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() == 1) return 1;
    worker w = {.fd = fd, .ops = &gb_local_backend_ops};
    int status = 0;
    while (!w.parent_gone) {
        gb_msg m;
        gb_err err = {0};
        int rc = gb_proto_recv(fd, -1, &m, &err);
        if (rc) {
            /* End of file is how a tuner that is done says so; anything else is
             * reported before leaving, since the stream can no longer be trusted. */
            if (rc != GB_ECLOSED) reply_error(&w, GB_EPROTO, err.msg);
            status = rc == GB_ECLOSED ? 0 : 2;
            break;
        }
        bool quit = m.type == GB_MSG_QUIT;
        rc = quit ? GB_OK : serve(&w, &m);
        gb_msg_free(&m);
        if (quit) break;
        if (rc == GB_EFAULT) { /* the context is gone for good: a fresh worker is needed */
            status = 3;
            break;
        }
    }
    if (w.backend) w.ops->destroy(w.backend);
    return status;
}
