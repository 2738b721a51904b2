/* Declaring a kernel through the C API (include/gpubench/gpubench.h): the fields
 * of gb.kernel (docs/lua-api.md), checked here as the Lua prelude checks them. */
#include "api/internal.h"

#include "base/file.h"
#include "base/strbuf.h"
#include "report/export/export.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_TEMPLATE_BYTES (64u << 20)
#define MAX_TEMPLATE_DIRS  32

/* Records an engine error in the caller's, prefixed with the kernel's name. */
static int fail(const gpubench_kernel *k, gb_err *e, gpubench_error *err)
{
    if (k && k->def.name) gb_err_prefix(e, "kernel %s", k->def.name);
    return gb_api_error_out(e, err);
}

static int refuse(const gpubench_kernel *k, gpubench_error *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int refuse(const gpubench_kernel *k, gpubench_error *err, const char *fmt, ...)
{
    gb_err e = {.code = GB_EINVAL};
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e.msg, sizeof e.msg, fmt, ap);
    va_end(ap);
    return fail(k, &e, err);
}

/* For messages that quote what the caller gave, which may be NULL. */
static const char *shown(const char *s)
{
    return s ? s : "(null)";
}

static int no_memory(const gpubench_kernel *k, gpubench_error *err)
{
    gb_err e = {0};
    gb_err_set(&e, GB_ENOMEM, "out of memory");
    return fail(k, &e, err);
}

/* Replaces *slot with a copy of text. */
static int set_text(const gpubench_kernel *k, char **slot, const char *text, gpubench_error *err)
{
    char *copy = strdup(text);
    if (!copy) return no_memory(k, err);
    free(*slot);
    *slot = copy;
    return GPUBENCH_OK;
}

/* Appends a copy of text to a list of strings. */
static int append(const gpubench_kernel *k, char ***list, int *n, const char *text,
                  gpubench_error *err)
{
    char **grown = realloc(*list, (size_t)(*n + 1) * sizeof *grown);
    if (!grown) return no_memory(k, err);
    *list = grown;
    if (!(grown[*n] = strdup(text))) return no_memory(k, err);
    (*n)++;
    return GPUBENCH_OK;
}

static bool good_name(const char *name)
{
    if (!name || !*name) return false;
    for (const char *c = name; *c; c++)
        if (!isalnum((unsigned char)*c) && *c != '_' && *c != '.' && *c != '-') return false;
    return true;
}

int gpubench_kernel_new(const char *name, gpubench_kernel **out, gpubench_error *err)
{
    if (!good_name(name))
        return refuse(NULL, err,
                      "kernel name '%s' may use only letters, digits, '_', '.' and '-', and "
                      "not be empty",
                      shown(name));
    gpubench_kernel *k = calloc(1, sizeof *k);
    if (!k || !(k->def.name = strdup(name))) {
        free(k);
        return no_memory(NULL, err);
    }
    k->def.check.rtol = k->def.check.atol = -1.0; /* by the output's dtype */
    gb_api_set_hooks(k);
    *out = k;
    return GPUBENCH_OK;
}

void gpubench_kernel_free(gpubench_kernel *k)
{
    if (!k) return;
    gpubench_kernel_free((gpubench_kernel *)k->def.reference);
    k->def.reference = NULL;
    gb_kernel_def_free(&k->def);
    free(k);
}

int gpubench_kernel_source(gpubench_kernel *k, const char *text, gpubench_error *err)
{
    if (!text) return refuse(k, err, "source: NULL text");
    char name[300];
    snprintf(name, sizeof name, "%s.cu", k->def.name);
    int rc = set_text(k, &k->def.source, text, err);
    return rc ? rc : set_text(k, &k->def.source_name, name, err);
}

/* Reads path, if it is there, as the kernel's source; its folder joins the
 * include folders. GB_ENOTFOUND when there is no such file. */
static int read_template(gpubench_kernel *k, const char *path, gb_err *e)
{
    if (access(path, F_OK) != 0) return GB_ENOTFOUND;
    char *text = NULL;
    size_t len;
    int rc = gb_read_file(path, MAX_TEMPLATE_BYTES, "template ", &text, &len, e);
    if (rc) return rc;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
    gpubench_error ignored;
    free(k->def.source);
    k->def.source = text;
    if (set_text(k, &k->def.source_name, path, &ignored) ||
        append(k, &k->def.include_dirs, &k->def.n_include_dirs, slash ? dir : ".", &ignored))
        return gb_err_set(e, GB_ENOMEM, "out of memory");
    return GB_OK;
}

