/* nccl.c — the NCCL plug-in, libtide_nccl.so: tide's collectives on CUDA buffers, enqueued on the
 * tensor's device stream so that they run in order with tide's kernels.
 *
 * libnccl itself is opened with dlopen ($TIDE_NCCL_LIBRARY, else libnccl.so.2 on the library path,
 * else the CUDA toolkit's): the plug-in builds without it, and a host without it gets a reason.
 * The tests point $TIDE_NCCL_LIBRARY at an emulated NCCL (spec/nccl_emu/) that runs this file on
 * the CPU. Built against the toolkit's nccl.h when found, else against the declared subset below
 * (NCCL's ABI: enum values and the 128-byte unique id are stable across 2.x). */
#include "dist_plugin.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef TIDE_HAVE_NCCL_H
#include <nccl.h>
#else
typedef enum { ncclSuccess = 0 } ncclResult_t;
typedef struct ncclComm *ncclComm_t;
typedef struct {
    char internal[128];
} ncclUniqueId;
typedef enum { ncclSum = 0, ncclProd = 1, ncclMax = 2, ncclMin = 3, ncclAvg = 4 } ncclRedOp_t;
typedef enum {
    ncclUint8 = 1,
    ncclInt32 = 2,
    ncclInt64 = 4,
    ncclFloat16 = 6,
    ncclFloat32 = 7,
    ncclFloat64 = 8,
    ncclBfloat16 = 9
} ncclDataType_t;
typedef struct CUstream_st *cudaStream_t;
ncclResult_t                ncclGetUniqueId(ncclUniqueId *uniqueId);
ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank);
ncclResult_t ncclCommDestroy(ncclComm_t comm);
const char  *ncclGetErrorString(ncclResult_t result);
ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count,
                           ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                           cudaStream_t stream);
ncclResult_t ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count,
                           ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount,
                           ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount,
                               ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                               cudaStream_t stream);
#endif

#ifndef TIDE_NCCL_FALLBACK_DIR
#define TIDE_NCCL_FALLBACK_DIR "/usr/local/cuda/lib64"
#endif

/* the part of NCCL tide calls, resolved from the loaded library */
static struct {
    __typeof__(&ncclGetUniqueId)    get_unique_id;
    __typeof__(&ncclCommInitRank)   comm_init_rank;
    __typeof__(&ncclCommDestroy)    comm_destroy;
    __typeof__(&ncclGetErrorString) error_string;
    __typeof__(&ncclAllReduce)      all_reduce;
    __typeof__(&ncclBroadcast)      broadcast;
    __typeof__(&ncclAllGather)      all_gather;
    __typeof__(&ncclReduceScatter)  reduce_scatter;
} nccl;

static tide_seterr_fn seterr;
static ncclComm_t     comm;

static tide_status nccl_fail(const char *call, ncclResult_t r) {
    return seterr(TIDE_EBACKEND, "%s failed: %s", call, nccl.error_string(r));
}

#define NCCL_TRY(call, expr) TIDE_DIST_TRY(ncclSuccess, nccl_fail, call, expr)

/* NCCL's type of each dtype (uint8 and bool are both bytes) */
static const ncclDataType_t nccl_type[TIDE_DTYPE_COUNT] = {
    [TIDE_DTYPE_F32] = ncclFloat32, [TIDE_DTYPE_F64] = ncclFloat64,
    [TIDE_DTYPE_F16] = ncclFloat16, [TIDE_DTYPE_BF16] = ncclBfloat16,
    [TIDE_DTYPE_I32] = ncclInt32,   [TIDE_DTYPE_I64] = ncclInt64,
    [TIDE_DTYPE_U8] = ncclUint8,    [TIDE_DTYPE_BOOL] = ncclUint8,
};

static ncclRedOp_t nccl_op(tide_dist_op op) {
    switch (op) {
    case TIDE_DIST_MEAN:
        return ncclAvg;
    case TIDE_DIST_MAX:
        return ncclMax;
    case TIDE_DIST_MIN:
        return ncclMin;
    default:
        return ncclSum;
    }
}

static tide_status init(const tide_dist_host *host, int *rank, int *world, int *local) {
    ncclUniqueId id;
    memset(&id, 0, sizeof id);
    if (host->rank == 0)
        NCCL_TRY("ncclGetUniqueId", nccl.get_unique_id(&id));
    tide_status st = host->bootstrap_bcast(&id, sizeof id, 0);
    if (st != TIDE_OK)
        return st;
    NCCL_TRY("ncclCommInitRank", nccl.comm_init_rank(&comm, host->world, id, host->rank));
    *rank = host->rank;
    *world = host->world;
    *local = host->local_rank;
    return TIDE_OK;
}

