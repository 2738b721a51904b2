#include "engine/gpu.h"

#include "base/strbuf.h"
#include "engine/builtins.h"
#include "engine/driver.h"
#include "engine/gpu_internal.h"
#include "engine/nvrtc.h"
#include "engine/tensormap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int load_builtins(gb_gpu *gpu, gb_err *err)
{
    gb_compile_req req = {
        .source = gb_builtins_source,
        .source_name = GB_BUILTINS_NAME,
        .name_exprs = {"gb_fill"},
        .n_name_exprs = 1,
        .arch = gpu->info.arch,
        .label = "gpubench builtins", /* its NVTX range: "compile gpubench builtins" */
    };
    gb_compile_out out;
    int rc = gb_nvrtc_compile(&req, &out, err);
    if (rc) return gb_err_prefix(err, "compiling the engine's own kernels for %s", gpu->info.arch);
    GB_CU_CHECK(rc, err, cuModuleLoadData, (&gpu->builtins, out.cubin));
    GB_CU_CHECK(rc, err, cuModuleGetFunction, (&gpu->fill, gpu->builtins, "gb_fill"));
    GB_CU_CHECK(rc, err, cuModuleGetFunction, (&gpu->compare, gpu->builtins, "gb_compare"));
    GB_CU_CHECK(rc, err, cuModuleGetFunction, (&gpu->plant, gpu->builtins, "gb_plant"));
    GB_CU_CHECK(rc, err, cuModuleGetFunction, (&gpu->flush, gpu->builtins, "gb_flush"));
    GB_CU_CHECK(rc, err, cuModuleGetFunction, (&gpu->flush_read, gpu->builtins, "gb_flush_read"));
    GB_CU_CHECK(rc, err, cuModuleGetFunction, (&gpu->clock_probe, gpu->builtins, "gb_clock_probe"));
    GB_CU_CHECK(rc, err, cuModuleGetFunction, (&gpu->copy, gpu->builtins, "gb_copy"));
cleanup:
    gb_compile_out_free(&out);
    return rc;
}

static int open_context(gb_gpu *gpu, int ordinal, gb_err *err)
{
    int rc = GB_OK, count = 0;
    GB_CU_CHECK(rc, err, cuDeviceGetCount, (&count));
    if (ordinal < 0 || ordinal >= count)
        return gb_err_set(err, GB_ENOGPU, "no GPU with ordinal %d (the driver sees %d)", ordinal,
                          count);
    GB_CU_CHECK(rc, err, cuDeviceGet, (&gpu->dev, ordinal));
    GB_CU_CHECK(rc, err, cuDevicePrimaryCtxRetain, (&gpu->ctx, gpu->dev));
    GB_CU_CHECK(rc, err, cuCtxSetCurrent, (gpu->ctx));
    if ((rc = gb_device_query(ordinal, &gpu->info, err))) return rc;
    gpu->info.device_count = count;
    GB_CU_CHECK(rc, err, cuStreamCreate, (&gpu->stream, CU_STREAM_NON_BLOCKING));
    GB_CU_CHECK(rc, err, cuEventCreate, (&gpu->start, CU_EVENT_DEFAULT));
    GB_CU_CHECK(rc, err, cuEventCreate, (&gpu->stop, CU_EVENT_DEFAULT));
    GB_CU_CHECK(rc, err, cuMemAlloc, (&gpu->compare_out, sizeof(gb_compare_result)));
cleanup:
    return rc;
}

int gb_gpu_open(int ordinal, gb_gpu **out, gb_err *err)
{
    *out = NULL;
    int rc = gb_driver_load(err);
    if (rc) return rc;
    /* Its tensormaps are CUtensorMaps, which must sit on 128-byte boundaries. */
    gb_gpu *gpu = aligned_alloc(_Alignof(gb_gpu), sizeof *gpu);
    if (!gpu) return gb_err_set(err, GB_ENOMEM, "out of memory");
    memset(gpu, 0, sizeof *gpu);
    if ((rc = open_context(gpu, ordinal, err)) || (rc = load_builtins(gpu, err)) ||
        (rc = gb_gpu_timing_open(gpu, err))) {
        gb_gpu_close(gpu);
        return rc;
    }
    gb_strlcpy(gpu->info.clock_source, gb_gpu_clock_source(gpu), sizeof gpu->info.clock_source);
    const char *note;
    gb_strlcpy(gpu->info.timer, gb_gpu_timer(gpu, &note), sizeof gpu->info.timer);
    if (*note)
        snprintf(gpu->info.timer_note, sizeof gpu->info.timer_note,
                 "%.440s: timing with CUDA events", note);
    *out = gpu;
    return GB_OK;
}

