// Just enough of CUDA to run the space templates' kernels on the CPU, for checking
// their indexing without a GPU: one std::thread per CUDA thread, a std::barrier for
// __syncthreads, the blocks of a grid one after another (so a static local stands
// in for __shared__). Races that real threads do not happen to hit go unseen, and
// misaligned vector accesses are not caught: that is the GPU recording's check.
#pragma once
#include <algorithm>
#include <barrier>
#include <cmath>
#include <functional>
#include <thread>
#include <vector>

struct dim3 {
    int x = 1, y = 1, z = 1;
};
inline thread_local dim3 threadIdx, blockIdx;
inline dim3 blockDim, gridDim;
inline std::barrier<> *g_block_barrier;

struct alignas(16) float4 {
    float x, y, z, w;
};
inline float4 make_float4(float a, float b, float c, float d)
{
    return {a, b, c, d};
}
template <class T> inline T __ldg(const T *p)
{
    return *p;
}
inline void __syncthreads()
{
    g_block_barrier->arrive_and_wait();
}
using std::min;

#define __global__
#define __device__
#define __forceinline__
#define __restrict__
#define __launch_bounds__(n)
#define __shared__   static
#define __align__(n) __attribute__((aligned(n)))

// Runs body once per thread of every block of grid (2D grids and blocks).
inline void launch(dim3 grid, dim3 block, const std::function<void()> &body)
{
    gridDim = grid, blockDim = block;
    const int n = block.x * block.y;
    for (int by = 0; by < grid.y; ++by)
        for (int bx = 0; bx < grid.x; ++bx) {
            std::barrier<> bar(n);
            g_block_barrier = &bar;
            std::vector<std::thread> threads;
            for (int t = 0; t < n; ++t)
                threads.emplace_back([&, t, bx, by] {
                    blockIdx = {bx, by, 1};
                    threadIdx = {t % block.x, t / block.x, 1};
                    body();
                });
            for (auto &t : threads)
                t.join();
        }
}
