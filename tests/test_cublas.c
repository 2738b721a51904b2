/*
 * Library GEMMs without a GPU: cuBLASLt's loader (a missing library is one
 * sentence naming it; an installed one resolves every entry point), the rules of
 * a GEMM description (engine/gemm.h) and its checks against a problem's
 * arguments, its wire form inside the worker's messages (and messages without
 * it, as older tuners send them), and the executor keeping a GEMM reference for
 * the backends it starts. The GPU side is test_gpu_cublas.c.
 */
#include "engine/cublas.h"
#include "exec/exec.h"
#include "engine/gemm.h"
#include "exec/proto.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

static void contains_at(const char *text, const char *part, const char *file, int line)
{
    if (strstr(text, part)) return;
    print_error("\"%s\" does not contain \"%s\"\n", text, part);
    _fail(file, line);
}
#define assert_contains(text, part) contains_at((text), (part), __FILE__, __LINE__)

/* ---- the loader ------------------------------------------------------------ */

/* The loader loads once per process: each case runs in a child of its own. */
typedef int (*child_fn)(void);

static int in_child(child_fn fn)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int rc = fn();
        fflush(NULL);
        _exit(rc);
    }
    int status = 0;
    assert_true(pid > 0 && waitpid(pid, &status, 0) == pid);
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}

static int load_nonexistent(void)
{
    gb_err err = {0};
    setenv("GPUBENCH_CUBLASLT", "/nonexistent/libcublasLt.so.13", 1);
    int rc = gb_cublas_load(&err);
    int again = gb_cublas_load(NULL); /* the first answer stands */
    printf("# %s\n", err.msg);
    return rc == GB_ENODRIVER && again == GB_ENODRIVER && !gb_cublas_library() &&
                   strstr(err.msg, "/nonexistent/libcublasLt.so.13 not found") &&
                   strstr(err.msg, "install the CUDA toolkit's cuBLAS") &&
                   strstr(err.msg, "GPUBENCH_CUBLASLT") && !strchr(err.msg, '\n')
               ? 0
               : 1;
}

static void test_a_missing_library_is_one_sentence_naming_it(void **state)
{
    (void)state;
    assert_int_equal(in_child(load_nonexistent), 0);
}

static int load_default(void)
{
    gb_err err = {0};
    unsetenv("GPUBENCH_CUBLASLT");
    if (gb_cublas_load(&err) != GB_OK) {
        printf("# %s\n", err.msg);
        return 1;
    }
    printf("# %s, cuBLASLt %zu\n", gb_cublas_library(), gb_lt.cublasLtGetVersion());
    return gb_lt.cublasLtMatmul && gb_lt.cublasLtMatmulAlgoGetHeuristic ? 0 : 1;
}

