// Reference 2D convolution for conv2d_space.cuh: out[y][x] = sum over dy, dx of
// filt[dy][dx] * in[y+dy-R][x+dx-R], zero outside the H x W image, one thread per
// output, accumulating in double so it is closer to the exact sum than any fp32
// variant it checks. R is the macro RADIUS (default 2). Launch with 16 x 16 blocks
// over (W, H).

#ifndef RADIUS
#define RADIUS 2
#endif

extern "C" __global__ void conv2d_ref_f32(const float *in, const float *filt, float *out, int H,
                                          int W)
{
    const int R = RADIUS, F = 2 * RADIUS + 1;
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (y >= H || x >= W) return;
    double acc = 0.0;
    for (int dy = 0; dy < F; ++dy)
        for (int dx = 0; dx < F; ++dx) {
            int sy = y + dy - R, sx = x + dx - R;
            if (sy >= 0 && sy < H && sx >= 0 && sx < W)
                acc += (double)filt[dy * F + dx] * (double)in[(size_t)sy * W + sx];
        }
    out[(size_t)y * W + x] = (float)acc;
}