int gpubench_kernel_template(gpubench_kernel *k, const char *file, gpubench_error *err)
{
    if (!file || !*file) return refuse(k, err, "template: no file name");
    gb_err e = {0};
    if (file[0] == '/') {
        int rc = read_template(k, file, &e);
        if (rc == GB_ENOTFOUND) gb_err_set(&e, rc, "template %s: no such file", file);
        return rc ? fail(k, &e, err) : GPUBENCH_OK;
    }
    const char *dirs[MAX_TEMPLATE_DIRS];
    char *env = getenv("GPUBENCH_TEMPLATES") ? strdup(getenv("GPUBENCH_TEMPLATES")) : NULL;
    int n = gb_api_template_dirs(dirs, MAX_TEMPLATE_DIRS, env);
    int rc = GB_ENOTFOUND;
    gb_strbuf looked = {0};
    for (int i = 0; rc == GB_ENOTFOUND && i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dirs[i], file);
        rc = read_template(k, path, &e);
        gb_sb_printf(&looked, "%s%s", i ? ", " : "", dirs[i]);
    }
    if (rc == GB_ENOTFOUND)
        gb_err_set(&e, rc, "template %s not found (looked in %s)", file,
                   looked.data ? looked.data : "no folder: set GPUBENCH_TEMPLATES");
    gb_sb_free(&looked);
    free(env);
    return rc ? fail(k, &e, err) : GPUBENCH_OK;
}

int gpubench_kernel_entry(gpubench_kernel *k, const char *entry, gpubench_error *err)
{
    if (!entry || !*entry) return refuse(k, err, "entry: empty");
    return set_text(k, &k->def.entry, entry, err);
}

static int add_param(gpubench_kernel *k, const char *name, const gb_value *values, int n,
                     gpubench_error *err)
{
    gb_err e = {0};
    if (gb_export_check_name(name ? name : "", "parameter", &e)) return fail(k, &e, err);
    if (n < 1) return refuse(k, err, "parameter %s has no values", name);
    if (gb_space_add(&k->def.space, name, values, n, &e)) return fail(k, &e, err);
    return GPUBENCH_OK;
}

int gpubench_kernel_param_ints(gpubench_kernel *k, const char *name, const int64_t *values, int n,
                               gpubench_error *err)
{
    gb_value *v = calloc(n > 0 ? (size_t)n : 1, sizeof *v);
    if (!v) return no_memory(k, err);
    for (int i = 0; i < n; i++)
        v[i] = gb_value_int(values[i]);
    int rc = add_param(k, name, v, n, err);
    free(v);
    return rc;
}

int gpubench_kernel_param_strings(gpubench_kernel *k, const char *name, const char *const *values,
                                  int n, gpubench_error *err)
{
    gb_value *v = calloc(n > 0 ? (size_t)n : 1, sizeof *v);
    int made = 0, rc = v ? GPUBENCH_OK : no_memory(k, err);
    for (; rc == GPUBENCH_OK && made < n; made++)
        if (!values[made])
            rc = refuse(k, err, "parameter %s: a value is NULL", shown(name));
        else if (gb_value_str(values[made], &v[made]))
            rc = no_memory(k, err);
    if (rc == GPUBENCH_OK) rc = add_param(k, name, v, n, err);
    for (int i = 0; i < made && v; i++)
        gb_value_free(&v[i]);
    free(v);
    return rc;
}

int gpubench_kernel_option(gpubench_kernel *k, const char *option, gpubench_error *err)
{
    if (!option) return refuse(k, err, "option: NULL");
    return append(k, &k->def.options, &k->def.n_options, option, err);
}

int gpubench_kernel_include_dir(gpubench_kernel *k, const char *dir, gpubench_error *err)
{
    if (!dir || !*dir) return refuse(k, err, "include_dir: empty");
    return append(k, &k->def.include_dirs, &k->def.n_include_dirs, dir, err);
}

int gpubench_kernel_math(gpubench_kernel *k, const char *math, gpubench_error *err)
{
    if (!math || gb_math_parse(math, &k->def.math))
        return refuse(k, err, "math '%s' is not one of fp32, fp64, tf32, fp16, bf16, fp8, int8",
                      shown(math));
    return GPUBENCH_OK;
}

