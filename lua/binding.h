/*
 * The Lua binding: a Lua 5.4 state with `require "gpubench"` (the prelude
 * lua/gpubench.lua, embedded) and its C core `gpubench.core`, wired to a host
 * that holds the tuning session (session/session.h: the cache, the executors, the
 * outputs and the options of the command line). The binding only translates: a
 * gb.tune call becomes gb_session_tune.
 *
 * Scripts run under one protected call. A script error comes back as GB_ESCRIPT
 * with "file:line: message" and a traceback; an error of the engine (no GPU, a
 * broken cache) comes back with its own code, so the front end can pick the exit
 * status.
 */
#ifndef GB_LUA_BINDING_H
#define GB_LUA_BINDING_H

#include "base/error.h"
#include "session/session.h"

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

typedef struct gb_lua_host {
    /* The session the script's gb.tune and gb.bench calls run in (session/session.h):
     * the front end sets its options, workers and outputs. */
    gb_session session;
    unsigned measure_set; /* GB_MEASURE_SET_*: session.tuner.measure fields the user set */
    const char *const *template_path;
    int n_template_path;
    int n_calls; /* gb.tune, gb.bench and gb.collective calls begun */
} gb_lua_host;

/* A new state with the standard libraries and gpubench preloaded. */
int gb_lua_new(gb_lua_host *host, lua_State **out, gb_err *err);

/* Runs the script at path with arg = {[0]=path, argv...}; after it, tunes the
 * kernels it declared with shapes if it never called gb.tune. */
int gb_lua_run(lua_State *L, const char *path, int argc, char **argv, gb_err *err);

/* Closes the state and the host's session (gb_session_close). */
void gb_lua_close(lua_State *L, gb_lua_host *host);

#endif
