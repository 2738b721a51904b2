#include "engine/nvrtc.h"

#include "base/clock.h"
#include "engine/cubin.h"
#include "engine/nvtx.h"

#include <nvrtc.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifndef GB_CUDA_INCLUDE_DIR
#define GB_CUDA_INCLUDE_DIR "/usr/local/cuda/include"
#endif

#define MAX_OPTIONS 256

/* Worked out once: compile threads call gb_nvrtc_cuda_include at the same time, and
 * a buffer each of them rewrote could be read half-written (snprintf may clear it
 * first), which NVRTC saw as "cannot open source file cuda_bf16.h" now and then. */
static char cuda_include[4096], cccl_include[4096 + 8];
static pthread_once_t cuda_include_once = PTHREAD_ONCE_INIT;

static void find_cuda_include(void)
{
    const char *home = getenv("CUDA_HOME");
    if (!home || !*home ||
        snprintf(cuda_include, sizeof cuda_include, "%s/include", home) >= (int)sizeof cuda_include)
        snprintf(cuda_include, sizeof cuda_include, "%s", GB_CUDA_INCLUDE_DIR);
    /* CUDA 13 keeps libcu++, CUB and Thrust (<cuda/barrier>, <cuda/ptx>, ...) in
     * include/cccl; earlier toolkits keep them in include itself. */
    struct stat st;
    snprintf(cccl_include, sizeof cccl_include, "%s/cccl", cuda_include);
    if (stat(cccl_include, &st) != 0 || !S_ISDIR(st.st_mode)) cccl_include[0] = '\0';
}

const char *gb_nvrtc_cuda_include(void)
{
    pthread_once(&cuda_include_once, find_cuda_include);
    return cuda_include;
}

const char *gb_nvrtc_cccl_include(void)
{
    pthread_once(&cuda_include_once, find_cuda_include);
    return cccl_include;
}

void gb_nvrtc_version(char out[16])
{
    int major = 0, minor = 0;
    nvrtcVersion(&major, &minor);
    snprintf(out, 16, "%d.%d", major, minor);
}

static int nvrtc_fail(gb_err *err, nvrtcResult rc, const char *call)
{
    return gb_err_set(err, GB_ENVRTC, "%s: %s", call, nvrtcGetErrorString(rc));
}

/* Options are copied into one arena so the compile call sees stable strings. */
typedef struct option_list {
    const char *argv[MAX_OPTIONS];
    char *owned[MAX_OPTIONS];
    int n;
    int n_owned;
} option_list;

/* Adds prefix followed by value ("--include-path=" "/x"); either may be empty. */
static int add_option(option_list *ol, const char *prefix, const char *value)
{
    if (ol->n >= MAX_OPTIONS) return GB_ELIMIT;
    char *s = NULL;
    if (asprintf(&s, "%s%s", prefix, value) < 0) return GB_ENOMEM;
    ol->owned[ol->n_owned++] = s;
    ol->argv[ol->n++] = s;
    return GB_OK;
}

static void free_options(option_list *ol)
{
    for (int i = 0; i < ol->n_owned; i++)
        free(ol->owned[i]);
}

static int build_options(const gb_compile_req *req, option_list *ol)
{
    int rc = add_option(ol, "--gpu-architecture=", req->arch);
    if (!rc) rc = add_option(ol, "-std=c++17", "");
    if (!rc) rc = add_option(ol, "-Xptxas=-v", "");
    if (!rc) rc = add_option(ol, "-lineinfo", "");
    for (int i = 0; !rc && i < req->n_include_dirs; i++)
        rc = add_option(ol, "--include-path=", req->include_dirs[i]);
    if (!rc) rc = add_option(ol, "--include-path=", gb_nvrtc_cuda_include());
    if (!rc && *gb_nvrtc_cccl_include())
        rc = add_option(ol, "--include-path=", gb_nvrtc_cccl_include());
    for (int i = 0; !rc && i < req->n_options; i++)
        rc = add_option(ol, req->options[i], "");
    return rc;
}

static char *program_log(nvrtcProgram prog)
{
    size_t n = 0;
    if (nvrtcGetProgramLogSize(prog, &n) != NVRTC_SUCCESS || n == 0) return strdup("");
    char *log = malloc(n + 1);
    if (!log) return NULL;
    if (nvrtcGetProgramLog(prog, log) != NVRTC_SUCCESS) log[0] = '\0';
    log[n] = '\0';
    return log;
}

static int take_cubin(nvrtcProgram prog, gb_compile_out *out, gb_err *err)
{
    nvrtcResult rc = nvrtcGetCUBINSize(prog, &out->cubin_bytes);
    if (rc != NVRTC_SUCCESS) return nvrtc_fail(err, rc, "nvrtcGetCUBINSize");
    if (out->cubin_bytes == 0)
        return gb_err_set(err, GB_ENVRTC,
                          "NVRTC produced no cubin (is the target a real sm_ arch?)");
    if (!(out->cubin = malloc(out->cubin_bytes)))
        return gb_err_set(err, GB_ENOMEM, "out of memory");
    rc = nvrtcGetCUBIN(prog, out->cubin);
    return rc == NVRTC_SUCCESS ? GB_OK : nvrtc_fail(err, rc, "nvrtcGetCUBIN");
}

