/* The GPU's lease as a session holds it (session/session.h): taken for the tuner
 * through its claim (gb_gpu_claim, tuner/tune.h) before a shape is measured, or
 * for the ceilings, and released when the session ends. */
#include "session/session.h"

#include "base/clock.h"
#include "exec/lease.h"

#include <stdio.h>

void gb_session_lease_end(gb_session_lease *lease)
{
    if (!lease) return;
    gb_lease_release(lease->held);
    lease->held = NULL;
    for (int i = 0; i < lease->n_more; i++)
        gb_lease_release(lease->more[i]);
    lease->n_more = 0;
}

/* The executor of GPU i of the session (0: the first). */
static gb_exec *exec_of(const gb_session *s, int i)
{
    return i == 0 ? s->tuner.exec : s->tuner.execs[i];
}

/* With several GPUs, the others' leases, each waited for like the first. */
static int take_more(gb_session *s, const char *activity, gb_err *err)
{
    gb_session_lease *l = &s->lease;
    for (int i = l->n_more + 1; i < s->tuner.n_execs; i++) {
        gb_device_info dev;
        char name[320];
        int rc = gb_exec_device(exec_of(s, i), &dev, err);
        gb_lease_name(&dev, name, sizeof name);
        if (rc == GB_OK) rc = gb_lease_acquire_as(name, 0, activity, NULL, &l->more[i - 1], err);
        if (rc == GB_EBUSY && l->wait_s != 0)
            rc = gb_lease_acquire_as(name, l->wait_s, activity, s->tuner.log, &l->more[i - 1], err);
        if (rc) return rc;
        l->n_more = i;
    }
    return GB_OK;
}

/* The claim's take: the lease, or a new activity for the one held. A wait comes
 * only after this process's worker is ended, so the holder does not see it on the
 * GPU. A lease that cannot be taken at all (its folder is unusable) is warned
 * about once, not fatal. */
static int take(void *ctx, const char *activity, bool *out_waited, double *out_waited_s,
                gb_err *err)
{
    gb_session *s = ctx;
    gb_session_lease *l = &s->lease;
    *out_waited = false;
    *out_waited_s = 0;
    if (l->broken) return GB_OK;
    if (l->held) {
        gb_lease_set_activity(l->held, activity);
        return GB_OK;
    }
    gb_device_info dev;
    char name[320];
    gb_err e = {0};
    int rc = gb_exec_device(s->tuner.exec, &dev, &e);
    if (rc) return gb_err_copy(err, &e);
    gb_lease_name(&dev, name, sizeof name);
    rc = gb_lease_acquire_as(name, 0, activity, NULL, &l->held, &e);
    if (rc == GB_EBUSY && l->wait_s != 0) {
        gb_exec_stop_backend(s->tuner.exec);
        double start = gb_now_ms();
        rc = gb_lease_acquire_as(name, l->wait_s, activity, s->tuner.log, &l->held, &e);
        *out_waited_s = (gb_now_ms() - start) / 1e3;
        l->waited_s += *out_waited_s;
        *out_waited = true;
    }
    if (rc == GB_EIO || rc == GB_EINVAL) {
        l->broken = true;
        if (s->tuner.log) {
            fprintf(s->tuner.log, "gpubench: warning: measuring without the GPU's lease: %s\n",
                    e.msg);
            fflush(s->tuner.log);
        }
        return GB_OK;
    }
    if (rc == GB_OK) rc = take_more(s, activity, &e);
    return rc ? gb_err_copy(err, &e) : GB_OK;
}

static bool held(void *ctx)
{
    return ((gb_session *)ctx)->lease.held != NULL;
}

gb_gpu_claim gb_session_claim(gb_session *s)
{
    return (gb_gpu_claim){.take = take, .held = held, .ctx = s};
}
