/*
 * tide_impl.h — the structs shared inside the core (src/*.c).
 *
 * Core only (atomics): backends include backend.h instead.
 */
#ifndef TIDE_IMPL_H
#define TIDE_IMPL_H

#include "backend.h"
#include <stdatomic.h>
#include <stdbool.h>

/* ---- errors ------------------------------------------------------------------------------- */

#define TIDE_TRY(expr)                                                                             \
    do {                                                                                           \
        tide_status st_ = (expr);                                                                  \
        if (st_ != TIDE_OK)                                                                        \
            return st_;                                                                            \
    } while (0)

/* ---- core structs ------------------------------------------------------------------------- */

struct tide_ctx {
    atomic_int          refs;
    atomic_uint_fast64_t mem_in_use;
    size_t              mem_limit;
    tide_guard          guard;
    uint64_t            seed, rng_offset;
    tide_transfer_stats stats;
    void (*log)(void *ud, const char *msg);
    void *log_ud;
};

typedef struct tide_storage {
    atomic_int   refs;
    tide_device *dev;
    tide_ctx    *ctx; /* charged for the bytes; retained */
    void        *data;
    size_t       nbytes;
    void (*deleter)(void *ud); /* from_blob: the host's; NULL: the device allocator owns data */
    void *deleter_ud;
    bool  external;
    bool  pinned; /* data from the CUDA backend's alloc_pinned */
} tide_storage;

struct tide_tensor {
    atomic_int    refs;
    tide_storage *storage;
    tide_dtype    dtype;
    int           ndim;
    int64_t       shape[TIDE_MAX_DIMS];
    int64_t       strides[TIDE_MAX_DIMS];
    int64_t       offset;
};

/* internal helpers shared by the core files */
tide_ctx   *tide_ctx_or_default(tide_ctx *ctx);
tide_status tide_storage_new(tide_ctx *ctx, tide_device *dev, size_t nbytes, tide_storage **out);
void        tide_storage_release(tide_storage *s);
tide_kview  tide_kview_of(const tide_tensor *t);
tide_status tide_shape_numel(int ndim, const int64_t *shape, int64_t *numel); /* overflow-checked */
void        tide_contiguous_strides(int ndim, const int64_t *shape, int64_t *strides);
/* records a copy of nbytes from src to dst device in the ctx's stats */
void        tide_count_transfer(tide_ctx *ctx, const tide_device *src, const tide_device *dst,
                                size_t nbytes);
/* byte copy between any two devices (staging through the host when no direct path) */
tide_status tide_copy_bytes(tide_device *dst_dev, void *dst, tide_device *src_dev,
                            const void *src, size_t nbytes, int non_blocking);

#endif /* TIDE_IMPL_H */
