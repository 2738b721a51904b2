/*
 * A kernel as the tuner takes it: its source, entry expression, space and
 * check, and the script's functions as hooks (a front end's: the Lua binding's,
 * the C API's), with what the tuner derives from it (the constraints as a
 * filter, the cache key's fields, the entry of a configuration, the
 * fingerprint).
 */
#ifndef GB_TUNER_KERNEL_H
#define GB_TUNER_KERNEL_H

#include "base/error.h"
#include "base/value.h"
#include "engine/gemm.h"
#include "engine/measure.h"
#include "engine/roofs.h"
#include "engine/spec.h"
#include "tuner/space.h"

#include <stdbool.h>

/* The script's functions, called on the tuner's thread. NULL hooks are allowed
 * where noted. */
typedef struct gb_kernel_hooks {
    /* The constraints: *out_ok false drops the configuration (NULL: keep all). */
    int (*accept)(void *ctx, const gb_config *config, bool *out_ok, gb_err *err);
    /* The kernel's arguments for a shape (at most GB_MAX_ARGS). */
    int (*args)(void *ctx, const gb_fields *shape, gb_arg *out_args, int *out_n_args, gb_err *err);
    /* Grid, block and dynamic shared memory. */
    int (*launch)(void *ctx, const gb_config *config, const gb_fields *shape, gb_launch *out,
                  gb_err *err);
    /* Extra -D macros (NULL: none). */
    int (*defines)(void *ctx, const gb_config *config, const gb_fields *shape, gb_fields *out,
                   gb_err *err);
    /* Floating-point operations and bytes moved per launch (NULL: unknown). */
    int (*work)(void *ctx, const gb_fields *shape, double *out_flops, double *out_bytes,
                gb_err *err);
    /* Set for a reference that is a library call, not a kernel (gb.cublas.gemm): the
     * GEMM it runs on a shape. Such a kernel has no source, is never compiled, and
     * needs no other hook. */
    int (*gemm)(void *ctx, const gb_fields *shape, gb_gemm *out, gb_err *err);
} gb_kernel_hooks;

/* What a kernel's compile may show that makes the tuner skip the variant (the
 * script's `reject`): spilled registers; wgmmas ptxas serialised. */
enum { GB_REJECT_SPILLS = 1u << 0, GB_REJECT_SERIALIZED_WGMMA = 1u << 1 };

typedef struct gb_kernel_def gb_kernel_def;
struct gb_kernel_def {
    char *name;
    char *source;      /* CUDA C++ text */
    char *source_name; /* how logs name it: the template's path, or "<name>.cu" */
    char **include_dirs;
    int n_include_dirs;
    char *entry;      /* name expression with ${P} placeholders */
    char *args_where; /* where the script defines args ("suite.lua:42"), or NULL */
    char *defined_at; /* where the script calls gb.kernel ("suite.lua:30: "), or NULL */
    gb_space space;
    char **options;
    int n_options;
    bool macros;     /* also pass every parameter as -DNAME=value */
    gb_math math;    /* what its flops run on, for the reports' compute roof */
    unsigned reject; /* GB_REJECT_* bits: compiles skipped, not run */
    gb_check_spec check;
    char **key_fields; /* shape fields that form the cache key (NULL: all) */
    int n_key_fields;
    gb_kernel_def *reference; /* owned; a kernel with no parameters, or NULL */
    bool has_measure;         /* the kernel's own measurement method, over the run's */
    gb_measure_opts measure;
    gb_kernel_hooks hooks;
    void *hooks_ctx;
};

void gb_kernel_def_free(gb_kernel_def *def);

/* True for a kernel that is a library call (hooks.gemm), not compiled source;
 * false for NULL. */
bool gb_kernel_is_library(const gb_kernel_def *def);

/* The constraints of kernel as a gb_config_filter (ctx is the kernel). */
int gb_tune_accept(void *ctx, const gb_config *config, bool *out_ok, gb_err *err);

/* The shape's fields that key the cache (the kernel's key list, or all of them). */
int gb_tune_key_fields(const gb_kernel_def *kernel, const gb_fields *shape, gb_fields *out,
                       gb_err *err);

#endif
