/* The suite's norms group (examples/suite/norms.lua, templates/layernorm.cuh,
 * rmsnorm.cuh, norms_common.cuh, norms_workers.cuh, norms_ref.cuh) as gpubench-tune
 * --compile-only sees it: every variant of the four kernels over the quick list, and
 * a fixed part of them over the nan and irregular lists in every dtype (all of them
 * with GB_TEST_FULL=1), compiles for sm_90a and keeps its row in registers (no more
 * than a few bytes of local memory), the spaces enumerate to the counts the module
 * promises, every launch the module asks for is one the kernels accept, the module
 * runs alone, and its lists hold what the suite asks of them. Runs the real binary from
 * GB_BINARY_DIR/cli; needs NVRTC, never a GPU. */
#include "suite_fixture.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int setup(void **state)
{
    return suite_setup(state, "norms");
}

/* The summary line of each kernel, in the module's order, over the quick list: the
 * layout of each shape (threads per row, whether the row fits, whether it is
 * aligned) is compiled in, so each shape brings its own variants; the forward
 * kernels come one row per block and as workers (PERSIST), with MINB = 2 only where
 * the largest block is 512 threads and VPT <= 4 (24 of 96 configurations rejected,
 * AHEAD 0 and 1); the backward kernels' constraint drops MINB = 2 with VPT = 4. */
static const char *const SUMMARIES[] = {
    "  489 compiled, 0 failed, 24 rejected by constraints in each of 8 shapes; NVRTC ",
    "  159 compiled, 0 failed, 8 rejected by constraints in each of 8 shapes; NVRTC ",
    "  489 compiled, 0 failed, 24 rejected by constraints in each of 8 shapes; NVRTC ",
    "  159 compiled, 0 failed, 8 rejected by constraints in each of 8 shapes; NVRTC ",
};

/* Fails unless every kernel's summary says none failed. */
static void assert_none_failed(const suite_fixture *f)
{
    suite_assert_exit_0(f);
    assert_null(strstr(f->out, "error 1"));
    for (const char *p = f->out; (p = strstr(p, " compiled, ")); p++)
        if (strncmp(p, " compiled, 0 failed", 19) != 0) fail_msg("a variant failed:\n%s", f->out);
}

/* The quick and nan lists' rows fit in registers; the irregular list's (some done in
 * chunks, element by element) only have to compile. The quick list compiles whole;
 * the nan and irregular lists, over a hundred layouts, a fixed part of each space
 * (suite_sweep_shard: all of it with GB_TEST_FULL=1). The full list's shapes compile
 * the same code with other layouts: test_every_launch_is_one_the_kernels_accept
 * checks their launches without compiling them (a thousand variants per kernel). */
static void test_every_variant_of_every_list_compiles_with_the_row_in_registers(void **state)
{
    suite_fixture *f = *state;
    suite_compile_lists(f, "quick");
    assert_none_failed(f);
    suite_assert_summaries(f, SUMMARIES, sizeof SUMMARIES / sizeof *SUMMARIES);
    suite_table t = suite_read_table(f->out);
    assert_int_equal(t.rows, 489 + 159 + 489 + 159);
    /* ptxas keeps some values in local memory in a few variants: up to 88 bytes with
     * NVRTC 13.0 in the backward kernels' MINB = 2 ones (64 registers a thread for
     * x, dy and w of 2 slots and the next row's x and dy), which are timed like the
     * rest and win some shapes anyway; the irregular list's chunked rows, element by
     * element, spill hundreds */
    if (t.most_local > 96) fail_msg("a variant uses %ld bytes of local memory", t.most_local);

    suite_compile_lists_sampled(f, "nan");
    assert_none_failed(f);
    t = suite_read_table(f->out);
    assert_true(t.rows > 0);
    if (t.most_local > 96) fail_msg("a variant uses %ld bytes of local memory", t.most_local);

    suite_compile_lists_sampled(f, "irregular");
    assert_none_failed(f);
}

