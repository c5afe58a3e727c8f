/*
 * dist_plugin.h — the interface between the core (src/dist.c) and the collective plug-ins
 * (src/dist/mpi.c -> libtide_mpi.so, src/dist/nccl.c -> libtide_nccl.so).
 *
 * A plug-in cannot link against the core's symbols (Lua may load the core RTLD_LOCAL), so the core
 * hands it tide_seterr and, for NCCL, a bootstrap broadcast over MPI. Buffers arrive contiguous
 * and checked; counts are in elements. Plain C: the emulated NCCL is built by the host compiler.
 */
#ifndef TIDE_DIST_PLUGIN_H
#define TIDE_DIST_PLUGIN_H
#include "backend.h"
#include "tide_dist.h"
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TIDE_DIST_PLUGIN_ABI 1
#define TIDE_DIST_MPI_ENTRY  "tide_dist_mpi_open"
#define TIDE_DIST_NCCL_ENTRY "tide_dist_nccl_open"

typedef struct tide_dist_host {
    int rank, world, local_rank; /* the job, as MPI started it (for NCCL) */
    /* rank root's bytes to every rank (MPI): how NCCL shares its unique id */
    tide_status (*bootstrap_bcast)(void *buf, size_t bytes, int root);
} tide_dist_host;

typedef struct tide_dist_plugin {
    int         abi; /* TIDE_DIST_PLUGIN_ABI */
    const char *name;
    /* MPI: starts MPI (host NULL) and fills rank, world, local_rank. NCCL: makes the communicator
     * of host's job on the current CUDA device, and fills them back from host. */
    tide_status (*init)(const tide_dist_host *host, int *rank, int *world, int *local_rank);
    /* stream: the device's stream for NCCL, NULL for MPI. req non-NULL: start only (MPI), the
     * request to pass to wait; NCCL sets *req = NULL (stream order is its completion) */
    tide_status (*all_reduce)(void *buf, size_t count, tide_dtype dt, tide_dist_op op, void *stream,
                              void **req);
    tide_status (*wait)(void *req);
    tide_status (*broadcast)(void *buf, size_t count, tide_dtype dt, int root, void *stream);
    /* recv holds world * count elements, rank r's at r * count */
    tide_status (*all_gather)(const void *send, void *recv, size_t count, tide_dtype dt,
                              void *stream);
    /* send holds world * recvcount elements */
    tide_status (*reduce_scatter)(const void *send, void *recv, size_t recvcount, tide_dtype dt,
                                  tide_dist_op op, void *stream);
    tide_status (*barrier)(void);
    tide_status (*finalize)(void);
} tide_dist_plugin;

/* A plug-in's table: each entry the plug-in's own static function of that name */
#define TIDE_DIST_PLUGIN_TABLE(plugin_name)                                                        \
    {                                                                                              \
        .abi = TIDE_DIST_PLUGIN_ABI, .name = plugin_name, .init = init, .all_reduce = all_reduce,  \
        .wait = wait, .broadcast = broadcast, .all_gather = all_gather,                            \
        .reduce_scatter = reduce_scatter, .barrier = barrier, .finalize = finalize,                \
    }

/* in a plug-in: returns fail(call, code) when expr's code is not ok (MPI_TRY, NCCL_TRY) */
#define TIDE_DIST_TRY(ok, fail, call, expr)                                                        \
    do {                                                                                           \
        __typeof__(expr) code_ = (expr);                                                           \
        if (code_ != (ok))                                                                         \
            return fail(call, code_);                                                              \
    } while (0)

/* The one exported function of each plug-in: loads its engine (libmpi, libnccl) and fills *out,
 * or returns non-OK with the reason set through seterr. */
typedef tide_status (*tide_dist_open_fn)(tide_seterr_fn seterr, const tide_dist_plugin **out);

#ifdef __cplusplus
}
#endif
#endif /* TIDE_DIST_PLUGIN_H */
