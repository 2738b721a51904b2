/* The results of a tuning run (tuner/result.h): names, counts and their end. */
#include "tuner/result.h"

#include <stdlib.h>
#include <string.h>

const char *gb_search_end_name(gb_search_end end)
{
    static const char *const names[] = {"", "space", "evals", "seconds", "strategy", "interrupt"};
    return (unsigned)end < sizeof names / sizeof names[0] ? names[end] : "";
}

void gb_trial_note_free(gb_trial_note *t)
{
    if (!t) return;
    free(t->config_text);
    gb_fields_free(&t->config);
    free(t->reason);
    gb_measurement_free(&t->measurement);
    memset(t, 0, sizeof *t);
}

int gb_shape_n_failed(const gb_shape_result *s)
{
    int n = 0;
    for (int i = 0; i < s->n_trials; i++)
        n += s->trials[i].status != GB_TRIAL_OK;
    return n;
}

void gb_tune_result_free(gb_tune_result *result)
{
    if (!result) return;
    for (int i = 0; i < result->n_shapes; i++) {
        gb_shape_result *s = &result->shapes[i];
        gb_fields_free(&s->shape);
        gb_fields_free(&s->best_config);
        free(s->key_text);
        free(s->failure);
        free(s->race_failure);
        gb_measurement_free(&s->best_measurement);
        for (int j = 0; j < s->n_tie; j++)
            free(s->tie[j]);
        free(s->tie);
        gb_measurement_free(&s->baseline);
        for (int j = 0; j < s->n_trials; j++)
            gb_trial_note_free(&s->trials[j]);
        free(s->trials);
    }
    for (int i = 0; i < result->n_compiles; i++) {
        gb_fields_free(&result->compiles[i].config);
        free(result->compiles[i].error);
        free(result->compiles[i].limit);
    }
    free(result->shapes);
    free(result->compiles);
    memset(result, 0, sizeof *result);
}
