#include "tuner/source.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_INCLUDE_DEPTH 16

int gb_read_file(const char *path, char **out, size_t *out_len, gb_err *err)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) return gb_err_set(err, GB_EIO, "%s: %s", path, strerror(errno));
    gb_strbuf sb = GB_STRBUF_INIT;
    char chunk[8192];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        gb_sb_append(&sb, chunk, n);
    int failed = ferror(f);
    fclose(f);
    if (failed || gb_sb_status(&sb)) {
        gb_sb_free(&sb);
        return gb_err_set(err, failed ? GB_EIO : GB_ENOMEM, "%s: reading failed", path);
    }
    if (out_len) *out_len = sb.len;
    *out = gb_sb_take(&sb);
    return *out ? GB_OK : gb_err_set(err, GB_ENOMEM, "out of memory");
}

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
} walk;

static int hash_text(walk *w, const char *text, int depth);

static int hash_header(walk *w, const char *name, int depth)
{
    gb_key_add_str(w->kb, name);
    for (int i = 0; i < w->n_dirs; i++) {
        char path[4096];
        if (snprintf(path, sizeof path, "%s/%s", w->dirs[i], name) >= (int)sizeof path) continue;
        char *text = NULL;
        gb_err ignored;
        if (gb_read_file(path, &text, NULL, &ignored) != GB_OK) continue;
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

int gb_source_fingerprint(const char *source, const char *const *include_dirs, int n_dirs,
                          gb_key *out, gb_err *err)
{
    gb_keybuf kb;
    gb_key_begin(&kb, "source");
    walk w = {.dirs = include_dirs, .n_dirs = n_dirs, .kb = &kb, .err = err};
    int rc = hash_text(&w, source, 0);
    int frc = gb_key_finish(&kb, out);
    if (rc) return rc;
    return frc ? gb_err_set(err, frc, "out of memory hashing the source") : GB_OK;
}
