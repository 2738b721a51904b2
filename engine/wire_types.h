/*
 * The engine's wire types (base/wire.h): the structs that travel between the
 * tuner and its GPU worker, are kept in the cache, and are handed to Lua. Each is
 * described by the X-macro next to its struct (GB_STATS_WIRE in engine/stats.h,
 * ...); engine/wire_types.c turns those into these tables. The worker protocol's
 * own messages are in exec/proto.h, the cache records in cache/record.h.
 */
#ifndef GB_ENGINE_WIRE_TYPES_H
#define GB_ENGINE_WIRE_TYPES_H

#include "base/wire.h"

#include <stdbool.h>

extern const gb_wire_type gb_wire_stats;        /* gb_stats */
extern const gb_wire_type gb_wire_check_result; /* gb_check_result */
extern const gb_wire_type gb_wire_check_spec;   /* gb_check_spec */
extern const gb_wire_type gb_wire_launch;       /* gb_launch */
extern const gb_wire_type gb_wire_arg;          /* gb_arg */
extern const gb_wire_type gb_wire_measure_opts; /* gb_measure_opts */
extern const gb_wire_type gb_wire_measurement;  /* gb_measurement */
extern const gb_wire_type gb_wire_device_info;  /* gb_device_info */
extern const gb_wire_type gb_wire_trial_phases; /* gb_trial_phases */
extern const gb_wire_type gb_wire_trial_result; /* gb_trial_result */

/* The enums, by name. */
extern const gb_wire_enum gb_wire_enum_mode;         /* gb_measure_mode: cold, hot */
extern const gb_wire_enum gb_wire_enum_timer;        /* gb_timer: auto, cupti, events */
extern const gb_wire_enum gb_wire_enum_trial_status; /* gb_trial_status: ok, wrong, ... */
extern const gb_wire_enum gb_wire_enum_dtype;        /* gb_dtype: f32, ... */
extern const gb_wire_enum gb_wire_enum_init;         /* gb_init: randn, ..., value */
extern const gb_wire_enum gb_wire_enum_arg_kind;     /* gb_arg_kind: tensor, scalar, tensormap */
extern const gb_wire_enum gb_wire_enum_swizzle;      /* gb_swizzle: none, 32B, 64B, 128B */
extern const gb_wire_enum gb_wire_enum_l2_promotion; /* gb_l2_promotion: none, 64B, ... */
extern const gb_wire_enum gb_wire_enum_oob_fill;     /* gb_oob_fill: zero, nan */
extern const gb_wire_enum gb_wire_enum_math;         /* gb_math: fp32, fp64, tf32, ... */

/* A gb_trial_result's measurement is on the wire when it is ok. */
bool gb_wire_trial_ok(const void *result);

/* Times in milliseconds: >= 0, or null for NaN. */
#define GB_WIRE_TIME GB_WIRE_RANGE(0, INFINITY), .flags = GB_WIRE_NULL_NAN

#endif
