// Reference softmax, forward and backward, in double, for checking templates/softmax.cuh
// (examples/suite/softmax.lua). One block of REF_THREADS threads per row; every value
// is read from the stored inputs, computed in double and rounded once to the storage
// type. Macros: GB_SM_DTYPE (0 f32, 1 f16, 2 bf16, 3 fp8 e4m3) and GB_SM_CAUSAL
// (row i of each S x S head keeps columns 0..i; the others are written as 0).
//
// This file defines what NaN and Inf do, with the plain formulas:
//   forward    m = max(x), NaN if any x is NaN; y = exp(x - m) / sum(exp(x - m))
//   backward   d = sum(dy * y);                 dx = y * (dy - d)
// so a NaN anywhere in a row makes the whole row NaN, +Inf does too (Inf - Inf), a row
// of -Inf is NaN (-Inf + Inf), and -Inf beside finite values gives 0.

#if GB_SM_DTYPE == 0
typedef float store_t;
__device__ double to_d(store_t v)
{
    return v;
}
__device__ store_t from_d(double v)
{
    return (float)v;
}
#elif GB_SM_DTYPE == 1
#include <cuda_fp16.h>
typedef __half store_t;
__device__ double to_d(store_t v)
{
    return __half2float(v);
}
__device__ store_t from_d(double v)
{
    return __double2half(v);
}
#elif GB_SM_DTYPE == 2
#include <cuda_bf16.h>
typedef __nv_bfloat16 store_t;
__device__ double to_d(store_t v)
{
    return __bfloat162float(v);
}
__device__ store_t from_d(double v)
{
    return __double2bfloat16(v);
}
#elif GB_SM_DTYPE == 3
#include <cuda_fp8.h>
typedef __nv_fp8_e4m3 store_t;
__device__ double to_d(store_t v)
{
    return (float)v;
}
__device__ store_t from_d(double v)
{
    return __nv_fp8_e4m3(v);
} // saturates: no Inf
#else
#error "GB_SM_DTYPE must be 0 (f32), 1 (f16), 2 (bf16) or 3 (fp8 e4m3)"
#endif

#ifndef GB_SM_CAUSAL
#error "softmax_ref.cuh needs GB_SM_CAUSAL (0 or 1)"
#endif

#define REF_THREADS 256

// The max that keeps a NaN: once either side is NaN, so is the result.
__device__ double max_nan(double a, double b)
{
    if (a != a) return a;
    if (b != b) return b;
    return a > b ? a : b;
}

// Sum (max_nan when take_max) of every thread's v, in a fixed tree order.
__device__ double block_reduce(double v, bool take_max)
{
    __shared__ double s[REF_THREADS];
    __syncthreads(); // s may still be read by the previous reduction
    s[threadIdx.x] = v;
    __syncthreads();
    for (int half = REF_THREADS / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) {
            double o = s[threadIdx.x + half];
            s[threadIdx.x] = take_max ? max_nan(s[threadIdx.x], o) : s[threadIdx.x] + o;
        }
        __syncthreads();
    }
    return s[0];
}

// Columns of row `row` that take part: all, or 0..i in a causal row.
__device__ int kept(long long row, int cols)
{
    return GB_SM_CAUSAL ? (int)(row % cols) + 1 : cols;
}

// queue: the forward's workers' (softmax.cuh), left at zero here
extern "C" __global__ void __launch_bounds__(REF_THREADS)
    softmax_fwd_ref(const store_t *x, store_t *y, int rows, int cols, int *queue)
{
    const long long row = blockIdx.x, base = row * cols;
    const int n = kept(row, cols);
    double m = __longlong_as_double(0xfff0000000000000ull) /* -Inf */;
    for (int c = threadIdx.x; c < n; c += REF_THREADS)
        m = max_nan(m, to_d(x[base + c]));
    m = block_reduce(m, true);
    double sum = 0.0;
    for (int c = threadIdx.x; c < n; c += REF_THREADS)
        sum += exp(to_d(x[base + c]) - m);
    sum = block_reduce(sum, false);
    for (int c = threadIdx.x; c < cols; c += REF_THREADS)
        y[base + c] = from_d(c < n ? exp(to_d(x[base + c]) - m) / sum : 0.0);
}

extern "C" __global__ void __launch_bounds__(REF_THREADS)
    softmax_bwd_ref(const store_t *y, const store_t *dy, store_t *dx, int rows, int cols)
{
    const long long row = blockIdx.x, base = row * cols;
    const int n = kept(row, cols);
    double dot = 0.0;
    for (int c = threadIdx.x; c < n; c += REF_THREADS)
        dot += to_d(dy[base + c]) * to_d(y[base + c]);
    dot = block_reduce(dot, false);
    for (int c = threadIdx.x; c < cols; c += REF_THREADS)
        dx[base + c] = from_d(c < n ? to_d(y[base + c]) * (to_d(dy[base + c]) - dot) : 0.0);
}
