/*
 * The GPU worker process and the executor that supervises it.
 *
 * A kernel that faults takes the CUDA context with it for the life of the
 * process, and a kernel that spins never returns. So the GPU belongs to a worker
 * process: the same binary started with "--worker", talking exec/proto.h over a
 * socket on its fd 3 (GB_CHILD_FD). The tuner (the parent) keeps Lua, NVRTC and the cache and
 * never calls CUDA itself.
 *
 * The supervisor (gb_exec_worker, exec/supervisor.c) starts the worker through
 * exec/child.h, in its own process group (a terminal's Ctrl-C reaches only the
 * tuner, which ends the worker itself), gives every answer a deadline, and turns what can go wrong
 * into one sentence: the worker died (with its signal or exit status), it did not answer in time
 * (it is killed), or it sent something malformed. The executor (exec/exec.h) then starts a fresh
 * worker and replays the problem and the reference.
 */
#ifndef GB_EXEC_WORKER_H
#define GB_EXEC_WORKER_H

#include "base/error.h"
#include "exec/child.h"
#include "exec/exec.h"

/* The worker: serves requests on fd until QUIT or end of file and returns the
 * process's exit status (0 normally; 3 after a fault ended its CUDA context). */
int gb_worker_main(int fd);

typedef struct gb_worker_opts {
    const char *exe;        /* the program to start with "--worker" (gb_child_self_exe) */
    int ordinal;            /* the GPU */
    double start_timeout_s; /* opening the GPU in a fresh worker (default 120) */
    double op_timeout_s;    /* setting up a problem, running the reference (default 600) */
} gb_worker_opts;

/* An executor whose backend is a worker process. Nothing is started until the
 * first call that needs the GPU. */
int gb_exec_worker(const gb_worker_opts *opts, gb_exec **out, gb_err *err);

#endif
