// Softmax's teams path (softmax.cuh has the entry points; docs/suite.md, section
// softmax, explains it): every kernel but the workers' forward (softmax_workers.cuh).
//
// A row is read from DRAM once: a *team* of threads keeps it on chip, in registers
// (E 16-byte vectors per thread, converted to fp32), reduces max and sum across the
// team, and writes the result. The layout is chosen in Lua per configuration and
// shape, and comes in as macros:
//
//   GB_SM_DTYPE  storage type: 0 f32, 1 f16, 2 bf16, 3 fp8 e4m3 (math is fp32 always)
//   GB_SM_OP     1 forward, 2 backward
//   GB_SM_CAUSAL 1: the rows are the S x S score matrices of B x H heads; row i of a
//                head keeps columns 0..i, the masked ones are never read and are
//                written as 0
//   GB_SM_BLOCK  threads per block
//   GB_SM_TEAM   threads of one block that share a row: 1..32 (a part of a warp, no
//                barrier), or 64..BLOCK (warps meeting in shared memory); BLOCK/TEAM
//                rows per block
//   GB_SM_CL     blocks per row (a thread-block cluster, TEAM == BLOCK): they trade
//                their partial max and sum through distributed shared memory
//   GB_SM_E      16-byte vectors per thread: the compile-time column bucket; the row
//                length itself is a run-time argument (TEAM * CL * E vectors >= it)
//   GB_SM_STREAM 1: the row does not fit on chip: an online max/sum pass, then a
//                second pass that reads the row again (from L2 when it fits there)
//   GB_SM_VEC    1: a row's length in bytes is a multiple of 16 (tensors start
//                256-byte aligned, so every row does): 16-byte loads and stores;
//                0: odd widths, the same layout element by element
//   GB_SM_AHEAD  rows on from its own whose input a block (a cluster's rank 0) asks
//                L2 for as it starts, about the rows the blocks resident at once
//                hold, so the block that takes them a wave later finds them in L2
//                (0: none; vector rows only, the bulk prefetch takes 16-byte units)
//
// Every thread of a block runs every barrier, including threads past the last row, so
// no early returns.
//
// NaN and Inf follow the double reference (templates/softmax_ref.cuh) because the
// kernel computes the same formula: a NaN anywhere in a row makes exp(NaN - m) NaN
// and so the sum and every output; +Inf makes m = +Inf and exp(Inf - Inf) = NaN; a
// row of -Inf has m = -Inf and exp(-Inf + Inf) = NaN. -Inf elements beside finite
// ones give 0. The max itself skips NaN (fmaxf): the NaN reaches the sum anyway.
// Reductions run in a fixed order (shuffles, then warps, then cluster ranks), so the
// result does not depend on timing: no atomics.

#pragma once

#include "l2_prefetch.cuh"
#include "softmax_math.cuh"

#if GB_SM_DTYPE == 0
typedef unsigned int bits_t;
#elif GB_SM_DTYPE == 1
#include <cuda_fp16.h>
typedef unsigned short bits_t;
#elif GB_SM_DTYPE == 2
#include <cuda_bf16.h>
typedef unsigned short bits_t;
#elif GB_SM_DTYPE == 3
#include <cuda_fp8.h>
typedef unsigned char bits_t;
#else
#error "GB_SM_DTYPE must be 0 (f32), 1 (f16), 2 (bf16) or 3 (fp8 e4m3)"
#endif

#ifndef GB_SM_AHEAD
#define GB_SM_AHEAD 0
#endif

#if !defined(GB_SM_OP) || !defined(GB_SM_CAUSAL) || !defined(GB_SM_BLOCK) ||                       \
    !defined(GB_SM_TEAM) || !defined(GB_SM_CL) || !defined(GB_SM_E) || !defined(GB_SM_STREAM) ||   \
    !defined(GB_SM_VEC)
#error "softmax_teams.cuh needs GB_SM_OP, _CAUSAL, _BLOCK, _TEAM, _CL, _E, _STREAM and _VEC (see the top)"
#endif

