// Hopper GEMM on the tensor cores, for a batch of matrices b:
//
//   C[b] = alpha * op(A[b]) * op(B[b]) + beta * C[b]      (fp32 accumulation)
//
// with op(A) of M x K, op(B) of K x N and C row-major [M, N]. Each operand is
// K-major (A stored [M, K], B stored [N, K]: BLAS's "TN" in column-major terms)
// or MN-major (A stored [K, M], B stored [K, N]): A_MN and B_MN. wgmma reads a
// 16-bit MN-major operand transposed from shared memory itself; an fp8 or tf32
// one (wgmma reads those K-major only) is loaded as stored into a ring of two
// raw buffers, and three spare warps of the producer warpgroup transpose each
// slice into the stage (smem_transpose.cuh), or with PRE the whole grid
// transposes it into a K-major copy first (gemm_pretranspose.cuh).
//
// Types (compile-time defines): GEMM_T, A's element type; GEMM_TB, B's (GEMM_T
// unless set); GEMM_OUT, C's (GEMM_T unless set). The pairs wgmma takes:
//   __nv_bfloat16 x __nv_bfloat16, __half x __half;
//   __nv_fp8_e4m3 / __nv_fp8_e5m2 in any mix (C usually __nv_bfloat16);
//   float x float, read as tf32 (the low 13 bits of the mantissa ignored; C float).
//
// Shape of the kernel:
//   - a persistent grid: block b takes tiles b, b + gridDim.x, ... of BM x BN,
//     matrix by matrix, in an order that walks GROUP rows (RASTER 0) or columns
//     (RASTER 1) of tiles at a time, so the A rows and B columns that
//     neighbouring blocks need are in L2 together;
//   - warp specialisation: warpgroup 0 is the producer, whose one thread issues a
//     TMA load of A's and B's BK-deep slices into a ring of STAGES buffers
//     (128-byte swizzled, as wgmma reads them); warpgroups 1..CONSUMERS each own
//     BM / CONSUMERS rows of the tile and issue wgmma.mma_async from those
//     buffers into registers. The producer gives up registers (setmaxnreg) so the
//     consumers can hold BN/2 accumulators per m64 row block;
//   - per stage, two mbarriers: `full` (the loads landed: TMA's byte count, and
//     with a transposed operand the transposing warps' arrival) and
//     `empty` (every consumer's wgmmas that read it completed), so the producer
//     runs STAGES slices ahead; a transposed operand's raw buffers have a
//     `raw_full` barrier each, and one of the transposing threads loads them,
//     two slices ahead, as the warps finish with each;
//   - a consumer keeps one group of wgmmas in flight: it releases a stage once the
//     next stage's wgmmas were issued and the previous group completed;
//   - PINGPONG 0: the consumers share each tile (BM/CONSUMERS rows each) and
//     store it together; 1: each takes whole tiles in turn, so one stores while
//     another computes;
//   - the epilogue scales the accumulators by alpha in place (where alpha is
//     not 1), adds beta times C (where beta is not 0) and, with STORE 0, stores
//     them straight from registers, two columns at a time; with STORE 1 it
//     writes them to a staging area in shared memory (swizzled as the C map's
//     boxes) one box column at a time, and one thread hands each to TMA stores
//     as it is written, so TMA reads one column while the next is written and
//     the consumer goes on to its next tile while they drain; STORE 2 does so
//     through a staging area half as large (room for another stage), each
//     column waiting for the stores of the one it takes the place of. Either
//     way the producer is already loading the next tile;
//   - PRE 1: an fp8 or tf32 MN-major operand is transposed whole into a
//     K-major copy by the whole grid first (gemm_pretranspose.cuh), and the
//     GEMM reads the copy; PRE 0 transposes its slices in shared memory as
//     they come (above);
//   - CLUSTER 2: blocks run in pairs (a thread block cluster). With PAIR 0 a
//     pair takes two row tiles of one column, and each block loads half of B's
//     slice into both (TMA multicast), so B is read from L2 once per pair; with
//     PAIR 1 it takes two column tiles of one row and shares A the same way
//     (the block of rank r loads A's boxes r, r + 2, ...: with 64-row tiles,
//     rank 0 loads the one box), each loading its own B. A stage is free only
//     when both blocks' consumers are done with it, so they arrive on each
//     other's `empty` barriers. The grid must be launched with cluster
//     dimensions (CLUSTER, 1, 1). Not with an operand transposed in shared
//     memory, nor with split K when PAIR is 1.
//   - small problems, whose tiles would not fill the GPU: tiles of 64 rows (one
//     consumer of one m64 block) and tiles narrower than 64 columns (BN 8, 16
//     or 32: m64nBN wgmmas, a K-major B read one box a slice through a map of
//     BN-row boxes, C stored from registers);
//   - SPLIT > 1 (split K): each tile's K loop is cut into up to SPLIT parts
//     (templates/splitk.h), each a unit of work of the grid. Every warp writes
//     its part's sums to a workspace and counts itself on its slot's counter;
//     the last to arrive sums all parts in part order, so the result is the
//     same bit for bit from run to run, and stores the tile. Cooperative
//     consumers, STORE 0, no transpose in shared memory.
//
// A slice is 128 bytes deep in K (BK = 128 / sizeof(element): 64 16-bit, 128
// fp8, 32 fp32 elements), one swizzle span, read by wgmmas of 32 bytes of K each.
//
// Any M, N and K: TMA reads zeros past A's and B's edges, and the epilogue stores
// only elements inside C. TMA needs rows of 16-byte multiples: the stored row
// length (K for a K-major operand, M or N for an MN-major one) a multiple of
// 16 / sizeof(element) (engine/tensormap.c refuses a map otherwise, naming the
// stride).
//
// Arguments: A, B, C (pointers; A and B are read through their tensormaps),
// the tensormaps of A and B (3-D: the batch outermost; boxes of 1 x 64 x BK for
// a K-major operand, 1 x BK x 64 for an MN-major one, 128B-swizzled, except a
// transposed operand's, which is unswizzled: a stage is BM/64 and BN/64 such
// loads, so the maps do not depend on the tile), C's
// (boxes of 1 x 64 x 128 / sizeof(GEMM_OUT), 128B-swizzled; used only with
// STORE 1 and rows of C a multiple of 16 bytes), M, N, K, the batch, alpha,
// beta; then for PRE (gemm_pretranspose.cuh) the K-major copies of A and B
// (batch x M x K and batch x N x K, rows padded to 16 bytes; stand-ins where
// an operand is not transposed), their maps (as a K-major operand's) and two
// u32 counters that start at zero, for the grid-wide barrier; then for SPLIT
// the workspace (fp32, SPLIT x the tiles' padded area) and a u32 counter a
// slot, zero at the start and left at zero (splitk.h); then B's maps in boxes
// of 1 x 8 x BK, 1 x 16 x BK and 1 x 32 x BK for tiles narrower than 64 (stand-ins
// otherwise).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "gemm_epilogue.cuh"
#include "gemm_pretranspose.cuh"
#include "gemm_types.cuh"
#include "smem_transpose.cuh"
#include "splitk.h"
#include "tile_order.cuh"
#include "tma.cuh"
#include "wgmma_ops.cuh"