static bool have_cublaslt(void)
{
    const char *names[] = {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"};
    for (size_t i = 0; i < 3; i++) {
        /* Left loaded: the engine opens it next, and unloading it would strand
         * what its C++ runtime allocated when it loaded (a leak to LeakSanitizer). */
        if (dlopen(names[i], RTLD_LAZY | RTLD_LOCAL)) return true;
    }
    return false;
}

static void test_an_installed_library_resolves_every_entry_point(void **state)
{
    (void)state;
    if (!have_cublaslt()) skip();
    assert_int_equal(in_child(load_default), 0);
}

/* ---- the description's rules ---------------------------------------------------- */

static gb_gemm sgemm(void)
{
    return (gb_gemm){.a = 0,
                     .b = 1,
                     .c = 2,
                     .d = -1,
                     .m = 64,
                     .n = 32,
                     .k = 16,
                     .batch = 1,
                     .a_dtype = GB_DT_F32,
                     .b_dtype = GB_DT_F32,
                     .c_dtype = GB_DT_F32,
                     .compute = GB_GEMM_COMPUTE_FP32,
                     .alpha = 1.0};
}

static gb_gemm typed(gb_dtype a, gb_dtype b, gb_dtype c, gb_gemm_compute compute)
{
    gb_gemm g = sgemm();
    g.a_dtype = a, g.b_dtype = b, g.c_dtype = c, g.compute = compute;
    return g;
}

static void refused_at(const gb_gemm *g, const char *why, int line)
{
    gb_err err = {0};
    if (gb_gemm_check(g, &err) != GB_EINVAL) fail_msg("line %d: accepted", line);
    contains_at(err.msg, why, __FILE__, line);
}
#define assert_gemm_refused(g, why) refused_at(&(g), (why), __LINE__)

static void test_the_usual_gemms_are_accepted(void **state)
{
    (void)state;
    const gb_gemm ok[] = {
        typed(GB_DT_F32, GB_DT_F32, GB_DT_F32, GB_GEMM_COMPUTE_FP32),
        typed(GB_DT_F32, GB_DT_F32, GB_DT_F32, GB_GEMM_COMPUTE_TF32),
        typed(GB_DT_F16, GB_DT_F16, GB_DT_F16, GB_GEMM_COMPUTE_FP16),
        typed(GB_DT_F16, GB_DT_F16, GB_DT_F16, GB_GEMM_COMPUTE_FP32),
        typed(GB_DT_F16, GB_DT_F16, GB_DT_F32, GB_GEMM_COMPUTE_FP32),
        typed(GB_DT_BF16, GB_DT_BF16, GB_DT_BF16, GB_GEMM_COMPUTE_FP32),
        typed(GB_DT_BF16, GB_DT_BF16, GB_DT_F32, GB_GEMM_COMPUTE_FP32),
        typed(GB_DT_FP8_E4M3, GB_DT_FP8_E4M3, GB_DT_BF16, GB_GEMM_COMPUTE_FP32),
        typed(GB_DT_FP8_E4M3, GB_DT_FP8_E5M2, GB_DT_F16, GB_GEMM_COMPUTE_FP32),
        typed(GB_DT_FP8_E5M2, GB_DT_FP8_E4M3, GB_DT_F32, GB_GEMM_COMPUTE_FP32),
    };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        gb_err err = {0};
        if (gb_gemm_check(&ok[i], &err)) fail_msg("case %zu: %s", i, err.msg);
    }
}

static void test_types_that_do_not_go_together_are_refused_by_name(void **state)
{
    (void)state;
    gb_gemm g = typed(GB_DT_BF16, GB_DT_BF16, GB_DT_BF16, GB_GEMM_COMPUTE_TF32);
    assert_gemm_refused(g, "compute tf32 needs f32 operands and an f32 C, not bf16 and bf16");
    g = typed(GB_DT_BF16, GB_DT_BF16, GB_DT_BF16, GB_GEMM_COMPUTE_FP16);
    assert_gemm_refused(g, "compute fp16 (fp16 sums) needs f16 operands and an f16 C");
    g = typed(GB_DT_F16, GB_DT_F16, GB_DT_F32, GB_GEMM_COMPUTE_FP16);
    assert_gemm_refused(g, "needs f16 operands and an f16 C, not f16 and f32");
    g = typed(GB_DT_F32, GB_DT_F32, GB_DT_BF16, GB_GEMM_COMPUTE_FP32);
    assert_gemm_refused(g, "f32 operands give an f32 C, not bf16");
    g = typed(GB_DT_BF16, GB_DT_BF16, GB_DT_F16, GB_GEMM_COMPUTE_FP32);
    assert_gemm_refused(g, "bf16 operands give a bf16 or f32 C, not f16");
    g = typed(GB_DT_F16, GB_DT_BF16, GB_DT_F32, GB_GEMM_COMPUTE_FP32);
    assert_gemm_refused(g, "A is f16 and B is bf16: the operands must have the same type");
    g = typed(GB_DT_FP8_E5M2, GB_DT_FP8_E5M2, GB_DT_BF16, GB_GEMM_COMPUTE_FP32);
    assert_gemm_refused(g, "fp8_e5m2 for both A and B");
    g = typed(GB_DT_FP8_E4M3, GB_DT_BF16, GB_DT_BF16, GB_GEMM_COMPUTE_FP32);
    assert_gemm_refused(g, "an fp8 operand needs an fp8 partner");
    g = typed(GB_DT_FP8_E4M3, GB_DT_FP8_E4M3, GB_DT_F16, GB_GEMM_COMPUTE_TF32);
    assert_gemm_refused(g, "fp8 operands are summed in fp32");
    g = typed(GB_DT_I8, GB_DT_I8, GB_DT_I32, GB_GEMM_COMPUTE_FP32);
    assert_gemm_refused(g, "A and B can be f32, f16, bf16, fp8_e4m3 or fp8_e5m2, not i8");
    g = typed(GB_DT_FP8_E4M3, GB_DT_FP8_E4M3, GB_DT_FP8_E4M3, GB_GEMM_COMPUTE_FP32);
    assert_gemm_refused(g, "C can be f32, f16 or bf16, not fp8_e4m3");
}

