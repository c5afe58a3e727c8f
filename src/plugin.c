/* plugin.c — the loader of a loadable backend: finds its library in the documented order,
 * opens it, checks its backend ABI version, then asks it for its vtable and devices.
 *
 * Backends are separate shared objects so that a host without a backend's runtime or driver
 * still loads tide; when one cannot be loaded, the reason is kept for the user. Nothing here
 * knows a particular backend: its registry line (src/device.c) says what to load. */
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

/* the directory of the object holding the core (libtide.so, core.so, or the host executable),
 * as it was loaded (dir) and with links resolved (real_dir): `make install` makes the Lua
 * module's core.so a link to lib/libtide.so.0, whose plug-ins are in lib/tide/ */
static void core_dir(char *dir, char *real_dir, size_t n) {
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
    core_dir(dir, real_dir, sizeof dir);
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

/* 0 when the plug-in speaks this core's backend interface (TIDE_BACKEND_ABI) */
static int check_abi(tide_backend_line *l, void *h, const char *path) {
    char sym[80];
    snprintf(sym, sizeof sym, "%s" TIDE_BACKEND_ABI_SUFFIX, l->entry);
    tide_backend_abi_fn abi_fn;
    *(void **)&abi_fn = dlsym(h, sym);
    int  abi = abi_fn ? abi_fn() : 0;
    char r[sizeof l->reason];
    if (!abi_fn)
        snprintf(r, sizeof r,
                 "%.300s is a %s backend of an older tide (it has no backend ABI version; this "
                 "tide needs version %d): rebuild it with this tide or remove it",
                 path, l->upper, TIDE_BACKEND_ABI);
    else if (abi != TIDE_BACKEND_ABI)
        snprintf(r, sizeof r,
                 "%.300s is a %s backend of another tide (backend ABI version %d; this tide "
                 "needs version %d): rebuild it with this tide or remove it",
                 path, l->upper, abi, TIDE_BACKEND_ABI);
    else
        return 0;
    fail(l, r);
    return -1;
}

void tide_plugin_load(tide_backend_line *l, tide_device_type type) {
    char path[4096], r[sizeof l->reason];
    if (find(l, path, sizeof path) != 0)
        return;
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(r, sizeof r, "the %s backend could not be loaded: %.400s", l->upper, e ? e : path);
        fail(l, r);
        return;
    }
    char sym[80];
    snprintf(sym, sizeof sym, "%s" TIDE_BACKEND_OPEN_SUFFIX, l->entry);
    tide_backend_open_fn open_fn;
    *(void **)&open_fn = dlsym(h, sym);
    if (!open_fn) {
        snprintf(r, sizeof r, "%.300s does not export %s", path, sym);
        fail(l, r);
        return; /* keep h loaded: unloading GPU runtimes is fragile */
    }
    if (check_abi(l, h, path) != 0)
        return; /* never called through a vtable of another layout */
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
