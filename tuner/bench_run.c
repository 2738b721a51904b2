/* Benchmarking fixed configurations (gb.bench): for each shape, the
 * configuration asked for, or the shape's tuned best from the cache, timed once to
 * the full criterion. Nothing is searched, raced, resumed or recorded. */
#include "tuner/pipeline.h"

#include <stdio.h>
#include <stdlib.h>

/* The configuration asked for, or the shape's cached best; one that is not in the
 * kernel's space, or that its constraints reject, fails the shape. */
static int bench_config(gb_pipeline *r, const gb_record_id *id, gb_shape_result *res,
                        gb_config *out)
{
    const gb_tune_request *req = gb_pipeline_request(r);
    const gb_kernel_def *k = gb_pipeline_kernel(r);
    gb_err *err = gb_pipeline_err(r);
    gb_fields fields = {0};
    int rc = req->fixed_best ? gb_history_best_config(gb_pipeline_history(r), id, &fields)
                             : gb_fields_copy(req->fixed_config, &fields);
    if (rc == GB_ENOTFOUND &&
        asprintf(&res->failure,
                 "no tuned configuration in the cache for this shape: tune it first") < 0)
        return gb_err_set(err, GB_ENOMEM, "out of memory");
    if (rc == GB_ENOTFOUND) return GB_OK;
    if (rc) return gb_err_set(err, rc, "out of memory");
    bool in_space = gb_config_from_fields(&k->space, &fields, out) == GB_OK, accepted = false;
    if (in_space && (rc = gb_tune_accept((void *)k, out, &accepted, err))) {
        gb_fields_free(&fields);
        return rc;
    }
    if (!accepted) {
        gb_strbuf text = GB_STRBUF_INIT;
        gb_fields_append_canonical(&text, &fields, NULL, 0);
        rc = asprintf(&res->failure, "configuration %s is %s", gb_sb_str(&text),
                      in_space ? "rejected by the kernel's constraints"
                               : "not in the kernel's space") < 0
                 ? gb_err_set(err, GB_ENOMEM, "out of memory")
                 : GB_OK;
        gb_sb_free(&text);
    }
    gb_fields_free(&fields);
    return rc;
}

int gb_bench_shape(gb_pipeline *r, const gb_fields *shape, const gb_record_id *id,
                   gb_shape_result *res)
{
    gb_config config;
    leader best = {0};
    bool cached;
    int rc = bench_config(r, id, res, &config);
    if (rc || res->failure) return rc;
    gb_pipeline_progress(r)->n_planned = 1;
    gb_run_progress(r, GB_PROGRESS_START, NULL);
    if ((rc = gb_run_prepare(r, shape, id, res, &cached)) || res->failure) return rc;
    gb_pending p;
    rc = gb_pending_start(r, shape, id, &config, false, &p);
    if (rc == GB_OK) rc = gb_pending_finish(r, id, &p, gb_pipeline_full(r), res, &best, NULL);
    gb_pending_free(r, &p);
    res->n_evals = 1;
    if (rc == GB_OK && gb_run_wants_baseline(r)) rc = gb_run_time_reference(r, shape, res);
    return gb_run_settle(r, id, &best, res, rc);
}
