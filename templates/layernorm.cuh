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
// The statistics are two-pass on the row held in registers (mean first, then the
// squared deviations from it), which costs no extra memory traffic. With a cluster, each
// block's (sum, squared deviations from its own mean) are combined by Chan's formula, so
// the cluster needs one exchange per row. The layout and the reductions are in
// norms_common.cuh; the backward kernels' work queue and column sums in norms_bwd.cuh.
//
// dw and db are sums of per-block partials added with atomics: the order of the adds
// varies from run to run, so the last bits of dw and db are not deterministic.
#pragma once

#include "norms_bwd.cuh"

namespace norms
{

// Sum of a chunk's values (elements outside the row are zeros).
template <int VPT> __device__ __forceinline__ float chunk_sum(const uint4 (&v)[VPT])
{
    float s = 0.f;
#pragma unroll
    for (int j = 0; j < VPT; ++j)
#pragma unroll
        for (int i = 0; i < VEC; ++i)
            s += get(v[j], i);
    return s;
}

// Sum of a chunk's squared deviations from m, over the row's elements only.
template <int VPT, int CL>
__device__ __forceinline__ float chunk_sqdev(const uint4 (&v)[VPT], const Geo &G, int k, bool ok,
                                             float m)
{
    float q = 0.f;
#pragma unroll
    for (int j = 0; j < VPT; ++j) {
        const int n = nvalid(G, elem0<VPT, CL>(G, k, j), ok);
#pragma unroll
        for (int i = 0; i < VEC; ++i) {
            const float d = get(v[j], i) - m;
            if (i < n) q = fmaf(d, d, q);
        }
    }
    return q;
}

// Chan's combination of the cluster's per-block (sum, squared deviations from the
// block's mean) into the row's mean and squared deviations from it.
template <int CL>
__device__ __forceinline__ void chan(const float (&all)[CL][2], const Geo &G, float &mean,
                                     float &m2)
{
    float total = 0.f;
#pragma unroll
    for (int r = 0; r < CL; ++r)
        total += all[r][0];
    mean = total / (float)G.N;
    m2 = 0.f;
#pragma unroll
    for (int r = 0; r < CL; ++r) {
        const int n = portion<CL>(G, r);
        if (n == 0) continue;
        const float d = all[r][0] / (float)n - mean;
        m2 += all[r][1] + (float)n * d * d;
    }
}

// y for a chunk: (x - mean)*rstd*w + b.
template <int VPT, int CL>
__device__ __forceinline__ void layernorm_store(const uint4 (&v)[VPT], const Geo &G, int k, bool ok,
                                                const norms_t *w, const norms_t *b, norms_t *yr,
                                                float mean, float rstd)
{
#pragma unroll
    for (int j = 0; j < VPT; ++j) {
        const int e0 = elem0<VPT, CL>(G, k, j), n = nvalid(G, e0, ok);
        const uint4 wv = load_param(w, G, e0, n), bv = load_param(b, G, e0, n);
        float o[VEC];
#pragma unroll
        for (int i = 0; i < VEC; ++i)
            o[i] = fmaf((get(v[j], i) - mean) * rstd, get(wv, i), get(bv, i));
        store_slot(yr, G, e0, n, pack(o));
    }
}

template <int VPT, int CL>
__device__ __forceinline__ void
layernorm_fwd(const norms_t *__restrict__ x, const norms_t *__restrict__ w,
              const norms_t *__restrict__ b, norms_t *__restrict__ y, float *__restrict__ mean_out,
              float *__restrict__ rstd_out, int M, int N, float eps)
{
    __shared__ float buf[2][32];
    __shared__ float slot[CL > 1 ? MAX_GPB * 2 : 1]; // cluster exchange: (sum, m2) per row
    if (!block_ok(1)) return;
    const Geo G = geometry<VPT, CL>(N);
    const int row = (int)(blockIdx.x / CL) * G.gpb + G.g;
    const bool ok = row < M;
    const size_t off = (size_t)(ok ? row : 0) * (size_t)N;

    uint4 v[VPT];
    float sum[1] = {0.f};
    for (int k = 0; k < G.nchunks; ++k) {
        load_row<VPT, CL>(v, x + off, G, k, ok);
        sum[0] += chunk_sum<VPT>(v);
    }
    group_sum<1, false>(sum, G, buf[0]);
    launder<VPT>(v);
    const int nb = portion<CL>(G, G.rank);
    float mean = nb > 0 ? sum[0] / (float)nb : 0.f;
    float m2[1] = {0.f};
    for (int k = 0; k < G.nchunks; ++k) {
        if (G.nchunks > 1) load_row<VPT, CL>(v, x + off, G, k, ok);
        m2[0] += chunk_sqdev<VPT, CL>(v, G, k, ok, mean);
    }
    group_sum<1, false>(m2, G, buf[1]);
    launder<VPT>(v);
    float var_n = m2[0];
    if constexpr (CL > 1) {
        const float part[2] = {sum[0], m2[0]};
        float all[CL][2];
        cluster_gather<2, CL>(part, all, G, slot);
        cluster_arrive(); // done with the other blocks' shared memory
        chan<CL>(all, G, mean, var_n);
    }
    const float rstd = rsqrtf(var_n / (float)N + eps);
    if (ok && G.rank == 0 && G.t == 0) {
        mean_out[row] = mean;
        rstd_out[row] = rstd;
    }
    for (int k = 0; k < G.nchunks; ++k) {
        if (G.nchunks > 1) load_row<VPT, CL>(v, x + off, G, k, ok);
        layernorm_store<VPT, CL>(v, G, k, ok, w, b, y + off, mean, rstd);
    }
    if constexpr (CL > 1) cluster_wait(); // keep this block's shared memory until all read it
}

// The backward kernel's per-row constants.
struct BwdRow {
    size_t off;
    bool ok;
    float mean, rstd;
};

// One chunk's partial sums: c[0] += w*dy, c[1] += w*dy*xhat; dw/db partials go to the
// block's accumulators when the row fits, else straight to memory.
template <int VPT, int CL>
__device__ __forceinline__ void layernorm_partials(const uint4 (&xv)[VPT], const uint4 (&gv)[VPT],
                                                   const Geo &G, int k, const BwdRow &R,
                                                   const norms_t *w, float (&c)[2],
                                                   const Acc<VPT, 2> &A, float *dw, float *db)
{
#pragma unroll
    for (int j = 0; j < VPT; ++j) {
        const int e0 = elem0<VPT, CL>(G, k, j), n = nvalid(G, e0, R.ok);
        const uint4 wv = load_param(w, G, e0, n);
        float pw[VEC], pb[VEC];
#pragma unroll
        for (int i = 0; i < VEC; ++i) {
            const float xh = (get(xv[j], i) - R.mean) * R.rstd, g = get(gv[j], i);
            const float wdy = get(wv, i) * g;
            pw[i] = i < n ? g * xh : 0.f;
            pb[i] = i < n ? g : 0.f;
            if (i < n) {
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

// dx for a chunk: (w*dy - (xhat*c2 + c1))*rstd.
template <int VPT, int CL>
__device__ __forceinline__ void layernorm_dx(const uint4 (&xv)[VPT], const uint4 (&gv)[VPT],
                                             const Geo &G, int k, const BwdRow &R, const norms_t *w,
                                             norms_t *dx, float c1, float c2)
{
#pragma unroll
    for (int j = 0; j < VPT; ++j) {
        const int e0 = elem0<VPT, CL>(G, k, j), n = nvalid(G, e0, R.ok);
        const uint4 wv = load_param(w, G, e0, n);
        float o[VEC];
#pragma unroll
        for (int i = 0; i < VEC; ++i) {
            const float xh = (get(xv[j], i) - R.mean) * R.rstd;
            o[i] = (get(wv, i) * get(gv[j], i) - fmaf(xh, c2, c1)) * R.rstd;
        }
        store_slot(dx + R.off, G, e0, n, pack(o));
    }
}

template <int VPT, int CL>
__device__ __forceinline__ void
layernorm_bwd(const norms_t *__restrict__ x, const norms_t *__restrict__ w,
              const norms_t *__restrict__ dy, const float *__restrict__ mean,
              const float *__restrict__ rstd, norms_t *__restrict__ dx, float *__restrict__ dw,
              float *__restrict__ db, int *__restrict__ queue, int M, int N)
{
    __shared__ float buf[2][WIDE_ROWS * 2 * 32];
    __shared__ float slot[2][2];
    __shared__ int next[WIDE_ROWS][2];
    __shared__ int any;
    if (!bwd_block_ok<CL>()) return;
    const Geo G = geometry<VPT, CL>(N);
    const Acc<VPT, 2> A = make_acc<VPT, 2>();
    if (!A.base) return;
    A.zero();
    if (threadIdx.x == 0 && threadIdx.y == 0) any = 0;
    __syncthreads();

    Worker W = make_worker<CL>(G, queue, next);
    const int units = (M + W.rpu - 1) / W.rpu;
    int u = first_unit<CL>(W, G);
    for (int it = 0; u < units; ++it) {
        const int par = it & 1;
        take<CL>(W, G, par ^ 1);
        const int row = u * W.rpu + W.sub;
        BwdRow R;
        R.ok = row < M;
        R.off = (size_t)(R.ok ? row : 0) * (size_t)N;
        R.mean = R.ok ? mean[row] : 0.f;
        R.rstd = R.ok ? rstd[row] : 0.f;
        uint4 xv[VPT], gv[VPT];
        float c[2] = {0.f, 0.f};
        for (int k = 0; k < G.nchunks; ++k) {
            load_row<VPT, CL>(xv, x + R.off, G, k, R.ok);
            load_row<VPT, CL>(gv, dy + R.off, G, k, R.ok);
            layernorm_partials<VPT, CL>(xv, gv, G, k, R, w, c, A, dw, db);
        }
        row_sum<2, CL, CL == 1>(c, G, buf[par], slot[par]);
        launder<VPT>(xv);
        launder<VPT>(gv);
        const int u_next = receive<CL>(W, G, par ^ 1);
        const float c1 = c[0] / (float)N, c2 = c[1] / (float)N;
        for (int k = 0; k < G.nchunks; ++k) {
            if (G.nchunks > 1) {
                load_row<VPT, CL>(xv, x + R.off, G, k, R.ok);
                load_row<VPT, CL>(gv, dy + R.off, G, k, R.ok);
            }
            layernorm_dx<VPT, CL>(xv, gv, G, k, R, launder_ptr(w), dx, c1, c2);
        }
        u = u_next;
        if (G.t == 0) any = 1; // every block of a cluster flushes its own columns
    }
    if constexpr (CL > 1) cluster_sync(); // every read of another block's memory is done
    __syncthreads();
    if (G.nchunks == 1) flush<VPT, CL, 2>(G, dw, db, any != 0);
    queue_done(queue);
}

} // namespace norms

// ---- entry points: norms_layernorm_fwd<VPT>, norms_layernorm_bwd<VPT> -----------------

#define NORMS_LN_FWD_ARGS                                                                          \
    const norms_t *__restrict__ x, const norms_t *__restrict__ w, const norms_t *__restrict__ b,   \
        norms_t *__restrict__ y, float *__restrict__ mean, float *__restrict__ rstd, int M, int N, \
        float eps
#define NORMS_LN_BWD_ARGS                                                                          \
    const norms_t *__restrict__ x, const norms_t *__restrict__ w, const norms_t *__restrict__ dy,  \
        const float *__restrict__ mean, const float *__restrict__ rstd, norms_t *__restrict__ dx,  \
        float *__restrict__ dw, float *__restrict__ db, int *__restrict__ queue, int M, int N

template <int VPT>
__global__ void NORMS_CLUSTER_DIMS __launch_bounds__(NORMS_MAXT)
    norms_layernorm_fwd(NORMS_LN_FWD_ARGS)
{
    norms::layernorm_fwd<VPT, NORMS_CL>(x, w, b, y, mean, rstd, M, N, eps);
}

template <int VPT>
__global__ void NORMS_CLUSTER_DIMS __launch_bounds__(NORMS_MAXT)
    norms_layernorm_bwd(NORMS_LN_BWD_ARGS)
{
    norms::layernorm_bwd<VPT, NORMS_CL>(x, w, dy, mean, rstd, dx, dw, db, queue, M, N);
}
