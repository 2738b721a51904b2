/* A replay table (replay.h): its space, its entries and the lookup by ordinal that
 * serves as both the constraint filter and the objective. Strategies ask about
 * configurations millions of times in a replay, so a lookup is one hash probe. */
#include "tuner/replay.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static size_t ordinal_hash(uint64_t ordinal, size_t cap)
{
    ordinal ^= ordinal >> 33;
    ordinal *= 0xff51afd7ed558ccdULL;
    ordinal ^= ordinal >> 33;
    return (size_t)ordinal & (cap - 1);
}

/* The slot that holds ordinal, or the empty one where it would go. */
static size_t *probe(size_t *slots, size_t cap, const gb_replay_entry *entries, uint64_t ordinal)
{
    size_t i = ordinal_hash(ordinal, cap);
    while (slots[i] && entries[slots[i] - 1].ordinal != ordinal)
        i = (i + 1) & (cap - 1);
    return &slots[i];
}

static int grow_slots(gb_replay_table *t, size_t want)
{
    size_t cap = t->cap_slots ? t->cap_slots : 1024;
    while (cap < 2 * want)
        cap *= 2;
    if (cap == t->cap_slots) return GB_OK;
    size_t *slots = calloc(cap, sizeof *slots);
    if (!slots) return GB_ENOMEM;
    for (size_t i = 0; i < t->n_entries; i++)
        *probe(slots, cap, t->entries, t->entries[i].ordinal) = i + 1;
    free(t->slots);
    t->slots = slots;
    t->cap_slots = cap;
    return GB_OK;
}

static int grow_entries(gb_replay_table *t, size_t want)
{
    if (want <= t->cap_entries) return GB_OK;
    size_t cap = t->cap_entries ? t->cap_entries : 256;
    while (cap < want)
        cap *= 2;
    gb_replay_entry *entries = realloc(t->entries, cap * sizeof *entries);
    if (!entries) return GB_ENOMEM;
    t->entries = entries;
    t->cap_entries = cap;
    return GB_OK;
}

int gb_replay_table_init(gb_replay_table *t, gb_space *space, size_t hint, gb_err *err)
{
    memset(t, 0, sizeof *t);
    t->space = *space;
    memset(space, 0, sizeof *space);
    t->space_size = gb_space_size(&t->space);
    if (grow_entries(t, hint ? hint : 1) || grow_slots(t, hint ? hint : 1)) {
        gb_replay_table_free(t);
        return gb_err_set(err, GB_ENOMEM, "out of memory");
    }
    return GB_OK;
}

void gb_replay_table_free(gb_replay_table *t)
{
    if (!t) return;
    gb_space_free(&t->space);
    free(t->entries);
    free(t->slots);
    memset(t, 0, sizeof *t);
}

static void config_text(const gb_replay_table *t, uint64_t ordinal, char *buf, size_t n)
{
    gb_config c;
    gb_strbuf sb = GB_STRBUF_INIT;
    gb_config_at(&t->space, ordinal, &c);
    gb_config_append_canonical(&sb, &c);
    gb_strlcpy(buf, gb_sb_str(&sb), n);
    gb_sb_free(&sb);
}

/* The fastest ok entry; of equally fast ones, the first in canonical order, as the
 * tuner breaks its ties. */
static void note_optimum(gb_replay_table *t, size_t i)
{
    const gb_replay_entry *e = &t->entries[i], *best = &t->entries[t->optimum];
    if (e->status != GB_TRIAL_OK) return;
    if (!t->has_optimum || e->ms < best->ms || (e->ms == best->ms && e->ordinal < best->ordinal)) {
        t->has_optimum = true;
        t->optimum = i;
    }
}

