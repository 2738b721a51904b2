/*
 * NVML, loaded at run time: the SM clock of one GPU, whether it is throttling, and
 * whether other processes are using it.
 *
 * The measurement tags every sample with the SM clock and a throttled flag
 * (engine/measure.h). NVML (libnvidia-ml.so.1) reports both directly, but it is
 * optional: where it is missing the engine falls back to a clock probe kernel. So a
 * missing library or entry point is not an error of the run, only "NVML is
 * unavailable" with a one-sentence reason that callers may log and move on from.
 *
 * Like the CUDA driver (engine/driver.h), NVML is never linked. The first
 * gb_nvml_open() dlopens libnvidia-ml.so.1 once (GPUBENCH_LIBNVML may name another
 * file) and resolves the entry points of an X-macro table in nvml.c; nvml.h itself
 * is not needed to build, since CI machines do not have it. NVML is initialized
 * while at least one device is open and shut down when the last one closes.
 *
 * A device is named by its PCI bus id, the string cuDeviceGetPCIBusId gives
 * ("0000:3B:00.0"), so NVML and CUDA agree on the GPU whatever CUDA_VISIBLE_DEVICES
 * says. The queries are cheap enough to make around every sample.
 */
#ifndef GB_ENGINE_NVML_H
#define GB_ENGINE_NVML_H

#include "base/error.h"

#include <stdbool.h>
#include <stddef.h>

/* NVML's clocks event reason bits (nvmlClocksEventReason*, formerly named
 * nvmlClocksThrottleReason*, same values); several may be set at once. */
#define GB_NVML_REASON_GPU_IDLE            0x0001ULL /* nothing runs; clocks drop */
#define GB_NVML_REASON_APPLICATIONS_CLOCKS 0x0002ULL /* held at the applications clocks */
#define GB_NVML_REASON_SW_POWER_CAP        0x0004ULL /* kept under the power limit */
#define GB_NVML_REASON_HW_SLOWDOWN         0x0008ULL /* hardware halves the clocks or more */
#define GB_NVML_REASON_SYNC_BOOST          0x0010ULL /* held to a sync boost group's clock */
#define GB_NVML_REASON_SW_THERMAL_SLOWDOWN 0x0020ULL /* the driver cools the GPU down */
#define GB_NVML_REASON_HW_THERMAL_SLOWDOWN 0x0040ULL /* the hardware cools the GPU down */
#define GB_NVML_REASON_HW_POWER_BRAKE      0x0080ULL /* the board's power brake is on */
#define GB_NVML_REASON_DISPLAY_CLOCK       0x0100ULL /* held by the display clock setting */
#define GB_NVML_REASON_BOARD_LIMIT         0x0200ULL /* newer drivers only */
#define GB_NVML_REASON_RELIABILITY         0x0400ULL /* newer drivers only */

/* The reasons that make a sample slower than the GPU can run: power capping and the
 * thermal and hardware slowdowns. An idle GPU, the applications or display clock
 * settings and sync boost set the clock on purpose and are not throttling. */
#define GB_NVML_THROTTLE_REASONS                                                                   \
    (GB_NVML_REASON_SW_POWER_CAP | GB_NVML_REASON_HW_SLOWDOWN |                                    \
     GB_NVML_REASON_SW_THERMAL_SLOWDOWN | GB_NVML_REASON_HW_THERMAL_SLOWDOWN |                     \
     GB_NVML_REASON_HW_POWER_BRAKE)

/* Enough for gb_nvml_reasons_text() with every bit set. */
#define GB_NVML_REASONS_TEXT_BYTES 192

typedef struct gb_nvml_device gb_nvml_device;

/* Opens the GPU at pci_bus_id ("0000:3B:00.0"), loading NVML on first use
 * (thread-safe) and initializing it when no other device is open. On success
 * *out is a handle for gb_nvml_close(); on failure *out is NULL and err says:
 *   GB_ENODRIVER  NVML is unavailable: the library (named in the message) is
 *                 missing or lacks an entry point, or nvmlInit_v2 failed;
 *                 one sentence, meant to be logged before the clock probe fallback
 *   GB_ENOTFOUND  NVML has no GPU at that bus id, or will not look it up
 *   GB_EINVAL     pci_bus_id is NULL or empty
 *   GB_ECUDA      the lookup failed otherwise ("nvmlDeviceGetHandleByPciBusId_v2: ...")
 *   GB_ENOMEM */
int gb_nvml_open(const char *pci_bus_id, gb_nvml_device **out, gb_err *err);

/* Closes dev and shuts NVML down when it was the last open device. NULL is a
 * no-op. */
void gb_nvml_close(gb_nvml_device *dev);

/* The current SM clock in MHz. On failure *out_mhz is 0 and the result is GB_ECUDA
 * with "nvmlDeviceGetClockInfo: <NVML's description>". */
int gb_nvml_sm_clock(gb_nvml_device *dev, double *out_mhz, gb_err *err);

/* The highest SM clock the GPU can boost to, in MHz; errors as gb_nvml_sm_clock,
 * from nvmlDeviceGetMaxClockInfo. */
int gb_nvml_max_sm_clock(gb_nvml_device *dev, double *out_mhz, gb_err *err);

/* *out is true when any of GB_NVML_THROTTLE_REASONS is active now. out_reasons
 * (may be NULL) receives every active reason bit, throttling or not, for
 * gb_nvml_reasons_text(). Uses nvmlDeviceGetCurrentClocksEventReasons, or
 * nvmlDeviceGetCurrentClocksThrottleReasons on drivers that predate it. On
 * failure both outputs are cleared and the result is GB_ECUDA naming the call. */
int gb_nvml_throttled(gb_nvml_device *dev, bool *out, unsigned long long *out_reasons, gb_err *err);

/* How many processes other than the caller's have a compute context on the GPU
 * now (nvmlDeviceGetComputeRunningProcesses_v3, else _v2). Meant for the process
 * that measures, which holds a context there itself: when its pid is in NVML's
 * list the others are the other pids in it; when it is not (in a PID namespace
 * NVML reports the host's pids), they are the count less one, that one being the
 * caller. A context is counted whether or not it is running a kernel now. The
 * query can take a millisecond or more: call it around a measurement, not per
 * sample. On failure *out_n is 0 and the result is GB_ENOTFOUND (the library has
 * no such query) or GB_ECUDA naming the call. */
int gb_nvml_other_processes(gb_nvml_device *dev, int *out_n, gb_err *err);

/* Writes reasons as comma-separated names into buf (n bytes, truncated to fit and
 * always terminated when n > 0) and returns buf: "sw_power_cap,hw_thermal", "none"
 * for 0, and "unknown(0x...)" for the bits this version has no name for. Returns ""
 * and writes nothing when n is 0. */
const char *gb_nvml_reasons_text(unsigned long long reasons, char *buf, size_t n);

#endif
