/* nccl.c — an emulated libnccl for the CPU: the part of NCCL's API that src/dist/nccl.c calls,
 * carried out over MPI on the emulated CUDA runtime's device memory (host memory there, and every
 * kernel has finished when its call returns, so stream order holds trivially).
 *
 * The test suite builds it as build/nccl-emu/libnccl.so and runs the collectives specs under
 * mpirun with TIDE_NCCL_LIBRARY pointing here and TIDE_CUDA_LIB at the emulated CUDA backend:
 * CUDA tensors then take tide's NCCL path end to end (the plug-in, the core's dispatch, the
 * bootstrap of the unique id) on a machine without a GPU. What it cannot show: NCCL's own
 * kernels, timing, and float16/bfloat16 reductions (refused with ncclInvalidArgument). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum {
    ncclSuccess = 0,
    ncclInternalError = 3,
    ncclInvalidArgument = 4,
    ncclInvalidUsage = 5
} ncclResult_t;
typedef struct ncclComm {
    int nranks, rank;
} * ncclComm_t;
typedef struct {
    char internal[128];
} ncclUniqueId;
typedef enum { ncclSum = 0, ncclProd = 1, ncclMax = 2, ncclMin = 3, ncclAvg = 4 } ncclRedOp_t;
typedef enum {
    ncclInt8 = 0,
    ncclUint8 = 1,
    ncclInt32 = 2,
    ncclUint32 = 3,
    ncclInt64 = 4,
    ncclUint64 = 5,
    ncclFloat16 = 6,
    ncclFloat32 = 7,
    ncclFloat64 = 8,
    ncclBfloat16 = 9
} ncclDataType_t;
typedef void *cudaStream_t;

#define EXPORT __attribute__((visibility("default")))

EXPORT const char  *ncclGetErrorString(ncclResult_t r);
EXPORT ncclResult_t ncclGetUniqueId(ncclUniqueId *id);
EXPORT ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank);
EXPORT ncclResult_t ncclCommDestroy(ncclComm_t comm);
EXPORT ncclResult_t ncclAllReduce(const void *s, void *r, size_t n, ncclDataType_t t,
                                  ncclRedOp_t op, ncclComm_t c, cudaStream_t st);
EXPORT ncclResult_t ncclBroadcast(const void *s, void *r, size_t n, ncclDataType_t t, int root,
                                  ncclComm_t c, cudaStream_t st);
EXPORT ncclResult_t ncclAllGather(const void *s, void *r, size_t n, ncclDataType_t t, ncclComm_t c,
                                  cudaStream_t st);
EXPORT ncclResult_t ncclReduceScatter(const void *s, void *r, size_t n, ncclDataType_t t,
                                      ncclRedOp_t op, ncclComm_t c, cudaStream_t st);

const char *ncclGetErrorString(ncclResult_t r) {
    switch (r) {
    case ncclSuccess:
        return "no error";
    case ncclInvalidArgument:
        return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case ncclInvalidUsage:
        return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    default:
        return "internal error - please report this issue to the NCCL developers";
    }
}

static int emu_type(ncclDataType_t t, MPI_Datatype *out) {
    switch (t) {
    case ncclUint8:
        *out = MPI_UINT8_T;
        return 1;
    case ncclInt32:
        *out = MPI_INT32_T;
        return 1;
    case ncclInt64:
        *out = MPI_INT64_T;
        return 1;
    case ncclFloat32:
        *out = MPI_FLOAT;
        return 1;
    case ncclFloat64:
        *out = MPI_DOUBLE;
        return 1;
    default:
        fprintf(stderr, "nccl emu: datatype %d is not emulated\n", (int)t);
        return 0;
    }
}

static int emu_op(ncclRedOp_t op, MPI_Op *out) {
    switch (op) {
    case ncclSum:
    case ncclAvg:
        *out = MPI_SUM;
        return 1;
    case ncclMax:
        *out = MPI_MAX;
        return 1;
    case ncclMin:
        *out = MPI_MIN;
        return 1;
    default:
        fprintf(stderr, "nccl emu: op %d is not emulated\n", (int)op);
        return 0;
    }
}

static void average(void *buf, size_t n, ncclDataType_t t, int nranks) {
    if (t == ncclFloat32)
        for (size_t i = 0; i < n; i++)
            ((float *)buf)[i] /= (float)nranks;
    else if (t == ncclFloat64)
        for (size_t i = 0; i < n; i++)
            ((double *)buf)[i] /= (double)nranks;
}

/* the id is random bytes: all that NCCL promises is that the ranks agree on it */
ncclResult_t ncclGetUniqueId(ncclUniqueId *id) {
    for (size_t i = 0; i < sizeof id->internal; i++)
        id->internal[i] = (char)(rand() & 0xff);
    id->internal[0] = 'E';
    return ncclSuccess;
}

ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank) {
    int size = 0, me = -1, inited = 0;
    MPI_Initialized(&inited);
    if (!inited || id.internal[0] != 'E')
        return ncclInvalidUsage; /* the emulation rides the job's MPI */
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (nranks != size || rank != me || !comm)
        return ncclInvalidArgument;
    /* every rank must hold the same id, as NCCL's bootstrap requires */
    char root[sizeof id.internal];
    memcpy(root, id.internal, sizeof root);
    MPI_Bcast(root, (int)sizeof root, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (memcmp(root, id.internal, sizeof root) != 0)
        return ncclInvalidUsage;
    *comm = malloc(sizeof **comm);
    if (!*comm)
        return ncclInternalError;
    (*comm)->nranks = nranks;
    (*comm)->rank = rank;
    return ncclSuccess;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
    free(comm);
    return ncclSuccess;
}

ncclResult_t ncclAllReduce(const void *s, void *r, size_t n, ncclDataType_t t, ncclRedOp_t op,
                           ncclComm_t c, cudaStream_t st) {
    (void)st;
    MPI_Datatype mt;
    MPI_Op       mo;
    if (!c || !emu_type(t, &mt) || !emu_op(op, &mo))
        return ncclInvalidArgument;
    if (MPI_Allreduce(s == r ? MPI_IN_PLACE : s, r, (int)n, mt, mo, MPI_COMM_WORLD) != MPI_SUCCESS)
        return ncclInternalError;
    if (op == ncclAvg)
        average(r, n, t, c->nranks);
    return ncclSuccess;
}

ncclResult_t ncclBroadcast(const void *s, void *r, size_t n, ncclDataType_t t, int root,
                           ncclComm_t c, cudaStream_t st) {
    (void)st;
    MPI_Datatype mt;
    if (!c || !emu_type(t, &mt) || root < 0 || root >= c->nranks)
        return ncclInvalidArgument;
    if (s != r && c->rank == root)
        memcpy(r, s, n * (size_t)(t == ncclFloat64 || t == ncclInt64 ? 8 : t == ncclUint8 ? 1 : 4));
    return MPI_Bcast(r, (int)n, mt, root, MPI_COMM_WORLD) == MPI_SUCCESS ? ncclSuccess
                                                                         : ncclInternalError;
}

ncclResult_t ncclAllGather(const void *s, void *r, size_t n, ncclDataType_t t, ncclComm_t c,
                           cudaStream_t st) {
    (void)st;
    MPI_Datatype mt;
    if (!c || !emu_type(t, &mt))
        return ncclInvalidArgument;
    return MPI_Allgather(s, (int)n, mt, r, (int)n, mt, MPI_COMM_WORLD) == MPI_SUCCESS
               ? ncclSuccess
               : ncclInternalError;
}

ncclResult_t ncclReduceScatter(const void *s, void *r, size_t n, ncclDataType_t t, ncclRedOp_t op,
                               ncclComm_t c, cudaStream_t st) {
    (void)st;
    MPI_Datatype mt;
    MPI_Op       mo;
    if (!c || !emu_type(t, &mt) || !emu_op(op, &mo))
        return ncclInvalidArgument;
    if (MPI_Reduce_scatter_block(s, r, (int)n, mt, mo, MPI_COMM_WORLD) != MPI_SUCCESS)
        return ncclInternalError;
    if (op == ncclAvg)
        average(r, n, t, c->nranks);
    return ncclSuccess;
}
