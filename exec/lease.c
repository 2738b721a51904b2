#include "exec/lease.h"

#include "base/clock.h"
#include "base/strbuf.h"
#include "exec/interrupt.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define POLL_MS         50
#define MAX_NAME        64
#define TEXT_BYTES      2048
#define VALUE_BYTES     256
#define ANNOUNCE_LATE_S 0.5 /* announce even without a description after this long */

struct gb_lease {
    int fd;
    bool writable; /* the description can be written (the file might be another's, 0644) */
    char name[VALUE_BYTES];
    char path[PATH_MAX];
    int64_t since;
    double waited_s;
};

/* What a lock file says about its holder. */
typedef struct holder {
    long pid;
    int64_t since;
    char user[VALUE_BYTES], host[VALUE_BYTES], command[VALUE_BYTES], activity[VALUE_BYTES];
} holder;

/* ---- names and places ---------------------------------------------------- */

void gb_lease_name(const gb_device_info *dev, char *out, size_t out_bytes)
{
    char host[256] = "localhost";
    if (dev->uuid[0]) {
        snprintf(out, out_bytes, "%s", dev->uuid);
    } else if (dev->pci_bus_id[0]) {
        snprintf(out, out_bytes, "pci-%s", dev->pci_bus_id);
    } else {
        if (gethostname(host, sizeof host) != 0) snprintf(host, sizeof host, "localhost");
        host[sizeof host - 1] = '\0';
        snprintf(out, out_bytes, "%s-device-%d", host, dev->ordinal);
    }
}

static bool plain_name(const char *name)
{
    size_t n = strlen(name);
    return n >= 1 && n <= MAX_NAME &&
           strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-") == n;
}

/* FNV-1a: a name that cannot be a file name becomes one that can. */
static uint64_t hash_name(const char *name)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = (h ^ *p) * 0x100000001b3ull;
    return h;
}

/* The lease directory, made when missing: shared by every user, so 01777 (the
 * umask would cut the mode mkdir is given, hence the chmod). */
static int lease_dir(char *out, size_t n, gb_err *err)
{
    const char *dir = getenv("GPUBENCH_LEASE_DIR");
    if (!dir || !*dir) dir = GB_LEASE_DEFAULT_DIR;
    if (strlen(dir) + MAX_NAME + 32 >= n)
        return gb_err_set(err, GB_EINVAL, "the GPU lease directory %s: path too long", dir);
    snprintf(out, n, "%s", dir);
    if (mkdir(dir, 01777) == 0)
        chmod(dir, 01777);
    else if (errno != EEXIST)
        return gb_err_set(err, GB_EIO, "creating the GPU lease directory %s: %s", dir,
                          strerror(errno));
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return gb_err_set(err, GB_EIO, "the GPU lease directory %s is not a directory", dir);
    return GB_OK;
}

/* Opens the lock file: an existing one without O_CREAT (another user's file stays
 * usable under fs.protected_regular), else a new one, 0666 so others can lock it
 * too. Never follows a link. */
