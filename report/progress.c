/*
 * The progress display (report/progress.h): the text of a status line built from
 * one gb_progress event, and the three ways of showing it (a line redrawn in place
 * on a terminal, plain lines now and then, nothing).
 */
#include "report/progress.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#define REDRAW_S        0.1  /* tty: at most ten redraws a second */
#define LINE_EVERY_S    10.0 /* lines: a line at least this often while events come */
#define DEFAULT_COLUMNS 80
#define TEXT_BYTES      2048
#define MIN_CONFIG_COLS 8 /* a best configuration cut shorter than this is left out */

struct gb_progress_view {
    FILE *out;
    gb_progress_mode mode;
    int width;
    double (*clock_s)(void *ctx);
    void *clock_ctx;
    char prefix[64];
    pthread_mutex_t lock;
    bool shown;         /* tty: the status line is on the screen */
    bool midline;       /* a stream's last write left its line unfinished */
    double last_draw_s; /* tty: when the status line was last drawn */
    double last_line_s; /* lines: when the last line was printed */
    int last_quarter;   /* lines: the quarter of the planned work last reported */
};

/* A status line in three parts, so the best configuration (the least needed) can
 * be cut to fit the width before the ETA is. */
typedef struct status_text {
    char head[TEXT_BYTES];   /* kernel, shape */
    char main[TEXT_BYTES];   /* "  compiled 31  timed 24 ...  best 1.234 ms" */
    char config[TEXT_BYTES]; /* the best configuration, or "" */
    char tail[64];           /* ETA or elapsed time, or "" */
} status_text;

static double monotonic_s(void *ctx)
{
    (void)ctx;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* "0:07", "12:34", "1:02:03". */
static void format_duration(double s, char *out, size_t n)
{
    long total = s > 0 ? (long)(s + 0.5) : 0;
    long h = total / 3600, m = total / 60 % 60, sec = total % 60;
    if (h > 0)
        snprintf(out, n, "%ld:%02ld:%02ld", h, m, sec);
    else
        snprintf(out, n, "%ld:%02ld", m, sec);
}

/* Four significant digits, as the table shows a median; no exponent. */
static void format_ms(double ms, char *out, size_t n)
{
    snprintf(out, n, ms >= 1000 ? "%.0f" : "%.4g", ms);
}

/* Appends to a fixed buffer; what does not fit is dropped. */
static void append(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t n, const char *fmt, ...)
{
    size_t len = strlen(buf);
    if (len + 1 >= n) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + len, n - len, fmt, ap);
    va_end(ap);
}

/* What the ETA counts: compiles when compiling only, else finished trials. */
static int work_done(const gb_progress *p)
{
    return p->compile_only ? p->n_compiled : p->n_timed + p->n_failed;
}

static int work_left(const gb_progress *p)
{
    int left = p->n_planned - work_done(p);
    return left > 0 ? left : 0;
}

static void put_head(char *buf, size_t n, const gb_progress *p)
{
    append(buf, n, "%s [%d/%d] %s", p->kernel ? p->kernel : "?", p->shape_index + 1, p->n_shapes,
           p->shape ? p->shape : "");
}

/* "compiled 31 of 48  failed 1" when compiling only; else the compiles, trials and
 * what is left. sep goes before each item. */
static void put_counts(char *buf, size_t n, const gb_progress *p, const char *sep)
{
    if (p->compile_only) {
        append(buf, n, "%scompiled %d", sep, p->n_compiled);
        if (p->n_planned >= 0) append(buf, n, " of %d", p->n_planned);
        append(buf, n, "%sfailed %d", sep, p->n_failed);
        return;
    }
    append(buf, n, "%scompiled %d%stimed %d%sfailed %d", sep, p->n_compiled, sep, p->n_timed, sep,
           p->n_failed);
    if (p->n_planned >= 0) append(buf, n, "%sleft %d", sep, work_left(p));
}

static void put_best(status_text *t, const gb_progress *p)
{
    if (p->compile_only || !p->has_best) return;
    char ms[32];
    format_ms(p->best_ms, ms, sizeof ms);
    append(t->main, sizeof t->main, "  best %s ms", ms);
    if (p->best_config && *p->best_config)
        snprintf(t->config, sizeof t->config, "%s", p->best_config);
}

/* The ETA from the rate so far: left x elapsed / done. Without a plan or before
 * anything finished there is no rate, and the elapsed time shows instead. */
static void put_eta(status_text *t, const gb_progress *p)
{
    char d[32];
    int done = work_done(p);
    if (p->phase == GB_PROGRESS_RACE) {
        format_duration(p->elapsed_s, d, sizeof d);
        snprintf(t->tail, sizeof t->tail, "racing the leaders, elapsed %s", d);
    } else if (p->n_planned >= 0 && done > 0 && p->elapsed_s > 0) {
        format_duration(work_left(p) * p->elapsed_s / done, d, sizeof d);
        snprintf(t->tail, sizeof t->tail, "ETA %s", d);
    } else {
        format_duration(p->elapsed_s, d, sizeof d);
        snprintf(t->tail, sizeof t->tail, "elapsed %s", d);
    }
}

