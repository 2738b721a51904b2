/*
 * What the model-free strategies (anneal, genetic, local) share: a book of the
 * configurations they have met, keyed by ordinal, with what each cost or that it
 * is still in flight, and the one-parameter moves they build proposals from.
 *
 * The search (tuner/search.h) knows which configurations were seen; only the
 * strategy knows what they cost, and the pipeline tells results in any order, so
 * a strategy notes each proposal here as pending, with a tag saying which phase of
 * its walk asked for it, and reads the tag back when the result comes in.
 *
 * Costs are log(milliseconds): the strategies compare ratios of times, not
 * differences, so a 10% gain counts the same on a 0.1 ms kernel and a 10 ms one.
 * A failed configuration costs +infinity, worse than anything that ran.
 */
#ifndef GB_TUNER_STRATEGIES_BOOK_H
#define GB_TUNER_STRATEGIES_BOOK_H

#include "tuner/ordmap.h"
#include "tuner/strategy.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct gb_book_entry {
    uint64_t key; /* ordinal + 1 (gb_ordmap's) */
    double cost;  /* log(ms); INFINITY for a failure; meaningless while pending */
    uint32_t tag; /* the strategy's: which phase proposed it */
    bool pending; /* proposed, not told yet */
} gb_book_entry;

typedef struct gb_book {
    gb_ordmap map; /* of gb_book_entry; a zeroed book is an empty one */
} gb_book;

/* The entry for ordinal, or NULL when the book never met it. */
gb_book_entry *gb_book_find(const gb_book *b, uint64_t ordinal);

/* The entry for ordinal, made (cost INFINITY, tag 0, not pending) when missing.
 * GB_ENOMEM. The pointer lasts until the next gb_book_add. */
int gb_book_add(gb_book *b, uint64_t ordinal, gb_book_entry **out, gb_err *err);

/* Notes a proposal: pending, with the tag of the phase that made it. */
int gb_book_propose(gb_book *b, uint64_t ordinal, uint32_t tag, gb_err *err);

/* Notes a result: the entry (made if the book never met it: a recorded trial)
 * stops being pending and keeps its cost. *out is the entry, its tag the
 * proposer's; *out_proposed says whether this strategy was waiting on it. */
int gb_book_tell(gb_book *b, const gb_observation *o, gb_book_entry **out, bool *out_proposed,
                 gb_err *err);

void gb_book_free(gb_book *b);

/* log(ms) for a configuration that ran, INFINITY for one that failed. */
double gb_book_cost(const gb_observation *o);

/* Sets parameter p of c to value index v, keeping the ordinal in step. */
void gb_book_move(const gb_search *s, gb_config *c, int p, int v);

/* Moves c along one parameter chosen uniformly among those with more than one
 * value: to an adjacent value with probability near, else to any other value
 * uniformly. False (c unchanged) when no parameter has two values. */
bool gb_book_random_move(gb_search *s, gb_config *c, double near);

/* Claims c (gb_search_claim) and, when it is new, copies it to out and notes it
 * in the book as proposed with tag. *out_new says whether it was. */
int gb_book_claim(gb_book *b, gb_search *s, const gb_config *c, uint32_t tag, gb_config *out,
                  bool *out_new, gb_err *err);

/* A uniform sample of the unseen valid configurations (gb_search_random), noted
 * in the book with tag. GB_ENOTFOUND when none is left. */
int gb_book_random(gb_book *b, gb_search *s, uint32_t tag, gb_config *out, gb_err *err);

#endif
