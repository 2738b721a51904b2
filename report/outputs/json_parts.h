/*
 * Pieces of the run's JSON (report/outputs/json_out.c) that other commands write
 * the same way: the device and its roofs, as a run's context holds them
 * (docs/report-json.md), and as `gpubench info --json` prints them.
 */
#ifndef GB_REPORT_OUTPUTS_JSON_PARTS_H
#define GB_REPORT_OUTPUTS_JSON_PARTS_H

#include "engine/device.h"
#include "engine/roofs.h"

#include <jansson.h>

/* New objects (NULL when out of memory); unknown figures are null. */
json_t *gb_json_device(const gb_device_info *d);
json_t *gb_json_roofs(const gb_roofs *r);

#endif
