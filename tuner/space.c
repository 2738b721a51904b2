#include "tuner/space.h"

#include <stdlib.h>
#include <string.h>

static void free_param(gb_param *p)
{
    for (int i = 0; i < p->n_values; i++)
        gb_value_free(&p->values[i]);
    free(p->values);
    free(p->name);
    memset(p, 0, sizeof *p);
}

static int check_param(const gb_space *space, const char *name, const gb_value *values,
                       int n_values, gb_err *err)
{
    if (space->n_params >= GB_MAX_PARAMS)
        return gb_err_set(err, GB_EINVAL, "too many parameters (at most %d)", GB_MAX_PARAMS);
    if (n_values < 1) return gb_err_set(err, GB_EINVAL, "parameter %s has no values", name);
    for (int i = 0; i < space->n_params; i++)
        if (strcmp(space->params[i].name, name) == 0)
            return gb_err_set(err, GB_EINVAL, "parameter %s is given twice", name);
    for (int i = 0; i < n_values; i++)
        for (int j = 0; j < i; j++)
            if (gb_value_equal(&values[i], &values[j]))
                return gb_err_set(err, GB_EINVAL, "parameter %s lists value %d twice", name, i + 1);
    return GB_OK;
}

int gb_space_add(gb_space *space, const char *name, const gb_value *values, int n_values,
                 gb_err *err)
{
    int rc = check_param(space, name, values, n_values, err);
    if (rc) return rc;
    gb_param p = {.name = strdup(name), .values = calloc((size_t)n_values, sizeof(gb_value))};
    if (!p.name || !p.values) rc = GB_ENOMEM;
    for (int i = 0; rc == GB_OK && i < n_values; i++) {
        rc = gb_value_copy(&values[i], &p.values[i]);
        if (rc == GB_OK) p.n_values++;
    }
    if (rc) {
        free_param(&p);
        return gb_err_set(err, GB_ENOMEM, "out of memory");
    }
    int at = space->n_params;
    while (at > 0 && strcmp(space->params[at - 1].name, name) > 0) {
        space->params[at] = space->params[at - 1];
        at--;
    }
    space->params[at] = p;
    space->n_params++;
    return GB_OK;
}

void gb_space_free(gb_space *space)
{
    if (!space) return;
    for (int i = 0; i < space->n_params; i++)
        free_param(&space->params[i]);
    space->n_params = 0;
}

uint64_t gb_space_size(const gb_space *space)
{
    uint64_t n = 1;
    for (int i = 0; i < space->n_params; i++) {
        uint64_t k = (uint64_t)space->params[i].n_values;
        if (n > UINT64_MAX / k) return UINT64_MAX;
        n *= k;
    }
    return n;
}

int gb_config_at(const gb_space *space, uint64_t ordinal, gb_config *out)
{
    if (ordinal >= gb_space_size(space)) return GB_ENOTFOUND;
    out->space = space;
    out->ordinal = ordinal;
    for (int i = space->n_params - 1; i >= 0; i--) {
        uint64_t k = (uint64_t)space->params[i].n_values;
        out->index[i] = (int)(ordinal % k);
        ordinal /= k;
    }
    return GB_OK;
}

const gb_value *gb_config_get(const gb_config *config, const char *name)
{
    const gb_space *s = config->space;
    for (int i = 0; i < s->n_params; i++)
        if (strcmp(s->params[i].name, name) == 0) return &s->params[i].values[config->index[i]];
    return NULL;
}

void gb_config_append_canonical(gb_strbuf *sb, const gb_config *config)
{
    const gb_space *s = config->space;
    for (int i = 0; i < s->n_params; i++) {
        gb_sb_printf(sb, "%s%s=", i ? "," : "", s->params[i].name);
        gb_value_append_canonical(sb, &s->params[i].values[config->index[i]]);
    }
}

int gb_config_to_fields(const gb_config *config, gb_fields *out)
{
    *out = (gb_fields){0};
    const gb_space *s = config->space;
    for (int i = 0; i < s->n_params; i++) {
        int rc = gb_fields_set(out, s->params[i].name, &s->params[i].values[config->index[i]]);
        if (rc) {
            gb_fields_free(out);
            return rc;
        }
    }
    return GB_OK;
}

int gb_config_from_fields(const gb_space *space, const gb_fields *fields, gb_config *out)
{
    if (fields->n != space->n_params) return GB_ENOTFOUND;
    uint64_t ordinal = 0;
    for (int i = 0; i < space->n_params; i++) {
        const gb_param *p = &space->params[i];
        const gb_value *v = gb_fields_get(fields, p->name);
        int found = -1;
        for (int j = 0; v && j < p->n_values && found < 0; j++)
            if (gb_value_equal(&p->values[j], v)) found = j;
        if (found < 0) return GB_ENOTFOUND;
        ordinal = ordinal * (uint64_t)p->n_values + (uint64_t)found;
    }
    return gb_config_at(space, ordinal, out);
}

void gb_space_iter_init(gb_space_iter *it, const gb_space *space)
{
    *it = (gb_space_iter){.space = space};
}

int gb_space_next(gb_space_iter *it, gb_config_filter filter, void *ctx, gb_config *out,
                  gb_err *err)
{
    while (gb_config_at(it->space, it->next, out) == GB_OK) {
        it->next++;
        bool ok = true;
        int rc = filter ? filter(ctx, out, &ok, err) : GB_OK;
        if (rc) return rc;
        if (ok) return GB_OK;
        it->n_rejected++;
    }
    return GB_ENOTFOUND;
}