static void test_sizes_positions_and_scales_are_checked(void **state)
{
    (void)state;
    gb_gemm g = sgemm();
    g.k = 0;
    assert_gemm_refused(g, "M, N and K must be from 1");
    g = sgemm(), g.batch = 0;
    assert_gemm_refused(g, "batch must be from 1");
    g = sgemm(), g.m = g.n = g.k = GB_GEMM_MAX_DIM, g.batch = INT32_MAX;
    assert_gemm_refused(g, "too many elements");
    g = sgemm(), g.c = 1;
    assert_gemm_refused(g, "C (argument 2) must not be A or B");
    g = sgemm(), g.d = 0;
    assert_gemm_refused(g, "D (argument 1) must not be A, B or C");
    g = sgemm(), g.a = GB_MAX_ARGS;
    assert_gemm_refused(g, "argument positions must be from 1 to 32");
    g = sgemm(), g.beta = NAN;
    assert_gemm_refused(g, "alpha and beta must be finite");
    g = sgemm(), g.a = g.b = 0; /* X @ X: one tensor for both inputs is fine */
    assert_int_equal(gb_gemm_check(&g, NULL), GB_OK);
}

/* A leading dimension is 0 (packed) or at least its stored row, and the operand's
 * elements count it. */
static void test_leading_dimensions_pad_the_stored_rows(void **state)
{
    (void)state;
    gb_gemm g = sgemm(); /* A [64, 16], B [16, 32], C [64, 32] */
    g.lda = 15;
    assert_gemm_refused(g, "lda = 15: A's stored rows are 16 elements, so it must be 0 (packed) "
                           "or from 16 to");
    g = sgemm(), g.trans_b = true, g.ldb = 15; /* B stored [32, 16] */
    assert_gemm_refused(g, "ldb = 15: B's stored rows are 16 elements");
    g = sgemm(), g.ldc = -1;
    assert_gemm_refused(g, "ldc = -1: C's stored rows are 32 elements");
    g = sgemm(), g.lda = 20, g.ldb = 32, g.ldc = 40, g.batch = 2;
    assert_int_equal(gb_gemm_check(&g, NULL), GB_OK);
    assert_int_equal(gb_gemm_elements(&g, 'a'), 64 * 20 * 2);
    assert_int_equal(gb_gemm_elements(&g, 'b'), 16 * 32 * 2);
    assert_int_equal(gb_gemm_elements(&g, 'c'), 64 * 40 * 2);
    g.trans_a = true; /* A stored [16, 64]: rows of 64 */
    assert_gemm_refused(g, "lda = 20: A's stored rows are 64 elements");
    g.lda = 0;
    assert_int_equal(gb_gemm_ld(&g, 'a'), 64);
    assert_int_equal(gb_gemm_rows(&g, 'a'), 16);
    char text[256];
    g.lda = 70;
    gb_gemm_describe(&g, text, sizeof text);
    assert_string_equal(text, "f32 x f32 -> f32, M=64 N=32 K=16, batch 2, trans_a, lda 70, "
                              "ldb 32, ldc 40, compute fp32");
}

