#include "gpu_present.h"

#include "engine/device.h"
#include "engine/driver.h"
#include "engine/gpu.h"
#include "exec/lease.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

enum { MAX_GPUS = 64 };

static gb_lease *leases[MAX_GPUS]; /* NULL where the lease could not be used */
static int n_taken;                /* GPUs 0 .. n_taken - 1 have been seen to */
static pid_t taker;                /* a forked child that exits must not clear them */

bool gpu_present(void)
{
    int count = 0;
    return gb_driver_load(NULL) == GB_OK && gb_cu.cuDeviceGetCount(&count) == CUDA_SUCCESS &&
           count > 0;
}

static void release_leases(void)
{
    if (getpid() != taker) return;
    while (n_taken > 0)
        gb_lease_release(leases[--n_taken]);
}

/* Waits for the lease of GPU ordinal; on an error, says why the tests go on
 * without it. */
static void take_lease(int ordinal)
{
    gb_device_info dev;
    char name[320];
    gb_err err = {0};
    int rc = gb_device_query(ordinal, &dev, &err);
    if (rc == GB_OK) {
        gb_lease_name(&dev, name, sizeof name);
        rc = gb_lease_acquire_as(name, -1, "running GPU tests", stderr, &leases[ordinal], &err);
    }
    if (rc) fprintf(stderr, "# GPU %d: testing without its lease: %s\n", ordinal, err.msg);
}

static bool take_leases(int n_gpus)
{
    if (!gpu_present()) return false;
    if (taker == 0) {
        taker = getpid();
        atexit(release_leases);
    }
    for (; n_taken < n_gpus && n_taken < MAX_GPUS; n_taken++)
        take_lease(n_taken);
    return true;
}

bool gpu_lease_take(void)
{
    return take_leases(1);
}

bool gpu_lease_take_all(void)
{
    int count = 0;
    if (!gpu_present() || gb_cu.cuDeviceGetCount(&count) != CUDA_SUCCESS) return false;
    return take_leases(count);
}

int gpu_session_open(gb_gpu **out)
{
    *out = NULL;
    if (!gpu_lease_take()) return 0;
    gb_err err;
    if (gb_gpu_open(0, out, &err) == GB_OK) return 0;
    fprintf(stderr, "gb_gpu_open: %s\n", err.msg);
    return -1;
}
