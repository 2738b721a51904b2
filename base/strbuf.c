#include "base/strbuf.h"

#include "base/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int reserve(gb_strbuf *sb, size_t extra)
{
    if (sb->failed) return 0;
    if (sb->len + extra + 1 <= sb->cap) return 1;
    size_t cap = sb->cap ? sb->cap : 64;
    while (cap < sb->len + extra + 1)
        cap *= 2;
    char *grown = realloc(sb->data, cap);
    if (!grown) {
        sb->failed = 1;
        return 0;
    }
    sb->data = grown;
    sb->cap = cap;
    return 1;
}

void gb_sb_append(gb_strbuf *sb, const void *bytes, size_t n)
{
    if (!reserve(sb, n)) return;
    memcpy(sb->data + sb->len, bytes, n);
    sb->len += n;
    sb->data[sb->len] = '\0';
}

void gb_sb_puts(gb_strbuf *sb, const char *s)
{
    gb_sb_append(sb, s, strlen(s));
}

void gb_sb_putc(gb_strbuf *sb, char c)
{
    gb_sb_append(sb, &c, 1);
}

void gb_sb_vprintf(gb_strbuf *sb, const char *fmt, va_list ap)
{
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    if (n >= 0 && reserve(sb, (size_t)n)) {
        vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, again);
        sb->len += (size_t)n;
    }
    va_end(again);
}

void gb_sb_printf(gb_strbuf *sb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    gb_sb_vprintf(sb, fmt, ap);
    va_end(ap);
}

int gb_sb_status(const gb_strbuf *sb)
{
    return sb->failed ? GB_ENOMEM : GB_OK;
}

const char *gb_sb_str(const gb_strbuf *sb)
{
    return sb->data ? sb->data : "";
}

char *gb_sb_take(gb_strbuf *sb)
{
    char *out = sb->failed ? NULL : sb->data;
    if (!out && !sb->failed) out = calloc(1, 1);
    if (sb->failed) free(sb->data);
    *sb = (gb_strbuf)GB_STRBUF_INIT;
    return out;
}

void gb_sb_reset(gb_strbuf *sb)
{
    sb->len = 0;
    sb->failed = 0;
    if (sb->data) sb->data[0] = '\0';
}

void gb_sb_free(gb_strbuf *sb)
{
    if (!sb) return;
    free(sb->data);
    *sb = (gb_strbuf)GB_STRBUF_INIT;
}

size_t gb_strlcpy(char *dst, const char *src, size_t n)
{
    size_t len = strlen(src);
    if (n == 0) return len;
    size_t copy = len < n - 1 ? len : n - 1;
    memcpy(dst, src, copy);
    dst[copy] = '\0';
    return len;
}

void gb_format_bytes(double bytes, char *out, size_t n)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    int u = 0;
    while (bytes >= 1024.0 && u < 6) {
        bytes /= 1024.0;
        u++;
    }
    if (u == 0)
        snprintf(out, n, "%.0f B", bytes);
    else
        snprintf(out, n, "%.*f %s", bytes < 10 ? 2 : bytes < 100 ? 1 : 0, bytes, units[u]);
}
