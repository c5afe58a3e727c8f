/*
 * tide_impl.h — the structs shared inside the core (the src/ C files).
 *
 * Core only (atomics): backends include backend.h instead.
 */
#ifndef TIDE_IMPL_H
#define TIDE_IMPL_H

#include "backend.h"
#include "shape.h"
#include <stdatomic.h>
#include <stdbool.h>

/* ---- backend entries: the one "not implemented" answer ------------------------------------ */

/* TIDE_ENOTSUP "<op>: not implemented on <device>" (device.c): called by tide_backend_need only */
tide_status tide_notsup(const char *op, const tide_device *dev)
#if defined(__GNUC__)
    __attribute__((cold))
#endif
    ;

/* Every call of a backend's compute entry or kernel row asks here first: TIDE_OK when dev's
 * backend has it (have), else the one answer above. The compute entries ask through their
 * tide_entry_<name> below; kernel rows (tide_kernel_run) and an entry handed on as a pointer
 * (tide_pick_into, tide_source_for) with fn != NULL. */
static inline tide_status tide_backend_need(bool have, const char *op, const tide_device *dev) {
    return have ? TIDE_OK : tide_notsup(op, dev);
}

/* tide_entry_<name>(dev, op, &fn): fn = the compute entry <name> of dev's backend
 * (src/backend_entries.def), or TIDE_ENOTSUP naming op when the backend has none. One load and
 * one branch, as a hand-written NULL check. */
#define E(name, cpu, cuda, params)                                                                 \
    static inline tide_status tide_entry_##name(const tide_device *dev, const char *op,            \
                                                tide_entry_##name##_fn *fn) {                      \
        *fn = dev->backend->name;                                                                  \
        return tide_backend_need(*fn != NULL, op, dev);                                            \
    }
#include "backend_entries.def"
#undef E

/* The 1-based index a caller gave, for the 0-based value v a range check refused (for its
 * message): the binding subtracts 1 in the index's own dtype, wrapping, so 1 is added back the
 * same way (in unsigned arithmetic, which cannot overflow) and read in that dtype.
 * math.mininteger arrives as INT64_MAX and is named as given, as is an int32 index's INT32_MIN. */
static inline long long tide_index_1based(int64_t v, tide_dtype dt) {
    uint64_t u = (uint64_t)v + 1u;
    return dt == TIDE_DTYPE_I32 ? (long long)(int32_t)(uint32_t)u : (long long)(int64_t)u;
}

/* ---- core structs ------------------------------------------------------------------------- */

