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
#define MIN_CUT_COLS    8 /* a shape or configuration cut shorter than this is left out */

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

/* A status line in parts, so that on a narrow terminal the least needed go first
 * (the configuration, then the best time, then the shape) and the ETA stays. */
typedef struct status_text {
    char title[256];         /* "gemm_f32 [2/4]" */
    char shape[TEXT_BYTES];  /* "K=2048,M=2048,N=2048" */
    char counts[256];        /* "  compiled 31  timed 24  failed 1  left 17" */
    char best[64];           /* "  best 1.234 ms", or "" */
    char config[TEXT_BYTES]; /* the best configuration, or "" */
    char tail[64];           /* "ETA 0:12", the elapsed time, or "" */
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

/* "gemm_f32 [2/4] K=2048,M=2048,N=2048", for the plain lines. */
static void put_head(char *buf, size_t n, const gb_progress *p)
{
    append(buf, n, "%s [%d/%d] %s", p->kernel ? p->kernel : "?", p->shape_index + 1, p->n_shapes,
           p->shape ? p->shape : "");
}

/* "compiled 31 of 48  failed 1" when compiling only; else the compiles, trials and
 * what is left. Each item starts with two spaces. */
static void put_counts(char *buf, size_t n, const gb_progress *p)
{
    if (p->compile_only) {
        append(buf, n, "  compiled %d", p->n_compiled);
        if (p->n_planned >= 0) append(buf, n, " of %d", p->n_planned);
        append(buf, n, "  failed %d", p->n_failed);
        return;
    }
    append(buf, n, "  compiled %d  timed %d  failed %d", p->n_compiled, p->n_timed, p->n_failed);
    if (p->n_planned >= 0) append(buf, n, "  left %d", work_left(p));
}

static void put_best(status_text *t, const gb_progress *p)
{
    if (p->compile_only || !p->has_best) return;
    char ms[32];
    format_ms(p->best_ms, ms, sizeof ms);
    snprintf(t->best, sizeof t->best, "  best %s ms", ms);
    if (p->best_config) snprintf(t->config, sizeof t->config, "%s", p->best_config);
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

static void status_line(const gb_progress *p, status_text *t)
{
    memset(t, 0, sizeof *t);
    snprintf(t->title, sizeof t->title, "%s [%d/%d]", p->kernel ? p->kernel : "?",
             p->shape_index + 1, p->n_shapes);
    snprintf(t->shape, sizeof t->shape, "%s", p->shape ? p->shape : "");
    put_counts(t->counts, sizeof t->counts, p);
    put_best(t, p);
    put_eta(t, p);
}

/* The plain line's body: "compiled 31  timed 24 ...  best 1.234 ms (BK=16,...)",
 * with the ETA when with_tail. */
static void plain_body(const status_text *t, bool with_tail, char *out, size_t n)
{
    append(out, n, "%s%s", t->counts + 2, t->best); /* counts start with two spaces */
    if (*t->config) append(out, n, " (%s)", t->config);
    if (with_tail && *t->tail) append(out, n, "  %s", t->tail);
}

/* Columns a UTF-8 text takes (one per character: continuation bytes do not count). */
static size_t columns_of(const char *s)
{
    size_t cols = 0;
    for (; *s; s++)
        cols += ((unsigned char)*s & 0xC0) != 0x80;
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

/* How many columns of s, with extra columns around it, the room has: all of them,
 * a cut of at least MIN_CUT_COLS, or none. They are taken from *room. */
static size_t take_room(size_t *room, const char *s, size_t extra)
{
    size_t cols = columns_of(s);
    if (cols == 0 || (*room < extra + cols && *room < extra + MIN_CUT_COLS)) return 0;
    size_t keep = extra + cols <= *room ? cols : *room - extra;
    *room -= extra + keep;
    return keep;
}

/* Appends pre, s cut to keep columns (ending in "..." when cut), and post. */
static void append_cut(char *out, size_t n, const char *pre, const char *s, size_t keep,
                       const char *post)
{
    if (columns_of(s) <= keep)
        append(out, n, "%s%s%s", pre, s, post);
    else
        append(out, n, "%s%.*s...%s", pre, (int)bytes_for_columns(s, keep - 3), s, post);
}

/* The terminal line within max_cols: the title, the counts and the ETA always (cut
 * at the end when even they do not fit); then the shape, the best time and the
 * configuration, in that order, each whole, cut or left out to fit. */
static void fit_line(const status_text *t, size_t max_cols, char *out, size_t n)
{
    size_t fixed =
        columns_of(t->title) + columns_of(t->counts) + (*t->tail ? 2 + columns_of(t->tail) : 0);
    size_t room = max_cols > fixed ? max_cols - fixed : 0;
    size_t shape_keep = take_room(&room, t->shape, 1);
    bool with_best = *t->best && columns_of(t->best) <= room;
    if (with_best) room -= columns_of(t->best);
    size_t config_keep = with_best ? take_room(&room, t->config, 3) : 0;
    out[0] = '\0';
    append(out, n, "%s", t->title);
    if (shape_keep) append_cut(out, n, " ", t->shape, shape_keep, "");
    append(out, n, "%s%s", t->counts, with_best ? t->best : "");
    if (config_keep) append_cut(out, n, " (", t->config, config_keep, ")");
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
    put_head(text, sizeof text, p);
    append(text, sizeof text, ": done in %s: ", took);
    plain_body(&t, false, text, sizeof text);
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
    put_head(text, sizeof text, p);
    append(text, sizeof text, ": ");
    plain_body(&t, true, text, sizeof text);
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
