#include "tuner/search.h"

#include "base/clock.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the random number generator ----------------------------------------- */

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void gb_rng_seed(gb_rng *rng, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        rng->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t gb_rng_next(gb_rng *rng)
{
    uint64_t *s = rng->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double gb_rng_uniform(gb_rng *rng)
{
    return (double)(gb_rng_next(rng) >> 11) * 0x1.0p-53;
}

uint64_t gb_rng_below(gb_rng *rng, uint64_t n)
{
    if (n == 0) return 0;
    uint64_t limit = UINT64_MAX - UINT64_MAX % n; /* no modulo bias */
    uint64_t x;
    do
        x = gb_rng_next(rng);
    while (x >= limit);
    return x % n;
}

/* ---- what is known of each configuration ---------------------------------- */

enum { CHECKED = 1, VALID = 2, SEEN = 4 };

struct gb_search_slot {
    uint64_t key; /* ordinal + 1 (gb_ordmap's) */
    uint8_t flags;
};

static gb_search_slot *find(const gb_search *s, uint64_t ordinal)
{
    return gb_ordmap_find(&s->slots, ordinal);
}

/* The slot for ordinal, made when missing; NULL on ENOMEM. */
static gb_search_slot *slot(gb_search *s, uint64_t ordinal)
{
    bool fresh;
    return gb_ordmap_add(&s->slots, ordinal, &fresh);
}

/* ---- setting up ------------------------------------------------------------ */

/* Numeric parameters by value (log scale for wide positive ranges), others by
 * place; every parameter's numbers spread over [0, 1]. */
static void encode_param(const gb_param *p, double *out)
{
    bool numeric = true, positive = true;
    double lo = INFINITY, hi = -INFINITY;
    for (int j = 0; j < p->n_values; j++) {
        double v = gb_value_as_number(&p->values[j]);
        numeric = numeric && p->values[j].kind != GB_VAL_STR && isfinite(v);
        positive = positive && v > 0;
        lo = fmin(lo, v), hi = fmax(hi, v);
    }
    bool logscale = numeric && positive && hi >= 4 * lo;
    for (int j = 0; j < p->n_values; j++) {
        double v = gb_value_as_number(&p->values[j]);
        if (!numeric)
            out[j] = p->n_values > 1 ? (double)j / (p->n_values - 1) : 0;
        else if (hi == lo)
            out[j] = 0;
        else if (logscale)
            out[j] = log(v / lo) / log(hi / lo);
        else
            out[j] = (v - lo) / (hi - lo);
    }
}

int gb_search_init(gb_search *s, const gb_space *space, gb_config_filter accept, void *ctx,
                   uint64_t seed, gb_err *err)
{
    *s = (gb_search){
        .space = space, .size = gb_space_size(space), .accept = accept, .accept_ctx = ctx};
    gb_ordmap_init(&s->slots, sizeof(gb_search_slot));
    gb_rng_seed(&s->rng, seed);
    for (int i = 0; i < space->n_params; i++) {
        s->encoding[i] = malloc((size_t)space->params[i].n_values * sizeof(double));
        if (!s->encoding[i]) {
            gb_search_free(s);
            return gb_err_set(err, GB_ENOMEM, "out of memory");
        }
        encode_param(&space->params[i], s->encoding[i]);
    }
    return GB_OK;
}

void gb_search_free(gb_search *s)
{
    if (!s) return;
    gb_ordmap_free(&s->slots);
    free(s->valid);
    for (int i = 0; i < GB_MAX_PARAMS; i++)
        free(s->encoding[i]);
    memset(s, 0, sizeof *s);
}

void gb_search_config(const gb_search *s, uint64_t ordinal, gb_config *out)
{
    gb_config_at(s->space, ordinal, out);
}

/* ---- the constraints --------------------------------------------------------- */

void gb_search_set_shard(gb_search *s, const gb_shard *shard)
{
    s->shard = *shard;
}

/* Asks the constraints about a configuration not asked about before; one another
 * shard owns is not the search's to ask about. */
static int ask_filter(gb_search *s, uint64_t ordinal, bool *ok, gb_err *err)
{
    gb_config c;
    *ok = gb_shard_owns(&s->shard, ordinal);
    if (!*ok) {
        s->n_elsewhere++;
        return GB_OK;
    }
    gb_config_at(s->space, ordinal, &c);
    double t0 = gb_now_ms();
    int rc = s->accept ? s->accept(s->accept_ctx, &c, ok, err) : GB_OK;
    s->check_s += (gb_now_ms() - t0) / 1e3;
    if (rc) return rc;
    s->n_checked++;
    s->n_rejected += !*ok;
    return GB_OK;
}

int gb_search_valid(gb_search *s, uint64_t ordinal, bool *out_ok, gb_err *err)
{
    gb_search_slot *sl = find(s, ordinal);
    if (sl && (sl->flags & CHECKED)) {
        *out_ok = sl->flags & VALID;
        return GB_OK;
    }
    int rc = ask_filter(s, ordinal, out_ok, err);
    if (rc) return rc;
    if (!(sl = slot(s, ordinal))) return gb_err_set(err, GB_ENOMEM, "out of memory");
    sl->flags |= CHECKED | (*out_ok ? VALID : 0);
    return GB_OK;
}

bool gb_search_seen(const gb_search *s, uint64_t ordinal)
{
    const gb_search_slot *sl = find(s, ordinal);
    return sl && (sl->flags & SEEN);
}

int gb_search_claim(gb_search *s, uint64_t ordinal, bool *out_new, gb_err *err)
{
    bool ok;
    *out_new = false;
    int rc = gb_search_valid(s, ordinal, &ok, err);
    if (rc || !ok) return rc;
    gb_search_slot *sl = find(s, ordinal); /* made by gb_search_valid */
    if (sl->flags & SEEN) return GB_OK;
    sl->flags |= SEEN;
    s->n_seen++;
    *out_new = true;
    return GB_OK;
}

/* ---- uniform samples of the valid set ------------------------------------------ */

/* Beyond this many configurations the valid set is never listed: sampling keeps
 * rejecting, and gives up (the space counts as exhausted) after REJECT_GIVE_UP. */
#define LIST_MAX       (UINT64_C(1) << 24)
#define REJECT_GIVE_UP 1000000

/* Draws by rejection before listing: enough for a space whose constraints accept
 * one configuration in a few hundred, scaled by what they accepted so far. */
static uint64_t reject_tries(const gb_search *s)
{
    uint64_t valid = s->n_checked - s->n_rejected, looked = s->n_checked + s->n_elsewhere;
    uint64_t per_hit = valid ? (looked + valid - 1) / valid : 1000;
    uint64_t tries = 64 * per_hit;
    return tries < 2000 ? 2000 : tries > REJECT_GIVE_UP ? REJECT_GIVE_UP : tries;
}

/* Lists every valid configuration, the unseen ones first. Rejected ones are not
 * remembered, so listing costs memory for the valid set only. */
static int list_valid(gb_search *s, gb_err *err)
{
    uint64_t cap = 1024, n = 0;
    uint64_t *valid = malloc(cap * sizeof *valid);
    int rc = valid ? GB_OK : GB_ENOMEM;
    for (uint64_t o = 0; rc == GB_OK && o < s->size; o++) {
        const gb_search_slot *sl = find(s, o);
        bool ok;
        if (sl && (sl->flags & CHECKED))
            ok = sl->flags & VALID;
        else if ((rc = ask_filter(s, o, &ok, err)))
            break;
        if (!ok) continue;
        if (n == cap) {
            uint64_t *grown = realloc(valid, 2 * cap * sizeof *valid);
            if (!grown) {
                rc = GB_ENOMEM;
                break;
            }
            valid = grown, cap *= 2;
        }
        valid[n++] = o;
    }
    if (rc) {
        free(valid);
        return rc == GB_ENOMEM ? gb_err_set(err, rc, "out of memory") : rc;
    }
    uint64_t unseen = 0;
    for (uint64_t i = 0; i < n; i++)
        if (!gb_search_seen(s, valid[i])) {
            uint64_t t = valid[unseen];
            valid[unseen++] = valid[i], valid[i] = t;
        }
    s->valid = valid;
    s->n_valid = n;
    s->n_valid_unseen = unseen;
    s->listed = true;
    return GB_OK;
}

/* Whether the configuration at ordinal is valid and unseen; claimed when claim is
 * set (then *out_fresh says the claim was new). */
static int take(gb_search *s, uint64_t ordinal, bool claim, bool *out_fresh, gb_err *err)
{
    if (claim) return gb_search_claim(s, ordinal, out_fresh, err);
    int rc = gb_search_valid(s, ordinal, out_fresh, err);
    if (rc == GB_OK && *out_fresh) *out_fresh = !gb_search_seen(s, ordinal);
    return rc;
}

static int draw_listed(gb_search *s, bool claim, gb_config *out, gb_err *err)
{
    while (s->n_valid_unseen > 0) {
        uint64_t i = gb_rng_below(&s->rng, s->n_valid_unseen), o = s->valid[i];
        bool fresh;
        int rc = take(s, o, claim, &fresh, err);
        if (rc) return rc;
        if (fresh && !claim) { /* stays among the unseen */
            gb_config_at(s->space, o, out);
            return GB_OK;
        }
        s->valid[i] = s->valid[--s->n_valid_unseen]; /* the drawn one moves behind */
        s->valid[s->n_valid_unseen] = o;
        if (fresh) {
            gb_config_at(s->space, o, out);
            return GB_OK;
        }
    }
    s->exhausted = true;
    return GB_ENOTFOUND;
}

static int draw(gb_search *s, bool claim, gb_config *out, gb_err *err)
{
    if (s->exhausted || s->size == 0) return GB_ENOTFOUND;
    if (s->listed) return draw_listed(s, claim, out, err);
    for (uint64_t tries = reject_tries(s); tries > 0; tries--) {
        uint64_t o = gb_rng_below(&s->rng, s->size);
        bool fresh;
        int rc = take(s, o, claim, &fresh, err);
        if (rc) return rc;
        if (fresh) {
            gb_config_at(s->space, o, out);
            return GB_OK;
        }
    }
    if (s->size > LIST_MAX) {
        s->exhausted = true;
        return GB_ENOTFOUND;
    }
    int rc = list_valid(s, err);
    return rc ? rc : draw_listed(s, claim, out, err);
}

int gb_search_random(gb_search *s, gb_config *out, gb_err *err)
{
    return draw(s, true, out, err);
}

int gb_search_peek_random(gb_search *s, gb_config *out, gb_err *err)
{
    return draw(s, false, out, err);
}

/* ---- neighbours and encodings ------------------------------------------------ */

int gb_search_max_neighbours(const gb_search *s)
{
    int n = 0;
    for (int i = 0; i < s->space->n_params; i++)
        n += s->space->params[i].n_values - 1;
    return n;
}

/* The ordinal of c with parameter p set to value index v. */
static uint64_t with_value(const gb_search *s, const gb_config *c, int p, int v)
{
    uint64_t stride = 1;
    for (int i = s->space->n_params - 1; i > p; i--)
        stride *= (uint64_t)s->space->params[i].n_values;
    return c->ordinal + ((uint64_t)v - (uint64_t)c->index[p]) * stride;
}

int gb_search_neighbours(gb_search *s, const gb_config *c, int step, gb_config *out, int max,
                         int *out_n, gb_err *err)
{
    *out_n = 0;
    for (int p = 0; p < s->space->n_params; p++) {
        int n_values = s->space->params[p].n_values;
        int reach = step > 0 && step < n_values ? step : n_values - 1;
        for (int d = 1; d <= reach; d++)
            for (int sign = -1; sign <= 1; sign += 2) {
                int v = c->index[p] + sign * d;
                if (v < 0 || v >= n_values) continue;
                if (*out_n == max) return GB_OK;
                uint64_t o = with_value(s, c, p, v);
                bool ok;
                int rc = gb_search_valid(s, o, &ok, err);
                if (rc) return rc;
                if (ok) gb_config_at(s->space, o, &out[(*out_n)++]);
            }
    }
    return GB_OK;
}

void gb_search_encode(const gb_search *s, const gb_config *c, double *x)
{
    for (int i = 0; i < s->space->n_params; i++)
        x[i] = s->encoding[i][c->index[i]];
}
