#include "base/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int gb_err_set(gb_err *err, int code, const char *fmt, ...)
{
    if (!err) return code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    err->code = code;
    return code;
}

int gb_err_prefix(gb_err *err, const char *fmt, ...)
{
    if (!err) return GB_EINVAL;
    char head[GB_ERR_MSG_BYTES];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(head, sizeof head, fmt, ap);
    va_end(ap);
    if (n < 0) return err->code;
    char joined[GB_ERR_MSG_BYTES];
    /* Truncation is acceptable: the head of a long message says the most. */
    if (snprintf(joined, sizeof joined, "%s: %s", head, err->msg) >= 0)
        memcpy(err->msg, joined, sizeof joined);
    return err->code;
}

size_t gb_err_position_length(const char *msg)
{
    const char *colon = strchr(msg, ':');
    if (!colon || colon == msg || memchr(msg, '\n', (size_t)(colon - msg))) return 0;
    size_t digits = strspn(colon + 1, "0123456789");
    if (digits == 0 || colon[1 + digits] != ':') return 0;
    size_t n = (size_t)(colon - msg) + 2 + digits;
    return msg[n] == ' ' ? n + 1 : n;
}

int gb_err_context(gb_err *err, const char *fmt, ...)
{
    if (!err) return GB_EINVAL;
    char context[GB_ERR_MSG_BYTES], joined[GB_ERR_MSG_BYTES];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(context, sizeof context, fmt, ap);
    va_end(ap);
    size_t at = gb_err_position_length(err->msg);
    if (n >= 0 && snprintf(joined, sizeof joined, "%.*s%s: %s", (int)at, err->msg, context,
                           err->msg + at) >= 0)
        memcpy(err->msg, joined, sizeof joined);
    return err->code;
}

int gb_err_copy(gb_err *dst, const gb_err *src)
{
    if (!src) return GB_OK;
    if (dst && dst != src) *dst = *src;
    return src->code;
}

void gb_err_clear(gb_err *err)
{
    if (!err) return;
    err->code = GB_OK;
    err->msg[0] = '\0';
}

static const char *const own_messages[] = {
    [GB_EINVAL - GB_EINVAL] = "invalid argument",
    [GB_ENOMEM - GB_EINVAL] = "out of memory",
    [GB_EIO - GB_EINVAL] = "input/output error",
    [GB_ESCRIPT - GB_EINVAL] = "script error",
    [GB_ENODRIVER - GB_EINVAL] = "no CUDA driver",
    [GB_ENOGPU - GB_EINVAL] = "no usable GPU",
    [GB_ECUDA - GB_EINVAL] = "CUDA driver call failed",
    [GB_ENVRTC - GB_EINVAL] = "NVRTC failed",
    [GB_ECOMPILE - GB_EINVAL] = "kernel did not compile",
    [GB_ELAUNCH - GB_EINVAL] = "kernel launch refused",
    [GB_EFAULT - GB_EINVAL] = "kernel faulted",
    [GB_ETIMEOUT - GB_EINVAL] = "timed out",
    [GB_ECACHE - GB_EINVAL] = "cache unusable",
    [GB_ENOTFOUND - GB_EINVAL] = "not found",
    [GB_EPROTO - GB_EINVAL] = "protocol error",
    [GB_EINTR - GB_EINVAL] = "interrupted",
    [GB_ELIMIT - GB_EINVAL] = "limit reached",
    [GB_ECLOSED - GB_EINVAL] = "connection closed",
    [GB_EBUSY - GB_EINVAL] = "in use by another process",
};

const char *gb_strerror(int code)
{
    if (code == GB_OK) return "success";
    int slot = code - GB_EINVAL;
    if (slot >= 0 && slot < (int)(sizeof own_messages / sizeof *own_messages) && own_messages[slot])
        return own_messages[slot];
    if (code > 0) return strerror(code);
    return "unknown error";
}
