/*
 * A search strategy: how the tuner chooses which configurations of a space to try.
 *
 * The pipeline (tuner/search_run.c on the GPU, tuner/replay.c against a recorded
 * table) knows strategies only through this interface: it asks for up to n
 * configurations, compiles and times them, and tells the strategy what happened,
 * failures included. Asks and tells interleave freely: while the GPU times one
 * variant the pipeline has already asked for the next ones, so a strategy must
 * answer an ask before it has heard about everything it proposed.
 *
 * Every configuration a strategy proposes is accepted by the kernel's constraints
 * and was never proposed (or recorded) before: gb_search_claim() is how a strategy
 * makes sure, and the search keeps the set of configurations seen. A strategy
 * reads randomness only from search->rng, so the same seed and the same
 * observations give the same proposals.
 *
 * Each kind of strategy is one file in tuner/strategies/ and one row of
 * gb_strategy_kinds (strategy.c); a script's own strategy (a Lua table with
 * ask and tell) is created through a gb_strategy_factory.
 */
#ifndef GB_TUNER_STRATEGY_H
#define GB_TUNER_STRATEGY_H

#include "base/error.h"
#include "exec/exec.h"
#include "tuner/search.h"

#include <stdbool.h>

/* What became of one proposed configuration. */
typedef struct gb_observation {
    gb_config config;
    gb_trial_status status; /* GB_TRIAL_OK, or why it failed (compile_error, crashed, ...) */
    double ms;              /* the screening median when ok; NAN otherwise */
    bool recorded;          /* found in an earlier run's records, not timed now */
} gb_observation;

typedef struct gb_strategy gb_strategy;

typedef struct gb_strategy_ops {
    /* Up to n new configurations into out (room for n), *out_n of them. *out_n 0
     * means nothing more until it is told more; with nothing in flight, the search
     * is over. A script error or ENOMEM ends the search with that error. */
    int (*ask)(gb_strategy *s, int n, gb_config *out, int *out_n, gb_err *err);
    /* Results of earlier proposals (or of recorded trials), in any order. */
    int (*tell)(gb_strategy *s, const gb_observation *obs, int n, gb_err *err);
    void (*destroy)(gb_strategy *s);
} gb_strategy_ops;

/* Every strategy starts with this; its own state follows. */
struct gb_strategy {
    const gb_strategy_ops *ops;
    gb_search *search; /* borrowed: the space, its constraints, the rng, what was seen */
};

typedef int (*gb_strategy_create_fn)(gb_search *search, gb_strategy **out, gb_err *err);

typedef struct gb_strategy_kind {
    const char *name;
    const char *summary; /* one line, for --help and errors */
    gb_strategy_create_fn create;
} gb_strategy_kind;

/* The built-in strategies, in the order --help lists them. */
extern const gb_strategy_kind gb_strategy_kinds[];
extern const int gb_strategy_n_kinds;

/* The kind called name, or NULL. */
const gb_strategy_kind *gb_strategy_find(const char *name);

/* "exhaustive, random, anneal, genetic, local, auto" */
void gb_strategy_append_names(gb_strbuf *sb);

/* A strategy the caller brings (a script's): create is called once per shape. */
typedef struct gb_strategy_factory {
    const char *name; /* how results and records name it */
    int (*create)(void *ctx, gb_search *search, gb_strategy **out, gb_err *err);
    void *ctx;
} gb_strategy_factory;

static inline int gb_strategy_ask(gb_strategy *s, int n, gb_config *out, int *out_n, gb_err *err)
{
    *out_n = 0;
    return s->ops->ask(s, n, out, out_n, err);
}

static inline int gb_strategy_tell(gb_strategy *s, const gb_observation *obs, int n, gb_err *err)
{
    return s->ops->tell(s, obs, n, err);
}

/* NULL is a no-op. */
static inline void gb_strategy_destroy(gb_strategy *s)
{
    if (s) s->ops->destroy(s);
}

/* The built-in kinds' constructors (tuner/strategies/). */
int gb_strategy_exhaustive(gb_search *search, gb_strategy **out, gb_err *err);
int gb_strategy_random(gb_search *search, gb_strategy **out, gb_err *err);
int gb_strategy_anneal(gb_search *search, gb_strategy **out, gb_err *err);
int gb_strategy_genetic(gb_search *search, gb_strategy **out, gb_err *err);
int gb_strategy_local(gb_search *search, gb_strategy **out, gb_err *err);
int gb_strategy_auto(gb_search *search, gb_strategy **out, gb_err *err);

#endif
