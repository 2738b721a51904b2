/* The suite's vector group (examples/suite/vector.lua, templates/vector.cuh,
 * templates/vector_ref.cuh) as gpubench-tune --compile-only sees it: every
 * variant of every kernel, over every shape list and dtype, compiles for sm_90a
 * without spilling, the spaces enumerate to the counts the module promises, the
 * module runs alone, and its lists hold what the suite asks of them. Runs the
 * real binary from GB_BINARY_DIR/cli; needs NVRTC, never a GPU. */
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
    return suite_setup(state, "vector");
}

/* The summary line of each kernel, in the module's order: its variants over the
 * dtypes it has plus one reference per dtype; the reductions' spaces are 48
 * configurations of which the constraints keep 16 (sum, dot) or 24 of which they
 * keep 8 (nrm2, max); the shape counts are those of the four lists. */
static const char *const SUMMARIES[] = {
    "  35 compiled, 0 failed, 0 rejected by constraints; NVRTC ",
    "  21 compiled, 0 failed, 0 rejected by constraints; NVRTC ",
    "  35 compiled, 0 failed, 0 rejected by constraints; NVRTC ",
    "  21 compiled, 0 failed, 0 rejected by constraints; NVRTC ",
    "  85 compiled, 0 failed, 32 rejected by constraints in each of 88 shapes; NVRTC ",
    "  85 compiled, 0 failed, 32 rejected by constraints in each of 87 shapes; NVRTC ",
    "  27 compiled, 0 failed, 16 rejected by constraints in each of 54 shapes; NVRTC ",
    "  27 compiled, 0 failed, 16 rejected by constraints in each of 52 shapes; NVRTC ",
};

static void test_every_variant_of_every_list_compiles_without_spilling(void **state)
{
    suite_fixture *f = *state;
    suite_compile_lists(f, "quick,full,irregular,nan");
    suite_assert_exit_0(f);
    suite_assert_summaries(f, SUMMARIES, sizeof SUMMARIES / sizeof *SUMMARIES);
    assert_null(strstr(f->out, "error 1"));
    const suite_table t = suite_read_table(f->out);
    assert_int_equal(t.rows, 35 + 21 + 35 + 21 + 85 + 85 + 27 + 27);
    assert_int_equal(t.spilling, 0);
}

static void test_the_module_alone_compiles_its_quick_shapes(void **state)
{
    suite_fixture *f = *state;
    suite_compile(f, f->module);
    suite_assert_exit_0(f);
    const char *names[] = {"vector_axpy ", "vector_scal ",       "vector_add ",
                           "vector_mul ",  "vector_reduce_sum ", "vector_dot ",
                           "vector_nrm2 ", "vector_reduce_max "};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        assert_non_null(strstr(f->out, names[i]));
    assert_null(strstr(f->out, "compiled, 1 failed"));
    /* the reductions' quick lists: 1 GiB f32 and bf16, 1 MiB f32, 1 GiB fp8 for sum */
    assert_non_null(strstr(f->out, "rejected by constraints in each of 4 shapes"));
    assert_non_null(strstr(f->out, "rejected by constraints in each of 3 shapes"));
}

/* What the suite asks of the lists, checked in Lua; prints "lists ok" or fails
 * with the first shape that breaks a rule. */
static const char LISTS[] =
    "local entries = dofile(os.getenv('GB_SOURCE_DIR') .. '/examples/suite/vector.lua')\n"
    "local BYTES = { f32 = 4, f16 = 2, bf16 = 2, fp8_e4m3 = 1, fp8_e5m2 = 1 }\n"
    "local POLICY = { f32 = 'fp32', f16 = 'fp16@accum(fp32)', bf16 = 'bf16@accum(fp32)',\n"
    "  fp8_e4m3 = 'fp8_e4m3@accum(fp32)', fp8_e5m2 = 'fp8_e5m2@accum(fp32)' }\n"
    "local NAMES = { 'axpy', 'scal', 'add', 'mul', 'reduce_sum', 'dot', 'nrm2', 'reduce_max' }\n"
    "assert(#entries == #NAMES, 'entries: ' .. #entries)\n"
    "local function has(list, pred) for _, s in ipairs(list) do if pred(s) then return true end "
    "end end\n"
    "for i, e in ipairs(entries) do\n"
    "  local name = e.kernel.name\n"
    "  assert(name == 'vector_' .. NAMES[i], name)\n"
    "  local reduction = i >= 5\n"
    "  for _, l in ipairs { 'quick', 'full', 'irregular', 'nan' } do\n"
    "    assert(#e[l] > 0, name .. ': empty ' .. l)\n"
    "    for _, s in ipairs(e[l]) do\n"
    "      assert(BYTES[s.dtype] and s.policy == POLICY[s.dtype], name .. ': dtype/policy')\n"
    "      assert(math.type(s.n) == 'integer' and s.n >= 0, name .. ': n')\n"
    "    end\n"
    "  end\n"
    "  for dt in pairs(BYTES) do\n"
    "    if has(e.full, function(s) return s.dtype == dt end) then\n"
    "      for mib = 0, 12, 2 do\n"
    "        assert(has(e.full, function(s) return s.dtype == dt and s.n * BYTES[dt] == (1 << 20) "
    "<< mib end),\n"
    "          name .. ': full lacks ' .. (1 << mib) .. ' MiB of ' .. dt)\n"
    "      end\n"
    "      local w = 16 // BYTES[dt]\n"
    "      assert(has(e.irregular, function(s) return s.dtype == dt and s.n % w ~= 0 and s.n > "
    "4096 * w end), name .. ': irregular ' .. dt)\n"
    "      assert(has(e.irregular, function(s) return s.dtype == dt and s.n == 1 end), name)\n"
    "      assert(has(e.nan, function(s) return s.dtype == dt end), name .. ': nan ' .. dt)\n"
    "    end\n"
    "  end\n"
    "  assert(reduction == (has(e.irregular, function(s) return s.n == 0 end) or false), name .. "
    "': n = 0')\n"
    "  for _, s in ipairs(e.nan) do assert(s.plant == true and s.n >= 37, name .. ': plant') end\n"
    "  if i == 1 or i == 5 or i == 6 or i == 7 then\n"
    "    assert(has(e.quick, function(s) return s.dtype == 'f32' and s.n == 1 << 28 end), name)\n"
    "    assert(has(e.quick, function(s) return s.dtype == 'bf16' end), name .. ': bf16')\n"
    "    assert(has(e.quick, function(s) return s.n * BYTES[s.dtype] <= 4 << 20 end), name)\n"
    "  end\n"
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
        cmocka_unit_test(test_every_variant_of_every_list_compiles_without_spilling),
        cmocka_unit_test(test_the_module_alone_compiles_its_quick_shapes),
        cmocka_unit_test(test_the_lists_hold_what_the_suite_asks),
    };
    return cmocka_run_group_tests(tests, setup, suite_teardown);
}
