/*
 * registry.h — a line of the device registry (src/device.c) as the plug-in loader
 * (src/plugin.c) fills it. Core only.
 */
#ifndef TIDE_REGISTRY_H
#define TIDE_REGISTRY_H

#include "tide_impl.h"

#define TIDE_MAX_DEVICES 64 /* per backend */

/* One backend: the built-in cpu (line 0, no library) or a loadable one. The device type of a
 * line is its index. */
typedef struct tide_backend_line {
    char        name[12];         /* "cuda": devices "cuda" and "cuda:N" */
    char        upper[12];        /* "CUDA": in messages, and the $TIDE_CUDA_LIB variable */
    char        library[256];     /* "libtide_cuda.so", or a path */
    char        entry[64];        /* the exports <entry>_abi and <entry>_open */
    int         dl_code;          /* DLPack device type of its memory (0: none) */
    int         dl_host_code;     /* DLPack device type of its pinned host memory (0: none) */
    char        set_path[4096];   /* tide_backend_set_library_path */
    char        set_path_api[40]; /* the call that sets it, as messages name it */
    atomic_int  state;  /* 0: not looked up; 1: the lookup began (the path is fixed); 2: done */
    atomic_int  loaded; /* the backend is loaded and has devices */
    int         n;      /* devices found */
    char        reason[1024];
    tide_device devs[TIDE_MAX_DEVICES];
} tide_backend_line;

/* Finds, opens and checks line's library, then fills its devices (type: the line's index) or
 * its reason. Called once per line, under the registry's lock. */
void tide_plugin_load(tide_backend_line *l, tide_device_type type);

#endif /* TIDE_REGISTRY_H */
