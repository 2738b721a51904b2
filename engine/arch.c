/* Compile targets: their names, which ones NVRTC takes, and each one's per-block
 * limits (engine/arch.h). */
#include "engine/arch.h"

#include <nvrtc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NVRTC_ARCHS 64
#define KIB             1024

/* ---- names ---------------------------------------------------------------- */

static int bad_name(gb_err *err, const char *name, const char *why)
{
    return gb_err_set(err, GB_EINVAL,
                      "'%s' is not a target: %s (a target is sm_XY, sm_XYa or sm_XYf, "
                      "e.g. sm_80, sm_90a, sm_100f)",
                      name, why);
}

int gb_arch_parse(const char *name, gb_arch *out, gb_err *err)
{
    *out = (gb_arch){0};
    if (!strncmp(name, "compute_", 8))
        return bad_name(err, name,
                        "compute_XY is a virtual architecture, and gpubench needs a cubin");
    if (strncmp(name, "sm_", 3)) return bad_name(err, name, "it does not start with sm_");
    const char *p = name + 3;
    int n_digits = 0, cc = 0;
    for (; *p >= '0' && *p <= '9' && n_digits < 4; p++, n_digits++)
        cc = cc * 10 + (*p - '0');
    if (n_digits < 2 || n_digits > 3 || name[3] == '0')
        return bad_name(err, name, "the capability needs 2 or 3 digits, as in sm_90 or sm_120");
    if ((*p == 'a' || *p == 'f') && p[1] == '\0')
        out->suffix = *p;
    else if (*p)
        return bad_name(err, name, "only a or f may follow the digits");
    out->cc = cc;
    return GB_OK;
}

/* ---- what NVRTC supports ------------------------------------------------- */

/* NVRTC's own list of capabilities, ascending (90 for sm_90); 0 if it fails. */
static int nvrtc_archs(int *out, gb_err *err)
{
    int n = 0;
    nvrtcResult rc = nvrtcGetNumSupportedArchs(&n);
    if (rc != NVRTC_SUCCESS || n < 0 || n > MAX_NVRTC_ARCHS) {
        gb_err_set(err, GB_ENVRTC, "nvrtcGetNumSupportedArchs: %s",
                   rc != NVRTC_SUCCESS ? nvrtcGetErrorString(rc) : "an implausible count");
        return 0;
    }
    rc = nvrtcGetSupportedArchs(out);
    if (rc != NVRTC_SUCCESS) {
        gb_err_set(err, GB_ENVRTC, "nvrtcGetSupportedArchs: %s", nvrtcGetErrorString(rc));
        return 0;
    }
    return n;
}

/* Whether NVRTC compiles an empty program for name. Its list has no suffixes, and
 * which capabilities have an a or f target changes between releases (sm_90a came
 * with 12.0, the f targets with 12.9), so NVRTC itself decides; a target it does
 * not know is refused while the options are read, in well under a millisecond. */
static bool nvrtc_accepts(const char *name)
{
    char option[64];
    snprintf(option, sizeof option, "--gpu-architecture=%s", name);
    const char *options[] = {option};
    nvrtcProgram prog = NULL;
    if (nvrtcCreateProgram(&prog, "", "gpubench_arch_probe.cu", 0, NULL, NULL) != NVRTC_SUCCESS)
        return false;
    bool ok = nvrtcCompileProgram(prog, 1, options) == NVRTC_SUCCESS;
    nvrtcDestroyProgram(&prog);
    return ok;
}

static void append(char *out, size_t out_bytes, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void append(char *out, size_t out_bytes, const char *fmt, ...)
{
    size_t len = strnlen(out, out_bytes);
    if (len + 1 >= out_bytes) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out + len, out_bytes - len, fmt, ap);
    va_end(ap);
}

