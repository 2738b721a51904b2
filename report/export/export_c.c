/* The C header writer. The header must compile cleanly as C99, C++17 and CUDA C++
 * with -Wall -Wextra -Werror when a translation unit includes it and uses nothing:
 * so the table and the default live in static inline functions (an unused static
 * const variable warns in C), every initializer is complete and positional (no
 * designated initializers, which C++17 lacks) and the loops count with int. Strings
 * from the cache are escaped; names were checked by gb_export_table_finish. */
#include "report/export/export.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* A C string literal: printable ASCII as it is, except " \ and ? (no trigraphs);
 * every other byte as a three-digit octal escape, which no later digit can extend. */
static void put_c_string(gb_strbuf *sb, const char *s)
{
    gb_sb_putc(sb, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\' || *p == '?')
            gb_sb_printf(sb, "\\%c", *p);
        else if (*p >= 0x20 && *p < 0x7f)
            gb_sb_putc(sb, (char)*p);
        else
            gb_sb_printf(sb, "\\%03o", *p);
    }
    gb_sb_putc(sb, '"');
}

/* Text for a comment: printable ASCII, with * \ and ? (which could end the comment,
 * splice a line or start a trigraph) and anything else replaced by _. */
static void put_comment_text(gb_strbuf *sb, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        gb_sb_putc(sb, *p >= 0x20 && *p < 0x7f && !strchr("*\\?", *p) ? (char)*p : '_');
}

/* The shortest decimal that reads back as the same double, always with a point or
 * an exponent so that C sees a double. */
static void put_double(gb_strbuf *sb, double v)
{
    char text[40];
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(text, sizeof text, "%.*g", digits, v);
        if (strtod(text, NULL) == v) break;
    }
    gb_sb_puts(sb, text);
    if (!strpbrk(text, ".eE")) gb_sb_puts(sb, ".0");
}

static void put_value(gb_strbuf *sb, const gb_export_column *c, const gb_value *v)
{
    if (c->kind == GB_VAL_NUM)
        put_double(sb, gb_value_as_number(v));
    else if (c->kind == GB_VAL_INT && v->i == INT64_MIN)
        gb_sb_puts(sb, "(-9223372036854775807LL - 1)"); /* the literal alone overflows */
    else if (c->kind == GB_VAL_INT)
        gb_sb_printf(sb, "%lld", (long long)v->i);
    else if (c->kind == GB_VAL_BOOL)
        gb_sb_puts(sb, v->b ? "1" : "0");
    else
        put_c_string(sb, v->str);
}

static const char *c_type(const gb_export_column *c)
{
    switch (c->kind) {
    case GB_VAL_INT:
        return "long long";
    case GB_VAL_NUM:
        return "double";
    case GB_VAL_STR:
        return "const char *";
    default:
        return "int";
    }
}

static bool is_numeric(const gb_export_column *c)
{
    return c->kind == GB_VAL_INT || c->kind == GB_VAL_NUM;
}

static bool has_kind(const gb_export_table *t, bool numeric)
{
    for (int k = 0; k < t->n_keys; k++)
        if (is_numeric(&t->keys[k]) == numeric) return true;
    return false;
}

/* ---- the leading comment ------------------------------------------------ */

static void put_utc(gb_strbuf *sb, int64_t when)
{
    char text[32];
    time_t tt = (time_t)when;
    struct tm tm;
    if (!gmtime_r(&tt, &tm) || !strftime(text, sizeof text, "%Y-%m-%d %H:%M", &tm))
        snprintf(text, sizeof text, "(time %lld)", (long long)when);
    gb_sb_puts(sb, text);
}

