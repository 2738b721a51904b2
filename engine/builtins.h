/*
 * The engine's own kernels (engine/builtins.cu): buffer fill, output poisoning,
 * comparison with the reference, L2 flush. The CUDA source is embedded in the
 * binary at build time; the GPU session compiles it for its device with NVRTC.
 */
#ifndef GB_ENGINE_BUILTINS_H
#define GB_ENGINE_BUILTINS_H

#include <stdint.h>

/* The text of engine/builtins.cu and its length (generated at build time). */
extern const char gb_builtins_source[];
extern const unsigned long gb_builtins_source_len;

#define GB_BUILTINS_NAME "gpubench/builtins.cu"

/* Fill modes understood by gb_fill; the order matches builtins.cu. */
typedef enum gb_fill_mode {
    GB_FILL_RANDN,
    GB_FILL_RAND,
    GB_FILL_ZEROS,
    GB_FILL_ONES,
    GB_FILL_POISON,
    GB_FILL_VALUE,
} gb_fill_mode;

/* What gb_compare accumulates on the device; the layout matches builtins.cu. */
typedef struct gb_compare_result {
    uint64_t n_bad;
    uint64_t first_bad;    /* UINT64_MAX when none */
    uint64_t max_abs_bits; /* a non-negative double's bits */
    uint64_t max_rel_bits;
    uint64_t n_nan_bad; /* NaN on one side only (without a reference: on either) */
    uint64_t first_nan_bad;
    double sum_sq_diff; /* over the elements where neither side is NaN */
    double sum_sq_ref;
} gb_compare_result;

#endif