void gb_arch_supported(char *out, size_t out_bytes)
{
    int archs[MAX_NVRTC_ARCHS];
    int n = nvrtc_archs(archs, NULL);
    out[0] = '\0';
    for (int i = 0; i < n; i++) {
        char name[16];
        append(out, out_bytes, "%ssm_%d", i ? " " : "", archs[i]);
        for (const char *s = "af"; *s; s++) {
            snprintf(name, sizeof name, "sm_%d%c", archs[i], *s);
            if (nvrtc_accepts(name)) append(out, out_bytes, " %s", name);
        }
    }
    if (n == 0) snprintf(out, out_bytes, "(NVRTC did not list its targets)");
}

static int unsupported(gb_err *err, const char *name)
{
    char version[16], list[1024];
    gb_nvrtc_version(version);
    gb_arch_supported(list, sizeof list);
    return gb_err_set(err, GB_EINVAL, "NVRTC %s does not compile for %s; it compiles for %s",
                      version, name, list);
}

int gb_arch_validate(const char *name, gb_err *err)
{
    gb_arch arch;
    int rc = gb_arch_parse(name, &arch, err);
    if (rc) return rc;
    int archs[MAX_NVRTC_ARCHS];
    int n = nvrtc_archs(archs, err);
    if (n == 0) return GB_ENVRTC;
    bool listed = false;
    for (int i = 0; i < n; i++)
        listed = listed || archs[i] == arch.cc;
    if (!listed || (arch.suffix && !nvrtc_accepts(name))) return unsupported(err, name);
    return GB_OK;
}

/* ---- limits ---------------------------------------------------------------- */

/* Per-block limits that differ between capabilities. From NVIDIA's CUDA C++
 * Programming Guide: for 7.5 to 12.x, section 5.1 "Compute Capabilities" of the
 * CUDA 13 edition, Table 31 "Memory Information per Compute Capability" ("Maximum
 * amount of shared memory per thread block", "Maximum number of 32-bit registers
 * per thread block"; 9.0, 10.x and 11.0 share a column, as do 12.0 and 12.1); for
 * 5.0 to 7.2, the "Technical Specifications per Compute Capability" table of the
 * CUDA 11/12.0 editions (the same two rows). The shared memory figure is the
 * opt-in maximum: more than 48 KiB needs dynamic shared memory and
 * CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, which engine/gpu.c sets. */
typedef struct cc_row {
    int cc;
    int smem_optin_kib;
    int regs_per_block_k;
} cc_row;

static const cc_row cc_rows[] = {
    {50, 48, 64},   {52, 48, 64},   {53, 48, 32},  {60, 48, 64},  {61, 48, 64},
    {62, 48, 32},   {70, 96, 64},   {72, 96, 64},  {75, 64, 64},  {80, 163, 64},
    {86, 99, 64},   {87, 163, 64},  {89, 99, 64},  {90, 227, 64}, {100, 227, 64},
    {103, 227, 64}, {110, 227, 64}, {120, 99, 64}, {121, 99, 64},
};

/* The limits every capability in those tables shares (Table 30 "Device and
 * Streaming Multiprocessor (SM) Information per Compute Capability", and Table 31
 * for registers per thread; static shared memory above 48 KiB is refused by
 * ptxas on every target). */
static void common_limits(gb_arch_limits *out)
{
    out->max_threads_per_block = 1024;
    out->max_block[0] = out->max_block[1] = 1024;
    out->max_block[2] = 64;
    out->max_grid[0] = INT32_MAX; /* 2^31 - 1 */
    out->max_grid[1] = out->max_grid[2] = 65535;
    out->smem_static_max_bytes = 48 * KIB;
    out->regs_per_thread_max = 255;
    out->smem_optin_max_bytes = -1;
    out->regs_per_block_max = -1;
}

