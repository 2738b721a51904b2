/* gpubench-tune SCRIPT [options] [-- script arguments] */
#include "cache/cache.h"
#include "cli/args.h"
#include "cli/cli.h"
#include "cli/common.h"
#include "cli/outputs.h"
#include "engine/arch.h"
#include "exec/exec.h"
#include "exec/interrupt.h"
#include "exec/worker.h"
#include "lua/binding.h"
#include "report/progress.h"

#include <getopt.h>
#include <lauxlib.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef GB_VERSION
#define GB_VERSION "0.0.0"
#endif
#ifndef GB_SOURCE_TEMPLATES
#define GB_SOURCE_TEMPLATES ""
#endif
#ifndef GB_INSTALL_TEMPLATES
#define GB_INSTALL_TEMPLATES ""
#endif
#ifndef GB_TEMPLATES_FROM_BIN
#define GB_TEMPLATES_FROM_BIN "../share/gpubench/templates"
#endif

#define MAX_TEMPLATE_DIRS 32

static const char USAGE[] =
    "usage: %s SCRIPT [options] [-- script arguments]\n"
    "\n"
    "Tunes the CUDA kernels a Lua script describes: every configuration of each\n"
    "kernel's space is compiled with NVRTC, checked against the reference and timed\n"
    "on the GPU; the best per shape is kept in the cache and printed as a table.\n"
    "Without a GPU, every variant is compiled and its registers and spills shown.\n"
    "\n"
    "options:\n"
    "  --cache DIR      the cache (default $GPUBENCH_CACHE, else $XDG_CACHE_HOME/gpubench,\n"
    "                   else ~/.cache/gpubench)\n"
    "  --no-cache       keep nothing: no cached results, no cubins\n"
    "  --force          re-tune shapes that have a cached best\n"
    "  --compile-only   compile every variant, report registers and spills and what\n"
    "                   exceeds ARCH's limits, time nothing\n"
    "  --arch ARCH      compile for ARCH: sm_XY, sm_XYa or sm_XYf, one this NVRTC\n"
    "                   supports (default: the GPU's when timing; sm_90a with\n"
    "                   --compile-only or without a GPU)\n"
    "  --require-gpu    exit with status 3 when there is no usable GPU\n"
    "  --device N       the GPU to use (default 0)\n"
    "  --gpus LIST      run trials on several GPUs at once: 'all', or ordinals such\n"
    "                   as 0,1 (one worker per GPU, each holding its GPU's lease;\n"
    "                   the leaders race and the baseline runs on the first). The\n"
    "                   GPUs must be of one kind\n"
    "  --jobs N         compile threads (default: the number of CPUs)\n"
    "  --seed N         seed of the argument buffers and of the search strategies\n"
    "                   (default 1; a gb.tune{ seed = } wins for its strategy)\n"
    "  --strategy NAME  search every kernel's space with NAME, over what the script\n"
    "                   says: exhaustive, random, anneal, genetic, local or auto\n"
    "  --exhaustive-max N  the default rule, for a gb.tune that names no strategy and\n"
    "                   no budget: exhaustive when the space holds at most N valid\n"
    "                   configurations (default 512), else auto ...\n"
    "  --auto-evals N   ... with a budget of N evaluations (default 200); also the\n"
    "                   budget of a named strategy other than exhaustive without one\n"
    "  --no-spills      skip variants whose compile spills registers to local memory\n"
    "  --shard I/N      tune only shard I (from 0) of N: a fixed part of every space,\n"
    "                   the same in every process that runs the script; 'auto' takes\n"
    "                   I and N from a Slurm array, an MPI launcher, srun or a\n"
    "                   Kubernetes indexed Job. Merge the shards' caches with\n"
    "                   `gpubench cache merge` (docs/cluster.md)\n"
    "  --mode MODE      cold (default: L2 flushed before each sample) or hot (a CUDA\n"
    "                   graph of back-to-back launches); over a kernel's measure.mode\n"
    "  --noise X        stop once the median's 95%% interval is within +/-X (default\n"
    "                   0.005, that is +/-0.5%%)\n"
    "  --max-ms MS      cap on the sampling time of one variant, in ms (default 1000)\n"
    "  --samples N      exactly N samples per variant (no adaptive stop; for ncu)\n"
    "  --timer T        what times a sample: auto (default: CUPTI's kernel records,\n"
    "                   stamped by the GPU, where CUPTI works; else CUDA events), cupti\n"
    "                   (fail rather than fall back) or events\n"
    "  --throttle-threshold X  samples taken with the SM clock below X times its\n"
    "                   peak are tagged throttled and left out of the statistics\n"
    "                   (default 0.75; 0 keeps every sample)\n"
    "  --trial-timeout S  the watchdog's cap for one trial, in seconds (default 60);\n"
    "                   below it a trial gets 10x the shape's typical trial, at least 5 s\n"
    "  --retry-crashed  run again the trials an earlier run recorded as crashed or\n"
    "                   timed out (by default a rerun resumes and skips them)\n"
    "  --lease-wait S   when another gpubench process is measuring on the GPU, wait\n"
    "                   up to S seconds for it (default 3600; 0: do not wait;\n"
    "                   'forever'), then give up with exit status 3\n"
    "  --export-header OUT.h  after the run, write the tuned table of each kernel the\n"
    "                   script tuned (on this run's device) to OUT.h, prefixed by the\n"
    "                   kernel's name (see `gpubench export --help`)\n" GB_CLI_OUTPUT_USAGE
    "  -v, --verbose    a line for every trial; with --compile-only, each compile\n"
    "                   error's whole compiler output\n"
    "  -q, --quiet      no progress display and no result tables (files named by\n"
    "                   --json, --csv, --html and --out are still written)\n"
    "  -h, --help       this text\n"
    "      --version    the version\n"
    "\n"
    "Progress shows on stderr: a status line redrawn in place on a terminal (with\n"
    "TERM=dumb, or when stderr is not a terminal, a plain line when a shape starts,\n"
    "every 10 s or quarter of the way, and when it ends).\n"
    "\n"
    "Every variant runs in a GPU worker process: one that faults or hangs is\n"
    "recorded as crashed or timeout, and a fresh worker carries on. Every trial is\n"
    "in the cache as soon as it ends, so an interrupted run resumes where it stopped.\n"
    "\n"
    "Only one gpubench process measures on a GPU at a time: it holds the GPU's lease\n"
    "(a lock file in $GPUBENCH_LEASE_DIR, else /tmp/gpubench-leases) while it does.\n"
    "\n"
    "exit status: 0 done; 1 a shape has no valid variant; 2 usage or script error;\n"
    "3 no usable GPU (with --require-gpu), or the GPU stayed in use by another\n"
    "process for the whole --lease-wait; 130 interrupted (Ctrl-C).\n";

