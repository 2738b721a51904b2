/* Writing an exported file so that builds see it change only when it does: the
 * bytes go to a temporary file beside it and are renamed over it (a reader never
 * sees half a header), and a file that already holds them is left alone (its
 * modification time too, so nothing that includes it is rebuilt). */
#include "report/export/export.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* True when path holds exactly len bytes equal to text. */
static bool holds(const char *path, const char *text, size_t len)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size != len) return false;
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    char buf[65536];
    size_t at = 0, n;
    bool same = true;
    while (same && (n = fread(buf, 1, sizeof buf, f)) > 0) {
        same = at + n <= len && memcmp(buf, text + at, n) == 0;
        at += n;
    }
    same = same && !ferror(f) && at == len;
    fclose(f);
    return same;
}

static int write_all(int fd, const char *text, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, text, len);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return errno;
        text += n;
        len -= (size_t)n;
    }
    return 0;
}

/* The mode a new file would get (0666 less the umask): mkstemp makes it 0600. */
static mode_t new_file_mode(void)
{
    mode_t mask = umask(0);
    umask(mask);
    return 0666 & ~mask;
}

int gb_export_save(const char *path, const char *text, size_t len, bool *out_unchanged, gb_err *err)
{
    *out_unchanged = false;
    if (!strcmp(path, "-")) {
        if (fwrite(text, 1, len, stdout) != len || fflush(stdout))
            return gb_err_set(err, GB_EIO, "writing to stdout: %s", strerror(errno));
        return GB_OK;
    }
    if (holds(path, text, len)) {
        *out_unchanged = true;
        return GB_OK;
    }
    size_t n = strlen(path) + 16;
    char *tmp = malloc(n);
    if (!tmp) return gb_err_set(err, GB_ENOMEM, "out of memory");
    snprintf(tmp, n, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(tmp), rc = fd < 0 ? errno : 0;
    const char *call = "creating";
    if (!rc && fchmod(fd, new_file_mode()) != 0) rc = errno;
    if (!rc) call = "writing", rc = write_all(fd, text, len);
    if (fd >= 0 && close(fd) != 0 && !rc) rc = errno;
    if (!rc && rename(tmp, path) != 0) call = "renaming over", rc = errno;
    if (rc && fd >= 0) unlink(tmp);
    if (rc) gb_err_set(err, rc, "%s %s: %s", call, path, strerror(rc));
    free(tmp);
    return rc;
}
