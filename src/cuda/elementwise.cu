/*
 * elementwise.cu — binary, compare, scalar and unary ops, and where. The math of each op is the
 * shared scalar_math.h function; floats compute in float (half types too) or double, integers
 * exactly in int64 where the op allows it and through the double functions otherwise.
 */
#include "map.cuh"

#include <type_traits>

// ---- scalar math by compute type ------------------------------------------------------------

/* The cheap ops are inlined into every kernel; pow, remainder, fmod, floor_divide and all unary
 * math are out-of-line calls shared by the kernels of every dtype: inlined, they multiplied the
 * size of this file's machine code (and its build time) many times over for no measurable gain. */
__device__ __noinline__ float bin_heavy(int op, float a, float b) {
    switch (op) {
    case TIDE_OP_POW:
        return tide_pow_f(a, b);
    case TIDE_OP_REMAINDER:
        return tide_remainder_f(a, b);
    case TIDE_OP_FMOD:
        return tide_fmod_f(a, b);
    default:
        return tide_floordiv_f(a, b);
    }
}

__device__ __noinline__ double bin_heavy(int op, double a, double b) {
    switch (op) {
    case TIDE_OP_POW:
        return tide_pow_d(a, b);
    case TIDE_OP_REMAINDER:
        return tide_remainder_d(a, b);
    case TIDE_OP_FMOD:
        return tide_fmod_d(a, b);
    default:
        return tide_floordiv_d(a, b);
    }
}

__device__ __forceinline__ float bin_apply(int op, float a, float b) {
    switch (op) {
    case TIDE_OP_ADD:
        return tide_add_f(a, b);
    case TIDE_OP_SUB:
        return tide_sub_f(a, b);
    case TIDE_OP_MUL:
        return tide_mul_f(a, b);
    case TIDE_OP_DIV:
        return tide_div_f(a, b);
    case TIDE_OP_POW:
    case TIDE_OP_REMAINDER:
    case TIDE_OP_FMOD:
    case TIDE_OP_FLOORDIV:
        return bin_heavy(op, a, b);
    case TIDE_OP_MAXIMUM:
        return tide_maximum_f(a, b);
    case TIDE_OP_MINIMUM:
        return tide_minimum_f(a, b);
    default:
        return 0;
    }
}

__device__ __forceinline__ double bin_apply(int op, double a, double b) {
    switch (op) {
    case TIDE_OP_ADD:
        return tide_add_d(a, b);
    case TIDE_OP_SUB:
        return tide_sub_d(a, b);
    case TIDE_OP_MUL:
        return tide_mul_d(a, b);
    case TIDE_OP_DIV:
        return tide_div_d(a, b);
    case TIDE_OP_POW:
    case TIDE_OP_REMAINDER:
    case TIDE_OP_FMOD:
    case TIDE_OP_FLOORDIV:
        return bin_heavy(op, a, b);
    case TIDE_OP_MAXIMUM:
        return tide_maximum_d(a, b);
    case TIDE_OP_MINIMUM:
        return tide_minimum_d(a, b);
    default:
        return 0;
    }
}

/* integers: exact (wrapping) where the result is an integer, the double math otherwise; division
 * is scalar_math.h's, as on the CPU (int32 computed in int64 wraps back the same way): a zero
 * divisor gives 0, MIN // -1 is MIN, never a trap */
__device__ __forceinline__ int64_t bin_apply(int op, int64_t a, int64_t b) {
    switch (op) {
    case TIDE_OP_ADD:
        return (int64_t)((uint64_t)a + (uint64_t)b);
    case TIDE_OP_SUB:
        return (int64_t)((uint64_t)a - (uint64_t)b);
    case TIDE_OP_MUL:
        return (int64_t)((uint64_t)a * (uint64_t)b);
    case TIDE_OP_DIV:
        return (int64_t)tide_div_d((double)a, (double)b);
    case TIDE_OP_POW:
        return (int64_t)tide_pow_d((double)a, (double)b);
    case TIDE_OP_REMAINDER:
        return tide_remainder_i64(a, b);
    case TIDE_OP_FMOD:
        return tide_fmod_i64(a, b);
    case TIDE_OP_FLOORDIV:
        return tide_floordiv_i64(a, b);
    case TIDE_OP_MAXIMUM:
        return a > b ? a : b;
    case TIDE_OP_MINIMUM:
        return a < b ? a : b;
    default:
        return 0;
    }
}

