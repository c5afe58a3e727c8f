/*
 * linear.c — the linear kernel row (include/tide_kernels.def): y = act(x w^T + bias), nn.Linear's
 * product with its bias add and activation fused.
 *
 * float32 products of at least LINEAR_DNNL_MIN multiply-adds, and bfloat16 ones where the CPU has
 * bfloat16 instructions: oneDNN's matmul primitive with the bias and the GELU as its post-ops
 * (matmul_dnnl.c), y written once from the kernel's registers. Its GELU is oneDNN's own erf
 * (within 1e-6 of x Phi(x), as vec_math.h's). Its ReLU would make NaN 0, so ReLU is tide's.
 *
 * Otherwise (smaller float32 products, float64, tide without oneDNN): the gemm (matmul.c, w^T as a
 * transposed view: no copy), then one pass over y that adds the bias and applies the activation,
 * where nn ran an add and an activation as two passes. The pass computes each element as those
 * two ops would (the add rounded to the dtype, then the same activation function), so the result
 * is the composite's bit for bit.
 *
 * float16, and bfloat16 without the instructions: through float32 copies, as half.c runs the
 * matmul entry (one rounding at the end).
 */
#include "cpu.h"
#include "scalar_math.h"
#include "vec_math.h"

/* smaller float32 products go to OpenBLAS's small-matrix kernels and the pass (matmul.c's split) */
#define LINEAR_DNNL_MIN ((double)(1 << 19))

typedef struct {
    tide_act act;
    int      f32;
} epilogue;

/* y = act(y + bias) along a run of n (operands: y, y, the bias broadcast over the rows; nin 2:
 * no bias), one loop per activation so that each vectorizes, unit strides apart */
#define EPILOGUE_LOOP(T, F)                                                                        \
    do {                                                                                           \
        if (s[0] == sizeof(T) && s[1] == sizeof(T) && (nin == 2 || s[2] == sizeof(T))) {           \
            T *y = (T *)p[0];                                                                      \
            if (nin == 3) {                                                                        \
                const T *b = (const T *)p[2];                                                      \
                for (int64_t i = 0; i < n; i++)                                                    \
                    y[i] = F((T)(y[i] + b[i]));                                                    \
            } else {                                                                               \
                for (int64_t i = 0; i < n; i++)                                                    \
                    y[i] = F(y[i]);                                                                \
            }                                                                                      \
        } else {                                                                                   \
            for (int64_t i = 0; i < n; i++) {                                                      \
                T v = *(const T *)(p[1] + i * s[1]);                                               \
                if (nin == 3)                                                                      \
                    v = (T)(v + *(const T *)(p[2] + i * s[2]));                                    \
                *(T *)(p[0] + i * s[0]) = F(v);                                                    \
            }                                                                                      \
        }                                                                                          \
    } while (0)

static inline float same_f(float v) {
    return v;
}
static inline double same_d(double v) {
    return v;
}

CPU_HOT static void epilogue_row(char **p, const int64_t *s, int64_t n, const epilogue *e,
                                 int nin) {
    if (e->f32) {
        if (e->act == TIDE_ACT_GELU)
            EPILOGUE_LOOP(float, cpu_vgeluf);
        else if (e->act == TIDE_ACT_RELU)
            EPILOGUE_LOOP(float, tide_relu_f);
        else
            EPILOGUE_LOOP(float, same_f);
    } else {
        if (e->act == TIDE_ACT_GELU)
            EPILOGUE_LOOP(double, tide_gelu_d);
        else if (e->act == TIDE_ACT_RELU)
            EPILOGUE_LOOP(double, tide_relu_d);
        else
            EPILOGUE_LOOP(double, same_d);
    }
}

static void with_bias(char **p, const int64_t *s, int64_t n, int64_t index, void *arg) {
    (void)index;
    epilogue_row(p, s, n, arg, 3);
}

static void without_bias(char **p, const int64_t *s, int64_t n, int64_t index, void *arg) {
    (void)index;
    epilogue_row(p, s, n, arg, 2);
}

