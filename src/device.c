/* device.c — the device registry: a table of backends. Line 0 is the built-in cpu
 * (cpu:0..N-1, TIDE_CPU_DEVICES); each further line names a loadable backend (name, library,
 * entry symbol), loaded by src/plugin.c on first use. A line's index is its device type.
 *
 * Adding a backend adds a line to builtin_lines (or a host calls tide_backend_register); nothing
 * else in the core knows one backend from another. */
#include "registry.h"
#include "tide_dlpack.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LINES 8

/* The loadable backends shipped with tide, in device-type order after cpu (include/tide.h's enum
 * names them in this order): name, library, entry, DLPack device types of its memory and of its
 * pinned host memory. The only place in the core that names a backend. */
static const struct {
    const char *name, *library, *entry;
    int         dl_code, dl_host_code;
} builtin_lines[] = {
    {"cuda", "libtide_cuda.so", "tide_cuda_backend", kDLCUDA, kDLCUDAHost},
};

static tide_backend_line lines[MAX_LINES];
static atomic_int        n_lines;
static int               n_cpu;
static pthread_once_t    init_once = PTHREAD_ONCE_INIT;
/* guards loading and adding lines: a line's path is fixed once its lookup begins */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;

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

static void line_init(tide_backend_line *l, const char *name, const char *library,
                      const char *entry, int dl_code, int dl_host_code, const char *api) {
    snprintf(l->name, sizeof l->name, "%s", name);
    for (size_t i = 0; i < sizeof l->upper; i++)
        l->upper[i] = (char)toupper((unsigned char)l->name[i]);
    snprintf(l->library, sizeof l->library, "%s", library);
    snprintf(l->entry, sizeof l->entry, "%s", entry);
    snprintf(l->set_path_api, sizeof l->set_path_api, "%s", api);
    l->dl_code = dl_code;
    l->dl_host_code = dl_host_code;
}

static void init_once_fn(void) {
    long n = parse_count(getenv("TIDE_CPU_DEVICES"));
    n_cpu = (n >= 1 && n <= TIDE_MAX_DEVICES) ? (int)n : 1;
    tide_backend_line *cpu = &lines[TIDE_DEVICE_CPU];
    line_init(cpu, "cpu", "", "", kDLCPU, 0, "");
    for (int i = 0; i < n_cpu; i++) {
        tide_device *d = &cpu->devs[i];
        d->type = TIDE_DEVICE_CPU;
        d->index = i;
        d->backend = &tide_cpu_backend;
        if (i == 0)
            snprintf(d->name, sizeof d->name, "cpu");
        else
            snprintf(d->name, sizeof d->name, "cpu:%d", i);
    }
    cpu->n = n_cpu;
    atomic_store(&cpu->state, 2);
    atomic_store(&cpu->loaded, 1);
    int k = 1;
    for (size_t i = 0; i < sizeof builtin_lines / sizeof builtin_lines[0]; i++, k++) {
        char api[40];
        snprintf(api, sizeof api, "%s_set_library_path", builtin_lines[i].name);
        line_init(&lines[k], builtin_lines[i].name, builtin_lines[i].library,
                  builtin_lines[i].entry, builtin_lines[i].dl_code, builtin_lines[i].dl_host_code,
                  api);
    }
    atomic_store(&n_lines, k);
}

tide_status tide_init(void) {
    pthread_once(&init_once, init_once_fn);
    return TIDE_OK;
}

/* the line of type, or NULL */
static tide_backend_line *line_of(tide_device_type type) {
    tide_init();
    if ((int)type < 0 || (int)type >= atomic_load_explicit(&n_lines, memory_order_acquire))
        return NULL;
    return &lines[type];
}

/* the line loaded (once; the cpu line always is) */
static tide_backend_line *line_load(tide_device_type type) {
    tide_backend_line *l = line_of(type);
    if (!l || atomic_load_explicit(&l->state, memory_order_acquire) == 2)
        return l;
    pthread_mutex_lock(&registry_lock);
    if (atomic_load(&l->state) != 2) {
        atomic_store(&l->state, 1);
        tide_plugin_load(l, type);
        atomic_store_explicit(&l->state, 2, memory_order_release);
    }
    pthread_mutex_unlock(&registry_lock);
    return l;
}

