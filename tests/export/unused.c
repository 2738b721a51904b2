/* Compiled (not run) by test_export with -Wall -Wextra -Werror: a translation unit
 * that includes exported headers and uses nothing of them must compile cleanly. */
#include "gemm_tuned.h"
#include "tk_tuned.h"
#include "tkm_tuned.h"

int main(void)
{
    return 0;
}
