// A program that uses a tuned header: it asks gemm_tuned.h (written at build time
// by gpubench_tuned_header() from the gpubench cache, or the checked-in fallback)
// for the sgemm configuration of a shape, and launches that instance of
// templates/sgemm.cuh. Only the configurations the header lists are compiled:
// GEMM_F32_TUNED_CONFIGS(X) expands X once per configuration.
//
//   consumer [M N K]       (default 1024 1024 1024)
//
// It checks the result against the double-accumulating reference kernel
// (templates/gemm_ref.cuh) and prints the configuration, how the lookup found it,
// the median time and TFLOP/s. Exit status: 0 right; 1 a wrong result; 2 bad
// arguments; 3 no usable GPU.
#include "gemm_tuned.h"

#include "gemm_ref.cuh"
#include "sgemm.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#define CHECK_CUDA(call)                                                                           \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            std::fprintf(stderr, "consumer: %s: %s (%s)\n", #call, cudaGetErrorString(e_),        \
                         cudaGetErrorName(e_));                                                    \
            std::exit(3);                                                                          \
        }                                                                                          \
    } while (0)

struct problem {
    int M, N, K;
    const float *A, *B;
    float *C;
};

// One tuned instance, with the grid and block of examples/gemm.lua.
template <int BM, int BN, int BK, int TM, int TN>
static void launch_sgemm(const problem &p, cudaStream_t stream)
{
    dim3 grid((p.N + BN - 1) / BN, (p.M + BM - 1) / BM);
    dim3 block((BM / TM) * (BN / TN));
    sgemm<BM, BN, BK, TM, TN><<<grid, block, 0, stream>>>(p.A, p.B, p.C, p.M, p.N, p.K);
}

// The configuration's instance, chosen by its id: one case per X(id, BK, BM, BN, TM, TN).
static bool launch_tuned(const gemm_f32_tuned_config *c, const problem &p, cudaStream_t stream)
{
    switch (c->id) {
#define CONSUMER_CASE(id, bk, bm, bn, tm, tn)                                                      \
    case id:                                                                                       \
        launch_sgemm<bm, bn, bk, tm, tn>(p, stream);                                               \
        return true;
        GEMM_F32_TUNED_CONFIGS(CONSUMER_CASE)
#undef CONSUMER_CASE
    }
    return false;
}

static bool parse_size(const char *text, int *out)
{
    char *end = nullptr;
    long v = std::strtol(text, &end, 10);
    if (!*text || *end || v < 1 || v > 65536) return false;
    *out = (int)v;
    return true;
}

// The device as gpubench fingerprints it: name/sm_XY/SMs.
static std::string fingerprint(const cudaDeviceProp &prop)
{
    return std::string(prop.name) + "/sm_" + std::to_string(prop.major) +
           std::to_string(prop.minor) + "/" + std::to_string(prop.multiProcessorCount);
}

static const char *match_name(int match)
{
    return match == GEMM_F32_TUNED_EXACT     ? "exact entry"
           : match == GEMM_F32_TUNED_NEAREST ? "nearest entry"
                                             : "default";
}

// |x - r| <= atol + rtol * |r|, NaN never passes (the tolerance of examples/gemm.lua).
static long count_wrong(const std::vector<float> &got, const std::vector<float> &want,
                        double *max_abs_err)
{
    long wrong = 0;
    *max_abs_err = 0;
    for (size_t i = 0; i < got.size(); i++) {
        double err = std::fabs((double)got[i] - (double)want[i]);
        if (!(err <= 1e-3 + 1e-3 * std::fabs((double)want[i]))) wrong++;
        if (err > *max_abs_err || std::isnan(err)) *max_abs_err = err;
    }
    return wrong;
}

// The median of n launches, each timed alone between two events, after a warm-up.
static float median_ms(const gemm_f32_tuned_config *c, const problem &p, cudaStream_t stream)
{
    const int n = 20;
    std::vector<cudaEvent_t> events(2 * n);
    for (auto &e : events)
        CHECK_CUDA(cudaEventCreate(&e));
    for (int i = 0; i < 3; i++)
        launch_tuned(c, p, stream);
    for (int i = 0; i < n; i++) {
        CHECK_CUDA(cudaEventRecord(events[2 * i], stream));
        launch_tuned(c, p, stream);
        CHECK_CUDA(cudaEventRecord(events[2 * i + 1], stream));
    }
    CHECK_CUDA(cudaStreamSynchronize(stream));
    std::vector<float> ms(n);
    for (int i = 0; i < n; i++)
        CHECK_CUDA(cudaEventElapsedTime(&ms[i], events[2 * i], events[2 * i + 1]));
    for (auto &e : events)
        CHECK_CUDA(cudaEventDestroy(e));
    std::sort(ms.begin(), ms.end());
    return (ms[n / 2 - 1] + ms[n / 2]) / 2;
}

