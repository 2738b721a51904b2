/*
 * Opening a library that gpubench loads at run time (cuBLASLt, NCCL): the file an
 * environment variable names, else the first of its sonames the loader finds, and
 * when neither works one sentence that names the library and how to get it. The
 * entry points are then resolved from the loader's own X-macro table.
 */
#ifndef GB_ENGINE_DLIB_H
#define GB_ENGINE_DLIB_H

#include "base/error.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct gb_dlib_spec {
    const char *env_var;        /* names the file instead: "GPUBENCH_NCCL" */
    const char *const *sonames; /* tried in order: "libnccl.so.2", "libnccl.so" */
    size_t n_sonames;
    const char *install; /* how to get it: "NCCL (libnccl2, from ...)" */
    const char *package; /* what to install, said shorter: "NCCL (libnccl2)" */
} gb_dlib_spec;

/* dlopens the library (RTLD_NOW | RTLD_LOCAL); *out_path is the environment's file
 * or the soname that opened. NULL with GB_ENODRIVER in err otherwise:
 * "libnccl.so.2 not found: install NCCL (...) or set LD_LIBRARY_PATH to its lib
 * folder, or GPUBENCH_NCCL to the file (libnccl.so was tried too; the loader
 * said: ...)", or, for a file the variable names, "PATH not found: install ... and
 * point GPUBENCH_NCCL, which names this file, at its libnccl.so.2, or unset it". */
void *gb_dlib_open(const gb_dlib_spec *spec, const char **out_path, gb_err *err);

/* A library loaded once per process: the first gb_dlib_load opens it and calls
 * `resolve` to fill the loader's table (an error there, such as a missing entry
 * point, is the load's), later calls give the same answer. Define one with
 * GB_DLIB_INIT(spec, resolve) as a static. */
typedef struct gb_dlib {
    const gb_dlib_spec *spec;
    int (*resolve)(void *lib, const char *path, gb_err *err);
    pthread_mutex_t lock;
    bool tried, loaded;
    const char *path;
    gb_err err;
} gb_dlib;

#define GB_DLIB_INIT(spec_, resolve_)                                                              \
    {                                                                                              \
        .spec = (spec_), .resolve = (resolve_), .lock = PTHREAD_MUTEX_INITIALIZER                  \
    }

/* GB_OK once the library is open and resolved, else its error (GB_ENODRIVER). */
int gb_dlib_load(gb_dlib *d, gb_err *err);

/* The environment's file or the soname that opened, NULL unless loaded. */
const char *gb_dlib_path(gb_dlib *d);

#endif
