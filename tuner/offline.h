/*
 * A strategy run against a function instead of the GPU: synthetic objectives in
 * the tests, a recorded table in `gpubench replay` (tuner/replay.c). Proposals are
 * evaluated in batches of the size the pipeline would ask for, and told back at
 * once.
 */
#ifndef GB_TUNER_OFFLINE_H
#define GB_TUNER_OFFLINE_H

#include "tuner/strategy.h"

/* The time of one configuration, or why it has none (a status other than ok). */
typedef int (*gb_objective_fn)(void *ctx, const gb_config *config, gb_trial_status *out_status,
                               double *out_ms, gb_err *err);

typedef struct gb_offline_opts {
    int max_evals;    /* 0: until the strategy stops or the space is used up */
    int batch;        /* configurations asked for at a time (0: 1) */
    double target_ms; /* > 0: stop once a configuration this fast was found */
    /* Optional: called with each evaluation, in order, failures included. */
    void (*on_eval)(void *ctx, const gb_observation *o);
    void *on_eval_ctx;
} gb_offline_opts;

typedef struct gb_offline_result {
    int n_evals;         /* configurations evaluated, failures included */
    int n_failed;        /* of them, without a time */
    int evals_to_target; /* evaluations until the first one at or under target_ms; -1: none */
    bool has_best;
    double best_ms;
    gb_config best;
    bool exhausted; /* every valid configuration was evaluated */
} gb_offline_result;

/* Asks, evaluates and tells until the budget, the target or the strategy ends
 * it. Errors are the strategy's or the objective's. */
int gb_offline_search(gb_strategy *s, gb_objective_fn objective, void *ctx,
                      const gb_offline_opts *opts, gb_offline_result *out, gb_err *err);

#endif
