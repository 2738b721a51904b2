/* Library GEMMs in the GPU session: a gb_gpu_kernel that is a cuBLASLt matmul
 * over the problem's tensors instead of a cubin's function, so the reference,
 * the check, both timing modes and races treat it like any kernel; and the rate
 * cuBLASLt reaches on operands of its own (the measured ceilings).
 *
 * The session makes one cuBLASLt handle and one workspace, on the first GEMM.
 * Each GEMM kernel keeps its descriptors and the algorithm cuBLASLt's heuristic
 * ranked first when it was loaded: the same algorithm for every launch of the
 * load, so its timing is stable. The launches go to the session's stream, with
 * the preallocated workspace, which is what lets hot mode capture them in a CUDA
 * graph like a kernel launch.
 *
 * gpubench's tensors are row-major; cuBLASLt's matrices column-major. A row-major
 * [R, C] matrix read column-major is its transpose, [C, R] with leading dimension
 * C, so C = A @ B is computed as C^T = B^T A^T: cuBLASLt's A is our B, its B our A,
 * and its m and n are our N and M. */
#include "base/strbuf.h"
#include "engine/cublas.h"
#include "engine/gemm.h"
#include "engine/gpu_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Enough for the algorithms cuBLASLt ranks best on Hopper at large sizes. */
#define WORKSPACE_BYTES ((size_t)32 << 20)

struct gpu_cublas {
    cublasLtHandle_t handle;
    CUdeviceptr workspace;
    uint64_t workspace_bytes;
};

/* alpha and beta as the scale type wants them: f32, or f16 bits for fp16 sums. */
typedef union gemm_scalar {
    float f32;
    uint16_t f16;
} gemm_scalar;

struct gpu_gemm {
    gb_gemm desc;
    cublasLtMatmulDesc_t op;
    /* Our operands' layouts, each as cuBLASLt reads the stored matrix; D's is C's. */
    cublasLtMatrixLayout_t layout_a, layout_b, layout_c;
    cublasLtMatmulAlgo_t algo;
    gemm_scalar alpha, beta;
};

/* ---- the session's handle and workspace ------------------------------------ */

void gb_gpu_cublas_close(gb_gpu *gpu)
{
    gpu_cublas *c = gpu->cublas;
    if (!c) return;
    if (c->handle) gb_lt.cublasLtDestroy(c->handle);
    if (c->workspace) gb_cu.cuMemFree(c->workspace);
    free(c);
    gpu->cublas = NULL;
}

/* Loads cuBLASLt (the first GEMM of the process) and makes the session's handle
 * and workspace (the first GEMM of the session). */
static int open_cublas(gb_gpu *gpu, gb_err *err)
{
    if (gpu->cublas) return GB_OK;
    int rc = gb_cublas_load(err);
    if (rc) return rc;
    if (!(gpu->cublas = calloc(1, sizeof *gpu->cublas)))
        return gb_err_set(err, GB_ENOMEM, "out of memory");
    gpu_cublas *c = gpu->cublas;
    GB_LT_CHECK(rc, err, cublasLtCreate, (&c->handle));
    GB_CU_CHECK(rc, err, cuMemAlloc, (&c->workspace, WORKSPACE_BYTES));
    c->workspace_bytes = WORKSPACE_BYTES;
    return GB_OK;
cleanup:
    gb_gpu_cublas_close(gpu);
    return gb_err_prefix(err, "setting up cuBLASLt (%s)", gb_cublas_library());
}

/* ---- descriptors ------------------------------------------------------------ */

static cudaDataType_t cuda_type(gb_dtype t)
{
    switch (t) {
    case GB_DT_F16:
        return CUDA_R_16F;
    case GB_DT_BF16:
        return CUDA_R_16BF;
    case GB_DT_FP8_E4M3:
        return CUDA_R_8F_E4M3;
    case GB_DT_FP8_E5M2:
        return CUDA_R_8F_E5M2;
    default:
        return CUDA_R_32F;
    }
}