namespace sm
{

constexpr int V = 16 / (int)sizeof(bits_t); // elements per 16-byte vector
constexpr int BLOCK = GB_SM_BLOCK, TEAM = GB_SM_TEAM, CL = GB_SM_CL, E = GB_SM_E;
constexpr int WARPS = BLOCK / 32;
constexpr int NT = TEAM * CL; // threads per row
using smx::exp_shifted;
using smx::LOG2E;
using smx::rescale;

static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "a block is 32..1024 threads");
static_assert((TEAM & (TEAM - 1)) == 0 && BLOCK % TEAM == 0, "TEAM is a power of 2 dividing BLOCK");
static_assert(CL == 1 || TEAM == BLOCK, "a cluster shares one row per block group");
static_assert(CL >= 1 && CL <= 8, "portable clusters have at most 8 blocks");
static_assert(E >= 1 && E <= 32, "E is 1..32 vectors per thread");

// ---- storage <-> fp32 --------------------------------------------------------------

__device__ __forceinline__ float to_f(bits_t b)
{
#if GB_SM_DTYPE == 0
    return __uint_as_float(b);
#elif GB_SM_DTYPE == 1
    return __half2float(__ushort_as_half(b));
#elif GB_SM_DTYPE == 2
    return __uint_as_float((unsigned)b << 16);
#else
    return __half2float(__half(__nv_cvt_fp8_to_halfraw(b, __NV_E4M3)));
#endif
}

__device__ __forceinline__ bits_t from_f(float f)
{
#if GB_SM_DTYPE == 0
    return __float_as_uint(f);
#elif GB_SM_DTYPE == 1
    return __half_as_ushort(__float2half_rn(f));
#elif GB_SM_DTYPE == 2
    return __bfloat16_as_ushort(__float2bfloat16_rn(f));
#else
    return __nv_cvt_float_to_fp8(f, __NV_SATFINITE, __NV_E4M3); // e4m3 has no Inf
#endif
}

union vec {
    uint4 u;
    bits_t b[V];
};

// x is read once: no L1 allocation; y is written once: evict-first. The load is
// predicated (nothing is read when ok is false: p may point past the tensor).
__device__ __forceinline__ uint4 ld_vec_if(const bits_t *p, bool ok)
{
    uint4 r = make_uint4(0, 0, 0, 0);
    asm("{\n\t.reg .pred q;\n\tsetp.ne.u32 q, %5, 0;\n\t"
        "@q ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];\n\t}"
        : "+r"(r.x), "+r"(r.y), "+r"(r.z), "+r"(r.w)
        : "l"(p), "r"((unsigned)ok));
    return r;
}

__device__ __forceinline__ void st_vec(bits_t *p, uint4 v)
{
    asm volatile("st.global.cs.v4.u32 [%0], {%1,%2,%3,%4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z),
                 "r"(v.w)
                 : "memory");
}

// ---- where a thread's elements are ---------------------------------------------------

struct row_ref {
    long long base; // offset of the row's first element
    int n;          // elements that take part (cols, or i + 1 in a causal row; 0: no row)
    int len;        // elements stored in the row (what must be written)
    int t;          // this thread's index among the row's NT threads
};

__device__ __forceinline__ unsigned cluster_rank()
{
    unsigned r = 0;
    if (CL > 1) asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}

__device__ __forceinline__ row_ref find_row(int rows, int cols)
{
    row_ref r;
    long long row;
    if (CL > 1) {
        row = blockIdx.x / CL;
        r.t = (int)cluster_rank() * TEAM + (int)threadIdx.x;
    } else {
        row = (long long)blockIdx.x * (BLOCK / TEAM) + threadIdx.x / TEAM;
        r.t = (int)(threadIdx.x % TEAM);
    }
    r.base = row * cols;
    r.len = row < rows ? cols : 0;
#if GB_SM_CAUSAL
    r.n = row < rows ? (int)(row % cols) + 1 : 0;
#else
    r.n = r.len;
#endif
    return r;
}

// Asks L2 for the rows GB_SM_AHEAD on from this block's of src (one thread of the
// block, or of the cluster, issues it; it does not wait).
__device__ __forceinline__ void prefetch_ahead(const bits_t *src, int rows, int cols)
{
    if (!GB_SM_AHEAD || !GB_SM_VEC || threadIdx.x != 0 || cluster_rank() != 0) return;
    const long long per_block = CL > 1 ? 1 : BLOCK / TEAM;
    const long long first = (CL > 1 ? blockIdx.x / CL : blockIdx.x * per_block) + GB_SM_AHEAD;
    if (first >= rows) return;
    const long long n = first + per_block <= rows ? per_block : rows - first;
    l2_prefetch(src + first * cols, (unsigned long long)(n * cols) * sizeof(bits_t));
}