static int open_file(gb_lease *l, gb_err *err)
{
    for (int attempt = 0; attempt < 8; attempt++) {
        l->fd = open(l->path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
        l->writable = l->fd >= 0;
        if (l->fd < 0 && (errno == EACCES || errno == EPERM))
            l->fd = open(l->path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC); /* flock needs no write */
        if (l->fd >= 0 || errno != ENOENT) break;
        l->fd = open(l->path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (l->fd >= 0) {
            l->writable = true;
            fchmod(l->fd, 0666);
            break;
        }
        if (errno != EEXIST) break; /* EEXIST: another process made it just now */
    }
    if (l->fd < 0)
        return gb_err_set(err, GB_EIO, "opening the GPU lease file %s: %s", l->path,
                          strerror(errno));
    struct stat st;
    if (fstat(l->fd, &st) != 0 || !S_ISREG(st.st_mode))
        return gb_err_set(err, GB_EIO, "the GPU lease file %s is not a regular file", l->path);
    return GB_OK;
}

/* ---- the holder's description ---------------------------------------------- */

/* Copies text into a one-line value: control characters become '?'. */
static void clean_value(char *out, size_t n, const char *text)
{
    size_t i = 0;
    for (; text && text[i] && i + 1 < n; i++)
        out[i] = (unsigned char)text[i] < 0x20 || text[i] == 0x7f ? '?' : text[i];
    out[i] = '\0';
}

/* This process's command line, its program's base name first, on one line. */
static void command_line(char *out, size_t n)
{
    char raw[4096];
    out[0] = '\0';
    FILE *f = fopen("/proc/self/cmdline", "r");
    size_t len = f ? fread(raw, 1, sizeof raw - 1, f) : 0;
    if (f) fclose(f);
    raw[len] = '\0';
    gb_strbuf text = GB_STRBUF_INIT;
    for (size_t at = 0; at < len; at += strlen(raw + at) + 1) {
        const char *arg = raw + at, *slash = at == 0 ? strrchr(arg, '/') : NULL;
        gb_sb_printf(&text, "%s%s", at ? " " : "", slash ? slash + 1 : arg);
    }
    clean_value(out, n, gb_sb_status(&text) ? "" : gb_sb_str(&text));
    gb_sb_free(&text);
}

static void user_name(char *out, size_t n)
{
    struct passwd pw, *found = NULL;
    char buf[4096];
    if (getpwuid_r(geteuid(), &pw, buf, sizeof buf, &found) == 0 && found)
        clean_value(out, n, found->pw_name);
    else
        snprintf(out, n, "uid %ld", (long)geteuid());
}

static void describe_self(gb_lease *l, const char *activity)
{
    char user[VALUE_BYTES], host[VALUE_BYTES] = "", command[VALUE_BYTES], what[VALUE_BYTES];
    char text[TEXT_BYTES];
    if (!l->writable) return;
    user_name(user, sizeof user);
    if (gethostname(host, sizeof host) != 0) host[0] = '\0';
    host[sizeof host - 1] = '\0';
    command_line(command, sizeof command);
    clean_value(what, sizeof what, activity ? activity : "");
    int len = snprintf(text, sizeof text,
                       "gpubench GPU lease\nname=%s\npid=%ld\nuser=%s\nhost=%s\nsince=%" PRId64
                       "\ncommand=%s\nactivity=%s\n",
                       l->name, (long)getpid(), user, host, l->since, command, what);
    if (len < 0) return;
    if (len >= (int)sizeof text) len = (int)sizeof text - 1;
    /* A waiter may read between the two calls: it then sees no pid and reads again. */
    if (ftruncate(l->fd, 0) == 0 && pwrite(l->fd, text, (size_t)len, 0) < 0) {
        /* the lock holds without a description; waiters say "another process" */
    }
}

/* The value of "key=value" in text ("" when absent). */
static void field(const char *text, const char *key, char *out, size_t n)
{
    size_t klen = strlen(key);
    out[0] = '\0';
    for (const char *line = text; *line;) {
        size_t len = strcspn(line, "\n");
        if (len > klen && strncmp(line, key, klen) == 0 && line[klen] == '=') {
            gb_strlcpy(out, line + klen + 1, len - klen < n ? len - klen : n);
            return;
        }
        line += len + (line[len] == '\n');
    }
}

/* Reads the description; false when there is none (yet) or it names a process of
 * this host that has ended (left by a holder that could not rewrite the file). */
static bool read_holder(int fd, holder *h)
{
    char text[TEXT_BYTES], value[VALUE_BYTES], host[VALUE_BYTES] = "";
    memset(h, 0, sizeof *h);
    ssize_t n = pread(fd, text, sizeof text - 1, 0);
    text[n > 0 ? n : 0] = '\0';
    field(text, "pid", value, sizeof value);
    h->pid = strtol(value, NULL, 10);
    field(text, "since", value, sizeof value);
    h->since = strtoll(value, NULL, 10);
    field(text, "user", h->user, sizeof h->user);
    field(text, "host", h->host, sizeof h->host);
    field(text, "command", h->command, sizeof h->command);
    field(text, "activity", h->activity, sizeof h->activity);
    if (h->pid <= 0) return false;
    if (gethostname(host, sizeof host) != 0) host[0] = '\0';
    host[sizeof host - 1] = '\0';
    bool here = strcmp(host, h->host) == 0;
    if (here) h->host[0] = '\0'; /* messages name the host only when it is another */
    return !here || kill((pid_t)h->pid, 0) == 0 || errno == EPERM;
}

/* "pid 4242 (root, gpubench-tune gemm.lua, since 21:30:05, tuning gemm_f32)" */
static void holder_text(const holder *h, bool known, char *out, size_t n)
{
    if (!known) {
        snprintf(out, n, "another process");
        return;
    }
    char since[32] = "?";
    time_t t = (time_t)h->since, now = time(NULL);
    struct tm tm;
    if (h->since > 0 && localtime_r(&t, &tm))
        strftime(since, sizeof since, now - t < 12 * 3600 ? "%H:%M:%S" : "%Y-%m-%d %H:%M", &tm);
    snprintf(out, n, "pid %ld%s%s (%s, %s, since %s%s%s)", h->pid, h->host[0] ? " on " : "",
             h->host, h->user, h->command[0] ? h->command : "?", since, h->activity[0] ? ", " : "",
             h->activity);
}

/* ---- taking it ------------------------------------------------------------ */

static void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, ms % 1000 * 1000000L};
    nanosleep(&ts, NULL); /* a signal cuts it short: the loop looks at the interrupt */
}

