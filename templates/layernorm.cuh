// LayerNorm over the last dimension of an M x N tensor, with an affine weight and
// bias, in f32, f16 or bf16 with fp32 arithmetic (examples/suite/norms.lua).
//
//   forward:  mean = sum(x)/N, var = sum((x-mean)^2)/N, rstd = 1/sqrt(var + eps)
//             y = (x - mean)*rstd*w + b; mean and rstd are written per row (f32), as
//             torch and Liger-Kernel save them for the backward pass.
//   backward: xhat = (x - mean)*rstd, c1 = sum(w*dy)/N, c2 = sum(w*dy*xhat)/N
//             dx = (w*dy - (xhat*c2 + c1))*rstd; dw += sum over rows of dy*xhat,
//             db += sum over rows of dy (dw, db: f32, accumulated into).
//
// The statistics are exact to fp32 rounding however large the mean, and cost no second
// read: each thread takes the count, sum and squared deviations from their own mean of
// each 16-byte slot of its elements (two passes over the slot's registers). A block
// adds its threads' sums (shuffles, then one barrier across warps); with its count,
// known from the layout, that gives the block's mean, and the threads' slots moved to
// it by Chan's formula are added the same way (a second barrier). The blocks of a
// cluster combine their moments by Chan's formula (one exchange, a rank's moments a
// lane). A row done in chunks merges each chunk's moments into the thread's first. The
// layout and the reductions are in norms_common.cuh; the workers (the backward kernels
// and the persistent forward variant) and the column sums in norms_workers.cuh.
//
// dw and db are sums of per-block partials added with atomics: the order of the adds
// varies from run to run, so the last bits of dw and db are not deterministic.
#pragma once

#include "norms_workers.cuh"

namespace norms
{

// a/n for a count n (a positive whole number of elements, far from fp32's limits) by the
// hardware's reciprocal: one instruction and 1 ulp, where __fdividef adds half a dozen
// to scale huge and tiny divisors and the exact division more still. These kernels are
// issue-bound.
__device__ __forceinline__ float per(float a, float n)
{
    float r;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(n));
    return a * r;
}

__device__ __forceinline__ float sq(float a)
{
    return a * a;
}

// Count, sum and squared deviations from their mean of part of a row's elements.
struct Moments {
    float n, sum, m2;

    // The squared deviations of these elements from m (Chan: m2 moved to m).
    __device__ __forceinline__ float m2_about(float m) const
    {
        return n > 0.f ? m2 + n * sq(per(sum, n) - m) : 0.f;
    }
};

// a and b together (Chan, Golub and LeVeque's pairwise update).
__device__ __forceinline__ Moments merge(const Moments &a, const Moments &b)
{
    if (b.n == 0.f) return a;
    if (a.n == 0.f) return b;
    const float n = a.n + b.n, d = per(b.sum, b.n) - per(a.sum, a.n);
    return {n, a.sum + b.sum, a.m2 + b.m2 + d * d * per(a.n * b.n, n)};
}

// Parts 0..np-1 (part(i) gives one) together: the count and sum first, then each
// part's squared deviations moved to the common mean. The order is fixed, so every
// thread that combines the same parts gets the same bits.
template <class Part> __device__ __forceinline__ Moments combine(int np, Part part)
{
    Moments t = {0.f, 0.f, 0.f};
    for (int i = 0; i < np; ++i) {
        const Moments p = part(i);
        t.n += p.n;
        t.sum += p.sum;
    }
    const float mean = t.n > 0.f ? per(t.sum, t.n) : 0.f;
    for (int i = 0; i < np; ++i) {
        const Moments p = part(i);
        if (p.n > 0.f) t.m2 += p.m2_about(mean);
    }
    return t;
}

// A thread's part of a chunk of a row: each slot's count, mean and squared deviations
// from that mean (two passes over the slot's VEC values in registers), and their sum.
template <int VPT> struct Slots {
    float n[VPT], mean[VPT], q[VPT], sum;

    // The squared deviations of the slots' elements from m (Chan: each slot's own,
    // moved to m).
    __device__ __forceinline__ float m2_about(float m) const
    {
        float t = 0.f;
#pragma unroll
        for (int j = 0; j < VPT; ++j)
            if (n[j] > 0.f) t += q[j] + n[j] * sq(mean[j] - m);
        return t;
    }

    __device__ __forceinline__ Moments moments() const
    {
        float c = 0.f;
#pragma unroll
        for (int j = 0; j < VPT; ++j)
            c += n[j];
        return {c, sum, m2_about(c > 0.f ? per(sum, c) : 0.f)};
    }
};

