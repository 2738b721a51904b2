/*
 * Search strategies through the Lua binding, on the fake GPU of lua_fixture.h
 * (a variant "takes" its block size in microseconds, so the best is known): a
 * script's own strategy as a table with ask and tell, or as a function run as a
 * coroutine, and the errors it can make; a built-in strategy by name with a seed
 * and a budget, what the result says about the search, and what a later run with
 * a smaller or larger budget takes from the cache.
 */

#include "lua_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* Blocks of B threads, B = 32, 64, ..., 256: the fake times B = 32 fastest. */
#define WIDE_KERNEL                                                                                \
    "local k = gb.kernel {\n"                                                                      \
    "  name = \"wide\", source = " TILED_SRC ", entry = \"tiled<${B}>\",\n"                        \
    "  params = { B = { 256, 224, 192, 160, 128, 96, 64, 32 } },\n" SCALE_ARGS                     \
    "  grid = function(c, s) return { gb.cdiv(s.n, c.B) } end,\n"                                  \
    "  block = function(c, s) return { c.B } end,\n"                                               \
    "}\n"

static void test_a_table_strategy_is_asked_and_told(void **state)
{
    fixture *f = *state;
    use_fake_gpu(f);
    const char *text = REQUIRE WIDE_KERNEL
        "local asked, told = 0, {}\n"
        "local mine = { name = 'halves' }\n"
        "function mine.ask(n, history)\n"
        "  asked = asked + 1\n"
        "  assert(#history == #told, 'history holds every result told so far')\n"
        "  if asked == 1 then return { { B = 256 }, { B = 128 } } end\n"
        "  if asked == 2 then return { { B = 64 }, { B = 256 } } end -- 256 again: skipped\n"
        "  return {}\n"
        "end\n"
        "function mine.tell(results)\n"
        "  for _, r in ipairs(results) do told[#told + 1] = r end\n"
        "end\n"
        "local r = gb.tune(k, { shapes = { { n = 4096 } }, strategy = mine })[1]\n"
        "assert(#told == 3, #told)\n"
        "for _, t in ipairs(told) do\n"
        "  assert(t.status == 'ok' and math.abs(t.ms - t.config.B / 1000) < 1e-12)\n"
        "  assert(t.recorded == false)\n"
        "end\n"
        "assert(r.best.config.B == 64, r.best.config.B)\n"
        "assert(r.search.strategy == 'halves' and r.search.ended_by == 'strategy')\n"
        "assert(r.search.evals == 3 and r.search.complete == false)\n";
    EXPECT_OK(f, run(f, text));
}

static void test_a_function_strategy_runs_as_a_coroutine(void **state)
{
    fixture *f = *state;
    use_fake_gpu(f);
    const char *text = REQUIRE WIDE_KERNEL
        "local function mine(n, history)\n"
        "  assert(n >= 1 and #history == 0)\n"
        "  n, history = coroutine.yield({ { B = 160 } })\n"
        "  assert(#history == 1 and history[1].config.B == 160)\n"
        "  coroutine.yield({ { B = 96 } })\n"
        "end\n"
        "local r = gb.tune(k, { shapes = { { n = 4096 }, { n = 8192 } }, strategy = mine })\n"
        "for i = 1, 2 do -- a fresh coroutine for each shape\n"
        "  assert(r[i].best.config.B == 96 and r[i].search.evals == 2)\n"
        "  assert(r[i].search.strategy == 'lua' and r[i].search.ended_by == 'strategy')\n"
        "end\n";
    EXPECT_OK(f, run(f, text));
}

static void test_an_error_in_a_strategy_names_its_line(void **state)
{
    fixture *f = *state;
    use_fake_gpu(f);
    const char *text =
        REQUIRE WIDE_KERNEL "local mine = {}\n"
                            "function mine.ask(n, history)\n"
                            "  if #history > 0 then error('out of ideas') end -- HERE\n"
                            "  return { { B = 32 } }\n"
                            "end\n"
                            "gb.tune(k, { shapes = { { n = 4096 } }, strategy = mine })\n";
    EXPECT_ERROR_NAMING(f, run(f, text), line_of(text, "HERE"), "strategy lua: ask",
                        "out of ideas");
    const char *coroutine_text = REQUIRE WIDE_KERNEL
        "gb.tune(k, { shapes = { { n = 4096 } }, strategy = function(n, history)\n"
        "  coroutine.yield({ { B = 32 } })\n"
        "  local x = nil + 1 -- HERE\n"
        "end })\n";
    EXPECT_ERROR_NAMING(f, run(f, coroutine_text), line_of(coroutine_text, "HERE"), "strategy lua",
                        "arithmetic");
}

