/*
 * rnn.cu — one recurrent-cell step and its gradient (tide_rnn_cell): one thread per (row b,
 * unit j), the math of src/rnn_cell_math.h (the CPU kernels' too). The core hands contiguous
 * views of one float dtype with checked shapes.
 */
#include "map.cuh"
#include "rnn_cell_math.h"

/* rnn_math<T>: rnn_cell_math.h's functions for T (suffix S: f for float, d for double) */
template <typename T> struct rnn_math;
#define RNN_MATH(T, S)                                                                             \
    template <> struct rnn_math<T> {                                                               \
        static __device__ void lstm_fwd(int64_t b, int64_t j, int64_t H, const T *gi, const T *gh, \
                                        const T *p, T *o, T *s) {                                  \
            tide_lstm_fwd_##S(b, j, H, gi, gh, p, o, s);                                           \
        }                                                                                          \
        static __device__ void gru_fwd(int64_t b, int64_t j, int64_t H, const T *gi, const T *gh,  \
                                       const T *p, T *o, T *s) {                                   \
            tide_gru_fwd_##S(b, j, H, gi, gh, p, o, s);                                            \
        }                                                                                          \
        static __device__ void rnn_fwd(int64_t k, int relu, const T *gi, const T *gh, T *o) {      \
            tide_rnn_fwd_##S(k, relu, gi, gh, o);                                                  \
        }                                                                                          \
        static __device__ void lstm_bwd(int64_t b, int64_t j, int64_t H, const T *s, const T *p,   \
                                        const T *o, const T *g, T *di, T *dp) {                    \
            tide_lstm_bwd_##S(b, j, H, s, p, o, g, di, dp);                                        \
        }                                                                                          \
        static __device__ void gru_bwd(int64_t b, int64_t j, int64_t H, const T *s, const T *p,    \
                                       const T *g, T *di, T *dj, T *dp) {                          \
            tide_gru_bwd_##S(b, j, H, s, p, g, di, dj, dp);                                        \
        }                                                                                          \
        static __device__ void rnn_bwd(int64_t k, int relu, const T *o, const T *g, T *di) {       \
            tide_rnn_bwd_##S(k, relu, o, g, di);                                                   \
        }                                                                                          \
    };
RNN_MATH(float, f)
RNN_MATH(double, d)
#undef RNN_MATH

template <typename T>
__global__ void k_rnn_cell(int kind, int64_t B, int64_t H, T *out, T *saved, const T *gi,
                           const T *gh, const T *prev) {
    for (int64_t k = TIDE_GTID; k < B * H; k += TIDE_GSTRIDE) {
        int64_t b = k / H, j = k % H;
        if (kind == TIDE_RNN_LSTM)
            rnn_math<T>::lstm_fwd(b, j, H, gi, gh, prev, out, saved);
        else if (kind == TIDE_RNN_GRU)
            rnn_math<T>::gru_fwd(b, j, H, gi, gh, prev, out, saved);
        else
            rnn_math<T>::rnn_fwd(k, kind == TIDE_RNN_RELU, gi, gh, out);
    }
}

template <typename T>
__global__ void k_rnn_cell_backward(int kind, int64_t B, int64_t H, T *dgi, T *dgh, T *dprev,
                                    const T *saved, const T *prev, const T *out, const T *go) {
    for (int64_t k = TIDE_GTID; k < B * H; k += TIDE_GSTRIDE) {
        int64_t b = k / H, j = k % H;
        if (kind == TIDE_RNN_LSTM)
            rnn_math<T>::lstm_bwd(b, j, H, saved, prev, out, go, dgi, dprev);
        else if (kind == TIDE_RNN_GRU)
            rnn_math<T>::gru_bwd(b, j, H, saved, prev, go, dgi, dgh, dprev);
        else
            rnn_math<T>::rnn_bwd(k, kind == TIDE_RNN_RELU, out, go, dgi);
    }
}

static void *data_or_null(const tide_kview *v) {
    return v ? v->data : NULL;
}

