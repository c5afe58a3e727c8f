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
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Formats "tide: " + fmt into the thread-local message and returns st. */
tide_status tide_seterr(tide_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* returns expr's status unless it is TIDE_OK (the core and the backends alike) */
#define TIDE_TRY(expr)                                                                             \
    do {                                                                                           \
        tide_status st_ = (expr);                                                                  \
        if (st_ != TIDE_OK)                                                                        \
            return st_;                                                                            \
    } while (0)

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
 * checked against the row (ROWS kind: [rows, d], [rows] or [d] views; PROJ kind: also [n, d],
 * [n] and [rows, n]; WINDOW kind: 4-d images and windows, 3-d columns, rows the N * C planes and
 * d 0, the window in p: tide_window_of; MATRIX kind: each tensor in its own shape, rows the
 * matrices of the batch and d 0); in[i] NULL for an absent
 * optional input, out[i] NULL for an output not wanted; p the parameters in the row's order. */
typedef struct tide_kernel_call {
    tide_kernel        kernel;
    tide_dtype         dtype;
    int64_t            rows, d, n; /* the geometry (rows >= 1); n: PROJ kind only */
    const tide_kview  *in[TIDE_KERNEL_MAX_TENSORS];
    const tide_kview  *out[TIDE_KERNEL_MAX_TENSORS];
    tide_kernel_scalar p[TIDE_KERNEL_MAX_PARAMS];
} tide_kernel_call;

/* the optimizer rows' parameters (sgd_step_, adam_step_, rmsprop_step_, adagrad_step_, in each
 * row's order) as the hyperparameters of tide_optim_step_; the states are in[2], in[3], in[4]
 * in tide_optim_step_'s order (NULL where absent), and the loops go by the states given */
static inline tide_optim_hparams tide_optim_hparams_of(const tide_kernel_call *c) {
    const tide_kernel_scalar *p = c->p;
    tide_optim_hparams        h;
    memset(&h, 0, sizeof h);
    switch (c->kernel) {
    case TIDE_K_SGD_STEP:
        h.kind = TIDE_OPTIM_SGD;
        h.lr = p[0].f, h.momentum = p[1].f, h.dampening = p[2].f, h.weight_decay = p[3].f;
        h.nesterov = (int)p[4].i, h.maximize = (int)p[5].i, h.first_step = (int)p[6].i;
        break;
    case TIDE_K_ADAM_STEP:
        h.kind = TIDE_OPTIM_ADAM;
        h.lr = p[0].f, h.beta1 = p[1].f, h.beta2 = p[2].f, h.eps = p[3].f;
        h.weight_decay = p[4].f, h.bias_correction1 = p[5].f, h.bias_correction2 = p[6].f;
        h.decoupled = (int)p[7].i, h.maximize = (int)p[8].i;
        break;
    case TIDE_K_RMSPROP_STEP:
        h.kind = TIDE_OPTIM_RMSPROP;
        h.lr = p[0].f, h.alpha = p[1].f, h.eps = p[2].f, h.weight_decay = p[3].f;
        h.momentum = p[4].f, h.maximize = (int)p[5].i, h.centered = c->in[4] != NULL;
        break;
    default: /* TIDE_K_ADAGRAD_STEP */
        h.kind = TIDE_OPTIM_ADAGRAD;
        h.lr = p[0].f, h.eps = p[1].f, h.weight_decay = p[2].f, h.maximize = (int)p[3].i;
        break;
    }
    return h;
}

/* a recurrent-cell row's call (rnn_step, lstm_step, gru_step and their _backward rows) as the
 * views of the cell kernels, which take every kind: NULL where the kind has none */
typedef struct tide_rnn_views {
    tide_rnn_kind     kind;
    const tide_kview *out, *saved, *gi, *gh, *prev; /* the step */
    const tide_kview *dgi, *dgh, *dprev, *grad_out; /* its gradient (out, saved, prev too) */
} tide_rnn_views;
static inline tide_rnn_views tide_rnn_views_of(const tide_kernel_call *c) {
    tide_rnn_views v;
    memset(&v, 0, sizeof v);
    switch (c->kernel) {
    case TIDE_K_RNN_STEP:
        v.kind = c->p[1].i ? TIDE_RNN_RELU : TIDE_RNN_TANH;
        v.gi = c->in[0], v.gh = c->in[1], v.out = c->out[0];
        break;
    case TIDE_K_RNN_STEP_BACKWARD:
        v.kind = c->p[1].i ? TIDE_RNN_RELU : TIDE_RNN_TANH;
        v.out = c->in[0], v.grad_out = c->in[1], v.dgi = c->out[0];
        break;
    case TIDE_K_LSTM_STEP:
    case TIDE_K_GRU_STEP:
        v.kind = c->kernel == TIDE_K_LSTM_STEP ? TIDE_RNN_LSTM : TIDE_RNN_GRU;
        v.gi = c->in[0], v.gh = c->in[1], v.prev = c->in[2];
        v.out = c->out[0], v.saved = c->out[1];
        break;
    default: /* TIDE_K_LSTM_STEP_BACKWARD, TIDE_K_GRU_STEP_BACKWARD */
        v.kind = c->kernel == TIDE_K_LSTM_STEP_BACKWARD ? TIDE_RNN_LSTM : TIDE_RNN_GRU;
        v.out = c->in[0], v.grad_out = c->in[1], v.saved = c->in[2], v.prev = c->in[3];
        v.dgi = c->out[0];
        v.dgh = v.kind == TIDE_RNN_GRU ? c->out[1] : NULL;
        v.dprev = c->out[v.kind == TIDE_RNN_GRU ? 2 : 1];
        break;
    }
    return v;
}

/* a WINDOW row's window (max_pool2d, unfold2d, fold2d: the parameters kh..dw, then ceil_mode
 * for max_pool2d); max_pool2d_backward has none (its kernels need none) */
static inline tide_pool_geom tide_window_of(const tide_kernel_call *c) {
    const tide_kernel_scalar *p = c->p;
    tide_pool_geom            g = {(int)p[0].i, (int)p[1].i, (int)p[2].i,
                                   (int)p[3].i, (int)p[4].i, (int)p[5].i,
                                   (int)p[6].i, (int)p[7].i, c->kernel == TIDE_K_MAX_POOL2D ? (int)p[8].i : 0};
    return g;
}

/* the linear row's product as the matmul entry's 3-D views: y3 [1, rows, n] = x3 [1, rows, d] @
 * wt [1, d, n], wt the column-major view of the contiguous weight [n, d] (no copy) */
static inline void tide_linear_views(const tide_kernel_call *c, tide_kview *y3, tide_kview *x3,
                                     tide_kview *wt) {
    int64_t rows = c->rows, d = c->d, n = c->n;
    *y3 = *c->out[0], *x3 = *c->in[0], *wt = *c->in[1];
    y3->ndim = x3->ndim = wt->ndim = 3;
    y3->shape[0] = x3->shape[0] = wt->shape[0] = 1;
    y3->shape[1] = rows, y3->shape[2] = n;
    y3->strides[0] = rows * n, y3->strides[1] = n, y3->strides[2] = 1;
    x3->shape[1] = rows, x3->shape[2] = d;
    x3->strides[0] = rows * d, x3->strides[1] = d, x3->strides[2] = 1;
    wt->shape[1] = d, wt->shape[2] = n;
    wt->strides[0] = n * d, wt->strides[1] = 1, wt->strides[2] = d;
}

/* an along-a-dim row's contiguous [rows, d] view as [rows, len, inner] (d = len * inner, the
 * row's parameter p[inner_at]), the line along dim 1: the cumsum-like rows' geometry (softmax);
 * 0 when inner does not divide d */
static inline int tide_lines_view(const tide_kernel_call *c, int inner_at, const tide_kview *v,
                                  tide_kview *v3) {
    int64_t inner = c->p[inner_at].i;
    if (inner < 1 || c->d % inner)
        return 0;
    *v3 = *v;
    v3->ndim = 3;
    v3->shape[0] = c->rows, v3->shape[1] = c->d / inner, v3->shape[2] = inner;
    v3->strides[0] = c->d, v3->strides[1] = inner, v3->strides[2] = 1;
    return 1;
}

typedef struct tide_backend tide_backend;

/* every row's kernel has this one signature; a backend's table of them is indexed by kernel id */
typedef tide_status (*tide_kernel_fn)(tide_device *dev, const tide_kernel_call *call);

/* For the built-in backends' files: from a row's CPU or CUDA column (Y or N) of
 * src/backend_entries.def or include/tide_kernels.def, the prototype of fn with the parameter
 * list params, and its place in the backend's table (fn or NULL):
 *   #define E(name, cpu, cuda, params) TIDE_ENTRY_PROTO(cpu, cpu_##name, params)
 *   #define E(name, cpu, cuda, params) .name = TIDE_ENTRY_IF(cpu, cpu_##name),
 *   #define K(NAME, name, kind, dt, cpu, ...) TIDE_KERNEL_PROTO(cpu, cpu_##name)
 *   #define K(NAME, name, kind, dt, cpu, ...) [TIDE_K_##NAME] = TIDE_ENTRY_IF(cpu, cpu_##name),
 * A backend may give a column a value of its own by defining TIDE_ENTRY_PROTO_<value> and
 * TIDE_ENTRY_IF_<value> (the CPU's DNNL, src/cpu/cpu.h). */
#define TIDE_ENTRY_PROTO(yn, fn, params) TIDE_ENTRY_PROTO_##yn(fn, params)
#define TIDE_ENTRY_PROTO_Y(fn, params)   tide_status fn params;
#define TIDE_ENTRY_PROTO_N(fn, params)
#define TIDE_ENTRY_IF(yn, fn)     TIDE_ENTRY_IF_##yn(fn)
#define TIDE_ENTRY_IF_Y(fn)       fn
#define TIDE_ENTRY_IF_N(fn)       NULL
#define TIDE_KERNEL_PROTO(yn, fn) TIDE_KERNEL_PROTO_##yn(fn)
#define TIDE_KERNEL_PROTO_Y(fn)   tide_status fn(tide_device *dev, const tide_kernel_call *call);
#define TIDE_KERNEL_PROTO_N(fn)

/* the compute entries' function types, tide_entry_<name>_fn (src/backend_entries.def) */
#define E(name, cpu, cuda, params) typedef tide_status(*tide_entry_##name##_fn) params;
#include "backend_entries.def"
#undef E

struct tide_device {
    tide_device_type    type;
    int                 index;
    char                name[16];
    const tide_backend *backend;
    void               *backend_ctx; /* per-device state of the backend (allocator, stream) */
};

/* One table per device kind: the memory, copy, stream and device entries written out here, then
 * one field per compute entry of src/backend_entries.def, then the kernel rows. A compute entry
 * or kernel a backend does not have is NULL (the core answers TIDE_ENOTSUP); the NULL of the
 * entries written out here means what their comment says. */
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
    tide_status (*synchronize)(tide_device *dev); /* NULL: nothing to wait for */
    tide_status (*memory_stats)(tide_device *dev, tide_memory_stats *out); /* NULL: all zero */
    tide_status (*empty_cache)(tide_device *dev);                          /* NULL: no cache */
    /* page-locked host memory for fast transfers (NULL where the backend has none); a storage
     * made by it records this backend and frees through it */
    tide_status (*alloc_pinned)(size_t bytes, void **ptr);
    void (*free_pinned)(void *ptr);
    /* makes dev current on this thread and gives its stream (NCCL enqueues on it, in order with
     * tide's kernels); NULL for the CPU */
    tide_status (*stream)(tide_device *dev, void **stream);
    /* what runs the device's kernels (tide_device_get_info); out arrives zeroed and a field the
     * backend does not know stays so; NULL: nothing to say */
    tide_status (*device_info)(tide_device *dev, tide_device_info *out);

    /* the compute entries, one field per row of src/backend_entries.def */
#define E(name, cpu, cuda, params) tide_entry_##name##_fn name;
#include "backend_entries.def"
#undef E

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
/* The version of this interface: struct tide_backend (with the rows of src/backend_entries.def
 * and include/tide_kernels.def), tide_kview, tide_device and the entry point. <entry>_abi returns
 * the version the plug-in was built with; the core refuses one of another version (or without the
 * function) before calling it. Bump it with every change to those. */
#define TIDE_BACKEND_ABI        24
#define TIDE_BACKEND_ABI_SUFFIX "_abi"
typedef int (*tide_backend_abi_fn)(void);
typedef tide_status (*tide_seterr_fn)(tide_status st, const char *fmt, ...);
typedef tide_status (*tide_backend_open_fn)(tide_seterr_fn seterr, const tide_backend **backend,
                                            int *count);

#ifdef __cplusplus
}
#endif
#endif /* TIDE_BACKEND_H */
