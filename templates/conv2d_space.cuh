// A 2D convolution (a stencil with a dense (2R+1) x (2R+1) filter) over an H x W
// fp32 image, zero outside it, with many tuning knobs, for recording a large
// search space: out[y][x] = sum over dy, dx of filt[dy][dx] * in[y+dy-R][x+dx-R].
// R is the macro RADIUS (default 2; at most 4), given with -DRADIUS=.
//
// A block of TX x TY threads computes a (TY*RY) x (TX*RX) tile of the output, each
// thread RY consecutive rows of RX outputs.
//
// Knobs (template parameters) and what they change on the GPU:
//   TX, TY   block shape: coalescing along x, occupancy.
//   RX, RY   outputs per thread: reuse of loaded inputs, register pressure.
//   LAYOUT   0: a thread's RX outputs are contiguous (x = tx*RX + i); 1: strided by
//            TX (x = tx + i*TX), so a warp's accesses are contiguous at every i.
//   SMEM     0: inputs are read from global memory (through L1); 1: the block's
//            input tile and its halo are first staged in shared memory.
//   VEC      1 or 4: width of global loads filling shared memory, and of stores
//            when a thread's outputs are contiguous in runs of 4. The vector path
//            needs W a multiple of 4; otherwise the kernel takes the scalar path.
//   WIN      0: every output reads its (2R+1)^2 inputs; 1: each input row the thread
//            needs is read once into registers and used for every output row it
//            touches (a sliding window down the thread's rows).
//   FILT     0: filter weights read from global memory (uniform, cached); 1: copied
//            into shared memory first.
//   UNROLL   0: the loop over filter rows (input rows with WIN) stays a loop;
//            1: it is unrolled, as every inner loop is.
//
// Launch with a (TX, TY) block over (cdiv(W, TX*RX), cdiv(H, TY*RY)).

#ifndef RADIUS
#define RADIUS 2
#endif

template <int TX, int RX, int LAYOUT> __device__ __forceinline__ int c2s_col(int tx, int i)
{
    return LAYOUT == 0 ? tx * RX + i : tx + i * TX;
}

// Fills the shared tile: rows y0-R .. y0+BH+R-1, columns x0-HX .. x0+BW+HX-1.
template <int SH, int SW, int HX, int VEC, int THREADS>
__device__ __forceinline__ void c2s_fill(float (*tile)[SW], const float *__restrict__ in, int H,
                                         int W, int y0, int x0, int tid)
{
    constexpr int R = RADIUS;
    if constexpr (VEC == 4) {
        if (W % 4 == 0) {
            for (int v = tid; v < SH * (SW / 4); v += THREADS) {
                int r = v / (SW / 4), c = (v % (SW / 4)) * 4;
                int gy = y0 - R + r, gx = x0 - HX + c;
                float4 x = make_float4(0.f, 0.f, 0.f, 0.f);
                if (gy >= 0 && gy < H && gx >= 0 && gx < W)
                    x = __ldg(reinterpret_cast<const float4 *>(&in[(size_t)gy * W + gx]));
                *reinterpret_cast<float4 *>(&tile[r][c]) = x;
            }
            return;
        }
    }
    for (int e = tid; e < SH * SW; e += THREADS) {
        int r = e / SW, c = e % SW;
        int gy = y0 - R + r, gx = x0 - HX + c;
        tile[r][c] =
            (gy >= 0 && gy < H && gx >= 0 && gx < W) ? __ldg(&in[(size_t)gy * W + gx]) : 0.f;
    }
}

template <int TX, int TY, int RX, int RY, int LAYOUT, int SMEM, int VEC, int WIN, int FILT,
          int UNROLL>
