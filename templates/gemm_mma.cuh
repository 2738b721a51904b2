// Ampere/Ada GEMM on the tensor cores, without wgmma or TMA, so it runs on sm_80
// (A100), sm_86/sm_89 (A10, L40, RTX 40xx) and sm_90 (H100): C[M,N] = alpha *
// A[M,K] * B[N,K]^T + beta * C, 16-bit inputs (GEMM_T: __nv_bfloat16 or __half),
// fp32 accumulation, C in GEMM_T, all row-major (A and B both K-major:
// examples/gemm_tc.lua's NT layout), as gemm_wgmma.cuh computes it.
//
// Shape of the kernel:
//   - one block per BM x BN tile of C, the tiles taken GROUP rows of tiles at a
//     time, so the blocks resident together share A rows and B columns in L2;
//   - a ring of STAGES shared-memory slices of A (BM x BK) and B (BN x BK), filled
//     by cp.async (16 bytes a thread, straight to shared memory, zeros past the
//     edges), one commit group per slice, so STAGES - 1 slices are in flight
//     while the tensor cores work on the oldest one;
//   - each slice's 16-byte chunks are XOR-swizzled within every 128-byte line, so
//     the eight rows one ldmatrix phase reads sit in eight different bank groups;
//   - (BM/WM) x (BN/WN) warps, each owning a WM x WN sub-tile: per 16-deep step
//     it loads its A fragments (one ldmatrix.x4 per 16 rows) and B fragments (one
//     ldmatrix.x4 per 16 columns) and issues (WM/16) x (WN/8) mma.sync m16n8k16;
//   - the epilogue scales the accumulators and stores them from registers, two
//     columns (4 bytes) at a time where N is even, inside M x N only.
//
// Any M and N: rows past A's and B's edges load as zeros and nothing outside C is
// stored. K must be a multiple of 8: a row is read in 16-byte chunks, each wholly
// inside K or wholly past it (and then zero-filled), and every row starts 16-byte
// aligned.
//
// Arguments: A, B, C, M, N, K, alpha, beta. Launch: a 1-D grid of
// ceil(M/BM) * ceil(N/BN) blocks of (BM/WM) * (BN/WN) * 32 threads, with
// STAGES * (BM + BN) * BK * sizeof(GEMM_T) bytes of dynamic shared memory.
//
// Compile-time: GEMM_T (__nv_bfloat16 or __half).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "gemm_epilogue.cuh"
#include "tile_order.cuh"

#ifndef GEMM_T
#error "gemm_mma: compile with -DGEMM_T=__nv_bfloat16 or __half"
#endif

namespace mma_sync {

constexpr int GROUP = 8; // rows of tiles walked together (see tile_origin)

__device__ __forceinline__ unsigned smem(const void *p)
{
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// Copies 16 bytes from global to shared memory without going through registers
// or L1; with bytes = 0 it reads nothing and writes 16 zeros (a chunk past an edge).
__device__ __forceinline__ void copy16(void *dst, const void *src, unsigned bytes)
{
    asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16, %2;" ::"r"(smem(dst)),
                 "l"(src), "r"(bytes)
                 : "memory");
}

__device__ __forceinline__ void commit()
{
    asm volatile("cp.async.commit_group;" ::: "memory");
}

// Waits until at most PENDING of this thread's commit groups are still in flight.
template <int PENDING> __device__ __forceinline__ void wait()
{
    asm volatile("cp.async.wait_group %0;" ::"n"(PENDING) : "memory");
}

// Four 8x8 matrices of 16-bit elements; lane i gives the address of row i % 8 of
// matrix i / 8, and receives in r[j] row lane/4, columns 2*(lane%4) and +1 of
// matrix j.
__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], const void *row)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem(row)));
}

// d += a * b for one m16n8k16 product: a is 16 x 16 (row-major), b is 16 x 8
// (column-major, i.e. B's rows of K), d is 16 x 8 in fp32.
template <class T>
__device__ __forceinline__ void mma16816(float (&d)[4], const unsigned (&a)[4],
                                         const unsigned (&b)[2]);