static void test_a_strategy_must_propose_configurations_of_the_space(void **state)
{
    fixture *f = *state;
    use_fake_gpu(f);
    EXPECT_ERROR_NAMING(f,
                        run(f, REQUIRE WIDE_KERNEL "gb.tune(k, { shapes = { { n = 64 } }, "
                                                   "strategy = { ask = function() return { { B "
                                                   "= 33 } } end } })\n"),
                        9, "B=33", "not a configuration of the kernel's space");
    EXPECT_ERROR_NAMING(f,
                        run(f, REQUIRE WIDE_KERNEL "gb.tune(k, { shapes = { { n = 64 } }, "
                                                   "strategy = { ask = function() return 7 end } "
                                                   "})\n"),
                        9, "ask must return a list");
    EXPECT_ERROR_AT(f, run(f, REQUIRE WIDE_KERNEL "gb.tune(k, { strategy = { tell = print } })\n"),
                    9, "needs an ask(n, history) function");
    EXPECT_ERROR_AT(f, run(f, REQUIRE WIDE_KERNEL "gb.tune(k, { strategy = 'psychic' })\n"), 9,
                    "psychic", "exhaustive, random, anneal, genetic, local");
    EXPECT_ERROR_AT(f, run(f, REQUIRE WIDE_KERNEL "gb.tune(k, { seed = -1 })\n"), 9,
                    "seed must be an integer >= 0");
}

/* A budgeted best answers a later run that asks for no more; a larger budget
 * goes on from the recorded trials; no budget on a small space is exhaustive. */
static void test_budgets_are_recorded_and_a_larger_one_goes_on(void **state)
{
    fixture *f = *state;
    use_cache(f);
    use_fake_gpu(f);
    const char *text = REQUIRE WIDE_KERNEL
        "local evals, cached, recorded = tonumber(arg[1]), arg[2] == 'cached', tonumber(arg[3])\n"
        "local budget = evals > 0 and { evals = evals } or nil\n"
        "local r = gb.tune(k, { shapes = { { n = 4096 } }, strategy = evals > 0 and 'random' "
        "or nil, seed = 5, budget = budget })[1]\n"
        "assert(r.cached == cached, 'cached')\n"
        "assert(r.search.seed == 5)\n"
        "if evals > 0 then\n"
        "  assert(r.search.strategy == 'random' and r.search.budget.evals >= evals)\n"
        "  if not cached then\n"
        "    assert(r.search.evals == evals and r.search.ended_by == 'evals', r.search.evals)\n"
        "    assert(r.search.recorded == recorded, r.search.recorded)\n"
        "  end\n"
        "else\n"
        "  assert(r.search.strategy == 'exhaustive' and r.search.complete)\n"
        "  assert(r.search.ended_by == 'space' and r.search.evals == 8)\n"
        "  assert(r.best.config.B == 32)\n"
        "end\n";
    char *a3[] = {"3", "new", "0"}, *a3c[] = {"3", "cached", "0"}, *a2c[] = {"2", "cached", "0"};
    char *a5[] = {"5", "new", "3"}, *all[] = {"0", "new", "5"};
    EXPECT_OK(f, run_script(f, "budget.lua", text, 3, a3));
    assert_int_equal(f->gpu.n_trials, 3);
    EXPECT_OK(f, run_script(f, "budget.lua", text, 3, a3c));
    EXPECT_OK(f, run_script(f, "budget.lua", text, 3, a2c));
    assert_int_equal(f->gpu.n_trials, 3); /* both answered by the cache */
    EXPECT_OK(f, run_script(f, "budget.lua", text, 3, a5));
    assert_int_equal(f->gpu.n_trials, 5); /* two more, the first three recorded */
    EXPECT_OK(f, run_script(f, "budget.lua", text, 3, all));
    assert_int_equal(f->gpu.n_trials, 8); /* the three left */
}

/* With --no-spills, a variant whose compile spills registers is recorded as
 * skipped, with the spill in its reason, and never reaches the GPU. */
