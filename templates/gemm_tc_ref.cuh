// Reference for gemm_wgmma.cuh where cuBLASLt has no GEMM to check it against:
// fp8 with an MN-major operand (cuBLASLt runs fp8 on Hopper with both operands
// K-major only) and e5m2 x e5m2. It takes gemm_wgmma's arguments, the types
// from the same defines (GEMM_T, GEMM_TB, GEMM_OUT) and the layout as template
// arguments, and computes
//
//   C[b] = alpha * op(A[b]) * op(B[b]) + beta * C[b]
//
// summing the products in double (every fp8 value, and every product of two, is
// exact in double), so it is closer to the exact result than the fp32 sums it
// checks. 16 x 16 blocks over (N, M, batch); 16 x 16 tiles of A and B go
// through shared memory so that each is read from memory once per block.
//
// A's and B's stored rows are padded to a multiple of 16 bytes, as
// examples/gemm_tc.lua stores them for TMA (row_pitch); C's are packed.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "gemm_epilogue.cuh"
#include "gemm_types.cuh"
#include "tma.cuh"

// Elements from one stored row's start to the next's: n rounded up to 16 bytes.
template <class T> __device__ __forceinline__ size_t row_pitch(int n)
{
    constexpr int per16 = 16 / sizeof(T);
    return (size_t)(n + per16 - 1) / per16 * per16;
}

template <int A_MN, int B_MN>
__global__ void __launch_bounds__(256)
    gemm_tc_ref(const GEMM_T *A, const GEMM_TB *B, GEMM_OUT *C, const __grid_constant__ gb_tensormap,
                const __grid_constant__ gb_tensormap, const __grid_constant__ gb_tensormap, int M,
                int N, int K, int batch, float alpha, float beta, const GEMM_T *, const GEMM_TB *,
                const __grid_constant__ gb_tensormap, const __grid_constant__ gb_tensormap,
                unsigned *, float *, unsigned *, const __grid_constant__ gb_tensormap,
                const __grid_constant__ gb_tensormap, const __grid_constant__ gb_tensormap)
{
    __shared__ double sa[16][17], sb[16][17]; // sa[k][m], sb[k][n]
    const int tx = threadIdx.x, ty = threadIdx.y, b = blockIdx.z;
    const int m0 = blockIdx.y * 16, n0 = blockIdx.x * 16;
    if (b >= batch) return;
    const size_t lda = row_pitch<GEMM_T>(A_MN ? M : K), ldb = row_pitch<GEMM_TB>(B_MN ? N : K);
    A += (size_t)b * (A_MN ? K : M) * lda;
    B += (size_t)b * (B_MN ? K : N) * ldb;
    C += (size_t)b * M * N;
    double acc = 0.0;
    for (int k0 = 0; k0 < K; k0 += 16) {
        // A stored [M, K] (K-major) or [K, M]; B stored [N, K] (K-major) or [K, N].
        // Consecutive threads read consecutive elements either way.
        {
            const int m = A_MN ? m0 + tx : m0 + ty, k = A_MN ? k0 + ty : k0 + tx;
            const double v = m < M && k < K
                                 ? (double)(float)A[A_MN ? k * lda + m : m * lda + k]
                                 : 0.0;
            sa[k - k0][m - m0] = v;
        }
        {
            const int n = B_MN ? n0 + tx : n0 + ty, k = B_MN ? k0 + ty : k0 + tx;
            const double v = n < N && k < K
                                 ? (double)(float)B[B_MN ? k * ldb + n : n * ldb + k]
                                 : 0.0;
            sb[k - k0][n - n0] = v;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < 16; k++)
            acc += sa[k][ty] * sb[k][tx];
        __syncthreads();
    }
    const int m = m0 + ty, n = n0 + tx;
    if (m >= M || n >= N) return;
    double out = (double)alpha * acc;
    if (beta != 0.0f) out += (double)beta * (double)(float)C[(size_t)m * N + n];
    C[(size_t)m * N + n] = gemm::from_float<GEMM_OUT>((float)out);
}