int gb_replay_table_add(gb_replay_table *t, uint64_t ordinal, gb_trial_status status, double ms,
                        gb_err *err)
{
    char text[512];
    if (ordinal >= t->space_size)
        return gb_err_set(err, GB_EINVAL, "ordinal %llu is outside the space",
                          (unsigned long long)ordinal);
    if ((unsigned)status >= GB_TRIAL_STATUS_COUNT)
        return gb_err_set(err, GB_EINVAL, "status %d is not a trial status", (int)status);
    if (status == GB_TRIAL_OK && !(isfinite(ms) && ms > 0))
        return gb_err_set(err, GB_EINVAL, "a time of %g ms: a time must be a positive number", ms);
    if (grow_entries(t, t->n_entries + 1) || grow_slots(t, t->n_entries + 1))
        return gb_err_set(err, GB_ENOMEM, "out of memory");
    size_t *slot = probe(t->slots, t->cap_slots, t->entries, ordinal);
    if (*slot) {
        config_text(t, ordinal, text, sizeof text);
        return gb_err_set(err, GB_EINVAL, "configuration %s is in the table twice", text);
    }
    t->entries[t->n_entries] = (gb_replay_entry){.ordinal = ordinal,
                                                 .status = status,
                                                 .ms = status == GB_TRIAL_OK ? ms : NAN,
                                                 .cost_s = NAN};
    *slot = ++t->n_entries;
    t->n_status[status]++;
    note_optimum(t, t->n_entries - 1);
    return GB_OK;
}

const gb_replay_entry *gb_replay_find(const gb_replay_table *t, uint64_t ordinal)
{
    if (!t->cap_slots) return NULL;
    size_t slot = *probe(t->slots, t->cap_slots, t->entries, ordinal);
    return slot ? &t->entries[slot - 1] : NULL;
}

int gb_replay_accept(void *ctx, const gb_config *config, bool *out_ok, gb_err *err)
{
    (void)err;
    *out_ok = gb_replay_find(ctx, config->ordinal) != NULL;
    return GB_OK;
}

int gb_replay_objective(void *ctx, const gb_config *config, gb_trial_status *out_status,
                        double *out_ms, gb_err *err)
{
    const gb_replay_table *t = ctx;
    const gb_replay_entry *e = gb_replay_find(t, config->ordinal);
    if (!e) {
        char text[512];
        config_text(t, config->ordinal, text, sizeof text);
        return gb_err_set(err, GB_EINVAL,
                          "the strategy proposed %s, which the table does not hold (the "
                          "constraints reject it)",
                          text);
    }
    *out_status = e->status;
    *out_ms = e->ms;
    return GB_OK;
}

/* ---- spaces from the values a table names ------------------------------------ */

/* Numbers first, by value; then false, true; then strings by their bytes. */
static int kind_rank(const gb_value *v)
{
    return v->kind == GB_VAL_STR ? 2 : v->kind == GB_VAL_BOOL ? 1 : 0;
}

static int value_order(const gb_value *a, const gb_value *b)
{
    int ra = kind_rank(a), rb = kind_rank(b);
    if (ra != rb) return ra - rb;
    if (ra == 2) return strcmp(a->str, b->str);
    if (ra == 1) return (int)a->b - (int)b->b;
    double x = gb_value_as_number(a), y = gb_value_as_number(b);
    return (x > y) - (x < y);
}

typedef struct placed {
    const gb_value *value;
    int given; /* its place in the list given */
} placed;

static int by_value(const void *a, const void *b)
{
    const placed *x = a, *y = b;
    int c = value_order(x->value, y->value);
    return c ? c : x->given - y->given;
}

int gb_replay_space_add(gb_space *space, const char *name, const gb_value *values, int n_values,
                        int *order, gb_err *err)
{
    placed *p = malloc((size_t)(n_values > 0 ? n_values : 1) * sizeof *p);
    gb_value *sorted = malloc((size_t)(n_values > 0 ? n_values : 1) * sizeof *sorted);
    if (!p || !sorted) {
        free(p), free(sorted);
        return gb_err_set(err, GB_ENOMEM, "out of memory");
    }
    for (int i = 0; i < n_values; i++)
        p[i] = (placed){.value = &values[i], .given = i};
    qsort(p, (size_t)n_values, sizeof *p, by_value);
    for (int i = 0; i < n_values; i++) {
        sorted[i] = values[p[i].given]; /* shallow: gb_space_add copies */
        order[p[i].given] = i;
    }
    int rc = gb_space_add(space, name, sorted, n_values, err);
    free(p);
    free(sorted);
    return rc;
}
