// References for the norms suite (layernorm.cuh, rmsnorm.cuh): the same argument lists
// and formulas, computed in double from the stored inputs and rounded once to the
// output type. Launch with 256 threads: blocks 0..M-1 each do a row; the backward
// references then have cdiv(N, 32) more blocks, each summing dw (and db) for 32
// columns over all rows, 8 row slices per column, combined in a fixed order.
//
// NaN and Inf follow from the formulas: a NaN anywhere in a row's x makes its
// statistics and its whole output NaN; an Inf makes layernorm's variance NaN and
// rmsnorm's rstd 0 (so the Inf element itself gives Inf*0 = NaN).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#ifndef NORMS_T
#error "norms_ref: compile with -DNORMS_T=float, __half or __nv_bfloat16"
#endif

typedef NORMS_T norms_t;

#define NORMS_REF_THREADS 256
#define NORMS_REF_COLS    32

__device__ __forceinline__ double ref_in(float v)
{
    return v;
}
__device__ __forceinline__ double ref_in(__half v)
{
    return __half2float(v);
}
__device__ __forceinline__ double ref_in(__nv_bfloat16 v)
{
    return __bfloat162float(v);
}

__device__ __forceinline__ void ref_out(float *p, double v)
{
    *p = (float)v;
}
__device__ __forceinline__ void ref_out(__half *p, double v)
{
    *p = __double2half(v);
}
__device__ __forceinline__ void ref_out(__nv_bfloat16 *p, double v)
{
    *p = __double2bfloat16(v);
}

// Sum over the block, the same value in every thread.
__device__ double ref_block_sum(double v)
{
    __shared__ double part[NORMS_REF_THREADS / 32];
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, off);
    if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = v;
    __syncthreads();
    double s = 0.0;
    for (int j = 0; j < (int)(blockDim.x >> 5); ++j)
        s += part[j];
    __syncthreads(); // part is reused by the next call
    return s;
}

extern "C" __global__ void norms_layernorm_fwd_ref(const norms_t *x, const norms_t *w,
                                                   const norms_t *b, norms_t *y, float *mean,
                                                   float *rstd, int *queue, int M, int N,
                                                   float eps)
{
    (void)queue; // the persistent variants' work queue: the reference leaves it at zero
    const int row = blockIdx.x;
    if (row >= M) return;
    const norms_t *xr = x + (size_t)row * N;
    double s = 0.0;
    for (int i = threadIdx.x; i < N; i += blockDim.x)
        s += ref_in(xr[i]);
    const double mu = ref_block_sum(s) / N;
    double q = 0.0;
    for (int i = threadIdx.x; i < N; i += blockDim.x) {
        const double d = ref_in(xr[i]) - mu;
        q += d * d;
    }
    const double rs = 1.0 / sqrt(ref_block_sum(q) / N + (double)eps);
    for (int i = threadIdx.x; i < N; i += blockDim.x)
        ref_out(y + (size_t)row * N + i, (ref_in(xr[i]) - mu) * rs * ref_in(w[i]) + ref_in(b[i]));
    if (threadIdx.x == 0) {
        mean[row] = (float)mu;
        rstd[row] = (float)rs;
    }
}

extern "C" __global__ void norms_rmsnorm_fwd_ref(const norms_t *x, const norms_t *w, norms_t *y,
                                                 float *rstd, int *queue, int M, int N, float eps)
{
    (void)queue;
    const int row = blockIdx.x;
    if (row >= M) return;
    const norms_t *xr = x + (size_t)row * N;
    double s = 0.0;
    for (int i = threadIdx.x; i < N; i += blockDim.x) {
        const double v = ref_in(xr[i]);
        s += v * v;
    }
    const double rs = 1.0 / sqrt(ref_block_sum(s) / N + (double)eps);
    for (int i = threadIdx.x; i < N; i += blockDim.x)
        ref_out(y + (size_t)row * N + i, ref_in(xr[i]) * rs * ref_in(w[i]));
    if (threadIdx.x == 0) rstd[row] = (float)rs;
}

