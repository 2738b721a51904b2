/* The worker's side: read a request, act on the in-process GPU backend, answer. */
#include "engine/worker.h"

#include "engine/proto.h"

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

/* Sends a reply and frees its text. Handlers return the code of their work, not
 * of the reply: a failed reply only marks the parent as gone. */
static void reply_json(worker *w, gb_msg_type type, gb_strbuf *json)
{
    gb_err err;
    if (gb_sb_status(json) || gb_proto_send(w->fd, type, gb_sb_str(json), NULL, 0, &err))
        w->parent_gone = true;
    gb_sb_free(json);
}

static int reply_error(worker *w, int code, const char *message)
{
    if (code == GB_OK) code = GB_EPROTO; /* an error reply never reads as success */
    gb_strbuf json = GB_STRBUF_INIT;
    gb_jw jw;
    gb_jw_init(&jw, &json, false);
    gb_jw_obj_begin(&jw);
    gb_jw_key(&jw, "code");
    gb_jw_int(&jw, code);
    gb_jw_key(&jw, "message");
    gb_jw_str(&jw, message);
    gb_jw_obj_end(&jw);
    reply_json(w, GB_MSG_ERROR, &json);
    return code;
}

static int reply_ok(worker *w)
{
    gb_strbuf json = GB_STRBUF_INIT;
    gb_sb_puts(&json, "{}");
    reply_json(w, GB_MSG_OK, &json);
    return GB_OK;
}

/* Answers a request whose work returned rc (with err set on failure). */
static int answer(worker *w, int rc, const gb_err *err)
{
    return rc == GB_OK ? reply_ok(w) : reply_error(w, rc, err->msg);
}

static int on_open(worker *w, const gb_msg *m)
{
    gb_device_info info;
    gb_err err = {0};
    double ordinal = gb_json_num(gb_json_get(m->json, "ordinal"), -1);
    if (ordinal < 0) return reply_error(w, GB_EPROTO, "malformed message: OPEN needs an ordinal");
    if (!w->backend && !(w->backend = gb_local_backend_new((int)ordinal)))
        return reply_error(w, GB_ENOMEM, "out of memory");
    int rc = w->ops->open(w->backend, &info, &err);
    if (rc) return reply_error(w, rc, err.msg);
    w->open = true;
    gb_strbuf json = GB_STRBUF_INIT;
    gb_jw jw;
    gb_jw_init(&jw, &json, false);
    gb_proto_write_device(&jw, &info);
    reply_json(w, GB_MSG_DEVICE, &json);
    return GB_OK;
}

static int on_problem(worker *w, const gb_msg *m)
{
    gb_arg args[GB_MAX_ARGS];
    int n = 0;
    uint64_t seed = 0;
    gb_err err = {0};
    int rc = gb_proto_read_args(gb_json_get(m->json, "args"), args, &n, &err);
    if (rc == GB_OK && gb_proto_read_u64(gb_json_get(m->json, "seed"), &seed))
        rc = gb_err_set(&err, GB_EPROTO, "malformed message: PROBLEM needs a seed");
    if (rc == GB_OK) rc = w->ops->set_problem(w->backend, args, n, seed, &err);
    return answer(w, rc, &err);
}

/* The variant of a REFERENCE or TRIAL message; the cubin is the blob. */
static int read_variant(const gb_msg *m, gb_variant *v, gb_err *err)
{
    const char *name = gb_json_str(gb_json_get(m->json, "name"), NULL);
    if (!name || !m->blob_bytes)
        return gb_err_set(err, GB_EPROTO, "malformed message: a variant needs a name and a cubin");
    *v = (gb_variant){.cubin = m->blob, .cubin_bytes = m->blob_bytes, .lowered_name = name};
    return gb_proto_read_launch(gb_json_get(m->json, "launch"), &v->launch, err);
}

static int on_reference(worker *w, const gb_msg *m)
{
    gb_variant v;
    gb_err err = {0};
    int rc = read_variant(m, &v, &err);
    if (rc == GB_OK) rc = w->ops->reference(w->backend, &v, &err);
    return answer(w, rc, &err);
}

