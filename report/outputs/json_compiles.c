/*
 * A compile-only call's rows as wire views (report/outputs/json_parts.h): the
 * call (gb_report_call: its kernel, target, the entries it made and NVRTC's time)
 * and a row per distinct compile (gb_compile_row). A row's status and reason are
 * words and sentences made from its fields (report/result.h), so they are virtual:
 * reading takes them apart again and checks that they agree with the fields.
 */
#include "report/outputs/json_parts.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* ---- a row ------------------------------------------------------------------- */

static const gb_compile_row *row_of(const void *obj)
{
    return obj;
}

static gb_json_calls_ctx *calls_ctx(void *ctx)
{
    return ctx;
}

/* A row that failed to compile has no resources: null. */
static bool row_built(const void *obj)
{
    return !row_of(obj)->error;
}

/* ptxas may not say what spills (-1): null then too. */
static bool spill_store_known(const void *obj)
{
    return row_built(obj) && row_of(obj)->resources.spill_store_bytes >= 0;
}

static bool spill_load_known(const void *obj)
{
    return row_built(obj) && row_of(obj)->resources.spill_load_bytes >= 0;
}

static void get_status(const void *obj, const void *ctx, void *out)
{
    (void)ctx;
    *(const char **)out = gb_compile_row_status(row_of(obj));
}

/* The status, kept until the row's error is read (the last field, which decides it). */
static int set_status(void *obj, void *ctx, void *value, const char *path, gb_err *err)
{
    static const char *const words[] = {"compiled", "cache", "over limits", "compile_error"};
    char *status = *(char **)value;
    bool known = false;
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        known = known || strcmp(status, words[i]) == 0;
    if (known) gb_strlcpy(calls_ctx(ctx)->status, status, sizeof calls_ctx(ctx)->status);
    ((gb_compile_row *)obj)->cached = strcmp(status, "cache") == 0;
    free(status);
    if (known) return GB_OK;
    return gb_err_set(err, GB_EINVAL,
                      "%s: expected \"compiled\", \"cache\", \"over limits\" or \"compile_error\"",
                      path);
}

static void get_reason(const void *obj, const void *ctx, void *out)
{
    (void)ctx;
    gb_wire_value *v = out;
    v->text.string = (char *)gb_compile_row_reason(row_of(obj), v->text.buf, sizeof v->text.buf);
}

/* Over limits, the reason is which limits; otherwise it is made from the error, or "". */
static int set_reason(void *obj, void *ctx, void *value, const char *path, gb_err *err)
{
    (void)path, (void)err;
    char *reason = *(char **)value;
    if (strcmp(calls_ctx(ctx)->status, "over limits") == 0)
        ((gb_compile_row *)obj)->limit = reason;
    else
        free(reason);
    return GB_OK;
}

static void get_error(const void *obj, const void *ctx, void *out)
{
    (void)ctx;
    *(const char **)out = row_of(obj)->error;
}

static int set_error(void *obj, void *ctx, void *value, const char *path, gb_err *err)
{
    gb_compile_row *row = obj;
    const char *status = calls_ctx(ctx)->status;
    row->error = *(char **)value;
    if (strcmp(gb_compile_row_status(row), status) == 0) return GB_OK;
    return gb_err_set(err, GB_EINVAL,
                      "%s: does not go with the status \"%s\" (a compile_error has an error, "
                      "no other row has one)",
                      path, status);
}

/* ---- the call ----------------------------------------------------------------- */

static const gb_report_call *call_of(const void *obj)
{
    return obj;
}

static int out_of_range(const char *path, int most, gb_err *err)
{
    return gb_err_set(err, GB_EINVAL, "%s: expected an integer from 0 to %d", path, most);
}

static void get_first_family(const void *obj, const void *ctx, void *out)
{
    (void)ctx;
    *(int *)out = call_of(obj)->first_entry;
}

/* One of the entries read before. */
static int set_first_family(void *obj, void *ctx, void *value, const char *path, gb_err *err)
{
    int first = *(int *)value, n_entries = calls_ctx(ctx)->report->n_entries;
    if (first > n_entries) return out_of_range(path, n_entries, err);
    ((gb_report_call *)obj)->first_entry = first;
    return GB_OK;
}

static void get_families(const void *obj, const void *ctx, void *out)
{
    (void)ctx;
    *(int *)out = call_of(obj)->result.n_shapes;
}