/* When the rows were tuned, and by which gpubench versions. */
static void put_tuned(gb_strbuf *sb, const gb_export_table *t)
{
    int64_t first = 0, last = 0;
    for (int r = 0; r < t->n_rows; r++) {
        int64_t w = t->rows[r].when;
        if (w > 0 && (!first || w < first)) first = w;
        if (w > last) last = w;
    }
    gb_sb_puts(sb, " *   tuned    ");
    if (!first) gb_sb_puts(sb, "(date unknown)");
    if (first) put_utc(sb, first);
    if (first && last != first) gb_sb_puts(sb, " to "), put_utc(sb, last);
    if (first) gb_sb_puts(sb, " UTC");
    bool any = false;
    for (int r = 0; r < t->n_rows; r++) {
        const char *v = t->rows[r].engine;
        bool seen = !*v;
        for (int q = 0; q < r && !seen; q++)
            seen = !strcmp(t->rows[q].engine, v);
        if (seen) continue;
        gb_sb_puts(sb, any ? ", " : ", by gpubench ");
        put_comment_text(sb, v);
        any = true;
    }
    gb_sb_putc(sb, '\n');
}

/* The note, wrapped at word boundaries into comment lines of about 80 columns. */
static void put_note(gb_strbuf *sb, const char *note)
{
    gb_sb_puts(sb, "\n *   note    ");
    int column = 16;
    for (const char *p = note; *p;) {
        while (*p == ' ')
            p++;
        size_t n = strcspn(p, " ");
        if (!n) break;
        if (column > 16 && column + 1 + (int)n > 88) {
            gb_sb_puts(sb, "\n *           ");
            column = 16;
        }
        gb_sb_putc(sb, ' ');
        char word[256];
        gb_strlcpy(word, p, n + 1 < sizeof word ? n + 1 : sizeof word);
        put_comment_text(sb, word);
        column += 1 + (int)n;
        p += n;
    }
}

static void put_key_params(gb_strbuf *sb, const gb_export_table *t)
{
    for (int k = 0; k < t->n_keys; k++)
        gb_sb_printf(sb, "%s%s %s", k ? ", " : "", c_type(&t->keys[k]), t->keys[k].name);
}

static void put_key_args(gb_strbuf *sb, const gb_export_table *t, bool more)
{
    for (int k = 0; k < t->n_keys; k++)
        gb_sb_printf(sb, "%s%s", k ? ", " : "", t->keys[k].name);
    if (more && t->n_keys) gb_sb_puts(sb, ", ");
}

/* What the table is: kernel, device, when it was tuned, where from, its hash. */
static void put_about(gb_strbuf *sb, const gb_export_table *t, const char *version)
{
    gb_sb_puts(sb, "/*\n * ");
    put_comment_text(sb, t->kernel);
    gb_sb_puts(sb, ": tuned configurations for ");
    put_comment_text(sb, t->device);
    gb_sb_printf(
        sb, "\n *\n * Generated by gpubench %s (gpubench export); do not edit: export again.\n",
        version);
    gb_sb_puts(sb, " *   kernel   ");
    put_comment_text(sb, t->kernel);
    gb_sb_puts(sb, "\n *   device   ");
    put_comment_text(sb, t->device);
    gb_sb_putc(sb, '\n');
    put_tuned(sb, t);
    gb_sb_puts(sb, " *   from     ");
    put_comment_text(sb, t->source);
    if (t->note) put_note(sb, t->note);
    gb_sb_printf(sb, "\n *   entries  %d shape%s, %d configuration%s", t->n_rows,
                 t->n_rows == 1 ? "" : "s", t->n_configs, t->n_configs == 1 ? "" : "s");
    if (t->n_older) gb_sb_printf(sb, " (%d older entries left out)", t->n_older);
    gb_sb_printf(sb, "\n *   hash     %s\n *\n", t->hash);
}

