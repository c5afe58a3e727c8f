/*
 * tide.h — the public C API of tide's core: dtypes, devices, tensors, ops.
 *
 * No Lua here: a C host uses this header alone (the Lua binding is one user of it).
 * Conventions:
 *   - Every fallible call returns a tide_status; results come back through out-parameters.
 *     On failure the message (starting "tide: <op>: ...") is in tide_errmsg(), a thread-local
 *     buffer, and no tensor has been changed.
 *   - Dims are 0-based here; the Lua binding converts from Lua's 1-based dims.
 *   - Output parameters `tide_tensor **out`: when *out is NULL the call allocates a new tensor
 *     (refcount 1, owned by the caller); when *out is non-NULL it is the destination and must
 *     have the result's shape, dtype and device (that is how in-place ops are written).
 *   - A tide_ctx holds what belongs to one user of tide (one lua_State, one host subsystem):
 *     transfer statistics, the transfer guard, the random generator, a memory limit. NULL means
 *     the process-wide default context.
 */
#ifndef TIDE_H
#define TIDE_H

#include <stddef.h>
#include <stdint.h>

/* TIDE_API_BEGIN ... TIDE_API_END wrap every public header's declarations: C linkage for C++
 * callers, and default visibility (exported: exactly what include/ declares). */
#ifdef __cplusplus
#define TIDE_EXTERN_C_BEGIN extern "C" {
#define TIDE_EXTERN_C_END   }
#else
#define TIDE_EXTERN_C_BEGIN
#define TIDE_EXTERN_C_END
#endif
#if defined(__GNUC__) && !defined(__CUDACC__)
#define TIDE_VISIBILITY_PUSH _Pragma("GCC visibility push(default)")
#define TIDE_VISIBILITY_POP  _Pragma("GCC visibility pop")
#else
#define TIDE_VISIBILITY_PUSH
#define TIDE_VISIBILITY_POP
#endif
#define TIDE_API_BEGIN TIDE_EXTERN_C_BEGIN TIDE_VISIBILITY_PUSH
#define TIDE_API_END   TIDE_VISIBILITY_POP TIDE_EXTERN_C_END

TIDE_API_BEGIN

#define TIDE_MAX_DIMS 8

/* ---- status ------------------------------------------------------------------------------- */

typedef enum tide_status {
    TIDE_OK = 0,
    TIDE_EINVAL,   /* bad argument value */
    TIDE_ESHAPE,   /* shapes do not fit */
    TIDE_EDTYPE,   /* dtype not allowed here */
    TIDE_EDEVICE,  /* tensors on different devices, or a device that does not exist */
    TIDE_EINDEX,   /* index out of range */
    TIDE_ENOMEM,   /* allocation failed (the binding collects garbage and retries once) */
    TIDE_ELIMIT,   /* the context's memory limit would be exceeded */
    TIDE_ENOTSUP,  /* not implemented for this dtype/device */
    TIDE_EBACKEND, /* a backend call (CUDA, BLAS) failed */
    TIDE_EGUARD,   /* an implicit transfer refused by the transfer guard */
    TIDE_EIO,      /* file missing, truncated or malformed */
} tide_status;

const char *tide_errmsg(void);                /* last error message of this thread */
const char *tide_status_name(tide_status st); /* "TIDE_ESHAPE" */

/* ---- dtypes ------------------------------------------------------------------------------- */

/* X(ENUM, C type used for storage, name) */
#define TIDE_DTYPES(X)                                                                             \
    X(F32, float, "float32")                                                                       \
    X(F64, double, "float64")                                                                      \
    X(F16, uint16_t, "float16")                                                                    \
    X(BF16, uint16_t, "bfloat16")                                                                  \
    X(I32, int32_t, "int32")                                                                       \
    X(I64, int64_t, "int64")                                                                       \
    X(U8, uint8_t, "uint8")                                                                        \
    X(BOOL, uint8_t, "bool")

typedef enum tide_dtype {
#define X(e, ctype, name) TIDE_DTYPE_##e,
    TIDE_DTYPES(X)
#undef X
        TIDE_DTYPE_COUNT
} tide_dtype;

const char *tide_dtype_name(tide_dtype dt);
size_t      tide_dtype_size(tide_dtype dt);
int         tide_dtype_is_float(tide_dtype dt); /* F32, F64, F16, BF16 */
tide_status tide_dtype_from_name(const char *name, tide_dtype *out);
/* PyTorch's default dtype: the float dtype integers and numbers promote to where a float is
 * needed (exp of an int tensor, an int tensor plus 1.5) and that new float tensors take without
 * a dtype; float32 (the start) or float64, else TIDE_EINVAL. Process-wide, as PyTorch's. */
tide_status tide_set_default_float(tide_dtype dt);
tide_dtype  tide_default_float(void);

/* ---- ops ---------------------------------------------------------------------------------- */

typedef enum tide_op_family {
    TIDE_FAMILY_BINARY,    /* elementwise, two inputs, result in their promoted dtype */
    TIDE_FAMILY_COMPARE,   /* elementwise, two inputs, bool result */
    TIDE_FAMILY_UNARY,     /* elementwise, one input, result in its dtype */
    TIDE_FAMILY_REDUCE,    /* over one dim or all */
    TIDE_FAMILY_PREDICATE, /* elementwise, one input, bool result (isnan) */
    TIDE_FAMILY_BOUNDED,   /* UNARY with a lower and an upper bound (clamp) */
} tide_op_family;

/* What is true of an op, from its row in tide_ops.def (tide_op_flags) */
enum {
    TIDE_OPF_FLOAT_ONLY = 1 << 0,    /* integer inputs promote to float32 (DTYPES FLOAT) */
    TIDE_OPF_NO_GRAD = 1 << 1,       /* no gradient by design (compare, isnan, argmax, ...) */
    TIDE_OPF_CHEAP = 1 << 2,         /* a few cycles an element */
    TIDE_OPF_INT_WRAP = 1 << 3,      /* an integer scalar outside the dtype wraps into it */
    TIDE_OPF_INT_DIVISION = 1 << 4,  /* an integer zero divisor raises */
    TIDE_OPF_INTEGER_ONLY = 1 << 5,  /* float inputs are refused (DTYPES INTEGRAL, INTEGER) */
    TIDE_OPF_NO_BOOL = 1 << 6,       /* and bool ones too, after promotion (DTYPES INTEGER) */
    TIDE_OPF_AUTOCAST_FP32 = 1 << 7, /* under autocast, float inputs go float32 (tide.amp) */
    /* no gradient formula (PyTorch has none either): with grad mode on, an input that requires
     * grad raises `tide: <op>: not differentiable` rather than giving a detached result */
    TIDE_OPF_NOT_DIFFERENTIABLE = 1 << 8,
    TIDE_OPF_INT_POWER = 1 << 9, /* an integer exponent below 0 raises (PyTorch's int pow) */
    /* integer and bool inputs are refused rather than promoted (PyTorch's hypot) */
    TIDE_OPF_FLOAT_INPUT = 1 << 10,
};
/* a row's DTYPES column as flags */
#define TIDE_OP_DTYPES_ALL      0
#define TIDE_OP_DTYPES_FLOAT    TIDE_OPF_FLOAT_ONLY
#define TIDE_OP_DTYPES_INTEGRAL TIDE_OPF_INTEGER_ONLY
#define TIDE_OP_DTYPES_INTEGER  (TIDE_OPF_INTEGER_ONLY | TIDE_OPF_NO_BOOL)

typedef enum tide_op {
#define X(e, family, name, ...) TIDE_OP_##e,
#include "tide_ops.def"
#undef X
    TIDE_OP_COUNT
} tide_op;

const char    *tide_op_name(tide_op op); /* "add" */
tide_op_family tide_op_family_of(tide_op op);
unsigned       tide_op_flags(tide_op op);          /* TIDE_OPF_* */
int            tide_op_is_elementwise(tide_op op); /* every family but REDUCE */
int            tide_op_arity(tide_op op);          /* 2 for BINARY and COMPARE, else 1 */

