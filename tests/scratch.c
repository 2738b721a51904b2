#include "scratch.h"

#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdarg.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

int scratch_remove(const char *dir)
{
    return nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS) == 0 ? 0 : -1;
}

int scratch_write(const char *dir, const char *name, const char *text)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    int rc = fputs(text, f) < 0 ? -1 : 0;
    return fclose(f) != 0 ? -1 : rc;
}

void scratch_read(const char *path, char *buf, size_t n)
{
    FILE *f = fopen(path, "r");
    size_t got = f ? fread(buf, 1, n - 1, f) : 0;
    buf[got] = '\0';
    if (f) fclose(f);
}

int scratch_spawn(char *const argv[], const char *out_path, const char *err_path,
                  int interrupt_after_ms)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid;
    int started = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (started != 0) return -1;
    if (interrupt_after_ms > 0) {
        usleep((useconds_t)interrupt_after_ms * 1000);
        kill(pid, SIGINT);
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
    return WEXITSTATUS(status);
}

int scratch_tune(const char *dir, char *out, size_t out_n, char *err, size_t err_n, ...)
{
    char exe[4096], out_path[4200], err_path[4200];
    const char *bin = getenv("GB_BINARY_DIR");
    snprintf(exe, sizeof exe, "%s/cli/gpubench-tune", bin ? bin : ".");
    snprintf(out_path, sizeof out_path, "%s/stdout", dir);
    snprintf(err_path, sizeof err_path, "%s/stderr", dir);
    char *argv[64] = {exe};
    int argc = 1;
    va_list ap;
    va_start(ap, err_n);
    for (char *a; argc < 63 && (a = va_arg(ap, char *));)
        argv[argc++] = a;
    va_end(ap);
    argv[argc] = NULL;
    int status = scratch_spawn(argv, out_path, err_path, 0);
    scratch_read(out_path, out, out_n);
    scratch_read(err_path, err, err_n);
    return status;
}

void source_dir(char *out, size_t n)
{
    const char *env = getenv("GB_SOURCE_DIR");
    if (env && *env) {
        snprintf(out, n, "%s", env);
        return;
    }
    snprintf(out, n, "%s", __FILE__);
    char *tests = strstr(out, "/tests/scratch.c");
    if (tests) *tests = '\0';
}

scratch_command *scratch_command_new(const char *name)
{
    scratch_command *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    snprintf(c->dir, sizeof c->dir, "/tmp/gb-test-%.32s-XXXXXX", name);
    if (!mkdtemp(c->dir)) {
        free(c);
        return NULL;
    }
    return c;
}

void scratch_command_free(scratch_command *c)
{
    if (!c) return;
    scratch_remove(c->dir);
    free(c);
}

int scratch_command_run(scratch_command *c, const char *fmt, ...)
{
    char line[2048], cmd[2400], path[128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "cd %s && %s >stdout 2>stderr", c->dir, line);
    int status = system(cmd);
    c->status = status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : 128;
    snprintf(path, sizeof path, "%s/stdout", c->dir);
    scratch_read(path, c->out, sizeof c->out);
    snprintf(path, sizeof path, "%s/stderr", c->dir);
    scratch_read(path, c->err, sizeof c->err);
    return c->status;
}
