/* gpubench info [--device N] [--cache DIR] [--measure] [--json]: the GPU as
 * gpubench sees it, and the roofs the reports set results against: theoretical
 * peaks (engine/roofs.h) and measured ceilings (engine/ceilings.h), measured once
 * per GPU and kept in the cache. */
#include "base/json.h"
#include "base/wire.h"
#include "cache/ceilings.h"
#include "cli/args.h"
#include "cli/cli.h"
#include "cli/common.h"
#include "exec/exec.h"
#include "exec/lease.h"
#include "engine/nvrtc.h"
#include "engine/roofs.h"
#include "exec/worker.h"
#include "report/outputs/json_parts.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char USAGE[] =
    "usage: %s info [--device N] [--cache DIR] [--measure] [--json]\n"
    "\n"
    "The GPU as gpubench sees it: its name, compute capability and compile target,\n"
    "SMs, clocks, memory and L2, the driver and NVRTC, and its theoretical peaks:\n"
    "the memory bandwidth (memory clock x bus width, double data rate) and the dense\n"
    "rate of each kind of math (SMs x operations per clock per SM of the\n"
    "architecture x peak SM clock). And its measured ceilings: the bandwidth of a\n"
    "device-to-device copy (bytes read plus written, arrays 8x the L2, the best of\n"
    "the driver's copy and gpubench's copy kernel) and cuBLAS's GEMM rate in fp32,\n"
    "tf32, fp16, bf16 and fp8. They are measured once per GPU (a few seconds), here\n"
    "or by the first gpubench-tune run that times something, and kept in the cache.\n"
    "Peaks and ceilings are the roofs of the reports' %% peak and %% ceil columns and\n"
    "roofline (docs/reports.md).\n"
    "\n"
    "options:\n"
    "  --device N   the GPU (default 0)\n"
    "  --cache DIR  the cache holding the ceilings (default $GPUBENCH_CACHE, else\n"
    "               $XDG_CACHE_HOME/gpubench, else ~/.cache/gpubench)\n"
    "  --measure    measure the ceilings again, and store them\n"
    "  --json       machine-readable output: {\"device\", \"driver_version\",\n"
    "               \"nvrtc_version\", \"roofs\", \"ceilings\"}, the names of a run's\n"
    "               JSON context\n"
    "  -h, --help   this text\n"
    "\n"
    "Measuring takes the GPU's lease, as tuning does: while another gpubench process\n"
    "holds it, info says so and exits 5.\n"
    "\n"
    "exit status: 0 done; 2 usage; 3 no usable GPU; 4 the cache cannot be used;\n"
    "5 the GPU is busy.\n";

typedef struct info_args {
    int device;
    bool json;
    bool measure;
    const char *cache_dir;
} info_args;

/* Returns -1 to go on, or an exit status. */
static int parse_args(int argc, char **argv, info_args *a)
{
    static const struct option options[] = {
        {"device", required_argument, NULL, 'd'}, {"json", no_argument, NULL, 'j'},
        {"cache", required_argument, NULL, 'c'},  {"measure", no_argument, NULL, 'm'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0}};
    optind = 1;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
        if (c == '?') return gb_cli_bad_option(argv[0], "info", argv, options);
        char *end = NULL;
        if (c == 'd') {
            long v = strtol(optarg, &end, 10);
            if (!*optarg || *end || v < 0 || v > 1024) {
                fprintf(stderr, "%s info: --device needs a GPU number, got '%s'\n", argv[0],
                        optarg);
                return 2;
            }
            a->device = (int)v;
        } else if (c == 'j') {
            a->json = true;
        } else if (c == 'c') {
            a->cache_dir = optarg;
        } else if (c == 'm') {
            a->measure = true;
        } else if (c == 'h') {
            printf(USAGE, argv[0]);
            return 0;
        } else {
            fprintf(stderr, USAGE, argv[0]);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "%s info: unexpected argument '%s'\n", argv[0], argv[optind]);
        return 2;
    }
    return -1;
}

