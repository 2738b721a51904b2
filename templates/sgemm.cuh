// Single-precision GEMM on the FP32 pipes: C[M,N] = A[M,K] * B[K,N], row-major.
//
// A block of (BM/TM) x (BN/TN) threads computes a BM x BN tile of C; each thread
// keeps TM x TN of it in registers, as (TM/4) x (TN/4) pieces of 4 x 4. The 32
// threads of a warp form an LY x LX grid over a warp tile of (LY*TM) x (LX*TN), and
// a thread's pieces lie LY*4 rows and LX*4 columns apart in it: for each k a warp
// then reads LY consecutive float4s of A's slice and LX of B's from shared memory,
// broadcasts without bank conflicts.
//
// Slices BK deep go from global to shared memory by asynchronous copies (cp.async),
// A's transposed (As[k][m]) so that four rows of a column are one float4. Shared
// memory holds two slices: the copies of the next are in flight while the block
// computes on the current one. One __syncthreads per slice.
//
// Any M, N, K work: out-of-range elements arrive as zeros and are never stored.
// When K and N are multiples of 4, B's copies are 16 bytes and C's stores float4s;
// otherwise the kernel takes the scalar path, the same loop with 4-byte copies and
// element stores. A's copies are 4 bytes on both, each to its transposed place.
//
// Tuning parameters: BM, BN (tile of C), BK (depth of a slice), TM, TN (a thread's
// tile, multiples of 4). BN/TN must be a multiple of 8, or 4 with BM/TM a multiple
// of 8, so that warps tile the block.

// A configuration's layout: threads, the warp's grid of lanes, shared strides, and
// the registers the compiler is held to.
template <int BM_, int BN_, int BK_, int TM_, int TN_> struct sgemm_geom {
    static constexpr int BM = BM_, BN = BN_, BK = BK_, TM = TM_, TN = TN_;
    static constexpr int THREADS = (BM / TM) * (BN / TN);
    static constexpr int LX = BN / TN < 8 ? BN / TN : 8, LY = 32 / LX;
    static constexpr int WM = LY * TM, WN = LX * TN;
    // Four floats of padding per row of A's shared slice put the transposed stores of
    // neighbouring k on different banks, where the 48 KiB of static shared memory
    // leaves room for them.
    static constexpr int PAD = 2 * BK * (BM + 4 + BN) * 4 <= 48 * 1024 ? 4 : 0;
    static constexpr int LDA = BM + PAD;
    // 128 registers a thread keeps two blocks of 256 threads on an SM, so one block
    // computes while the other waits at its barrier; a tile of more than 64
    // accumulators needs more than 128 and gets the whole 255.
    static constexpr int REGS = TM * TN <= 64 ? 128 : 255;
    static constexpr int MIN_BLOCKS = 65536 / (THREADS * REGS) > 0 ? 65536 / (THREADS * REGS) : 1;

    static_assert(BM % TM == 0 && BN % TN == 0, "BM % TM and BN % TN must be 0");
    static_assert(TM % 4 == 0 && TN % 4 == 0 && BK % 4 == 0, "TM, TN and BK: multiples of 4");
    static_assert(LX * LY == 32 && (BN / TN) % LX == 0 && (BM / TM) % LY == 0,
                  "warps must tile the block: BN/TN a multiple of 8 (or 4, with BM/TM of 8)");
};

// Asynchronous copies from global to shared memory (cp.async, sm_80 and newer):
// BYTES from src, or zeros where in is false (past an edge). They use no registers,
// so the copies of the next slice are in flight during the whole compute of the
// current one. Before sm_80 they are plain loads and stores, done at once.
template <int BYTES> __device__ __forceinline__ void sgemm_cp(float *dst, const float *src, bool in)
{
#if __CUDA_ARCH__ >= 800
    unsigned to = (unsigned)__cvta_generic_to_shared(dst);
    if constexpr (BYTES == 16)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(to), "l"(src),
                     "r"(in ? 16 : 0)
                     : "memory");
    else
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(to), "l"(src),
                     "r"(in ? 4 : 0)
                     : "memory");
