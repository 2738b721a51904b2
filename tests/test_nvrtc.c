#include "engine/cubin.h"
#include "engine/nvrtc.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* Real NVRTC compiles: no GPU is needed, only the toolkit gpubench was built with.
 * The sources come from the source tree (ctest sets GB_SOURCE_DIR); the group setup
 * reads them once. Each test gets a zeroed result and error, freed by teardown. */

#define ARCH              "sm_90a"
#define SGEMM_128         "sgemm<128,128,16,8,8>"
#define SGEMM_128_LOWERED "_Z5sgemmILi128ELi128ELi16ELi8ELi8EEvPKfS1_Pfiii"
/* Two slices of As[BK][BM + 4] (A transposed, padded) and Bs[BK][BN]. */
#define SGEMM_128_SMEM (4 * 2 * 16 * (128 + 4 + 128))

typedef struct sources {
    char dir[4096];
    char templates[4096];
    char *builtins;
    char *sgemm;
    char *gemm_ref;
} sources;

static sources src;
static const char *include_dirs[1]; /* { src.templates } */

typedef struct fixture {
    gb_compile_out out;
    gb_err err;
} fixture;

static char *read_file(const char *rel)
{
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", src.dir, rel);
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *text = NULL;
    long n = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (n >= 0 && fseek(f, 0, SEEK_SET) == 0 && (text = malloc((size_t)n + 1))) {
        text[fread(text, 1, (size_t)n, f)] = '\0';
    }
    fclose(f);
    return text;
}

static int group_setup(void **state)
{
    const char *dir = getenv("GB_SOURCE_DIR");
    if (!dir) {
        fprintf(stderr, "GB_SOURCE_DIR is not set: run this test through ctest\n");
        return -1;
    }
    snprintf(src.dir, sizeof src.dir, "%s", dir);
    snprintf(src.templates, sizeof src.templates, "%s/templates", dir);
    include_dirs[0] = src.templates;
    src.builtins = read_file("engine/builtins.cu");
    src.sgemm = read_file("templates/sgemm.cuh");
    src.gemm_ref = read_file("templates/gemm_ref.cuh");
    return src.builtins && src.sgemm && src.gemm_ref ? 0 : -1;
}

static int group_teardown(void **state)
{
    free(src.builtins);
    free(src.sgemm);
    free(src.gemm_ref);
    return 0;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f) return -1;
    gb_err_clear(&f->err);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    gb_compile_out_free(&f->out);
    free(f);
    return 0;
}

/* ---- helpers ------------------------------------------------------------ */

static gb_compile_req request(const char *source, const char *source_name, const char *name_expr)
{
    return (gb_compile_req){
        .source = source,
        .source_name = source_name,
        .name_exprs = {name_expr},
        .n_name_exprs = 1,
        .include_dirs = include_dirs,
        .n_include_dirs = 1,
        .arch = ARCH,
    };
}

static void compile_ok(fixture *f, const gb_compile_req *req)
{
    int rc = gb_nvrtc_compile(req, &f->out, &f->err);
    if (rc)
        fail_msg("compile of %s failed (%s): %s", req->source_name, gb_strerror(rc), f->err.msg);
    if (f->out.resources.registers <= 0) /* show what ptxas said when it cannot be read */
        print_message("ptxas log of %s for %s:\n%s\n", req->name_exprs[0], f->out.lowered[0],
                      f->out.log);
}

static void assert_elf_cubin(const gb_compile_out *out)
{
    assert_non_null(out->cubin);
    assert_true(out->cubin_bytes > 4);
    assert_memory_equal(out->cubin, "\177ELF", 4);
}

static void assert_starts_with(const char *text, const char *prefix)
{
    if (strncmp(text, prefix, strlen(prefix)) != 0)
        fail_msg("\"%s\" does not start with \"%s\"", text, prefix);
}

static void assert_failed_cleanly(const gb_compile_out *out)
{
    assert_null(out->cubin);
    assert_int_equal(out->cubin_bytes, 0);
    for (int i = 0; i < GB_NVRTC_MAX_NAMES; i++)
        assert_null(out->lowered[i]);
}

/* ---- compiling the project's own sources -------------------------------- */

