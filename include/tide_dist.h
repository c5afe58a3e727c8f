/*
 * tide_dist.h — collectives across processes: MPI for CPU tensors, NCCL for CUDA tensors.
 *
 * Both engines are plug-ins (libtide_mpi.so, libtide_nccl.so next to the core, or at
 * $TIDE_MPI_LIB / $TIDE_NCCL_LIB) loaded on first use, as the CUDA backend is: a host without
 * them runs everything else, and tide_dist_unavailable_reason says what is missing. A program
 * started by `mpirun -np N` calls tide_dist_init once; every collective then dispatches on the
 * tensor's device (CPU: MPI, CUDA: NCCL) and never copies between them.
 *
 * Every rank must make the same collective calls in the same order. A call that waits longer than
 * the timeout (tide_dist_set_timeout, default 300 s; 0: none) for the other ranks prints which
 * rank and call waited and ends the process, so mpirun ends the job instead of hanging.
 */
#ifndef TIDE_DIST_H
#define TIDE_DIST_H
#include "tide.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tide_dist_backend {
    TIDE_DIST_MPI,  /* CPU tensors; also starts the job (ranks, NCCL's bootstrap) */
    TIDE_DIST_NCCL, /* CUDA tensors; needs MPI for the bootstrap */
    TIDE_DIST_AUTO  /* tide_dist_init: MPI, plus NCCL where it is available */
} tide_dist_backend;

typedef enum tide_dist_op {
    TIDE_DIST_SUM,
    TIDE_DIST_MEAN, /* floating dtypes only */
    TIDE_DIST_MAX,
    TIDE_DIST_MIN
} tide_dist_op;

/* never fail; load the plug-in on first use. NCCL is available when its plug-in and libnccl
 * load and CUDA has a device. */
int         tide_dist_is_available(tide_dist_backend b);
const char *tide_dist_unavailable_reason(tide_dist_backend b); /* NULL when available */

/* Starts the job's communicators (MPI_Init, NCCL's communicator when asked). Once per process. */
tide_status tide_dist_init(tide_dist_backend b);
int         tide_dist_is_initialized(void);
int         tide_dist_rank(void);                       /* 0-based; 0 before init */
int         tide_dist_world_size(void);                 /* 1 before init */
int         tide_dist_local_rank(void);                 /* rank among the processes of this host */
int         tide_dist_has_backend(tide_dist_backend b); /* initialized in this job */

void   tide_dist_set_timeout(double seconds); /* 0: wait forever */
double tide_dist_timeout(void);

/* In place on every rank: t <- op over the ranks' t. Same shape and dtype on every rank. */
tide_status tide_dist_all_reduce(tide_ctx *ctx, tide_tensor *t, tide_dist_op op);
/* Started now, finished by tide_dist_wait (which frees w); t must stay alive and untouched until
 * then. Every started reduction is waited for, in order. t must be contiguous. */
typedef struct tide_dist_work tide_dist_work;
tide_status tide_dist_all_reduce_start(tide_tensor *t, tide_dist_op op, tide_dist_work **w);
tide_status tide_dist_wait(tide_dist_work *w);
/* t <- rank src's t */
tide_status tide_dist_broadcast(tide_ctx *ctx, tide_tensor *t, int src);
/* *out: a new tensor of shape {world_size, t's shape...}: row r is rank r's t */
tide_status tide_dist_all_gather(tide_ctx *ctx, const tide_tensor *t, tide_tensor **out);
/* t's first dimension is split in world_size equal chunks; *out: chunk `rank` of op over the
 * ranks' t (shape {t.shape[0] / world_size, ...}) */
tide_status tide_dist_reduce_scatter(tide_ctx *ctx, const tide_tensor *t, tide_dist_op op,
                                     tide_tensor **out);
tide_status tide_dist_barrier(void);
/* ends the job's communicators (MPI_Finalize); collectives fail afterwards */
tide_status tide_dist_finalize(void);

#ifdef __cplusplus
}
#endif
#endif /* TIDE_DIST_H */
