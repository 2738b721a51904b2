// Shared pieces of the norms suite (layernorm.cuh, rmsnorm.cuh): the element type and
// its 16-byte vectors, where each thread's part of a row lies, and the reductions over
// a row (warp shuffles, shared memory across warps, distributed shared memory across a
// cluster). The workers (the backward kernels, the persistent forward variant) and the
// backward column sums are in norms_workers.cuh.
//
// Layout. A row of N elements is cut into 16-byte vectors (VEC elements). A row is
// handled by blockDim.x threads (TPR, "threads per row") in each of the CL blocks of a
// cluster; blockDim.y rows (GPB) share a block (sub-warp rows below 32 threads;
// independent rows of the backward kernels' blocks above). Thread t of cluster rank r holds, in
// registers, VPT vectors per chunk: vector
// ((k*VPT + s)*CL + r)*TPR + t for slot s of chunk k. Consecutive threads read
// consecutive vectors (coalesced); a row that fits (one chunk) is read from memory once
// and kept in registers between the statistics and the output. A row larger than
// CL*TPR*VPT vectors is read again per pass (chunks), correct but slower: the tuner
// skips such configurations by timing them.
//
// Compile-time: NORMS_T (float, __half or __nv_bfloat16), NORMS_MAXT (the largest
// block the launch may use, for __launch_bounds__), NORMS_CL (the cluster size, CL
// below), VPT (the kernels' template argument), and the layout of the shape: NORMS_TPR
// (threads per row, blockDim.x), NORMS_FITS (1: a row fits in registers, one chunk)
// and NORMS_ALIGNED (1: N*sizeof(T) is a multiple of 16, the vector path). The kernels
// are issue-bound where these are run-time values: the constants take the loops over
// chunks and warps and the element-wise path out of the compiled code. Run-time: M, N
// and GPB (blockDim.y), so one cubin serves every row width of the same layout.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "l2_prefetch.cuh"

#ifndef NORMS_T
#error "norms: compile with -DNORMS_T=float, __half or __nv_bfloat16 (defines in the Lua module)"
#endif
#ifndef NORMS_MAXT
#error "norms: compile with -DNORMS_MAXT=<largest block> (defines in the Lua module)"
#endif
#ifndef NORMS_CL
#error                                                                                             \
    "norms: compile with -DNORMS_CL=<blocks per cluster: 1, 2, 4 or 8> (defines in the Lua module)"
#endif
#if !defined(NORMS_TPR) || !defined(NORMS_FITS) || !defined(NORMS_ALIGNED)
#error "norms: compile with -DNORMS_TPR, -DNORMS_FITS and -DNORMS_ALIGNED (defines in the Lua module)"
#endif

// NORMS_MINB: blocks per SM the register allocation must leave room for (1 by default).
#ifndef NORMS_MINB
#define NORMS_MINB 1
#endif

// NORMS_PERSIST: 1 makes the forward kernels workers over a queue (norms_workers.cuh),
// 0 (the default) one row per block or cluster.
#ifndef NORMS_PERSIST
#define NORMS_PERSIST 0
#endif

// NORMS_AHEAD: rows asked of L2 before they are loaded (0: none). A block of its own
// row group asks for the group NORMS_AHEAD groups on (about the grid's resident
// blocks, so the group a block starts a wave later); a worker asks for its next unit
// while the current one reduces. The loads then wait on L2, not on DRAM.
#ifndef NORMS_AHEAD
#define NORMS_AHEAD 0
#endif

typedef NORMS_T norms_t;

