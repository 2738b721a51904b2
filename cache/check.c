#include "cache/check.h"

#include "base/clock.h"
#include "cache/frame.h"
#include "cache/key.h"

#include <errno.h>
#include <fcntl.h>
#include <lmdb.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xxhash.h>

/* LMDB's own databases, which its API reaches by these handle numbers (lmdb.h does
 * not name them): the free list, and the list of named databases. */
#define FREE_DBI        0
#define MAIN_DBI        1
#define MAX_NAMED_DBS   64
#define MAX_NAME_BYTES  512
#define META_PAGES      2 /* pages 0 and 1 are the meta pages: never free */
#define STAMP_FILE      "check.stamp"
#define STAMP_MAGIC     "gpubench-check-stamp 1"
#define TIMEOUT_ENV     "GB_CACHE_CHECK_TIMEOUT_MS"
#define BASE_TIMEOUT_MS 30000
#define BYTES_PER_MS    20000 /* 20 MB/s: a slow disk, read once */
/* What a step of the walk returns once it has noted a problem: no LMDB code. */
#define STOP (-1)

typedef enum kind {
    KIND_NONE,
    KIND_DAMAGE, /* the file: move it aside */
    KIND_LOCK,   /* lock.mdb, held by another process */
    KIND_ERRNO,  /* the system: permissions, memory */
} kind;

/* What the child leaves in memory it shares with the parent, updated as it goes, so
 * that a child that dies has still said where it was. */
typedef struct shared {
    gb_cache_check_report report;
    char stage[128]; /* what it was reading: "db cubins" */
    kind kind;       /* of report.problem */
    int errno_code;  /* with KIND_ERRNO */
    int finished;
    uint64_t touched; /* hashes of values read without a checksum: keeps the reads */
} shared;

typedef struct walker {
    shared *s;
    const char *dir;
    MDB_env *env;
    MDB_txn *txn;
    size_t last_pgno;
} walker;

/* ---- the child: problems ------------------------------------------------- */

/* Only the first problem is kept: it is the one the message reports. */
static void note(walker *w, kind k, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void note(walker *w, kind k, const char *fmt, ...)
{
    if (w->s->kind != KIND_NONE) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->s->report.problem, sizeof w->s->report.problem, fmt, ap);
    va_end(ap);
    w->s->kind = k;
}

static void stage(walker *w, const char *what, const char *name)
{
    snprintf(w->s->stage, sizeof w->s->stage, "%s%.100s", what, name);
}

/* A failed LMDB call: its own codes mean the file is bad; an errno means the system. */
static int lmdb_problem(walker *w, const char *call, int rc)
{
    if (rc > 0) {
        w->s->errno_code = rc;
        note(w, KIND_ERRNO, "%s: %s", call, strerror(rc));
    } else {
        note(w, KIND_DAMAGE, "data.mdb is damaged: %s in %s: %s", call, w->s->stage,
             mdb_strerror(rc));
    }
    return STOP;
}

/* ---- the child: opening -------------------------------------------------- */

static int try_open(walker *w, unsigned flags)
{
    int rc = mdb_env_create(&w->env);
    if (!rc) rc = mdb_env_set_maxdbs(w->env, MAX_NAMED_DBS);
    if (!rc) rc = mdb_env_open(w->env, w->dir, MDB_RDONLY | MDB_NOTLS | flags, 0644);
    if (rc) {
        mdb_env_close(w->env);
        w->env = NULL;
    }
    return rc;
}

static bool denied(int rc)
{
    return rc == EACCES || rc == EPERM || rc == EROFS;
}

static int open_env(walker *w)
{
    stage(w, "opening it", "");
    int rc = try_open(w, 0);
    if (denied(rc)) {
        rc = try_open(w, MDB_NOLOCK); /* lock.mdb cannot be written: read without it */
    } else if ((rc == MDB_INVALID || rc == MDB_VERSION_MISMATCH) && try_open(w, MDB_NOLOCK) == 0) {
        /* LMDB rebuilds a lock file that no process holds, so a lock file it refuses
         * is held by another process; tell that apart from a bad data.mdb. */
        note(w, KIND_LOCK,
             "lock.mdb is %s, and another process has it open (%s): stop the processes that "
             "use this cache; when none is left, remove %s/lock.mdb",
             rc == MDB_INVALID ? "not an LMDB lock file" : "from another version of LMDB",
             mdb_strerror(rc), w->dir);
        return STOP;
    }
    if (rc == MDB_INVALID)
        note(w, KIND_DAMAGE,
             "data.mdb is not an LMDB file, or its meta pages are damaged (mdb_env_open: %s)",
             mdb_strerror(rc));
    else if (rc == MDB_VERSION_MISMATCH)
        note(w, KIND_DAMAGE,
             "data.mdb was written by an incompatible version of LMDB (mdb_env_open: %s)",
             mdb_strerror(rc));
    return rc ? lmdb_problem(w, "mdb_env_open", rc) : 0;
}

