// Kernels the engine itself runs: filling argument buffers, poisoning outputs,
// comparing a variant's outputs with the reference's, and flushing L2. Compiled
// with NVRTC for the device in hand when a GPU session opens; embedded into the
// binary at build time (engine/CMakeLists.txt), so nothing is read from disk.
//
// Every generated value depends only on (seed, element index), never on the launch
// geometry, so buffers are the same on every run and in every worker process.

typedef unsigned long long u64;
typedef unsigned int u32;
typedef unsigned short u16;
typedef unsigned char u8;

#define GB_INF_F32 __int_as_float(0x7F800000)
#define GB_NAN_F32 __int_as_float(0x7FC00000)
#define GB_INF_F64 __longlong_as_double(0x7FF0000000000000ll)

// Must match gb_dtype in engine/spec.h.
enum { F64, F32, F16, BF16, FP8_E4M3, FP8_E5M2, I8, U8, I32, U32, I64 };
// Must match gb_fill_mode in engine/builtins.h.
enum { FILL_RANDN, FILL_RAND, FILL_ZEROS, FILL_ONES, FILL_POISON, FILL_VALUE };

__device__ __forceinline__ u64 mix64(u64 x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

__device__ __forceinline__ double element_value(int mode, u64 seed, u64 i, double value)
{
    u64 h = mix64(seed ^ mix64(i));
    double u1 = (double)((h >> 40) + 1) * (1.0 / 16777216.0); // (0, 1]
    double u2 = (double)(h & 0xFFFFFF) * (1.0 / 16777216.0);  // [0, 1)
    switch (mode) {
    case FILL_RANDN: return sqrt(-2.0 * log(u1)) * cospi(2.0 * u2);
    case FILL_RAND: return u2;
    case FILL_ZEROS: return 0.0;
    case FILL_ONES: return 1.0;
    default: return value;
    }
}

__device__ __forceinline__ u16 f32_to_f16_bits(float x)
{
    u16 h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(x));
    return h;
}

__device__ __forceinline__ float f16_bits_to_f32(u16 h)
{
    float x;
    asm("cvt.f32.f16 %0, %1;" : "=f"(x) : "h"(h));
    return x;
}

__device__ __forceinline__ u16 f32_to_bf16_bits(float x)
{
    u32 b = __float_as_uint(x);
    if ((b & 0x7FFFFFFFu) > 0x7F800000u) return 0x7FC0; // NaN
    b += 0x7FFFu + ((b >> 16) & 1u);                    // round to nearest even
    return (u16)(b >> 16);
}

// A small float with 1 sign bit, E exponent bits and M mantissa bits, rounded to
// nearest and saturated to the largest finite value (the "satfinite" convention of
// fp8 arithmetic). e4m3 has no infinity and uses S.1111.111 for NaN.
__device__ u8 f32_to_small(float x, int E, int M, int bias, bool ieee_special)
{
    u8 sign = signbit(x) ? (u8)(1u << (E + M)) : 0;
    int max_exp = ieee_special ? (1 << E) - 2 : (1 << E) - 1;
    int max_man = ieee_special ? (1 << M) - 1 : (1 << M) - 2;
    u8 max_bits = (u8)((max_exp << M) | max_man);
    if (isnan(x)) return (u8)(sign | ((1u << (E + M)) - 1u));
    float a = fabsf(x);
    if (a == 0.0f) return sign;
    if (isinf(a)) return (u8)(sign | max_bits);
    int e;
    frexpf(a, &e);
    e -= 1; // a = 1.f * 2^e
    int min_normal = 1 - bias;
    int scale = e < min_normal ? min_normal - M : e - M;
    float m = rintf(ldexpf(a, -scale));
    if (e < min_normal) return (u8)(sign | (u8)fminf(m, (float)max_bits)); // subnormal (or 0)
    if (m >= (float)(2 << M)) {                                           // rounded up a binade
        m *= 0.5f;
        e += 1;
    }
    int biased = e + bias;
    u32 bits = ((u32)biased << M) | ((u32)m - (1u << M));
    if (biased > max_exp || bits > max_bits) bits = max_bits;
    return (u8)(sign | bits);
}