template <typename T>
static tide_status rnn_fwd_typed(cudaStream_t stream, tide_rnn_kind kind, int64_t B, int64_t H,
                                 const tide_kview *out, const tide_kview *saved,
                                 const tide_kview *gi, const tide_kview *gh,
                                 const tide_kview *prev) {
    TIDE_LAUNCH(k_rnn_cell<T>, tide_map_grid(B * H), TIDE_CUDA_THREADS, 0, stream, (int)kind, B, H,
                (T *)out->data, (T *)data_or_null(saved), (const T *)gi->data, (const T *)gh->data,
                (const T *)data_or_null(prev));
    TIDE_CUDA_LAUNCHED(k_rnn_cell);
    return TIDE_OK;
}

template <typename T>
static tide_status
rnn_bwd_typed(cudaStream_t stream, tide_rnn_kind kind, int64_t B, int64_t H, const tide_kview *dgi,
              const tide_kview *dgh, const tide_kview *dprev, const tide_kview *saved,
              const tide_kview *prev, const tide_kview *out, const tide_kview *grad_out) {
    TIDE_LAUNCH(k_rnn_cell_backward<T>, tide_map_grid(B * H), TIDE_CUDA_THREADS, 0, stream,
                (int)kind, B, H, (T *)dgi->data, (T *)data_or_null(dgh), (T *)data_or_null(dprev),
                (const T *)data_or_null(saved), (const T *)data_or_null(prev), (const T *)out->data,
                (const T *)grad_out->data);
    TIDE_CUDA_LAUNCHED(k_rnn_cell_backward);
    return TIDE_OK;
}

/* f(T(), stream, B, H) on dev for a cell step whose out is [B, H] (LSTM's [B, 2H]: h and c) of
 * T float32 or float64; nothing for an empty step, ENOTSUP naming op for another dtype */
template <typename F>
static tide_status run_step(tide_device *dev, tide_rnn_kind kind, const tide_kview *out,
                            const char *op, F f) {
    int64_t B = out->shape[0], H = kind == TIDE_RNN_LSTM ? out->shape[1] / 2 : out->shape[1];
    if (B * H == 0)
        return TIDE_OK;
    cudaStream_t stream = NULL;
    TIDE_TRY(tide_cuda_enter(dev, &stream));
    if (out->dtype == TIDE_DTYPE_F32)
        return f(float(), stream, B, H);
    if (out->dtype == TIDE_DTYPE_F64)
        return f(double(), stream, B, H);
    return tide_cuda_notsup(op, out->dtype);
}

static tide_status step_row(tide_device *dev, const tide_kernel_call *c, const char *op) {
    tide_rnn_views v = tide_rnn_views_of(c);
    return run_step(dev, v.kind, v.out, op, [&](auto z, cudaStream_t stream, int64_t B, int64_t H) {
        return rnn_fwd_typed<decltype(z)>(stream, v.kind, B, H, v.out, v.saved, v.gi, v.gh, v.prev);
    });
}

static tide_status step_backward_row(tide_device *dev, const tide_kernel_call *c, const char *op) {
    tide_rnn_views v = tide_rnn_views_of(c);
    return run_step(dev, v.kind, v.out, op, [&](auto z, cudaStream_t stream, int64_t B, int64_t H) {
        return rnn_bwd_typed<decltype(z)>(stream, v.kind, B, H, v.dgi, v.dgh, v.dprev, v.saved,
                                          v.prev, v.out, v.grad_out);
    });
}

/* the kernel rows rnn_step, lstm_step, gru_step and their gradients */
extern "C" tide_status tide_cuda_rnn_step(tide_device *dev, const tide_kernel_call *c) {
    return step_row(dev, c, "rnn_step");
}
extern "C" tide_status tide_cuda_rnn_step_backward(tide_device *dev, const tide_kernel_call *c) {
    return step_backward_row(dev, c, "rnn_step_backward");
}
extern "C" tide_status tide_cuda_lstm_step(tide_device *dev, const tide_kernel_call *c) {
    return step_row(dev, c, "lstm_step");
}
extern "C" tide_status tide_cuda_lstm_step_backward(tide_device *dev, const tide_kernel_call *c) {
    return step_backward_row(dev, c, "lstm_step_backward");
}
extern "C" tide_status tide_cuda_gru_step(tide_device *dev, const tide_kernel_call *c) {
    return step_row(dev, c, "gru_step");
}
extern "C" tide_status tide_cuda_gru_step_backward(tide_device *dev, const tide_kernel_call *c) {
    return step_backward_row(dev, c, "gru_step_backward");
}
