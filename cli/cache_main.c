/* gpubench cache COMMAND: the command line, its checks, and what the commands share.
 * The commands themselves are in cache_ls.c, cache_move.c and cache_upkeep.c. */
#include "cli/args.h"
#include "cli/cache_cli.h"
#include "cli/cli.h"
#include "engine/nvrtc.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#ifndef GB_VERSION
#define GB_VERSION "0.0.0"
#endif

static const char USAGE[] =
    "usage: %s cache COMMAND [arguments] [--cache DIR] [--json]\n"
    "\n"
    "What the cache holds, its upkeep, and moving results between machines.\n"
    "\n"
    "commands:\n"
    "  ls [--kernel K] [--device D] [--all | --stale]\n"
    "      the tuned shapes (kernel, shape, best configuration, its time, device) and\n"
    "      what else the cache holds (trials by status, compiled variants). Stale\n"
    "      results are hidden: --all lists them too, --stale only them, with why.\n"
    "  show KERNEL [SHAPE] [--device D]\n"
    "      a kernel's results: per shape and device the best, its statistics and\n"
    "      samples, and every trial by status with its reason. SHAPE is written as\n"
    "      ls prints it: K=1024,M=1024,N=1024 or dt=\"f32\",n=4096.\n"
    "  rm [--kernel K] [--shape SHAPE] [--device D] [--stale] [--dry-run]\n"
    "      removes the best records that match (with --stale: that are stale) and\n"
    "      their trials; --dry-run only counts them\n"
    "  save FILE [--kernel K] [--shape SHAPE] [--device D] [--cubins]   (or: export)\n"
    "      writes the best and trial records that match, and with --cubins the\n"
    "      cubins those trials name, to FILE ('-': standard output): a transfer\n"
    "      file, gpubench's versioned JSON format for moving results between caches\n"
    "  load FILE [--cubins]   (or: import)\n"
    "      folds a transfer file in ('-': standard input). Cubins are GPU code, so\n"
    "      they are taken only with --cubins: take them only from machines you trust\n"
    "  load --from kernel-tuner FILE --kernel NAME --shape SHAPE [--kernel-fp FP]\n"
    "       [--device D]\n"
    "      a Kernel Tuner cache file: each entry becomes a trial of kernel NAME at\n"
    "      SHAPE, the fastest the best. FP defaults to \"kernel-tuner-\" and a hash of\n"
    "      its tune_params, D to its device_name\n"
    "  merge DIR [--cubins]\n"
    "      folds the cache in DIR in; DIR is only read\n"
    "  verify\n"
    "      checks that every record decodes and sits under the key its content gives\n"
    "  gc [--unnamed] [--compact] [--dry-run]\n"
    "      removes the cubins that another NVRTC compiled, with --unnamed those that no\n"
    "      trial names too (a --compile-only run's, kept otherwise for a GPU to time),\n"
    "      and says how much that freed; --compact then shrinks the file (it needs the\n"
    "      cache to itself: no tuning run may have it open)\n"
    "  path\n"
    "      the cache's directory\n"
    "\n"
    "options:\n"
    "  --cache DIR   the cache: default $GPUBENCH_CACHE, else $XDG_CACHE_HOME/gpubench,\n"
    "                else ~/.cache/gpubench. Commands that only look (ls, show, verify,\n"
    "                rm, gc) on a directory that does not exist say \"no cache here yet\"\n"
    "                and create nothing.\n"
    "  --json        machine-readable output (every command but save and path)\n"
    "  --help        this text\n"
    "\n"
    "A best record is stale when a newer record exists for its kernel, device and\n"
    "shape (its kernel's fingerprint changed); when a file of its kernel's source, as\n"
    "recorded when it was tuned, now has other content; or when an older cache schema,\n"
    "gpubench or NVRTC than this one wrote it, or an older CUDA driver than the newest\n"
    "recorded for its device measured it (no driver is loaded to check).\n"
    "\n"
    "Equal keys in load and merge: the bests of two shards of one run (gpubench-tune\n"
    "--shard) are folded into one, the faster; otherwise a clean best (complete search\n"
    "of the whole space, not capped, no throttled samples, no other process on the\n"
    "GPU) beats one that is not, then more timed configurations win, then the newer.\n"
    "A finished trial beats one in flight, then the newer. A trial in flight\n"
    "elsewhere comes in as crashed. A cubin must match the one already there.\n"
    "\n"
    "exit status: 0 ok; 1 verify found problems, load or merge skipped records, or\n"
    "show found nothing; 2 usage or cache error.\n";