namespace norms
{

// ---- the element type ------------------------------------------------------------

template <class E> struct Elem;

template <> struct Elem<float> {
    static constexpr int VEC = 4;
    static constexpr bool BF16 = false;
    typedef unsigned Raw;
    static __device__ __forceinline__ Raw bits(float f)
    {
        return __float_as_uint(f);
    }
    static __device__ __forceinline__ float value(Raw r)
    {
        return __uint_as_float(r);
    }
};

template <> struct Elem<__half> {
    static constexpr int VEC = 8;
    static constexpr bool BF16 = false;
    typedef unsigned short Raw;
    static __device__ __forceinline__ Raw bits(float f)
    {
        return __half_as_ushort(__float2half_rn(f));
    }
    static __device__ __forceinline__ float value(Raw r)
    {
        return __half2float(__ushort_as_half(r));
    }
};

template <> struct Elem<__nv_bfloat16> {
    static constexpr int VEC = 8;
    static constexpr bool BF16 = true;
    typedef unsigned short Raw;
    static __device__ __forceinline__ Raw bits(float f)
    {
        return __bfloat16_as_ushort(__float2bfloat16_rn(f));
    }
    static __device__ __forceinline__ float value(Raw r)
    {
        return __uint_as_float((unsigned)r << 16);
    }
};

typedef Elem<norms_t> E;
constexpr int VEC = E::VEC;
typedef E::Raw Raw;

// Word i of a 16-byte vector (i is a constant after unrolling, so this is a register).
__device__ __forceinline__ unsigned &word(uint4 &v, int i)
{
    return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}

__device__ __forceinline__ unsigned word(const uint4 &v, int i)
{
    return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}

// Element k of a 16-byte vector: its raw bits, its value, and setting it.
__device__ __forceinline__ Raw raw(const uint4 &v, int k)
{
    if constexpr (VEC == 4)
        return (Raw)word(v, k);
    else
        return (Raw)(word(v, k >> 1) >> (16 * (k & 1)));
}

__device__ __forceinline__ float get(const uint4 &v, int k)
{
    return E::value(raw(v, k));
}

// The same value as get(), by other instructions (bf16: a byte permute instead of a
// shift or a mask). The compiler merges equal conversions of a register even across
// a barrier, and would then keep a row's fp32 copies from one pass to the next: a pass
// that converts apart() shares nothing with one that converts by get().
__device__ __forceinline__ float get_apart(const uint4 &v, int k)
{
    if constexpr (E::BF16)
        return __uint_as_float(__byte_perm(word(v, k >> 1), 0u, (k & 1) ? 0x3244 : 0x1044));
    else
        return get(v, k);
}

__device__ __forceinline__ void put(uint4 &v, int k, Raw r)
{
    if constexpr (VEC == 4) {
        word(v, k) = r;
    } else {
        const int sh = 16 * (k & 1);
        unsigned &w = word(v, k >> 1);
        w = (w & ~(0xffffu << sh)) | ((unsigned)r << sh);
    }
}

// The VEC values of a vector as one 16-byte vector of elements (round to nearest).
__device__ __forceinline__ uint4 pack(const float (&f)[VEC])
{
    uint4 v;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        if constexpr (VEC == 4)
            word(v, j) = E::bits(f[j]);
        else
            word(v, j) = (unsigned)E::bits(f[2 * j]) | ((unsigned)E::bits(f[2 * j + 1]) << 16);
    }
    return v;
}

// x and dy are read once: no L1 allocation, so w and b stay in L1 for other rows.
__device__ __forceinline__ uint4 ld_stream(const norms_t *p)
{
    uint4 r;
    asm("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
        : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
        : "l"(p));
    return r;
}

// w and b are read by every row: cached.
__device__ __forceinline__ uint4 ld_cached(const norms_t *p)
{
    return __ldg(reinterpret_cast<const uint4 *>(p));
}

__device__ __forceinline__ Raw ld_elem(const norms_t *p)
{
    return __ldg(reinterpret_cast<const Raw *>(p));
}

__device__ __forceinline__ void st_elem(norms_t *p, Raw r)
{
    *reinterpret_cast<Raw *>(p) = r;
}

// Asks L2 for rows [row, row + n) of the M x N tensors a and b (b may be null; rows
// past M left out); only 16-byte aligned rows (l2_prefetch.cuh).
__device__ __forceinline__ void prefetch_rows(const norms_t *a, const norms_t *b, int row, int n,
                                              int M, int N)
{
    if (!NORMS_ALIGNED || row >= M) return;
    const size_t off = (size_t)row * (size_t)N;
    const unsigned long long bytes = (unsigned long long)min(n, M - row) * N * sizeof(norms_t);
    l2_prefetch(a + off, bytes);
    if (b) l2_prefetch(b + off, bytes);
}

