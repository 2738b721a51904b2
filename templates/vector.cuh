// The vector group of the memory-bound suite (examples/suite/vector.lua):
// element-wise add, mul, axpy (y = a*x + y, in place) and scal (x = a*x, in
// place), and the reductions sum, dot, nrm2 and max to one f32 value. Compile
// with -DELEM=<element type> (float, __half, __nv_bfloat16, __nv_fp8_e4m3,
// __nv_fp8_e5m2); arithmetic and accumulation are fp32.
//
// Every thread moves whole 16-byte chunks (4 f32, 8 f16/bf16, 16 fp8), so the
// tensors' bases must be 16-byte aligned (cudaMalloc gives 256); the n % (16 /
// sizeof(ELEM)) elements past the last whole chunk go one at a time. Inputs
// that nothing writes are read with ld.global.nc.L1::no_allocate, outputs are
// stored with st.global.cs (evict first): a stream is touched once.
//
// Element-wise kernels: one tile of BLOCK * U chunks per block, U chunks per
// thread, all loaded before any is used; grid = ceil(ceil(n / vec) / (BLOCK*U)).
//
// Reductions are one launch: a grid of at most BPS blocks per SM (so all are
// resident: __launch_bounds__(BLOCK, BPS)) strides over the tiles; each thread
// keeps 4 fp32 accumulators, the block folds them (shuffles, then shared
// memory), and then FINISH decides:
//   atomics     one atomicAdd per block into out, which must start at 0 (an
//               in-out tensor initialised with zeros). The result depends on the
//               order in which blocks arrive: its last bits can change from run
//               to run. sum and dot only.
//   last_block  each block stores its value as a double in partials[blockIdx.x],
//               then counts itself in *counter; the block that counts last adds
//               the partials in index order, in double, writes out and sets
//               *counter back to 0 for the next launch. The result depends on
//               nothing but the data and the launch (grid, BLOCK, U): the same
//               every run.
// max propagates NaN (max.NaN.f32): a NaN anywhere gives NaN. An empty vector
// gives sum 0, dot 0, nrm2 0 and max -Inf.
#pragma once

#include "vector_elem.cuh"

#ifndef ELEM
#error "vector.cuh: compile with -DELEM=<element type>, e.g. -DELEM=float"
#endif

typedef elem<ELEM> E;
typedef chunk<ELEM> C;
static constexpr int VEC = C::n; // elements per 16-byte chunk

enum vector_finish { atomics = 0, last_block = 1 };

// ---- loads and stores ---------------------------------------------------------

// Read-only for the whole launch: no L1 allocation, a stream is read once.
static __device__ __forceinline__ uint4 load_nc(const ELEM *p)
{
    uint4 v;
    asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
        : "l"(p));
    return v;
}

// For a tensor this launch also writes (axpy's y, scal's x): not .nc.
static __device__ __forceinline__ uint4 load_rw(const ELEM *p)
{
    return *reinterpret_cast<const uint4 *>(p);
}

static __device__ __forceinline__ void store_cs(ELEM *p, uint4 v)
{
    asm volatile("st.global.cs.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x), "r"(v.y),
                 "r"(v.z), "r"(v.w)
                 : "memory");
}

// ---- element-wise kernels ----------------------------------------------------

struct add_op {
    static __device__ __forceinline__ float apply(float, float x, float y)
    {
        return x + y;
    }
};
struct mul_op {
    static __device__ __forceinline__ float apply(float, float x, float y)
    {
        return x * y;
    }
};
struct axpy_op {
    static __device__ __forceinline__ float apply(float a, float x, float y)
    {
        return fmaf(a, x, y);
    }
};
struct scal_op {
    static __device__ __forceinline__ float apply(float a, float x, float)
    {
        return a * x;
    }
};

// out = Op(a, x, y) over n elements. y may be out (axpy); x may be out (scal, which
// has no y: HAS_Y false, the caller passes x). X_RO / Y_RO: nothing writes that
// input in this launch.
template <int BLOCK, int U, class Op, bool HAS_Y, bool X_RO, bool Y_RO>
static __device__ __forceinline__ void map(const ELEM *x, const ELEM *y, ELEM *out, float a, i64 n)
{
    const i64 n_chunks = n / VEC;
    const i64 first = (i64)blockIdx.x * (BLOCK * U) + threadIdx.x;
    uint4 xv[U], yv[U];
#pragma unroll
    for (int j = 0; j < U; j++) {
        const i64 c = first + (i64)j * BLOCK;
        xv[j] = yv[j] = make_uint4(0, 0, 0, 0);
        if (c < n_chunks) {
            xv[j] = X_RO ? load_nc(x + c * VEC) : load_rw(x + c * VEC);
            if (HAS_Y) yv[j] = Y_RO ? load_nc(y + c * VEC) : load_rw(y + c * VEC);
        }
    }
#pragma unroll
    for (int j = 0; j < U; j++) {
        const i64 c = first + (i64)j * BLOCK;
        if (c < n_chunks) {
            float xf[VEC], yf[VEC];
            C::unpack(xv[j], xf);
            C::unpack(yv[j], yf);
#pragma unroll
            for (int e = 0; e < VEC; e++)
                xf[e] = Op::apply(a, xf[e], yf[e]);
            store_cs(out + c * VEC, C::pack(xf));
        }
    }
    // The partial chunk past the last whole one, if any: its thread does it one
    // element at a time.
    const i64 past = n_chunks - first;
    if (n_chunks * VEC < n && past >= 0 && past % BLOCK == 0 && past / BLOCK < U) {
        for (i64 i = n_chunks * VEC; i < n; i++)
            out[i] = E::from_float(Op::apply(a, E::to_float(x[i]), E::to_float(y[i])));
    }
}

