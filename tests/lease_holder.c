#include "lease_holder.h"

#include "exec/lease.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

pid_t hold_lease_in_child(const char *name, const char *activity)
{
    int ready[2];
    assert_int_equal(pipe(ready), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        close(ready[0]);
        gb_lease *lease = NULL;
        if (gb_lease_acquire_as(name, 5, activity, NULL, &lease, NULL) != GB_OK) _exit(1);
        if (write(ready[1], "r", 1) != 1) _exit(1);
        for (;;)
            pause();
    }
    close(ready[1]);
    char c = 0;
    assert_int_equal(read(ready[0], &c, 1), 1);
    close(ready[0]);
    return pid;
}
