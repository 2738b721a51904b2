#include "tuner/compiler.h"

#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define MAX_THREADS 64

struct gb_compile_job {
    gb_compile_req req; /* points into the copies below */
    char *source, *source_name, *arch, *label;
    char *names[GB_NVRTC_MAX_NAMES];
    char **options;
    char **include_dirs;
    gb_key key;
    int rc;
    gb_err err;
    gb_compile_out out;
    bool cached;
    bool submitted;
    bool done;
    gb_compile_job *next;
};

struct gb_compiler {
    gb_cache *cache;
    pthread_t threads[MAX_THREADS];
    int n_threads;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    gb_compile_job *head, *tail;
    bool stopping;
    gb_err cache_err;
};

/* ---- jobs --------------------------------------------------------------- */

static char **copy_strings(const char *const *src, int n)
{
    char **out = calloc((size_t)n + 1, sizeof *out);
    for (int i = 0; out && i < n; i++) {
        if (!(out[i] = strdup(src[i]))) {
            for (int j = 0; j < i; j++)
                free(out[j]);
            free(out);
            return NULL;
        }
    }
    return out;
}

static void free_strings(char **list)
{
    for (char **p = list; p && *p; p++)
        free(*p);
    free(list);
}

static int job_key(gb_compile_job *job, const gb_key *source_fp)
{
    char nvrtc[16];
    gb_nvrtc_version(nvrtc);
    gb_keybuf kb;
    gb_key_begin(&kb, "cubin");
    gb_key_add_bytes(&kb, source_fp->bytes, sizeof source_fp->bytes);
    gb_key_add_str(&kb, job->arch);
    gb_key_add_str(&kb, nvrtc);
    gb_key_add_i64(&kb, job->req.n_name_exprs);
    for (int i = 0; i < job->req.n_name_exprs; i++)
        gb_key_add_str(&kb, job->names[i]);
    for (int i = 0; i < job->req.n_options; i++)
        gb_key_add_str(&kb, job->options[i]);
    return gb_key_finish(&kb, &job->key);
}

int gb_compile_job_create(const gb_compile_req *req, const gb_key *source_fp, gb_compile_job **out,
                          gb_err *err)
{
    gb_compile_job *job = calloc(1, sizeof *job);
    if (!job) return gb_err_set(err, GB_ENOMEM, "out of memory");
    job->source = strdup(req->source);
    job->source_name = strdup(req->source_name);
    job->arch = strdup(req->arch);
    job->label = req->label ? strdup(req->label) : NULL;
    job->options = copy_strings(req->options, req->n_options);
    job->include_dirs = copy_strings(req->include_dirs, req->n_include_dirs);
    bool ok = job->source && job->source_name && job->arch && job->options && job->include_dirs &&
              (job->label || !req->label);
    for (int i = 0; ok && i < req->n_name_exprs; i++)
        ok = (job->names[i] = strdup(req->name_exprs[i])) != NULL;
    job->req = *req;
    job->req.source = job->source;
    job->req.source_name = job->source_name;
    job->req.arch = job->arch;
    job->req.label = job->label;
    job->req.options = (const char *const *)job->options;
    job->req.include_dirs = (const char *const *)job->include_dirs;
    for (int i = 0; i < req->n_name_exprs; i++)
        job->req.name_exprs[i] = job->names[i];
    if (!ok || job_key(job, source_fp) != GB_OK) {
        gb_compile_job_free(job);
        return gb_err_set(err, GB_ENOMEM, "out of memory");
    }
    *out = job;
    return GB_OK;
}

void gb_compile_job_free(gb_compile_job *job)
{
    if (!job) return;
    free(job->source);
    free(job->source_name);
    free(job->arch);
    free(job->label);
    for (int i = 0; i < GB_NVRTC_MAX_NAMES; i++)
        free(job->names[i]);
    free_strings(job->options);
    free_strings(job->include_dirs);
    gb_compile_out_free(&job->out);
    free(job);
}

const gb_key *gb_compile_job_key(const gb_compile_job *job)
{
    return &job->key;
}

bool gb_compile_job_cached(const gb_compile_job *job)
{
    return job->cached;
}

/* ---- the cubin store ---------------------------------------------------- */

/* The JSON half of a cubin record: lowered names, ptxas log, compile time and
 * resource usage. NULL on ENOMEM. */
static json_t *meta_json(const gb_compile_job *job)
{
    json_t *lowered = json_array();
    for (int i = 0; lowered && i < job->req.n_name_exprs; i++) {
        if (json_array_append_new(lowered, gb_json_text(job->out.lowered[i], 0))) {
            json_decref(lowered);
            lowered = NULL;
        }
    }
    const gb_resources *r = &job->out.resources;
    json_t *log = job->out.log ? gb_json_text(job->out.log, 0) : json_null();
    char nvrtc[16];
    gb_nvrtc_version(nvrtc);
    /* "o" takes the references, also when the pack fails. "nvrtc" and "arch" are
     * what `cache gc` drops a cubin by when NVRTC or the target changes. */
    return json_pack("{s:o, s:o, s:o, s:[iiiii], s:s, s:s}", "lowered", lowered, "log", log,
                     "compile_ms", gb_json_real(job->out.compile_ms), "resources", r->registers,
                     r->spill_store_bytes, r->spill_load_bytes, r->stack_bytes,
                     r->smem_static_bytes, "nvrtc", nvrtc, "arch", job->arch);
}