/* ---- devices ------------------------------------------------------------------------------ */

/* One type per backend of the device registry: the built-in cpu, then the loadable backends in
 * the order of their registry lines (cuda first); tide_backend_register gives the next values. */
typedef enum tide_device_type { TIDE_DEVICE_CPU, TIDE_DEVICE_CUDA } tide_device_type;

/* Devices live as long as the process; compare them by pointer. */
typedef struct tide_device tide_device;

/* Idempotent and thread-safe; reads TIDE_CPU_DEVICES. Every other call calls it as needed. */
tide_status tide_init(void);

/* "cpu", "cpu:1", "cuda" (current CUDA device, cuda:0), "cuda:1". */
tide_status      tide_device_get(const char *spec, tide_device **out);
tide_status      tide_device_get_index(tide_device_type type, int index, tide_device **out);
tide_device_type tide_device_type_of(const tide_device *dev);
int              tide_device_index(const tide_device *dev);
const char      *tide_device_name(const tide_device *dev);    /* "cpu", "cpu:1", "cuda:0" */
int              tide_device_count(tide_device_type type);    /* usable devices of that type */
int              tide_device_is_host(const tide_device *dev); /* cpu:0 only */
tide_status      tide_device_synchronize(tide_device *dev);

typedef struct tide_memory_stats {
    size_t allocated; /* bytes in live tensors */
    size_t reserved;  /* allocated + cached free blocks */
    size_t peak;      /* high-water mark of allocated */
} tide_memory_stats;
tide_status tide_device_memory_stats(tide_device *dev, tide_memory_stats *out);
tide_status tide_device_empty_cache(tide_device *dev); /* frees cached blocks */

/* What runs a device's kernels, as far as its backend says; a field it does not fill stays NULL
 * or 0 (every field, for a backend that says nothing). */
typedef struct tide_device_info {
    /* the kernel family of the backend's BLAS ("SkylakeX", "Haswell", "Prescott": OpenBLAS's
     * openblas_get_corename) */
    const char *blas_core;
    int         threads; /* the threads its kernels and BLAS run on (the CPU: OpenMP's pool) */
} tide_device_info;
tide_status tide_device_get_info(tide_device *dev, tide_device_info *out);

/* ---- backends (the device registry) ------------------------------------------------------ */

/* A loadable backend is a shared object exporting <entry>_abi (the backend ABI version it was
 * built with) and <entry>_open (its vtable and device count). Registering adds a registry line:
 * its devices are "name", "name:N", and the library is looked up and loaded on first use, as
 * CUDA's: a path (library with a '/'), else tide_backend_set_library_path's, $TIDE_<NAME>_LIB,
 * next to the library holding tide, in tide/ beside it, then the install prefix's lib/tide/.
 * name: 1 to 11 lower-case letters and digits, starting with a letter; *type (may be NULL) gets
 * the new device type. Registering a name twice fails with TIDE_EINVAL. */
tide_status tide_backend_register(const char *name, const char *library, const char *entry,
                                  tide_device_type *type);
tide_status tide_device_type_from_name(const char *name, tide_device_type *out); /* "cuda" */
const char *tide_device_type_name(tide_device_type type); /* "cpu", "cuda"; NULL: unknown */
int         tide_device_type_count(void); /* cpu, then each registry line: types 0 to count-1 */
int         tide_backend_is_available(tide_device_type type);       /* loads it on first use */
const char *tide_backend_unavailable_reason(tide_device_type type); /* NULL when available */
int         tide_backend_is_loaded(tide_device_type type); /* never loads it (cleanup paths) */
/* the library to load for type, before its first use (afterwards TIDE_EINVAL) */
tide_status tide_backend_set_library_path(tide_device_type type, const char *path);

/* The CPU's tide_device_get_info (kept for the C API): its BLAS's kernel family, or NULL when the
 * BLAS does not say, and the threads CPU kernels and BLAS run on (OpenMP's pool). */
const char *tide_cpu_blas_core(void);
int         tide_cpu_threads(void);
/* What multiplies bfloat16 matrices on the CPU: "oneDNN <kernel>" where oneDNN runs them in
 * hardware (AMX, AVX512-BF16), NULL where they are widened to float32 for sgemm. */
const char *tide_cpu_bf16_gemm(void);
/* the threads the CPU kernels and BLAS run on from now, for the calling thread (OpenMP's
 * nthreads, which OpenBLAS follows; n >= 1, else TIDE_EINVAL): PyTorch's set_num_threads */
tide_status tide_cpu_set_threads(int n);

/* The CUDA backend's calls (kept for the C API): the generic calls above for TIDE_DEVICE_CUDA. */
int         tide_cuda_is_available(void);       /* never fails; loads the backend on first use */
const char *tide_cuda_unavailable_reason(void); /* NULL when available */
/* 1 when the CUDA backend is loaded and has devices; never loads it (for cleanup paths) */
int tide_cuda_is_loaded(void);
/* The CUDA backend (libtide_cuda.so) to load, for a host that ships it elsewhere. It is looked
 * for, in order: this path, $TIDE_CUDA_LIB, next to the library holding tide (libtide.so, core.so
 * or the host's executable), in tide/ beside it, then in the install prefix's lib/tide/. Call it
 * before the first CUDA use; afterwards it fails with TIDE_EINVAL (the lookup happens once). */
tide_status tide_cuda_set_library_path(const char *path);

/* ---- contexts ----------------------------------------------------------------------------- */

typedef struct tide_ctx tide_ctx;

typedef enum tide_guard { TIDE_GUARD_ALLOW, TIDE_GUARD_LOG, TIDE_GUARD_DISALLOW } tide_guard;

typedef struct tide_transfer_stats {
    uint64_t h2d_bytes, h2d_count; /* host (cpu:0) -> any other device */
    uint64_t d2h_bytes, d2h_count; /* any other device -> host */
    uint64_t d2d_bytes, d2d_count; /* between two non-host devices */
} tide_transfer_stats;

tide_status tide_ctx_new(tide_ctx **out);
void        tide_ctx_retain(tide_ctx *ctx);
void        tide_ctx_release(tide_ctx *ctx); /* tensors keep their context alive */
tide_ctx   *tide_ctx_default(void);

void       tide_ctx_transfer_stats(tide_ctx *ctx, tide_transfer_stats *out);
void       tide_ctx_reset_transfer_stats(tide_ctx *ctx);
void       tide_ctx_set_guard(tide_ctx *ctx, tide_guard mode);
tide_guard tide_ctx_guard(tide_ctx *ctx);
void       tide_ctx_manual_seed(tide_ctx *ctx, uint64_t seed);
void       tide_ctx_set_memory_limit(tide_ctx *ctx, size_t bytes); /* 0: no limit */
size_t     tide_ctx_memory_limit(tide_ctx *ctx);
size_t     tide_ctx_memory_in_use(tide_ctx *ctx); /* bytes of live storages made in ctx */
/* bytes of every storage made in ctx so far, freed or not: the difference over a call is what
 * it allocated (tide.profiler's memory column) */
uint64_t tide_ctx_memory_allocated(tide_ctx *ctx);
/* what a result sized by a caller's number may take before the call refuses it: what the
 * memory limit leaves, or the machine's physical memory when no limit is set */
size_t tide_ctx_memory_budget(tide_ctx *ctx);
/* Called for each implicit transfer when the guard is "log" (default: a line on stderr). */
void tide_ctx_set_log(tide_ctx *ctx, void (*fn)(void *ud, const char *msg), void *ud);
/* The generator's position: its seed and the count of values drawn since. After
 * tide_ctx_set_rng_state(ctx, seed, offset) the next draws repeat those that followed the
 * tide_ctx_rng_state that gave seed and offset (one counter-based generator for every device). */
