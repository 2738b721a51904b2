/* gpubench-tune: tune the kernels of a Lua script (cli/tune_main.c). */
#include "cli/cli.h"
#include "engine/collective.h"
#include "engine/worker.h"

#include <string.h>

int main(int argc, char **argv)
{
    /* The tuner starts this same program as its GPU worker (engine/worker.h). */
    if (argc == 2 && strcmp(argv[1], "--worker") == 0) return gb_worker_main(3);
    /* ... and gb.collective this same program as its NCCL child (engine/collective.h). */
    if (argc == 2 && strcmp(argv[1], "--collective") == 0) return gb_collective_main(3);
    return gb_cli_tune(argc, argv);
}
