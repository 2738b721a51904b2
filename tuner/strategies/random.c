/* random: uniform samples of the valid configurations, each at most once, until
 * the budget ends it or the valid set is used up. The baseline every other
 * strategy must beat. */
#include "tuner/strategy.h"

#include <stdlib.h>

static int ask(gb_strategy *s, int n, gb_config *out, int *out_n, gb_err *err)
{
    while (*out_n < n) {
        int rc = gb_search_random(s->search, &out[*out_n], err);
        if (rc == GB_ENOTFOUND) break;
        if (rc) return rc;
        (*out_n)++;
    }
    return GB_OK;
}

static int tell(gb_strategy *s, const gb_observation *obs, int n, gb_err *err)
{
    (void)s, (void)obs, (void)n, (void)err;
    return GB_OK;
}

static void destroy(gb_strategy *s)
{
    free(s);
}

static const gb_strategy_ops OPS = {ask, tell, destroy};

int gb_strategy_random(gb_search *search, gb_strategy **out, gb_err *err)
{
    gb_strategy *s = calloc(1, sizeof *s);
    if (!s) return gb_err_set(err, GB_ENOMEM, "out of memory");
    *s = (gb_strategy){&OPS, search};
    *out = s;
    return GB_OK;
}
