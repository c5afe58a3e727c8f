/*
 * matmul_dnnl.c — oneDNN's matmul primitive, when tide is built with it: bfloat16 products
 * (cpu_matmul_bf16), and the linear kernel row's product with its bias and activation as the
 * primitive's post-ops, in float32 and bfloat16 (cpu_linear_dnnl: y written once, from the
 * kernel's registers; a separate pass over a float32 y cost 9% of a MiniLM encoding).
 *
 * Widened to float32 (half.c), a bfloat16 product runs at sgemm's speed plus two conversions.
 * oneDNN multiplies bfloat16 in hardware where the CPU can (AMX tiles, AVX512-BF16's dot
 * products; products exact, sums in float32, rounded once into the bfloat16 output, as the
 * widened path computes): on the two AMX cores tide is developed on, 1,000-2,600 GFLOP/s
 * against sgemm's 200-330. Where the CPU cannot, oneDNN still runs it (converting in its own
 * kernels) no faster than sgemm, so that is declined (in_hardware).
 *
 * oneDNN's bfloat16 kernels take dense matrices, row- or column-major, so a transposed view
 * goes as it is; any other layout (a narrowed view, the slices of attention's fused projection)
 * is first copied to a dense bfloat16 buffer, a small cost beside widening. A batch dim of
 * stride 0 (one matrix against a batch, as expand makes it) is oneDNN's broadcast dim of 1.
 * oneDNN keeps the primitives it has made in its own cache (a repeated shape costs ~2 us to
 * look up), so nothing is cached here. What oneDNN declines (a matrix-vector product goes to a
 * kernel without bfloat16 instructions) returns 0, and the caller widens instead; only a
 * finished product returns 1.
 */
#include "cpu.h"

#ifdef TIDE_HAVE_DNNL
#include <dnnl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static dnnl_engine_t   engine;
static dnnl_stream_t   stream;
static int             broken; /* the engine could not be made: never try again */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* Hardware bfloat16: oneDNN's name for the kernel it picked says so (brg:avx512_core_amx_bf16,
 * ...avx512_core_bf16). Elsewhere it would run reference loops or convert in its own kernels,
 * no faster than widening to sgemm: declined. */
static int in_hardware(const char *impl) {
    return impl && (strstr(impl, "bf16") || strstr(impl, "amx"));
}

/* the kernel oneDNN picked is worth running: bfloat16 in hardware, float32 anything but its
 * reference loops */
static int accepted(tide_dtype dt, const char *impl) {
    return dt == TIDE_DTYPE_BF16 ? in_hardware(impl) : impl && strncmp(impl, "ref", 3) != 0;
}

/* v's matrices are dense: row- or column-major with nothing between rows (columns), and batches
 * that follow each other or repeat (stride 0); size-1 dims' strides mean nothing */
static int dense(const tide_kview *v) {
    int64_t rows = v->shape[1], cols = v->shape[2], s1 = v->strides[1], s2 = v->strides[2];
    int     row_major = (cols == 1 || s2 == 1) && (rows == 1 || s1 == cols);
    int     col_major = (rows == 1 || s1 == 1) && (cols == 1 || s2 == rows);
    return (row_major || col_major) &&
           (v->shape[0] == 1 || v->strides[0] == 0 || v->strides[0] == rows * cols);
}

static dnnl_data_type_t dnnl_dtype(tide_dtype dt) {
    return dt == TIDE_DTYPE_F32 ? dnnl_f32 : dnnl_bf16;
}

/* a dense v's [B, rows, cols] (float32 or bfloat16) as a oneDNN descriptor; a batch of stride 0
 * becomes dim 1 */
static int describe(const tide_kview *v, dnnl_memory_desc_t *md) {
    int64_t     rows = v->shape[1], cols = v->shape[2];
    int         col_major = rows > 1 && v->strides[1] == 1 && !(cols > 1 && v->strides[2] == 1);
    dnnl_dims_t dims = {v->shape[0], rows, cols};
    dnnl_dims_t strides = {rows * cols, col_major ? 1 : cols, col_major ? rows : 1};
    if (v->strides[0] == 0)
        dims[0] = 1;
    return dnnl_memory_desc_init_by_strides(md, 3, dims, dnnl_dtype(v->dtype), strides) ==
           dnnl_success;
}

/* *d: a dense row-major bfloat16 copy of v in *buf (the device's allocator; a repeated batch
 * copied once) */
