/*
 * gpubench's C API: tune a CUDA kernel from a C or C++ program, and look its best
 * configuration up at run time.
 *
 * It is the run-time counterpart of the tuned header that `gpubench export`
 * writes: the same cache, the same tuner, the same lookup rule. A program opens a
 * session (the GPU, the cache), declares a kernel (its source, entry expression,
 * tuning parameters, and callbacks that give its arguments and launch geometry),
 * tunes it for a shape, and later asks the cache for the best configuration of any
 * shape: the shape's own entry, else the nearest tuned shape.
 *
 * Link with -lgpubench (pkg-config gpubench, or find_package(gpubench) and the
 * target gpubench::libgpubench). docs/c-api.md is the manual; examples/embed/ a
 * program that tunes on its first call and answers from the cache afterwards.
 *
 * Conventions, as in every call below:
 *   - A call returns GPUBENCH_OK (0) or a status code (GPUBENCH_E*, or a positive
 *     errno from the C library). Where a call takes a gpubench_error *err, that
 *     (which may be NULL) receives the code and a message naming what failed:
 *     the file, the field, the callback.
 *   - [in] arguments are only read, and need not outlive the call unless said;
 *     strings given to the API are copied. [out] arguments are written only on
 *     success. A handle's memory is the library's; free it with its own call.
 *   - Handles are not thread-safe: use one from one thread at a time. Distinct
 *     sessions may be used from distinct threads.
 *   - The GPU is never touched in this process: trials run in a worker process
 *     (the installed gpubench-tune, started with --worker), so a kernel that
 *     faults or hangs costs a trial, not the program.
 */
#ifndef GPUBENCH_GPUBENCH_H
#define GPUBENCH_GPUBENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define GPUBENCH_API     __attribute__((visibility("default")))
#define GPUBENCH_PRINTF_ __attribute__((format(printf, 3, 4)))
#else
#define GPUBENCH_API
#define GPUBENCH_PRINTF_
#endif

/* ---- versions and errors --------------------------------------------------- */

#define GPUBENCH_VERSION_MAJOR 0
#define GPUBENCH_VERSION_MINOR 1
#define GPUBENCH_VERSION_PATCH 0

/* The library's version as "0.1.0"; each pointer (may be NULL) gets its part. A
 * program built against one minor version runs with any later patch of it. */
GPUBENCH_API const char *gpubench_version(int *major, int *minor, int *patch);

/* Status codes. Positive values are errno values passed through. */
#define GPUBENCH_OK        0
#define GPUBENCH_EINVAL    (-30000) /* a bad argument, field or declaration */
#define GPUBENCH_ENOMEM    (-29999) /* out of host memory */
#define GPUBENCH_EIO       (-29998) /* a file could not be read or written */
#define GPUBENCH_ECALLBACK (-29997) /* a callback failed (its message is kept) */
#define GPUBENCH_ENODRIVER (-29996) /* no usable CUDA driver on this machine */
#define GPUBENCH_ENOGPU    (-29995) /* a driver but no usable device, or compiling only */
#define GPUBENCH_ECUDA     (-29994) /* a CUDA driver call failed */
#define GPUBENCH_ENVRTC    (-29993) /* NVRTC itself failed (not the source) */
#define GPUBENCH_ECOMPILE  (-29992) /* the kernel's source did not compile */
#define GPUBENCH_ELAUNCH   (-29991) /* a launch was refused (resources, geometry) */
#define GPUBENCH_EFAULT    (-29990) /* a kernel faulted */
#define GPUBENCH_ETIMEOUT  (-29989) /* a watchdog expired */
#define GPUBENCH_ECACHE    (-29988) /* the cache is corrupt, locked or from a newer schema */
#define GPUBENCH_ENOTFOUND (-29987) /* no such entry; no valid configuration */
#define GPUBENCH_EPROTO    (-29986) /* a malformed message from the worker */
#define GPUBENCH_EINTR     (-29985) /* interrupted */
#define GPUBENCH_ELIMIT    (-29984) /* a configured limit was reached */
#define GPUBENCH_ECLOSED   (-29983) /* the worker closed the connection */
#define GPUBENCH_EBUSY     (-29982) /* another process holds the GPU's lease */

#define GPUBENCH_ERROR_BYTES 4096

/* A failed call's code and message ("kernel saxpy: entry 'saxpy<${B}>' uses ${B},
 * which is not a parameter"). */