void tide_ctx_rng_state(tide_ctx *ctx, uint64_t *seed, uint64_t *offset);
void tide_ctx_set_rng_state(tide_ctx *ctx, uint64_t seed, uint64_t offset);

/* ---- tensors ------------------------------------------------------------------------------ */

/* Refcounted: a view shares its base's storage. */
typedef struct tide_tensor tide_tensor;

tide_status tide_tensor_empty(tide_ctx *ctx, tide_device *dev, tide_dtype dt, int ndim,
                              const int64_t *shape, tide_tensor **out);
/* A tensor over memory the host owns (CPU memory for now, or device memory of the device's
 * backend). strides may be NULL (contiguous, in elements). deleter(ctx_ud) runs once, when the
 * last reference goes; it may be NULL. Refused (the deleter not called): negative sizes or
 * strides, sizes and strides whose reach (the sum of (size - 1) * stride) or its bytes do not
 * fit in int64, data that runs past the end of the address space or is not aligned to the
 * element size. A size of 0 makes any other sizes legal (no element is addressed). */
tide_status tide_tensor_from_blob(tide_ctx *ctx, void *data, tide_dtype dt, int ndim,
                                  const int64_t *shape, const int64_t *strides, tide_device *dev,
                                  void (*deleter)(void *ud), void *ud, tide_tensor **out);
void        tide_tensor_retain(tide_tensor *t);
void        tide_tensor_release(tide_tensor *t); /* NULL is fine */

int            tide_tensor_ndim(const tide_tensor *t);
const int64_t *tide_tensor_shape(const tide_tensor *t);   /* ndim entries */
const int64_t *tide_tensor_strides(const tide_tensor *t); /* in elements */
int64_t        tide_tensor_offset(const tide_tensor *t);  /* in elements, into the storage */
int64_t        tide_tensor_numel(const tide_tensor *t);
tide_dtype     tide_tensor_dtype(const tide_tensor *t);
tide_device   *tide_tensor_device(const tide_tensor *t);
tide_ctx      *tide_tensor_ctx(const tide_tensor *t);
int            tide_tensor_is_contiguous(const tide_tensor *t);
void          *tide_tensor_data(const tide_tensor *t);   /* first element; device memory off-host */
size_t         tide_tensor_nbytes(const tide_tensor *t); /* numel * dtype size */
int            tide_tensor_same_storage(const tide_tensor *a, const tide_tensor *b);
/* 1 when t is the only holder of its storage (no view, no other handle on t, tide's own
 * memory): writing t in place then changes no other tensor */
int tide_tensor_is_sole_owner(const tide_tensor *t);

/* Views (share storage; never copy). Negative sizes: -1 in view means "infer". */
tide_status tide_tensor_view(const tide_tensor *t, int ndim, const int64_t *shape,
                             tide_tensor **out);
/* t's bytes read as dtype dt, sharing its storage (PyTorch's view(dtype)): the same sizes when
 * the element sizes agree, else the last dim (stride 1) scaled by their ratio; TIDE_EINVAL when
 * a size, stride or the offset does not fall on whole elements of dt */
tide_status tide_tensor_view_dtype(const tide_tensor *t, tide_dtype dt, tide_tensor **out);
/* view when the strides allow it, else a contiguous copy */
tide_status tide_tensor_reshape(tide_ctx *ctx, const tide_tensor *t, int ndim, const int64_t *shape,
                                tide_tensor **out);
tide_status tide_tensor_permute(const tide_tensor *t, const int *perm, tide_tensor **out);
tide_status tide_tensor_transpose(const tide_tensor *t, int d0, int d1, tide_tensor **out);
tide_status tide_tensor_narrow(const tide_tensor *t, int dim, int64_t start, int64_t length,
                               tide_tensor **out);
tide_status tide_tensor_select(const tide_tensor *t, int dim, int64_t index, tide_tensor **out);
/* the windows of size elements along dim (0-based), step apart, as a view (PyTorch's
 * Tensor.unfold): dim becomes the window count (n - size) / step + 1 and a last dim of size
 * runs along each window; windows overlap when step < size */
tide_status tide_tensor_unfold(const tide_tensor *t, int dim, int64_t size, int64_t step,
                               tide_tensor **out);
/* a view of t's storage with any sizes and strides (>= 0), offset elements from its start
 * (PyTorch's as_strided); TIDE_EINVAL when an element it reaches lies outside the storage */
tide_status tide_tensor_as_strided(const tide_tensor *t, int ndim, const int64_t *shape,
                                   const int64_t *strides, int64_t offset, tide_tensor **out);
/* the offset-th diagonal (above the main one when offset > 0) of the matrices in dims d1 and d2
 * (0-based, distinct), as a view whose last dim runs along it (its stride the two dims' sum) */
tide_status tide_tensor_diagonal(const tide_tensor *t, int64_t offset, int d1, int d2,
                                 tide_tensor **out);
tide_status tide_tensor_unsqueeze(const tide_tensor *t, int dim, tide_tensor **out);
tide_status tide_tensor_squeeze(const tide_tensor *t, int dim, tide_tensor **out); /* dim<0: all */
/* broadcast view to shape (stride 0 on expanded dims) */
tide_status tide_tensor_expand(const tide_tensor *t, int ndim, const int64_t *shape,
                               tide_tensor **out);
/* the same tensor retained when contiguous, else a contiguous copy */
tide_status tide_tensor_contiguous(tide_ctx *ctx, const tide_tensor *t, tide_tensor **out);
tide_status tide_tensor_clone(tide_ctx *ctx, const tide_tensor *t, tide_tensor **out);

/* Transfers and casts. Always makes a new tensor (the binding returns the same object when
 * nothing is to be done). Counted in the transfer stats when the device changes. */
enum {
    TIDE_TO_IMPLICIT = 1,    /* asked for by printing / item(): subject to the guard */
    TIDE_TO_NON_BLOCKING = 2 /* from pinned memory, on the device's stream */
};
tide_status tide_tensor_to(tide_ctx *ctx, const tide_tensor *t, tide_device *dev, tide_dtype dt,
                           int flags, tide_tensor **out);
/* dst <- src, any devices, src broadcast to dst's shape, dtype converted. */
tide_status tide_tensor_copy_(tide_ctx *ctx, tide_tensor *dst, const tide_tensor *src);
/* page-locked host copy, from the first registry line whose backend has pinned memory (CUDA);
 * ENOTSUP when none is available */
tide_status tide_tensor_pin_memory(tide_ctx *ctx, const tide_tensor *t, tide_tensor **out);
int         tide_tensor_is_pinned(const tide_tensor *t);
/* one element as a double (any device; an implicit transfer off-host) */
tide_status tide_tensor_item(tide_ctx *ctx, const tide_tensor *t, double *out);
/* host tensors only: read/write one element at a 0-based multi-index */
tide_status tide_tensor_get(const tide_tensor *t, const int64_t *index, double *out);
tide_status tide_tensor_set(tide_tensor *t, const int64_t *index, double value);

/* Version counter: how many times t's storage was written in place (fill_, copy_, in-place
 * ops, random_, index_add_, tide_tensor_set), shared by every view of it; 0 when made. Autograd
 * compares it with the count it saw when it saved a tensor for the backward pass. */
uint64_t tide_tensor_version(const tide_tensor *t);
/* Marks t's storage as written (a write tide cannot see, through tide_tensor_data, or t's
 * userdata taking another tensor): the count becomes max(count, past) + 1 and is returned. */
uint64_t tide_tensor_bump_version(tide_tensor *t, uint64_t past);

/* ---- scalars ------------------------------------------------------------------------------ */

/* A number as the caller had it. An integer stays exact for int64 tensors, where a double
 * would round beyond 2^53 (2^53 + 1 is not a double). d always holds the value as a double. */