int gb_arch_limits_for(const char *arch, gb_arch_limits *out, gb_err *err)
{
    gb_arch parsed;
    memset(out, 0, sizeof *out);
    int rc = gb_arch_parse(arch, &parsed, err);
    if (rc) return rc;
    snprintf(out->arch, sizeof out->arch, "%s", arch);
    out->cc = parsed.cc;
    common_limits(out);
    for (size_t i = 0; i < sizeof cc_rows / sizeof cc_rows[0]; i++) {
        if (cc_rows[i].cc != parsed.cc) continue;
        out->smem_optin_max_bytes = (int64_t)cc_rows[i].smem_optin_kib * KIB;
        out->regs_per_block_max = (int64_t)cc_rows[i].regs_per_block_k * 1024;
    }
    return GB_OK;
}

void gb_arch_limits_from_device(const gb_device_info *info, gb_arch_limits *out)
{
    if (gb_arch_limits_for(info->arch, out, NULL) != GB_OK) {
        memset(out, 0, sizeof *out);
        snprintf(out->arch, sizeof out->arch, "sm_%d%d", info->cc_major, info->cc_minor);
        out->cc = info->cc_major * 10 + info->cc_minor;
        common_limits(out);
    }
    if (info->smem_per_block_optin > 0) out->smem_optin_max_bytes = info->smem_per_block_optin;
    if (info->max_threads_per_block > 0) out->max_threads_per_block = info->max_threads_per_block;
}

/* ---- the check ------------------------------------------------------------- */

/* "40 KiB", "40.5 KiB", "512 B" */
static const char *size_text(int64_t bytes, char buf[32])
{
    if (bytes < KIB)
        snprintf(buf, 32, "%lld B", (long long)bytes);
    else if (bytes % KIB == 0)
        snprintf(buf, 32, "%lld KiB", (long long)(bytes / KIB));
    else
        snprintf(buf, 32, "%.1f KiB", (double)bytes / KIB);
    return buf;
}

typedef struct reasons {
    char *out;
    size_t out_bytes;
    bool fits;
} reasons;

