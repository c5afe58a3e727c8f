/* plugin.c — the one loader of tide's plug-ins (tide_plugin_open: open, find the entry, check
 * the ABI version, say why not), and the lookup of a loadable backend's library: finds it in the
 * documented order, opens it, then asks it for its vtable and devices. The collective back ends
 * (src/dist.c) open theirs with the same tide_plugin_open.
 *
 * Backends are separate shared objects so that a host without a backend's runtime or driver
 * still loads tide; when one cannot be loaded, the reason is kept for the user. Nothing here
 * knows a particular backend: its registry line (src/device.c) says what to load. */
#include "plugin.h"
#include "registry.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tide_config.h" /* TIDE_PLUGIN_DIR: a plug-in folder given at build time (make) */

static void fail(tide_backend_line *l, const char *reason) {
    snprintf(l->reason, sizeof l->reason, "%s", reason);
}

/* `make install` makes the Lua module's core.so a link to lib/libtide.so.0, whose plug-ins are
 * in lib/tide/: hence real_dir */
void tide_plugin_core_dir(char *dir, char *real_dir, size_t n) {
    Dl_info info;
    snprintf(dir, n, ".");
    snprintf(real_dir, n, ".");
    if (dladdr((void *)(uintptr_t)tide_init, &info) && info.dli_fname) {
        const char *slash = strrchr(info.dli_fname, '/');
        if (slash)
            snprintf(dir, n, "%.*s", (int)(slash - info.dli_fname), info.dli_fname);
        char *real = realpath(info.dli_fname, NULL);
        if (real) {
            char *rs = strrchr(real, '/');
            if (rs)
                snprintf(real_dir, n, "%.*s", (int)(rs - real), real);
            free(real);
        }
    }
}

/* The library's path, in the documented order; 0 when found, else the reason is set. */
static int find(tide_backend_line *l, char *path, size_t n) {
    char r[1024]; /* fail() keeps what fits */
    /* the host said where (or the line is a path): nothing else is tried */
    const char *given = l->set_path[0] ? l->set_path : strchr(l->library, '/') ? l->library : NULL;
    if (given) {
        snprintf(path, n, "%s", given);
        if (access(path, F_OK) == 0)
            return 0;
        if (l->set_path[0])
            snprintf(r, sizeof r, "the %s backend was not found at %.400s (given to tide_%s)",
                     l->upper, path, l->set_path_api);
        else
            snprintf(r, sizeof r, "the %s backend was not found at %.400s", l->upper, path);
        fail(l, r);
        return -1;
    }
    /* $TIDE_<NAME>_LIB, when set, wins over the files found: it is how the tests load the
     * emulated CUDA backend beside a real one */
    char var[32];
    snprintf(var, sizeof var, "TIDE_%s_LIB", l->upper);
    const char *env = getenv(var);
    if (env && *env && access(env, F_OK) == 0) {
        snprintf(path, n, "%s", env);
        return 0;
    }
    char dir[2048], real_dir[2048];
    tide_plugin_core_dir(dir, real_dir, sizeof dir);
    /* TIDE_PLUGIN_DIR is empty unless the build was given TIDE_CUDA_DIR (tools/install.mk) */
    const char *const forms[] = {"%s/%s", "%s/tide/%s", "%s/tide/%s", "%s/%s"};
    const char *const dirs[] = {dir, dir, real_dir, TIDE_PLUGIN_DIR};
    for (int i = 0; i < 4; i++) {
        if (!dirs[i][0])
            continue;
        snprintf(path, n, forms[i], dirs[i], l->library);
        if (access(path, F_OK) == 0)
            return 0;
    }
    snprintf(r, sizeof r,
             "the %s backend was not built (%.60s not found next to %.300s, in its tide/ nor in "
             "%.100s/tide%s%s%s%s; set %s or call tide_%s)",
             l->upper, l->library, dir, real_dir, TIDE_PLUGIN_DIR[0] ? ", nor in " : "",
             TIDE_PLUGIN_DIR, env && *env ? ", nor at $" : "", env && *env ? var : "", var,
             l->set_path_api);
    fail(l, r);
    return -1;
}

