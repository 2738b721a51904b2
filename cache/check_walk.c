#include "cache/check_walk.h"

#include "cache/frame.h"
#include "cache/key.h"

#include <errno.h>
#include <fcntl.h>
#include <lmdb.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

/* The page scan below reads LMDB 0.9's on-disk page layout (data format 1), which a
 * later LMDB changes: build against 0.9, or teach the scan the new layout. */
#if MDB_VERSION_MAJOR != 0 || MDB_VERSION_MINOR != 9
#error "cache/check_walk.c reads LMDB 0.9's page layout"
#endif

/* LMDB's own databases, which its API reaches by these handle numbers (lmdb.h does
 * not name them): the free list, and the list of named databases. */
#define FREE_DBI       0
#define MAIN_DBI       1
#define MAX_NAMED_DBS  64
#define MAX_NAME_BYTES 512
#define META_PAGES     2 /* pages 0 and 1 are the meta pages: never free */
/* The lock file LMDB 0.9 makes with its default 126 reader slots. */
#define LOCK_FILE_BYTES 8192
/* What a step of the walk returns once it has noted a problem: no LMDB code. */
#define STOP (-1)

/* LMDB 0.9's page header (data format 1; lmdb.h does not export it): the page's own
 * number (8 bytes), 2 bytes of padding, the flags, then either the bounds of a
 * branch or leaf page's free space (2 bytes each) or an overflow run's page count
 * (4 bytes). Node offsets (2 bytes each) follow the header. */
#define PAGE_HEADER_BYTES 16
/* A meta page: the page header, magic and version (4 bytes each), the map's address
 * and size (8 each), the free list's and the main database's headers (48 each), then
 * the last page in use and the transaction id (8 each). */
#define META_LAST_PGNO_OFFSET 136
#define META_TXNID_OFFSET     144
#define NODE_HEADER_BYTES     8
#define P_BRANCH              0x01
#define P_LEAF                0x02
#define P_OVERFLOW            0x04
#define P_LEAF2               0x20

typedef struct walker {
    gb_check_shared *s;
    const char *dir;
    MDB_env *env;
    MDB_txn *txn;
    size_t last_pgno; /* of the transaction's snapshot */
    size_t psize;
    const uint8_t *map; /* data.mdb, read-only */
    size_t map_bytes;
    uint8_t *free_map; /* a bit per page: on LMDB's free list */
    size_t tree_pages; /* pages the databases' headers count, all databases */
} walker;

/* ---- the child: problems ------------------------------------------------- */

