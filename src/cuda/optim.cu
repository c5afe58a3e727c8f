/*
 * optim.cu — the fused optimizer steps (tide_optim_step_; formulas in tide.h): one thread per
 * element reads the parameter, its gradient and its state once and writes them back. The core
 * hands contiguous views of one float dtype.
 */
#include "map.cuh"

/* the hyperparameters in the element type, computed once on the host */
template <typename T> struct optim_args {
    T    lr, wd, mom, keep, sign, b1, b2, eps, decay, step, inv_sqrt_bc2, alpha;
    T    ob1, ob2, oa; /* 1 - b1, 1 - b2, 1 - alpha in double, then rounded (PyTorch's values) */
    bool first, nesterov, decoupled;
};

template <typename T> __global__ void k_sgd(optim_args<T> a, int64_t n, T *p, const T *g, T *buf) {
    for (int64_t i = TIDE_GTID; i < n; i += TIDE_GSTRIDE) {
        T gi = a.sign * g[i];
        if (a.wd != T(0))
            gi += p[i] * a.wd;
        if (buf) {
            T b = a.first ? gi : buf[i] * a.mom + gi * a.keep;
            buf[i] = b;
            gi = a.nesterov ? gi + b * a.mom : b;
        }
        p[i] -= gi * a.lr;
    }
}

template <typename T>
__global__ void k_adam(optim_args<T> a, int64_t n, T *p, const T *g, T *m, T *v) {
    for (int64_t i = TIDE_GTID; i < n; i += TIDE_GSTRIDE) {
        T gi = a.sign * g[i], pi = p[i];
        if (a.wd != T(0)) {
            if (a.decoupled)
                pi *= a.decay;
            else
                gi += pi * a.wd;
        }
        T mi = m[i] * a.b1 + gi * a.ob1;
        T vi = v[i] * a.b2 + gi * gi * a.ob2;
        m[i] = mi;
        v[i] = vi;
        p[i] = pi - mi / (sqrt(vi) * a.inv_sqrt_bc2 + a.eps) * a.step;
    }
}

/* buf NULL without momentum, a (grad_avg) NULL unless centered */
template <typename T>
__global__ void k_rmsprop(optim_args<T> a, int64_t n, T *p, const T *g, T *v, T *buf, T *ga) {
    for (int64_t i = TIDE_GTID; i < n; i += TIDE_GSTRIDE) {
        T gi = a.sign * g[i];
        if (a.wd != T(0))
            gi += p[i] * a.wd;
        T vi = v[i] * a.alpha + gi * gi * a.oa;
        v[i] = vi;
        T avg;
        if (ga) {
            T ai = ga[i] * a.alpha + gi * a.oa;
            ga[i] = ai;
            avg = sqrt(vi - ai * ai) + a.eps;
        } else {
            avg = sqrt(vi) + a.eps;
        }
        if (buf) {
            T b = buf[i] * a.mom + gi / avg;
            buf[i] = b;
            p[i] -= b * a.lr;
        } else {
            p[i] -= gi / avg * a.lr;
        }
    }
}

template <typename T>
__global__ void k_adagrad(optim_args<T> a, int64_t n, T *p, const T *g, T *s) {
    for (int64_t i = TIDE_GTID; i < n; i += TIDE_GSTRIDE) {
        T gi = a.sign * g[i];
        if (a.wd != T(0))
            gi += p[i] * a.wd;
        T si = s[i] + gi * gi;
        s[i] = si;
        p[i] -= gi / (sqrt(si) + a.eps) * a.lr;
    }
}