namespace wg {

// The wgmma flavour of an operand pair.
template <class A, class B> struct kind;
template <> struct kind<__nv_bfloat16, __nv_bfloat16> {
    using type = wgmma_bf16;
};
template <> struct kind<__half, __half> {
    using type = wgmma_f16;
};
template <> struct kind<__nv_fp8_e4m3, __nv_fp8_e4m3> {
    using type = wgmma_e4m3;
};
template <> struct kind<__nv_fp8_e5m2, __nv_fp8_e5m2> {
    using type = wgmma_e5m2;
};
template <> struct kind<__nv_fp8_e5m2, __nv_fp8_e4m3> {
    using type = wgmma_e5m2_e4m3;
};
template <> struct kind<__nv_fp8_e4m3, __nv_fp8_e5m2> {
    using type = wgmma_e4m3_e5m2;
};
template <> struct kind<float, float> {
    using type = wgmma_tf32;
};

// A box in shared memory is 64 x BK elements in 128-byte swizzled rows: 64 rows
// (of M or N) of BK elements for a K-major operand, BK rows (of K) of 64
// elements for an MN-major one; either way 8-row swizzle atoms of 1024 bytes.
// desc() describes the operand that starts at `box` and runs on through the
// boxes after it, for the wgmma of the slice's first K step:
//   K-major: atoms stack along M or N (stride byte offset 1024), the leading
//     byte offset unused;
//   MN-major: atoms stack along K (stride byte offset 1024) and the next 64
//     columns of M or N are the next box (leading byte offset: a box).
template <class T, int MN_MAJOR, int BK>
__device__ __forceinline__ unsigned long long desc(const T *box)
{
    constexpr unsigned box_bytes = 64 * BK * sizeof(T);
    unsigned long long lbo = MN_MAJOR ? box_bytes : 16;
    return ((tma::smem(box) & 0x3FFFF) >> 4) // start address, 16-byte units
           | ((lbo >> 4) << 16)              // leading byte offset
           | ((1024ull >> 4) << 32)          // stride byte offset: one 8-row atom
           | (1ull << 62);                   // 128-byte swizzle
}

// The descriptor d moved `bytes` on in shared memory. Only the start address
// changes, in the low 14 bits: shared memory's addresses are below 256 KiB, so
// the sum never carries out of them, and one 32-bit add does it.
__device__ __forceinline__ unsigned long long at(unsigned long long d, unsigned bytes)
{
    unsigned low = (unsigned)d + (bytes >> 4), high = (unsigned)(d >> 32);
    return (unsigned long long)high << 32 | low;
}

// Where K step `step` (32 bytes of K) of a slice starts, in bytes from the
// slice's start: 32 bytes into each row of a K-major box, 32 / sizeof(T) rows
// down an MN-major one.
template <class T, int MN_MAJOR> __device__ constexpr unsigned step_bytes(int step)
{
    return MN_MAJOR ? step * (32 / sizeof(T)) * 128 : step * 32;
}

// Loads the box of rows [row0, row0 + 64) of M or N and slice k of matrix b of
// an operand; the map's coordinates run innermost first.
template <int MN_MAJOR, int BK>
__device__ __forceinline__ void load_box(const gb_tensormap *map, void *dst,
                                         unsigned long long *bar, int row0, int k, int b)
{
    if (MN_MAJOR)
        tma::load(map, dst, bar, row0, k * BK, b);
    else
        tma::load(map, dst, bar, k * BK, row0, b);
}

__device__ __forceinline__ void fence()
{
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}

__device__ __forceinline__ void commit()
{
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}

template <int PENDING> __device__ __forceinline__ void wait()
{
    asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(PENDING) : "memory");
}

