/*
 * The outputs a command line asks for (report/output.h), shared by gpubench-tune
 * and `gpubench report`: the terminal table, --json, --csv, --html, and --out DIR
 * for all of them in one folder; and the run's context (date, host, command line,
 * versions) that every output heads its report with.
 */
#include "cli/outputs.h"
#include "engine/nvrtc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef GB_VERSION
#define GB_VERSION "0.0.0"
#endif

int gb_cli_outputs_option(gb_cli_outputs *o, int opt, const char *arg, const char *prog)
{
    switch (opt) {
    case GB_OPT_JSON:
        o->json = arg;
        return 0;
    case GB_OPT_CSV:
        o->csv = arg;
        return 0;
    case GB_OPT_HTML:
        o->html = arg;
        return 0;
    case GB_OPT_OUT:
        o->out_dir = arg;
        return 0;
    case GB_OPT_ASCII:
        o->ascii = true;
        return 0;
    case GB_OPT_CSV_FORMAT:
        if (strcmp(arg, "trials") == 0)
            o->csv_format = GB_CSV_TRIALS;
        else if (strcmp(arg, "cutlass") == 0)
            o->csv_format = GB_CSV_CUTLASS;
        else {
            fprintf(stderr, "%s: --csv-format is trials or cutlass, not '%s'\n", prog, arg);
            return 2;
        }
        o->csv_format_set = true;
        return 0;
    default:
        return -1;
    }
}

/* Colour on a terminal, unless NO_COLOR is set (https://no-color.org) or the
 * terminal is dumb. */
static bool want_color(FILE *stream)
{
    const char *no_color = getenv("NO_COLOR"), *term = getenv("TERM");
    if (no_color && *no_color) return false;
    if (term && strcmp(term, "dumb") == 0) return false;
    return isatty(fileno(stream));
}

/* mkdir -p: the folder and its parents. */
static int make_dir(const char *dir, gb_err *err)
{
    char path[4096];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path)
        return gb_err_set(err, GB_EINVAL, "--out %s: the path is too long", dir);
    for (char *p = path + 1;; p++) {
        bool last = *p == '\0';
        if (*p != '/' && !last) continue;
        *p = '\0';
        if (mkdir(path, 0777) != 0 && errno != EEXIST)
            return gb_err_set(err, errno, "--out %s: mkdir %s: %s", dir, path, strerror(errno));
        if (last) break;
        *p = '/';
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return gb_err_set(err, ENOTDIR, "--out %s: not a folder", dir);
    return GB_OK;
}

/* Adds *made to mux when it was made (rc 0). */
static int add(gb_output *mux, int rc, gb_output **made, gb_err *err)
{
    return rc ? rc : gb_output_mux_add(mux, *made, err);
}

/* A file is written at the end of the run: a folder that is not there, or not
 * writable, is said before the run starts, not after it. */