// A chunk's slots. The values are converted apart() (norms_common.cuh), so that only a
// slot's stay in registers between its two passes, not the whole chunk's until the
// output is written.
template <int VPT, int CL>
__device__ __forceinline__ Slots<VPT> chunk_slots(const uint4 (&v)[VPT], const Geo &G, int k,
                                                  bool ok)
{
    Slots<VPT> s;
    s.sum = 0.f;
#pragma unroll
    for (int j = 0; j < VPT; ++j) {
        const int nj = nvalid(G, elem0<VPT, CL>(G, k, j), ok);
        float sum = get_apart(v[j], 0); // elements outside the row are zeros
#pragma unroll
        for (int i = 1; i < VEC; ++i)
            sum += get_apart(v[j], i);
        // aligned: nj is VEC or 0, and a slot of zeros has mean 0 and no deviations
        const float m = G.aligned || nj == VEC ? sum * (1.f / VEC)
                        : nj > 0               ? per(sum, (float)nj)
                                               : 0.f;
        float q = 0.f;
#pragma unroll
        for (int i = 0; i < VEC; ++i) {
            const float d = get_apart(v[j], i) - m;
            if (G.aligned || i < nj) q = fmaf(d, d, q);
        }
        s.n[j] = (float)nj;
        s.mean[j] = m;
        s.q[j] = q;
        s.sum += sum;
    }
    return s;
}

// The moments of groups of `width` lanes (a power of two up to 32), from each lane's:
// count and sum are added by shuffles (every lane gets the same bits: each step adds
// the same two values), then each lane's squared deviations, moved to the group's
// mean. A lane with no elements adds zeros.
__device__ __forceinline__ Moments lane_moments(const Moments &m, int width)
{
    float ns[2] = {m.n, m.sum};
    lane_sum<2>(ns, width);
    const float mean = ns[0] > 0.f ? per(ns[1], ns[0]) : 0.f;
    float q[1] = {m.m2_about(mean)};
    lane_sum<1>(q, width);
    return {ns[0], ns[1], q[0]};
}

// How many of the row's elements this block holds: in each slot a run of TPR*VEC
// elements, cut at the row's end. Known from the layout, so no reduction counts them.
template <int VPT, int CL> __device__ __forceinline__ float block_count(const Geo &G, bool ok)
{
    if (!ok) return 0.f;
    const int run = G.tpr * VEC;
    int n = 0;
    for (int k = 0; k < G.nchunks; ++k)
#pragma unroll
        for (int j = 0; j < VPT; ++j)
            n += min(max(G.N - ((k * VPT + j) * CL + G.rank) * run, 0), run);
    return (float)n;
}

// The moments of the row's elements in this block, from each thread's part (its Slots,
// or for a row in chunks its Moments): its sum, and its squared deviations about a
// given mean (m2_about). The sum over the block with the count gives the block's mean,
// then the squared deviations about that mean are summed. Two sums (group_sum:
// shuffles, and a barrier where the row has more than a warp; buf: 64 floats, the
// forward kernels' blocks hold at most one such row), every thread the same bits.
// Chan's merges with the count at every step cost three chains of shuffles a level and
// a division a lane: twice the instructions, for one barrier fewer.
template <int VPT, int CL, class Part>
__device__ __forceinline__ Moments block_moments(const Part &p, const Geo &G, bool ok, float *buf)
{
    float s[1] = {p.sum};
    group_sum<1, false>(s, G, buf);
    const float n = block_count<VPT, CL>(G, ok);
    float q[1] = {p.m2_about(n > 0.f ? per(s[0], n) : 0.f)};
    group_sum<1, false>(q, G, buf + 32);
    return {n, s[0], q[0]};
}

// y for a chunk: (x - mean)*rstd*w + b. For 16-bit types as (x*rstd + shift)*w + b
// with shift = -mean*rstd, two instructions an element instead of three: its
// cancellation (an ulp of |mean|*rstd) is far below the output's rounding; f32 output
// keeps the exact form.
template <int VPT, int CL>
__device__ __forceinline__ void layernorm_store(const uint4 (&v)[VPT], const Geo &G, int k, bool ok,
                                                const norms_t *w, const norms_t *b, norms_t *yr,
                                                float mean, float rstd)
{
    const float shift = -mean * rstd;
#pragma unroll
    for (int j = 0; j < VPT; ++j) {
        const int e0 = elem0<VPT, CL>(G, k, j), n = nvalid(G, e0, ok);
        const uint4 wv = load_param(w, G, e0, n), bv = load_param(b, G, e0, n);
        float o[VEC];
#pragma unroll
        for (int i = 0; i < VEC; ++i) {
            const float x = get(v[j], i);
            const float xh = VEC == 8 ? fmaf(x, rstd, shift) : (x - mean) * rstd;
            o[i] = fmaf(xh, get(wv, i), get(bv, i));
        }
        store_slot(yr, G, e0, n, pack(o));
    }
}