typedef struct gpubench_error {
    int code;
    char message[GPUBENCH_ERROR_BYTES];
} gpubench_error;

/* Text for any status code: ours or an errno. Never NULL. */
GPUBENCH_API const char *gpubench_strerror(int code);

/* For callbacks: records code and a formatted message in err (may be NULL) and
 * returns code, so that `return gpubench_error_set(err, GPUBENCH_EINVAL, "...")`
 * reads naturally. */
GPUBENCH_API int gpubench_error_set(gpubench_error *err, int code, const char *fmt,
                                    ...) GPUBENCH_PRINTF_;

/* ---- fields: shapes and configurations ---------------------------------------- */

/* A set of named values: a problem's shape ("M" = 1024, "dtype" = "bf16") or a
 * kernel's configuration ("BLOCK" = 256). Names are unique; setting one again
 * replaces its value. Integers stay integers; a number with no fraction becomes
 * one. The canonical order is by name. */
typedef struct gpubench_fields gpubench_fields;

typedef enum gpubench_kind {
    GPUBENCH_INT,
    GPUBENCH_NUMBER,
    GPUBENCH_STRING,
    GPUBENCH_BOOL,
} gpubench_kind;

/* [out] *out: an empty set. GPUBENCH_ENOMEM. */
GPUBENCH_API int gpubench_fields_new(gpubench_fields **out);
/* NULL is a no-op. */
GPUBENCH_API void gpubench_fields_free(gpubench_fields *f);

/* Set a field. GPUBENCH_EINVAL for an empty name or a non-finite number;
 * GPUBENCH_ENOMEM. value (string) is copied. */
GPUBENCH_API int gpubench_fields_set_int(gpubench_fields *f, const char *name, int64_t value);
GPUBENCH_API int gpubench_fields_set_number(gpubench_fields *f, const char *name, double value);
GPUBENCH_API int gpubench_fields_set_string(gpubench_fields *f, const char *name,
                                            const char *value);
GPUBENCH_API int gpubench_fields_set_bool(gpubench_fields *f, const char *name, int value);

/* How many fields, and the i-th name in canonical order (NULL past the end; valid
 * until f changes). */
GPUBENCH_API int gpubench_fields_count(const gpubench_fields *f);
GPUBENCH_API const char *gpubench_fields_name(const gpubench_fields *f, int i);

/* [out] *out: the field's kind. GPUBENCH_ENOTFOUND when there is no such field. */
GPUBENCH_API int gpubench_fields_kind(const gpubench_fields *f, const char *name,
                                      gpubench_kind *out);

/* Read a field. GPUBENCH_ENOTFOUND when absent; GPUBENCH_EINVAL when it is of
 * another kind (get_number also reads an integer). get_string's *out is valid
 * until f changes. */
GPUBENCH_API int gpubench_fields_get_int(const gpubench_fields *f, const char *name, int64_t *out);
GPUBENCH_API int gpubench_fields_get_number(const gpubench_fields *f, const char *name,
                                            double *out);
GPUBENCH_API int gpubench_fields_get_string(const gpubench_fields *f, const char *name,
                                            const char **out);
GPUBENCH_API int gpubench_fields_get_bool(const gpubench_fields *f, const char *name, int *out);

/* The fields as text, "K=1024,M=1024,N=1024" (strings quoted), into buf (size
 * bytes, NUL-terminated, cut short when too small). Returns the text's length,
 * as snprintf does: size <= that means it was cut. */
GPUBENCH_API size_t gpubench_fields_text(const gpubench_fields *f, char *buf, size_t size);

/* ---- a kernel's arguments and launch ------------------------------------------ */

/* The argument list a kernel's args callback builds for a shape: tensors (device
 * buffers the worker allocates and fills), scalars and TMA descriptors, in the
 * kernel's parameter order, at most 32. Each call returns the argument's 0-based
 * position, or a negative status; the first failure is also kept and ends the
 * callback's shape with its message, so a callback may ignore the return values. */
typedef struct gpubench_args gpubench_args;

/* A tensor of n_dims (1 to 8) dims, outermost first. dtype: "f64", "f32", "f16",
 * "bf16", "fp8_e4m3", "fp8_e5m2", "i8", "u8", "i32", "u32", "i64". init: "randn",
 * "rand", "zeros", "ones", or "output" (poisoned before each launch, and checked
 * against the reference). */