static void free_problem(gb_gpu *gpu)
{
    for (int i = 0; i < gpu->n_args; i++) {
        if (gpu->args[i].buf) gb_cu.cuMemFree(gpu->args[i].buf);
        if (gpu->args[i].ref_buf) gb_cu.cuMemFree(gpu->args[i].ref_buf);
    }
    memset(gpu->args, 0, sizeof gpu->args);
    gpu->n_args = 0;
    gpu->have_reference = false;
}

void gb_gpu_close(gb_gpu *gpu)
{
    if (!gpu) return;
    if (gpu->ctx) {
        gb_cu.cuCtxSetCurrent(gpu->ctx);
        if (!gpu->broken) gb_cu.cuStreamSynchronize(gpu->stream);
        free_problem(gpu);
        gb_gpu_cublas_close(gpu);
        gb_gpu_timing_close(gpu);
        if (gpu->compare_out) gb_cu.cuMemFree(gpu->compare_out);
        if (gpu->builtins) gb_cu.cuModuleUnload(gpu->builtins);
        if (gpu->start) gb_cu.cuEventDestroy(gpu->start);
        if (gpu->stop) gb_cu.cuEventDestroy(gpu->stop);
        if (gpu->stream) gb_cu.cuStreamDestroy(gpu->stream);
        gb_cu.cuDevicePrimaryCtxRelease(gpu->dev);
    }
    free(gpu);
}

const gb_device_info *gb_gpu_device(const gb_gpu *gpu)
{
    return &gpu->info;
}

/* ---- buffers ------------------------------------------------------------ */

static uint64_t mix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* Fills every input from the seed and poisons every output; the reference's
 * copies of the checked tensors only when the reference is about to run. */
static int reset_buffers(gb_gpu *gpu, bool for_reference, gb_err *err)
{
    int rc = GB_OK;
    for (int i = 0; i < gpu->n_args && rc == GB_OK; i++) {
        gpu_arg *a = &gpu->args[i];
        if (a->desc.kind != GB_ARG_TENSOR || gb_arg_elements(&a->desc) == 0) continue;
        uint64_t seed = mix64(gpu->seed ^ mix64((uint64_t)i + 1));
        rc = gb_gpu_fill_tensor(gpu, a->buf, &a->desc, seed, err);
        if (rc == GB_OK && a->ref_buf && for_reference) /* the same data, or the same poison */
            rc = gb_gpu_fill_tensor(gpu, a->ref_buf, &a->desc, seed, err);
        if (rc) gb_err_prefix(err, "filling argument %d", i + 1);
    }
    return rc;
}

static void set_scalar(gpu_arg *a)
{
    switch (a->desc.dtype) {
    case GB_DT_I32:
        a->value.i32 = (int32_t)a->desc.int_value;
        break;
    case GB_DT_U32:
        a->value.u32 = (uint32_t)a->desc.int_value;
        break;
    case GB_DT_I64:
        a->value.i64 = a->desc.int_value;
        break;
    case GB_DT_F32:
        a->value.f32 = (float)a->desc.float_value;
        break;
    default:
        a->value.f64 = a->desc.float_value;
        break;
    }
}

static int alloc_arg(gpu_arg *a, int position, gb_err *err)
{
    size_t bytes = gb_arg_bytes(&a->desc);
    int rc = GB_OK;
    if (bytes == 0) return GB_OK;
    GB_CU_CHECK(rc, err, cuMemAlloc, (&a->buf, bytes));
    if (a->desc.checked) GB_CU_CHECK(rc, err, cuMemAlloc, (&a->ref_buf, bytes));
    a->value.ptr = a->buf;
cleanup:
    if (rc) {
        char size[32];
        gb_format_bytes((double)bytes, size, sizeof size);
        gb_err_prefix(err, "allocating argument %d (%s, %s)", position,
                      gb_dtype_name(a->desc.dtype), size);
    }
    return rc;
}

/* Memory the session keeps free beyond the arguments: module loads, the check's
 * scratch, a library's workspace. */
#define GB_MEMORY_HEADROOM ((size_t)256 << 20)

/* Appends "argument 2 f32[1024x4096] 16.0 MiB" (and its reference copy). */
static void describe_arg(gb_strbuf *sb, int position, const gb_arg *a)
{
    char size[32];
    gb_format_bytes((double)gb_arg_bytes(a), size, sizeof size);
    gb_sb_printf(sb, "%sargument %d %s[", sb->len ? ", " : "", position, gb_dtype_name(a->dtype));
    for (int d = 0; d < a->n_dims; d++)
        gb_sb_printf(sb, "%s%lld", d ? "x" : "", (long long)a->dims[d]);
    gb_sb_printf(sb, "] %s%s", size, a->checked ? " (x2: the reference's copy)" : "");
}