__device__ float small_to_f32(u8 v, int E, int M, int bias, bool ieee_special)
{
    float sign = (v >> (E + M)) & 1 ? -1.0f : 1.0f;
    int exp = (v >> M) & ((1 << E) - 1);
    int man = v & ((1 << M) - 1);
    if (ieee_special && exp == (1 << E) - 1) return man ? GB_NAN_F32 : sign * GB_INF_F32;
    if (!ieee_special && exp == (1 << E) - 1 && man == (1 << M) - 1) return GB_NAN_F32;
    if (exp == 0) return sign * ldexpf((float)man, 1 - bias - M);
    return sign * ldexpf((float)(man | (1 << M)), exp - bias - M);
}

__device__ __forceinline__ double clamp_int(double v, double lo, double hi)
{
    return fmin(fmax(rint(v), lo), hi);
}

__device__ void store(void *out, int dtype, u64 i, double v, bool poison)
{
    switch (dtype) {
    case F64: ((double *)out)[i] = poison ? __longlong_as_double(0x7FF8000000000000ll) : v; break;
    case F32: ((float *)out)[i] = poison ? GB_NAN_F32 : (float)v; break;
    case F16: ((u16 *)out)[i] = poison ? 0x7E00 : f32_to_f16_bits((float)v); break;
    case BF16: ((u16 *)out)[i] = poison ? 0x7FC0 : f32_to_bf16_bits((float)v); break;
    case FP8_E4M3: ((u8 *)out)[i] = poison ? 0x7F : f32_to_small((float)v, 4, 3, 7, false); break;
    case FP8_E5M2: ((u8 *)out)[i] = poison ? 0x7F : f32_to_small((float)v, 5, 2, 15, true); break;
    case I8: ((signed char *)out)[i] = poison ? -1 : (signed char)clamp_int(v, -128, 127); break;
    case U8: ((u8 *)out)[i] = poison ? 0xFF : (u8)clamp_int(v, 0, 255); break;
    case I32: ((int *)out)[i] = poison ? -1 : (int)clamp_int(v, -2147483648.0, 2147483647.0); break;
    case U32: ((u32 *)out)[i] = poison ? 0xFFFFFFFFu : (u32)clamp_int(v, 0, 4294967295.0); break;
    case I64: ((long long *)out)[i] = poison ? -1ll : (long long)rint(v); break;
    }
}

__device__ double load(const void *in, int dtype, u64 i)
{
    switch (dtype) {
    case F64: return ((const double *)in)[i];
    case F32: return ((const float *)in)[i];
    case F16: return f16_bits_to_f32(((const u16 *)in)[i]);
    case BF16: return __uint_as_float((u32)((const u16 *)in)[i] << 16);
    case FP8_E4M3: return small_to_f32(((const u8 *)in)[i], 4, 3, 7, false);
    case FP8_E5M2: return small_to_f32(((const u8 *)in)[i], 5, 2, 15, true);
    case I8: return ((const signed char *)in)[i];
    case U8: return ((const u8 *)in)[i];
    case I32: return ((const int *)in)[i];
    case U32: return ((const u32 *)in)[i];
    default: return (double)((const long long *)in)[i];
    }
}

// Integers take small values from the random modes, so sums and products of them
// stay exact: rand gives 0..99, randn gives round(10 z).
__device__ __forceinline__ double integer_value(int mode, double v)
{
    if (mode == FILL_RAND) return floor(v * 100.0);
    if (mode == FILL_RANDN) return rint(v * 10.0);
    return v;
}

extern "C" __global__ void gb_fill(void *out, int dtype, u64 n, int mode, u64 seed, double value)
{
    bool is_int = dtype >= I8;
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x) {
        double v = mode == FILL_POISON ? 0.0 : element_value(mode, seed, i, value);
        if (is_int) v = integer_value(mode, v);
        store(out, dtype, i, v, mode == FILL_POISON);
    }
}

