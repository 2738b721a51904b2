// The reference for the STREAM kernels of stream.cuh: one thread per output element
// (with a grid stride), the same arguments, the same access patterns
// (stream_access.cuh), arithmetic in double on the stored inputs and one rounding
// to the element type at the end:
//   f32   (float)d, round to nearest even;
//   f16   cvt.rn.f16.f64, one rounding;
//   bf16  double -> float rounding to odd, then float -> bf16 to nearest even: the
//         float keeps 16 more bits than bf16, so this equals one rounding of the
//         double (and it compiles for any target, unlike cvt.rn.bf16.f64);
//   i8    the exact integer result, wrapped to its low 8 bits (mod 256, as a signed
//         byte); the scalar is truncated to an integer first, as the kernels do.
// NaN and Inf follow IEEE arithmetic in double (Inf - Inf is NaN, NaN propagates).
#include "stream_access.cuh"

__device__ __forceinline__ double ref_to_double(stream_elem x)
{
#if STREAM_DTYPE == STREAM_F16
    double d;
    asm("cvt.f64.f16 %0, %1;" : "=d"(d) : "h"(x));
    return d;
#elif STREAM_DTYPE == STREAM_BF16
    return (double)__uint_as_float((unsigned)x << 16);
#else
    return (double)x;
#endif
}

#if STREAM_DTYPE == STREAM_BF16
// Round to bf16 from a double: to float rounding to odd (truncate, then set the
// last bit when anything was dropped), then to nearest even on the 16 bits kept.
__device__ __forceinline__ unsigned short ref_bf16(double d)
{
    if (d != d) return 0x7fc0; // NaN
    float f = __double2float_rz(d);
    unsigned bits = __float_as_uint(f);
    if ((double)f != d) bits |= 1u;
    return (unsigned short)((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}
#endif

__device__ __forceinline__ stream_elem ref_from_double(double d)
{
#if STREAM_DTYPE == STREAM_F32
    return (float)d;
#elif STREAM_DTYPE == STREAM_F16
    unsigned short h;
    asm("cvt.rn.f16.f64 %0, %1;" : "=h"(h) : "d"(d));
    return h;
#elif STREAM_DTYPE == STREAM_BF16
    return ref_bf16(d);
#else
    long long v = (long long)d; // exact: |d| < 2^10
    int low = (int)(v & 0xff);  // 0 .. 255
    return (stream_elem)(low >= 128 ? low - 256 : low);
#endif
}

__device__ __forceinline__ double ref_scalar(float s)
{
#if STREAM_DTYPE == STREAM_I8
    return (double)(int)s;
#else
    return (double)s;
#endif
}

__device__ __forceinline__ long long ref_source(long long i, long long n, int access)
{
    return access == STREAM_GATHER ? stream_gather_index(i, n) : i * access;
}

#define REF_FOR_EACH(i)                                                                            \
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;                    \
         i += (long long)gridDim.x * blockDim.x)

extern "C" __global__ void stream_copy_ref(const stream_elem *a, stream_elem *c, long long n,
                                           int access)
{
    REF_FOR_EACH(i) c[i] = ref_from_double(ref_to_double(a[ref_source(i, n, access)]));
}

extern "C" __global__ void stream_scale_ref(const stream_elem *c, stream_elem *b, float s,
                                            long long n, int access)
{
    REF_FOR_EACH(i)
    b[i] = ref_from_double(ref_scalar(s) * ref_to_double(c[ref_source(i, n, access)]));
}

extern "C" __global__ void stream_add_ref(const stream_elem *a, const stream_elem *b,
                                          stream_elem *c, long long n, int access)
{
    REF_FOR_EACH(i)
    {
        long long j = ref_source(i, n, access);
        c[i] = ref_from_double(ref_to_double(a[j]) + ref_to_double(b[j]));
    }
}

extern "C" __global__ void stream_triad_ref(const stream_elem *b, const stream_elem *c,
                                            stream_elem *a, float s, long long n, int access)
{
    REF_FOR_EACH(i)
    {
        long long j = ref_source(i, n, access);
        a[i] = ref_from_double(ref_to_double(b[j]) + ref_scalar(s) * ref_to_double(c[j]));
    }
}
