#include "cache/cache.h"
#include "cache/cache_internal.h"

#include "cache/check.h"
#include "cache/check_walk.h"
#include "cache/frame.h"

#include <errno.h>
#include <lmdb.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

/* The map starts here and doubles on MDB_MAP_FULL. Pages are only written as used,
 * so a large map costs address space, not disk. */
#define INITIAL_MAP_BYTES ((size_t)1 << 30)
/* Test hook: GB_CACHE_INITIAL_MAPSIZE (bytes) starts the map small, so the tests can
 * reach MDB_MAP_FULL and MDB_MAP_RESIZED without writing a gigabyte. */
#define INITIAL_MAP_ENV "GB_CACHE_INITIAL_MAPSIZE"
/* A write that came out short with less than this free on the disk ran out of it. */
#define FULL_DISK_BYTES ((uint64_t)16 << 20)
/* Growth steps one put may take; each doubles the map. */
#define MAX_RETRIES 12
#define SCHEMA_KEY  "schema"
/* The schema record's header: 'G', 'B', the schema as a big-endian u16. */
#define SCHEMA_HEADER_BYTES 4

struct gb_cache {
    char *dir;
    MDB_env *env;
    MDB_dbi dbi[GB_DB_COUNT];
    bool has_db[GB_DB_COUNT]; /* false: read-only and the db was never created */
    bool readonly;
    bool nolock; /* read-only without a reader slot: lock.mdb cannot be written */
    int denied;  /* the errno (permissions, read-only media, a full disk) that made a
                    read-write open fall back to read-only */
    /* Held shared by every transaction and exclusively by a map resize, which LMDB
     * allows only while this process has no transaction open. */
    pthread_rwlock_t lock;
    bool lock_ready;
};

/* ---- errors ------------------------------------------------------------- */

static const char *lmdb_hint(int rc)
{
    switch (rc) {
    case MDB_INVALID:
    case MDB_INCOMPATIBLE:
        return "; the directory holds something that is not a gpubench cache or the cache is "
               "damaged: move it aside or pass --cache DIR";
    case MDB_CORRUPTED:
    case MDB_PAGE_NOTFOUND:
        return "; the cache is damaged: move it aside or pass --cache DIR";
    case MDB_VERSION_MISMATCH:
        return "; the cache was written by an incompatible LMDB: move it aside or pass --cache DIR";
    case MDB_MAP_FULL:
        return "; the cache could not grow: free some disk or pass --cache DIR";
    case MDB_READERS_FULL:
        return "; too many processes have the cache open";
    case EACCES:
    case EPERM:
        return "; check the directory's permissions or pass --cache DIR";
    case EROFS:
        return "; the file system is read-only: pass --cache DIR";
    case ENOSPC:
        return "; the disk is full: free some space or pass --cache DIR (what was stored "
               "before is kept)";
    case EDQUOT:
        return "; the disk quota is used up: free some space or pass --cache DIR (what was "
               "stored before is kept)";
    case EFBIG:
        return "; the file reached the largest size this process may write (ulimit -f): raise "
               "the limit or pass --cache DIR (what was stored before is kept)";
    case ENOENT:
        return "; there is no cache there";
    default:
        return "";
    }
}

/* LMDB's own codes become GB_ECACHE; errno values pass through. */
static int lmdb_fail(const gb_cache *c, gb_err *err, const char *call, int rc)
{
    int code = rc > 0 ? rc : GB_ECACHE;
    return gb_err_set(err, code, "cache %s: %s: %s%s", c->dir, call, mdb_strerror(rc),
                      lmdb_hint(rc));
}

/* LMDB reports a short write as EIO. What makes a write to the cache come out short
 * is the file size limit (ulimit -f) or a full disk, so when either shows, that is
 * the error; what was committed before is intact either way. */
