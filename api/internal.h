/*
 * What the C API's handles hold (include/gpubench/gpubench.h). Each wraps the
 * engine's own type: the API only translates, as the Lua binding does.
 */
#ifndef GB_API_INTERNAL_H
#define GB_API_INTERNAL_H

#include "gpubench/gpubench.h"

#include "base/error.h"
#include "base/value.h"
#include "report/export/export.h"
#include "session/session.h"
#include "tuner/tune.h"

struct gpubench_fields {
    gb_fields f;
};

struct gpubench_kernel {
    gb_kernel_def def; /* first: def.hooks_ctx and def.reference point at kernels */
    gpubench_callbacks cb;
};

struct gpubench_args {
    gb_arg *args; /* the tuner's array, GB_MAX_ARGS long */
    int n;
    gb_err first; /* the first refused argument; code 0 while none was */
};

/* A kernel's entries as a lookup found them, kept for the next lookups. */
typedef struct gb_api_table {
    char *kernel;
    char device[320]; /* the device asked for; "" for the cache's only one */
    gb_export_table table;
} gb_api_table;

struct gpubench_session {
    gb_session session;
    char *arch;
    char device[320];     /* the GPU's fingerprint once it is known; "" before */
    gb_api_table *tables; /* read once per kernel and device, again after a tune */
    int n_tables;
};

/* A read-only view of fields the engine owns, for a callback's argument. */
static inline gpubench_fields gb_api_view(const gb_fields *f)
{
    gpubench_fields v = {*f};
    return v;
}

/* Copies an engine error out to the caller's (NULL: dropped); returns its code. */
int gb_api_error_out(const gb_err *e, gpubench_error *err);

/* Copies a callback's error into the engine's, naming the callback; returns
 * GB_ESCRIPT (GPUBENCH_ECALLBACK) unless it is GB_ENOMEM or GB_EINTR. */
int gb_api_error_in(const gpubench_error *e, const char *callback, gb_err *err);

/* Sets the engine hooks of k's definition to call its callbacks. */
void gb_api_set_hooks(gpubench_kernel *k);

/* GB_EINVAL unless the kernel can be tuned (source, entry whose ${P} are
 * parameters, args and launch callbacks; a reference that has source, entry and
 * launch and no parameters). */
int gb_api_kernel_check(const gpubench_kernel *k, gb_err *err);

/* The worker program (api/paths.c): the option, $GPUBENCH_WORKER, the
 * gpubench-tune installed beside the library, the build's, the configured
 * prefix's. GB_EINVAL for one given that is not executable, GB_ENOTFOUND when
 * none is found. */
int gb_api_find_worker(const char *option, char *out, size_t size, gb_err *err);

/* The template path the API reads templates from: $GPUBENCH_TEMPLATES's folders,
 * then the templates installed beside the library, then the source tree's (a
 * build that runs where it was built) and the configured prefix's. */
int gb_api_template_dirs(const char **dirs, int max, char *env_copy);

#endif