template <>
__device__ __forceinline__ void mma16816<__nv_bfloat16>(float (&d)[4], const unsigned (&a)[4],
                                                        const unsigned (&b)[2])
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, "
                 "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

template <>
__device__ __forceinline__ void mma16816<__half>(float (&d)[4], const unsigned (&a)[4],
                                                 const unsigned (&b)[2])
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
                 "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// Where 16-byte chunk `chunk` of row `row` of a slice with BK columns lives, in
// elements from the slice's start. The slice is a sequence of chunks, BK/8 a row;
// within each 128-byte line (8 chunks: one row at BK = 64, two at BK = 32) the
// chunk's place is XORed with the line's number mod 8. ldmatrix reads one chunk
// of each of 8 consecutive rows (starting at a multiple of 8) per phase: those
// lie in 8 consecutive lines (BK = 64), or 4 lines holding two rows each (BK =
// 32), and either way land on 8 different 16-byte bank groups.
template <int BK> __device__ __forceinline__ int swizzle(int row, int chunk)
{
    int linear = row * (BK / 8) + chunk;
    return (linear ^ ((linear >> 3) & 7)) * 8;
}

// Loads rows [row0, row0 + ROWS) of a [rows, K] matrix, columns [k0, k0 + BK),
// into a swizzled slice; chunks past `rows` or K are zero-filled. Consecutive
// threads take consecutive chunks of a row, so a warp reads whole 64 or 128-byte
// runs of global memory.
template <int ROWS, int BK, int THREADS, class T>
__device__ __forceinline__ void load_slice(T *slice, const T *X, int row0, int rows, int k0, int K)
{
    constexpr int CHUNKS = ROWS * BK / 8;
    static_assert(CHUNKS % THREADS == 0, "every thread copies the same number of chunks");
#pragma unroll
    for (int i = 0; i < CHUNKS / THREADS; i++) {
        int linear = i * THREADS + threadIdx.x;
        int r = linear / (BK / 8), c = linear % (BK / 8);
        int row = row0 + r, col = k0 + c * 8;
        bool inside = row < rows && col < K;
        const T *src = inside ? X + (size_t)row * K + col : X; // never read when outside
        copy16(slice + swizzle<BK>(r, c), src, inside ? 16 : 0);
    }
}

// Tile t's first row and column, in grouped order (tile_order.cuh).
template <int BM, int BN>
__device__ __forceinline__ void tile_origin(int t, int tiles_m, int tiles_n, int &m0, int &n0)
{
    int row, col;
    grouped_tile(t, tiles_m, tiles_n, GROUP, row, col);
    m0 = row * BM;
    n0 = col * BN;
}

// One warp's share of a 16-deep step of a slice: its A fragments (16 rows each,
// lanes 0-15 give rows at k 0-7, lanes 16-31 the same rows at k 8-15), its B
// fragments (16 columns a load: lanes 0-7 and 8-15 give columns 0-7 at k 0-7 and
// 8-15, lanes 16-31 columns 8-15), then every product. wm0 and wn0 are the warp's
// first row of sa and of sb.
template <class T, int BK, int MI, int NI>
__device__ __forceinline__ void warp_step(float (&acc)[MI][NI][4], const T *sa, const T *sb,
                                          int wm0, int wn0, int kk, int lane)
{
    unsigned a[MI][4], b[NI][2];
#pragma unroll
    for (int mi = 0; mi < MI; mi++) {
        int row = wm0 + mi * 16 + lane % 16, chunk = kk * 2 + lane / 16;
        ldmatrix_x4(a[mi], sa + swizzle<BK>(row, chunk));
    }
#pragma unroll
    for (int nj = 0; nj < NI / 2; nj++) {
        int row = wn0 + nj * 16 + lane / 16 * 8 + lane % 8, chunk = kk * 2 + lane / 8 % 2;
        unsigned r[4];
        ldmatrix_x4(r, sb + swizzle<BK>(row, chunk));
        b[2 * nj][0] = r[0];
        b[2 * nj][1] = r[1];
        b[2 * nj + 1][0] = r[2];
        b[2 * nj + 1][1] = r[3];
    }
#pragma unroll
    for (int mi = 0; mi < MI; mi++)
#pragma unroll
        for (int ni = 0; ni < NI; ni++)
            mma16816<T>(acc[mi][ni], a[mi], b[ni]);
}

