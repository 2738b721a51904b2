#include "exec/interrupt.h"

#include <signal.h>

static volatile sig_atomic_t requested;

void gb_interrupt_request(void)
{
    requested = 1;
}

bool gb_interrupted(void)
{
    return requested != 0;
}

void gb_interrupt_clear(void)
{
    requested = 0;
}