static void test_no_spills_skips_a_spilling_variant(void **state)
{
    fixture *f = *state;
    use_fake_gpu(f);
    const char *text = REQUIRE
        "local k = gb.kernel { name = 'spill', entry = 'sp<${R}>', params = { R = {16, 64} },\n"
        "  options = { '-maxrregcount=24' },\n"
        "  source = [[template <int R> __global__ void sp(float *x, int n) {\n"
        "    float a[48];\n"
        "    #pragma unroll\n"
        "    for (int i = 0; i < 48; i++) a[i] = x[i * n + threadIdx.x];\n"
        "    float s = 0;\n"
        "    for (int j = 0; j < R; j++) {\n"
        "      #pragma unroll\n"
        "      for (int i = 0; i < 48; i++) { s += a[i] * s; a[i] = a[i] * 1.0001f + s; }\n"
        "    }\n"
        "    #pragma unroll\n"
        "    for (int i = 0; i < 48; i++) x[i * n + threadIdx.x] = a[i] + s;\n"
        "  }]],\n"
        "  args = function(s) return { gb.tensor('f32', {48 * 128}, 'output'), gb.i32(128) } end,\n"
        "  grid = 1, block = 128 }\n"
        "local r = gb.tune(k, { shapes = { { n = 1 } } })[1]\n"
        "assert(r.counts.skipped == 2 and r.best == nil, r.counts.skipped)\n";
    f->host.session.tuner.no_spills = true;
    EXPECT_OK(f, run(f, text));
    assert_int_equal(f->gpu.n_trials, 0);
    expect_text(read_back(f, f->out), "spills registers to local memory");
}

/* A kernel's reject list does the same for it alone: a spilling variant, and a
 * variant whose wgmmas ptxas serialised, are skipped, with ptxas's reason.
 * (test_nvrtc shows that the same loop without the touch is not taken for a
 * serialised one.) */
static void test_a_kernels_reject_list_skips_spills_and_serialised_wgmmas(void **state)
{
    fixture *f = *state;
    use_fake_gpu(f);
    const char *text = REQUIRE
        "local k = gb.kernel { name = 'rej', entry = 'loop<${TOUCH},${SPILL}>',\n"
        "  params = { TOUCH = {0, 1}, SPILL = {0, 1} },\n"
        "  constraints = { function(c) return c.TOUCH + c.SPILL == 1 end },\n"
        "  reject = { 'spills', 'serialized_wgmma' },\n"
        "  source = [[#include \"wgmma_ops.cuh\"\n"
        "  template <int TOUCH, int SPILL> __global__ void\n"
        "  __launch_bounds__(SPILL ? 1024 : 128, SPILL ? 2 : 1) loop(float *x, int n) {\n"
        "    if constexpr (SPILL) {\n" /* 48 live values in 32 registers */
        "      float a[48];\n"
        "      #pragma unroll\n"
        "      for (int i = 0; i < 48; i++) a[i] = x[i * n + threadIdx.x];\n"
        "      float s = 0;\n"
        "      for (int j = 0; j < n; j++) {\n"
        "        #pragma unroll\n"
        "        for (int i = 0; i < 48; i++) { s += a[i] * s; a[i] = a[i] * 1.0001f + s; }\n"
        "      }\n"
        "      #pragma unroll\n"
        "      for (int i = 0; i < 48; i++) x[i * n + threadIdx.x] = a[i] + s;\n"
        "    } else {\n" /* TOUCH: an accumulator written while its wgmma is in flight */
        "      float d[32] = {0};\n" /* run-time descriptors: ptxas 13.0 crashes on constant ones */
        "      for (int i = 0; i < n; i++) {\n"
        "        asm volatile(\"wgmma.fence.sync.aligned;\" ::: \"memory\");\n"
        "        mma<0, 0>(wgmma_shape<wgmma_bf16, 64>{}, d, n, n, 1);\n"
        "        if (TOUCH) d[i % 32] += 1.0f;\n"
        "        asm volatile(\"wgmma.commit_group.sync.aligned;\" ::: \"memory\");\n"
        "        asm volatile(\"wgmma.wait_group.sync.aligned 0;\" ::: \"memory\");\n"
        "      }\n"
        "      for (int i = 0; i < 32; i++) x[threadIdx.x * 32 + i] = d[i];\n"
        "    }\n"
        "  }]],\n"
        "  args = function(s) return { gb.tensor('f32', {48 * 128}, 'output'), gb.i32(128) } end,\n"
        "  grid = 1, block = 128 }\n"
        "local r = gb.tune(k, { shapes = { { n = 1 } } })[1]\n"
        "assert(r.counts.skipped == 2 and r.best == nil, r.counts.skipped)\n";
    EXPECT_OK(f, run(f, text));
    assert_int_equal(f->gpu.n_trials, 0);
    const char *out = read_back(f, f->out);
    expect_text(out, "the kernel's reject lists spills");
    expect_text(out, "wgmma.mma_async instructions are serialized due to");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_a_table_strategy_is_asked_and_told, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_function_strategy_runs_as_a_coroutine, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_an_error_in_a_strategy_names_its_line, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_strategy_must_propose_configurations_of_the_space,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_budgets_are_recorded_and_a_larger_one_goes_on, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_no_spills_skips_a_spilling_variant, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_a_kernels_reject_list_skips_spills_and_serialised_wgmmas, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
