/*
 * What a device is and what it can do, read once from the driver. The device
 * fingerprint (name, compute capability, SM count) keys the cache, so results from
 * one GPU model are never served to another.
 */
#ifndef GB_ENGINE_DEVICE_H
#define GB_ENGINE_DEVICE_H

#include "base/error.h"

#include <stdint.h>

typedef struct gb_device_info {
    char name[256];
    int ordinal;
    int cc_major;
    int cc_minor;
    int sms;
    int smem_per_block_optin; /* bytes a block may ask for after opting in */
    int smem_per_sm;
    int regs_per_sm;
    int max_threads_per_block;
    int64_t l2_bytes;
    int64_t mem_bytes;
    int mem_clock_khz; /* peak memory clock; 0 when the driver does not say */
    int bus_width_bits;
    int sm_clock_khz;     /* peak SM clock */
    double peak_gbps;     /* from memory clock and bus width (DDR: x2); 0 when unknown */
    int driver_version;   /* e.g. 13000 */
    char arch[16];        /* NVRTC target for this device, e.g. "sm_90a" */
    char clock_source[8]; /* where per-sample SM clocks come from: "nvml" or "probe" */
    char timer[8];        /* what times samples: "cupti" (kernel records) or "events" */
    char timer_note[512]; /* with events: the sentence saying why not CUPTI; else "" */
    char uuid[48];        /* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" as nvidia-smi prints it
                             (cuDeviceGetUuid); "" when unknown. Names the GPU's lease. */
    char pci_bus_id[32];  /* "0000:3B:00.0" (cuDeviceGetPCIBusId); "" when unknown */
    int device_count;     /* GPUs the driver sees, this one included (cuDeviceGetCount), for
                             --gpus all; 0 when unknown */
} gb_device_info;

/* The wire description (base/wire.h; gb_wire_device_info): the worker's DEVICE
 * message and gb.device()'s table (which adds cc, sm_clock_mhz, mem_clock_mhz). */
#define GB_DEVICE_INFO_WIRE(X)                                                                     \
    X(name, CHARS, "name")                                                                         \
    X(ordinal, INT, "ordinal", GB_WIRE_RANGE(0, INT_MAX))                                          \
    X(cc_major, INT, "cc_major", GB_WIRE_RANGE(0, INT_MAX))                                        \
    X(cc_minor, INT, "cc_minor", GB_WIRE_RANGE(0, INT_MAX))                                        \
    X(sms, INT, "sms", GB_WIRE_RANGE(0, INT_MAX))                                                  \
    X(smem_per_block_optin, INT, "smem_per_block_optin", GB_WIRE_RANGE(0, INT_MAX))                \
    X(smem_per_sm, INT, "smem_per_sm", GB_WIRE_RANGE(0, INT_MAX))                                  \
    X(regs_per_sm, INT, "regs_per_sm", GB_WIRE_RANGE(0, INT_MAX))                                  \
    X(max_threads_per_block, INT, "max_threads_per_block", GB_WIRE_RANGE(0, INT_MAX))              \
    X(l2_bytes, INT64, "l2_bytes", GB_WIRE_RANGE(0, INT64_MAX))                                    \
    X(mem_bytes, INT64, "mem_bytes", GB_WIRE_RANGE(0, INT64_MAX))                                  \
    X(mem_clock_khz, INT, "mem_clock_khz", GB_WIRE_RANGE(0, INT_MAX))                              \
    X(bus_width_bits, INT, "bus_width_bits", GB_WIRE_RANGE(0, INT_MAX))                            \
    X(sm_clock_khz, INT, "sm_clock_khz", GB_WIRE_RANGE(0, INT_MAX))                                \
    X(peak_gbps, DOUBLE, "peak_gbps", GB_WIRE_RANGE(0, INFINITY))                                  \
    X(driver_version, INT, "driver", GB_WIRE_RANGE(0, INT_MAX))                                    \
    X(arch, CHARS, "arch")                                                                         \
    X(clock_source, CHARS, "clock_source")                                                         \
    X(timer, CHARS, "timer", .flags = GB_WIRE_OPTIONAL, .dflt_str = "events")                      \
    X(timer_note, CHARS, "timer_note", .flags = GB_WIRE_OPTIONAL)                                  \
    X(uuid, CHARS, "uuid", .flags = GB_WIRE_OPTIONAL)                                              \
    X(pci_bus_id, CHARS, "pci_bus_id", .flags = GB_WIRE_OPTIONAL)                                  \
    X(device_count, INT, "device_count", GB_WIRE_RANGE(0, INT_MAX), .flags = GB_WIRE_OPTIONAL)

/* Reads the properties of device ordinal. The driver must be loaded. */
int gb_device_query(int ordinal, gb_device_info *out, gb_err *err);

/* The NVRTC target for a compute capability: "sm_90a" for 9.0 (so Hopper-only
 * instructions such as wgmma are available), "sm_XY" otherwise. */
void gb_device_arch(int cc_major, int cc_minor, char out[16]);

/* "NVIDIA H100 80GB HBM3/sm_90/132" — the cache's device fingerprint. */
void gb_device_fingerprint(const gb_device_info *info, char *out, size_t out_bytes);

#endif
