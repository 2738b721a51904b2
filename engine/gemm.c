/* A library GEMM's description: its names, its wire table, and the rules of which
 * types, sizes and arguments go together (engine/gemm.h). */
#include "engine/gemm.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const compute_names[GB_GEMM_COMPUTE_COUNT] = {
    [GB_GEMM_COMPUTE_FP32] = "fp32",
    [GB_GEMM_COMPUTE_TF32] = "tf32",
    [GB_GEMM_COMPUTE_FP16] = "fp16",
};

const char *gb_gemm_compute_name(gb_gemm_compute compute)
{
    return (unsigned)compute < GB_GEMM_COMPUTE_COUNT ? compute_names[compute] : NULL;
}

int gb_gemm_compute_parse(const char *name, gb_gemm_compute *out)
{
    for (int i = 0; name && i < GB_GEMM_COMPUTE_COUNT; i++) {
        if (strcmp(name, compute_names[i]) == 0) {
            *out = (gb_gemm_compute)i;
            return GB_OK;
        }
    }
    return GB_EINVAL;
}

static const char *compute_name(int v)
{
    return gb_gemm_compute_name((gb_gemm_compute)v);
}

const gb_wire_enum gb_wire_enum_gemm_compute = {GB_GEMM_COMPUTE_COUNT, compute_name};

/* ---- types -------------------------------------------------------------- */

static bool is_fp8(gb_dtype t)
{
    return t == GB_DT_FP8_E4M3 || t == GB_DT_FP8_E5M2;
}

static bool is_operand_type(gb_dtype t)
{
    return t == GB_DT_F32 || t == GB_DT_F16 || t == GB_DT_BF16 || is_fp8(t);
}

static bool is_result_type(gb_dtype t)
{
    return t == GB_DT_F32 || t == GB_DT_F16 || t == GB_DT_BF16;
}

static const char *dt(gb_dtype t)
{
    const char *name = gb_dtype_name(t);
    return name ? name : "an unknown type";
}

/* fp8 operands: any result type, fp32 sums, and not both e5m2. */
static int check_fp8(const gb_gemm *g, gb_err *err)
{
    if (!is_fp8(g->a_dtype) || !is_fp8(g->b_dtype))
        return gb_err_set(err, GB_EINVAL,
                          "A is %s and B is %s: an fp8 operand needs an fp8 partner "
                          "(fp8_e4m3 or fp8_e5m2)",
                          dt(g->a_dtype), dt(g->b_dtype));
    if (g->a_dtype == GB_DT_FP8_E5M2 && g->b_dtype == GB_DT_FP8_E5M2)
        return gb_err_set(err, GB_EINVAL,
                          "fp8_e5m2 for both A and B: cuBLASLt has no such GEMM (make one of "
                          "them fp8_e4m3)");
    if (g->compute != GB_GEMM_COMPUTE_FP32)
        return gb_err_set(err, GB_EINVAL, "fp8 operands are summed in fp32: compute %s is refused",
                          compute_names[g->compute]);
    return GB_OK;
}

/* f32, f16 and bf16 operands: both the same, with the results and compute modes
 * cuBLASLt pairs them with. */
static int check_same_type(const gb_gemm *g, gb_err *err)
{
    gb_dtype t = g->a_dtype, c = g->c_dtype;
    if (g->b_dtype != t)
        return gb_err_set(err, GB_EINVAL,
                          "A is %s and B is %s: the operands must have the same type "
                          "(only the fp8 types mix)",
                          dt(t), dt(g->b_dtype));
    if (g->compute == GB_GEMM_COMPUTE_TF32 && (t != GB_DT_F32 || c != GB_DT_F32))
        return gb_err_set(err, GB_EINVAL,
                          "compute tf32 needs f32 operands and an f32 C, not %s and %s", dt(t),
                          dt(c));
    if (g->compute == GB_GEMM_COMPUTE_FP16 && (t != GB_DT_F16 || c != GB_DT_F16))
        return gb_err_set(err, GB_EINVAL,
                          "compute fp16 (fp16 sums) needs f16 operands and an f16 C, not %s and %s",
                          dt(t), dt(c));
    if (t == GB_DT_F32 && c != GB_DT_F32)
        return gb_err_set(err, GB_EINVAL, "f32 operands give an f32 C, not %s", dt(c));
    if (t != GB_DT_F32 && c != t && c != GB_DT_F32)
        return gb_err_set(err, GB_EINVAL, "%s operands give a %s or f32 C, not %s", dt(t), dt(t),
                          dt(c));
    return GB_OK;
}

static int check_types(const gb_gemm *g, gb_err *err)
{
    if (!is_operand_type(g->a_dtype) || !is_operand_type(g->b_dtype))
        return gb_err_set(err, GB_EINVAL,
                          "A and B can be f32, f16, bf16, fp8_e4m3 or fp8_e5m2, not %s",
                          dt(is_operand_type(g->a_dtype) ? g->b_dtype : g->a_dtype));
    if (!is_result_type(g->c_dtype))
        return gb_err_set(err, GB_EINVAL, "C can be f32, f16 or bf16, not %s", dt(g->c_dtype));
    if ((unsigned)g->compute >= GB_GEMM_COMPUTE_COUNT)
        return gb_err_set(err, GB_EINVAL, "compute must be fp32, tf32 or fp16");
    return is_fp8(g->a_dtype) || is_fp8(g->b_dtype) ? check_fp8(g, err) : check_same_type(g, err);
}