typedef struct tune_args {
    const char *script;
    const char *cache_dir;
    const char *export_header;
    const char *shard; /* --shard as given: "i/n" or "auto" */
    bool no_cache, quiet;
    gb_cli_outputs outputs;
    char *command_line; /* as typed: getopt permutes argv */
    int device;
    int n_script_args;
    char **script_args;
} tune_args;

/* Seeds travel through JSON, whose numbers are exact up to 2^53. */
static int parse_seed(const char *prog, const char *text, uint64_t *out)
{
    char *end = NULL;
    unsigned long long v = strtoull(text, &end, 10);
    if (!*text || *end || *text == '-' || v > (1ull << 53)) {
        fprintf(stderr, "%s: --seed needs an integer from 0 to 2^53, got '%s'\n", prog, text);
        return 2;
    }
    *out = v;
    return 0;
}

/* A number above 0 and at most 1e6: seconds, milliseconds or a fraction, as the
 * option says. */
static int parse_positive(const char *prog, const char *opt, const char *text, double *out)
{
    char *end = NULL;
    double v = strtod(text, &end);
    if (!*text || *end || !(v > 0) || v > 1e6) {
        fprintf(stderr, "%s: %s needs a number above 0 and at most 1e6, got '%s'\n", prog, opt,
                text);
        return 2;
    }
    *out = v;
    return 0;
}

