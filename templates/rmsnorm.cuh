// RMSNorm over the last dimension of an M x N tensor, with a weight, in f32, f16 or
// bf16 with fp32 arithmetic (examples/suite/norms.lua).
//
//   forward:  rstd = 1/sqrt(sum(x^2)/N + eps), y = x*rstd*w; rstd is written per row
//             (f32) for the backward pass.
//   backward: xhat = x*rstd, c = sum(w*dy*xhat)/N, dx = (w*dy - xhat*c)*rstd;
//             dw += sum over rows of dy*xhat (f32, accumulated into).
//
// y rounds x*rstd*w once, from fp32, to the element type (Llama's reference rounds
// x*rstd to the input type before the weight; this suite's reference rounds once).
// The layout and reductions are in norms_common.cuh, the workers (the backward kernel
// and the persistent forward variant) and the column sums in norms_workers.cuh; dw is
// a sum of per-block partials added with
// atomics, so its last bits vary from run to run.
#pragma once

#include "norms_workers.cuh"

namespace norms
{

template <int VPT> __device__ __forceinline__ float chunk_sumsq(const uint4 (&v)[VPT])
{
    float s = 0.f;
#pragma unroll
    for (int j = 0; j < VPT; ++j)
#pragma unroll
        for (int i = 0; i < VEC; ++i) {
            const float a = get(v[j], i);
            s = fmaf(a, a, s); // elements outside the row are zeros
        }
    return s;
}

template <int VPT, int CL>
__device__ __forceinline__ void rmsnorm_store(const uint4 (&v)[VPT], const Geo &G, int k, bool ok,
                                              const norms_t *w, norms_t *yr, float rstd)
{
#pragma unroll
    for (int j = 0; j < VPT; ++j) {
        const int e0 = elem0<VPT, CL>(G, k, j), n = nvalid(G, e0, ok);
        const uint4 wv = load_param(w, G, e0, n);
        float o[VEC];
#pragma unroll
        for (int i = 0; i < VEC; ++i)
            o[i] = get(v[j], i) * rstd * get(wv, i);
        store_slot(yr, G, e0, n, pack(o));
    }
}

// The forward pass over one row, as layernorm_row.
template <int VPT, int CL, class H>
__device__ __forceinline__ void rmsnorm_row(const norms_t *x, const norms_t *w, norms_t *y,
                                            float *rstd_out, int M, int N, float eps, const Geo &G,
                                            int row, float *buf, const H &h)
{
    const bool ok = row < M;
    const size_t off = (size_t)(ok ? row : 0) * (size_t)N;
    uint4 v[VPT];
    float ss[1] = {0.f};
    for (int k = 0; k < G.nchunks; ++k) {
        load_row<VPT, CL>(v, x + off, G, k, ok);
        ss[0] += chunk_sumsq<VPT>(v);
    }
    h.ahead(x, nullptr, M, N);
    h.publish();
    row_sum<1, CL, false>(ss, G, buf, h);
    launder<VPT>(v);
    h.receive();
    const float rstd = rsqrtf(ss[0] / (float)N + eps);
    if (ok && G.rank == 0 && G.t == 0) rstd_out[row] = rstd;
    for (int k = 0; k < G.nchunks; ++k) {
        if (G.nchunks > 1) load_row<VPT, CL>(v, x + off, G, k, ok);
        rmsnorm_store<VPT, CL>(v, G, k, ok, w, y + off, rstd);
    }
}

// One row (or 128/TPR rows) per block or cluster, or workers over the queue, as
// layernorm_fwd.
template <int VPT, int CL>
__device__ __forceinline__ void rmsnorm_fwd(const norms_t *__restrict__ x,
                                            const norms_t *__restrict__ w, norms_t *__restrict__ y,
                                            float *__restrict__ rstd_out, int *__restrict__ queue,
                                            int M, int N, float eps)
{
    if (!block_ok(1) || !row_ok<VPT, CL>(N)) return;
    const Geo G = geometry<VPT, CL>(N);
    if constexpr (NORMS_PERSIST) {
        __shared__ float buf[2][32];
        __shared__ int next[1][2];
        run_workers<CL>(
            G, queue, next, M,
            [&](int row, int par, const Handoff<CL> &h) {
                rmsnorm_row<VPT, CL>(x, w, y, rstd_out, M, N, eps, G, row, buf[par], h);
            },
            [] {});
    } else {
        __shared__ float buf[32];
        __shared__ float slot[CL > 1 ? MAX_GPB : 1];
        rmsnorm_row<VPT, CL>(x, w, y, rstd_out, M, N, eps, G, (int)(blockIdx.x / CL) * G.gpb + G.g,
                             buf, OneRow{G, slot});
        if constexpr (CL > 1) cluster_wait(); // keep this block's memory until all read it
    }
}

// The backward kernel's per-row constants.
struct RmsRow {
    size_t off;
    bool ok;
    float rstd;
    static __device__ __forceinline__ RmsRow at(const float *rstd, int row, int M, int N)
    {
        RmsRow R;
        R.ok = row < M;
        R.off = (size_t)(R.ok ? row : 0) * (size_t)N;
        R.rstd = R.ok ? rstd[row] : 0.f;
        return R;
    }
};

// One chunk's partial sums: c += w*dy*xhat; dw partials to the block's accumulators
// when the row fits, else straight to memory. Elements outside the row are zeros, so
// aligned rows (whole or empty slots) need no test; a partial slot tests each one.
template <int VPT, int CL>
__device__ __forceinline__ void
rmsnorm_partials(const uint4 (&xv)[VPT], const uint4 (&gv)[VPT], const Geo &G, int k, bool ok,
                 float rs, const uint4 (&wr)[VPT], const norms_t *w, float &c, const Acc<VPT, 1> &A,
                 float *dw)
{
#pragma unroll
    for (int j = 0; j < VPT; ++j) {
        const int e0 = elem0<VPT, CL>(G, k, j), n = nvalid(G, e0, ok);
        const uint4 wv = param<true>(wr, w, G, j, e0, n);
        float pw[VEC];
#pragma unroll
        for (int i = 0; i < VEC; ++i) {
            const float xh = get(xv[j], i) * rs, g = get(gv[j], i);
            const bool in = G.aligned || i < n;
            pw[i] = in ? g * xh : 0.f;
            if (in) c = fmaf(get(wv, i) * g, xh, c);
        }
        if (G.nchunks == 1)
            A.add(0, j, pw);
        else
            add_slot(dw, pw, G, e0);
    }
}

// dx for a chunk: (w*dy - xhat*c)*rstd; for 16-bit types w*dy*rstd + x*p with
// p = -rstd*rstd*c, three instructions an element instead of four.
template <int VPT, int CL>
__device__ __forceinline__ void rmsnorm_dx(const uint4 (&xv)[VPT], const uint4 (&gv)[VPT],
                                           const Geo &G, int k, bool ok, float rs,
                                           const uint4 (&wr)[VPT], const norms_t *w, norms_t *dxr,
                                           float c)
{
    const float p = -rs * rs * c;
#pragma unroll
    for (int j = 0; j < VPT; ++j) {
        const int e0 = elem0<VPT, CL>(G, k, j), n = nvalid(G, e0, ok);
        const uint4 wv = param<true>(wr, w, G, j, e0, n);
        float o[VEC];
#pragma unroll
        for (int i = 0; i < VEC; ++i) {
            const float x = get_apart(xv[j], i), wdy = get_apart(wv, i) * get_apart(gv[j], i);
            o[i] = VEC == 8 ? fmaf(wdy, rs, x * p) : (wdy - x * rs * c) * rs;
        }
        store_slot(dxr, G, e0, n, pack(o));
    }
}

template <int VPT, int CL>
__device__ __forceinline__ void
rmsnorm_bwd(const norms_t *__restrict__ x, const norms_t *__restrict__ w,
            const norms_t *__restrict__ dy, const float *__restrict__ rstd,
            norms_t *__restrict__ dx, float *__restrict__ dw, int *__restrict__ queue, int M, int N)
{
    if (!bwd_block_ok<CL>() || !row_ok<VPT, CL>(N)) return;
    const Geo G = geometry<VPT, CL>(N);
    uint4 wr[VPT];
    load_params<true, VPT, CL>(wr, w, G);
    const Acc<VPT, 1> A = make_acc<VPT, 1>();
    if (!A.base) return;
    A.zero();
    bwd_workers<VPT, CL, 1, RmsRow>(
        G, queue, M, N, x, dy, wr, [&](int row) { return RmsRow::at(rstd, row, M, N); },
        [&](const uint4(&xv)[VPT], const uint4(&gv)[VPT], int k, const RmsRow &R, float(&c)[1]) {
            rmsnorm_partials<VPT, CL>(xv, gv, G, k, R.ok, R.rstd, wr, w, c[0], A, dw);
        },
        [&](const uint4(&xv)[VPT], const uint4(&gv)[VPT], int k, const RmsRow &R,
            const float(&c)[1]) {
            rmsnorm_dx<VPT, CL>(xv, gv, G, k, R.ok, R.rstd, wr, launder_ptr(w), dx + R.off, c[0]);
        },
        [&](bool any) {
            if (G.nchunks == 1) flush<VPT, CL, 1>(G, dw, nullptr, any);
        });
}

} // namespace norms

