/* mpi.c — the MPI plug-in, libtide_mpi.so: tide's collectives on CPU buffers over the job's
 * MPI_COMM_WORLD. Linked against libmpi (Debian's Open MPI); the core dlopens it on first use,
 * so a host without Open MPI still runs everything else. Exports tide_dist_mpi_open only. */
#include "dist_plugin.h"

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static tide_seterr_fn seterr;
static int            world = 1;

/* MPI's own message for code, with the call that failed */
static tide_status mpi_fail(const char *call, int code) {
    char msg[MPI_MAX_ERROR_STRING];
    int  len = 0;
    if (MPI_Error_string(code, msg, &len) != MPI_SUCCESS)
        snprintf(msg, sizeof msg, "error %d", code);
    return seterr(TIDE_EBACKEND, "%s failed: %s", call, msg);
}

#define MPI_TRY(call, expr) TIDE_DIST_TRY(MPI_SUCCESS, mpi_fail, call, expr)

/* MPI's type of dt (uint8 and bool are both bytes; MPI has no half types), and a count MPI takes
 * in one call */
static tide_status mpi_args(tide_dtype dt, size_t count, MPI_Datatype *out) {
    static const MPI_Datatype types[TIDE_DTYPE_COUNT] = {
        [TIDE_DTYPE_F32] = MPI_FLOAT,   [TIDE_DTYPE_F64] = MPI_DOUBLE,
        [TIDE_DTYPE_I32] = MPI_INT32_T, [TIDE_DTYPE_I64] = MPI_INT64_T,
        [TIDE_DTYPE_U8] = MPI_UINT8_T,  [TIDE_DTYPE_BOOL] = MPI_UINT8_T,
    };
    if (dt == TIDE_DTYPE_F16 || dt == TIDE_DTYPE_BF16)
        return seterr(TIDE_ENOTSUP,
                      "MPI has no %s type; convert the tensor with t:float() first (NCCL takes "
                      "float16 and bfloat16 CUDA tensors)",
                      dt == TIDE_DTYPE_F16 ? "float16" : "bfloat16");
    if (count > (size_t)INT32_MAX)
        return seterr(TIDE_ENOTSUP,
                      "%zu elements is more than MPI takes in one call (2^31 - 1); split the "
                      "tensor with narrow()",
                      count);
    *out = types[dt];
    return TIDE_OK;
}

static MPI_Op mpi_op(tide_dist_op op) {
    switch (op) {
    case TIDE_DIST_MAX:
        return MPI_MAX;
    case TIDE_DIST_MIN:
        return MPI_MIN;
    default:
        return MPI_SUM; /* MEAN: a sum, divided after */
    }
}

/* mean = sum / world, for the floating dtypes (the core refuses mean on the others) */
static void divide(void *buf, size_t count, tide_dtype dt) {
    if (dt == TIDE_DTYPE_F32) {
        float *p = buf, s = 1.0f / (float)world;
        for (size_t i = 0; i < count; i++)
            p[i] *= s;
    } else if (dt == TIDE_DTYPE_F64) {
        double *p = buf, s = 1.0 / (double)world;
        for (size_t i = 0; i < count; i++)
            p[i] *= s;
    }
}

static tide_status init(const tide_dist_host *host, int *rank, int *size, int *local) {
    (void)host;
    int inited = 0, provided = 0;
    MPI_Initialized(&inited);
    if (!inited)
        MPI_TRY("MPI_Init_thread", MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided));
    /* errors come back as codes, to be raised with the rank, instead of aborting the job */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_TRY("MPI_Comm_rank", MPI_Comm_rank(MPI_COMM_WORLD, rank));
    MPI_TRY("MPI_Comm_size", MPI_Comm_size(MPI_COMM_WORLD, size));
    world = *size;
    MPI_Comm node;
    MPI_TRY("MPI_Comm_split_type",
            MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, *rank, MPI_INFO_NULL, &node));
    MPI_Comm_rank(node, local);
    MPI_Comm_free(&node);
    return TIDE_OK;
}

/* a started reduction: mean's division waits for the end (wait) */
struct started {
    MPI_Request req;
    void       *buf;
    size_t      mean_count; /* 0: not a mean */
    tide_dtype  dt;
};

