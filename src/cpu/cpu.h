/*
 * cpu.h — helpers shared by the CPU backend's kernel files: a strided N-d iterator that
 * coalesces dims and splits work across OpenMP threads, dtype helpers and saturating casts.
 */
#ifndef TIDE_CPU_H
#define TIDE_CPU_H

#include "backend.h"
#include "dtype_convert.h"
#include <math.h>
#include <stdint.h>

/* Thread thresholds. OpenBLAS is linked in its OpenMP build (the Makefile), so BLAS and these
 * kernels share one pool of workers instead of two pools spinning against each other; with one
 * pool a kernel pays off on two threads from about 32K elements (issue 15, measured on the
 * 2-core machines: small CNN step 30.7 -> 22.0 ms, MLP step 0.91 -> 0.73 ms against a 4M
 * grain; the MLP step at batch 64 under load here: 3.0 against 9-14 ms). Heavy ops (exp,
 * tanh, pooling) do several times the work per element and split sooner. Overridable with
 * -D for measurements. */
#ifndef CPU_PAR_GRAIN
#define CPU_PAR_GRAIN ((int64_t)1 << 15) /* cheap ops: elements */
#endif
#ifndef CPU_PAR_GRAIN_HEAVY
#define CPU_PAR_GRAIN_HEAVY ((int64_t)1 << 13) /* exp, tanh, softmax, pooling: elements */
#endif

#define CPU_MAX_OPS 4

/* The hot row loops (elementwise, sums, relu's gradient, softmax, optimizer steps) are built
 * three times, for the build's baseline (x86-64-v2: SSE4.2), x86-64-v3 (AVX2) and x86-64-v4
 * (AVX-512), and the loader picks one for the CPU it runs on (GCC's target_clones, an ifunc),
 * so a portable binary vectorizes 8 or 16 floats at a time where it can. Results do not
 * depend on the clone: C11 mode keeps GCC from contracting a*b+c into an FMA (clang contracts
 * by default, so its builds keep one copy), and no loop here reassociates. -DCPU_NO_CLONES
 * builds one copy, for comparisons. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__) &&       \
    !defined(CPU_NO_CLONES)
#define CPU_HOT __attribute__((target_clones("default", "arch=x86-64-v3", "arch=x86-64-v4")))
#else
#define CPU_HOT
#endif

/* LOOP(T), T the unsigned integer of es bytes (8, 4, 2, else 1): loops that only move elements */
#define CPU_BY_SIZE(es, LOOP)                                                                      \
    switch (es) {                                                                                  \
    case 8:                                                                                        \
        LOOP(uint64_t);                                                                            \
        break;                                                                                     \
    case 4:                                                                                        \
        LOOP(uint32_t);                                                                            \
        break;                                                                                     \
    case 2:                                                                                        \
        LOOP(uint16_t);                                                                            \
        break;                                                                                     \
    default:                                                                                       \
        LOOP(uint8_t);                                                                             \
        break;                                                                                     \
    }

/* Operand 0 gives the shape; every operand has that shape (the core expands broadcasts). Dims
 * of size 1 are dropped and adjacent dims merged when every operand allows it, so a contiguous
 * tensor becomes one row. Strides are in bytes. Row-major order is kept. */
typedef struct cpu_iter {
    int     nops, ndim;
    int64_t numel;
    int64_t shape[TIDE_MAX_DIMS];
    int64_t strides[CPU_MAX_OPS][TIDE_MAX_DIMS];
    char   *base[CPU_MAX_OPS];
} cpu_iter;

/* One run of n elements along the innermost dim: p[k] points at operand k's first element,
 * s[k] is its byte stride, index is the row-major position of the first element. */
typedef void (*cpu_loop_fn)(char **p, const int64_t *s, int64_t n, int64_t index, void *arg);

