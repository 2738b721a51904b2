// The arithmetic both softmax paths share (softmax_teams.cuh, softmax_workers.cuh): the
// exponential they take and online softmax's (max, sum) pairs.
#pragma once

#define SM_NEG_INF __int_as_float(0xff800000) // -Inf

namespace smx
{

constexpr float LOG2E = 1.4426950408889634f;

__device__ __forceinline__ float ex2(float a)
{
    float r;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(a));
    return r;
}

// exp(x - m) as exp2(x*log2e - mlog), mlog = m*log2e: one FFMA and one MUFU op.
__device__ __forceinline__ float exp_shifted(float x, float mlog)
{
    return ex2(fmaf(x, LOG2E, -mlog));
}

// A sum of exponentials taken against max `from`, moved to max `to` >= from (-Inf to
// -Inf: kept).
__device__ __forceinline__ float rescale(float s, float from, float to)
{
    return from == to ? s : s * ex2((from - to) * LOG2E);
}

// A max and a sum of exponentials taken against it.
struct Pair {
    float m, s;
};

// a and b as one pair: commutative to the bit (fmaxf, and a sum of two terms), so a
// butterfly gives every lane the same bits. The maxes are never NaN (fmaxf skips it;
// a NaN reaches the sum instead).
__device__ __forceinline__ Pair merge(const Pair &a, const Pair &b)
{
    const float m = fmaxf(a.m, b.m);
    return {m, rescale(a.s, a.m, m) + rescale(b.s, b.m, m)};
}

} // namespace smx
