/*
 * What every strategy searches over, and the tools they share: a seeded random
 * number generator, the constraints applied one configuration at a time (never to
 * the whole space at once), the set of configurations already seen, uniform
 * samples of the valid set, one-parameter neighbours, and the encoding of a
 * configuration as numbers for the model-guided strategies.
 *
 * A space may hold far more configurations than could ever be listed (10^6 and
 * up); the search only looks at the ones it is asked about, and remembers what
 * the constraints said about each, so a script's constraint function is called
 * once per configuration at most.
 */
#ifndef GB_TUNER_SEARCH_H
#define GB_TUNER_SEARCH_H

#include "base/error.h"
#include "tuner/ordmap.h"
#include "tuner/shard.h"
#include "tuner/space.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* xoshiro256**, seeded through splitmix64: fast, and the same on every machine. */
typedef struct gb_rng {
    uint64_t s[4];
} gb_rng;

void gb_rng_seed(gb_rng *rng, uint64_t seed);
uint64_t gb_rng_next(gb_rng *rng);
/* Uniform in [0, 1). */
double gb_rng_uniform(gb_rng *rng);
/* Uniform in [0, n); 0 when n is 0. */
uint64_t gb_rng_below(gb_rng *rng, uint64_t n);

typedef struct gb_search_slot gb_search_slot;

typedef struct gb_search {
    const gb_space *space;
    uint64_t size; /* gb_space_size(space) */
    gb_config_filter accept;
    void *accept_ctx;
    gb_rng rng;
    gb_shard shard; /* the part of the space this process searches (all of it when unsharded) */
    /* What is known of each configuration looked at: checked, valid, seen. */
    gb_ordmap slots;      /* of gb_search_slot */
    uint64_t n_checked;   /* configurations the constraints were asked about */
    uint64_t n_rejected;  /* ... and rejected */
    uint64_t n_elsewhere; /* configurations looked at that another shard owns (the constraints
                             are not asked about them) */
    uint64_t n_seen;      /* proposed or recorded */
    double check_s;       /* time spent in the constraints */
    /* The valid configurations, once listed (only when sampling by rejection stops
     * finding unseen ones): ordinals, the unseen ones first. */
    uint64_t *valid;
    uint64_t n_valid, n_valid_unseen;
    bool listed;
    bool exhausted;                  /* every valid configuration has been seen */
    double *encoding[GB_MAX_PARAMS]; /* per parameter, per value: gb_search_encode's number */
} gb_search;

/* accept may be NULL (every configuration is valid). GB_ENOMEM. */
int gb_search_init(gb_search *s, const gb_space *space, gb_config_filter accept, void *ctx,
                   uint64_t seed, gb_err *err);
void gb_search_free(gb_search *s);

/* Searches only the shard's part of the space: the others' configurations count
 * as invalid (and in n_elsewhere, not n_rejected). Call it before the first look. */
void gb_search_set_shard(gb_search *s, const gb_shard *shard);

/* Whether the configuration at ordinal is in the search's shard and accepted by
 * the constraints (asked once, then remembered). The filter's error (a script
 * error) otherwise. */
int gb_search_valid(gb_search *s, uint64_t ordinal, bool *out_ok, gb_err *err);
bool gb_search_seen(const gb_search *s, uint64_t ordinal);

/* Marks the configuration seen when it is valid and was not seen before;
 * *out_new says whether it was. What a strategy calls before proposing. */
int gb_search_claim(gb_search *s, uint64_t ordinal, bool *out_new, gb_err *err);

/* A configuration drawn uniformly from the valid ones not seen yet, claimed.
 * GB_ENOTFOUND (and s->exhausted) when there is none left. Rejection sampling
 * first; when that keeps missing, the valid set is listed once, lazily, and drawn
 * from. */
int gb_search_random(gb_search *s, gb_config *out, gb_err *err);

/* Like gb_search_random, but the configuration is not claimed: it stays unseen,
 * so later draws may give it again. How a model-guided strategy gathers
 * candidates to score before it claims the few it proposes. Draws the same way
 * (and from the same rng) as gb_search_random; GB_ENOTFOUND (and s->exhausted)
 * when no valid configuration is left unseen. */
int gb_search_peek_random(gb_search *s, gb_config *out, gb_err *err);

/* The valid configurations that differ from c in exactly one parameter, seen or
 * not, parameter by parameter, nearest value first; at most max of them. With
 * step > 0 only values within step places of c's (in the order the script gave
 * them) count. */
int gb_search_neighbours(gb_search *s, const gb_config *c, int step, gb_config *out, int max,
                         int *out_n, gb_err *err);

/* The largest neighbourhood gb_search_neighbours can return for this space
 * (step 0): the sum over parameters of their value count less one. */
int gb_search_max_neighbours(const gb_search *s);

/* The configuration as n_params numbers in [0, 1]: numeric parameters by value
 * (on a log scale when every value is positive and they span a factor of 4 or
 * more, as tile sizes do), others by their place in the value list. */
void gb_search_encode(const gb_search *s, const gb_config *c, double *x);

/* The configuration at ordinal (which must be below s->size). */
void gb_search_config(const gb_search *s, uint64_t ordinal, gb_config *out);

#endif
