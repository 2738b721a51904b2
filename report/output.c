#include "report/output.h"

#include <stdlib.h>

/* ---- calls that skip a failed output -------------------------------------- */

static int settle(gb_output *o, int rc)
{
    if (rc && !o->forgiving) o->failed = true;
    return rc;
}

int gb_output_begin(gb_output *o, const gb_run_context *ctx, gb_err *err)
{
    if (o->failed || !o->ops->begin) return GB_OK;
    return settle(o, o->ops->begin(o, ctx, err));
}

int gb_output_shape(gb_output *o, const gb_report_entry *entry, gb_err *err)
{
    if (o->failed || !o->ops->shape) return GB_OK;
    return settle(o, o->ops->shape(o, entry, err));
}

int gb_output_call_end(gb_output *o, const char *kernel, const gb_tune_result *call, gb_err *err)
{
    if (o->failed || !o->ops->call_end) return GB_OK;
    return settle(o, o->ops->call_end(o, kernel, call, err));
}

int gb_output_end(gb_output *o, gb_err *err)
{
    if (o->failed || !o->ops->end) return GB_OK;
    return settle(o, o->ops->end(o, err));
}

void gb_output_destroy(gb_output *o)
{
    if (o) o->ops->destroy(o);
}

int gb_output_feed(gb_output *o, const gb_report *report, gb_err *err)
{
    gb_err later = {0};
    int first = gb_output_begin(o, &report->context, err);
    int rc = gb_output_feed_entries(o, report, first ? &later : err);
    return first ? first : rc;
}

int gb_output_feed_entries(gb_output *o, const gb_report *report, gb_err *err)
{
    gb_err later = {0};
    int first = GB_OK, rc;
    for (int i = 0; i <= report->n_entries; i++) {
        /* the compile-only calls whose entries end here */
        for (int c = 0; c < report->n_calls; c++) {
            const gb_report_call *call = &report->calls[c];
            if (call->first_entry + call->result.n_shapes != i) continue;
            rc = gb_output_call_end(o, call->kernel, &call->result, first ? &later : err);
            if (!first) first = rc;
        }
        if (i == report->n_entries) break;
        rc = gb_output_shape(o, &report->entries[i], first ? &later : err);
        if (!first) first = rc;
    }
    return first;
}

int gb_output_render(gb_output *o, const gb_report *report, gb_err *err)
{
    gb_err later = {0};
    int first = gb_output_feed(o, report, err);
    int rc = gb_output_end(o, first ? &later : err);
    return first ? first : rc;
}

/* ---- the multiplexer -------------------------------------------------------- */

typedef struct mux {
    gb_output base;
    gb_output **outputs;
    int n_outputs;
    const gb_run_context *ctx;
    bool begun;
} mux;

typedef enum call_kind { CALL_BEGIN, CALL_SHAPE, CALL_CALL_END, CALL_END } call_kind;

/* Every output gets the call; the first error is the one returned. */
static int each(mux *m, call_kind kind, const gb_report_entry *entry, const char *kernel,
                const gb_tune_result *call, gb_err *err)
{
    int first = GB_OK;
    for (int i = 0; i < m->n_outputs; i++) {
        gb_output *o = m->outputs[i];
        gb_err e = {0};
        int rc = kind == CALL_BEGIN   ? gb_output_begin(o, m->ctx, &e)
                 : kind == CALL_SHAPE ? gb_output_shape(o, entry, &e)
                 : kind == CALL_END   ? gb_output_end(o, &e)
                                      : gb_output_call_end(o, kernel, call, &e);
        if (rc && first == GB_OK) first = gb_err_copy(err, &e);
    }
    return first;
}

/* begin, once, before the first entry or at the end. */
static int start(mux *m, gb_err *err)
{
    if (m->begun) return GB_OK;
    m->begun = true;
    return each(m, CALL_BEGIN, NULL, NULL, NULL, err);
}

static int mux_begin(gb_output *o, const gb_run_context *ctx, gb_err *err)
{
    (void)err;
    ((mux *)o)->ctx = ctx; /* begun at the first entry: see output.h */
    return GB_OK;
}

static int mux_shape(gb_output *o, const gb_report_entry *entry, gb_err *err)
{
    mux *m = (mux *)o;
    gb_err later = {0};
    int rc = start(m, err);
    int shaped = each(m, CALL_SHAPE, entry, NULL, NULL, rc ? &later : err);
    return rc ? rc : shaped;
}

static int mux_call_end(gb_output *o, const char *kernel, const gb_tune_result *call, gb_err *err)
{
    mux *m = (mux *)o;
    return m->begun ? each(m, CALL_CALL_END, NULL, kernel, call, err) : GB_OK;
}

static int mux_end(gb_output *o, gb_err *err)
{
    mux *m = (mux *)o;
    gb_err later = {0};
    int rc = start(m, err);
    int ended = each(m, CALL_END, NULL, NULL, NULL, rc ? &later : err);
    return rc ? rc : ended;
}

static void mux_destroy(gb_output *o)
{
    mux *m = (mux *)o;
    for (int i = 0; i < m->n_outputs; i++)
        gb_output_destroy(m->outputs[i]);
    free(m->outputs);
    free(m);
}

static const gb_output_ops mux_ops = {
    .name = "mux",
    .begin = mux_begin,
    .shape = mux_shape,
    .call_end = mux_call_end,
    .end = mux_end,
    .destroy = mux_destroy,
};

int gb_output_mux(gb_output **out, gb_err *err)
{
    mux *m = calloc(1, sizeof *m);
    if (!m) return gb_err_set(err, GB_ENOMEM, "out of memory");
    m->base.ops = &mux_ops;
    m->base.forgiving = true; /* an error is one output's: the others go on */
    *out = &m->base;
    return GB_OK;
}

int gb_output_mux_add(gb_output *o, gb_output *added, gb_err *err)
{
    mux *m = (mux *)o;
    gb_output **grown = realloc(m->outputs, (size_t)(m->n_outputs + 1) * sizeof *grown);
    if (!grown) {
        gb_output_destroy(added);
        return gb_err_set(err, GB_ENOMEM, "out of memory");
    }
    m->outputs = grown;
    m->outputs[m->n_outputs++] = added;
    return GB_OK;
}

int gb_output_mux_count(const gb_output *o)
{
    return ((const mux *)o)->n_outputs;
}
