#include "tuner/strategy.h"

#include <string.h>

const gb_strategy_kind gb_strategy_kinds[] = {
    {"exhaustive", "every valid configuration, in the canonical order", gb_strategy_exhaustive},
    {"random", "uniform samples of the valid configurations, without repeats", gb_strategy_random},
    {"anneal", "simulated annealing over one-parameter neighbours, with restarts",
     gb_strategy_anneal},
    {"genetic", "a population bred by tournament, crossover and mutation", gb_strategy_genetic},
    {"local", "multi-start greedy descent, then iterated local search over neighbours",
     gb_strategy_local},
    {"auto",
     "a portfolio: a Gaussian-process model of the run time and a local descent take turns, "
     "each told the other's results",
     gb_strategy_auto},
};
const int gb_strategy_n_kinds = (int)(sizeof gb_strategy_kinds / sizeof gb_strategy_kinds[0]);

const gb_strategy_kind *gb_strategy_find(const char *name)
{
    for (int i = 0; name && i < gb_strategy_n_kinds; i++)
        if (!strcmp(gb_strategy_kinds[i].name, name)) return &gb_strategy_kinds[i];
    return NULL;
}

void gb_strategy_append_names(gb_strbuf *sb)
{
    for (int i = 0; i < gb_strategy_n_kinds; i++)
        gb_sb_printf(sb, "%s%s", i ? ", " : "", gb_strategy_kinds[i].name);
}
