/*
 * Tensormap arguments: TMA descriptors (CUtensorMap) of a problem's tensors.
 *
 * A script names a tensor argument, a box and a swizzle (gb.tensormap); the
 * engine checks the request against TMA's rules here, on any machine, so a bad
 * box is a script error with a sentence instead of CUDA_ERROR_INVALID_VALUE on the
 * GPU; the GPU session encodes the descriptor with cuTensorMapEncodeTiled once
 * the tensor has its buffer, and passes its 128 bytes by value, which the kernel
 * takes as a `const __grid_constant__` parameter (templates/tma.cuh).
 */
#ifndef GB_ENGINE_TENSORMAP_H
#define GB_ENGINE_TENSORMAP_H

#include "base/error.h"
#include "engine/spec.h"

#include <cuda.h>

/* The size and alignment of a tensormap parameter. */
#define GB_TENSORMAP_BYTES 128

/* The view a tensormap takes of its tensor, in TMA's order (innermost first):
 * sizes and the byte strides of every dimension but the innermost. */
typedef struct gb_tensormap_view {
    int rank;
    cuuint64_t dims[GB_TENSORMAP_MAX_RANK];
    cuuint64_t strides[GB_TENSORMAP_MAX_RANK]; /* bytes; strides[0] is dims 1's */
    cuuint32_t box[GB_TENSORMAP_MAX_RANK];
} gb_tensormap_view;

/* Checks args[pos], a tensormap, against the n_args arguments around it: the
 * tensor it names, the rank, the box, the swizzle, the strides' alignment and
 * that the view stays inside the tensor. GB_EINVAL with one sentence ("box[2] is
 * 128 bf16 = 256 bytes; swizzle 128B takes at most 128"), which the caller places,
 * otherwise. Fills view when it is not NULL. */
int gb_tensormap_check(const gb_arg *args, int n_args, int pos, gb_tensormap_view *view,
                       gb_err *err);

/* Encodes args[pos] for a tensor whose data starts at base (the driver loaded);
 * errors name the argument. */
int gb_tensormap_encode(const gb_arg *args, int n_args, int pos, CUdeviceptr base, CUtensorMap *out,
                        gb_err *err);

#endif
