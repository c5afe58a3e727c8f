/*
 * activation_math.h — the math of the kernel rows activation and activation_backward (include/
 * tide.h's tide_activation): each activation's value and gradient in one compute type, PyTorch
 * 1.13's formulas (aten/src/ATen/native/cpu/Activation.cpp, and for softsign and tanhshrink the
 * gradients of its Python compositions) operation for operation, so NaN, +-inf and the kinks come
 * out as PyTorch's.
 *
 * A template body, included once per compute type (no include guard): the includer defines
 *   ACT_T           the compute type (float for float32 and the half types, double for float64)
 *   ACT_FN(name)    the function's name for that type (tide_act_##name##_f, ..._d)
 *   ACT_HD          the functions' qualifiers (__host__ __device__ under nvcc; always inlined on
 *                   the CPU, so a loop of them vectorizes)
 *   ACT_EXP, ACT_LOG1P, ACT_TANH  the type's functions (the CPU's float32: vec_math.h's, which
 *                   vectorize; CUDA's: its own; float64: libm's)
 * and gets, for each kind X of TIDE_ACTIVATION_KINDS (below), ACT_FN(X)(x, k) and
 * ACT_FN(X##_grad)(g, x, k), k the row's three parameters as tide_act_coefs (ACT_FN(coefs)).
 *
 * Those with two or three of exp, log1p and tanh come in two stages as well (TIDE_ACTIVATION_
 * STAGED): ACT_FN(X##_u)(x, k), an intermediate, and ACT_FN(X##_from)(x, u, k) (the gradient's:
 * ACT_FN(X##_grad_from)(g, x, u, k)), of which ACT_FN(X) is the composition. The CPU runs the
 * stages over a block each: one loop with them all inlined ran 1.4x slower (AVX2's 16 registers
 * spill).
 */

/* the kinds and their functions' names, for the loops and the dispatches (once) */
#ifndef TIDE_ACTIVATION_KINDS
#define TIDE_ACTIVATION_KINDS(X)                                                                   \
    X(HARDSWISH, hardswish)                                                                        \
    X(HARDSIGMOID, hardsigmoid)                                                                    \
    X(ELU, elu)                                                                                    \
    X(LEAKY_RELU, leaky_relu)                                                                      \
    X(HARDTANH, hardtanh)                                                                          \
    X(SOFTPLUS, softplus)                                                                          \
    X(SILU, silu)                                                                                  \
    X(MISH, mish)                                                                                  \
    X(LOGSIGMOID, logsigmoid)                                                                      \
    X(SOFTSIGN, softsign)                                                                          \
    X(TANHSHRINK, tanhshrink)                                                                      \
    X(SOFTSHRINK, softshrink)                                                                      \
    X(HARDSHRINK, hardshrink)                                                                      \
    X(THRESHOLD, threshold)
#endif

/* the kinds in two stages, value (V) or gradient (G): kind, function, stage 1's name */
#ifndef TIDE_ACTIVATION_STAGED
#define TIDE_ACTIVATION_STAGED(V, G)                                                               \
    V(SOFTPLUS, softplus, softplus_u)                                                              \
    V(LOGSIGMOID, logsigmoid, logsigmoid_u)                                                        \
    V(MISH, mish, mish_u)                                                                          \
    G(MISH, mish_grad, mish_u)
#endif

/* the parameters in the compute type, as PyTorch's kernels convert its Scalars (elu's
 * negcoef = alpha * scale is formed in that type) */
typedef struct ACT_FN(coefs) {
    ACT_T a, b, c;
} ACT_FN(coefs);

ACT_HD ACT_FN(coefs) ACT_FN(coefs_of)(int kind, double p1, double p2, double p3) {
    ACT_FN(coefs) k = {(ACT_T)p1, (ACT_T)p2, (ACT_T)p3};
    if (kind == TIDE_ACTIVATION_ELU) /* negcoef, poscoef, negiptcoef */
        k.a = (ACT_T)p1 * (ACT_T)p2;
    return k;
}

/* min(max(v, 0), 6) with NaN passing both, as PyTorch's vec::minimum / vec::maximum */
ACT_HD ACT_T ACT_FN(clamp06)(ACT_T v) {
    v = v < 0 ? (ACT_T)0 : v;
    return v > 6 ? (ACT_T)6 : v;
}

ACT_HD ACT_T ACT_FN(hardswish)(ACT_T x, ACT_FN(coefs) k) {
    (void)k;
    return x * ACT_FN(clamp06)(x + 3) / 6;
}
/* 0 below -3, g (x / 3 + 1/2) up to 3 (its bounds included), g above and for NaN */
ACT_HD ACT_T ACT_FN(hardswish_grad)(ACT_T g, ACT_T x, ACT_FN(coefs) k) {
    (void)k;
    return x < -3 ? (ACT_T)0 : x <= 3 ? g * (x / 3 + (ACT_T)0.5) : g;
}

