/* Tensormap arguments and cluster launches on a real device: a kernel built on
 * templates/tma.cuh loads an irregular f32 matrix box by box through TMA (the
 * boxes past its edge read as the map's fill) in clusters of two, and is checked
 * against a plain copy. The kernels compile on every machine; the rest skips
 * without a driver or a GPU of compute capability 9.0 or newer, and holds the
 * GPU's lease (gpu_present.h) while it runs. */
#include "gpu_present.h"
#include "engine/gpu.h"
#include "engine/nvrtc.h"
#include "scratch.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Each block copies one 32 x 32 box; it traps when the cluster it runs in is not
 * the size it was told, or when the box's part past the edge is not the fill. */
static const char KERNELS[] =
    "#include \"tma.cuh\"\n"
    "extern \"C\" __global__ void tma_copy(const __grid_constant__ gb_tensormap map,\n"
    "    const float *in, float *out, int rows, int cols, int cluster, int nan_fill)\n"
    "{\n"
    "  __shared__ alignas(128) float tile[32][32];\n"
    "  __shared__ alignas(8) unsigned long long bar;\n"
    "  if (tma::cluster_blocks() != (unsigned)cluster) __trap();\n"
    "  if (threadIdx.x == 0) { tma::prefetch(&map); tma::init(&bar, 1); tma::fence_init(); }\n"
    "  __syncthreads();\n"
    "  int x0 = blockIdx.x * 32, y0 = blockIdx.y * 32;\n"
    "  if (threadIdx.x == 0) {\n"
    "    tma::expect_bytes(&bar, sizeof tile);\n"
    "    tma::load(&map, tile, &bar, x0, y0);\n"
    "  }\n"
    "  tma::wait(&bar, 0);\n"
    "  for (int i = threadIdx.x; i < 32 * 32; i += blockDim.x) {\n"
    "    int r = y0 + i / 32, c = x0 + i % 32;\n"
    "    float v = tile[i / 32][i % 32];\n"
    "    if (r < rows && c < cols) out[(size_t)r * cols + c] = v;\n"
    "    else if (nan_fill ? v == v : v != 0.0f) __trap();\n"
    "  }\n"
    "  tma::cluster_sync();\n"
    "}\n"
    "extern \"C\" __global__ void plain_copy(const __grid_constant__ gb_tensormap map,\n"
    "    const float *in, float *out, int rows, int cols, int cluster, int nan_fill)\n"
    "{\n"
    "  size_t n = (size_t)rows * cols;\n"
    "  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;\n"
    "       i += (size_t)gridDim.x * blockDim.x)\n"
    "    out[i] = in[i];\n"
    "}\n";

enum { ROWS = 300, COLS = 1000, CLUSTER = 2 };

typedef struct fixture {
    gb_gpu *gpu;
    gb_compile_out cubin;
} fixture;

/* Compiles KERNELS for arch with templates/ on the include path. */
static void compile(const char *arch, gb_compile_out *out)
{
    char templates[4096];
    source_dir(templates, sizeof templates);
    strncat(templates, "/templates", sizeof templates - strlen(templates) - 1);
    const char *dirs[] = {templates};
    gb_compile_req req = {
        .source = KERNELS,
        .source_name = "test_gpu_tma.cu",
        .name_exprs = {"tma_copy", "plain_copy"},
        .n_name_exprs = 2,
        .arch = arch,
        .include_dirs = dirs,
        .n_include_dirs = 1,
    };
    gb_err err;
    int rc = gb_nvrtc_compile(&req, out, &err);
    if (rc) fprintf(stderr, "%s\n%s\n", err.msg, out->log ? out->log : "");
    assert_int_equal(rc, GB_OK);
}

static int setup(void **state)
{
    *state = NULL;
    gb_gpu *gpu;
    int rc = gpu_session_open(&gpu);
    if (rc || !gpu) return rc;
    fixture *f = calloc(1, sizeof *f);
    f->gpu = gpu;
    if (gb_gpu_device(f->gpu)->cc_major < 9) { /* no TMA, no clusters */
        gb_gpu_close(f->gpu);
        free(f);
        return 0;
    }
    compile(gb_gpu_device(f->gpu)->arch, &f->cubin);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    if (!f) return 0;
    gb_gpu_close(f->gpu);
    gb_compile_out_free(&f->cubin);
    free(f);
    return 0;
}