static void test_builtins_compile_to_an_elf_cubin_with_their_c_names(void **state)
{
    fixture *f = *state;
    gb_compile_req req = request(src.builtins, "gpubench/builtins.cu", "gb_fill");
    req.name_exprs[1] = "gb_compare";
    req.name_exprs[2] = "gb_flush";
    req.n_name_exprs = 3;
    compile_ok(f, &req);
    assert_elf_cubin(&f->out);
    assert_string_equal(f->out.lowered[0], "gb_fill");
    assert_string_equal(f->out.lowered[1], "gb_compare");
    assert_string_equal(f->out.lowered[2], "gb_flush");
    assert_null(f->out.lowered[3]);
    assert_true(f->out.compile_ms > 0);
}

static void test_builtins_resources_are_those_of_the_first_name(void **state)
{
    fixture *f = *state;
    gb_compile_req req = request(src.builtins, "gpubench/builtins.cu", "gb_fill");
    compile_ok(f, &req);
    gb_resources first;
    assert_int_equal(gb_cubin_resources(f->out.cubin, f->out.cubin_bytes, "gb_fill", &first),
                     GB_OK);
    assert_int_equal(f->out.resources.registers, first.registers);
    assert_true(f->out.resources.registers > 0);
    assert_int_equal(f->out.resources.smem_static_bytes, 0); /* no "bytes smem" in its line */
}

static void test_sgemm_instantiation_gets_its_mangled_name(void **state)
{
    fixture *f = *state;
    gb_compile_req req = request(src.sgemm, "templates/sgemm.cuh", SGEMM_128);
    compile_ok(f, &req);
    assert_elf_cubin(&f->out);
    assert_string_equal(f->out.lowered[0], SGEMM_128_LOWERED);
}

static void test_sgemm_resources_come_from_ptxas(void **state)
{
    fixture *f = *state;
    gb_compile_req req = request(src.sgemm, "templates/sgemm.cuh", SGEMM_128);
    compile_ok(f, &req);
    const gb_resources *res = &f->out.resources;
    assert_true(res->registers > 0 && res->registers <= 255);
    /* Spill counts exist only in ptxas's report, which NVRTC may leave out. */
    bool reported = gb_nvrtc_parse_resources(f->out.log, f->out.lowered[0]).registers >= 0;
    assert_true(res->spill_store_bytes >= (reported ? 0 : -1));
    assert_true(res->spill_load_bytes >= (reported ? 0 : -1));
    assert_true(res->stack_bytes >= 0);
    assert_int_equal(res->smem_static_bytes, SGEMM_128_SMEM);
    assert_true(f->out.compile_ms > 0);
}

static void test_gemm_ref_compiles_under_its_extern_c_name(void **state)
{
    fixture *f = *state;
    gb_compile_req req = request(src.gemm_ref, "templates/gemm_ref.cuh", "gemm_ref_f32");
    compile_ok(f, &req);
    assert_elf_cubin(&f->out);
    assert_string_equal(f->out.lowered[0], "gemm_ref_f32");
    assert_true(f->out.resources.registers > 0);
}

static void test_include_dirs_are_searched(void **state)
{
    fixture *f = *state;
    gb_compile_req req = request("#include \"sgemm.cuh\"\n", "wrapper.cu", "sgemm<64,64,8,4,4>");
    compile_ok(f, &req);
    assert_starts_with(f->out.lowered[0], "_Z5sgemmILi64ELi64ELi8ELi4ELi4E");
    gb_compile_out_free(&f->out);
    req.n_include_dirs = 0;
    assert_int_equal(gb_nvrtc_compile(&req, &f->out, &f->err), GB_ECOMPILE);
    assert_non_null(strstr(f->err.msg, "sgemm.cuh"));
}

/* libcu++ (CUDA 13 keeps it in include/cccl, older toolkits in include): a kernel
 * that uses cuda::barrier and cuda::ptx compiles, without include directories of
 * its own. */
static void test_libcudacxx_headers_are_found(void **state)
{
    fixture *f = *state;
    static const char source[] = "#include <cuda/barrier>\n"
                                 "#include <cuda/ptx>\n"
                                 "extern \"C\" __global__ void k(unsigned *out)\n"
                                 "{\n"
                                 "    __shared__ cuda::barrier<cuda::thread_scope_block> bar;\n"
                                 "    if (threadIdx.x == 0) init(&bar, blockDim.x);\n"
                                 "    __syncthreads();\n"
                                 "    bar.arrive_and_wait();\n"
                                 "    out[threadIdx.x] = cuda::ptx::get_sreg_laneid();\n"
                                 "}\n";
    gb_compile_req req = request(source, "libcudacxx.cu", "k");
    req.n_include_dirs = 0;
    compile_ok(f, &req);
    assert_elf_cubin(&f->out);
}