/* ---- the description against a problem's arguments ---------------------------- */

static gb_arg tensor(gb_dtype dtype, int64_t rows, int64_t cols, gb_init init, bool checked)
{
    return (gb_arg){.kind = GB_ARG_TENSOR,
                    .dtype = dtype,
                    .n_dims = 2,
                    .dims = {rows, cols},
                    .init = init,
                    .checked = checked};
}

/* A [64, 16], B [16, 32], C [64, 32] output, and M as a scalar. */
static void sgemm_args(gb_arg args[4])
{
    args[0] = tensor(GB_DT_F32, 64, 16, GB_INIT_RANDN, false);
    args[1] = tensor(GB_DT_F32, 16, 32, GB_INIT_RANDN, false);
    args[2] = tensor(GB_DT_F32, 64, 32, GB_INIT_OUTPUT, true);
    args[3] = (gb_arg){.kind = GB_ARG_SCALAR, .dtype = GB_DT_I32, .int_value = 64};
}

static void args_refused_at(const gb_gemm *g, const gb_arg *args, int n, const char *why, int line)
{
    gb_err err = {0};
    if (gb_gemm_check_args(g, args, n, &err) != GB_EINVAL) fail_msg("line %d: accepted", line);
    contains_at(err.msg, why, __FILE__, line);
}
#define assert_args_refused(g, args, n, why) args_refused_at(&(g), (args), (n), (why), __LINE__)

static void test_operands_must_be_tensors_of_their_types_and_sizes(void **state)
{
    (void)state;
    gb_arg args[4];
    gb_gemm g = sgemm();
    sgemm_args(args);
    assert_int_equal(gb_gemm_check_args(&g, args, 4, NULL), GB_OK);
    g.batch = 2;
    assert_args_refused(g, args, 4,
                        "a (argument 1) holds 1024 elements, M*K*batch = 64*16*2 needs 2048");
    g = sgemm(), g.lda = 20;
    assert_args_refused(g, args, 4,
                        "a (argument 1) holds 1024 elements, M*lda*batch = 64*20*1 needs 1280");
    args[0].dims[1] = 20; /* A [64, 20]: rows padded to lda */
    assert_int_equal(gb_gemm_check_args(&g, args, 4, NULL), GB_OK);
    sgemm_args(args), g = sgemm(), g.trans_b = true, g.ldb = 20;
    assert_args_refused(g, args, 4,
                        "b (argument 2) holds 512 elements, N*ldb*batch = 32*20*1 needs 640");
    g = sgemm(), g.b = 3;
    assert_args_refused(g, args, 4, "b (argument 4) is a scalar, not a tensor");
    g = sgemm(), g.c = 5;
    assert_args_refused(g, args, 4, "c is argument 6, but the kernel's args give 4");
    g = sgemm(), args[1].dtype = GB_DT_BF16;
    assert_args_refused(g, args, 4, "b (argument 2) is bf16, the GEMM's b is f32");
    sgemm_args(args), g.d = 3;
    assert_args_refused(g, args, 4, "d (argument 4) is a scalar");
}

static void test_the_result_must_be_checked_and_a_read_c_must_hold_data(void **state)
{
    (void)state;
    gb_arg args[4];
    gb_gemm g = sgemm();
    sgemm_args(args);
    args[2].checked = false;
    assert_args_refused(g, args, 4, "the result, c (argument 3), is not checked");
    sgemm_args(args), g.beta = 0.5;
    assert_args_refused(g, args, 4, "beta = 0.5 reads C, but c (argument 3) is an \"output\"");
    args[2].init = GB_INIT_RANDN; /* C in and out: checked, and filled before every run */
    assert_int_equal(gb_gemm_check_args(&g, args, 4, NULL), GB_OK);
}