/* --lease-wait: seconds from 0 to 1e6, or "forever" (-1). */
static int parse_lease_wait(const char *prog, const char *text, double *out)
{
    char *end = NULL;
    double v = strtod(text, &end);
    if (strcmp(text, "forever") == 0) {
        *out = -1;
        return 0;
    }
    if (!*text || *end || !(v >= 0) || v > 1e6) {
        fprintf(stderr, "%s: --lease-wait needs seconds from 0 to 1e6 or 'forever', got '%s'\n",
                prog, text);
        return 2;
    }
    *out = v;
    return 0;
}

static int parse_int(const char *prog, const char *opt, const char *text, int lo, int *out)
{
    char *end = NULL;
    long v = strtol(text, &end, 10);
    if (!*text || *end || v < lo || v > 1 << 20) {
        fprintf(stderr, "%s: %s needs an integer >= %d, got '%s'\n", prog, opt, lo, text);
        return 2;
    }
    *out = (int)v;
    return 0;
}

enum {
    OPT_CACHE = 256,
    OPT_NO_CACHE,
    OPT_FORCE,
    OPT_COMPILE_ONLY,
    OPT_ARCH,
    OPT_REQUIRE_GPU,
    OPT_DEVICE,
    OPT_JOBS,
    OPT_SEED,
    OPT_TRIAL_TIMEOUT,
    OPT_RETRY_CRASHED,
    OPT_MODE,
    OPT_NOISE,
    OPT_MAX_MS,
    OPT_SAMPLES,
    OPT_TIMER,
    OPT_THROTTLE,
    OPT_LEASE_WAIT,
    OPT_EXPORT_HEADER,
    OPT_STRATEGY,
    OPT_EXHAUSTIVE_MAX,
    OPT_AUTO_EVALS,
    OPT_NO_SPILLS,
    OPT_SHARD,
    OPT_GPUS,
    OPT_VERSION
};

static const struct option long_options[] = {
    {"cache", required_argument, NULL, OPT_CACHE},
    {"no-cache", no_argument, NULL, OPT_NO_CACHE},
    {"force", no_argument, NULL, OPT_FORCE},
    {"compile-only", no_argument, NULL, OPT_COMPILE_ONLY},
    {"arch", required_argument, NULL, OPT_ARCH},
    {"require-gpu", no_argument, NULL, OPT_REQUIRE_GPU},
    {"device", required_argument, NULL, OPT_DEVICE},
    {"jobs", required_argument, NULL, OPT_JOBS},
    {"seed", required_argument, NULL, OPT_SEED},
    {"trial-timeout", required_argument, NULL, OPT_TRIAL_TIMEOUT},
    {"retry-crashed", no_argument, NULL, OPT_RETRY_CRASHED},
    {"mode", required_argument, NULL, OPT_MODE},
    {"noise", required_argument, NULL, OPT_NOISE},
    {"max-ms", required_argument, NULL, OPT_MAX_MS},
    {"samples", required_argument, NULL, OPT_SAMPLES},
    {"timer", required_argument, NULL, OPT_TIMER},
    {"throttle-threshold", required_argument, NULL, OPT_THROTTLE},
    {"lease-wait", required_argument, NULL, OPT_LEASE_WAIT},
    {"export-header", required_argument, NULL, OPT_EXPORT_HEADER},
    {"strategy", required_argument, NULL, OPT_STRATEGY},
    {"exhaustive-max", required_argument, NULL, OPT_EXHAUSTIVE_MAX},
    {"auto-evals", required_argument, NULL, OPT_AUTO_EVALS},
    {"no-spills", no_argument, NULL, OPT_NO_SPILLS},
    {"shard", required_argument, NULL, OPT_SHARD},
    {"gpus", required_argument, NULL, OPT_GPUS},
    GB_CLI_OUTPUT_LONG_OPTIONS,
    {"verbose", no_argument, NULL, 'v'},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, OPT_VERSION},
    {NULL, 0, NULL, 0},
};

