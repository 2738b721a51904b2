/*
 * `gpubench cache load --from kernel-tuner FILE`: a Kernel Tuner cache file is
 * untrusted JSON. The bytes are decoded without a cache (the checks alone) and then
 * imported into a scratch cache; both must agree on what the file holds, and the
 * best they report must be a time, accounted for once in the cache. A crash, a leak, undefined
 * behaviour or a disagreement is a finding.
 */
#include "cache/ktuner.h"
#include "fuzz_store.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what)
{
    fprintf(stderr, "fuzz_ktuner: %s\n", what);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gb_fields shape = {0};
    gb_value n = gb_value_int(1024);
    if (gb_fields_set(&shape, "N", &n) != GB_OK) fail("out of memory");
    gb_ktuner_opts opts = {.kernel = "fuzzed", .shape = &shape, .now = 1};
    gb_ktuner_summary dry, stored;
    gb_err err;
    int rc_dry = gb_ktuner_import(NULL, (const char *)data, size, &opts, &dry, &err);
    int rc = gb_ktuner_import(gb_fuzz_store(), (const char *)data, size, &opts, &stored, &err);
    gb_fields_free(&shape);
    if (rc_dry != rc) fail("checking and importing disagree on the file");
    if (rc != GB_OK) return 0;
    if (dry.n_entries != stored.n_entries || dry.n_ok != stored.n_ok ||
        dry.has_best != stored.has_best || strcmp(dry.best_config, stored.best_config) != 0)
        fail("checking and importing disagree on the entries");
    if (stored.has_best && !(isfinite(stored.best_ms) && stored.best_ms >= 0))
        fail("the best time is not a time");
    const gb_transfer_counts *best = &stored.stored.best;
    if (stored.has_best && best->imported + best->replaced + best->kept + best->skipped != 1)
        fail("a file with a best did not account for it once");
    return 0;
}
