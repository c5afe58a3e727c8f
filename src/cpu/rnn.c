/*
 * rnn.c — CPU kernels of one recurrent-cell step and its gradient (tide_rnn_cell). The math per
 * element is src/rnn_cell_math.h, shared with CUDA; this file loops over the [B, H] units. The
 * core hands contiguous views of one float dtype with checked shapes.
 */
#include "cpu.h"
#include "scalar_math.h"
#include "vec_math.h"

/* float32 cells use vec_math.h's activations, so the loop over units vectorizes (glibc's expf
 * and tanhf are scalar calls: a quarter of an LSTM training step); float64 keeps libm's */
static inline float cpu_rnn_sigmoid_f(float x) {
    return cpu_vsigmoidf(x);
}
static inline float cpu_rnn_tanh_f(float x) {
    return cpu_vtanhf(x);
}
static inline double cpu_rnn_sigmoid_d(double x) {
    return tide_sigmoid_d(x);
}
static inline double cpu_rnn_tanh_d(double x) {
    return tide_tanh_d(x);
}
#define TIDE_RNN_SIGMOID(S, x) cpu_rnn_sigmoid_##S(x)
#define TIDE_RNN_TANH(S, x)    cpu_rnn_tanh_##S(x)
#include "rnn_cell_math.h"

static tide_status rnn_check(const char *name, const tide_kview *ref, const tide_kview *const *v,
                             int n) {
    if (ref->dtype != TIDE_DTYPE_F32 && ref->dtype != TIDE_DTYPE_F64)
        return cpu_notsup(name, ref->dtype);
    for (int i = 0; i < n; i++)
        if (v[i] && (v[i]->dtype != ref->dtype || v[i]->ndim != 2 || !cpu_is_contiguous(v[i])))
            return tide_seterr(TIDE_EINVAL,
                               "%s: cpu kernel needs contiguous 2-d views of one dtype", name);
    return TIDE_OK;
}

/* The units of one row: one SIMD loop, in the copies CPU_HOT builds (cpu.h): the activations
 * need AVX's registers, with SSE's 16 the constants spill */
#define RNN_ROW_FNS(T, S)                                                                          \
    CPU_HOT static void lstm_fwd_row_##S(int64_t b, int64_t H, const T *x, const T *y, const T *p, \
                                         T *o, T *s) {                                             \
        _Pragma("omp simd") for (int64_t j = 0; j < H; j++)                                        \
            tide_lstm_fwd_##S(b, j, H, x, y, p, o, s);                                             \
    }                                                                                              \
    CPU_HOT static void gru_fwd_row_##S(int64_t b, int64_t H, const T *x, const T *y, const T *p,  \
                                        T *o, T *s) {                                              \
        _Pragma("omp simd") for (int64_t j = 0; j < H; j++)                                        \
            tide_gru_fwd_##S(b, j, H, x, y, p, o, s);                                              \
    }                                                                                              \
    CPU_HOT static void lstm_bwd_row_##S(int64_t b, int64_t H, const T *s, const T *p, const T *o, \
                                         const T *g, T *di, T *dp) {                               \
        _Pragma("omp simd") for (int64_t j = 0; j < H; j++)                                        \
            tide_lstm_bwd_##S(b, j, H, s, p, o, g, di, dp);                                        \
    }                                                                                              \
    CPU_HOT static void gru_bwd_row_##S(int64_t b, int64_t H, const T *s, const T *p, const T *g,  \
                                        T *di, T *dj, T *dp) {                                     \
        _Pragma("omp simd") for (int64_t j = 0; j < H; j++)                                        \
            tide_gru_bwd_##S(b, j, H, s, p, g, di, dj, dp);                                        \
    }

RNN_ROW_FNS(float, f)
RNN_ROW_FNS(double, d)

/* one step: rows split across threads (gated cells), or the elements (plain RNN) */
#define RNN_FWD(T, S)                                                                              \
    do {                                                                                           \
        const T *x = (const T *)gi->data, *y = (const T *)gh->data;                                \
        T       *o = (T *)out->data;                                                               \
        if (kind == TIDE_RNN_LSTM || kind == TIDE_RNN_GRU) {                                       \
            const T *p = (const T *)prev->data;                                                    \
            T       *s = (T *)saved->data;                                                         \
            int      lstm = kind == TIDE_RNN_LSTM;                                                 \
            _Pragma("omp parallel for schedule(static) if (par)") for (int64_t b = 0; b < B;       \
                                                                       b++) {                      \
                if (lstm)                                                                          \
                    lstm_fwd_row_##S(b, H, x, y, p, o, s);                                         \
                else                                                                               \
                    gru_fwd_row_##S(b, H, x, y, p, o, s);                                          \
            }                                                                                      \
        } else {                                                                                   \
            int relu = kind == TIDE_RNN_RELU;                                                      \
            _Pragma("omp parallel for simd schedule(static) if (par)") for (int64_t k = 0;         \
                                                                            k < B * H; k++)        \
                tide_rnn_fwd_##S(k, relu, x, y, o);                                                \
        }                                                                                          \
    } while (0)

