/*
 * The Lua binding: a Lua 5.4 state with `require "gpubench"` (the prelude
 * lua/gpubench.lua, embedded) and its C core `gpubench.core`, wired to a host
 * that owns the cache, the executor and the options of the command line.
 *
 * Scripts run under one protected call. A script error comes back as GB_ESCRIPT
 * with "file:line: message" and a traceback; an error of the engine (no GPU, a
 * broken cache) comes back with its own code, so the front end can pick the exit
 * status.
 */
#ifndef GB_LUA_BINDING_H
#define GB_LUA_BINDING_H

#include "base/error.h"
#include "exec/exec.h"
#include "report/output.h"
#include "engine/ceilings.h"
#include "tuner/tune.h"

#include "exec/pool.h"

#include <lua.h>
#include <stdbool.h>
#include <stdio.h>

/* Which measurement settings the command line gave (they override a kernel's own). */
enum {
    GB_MEASURE_SET_MODE = 1 << 0,
    GB_MEASURE_SET_NOISE = 1 << 1,
    GB_MEASURE_SET_MAX_MS = 1 << 2,
    GB_MEASURE_SET_SAMPLES = 1 << 3,
};

/* A kernel that gb.tune tuned (gb.bench does not count), and on which device. */
typedef struct gb_lua_tuned {
    char *kernel;
    char device[320]; /* device fingerprint; "" when it ran without a GPU */
} gb_lua_tuned;

typedef struct gb_lua_host {
    gb_tuner_opts tuner;  /* cache, arch, jobs, force, compile_only, ... (exec set lazily) */
    unsigned measure_set; /* GB_MEASURE_SET_*: tuner.measure fields the user set */
    /* Starts the executor the first time the GPU is needed. */
    int (*open_exec)(void *ctx, gb_exec **out, gb_err *err);
    void *open_exec_ctx;
    /* --gpus: trials run on these GPUs at once, gpus[0] being the one open_exec
     * opens; open_exec_on (same ctx) opens the others when the first is opened.
     * n_gpus -1: every GPU the driver sees, from gpus[0] = 0; 0 or 1: open_exec's
     * alone. */
    int n_gpus;
    int gpus[GB_POOL_MAX];
    int (*open_exec_on)(void *ctx, int ordinal, gb_exec **out, gb_err *err);
    gb_exec *execs[GB_POOL_MAX]; /* the opened executors, execs[0] being tuner.exec */
    bool require_gpu;            /* no GPU is an error, not a switch to compiling only */
    const char *const *template_path;
    int n_template_path;
    /* Where each gb.tune and gb.bench call's results go (report/output.h; the front
     * end chooses the outputs); NULL for nowhere. The binding completes context
     * (the device, the compile target) as the run finds them. */
    gb_output *output;
    gb_run_context *context;
    /* Filled as the script runs. */
    int n_calls;          /* gb.tune, gb.bench and gb.collective calls begun */
    int n_tuned;          /* gb.tune calls that completed */
    int n_shapes_failed;  /* shapes left with no valid variant */
    bool gpu_missing;     /* timing was skipped for want of a GPU */
    bool ceilings_sought; /* looked for once */
    bool has_ceilings;    /* the device's measured ceilings, from the cache or measured now */
    gb_ceilings ceilings;
    gb_err gpu_missing_err;
    gb_lua_tuned *tuned; /* each kernel once per device, for --export-header; freed by
                            gb_lua_close */
    int n_tuned_kernels;
} gb_lua_host;

/* A new state with the standard libraries and gpubench preloaded. */
int gb_lua_new(gb_lua_host *host, lua_State **out, gb_err *err);

/* Runs the script at path with arg = {[0]=path, argv...}; after it, tunes the
 * kernels it declared with shapes if it never called gb.tune. */
int gb_lua_run(lua_State *L, const char *path, int argc, char **argv, gb_err *err);

/* Closes the state, the executor the host opened and the host's list of tuned
 * kernels. */
void gb_lua_close(lua_State *L, gb_lua_host *host);

#endif
