/*
 * The result model: what a run produced, as every output (report/output.h) sees
 * it. A run is its context (where, when, on what, by which command) and a list
 * of entries, one per (kernel, shape) that a gb.tune or gb.bench call measured:
 * the shape's result as the tuner made it (tuner/tune.h: the best with its
 * samples, the baseline, every trial with its statistics and samples, the
 * search), and the kernel's name.
 *
 * A live run hands entries to the outputs as each call ends; `gpubench report`
 * reads a saved run back from its JSON (report/outputs/json_load.c) into the same model,
 * so every output renders a saved run as it rendered the live one.
 */
#ifndef GB_REPORT_RESULT_H
#define GB_REPORT_RESULT_H

#include "base/error.h"
#include "base/strbuf.h"
#include "engine/device.h"
#include "engine/roofs.h"
#include "tuner/tune.h"

#include <stdbool.h>

/* The version of the JSON a run is saved as (docs/report-json.md). */
#define GB_REPORT_SCHEMA_VERSION 2

/* Where and how a run happened. Strings are owned (free with gb_run_context_free). */
typedef struct gb_run_context {
    int schema_version;
    char *engine_version; /* "0.1.0" */
    char *date;           /* ISO 8601 with the offset, when the run began */
    char *host_name;
    char *executable;   /* "gpubench-tune" */
    char *command_line; /* the arguments, joined by spaces */
    char *script;       /* the Lua script, or NULL */
    int num_cpus;
    char nvrtc_version[16]; /* "13.0"; "" when unknown */
    bool has_device;        /* the run timed on a GPU */
    gb_device_info device;  /* with has_device */
    gb_roofs roofs;         /* with has_device */
    char arch[16];          /* the compile target */
    bool compile_only;
} gb_run_context;

void gb_run_context_free(gb_run_context *ctx);

/* One (kernel, shape) of a run. */
typedef struct gb_report_entry {
    const char *kernel;
    gb_math math;                  /* what its flops run on */
    bool bench;                    /* gb.bench timed fixed configurations: no search */
    const gb_shape_result *result; /* the tuner's, or one read back from JSON */
    /* The gb.tune call it came from, for what the call as a whole did (its time,
     * the compile rows of --compile-only); NULL for a run read back from JSON. */
    const gb_tune_result *call;
} gb_report_entry;

/* A compile-only gb.tune call read back: what its compile table needs. */
typedef struct gb_report_call {
    char *kernel;
    int first_entry; /* its entries: first_entry .. first_entry + result.n_shapes - 1 */
    /* Its compile rows, fingerprint, target, reference library, NVRTC's time and
     * threads; one shape per entry, holding only what the table's summary counts
     * (n_rejected). */
    gb_tune_result result;
} gb_report_call;

/* A run read back from its JSON: it owns the entries' kernels and results, and
 * its compile-only calls. */
typedef struct gb_report {
    gb_run_context context;
    gb_report_entry *entries;
    int n_entries;
    gb_report_call *calls;
    int n_calls;
} gb_report;

void gb_report_free(gb_report *report);

/* Reads a run saved by the JSON output (gb_output_json; docs/report-json.md) into
 * out: the context, one entry per (kernel, shape), each owning its kernel
 * (strdup'ed) and its result (a gb_shape_result of its own, calloc'ed), call
 * NULL, and each compile-only call's compile table (out->calls); free it with
 * gb_report_free. An entry holds what the file holds: the best
 * with its statistics and samples, the baseline, every trial, the search and the
 * counts; per-sample clocks and throttle flags are not saved (0 and false here),
 * nor are the fields a saved run has no use for (warm-up, wall times, the
 * constraints' timing). Writing what was read gives the same text again.
 *
 * Returns GB_OK; GB_EIO when the file cannot be read; GB_EINVAL when it is not
 * JSON, is of another schema_version, or a field is missing or of the wrong kind,
 * err naming the file and the field ("run.json: benchmarks[3].samples_ms:
 * expected a list of numbers"); GB_ENOMEM. On failure out is empty. */