static int short_write_cause(const gb_cache *c, int rc)
{
    char path[4200];
    struct stat st;
    struct rlimit limit;
    struct statvfs fs;
    if (rc != EIO) return rc;
    snprintf(path, sizeof path, "%s/data.mdb", c->dir);
    if (getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
        stat(path, &st) == 0 && (uint64_t)st.st_size + (1 << 16) >= (uint64_t)limit.rlim_cur)
        return EFBIG;
    if (statvfs(c->dir, &fs) == 0 && (uint64_t)fs.f_bavail * fs.f_frsize < FULL_DISK_BYTES)
        return ENOSPC;
    return rc;
}

static int commit_fail(const gb_cache *c, gb_err *err, const char *call, int rc)
{
    int cause = short_write_cause(c, rc);
    if (cause == rc) return lmdb_fail(c, err, call, rc);
    return gb_err_set(err, cause, "cache %s: %s: a short write (%s)%s", c->dir, call,
                      strerror(cause), lmdb_hint(cause));
}

static int not_found(const gb_cache *c, gb_cache_db db, const gb_key *key, gb_err *err)
{
    char hex[2 * GB_KEY_BYTES + 1];
    gb_key_hex(key, hex);
    return gb_err_set(err, GB_ENOTFOUND, "cache %s: db %s: no record %s", c->dir,
                      gb_cache_db_name(db), hex);
}

/* what (and detail, which may be "") says what is wrong with the record. */
int gb_cache_bad_record(const gb_cache *c, gb_cache_db db, const gb_key *key, const char *what,
                        const char *detail, gb_err *err)
{
    char hex[2 * GB_KEY_BYTES + 1];
    gb_key_hex(key, hex);
    return gb_err_set(err, GB_ECACHE,
                      "cache %s: db %s: record %s %s%s; the cache is damaged or from a newer "
                      "gpubench: move it aside (mv %s %s.damaged) or pass --cache DIR",
                      c->dir, gb_cache_db_name(db), hex, what, detail, c->dir, c->dir);
}

static int check_writable(const gb_cache *c, gb_err *err)
{
    if (!c->readonly) return GB_OK;
    if (c->denied)
        return gb_err_set(err, c->denied,
                          "cache %s: opened read-only (%s), so nothing can be stored%s", c->dir,
                          strerror(c->denied), lmdb_hint(c->denied));
    return gb_err_set(err, GB_EINVAL, "cache %s: opened read-only, so nothing can be stored",
                      c->dir);
}

static int check_db(const gb_cache *c, gb_cache_db db, gb_err *err)
{
    if ((unsigned)db < GB_DB_COUNT) return GB_OK;
    return gb_err_set(err, GB_EINVAL, "cache %s: no database number %d", c->dir, (int)db);
}

/* ---- transactions ------------------------------------------------------- */

/* What one operation needs inside its transaction. A body returns GB_OK, a GB_E*
 * code with err already set, or an LMDB code with `call` naming the failed call. */
typedef struct op op;
typedef int (*op_body)(MDB_txn *txn, op *o);
struct op {
    gb_cache *c;
    gb_err *err;
    const char *call;
    gb_cache_db db;
    const gb_key *key;
    const gb_cache_piece *pieces;
    size_t n_pieces;
    void *value; /* get: the copied payload */
    size_t len;
    gb_cache_visit_fn visit;
    gb_cache_item_fn item;
    gb_cache_decide_fn decide;
    void *ctx;
    size_t map_bytes; /* the map size when MDB_MAP_FULL was seen */
};

static int lmdb_call(op *o, const char *call, int rc)
{
    if (rc) o->call = call;
    return rc;
}

