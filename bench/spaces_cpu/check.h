// The checks bench/spaces_cpu_check.sh instantiates: each runs one configuration of
// a space template on the CPU (shim.h) over three shapes (ragged edges and whole
// tiles; K or W not a multiple of 4, so the scalar path, and multiples of 4, so the
// vector path) and compares every output with a double reference.
#pragma once
#include "shim.h"
#include <cstdio>
#include <random>
#define RADIUS 2 // conv2d_space.lua records R = 2
#include "sgemm_space.cuh"
#include "conv2d_space.cuh"

// Unit normals from a fixed seed.
static std::vector<float> randn(size_t n, unsigned seed)
{
    std::mt19937 g(seed);
    std::normal_distribution<float> d;
    std::vector<float> v(n);
    for (auto &x : v)
        x = d(g);
    return v;
}

// 1 when some element is further than tol * (1 + |ref|) from the reference (NaN,
// the poison of an element never written, always is); prints the first.
static int compare(const std::vector<float> &got, const std::vector<double> &ref, double tol,
                   const char *what, const char *cfg, const char *shape)
{
    int bad = 0;
    for (size_t i = 0; i < ref.size(); ++i)
        if (!(std::fabs(got[i] - ref[i]) <= tol * (1 + std::fabs(ref[i])))) {
            if (!bad)
                printf("%s<%s> %s: wrong at %zu: %g vs %g\n", what, cfg, shape, i, got[i], ref[i]);
            ++bad;
        }
    return bad != 0;
}

// One sgemm_space configuration, launched as sgemm_space.lua launches it.
template <int BM, int BN, int BK, int TM, int TN, int VEC, int STAGES, int UNROLL, int PAD,
          int GROUP, int LAYOUT>
int check_gemm(const char *cfg)
{
    int bad = 0;
    const int shapes[][3] = {{70, 52, 37}, {200, 132, 36}, {64, 256, 64}};
    for (auto &s : shapes) {
        int M = s[0], N = s[1], K = s[2];
        auto A = randn((size_t)M * K, 1), B = randn((size_t)K * N, 2);
        std::vector<float> C((size_t)M * N, NAN);
        std::vector<double> R((size_t)M * N);
        for (int i = 0; i < M; ++i)
            for (int j = 0; j < N; ++j) {
                double a = 0;
                for (int k = 0; k < K; ++k)
                    a += (double)A[i * K + k] * B[k * N + j];
                R[i * N + j] = a;
            }
        int tiles = ((M + BM - 1) / BM) * ((N + BN - 1) / BN);
        launch({tiles, 1, 1}, {(BM / TM) * (BN / TN), 1, 1}, [&] {
            sgemm_space<BM, BN, BK, TM, TN, VEC, STAGES, UNROLL, PAD, GROUP, LAYOUT>(
                A.data(), B.data(), C.data(), M, N, K);
        });
        char sh[64];
        snprintf(sh, sizeof sh, "M=%d,N=%d,K=%d", M, N, K);
        bad |= compare(C, R, 1e-4, "sgemm_space", cfg, sh);
    }
    return bad;
}

// One conv2d_space configuration (5 x 5 filter), launched as conv2d_space.lua does.
template <int TX, int TY, int RX, int RY, int LAYOUT, int SMEM, int VEC, int WIN, int FILT,
          int UNROLL>
int check_conv(const char *cfg)
{
    int bad = 0;
    const int shapes[][2] = {{37, 53}, {64, 128}, {19, 260}};
    for (auto &s : shapes) {
        int H = s[0], W = s[1], F = 5, R = 2;
        auto in = randn((size_t)H * W, 3), f = randn(F * F, 4);
        std::vector<float> out((size_t)H * W, NAN);
        std::vector<double> ref((size_t)H * W);
        for (int y = 0; y < H; ++y)
            for (int x = 0; x < W; ++x) {
                double a = 0;
                for (int dy = 0; dy < F; ++dy)
                    for (int dx = 0; dx < F; ++dx) {
                        int sy = y + dy - R, sx = x + dx - R;
                        if (sy >= 0 && sy < H && sx >= 0 && sx < W)
                            a += (double)f[dy * F + dx] * in[sy * W + sx];
                    }
                ref[y * W + x] = a;
            }
        dim3 grid{(W + TX * RX - 1) / (TX * RX), (H + TY * RY - 1) / (TY * RY), 1};
        launch(grid, {TX, TY, 1}, [&] {
            conv2d_space<TX, TY, RX, RY, LAYOUT, SMEM, VEC, WIN, FILT, UNROLL>(in.data(), f.data(),
                                                                               out.data(), H, W);
        });
        char sh[64];
        snprintf(sh, sizeof sh, "H=%d,W=%d", H, W);
        bad |= compare(out, ref, 1e-4, "conv2d_space", cfg, sh);
    }
    return bad;
}
