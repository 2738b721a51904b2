// Asking L2 for memory ahead of its loads (the norms and softmax kernels): the bulk
// prefetch is issued by one thread and does not wait; the copy engine fetches the
// bytes while the SM works, so the loads that come later wait on L2, not on DRAM.
#pragma once

// bytes at p to L2: p 16-byte aligned, bytes a multiple of 16 (in pieces of at most
// 1 GiB, the instruction's size is 32 bits).
__device__ __forceinline__ void l2_prefetch(const void *p, unsigned long long bytes)
{
    const char *a = static_cast<const char *>(p);
    while (bytes > 0) {
        const unsigned piece = bytes > (1ull << 30) ? 1u << 30 : (unsigned)bytes;
        asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(a), "r"(piece) : "memory");
        a += piece;
        bytes -= piece;
    }
}