/* The device and its ceilings, asked of a GPU worker (this program started
 * again), as tuning does: from the cache, else measured and stored. */
static int query(const info_args *a, gb_device_info *out, gb_ceilings *ceilings, gb_err *err)
{
    char exe[4096], dir[4096];
    gb_exec *exec = NULL;
    gb_cache *cache = NULL;
    int rc = gb_child_self_exe(exe, sizeof exe, err);
    gb_worker_opts opts = {.exe = exe, .ordinal = a->device};
    if (rc == GB_OK) rc = gb_exec_worker(&opts, &exec, err);
    if (rc == GB_OK) rc = gb_exec_device(exec, out, err);
    if (rc == GB_OK && !a->cache_dir) rc = gb_cache_default_dir(dir, sizeof dir, err);
    if (rc == GB_OK) rc = gb_cache_open(a->cache_dir ? a->cache_dir : dir, 0, &cache, err);
    if (rc == GB_OK && !a->measure) rc = gb_cache_get_ceilings(cache, out, ceilings, err);
    gb_lease *lease = NULL;
    if (rc == GB_ENOTFOUND || (rc == GB_OK && a->measure)) {
        char name[320];
        gb_lease_name(out, name, sizeof name);
        rc = gb_lease_acquire_as(name, 0, "measuring the ceilings", NULL, &lease, err);
        if (rc == GB_EIO || rc == GB_EINVAL) rc = GB_OK; /* no lease directory: measure anyway */
        if (rc == GB_OK && !a->json)
            fprintf(stderr, "measuring the ceilings of %s...\n", out->name);
        if (rc == GB_OK) rc = gb_exec_ceilings(exec, ceilings, err);
        if (rc == GB_OK) rc = gb_cache_put_ceilings(cache, out, ceilings, err);
    }
    gb_lease_release(lease);
    gb_cache_close(cache);
    gb_exec_destroy(exec);
    return rc;
}

static void print_ceilings(const gb_ceilings *c)
{
    char size[32];
    gb_format_bytes((double)c->copy_bytes, size, sizeof size);
    printf("measured ceilings (%s):\n  copy bandwidth %.0f GB/s (device to device, %s arrays, "
           "read + written%s%s)\n",
           c->measured_at, c->copy_gbps, size, c->copy_how[0] ? ", by " : "", c->copy_how);
    static const gb_math gemms[] = {GB_MATH_FP32, GB_MATH_TF32, GB_MATH_FP16, GB_MATH_BF16,
                                    GB_MATH_FP8};
    bool any = false;
    for (size_t i = 0; i < sizeof gemms / sizeof *gemms; i++) {
        double t = gb_ceilings_tflops(c, gemms[i]);
        if (!(t > 0)) continue;
        printf("%s %s %.1f", any ? "" : "  cuBLAS GEMM", gb_math_name(gemms[i]), t);
        any = true;
    }
    if (any) printf(" TFLOP/s (%d cubed)\n", c->gemm_size);
    if (c->gemm_note[0]) printf("  %s\n", c->gemm_note);
}

