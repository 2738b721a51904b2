/*
 * The persistent store: one LMDB environment with named databases.
 *
 *   best    (kernel, kernel fingerprint, device fingerprint, shape key) -> best config
 *   trials  (same, config) -> one measured trial: status and statistics
 *   cubins  content hash of a compile -> cubin, ptxas log, resource usage
 *   meta    "schema" -> the schema version of this environment
 *
 * Values are records: a frame (cache/frame.h: 'G', 'B', the schema, a checksum of
 * key and payload) followed by the payload. For best and trials the payload is JSON
 * text that also carries the readable key, so `gpubench cache ls` can print entries
 * without the script. A cubin record's payload is a big-endian u32 length, that many
 * bytes of JSON (log, registers, spills) and then the cubin itself. A record that
 * fails its frame is reported, never handed on.
 *
 * Every put is its own committed transaction: a tuner killed at any moment loses at
 * most the trial it was measuring. Several processes may use one cache at once;
 * readers never block the writer (LMDB's MVCC). A handle may be shared between
 * threads. Errors name the cache path and the LMDB call.
 *
 * Opening runs the damage check first (cache/check.h), so a damaged file is refused
 * with a message instead of crashing the process inside LMDB; it forks, so open the
 * cache before starting threads. A cache whose files cannot be written opens
 * read-only; where lock.mdb cannot be written either (read-only media), it opens
 * without a reader slot (MDB_NOLOCK): reading works, but a writer in another process
 * could then reuse pages while they are read, which is only safe where nobody
 * writes. The map starts at 1 GiB (GB_CACHE_INITIAL_MAPSIZE overrides, for tests)
 * and doubles whenever it fills.
 */
#ifndef GB_CACHE_CACHE_H
#define GB_CACHE_CACHE_H

#include "base/error.h"
#include "base/json.h"
#include "cache/key.h"

#include <stddef.h>

/* Schema 2 added the checksum to every record's frame; schema 1 caches stay readable
 * and are upgraded when first opened for writing. */
#define GB_CACHE_SCHEMA 2

typedef enum gb_cache_db {
    GB_DB_BEST,
    GB_DB_TRIALS,
    GB_DB_CUBINS,
    GB_DB_META,
    GB_DB_COUNT,
} gb_cache_db;

enum {
    GB_CACHE_READONLY = 1 << 0,   /* never write; fail rather than create */
    GB_CACHE_SKIP_CHECK = 1 << 1, /* no damage check: the caller just ran gb_cache_check,
                                     or a test plants bad records on purpose */
};

typedef struct gb_cache gb_cache;

/* The default location: $GPUBENCH_CACHE, else $XDG_CACHE_HOME/gpubench, else
 * $HOME/.cache/gpubench. GB_EINVAL if none of them is set or the path is too long. */
int gb_cache_default_dir(char *out, size_t out_bytes, gb_err *err);

/* Opens (creating the directory and the databases if needed) the cache in dir.
 * A directory that holds something other than a gpubench cache, a damaged, truncated
 * or foreign-version file, an unusable lock file or a newer schema gives GB_ECACHE
 * with a message that names the path, says what is wrong and what to do. When the
 * files can be read but not written (EACCES, EROFS, EPERM), the handle is read-only:
 * reads work and every write fails with a message that says why. A zero-length
 * data.mdb holds nothing: read-write it starts afresh, read-only it reads as empty. */
int gb_cache_open(const char *dir, unsigned flags, gb_cache **out, gb_err *err);

/* gb_cache_open on dir, or on the default location when dir is NULL
 * (gb_cache_default_dir). */
int gb_cache_open_or_default(const char *dir, unsigned flags, gb_cache **out, gb_err *err);

/* Closes the handle; NULL is a no-op. */
void gb_cache_close(gb_cache *cache);

/* The name of a database ("best", "trials", "cubins", "meta"); "?" for no database. */
const char *gb_cache_db_name(gb_cache_db db);

/* The directory this handle opened. */
const char *gb_cache_dir(const gb_cache *cache);