/* A file shorter than its meta page says (a copy cut short, a full disk) would make
 * LMDB read past its end: SIGBUS. */
static int check_size(walker *w)
{
    MDB_envinfo info;
    MDB_stat st;
    struct stat file;
    mdb_filehandle_t fd;
    int rc = mdb_env_info(w->env, &info);
    if (!rc) rc = mdb_env_stat(w->env, &st);
    if (!rc) rc = mdb_env_get_fd(w->env, &fd);
    if (rc) return lmdb_problem(w, "mdb_env_info", rc);
    if (fstat(fd, &file) != 0) return lmdb_problem(w, "fstat", errno);
    w->last_pgno = info.me_last_pgno;
    size_t needed = (info.me_last_pgno + 1) * (size_t)st.ms_psize;
    if ((size_t)file.st_size >= needed) return 0;
    note(w, KIND_DAMAGE,
         "data.mdb is truncated: it has %lld bytes, where its meta page counts %zu (an "
         "incomplete copy, or a full disk)",
         (long long)file.st_size, needed);
    return STOP;
}

/* ---- the child: walking --------------------------------------------------- */

/* Reads every byte, so that damage anywhere in a value shows now, not later. */
static void touch(walker *w, const MDB_val *v)
{
    w->s->touched ^= XXH3_64bits(v->mv_data, v->mv_size);
}

/* An entry of the free list lists the pages a transaction freed: a count, then that
 * many page numbers, descending, each past the meta pages and inside the file (a
 * reserved entry may be longer than its count). A writer takes pages from here, so
 * a bad number would make it overwrite live data. */
static bool free_entry_sound(walker *w, const MDB_val *v)
{
    size_t n_words = v->mv_size / sizeof(size_t), count, prev = SIZE_MAX;
    const uint8_t *p = v->mv_data;
    if (v->mv_size % sizeof(size_t) || n_words == 0) return false;
    memcpy(&count, p, sizeof count); /* values are not aligned */
    if (count > n_words - 1) return false;
    for (size_t i = 1; i <= count; i++) {
        size_t pgno;
        memcpy(&pgno, p + i * sizeof pgno, sizeof pgno);
        if (pgno < META_PAGES || pgno > w->last_pgno || pgno >= prev) return false;
        prev = pgno;
    }
    w->s->report.n_free_pages += count;
    return true;
}

static int walk_free_list(walker *w, size_t *out_n)
{
    MDB_cursor *cursor = NULL;
    MDB_val k, v;
    stage(w, "LMDB's free list", "");
    int rc = mdb_cursor_open(w->txn, FREE_DBI, &cursor);
    if (rc) return lmdb_problem(w, "mdb_cursor_open", rc);
    for (MDB_cursor_op op = MDB_FIRST; (rc = mdb_cursor_get(cursor, &k, &v, op)) == 0;
         op = MDB_NEXT) {
        ++*out_n;
        if (!free_entry_sound(w, &v)) {
            note(w, KIND_DAMAGE,
                 "data.mdb is damaged: entry %zu of LMDB's free list is not a list "
                 "of free pages",
                 *out_n);
            rc = STOP;
            break;
        }
    }
    mdb_cursor_close(cursor);
    if (rc == MDB_NOTFOUND) return 0;
    return rc == STOP ? rc : lmdb_problem(w, "mdb_cursor_get", rc);
}

static int db_of(const char *name)
{
    for (int db = 0; db < GB_DB_COUNT; db++)
        if (!strcmp(gb_cache_db_name((gb_cache_db)db), name)) return db;
    return -1;
}

/* meta's "schema" record is the one without a frame: 'G' 'B', two bytes, digits. */
static bool schema_record_sound(const MDB_val *v)
{
    const uint8_t *p = v->mv_data;
    if (v->mv_size < 5 || v->mv_size > 13 || p[0] != 'G' || p[1] != 'B') return false;
    for (size_t i = 4; i < v->mv_size; i++)
        if (p[i] < '0' || p[i] > '9') return false;
    return true;
}