ACT_HD ACT_T ACT_FN(hardsigmoid)(ACT_T x, ACT_FN(coefs) k) {
    (void)k;
    return ACT_FN(clamp06)(x + 3) / 6;
}
/* g / 6 strictly inside (-3, 3), 0 elsewhere (NaN too); 1/6 is float32's, in float64 as well */
ACT_HD ACT_T ACT_FN(hardsigmoid_grad)(ACT_T g, ACT_T x, ACT_FN(coefs) k) {
    (void)k;
    return x > -3 && x < 3 ? g * (ACT_T)(1.0f / 6.0f) : (ACT_T)0;
}

/* elu, selu and celu: k.a = alpha * scale, k.b = scale, k.c = input_scale; exp(x) - 1 (not
 * expm1), PyTorch 1.13's (-0 gives +0) */
ACT_HD ACT_T ACT_FN(elu)(ACT_T x, ACT_FN(coefs) k) {
    return x <= 0 ? (ACT_EXP(x * k.c) - 1) * k.a : x * k.b;
}
ACT_HD ACT_T ACT_FN(elu_grad)(ACT_T g, ACT_T x, ACT_FN(coefs) k) {
    return x <= 0 ? g * k.c * k.a * ACT_EXP(x * k.c) : g * k.b;
}

/* k.a the negative slope (the gradient at 0 and for NaN) */
ACT_HD ACT_T ACT_FN(leaky_relu)(ACT_T x, ACT_FN(coefs) k) {
    return x > 0 ? x : x * k.a;
}
ACT_HD ACT_T ACT_FN(leaky_relu_grad)(ACT_T g, ACT_T x, ACT_FN(coefs) k) {
    return x > 0 ? g : g * k.a;
}

/* x clamped to [k.a, k.b] (NaN stays); the gradient 0 at and beyond the bounds */
ACT_HD ACT_T ACT_FN(hardtanh)(ACT_T x, ACT_FN(coefs) k) {
    ACT_T v = x < k.a ? k.a : x;
    return v > k.b ? k.b : v;
}
ACT_HD ACT_T ACT_FN(hardtanh_grad)(ACT_T g, ACT_T x, ACT_FN(coefs) k) {
    return x <= k.a || x >= k.b ? (ACT_T)0 : g;
}

/* k.a beta, k.b threshold: x itself where beta x > threshold; u = exp(beta x) */
ACT_HD ACT_T ACT_FN(softplus_u)(ACT_T x, ACT_FN(coefs) k) {
    return ACT_EXP(x * k.a);
}
ACT_HD ACT_T ACT_FN(softplus_from)(ACT_T x, ACT_T u, ACT_FN(coefs) k) {
    return x * k.a > k.b ? x : ACT_LOG1P(u) / k.a;
}
ACT_HD ACT_T ACT_FN(softplus)(ACT_T x, ACT_FN(coefs) k) {
    return ACT_FN(softplus_from)(x, ACT_FN(softplus_u)(x, k), k);
}
ACT_HD ACT_T ACT_FN(softplus_grad)(ACT_T g, ACT_T x, ACT_FN(coefs) k) {
    ACT_T bx = x * k.a, z = ACT_EXP(bx);
    return bx > k.b ? g : g * z / (z + 1);
}

ACT_HD ACT_T ACT_FN(silu)(ACT_T x, ACT_FN(coefs) k) {
    (void)k;
    return x / (1 + ACT_EXP(-x));
}
ACT_HD ACT_T ACT_FN(silu_grad)(ACT_T g, ACT_T x, ACT_FN(coefs) k) {
    (void)k;
    ACT_T s = 1 / (1 + ACT_EXP(-x));
    return g * s * (1 + x * (1 - s));
}

/* u = softplus(x) = log1p(exp(x)) */
ACT_HD ACT_T ACT_FN(mish_u)(ACT_T x, ACT_FN(coefs) k) {
    (void)k;
    return ACT_LOG1P(ACT_EXP(x));
}
ACT_HD ACT_T ACT_FN(mish_from)(ACT_T x, ACT_T u, ACT_FN(coefs) k) {
    (void)k;
    return x * ACT_TANH(u);
}
ACT_HD ACT_T ACT_FN(mish)(ACT_T x, ACT_FN(coefs) k) {
    return ACT_FN(mish_from)(x, ACT_FN(mish_u)(x, k), k);
}
ACT_HD ACT_T ACT_FN(mish_grad_from)(ACT_T g, ACT_T x, ACT_T u, ACT_FN(coefs) k) {
    (void)k;
    ACT_T s = 1 / (1 + ACT_EXP(-x)), t = ACT_TANH(u);
    return g * (t + x * s * (1 - t * t));
}
ACT_HD ACT_T ACT_FN(mish_grad)(ACT_T g, ACT_T x, ACT_FN(coefs) k) {
    return ACT_FN(mish_grad_from)(g, x, ACT_FN(mish_u)(x, k), k);
}