static tide_status densify(tide_device *dev, const tide_kview *v, tide_kview *d, void **buf,
                           size_t *bytes) {
    tide_kview src = *v;
    if (src.strides[0] == 0)
        src.shape[0] = 1;
    *d = src;
    d->strides[2] = 1;
    d->strides[1] = src.shape[2];
    d->strides[0] = src.shape[1] * src.shape[2];
    *bytes = (size_t)(src.shape[0] * d->strides[0]) * sizeof(uint16_t);
    TIDE_TRY(cpu_alloc(dev, *bytes, buf));
    d->data = *buf;
    tide_status st = cpu_copy(dev, d, &src);
    if (st != TIDE_OK) {
        cpu_free(dev, *buf, *bytes);
        *buf = NULL;
        return st;
    }
    if (v->strides[0] == 0) { /* back to the batch, repeated */
        d->shape[0] = v->shape[0];
        d->strides[0] = 0;
    }
    return TIDE_OK;
}

static const char *impl_of(const_dnnl_primitive_desc_t pd) {
    const char *impl = NULL;
    return dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) == dnnl_success ? impl
                                                                                             : NULL;
}

static int start(void) {
    if (!engine && !broken &&
        (dnnl_engine_create(&engine, dnnl_cpu, 0) != dnnl_success ||
         dnnl_stream_create(&stream, engine, dnnl_stream_default_flags) != dnnl_success))
        broken = 1;
    return !broken;
}

/* the bias [n] as oneDNN's [1, 1, n], broadcast over the batch and the rows */
static int describe_bias(const tide_kview *bias, dnnl_memory_desc_t *md) {
    int64_t     n = bias->shape[0];
    dnnl_dims_t dims = {1, 1, n}, strides = {n, n, 1};
    return dnnl_memory_desc_init_by_strides(md, 3, dims, dnnl_dtype(bias->dtype), strides) ==
           dnnl_success;
}

/* attr: the activation as an eltwise post-op (none: *attr stays NULL) */
static int post_ops(tide_act act, dnnl_primitive_attr_t *attr) {
    *attr = NULL;
    if (act == TIDE_ACT_NONE)
        return 1;
    dnnl_post_ops_t po = NULL;
    int             ok = dnnl_primitive_attr_create(attr) == dnnl_success &&
             dnnl_post_ops_create(&po) == dnnl_success &&
             dnnl_post_ops_append_eltwise(
                 po, 1.0f, act == TIDE_ACT_GELU ? dnnl_eltwise_gelu_erf : dnnl_eltwise_relu, 0.0f,
                 0.0f) == dnnl_success &&
             dnnl_primitive_attr_set_post_ops(*attr, po) == dnnl_success;
    if (po)
        dnnl_post_ops_destroy(po);
    return ok;
}

/* out = act(a @ bm + bias), bias NULL for none; 0 where oneDNN's kernel is not accepted */
static int run(const tide_kview *out, const tide_kview *a, const tide_kview *bm,
               const tide_kview *bias, tide_act act) {
    if (!start())
        return 0;
    dnnl_memory_desc_t md[4];
    if (!describe(a, &md[0]) || !describe(bm, &md[1]) || !describe(out, &md[2]) ||
        (bias && !describe_bias(bias, &md[3])))
        return 0;
    dnnl_matmul_desc_t    desc;
    dnnl_primitive_attr_t attr = NULL;
    dnnl_primitive_desc_t pd = NULL;
    dnnl_primitive_t      prim = NULL;
    dnnl_memory_t         mem[4] = {NULL, NULL, NULL, NULL};
    int                   nargs = bias ? 4 : 3, done = 0;
    if (!post_ops(act, &attr) ||
        dnnl_matmul_desc_init(&desc, &md[0], &md[1], bias ? &md[3] : NULL, &md[2]) !=
            dnnl_success ||
        dnnl_primitive_desc_create(&pd, &desc, attr, engine, NULL) != dnnl_success ||
        !accepted(out->dtype, impl_of(pd)) || dnnl_primitive_create(&prim, pd) != dnnl_success)
        goto end;
    void *const data[4] = {a->data, bm->data, out->data, bias ? bias->data : NULL};
    for (int k = 0; k < nargs; k++)
        if (dnnl_memory_create(&mem[k], &md[k], engine, data[k]) != dnnl_success)
            goto end;
    dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, mem[0]},
                               {DNNL_ARG_WEIGHTS, mem[1]},
                               {DNNL_ARG_DST, mem[2]},
                               {DNNL_ARG_BIAS, mem[3]}};
    done = dnnl_primitive_execute(prim, stream, nargs, args) == dnnl_success &&
           dnnl_stream_wait(stream) == dnnl_success;
end:
    for (int k = 0; k < 4; k++)
        if (mem[k])
            dnnl_memory_destroy(mem[k]);
    if (prim)
        dnnl_primitive_destroy(prim);
    if (pd)
        dnnl_primitive_desc_destroy(pd);
    if (attr)
        dnnl_primitive_attr_destroy(attr);
    return done;
}

