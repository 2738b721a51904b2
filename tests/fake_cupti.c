/*
 * A stand-in for libcupti.so, loaded through GPUBENCH_LIBCUPTI by
 * tests/test_cupti.c, so the way engine/cupti.c turns kernel records into samples
 * is pinned on machines without a GPU.
 *
 * The test plays the driver through the fake_cupti_* controls: a CUDA call
 * (fake_cupti_call) goes through the subscriber's API callback with a fresh
 * correlation id, and a kernel's record (fake_cupti_kernel) waits in a queue
 * until a flush hands it over in a buffer from the client's buffer callback. A
 * default flush hands over all but the records held back (fake_cupti_hold_back:
 * as if they sat in a buffer CUPTI is still filling); a forced flush hands over
 * everything. fake_cupti_refuse makes the next subscription fail.
 */
#include <cupti_activity.h>
#include <cupti_callbacks.h>
#include <cupti_driver_cbid.h>
#include <cupti_result.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define MAX_QUEUED 4096

static CUpti_CallbackFunc api_callback;
static void *api_userdata;
static bool subscribed;
static CUpti_BuffersCallbackRequestFunc buffer_wanted;
static CUpti_BuffersCallbackCompleteFunc buffer_done;
static uint32_t last_id;
static CUpti_ActivityKernel10 queued[MAX_QUEUED];
static int n_queued, n_held_back;
static CUptiResult refusal = CUPTI_SUCCESS;

/* ---- the test's controls -------------------------------------------------- */

uint32_t fake_cupti_call(void);
void fake_cupti_kernel(uint32_t correlation_id, uint64_t start_ns, uint64_t end_ns);
void fake_cupti_hold_back(int n);
void fake_cupti_refuse(CUptiResult result);
int fake_cupti_queued(void);

uint32_t fake_cupti_call(void)
{
    CUpti_CallbackData data = {.callbackSite = CUPTI_API_ENTER,
                               .functionName = "cuLaunchKernel",
                               .correlationId = ++last_id};
    if (!subscribed || !api_callback) return last_id;
    api_callback(api_userdata, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
                 &data);
    data.callbackSite = CUPTI_API_EXIT;
    api_callback(api_userdata, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
                 &data);
    return last_id;
}

void fake_cupti_kernel(uint32_t correlation_id, uint64_t start_ns, uint64_t end_ns)
{
    if (n_queued == MAX_QUEUED) return;
    CUpti_ActivityKernel10 *k = &queued[n_queued++];
    memset(k, 0, sizeof *k);
    k->kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k->correlationId = correlation_id;
    k->start = start_ns;
    k->end = end_ns;
}

void fake_cupti_hold_back(int n)
{
    n_held_back = n;
}

void fake_cupti_refuse(CUptiResult result)
{
    refusal = result;
}

int fake_cupti_queued(void)
{
    return n_queued;
}

/* ---- CUPTI's entry points ---------------------------------------------------- */

CUptiResult cuptiGetResultString(CUptiResult result, const char **str)
{
    *str = result == CUPTI_ERROR_NOT_INITIALIZED ? "CUPTI_ERROR_NOT_INITIALIZED"
                                                 : "CUPTI_ERROR_UNKNOWN (fake)";
    return CUPTI_SUCCESS;
}

CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback,
                           void *userdata)
{
    CUptiResult r = refusal;
    refusal = CUPTI_SUCCESS;
    if (r != CUPTI_SUCCESS) return r;
    if (subscribed) return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    subscribed = true;
    api_callback = callback;
    api_userdata = userdata;
    *subscriber = (CUpti_SubscriberHandle)&subscribed;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle subscriber)
{
    (void)subscriber;
    subscribed = false;
    api_callback = NULL;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle subscriber,
                              CUpti_CallbackDomain domain)
{
    (void)enable, (void)subscriber, (void)domain;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc wanted,
                                           CUpti_BuffersCallbackCompleteFunc done)
{
    buffer_wanted = wanted;
    buffer_done = done;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind)
{
    (void)kind;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind)
{
    (void)kind;
    return CUPTI_SUCCESS;
}

/* Hands the first n queued records over in one buffer, in the order queued. */
static void hand_over(int n)
{
    uint8_t *buffer = NULL;
    size_t size = 0, max_records = 0;
    buffer_wanted(&buffer, &size, &max_records);
    size_t fit = size / sizeof *queued;
    if ((size_t)n > fit) n = (int)fit;
    memcpy(buffer, queued, (size_t)n * sizeof *queued);
    memmove(queued, queued + n, (size_t)(n_queued - n) * sizeof *queued);
    n_queued -= n;
    buffer_done(NULL, 0, buffer, size, (size_t)n * sizeof *queued);
}

CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
    if (!buffer_wanted || !buffer_done) return CUPTI_ERROR_INVALID_OPERATION;
    int n = flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED ? n_queued : n_queued - n_held_back;
    if (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) n_held_back = 0;
    if (n > 0) hand_over(n);
    return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, CUpti_Activity **record)
{
    uint8_t *next = *record ? (uint8_t *)*record + sizeof *queued : buffer;
    if (next + sizeof *queued > buffer + valid) return CUPTI_ERROR_MAX_LIMIT_REACHED;
    *record = (CUpti_Activity *)next;
    return CUPTI_SUCCESS;
}