typedef struct tide_scalar {
    double  d;
    int64_t i;      /* the exact value when is_int */
    int     is_int; /* 1: an integer (a Lua integer, a C int64_t) */
} tide_scalar;

static inline tide_scalar tide_scalar_f(double d) {
    tide_scalar s = {d, 0, 0};
    return s;
}
static inline tide_scalar tide_scalar_i(int64_t i) {
    tide_scalar s = {(double)i, i, 1};
    return s;
}

/* tide_tensor_item as a tide_scalar: exact (is_int) for integer and bool dtypes */
tide_status tide_tensor_item_x(tide_ctx *ctx, const tide_tensor *t, tide_scalar *out);
/* TIDE_OK when v converts to dtype dt without overflow, PyTorch's checked conversion of a value
 * written into a tensor (fill_, full, tide.tensor's integers): infinities and NaN fit the float
 * dtypes, negative integers down to -255 wrap into uint8; else TIDE_EINVAL naming op, the value
 * and the dtype's range */
tide_status tide_scalar_fits(const char *op, tide_dtype dt, tide_scalar v);

/* ---- ops ---------------------------------------------------------------------------------- */

/* BINARY and COMPARE families, NumPy broadcasting, dtype promotion
 * (bool < uint8 < int32 < int64 < float32 < float64; div and pow of integers give float32;
 * COMPARE gives bool). */
tide_status tide_binary(tide_ctx *ctx, tide_op op, const tide_tensor *a, const tide_tensor *b,
                        tide_tensor **out);
/* a op s, or s op a when reverse. An integer tensor with a non-integral s gives float32; add,
 * sub and mul of a scalar outside a small integer dtype's range wrap (u8 + -1 is u8 - 1). */
tide_status tide_binary_scalar(tide_ctx *ctx, tide_op op, const tide_tensor *a, double s,
                               int reverse, tide_tensor **out);
/* the same with s as given: an integer s is exact for int64 tensors */
tide_status tide_binary_scalar_x(tide_ctx *ctx, tide_op op, const tide_tensor *a, tide_scalar s,
                                 int reverse, tide_tensor **out);
/* UNARY family; params: CLAMP {min, max} (use -INFINITY/INFINITY for none), others NULL */
tide_status tide_unary(tide_ctx *ctx, tide_op op, const tide_tensor *a, const double *params,
                       tide_tensor **out);
/* clamp to [lo, hi] (tide_scalar_f(-INFINITY) / (INFINITY) for no bound). An integer tensor
 * with a non-integral bound gives float32, as PyTorch's type promotion does (and as
 * tide_binary_scalar does); integer bounds are exact for int64 tensors. */
tide_status tide_clamp(tide_ctx *ctx, const tide_tensor *a, tide_scalar lo, tide_scalar hi,
                       tide_tensor **out);
/* REDUCE family over dim (0-based) or all dims when dim == TIDE_ALL_DIMS. MAX/MIN over a dim
 * also give 0-based int64 indices when indices != NULL. ARGMAX/ARGMIN give int64. */
#define TIDE_ALL_DIMS (-100)
tide_status tide_reduce(tide_ctx *ctx, tide_op op, const tide_tensor *a, int dim, int keepdim,
                        tide_tensor **values, tide_tensor **indices);
/* sum a down to shape (the reverse of broadcasting; for gradients) */
tide_status tide_sum_to(tide_ctx *ctx, const tide_tensor *a, int ndim, const int64_t *shape,
                        tide_tensor **out);
/* 1-D, 2-D and batched (leading dims broadcast) as torch.matmul */
tide_status tide_matmul(tide_ctx *ctx, const tide_tensor *a, const tide_tensor *b,
                        tide_tensor **out);
tide_status tide_softmax(tide_ctx *ctx, const tide_tensor *a, int dim, int log, tide_tensor **out);
/* index: int64 (or int32) 1-D tensor of 0-based indices on a's device */
tide_status tide_index_select(tide_ctx *ctx, const tide_tensor *a, int dim,
                              const tide_tensor *index, tide_tensor **out);
/* dst.index_select(dim, index) += src (for gradients of index_select / embedding) */
tide_status tide_index_add_(tide_ctx *ctx, tide_tensor *dst, int dim, const tide_tensor *index,
                            const tide_tensor *src);
/* gather/scatter as PyTorch's (index of the input's rank, 0-based values, int64 or int32);
 * scatter_ writes src (a 0-d src: one value for all); accumulate, a tide_scatter_mode, sums
 * duplicates (1) or keeps the larger (TIDE_SCATTER_AMAX) or smaller (TIDE_SCATTER_AMIN) of the
 * element and each value sent to it, in index order, as PyTorch's scatter_reduce: a NaN value
 * replaces it, a NaN element stays, a tie keeps it (the CPU only) */
typedef enum tide_scatter_mode {
    TIDE_SCATTER_WRITE,
    TIDE_SCATTER_ADD,
    TIDE_SCATTER_AMAX,
    TIDE_SCATTER_AMIN
} tide_scatter_mode;
tide_status tide_gather(tide_ctx *ctx, const tide_tensor *a, int dim, const tide_tensor *index,
                        tide_tensor **out);
tide_status tide_scatter_(tide_ctx *ctx, tide_tensor *dst, int dim, const tide_tensor *index,
                          const tide_tensor *src, int accumulate);
/* values and 0-based int64 indices of a sorted along dim (stable, NaN largest) */
tide_status tide_sort(tide_ctx *ctx, const tide_tensor *a, int dim, int descending,
                      tide_tensor **values, tide_tensor **indices);
/* the first k (0..size of dim) of that order along dim, descending when largest (PyTorch's
 * topk, sorted): values and 0-based int64 indices, a's shape but k at dim */
tide_status tide_topk(tide_ctx *ctx, const tide_tensor *a, int dim, int64_t k, int largest,
                      tide_tensor **values, tide_tensor **indices);
/* one element of each row along dim of that order, ascending: the k-th (1-based, 1..size of
 * dim), or for k = TIDE_KTH_MEDIAN the lower median (of an even count the smaller middle value;
 * the first NaN of a row that holds one), for k = TIDE_KTH_NANMEDIAN the lower median of the
 * values that are not NaN (the first NaN of a row of NaN): values and 0-based int64 indices,
 * a's shape but 1 at dim (a 0-d a: 0-d results) */
#define TIDE_KTH_MEDIAN    0
#define TIDE_KTH_NANMEDIAN (-1)
tide_status tide_kthvalue(tide_ctx *ctx, const tide_tensor *a, int dim, int64_t k,
                          tide_tensor **values, tide_tensor **indices);
/* mask (bool) ? value (0-d) : a, in the broadcast shape of a and mask; with *out given (a
 * itself: in place) the mask must broadcast to a's shape */
tide_status tide_masked_fill(tide_ctx *ctx, const tide_tensor *a, const tide_tensor *mask,
                             const tide_tensor *value, tide_tensor **out);
/* the elements of a (broadcast with mask) where mask is true, 1-d; *positions (may be NULL):
 * their 0-based row-major positions in the broadcast shape */
tide_status tide_masked_select(tide_ctx *ctx, const tide_tensor *a, const tide_tensor *mask,
                               tide_tensor **out, tide_tensor **positions);
/* Ops whose result's size depends on values (src/ops_count.c; they read values on the host).
 * nonzero: the 0-based indices of the nonzero elements (NaN included), int64 [n, ndim].
 * unique: the sorted unique elements of the flattened a (dim TIDE_ALL_DIMS) or its unique
 * slices along dim; inverse (a's shape, or [size of dim]) and counts int64, each may be NULL;
 * NaN differs from every value. repeat_interleave: a's elements (flattened: dim TIDE_ALL_DIMS)
 * repeated along dim, element i repeats[i] times (an int64/int32 tensor of dim's size or of one
 * element) or count times (repeats NULL); output_size >= 0 must equal the result's size along
 * dim; *index (may be NULL): the 0-based source of each result position. The _index form:
 * i repeated repeats[i] times, 0-based, in repeats' dtype. Results over the context's memory
 * limit are refused before anything is allocated. */
