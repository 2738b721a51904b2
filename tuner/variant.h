/*
 * From a configuration to a compile: the entry expression with ${P} replaced, the
 * NVRTC options (the kernel's own, -D for every parameter when it asks for
 * macros, and the script's defines), and the fingerprints that key the cache.
 */
#ifndef GB_TUNER_VARIANT_H
#define GB_TUNER_VARIANT_H

#include "cache/key.h"
#include "cache/record.h"
#include "tuner/compiler.h"
#include "tuner/kernel.h"

/* A compile job for (kernel, config, shape), submitted to nothing yet. */
int gb_variant_job(const gb_kernel_def *kernel, const gb_key *source_fp, const char *arch,
                   const gb_config *config, const gb_fields *shape, gb_compile_job **out,
                   gb_err *err);

/* The source closure hash of a kernel (its text and local headers). */
int gb_variant_source_fp(const gb_kernel_def *kernel, gb_key *out, gb_err *err);
/* The same, also listing the closure's files (gb_source_closure). */
int gb_variant_source_files(const gb_kernel_def *kernel, gb_key *out_fp,
                            gb_record_source **out_files, int *out_n, gb_err *err);

/* Hex hash of the space's parameters and values. */
int gb_variant_space_fp(const gb_space *space, char out[33]);

/* The entry expression with ${P} replaced by the configuration's values. */
int gb_tune_expand_entry(const char *entry, const gb_config *config, gb_strbuf *out, gb_err *err);

/* The kernel fingerprint (hex): source closure, entry, options, macros. */
int gb_tune_kernel_fingerprint(const gb_kernel_def *kernel, char out[33], gb_err *err);

#endif
