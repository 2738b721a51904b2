// gemm_wgmma.cuh's PRE = 1: an fp8 or tf32 MN-major operand (which wgmma reads
// K-major only) is transposed whole, once, into a K-major copy before the GEMM
// starts, instead of slice by slice in shared memory while it runs. Every block
// of the persistent grid takes part, then all meet at a grid-wide barrier, and
// the GEMM reads the copy with TMA as it reads a K-major operand.
//
// The copy is made box by box, all of it through TMA: a box is 64 elements of M
// (or N) by BK elements of K (8 KiB). It is loaded as stored, unswizzled, with
// the operand's own map (the one the in-shared-memory path loads its raw slices
// with), turned K-major and 128B-swizzled by smem_transpose.cuh's xpose::boxes,
// and stored with the copy's map (dims batch x M x K, boxes of 64 rows of BK,
// 128B-swizzled), the same map the GEMM then loads from: TMA reads zeros past
// the operand's edges and leaves out what falls outside the copy.
//
// The block's threads work in teams of xpose::THREADS (96; 4 teams in a block of
// 384, 2 in one of 256). A team takes every (blocks x teams)-th box and keeps two
// in flight: one thread loads the box after next into one of two raw buffers
// while the team transposes the current one into one of two out buffers, and
// stores it. A team's 32 KiB and its two mbarriers sit in the block's dynamic
// shared memory (from its 1024-byte aligned start: teams x (32 KiB + 16 bytes),
// which examples/gemm_tc.lua allows for), which the GEMM's stages take over
// after the barrier.
//
// The grid-wide barrier needs every block resident at once: the GEMM's grid is
// at most one block an SM, and a block of this kernel fits an SM.
#pragma once

#include "smem_transpose.cuh"
#include "tma.cuh"

namespace pre {

constexpr int BOX_BYTES = xpose::BOX_BYTES;
constexpr int TEAM_BYTES = 4 * BOX_BYTES; // two raw and two out buffers

// The team's threads meet at their own named barrier (1 + team).
__device__ __forceinline__ void team_sync(int team)
{
    tma::named_barrier<xpose::THREADS>(1 + team);
}

// Orders this thread's global memory operations through TMA (the async proxy)
// with its ordinary ones: after the copy's stores completed, before the barrier;
// after the barrier, before the GEMM's loads.
__device__ __forceinline__ void fence_global_async()
{
    asm volatile("fence.proxy.async.global;" ::: "memory");
}

__device__ __forceinline__ unsigned load_acquire(const unsigned *p)
{
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

// Every block of the grid meets here. sync: two counters (arrived, left) that
// start at zero; the last block to leave sets both back to zero for the next
// launch (a block leaves only once it has seen every arrival, so none is still
// waiting then).
__device__ __forceinline__ void grid_meet(unsigned *sync)
{
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        atomicAdd(sync, 1u);
        while (load_acquire(sync) < gridDim.x)
            __nanosleep(64);
        if (atomicAdd(sync + 1, 1u) == gridDim.x - 1) {
            atomicExch(sync, 0u);
            atomicExch(sync + 1, 0u);
        }
    }
    __syncthreads();
}

// Box i of an operand of `rows` (M or N) x K, `batch` matrices: its batch, first
// row (of M or N) and slice of K, boxes of one matrix slice by slice along K.
struct Box {
    int b, row0, k;
};

__device__ __forceinline__ Box box_at(int i, int rows, int slices)
{
    const int per_matrix = (rows + 63) / 64 * slices;
    const int in = i % per_matrix;
    return {i / per_matrix, in / slices * 64, in % slices};
}

// Writes the K-major copies: of A (rows M, when DO_A) and of B (rows N, when
// DO_B), box by box. raw_a and raw_b: the operands' own maps (MN-major,
// unswizzled boxes of BK x 64); copy_a and copy_b: the copies' (K-major,
// 128B-swizzled boxes of 64 x BK). Ends with every block past grid_meet.
template <class TA, class TB, int BK, bool DO_A, bool DO_B>
__device__ __forceinline__ void k_major_copies(const gb_tensormap *raw_a, const gb_tensormap *raw_b,
                                               const gb_tensormap *copy_a,
                                               const gb_tensormap *copy_b, int M, int N, int K,
                                               int batch, unsigned *sync, unsigned char *smem)
{
    const int teams = blockDim.x / xpose::THREADS, team = threadIdx.x / xpose::THREADS;
    const int x = threadIdx.x % xpose::THREADS;
    const int slices = (K + BK - 1) / BK;
    const int boxes_a = DO_A ? batch * ((M + 63) / 64) * slices : 0;
    const int boxes_b = DO_B ? batch * ((N + 63) / 64) * slices : 0;
    unsigned char *mine = smem + team * TEAM_BYTES;
    unsigned long long *bar =
        reinterpret_cast<unsigned long long *>(smem + teams * TEAM_BYTES) + 2 * team;

    if (team < teams) {
        if (x == 0) {
            tma::init(&bar[0], 1);
            tma::init(&bar[1], 1);
            tma::fence_init();
        }
        team_sync(team);
        const int first = blockIdx.x * teams + team, step = gridDim.x * teams;
        const bool leader = x == 0;
        // The team's n-th box is box first + n * step of A's, then B's.
        auto load = [&](int n) {
            const int i = first + n * step;
            if (i >= boxes_a + boxes_b) return;
            unsigned long long *b = &bar[n % 2];
            unsigned char *dst = mine + n % 2 * BOX_BYTES;
            tma::expect_bytes(b, BOX_BYTES);
            const bool is_a = i < boxes_a;
            const Box at = box_at(is_a ? i : i - boxes_a, is_a ? M : N, slices);
            tma::load(is_a ? raw_a : raw_b, dst, b, at.row0, at.k * BK, at.b);
        };
        if (leader) {
            load(0);
            load(1);
        }
        for (int n = 0; first + n * step < boxes_a + boxes_b; n++) {
            const int i = first + n * step;
            const bool is_a = i < boxes_a;
            unsigned char *raw = mine + n % 2 * BOX_BYTES;
            unsigned char *out = mine + (2 + n % 2) * BOX_BYTES;
            if (leader) tma::store_wait<false, 1>(); // the store from `out` two boxes ago read it
            tma::wait(&bar[n % 2], (n / 2) & 1);
            team_sync(team);
            if (is_a)
                xpose::boxes<TA, 1>(raw, out, x);
            else
                xpose::boxes<TB, 1>(raw, out, x);
            tma::fence_shared_for_tma();
            team_sync(team); // `out` is written and `raw` read by every thread
            if (leader) {
                const Box at = box_at(is_a ? i : i - boxes_a, is_a ? M : N, slices);
                tma::store(is_a ? copy_a : copy_b, out, at.k * BK, at.row0, at.b);
                tma::store_commit();
                load(n + 2);
            }
        }
        if (leader) {
            tma::store_wait<true>(); // the copy is in global memory
            fence_global_async();
            tma::inval(&bar[0]); // the GEMM's stages take the memory over
            tma::inval(&bar[1]);
        }
    }
    grid_meet(sync);
    fence_global_async(); // the GEMM's TMA loads come after the other blocks' stores
}

} // namespace pre