// Writes value (a NaN or an infinity, made by the host) at element index: the
// planted specials of a tensor, after its fill.
extern "C" __global__ void gb_plant(void *out, int dtype, u64 index, double value)
{
    store(out, dtype, index, value, false);
}

// Must match gb_compare_result in engine/builtins.h.
struct compare_result {
    u64 n_bad;
    u64 first_bad;  // smallest failing index, or ~0
    u64 max_abs;    // bits of a non-negative double: integer order is numeric order
    u64 max_rel;
    u64 n_nan_bad;  // NaN on one side only (or, with nan_matches 0, on either)
    u64 first_nan_bad;
    double sum_sq_diff; // over the elements where neither side is NaN
    double sum_sq_ref;
};

__device__ __forceinline__ u64 warp_sum(u64 v)
{
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}

__device__ __forceinline__ u64 warp_min(u64 v)
{
    for (int o = 16; o > 0; o >>= 1) {
        u64 w = __shfl_down_sync(0xffffffffu, v, o);
        v = w < v ? w : v;
    }
    return v;
}

__device__ __forceinline__ double warp_max(double v)
{
    for (int o = 16; o > 0; o >>= 1) v = fmax(v, __shfl_down_sync(0xffffffffu, v, o));
    return v;
}

// The block's totals go out in one set of atomics, not one per thread: with every
// element a little off (any GEMM in float), per-thread atomics on the same four
// words serialised into tens of milliseconds per check.
__device__ __forceinline__ double warp_sum_f64(double v)
{
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}

// The block's totals go out in one set of atomics, not one per thread: with every
// element a little off (any GEMM in float), per-thread atomics on the same words
// serialised into tens of milliseconds per check. nan_matches: a NaN on both sides
// passes (there is a reference); 0: any NaN fails (x compared with itself).
extern "C" __global__ void gb_compare(const void *x, const void *ref, int dtype, u64 n, double rtol,
                                      double atol, int nan_matches, compare_result *out)
{
    __shared__ u64 s_bad[32], s_first[32], s_nan[32], s_nan_first[32];
    __shared__ double s_abs[32], s_rel[32], s_diff[32], s_ref[32];
    u64 bad = 0, first = ~0ull, nan_bad = 0, nan_first = ~0ull;
    double max_abs = 0.0, max_rel = 0.0, sq_diff = 0.0, sq_ref = 0.0;
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x) {
        double a = load(x, dtype, i), r = load(ref, dtype, i);
        double diff = fabs(a - r);
        bool a_nan = isnan(a), r_nan = isnan(r);
        bool nan_ok = nan_matches ? a_nan == r_nan : !a_nan && !r_nan;
        bool ok = a == r || (!isnan(diff) && diff <= atol + rtol * fabs(r));
        if (a_nan || r_nan) ok = nan_ok && a_nan;
        if (!ok) {
            bad++;
            first = first < i ? first : i;
        }
        if (!nan_ok) {
            nan_bad++;
            nan_first = nan_first < i ? nan_first : i;
        }
        if (!a_nan && !r_nan) {
            double d = a == r ? 0.0 : diff; // inf == inf: no error
            sq_diff += d * d;
            sq_ref += isinf(r) ? 0.0 : r * r;
        }
        if (!isnan(diff) && !isinf(diff) && a != r) {
            max_abs = fmax(max_abs, diff);
            max_rel = fmax(max_rel, r != 0.0 ? diff / fabs(r) : GB_INF_F64);
        }
    }
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, n_warps = (blockDim.x + 31) >> 5;
    bad = warp_sum(bad), first = warp_min(first), nan_bad = warp_sum(nan_bad);
    nan_first = warp_min(nan_first);
    max_abs = warp_max(max_abs), max_rel = warp_max(max_rel);
    sq_diff = warp_sum_f64(sq_diff), sq_ref = warp_sum_f64(sq_ref);
    if (lane == 0) {
        s_bad[warp] = bad, s_first[warp] = first, s_abs[warp] = max_abs, s_rel[warp] = max_rel;
        s_nan[warp] = nan_bad, s_nan_first[warp] = nan_first;
        s_diff[warp] = sq_diff, s_ref[warp] = sq_ref;
    }
    __syncthreads();
    if (warp != 0) return;
    bool in = lane < n_warps;
    bad = in ? s_bad[lane] : 0, first = in ? s_first[lane] : ~0ull;
    nan_bad = in ? s_nan[lane] : 0, nan_first = in ? s_nan_first[lane] : ~0ull;
    max_abs = in ? s_abs[lane] : 0.0, max_rel = in ? s_rel[lane] : 0.0;
    sq_diff = in ? s_diff[lane] : 0.0, sq_ref = in ? s_ref[lane] : 0.0;
    bad = warp_sum(bad), first = warp_min(first), nan_bad = warp_sum(nan_bad);
    nan_first = warp_min(nan_first);
    max_abs = warp_max(max_abs), max_rel = warp_max(max_rel);
    sq_diff = warp_sum_f64(sq_diff), sq_ref = warp_sum_f64(sq_ref);
    if (lane != 0) return;
    if (bad) {
        atomicAdd(&out->n_bad, bad);
        atomicMin(&out->first_bad, first);
    }
    if (nan_bad) {
        atomicAdd(&out->n_nan_bad, nan_bad);
        atomicMin(&out->first_nan_bad, nan_first);
    }
    if (max_abs > 0.0) atomicMax(&out->max_abs, (u64)__double_as_longlong(max_abs));
    if (max_rel > 0.0) atomicMax(&out->max_rel, (u64)__double_as_longlong(max_rel));
    if (sq_diff != 0.0) atomicAdd(&out->sum_sq_diff, sq_diff);
    if (sq_ref != 0.0) atomicAdd(&out->sum_sq_ref, sq_ref);
}

