/*
 * What the tests that run files and programs share: a scratch folder per test
 * under /tmp (made with mkdtemp, removed with all it holds in the teardown),
 * whole files written and read back, and a child process run to its end with
 * its output captured (the command-line tests run the real binaries).
 */
#ifndef GB_TESTS_SCRATCH_H
#define GB_TESTS_SCRATCH_H

#include <stddef.h>

/* The source tree: from ctest's environment, else from where this file lies. */
void source_dir(char *out, size_t n);

/* Removes dir and everything below it (links are removed, never followed).
 * Returns 0, or -1 when something could not be removed. */
int scratch_remove(const char *dir);

/* Writes text to dir/name. Returns 0, or -1 when the file cannot be written. */
int scratch_write(const char *dir, const char *name, const char *text);

/* Reads at most n - 1 bytes of path into buf, NUL-terminated ("" when the file
 * cannot be read). */
void scratch_read(const char *path, char *buf, size_t n);

/* Runs argv[0] with argv (NULL-terminated) and the current environment, stdout to
 * out_path and stderr to err_path (each created or truncated); with
 * interrupt_after_ms > 0, sends it SIGINT that long after it starts. Returns its
 * exit status, or -1 when it could not start or did not exit normally. */
int scratch_spawn(char *const argv[], const char *out_path, const char *err_path,
                  int interrupt_after_ms);

/* Runs this build's gpubench-tune ($GB_BINARY_DIR/cli) with the arguments that
 * follow (strings, NULL-terminated), its stdout and stderr through dir/stdout and
 * dir/stderr into out and err. Returns its exit status, or -1 when it could not run. */
int scratch_tune(const char *dir, char *out, size_t out_n, char *err, size_t err_n, ...);

/* The fixture of a test that runs a command over files it writes: a scratch folder
 * and what the last command did. */
typedef struct scratch_command {
    char dir[64];
    int status; /* the exit status; 128 when it did not exit */
    char out[1 << 16];
    char err[1 << 14];
} scratch_command;

/* A fresh fixture in /tmp/gb-test-NAME-XXXXXX (NULL on failure); free it with
 * scratch_command_free, which removes the folder. */
scratch_command *scratch_command_new(const char *name);
void scratch_command_free(scratch_command *c);

/* Runs the shell command line fmt... in c's folder, stdout and stderr through
 * files there into c->out and c->err; returns c->status. */
int scratch_command_run(scratch_command *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
