/*
 * plugin.h — the one loader of tide's plug-ins (src/plugin.c): the backends of the device
 * registry (tide_plugin_load, src/registry.h) and the collective back ends of src/dist.c both
 * open their library with tide_plugin_open. Core only.
 */
#ifndef TIDE_PLUGIN_H
#define TIDE_PLUGIN_H

#include <stddef.h>

/* what to find in a plug-in, and the names its messages use */
typedef struct tide_plugin_spec {
    const char *what;      /* "the CUDA backend": "<what> could not be loaded: ..." */
    const char *entry;     /* the function the caller wants: "tide_dist_mpi_open" */
    const char *abi_entry; /* NULL, or an int (void) giving the plug-in's backend ABI version,
                            * which must equal abi */
    const char *kind;      /* "CUDA backend": "<path> is a <kind> of another tide (...)" */
    int         abi;
} tide_plugin_spec;

/* Opens the library at path (RTLD_NOW | RTLD_LOCAL), finds spec->entry and, with
 * spec->abi_entry, checks the library's ABI version; returns the entry, or NULL with the reason
 * (what unavailable_reason() tells the user) in reason[0..n). A library opened stays loaded:
 * unloading GPU and MPI runtimes is fragile. */
void *tide_plugin_open(const char *path, const tide_plugin_spec *spec, char *reason, size_t n);

/* the directory of the object holding the core (libtide.so, core.so, or the host executable)
 * as it was loaded (dir) and with links resolved (real_dir); "." when unknown */
void tide_plugin_core_dir(char *dir, char *real_dir, size_t n);

#endif /* TIDE_PLUGIN_H */