GPUBENCH_API int gpubench_args_tensor(gpubench_args *a, const char *dtype, int n_dims,
                                      const int64_t *dims, const char *init);
GPUBENCH_API int gpubench_args_i32(gpubench_args *a, int32_t value);
GPUBENCH_API int gpubench_args_u32(gpubench_args *a, uint32_t value);
GPUBENCH_API int gpubench_args_i64(gpubench_args *a, int64_t value);
GPUBENCH_API int gpubench_args_f32(gpubench_args *a, float value);
GPUBENCH_API int gpubench_args_f64(gpubench_args *a, double value);

/* A TMA descriptor (CUtensorMap, passed by value) of an earlier tensor argument.
 * rank 1 to 5; dims and strides (in elements, innermost stride 1) 0 for the
 * tensor's own and packed; box the tile each load brings; the names as CUDA's
 * enums without their prefix: swizzle "none", "32B", "64B", "128B";
 * l2_promotion "none", "64B", "128B", "256B"; oob_fill "zero" or "nan" (NULL
 * for each: "none", "none", "zero"). */
typedef struct gpubench_tensormap {
    int tensor; /* the tensor's 0-based argument position */
    int rank;
    int64_t dims[5];    /* outermost first; all 0: the tensor's dims */
    int64_t strides[5]; /* all 0: packed */
    uint32_t box[5];
    const char *swizzle;
    const char *l2_promotion;
    const char *oob_fill;
} gpubench_tensormap;

GPUBENCH_API int gpubench_args_tensormap(gpubench_args *a, const gpubench_tensormap *tm);

/* Grid (in blocks, not clusters), block, dynamic shared memory in bytes, and the
 * thread block cluster ({0,0,0}: none). Dimensions left 0 in grid and block are 1. */
typedef struct gpubench_launch {
    uint32_t grid[3];
    uint32_t block[3];
    uint32_t smem_bytes;
    uint32_t cluster[3];
} gpubench_launch;

/* ---- kernels ------------------------------------------------------------------ */

typedef struct gpubench_kernel gpubench_kernel;

/* The callbacks a kernel is tuned with; each gets user and returns GPUBENCH_OK,
 * or a code with err set (gpubench_error_set), which stops the tune with that
 * message. The fields they get are valid during the call only. */
typedef struct gpubench_callbacks {
    /* Required to tune: the kernel's arguments for a shape. */
    int (*args)(void *user, const gpubench_fields *shape, gpubench_args *args, gpubench_error *err);
    /* Required: the launch of a configuration on a shape. */
    int (*launch)(void *user, const gpubench_fields *config, const gpubench_fields *shape,
                  gpubench_launch *out, gpubench_error *err);
    /* Optional: *keep = 0 drops the configuration before it is compiled. */
    int (*constraint)(void *user, const gpubench_fields *config, int *keep, gpubench_error *err);
    /* Optional: extra -DNAME=value macros for a configuration and shape (set them
     * in out). */
    int (*defines)(void *user, const gpubench_fields *config, const gpubench_fields *shape,
                   gpubench_fields *out, gpubench_error *err);
    /* Optional: floating-point operations and bytes per launch, for TFLOP/s and GB/s. */
    int (*work)(void *user, const gpubench_fields *shape, double *flops, double *bytes,
                gpubench_error *err);
    void *user;
} gpubench_callbacks;

/* [out] *out: a kernel named name (letters, digits, '_', '.', '-': it names the
 * cache's entries, so the same name finds them again in a later run). */
GPUBENCH_API int gpubench_kernel_new(const char *name, gpubench_kernel **out, gpubench_error *err);
/* Frees the kernel and the reference it owns. NULL is a no-op. */
GPUBENCH_API void gpubench_kernel_free(gpubench_kernel *k);

/* The CUDA C++ source, compiled under the name "<name>.cu" ... */
GPUBENCH_API int gpubench_kernel_source(gpubench_kernel *k, const char *text, gpubench_error *err);
/* ... or a template file, read now: an absolute path, or a name looked for in the
 * folders of $GPUBENCH_TEMPLATES (colon-separated) and then in the installed
 * templates (sgemm.cuh, gemm_wgmma.cuh, ...). Its folder is searched for its
 * #includes. GPUBENCH_ENOTFOUND names the folders looked in. */
