/* The C API's versions, errors and fields (include/gpubench/gpubench.h). */
#include "api/internal.h"

#include "base/strbuf.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The public codes are the engine's, number for number. */
_Static_assert(GPUBENCH_EINVAL == GB_EINVAL && GPUBENCH_ECALLBACK == GB_ESCRIPT &&
                   GPUBENCH_ENOTFOUND == GB_ENOTFOUND && GPUBENCH_EBUSY == GB_EBUSY,
               "gpubench.h's status codes must equal base/error.h's");
_Static_assert(GPUBENCH_ERROR_BYTES == GB_ERR_MSG_BYTES, "error messages differ in size");

#define STR_(x) #x
#define STR(x)  STR_(x)

const char *gpubench_version(int *major, int *minor, int *patch)
{
    if (major) *major = GPUBENCH_VERSION_MAJOR;
    if (minor) *minor = GPUBENCH_VERSION_MINOR;
    if (patch) *patch = GPUBENCH_VERSION_PATCH;
    return STR(GPUBENCH_VERSION_MAJOR) "." STR(GPUBENCH_VERSION_MINOR) "." STR(
        GPUBENCH_VERSION_PATCH);
}

const char *gpubench_strerror(int code)
{
    return code == GPUBENCH_ECALLBACK ? "a callback failed" : gb_strerror(code);
}

int gpubench_error_set(gpubench_error *err, int code, const char *fmt, ...)
{
    if (!err) return code;
    err->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return code;
}

int gb_api_error_out(const gb_err *e, gpubench_error *err)
{
    if (err) {
        err->code = e->code;
        memcpy(err->message, e->msg, sizeof err->message);
    }
    return e->code;
}

int gb_api_error_in(const gpubench_error *e, const char *callback, gb_err *err)
{
    int code = e->code == GB_ENOMEM || e->code == GB_EINTR ? e->code : GB_ESCRIPT;
    return gb_err_set(err, code, "the %s callback: %s", callback,
                      e->message[0] ? e->message : gpubench_strerror(e->code));
}

/* ---- fields ------------------------------------------------------------------ */

int gpubench_fields_new(gpubench_fields **out)
{
    *out = calloc(1, sizeof **out);
    return *out ? GPUBENCH_OK : GPUBENCH_ENOMEM;
}

void gpubench_fields_free(gpubench_fields *f)
{
    if (!f) return;
    gb_fields_free(&f->f);
    free(f);
}

static int set(gpubench_fields *f, const char *name, gb_value v)
{
    if (!f || !name || !*name) return GPUBENCH_EINVAL;
    return gb_fields_set(&f->f, name, &v) ? GPUBENCH_ENOMEM : GPUBENCH_OK;
}

int gpubench_fields_set_int(gpubench_fields *f, const char *name, int64_t value)
{
    return set(f, name, gb_value_int(value));
}

int gpubench_fields_set_number(gpubench_fields *f, const char *name, double value)
{
    return isfinite(value) ? set(f, name, gb_value_num(value)) : GPUBENCH_EINVAL;
}

int gpubench_fields_set_bool(gpubench_fields *f, const char *name, int value)
{
    return set(f, name, gb_value_bool(value != 0));
}

int gpubench_fields_set_string(gpubench_fields *f, const char *name, const char *value)
{
    gb_value v;
    if (!value) return GPUBENCH_EINVAL;
    if (gb_value_str(value, &v)) return GPUBENCH_ENOMEM;
    int rc = set(f, name, v);
    gb_value_free(&v);
    return rc;
}

int gpubench_fields_count(const gpubench_fields *f)
{
    return f ? f->f.n : 0;
}

const char *gpubench_fields_name(const gpubench_fields *f, int i)
{
    return f && i >= 0 && i < f->f.n ? f->f.names[i] : NULL;
}

static int get(const gpubench_fields *f, const char *name, gb_value_kind kind, const gb_value **out)
{
    *out = f && name ? gb_fields_get(&f->f, name) : NULL;
    if (!*out) return GPUBENCH_ENOTFOUND;
    return (*out)->kind == kind ? GPUBENCH_OK : GPUBENCH_EINVAL;
}

int gpubench_fields_kind(const gpubench_fields *f, const char *name, gpubench_kind *out)
{
    const gb_value *v = f && name ? gb_fields_get(&f->f, name) : NULL;
    if (!v) return GPUBENCH_ENOTFOUND;
    static const gpubench_kind kinds[] = {[GB_VAL_INT] = GPUBENCH_INT,
                                          [GB_VAL_NUM] = GPUBENCH_NUMBER,
                                          [GB_VAL_STR] = GPUBENCH_STRING,
                                          [GB_VAL_BOOL] = GPUBENCH_BOOL};
    *out = kinds[v->kind];
    return GPUBENCH_OK;
}

int gpubench_fields_get_int(const gpubench_fields *f, const char *name, int64_t *out)
{
    const gb_value *v;
    int rc = get(f, name, GB_VAL_INT, &v);
    if (rc == GPUBENCH_OK) *out = v->i;
    return rc;
}

int gpubench_fields_get_number(const gpubench_fields *f, const char *name, double *out)
{
    const gb_value *v;
    int rc = get(f, name, GB_VAL_NUM, &v);
    if (rc == GPUBENCH_EINVAL && v->kind == GB_VAL_INT) rc = GPUBENCH_OK;
    if (rc == GPUBENCH_OK) *out = gb_value_as_number(v);
    return rc;
}

int gpubench_fields_get_string(const gpubench_fields *f, const char *name, const char **out)
{
    const gb_value *v;
    int rc = get(f, name, GB_VAL_STR, &v);
    if (rc == GPUBENCH_OK) *out = v->str;
    return rc;
}

int gpubench_fields_get_bool(const gpubench_fields *f, const char *name, int *out)
{
    const gb_value *v;
    int rc = get(f, name, GB_VAL_BOOL, &v);
    if (rc == GPUBENCH_OK) *out = v->b;
    return rc;
}

size_t gpubench_fields_text(const gpubench_fields *f, char *buf, size_t size)
{
    gb_strbuf sb = {0};
    if (f) gb_fields_append_canonical(&sb, &f->f, NULL, 0);
    size_t len = sb.len;
    if (size) snprintf(buf, size, "%s", sb.data ? sb.data : "");
    gb_sb_free(&sb);
    return len;
}