/* ---- failures ----------------------------------------------------------- */

static const char broken_source[] = "// line 1\n"
                                    "extern \"C\" __global__ void k(int *out)\n"
                                    "{ *out = undefined_thing; }\n";

static void test_a_source_error_names_file_and_line_and_keeps_the_log(void **state)
{
    fixture *f = *state;
    gb_compile_req req = request(broken_source, "broken.cuh", "k");
    assert_int_equal(gb_nvrtc_compile(&req, &f->out, &f->err), GB_ECOMPILE);
    assert_int_equal(f->err.code, GB_ECOMPILE);
    assert_starts_with(f->err.msg, "broken.cuh:3: error:");
    assert_non_null(strstr(f->err.msg, "undefined_thing"));
    assert_non_null(f->out.log);
    assert_non_null(strstr(f->out.log, "broken.cuh(3): error"));
    assert_non_null(strstr(f->out.log, "error detected in the compilation of \"broken.cuh\""));
    assert_true(f->out.compile_ms > 0); /* the time NVRTC spent counts, failed or not */
    assert_failed_cleanly(&f->out);
}

static void test_a_name_that_names_no_kernel_is_a_compile_error(void **state)
{
    fixture *f = *state;
    gb_compile_req req = request(src.gemm_ref, "templates/gemm_ref.cuh", "no_such_kernel");
    assert_int_equal(gb_nvrtc_compile(&req, &f->out, &f->err), GB_ECOMPILE);
    assert_non_null(strstr(f->err.msg, "no_such_kernel"));
    assert_failed_cleanly(&f->out);
}

static void test_an_instantiation_that_breaks_its_static_assert_is_a_compile_error(void **state)
{
    fixture *f = *state;
    gb_compile_req req = request(src.sgemm, "templates/sgemm.cuh", "sgemm<64,64,8,5,4>");
    assert_int_equal(gb_nvrtc_compile(&req, &f->out, &f->err), GB_ECOMPILE);
    assert_starts_with(f->err.msg, "templates/sgemm.cuh:");
    assert_non_null(strstr(f->err.msg, "BM % TM"));
}

static void test_a_bad_option_is_an_nvrtc_error_naming_it(void **state)
{
    fixture *f = *state;
    gb_compile_req req = request(src.gemm_ref, "templates/gemm_ref.cuh", "gemm_ref_f32");
    req.options = (const char *const[]){"--no-such-option"};
    req.n_options = 1;
    assert_int_equal(gb_nvrtc_compile(&req, &f->out, &f->err), GB_ENVRTC);
    assert_non_null(strstr(f->err.msg, "--no-such-option"));
    assert_non_null(strstr(f->out.log, "--no-such-option"));
    assert_failed_cleanly(&f->out);
}

static void test_a_virtual_arch_without_a_cubin_is_an_nvrtc_error(void **state)
{
    fixture *f = *state;
    gb_compile_req req = request(src.gemm_ref, "templates/gemm_ref.cuh", "gemm_ref_f32");
    req.arch = "compute_90";
    assert_int_equal(gb_nvrtc_compile(&req, &f->out, &f->err), GB_ENVRTC);
    assert_failed_cleanly(&f->out);
}

static void test_a_request_needs_one_to_max_names(void **state)
{
    fixture *f = *state;
    gb_compile_req req = request(src.gemm_ref, "templates/gemm_ref.cuh", "gemm_ref_f32");
    req.n_name_exprs = 0;
    assert_int_equal(gb_nvrtc_compile(&req, &f->out, &f->err), GB_EINVAL);
    req.n_name_exprs = GB_NVRTC_MAX_NAMES + 1;
    assert_int_equal(gb_nvrtc_compile(&req, &f->out, &f->err), GB_EINVAL);
    assert_null(f->out.log);
}

static const char macro_source[] = "#ifndef GB_TILE\n"
                                   "#error GB_TILE is not defined\n"
                                   "#endif\n"
                                   "static_assert(GB_TILE == 64, \"GB_TILE must be 64\");\n"
                                   "extern \"C\" __global__ void k(int *out) { *out = GB_TILE; }\n";

