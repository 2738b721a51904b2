/* Sessions, tuning and looking up through the C API (include/gpubench/gpubench.h):
 * a gb_session (session/session.h) with worker processes, and the cache's
 * tables read as a tuned header reads them. */
#include "api/internal.h"

#include "report/export/export.h"

#include <stdlib.h>
#include <string.h>

/* A session opened without a worker program: when a tune needs the GPU, it is
 * told why there is none. */
static int no_worker(void *ctx, gb_exec **out, gb_err *err)
{
    char path[4096];
    int rc = gb_api_find_worker(NULL, path, sizeof path, err);
    return rc ? rc
              : gb_err_set(err, GB_ENOTFOUND, "no GPU worker was found when the session opened");
}

/* ---- the tables lookups read -------------------------------------------------- */

/* The kernel's table for the session's device (or the only device), read from
 * the cache the first time and kept. */
static int table_for(gpubench_session *s, const char *kernel, const gb_export_table **out,
                     gb_err *err)
{
    for (int i = 0; i < s->n_tables; i++)
        if (!strcmp(s->tables[i].kernel, kernel) && !strcmp(s->tables[i].device, s->device)) {
            *out = &s->tables[i].table;
            return GB_OK;
        }
    gb_api_table *grown = realloc(s->tables, (size_t)(s->n_tables + 1) * sizeof *grown);
    if (!grown) return gb_err_set(err, GB_ENOMEM, "out of memory");
    s->tables = grown;
    gb_api_table *t = &grown[s->n_tables];
    memset(t, 0, sizeof *t);
    gb_export_query q = {.kernel = kernel, .device = s->device[0] ? s->device : NULL};
    int rc = gb_export_load(s->session.tuner.cache, &q, &t->table, err);
    if (rc == GB_OK) rc = gb_export_table_finish(&t->table, "lookup", NULL, err);
    if (rc == GB_OK && !(t->kernel = strdup(kernel)))
        rc = gb_err_set(err, GB_ENOMEM, "out of memory");
    if (rc) {
        gb_export_table_free(&t->table);
        return rc;
    }
    memcpy(t->device, s->device, sizeof t->device);
    s->n_tables++;
    *out = &t->table;
    return GB_OK;
}

/* Forgets the kept tables of kernel (all of them: NULL), which a tune changed. */
static void forget_tables(gpubench_session *s, const char *kernel)
{
    int kept = 0;
    for (int i = 0; i < s->n_tables; i++) {
        gb_api_table *t = &s->tables[i];
        if (kernel && strcmp(t->kernel, kernel)) {
            s->tables[kept++] = *t;
            continue;
        }
        free(t->kernel);
        gb_export_table_free(&t->table);
    }
    s->n_tables = kept;
}

/* ---- sessions ------------------------------------------------------------------ */

void gpubench_session_options_init(gpubench_session_options *o)
{
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    o->lease_wait_s = 3600;
    o->seed = 1;
}

static int copy_options(gpubench_session *s, const gpubench_session_options *o, gb_err *err)
{
    gb_tuner_opts *t = &s->session.tuner;
    t->log = o->log;
    t->force = o->force != 0;
    t->compile_only = o->compile_only != 0;
    t->seed = o->seed;
    if (o->jobs > 0) t->jobs = o->jobs;
    s->session.require_gpu = o->require_gpu != 0;
    s->session.lease.wait_s = o->lease_wait_s;
    if (o->arch && !(s->arch = strdup(o->arch))) return gb_err_set(err, GB_ENOMEM, "out of memory");
    t->arch = s->arch;
    char worker[4096];
    int rc = gb_api_find_worker(o->worker, worker, sizeof worker, err);
    if (rc == GB_OK) return gb_session_use_workers(&s->session, worker, o->device, err);
    if (o->worker || getenv("GPUBENCH_WORKER")) return rc; /* a bad one given is an error */
    s->session.open_exec = no_worker;                      /* else only when a GPU is needed */
    return GB_OK;
}