// Rows of a block share it only below 32 threads per row (at most 128 rows).
constexpr int MAX_GPB = 128;

// ---- where this thread's part of the row lies --------------------------------------

struct Geo {
    int tpr;      // threads per row in a block (NORMS_TPR, blockDim.x)
    int gpb;      // rows per block (blockDim.y)
    int t, g;     // threadIdx.x, threadIdx.y
    int rank;     // this block's rank in its cluster
    int N;        // elements per row
    int nchunks;  // passes of CL*TPR*VPT vectors over a row (1: the row stays in registers)
    bool aligned; // N*sizeof(T) is a multiple of 16: every row starts 16-byte aligned
};

// A block shape the kernels can use: TPR (NORMS_TPR) a power of two up to 32 with whole
// warps per block (at most MAX_GPB rows), or a multiple of 32 with at most wide_rows
// rows (each with its own named barrier). Anything else is refused: the kernel writes
// nothing, so the check fails instead of reading out of bounds.
__device__ __forceinline__ bool block_ok(int wide_rows)
{
    const int tpr = blockDim.x, gpb = blockDim.y;
    if (tpr != NORMS_TPR || blockDim.z != 1 || tpr * gpb > NORMS_MAXT) return false;
    if (tpr <= 32) return (tpr & (tpr - 1)) == 0 && (tpr * gpb) % 32 == 0 && gpb <= MAX_GPB;
    return tpr % 32 == 0 && gpb <= wide_rows;
}

// Whether a row of N elements is one this variant was compiled for: one that fits in
// registers (NORMS_FITS) and whose rows start 16-byte aligned (NORMS_ALIGNED). Refused
// like a wrong block.
template <int VPT, int CL> __device__ __forceinline__ bool row_ok(int N)
{
    const int nvec = (N + VEC - 1) / VEC;
    return (!NORMS_FITS || nvec <= CL * VPT * NORMS_TPR) && (!NORMS_ALIGNED || N % VEC == 0);
}

// The layout is constant where the variant was compiled for it, so the compiler drops
// the loops over chunks and over warps' partial sums, and the element-wise path.
template <int VPT, int CL> __device__ __forceinline__ Geo geometry(int N)
{
    Geo G;
    G.tpr = NORMS_TPR;
    G.gpb = blockDim.y;
    G.t = threadIdx.x;
    G.g = threadIdx.y;
    G.rank = CL > 1 ? (int)(blockIdx.x % CL) : 0;
    G.N = N;
    const int nvec = (N + VEC - 1) / VEC;
    const int per_chunk = CL * VPT * NORMS_TPR;
    G.nchunks = NORMS_FITS ? 1 : (nvec + per_chunk - 1) / per_chunk;
    G.aligned = NORMS_ALIGNED != 0;
    return G;
}

// First element of slot s in chunk k (an element index within the row).
template <int VPT, int CL> __device__ __forceinline__ int elem0(const Geo &G, int k, int s)
{
    return (((k * VPT + s) * CL + G.rank) * G.tpr + G.t) * VEC;
}

// Valid elements of a slot: VEC, 0, or fewer at the row's end (never on aligned rows,
// where N and e0 are multiples of VEC: one comparison).
__device__ __forceinline__ int nvalid(const Geo &G, int e0, bool row_ok)
{
    const int n = G.N - e0;
    if (G.aligned) return row_ok && n > 0 ? VEC : 0;
    return !row_ok || n <= 0 ? 0 : n < VEC ? n : VEC;
}

// Loads slot s of chunk k of a row (zeros where the row has no element).
template <int VPT, int CL>
__device__ __forceinline__ uint4 load_slot(const norms_t *row, const Geo &G, int k, int s,
                                           bool row_ok)
{
    const int e0 = elem0<VPT, CL>(G, k, s), n = nvalid(G, e0, row_ok);
    uint4 v = make_uint4(0, 0, 0, 0);
    if (G.aligned) {
        if (n > 0) v = ld_stream(row + e0);
    } else {
#pragma unroll
        for (int i = 0; i < VEC; ++i)
            if (i < n) put(v, i, ld_elem(row + e0 + i));
    }
    return v;
}