template <int REGS> __device__ __forceinline__ void grow_registers()
{
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(REGS));
}

template <int REGS> __device__ __forceinline__ void shrink_registers()
{
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(REGS));
}

// Tile t's matrix, first row and column: matrix by matrix, and within one in
// grouped order along M or N (tile_order.cuh).
template <int BM, int BN, int GROUP, int RASTER>
__device__ __forceinline__ void tile_origin(unsigned t, unsigned tiles_m, unsigned tiles_n, int &b,
                                            int &m0, int &n0)
{
    unsigned per_matrix = tiles_m * tiles_n;
    int row, col;
    b = (int)(t / per_matrix);
    rastered_tile<RASTER>(t % per_matrix, tiles_m, tiles_n, GROUP, row, col);
    m0 = row * BM;
    n0 = col * BN;
}

// Stores one consumer's m64 x BN block (rows from row0), its sums already scaled
// by alpha: thread (warp w, lane l) holds, for each 8-column group g, rows w*16 +
// l/4 (+8) and columns g*8 + 2*(l%4) (+1) in d[4g .. 4g+3].
template <class T, int BN>
__device__ __forceinline__ void store(const float (&d)[BN / 2], T *C, int row0, int n0, int M,
                                      int N, float beta)
{
    int w = threadIdx.x % 128 / 32, l = threadIdx.x % 32;
#pragma unroll
    for (int g = 0; g < BN / 8; g++)
#pragma unroll
        for (int h = 0; h < 2; h++)
            gemm::store_pair(C, row0 + w * 16 + l / 4 + 8 * h, n0 + g * 8 + 2 * (l % 4), M, N,
                             d[4 * g + 2 * h], d[4 * g + 2 * h + 1], 1.0f, beta);
}

// Four 8 x 8 matrices of 16-bit elements to shared memory: lane l holds, in
// words[q], row l / 4 and columns 2 (l % 4) and 2 (l % 4) + 1 of matrix q, and
// lanes 8q to 8q + 7 give the addresses of matrix q's eight rows of 16 bytes.
__device__ __forceinline__ void stmatrix4(unsigned addr, const unsigned (&words)[4])
{
    asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(addr),
                 "r"(words[0]), "r"(words[1]), "r"(words[2]), "r"(words[3])
                 : "memory");
}

// The C map's boxes: 64 rows of 128 bytes (CB = 128 / sizeof(T) columns),
// 128B-swizzled, 8 KiB each.
template <class T> constexpr int box_columns = 128 / sizeof(T);
constexpr int box_bytes_c = 64 * 128;

// Writes box column Q (columns Q * CB to Q * CB + CB - 1) of one consumer's
// m64 x BN block (rows from row0 of C, its sums already scaled by alpha) into
// the box at `box`, as the C map stores it: the 16-byte chunk of a row moves by
// the row's number mod 8, so a warp's eight rows land in different banks.
//
// 16-bit C goes out by stmatrix, four 8 x 8 matrices at a time (16 rows of the
// warp by two 8-column groups): a lane's four words are one row and two
// columns of each matrix, as the accumulators lie, and lanes 8q to 8q + 7 give
// the addresses of matrix q's rows. WITH_C: beta is not 0, and C is read.
template <class T, int BN, int Q, bool WITH_C>
__device__ __forceinline__ void stage(const float (&d)[BN / 2], unsigned char *box, const T *C,
                                      int row0, int n0, int M, int N, float beta)
{
    constexpr int CB = box_columns<T>, GROUPS = CB / 8;
    int w = threadIdx.x % 128 / 32, l = threadIdx.x % 32;
    // this lane's two sums of 8-column group g in row l / 4 + 8h of the warp's
    // 16, plus beta times C's (without C, beta is a constant 0, and C's read
    // and its branch compile away)
    auto scaled = [&](int g, int h, float &x0, float &x1) {
        x0 = d[4 * g + 2 * h];
        x1 = d[4 * g + 2 * h + 1];
        gemm::scale_pair(C, row0 + w * 16 + l / 4 + 8 * h, n0 + g * 8 + 2 * (l % 4), M, N, 1.0f,
                         WITH_C ? beta : 0.0f, x0, x1);
    };
    if constexpr (sizeof(T) == 2) {
        int q = l / 8, r = w * 16 + q % 2 * 8 + l % 8; // the row this lane addresses
        unsigned row = tma::smem(box) + r * 128;
#pragma unroll
        for (int g = Q * GROUPS; g < (Q + 1) * GROUPS; g += 2) {
            unsigned words[4];
#pragma unroll
            for (int j = 0; j < 4; j++) { // matrix j: group g + j / 2, rows 8 (j % 2) on
                float x0, x1;
                scaled(g + j / 2, j % 2, x0, x1);
                union {
                    gemm::duo<T> pair;
                    unsigned word;
                } both = {gemm::to_duo<T>(x0, x1)};
                words[j] = both.word;
            }
            int chunk = g + q / 2 - Q * GROUPS; // the row's 16-byte chunk, before the swizzle
            wg::stmatrix4(row + (chunk ^ (r % 8)) * 16, words);
        }
    } else {
#pragma unroll
        for (int g = Q * GROUPS; g < (Q + 1) * GROUPS; g++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                int r = w * 16 + l / 4 + 8 * h, c = g * 8 + 2 * (l % 4);
                float x0, x1;
                scaled(g, h, x0, x1);
                int byte = (c - Q * CB) * (int)sizeof(T);
                unsigned char *p = box + r * 128 + ((byte / 16) ^ (r % 8)) * 16 + byte % 16;
                *reinterpret_cast<gemm::duo<T> *>(p) = gemm::to_duo<T>(x0, x1);
            }
    }
}

