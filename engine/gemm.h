/*
 * A GEMM that a library runs instead of a compiled kernel: cuBLASLt's matmul over
 * tensors of the problem (engine/gpu.h), described without CUDA or cuBLAS types so
 * that it travels to the worker process (exec/proto.h) like any variant.
 *
 * The description names where its operands sit in the kernel's argument list and
 * how they are laid out, in gpubench's row-major terms:
 *
 *   D[b] = alpha * op(A[b]) @ op(B[b]) + beta * C[b]     for b in 0 .. batch-1
 *
 * with op(A) of M x K and op(B) of K x N. A is stored [M, K] (or [K, M] with
 * trans_a), B [K, N] (or [N, K] with trans_b), C and D [M, N]; each stored row
 * may be padded to a leading dimension (lda, ldb, ldc: the elements from one
 * row's start to the next's; 0, packed rows). A batch is consecutive matrices
 * (strided batched, stride = one matrix of rows x leading dimension). D is C
 * itself unless d names another tensor. The GPU session maps this onto cuBLASLt's
 * column-major world by swapping the operands (C^T = B^T A^T).
 *
 * The rules of which element types and compute modes go together are here, once
 * (gb_gemm_check), for the script's call (lua/cublas.lua asks through the core),
 * the tuner's shapes and the wire; what the device itself can run is cuBLASLt's
 * to say when the GEMM is loaded (its heuristic).
 */
#ifndef GB_ENGINE_GEMM_H
#define GB_ENGINE_GEMM_H

#include "base/error.h"
#include "base/wire.h"
#include "engine/spec.h"
#include "engine/wire_types.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How the products are summed: fp32 (CUBLAS_COMPUTE_32F), tf32 (fp32 inputs
 * rounded to tf32 on the tensor cores: CUBLAS_COMPUTE_32F_FAST_TF32) or fp16
 * (CUBLAS_COMPUTE_16F, f16 operands only). */
typedef enum gb_gemm_compute {
    GB_GEMM_COMPUTE_FP32,
    GB_GEMM_COMPUTE_TF32,
    GB_GEMM_COMPUTE_FP16,
    GB_GEMM_COMPUTE_COUNT,
} gb_gemm_compute;

/* "fp32", "tf32", "fp16"; NULL for another value. */
const char *gb_gemm_compute_name(gb_gemm_compute compute);
/* GB_EINVAL for a name that is none of them. */
int gb_gemm_compute_parse(const char *name, gb_gemm_compute *out);

typedef struct gb_gemm {
    int a, b, c; /* 0-based argument positions of A, B and C */
    int d;       /* of D, or -1: the result goes to C (read first when beta != 0) */
    int64_t m, n, k;
    int64_t batch;         /* 1 for a single GEMM */
    bool trans_a;          /* A is stored [K, M] */
    bool trans_b;          /* B is stored [N, K] */
    int64_t lda, ldb, ldc; /* leading dimensions (C's also D's); 0: the stored row's length */
    gb_dtype a_dtype, b_dtype;
    gb_dtype c_dtype; /* C's, and D's */
    gb_gemm_compute compute;
    double alpha, beta;
} gb_gemm;

/* The wire description (gb_wire_gemm); the type's check is gb_gemm_check. */
#define GB_GEMM_WIRE(X)                                                                            \
    X(a, INT, "a", GB_WIRE_RANGE(0, GB_MAX_ARGS - 1))                                              \
    X(b, INT, "b", GB_WIRE_RANGE(0, GB_MAX_ARGS - 1))                                              \
    X(c, INT, "c", GB_WIRE_RANGE(0, GB_MAX_ARGS - 1))                                              \
    X(d, INT, "d", GB_WIRE_RANGE(-1, GB_MAX_ARGS - 1))                                             \
    X(m, INT64, "m", GB_WIRE_RANGE(1, GB_GEMM_MAX_DIM))                                            \
    X(n, INT64, "n", GB_WIRE_RANGE(1, GB_GEMM_MAX_DIM))                                            \
    X(k, INT64, "k", GB_WIRE_RANGE(1, GB_GEMM_MAX_DIM))                                            \
    X(batch, INT64, "batch", GB_WIRE_RANGE(1, INT32_MAX))                                          \
    X(trans_a, BOOL, "trans_a")                                                                    \
    X(trans_b, BOOL, "trans_b")                                                                    \
    X(lda, INT64, "lda", GB_WIRE_RANGE(0, GB_GEMM_MAX_DIM))                                        \
    X(ldb, INT64, "ldb", GB_WIRE_RANGE(0, GB_GEMM_MAX_DIM))                                        \
    X(ldc, INT64, "ldc", GB_WIRE_RANGE(0, GB_GEMM_MAX_DIM))                                        \
    X(a_dtype, ENUM, "a_dtype", .enumeration = &gb_wire_enum_dtype)                                \
    X(b_dtype, ENUM, "b_dtype", .enumeration = &gb_wire_enum_dtype)                                \
    X(c_dtype, ENUM, "c_dtype", .enumeration = &gb_wire_enum_dtype)                                \
    X(compute, ENUM, "compute", .enumeration = &gb_wire_enum_gemm_compute)                         \
    X(alpha, DOUBLE, "alpha")                                                                      \
    X(beta, DOUBLE, "beta")

/* The largest m, n or k (cuBLASLt's sizes are 64-bit; this keeps products exact). */
#define GB_GEMM_MAX_DIM (INT64_C(1) << 31)

extern const gb_wire_type gb_wire_gemm;
extern const gb_wire_enum gb_wire_enum_gemm_compute;

/* Whether the element types and the compute mode go together, and the sizes and
 * positions make sense (m, n, k, batch >= 1; a leading dimension 0 or at least its
 * row; C and D apart from the inputs; alpha and beta finite). GB_EINVAL with one sentence naming
 * what is wrong, e.g. "compute tf32 needs f32 operands and an f32 C, not bf16". What a particular
 * GPU runs (fp8 needs compute capability 8.9 and, before 10.0, trans_b) is left to cuBLASLt. */
int gb_gemm_check(const gb_gemm *g, gb_err *err);

/* Whether the problem's arguments are what g says: A, B, C (and D) are tensors of
 * their dtypes holding rows*ld*batch elements each (m*k*batch, k*n*batch and
 * m*n*batch with packed rows); the result
 * (D, or C) is checked (compared with the variants'); C is not an "output"
 * (NaN-filled) tensor when beta reads it. GB_EINVAL with a sentence naming the
 * operand and its argument position (1-based, as scripts count). */
int gb_gemm_check_args(const gb_gemm *g, const gb_arg *args, int n_args, gb_err *err);

/* Stored rows of operand 'a', 'b' or 'c' (D's are C's): m or k for A, k or n for B,
 * m for C. */
int64_t gb_gemm_rows(const gb_gemm *g, char operand);

/* Elements of one stored row, and the leading dimension (that length when 0). */
int64_t gb_gemm_cols(const gb_gemm *g, char operand);
int64_t gb_gemm_ld(const gb_gemm *g, char operand);

/* Elements of A, B and C (D) for g, rows*ld*batch, or -1 when a product overflows. */
int64_t gb_gemm_elements(const gb_gemm *g, char operand);

/* Floating-point operations of g: 2 * m * n * k * batch. */
double gb_gemm_flops(const gb_gemm *g);

/* "bf16 x bf16 -> bf16, M=128 N=256 K=64, batch 2, trans_b, compute fp32": for
 * messages. */
void gb_gemm_describe(const gb_gemm *g, char *out, size_t n);

#endif