/* Which options each command takes. */
enum {
    OPT_KERNEL = 1 << 0,
    OPT_DEVICE = 1 << 1,
    OPT_SHAPE = 1 << 2,
    OPT_ALL = 1 << 3,
    OPT_STALE = 1 << 4,
    OPT_DRY_RUN = 1 << 5,
    OPT_CUBINS = 1 << 6,
    OPT_COMPACT = 1 << 7,
    OPT_FROM = 1 << 8,
    OPT_KERNEL_FP = 1 << 9,
    OPT_JSON = 1 << 10,
    OPT_UNNAMED = 1 << 11,
};

typedef struct command {
    const char *name;
    int (*run)(cache_args *a);
    unsigned options;
    int min_pos, max_pos;
    const char *takes; /* its arguments, as the usage writes them */
    const char *also;  /* its other name, or NULL: save and load were export and import
                          before the C header alone was an export */
} command;

static int cmd_path(cache_args *a)
{
    printf("%s\n", a->dir);
    return 0;
}

static const command COMMANDS[] = {
    {"ls", gb_cache_cmd_ls, OPT_KERNEL | OPT_DEVICE | OPT_ALL | OPT_STALE | OPT_JSON, 0, 0, "",
     NULL},
    {"show", gb_cache_cmd_show, OPT_DEVICE | OPT_JSON, 1, 2, "KERNEL [SHAPE]", NULL},
    {"rm", gb_cache_cmd_rm,
     OPT_KERNEL | OPT_DEVICE | OPT_SHAPE | OPT_STALE | OPT_DRY_RUN | OPT_JSON, 0, 0, "", NULL},
    {"save", gb_cache_cmd_save, OPT_KERNEL | OPT_DEVICE | OPT_SHAPE | OPT_CUBINS, 1, 1, "FILE",
     "export"},
    {"load", gb_cache_cmd_load,
     OPT_CUBINS | OPT_FROM | OPT_KERNEL | OPT_SHAPE | OPT_KERNEL_FP | OPT_DEVICE | OPT_JSON, 1, 1,
     "FILE", "import"},
    {"merge", gb_cache_cmd_merge, OPT_CUBINS | OPT_JSON, 1, 1, "DIR", NULL},
    {"verify", gb_cache_cmd_verify, OPT_JSON, 0, 0, "", NULL},
    {"gc", gb_cache_cmd_gc, OPT_COMPACT | OPT_DRY_RUN | OPT_UNNAMED | OPT_JSON, 0, 0, "", NULL},
    {"path", cmd_path, 0, 0, 0, "", NULL},
};