/* The terminal line's text: "gemm_f32 [2/4] M=2048,...  compiled 31  timed 24 ...". */
static void status_line(const gb_progress *p, status_text *t)
{
    t->head[0] = t->main[0] = t->config[0] = t->tail[0] = '\0';
    put_head(t->head, sizeof t->head, p);
    put_counts(t->main, sizeof t->main, p, "  ");
    put_best(t, p);
    put_eta(t, p);
}

/* Columns a UTF-8 text takes (one per character: continuation bytes do not count). */
static size_t columns_of(const char *s, size_t n_bytes)
{
    size_t cols = 0;
    for (size_t i = 0; i < n_bytes; i++)
        cols += ((unsigned char)s[i] & 0xC0) != 0x80;
    return cols;
}

/* The byte length of s's first max_cols columns (never splitting a character). */
static size_t bytes_for_columns(const char *s, size_t max_cols)
{
    size_t cols = 0, i = 0;
    for (; s[i]; i++) {
        if (((unsigned char)s[i] & 0xC0) != 0x80 && cols++ == max_cols) break;
    }
    return i;
}

/* Joins the parts into out within max_cols: the configuration is cut (with "...")
 * or left out first; what still does not fit is cut at the end. */
static void fit_line(const status_text *t, size_t max_cols, char *out, size_t n)
{
    size_t fixed = columns_of(t->head, strlen(t->head)) + columns_of(t->main, strlen(t->main)) +
                   (*t->tail ? 2 : 0) + columns_of(t->tail, strlen(t->tail));
    size_t config = columns_of(t->config, strlen(t->config));
    out[0] = '\0';
    append(out, n, "%s%s", t->head, t->main);
    if (config > 0 && fixed + config + 3 <= max_cols) {
        append(out, n, " (%s)", t->config);
    } else if (config > 0 && fixed + 3 + MIN_CONFIG_COLS <= max_cols) {
        size_t keep = max_cols - fixed - 3 - 3; /* " (", "...", ")" */
        append(out, n, " (%.*s...)", (int)bytes_for_columns(t->config, keep), t->config);
    }
    if (*t->tail) append(out, n, "  %s", t->tail);
    out[bytes_for_columns(out, max_cols)] = '\0';
}