static tide_status all_reduce(void *buf, size_t count, tide_dtype dt, tide_dist_op op, void *stream,
                              void **req) {
    (void)stream;
    MPI_Datatype t = MPI_DATATYPE_NULL;
    if (mpi_args(dt, count, &t) != TIDE_OK)
        return TIDE_ENOTSUP;
    if (req) {
        struct started *r = malloc(sizeof *r);
        if (!r)
            return seterr(TIDE_ENOMEM, "out of memory");
        *r = (struct started){MPI_REQUEST_NULL, buf, op == TIDE_DIST_MEAN ? count : 0, dt};
        int rc =
            MPI_Iallreduce(MPI_IN_PLACE, buf, (int)count, t, mpi_op(op), MPI_COMM_WORLD, &r->req);
        if (rc != MPI_SUCCESS) {
            free(r);
            return mpi_fail("MPI_Iallreduce", rc);
        }
        *req = r;
        return TIDE_OK;
    }
    MPI_TRY("MPI_Allreduce",
            MPI_Allreduce(MPI_IN_PLACE, buf, (int)count, t, mpi_op(op), MPI_COMM_WORLD));
    if (op == TIDE_DIST_MEAN)
        divide(buf, count, dt);
    return TIDE_OK;
}

static tide_status wait(void *req) {
    struct started *r = req;
    int             rc = MPI_Wait(&r->req, MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS && r->mean_count)
        divide(r->buf, r->mean_count, r->dt);
    free(r);
    if (rc != MPI_SUCCESS)
        return mpi_fail("MPI_Wait", rc);
    return TIDE_OK;
}

static tide_status broadcast(void *buf, size_t count, tide_dtype dt, int root, void *stream) {
    (void)stream;
    MPI_Datatype t = MPI_DATATYPE_NULL;
    if (mpi_args(dt, count, &t) != TIDE_OK)
        return TIDE_ENOTSUP;
    MPI_TRY("MPI_Bcast", MPI_Bcast(buf, (int)count, t, root, MPI_COMM_WORLD));
    return TIDE_OK;
}

static tide_status all_gather(const void *send, void *recv, size_t count, tide_dtype dt,
                              void *stream) {
    (void)stream;
    MPI_Datatype t = MPI_DATATYPE_NULL;
    if (mpi_args(dt, count * (size_t)world, &t) != TIDE_OK)
        return TIDE_ENOTSUP;
    MPI_TRY("MPI_Allgather",
            MPI_Allgather(send, (int)count, t, recv, (int)count, t, MPI_COMM_WORLD));
    return TIDE_OK;
}

static tide_status reduce_scatter(const void *send, void *recv, size_t recvcount, tide_dtype dt,
                                  tide_dist_op op, void *stream) {
    (void)stream;
    MPI_Datatype t = MPI_DATATYPE_NULL;
    if (mpi_args(dt, recvcount * (size_t)world, &t) != TIDE_OK)
        return TIDE_ENOTSUP;
    MPI_TRY("MPI_Reduce_scatter_block",
            MPI_Reduce_scatter_block(send, recv, (int)recvcount, t, mpi_op(op), MPI_COMM_WORLD));
    if (op == TIDE_DIST_MEAN)
        divide(recv, recvcount, dt);
    return TIDE_OK;
}

static tide_status barrier(void) {
    MPI_TRY("MPI_Barrier", MPI_Barrier(MPI_COMM_WORLD));
    return TIDE_OK;
}

static tide_status finalize(void) {
    int done = 0;
    MPI_Finalized(&done);
    if (!done)
        MPI_TRY("MPI_Finalize", MPI_Finalize());
    return TIDE_OK;
}

static const tide_dist_plugin plugin = TIDE_DIST_PLUGIN_TABLE("mpi");

__attribute__((visibility("default"))) tide_status tide_dist_mpi_open(tide_seterr_fn           fn,
                                                                      const tide_dist_plugin **out);
tide_status tide_dist_mpi_open(tide_seterr_fn fn, const tide_dist_plugin **out) {
    seterr = fn;
    *out = &plugin;
    return TIDE_OK;
}