/* Only the first problem is kept: it is the one the message reports. */
static void note(walker *w, gb_check_kind k, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void note(walker *w, gb_check_kind k, const char *fmt, ...)
{
    if (w->s->kind != GB_CHECK_CLEAN) return;
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
        note(w, GB_CHECK_ERRNO, "%s: %s", call, strerror(rc));
    } else {
        note(w, GB_CHECK_DAMAGE, "data.mdb is damaged: %s in %s: %s", call, w->s->stage,
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

int gb_check_reserve_lock(const char *dir)
{
    char path[4200];
    struct stat st;
    snprintf(path, sizeof path, "%s/lock.mdb", dir);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return errno;
    off_t bytes =
        fstat(fd, &st) == 0 && st.st_size > LOCK_FILE_BYTES ? st.st_size : LOCK_FILE_BYTES;
    /* fallocate(2), not posix_fallocate: its fallback writes zeros into a file that
     * other processes may be using; where it is not supported there is nothing to do */
    int rc = fallocate(fd, 0, 0, bytes) == 0 ? 0 : errno;
    close(fd);
    return rc == ENOSPC || rc == EDQUOT || rc == EFBIG ? rc : 0;
}

static int open_env(walker *w)
{
    stage(w, "opening it", "");
    int reserved = gb_check_reserve_lock(w->dir);
    int rc = reserved ? EACCES : try_open(w, 0); /* no room for the lock: read without it */
    if (denied(rc)) {
        rc = try_open(w, MDB_NOLOCK); /* lock.mdb cannot be written: read without it */
    } else if ((rc == MDB_INVALID || rc == MDB_VERSION_MISMATCH) && try_open(w, MDB_NOLOCK) == 0) {
        /* LMDB rebuilds a lock file that no process holds, so a lock file it refuses
         * is held by another process; tell that apart from a bad data.mdb. */
        note(w, GB_CHECK_LOCK,
             "lock.mdb is %s, and another process has it open (%s): stop the processes that "
             "use this cache; when none is left, remove %s/lock.mdb",
             rc == MDB_INVALID ? "not an LMDB lock file" : "from another version of LMDB",
             mdb_strerror(rc), w->dir);
        return STOP;
    }
    if (rc == MDB_INVALID)
        note(w, GB_CHECK_DAMAGE,
             "data.mdb is not an LMDB file, or its meta pages are damaged (mdb_env_open: %s)",
             mdb_strerror(rc));
    else if (rc == MDB_VERSION_MISMATCH)
        note(w, GB_CHECK_DAMAGE,
             "data.mdb was written by an incompatible version of LMDB (mdb_env_open: %s)",
             mdb_strerror(rc));
    return rc ? lmdb_problem(w, "mdb_env_open", rc) : 0;
}

/* Maps data.mdb as it is now, to read meta and page headers: LMDB does not give out
 * the address of its own map. */
static int map_file(walker *w)
{
    MDB_stat st;
    struct stat file;
    mdb_filehandle_t fd;
    int rc = mdb_env_stat(w->env, &st);
    if (!rc) rc = mdb_env_get_fd(w->env, &fd);
    if (rc) return lmdb_problem(w, "mdb_env_stat", rc);
    if (fstat(fd, &file) != 0) return lmdb_problem(w, "fstat", errno);
    w->psize = st.ms_psize;
    w->map_bytes = (size_t)file.st_size;
    const uint8_t *map = mmap(NULL, w->map_bytes, PROT_READ, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) return lmdb_problem(w, "mmap", errno);
    w->map = map;
    return 0;
}

static void unmap_file(walker *w)
{
    if (w->map) munmap((void *)w->map, w->map_bytes);
    w->map = NULL;
}

/* Begins the read transaction the walk uses, and reads its snapshot's last page in
 * use from the snapshot's meta page (the one of its transaction id's parity): LMDB
 * tells only the newest commit's, which another process may have made since. Two
 * commits later that meta page is written again; then it begins again. The file is
 * mapped after the transaction begins, so the map holds every page of its snapshot. */
static int begin(walker *w)
{
    for (int tries = 0; tries < 1000; tries++) {
        size_t meta_txnid = 0;
        int rc = mdb_txn_begin(w->env, NULL, MDB_RDONLY, &w->txn);
        if (rc) return lmdb_problem(w, "mdb_txn_begin", rc);
        if (map_file(w)) return STOP;
        if (w->map_bytes < META_PAGES * w->psize) {
            note(w, GB_CHECK_DAMAGE,
                 "data.mdb is truncated: it has %zu bytes, less than its two meta pages",
                 w->map_bytes);
            return STOP;
        }
        size_t txnid = mdb_txn_id(w->txn);
        const uint8_t *meta = w->map + (txnid & 1) * w->psize;
        memcpy(&w->last_pgno, meta + META_LAST_PGNO_OFFSET, sizeof w->last_pgno);
        memcpy(&meta_txnid, meta + META_TXNID_OFFSET, sizeof meta_txnid);
        if (meta_txnid == txnid) return 0;
        unmap_file(w);
        mdb_txn_abort(w->txn);
        w->txn = NULL;
        usleep(1000);
    }
    w->s->errno_code = EAGAIN;
    note(w, GB_CHECK_ERRNO, "the cache changed too often to be checked; try again");
    return STOP;
}

/* A file shorter than its meta page says (a copy cut short, a full disk) would make
 * LMDB read past its end: SIGBUS. */
static int check_size(walker *w)
{
    size_t needed = (w->last_pgno + 1) * w->psize;
    if (w->map_bytes >= needed) return 0;
    note(w, GB_CHECK_DAMAGE,
         "data.mdb is truncated: it has %zu bytes, where its meta page counts %zu (an "
         "incomplete copy, or a full disk)",
         w->map_bytes, needed);
    return STOP;
}

/* ---- the child: walking --------------------------------------------------- */

/* Reads every byte, so that damage anywhere in a value shows now, not later. */
static void touch(walker *w, const MDB_val *v)
{
    w->s->touched ^= XXH3_64bits(v->mv_data, v->mv_size);
}

static int add_tree_pages(walker *w, MDB_dbi dbi)
{
    MDB_stat st;
    int rc = mdb_stat(w->txn, dbi, &st);
    if (rc) return lmdb_problem(w, "mdb_stat", rc);
    w->tree_pages += st.ms_branch_pages + st.ms_leaf_pages + st.ms_overflow_pages;
    return 0;
}

/* An entry of the free list is keyed by the transaction that freed its pages (keys
 * ascending) and lists them: a count, then that
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
        if (w->free_map[pgno / 8] & (1u << pgno % 8)) return false; /* listed twice */
        w->free_map[pgno / 8] |= (uint8_t)(1u << pgno % 8);
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
    if (!(w->free_map = calloc(w->last_pgno / 8 + 1, 1))) return lmdb_problem(w, "calloc", ENOMEM);
    int rc = add_tree_pages(w, FREE_DBI);
    if (rc) return rc;
    rc = mdb_cursor_open(w->txn, FREE_DBI, &cursor);
    if (rc) return lmdb_problem(w, "mdb_cursor_open", rc);
    size_t prev_txnid = 0, txnid = 0;
    for (MDB_cursor_op op = MDB_FIRST; (rc = mdb_cursor_get(cursor, &k, &v, op)) == 0;
         op = MDB_NEXT) {
        ++*out_n;
        if (k.mv_size == sizeof txnid) memcpy(&txnid, k.mv_data, sizeof txnid);
        bool ordered = k.mv_size == sizeof txnid && txnid > prev_txnid;
        prev_txnid = txnid;
        if (!ordered || !free_entry_sound(w, &v)) {
            note(w, GB_CHECK_DAMAGE,
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
        note(w, GB_CHECK_DAMAGE, "data.mdb is damaged: db %s holds a key of %zu bytes", name,
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
    note(w, GB_CHECK_DAMAGE, "data.mdb is damaged: db %s: record %s %s", name, hex,
         gb_frame_verdict_text(verdict));
}

/* The walk follows the branch pages' child pointers, a lookup their keys: a damaged
 * separator key would send lookups (and writes) to the wrong leaf, so each key the
 * walk found must also be found by a lookup, at the same place. */
static int find_again(walker *w, MDB_dbi dbi, const char *name, const MDB_val *k, const MDB_val *v)
{
    MDB_val key = *k, found;
    int rc = mdb_get(w->txn, dbi, &key, &found);
    if (rc == 0 && found.mv_data == v->mv_data && found.mv_size == v->mv_size) return 0;
    if (rc != 0 && rc != MDB_NOTFOUND) return lmdb_problem(w, "mdb_get", rc);
    note(w, GB_CHECK_DAMAGE,
         "data.mdb is damaged: db %s: a lookup does not find a key that its pages "
         "hold (a damaged branch page)",
         name);
    return STOP;
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
        note(w, GB_CHECK_DAMAGE,
             "data.mdb is damaged: its list of databases holds '%s', which is "
             "not a database",
             name);
        return STOP;
    }
    if (!rc) rc = mdb_stat(w->txn, dbi, &st);
    if (!rc) rc = mdb_dbi_flags(w->txn, dbi, &flags);
    if (!rc) w->tree_pages += st.ms_branch_pages + st.ms_leaf_pages + st.ms_overflow_pages;
    if (!rc) rc = mdb_cursor_open(w->txn, dbi, &cursor);
    if (rc) return lmdb_problem(w, "mdb_dbi_open", rc);
    for (MDB_cursor_op op = MDB_FIRST; (rc = mdb_cursor_get(cursor, &k, &v, op)) == 0;
         op = MDB_NEXT) {
        int order = n ? mdb_cmp(w->txn, dbi, &prev, &k) : -1;
        if (order > 0 || (order == 0 && !(flags & MDB_DUPSORT))) {
            note(w, GB_CHECK_DAMAGE,
                 "data.mdb is damaged: the keys of db %s are out of order after "
                 "%zu records",
                 name, n);
            rc = STOP;
            break;
        }
        n++;
        prev = k;
        if (!(flags & MDB_DUPSORT) && (rc = find_again(w, dbi, name, &k, &v))) break;
        check_record(w, db, name, &k, &v);
        if (db < 0) w->s->report.n_other_records++;
    }
    mdb_cursor_close(cursor);
    if (rc == STOP) return rc;
    if (rc != MDB_NOTFOUND) return lmdb_problem(w, "mdb_cursor_get", rc);
    if (n == st.ms_entries) return 0;
    note(w, GB_CHECK_DAMAGE,
         "data.mdb is damaged: db %s holds %zu records where its header counts %zu", name, n,
         st.ms_entries);
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
    if (!rc) w->tree_pages += st.ms_branch_pages + st.ms_leaf_pages + st.ms_overflow_pages;
    if (!rc) rc = mdb_cursor_open(w->txn, MAIN_DBI, &cursor);
    if (rc) return lmdb_problem(w, "mdb_cursor_open", rc);
    for (MDB_cursor_op op = MDB_FIRST; (rc = mdb_cursor_get(cursor, &k, &v, op)) == 0;
         op = MDB_NEXT) {
        if (n == MAX_NAMED_DBS || k.mv_size == 0 || k.mv_size >= MAX_NAME_BYTES ||
            memchr(k.mv_data, '\0', k.mv_size)) {
            note(w, GB_CHECK_DAMAGE, "data.mdb is damaged: its list of databases holds %s",
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
        note(w, GB_CHECK_DAMAGE,
             "data.mdb is damaged: its list of databases holds %zu names where "
             "its header counts %zu",
             n, st.ms_entries);
        return STOP;
    }
    for (size_t i = 0; i < n; i++)
        if ((rc = walk_db(w, names[i]))) return rc;
    return 0;
}

static int bad_page(walker *w, size_t pgno, const char *what)
{
    note(w, GB_CHECK_DAMAGE, "data.mdb is damaged: page %zu %s", pgno, what);
    return STOP;
}

/* A branch or leaf page's free space lies between its node offsets and its nodes,
 * and every node inside the page: LMDB copies and fills pages by these bounds when
 * it writes, so bad ones would make a writer overrun a page. */
static int check_node_page(walker *w, size_t pgno, const uint8_t *page, uint16_t flags)
{
    uint16_t lower, upper, offset;
    memcpy(&lower, page + 12, sizeof lower);
    memcpy(&upper, page + 14, sizeof upper);
    if (lower < PAGE_HEADER_BYTES || lower > upper || upper > w->psize || lower % 2)
        return bad_page(w, pgno, "has the bounds of its free space wrong");
    for (size_t at = PAGE_HEADER_BYTES; !(flags & P_LEAF2) && at < lower; at += 2) {
        memcpy(&offset, page + at, sizeof offset);
        if (offset < upper || offset > w->psize - NODE_HEADER_BYTES)
            return bad_page(w, pgno, "points at a node outside its own space");
    }
    return 0;
}

/* Every page that is not free must say it is the page it is, and be a branch, a
 * leaf or an overflow run; the pages in use, the free ones and the two meta pages
 * must add up to the file, and to what the databases' headers count. */
static int scan_map(walker *w, const uint8_t *map)
{
    size_t n_used = 0;
    int rc;
    for (size_t pgno = META_PAGES; pgno <= w->last_pgno; pgno++) {
        if (w->free_map[pgno / 8] & (1u << pgno % 8)) continue;
        const uint8_t *page = map + pgno * w->psize;
        uint64_t own;
        uint16_t flags;
        uint32_t run;
        memcpy(&own, page, sizeof own);
        memcpy(&flags, page + 10, sizeof flags);
        memcpy(&run, page + 12, sizeof run);
        if (own != pgno)
            return bad_page(w, pgno, "is not where it belongs (it says it is another)");
        if (flags & P_OVERFLOW) {
            if (run == 0 || run - 1 > w->last_pgno - pgno)
                return bad_page(w, pgno, "starts an overflow run that leaves the file");
            n_used += run;
            pgno += run - 1;
            continue;
        }
        if (!(flags & (P_BRANCH | P_LEAF))) return bad_page(w, pgno, "is of no kind LMDB writes");
        if ((rc = check_node_page(w, pgno, page, flags))) return rc;
        n_used++;
    }
    w->s->report.n_used_pages = n_used;
    return 0;
}

static int scan_pages(walker *w)
{
    stage(w, "the page headers", "");
    return scan_map(w, w->map);
}

static int check_page_counts(walker *w)
{
    size_t n_used = w->s->report.n_used_pages, n_free = w->s->report.n_free_pages;
    if (META_PAGES + n_used + n_free == w->last_pgno + 1 && n_used == w->tree_pages) return 0;
    note(w, GB_CHECK_DAMAGE,
         "data.mdb is damaged: its pages do not add up (%zu in use, %zu free and 2 meta pages "
         "in a file of %zu pages; the databases count %zu in use)",
         n_used, n_free, w->last_pgno + 1, w->tree_pages);
    return STOP;
}

static void walk(walker *w)
{
    size_t n_free_entries = 0;
    if (open_env(w) || begin(w)) return;
    if (!check_size(w) && !walk_free_list(w, &n_free_entries) && !scan_pages(w) && !walk_main(w))
        check_page_counts(w);
    mdb_txn_abort(w->txn);
    w->txn = NULL;
    unmap_file(w);
    free(w->free_map);
}

void gb_check_walk(gb_check_shared *s, const char *dir)
{
    walker w = {.s = s, .dir = dir};
    walk(&w);
    mdb_env_close(w.env);
    s->finished = 1;
}