/* How to use it: the lookup's signature and rules, the configurations macro. */
static void put_usage(gb_strbuf *sb, const gb_export_table *t, const char *P)
{
    const char *p = t->prefix;
    gb_sb_printf(sb, " * const %s_tuned_config *%s_tuned_lookup(", p, p);
    if (!t->n_keys) gb_sb_puts(sb, "void");
    put_key_params(sb, t);
    gb_sb_puts(sb, ")\n *   the entry of this exact shape; else");
    if (has_kind(t, true)) {
        gb_sb_puts(sb, " of the nearest shape with the same string and boolean\n"
                       " *   key fields (least sum over the numeric key fields of "
                       "|log2(asked/entry)|, or of\n"
                       " *   log2(1 + |asked - entry|) where a value is <= 0; ties: "
                       "the first in table order)");
        if (t->max_distance >= 0) {
            gb_sb_puts(sb, "\n *   if that sum is at most ");
            put_double(sb, t->max_distance);
        }
        gb_sb_puts(sb, ";\n *   else");
    }
    gb_sb_printf(sb, " the default: configuration %d, %s.\n", t->default_id,
                 t->default_given ? "given with --default" : "the best for the most shapes");
    gb_sb_printf(sb,
                 " * %s_tuned_lookup_match(..., int *match) also says which: %s_TUNED_EXACT,\n"
                 " *   _NEAREST or _DEFAULT. %s_tuned_lookup_exact(...) is NULL for a shape "
                 "not in the table.\n",
                 p, P, p);
    gb_sb_printf(sb, " * %s_TUNED_CONFIGS(X) calls X(id", P);
    for (int i = 0; i < t->n_params; i++)
        gb_sb_printf(sb, ", %s", t->params[i].name);
    gb_sb_puts(sb, ") for each distinct configuration.\n */\n");
}

/* ---- declarations ------------------------------------------------------- */

static void put_macros(gb_strbuf *sb, const gb_export_table *t, const char *P)
{
    gb_sb_printf(sb, "#define %s_TUNED_HASH \"%s\"\n", P, t->hash);
    gb_sb_printf(sb, "#define %s_TUNED_KERNEL ", P);
    put_c_string(sb, t->kernel);
    gb_sb_printf(sb, "\n#define %s_TUNED_DEVICE ", P);
    put_c_string(sb, t->device);
    gb_sb_printf(sb, "\n#define %s_TUNED_COUNT %d\n", P, t->n_rows);
    gb_sb_printf(sb, "#define %s_TUNED_N_CONFIGS %d\n", P, t->n_configs);
    gb_sb_printf(sb, "#define %s_TUNED_DEFAULT_ID %d\n", P, t->default_id);
    gb_sb_printf(sb, "#define %s_TUNED_EXACT 0\n#define %s_TUNED_NEAREST 1\n", P, P);
    gb_sb_printf(sb, "#define %s_TUNED_DEFAULT 2\n", P);
    if (t->max_distance >= 0) {
        gb_sb_printf(sb,
                     "/* 2^max-distance: the nearest entry's farthest distance factor */\n"
                     "#define %s_TUNED_MAX_FACTOR ",
                     P);
        put_double(sb, exp2(t->max_distance));
        gb_sb_putc(sb, '\n');
    }
    gb_sb_putc(sb, '\n');
    gb_sb_puts(sb, "/* X(id");
    for (int i = 0; i < t->n_params; i++)
        gb_sb_printf(sb, ", %s", t->params[i].name);
    gb_sb_printf(sb, ") */\n#define %s_TUNED_CONFIGS(X)", P);
    for (int c = 0; c < t->n_configs; c++) {
        gb_sb_printf(sb, " \\\n    X(%d", c);
        for (int i = 0; i < t->n_params; i++) {
            gb_sb_puts(sb, ", ");
            put_value(sb, &t->params[i], &t->configs[c * t->n_params + i]);
        }
        gb_sb_putc(sb, ')');
    }
    gb_sb_puts(sb, "\n\n");
}