// Vector k of this thread: elements [first_col(k), first_col(k) + V).
__device__ __forceinline__ int first_col(const row_ref &r, int k)
{
    return (k * NT + r.t) * V;
}

// The raw vectors of a chunk (columns c + first_col(k), k < E), all loads issued
// before any is used: predicated, no branch, so E * 16 bytes per thread are in flight
// at once.
__device__ __forceinline__ void fetch(const bits_t *src, const row_ref &r, int c, vec (&raw)[E])
{
#pragma unroll
    for (int k = 0; k < E; k++) {
        const int c0 = c + first_col(r, k);
        if (GB_SM_VEC) {
            raw[k].u = ld_vec_if(src + r.base + c0, c0 < r.n);
        } else {
#pragma unroll
            for (int j = 0; j < V; j++)
                raw[k].b[j] = c0 + j < r.n ? __ldg(src + r.base + c0 + j) : (bits_t)0;
        }
    }
}

// The fetched chunk in fp32; elements at or past r.n become pad.
__device__ __forceinline__ void unpack(const vec (&raw)[E], const row_ref &r, int c, float pad,
                                       float (&f)[E][V])
{
#pragma unroll
    for (int k = 0; k < E; k++) {
        const int c0 = c + first_col(r, k);
        // whole vectors unless the row is causal or odd-width: then it may end inside one
        const bool whole = GB_SM_VEC && !GB_SM_CAUSAL;
#pragma unroll
        for (int j = 0; j < V; j++)
            f[k][j] = (whole ? c0 < r.n : c0 + j < r.n) ? to_f(raw[k].b[j]) : pad;
    }
}

// Stores vector k from f; elements at or past r.n are written as 0 up to r.len (the
// masked part of a causal row), nothing past r.len.
__device__ __forceinline__ void store(bits_t *dst, const row_ref &r, int c0, const float *f)
{
    if (GB_SM_VEC) {
        if (c0 < r.len) {
            vec v;
            const bool whole = !GB_SM_CAUSAL || c0 + V <= r.n;
#pragma unroll
            for (int j = 0; j < V; j++)
                v.b[j] = from_f(whole || c0 + j < r.n ? f[j] : 0.0f);
            st_vec(dst + r.base + c0, v.u);
        }
    } else {
#pragma unroll
        for (int j = 0; j < V; j++)
            if (c0 + j < r.len) dst[r.base + c0 + j] = from_f(c0 + j < r.n ? f[j] : 0.0f);
    }
}

// ---- reductions across a row's threads ----------------------------------------------

struct op_sum {
    __device__ static float apply(float a, float b)
    {
        return a + b;
    }
};

// Shared memory of one reduction: a slot per warp and one for the block's result,
// which the cluster's other blocks read. Each reduction of a kernel has its own, so
// a slot is never written again while someone may still read it.
struct red_slots {
    float warp[WARPS];
    float block;
};

__device__ __forceinline__ void cluster_sync()
{
    asm volatile("barrier.cluster.arrive.release.aligned;\n\t"
                 "barrier.cluster.wait.acquire.aligned;" ::
                     : "memory");
}

__device__ __forceinline__ float peer_load(const float *local, unsigned rank)
{
    unsigned a = (unsigned)__cvta_generic_to_shared(local), remote;
    float v;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(a), "r"(rank));
    asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(remote) : "memory");
    return v;
}

template <class Op> __device__ __forceinline__ float warp_reduce(float v, int width)
{
#pragma unroll
    for (int off = 16; off >= 1; off >>= 1)
        if (off < width) v = Op::apply(v, __shfl_xor_sync(0xffffffffu, v, off));
    return v;
}

// The value reduced over the row's NT threads, the same in every one of them.
template <class Op> __device__ float row_reduce(float v, red_slots &s)
{
    v = warp_reduce<Op>(v, TEAM < 32 ? TEAM : 32);
    if (TEAM > 32) {
        constexpr int TW = TEAM / 32; // warps per team
        const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
        if (lane == 0) s.warp[warp] = v;
        __syncthreads();
        v = s.warp[(warp / TW) * TW + (lane % TW)]; // lanes past TW repeat: harmless
        v = warp_reduce<Op>(v, TW);
    }
    if (CL == 1) return v;
    if (threadIdx.x == 0) s.block = v;
    cluster_sync();
    v = peer_load(&s.block, 0);
#pragma unroll
    for (unsigned q = 1; q < (unsigned)CL; q++)
        v = Op::apply(v, peer_load(&s.block, q));
    return v;
}

