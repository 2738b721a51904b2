/*
 * Run-time compilation of CUDA C++ with NVRTC.
 *
 * A request names the source text, the name it is reported under (the template's
 * path, so the log points at the template's own lines), the kernel name
 * expressions to instantiate ("sgemm<128,64,8,8,4>"), extra options and the
 * target. The result holds the cubin, the lowered (mangled) name of each
 * expression, the full log, and the resources the first kernel uses.
 * NVRTC programs are independent, so compiles may run on several threads at once.
 */
#ifndef GB_ENGINE_NVRTC_H
#define GB_ENGINE_NVRTC_H

#include "base/error.h"

#include <stdbool.h>
#include <stddef.h>

#define GB_NVRTC_MAX_NAMES 4

typedef struct gb_compile_req {
    const char *source;
    const char *source_name; /* shown in the log: "templates/sgemm.cuh" */
    const char *name_exprs[GB_NVRTC_MAX_NAMES];
    int n_name_exprs;
    const char *const *options; /* user options and -D macros, as given */
    int n_options;
    const char *const *include_dirs;
    int n_include_dirs;
    const char *arch; /* "sm_90a" */
    /* What the compile's NVTX range calls it after "compile " (engine/nvtx.h):
     * "sgemm BK=8,BM=64"; NULL: the first name expression. */
    const char *label;
} gb_compile_req;

/* Resource use of one kernel (-1 when unknown): registers, stack and static shared
 * memory from the cubin (engine/cubin.h); spills from ptxas's verbose report,
 * which NVRTC does not always write. */
typedef struct gb_resources {
    int registers;
    int spill_store_bytes;
    int spill_load_bytes;
    int stack_bytes;
    int smem_static_bytes;
} gb_resources;

typedef struct gb_compile_out {
    void *cubin;
    size_t cubin_bytes;
    char *log;                         /* NVRTC's whole log, "" when empty */
    char *lowered[GB_NVRTC_MAX_NAMES]; /* mangled names, per name expression */
    gb_resources resources;            /* of name_exprs[0] */
    double compile_ms;
} gb_compile_out;

/* Compiles req. On a source error returns GB_ECOMPILE; err's message then starts
 * with the first diagnostic as "file:line: error: ..." and out->log keeps the
 * whole log. Other failures (bad options, NVRTC itself) are GB_ENVRTC. */
int gb_nvrtc_compile(const gb_compile_req *req, gb_compile_out *out, gb_err *err);

/* Frees what gb_nvrtc_compile allocated; safe on a zeroed or freed out. */
void gb_compile_out_free(gb_compile_out *out);

/* Parses ptxas -v output for the function with the given mangled name. */
gb_resources gb_nvrtc_parse_resources(const char *log, const char *lowered_name);

/* Whether ptxas serialised the wgmma.mma_async instructions of the function
 * with the given mangled name (its "(C7511) Potential Performance Loss: ...
 * serialized due to ..." line, one of several reasons); if so, writes ptxas's
 * words from the code on ("C7511: wgmma.mma_async instructions are serialized
 * due to insufficient register resources for the wgmma pipeline") to why. */
bool gb_nvrtc_wgmma_serialized(const char *log, const char *lowered_name, char *why,
                               size_t why_bytes);

/* Rewrites NVRTC's "name(LINE): error: text" diagnostics as "name:LINE: error: text"
 * and returns the first error (or the first line when none looks like one) in out. */
void gb_nvrtc_first_error(const char *log, char *out, size_t out_bytes);

/* "13.0" */
void gb_nvrtc_version(char out[16]);

/* The CUDA include directory handed to NVRTC (for cuda_fp16.h and friends):
 * $CUDA_HOME/include, else the toolkit gpubench was built with; worked out at the
 * first call, safe to call from any thread. */
const char *gb_nvrtc_cuda_include(void);

/* Its cccl directory (CUDA 13: libcu++, CUB and Thrust, as <cuda/barrier> and
 * <cuda/ptx>), also handed to NVRTC; "" when the toolkit has none. */
const char *gb_nvrtc_cccl_include(void);

#endif