static void put_types(gb_strbuf *sb, const gb_export_table *t, const char *p, const char *P)
{
    gb_sb_printf(sb,
                 "typedef struct %s_tuned_config {\n    int id; /* its X in %s_TUNED_CONFIGS */\n",
                 p, P);
    for (int i = 0; i < t->n_params; i++)
        gb_sb_printf(sb, "    %s %s;\n", c_type(&t->params[i]), t->params[i].name);
    gb_sb_printf(sb,
                 "    double median_ms; /* measured on the entry's shape; 0 for the default */\n"
                 "} %s_tuned_config;\n\n",
                 p);
    if (t->n_keys) {
        gb_sb_printf(sb, "typedef struct %s_tuned_shape {\n", p);
        for (int k = 0; k < t->n_keys; k++)
            gb_sb_printf(sb, "    %s %s;\n", c_type(&t->keys[k]), t->keys[k].name);
        gb_sb_printf(sb, "} %s_tuned_shape;\n\n", p);
    }
    gb_sb_printf(sb, "typedef struct %s_tuned_entry {\n", p);
    if (t->n_keys) gb_sb_printf(sb, "    %s_tuned_shape shape;\n", p);
    gb_sb_printf(sb, "    %s_tuned_config config;\n} %s_tuned_entry;\n\n", p, p);
}

static void put_config_init(gb_strbuf *sb, const gb_export_table *t, int id, double median_ms)
{
    gb_sb_printf(sb, "{%d", id);
    for (int i = 0; i < t->n_params; i++) {
        gb_sb_puts(sb, ", ");
        put_value(sb, &t->params[i], &t->configs[id * t->n_params + i]);
    }
    gb_sb_puts(sb, ", ");
    put_double(sb, median_ms);
    gb_sb_putc(sb, '}');
}

/* The table and the default, each inside a function (see the top of this file). */
static void put_data(gb_strbuf *sb, const gb_export_table *t, const char *p, const char *P)
{
    gb_sb_printf(sb,
                 "/* The entries, sorted by key. */\n"
                 "static inline const %s_tuned_entry *%s_tuned_entries(void)\n{\n"
                 "    static const %s_tuned_entry table[%s_TUNED_COUNT] = {\n",
                 p, p, p, P);
    for (int r = 0; r < t->n_rows; r++) {
        const gb_export_row *row = &t->rows[r];
        gb_sb_puts(sb, "        {");
        if (t->n_keys) gb_sb_putc(sb, '{');
        for (int k = 0; k < t->n_keys; k++) {
            if (k) gb_sb_puts(sb, ", ");
            put_value(sb, &t->keys[k], &row->key[k]);
        }
        if (t->n_keys) gb_sb_puts(sb, "}, ");
        put_config_init(sb, t, row->config_id, row->median_ms);
        gb_sb_puts(sb, "},\n");
    }
    gb_sb_puts(sb, "    };\n    return table;\n}\n\n");
    gb_sb_printf(sb,
                 "static inline const %s_tuned_config *%s_tuned_default(void)\n{\n"
                 "    static const %s_tuned_config config = ",
                 p, p, p);
    put_config_init(sb, t, t->default_id, 0.0);
    gb_sb_puts(sb, ";\n    return &config;\n}\n\n");
}

/* ---- lookup ------------------------------------------------------------- */

/* A condition that entry tuned_e_[tuned_i_] has the asked value of key field k. */
static void put_key_equal(gb_strbuf *sb, const gb_export_table *t, int k)
{
    const char *p = t->prefix, *name = t->keys[k].name;
    if (t->keys[k].kind == GB_VAL_STR)
        gb_sb_printf(sb, "%s_tuned_same_(tuned_e_[tuned_i_].shape.%s, %s)", p, name, name);
    else if (t->keys[k].kind == GB_VAL_BOOL)
        gb_sb_printf(sb, "(tuned_e_[tuned_i_].shape.%s != 0) == (%s != 0)", name, name);
    else
        gb_sb_printf(sb, "tuned_e_[tuned_i_].shape.%s == %s", name, name);
}

