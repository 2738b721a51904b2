/*
 * What the tests that read a GEMM template's PTX or SASS share: one variant of a
 * template compiled by NVRTC, as the engine would, without the engine.
 */
#ifndef GB_TESTS_TEMPLATE_COMPILE_H
#define GB_TESTS_TEMPLATE_COMPILE_H

#include <stddef.h>

/* Compiles `#include "HEADER"` with templates/ and the CUDA headers on the path,
 * instantiating name_expr, for arch ("--gpu-architecture=compute_90a" gives
 * PTX, "--gpu-architecture=sm_90a" a cubin) with up to 3 more options (-D
 * defines; NULL ends them early). Fails the test with NVRTC's log when it does
 * not compile. Returns the PTX or cubin, *bytes long, for the caller to free. */
char *template_compile(const char *header, const char *name_expr, const char *arch,
                       const char *const defines[3], size_t *bytes);

#endif
