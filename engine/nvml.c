#include "engine/nvml.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The few NVML declarations used here, as the NVML API reference gives them:
 * nvml.h is not installed on the machines that build gpubench. nvmlReturn_t and
 * nvmlClockType_t are enums there, passed as int. */
typedef int nvmlReturn_t;
typedef int nvmlClockType_t;
typedef struct nvmlDevice_st *nvmlDevice_t;

enum {
    NVML_SUCCESS = 0,
    NVML_ERROR_INVALID_ARGUMENT = 2,
    NVML_ERROR_NOT_FOUND = 6,
    NVML_ERROR_INSUFFICIENT_SIZE = 7,
};

/* nvmlProcessInfo_v2_t, which both the _v2 and the _v3 process queries fill. */
typedef struct nvmlProcessInfo {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
} nvmlProcessInfo;

enum { NVML_CLOCK_SM = 1 };

/* Entry points gb_nvml cannot work without; the error string loads first. */
#define GB_NVML_REQUIRED(X)                                                                        \
    X(nvmlErrorString, const char *, (nvmlReturn_t result))                                        \
    X(nvmlInit_v2, nvmlReturn_t, (void))                                                           \
    X(nvmlShutdown, nvmlReturn_t, (void))                                                          \
    X(nvmlDeviceGetHandleByPciBusId_v2, nvmlReturn_t, (const char *bus_id, nvmlDevice_t *device))  \
    X(nvmlDeviceGetClockInfo, nvmlReturn_t,                                                        \
      (nvmlDevice_t device, nvmlClockType_t type, unsigned int *clock_mhz))                        \
    X(nvmlDeviceGetMaxClockInfo, nvmlReturn_t,                                                     \
      (nvmlDevice_t device, nvmlClockType_t type, unsigned int *clock_mhz))

/* The reasons query under its current name and under the older one it replaced
 * (one of them must be there); the process list, newest version first (neither
 * need be there: without it no measurement is found contended). */
#define GB_NVML_OPTIONAL(X)                                                                        \
    X(nvmlDeviceGetCurrentClocksEventReasons, nvmlReturn_t,                                        \
      (nvmlDevice_t device, unsigned long long *reasons))                                          \
    X(nvmlDeviceGetCurrentClocksThrottleReasons, nvmlReturn_t,                                     \
      (nvmlDevice_t device, unsigned long long *reasons))                                          \
    X(nvmlDeviceGetComputeRunningProcesses_v3, nvmlReturn_t,                                       \
      (nvmlDevice_t device, unsigned int *count, nvmlProcessInfo *infos))                          \
    X(nvmlDeviceGetComputeRunningProcesses_v2, nvmlReturn_t,                                       \
      (nvmlDevice_t device, unsigned int *count, nvmlProcessInfo *infos))

#define GB_NVML_DECLARE(name, ret, params) ret(*name) params;
typedef struct gb_nvml_api {
    GB_NVML_REQUIRED(GB_NVML_DECLARE)
    GB_NVML_OPTIONAL(GB_NVML_DECLARE)
} gb_nvml_api;
#undef GB_NVML_DECLARE

typedef nvmlReturn_t (*reasons_fn)(nvmlDevice_t, unsigned long long *);
typedef nvmlReturn_t (*processes_fn)(nvmlDevice_t, unsigned int *, nvmlProcessInfo *);

struct gb_nvml_device {
    nvmlDevice_t handle;
    bool retained; /* counted in n_open: NVML stays initialized for it */
};

static gb_nvml_api nvml;
static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static gb_err load_err;
static bool loaded;
static char lib_path[1024];
static reasons_fn get_reasons;
static const char *get_reasons_call;
static processes_fn get_processes;
static const char *get_processes_call;

/* NVML is initialized while n_open > 0; the lock orders init and shutdown. */
static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;
static int n_open;

static const char *error_text(nvmlReturn_t result)
{
    const char *text = nvml.nvmlErrorString ? nvml.nvmlErrorString(result) : NULL;
    return text ? text : "unknown NVML error";
}

