/* Library GEMMs on a real device: a cuBLASLt GEMM as the reference of naive
 * kernels that compute the same thing (f32 and bf16, a batch of 2, beta != 0 on
 * an in-out C, transposed operands, fp8 on Hopper), timed cold and hot and raced
 * like a kernel; cuBLASLt's measured rates; and whole runs through the worker
 * with gb.cublas.gemm as reference and baseline. Every test skips when there is
 * no CUDA driver or no device (or, for fp8, no GPU of compute capability 8.9);
 * with one, the program holds the GPU's lease (gpu_present.h). */
#include "gpu_present.h"
#include "scratch.h"
#include "cache/cache.h"
#include "exec/exec.h"
#include "engine/gpu.h"
#include "engine/nvrtc.h"
#include "exec/worker.h"
#include "lua/binding.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* C[z] = alpha * op(A[z]) @ op(B[z]) + beta * C[z], row-major, one thread per
 * element, summed in float in the order of k: what cuBLASLt computes, slowly.
 * ta: A is stored [K, M]; tb: B is stored [N, K]; lda, ldb, ldc: the elements
 * from one stored row to the next. C is not read when beta is 0 (it is NaN
 * then), as cuBLASLt does not read it. */
static const char KERNELS[] =
    "#include <cuda_bf16.h>\n"
    "#include <cuda_fp8.h>\n"
    "__device__ float to_f(float x) { return x; }\n"
    "__device__ float to_f(__nv_bfloat16 x) { return __bfloat162float(x); }\n"
    "__device__ float to_f(__nv_fp8_e4m3 x) { return float(x); }\n"
    "__device__ void put(float *p, float x) { *p = x; }\n"
    "__device__ void put(__nv_bfloat16 *p, float x) { *p = __float2bfloat16(x); }\n"
    "template <typename T, typename R, bool WRONG>\n"
    "__global__ void mm(const T *a, const T *b, R *c, int m, int n, int k, int ta, int tb,\n"
    "                   long lda, long ldb, long ldc, float alpha, float beta)\n"
    "{\n"
    "  long col = blockIdx.x * (long)blockDim.x + threadIdx.x;\n"
    "  long row = blockIdx.y * (long)blockDim.y + threadIdx.y;\n"
    "  if (row >= m || col >= n) return;\n"
    "  const T *A = a + blockIdx.z * (ta ? k : m) * lda, *B = b + blockIdx.z * (tb ? n : k) * "
    "ldb;\n"
    "  R *C = c + blockIdx.z * m * ldc + row * ldc + col;\n"
    "  float s = 0;\n"
    "  for (long i = 0; i < k; i++)\n"
    "    s += to_f(A[ta ? i * lda + row : row * lda + i]) *\n"
    "         to_f(B[tb ? col * ldb + i : i * ldb + col]);\n"
    "  put(C, (WRONG ? 1.0f : alpha) * s + (beta != 0 ? beta * to_f(*C) : 0.0f));\n"
    "}\n";

enum { MM_F32, MM_F32_WRONG, MM_BF16, MM_FP8, N_KERNELS };
static const char *const NAMES[N_KERNELS] = {
    "mm<float, float, false>",
    "mm<float, float, true>",
    "mm<__nv_bfloat16, __nv_bfloat16, false>",
    "mm<__nv_fp8_e4m3, __nv_bfloat16, false>",
};

typedef struct fixture {
    gb_gpu *gpu;
    gb_compile_out cubin;
    int cc; /* 90 for 9.0 */
} fixture;