tide_status tide_nonzero(tide_ctx *ctx, const tide_tensor *a, tide_tensor **out);
tide_status tide_unique(tide_ctx *ctx, const tide_tensor *a, int dim, tide_tensor **values,
                        tide_tensor **inverse, tide_tensor **counts);
tide_status tide_repeat_interleave(tide_ctx *ctx, const tide_tensor *a, int dim,
                                   const tide_tensor *repeats, int64_t count, int64_t output_size,
                                   tide_tensor **out, tide_tensor **index);
tide_status tide_repeat_interleave_index(tide_ctx *ctx, const tide_tensor *repeats,
                                         int64_t output_size, tide_tensor **out);
/* tril (upper 0) / triu (upper 1) of the last two dims, diagonal offset k */
tide_status tide_tri(tide_ctx *ctx, const tide_tensor *a, int64_t k, int upper, tide_tensor **out);
tide_status tide_flip(tide_ctx *ctx, const tide_tensor *a, int ndims, const int *dims,
                      tide_tensor **out);
/* ndims 0: roll the flattened tensor by shifts[0] */
tide_status tide_roll(tide_ctx *ctx, const tide_tensor *a, int ndims, const int64_t *shifts,
                      const int *dims, tide_tensor **out);
/* out[..., c] = t[...] == c (int64), c in [0, n); n < 0: max(t) + 1 */
tide_status tide_one_hot(tide_ctx *ctx, const tide_tensor *t, int64_t n, tide_tensor **out);
/* n 0-based category draws per row of probs (1-d or 2-d, unnormalized), from ctx's generator */
tide_status tide_multinomial(tide_ctx *ctx, const tide_tensor *probs, int64_t n, int replacement,
                             tide_tensor **out);
/* n tensors joined along dim (0-based, of ts[tide_cat_reference(n, ts)]): same dims elsewhere,
 * the promoted dtype. A 1-D empty tensor ([0]) beside tensors of more dims is left out but for
 * its dtype, as PyTorch's legacy rule */
tide_status tide_cat(tide_ctx *ctx, int n, const tide_tensor *const *ts, int dim,
                     tide_tensor **out);
/* the index of the tensor whose shape cat follows: the first that is not a 1-D empty one */
int tide_cat_reference(int n, const tide_tensor *const *ts);
/* n tensors of one shape joined along a new dim (0..ndim) */
tide_status tide_stack(tide_ctx *ctx, int n, const tide_tensor *const *ts, int dim,
                       tide_tensor **out);
tide_status tide_where(tide_ctx *ctx, const tide_tensor *cond, const tide_tensor *a,
                       const tide_tensor *b, tide_tensor **out);
tide_status tide_fill_(tide_ctx *ctx, tide_tensor *t, double value);
/* the same with the value as given: an integer is exact for int64 tensors */
tide_status tide_fill_x_(tide_ctx *ctx, tide_tensor *t, tide_scalar value);
/* a new tensor filled with value (dev NULL: cpu) */
tide_status tide_tensor_full(tide_ctx *ctx, tide_device *dev, tide_dtype dt, int ndim,
                             const int64_t *shape, tide_scalar value, tide_tensor **out);
/* uniform in [lo, hi) or normal(mean=lo, std=hi), from the ctx's counter-based generator:
 * the same seed gives the same numbers on every device. KEEP, dropout's mask in one pass: hi
 * where the element's uniform draw in (0, 1) is >= lo (probability 1 - lo, lo in [0, 1]), 0
 * elsewhere. */
typedef enum tide_random_kind {
    TIDE_RANDOM_UNIFORM,
    TIDE_RANDOM_NORMAL,
    TIDE_RANDOM_KEEP
} tide_random_kind;
tide_status tide_random_(tide_ctx *ctx, tide_tensor *t, tide_random_kind kind, double lo,
                         double hi);
/* a new tensor of random values (dev NULL: cpu) */
tide_status tide_tensor_random(tide_ctx *ctx, tide_device *dev, tide_dtype dt, int ndim,
                               const int64_t *shape, tide_random_kind kind, double lo, double hi,
                               tide_tensor **out);
tide_status tide_arange(tide_ctx *ctx, tide_device *dev, tide_dtype dt, double start, double stop,
                        double step, tide_tensor **out);

/* nn kernels. input [N, C, H, W]; columns [N, C*kh*kw, OH*OW]. dh, dw: the dilation, the
 * distance between kernel taps (0 reads as 1, so {kh, kw, sh, sw, ph, pw} stays valid); the
 * output is OH = (H + 2*ph - dh*(kh-1) - 1) / sh + 1. Max pooling takes dilation 1 only. Each
 * checks its arguments and runs a kernel row (tide_kernel_run): unfold2d, fold2d, max_pool2d,
 * max_pool2d_backward. */
typedef struct tide_conv_geom {
    int kh, kw, sh, sw, ph, pw, dh, dw;
} tide_conv_geom;
tide_status tide_im2col(tide_ctx *ctx, const tide_tensor *input, tide_conv_geom g,
                        tide_tensor **out);
/* columns -> [N, C, H, W] summing overlaps (gradient of im2col) */
tide_status tide_col2im(tide_ctx *ctx, const tide_tensor *cols, int64_t C, int64_t H, int64_t W,
                        tide_conv_geom g, tide_tensor **out);
/* the same with the batch folded into the columns: [C*kh*kw, N, OH*OW], so that a convolution
 * is one gemm over the whole batch ([Cout, C*kh*kw] @ [C*kh*kw, N*OH*OW]) */
tide_status tide_im2col_folded(tide_ctx *ctx, const tide_tensor *input, tide_conv_geom g,
                               tide_tensor **out);
tide_status tide_col2im_folded(tide_ctx *ctx, const tide_tensor *cols, int64_t C, int64_t H,
                               int64_t W, tide_conv_geom g, tide_tensor **out);
/* values and int64 argmax positions (h*W + w within each plane, 0-based) */
tide_status tide_maxpool2d(tide_ctx *ctx, const tide_tensor *input, tide_conv_geom g,
                           tide_tensor **out, tide_tensor **indices);
/* a pooling window: kernel, stride, padding (at most half the kernel, read as -inf), dilation;
 * ceil_mode rounds the output size up (PyTorch's rule: the last window starts inside the input
 * or its left padding) */
typedef struct tide_pool_geom {
    int kh, kw, sh, sw, ph, pw, dh, dw;
    int ceil_mode; /* 0 or 1 */
} tide_pool_geom;
/* PyTorch's output size of one pooled dim; -1 when the sizes leave no output */
int64_t     tide_pool_out_size(int64_t size, int k, int s, int p, int d, int ceil_mode);
tide_status tide_maxpool2d_ex(tide_ctx *ctx, const tide_tensor *input, tide_pool_geom g,
                              tide_tensor **out, tide_tensor **indices);
tide_status tide_maxpool2d_backward(tide_ctx *ctx, const tide_tensor *grad_out,
                                    const tide_tensor *indices, int64_t H, int64_t W,
                                    tide_tensor **grad_in);

/* One fused step of a recurrent cell (nn.RNN/LSTM/GRU run one per time step). gi and gh are the
 * projections of the input and of the hidden state, biases added, [B, G*H] with G = 1 (RNN), 4
 * (LSTM: gates i, f, g, o) or 3 (GRU: r, z, n); prev is the cell state c (LSTM), the hidden
 * state h (GRU) or NULL (RNN). out: h' [B, H], or [B, 2H] = (h', c') for the LSTM. saved: what
 * the backward reads besides out (LSTM: the activated gates [B, 4H]; GRU: r, z, n and gh's n
 * part [B, 4H]; RNN: NULL). One float dtype, one device. */