template <int VPT, int CL>
__device__ __forceinline__ void load_row(uint4 (&v)[VPT], const norms_t *row, const Geo &G, int k,
                                         bool row_ok)
{
#pragma unroll
    for (int s = 0; s < VPT; ++s)
        v[s] = load_slot<VPT, CL>(row, G, k, s, row_ok);
}

// Makes the compiler forget what it derived from a row's registers, so that after a
// reduction it converts the packed elements again instead of keeping the fp32 copies
// it made before (twice the registers for 16-bit types) alive across the barrier.
template <int VPT> __device__ __forceinline__ void launder(uint4 (&v)[VPT])
{
#pragma unroll
    for (int s = 0; s < VPT; ++s)
        asm volatile("" : "+r"(v[s].x), "+r"(v[s].y), "+r"(v[s].z), "+r"(v[s].w));
}

// The same for a pointer: loads through it after a reduction are not merged with the
// ones before (w would otherwise stay in registers across the barrier).
template <class P> __device__ __forceinline__ P *launder_ptr(P *p)
{
    asm volatile("" : "+l"(p));
    return p;
}

// w or b at the elements of a slot (n valid ones).
__device__ __forceinline__ uint4 load_param(const norms_t *p, const Geo &G, int e0, int n)
{
    uint4 v = make_uint4(0, 0, 0, 0);
    if (G.aligned) {
        if (n > 0) v = ld_cached(p + e0);
    } else {
#pragma unroll
        for (int i = 0; i < VEC; ++i)
            if (i < n) put(v, i, ld_elem(p + e0 + i));
    }
    return v;
}

// Stores the n valid elements of a slot.
__device__ __forceinline__ void store_slot(norms_t *row, const Geo &G, int e0, int n,
                                           const uint4 &v)
{
    if (G.aligned) {
        if (n > 0) *reinterpret_cast<uint4 *>(row + e0) = v;
    } else {
#pragma unroll
        for (int i = 0; i < VEC; ++i)
            if (i < n) st_elem(row + e0 + i, raw(v, i));
    }
}

// ---- reductions --------------------------------------------------------------------

// The barrier of one row's warps: named barrier 1 + g over TPR threads (0 is
// __syncthreads), so rows that share a block never wait for each other.
__device__ __forceinline__ void group_barrier(const Geo &G)
{
    asm volatile("bar.sync %0, %1;" ::"r"(1 + G.g), "r"(G.tpr) : "memory");
}

// Sums v over groups of `width` lanes (a power of two up to 32): every lane gets the
// same bits (each step adds the same two values).
template <int NV> __device__ __forceinline__ void lane_sum(float (&v)[NV], int width)
{
    for (int off = width >> 1; off > 0; off >>= 1)
#pragma unroll
        for (int i = 0; i < NV; ++i)
            v[i] += __shfl_xor_sync(0xffffffffu, v[i], off);
}

// Sums NV values over the TPR threads of a row in this block: shuffles within each warp,
// then the warps' sums from shared memory, one a lane, by shuffles again (as many steps
// as the log2 of the warps, not a load and an add a warp). Every thread gets the
// totals, added in the same order, so all agree bit for bit. buf: NV*32 floats of
// shared memory per row of the block (row g uses buf + g*NV*32), not written again
// until the row's warps have met at another barrier (callers alternate two buffers
// in loops). WIDE: rows of more than 32 threads may share the block, each meeting at
// its own named barrier; else such a row has the block to itself (__syncthreads).
template <int NV, bool WIDE>
__device__ __forceinline__ void group_sum(float (&v)[NV], const Geo &G, float *buf)
{
    lane_sum<NV>(v, G.tpr < 32 ? G.tpr : 32);
    if (G.tpr <= 32) return;
    float *mine = buf + G.g * NV * 32;
    const int warp = G.t >> 5, nw = G.tpr >> 5;
    if ((G.t & 31) == 0)
#pragma unroll
        for (int i = 0; i < NV; ++i)
            mine[i * 32 + warp] = v[i];
    if constexpr (WIDE)
        group_barrier(G);
    else
        __syncthreads();
    int width = 1; // the warps' sums, one a lane, in every group of `width` lanes
    while (width < nw)
        width <<= 1;
    const int src = G.t & (width - 1);
#pragma unroll
    for (int i = 0; i < NV; ++i)
        v[i] = src < nw ? mine[i * 32 + src] : 0.f;
    lane_sum<NV>(v, width);
}

