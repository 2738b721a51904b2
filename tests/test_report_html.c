/*
 * The HTML report (report/outputs/html_out.c): the page is one file that loads nothing,
 * the run's text cannot end its script elements, a missing Chart.js fails at
 * begin naming the file, and headless Chromium draws every chart without a script
 * error (the page's data-charts-drawn / data-chart-error marker) and takes a
 * screenshot. The Chromium tests skip where it is not installed.
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
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#ifndef GB_CHART_JS
#define GB_CHART_JS "/usr/share/javascript/chart.js/chart.min.js"
#endif

/* The fixture's charts: gemm_f32 has a performance chart, a roofline and a spread
 * for its 1024 and 4096 shapes (2048 timed nothing); copy_f32 has a performance
 * chart and a spread, and no roofline (its flops are unknown). */
#define FIXTURE_CHARTS 6

static const char *evil = "</script><script>alert(1)</script>";

static void build_path(char *out, size_t size, const char *name)
{
    const char *bin = getenv("GB_BINARY_DIR");
    assert_non_null(bin);
    snprintf(out, size, "%s/tests/html/%s", bin, name);
}

/* Renders the fixture (its first kernel renamed when kernel is not NULL) to
 * build/tests/html/NAME and returns the page's text. */
static char *render(const char *name, const char *kernel, char *path, size_t size)
{
    build_path(path, size, "");
    mkdir(path, 0777);
    build_path(path, size, name);
    gb_report r;
    report_fixture(&r);
    if (kernel) {
        free((char *)r.entries[0].kernel);
        r.entries[0].kernel = strdup(kernel);
    }
    gb_output *o;
    gb_err err = {0};
    assert_int_equal(gb_output_html(path, GB_CHART_JS, &o, &err), GB_OK);
    int rc = gb_output_render(o, &r, &err);
    if (rc) print_error("%s\n", err.msg);
    assert_int_equal(rc, GB_OK);
    gb_output_destroy(o);
    gb_report_free(&r);
    char *text = report_fixture_read(path);
    assert_non_null(text);
    return text;
}

static int count(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = strstr(text, what); p; p = strstr(p + 1, what))
        n++;
    return n;
}

/* The page less Chart.js's own text (whose licence comment names its web site). */
static char *without_chart_js(const char *page)
{
    char *js = report_fixture_read(GB_CHART_JS);
    assert_non_null(js);
    const char *at = strstr(page, js);
    assert_non_null(at);
    size_t before = (size_t)(at - page), len = strlen(js);
    char *rest = malloc(strlen(page) - len + 1);
    assert_non_null(rest);
    memcpy(rest, page, before);
    strcpy(rest + before, at + len);
    free(js);
    return rest;
}

static void test_the_page_is_one_file_that_loads_nothing(void **state)
{
    (void)state;
    char path[4096];
    char *page = render("fixture.html", NULL, path, sizeof path);
    char *own = without_chart_js(page);
    assert_null(strstr(own, "http://"));
    assert_null(strstr(own, "https://"));
    assert_null(strstr(page, "<script src"));
    assert_null(strstr(page, "<link"));
    assert_null(strstr(page, "@import"));
    assert_null(strstr(page, "url("));
    /* the data element, Chart.js and the page's script: three elements, three ends */
    assert_int_equal(count(page, "<script"), 3);
    assert_int_equal(count(page, "</script"), 3);
    assert_non_null(strstr(page, "<script type=\"application/json\" id=\"gb-data\">"));
    assert_non_null(strstr(page, "\"kernel\":\"gemm_f32\""));
    struct stat st;
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    assert_int_not_equal(stat(tmp, &st), 0); /* the temporary file was renamed */
    free(own);
    free(page);
}

/* The bests table's figures are the text table's: % of the measured ceiling and
 * % of the peak, from the same functions, entry by entry (the fixture has a
 * measured copy bandwidth and no measured GEMM rate, so copy_f32 has both and
 * gemm_f32 a peak only). */
static void test_the_bests_show_ceiling_and_peak_as_the_table_does(void **state)
{
    (void)state;
    char path[4096];
    char *page = render("figures.html", NULL, path, sizeof path);
    gb_report r;
    report_fixture(&r);
    const gb_roofs *roofs = &r.context.roofs;
    const char *ceil_at = page, *peak_at = page;
    bool both = false;
    for (int i = 0; i < r.n_entries; i++) {
        double ceil = 100 * gb_entry_fraction(&r.entries[i], roofs, true);
        double peak = 100 * gb_entry_fraction(&r.entries[i], roofs, false);
        both = both || (ceil > 0 && peak > 0 && ceil != peak);
        ceil_at = strstr(ceil_at, "\"pct_ceil\":");
        peak_at = strstr(peak_at, "\"pct_peak\":");
        assert_non_null(ceil_at);
        assert_non_null(peak_at);
        ceil_at += strlen("\"pct_ceil\":");
        peak_at += strlen("\"pct_peak\":");
        assert_float_equal(strtod(ceil_at, NULL), ceil, 1e-9 * (ceil + 1));
        assert_float_equal(strtod(peak_at, NULL), peak, 1e-9 * (peak + 1));
    }
    assert_true(both);
    assert_null(strstr(page, "roof_tflops"));
    assert_non_null(strstr(page, "'% ceil'"));
    gb_report_free(&r);
    free(page);
}

static void test_a_kernel_name_cannot_end_the_script_element(void **state)
{
    (void)state;
    char path[4096];
    char *page = render("evil.html", evil, path, sizeof path);
    assert_null(strstr(page, evil));
    assert_int_equal(count(page, "</script"), 3);
    assert_int_equal(count(page, "<script"), 3);
    assert_non_null(strstr(page, "\\u003c/script\\u003e\\u003cscript\\u003ealert(1)"));
    free(page);
}

