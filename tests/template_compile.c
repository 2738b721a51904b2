#include "template_compile.h"

#include "engine/nvrtc.h"
#include "scratch.h"

#include <nvrtc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static void fail_with_log(nvrtcProgram prog)
{
    size_t n = 0;
    nvrtcGetProgramLogSize(prog, &n);
    char *log = malloc(n + 1);
    nvrtcGetProgramLog(prog, log);
    fail_msg("%s", log);
}

char *template_compile(const char *header, const char *name_expr, const char *arch,
                       const char *const defines[3], size_t *bytes)
{
    char templates[4096], include[4200], cuda[4200], source[256];
    source_dir(templates, sizeof templates);
    strncat(templates, "/templates", sizeof templates - strlen(templates) - 1);
    snprintf(include, sizeof include, "-I%s", templates);
    snprintf(cuda, sizeof cuda, "-I%s", gb_nvrtc_cuda_include());
    snprintf(source, sizeof source, "#include \"%s\"\n", header);
    const char *options[7] = {arch, "--std=c++17", include, cuda};
    int n = 4;
    for (int i = 0; i < 3 && defines[i]; i++)
        options[n++] = defines[i];
    nvrtcProgram prog;
    assert_int_equal(nvrtcCreateProgram(&prog, source, "variant.cu", 0, NULL, NULL), NVRTC_SUCCESS);
    assert_int_equal(nvrtcAddNameExpression(prog, name_expr), NVRTC_SUCCESS);
    if (nvrtcCompileProgram(prog, n, options) != NVRTC_SUCCESS) fail_with_log(prog);
    bool cubin = strstr(arch, "=sm_") != NULL;
    assert_int_equal(cubin ? nvrtcGetCUBINSize(prog, bytes) : nvrtcGetPTXSize(prog, bytes),
                     NVRTC_SUCCESS);
    char *out = malloc(*bytes);
    assert_int_equal(cubin ? nvrtcGetCUBIN(prog, out) : nvrtcGetPTX(prog, out), NVRTC_SUCCESS);
    nvrtcDestroyProgram(&prog);
    return out;
}
