/*
 * A stand-in for libnvidia-ml.so.1, loaded through GPUBENCH_LIBNVML by
 * tests/test_nvml.c, so the rule that counts the other processes on a GPU
 * (gb_nvml_other_processes) is pinned on machines without NVML.
 *
 * It has one GPU at every bus id, at a steady 1980 MHz, never throttled. Its
 * compute process list is GB_FAKE_NVML_PIDS: comma-separated pids, where "self"
 * is the calling process's pid ("self,4242,4242,777": the caller, pid 4242 twice,
 * pid 777).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct fake_device *nvmlDevice_t;
typedef struct nvmlProcessInfo {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
} nvmlProcessInfo;

enum { SUCCESS = 0, INSUFFICIENT_SIZE = 7 };

const char *nvmlErrorString(int result);
int nvmlInit_v2(void);
int nvmlShutdown(void);
int nvmlDeviceGetHandleByPciBusId_v2(const char *bus_id, nvmlDevice_t *device);
int nvmlDeviceGetClockInfo(nvmlDevice_t device, int type, unsigned int *mhz);
int nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, int type, unsigned int *mhz);
int nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device, unsigned long long *reasons);
int nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *count,
                                            nvmlProcessInfo *infos);

static struct fake_device {
    int unused;
} the_gpu;

const char *nvmlErrorString(int result)
{
    return result == INSUFFICIENT_SIZE ? "Insufficient Size" : "Fake NVML error";
}

int nvmlInit_v2(void)
{
    return SUCCESS;
}

int nvmlShutdown(void)
{
    return SUCCESS;
}

int nvmlDeviceGetHandleByPciBusId_v2(const char *bus_id, nvmlDevice_t *device)
{
    *device = &the_gpu;
    return SUCCESS;
}

int nvmlDeviceGetClockInfo(nvmlDevice_t device, int type, unsigned int *mhz)
{
    *mhz = 1980;
    return SUCCESS;
}

int nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, int type, unsigned int *mhz)
{
    *mhz = 1980;
    return SUCCESS;
}

int nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device, unsigned long long *reasons)
{
    *reasons = 0;
    return SUCCESS;
}

int nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *count,
                                            nvmlProcessInfo *infos)
{
    const char *list = getenv("GB_FAKE_NVML_PIDS");
    unsigned int n = 0, room = *count;
    for (const char *p = list && *list ? list : NULL; p;
         p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
        if (n < room) {
            infos[n] = (nvmlProcessInfo){0};
            infos[n].pid = strncmp(p, "self", 4) == 0 ? (unsigned int)getpid()
                                                      : (unsigned int)strtoul(p, NULL, 10);
        }
        n++;
    }
    *count = n;
    return n > room ? INSUFFICIENT_SIZE : SUCCESS;
}
