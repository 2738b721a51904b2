/*
 * The run's JSON (report/outputs/json_out.c) apart from its rows: the run's
 * context (docs/report-json.md), which the HTML page carries too, the device and
 * its roofs in it, which `gpubench info --json` prints, and a compile-only call's
 * rows, which the HTML page shows too. Each is a wire view (base/wire.h) that the
 * writers encode and report/outputs/json_load.c reads back:
 * report/outputs/json_context.c and json_compiles.c list their fields.
 */
#ifndef GB_REPORT_OUTPUTS_JSON_PARTS_H
#define GB_REPORT_OUTPUTS_JSON_PARTS_H

#include "base/wire.h"
#include "engine/device.h"
#include "engine/roofs.h"
#include "report/result.h"

#include <jansson.h>

/* gb_run_context as "context": the device's figures as a reader wants them (cc
 * "9.0", clocks in MHz, the driver "13.0"), the roofs per math. Reading it fills
 * the device's peak_gbps and arch from the roofs and the context. */
extern const gb_wire_type gb_wire_report_context;
/* gb_run_context: only "schema_version", read before the rest so that a file of
 * another version is refused as such. */
extern const gb_wire_type gb_wire_report_version;
extern const gb_wire_type gb_wire_report_device; /* gb_device_info */
extern const gb_wire_type gb_wire_report_roofs;  /* gb_roofs */

/* gb_report_call: a compile-only call, its rows one gb_wire_report_compile_row
 * each; gb_report: the document's "compiles" list of them. */
extern const gb_wire_type gb_wire_report_call;
extern const gb_wire_type gb_wire_report_compile_row;
extern const gb_wire_type gb_wire_report_compiles;

/* What reading the compile-only calls needs (their views' ctx). */
typedef struct gb_json_calls_ctx {
    const gb_report *report; /* the entries read so far, which a call's families are */
    char status[16];         /* the row being read: its status as the file says it */
} gb_json_calls_ctx;

/* New objects (NULL when out of memory); unknown figures are null. */
json_t *gb_json_device(const gb_device_info *d);
json_t *gb_json_roofs(const gb_roofs *r);
json_t *gb_json_context(const gb_run_context *c);

/* A compile-only gb.tune call as the run's "compiles" list holds it: its kernel,
 * target, the families (entries) it made from first_family on, NVRTC's time and
 * threads, and a row per distinct compile (docs/report-json.md). */
json_t *gb_json_compile_call(const char *kernel, const gb_tune_result *call, int first_family);

#endif
