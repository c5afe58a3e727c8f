/*
 * activation.cu — the kernel rows activation and activation_backward on CUDA: an activation of
 * nn.functional (include/tide.h's tide_activation) or its gradient, one thread per element
 * (map.cuh: vectorized loads when contiguous). The math is src/activation_math.h's, the CPU
 * kernels' too, here with CUDA's expf, log1pf and tanhf; the half types compute in float32 and
 * round once, float64 in double.
 */
#include "map.cuh"

#define ACT_HD __host__ __device__ static inline

#define ACT_T        float
#define ACT_FN(name) tide_act_##name##_f
#define ACT_EXP      expf
#define ACT_LOG1P    log1pf
#define ACT_TANH     tanhf
#include "activation_math.h"
#undef ACT_T
#undef ACT_FN
#undef ACT_EXP
#undef ACT_LOG1P
#undef ACT_TANH

#define ACT_T        double
#define ACT_FN(name) tide_act_##name##_d
#define ACT_EXP      exp
#define ACT_LOG1P    log1p
#define ACT_TANH     tanh
#include "activation_math.h"
#undef ACT_T
#undef ACT_FN
#undef ACT_EXP
#undef ACT_LOG1P
#undef ACT_TANH

/* the float and double functions by compute type */
template <typename C> struct act_math;
template <> struct act_math<float> {
    typedef tide_act_coefs_f K;
    static K                 coefs(int kind, const tide_kernel_call *c) {
                        return tide_act_coefs_of_f(kind, c->p[1].f, c->p[2].f, c->p[3].f);
    }
    __device__ static float apply(int kind, int backward, float g, float x, K k) {
        return tide_act_apply_f(kind, backward, g, x, k);
    }
};
template <> struct act_math<double> {
    typedef tide_act_coefs_d K;
    static K                 coefs(int kind, const tide_kernel_call *c) {
                        return tide_act_coefs_of_d(kind, c->p[1].f, c->p[2].f, c->p[3].f);
    }
    __device__ static double apply(int kind, int backward, double g, double x, K k) {
        return tide_act_apply_d(kind, backward, g, x, k);
    }
};

template <int DT> struct activation_fn {
    typedef typename tide_dt<DT>::T T;
    typedef typename tide_dt<DT>::C C;
    int                             kind;
    typename act_math<C>::K         k;
    __device__ T                    operator()(T x) const {
                           return tide_store<DT>(act_math<C>::apply(kind, 0, C(0), tide_load<DT>(x), k));
    }
};

template <int DT> struct activation_grad_fn {
    typedef typename tide_dt<DT>::T T;
    typedef typename tide_dt<DT>::C C;
    int                             kind;
    typename act_math<C>::K         k;
    __device__ T                    operator()(T g, T x) const {
                           return tide_store<DT>(act_math<C>::apply(kind, 1, tide_load<DT>(g), tide_load<DT>(x), k));
    }
};

struct run_activation {
    template <int DT>
    static tide_status run(tide_device *dev, const tide_kernel_call *c, int backward) {
        typedef typename tide_dt<DT>::T T;
        typedef typename tide_dt<DT>::C C;
        int                             kind = (int)c->p[0].i;
        typename act_math<C>::K         k = act_math<C>::coefs(kind, c);
        if (backward)
            return tide_map2<activation_grad_fn<DT>, T, T, T>(dev, {kind, k}, c->out[0], c->in[0],
                                                              c->in[1]);
        return tide_map1<activation_fn<DT>, T, T>(dev, {kind, k}, c->out[0], c->in[0]);
    }
};

static tide_status activation_row(tide_device *dev, const tide_kernel_call *c, int backward) {
    TIDE_CUDA_DISPATCH_FLOAT(c->out[0]->dtype, run_activation, dev, c, backward);
    return tide_cuda_notsup(backward ? "activation_backward" : "activation", c->out[0]->dtype);
}

extern "C" tide_status tide_cuda_activation(tide_device *dev, const tide_kernel_call *c) {
    return activation_row(dev, c, 0);
}
extern "C" tide_status tide_cuda_activation_backward(tide_device *dev, const tide_kernel_call *c) {
    return activation_row(dev, c, 1);
}