void *tide_plugin_open(const char *path, const tide_plugin_spec *spec, char *reason, size_t n) {
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(reason, n, "%s could not be loaded: %.400s", spec->what, e ? e : path);
        return NULL;
    }
    void *entry = dlsym(h, spec->entry);
    if (!entry) {
        snprintf(reason, n, "%.300s does not export %s", path, spec->entry);
        return NULL; /* h stays loaded */
    }
    if (!spec->abi_entry)
        return entry;
    /* never called through a vtable of another layout */
    int (*abi_fn)(void);
    *(void **)&abi_fn = dlsym(h, spec->abi_entry);
    int abi = abi_fn ? abi_fn() : 0;
    if (!abi_fn)
        snprintf(reason, n,
                 "%.300s is a %s of an older tide (it has no backend ABI version; this tide "
                 "needs version %d): rebuild it with this tide or remove it",
                 path, spec->kind, spec->abi);
    else if (abi != spec->abi)
        snprintf(reason, n,
                 "%.300s is a %s of another tide (backend ABI version %d; this tide needs "
                 "version %d): rebuild it with this tide or remove it",
                 path, spec->kind, abi, spec->abi);
    else
        return entry;
    return NULL;
}

void tide_plugin_load(tide_backend_line *l, tide_device_type type) {
    char path[4096], r[sizeof l->reason];
    if (find(l, path, sizeof path) != 0)
        return;
    char what[32], kind[32], open_sym[80], abi_sym[80];
    snprintf(what, sizeof what, "the %s backend", l->upper);
    snprintf(kind, sizeof kind, "%s backend", l->upper);
    snprintf(open_sym, sizeof open_sym, "%s" TIDE_BACKEND_OPEN_SUFFIX, l->entry);
    snprintf(abi_sym, sizeof abi_sym, "%s" TIDE_BACKEND_ABI_SUFFIX, l->entry);
    const tide_plugin_spec spec = {.what = what,
                                   .entry = open_sym,
                                   .abi_entry = abi_sym,
                                   .kind = kind,
                                   .abi = TIDE_BACKEND_ABI};
    tide_backend_open_fn   open_fn;
    *(void **)&open_fn = tide_plugin_open(path, &spec, l->reason, sizeof l->reason);
    if (!open_fn)
        return;
    const tide_backend *be = NULL;
    int                 count = 0;
    char                saved[1024];
    snprintf(saved, sizeof saved, "%s", tide_errmsg());
    tide_seterr(TIDE_OK, "%s", "");
    tide_status st = open_fn(tide_seterr, &be, &count);
    if (st == TIDE_OK && be && count > 0 &&
        !(be->alloc && be->free && be->copy_to_host && be->copy_from_host)) {
        snprintf(r, sizeof r,
                 "%.300s gives no alloc, free, copy_to_host or copy_from_host: a backend needs "
                 "all four",
                 path);
        fail(l, r);
    } else if (st != TIDE_OK || !be || count <= 0) {
        const char *m = tide_errmsg();
        if (strncmp(m, "tide: ", 6) == 0)
            m += 6;
        if (st != TIDE_OK && *m)
            fail(l, m);
        else {
            snprintf(r, sizeof r, "no %s device", l->upper);
            fail(l, r);
        }
    } else {
        char base[sizeof l->name]; /* a copy: snprintf must not read the object it writes */
        memcpy(base, l->name, sizeof base);
        l->n = count < TIDE_MAX_DEVICES ? count : TIDE_MAX_DEVICES;
        for (int i = 0; i < l->n; i++) {
            tide_device *d = &l->devs[i];
            d->type = type;
            d->index = i;
            d->backend = be;
            snprintf(d->name, sizeof d->name, "%s:%d", base, i % 100); /* fits name[16] */
        }
        atomic_store(&l->loaded, 1);
    }
    tide_seterr(TIDE_OK, "%s", saved[0] ? saved + 6 : "");
}