template <int BLOCK, int U>
__global__ void vector_add(const ELEM *__restrict__ x, const ELEM *__restrict__ y,
                           ELEM *__restrict__ z, i64 n)
{
    map<BLOCK, U, add_op, true, true, true>(x, y, z, 0.0f, n);
}

template <int BLOCK, int U>
__global__ void vector_mul(const ELEM *__restrict__ x, const ELEM *__restrict__ y,
                           ELEM *__restrict__ z, i64 n)
{
    map<BLOCK, U, mul_op, true, true, true>(x, y, z, 0.0f, n);
}

// y = a*x + y in place (BLAS axpy).
template <int BLOCK, int U>
__global__ void vector_axpy(const ELEM *__restrict__ x, ELEM *__restrict__ y, float a, i64 n)
{
    map<BLOCK, U, axpy_op, true, true, false>(x, y, y, a, n);
}

// x = a*x in place (BLAS scal).
template <int BLOCK, int U> __global__ void vector_scal(ELEM *x, float a, i64 n)
{
    map<BLOCK, U, scal_op, false, false, false>(x, x, x, a, n);
}

// ---- reductions ----------------------------------------------------------------

// max that returns NaN when either side is NaN (fmaxf would drop it).
static __device__ __forceinline__ float max_nan(float a, float b)
{
    float r;
    asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
    return r;
}
static __device__ __forceinline__ double max_nan(double a, double b)
{
    return a != a ? a : b != b ? b : a > b ? a : b;
}

// An op: its identity, how an element (x, and y for dot) enters an accumulator,
// how two partial results combine (float and double), and the last step.
struct sum_op {
    static constexpr int inputs = 1;
    static constexpr bool atomics_ok = true;
    static __device__ __forceinline__ float identity()
    {
        return 0.0f;
    }
    static __device__ __forceinline__ float step(float acc, float x, float)
    {
        return acc + x;
    }
    template <class A> static __device__ __forceinline__ A combine(A a, A b)
    {
        return a + b;
    }
    static __device__ __forceinline__ double finish(double v)
    {
        return v;
    }
};
struct dot_op : sum_op {
    static constexpr int inputs = 2;
    static __device__ __forceinline__ float step(float acc, float x, float y)
    {
        return fmaf(x, y, acc);
    }
};
struct nrm2_op : sum_op {
    static constexpr bool atomics_ok = false; // the square root needs the whole sum
    static __device__ __forceinline__ float step(float acc, float x, float)
    {
        return fmaf(x, x, acc);
    }
    static __device__ __forceinline__ double finish(double v)
    {
        return sqrt(v);
    }
};
struct max_op {
    static constexpr int inputs = 1;
    static constexpr bool atomics_ok = false; // atomicMax has no float form; not needed
    static __device__ __forceinline__ float identity()
    {
        return -__int_as_float(0x7f800000);
    }
    static __device__ __forceinline__ float step(float acc, float x, float)
    {
        return max_nan(acc, x);
    }
    template <class A> static __device__ __forceinline__ A combine(A a, A b)
    {
        return max_nan(a, b);
    }
    static __device__ __forceinline__ double finish(double v)
    {
        return v;
    }
};

// The whole block's value at thread 0 (other threads: unspecified). In a fixed
// order: the same inputs give the same result.
template <int BLOCK, class Op, class A> static __device__ __forceinline__ A block_fold(A v)
{
    __shared__ A lanes[BLOCK / 32];
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        v = Op::combine(v, __shfl_xor_sync(0xffffffffu, v, o));
    if ((threadIdx.x & 31) == 0) lanes[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x < 32) {
        v = threadIdx.x < BLOCK / 32 ? lanes[threadIdx.x] : (A)Op::identity();
#pragma unroll
        for (int o = 16; o > 0; o >>= 1)
            v = Op::combine(v, __shfl_xor_sync(0xffffffffu, v, o));
    }
    return v;
}

template <class Op> struct accum {
    float a[4];
    __device__ __forceinline__ accum()
    {
#pragma unroll
        for (int k = 0; k < 4; k++)
            a[k] = Op::identity();
    }
    __device__ __forceinline__ void add_chunk(uint4 xc, uint4 yc)
    {
        float xf[VEC], yf[VEC];
        C::unpack(xc, xf);
        if (Op::inputs == 2) C::unpack(yc, yf);
#pragma unroll
        for (int e = 0; e < VEC; e++)
            a[e & 3] = Op::step(a[e & 3], xf[e], Op::inputs == 2 ? yf[e] : 0.0f);
    }
    __device__ __forceinline__ float total() const
    {
        return Op::combine(Op::combine(a[0], a[1]), Op::combine(a[2], a[3]));
    }
};