static void put_helpers(gb_strbuf *sb, const gb_export_table *t, const char *p)
{
    for (int k = 0; k < t->n_keys; k++)
        if (t->keys[k].kind == GB_VAL_STR) {
            gb_sb_printf(sb,
                         "static inline int %s_tuned_same_(const char *a, const char *b)\n{\n"
                         "    return a != NULL && b != NULL && strcmp(a, b) == 0;\n}\n\n",
                         p);
            break;
        }
    if (!has_kind(t, true)) return;
    gb_sb_printf(sb,
                 "/* A numeric key field's distance, as 2^distance: larger/smaller when both\n"
                 " * are positive, else 1 + |a - b|. Products of these order the entries as the\n"
                 " * sums of the logarithms would, without needing libm. */\n"
                 "static inline double %s_tuned_factor_(double a, double b)\n{\n"
                 "    if (a > 0.0 && b > 0.0) return a > b ? a / b : b / a;\n"
                 "    return 1.0 + (a > b ? a - b : b - a);\n}\n\n",
                 p);
}

static void put_exact(gb_strbuf *sb, const gb_export_table *t, const char *p, const char *P)
{
    gb_sb_printf(sb, "static inline const %s_tuned_entry *%s_tuned_lookup_exact(", p, p);
    if (!t->n_keys) {
        gb_sb_printf(sb, "void)\n{\n    return %s_tuned_entries();\n}\n\n", p);
        return;
    }
    put_key_params(sb, t);
    gb_sb_printf(sb,
                 ")\n{\n    const %s_tuned_entry *tuned_e_ = %s_tuned_entries();\n"
                 "    int tuned_i_;\n"
                 "    for (tuned_i_ = 0; tuned_i_ < %s_TUNED_COUNT; tuned_i_++)\n"
                 "        if (",
                 p, p, P);
    for (int k = 0; k < t->n_keys; k++) {
        if (k) gb_sb_puts(sb, " &&\n            ");
        put_key_equal(sb, t, k);
    }
    gb_sb_puts(sb, ")\n            return &tuned_e_[tuned_i_];\n    return NULL;\n}\n\n");
}

/* The nearest entry's loop, for tables with numeric key fields. */
static void put_nearest(gb_strbuf *sb, const gb_export_table *t, const char *p, const char *P)
{
    gb_sb_printf(sb,
                 "    for (tuned_i_ = 0; tuned_i_ < %s_TUNED_COUNT; tuned_i_++) {\n"
                 "        double tuned_d_ = 1.0;\n",
                 P);
    for (int k = 0; k < t->n_keys; k++) {
        if (is_numeric(&t->keys[k])) continue;
        gb_sb_puts(sb, "        if (!(");
        put_key_equal(sb, t, k);
        gb_sb_puts(sb, ")) continue;\n");
    }
    for (int k = 0; k < t->n_keys; k++)
        if (is_numeric(&t->keys[k]))
            gb_sb_printf(sb,
                         "        tuned_d_ *= %s_tuned_factor_((double)%s, "
                         "(double)tuned_e_[tuned_i_].shape.%s);\n",
                         p, t->keys[k].name, t->keys[k].name);
    gb_sb_puts(sb, "        if (tuned_best_ == NULL || tuned_d_ < tuned_best_d_) {\n"
                   "            tuned_best_ = &tuned_e_[tuned_i_];\n"
                   "            tuned_best_d_ = tuned_d_;\n        }\n    }\n"
                   "    if (tuned_best_ != NULL");
    if (t->max_distance >= 0) gb_sb_printf(sb, " && tuned_best_d_ <= %s_TUNED_MAX_FACTOR", P);
    gb_sb_printf(sb,
                 ") {\n"
                 "        if (tuned_match_ != NULL) *tuned_match_ = %s_TUNED_NEAREST;\n"
                 "        return &tuned_best_->config;\n    }\n",
                 P);
}