// The forward pass over one row (past M: every barrier, no memory). h: the worker's
// Handoff (norms_workers.cuh) or OneRow, which trades the cluster's moments. buf: this
// row's reduction memory.
template <int VPT, int CL, class H>
__device__ __forceinline__ void layernorm_row(const norms_t *x, const norms_t *w, const norms_t *b,
                                              norms_t *y, float *mean_out, float *rstd_out, int M,
                                              int N, float eps, const Geo &G, int row, float *buf,
                                              const H &h)
{
    const bool ok = row < M;
    const size_t off = (size_t)(ok ? row : 0) * (size_t)N;
    uint4 v[VPT];
    Slots<VPT> sl;
    Moments mo = {0.f, 0.f, 0.f}; // a row in chunks: the thread's, merged chunk by chunk
    for (int k = 0; k < G.nchunks; ++k) {
        load_row<VPT, CL>(v, x + off, G, k, ok);
        sl = chunk_slots<VPT, CL>(v, G, k, ok);
        if constexpr (!NORMS_FITS) mo = merge(mo, sl.moments());
    }
    launder<VPT>(v); // the fp32 copies made for the moments die here, not after the barrier
    h.ahead(x, nullptr, M, N);
    h.publish();
    if constexpr (NORMS_FITS)
        mo = block_moments<VPT, CL>(sl, G, ok, buf);
    else
        mo = block_moments<VPT, CL>(mo, G, ok, buf);
    if constexpr (CL > 1) {
        const float part[3] = {mo.n, mo.sum, mo.m2};
        if constexpr (NORMS_TPR >= CL) { // a rank's moments a lane, combined by shuffles
            float mine[3];
            h.template lanes<3, CL>(part, mine);
            mo = lane_moments(Moments{mine[0], mine[1], mine[2]}, CL);
        } else {
            float all[CL][3];
            h.template gather<3, CL>(part, all);
            mo = combine(CL, [&](int r) { return Moments{all[r][0], all[r][1], all[r][2]}; });
        }
    }
    h.receive();
    const float mean = mo.n > 0.f ? per(mo.sum, mo.n) : 0.f;
    const float rstd = rsqrtf(__fdividef(mo.m2, (float)N) + eps);
    if (ok && G.rank == 0 && G.t == 0) {
        mean_out[row] = mean;
        rstd_out[row] = rstd;
    }
    for (int k = 0; k < G.nchunks; ++k) {
        if (G.nchunks > 1) load_row<VPT, CL>(v, x + off, G, k, ok);
        layernorm_store<VPT, CL>(v, G, k, ok, w, b, y + off, mean, rstd);
    }
}

// NORMS_PERSIST = 0: one row (or 128/TPR rows) per block or cluster; many small blocks
// resident per SM overlap one row's reduction with the others' loads. 1: workers over
// the queue (norms_workers.cuh): a block's columns are the same for every row, so its
// slice of w and b stays in L1 (x is read without allocating there).
template <int VPT, int CL>
__device__ __forceinline__ void
layernorm_fwd(const norms_t *__restrict__ x, const norms_t *__restrict__ w,
              const norms_t *__restrict__ b, norms_t *__restrict__ y, float *__restrict__ mean_out,
              float *__restrict__ rstd_out, int *__restrict__ queue, int M, int N, float eps)
{
    if (!block_ok(1) || !row_ok<VPT, CL>(N)) return;
    const Geo G = geometry<VPT, CL>(N);
    if constexpr (NORMS_PERSIST) {
        __shared__ float buf[2][3 * 32];
        __shared__ int next[1][2];
        run_workers<CL>(
            G, queue, next, M,
            [&](int row, int par, const Handoff<CL> &h) {
                layernorm_row<VPT, CL>(x, w, b, y, mean_out, rstd_out, M, N, eps, G, row,
                                       buf[par], h);
            },
            [] {});
    } else {
        __shared__ float buf[3 * 32];
        __shared__ float slot[CL > 1 ? MAX_GPB * 3 : 1]; // cluster exchange: moments per row
        layernorm_row<VPT, CL>(x, w, b, y, mean_out, rstd_out, M, N, eps, G,
                               (int)(blockIdx.x / CL) * G.gpb + G.g, buf, OneRow{G, slot});
        if constexpr (CL > 1) cluster_wait(); // keep this block's memory until all read it
    }
}

