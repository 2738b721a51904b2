/* The book of configurations a strategy has met (an open-addressing hash keyed by
 * ordinal) and the one-parameter moves: see book.h. */
#include "tuner/strategies/book.h"

#include <math.h>
#include <stdlib.h>

gb_book_entry *gb_book_find(const gb_book *b, uint64_t ordinal)
{
    return gb_ordmap_find(&b->map, ordinal);
}

int gb_book_add(gb_book *b, uint64_t ordinal, gb_book_entry **out, gb_err *err)
{
    bool fresh;
    if (!b->map.entry_size) gb_ordmap_init(&b->map, sizeof(gb_book_entry)); /* a zeroed book */
    if (!(*out = gb_ordmap_add(&b->map, ordinal, &fresh)))
        return gb_err_set(err, GB_ENOMEM, "out of memory (strategy book of %zu entries)", b->map.n);
    if (fresh) (*out)->cost = INFINITY;
    return GB_OK;
}

int gb_book_propose(gb_book *b, uint64_t ordinal, uint32_t tag, gb_err *err)
{
    gb_book_entry *e;
    int rc = gb_book_add(b, ordinal, &e, err);
    if (rc) return rc;
    e->tag = tag;
    e->pending = true;
    return GB_OK;
}

int gb_book_tell(gb_book *b, const gb_observation *o, gb_book_entry **out, bool *out_proposed,
                 gb_err *err)
{
    int rc = gb_book_add(b, o->config.ordinal, out, err);
    if (rc) return rc;
    *out_proposed = (*out)->pending;
    (*out)->pending = false;
    (*out)->cost = gb_book_cost(o);
    return GB_OK;
}

void gb_book_free(gb_book *b)
{
    if (!b) return;
    gb_ordmap_free(&b->map);
    *b = (gb_book){0};
}

double gb_book_cost(const gb_observation *o)
{
    if (o->status != GB_TRIAL_OK || !(o->ms > 0) || !isfinite(o->ms)) return INFINITY;
    return log(o->ms);
}

void gb_book_move(const gb_search *s, gb_config *c, int p, int v)
{
    uint64_t stride = 1;
    for (int i = s->space->n_params - 1; i > p; i--)
        stride *= (uint64_t)s->space->params[i].n_values;
    c->ordinal += ((uint64_t)v - (uint64_t)c->index[p]) * stride; /* wraps back into range */
    c->index[p] = v;
}

bool gb_book_random_move(gb_search *s, gb_config *c, double near)
{
    const gb_space *sp = s->space;
    int movable = 0;
    for (int p = 0; p < sp->n_params; p++)
        movable += sp->params[p].n_values > 1;
    if (!movable) return false;
    int k = (int)gb_rng_below(&s->rng, (uint64_t)movable), p = 0;
    for (;; p++)
        if (sp->params[p].n_values > 1 && k-- == 0) break;
    int n = sp->params[p].n_values, v = c->index[p];
    if (gb_rng_uniform(&s->rng) < near) {
        bool up = v == 0 || (v < n - 1 && gb_rng_below(&s->rng, 2));
        v += up ? 1 : -1;
    } else {
        int w = (int)gb_rng_below(&s->rng, (uint64_t)n - 1); /* any value but v */
        v = w >= v ? w + 1 : w;
    }
    gb_book_move(s, c, p, v);
    return true;
}

int gb_book_claim(gb_book *b, gb_search *s, const gb_config *c, uint32_t tag, gb_config *out,
                  bool *out_new, gb_err *err)
{
    int rc = gb_search_claim(s, c->ordinal, out_new, err);
    if (rc || !*out_new) return rc;
    *out = *c;
    return gb_book_propose(b, c->ordinal, tag, err);
}

int gb_book_random(gb_book *b, gb_search *s, uint32_t tag, gb_config *out, gb_err *err)
{
    int rc = gb_search_random(s, out, err);
    return rc ? rc : gb_book_propose(b, out->ordinal, tag, err);
}