/* Refuses a problem whose buffers cannot fit before anything is allocated, naming
 * each tensor's size and the GPU's free memory. */
static int check_fits(gb_gpu *gpu, const gb_arg *args, int n_args, gb_err *err)
{
    double need = 0;
    for (int i = 0; i < n_args; i++)
        if (args[i].kind == GB_ARG_TENSOR)
            need += (double)gb_arg_bytes(&args[i]) * (args[i].checked ? 2 : 1);
    size_t free_bytes = 0, total_bytes = 0;
    if (gb_cu.cuMemGetInfo(&free_bytes, &total_bytes) != CUDA_SUCCESS) return GB_OK;
    if (need + GB_MEMORY_HEADROOM <= (double)free_bytes) return GB_OK;
    gb_strbuf sb = {0};
    for (int i = 0; i < n_args; i++)
        if (args[i].kind == GB_ARG_TENSOR && gb_arg_bytes(&args[i]) > 0)
            describe_arg(&sb, i + 1, &args[i]);
    char need_text[32], free_text[32], total_text[32];
    gb_format_bytes(need, need_text, sizeof need_text);
    gb_format_bytes((double)free_bytes, free_text, sizeof free_text);
    gb_format_bytes((double)total_bytes, total_text, sizeof total_text);
    gb_err_set(err, GB_ENOMEM,
               "the tensors need %s (%s) but the GPU has %s free of %s: nothing was allocated",
               need_text, sb.len ? gb_sb_str(&sb) : "", free_text, total_text);
    gb_sb_free(&sb);
    return GB_ENOMEM;
}

/* Encodes the tensormaps once their tensors have buffers: one of the buffer the
 * kernel is given, one of the reference's copy when the tensor is checked. */
static int encode_maps(gb_gpu *gpu, const gb_arg *args, int n_args, gb_err *err)
{
    int rc = GB_OK;
    for (int i = 0; i < n_args && rc == GB_OK; i++) {
        if (args[i].kind != GB_ARG_TENSORMAP) continue;
        const gpu_arg *t = &gpu->args[args[i].tensor];
        rc = gb_tensormap_encode(args, n_args, i, t->buf, &gpu->args[i].value.map, err);
        if (rc == GB_OK && t->ref_buf)
            rc = gb_tensormap_encode(args, n_args, i, t->ref_buf, &gpu->args[i].ref_map, err);
    }
    return rc;
}

int gb_gpu_set_problem(gb_gpu *gpu, const gb_arg *args, int n_args, uint64_t seed, gb_err *err)
{
    int rc = gb_gpu_check_usable(gpu, err);
    if (rc) return rc;
    if (n_args < 0 || n_args > GB_MAX_ARGS)
        return gb_err_set(err, GB_EINVAL, "%d arguments (at most %d)", n_args, GB_MAX_ARGS);
    gb_cu.cuStreamSynchronize(gpu->stream);
    free_problem(gpu);
    if ((rc = check_fits(gpu, args, n_args, err))) return rc;
    gpu->seed = seed;
    gpu->n_args = n_args;
    for (int i = 0; i < n_args && rc == GB_OK; i++) {
        gpu->args[i].desc = args[i];
        if (args[i].kind == GB_ARG_TENSOR)
            rc = alloc_arg(&gpu->args[i], i + 1, err);
        else if (args[i].kind == GB_ARG_SCALAR)
            set_scalar(&gpu->args[i]);
    }
    if (rc == GB_OK) rc = encode_maps(gpu, args, n_args, err);
    if (rc == GB_OK) rc = reset_buffers(gpu, true, err);
    if (rc) free_problem(gpu);
    return gb_gpu_note_fault(gpu, rc, err);
}

int gb_gpu_read_arg(gb_gpu *gpu, int pos, bool reference, void *host, size_t bytes, gb_err *err)
{
    int rc = gb_gpu_check_usable(gpu, err);
    if (rc) return rc;
    if (pos < 0 || pos >= gpu->n_args || gpu->args[pos].desc.kind != GB_ARG_TENSOR)
        return gb_err_set(err, GB_EINVAL, "argument %d is not a tensor", pos + 1);
    CUdeviceptr src = reference ? gpu->args[pos].ref_buf : gpu->args[pos].buf;
    size_t size = gb_arg_bytes(&gpu->args[pos].desc);
    if (!src) return gb_err_set(err, GB_EINVAL, "argument %d has no reference copy", pos + 1);
    if ((rc = gb_gpu_sync(gpu, err))) return rc;
    GB_CU_CHECK(rc, err, cuMemcpyDtoH, (host, src, bytes < size ? bytes : size));
cleanup:
    return gb_gpu_note_fault(gpu, rc, err);
}