static int check_folder(const char *option, const char *path, gb_err *err)
{
    if (strcmp(path, "-") == 0) return GB_OK; /* stdout */
    char dir[4096];
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else
        snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    struct stat st;
    if (stat(dir, &st) != 0)
        return gb_err_set(err, errno, "%s %s: its folder %s: %s", option, path, dir,
                          strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return gb_err_set(err, ENOTDIR, "%s %s: %s is not a folder", option, path, dir);
    if (access(dir, W_OK) != 0)
        return gb_err_set(err, errno, "%s %s: its folder %s: %s", option, path, dir,
                          strerror(errno));
    return GB_OK;
}

/* The file outputs named by the options, into mux. */
static int add_files(const gb_cli_outputs *o, gb_output *mux, const char *json, const char *csv,
                     const char *html, gb_err *err)
{
    gb_output *out = NULL;
    int rc = GB_OK;
    if (json) rc = check_folder("--json", json, err);
    if (csv && rc == GB_OK) rc = check_folder("--csv", csv, err);
    if (html && rc == GB_OK) rc = check_folder("--html", html, err);
    if (json && rc == GB_OK) rc = add(mux, gb_output_json(json, &out, err), &out, err);
    if (csv && rc == GB_OK) rc = add(mux, gb_output_csv(csv, o->csv_format, &out, err), &out, err);
    if (html && rc == GB_OK) rc = add(mux, gb_output_html(html, NULL, &out, err), &out, err);
    return rc;
}

/* --out DIR: run.txt (the table, plain), run.json, run.csv, run.html. */
static int add_folder(gb_cli_outputs *o, gb_output *mux, const gb_table_opts *table, gb_err *err)
{
    char txt[4096], json[4096], csv[4096], html[4096];
    const char *csv_name = o->csv_format == GB_CSV_CUTLASS ? "run-cutlass.csv" : "run.csv";
    int rc = make_dir(o->out_dir, err);
    if (rc) return rc;
    snprintf(txt, sizeof txt, "%s/run.txt", o->out_dir);
    snprintf(json, sizeof json, "%s/run.json", o->out_dir);
    snprintf(csv, sizeof csv, "%s/%s", o->out_dir, csv_name);
    snprintf(html, sizeof html, "%s/run.html", o->out_dir);
    if (!(o->folder_table = fopen(txt, "w")))
        return gb_err_set(err, errno, "--out: %s: %s", txt, strerror(errno));
    gb_table_opts plain = *table;
    plain.color = false;
    gb_output *out = NULL;
    rc = add(mux, gb_output_table(o->folder_table, &plain, &out, err), &out, err);
    return rc ? rc : add_files(o, mux, json, csv, html, err);
}

int gb_cli_outputs_open(gb_cli_outputs *o, FILE *table_stream, const gb_table_opts *table,
                        gb_output **out, gb_err *err)
{
    gb_output *mux = NULL;
    int rc = gb_output_mux(&mux, err);
    gb_table_opts opts = *table;
    opts.ascii = opts.ascii || o->ascii;
    if (rc == GB_OK && table_stream) {
        opts.color = want_color(table_stream);
        gb_output *t = NULL;
        rc = add(mux, gb_output_table(table_stream, &opts, &t, err), &t, err);
        opts.color = false;
    }
    if (rc == GB_OK) rc = add_files(o, mux, o->json, o->csv, o->html, err);
    if (rc == GB_OK && o->out_dir) rc = add_folder(o, mux, &opts, err);
    if (rc) {
        gb_output_destroy(mux);
        return rc;
    }
    *out = mux;
    return GB_OK;
}

int gb_cli_outputs_close(gb_cli_outputs *o, gb_session *s, const char *prog)
{
    gb_err err = {0};
    int status = 0;
    if (gb_session_end_outputs(s, &err) != GB_OK) {
        fprintf(stderr, "%s: %s\n", prog, err.msg);
        status = 2;
    }
    if (o->folder_table && fclose(o->folder_table) != 0 && status == 0) {
        fprintf(stderr, "%s: --out %s: run.txt: %s\n", prog, o->out_dir, strerror(errno));
        status = 2;
    }
    o->folder_table = NULL;
    return status;
}

/* ---- the context ------------------------------------------------------------- */

char *gb_cli_join_args(int argc, char **argv)
{
    gb_strbuf sb = GB_STRBUF_INIT;
    for (int i = 0; i < argc; i++) {
        bool quote = argv[i][0] == '\0' || strpbrk(argv[i], " \t\n'\"\\$`*?;&|<>()") != NULL;
        if (i) gb_sb_putc(&sb, ' ');
        if (!quote) {
            gb_sb_puts(&sb, argv[i]);
            continue;
        }
        gb_sb_putc(&sb, '\'');
        for (const char *p = argv[i]; *p; p++)
            gb_sb_puts(&sb, *p == '\'' ? "'\\''" : (char[]){*p, '\0'});
        gb_sb_putc(&sb, '\'');
    }
    char *text = gb_sb_status(&sb) ? NULL : strdup(gb_sb_str(&sb));
    gb_sb_free(&sb);
    return text;
}

static char *now_iso8601(void)
{
    char text[40];
    time_t now = time(NULL);
    struct tm local;
    localtime_r(&now, &local);
    strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S%z", &local);
    /* +0100 -> +01:00, as ISO 8601 and Google Benchmark write it */
    size_t n = strlen(text);
    if (n > 5) {
        memmove(text + n - 1, text + n - 2, 3);
        text[n - 2] = ':';
    }
    return strdup(text);
}

int gb_cli_context_init(gb_run_context *ctx, const char *executable, const char *command_line,
                        const char *script, gb_err *err)
{
    memset(ctx, 0, sizeof *ctx);
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    ctx->schema_version = GB_REPORT_SCHEMA_VERSION;
    ctx->engine_version = strdup(GB_VERSION);
    ctx->date = now_iso8601();
    ctx->host_name = strdup(host);
    ctx->executable = strdup(executable);
    ctx->command_line = strdup(command_line ? command_line : "");
    ctx->script = script ? strdup(script) : NULL;
    ctx->num_cpus = cpus > 0 ? (int)cpus : 1;
    gb_nvrtc_version(ctx->nvrtc_version);
    if (!ctx->engine_version || !ctx->date || !ctx->host_name || !ctx->executable ||
        !ctx->command_line || (script && !ctx->script)) {
        gb_run_context_free(ctx);
        return gb_err_set(err, GB_ENOMEM, "out of memory");
    }
    return GB_OK;
}
