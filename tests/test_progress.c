/* The progress display (report/progress.h): event sequences fed to a view that
 * writes to memory, with a clock the test moves by hand. Pins the terminal line
 * (redrawn in place, throttled, cut to the width, the ETA), the plain lines of a
 * log, silence, and the streams that erase the line before their text. */
#include "report/progress.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define ERASE "\033[K"

typedef struct fixture {
    FILE *out;
    char *buf;
    size_t len;
    double now_s;
    gb_progress_view *view;
    gb_progress event; /* the next event to send; tests change its counts */
} fixture;

static double fake_clock(void *ctx)
{
    return ((fixture *)ctx)->now_s;
}

static fixture *open_view(gb_progress_mode mode, int width)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    f->out = open_memstream(&f->buf, &f->len);
    assert_non_null(f->out);
    gb_progress_view_opts opts = {
        .mode = mode, .width = width, .clock_s = fake_clock, .clock_ctx = f, .prefix = "tune: "};
    gb_err err = {0};
    assert_int_equal(gb_progress_view_create(f->out, &opts, &f->view, &err), GB_OK);
    f->event = (gb_progress){.kernel = "gemm_f32",
                             .shape = "K=64,M=64,N=64",
                             .shape_index = 1,
                             .n_shapes = 4,
                             .n_planned = 48};
    return f;
}

static void close_view(fixture *f)
{
    gb_progress_view_destroy(f->view);
    fclose(f->out);
    free(f->buf);
    free(f);
}

/* Sends the fixture's event with phase at the fake time now_s. */
static void send(fixture *f, gb_progress_phase phase, double now_s)
{
    f->now_s = now_s;
    f->event.phase = phase;
    gb_progress_view_event(f->view, &f->event);
}

static const char *text(fixture *f)
{
    fflush(f->out);
    return f->buf ? f->buf : "";
}

static int count(const char *s, const char *what)
{
    int n = 0;
    for (const char *p = strstr(s, what); p; p = strstr(p + strlen(what), what))
        n++;
    return n;
}

/* The last line drawn: the text after the last "\r" up to its ESC[K. */
static void last_drawn(fixture *f, char *out, size_t n)
{
    const char *s = text(f);
    const char *cr = strrchr(s, '\r');
    assert_non_null(cr);
    const char *end = strstr(cr, ERASE);
    assert_non_null(end);
    snprintf(out, n, "%.*s", (int)(end - cr - 1), cr + 1);
}

static void tty_start_draws_one_line_in_place(void **state)
{
    (void)state;
    fixture *f = open_view(GB_PROGRESS_MODE_TTY, 200);
    send(f, GB_PROGRESS_START, 0);
    assert_string_equal(text(f), "\rgemm_f32 [2/4] K=64,M=64,N=64  compiled 0  timed 0  failed 0  "
                                 "left 48  elapsed 0:00" ERASE);
    close_view(f);
}

static void tty_redraws_at_most_ten_times_a_second(void **state)
{
    (void)state;
    fixture *f = open_view(GB_PROGRESS_MODE_TTY, 200);
    send(f, GB_PROGRESS_START, 0);
    for (int i = 1; i <= 100; i++) { /* a trial every 10 ms for a second */
        f->event.n_timed = i;
        f->event.elapsed_s = i * 0.01;
        send(f, GB_PROGRESS_TRIAL, i * 0.01);
    }
    int draws = count(text(f), "\r");
    assert_in_range(draws, 9, 12);    /* the start and about one per 100 ms */
    send(f, GB_PROGRESS_RACE, 1.001); /* always drawn */
    assert_int_equal(count(text(f), "\r"), draws + 1);
    assert_non_null(strstr(text(f), "racing the leaders"));
    close_view(f);
}

static void tty_end_erases_the_line(void **state)
{
    (void)state;
    fixture *f = open_view(GB_PROGRESS_MODE_TTY, 200);
    send(f, GB_PROGRESS_START, 0);
    send(f, GB_PROGRESS_END, 0.01);
    const char *s = text(f);
    size_t n = strlen(s);
    assert_true(n > 4);
    assert_string_equal(s + n - 4, "\r" ERASE);
    gb_progress_view_finish(f->view); /* nothing left to erase */
    assert_int_equal(strlen(text(f)), n);
    close_view(f);
}

