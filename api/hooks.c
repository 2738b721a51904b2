/* The C API's callbacks as the tuner's hooks (tuner/tune.h), and the argument
 * list an args callback builds (include/gpubench/gpubench.h). */
#include "api/internal.h"

#include "engine/tensormap.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the argument list ------------------------------------------------------- */

/* Refuses argument number n+1 (the first refusal is kept) and returns code. */
static int refuse(gpubench_args *a, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int refuse(gpubench_args *a, int code, const char *fmt, ...)
{
    if (a->first.code) return code;
    int n = snprintf(a->first.msg, sizeof a->first.msg, "argument %d: ", a->n + 1);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->first.msg + n, sizeof a->first.msg - (size_t)n, fmt, ap);
    va_end(ap);
    a->first.code = code;
    return code;
}

/* For messages that quote what the caller gave, which may be NULL. */
static const char *shown(const char *s)
{
    return s ? s : "(null)";
}

/* The next argument's slot, zeroed; NULL when the list is full. */
static gb_arg *next(gpubench_args *a)
{
    if (a->n >= GB_MAX_ARGS) {
        refuse(a, GPUBENCH_EINVAL, "more than 32 arguments");
        return NULL;
    }
    memset(&a->args[a->n], 0, sizeof a->args[a->n]);
    return &a->args[a->n];
}

int gpubench_args_tensor(gpubench_args *a, const char *dtype, int n_dims, const int64_t *dims,
                         const char *init)
{
    gb_arg *t = next(a);
    if (!t) return GPUBENCH_EINVAL;
    t->kind = GB_ARG_TENSOR;
    if (!dtype || gb_dtype_parse(dtype, &t->dtype))
        return refuse(a, GPUBENCH_EINVAL,
                      "a tensor's dtype '%s' is not one of f64, f32, f16, "
                      "bf16, fp8_e4m3, fp8_e5m2, i8, u8, i32, u32, i64",
                      shown(dtype));
    if (!init || gb_init_parse(init, &t->init) || t->init == GB_INIT_VALUE)
        return refuse(a, GPUBENCH_EINVAL,
                      "a tensor's init '%s' is not one of randn, rand, zeros, ones, output",
                      shown(init));
    if (n_dims < 1 || n_dims > GB_MAX_DIMS || !dims)
        return refuse(a, GPUBENCH_EINVAL, "a tensor needs 1 to 8 dims, got %d", n_dims);
    for (int d = 0; d < n_dims; d++) {
        if (dims[d] < 1)
            return refuse(a, GPUBENCH_EINVAL, "a tensor's dims must be positive, got %lld",
                          (long long)dims[d]);
        t->dims[d] = dims[d];
    }
    t->n_dims = n_dims;
    return a->n++;
}

static int scalar(gpubench_args *a, gb_dtype dtype, int64_t i, double x)
{
    gb_arg *s = next(a);
    if (!s) return GPUBENCH_EINVAL;
    s->kind = GB_ARG_SCALAR;
    s->dtype = dtype;
    s->int_value = i;
    s->float_value = x;
    return a->n++;
}

int gpubench_args_i32(gpubench_args *a, int32_t v)
{
    return scalar(a, GB_DT_I32, v, v);
}

int gpubench_args_u32(gpubench_args *a, uint32_t v)
{
    return scalar(a, GB_DT_U32, v, v);
}

int gpubench_args_i64(gpubench_args *a, int64_t v)
{
    return scalar(a, GB_DT_I64, v, (double)v);
}

int gpubench_args_f32(gpubench_args *a, float v)
{
    return scalar(a, GB_DT_F32, 0, v);
}

int gpubench_args_f64(gpubench_args *a, double v)
{
    return scalar(a, GB_DT_F64, 0, v);
}

/* The names of a tensormap's enums; NULL takes the default. */
static int tensormap_enums(gpubench_args *a, const gpubench_tensormap *tm, gb_arg *m)
{
    if (gb_swizzle_parse(tm->swizzle ? tm->swizzle : "none", &m->swizzle))
        return refuse(a, GPUBENCH_EINVAL, "swizzle '%s' is not none, 32B, 64B or 128B",
                      shown(tm->swizzle));
    if (gb_l2_promotion_parse(tm->l2_promotion ? tm->l2_promotion : "none", &m->l2_promotion))
        return refuse(a, GPUBENCH_EINVAL, "l2_promotion '%s' is not none, 64B, 128B or 256B",
                      shown(tm->l2_promotion));
    if (gb_oob_fill_parse(tm->oob_fill ? tm->oob_fill : "zero", &m->oob_fill))
        return refuse(a, GPUBENCH_EINVAL, "oob_fill '%s' is not zero or nan", shown(tm->oob_fill));
    return GPUBENCH_OK;
}