static int parse_strategy(const char *prog, const char *name, const char **out)
{
    if (gb_strategy_find(name)) {
        *out = name;
        return 0;
    }
    gb_strbuf names = GB_STRBUF_INIT;
    gb_strategy_append_names(&names);
    fprintf(stderr, "%s: --strategy is one of %s, not '%s'\n", prog, gb_sb_str(&names), name);
    gb_sb_free(&names);
    return 2;
}

/* --timer, --throttle-threshold: the run's, which no measure table sets. */
static int timer_option(int c, const char *prog, gb_lua_host *h)
{
    gb_measure_opts *m = &h->session.tuner.measure;
    if (c == OPT_TIMER) {
        if (gb_timer_parse(optarg, &m->timer) == GB_OK) return 0;
        fprintf(stderr, "%s: --timer is auto, cupti or events, not '%s'\n", prog, optarg);
        return 2;
    }
    char *end = NULL;
    double x = strtod(optarg, &end);
    if (end != optarg && !*end && x >= 0 && x < 1) {
        m->throttle_threshold = x;
        return 0;
    }
    fprintf(stderr,
            "%s: --throttle-threshold is a share of the peak SM clock, at least 0 and below 1 "
            "(0.75 is 75%%), not '%s'\n",
            prog, optarg);
    return 2;
}

/* --mode, --noise, --max-ms, --samples: they override a kernel's measure table. */
static int measure_option(int c, const char *prog, gb_lua_host *h)
{
    gb_measure_opts *m = &h->session.tuner.measure;
    int n = 0;
    switch (c) {
    case OPT_MODE:
        if (gb_measure_mode_parse(optarg, &m->mode) != GB_OK) {
            fprintf(stderr, "%s: --mode is cold or hot, not '%s'\n", prog, optarg);
            return 2;
        }
        h->measure_set |= GB_MEASURE_SET_MODE;
        return 0;
    case OPT_NOISE:
        if (parse_positive(prog, "--noise", optarg, &m->noise)) return 2;
        if (m->noise >= 1) {
            fprintf(stderr, "%s: --noise is a fraction below 1 (0.005 is +/-0.5%%), not '%s'\n",
                    prog, optarg);
            return 2;
        }
        h->measure_set |= GB_MEASURE_SET_NOISE;
        return 0;
    case OPT_MAX_MS:
        if (parse_positive(prog, "--max-ms", optarg, &m->max_ms)) return 2;
        h->measure_set |= GB_MEASURE_SET_MAX_MS;
        return 0;
    default:
        if (parse_int(prog, "--samples", optarg, 1, &n)) return 2;
        m->min_samples = m->max_samples = n;
        m->max_ms = 1e9; /* the count decides */
        h->measure_set |= GB_MEASURE_SET_SAMPLES | GB_MEASURE_SET_MAX_MS;
        return 0;
    }
}

/* --gpus all, or a list of distinct ordinals ("0,1,3"); the first is the one
 * --device would name. */
static int parse_gpus(const char *prog, const char *text, tune_args *a, gb_lua_host *h)
{
    if (strcmp(text, "all") == 0) {
        h->session.n_gpus = -1;
        a->device = 0;
        return 0;
    }
    int n = 0;
    for (const char *p = text; *p; n++) {
        char *end = NULL;
        long v = strtol(p, &end, 10);
        bool ok = end != p && *p >= '0' && *p <= '9' && v <= 1 << 20 && (*end == ',' || !*end);
        for (int i = 0; ok && i < n; i++)
            ok = h->session.gpus[i] != (int)v;
        if (!ok || n == GB_POOL_MAX) {
            fprintf(stderr,
                    "%s: --gpus is 'all' or distinct GPU ordinals separated by commas (at most "
                    "%d), not '%s'\n",
                    prog, GB_POOL_MAX, text);
            return 2;
        }
        h->session.gpus[n] = (int)v;
        p = *end ? end + 1 : end;
    }
    h->session.n_gpus = n;
    a->device = h->session.gpus[0];
    return 0;
}