int cpu_matmul_bf16(tide_device *dev, const tide_kview *out, const tide_kview *a,
                    const tide_kview *bm) {
    if (out->dtype != TIDE_DTYPE_BF16 || a->dtype != TIDE_DTYPE_BF16 ||
        bm->dtype != TIDE_DTYPE_BF16 || out->ndim != 3 || a->ndim != 3 || bm->ndim != 3 ||
        !cpu_is_contiguous(out) || !tide_cpu_bf16_gemm())
        return 0;
    int64_t B = out->shape[0], M = out->shape[1], N = out->shape[2], K = a->shape[2];
    if (a->shape[0] != B || bm->shape[0] != B || a->shape[1] != M || bm->shape[1] != K ||
        bm->shape[2] != N || B == 0 || M == 0 || N == 0 || K == 0)
        return 0; /* the widened path checks shapes, and fills a K == 0 product with zeros */
    if (N == 1)
        return 0; /* a matrix-vector product: oneDNN 2.6 has no bfloat16 kernel for it */
    tide_kview da = *a, db = *bm;
    void      *bufa = NULL, *bufb = NULL;
    size_t     na = 0, nb = 0;
    int        done = 0;
    /* (a copy that fails, for want of memory, sends the product the widened way) */
    if ((dense(a) || densify(dev, a, &da, &bufa, &na) == TIDE_OK) &&
        (dense(bm) || densify(dev, bm, &db, &bufb, &nb) == TIDE_OK)) {
        pthread_mutex_lock(&lock);
        done = run(out, &da, &db, NULL, TIDE_ACT_NONE);
        pthread_mutex_unlock(&lock);
    }
    if (bufa)
        cpu_free(dev, bufa, na);
    if (bufb)
        cpu_free(dev, bufb, nb);
    return done;
}

int cpu_linear_dnnl(tide_device *dev, const tide_kview *y3, const tide_kview *x3,
                    const tide_kview *wt, const tide_kview *bias, tide_act act) {
    (void)dev;
    if (y3->dtype != TIDE_DTYPE_F32 && y3->dtype != TIDE_DTYPE_BF16)
        return 0;
    if ((y3->dtype == TIDE_DTYPE_BF16 && !tide_cpu_bf16_gemm()) || y3->shape[2] == 1)
        return 0; /* a matrix-vector product: as cpu_matmul_bf16 */
    pthread_mutex_lock(&lock);
    int done = run(y3, x3, wt, bias, act);
    pthread_mutex_unlock(&lock);
    return done;
}

static char           kernel_name[64]; /* "oneDNN <kernel>", or empty: bfloat16 widens */
static pthread_once_t probe_once = PTHREAD_ONCE_INIT;

/* once: the kernel oneDNN picks for a 64^3 product, the size of a training step's products */
static void probe(void) {
    pthread_mutex_lock(&lock);
    if (start()) {
        dnnl_memory_desc_t    md;
        dnnl_dims_t           dims = {64, 64};
        dnnl_matmul_desc_t    desc;
        dnnl_primitive_desc_t pd;
        if (dnnl_memory_desc_init_by_tag(&md, 2, dims, dnnl_bf16, dnnl_ab) == dnnl_success &&
            dnnl_matmul_desc_init(&desc, &md, &md, NULL, &md) == dnnl_success &&
            dnnl_primitive_desc_create(&pd, &desc, NULL, engine, NULL) == dnnl_success) {
            const char *impl = impl_of(pd);
            if (in_hardware(impl))
                snprintf(kernel_name, sizeof kernel_name, "oneDNN %s", impl);
            dnnl_primitive_desc_destroy(pd);
        }
    }
    pthread_mutex_unlock(&lock);
}

/* asked by every bfloat16 product and convolution: no lock once probed */
const char *tide_cpu_bf16_gemm(void) {
    pthread_once(&probe_once, probe);
    return kernel_name[0] ? kernel_name : NULL;
}

#else

int cpu_matmul_bf16(tide_device *dev, const tide_kview *out, const tide_kview *a,
                    const tide_kview *bm) {
    (void)dev;
    (void)out;
    (void)a;
    (void)bm;
    return 0;
}

int cpu_linear_dnnl(tide_device *dev, const tide_kview *y3, const tide_kview *x3,
                    const tide_kview *wt, const tide_kview *bias, tide_act act) {
    (void)dev;
    (void)y3;
    (void)x3;
    (void)wt;
    (void)bias;
    (void)act;
    return 0;
}

const char *tide_cpu_bf16_gemm(void) {
    return NULL;
}

#endif
