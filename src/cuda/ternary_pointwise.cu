/*
 * ternary_pointwise.cu — the addcmul, addcdiv and lerp kernel rows (include/tide_kernels.def) on
 * CUDA: one map over x, two more operands and y (which may be x), in the compute type (float
 * for the half types, rounded once), in PyTorch's order of operations. The same formulas as
 * src/cpu/ternary_pointwise.c, whose specs run them on every device (spec/fused_pointwise_spec).
 */
#include "common.cuh"
#include "map.cuh"

template <typename C> __device__ __forceinline__ C tide_lerp_one(C x, C e, C w) {
    return w < (C)0.5 && w > (C)-0.5 ? x + w * (e - x) : e - (e - x) * ((C)1 - w);
}

template <int DT> struct addcmul_fn {
    typedef typename tide_dt<DT>::T T;
    typedef typename tide_dt<DT>::C C;
    C                               value;
    __device__ T                    operator()(T x, T a, T b) const {
                           return tide_store<DT>(tide_load<DT>(x) + value * tide_load<DT>(a) * tide_load<DT>(b));
    }
};

template <int DT> struct addcdiv_fn {
    typedef typename tide_dt<DT>::T T;
    typedef typename tide_dt<DT>::C C;
    C                               value;
    __device__ T                    operator()(T x, T a, T b) const {
                           return tide_store<DT>(tide_load<DT>(x) + value * tide_load<DT>(a) / tide_load<DT>(b));
    }
};

template <int DT> struct lerp_tensor_fn {
    typedef typename tide_dt<DT>::T T;
    __device__ T                    operator()(T x, T e, T w) const {
                           return tide_store<DT>(tide_lerp_one(tide_load<DT>(x), tide_load<DT>(e), tide_load<DT>(w)));
    }
};

template <int DT> struct lerp_number_fn {
    typedef typename tide_dt<DT>::T T;
    typedef typename tide_dt<DT>::C C;
    C                               w;
    __device__ T                    operator()(T x, T e) const {
                           return tide_store<DT>(tide_lerp_one(tide_load<DT>(x), tide_load<DT>(e), w));
    }
};

struct run_ternary {
    template <int DT> static tide_status run(tide_device *dev, const tide_kernel_call *c) {
        typedef typename tide_dt<DT>::T T;
        typedef typename tide_dt<DT>::C C;
        const tide_kview               *y = c->in[0], *x = c->in[1], *b = c->in[2], *w = c->in[3];
        C                               v = (C)c->p[0].f;
        if (c->kernel == TIDE_K_ADDCMUL)
            return tide_map3<addcmul_fn<DT>, T, T, T, T>(dev, {v}, y, x, b, w);
        if (c->kernel == TIDE_K_ADDCDIV)
            return tide_map3<addcdiv_fn<DT>, T, T, T, T>(dev, {v}, y, x, b, w);
        if (w)
            return tide_map3<lerp_tensor_fn<DT>, T, T, T, T>(dev, {}, y, x, b, w);
        return tide_map2<lerp_number_fn<DT>, T, T, T>(dev, {v}, y, x, b);
    }
};

static tide_status ternary(tide_device *dev, const tide_kernel_call *c, const char *name) {
    TIDE_CUDA_DISPATCH_FLOAT(c->dtype, run_ternary, dev, c);
    return tide_cuda_notsup(name, c->dtype);
}

extern "C" tide_status tide_cuda_addcmul(tide_device *dev, const tide_kernel_call *c) {
    return ternary(dev, c, "addcmul");
}
extern "C" tide_status tide_cuda_addcdiv(tide_device *dev, const tide_kernel_call *c) {
    return ternary(dev, c, "addcdiv");
}
extern "C" tide_status tide_cuda_lerp(tide_device *dev, const tide_kernel_call *c) {
    return ternary(dev, c, "lerp");
}
