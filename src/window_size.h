/*
 * window_size.h — how many positions a sliding window takes along one dim (PyTorch's pooling
 * formula): the one rule by which the pooling and im2col ops (src/ops_nn.c), the kernel rows'
 * WINDOW kind (src/kernels.c) and the CPU's convolution (src/cpu/nn.c) size their outputs. A
 * header at the bottom, so that none of them reaches into another for it (kernels.c and ops_nn.c
 * each called the other).
 */
#ifndef TIDE_WINDOW_SIZE_H
#define TIDE_WINDOW_SIZE_H
#include <stdint.h>

/* a window of k taps dilated by d, stride s, over size padded by p each side; ceil_mode rounds
 * the count up (a last window may start in the input and run into the padding); -1 when the
 * sizes leave no output */
static inline int64_t tide_window_out_size(int64_t size, int k, int s, int p, int d,
                                           int ceil_mode) {
    int64_t span = size + 2 * (int64_t)p - (int64_t)d * (k - 1) - 1 + (ceil_mode ? s - 1 : 0);
    if (span < 0)
        return -1; /* the rounding below is toward zero, PyTorch's toward -inf: no output here */
    int64_t n = span / s + 1;
    if (ceil_mode && (n - 1) * s >= size + p) /* the last window would start in the padding */
        n--;
    return n;
}

#endif /* TIDE_WINDOW_SIZE_H */
