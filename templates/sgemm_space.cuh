// Single-precision GEMM with many tuning knobs, for recording a large search space:
// C[M,N] = A[M,K] * B[K,N], row-major, any M, N, K.
//
// A block of (BM/TM) x (BN/TN) threads computes a BM x BN tile of C, each thread a
// TM x TN sub-tile in registers, from tiles of A and B staged in shared memory BK
// deep. A's tile is stored transposed (As[k][m]) so a thread's TM values of a column
// are contiguous. Tiles travel global -> registers -> shared memory.
//
// Knobs (template parameters) and what they change on the GPU:
//   BM, BN, BK  block tile and stage depth: reuse of each loaded value, occupancy.
//   TM, TN      per-thread tile: register reuse and register pressure.
//   VEC         1 or 4: width of global loads and stores (float or float4). The
//               vector path needs K and N multiples of 4; otherwise the kernel takes
//               the scalar path, so any shape is right.
//   STAGES      1: load, sync, compute, sync. 2: two shared buffers; the next tile is
//               fetched into registers while the current one is computed on, one
//               sync per tile.
//   UNROLL      unroll factor of the loop over a stage's BK columns.
//   PAD         floats added to each shared row (0 or a multiple of 4): moves the
//               transposed stores of A off a single bank.
//   GROUP       blocks are rastered in groups of GROUP tile-rows, so blocks running
//               together share tiles of B in L2 (1: plain row-major order).
//   LAYOUT      0: a thread's TM rows (TN columns) are contiguous. 1: they are split
//               into runs of 4 spread across the tile, so a warp's shared reads and
//               global stores cover contiguous spans. Needs TM, TN multiples of 4
//               where used (a dimension below 4 stays contiguous).
//
// The grid is one-dimensional: cdiv(M, BM) * cdiv(N, BN) blocks.

template <int T, int BM> struct sgs_run {
    // Runs of 4 (or the whole sub-tile when shorter): the unit LAYOUT spreads.
    static constexpr int W = T < 4 ? T : 4;
    // Offset in the tile of a thread's i-th element along a dimension of BM, for
    // thread coordinate t (0 .. BM/T-1).
    template <int LAYOUT> __device__ static __forceinline__ int at(int t, int i)
    {
        if constexpr (LAYOUT == 0 || T <= 4)
            return t * T + i;
        else
            return (i / W) * (BM / T) * W + t * W + (i % W);
    }
};

// One stage of A and B in registers: each thread's share of the tile loads, NA and
// NB vectors of VEC floats. Threads past the tile's last vector load nothing.
template <int BM, int BN, int BK, int VEC, int THREADS> struct sgs_stage {
    static constexpr int VA = BM * BK / VEC, VB = BK * BN / VEC;
    static constexpr int NA = (VA + THREADS - 1) / THREADS, NB = (VB + THREADS - 1) / THREADS;
    float a[NA][VEC], b[NB][VEC];

    // Loads VEC consecutive floats of row r of a rows x cols matrix from column c,
    // zero outside it; one vector load when vec says the row allows it.
    __device__ static __forceinline__ void load(const float *__restrict__ p, int rows, int cols,
                                                int r, int c, bool vec, float (&x)[VEC])
    {
        if constexpr (VEC == 4) {
            if (vec) {
                float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
                if (r < rows && c < cols)
                    v = __ldg(reinterpret_cast<const float4 *>(&p[(size_t)r * cols + c]));
                x[0] = v.x, x[1] = v.y, x[2] = v.z, x[3] = v.w;
                return;
            }
        }
#pragma unroll
        for (int j = 0; j < VEC; ++j)
            x[j] = (r < rows && c + j < cols) ? __ldg(&p[(size_t)r * cols + c + j]) : 0.f;
    }

    __device__ __forceinline__ void fetch(const float *__restrict__ A, const float *__restrict__ B,
                                          int M, int N, int K, int row0, int col0, int k0, int tid,
                                          bool vec)
    {
#pragma unroll
        for (int n = 0; n < NA; ++n) {
            int v = tid + n * THREADS;
            if (VA % THREADS == 0 || v < VA)
                load(A, M, K, row0 + v / (BK / VEC), k0 + (v % (BK / VEC)) * VEC, vec, a[n]);
        }
#pragma unroll
        for (int n = 0; n < NB; ++n) {
            int v = tid + n * THREADS;
            if (VB % THREADS == 0 || v < VB)
                load(B, K, N, k0 + v / (BN / VEC), col0 + (v % (BN / VEC)) * VEC, vec, b[n]);
        }
    }

    template <int LDA, int LDB>
    __device__ __forceinline__ void store(float *As, float *Bs, int tid) const
    {
#pragma unroll
        for (int n = 0; n < NA; ++n) {
            int v = tid + n * THREADS;
            if (VA % THREADS == 0 || v < VA) {
                int r = v / (BK / VEC), c = (v % (BK / VEC)) * VEC;
#pragma unroll
                for (int j = 0; j < VEC; ++j)
                    As[(c + j) * LDA + r] = a[n][j];
            }
        }
#pragma unroll
        for (int n = 0; n < NB; ++n) {
            int v = tid + n * THREADS;
            if (VB % THREADS == 0 || v < VB) {
                int r = v / (BN / VEC), c = (v % (BN / VEC)) * VEC;
                if constexpr (VEC == 4)
                    *reinterpret_cast<float4 *>(&Bs[r * LDB + c]) =
                        make_float4(b[n][0], b[n][1], b[n][2], b[n][3]);
                else
                    Bs[r * LDB + c] = b[n][0];
            }
        }
    }
};