static bool read_meta(const json_t *meta, gb_compile_job *job)
{
    const json_t *lowered = gb_json_get(meta, "lowered");
    const json_t *res = gb_json_get(meta, "resources");
    if (gb_json_len(lowered) != (size_t)job->req.n_name_exprs || gb_json_len(res) != 5)
        return false;
    for (int i = 0; i < job->req.n_name_exprs; i++)
        if (!(job->out.lowered[i] = strdup(gb_json_str(gb_json_at(lowered, (size_t)i), ""))))
            return false;
    job->out.log = strdup(gb_json_str(gb_json_get(meta, "log"), ""));
    job->out.compile_ms = gb_json_num(gb_json_get(meta, "compile_ms"), 0);
    int *fields[] = {&job->out.resources.registers, &job->out.resources.spill_store_bytes,
                     &job->out.resources.spill_load_bytes, &job->out.resources.stack_bytes,
                     &job->out.resources.smem_static_bytes};
    for (size_t i = 0; i < 5; i++) {
        double v = gb_json_num(gb_json_at(res, i), -1);
        *fields[i] = v >= -1 && v <= INT_MAX ? (int)v : -1;
    }
    return job->out.log != NULL;
}

static bool lookup(gb_cache *cache, gb_compile_job *job)
{
    char *meta_text = NULL;
    json_t *meta = NULL;
    gb_err ignored;
    if (!cache || gb_cache_get_cubin(cache, &job->key, &meta_text, &job->out.cubin,
                                     &job->out.cubin_bytes, &ignored) != GB_OK)
        return false;
    bool ok = gb_json_parse(meta_text, strlen(meta_text), &meta, &ignored) == GB_OK &&
              read_meta(meta, job);
    free(meta_text);
    json_decref(meta);
    if (!ok) gb_compile_out_free(&job->out); /* unreadable: compile afresh */
    return ok;
}

static void store(gb_compiler *c, gb_compile_job *job)
{
    if (!c->cache) return;
    json_t *meta = meta_json(job);
    char *text = gb_json_dump(meta, false);
    json_decref(meta);
    gb_err err = {0};
    int rc = text ? gb_cache_put_cubin(c->cache, &job->key, text, job->out.cubin,
                                       job->out.cubin_bytes, &err)
                  : gb_err_set(&err, GB_ENOMEM, "out of memory writing a cubin record");
    free(text);
    if (rc == GB_OK) return;
    pthread_mutex_lock(&c->lock);
    if (c->cache_err.code == GB_OK) gb_err_copy(&c->cache_err, &err);
    pthread_mutex_unlock(&c->lock);
}

static void run_job(gb_compiler *c, gb_compile_job *job)
{
    if (lookup(c->cache, job)) {
        job->cached = true;
        job->rc = GB_OK;
        return;
    }
    job->rc = gb_nvrtc_compile(&job->req, &job->out, &job->err);
    if (job->rc == GB_OK) store(c, job);
}

/* ---- the pool ----------------------------------------------------------- */

static void *worker_main(void *arg)
{
    gb_compiler *c = arg;
    pthread_mutex_lock(&c->lock);
    for (;;) {
        while (!c->head && !c->stopping)
            pthread_cond_wait(&c->changed, &c->lock);
        if (c->stopping) break;
        gb_compile_job *job = c->head;
        c->head = job->next;
        if (!c->head) c->tail = NULL;
        pthread_mutex_unlock(&c->lock);
        run_job(c, job);
        pthread_mutex_lock(&c->lock);
        job->done = true;
        pthread_cond_broadcast(&c->changed);
    }
    pthread_mutex_unlock(&c->lock);
    return NULL;
}

int gb_compiler_create(gb_cache *cache, int n_threads, gb_compiler **out, gb_err *err)
{
    gb_compiler *c = calloc(1, sizeof *c);
    if (!c) return gb_err_set(err, GB_ENOMEM, "out of memory");
    c->cache = cache;
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->changed, NULL);
    if (n_threads > MAX_THREADS) n_threads = MAX_THREADS;
    for (int i = 0; i < n_threads; i++) {
        if (pthread_create(&c->threads[i], NULL, worker_main, c) != 0) break;
        c->n_threads++;
    }
    if (n_threads > 0 && c->n_threads == 0) {
        gb_compiler_destroy(c);
        return gb_err_set(err, GB_ENOMEM, "could not start compile threads");
    }
    *out = c;
    return GB_OK;
}

void gb_compiler_destroy(gb_compiler *c)
{
    if (!c) return;
    pthread_mutex_lock(&c->lock);
    c->stopping = true;
    pthread_cond_broadcast(&c->changed);
    pthread_mutex_unlock(&c->lock);
    for (int i = 0; i < c->n_threads; i++)
        pthread_join(c->threads[i], NULL);
    pthread_mutex_destroy(&c->lock);
    pthread_cond_destroy(&c->changed);
    free(c);
}

void gb_compiler_submit(gb_compiler *c, gb_compile_job *job)
{
    if (c->n_threads == 0) return; /* compiled when waited for */
    pthread_mutex_lock(&c->lock);
    job->submitted = true;
    job->next = NULL;
    if (c->tail)
        c->tail->next = job;
    else
        c->head = job;
    c->tail = job;
    pthread_cond_broadcast(&c->changed);
    pthread_mutex_unlock(&c->lock);
}

int gb_compiler_wait(gb_compiler *c, gb_compile_job *job, const gb_compile_out **out, gb_err *err)
{
    if (!job->submitted && !job->done) { /* no threads, or never queued */
        run_job(c, job);
        job->done = true;
    }
    pthread_mutex_lock(&c->lock);
    while (!job->done)
        pthread_cond_wait(&c->changed, &c->lock);
    pthread_mutex_unlock(&c->lock);
    *out = &job->out;
    if (job->rc) gb_err_copy(err, &job->err);
    return job->rc;
}

const gb_err *gb_compiler_cache_error(const gb_compiler *c)
{
    return &c->cache_err;
}