/* IEEE half bits of f, rounded to nearest even (alpha and beta of fp16 sums). */
static uint16_t to_half(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint32_t sign = (x >> 16) & 0x8000u, abs = x & 0x7FFFFFFFu;
    if (abs >= 0x7F800000u) return (uint16_t)(sign | 0x7C00u | (abs > 0x7F800000u ? 0x200u : 0));
    if (abs >= 0x477FF000u) return (uint16_t)(sign | 0x7C00u); /* 65520 and up: infinity */
    uint32_t r, rem, half;
    if (abs < 0x38800000u) { /* below 2^-14: a subnormal half, in units of 2^-24 */
        if (abs < 0x33000000u) return (uint16_t)sign;
        uint32_t mant = (abs & 0x7FFFFFu) | 0x800000u, shift = 126u - (abs >> 23);
        r = mant >> shift, rem = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
    } else {
        r = (abs - 0x38000000u) >> 13, rem = abs & 0x1FFFu, half = 0x1000u;
    }
    if (rem > half || (rem == half && (r & 1))) r++;
    return (uint16_t)(sign | r);
}

static void set_scalars(gpu_gemm *g)
{
    if (g->desc.compute == GB_GEMM_COMPUTE_FP16) {
        g->alpha.f16 = to_half((float)g->desc.alpha);
        g->beta.f16 = to_half((float)g->desc.beta);
    } else {
        g->alpha.f32 = (float)g->desc.alpha;
        g->beta.f32 = (float)g->desc.beta;
    }
}

static int make_op(gpu_gemm *g, gb_err *err)
{
    static const cublasComputeType_t computes[GB_GEMM_COMPUTE_COUNT] = {
        [GB_GEMM_COMPUTE_FP32] = CUBLAS_COMPUTE_32F,
        [GB_GEMM_COMPUTE_TF32] = CUBLAS_COMPUTE_32F_FAST_TF32,
        [GB_GEMM_COMPUTE_FP16] = CUBLAS_COMPUTE_16F,
    };
    const gb_gemm *d = &g->desc;
    cudaDataType_t scale = d->compute == GB_GEMM_COMPUTE_FP16 ? CUDA_R_16F : CUDA_R_32F;
    /* cuBLASLt's A is our B, its B our A; each is transposed when ours is. */
    cublasOperation_t op_a = d->trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t op_b = d->trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    int rc = GB_OK;
    GB_LT_CHECK(rc, err, cublasLtMatmulDescCreate, (&g->op, computes[d->compute], scale));
    GB_LT_CHECK(rc, err, cublasLtMatmulDescSetAttribute,
                (g->op, CUBLASLT_MATMUL_DESC_TRANSA, &op_a, sizeof op_a));
    GB_LT_CHECK(rc, err, cublasLtMatmulDescSetAttribute,
                (g->op, CUBLASLT_MATMUL_DESC_TRANSB, &op_b, sizeof op_b));
cleanup:
    return rc;
}

/* Operand 'a', 'b' or 'c' as stored (row-major [rows, cols], rows ld elements
 * apart, a batch of them back to back), as cuBLASLt reads it: column-major
 * [cols, rows] with leading dimension ld. */
static int make_layout(const gb_gemm *d, char operand, gb_dtype dtype, cublasLtMatrixLayout_t *out,
                       gb_err *err)
{
    int rc = GB_OK;
    int32_t count = (int32_t)d->batch;
    int64_t rows = gb_gemm_rows(d, operand), ld = gb_gemm_ld(d, operand), stride = rows * ld;
    GB_LT_CHECK(rc, err, cublasLtMatrixLayoutCreate,
                (out, cuda_type(dtype), (uint64_t)gb_gemm_cols(d, operand), (uint64_t)rows, ld));
    if (d->batch > 1) {
        GB_LT_CHECK(rc, err, cublasLtMatrixLayoutSetAttribute,
                    (*out, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count));
        GB_LT_CHECK(rc, err, cublasLtMatrixLayoutSetAttribute,
                    (*out, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride));
    }
cleanup:
    return rc;
}

static int make_layouts(gpu_gemm *g, gb_err *err)
{
    const gb_gemm *d = &g->desc;
    int rc = make_layout(d, 'a', d->a_dtype, &g->layout_a, err);
    if (rc == GB_OK) rc = make_layout(d, 'b', d->b_dtype, &g->layout_b, err);
    if (rc == GB_OK) rc = make_layout(d, 'c', d->c_dtype, &g->layout_c, err);
    return rc;
}

/* ---- the algorithm ------------------------------------------------------------ */

