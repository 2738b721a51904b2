#include "cache/check.h"

#include "base/clock.h"
#include "cache/check_walk.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define STAMP_FILE      "check.stamp"
#define STAMP_MAGIC     "gpubench-check-stamp 1"
#define TIMEOUT_ENV     "GB_CACHE_CHECK_TIMEOUT_MS"
#define BASE_TIMEOUT_MS 30000
#define BYTES_PER_MS    20000 /* 20 MB/s: a slow disk, read once */

typedef gb_check_shared shared;

_Noreturn static void child_main(shared *s, const char *dir)
{
    /* Die by the signal, past any handler the process installed (a sanitizer's, a
     * test framework's), so the parent sees what killed the walk. */
    const int fatal[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL};
    for (size_t i = 0; i < sizeof fatal / sizeof *fatal; i++)
        signal(fatal[i], SIG_DFL);
    gb_check_walk(s, dir);
    _exit(0);
}

/* ---- the parent: waiting -------------------------------------------------- */

static int timeout_ms(size_t file_bytes)
{
    const char *text = getenv(TIMEOUT_ENV);
    if (text && *text) {
        char *end = NULL;
        long ms = strtol(text, &end, 10);
        if (*end == '\0' && ms >= 0 && ms < INT32_MAX) return (int)ms;
    }
    size_t ms = BASE_TIMEOUT_MS + file_bytes / BYTES_PER_MS;
    return ms < INT32_MAX ? (int)ms : INT32_MAX;
}

/* True when the child closed its end of the pipe (it has exited, whatever the way)
 * before the deadline. What it wrote there (its stderr: LMDB's assertion messages)
 * is kept in said, as much as fits. */
static bool wait_for_eof(int fd, int limit_ms, char *said, size_t said_bytes)
{
    double deadline = gb_now_ms() + limit_ms;
    size_t n_said = 0;
    said[0] = '\0';
    for (;;) {
        /* past the deadline is late even when the child has just finished: a limit
         * of 0 ms is always exceeded, however fast the walk */
        double left = deadline - gb_now_ms();
        if (left <= 0) return false;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int n = poll(&p, 1, (int)left + 1);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        char buf[256];
        ssize_t got = read(fd, buf, sizeof buf);
        if (got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN)) break;
        for (ssize_t i = 0; i < got && n_said + 1 < said_bytes; i++)
            said[n_said++] = buf[i] == '\n' ? ' ' : buf[i];
        said[n_said] = '\0';
    }
    while (n_said > 0 && said[n_said - 1] == ' ')
        said[--n_said] = '\0';
    return true;
}

/* -1 when the status is unknown (SIGCHLD ignored, so the child was reaped for us). */
static int reap(pid_t pid)
{
    int status = 0;
    pid_t got;
    while ((got = waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
    }
    return got == pid ? status : -1;
}

static int run_child(const char *dir, int limit_ms, shared *s, int *out_status, bool *out_timed_out,
                     char *said, size_t said_bytes, gb_err *err)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return gb_err_set(err, errno, "cache %s: pipe for the damage check: %s", dir,
                          strerror(errno));
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(fds[0]);
        close(fds[1]);
        return gb_err_set(err, e, "cache %s: fork for the damage check: %s", dir, strerror(e));
    }
    if (pid == 0) { /* its stderr goes to the pipe, which closes when it exits */
        close(fds[0]);
        dup2(fds[1], STDERR_FILENO);
        child_main(s, dir);
    }
    close(fds[1]);
    *out_timed_out = !wait_for_eof(fds[0], limit_ms, said, said_bytes);
    close(fds[0]);
    if (*out_timed_out) kill(pid, SIGKILL);
    *out_status = reap(pid);
    return GB_OK;
}