// Column sums for the backward references: sum over rows of dy*xhat (into sw) and of
// dy (into sb), xhat = (x - mean)*rstd (mean == nullptr: rmsnorm, xhat = x*rstd).
// Returns false in threads whose column is past N.
__device__ bool ref_columns(const norms_t *x, const norms_t *dy, const float *mean,
                            const float *rstd, int M, int N, int first_col_block, double &sw,
                            double &sb)
{
    __shared__ double part[2][NORMS_REF_THREADS];
    const int slices = NORMS_REF_THREADS / NORMS_REF_COLS;
    const int c = threadIdx.x % NORMS_REF_COLS, slice = threadIdx.x / NORMS_REF_COLS;
    const int j = (blockIdx.x - first_col_block) * NORMS_REF_COLS + c;
    double a = 0.0, g = 0.0;
    if (j < N)
        for (int r = slice; r < M; r += slices) {
            const size_t at = (size_t)r * N + j;
            const double mu = mean ? (double)mean[r] : 0.0;
            const double dyv = ref_in(dy[at]);
            a += dyv * ((ref_in(x[at]) - mu) * (double)rstd[r]);
            g += dyv;
        }
    part[0][threadIdx.x] = a;
    part[1][threadIdx.x] = g;
    __syncthreads();
    sw = sb = 0.0;
    for (int k = 0; k < slices; ++k) {
        sw += part[0][k * NORMS_REF_COLS + c];
        sb += part[1][k * NORMS_REF_COLS + c];
    }
    return j < N && slice == 0;
}

extern "C" __global__ void norms_layernorm_bwd_ref(const norms_t *x, const norms_t *w,
                                                   const norms_t *dy, const float *mean,
                                                   const float *rstd, norms_t *dx, float *dw,
                                                   float *db, int *queue, int M, int N)
{
    (void)queue; // the kernel's work queue: the reference leaves its copy at zero
    if ((int)blockIdx.x >= M) {
        double sw, sb;
        if (!ref_columns(x, dy, mean, rstd, M, N, M, sw, sb)) return;
        const int j = (blockIdx.x - M) * NORMS_REF_COLS + threadIdx.x;
        dw[j] = (float)((double)dw[j] + sw);
        db[j] = (float)((double)db[j] + sb);
        return;
    }
    const int row = blockIdx.x;
    const size_t off = (size_t)row * N;
    const double mu = mean[row], rs = rstd[row];
    double c1 = 0.0, c2 = 0.0;
    for (int i = threadIdx.x; i < N; i += blockDim.x) {
        const double wdy = ref_in(w[i]) * ref_in(dy[off + i]);
        c1 += wdy;
        c2 += wdy * ((ref_in(x[off + i]) - mu) * rs);
    }
    c1 = ref_block_sum(c1) / N;
    c2 = ref_block_sum(c2) / N;
    for (int i = threadIdx.x; i < N; i += blockDim.x) {
        const double xh = (ref_in(x[off + i]) - mu) * rs;
        const double wdy = ref_in(w[i]) * ref_in(dy[off + i]);
        ref_out(dx + off + i, (wdy - (xh * c2 + c1)) * rs);
    }
}

extern "C" __global__ void norms_rmsnorm_bwd_ref(const norms_t *x, const norms_t *w,
                                                 const norms_t *dy, const float *rstd, norms_t *dx,
                                                 float *dw, int *queue, int M, int N)
{
    (void)queue;
    if ((int)blockIdx.x >= M) {
        double sw, sb;
        if (!ref_columns(x, dy, nullptr, rstd, M, N, M, sw, sb)) return;
        const int j = (blockIdx.x - M) * NORMS_REF_COLS + threadIdx.x;
        dw[j] = (float)((double)dw[j] + sw);
        return;
    }
    const int row = blockIdx.x;
    const size_t off = (size_t)row * N;
    const double rs = rstd[row];
    double c = 0.0;
    for (int i = threadIdx.x; i < N; i += blockDim.x)
        c += ref_in(w[i]) * ref_in(dy[off + i]) * (ref_in(x[off + i]) * rs);
    c = ref_block_sum(c) / N;
    for (int i = threadIdx.x; i < N; i += blockDim.x) {
        const double xh = ref_in(x[off + i]) * rs;
        ref_out(dx + off + i, (ref_in(w[i]) * ref_in(dy[off + i]) - xh * c) * rs);
    }
}