/* ---- the wire -------------------------------------------------------------------- */

static gb_gemm batched_bf16(void)
{
    gb_gemm g = typed(GB_DT_BF16, GB_DT_BF16, GB_DT_F32, GB_GEMM_COMPUTE_FP32);
    g.a = 4, g.b = 0, g.c = 7, g.d = 31, g.m = 1999, g.n = 1, g.k = GB_GEMM_MAX_DIM;
    g.batch = 3, g.trans_a = true, g.alpha = 0.1, g.beta = -2.5, g.lda = 2000, g.ldc = 5;
    return g;
}

static void test_a_gemm_round_trips_and_a_broken_one_is_refused(void **state)
{
    (void)state;
    gb_gemm sent = batched_bf16(), got;
    gb_err err = {0};
    json_t *j = gb_wire_encode(&gb_wire_gemm, &sent);
    assert_non_null(j);
    assert_int_equal(gb_wire_decode(&gb_wire_gemm, j, &got, &err), GB_OK);
    assert_true(gb_wire_equal(&gb_wire_gemm, &sent, &got));
    assert_true(got.alpha == 0.1 && got.beta == -2.5 && got.k == GB_GEMM_MAX_DIM);
    assert_true(got.lda == 2000 && got.ldb == 0 && got.ldc == 5);
    json_object_set_new(j, "compute", json_string("tf32")); /* bf16 operands: refused */
    assert_int_equal(gb_wire_decode(&gb_wire_gemm, j, &got, &err), GB_EINVAL);
    assert_contains(err.msg, "gemm: compute tf32 needs f32 operands");
    json_object_set_new(j, "compute", json_string("int4"));
    assert_int_equal(gb_wire_decode(&gb_wire_gemm, j, &got, &err), GB_EINVAL);
    assert_contains(err.msg, "gemm.compute");
    json_decref(j);
    assert_int_equal(gb_wire_check_type(&gb_wire_gemm, &err), GB_OK);
}

static void test_a_trial_of_a_gemm_carries_it_and_one_of_a_cubin_does_not(void **state)
{
    (void)state;
    gb_proto_trial sent =
                       {
                           .variant = {.name = "cublasLtMatmul",
                                       .launch = {.grid = {1, 1, 1}, .block = {1, 1, 1}},
                                       .kernel = "cublas_gemm",
                                       .has_gemm = true,
                                       .gemm = batched_bf16()},
                           .check = {.n_outputs = 1, .outputs = {7}, .rtol = 1e-2, .atol = 1e-5},
                           .measure = gb_measure_defaults(),
                       },
                   got;
    gb_err err = {0};
    json_t *j = gb_wire_encode(&gb_wire_proto_trial, &sent);
    assert_int_equal(gb_wire_decode(&gb_wire_proto_trial, j, &got, &err), GB_OK);
    assert_true(got.variant.has_gemm);
    assert_true(gb_wire_equal(&gb_wire_gemm, &sent.variant.gemm, &got.variant.gemm));
    gb_wire_free(&gb_wire_proto_trial, &got);
    json_decref(j);
    sent.variant.has_gemm = false; /* a cubin's: no "gemm" key, as before it existed */
    j = gb_wire_encode(&gb_wire_proto_trial, &sent);
    assert_null(json_object_get(j, "gemm"));
    assert_int_equal(gb_wire_decode(&gb_wire_proto_trial, j, &got, &err), GB_OK);
    assert_false(got.variant.has_gemm);
    gb_wire_free(&gb_wire_proto_trial, &got);
    json_object_set_new(j, "gemm", json_null()); /* null reads as none too */
    assert_int_equal(gb_wire_decode(&gb_wire_proto_trial, j, &got, &err), GB_OK);
    assert_false(got.variant.has_gemm);
    gb_wire_free(&gb_wire_proto_trial, &got);
    json_decref(j);
}