/* Raw records (the payload after the frame). get returns GB_ENOTFOUND when the key
 * is absent, GB_ECACHE when the record's frame is not ours, from a newer schema or
 * fails its checksum; *out_value is malloc'd and owned by the caller. A put on a
 * full disk fails with ENOSPC (EFBIG past ulimit -f) and loses nothing committed. */
int gb_cache_get(gb_cache *cache, gb_cache_db db, const gb_key *key, void **out_value,
                 size_t *out_len, gb_err *err);
int gb_cache_put(gb_cache *cache, gb_cache_db db, const gb_key *key, const void *value, size_t len,
                 gb_err *err);
int gb_cache_del(gb_cache *cache, gb_cache_db db, const gb_key *key, gb_err *err);

/* JSON records (best, trials). get parses (*out is the caller's: json_decref); a
 * record that does not parse is GB_ECACHE. put stores json as compact text. */
int gb_cache_get_json(gb_cache *cache, gb_cache_db db, const gb_key *key, json_t **out,
                      gb_err *err);
int gb_cache_put_json(gb_cache *cache, gb_cache_db db, const gb_key *key, const json_t *json,
                      gb_err *err);

/* Cubin records. meta_json is the JSON half; both outputs are malloc'd. */
int gb_cache_get_cubin(gb_cache *cache, const gb_key *key, char **out_meta_json, void **out_cubin,
                       size_t *out_cubin_bytes, gb_err *err);
int gb_cache_put_cubin(gb_cache *cache, const gb_key *key, const char *meta_json, const void *cubin,
                       size_t cubin_bytes, gb_err *err);

/* Splits the payload of a cubin record, as gb_cache_walk gives it, without copying:
 * the JSON half (not NUL-terminated) and the cubin. GB_ECACHE when it is malformed. */
int gb_cache_split_cubin(const void *payload, size_t len, const char **out_meta,
                         size_t *out_meta_len, const void **out_cubin, size_t *out_cubin_len);

/* Calls fn for every record of db in key order, inside one read transaction. A
 * nonzero return from fn stops the walk and is returned. Records whose header is not
 * ours or that fail their checksum are passed with value NULL so the caller can report
 * them. */
typedef int (*gb_cache_visit_fn)(void *ctx, const gb_key *key, const void *value, size_t len);
int gb_cache_foreach(gb_cache *cache, gb_cache_db db, gb_cache_visit_fn fn, void *ctx, gb_err *err);

/* Number of records in db. */
int gb_cache_count(gb_cache *cache, gb_cache_db db, size_t *out, gb_err *err);

/* One record as gb_cache_walk sees it: the schema from its header (0 and value NULL
 * when the header is not ours) and the payload after the header. */
typedef struct gb_cache_item {
    gb_key key;
    unsigned schema;
    const void *value;
    size_t len;
} gb_cache_item;
typedef int (*gb_cache_item_fn)(void *ctx, const gb_cache_item *item);

/* gb_cache_foreach, giving each record's schema too. */
int gb_cache_walk(gb_cache *cache, gb_cache_db db, gb_cache_item_fn fn, void *ctx, gb_err *err);

/* Decides, inside one write transaction, what a key ends up holding. fn sees the
 * record there now (old NULL when there is none or its header is not ours) and sets
 * *out_new to the payload to store, or leaves it NULL to keep what is there. fn must
 * not call the cache, and may be called again if the map has to grow. A nonzero
 * return from fn aborts the transaction and is returned. */
typedef int (*gb_cache_decide_fn)(void *ctx, const void *old, size_t old_len, const void **out_new,
                                  size_t *out_new_len);
int gb_cache_update(gb_cache *cache, gb_cache_db db, const gb_key *key, gb_cache_decide_fn fn,
                    void *ctx, gb_err *err);

/* Gives the file system back the space that deleted records left (LMDB never shrinks
 * its file): copies the environment in dir compacted and puts the copy in place of
 * data.mdb. Refuses with GB_ECACHE, changing nothing, while any other process has the
 * cache open; the caller must have closed its own handles on dir. The file's size
 * before and after come back in bytes. (cache/compact.c) */
int gb_cache_compact(const char *dir, size_t *out_before, size_t *out_after, gb_err *err);

#endif
