/*
 * A configuration space: named parameters, each with a list of values, and the
 * lazy enumeration of their cartesian product.
 *
 * Parameters are kept sorted by name and values in the order the script gave them.
 * A configuration is a choice of one value index per parameter; its ordinal is its
 * position in the mixed-radix count over (first parameter slowest, last fastest).
 * That ordinal is the canonical order: enumeration follows it and ties between
 * equally fast configurations are broken by it, so reruns pick the same winner.
 */
#ifndef GB_TUNER_SPACE_H
#define GB_TUNER_SPACE_H

#include "base/error.h"
#include "base/strbuf.h"
#include "base/value.h"

#include <stdbool.h>
#include <stdint.h>

#define GB_MAX_PARAMS 32

typedef struct gb_param {
    char *name;
    gb_value *values;
    int n_values;
} gb_param;

typedef struct gb_space {
    gb_param params[GB_MAX_PARAMS];
    int n_params;
} gb_space;

/* Adds a parameter (name and values copied) at its sorted place. GB_EINVAL for a
 * duplicate name, an empty value list, a repeated value or too many parameters. */
int gb_space_add(gb_space *space, const char *name, const gb_value *values, int n_values,
                 gb_err *err);
void gb_space_free(gb_space *space);

/* Number of configurations (the product of the value counts), saturating at
 * UINT64_MAX; 1 for a space with no parameters. */
uint64_t gb_space_size(const gb_space *space);

typedef struct gb_config {
    const gb_space *space;
    uint64_t ordinal;
    int index[GB_MAX_PARAMS]; /* value index per parameter */
} gb_config;

/* The configuration at ordinal (< gb_space_size). */
int gb_config_at(const gb_space *space, uint64_t ordinal, gb_config *out);
const gb_value *gb_config_get(const gb_config *config, const char *name);
/* "BK=8,BM=64,BN=64" */
void gb_config_append_canonical(gb_strbuf *sb, const gb_config *config);
/* The configuration as named values (copies). */
int gb_config_to_fields(const gb_config *config, gb_fields *out);
/* Finds the configuration whose values equal fields; GB_ENOTFOUND if there is none. */
int gb_config_from_fields(const gb_space *space, const gb_fields *fields, gb_config *out);

/* Says whether a configuration satisfies the constraints. */
typedef int (*gb_config_filter)(void *ctx, const gb_config *config, bool *out_ok, gb_err *err);

typedef struct gb_space_iter {
    const gb_space *space;
    uint64_t next;
    uint64_t n_rejected; /* configurations the filter dropped so far */
} gb_space_iter;

void gb_space_iter_init(gb_space_iter *it, const gb_space *space);

/* The next configuration the filter accepts (filter may be NULL). GB_ENOTFOUND
 * when the space is exhausted; the filter's error otherwise. */
int gb_space_next(gb_space_iter *it, gb_config_filter filter, void *ctx, gb_config *out,
                  gb_err *err);

#endif
