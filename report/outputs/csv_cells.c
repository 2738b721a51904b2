/* The CSV outputs' cells (report/outputs/csv.h), written as RFC 4180 asks; both
 * formats (csv_out.c, csv_cutlass.c) write through them. */
#include "report/outputs/csv.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static void separate(csv_line *l)
{
    if (l->started) gb_sb_putc(l->sb, ',');
    l->started = true;
}

void csv_text(csv_line *l, const char *s)
{
    separate(l);
    if (!s || !s[strcspn(s, ",\"\r\n")]) {
        gb_sb_puts(l->sb, s ? s : "");
        return;
    }
    gb_sb_putc(l->sb, '"');
    for (const char *p = s; *p; p++) {
        if (*p == '"') gb_sb_putc(l->sb, '"');
        gb_sb_putc(l->sb, *p);
    }
    gb_sb_putc(l->sb, '"');
}

void csv_num(csv_line *l, double v, int digits)
{
    separate(l);
    if (!isfinite(v)) return;
    char text[64];
    snprintf(text, sizeof text, "%.*g", digits, v);
    /* A locale whose decimal point is a comma would split the cell: %g writes no
     * other comma, so whatever the locale, the number reads as C writes it. */
    for (char *p = text; *p; p++)
        if (*p == ',') *p = '.';
    gb_sb_puts(l->sb, text);
}

void csv_int(csv_line *l, int64_t v)
{
    separate(l);
    gb_sb_printf(l->sb, "%" PRId64, v);
}

void csv_empty(csv_line *l)
{
    separate(l);
}

void csv_value(csv_line *l, const gb_value *v)
{
    switch (v->kind) {
    case GB_VAL_INT:
        csv_int(l, v->i);
        break;
    case GB_VAL_NUM:
        csv_num(l, v->num, 17);
        break;
    case GB_VAL_STR:
        csv_text(l, v->str);
        break;
    case GB_VAL_BOOL:
        csv_text(l, v->b ? "true" : "false");
        break;
    }
}

void csv_end_line(csv_line *l)
{
    gb_sb_putc(l->sb, '\n');
    l->started = false;
}

const gb_value *csv_field_nocase(const gb_fields *f, const char *name)
{
    for (int i = 0; i < f->n; i++)
        if (strcasecmp(f->names[i], name) == 0) return &f->values[i];
    return NULL;
}