/* Returns -1 to go on, or an exit status. */
static int apply_option(int c, const char *prog, tune_args *a, gb_lua_host *h)
{
    switch (c) {
    case OPT_CACHE:
        a->cache_dir = optarg;
        return -1;
    case OPT_NO_CACHE:
        a->no_cache = true;
        return -1;
    case OPT_FORCE:
        h->session.tuner.force = true;
        return -1;
    case OPT_COMPILE_ONLY:
        h->session.tuner.compile_only = true;
        return -1;
    case OPT_ARCH:
        h->session.tuner.arch = optarg;
        return -1;
    case OPT_REQUIRE_GPU:
        h->session.require_gpu = true;
        return -1;
    case OPT_DEVICE:
        return parse_int(prog, "--device", optarg, 0, &a->device) ? 2 : -1;
    case OPT_JOBS:
        return parse_int(prog, "--jobs", optarg, 0, &h->session.tuner.jobs) ? 2 : -1;
    case OPT_SEED:
        return parse_seed(prog, optarg, &h->session.tuner.seed) ? 2 : -1;
    case OPT_TRIAL_TIMEOUT:
        return parse_positive(prog, "--trial-timeout", optarg, &h->session.tuner.trial_timeout_s)
                   ? 2
                   : -1;
    case OPT_RETRY_CRASHED:
        h->session.tuner.retry_crashed = true;
        return -1;
    case OPT_LEASE_WAIT:
        return parse_lease_wait(prog, optarg, &h->session.lease.wait_s) ? 2 : -1;
    case OPT_EXPORT_HEADER:
        a->export_header = optarg;
        return -1;
    case OPT_STRATEGY:
        return parse_strategy(prog, optarg, &h->session.tuner.strategy) ? 2 : -1;
    case OPT_EXHAUSTIVE_MAX:
        return parse_int(prog, "--exhaustive-max", optarg, 1, &h->session.tuner.exhaustive_max)
                   ? 2
                   : -1;
    case OPT_AUTO_EVALS:
        return parse_int(prog, "--auto-evals", optarg, 1, &h->session.tuner.auto_evals) ? 2 : -1;
    case OPT_NO_SPILLS:
        h->session.tuner.no_spills = true;
        return -1;
    case OPT_SHARD:
        a->shard = optarg;
        return -1;
    case OPT_GPUS:
        return parse_gpus(prog, optarg, a, h) ? 2 : -1;
    case OPT_MODE:
    case OPT_NOISE:
    case OPT_MAX_MS:
    case OPT_SAMPLES:
        return measure_option(c, prog, h) ? 2 : -1;
    case OPT_TIMER:
    case OPT_THROTTLE:
        return timer_option(c, prog, h) ? 2 : -1;
    case 'v':
        h->session.tuner.verbose = true;
        return -1;
    case 'q':
        a->quiet = true;
        return -1;
    case 'h':
        printf(USAGE, prog);
        return 0;
    case OPT_VERSION:
        printf("gpubench %s\n", GB_VERSION);
        return 0;
    default: {
        int taken = gb_cli_outputs_option(&a->outputs, c, optarg, prog);
        if (taken >= 0) return taken ? 2 : -1;
        fprintf(stderr, USAGE, prog);
        return 2;
    }
    }
}

/* --shard i/n, or auto: the scheduler's variables (tuner/shard.h). */
static int parse_shard(const char *prog, const tune_args *a, gb_lua_host *h)
{
    gb_err err = {0};
    const char *source = NULL;
    int rc = strcmp(a->shard, "auto") == 0
                 ? gb_shard_from_env(getenv, &h->session.tuner.shard, &source, &err)
                 : gb_shard_parse(a->shard, &h->session.tuner.shard, &err);
    if (rc) { /* the environment's sentences name --shard auto themselves */
        fprintf(stderr, "%s: %s%s\n", prog, strcmp(a->shard, "auto") ? "--shard: " : "", err.msg);
        return 2;
    }
    if (source && !a->quiet)
        fprintf(stderr, "%s: shard %d of %d (from %s)\n", prog, h->session.tuner.shard.index,
                h->session.tuner.shard.count, source);
    return 0;
}

/* Options may come before or after SCRIPT; everything after SCRIPT that is not
 * an option, and everything after "--", goes to the script as arg[1..]. */
