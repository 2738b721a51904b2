/* What every part of a run uses (tuner/run.h): the log, the GPUs trials run on,
 * the pause before a contended measurement is taken again. */
#include "tuner/run.h"

#include "exec/interrupt.h"

#include <stdarg.h>
#include <time.h>

#define CONTENDED_PAUSE_S 1.0 /* long enough for a short burst of someone else's work */

void gb_run_log(const run *r, const char *fmt, ...)
{
    if (!r->opts->log) return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(r->opts->log, fmt, ap);
    va_end(ap);
    fflush(r->opts->log);
}

gb_exec *gb_run_exec(const run *r, int i)
{
    return r->opts->n_execs > 1 ? r->opts->execs[i] : r->opts->exec;
}

int gb_run_n_gpus(const run *r)
{
    return r->opts->n_execs > 1 ? r->opts->n_execs : 1;
}

int gb_run_pause_for_contention(run *r)
{
    double pause_s =
        r->opts->contended_pause_s > 0 ? r->opts->contended_pause_s : CONTENDED_PAUSE_S;
    double end_ms = gb_now_ms() + pause_s * 1e3, left_ms;
    while (!gb_interrupted() && (left_ms = end_ms - gb_now_ms()) > 0) {
        long ms = left_ms < 50 ? (long)left_ms + 1 : 50; /* so Ctrl-C is seen at once */
        nanosleep(&(struct timespec){ms / 1000, ms % 1000 * 1000000L}, NULL);
    }
    return gb_interrupted() ? gb_err_set(r->err, GB_EINTR, "interrupted") : GB_OK;
}

/* ---- what a driver reads of the run (tuner/pipeline.h) ----------------------- */

gb_err *gb_pipeline_err(gb_pipeline *r)
{
    return r->err;
}

gb_err *gb_pipeline_set_err(gb_pipeline *r, gb_err *err)
{
    gb_err *was = r->err;
    r->err = err;
    return was;
}

const gb_kernel_def *gb_pipeline_kernel(const gb_pipeline *r)
{
    return r->k;
}

const gb_tune_request *gb_pipeline_request(const gb_pipeline *r)
{
    return r->req;
}

const gb_tuner_opts *gb_pipeline_opts(const gb_pipeline *r)
{
    return r->opts;
}

const gb_measure_opts *gb_pipeline_screening(const gb_pipeline *r)
{
    return &r->screen;
}

const gb_measure_opts *gb_pipeline_full(const gb_pipeline *r)
{
    return &r->full;
}

const gb_check_spec *gb_pipeline_check(const gb_pipeline *r)
{
    return &r->current.check;
}

gb_search *gb_pipeline_search(gb_pipeline *r)
{
    return &r->current.search;
}

gb_progress *gb_pipeline_progress(gb_pipeline *r)
{
    return &r->current.progress;
}

gb_history *gb_pipeline_history(gb_pipeline *r)
{
    return &r->history;
}

gb_tune_result *gb_pipeline_result(gb_pipeline *r)
{
    return r->result;
}

gb_compiler *gb_pipeline_compiler(gb_pipeline *r)
{
    return r->compiler;
}

const gb_arch_limits *gb_pipeline_limits(const gb_pipeline *r)
{
    return &r->limits;
}