static void test_a_race_may_mix_cubins_and_gemms(void **state)
{
    (void)state;
    gb_proto_race sent = {.n_variants = 2, .measure = gb_measure_defaults()}, got;
    sent.variants[0] = (gb_proto_race_variant){
        .variant = {.name = "k", .launch = {.grid = {1, 1, 1}, .block = {32, 1, 1}}},
        .cubin_bytes = 4096};
    sent.variants[1] =
        (gb_proto_race_variant){.variant = {.name = "cublasLtMatmul",
                                            .launch = {.grid = {1, 1, 1}, .block = {1, 1, 1}},
                                            .has_gemm = true,
                                            .gemm = sgemm()},
                                .cubin_bytes = 0};
    gb_err err = {0};
    json_t *j = gb_wire_encode(&gb_wire_proto_race, &sent);
    assert_int_equal(gb_wire_decode(&gb_wire_proto_race, j, &got, &err), GB_OK);
    assert_false(got.variants[0].variant.has_gemm);
    assert_true(got.variants[1].variant.has_gemm && got.variants[1].cubin_bytes == 0);
    gb_wire_free(&gb_wire_proto_race, &got);
    json_decref(j);
}

static void test_a_rate_request_and_its_answer_round_trip(void **state)
{
    (void)state;
    gb_proto_rate sent = {.math = GB_MATH_FP8, .m = 8192, .n = 8192, .k = 8192}, got;
    gb_proto_rated rated = {.tflops = 1234.5}, rated_got;
    gb_err err = {0};
    json_t *j = gb_wire_encode(gb_proto_payload(GB_MSG_RATE), &sent);
    assert_string_equal(json_string_value(json_object_get(j, "math")), "fp8");
    assert_int_equal(gb_wire_decode(gb_proto_payload(GB_MSG_RATE), j, &got, &err), GB_OK);
    assert_true(got.math == GB_MATH_FP8 && got.m == 8192 && got.k == 8192);
    json_decref(j);
    j = gb_wire_encode(gb_proto_payload(GB_MSG_RATED), &rated);
    assert_int_equal(gb_wire_decode(gb_proto_payload(GB_MSG_RATED), j, &rated_got, &err), GB_OK);
    assert_true(rated_got.tflops == 1234.5);
    json_decref(j);
    assert_string_equal(gb_msg_type_name(GB_MSG_RATE), "RATE");
    assert_string_equal(gb_msg_type_name(GB_MSG_RATED), "RATED");
}

/* ---- the executor ----------------------------------------------------------------- */

/* A backend that records the reference it is given and "measures" a rate. */
typedef struct recorder {
    int n_opened, n_references;
    gb_gemm gemm;
    bool had_gemm, had_cubin;
    bool can_rate;
} recorder;

static int rec_open(void *self, gb_device_info *out, gb_err *err)
{
    (void)err;
    ((recorder *)self)->n_opened++;
    memset(out, 0, sizeof *out);
    return GB_OK;
}

static int rec_problem(void *self, const gb_arg *args, int n, uint64_t seed, gb_err *err)
{
    (void)self, (void)args, (void)n, (void)seed, (void)err;
    return GB_OK;
}

static int rec_reference(void *self, const gb_variant *ref, gb_err *err)
{
    (void)err;
    recorder *r = self;
    r->n_references++;
    r->had_gemm = ref->gemm != NULL;
    r->had_cubin = ref->cubin != NULL || ref->cubin_bytes > 0;
    if (ref->gemm) r->gemm = *ref->gemm;
    return GB_OK;
}

static int rec_trial(void *self, const gb_variant *v, const gb_check_spec *check,
                     const gb_measure_opts *opts, double timeout_s, gb_trial_result *out,
                     gb_err *err)
{
    (void)self, (void)v, (void)check, (void)opts, (void)timeout_s, (void)out;
    return gb_err_set(err, GB_EFAULT, "lost"); /* the executor starts a fresh backend */
}