static int attempt(op *o, unsigned txn_flags, op_body body)
{
    MDB_txn *txn = NULL;
    pthread_rwlock_rdlock(&o->c->lock);
    int rc = lmdb_call(o, "mdb_txn_begin", mdb_txn_begin(o->c->env, NULL, txn_flags, &txn));
    if (rc) goto cleanup;
    if ((rc = body(txn, o))) goto cleanup;
    rc = mdb_txn_commit(txn); /* frees txn, also on failure */
    txn = NULL;
    lmdb_call(o, "mdb_txn_commit", rc);
cleanup:
    if (txn) mdb_txn_abort(txn);
    if (o->call && rc == MDB_MAP_FULL) {
        MDB_envinfo info;
        mdb_env_info(o->c->env, &info);
        o->map_bytes = info.me_mapsize;
    }
    pthread_rwlock_unlock(&o->c->lock);
    return rc;
}

/* Grows the map after MDB_MAP_FULL (unless another thread already did), or adopts
 * the size another process gave it after MDB_MAP_RESIZED. */
static int resize(op *o, int why)
{
    gb_cache *c = o->c;
    MDB_envinfo info;
    int rc = GB_OK;
    pthread_rwlock_wrlock(&c->lock);
    mdb_env_info(c->env, &info);
    if (why == MDB_MAP_RESIZED)
        rc = mdb_env_set_mapsize(c->env, 0);
    else if (info.me_mapsize <= o->map_bytes)
        rc = mdb_env_set_mapsize(c->env, 2 * o->map_bytes);
    pthread_rwlock_unlock(&c->lock);
    return lmdb_call(o, "mdb_env_set_mapsize", rc);
}

static int run(op *o, unsigned txn_flags, op_body body)
{
    int rc = GB_OK;
    for (int tries = 0;; tries++) {
        o->call = NULL;
        rc = attempt(o, txn_flags, body);
        bool grow = o->call && (rc == MDB_MAP_FULL || rc == MDB_MAP_RESIZED);
        if (!grow || tries == MAX_RETRIES) break;
        int resized = resize(o, rc);
        if (resized) {
            rc = resized;
            break;
        }
    }
    if (o->call) return commit_fail(o->c, o->err, o->call, rc);
    return rc;
}

static MDB_val key_val(const gb_key *key)
{
    return (MDB_val){.mv_size = GB_KEY_BYTES, .mv_data = (void *)key->bytes};
}

/* ---- opening ------------------------------------------------------------ */

/* mkdir -p; a path that exists must be a directory. */
static int make_dirs(const char *dir, gb_err *err)
{
    char path[4096];
    struct stat st;
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path)
        return gb_err_set(err, GB_EINVAL, "cache %s: the path is too long", dir);
    for (char *p = path + 1;; p++) {
        if (*p != '/' && *p != '\0') continue;
        char was = *p;
        *p = '\0';
        int failed = mkdir(path, 0755) != 0 ? errno : 0;
        if (failed && failed != EEXIST && stat(path, &st) != 0)
            return gb_err_set(err, failed, "cache %s: mkdir %s: %s%s", dir, path, strerror(failed),
                              lmdb_hint(failed));
        *p = was;
        if (was == '\0') break;
    }
    if (stat(path, &st) == 0 && !S_ISDIR(st.st_mode))
        return gb_err_set(err, ENOTDIR, "cache %s: not a directory; pass --cache DIR", dir);
    return GB_OK;
}

static size_t initial_map_bytes(void)
{
    const char *text = getenv(INITIAL_MAP_ENV);
    if (!text || !*text) return INITIAL_MAP_BYTES;
    char *end = NULL;
    unsigned long long n = strtoull(text, &end, 10);
    return *end == '\0' && n > 0 ? (size_t)n : INITIAL_MAP_BYTES;
}

typedef enum open_mode {
    MODE_WRITE,
    MODE_READ,        /* data.mdb cannot be written; lock.mdb can (a reader slot) */
    MODE_READ_NOLOCK, /* lock.mdb cannot be written either: no reader slot */
} open_mode;

static bool denied(int rc)
{
    return rc == EACCES || rc == EROFS || rc == EPERM;
}