int gpubench_session_open(const gpubench_session_options *o, gpubench_session **out,
                          gpubench_error *err)
{
    gpubench_session_options defaults;
    gpubench_session_options_init(&defaults);
    if (!o) o = &defaults;
    gb_err e = {0};
    if (o->size != sizeof *o) {
        gb_err_set(&e, GB_EINVAL,
                   "gpubench_session_options of %zu bytes, this library's have %zu: fill them "
                   "with gpubench_session_options_init",
                   o->size, sizeof *o);
        return gb_api_error_out(&e, err);
    }
    gpubench_session *s = calloc(1, sizeof *s);
    if (!s) return gpubench_error_set(err, GPUBENCH_ENOMEM, "out of memory");
    gb_session_init(&s->session);
    int rc = copy_options(s, o, &e);
    if (rc == GB_OK && !o->no_cache)
        rc = gb_cache_open_or_default(o->cache_dir, 0, &s->session.tuner.cache, &e);
    if (rc) {
        gpubench_session_close(s);
        return gb_api_error_out(&e, err);
    }
    *out = s;
    return GPUBENCH_OK;
}

void gpubench_session_close(gpubench_session *s)
{
    if (!s) return;
    gb_session_close(&s->session); /* the worker, then the GPU's lease */
    forget_tables(s, NULL);
    free(s->tables);
    gb_cache_close(s->session.tuner.cache);
    free(s->arch);
    free(s);
}

int gpubench_session_device(gpubench_session *s, char *buf, size_t size, gpubench_error *err)
{
    gb_err e = {0};
    gb_device_info info;
    int rc = gb_session_gpu(&s->session, &info, &e);
    if (rc == GB_ENOGPU && s->session.gpu_missing) gb_err_copy(&e, &s->session.gpu_missing_err);
    if (rc) return gb_api_error_out(&e, err);
    gb_device_fingerprint(&info, s->device, sizeof s->device);
    snprintf(buf, size, "%s", s->device);
    return GPUBENCH_OK;
}

/* ---- tuning -------------------------------------------------------------------- */

void gpubench_tune_options_init(gpubench_tune_options *o)
{
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
}

void gpubench_best_clear(gpubench_best *b)
{
    if (!b) return;
    gpubench_fields_free(b->config);
    gpubench_fields_free(b->shape);
    memset(b, 0, sizeof *b);
}

/* b's config and shape as copies of the engine's fields. */
static int best_fields(gpubench_best *b, const gb_fields *config, const gb_fields *shape,
                       gb_err *err)
{
    if (gpubench_fields_new(&b->config) || gpubench_fields_new(&b->shape) ||
        gb_fields_copy(config, &b->config->f) || gb_fields_copy(shape, &b->shape->f)) {
        gpubench_best_clear(b);
        return gb_err_set(err, GB_ENOMEM, "out of memory");
    }
    return GB_OK;
}

/* Why a shape has no best, in one sentence. */
static int no_best(const gb_tune_result *r, const gb_shape_result *s, gb_err *err)
{
    if (r->compile_only)
        return gb_err_set(err, GB_ENOGPU, "compiled %d variants; timing them needs a GPU",
                          s->n_compiled);
    if (s->failure) return gb_err_set(err, GB_ENOTFOUND, "%s", s->failure);
    char counts[512] = "";
    size_t used = 0;
    for (int st = GB_TRIAL_WRONG; st < GB_TRIAL_STATUS_COUNT; st++)
        if (s->n_status[st] && used < sizeof counts)
            used +=
                (size_t)snprintf(counts + used, sizeof counts - used, "%s%d %s", used ? ", " : "",
                                 s->n_status[st], gb_trial_status_name((gb_trial_status)st));
    for (int i = 0; i < s->n_trials; i++) /* the first reason tells most */
        if (s->trials[i].status != GB_TRIAL_OK)
            return gb_err_set(err, GB_ENOTFOUND,
                              "no configuration compiled, ran and passed the check (%s); the "
                              "first, %s: %s",
                              counts, s->trials[i].config_text, s->trials[i].reason);
    return gb_err_set(err, GB_ENOTFOUND, "no configuration is valid: the constraint kept none");
}

static void request(const gpubench_fields *shape, const gpubench_tune_options *o,
                    gb_tune_request *req)
{
    *req = (gb_tune_request){.shapes = &shape->f, .n_shapes = 1};
    if (!o) return;
    req->max_evals = o->max_evals;
    req->max_seconds = o->max_seconds;
    req->strategy = o->strategy;
    req->has_seed = o->has_seed != 0;
    req->seed = o->seed;
}