#else
    if constexpr (BYTES == 16)
        *reinterpret_cast<float4 *>(dst) =
            in ? *reinterpret_cast<const float4 *>(src) : make_float4(0.f, 0.f, 0.f, 0.f);
    else
        *dst = in ? *src : 0.f;
#endif
}

// Closes the group of copies issued so far.
__device__ __forceinline__ void sgemm_cp_commit()
{
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

// Waits for this thread's copies; a __syncthreads then publishes everyone's.
__device__ __forceinline__ void sgemm_cp_wait_all()
{
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group 0;\n" ::: "memory");
#endif
}

// A thread's share of one operand's slice, R x W of a row-major matrix with ld
// columns: N runs of 4 floats, STEP rows apart, the first at row r, column c of the
// first slice. Slices follow one another down the rows (DOWN, for B) or along them
// (for A); the pointer walks with them, so a copy costs no index arithmetic. Threads
// past the slice's last run carry nothing.
template <int R, int W, int THREADS, bool DOWN> struct sgemm_part {
    static constexpr int PER_ROW = W / 4, V = R * PER_ROW, STEP = THREADS / PER_ROW;
    static constexpr int N = (V + THREADS - 1) / THREADS;
    static_assert(THREADS % PER_ROW == 0, "a block's threads must cover whole rows of a slice");
    const float *p;
    int r, c;

    __device__ __forceinline__ sgemm_part(const float *base, int ld, int r0, int c0, int tid)
        : r(r0 + tid / PER_ROW), c(c0 + tid % PER_ROW * 4)
    {
        p = base + (size_t)r * ld + c;
    }

    // Copies the slice k0 rows (DOWN) or columns on into dst, whose rows are LD
    // floats apart, transposed if T (a run of 4 goes down a column: four 4-byte
    // copies), then moves p to the next slice. A run is one 16-byte copy on the
    // vector path (cols and c multiples of 4) unless transposed.
    template <bool VEC, bool T, int LD>
    __device__ __forceinline__ void copy(float *dst, int rows, int cols, int ld, int k0, int tid)
    {
#pragma unroll
        for (int n = 0; n < N; ++n) {
            if (V % THREADS != 0 && tid + n * THREADS >= V) continue;
            const float *src = p + (size_t)n * STEP * ld;
            const bool in = r + n * STEP + (DOWN ? k0 : 0) < rows;
            const int at = c + (DOWN ? 0 : k0), m = tid / PER_ROW + n * STEP, k = tid % PER_ROW * 4;
            if constexpr (VEC && !T) {
                sgemm_cp<16>(&dst[m * LD + k], src, in && at < cols);
            } else {
#pragma unroll
                for (int q = 0; q < 4; ++q)
                    sgemm_cp<4>(T ? &dst[(k + q) * LD + m] : &dst[m * LD + k + q], src + q,
                                in && (VEC ? at : at + q) < cols);
            }
        }
        p += DOWN ? (size_t)R * ld : W;
    }
};

// One slice of A (BM x BK, stored transposed) and of B (BK x BN) on their way from
// global to shared memory.
template <class G> struct sgemm_slice {
    sgemm_part<G::BM, G::BK, G::THREADS, false> a;
    sgemm_part<G::BK, G::BN, G::THREADS, true> b;

    __device__ __forceinline__ sgemm_slice(const float *A, const float *B, int N, int K, int row0,
                                           int col0, int tid)
        : a(A, K, row0, 0, tid), b(B, N, 0, col0, tid)
    {
    }

    template <bool VEC>
    __device__ __forceinline__ void copy(float (*As)[G::LDA], float (*Bs)[G::BN], int M, int N,
                                         int K, int k0, int tid)
    {
        a.template copy<VEC, true, G::LDA>(&As[0][0], M, K, K, k0, tid);
        b.template copy<VEC, false, G::BN>(&Bs[0][0], K, N, N, k0, tid);
        sgemm_cp_commit();
    }
};

// The outer products of one slice: am and bn are the thread's first row of As and
// column of Bs; its other pieces lie LY*4 rows and LX*4 columns further on.
template <class G>
__device__ __forceinline__ void sgemm_compute(const float (*As)[G::LDA], const float (*Bs)[G::BN],
                                              int am, int bn, float (&acc)[G::TM][G::TN])
{
#pragma unroll
    for (int k = 0; k < G::BK; ++k) {
        float a[G::TM], b[G::TN];
#pragma unroll
        for (int s = 0; s < G::TM / 4; ++s) {
            float4 x = *reinterpret_cast<const float4 *>(&As[k][am + s * G::LY * 4]);
            a[4 * s] = x.x, a[4 * s + 1] = x.y, a[4 * s + 2] = x.z, a[4 * s + 3] = x.w;
        }
#pragma unroll
        for (int s = 0; s < G::TN / 4; ++s) {
            float4 x = *reinterpret_cast<const float4 *>(&Bs[k][bn + s * G::LX * 4]);
            b[4 * s] = x.x, b[4 * s + 1] = x.y, b[4 * s + 2] = x.z, b[4 * s + 3] = x.w;
        }
#pragma unroll
        for (int i = 0; i < G::TM; ++i)
#pragma unroll
            for (int j = 0; j < G::TN; ++j)
                acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
}

// Writes a thread's tile whose first element is C[row][col], in the same pieces.
template <class G, bool VEC>
__device__ __forceinline__ void sgemm_store(float *__restrict__ C, const float (&acc)[G::TM][G::TN],
                                            int M, int N, int row, int col)
{
#pragma unroll
    for (int i = 0; i < G::TM; ++i) {
        int r = row + i / 4 * G::LY * 4 + i % 4;
        if (r >= M) continue;
        float *out = C + (size_t)r * N;
#pragma unroll
        for (int j = 0; j < G::TN; j += 4) {
            int c = col + j / 4 * G::LX * 4;
            if constexpr (VEC) {
                if (c < N)
                    *reinterpret_cast<float4 *>(&out[c]) =
                        make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
            } else {
#pragma unroll
                for (int q = 0; q < 4; ++q)
                    if (c + q < N) out[c + q] = acc[i][j + q];
            }
        }
    }
}

// The whole block's work, on the vector path or the scalar one.
template <class G, bool VEC>
__device__ __forceinline__ void
sgemm_block(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C, int M,
            int N, int K, float (*As)[G::BK][G::LDA], float (*Bs)[G::BK][G::BN])
{
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int am = warp / (G::BN / G::WN) * G::WM + lane / G::LX * 4;
    const int bn = warp % (G::BN / G::WN) * G::WN + lane % G::LX * 4;
    const int row0 = blockIdx.y * G::BM, col0 = blockIdx.x * G::BN;
    const int slices = (K + G::BK - 1) / G::BK;

    float acc[G::TM][G::TN] = {};
    sgemm_slice<G> next(A, B, N, K, row0, col0, tid);
    next.template copy<VEC>(As[0], Bs[0], M, N, K, 0, tid);
    for (int t = 0; t < slices; ++t) {
        const int cur = t & 1;
        sgemm_cp_wait_all();
        // Slice t has landed for every thread, and every thread is done with slice
        // t - 1, whose buffer the copies of slice t + 1 now overwrite.
        __syncthreads();
        if (t + 1 < slices)
            next.template copy<VEC>(As[cur ^ 1], Bs[cur ^ 1], M, N, K, (t + 1) * G::BK, tid);
        sgemm_compute<G>(As[cur], Bs[cur], am, bn, acc);
    }
    sgemm_store<G, VEC>(C, acc, M, N, row0 + am, col0 + bn);
}

template <int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__(sgemm_geom<BM, BN, BK, TM, TN>::THREADS,
                                  sgemm_geom<BM, BN, BK, TM, TN>::MIN_BLOCKS)
    sgemm(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C, int M,
          int N, int K)
{
    using G = sgemm_geom<BM, BN, BK, TM, TN>;
    __shared__ __align__(16) float As[2][BK][G::LDA];
    __shared__ __align__(16) float Bs[2][BK][BN];
    if (K % 4 == 0 && N % 4 == 0)
        sgemm_block<G, true>(A, B, C, M, N, K, As, Bs);
    else
        sgemm_block<G, false>(A, B, C, M, N, K, As, Bs);
}
