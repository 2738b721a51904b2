// The element types and access patterns of the STREAM kernels, shared by the tuned
// kernels (stream.cuh) and their reference (stream_ref.cuh) so that both read the
// same source elements. No CUDA header is included: the 16-bit floats travel as
// their bits (unsigned short) and convert through PTX, which keeps each NVRTC
// compile of the whole tuning space short.
//
// STREAM_DTYPE (a -D define from examples/suite/stream.lua) picks the element type:
//   1 f32, 2 f16, 3 bf16, 4 i8.
// The access pattern is the argument `access` (the reference follows it; a tuned
// kernel is compiled for one, STREAM_ACCESS, and checks that they agree):
//   1        sequential: output element i reads element i of each input;
//   2, 4, 8  strided by S: output i reads element i*S of each input, whose length
//            is n*S (the kernel reads one element in S and writes every output);
//   0        gather: output i reads element stream_gather_index(i, n) of each input
//            (a fixed hash of i scaled to [0, n); elements can be read twice or
//            not at all, and every input is read at the same index).
#pragma once

#define STREAM_F32  1
#define STREAM_F16  2
#define STREAM_BF16 3
#define STREAM_I8   4

#define STREAM_GATHER 0
#define STREAM_SEQ    1

#if !defined(STREAM_DTYPE)
#error "STREAM_DTYPE must be defined: 1 f32, 2 f16, 3 bf16, 4 i8"
#elif STREAM_DTYPE == STREAM_F32
typedef float stream_elem;
#elif STREAM_DTYPE == STREAM_F16 || STREAM_DTYPE == STREAM_BF16
typedef unsigned short stream_elem;
#elif STREAM_DTYPE == STREAM_I8
typedef signed char stream_elem;
#else
#error "STREAM_DTYPE must be 1 f32, 2 f16, 3 bf16 or 4 i8"
#endif

// The gather's source index for output element i of n (n > 0): a 64-bit mix of i
// (murmur3's finaliser constants, after an odd offset so that i = 0 is mixed too),
// then scaled to [0, n) by the high half of the 128-bit product, which needs no
// division and is uniform enough for n far below 2^64.
__device__ __forceinline__ long long stream_gather_index(long long i, long long n)
{
    unsigned long long x = (unsigned long long)i + 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 33)) * 0xff51afd7ed558ccdull;
    x = (x ^ (x >> 33)) * 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return (long long)__umul64hi(x, (unsigned long long)n);
}
