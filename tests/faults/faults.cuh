// Fault injection: y = 2 x, except where MODE says to misbehave. Each mode is one
// way a tuning variant can go wrong; a tuning run over all of them must record
// each with its reason and still pick the fastest correct variant.
//
//   MODE 0  correct
//   MODE 1  __trap(): the kernel aborts (the context is lost)
//   MODE 2  writes far out of bounds (illegal address: the context is lost)
//   MODE 3  spins for ever (only the watchdog ends it)
//   MODE 4  correct, but faults.lua asks for more shared memory than exists
//   MODE 5  does not compile
//   MODE 6  computes the wrong answer (3 x)

template <int MODE>
__global__ void faulty(const float *x, float *y, int n)
{
    static_assert(MODE != 5, "MODE 5 does not compile (fault injection)");
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (MODE == 1 && i == 0) __trap();
    if (MODE == 2 && i == 0) y[(size_t)n << 30] = 1.0f;
    if (MODE == 3) {
        // Volatile loads keep the loop: an empty infinite loop may be removed.
        const volatile float *v = x;
        while (v[0] == v[0]) {
        }
    }
    if (i < n) y[i] = (MODE == 6 ? 3.0f : 2.0f) * x[i];
}
