/* The --compile-only table: a row per distinct compile, each distinct compiler
 * error once below it (in full with -v), and a summary line (report/table.h). */
#include "report/table.h"

#include <stdlib.h>
#include <string.h>

#define FIRST_ERROR_BYTES 1024

/* Compiles that failed the same way: rows are grouped by their first diagnostic,
 * with or without -v, so the numbers match. The whole outputs of a group may
 * still differ in later lines (a template's errors name the instantiation). */
typedef struct error_group {
    const char *text;              /* the whole output of the group's first row */
    char first[FIRST_ERROR_BYTES]; /* the first diagnostic they share */
    const gb_compile_row **rows;
    int n_rows;
} error_group;

typedef struct error_groups {
    error_group *groups;
    int n_groups;
    int *group_of; /* per row: index into groups, or -1 */
    bool failed;   /* out of memory: the table says so */
} error_groups;

static int find_group(const error_groups *g, const char *first)
{
    for (int i = 0; i < g->n_groups; i++)
        if (!strcmp(g->groups[i].first, first)) return i;
    return -1;
}

static int add_to_group(error_groups *g, const gb_compile_row *row)
{
    char first[FIRST_ERROR_BYTES];
    gb_nvrtc_first_error(row->error, first, sizeof first);
    int i = find_group(g, first);
    if (i < 0) {
        i = g->n_groups++;
        memset(&g->groups[i], 0, sizeof g->groups[i]);
        g->groups[i].text = row->error;
        memcpy(g->groups[i].first, first, sizeof first);
    }
    error_group *e = &g->groups[i];
    const gb_compile_row **rows = realloc(e->rows, (size_t)(e->n_rows + 1) * sizeof *rows);
    if (!rows) return -1;
    e->rows = rows;
    e->rows[e->n_rows++] = row;
    return i;
}

static error_groups group_errors(const gb_tune_result *r)
{
    error_groups g = {0};
    size_t n = r->n_compiles > 0 ? (size_t)r->n_compiles : 1;
    g.groups = calloc(n, sizeof *g.groups);
    g.group_of = calloc(n, sizeof *g.group_of);
    if (!g.groups || !g.group_of) {
        g.failed = true;
        return g;
    }
    for (int i = 0; i < r->n_compiles; i++) {
        g.group_of[i] = r->compiles[i].error ? add_to_group(&g, &r->compiles[i]) : -1;
        g.failed = g.failed || (r->compiles[i].error && g.group_of[i] < 0);
    }
    return g;
}

static void free_groups(error_groups *g)
{
    for (int i = 0; i < g->n_groups; i++)
        free(g->groups[i].rows);
    free(g->groups);
    free(g->group_of);
}

/* ---- the rows -------------------------------------------------------------- */

static void config_text(gb_strbuf *sb, const gb_fields *config)
{
    size_t before = sb->len;
    gb_fields_append_canonical(sb, config, NULL, 0);
    if (sb->len == before) gb_sb_puts(sb, "-"); /* no parameters: the reference */
}

static void compile_row(gb_table *t, const gb_compile_row *row, int group)
{
    gb_strbuf sb = GB_STRBUF_INIT;
    config_text(&sb, &row->config);
    gb_table_cell(t, "%s", gb_sb_str(&sb));
    gb_sb_free(&sb);
    if (row->error) {
        for (int i = 0; i < 5; i++)
            gb_table_cell(t, "-");
        gb_table_cell(t, "error %d", group + 1);
        return;
    }
    const gb_resources *r = &row->resources;
    gb_table_cell(t, "%d", r->registers);
    gb_table_cell(t, "%d", r->stack_bytes);
    if (r->spill_store_bytes >= 0)
        gb_table_cell(t, "%d", r->spill_store_bytes + r->spill_load_bytes);
    else
        gb_table_cell(t, "?"); /* ptxas did not report it */
    gb_table_cell(t, "%d", r->smem_static_bytes);
    gb_table_cell(t, "%.0f", row->compile_ms);
    if (row->limit)
        gb_table_cell(t, "over limits: %s", row->limit);
    else
        gb_table_cell(t, "%s", row->cached ? "cache" : "compiled");
}

/* ---- the errors below the table --------------------------------------------- */

/* The compiler's output, indented, without trailing blanks or blank lines. */
static void print_indented(FILE *out, const char *text)
{
    size_t len = strlen(text);
    while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == ' '))
        len--;
    for (const char *line = text, *end = text + len; line < end;) {
        const char *eol = memchr(line, '\n', (size_t)(end - line));
        size_t n = eol ? (size_t)(eol - line) : (size_t)(end - line), shown = n;
        while (shown > 0 && (line[shown - 1] == ' ' || line[shown - 1] == '\r'))
            shown--;
        if (shown)
            fprintf(out, "    %.*s\n", (int)shown, line);
        else
            fputc('\n', out);
        line += n + 1;
    }
}

