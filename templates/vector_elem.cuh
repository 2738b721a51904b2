// Element types of the vector group (templates/vector.cuh and its reference,
// templates/vector_ref.cuh): how a 16-byte chunk of f32, f16, bf16, fp8_e4m3 or
// fp8_e5m2 turns into floats and back, and how one element converts to float or
// double. Arithmetic is done in fp32 (the references in double); storage is the
// element type. Conversions to a narrower type round to nearest even once; fp8
// saturates to its largest finite value (as gpubench's own fill does, and as the
// reference does), so +-Inf stored as fp8_e5m2 becomes +-57344; NaN stays NaN.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

typedef long long i64;

template <class T> struct elem;

template <> struct elem<float> {
    static constexpr int per_word = 1;
    static __device__ __forceinline__ void unpack(unsigned w, float *f)
    {
        f[0] = __uint_as_float(w);
    }
    static __device__ __forceinline__ unsigned pack(const float *f)
    {
        return __float_as_uint(f[0]);
    }
    static __device__ __forceinline__ float to_float(float v)
    {
        return v;
    }
    static __device__ __forceinline__ float from_float(float v)
    {
        return v;
    }
    static __device__ __forceinline__ float from_double(double v)
    {
        return (float)v;
    }
};

template <> struct elem<__half> {
    static constexpr int per_word = 2;
    static __device__ __forceinline__ void unpack(unsigned w, float *f)
    {
        f[0] = __half2float(__ushort_as_half((unsigned short)(w & 0xffffu)));
        f[1] = __half2float(__ushort_as_half((unsigned short)(w >> 16)));
    }
    static __device__ __forceinline__ unsigned pack(const float *f)
    {
        __half2 h = __floats2half2_rn(f[0], f[1]);
        return *reinterpret_cast<unsigned *>(&h);
    }
    static __device__ __forceinline__ float to_float(__half v)
    {
        return __half2float(v);
    }
    static __device__ __forceinline__ __half from_float(float v)
    {
        return __float2half_rn(v);
    }
    static __device__ __forceinline__ __half from_double(double v)
    {
        return __double2half(v);
    }
};

template <> struct elem<__nv_bfloat16> {
    static constexpr int per_word = 2;
    // bf16 is the upper half of an f32: widening is a shift, exact.
    static __device__ __forceinline__ void unpack(unsigned w, float *f)
    {
        f[0] = __uint_as_float(w << 16);
        f[1] = __uint_as_float(w & 0xffff0000u);
    }
    static __device__ __forceinline__ unsigned pack(const float *f)
    {
        __nv_bfloat162 h = __floats2bfloat162_rn(f[0], f[1]);
        return *reinterpret_cast<unsigned *>(&h);
    }
    static __device__ __forceinline__ float to_float(__nv_bfloat16 v)
    {
        return __bfloat162float(v);
    }
    static __device__ __forceinline__ __nv_bfloat16 from_float(float v)
    {
        return __float2bfloat16_rn(v);
    }
    static __device__ __forceinline__ __nv_bfloat16 from_double(double v)
    {
        return __double2bfloat16(v);
    }
};

// Both fp8 formats: two elements at a time through the f16x2 conversion that
// sm_89 and later do in one instruction.
template <class T, __nv_fp8_interpretation_t K> struct fp8_elem {
    static constexpr int per_word = 4;
    static __device__ __forceinline__ void two(unsigned short pair, float *f)
    {
        __half2 h = __half2(__nv_cvt_fp8x2_to_halfraw2((__nv_fp8x2_storage_t)pair, K));
        float2 v = __half22float2(h);
        f[0] = v.x;
        f[1] = v.y;
    }
    static __device__ __forceinline__ void unpack(unsigned w, float *f)
    {
        two((unsigned short)(w & 0xffffu), f);
        two((unsigned short)(w >> 16), f + 2);
    }
    static __device__ __forceinline__ unsigned pack(const float *f)
    {
        unsigned lo = __nv_cvt_float2_to_fp8x2(make_float2(f[0], f[1]), __NV_SATFINITE, K);
        unsigned hi = __nv_cvt_float2_to_fp8x2(make_float2(f[2], f[3]), __NV_SATFINITE, K);
        return lo | (hi << 16);
    }
    static __device__ __forceinline__ float to_float(T v)
    {
        return __half2float(__half(__nv_cvt_fp8_to_halfraw(v.__x, K)));
    }
    static __device__ __forceinline__ T from_float(float v)
    {
        T r;
        r.__x = __nv_cvt_float_to_fp8(v, __NV_SATFINITE, K);
        return r;
    }
    static __device__ __forceinline__ T from_double(double v)
    {
        T r;
        r.__x = __nv_cvt_double_to_fp8(v, __NV_SATFINITE, K);
        return r;
    }
};
template <> struct elem<__nv_fp8_e4m3> : fp8_elem<__nv_fp8_e4m3, __NV_E4M3> {
};
template <> struct elem<__nv_fp8_e5m2> : fp8_elem<__nv_fp8_e5m2, __NV_E5M2> {
};

// A 16-byte chunk of T as floats, and back.
template <class T> struct chunk {
    static constexpr int n = 16 / (int)sizeof(T);
    static __device__ __forceinline__ void unpack(uint4 c, float (&f)[n])
    {
        constexpr int k = elem<T>::per_word;
        elem<T>::unpack(c.x, f);
        elem<T>::unpack(c.y, f + k);
        elem<T>::unpack(c.z, f + 2 * k);
        elem<T>::unpack(c.w, f + 3 * k);
    }
    static __device__ __forceinline__ uint4 pack(const float (&f)[n])
    {
        constexpr int k = elem<T>::per_word;
        return make_uint4(elem<T>::pack(f), elem<T>::pack(f + k), elem<T>::pack(f + 2 * k),
                          elem<T>::pack(f + 3 * k));
    }
};
