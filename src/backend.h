/*
 * backend.h — the interface between the core and a device backend (src/cpu/, src/cuda/).
 *
 * The core (the src/ C files) validates arguments, checks devices, allocates outputs and then calls
 * one entry of the backend vtable of the inputs' device. Backends see only tide_kview descriptors:
 * broadcasting and dtype promotion are already resolved by the core. nvcc compiles this header
 * too, so it holds plain C only (no atomics).
 */
#ifndef TIDE_BACKEND_H
#define TIDE_BACKEND_H

#include "tide.h"
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Formats "tide: " + fmt into the thread-local message and returns st. */
tide_status tide_seterr(tide_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* ---- kernel descriptors ------------------------------------------------------------------- */

/* What a kernel sees of a tensor: a pointer to its first element, dtype, shape and strides in
 * elements. Broadcast inputs arrive expanded to the output's shape with stride 0. */
typedef struct tide_kview {
    void      *data;
    tide_dtype dtype;
    int        ndim;
    int64_t    shape[TIDE_MAX_DIMS];
    int64_t    strides[TIDE_MAX_DIMS];
} tide_kview;

/* (core functions: a loadable backend, a separate object, has its own copies) */
int64_t tide_kview_numel(const tide_kview *v);
bool    tide_kview_is_contiguous(const tide_kview *v);

/* ---- kernel rows (include/tide_kernels.def) ---------------------------------------------- */

/* What a row's kernel gets: the tensors in the row's order, contiguous, of one dtype, already
 * checked against the row (ROWS kind: [rows, d], [rows] or [d] views); in[i] NULL for an absent
 * optional input, out[i] NULL for an output not wanted; p the parameters in the row's order. */
typedef struct tide_kernel_call {
    tide_kernel        kernel;
    tide_dtype         dtype;
    int64_t            rows, d; /* ROWS kind: the geometry (rows >= 1) */
    const tide_kview  *in[TIDE_KERNEL_MAX_TENSORS];
    const tide_kview  *out[TIDE_KERNEL_MAX_TENSORS];
    tide_kernel_scalar p[TIDE_KERNEL_MAX_PARAMS];
} tide_kernel_call;

typedef struct tide_backend tide_backend;

/* every row's kernel has this one signature; a backend's table of them is indexed by kernel id */
typedef tide_status (*tide_kernel_fn)(tide_device *dev, const tide_kernel_call *call);

/* For the built-in backends' files: from a row's CPU or CUDA column (Y or N), the prototype of
 * fn and its entry in the backend's table:
 *   #define K(NAME, name, kind, dt, cpu, ...) TIDE_KERNEL_PROTO(cpu, cpu_##name)
 *   #define K(NAME, name, kind, dt, cpu, ...) [TIDE_K_##NAME] = TIDE_KERNEL_ENTRY(cpu, cpu_##name),
 */
#define TIDE_KERNEL_PROTO(yn, fn) TIDE_KERNEL_PROTO_##yn(fn)
#define TIDE_KERNEL_PROTO_Y(fn)   tide_status fn(tide_device *dev, const tide_kernel_call *call);
#define TIDE_KERNEL_PROTO_N(fn)
#define TIDE_KERNEL_ENTRY(yn, fn) TIDE_KERNEL_ENTRY_##yn(fn)
#define TIDE_KERNEL_ENTRY_Y(fn)   fn
#define TIDE_KERNEL_ENTRY_N(fn)   NULL

struct tide_device {
    tide_device_type    type;
    int                 index;
    char                name[16];
    const tide_backend *backend;
    void               *backend_ctx; /* per-device state of the backend (allocator, stream) */
};

/* One table per device kind. Every kernel entry gets views on this device only. An entry that a
 * backend does not have is NULL (the core answers TIDE_ENOTSUP). Kernels return TIDE_ENOTSUP with
 * a message for dtypes they do not handle. */
struct tide_backend {
    const char *name; /* "cpu", or the registry line's name ("cuda") */

    /* memory: alloc returns TIDE_ENOMEM with a message on failure */
    tide_status (*alloc)(tide_device *dev, size_t bytes, void **ptr);
    void (*free)(tide_device *dev, void *ptr, size_t bytes);
    /* contiguous byte copies between this device and host memory. non_blocking: the copy may
     * still be running when the call returns (only from or into pinned memory; anything else
     * waits); the core synchronizes dev before the host touches dst (tide_storage.in_flight) */
    tide_status (*copy_to_host)(tide_device *dev, void *dst, const void *src, size_t bytes,
                                int non_blocking);
    tide_status (*copy_from_host)(tide_device *dev, void *dst, const void *src, size_t bytes,
                                  int non_blocking);
    /* between two devices of this backend (dst_dev may equal src_dev); NULL: staged by the core */
    tide_status (*copy_peer)(tide_device *dst_dev, void *dst, tide_device *src_dev, const void *src,
                             size_t bytes);
    tide_status (*synchronize)(tide_device *dev);
    tide_status (*memory_stats)(tide_device *dev, tide_memory_stats *out);
    tide_status (*empty_cache)(tide_device *dev);
    /* page-locked host memory for fast transfers (NULL where the backend has none); a storage
     * made by it records this backend and frees through it */
    tide_status (*alloc_pinned)(size_t bytes, void **ptr);
    void (*free_pinned)(void *ptr);

    /* elementwise: out[i] = a[i] op b[i]; a and b share one dtype; out has that dtype, or bool
     * for COMPARE ops */
    tide_status (*binary)(tide_device *dev, tide_op op, const tide_kview *out, const tide_kview *a,
                          const tide_kview *b);
    /* out[i] = a[i] op s (or s op a[i] when reverse); a and out share a dtype (bool for COMPARE) */
    tide_status (*binary_scalar)(tide_device *dev, tide_op op, const tide_kview *out,
                                 const tide_kview *a, double s, int reverse);
    /* out and a share a dtype; params as in tide_unary */
    tide_status (*unary)(tide_device *dev, tide_op op, const tide_kview *out, const tide_kview *a,
                         const double *params);
    /* strided copy with dtype conversion (out and a same shape, any dtypes) */
    tide_status (*copy)(tide_device *dev, const tide_kview *out, const tide_kview *a);
    tide_status (*fill)(tide_device *dev, const tide_kview *out, double value);
    /* reduce a over dim (0-based) into out, which has a's shape with size 1 at dim (keepdim
     * shape; ndim equal). indices (int64, same shape as out) may be NULL; it is set for
     * MAX/MIN when asked, and ARGMAX/ARGMIN write their result to indices with out == NULL.
     * SUM/MEAN/PROD: out dtype is a's (int64 for integer sums). A full reduction arrives as a
     * reduction over dim 0 of a contiguous 1-D view. */
    tide_status (*reduce)(tide_device *dev, tide_op op, const tide_kview *out,
                          const tide_kview *indices, const tide_kview *a, int dim);
    /* batched gemm: out[b] = a[b] @ bm[b]; a [B, M, K], bm [B, K, N], out [B, M, N] contiguous.
     * a and bm may have any strides (the backend copies what its BLAS cannot take). */
    tide_status (*matmul)(tide_device *dev, const tide_kview *out, const tide_kview *a,
                          const tide_kview *bm);
    /* softmax or log-softmax over dim; out contiguous, same shape and dtype */
    tide_status (*softmax)(tide_device *dev, const tide_kview *out, const tide_kview *a, int dim,
                           int log);
    /* out = a.index_select(dim, index); index int64 1-D, values already range-checked */
    tide_status (*index_select)(tide_device *dev, const tide_kview *out, const tide_kview *a,
                                int dim, const tide_kview *index);
    /* dst.index_select(dim, index) += src, duplicates accumulate */
    tide_status (*index_add)(tide_device *dev, const tide_kview *dst, int dim,
                             const tide_kview *index, const tide_kview *src);
    /* out = cond ? a : b; cond bool, a/b/out one dtype, all expanded to out's shape */
    tide_status (*where)(tide_device *dev, const tide_kview *out, const tide_kview *cond,
                         const tide_kview *a, const tide_kview *b);
    /* counter-based: element i (in row-major order of out) from (seed, offset + i) */
    tide_status (*random)(tide_device *dev, const tide_kview *out, tide_random_kind kind, double lo,
                          double hi, uint64_t seed, uint64_t offset);
    /* out[i] = start + i * step, out contiguous 1-D */
    tide_status (*arange)(tide_device *dev, const tide_kview *out, double start, double step);
    /* nn: input contiguous [N, C, H, W]; cols contiguous [N, C*kh*kw, OH*OW] */
    tide_status (*im2col)(tide_device *dev, const tide_kview *cols, const tide_kview *input,
                          tide_conv_geom g);
    /* out [N, C, H, W] zero-filled by the backend, overlaps summed */
    tide_status (*col2im)(tide_device *dev, const tide_kview *out, const tide_kview *cols,
                          tide_conv_geom g);
    /* out and indices [N, C, OH, OW] (their shape is the output size: ceil_mode is the
     * core's); windows clipped to the input */
    tide_status (*maxpool2d)(tide_device *dev, const tide_kview *out, const tide_kview *indices,
                             const tide_kview *input, tide_pool_geom g);
    /* grad_in zero-filled by the backend, then grad_in[plane][idx] += grad_out */
    tide_status (*maxpool2d_backward)(tide_device *dev, const tide_kview *grad_in,
                                      const tide_kview *grad_out, const tide_kview *indices);
    /* makes dev current on this thread and gives its stream (NCCL enqueues on it, in order with
     * tide's kernels); NULL for the CPU */
    tide_status (*stream)(tide_device *dev, void **stream);
    /* one recurrent-cell step (tide_rnn_cell in tide.h); all views contiguous, one dtype; saved
     * and prev NULL where the kind has none */
    tide_status (*rnn_cell)(tide_device *dev, tide_rnn_kind kind, const tide_kview *out,
                            const tide_kview *saved, const tide_kview *gi, const tide_kview *gh,
                            const tide_kview *prev);
    /* its gradient (tide_rnn_cell_backward); dgh and dprev NULL where the kind has none */
    tide_status (*rnn_cell_backward)(tide_device *dev, tide_rnn_kind kind, const tide_kview *dgi,
                                     const tide_kview *dgh, const tide_kview *dprev,
                                     const tide_kview *saved, const tide_kview *prev,
                                     const tide_kview *out, const tide_kview *grad_out);
    /* out[i..] = a[i.. with index[i..] at dim]; index int64 of out's shape, values checked */
    tide_status (*gather)(tide_device *dev, const tide_kview *out, const tide_kview *a, int dim,
                          const tide_kview *index);
    /* dst[i.. with index[i..] at dim] = src[i..] (+= when accumulate, duplicates summed), over
     * index's shape; src no smaller than index (stride 0 for a number); values checked */
    tide_status (*scatter)(tide_device *dev, const tide_kview *dst, int dim,
                           const tide_kview *index, const tide_kview *src, int accumulate);
    /* stable sort of a along dim (NaN largest): values and int64 indices (0-based), both
     * contiguous with a's shape */
    tide_status (*sort)(tide_device *dev, const tide_kview *values, const tide_kview *indices,
                        const tide_kview *a, int dim, int descending);
    /* tide_optim_step_: param, grad and the states the kind keeps (tide.h; NULL for the others)
     * contiguous, one float dtype and numel; updated in place */
    tide_status (*optim_step)(tide_device *dev, const tide_optim_hparams *h,
                              const tide_kview *param, const tide_kview *grad,
                              const tide_kview *state1, const tide_kview *state2,
                              const tide_kview *state3);
    /* an activation's gradient, grad_in = grad_out * act'(input) (relu: input > 0 ? grad_out :
     * 0; gelu: Phi(x) + x phi(x)); one float dtype, one shape, any strides */
    tide_status (*act_backward)(tide_device *dev, tide_act act, const tide_kview *grad_in,
                                const tide_kview *grad_out, const tide_kview *input);
    /* conv2d by the backend's own convolution (the CPU's: oneDNN, when built with it; NULL:
     * none, callers run im2col + gemm). out [N, O, OH, OW], input [N, C, H, W], weight
     * [O, C/groups, kh, kw], bias [O] or NULL, all contiguous, one dtype; TIDE_ENOTSUP for a
     * dtype or geometry it has no kernel for */
    tide_status (*conv2d)(tide_device *dev, const tide_kview *out, const tide_kview *input,
                          const tide_kview *weight, const tide_kview *bias, tide_conv_geom g,
                          int groups);
    /* its gradients; grad_input, grad_weight, grad_bias each NULL when not wanted */
    tide_status (*conv2d_backward)(tide_device *dev, const tide_kview *grad_input,
                                   const tide_kview *grad_weight, const tide_kview *grad_bias,
                                   const tide_kview *grad_out, const tide_kview *input,
                                   const tide_kview *weight, tide_conv_geom g, int groups);
    /* softmax's gradient over dim from its result y: dx = y * (g - sum(g * y)), or for
     * log_softmax dx = g - exp(y) * sum(g); one float dtype, one shape, any strides */
    tide_status (*softmax_backward)(tide_device *dev, const tide_kview *dx, const tide_kview *y,
                                    const tide_kview *g, int dim, int log);
    /* the kernels of include/tide_kernels.def: kernels[id] for id < nkernels, NULL where the
     * backend has none (the core answers TIDE_ENOTSUP); nkernels: the rows it was built with */
    const tide_kernel_fn *kernels;
    int                   nkernels;
};

extern const tide_backend tide_cpu_backend;

/* A loadable backend (src/cuda/ builds one) is a shared object, loaded with dlopen on first use,
 * that exports two functions named by its registry line's entry (src/device.c): <entry>_abi and
 * <entry>_open. It cannot link against the core's symbols (the core may itself be loaded
 * RTLD_LOCAL by Lua), so the core hands it tide_seterr. On success open fills *backend and
 * *count (devices found); on failure it returns non-OK with the reason set through seterr
 * ("no driver", "no device"). */
#define TIDE_BACKEND_OPEN_SUFFIX "_open"
/* The version of this interface: struct tide_backend, tide_kview, tide_device and the entry
 * point. <entry>_abi returns the version the plug-in was built with; the core refuses one of
 * another version (or without the function) before calling it. Bump it with every change to
 * those. */
#define TIDE_BACKEND_ABI        10
#define TIDE_BACKEND_ABI_SUFFIX "_abi"
typedef int (*tide_backend_abi_fn)(void);
typedef tide_status (*tide_seterr_fn)(tide_status st, const char *fmt, ...);
typedef tide_status (*tide_backend_open_fn)(tide_seterr_fn seterr, const tide_backend **backend,
                                            int *count);

#ifdef __cplusplus
}
#endif
#endif /* TIDE_BACKEND_H */