/* The entries from first_family on, one shape each, holding what the compile
 * table's summary counts of them (n_rejected). */
static int set_families(void *obj, void *ctx, void *value, const char *path, gb_err *err)
{
    gb_report_call *c = obj;
    const gb_report *report = calls_ctx(ctx)->report;
    int n = *(int *)value, most = report->n_entries - c->first_entry;
    if (n > most) return out_of_range(path, most, err);
    if (n && !(c->result.shapes = calloc((size_t)n, sizeof *c->result.shapes)))
        return gb_err_set(err, GB_ENOMEM, "%s: out of memory", path);
    c->result.n_shapes = n;
    for (int i = 0; i < n; i++)
        c->result.shapes[i].n_rejected = report->entries[c->first_entry + i].result->n_rejected;
    return GB_OK;
}

static int call_finish(void *obj, const char *path, gb_err *err)
{
    (void)path, (void)err;
    ((gb_report_call *)obj)->result.compile_only = true;
    return GB_OK;
}

/* ---- the views ------------------------------------------------------------------- */

#define KNOWN .flags = GB_WIRE_NULL_ZERO
#define COUNT GB_WIRE_RANGE(0, INT_MAX)
/* Bytes or registers; null (when unknown) reads as -1. */
#define RESOURCE(known) GB_WIRE_RANGE(0, INT32_MAX), .dflt = -1, .null_unless = (known)

#define ROW_VIEW(X, V)                                                                             \
    X(config, FIELDS, "config")                                                                    \
    V(STRING, "status", .get = get_status, .set = set_status)                                      \
    V(STRING, "reason", .get = get_reason, .set = set_reason)                                      \
    X(resources.registers, INT, "registers", RESOURCE(row_built))                                  \
    X(resources.stack_bytes, INT, "stack_bytes", RESOURCE(row_built))                              \
    X(resources.spill_store_bytes, INT, "spill_store_bytes", RESOURCE(spill_store_known))          \
    X(resources.spill_load_bytes, INT, "spill_load_bytes", RESOURCE(spill_load_known))             \
    X(resources.smem_static_bytes, INT, "smem_static_bytes", RESOURCE(row_built))                  \
    X(compile_ms, DOUBLE, "compile_ms")                                                            \
    V(STRING, "error", .get = get_error, .set = set_error, KNOWN)

#define CALL_VIEW(X, V)                                                                            \
    X(kernel, STRING, "kernel")                                                                    \
    X(result.kernel_fp, CHARS, "kernel_fp", KNOWN)                                                 \
    X(result.arch, CHARS, "arch", KNOWN)                                                           \
    X(result.reference_lib, CHARS, "reference_lib", KNOWN)                                         \
    V(INT, "first_family", .get = get_first_family, .set = set_first_family, COUNT)                \
    V(INT, "families", .get = get_families, .set = set_families, COUNT)                            \
    X(result.timing.compile_cpu_s, DOUBLE, "nvrtc_s")                                              \
    X(result.timing.compile_threads, INT, "compile_threads", COUNT)                                \
    X(result.compiles, STRUCT, "rows", .type = &gb_wire_report_compile_row,                        \
      .arity = GB_WIRE_OWNED, .count = offsetof(gb_report_call, result.n_compiles),                \
      .max_items = INT_MAX)

#define COMPILES_VIEW(X)                                                                           \
    X(calls, STRUCT, "compiles", .type = &gb_wire_report_call, .arity = GB_WIRE_OWNED,             \
      .count = offsetof(gb_report, n_calls), .max_items = INT_MAX)

#define GB_WIRE_T gb_compile_row
GB_WIRE_VIEW_TABLE(gb_wire_report_compile_row, "row", ROW_VIEW, NULL)
#undef GB_WIRE_T
#define GB_WIRE_T gb_report_call
GB_WIRE_VIEW_TABLE(gb_wire_report_call, "call", CALL_VIEW, call_finish)
#undef GB_WIRE_T
#define GB_WIRE_T gb_report
GB_WIRE_TABLE(gb_wire_report_compiles, "report", COMPILES_VIEW, NULL)
#undef GB_WIRE_T

json_t *gb_json_compile_call(const char *kernel, const gb_tune_result *call, int first_family)
{
    gb_report_call view = {.kernel = (char *)kernel, .first_entry = first_family, .result = *call};
    return gb_wire_encode(&gb_wire_report_call, &view);
}