static tide_status cell_step(tide_device *dev, tide_rnn_kind kind, const tide_kview *out,
                             const tide_kview *saved, const tide_kview *gi, const tide_kview *gh,
                             const tide_kview *prev) {
    (void)dev;
    const char             *name = "rnn_cell";
    const tide_kview *const v[] = {out, saved, gi, gh, prev};
    TIDE_TRY(rnn_check(name, gi, v, 5));
    int gated = kind == TIDE_RNN_LSTM || kind == TIDE_RNN_GRU;
    if (gated && (!saved || !prev))
        return tide_seterr(TIDE_EINVAL, "%s: this cell kind needs saved and prev views", name);
    int64_t B = out->shape[0], H = kind == TIDE_RNN_LSTM ? out->shape[1] / 2 : out->shape[1];
    int     par = B > 1 && B * H * 8 >= CPU_PAR_GRAIN_HEAVY;
    if (gi->dtype == TIDE_DTYPE_F32)
        RNN_FWD(float, f);
    else
        RNN_FWD(double, d);
    return TIDE_OK;
}

#define RNN_BWD(T, S)                                                                              \
    do {                                                                                           \
        const T *o = (const T *)out->data, *g = (const T *)grad_out->data;                         \
        T       *di = (T *)dgi->data;                                                              \
        if (kind == TIDE_RNN_LSTM || kind == TIDE_RNN_GRU) {                                       \
            const T *s = (const T *)saved->data, *p = (const T *)prev->data;                       \
            T       *dp = (T *)dprev->data, *dj = dgh ? (T *)dgh->data : NULL;                     \
            int      lstm = kind == TIDE_RNN_LSTM;                                                 \
            _Pragma("omp parallel for schedule(static) if (par)") for (int64_t b = 0; b < B;       \
                                                                       b++) {                      \
                if (lstm)                                                                          \
                    lstm_bwd_row_##S(b, H, s, p, o, g, di, dp);                                    \
                else                                                                               \
                    gru_bwd_row_##S(b, H, s, p, g, di, dj, dp);                                    \
            }                                                                                      \
        } else {                                                                                   \
            int relu = kind == TIDE_RNN_RELU;                                                      \
            _Pragma("omp parallel for simd schedule(static) if (par)") for (int64_t k = 0;         \
                                                                            k < B * H; k++)        \
                tide_rnn_bwd_##S(k, relu, o, g, di);                                               \
        }                                                                                          \
    } while (0)

static tide_status cell_step_backward(tide_device *dev, tide_rnn_kind kind, const tide_kview *dgi,
                                      const tide_kview *dgh, const tide_kview *dprev,
                                      const tide_kview *saved, const tide_kview *prev,
                                      const tide_kview *out, const tide_kview *grad_out) {
    (void)dev;
    const char             *name = "rnn_cell_backward";
    const tide_kview *const v[] = {dgi, dgh, dprev, saved, prev, out, grad_out};
    TIDE_TRY(rnn_check(name, out, v, 7));
    int gated = kind == TIDE_RNN_LSTM || kind == TIDE_RNN_GRU;
    if (gated && (!saved || !prev || !dprev || (kind == TIDE_RNN_GRU && !dgh)))
        return tide_seterr(TIDE_EINVAL, "%s: this cell kind needs saved, prev and dprev views",
                           name);
    int64_t B = out->shape[0], H = kind == TIDE_RNN_LSTM ? out->shape[1] / 2 : out->shape[1];
    int     par = B > 1 && B * H * 8 >= CPU_PAR_GRAIN_HEAVY;
    if (out->dtype == TIDE_DTYPE_F32)
        RNN_BWD(float, f);
    else
        RNN_BWD(double, d);
    return TIDE_OK;
}

/* ---- the kernel rows rnn_step, lstm_step, gru_step and their gradients (CPU column HALF) ---- */

static tide_status step_row(tide_device *dev, const tide_kernel_call *c) {
    tide_rnn_views v = tide_rnn_views_of(c);
    return cell_step(dev, v.kind, v.out, v.saved, v.gi, v.gh, v.prev);
}
static tide_status step_backward_row(tide_device *dev, const tide_kernel_call *c) {
    tide_rnn_views v = tide_rnn_views_of(c);
    return cell_step_backward(dev, v.kind, v.dgi, v.dgh, v.dprev, v.saved, v.prev, v.out,
                              v.grad_out);
}
tide_status cpu_rnn_step(tide_device *dev, const tide_kernel_call *c) {
    return step_row(dev, c);
}
tide_status cpu_rnn_step_backward(tide_device *dev, const tide_kernel_call *c) {
    return step_backward_row(dev, c);
}
tide_status cpu_lstm_step(tide_device *dev, const tide_kernel_call *c) {
    return step_row(dev, c);
}
tide_status cpu_lstm_step_backward(tide_device *dev, const tide_kernel_call *c) {
    return step_backward_row(dev, c);
}
tide_status cpu_gru_step(tide_device *dev, const tide_kernel_call *c) {
    return step_row(dev, c);
}
tide_status cpu_gru_step_backward(tide_device *dev, const tide_kernel_call *c) {
    return step_backward_row(dev, c);
}
