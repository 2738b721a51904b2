/* gpubench-tune: tune the kernels of a Lua script (cli/tune_main.c). */
#include "cli/cli.h"

int main(int argc, char **argv)
{
    return gb_cli_tune(argc, argv);
}