static int rec_rate(void *self, gb_math math, int64_t m, int64_t n, int64_t k, double *out,
                    gb_err *err)
{
    (void)self, (void)err;
    *out = (double)(m + n + k) + math;
    return GB_OK;
}

static void rec_close(void *self)
{
    (void)self;
}

static void rec_destroy(void *self)
{
    (void)self;
}

static void test_the_executor_keeps_a_gemm_reference_for_every_backend(void **state)
{
    (void)state;
    recorder rec = {0};
    gb_backend_ops ops = {.open = rec_open,
                          .set_problem = rec_problem,
                          .reference = rec_reference,
                          .trial = rec_trial,
                          .close = rec_close,
                          .destroy = rec_destroy};
    gb_exec *exec = NULL;
    gb_err err = {0};
    assert_int_equal(gb_exec_create(&ops, &rec, &exec, &err), GB_OK);
    assert_int_equal(gb_exec_set_problem(exec, NULL, 0, 1, &err), GB_OK);
    gb_gemm g = batched_bf16();
    gb_variant ref = {.lowered_name = "cublasLtMatmul", .gemm = &g};
    assert_int_equal(gb_exec_reference(exec, &ref, &err), GB_OK);
    g.m = 1; /* the caller's copy changes: the executor kept its own */
    gb_trial_result t;
    gb_check_spec check = {0};
    gb_measure_opts opts = gb_measure_defaults();
    assert_int_equal(gb_exec_trial(exec, &ref, &check, &opts, 0, &t, &err), GB_OK);
    assert_int_equal(t.status, GB_TRIAL_CRASHED);
    /* the next trial starts a fresh backend, which gets the problem and reference again */
    assert_int_equal(gb_exec_trial(exec, &ref, &check, &opts, 0, &t, &err), GB_OK);
    assert_int_equal(rec.n_opened, 2);
    assert_int_equal(rec.n_references, 2);
    assert_true(rec.had_gemm && !rec.had_cubin);
    gb_gemm want = batched_bf16();
    assert_true(gb_wire_equal(&gb_wire_gemm, &rec.gemm, &want));
    double tflops = -1;
    assert_int_equal(gb_exec_cublas_rate(exec, GB_MATH_BF16, 1, 2, 3, &tflops, &err), GB_EINVAL);
    assert_contains(err.msg, "cannot measure cuBLASLt's rate");
    assert_true(tflops == 0);
    gb_exec_destroy(exec);
    ops.cublas_rate = rec_rate;
    assert_int_equal(gb_exec_create(&ops, &rec, &exec, &err), GB_OK);
    assert_int_equal(gb_exec_cublas_rate(exec, GB_MATH_BF16, 1, 2, 3, &tflops, &err), GB_OK);
    assert_true(tflops == 6.0 + GB_MATH_BF16);
    gb_exec_destroy(exec);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_missing_library_is_one_sentence_naming_it),
        cmocka_unit_test(test_an_installed_library_resolves_every_entry_point),
        cmocka_unit_test(test_the_usual_gemms_are_accepted),
        cmocka_unit_test(test_types_that_do_not_go_together_are_refused_by_name),
        cmocka_unit_test(test_sizes_positions_and_scales_are_checked),
        cmocka_unit_test(test_leading_dimensions_pad_the_stored_rows),
        cmocka_unit_test(test_operands_must_be_tensors_of_their_types_and_sizes),
        cmocka_unit_test(test_the_result_must_be_checked_and_a_read_c_must_hold_data),
        cmocka_unit_test(test_a_gemm_round_trips_and_a_broken_one_is_refused),
        cmocka_unit_test(test_a_trial_of_a_gemm_carries_it_and_one_of_a_cubin_does_not),
        cmocka_unit_test(test_a_race_may_mix_cubins_and_gemms),
        cmocka_unit_test(test_a_rate_request_and_its_answer_round_trip),
        cmocka_unit_test(test_the_executor_keeps_a_gemm_reference_for_every_backend),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