static const struct option LONG_OPTIONS[] = {
    {"cache", required_argument, NULL, 'c'},
    {"kernel", required_argument, NULL, 'k'},
    {"device", required_argument, NULL, 'd'},
    {"shape", required_argument, NULL, 's'},
    {"all", no_argument, NULL, 'a'},
    {"stale", no_argument, NULL, 'S'},
    {"dry-run", no_argument, NULL, 'n'},
    {"cubins", no_argument, NULL, 'b'},
    {"compact", no_argument, NULL, 'C'},
    {"from", required_argument, NULL, 'f'},
    {"kernel-fp", required_argument, NULL, 'F'},
    {"json", no_argument, NULL, 'j'},
    {"unnamed", no_argument, NULL, 'u'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static int usage_error(const cache_args *a, const char *msg, const char *what)
{
    fprintf(stderr, "%s cache%s%s: %s%s\n", a->prog, a->cmd ? " " : "", a->cmd ? a->cmd : "", msg,
            what);
    fprintf(stderr, "(`%s cache --help` lists the commands and their options)\n", a->prog);
    return 2;
}

/* Records the option; the command checks later that it takes it. */
static unsigned take_option(cache_args *a, int c)
{
    switch (c) {
    case 'c':
        a->dir = optarg;
        return 0;
    case 'k':
        a->kernel = optarg;
        return OPT_KERNEL;
    case 'd':
        a->device = optarg;
        return OPT_DEVICE;
    case 's':
        a->shape_text = optarg;
        return OPT_SHAPE;
    case 'a':
        a->all = true;
        return OPT_ALL;
    case 'S':
        a->stale = true;
        return OPT_STALE;
    case 'n':
        a->dry_run = true;
        return OPT_DRY_RUN;
    case 'b':
        a->cubins = true;
        return OPT_CUBINS;
    case 'C':
        a->compact = true;
        return OPT_COMPACT;
    case 'f':
        a->from = optarg;
        return OPT_FROM;
    case 'F':
        a->kernel_fp = optarg;
        return OPT_KERNEL_FP;
    case 'j':
        a->json = true;
        return OPT_JSON;
    case 'u':
        a->unnamed = true;
        return OPT_UNNAMED;
    default:
        return ~0u;
    }
}

static const char *option_name(unsigned bit)
{
    static const char *const names[] = {"--kernel", "--device",    "--shape",  "--all",
                                        "--stale",  "--dry-run",   "--cubins", "--compact",
                                        "--from",   "--kernel-fp", "--json",   "--unnamed"};
    for (unsigned i = 0; i < sizeof names / sizeof *names; i++)
        if (bit & 1u << i) return names[i];
    return "?";
}

/* Options, then the command and its arguments (in any order; getopt permutes). */
static int parse(cache_args *a, int argc, char **argv, const command **out)
{
    unsigned given = 0;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", LONG_OPTIONS, NULL)) != -1) {
        if (c == '?') return gb_cli_bad_option(a->prog, "cache", argv, LONG_OPTIONS);
        if (c == 'h') return printf(USAGE, a->prog), -1;
        unsigned bit = take_option(a, c);
        if (bit == ~0u) return usage_error(a, "unknown option or missing argument", "");
        given |= bit;
    }
    if (optind >= argc) return usage_error(a, "no command", "");
    a->cmd = argv[optind];
    a->pos = argv + optind + 1;
    a->n_pos = argc - optind - 1;
    for (size_t i = 0; i < sizeof COMMANDS / sizeof *COMMANDS; i++)
        if (!strcmp(a->cmd, COMMANDS[i].name) ||
            (COMMANDS[i].also && !strcmp(a->cmd, COMMANDS[i].also)))
            *out = &COMMANDS[i];
    if (!*out) {
        const char *cmd = a->cmd;
        a->cmd = NULL;
        return usage_error(a, "unknown command: ", cmd);
    }
    unsigned extra = given & ~(*out)->options;
    if (extra) return usage_error(a, "not an option of this command: ", option_name(extra));
    if (a->n_pos < (*out)->min_pos) { /* name the first one missing: its word in `takes` */
        const char *word = (*out)->takes;
        for (int i = 0; i < a->n_pos && strchr(word, ' '); i++)
            word = strchr(word, ' ') + 1;
        char what[128];
        snprintf(what, sizeof what, "%.*s (it takes %s)", (int)strcspn(word, " "), word,
                 (*out)->takes);
        return usage_error(a, "missing argument ", what);
    }
    if (a->n_pos > (*out)->max_pos)
        return usage_error(a, "unexpected argument: ", a->pos[(*out)->max_pos]);
    if (a->all && a->stale) return usage_error(a, "--all and --stale exclude each other", "");
    return 0;
}

static int prepare(cache_args *a)
{
    gb_err err = {0};
    if (!a->dir) {
        if (gb_cache_default_dir(a->default_dir, sizeof a->default_dir, &err))
            return gb_cache_cli_fail(a, err.msg);
        a->dir = a->default_dir;
    }
    if (a->shape_text && gb_cache_parse_shape(a->shape_text, &a->shape, &err))
        return usage_error(a, err.msg, "");
    gb_nvrtc_version(a->nvrtc);
    a->now = (gb_cache_versions){.engine = GB_VERSION, .nvrtc = a->nvrtc};
    a->filter = (gb_cache_filter){
        .kernel = a->kernel, .device = a->device, .shape = a->shape_text ? &a->shape : NULL};
    return 0;
}

int gb_cli_cache(int argc, char **argv)
{
    cache_args a = {.prog = argv[0]};
    const command *cmd = NULL;
    int status = parse(&a, argc, argv, &cmd);
    if (status) return status < 0 ? 0 : status;
    if (!(status = prepare(&a))) status = cmd->run(&a);
    gb_fields_free(&a.shape);
    return status;
}

/* ---- shared --------------------------------------------------------------- */

int gb_cache_cli_fail(const cache_args *a, const char *msg)
{
    fprintf(stderr, "%s cache %s: %s\n", a->prog, a->cmd, msg);
    return 2;
}

void gb_cache_cli_note(void *ctx, const char *msg)
{
    const cache_args *a = ctx;
    char clean[GB_ERR_MSG_BYTES + 256];
    fprintf(stderr, "%s cache %s: %s\n", a->prog, a->cmd,
            gb_cache_cli_text(msg, clean, sizeof clean));
}

int gb_cache_cli_open(cache_args *a, bool writable, bool create, gb_cache **out)
{
    gb_err err = {0};
    char data[4200];
    struct stat st;
    *out = NULL;
    snprintf(data, sizeof data, "%s/data.mdb", a->dir);
    if (!create && stat(data, &st) != 0 && errno == ENOENT) return 0;
    if (gb_cache_open(a->dir, writable ? 0 : GB_CACHE_READONLY, out, &err))
        return gb_cache_cli_fail(a, err.msg);
    return 0;
}

int gb_cache_cli_no_cache(const cache_args *a)
{
    if (a->json)
        return gb_cache_cli_print_json(json_pack("{s:s, s:b}", "cache", a->dir, "exists", 0));
    printf("%s: no cache here yet\n", a->dir);
    return 0;
}

const char *gb_cache_cli_text(const char *s, char *buf, size_t n)
{
    size_t k = 0;
    for (const unsigned char *p = (const unsigned char *)(s ? s : "");
         *p && *p != '\n' && k + 1 < n; p++)
        buf[k++] = *p < 0x20 || *p == 0x7f ? '?' : (char)*p;
    buf[k] = '\0';
    return buf;
}

void gb_cache_cli_bytes(double bytes, char *buf, size_t n)
{
    if (bytes < 1e3)
        snprintf(buf, n, "%.0f B", bytes);
    else if (bytes < 1e6)
        snprintf(buf, n, "%.1f kB", bytes / 1e3);
    else if (bytes < 1e9)
        snprintf(buf, n, "%.1f MB", bytes / 1e6);
    else
        snprintf(buf, n, "%.2f GB", bytes / 1e9);
}

void gb_cache_cli_when(int64_t when, char *buf, size_t n)
{
    time_t t = (time_t)when;
    struct tm tm;
    if (!localtime_r(&t, &tm) || !strftime(buf, n, "%Y-%m-%d %H:%M", &tm)) snprintf(buf, n, "-");
}

int gb_cache_cli_print_json(json_t *json)
{
    if (!json) return fprintf(stderr, "gpubench cache: out of memory\n"), 2;
    json_dumpf(json, stdout, JSON_INDENT(2));
    fputc('\n', stdout);
    json_decref(json);
    return 0;
}

json_t *gb_cache_cli_counts_json(const gb_transfer_counts *c)
{
    return json_pack("{s:I, s:I, s:I, s:I, s:I}", "imported", (json_int_t)c->imported, "replaced",
                     (json_int_t)c->replaced, "kept", (json_int_t)c->kept, "combined",
                     (json_int_t)c->combined, "skipped", (json_int_t)c->skipped);
}