static void check_record(walker *w, int db, const char *name, const MDB_val *k, const MDB_val *v)
{
    if (db < 0) return touch(w, v);
    w->s->report.n_records[db]++;
    bool schema = db == GB_DB_META && k->mv_size == 6 && !memcmp(k->mv_data, "schema", 6);
    if (schema && schema_record_sound(v)) return;
    if (!schema && db != GB_DB_META && k->mv_size != GB_KEY_BYTES) {
        w->s->report.n_bad++;
        note(w, KIND_DAMAGE, "data.mdb is damaged: db %s holds a key of %zu bytes", name,
             k->mv_size);
        return;
    }
    size_t header_bytes = 0;
    gb_frame_verdict verdict =
        schema ? GB_FRAME_NOT_OURS
               : gb_frame_check(k->mv_data, k->mv_size, v->mv_data, v->mv_size, &header_bytes);
    if (verdict == GB_FRAME_OK) {
        if (header_bytes < GB_FRAME_BYTES) touch(w, v); /* schema 1: no checksum read it */
        return;
    }
    w->s->report.n_bad++;
    gb_key key = {{0}};
    char hex[2 * GB_KEY_BYTES + 1] = "schema";
    if (!schema) {
        memcpy(key.bytes, k->mv_data, k->mv_size < GB_KEY_BYTES ? k->mv_size : GB_KEY_BYTES);
        gb_key_hex(&key, hex);
    }
    note(w, KIND_DAMAGE, "data.mdb is damaged: db %s: record %s %s", name, hex,
         gb_frame_verdict_text(verdict));
}

/* Every key and value of one database, in order; its header's count must match. */
static int walk_db(walker *w, const char *name)
{
    MDB_dbi dbi;
    MDB_stat st;
    MDB_cursor *cursor = NULL;
    MDB_val k, v, prev = {0, NULL};
    unsigned flags = 0;
    size_t n = 0;
    int db = db_of(name);
    stage(w, "db ", name);
    int rc = mdb_dbi_open(w->txn, name, 0, &dbi);
    if (rc == MDB_INCOMPATIBLE) {
        note(w, KIND_DAMAGE,
             "data.mdb is damaged: its list of databases holds '%s', which is "
             "not a database",
             name);
        return STOP;
    }
    if (!rc) rc = mdb_stat(w->txn, dbi, &st);
    if (!rc) rc = mdb_dbi_flags(w->txn, dbi, &flags);
    if (!rc) rc = mdb_cursor_open(w->txn, dbi, &cursor);
    if (rc) return lmdb_problem(w, "mdb_dbi_open", rc);
    for (MDB_cursor_op op = MDB_FIRST; (rc = mdb_cursor_get(cursor, &k, &v, op)) == 0;
         op = MDB_NEXT) {
        int order = n ? mdb_cmp(w->txn, dbi, &prev, &k) : -1;
        if (order > 0 || (order == 0 && !(flags & MDB_DUPSORT))) {
            note(w, KIND_DAMAGE,
                 "data.mdb is damaged: the keys of db %s are out of order after "
                 "%zu records",
                 name, n);
            rc = STOP;
            break;
        }
        n++;
        prev = k;
        check_record(w, db, name, &k, &v);
        if (db < 0) w->s->report.n_other_records++;
    }
    mdb_cursor_close(cursor);
    if (rc == STOP) return rc;
    if (rc != MDB_NOTFOUND) return lmdb_problem(w, "mdb_cursor_get", rc);
    if (n == st.ms_entries) return 0;
    note(w, KIND_DAMAGE, "data.mdb is damaged: db %s holds %zu records where its header counts %zu",
         name, n, st.ms_entries);
    return STOP;
}

/* The list of named databases is LMDB's main database: names as keys. */
static int walk_main(walker *w)
{
    MDB_cursor *cursor = NULL;
    MDB_val k, v;
    MDB_stat st;
    char names[MAX_NAMED_DBS][MAX_NAME_BYTES];
    size_t n = 0;
    stage(w, "the list of databases", "");
    int rc = mdb_stat(w->txn, MAIN_DBI, &st);
    if (!rc) rc = mdb_cursor_open(w->txn, MAIN_DBI, &cursor);
    if (rc) return lmdb_problem(w, "mdb_cursor_open", rc);
    for (MDB_cursor_op op = MDB_FIRST; (rc = mdb_cursor_get(cursor, &k, &v, op)) == 0;
         op = MDB_NEXT) {
        if (n == MAX_NAMED_DBS || k.mv_size == 0 || k.mv_size >= MAX_NAME_BYTES ||
            memchr(k.mv_data, '\0', k.mv_size)) {
            note(w, KIND_DAMAGE, "data.mdb is damaged: its list of databases holds %s",
                 n == MAX_NAMED_DBS ? "too many names" : "a name that is not text");
            rc = STOP;
            break;
        }
        memcpy(names[n], k.mv_data, k.mv_size);
        names[n++][k.mv_size] = '\0';
    }
    mdb_cursor_close(cursor);
    if (rc == STOP) return rc;
    if (rc != MDB_NOTFOUND) return lmdb_problem(w, "mdb_cursor_get", rc);
    if (n != st.ms_entries) {
        note(w, KIND_DAMAGE,
             "data.mdb is damaged: its list of databases holds %zu names where "
             "its header counts %zu",
             n, st.ms_entries);
        return STOP;
    }
    for (size_t i = 0; i < n; i++)
        if ((rc = walk_db(w, names[i]))) return rc;
    return 0;
}