static void tty_line_fits_the_width(void **state)
{
    (void)state;
    fixture *f = open_view(GB_PROGRESS_MODE_TTY, 40);
    f->event.has_best = true;
    f->event.best_ms = 1.5;
    f->event.best_config = "BK=16,BM=64,BN=128,TM=8,TN=4";
    send(f, GB_PROGRESS_START, 0);
    char line[512];
    last_drawn(f, line, sizeof line);
    /* One column short of the width: the counts and ETA do not fit, so the shape
     * and best are left out and the line is cut. */
    assert_string_equal(line, "gemm_f32 [2/4]  compiled 0  timed 0  fa");
    close_view(f);
}

/* A long configuration is cut before the ETA is. */
static void tty_cuts_the_best_config_before_the_eta(void **state)
{
    (void)state;
    fixture *f = open_view(GB_PROGRESS_MODE_TTY, 120);
    f->event.has_best = true;
    f->event.best_ms = 1.234;
    f->event.best_config = "BK=16,BM=64,BN=128,TM=8,TN=4,SPLIT=1,STAGES=3,SWIZZLE=2,VEC=4";
    f->event.n_compiled = 20;
    f->event.n_timed = 10;
    f->event.elapsed_s = 5;
    send(f, GB_PROGRESS_START, 0);
    char line[512];
    last_drawn(f, line, sizeof line);
    assert_true(strlen(line) <= 119);
    assert_non_null(strstr(line, "best 1.234 ms (BK=16,"));
    assert_non_null(strstr(line, "...)  ETA 0:19"));
    close_view(f);
}

static void tty_eta_from_the_rate_of_finished_trials(void **state)
{
    (void)state;
    fixture *f = open_view(GB_PROGRESS_MODE_TTY, 200);
    f->event.n_compiled = 31;
    f->event.n_timed = 10;
    f->event.n_failed = 2; /* 12 done in 6 s: 36 left take 18 s */
    f->event.elapsed_s = 6;
    f->event.has_best = true;
    f->event.best_ms = 0.0552;
    f->event.best_config = "BK=16";
    send(f, GB_PROGRESS_TRIAL, 0);
    char line[512];
    last_drawn(f, line, sizeof line);
    assert_string_equal(line, "gemm_f32 [2/4] K=64,M=64,N=64  compiled 31  timed 10  failed 2  "
                              "left 36  best 0.0552 ms (BK=16)  ETA 0:18");
    f->event.n_timed = 1000;
    f->event.n_failed = 0;
    f->event.n_planned = 200000; /* hours: h:mm:ss */
    f->event.elapsed_s = 100;
    send(f, GB_PROGRESS_TRIAL, 1);
    last_drawn(f, line, sizeof line);
    assert_non_null(strstr(line, "ETA 5:31:40")); /* 199000 left, 0.1 s each */
    close_view(f);
}

static void tty_eta_unknown_shows_elapsed(void **state)
{
    (void)state;
    fixture *f = open_view(GB_PROGRESS_MODE_TTY, 200);
    f->event.n_planned = -1;
    f->event.n_timed = 5;
    f->event.elapsed_s = 65;
    send(f, GB_PROGRESS_TRIAL, 0);
    char line[512];
    last_drawn(f, line, sizeof line);
    assert_null(strstr(line, "ETA"));
    assert_null(strstr(line, "left"));
    assert_non_null(strstr(line, "elapsed 1:05"));
    /* A plan but nothing finished yet: no rate either. */
    f->event.n_planned = 48;
    f->event.n_timed = 0;
    f->event.n_compiled = 3;
    send(f, GB_PROGRESS_COMPILE, 1);
    last_drawn(f, line, sizeof line);
    assert_null(strstr(line, "ETA"));
    assert_non_null(strstr(line, "left 48  elapsed 1:05"));
    close_view(f);
}