// Cluster barriers, split so a block can go on working between its arrival (after its
// last read of another block's shared memory) and its wait (before it exits).
__device__ __forceinline__ void cluster_arrive()
{
    asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");
}

__device__ __forceinline__ void cluster_wait()
{
    asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

__device__ __forceinline__ void cluster_sync()
{
    cluster_arrive();
    cluster_wait();
}

// Reads a float or an int at p in the shared memory of cluster rank `rank` (p is an
// address in this block's shared memory; every block has the same layout).
__device__ __forceinline__ unsigned remote_addr(const void *p, int rank)
{
    unsigned r;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;"
                 : "=r"(r)
                 : "r"((unsigned)__cvta_generic_to_shared(p)), "r"(rank));
    return r;
}

__device__ __forceinline__ float ld_remote(const float *p, int rank)
{
    float v;
    asm volatile("ld.shared::cluster.f32 %0, [%1];"
                 : "=f"(v)
                 : "r"(remote_addr(p, rank))
                 : "memory");
    return v;
}

__device__ __forceinline__ int ld_remote(const int *p, int rank)
{
    int v;
    asm volatile("ld.shared::cluster.s32 %0, [%1];"
                 : "=r"(v)
                 : "r"(remote_addr(p, rank))
                 : "memory");
    return v;
}

// ---- mailboxes: a cluster's workers trade a row's values without cluster barriers ----
//
// A cluster barrier orders global memory too: its arrive waits for the block's
// outstanding stores (the last row's output) and its wait invalidates L1 (the slice of
// w and b a worker keeps there). Workers trade instead through a mailbox in each
// block's shared memory: a block writes its 16 bytes into every block's box with
// st.async, which counts them on the receiver's mbarrier, and waits on its own
// mbarrier for the cluster's. Boxes and barriers alternate between rows (par); the
// phase a barrier waits for flips every other row. A box is free again two rows on:
// a block writes row r+2's values only after it has every block's row r+1 values,
// which those blocks sent after reading row r's.
struct Mailbox {
    uint4 box[2][8]; // [par][sender's rank]
    unsigned long long bar[2];
};

__device__ __forceinline__ unsigned smem_addr(const void *p)
{
    return (unsigned)__cvta_generic_to_shared(p);
}

// Before the cluster's first barrier: each barrier expects one arrival (its block's
// own, which also sets the bytes to expect) a phase.
__device__ __forceinline__ void mail_init(Mailbox &m)
{
    if (threadIdx.x == 0 && threadIdx.y == 0) {
        for (int i = 0; i < 2; ++i)
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(&m.bar[i]))
                         : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
}

// One thread of each block: its 16 bytes to box[par][rank] of every block of the
// cluster, and the cluster's to expect on its own barrier.
template <int CL>
__device__ __forceinline__ void mail_post(Mailbox &m, int par, int rank, const uint4 &v)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(
                     smem_addr(&m.bar[par])),
                 "r"(CL * 16)
                 : "memory");
#pragma unroll
    for (int r = 0; r < CL; ++r)
        asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 [%0], "
                     "{%1,%2,%3,%4}, [%5];" ::"r"(remote_addr(&m.box[par][rank], r)),
                     "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w), "r"(remote_addr(&m.bar[par], r))
                     : "memory");
}

// Every thread: until the cluster's values of this row are in.
__device__ __forceinline__ void mail_wait(Mailbox &m, int par, unsigned phase)
{
    const unsigned bar = smem_addr(&m.bar[par]);
    unsigned done;
    do {
        asm volatile("{\n\t.reg .pred p;\n\t"
                     "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
                     "selp.u32 %0, 1, 0, p;\n\t}"
                     : "=r"(done)
                     : "r"(bar), "r"(phase)
                     : "memory");
    } while (!done);
}