/* The alignment every matrix of a batch keeps: the buffers start 256-byte aligned
 * (cuMemAlloc), the later matrices at multiples of one matrix's bytes. */
static uint32_t batch_alignment(int64_t elements, gb_dtype dtype, int64_t batch)
{
    if (batch <= 1) return 256;
    uint64_t bytes = (uint64_t)elements * gb_dtype_bytes(dtype), low = bytes & (~bytes + 1);
    return low == 0 || low >= 256 ? 256 : (uint32_t)low;
}

static int set_alignment(cublasLtMatmulPreference_t pref, cublasLtMatmulPreferenceAttributes_t attr,
                         uint32_t bytes, gb_err *err)
{
    int rc = GB_OK;
    GB_LT_CHECK(rc, err, cublasLtMatmulPreferenceSetAttribute, (pref, attr, &bytes, sizeof bytes));
cleanup:
    return rc;
}

static int set_preferences(gpu_cublas *lt, const gb_gemm *d, cublasLtMatmulPreference_t pref,
                           gb_err *err)
{
    int64_t per_a = gb_gemm_rows(d, 'a') * gb_gemm_ld(d, 'a');
    int64_t per_b = gb_gemm_rows(d, 'b') * gb_gemm_ld(d, 'b');
    int64_t per_c = gb_gemm_rows(d, 'c') * gb_gemm_ld(d, 'c');
    uint32_t align_c = batch_alignment(per_c, d->c_dtype, d->batch);
    int rc = GB_OK;
    GB_LT_CHECK(rc, err, cublasLtMatmulPreferenceSetAttribute,
                (pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &lt->workspace_bytes,
                 sizeof lt->workspace_bytes));
    /* cuBLASLt's A is our B and its B our A. */
    rc = set_alignment(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
                       batch_alignment(per_b, d->b_dtype, d->batch), err);
    if (rc == GB_OK)
        rc = set_alignment(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                           batch_alignment(per_a, d->a_dtype, d->batch), err);
    if (rc == GB_OK)
        rc = set_alignment(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, align_c, err);
    if (rc == GB_OK)
        rc = set_alignment(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, align_c, err);
cleanup:
    return rc;
}

static bool is_fp8(gb_dtype t)
{
    return t == GB_DT_FP8_E4M3 || t == GB_DT_FP8_E5M2;
}

/* Says which GEMM cuBLASLt refused, with what an fp8 one needs on Hopper. */
static void refused(const gb_gemm *d, gb_err *err)
{
    if (!err) return;
    char what[256], why[GB_ERR_MSG_BYTES];
    gb_gemm_describe(d, what, sizeof what);
    gb_strlcpy(why, err->msg, sizeof why);
    bool fp8_not_tn = is_fp8(d->a_dtype) && !(d->trans_b && !d->trans_a);
    gb_err_set(err, err->code, "cuBLASLt has no algorithm for this GEMM on this GPU (%s): %s%s",
               what, why,
               fp8_not_tn ? "; on Hopper cuBLASLt runs fp8 GEMMs only with trans_a = false and "
                            "trans_b = true (A as [M, K], B as [N, K])"
                          : "");
}

/* The algorithm cuBLASLt's heuristic ranks first, kept for every launch. */
static int pick_algo(gpu_cublas *lt, gpu_gemm *g, gb_err *err)
{
    cublasLtMatmulPreference_t pref = NULL;
    cublasLtMatmulHeuristicResult_t result;
    int found = 0, rc = GB_OK;
    memset(&result, 0, sizeof result);
    GB_LT_CHECK(rc, err, cublasLtMatmulPreferenceCreate, (&pref));
    if ((rc = set_preferences(lt, &g->desc, pref, err))) goto cleanup;
    GB_LT_CHECK(rc, err, cublasLtMatmulAlgoGetHeuristic,
                (lt->handle, g->op, g->layout_b, g->layout_a, g->layout_c, g->layout_c, pref, 1,
                 &result, &found));
    if (found < 1 || result.state != CUBLAS_STATUS_SUCCESS) {
        rc = gb_lt_fail(err, found < 1 ? CUBLAS_STATUS_NOT_SUPPORTED : result.state,
                        "cublasLtMatmulAlgoGetHeuristic");
        goto cleanup;
    }
    g->algo = result.algo;
cleanup:
    if (pref) gb_lt.cublasLtMatmulPreferenceDestroy(pref);
    if (rc == GB_ELAUNCH) refused(&g->desc, err);
    return rc;
}

