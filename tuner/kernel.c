/* What the tuner derives from a kernel (tuner/kernel.h): its constraints as a
 * filter, the fields that key the cache, and its end. */
#include "tuner/kernel.h"

#include <stdlib.h>
#include <string.h>

int gb_tune_accept(void *ctx, const gb_config *config, bool *ok, gb_err *err)
{
    const gb_kernel_def *k = ctx;
    if (!k->hooks.accept) {
        *ok = true;
        return GB_OK;
    }
    return k->hooks.accept(k->hooks_ctx, config, ok, err);
}

int gb_tune_key_fields(const gb_kernel_def *k, const gb_fields *shape, gb_fields *out, gb_err *err)
{
    *out = (gb_fields){0};
    int rc = GB_OK;
    for (int i = 0; rc == GB_OK && i < shape->n; i++) {
        bool keyed = k->n_key_fields == 0;
        for (int j = 0; !keyed && j < k->n_key_fields; j++)
            keyed = strcmp(k->key_fields[j], shape->names[i]) == 0;
        if (keyed) rc = gb_fields_set(out, shape->names[i], &shape->values[i]);
    }
    for (int j = 0; rc == GB_OK && j < k->n_key_fields; j++)
        if (!gb_fields_get(shape, k->key_fields[j]))
            rc = gb_err_set(err, GB_ESCRIPT, "kernel %s: key field %s is not in the shape", k->name,
                            k->key_fields[j]);
    if (rc == GB_ENOMEM) gb_err_set(err, rc, "out of memory");
    if (rc) gb_fields_free(out);
    return rc;
}

bool gb_kernel_is_library(const gb_kernel_def *def)
{
    return def && def->hooks.gemm;
}

static void free_strings(char **list, int n)
{
    for (int i = 0; list && i < n; i++)
        free(list[i]);
    free(list);
}

void gb_kernel_def_free(gb_kernel_def *def)
{
    if (!def) return;
    free(def->name);
    free(def->source);
    free(def->source_name);
    free(def->entry);
    free(def->args_where);
    free(def->defined_at);
    free_strings(def->include_dirs, def->n_include_dirs);
    free_strings(def->options, def->n_options);
    free_strings(def->key_fields, def->n_key_fields);
    gb_space_free(&def->space);
    if (def->reference) {
        gb_kernel_def_free(def->reference);
        free(def->reference);
    }
    memset(def, 0, sizeof *def);
}