// The backward kernel's per-row constants. For 16-bit types xhat = x*rstd + shift
// (shift = -mean*rstd), one instruction an element instead of two, as the forward
// kernel does; f32 keeps (x - mean)*rstd.
struct BwdRow {
    size_t off;
    bool ok;
    float mean, rstd, shift;
    static __device__ __forceinline__ BwdRow at(const float *mean, const float *rstd, int row,
                                                int M, int N)
    {
        BwdRow R;
        R.ok = row < M;
        R.off = (size_t)(R.ok ? row : 0) * (size_t)N;
        R.mean = R.ok ? mean[row] : 0.f;
        R.rstd = R.ok ? rstd[row] : 0.f;
        R.shift = -R.mean * R.rstd;
        return R;
    }
    __device__ __forceinline__ float xhat(float x) const
    {
        return VEC == 8 ? fmaf(x, rstd, shift) : (x - mean) * rstd;
    }
};

// One chunk's partial sums: c[0] += w*dy, c[1] += w*dy*xhat; dw/db partials go to the
// block's accumulators when the row fits, else straight to memory. Elements outside
// the row are zeros (x, dy and w), so on aligned rows, where a slot is whole or
// empty, they add zeros and need no test; a partial slot tests each element.
template <int VPT, int CL>
__device__ __forceinline__ void layernorm_partials(const uint4 (&xv)[VPT], const uint4 (&gv)[VPT],
                                                   const Geo &G, int k, const BwdRow &R,
                                                   const uint4 (&wr)[VPT], const norms_t *w,
                                                   float (&c)[2],
                                                   const Acc<VPT, 2> &A, float *dw, float *db)
{
#pragma unroll
    for (int j = 0; j < VPT; ++j) {
        const int e0 = elem0<VPT, CL>(G, k, j), n = nvalid(G, e0, R.ok);
        const uint4 wv = param<true>(wr, w, G, j, e0, n);
        float pw[VEC], pb[VEC];
#pragma unroll
        for (int i = 0; i < VEC; ++i) {
            const bool in = G.aligned || i < n;
            const float xh = R.xhat(get(xv[j], i)), g = get(gv[j], i);
            const float wdy = get(wv, i) * g;
            pw[i] = in ? g * xh : 0.f;
            pb[i] = g;
            if (in) {
                c[0] += wdy;
                c[1] = fmaf(wdy, xh, c[1]);
            }
        }
        if (G.nchunks == 1) {
            A.add(0, j, pw);
            A.add(1, j, pb);
        } else {
            add_slot(dw, pw, G, e0);
            add_slot(db, pb, G, e0);
        }
    }
}

// dx for a slot: (w*dy - (xhat*c2 + c1))*rstd, or FOLD (16-bit types) with xhat
// folded in: w*dy*rstd + (x*p + q), p = -rstd*rstd*c2 and q = -rstd*(shift*c2 + c1),
// three instructions an element instead of five (the terms' rounding is far below the
// output's). A row whose p or q is not finite (an Inf in x or dy) takes the first
// form, which gives the infinities the reference gives where the folded one would
// add inf to -inf.
template <bool FOLD>
__device__ __forceinline__ uint4 layernorm_dx_slot(const uint4 &xv, const uint4 &gv,
                                                   const uint4 &wv, const BwdRow &R, float c1,
                                                   float c2, float p, float q)
{
    float o[VEC];
#pragma unroll
    for (int i = 0; i < VEC; ++i) {
        const float x = get_apart(xv, i), wdy = get_apart(wv, i) * get_apart(gv, i);
        o[i] = FOLD ? fmaf(wdy, R.rstd, fmaf(x, p, q)) : (wdy - fmaf(R.xhat(x), c2, c1)) * R.rstd;
    }
    return pack(o);
}