static void test_define_options_reach_the_source(void **state)
{
    fixture *f = *state;
    gb_compile_req req = request(macro_source, "macro.cu", "k");
    assert_int_equal(gb_nvrtc_compile(&req, &f->out, &f->err), GB_ECOMPILE);
    assert_non_null(strstr(f->err.msg, "GB_TILE is not defined"));
    gb_compile_out_free(&f->out);

    req.options = (const char *const[]){"-DGB_TILE=32"};
    req.n_options = 1;
    assert_int_equal(gb_nvrtc_compile(&req, &f->out, &f->err), GB_ECOMPILE);
    assert_non_null(strstr(f->err.msg, "GB_TILE must be 64"));
    gb_compile_out_free(&f->out);

    req.options = (const char *const[]){"-DGB_TILE=64"};
    compile_ok(f, &req);
    assert_elf_cubin(&f->out);
}

/* NVRTC reports #error and a missing #include as "file(N): catastrophic error: ...".
 * BUG (engine/nvrtc.c, gb_nvrtc_first_error): only ": error" is looked for, so the
 * message is the log's first line, here the warning instead of the error. */
static void test_a_fatal_error_after_a_warning_names_file_and_line(void **state)
{
    fixture *f = *state;
    gb_compile_req req = request("#warning careful\n#include \"nope.cuh\"\n", "fatal.cu", "k");
    assert_int_equal(gb_nvrtc_compile(&req, &f->out, &f->err), GB_ECOMPILE);
    assert_starts_with(f->err.msg, "fatal.cu:2: ");
    assert_non_null(strstr(f->err.msg, "cannot open source file \"nope.cuh\""));
}

static void test_out_free_is_safe_on_zeroed_and_freed_results(void **state)
{
    gb_compile_out out;
    memset(&out, 0, sizeof out);
    gb_compile_out_free(&out);
    gb_compile_out_free(&out);
    gb_compile_out_free(NULL);
}

/* ---- two compiles at once ----------------------------------------------- */

typedef struct job {
    gb_compile_req req;
    gb_compile_out out;
    gb_err err;
    int rc;
} job;

static void *compile_job(void *arg)
{
    job *j = arg;
    j->rc = gb_nvrtc_compile(&j->req, &j->out, &j->err);
    return NULL;
}

static void test_two_threads_compile_independent_programs(void **state)
{
    job jobs[2] = {
        {.req = request(src.sgemm, "templates/sgemm.cuh", SGEMM_128)},
        {.req = request(broken_source, "broken.cuh", "k")},
    };
    pthread_t threads[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&threads[i], NULL, compile_job, &jobs[i]), 0);
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_join(threads[i], NULL), 0);
    if (jobs[0].rc) fail_msg("sgemm: %s", jobs[0].err.msg);
    assert_elf_cubin(&jobs[0].out);
    assert_string_equal(jobs[0].out.lowered[0], SGEMM_128_LOWERED);
    assert_int_equal(jobs[0].out.resources.smem_static_bytes, SGEMM_128_SMEM);
    assert_null(strstr(jobs[0].out.log, "broken.cuh"));
    assert_int_equal(jobs[1].rc, GB_ECOMPILE);
    assert_starts_with(jobs[1].err.msg, "broken.cuh:3: error:");
    assert_null(strstr(jobs[1].out.log, "sgemm"));
    gb_compile_out_free(&jobs[0].out);
    gb_compile_out_free(&jobs[1].out);
}

/* Compile threads ask for the CUDA include directory at the same time: every
 * answer is the whole path, never a buffer another thread is rewriting. */
static void *ask_include_dir(void *arg)
{
    const char *want = arg;
    for (int i = 0; i < 20000; i++)
        if (strcmp(gb_nvrtc_cuda_include(), want) != 0) return (void *)1;
    return NULL;
}

static void test_threads_asking_for_the_include_dir_all_get_it_whole(void **state)
{
    (void)state;
    char want[4096];
    snprintf(want, sizeof want, "%s", gb_nvrtc_cuda_include());
    assert_non_null(strstr(want, "include"));
    pthread_t threads[8];
    for (int i = 0; i < 8; i++)
        assert_int_equal(pthread_create(&threads[i], NULL, ask_include_dir, want), 0);
    for (int i = 0; i < 8; i++) {
        void *bad = NULL;
        assert_int_equal(pthread_join(threads[i], &bad), 0);
        assert_null(bad);
    }
}