static void put_lookup(gb_strbuf *sb, const gb_export_table *t, const char *p, const char *P)
{
    bool nearest = has_kind(t, true);
    gb_sb_printf(sb, "static inline const %s_tuned_config *%s_tuned_lookup_match(", p, p);
    put_key_params(sb, t);
    gb_sb_printf(sb, "%sint *tuned_match_)\n{\n", t->n_keys ? ", " : "");
    gb_sb_printf(sb, "    const %s_tuned_entry *tuned_best_ = %s_tuned_lookup_exact(", p, p);
    put_key_args(sb, t, false);
    gb_sb_puts(sb, ");\n");
    if (nearest)
        gb_sb_printf(sb,
                     "    const %s_tuned_entry *tuned_e_ = %s_tuned_entries();\n"
                     "    double tuned_best_d_ = 0.0;\n    int tuned_i_;\n",
                     p, p);
    gb_sb_printf(sb,
                 "    if (tuned_best_ != NULL) {\n"
                 "        if (tuned_match_ != NULL) *tuned_match_ = %s_TUNED_EXACT;\n"
                 "        return &tuned_best_->config;\n    }\n",
                 P);
    if (nearest) put_nearest(sb, t, p, P);
    gb_sb_printf(sb,
                 "    if (tuned_match_ != NULL) *tuned_match_ = %s_TUNED_DEFAULT;\n"
                 "    return %s_tuned_default();\n}\n\n",
                 P, p);
    gb_sb_printf(sb, "static inline const %s_tuned_config *%s_tuned_lookup(", p, p);
    if (!t->n_keys) gb_sb_puts(sb, "void");
    put_key_params(sb, t);
    gb_sb_printf(sb, ")\n{\n    return %s_tuned_lookup_match(", p);
    put_key_args(sb, t, true);
    gb_sb_puts(sb, "NULL);\n}\n");
}

static void put_table(gb_strbuf *sb, const gb_export_table *t, const char *version)
{
    const char *p = t->prefix;
    char P[256];
    size_t n = gb_strlcpy(P, p, sizeof P);
    for (size_t i = 0; i < n && i < sizeof P; i++)
        P[i] = (char)toupper((unsigned char)P[i]);
    put_about(sb, t, version);
    put_usage(sb, t, P);
    gb_sb_printf(sb, "#ifndef %s_TUNED_H\n#define %s_TUNED_H\n\n#include <stddef.h>\n", P, P);
    for (int k = 0; k < t->n_keys; k++)
        if (t->keys[k].kind == GB_VAL_STR) {
            gb_sb_puts(sb, "#include <string.h>\n");
            break;
        }
    gb_sb_putc(sb, '\n');
    put_macros(sb, t, P);
    put_types(sb, t, p, P);
    put_data(sb, t, p, P);
    put_helpers(sb, t, p);
    put_exact(sb, t, p, P);
    put_lookup(sb, t, p, P);
    gb_sb_printf(sb, "\n#endif /* %s_TUNED_H */\n", P);
}

int gb_export_write_c(const gb_export_table *const *tables, int n_tables, const char *version,
                      gb_strbuf *out, gb_err *err)
{
    for (int i = 0; i < n_tables; i++) {
        if (!tables[i]->finished)
            return gb_err_set(err, GB_EINVAL, "kernel %s: the table is not finished",
                              tables[i]->kernel);
        if (strlen(tables[i]->prefix) > 200)
            return gb_err_set(err, GB_EINVAL, "kernel %s: the prefix is longer than 200",
                              tables[i]->kernel);
        for (int j = 0; j < i; j++)
            if (!strcasecmp(tables[i]->prefix, tables[j]->prefix))
                return gb_err_set(err, GB_EINVAL,
                                  "kernels %s and %s would share the prefix %s in one header",
                                  tables[j]->kernel, tables[i]->kernel, tables[i]->prefix);
    }
    for (int i = 0; i < n_tables; i++) {
        if (i) gb_sb_putc(out, '\n');
        put_table(out, tables[i], version);
    }
    if (gb_sb_status(out)) return gb_err_set(err, GB_ENOMEM, "out of memory");
    return GB_OK;
}
