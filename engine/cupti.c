/* CUPTI's loader and the per-sample kernel records (engine/cupti.h). */
#include "engine/cupti.h"

#include "engine/dlib.h"

#include <cupti_activity.h>
#include <cupti_callbacks.h>
#include <cupti_result.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The entry points used, declared by CUPTI's own headers (installed with the
 * toolkit on every machine that builds gpubench); the error string loads first. */
#define GB_CUPTI_REQUIRED(X)                                                                       \
    X(cuptiGetResultString)                                                                        \
    X(cuptiSubscribe)                                                                              \
    X(cuptiUnsubscribe)                                                                            \
    X(cuptiEnableDomain)                                                                           \
    X(cuptiActivityRegisterCallbacks)                                                              \
    X(cuptiActivityEnable)                                                                         \
    X(cuptiActivityDisable)                                                                        \
    X(cuptiActivityFlushAll)                                                                       \
    X(cuptiActivityGetNextRecord)

#define GB_CUPTI_DECLARE(name) __typeof__(name) *name;
static struct {
    GB_CUPTI_REQUIRED(GB_CUPTI_DECLARE)
} api;
#undef GB_CUPTI_DECLARE

/* Activity buffers CUPTI fills: a hot sample of 10,000 launches makes 10,000
 * records of about 250 bytes each, spread over a few of them. */
#define BUFFER_BYTES (1u << 20)
#define MAX_SPARE    8
/* The CUDA calls one sample makes: one launch, a graph launch, or a library
 * GEMM's few calls. More are ignored (and the sample then lacks records). */
#define MAX_IDS 64

