/* Reading whole files (base/file.h): plain and gzipped alike, and a clear error for
 * a missing file, a directory, a damaged gzip stream and a file over the limit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "base/file.h"
#include "scratch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static const char TEXT[] = "{\"benchmarks\": [1, 2, 3]}\n";

/* The tests' folder: the scratch fixture's (tests/scratch.h), removed after. */
static int setup(void **state)
{
    *state = scratch_command_new("file");
    return *state ? 0 : -1;
}

static int teardown(void **state)
{
    scratch_command_free(*state);
    return 0;
}

static const char *folder(void **state)
{
    return ((scratch_command *)*state)->dir;
}

static void write_plain(const char *path, const void *bytes, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

static void write_gzip(const char *path, const char *text)
{
    gzFile gz = gzopen(path, "wb");
    assert_non_null(gz);
    assert_int_equal(gzwrite(gz, text, (unsigned)strlen(text)), (int)strlen(text));
    assert_int_equal(gzclose(gz), Z_OK);
}

static void test_a_plain_and_a_gzipped_file_read_the_same(void **state)
{
    char plain[128], packed[128];
    snprintf(plain, sizeof plain, "%s/run.json", folder(state));
    snprintf(packed, sizeof packed, "%s/run.json.gz", folder(state));
    write_plain(plain, TEXT, strlen(TEXT));
    write_gzip(packed, TEXT);
    const char *paths[] = {plain, packed};
    for (int i = 0; i < 2; i++) {
        char *text = NULL;
        size_t len = 0;
        gb_err err = {0};
        assert_int_equal(gb_read_file(paths[i], 1 << 20, "", &text, &len, &err), GB_OK);
        assert_int_equal(len, strlen(TEXT));
        assert_string_equal(text, TEXT);
        free(text);
    }
}

static void test_an_empty_file_is_an_empty_string(void **state)
{
    char path[128];
    snprintf(path, sizeof path, "%s/empty.json", folder(state));
    write_plain(path, "", 0);
    char *text = NULL;
    size_t len = 7;
    gb_err err = {0};
    assert_int_equal(gb_read_file(path, 16, "", &text, &len, &err), GB_OK);
    assert_int_equal(len, 0);
    assert_string_equal(text, "");
    free(text);
}

static void expect_error(const char *path, size_t max, int code, const char *message)
{
    char *text = NULL;
    size_t len = 0;
    gb_err err = {0};
    assert_int_equal(gb_read_file(path, max, "table ", &text, &len, &err), code);
    assert_null(text);
    if (!strstr(err.msg, message)) fail_msg("expected '%s' in '%s'", message, err.msg);
}

/* Each error names the file, after the caller's prefix, and says what is wrong. */
static void test_what_cannot_be_read_is_named(void **state)
{
    const char *dir = folder(state);
    char path[128], msg[256];
    snprintf(path, sizeof path, "%s/missing.json", dir);
    snprintf(msg, sizeof msg, "table %s: No such file or directory", path);
    expect_error(path, 1 << 20, GB_EIO, msg);
    snprintf(msg, sizeof msg, "table %s: is a directory", dir);
    expect_error(dir, 1 << 20, GB_EIO, msg);

    /* a gzip stream cut short: zlib's words, without its own name for the stream */
    char packed[128], cut[128];
    snprintf(packed, sizeof packed, "%s/whole.json.gz", dir);
    snprintf(cut, sizeof cut, "%s/cut.json.gz", dir);
    write_gzip(packed, TEXT);
    char bytes[256];
    FILE *f = fopen(packed, "rb");
    assert_non_null(f);
    size_t n = fread(bytes, 1, sizeof bytes, f);
    fclose(f);
    write_plain(cut, bytes, n / 2);
    snprintf(msg, sizeof msg, "table %s: a damaged gzip stream (unexpected end of file)", cut);
    expect_error(cut, 1 << 20, GB_EIO, msg);

    /* over the limit once inflated */
    snprintf(msg, sizeof msg, "table %s: more than the 0 MiB it may hold", packed);
    expect_error(packed, 8, GB_ELIMIT, msg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_plain_and_a_gzipped_file_read_the_same),
        cmocka_unit_test(test_an_empty_file_is_an_empty_string),
        cmocka_unit_test(test_what_cannot_be_read_is_named),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
