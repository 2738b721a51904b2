/* The child processes' supervisor (exec/child.h): start, look, end, describe. */
#include "exec/child.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static void spawn_actions(posix_spawn_file_actions_t *fa, posix_spawnattr_t *attr, int child,
                          bool stdout_to_stderr)
{
    posix_spawn_file_actions_init(fa);
    posix_spawn_file_actions_adddup2(fa, child, GB_CHILD_FD);
    if (stdout_to_stderr) posix_spawn_file_actions_adddup2(fa, STDERR_FILENO, STDOUT_FILENO);
    posix_spawnattr_init(attr);
    posix_spawnattr_setpgroup(attr, 0);
    sigset_t none;
    sigemptyset(&none);
    posix_spawnattr_setsigmask(attr, &none);
    posix_spawnattr_setflags(attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
}

int gb_child_start(gb_child *c, const gb_child_spec *spec, gb_err *err)
{
    *c = GB_CHILD_NONE;
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
        return gb_err_set(err, GB_EIO, "socketpair: %s", strerror(errno));
    /* Keep the child's end off GB_CHILD_FD, so that dup2 really copies (and clears
     * close-on-exec) rather than being a no-op. */
    int child = fcntl(pair[1], F_DUPFD_CLOEXEC, GB_CHILD_FD + 1);
    close(pair[1]);
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    spawn_actions(&fa, &attr, child, spec->stdout_to_stderr);
    char *argv[] = {(char *)spec->exe, (char *)spec->arg, NULL};
    char *const *env = spec->env ? spec->env : environ;
    int rc = child < 0 ? errno : posix_spawn(&c->pid, spec->exe, &fa, &attr, argv, env);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    if (child >= 0) close(child);
    if (rc) {
        close(pair[0]);
        c->pid = 0;
        return gb_err_set(err, GB_EIO, "starting %s %s: %s", spec->exe, spec->arg, strerror(rc));
    }
    c->fd = pair[0];
    return GB_OK;
}

bool gb_child_exited(const gb_child *c)
{
    siginfo_t info = {0};
    return c->pid > 0 && waitid(P_PID, (id_t)c->pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
           info.si_pid == c->pid;
}

bool gb_child_end(gb_child *c, int wait_ms, int *status)
{
    if (c->fd >= 0) close(c->fd);
    c->fd = -1;
    pid_t pid = c->pid;
    *c = GB_CHILD_NONE;
    if (pid <= 0) return false;
    siginfo_t info = {0};
    for (int waited = 0; waited < wait_ms; waited += 10) {
        int got = waitid(P_PID, (id_t)pid, &info, WEXITED | WNOHANG | WNOWAIT);
        if (got == 0 && info.si_pid == pid) break;
        if (got < 0 && errno != EINTR) break;
        usleep(10000);
    }
    kill(-pid, SIGKILL); /* the child is unreaped: the group's id is still its own */
    int st = 0;
    pid_t got;
    while ((got = waitpid(pid, &st, 0)) < 0 && errno == EINTR) {
    }
    if (status) *status = st;
    return got == pid;
}

void gb_child_describe(const char *who, int status, char *out, size_t out_bytes)
{
    if (WIFSIGNALED(status))
        snprintf(out, out_bytes, "%s was killed by signal %d (%s)", who, WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
    else
        snprintf(out, out_bytes, "%s exited with status %d", who, WEXITSTATUS(status));
}

int gb_child_self_exe(char *out, size_t out_bytes, gb_err *err)
{
    ssize_t n = readlink("/proc/self/exe", out, out_bytes - 1);
    if (n < 0) return gb_err_set(err, GB_EIO, "readlink /proc/self/exe: %s", strerror(errno));
    out[n] = '\0';
    return GB_OK;
}
