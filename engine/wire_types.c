/* The engine's wire tables, made from the X-macros next to each struct. */
#include "engine/wire_types.h"

#include "engine/device.h"
#include "engine/trial.h"
#include "engine/measure.h"
#include "engine/roofs.h"
#include "engine/spec.h"
#include "engine/stats.h"

#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>

/* ---- enums -------------------------------------------------------------- */

static const char *mode_name(int v)
{
    return gb_measure_mode_name((gb_measure_mode)v);
}

static const char *timer_name(int v)
{
    return gb_timer_name((gb_timer)v);
}

static const char *status_name(int v)
{
    return gb_trial_status_name((gb_trial_status)v);
}

static const char *dtype_name(int v)
{
    return gb_dtype_name((gb_dtype)v);
}

static const char *init_name(int v)
{
    return gb_init_name((gb_init)v);
}

static const char *arg_kind_name(int v)
{
    static const char *const names[] = {"tensor", "scalar", "tensormap"};
    return v >= 0 && v <= GB_ARG_TENSORMAP ? names[v] : NULL;
}

static const char *swizzle_name(int v)
{
    return gb_swizzle_name((gb_swizzle)v);
}

static const char *l2_promotion_name(int v)
{
    return gb_l2_promotion_name((gb_l2_promotion)v);
}

static const char *math_name(int v)
{
    return gb_math_name((gb_math)v);
}

static const char *oob_fill_name(int v)
{
    return gb_oob_fill_name((gb_oob_fill)v);
}

const gb_wire_enum gb_wire_enum_mode = {GB_MODE_HOT + 1, mode_name};
const gb_wire_enum gb_wire_enum_timer = {GB_TIMER_AUTO + 1, timer_name};
const gb_wire_enum gb_wire_enum_trial_status = {GB_TRIAL_STATUS_COUNT, status_name};
const gb_wire_enum gb_wire_enum_dtype = {GB_DT_COUNT, dtype_name};
const gb_wire_enum gb_wire_enum_init = {GB_INIT_VALUE + 1, init_name};
const gb_wire_enum gb_wire_enum_arg_kind = {GB_ARG_TENSORMAP + 1, arg_kind_name};
const gb_wire_enum gb_wire_enum_swizzle = {GB_SWIZZLE_COUNT, swizzle_name};
const gb_wire_enum gb_wire_enum_l2_promotion = {GB_L2_PROMOTION_COUNT, l2_promotion_name};
const gb_wire_enum gb_wire_enum_oob_fill = {GB_OOB_COUNT, oob_fill_name};
const gb_wire_enum gb_wire_enum_math = {GB_MATH_COUNT, math_name};

/* ---- checks between fields ---------------------------------------------- */

bool gb_wire_trial_ok(const void *result)
{
    return ((const gb_trial_result *)result)->status == GB_TRIAL_OK;
}

static int check_result_finish(void *obj, const char *path, gb_err *err)
{
    const gb_check_result *c = obj;
    if (c->n_bad > c->n_compared)
        return gb_err_set(err, GB_EINVAL, "%s: n_bad (%lld) is more than n_compared (%lld)", path,
                          (long long)c->n_bad, (long long)c->n_compared);
    return GB_OK;
}

static int arg_finish(void *obj, const char *path, gb_err *err)
{
    const gb_arg *a = obj;
    if (a->kind == GB_ARG_TENSOR && a->n_dims < 1)
        return gb_err_set(err, GB_EINVAL, "%s.dims: expected 1 to %d sizes for a tensor", path,
                          GB_MAX_DIMS);
    if (a->kind == GB_ARG_SCALAR && a->n_dims != 0)
        return gb_err_set(err, GB_EINVAL, "%s.dims: expected none for a scalar", path);
    if (a->kind == GB_ARG_TENSORMAP && (a->n_box < 1 || a->n_box > GB_TENSORMAP_MAX_RANK))
        return gb_err_set(err, GB_EINVAL, "%s.box: expected 1 to %d sizes for a tensormap", path,
                          GB_TENSORMAP_MAX_RANK);
    for (int k = 0; k < GB_SPECIAL_COUNT; k++)
        for (int i = 0; i < a->n_planted[k]; i++)
            if (a->kind != GB_ARG_TENSOR || a->planted[k][i] >= gb_arg_elements(a))
                return gb_err_set(err, GB_EINVAL, "%s: planted element %lld is not in the tensor",
                                  path, (long long)a->planted[k][i]);
    return GB_OK;
}

static int measure_opts_finish(void *obj, const char *path, gb_err *err)
{
    int rc = gb_measure_check(obj, err);
    return rc ? gb_err_prefix(err, "%s", path) : GB_OK;
}

/* The statistics and what else the samples imply are computed here, not read. */
static int measurement_finish(void *obj, const char *path, gb_err *err)
{
    int rc = gb_measurement_summarise(obj);
    return rc ? gb_err_set(err, rc, "%s: %s", path, gb_strerror(rc)) : GB_OK;
}

static int trial_result_finish(void *obj, const char *path, gb_err *err)
{
    gb_trial_result *r = obj;
    if (r->status == GB_TRIAL_OK && r->measurement.n_samples < 1)
        return gb_err_set(err, GB_EINVAL, "%s.measurement: missing (an ok trial has one)", path);
    if (r->status != GB_TRIAL_OK) gb_measurement_free(&r->measurement); /* not ours to keep */
    return GB_OK;
}

/* ---- tables ------------------------------------------------------------- */

#define GB_WIRE_T gb_stats
GB_WIRE_TABLE(gb_wire_stats, "stats", GB_STATS_WIRE, NULL)
#undef GB_WIRE_T
#define GB_WIRE_T gb_check_result
GB_WIRE_TABLE(gb_wire_check_result, "check_result", GB_CHECK_RESULT_WIRE, check_result_finish)
#undef GB_WIRE_T
#define GB_WIRE_T gb_check_spec
GB_WIRE_TABLE(gb_wire_check_spec, "check_spec", GB_CHECK_SPEC_WIRE, NULL)
#undef GB_WIRE_T
#define GB_WIRE_T gb_launch
GB_WIRE_TABLE(gb_wire_launch, "launch", GB_LAUNCH_WIRE, NULL)
#undef GB_WIRE_T
#define GB_WIRE_T gb_arg
GB_WIRE_TABLE(gb_wire_arg, "arg", GB_ARG_WIRE, arg_finish)
#undef GB_WIRE_T
#define GB_WIRE_T gb_measure_opts
GB_WIRE_TABLE(gb_wire_measure_opts, "measure_opts", GB_MEASURE_OPTS_WIRE, measure_opts_finish)
#undef GB_WIRE_T
#define GB_WIRE_T gb_measurement
GB_WIRE_TABLE(gb_wire_measurement, "measurement", GB_MEASUREMENT_WIRE, measurement_finish)
#undef GB_WIRE_T
#define GB_WIRE_T gb_device_info
GB_WIRE_TABLE(gb_wire_device_info, "device", GB_DEVICE_INFO_WIRE, NULL)
#undef GB_WIRE_T
#define GB_WIRE_T gb_trial_phases
GB_WIRE_TABLE(gb_wire_trial_phases, "trial_phases", GB_TRIAL_PHASES_WIRE, NULL)
#undef GB_WIRE_T
#define GB_WIRE_T gb_trial_result
GB_WIRE_TABLE(gb_wire_trial_result, "trial_result", GB_TRIAL_RESULT_WIRE, trial_result_finish)
#undef GB_WIRE_T
