/* Trials on several GPUs at once (exec/pool.h): a thread per executor, one
 * slot each, a mutex and two condition variables between them and the caller. */
#include "exec/pool.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef enum slot_state { IDLE, QUEUED, RUNNING, ENDED } slot_state;

typedef struct slot {
    gb_exec_pool *pool;
    gb_exec *exec;
    int gpu;
    pthread_t thread;
    bool started;
    slot_state state;
    uint64_t tag;
    gb_variant v;
    gb_check_spec check;
    gb_measure_opts opts;
    double timeout_s;
    gb_trial_result result;
    int rc;
    gb_err err;
} slot;

struct gb_exec_pool {
    pthread_mutex_t lock;
    pthread_cond_t work;  /* a slot was queued, or the pool is ending */
    pthread_cond_t ended; /* a slot's trial ended */
    bool stopping;
    int n;
    slot slots[];
};

static void *serve(void *arg)
{
    slot *s = arg;
    gb_exec_pool *p = s->pool;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (s->state != QUEUED && !p->stopping)
            pthread_cond_wait(&p->work, &p->lock);
        if (s->state != QUEUED) break;
        s->state = RUNNING;
        pthread_mutex_unlock(&p->lock);
        gb_err err = {0};
        gb_trial_result result = {0};
        int rc = gb_exec_trial(s->exec, &s->v, &s->check, &s->opts, s->timeout_s, &result, &err);
        pthread_mutex_lock(&p->lock);
        s->rc = rc;
        s->err = err;
        s->result = result; /* moved */
        s->state = ENDED;
        pthread_cond_broadcast(&p->ended);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

int gb_exec_pool_create(gb_exec *const *execs, const int *gpus, int n, gb_exec_pool **out,
                        gb_err *err)
{
    *out = NULL;
    if (n < 1 || n > GB_POOL_MAX)
        return gb_err_set(err, GB_EINVAL, "a pool drives 1 to %d GPUs, not %d", GB_POOL_MAX, n);
    gb_exec_pool *p = calloc(1, sizeof *p + (size_t)n * sizeof p->slots[0]);
    if (!p) return gb_err_set(err, GB_ENOMEM, "out of memory");
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->ended, NULL);
    p->n = n;
    for (int i = 0; i < n; i++) {
        slot *s = &p->slots[i];
        *s = (slot){.pool = p, .exec = execs[i], .gpu = gpus[i]};
        if (pthread_create(&s->thread, NULL, serve, s) != 0) {
            gb_exec_pool_destroy(p);
            return gb_err_set(err, GB_ENOMEM, "starting the thread of GPU %d", gpus[i]);
        }
        s->started = true;
    }
    *out = p;
    return GB_OK;
}

void gb_exec_pool_destroy(gb_exec_pool *pool)
{
    if (!pool) return;
    pthread_mutex_lock(&pool->lock);
    pool->stopping = true;
    pthread_cond_broadcast(&pool->work);
    pthread_mutex_unlock(&pool->lock);
    for (int i = 0; i < pool->n; i++) {
        if (pool->slots[i].started) pthread_join(pool->slots[i].thread, NULL);
        gb_trial_result_free(&pool->slots[i].result);
    }
    pthread_cond_destroy(&pool->ended);
    pthread_cond_destroy(&pool->work);
    pthread_mutex_destroy(&pool->lock);
    free(pool);
}

static int count(gb_exec_pool *pool, bool idle)
{
    int n = 0;
    pthread_mutex_lock(&pool->lock);
    for (int i = 0; i < pool->n; i++)
        n += (pool->slots[i].state == IDLE) == idle;
    pthread_mutex_unlock(&pool->lock);
    return n;
}

int gb_exec_pool_idle(gb_exec_pool *pool)
{
    return count(pool, true);
}

int gb_exec_pool_pending(gb_exec_pool *pool)
{
    return count(pool, false);
}

int gb_exec_pool_submit(gb_exec_pool *pool, uint64_t tag, const gb_variant *v,
                        const gb_check_spec *check, const gb_measure_opts *opts, double timeout_s,
                        gb_err *err)
{
    pthread_mutex_lock(&pool->lock);
    slot *s = NULL;
    for (int i = 0; !s && i < pool->n; i++)
        if (pool->slots[i].state == IDLE) s = &pool->slots[i];
    if (s) {
        s->tag = tag;
        s->v = *v;
        s->check = *check;
        s->opts = *opts;
        s->timeout_s = timeout_s;
        s->state = QUEUED;
        pthread_cond_broadcast(&pool->work);
    }
    pthread_mutex_unlock(&pool->lock);
    return s ? GB_OK : gb_err_set(err, GB_EBUSY, "every GPU of the pool is busy");
}

static slot *first_ended(gb_exec_pool *pool, bool *out_any)
{
    *out_any = false;
    for (int i = 0; i < pool->n; i++) {
        if (pool->slots[i].state == ENDED) return &pool->slots[i];
        *out_any |= pool->slots[i].state != IDLE;
    }
    return NULL;
}

int gb_exec_pool_poll(gb_exec_pool *pool, uint64_t *out_tag, int *out_gpu, gb_trial_result *out,
                      int *out_rc, gb_err *err)
{
    bool any;
    pthread_mutex_lock(&pool->lock);
    slot *s = first_ended(pool, &any);
    while (!s && any) {
        pthread_cond_wait(&pool->ended, &pool->lock);
        s = first_ended(pool, &any);
    }
    if (s) {
        *out_tag = s->tag;
        *out_gpu = s->gpu;
        *out = s->result; /* moved */
        *out_rc = s->rc;
        if (s->rc) gb_err_copy(err, &s->err);
        memset(&s->result, 0, sizeof s->result);
        s->state = IDLE;
    }
    pthread_mutex_unlock(&pool->lock);
    return s ? GB_OK : GB_ENOTFOUND;
}