static int open_env(gb_cache *c, open_mode mode, gb_err *err)
{
    static const unsigned mode_flags[] = {0, MDB_RDONLY, MDB_RDONLY | MDB_NOLOCK};
    const char *call = "mdb_env_create";
    int rc = mdb_env_create(&c->env);
    if (rc) goto cleanup;
    call = "mdb_env_set_maxdbs";
    if ((rc = mdb_env_set_maxdbs(c->env, GB_DB_COUNT))) goto cleanup;
    call = "mdb_env_set_mapsize";
    if ((rc = mdb_env_set_mapsize(c->env, initial_map_bytes()))) goto cleanup;
    call = "mdb_env_open";
    rc = mdb_env_open(c->env, c->dir, MDB_NOTLS | mode_flags[mode], 0644);
cleanup:
    if (rc) {
        mdb_env_close(c->env); /* also required after a failed mdb_env_open */
        c->env = NULL;
        return lmdb_fail(c, err, call, rc);
    }
    /* Frees the reader slots of processes that died holding them (kill -9), which
     * would otherwise keep their pages from being reused. */
    int n_dead = 0;
    if (mode != MODE_READ_NOLOCK) mdb_reader_check(c->env, &n_dead);
    c->readonly = mode != MODE_WRITE;
    c->nolock = mode == MODE_READ_NOLOCK;
    return GB_OK;
}

static bool data_file_empty(const char *dir)
{
    char path[4200];
    struct stat st;
    snprintf(path, sizeof path, "%s/data.mdb", dir);
    return stat(path, &st) == 0 && st.st_size == 0;
}

/* Read-only: with a reader slot where lock.mdb can be written, else without one. A
 * zero-length data.mdb holds no records, and LMDB can open it only to write it, so
 * it reads as an empty cache: no environment, every database absent. */
static int open_read(gb_cache *c, bool lock_usable, gb_err *err)
{
    c->readonly = true;
    if (data_file_empty(c->dir)) return GB_OK;
    int rc = lock_usable ? open_env(c, MODE_READ, err) : EACCES;
    if (denied(rc)) rc = open_env(c, MODE_READ_NOLOCK, err);
    if (rc == GB_OK) gb_err_clear(err);
    return rc;
}

static bool disk_full(int rc)
{
    return rc == ENOSPC || rc == EDQUOT || rc == EFBIG;
}

/* Read-write, or read-only when the files may be read but not written, or when the
 * disk is too full to write them: the run goes on, and says that nothing is saved. */
static int open_env_any(gb_cache *c, bool readonly, gb_err *err)
{
    int lock_rc = gb_check_reserve_lock(c->dir);
    if (readonly) return open_read(c, lock_rc == 0, err);
    int rc = lock_rc ? gb_err_set(err, lock_rc, "cache %s: lock.mdb: %s%s", c->dir,
                                  strerror(lock_rc), lmdb_hint(lock_rc))
                     : open_env(c, MODE_WRITE, err);
    if (!denied(rc) && !disk_full(rc)) return rc;
    if (open_read(c, lock_rc == 0, NULL) != GB_OK) return rc; /* err says why writing failed */
    c->denied = rc;
    gb_err_clear(err);
    return GB_OK;
}

/* The schema record has no frame, so that every gpubench can read it, and an older
 * one says "newer schema" instead of "unreadable". */
static int write_schema(MDB_txn *txn, op *o)
{
    uint8_t record[SCHEMA_HEADER_BYTES + 16];
    record[0] = 'G';
    record[1] = 'B';
    record[2] = (uint8_t)(GB_CACHE_SCHEMA >> 8);
    record[3] = (uint8_t)(GB_CACHE_SCHEMA & 0xff);
    int n = snprintf((char *)record + SCHEMA_HEADER_BYTES, sizeof record - SCHEMA_HEADER_BYTES,
                     "%d", GB_CACHE_SCHEMA);
    MDB_val k = {strlen(SCHEMA_KEY), SCHEMA_KEY}, v = {SCHEMA_HEADER_BYTES + (size_t)n, record};
    return lmdb_call(o, "mdb_put", mdb_put(txn, o->c->dbi[GB_DB_META], &k, &v, 0));
}

