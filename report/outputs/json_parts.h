/*
 * Pieces of the run's JSON (report/outputs/json_out.c) that others write the same
 * way: the run's context (docs/report-json.md), which the HTML page carries too,
 * and the device and its roofs in it, which `gpubench info --json` prints; a
 * compile-only call's rows, which the HTML page shows too.
 */
#ifndef GB_REPORT_OUTPUTS_JSON_PARTS_H
#define GB_REPORT_OUTPUTS_JSON_PARTS_H

#include "engine/device.h"
#include "engine/roofs.h"
#include "report/result.h"

#include <jansson.h>

/* New objects (NULL when out of memory); unknown figures are null. */
json_t *gb_json_device(const gb_device_info *d);
json_t *gb_json_roofs(const gb_roofs *r);
json_t *gb_json_context(const gb_run_context *c);

/* A compile-only gb.tune call as the run's "compiles" list holds it: its kernel,
 * target, the families (entries) it made from first_family on, NVRTC's time and
 * threads, and a row per distinct compile (docs/report-json.md). */
json_t *gb_json_compile_call(const char *kernel, const gb_tune_result *call, int first_family);

#endif