void gb_gpu_gemm_free(gpu_gemm *g)
{
    if (!g) return;
    if (g->op) gb_lt.cublasLtMatmulDescDestroy(g->op);
    if (g->layout_a) gb_lt.cublasLtMatrixLayoutDestroy(g->layout_a);
    if (g->layout_b) gb_lt.cublasLtMatrixLayoutDestroy(g->layout_b);
    if (g->layout_c) gb_lt.cublasLtMatrixLayoutDestroy(g->layout_c);
    free(g);
}

/* Descriptors and algorithm for desc; the session's cuBLASLt must be open. */
static int make_gemm(gb_gpu *gpu, const gb_gemm *desc, gpu_gemm **out, gb_err *err)
{
    *out = NULL;
    gpu_gemm *g = calloc(1, sizeof *g);
    if (!g) return gb_err_set(err, GB_ENOMEM, "out of memory");
    g->desc = *desc;
    set_scalars(g);
    int rc = make_op(g, err);
    if (rc == GB_OK) rc = make_layouts(g, err);
    if (rc == GB_OK) rc = pick_algo(gpu->cublas, g, err);
    if (rc) {
        gb_gpu_gemm_free(g);
        return rc;
    }
    *out = g;
    return GB_OK;
}

/* ---- launching ---------------------------------------------------------------- */

/* One matmul on the session's stream: D = alpha A B + beta C, with cuBLASLt's A
 * our B and its B our A. */
static int run_gemm(gb_gpu *gpu, gpu_gemm *g, CUdeviceptr a, CUdeviceptr b, CUdeviceptr c,
                    CUdeviceptr d, gb_err *err)
{
    gpu_cublas *lt = gpu->cublas;
    int rc = GB_OK;
    GB_LT_CHECK(rc, err, cublasLtMatmul,
                (lt->handle, g->op, &g->alpha, (const void *)(uintptr_t)b, g->layout_b,
                 (const void *)(uintptr_t)a, g->layout_a, &g->beta, (const void *)(uintptr_t)c,
                 g->layout_c, (void *)(uintptr_t)d, g->layout_c, &g->algo,
                 (void *)(uintptr_t)lt->workspace, lt->workspace_bytes, gpu->stream));
cleanup:
    return rc;
}

/* The device address of operand `name` at argument pos of the current problem
 * (the reference's copy when use_ref and there is one): a tensor of its dtype
 * with at least the elements the GEMM reads or writes. */
static int operand(gb_gpu *gpu, char name, int pos, gb_dtype dtype, int64_t elements, bool use_ref,
                   CUdeviceptr *out, gb_err *err)
{
    const gpu_arg *a = pos >= 0 && pos < gpu->n_args ? &gpu->args[pos] : NULL;
    if (!a || a->desc.kind != GB_ARG_TENSOR || a->desc.dtype != dtype ||
        gb_arg_elements(&a->desc) < elements)
        return gb_err_set(err, GB_EINVAL,
                          "the GEMM's %c, argument %d, is not a %s tensor of %lld elements in "
                          "this problem",
                          name, pos + 1, gb_dtype_name(dtype), (long long)elements);
    *out = use_ref && a->ref_buf ? a->ref_buf : a->buf;
    return GB_OK;
}

/* The four operands' addresses; D is C when the description names no D. */
static int bind(gb_gpu *gpu, const gb_gemm *d, bool use_ref, CUdeviceptr ptr[4], gb_err *err)
{
    int64_t mn = gb_gemm_elements(d, 'c');
    int rc = operand(gpu, 'a', d->a, d->a_dtype, gb_gemm_elements(d, 'a'), use_ref, &ptr[0], err);
    if (rc == GB_OK)
        rc = operand(gpu, 'b', d->b, d->b_dtype, gb_gemm_elements(d, 'b'), use_ref, &ptr[1], err);
    if (rc == GB_OK) rc = operand(gpu, 'c', d->c, d->c_dtype, mn, use_ref, &ptr[2], err);
    ptr[3] = ptr[2];
    if (rc == GB_OK && d->d >= 0)
        rc = operand(gpu, 'd', d->d, d->c_dtype, mn, use_ref, &ptr[3], err);
    return rc;
}