static int terminal_columns(const gb_progress_view *v)
{
    if (v->width > 0) return v->width;
    struct winsize ws;
    int fd = fileno(v->out);
    if (fd >= 0 && ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
    return DEFAULT_COLUMNS;
}

/* ---- tty mode ------------------------------------------------------------ */

static void erase_locked(gb_progress_view *v)
{
    if (!v->shown) return;
    fputs("\r\033[K", v->out);
    fflush(v->out);
    v->shown = false;
}

/* The line stays one column short of the width: writing the last column makes
 * some terminals wrap, and "\r" would then go back to the wrong line. */
static void draw_locked(gb_progress_view *v, const gb_progress *p, double now_s)
{
    status_text t;
    char line[TEXT_BYTES];
    int cols = terminal_columns(v);
    status_line(p, &t);
    fit_line(&t, cols > 1 ? (size_t)cols - 1 : 1, line, sizeof line);
    fprintf(v->out, "\r%s\033[K", line);
    fflush(v->out);
    v->shown = true;
    v->last_draw_s = now_s;
}

/* A shape's line is erased when it ends: the table printed after the run holds the
 * same counts and more, and nothing is left for later output to land on. */
static void tty_event(gb_progress_view *v, const gb_progress *p)
{
    double now_s = v->clock_s(v->clock_ctx);
    if (p->phase == GB_PROGRESS_END) {
        erase_locked(v);
        return;
    }
    if (v->midline) return; /* someone's line is half written: do not break into it */
    bool always = p->phase == GB_PROGRESS_START || p->phase == GB_PROGRESS_RACE || !v->shown;
    if (always || now_s - v->last_draw_s >= REDRAW_S) draw_locked(v, p, now_s);
}

/* ---- lines mode ---------------------------------------------------------- */

static void print_line(gb_progress_view *v, const char *text, double now_s)
{
    fprintf(v->out, "%s%s\n", v->prefix, text);
    fflush(v->out);
    v->last_line_s = now_s;
}

static void start_line(gb_progress_view *v, const gb_progress *p, double now_s)
{
    char text[TEXT_BYTES] = "";
    put_head(text, sizeof text, p);
    if (p->n_planned < 0)
        append(text, sizeof text, ": started");
    else if (p->compile_only)
        append(text, sizeof text, ": compiling %d", p->n_planned);
    else
        append(text, sizeof text, ": started, %d to try", p->n_planned);
    v->last_quarter = 0;
    print_line(v, text, now_s);
}

static void end_line(gb_progress_view *v, const gb_progress *p, double now_s)
{
    status_text t;
    char took[32], text[TEXT_BYTES] = "";
    status_line(p, &t);
    format_duration(p->elapsed_s, took, sizeof took);
    append(text, sizeof text, "%s: done in %s:%s", t.head, took, t.main + 1);
    if (*t.config) append(text, sizeof text, " (%s)", t.config);
    print_line(v, text, now_s);
}

/* Every LINE_EVERY_S, and when the work done crosses a quarter of the plan (the
 * last quarter is the end line's). */
static void maybe_progress_line(gb_progress_view *v, const gb_progress *p, double now_s)
{
    int quarter = p->n_planned > 0 ? (int)((long long)work_done(p) * 4 / p->n_planned) : 0;
    bool crossed = quarter > v->last_quarter && quarter < 4;
    if (!crossed && now_s - v->last_line_s < LINE_EVERY_S) return;
    if (quarter > v->last_quarter) v->last_quarter = quarter;
    status_text t;
    char text[TEXT_BYTES] = "";
    status_line(p, &t);
    append(text, sizeof text, "%s:%s", t.head, t.main + 1); /* "head: compiled ..." */
    if (*t.config) append(text, sizeof text, " (%s)", t.config);
    append(text, sizeof text, "  %s", t.tail);
    print_line(v, text, now_s);
}

static void lines_event(gb_progress_view *v, const gb_progress *p)
{
    double now_s = v->clock_s(v->clock_ctx);
    switch (p->phase) {
    case GB_PROGRESS_START:
        start_line(v, p, now_s);
        break;
    case GB_PROGRESS_END:
        end_line(v, p, now_s);
        break;
    case GB_PROGRESS_COMPILE:
    case GB_PROGRESS_TRIAL:
        maybe_progress_line(v, p, now_s);
        break;
    default: /* the race: its end line follows */
        break;
    }
}

/* ---- the view ------------------------------------------------------------ */

int gb_progress_view_create(FILE *out, const gb_progress_view_opts *opts,
                            gb_progress_view **out_view, gb_err *err)
{
    gb_progress_view *v = calloc(1, sizeof *v);
    if (!v) return gb_err_set(err, GB_ENOMEM, "progress display: out of memory");
    v->out = out;
    v->mode = opts->mode;
    v->width = opts->width;
    v->clock_s = opts->clock_s ? opts->clock_s : monotonic_s;
    v->clock_ctx = opts->clock_ctx;
    snprintf(v->prefix, sizeof v->prefix, "%s", opts->prefix ? opts->prefix : "");
    pthread_mutex_init(&v->lock, NULL);
    *out_view = v;
    return GB_OK;
}

void gb_progress_view_event(void *ctx, const gb_progress *p)
{
    gb_progress_view *v = ctx;
    if (!v || v->mode == GB_PROGRESS_MODE_QUIET) return;
    pthread_mutex_lock(&v->lock);
    if (v->mode == GB_PROGRESS_MODE_TTY)
        tty_event(v, p);
    else
        lines_event(v, p);
    pthread_mutex_unlock(&v->lock);
}

void gb_progress_view_finish(gb_progress_view *view)
{
    if (!view) return;
    pthread_mutex_lock(&view->lock);
    erase_locked(view);
    fflush(view->out);
    pthread_mutex_unlock(&view->lock);
}

void gb_progress_view_destroy(gb_progress_view *view)
{
    if (!view) return;
    gb_progress_view_finish(view);
    pthread_mutex_destroy(&view->lock);
    free(view);
}

/* ---- streams that make room for their text ------------------------------- */

typedef struct guarded {
    gb_progress_view *view;
    FILE *target;
} guarded;

/* fopencookie's write: erase the status line, pass the bytes on at once (so they
 * keep their order with the target's own writes), and remember whether the line
 * was left unfinished. Returns the bytes written, 0 on error. */
static ssize_t guarded_write(void *cookie, const char *buf, size_t n)
{
    guarded *g = cookie;
    gb_progress_view *v = g->view;
    pthread_mutex_lock(&v->lock);
    erase_locked(v);
    size_t put = fwrite(buf, 1, n, g->target);
    fflush(g->target);
    if (put > 0) v->midline = buf[put - 1] != '\n';
    pthread_mutex_unlock(&v->lock);
    return (ssize_t)put;
}

static int guarded_close(void *cookie)
{
    free(cookie);
    return 0;
}

FILE *gb_progress_view_stream(gb_progress_view *view, FILE *target)
{
    guarded *g = malloc(sizeof *g);
    if (!g) return NULL;
    g->view = view;
    g->target = target;
    cookie_io_functions_t io = {.write = guarded_write, .close = guarded_close};
    FILE *f = fopencookie(g, "w", io);
    if (!f) {
        free(g);
        return NULL;
    }
    setvbuf(f, NULL, _IOLBF, BUFSIZ);
    return f;
}
