// TMA loads and stores, mbarriers, named barriers and thread block clusters for
// sm_90 kernels, as inline PTX (NVRTC-friendly, no CUDA headers).
//
// A script passes a tensor's descriptor with gb.tensormap{ tensor = i, box = ... };
// the kernel takes it by value:
//
//   __global__ void k(const __grid_constant__ gb_tensormap a, ...)
//
// and loads a box of a 2-D map with tma::load(&a, dst, bar, x, y) (of a 3-D one,
// tma::load(&a, dst, bar, x, y, z)), where the coordinates run innermost first
// (TMA's order; a script's box and dims run outermost first).
// The load completes on an mbarrier: the waiting side arms it with the bytes it
// expects (tma::expect_bytes) and waits on its phase (tma::wait).
#pragma once

// The engine's CUtensorMap: 128 opaque bytes, passed by value.
struct alignas(64) gb_tensormap {
    unsigned long long opaque[16];
};

namespace tma {

__device__ __forceinline__ unsigned smem(const void *p)
{
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ unsigned long long generic(const gb_tensormap *map)
{
    return reinterpret_cast<unsigned long long>(map);
}

// Brings the descriptor into the constant cache before its first load.
__device__ __forceinline__ void prefetch(const gb_tensormap *map)
{
    asm volatile("prefetch.tensormap [%0];" ::"l"(generic(map)) : "memory");
}

// ---- mbarriers (64-bit words in shared memory) --------------------------------

__device__ __forceinline__ void init(unsigned long long *bar, unsigned arrivals)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem(bar)), "r"(arrivals));
}

// The barrier's memory is given back, to be used for something else.
__device__ __forceinline__ void inval(unsigned long long *bar)
{
    asm volatile("mbarrier.inval.shared::cta.b64 [%0];" ::"r"(smem(bar)) : "memory");
}

// Makes the barriers' initialisation visible to TMA and to the cluster.
__device__ __forceinline__ void fence_init()
{
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

// One arrival that also says how many bytes of loads will complete on bar.
__device__ __forceinline__ void expect_bytes(unsigned long long *bar, unsigned bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem(bar)),
                 "r"(bytes)
                 : "memory");
}

__device__ __forceinline__ void arrive(unsigned long long *bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem(bar)) : "memory");
}

// Waits until the barrier's phase `parity` (0 or 1) has completed.
__device__ __forceinline__ void wait(unsigned long long *bar, unsigned parity)
{
    asm volatile("{\n .reg .pred done;\n"
                 "WAIT_%=:\n"
                 " mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
                 " @!done bra WAIT_%=;\n}" ::"r"(smem(bar)),
                 "r"(parity)
                 : "memory");
}

// ---- loads --------------------------------------------------------------------

// The box at coordinates c (innermost first) into dst, completing on bar.
__device__ __forceinline__ void load(const gb_tensormap *map, void *dst, unsigned long long *bar,
                                     int c0, int c1)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%3, %4}], [%2];" ::"r"(smem(dst)),
                 "l"(generic(map)), "r"(smem(bar)), "r"(c0), "r"(c1)
                 : "memory");
}

// The same for a 3-D map (a batch of matrices: c2 picks the matrix).
__device__ __forceinline__ void load(const gb_tensormap *map, void *dst, unsigned long long *bar,
                                     int c0, int c1, int c2)
{
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%3, %4, %5}], [%2];" ::"r"(smem(dst)),
                 "l"(generic(map)), "r"(smem(bar)), "r"(c0), "r"(c1), "r"(c2)
                 : "memory");
}

// The same box into shared memory at dst's offset in each block of the cluster
// whose bit is set in `blocks`, completing on the barrier at bar's offset in each.
__device__ __forceinline__ void load_multicast(const gb_tensormap *map, void *dst,
                                               unsigned long long *bar, int c0, int c1, int c2,
                                               unsigned short blocks)
{
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 ".multicast::cluster [%0], [%1, {%3, %4, %5}], [%2], %6;" ::"r"(smem(dst)),
                 "l"(generic(map)), "r"(smem(bar)), "r"(c0), "r"(c1), "r"(c2), "h"(blocks)
                 : "memory");
}

// ---- stores -------------------------------------------------------------------

// Makes this thread's shared-memory writes visible to TMA (the async proxy):
// before the barrier after which one thread stores them.
__device__ __forceinline__ void fence_shared_for_tma()
{
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// Stores the box at src (laid out as the map says) to coordinates c of a 3-D
// map; TMA leaves out what falls outside the tensor. Stores issued by a thread
// form a group at store_commit().
__device__ __forceinline__ void store(const gb_tensormap *map, const void *src, int c0, int c1,
                                      int c2)
{
    asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];" ::
                     "l"(generic(map)),
                 "r"(smem(src)), "r"(c0), "r"(c1), "r"(c2)
                 : "memory");
}

__device__ __forceinline__ void store_commit()
{
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}

// Waits until this thread's store groups, all but the PENDING newest, have read
// their shared memory (it may be written again); with WHOLE, until they have
// completed.
template <bool WHOLE = false, int PENDING = 0> __device__ __forceinline__ void store_wait()
{
    if (WHOLE)
        asm volatile("cp.async.bulk.wait_group %0;" ::"n"(PENDING) : "memory");
    else
        asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(PENDING) : "memory");
}

// ---- named barriers -------------------------------------------------------------

// COUNT threads of the block meet at named barrier `id` (0 is __syncthreads').
template <int COUNT> __device__ __forceinline__ void named_barrier(int id)
{
    asm volatile("bar.sync %0, %1;" ::"r"(id), "n"(COUNT) : "memory");
}

// ---- clusters -----------------------------------------------------------------

// This block's rank in its cluster.
__device__ __forceinline__ unsigned cluster_rank()
{
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}

// One arrival on the barrier at bar's offset in block `rank` of the cluster.
// Its release is the block's (.cta, PTX's default), not the cluster's: what it
// orders is this block's own reads of its shared memory (wgmma's, complete
// before the arrival), so no cluster-wide fence is needed.
__device__ __forceinline__ void arrive_in(unsigned long long *bar, unsigned rank)
{
    asm volatile("{\n .reg .b32 remote;\n"
                 " mapa.shared::cluster.u32 remote, %0, %1;\n"
                 " mbarrier.arrive.shared::cluster.b64 _, [remote];\n}" ::"r"(smem(bar)),
                 "r"(rank)
                 : "memory");
}

__device__ __forceinline__ unsigned cluster_blocks()
{
    unsigned n;
    asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(n));
    return n;
}

// Every thread of every block of the cluster meets the others; what each
// wrote before is seen by all after.
__device__ __forceinline__ void cluster_sync()
{
    asm volatile("barrier.cluster.arrive.release.aligned;\n"
                 "barrier.cluster.wait.acquire.aligned;" ::
                     : "memory");
}

// cluster_sync in two halves that may stand apart: the arrival, relaxed (it
// orders none of the thread's memory operations: where what the other blocks
// must see is the barriers' initialisation, fence_init has published it), and
// the wait. The arrival that releases waits for the block's memory operations
// in flight, which cost a pair of GEMM blocks 1,400 cycles at its start.
__device__ __forceinline__ void cluster_arrive_relaxed()
{
    asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
}

__device__ __forceinline__ void cluster_wait()
{
    asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

} // namespace tma