static int parse_args(int argc, char **argv, tune_args *a, gb_lua_host *h)
{
    const char *prog = argv[0];
    optind = 1;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "vqh", long_options, NULL)) != -1) {
        if (c == '?') return gb_cli_bad_option(prog, NULL, argv, long_options);
        int status = apply_option(c, prog, a, h);
        if (status >= 0) return status;
    }
    if (optind >= argc) {
        fprintf(stderr, "%s: no SCRIPT given\n", prog);
        fprintf(stderr, USAGE, prog);
        return 2;
    }
    a->script = argv[optind++];
    a->script_args = argv + optind;
    a->n_script_args = argc - optind;
    if (h->session.n_gpus != 0 && a->device != (h->session.n_gpus > 0 ? h->session.gpus[0] : 0)) {
        fprintf(stderr, "%s: --device and --gpus name different GPUs: give one of them\n", prog);
        return 2;
    }
    if (a->shard && parse_shard(prog, a, h)) return 2;
    if (a->export_header && h->session.tuner.shard.count > 1) {
        fprintf(stderr,
                "%s: --export-header with --shard would export one shard's part: merge the "
                "shards' caches (gpubench cache merge), then export (gpubench export)\n",
                prog);
        return 2;
    }
    if (a->export_header && a->no_cache) {
        fprintf(stderr,
                "%s: --export-header exports from the cache: it cannot go with --no-cache\n", prog);
        return 2;
    }
    return -1;
}

/* --arch is checked before the script runs: a target this NVRTC does not compile
 * for is a usage error, said once with the list of those it does, rather than the
 * same compile error on every variant. Returns -1 to go on, or an exit status. */
static int check_arch(const char *prog, const char *arch)
{
    gb_err err = {0};
    if (!arch || gb_arch_validate(arch, &err) == GB_OK) return -1;
    fprintf(stderr, "%s: --arch: %s\n", prog, err.msg);
    return err.code == GB_EINVAL ? 2 : gb_cli_exit_status(err.code);
}

/* Ctrl-C: the tuner finishes cleanly (exec/interrupt.h); a script busy in Lua
 * gets an error at its next instruction. A second Ctrl-C ends the process. */
static lua_State *running_script;

static void stop_lua(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    lua_sethook(L, NULL, 0, 0);
    luaL_error(L, "interrupted");
}

static void on_sigint(int sig)
{
    gb_interrupt_request();
    signal(sig, SIG_DFL);
    if (running_script)
        lua_sethook(running_script, stop_lua, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, 1);
}

/* The installed templates beside this executable (bin/../share/gpubench/templates),
 * so an installed tree works wherever it was installed to. */
static const char *installed_templates(void)
{
    static char dir[4096];
    char exe[4096];
    if (gb_child_self_exe(exe, sizeof exe, NULL) != GB_OK) return NULL;
    char *slash = strrchr(exe, '/');
    if (!slash) return NULL;
    *slash = '\0';
    int n = snprintf(dir, sizeof dir, "%s/%s", exe, GB_TEMPLATES_FROM_BIN);
    if (n < 0 || (size_t)n >= sizeof dir || access(dir, R_OK) != 0) return NULL;
    return dir;
}

/* GPUBENCH_TEMPLATES, then the installed templates beside the executable, then the
 * source tree's (a build that runs where it was built), then the configured prefix. */
static int template_path(const char **dirs, char *env_copy)
{
    int n = 0;
    for (char *save = NULL, *d = env_copy ? strtok_r(env_copy, ":", &save) : NULL;
         d && n < MAX_TEMPLATE_DIRS - 3; d = strtok_r(NULL, ":", &save))
        dirs[n++] = d;
    const char *installed = installed_templates();
    if (installed) dirs[n++] = installed;
    if (*GB_SOURCE_TEMPLATES && access(GB_SOURCE_TEMPLATES, R_OK) == 0)
        dirs[n++] = GB_SOURCE_TEMPLATES;
    if (*GB_INSTALL_TEMPLATES) dirs[n++] = GB_INSTALL_TEMPLATES;
    return n;
}

