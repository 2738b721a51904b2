/* The session's outputs (session/session.h): begun once, every call's shapes as
 * the call ends (or a saved run's, call by call), ended once. */
#include "session/session.h"

#include <stdio.h>

int gb_session_begin_outputs(gb_session *s, gb_output *output, gb_run_context *ctx, gb_err *err)
{
    s->output = output;
    s->context = ctx;
    return gb_output_begin(output, ctx, err);
}

/* Errors of the outputs are warnings while the session runs: the results are in
 * the cache, and what could not be written is said when the outputs end. */
static void warn(const gb_session *s, const gb_err *err)
{
    if (s->tuner.log) fprintf(s->tuner.log, "gpubench: report: %s\n", err->msg);
}

void gb_session_report_call(gb_session *s, const gb_kernel_def *def, const gb_tune_result *r)
{
    if (!s->output) return;
    gb_run_context *ctx = s->context;
    if (ctx && !ctx->arch[0]) gb_strlcpy(ctx->arch, r->arch, sizeof ctx->arch);
    if (ctx && r->compile_only) ctx->compile_only = true;
    gb_err err = {0}, later = {0};
    int rc = GB_OK;
    for (int i = 0; i < r->n_shapes; i++) { /* every shape: an output that failed stops alone */
        gb_report_entry e = {def->name, def->math, r->bench, &r->shapes[i], r};
        int shaped = gb_output_shape(s->output, &e, rc ? &later : &err);
        if (!rc) rc = shaped;
    }
    int ended = gb_output_call_end(s->output, def->name, r, rc ? &later : &err);
    if (!rc) rc = ended;
    if (rc) warn(s, &err);
}

int gb_session_show(gb_session *s, const gb_report *saved, gb_err *err)
{
    if (!s->output) return GB_OK;
    return gb_output_feed_entries(s->output, saved, err);
}

int gb_session_end_outputs(gb_session *s, gb_err *err)
{
    int rc = s->output ? gb_output_end(s->output, err) : GB_OK;
    gb_output_destroy(s->output);
    s->output = NULL;
    return rc;
}