extern "C" __global__ void gb_flush(u32 *buf, u64 n_words, u32 value)
{
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n_words; i += (u64)gridDim.x * blockDim.x)
        buf[i] = value;
}

// The second half of a cold flush: reading a buffer twice the size of L2 after
// writing it leaves L2 full of clean lines, so the timed kernel pays for no
// write-backs. The sink is written only when the XOR of the words equals key,
// which the host picks so that it cannot: the loads stay.
extern "C" __global__ void gb_flush_read(const u32 *buf, u64 n_words, u32 key, u32 *sink)
{
    u32 acc = 0;
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n_words; i += (u64)gridDim.x * blockDim.x)
        acc ^= buf[i];
    if (acc == key) *sink = acc;
}

// The copy ceiling's kernel (engine/ceilings.c): dst = src, n 16-byte vectors,
// COPY_UNROLL of them in flight per thread over a grid-stride loop; a grid of a
// vector per thread does one each.
#define COPY_UNROLL 4
extern "C" __global__ void gb_copy(const uint4 *__restrict__ src, uint4 *__restrict__ dst, u64 n)
{
    u64 stride = (u64)gridDim.x * blockDim.x;
    u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x;
    for (; i + (COPY_UNROLL - 1) * stride < n; i += COPY_UNROLL * stride) {
        uint4 v[COPY_UNROLL];
#pragma unroll
        for (int u = 0; u < COPY_UNROLL; u++)
            v[u] = src[i + u * stride];
#pragma unroll
        for (int u = 0; u < COPY_UNROLL; u++)
            dst[i + u * stride] = v[u];
    }
    for (; i < n; i += stride)
        dst[i] = src[i];
}

// The SM clock without NVML: clock64 cycles counted over a 20 us window of
// %globaltimer nanoseconds. out[0] = cycles, out[1] = nanoseconds.
extern "C" __global__ void gb_clock_probe(u64 *out)
{
    u64 t0, t1;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    long long c0 = clock64();
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
    } while (t1 - t0 < 20000);
    long long c1 = clock64();
    out[0] = (u64)(c1 - c0);
    out[1] = t1 - t0;
}