/* EINVAL "<op>: ..." when the views' shapes differ (an internal contract violation) */
tide_status cpu_iter_init(cpu_iter *it, const char *op, int nops, const tide_kview *const *views);
/* runs fn over [0, numel); on several threads when numel >= grain (grain <= 0: never) */
void cpu_iter_run(const cpu_iter *it, int64_t grain, cpu_loop_fn fn, void *arg);
/* a same-dtype copy (it: out, then a) whose input runs along the output's second-last dim, in
 * tiles (transpose_copy.c); 0 when the layouts are not so */
int cpu_copy_transposed(const cpu_iter *it, size_t es);
/* float32 fmod, remainder or floor_divide (op) over one row of contiguous operands (b may be a
 * number: stride 0), without libm's fmodf where exact (fmod_rows.c); 0 for other layouts */
int cpu_fmod_row_f32(tide_op op, char **p, const int64_t *s, int64_t n);

static inline int64_t cpu_numel(const tide_kview *v) {
    int64_t n = 1;
    for (int d = 0; d < v->ndim; d++)
        n *= v->shape[d];
    return n;
}

static inline int cpu_is_contiguous(const tide_kview *v) {
    int64_t expect = 1;
    for (int d = v->ndim - 1; d >= 0; d--) {
        if (v->shape[d] != 1 && v->strides[d] != expect)
            return 0;
        expect *= v->shape[d];
    }
    return 1;
}

static inline size_t cpu_dtype_size(tide_dtype dt) {
    static const unsigned char size[] = {4, 8, 2, 2, 4, 8, 1, 1}; /* tide.h's dtype order */
    return (unsigned)dt < sizeof size ? size[dt] : 1;
}
/* "add" (the core's tide_op_name lives in another object) */
const char *cpu_op_name(tide_op op);
/* "float16 is not supported on the CPU yet" style message for an unhandled dtype */
tide_status cpu_notsup(const char *op, tide_dtype dt);

/* element conversions (half/bf16, saturating integer casts, load/store as double) are the
 * tide_* inlines of dtype_convert.h, shared with the core */
/* one strided row of n elements converted from one dtype to another, as the copy entry converts
 * (elementwise.c; byte strides): half.c widens blocks of half operands with it */
void cpu_convert_row(tide_dtype to, char *dst, int64_t dst_stride, tide_dtype from, const char *src,
                     int64_t src_stride, int64_t n);

/* ---- the vtable entries, one file per family ------------------------------------------- */

/* alloc.c */
tide_status cpu_alloc(tide_device *dev, size_t bytes, void **ptr);
void        cpu_free(tide_device *dev, void *ptr, size_t bytes);
tide_status cpu_memory_stats(tide_device *dev, tide_memory_stats *out);
tide_status cpu_empty_cache(tide_device *dev);
/* the core's cache of tensor headers (storage.c), which cpu_empty_cache flushes too: host
 * memory as well (declared here: backends include backend.h, not tide_impl.h) */
void tide_storage_cache_flush(void);

/* the threads CPU kernels and BLAS run on (iter.c: OpenMP's pool) and the kernel family of the
 * BLAS (matmul.c: OpenBLAS's corename, NULL when the BLAS does not say): the device_info entry */
int         cpu_threads(void);
const char *cpu_blas_core(void);
void        cpu_blas_set_threads(int n); /* matmul.c: OpenBLAS's own count, where it keeps one */
/* matmul_dnnl.c: a bfloat16 [B, M, K] @ [B, K, N] into a contiguous out through oneDNN; 1 when
 * done, 0 when declined (not built with oneDNN, a layout it does not take): then widen */
int cpu_matmul_bf16(tide_device *dev, const tide_kview *out, const tide_kview *a,
                    const tide_kview *bm);
/* the same for the linear kernel row: y3 = act(x3 @ wt + bias) on tide_linear_views' views,
 * float32 or bfloat16, bias [n] contiguous or NULL for none; the bias and activation as
 * oneDNN post-ops (1 when done, 0 when declined) */
