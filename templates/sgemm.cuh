// Single-precision GEMM, register-tiled: C[M,N] = A[M,K] * B[K,N], row-major.
//
// A block of (BM/TM) x (BN/TN) threads computes a BM x BN tile of C; each thread
// keeps a TM x TN sub-tile in registers and accumulates outer products of a
// column of A's tile and a row of B's tile, both staged in shared memory BK deep.
// A's tile is stored transposed (As[k][m]) so a thread reads its TM values of a
// column as one contiguous run.
//
// Any M, N, K work: out-of-range elements load as zero and are never stored.
// When K and N are multiples of 4 (and BK, BN allow it), global loads and stores
// are 16-byte vectors; otherwise the kernel takes a scalar path.
//
// Tuning parameters: BM, BN (tile of C), BK (depth of a shared-memory stage),
// TM, TN (per-thread tile). BM % TM == 0 and BN % TN == 0 are required.

template <int BM, int BN, int BK>
__device__ __forceinline__ void sgemm_load_vec(const float *__restrict__ A,
                                               const float *__restrict__ B, float (*As)[BM],
                                               float (*Bs)[BN], int M, int N, int K, int row0,
                                               int col0, int k0, int tid, int threads)
{
    for (int v = tid; v < BM * BK / 4; v += threads) {
        int r = v / (BK / 4), c = (v % (BK / 4)) * 4;
        int gr = row0 + r, gc = k0 + c;
        float4 x = make_float4(0.f, 0.f, 0.f, 0.f);
        if (gr < M && gc < K) x = *reinterpret_cast<const float4 *>(&A[(size_t)gr * K + gc]);
        As[c + 0][r] = x.x;
        As[c + 1][r] = x.y;
        As[c + 2][r] = x.z;
        As[c + 3][r] = x.w;
    }
    for (int v = tid; v < BK * BN / 4; v += threads) {
        int r = v / (BN / 4), c = (v % (BN / 4)) * 4;
        int gr = k0 + r, gc = col0 + c;
        float4 x = make_float4(0.f, 0.f, 0.f, 0.f);
        if (gr < K && gc < N) x = *reinterpret_cast<const float4 *>(&B[(size_t)gr * N + gc]);
        *reinterpret_cast<float4 *>(&Bs[r][c]) = x;
    }
}

template <int BM, int BN, int BK>
__device__ __forceinline__ void sgemm_load_scalar(const float *__restrict__ A,
                                                  const float *__restrict__ B, float (*As)[BM],
                                                  float (*Bs)[BN], int M, int N, int K, int row0,
                                                  int col0, int k0, int tid, int threads)
{
    for (int e = tid; e < BM * BK; e += threads) {
        int r = e / BK, c = e % BK;
        int gr = row0 + r, gc = k0 + c;
        As[c][r] = (gr < M && gc < K) ? A[(size_t)gr * K + gc] : 0.f;
    }
    for (int e = tid; e < BK * BN; e += threads) {
        int r = e / BN, c = e % BN;
        int gr = k0 + r, gc = col0 + c;
        Bs[r][c] = (gr < K && gc < N) ? B[(size_t)gr * N + gc] : 0.f;
    }
}

template <int TM, int TN, int BM, int BN>
__device__ __forceinline__ void sgemm_fetch(const float (*As)[BM], const float (*Bs)[BN], int k,
                                            int ty, int tx, float (&a)[TM], float (&b)[TN])
{
    if constexpr (TM % 4 == 0 && BM % 4 == 0) {
#pragma unroll
        for (int i = 0; i < TM; i += 4) {
            float4 x = *reinterpret_cast<const float4 *>(&As[k][ty * TM + i]);
            a[i] = x.x, a[i + 1] = x.y, a[i + 2] = x.z, a[i + 3] = x.w;
        }
    } else {
#pragma unroll
        for (int i = 0; i < TM; ++i)
            a[i] = As[k][ty * TM + i];
    }
    if constexpr (TN % 4 == 0 && BN % 4 == 0) {
#pragma unroll
        for (int j = 0; j < TN; j += 4) {
            float4 x = *reinterpret_cast<const float4 *>(&Bs[k][tx * TN + j]);
            b[j] = x.x, b[j + 1] = x.y, b[j + 2] = x.z, b[j + 3] = x.w;
        }
    } else {
#pragma unroll
        for (int j = 0; j < TN; ++j)
            b[j] = Bs[k][tx * TN + j];
    }
}

template <int TM, int TN>
__device__ __forceinline__ void sgemm_store(float *__restrict__ C, const float (&acc)[TM][TN],
                                            int M, int N, int row, int col, bool vec)
{
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        if (row + i >= M) break;
        float *out = &C[(size_t)(row + i) * N];
        if constexpr (TN % 4 == 0) {
            if (vec) {
#pragma unroll
                for (int j = 0; j < TN; j += 4)
                    if (col + j < N)
                        *reinterpret_cast<float4 *>(&out[col + j]) =
                            make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
                continue;
            }
        }
#pragma unroll
        for (int j = 0; j < TN; ++j)
            if (col + j < N) out[col + j] = acc[i][j];
    }
}

template <int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__((BM / TM) * (BN / TN))
    sgemm(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C, int M,
          int N, int K)
{
    static_assert(BM % TM == 0 && BN % TN == 0, "BM % TM and BN % TN must be 0");
    constexpr int THREADS = (BM / TM) * (BN / TN);
    constexpr bool VEC_TILES = BK % 4 == 0 && BN % 4 == 0;
    __shared__ __align__(16) float As[BK][BM];
    __shared__ __align__(16) float Bs[BK][BN];

    const int tid = threadIdx.x;
    const int tx = tid % (BN / TN), ty = tid / (BN / TN);
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    const bool vec = VEC_TILES && K % 4 == 0 && N % 4 == 0;

    float acc[TM][TN] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
        if (vec) sgemm_load_vec<BM, BN, BK>(A, B, As, Bs, M, N, K, row0, col0, k0, tid, THREADS);
        else sgemm_load_scalar<BM, BN, BK>(A, B, As, Bs, M, N, K, row0, col0, k0, tid, THREADS);
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float a[TM], b[TN];
            sgemm_fetch<TM, TN, BM, BN>(As, Bs, k, ty, tx, a, b);
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j)
                    acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }
    sgemm_store<TM, TN>(C, acc, M, N, row0 + ty * TM, col0 + tx * TN, vec);
}
