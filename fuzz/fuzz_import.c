/*
 * `gpubench cache load FILE`: a transfer file from another machine is untrusted.
 * The bytes are imported, cubins included, into a scratch cache; then every record
 * in that cache must decode and sit under the key its content gives (what `cache
 * verify` checks), since import promises to store nothing else. A crash, a leak,
 * undefined behaviour or a record that verify would flag is a finding.
 */
#include "cache/inspect.h"
#include "cache/transfer.h"
#include "fuzz_store.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void problem(void *ctx, const char *msg)
{
    (void)ctx;
    fprintf(stderr, "fuzz_import: an imported record fails verify: %s\n", msg);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gb_cache *cache = gb_fuzz_store();
    gb_transfer_opts opts = {.cubins = true};
    gb_transfer_summary sum;
    gb_err err;
    if (gb_transfer_file_read(cache, (const char *)data, size, &opts, &sum, &err) != GB_OK)
        return 0;
    size_t stored = sum.best.imported + sum.best.replaced + sum.trials.imported +
                    sum.trials.replaced + sum.cubins.imported;
    if (stored == 0) return 0;
    gb_cache_verify_summary checked;
    if (gb_cache_verify(cache, problem, NULL, &checked, &err) != GB_OK) {
        fprintf(stderr, "fuzz_import: verify failed: %s\n", err.msg);
        abort();
    }
    return 0;
}