/* The schema record's payload as a number; 0 when it is not one. */
static unsigned long parse_schema(const MDB_val *v)
{
    const char *p = v->mv_data;
    if (v->mv_size <= SCHEMA_HEADER_BYTES || v->mv_size > SCHEMA_HEADER_BYTES + 9 || p[0] != 'G' ||
        p[1] != 'B')
        return 0;
    unsigned long n = 0;
    for (size_t i = SCHEMA_HEADER_BYTES; i < v->mv_size; i++) {
        if (p[i] < '0' || p[i] > '9') return 0;
        n = n * 10 + (unsigned long)(p[i] - '0');
    }
    return n;
}

/* A cache of an older schema is read as it is and, when written, upgraded: its old
 * records stay readable, and the new ones need this gpubench. */
static int check_schema(MDB_txn *txn, op *o)
{
    gb_cache *c = o->c;
    if (!c->has_db[GB_DB_META]) return GB_OK;
    MDB_val k = {strlen(SCHEMA_KEY), SCHEMA_KEY}, v;
    int rc = mdb_get(txn, c->dbi[GB_DB_META], &k, &v);
    if (rc == MDB_NOTFOUND) return c->readonly ? GB_OK : write_schema(txn, o);
    if (rc) return lmdb_call(o, "mdb_get", rc);
    unsigned long schema = parse_schema(&v);
    if (schema == 0)
        return gb_err_set(o->err, GB_ECACHE,
                          "cache %s: the schema record in db meta is unreadable; move the cache "
                          "aside (mv %s %s.damaged) or pass --cache DIR",
                          c->dir, c->dir, c->dir);
    if (schema > GB_CACHE_SCHEMA)
        return gb_err_set(o->err, GB_ECACHE,
                          "cache %s has schema %lu, newer than this gpubench's schema %d: upgrade "
                          "gpubench or pass --cache DIR",
                          c->dir, schema, GB_CACHE_SCHEMA);
    if (schema < GB_CACHE_SCHEMA && !c->readonly) return write_schema(txn, o);
    return GB_OK;
}

static int open_dbs(MDB_txn *txn, op *o)
{
    gb_cache *c = o->c;
    for (int i = 0; i < GB_DB_COUNT; i++) {
        int rc = mdb_dbi_open(txn, gb_cache_db_name((gb_cache_db)i), c->readonly ? 0 : MDB_CREATE,
                              &c->dbi[i]);
        c->has_db[i] = rc == 0;
        if (rc == MDB_NOTFOUND && c->readonly) continue;
        if (rc) return lmdb_call(o, "mdb_dbi_open", rc);
    }
    return check_schema(txn, o);
}

/* LMDB refused a file the check passed, or skipped by its stamp: damage that kept
 * data.mdb's times, or a lock file held by another process. A full check says which,
 * in its own words; a file it finds sound keeps LMDB's message. */
static void explain(const char *dir, gb_err *err)
{
    gb_cache_check_report report;
    gb_err why;
    if (gb_cache_check(dir, GB_CACHE_CHECK_FORCE, &report, &why) == GB_ECACHE)
        gb_err_copy(err, &why);
}

