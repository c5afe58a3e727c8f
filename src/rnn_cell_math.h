/*
 * rnn_cell_math.h — the math of one recurrent-cell step for one (row b, unit j), shared by the
 * CPU (src/cpu/rnn.c) and CUDA (src/cuda/rnn.cu) kernels so the CPU tests cover what the GPU
 * runs. Layouts (contiguous, row b): gi, gh [B, G*H]; LSTM out [B, 2H] = (h, c), saved [B, 4H]
 * = activated (i, f, g, o); GRU out [B, H], saved [B, 4H] = (r, z, n, gh_n); RNN out [B, H].
 * PyTorch's gate orders and GRU's reset gate inside n: n = tanh(gi_n + r * gh_n).
 */
#ifndef TIDE_RNN_CELL_MATH_H
#define TIDE_RNN_CELL_MATH_H

#include "scalar_math.h"

/* the activations: a device may bring its own (the CPU its vectorizable float ones,
 * src/cpu/vec_math.h); the cell math around them is this file's */
#ifndef TIDE_RNN_SIGMOID
#define TIDE_RNN_SIGMOID(S, x) tide_sigmoid_##S(x)
#define TIDE_RNN_TANH(S, x)    tide_tanh_##S(x)
#endif

#define TIDE_RNN_CELL_DEFS(T, S)                                                                   \
    /* unit j's value in each [H] quarter of the row s (four gates) */                             \
    TIDE_HD void tide_rnn_put4_##S(T *s, int64_t H, int64_t j, T v0, T v1, T v2, T v3) {           \
        s[j] = v0;                                                                                 \
        s[H + j] = v1;                                                                             \
        s[2 * H + j] = v2;                                                                         \
        s[3 * H + j] = v3;                                                                         \
    }                                                                                              \
    TIDE_HD void tide_lstm_fwd_##S(int64_t b, int64_t j, int64_t H, const T *gi, const T *gh,      \
                                   const T *cp, T *out, T *sv) {                                   \
        const T *x = gi + b * 4 * H, *y = gh + b * 4 * H;                                          \
        T        i = TIDE_RNN_SIGMOID(S, x[j] + y[j]);                                             \
        T        f = TIDE_RNN_SIGMOID(S, x[H + j] + y[H + j]);                                     \
        T        g = TIDE_RNN_TANH(S, x[2 * H + j] + y[2 * H + j]);                                \
        T        o = TIDE_RNN_SIGMOID(S, x[3 * H + j] + y[3 * H + j]);                             \
        T        c = f * cp[b * H + j] + i * g;                                                    \
        out[b * 2 * H + j] = o * TIDE_RNN_TANH(S, c);                                              \
        out[b * 2 * H + H + j] = c;                                                                \
        tide_rnn_put4_##S(sv + b * 4 * H, H, j, i, f, g, o);                                       \
    }                                                                                              \
    TIDE_HD void tide_lstm_bwd_##S(int64_t b, int64_t j, int64_t H, const T *sv, const T *cp,      \
                                   const T *out, const T *go, T *dg, T *dcp) {                     \
        const T *s = sv + b * 4 * H;                                                               \
        T        i = s[j], f = s[H + j], g = s[2 * H + j], o = s[3 * H + j];                       \
        T        tc = TIDE_RNN_TANH(S, out[b * 2 * H + H + j]);                                    \
        T        dh = go[b * 2 * H + j];                                                           \
        T        dc = go[b * 2 * H + H + j] + dh * o * (1 - tc * tc);                              \
        tide_rnn_put4_##S(dg + b * 4 * H, H, j, dc * g * i * (1 - i),                              \
                          dc * cp[b * H + j] * f * (1 - f), dc * i * (1 - g * g),                  \
                          dh * tc * o * (1 - o));                                                  \
        dcp[b * H + j] = dc * f;                                                                   \
    }                                                                                              \
    TIDE_HD void tide_gru_fwd_##S(int64_t b, int64_t j, int64_t H, const T *gi, const T *gh,       \
                                  const T *hp, T *out, T *sv) {                                    \
        const T *x = gi + b * 3 * H, *y = gh + b * 3 * H;                                          \
        T        r = TIDE_RNN_SIGMOID(S, x[j] + y[j]);                                             \
        T        z = TIDE_RNN_SIGMOID(S, x[H + j] + y[H + j]);                                     \
        T        hn = y[2 * H + j];                                                                \
        T        n = TIDE_RNN_TANH(S, x[2 * H + j] + r * hn);                                      \
        out[b * H + j] = (1 - z) * n + z * hp[b * H + j];                                          \
        tide_rnn_put4_##S(sv + b * 4 * H, H, j, r, z, n, hn);                                      \
    }                                                                                              \
    TIDE_HD void tide_gru_bwd_##S(int64_t b, int64_t j, int64_t H, const T *sv, const T *hp,       \
                                  const T *go, T *dgi, T *dgh, T *dhp) {                           \
        const T *s = sv + b * 4 * H;                                                               \
        T        r = s[j], z = s[H + j], n = s[2 * H + j], hn = s[3 * H + j];                      \
        T        dh = go[b * H + j];                                                               \
        T        dnp = dh * (1 - z) * (1 - n * n);                                                 \
        T        dzp = dh * (hp[b * H + j] - n) * z * (1 - z);                                     \
        T        drp = dnp * hn * r * (1 - r);                                                     \
        T       *di = dgi + b * 3 * H, *dj = dgh + b * 3 * H;                                      \
        di[j] = dj[j] = drp;                                                                       \
        di[H + j] = dj[H + j] = dzp;                                                               \
        di[2 * H + j] = dnp;                                                                       \
        dj[2 * H + j] = dnp * r;                                                                   \
        dhp[b * H + j] = dh * z;                                                                   \
    }                                                                                              \
    TIDE_HD void tide_rnn_fwd_##S(int64_t k, int relu, const T *gi, const T *gh, T *out) {         \
        T a = gi[k] + gh[k];                                                                       \
        out[k] = relu ? (a > 0 ? a : (T)0) : TIDE_RNN_TANH(S, a);                                  \
    }                                                                                              \
    TIDE_HD void tide_rnn_bwd_##S(int64_t k, int relu, const T *out, const T *go, T *dgi) {        \
        T h = out[k];                                                                              \
        dgi[k] = relu ? (h > 0 ? go[k] : (T)0) : go[k] * (1 - h * h);                              \
    }

TIDE_RNN_CELL_DEFS(float, f)
TIDE_RNN_CELL_DEFS(double, d)

#endif
