/*
 * The fixture of the Lua binding's tests (test_lua.c, test_lua_tune.c): each test
 * writes its script to a fresh folder (so the line numbers in messages are exact),
 * runs it through gb_lua_run and checks the status, the "file:line:" an error
 * names, or what the script asserted itself (a failed assert is GB_ESCRIPT, so a
 * clean run proves the script's checks).
 *
 * The host compiles only, as on a machine with no GPU, unless a test calls
 * use_fake_gpu: then it times on a fake backend (gb_exec_create with ops that
 * "time" a variant by its block size, so the best configuration of a run is known
 * in advance). The names are the ones the tests were written with: only these two
 * programs link lua_fixture.c.
 */
#ifndef GB_TESTS_LUA_FIXTURE_H
#define GB_TESTS_LUA_FIXTURE_H

#include "cache/cache.h"
#include "exec/exec.h"
#include "lua/binding.h"
#include "scratch.h"

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct fake_gpu {
    int n_opened;
    int n_problems;
    int n_references;
    int n_trials;
    gb_arg args[GB_MAX_ARGS]; /* of the last problem */
    int n_args;
    gb_check_spec check; /* of the last trial */
    gb_launch launch;    /* of the last trial */
} fake_gpu;

typedef struct fixture {
    char dir[64];
    char path[128]; /* the last script written */
    char templates[PATH_MAX];
    const char *template_path[1];
    gb_lua_host host;
    FILE *out;              /* the tables: the host's output is a table output on it */
    gb_run_context context; /* the host's, with the device the fake GPU reports */
    lua_State *L;
    gb_cache *cache;
    fake_gpu gpu;
    gb_err err;
    char *text; /* what read_back read last */
} fixture;

/* cmocka setup: a fresh folder, a host that compiles only for sm_90a (its
 * open_exec finds no driver), the repository's templates/ on the template path,
 * the tuner's log and the tables in temporary files. teardown removes it all. */
int setup(void **state);
int teardown(void **state);

/* Writes text and then tail to path (a test fails if it cannot). */
void write_file(const char *path, const char *text, const char *tail);
/* Writes the script as f->dir/name and runs it in a fresh state. */
int run_script(fixture *f, const char *name, const char *text, int argc, char **argv);
/* run_script as script.lua, without arguments. */
int run(fixture *f, const char *text);
/* Everything written to file so far. */
const char *read_back(fixture *f, FILE *file);
/* Gives the host a cache in f->dir/cache. */
void use_cache(fixture *f);
/* The host of a machine with a GPU (the fake one): scripts are timed. */
void use_fake_gpu(fixture *f);
/* The 1-based line of text that holds marker. */
int line_of(const char *text, const char *marker);

/* The script ran through to its end. */
#define EXPECT_OK(f, rc) expect_ok(f, rc, __LINE__)
void expect_ok(fixture *f, int rc, int test_line);

/* A script error whose message starts with "<script>:<line>:" (at_start) or holds
 * it (a hook's error, which the tuner prefixes with the kernel), and that holds
 * every needle. */
#define EXPECT_ERROR_AT(f, rc, line, ...)                                                          \
    expect_error(f, rc, true, line, __LINE__, __VA_ARGS__, (const char *)NULL)
#define EXPECT_ERROR_NAMING(f, rc, line, ...)                                                      \
    expect_error(f, rc, false, line, __LINE__, __VA_ARGS__, (const char *)NULL)

void expect_error(fixture *f, int rc, bool at_start, int line, int test_line, ...);

/* text holds needle. */
void expect_text(const char *text, const char *needle);

/* ---- scripts ------------------------------------------------------------ */

#define REQUIRE "local gb = require \"gpubench\"\n"
/* Kernels small enough to compile in a moment. */
#define SCALE_SRC                                                                                  \
    "[[extern \"C\" __global__ void scale(float *x, int n) { int i = blockIdx.x * blockDim.x "     \
    "+ threadIdx.x; if (i < n) x[i] *= 2.0f; }]]"
#define TILED_SRC                                                                                  \
    "[[template <int B> __global__ void tiled(float *x, int n) { int i = blockIdx.x * B + "        \
    "threadIdx.x; if (i < n) x[i] += 1.0f; }]]"
#define SCALE_ARGS                                                                                 \
    "  args = function(s) return { gb.tensor(\"f32\", { s.n }, \"output\"), gb.i32(s.n) } end,\n"
/* A tunable kernel: blocks of B threads, B in {64, 128, 256}. */
#define TILED_KERNEL(name)                                                                         \
    "local k = gb.kernel {\n"                                                                      \
    "  name = \"" name "\", source = " TILED_SRC ", entry = \"tiled<${B}>\",\n"                    \
    "  params = { B = { 64, 128, 256 } },\n" SCALE_ARGS                                            \
    "  grid = function(c, s) return { gb.cdiv(s.n, c.B) } end,\n"                                  \
    "  block = function(c, s) return { c.B } end,\n"                                               \
    "}\n"

#endif
