/* gb_cache_compact (cache.h): an offline mdb_copy -c, swapped in under a lock that
 * keeps every other process out. */
#include "cache/cache.h"

#include <errno.h>
#include <fcntl.h>
#include <lmdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Every process that has the environment open holds a shared fcntl lock on byte 0
 * of lock.mdb, and one that opens it waits for that byte while someone holds it
 * exclusively (LMDB's mdb_env_excl_lock). So taking it exclusively proves that no
 * other process has the cache open, and keeps them out until the copy is in place:
 * a process that kept its map of the old file would otherwise write into a file
 * nobody reads any more. */
static int lock_out_others(const char *dir, int *out_fd, gb_err *err)
{
    char path[4096];
    if (snprintf(path, sizeof path, "%s/lock.mdb", dir) >= (int)sizeof path)
        return gb_err_set(err, GB_EINVAL, "cache %s: the path is too long", dir);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return gb_err_set(err, errno == ENOENT ? GB_ECACHE : errno, "cache %s: open %s: %s", dir,
                          path, strerror(errno));
    struct flock lk = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1};
    if (fcntl(fd, F_SETLK, &lk) != 0) {
        int why = errno;
        close(fd);
        if (why == EACCES || why == EAGAIN)
            return gb_err_set(err, GB_ECACHE,
                              "cache %s: another process has the cache open; compacting needs "
                              "it to itself: try again when it has finished",
                              dir);
        return gb_err_set(err, why, "cache %s: locking %s: %s", dir, path, strerror(why));
    }
    *out_fd = fd;
    return GB_OK;
}

static int file_bytes(const char *path, size_t *out, gb_err *err)
{
    struct stat st;
    if (stat(path, &st) != 0) return gb_err_set(err, errno, "%s: %s", path, strerror(errno));
    *out = (size_t)st.st_size;
    return GB_OK;
}

/* Copies the environment compacted into the open file fd. */
static int copy_compacted(const char *dir, int fd, gb_err *err)
{
    MDB_env *env = NULL;
    const char *call = "mdb_env_create";
    int rc = mdb_env_create(&env);
    if (rc == 0) {
        call = "mdb_env_set_maxdbs";
        rc = mdb_env_set_maxdbs(env, GB_DB_COUNT);
    }
    if (rc == 0) {
        call = "mdb_env_open";
        /* No LMDB locking: lock_out_others holds the lock for everyone. */
        rc = mdb_env_open(env, dir, MDB_RDONLY | MDB_NOLOCK, 0644);
    }
    if (rc == 0) {
        call = "mdb_env_copyfd2";
        rc = mdb_env_copyfd2(env, fd, MDB_CP_COMPACT);
    }
    if (env) mdb_env_close(env);
    if (rc == 0 && fsync(fd) != 0) {
        rc = errno;
        call = "fsync";
    }
    if (rc == 0) return GB_OK;
    return gb_err_set(err, rc > 0 ? rc : GB_ECACHE, "cache %s: %s: %s", dir, call,
                      mdb_strerror(rc));
}

/* The lock region (lock.mdb) still names the old file's last transaction, which a
 * process that opens the cache while another has it open would trust. Opening the
 * environment once while this process holds the exclusive lock makes LMDB treat the
 * open as the first one and rebuild the region from the new file; LMDB then turns
 * the lock into a shared one, and the processes that waited go on with the new file. */
static int rebuild_lock_region(const char *dir, gb_err *err)
{
    MDB_env *env = NULL;
    int rc = mdb_env_create(&env);
    if (rc == 0) rc = mdb_env_set_maxdbs(env, GB_DB_COUNT);
    if (rc == 0) rc = mdb_env_open(env, dir, MDB_NOTLS, 0644);
    if (env) mdb_env_close(env);
    if (rc == 0) return GB_OK;
    return gb_err_set(err, rc > 0 ? rc : GB_ECACHE,
                      "cache %s: reopening after compacting: mdb_env_open: %s", dir,
                      mdb_strerror(rc));
}

int gb_cache_compact(const char *dir, size_t *out_before, size_t *out_after, gb_err *err)
{
    char data[4096], tmp[4096];
    int lock_fd = -1, fd = -1;
    if (snprintf(data, sizeof data, "%s/data.mdb", dir) >= (int)sizeof data ||
        snprintf(tmp, sizeof tmp, "%s/data.mdb.compacting", dir) >= (int)sizeof tmp)
        return gb_err_set(err, GB_EINVAL, "cache %s: the path is too long", dir);
    int rc = lock_out_others(dir, &lock_fd, err);
    if (rc == GB_OK) rc = file_bytes(data, out_before, err);
    if (rc == GB_OK && (fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0)
        rc = gb_err_set(err, errno, "cache %s: creating %s: %s", dir, tmp, strerror(errno));
    if (rc == GB_OK) rc = copy_compacted(dir, fd, err);
    if (fd >= 0) close(fd);
    if (rc == GB_OK && rename(tmp, data) != 0)
        rc = gb_err_set(err, errno, "cache %s: rename %s: %s", dir, tmp, strerror(errno));
    if (rc && fd >= 0) unlink(tmp);
    if (rc == GB_OK) rc = file_bytes(data, out_after, err);
    if (rc == GB_OK) rc = rebuild_lock_region(dir, err);
    if (lock_fd >= 0) close(lock_fd);
    return rc;
}
