// What the GEMM templates' epilogues share: fp32 sums scaled by alpha and beta,
// converted to C's type and stored two neighbouring columns at a time.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace gemm {

template <class T> __device__ __forceinline__ T from_float(float x);
template <> __device__ __forceinline__ __nv_bfloat16 from_float(float x)
{
    return __float2bfloat16_rn(x);
}
template <> __device__ __forceinline__ __half from_float(float x)
{
    return __float2half_rn(x);
}
template <> __device__ __forceinline__ float from_float(float x)
{
    return x;
}

// Two neighbouring elements of C, stored as one 4- or 8-byte word.
template <class T> struct alignas(2 * sizeof(T)) duo {
    T v[2];
};

template <class T> __device__ __forceinline__ duo<T> to_duo(float x0, float x1)
{
    return duo<T>{{from_float<T>(x0), from_float<T>(x1)}};
}

// x0 and x1, the sums for columns c and c + 1 of row r, become alpha * x +
// beta * C there; C is read only inside M x N, and only when beta is not 0.
template <class T>
__device__ __forceinline__ void scale_pair(const T *C, int r, int c, int M, int N, float alpha,
                                           float beta, float &x0, float &x1)
{
    x0 *= alpha;
    x1 *= alpha;
    if (beta == 0.0f || r >= M) return;
    if (c < N) x0 += beta * (float)C[(size_t)r * N + c];
    if (c + 1 < N) x1 += beta * (float)C[(size_t)r * N + c + 1];
}

// Stores the sums for columns c (even) and c + 1 of row r, scaled, inside M x N:
// one aligned word when N is even (then r * N + c is even and c + 1 < N), else
// element by element.
template <class T>
__device__ __forceinline__ void store_pair(T *C, int r, int c, int M, int N, float x0, float x1,
                                           float alpha, float beta)
{
    if (r >= M || c >= N) return;
    scale_pair(C, r, c, M, N, alpha, beta, x0, x1);
    T *p = C + (size_t)r * N + c;
    if (N % 2 == 0) {
        *reinterpret_cast<duo<T> *>(p) = to_duo<T>(x0, x1);
    } else {
        p[0] = from_float<T>(x0);
        if (c + 1 < N) p[1] = from_float<T>(x1);
    }
}

} // namespace gemm