/* ---- kernels ------------------------------------------------------------ */

/* The kernel's parameter list as the driver knows it, so a launch with too few or
 * mismatched arguments is refused instead of letting the driver read past them. */
static void read_params(gb_gpu_kernel *k)
{
    k->n_params = -1;
    if (!gb_cu.cuFuncGetParamInfo) return;
    int n = 0;
    size_t offset, size;
    while (n <= GB_MAX_ARGS &&
           gb_cu.cuFuncGetParamInfo(k->function, (size_t)n, &offset, &size) == CUDA_SUCCESS) {
        k->param_bytes[n] = size > 255 ? 255 : (unsigned char)size;
        n++;
    }
    if (n > 0 || gb_cu.cuFuncGetParamInfo(k->function, 0, &offset, &size) ==
                     CUDA_ERROR_INVALID_VALUE) /* none: a kernel without parameters */
        k->n_params = n;
}

/* GB_ELAUNCH when the arguments do not match the kernel's parameters. */
static int check_params(const gb_gpu *gpu, const gb_gpu_kernel *k, gb_err *err)
{
    if (k->n_params < 0) return GB_OK;
    if (k->n_params != gpu->n_args)
        return gb_err_set(err, GB_ELAUNCH,
                          "the kernel takes %d parameters but args gives %d arguments", k->n_params,
                          gpu->n_args);
    for (int i = 0; i < gpu->n_args; i++)
        if (k->param_bytes[i] != gb_arg_param_bytes(&gpu->args[i].desc))
            return gb_err_set(err, GB_ELAUNCH,
                              "the kernel's parameter %d takes %d bytes but argument %d is a %s "
                              "of %zu bytes",
                              i + 1, k->param_bytes[i], i + 1,
                              gb_arg_param_what(&gpu->args[i].desc),
                              gb_arg_param_bytes(&gpu->args[i].desc));
    return GB_OK;
}

int gb_gpu_load(gb_gpu *gpu, const void *cubin, size_t cubin_bytes, const char *lowered_name,
                uint32_t smem_bytes, gb_gpu_kernel **out, gb_err *err)
{
    (void)cubin_bytes; /* a cubin is an ELF image and carries its own size */
    *out = NULL;
    int rc = gb_gpu_check_usable(gpu, err);
    if (rc) return rc;
    gb_gpu_kernel *k = calloc(1, sizeof *k);
    if (!k) return gb_err_set(err, GB_ENOMEM, "out of memory");
    GB_CU_CHECK(rc, err, cuModuleLoadData, (&k->module, cubin));
    GB_CU_CHECK(rc, err, cuModuleGetFunction, (&k->function, k->module, lowered_name));
    if (gb_cu.cuFuncGetAttribute(&k->registers, CU_FUNC_ATTRIBUTE_NUM_REGS, k->function))
        k->registers = -1;
    read_params(k);
    /* Static and dynamic shared memory together past 48 KiB need the opt-in. */
    int static_smem = 0;
    if (gb_cu.cuFuncGetAttribute(&static_smem, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, k->function))
        static_smem = 0;
    if (smem_bytes > 0 && smem_bytes + (uint32_t)static_smem > 48 * 1024)
        GB_CU_CHECK(
            rc, err, cuFuncSetAttribute,
            (k->function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)smem_bytes));
    *out = k;
    return GB_OK;
cleanup:
    gb_gpu_unload(gpu, k);
    return gb_gpu_note_fault(gpu, rc, err);
}

void gb_gpu_unload(gb_gpu *gpu, gb_gpu_kernel *kernel)
{
    (void)gpu; /* modules belong to the context the session keeps current */
    if (!kernel) return;
    if (kernel->module) gb_cu.cuModuleUnload(kernel->module);
    gb_gpu_gemm_free(kernel->gemm);
    free(kernel);
}

int gb_gpu_kernel_registers(const gb_gpu_kernel *kernel)
{
    return kernel->registers;
}