static const char *signal_name(int sig)
{
    switch (sig) {
    case SIGSEGV:
        return "SIGSEGV";
    case SIGBUS:
        return "SIGBUS";
    case SIGABRT:
        return "SIGABRT";
    case SIGFPE:
        return "SIGFPE";
    case SIGILL:
        return "SIGILL";
    case SIGKILL:
        return "SIGKILL";
    default:
        return "a signal";
    }
}

/* How the walk ended, as the problem to report; "" when it finished. said is what
 * the child wrote to stderr. */
static void describe_end(const shared *s, int status, bool timed_out, int limit_ms,
                         const char *said, char *out, size_t n)
{
    out[0] = '\0';
    if (timed_out)
        snprintf(out, n, "data.mdb is damaged: reading it did not finish within %.1f s (in %.100s)",
                 limit_ms / 1000.0, s->stage);
    else if (status != -1 && WIFSIGNALED(status))
        snprintf(out, n, "data.mdb is damaged: reading it crashed with %s (%s) in %.100s%s%.200s",
                 signal_name(WTERMSIG(status)), strsignal(WTERMSIG(status)), s->stage,
                 said[0] ? ": " : "", said);
    else if (!s->finished)
        snprintf(out, n, "data.mdb is damaged: reading it stopped (exit status %d) in %.100s",
                 status == -1 ? -1 : WEXITSTATUS(status), s->stage);
}

static int verdict(const char *dir, const shared *s, int status, bool timed_out, int limit_ms,
                   const char *said, gb_cache_check_report *out, gb_err *err)
{
    char ended[sizeof out->problem];
    describe_end(s, status, timed_out, limit_ms, said, ended, sizeof ended);
    if (ended[0]) memcpy(out->problem, ended, sizeof ended);
    if (!ended[0] && s->kind == GB_CHECK_CLEAN) return GB_OK;
    if (!ended[0] && s->kind == GB_CHECK_ERRNO) {
        int code = s->errno_code;
        bool perm = code == EACCES || code == EPERM;
        return gb_err_set(err, code, "cache %s: %s%s", dir, out->problem,
                          perm ? "; check the permissions of the directory and its files, or "
                                 "pass --cache DIR"
                               : "");
    }
    if (!ended[0] && s->kind == GB_CHECK_LOCK)
        return gb_err_set(err, GB_ECACHE, "cache %s: %s", dir, out->problem);
    char more[64] = "";
    if (s->report.n_bad > 1)
        snprintf(more, sizeof more, " (%zu bad records in all)", s->report.n_bad);
    return gb_err_set(err, GB_ECACHE,
                      "cache %s: %s%s; move it aside (mv %s %s.damaged) or pass --cache DIR", dir,
                      out->problem, more, dir, dir);
}

/* ---- the parent: the stamp -------------------------------------------------- */

static void stamp_text(const struct stat *st, char *out, size_t n)
{
    snprintf(out, n, STAMP_MAGIC " dev %llu ino %llu size %lld mtime %lld.%09ld ctime %lld.%09ld\n",
             (unsigned long long)st->st_dev, (unsigned long long)st->st_ino, (long long)st->st_size,
             (long long)st->st_mtim.tv_sec, st->st_mtim.tv_nsec, (long long)st->st_ctim.tv_sec,
             st->st_ctim.tv_nsec);
}

static bool stamp_matches(const char *dir, const struct stat *st)
{
    char path[4200], want[256], have[256];
    snprintf(path, sizeof path, "%s/" STAMP_FILE, dir);
    stamp_text(st, want, sizeof want);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    ssize_t n = read(fd, have, sizeof have - 1);
    close(fd);
    if (n <= 0) return false;
    have[n] = '\0';
    return strcmp(have, want) == 0;
}

/* Only a file that did not change during the walk is the file that was checked. A
 * stamp that cannot be written (read-only media) just means walking next time. */
