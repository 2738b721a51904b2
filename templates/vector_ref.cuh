// References for the vector group (templates/vector.cuh): the same arguments,
// computed in double from the stored inputs and rounded once to the output type,
// so they are closer to the exact result than any fp32 variant they check.
// Compile with -DELEM=<element type>. Element-wise: one thread per element,
// blocks of 256. Reductions: blocks of 256 over at most as many blocks as
// partials holds, each thread summing its elements in double, the blocks'
// doubles added by the last block in index order (deterministic), *counter set
// back to 0. max is NaN if any element is NaN, -Inf for no elements.
#pragma once

#include "vector_elem.cuh"

#ifndef ELEM
#error "vector_ref.cuh: compile with -DELEM=<element type>, e.g. -DELEM=float"
#endif

typedef elem<ELEM> RE;

static __device__ __forceinline__ double ref_in(ELEM v)
{
    return (double)RE::to_float(v);
}

static __device__ __forceinline__ i64 ref_index()
{
    return (i64)blockIdx.x * blockDim.x + threadIdx.x;
}

extern "C" __global__ void vector_add_ref(const ELEM *x, const ELEM *y, ELEM *z, i64 n)
{
    const i64 i = ref_index();
    if (i < n) z[i] = RE::from_double(ref_in(x[i]) + ref_in(y[i]));
}

extern "C" __global__ void vector_mul_ref(const ELEM *x, const ELEM *y, ELEM *z, i64 n)
{
    const i64 i = ref_index();
    if (i < n) z[i] = RE::from_double(ref_in(x[i]) * ref_in(y[i]));
}

extern "C" __global__ void vector_axpy_ref(const ELEM *x, ELEM *y, float a, i64 n)
{
    const i64 i = ref_index();
    if (i < n) y[i] = RE::from_double((double)a * ref_in(x[i]) + ref_in(y[i]));
}

extern "C" __global__ void vector_scal_ref(ELEM *x, float a, i64 n)
{
    const i64 i = ref_index();
    if (i < n) x[i] = RE::from_double((double)a * ref_in(x[i]));
}

// ---- reductions ----------------------------------------------------------------

enum ref_kind { REF_SUM, REF_DOT, REF_NRM2, REF_MAX };

// The identity: 0, or -Inf for max.
static __device__ __forceinline__ double ref_none(int kind)
{
    return kind == REF_MAX ? -__longlong_as_double(0x7ff0000000000000LL) : 0.0;
}

static __device__ __forceinline__ double ref_combine(int kind, double a, double b)
{
    if (kind != REF_MAX) return a + b;
    return a != a ? a : b != b ? b : a > b ? a : b; // NaN wins
}

static __device__ __forceinline__ double ref_fold(int kind, double v)
{
    __shared__ double lanes[32];
    for (int o = 16; o > 0; o >>= 1)
        v = ref_combine(kind, v, __shfl_xor_sync(0xffffffffu, v, o));
    if ((threadIdx.x & 31) == 0) lanes[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x < 32) {
        v = threadIdx.x < blockDim.x / 32 ? lanes[threadIdx.x] : ref_none(kind);
        for (int o = 16; o > 0; o >>= 1)
            v = ref_combine(kind, v, __shfl_xor_sync(0xffffffffu, v, o));
    }
    __syncthreads(); // lanes is reused by the last block's second fold
    return v;
}

static __device__ void ref_reduce(int kind, const ELEM *x, const ELEM *y, float *out,
                                  double *partials, int *counter, i64 n)
{
    double v = ref_none(kind);
    for (i64 i = ref_index(); i < n; i += (i64)gridDim.x * blockDim.x) {
        const double a = ref_in(x[i]);
        const double term = kind == REF_DOT ? a * ref_in(y[i]) : kind == REF_NRM2 ? a * a : a;
        v = ref_combine(kind, v, term);
    }
    v = ref_fold(kind, v);
    __shared__ bool last;
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = v;
        __threadfence();
        last = atomicAdd(counter, 1) == (int)gridDim.x - 1;
    }
    __syncthreads();
    if (!last) return;
    __threadfence();
    v = ref_none(kind);
    for (unsigned b = threadIdx.x; b < gridDim.x; b += blockDim.x)
        v = ref_combine(kind, v, __ldcg(partials + b));
    v = ref_fold(kind, v);
    if (threadIdx.x == 0) {
        *out = (float)(kind == REF_NRM2 ? sqrt(v) : v);
        *counter = 0;
    }
}

extern "C" __global__ void vector_reduce_sum_ref(const ELEM *x, float *out, double *partials,
                                                 int *counter, i64 n)
{
    ref_reduce(REF_SUM, x, x, out, partials, counter, n);
}

extern "C" __global__ void vector_dot_ref(const ELEM *x, const ELEM *y, float *out,
                                          double *partials, int *counter, i64 n)
{
    ref_reduce(REF_DOT, x, y, out, partials, counter, n);
}

extern "C" __global__ void vector_nrm2_ref(const ELEM *x, float *out, double *partials,
                                           int *counter, i64 n)
{
    ref_reduce(REF_NRM2, x, x, out, partials, counter, n);
}

extern "C" __global__ void vector_reduce_max_ref(const ELEM *x, float *out, double *partials,
                                                 int *counter, i64 n)
{
    ref_reduce(REF_MAX, x, x, out, partials, counter, n);
}
