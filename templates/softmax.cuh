// Softmax over the last dimension, forward and backward, for the memory-bound suite
// (examples/suite/softmax.lua tunes it; docs/suite.md, section softmax, explains it).
//
//   forward    y  = exp(x - max(x)) / sum(exp(x - max(x)))        per row
//   backward   dx = y * (dy - sum(dy * y))                        per row
//
// Two paths, chosen per configuration:
//
//   GB_SM_WORKERS 0  softmax_teams.cuh: a team of threads (part of a warp, a block or a
//                    cluster) per row, each thread's elements in fp32 registers; every
//                    kernel (rows and causal heads, forward and backward, fp8 storage)
//   GB_SM_WORKERS 1  softmax_workers.cuh: the forward over rows of f32, f16 or bf16 as
//                    persistent workers over a queue, in the norms kernels' layout
//                    (NORMS_* macros, norms_common.cuh), GB_SM_E vectors a thread
//
// The forward takes the workers' queue as its last argument, an in-out i32 pair
// { next row, blocks done } that is zero between launches (the workers' last block sets
// it back); the teams path leaves it alone. Each path's header lists its macros.

#ifndef GB_SM_WORKERS
#define GB_SM_WORKERS 0
#endif

// ---- entry points: rows x cols, row-major; for a causal kernel rows = B*H*S, cols = S --

#if GB_SM_WORKERS

#include "softmax_workers.cuh"

extern "C" __global__ void NORMS_CLUSTER_DIMS __launch_bounds__(NORMS_MAXT, NORMS_MINB)
    softmax_fwd(const norms_t *x, norms_t *y, int rows, int cols, int *queue)
{
    norms::softmax_rows_fwd<GB_SM_E, NORMS_CL>(x, y, queue, rows, cols);
}

#else

#include "softmax_teams.cuh"

#if GB_SM_CL > 1
#define GB_SM_CLUSTER __cluster_dims__(GB_SM_CL, 1, 1)
#else
#define GB_SM_CLUSTER
#endif

#if GB_SM_OP == 1
extern "C" __global__ void GB_SM_CLUSTER __launch_bounds__(GB_SM_BLOCK)
    softmax_fwd(const bits_t *x, bits_t *y, int rows, int cols, int *queue)
{
    sm::forward(x, y, rows, cols);
}
#elif GB_SM_OP == 2
extern "C" __global__ void GB_SM_CLUSTER __launch_bounds__(GB_SM_BLOCK)
    softmax_bwd(const bits_t *y, const bits_t *dy, bits_t *dx, int rows, int cols)
{
    sm::backward(y, dy, dx, rows, cols);
}
#else
#error "GB_SM_OP must be 1 (forward) or 2 (backward)"
#endif

#endif