// The 128 threads of consumer warpgroup c (named barrier 1 + c).
__device__ __forceinline__ void sync_consumer(int c)
{
    tma::named_barrier<128>(1 + c);
}

// Stores a consumer's rows of C (from row0, MT m64 blocks) one box column at
// a time (from column Q on), through SLOTS box columns of staging at `mine`:
// for column Q, one thread waits until the stores of column Q - SLOTS (of
// this tile or the one before) have read its slot, the consumer writes the
// slot, and the thread hands it to TMA and goes on, so that TMA reads one
// column while the consumer writes the next. WITH_C: beta is not 0.
template <class T, int BN, int MT, int SLOTS, bool WITH_C, int Q = 0>
__device__ __forceinline__ void store_columns(const float (&d)[MT][BN / 2], unsigned char *mine,
                                              const gb_tensormap *mc, const T *C, int row0,
                                              int n0, int b, int M, int N, float beta,
                                              int consumer)
{
    constexpr int CB = box_columns<T>, COLUMNS = BN / CB;
    static_assert(BN % CB == 0 && COLUMNS % SLOTS == 0, "whole box columns of C, in whole slots");
    unsigned char *slot = mine + Q % SLOTS * MT * box_bytes_c;
    bool leader = threadIdx.x % 128 == 0;
    if (leader) tma::store_wait<false, SLOTS - 1>();
    sync_consumer(consumer);
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
        stage<T, BN, Q, WITH_C>(d[mt], slot + mt * box_bytes_c, C, row0 + mt * 64, n0, M, N, beta);
    tma::fence_shared_for_tma();
    sync_consumer(consumer);
    if (leader) {
        for (int mt = 0; mt < MT; mt++)
            tma::store(mc, slot + mt * box_bytes_c, n0 + Q * CB, row0 + mt * 64, b);
        tma::store_commit();
    }
    if constexpr (Q + 1 < COLUMNS)
        store_columns<T, BN, MT, SLOTS, WITH_C, Q + 1>(d, mine, mc, C, row0, n0, b, M, N, beta,
                                                       consumer);
}

// Loads COUNT boxes of 64 rows (of M or N, from row0) and slice k of matrix b
// into dst, completing on bar; with SHARED, the blocks of the cluster share
// them, each loading every CLUSTER-th box into all of them (TMA multicast).
template <int MN_MAJOR, int BK, int COUNT, bool SHARED, int CLUSTER, class T>
__device__ __forceinline__ void load_boxes(const gb_tensormap *map, T *dst,
                                           unsigned long long *bar, int row0, int k, int b,
                                           unsigned rank)
{
#pragma unroll
    for (int r = 0; r < COUNT; r++) {
        int row = row0 + r * 64;
        if (!SHARED)
            load_box<MN_MAJOR, BK>(map, dst + r * 64 * BK, bar, row, k, b);
        else if (r % CLUSTER == (int)rank)
            tma::load_multicast(map, dst + r * 64 * BK, bar, MN_MAJOR ? row : k * BK,
                                MN_MAJOR ? k * BK : row, b, (1u << CLUSTER) - 1);
    }
}

// Loads slice k of tile (b, m0, n0), completing on bar: with LOAD_A, A's BM/64
// boxes into sa; with LOAD_B, B's BN/64 boxes into sb. The operand the CLUSTER
// blocks of a cluster share (B with PAIR 0: they take neighbouring row tiles
// of one column; A with PAIR 1: neighbouring column tiles of one row) is
// loaded by each block every CLUSTER-th box, into all of them. A narrow B (BN
// under 64, K-major) comes in one box of BN rows through mbn.
template <int BM, int BN, int BK, int A_MN, int B_MN, int CLUSTER, int PAIR, bool LOAD_A,
          bool LOAD_B, class TA, class TB>
__device__ __forceinline__ void load_slice(const gb_tensormap *ma, const gb_tensormap *mb,
                                           const gb_tensormap *mbn, TA *sa, TB *sb,
                                           unsigned long long *bar, int k, int b, int m0, int n0,
                                           unsigned rank)
{
    constexpr bool SHARE_A = CLUSTER > 1 && PAIR, SHARE_B = CLUSTER > 1 && !PAIR;
    if (LOAD_A) load_boxes<A_MN, BK, BM / 64, SHARE_A, CLUSTER>(ma, sa, bar, m0, k, b, rank);
    if (LOAD_B && BN < 64) load_box<0, BK>(mbn, sb, bar, n0, k, b);
    if (LOAD_B) load_boxes<B_MN, BK, BN / 64, SHARE_B, CLUSTER>(mb, sb, bar, n0, k, b, rank);
}