template <typename T>
static tide_status launch(cudaStream_t stream, const tide_optim_hparams *h, const tide_kview *param,
                          const tide_kview *grad, const tide_kview *state1,
                          const tide_kview *state2, const tide_kview *state3) {
    optim_args<T> a;
    a.lr = (T)h->lr;
    a.wd = (T)h->weight_decay;
    a.mom = (T)h->momentum;
    a.keep = (T)(1 - h->dampening);
    a.sign = h->maximize ? T(-1) : T(1);
    a.b1 = (T)h->beta1;
    a.b2 = (T)h->beta2;
    a.eps = (T)h->eps;
    a.decay = (T)(1 - h->lr * h->weight_decay);
    a.alpha = (T)h->alpha;
    a.ob1 = (T)(1 - h->beta1);
    a.ob2 = (T)(1 - h->beta2);
    a.oa = (T)(1 - h->alpha);
    a.step = h->kind == TIDE_OPTIM_ADAM ? (T)(h->lr / h->bias_correction1) : T(0);
    a.inv_sqrt_bc2 = h->kind == TIDE_OPTIM_ADAM ? (T)(1 / sqrt(h->bias_correction2)) : T(0);
    a.first = h->first_step != 0;
    a.nesterov = h->nesterov != 0;
    a.decoupled = h->decoupled != 0;
    int64_t n = tide_cuda_numel(param);
    if (n == 0)
        return TIDE_OK;
    switch (h->kind) {
    case TIDE_OPTIM_SGD:
        TIDE_LAUNCH(k_sgd<T>, tide_map_grid(n), TIDE_CUDA_THREADS, 0, stream, a, n,
                    (T *)param->data, (const T *)grad->data,
                    state1 ? (T *)state1->data : (T *)NULL);
        TIDE_CUDA_LAUNCHED(k_sgd);
        break;
    case TIDE_OPTIM_ADAM:
        TIDE_LAUNCH(k_adam<T>, tide_map_grid(n), TIDE_CUDA_THREADS, 0, stream, a, n,
                    (T *)param->data, (const T *)grad->data, (T *)state1->data, (T *)state2->data);
        TIDE_CUDA_LAUNCHED(k_adam);
        break;
    case TIDE_OPTIM_RMSPROP:
        TIDE_LAUNCH(k_rmsprop<T>, tide_map_grid(n), TIDE_CUDA_THREADS, 0, stream, a, n,
                    (T *)param->data, (const T *)grad->data, (T *)state1->data,
                    state2 ? (T *)state2->data : (T *)NULL, state3 ? (T *)state3->data : (T *)NULL);
        TIDE_CUDA_LAUNCHED(k_rmsprop);
        break;
    case TIDE_OPTIM_ADAGRAD:
        TIDE_LAUNCH(k_adagrad<T>, tide_map_grid(n), TIDE_CUDA_THREADS, 0, stream, a, n,
                    (T *)param->data, (const T *)grad->data, (T *)state1->data);
        TIDE_CUDA_LAUNCHED(k_adagrad);
        break;
    }
    return TIDE_OK;
}

/* the kernel rows sgd_step_, adam_step_, rmsprop_step_ and adagrad_step_: the states in[2..4] */
static tide_status optim_row(tide_device *dev, const tide_kernel_call *c) {
    const tide_optim_hparams h = tide_optim_hparams_of(c);
    const tide_kview        *param = c->in[0];
    if (param->dtype != TIDE_DTYPE_F32 && param->dtype != TIDE_DTYPE_F64)
        return tide_cuda_seterr(TIDE_ENOTSUP, "optim_step: cuda kernel needs float32 or float64");
    cudaStream_t stream = NULL;
    TIDE_TRY(tide_cuda_enter(dev, &stream));
    if (param->dtype == TIDE_DTYPE_F32)
        return launch<float>(stream, &h, param, c->in[1], c->in[2], c->in[3], c->in[4]);
    return launch<double>(stream, &h, param, c->in[1], c->in[2], c->in[3], c->in[4]);
}

extern "C" tide_status tide_cuda_sgd_step_(tide_device *dev, const tide_kernel_call *c) {
    return optim_row(dev, c);
}
extern "C" tide_status tide_cuda_adam_step_(tide_device *dev, const tide_kernel_call *c) {
    return optim_row(dev, c);
}
extern "C" tide_status tide_cuda_rmsprop_step_(tide_device *dev, const tide_kernel_call *c) {
    return optim_row(dev, c);
}
extern "C" tide_status tide_cuda_adagrad_step_(tide_device *dev, const tide_kernel_call *c) {
    return optim_row(dev, c);
}