static int take_lowered(nvrtcProgram prog, const gb_compile_req *req, gb_compile_out *out,
                        gb_err *err)
{
    for (int i = 0; i < req->n_name_exprs; i++) {
        const char *lowered = NULL;
        nvrtcResult rc = nvrtcGetLoweredName(prog, req->name_exprs[i], &lowered);
        if (rc != NVRTC_SUCCESS)
            return gb_err_set(err, GB_ECOMPILE,
                              "%s: no kernel named '%s' (nvrtcGetLoweredName: %s)",
                              req->source_name, req->name_exprs[i], nvrtcGetErrorString(rc));
        if (!(out->lowered[i] = strdup(lowered)))
            return gb_err_set(err, GB_ENOMEM, "out of memory");
    }
    return GB_OK;
}

static int compile_program(nvrtcProgram prog, const gb_compile_req *req, gb_compile_out *out,
                           gb_err *err)
{
    option_list ol = {0};
    int rc = build_options(req, &ol);
    if (rc) {
        free_options(&ol);
        return gb_err_set(err, rc, "building NVRTC options for %s failed", req->source_name);
    }
    double start = gb_now_ms();
    nvrtcResult nr = nvrtcCompileProgram(prog, ol.n, ol.argv);
    out->compile_ms = gb_now_ms() - start;
    free_options(&ol);
    out->log = program_log(prog);
    if (!out->log) return gb_err_set(err, GB_ENOMEM, "out of memory");
    if (nr == NVRTC_ERROR_COMPILATION) {
        char first[1024];
        gb_nvrtc_first_error(out->log, first, sizeof first);
        return gb_err_set(err, GB_ECOMPILE, "%s", first);
    }
    if (nr != NVRTC_SUCCESS) {
        rc = nvrtc_fail(err, nr, "nvrtcCompileProgram");
        return gb_err_prefix(err, "%s (options or target refused; log: %.300s)", req->source_name,
                             out->log);
    }
    return GB_OK;
}

/* Registers, stack and shared memory come from the cubin; spill figures exist only
 * in ptxas's log, which NVRTC does not always write (13.0.88 writes it for the
 * first compile of a process only), so they may stay -1. */
static gb_resources resources(const gb_compile_out *out)
{
    gb_resources from_log = gb_nvrtc_parse_resources(out->log, out->lowered[0]), res;
    if (gb_cubin_resources(out->cubin, out->cubin_bytes, out->lowered[0], &res) != GB_OK)
        return from_log;
    res.spill_store_bytes = from_log.spill_store_bytes;
    res.spill_load_bytes = from_log.spill_load_bytes;
    return res;
}

static int compile(const gb_compile_req *req, gb_compile_out *out, gb_err *err)
{
    nvrtcProgram prog = NULL;
    nvrtcResult nr = nvrtcCreateProgram(&prog, req->source, req->source_name, 0, NULL, NULL);
    if (nr != NVRTC_SUCCESS) return nvrtc_fail(err, nr, "nvrtcCreateProgram");
    int rc = GB_OK;
    for (int i = 0; i < req->n_name_exprs && rc == GB_OK; i++) {
        nr = nvrtcAddNameExpression(prog, req->name_exprs[i]);
        if (nr != NVRTC_SUCCESS) rc = nvrtc_fail(err, nr, "nvrtcAddNameExpression");
    }
    if (rc == GB_OK) rc = compile_program(prog, req, out, err);
    if (rc == GB_OK) rc = take_lowered(prog, req, out, err);
    if (rc == GB_OK) rc = take_cubin(prog, out, err);
    if (rc == GB_OK) out->resources = resources(out);
    nvrtcDestroyProgram(&prog);
    if (rc != GB_OK) {
        char *log = out->log; /* keep the log and the time for the caller's report */
        double ms = out->compile_ms;
        out->log = NULL;
        gb_compile_out_free(out);
        out->log = log;
        out->compile_ms = ms;
    }
    return rc;
}

int gb_nvrtc_compile(const gb_compile_req *req, gb_compile_out *out, gb_err *err)
{
    memset(out, 0, sizeof *out);
    if (req->n_name_exprs < 1 || req->n_name_exprs > GB_NVRTC_MAX_NAMES)
        return gb_err_set(err, GB_EINVAL, "a compile needs 1 to %d kernel names",
                          GB_NVRTC_MAX_NAMES);
    gb_nvtx_push("compile %s", req->label ? req->label : req->name_exprs[0]);
    int rc = compile(req, out, err);
    gb_nvtx_pop();
    return rc;
}

void gb_compile_out_free(gb_compile_out *out)
{
    if (!out) return;
    free(out->cubin);
    free(out->log);
    for (int i = 0; i < GB_NVRTC_MAX_NAMES; i++)
        free(out->lowered[i]);
    memset(out, 0, sizeof *out);
}

