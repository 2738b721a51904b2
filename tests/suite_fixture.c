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

int suite_setup(void **state, const char *group)
{
    suite_fixture *f = calloc(1, sizeof *f);
    if (!f) return -1;
    *state = f;
    f->out = malloc(SUITE_OUT_BYTES);
    f->err = malloc(SUITE_ERR_BYTES);
    snprintf(f->dir, sizeof f->dir, "/tmp/gb-test-suite-%s-XXXXXX", group);
    if (!f->out || !f->err || !mkdtemp(f->dir)) return -1;
    snprintf(f->cache, sizeof f->cache, "%s/cache", f->dir);
    snprintf(f->module, sizeof f->module, "%s/examples/suite/%s.lua", getenv("GB_SOURCE_DIR"),
             group);
    return chdir(f->dir) == 0 ? 0 : -1;
}

int suite_teardown(void **state)
{
    suite_fixture *f = *state;
    if (!f) return 0;
    if (f->dir[0] && chdir("/") == 0) scratch_remove(f->dir);
    free(f->out);
    free(f->err);
    free(f);
    return 0;
}

void suite_assert_exit_0(const suite_fixture *f)
{
    if (f->status == 0) return;
    size_t len = strlen(f->err);
    fail_msg("gpubench-tune exited %d: ...%s", f->status, f->err + (len > 2000 ? len - 2000 : 0));
}

void suite_compile_script(suite_fixture *f, const char *name, const char *text)
{
    assert_int_equal(scratch_write(f->dir, name, text), 0);
    suite_compile(f, name);
}

static const char ALL_LISTS[] =
    "local gb = require 'gpubench'\n"
    "local want = {}\n"
    "for name in arg[2]:gmatch('[^,]+') do want[name] = true end\n"
    "for _, e in ipairs(dofile(arg[1])) do\n"
    "  local shapes = {}\n"
    "  for _, name in ipairs { 'quick', 'full', 'irregular', 'nan' } do\n"
    "    if want[name] then\n"
    "      for _, s in ipairs(e[name]) do shapes[#shapes + 1] = s end\n"
    "    end\n"
    "  end\n"
    "  gb.tune(e.kernel, { shapes = shapes })\n"
    "end\n";

/* The whole space is shard 0 of 1. */
static void compile_lists(suite_fixture *f, const char *lists, const char *shard)
{
    assert_int_equal(scratch_write(f->dir, "all.lua", ALL_LISTS), 0);
    suite_tune(f, "all.lua", "--compile-only", "--arch", "sm_90a", "--jobs", "2", "--shard", shard,
               "--cache", f->cache, "--", f->module, lists, (char *)NULL);
}

void suite_compile_lists(suite_fixture *f, const char *lists)
{
    compile_lists(f, lists, "0/1");
}

const char *suite_sweep_shard(void)
{
    const char *full = getenv("GB_TEST_FULL");
    return full && *full && strcmp(full, "0") != 0 ? "0/1" : "0/4";
}

void suite_compile_lists_sampled(suite_fixture *f, const char *lists)
{
    compile_lists(f, lists, suite_sweep_shard());
}

void suite_assert_summaries(const suite_fixture *f, const char *const *summaries, size_t n)
{
    const char *at = f->out;
    for (size_t i = 0; i < n; i++) {
        const char *found = strstr(at, summaries[i]);
        if (!found) fail_msg("summary %zu not found after offset %td:\n%s", i, at - f->out, at);
        at = found + 1;
    }
}

suite_table suite_read_table(const char *out)
{
    suite_table t = {0, 0, 0};
    for (const char *line = out; line && *line; line = strchr(line, '\n'), line += !!line) {
        char config[256];
        long regs, local, spill, smem, ms;
        if (sscanf(line, "%255s %ld %ld %ld %ld %ld", config, &regs, &local, &spill, &smem, &ms) !=
                6 ||
            !strstr(line, " compiled"))
            continue;
        t.rows += 1;
        t.spilling += spill != 0;
        if (local > t.most_local) t.most_local = local;
    }
    return t;
}
