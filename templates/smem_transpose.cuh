// Turns MN-major slices of a GEMM operand into the K-major layout wgmma reads
// fp8 and tf32 operands in: wgmma's transpose bit is for 16-bit types only, so
// gemm_wgmma.cuh loads such an operand's slice with TMA as it is stored and
// three warps of its producer warpgroup move it here, in shared memory.
//
// A box is 64 elements of M or N by BK elements of K, BK * sizeof(T) = 128
// bytes, 8 KiB either way:
//   raw (as TMA loads an MN-major box, unswizzled): row k of 64 elements,
//     element (k, n) at byte (k * 64 + n) * sizeof(T);
//   out (as TMA would load a K-major box, 128-byte swizzled): row n of 128
//     bytes, whose 16-byte chunk c sits at chunk position c ^ (n % 8).
// Both start on 1024-byte boundaries, which the swizzle is relative to.
//
// Each function is called by the 96 threads x = 0..95 of three warps, on
// BOXES boxes laid out one after another in both buffers. The thread layouts
// are chosen so that neither the loads nor the stores of a warp have bank
// conflicts.
#pragma once

namespace xpose {

constexpr int BOX_BYTES = 8192;
constexpr int THREADS = 96;

// Shared-memory loads and stores by address (the compiler cannot tell that
// the kernel's aligned pointers are shared, and would use generic ones).
__device__ __forceinline__ unsigned smem_addr(const void *p)
{
    return (unsigned)__cvta_generic_to_shared(p);
}

__device__ __forceinline__ unsigned ld32(unsigned addr)
{
    unsigned v;
    asm volatile("ld.shared.b32 %0, [%1];" : "=r"(v) : "r"(addr) : "memory");
    return v;
}

__device__ __forceinline__ void st64(unsigned addr, unsigned a, unsigned b)
{
    asm volatile("st.shared.v2.b32 [%0], {%1, %2};" ::"r"(addr), "r"(a), "r"(b) : "memory");
}

__device__ __forceinline__ void st128(unsigned addr, const uint4 &v)
{
    asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(v.x), "r"(v.y),
                 "r"(v.z), "r"(v.w)
                 : "memory");
}

// tf32 (4-byte elements, BK = 32): a unit is one element column n by four rows
// of K (one 16-byte chunk kc of row n in `out`): four 4-byte loads, one 16-byte
// store. A warp's lanes take 32 neighbouring columns of one chunk: the loads
// read 128 consecutive bytes, and each quarter-warp's stores land in eight
// different chunk positions (n % 8 differs).
template <int BOXES>
__device__ __forceinline__ void tf32(const unsigned char *raw, unsigned char *out, int x)
{
    const unsigned in0 = smem_addr(raw), out0 = smem_addr(out);
    constexpr int UNITS = BOXES * 512, BATCH = 2; // a batch's loads are in flight together
    for (int u0 = x; u0 < UNITS; u0 += BATCH * THREADS) {
        uint4 v[BATCH];
#pragma unroll
        for (int j = 0; j < BATCH; j++) {
            const int u = u0 + j * THREADS, box = u >> 9, kc = (u >> 6) & 7, n = u & 63;
            const unsigned src = in0 + box * BOX_BYTES + (kc * 4 * 64 + n) * 4;
            if (u < UNITS) {
                v[j].x = ld32(src);
                v[j].y = ld32(src + 256);
                v[j].z = ld32(src + 512);
                v[j].w = ld32(src + 768);
            }
        }
#pragma unroll
        for (int j = 0; j < BATCH; j++) {
            const int u = u0 + j * THREADS, box = u >> 9, kc = (u >> 6) & 7, n = u & 63;
            if (u < UNITS) st128(out0 + box * BOX_BYTES + n * 128 + ((kc ^ (n & 7)) << 4), v[j]);
        }
    }
}