/* ---- registry lines ----------------------------------------------------------------------- */

static bool valid_name(const char *s) {
    size_t n = s ? strlen(s) : 0;
    if (n < 1 || n > 11 || !islower((unsigned char)s[0]))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!islower((unsigned char)s[i]) && !isdigit((unsigned char)s[i]))
            return false;
    return true;
}

tide_status tide_backend_register(const char *name, const char *library, const char *entry,
                                  tide_device_type *type) {
    static const char op[] = "backend_register";
    tide_init();
    if (!valid_name(name))
        return tide_seterr(TIDE_EINVAL,
                           "%s: name \"%.64s\" is not a backend name: use 1 to 11 lower-case "
                           "letters and digits, starting with a letter (\"metal\", \"rocm2\")",
                           op, name ? name : "(NULL)");
    if (!library || !*library || strlen(library) >= sizeof lines[0].library)
        return tide_seterr(TIDE_EINVAL,
                           "%s: give %s's library (a file name or a path, at most %zu "
                           "bytes)",
                           op, name, sizeof lines[0].library - 1);
    if (!entry || !*entry || strlen(entry) >= sizeof lines[0].entry)
        return tide_seterr(TIDE_EINVAL,
                           "%s: give %s's entry: the prefix of its exports <entry>_abi and "
                           "<entry>_open (at most %zu bytes)",
                           op, name, sizeof lines[0].entry - 1);
    tide_status st = TIDE_OK;
    pthread_mutex_lock(&registry_lock);
    int k = atomic_load(&n_lines);
    for (int i = 0; i < k && st == TIDE_OK; i++)
        if (strcmp(lines[i].name, name) == 0)
            st = tide_seterr(TIDE_EINVAL, "%s: a backend named \"%s\" is already registered", op,
                             name);
    if (st == TIDE_OK && k == MAX_LINES)
        st = tide_seterr(TIDE_EINVAL, "%s: the registry is full (%d backends, cpu included)", op,
                         MAX_LINES);
    if (st == TIDE_OK) {
        line_init(&lines[k], name, library, entry, 0, 0, "backend_set_library_path");
        atomic_store_explicit(&n_lines, k + 1, memory_order_release);
        if (type)
            *type = (tide_device_type)k;
    }
    pthread_mutex_unlock(&registry_lock);
    return st;
}

tide_status tide_backend_set_library_path(tide_device_type type, const char *path) {
    return tide_backend_set_path_as("backend_set_library_path", type, path);
}

tide_status tide_backend_set_path_as(const char *api, tide_device_type type, const char *path) {
    tide_backend_line *l = line_of(type);
    if (!l || type == TIDE_DEVICE_CPU)
        return tide_seterr(TIDE_EINVAL, "%s: device type %d has no library to load", api,
                           (int)type);
    if (!path || !*path || strlen(path) >= sizeof l->set_path)
        return tide_seterr(TIDE_EINVAL, "%s: give the path of %s (at most %zu bytes)", api,
                           l->library, sizeof l->set_path - 1);
    tide_status st = TIDE_OK;
    pthread_mutex_lock(&registry_lock);
    if (atomic_load(&l->state) != 0)
        st = tide_seterr(TIDE_EINVAL,
                         "%s: the %s backend was already looked up; call it before the first %s "
                         "use (asking whether it is available, a %s device)",
                         api, l->upper, l->upper, l->name);
    else {
        snprintf(l->set_path, sizeof l->set_path, "%s", path);
        snprintf(l->set_path_api, sizeof l->set_path_api, "%s", api);
    }
    pthread_mutex_unlock(&registry_lock);
    return st;
}

int tide_device_type_count(void) {
    tide_init();
    return atomic_load_explicit(&n_lines, memory_order_acquire);
}

const char *tide_device_type_name(tide_device_type type) {
    tide_backend_line *l = line_of(type);
    return l ? l->name : NULL;
}

