#include "tuner/variant.h"

#include "tuner/source.h"

#include <stdlib.h>
#include <string.h>

int gb_tune_expand_entry(const char *entry, const gb_config *config, gb_strbuf *out, gb_err *err)
{
    for (const char *p = entry; *p;) {
        if (p[0] != '$' || p[1] != '{') {
            gb_sb_putc(out, *p++);
            continue;
        }
        const char *close = strchr(p + 2, '}');
        if (!close) return gb_err_set(err, GB_EINVAL, "entry '%s': unclosed ${", entry);
        char name[128];
        size_t n = (size_t)(close - (p + 2));
        if (n == 0 || n >= sizeof name)
            return gb_err_set(err, GB_EINVAL, "entry '%s': bad placeholder", entry);
        memcpy(name, p + 2, n);
        name[n] = '\0';
        const gb_value *v = config ? gb_config_get(config, name) : NULL;
        if (!v)
            return gb_err_set(err, GB_EINVAL, "entry '%s': ${%s} is not a parameter of the kernel",
                              entry, name);
        gb_value_append_source(out, v);
        p = close + 1;
    }
    return gb_sb_status(out) ? gb_err_set(err, GB_ENOMEM, "out of memory") : GB_OK;
}

static void add_define(gb_strbuf *opts, const char *name, const gb_value *v)
{
    gb_sb_printf(opts, "-D%s=", name);
    gb_value_append_source(opts, v);
    gb_sb_putc(opts, '\0');
}

/* All options as NUL-separated strings in one buffer. */
static int build_options(const gb_kernel_def *k, const gb_config *config, const gb_fields *shape,
                         gb_strbuf *opts, int *out_n, gb_err *err)
{
    int n = 0;
    for (int i = 0; i < k->n_options; i++, n++)
        gb_sb_append(opts, k->options[i], strlen(k->options[i]) + 1);
    for (int i = 0; k->macros && i < k->space.n_params; i++, n++)
        add_define(opts, k->space.params[i].name, &k->space.params[i].values[config->index[i]]);
    if (k->hooks.defines) {
        gb_fields defs = {0};
        int rc = k->hooks.defines(k->hooks_ctx, config, shape, &defs, err);
        if (rc) return rc;
        for (int i = 0; i < defs.n; i++, n++)
            add_define(opts, defs.names[i], &defs.values[i]);
        gb_fields_free(&defs);
    }
    *out_n = n;
    return gb_sb_status(opts) ? gb_err_set(err, GB_ENOMEM, "out of memory") : GB_OK;
}

/* "sgemm BK=8,BM=64", or the kernel's name alone when it has no parameters (a
 * reference): what a profiler's timeline calls the compile. */
static int variant_label(const gb_kernel_def *k, const gb_config *config, gb_strbuf *out,
                         gb_err *err)
{
    gb_sb_printf(out, "%s", k->name);
    if (config && config->space && config->space->n_params > 0) {
        gb_sb_putc(out, ' ');
        gb_config_append_canonical(out, config);
    }
    return gb_sb_status(out) ? gb_err_set(err, GB_ENOMEM, "out of memory") : GB_OK;
}

int gb_variant_job(const gb_kernel_def *k, const gb_key *source_fp, const char *arch,
                   const gb_config *config, const gb_fields *shape, gb_compile_job **out,
                   gb_err *err)
{
    gb_strbuf name = GB_STRBUF_INIT, opts = GB_STRBUF_INIT, label = GB_STRBUF_INIT;
    const char *argv[256];
    int n_opts = 0;
    int rc = gb_tune_expand_entry(k->entry, config, &name, err);
    if (rc == GB_OK) rc = variant_label(k, config, &label, err);
    if (rc == GB_OK) rc = build_options(k, config, shape, &opts, &n_opts, err);
    if (rc == GB_OK && n_opts > (int)(sizeof argv / sizeof *argv))
        rc = gb_err_set(err, GB_EINVAL, "kernel %s: too many compiler options", k->name);
    const char *p = gb_sb_str(&opts);
    for (int i = 0; rc == GB_OK && i < n_opts; i++, p += strlen(p) + 1)
        argv[i] = p;
    gb_compile_req req = {
        .source = k->source,
        .source_name = k->source_name,
        .name_exprs = {gb_sb_str(&name)},
        .n_name_exprs = 1,
        .options = argv,
        .n_options = n_opts,
        .include_dirs = (const char *const *)k->include_dirs,
        .n_include_dirs = k->n_include_dirs,
        .arch = arch,
        .label = gb_sb_str(&label),
    };
    if (rc == GB_OK) rc = gb_compile_job_create(&req, source_fp, out, err);
    gb_sb_free(&name);
    gb_sb_free(&opts);
    gb_sb_free(&label);
    return rc;
}

int gb_variant_source_fp(const gb_kernel_def *k, gb_key *out, gb_err *err)
{
    return gb_source_fingerprint(k->source, (const char *const *)k->include_dirs, k->n_include_dirs,
                                 out, err);
}

int gb_variant_source_files(const gb_kernel_def *k, gb_key *out_fp, gb_record_source **out_files,
                            int *out_n, gb_err *err)
{
    return gb_source_closure(k->source, k->source_name, (const char *const *)k->include_dirs,
                             k->n_include_dirs, out_fp, out_files, out_n, err);
}

int gb_variant_space_fp(const gb_space *space, char out[33])
{
    gb_keybuf kb;
    gb_key_begin(&kb, "space");
    for (int i = 0; i < space->n_params; i++) {
        gb_strbuf values = GB_STRBUF_INIT;
        for (int j = 0; j < space->params[i].n_values; j++) {
            gb_value_append_canonical(&values, &space->params[i].values[j]);
            gb_sb_putc(&values, ',');
        }
        gb_key_add_str(&kb, space->params[i].name);
        gb_key_add_str(&kb, gb_sb_str(&values));
        gb_sb_free(&values);
    }
    gb_key key;
    int rc = gb_key_finish(&kb, &key);
    gb_key_hex(&key, out);
    return rc;
}

int gb_tune_kernel_fingerprint(const gb_kernel_def *k, char out[33], gb_err *err)
{
    gb_key source;
    int rc = gb_variant_source_fp(k, &source, err);
    if (rc) return rc;
    gb_keybuf kb;
    gb_key_begin(&kb, "kernel");
    gb_key_add_bytes(&kb, source.bytes, sizeof source.bytes);
    gb_key_add_str(&kb, k->entry);
    gb_key_add_i64(&kb, k->macros);
    for (int i = 0; i < k->n_options; i++)
        gb_key_add_str(&kb, k->options[i]);
    gb_key key;
    if ((rc = gb_key_finish(&kb, &key))) return gb_err_set(err, rc, "out of memory");
    gb_key_hex(&key, out);
    return GB_OK;
}