int gb_gpu_gemm_launch(gb_gpu *gpu, gb_gpu_kernel *k, bool use_ref_outputs, gb_err *err)
{
    CUdeviceptr ptr[4];
    int rc = bind(gpu, &k->gemm->desc, use_ref_outputs, ptr, err);
    if (rc) return rc;
    return run_gemm(gpu, k->gemm, ptr[0], ptr[1], ptr[2], ptr[3], err);
}

int gb_gpu_load_gemm(gb_gpu *gpu, const gb_gemm *desc, gb_gpu_kernel **out, gb_err *err)
{
    *out = NULL;
    CUdeviceptr ptr[4];
    int rc = gb_gpu_check_usable(gpu, err);
    if (rc == GB_OK) rc = gb_gemm_check(desc, err);
    if (rc == GB_OK) rc = bind(gpu, desc, false, ptr, err);
    if (rc == GB_OK) rc = open_cublas(gpu, err);
    if (rc) return gb_gpu_note_fault(gpu, rc, err);
    gb_gpu_kernel *k = calloc(1, sizeof *k);
    if (!k) return gb_err_set(err, GB_ENOMEM, "out of memory");
    k->registers = -1;
    k->n_params = -1; /* bound to the arguments by position, checked in bind() */
    if ((rc = make_gemm(gpu, desc, &k->gemm, err))) {
        free(k);
        return gb_gpu_note_fault(gpu, rc, err);
    }
    *out = k;
    return GB_OK;
}

/* ---- cuBLASLt's rate: the measured ceilings -------------------------------------- */

#define RATE_SAMPLES   15
#define RATE_SAMPLE_MS 2.0   /* launches per sample: enough to last this long */
#define RATE_WARMUP_MS 100.0 /* of launches before the samples, for the clocks to settle */

/* What each kind of math is measured on: the usual tensor-core GEMMs, summed in
 * fp32; fp8 as e4m3 A and B to a bf16 D, A as [M, K] and B as [N, K]. */
static int rate_gemm(gb_math math, int64_t m, int64_t n, int64_t k, gb_gemm *out, gb_err *err)
{
    *out = (gb_gemm){.a = 0,
                     .b = 1,
                     .c = 2,
                     .d = -1,
                     .m = m,
                     .n = n,
                     .k = k,
                     .batch = 1,
                     .alpha = 1.0,
                     .beta = 0.0,
                     .compute = GB_GEMM_COMPUTE_FP32};
    gb_dtype in = GB_DT_F32, result = GB_DT_F32;
    switch (math) {
    case GB_MATH_FP32:
        break;
    case GB_MATH_TF32:
        out->compute = GB_GEMM_COMPUTE_TF32;
        break;
    case GB_MATH_FP16:
        in = result = GB_DT_F16;
        break;
    case GB_MATH_BF16:
        in = result = GB_DT_BF16;
        break;
    case GB_MATH_FP8:
        in = GB_DT_FP8_E4M3, result = GB_DT_BF16, out->trans_b = true;
        break;
    default:
        return gb_err_set(err, GB_EINVAL,
                          "cuBLASLt's rate is measured for fp32, tf32, fp16, bf16 and fp8, not %s",
                          gb_math_name(math));
    }
    out->a_dtype = out->b_dtype = in;
    out->c_dtype = result;
    return gb_gemm_check(out, err);
}

/* A, B and C of the rate's GEMM, filled like randn tensors (finite values that
 * keep the tensor cores as busy as real data does). */
static int alloc_operands(gb_gpu *gpu, const gb_gemm *d, CUdeviceptr buf[3], gb_err *err)
{
    const char names[3] = {'a', 'b', 'c'};
    const gb_dtype types[3] = {d->a_dtype, d->b_dtype, d->c_dtype};
    int rc = GB_OK;
    for (int i = 0; i < 3 && rc == GB_OK; i++) {
        int64_t n = gb_gemm_elements(d, names[i]);
        GB_CU_CHECK(rc, err, cuMemAlloc, (&buf[i], (size_t)n * gb_dtype_bytes(types[i])));
        rc = gb_gpu_fill_buffer(gpu, buf[i], types[i], n, GB_INIT_RANDN, 0x9E3779B9u + (unsigned)i,
                                err);
    }
cleanup:
    return rc;
}

