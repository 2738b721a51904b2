/* exhaustive: every valid configuration once, in the canonical order (the
 * ordinal's), skipping those seen already (recorded by an earlier run). */
#include "tuner/strategy.h"

#include <stdlib.h>

typedef struct exhaustive {
    gb_strategy base;
    uint64_t next; /* the next ordinal to look at */
} exhaustive;

static int ask(gb_strategy *s, int n, gb_config *out, int *out_n, gb_err *err)
{
    exhaustive *e = (exhaustive *)s;
    gb_search *search = s->search;
    while (*out_n < n && e->next < search->size) {
        bool fresh;
        uint64_t o = e->next++;
        int rc = gb_search_claim(search, o, &fresh, err);
        if (rc) return rc;
        if (fresh) gb_search_config(search, o, &out[(*out_n)++]);
    }
    if (e->next == search->size) search->exhausted = true;
    return GB_OK;
}

static int tell(gb_strategy *s, const gb_observation *obs, int n, gb_err *err)
{
    (void)s, (void)obs, (void)n, (void)err; /* the order does not depend on results */
    return GB_OK;
}

static void destroy(gb_strategy *s)
{
    free(s);
}

static const gb_strategy_ops OPS = {ask, tell, destroy};

int gb_strategy_exhaustive(gb_search *search, gb_strategy **out, gb_err *err)
{
    exhaustive *e = calloc(1, sizeof *e);
    if (!e) return gb_err_set(err, GB_ENOMEM, "out of memory");
    e->base = (gb_strategy){&OPS, search};
    *out = &e->base;
    return GB_OK;
}
