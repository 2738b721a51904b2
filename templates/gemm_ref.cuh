// Reference GEMM: C[M,N] = A[M,K] * B[K,N], row-major, one thread per element of C,
// accumulating in double so it is closer to the exact product than any fp32
// variant it checks. Launch with 16 x 16 blocks over (N, M).

extern "C" __global__ void gemm_ref_f32(const float *A, const float *B, float *C, int M, int N,
                                        int K)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M || col >= N) return;
    double acc = 0.0;
    for (int k = 0; k < K; ++k)
        acc += (double)A[(size_t)row * K + k] * (double)B[(size_t)k * N + col];
    C[(size_t)row * N + col] = (float)acc;
}