int gb_report_load_json(const char *path, gb_report *out, gb_err *err);

/* What became of a (kernel, shape): one word per situation, the same in every
 * output (the table's status column, the JSON's and CSV's status, the HTML's
 * tag), with a sentence saying why (gb_entry_reason). */
typedef enum gb_outcome {
    GB_OUTCOME_TUNED,       /* searched now; it has a best */
    GB_OUTCOME_RESUMED,     /* the same, going on from an earlier run's trials */
    GB_OUTCOME_CACHE,       /* answered from the cache: nothing measured now */
    GB_OUTCOME_BENCH,       /* gb.bench timed a fixed configuration */
    GB_OUTCOME_CONTENDED,   /* its best was measured while other processes used the GPU */
    GB_OUTCOME_INTERRUPTED, /* the run stopped during it: the best of what finished, if any */
    GB_OUTCOME_COMPILED,    /* compile-only: its variants compiled, nothing was timed */
    GB_OUTCOME_NO_VARIANT,  /* configurations were tried and none passed */
    GB_OUTCOME_FAILED,      /* it could not be tried: its reference, its arguments, a space
                               the constraints left empty (the shape's failure) */
    GB_OUTCOME_COUNT
} gb_outcome;

gb_outcome gb_entry_outcome(const gb_report_entry *e);
/* "tuned", "resumed", "cache", "bench", "contended", "interrupted", "compiled",
 * "no valid variant", "failed". */
const char *gb_outcome_name(gb_outcome o);
/* The shape has no result, or one to doubt (the outputs mark it). */
bool gb_outcome_is_bad(gb_outcome o);
/* Why, as one sentence appended to out ("" for a plain tuned best): "no
 * configuration passed (3 wrong, 1 crashed)", "compile-only: 28 variants
 * compiled, 44 configurations rejected by the constraints; nothing was timed",
 * the shape's failure, ... */
void gb_entry_reason(const gb_report_entry *e, gb_strbuf *out);

/* A --compile-only row's status: "compiled", "cache" (found compiled in the
 * cubin cache), "over limits" (compiled, beyond the target's limits) or
 * "compile_error". */
const char *gb_compile_row_status(const gb_compile_row *row);
/* Its reason, into out (n bytes): a failed compile's first diagnostic, which limits
 * it exceeds, or "". Returns out. */
const char *gb_compile_row_reason(const gb_compile_row *row, char *out, size_t n);

/* Derived figures of an entry's best (0 where its flops, bytes or time are
 * unknown). */
double gb_entry_tflops(const gb_report_entry *e);
double gb_entry_gbps(const gb_report_entry *e);
double gb_entry_intensity(const gb_report_entry *e); /* flops per byte */

/* The same for another time of the shape's work, in ms (a trial's median). */
double gb_entry_tflops_at(const gb_report_entry *e, double ms);
double gb_entry_gbps_at(const gb_report_entry *e, double ms);

/* The roof an entry sits under at its intensity: the lesser of the memory roof
 * (intensity x GB/s) and the compute roof of its math, in TFLOP/s, from the
 * measured ceilings when known, else the peaks; 0 when neither is known.
 * out_memory_bound says which roof is the lower. */
double gb_entry_roof_tflops(const gb_report_entry *e, const gb_roofs *roofs, bool measured,
                            bool *out_memory_bound);

/* The entry's best against its roof: TFLOP/s over the roof at its intensity when
 * its flops are known, else GB/s over the bandwidth; from the measured ceilings
 * or the peaks; 0 when a roof that bounds it is unknown. */
double gb_entry_fraction(const gb_report_entry *e, const gb_roofs *roofs, bool measured);
double gb_entry_fraction_at(const gb_report_entry *e, const gb_roofs *roofs, bool measured,
                            double ms);

#endif