/* ---- resources from the cubin ------------------------------------------ */

static void test_cubin_resources_agree_with_ptxas(void **state)
{
    static const char *const names[] = {"sgemm<64,64,8,4,4>", "sgemm<128,64,32,8,4>", SGEMM_128};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        gb_compile_req req = request(src.sgemm, "templates/sgemm.cuh", names[i]);
        gb_compile_out out;
        gb_err err;
        assert_int_equal(gb_nvrtc_compile(&req, &out, &err), GB_OK);
        gb_resources elf, log = gb_nvrtc_parse_resources(out.log, out.lowered[0]);
        assert_int_equal(gb_cubin_resources(out.cubin, out.cubin_bytes, out.lowered[0], &elf),
                         GB_OK);
        if (log.registers >= 0) { /* ptxas wrote its report (not always: see cubin.h) */
            assert_int_equal(elf.registers, log.registers);
            assert_int_equal(elf.stack_bytes, log.stack_bytes);
            assert_int_equal(elf.smem_static_bytes, log.smem_static_bytes);
        }
        assert_true(elf.registers > 0);
        gb_compile_out_free(&out);
    }
}

static void test_every_compile_reports_resources_not_only_the_first(void **state)
{
    for (int i = 0; i < 3; i++) {
        gb_compile_req req = request(src.sgemm, "templates/sgemm.cuh", SGEMM_128);
        gb_compile_out out;
        gb_err err;
        assert_int_equal(gb_nvrtc_compile(&req, &out, &err), GB_OK);
        assert_true(out.resources.registers > 0);
        assert_int_equal(out.resources.smem_static_bytes, SGEMM_128_SMEM);
        gb_compile_out_free(&out);
    }
}

static void test_local_memory_of_a_run_time_indexed_array_is_its_stack(void **state)
{
    static const char source[] =
        "extern \"C\" __global__ void local(float *x, int n)\n"
        "{ float a[64]; for (int i = 0; i < 64; i++) a[i] = x[(threadIdx.x + i) % n];\n"
        "  x[threadIdx.x] = a[(int)x[0] & 63]; }\n";
    gb_compile_req req = request(source, "local.cu", "local");
    gb_compile_out out;
    gb_err err;
    assert_int_equal(gb_nvrtc_compile(&req, &out, &err), GB_OK);
    assert_true(out.resources.stack_bytes >= 256);
    gb_compile_out_free(&out);
}

/* One wgmma per iteration, waited for at once; with `touch`, a plain instruction
 * writes an accumulator while the wgmma is in flight, so ptxas must serialise. */
static const char wgmma_loop[] =
    "#include \"wgmma_ops.cuh\"\n"
    "template <int TOUCH> __global__ void loop(float *out, unsigned long long a,\n"
    "    unsigned long long b, int n)\n"
    "{ float d[32] = {0};\n"
    "  for (int i = 0; i < n; i++) {\n"
    "    asm volatile(\"wgmma.fence.sync.aligned;\" ::: \"memory\");\n"
    "    mma<0, 0>(wgmma_shape<wgmma_bf16, 64>{}, d, a, b, 1);\n"
    "    if (TOUCH) d[i % 32] += 1.0f;\n"
    "    asm volatile(\"wgmma.commit_group.sync.aligned;\" ::: \"memory\");\n"
    "    asm volatile(\"wgmma.wait_group.sync.aligned 0;\" ::: \"memory\"); }\n"
    "  for (int i = 0; i < 32; i++) out[threadIdx.x * 32 + i] = d[i]; }\n";

static void test_wgmmas_that_ptxas_serialises_are_found_in_the_log(void **state)
{
    fixture *f = *state;
    char why[256] = "";
    gb_compile_req req = request(wgmma_loop, "loop.cu", "loop<1>");
    compile_ok(f, &req);
    assert_true(gb_nvrtc_wgmma_serialized(f->out.log, f->out.lowered[0], why, sizeof why));
    if (!strstr(why, ": wgmma.mma_async instructions are serialized due to "))
        fail_msg("the reason reads: %s", why);
    gb_compile_out_free(&f->out);
    req = request(wgmma_loop, "loop.cu", "loop<0>");
    compile_ok(f, &req);
    assert_false(gb_nvrtc_wgmma_serialized(f->out.log, f->out.lowered[0], why, sizeof why));
}