static tide_status all_reduce(void *buf, size_t count, tide_dtype dt, tide_dist_op op, void *stream,
                              void **req) {
    if (req)
        *req = NULL; /* stream order is its completion */
    NCCL_TRY("ncclAllReduce", nccl.all_reduce(buf, buf, count, nccl_type[dt], nccl_op(op), comm,
                                              (cudaStream_t)stream));
    return TIDE_OK;
}

static tide_status wait(void *req) {
    (void)req;
    return TIDE_OK;
}

static tide_status broadcast(void *buf, size_t count, tide_dtype dt, int root, void *stream) {
    NCCL_TRY("ncclBroadcast",
             nccl.broadcast(buf, buf, count, nccl_type[dt], root, comm, (cudaStream_t)stream));
    return TIDE_OK;
}

static tide_status all_gather(const void *send, void *recv, size_t count, tide_dtype dt,
                              void *stream) {
    NCCL_TRY("ncclAllGather",
             nccl.all_gather(send, recv, count, nccl_type[dt], comm, (cudaStream_t)stream));
    return TIDE_OK;
}

static tide_status reduce_scatter(const void *send, void *recv, size_t recvcount, tide_dtype dt,
                                  tide_dist_op op, void *stream) {
    NCCL_TRY("ncclReduceScatter", nccl.reduce_scatter(send, recv, recvcount, nccl_type[dt],
                                                      nccl_op(op), comm, (cudaStream_t)stream));
    return TIDE_OK;
}

static tide_status barrier(void) {
    return TIDE_OK; /* the core's barrier is MPI's */
}

static tide_status finalize(void) {
    if (comm)
        nccl.comm_destroy(comm);
    comm = NULL;
    return TIDE_OK;
}

static const tide_dist_plugin plugin = TIDE_DIST_PLUGIN_TABLE("nccl");

/* libnccl: $TIDE_NCCL_LIBRARY, the library path, then the toolkit's directory */
static void *open_nccl(char *why, size_t n) {
    const char *env = getenv("TIDE_NCCL_LIBRARY");
    if (env && *env) {
        void *h = dlopen(env, RTLD_NOW | RTLD_LOCAL);
        if (!h)
            snprintf(why, n, "$TIDE_NCCL_LIBRARY (%.200s) could not be loaded: %.200s", env,
                     dlerror());
        return h;
    }
    void *h = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        h = dlopen(TIDE_NCCL_FALLBACK_DIR "/libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        snprintf(why, n,
                 "libnccl.so.2 was not found (on the library path nor in " TIDE_NCCL_FALLBACK_DIR
                 "); install NCCL (pip install nvidia-nccl-cu12 and add its lib directory to "
                 "LD_LIBRARY_PATH, or the system's libnccl2), or set TIDE_NCCL_LIBRARY");
    return h;
}

__attribute__((visibility("default"))) tide_status
            tide_dist_nccl_open(tide_seterr_fn fn, const tide_dist_plugin **out);
tide_status tide_dist_nccl_open(tide_seterr_fn fn, const tide_dist_plugin **out) {
    seterr = fn;
    *out = NULL;
    char  why[512];
    void *h = open_nccl(why, sizeof why);
    if (!h)
        return seterr(TIDE_EBACKEND, "%s", why);
#define LOAD(field, name)                                                                          \
    if (!(*(void **)&nccl.field = dlsym(h, name)))                                                 \
        return seterr(TIDE_EBACKEND,                                                               \
                      "the loaded libnccl has no " name "; install NCCL 2.10 or newer");
    LOAD(get_unique_id, "ncclGetUniqueId")
    LOAD(comm_init_rank, "ncclCommInitRank")
    LOAD(comm_destroy, "ncclCommDestroy")
    LOAD(error_string, "ncclGetErrorString")
    LOAD(all_reduce, "ncclAllReduce")
    LOAD(broadcast, "ncclBroadcast")
    LOAD(all_gather, "ncclAllGather")
    LOAD(reduce_scatter, "ncclReduceScatter")
#undef LOAD
    *out = &plugin;
    return TIDE_OK;
}