// A consumer is done with a stage: one arrival on its `empty` barrier in every
// block of the cluster, since each block's producer writes the shared operand
// into all of them.
template <int CLUSTER> __device__ __forceinline__ void release(unsigned long long *empty)
{
    if (CLUSTER == 1) {
        tma::arrive(empty);
    } else {
#pragma unroll
        for (int r = 0; r < CLUSTER; r++)
            tma::arrive_in(empty, r);
    }
}

// Split K: warp `threadIdx / 32 % 4` of a consumer has summed part `part` of
// `parts` of its tile's K loop into d. It writes them to its place in the
// workspace and counts itself on its slot's counter (splitk.h). Returns false
// for every part but the last to arrive; the last sums all of them, in part
// order, into d (the same bits whoever arrives last), sets the counter back to
// zero and returns true: its warp stores the tile's rows.
template <int BN, int MT, int SPLIT>
__device__ __forceinline__ bool settle(float (&d)[MT][BN / 2], float *partials,
                                       unsigned *arrivals, unsigned long long slot, int part,
                                       int parts)
{
    constexpr int GROUPS = BN / 8, QUADS = MT * GROUPS; // float4s a thread
    int lane = threadIdx.x % 32;
    float4 *all = reinterpret_cast<float4 *>(partials) +
                  splitk_offset(slot, SPLIT, 0, 32 * QUADS * 4) / 4 + lane;
    float4 *mine = all + part * 32 * QUADS;
#pragma unroll
    for (int q = 0; q < QUADS; q++) {
        const float *x = &d[q / GROUPS][4 * (q % GROUPS)];
        __stcg(mine + q * 32, make_float4(x[0], x[1], x[2], x[3]));
    }
    __threadfence(); // the parts are in memory before the count says so
    __syncwarp();
    unsigned arrived = 0;
    if (lane == 0) arrived = atomicAdd(&arrivals[slot], 1u);
    arrived = __shfl_sync(0xffffffffu, arrived, 0);
    if (arrived != (unsigned)parts - 1) return false;
    __threadfence(); // the other warps' parts are read after their count
    if (lane == 0) arrivals[slot] = 0;
#pragma unroll
    for (int q = 0; q < QUADS; q++) {
        float4 sum = __ldcg(all + q * 32);
        for (int p = 1; p < parts; p++) {
            float4 v = __ldcg(all + (p * QUADS + q) * 32);
            sum.x += v.x;
            sum.y += v.y;
            sum.z += v.z;
            sum.w += v.w;
        }
        float *x = &d[q / GROUPS][4 * (q % GROUPS)];
        x[0] = sum.x;
        x[1] = sum.y;
        x[2] = sum.z;
        x[3] = sum.w;
    }
    return true;
}

} // namespace wg

template <int BM, int BN, int BK, int STAGES, int CONSUMERS, int GROUP, int PINGPONG, int A_MN,
          int B_MN, int CLUSTER, int STORE, int RASTER, int PRE = 0, int SPLIT = 1, int PAIR = 0>