static int resolve_all(void *lib, const char *path, gb_err *err)
{
#define GB_CUPTI_LOAD(name)                                                                        \
    if (!(*(void **)&api.name = dlsym(lib, #name)))                                                \
        return gb_err_set(err, GB_ENODRIVER,                                                       \
                          "CUPTI is unavailable: %s has no %s (install the CUPTI of CUDA 12.0 or " \
                          "newer)",                                                                \
                          path, #name);
    GB_CUPTI_REQUIRED(GB_CUPTI_LOAD)
#undef GB_CUPTI_LOAD
    return GB_OK;
}

/* The loader's path first, then where toolkits put it when that path lacks it. */
static const char *const SONAMES[] = {
    "libcupti.so.13",
    "libcupti.so.12",
    "/usr/local/cuda/lib64/libcupti.so.13",
    "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13",
    "libcupti.so",
};
#define N_SONAMES (sizeof SONAMES / sizeof *SONAMES)

static const gb_dlib_spec SPEC = {
    .env_var = "GPUBENCH_LIBCUPTI",
    .sonames = SONAMES,
    .n_sonames = N_SONAMES,
    .install = "the CUDA toolkit's CUPTI (cuda-cupti)",
    .package = "the CUDA toolkit's CUPTI (cuda-cupti)",
};

static gb_dlib library = GB_DLIB_INIT(&SPEC, resolve_all);

/* The one tracer of the process. The lock guards everything below it: the API
 * callback runs on the measuring thread, the buffer callbacks on CUPTI's. */
struct gb_cupti {
    pthread_mutex_t lock;
    int n_open;
    CUpti_SubscriberHandle subscriber;
    uint8_t *spare[MAX_SPARE]; /* buffers CUPTI handed back, to hand out again */
    int n_spare;
    /* The sample being taken: the ids of its CUDA calls, and what matched them. */
    uint32_t ids[MAX_IDS];
    int n_ids;
    int n_found;     /* kernel records of the sample with timestamps */
    int n_untimed;   /* ... without (start and end 0) */
    uint64_t sum_ns; /* their durations */
};

static gb_cupti tracer = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Set between gb_cupti_begin and gb_cupti_end on the thread taking the sample. */
static _Thread_local bool recording;

static int cupti_fail(gb_err *err, CUptiResult result, const char *call)
{
    const char *text = NULL;
    if (api.cuptiGetResultString) api.cuptiGetResultString(result, &text);
    return gb_err_set(err, GB_ENODRIVER, "CUPTI is unavailable: %s: %s", call,
                      text ? text : "unknown CUPTI error");
}

/* ---- the callbacks ------------------------------------------------------ */

static void CUPTIAPI on_api(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                            const void *data)
{
    (void)userdata, (void)cbid;
    if (!recording) return;
    if (domain != CUPTI_CB_DOMAIN_DRIVER_API && domain != CUPTI_CB_DOMAIN_RUNTIME_API) return;
    const CUpti_CallbackData *call = data;
    if (call->callbackSite != CUPTI_API_ENTER) return;
    pthread_mutex_lock(&tracer.lock);
    if (tracer.n_ids < MAX_IDS) tracer.ids[tracer.n_ids++] = call->correlationId;
    pthread_mutex_unlock(&tracer.lock);
}

static void CUPTIAPI on_buffer_wanted(uint8_t **buffer, size_t *size, size_t *max_records)
{
    pthread_mutex_lock(&tracer.lock);
    uint8_t *b = tracer.n_spare > 0 ? tracer.spare[--tracer.n_spare] : NULL;
    pthread_mutex_unlock(&tracer.lock);
    if (!b) b = aligned_alloc(8, BUFFER_BYTES);
    *buffer = b;
    *size = b ? BUFFER_BYTES : 0;
    *max_records = 0; /* as many as fit */
}

static bool is_ours(uint32_t id)
{
    for (int i = 0; i < tracer.n_ids; i++)
        if (tracer.ids[i] == id) return true;
    return false;
}

/* Kernel records keep their start, end and correlation id at the same offsets
 * in every version of the record CUPTI writes. */
static void match(const CUpti_ActivityKernel10 *k)
{
    if (!is_ours(k->correlationId)) return;
    if (k->start == 0 || k->end < k->start) {
        tracer.n_untimed++;
        return;
    }
    tracer.n_found++;
    tracer.sum_ns += k->end - k->start;
}

static void CUPTIAPI on_buffer_done(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                    size_t valid)
{
    (void)ctx, (void)stream, (void)size;
    CUpti_Activity *record = NULL;
    pthread_mutex_lock(&tracer.lock);
    while (buffer && valid > 0 &&
           api.cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS)
        if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
            record->kind == CUPTI_ACTIVITY_KIND_KERNEL)
            match((const CUpti_ActivityKernel10 *)record);
    bool keep = buffer && tracer.n_spare < MAX_SPARE;
    if (keep) tracer.spare[tracer.n_spare++] = buffer;
    pthread_mutex_unlock(&tracer.lock);
    if (!keep) free(buffer);
}

/* ---- open and close ------------------------------------------------------ */

static void stop(void)
{
    api.cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    api.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    if (tracer.subscriber) api.cuptiUnsubscribe(tracer.subscriber);
    tracer.subscriber = NULL;
}

static int start(gb_err *err)
{
    CUptiResult r = api.cuptiSubscribe(&tracer.subscriber, on_api, NULL);
    if (r != CUPTI_SUCCESS) {
        tracer.subscriber = NULL;
        return r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
                   ? gb_err_set(err, GB_ENODRIVER,
                                "CUPTI is unavailable: another tool (a profiler or debugger) "
                                "holds it")
                   : cupti_fail(err, r, "cuptiSubscribe");
    }
    const char *call = "cuptiEnableDomain";
    r = api.cuptiEnableDomain(1, tracer.subscriber, CUPTI_CB_DOMAIN_DRIVER_API);
    if (r == CUPTI_SUCCESS)
        r = api.cuptiEnableDomain(1, tracer.subscriber, CUPTI_CB_DOMAIN_RUNTIME_API);
    if (r == CUPTI_SUCCESS) {
        call = "cuptiActivityRegisterCallbacks";
        r = api.cuptiActivityRegisterCallbacks(on_buffer_wanted, on_buffer_done);
    }
    if (r == CUPTI_SUCCESS) {
        call = "cuptiActivityEnable";
        r = api.cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    }
    if (r == CUPTI_SUCCESS) return GB_OK;
    int rc = cupti_fail(err, r, call);
    stop();
    return rc;
}

int gb_cupti_open(gb_cupti **out, gb_err *err)
{
    *out = NULL;
    int rc = gb_dlib_load(&library, err);
    if (rc) {
        if (err && rc == GB_ENODRIVER) gb_err_prefix(err, "CUPTI is unavailable");
        return rc;
    }
    pthread_mutex_lock(&tracer.lock);
    bool first = tracer.n_open == 0;
    pthread_mutex_unlock(&tracer.lock);
    /* Outside the lock: CUPTI may call back into on_buffer_wanted. Opens and
     * closes come from the thread that owns the GPU session. */
    if (first && (rc = start(err))) return rc;
    pthread_mutex_lock(&tracer.lock);
    tracer.n_open++;
    pthread_mutex_unlock(&tracer.lock);
    *out = &tracer;
    return GB_OK;
}

void gb_cupti_close(gb_cupti *c)
{
    if (!c) return;
    pthread_mutex_lock(&c->lock);
    bool last = --c->n_open == 0;
    pthread_mutex_unlock(&c->lock);
    if (!last) return;
    stop();
    pthread_mutex_lock(&c->lock);
    while (c->n_spare > 0)
        free(c->spare[--c->n_spare]);
    pthread_mutex_unlock(&c->lock);
}

/* ---- samples ------------------------------------------------------------- */

void gb_cupti_begin(gb_cupti *c)
{
    pthread_mutex_lock(&c->lock);
    c->n_ids = c->n_found = c->n_untimed = 0;
    c->sum_ns = 0;
    pthread_mutex_unlock(&c->lock);
    recording = true;
}

void gb_cupti_end(gb_cupti *c)
{
    (void)c;
    recording = false;
}

/* How many of the sample's records have arrived, and their durations. */
static int found(gb_cupti *c, uint64_t *sum_ns, int *untimed)
{
    pthread_mutex_lock(&c->lock);
    int n = c->n_found;
    *sum_ns = c->sum_ns;
    *untimed = c->n_untimed;
    pthread_mutex_unlock(&c->lock);
    return n;
}

int gb_cupti_collect(gb_cupti *c, int launches, int *kernels_per_launch, double *out_ms,
                     gb_err *err)
{
    *out_ms = 0;
    if (launches < 1) launches = 1;
    int want = *kernels_per_launch > 0 ? *kernels_per_launch * launches : launches;
    uint64_t sum_ns;
    int untimed, n = found(c, &sum_ns, &untimed);
    /* Completed buffers first; a forced flush also hands over the one CUPTI is
     * still filling, in case the sample's records sit there. */
    static const uint32_t flushes[] = {0, CUPTI_ACTIVITY_FLAG_FLUSH_FORCED};
    bool learning = *kernels_per_launch <= 0; /* then every record must be in */
    for (size_t i = 0; (n < want || learning) && i < sizeof flushes / sizeof *flushes; i++) {
        CUptiResult r = api.cuptiActivityFlushAll(flushes[i]);
        if (r != CUPTI_SUCCESS) return cupti_fail(err, r, "cuptiActivityFlushAll");
        n = found(c, &sum_ns, &untimed);
    }
    bool whole = *kernels_per_launch > 0 ? n == want : n >= launches && n % launches == 0;
    if (untimed > 0 || !whole)
        return gb_err_set(err, GB_ENOTFOUND,
                          "CUPTI gave %d timed kernel record(s) and %d untimed for a sample of %d "
                          "launch(es)%s",
                          n, untimed, launches,
                          *kernels_per_launch > 0 ? ""
                                                  : " (each launch should make the same "
                                                    "number of kernels)");
    if (*kernels_per_launch <= 0) *kernels_per_launch = n / launches;
    *out_ms = (double)sum_ns / 1e6 / launches;
    return GB_OK;
}