static void test_cubin_resources_refuse_a_bad_image_or_an_absent_kernel(void **state)
{
    gb_compile_req req = request(src.builtins, "gpubench/builtins.cu", "gb_fill");
    gb_compile_out out;
    gb_err err;
    gb_resources res;
    assert_int_equal(gb_nvrtc_compile(&req, &out, &err), GB_OK);
    assert_int_equal(gb_cubin_resources(out.cubin, out.cubin_bytes, "no_such_kernel", &res),
                     GB_ENOTFOUND);
    assert_int_equal(gb_cubin_resources(out.cubin, 40, "gb_fill", &res), GB_EINVAL);
    assert_int_equal(gb_cubin_resources("not an elf image at all, really", 31, "gb_fill", &res),
                     GB_EINVAL);
    assert_int_equal(res.registers, -1);
    gb_compile_out_free(&out);
}

/* The parameters a cubin lists, by position: a pointer, an int, a 128-byte
 * struct by value (a CUtensorMap's size), a double and a char; none for a kernel
 * without; a bad image or an absent kernel refused. */
static void test_cubin_params_list_each_parameters_size(void **state)
{
    static const char source[] =
        "struct __align__(64) map { char b[128]; };\n"
        "extern \"C\" __global__ void five(float *x, int n, const __grid_constant__ map m,\n"
        "    double d, char c) { if (n) x[0] = m.b[3] + d + c; }\n"
        "extern \"C\" __global__ void none() {}\n";
    gb_compile_req req = request(source, "five.cu", "five");
    req.name_exprs[1] = "none";
    req.n_name_exprs = 2;
    gb_compile_out out;
    gb_err err;
    assert_int_equal(gb_nvrtc_compile(&req, &out, &err), GB_OK);
    int sizes[8] = {0}, n = 0;
    assert_int_equal(gb_cubin_params(out.cubin, out.cubin_bytes, "five", &n, sizes, 8), GB_OK);
    assert_int_equal(n, 5);
    static const int want[5] = {8, 4, 128, 8, 1};
    assert_memory_equal(sizes, want, sizeof want);
    assert_int_equal(gb_cubin_params(out.cubin, out.cubin_bytes, "none", &n, sizes, 8), GB_OK);
    assert_int_equal(n, 0);
    assert_int_equal(gb_cubin_params(out.cubin, out.cubin_bytes, "five", &n, sizes, 3), GB_EINVAL);
    assert_int_equal(gb_cubin_params(out.cubin, out.cubin_bytes, "absent", &n, sizes, 8),
                     GB_ENOTFOUND);
    assert_int_equal(gb_cubin_params("not an elf image at all, really", 31, "five", &n, sizes, 8),
                     GB_EINVAL);
    assert_int_equal(n, -1);
    gb_compile_out_free(&out);
}

static void test_version_reads_like_major_dot_minor(void **state)
{
    char version[16];
    memset(version, 'x', sizeof version);
    gb_nvrtc_version(version);
    int major = 0, minor = -1, end = 0;
    assert_int_equal(sscanf(version, "%d.%d%n", &major, &minor, &end), 2);
    assert_int_equal(version[end], '\0');
    assert_true(major >= 11 && minor >= 0);
}

/* ---- the ptxas report --------------------------------------------------- */

/* Two functions, as NVRTC's log shows them with -Xptxas=-v; the second spills and
 * has a prefix of the first's name. */
static const char ptxas_log[] =
    "ptxas info    : 0 bytes gmem\n"
    "ptxas info    : Compiling entry function '_Z4tileILi8EEvPf' for 'sm_90a'\n"
    "ptxas info    : Function properties for _Z4tileILi8EEvPf\n"
    "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 40 registers, used 1 barriers, 8192 bytes smem, 380 bytes cmem[0]\n"
    "ptxas info    : Compile time = 12.5 ms\n"
    "ptxas info    : Compiling entry function '_Z4tile' for 'sm_90a'\n"
    "ptxas info    : Function properties for _Z4tile\n"
    "ptxas         .     24 bytes stack frame, 16 bytes spill stores, 12 bytes spill loads\n"
    "ptxas info    : Used 255 registers, used 0 barriers, 368 bytes cmem[0]\n"
    "ptxas info    : Compile time = 3.25 ms";