/* ---- sizes and positions ------------------------------------------------ */

static int64_t product(int64_t x, int64_t y, int64_t z)
{
    int64_t xy, xyz;
    if (__builtin_mul_overflow(x, y, &xy) || __builtin_mul_overflow(xy, z, &xyz)) return -1;
    return xyz;
}

/* Which size an operand's stored extent is, its rows (outer) or the length of a
 * row: 'M', 'N' or 'K'. */
static char stored_size(const gb_gemm *g, char operand, bool outer)
{
    switch (operand) {
    case 'a':
        return outer != g->trans_a ? 'M' : 'K';
    case 'b':
        return outer != g->trans_b ? 'K' : 'N';
    default:
        return outer ? 'M' : 'N';
    }
}

static int64_t stored(const gb_gemm *g, char operand, bool outer)
{
    char size = stored_size(g, operand, outer);
    return size == 'M' ? g->m : size == 'N' ? g->n : g->k;
}

int64_t gb_gemm_rows(const gb_gemm *g, char operand)
{
    return stored(g, operand, true);
}

int64_t gb_gemm_cols(const gb_gemm *g, char operand)
{
    return stored(g, operand, false);
}

static int64_t ld_field(const gb_gemm *g, char operand)
{
    return operand == 'a' ? g->lda : operand == 'b' ? g->ldb : g->ldc;
}

int64_t gb_gemm_ld(const gb_gemm *g, char operand)
{
    int64_t ld = ld_field(g, operand);
    return ld ? ld : gb_gemm_cols(g, operand);
}

int64_t gb_gemm_elements(const gb_gemm *g, char operand)
{
    return product(gb_gemm_rows(g, operand), gb_gemm_ld(g, operand), g->batch);
}

double gb_gemm_flops(const gb_gemm *g)
{
    return 2.0 * (double)g->m * (double)g->n * (double)g->k * (double)g->batch;
}

static int check_sizes(const gb_gemm *g, gb_err *err)
{
    if (g->m < 1 || g->n < 1 || g->k < 1 || g->m > GB_GEMM_MAX_DIM || g->n > GB_GEMM_MAX_DIM ||
        g->k > GB_GEMM_MAX_DIM)
        return gb_err_set(err, GB_EINVAL, "M, N and K must be from 1 to %lld, got %lld, %lld, %lld",
                          (long long)GB_GEMM_MAX_DIM, (long long)g->m, (long long)g->n,
                          (long long)g->k);
    if (g->batch < 1 || g->batch > INT32_MAX)
        return gb_err_set(err, GB_EINVAL, "batch must be from 1 to %d, got %lld", INT32_MAX,
                          (long long)g->batch);
    for (const char *op = "abc"; *op; op++) {
        int64_t ld = ld_field(g, *op), cols = gb_gemm_cols(g, *op);
        if (ld != 0 && (ld < cols || ld > GB_GEMM_MAX_DIM))
            return gb_err_set(err, GB_EINVAL,
                              "ld%c = %lld: %c's stored rows are %lld elements, so it must be 0 "
                              "(packed) or from %lld to %lld",
                              *op, (long long)ld, *op - 'a' + 'A', (long long)cols, (long long)cols,
                              (long long)GB_GEMM_MAX_DIM);
    }
    if (gb_gemm_elements(g, 'a') < 0 || gb_gemm_elements(g, 'b') < 0 ||
        gb_gemm_elements(g, 'c') < 0)
        return gb_err_set(err, GB_EINVAL, "M=%lld N=%lld K=%lld, batch %lld: too many elements",
                          (long long)g->m, (long long)g->n, (long long)g->k, (long long)g->batch);
    return GB_OK;
}

static bool valid_position(int pos)
{
    return pos >= 0 && pos < GB_MAX_ARGS;
}

static int check_positions(const gb_gemm *g, gb_err *err)
{
    if (!valid_position(g->a) || !valid_position(g->b) || !valid_position(g->c) ||
        (g->d != -1 && !valid_position(g->d)))
        return gb_err_set(err, GB_EINVAL, "argument positions must be from 1 to %d", GB_MAX_ARGS);
    if (g->c == g->a || g->c == g->b)
        return gb_err_set(err, GB_EINVAL, "C (argument %d) must not be A or B", g->c + 1);
    if (g->d == g->a || g->d == g->b || g->d == g->c)
        return gb_err_set(err, GB_EINVAL, "D (argument %d) must not be A, B or C", g->d + 1);
    return GB_OK;
}