template <bool FOLD, int VPT, int CL>
__device__ __forceinline__ void layernorm_dx_chunk(const uint4 (&xv)[VPT], const uint4 (&gv)[VPT],
                                                   const Geo &G, int k, const BwdRow &R,
                                                   const uint4 (&wr)[VPT], const norms_t *w,
                                                   norms_t *dx, float c1, float c2, float p,
                                                   float q)
{
#pragma unroll
    for (int j = 0; j < VPT; ++j) {
        const int e0 = elem0<VPT, CL>(G, k, j), n = nvalid(G, e0, R.ok);
        const uint4 wv = param<true>(wr, w, G, j, e0, n);
        store_slot(dx + R.off, G, e0, n,
                   layernorm_dx_slot<FOLD>(xv[j], gv[j], wv, R, c1, c2, p, q));
    }
}

template <int VPT, int CL>
__device__ __forceinline__ void layernorm_dx(const uint4 (&xv)[VPT], const uint4 (&gv)[VPT],
                                             const Geo &G, int k, const BwdRow &R,
                                             const uint4 (&wr)[VPT], const norms_t *w, norms_t *dx,
                                             float c1, float c2)
{
    const float p = -R.rstd * R.rstd * c2, q = -R.rstd * fmaf(R.shift, c2, c1);
    if (VEC == 8 && isfinite(p) && isfinite(q))
        layernorm_dx_chunk<true, VPT, CL>(xv, gv, G, k, R, wr, w, dx, c1, c2, p, q);
    else
        layernorm_dx_chunk<false, VPT, CL>(xv, gv, G, k, R, wr, w, dx, c1, c2, p, q);
}

template <int VPT, int CL>
__device__ __forceinline__ void
layernorm_bwd(const norms_t *__restrict__ x, const norms_t *__restrict__ w,
              const norms_t *__restrict__ dy, const float *__restrict__ mean,
              const float *__restrict__ rstd, norms_t *__restrict__ dx, float *__restrict__ dw,
              float *__restrict__ db, int *__restrict__ queue, int M, int N)
{
    if (!bwd_block_ok<CL>() || !row_ok<VPT, CL>(N)) return;
    const Geo G = geometry<VPT, CL>(N);
    uint4 wr[VPT];
    load_params<true, VPT, CL>(wr, w, G);
    const Acc<VPT, 2> A = make_acc<VPT, 2>();
    if (!A.base) return;
    A.zero();
    bwd_workers<VPT, CL, 2, BwdRow>(
        G, queue, M, N, x, dy, wr,
        [&](int row) { return BwdRow::at(mean, rstd, row, M, N); },
        [&](const uint4(&xv)[VPT], const uint4(&gv)[VPT], int k, const BwdRow &R, float(&c)[2]) {
            layernorm_partials<VPT, CL>(xv, gv, G, k, R, wr, w, c, A, dw, db);
        },
        [&](const uint4(&xv)[VPT], const uint4(&gv)[VPT], int k, const BwdRow &R,
            const float(&c)[2]) {
            layernorm_dx<VPT, CL>(xv, gv, G, k, R, wr, launder_ptr(w), dx, c[0], c[1]);
        },
        [&](bool any) {
            if (G.nchunks == 1) flush<VPT, CL, 2>(G, dw, db, any);
        });
}

} // namespace norms

// ---- entry points: norms_layernorm_fwd<VPT>, norms_layernorm_bwd<VPT> -----------------

#define NORMS_LN_FWD_ARGS                                                                          \
    const norms_t *__restrict__ x, const norms_t *__restrict__ w, const norms_t *__restrict__ b,   \
        norms_t *__restrict__ y, float *__restrict__ mean, float *__restrict__ rstd,               \
        int *__restrict__ queue, int M, int N, float eps
#define NORMS_LN_BWD_ARGS                                                                          \
    const norms_t *__restrict__ x, const norms_t *__restrict__ w, const norms_t *__restrict__ dy,  \
        const float *__restrict__ mean, const float *__restrict__ rstd, norms_t *__restrict__ dx,  \
        float *__restrict__ dw, float *__restrict__ db, int *__restrict__ queue, int M, int N

template <int VPT>
__global__ void NORMS_CLUSTER_DIMS __launch_bounds__(NORMS_MAXT, NORMS_MINB)
    norms_layernorm_fwd(NORMS_LN_FWD_ARGS)
{
    norms::layernorm_fwd<VPT, NORMS_CL>(x, w, b, y, mean, rstd, queue, M, N, eps);
}

template <int VPT>
__global__ void NORMS_CLUSTER_DIMS __launch_bounds__(NORMS_MAXT, NORMS_MINB)
    norms_layernorm_bwd(NORMS_LN_BWD_ARGS)
{
    norms::layernorm_bwd<VPT, NORMS_CL>(x, w, dy, mean, rstd, dx, dw, db, queue, M, N);
}