// ---- entry points: norms_rmsnorm_fwd<VPT>, norms_rmsnorm_bwd<VPT> -------------------

#define NORMS_RMS_FWD_ARGS                                                                         \
    const norms_t *__restrict__ x, const norms_t *__restrict__ w, norms_t *__restrict__ y,         \
        float *__restrict__ rstd, int *__restrict__ queue, int M, int N, float eps
#define NORMS_RMS_BWD_ARGS                                                                         \
    const norms_t *__restrict__ x, const norms_t *__restrict__ w, const norms_t *__restrict__ dy,  \
        const float *__restrict__ rstd, norms_t *__restrict__ dx, float *__restrict__ dw,          \
        int *__restrict__ queue, int M, int N

template <int VPT>
__global__ void NORMS_CLUSTER_DIMS __launch_bounds__(NORMS_MAXT, NORMS_MINB)
    norms_rmsnorm_fwd(NORMS_RMS_FWD_ARGS)
{
    norms::rmsnorm_fwd<VPT, NORMS_CL>(x, w, y, rstd, queue, M, N, eps);
}

template <int VPT>
__global__ void NORMS_CLUSTER_DIMS __launch_bounds__(NORMS_MAXT, NORMS_MINB)
    norms_rmsnorm_bwd(NORMS_RMS_BWD_ARGS)
{
    norms::rmsnorm_bwd<VPT, NORMS_CL>(x, w, dy, rstd, dx, dw, queue, M, N);
}