int gb_cache_open(const char *dir, unsigned flags, gb_cache **out, gb_err *err)
{
    bool readonly = flags & GB_CACHE_READONLY, passed_check = false;
    gb_cache_check_report report;
    int rc = GB_ENOMEM;
    *out = NULL;
    if (!dir || !*dir) return gb_err_set(err, GB_EINVAL, "no cache directory given");
    gb_cache *c = calloc(1, sizeof *c);
    if (!c || !(c->dir = strdup(dir))) goto cleanup;
    if (pthread_rwlock_init(&c->lock, NULL)) goto cleanup;
    c->lock_ready = true;
    if (!readonly && (rc = make_dirs(dir, err))) goto cleanup;
    struct stat st; /* read-only, nothing is made: a file where the folder should be */
    if (readonly && stat(dir, &st) == 0 && !S_ISDIR(st.st_mode)) {
        rc = gb_err_set(err, ENOTDIR, "cache %s: not a directory; pass --cache DIR", dir);
        goto cleanup;
    }
    if (!(flags & GB_CACHE_SKIP_CHECK)) {
        if ((rc = gb_cache_check(dir, 0, &report, err))) goto cleanup;
        passed_check = true;
    }
    if ((rc = open_env_any(c, readonly, err)) || !c->env) goto cleanup;
    op o = {.c = c, .err = err};
    rc = run(&o, c->readonly ? MDB_RDONLY : 0, open_dbs);
cleanup:
    if (rc == GB_ENOMEM) gb_err_set(err, rc, "cache %s: out of memory", dir);
    if (rc == GB_ECACHE && passed_check) explain(dir, err);
    if (rc)
        gb_cache_close(c);
    else
        *out = c;
    return rc;
}

void gb_cache_close(gb_cache *cache)
{
    if (!cache) return;
    if (cache->env) mdb_env_close(cache->env); /* also closes the dbi handles */
    if (cache->lock_ready) pthread_rwlock_destroy(&cache->lock);
    free(cache->dir);
    free(cache);
}

const char *gb_cache_dir(const gb_cache *cache)
{
    return cache->dir;
}

int gb_cache_default_dir(char *out, size_t out_bytes, gb_err *err)
{
    const char *own = getenv("GPUBENCH_CACHE"), *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    int n;
    if (own && *own)
        n = snprintf(out, out_bytes, "%s", own);
    else if (xdg && *xdg)
        n = snprintf(out, out_bytes, "%s/gpubench", xdg);
    else if (home && *home)
        n = snprintf(out, out_bytes, "%s/.cache/gpubench", home);
    else
        return gb_err_set(err, GB_EINVAL,
                          "no cache directory: none of GPUBENCH_CACHE, XDG_CACHE_HOME and HOME is "
                          "set; pass --cache DIR");
    if (n < 0 || (size_t)n >= out_bytes)
        return gb_err_set(err, GB_EINVAL,
                          "the cache directory's path is too long; pass --cache DIR");
    return GB_OK;
}

int gb_cache_open_or_default(const char *dir, unsigned flags, gb_cache **out, gb_err *err)
{
    char path[4096];
    if (!dir) {
        int rc = gb_cache_default_dir(path, sizeof path, err);
        if (rc) return rc;
        dir = path;
    }
    return gb_cache_open(dir, flags, out, err);
}

/* ---- raw records -------------------------------------------------------- */

static int get_body(MDB_txn *txn, op *o)
{
    MDB_val k = key_val(o->key), v;
    int rc = mdb_get(txn, o->c->dbi[o->db], &k, &v);
    if (rc == MDB_NOTFOUND) return not_found(o->c, o->db, o->key, o->err);
    if (rc) return lmdb_call(o, "mdb_get", rc);
    size_t header_bytes = 0;
    gb_frame_verdict verdict =
        gb_frame_check(o->key->bytes, GB_KEY_BYTES, v.mv_data, v.mv_size, &header_bytes);
    if (verdict != GB_FRAME_OK)
        return gb_cache_bad_record(o->c, o->db, o->key, gb_frame_verdict_text(verdict), "", o->err);
    o->len = v.mv_size - header_bytes;
    if (!(o->value = malloc(o->len ? o->len : 1)))
        return gb_err_set(o->err, GB_ENOMEM, "cache %s: out of memory", o->c->dir);
    memcpy(o->value, (const char *)v.mv_data + header_bytes, o->len);
    return GB_OK;
}