/* The milliseconds n launches take between two events. */
static int time_launches(gb_gpu *gpu, gpu_gemm *g, const CUdeviceptr *buf, int n, double *out_ms,
                         gb_err *err)
{
    float ms = 0;
    int rc = GB_OK;
    GB_CU_CHECK(rc, err, cuEventRecord, (gpu->start, gpu->stream));
    for (int i = 0; rc == GB_OK && i < n; i++)
        rc = run_gemm(gpu, g, buf[0], buf[1], buf[2], buf[2], err);
    if (rc) return rc;
    GB_CU_CHECK(rc, err, cuEventRecord, (gpu->stop, gpu->stream));
    GB_CU_CHECK(rc, err, cuEventSynchronize, (gpu->stop));
    GB_CU_CHECK(rc, err, cuEventElapsedTime, (&ms, gpu->start, gpu->stop));
    *out_ms = ms;
cleanup:
    return rc;
}

static int clamp_launches(double want, int most)
{
    return !(want >= 1) ? 1 : want > most ? most : (int)ceil(want);
}

/* A warm-up, then the median over RATE_SAMPLES samples of one launch's time. */
static int time_rate(gb_gpu *gpu, gpu_gemm *g, const CUdeviceptr *buf, double *out_ms, gb_err *err)
{
    double one = 0, ms = 0, samples[RATE_SAMPLES];
    int rc = time_launches(gpu, g, buf, 1, &one, err); /* the first loads cuBLAS's kernels */
    if (rc == GB_OK) rc = time_launches(gpu, g, buf, 1, &one, err);
    if (rc) return rc;
    int per_sample = clamp_launches(one > 0 ? RATE_SAMPLE_MS / one : 1000, 1000);
    int warmup = clamp_launches(one > 0 ? RATE_WARMUP_MS / one : 10000, 10000);
    for (int done = 0; rc == GB_OK && done < warmup; done += per_sample)
        rc = time_launches(gpu, g, buf, per_sample, &ms, err);
    for (int i = 0; rc == GB_OK && i < RATE_SAMPLES; i++) {
        rc = time_launches(gpu, g, buf, per_sample, &ms, err);
        samples[i] = ms / per_sample;
    }
    gb_stats stats;
    if (rc == GB_OK && (rc = gb_stats_compute(samples, RATE_SAMPLES, &stats)))
        return gb_err_set(err, rc, "out of memory");
    if (rc == GB_OK) *out_ms = stats.median;
    return rc;
}

int gb_gpu_cublas_rate(gb_gpu *gpu, gb_math math, int64_t m, int64_t n, int64_t k,
                       double *out_tflops, gb_err *err)
{
    *out_tflops = 0;
    gb_gemm desc;
    CUdeviceptr buf[3] = {0, 0, 0};
    gpu_gemm *g = NULL;
    double ms = 0;
    int rc = rate_gemm(math, m, n, k, &desc, err);
    if (rc == GB_OK) rc = gb_gpu_check_usable(gpu, err);
    if (rc == GB_OK) rc = open_cublas(gpu, err);
    if (rc == GB_OK) rc = alloc_operands(gpu, &desc, buf, err);
    if (rc == GB_OK) rc = make_gemm(gpu, &desc, &g, err);
    if (rc == GB_OK) rc = time_rate(gpu, g, buf, &ms, err);
    if (rc == GB_OK && !(ms > 0)) rc = gb_err_set(err, GB_ECUDA, "the GEMMs took no time");
    if (rc == GB_OK) *out_tflops = gb_gemm_flops(&desc) / (ms * 1e-3) / 1e12;
    if (!gpu->broken) gb_cu.cuStreamSynchronize(gpu->stream);
    gb_gpu_gemm_free(g);
    for (int i = 0; i < 3; i++)
        if (buf[i]) gb_cu.cuMemFree(buf[i]);
    if (rc)
        gb_err_prefix(err, "cuBLASLt's %s rate at M=%lld N=%lld K=%lld", gb_math_name(math),
                      (long long)m, (long long)n, (long long)k);
    return gb_gpu_note_fault(gpu, rc, err);
}