static void stamp_write(const char *dir, const char *data_path, const struct stat *before)
{
    char path[4200], tmp[4300], text[256], again[256];
    struct stat after;
    if (stat(data_path, &after) != 0) return;
    stamp_text(before, text, sizeof text);
    stamp_text(&after, again, sizeof again);
    if (strcmp(text, again)) return;
    snprintf(path, sizeof path, "%s/" STAMP_FILE, dir);
    snprintf(tmp, sizeof tmp, "%s.%ld", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return;
    size_t len = strlen(text);
    bool ok = write(fd, text, len) == (ssize_t)len;
    ok = close(fd) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) unlink(tmp);
}

/* ---- the check -------------------------------------------------------------- */

/* One walk, in a child process. */
static int walk_once(const char *dir, gb_cache_check_report *out, gb_err *err)
{
    shared *s = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (s == MAP_FAILED)
        return gb_err_set(err, errno, "cache %s: mmap for the damage check: %s", dir,
                          strerror(errno));
    memset(s, 0, sizeof *s);
    snprintf(s->stage, sizeof s->stage, "starting");
    int status = 0, limit_ms = timeout_ms(out->file_bytes);
    bool timed_out = false;
    char said[256];
    int rc = run_child(dir, limit_ms, s, &status, &timed_out, said, sizeof said, err);
    if (rc == GB_OK) {
        size_t file_bytes = out->file_bytes;
        *out = s->report;
        out->file_bytes = file_bytes;
        rc = verdict(dir, s, status, timed_out, limit_ms, said, out, err);
    }
    munmap(s, sizeof *s);
    return rc;
}

static bool same_state(const struct stat *a, const struct stat *b)
{
    char x[256], y[256];
    stamp_text(a, x, sizeof x);
    stamp_text(b, y, sizeof y);
    return strcmp(x, y) == 0;
}

/* The walk reads one snapshot, but a problem found while another process wrote the
 * file could still come from the writing (a meta page read as it was rewritten):
 * such a walk is repeated, and a problem is reported once the file held still during
 * the walk that found it, or three walks in a row found one. */
static int walk_in_child(const char *dir, const char *data_path, const struct stat *before,
                         unsigned flags, gb_cache_check_report *out, gb_err *err)
{
    struct stat seen = *before, now;
    int rc = GB_OK;
    for (int walks = 1;; walks++) {
        rc = walk_once(dir, out, err);
        bool held_still = stat(data_path, &now) == 0 && same_state(&seen, &now);
        if (rc != GB_ECACHE || held_still || walks == 3) break;
        seen = now;
    }
    if (rc == GB_OK && !(flags & GB_CACHE_CHECK_NO_STAMP)) stamp_write(dir, data_path, &seen);
    return rc;
}

int gb_cache_check(const char *dir, unsigned flags, gb_cache_check_report *out, gb_err *err)
{
    double start_ms = gb_now_ms();
    char path[4200];
    struct stat before;
    memset(out, 0, sizeof *out);
    if (!dir || !*dir) return gb_err_set(err, GB_EINVAL, "no cache directory given");
    if (snprintf(path, sizeof path, "%s/data.mdb", dir) >= (int)sizeof path)
        return gb_err_set(err, GB_EINVAL, "cache %s: the path is too long", dir);
    if (stat(path, &before) != 0) {
        int e = errno;
        out->absent = e == ENOENT || e == ENOTDIR;
        if (out->absent) return GB_OK; /* opening says what is missing */
        return gb_err_set(err, e, "cache %s: stat %s: %s", dir, path, strerror(e));
    }
    out->file_bytes = (size_t)before.st_size;
    out->absent = before.st_size == 0; /* no records; LMDB starts such a file afresh */
    int rc = GB_OK;
    bool use_stamp = !(flags & (GB_CACHE_CHECK_FORCE | GB_CACHE_CHECK_NO_STAMP));
    if (out->absent)
        ;
    else if (use_stamp && stamp_matches(dir, &before))
        out->skipped = true;
    else
        rc = walk_in_child(dir, path, &before, flags, out, err);
    out->elapsed_ms = gb_now_ms() - start_ms;
    return rc;
}
