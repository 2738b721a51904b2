#include "tuner/source.h"

#include "base/file.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_INCLUDE_DEPTH 16
/* A source file or header larger than this is not one: its fingerprint skips it. */
#define GB_SOURCE_MAX_BYTES ((size_t)64 << 20)

/* If line is `#include "name"`, copies name into out and returns 1. */
static int quoted_include(const char *line, char *out, size_t out_bytes)
{
    while (*line == ' ' || *line == '\t')
        line++;
    if (*line++ != '#') return 0;
    while (*line == ' ' || *line == '\t')
        line++;
    if (strncmp(line, "include", 7) != 0) return 0;
    line += 7;
    while (*line == ' ' || *line == '\t')
        line++;
    if (*line++ != '"') return 0;
    const char *end = strchr(line, '"');
    const char *eol = strchr(line, '\n');
    if (!end || (eol && end > eol) || (size_t)(end - line) >= out_bytes) return 0;
    memcpy(out, line, (size_t)(end - line));
    out[end - line] = '\0';
    return 1;
}

typedef struct walk {
    const char *const *dirs;
    int n_dirs;
    gb_keybuf *kb;
    gb_err *err;
    bool collect; /* list the files too */
    gb_record_source *files;
    int n_files;
    bool failed; /* out of memory while listing */
} walk;

/* Lists the file at path with the hash of its content, once. A path that cannot be
 * made absolute is left out: it could not be found again anyway. */
static void add_file(walk *w, const char *path, const char *text, size_t len)
{
    if (!w->collect) return;
    char *abs = realpath(path, NULL);
    for (int i = 0; abs && i < w->n_files; i++)
        if (!strcmp(w->files[i].path, abs)) {
            free(abs);
            return;
        }
    gb_record_source *grown =
        abs ? realloc(w->files, (size_t)(w->n_files + 1) * sizeof *grown) : NULL;
    if (!grown) {
        w->failed |= abs != NULL || errno == ENOMEM;
        free(abs);
        return;
    }
    w->files = grown;
    gb_key key = gb_key_of_bytes(text, len);
    w->files[w->n_files].path = abs;
    gb_key_hex(&key, w->files[w->n_files].hash);
    w->n_files++;
}

static int hash_text(walk *w, const char *text, int depth);

static int hash_header(walk *w, const char *name, int depth)
{
    gb_key_add_str(w->kb, name);
    for (int i = 0; i < w->n_dirs; i++) {
        char path[4096];
        if (snprintf(path, sizeof path, "%s/%s", w->dirs[i], name) >= (int)sizeof path) continue;
        char *text = NULL;
        size_t len = 0;
        gb_err ignored;
        if (gb_read_file(path, GB_SOURCE_MAX_BYTES, "", &text, &len, &ignored) != GB_OK) continue;
        add_file(w, path, text, len);
        int rc = hash_text(w, text, depth + 1);
        free(text);
        return rc;
    }
    gb_key_add_str(w->kb, "<not found>");
    return GB_OK;
}

static int hash_text(walk *w, const char *text, int depth)
{
    if (depth > MAX_INCLUDE_DEPTH)
        return gb_err_set(w->err, GB_EINVAL, "local #include nesting deeper than %d",
                          MAX_INCLUDE_DEPTH);
    gb_key_add_str(w->kb, text);
    for (const char *line = text; line && *line;) {
        char name[1024];
        if (quoted_include(line, name, sizeof name)) {
            int rc = hash_header(w, name, depth);
            if (rc) return rc;
        }
        line = strchr(line, '\n');
        if (line) line++;
    }
    return GB_OK;
}

/* The source's own file, when source_name names one that holds exactly source. */
static void add_source_file(walk *w, const char *source, const char *source_name)
{
    char *text = NULL;
    size_t len = 0;
    gb_err ignored;
    if (!w->collect || !source_name ||
        gb_read_file(source_name, GB_SOURCE_MAX_BYTES, "", &text, &len, &ignored))
        return;
    if (len == strlen(source) && !memcmp(text, source, len)) add_file(w, source_name, text, len);
    free(text);
}

int gb_source_closure(const char *source, const char *source_name, const char *const *include_dirs,
                      int n_dirs, gb_key *out_fp, gb_record_source **out_files, int *out_n,
                      gb_err *err)
{
    gb_keybuf kb;
    gb_key_begin(&kb, "source");
    walk w = {.dirs = include_dirs,
              .n_dirs = n_dirs,
              .kb = &kb,
              .err = err,
              .collect = out_files != NULL};
    add_source_file(&w, source, source_name);
    int rc = hash_text(&w, source, 0);
    int frc = gb_key_finish(&kb, out_fp);
    if (!rc && (frc || w.failed))
        rc = gb_err_set(err, GB_ENOMEM, "out of memory hashing the source");
    if (rc || !out_files) {
        gb_source_files_free(w.files, w.n_files);
        return rc;
    }
    *out_files = w.files;
    *out_n = w.n_files;
    return GB_OK;
}

int gb_source_fingerprint(const char *source, const char *const *include_dirs, int n_dirs,
                          gb_key *out, gb_err *err)
{
    return gb_source_closure(source, NULL, include_dirs, n_dirs, out, NULL, NULL, err);
}

void gb_source_files_free(gb_record_source *files, int n)
{
    for (int i = 0; files && i < n; i++)
        free(files[i].path);
    free(files);
}
