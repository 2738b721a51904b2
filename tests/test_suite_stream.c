/* The stream group of the memory-bound suite (examples/suite/stream.lua with
 * templates/stream.cuh and stream_ref.cuh) as the suite meets it, without a GPU:
 * the module alone compiles its quick shapes, every shape list of every entry
 * compiles the whole space with no compile error (tests/data/suite_stream_check.lua),
 * the quick lists hold the shapes the performance goal is set on, and a misspelt
 * shape field is named. Runs the real gpubench-tune; needs NVRTC, never a GPU. */
#include "suite_fixture.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int count(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
        ++n;
    return n;
}

static int setup(void **state)
{
    return suite_setup(state, "stream");
}

/* Declarative use: the four kernels tune their quick shapes (f32 and bf16
 * sequential, f32 gather): nine distinct compiles for each of the three (UNROLL x
 * HINT; BLOCK and GRID change only the launch) and a reference per dtype, 29 rows
 * in each kernel's table; the constraint drops the persistent grids of UNROLL 1. */
static void test_the_module_alone_compiles_its_quick_shapes(void **state)
{
    suite_fixture *f = *state;
    suite_tune(f, f->module, "--compile-only", "--jobs", "2", "--cache", f->cache, (char *)NULL);
    assert_int_equal(f->status, 0);
    const char *kernels[] = {"stream_copy  (kernel", "stream_scale  (kernel", "stream_add  (kernel",
                             "stream_triad  (kernel"};
    for (size_t i = 0; i < sizeof kernels / sizeof *kernels; ++i)
        assert_non_null(strstr(f->out, kernels[i]));
    assert_int_equal(
        count(f->out, "  29 compiled, 0 failed, 6 rejected by constraints in each of 4 shapes; "),
        4);
    assert_int_equal(count(f->out, "error"), 0);
}

/* Every list (quick, full, irregular and, where this build plants NaN, nan) of
 * every entry: 36 configurations per shape, all the valid ones compiled, over all
 * four dtypes and five access patterns. */
static void test_every_list_compiles_the_whole_space_with_no_compile_error(void **state)
{
    suite_fixture *f = *state;
    char check[4096];
    snprintf(check, sizeof check, "%s/tests/data/suite_stream_check.lua", getenv("GB_SOURCE_DIR"));
    suite_tune(f, check, "--compile-only", "-q", "--jobs", "2", "--cache", f->cache, "--",
               f->module, "36", (char *)NULL);
    assert_string_equal(f->err, "");
    assert_int_equal(f->status, 0);
    assert_non_null(strstr(f->out, "suite check: 4 entries, "));
    assert_non_null(strstr(f->out, " shapes compiled, 36 configurations each; nan lists "));
}

/* The quick lists hold sequential f32 and bf16 arrays of at least 4x the H200's
 * 60 MB L2 (the goal's shapes), a small one and a gather; every full list reaches
 * 4 GiB per array and every nan shape plants. The script then compiles one tiny
 * shape, as a script that tunes nothing would tune the quick shapes of every
 * kernel it declared. */
static const char SHAPES[] =
    "local gb = require 'gpubench'\n"
    "local entries = dofile(arg[1])\n"
    "local bytes = { f32 = 4, f16 = 2, bf16 = 2, i8 = 1 }\n"
    "local function has(list, want)\n"
    "  for _, s in ipairs(list) do if want(s) then return true end end\n"
    "  return false\n"
    "end\n"
    "for e, entry in ipairs(entries) do\n"
    "  local function big(dtype) return function(s)\n"
    "    return s.access == 'seq' and s.dtype == dtype and s.n * bytes[dtype] >= 240e6 end end\n"
    "  assert(has(entry.quick, big('f32')) and has(entry.quick, big('bf16')), 'quick ' .. e)\n"
    "  assert(has(entry.quick, function(s) return s.n * bytes[s.dtype] <= 1 << 20 end))\n"
    "  assert(has(entry.quick, function(s) return s.access == 'gather' end))\n"
    "  assert(has(entry.full, function(s) return s.n * bytes[s.dtype] >= 4 << 30 end))\n"
    "  for _, s in ipairs(entry.nan) do assert(s.plant == true and s.dtype ~= 'i8') end\n"
    "end\n"
    "print('shapes ok')\n"
    "gb.tune(entries[1].kernel, { shapes = { { access = 'seq', dtype = 'f32', n = 1 } } })\n";

static void test_the_quick_lists_hold_the_goals_shapes(void **state)
{
    suite_fixture *f = *state;
    assert_int_equal(scratch_write(f->dir, "shapes.lua", SHAPES), 0);
    suite_tune(f, "shapes.lua", "--compile-only", "-q", "--cache", f->cache, "--", f->module,
               (char *)NULL);
    assert_string_equal(f->err, "");
    assert_int_equal(f->status, 0);
    assert_string_equal(f->out, "shapes ok\n");
}

/* A shape with a misspelt access pattern fails at the module's hook, naming the
 * field, the value and what it may be. */
static const char MISSPELT[] =
    "local gb = require 'gpubench'\n"
    "local copy = dofile(arg[1])[1].kernel\n"
    "gb.tune(copy, { shapes = { { access = 'strided2', dtype = 'f32', n = 64 } } })\n";

static void test_a_misspelt_access_is_named(void **state)
{
    suite_fixture *f = *state;
    assert_int_equal(scratch_write(f->dir, "misspelt.lua", MISSPELT), 0);
    suite_tune(f, "misspelt.lua", "--compile-only", "--cache", f->cache, "--", f->module,
               (char *)NULL);
    assert_int_equal(f->status, 2);
    assert_non_null(strstr(f->err, "stream: access must be seq, stride2, stride4, stride8 or "
                                   "gather, got strided2"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_module_alone_compiles_its_quick_shapes),
        cmocka_unit_test(test_every_list_compiles_the_whole_space_with_no_compile_error),
        cmocka_unit_test(test_the_quick_lists_hold_the_goals_shapes),
        cmocka_unit_test(test_a_misspelt_access_is_named),
    };
    return cmocka_run_group_tests(tests, setup, suite_teardown);
}
