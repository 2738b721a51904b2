/*
 * Internal to the JSON loader (report/outputs/json_load.c): typed
 * lookups in a parsed document that record, on failure, an error naming the file
 * and the field's path ("run.json: benchmarks[3].samples_ms: expected a list of
 * numbers"). where is the path of the object looked in ("context.device",
 * "benchmarks[3]"; NULL at the top level), key the field's name.
 */
#ifndef GB_REPORT_JSON_READ_H
#define GB_REPORT_JSON_READ_H

#include "base/error.h"
#include "base/json.h"
#include "report/result.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct gb_reader {
    const char *file; /* as the user named it */
    gb_err *err;
} gb_reader;

/* What a null stands for in a number or string field. */
typedef enum gb_read_null {
    GB_READ_REQUIRED,  /* null is an error */
    GB_READ_NULLABLE,  /* numbers: NaN; strings: NULL */
    GB_READ_NULL_ZERO, /* numbers: 0 (a figure that is unknown) */
} gb_read_null;

/* Records "file: where.key: what" and returns GB_EINVAL. */
int gb_read_bad(gb_reader *r, const char *where, const char *key, const char *what);

/* The field itself (borrowed); missing is an error. */
int gb_read_field(gb_reader *r, const json_t *o, const char *where, const char *key,
                  const json_t **out);
int gb_read_object(gb_reader *r, const json_t *o, const char *where, const char *key,
                   const json_t **out);
int gb_read_num(gb_reader *r, const json_t *o, const char *where, const char *key,
                gb_read_null null, double *out);
/* An integer within [min, max]. */
int gb_read_int(gb_reader *r, const json_t *o, const char *where, const char *key, int64_t min,
                int64_t max, int64_t *out);
int gb_read_bool(gb_reader *r, const json_t *o, const char *where, const char *key, bool *out);
/* A copy (free it); with GB_READ_NULLABLE, null gives NULL. */
int gb_read_str(gb_reader *r, const json_t *o, const char *where, const char *key,
                gb_read_null null, char **out);
/* Into a fixed buffer, null as ""; longer than it is an error. */
int gb_read_chars(gb_reader *r, const json_t *o, const char *where, const char *key, char *out,
                  size_t size);
/* An object of fields (base/value.h): numbers, strings, booleans. */
int gb_read_fields(gb_reader *r, const json_t *o, const char *where, const char *key,
                   gb_fields *out);

#endif
