// STREAM's four kernels (copy c = a, scale b = s*c, add c = a + b, triad a = b + s*c)
// for the memory-bound suite (examples/suite/stream.lua), for one element type
// (STREAM_DTYPE) and one access pattern (STREAM_ACCESS) of stream_access.cuh per
// compile. Each thread moves 16-byte vectors; the tuning space is
//   U     vectors per thread per input in flight (1, 2, 4; see stream_strided),
//   HINT  cache hints: none, non-coherent loads that skip L1 with evict-first
//         stores, or those with a 256-byte L2 prefetch (stream_load16),
// with the block size and the grid (one tile per block, or a grid that fits on the
// GPU at once and strides) chosen at launch: every kernel loops over its tiles with
// the grid's stride, so any grid is correct and the two grids share one compile.
//
// Arithmetic: f32 in f32; f16 and bf16 convert to f32, compute, and round once to
// the element type (triad is one fused multiply-add); i8 computes in int (s is
// truncated to an int) and keeps the low 8 bits of the result (wraps mod 256). The
// reference (stream_ref.cuh) computes in double and rounds once: copy, scale and
// i8 agree bit for bit, add and triad within one unit in the last place.
//
// __launch_bounds__(1024) keeps every kernel within 64 registers, so any block the
// script launches fits and its persistent grid of 1024 threads per SM is one wave.
#include "stream_access.cuh"

#if !defined(STREAM_ACCESS) || !(STREAM_ACCESS == STREAM_GATHER || STREAM_ACCESS == STREAM_SEQ ||  \
                                 STREAM_ACCESS == 2 || STREAM_ACCESS == 4 || STREAM_ACCESS == 8)
#error "STREAM_ACCESS must be defined: 1 seq, 2, 4 or 8 strided, 0 gather"
#endif

#define STREAM_V (16 / (int)sizeof(stream_elem)) // elements per 16-byte vector

#if STREAM_DTYPE == STREAM_I8
typedef int stream_calc;
#else
typedef float stream_calc;
#endif

__device__ __forceinline__ stream_calc stream_to_calc(stream_elem x)
{
#if STREAM_DTYPE == STREAM_F16
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(x));
    return f;
#elif STREAM_DTYPE == STREAM_BF16
    return __uint_as_float((unsigned)x << 16);
#else
    return x;
#endif
}

__device__ __forceinline__ stream_elem stream_from_calc(stream_calc x)
{
#if STREAM_DTYPE == STREAM_F16
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(x));
    return h;
#elif STREAM_DTYPE == STREAM_BF16
    unsigned short h;
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(x));
    return h;
#else
    // i8: nvcc converts an int to a narrower signed type by keeping the low bits
    // (two's complement), which is the wraparound the reference spells out.
    return (stream_elem)x;
#endif
}

__device__ __forceinline__ stream_calc stream_scalar(float s)
{
    return (stream_calc)s;
}
__device__ __forceinline__ float stream_mad(float s, float c, float b)
{
    return __fmaf_rn(s, c, b);
}
__device__ __forceinline__ int stream_mad(int s, int c, int b)
{
    return s * c + b;
}

// The operations, on elements: x is the first input, y the second (ignored by the
// one-input operations, which then never load it).
struct stream_op_copy {
    static constexpr int inputs = 1;
    __device__ stream_elem operator()(stream_elem a, stream_elem) const
    {
        return a;
    }
};
struct stream_op_scale {
    static constexpr int inputs = 1;
    stream_calc s;
    __device__ stream_elem operator()(stream_elem c, stream_elem) const
    {
        return stream_from_calc(s * stream_to_calc(c));
    }
};
struct stream_op_add {
    static constexpr int inputs = 2;
    __device__ stream_elem operator()(stream_elem a, stream_elem b) const
    {
        return stream_from_calc(stream_to_calc(a) + stream_to_calc(b));
    }
};
struct stream_op_triad {
    static constexpr int inputs = 2;
    stream_calc s;
    __device__ stream_elem operator()(stream_elem b, stream_elem c) const
    {
        return stream_from_calc(stream_mad(s, stream_to_calc(c), stream_to_calc(b)));
    }
};

union stream_pack {
    uint4 u;
    stream_elem e[STREAM_V];
};

// HINT 0: plain loads and stores. 1: loads through the non-coherent path that do
// not allocate in L1, and evict-first stores (the data is touched once). 2: as 1,
// and each load asks L2 to fetch the whole 256-byte block around it.
template <int HINT> __device__ __forceinline__ uint4 stream_load16(const stream_elem *p)
{
    uint4 v;
    if (HINT == 2)
        asm("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
            : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
            : "l"(p));
    else if (HINT == 1)
        asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
            : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
            : "l"(p));
    else
        v = *reinterpret_cast<const uint4 *>(p);
    return v;
}

template <int HINT> __device__ __forceinline__ void stream_store16(stream_elem *p, uint4 v)
{
    if (HINT)
        asm volatile("st.global.cs.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x), "r"(v.y),
                     "r"(v.z), "r"(v.w)
                     : "memory");
    else
        *reinterpret_cast<uint4 *>(p) = v;
}

// Single elements (the gather, the tail): through the non-coherent path for any
// HINT; a 256-byte prefetch would only waste bandwidth on scattered reads.
template <int HINT> __device__ __forceinline__ stream_elem stream_load1(const stream_elem *p)
{
    return HINT ? __ldg(p) : *p;
}

// Source index of output element i: i*S, or the gather's hash when S is 0.
template <int S> __device__ __forceinline__ long long stream_source(long long i, long long n)
{
    return S == STREAM_GATHER ? stream_gather_index(i, n) : i * S;
}

