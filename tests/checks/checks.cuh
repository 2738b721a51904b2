// Kernels for tests/checks/checks.lua: an in-place axpy and an elementwise copy,
// each in a correct and a wrong flavour (MODE 0 and 1), and their references.

// y = a*x + y in place; MODE 1 forgets the old y once (y = a*x + 2y is wrong).
template <int MODE>
__global__ void axpy(float a, const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + (MODE == 1 ? 2.0f : 1.0f) * y[i];
}

extern "C" __global__ void axpy_ref(float a, const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = (float)((double)a * x[i] + (double)y[i]);
}

// y = 2x; MODE 1 squashes NaN to 0 (fmaxf drops it), so a planted NaN fails;
// MODE 2 adds noise of 1e-4 relative: outside an elementwise rtol of 1e-6, inside
// a norm check of 1e-3.
template <int MODE>
__global__ void twice(const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = 2.0f * x[i];
    if (MODE == 1) v = fmaxf(v, -3.4e38f);
    if (MODE == 2) v *= 1.0f + ((i & 1) ? 1e-4f : -1e-4f);
    y[i] = v;
}

extern "C" __global__ void twice_ref(const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = (float)(2.0 * (double)x[i]);
}
