/*
 * The run's context as wire views (report/outputs/json_parts.h). The device is
 * written for a reader, not as gb_device_info holds it: the compute capability as
 * "9.0", clocks in MHz, and the driver's version, on the context, as "13.0"; those
 * are virtual fields, computed on writing and taken apart on reading. A figure
 * that is 0 for unknown is null.
 */
#include "report/outputs/json_parts.h"

#include "engine/wire_types.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the device ------------------------------------------------------------- */

static const gb_device_info *device_of(const void *obj)
{
    return obj;
}

static void format(gb_wire_value *v, int major, int minor)
{
    snprintf(v->text.buf, sizeof v->text.buf, "%d.%d", major, minor);
    v->text.string = v->text.buf;
}

static void get_cc(const void *obj, const void *ctx, void *out)
{
    (void)ctx;
    format(out, device_of(obj)->cc_major, device_of(obj)->cc_minor);
}

static int set_cc(void *obj, void *ctx, void *value, const char *path, gb_err *err)
{
    (void)ctx;
    gb_device_info *d = obj;
    char *text = *(char **)value, extra;
    int n = sscanf(text, "%d.%d%c", &d->cc_major, &d->cc_minor, &extra);
    free(text);
    if (n != 2 || d->cc_major < 0 || d->cc_minor < 0)
        return gb_err_set(err, GB_EINVAL, "%s: expected a compute capability like \"9.0\"", path);
    return GB_OK;
}

/* The kHz the device info keeps, written in MHz. */
static int khz_of(void *value)
{
    return (int)(*(double *)value * 1e3 + 0.5);
}

static void get_sm_clock(const void *obj, const void *ctx, void *out)
{
    (void)ctx;
    *(double *)out = device_of(obj)->sm_clock_khz / 1e3;
}

static int set_sm_clock(void *obj, void *ctx, void *value, const char *path, gb_err *err)
{
    (void)ctx, (void)path, (void)err;
    ((gb_device_info *)obj)->sm_clock_khz = khz_of(value);
    return GB_OK;
}

static void get_mem_clock(const void *obj, const void *ctx, void *out)
{
    (void)ctx;
    *(double *)out = device_of(obj)->mem_clock_khz / 1e3;
}

static int set_mem_clock(void *obj, void *ctx, void *value, const char *path, gb_err *err)
{
    (void)ctx, (void)path, (void)err;
    ((gb_device_info *)obj)->mem_clock_khz = khz_of(value);
    return GB_OK;
}

/* ---- the context --------------------------------------------------------------- */

static const gb_run_context *context_of(const void *obj)
{
    return obj;
}

static void get_build_type(const void *obj, const void *ctx, void *out)
{
    (void)obj, (void)ctx;
    *(const char **)out = "release";
}

static void get_schema_version(const void *obj, const void *ctx, void *out)
{
    (void)obj, (void)ctx;
    *(int *)out = GB_REPORT_SCHEMA_VERSION;
}

/* The driver's version as CUDA numbers it (13000), written "13.0"; null without a
 * device or a version. */
static void get_driver(const void *obj, const void *ctx, void *out)
{
    (void)ctx;
    const gb_run_context *c = context_of(obj);
    int v = c->has_device ? c->device.driver_version : 0;
    if (v > 0) format(out, v / 1000, v % 1000 / 10);
}

static int set_driver(void *obj, void *ctx, void *value, const char *path, gb_err *err)
{
    (void)ctx;
    char *text = *(char **)value, extra;
    int major, minor;
    if (!text) return GB_OK; /* null: unknown, 0 */
    int n = sscanf(text, "%d.%d%c", &major, &minor, &extra);
    free(text);
    if (n != 2 || major < 0 || minor < 0 || minor > 99 || major > 1000000)
        return gb_err_set(err, GB_EINVAL, "%s: expected a version like \"13.0\"", path);
    ((gb_run_context *)obj)->device.driver_version = major * 1000 + minor * 10;
    return GB_OK;
}

/* What the file does not repeat: the device's peak bandwidth and target are the
 * roofs' and the context's; without a device, nothing of one (its driver). */
static int context_finish(void *obj, const char *path, gb_err *err)
{
    (void)path, (void)err;
    gb_run_context *c = obj;
    if (!c->has_device) {
        memset(&c->device, 0, sizeof c->device);
        return GB_OK;
    }
    c->device.peak_gbps = c->roofs.peak_gbps;
    memcpy(c->device.arch, c->arch, sizeof c->arch);
    return GB_OK;
}

static int version_finish(void *obj, const char *path, gb_err *err)
{
    int version = context_of(obj)->schema_version;
    if (version == GB_REPORT_SCHEMA_VERSION) return GB_OK;
    return gb_err_set(err, GB_EINVAL,
                      "%s.schema_version: version %d is not one this gpubench reads (%d)", path,
                      version, GB_REPORT_SCHEMA_VERSION);
}