tide_status tide_device_type_from_name(const char *name, tide_device_type *out) {
    int k = tide_device_type_count();
    for (int i = 0; name && i < k; i++)
        if (strcmp(lines[i].name, name) == 0) {
            *out = (tide_device_type)i;
            return TIDE_OK;
        }
    return tide_seterr(TIDE_EINVAL, "device: unknown device type \"%.64s\"",
                       name ? name : "(NULL)");
}

int tide_backend_is_loaded(tide_device_type type) {
    tide_backend_line *l = line_of(type);
    return l && atomic_load(&l->loaded);
}

int tide_backend_is_available(tide_device_type type) {
    tide_backend_line *l = line_load(type);
    return l && l->n > 0;
}

const char *tide_backend_unavailable_reason(tide_device_type type) {
    tide_backend_line *l = line_load(type);
    if (!l)
        return "no such device type";
    return l->n > 0 ? NULL : l->reason;
}

tide_status tide_pinned_backend(const char *op, const tide_backend **out) {
    int  k = tide_device_type_count();
    char names[128] = "", reasons[600] = "";
    for (int i = 1; i < k; i++) {
        tide_backend_line *l = line_load((tide_device_type)i);
        if (l->n > 0 && l->devs[0].backend->alloc_pinned) {
            *out = l->devs[0].backend;
            return TIDE_OK;
        }
        size_t nn = strlen(names), nr = strlen(reasons);
        snprintf(names + nn, sizeof names - nn, "%s%s", nn ? " or " : "", l->upper);
        snprintf(reasons + nr, sizeof reasons - nr, "%s%s%s%.300s", nr ? "; " : "",
                 k > 2 ? l->upper : "", k > 2 ? ": " : "",
                 l->n > 0 ? "it has no pinned memory" : l->reason);
    }
    return tide_seterr(TIDE_ENOTSUP,
                       "%s: pinned memory needs the %s backend, which is not "
                       "available: %s",
                       op, k > 1 ? names : "GPU", k > 1 ? reasons : "none is registered");
}

int tide_device_type_of_dlpack(int dl_code, tide_device_type *type) {
    int k = tide_device_type_count();
    for (int i = 0; i < k; i++) {
        if (dl_code && lines[i].dl_code == dl_code) {
            *type = (tide_device_type)i;
            return 1;
        }
        if (dl_code && lines[i].dl_host_code == dl_code) {
            *type = TIDE_DEVICE_CPU;
            return 2;
        }
    }
    return 0;
}

int tide_device_dlpack_code(const tide_device *dev) {
    tide_backend_line *l = line_of(dev->type);
    return l ? l->dl_code : 0;
}

/* ---- lookup ------------------------------------------------------------------------------- */

tide_status tide_device_get_index(tide_device_type type, int index, tide_device **out) {
    tide_backend_line *l = line_load(type);
    if (!l)
        return tide_seterr(TIDE_EINVAL, "device: unknown device type %d", (int)type);
    if (type == TIDE_DEVICE_CPU) {
        if (index < 0 || index >= n_cpu)
            return tide_seterr(TIDE_EDEVICE,
                               "device: cpu:%d does not exist: there %s %d CPU device%s (cpu:0 to "
                               "cpu:%d); set TIDE_CPU_DEVICES=%d before loading tide for more",
                               index, n_cpu == 1 ? "is" : "are", n_cpu, n_cpu == 1 ? "" : "s",
                               n_cpu - 1, index < 0 ? 2 : index + 1);
        *out = &l->devs[index];
        return TIDE_OK;
    }
    if (l->n == 0)
        return tide_seterr(TIDE_EDEVICE,
                           "device: %s is not available: %s; use tide.best_device() or \"cpu\"",
                           l->upper, l->reason);
    if (index < 0 || index >= l->n)
        return tide_seterr(TIDE_EDEVICE,
                           "device: %s:%d does not exist: there %s %d %s device%s (%s:0 to %s:%d); "
                           "see tide.devices()",
                           l->name, index, l->n == 1 ? "is" : "are", l->n, l->upper,
                           l->n == 1 ? "" : "s", l->name, l->name, l->n - 1);
    *out = &l->devs[index];
    return TIDE_OK;
}

