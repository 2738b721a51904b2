/* Launching a kernel on the session's stream with the problem's arguments
 * (engine/gpu_internal.h): a cubin's, with or without clusters, or a library
 * GEMM's (gpu_gemm.c). */
#include "engine/gpu_internal.h"

/* Portable clusters hold up to 8 blocks; more need the kernel's opt-in. */
#define PORTABLE_CLUSTER_BLOCKS 8

/* A launch with thread block clusters: cuLaunchKernelEx with the cluster's shape. */
static int launch_cluster(gb_gpu *gpu, gb_gpu_kernel *k, const gb_launch *l, void **params,
                          gb_err *err)
{
    if (!gb_cu.cuLaunchKernelEx)
        return gb_err_set(err, GB_ELAUNCH,
                          "a cluster launch needs cuLaunchKernelEx, which this driver lacks "
                          "(CUDA 12.0 or newer)");
    CUresult cr;
    if (!k->wide_clusters && gb_launch_cluster_blocks(l) > PORTABLE_CLUSTER_BLOCKS) {
        cr = gb_cu.cuFuncSetAttribute(k->function,
                                      CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);
        if (cr != CUDA_SUCCESS) return gb_cu_fail(err, cr, "cuFuncSetAttribute");
        k->wide_clusters = true;
    }
    CUlaunchAttribute cluster = {.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION};
    cluster.value.clusterDim.x = l->cluster[0] ? l->cluster[0] : 1;
    cluster.value.clusterDim.y = l->cluster[1] ? l->cluster[1] : 1;
    cluster.value.clusterDim.z = l->cluster[2] ? l->cluster[2] : 1;
    CUlaunchConfig config = {
        .gridDimX = l->grid[0],
        .gridDimY = l->grid[1],
        .gridDimZ = l->grid[2],
        .blockDimX = l->block[0],
        .blockDimY = l->block[1],
        .blockDimZ = l->block[2],
        .sharedMemBytes = l->smem_bytes,
        .hStream = gpu->stream,
        .attrs = &cluster,
        .numAttrs = 1,
    };
    cr = gb_cu.cuLaunchKernelEx(&config, k->function, params, NULL);
    if (cr != CUDA_SUCCESS) return gb_cu_fail(err, cr, "cuLaunchKernelEx");
    return GB_OK;
}

/* Launches with the problem's arguments; outputs named in check go to the
 * reference's buffers when use_ref_outputs is set. */
int gb_gpu_launch(gb_gpu *gpu, gb_gpu_kernel *k, const gb_launch *l, bool use_ref_outputs,
                  gb_err *err)
{
    if (k->gemm) return gb_gpu_gemm_launch(gpu, k, use_ref_outputs, err);
    void *params[GB_MAX_ARGS];
    CUdeviceptr ref_ptrs[GB_MAX_ARGS];
    for (int i = 0; i < gpu->n_args; i++) {
        gpu_arg *a = &gpu->args[i];
        params[i] = &a->value;
        if (use_ref_outputs && a->ref_buf) {
            ref_ptrs[i] = a->ref_buf;
            params[i] = &ref_ptrs[i];
        }
        if (use_ref_outputs && a->desc.kind == GB_ARG_TENSORMAP &&
            gpu->args[a->desc.tensor].ref_buf)
            params[i] = &a->ref_map;
    }
    if (gb_launch_cluster_blocks(l) > 1) return launch_cluster(gpu, k, l, params, err);
    CUresult cr =
        gb_cu.cuLaunchKernel(k->function, l->grid[0], l->grid[1], l->grid[2], l->block[0],
                             l->block[1], l->block[2], l->smem_bytes, gpu->stream, params, NULL);
    if (cr != CUDA_SUCCESS) return gb_cu_fail(err, cr, "cuLaunchKernel");
    return GB_OK;
}
