/* The GPU session's plumbing (engine/gpu_internal.h), below gpu.c, timing.c and
 * gpu_gemm.c: a fault noted once and told after, buffers filled on the GPU, the
 * stream waited for. */
#include "engine/builtins.h"
#include "engine/gpu_internal.h"

#include <math.h>

/* Marks the session unusable after a sticky error, so later calls say why. */
int gb_gpu_note_fault(gb_gpu *gpu, int rc, gb_err *err)
{
    if (rc == GB_EFAULT && !gpu->broken) {
        gpu->broken = true;
        gb_err_copy(&gpu->broken_err, err);
    }
    return rc;
}

int gb_gpu_check_usable(gb_gpu *gpu, gb_err *err)
{
    if (!gpu->broken) return GB_OK;
    return gb_err_set(err, GB_EFAULT, "the GPU context is unusable after an earlier fault (%s)",
                      gpu->broken_err.msg);
}

uint32_t gb_gpu_grid_for(uint64_t n)
{
    uint64_t blocks = (n + 255) / 256;
    return blocks > 65535 ? 65535 : blocks ? (uint32_t)blocks : 1;
}

/* Writes the tensor's planted NaN and infinities over its fill. */
static int plant(gb_gpu *gpu, CUdeviceptr buf, const gb_arg *arg, gb_err *err)
{
    static const double values[GB_SPECIAL_COUNT] = {NAN, INFINITY, -INFINITY};
    int dtype = arg->dtype, rc = GB_OK;
    for (int k = 0; k < GB_SPECIAL_COUNT; k++)
        for (int i = 0; i < arg->n_planted[k]; i++) {
            uint64_t index = (uint64_t)arg->planted[k][i];
            double value = values[k];
            void *params[] = {&buf, &dtype, &index, &value};
            GB_CU_CHECK(rc, err, cuLaunchKernel,
                        (gpu->plant, 1, 1, 1, 1, 1, 1, 0, gpu->stream, params, NULL));
        }
cleanup:
    return rc;
}

static int fill(gb_gpu *gpu, CUdeviceptr buf, const gb_arg *arg, gb_fill_mode mode, uint64_t seed,
                gb_err *err)
{
    int dtype = arg->dtype, imode = mode, rc = GB_OK;
    uint64_t n = (uint64_t)gb_arg_elements(arg);
    double value = arg->init_value;
    void *params[] = {&buf, &dtype, &n, &imode, &seed, &value};
    GB_CU_CHECK(rc, err, cuLaunchKernel,
                (gpu->fill, gb_gpu_grid_for(n), 1, 1, 256, 1, 1, 0, gpu->stream, params, NULL));
    if (mode != GB_FILL_POISON) rc = plant(gpu, buf, arg, err);
cleanup:
    return rc;
}

static gb_fill_mode fill_mode(gb_init init)
{
    switch (init) {
    case GB_INIT_RANDN:
        return GB_FILL_RANDN;
    case GB_INIT_RAND:
        return GB_FILL_RAND;
    case GB_INIT_ZEROS:
        return GB_FILL_ZEROS;
    case GB_INIT_ONES:
        return GB_FILL_ONES;
    case GB_INIT_OUTPUT:
        return GB_FILL_POISON;
    default:
        return GB_FILL_VALUE;
    }
}

int gb_gpu_fill_tensor(gb_gpu *gpu, CUdeviceptr buf, const gb_arg *arg, uint64_t seed, gb_err *err)
{
    return fill(gpu, buf, arg, fill_mode(arg->init), seed, err);
}

int gb_gpu_fill_buffer(gb_gpu *gpu, CUdeviceptr buf, gb_dtype dtype, int64_t n, gb_init init,
                       uint64_t seed, gb_err *err)
{
    gb_arg arg = {.kind = GB_ARG_TENSOR, .dtype = dtype, .n_dims = 1, .dims = {n}, .init = init};
    return fill(gpu, buf, &arg, fill_mode(init), seed, err);
}

int gb_gpu_sync(gb_gpu *gpu, gb_err *err)
{
    CUresult cr = gb_cu.cuStreamSynchronize(gpu->stream);
    if (cr != CUDA_SUCCESS)
        return gb_gpu_note_fault(gpu, gb_cu_fail(err, cr, "cuStreamSynchronize"), err);
    return GB_OK;
}