/* float32 and float64: the gemm, then the epilogue pass */
static tide_status linear_float(tide_device *dev, const tide_kernel_call *c) {
    const tide_kview *bias = c->in[2], *y = c->out[0];
    tide_act          act = (tide_act)c->p[2].i;
    tide_kview        y3, x3, wt;
    tide_linear_views(c, &y3, &x3, &wt);
    TIDE_TRY(cpu_matmul(dev, &y3, &x3, &wt));
    if (!bias && act == TIDE_ACT_NONE)
        return TIDE_OK;
    tide_kview b2;
    if (bias) { /* the bias broadcast over the rows */
        b2 = *y;
        b2.data = bias->data;
        b2.strides[0] = 0;
        b2.strides[1] = 1;
    }
    const tide_kview *v[3] = {y, y, &b2};
    cpu_iter          it;
    TIDE_TRY(cpu_iter_init(&it, "linear", bias ? 3 : 2, v));
    epilogue e = {act, c->dtype == TIDE_DTYPE_F32};
    cpu_iter_run(&it, act == TIDE_ACT_GELU ? CPU_PAR_GRAIN_HEAVY : CPU_PAR_GRAIN,
                 bias ? with_bias : without_bias, &e);
    return TIDE_OK;
}

/* float16, and bfloat16 without oneDNN's kernels: the operands widened to float32 copies, the
 * float32 kernel, y rounded back once (a failure writes nothing to y) */
static tide_status linear_widened(tide_device *dev, const tide_kernel_call *c) {
    enum { N = 4 }; /* x, weight, bias, y */
    const tide_kview *h[N] = {c->in[0], c->in[1], c->in[2], c->out[0]};
    tide_kview        f[N];
    void             *buf[N] = {NULL, NULL, NULL, NULL};
    size_t            bytes[N] = {0, 0, 0, 0};
    tide_status       st = TIDE_OK;
    for (int i = 0; i < N && st == TIDE_OK; i++) {
        if (!h[i])
            continue;
        f[i] = *h[i];
        f[i].dtype = TIDE_DTYPE_F32;
        bytes[i] = (size_t)cpu_numel(h[i]) * sizeof(float);
        st = cpu_alloc(dev, bytes[i], &buf[i]);
        f[i].data = buf[i];
        if (st == TIDE_OK && i < 3)
            st = cpu_copy(dev, &f[i], h[i]);
    }
    if (st == TIDE_OK) {
        tide_kernel_call fc = *c;
        fc.dtype = TIDE_DTYPE_F32;
        fc.in[0] = &f[0], fc.in[1] = &f[1], fc.in[2] = h[2] ? &f[2] : NULL, fc.out[0] = &f[3];
        st = cpu_linear(dev, &fc);
    }
    if (st == TIDE_OK)
        st = cpu_copy(dev, h[3], &f[3]);
    for (int i = 0; i < N; i++)
        if (buf[i])
            cpu_free(dev, buf[i], bytes[i]);
    return st;
}

/* ReLU in place over n bfloat16 values, tide's relu (x < 0 ? 0 : x): NaN and -0 stay */
static void relu_bf16(uint16_t *y, int64_t n) {
#pragma omp parallel for schedule(static) if (n >= CPU_PAR_GRAIN)
    for (int64_t i = 0; i < n; i++) {
        uint16_t v = y[i], mag = v & 0x7fff;
        if ((v & 0x8000) && mag != 0 && mag <= 0x7f80) /* negative, -inf included, not NaN */
            y[i] = 0;
    }
}

tide_status cpu_linear(tide_device *dev, const tide_kernel_call *c) {
    tide_dtype dt = c->dtype;
    tide_act   act = (tide_act)c->p[2].i;
    tide_kview y3, x3, wt;
    tide_linear_views(c, &y3, &x3, &wt);
    /* oneDNN's ReLU is max(x, 0), which makes NaN 0 where tide's and PyTorch's keep it: float32
     * ReLU takes the gemm and the pass, bfloat16 oneDNN's product and a pass of its own */
    int big = (double)c->rows * (double)c->d * (double)c->n >= LINEAR_DNNL_MIN;
    int dnnl = dt == TIDE_DTYPE_BF16 || (dt == TIDE_DTYPE_F32 && big && act != TIDE_ACT_RELU);
    if (dnnl &&
        cpu_linear_dnnl(dev, &y3, &x3, &wt, c->in[2], act == TIDE_ACT_RELU ? TIDE_ACT_NONE : act)) {
        if (act == TIDE_ACT_RELU)
            relu_bf16(c->out[0]->data, c->rows * c->n);
        return TIDE_OK;
    }
    if (dt == TIDE_DTYPE_F32 || dt == TIDE_DTYPE_F64)
        return linear_float(dev, c);
    if (!cpu_is_half(dt))
        return cpu_notsup("linear", dt);
    return linear_widened(dev, c);
}