/* --export-header: the kernels the script tuned, each on the device it ran on. */
static int export_tuned(const tune_args *a, const gb_lua_host *h, const char *prog)
{
    int n = h->session.n_tuned_kernels;
    const char **kernels = calloc((size_t)n + 1, sizeof *kernels);
    const char **devices = calloc((size_t)n + 1, sizeof *devices);
    int status = 2;
    if (kernels && devices) {
        for (int i = 0; i < n; i++) {
            kernels[i] = h->session.tuned[i].kernel;
            devices[i] = h->session.tuned[i].device;
        }
        status = gb_cli_export_kernels(prog, h->session.tuner.cache, a->export_header, kernels,
                                       devices, n);
    } else {
        fprintf(stderr, "%s: --export-header: out of memory\n", prog);
    }
    free(kernels);
    free(devices);
    return status;
}

/* The exit status of a finished script, with its message printed. */
static int script_status(int rc, const gb_err *err, const gb_lua_host *h, const char *prog,
                         const char *script)
{
    if (gb_interrupted()) rc = GB_EINTR;
    if (rc == GB_EINTR) {
        fprintf(stderr, "%s: interrupted: finished trials are in the cache; run again to resume\n",
                prog);
        return gb_cli_exit_status(rc);
    }
    if (rc) {
        fprintf(stderr, "%s: %s\n", prog, err->msg);
        return gb_cli_exit_status(rc);
    }
    if (h->session.gpu_missing && h->session.require_gpu) return 3;
    if (h->n_calls == 0) /* not an error (a script may only ask gb.device), but say so */
        fprintf(stderr,
                "%s: %s called no gb.tune, gb.bench or gb.collective: nothing was tuned or "
                "timed\n",
                prog, script);
    return h->session.n_shapes_failed > 0 ? 1 : 0;
}

/* The progress display on stderr (report/progress.h) and the streams that erase
 * its status line before their own text. */
typedef struct progress {
    gb_progress_view *view; /* NULL: none (out of memory) */
    FILE *log, *out;        /* tty mode: the tuner's log and the tables, through the view */
    char prefix[64];
} progress;

/* A status line on a terminal; plain lines for a file, a pipe or TERM=dumb (a
 * terminal that cannot erase a line); nothing with -q. */
static gb_progress_mode progress_mode(bool quiet)
{
    const char *term = getenv("TERM");
    if (quiet) return GB_PROGRESS_MODE_QUIET;
    if (!isatty(fileno(stderr)) || (term && strcmp(term, "dumb") == 0))
        return GB_PROGRESS_MODE_LINES;
    return GB_PROGRESS_MODE_TTY;
}

/* In tty mode the tuner's log (warnings, -v lines) and the tables (when stdout is
 * a terminal too) go through the view, which erases its line before each write:
 * the tuner and the binding need not know the line is there. */
static void progress_start(progress *pr, gb_lua_host *h, bool quiet, const char *prog)
{
    gb_err err = {0};
    snprintf(pr->prefix, sizeof pr->prefix, "%s: ", prog);
    gb_progress_view_opts opts = {.mode = progress_mode(quiet), .prefix = pr->prefix};
    if (gb_progress_view_create(stderr, &opts, &pr->view, &err) != GB_OK) return;
    h->session.tuner.progress = gb_progress_view_event;
    h->session.tuner.progress_ctx = pr->view;
    if (opts.mode != GB_PROGRESS_MODE_TTY) return;
    if ((pr->log = gb_progress_view_stream(pr->view, stderr))) h->session.tuner.log = pr->log;
    if (isatty(fileno(stdout))) pr->out = gb_progress_view_stream(pr->view, stdout);
}

/* Before the front end prints on its own: what the streams hold comes out, and
 * the status line is gone. */
static void progress_finish(progress *pr)
{
    if (pr->log) fflush(pr->log);
    if (pr->out) fflush(pr->out);
    gb_progress_view_finish(pr->view);
}

static void progress_end(progress *pr)
{
    if (pr->log) fclose(pr->log);
    if (pr->out) fclose(pr->out);
    gb_progress_view_destroy(pr->view);
}

/* The outputs the options name, the table on stdout (through the progress view on
 * a terminal) unless -q. Returns -1 to go on, or an exit status. */