__global__ void __launch_bounds__(TX *TY)
    conv2d_space(const float *__restrict__ in, const float *__restrict__ filt,
                 float *__restrict__ out, int H, int W)
{
    constexpr int R = RADIUS, F = 2 * R + 1, THREADS = TX * TY;
    constexpr int BW = TX * RX, BH = TY * RY;
    constexpr int HX = VEC == 4 ? 4 : R; // a left halo of 4 keeps float4 loads aligned
    constexpr int SH = SMEM ? BH + 2 * R : 1, SW = SMEM ? BW + 2 * HX : 4;
    constexpr int UF = UNROLL ? F + RY : 1;
    static_assert(R >= 0 && R <= 4, "RADIUS must be 0 to 4");
    static_assert(!(SMEM && VEC == 4) || BW % 4 == 0, "VEC = 4 needs TX*RX % 4 == 0");
    __shared__ __align__(16) float tile[SH][SW];
    __shared__ float fs[FILT ? F * F : 1];

    const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * TX + tx;
    const int x0 = blockIdx.x * BW, y0 = blockIdx.y * BH;
    if constexpr (FILT)
        for (int i = tid; i < F * F; i += THREADS)
            fs[i] = filt[i];
    if constexpr (SMEM) c2s_fill<SH, SW, HX, VEC, THREADS>(tile, in, H, W, y0, x0, tid);
    if constexpr (FILT || SMEM) __syncthreads();

    // The weight at (dy, dx) and the input at (y, x) in image coordinates.
    auto weight = [&](int dy, int dx) {
        return FILT ? fs[dy * F + dx] : __ldg(&filt[dy * F + dx]);
    };
    auto input = [&](int y, int x) {
        if constexpr (SMEM)
            return tile[y - y0 + R][x - x0 + HX];
        else
            return (y >= 0 && y < H && x >= 0 && x < W) ? __ldg(&in[(size_t)y * W + x]) : 0.f;
    };

    const int yb = y0 + ty * RY; // the thread's first output row
    float acc[RY][RX] = {};
    if constexpr (WIN == 0) {
#pragma unroll UF
        for (int dy = 0; dy < F; ++dy)
#pragma unroll
            for (int dx = 0; dx < F; ++dx) {
                float w = weight(dy, dx);
#pragma unroll
                for (int oy = 0; oy < RY; ++oy)
#pragma unroll
                    for (int i = 0; i < RX; ++i)
                        acc[oy][i] = fmaf(
                            w,
                            input(yb + oy + dy - R, x0 + c2s_col<TX, RX, LAYOUT>(tx, i) + dx - R),
                            acc[oy][i]);
            }
    } else {
        // One input row in registers: contiguous outputs share a run of RX + 2R
        // inputs; strided ones need F inputs each.
        constexpr int NV = LAYOUT == 0 ? RX + 2 * R : RX * F;
#pragma unroll UF
        for (int r = 0; r < RY + 2 * R; ++r) {
            const int y = yb - R + r;
            float v[NV];
#pragma unroll
            for (int j = 0; j < NV; ++j) {
                int x = LAYOUT == 0 ? x0 + tx * RX - R + j
                                    : x0 + c2s_col<TX, RX, LAYOUT>(tx, j / F) + j % F - R;
                v[j] = input(y, x);
            }
#pragma unroll
            for (int oy = 0; oy < RY; ++oy) {
                const int dy = r - oy;
                if (dy < 0 || dy >= F) continue;
#pragma unroll
                for (int dx = 0; dx < F; ++dx) {
                    float w = weight(dy, dx);
#pragma unroll
                    for (int i = 0; i < RX; ++i)
                        acc[oy][i] = fmaf(w, v[LAYOUT == 0 ? i + dx : i * F + dx], acc[oy][i]);
                }
            }
        }
    }

#pragma unroll
    for (int oy = 0; oy < RY; ++oy) {
        const int y = yb + oy;
        if (y >= H) break;
        float *row = &out[(size_t)y * W];
        if constexpr (VEC == 4 && LAYOUT == 0 && RX % 4 == 0) {
            if (W % 4 == 0) {
#pragma unroll
                for (int i = 0; i < RX; i += 4) {
                    int x = x0 + tx * RX + i;
                    if (x < W)
                        *reinterpret_cast<float4 *>(&row[x]) =
                            make_float4(acc[oy][i], acc[oy][i + 1], acc[oy][i + 2], acc[oy][i + 3]);
                }
                continue;
            }
        }
#pragma unroll
        for (int i = 0; i < RX; ++i) {
            int x = x0 + c2s_col<TX, RX, LAYOUT>(tx, i);
            if (x < W) row[x] = acc[oy][i];
        }
    }
}