static void compile_only_says_compiled_n_of_m(void **state)
{
    (void)state;
    fixture *f = open_view(GB_PROGRESS_MODE_TTY, 200);
    f->event.compile_only = true;
    f->event.n_compiled = 12;
    f->event.n_failed = 1;
    f->event.elapsed_s = 3; /* 12 in 3 s: 36 left take 9 s */
    send(f, GB_PROGRESS_COMPILE, 0);
    char line[512];
    last_drawn(f, line, sizeof line);
    assert_string_equal(line,
                        "gemm_f32 [2/4] K=64,M=64,N=64  compiled 12 of 48  failed 1  ETA 0:09");
    close_view(f);
}

/* A line per start and end, one per quarter of the plan; never a terminal code. */
static void lines_mode_prints_start_quarters_and_end(void **state)
{
    (void)state;
    fixture *f = open_view(GB_PROGRESS_MODE_LINES, 0);
    f->event.n_planned = 100;
    send(f, GB_PROGRESS_START, 0);
    for (int i = 1; i <= 100; i++) {
        f->event.n_compiled = i;
        f->event.n_timed = i;
        f->event.elapsed_s = i * 0.05;
        send(f, GB_PROGRESS_COMPILE, i * 0.05);
        send(f, GB_PROGRESS_TRIAL, i * 0.05);
    }
    f->event.has_best = true;
    f->event.best_ms = 1.234;
    f->event.best_config = "BK=16";
    f->event.elapsed_s = 54;
    send(f, GB_PROGRESS_RACE, 5);
    send(f, GB_PROGRESS_END, 54);
    const char *s = text(f);
    assert_null(strchr(s, '\r'));
    assert_null(strchr(s, '\033'));
    assert_int_equal(count(s, "\n"), 5);
    assert_int_equal(count(s, "tune: gemm_f32 [2/4] K=64,M=64,N=64: "), 5);
    assert_non_null(strstr(s, ": started, 100 to try\n"));
    assert_non_null(strstr(s, ": compiled 25  timed 25  failed 0  left 75  ETA 0:04\n"));
    assert_non_null(strstr(s, ": compiled 50  timed 50"));
    assert_non_null(strstr(s, ": compiled 75  timed 75"));
    assert_non_null(strstr(s, ": done in 0:54: compiled 100  timed 100  failed 0  left 0  "
                              "best 1.234 ms (BK=16)\n"));
    close_view(f);
}

/* Without a plan, the lines come every ten seconds of wall time. */
static void lines_mode_prints_every_ten_seconds(void **state)
{
    (void)state;
    fixture *f = open_view(GB_PROGRESS_MODE_LINES, 0);
    f->event.n_planned = -1;
    send(f, GB_PROGRESS_START, 0);
    for (int i = 1; i <= 35; i++) { /* a trial a second */
        f->event.n_timed = i;
        f->event.elapsed_s = i;
        send(f, GB_PROGRESS_TRIAL, i);
    }
    const char *s = text(f);
    assert_int_equal(count(s, "\n"), 4); /* the start, then at 10, 20 and 30 s */
    assert_non_null(strstr(s, ": started\n"));
    assert_non_null(strstr(s, ": compiled 0  timed 10  failed 0  elapsed 0:10\n"));
    assert_non_null(strstr(s, "timed 30  failed 0  elapsed 0:30\n"));
    close_view(f);
}

static void lines_mode_compile_only_wording(void **state)
{
    (void)state;
    fixture *f = open_view(GB_PROGRESS_MODE_LINES, 0);
    f->event.compile_only = true;
    send(f, GB_PROGRESS_START, 0);
    f->event.n_compiled = 48;
    f->event.elapsed_s = 54;
    send(f, GB_PROGRESS_END, 54);
    const char *s = text(f);
    assert_non_null(strstr(s, "tune: gemm_f32 [2/4] K=64,M=64,N=64: compiling 48\n"));
    assert_non_null(strstr(
        s, "tune: gemm_f32 [2/4] K=64,M=64,N=64: done in 0:54: compiled 48 of 48  failed 0\n"));
    assert_null(strstr(s, "timed"));
    close_view(f);
}

