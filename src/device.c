/* device.c — the device registry: cpu:0..N-1 (TIDE_CPU_DEVICES) built in, CUDA loaded on demand.
 *
 * The CUDA backend is a separate shared object so that a host without the CUDA runtime or
 * driver still loads tide; when it cannot be loaded, the reason is kept for the user. */
#include "tide_impl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_CPU  64
#define MAX_CUDA 64

static tide_device    cpu_devs[MAX_CPU];
static int            n_cpu;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static tide_device    cuda_devs[MAX_CUDA];
static int            n_cuda;
static char           cuda_reason[512];
static pthread_once_t cuda_once = PTHREAD_ONCE_INIT;

/* a positive decimal integer without sign or junk, else -1 */
static long parse_count(const char *s) {
    if (!s || !*s)
        return -1;
    long v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > 100000)
            return -1;
        v = v * 10 + (*s - '0');
    }
    return v;
}

static void init_once_fn(void) {
    long n = parse_count(getenv("TIDE_CPU_DEVICES"));
    n_cpu = (n >= 1 && n <= MAX_CPU) ? (int)n : 1;
    for (int i = 0; i < n_cpu; i++) {
        tide_device *d = &cpu_devs[i];
        d->type = TIDE_DEVICE_CPU;
        d->index = i;
        d->backend = &tide_cpu_backend;
        if (i == 0)
            snprintf(d->name, sizeof d->name, "cpu");
        else
            snprintf(d->name, sizeof d->name, "cpu:%d", i);
    }
}

tide_status tide_init(void) {
    pthread_once(&init_once, init_once_fn);
    return TIDE_OK;
}

/* ---- CUDA loader -------------------------------------------------------------------------- */

static void cuda_fail(const char *reason) {
    snprintf(cuda_reason, sizeof cuda_reason, "%s", reason);
}

static void cuda_once_fn(void) {
    char    path[4096] = "";
    Dl_info info;
    /* next to the module holding the core (core.so for Lua, the host binary for C) */
    if (dladdr((void *)(uintptr_t)tide_init, &info) && info.dli_fname) {
        snprintf(path, sizeof path, "%s", info.dli_fname);
        char *slash = strrchr(path, '/');
        if (slash)
            slash[1] = '\0';
        else
            snprintf(path, sizeof path, "./");
    }
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path[0] ? path : "./");
    size_t dl = strlen(dir);
    if (dl > 1 && dir[dl - 1] == '/')
        dir[dl - 1] = '\0';
    /* dir holds at most 4095 bytes; a path that does not fit is simply not found */
    if (strlen(dir) + sizeof "/libtide_cuda.so" > sizeof path)
        dir[sizeof path - sizeof "/libtide_cuda.so"] = '\0';
    memcpy(path, dir, strlen(dir));
    memcpy(path + strlen(dir), "/libtide_cuda.so", sizeof "/libtide_cuda.so");
    /* $TIDE_CUDA_LIB, when set, wins: it is how the tests load the emulated backend */
    const char *env = getenv("TIDE_CUDA_LIB");
    if (env && *env && access(env, F_OK) == 0) {
        snprintf(path, sizeof path, "%s", env);
    } else if (access(path, F_OK) != 0) {
        char r[sizeof cuda_reason];
        snprintf(r, sizeof r,
                 "the CUDA backend was not built (libtide_cuda.so not found next to %.300s%s)", dir,
                 env && *env ? " nor at $TIDE_CUDA_LIB" : "");
        cuda_fail(r);
        return;
    }
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        char        r[sizeof cuda_reason];
        snprintf(r, sizeof r, "the CUDA backend could not be loaded: %.400s", e ? e : path);
        cuda_fail(r);
        return;
    }
    tide_cuda_open_fn open_fn;
    *(void **)&open_fn = dlsym(h, TIDE_CUDA_ENTRY);
    if (!open_fn) {
        char r[sizeof cuda_reason];
        snprintf(r, sizeof r, "%.300s does not export " TIDE_CUDA_ENTRY, path);
        cuda_fail(r);
        return; /* keep h loaded: unloading CUDA runtimes is fragile */
    }
    const tide_backend *be = NULL;
    int                 count = 0;
    char                saved[1024];
    snprintf(saved, sizeof saved, "%s", tide_errmsg());
    tide_seterr(TIDE_OK, "%s", "");
    tide_status st = open_fn(tide_seterr, &be, &count);
    if (st != TIDE_OK || !be || count <= 0) {
        const char *m = tide_errmsg();
        if (strncmp(m, "tide: ", 6) == 0)
            m += 6;
        cuda_fail(st != TIDE_OK && *m ? m : "no CUDA device");
    } else {
        n_cuda = count < MAX_CUDA ? count : MAX_CUDA;
        for (int i = 0; i < n_cuda; i++) {
            tide_device *d = &cuda_devs[i];
            d->type = TIDE_DEVICE_CUDA;
            d->index = i;
            d->backend = be;
            snprintf(d->name, sizeof d->name, "cuda:%d", i % 10000); /* fits name[16] */
        }
    }
    tide_seterr(TIDE_OK, "%s", saved[0] ? saved + 6 : "");
}