int gb_gpu_run_reference(gb_gpu *gpu, gb_gpu_kernel *ref, const gb_launch *l, gb_err *err)
{
    int rc = gb_gpu_check_usable(gpu, err);
    if (rc == GB_OK) rc = check_params(gpu, ref, err);
    if (rc == GB_OK) rc = reset_buffers(gpu, true, err);
    if (rc == GB_OK) rc = gb_gpu_launch(gpu, ref, l, true, err);
    if (rc == GB_OK) rc = gb_gpu_sync(gpu, err);
    if (rc) return gb_err_prefix(err, "reference kernel");
    gpu->have_reference = true;
    return GB_OK;
}

static double bits_to_double(uint64_t bits)
{
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

/* Folds one output's comparison into out: element by element, or with check->norm
 * by the norm of the error (NaN positions must still agree). */
static void judge(const gb_compare_result *host, int pos, uint64_t n, const gb_check_spec *check,
                  gb_check_result *out)
{
    int64_t bad = (int64_t)host->n_bad;
    uint64_t first = host->first_bad;
    if (check->norm) {
        double err_norm = sqrt(host->sum_sq_diff), ref_norm = sqrt(host->sum_sq_ref);
        double rel = err_norm == 0 ? 0 : ref_norm > 0 ? err_norm / ref_norm : INFINITY;
        out->norm = true;
        out->norm_err = fmax(out->norm_err, rel);
        if (err_norm <= check->rtol * ref_norm + check->atol) { /* only NaN mismatches fail */
            bad = (int64_t)host->n_nan_bad;
            first = host->first_nan_bad;
        } else if (bad == 0) { /* each element within its own tolerance, the whole not */
            bad = 1;
            first = 0;
        }
    }
    if (bad && out->first_bad_output < 0) {
        out->first_bad_output = pos;
        out->first_bad_index = (int64_t)first;
    }
    out->n_bad += bad;
    out->n_compared += (int64_t)n;
    out->max_abs_err = fmax(out->max_abs_err, bits_to_double(host->max_abs_bits));
    out->max_rel_err = fmax(out->max_rel_err, bits_to_double(host->max_rel_bits));
}

/* Compares output argument pos with the reference's copy (or, with no reference,
 * with itself, which flags exactly the NaNs) and folds the result into out. */
static int compare_output(gb_gpu *gpu, int pos, const gb_check_spec *check, gb_check_result *out,
                          gb_err *err)
{
    gpu_arg *a = &gpu->args[pos];
    gb_compare_result host = {.first_bad = UINT64_MAX, .first_nan_bad = UINT64_MAX};
    CUdeviceptr ref = gpu->have_reference ? a->ref_buf : a->buf;
    int dtype = a->desc.dtype, nan_matches = gpu->have_reference, rc = GB_OK;
    uint64_t n = (uint64_t)gb_arg_elements(&a->desc);
    double rtol = check->rtol, atol = check->atol;
    void *params[] = {&a->buf, &ref, &dtype, &n, &rtol, &atol, &nan_matches, &gpu->compare_out};
    GB_CU_CHECK(rc, err, cuMemcpyHtoD, (gpu->compare_out, &host, sizeof host));
    GB_CU_CHECK(rc, err, cuLaunchKernel,
                (gpu->compare, gb_gpu_grid_for(n), 1, 1, 256, 1, 1, 0, gpu->stream, params, NULL));
    if ((rc = gb_gpu_sync(gpu, err))) return rc;
    GB_CU_CHECK(rc, err, cuMemcpyDtoH, (&host, gpu->compare_out, sizeof host));
    judge(&host, pos, n, check, out);
cleanup:
    return rc;
}

int gb_gpu_verify(gb_gpu *gpu, gb_gpu_kernel *kernel, const gb_launch *l,
                  const gb_check_spec *check, gb_check_result *out, gb_err *err)
{
    memset(out, 0, sizeof *out);
    out->first_bad_output = -1;
    out->checked = gpu->have_reference;
    int rc = gb_gpu_check_usable(gpu, err);
    if (rc == GB_OK) rc = check_params(gpu, kernel, err);
    if (rc == GB_OK) rc = reset_buffers(gpu, false, err);
    if (rc == GB_OK) rc = gb_gpu_launch(gpu, kernel, l, false, err);
    if (rc == GB_OK) rc = gb_gpu_sync(gpu, err);
    for (int i = 0; rc == GB_OK && i < check->n_outputs; i++) {
        int pos = check->outputs[i];
        if (pos < 0 || pos >= gpu->n_args || !gpu->args[pos].desc.checked)
            return gb_err_set(err, GB_EINVAL, "argument %d is not a checked tensor", pos + 1);
        rc = compare_output(gpu, pos, check, out, err);
    }
    return gb_gpu_note_fault(gpu, rc, err);
}