static int setup(void **state)
{
    *state = NULL;
    gb_gpu *gpu;
    int rc = gpu_session_open(&gpu);
    if (rc || !gpu) return rc;
    fixture *f = calloc(1, sizeof *f);
    f->gpu = gpu;
    gb_err err;
    const gb_device_info *d = gb_gpu_device(f->gpu);
    f->cc = d->cc_major * 10 + d->cc_minor;
    gb_compile_req req = {.source = KERNELS,
                          .source_name = "test_gpu_cublas.cu",
                          .arch = d->arch,
                          .n_name_exprs = N_KERNELS};
    for (int i = 0; i < N_KERNELS; i++)
        req.name_exprs[i] = NAMES[i];
    if (gb_nvrtc_compile(&req, &f->cubin, &err) != GB_OK) {
        fprintf(stderr, "compiling the test's kernels: %s\n", err.msg);
        return -1;
    }
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

#define NEED_GPU(f)                                                                                \
    do {                                                                                           \
        if (!(f)) skip();                                                                          \
    } while (0)

/* ---- one problem: A, B, C and the naive kernel's scalars ------------------------ */

static gb_arg tensor(gb_dtype dtype, int64_t batch, int64_t rows, int64_t cols, gb_init init,
                     bool checked)
{
    return (gb_arg){.kind = GB_ARG_TENSOR,
                    .dtype = dtype,
                    .n_dims = 3,
                    .dims = {batch, rows, cols},
                    .init = init,
                    .checked = checked};
}

static gb_arg i32(int64_t v)
{
    return (gb_arg){.kind = GB_ARG_SCALAR, .dtype = GB_DT_I32, .int_value = v};
}

static gb_arg f32(double v)
{
    return (gb_arg){.kind = GB_ARG_SCALAR, .dtype = GB_DT_F32, .float_value = v};
}

static gb_arg i64(int64_t v)
{
    return (gb_arg){.kind = GB_ARG_SCALAR, .dtype = GB_DT_I64, .int_value = v};
}

/* The problem of g: its operands as g stores them, rows padded to the leading
 * dimensions (C in and out when beta reads it: filled, and checked), then m, n,
 * k, ta, tb, lda, ldb, ldc, alpha, beta for the kernel. */
static void set_problem(fixture *f, const gb_gemm *g)
{
    gb_arg args[13] = {
        tensor(g->a_dtype, g->batch, gb_gemm_rows(g, 'a'), gb_gemm_ld(g, 'a'), GB_INIT_RANDN,
               false),
        tensor(g->b_dtype, g->batch, gb_gemm_rows(g, 'b'), gb_gemm_ld(g, 'b'), GB_INIT_RANDN,
               false),
        tensor(g->c_dtype, g->batch, g->m, gb_gemm_ld(g, 'c'),
               g->beta != 0 ? GB_INIT_RANDN : GB_INIT_OUTPUT, true),
        i32(g->m),
        i32(g->n),
        i32(g->k),
        i32(g->trans_a),
        i32(g->trans_b),
        i64(gb_gemm_ld(g, 'a')),
        i64(gb_gemm_ld(g, 'b')),
        i64(gb_gemm_ld(g, 'c')),
        f32(g->alpha),
        f32(g->beta),
    };
    gb_err err;
    if (gb_gpu_set_problem(f->gpu, args, 13, 7, &err)) fail_msg("%s", err.msg);
}

static gb_gemm gemm_of(gb_dtype in, gb_dtype out, int64_t m, int64_t n, int64_t k, int64_t batch)
{
    return (gb_gemm){.a = 0,
                     .b = 1,
                     .c = 2,
                     .d = -1,
                     .m = m,
                     .n = n,
                     .k = k,
                     .batch = batch,
                     .a_dtype = in,
                     .b_dtype = in,
                     .c_dtype = out,
                     .compute = GB_GEMM_COMPUTE_FP32,
                     .alpha = 1.5,
                     .beta = 0.5};
}

static gb_launch launch_of(const gb_gemm *g)
{
    return (gb_launch){
        .grid = {(uint32_t)((g->n + 15) / 16), (uint32_t)((g->m + 15) / 16), (uint32_t)g->batch},
        .block = {16, 16, 1}};
}

static gb_gpu_kernel *load_gemm(fixture *f, const gb_gemm *g)
{
    gb_gpu_kernel *k = NULL;
    gb_err err;
    if (gb_gpu_load_gemm(f->gpu, g, &k, &err)) fail_msg("gb_gpu_load_gemm: %s", err.msg);
    return k;
}

static gb_gpu_kernel *load_naive(fixture *f, int which)
{
    gb_gpu_kernel *k = NULL;
    gb_err err;
    if (gb_gpu_load(f->gpu, f->cubin.cubin, f->cubin.cubin_bytes, f->cubin.lowered[which], 0, &k,
                    &err))
        fail_msg("gb_gpu_load %s: %s", NAMES[which], err.msg);
    return k;
}

/* cuBLASLt as the reference of the naive kernel `which`; returns the check. */
static gb_check_result check_against_cublas(fixture *f, const gb_gemm *g, int which, double rtol,
                                            double atol)
{
    set_problem(f, g);
    gb_gpu_kernel *ref = load_gemm(f, g), *k = load_naive(f, which);
    gb_launch launch = launch_of(g), none = {.grid = {1, 1, 1}, .block = {1, 1, 1}};
    gb_check_spec check = {.n_outputs = 1, .outputs = {2}, .rtol = rtol, .atol = atol};
    gb_check_result res;
    gb_err err;
    if (gb_gpu_run_reference(f->gpu, ref, &none, &err)) fail_msg("reference: %s", err.msg);
    if (gb_gpu_verify(f->gpu, k, &launch, &check, &res, &err)) fail_msg("verify: %s", err.msg);
    assert_true(res.checked);
    assert_int_equal(res.n_compared, gb_gemm_elements(g, 'c'));
    printf("# %s vs cuBLASLt: %lld bad, max abs err %.3g, max rel err %.3g\n", NAMES[which],
           (long long)res.n_bad, res.max_abs_err, res.max_rel_err);
    gb_gpu_unload(f->gpu, k);
    gb_gpu_unload(f->gpu, ref);
    return res;
}

/* ---- the session ---------------------------------------------------------------- */

static void test_an_sgemm_agrees_with_cublas_on_a_batch_with_beta(void **state)
{
    fixture *f = *state;
    NEED_GPU(f);
    gb_gemm g = gemm_of(GB_DT_F32, GB_DT_F32, 128, 96, 64, 2);
    assert_int_equal(check_against_cublas(f, &g, MM_F32, 1e-3, 1e-3).n_bad, 0);
    /* a kernel that forgets alpha is caught */
    gb_check_result wrong = check_against_cublas(f, &g, MM_F32_WRONG, 1e-3, 1e-3);
    assert_true(wrong.n_bad > g.m * g.n * g.batch / 2);
}

/* Odd sizes: the matrices of the batch are 4-byte aligned only, which the
 * algorithm's choice must allow for; both operands stored transposed. */
static void test_transposed_operands_and_odd_sizes_agree(void **state)
{
    fixture *f = *state;
    NEED_GPU(f);
    gb_gemm g = gemm_of(GB_DT_F32, GB_DT_F32, 33, 17, 9, 3);
    g.trans_a = true;
    assert_int_equal(check_against_cublas(f, &g, MM_F32, 1e-3, 1e-3).n_bad, 0);
    g.trans_a = false, g.trans_b = true;
    assert_int_equal(check_against_cublas(f, &g, MM_F32, 1e-3, 1e-3).n_bad, 0);
    g.trans_a = true, g.beta = 0; /* C is an output: never read */
    assert_int_equal(check_against_cublas(f, &g, MM_F32, 1e-3, 1e-3).n_bad, 0);
}

/* Rows padded to leading dimensions (odd ones: 4-byte rows only for bf16), on a
 * batch, with each operand transposed in turn; the padding is poisoned in both
 * runs of C and left alone by both. */
static void test_padded_rows_agree(void **state)
{
    fixture *f = *state;
    NEED_GPU(f);
    gb_gemm g = gemm_of(GB_DT_F32, GB_DT_F32, 33, 17, 9, 3);
    g.lda = 12, g.ldb = 20, g.ldc = 19;
    assert_int_equal(check_against_cublas(f, &g, MM_F32, 1e-3, 1e-3).n_bad, 0);
    g.trans_a = true, g.trans_b = true, g.lda = 40, g.ldb = 9;
    assert_int_equal(check_against_cublas(f, &g, MM_F32, 1e-3, 1e-3).n_bad, 0);
    gb_gemm h = gemm_of(GB_DT_BF16, GB_DT_BF16, 100, 60, 71, 2);
    h.lda = 72, h.ldb = 66, h.beta = 0;
    assert_int_equal(check_against_cublas(f, &h, MM_BF16, 1.6e-2, 1e-2).n_bad, 0);
}

/* bf16 results differ by their last bit where the two sums round apart. */
static void test_a_bf16_gemm_agrees_with_cublas(void **state)
{
    fixture *f = *state;
    NEED_GPU(f);
    gb_gemm g = gemm_of(GB_DT_BF16, GB_DT_BF16, 128, 96, 64, 2);
    assert_int_equal(check_against_cublas(f, &g, MM_BF16, 1.6e-2, 1e-2).n_bad, 0);
}

/* fp8 on Hopper runs with A as [M, K] and B as [N, K] only. */
static void test_an_fp8_gemm_agrees_with_cublas(void **state)
{
    fixture *f = *state;
    NEED_GPU(f);
    if (f->cc < 89) skip();
    gb_gemm g = gemm_of(GB_DT_FP8_E4M3, GB_DT_BF16, 128, 64, 64, 1);
    g.trans_b = true;
    assert_int_equal(check_against_cublas(f, &g, MM_FP8, 1.6e-2, 1e-2).n_bad, 0);
}

static void test_a_gemm_that_does_not_match_the_problem_is_refused(void **state)
{
    fixture *f = *state;
    NEED_GPU(f);
    gb_gemm g = gemm_of(GB_DT_F32, GB_DT_F32, 128, 96, 64, 2);
    set_problem(f, &g);
    g.batch = 3;
    gb_gpu_kernel *k = NULL;
    gb_err err;
    assert_int_equal(gb_gpu_load_gemm(f->gpu, &g, &k, &err), GB_EINVAL);
    assert_non_null(strstr(err.msg, "the GEMM's a, argument 1, is not a f32 tensor"));
    assert_null(k);
}

static void measure(fixture *f, gb_gpu_kernel *k, gb_measure_mode mode, const gb_gemm *g)
{
    gb_measure_opts opts = gb_measure_defaults();
    opts.mode = mode;
    gb_measurement m;
    gb_launch none = {.grid = {1, 1, 1}, .block = {1, 1, 1}};
    gb_err err;
    if (gb_gpu_measure(f->gpu, k, &none, &opts, &m, &err)) fail_msg("measure: %s", err.msg);
    assert_true(m.stats.n >= opts.min_samples && m.stats.median > 0);
    assert_true(mode == GB_MODE_COLD ? m.launches_per_sample == 1 : m.launches_per_sample >= 1);
    printf("# cuBLASLt %s %lldx%lldx%lld: %s median %.4f ms (%d launches a sample), %.1f TFLOP/s\n",
           gb_dtype_name(g->a_dtype), (long long)g->m, (long long)g->n, (long long)g->k,
           gb_measure_mode_name(mode), m.stats.median, m.launches_per_sample,
           gb_gemm_flops(g) / (m.stats.median * 1e-3) / 1e12);
    gb_measurement_free(&m);
}

/* Hot mode captures the launches in a CUDA graph: cuBLASLt's must go in too. */
static void test_a_gemm_is_timed_cold_and_hot_and_raced(void **state)
{
    fixture *f = *state;
    NEED_GPU(f);
    gb_gemm g = gemm_of(GB_DT_BF16, GB_DT_BF16, 1024, 1024, 1024, 2);
    set_problem(f, &g);
    gb_gpu_kernel *k = load_gemm(f, &g);
    assert_int_equal(gb_gpu_kernel_registers(k), -1);
    measure(f, k, GB_MODE_COLD, &g);
    measure(f, k, GB_MODE_HOT, &g);
    gb_gpu_kernel *both[2] = {k, load_naive(f, MM_BF16)};
    gb_launch launches[2] = {{.grid = {1, 1, 1}, .block = {1, 1, 1}}, launch_of(&g)};
    gb_measure_opts opts = gb_measure_defaults();
    gb_measurement m[2];
    gb_err err;
    if (gb_gpu_race(f->gpu, both, launches, 2, &opts, m, &err)) fail_msg("race: %s", err.msg);
    assert_true(m[0].stats.median > 0 && m[1].stats.median > 0);
    assert_true(m[0].stats.median < m[1].stats.median); /* cuBLASLt beats the naive kernel */
    for (int i = 0; i < 2; i++) {
        gb_measurement_free(&m[i]);
        gb_gpu_unload(f->gpu, both[i]);
    }
}

static void test_cublas_rates_are_measured_for_each_math(void **state)
{
    fixture *f = *state;
    NEED_GPU(f);
    const gb_math maths[] = {GB_MATH_FP32, GB_MATH_TF32, GB_MATH_FP16, GB_MATH_BF16, GB_MATH_FP8};
    const gb_device_info *d = gb_gpu_device(f->gpu);
    for (size_t i = 0; i < sizeof maths / sizeof *maths; i++) {
        if (maths[i] == GB_MATH_FP8 && f->cc < 89) continue;
        double tflops = 0;
        gb_err err;
        if (gb_gpu_cublas_rate(f->gpu, maths[i], 4096, 4096, 4096, &tflops, &err))
            fail_msg("%s: %s", gb_math_name(maths[i]), err.msg);
        printf("# %s: cuBLASLt %s at 4096^3: %.1f TFLOP/s\n", d->name, gb_math_name(maths[i]),
               tflops);
        assert_true(tflops > 1 && tflops < 10000);
    }
    double tflops = 1;
    gb_err err;
    assert_int_equal(gb_gpu_cublas_rate(f->gpu, GB_MATH_FP64, 64, 64, 64, &tflops, &err),
                     GB_EINVAL);
    assert_true(tflops == 0);
}

/* ---- through the worker ------------------------------------------------------------ */

static int open_worker(void *ctx, gb_exec **out, gb_err *err)
{
    (void)ctx;
    static char exe[4096];
    snprintf(exe, sizeof exe, "%s/cli/gpubench", getenv("GB_BINARY_DIR"));
    gb_worker_opts opts = {.exe = exe, .ordinal = 0};
    return gb_exec_worker(&opts, out, err);
}

/* The rate as the lead's measured ceilings take it: through the executor. */
static void test_the_worker_measures_a_cublas_rate(void **state)
{
    (void)state;
    if (!gpu_lease_take()) skip();
    gb_exec *exec = NULL;
    gb_err err;
    double tflops = 0;
    assert_int_equal(open_worker(NULL, &exec, &err), GB_OK);
    if (gb_exec_cublas_rate(exec, GB_MATH_BF16, 2048, 2048, 2048, &tflops, &err))
        fail_msg("%s", err.msg);
    printf("# bf16 through the worker at 2048^3: %.1f TFLOP/s\n", tflops);
    assert_true(tflops > 1);
    gb_exec_destroy(exec);
}

/* The ceilings through the worker: the copy's, the best of the driver's copy and
 * gpubench's kernel, says which way reached it. */
static void test_the_worker_measures_the_ceilings(void **state)
{
    (void)state;
    if (!gpu_lease_take()) skip();
    gb_exec *exec = NULL;
    gb_err err;
    gb_ceilings c;
    assert_int_equal(open_worker(NULL, &exec, &err), GB_OK);
    if (gb_exec_ceilings(exec, &c, &err)) fail_msg("%s", err.msg);
    printf("# copy %.0f GB/s by %s; bf16 %.1f TFLOP/s\n", c.copy_gbps, c.copy_how, c.gemm_bf16);
    assert_true(c.copy_gbps > 100);
    assert_true(c.copy_bytes >= 1 << 30);
    assert_true(!strcmp(c.copy_how, "cuMemcpyDtoD") || !strncmp(c.copy_how, "copy kernel, ", 13));
    gb_exec_destroy(exec);
}

/* The sgemm template tuned against cuBLAS: every variant checks out against it
 * (fp32 sums on both sides), and cuBLAS is timed as the baseline. */
static const char TUNE_SCRIPT[] =
    "local gb = require 'gpubench'\n"
    "local ref = gb.cublas.gemm { a = 1, b = 2, c = 3, m = 'M', n = 'N', k = 'K',\n"
    "  dtype = 'f32', compute = 'fp32', beta = 1.0 }\n"
    "local k = gb.kernel { name = 'sgemm_vs_cublas', source = gb.template 'sgemm.cuh',\n"
    "  entry = 'sgemm<${BM},${BN},${BK},${TM},${TN}>',\n"
    "  params = { BM = {64, 128}, BN = {64}, BK = {8}, TM = {4, 8}, TN = {4} },\n"
    "  args = function(s) return { gb.tensor('f32', {s.M, s.K}, 'randn'),\n"
    "    gb.tensor('f32', {s.K, s.N}, 'randn'), gb.tensor('f32', {s.M, s.N}, 'zeros'),\n"
    "    gb.i32(s.M), gb.i32(s.N), gb.i32(s.K) } end,\n"
    "  grid = function(c, s) return { gb.cdiv(s.N, c.BN), gb.cdiv(s.M, c.BM) } end,\n"
    "  block = function(c) return (c.BM // c.TM) * (c.BN // c.TN) end,\n"
    "  reference = ref, check = { outputs = { 3 }, rtol = 1e-3, atol = 1e-3 },\n"
    "  flops = function(s) return 2 * s.M * s.N * s.K end }\n"
    "local r = gb.tune(k, { shapes = { {M = 512, N = 512, K = 512}, {M = 333, N = 517, K = 129} "
    "},\n"
    "  baseline = 'reference' })\n"
    "for _, x in ipairs(r) do\n"
    "  assert(x.best, 'no best for ' .. x.key)\n"
    "  assert(x.counts.ok == 4 and x.counts.wrong == 0, 'statuses of ' .. x.key)\n"
    "  assert(x.baseline and x.baseline.median > 0 and x.speedup > 0, 'baseline of ' .. x.key)\n"
    "end\n";

/* The sgemm template writes C = A B (it has no beta): a C of zeros read with beta
 * = 1 leaves cuBLAS computing the same, and exercises C read from its own copy. */
static void test_a_tuning_run_checks_and_times_against_cublas(void **state)
{
    (void)state;
    if (!gpu_lease_take()) skip();
    char dir[] = "/tmp/gb-test-gpu-cublas-XXXXXX", cache_dir[64];
    assert_non_null(mkdtemp(dir));
    assert_int_equal(scratch_write(dir, "tune.lua", TUNE_SCRIPT), 0);
    snprintf(cache_dir, sizeof cache_dir, "%s/cache", dir);
    static char template_dir[4096], script[4096];
    static const char *templates[1];
    snprintf(template_dir, sizeof template_dir, "%s/templates", getenv("GB_SOURCE_DIR"));
    snprintf(script, sizeof script, "%s/tune.lua", dir);
    templates[0] = template_dir;
    gb_run_context context = {0};
    gb_lua_host host = {
        .session = {.open_exec = open_worker}, .template_path = templates, .n_template_path = 1};
    gb_err err = {0};
    char *text = NULL;
    size_t len = 0;
    FILE *tables = open_memstream(&text, &len);
    gb_output *table = NULL;
    assert_int_equal(gb_output_table(tables, &(gb_table_opts){0}, &table, &err), GB_OK);
    gb_session_begin_outputs(&host.session, table, &context, &err);
    host.session.tuner = (gb_tuner_opts){.jobs = 4,
                                         .seed = 1,
                                         .measure = gb_measure_defaults(),
                                         .log = stderr,
                                         .trial_timeout_s = 20};
    assert_int_equal(gb_cache_open(cache_dir, 0, &host.session.tuner.cache, &err), GB_OK);
    lua_State *L = NULL;
    int rc = gb_lua_new(&host, &L, &err);
    if (rc == GB_OK) rc = gb_lua_run(L, script, 0, NULL, &err);
    gb_lua_close(L, &host);
    gb_cache_close(host.session.tuner.cache);
    gb_session_end_outputs(&host.session, &(gb_err){0});
    gb_run_context_free(&context);
    fclose(tables);
    printf("%s", text);
    if (rc) fail_msg("%s", err.msg);
    assert_int_equal(host.session.n_shapes_failed, 0);
    assert_non_null(strstr(text, "vs cuBLAS"));
    free(text);
    scratch_remove(dir);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    /* The worker's tests first: cuBLASLt's runtime keeps this process's context
     * once a test here has used it, and NVML would count this process as another
     * one on the GPU while the worker measures (the best would be contended). */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_worker_measures_a_cublas_rate),
        cmocka_unit_test(test_a_tuning_run_checks_and_times_against_cublas),
        T(test_an_sgemm_agrees_with_cublas_on_a_batch_with_beta),
        T(test_transposed_operands_and_odd_sizes_agree),
        T(test_padded_rows_agree),
        T(test_a_bf16_gemm_agrees_with_cublas),
        T(test_an_fp8_gemm_agrees_with_cublas),
        T(test_a_gemm_that_does_not_match_the_problem_is_refused),
        T(test_a_gemm_is_timed_cold_and_hot_and_raced),
        T(test_cublas_rates_are_measured_for_each_math),
        T(test_the_worker_measures_the_ceilings),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