typedef enum tide_rnn_kind {
    TIDE_RNN_TANH = 0,
    TIDE_RNN_RELU = 1,
    TIDE_RNN_LSTM = 2,
    TIDE_RNN_GRU = 3
} tide_rnn_kind;
tide_status tide_rnn_cell(tide_ctx *ctx, tide_rnn_kind kind, const tide_tensor *gi,
                          const tide_tensor *gh, const tide_tensor *prev, tide_tensor **out,
                          tide_tensor **saved);
/* gradients of tide_rnn_cell given grad_out (out's shape): dgi; dgh (GRU only, else NULL: the
 * same as dgi); dprev (LSTM: of c, GRU: the part of h's that does not go through gh, RNN: NULL) */
tide_status tide_rnn_cell_backward(tide_ctx *ctx, tide_rnn_kind kind, const tide_tensor *saved,
                                   const tide_tensor *prev, const tide_tensor *out,
                                   const tide_tensor *grad_out, tide_tensor **dgi,
                                   tide_tensor **dgh, tide_tensor **dprev);

/* the eigenvalues w [..., n] (ascending) and eigenvectors v [..., n, n] (columns) of the
 * symmetric a [..., n, n], float32 or float64, from its lower triangle (upper: the upper one),
 * by the device's own solver (LAPACK's syevd on the CPU). TIDE_ENOTSUP where the device has none
 * (tide.linalg then runs Jacobi rotations in tensor ops); TIDE_EINVAL when it fails to
 * converge (a NaN or inf in a). */
tide_status tide_linalg_eigh(tide_ctx *ctx, const tide_tensor *a, int upper, tide_tensor **w,
                             tide_tensor **v);
/* the eigenvalues and right eigenvectors of the general (real, non-symmetric) a [..., n, n],
 * float32 or float64, by the device's own solver (LAPACK's geev on the CPU): w [..., n, 2] holds
 * each eigenvalue as its (real, imaginary) pair, v [..., n, n, 2] the eigenvectors as columns in
 * the same pairs, each of norm 1 with its largest component real (v NULL: the eigenvalues
 * alone). A complex conjugate pair of eigenvalues comes together, the positive imaginary part
 * first. Errors as tide_linalg_eigh */
tide_status tide_linalg_eig(tide_ctx *ctx, const tide_tensor *a, tide_tensor **w, tide_tensor **v);
/* the reduced SVD a = u diag(s) vh of a [..., m, n]: u [..., m, k], s [..., k] descending, vh
 * [..., k, n], k = min(m, n), by the device's own solver (LAPACK's gesdd on the CPU); errors as
 * tide_linalg_eigh */
tide_status tide_linalg_svd(tide_ctx *ctx, const tide_tensor *a, tide_tensor **u, tide_tensor **s,
                            tide_tensor **vh);

/* the QR decomposition a = q r of a [..., m, n] by Householder reflections (LAPACK's geqrf and
 * orgqr on the CPU): q [..., m, c] with orthonormal columns, r [..., c, n] upper triangular, c =
 * min(m, n), or m when complete; errors as tide_linalg_eigh */
tide_status tide_linalg_qr(tide_ctx *ctx, const tide_tensor *a, int complete, tide_tensor **q,
                           tide_tensor **r);
/* LU with partial pivoting of a [..., m, n] (float32 / float64) by the device's own solver
 * (LAPACK's getrf on the CPU): lu [..., m, n] (L [m, k] unit lower below its diagonal, U [k, n]
 * on and above it) and pivots [..., k] int64, 1-based, k = min(m, n); a singular a factors (U
 * has a zero on its diagonal). TIDE_ENOTSUP where the device has no solver. */
tide_status tide_linalg_lu_factor(tide_ctx *ctx, const tide_tensor *a, tide_tensor **lu,
                                  tide_tensor **pivots);
/* x [..., n, k] with A x = b, A given by tide_linalg_lu_factor; b's batch dims equal lu's */
tide_status tide_linalg_lu_solve(tide_ctx *ctx, const tide_tensor *lu, const tide_tensor *pivots,
                                 const tide_tensor *b, tide_tensor **x);
/* l [..., n, n] lower with a = l l^T (a's lower triangle read); TIDE_EINVAL when a is not
 * positive-definite */
tide_status tide_linalg_cholesky(tide_ctx *ctx, const tide_tensor *a, tide_tensor **l);
/* x [..., n, k] with a x = b for a triangular a [..., n, n] (upper, else lower; unit: its
 * diagonal taken as 1); b's batch dims equal a's */
tide_status tide_linalg_solve_triangular(tide_ctx *ctx, const tide_tensor *a, const tide_tensor *b,
                                         int upper, int unit, tide_tensor **x);
/* the Bunch-Kaufman factorisation a = P L D L^T P^T of the symmetric (indefinite) a [..., n, n]
 * (float32 / float64, its lower triangle read) by the device's own solver (LAPACK's sytrf with
 * uplo "L" on the CPU, as PyTorch): ld [..., n, n] with D's 1x1 and 2x2 blocks and L's
 * multipliers on and below the diagonal, zeros above; pivots [..., n] int64, 1-based (k: a 1x1
 * block swapped with row k, -k on both rows of a 2x2 block); info [...] int32, the first zero
 * on D's diagonal (1-based) or 0: a singular D factors. TIDE_ENOTSUP where the device has no
 * solver (CUDA: tide.linalg copies to the host). */
tide_status tide_linalg_ldl_factor(tide_ctx *ctx, const tide_tensor *a, tide_tensor **ld,
                                   tide_tensor **pivots, tide_tensor **info);
/* x [..., n, k] with A x = b, A given by tide_linalg_ldl_factor's ld and pivots (sytrs); b's and
 * the pivots' batch dims equal ld's; pivots that sytrf does not give: TIDE_EINVAL */
tide_status tide_linalg_ldl_solve(tide_ctx *ctx, const tide_tensor *ld, const tide_tensor *pivots,
                                  const tide_tensor *b, tide_tensor **x);

/* conv2d by the device's own convolution (oneDNN for float32 on the CPU, when tide was built
 * with it): out [N, O, OH, OW] = input [N, C, H, W] convolved with weight [O, C/groups, g.kh,
 * g.kw], plus bias [O] (NULL: none). TIDE_ENOTSUP where the device has no such kernel for the
 * dtype or geometry: callers then run im2col + gemm (tide_im2col_folded). */
tide_status tide_conv2d(tide_ctx *ctx, const tide_tensor *input, const tide_tensor *weight,
                        const tide_tensor *bias, tide_conv_geom g, int groups, tide_tensor **out);
/* its gradients for grad_out [N, O, OH, OW]: grad_input, grad_weight and grad_bias (each NULL
 * when not wanted) */
tide_status tide_conv2d_backward(tide_ctx *ctx, const tide_tensor *grad_out,
                                 const tide_tensor *input, const tide_tensor *weight,
                                 tide_conv_geom g, int groups, tide_tensor **grad_input,
                                 tide_tensor **grad_weight, tide_tensor **grad_bias);

/* the activations whose gradient a backend computes in one pass; the linear kernel row's act
 * (TIDE_ACT_NONE: none) */
typedef enum tide_act { TIDE_ACT_RELU, TIDE_ACT_GELU, TIDE_ACT_NONE } tide_act;
/* the losses of the kernel rows pointwise_loss and pointwise_loss_backward (their parameter
 * kind), each a function of one input element x and one target element t, d = x - t, beta the
 * row's parameter; the formulas and gradients are PyTorch 1.13's (src/pointwise_loss_math.h) */
