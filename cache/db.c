/* The cache's databases by name (cache/cache.h): the names LMDB knows them by,
 * which messages and the damage check use too. */
#include "cache/cache.h"

static const char *const db_names[GB_DB_COUNT] = {
    [GB_DB_BEST] = "best",
    [GB_DB_TRIALS] = "trials",
    [GB_DB_CUBINS] = "cubins",
    [GB_DB_META] = "meta",
};

const char *gb_cache_db_name(gb_cache_db db)
{
    return (unsigned)db < GB_DB_COUNT ? db_names[db] : "?";
}