int gb_cache_get(gb_cache *cache, gb_cache_db db, const gb_key *key, void **out_value,
                 size_t *out_len, gb_err *err)
{
    int rc = check_db(cache, db, err);
    if (rc) return rc;
    if (!cache->has_db[db]) return not_found(cache, db, key, err);
    op o = {.c = cache, .err = err, .db = db, .key = key};
    if ((rc = run(&o, MDB_RDONLY, get_body))) {
        free(o.value); /* copied before a commit that failed */
        return rc;
    }
    *out_value = o.value;
    *out_len = o.len;
    return GB_OK;
}

/* Stores the pieces straight into the space LMDB reserves, then seals the frame. */
static int put_body(MDB_txn *txn, op *o)
{
    MDB_val k = key_val(o->key), v = {.mv_size = GB_FRAME_BYTES};
    for (size_t i = 0; i < o->n_pieces; i++)
        v.mv_size += o->pieces[i].n;
    int rc = mdb_put(txn, o->c->dbi[o->db], &k, &v, MDB_RESERVE);
    if (rc) return lmdb_call(o, "mdb_put", rc);
    uint8_t *p = (uint8_t *)v.mv_data + GB_FRAME_BYTES;
    for (size_t i = 0; i < o->n_pieces; i++) {
        if (o->pieces[i].n) memcpy(p, o->pieces[i].bytes, o->pieces[i].n);
        p += o->pieces[i].n;
    }
    gb_frame_seal(o->key->bytes, GB_KEY_BYTES, v.mv_data, v.mv_size);
    return GB_OK;
}

int gb_cache_put_pieces(gb_cache *cache, gb_cache_db db, const gb_key *key,
                        const gb_cache_piece *pieces, size_t n_pieces, gb_err *err)
{
    int rc = check_db(cache, db, err);
    if (!rc) rc = check_writable(cache, err);
    if (rc) return rc;
    op o = {.c = cache, .err = err, .db = db, .key = key, .pieces = pieces, .n_pieces = n_pieces};
    return run(&o, 0, put_body);
}

int gb_cache_put(gb_cache *cache, gb_cache_db db, const gb_key *key, const void *value, size_t len,
                 gb_err *err)
{
    gb_cache_piece pieces[] = {{value, len}};
    return gb_cache_put_pieces(cache, db, key, pieces, 1, err);
}

static int del_body(MDB_txn *txn, op *o)
{
    MDB_val k = key_val(o->key);
    int rc = mdb_del(txn, o->c->dbi[o->db], &k, NULL);
    if (rc == MDB_NOTFOUND) return not_found(o->c, o->db, o->key, o->err);
    return lmdb_call(o, "mdb_del", rc);
}

int gb_cache_del(gb_cache *cache, gb_cache_db db, const gb_key *key, gb_err *err)
{
    int rc = check_db(cache, db, err);
    if (!rc) rc = check_writable(cache, err);
    if (rc) return rc;
    op o = {.c = cache, .err = err, .db = db, .key = key};
    return run(&o, 0, del_body);
}

/* ---- walking ------------------------------------------------------------ */

/* Keys that are not 16 bytes (meta's "schema") are not records and are skipped. The
 * callback runs inside the read transaction, under the handle's shared lock: it may
 * read and write the cache, but a write that has to grow the map would wait for the
 * exclusive lock forever, so writes belong after the walk. */
static int visit(op *o, const MDB_val *k, const MDB_val *v)
{
    if (k->mv_size != GB_KEY_BYTES) return 0;
    gb_key key;
    memcpy(key.bytes, k->mv_data, GB_KEY_BYTES);
    size_t header_bytes = 0;
    bool ours = gb_frame_check(key.bytes, GB_KEY_BYTES, v->mv_data, v->mv_size, &header_bytes) ==
                GB_FRAME_OK;
    const uint8_t *p = v->mv_data;
    if (o->item) {
        gb_cache_item item = {.key = key};
        if (ours)
            item = (gb_cache_item){key, (unsigned)p[2] << 8 | p[3], p + header_bytes,
                                   v->mv_size - header_bytes};
        return o->item(o->ctx, &item);
    }
    if (!ours) return o->visit(o->ctx, &key, NULL, 0);
    return o->visit(o->ctx, &key, p + header_bytes, v->mv_size - header_bytes);
}