int gpubench_args_tensormap(gpubench_args *a, const gpubench_tensormap *tm)
{
    gb_arg *m = next(a);
    if (!m) return GPUBENCH_EINVAL;
    if (!tm || tm->rank < 1 || tm->rank > GB_TENSORMAP_MAX_RANK)
        return refuse(a, GPUBENCH_EINVAL, "a tensormap's rank must be 1 to 5");
    m->kind = GB_ARG_TENSORMAP;
    m->tensor = tm->tensor;
    int rc = tensormap_enums(a, tm, m);
    if (rc) return rc;
    bool own_dims = true, packed = true;
    for (int i = 0; i < tm->rank; i++) {
        own_dims = own_dims && tm->dims[i] == 0;
        packed = packed && tm->strides[i] == 0;
        m->box[i] = tm->box[i];
        m->dims[i] = tm->dims[i];
        m->strides[i] = tm->strides[i];
    }
    m->n_box = tm->rank;
    m->n_dims = own_dims ? 0 : tm->rank;
    m->n_strides = packed ? 0 : tm->rank;
    gb_err e = {0};
    if (gb_tensormap_check(a->args, a->n + 1, a->n, NULL, &e))
        return refuse(a, GPUBENCH_EINVAL, "%s", e.msg);
    m->dtype = a->args[m->tensor].dtype;
    return a->n++;
}

/* ---- the hooks ---------------------------------------------------------------- */

/* A configuration as fields for a callback (freed by the caller). */
static int config_fields(const gb_config *c, gb_fields *out, gb_err *err)
{
    memset(out, 0, sizeof *out);
    return gb_config_to_fields(c, out) ? gb_err_set(err, GB_ENOMEM, "out of memory") : GB_OK;
}

static int hook_accept(void *ctx, const gb_config *config, bool *ok, gb_err *err)
{
    gpubench_kernel *k = ctx;
    *ok = true;
    if (!k->cb.constraint) return GB_OK;
    gb_fields c;
    int rc = config_fields(config, &c, err);
    if (rc) return rc;
    gpubench_fields view = gb_api_view(&c);
    gpubench_error e = {0};
    int keep = 1;
    rc = k->cb.constraint(k->cb.user, &view, &keep, &e);
    gb_fields_free(&c);
    *ok = keep != 0;
    return rc ? gb_api_error_in(&e, "constraint", err) : GB_OK;
}

static int hook_args(void *ctx, const gb_fields *shape, gb_arg *out, int *out_n, gb_err *err)
{
    gpubench_kernel *k = ctx;
    gpubench_args a = {.args = out};
    gpubench_fields view = gb_api_view(shape);
    gpubench_error e = {0};
    int rc = k->cb.args(k->cb.user, &view, &a, &e);
    if (rc) return gb_api_error_in(&e, "args", err);
    if (a.first.code) {
        gpubench_error refused = {.code = a.first.code};
        memcpy(refused.message, a.first.msg, sizeof refused.message);
        return gb_api_error_in(&refused, "args", err);
    }
    *out_n = a.n;
    return GB_OK;
}

static int hook_launch(void *ctx, const gb_config *config, const gb_fields *shape, gb_launch *out,
                       gb_err *err)
{
    gpubench_kernel *k = ctx;
    gb_fields c;
    int rc = config_fields(config, &c, err);
    if (rc) return rc;
    gpubench_fields cv = gb_api_view(&c), sv = gb_api_view(shape);
    gpubench_launch l;
    memset(&l, 0, sizeof l);
    gpubench_error e = {0};
    rc = k->cb.launch(k->cb.user, &cv, &sv, &l, &e);
    gb_fields_free(&c);
    if (rc) return gb_api_error_in(&e, "launch", err);
    for (int d = 0; d < 3; d++) {
        out->grid[d] = l.grid[d] ? l.grid[d] : 1;
        out->block[d] = l.block[d] ? l.block[d] : 1;
        out->cluster[d] = l.cluster[d];
    }
    out->smem_bytes = l.smem_bytes;
    return GB_OK;
}

static int hook_defines(void *ctx, const gb_config *config, const gb_fields *shape, gb_fields *out,
                        gb_err *err)
{
    gpubench_kernel *k = ctx;
    gb_fields c;
    int rc = config_fields(config, &c, err);
    if (rc) return rc;
    gpubench_fields cv = gb_api_view(&c), sv = gb_api_view(shape), defines = {{0}};
    gpubench_error e = {0};
    rc = k->cb.defines(k->cb.user, &cv, &sv, &defines, &e);
    gb_fields_free(&c);
    if (rc) {
        gb_fields_free(&defines.f);
        return gb_api_error_in(&e, "defines", err);
    }
    gb_fields_free(out);
    *out = defines.f;
    return GB_OK;
}

static int hook_work(void *ctx, const gb_fields *shape, double *flops, double *bytes, gb_err *err)
{
    gpubench_kernel *k = ctx;
    *flops = *bytes = 0;
    if (!k->cb.work) return GB_OK;
    gpubench_fields view = gb_api_view(shape);
    gpubench_error e = {0};
    int rc = k->cb.work(k->cb.user, &view, flops, bytes, &e);
    return rc ? gb_api_error_in(&e, "work", err) : GB_OK;
}

void gb_api_set_hooks(gpubench_kernel *k)
{
    k->def.hooks = (gb_kernel_hooks){.accept = hook_accept,
                                     .args = k->cb.args ? hook_args : NULL,
                                     .launch = hook_launch,
                                     .work = hook_work,
                                     .defines = k->cb.defines ? hook_defines : NULL};
    k->def.hooks_ctx = k;
}