template <typename C> __device__ __forceinline__ uint8_t cmp_apply(int op, C a, C b) {
    switch (op) {
    case TIDE_OP_EQ:
        return a == b;
    case TIDE_OP_NE:
        return a != b;
    case TIDE_OP_LT:
        return a < b;
    case TIDE_OP_LE:
        return a <= b;
    case TIDE_OP_GT:
        return a > b;
    case TIDE_OP_GE:
        return a >= b;
    default:
        return 0;
    }
}

__device__ __noinline__ float un_apply(int op, float a, float lo, float hi) {
    switch (op) {
    case TIDE_OP_NEG:
        return tide_neg_f(a);
    case TIDE_OP_ABS:
        return tide_abs_f(a);
    case TIDE_OP_EXP:
        return tide_exp_f(a);
    case TIDE_OP_LOG:
        return tide_log_f(a);
    case TIDE_OP_SQRT:
        return tide_sqrt_f(a);
    case TIDE_OP_RSQRT:
        return tide_rsqrt_f(a);
    case TIDE_OP_TANH:
        return tide_tanh_f(a);
    case TIDE_OP_SIGMOID:
        return tide_sigmoid_f(a);
    case TIDE_OP_RELU:
        return tide_relu_f(a);
    case TIDE_OP_GELU:
        return tide_gelu_f(a);
    case TIDE_OP_SIN:
        return tide_sin_f(a);
    case TIDE_OP_COS:
        return tide_cos_f(a);
    case TIDE_OP_SIGN:
        return tide_sign_f(a);
    case TIDE_OP_CLAMP:
        return tide_clamp_f(a, lo, hi);
    default:
        return 0;
    }
}

__device__ __noinline__ double un_apply(int op, double a, double lo, double hi) {
    switch (op) {
    case TIDE_OP_NEG:
        return tide_neg_d(a);
    case TIDE_OP_ABS:
        return tide_abs_d(a);
    case TIDE_OP_EXP:
        return tide_exp_d(a);
    case TIDE_OP_LOG:
        return tide_log_d(a);
    case TIDE_OP_SQRT:
        return tide_sqrt_d(a);
    case TIDE_OP_RSQRT:
        return tide_rsqrt_d(a);
    case TIDE_OP_TANH:
        return tide_tanh_d(a);
    case TIDE_OP_SIGMOID:
        return tide_sigmoid_d(a);
    case TIDE_OP_RELU:
        return tide_relu_d(a);
    case TIDE_OP_GELU:
        return tide_gelu_d(a);
    case TIDE_OP_SIN:
        return tide_sin_d(a);
    case TIDE_OP_COS:
        return tide_cos_d(a);
    case TIDE_OP_SIGN:
        return tide_sign_d(a);
    case TIDE_OP_CLAMP:
        return tide_clamp_d(a, lo, hi);
    default:
        return 0;
    }
}

/* integers: clamp compares in int64 with bounds already in the dtype's range (clamp_bound), so
 * int64 values beyond 2^53 stay exact and a bound outside the dtype saturates as on the CPU */
__device__ __forceinline__ int64_t un_apply(int op, int64_t a, int64_t lo, int64_t hi) {
    switch (op) {
    case TIDE_OP_NEG:
        return (int64_t)(0 - (uint64_t)a);
    case TIDE_OP_ABS:
        return a < 0 ? (int64_t)(0 - (uint64_t)a) : a;
    case TIDE_OP_SIGN:
        return (a > 0) - (a < 0);
    case TIDE_OP_RELU:
        return a > 0 ? a : 0;
    case TIDE_OP_CLAMP:
        return a < lo ? lo : a > hi ? hi : a;
    default:
        return (int64_t)un_apply(op, (double)a, (double)lo, (double)hi);
    }
}

// ---- functors -------------------------------------------------------------------------------

