/* Shared between the files of the Lua binding; not part of its interface. */
#ifndef GB_LUA_INTERNAL_H
#define GB_LUA_INTERNAL_H

#include "base/value.h"
#include "base/wire.h"
#include "lua/binding.h"
#include "tuner/tune.h"

#include <lua.h>

/* Ties a new state to its host and registers the engine errors' metatable
 * (gb_lua_new). */
void gb_lua_attach(lua_State *L, gb_lua_host *host);
/* The host the state was made for. */
gb_lua_host *gb_lua_host_of(lua_State *L);

/* Calls the function below its nargs arguments on the stack under a traceback
 * handler. On error returns GB_ESCRIPT with the message (and traceback) in err. */
int gb_lua_pcall(lua_State *L, int nargs, int nresults, gb_err *err);

/* Calls the function below its nargs arguments with no results under the same
 * handler; an engine error comes back with its own code (gb_lua_take_error). */
int gb_lua_protected_call(lua_State *L, int nargs, gb_err *err);
/* Turns the error value on top of the stack into err, pops it and returns its
 * code: an engine error's own, else GB_ESCRIPT. */
int gb_lua_take_error(lua_State *L, gb_err *err);

/* Raises err as a Lua error: script errors as their message, others as an error
 * object {code=, message=} so the front end can pick the exit status. */
int gb_lua_raise(lua_State *L, const gb_err *err);

void gb_lua_push_value(lua_State *L, const gb_value *v);
/* Converts the value at idx; GB_EINVAL for other types. */
int gb_lua_to_value(lua_State *L, int idx, gb_value *out);
void gb_lua_push_fields(lua_State *L, const gb_fields *f);
/* A configuration as a table of its parameters' values. */
void gb_lua_push_config(lua_State *L, const gb_config *config);
/* A table of string keys to numbers, strings and booleans. */
int gb_lua_to_fields(lua_State *L, int idx, gb_fields *out, gb_err *err);

/* Builds a kernel definition from the Kernel object at idx; its hooks call back
 * into L. Free with gb_lua_kernel_free. */
int gb_lua_kernel_def(lua_State *L, int idx, gb_kernel_def **out, gb_err *err);
void gb_lua_kernel_free(gb_kernel_def *def);

/* A strategy of the script's (a table with ask and tell, or a function run as a
 * coroutine per shape) at idx, for a gb_tune_request (lua/strategy.c). */
int gb_lua_strategy_factory(lua_State *L, int idx, gb_strategy_factory **out, gb_err *err);
void gb_lua_strategy_factory_free(lua_State *L, gb_strategy_factory *factory);

/* gb.cublas (lua/gemm.c): the table of a library GEMM at idx as a description,
 * checked; GB_ESCRIPT "<where>gb.cublas.gemm: why" when it is not one. */
int gb_lua_to_gemm(lua_State *L, int idx, const char *where, gb_gemm *out, gb_err *err);
/* core.gemm_check(t) -> nil or why t's types do not go together. */
int gb_lua_core_gemm_check(lua_State *L);
/* The preloader of "gpubench.cublas" (lua/cublas.lua). */
int gb_lua_open_cublas(lua_State *L);

/* Pushes the results table of a tuning run: a list of gb_lua_result_wire tables,
 * one per shape (lua/results.c). */
void gb_lua_push_results(lua_State *L, const gb_tune_result *result);
/* A shape's result as a script sees it: a view of gb_shape_result. */
extern const gb_wire_type gb_lua_result_wire;

#endif