static int nvml_fail(gb_err *err, nvmlReturn_t result, const char *call)
{
    return gb_err_set(err, GB_ECUDA, "%s: %s", call, error_text(result));
}

static int resolve(void *lib, const char *name, void **slot, bool required)
{
    *slot = dlsym(lib, name);
    if (*slot || !required) return GB_OK;
    return gb_err_set(&load_err, GB_ENODRIVER,
                      "NVML is unavailable: %s has no %s (not NVML, or from a very old driver)",
                      lib_path, name);
}

static int resolve_all(void *lib)
{
    int rc = GB_OK;
#define GB_NVML_LOAD_REQUIRED(name, ret, params)                                                   \
    if (rc == GB_OK) rc = resolve(lib, #name, (void **)&nvml.name, true);
#define GB_NVML_LOAD_OPTIONAL(name, ret, params)                                                   \
    if (rc == GB_OK) rc = resolve(lib, #name, (void **)&nvml.name, false);
    GB_NVML_REQUIRED(GB_NVML_LOAD_REQUIRED)
    GB_NVML_OPTIONAL(GB_NVML_LOAD_OPTIONAL)
#undef GB_NVML_LOAD_REQUIRED
#undef GB_NVML_LOAD_OPTIONAL
    return rc;
}

static int pick_reasons_query(void)
{
    if (nvml.nvmlDeviceGetCurrentClocksEventReasons) {
        get_reasons = nvml.nvmlDeviceGetCurrentClocksEventReasons;
        get_reasons_call = "nvmlDeviceGetCurrentClocksEventReasons";
    } else if (nvml.nvmlDeviceGetCurrentClocksThrottleReasons) {
        get_reasons = nvml.nvmlDeviceGetCurrentClocksThrottleReasons;
        get_reasons_call = "nvmlDeviceGetCurrentClocksThrottleReasons";
    } else {
        return gb_err_set(&load_err, GB_ENODRIVER,
                          "NVML is unavailable: %s has neither "
                          "nvmlDeviceGetCurrentClocksEventReasons nor "
                          "nvmlDeviceGetCurrentClocksThrottleReasons",
                          lib_path);
    }
    if (nvml.nvmlDeviceGetComputeRunningProcesses_v3) {
        get_processes = nvml.nvmlDeviceGetComputeRunningProcesses_v3;
        get_processes_call = "nvmlDeviceGetComputeRunningProcesses_v3";
    } else if (nvml.nvmlDeviceGetComputeRunningProcesses_v2) {
        get_processes = nvml.nvmlDeviceGetComputeRunningProcesses_v2;
        get_processes_call = "nvmlDeviceGetComputeRunningProcesses_v2";
    }
    return GB_OK;
}

static void load(void)
{
    /* GPUBENCH_LIBNVML names the library when it is not on the loader's path. */
    const char *path = getenv("GPUBENCH_LIBNVML");
    snprintf(lib_path, sizeof lib_path, "%s", path && *path ? path : "libnvidia-ml.so.1");
    void *lib = dlopen(lib_path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        gb_err_set(&load_err, GB_ENODRIVER, "NVML is unavailable: %s could not be loaded (%s)",
                   lib_path, dlerror());
        return;
    }
    if (resolve_all(lib) != GB_OK || pick_reasons_query() != GB_OK) {
        memset(&nvml, 0, sizeof nvml);
        dlclose(lib);
        return;
    }
    loaded = true;
}

/* Counts one more open device, initializing NVML for the first. */
static int retain(gb_err *err)
{
    int rc = GB_OK;
    pthread_mutex_lock(&open_lock);
    if (n_open == 0) {
        nvmlReturn_t result = nvml.nvmlInit_v2();
        if (result != NVML_SUCCESS)
            rc = gb_err_set(err, GB_ENODRIVER,
                            "NVML is unavailable: %s is there but nvmlInit_v2 failed (%s)",
                            lib_path, error_text(result));
    }
    if (rc == GB_OK) n_open++;
    pthread_mutex_unlock(&open_lock);
    return rc;
}

static void release(void)
{
    pthread_mutex_lock(&open_lock);
    if (--n_open == 0) nvml.nvmlShutdown();
    pthread_mutex_unlock(&open_lock);
}

/* NVML answers Not Found for a well-formed id with no GPU, and Invalid Argument for
 * some ids it will not look up at all (0000:FF:1F.7 on an R580 driver): either way,
 * there is no GPU of NVML's at that id. */
static int lookup_fail(gb_err *err, nvmlReturn_t result, const char *pci_bus_id)
{
    const char *call = "nvmlDeviceGetHandleByPciBusId_v2";
    if (result == NVML_ERROR_NOT_FOUND || result == NVML_ERROR_INVALID_ARGUMENT)
        return gb_err_set(err, GB_ENOTFOUND, "NVML has no GPU at PCI bus id %s (%s: %s)",
                          pci_bus_id, call, error_text(result));
    return gb_err_set(err, GB_ECUDA, "%s(%s): %s", call, pci_bus_id, error_text(result));
}

int gb_nvml_open(const char *pci_bus_id, gb_nvml_device **out, gb_err *err)
{
    *out = NULL;
    if (!pci_bus_id || !*pci_bus_id)
        return gb_err_set(err, GB_EINVAL, "gb_nvml_open: no PCI bus id given");
    pthread_once(&load_once, load);
    if (!loaded) return gb_err_copy(err, &load_err);

    int rc = GB_OK;
    gb_nvml_device *dev = calloc(1, sizeof *dev);
    if (!dev) return gb_err_set(err, GB_ENOMEM, "gb_nvml_open: out of memory");
    rc = retain(err);
    if (rc != GB_OK) goto cleanup;
    dev->retained = true;
    nvmlReturn_t result = nvml.nvmlDeviceGetHandleByPciBusId_v2(pci_bus_id, &dev->handle);
    if (result != NVML_SUCCESS) {
        rc = lookup_fail(err, result, pci_bus_id);
        goto cleanup;
    }
    *out = dev;
    dev = NULL;
cleanup:
    gb_nvml_close(dev);
    return rc;
}

void gb_nvml_close(gb_nvml_device *dev)
{
    if (!dev) return;
    if (dev->retained) release();
    free(dev);
}

int gb_nvml_sm_clock(gb_nvml_device *dev, double *out_mhz, gb_err *err)
{
    unsigned int mhz = 0;
    *out_mhz = 0;
    nvmlReturn_t result = nvml.nvmlDeviceGetClockInfo(dev->handle, NVML_CLOCK_SM, &mhz);
    if (result != NVML_SUCCESS) return nvml_fail(err, result, "nvmlDeviceGetClockInfo");
    *out_mhz = mhz;
    return GB_OK;
}

int gb_nvml_max_sm_clock(gb_nvml_device *dev, double *out_mhz, gb_err *err)
{
    unsigned int mhz = 0;
    *out_mhz = 0;
    nvmlReturn_t result = nvml.nvmlDeviceGetMaxClockInfo(dev->handle, NVML_CLOCK_SM, &mhz);
    if (result != NVML_SUCCESS) return nvml_fail(err, result, "nvmlDeviceGetMaxClockInfo");
    *out_mhz = mhz;
    return GB_OK;
}

int gb_nvml_throttled(gb_nvml_device *dev, bool *out, unsigned long long *out_reasons, gb_err *err)
{
    unsigned long long reasons = 0;
    *out = false;
    if (out_reasons) *out_reasons = 0;
    nvmlReturn_t result = get_reasons(dev->handle, &reasons);
    if (result != NVML_SUCCESS) return nvml_fail(err, result, get_reasons_call);
    *out = (reasons & GB_NVML_THROTTLE_REASONS) != 0;
    if (out_reasons) *out_reasons = reasons;
    return GB_OK;
}

#define MAX_PROCESSES 64 /* more come back as a count only */

/* Distinct pids in the list other than pid; *out_mine says whether pid is there. */
static int count_others(const nvmlProcessInfo *infos, unsigned int n, unsigned int pid,
                        bool *out_mine)
{
    int others = 0;
    *out_mine = false;
    for (unsigned int i = 0; i < n; i++) {
        bool seen = false;
        for (unsigned int j = 0; j < i && !seen; j++)
            seen = infos[j].pid == infos[i].pid;
        if (infos[i].pid == pid)
            *out_mine = true;
        else
            others += !seen;
    }
    return others;
}

int gb_nvml_other_processes(gb_nvml_device *dev, int *out_n, gb_err *err)
{
    nvmlProcessInfo infos[MAX_PROCESSES];
    unsigned int count = MAX_PROCESSES;
    bool mine = false;
    *out_n = 0;
    if (!get_processes)
        return gb_err_set(err, GB_ENOTFOUND,
                          "%s has neither nvmlDeviceGetComputeRunningProcesses_v3 nor _v2",
                          lib_path);
    nvmlReturn_t result = get_processes(dev->handle, &count, infos);
    if (result != NVML_SUCCESS && result != NVML_ERROR_INSUFFICIENT_SIZE)
        return nvml_fail(err, result, get_processes_call);
    int others = result == NVML_SUCCESS ? count_others(infos, count, (unsigned)getpid(), &mine) : 0;
    /* Not listed under our pid (a PID namespace shows the host's pids; a list too
     * long for the buffer shows none): the caller holds a context on the GPU, so
     * one of the processes is ours. */
    if (!mine) others = (int)count - 1;
    *out_n = others > 0 ? others : 0;
    return GB_OK;
}

static const struct {
    unsigned long long bit;
    const char *name;
} reason_names[] = {
    {GB_NVML_REASON_GPU_IDLE, "gpu_idle"},
    {GB_NVML_REASON_APPLICATIONS_CLOCKS, "applications_clocks"},
    {GB_NVML_REASON_SW_POWER_CAP, "sw_power_cap"},
    {GB_NVML_REASON_HW_SLOWDOWN, "hw_slowdown"},
    {GB_NVML_REASON_SYNC_BOOST, "sync_boost"},
    {GB_NVML_REASON_SW_THERMAL_SLOWDOWN, "sw_thermal"},
    {GB_NVML_REASON_HW_THERMAL_SLOWDOWN, "hw_thermal"},
    {GB_NVML_REASON_HW_POWER_BRAKE, "hw_power_brake"},
    {GB_NVML_REASON_DISPLAY_CLOCK, "display_clock"},
    {GB_NVML_REASON_BOARD_LIMIT, "board_limit"},
    {GB_NVML_REASON_RELIABILITY, "reliability"},
};

/* Appends ",word" (or "word" first) at len; returns the new length, which may pass
 * n when the text was cut short. */
static size_t append(char *buf, size_t n, size_t len, const char *word)
{
    if (len >= n) return len;
    int written = snprintf(buf + len, n - len, "%s%s", len ? "," : "", word);
    return written < 0 ? len : len + (size_t)written;
}

const char *gb_nvml_reasons_text(unsigned long long reasons, char *buf, size_t n)
{
    if (n == 0) return "";
    buf[0] = '\0';
    if (reasons == 0) {
        append(buf, n, 0, "none");
        return buf;
    }
    size_t len = 0;
    for (size_t i = 0; i < sizeof reason_names / sizeof reason_names[0]; i++) {
        if (!(reasons & reason_names[i].bit)) continue;
        len = append(buf, n, len, reason_names[i].name);
        reasons &= ~reason_names[i].bit;
    }
    if (reasons) {
        char unknown[32];
        snprintf(unknown, sizeof unknown, "unknown(0x%llx)", reasons);
        append(buf, n, len, unknown);
    }
    return buf;
}