GPUBENCH_API int gpubench_kernel_template(gpubench_kernel *k, const char *file,
                                          gpubench_error *err);
/* The name expression, "sgemm<${BM},${BN}>": every ${P} must name a parameter. */
GPUBENCH_API int gpubench_kernel_entry(gpubench_kernel *k, const char *entry, gpubench_error *err);

/* A tuning parameter and its values (copied; non-empty, no value twice, at most
 * 32 parameters; names are C identifiers). The space is the cartesian product. */
GPUBENCH_API int gpubench_kernel_param_ints(gpubench_kernel *k, const char *name,
                                            const int64_t *values, int n, gpubench_error *err);
GPUBENCH_API int gpubench_kernel_param_strings(gpubench_kernel *k, const char *name,
                                               const char *const *values, int n,
                                               gpubench_error *err);

/* Extra NVRTC options, and #include folders, each appended. */
GPUBENCH_API int gpubench_kernel_option(gpubench_kernel *k, const char *option,
                                        gpubench_error *err);
GPUBENCH_API int gpubench_kernel_include_dir(gpubench_kernel *k, const char *dir,
                                             gpubench_error *err);

/* What the flops run on, for the reports' roofs: "fp32" (the default), "fp64",
 * "tf32", "fp16", "bf16", "fp8", "int8". */
GPUBENCH_API int gpubench_kernel_math(gpubench_kernel *k, const char *math, gpubench_error *err);

/* The shape fields that key the cache (the default: all of them). */
GPUBENCH_API int gpubench_kernel_key(gpubench_kernel *k, const char *const *fields, int n,
                                     gpubench_error *err);

/* Which arguments (0-based positions) are compared with the reference, and how
 * closely: |x - r| <= atol + rtol * |r| element by element, or with norm the
 * outputs' 2-norms. rtol or atol < 0: by the output's dtype. Without this call,
 * every "output" tensor is checked. */
GPUBENCH_API int gpubench_kernel_check(gpubench_kernel *k, const int *outputs, int n_outputs,
                                       double rtol, double atol, int norm, gpubench_error *err);

/* The reference that gives the expected outputs: a kernel with no parameters,
 * which k owns from now on (gpubench_kernel_free frees it), on success only. */
GPUBENCH_API int gpubench_kernel_reference(gpubench_kernel *k, gpubench_kernel *reference,
                                           gpubench_error *err);

/* The callbacks (copied). */
GPUBENCH_API int gpubench_kernel_callbacks(gpubench_kernel *k, const gpubench_callbacks *cb,
                                           gpubench_error *err);

/* ---- sessions ----------------------------------------------------------------- */

typedef struct gpubench_session gpubench_session;

/* A session's options: fill with gpubench_session_options_init, then change what
 * differs. Strings are copied by gpubench_session_open. */
typedef struct gpubench_session_options {
    size_t size;           /* sizeof(gpubench_session_options), set by _init */
    const char *cache_dir; /* NULL: $GPUBENCH_CACHE, else ~/.cache/gpubench */
    int no_cache;          /* remember nothing, look nothing up */
    const char *worker;    /* the program started as the GPU worker (with --worker);
                              NULL: $GPUBENCH_WORKER, else the gpubench-tune installed
                              with this library */
    int device;            /* the GPU's CUDA ordinal */
    const char *arch;      /* compile target when there is no GPU; NULL: sm_90a */
    int jobs;              /* compile threads; 0: one per core */
    int force;             /* tune shapes again that have a best in the cache */
    int compile_only;      /* compile every variant, time nothing */
    int require_gpu;       /* no GPU is an error, not a switch to compiling only */
    double lease_wait_s;   /* how long to wait while another process measures on the
                              GPU: < 0 for ever, 0 not at all (default 3600) */
    uint64_t seed;         /* for the argument data and the search (default 1) */
    FILE *log;             /* warnings and progress lines; NULL: none (the default) */
} gpubench_session_options;

GPUBENCH_API void gpubench_session_options_init(gpubench_session_options *o);

/* [in] o: NULL for the defaults. [out] *out: the session; the cache is opened now
 * (GPUBENCH_ECACHE names a damaged or locked one), the GPU only when a tune first
 * needs it. */
GPUBENCH_API int gpubench_session_open(const gpubench_session_options *o, gpubench_session **out,
                                       gpubench_error *err);