static int foreach_body(MDB_txn *txn, op *o)
{
    MDB_cursor *cursor = NULL;
    MDB_val k, v;
    int rc = mdb_cursor_open(txn, o->c->dbi[o->db], &cursor);
    if (rc) return lmdb_call(o, "mdb_cursor_open", rc);
    int stop = 0;
    for (MDB_cursor_op step = MDB_FIRST; !stop; step = MDB_NEXT) {
        if ((rc = mdb_cursor_get(cursor, &k, &v, step))) break;
        stop = visit(o, &k, &v);
    }
    mdb_cursor_close(cursor);
    if (stop) return stop;
    return rc == MDB_NOTFOUND ? GB_OK : lmdb_call(o, "mdb_cursor_get", rc);
}

int gb_cache_foreach(gb_cache *cache, gb_cache_db db, gb_cache_visit_fn fn, void *ctx, gb_err *err)
{
    int rc = check_db(cache, db, err);
    if (rc || !cache->has_db[db]) return rc;
    op o = {.c = cache, .err = err, .db = db, .visit = fn, .ctx = ctx};
    return run(&o, MDB_RDONLY, foreach_body);
}

int gb_cache_walk(gb_cache *cache, gb_cache_db db, gb_cache_item_fn fn, void *ctx, gb_err *err)
{
    int rc = check_db(cache, db, err);
    if (rc || !cache->has_db[db]) return rc;
    op o = {.c = cache, .err = err, .db = db, .item = fn, .ctx = ctx};
    return run(&o, MDB_RDONLY, foreach_body);
}

static int update_body(MDB_txn *txn, op *o)
{
    MDB_val k = key_val(o->key), v;
    const void *old = NULL, *new_value = NULL;
    size_t old_len = 0, new_len = 0;
    int rc = mdb_get(txn, o->c->dbi[o->db], &k, &v);
    if (rc && rc != MDB_NOTFOUND) return lmdb_call(o, "mdb_get", rc);
    size_t header_bytes = 0;
    if (rc == 0 && gb_frame_check(o->key->bytes, GB_KEY_BYTES, v.mv_data, v.mv_size,
                                  &header_bytes) == GB_FRAME_OK) {
        old = (const uint8_t *)v.mv_data + header_bytes;
        old_len = v.mv_size - header_bytes;
    }
    if ((rc = o->decide(o->ctx, old, old_len, &new_value, &new_len))) return rc;
    if (!new_value) return GB_OK;
    gb_cache_piece pieces[] = {{new_value, new_len}};
    o->pieces = pieces;
    o->n_pieces = 1;
    rc = put_body(txn, o);
    o->pieces = NULL;
    return rc;
}

int gb_cache_update(gb_cache *cache, gb_cache_db db, const gb_key *key, gb_cache_decide_fn fn,
                    void *ctx, gb_err *err)
{
    int rc = check_db(cache, db, err);
    if (!rc) rc = check_writable(cache, err);
    if (rc) return rc;
    op o = {.c = cache, .err = err, .db = db, .key = key, .decide = fn, .ctx = ctx};
    return run(&o, 0, update_body);
}

static int count_body(MDB_txn *txn, op *o)
{
    MDB_stat st;
    int rc = mdb_stat(txn, o->c->dbi[o->db], &st);
    if (rc) return lmdb_call(o, "mdb_stat", rc);
    o->len = st.ms_entries;
    return GB_OK;
}

int gb_cache_count(gb_cache *cache, gb_cache_db db, size_t *out, gb_err *err)
{
    int rc = check_db(cache, db, err);
    if (rc) return rc;
    op o = {.c = cache, .err = err, .db = db};
    if (cache->has_db[db] && (rc = run(&o, MDB_RDONLY, count_body))) return rc;
    *out = o.len;
    return GB_OK;
}