static int open_outputs(tune_args *a, gb_lua_host *h, const progress *pr, gb_run_context *ctx,
                        const char *prog)
{
    gb_err err = {0};
    gb_table_opts table = {.verbose = h->session.tuner.verbose,
                           .compile_only = h->session.tuner.compile_only,
                           .jobs = h->session.tuner.jobs};
    FILE *stream = a->quiet ? NULL : pr->out ? pr->out : stdout;
    gb_output *output = NULL;
    int rc = gb_cli_context_init(ctx, "gpubench-tune", a->command_line, a->script, &err);
    if (rc == GB_OK) rc = gb_cli_outputs_open(&a->outputs, stream, &table, &output, &err);
    if (rc == GB_OK) {
        gb_session_begin_outputs(&h->session, output, ctx,
                                 &err); /* the multiplexer begins at the first entry */
        return -1;
    }
    fprintf(stderr, "%s: %s\n", prog, err.msg);
    return gb_cli_exit_status(rc);
}

static int run_script(tune_args *a, gb_lua_host *h, progress *pr, const char *prog)
{
    lua_State *L = NULL;
    gb_err err = {0};
    char exe[4096]; /* the GPU is this same program, started again as a worker */
    int rc = gb_child_self_exe(exe, sizeof exe, &err);
    if (rc == GB_OK) rc = gb_session_use_workers(&h->session, exe, a->device, &err);
    if (rc == GB_OK) rc = gb_lua_new(h, &L, &err);
    running_script = L;
    signal(SIGINT, on_sigint);
    if (rc == GB_OK) rc = gb_lua_run(L, a->script, a->n_script_args, a->script_args, &err);
    signal(SIGINT, SIG_DFL);
    running_script = NULL;
    progress_finish(pr); /* an error or Ctrl-C may have left the status line up */
    int status = script_status(rc, &err, h, prog, a->script);
    /* A run with failed shapes still exports what it tuned. */
    if (a->export_header && (status == 0 || status == 1)) {
        int exported = export_tuned(a, h, prog);
        if (exported > status) status = exported;
    }
    /* the files of an interrupted or failed run hold what finished */
    int written = gb_cli_outputs_close(&a->outputs, &h->session, prog);
    if (written > status) status = written;
    gb_lua_close(L, h); /* frees h's list of tuned kernels */
    return status;
}

int gb_cli_tune(int argc, char **argv)
{
    const char *slash = strrchr(argv[0], '/');
    if (slash) argv[0] = (char *)slash + 1; /* messages say "gpubench-tune: ..." */
    tune_args a = {0};
    gb_lua_host h = {0};
    gb_session_init(&h.session);
    a.command_line = gb_cli_join_args(argc, argv);
    int status = parse_args(argc, argv, &a, &h);
    if (status < 0) status = check_arch(argv[0], h.session.tuner.arch);
    if (status >= 0) {
        free(a.command_line);
        return status;
    }
    const char *dirs[MAX_TEMPLATE_DIRS];
    char *env = getenv("GPUBENCH_TEMPLATES") ? strdup(getenv("GPUBENCH_TEMPLATES")) : NULL;
    h.n_template_path = template_path(dirs, env);
    h.template_path = dirs;

    gb_err err = {0};
    if (!a.no_cache &&
        gb_cache_open_or_default(a.cache_dir, 0, &h.session.tuner.cache, &err) != GB_OK) {
        fprintf(stderr, "%s: %s\n", argv[0], err.msg);
        free(env);
        free(a.command_line);
        return gb_cli_exit_status(err.code);
    }
    progress pr = {0};
    progress_start(&pr, &h, a.quiet, argv[0]);
    gb_run_context ctx;
    status = open_outputs(&a, &h, &pr, &ctx, argv[0]);
    if (status < 0) status = run_script(&a, &h, &pr, argv[0]);
    gb_run_context_free(&ctx);
    free(a.command_line);
    gb_cache_close(h.session.tuner.cache);
    progress_end(&pr); /* last: the log goes through it until the script is closed */
    free(env);
    return status;
}
