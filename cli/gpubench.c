/* gpubench: the general front end. `gpubench tune` is gpubench-tune. */
#include "cli/cli.h"
#include "exec/collective_run.h"
#include "exec/worker.h"

#include <stdio.h>
#include <string.h>

#ifndef GB_VERSION
#define GB_VERSION "0.0.0"
#endif

static const char USAGE[] =
    "usage: gpubench COMMAND [arguments]\n"
    "\n"
    "A JIT-compiling GPU benchmark engine with an autotuner: Lua scripts describe\n"
    "CUDA kernels and their tuning spaces; gpubench compiles them with NVRTC, checks\n"
    "and times every variant, and keeps the best per problem shape in a cache.\n"
    "\n"
    "commands:\n"
    "  tune SCRIPT [options]   tune the kernels of a script (as gpubench-tune)\n"
    "  cache ls|show|rm|save|load|merge|verify|gc|path\n"
    "                          what the cache holds, its upkeep, and moving results\n"
    "                          between machines (`gpubench cache --help`)\n"
    "  export --header OUT --kernel K [options]\n"
    "                          a kernel's tuned table as a C header (or JSON) that\n"
    "                          other builds include\n"
    "  replay FILE [options]   search strategies run against a recorded table (a\n"
    "                          transfer file or a Kernel Tuner cache) instead of the GPU\n"
    "  compare OLD.json NEW.json [options]\n"
    "                          which benchmarks got slower between two runs (gpubench's\n"
    "                          or Google Benchmark's JSON); exit status 1 if any did\n"
    "  repro RUN.json RUN.json... [options]\n"
    "                          how reproducible a tuning is over repeated runs: winner\n"
    "                          changes, spread of the best, regret, false alarms\n"
    "  info [--device N] [--json]\n"
    "                          the GPU, its clocks and memory, and its theoretical peaks\n"
    "  report RUN.json [options]\n"
    "                          a saved run rendered again: table, CSV, HTML, JSON\n"
    "\n"
    "  --help                  this text; `gpubench COMMAND --help` for a command\n"
    "  --version               the version\n";

int main(int argc, char **argv)
{
    /* The tuner starts this same program as its GPU worker (exec/worker.h). */
    if (argc == 2 && strcmp(argv[1], "--worker") == 0) return gb_worker_main(GB_CHILD_FD);
    /* ... and gb.collective this same program as its NCCL child (engine/collective.h). */
    if (argc == 2 && strcmp(argv[1], "--collective") == 0) return gb_collective_main(GB_CHILD_FD);
    if (argc < 2) {
        fprintf(stderr, "%s", USAGE);
        return 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        printf("%s", USAGE);
        return 0;
    }
    if (!strcmp(cmd, "--version")) {
        printf("gpubench %s\n", GB_VERSION);
        return 0;
    }
    /* Each command sees itself as argv[0], named as the messages should name it. */
    static char tune_name[] = "gpubench tune", cache_name[] = "gpubench";
    static char export_name[] = "gpubench", replay_name[] = "gpubench";
    static char compare_name[] = "gpubench", repro_name[] = "gpubench";
    static char report_name[] = "gpubench", info_name[] = "gpubench";
    if (!strcmp(cmd, "tune")) {
        argv[1] = tune_name;
        return gb_cli_tune(argc - 1, argv + 1);
    }
    if (!strcmp(cmd, "cache")) {
        argv[1] = cache_name;
        return gb_cli_cache(argc - 1, argv + 1);
    }
    if (!strcmp(cmd, "export")) {
        argv[1] = export_name;
        return gb_cli_export(argc - 1, argv + 1);
    }
    if (!strcmp(cmd, "replay")) {
        argv[1] = replay_name;
        return gb_cli_replay(argc - 1, argv + 1);
    }
    if (!strcmp(cmd, "compare")) {
        argv[1] = compare_name;
        return gb_cli_compare(argc - 1, argv + 1);
    }
    if (!strcmp(cmd, "repro")) {
        argv[1] = repro_name;
        return gb_cli_repro(argc - 1, argv + 1);
    }
    if (!strcmp(cmd, "report")) {
        argv[1] = report_name;
        return gb_cli_report(argc - 1, argv + 1);
    }
    if (!strcmp(cmd, "info")) {
        argv[1] = info_name;
        return gb_cli_info(argc - 1, argv + 1);
    }
    fprintf(stderr, "gpubench: unknown command '%s'\n\n%s", cmd, USAGE);
    return 2;
}