static void refuse(reasons *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void refuse(reasons *r, const char *fmt, ...)
{
    if (r->out && r->out_bytes > 0) {
        char text[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(text, sizeof text, fmt, ap);
        va_end(ap);
        append(r->out, r->out_bytes, "%s%s", r->fits ? "" : "; ", text);
    }
    r->fits = false;
}

static void check_dims(reasons *r, const gb_arch_limits *lim, const char *what,
                       const uint32_t dims[3], const int64_t max[3])
{
    static const char axes[] = "xyz";
    if (!dims[0] || !dims[1] || !dims[2]) {
        refuse(r, "%s %ux%ux%u has a zero dimension", what, dims[0], dims[1], dims[2]);
        return;
    }
    for (int i = 0; i < 3; i++)
        if ((int64_t)dims[i] > max[i])
            refuse(r, "%s %c is %u; %s allows %lld", what, axes[i], dims[i], lim->arch,
                   (long long)max[i]);
}

/* Threads per block; the dimensions are at most 2^32 - 1 each, so the product
 * fits in 64 bits only when checked. */
static int64_t block_threads(const gb_launch *l)
{
    int64_t n = 1;
    for (int i = 0; i < 3; i++) {
        if (l->block[i] && n > INT64_MAX / l->block[i]) return INT64_MAX;
        n *= l->block[i];
    }
    return n;
}

/* Thread block clusters came with sm_90; 8 blocks is the portable size, 16 the
 * most with the non-portable opt-in the engine does. The grid must be whole
 * clusters. */
#define GB_CLUSTER_MAX_BLOCKS 16

static void check_cluster(reasons *r, const gb_arch_limits *lim, const gb_launch *l)
{
    uint64_t blocks = gb_launch_cluster_blocks(l);
    if (blocks <= 1) return;
    if (lim->cc < 90) {
        refuse(r,
               "uses a cluster of %llu blocks; %s has no thread block clusters (sm_90 and newer)",
               (unsigned long long)blocks, lim->arch);
        return;
    }
    uint32_t c[3];
    for (int i = 0; i < 3; i++)
        c[i] = l->cluster[i] ? l->cluster[i] : 1;
    if (blocks > GB_CLUSTER_MAX_BLOCKS)
        refuse(r, "uses a cluster of %llu blocks (%ux%ux%u); %s allows %d",
               (unsigned long long)blocks, c[0], c[1], c[2], lim->arch, GB_CLUSTER_MAX_BLOCKS);
    static const char axes[] = "xyz";
    for (int i = 0; i < 3; i++)
        if (l->grid[i] % c[i])
            refuse(r, "grid %c is %u, not a multiple of the cluster's %u", axes[i], l->grid[i],
                   c[i]);
}

static void check_launch(reasons *r, const gb_arch_limits *lim, const gb_launch *l)
{
    check_cluster(r, lim, l);
    int64_t threads = block_threads(l);
    if (threads > lim->max_threads_per_block)
        refuse(r, "needs %lld threads per block (block %ux%ux%u); %s allows %lld",
               (long long)threads, l->block[0], l->block[1], l->block[2], lim->arch,
               (long long)lim->max_threads_per_block);
    else /* a block within the thread limit can still be too long in one dimension */
        check_dims(r, lim, "block", l->block, lim->max_block);
    check_dims(r, lim, "grid", l->grid, lim->max_grid);
}

/* Registers are given out per warp, so a block holds threads rounded up to whole
 * warps. The driver also rounds each warp's share up to its allocation unit; that
 * is left out, so this check never refuses a block that would launch. */
static void check_registers(reasons *r, const gb_arch_limits *lim, const gb_launch *l,
                            const gb_resources *res)
{
    if (res->registers > lim->regs_per_thread_max)
        refuse(r, "uses %d registers per thread; %s allows %lld", res->registers, lim->arch,
               (long long)lim->regs_per_thread_max);
    if (!l || res->registers <= 0 || lim->regs_per_block_max < 0) return;
    int64_t threads = block_threads(l);
    if (threads > lim->max_threads_per_block) return; /* already refused */
    int64_t held = (threads + 31) / 32 * 32, regs = held * res->registers;
    if (regs > lim->regs_per_block_max)
        refuse(r, "uses %lld registers per block (%d per thread x %lld threads%s); %s allows %lld",
               (long long)regs, res->registers, (long long)held,
               held > threads ? ", in whole warps" : "", lim->arch,
               (long long)lim->regs_per_block_max);
}

static void check_smem(reasons *r, const gb_arch_limits *lim, const gb_launch *l,
                       const gb_resources *res)
{
    char a[32], b[32], c[32], d[32];
    int64_t fixed = res && res->smem_static_bytes > 0 ? res->smem_static_bytes : 0;
    int64_t dynamic = l ? l->smem_bytes : 0;
    if (fixed > lim->smem_static_max_bytes)
        refuse(r, "uses %s of static shared memory; %s allows %s (more must be dynamic)",
               size_text(fixed, a), lim->arch, size_text(lim->smem_static_max_bytes, b));
    if (lim->smem_optin_max_bytes < 0 || fixed + dynamic <= lim->smem_optin_max_bytes) return;
    if (fixed && dynamic)
        refuse(r, "uses %s of shared memory (static %s + dynamic %s); %s allows %s with opt-in",
               size_text(fixed + dynamic, a), size_text(fixed, b), size_text(dynamic, c), lim->arch,
               size_text(lim->smem_optin_max_bytes, d));
    else
        refuse(r, "uses %s of %s shared memory; %s allows %s with opt-in",
               size_text(fixed + dynamic, a), fixed ? "static" : "dynamic", lim->arch,
               size_text(lim->smem_optin_max_bytes, b));
}

bool gb_arch_check(const gb_arch_limits *lim, const gb_launch *launch, const gb_resources *res,
                   char *reason, size_t reason_bytes)
{
    reasons r = {reason, reason_bytes, true};
    if (reason && reason_bytes) reason[0] = '\0';
    if (launch) check_launch(&r, lim, launch);
    if (res) check_registers(&r, lim, launch, res);
    check_smem(&r, lim, launch, res);
    return r.fits;
}