static void test_parse_resources_reads_the_named_function(void **state)
{
    gb_resources res = gb_nvrtc_parse_resources(ptxas_log, "_Z4tileILi8EEvPf");
    assert_int_equal(res.registers, 40);
    assert_int_equal(res.smem_static_bytes, 8192);
    assert_int_equal(res.stack_bytes, 0);
    assert_int_equal(res.spill_store_bytes, 0);
    assert_int_equal(res.spill_load_bytes, 0);
}

static void test_parse_resources_reads_spills_and_missing_smem_as_zero(void **state)
{
    gb_resources res = gb_nvrtc_parse_resources(ptxas_log, "_Z4tile");
    assert_int_equal(res.registers, 255);
    assert_int_equal(res.stack_bytes, 24);
    assert_int_equal(res.spill_store_bytes, 16);
    assert_int_equal(res.spill_load_bytes, 12);
    assert_int_equal(res.smem_static_bytes, 0);
}

static void assert_not_reported(gb_resources res)
{
    assert_int_equal(res.registers, -1);
    assert_int_equal(res.stack_bytes, -1);
    assert_int_equal(res.spill_store_bytes, -1);
    assert_int_equal(res.spill_load_bytes, -1);
    assert_int_equal(res.smem_static_bytes, -1);
}

static void test_parse_resources_of_an_unreported_function_is_minus_one(void **state)
{
    assert_not_reported(gb_nvrtc_parse_resources(ptxas_log, "_Z4til"));
    assert_not_reported(gb_nvrtc_parse_resources(ptxas_log, "other"));
    assert_not_reported(gb_nvrtc_parse_resources("", "_Z4tile"));
    assert_not_reported(gb_nvrtc_parse_resources(NULL, "_Z4tile"));
    assert_not_reported(gb_nvrtc_parse_resources(ptxas_log, NULL));
}

static const char serialized_log[] =
    "ptxas info    : (C7519) warpgroup.arrive is injected in around line 96 by compiler to "
    "allow use of registers in GMMA in function '_Z4tileILi8EEvPf'\n"
    "ptxas info    : (C7511) Potential Performance Loss: wgmma.mma_async instructions are "
    "serialized due to insufficient register resources for the wgmma pipeline in the function "
    "'_Z4tileILi8EEvPf'\n"
    "ptxas info    : 0 bytes gmem\n";

static void test_a_serialisation_names_its_code_and_reason_for_its_own_function(void **state)
{
    char why[256];
    assert_true(gb_nvrtc_wgmma_serialized(serialized_log, "_Z4tileILi8EEvPf", why, sizeof why));
    assert_string_equal(why, "C7511: wgmma.mma_async instructions are serialized due to "
                             "insufficient register resources for the wgmma pipeline");
    assert_false(gb_nvrtc_wgmma_serialized(serialized_log, "_Z4tile", why, sizeof why));
    assert_false(gb_nvrtc_wgmma_serialized(ptxas_log, "_Z4tileILi8EEvPf", why, sizeof why));
    assert_false(gb_nvrtc_wgmma_serialized(NULL, "_Z4tile", why, sizeof why));
}

/* ---- the first error ---------------------------------------------------- */

static void assert_first_error(const char *log, const char *want)
{
    char out[256];
    gb_nvrtc_first_error(log, out, sizeof out);
    assert_string_equal(out, want);
}

static void test_first_error_is_rewritten_as_file_colon_line(void **state)
{
    assert_first_error("name(12): error: x", "name:12: error: x");
    assert_first_error("templates/sgemm.cuh(140): error: identifier \"q\" is undefined\n"
                       "  q;\n  ^\n\n1 error detected in the compilation of \"x\".\n",
                       "templates/sgemm.cuh:140: error: identifier \"q\" is undefined");
}

static void test_first_error_skips_the_warnings_before_it(void **state)
{
    assert_first_error("w.cu(1): warning #1105-D: #warning directive: careful\n"
                       "  #warning careful\n   ^\n\n"
                       "w.cu(2): warning #177-D: variable \"v\" was declared but never referenced\n"
                       "w.cu(3): error: identifier \"x\" is undefined\n"
                       "w.cu(4): error: identifier \"y\" is undefined\n",
                       "w.cu:3: error: identifier \"x\" is undefined");
}