int gpubench_kernel_key(gpubench_kernel *k, const char *const *fields, int n, gpubench_error *err)
{
    if (n < 1) return refuse(k, err, "key: no fields");
    char **list = NULL;
    int n_list = 0, rc = GPUBENCH_OK;
    for (int i = 0; rc == GPUBENCH_OK && i < n; i++)
        rc = fields[i] && *fields[i] ? append(k, &list, &n_list, fields[i], err)
                                     : refuse(k, err, "key: field %d is empty", i);
    if (rc == GPUBENCH_OK) {
        for (int i = 0; i < k->def.n_key_fields; i++)
            free(k->def.key_fields[i]);
        free(k->def.key_fields);
        k->def.key_fields = list, k->def.n_key_fields = n_list;
        return GPUBENCH_OK;
    }
    for (int i = 0; i < n_list; i++)
        free(list[i]);
    free(list);
    return rc;
}

int gpubench_kernel_check(gpubench_kernel *k, const int *outputs, int n_outputs, double rtol,
                          double atol, int norm, gpubench_error *err)
{
    if (n_outputs < 0 || n_outputs > GB_MAX_ARGS || (n_outputs && !outputs))
        return refuse(k, err, "check: outputs must be 0 to 32 argument positions");
    for (int i = 0; i < n_outputs; i++)
        if (outputs[i] < 0 || outputs[i] >= GB_MAX_ARGS)
            return refuse(k, err, "check: outputs[%d] is %d, not a 0-based argument position", i,
                          outputs[i]);
    gb_check_spec *c = &k->def.check;
    c->n_outputs = n_outputs;
    memcpy(c->outputs, outputs, (size_t)n_outputs * sizeof *outputs);
    c->rtol = rtol < 0 ? -1.0 : rtol;
    c->atol = atol < 0 ? -1.0 : atol;
    c->norm = norm != 0;
    return GPUBENCH_OK;
}

int gpubench_kernel_reference(gpubench_kernel *k, gpubench_kernel *reference, gpubench_error *err)
{
    if (!reference || reference == k) return refuse(k, err, "reference: not another kernel");
    if (reference->def.space.n_params)
        return refuse(k, err, "reference %s has tuning parameters; a reference must have none",
                      reference->def.name);
    gpubench_kernel_free((gpubench_kernel *)k->def.reference);
    k->def.reference = &reference->def;
    return GPUBENCH_OK;
}

int gpubench_kernel_callbacks(gpubench_kernel *k, const gpubench_callbacks *cb, gpubench_error *err)
{
    if (!cb) return refuse(k, err, "callbacks: NULL");
    k->cb = *cb;
    gb_api_set_hooks(k);
    return GPUBENCH_OK;
}

/* ---- ready to tune? ------------------------------------------------------------ */

/* Every ${P} of the entry names a parameter. */
static int check_entry(const gb_kernel_def *d, gb_err *err)
{
    for (const char *p = strstr(d->entry, "${"); p; p = strstr(p + 2, "${")) {
        const char *end = strchr(p, '}');
        if (!end) return gb_err_set(err, GB_EINVAL, "entry '%s' has an unclosed ${", d->entry);
        bool known = false;
        for (int i = 0; i < d->space.n_params && !known; i++) {
            const char *name = d->space.params[i].name;
            known = strlen(name) == (size_t)(end - p - 2) && !strncmp(name, p + 2, end - p - 2);
        }
        if (!known)
            return gb_err_set(err, GB_EINVAL, "entry '%s' uses ${%.*s}, which is not a parameter",
                              d->entry, (int)(end - p - 2), p + 2);
    }
    return GB_OK;
}

static int check_def(const gpubench_kernel *k, bool reference, gb_err *err)
{
    const char *what = reference ? "reference" : "kernel";
    if (!k->def.source)
        return gb_err_set(err, GB_EINVAL,
                          "%s %s has no source (gpubench_kernel_source or "
                          "gpubench_kernel_template)",
                          what, k->def.name);
    if (!k->def.entry)
        return gb_err_set(err, GB_EINVAL, "%s %s has no entry (gpubench_kernel_entry)", what,
                          k->def.name);
    if (!k->cb.launch)
        return gb_err_set(err, GB_EINVAL, "%s %s has no launch callback", what, k->def.name);
    if (!reference && !k->cb.args)
        return gb_err_set(err, GB_EINVAL, "kernel %s has no args callback", k->def.name);
    int rc = check_entry(&k->def, err);
    return rc ? gb_err_prefix(err, "%s %s", what, k->def.name) : GB_OK;
}

int gb_api_kernel_check(const gpubench_kernel *k, gb_err *err)
{
    int rc = check_def(k, false, err);
    if (rc == GB_OK && k->def.reference)
        rc = check_def((const gpubench_kernel *)k->def.reference, true, err);
    return rc;
}