// The last n % V elements, past the last whole vector: one each for the first
// threads of block 0 (blocks have at least V threads).
template <int S, int HINT, class Op>
__device__ __forceinline__ void stream_tail(stream_elem *out, const stream_elem *x,
                                            const stream_elem *y, long long n, Op op)
{
    long long i = n / STREAM_V * STREAM_V + threadIdx.x;
    if (blockIdx.x != 0 || i >= n) return;
    long long src = stream_source<S>(i, n);
    stream_elem b = 0;
    if (Op::inputs == 2) b = stream_load1<HINT>(y + src);
    out[i] = op(stream_load1<HINT>(x + src), b);
}

// Sequential (S = 1) and strided access. Output vector j (elements jV .. jV+V-1)
// reads the S whole vectors that hold input elements jVS .. jVS+VS-1 and keeps one
// element in S. With S * sizeof(element) <= 32 every 32-byte sector holds an
// element the kernel needs, so whole vectors move no more DRAM sectors than loads
// of single elements would, in far fewer instructions. A thread makes U output
// vectors per tile for S = 1 and U/S (at least 1) for larger S, each from S input
// vectors, so it has max(U, S) vectors per input in flight.
template <int S, int U, int HINT, class Op>
__device__ __forceinline__ void stream_strided(stream_elem *out, const stream_elem *x,
                                               const stream_elem *y, long long n, Op op)
{
    constexpr int US = U >= S ? U / S : 1;
    const long long nvec = n / STREAM_V, step = (long long)blockDim.x * US;
#pragma unroll 1 // U is the knob for loads in flight; the tile loop stays rolled
    for (long long j0 = blockIdx.x * step + threadIdx.x; j0 < nvec; j0 += gridDim.x * step) {
        stream_pack a[US][S], b[US][S];
#pragma unroll
        for (int u = 0; u < US; ++u) {
            long long j = j0 + (long long)u * blockDim.x;
#pragma unroll
            for (int q = 0; q < S; ++q) {
                b[u][q].u = make_uint4(0, 0, 0, 0);
                if (j >= nvec) continue;
                long long at = (j * S + q) * STREAM_V;
                a[u][q].u = stream_load16<HINT>(x + at);
                if (Op::inputs == 2) b[u][q].u = stream_load16<HINT>(y + at);
            }
        }
#pragma unroll
        for (int u = 0; u < US; ++u) {
            long long j = j0 + (long long)u * blockDim.x;
            if (j >= nvec) continue;
            stream_pack r;
#pragma unroll
            for (int k = 0; k < STREAM_V; ++k) {
                const int q = k * S / STREAM_V, lane = k * S % STREAM_V;
                r.e[k] = op(a[u][q].e[lane], b[u][q].e[lane]);
            }
            stream_store16<HINT>(out + j * STREAM_V, r.u);
        }
    }
    stream_tail<S, HINT>(out, x, y, n, op);
}

// Gather: each output vector's V elements come from V hashed positions, one load
// each per input; V independent loads per thread already fill the memory system,
// so U does not apply here.
template <int HINT, class Op>
__device__ __forceinline__ void stream_gather(stream_elem *out, const stream_elem *x,
                                              const stream_elem *y, long long n, Op op)
{
    const long long nvec = n / STREAM_V, step = blockDim.x;
#pragma unroll 1
    for (long long j = blockIdx.x * step + threadIdx.x; j < nvec; j += gridDim.x * step) {
        stream_elem a[STREAM_V], b[STREAM_V];
#pragma unroll
        for (int k = 0; k < STREAM_V; ++k) {
            long long src = stream_gather_index(j * STREAM_V + k, n);
            a[k] = stream_load1<HINT>(x + src);
            b[k] = Op::inputs == 2 ? stream_load1<HINT>(y + src) : (stream_elem)0;
        }
        stream_pack r;
#pragma unroll
        for (int k = 0; k < STREAM_V; ++k)
            r.e[k] = op(a[k], b[k]);
        stream_store16<HINT>(out + j * STREAM_V, r.u);
    }
    stream_tail<STREAM_GATHER, HINT>(out, x, y, n, op);
}

// The access pattern is compiled in (STREAM_ACCESS), so each pattern gets its own
// registers; the runtime `access` (the reference's) must agree, or nothing is
// written and the check fails.
template <int U, int HINT, class Op>
__device__ __forceinline__ void stream_run(stream_elem *out, const stream_elem *x,
                                           const stream_elem *y, long long n, int access, Op op)
{
    if (access != STREAM_ACCESS) return;
    if constexpr (STREAM_ACCESS == STREAM_GATHER)
        stream_gather<HINT>(out, x, y, n, op);
    else
        stream_strided<STREAM_ACCESS, U, HINT>(out, x, y, n, op);
}

template <int U, int HINT>
__global__ void __launch_bounds__(1024)
    stream_copy(const stream_elem *a, stream_elem *c, long long n, int access)
{
    stream_run<U, HINT>(c, a, nullptr, n, access, stream_op_copy{});
}

template <int U, int HINT>
__global__ void __launch_bounds__(1024)
    stream_scale(const stream_elem *c, stream_elem *b, float s, long long n, int access)
{
    stream_run<U, HINT>(b, c, nullptr, n, access, stream_op_scale{stream_scalar(s)});
}

template <int U, int HINT>
__global__ void __launch_bounds__(1024)
    stream_add(const stream_elem *a, const stream_elem *b, stream_elem *c, long long n, int access)
{
    stream_run<U, HINT>(c, a, b, n, access, stream_op_add{});
}

template <int U, int HINT>
__global__ void __launch_bounds__(1024)
    stream_triad(const stream_elem *b, const stream_elem *c, stream_elem *a, float s, long long n,
                 int access)
{
    stream_run<U, HINT>(a, b, c, n, access, stream_op_triad{stream_scalar(s)});
}