template <int DT> struct binary_fn {
    typedef typename tide_dt<DT>::T T;
    typedef typename tide_dt<DT>::C C;
    int                             op;
    __device__ __forceinline__ T    operator()(T a, T b) const {
           return tide_store<DT>(bin_apply(op, tide_load<DT>(a), tide_load<DT>(b)));
    }
};

template <int DT> struct compare_fn {
    typedef typename tide_dt<DT>::T    T;
    int                                op;
    __device__ __forceinline__ uint8_t operator()(T a, T b) const {
        return cmp_apply(op, tide_load<DT>(a), tide_load<DT>(b));
    }
};

template <int DT> struct scalar_fn {
    typedef typename tide_dt<DT>::T T;
    typedef typename tide_dt<DT>::C C;
    int                             op;
    C                               s;
    int                             reverse;
    __device__ __forceinline__ T    operator()(T a) const {
           C x = tide_load<DT>(a);
           return tide_store<DT>(reverse ? bin_apply(op, s, x) : bin_apply(op, x, s));
    }
};

/* integer tensors compare in int64 with the scalar as the dtype holds it (scalar_int), as the
 * CPU does: exact beyond 2^53, where a compare in double says 2^53 + 1 == 2^53 (the core compares
 * a fractional or out-of-range scalar in float64: `x < 2.5` never reaches an integer kernel) */
template <int DT> struct scalar_cmp_fn {
    typedef typename tide_dt<DT>::T    T;
    typedef typename tide_dt<DT>::C    C;
    int                                op;
    C                                  s;
    int                                reverse;
    __device__ __forceinline__ uint8_t operator()(T a) const {
        C x = tide_load<DT>(a);
        return reverse ? cmp_apply(op, s, x) : cmp_apply(op, x, s);
    }
};

template <int DT> struct unary_fn {
    typedef typename tide_dt<DT>::T                                             T;
    typedef typename tide_dt<DT>::C                                             C;
    typedef typename std::conditional<tide_dt_is_float<DT>(), C, int64_t>::type P;
    int                                                                         op;
    P                                                                           lo, hi;
    __device__ __forceinline__ T operator()(T a) const {
        return tide_store<DT>(un_apply(op, tide_load<DT>(a), lo, hi));
    }
};

template <typename T> struct where_fn {
    __device__ __forceinline__ T operator()(uint8_t c, T a, T b) const {
        return c ? a : b;
    }
};

// ---- binary ---------------------------------------------------------------------------------

/* the op is a kernel argument: a uniform branch costs nothing next to the memory traffic, and
 * one kernel per op and dtype would multiply the build time */
struct run_binary {
    template <int DT>
    static tide_status run(tide_device *dev, tide_op op, const tide_kview *out, const tide_kview *a,
                           const tide_kview *b) {
        typedef typename tide_dt<DT>::T T;
        if (tide_op_family_of_cuda(op) == TIDE_FAMILY_COMPARE)
            return tide_map2<compare_fn<DT>, uint8_t, T, T>(dev, {op}, out, a, b);
        return tide_map2<binary_fn<DT>, T, T, T>(dev, {op}, out, a, b);
    }
};

static bool is_binary_op(tide_op op) {
    return op >= TIDE_OP_ADD && op <= TIDE_OP_GE;
}

extern "C" tide_status tide_cuda_binary(tide_device *dev, tide_op op, const tide_kview *out,
                                        const tide_kview *a, const tide_kview *b) {
    if (!is_binary_op(op))
        return tide_cuda_seterr(TIDE_EINVAL, "binary: op %d is not a binary op", (int)op);
    TIDE_CUDA_DISPATCH_ALL(a->dtype, run_binary, dev, op, out, a, b);
    return tide_cuda_notsup(tide_cuda_op_name(op), a->dtype);
}

