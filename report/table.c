#include "report/table.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void gb_table_init(gb_table *t, const char *const *headers, const char *align)
{
    memset(t, 0, sizeof *t);
    for (int i = 0; headers[i] && i < GB_TABLE_MAX_COLS; i++) {
        t->headers[i] = headers[i];
        t->right[i] = align[i] == 'r';
        t->n_cols++;
    }
}

static bool grow(gb_table *t)
{
    if (t->n_rows < t->cap_rows) return true;
    int cap = t->cap_rows ? 2 * t->cap_rows : 16;
    char **cells = realloc(t->cells, (size_t)cap * (size_t)t->n_cols * sizeof *cells);
    if (!cells) return false;
    t->cells = cells;
    t->cap_rows = cap;
    return true;
}

void gb_table_cell(gb_table *t, const char *fmt, ...)
{
    if (t->failed) return;
    if (t->col == 0 && !grow(t)) {
        t->failed = true;
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    char *text = NULL;
    if (vasprintf(&text, fmt, ap) < 0) text = NULL;
    va_end(ap);
    t->cells[t->n_rows * t->n_cols + t->col] = text;
    if (++t->col == t->n_cols) {
        t->col = 0;
        t->n_rows++;
    }
}

static const char *cell(const gb_table *t, int row, int col)
{
    const char *s = t->cells[row * t->n_cols + col];
    return s ? s : "?";
}

void gb_table_print(const gb_table *t, FILE *out)
{
    int width[GB_TABLE_MAX_COLS];
    for (int c = 0; c < t->n_cols; c++) {
        width[c] = (int)strlen(t->headers[c]);
        for (int r = 0; r < t->n_rows; r++) {
            int w = (int)strlen(cell(t, r, c));
            if (w > width[c]) width[c] = w;
        }
    }
    gb_strbuf line = GB_STRBUF_INIT;
    for (int r = -1; r < t->n_rows; r++) {
        gb_sb_reset(&line);
        for (int c = 0; c < t->n_cols; c++) {
            const char *text = r < 0 ? t->headers[c] : cell(t, r, c);
            gb_sb_printf(&line, t->right[c] ? "%*s  " : "%-*s  ", width[c], text);
        }
        while (line.len > 0 && line.data[line.len - 1] == ' ') /* no trailing blanks */
            line.data[--line.len] = '\0';
        fprintf(out, "%s\n", gb_sb_str(&line));
    }
    gb_sb_free(&line);
    if (t->failed) fprintf(out, "(out of memory: the table is incomplete)\n");
}

/* Display width of UTF-8 text: one column per character (what the cells hold:
 * ASCII, '±', box drawing). */
static int text_width(const char *s)
{
    int w = 0;
    for (; *s; s++)
        w += ((unsigned char)*s & 0xC0) != 0x80;
    return w;
}

typedef struct box_chars {
    const char *h, *v, *top[3], *mid[3], *bottom[3]; /* left, cross, right */
} box_chars;

static const box_chars box_unicode = {"─", "│", {"┌", "┬", "┐"}, {"├", "┼", "┤"}, {"└", "┴", "┘"}};
static const box_chars box_ascii = {"-", "|", {"+", "+", "+"}, {"+", "+", "+"}, {"+", "+", "+"}};

static void rule(FILE *out, const box_chars *b, const char *const ends[3], const int *width,
                 int n_cols)
{
    fputs(ends[0], out);
    for (int c = 0; c < n_cols; c++) {
        for (int i = 0; i < width[c] + 2; i++)
            fputs(b->h, out);
        fputs(c + 1 < n_cols ? ends[1] : ends[2], out);
    }
    fputc('\n', out);
}

static void box_row(FILE *out, const gb_table *t, const box_chars *b, const int *width, int row,
                    const gb_table_style *style)
{
    fputs(b->v, out);
    for (int c = 0; c < t->n_cols; c++) {
        const char *text = row < 0 ? t->headers[c] : cell(t, row, c);
        const char *color = row < 0 && style->color ? "\033[1m"
                            : row >= 0 && style->color && style->cell_color
                                ? style->cell_color(style->ctx, row, c)
                                : NULL;
        int pad = width[c] - text_width(text);
        fprintf(out, " %*s%s%s%s%*s %s", t->right[c] ? pad : 0, "", color ? color : "", text,
                color ? "\033[0m" : "", t->right[c] ? 0 : pad, "", b->v);
    }
    fputc('\n', out);
}

void gb_table_print_box(const gb_table *t, FILE *out, const gb_table_style *style)
{
    const box_chars *b = style->ascii ? &box_ascii : &box_unicode;
    int width[GB_TABLE_MAX_COLS];
    for (int c = 0; c < t->n_cols; c++) {
        width[c] = text_width(t->headers[c]);
        for (int r = 0; r < t->n_rows; r++) {
            int w = text_width(cell(t, r, c));
            if (w > width[c]) width[c] = w;
        }
    }
    rule(out, b, b->top, width, t->n_cols);
    box_row(out, t, b, width, -1, style);
    rule(out, b, b->mid, width, t->n_cols);
    for (int r = 0; r < t->n_rows; r++)
        box_row(out, t, b, width, r, style);
    rule(out, b, b->bottom, width, t->n_cols);
    if (t->failed) fprintf(out, "(out of memory: the table is incomplete)\n");
}

void gb_table_free(gb_table *t)
{
    if (!t) return;
    for (int i = 0; t->cells && i < t->n_rows * t->n_cols + t->col; i++)
        free(t->cells[i]);
    free(t->cells);
    memset(t, 0, sizeof *t);
}
