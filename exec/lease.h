/*
 * The GPU lease: one measuring process per GPU.
 *
 * Two processes timing kernels on one GPU at the same moment spoil each other's
 * figures (three tuners sharing an H200 stored a 4096^3 GEMM 22% slower than one
 * alone did). So a process takes the GPU's lease before it measures and keeps it
 * until it is done; another process that wants to measure on that GPU waits,
 * saying who holds it, and gives up after a while with GB_EBUSY.
 *
 * The lease is an advisory lock (flock) on a file named after the GPU, in
 * $GPUBENCH_LEASE_DIR, else /tmp/gpubench-leases. The directory is created with
 * mode 01777 (every user of the machine shares it, and only a file's owner may
 * remove it) and the files with 0666; a file that exists is opened without O_CREAT
 * first, so another user's file can be used under fs.protected_regular. The kernel
 * drops a flock when the last descriptor of it closes, however the process ends
 * (kill -9 and a crash included): there is no stale lease to detect or clean up.
 * A lock file whose description names a process that is gone is simply not locked,
 * and the next taker locks it and writes its own description.
 *
 * The holder writes into the file who it is (pid, user, host, command line, since
 * when, what it is doing) so that a waiter can say whom it waits for. Locks are per
 * machine: flock on a network file system may not reach other hosts, and a PID
 * namespace shows its own pids. A process that asks for a lease it already holds
 * waits for itself: hold one lease per GPU per process. The descriptor is
 * close-on-exec, so a worker the holder starts does not keep the lock; a child
 * made by fork() alone shares it until it execs or exits.
 */
#ifndef GB_EXEC_LEASE_H
#define GB_EXEC_LEASE_H

#include "base/error.h"
#include "engine/device.h"

#include <stddef.h>
#include <stdio.h>

typedef struct gb_lease gb_lease;

/* The lease directory when $GPUBENCH_LEASE_DIR is not set. */
#define GB_LEASE_DEFAULT_DIR "/tmp/gpubench-leases"

/* Takes the lease of the GPU named gpu_uuid ("GPU-5d2c...", or any name from
 * gb_lease_name()). wait_s < 0 waits for ever; 0 tries once; otherwise it polls
 * (every 50 ms) for up to wait_s seconds. A wait is announced once on stderr.
 * The name becomes the lock file's name when it is 1 to 64 characters of
 * [A-Za-z0-9-]; any other name is hashed, so no name can reach outside the lease
 * directory. On success *out holds the lease until gb_lease_release(); otherwise
 * *out is NULL and:
 *   GB_EBUSY   another process held it for the whole wait; the message names
 *              the GPU and the holder (pid, user, command, since when)
 *   GB_EINTR   gb_interrupted() became true while waiting (Ctrl-C)
 *   GB_EINVAL  gpu_uuid is NULL or empty
 *   GB_EIO     the lease directory or file could not be made or opened (the
 *              message names the path and the system's reason)
 *   GB_ENOMEM */
int gb_lease_acquire(const char *gpu_uuid, double wait_s, gb_lease **out, gb_err *err);

/* gb_lease_acquire, also saying what the holder will be doing (activity, e.g.
 * "tuning gemm_f32", shown to waiters; NULL: nothing) and where a wait is
 * announced (log; NULL: nowhere). */
int gb_lease_acquire_as(const char *gpu_uuid, double wait_s, const char *activity, FILE *log,
                        gb_lease **out, gb_err *err);

/* Rewrites what the holder says it is doing (NULL: nothing). */
void gb_lease_set_activity(gb_lease *lease, const char *activity);

/* How long the acquire that took the lease waited, in seconds. */
double gb_lease_waited_s(const gb_lease *lease);

/* The lock file's path. */
const char *gb_lease_path(const gb_lease *lease);

/* Clears the holder's description and drops the lock. NULL is a no-op. */
void gb_lease_release(gb_lease *lease);

/* The name of a device's lease: its UUID; else "pci-" and its PCI bus id; else
 * "<hostname>-device-<ordinal>" (an ordinal means another GPU under another
 * CUDA_VISIBLE_DEVICES, so this last one is a weak name). */
void gb_lease_name(const gb_device_info *dev, char *out, size_t out_bytes);

#endif