struct run_binary_scalar {
    template <int DT>
    static tide_status run(tide_device *dev, tide_op op, const tide_kview *out, const tide_kview *a,
                           double s, int reverse) {
        typedef typename tide_dt<DT>::T T;
        typedef typename tide_dt<DT>::C C;
        /* the scalar as the CPU stores it in the dtype: an integer saturates (a plain cast of
         * 1e19 to int64 is undefined) */
        C c;
        if constexpr (tide_dt_is_float<DT>())
            c = (C)s;
        else
            c = tide_cuda_scalar_int((tide_dtype)DT, s);
        if (tide_op_family_of_cuda(op) == TIDE_FAMILY_COMPARE)
            return tide_map1<scalar_cmp_fn<DT>, uint8_t, T>(dev, {op, c, reverse}, out, a);
        return tide_map1<scalar_fn<DT>, T, T>(dev, {op, c, reverse}, out, a);
    }
};

extern "C" tide_status tide_cuda_binary_scalar(tide_device *dev, tide_op op, const tide_kview *out,
                                               const tide_kview *a, double s, int reverse) {
    if (!is_binary_op(op))
        return tide_cuda_seterr(TIDE_EINVAL, "binary: op %d is not a binary op", (int)op);
    TIDE_CUDA_DISPATCH_ALL(a->dtype, run_binary_scalar, dev, op, out, a, s, reverse);
    return tide_cuda_notsup(tide_cuda_op_name(op), a->dtype);
}

// ---- unary ----------------------------------------------------------------------------------

/* an integer dtype's clamp bound as the CPU takes it: rounded inwards (clamp(int, 0.5, 2.5)
 * keeps 1..2), then saturated to the dtype (u8 clamp(300, 400) is 255, not 300 cast to 44) */
static int64_t clamp_bound(tide_dtype dt, double v, bool lo) {
    if (dt == TIDE_DTYPE_BOOL)
        return lo ? v > 0 : v >= 1;
    return tide_cuda_scalar_int(dt, lo ? ceil(v) : floor(v));
}

struct run_unary {
    template <int DT>
    static tide_status run(tide_device *dev, tide_op op, const tide_kview *out, const tide_kview *a,
                           const double *params) {
        typedef typename tide_dt<DT>::T  T;
        typedef typename unary_fn<DT>::P P;
        double lo = params ? params[0] : -INFINITY, hi = params ? params[1] : INFINITY;
        if constexpr (tide_dt_is_float<DT>())
            return tide_map1<unary_fn<DT>, T, T>(dev, {op, (P)lo, (P)hi}, out, a);
        else
            return tide_map1<unary_fn<DT>, T, T>(
                dev,
                {op, clamp_bound((tide_dtype)DT, lo, true), clamp_bound((tide_dtype)DT, hi, false)},
                out, a);
    }
};

extern "C" tide_status tide_cuda_unary(tide_device *dev, tide_op op, const tide_kview *out,
                                       const tide_kview *a, const double *params) {
    if (op < TIDE_OP_NEG || op > TIDE_OP_CLAMP)
        return tide_cuda_seterr(TIDE_EINVAL, "unary: op %d is not a unary op", (int)op);
    TIDE_CUDA_DISPATCH_ALL(a->dtype, run_unary, dev, op, out, a, params);
    return tide_cuda_notsup(tide_cuda_op_name(op), a->dtype);
}

// ---- where ----------------------------------------------------------------------------------

template <typename T>
static tide_status where_bytes(tide_device *dev, const tide_kview *out, const tide_kview *cond,
                               const tide_kview *a, const tide_kview *b) {
    return tide_map3<where_fn<T>, T, uint8_t, T, T>(dev, where_fn<T>(), out, cond, a, b);
}

extern "C" tide_status tide_cuda_where(tide_device *dev, const tide_kview *out,
                                       const tide_kview *cond, const tide_kview *a,
                                       const tide_kview *b) {
    switch (tide_cuda_dtype_size(out->dtype)) {
    case 1:
        return where_bytes<uint8_t>(dev, out, cond, a, b);
    case 2:
        return where_bytes<uint16_t>(dev, out, cond, a, b);
    case 4:
        return where_bytes<uint32_t>(dev, out, cond, a, b);
    case 8:
        return where_bytes<uint64_t>(dev, out, cond, a, b);
    default:
        return tide_cuda_notsup("where", out->dtype);
    }
}
