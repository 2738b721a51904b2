/*
 * The child processes that own a GPU, and their one supervisor.
 *
 * A kernel that faults takes the CUDA context with it for the life of the
 * process, and a kernel or a collective that never completes blocks for good. So
 * the GPU work runs in a child: this same program started again with a hidden
 * argument ("--worker" for the tuner's worker, exec/worker.h; "--collective" for
 * the collectives, exec/collective_run.h), talking over a socket that is its file
 * descriptor GB_CHILD_FD. Both are started, watched and ended here:
 *
 *   - the child gets its own process group (a terminal's Ctrl-C reaches only the
 *     parent, which then ends the child) and an empty signal mask;
 *   - ending it waits a while for it to leave by itself, then kills its whole
 *     process group (whatever it started goes with it) while the child is still
 *     unreaped, so that the group's id cannot have been reused by then;
 *   - its end is told in one sentence: "the GPU worker was killed by signal 11
 *     (Segmentation fault)", "... exited with status 3".
 *
 * The deadlines of the exchanges themselves belong to the protocols
 * (exec/proto.h, exec/collective_lines.c); a supervisor that misses one ends the
 * child here.
 */
#ifndef GB_EXEC_CHILD_H
#define GB_EXEC_CHILD_H

#include "base/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The child's end of the socket is this descriptor in the child. */
#define GB_CHILD_FD 3

typedef struct gb_child {
    pid_t pid; /* 0: no child */
    int fd;    /* the parent's end of the socket; -1: none */
} gb_child;

/* Initialised: no child (what gb_child_end leaves). */
#define GB_CHILD_NONE ((gb_child){.pid = 0, .fd = -1})

typedef struct gb_child_spec {
    const char *exe;       /* the program (gb_child_self_exe) */
    const char *arg;       /* its one argument: "--worker" */
    char *const *env;      /* NULL: this process's environment */
    bool stdout_to_stderr; /* the child's stdout goes where its stderr goes */
} gb_child_spec;

/* Starts the child as spec says; c->pid and c->fd are set on success. GB_EIO
 * "starting EXE ARG: why" when the socket or the process cannot be made. */
int gb_child_start(gb_child *c, const gb_child_spec *spec, gb_err *err);

/* Whether the child has ended (it is not reaped: gb_child_end does that). */
bool gb_child_exited(const gb_child *c);

/* Ends the child: closes the parent's end of the socket, waits up to wait_ms for
 * the child to leave by itself, then kills its process group and reaps it. True,
 * with its wait status in *status (may be NULL), when there was a child to reap.
 * Leaves *c as GB_CHILD_NONE; a no-op for no child. */
bool gb_child_end(gb_child *c, int wait_ms, int *status);

/* One sentence on how a child that `who` names ended, from its wait status:
 * "WHO was killed by signal 9 (Killed)", "WHO exited with status 3". */
void gb_child_describe(const char *who, int status, char *out, size_t out_bytes);

/* The path of the running program, for gb_child_spec.exe. GB_EIO. */
int gb_child_self_exe(char *out, size_t out_bytes, gb_err *err);

#endif
