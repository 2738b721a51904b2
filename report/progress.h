/*
 * The progress display of a tuning run: it draws the tuner's gb_progress events
 * (tuner/tune.h) on a stream, normally stderr, in one of three modes.
 *
 *   tty    one status line redrawn in place ("\r", the text, "\033[K"), at most
 *          ten times a second, cut to the terminal's width; it is erased when a
 *          shape ends, so what follows (the next shape, the table) starts on a
 *          clean line;
 *   lines  plain lines for a log or a pipe: when a shape starts, about every 10 s
 *          or every quarter of the planned work, and when it ends;
 *   quiet  nothing.
 *
 * Other text written to the same terminal while the status line is up would land
 * at its end. gb_progress_view_stream() wraps a stream (the tuner's log, stdout)
 * so that each write first erases the status line; the next event draws it again
 * below the text. gb_progress_view_finish() erases it for good before a caller
 * prints on its own.
 *
 * The view may be fed from several threads: events, writes through its streams
 * and finish are serialised inside.
 */
#ifndef GB_REPORT_PROGRESS_H
#define GB_REPORT_PROGRESS_H

#include "base/error.h"
#include "tuner/tune.h"

#include <stdio.h>

typedef enum gb_progress_mode {
    GB_PROGRESS_MODE_TTY,
    GB_PROGRESS_MODE_LINES,
    GB_PROGRESS_MODE_QUIET,
} gb_progress_mode;

typedef struct gb_progress_view_opts {
    gb_progress_mode mode;
    /* tty mode: the line's width in columns; 0: the terminal's (TIOCGWINSZ on the
     * output), else 80. */
    int width;
    /* Seconds on a monotonic clock, for the redraw throttle and the periodic lines;
     * NULL: CLOCK_MONOTONIC (tests pass a fake). */
    double (*clock_s)(void *ctx);
    void *clock_ctx;
    /* lines mode: put in front of each line ("gpubench-tune: "); NULL: nothing. */
    const char *prefix;
} gb_progress_view_opts;

typedef struct gb_progress_view gb_progress_view;

/* A view drawing on out (not owned; it must outlive the view). GB_ENOMEM. */
int gb_progress_view_create(FILE *out, const gb_progress_view_opts *opts,
                            gb_progress_view **out_view, gb_err *err);

/* A gb_progress_fn: ctx is the view. */
void gb_progress_view_event(void *ctx, const gb_progress *p);

/* Erases the status line (tty mode) and flushes; the next event draws again.
 * Call it before printing anything to the terminal outside the view's streams.
 * NULL is a no-op. */
void gb_progress_view_finish(gb_progress_view *view);

/* A new stream that writes to target, each write preceded by erasing the status
 * line (tty mode). Line-buffered, so a line written in pieces comes out whole, and
 * the status line is not drawn while one is half written. fclose() it (that does
 * not close target) before destroying the view. NULL when out of memory: write to
 * target directly then. */
FILE *gb_progress_view_stream(gb_progress_view *view, FILE *target);

/* Erases the status line; NULL is a no-op. */
void gb_progress_view_destroy(gb_progress_view *view);

#endif