__global__ void __launch_bounds__(128 * (CONSUMERS + 1), 1)
    gemm_wgmma(const GEMM_T *A, const GEMM_TB *B, GEMM_OUT *C,
               const __grid_constant__ gb_tensormap ma, const __grid_constant__ gb_tensormap mb,
               const __grid_constant__ gb_tensormap mc, int M, int N, int K, int batch,
               float alpha, float beta, const GEMM_T *A_copy, const GEMM_TB *B_copy,
               const __grid_constant__ gb_tensormap ma_copy,
               const __grid_constant__ gb_tensormap mb_copy, unsigned *sync, float *partials,
               unsigned *arrivals, const __grid_constant__ gb_tensormap mb8,
               const __grid_constant__ gb_tensormap mb16, const __grid_constant__ gb_tensormap mb32)
{
    using TA = GEMM_T;
    using TB = GEMM_TB;
    using TC = GEMM_OUT;
    using Shape = wgmma_shape<typename wg::kind<TA, TB>::type, BN>;
    constexpr int WM = PINGPONG ? BM : BM / CONSUMERS; // rows of a tile per consumer
    constexpr int MT = WM / 64;                        // its m64 row blocks
    constexpr int STEPS = 128 / 32;                    // wgmmas of 32 bytes of K per slice
    // an fp8 or tf32 MN-major operand is transposed: with PRE, whole into its
    // K-major copy before the GEMM (PA, PB), which then reads the copy as a
    // K-major operand; else in shared memory (XA, XB), through RAW buffers of
    // its slices as stored. wgmma reads it K-major either way.
    constexpr int PA = PRE && A_MN && sizeof(TA) != 2, PB = PRE && B_MN && sizeof(TB) != 2;
    constexpr int LA_MN = A_MN && !PA, LB_MN = B_MN && !PB; // as the GEMM loads them
    constexpr int XA = LA_MN && sizeof(TA) != 2, XB = LB_MN && sizeof(TB) != 2;
    constexpr int RAW = 2, XPOSE = XA || XB; // raw slices in flight (2 to 4 measured alike)
    constexpr int RAW_A = XA ? BM * 128 : 0, RAW_B = XB ? BN * 128 : 0; // bytes a raw slice
    constexpr int DIRECT = (XA ? 0 : BM * 128) + (XB ? 0 : BN * 128); // TMA's bytes a stage
    constexpr int KA_MN = LA_MN && !XA, KB_MN = LB_MN && !XB; // as wgmma reads them
    constexpr int XPOSE_BARRIER = 1 + CONSUMERS; // named barriers 1..CONSUMERS: the consumers'
    static_assert(sizeof(TA) == sizeof(TB), "wgmma's operands are of one width");
    static_assert(BK * sizeof(TA) == 128, "a slice is one 128-byte swizzle span deep");
    static_assert(WM % 64 == 0, "each consumer owns whole m64 row blocks");
    static_assert((BN % 64 == 0 && BN <= 256) || BN == 8 || BN == 16 || BN == 32,
                  "B's slice is whole 64-row boxes, or one of 8, 16 or 32 rows; wgmma's N <= 256");
    static_assert(BN >= 64 || (!B_MN && (CLUSTER == 1 || PAIR) && STORE == 0),
                  "a narrow B: K-major, not multicast, C stored from registers");
    static_assert(CLUSTER == 1 || CLUSTER == 2, "clusters of 1 or 2 blocks");
    static_assert(STORE >= 0 && STORE <= 2,
                  "STORE: 0 registers, 1 TMA, 2 TMA through half the slots");
    static_assert(!XPOSE || CLUSTER == 1, "a transposed operand is not multicast");
    static_assert(PAIR == 0 || PAIR == 1, "PAIR: 0 pairs share B, 1 they share A");
    static_assert(SPLIT == 1 || !PAIR, "split K: pairs share B (its workspace's padding)");
    static_assert(SPLIT >= 1, "SPLIT: the parts of a tile's K loop");
    static_assert(SPLIT == 1 || (!PINGPONG && STORE == 0 && !XPOSE),
                  "split K: cooperative consumers, stores from registers, no shared-memory "
                  "transpose");

    extern __shared__ unsigned char smem_raw[];
    // 128-byte swizzled tiles must start on 1024-byte boundaries
    TA *sa = reinterpret_cast<TA *>(((size_t)smem_raw + 1023) & ~(size_t)1023);
    TB *sb = reinterpret_cast<TB *>(sa + STAGES * BM * BK);
    // STORE: each consumer's tile rows of C, staged for TMA stores in slots of
    // one box column (room for 1/STORE of the columns)
    constexpr int STAGED = STORE ? WM * BN / STORE * (int)sizeof(TC) : 0; // bytes per consumer
    unsigned char *raw = reinterpret_cast<unsigned char *>(sb + STAGES * BN * BK);
    unsigned char *staging = raw + RAW * (RAW_A + RAW_B);
    unsigned long long *full =
        reinterpret_cast<unsigned long long *>(staging + CONSUMERS * STAGED);
    unsigned long long *empty = full + STAGES;
    unsigned long long *turn = empty + STAGES; // ping-pong: consumer c may start a tile
    unsigned long long *raw_full = turn + CONSUMERS; // a transposed operand's raw slice landed

    // PRE: the K-major copies first, in the memory the stages take over after
    if constexpr (PA || PB)
        pre::k_major_copies<TA, TB, BK, PA, PB>(&ma, &mb, &ma_copy, &mb_copy, M, N, K, batch, sync,
                                                reinterpret_cast<unsigned char *>(sa));
    const gb_tensormap *map_a = PA ? &ma_copy : &ma, *map_b = PB ? &mb_copy : &mb;
    const gb_tensormap *mbn = BN == 16 ? &mb16 : BN == 32 ? &mb32 : &mb8; // a narrow B's

    int wg_index = threadIdx.x / 128, tid = threadIdx.x % 128;

    // The blocks of a cluster walk the same units of work, a unit being CLUSTER
    // row tiles of one column (PAIR 0) or column tiles of one row (PAIR 1), UM
    // x UN tiles: block `rank` takes the rank-th. The counts stay signed (made
    // unsigned, ptxas kept some in registers across the register hand-over and
    // spilled them); tile_origin() divides them unsigned (NOTES.md, v18).
    constexpr int UM = PAIR ? 1 : CLUSTER, UN = PAIR ? CLUSTER : 1;
    unsigned rank = CLUSTER > 1 ? tma::cluster_rank() : 0;
    int unit0 = blockIdx.x / CLUSTER, units = gridDim.x / CLUSTER;
    int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
    int unit_rows = (tiles_m + UM - 1) / UM, unit_cols = (tiles_n + UN - 1) / UN;
    int tiles = batch * unit_rows * unit_cols, slices = (K + BK - 1) / BK;
    // split K: each tile's K loop in `parts` parts, each a unit of work, a tile's
    // parts one after another
    int parts = SPLIT > 1 ? splitk_parts(slices, SPLIT) : 1, work = tiles * parts;
    // Unit of work u: its matrix, the first row and column of this block's tile
    // of it, and the slices [k0, k1) of its part of the K loop.
    auto unit_origin = [&](int u, int &b, int &m0, int &n0, int &k0, int &k1) {
        wg::tile_origin<BM * UM, BN * UN, GROUP, RASTER>(u / parts, unit_rows, unit_cols, b, m0,
                                                          n0);
        m0 += (UM > 1) * rank * BM;
        n0 += (UN > 1) * rank * BN;
        k0 = 0;
        k1 = slices;
        if (SPLIT > 1) splitk_range(slices, SPLIT, u % parts, &k0, &k1);
    };

    // Warp 1 sets the barriers up while warp 0 finds the loader's first unit of
    // work, so the loader's way from the register hand-over to its first load
    // holds no division (NOTES.md, v18).
    int lb = 0, lm0 = 0, ln0 = 0, lk0 = 0, lk1 = 0; // the loader's unit
    if (threadIdx.x == 32) {
        tma::prefetch(map_a);
        tma::prefetch(BN < 64 ? mbn : map_b);
        for (int s = 0; s < STAGES; s++) {
            tma::init(&full[s], (DIRECT > 0) + XPOSE);
            tma::init(&empty[s], (PINGPONG ? 1 : CONSUMERS) * CLUSTER);
        }
        for (int c = 0; c < CONSUMERS; c++)
            tma::init(&turn[c], 1);
        for (int r = 0; XPOSE && r < RAW; r++)
            tma::init(&raw_full[r], 1);
        tma::fence_init();
    } else if (threadIdx.x == 0 && unit0 < work) {
        unit_origin(unit0, lb, lm0, ln0, lk0, lk1);
    }
    // A block's barriers must be ready before its threads wait on them, and in a
    // cluster before the other block's loads and arrivals reach them. A pair
    // arrives here and waits only after the register hand-over, just before
    // either side can touch the other. With the barrier whole, its arrival a
    // release, a pair's consumers started about 1,100 cycles later than a lone
    // block's; now as early (NOTES.md, v16).
    if (CLUSTER > 1)
        tma::cluster_arrive_relaxed();
    else
        __syncthreads();

    // With a transposed operand the producer warpgroup needs registers for the
    // transposing warps (56 a thread), and the consumers give up 8 for them. The
    // block starts with 168 a thread (the launch bounds'), and a consumer's
    // setmaxnreg.inc waits until the producer's .dec has freed what it takes:
    // 40 + 2 * 232 and 56 + 2 * 224 fit, 64 + 2 * 224 would hang.
    constexpr int PRODUCER_REGS = XPOSE ? 56 : 40, CONSUMER_REGS = XPOSE ? 224 : 232;
    if (wg_index == 0) { // the producer
        wg::shrink_registers<PRODUCER_REGS>();
        if (CLUSTER > 1) tma::cluster_wait();
        if (XPOSE && tid >= 32) { // warps 1-3 transpose, in the producer's order of slices
            const int x = tid - 32;
            // The block's slice j (tile j / slices of its own, slice j % slices)
            // as stored, into raw buffer j % RAW; one thread loads, RAW ahead.
            auto load_raw = [&](int j) {
                int t = unit0 + j / slices * units, b, m0, n0;
                if (t >= work) return;
                wg::tile_origin<BM, BN, GROUP, RASTER>(t, unit_rows, unit_cols, b, m0, n0);
                unsigned long long *bar = &raw_full[j % RAW];
                unsigned char *in = raw + j % RAW * (RAW_A + RAW_B);
                tma::expect_bytes(bar, RAW_A + RAW_B);
                wg::load_slice<BM, BN, BK, LA_MN, LB_MN, CLUSTER, PAIR, XA, XB>(
                    map_a, map_b, mbn, reinterpret_cast<TA *>(in),
                    reinterpret_cast<TB *>(in + RAW_A), bar, j % slices, b, m0, n0, rank);
            };
            for (int j = 0; x == 0 && j < RAW; j++)
                load_raw(j);
            for (int it = 0, t = unit0; t < work; t += units)
                for (int k = 0; k < slices; k++, it++) {
                    int s = it % STAGES, r = it % RAW;
                    tma::wait(&raw_full[r], (it / RAW) & 1);
                    tma::wait(&empty[s], ((it / STAGES) & 1) ^ 1);
                    unsigned char *in = raw + r * (RAW_A + RAW_B);
                    if constexpr (XA)
                        xpose::boxes<TA, BM / 64>(
                            in, reinterpret_cast<unsigned char *>(sa + s * BM * BK), x);
                    if constexpr (XB)
                        xpose::boxes<TB, BN / 64>(
                            in + RAW_A, reinterpret_cast<unsigned char *>(sb + s * BN * BK), x);
                    tma::fence_shared_for_tma(); // wgmma reads the stage through the async proxy
                    // all three warps are done: the stage is ready, the raw buffer free
                    tma::named_barrier<xpose::THREADS>(XPOSE_BARRIER);
                    if (x == 0) {
                        tma::arrive(&full[s]);
                        load_raw(it + RAW);
                    }
                }
            return;
        }
        // One thread loads the operands wgmma reads as loaded, into the stages.
        if (tid != 0 || DIRECT == 0) return;
        int it = 0;
        for (int u = unit0; u < work;) {
            for (int k = lk0; k < lk1; k++, it++) {
                int s = it % STAGES;
                tma::wait(&empty[s], ((it / STAGES) & 1) ^ 1);
                tma::expect_bytes(&full[s], DIRECT);
                wg::load_slice<BM, BN, BK, LA_MN, LB_MN, CLUSTER, PAIR, !XA, !XB>(
                    map_a, map_b, mbn, sa + s * BM * BK, sb + s * BN * BK, &full[s], k, lb, lm0,
                    ln0, rank);
            }
            u += units;
            if (u < work) unit_origin(u, lb, lm0, ln0, lk0, lk1);
        }
        // In a cluster, the other block's consumers still arrive on this block's
        // barriers: it may end only once every stage has been released.
        for (int i = 0; CLUSTER > 1 && i < STAGES; i++, it++)
            tma::wait(&empty[it % STAGES], ((it / STAGES) & 1) ^ 1);
        return;
    }

    wg::grow_registers<CONSUMER_REGS>();
    if (CLUSTER > 1) tma::cluster_wait();
    int consumer = wg_index - 1;
    float d[MT][BN / 2];
    // Cooperative: every consumer takes a share of rows of every tile. Ping-pong:
    // consumers take whole tiles in turn, and since the producer loads tiles in
    // order, one's epilogue runs while the next one's wgmmas keep the tensor
    // cores busy. The turns also keep each consumer's waits on `full` at most one
    // phase ahead of the barrier (a wait two phases ahead would pass at once): a
    // consumer starts a tile's slices only after the one before it has passed
    // all of its own.
    int first = unit0, step = units, it = 0;
    if (PINGPONG) {
        first += consumer * units;
        step *= CONSUMERS;
        it = consumer * slices;
    }
    for (int u = first, n = 0; u < work; u += step, n++) {
        int b, m0, n0, k0, k1;
        unit_origin(u, b, m0, n0, k0, k1);
        if (PINGPONG && (consumer > 0 || n > 0)) tma::wait(&turn[consumer], (n - (consumer == 0)) & 1);
        // stage 0's operands; a slice's, row block's and K step's are moved on
        // from them (made once before the tile loop, they spilled with 256 columns)
        const unsigned long long a0 =
            wg::desc<TA, KA_MN, BK>(sa + (PINGPONG ? 0 : consumer * WM * BK));
        const unsigned long long b0 = wg::desc<TB, KB_MN, BK>(sb);
        for (int k = k0; k < k1; k++, it++) {
            int s = it % STAGES;
            tma::wait(&full[s], (it / STAGES) & 1);
            unsigned long long a = wg::at(a0, s * BM * BK * sizeof(TA));
            unsigned long long bs = wg::at(b0, s * BN * BK * sizeof(TB));
            wg::fence();
#pragma unroll
            for (int kk = 0; kk < STEPS; kk++)
#pragma unroll
                for (int mt = 0; mt < MT; mt++)
                    mma<KA_MN, KB_MN>(
                        Shape{}, d[mt],
                        wg::at(a, mt * 64 * BK * sizeof(TA) + wg::step_bytes<TA, KA_MN>(kk)),
                        wg::at(bs, wg::step_bytes<TB, KB_MN>(kk)), k > k0 || kk > 0);
            wg::commit();
            wg::wait<1>(); // the previous slice's group is done: its stage is free
            if (k > k0 && tid == 0) wg::release<CLUSTER>(&empty[(it - 1) % STAGES]);
        }
        if (PINGPONG && tid == 0) tma::arrive(&turn[(consumer + 1) % CONSUMERS]);
        wg::wait<0>();
        if (tid == 0) wg::release<CLUSTER>(&empty[(it - 1) % STAGES]);
        if (PINGPONG) it += (CONSUMERS - 1) * slices; // the other consumers' tiles
        int row0 = m0 + (PINGPONG ? 0 : consumer * WM);
        if constexpr (SPLIT > 1) {
            unsigned long long slot =
                splitk_slot(u / parts, CLUSTER, rank, CONSUMERS, consumer, tid / 32);
            if (parts > 1 && !wg::settle<BN, MT, SPLIT>(d, partials, arrivals, slot, u % parts,
                                                        parts))
                continue; // the last part to arrive stores these rows
        }
        // alpha once, in place, and only where it is not 1 (GEMM's usual case,
        // where the epilogues below then multiply nothing)
        if (alpha != 1.0f)
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
#pragma unroll
                for (int i = 0; i < BN / 2; i++)
                    d[mt][i] *= alpha;
        TC *c = C + (size_t)b * M * N;
        // TMA stores rows of 16-byte multiples; other widths take the direct path
        // (the script then passes a stand-in map)
        if (STORE && N * sizeof(TC) % 16 == 0) {
            if constexpr (STORE > 0) {
                constexpr int SLOTS = BN / wg::box_columns<TC> / STORE;
                unsigned char *mine = staging + consumer * STAGED;
                if (beta == 0.0f) // C is not read: no branch a pair of columns
                    wg::store_columns<TC, BN, MT, SLOTS, false>(d, mine, &mc, c, row0, n0, b, M,
                                                                N, beta, consumer);
                else
                    wg::store_columns<TC, BN, MT, SLOTS, true>(d, mine, &mc, c, row0, n0, b, M,
                                                               N, beta, consumer);
            }
        } else {
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
                wg::store<TC, BN>(d[mt], c, row0 + mt * 64, n0, M, N, beta);
        }
    }
    // The staging must outlive the stores' reads of it; the grid's end waits for
    // their writes (NOTES.md, v18).
    if (STORE && tid == 0) tma::store_wait<false>();
}