// Reads T values of row k of a shared tile at the thread's offsets.
template <int T, int BM, int LAYOUT>
__device__ __forceinline__ void sgs_read(const float *row, int t, float (&x)[T])
{
    using R = sgs_run<T, BM>;
#pragma unroll
    for (int i = 0; i < T; i += R::W) {
        int o = R::template at<LAYOUT>(t, i);
        if constexpr (R::W == 4) {
            float4 v = *reinterpret_cast<const float4 *>(&row[o]);
            x[i] = v.x, x[i + 1] = v.y, x[i + 2] = v.z, x[i + 3] = v.w;
        } else {
#pragma unroll
            for (int j = 0; j < R::W; ++j)
                x[i + j] = row[o + j];
        }
    }
}

template <int BM, int BN, int BK, int TM, int TN, int UNROLL, int LAYOUT, int LDA, int LDB>
__device__ __forceinline__ void sgs_compute(const float *As, const float *Bs, int ty, int tx,
                                            float (&acc)[TM][TN])
{
#pragma unroll UNROLL
    for (int k = 0; k < BK; ++k) {
        float a[TM], b[TN];
        sgs_read<TM, BM, LAYOUT>(&As[k * LDA], ty, a);
        sgs_read<TN, BN, LAYOUT>(&Bs[k * LDB], tx, b);
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j)
                acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
}

template <int BM, int BN, int TM, int TN, int VEC, int LAYOUT>
__device__ __forceinline__ void sgs_store(float *__restrict__ C, const float (&acc)[TM][TN], int M,
                                          int N, int row0, int col0, int ty, int tx, bool vec)
{
    using RM = sgs_run<TM, BM>;
    using RN = sgs_run<TN, BN>;
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        int r = row0 + RM::template at<LAYOUT>(ty, i);
        if (r >= M) continue;
        float *out = &C[(size_t)r * N];
#pragma unroll
        for (int j = 0; j < TN; j += RN::W) {
            int c = col0 + RN::template at<LAYOUT>(tx, j);
            if constexpr (VEC == 4 && RN::W == 4) {
                if (vec) {
                    if (c < N)
                        *reinterpret_cast<float4 *>(&out[c]) =
                            make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
                    continue;
                }
            }
#pragma unroll
            for (int q = 0; q < RN::W; ++q)
                if (c + q < N) out[c + q] = acc[i][j + q];
        }
    }
}

// Which tile of C this block computes: groups of GROUP tile-rows, column-major
// inside a group.
template <int GROUP>
__device__ __forceinline__ void sgs_raster(int tiles_m, int tiles_n, int *tm, int *tn)
{
    int bid = blockIdx.x;
    if constexpr (GROUP == 1) {
        *tm = bid / tiles_n, *tn = bid % tiles_n;
    } else {
        int per_group = GROUP * tiles_n, first = (bid / per_group) * GROUP;
        int rows = min(tiles_m - first, GROUP), in = bid % per_group;
        *tm = first + in % rows, *tn = in / rows;
    }
}

template <int BM, int BN, int BK, int TM, int TN, int VEC, int STAGES, int UNROLL, int PAD,
          int GROUP, int LAYOUT>
__global__ void __launch_bounds__((BM / TM) * (BN / TN))
    sgemm_space(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C,
                int M, int N, int K)
{
    static_assert(BM % TM == 0 && BN % TN == 0, "BM % TM and BN % TN must be 0");
    static_assert(BK % VEC == 0 && BN % VEC == 0, "BK and BN must be multiples of VEC");
    static_assert(PAD % 4 == 0 && (STAGES == 1 || STAGES == 2), "PAD % 4, STAGES 1 or 2");
    constexpr int THREADS = (BM / TM) * (BN / TN);
    constexpr int LDA = BM + PAD, LDB = BN + PAD;
    __shared__ __align__(16) float As[STAGES][BK * LDA];
    __shared__ __align__(16) float Bs[STAGES][BK * LDB];

    const int tid = threadIdx.x;
    const int tx = tid % (BN / TN), ty = tid / (BN / TN);
    int tile_m, tile_n;
    sgs_raster<GROUP>((M + BM - 1) / BM, (N + BN - 1) / BN, &tile_m, &tile_n);
    const int row0 = tile_m * BM, col0 = tile_n * BN;
    const bool vec = K % 4 == 0 && N % 4 == 0;

    float acc[TM][TN] = {};
    sgs_stage<BM, BN, BK, VEC, THREADS> st;
    const int tiles = (K + BK - 1) / BK;
    if constexpr (STAGES == 1) {
        for (int t = 0; t < tiles; ++t) {
            st.fetch(A, B, M, N, K, row0, col0, t * BK, tid, vec);
            st.template store<LDA, LDB>(As[0], Bs[0], tid);
            __syncthreads();
            sgs_compute<BM, BN, BK, TM, TN, UNROLL, LAYOUT, LDA, LDB>(As[0], Bs[0], ty, tx, acc);
            __syncthreads();
        }
    } else {
        st.fetch(A, B, M, N, K, row0, col0, 0, tid, vec);
        st.template store<LDA, LDB>(As[0], Bs[0], tid);
        __syncthreads();
        for (int t = 0; t < tiles; ++t) {
            const int cur = t & (STAGES - 1);
            if (t + 1 < tiles) st.fetch(A, B, M, N, K, row0, col0, (t + 1) * BK, tid, vec);
            sgs_compute<BM, BN, BK, TM, TN, UNROLL, LAYOUT, LDA, LDB>(As[cur], Bs[cur], ty, tx,
                                                                      acc);
            // The other buffer was last read in the previous tile, before its sync.
            if (t + 1 < tiles) st.template store<LDA, LDB>(As[cur ^ 1], Bs[cur ^ 1], tid);
            __syncthreads();
        }
    }
    sgs_store<BM, BN, TM, TN, VEC, LAYOUT>(C, acc, M, N, row0, col0, ty, tx, vec);
}