static void test_the_module_alone_compiles_its_quick_shapes(void **state)
{
    suite_fixture *f = *state;
    suite_compile(f, f->module);
    suite_assert_exit_0(f);
    const char *names[] = {"norms_layernorm_fwd ", "norms_layernorm_bwd ", "norms_rmsnorm_fwd ",
                           "norms_rmsnorm_bwd "};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        assert_non_null(strstr(f->out, names[i]));
    assert_null(strstr(f->out, "error 1"));
    assert_non_null(strstr(f->err, "norms_rmsnorm_bwd [8/8] M=16384,N=4096,dtype=\"f32\""));
}

/* Every launch the module asks for, over all lists and configurations, is one the
 * kernels accept (block_ok in norms_common.cuh, bwd_block_ok in norms_workers.cuh): a
 * power-of-two TPR up to 32 in whole warps, or whole warps with one row per block (8
 * in backward blocks without clusters; the workers' clusters, backward and persistent
 * forward, always one row in whole warps); the grid a whole number of clusters
 * of at least CL; the backward blocks' shared memory within the SM's. The rows of the
 * quick, full and nan lists fit in registers; some irregular ones are done in chunks
 * (so that path is compiled and checked too). Prints "layouts ok". */
static const char LAYOUTS[] =
    "local entries = dofile(os.getenv('GB_SOURCE_DIR') .. '/examples/suite/norms.lua')\n"
    "local BYTES = { f32 = 4, f16 = 2, bf16 = 2 }\n"
    "for _, e in ipairs(entries) do\n"
    "  local k = e.kernel\n"
    "  local bwd = k.name:match('_bwd$') ~= nil\n"
    "  local chunked = 0\n"
    "  for _, list in ipairs { 'quick', 'full', 'irregular', 'nan' } do\n"
    "    for _, s in ipairs(e[list]) do\n"
    "      for _, vpt in ipairs(k.params.VPT) do\n"
    "        for _, cl in ipairs(k.params.CL) do\n"
    "        for _, persist in ipairs(k.params.PERSIST or { 0 }) do\n"
    "          local c = { VPT = vpt, CL = cl, MINB = 1, PERSIST = persist, AHEAD = 1 }\n"
    "          local d, b, g = k.defines(c, s), k.block(c, s), k.grid(c, s)\n"
    "          local tpr, rows, eff = b[1], b[2], d.NORMS_CL\n"
    "          local what = string.format('%s %s M=%d N=%d VPT=%d CL=%d PERSIST=%d: block %dx%d "
    "grid %d cluster %d', k.name, s.dtype, s.M, s.N, vpt, cl, persist, tpr, rows, g, eff)\n"
    "          assert(tpr * rows <= d.NORMS_MAXT and d.NORMS_MAXT <= 1024, what)\n"
    "          if (bwd or persist == 1) and eff > 1 then\n"
    "            assert(tpr % 32 == 0 and rows == 1, what)\n"
    "          elseif tpr <= 32 then\n"
    "            assert(tpr & (tpr - 1) == 0 and tpr * rows % 32 == 0 and rows <= 128, what)\n"
    "          else\n"
    "            assert(tpr % 32 == 0 and rows <= (bwd and 8 or 1), what)\n"
    "          end\n"
    "          assert(eff >= cl and (eff == 1 or eff == 2 or eff == 4 or eff == 8), what)\n"
    "          local worker = bwd or persist == 1\n"
    "          assert(worker and d.NORMS_AHEAD == 1 or not worker and d.NORMS_AHEAD >= 1, what)\n"
    "          assert(g >= eff and g % eff == 0, what)\n"
    "          if bwd then assert(k.smem(c, s) + 5 * 1024 <= 227 * 1024, what) end\n"
    "          local fits = tpr * vpt * eff * (16 // BYTES[s.dtype]) >= s.N\n"
    "          assert(fits or list == 'irregular', what .. ': the row does not fit')\n"
    "          if not fits then chunked = chunked + 1 end\n"
    "        end\n"
    "        end\n"
    "      end\n"
    "    end\n"
    "  end\n"
    "  assert(chunked > 0, k.name .. ': no irregular shape is done in chunks')\n"
    "end\n"
    "print('layouts ok')\n";

static void test_every_launch_is_one_the_kernels_accept(void **state)
{
    suite_fixture *f = *state;
    suite_compile_script(f, "layouts.lua", LAYOUTS);
    suite_assert_exit_0(f);
    assert_non_null(strstr(f->out, "layouts ok\n"));
}