struct tide_ctx {
    atomic_int           refs;
    atomic_uint_fast64_t mem_in_use;
    atomic_uint_fast64_t mem_allocated; /* every storage's bytes, a running total (profiler) */
    size_t               mem_limit;
    tide_guard           guard;
    uint64_t             seed, rng_offset;
    tide_transfer_stats  stats;
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
    /* the backend that allocated data, which frees it (NULL: external); for pinned host memory
     * the backend whose alloc_pinned made it, not the cpu device's */
    const tide_backend  *allocator;
    bool                 pinned;  /* data from allocator->alloc_pinned */
    atomic_uint_fast64_t version; /* in-place writes so far (tide_tensor_version) */
    /* a device still copying into this (pinned host) storage after a non-blocking to("cpu"):
     * synchronized, then cleared, before the host touches the data (tide_storage_settle); atomic
     * because any thread may be the first to touch it */
    _Atomic(tide_device *) in_flight;
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

/* a and b have the same shape */
static inline bool tide_same_shape(const tide_tensor *a, const tide_tensor *b) {
    if (a->ndim != b->ndim)
        return false;
    for (int i = 0; i < a->ndim; i++)
        if (a->shape[i] != b->shape[i])
            return false;
    return true;
}

/* internal helpers shared by the core files */
tide_ctx   *tide_ctx_or_default(tide_ctx *ctx);
tide_status tide_storage_new(tide_ctx *ctx, tide_device *dev, size_t nbytes, tide_storage **out);
void        tide_storage_release(tide_storage *s);
/* waits for a copy still running into s (in_flight); see tide_tensor_data */
void tide_storage_settle(tide_storage *s);
/* an uninitialised host tensor in pinned memory from backend be (be->alloc_pinned non-NULL) */
tide_status tide_tensor_alloc_pinned(tide_ctx *ctx, const char *op, const tide_backend *be,
                                     tide_dtype dt, int ndim, const int64_t *shape,
                                     tide_tensor **out);
/* fn(arg) when the calling thread exits (thread_exit.c); false when that cannot be arranged,
 * and then the caller must not keep per-thread resources */
bool tide_at_thread_exit(void (*fn)(void *), void *arg);
/* a storage's reference to its context (ctx.c: taken in batches per thread, without atomics) */
void tide_ctx_retain_storage(tide_ctx *ctx);
void tide_ctx_release_storage(tide_ctx *ctx);
/* the calling thread's cache of freed tensor + storage headers (storage.c): flushed with the CPU
 * allocator's cache (tide_device_empty_cache of any CPU device); the count is for tests */
void tide_storage_cache_flush(void);
int  tide_storage_cache_count(void);
/* tide_tensor_empty for a creation function op (full, rand, ...): its errors are op's */
tide_status tide_tensor_empty_for(tide_ctx *ctx, const char *op, tide_device *dev, tide_dtype dt,
                                  int ndim, const int64_t *shape, tide_tensor **out);
/* a clone made inside op: its errors are op's ("tide: add_: CUDA out of memory ...") */
tide_status tide_clone_for(tide_ctx *ctx, const char *op, const tide_tensor *t, tide_tensor **out);

/* ---- the indexing ops' shared helpers (index_common.c; ops_index.c and ops_gather.c) ------- */

/* index (int64 or int32, any shape) as an int64 tensor whose values lie in [0, size), else
 * EINDEX naming the bad 1-based index and dim; the check reads the values on the host (an
 * internal copy, not a user transfer). Contiguous, but where index is expanded (stride 0 over
 * several elements): the same expansion of the contiguous elements it holds */
tide_status tide_index_prepare(tide_ctx *ctx, const char *op, const tide_tensor *index, int dim,
                               int64_t size, tide_tensor **out);
/* torch.unique of a CPU tensor's elements by a hash table of the distinct values
 * (unique_hash.c): outputs as tide_unique's for dim TIDE_ALL_DIMS; TIDE_ENOTSUP, nothing made
 * and no error set, for another device or dtype, a NaN, or too many distinct values */
tide_status tide_unique_hashed(tide_ctx *ctx, const tide_tensor *a, tide_tensor **values,
                               tide_tensor **inverse, tide_tensor **counts);
/* the kernel of gather and index_select: out = the elements of a that ix picks along dim */
typedef tide_status (*tide_pick_fn)(tide_device *dev, const tide_kview *out, const tide_kview *a,
                                    int dim, const tide_kview *ix);
/* t's view as a kernel sees it: a 0-d tensor as 1-d of one element */
tide_kview tide_kview_1d(const tide_tensor *t);
/* *out, prepared as (ndim, shape), = fn(a, dim, ix) (fn: the backend's gather or index_select
 * entry; NULL: tide_backend_need's ENOTSUP; 0-d views passed as 1-d); releases ix */
tide_status tide_pick_into(tide_ctx *ctx, const char *op, tide_pick_fn fn, const tide_tensor *a,
                           int dim, tide_tensor *ix, int ndim, const int64_t *shape,
                           tide_tensor **out);
/* For a kernel that writes dst while it reads src (scatter_, index_add_) over n elements: *out
 * stays NULL when n is 0 (nothing to do); else dst's backend has the entry (have:
 * tide_backend_need) and *out is src in dst's dtype, a copy when src shares dst's memory */
tide_status tide_source_for(tide_ctx *ctx, const char *op, bool have, int64_t n,
                            const tide_tensor *src, const tide_tensor *dst, tide_tensor **out);
/* the end of such an op: cs and ix released, dst marked written when st is TIDE_OK; returns st */
tide_status tide_written_through(tide_status st, tide_tensor *dst, tide_tensor *cs,
                                 tide_tensor *ix);

/* fill_ without counting the write: for tensors the op itself made (ops.c) */
tide_status tide_fill_for(tide_ctx *ctx, const char *op, tide_tensor *t, tide_scalar value);
/* copy_ without counting the write: for filling tensors the op itself made (transfer.c) */
tide_status tide_copy_into(tide_ctx *ctx, tide_tensor *dst, const tide_tensor *src);
/* t's storage is about to be written in place: its version goes up by one */
void tide_mark_written(tide_tensor *t);
/* TIDE_EINVAL naming op when t is an expanded view (stride 0 over more than one element): a
 * write would land several values on one element. Every in-place entry checks it first. */
tide_status tide_check_writable(const char *op, const tide_tensor *t);
tide_kview  tide_kview_of(const tide_tensor *t);
/* contiguous copies (or new references) of n tensors, NULL entries staying NULL; on failure
 * none is kept. tide_release_all releases n (NULL skipped) and clears the slots. */
tide_status tide_contiguous_all(tide_ctx *ctx, int n, const tide_tensor *const *in,
                                tide_tensor **out);
void        tide_release_all(int n, tide_tensor **t);
/* from_blob's checks of memory a host hands over, with op's name in the messages */
tide_status tide_blob_check(const char *op, const void *data, tide_dtype dt, int ndim,
                            const int64_t *shape, const int64_t *strides);
/* records a copy of nbytes from src to dst device in the ctx's stats */
void tide_count_transfer(tide_ctx *ctx, const tide_device *src, const tide_device *dst,
                         size_t nbytes);
/* byte copy between any two devices (staging through the host when no direct path) */
tide_status tide_copy_bytes(tide_device *dst_dev, void *dst, tide_device *src_dev, const void *src,
                            size_t nbytes, int non_blocking);
/* t's elements, contiguous, in a malloc'd host array the caller frees: an internal copy (not a
 * user transfer), for values that decide a result's size (masked_select, nonzero, unique) */
tide_status tide_read_host(tide_ctx *ctx, const char *op, const tide_tensor *t, void **out);
/* the same of a contiguous c, the failure unnamed (the caller may name it with tide_err_op) */
tide_status tide_host_copy(const char *op, const tide_tensor *c, void **out);

/* ---- the device registry (device.c) ------------------------------------------------------ */

/* tide_backend_set_library_path under the name of the public call api ("cuda_set_library_path") */
tide_status tide_backend_set_path_as(const char *api, tide_device_type type, const char *path);
/* the backend of the first registry line that is available and has pinned memory, or ENOTSUP
 * naming op and why each line could not serve */
tide_status tide_pinned_backend(const char *op, const tide_backend **out);
/* the device type of DLPack device type dl_code: 1 (*type set), 2 when it is a backend's pinned
 * host memory (*type cpu), 0 when no registry line has it */
int tide_device_type_of_dlpack(int dl_code, tide_device_type *type);
int tide_device_dlpack_code(const tide_device *dev); /* its line's DLPack code; 0: none */

/* ---- core-internal helpers (core role; shared by the core files only) ------------------------ */

/* makes the thread-local message read "tide: <op>: ..." (allocator and backend messages) */
tide_status tide_err_op(tide_status st, const char *op);
/* TIDE_EDEVICE "expected all tensors on the same device ..." unless a and b share a device */
tide_status tide_check_same_device(const char *op, const tide_tensor *a, const tide_tensor *b);
tide_dtype  tide_promote(tide_dtype a, tide_dtype b);
/* the dtype two tensor operands compute in, PyTorch's rule: a 0-d tensor beside one with dims
 * counts as a scalar of its dtype, setting the result only when of a higher kind */
tide_dtype tide_promote_operands(const tide_tensor *a, const tide_tensor *b);
/* *dim, negative counting from the end, made 0-based in [0, ndim), else EINDEX with 1-based dims
 * (tensor.c); _0d: a 0-d tensor takes dim 1 or -1 as a 1-d one does */
tide_status tide_norm_dim(const char *op, int *dim, int ndim);
tide_status tide_norm_dim_0d(const char *op, int *dim, int ndim);
tide_status tide_broadcast_shape(const char *op, int an, const int64_t *as, int bn,
                                 const int64_t *bs, int *on, int64_t *os);
/* kview of t broadcast to (ndim, shape): stride 0 on expanded dims; shapes already checked */
tide_kview tide_kview_expand(const tide_tensor *t, int ndim, const int64_t *shape);
/* a new contiguous tensor; errors carry op's name */
tide_status tide_tensor_alloc(tide_ctx *ctx, const char *op, tide_device *dev, tide_dtype dt,
                              int ndim, const int64_t *shape, tide_tensor **out);
/* *out NULL: allocate (sets *created); else check its device, dtype and shape */
/* an op given or making *out failed after tide_prepare_out: releases what it made, or takes
 * back the write it counted on the output it was given */
void        tide_out_failed(tide_tensor **out, bool created);
tide_status tide_prepare_out(tide_ctx *ctx, const char *op, tide_device *dev, tide_dtype dt,
                             int ndim, const int64_t *shape, tide_tensor **out, bool *created);
/* t in dtype dt on its device: t retained when it already is, else a converted copy */
tide_status tide_cast(tide_ctx *ctx, const char *op, const tide_tensor *t, tide_dtype dt,
                      tide_tensor **out);
/* t in dtype dt and contiguous (tide_cast, then tide_tensor_contiguous) */
tide_status tide_cast_contiguous(tide_ctx *ctx, const char *op, const tide_tensor *t, tide_dtype dt,
                                 tide_tensor **out);
/* a view of t's storage with the given geometry */
tide_status tide_view_make(const tide_tensor *t, int ndim, const int64_t *shape,
                           const int64_t *strides, int64_t offset, tide_tensor **out);
/* tide_tensor_to with the op's name in messages (item, print) */
tide_status tide_transfer(tide_ctx *ctx, const char *op, const tide_tensor *t, tide_device *dev,
                          tide_dtype dt, int flags, tide_tensor **out);

#endif /* TIDE_IMPL_H */