int gb_gemm_check(const gb_gemm *g, gb_err *err)
{
    int rc = check_positions(g, err);
    if (rc == GB_OK) rc = check_sizes(g, err);
    if (rc == GB_OK && (!isfinite(g->alpha) || !isfinite(g->beta)))
        rc = gb_err_set(err, GB_EINVAL, "alpha and beta must be finite, got %g and %g", g->alpha,
                        g->beta);
    if (rc == GB_OK) rc = check_types(g, err);
    return rc;
}

/* ---- the problem's arguments -------------------------------------------- */

/* One operand: a tensor of its type with exactly the elements the sizes need:
 * rows*ld*batch ("M*K*batch" when packed, "M*lda*batch" when not). */
static int check_operand(const gb_gemm *g, char name, int pos, gb_dtype dtype, const gb_arg *args,
                         int n_args, gb_err *err)
{
    char op = name == 'd' ? 'c' : name;
    if (pos >= n_args)
        return gb_err_set(err, GB_EINVAL, "%c is argument %d, but the kernel's args give %d", name,
                          pos + 1, n_args);
    const gb_arg *a = &args[pos];
    if (a->kind != GB_ARG_TENSOR)
        return gb_err_set(err, GB_EINVAL, "%c (argument %d) is a scalar, not a tensor", name,
                          pos + 1);
    if (a->dtype != dtype)
        return gb_err_set(err, GB_EINVAL, "%c (argument %d) is %s, the GEMM's %c is %s", name,
                          pos + 1, dt(a->dtype), name, dt(dtype));
    int64_t want = gb_gemm_elements(g, op), have = gb_arg_elements(a);
    if (have != want) {
        /* the sizes' names, in the order the operand is stored */
        char rows[2] = {stored_size(g, op, true), 0}, cols[4] = {stored_size(g, op, false), 0};
        if (ld_field(g, op)) snprintf(cols, sizeof cols, "ld%c", op);
        return gb_err_set(
            err, GB_EINVAL,
            "%c (argument %d) holds %lld elements, %s*%s*batch = %lld*%lld*%lld needs %lld", name,
            pos + 1, (long long)have, rows, cols, (long long)gb_gemm_rows(g, op),
            (long long)gb_gemm_ld(g, op), (long long)g->batch, (long long)want);
    }
    return GB_OK;
}

/* The result must be compared with the variants', and C must hold data when it
 * is read. */
static int check_roles(const gb_gemm *g, const gb_arg *args, gb_err *err)
{
    int out = g->d >= 0 ? g->d : g->c;
    char name = g->d >= 0 ? 'd' : 'c';
    if (!args[out].checked)
        return gb_err_set(err, GB_EINVAL,
                          "the result, %c (argument %d), is not checked: give it init \"output\" "
                          "or list it in the kernel's check.outputs",
                          name, out + 1);
    if (g->beta != 0 && args[g->c].init == GB_INIT_OUTPUT)
        return gb_err_set(err, GB_EINVAL,
                          "beta = %g reads C, but c (argument %d) is an \"output\" tensor (NaN "
                          "before every run): give it an init such as \"randn\"",
                          g->beta, g->c + 1);
    return GB_OK;
}

int gb_gemm_check_args(const gb_gemm *g, const gb_arg *args, int n_args, gb_err *err)
{
    int rc = check_operand(g, 'a', g->a, g->a_dtype, args, n_args, err);
    if (rc == GB_OK) rc = check_operand(g, 'b', g->b, g->b_dtype, args, n_args, err);
    if (rc == GB_OK) rc = check_operand(g, 'c', g->c, g->c_dtype, args, n_args, err);
    if (rc == GB_OK && g->d >= 0) rc = check_operand(g, 'd', g->d, g->c_dtype, args, n_args, err);
    if (rc == GB_OK) rc = check_roles(g, args, err);
    return rc;
}

void gb_gemm_describe(const gb_gemm *g, char *out, size_t n)
{
    char batch[32] = "", ld[96] = "";
    if (g->batch > 1) snprintf(batch, sizeof batch, ", batch %lld", (long long)g->batch);
    for (const char *op = "abc"; *op; op++) {
        size_t used = strlen(ld);
        if (ld_field(g, *op))
            snprintf(ld + used, sizeof ld - used, ", ld%c %lld", *op, (long long)ld_field(g, *op));
    }
    snprintf(out, n, "%s x %s -> %s, M=%lld N=%lld K=%lld%s%s%s%s, compute %s", dt(g->a_dtype),
             dt(g->b_dtype), dt(g->c_dtype), (long long)g->m, (long long)g->n, (long long)g->k,
             batch, g->trans_a ? ", trans_a" : "", g->trans_b ? ", trans_b" : "", ld,
             compute_name(g->compute) ? compute_name(g->compute) : "?");
}

/* ---- the wire ----------------------------------------------------------- */

static int gemm_finish(void *obj, const char *path, gb_err *err)
{
    int rc = gb_gemm_check(obj, err);
    return rc ? gb_err_prefix(err, "%s", path) : GB_OK;
}

#define GB_WIRE_T gb_gemm
GB_WIRE_TABLE(gb_wire_gemm, "gemm", GB_GEMM_WIRE, gemm_finish)
#undef GB_WIRE_T