// fp8 (BK = 128): a unit is four element columns 4*n4 .. 4*n4+3 by 16 rows of
// K (chunk kc of those four rows of `out`), done in two halves of eight rows:
// eight 4-byte loads, a 4 x 4 byte transpose of each four rows (byte
// permutes), four 8-byte stores. A warp's lanes 0-15 take n4 = 0..15 of an
// even chunk, lanes 16-31 the odd chunk after it. For no bank conflicts:
//   - lanes 16-31 load each pair of rows in swapped order (an odd row apart
//     from lanes 0-15, so 16 banks away), and lanes with n4 >= 8 take the two
//     halves in the other order;
//   - lane n4 stores its four columns starting at column (n4 / 2) % 4, so a
//     half-warp's stores reach eight rows of different n % 8, each in both
//     8-byte halves of a chunk.
// Both orders are folded into the byte permutes' selectors, computed once.
template <int BOXES>
__device__ __forceinline__ void fp8(const unsigned char *raw, unsigned char *out, int x)
{
    const int lane = x & 31, n4 = lane & 15, swap = lane >> 4, g = n4 >> 3, rot = (n4 >> 1) & 3;
    // byte j (0..3) of the first row of a pair, then of the second: in
    // __byte_perm(w0, w1, s), nibble values 0-3 pick w0's bytes, 4-7 w1's
    auto pick = [&](int j) {
        const int b = (j + rot) & 3;
        return swap ? (unsigned)((b + 4) | b << 4) : (unsigned)(b | (b + 4) << 4);
    };
    const unsigned s01 = pick(0) | pick(1) << 8, s23 = pick(2) | pick(3) << 8;
    const unsigned in0 = smem_addr(raw) + n4 * 4, out0 = smem_addr(out);
#pragma unroll 1
    for (int u = x; u < BOXES * 128; u += THREADS) {
        const int box = u >> 7, kc = (u >> 4) & 7;
        const unsigned src = in0 + box * BOX_BYTES + kc * 16 * 64, dst = out0 + box * BOX_BYTES;
#pragma unroll 1 // both halves' loads at once would need more than 56 registers
        for (int half = 0; half < 2; half++) {
            const int hb = half ^ g; // which eight rows of the chunk
            unsigned w[8];
#pragma unroll
            for (int i = 0; i < 8; i++)
                w[i] = ld32(src + (hb * 8 + (i ^ swap)) * 64);
            unsigned o[4][2]; // o[j]: column (j + rot) % 4's bytes, four rows a word
#pragma unroll
            for (int q = 0; q < 2; q++) {
                const unsigned t01 = __byte_perm(w[4 * q], w[4 * q + 1], s01);
                const unsigned t23 = __byte_perm(w[4 * q], w[4 * q + 1], s23);
                const unsigned u01 = __byte_perm(w[4 * q + 2], w[4 * q + 3], s01);
                const unsigned u23 = __byte_perm(w[4 * q + 2], w[4 * q + 3], s23);
                o[0][q] = __byte_perm(t01, u01, 0x5410);
                o[1][q] = __byte_perm(t01, u01, 0x7632);
                o[2][q] = __byte_perm(t23, u23, 0x5410);
                o[3][q] = __byte_perm(t23, u23, 0x7632);
            }
#pragma unroll
            for (int j = 0; j < 4; j++) {
                const int n = n4 * 4 + ((j + rot) & 3);
                st64(dst + n * 128 + ((kc ^ (n & 7)) << 4) + hb * 8, o[j][0], o[j][1]);
            }
        }
    }
}

// BOXES boxes of T from raw into out.
template <class T, int BOXES>
__device__ __forceinline__ void boxes(const unsigned char *raw, unsigned char *out, int x)
{
    static_assert(sizeof(T) == 1 || sizeof(T) == 4, "16-bit operands need no transposing");
    if constexpr (sizeof(T) == 1)
        fp8<BOXES>(raw, out, x);
    else
        tf32<BOXES>(raw, out, x);
}

} // namespace xpose
