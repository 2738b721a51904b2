/* put_best CACHE KERNEL DEVICE SHAPE CONFIG MEDIAN_MS WHEN
 *
 * Stores one best record as the tuner would, for the shell tests (consumer_test.sh):
 * SHAPE and CONFIG are "NAME=INT,..." lists, WHEN is unix seconds. */
#include "cache/cache.h"
#include "cache/record.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_fields(const char *text, gb_fields *out)
{
    char copy[1024], *save = NULL;
    snprintf(copy, sizeof copy, "%s", text);
    for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        if (!eq) return GB_EINVAL;
        *eq = '\0';
        gb_value v = gb_value_int(strtoll(eq + 1, NULL, 10));
        if (gb_fields_set(out, item, &v)) return GB_ENOMEM;
    }
    return GB_OK;
}

int main(int argc, char **argv)
{
    if (argc != 8) {
        fprintf(stderr, "usage: put_best CACHE KERNEL DEVICE SHAPE CONFIG MEDIAN_MS WHEN\n");
        return 2;
    }
    gb_best_record rec = {.id = {argv[2], "0", argv[3], {0}}, .space_fp = "0"};
    rec.stats.median = strtod(argv[6], NULL);
    rec.when = strtoll(argv[7], NULL, 10);
    snprintf(rec.mode, sizeof rec.mode, "cold");
    snprintf(rec.engine_version, sizeof rec.engine_version, "test");
    gb_err err = {0};
    gb_cache *cache = NULL;
    json_t *json = NULL;
    gb_key key;
    int rc = parse_fields(argv[4], &rec.id.shape);
    if (!rc) rc = parse_fields(argv[5], &rec.config);
    if (rc) gb_err_set(&err, rc, "bad SHAPE or CONFIG");
    if (!rc && !(json = gb_best_record_to_json(&rec)))
        rc = gb_err_set(&err, GB_ENOMEM, "out of memory");
    if (!rc) rc = gb_record_best_key(&rec.id, &key);
    if (!rc) rc = gb_cache_open(argv[1], 0, &cache, &err);
    if (!rc) rc = gb_cache_put_json(cache, GB_DB_BEST, &key, json, &err);
    if (rc) fprintf(stderr, "put_best: %s\n", err.msg);
    gb_cache_close(cache);
    json_decref(json);
    gb_fields_free(&rec.id.shape);
    gb_fields_free(&rec.config);
    return rc ? 1 : 0;
}