static void test_a_missing_chart_js_fails_at_begin_naming_it(void **state)
{
    (void)state;
    gb_report r;
    report_fixture(&r);
    char path[4096];
    build_path(path, sizeof path, "never.html");
    unlink(path);
    gb_output *o;
    gb_err err = {0};
    assert_int_equal(gb_output_html(path, "/nonexistent/chart.min.js", &o, &err), GB_OK);
    assert_int_not_equal(gb_output_begin(o, &r.context, &err), GB_OK);
    assert_non_null(strstr(err.msg, "/nonexistent/chart.min.js"));
    assert_non_null(strstr(err.msg, "libjs-chart.js"));
    gb_output_destroy(o);
    gb_report_free(&r);
    struct stat st;
    assert_int_not_equal(stat(path, &st), 0);
}

static void test_an_unwritable_path_is_named_at_end(void **state)
{
    (void)state;
    gb_report r;
    report_fixture(&r);
    gb_output *o;
    gb_err err = {0};
    const char *path = "/nonexistent/dir/report.html";
    assert_int_equal(gb_output_html(path, GB_CHART_JS, &o, &err), GB_OK);
    assert_int_not_equal(gb_output_render(o, &r, &err), GB_OK);
    assert_non_null(strstr(err.msg, path));
    assert_non_null(strstr(err.msg, "html report"));
    gb_output_destroy(o);
    gb_report_free(&r);
}

/* ---- in a browser ----------------------------------------------------------- */

static const char *chromium(void)
{
    static const char *const names[] = {"/usr/bin/chromium", "/usr/bin/chromium-browser",
                                        "/usr/bin/google-chrome"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (access(names[i], X_OK) == 0) return names[i];
    return NULL;
}

/* Runs headless Chromium on page with extra arguments; returns its stdout. */
static char *run_chromium(const char *browser, const char *page, const char *extra)
{
    char dir[4096], out[4096], cmd[16384];
    build_path(dir, sizeof dir, "chromium-profile");
    build_path(out, sizeof out, "chromium.out");
    snprintf(cmd, sizeof cmd,
             "timeout 60 '%s' --headless --no-sandbox --disable-gpu --user-data-dir='%s' "
             "--virtual-time-budget=10000 %s 'file://%s' > '%s' 2>/dev/null",
             browser, dir, extra, page, out);
    int rc = system(cmd);
    if (rc != 0) print_error("%s: exit status %d\n", cmd, rc);
    assert_int_equal(rc, 0);
    char *text = report_fixture_read(out);
    assert_non_null(text);
    return text;
}

/* The value of attribute name in the dumped <body ...> tag, or NULL. */
static char *body_attribute(const char *dom, const char *name)
{
    const char *body = strstr(dom, "<body");
    assert_non_null(body);
    const char *end = strchr(body, '>');
    char key[128];
    snprintf(key, sizeof key, " %s=\"", name);
    const char *at = strstr(body, key);
    if (!at || at > end) return NULL;
    at += strlen(key);
    return strndup(at, (size_t)(strchr(at, '"') - at));
}

static void check_drawn(const char *dom, int n_charts)
{
    char *error = body_attribute(dom, "data-chart-error");
    if (error) print_error("the page's script failed: %s\n", error);
    assert_null(error);
    char *drawn = body_attribute(dom, "data-charts-drawn");
    char *expected = body_attribute(dom, "data-charts-expected");
    assert_non_null(drawn);
    assert_non_null(expected);
    assert_int_equal(atoi(expected), n_charts);
    assert_string_equal(drawn, expected);
    free(drawn);
    free(expected);
}

static void test_chromium_draws_every_chart_and_takes_a_screenshot(void **state)
{
    (void)state;
    const char *browser = chromium();
    if (!browser) skip();
    char path[4096], png[4096], shot[4200];
    free(render("fixture.html", NULL, path, sizeof path));
    char *dom = run_chromium(browser, path, "--dump-dom");
    check_drawn(dom, FIXTURE_CHARTS);
    assert_non_null(strstr(dom, "<canvas"));
    free(dom);
    build_path(png, sizeof png, "fixture.png");
    unlink(png);
    snprintf(shot, sizeof shot, "--screenshot='%s' --window-size=1400,2400 --hide-scrollbars", png);
    free(run_chromium(browser, path, shot));
    struct stat st;
    assert_int_equal(stat(png, &st), 0);
    assert_true(st.st_size > 50000); /* charts and tables, not a blank page */
}

static void test_chromium_shows_a_hostile_kernel_name_as_text(void **state)
{
    (void)state;
    const char *browser = chromium();
    if (!browser) skip();
    char path[4096];
    free(render("evil.html", evil, path, sizeof path));
    char *dom = run_chromium(browser, path, "--dump-dom");
    check_drawn(dom, FIXTURE_CHARTS + 2); /* the renamed 1024 is a kernel of its own: a
                                             performance chart and a roofline more */
    /* the name is text in the page: serialised with its '<' escaped, no element made */
    assert_non_null(strstr(dom, "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert_null(strstr(dom, "<script>alert(1)"));
    free(dom);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_page_is_one_file_that_loads_nothing),
        cmocka_unit_test(test_the_bests_show_ceiling_and_peak_as_the_table_does),
        cmocka_unit_test(test_a_kernel_name_cannot_end_the_script_element),
        cmocka_unit_test(test_a_missing_chart_js_fails_at_begin_naming_it),
        cmocka_unit_test(test_an_unwritable_path_is_named_at_end),
        cmocka_unit_test(test_chromium_draws_every_chart_and_takes_a_screenshot),
        cmocka_unit_test(test_chromium_shows_a_hostile_kernel_name_as_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
