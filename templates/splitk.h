/* How a split-K GEMM divides its K loop and where each part of a tile waits to be
 * summed. Plain C, so that the kernel (templates/gemm_wgmma.cuh, through NVRTC)
 * and the CPU test of its arithmetic (tests/test_splitk.c) run the same code.
 *
 * A tile's K loop of `slices` slices is cut into parts of cdiv(slices, SPLIT)
 * slices each, the last one shorter, so that no part is empty: 9 slices with
 * SPLIT 4 give 3 parts of 3, not 3, 3, 3 and 0. Each part is a unit of work of
 * the persistent grid. A warp that finishes its part of a tile writes its
 * accumulators to the workspace, in the slot of its (tile, warp) and the place
 * of its part, and counts itself on the slot's counter; the warp that arrives
 * last sums every part in part order (0, 1, ...), so the result is the same bit
 * for bit whichever part came last, and sets the counter back to zero for the
 * next launch. */
#ifndef GB_TEMPLATES_SPLITK_H
#define GB_TEMPLATES_SPLITK_H

#if defined(__CUDACC__)
#define SPLITK_FN __host__ __device__ __forceinline__
#else
#define SPLITK_FN static inline
#endif

/* The parts a K loop of `slices` slices is cut into when `split` are asked for. */
SPLITK_FN int splitk_parts(int slices, int split)
{
    int per = (slices + split - 1) / split;
    return per > 0 ? (slices + per - 1) / per : 1;
}

/* Part `part`'s slices: [*k0, *k1). */
SPLITK_FN void splitk_range(int slices, int split, int part, int *k0, int *k1)
{
    int per = (slices + split - 1) / split;
    *k0 = part * per;
    *k1 = *k0 + per < slices ? *k0 + per : slices;
}

/* The counter of the accumulators warp `warp` (0 to 3) of consumer share `share`
 * holds for tile `tile` of block `rank` of its cluster: tiles, then the blocks
 * of a cluster, then the consumers' shares of a tile's rows, then warps. */
SPLITK_FN unsigned long long splitk_slot(int tile, int cluster, int rank, int shares, int share,
                                         int warp)
{
    return (((unsigned long long)tile * cluster + rank) * shares + share) * 4 + warp;
}

/* Where part `part` of slot `slot` starts in the workspace, in floats: each
 * (slot, part) holds one warp's accumulators, `per_warp` floats. */
SPLITK_FN unsigned long long splitk_offset(unsigned long long slot, int split, int part,
                                           int per_warp)
{
    return (slot * split + part) * (unsigned long long)per_warp;
}

#endif
