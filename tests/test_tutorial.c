/* docs/tutorial.md as a user follows it, without a GPU: every fenced block whose
 * info string names a file (```lua file=saxpy.lua) is written to an empty
 * folder, every ```sh check block is run there in order (this build's gpubench
 * and gpubench-tune first on PATH) and must exit 0, and where an ```output block
 * follows one, the command prints exactly that. So the page cannot fall behind
 * the tool. The blocks meant for a GPU (a plain ```sh) are not run. */
#include "scratch.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_BLOCKS = 64 };

typedef struct block {
    char info[64]; /* the fence's info string: "lua file=saxpy.lua", "sh check", ... */
    char *body;    /* its lines, each ending in '\n' */
} block;

/* The page's fenced blocks, in order. */
static int read_blocks(const char *page, block *out)
{
    int n = 0;
    const char *p = page;
    while ((p = strstr(p, "```")) && n < MAX_BLOCKS) {
        const char *info = p + 3, *eol = strchr(info, '\n');
        if (!eol) break;
        const char *body = eol + 1, *end = strstr(body, "\n```");
        if (!end) break;
        snprintf(out[n].info, sizeof out[n].info, "%.*s", (int)(eol - info), info);
        size_t len = (size_t)(end - body) + 1;
        out[n].body = malloc(len + 1);
        assert_non_null(out[n].body);
        memcpy(out[n].body, body, len);
        out[n].body[len] = '\0';
        n++;
        p = end + 4; /* past the closing fence */
        p = strchr(p, '\n') ? strchr(p, '\n') : p + strlen(p);
    }
    return n;
}

static void test_the_tutorial_runs_as_written(void **state)
{
    (void)state;
    char path[4096];
    source_dir(path, sizeof path);
    strncat(path, "/docs/tutorial.md", sizeof path - strlen(path) - 1);
    static char page[1 << 17];
    scratch_read(path, page, sizeof page);
    assert_true(strlen(page) > 1000);
    static block blocks[MAX_BLOCKS];
    int n = read_blocks(page, blocks);
    scratch_command *c = scratch_command_new("tutorial");
    assert_non_null(c);
    int files = 0, checks = 0, outputs = 0;
    for (int i = 0; i < n; i++) {
        const char *file = strstr(blocks[i].info, "file=");
        if (!file) continue;
        assert_int_equal(scratch_write(c->dir, file + 5, blocks[i].body), 0);
        files++;
    }
    for (int i = 0; i < n; i++) {
        if (strcmp(blocks[i].info, "sh check") != 0) continue;
        checks++;
        int status = scratch_command_run(c, "(PATH=\"%s/cli:$PATH\"; %s)", getenv("GB_BINARY_DIR"),
                                         blocks[i].body);
        if (status != 0)
            fail_msg("the tutorial's command\n%sexited %d:\n%s\n%s", blocks[i].body, status, c->out,
                     c->err);
        if (i + 1 < n && !strcmp(blocks[i + 1].info, "output")) {
            outputs++;
            if (strcmp(c->out, blocks[i + 1].body) != 0)
                fail_msg("the tutorial's command\n%sprinted\n%sinstead of\n%s", blocks[i].body,
                         c->out, blocks[i + 1].body);
        }
    }
    /* the page's files, its commands without a GPU, and one output at least */
    assert_true(files >= 4);
    assert_true(checks >= 3);
    assert_true(outputs >= 1);
    for (int i = 0; i < n; i++)
        free(blocks[i].body);
    scratch_command_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_tutorial_runs_as_written),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