static void walk(walker *w)
{
    size_t n_free_entries = 0;
    if (open_env(w) || check_size(w)) return;
    int rc = mdb_txn_begin(w->env, NULL, MDB_RDONLY, &w->txn);
    if (rc) {
        lmdb_problem(w, "mdb_txn_begin", rc);
        return;
    }
    if (walk_free_list(w, &n_free_entries) == 0) walk_main(w);
    mdb_txn_abort(w->txn);
    w->txn = NULL;
}

_Noreturn static void child_main(shared *s, const char *dir)
{
    /* Die by the signal, past any handler the process installed (a sanitizer's, a
     * test framework's), so the parent sees what killed the walk. */
    const int fatal[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL};
    for (size_t i = 0; i < sizeof fatal / sizeof *fatal; i++)
        signal(fatal[i], SIG_DFL);
    walker w = {.s = s, .dir = dir};
    walk(&w);
    mdb_env_close(w.env);
    s->finished = 1;
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
 * before the deadline. */
static bool wait_for_eof(int fd, int limit_ms)
{
    double deadline = gb_now_ms() + limit_ms;
    for (;;) {
        double left = deadline - gb_now_ms();
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int n = poll(&p, 1, left > 0 ? (int)left + 1 : 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        char byte;
        ssize_t got = read(fd, &byte, 1);
        if (got == 0) return true;
        if (got < 0 && errno != EINTR && errno != EAGAIN) return true;
    }
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
                     gb_err *err)
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
    if (pid == 0) {
        close(fds[0]);
        child_main(s, dir); /* its end of the pipe closes when it exits */
    }
    close(fds[1]);
    *out_timed_out = !wait_for_eof(fds[0], limit_ms);
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

/* How the walk ended, as the problem to report; "" when it finished. */
static void describe_end(const shared *s, int status, bool timed_out, int limit_ms, char *out,
                         size_t n)
{
    out[0] = '\0';
    if (timed_out)
        snprintf(out, n, "data.mdb is damaged: reading it did not finish within %.1f s (in %.100s)",
                 limit_ms / 1000.0, s->stage);
    else if (status != -1 && WIFSIGNALED(status))
        snprintf(out, n, "data.mdb is damaged: reading it crashed with %s (%s) in %.100s",
                 signal_name(WTERMSIG(status)), strsignal(WTERMSIG(status)), s->stage);
    else if (!s->finished)
        snprintf(out, n, "data.mdb is damaged: reading it stopped (exit status %d) in %.100s",
                 status == -1 ? -1 : WEXITSTATUS(status), s->stage);
}

static int verdict(const char *dir, const shared *s, int status, bool timed_out, int limit_ms,
                   gb_cache_check_report *out, gb_err *err)
{
    char ended[sizeof out->problem];
    describe_end(s, status, timed_out, limit_ms, ended, sizeof ended);
    if (ended[0]) memcpy(out->problem, ended, sizeof ended);
    if (!ended[0] && s->kind == KIND_NONE) return GB_OK;
    if (!ended[0] && s->kind == KIND_ERRNO) {
        int code = s->errno_code;
        bool perm = code == EACCES || code == EPERM;
        return gb_err_set(err, code, "cache %s: %s%s", dir, out->problem,
                          perm ? "; check the permissions of the directory and its files, or "
                                 "pass --cache DIR"
                               : "");
    }
    if (!ended[0] && s->kind == KIND_LOCK)
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

static int walk_in_child(const char *dir, const char *data_path, const struct stat *before,
                         unsigned flags, gb_cache_check_report *out, gb_err *err)
{
    shared *s = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (s == MAP_FAILED)
        return gb_err_set(err, errno, "cache %s: mmap for the damage check: %s", dir,
                          strerror(errno));
    memset(s, 0, sizeof *s);
    snprintf(s->stage, sizeof s->stage, "starting");
    int status = 0, limit_ms = timeout_ms(out->file_bytes);
    bool timed_out = false;
    int rc = run_child(dir, limit_ms, s, &status, &timed_out, err);
    if (rc == GB_OK) {
        size_t file_bytes = out->file_bytes;
        *out = s->report;
        out->file_bytes = file_bytes;
        rc = verdict(dir, s, status, timed_out, limit_ms, out, err);
    }
    munmap(s, sizeof *s);
    if (rc == GB_OK && !(flags & GB_CACHE_CHECK_NO_STAMP)) stamp_write(dir, data_path, before);
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