// A warp's accumulators to C: fragment (mi, ni) holds, in lane l, rows mi*16 +
// l/4 (d[0], d[1]) and +8 (d[2], d[3]), columns ni*8 + 2*(l%4) and +1.
template <class T, int MI, int NI>
__device__ __forceinline__ void store_warp(const float (&acc)[MI][NI][4], T *C, int row0, int col0,
                                           int M, int N, float alpha, float beta, int lane)
{
#pragma unroll
    for (int mi = 0; mi < MI; mi++)
#pragma unroll
        for (int ni = 0; ni < NI; ni++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const float *d = acc[mi][ni] + 2 * h;
                int r = row0 + mi * 16 + lane / 4 + 8 * h, c = col0 + ni * 8 + 2 * (lane % 4);
                gemm::store_pair(C, r, c, M, N, d[0], d[1], alpha, beta);
            }
}

} // namespace mma_sync

template <int BM, int BN, int BK, int WM, int WN, int STAGES>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32)
    gemm_mma(const GEMM_T *A, const GEMM_T *B, GEMM_T *C, int M, int N, int K, float alpha,
             float beta)
{
    using T = GEMM_T;
    constexpr int WARPS_N = BN / WN, THREADS = (BM / WM) * WARPS_N * 32;
    constexpr int MI = WM / 16, NI = WN / 8; // m16 and n8 fragments of a warp's sub-tile
    static_assert(BM % WM == 0 && BN % WN == 0, "the warps tile the block's tile");
    static_assert(WM % 16 == 0 && WN % 16 == 0, "m16 A fragments, B loaded 16 columns at a time");
    static_assert(BK == 32 || BK == 64, "the swizzle is conflict-free for 64 and 128-byte rows");
    static_assert(STAGES >= 2, "one slice computed while the next loads");

    extern __shared__ __align__(128) unsigned char smem_raw[];
    T *sa = reinterpret_cast<T *>(smem_raw); // STAGES slices of BM x BK
    T *sb = sa + STAGES * BM * BK;           // STAGES slices of BN x BK

    int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
    int m0, n0;
    mma_sync::tile_origin<BM, BN>(blockIdx.x, tiles_m, tiles_n, m0, n0);
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    int wm0 = warp / WARPS_N * WM, wn0 = warp % WARPS_N * WN; // the warp's sub-tile in the tile
    int slices = (K + BK - 1) / BK;

    auto load = [&](int slice) {
        int s = slice % STAGES;
        mma_sync::load_slice<BM, BK, THREADS>(sa + s * BM * BK, A, m0, M, slice * BK, K);
        mma_sync::load_slice<BN, BK, THREADS>(sb + s * BN * BK, B, n0, N, slice * BK, K);
    };

    // One commit group per slice, empty past the last, so that "at most STAGES - 2
    // groups pending" always means "slice k has landed" below.
#pragma unroll
    for (int s = 0; s < STAGES - 1; s++) {
        if (s < slices) load(s);
        mma_sync::commit();
    }

    float acc[MI][NI][4] = {};
    for (int k = 0; k < slices; k++) {
        mma_sync::wait<STAGES - 2>(); // this thread's copies of slice k landed
        // Everyone's copies of slice k are visible, and everyone is done with slice
        // k - 1, whose stage the next load reuses.
        __syncthreads();
        if (k + STAGES - 1 < slices) load(k + STAGES - 1);
        mma_sync::commit();
        int s = k % STAGES;
#pragma unroll
        for (int kk = 0; kk < BK / 16; kk++)
            mma_sync::warp_step<T, BK>(acc, sa + s * BM * BK, sb + s * BN * BK, wm0, wn0, kk, lane);
    }

    mma_sync::store_warp(acc, C, m0 + wm0, n0 + wn0, M, N, alpha, beta, lane);
}