/* ptxas -v prints, per function:
 *   ptxas info    : Function properties for NAME
 *   ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
 *   ptxas info    : Used 8 registers, used 0 barriers, 4096 bytes smem, ...
 * The lines after "Function properties for NAME" up to the next function belong to it. */
static void parse_resource_line(const char *line, gb_resources *res)
{
    const char *used = strstr(line, "Used ");
    if (strstr(line, "bytes stack frame")) {
        sscanf(line, "ptxas . %d bytes stack frame, %d bytes spill stores, %d bytes spill loads",
               &res->stack_bytes, &res->spill_store_bytes, &res->spill_load_bytes);
    } else if (used && sscanf(used, "Used %d registers", &res->registers) == 1) {
        const char *smem = strstr(used, " bytes smem");
        res->smem_static_bytes = 0;
        if (smem) {
            while (smem > used && smem[-1] >= '0' && smem[-1] <= '9')
                smem--;
            res->smem_static_bytes = atoi(smem);
        }
    }
}

gb_resources gb_nvrtc_parse_resources(const char *log, const char *lowered_name)
{
    gb_resources res = {-1, -1, -1, -1, -1};
    if (!log || !lowered_name) return res;
    char marker[1024];
    snprintf(marker, sizeof marker, "Function properties for %s\n", lowered_name);
    const char *p = strstr(log, marker);
    if (!p) return res;
    p += strlen(marker);
    const char *end = strstr(p, "Function properties for ");
    if (!end) end = p + strlen(p);
    char line[1024];
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        size_t len = eol ? (size_t)(eol - p) : (size_t)(end - p);
        snprintf(line, sizeof line, "%.*s", (int)len, p);
        parse_resource_line(line, &res);
        p += len + 1;
    }
    return res;
}

bool gb_nvrtc_wgmma_serialized(const char *log, const char *lowered_name, char *why,
                               size_t why_bytes)
{
    static const char needle[] = "wgmma.mma_async instructions are serialized";
    char function[1024];
    snprintf(function, sizeof function, " in the function '%s'", lowered_name ? lowered_name : "");
    for (const char *line = log; line && *line;) {
        const char *eol = strchr(line, '\n');
        size_t len = eol ? (size_t)(eol - line) : strlen(line);
        const char *what = memmem(line, len, needle, sizeof needle - 1);
        const char *in = memmem(line, len, function, strlen(function));
        if (what && in && in + strlen(function) == line + len) {
            const char *code = memmem(line, (size_t)(what - line), "(C", 2);
            int code_len = 0;
            while (code && code[code_len] && code[code_len] != ')')
                code_len++;
            snprintf(why, why_bytes, "%.*s%s%.*s", code ? code_len - 1 : 0, code ? code + 1 : "",
                     code ? ": " : "", (int)(in - what), what);
            return true;
        }
        line = eol ? eol + 1 : NULL;
    }
    return false;
}

/* The "(LINE): error" or "(LINE): catastrophic error" marker of a diagnostic line,
 * found from the right so a file name may itself contain parentheses; NULL if the
 * line is not an error. */
static const char *error_marker(const char *line, size_t len, long *out_line)
{
    static const char *const kinds[] = {"): error", "): catastrophic error"};
    for (size_t k = 0; k < 2; k++) {
        const char *close = memmem(line, len, kinds[k], strlen(kinds[k]));
        if (!close) continue;
        const char *open = close;
        while (open > line && open[-1] >= '0' && open[-1] <= '9')
            open--;
        if (open == close || open == line || open[-1] != '(') continue;
        *out_line = strtol(open, NULL, 10);
        return open - 1;
    }
    return NULL;
}

/* "file(12): error: text" -> "file:12: error: text" */
static bool rewrite_diagnostic(const char *line, size_t len, char *out, size_t out_bytes)
{
    long lineno = 0;
    const char *open = error_marker(line, len, &lineno);
    if (!open) return false;
    const char *rest = strchr(open, ')') + 2; /* after "):" */
    int n = snprintf(out, out_bytes, "%.*s:%ld:%.*s", (int)(open - line), line, lineno,
                     (int)(len - (size_t)(rest - line)), rest);
    return n > 0;
}

void gb_nvrtc_first_error(const char *log, char *out, size_t out_bytes)
{
    out[0] = '\0';
    const char *first_line = NULL;
    size_t first_len = 0;
    for (const char *line = log; line && *line;) {
        const char *eol = strchr(line, '\n');
        size_t len = eol ? (size_t)(eol - line) : strlen(line);
        if (!first_line && len) {
            first_line = line;
            first_len = len;
        }
        if (rewrite_diagnostic(line, len, out, out_bytes)) return;
        line = eol ? eol + 1 : NULL;
    }
    if (first_line)
        snprintf(out, out_bytes, "%.*s", (int)first_len, first_line);
    else
        snprintf(out, out_bytes, "compilation failed with an empty log");
}
