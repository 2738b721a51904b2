// Softmax forward as workers over a queue of rows, in the norms kernels' layout
// (norms_common.cuh) and with their workers (norms_workers.cuh): softmax.cuh takes
// this path when GB_SM_WORKERS is 1 (examples/suite/softmax.lua, WORKERS = 1).
//
// A worker (a cluster, a block, or a warp for short rows) takes a row from the queue,
// loads it into registers as the 16-byte vectors it was stored in, takes each thread's
// max and sum of exponentials against it, merges those pairs over the row (shuffles,
// the warps through shared memory, a cluster's blocks through the mailbox, which also
// hands on the next row), and writes y = exp(x - max) / sum from the same registers:
// the exponentials are taken again, so a thread keeps its elements packed (half the
// registers of the fp32 copies for 16-bit types). The leader asks L2 for the next row
// once the current one's loads are in (NORMS_AHEAD), so its loads wait on L2 while the
// row is reduced and written. A row too long for the registers of its cluster is done
// in chunks: the pairs merge over the chunks, and each chunk is read again for y.
//
// NaN and Inf as softmax.cuh's other path and the double reference: a NaN makes the
// sum and so every output NaN, +Inf makes the max +Inf and exp(Inf - Inf) NaN, a row of
// -Inf has sum 0 and gives NaN; -Inf beside finite values gives 0. Elements outside the
// row take part as -Inf (exp gives 0). Merges run in a fixed order: no atomics, the
// same bits every run.
#pragma once

#include "norms_workers.cuh"
#include "softmax_math.cuh"

namespace norms
{

using smx::exp_shifted;
using smx::merge;
using smx::Pair;

// Element i of a slot of n valid elements as it takes part: its value, or -Inf
// outside the row (aligned rows: a slot is whole or empty, n is VEC or 0). APART: by
// get_apart (norms_common.cuh), so that two passes do not share fp32 copies, which
// would keep a whole chunk's alive between them.
template <bool APART>
__device__ __forceinline__ float elem_in(const uint4 &v, const Geo &G, int i, int n)
{
    return (G.aligned ? n > 0 : i < n) ? (APART ? get_apart(v, i) : get(v, i)) : SM_NEG_INF;
}

// The pair of a chunk's elements. A thread with only -Inf (and NaN) takes exp(x): 0
// (or NaN, which must reach the sum).
template <int VPT, int CL>
__device__ __forceinline__ Pair chunk_pair(const uint4 (&v)[VPT], const Geo &G, int k, bool ok)
{
    float m = SM_NEG_INF;
#pragma unroll
    for (int j = 0; j < VPT; ++j) {
        const int n = nvalid(G, elem0<VPT, CL>(G, k, j), ok);
#pragma unroll
        for (int i = 0; i < VEC; ++i)
            m = fmaxf(m, elem_in<false>(v[j], G, i, n));
    }
    const float mlog = m == SM_NEG_INF ? 0.f : m * smx::LOG2E;
    float s = 0.f;
#pragma unroll
    for (int j = 0; j < VPT; ++j) {
        const int n = nvalid(G, elem0<VPT, CL>(G, k, j), ok);
#pragma unroll
        for (int i = 0; i < VEC; ++i)
            s += exp_shifted(elem_in<true>(v[j], G, i, n), mlog);
    }
    return {m, s};
}

// The pairs of groups of `width` lanes merged by a butterfly.
__device__ __forceinline__ Pair lane_pair(Pair p, int width)
{
    for (int off = width >> 1; off > 0; off >>= 1)
        p = merge(p, {__shfl_xor_sync(0xffffffffu, p.m, off),
                      __shfl_xor_sync(0xffffffffu, p.s, off)});
    return p;
}

// The row's pair from each thread's: lanes, then warps (buf: 64 floats; a row of more
// than 32 threads has its block to itself), then the cluster's blocks, traded through
// the worker's mailbox. Every thread of the row gets the same bits.
template <int CL>
__device__ __forceinline__ Pair row_pair(Pair p, const Geo &G, float *buf, const Handoff<CL> &h)
{
    p = lane_pair(p, G.tpr < 32 ? G.tpr : 32);
    if (G.tpr > 32) {
        const int lane = G.t & 31;
        if (lane == 0) {
            buf[G.t >> 5] = p.m;
            buf[32 + (G.t >> 5)] = p.s;
        }
        __syncthreads();
        p = lane < (G.tpr >> 5) ? Pair{buf[lane], buf[32 + lane]} : Pair{SM_NEG_INF, 0.f};
        p = lane_pair(p, 32);
    }
    if constexpr (CL > 1) { // a worker's row has at least 32 threads: a rank's pair a lane
        const float part[2] = {p.m, p.s};
        float mine[2];
        h.template lanes<2, CL>(part, mine);
        p = lane_pair({mine[0], mine[1]}, CL);
    }
    return p;
}

// y for a chunk: exp(x - max) / sum, from the packed elements.
template <int VPT, int CL>
__device__ __forceinline__ void softmax_store(const uint4 (&v)[VPT], const Geo &G, int k, bool ok,
                                              norms_t *yr, float mlog, float inv)
{
#pragma unroll
    for (int j = 0; j < VPT; ++j) {
        const int e0 = elem0<VPT, CL>(G, k, j), n = nvalid(G, e0, ok);
        float o[VEC];
#pragma unroll
        for (int i = 0; i < VEC; ++i)
            o[i] = exp_shifted(get(v[j], i), mlog) * inv;
        store_slot(yr, G, e0, n, pack(o));
    }
}

// One row (past M: every barrier, no memory); h hands the worker's next row on.
template <int VPT, int CL>
__device__ __forceinline__ void softmax_row(const norms_t *x, norms_t *y, int M, int N,
                                            const Geo &G, int row, float *buf,
                                            const Handoff<CL> &h)
{
    const bool ok = row < M;
    const size_t off = (size_t)(ok ? row : 0) * (size_t)N;
    uint4 v[VPT];
    Pair p = {SM_NEG_INF, 0.f};
    for (int k = 0; k < G.nchunks; ++k) {
        load_row<VPT, CL>(v, x + off, G, k, ok);
        p = merge(p, chunk_pair<VPT, CL>(v, G, k, ok));
    }
    launder<VPT>(v); // the fp32 copies die here: y converts the packed elements again
    h.ahead(x, nullptr, M, N);
    h.publish();
    p = row_pair<CL>(p, G, buf, h);
    h.receive();
    // an all -Inf row: -Inf*log2e makes every exponent NaN, as the reference's
    const float mlog = p.m * smx::LOG2E, inv = 1.f / p.s;
    for (int k = 0; k < G.nchunks; ++k) {
        if (G.nchunks > 1) load_row<VPT, CL>(v, x + off, G, k, ok);
        softmax_store<VPT, CL>(v, G, k, ok, y + off, mlog, inv);
    }
}

// Workers over the queue.
template <int VPT, int CL>
__device__ __forceinline__ void softmax_rows_fwd(const norms_t *__restrict__ x,
                                                 norms_t *__restrict__ y, int *__restrict__ queue,
                                                 int M, int N)
{
    static_assert(NORMS_PERSIST == 1, "the softmax rows are workers");
    if (!block_ok(1) || !row_ok<VPT, CL>(N)) return;
    const Geo G = geometry<VPT, CL>(N);
    __shared__ float buf[2][64];
    __shared__ int next[1][2];
    run_workers<CL>(
        G, queue, next, M,
        [&](int row, int par, const Handoff<CL> &h) {
            softmax_row<VPT, CL>(x, y, M, N, G, row, buf[par], h);
        },
        [] {});
}

} // namespace norms
