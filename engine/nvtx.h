/*
 * NVTX ranges, so that a profiler's timeline (Nsight Systems: nsys profile
 * --trace=cuda,nvtx) shows what gpubench was doing: "compile sgemm BK=8,BM=64"
 * on a compile thread, "check ..." and "measure ..." in the GPU worker, "race
 * sgemm" for the leaders' race (docs/nvtx.md). Ranges go to the "gpubench"
 * domain through the toolkit's header-only nvtx3, which links nothing.
 *
 * Without a tool they cost next to nothing: nvtx3 loads a tool only when
 * NVTX_INJECTION64_PATH names one (nsys sets it for the processes it starts);
 * otherwise every NVTX call is a no-op and nvtxDomainCreateA returns NULL. The
 * domain is created once per process, and while it is NULL a push returns before
 * it formats anything: one pthread_once check and a branch.
 *
 * Ranges nest per thread: every gb_nvtx_push is matched by one gb_nvtx_pop on the
 * same thread.
 */
#ifndef GB_ENGINE_NVTX_H
#define GB_ENGINE_NVTX_H

#include <stdbool.h>

/* Whether a tool takes this process's ranges (the first call asks nvtx3 to look). */
bool gb_nvtx_active(void);

/* Opens a range named by the printf-style format; longer names than 511 bytes are
 * cut. Nothing is formatted without a tool. */
void gb_nvtx_push(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Closes the thread's innermost range. */
void gb_nvtx_pop(void);

#endif