int cpu_linear_dnnl(tide_device *dev, const tide_kview *y3, const tide_kview *x3,
                    const tide_kview *wt, const tide_kview *bias, tide_act act);

/* The compute entries of src/backend_entries.def with a Y in the CPU column: cpu_<name>, one file
 * per family (elementwise.c: binary, binary_scalar, unary, copy, fill; reduce.c; matmul.c;
 * index.c: index_select, index_add, where; gather.c: gather, scatter;
 * random.c: random, arange; conv_dnnl.c: conv2d, conv2d_backward).
 * DNNL in the column: only when built with oneDNN (TIDE_HAVE_DNNL); without it the entry is NULL
 * and nn runs im2col + gemm. HALF: the kernels compute float16 and bfloat16 through float32
 * (half.c): the table holds cpu_<name>_or_half, which widens half operands and calls cpu_<name>,
 * the kernels of the other dtypes, and calls it straight for those. So the dtype is dispatched
 * once, and no kernel file calls back into half.c. */
#define TIDE_ENTRY_PROTO_HALF(fn, params)                                                          \
    tide_status fn params;                                                                         \
    tide_status fn##_or_half params;
#define TIDE_ENTRY_IF_HALF(fn) fn##_or_half
#ifdef TIDE_HAVE_DNNL
#define TIDE_ENTRY_PROTO_DNNL TIDE_ENTRY_PROTO_Y
#define TIDE_ENTRY_IF_DNNL    TIDE_ENTRY_IF_Y
#else
#define TIDE_ENTRY_PROTO_DNNL TIDE_ENTRY_PROTO_N
#define TIDE_ENTRY_IF_DNNL    TIDE_ENTRY_IF_N
#endif
#define E(name, cpu, cuda, params) TIDE_ENTRY_PROTO(cpu, cpu_##name, params)
#include "backend_entries.def"
#undef E

/* softmax.c: softmax (log: log_softmax) and its gradient along dim of views of any strides, one
 * dtype (float32, float64; the _or_half forms in half.c widen float16 and bfloat16), under the
 * kernel rows softmax and softmax_backward (softmax_rows.c) */
tide_status cpu_softmax_dim(tide_device *dev, const tide_kview *out, const tide_kview *a, int dim,
                            int log);
tide_status cpu_softmax_backward_dim(tide_device *dev, const tide_kview *dx, const tide_kview *y,
                                     const tide_kview *g, int dim, int log);
tide_status cpu_softmax_dim_or_half(tide_device *dev, const tide_kview *out, const tide_kview *a,
                                    int dim, int log);
tide_status cpu_softmax_backward_dim_or_half(tide_device *dev, const tide_kview *dx,
                                             const tide_kview *y, const tide_kview *g, int dim,
                                             int log);

/* half.c: float16 and bfloat16 through the float32 kernels (the HALF rows above); copy, fill,
 * index_select and gather move elements without arithmetic and take half as it is */
static inline int cpu_is_half(tide_dtype dt) {
    return dt == TIDE_DTYPE_F16 || dt == TIDE_DTYPE_BF16;
}

/* the kernels of include/tide_kernels.def with a Y in the CPU column: cpu_<lua name>, one
 * signature (backend.h's tide_kernel_fn) */
/* The kernel rows. HALF in the CPU column, as for the entries above: cpu_<name> computes float32
 * and float64 only, and the table holds cpu_<name>_or_half (made in backend.c), which runs it on
 * float32 copies of a call's float16 or bfloat16 tensors (cpu_kernel_or_half, half.c) */
#define TIDE_KERNEL_PROTO_HALF(fn) TIDE_KERNEL_PROTO_Y(fn)
tide_status cpu_kernel_or_half(tide_device *dev, const tide_kernel_call *c, tide_kernel_fn fn);
#define K(NAME, name, kind, dtypes, cpu, ...) TIDE_KERNEL_PROTO(cpu, cpu_##name)
#include "tide_kernels.def"
#undef K

#endif /* TIDE_CPU_H */