/* in (randn), its tensormap, out (checked), the sizes, the cluster and the fill. */
static void set_problem(fixture *f, gb_oob_fill fill)
{
    gb_arg args[] = {
        {.kind = GB_ARG_TENSORMAP,
         .tensor = 1,
         .n_box = 2,
         .box = {32, 32},
         .l2_promotion = GB_L2_PROMOTION_128B,
         .oob_fill = fill},
        {.kind = GB_ARG_TENSOR,
         .dtype = GB_DT_F32,
         .n_dims = 2,
         .dims = {ROWS, COLS},
         .init = GB_INIT_RANDN},
        {.kind = GB_ARG_TENSOR,
         .dtype = GB_DT_F32,
         .n_dims = 2,
         .dims = {ROWS, COLS},
         .init = GB_INIT_OUTPUT,
         .checked = true},
        {.kind = GB_ARG_SCALAR, .dtype = GB_DT_I32, .int_value = ROWS},
        {.kind = GB_ARG_SCALAR, .dtype = GB_DT_I32, .int_value = COLS},
        {.kind = GB_ARG_SCALAR, .dtype = GB_DT_I32, .int_value = CLUSTER},
        {.kind = GB_ARG_SCALAR, .dtype = GB_DT_I32, .int_value = fill == GB_OOB_NAN},
    };
    gb_err err;
    int rc = gb_gpu_set_problem(f->gpu, args, 7, 5, &err);
    if (rc) fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, GB_OK);
}

static gb_gpu_kernel *load(fixture *f, const char *name)
{
    gb_gpu_kernel *k = NULL;
    gb_err err;
    assert_int_equal(gb_gpu_load(f->gpu, f->cubin.cubin, f->cubin.cubin_bytes, name, 0, &k, &err),
                     GB_OK);
    return k;
}

static void test_tma_loads_in_clusters_match_a_plain_copy(void **state)
{
    fixture *f = *state;
    if (!f) skip();
    for (int fill = GB_OOB_ZERO; fill <= GB_OOB_NAN; fill++) {
        set_problem(f, (gb_oob_fill)fill);
        gb_gpu_kernel *ref = load(f, "plain_copy"), *k = load(f, "tma_copy");
        gb_launch plain = {.grid = {64, 1, 1}, .block = {256, 1, 1}};
        gb_launch boxes = {.grid = {(COLS + 31) / 32, (ROWS + 31) / 32, 1},
                           .block = {128, 1, 1},
                           .cluster = {CLUSTER, 1, 1}};
        gb_check_spec check = {.n_outputs = 1, .outputs = {2}};
        gb_check_result result;
        gb_err err;
        assert_int_equal(gb_gpu_run_reference(f->gpu, ref, &plain, &err), GB_OK);
        int rc = gb_gpu_verify(f->gpu, k, &boxes, &check, &result, &err);
        if (rc) fprintf(stderr, "%s\n", err.msg);
        assert_int_equal(rc, GB_OK);
        assert_true(result.checked);
        assert_int_equal(result.n_bad, 0);
        assert_int_equal(result.n_compared, ROWS * COLS);
        gb_gpu_unload(f->gpu, k);
        gb_gpu_unload(f->gpu, ref);
    }
}

static void test_a_cluster_the_grid_cannot_hold_is_refused_by_the_driver(void **state)
{
    fixture *f = *state;
    if (!f) skip();
    set_problem(f, GB_OOB_ZERO);
    gb_gpu_kernel *k = load(f, "tma_copy");
    gb_launch odd = {.grid = {3, 1, 1}, .block = {128, 1, 1}, .cluster = {2, 1, 1}};
    gb_check_spec check = {.n_outputs = 1, .outputs = {2}};
    gb_check_result result;
    gb_err err;
    int rc = gb_gpu_verify(f->gpu, k, &odd, &check, &result, &err);
    assert_int_equal(rc, GB_ELAUNCH);
    assert_non_null(strstr(err.msg, "cuLaunchKernelEx"));
    gb_gpu_unload(f->gpu, k);
}

/* On every machine: NVRTC compiles tma.cuh's loads, barriers and cluster calls. */
static void test_the_tma_kernels_compile_for_sm_90a(void **state)
{
    (void)state;
    gb_compile_out out;
    compile("sm_90a", &out);
    assert_true(out.cubin_bytes > 0);
    gb_compile_out_free(&out);
}

#define TEST(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_tma_kernels_compile_for_sm_90a),
        TEST(test_tma_loads_in_clusters_match_a_plain_copy),
        TEST(test_a_cluster_the_grid_cannot_hold_is_refused_by_the_driver),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