// This thread's share: whole tiles of BLOCK*U chunks strided over the grid, then
// the chunks past the last whole tile, then the elements past the last chunk.
template <int BLOCK, int U, class Op>
static __device__ __forceinline__ float thread_share(const ELEM *x, const ELEM *y, i64 n)
{
    accum<Op> acc;
    const i64 n_chunks = n / VEC, n_tiles = n_chunks / (BLOCK * U);
    const uint4 none = make_uint4(0, 0, 0, 0);
    for (i64 t = blockIdx.x; t < n_tiles; t += gridDim.x) {
        const i64 c0 = t * (BLOCK * U) + threadIdx.x;
        uint4 xv[U], yv[U];
#pragma unroll
        for (int j = 0; j < U; j++) {
            xv[j] = load_nc(x + (c0 + (i64)j * BLOCK) * VEC);
            yv[j] = Op::inputs == 2 ? load_nc(y + (c0 + (i64)j * BLOCK) * VEC) : none;
        }
#pragma unroll
        for (int j = 0; j < U; j++)
            acc.add_chunk(xv[j], yv[j]);
    }
    const i64 stride = (i64)gridDim.x * BLOCK, me = (i64)blockIdx.x * BLOCK + threadIdx.x;
    for (i64 c = n_tiles * (BLOCK * U) + me; c < n_chunks; c += stride)
        acc.add_chunk(load_nc(x + c * VEC), Op::inputs == 2 ? load_nc(y + c * VEC) : none);
    float v = acc.total();
    for (i64 i = n_chunks * VEC + me; i < n; i += stride)
        v = Op::step(v, E::to_float(x[i]), Op::inputs == 2 ? E::to_float(y[i]) : 0.0f);
    return v;
}

// The last block to count itself adds the partials in index order.
template <int BLOCK, class Op>
static __device__ __forceinline__ void finish_last_block(float v, float *out, double *partials,
                                                         int *counter)
{
    __shared__ bool last;
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = (double)v;
        __threadfence(); // the partial is visible before the count says so
        last = atomicAdd(counter, 1) == (int)gridDim.x - 1;
    }
    __syncthreads();
    if (!last) return;
    __threadfence();
    double d = Op::identity();
    for (unsigned b = threadIdx.x; b < gridDim.x; b += BLOCK)
        d = Op::combine(d, __ldcg(partials + b)); // .cg: past L1, which may hold stale lines
    d = block_fold<BLOCK, Op>(d);
    if (threadIdx.x == 0) {
        *out = (float)Op::finish(d);
        *counter = 0;
    }
}

template <int BLOCK, int U, int FINISH, class Op>
static __device__ __forceinline__ void reduce(const ELEM *x, const ELEM *y, float *out,
                                              double *partials, int *counter, i64 n)
{
    static_assert(FINISH == last_block || Op::atomics_ok, "this reduction has no atomics form");
    float v = block_fold<BLOCK, Op>(thread_share<BLOCK, U, Op>(x, y, n));
    if (FINISH == atomics) {
        if (threadIdx.x == 0) atomicAdd(out, v);
    } else {
        finish_last_block<BLOCK, Op>(v, out, partials, counter);
    }
}

// out[0] = sum of x. partials: at least gridDim.x doubles; counter: 0 at launch.
template <int BLOCK, int U, int BPS, int FINISH>
__global__ void __launch_bounds__(BLOCK, BPS)
    vector_reduce_sum(const ELEM *__restrict__ x, float *out, double *partials, int *counter, i64 n)
{
    reduce<BLOCK, U, FINISH, sum_op>(x, x, out, partials, counter, n);
}

template <int BLOCK, int U, int BPS, int FINISH>
__global__ void __launch_bounds__(BLOCK, BPS)
    vector_dot(const ELEM *__restrict__ x, const ELEM *__restrict__ y, float *out, double *partials,
               int *counter, i64 n)
{
    reduce<BLOCK, U, FINISH, dot_op>(x, y, out, partials, counter, n);
}

// sqrt(sum x^2) without scaling: fp32 squares of data of order 1 neither overflow
// nor underflow (the reference squares in double).
template <int BLOCK, int U, int BPS, int FINISH>
__global__ void __launch_bounds__(BLOCK, BPS)
    vector_nrm2(const ELEM *__restrict__ x, float *out, double *partials, int *counter, i64 n)
{
    reduce<BLOCK, U, FINISH, nrm2_op>(x, x, out, partials, counter, n);
}

template <int BLOCK, int U, int BPS, int FINISH>
__global__ void __launch_bounds__(BLOCK, BPS)
    vector_reduce_max(const ELEM *__restrict__ x, float *out, double *partials, int *counter, i64 n)
{
    reduce<BLOCK, U, FINISH, max_op>(x, x, out, partials, counter, n);
}
