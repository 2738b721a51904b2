/* The softmax group of the suite (examples/suite/softmax.lua, templates/softmax.cuh)
 * without a GPU: every variant of the quick shapes and a fixed part of the variants
 * of the irregular lists (all dtypes, odd widths, clusters, streamed rows; every
 * variant with GB_TEST_FULL=1) compiles with NVRTC for sm_90a, the
 * spaces have the sizes the module promises, and every layout of every list (the
 * full sweep included) covers its rows. Runs the real gpubench-tune. */
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

/* The kernels the module returns, in its order. */
static const char *const KERNELS[] = {
    "softmax_fwd",        "softmax_bwd",      "softmax_causal_fwd",
    "softmax_causal_bwd", "softmax_long_fwd", "softmax_fp8_fwd",
};
enum { N_KERNELS = sizeof KERNELS / sizeof *KERNELS };

static int setup(void **state)
{
    return suite_setup(state, "softmax");
}

/* The compile table of kernel `name`: from its title line to the next blank line,
 * copied into buf ("" when the output has no table for it). */
static const char *table_of(const suite_fixture *f, const char *name, char *buf, size_t n)
{
    char title[128];
    snprintf(title, sizeof title, "\n%s  (kernel ", name);
    buf[0] = '\0';
    const char *start = strstr(f->out, title);
    if (!start) return buf;
    const char *end = strstr(start + 1, "\n\n");
    size_t len = end ? (size_t)(end - start) : strlen(start);
    if (len >= n) len = n - 1;
    memcpy(buf, start, len);
    buf[len] = '\0';
    return buf;
}

/* Every kernel's table says that nothing failed to compile. */
static void assert_every_table_compiled(const suite_fixture *f)
{
    static char table[1 << 16];
    for (int i = 0; i < N_KERNELS; i++) {
        table_of(f, KERNELS[i], table, sizeof table);
        if (!strstr(table, " 0 failed, ")) fail_msg("%s:\n%s", KERNELS[i], table);
        assert_null(strstr(table, "error"));
    }
}

/* What the module run alone compiles: the quick shapes, bf16 and fp8. The counts
 * are the distinct compiles (configurations whose layouts coincide share one). */
static void test_the_quick_shapes_compile_every_variant(void **state)
{
    suite_fixture *f = *state;
    suite_tune(f, f->module, "--compile-only", "--arch", "sm_90a", "--jobs", "2", "--cache",
               f->cache, (char *)NULL);
    if (f->status != 0) fail_msg("exit %d\n%s", f->status, f->err);
    assert_every_table_compiled(f);
    static char t[1 << 16];
    assert_non_null(
        strstr(table_of(f, "softmax_fwd", t, sizeof t),
               "141 compiled, 0 failed, 42 rejected by constraints in each of 4 shapes"));
    assert_non_null(strstr(table_of(f, "softmax_bwd", t, sizeof t),
                           "77 compiled, 0 failed, 2 rejected by constraints in each of 4 shapes"));
    assert_non_null(strstr(table_of(f, "softmax_causal_fwd", t, sizeof t),
                           "13 compiled, 0 failed, 0 rejected by constraints"));
    assert_non_null(strstr(table_of(f, "softmax_causal_bwd", t, sizeof t),
                           "12 compiled, 0 failed, 1 rejected by constraints"));
    assert_non_null(strstr(table_of(f, "softmax_fp8_fwd", t, sizeof t),
                           "23 compiled, 0 failed, 2 rejected by constraints"));
    /* the long rows of 256k: clusters of 8 blocks (sm_90a) */
    assert_non_null(strstr(table_of(f, "softmax_long_fwd", t, sizeof t), "BLOCK=1024,EPT=8"));
}

/* Tunes each entry's list named by the script argument. */
static const char LISTS[] = "local gb = require 'gpubench'\n"
                            "local module, list = arg[1], arg[2]\n"
                            "for _, e in ipairs(dofile(module)) do\n"
                            "  gb.tune(e.kernel, { shapes = e[list] })\n"
                            "end\n";

/* f32, f16 and fp8 beside bf16; widths of 1, 3, 1000, 4097, 65537 (element-wise
 * loads, sub-warp teams, clusters, streamed rows); causal heads of 1 and 17. Every
 * shape, over a fixed part of each space (suite_sweep_shard: all of it with
 * GB_TEST_FULL=1). */
