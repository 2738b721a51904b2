/* Opening a library loaded at run time (engine/dlib.h). */
#include "engine/dlib.h"

#include "base/strbuf.h"

#include <dlfcn.h>
#include <stdlib.h>

static void *open_named(const gb_dlib_spec *spec, const char *path, gb_err *err)
{
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *e = dlerror();
        gb_err_set(err, GB_ENODRIVER,
                   "%s not found: install %s and point %s, which names this file, at its %s, or "
                   "unset it (the loader said: %s)",
                   path, spec->package, spec->env_var, spec->sonames[0], e ? e : "nothing");
    }
    return lib;
}

/* "b", "b and c", "b, c and d": the sonames tried after the first. */
static void others(const gb_dlib_spec *spec, gb_strbuf *out)
{
    for (size_t i = 1; i < spec->n_sonames; i++)
        gb_sb_printf(out, "%s%s",
                     i == 1                     ? ""
                     : i + 1 == spec->n_sonames ? " and "
                                                : ", ",
                     spec->sonames[i]);
}

static void *open_default(const gb_dlib_spec *spec, const char **out_path, gb_err *err)
{
    char why[512] = "";
    for (size_t i = 0; i < spec->n_sonames; i++) {
        void *lib = dlopen(spec->sonames[i], RTLD_NOW | RTLD_LOCAL);
        if (lib) {
            *out_path = spec->sonames[i];
            return lib;
        }
        const char *e = dlerror();
        if (i == 0 && e) gb_strlcpy(why, e, sizeof why);
    }
    gb_strbuf tried = GB_STRBUF_INIT;
    others(spec, &tried);
    gb_err_set(err, GB_ENODRIVER,
               "%s not found: install %s or set LD_LIBRARY_PATH to its lib folder, or %s to the "
               "file (%s%s tried too; the loader said: %s)",
               spec->sonames[0], spec->install, spec->env_var, gb_sb_str(&tried),
               spec->n_sonames > 2 ? " were" : " was", why);
    gb_sb_free(&tried);
    return NULL;
}

void *gb_dlib_open(const gb_dlib_spec *spec, const char **out_path, gb_err *err)
{
    const char *path = getenv(spec->env_var);
    if (path && *path) {
        *out_path = path;
        return open_named(spec, path, err);
    }
    return open_default(spec, out_path, err);
}

int gb_dlib_load(gb_dlib *d, gb_err *err)
{
    pthread_mutex_lock(&d->lock);
    if (!d->tried) {
        d->tried = true;
        const char *path = NULL;
        void *lib = gb_dlib_open(d->spec, &path, &d->err);
        if (lib && d->resolve(lib, path, &d->err) == GB_OK) {
            d->path = path;
            d->loaded = true;
        }
    }
    bool loaded = d->loaded;
    pthread_mutex_unlock(&d->lock);
    return loaded ? GB_OK : gb_err_copy(err, &d->err);
}

const char *gb_dlib_path(gb_dlib *d)
{
    pthread_mutex_lock(&d->lock);
    const char *path = d->loaded ? d->path : NULL;
    pthread_mutex_unlock(&d->lock);
    return path;
}