typedef enum tide_loss {
    TIDE_LOSS_MSE,             /* d^2 */
    TIDE_LOSS_L1,              /* |d| */
    TIDE_LOSS_SMOOTH_L1,       /* 0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta */
    TIDE_LOSS_HUBER,           /* 0.5 d^2 where |d| < beta (delta), else beta (|d| - 0.5 beta) */
    TIDE_LOSS_BCE_WITH_LOGITS, /* (1 - t) x + m + log(e^-m + e^(-x - m)), m = max(-x, 0) */
    TIDE_LOSS_SOFT_MARGIN,     /* log(1 + e^(-x t)) */
    TIDE_LOSS_COUNT
} tide_loss;
/* the activations of the kernel rows activation and activation_backward (include/
 * tide_kernels.def), with the meaning of the rows' parameters p1, p2, p3 (unused ones ignored);
 * values and gradients as PyTorch 1.13's (src/activation_math.h) */
typedef enum tide_activation {
    TIDE_ACTIVATION_HARDSWISH,   /* x min(max(x + 3, 0), 6) / 6 */
    TIDE_ACTIVATION_HARDSIGMOID, /* min(max(x + 3, 0), 6) / 6 */
    /* x scale where x >= 0, else alpha scale (exp(x input_scale) - 1): p1 alpha, p2 scale, p3
     * input_scale (elu: alpha, 1, 1; selu: its constants, 1; celu: alpha, 1, 1 / alpha) */
    TIDE_ACTIVATION_ELU,
    TIDE_ACTIVATION_LEAKY_RELU, /* x where x > 0, else x p1 (negative_slope) */
    TIDE_ACTIVATION_HARDTANH,   /* x clamped to [p1, p2] (min_val <= max_val) */
    TIDE_ACTIVATION_SOFTPLUS,   /* log1p(exp(p1 x)) / p1, x where p1 x > p2 (beta, threshold) */
    TIDE_ACTIVATION_SILU,       /* x / (1 + exp(-x)) */
    TIDE_ACTIVATION_MISH,       /* x tanh(log1p(exp(x))) */
    TIDE_ACTIVATION_LOGSIGMOID, /* min(x, 0) - log1p(exp(-|x|)) */
    TIDE_ACTIVATION_SOFTSIGN,   /* x / (|x| + 1) */
    TIDE_ACTIVATION_TANHSHRINK, /* x - tanh(x) */
    TIDE_ACTIVATION_SOFTSHRINK, /* x -+ p1 beyond +-p1 (lambd), 0 between */
    TIDE_ACTIVATION_HARDSHRINK, /* 0 in [-p1, p1] (lambd), x elsewhere */
    TIDE_ACTIVATION_THRESHOLD,  /* p2 (value) where x <= p1 (threshold), x elsewhere */
    TIDE_ACTIVATION_COUNT
} tide_activation;
/* relu's gradient in one pass: grad_in = input > 0 ? grad_out : 0 (one float dtype, one shape) */
tide_status tide_relu_backward(tide_ctx *ctx, const tide_tensor *grad_out, const tide_tensor *input,
                               tide_tensor **grad_in);
/* the same into grad_out itself (autograd's, when nothing else holds the gradient): input may be
 * relu's input or its result, whose signs agree */
tide_status tide_relu_backward_(tide_ctx *ctx, tide_tensor *grad_out, const tide_tensor *input);
/* exact GELU's gradient in one pass: grad_in = grad_out * (Phi(x) + x phi(x)), x the input */
tide_status tide_gelu_backward(tide_ctx *ctx, const tide_tensor *grad_out, const tide_tensor *input,
                               tide_tensor **grad_in);

/* ---- kernel rows: the fused kernels of include/tide_kernels.def ---------------------------- */

typedef enum tide_kernel {
#define K(NAME, ...) TIDE_K_##NAME,
#include "tide_kernels.def"
#undef K
    TIDE_KERNEL_COUNT
} tide_kernel;

#define TIDE_KERNEL_MAX_TENSORS 6 /* inputs, and outputs, of one row */
#define TIDE_KERNEL_MAX_PARAMS  12
/* a row's DTYPES: 1 << dtype */
#define TIDE_KD_F32  (1u << TIDE_DTYPE_F32)
#define TIDE_KD_F64  (1u << TIDE_DTYPE_F64)
#define TIDE_KD_F16  (1u << TIDE_DTYPE_F16)
#define TIDE_KD_BF16 (1u << TIDE_DTYPE_BF16)
#define TIDE_KD_I32  (1u << TIDE_DTYPE_I32)
#define TIDE_KD_I64  (1u << TIDE_DTYPE_I64)
#define TIDE_KD_U8   (1u << TIDE_DTYPE_U8)
#define TIDE_KD_BOOL (1u << TIDE_DTYPE_BOOL)
/* ROWS: input 1 seen as [rows, d], rows = numel / d. PROJ: input 1's last dim is d (rows the
 * product of the others), and the second parameter n sizes the N classes below. PACKED: input 1
 * is [N, heads * d], heads the second parameter (rows = N * heads), and the OFFSETS inputs cut
 * its N tokens into sequences. ELEMENTWISE: no d parameter; every ROWS tensor has input 1's
 * shape, seen as [numel, 1] (rows = numel, d = 1). WINDOW: a 2-D window sliding over images
 * [N, C, H, W] (pooling, im2col), the sizes from input 1's shape and the row's parameters.
 * MATRIX: batches of matrices, input 1 [..., m, n] (rows = the batch's product), each tensor
 * its batch dims and then the extents its row lists (include/tide_kernels.def) */
typedef enum tide_kernel_kind {
    TIDE_KERNEL_ROWS,
    TIDE_KERNEL_PROJ,
    TIDE_KERNEL_PACKED,
    TIDE_KERNEL_ELEMENTWISE,
    TIDE_KERNEL_WINDOW,
    TIDE_KERNEL_MATRIX
} tide_kernel_kind;
typedef enum tide_kernel_shape {
    TIDE_KSHAPE_ROWS,     /* input 1's shape ([rows, d] to the kernel) */
    TIDE_KSHAPE_STATS,    /* one element per row */
    TIDE_KSHAPE_COLS,     /* d elements */
    TIDE_KSHAPE_NMAT,     /* PROJ: [n, d], a matrix applied to each row */
    TIDE_KSHAPE_NCOLS,    /* PROJ: n elements */
    TIDE_KSHAPE_NROWS,    /* PROJ: input 1's shape, last dim n ([rows, n] to kernels) */
    TIDE_KSHAPE_OFFSETS,  /* PACKED: int64 1-D, rising from 0 to N (the core checks the values) */
    TIDE_KSHAPE_CHANNELS, /* ROWS, the second parameter inner: C = d / inner elements, the
                           * channels of each row seen as [C, inner] (outputs: [C]) */
    TIDE_KSHAPE_ALONG,    /* ROWS, outputs: input 1's shape with m at the dim the row runs along
                           * (d / inner elements, inner the second parameter, after it): m the
                           * width, or the third parameter k for width 0 ([rows, m * inner]) */
    TIDE_KSHAPE_IMAGE,    /* WINDOW: [N, C, H, W] */
    TIDE_KSHAPE_POOLED,   /* WINDOW: [N, C, OH, OW], one element per window */
    TIDE_KSHAPE_COLUMNS,  /* WINDOW: [N, C*kh*kw, OH*OW] (folded: [C*kh*kw, N, OH*OW]) */
    TIDE_KSHAPE_MATRIX,   /* MATRIX: input 1's batch dims, then the tensor's dims (m, n, ...) */
    TIDE_KSHAPE_INFO,     /* MATRIX: int32, input 1's batch dims: one status per matrix */
} tide_kernel_shape;
typedef enum tide_kernel_ptype { TIDE_KPARAM_INT, TIDE_KPARAM_FLOAT } tide_kernel_ptype;
typedef union tide_kernel_scalar {
    int64_t i; /* TIDE_KPARAM_INT */
    double  f; /* TIDE_KPARAM_FLOAT */
} tide_kernel_scalar;
typedef struct tide_kernel_tensor_info {
    const char       *name;
    tide_kernel_shape shape;
    int               optional; /* inputs: may be NULL; outputs: made only when wanted */
    int               inout;    /* inputs: written in place (contiguous; marked written after) */
    int               index;    /* int64, not input 1's dtype (outputs: indices) */
    int               width;    /* ROWS: width * d values a row (1 but for a cell's gates);
                                 * ALONG: m, or 0 for the parameter k */
    const char *dims;           /* MATRIX: the extents after the batch dims, "m, k" (else NULL) */
} tide_kernel_tensor_info;
typedef struct tide_kernel_param_info {
    const char       *name;
    tide_kernel_ptype type;
    double            min, max; /* the values allowed */
} tide_kernel_param_info;
/* one row of tide_kernels.def */
typedef struct tide_kernel_info {
    const char                    *name; /* "rms_norm"; a MATRIX row's "linalg.eigh" */
    tide_kernel_kind               kind;
    unsigned                       dtypes; /* TIDE_KD_* */
    int                            nin, nout, nparams;
    const tide_kernel_tensor_info *in, *out;
    const tide_kernel_param_info  *params;
} tide_kernel_info;

