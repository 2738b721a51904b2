/* Reading a whole file that may be gzipped (base/file.h). */
#include "base/file.h"

#include "base/strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

int gb_read_file(const char *path, size_t max, const char *what, char **out, size_t *out_len,
                 gb_err *err)
{
    bool stdin_ = !strcmp(path, "-");
    int fd = stdin_ ? dup(0) : open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return gb_err_set(err, GB_EIO, "%s%s: %s", what, path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        close(fd);
        return gb_err_set(err, GB_EIO, "%s%s: is a directory", what, path);
    }
    gzFile gz = gzdopen(fd, "rb"); /* a plain file reads as it is */
    if (!gz) {
        close(fd);
        return gb_err_set(err, GB_ENOMEM, "out of memory");
    }
    gb_strbuf sb = GB_STRBUF_INIT;
    char chunk[65536];
    int rc = GB_OK, n;
    while ((n = gzread(gz, chunk, sizeof chunk)) > 0) {
        if (sb.len + (size_t)n > max) {
            rc = gb_err_set(err, GB_ELIMIT, "%s%s: more than the %zu MiB it may hold", what, path,
                            max >> 20);
            break;
        }
        gb_sb_append(&sb, chunk, (size_t)n);
    }
    int zerr = Z_OK;
    const char *why = gzerror(gz, &zerr); /* a truncated stream ends with Z_BUF_ERROR */
    if (rc == GB_OK && (n < 0 || zerr != Z_OK)) {
        const char *own = strstr(why, ">: "); /* zlib names the stream "<fd:N>: " */
        rc = zerr == Z_ERRNO ? gb_err_set(err, GB_EIO, "%s%s: %s", what, path, strerror(errno))
                             : gb_err_set(err, GB_EIO, "%s%s: a damaged gzip stream (%s)", what,
                                          path, own ? own + 3 : why);
    }
    gzclose(gz);
    if (rc == GB_OK && gb_sb_status(&sb)) rc = gb_err_set(err, GB_ENOMEM, "out of memory");
    if (rc) {
        gb_sb_free(&sb);
        return rc;
    }
    *out_len = sb.len;
    *out = sb.len ? gb_sb_take(&sb) : strdup("");
    return *out ? GB_OK : gb_err_set(err, GB_ENOMEM, "out of memory");
}