/* min(x, 0) - log1p(exp(-|x|)); u = exp(-|x|) */
ACT_HD ACT_T ACT_FN(logsigmoid_u)(ACT_T x, ACT_FN(coefs) k) {
    (void)k;
    return ACT_EXP(-(x < 0 ? -x : x));
}
ACT_HD ACT_T ACT_FN(logsigmoid_from)(ACT_T x, ACT_T u, ACT_FN(coefs) k) {
    (void)k;
    return (x < 0 ? x : (ACT_T)0) - ACT_LOG1P(u);
}
ACT_HD ACT_T ACT_FN(logsigmoid)(ACT_T x, ACT_FN(coefs) k) {
    return ACT_FN(logsigmoid_from)(x, ACT_FN(logsigmoid_u)(x, k), k);
}
ACT_HD ACT_T ACT_FN(logsigmoid_grad)(ACT_T g, ACT_T x, ACT_FN(coefs) k) {
    (void)k;
    ACT_T z = ACT_EXP(-(x < 0 ? -x : x));
    ACT_T max_deriv = x < 0 ? (ACT_T)1 : (ACT_T)0, sign = x < 0 ? (ACT_T)1 : (ACT_T)-1;
    return (max_deriv - sign * (z / (1 + z))) * g;
}

/* x / (|x| + 1), PyTorch's composition; its gradient is autograd's through the division and the
 * absolute value: g / d - g (x / d / d) sgn(x), d = |x| + 1 (NaN at +-inf, as PyTorch's) */
ACT_HD ACT_T ACT_FN(softsign)(ACT_T x, ACT_FN(coefs) k) {
    (void)k;
    return x / ((x < 0 ? -x : x) + 1);
}
ACT_HD ACT_T ACT_FN(softsign_grad)(ACT_T g, ACT_T x, ACT_FN(coefs) k) {
    (void)k;
    ACT_T d = (x < 0 ? -x : x) + 1;
    ACT_T sgn = x > 0 ? (ACT_T)1 : x < 0 ? (ACT_T)-1 : (ACT_T)0;
    return g / d + -g * (x / d / d) * sgn;
}

/* x - tanh(x), PyTorch's composition; its gradient g - g (1 - tanh(x)^2) */
ACT_HD ACT_T ACT_FN(tanhshrink)(ACT_T x, ACT_FN(coefs) k) {
    (void)k;
    return x - ACT_TANH(x);
}
ACT_HD ACT_T ACT_FN(tanhshrink_grad)(ACT_T g, ACT_T x, ACT_FN(coefs) k) {
    (void)k;
    ACT_T t = ACT_TANH(x);
    return g + -g * (1 - t * t);
}

/* k.a lambd: x - lambd above lambd, x + lambd below -lambd, 0 between and for NaN; the
 * gradient (hardshrink's too) 0 in [-lambd, lambd], its bounds included, g elsewhere and for NaN */
ACT_HD ACT_T ACT_FN(softshrink)(ACT_T x, ACT_FN(coefs) k) {
    return x > k.a ? x - k.a : x < -k.a ? x + k.a : (ACT_T)0;
}
ACT_HD ACT_T ACT_FN(softshrink_grad)(ACT_T g, ACT_T x, ACT_FN(coefs) k) {
    return x >= -k.a && x <= k.a ? (ACT_T)0 : g;
}

/* k.a lambd: 0 in [-lambd, lambd], x elsewhere (NaN stays) */
ACT_HD ACT_T ACT_FN(hardshrink)(ACT_T x, ACT_FN(coefs) k) {
    return x >= -k.a && x <= k.a ? (ACT_T)0 : x;
}
ACT_HD ACT_T ACT_FN(hardshrink_grad)(ACT_T g, ACT_T x, ACT_FN(coefs) k) {
    return x >= -k.a && x <= k.a ? (ACT_T)0 : g;
}

/* k.a threshold, k.b value: value where x <= threshold, x elsewhere (NaN stays) */
ACT_HD ACT_T ACT_FN(threshold)(ACT_T x, ACT_FN(coefs) k) {
    return x <= k.a ? k.b : x;
}
ACT_HD ACT_T ACT_FN(threshold_grad)(ACT_T g, ACT_T x, ACT_FN(coefs) k) {
    return x <= k.a ? (ACT_T)0 : g;
}

/* by kind, one element (the CUDA kernels and the CPU's half types): the value, or with
 * backward the gradient g * f'(x) */
ACT_HD ACT_T ACT_FN(apply)(int kind, int backward, ACT_T g, ACT_T x, ACT_FN(coefs) k) {
    switch (kind) {
#define ACT_CASE(E, name)                                                                          \
    case TIDE_ACTIVATION_##E:                                                                      \
        return backward ? ACT_FN(name##_grad)(g, x, k) : ACT_FN(name)(x, k);
        TIDE_ACTIVATION_KINDS(ACT_CASE)
#undef ACT_CASE
    default:
        return x;
    }
}
