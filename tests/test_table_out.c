/*
 * The terminal table (report/outputs/table_out.c) on the fixed run: golden files for the
 * box-drawn and the --ascii forms, colour only when asked for, and a saved run's
 * kernels printed as groups of their own.
 */
#include "report/output.h"
#include "report_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* The table output's text for the fixture (free it). */
static char *render(const gb_table_opts *opts)
{
    gb_report r;
    report_fixture(&r);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_non_null(out);
    gb_output *o = NULL;
    gb_err err = {0};
    assert_int_equal(gb_output_table(out, opts, &o, &err), GB_OK);
    assert_int_equal(gb_output_render(o, &r, &err), GB_OK);
    gb_output_destroy(o);
    fclose(out);
    gb_report_free(&r);
    return text;
}

static void test_the_table_draws_boxes_with_the_figures_of_every_shape(void **state)
{
    (void)state;
    char *text = render(&(gb_table_opts){0});
    report_fixture_golden(text, "run.txt");
    free(text);
}

static void test_ascii_uses_plain_characters_only(void **state)
{
    (void)state;
    char *text = render(&(gb_table_opts){.ascii = true});
    for (const unsigned char *p = (const unsigned char *)text; *p; p++)
        assert_true(*p < 0x80);
    report_fixture_golden(text, "run-ascii.txt");
    free(text);
}

static void test_colour_only_when_asked_for(void **state)
{
    (void)state;
    char *plain = render(&(gb_table_opts){0});
    char *color = render(&(gb_table_opts){.color = true});
    assert_null(strchr(plain, '\033'));
    assert_non_null(strstr(color, "\033[32m4.97x\033[0m")); /* the speedup, green */
    assert_non_null(strstr(color, "\033[31m(no valid variant)\033[0m"));
    free(plain);
    free(color);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_table_draws_boxes_with_the_figures_of_every_shape),
        cmocka_unit_test(test_ascii_uses_plain_characters_only),
        cmocka_unit_test(test_colour_only_when_asked_for),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