static void test_the_irregular_lists_compile_in_every_dtype(void **state)
{
    suite_fixture *f = *state;
    assert_int_equal(scratch_write(f->dir, "lists.lua", LISTS), 0);
    suite_tune(f, "lists.lua", "--compile-only", "--arch", "sm_90a", "--jobs", "2", "--shard",
               suite_sweep_shard(), "--cache", f->cache, "--", f->module, "irregular",
               (char *)NULL);
    if (f->status != 0) fail_msg("exit %d\n%s", f->status, f->err);
    assert_every_table_compiled(f);
}

/* Walks every list of every entry over the kernel's whole space and checks what the
 * template relies on: the threads of a row cover it (or it is streamed), the grid
 * covers the rows, clusters are portable, the kept values fit the registers. Prints
 * each kernel's space size and how many layouts were checked. */
static const char LAYOUTS[] =
    "local gb = require 'gpubench'\n"
    "local VEC = { [0] = 4, [1] = 8, [2] = 8, [3] = 16 }\n"
    "local function configs(k)\n"
    "  local names, out = {}, {}\n"
    "  for n in pairs(k.params) do names[#names + 1] = n end\n"
    "  table.sort(names)\n"
    "  local function walk(i, c)\n"
    "    if i > #names then\n"
    "      for _, ok in ipairs(k.constraints) do if not ok(c) then return end end\n"
    "      out[#out + 1] = { BLOCK = c.BLOCK, EPT = c.EPT, AHEAD = c.AHEAD, WORKERS = c.WORKERS }\n"
    "      return\n"
    "    end\n"
    "    for _, v in ipairs(k.params[names[i]]) do c[names[i]] = v; walk(i + 1, c) end\n"
    "  end\n"
    "  walk(1, {})\n"
    "  return out\n"
    "end\n"
    "local WVEC = { f32 = 4, f16 = 8, bf16 = 8 }\n"
    "local function check_workers(k, s, c, d, g, where)\n"
    "  local rows, cols, vec = s.rows, s.cols, WVEC[s.dtype]\n"
    "  assert(not s.S and vec and d.GB_SM_WORKERS == 1 and d.NORMS_PERSIST == 1, where .. ': "
    "kind')\n"
    "  local cl, tpr, vpt, b = d.NORMS_CL, d.NORMS_TPR, d.GB_SM_E, k.block(c, s)\n"
    "  local gpb = b[2]\n"
    "  assert(vpt == c.EPT // vec and c.EPT * c.BLOCK <= 65536, where .. ': registers')\n"
    "  assert(cl == 1 or cl == 2 or cl == 4 or cl == 8, where .. ': cluster')\n"
    "  assert(b[1] == tpr and tpr * gpb <= c.BLOCK and d.NORMS_MAXT == c.BLOCK, where .. ': "
    "block')\n"
    "  if tpr <= 32 then assert(cl == 1 and tpr & (tpr - 1) == 0 and tpr * gpb == 128, where .. ': "
    "rows')\n"
    "  else assert(tpr % 32 == 0 and gpb == 1, where .. ': warps') end\n"
    "  local fits = tpr * vpt * cl * vec >= cols\n"
    "  assert(d.NORMS_FITS == (fits and 1 or 0) and (fits or cl == 8), where .. ': fits')\n"
    "  assert(d.NORMS_ALIGNED == (cols % vec == 0 and 1 or 0), where .. ': aligned')\n"
    "  assert(g % cl == 0 and g >= cl and g // cl <= (rows + gpb - 1) // gpb, where .. ': grid')\n"
    "  assert(d.NORMS_AHEAD == c.AHEAD, where .. ': ahead')\n"
    "end\n"
    "local function check(k, s, c)\n"
    "  local rows, cols = s.rows, s.cols\n"
    "  if s.S then rows, cols = s.B * s.H * s.S, s.S end\n"
    "  local d, g = k.defines(c, s), k.grid(c, s)\n"
    "  local where = k.name .. ' ' .. s.dtype .. ' ' .. rows .. 'x' .. cols .. ' BLOCK=' ..\n"
    "    c.BLOCK .. ' EPT=' .. c.EPT .. ' AHEAD=' .. c.AHEAD .. ' WORKERS=' .. c.WORKERS\n"
    "  assert(k.bytes(s) > 0 and #k.args(s) == 5, where .. ': args')\n"
    "  if c.WORKERS == 1 then return check_workers(k, s, c, d, g, where) end\n"
    "  local team, cl, e, vec = d.GB_SM_TEAM, d.GB_SM_CL, d.GB_SM_E, VEC[d.GB_SM_DTYPE]\n"
    "  assert(d.GB_SM_STREAM == 1 or team * cl * e * vec >= cols, where .. ': row not covered')\n"
    "  assert(team >= 1 and team & (team - 1) == 0 and c.BLOCK % team == 0, where .. ': team')\n"
    "  assert(cl >= 1 and cl <= 8 and (cl == 1 or team == c.BLOCK), where .. ': cluster')\n"
    "  assert(e >= 1 and e <= 32, where .. ': bucket')\n"
    "  local cap = c.BLOCK >= 1024 and 32 or 64\n"
    "  assert(e * vec * d.GB_SM_OP <= cap, where .. ': registers')\n"
    "  assert(d.GB_SM_VEC == ((cols * 16 // vec) % 16 == 0 and 1 or 0), where .. ': vec')\n"
    "  local per = c.BLOCK // team\n"
    "  if cl > 1 then assert(g == rows * cl, where .. ': grid')\n"
    "  else assert(g * per >= rows and (g - 1) * per < rows, where .. ': grid') end\n"
    "  assert(g < 1 << 31 and k.block(c, s) == c.BLOCK, where .. ': launch')\n"
    "  assert((c.AHEAD == 1) == (d.GB_SM_AHEAD >= 1) and d.GB_SM_AHEAD >= 0, where .. ': ahead')\n"
    "  assert(not s.S or d.GB_SM_AHEAD == 0, where .. ': causal rows are not prefetched')\n"
    "end\n"
    "for _, e in ipairs(dofile(arg[1])) do\n"
    "  local k, space, n = e.kernel, configs(e.kernel), 0\n"
    "  for _, list in ipairs { 'quick', 'full', 'irregular', 'nan' } do\n"
    "    assert(#e[list] > 0, k.name .. ': empty list ' .. list)\n"
    "    for _, s in ipairs(e[list]) do\n"
    "      assert(s.dtype and s.policy, k.name .. ': a shape without dtype or policy')\n"
    "      assert(list ~= 'nan' or s.plant, k.name .. ': a nan shape without plant')\n"
    "      for _, c in ipairs(space) do check(k, s, c); n = n + 1 end\n"
    "    end\n"
    "  end\n"
    "  print(string.format('%s: %d configurations, %d layouts', k.name, #space, n))\n"
    "end\n"
    "io.stdout:flush()\n"
    "os.exit(0) -- nothing to tune\n";

static void test_every_layout_of_every_list_covers_its_rows(void **state)
{
    suite_fixture *f = *state;
    assert_int_equal(scratch_write(f->dir, "layouts.lua", LAYOUTS), 0);
    suite_tune(f, "layouts.lua", "--compile-only", "--cache", f->cache, "--", f->module,
               (char *)NULL);
    if (f->status != 0) fail_msg("exit %d\n%s", f->status, f->err);
    assert_non_null(strstr(f->out, "softmax_fwd: 38 configurations, "));
    assert_non_null(strstr(f->out, "softmax_bwd: 22 configurations, "));
    assert_non_null(strstr(f->out, "softmax_causal_fwd: 12 configurations, "));
    assert_non_null(strstr(f->out, "softmax_causal_bwd: 11 configurations, "));
    assert_non_null(strstr(f->out, "softmax_long_fwd: 8 configurations, "));
    assert_non_null(strstr(f->out, "softmax_fp8_fwd: 22 configurations, "));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_layout_of_every_list_covers_its_rows),
        cmocka_unit_test(test_the_quick_shapes_compile_every_variant),
        cmocka_unit_test(test_the_irregular_lists_compile_in_every_dtype),
    };
    return cmocka_run_group_tests(tests, setup, suite_teardown);
}
