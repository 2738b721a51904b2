/*
 * A growable byte string. Appends never fail loudly: the first allocation failure
 * sets `failed`, later appends do nothing, and whoever finishes the text checks the
 * flag once (gb_sb_status). That keeps formatting code free of per-call checks.
 */
#ifndef GB_BASE_STRBUF_H
#define GB_BASE_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

typedef struct gb_strbuf {
    char *data; /* always NUL-terminated once anything was appended */
    size_t len;
    size_t cap;
    int failed; /* an allocation failed; the content is truncated */
} gb_strbuf;

#define GB_STRBUF_INIT                                                                             \
    {                                                                                              \
        0                                                                                          \
    }

void gb_sb_append(gb_strbuf *sb, const void *bytes, size_t n);
void gb_sb_puts(gb_strbuf *sb, const char *s);
void gb_sb_putc(gb_strbuf *sb, char c);
void gb_sb_printf(gb_strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void gb_sb_vprintf(gb_strbuf *sb, const char *fmt, va_list ap);

/* GB_ENOMEM if any append failed, else GB_OK. */
int gb_sb_status(const gb_strbuf *sb);

/* The text so far ("" when empty); owned by sb. */
const char *gb_sb_str(const gb_strbuf *sb);

/* Hands the buffer to the caller (free() it) and resets sb; NULL after a failure. */
char *gb_sb_take(gb_strbuf *sb);

void gb_sb_reset(gb_strbuf *sb);

/* Copies src into dst[0..n) with truncation, always NUL-terminating (n > 0);
 * returns strlen(src), like BSD strlcpy. */
size_t gb_strlcpy(char *dst, const char *src, size_t n);

/* A size in binary units, three significant digits: "512 B", "1.50 GiB", "1.00 PiB". */
void gb_format_bytes(double bytes, char *out, size_t n);
void gb_sb_free(gb_strbuf *sb);

#endif