// (m, s) and (m2, s2) as one pair (smx::merge).
__device__ __forceinline__ void merge(float &m, float &s, float m2, float s2)
{
    const smx::Pair p = smx::merge({m, s}, {m2, s2});
    m = p.m;
    s = p.s;
}

// The pairs of groups of `width` lanes, merged by a butterfly (as warp_reduce).
__device__ __forceinline__ void warp_merge(float &m, float &s, int width)
{
#pragma unroll
    for (int off = 16; off >= 1; off >>= 1)
        if (off < width)
            merge(m, s, __shfl_xor_sync(0xffffffffu, m, off), __shfl_xor_sync(0xffffffffu, s, off));
}

// The row's max and sum of exponentials (online softmax's pair) from each thread's,
// in one reduction: one barrier (and one cluster barrier) instead of one for the max
// and one for the sum. Every thread of the row gets the same bits.
__device__ void row_reduce_pair(float &m, float &s, red_slots &sm, red_slots &ss)
{
    warp_merge(m, s, TEAM < 32 ? TEAM : 32);
    if (TEAM > 32) {
        constexpr int TW = TEAM / 32;
        const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
        if (lane == 0) sm.warp[warp] = m, ss.warp[warp] = s;
        __syncthreads();
        const int from = (warp / TW) * TW + (lane % TW);
        m = sm.warp[from];
        s = ss.warp[from];
        warp_merge(m, s, TW);
    }
    if (CL == 1) return;
    if (threadIdx.x == 0) sm.block = m, ss.block = s;
    cluster_sync();
    m = peer_load(&sm.block, 0);
    s = peer_load(&ss.block, 0);
#pragma unroll
    for (unsigned q = 1; q < (unsigned)CL; q++)
        merge(m, s, peer_load(&sm.block, q), peer_load(&ss.block, q));
}