static void announce(const gb_lease *l, const char *who, double wait_s, FILE *log)
{
    if (!log) return;
    if (wait_s < 0)
        fprintf(log, "gpubench: %s is in use by %s; waiting until it is free (--lease-wait)\n",
                l->name, who);
    else
        fprintf(log, "gpubench: %s is in use by %s; waiting up to %g s (--lease-wait)\n", l->name,
                who, wait_s);
    fflush(log);
}

/* Polls the lock until it is ours, the wait runs out or the user interrupts. */
static int wait_for_lock(gb_lease *l, double wait_s, FILE *log, gb_err *err)
{
    double start = gb_now_ms();
    bool announced = false;
    for (;;) {
        if (flock(l->fd, LOCK_EX | LOCK_NB) == 0) break;
        if (errno == EINTR) continue;
        if (errno != EWOULDBLOCK)
            return gb_err_set(err, GB_EIO, "locking the GPU lease file %s: %s", l->path,
                              strerror(errno));
        holder h;
        char who[4 * VALUE_BYTES];
        bool known = read_holder(l->fd, &h);
        holder_text(&h, known, who, sizeof who);
        double waited_s = (gb_now_ms() - start) / 1e3;
        if (wait_s == 0)
            return gb_err_set(err, GB_EBUSY, "%s is in use by %s; not waiting (--lease-wait 0)",
                              l->name, who);
        if (wait_s > 0 && waited_s >= wait_s)
            return gb_err_set(err, GB_EBUSY,
                              "%s is in use by %s; gave up after %g s (--lease-wait)", l->name, who,
                              wait_s);
        if (gb_interrupted())
            return gb_err_set(err, GB_EINTR, "interrupted while waiting for %s (in use by %s)",
                              l->name, who);
        if (!announced && (known || waited_s >= ANNOUNCE_LATE_S)) {
            announce(l, who, wait_s, log);
            announced = true;
        }
        double left_ms = wait_s < 0 ? POLL_MS : wait_s * 1e3 - (gb_now_ms() - start);
        pause_ms(left_ms >= POLL_MS ? POLL_MS : left_ms > 1 ? (long)left_ms : 1);
    }
    l->waited_s = (gb_now_ms() - start) / 1e3;
    return GB_OK;
}

int gb_lease_acquire_as(const char *gpu_uuid, double wait_s, const char *activity, FILE *log,
                        gb_lease **out, gb_err *err)
{
    *out = NULL;
    if (!gpu_uuid || !*gpu_uuid) return gb_err_set(err, GB_EINVAL, "a GPU lease needs a name");
    gb_lease *l = calloc(1, sizeof *l);
    if (!l) return gb_err_set(err, GB_ENOMEM, "out of memory");
    l->fd = -1;
    clean_value(l->name, sizeof l->name, gpu_uuid);
    char dir[PATH_MAX - MAX_NAME - 32];
    int rc = lease_dir(dir, sizeof dir, err);
    if (rc) goto cleanup;
    if (plain_name(gpu_uuid))
        snprintf(l->path, sizeof l->path, "%s/%s.lock", dir, gpu_uuid);
    else
        snprintf(l->path, sizeof l->path, "%s/hashed_%016" PRIx64 ".lock", dir,
                 hash_name(gpu_uuid));
    if ((rc = open_file(l, err)) || (rc = wait_for_lock(l, wait_s, log, err))) goto cleanup;
    l->since = (int64_t)time(NULL);
    describe_self(l, activity);
    *out = l;
    l = NULL;
cleanup:
    if (l && l->fd >= 0) close(l->fd);
    free(l);
    return rc;
}

int gb_lease_acquire(const char *gpu_uuid, double wait_s, gb_lease **out, gb_err *err)
{
    return gb_lease_acquire_as(gpu_uuid, wait_s, NULL, stderr, out, err);
}

void gb_lease_set_activity(gb_lease *lease, const char *activity)
{
    if (lease) describe_self(lease, activity);
}

double gb_lease_waited_s(const gb_lease *lease)
{
    return lease ? lease->waited_s : 0;
}

const char *gb_lease_path(const gb_lease *lease)
{
    return lease ? lease->path : "";
}

void gb_lease_release(gb_lease *lease)
{
    if (!lease) return;
    /* Cleared first, so nobody reads this process's description after it let go. */
    if (lease->writable && ftruncate(lease->fd, 0) != 0) {
        /* the next holder rewrites it anyway */
    }
    close(lease->fd); /* drops the flock */
    free(lease);
}