static void fill_random(std::vector<float> &v, unsigned seed)
{
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> dist(-1.f, 1.f);
    for (auto &x : v)
        x = dist(gen);
}

int main(int argc, char **argv)
{
    int M = 1024, N = 1024, K = 1024;
    if (argc != 1 && (argc != 4 || !parse_size(argv[1], &M) || !parse_size(argv[2], &N) ||
                      !parse_size(argv[3], &K))) {
        std::fprintf(stderr, "usage: consumer [M N K]   (sizes from 1 to 65536)\n");
        return 2;
    }
    int n_devices = 0;
    cudaError_t e = cudaGetDeviceCount(&n_devices);
    if (e != cudaSuccess || n_devices == 0) {
        std::fprintf(stderr, "consumer: no usable CUDA GPU: %s\n",
                     e != cudaSuccess ? cudaGetErrorString(e) : "no devices");
        return 3;
    }
    cudaDeviceProp prop;
    CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
    std::string device = fingerprint(prop);
    std::printf("device   %s (table tuned on %s%s)\n", device.c_str(), GEMM_F32_TUNED_DEVICE,
                device == GEMM_F32_TUNED_DEVICE ? "" : ": another GPU, the times will differ");

    int match = -1;
    const gemm_f32_tuned_config *c = gemm_f32_tuned_lookup_match(K, M, N, &match);
    std::printf("shape    M=%d N=%d K=%d\n", M, N, K);
    std::printf("config   BM=%lld BN=%lld BK=%lld TM=%lld TN=%lld (%s", c->BM, c->BN, c->BK, c->TM,
                c->TN, match_name(match));
    if (match != GEMM_F32_TUNED_DEFAULT) std::printf(", tuned at %.4f ms there", c->median_ms);
    std::printf("; table %s)\n", GEMM_F32_TUNED_HASH);

    size_t a_n = (size_t)M * K, b_n = (size_t)K * N, c_n = (size_t)M * N;
    std::vector<float> A(a_n), B(b_n), C(c_n), R(c_n);
    fill_random(A, 1);
    fill_random(B, 2);
    float *dA, *dB, *dC, *dR;
    CHECK_CUDA(cudaMalloc(&dA, a_n * sizeof(float)));
    CHECK_CUDA(cudaMalloc(&dB, b_n * sizeof(float)));
    CHECK_CUDA(cudaMalloc(&dC, c_n * sizeof(float)));
    CHECK_CUDA(cudaMalloc(&dR, c_n * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(dA, A.data(), a_n * sizeof(float), cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(dB, B.data(), b_n * sizeof(float), cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemset(dC, 0xff, c_n * sizeof(float))); // NaN: an unwritten element fails
    cudaStream_t stream;
    CHECK_CUDA(cudaStreamCreate(&stream));

    problem p = {M, N, K, dA, dB, dC};
    gemm_ref_f32<<<dim3((N + 15) / 16, (M + 15) / 16), dim3(16, 16), 0, stream>>>(dA, dB, dR, M,
                                                                                 N, K);
    if (!launch_tuned(c, p, stream)) {
        std::fprintf(stderr, "consumer: configuration %d is not in GEMM_F32_TUNED_CONFIGS\n", c->id);
        return 1;
    }
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaStreamSynchronize(stream));
    CHECK_CUDA(cudaMemcpy(C.data(), dC, c_n * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(R.data(), dR, c_n * sizeof(float), cudaMemcpyDeviceToHost));
    double max_abs_err = 0;
    long wrong = count_wrong(C, R, &max_abs_err);

    float ms = median_ms(c, p, stream);
    CHECK_CUDA(cudaGetLastError());
    double tflops = 2.0 * M * N * K / (ms * 1e-3) / 1e12;
    std::printf("time     %.4f ms median of 20 launches, %.2f TFLOP/s\n", ms, tflops);
    std::printf("check    %s: %ld of %zu elements outside 1e-3 + 1e-3*|ref| (max abs err %.3g)\n",
                wrong ? "WRONG" : "ok", wrong, c_n, max_abs_err);
    CHECK_CUDA(cudaStreamDestroy(stream));
    for (float *d : {dA, dB, dC, dR})
        CHECK_CUDA(cudaFree(d));
    return wrong ? 1 : 0;
}