/* Ends the worker, releases the GPU's lease and closes the cache. NULL is a no-op. */
GPUBENCH_API void gpubench_session_close(gpubench_session *s);

/* [out] buf: the fingerprint of the session's GPU, "NVIDIA H200/sm_90/132" (the
 * device part of the cache's keys and of a tuned header), opening the GPU if it
 * is not open. GPUBENCH_ENODRIVER or GPUBENCH_ENOGPU without one. */
GPUBENCH_API int gpubench_session_device(gpubench_session *s, char *buf, size_t size,
                                         gpubench_error *err);

/* ---- tuning and looking up ---------------------------------------------------- */

/* A best configuration, as gpubench_tune and gpubench_lookup give it. */
typedef struct gpubench_best {
    gpubench_fields *config; /* the configuration; owned here (gpubench_best_clear) */
    gpubench_fields *shape;  /* the key of the entry that answered */
    double median_ms;        /* its median time */
    int match;               /* GPUBENCH_EXACT or GPUBENCH_NEAREST */
    int cached;              /* gpubench_tune: from the cache; nothing was measured now */
    char device[320];        /* the device fingerprint it was tuned on */
} gpubench_best;

#define GPUBENCH_EXACT   0
#define GPUBENCH_NEAREST 1

/* Frees what b holds and zeroes it; NULL is a no-op. */
GPUBENCH_API void gpubench_best_clear(gpubench_best *b);

/* How one tune searches: fill with gpubench_tune_options_init. */
typedef struct gpubench_tune_options {
    size_t size;          /* sizeof(gpubench_tune_options), set by _init */
    int64_t max_evals;    /* configurations to try; 0: the default rule (every valid
                             one up to 512, else 200 chosen by "auto") */
    double max_seconds;   /* 0: no limit */
    const char *strategy; /* "exhaustive", "random", "anneal", "genetic", "local",
                             "auto"; NULL: the default rule */
    int has_seed;         /* the search's seed is seed, not the session's */
    uint64_t seed;
} gpubench_tune_options;

GPUBENCH_API void gpubench_tune_options_init(gpubench_tune_options *o);

/* Tunes k for shape: every configuration the constraint keeps is compiled,
 * checked against the reference and timed on the GPU, and the fastest is kept in
 * the cache, as gpubench-tune does. A shape that has a best in the cache is
 * answered from it (out->cached) unless the session forces. [in] o: NULL for
 * the defaults. [out] out: the best (gpubench_best_clear it), match
 * GPUBENCH_EXACT.
 * Errors: GPUBENCH_EINVAL for a declaration that cannot be tuned (no source,
 * entry, args or launch callback; a ${P} that is not a parameter) or a shape the
 * callbacks refuse (GPUBENCH_ECALLBACK with their message); GPUBENCH_ENOTFOUND when
 * no configuration compiled, ran and passed the check (the message gives the
 * first reasons); GPUBENCH_ENOGPU when the session compiles only (without a GPU,
 * or compile_only): every variant was compiled, nothing timed. */
GPUBENCH_API int gpubench_tune(gpubench_session *s, const gpubench_kernel *k,
                               const gpubench_fields *shape, const gpubench_tune_options *o,
                               gpubench_best *out, gpubench_error *err);

/* Looks up the best configuration of k for shape in the session's cache, never
 * touching the GPU: the entry of this exact shape (its key fields), else of the
 * nearest shape with the same string and boolean key fields (least sum over the
 * numeric ones of |log2(asked/entry)|, or log2(1 + |asked - entry|) where a value
 * is <= 0), as a tuned header's lookup does. The entries are those of the
 * session's GPU once it is open (after a tune, or gpubench_session_device), else
 * of the only device the cache has k for. The session reads k's entries once and
 * keeps them (again after it tunes k): entries another process adds meanwhile show
 * in a new session. [out] out: the best.
 * Errors: GPUBENCH_ENOTFOUND when no entry answers (none for k, or none with the
 * same string and boolean key fields); GPUBENCH_EINVAL when the shape lacks a key
 * field, or the cache has k for several devices and the GPU is not open. */
GPUBENCH_API int gpubench_lookup(gpubench_session *s, const gpubench_kernel *k,
                                 const gpubench_fields *shape, gpubench_best *out,
                                 gpubench_error *err);

#ifdef __cplusplus
}
#endif

#endif