// A block may leave only once the cluster's other blocks have read its slots: arrive
// after the last remote read, wait before returning.
__device__ __forceinline__ void cluster_arrive()
{
    if (CL > 1) asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
}
__device__ __forceinline__ void cluster_wait()
{
    if (CL > 1) asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// ---- forward ---------------------------------------------------------------------

// Stores a chunk (columns c + first_col(k), k < E).
__device__ __forceinline__ void write(bits_t *dst, const row_ref &r, int c, const float (&f)[E][V])
{
#pragma unroll
    for (int k = 0; k < E; k++)
        store(dst, r, c + first_col(r, k), f[k]);
}

#if GB_SM_OP == 1
#if !GB_SM_STREAM
__device__ void forward(const bits_t *x, bits_t *y, int rows, int cols)
{
    __shared__ red_slots s_max, s_sum;
    const row_ref r = find_row(rows, cols);
    prefetch_ahead(x, rows, cols);
    vec raw[E];
    fetch(x, r, 0, raw);
    float v[E][V];
    unpack(raw, r, 0, SM_NEG_INF, v);
    float m = SM_NEG_INF;
#pragma unroll
    for (int k = 0; k < E; k++)
#pragma unroll
        for (int j = 0; j < V; j++)
            m = fmaxf(m, v[k][j]);
    // Exponentials against the thread's own max; a thread of -Inf (pads) and NaN only
    // takes exp(v): 0 or NaN.
    const float mlog = m == SM_NEG_INF ? 0.0f : m * LOG2E;
    float sum = 0.0f;
#pragma unroll
    for (int k = 0; k < E; k++)
#pragma unroll
        for (int j = 0; j < V; j++) {
            v[k][j] = exp_shifted(v[k][j], mlog);
            sum += v[k][j];
        }
    float big = m, total = sum;
    row_reduce_pair(big, total, s_max, s_sum);
    // to the row's max and over its sum (an all -Inf row: 0 * (1/0), NaN as in the
    // reference)
    const float scale = rescale(1.0f, m, big) / total;
    cluster_arrive();
#pragma unroll
    for (int k = 0; k < E; k++)
#pragma unroll
        for (int j = 0; j < V; j++)
            v[k][j] *= scale;
    write(y, r, 0, v);
    cluster_wait();
}
#else
// The row does not fit: each thread keeps a running max and a sum scaled to it over
// chunks of E vectors, then the row is read again (from L2 when it fits) to write y.

__device__ void forward(const bits_t *x, bits_t *y, int rows, int cols)
{
    __shared__ red_slots s_max, s_sum;
    const row_ref r = find_row(rows, cols);
    prefetch_ahead(x, rows, cols);
    float m = SM_NEG_INF, sum = 0.0f;
    for (int c = 0; c < r.n; c += E * NT * V) {
        vec raw[E];
        fetch(x, r, c, raw);
        float v[E][V], cm = m;
        unpack(raw, r, c, SM_NEG_INF, v);
#pragma unroll
        for (int k = 0; k < E; k++)
#pragma unroll
            for (int j = 0; j < V; j++)
                cm = fmaxf(cm, v[k][j]);
        sum = rescale(sum, m, cm);
        m = cm;
        if (m == SM_NEG_INF) continue; // only pads and -Inf so far: they add 0, not exp(NaN)
#pragma unroll
        for (int k = 0; k < E; k++)
#pragma unroll
            for (int j = 0; j < V; j++)
                sum += exp_shifted(v[k][j], m * LOG2E);
    }
    float big = m, total = sum;
    row_reduce_pair(big, total, s_max, s_sum);
    const float inv = 1.0f / total;
    cluster_arrive();
    const float mlog = big * LOG2E;
    for (int c = 0; c < r.len; c += E * NT * V) {
        vec raw[E];
        fetch(x, r, c, raw);
        float v[E][V];
        unpack(raw, r, c, SM_NEG_INF, v);
#pragma unroll
        for (int k = 0; k < E; k++)
#pragma unroll
            for (int j = 0; j < V; j++)
                v[k][j] = exp_shifted(v[k][j], mlog) * inv;
        write(y, r, c, v);
    }
    cluster_wait();
}
#endif
#endif

// ---- backward --------------------------------------------------------------------

#if GB_SM_OP == 2
// dx = y * (dy - dot) for one chunk, into a.
__device__ __forceinline__ void grad(float (&a)[E][V], const float (&b)[E][V], float dot)
{
#pragma unroll
    for (int k = 0; k < E; k++)
#pragma unroll
        for (int j = 0; j < V; j++)
            a[k][j] *= b[k][j] - dot;
}

// y and dy of a chunk, both fetched before either is unpacked; pads are 0.
__device__ __forceinline__ void read_pair(const bits_t *y, const bits_t *dy, const row_ref &r,
                                          int c, float (&a)[E][V], float (&b)[E][V])
{
    vec ra[E], rb[E];
    fetch(y, r, c, ra);
    fetch(dy, r, c, rb);
    unpack(ra, r, c, 0.0f, a);
    unpack(rb, r, c, 0.0f, b);
}

__device__ __forceinline__ float partial_dot(const float (&a)[E][V], const float (&b)[E][V],
                                             float dot)
{
#pragma unroll
    for (int k = 0; k < E; k++)
#pragma unroll
        for (int j = 0; j < V; j++)
            dot = fmaf(a[k][j], b[k][j], dot);
    return dot;
}

#if !GB_SM_STREAM
__device__ void backward(const bits_t *y, const bits_t *dy, bits_t *dx, int rows, int cols)
{
    __shared__ red_slots s_dot;
    const row_ref r = find_row(rows, cols);
    prefetch_ahead(y, rows, cols);
    prefetch_ahead(dy, rows, cols);
    float a[E][V], b[E][V];
    read_pair(y, dy, r, 0, a, b);
    const float dot = row_reduce<op_sum>(partial_dot(a, b, 0.0f), s_dot);
    cluster_arrive();
    grad(a, b, dot);
    write(dx, r, 0, a);
    cluster_wait();
}
#else
// Two passes: the dot product, then dx from y and dy read again.
__device__ void backward(const bits_t *y, const bits_t *dy, bits_t *dx, int rows, int cols)
{
    __shared__ red_slots s_dot;
    const row_ref r = find_row(rows, cols);
    prefetch_ahead(y, rows, cols);
    prefetch_ahead(dy, rows, cols);
    float dot = 0.0f;
    for (int c = 0; c < r.n; c += E * NT * V) {
        float a[E][V], b[E][V];
        read_pair(y, dy, r, c, a, b);
        dot = partial_dot(a, b, dot);
    }
    dot = row_reduce<op_sum>(dot, s_dot);
    cluster_arrive();
    for (int c = 0; c < r.len; c += E * NT * V) {
        float a[E][V], b[E][V];
        read_pair(y, dy, r, c, a, b);
        grad(a, b, dot);
        write(dx, r, c, a);
    }
    cluster_wait();
}
#endif
#endif

} // namespace sm
