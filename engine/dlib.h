/*
 * Opening a library that gpubench loads at run time (cuBLASLt, NCCL): the file an
 * environment variable names, else the first of its sonames the loader finds, and
 * when neither works one sentence that names the library and how to get it. The
 * entry points are then resolved from the loader's own X-macro table.
 */
#ifndef GB_ENGINE_DLIB_H
#define GB_ENGINE_DLIB_H

#include "base/error.h"

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

#endif