/* What the suite asks of the lists, checked in Lua; prints "lists ok" or fails with
 * the first shape that breaks a rule. */
static const char LISTS[] =
    "local entries = dofile(os.getenv('GB_SOURCE_DIR') .. '/examples/suite/norms.lua')\n"
    "local NAMES = { 'norms_layernorm_fwd', 'norms_layernorm_bwd', 'norms_rmsnorm_fwd',\n"
    "  'norms_rmsnorm_bwd' }\n"
    "local DTYPES = { 'f32', 'f16', 'bf16' }\n"
    "local function has(list, pred) for _, s in ipairs(list) do if pred(s) then return true end "
    "end end\n"
    "local function at(list, m, n, dt) return has(list, function(s) return s.M == m and s.N == n "
    "and s.dtype == dt end) end\n"
    "assert(#entries == #NAMES, 'entries: ' .. #entries)\n"
    "for i, e in ipairs(entries) do\n"
    "  local name = e.kernel.name\n"
    "  assert(name == NAMES[i], name)\n"
    "  for _, l in ipairs { 'quick', 'full', 'irregular', 'nan' } do\n"
    "    assert(#e[l] > 0, name .. ': empty ' .. l)\n"
    "    for _, s in ipairs(e[l]) do\n"
    "      assert(s.dtype == 'f32' or s.dtype == 'f16' or s.dtype == 'bf16', name .. ': dtype')\n"
    "      assert(math.type(s.M) == 'integer' and s.M >= 1 and math.type(s.N) == 'integer' and "
    "s.N >= 1, name)\n"
    "    end\n"
    "  end\n"
    "  for _, mn in ipairs { { 16384, 4096 }, { 16384, 8192 }, { 8192, 16384 }, { 4096, 65536 },\n"
    "                        { 8192, 768 }, { 4096, 11008 } } do\n"
    "    assert(at(e.quick, mn[1], mn[2], 'bf16'), name .. ': quick lacks ' .. mn[1] .. 'x' .. "
    "mn[2])\n"
    "  end\n"
    "  for _, dt in ipairs { 'f16', 'f32' } do\n"
    "    assert(has(e.quick, function(s) return s.dtype == dt end), name .. ': quick ' .. dt)\n"
    "  end\n"
    "  for _, dt in ipairs(DTYPES) do\n"
    "    for _, n in ipairs { 768, 1024, 2048, 4096, 5120, 8192, 11008, 12288, 16384 } do\n"
    "      for _, m in ipairs { 4096, 8192, 16384 } do\n"
    "        assert(at(e.full, m, n, dt), name .. ': full lacks ' .. m .. 'x' .. n .. ' ' .. dt)\n"
    "      end\n"
    "    end\n"
    "    assert(has(e.nan, function(s) return s.dtype == dt end), name .. ': nan ' .. dt)\n"
    "  end\n"
    "  for _, n in ipairs { 1, 3, 767, 1000, 4097, 11008 } do\n"
    "    for _, m in ipairs { 1, 7, 131 } do\n"
    "      assert(at(e.irregular, m, n, 'bf16'), name .. ': irregular lacks ' .. m .. 'x' .. n)\n"
    "    end\n"
    "  end\n"
    "  for _, s in ipairs(e.nan) do\n"
    "    assert(s.plant == true and s.M >= 5 and s.N >= 8, name .. ': nan shape')\n"
    "  end\n"
    "  assert(not has(e.quick, function(s) return s.plant end), name .. ': quick plants')\n"
    "end\n"
    "print('lists ok')\n";

static void test_the_lists_hold_what_the_suite_asks(void **state)
{
    suite_fixture *f = *state;
    suite_compile_script(f, "lists.lua", LISTS);
    suite_assert_exit_0(f);
    assert_non_null(strstr(f->out, "lists ok\n"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_variant_of_every_list_compiles_with_the_row_in_registers),
        cmocka_unit_test(test_the_module_alone_compiles_its_quick_shapes),
        cmocka_unit_test(test_every_launch_is_one_the_kernels_accept),
        cmocka_unit_test(test_the_lists_hold_what_the_suite_asks),
    };
    return cmocka_run_group_tests(tests, setup, suite_teardown);
}