static void cuda_load(void) {
    pthread_once(&cuda_once, cuda_once_fn);
}

int tide_cuda_is_available(void) {
    cuda_load();
    return n_cuda > 0;
}

const char *tide_cuda_unavailable_reason(void) {
    cuda_load();
    return n_cuda > 0 ? NULL : cuda_reason;
}

/* ---- lookup ------------------------------------------------------------------------------- */

tide_status tide_device_get_index(tide_device_type type, int index, tide_device **out) {
    tide_init();
    if (type == TIDE_DEVICE_CPU) {
        if (index < 0 || index >= n_cpu)
            return tide_seterr(TIDE_EDEVICE,
                               "device: cpu:%d does not exist: there %s %d CPU device%s (cpu:0 to "
                               "cpu:%d); set TIDE_CPU_DEVICES=%d before loading tide for more",
                               index, n_cpu == 1 ? "is" : "are", n_cpu, n_cpu == 1 ? "" : "s",
                               n_cpu - 1, index < 0 ? 2 : index + 1);
        *out = &cpu_devs[index];
        return TIDE_OK;
    }
    if (type == TIDE_DEVICE_CUDA) {
        if (!tide_cuda_is_available())
            return tide_seterr(TIDE_EDEVICE,
                               "device: CUDA is not available: %s; use tide.best_device() or "
                               "\"cpu\"",
                               cuda_reason);
        if (index < 0 || index >= n_cuda)
            return tide_seterr(TIDE_EDEVICE,
                               "device: cuda:%d does not exist: there %s %d CUDA device%s (cuda:0 "
                               "to cuda:%d); see tide.cuda.device_count()",
                               index, n_cuda == 1 ? "is" : "are", n_cuda, n_cuda == 1 ? "" : "s",
                               n_cuda - 1);
        *out = &cuda_devs[index];
        return TIDE_OK;
    }
    return tide_seterr(TIDE_EINVAL, "device: unknown device type %d", (int)type);
}

tide_status tide_device_get(const char *spec, tide_device **out) {
    static const char forms[] = "use \"cpu\", \"cpu:N\", \"cuda\" or \"cuda:N\"";
    if (!spec)
        return tide_seterr(TIDE_EINVAL, "device: no device given; %s", forms);
    tide_device_type type;
    const char      *rest;
    if (strncmp(spec, "cpu", 3) == 0) {
        type = TIDE_DEVICE_CPU;
        rest = spec + 3;
    } else if (strncmp(spec, "cuda", 4) == 0) {
        type = TIDE_DEVICE_CUDA;
        rest = spec + 4;
    } else {
        return tide_seterr(TIDE_EINVAL, "device: unknown device \"%.64s\"; %s", spec, forms);
    }
    long index = 0;
    if (*rest == ':') {
        index = parse_count(rest + 1);
        if (index < 0 || index > 100000)
            return tide_seterr(TIDE_EINVAL,
                               "device: bad device index in \"%.64s\"; %s (N a number from 0)",
                               spec, forms);
    } else if (*rest) {
        return tide_seterr(TIDE_EINVAL, "device: unknown device \"%.64s\"; %s", spec, forms);
    }
    return tide_device_get_index(type, (int)index, out);
}

tide_device_type tide_device_type_of(const tide_device *dev) {
    return dev->type;
}

int tide_device_index(const tide_device *dev) {
    return dev->index;
}

const char *tide_device_name(const tide_device *dev) {
    return dev->name;
}

int tide_device_count(tide_device_type type) {
    tide_init();
    if (type == TIDE_DEVICE_CPU)
        return n_cpu;
    return tide_cuda_is_available() ? n_cuda : 0;
}

int tide_device_is_host(const tide_device *dev) {
    return dev == &cpu_devs[0];
}

tide_status tide_device_synchronize(tide_device *dev) {
    if (!dev->backend->synchronize)
        return TIDE_OK;
    tide_status st = dev->backend->synchronize(dev);
    return st == TIDE_OK ? st : tide_err_op(st, "synchronize");
}

tide_status tide_device_memory_stats(tide_device *dev, tide_memory_stats *out) {
    memset(out, 0, sizeof *out);
    if (!dev->backend->memory_stats)
        return TIDE_OK;
    tide_status st = dev->backend->memory_stats(dev, out);
    return st == TIDE_OK ? st : tide_err_op(st, "memory_stats");
}

tide_status tide_device_empty_cache(tide_device *dev) {
    if (!dev->backend->empty_cache)
        return TIDE_OK;
    tide_status st = dev->backend->empty_cache(dev);
    return st == TIDE_OK ? st : tide_err_op(st, "empty_cache");
}

tide_status tide_notsup(const char *op, const tide_device *dev) {
    return tide_seterr(TIDE_ENOTSUP, "%s: not implemented on %s", op, dev->name);
}
