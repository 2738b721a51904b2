/* gpubench-tune: tune the kernels of a Lua script (cli/tune_main.c). */
#include "cli/cli.h"
#include "exec/collective_run.h"
#include "exec/worker.h"

#include <string.h>

int main(int argc, char **argv)
{
    /* The tuner starts this same program as its GPU worker (exec/worker.h). */
    if (argc == 2 && strcmp(argv[1], "--worker") == 0) return gb_worker_main(GB_CHILD_FD);
    /* ... and gb.collective this same program as its NCCL child (engine/collective.h). */
    if (argc == 2 && strcmp(argv[1], "--collective") == 0) return gb_collective_main(GB_CHILD_FD);
    return gb_cli_tune(argc, argv);
}