static int on_trial(worker *w, const gb_msg *m)
{
    gb_variant v;
    gb_check_spec check;
    gb_measure_opts opts;
    gb_trial_result result = {0};
    gb_err err = {0};
    int rc = read_variant(m, &v, &err);
    if (rc == GB_OK) rc = gb_proto_read_check(gb_json_get(m->json, "check"), &check, &err);
    if (rc == GB_OK) rc = gb_proto_read_measure(gb_json_get(m->json, "measure"), &opts, &err);
    if (rc == GB_OK) rc = w->ops->trial(w->backend, &v, &check, &opts, 0, &result, &err);
    if (rc) return reply_error(w, rc, err.msg);
    gb_strbuf json = GB_STRBUF_INIT;
    gb_jw jw;
    gb_jw_init(&jw, &json, false);
    gb_proto_write_result(&jw, &result);
    gb_trial_result_free(&result);
    reply_json(w, GB_MSG_RESULT, &json);
    return GB_OK;
}

/* The variants of a RACE message: cubins one after another in the blob. */
static int read_race(const gb_msg *m, gb_variant *vs, int n, gb_err *err)
{
    const gb_json *list = gb_json_get(m->json, "variants");
    size_t offset = 0;
    for (int i = 0; i < n; i++) {
        const gb_json *v = gb_json_at(list, (size_t)i);
        const char *name = gb_json_str(gb_json_get(v, "name"), NULL);
        double bytes = gb_json_num(gb_json_get(v, "bytes"), -1);
        if (!name || bytes < 1 || bytes > (double)(m->blob_bytes - offset))
            return gb_err_set(err, GB_EPROTO, "malformed message: race variant %d", i + 1);
        vs[i] = (gb_variant){.cubin = (const char *)m->blob + offset,
                             .cubin_bytes = (size_t)bytes,
                             .lowered_name = name};
        offset += (size_t)bytes;
        int rc = gb_proto_read_launch(gb_json_get(v, "launch"), &vs[i].launch, err);
        if (rc) return rc;
    }
    return offset == m->blob_bytes ? GB_OK
                                   : gb_err_set(err, GB_EPROTO,
                                                "malformed message: "
                                                "race cubins do not add up");
}

static int reply_race(worker *w, const gb_measurement *ms, int n)
{
    gb_strbuf json = GB_STRBUF_INIT;
    gb_jw jw;
    gb_jw_init(&jw, &json, false);
    gb_jw_obj_begin(&jw);
    gb_jw_key(&jw, "measurements");
    gb_jw_arr_begin(&jw);
    for (int i = 0; i < n; i++)
        gb_proto_write_measurement(&jw, &ms[i]);
    gb_jw_arr_end(&jw);
    gb_jw_obj_end(&jw);
    reply_json(w, GB_MSG_RACED, &json);
    return GB_OK;
}

static int on_race(worker *w, const gb_msg *m)
{
    int n = (int)gb_json_len(gb_json_get(m->json, "variants"));
    gb_variant vs[GB_MAX_RACE];
    gb_measurement ms[GB_MAX_RACE];
    gb_measure_opts opts;
    gb_err err = {0};
    if (n < 1 || n > GB_MAX_RACE)
        return reply_error(w, GB_EPROTO, "malformed message: a race of 1 to 16 variants");
    int rc = read_race(m, vs, n, &err);
    if (rc == GB_OK) rc = gb_proto_read_measure(gb_json_get(m->json, "measure"), &opts, &err);
    if (rc == GB_OK) rc = w->ops->race(w->backend, vs, n, &opts, 0, ms, &err);
    if (rc) return reply_error(w, rc, err.msg);
    reply_race(w, ms, n);
    for (int i = 0; i < n; i++)
        gb_measurement_free(&ms[i]);
    return GB_OK;
}

/* Handles one request and returns the code of its work. */
static int serve(worker *w, const gb_msg *m)
{
    if (m->type != GB_MSG_OPEN && !w->open)
        return reply_error(w, GB_EPROTO, "the GPU is not open: OPEN must come first");
    switch (m->type) {
    case GB_MSG_OPEN:
        return on_open(w, m);
    case GB_MSG_PROBLEM:
        return on_problem(w, m);
    case GB_MSG_REFERENCE:
        return on_reference(w, m);
    case GB_MSG_TRIAL:
        return on_trial(w, m);
    case GB_MSG_RACE:
        return on_race(w, m);
    default:
        return reply_error(w, GB_EPROTO, "unexpected message type");
    }
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
