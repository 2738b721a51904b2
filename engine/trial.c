/* The trial's data (engine/trial.h): status names, phases, freeing. */
#include "engine/trial.h"

#include <string.h>

static const char *const status_names[GB_TRIAL_STATUS_COUNT] = {
    [GB_TRIAL_OK] = "ok",
    [GB_TRIAL_WRONG] = "wrong",
    [GB_TRIAL_COMPILE_ERROR] = "compile_error",
    [GB_TRIAL_LAUNCH_ERROR] = "launch_error",
    [GB_TRIAL_CRASHED] = "crashed",
    [GB_TRIAL_TIMEOUT] = "timeout",
    [GB_TRIAL_SKIPPED] = "skipped",
};

const char *gb_trial_status_name(gb_trial_status status)
{
    return (unsigned)status < GB_TRIAL_STATUS_COUNT ? status_names[status] : "unknown";
}

int gb_trial_status_parse(const char *name, gb_trial_status *out)
{
    for (int i = 0; i < GB_TRIAL_STATUS_COUNT; i++) {
        if (strcmp(name, status_names[i]) == 0) {
            *out = (gb_trial_status)i;
            return GB_OK;
        }
    }
    return GB_EINVAL;
}

void gb_trial_result_free(gb_trial_result *result)
{
    if (result) gb_measurement_free(&result->measurement);
}

void gb_trial_phases_add(gb_trial_phases *sum, const gb_trial_phases *t)
{
    sum->load_ms += t->load_ms;
    sum->check_ms += t->check_ms;
    sum->warmup_ms += t->warmup_ms;
    sum->sample_ms += t->sample_ms;
    sum->kernel_ms += t->kernel_ms;
    sum->timer_ms += t->timer_ms;
    sum->n_samples += t->n_samples;
    sum->session_ms += t->session_ms;
    sum->total_ms += t->total_ms;
}