static void quiet_prints_nothing(void **state)
{
    (void)state;
    fixture *f = open_view(GB_PROGRESS_MODE_QUIET, 0);
    send(f, GB_PROGRESS_START, 0);
    f->event.n_timed = 48;
    send(f, GB_PROGRESS_TRIAL, 20);
    send(f, GB_PROGRESS_RACE, 21);
    send(f, GB_PROGRESS_END, 22);
    gb_progress_view_finish(f->view);
    assert_string_equal(text(f), "");
    close_view(f);
}

/* A log line through the view's stream erases the status line first and is not
 * broken into; the next event draws the line again at once, below it. */
static void stream_erases_the_line_before_its_text(void **state)
{
    (void)state;
    fixture *f = open_view(GB_PROGRESS_MODE_TTY, 200);
    FILE *log = gb_progress_view_stream(f->view, f->out);
    assert_non_null(log);
    send(f, GB_PROGRESS_START, 0);
    size_t before = strlen(text(f));
    fprintf(log, "  BK=16 ok");
    fflush(log); /* half a line reaches the terminal */
    assert_string_equal(text(f) + before, "\r" ERASE "  BK=16 ok");
    f->event.n_timed = 1;
    send(f, GB_PROGRESS_TRIAL, 1); /* not drawn into the half line */
    assert_string_equal(text(f) + before, "\r" ERASE "  BK=16 ok");
    fprintf(log, "     0.0167 ms (n=5)\n");
    send(f, GB_PROGRESS_TRIAL, 1.01); /* within 100 ms of the last draw, but the line is gone */
    const char expected[] = "\r" ERASE "  BK=16 ok     0.0167 ms (n=5)\n\rgemm_f32";
    assert_memory_equal(text(f) + before, expected, strlen(expected));
    fclose(log);
    close_view(f);
}

static void finish_erases_the_line_once(void **state)
{
    (void)state;
    fixture *f = open_view(GB_PROGRESS_MODE_TTY, 200);
    send(f, GB_PROGRESS_START, 0);
    gb_progress_view_finish(f->view);
    size_t n = strlen(text(f));
    assert_string_equal(text(f) + n - 4, "\r" ERASE);
    gb_progress_view_finish(f->view);
    assert_int_equal(strlen(text(f)), n);
    send(f, GB_PROGRESS_TRIAL, 0.01); /* drawn again at once */
    assert_int_equal(count(text(f), "\rgemm_f32"), 2);
    close_view(f);
}

/* A memory stream is no terminal: the width falls back to 80 columns. The shape
 * is cut and the best left out before the counts and the ETA are. */
static void width_defaults_to_80(void **state)
{
    (void)state;
    fixture *f = open_view(GB_PROGRESS_MODE_TTY, 0);
    f->event.shape = "A=1,B=2,C=3,D=4,E=5,F=6,G=7,H=8";
    f->event.has_best = true;
    f->event.best_ms = 2;
    f->event.best_config = "BK=16";
    f->event.n_timed = 24;
    f->event.elapsed_s = 12;
    send(f, GB_PROGRESS_TRIAL, 0);
    char line[512];
    last_drawn(f, line, sizeof line);
    assert_string_equal(
        line, "gemm_f32 [2/4] A=1,B=2,C=...  compiled 0  timed 24  failed 0  left 24  ETA 0:12");
    assert_int_equal(strlen(line), 79);
    close_view(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tty_start_draws_one_line_in_place),
        cmocka_unit_test(tty_redraws_at_most_ten_times_a_second),
        cmocka_unit_test(tty_end_erases_the_line),
        cmocka_unit_test(tty_line_fits_the_width),
        cmocka_unit_test(tty_cuts_the_best_config_before_the_eta),
        cmocka_unit_test(tty_eta_from_the_rate_of_finished_trials),
        cmocka_unit_test(tty_eta_unknown_shows_elapsed),
        cmocka_unit_test(compile_only_says_compiled_n_of_m),
        cmocka_unit_test(lines_mode_prints_start_quarters_and_end),
        cmocka_unit_test(lines_mode_prints_every_ten_seconds),
        cmocka_unit_test(lines_mode_compile_only_wording),
        cmocka_unit_test(quiet_prints_nothing),
        cmocka_unit_test(stream_erases_the_line_before_its_text),
        cmocka_unit_test(finish_erases_the_line_once),
        cmocka_unit_test(width_defaults_to_80),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