// Each block's NV per-row values, posted in its shared memory (cluster_post, then a
// cluster barrier) and gathered from every rank of the cluster: out[r][i] is rank r's
// value i. slot: NV floats per row of the block (gpb*NV) in shared memory, not written
// again by anyone until every block has passed the next cluster barrier after this
// call.
template <int NV>
__device__ __forceinline__ void cluster_post(const float (&v)[NV], const Geo &G, float *slot)
{
    if (G.t == 0)
#pragma unroll
        for (int i = 0; i < NV; ++i)
            slot[G.g * NV + i] = v[i];
    cluster_sync();
}

template <int NV, int CL>
__device__ __forceinline__ void cluster_gather(const float (&v)[NV], float (&out)[CL][NV],
                                               const Geo &G, float *slot)
{
    cluster_post<NV>(v, G, slot);
#pragma unroll
    for (int r = 0; r < CL; ++r)
#pragma unroll
        for (int i = 0; i < NV; ++i)
            out[r][i] = ld_remote(slot + G.g * NV + i, r);
}

// A row done by a block (or cluster) of its own, with no next unit to hand on (the
// workers' Handoff, norms_workers.cuh, is the other kind of row): the cluster's blocks
// trade values through cluster_gather (slot: its memory), and a block arrives as soon
// as it has read the others' (it waits before it exits: cluster_wait).
struct OneRow {
    const Geo &G;
    float *slot;
    __device__ __forceinline__ void publish() const {}
    __device__ __forceinline__ void receive() const {}
    // The row group NORMS_AHEAD groups on, of a and b (b may be null), to L2.
    __device__ __forceinline__ void ahead(const norms_t *a, const norms_t *b, int M, int N) const
    {
        if constexpr (NORMS_AHEAD > 0) {
            if (G.rank != 0 || G.t != 0 || G.g != 0) return;
            const int row = (int)(blockIdx.x / NORMS_CL + NORMS_AHEAD) * G.gpb;
            prefetch_rows(a, b, row, G.gpb, M, N);
        }
    }
    template <int NV, int CL>
    __device__ __forceinline__ void gather(const float (&v)[NV], float (&out)[CL][NV]) const
    {
        cluster_gather<NV, CL>(v, out, G, slot);
        cluster_arrive(); // done with the other blocks' memory
    }
    // Rank (t % CL)'s values to thread t, for rows of at least CL threads: one remote
    // read a value instead of CL.
    template <int NV, int CL>
    __device__ __forceinline__ void lanes(const float (&v)[NV], float (&mine)[NV]) const
    {
        cluster_post<NV>(v, G, slot);
#pragma unroll
        for (int i = 0; i < NV; ++i)
            mine[i] = ld_remote(slot + G.g * NV + i, G.t % CL);
        cluster_arrive();
    }
};

// Sums over the row: the block's threads, then the cluster's blocks, traded through h
// (OneRow or a worker's Handoff): a rank's values a lane, added by shuffles, where a
// row has at least CL threads, else every rank's in rank order.
template <int NV, int CL, bool WIDE, class H>
__device__ __forceinline__ void row_sum(float (&v)[NV], const Geo &G, float *buf, const H &h)
{
    group_sum<NV, WIDE>(v, G, buf);
    if constexpr (CL > 1) {
        if constexpr (NORMS_TPR >= CL) { // a rank's values a lane, added by shuffles
            float mine[NV];
            h.template lanes<NV, CL>(v, mine);
            lane_sum<NV>(mine, CL);
#pragma unroll
            for (int i = 0; i < NV; ++i)
                v[i] = mine[i];
        } else {
            float all[CL][NV];
            h.template gather<NV, CL>(v, all);
#pragma unroll
            for (int i = 0; i < NV; ++i) {
                float s = 0.f;
#pragma unroll
                for (int r = 0; r < CL; ++r)
                    s += all[r][i];
                v[i] = s;
            }
        }
    }
}

} // namespace norms

// The kernels are clusters of NORMS_CL blocks (none when it is 1).
#if NORMS_CL > 1
#define NORMS_CLUSTER_DIMS __cluster_dims__(NORMS_CL, 1, 1)
#else
#define NORMS_CLUSTER_DIMS
#endif