int gpubench_tune(gpubench_session *s, const gpubench_kernel *k, const gpubench_fields *shape,
                  const gpubench_tune_options *o, gpubench_best *out, gpubench_error *err)
{
    gb_err e = {0};
    if (o && o->size != sizeof *o)
        gb_err_set(&e, GB_EINVAL, "gpubench_tune_options of %zu bytes, this library's have %zu",
                   o->size, sizeof *o);
    else if (!shape)
        gb_err_set(&e, GB_EINVAL, "tuning %s: no shape", k->def.name);
    if (e.code || gb_api_kernel_check(k, &e)) return gb_api_error_out(&e, err);
    gb_tune_request req;
    request(shape, o, &req);
    gb_tune_result r;
    int rc = gb_session_tune(&s->session, &k->def, &req, &r, &e);
    if (rc == GB_OK && r.device[0]) memcpy(s->device, r.device, sizeof s->device);
    forget_tables(s, k->def.name); /* the cache may hold new entries of it */
    const gb_shape_result *res = r.n_shapes ? &r.shapes[0] : NULL;
    if (rc == GB_OK && (!res || !res->has_best)) rc = res ? no_best(&r, res, &e) : GB_EINVAL;
    gpubench_best b = {0};
    if (rc == GB_OK) rc = best_fields(&b, &res->best_config, &res->shape, &e);
    if (rc == GB_OK) {
        b.median_ms = res->best.median;
        b.match = GPUBENCH_EXACT;
        b.cached = res->cached;
        snprintf(b.device, sizeof b.device, "%s", r.device);
        *out = b;
    }
    gb_tune_result_free(&r);
    return rc ? gb_api_error_out(&e, err) : GPUBENCH_OK;
}

/* ---- looking up ------------------------------------------------------------------ */

/* The values of a row as named fields. */
static int row_fields(const gb_export_column *cols, int n, const gb_value *values, gb_fields *out)
{
    memset(out, 0, sizeof *out);
    for (int i = 0; i < n; i++)
        if (gb_fields_set(out, cols[i].name, &values[i])) return GB_ENOMEM;
    return GB_OK;
}

static int answer(const gb_export_table *t, int row, gb_export_match match, gpubench_best *out,
                  gb_err *err)
{
    const gb_export_row *r = &t->rows[row];
    gb_fields config = {0}, shape = {0};
    int rc = row_fields(t->params, t->n_params, r->config, &config);
    if (rc == GB_OK) rc = row_fields(t->keys, t->n_keys, r->key, &shape);
    gpubench_best b = {0};
    rc = rc ? gb_err_set(err, GB_ENOMEM, "out of memory") : best_fields(&b, &config, &shape, err);
    gb_fields_free(&config);
    gb_fields_free(&shape);
    if (rc) return rc;
    b.median_ms = r->median_ms;
    b.match = match == GB_EXPORT_EXACT ? GPUBENCH_EXACT : GPUBENCH_NEAREST;
    snprintf(b.device, sizeof b.device, "%s", t->device);
    *out = b;
    return GB_OK;
}

int gpubench_lookup(gpubench_session *s, const gpubench_kernel *k, const gpubench_fields *shape,
                    gpubench_best *out, gpubench_error *err)
{
    gb_err e = {0};
    if (!s->session.tuner.cache || !shape) {
        gb_err_set(&e, GB_EINVAL, "looking up %s: %s", k->def.name,
                   shape ? "the session has no cache (no_cache)" : "no shape");
        return gb_api_error_out(&e, err);
    }
    const gb_export_table *t = NULL;
    gb_fields key = {0};
    int row = -1;
    gb_export_match match = GB_EXPORT_DEFAULT;
    int rc = gb_tune_key_fields(&k->def, &shape->f, &key, &e);
    if (rc == GB_ESCRIPT) rc = e.code = GB_EINVAL; /* the shape lacks a key field */
    if (rc == GB_OK) rc = table_for(s, k->def.name, &t, &e);
    if (rc == GB_OK) rc = gb_export_table_lookup(t, &key, &row, &match, &e);
    if (rc == GB_OK && row < 0)
        rc =
            gb_err_set(&e, GB_ENOTFOUND,
                       "no entry of %s has the shape's string and boolean key fields", k->def.name);
    if (rc == GB_OK) rc = answer(t, row, match, out, &e);
    gb_fields_free(&key);
    if (rc) gb_err_context(&e, "looking up %s", k->def.name);
    return rc ? gb_api_error_out(&e, err) : GPUBENCH_OK;
}