/* the row of k (NULL when k is out of range); the kernel named name, or -1 */
const tide_kernel_info *tide_kernel_info_of(tide_kernel k);
int                     tide_kernel_find(const char *name);
/* Runs the kernel of row k on the device of in[0]: in[nin] (NULL where an optional input is
 * absent), params[nparams] as the row types them, want[nout] (NULL: every output; an output the
 * row does not mark optional is always made). out[nout] receives new tensors, NULL where not
 * wanted. Checks devices, dtypes, shapes and parameters from the row, all before anything is
 * written; TIDE_ENOTSUP "<name>: not implemented on <device>" where the device's backend has no
 * kernel for the row. The row's inout inputs are written in place (cast away their const: they
 * must be writable tensors of the caller's) and must be contiguous. */
tide_status tide_kernel_run(tide_ctx *ctx, tide_kernel k, const tide_tensor *const *in,
                            const tide_kernel_scalar *params, const int *want, tide_tensor **out);

/* nn.Linear in one kernel: y = act(x w^T + bias) for x [..., d] and weight [n, d], bias [n] or
 * NULL, all of one float dtype on one device; y [..., n]. act: TIDE_ACT_NONE, RELU or GELU (the
 * exact erf form). The CPU and CUDA have it for every float dtype (the CPU's float16, and
 * bfloat16 without bfloat16 instructions, through float32 copies); TIDE_ENOTSUP on a device
 * without it: callers then run tide_matmul and the ops. */
tide_status tide_linear(tide_ctx *ctx, const tide_tensor *x, const tide_tensor *weight,
                        const tide_tensor *bias, tide_act act, tide_tensor **y);
/* Scaled dot-product attention over packed sequences, each attending to itself: q, k, v
 * [N, heads * d] of one float dtype (head h: features h*d..h*d+d-1), offsets int64 [B + 1]
 * rising from 0 to N (sequence b: rows offsets[b]..offsets[b+1]-1); out [N, heads * d] =
 * softmax(q k^T * scale) v per sequence and head. TIDE_ENOTSUP where the device has no kernel
 * for it (CUDA: heads of more than 128 features); callers then run the composite. */
tide_status tide_attention(tide_ctx *ctx, const tide_tensor *q, const tide_tensor *k,
                           const tide_tensor *v, const tide_tensor *offsets, int64_t heads,
                           double scale, tide_tensor **out);
/* Layer norm over the trailing d elements of x (x seen as [rows, d], numel divisible by d; float32
 * or float64): y = (x - mean) * rstd * weight + bias with the biased variance and rstd =
 * 1/sqrt(var + eps). weight and bias hold d elements of x's dtype, or are NULL. y has x's shape;
 * mean and rstd [rows] are what tide_layer_norm_backward needs. */
tide_status tide_layer_norm(tide_ctx *ctx, const tide_tensor *x, const tide_tensor *weight,
                            const tide_tensor *bias, int64_t d, double eps, tide_tensor **y,
                            tide_tensor **mean, tide_tensor **rstd);
/* its gradients for dy (x's shape), from x, mean, rstd and weight (NULL for none): dx (x's shape),
 * dweight and dbias (weight's shape, or [d]); each NULL when not wanted */
tide_status tide_layer_norm_backward(tide_ctx *ctx, const tide_tensor *dy, const tide_tensor *x,
                                     const tide_tensor *mean, const tide_tensor *rstd,
                                     const tide_tensor *weight, int64_t d, tide_tensor **dx,
                                     tide_tensor **dweight, tide_tensor **dbias);
/* softmax's gradient over dim (0-based) from its result y and the gradient g (one float dtype,
 * one shape): dx = y * (g - sum(g * y)); log: y is log_softmax's, dx = g - exp(y) * sum(g) */
tide_status tide_softmax_backward(tide_ctx *ctx, const tide_tensor *y, const tide_tensor *g,
                                  int dim, int log, tide_tensor **dx);

/* Fused optimizer steps (tide.optim): one in-place pass over a parameter and its state, with
 * no temporaries. PyTorch's formulas:
 *   SGD:  g = (maximize ? -g : g) + weight_decay*p; with momentum:
 *         buf = first_step ? g : momentum*buf + (1 - dampening)*g;
 *         g = nesterov ? g + momentum*buf : buf;  p -= lr*g
 *   Adam: g = maximize ? -g : g; decoupled (AdamW) ? p *= 1 - lr*weight_decay
 *         : g += weight_decay*p; m = beta1*m + (1 - beta1)*g; v = beta2*v + (1 - beta2)*g*g;
 *         p -= lr/bias_correction1 * m / (sqrt(v)/sqrt(bias_correction2) + eps)
 *   RMSprop: g = (maximize ? -g : g) + weight_decay*p; v = alpha*v + (1 - alpha)*g*g;
 *         centered: a = alpha*a + (1 - alpha)*g, avg = sqrt(v - a*a) + eps, else
 *         avg = sqrt(v) + eps; momentum: buf = momentum*buf + g/avg, p -= lr*buf,
 *         else p -= lr*g/avg
 *   Adagrad: g = (maximize ? -g : g) + weight_decay*p; sum += g*g;
 *         p -= lr * g / (sqrt(sum) + eps)   (lr already decayed by the caller)
 * param and the state tensors: one float dtype, device and shape, contiguous; grad may be
 * strided (read from a contiguous copy then). */
typedef enum tide_optim_kind {
    TIDE_OPTIM_SGD,
    TIDE_OPTIM_ADAM,
    TIDE_OPTIM_RMSPROP,
    TIDE_OPTIM_ADAGRAD
} tide_optim_kind;
typedef struct tide_optim_hparams {
    tide_optim_kind kind;
    double          lr, weight_decay;
    int             maximize;
    double          momentum, dampening; /* SGD */
    int             nesterov, first_step;
    double          beta1, beta2, eps, bias_correction1, bias_correction2; /* Adam */
    int             decoupled;
    double          alpha; /* RMSprop (momentum and eps above too) */
    int             centered;
} tide_optim_hparams;
/* SGD: state1 is the momentum buffer (NULL without momentum), state2 and state3 NULL; Adam:
 * state1 the first moment (exp_avg), state2 the second (exp_avg_sq), state3 NULL; RMSprop:
 * state1 square_avg, state2 the momentum buffer (NULL without momentum), state3 grad_avg (NULL
 * unless centered); Adagrad: state1 the sum, the others NULL. Writes param and the states. */
tide_status tide_optim_step_(tide_ctx *ctx, const tide_optim_hparams *h, tide_tensor *param,
                             const tide_tensor *grad, tide_tensor *state1, tide_tensor *state2,
                             tide_tensor *state3);

TIDE_API_END
#endif /* TIDE_H */