/* "use "cpu", "cpu:N", "cuda" or "cuda:N"": every line's two forms */
static void device_forms(char *buf, size_t n) {
    int k = tide_device_type_count();
    snprintf(buf, n, "use");
    for (int i = 0; i < k; i++) {
        size_t used = strlen(buf);
        snprintf(buf + used, n - used, "%s\"%.11s\"%s\"%.11s:N\"", i ? ", " : " ", lines[i].name,
                 i == k - 1 ? " or " : ", ", lines[i].name);
    }
}

tide_status tide_device_get(const char *spec, tide_device **out) {
    char forms[400];
    device_forms(forms, sizeof forms);
    if (!spec)
        return tide_seterr(TIDE_EINVAL, "device: no device given; %s", forms);
    const char *colon = strchr(spec, ':');
    size_t      len = colon ? (size_t)(colon - spec) : strlen(spec);
    int         k = tide_device_type_count(), type = -1;
    for (int i = 0; i < k && type < 0; i++)
        if (strlen(lines[i].name) == len && strncmp(spec, lines[i].name, len) == 0)
            type = i;
    if (type < 0)
        return tide_seterr(TIDE_EINVAL, "device: unknown device \"%.64s\"; %s", spec, forms);
    long index = 0;
    if (colon) {
        index = parse_count(colon + 1);
        if (index < 0 || index > 100000)
            return tide_seterr(TIDE_EINVAL,
                               "device: bad device index in \"%.64s\"; %s (N a number from 0)",
                               spec, forms);
    }
    return tide_device_get_index((tide_device_type)type, (int)index, out);
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
    tide_backend_line *l = line_load(type);
    return l ? l->n : 0;
}

int tide_device_is_host(const tide_device *dev) {
    return dev == &lines[TIDE_DEVICE_CPU].devs[0];
}

/* a backend entry whose NULL means nothing to do (nothing to wait for, all-zero counters, nothing
 * to say): TIDE_OK then, else the entry's status, named after it */
#define OPTIONAL_ENTRY(dev, entry, args)                                                           \
    ((dev)->backend->entry ? entry_status((dev)->backend->entry args, #entry) : TIDE_OK)

static tide_status entry_status(tide_status st, const char *entry) {
    return st == TIDE_OK ? st : tide_err_op(st, entry);
}

tide_status tide_device_synchronize(tide_device *dev) {
    return OPTIONAL_ENTRY(dev, synchronize, (dev));
}

tide_status tide_device_memory_stats(tide_device *dev, tide_memory_stats *out) {
    memset(out, 0, sizeof *out);
    return OPTIONAL_ENTRY(dev, memory_stats, (dev, out));
}

tide_status tide_device_empty_cache(tide_device *dev) {
    return OPTIONAL_ENTRY(dev, empty_cache, (dev));
}

tide_status tide_device_get_info(tide_device *dev, tide_device_info *out) {
    memset(out, 0, sizeof *out);
    return OPTIONAL_ENTRY(dev, device_info, (dev, out));
}

/* the CPU's info (cpu:0's: every CPU device runs on the same pool and BLAS) */
static tide_device_info cpu_info(void) {
    tide_device_info info = {NULL, 0};
    tide_init();
    tide_device_get_info(&lines[TIDE_DEVICE_CPU].devs[0], &info);
    return info;
}

const char *tide_cpu_blas_core(void) {
    return cpu_info().blas_core;
}

int tide_cpu_threads(void) {
    return cpu_info().threads;
}

/* The one "not implemented" answer, for a backend entry or kernel row a device's backend lacks:
 * called from tide_backend_need (tide_impl.h) only. */
tide_status tide_notsup(const char *op, const tide_device *dev) {
    return tide_seterr(TIDE_ENOTSUP, "%s: not implemented on %s", op, dev->name);
}