static void print_text(const gb_device_info *d, const gb_roofs *roofs, const char *nvrtc)
{
    printf("%s", d->name);
    if (d->uuid[0]) printf("  (%s%s%s)", d->uuid, d->pci_bus_id[0] ? ", PCI " : "", d->pci_bus_id);
    printf("\n  compute capability %d.%d (compiles for %s), %d SMs, %d MHz peak SM clock\n",
           d->cc_major, d->cc_minor, d->arch, d->sms, d->sm_clock_khz / 1000);
    printf("  memory %.1f GiB, %d MHz, %d-bit bus; L2 %.0f MiB\n", d->mem_bytes / 1073741824.0,
           d->mem_clock_khz / 1000, d->bus_width_bits, d->l2_bytes / 1048576.0);
    printf("  shared memory %d KiB per block (opt-in), %d KiB per SM; %d registers per SM\n",
           d->smem_per_block_optin / 1024, d->smem_per_sm / 1024, d->regs_per_sm);
    printf("  driver %d.%d, NVRTC %s, per-sample clocks from %s\n", d->driver_version / 1000,
           d->driver_version % 1000 / 10, nvrtc, d->clock_source);
    printf("theoretical peaks:\n  memory bandwidth %.0f GB/s\n ", roofs->peak_gbps);
    bool any = false;
    for (int m = 0; m < GB_MATH_COUNT; m++) {
        if (!(roofs->peak_tflops[m] > 0)) continue;
        printf(" %s %.1f", gb_math_name((gb_math)m), roofs->peak_tflops[m]);
        any = true;
    }
    if (any)
        fputs(" TFLOP/s (int8: TOP/s), dense\n", stdout);
    else
        fputs(" (no compute peaks: this architecture's rates are not in gpubench's table)\n",
              stdout);
}

static int print_json(const gb_device_info *d, const gb_roofs *roofs, const gb_ceilings *c,
                      const char *nvrtc)
{
    char driver[32];
    snprintf(driver, sizeof driver, "%d.%d", d->driver_version / 1000,
             d->driver_version % 1000 / 10);
    json_t *doc = json_object();
    if (!doc || gb_json_set(doc, "device", gb_json_device(d)) ||
        gb_json_set(doc, "driver_version", json_string(driver)) ||
        gb_json_set(doc, "nvrtc_version", json_string(nvrtc)) ||
        gb_json_set(doc, "roofs", gb_json_roofs(roofs)) ||
        gb_json_set(doc, "ceilings", gb_wire_encode(&gb_wire_ceilings, c))) {
        json_decref(doc);
        fprintf(stderr, "gpubench info: out of memory\n");
        return 2;
    }
    char *text = gb_json_dump(doc, true);
    json_decref(doc);
    if (!text) return 2;
    printf("%s\n", text);
    free(text);
    return 0;
}

/* --json when there is nothing to describe: the same document with no device,
 * roofs or ceilings, and why, so a script that reads it learns the reason. */
static void print_json_error(const gb_err *err, const char *nvrtc)
{
    json_t *doc = json_object();
    if (!doc || gb_json_set(doc, "device", json_null()) ||
        gb_json_set(doc, "nvrtc_version", json_string(nvrtc)) ||
        gb_json_set(doc, "error", json_string(err->msg))) {
        json_decref(doc);
        return;
    }
    char *text = gb_json_dump(doc, true);
    json_decref(doc);
    if (text) printf("%s\n", text);
    free(text);
}

int gb_cli_info(int argc, char **argv)
{
    info_args a = {0};
    int status = parse_args(argc, argv, &a);
    if (status >= 0) return status;
    gb_device_info device;
    gb_ceilings ceilings;
    gb_err err = {0};
    if (query(&a, &device, &ceilings, &err) != GB_OK) {
        fprintf(stderr, "%s info: %s\n", argv[0], err.msg);
        if (a.json) {
            char nvrtc[16];
            gb_nvrtc_version(nvrtc);
            print_json_error(&err, nvrtc);
        }
        if (err.code == GB_ENODRIVER || err.code == GB_ENOGPU) return 3;
        if (err.code == GB_EBUSY) return 5;
        return err.code == GB_ECACHE || err.code == GB_EIO ? 4 : gb_cli_exit_status(err.code);
    }
    gb_roofs roofs;
    gb_roofs_peaks(&device, &roofs);
    gb_ceilings_to_roofs(&ceilings, &roofs);
    char nvrtc[16];
    gb_nvrtc_version(nvrtc);
    if (a.json) return print_json(&device, &roofs, &ceilings, nvrtc);
    print_text(&device, &roofs, nvrtc);
    print_ceilings(&ceilings);
    return 0;
}