static void print_group_verbose(FILE *out, const error_group *e, int number)
{
    gb_strbuf sb = GB_STRBUF_INIT;
    bool same = true;
    for (int i = 0; i < e->n_rows; i++) {
        if (i) gb_sb_puts(&sb, "; ");
        config_text(&sb, &e->rows[i]->config);
        same = same && !strcmp(e->rows[i]->error, e->text);
    }
    fprintf(out, "  error %d, in %d configuration%s: %s\n", number, e->n_rows,
            e->n_rows == 1 ? "" : "s", gb_sb_str(&sb));
    print_indented(out, e->text);
    if (!same) {
        gb_sb_reset(&sb);
        config_text(&sb, &e->rows[0]->config);
        fprintf(out, "    (the output for %s; for the others it differs after the first error)\n",
                gb_sb_str(&sb));
    }
    gb_sb_free(&sb);
}

/* Whether -v would show more than the first diagnostic of some error. */
static bool more_with_verbose(const error_groups *g)
{
    for (int i = 0; i < g->n_groups; i++)
        if (strchr(g->groups[i].text, '\n') || strcmp(g->groups[i].text, g->groups[i].first))
            return true;
    return false;
}

static void print_errors(FILE *out, const error_groups *g, bool verbose)
{
    for (int i = 0; i < g->n_groups; i++) {
        const error_group *e = &g->groups[i];
        if (verbose)
            print_group_verbose(out, e, i + 1);
        else
            fprintf(out, "  error %d (%d configuration%s): %s\n", i + 1, e->n_rows,
                    e->n_rows == 1 ? "" : "s", e->first);
    }
    if (!verbose && more_with_verbose(g)) fprintf(out, "  -v shows the full compiler output\n");
}

/* ---- the summary line -------------------------------------------------------- */

/* "4 rejected by constraints", per shape when the shapes differ. */
static void rejected_text(gb_strbuf *out, const gb_tune_result *r)
{
    uint64_t lo = UINT64_MAX, hi = 0;
    for (int i = 0; i < r->n_shapes; i++) {
        uint64_t n = r->shapes[i].n_rejected;
        lo = n < lo ? n : lo;
        hi = n > hi ? n : hi;
    }
    if (r->n_shapes == 0) lo = 0;
    if (lo == hi && lo > 0 && r->n_shapes > 1)
        gb_sb_printf(out, "%llu rejected by constraints in each of %d shapes",
                     (unsigned long long)lo, r->n_shapes);
    else if (lo == hi)
        gb_sb_printf(out, "%llu rejected by constraints", (unsigned long long)lo);
    else
        gb_sb_printf(out, "%llu to %llu rejected by constraints per shape", (unsigned long long)lo,
                     (unsigned long long)hi);
}

void gb_compile_summary(gb_strbuf *out, const gb_tune_result *r, const char *arch, int jobs)
{
    int compiled = 0, cached = 0, failed = 0, over = 0;
    for (int i = 0; i < r->n_compiles; i++) {
        const gb_compile_row *row = &r->compiles[i];
        failed += row->error != NULL;
        over += !row->error && row->limit;
        compiled += !row->error && !row->limit;
        cached += !row->error && !row->limit && row->cached;
    }
    gb_sb_printf(out, "%d compiled", compiled);
    if (cached) gb_sb_printf(out, " (%d from the cache)", cached);
    gb_sb_printf(out, ", %d failed, ", failed);
    rejected_text(out, r);
    if (r->arch[0]) arch = r->arch;
    if (over && arch)
        gb_sb_printf(out, ", %d over %s's limits", over, arch);
    else if (over)
        gb_sb_printf(out, ", %d over the target's limits", over);
    int threads = r->timing.compile_threads ? r->timing.compile_threads : jobs;
    if (threads < 1) threads = 1; /* 0: on the tuner's own thread */
    gb_sb_printf(out, "; NVRTC %.1f s over %d thread%s", r->timing.compile_cpu_s, threads,
                 threads == 1 ? "" : "s");
}

void gb_report_compiles(FILE *out, const gb_tune_result *r, const gb_report_opts *opts)
{
    static const char *const headers[] = {"config", "regs", "local B", "spill B",
                                          "smem B", "ms",   "",        NULL};
    error_groups groups = group_errors(r);
    gb_table t;
    gb_table_init(&t, headers, "lrrrrrl");
    for (int i = 0; i < r->n_compiles && !groups.failed; i++)
        compile_row(&t, &r->compiles[i], groups.group_of[i]);
    t.failed = t.failed || groups.failed;
    gb_table_print(&t, out);
    gb_table_free(&t);
    if (!groups.failed) print_errors(out, &groups, opts->verbose);
    gb_strbuf summary = GB_STRBUF_INIT;
    gb_compile_summary(&summary, r, opts->arch, opts->jobs);
    fprintf(out, "  %s\n", gb_sb_status(&summary) ? "(out of memory)" : gb_sb_str(&summary));
    gb_sb_free(&summary);
    if (r->reference_lib[0])
        fprintf(out, "  the reference is a %s call: not compiled\n", r->reference_lib);
    free_groups(&groups);
}