/* ---- the views ------------------------------------------------------------------- */

#define KNOWN    .flags = GB_WIRE_NULL_ZERO
#define COUNT    GB_WIRE_RANGE(0, INT_MAX)
#define BYTES    GB_WIRE_RANGE(0, INT64_MAX)
#define MHZ      GB_WIRE_RANGE(0, 2e6)
#define PER_MATH .arity = GB_WIRE_FIXED, .keys = &gb_wire_enum_math, KNOWN

#define DEVICE_VIEW(X, V)                                                                          \
    X(name, CHARS, "name")                                                                         \
    V(STRING, "cc", .get = get_cc, .set = set_cc)                                                  \
    X(sms, INT, "sms", COUNT)                                                                      \
    V(DOUBLE, "sm_clock_mhz", .get = get_sm_clock, .set = set_sm_clock, MHZ)                       \
    V(DOUBLE, "mem_clock_mhz", .get = get_mem_clock, .set = set_mem_clock, MHZ)                    \
    X(bus_width_bits, INT, "bus_width_bits", COUNT)                                                \
    X(l2_bytes, INT64, "l2_bytes", BYTES)                                                          \
    X(mem_bytes, INT64, "mem_bytes", BYTES)                                                        \
    X(clock_source, CHARS, "clock_source", KNOWN)                                                  \
    /* files from before CUPTI timing lack the timer */                                            \
    X(timer, CHARS, "timer", .flags = GB_WIRE_NULL_ZERO | GB_WIRE_OPTIONAL)                        \
    X(timer_note, CHARS, "timer_note", .flags = GB_WIRE_NULL_ZERO | GB_WIRE_OPTIONAL)              \
    X(uuid, CHARS, "uuid", KNOWN)                                                                  \
    X(pci_bus_id, CHARS, "pci_bus_id", KNOWN)

#define ROOFS_VIEW(X)                                                                              \
    X(peak_gbps, DOUBLE, "peak_gbps", KNOWN)                                                       \
    X(peak_tflops, DOUBLE, "peak_tflops", .group = "peak_tflops", PER_MATH)                        \
    X(ceiling_gbps, DOUBLE, "ceiling_gbps", KNOWN)                                                 \
    X(ceiling_tflops, DOUBLE, "ceiling_tflops", .group = "ceiling_tflops", PER_MATH)

#define CONTEXT_VIEW(X, V)                                                                         \
    X(date, STRING, "date", KNOWN)                                                                 \
    X(host_name, STRING, "host_name", KNOWN)                                                       \
    X(executable, STRING, "executable", KNOWN)                                                     \
    X(num_cpus, INT, "num_cpus", COUNT)                                                            \
    V(STRING, "library_build_type", .get = get_build_type)                                         \
    X(engine_version, STRING, "gpubench_version", KNOWN)                                           \
    V(INT, "schema_version", .get = get_schema_version)                                            \
    X(command_line, STRING, "command_line", KNOWN)                                                 \
    X(script, STRING, "script", KNOWN)                                                             \
    X(nvrtc_version, CHARS, "nvrtc_version", KNOWN)                                                \
    V(STRING, "driver_version", .get = get_driver, .set = set_driver, KNOWN)                       \
    X(arch, CHARS, "arch", KNOWN)                                                                  \
    X(compile_only, BOOL, "compile_only")                                                          \
    X(device, STRUCT, "device", .type = &gb_wire_report_device, .flags = GB_WIRE_NULLABLE,         \
      .present = offsetof(gb_run_context, has_device))                                             \
    X(roofs, STRUCT, "roofs", .type = &gb_wire_report_roofs)

#define VERSION_VIEW(X) X(schema_version, INT, "schema_version", COUNT)

#define GB_WIRE_T gb_device_info
GB_WIRE_VIEW_TABLE(gb_wire_report_device, "device", DEVICE_VIEW, NULL)
#undef GB_WIRE_T
#define GB_WIRE_T gb_roofs
GB_WIRE_TABLE(gb_wire_report_roofs, "roofs", ROOFS_VIEW, NULL)
#undef GB_WIRE_T
#define GB_WIRE_T gb_run_context
GB_WIRE_VIEW_TABLE(gb_wire_report_context, "context", CONTEXT_VIEW, context_finish)
GB_WIRE_TABLE(gb_wire_report_version, "context", VERSION_VIEW, version_finish)
#undef GB_WIRE_T

json_t *gb_json_device(const gb_device_info *d)
{
    return gb_wire_encode(&gb_wire_report_device, d);
}

json_t *gb_json_roofs(const gb_roofs *r)
{
    return gb_wire_encode(&gb_wire_report_roofs, r);
}

json_t *gb_json_context(const gb_run_context *c)
{
    return gb_wire_encode(&gb_wire_report_context, c);
}