/* BUG (engine/nvrtc.c, gb_nvrtc_first_error): gives the warning line, unrewritten. */
static void test_first_error_takes_a_catastrophic_error_after_warnings(void **state)
{
    char out[256];
    gb_nvrtc_first_error("w.cu(1): warning #1105-D: #warning directive: careful\n"
                         "  #warning careful\n   ^\n\n"
                         "w.cu(2): catastrophic error: cannot open source file \"x.cuh\"\n"
                         "1 catastrophic error detected in the compilation of \"w.cu\".\n",
                         out, sizeof out);
    assert_starts_with(out, "w.cu:2: ");
    assert_non_null(strstr(out, "error: cannot open source file \"x.cuh\""));
}

static void test_a_log_without_a_diagnostic_gives_its_first_line(void **state)
{
    assert_first_error("\nnvrtc: error: unrecognized option --x found\nmore\n",
                       "nvrtc: error: unrecognized option --x found");
    assert_first_error("w.cu(1): warning #177-D: unused\n", "w.cu(1): warning #177-D: unused");
    assert_first_error("", "compilation failed with an empty log");
}

static void test_first_error_is_truncated_to_the_buffer(void **state)
{
    char out[8];
    memset(out, 'x', sizeof out);
    gb_nvrtc_first_error("name(12): error: x", out, sizeof out);
    assert_string_equal(out, "name:12");
}

/* Template paths are the user's: a directory may hold a '(' of its own.
 * BUG (engine/nvrtc.c, rewrite_diagnostic): it takes the first '(' on the line, so
 * this error is not recognised and the warning line is reported instead. */
static void test_a_file_name_with_parentheses_is_rewritten(void **state)
{
    assert_first_error("kernels (v2)/t.cuh(1): warning #177-D: unused\n"
                       "kernels (v2)/t.cuh(7): error: expected a \";\"\n",
                       "kernels (v2)/t.cuh:7: error: expected a \";\"");
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_builtins_compile_to_an_elf_cubin_with_their_c_names),
        T(test_builtins_resources_are_those_of_the_first_name),
        T(test_sgemm_instantiation_gets_its_mangled_name),
        T(test_sgemm_resources_come_from_ptxas),
        T(test_gemm_ref_compiles_under_its_extern_c_name),
        T(test_include_dirs_are_searched),
        T(test_libcudacxx_headers_are_found),
        T(test_a_source_error_names_file_and_line_and_keeps_the_log),
        T(test_a_name_that_names_no_kernel_is_a_compile_error),
        T(test_an_instantiation_that_breaks_its_static_assert_is_a_compile_error),
        T(test_a_bad_option_is_an_nvrtc_error_naming_it),
        T(test_a_virtual_arch_without_a_cubin_is_an_nvrtc_error),
        T(test_a_request_needs_one_to_max_names),
        T(test_define_options_reach_the_source),
        T(test_a_fatal_error_after_a_warning_names_file_and_line),
        T(test_wgmmas_that_ptxas_serialises_are_found_in_the_log),
        cmocka_unit_test(test_out_free_is_safe_on_zeroed_and_freed_results),
        cmocka_unit_test(test_two_threads_compile_independent_programs),
        cmocka_unit_test(test_threads_asking_for_the_include_dir_all_get_it_whole),
        cmocka_unit_test(test_cubin_resources_agree_with_ptxas),
        cmocka_unit_test(test_every_compile_reports_resources_not_only_the_first),
        cmocka_unit_test(test_local_memory_of_a_run_time_indexed_array_is_its_stack),
        cmocka_unit_test(test_cubin_resources_refuse_a_bad_image_or_an_absent_kernel),
        cmocka_unit_test(test_cubin_params_list_each_parameters_size),
        cmocka_unit_test(test_version_reads_like_major_dot_minor),
        cmocka_unit_test(test_parse_resources_reads_the_named_function),
        cmocka_unit_test(test_parse_resources_reads_spills_and_missing_smem_as_zero),
        cmocka_unit_test(test_parse_resources_of_an_unreported_function_is_minus_one),
        cmocka_unit_test(test_a_serialisation_names_its_code_and_reason_for_its_own_function),
        cmocka_unit_test(test_first_error_is_rewritten_as_file_colon_line),
        cmocka_unit_test(test_first_error_skips_the_warnings_before_it),
        cmocka_unit_test(test_first_error_takes_a_catastrophic_error_after_warnings),
        cmocka_unit_test(test_a_log_without_a_diagnostic_gives_its_first_line),
        cmocka_unit_test(test_first_error_is_truncated_to_the_buffer),
        cmocka_unit_test(test_a_file_name_with_parentheses_is_rewritten),
    };
#undef T
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
