/* ops.c — the elementwise and reduction ops: validate, same-device check, promote and cast,
 * allocate the output on the inputs' device, dispatch to its backend. */
#include "tide_impl.h"

#include <float.h>
#include "dtype_convert.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- shared checks ------------------------------------------------------------------------ */

tide_status tide_check_same_device(const char *op, const tide_tensor *a, const tide_tensor *b) {
    tide_device *da = a->storage->dev, *db = b->storage->dev;
    if (da == db)
        return TIDE_OK;
    return tide_seterr(TIDE_EDEVICE,
                       "%s: expected all tensors on the same device, found %s and %s; move one "
                       "with :to(\"%s\")",
                       op, da->name, db->name, db->name);
}

tide_status tide_broadcast_shape(const char *op, int an, const int64_t *as, int bn,
                                 const int64_t *bs, int *on, int64_t *os) {
    int n = an > bn ? an : bn;
    for (int i = 0; i < n; i++) {
        int     ia = i - (n - an), ib = i - (n - bn);
        int64_t sa = ia >= 0 ? as[ia] : 1, sb = ib >= 0 ? bs[ib] : 1;
        if (sa == sb || sb == 1) {
            os[i] = sa;
        } else if (sa == 1) {
            os[i] = sb;
        } else {
            tide_shape_strs sh = tide_shapes_fmt(an, as, bn, bs);
            return tide_seterr(TIDE_ESHAPE,
                               "%s: shapes %s and %s cannot be broadcast: size %lld vs %lld at "
                               "dim %d",
                               op, sh.a, sh.b, (long long)sa, (long long)sb, i + 1);
        }
    }
    *on = n;
    return TIDE_OK;
}

/* With a given output (in-place ops), compute in its dtype when the result may be cast into it:
 * float -> float or int -> int/float, never float -> int or anything -> bool. */
static tide_status out_dtype(const char *op, const tide_tensor *out, tide_dtype res,
                             tide_dtype *dt) {
    *dt = res;
    if (!out || out->dtype == res)
        return TIDE_OK;
    tide_dtype o = out->dtype;
    bool       ok = o != TIDE_DTYPE_BOOL && !(tide_dtype_is_float(res) && !tide_dtype_is_float(o));
    if (!ok)
        return tide_seterr(TIDE_EDTYPE,
                           "%s: the result has dtype %s, which cannot be written into a %s "
                           "tensor in place; use the out-of-place op or cast with :to()",
                           op, tide_dtype_name(res), tide_dtype_name(o));
    *dt = o;
    return TIDE_OK;
}

/* an integer or bool input to a TIDE_OPF_FLOAT_INPUT op (PyTorch's hypot refuses them) */
static tide_status float_input(const char *op, tide_dtype dt) {
    return tide_seterr(TIDE_EDTYPE,
                       "%s: needs a floating-point tensor, got %s; convert with :to(\"float32\")",
                       op, tide_dtype_name(dt));
}

/* The bitwise rows (DTYPES INTEGRAL, INTEGER: called for those only) take integer tensors, and
 * bool ones unless the row says NO_BOOL: cdt is the operands' promoted dtype, `got` names them
 * for the message. */
static tide_status integer_operands(const char *op, unsigned flags, tide_dtype cdt,
                                    const char *got) {
    bool no_bool = (flags & TIDE_OPF_NO_BOOL) != 0;
    if (!tide_dtype_is_float(cdt) && !(no_bool && cdt == TIDE_DTYPE_BOOL))
        return TIDE_OK;
    return tide_seterr(TIDE_EDTYPE, "%s: needs %s, got %s; convert with :long() first", op,
                       no_bool ? "integer tensors" : "integer or bool tensors", got);
}

static tide_status dispatch_fail(tide_status st, const char *op, tide_tensor **out, bool created) {
    tide_out_failed(out, created);
    return st == TIDE_OK ? st : tide_err_op(st, op);
}

/* ---- binary ------------------------------------------------------------------------------- */

/* *x, or a contiguous copy of it (owned through *own) when its elements, seen with the
 * result's shape, overlap the output's memory in another layout */
static tide_status unalias(tide_ctx *ctx, const char *op, const tide_tensor **x, tide_tensor **own,
                           bool same, int n, const int64_t *shape, const tide_kview *ov) {
    tide_kview v = same ? tide_kview_of(*x) : tide_kview_expand(*x, n, shape);
    if (!tide_kview_overlap(&v, ov))
        return TIDE_OK;
    tide_tensor *t = NULL;
    TIDE_TRY(tide_clone_for(ctx, op, *x, &t));
    tide_tensor_release(*own);
    *x = *own = t;
    return TIDE_OK;
}

/* PyTorch's refusals of a bool operand where the result would be arithmetic on truth values:
 * subtraction (either side) and negation, with its advice for inverting a mask; abs, relu and
 * the roundings; the divisions of two bools (pow of two bool tensors: tide_binary) */
static tide_status no_bool_arith(tide_op op, tide_dtype a, tide_dtype b) {
    if (op == TIDE_OP_SUB && (a == TIDE_DTYPE_BOOL || b == TIDE_DTYPE_BOOL))
        return tide_seterr(TIDE_EDTYPE,
                           "sub: subtraction, the - operator, with a bool tensor is not supported "
                           "(as PyTorch's); to invert a mask use logical_not() or ~, else convert "
                           "with :long() or :float() first");
    if (op == TIDE_OP_NEG && a == TIDE_DTYPE_BOOL)
        return tide_seterr(TIDE_EDTYPE,
                           "neg: negation, the - operator, on a bool tensor is not supported (as "
                           "PyTorch's); to invert a mask use logical_not() or ~, else convert "
                           "with :long() or :float() first");
    int rounds =
        op == TIDE_OP_FLOOR || op == TIDE_OP_CEIL || op == TIDE_OP_ROUND || op == TIDE_OP_TRUNC;
    if ((op == TIDE_OP_ABS || op == TIDE_OP_RELU || rounds) && a == TIDE_DTYPE_BOOL)
        return tide_seterr(TIDE_EDTYPE,
                           "%s: not implemented for bool tensors (as PyTorch's); convert with "
                           ":long() or :float() first",
                           tide_op_name(op));
    int divides = op == TIDE_OP_REMAINDER || op == TIDE_OP_FMOD || op == TIDE_OP_FLOORDIV;
    if (divides && a == TIDE_DTYPE_BOOL && b == TIDE_DTYPE_BOOL)
        return tide_seterr(TIDE_EDTYPE,
                           "%s: not implemented for two bool tensors (as PyTorch's); convert "
                           "with :long() or :float() first",
                           tide_op_name(op));
    /* frac of an integer is 0 by definition: PyTorch refuses it rather than promoting */
    if (op == TIDE_OP_FRAC && !tide_dtype_is_float(a))
        return tide_seterr(TIDE_EDTYPE,
                           "frac: not implemented for %s tensors (as PyTorch's); convert with "
                           ":float() first",
                           tide_dtype_name(a));
    return TIDE_OK;
}

tide_status tide_binary(tide_ctx *ctx, tide_op op, const tide_tensor *a, const tide_tensor *b,
                        tide_tensor **out) {
    const char    *name = tide_op_name(op);
    tide_op_family fam = tide_op_family_of(op);
    if (!tide_op_is_elementwise(op) || tide_op_arity(op) != 2)
        return tide_seterr(TIDE_EINVAL, "binary: %s is not a binary op", name);
    TIDE_TRY(tide_check_same_device(name, a, b));
    if (*out)
        TIDE_TRY(tide_check_same_device(name, a, *out));
    TIDE_TRY(no_bool_arith(op, a->dtype, b->dtype));
    if (op == TIDE_OP_POW && a->dtype == TIDE_DTYPE_BOOL && b->dtype == TIDE_DTYPE_BOOL)
        return tide_seterr(TIDE_EDTYPE,
                           "pow: not implemented for two bool tensors (as PyTorch's); convert "
                           "with :long() or :float() first");
    tide_device *dev = a->storage->dev;

    tide_dtype cdt = tide_promote_operands(a, b);
    if ((tide_op_flags(op) & TIDE_OPF_FLOAT_INPUT) && !tide_dtype_is_float(cdt))
        return float_input(name, cdt);
    if ((tide_op_flags(op) & TIDE_OPF_FLOAT_ONLY) && !tide_dtype_is_float(cdt))
        cdt = tide_default_float();
    if (tide_op_flags(op) & TIDE_OPF_INTEGER_ONLY) { /* (the message formatted only here) */
        char got[48];
        snprintf(got, sizeof got, "%s and %s", tide_dtype_name(a->dtype),
                 tide_dtype_name(b->dtype));
        TIDE_TRY(integer_operands(name, tide_op_flags(op), cdt, got));
    }
    tide_dtype odt = cdt;
    if (fam == TIDE_FAMILY_COMPARE)
        odt = TIDE_DTYPE_BOOL;
    else {
        TIDE_TRY(out_dtype(name, *out, cdt, &odt));
        cdt = odt;
    }

    int            n;
    int64_t        bshape[TIDE_MAX_DIMS];
    const int64_t *shape = a->shape;
    bool           same = tide_same_shape(a, b);
    if (same) {
        n = a->ndim;
    } else {
        TIDE_TRY(tide_broadcast_shape(name, a->ndim, a->shape, b->ndim, b->shape, &n, bshape));
        shape = bshape;
        int64_t numel;
        if (tide_shape_numel(n, shape, &numel) != TIDE_OK)
            return tide_err_op(TIDE_ESHAPE, name);
    }
    bool created;
    TIDE_TRY(tide_prepare_out(ctx, name, dev, odt, n, shape, out, &created));
    tide_tensor *o = *out;
    if (tide_tensor_numel(o) == 0)
        return TIDE_OK;
    tide_entry_binary_fn fn;
    tide_status          st = tide_entry_binary(dev, name, &fn);
    if (st != TIDE_OK)
        return dispatch_fail(st, name, out, created);

    /* casts only when needed: the common same-dtype path takes no extra references */
    tide_tensor       *ca = NULL, *cb = NULL;
    const tide_tensor *xa = a, *xb = b;
    if (a->dtype != cdt && (st = tide_cast(ctx, name, a, cdt, &ca)) == TIDE_OK)
        xa = ca;
    if (st == TIDE_OK && b->dtype != cdt && (st = tide_cast(ctx, name, b, cdt, &cb)) == TIDE_OK)
        xb = cb;
    if (st == TIDE_OK) {
        /* an operand sharing the output's memory in another layout (a:add_(a:t())) is read
         * from a copy; a fresh output shares memory with nothing (the common `a + b`) */
        tide_kview ov = tide_kview_of(o);
        if (!created)
            st = unalias(ctx, name, &xa, &ca, same, n, shape, &ov);
        if (st == TIDE_OK && !created)
            st = unalias(ctx, name, &xb, &cb, same, n, shape, &ov);
        if (st == TIDE_OK) {
            /* without broadcasting, the operands' own geometry */
            tide_kview av = same ? tide_kview_of(xa) : tide_kview_expand(xa, n, shape);
            tide_kview bv = same ? tide_kview_of(xb) : tide_kview_expand(xb, n, shape);
            st = fn(dev, op, &ov, &av, &bv);
        }
    }
    tide_tensor_release(ca);
    tide_tensor_release(cb);
    return st == TIDE_OK ? st : dispatch_fail(st, name, out, created);
}

/* integral s within integer dtype dt's range */
static bool int_fits(tide_dtype dt, double s) {
    switch (dt) {
    case TIDE_DTYPE_U8:
        return s >= 0 && s <= 255;
    case TIDE_DTYPE_BOOL:
        return s == 0 || s == 1;
    case TIDE_DTYPE_I32:
        return s >= -2147483648.0 && s <= 2147483647.0;
    case TIDE_DTYPE_I64:
        return s >= -9223372036854775808.0 && s < 9223372036854775808.0;
    default:
        return true;
    }
}

/* integral s reduced modulo 2^bits into u8 / int32 range (fmod is exact); others unchanged */
static double int_wrap(tide_dtype dt, double s) {
    if (dt == TIDE_DTYPE_U8) {
        double m = fmod(s, 256.0);
        return m < 0 ? m + 256.0 : m;
    }
    if (dt == TIDE_DTYPE_I32) {
        double m = fmod(s, 4294967296.0);
        if (m < 0)
            m += 4294967296.0;
        return m >= 2147483648.0 ? m - 4294967296.0 : m;
    }
    return s;
}

/* ---- exact integer scalars ---------------------------------------------------------------- */

/* A scalar reaches the backends as a double (the vtable's binary_scalar, unary's params and
 * fill take doubles), which holds every integer up to 2^53 and every int32/uint8 value. An
 * int64 tensor with an integer a double cannot hold (2^53 + 1) goes through the backend's
 * tensor kernels instead, with the integer as a 0-d int64 operand: exact on every backend,
 * with no change to the vtable, at the cost of one tiny allocation on that rare path. */

static tide_scalar scalar_norm(tide_scalar s) {
    if (s.is_int)
        s.d = (double)s.i;
    return s;
}

/* i survives a round trip through a double */
static bool exact_double(int64_t i) {
    double d = (double)i;
    return d >= -9223372036854775808.0 && d < 9223372036854775808.0 && (int64_t)d == i;
}

/* s must go to a dt kernel as a 0-d operand rather than as a double */
static bool needs_operand(tide_dtype dt, tide_scalar s) {
    return dt == TIDE_DTYPE_I64 && s.is_int && !exact_double(s.i);
}

/* integral s within integer dtype dt's range, exactly for an integer s */
static bool scalar_fits(tide_dtype dt, tide_scalar s) {
    if (!s.is_int)
        return int_fits(dt, s.d);
    switch (dt) {
    case TIDE_DTYPE_U8:
        return s.i >= 0 && s.i <= 255;
    case TIDE_DTYPE_BOOL:
        return s.i == 0 || s.i == 1;
    case TIDE_DTYPE_I32:
        return s.i >= INT32_MIN && s.i <= INT32_MAX;
    default:
        return true;
    }
}

/* int_wrap, from the exact integer when s is one ((2^62 + 1) mod 2^32 is 1, not 0) */
static tide_scalar scalar_wrap(tide_dtype dt, tide_scalar s) {
    if (!s.is_int)
        return tide_scalar_f(int_wrap(dt, s.d));
    if (dt == TIDE_DTYPE_U8)
        return tide_scalar_i((int64_t)(uint8_t)(uint64_t)s.i);
    if (dt == TIDE_DTYPE_I32)
        return tide_scalar_i((int64_t)(int32_t)(uint32_t)(uint64_t)s.i);
    return s;
}

static void scalar_fmt(char *buf, size_t n, tide_scalar s) {
    if (s.is_int)
        snprintf(buf, n, "%lld", (long long)s.i);
    else
        snprintf(buf, n, "%g", s.d);
}

/* integer_operands for a tensor of dtype dt and the number s: a bool tensor computes in int64
 * with an integer number (as PyTorch promotes it), so only a float tensor or a fraction is
 * refused */
static tide_status integer_scalar(const char *op, unsigned flags, tide_dtype dt, tide_scalar s,
                                  bool integral) {
    char v[32], got[64];
    scalar_fmt(v, sizeof v, s);
    snprintf(got, sizeof got, "%s and the number %s", tide_dtype_name(dt), v);
    if (tide_dtype_is_float(dt))
        return integer_operands(op, flags, dt, got);
    if (!integral)
        return tide_seterr(TIDE_EINVAL,
                           "%s: the number %s is not an integer; bitwise ops take integers", op, v);
    return TIDE_OK;
}

/* a 0-d int64 tensor holding v on dev (copied there like a kernel argument: not a transfer
 * the statistics count) */
static tide_status int64_operand(tide_ctx *ctx, const char *op, tide_device *dev, int64_t v,
                                 tide_tensor **out) {
    tide_tensor *t;
    TIDE_TRY(tide_tensor_alloc(ctx, op, dev, TIDE_DTYPE_I64, 0, NULL, &t));
    tide_device *host;
    tide_status  st = tide_device_get_index(TIDE_DEVICE_CPU, 0, &host);
    if (st == TIDE_OK)
        st = tide_copy_bytes(dev, tide_tensor_data(t), host, &v, sizeof v, 0);
    if (st != TIDE_OK) {
        tide_tensor_release(t);
        return tide_err_op(st, op);
    }
    *out = t;
    return TIDE_OK;
}

tide_status tide_binary_scalar(tide_ctx *ctx, tide_op op, const tide_tensor *a, double s,
                               int reverse, tide_tensor **out) {
    return tide_binary_scalar_x(ctx, op, a, tide_scalar_f(s), reverse, out);
}

tide_status tide_binary_scalar_x(tide_ctx *ctx, tide_op op, const tide_tensor *a, tide_scalar s,
                                 int reverse, tide_tensor **out) {
    const char    *name = tide_op_name(op);
    tide_op_family fam = tide_op_family_of(op);
    if (!tide_op_is_elementwise(op) || tide_op_arity(op) != 2)
        return tide_seterr(TIDE_EINVAL, "binary: %s is not a binary op", name);
    if (*out)
        TIDE_TRY(tide_check_same_device(name, a, *out));
    TIDE_TRY(no_bool_arith(op, a->dtype, a->dtype));
    tide_device *dev = a->storage->dev;
    unsigned     flags = tide_op_flags(op);
    s = scalar_norm(s);
    bool       integral = s.is_int || (s.d == floor(s.d) && isfinite(s.d));
    tide_dtype cdt = a->dtype;
    if (fam == TIDE_FAMILY_COMPARE) {
        /* a scalar the dtype cannot hold would saturate (u8:lt(300) false): compare in float64 */
        if (!tide_dtype_is_float(cdt) && (!integral || !scalar_fits(cdt, s)))
            cdt = TIDE_DTYPE_F64; /* exact for every int32 and small int64 */
    } else {
        if ((flags & TIDE_OPF_FLOAT_INPUT) && !tide_dtype_is_float(cdt))
            return float_input(name, cdt);
        if (flags & TIDE_OPF_INTEGER_ONLY)
            TIDE_TRY(integer_scalar(name, flags, cdt, s, integral));
        if (!tide_dtype_is_float(cdt) && (!integral || (flags & TIDE_OPF_FLOAT_ONLY)))
            cdt = tide_default_float();
        else if (cdt == TIDE_DTYPE_BOOL)
            cdt = TIDE_DTYPE_I64;
        /* add, sub and mul wrap like tensor arithmetic (u8 + -1 is u8 - 1), where storing the
         * scalar in the dtype would saturate it (-1 -> 0) */
        if ((flags & TIDE_OPF_INT_WRAP) && integral && !scalar_fits(cdt, s))
            s = scalar_wrap(cdt, s);
    }
    tide_dtype odt = TIDE_DTYPE_BOOL;
    if (fam != TIDE_FAMILY_COMPARE) {
        TIDE_TRY(out_dtype(name, *out, cdt, &odt));
        cdt = odt;
    }
    /* an integer division by the number 0 is known here, on every device, at no cost (a
     * negative number is 0 as uint8: the kernels saturate the scalar into the dtype) */
    if ((flags & TIDE_OPF_INT_DIVISION) && !reverse && !tide_dtype_is_float(cdt) &&
        (s.d == 0 || (cdt == TIDE_DTYPE_U8 && s.d < 0))) {
        char v[32];
        scalar_fmt(v, sizeof v, s);
        return tide_seterr(TIDE_EINVAL,
                           "%s: integer division by zero: the divisor %s is 0 as %s; convert to a "
                           "float dtype for inf/nan results",
                           name, v, tide_dtype_name(cdt));
    }
    /* an integer tensor to a negative integer power: PyTorch's refusal, known here at no cost */
    if ((flags & TIDE_OPF_INT_POWER) && !reverse && !tide_dtype_is_float(cdt) && s.d < 0) {
        char v[32];
        scalar_fmt(v, sizeof v, s);
        return tide_seterr(TIDE_EINVAL,
                           "%s: integers to negative integer powers are not allowed (as "
                           "PyTorch's): %s tensor ^ %s; convert the base to a float dtype first "
                           "(x:double() ^ %s)",
                           name, tide_dtype_name(cdt), v, v);
    }
    if (needs_operand(cdt, s)) {
        tide_tensor *e;
        TIDE_TRY(int64_operand(ctx, name, dev, s.i, &e));
        tide_status st = tide_binary(ctx, op, reverse ? e : a, reverse ? a : e, out);
        tide_tensor_release(e);
        return st;
    }
    bool created;
    TIDE_TRY(tide_prepare_out(ctx, name, dev, odt, a->ndim, a->shape, out, &created));
    if (tide_tensor_numel(*out) == 0)
        return TIDE_OK;
    tide_entry_binary_scalar_fn fn;
    tide_status                 st = tide_entry_binary_scalar(dev, name, &fn);
    if (st != TIDE_OK)
        return dispatch_fail(st, name, out, created);
    tide_tensor       *ca = NULL;
    const tide_tensor *xa = a;
    if (a->dtype != cdt && (st = tide_cast(ctx, name, a, cdt, &ca)) == TIDE_OK)
        xa = ca;
    tide_kview ov = tide_kview_of(*out);
    /* a given output sharing a's memory in another layout (out= a transpose of a) */
    if (st == TIDE_OK && !created)
        st = unalias(ctx, name, &xa, &ca, true, a->ndim, a->shape, &ov);
    if (st == TIDE_OK) {
        tide_kview av = tide_kview_of(xa);
        st = fn(dev, op, &ov, &av, s.d, reverse);
    }
    tide_tensor_release(ca);
    return st == TIDE_OK ? st : dispatch_fail(st, name, out, created);
}

/* ---- unary -------------------------------------------------------------------------------- */

/* prepares out (dtype odt, a's shape) and runs the backend's unary kernel of row kop (op's
 * own, or the one that computes it for this dtype) on a cast to cdt */
static tide_status unary_run(tide_ctx *ctx, tide_op op, tide_op kop, const tide_tensor *a,
                             tide_dtype cdt, tide_dtype odt, const double *params,
                             tide_tensor **out) {
    const char  *name = tide_op_name(op);
    tide_device *dev = a->storage->dev;
    bool         created;
    TIDE_TRY(tide_prepare_out(ctx, name, dev, odt, a->ndim, a->shape, out, &created));
    if (tide_tensor_numel(*out) == 0)
        return TIDE_OK;
    tide_entry_unary_fn fn;
    tide_status         st = tide_entry_unary(dev, name, &fn);
    if (st != TIDE_OK)
        return dispatch_fail(st, name, out, created);
    tide_tensor *ca;
    st = tide_cast(ctx, name, a, cdt, &ca);
    if (st == TIDE_OK) {
        tide_kview         ov = tide_kview_of(*out);
        const tide_tensor *xa = ca;
        /* a given output sharing a's memory in another layout (out= a transpose of a) */
        if (!created)
            st = unalias(ctx, name, &xa, &ca, true, a->ndim, a->shape, &ov);
        if (st == TIDE_OK) {
            tide_kview av = tide_kview_of(xa);
            st = fn(dev, kop, &ov, &av, params);
        }
        tide_tensor_release(ca);
    }
    return st == TIDE_OK ? st : dispatch_fail(st, name, out, created);
}

tide_status tide_unary(tide_ctx *ctx, tide_op op, const tide_tensor *a, const double *params,
                       tide_tensor **out) {
    const char *name = tide_op_name(op);
    if (!tide_op_is_elementwise(op) || tide_op_arity(op) != 1)
        return tide_seterr(TIDE_EINVAL, "unary: %s is not a unary op", name);
    tide_op_family fam = tide_op_family_of(op);
    if (fam == TIDE_FAMILY_BOUNDED)
        return tide_clamp(ctx, a, tide_scalar_f(params ? params[0] : -INFINITY),
                          tide_scalar_f(params ? params[1] : INFINITY), out);
    if (*out)
        TIDE_TRY(tide_check_same_device(name, a, *out));
    TIDE_TRY(no_bool_arith(op, a->dtype, a->dtype));
    tide_dtype cdt = a->dtype;
    if ((tide_op_flags(op) & TIDE_OPF_FLOAT_ONLY) && !tide_dtype_is_float(cdt))
        cdt = tide_default_float();
    if ((tide_op_flags(op) & TIDE_OPF_INTEGER_ONLY) && tide_dtype_is_float(cdt))
        return tide_seterr(TIDE_EDTYPE,
                           "%s: needs an integer or bool tensor, got %s; convert with :long() "
                           "first",
                           name, tide_dtype_name(cdt));
    if (fam == TIDE_FAMILY_PREDICATE) { /* any input dtype, a bool result */
        tide_dtype odt;
        TIDE_TRY(out_dtype(name, *out, TIDE_DTYPE_BOOL, &odt));
        return unary_run(ctx, op, op, a, cdt, odt, NULL, out);
    }
    TIDE_TRY(out_dtype(name, *out, cdt, &cdt));
    /* a bool's bitwise not is its logical not (PyTorch's ~mask): backends that compute integers
     * in a wider type (CUDA: int64) would make ~1 nonzero, true */
    tide_op kop = op == TIDE_OP_BITWISE_NOT && cdt == TIDE_DTYPE_BOOL ? TIDE_OP_LOGICAL_NOT : op;
    return unary_run(ctx, op, kop, a, cdt, cdt, NULL, out);
}

/* neither an integer nor infinite (no bound): makes an integer tensor's clamp float */
static bool non_integral(tide_scalar s) {
    return !s.is_int && !isinf(s.d) && s.d != floor(s.d); /* NaN too */
}

/* int64 clamp with a bound a double cannot hold: maximum then minimum with 0-d operands */
static tide_status clamp_exact(tide_ctx *ctx, const tide_tensor *a, tide_scalar lo, tide_scalar hi,
                               tide_tensor **out) {
    static const char name[] = "clamp";
    tide_device      *dev = a->storage->dev;
    /* an integral double bound becomes the int64 it rounds to; an infinite one is no bound */
    bool    has_lo = lo.is_int || lo.d != -INFINITY, has_hi = hi.is_int || hi.d != INFINITY;
    int64_t vlo = lo.is_int ? lo.i : tide_sat_i64(lo.d),
            vhi = hi.is_int ? hi.i : tide_sat_i64(hi.d);
    tide_tensor       *elo = NULL, *ehi = NULL, *tmp = NULL;
    const tide_tensor *cur = a;
    tide_status        st = TIDE_OK;
    if (has_lo) {
        st = int64_operand(ctx, name, dev, vlo, &elo);
        if (st == TIDE_OK && has_hi) {
            st = tide_binary(ctx, TIDE_OP_MAXIMUM, a, elo, &tmp);
            cur = tmp;
        } else if (st == TIDE_OK) {
            st = tide_binary(ctx, TIDE_OP_MAXIMUM, a, elo, out);
        }
    }
    if (st == TIDE_OK && has_hi) {
        st = int64_operand(ctx, name, dev, vhi, &ehi);
        if (st == TIDE_OK)
            st = tide_binary(ctx, TIDE_OP_MINIMUM, cur, ehi, out);
    }
    tide_tensor_release(elo);
    tide_tensor_release(ehi);
    tide_tensor_release(tmp);
    return st == TIDE_OK ? st : tide_err_op(st, name);
}

tide_status tide_clamp(tide_ctx *ctx, const tide_tensor *a, tide_scalar lo, tide_scalar hi,
                       tide_tensor **out) {
    static const char name[] = "clamp";
    lo = scalar_norm(lo);
    hi = scalar_norm(hi);
    /* min above max: every element becomes max (NaN stays NaN), as PyTorch documents */
    if (lo.is_int && hi.is_int ? lo.i > hi.i : lo.d > hi.d)
        lo = hi;
    if (*out)
        TIDE_TRY(tide_check_same_device(name, a, *out));
    /* PyTorch's type promotion: an int32 1 clamped to [0.5, 0.7] is a float32 0.7 (rounding the
     * bounds into the integer dtype gave the empty range [1, 0], and 1) */
    tide_dtype cdt = a->dtype;
    if (!tide_dtype_is_float(cdt) && (non_integral(lo) || non_integral(hi)))
        cdt = tide_default_float();
    TIDE_TRY(out_dtype(name, *out, cdt, &cdt));
    if (needs_operand(cdt, lo) || needs_operand(cdt, hi))
        return clamp_exact(ctx, a, lo, hi, out);
    double params[2] = {lo.d, hi.d};
    return unary_run(ctx, TIDE_OP_CLAMP, TIDE_OP_CLAMP, a, cdt, cdt, params, out);
}

/* ---- reductions --------------------------------------------------------------------------- */

/* the kview of a freshly allocated contiguous result, seen with keepdim's shape */
static tide_kview keep_view(const tide_tensor *r, int ndim, const int64_t *kshape) {
    tide_kview v = tide_kview_of(r);
    v.ndim = ndim;
    memcpy(v.shape, kshape, (size_t)ndim * sizeof *kshape);
    tide_contiguous_strides(ndim, kshape, v.strides);
    return v;
}

tide_status tide_reduce(tide_ctx *ctx, tide_op op, const tide_tensor *a, int dim, int keepdim,
                        tide_tensor **values, tide_tensor **indices) {
    const char *name = tide_op_name(op);
    if ((unsigned)op >= TIDE_OP_COUNT || tide_op_family_of(op) != TIDE_FAMILY_REDUCE)
        return tide_seterr(TIDE_EINVAL, "reduce: %s is not a reduction", name);
    tide_device *dev = a->storage->dev;
    bool         full = dim == TIDE_ALL_DIMS || a->ndim == 0;
    bool         arg = op == TIDE_OP_ARGMAX || op == TIDE_OP_ARGMIN;
    bool         want_idx = !arg && (op == TIDE_OP_MAX || op == TIDE_OP_MIN) && indices;
    if (!full)
        TIDE_TRY(tide_norm_dim(name, &dim, a->ndim));
    int64_t numel = tide_tensor_numel(a);
    int64_t rsize = full ? numel : a->shape[dim];
    if (rsize == 0 && (arg || op == TIDE_OP_MAX || op == TIDE_OP_MIN))
        return tide_seterr(TIDE_ESHAPE,
                           "%s: cannot reduce over an empty dim (size 0); %s has no identity", name,
                           name);

    /* dtypes: integer sums and products in int64, integer means in float32 */
    tide_dtype cdt = a->dtype;
    if ((op == TIDE_OP_SUM || op == TIDE_OP_PROD) && !tide_dtype_is_float(cdt))
        cdt = TIDE_DTYPE_I64;
    if (op == TIDE_OP_MEAN && !tide_dtype_is_float(cdt))
        cdt = tide_default_float();
    tide_dtype odt = arg ? TIDE_DTYPE_I64 : cdt;

    /* shapes: kshape (keepdim, what the backend sees) and the result's */
    int64_t kshape[TIDE_MAX_DIMS], rshape[TIDE_MAX_DIMS];
    int     kn, rn = 0;
    if (full) {
        kn = 1;
        kshape[0] = 1;
        for (int i = 0; keepdim && i < a->ndim; i++)
            rshape[rn++] = 1;
    } else {
        kn = a->ndim;
        for (int i = 0; i < a->ndim; i++) {
            kshape[i] = i == dim ? 1 : a->shape[i];
            if (keepdim || i != dim)
                rshape[rn++] = kshape[i];
        }
    }
    bool vcreated, icreated = false;
    TIDE_TRY(tide_prepare_out(ctx, name, dev, odt, rn, rshape, values, &vcreated));
    tide_tensor *idx = NULL;
    if (want_idx) {
        tide_status st =
            tide_prepare_out(ctx, name, dev, TIDE_DTYPE_I64, rn, rshape, indices, &icreated);
        if (st != TIDE_OK)
            return dispatch_fail(st, name, values, vcreated);
        idx = *indices;
    }
    tide_status          st = TIDE_OK;
    tide_tensor         *ca = NULL, *flat = NULL;
    tide_entry_reduce_fn fn;
    if (tide_tensor_numel(*values) == 0) {
        /* nothing to write */
    } else if (numel == 0) {
        /* reductions over nothing: the identity */
        double v = op == TIDE_OP_PROD ? 1.0 : op == TIDE_OP_MEAN ? NAN : 0.0;
        st = tide_fill_for(ctx, name, *values, tide_scalar_f(v));
    } else if ((st = tide_entry_reduce(dev, name, &fn)) == TIDE_OK) {
        st = tide_cast(ctx, name, a, cdt, &ca);
        if (st == TIDE_OK && full) {
            int64_t one = numel;
            st = tide_tensor_reshape(ctx, ca, 1, &one, &flat);
        }
        if (st == TIDE_OK) {
            const tide_tensor *src = full ? flat : ca;
            tide_kview         av = tide_kview_of(src);
            tide_kview         rv = keep_view(*values, kn, kshape);
            tide_kview         iv;
            if (idx)
                iv = keep_view(idx, kn, kshape);
            st = fn(dev, op, arg ? NULL : &rv, arg ? &rv : idx ? &iv : NULL, &av, full ? 0 : dim);
        }
    }
    tide_tensor_release(ca);
    tide_tensor_release(flat);
    if (st != TIDE_OK) {
        if (idx)
            tide_out_failed(indices, icreated);
        return dispatch_fail(st, name, values, vcreated);
    }
    return TIDE_OK;
}

tide_status tide_sum_to(tide_ctx *ctx, const tide_tensor *a, int ndim, const int64_t *shape,
                        tide_tensor **out) {
    int  lead = a->ndim - ndim;
    bool ok = lead >= 0 && ndim <= TIDE_MAX_DIMS;
    for (int i = 0; ok && i < ndim; i++)
        ok = shape[i] == a->shape[lead + i] || shape[i] == 1;
    if (!ok) {
        tide_shape_strs sh = tide_shapes_fmt(a->ndim, a->shape, ndim < 0 ? 0 : ndim, shape);
        return tide_seterr(TIDE_ESHAPE,
                           "sum_to: cannot sum shape %s down to %s; the target must broadcast to "
                           "the source",
                           sh.a, sh.b);
    }
    tide_tensor *cur;
    tide_tensor_retain((tide_tensor *)a);
    cur = (tide_tensor *)a;
    /* leading dims away, then the broadcast size-1 dims (keepdim) */
    for (int i = 0; i < lead; i++) {
        tide_tensor *r = NULL;
        tide_status  st = tide_reduce(ctx, TIDE_OP_SUM, cur, 0, 0, &r, NULL);
        tide_tensor_release(cur);
        if (st != TIDE_OK)
            return tide_err_op(st, "sum_to");
        cur = r;
    }
    for (int i = 0; i < ndim; i++) {
        if (shape[i] != 1 || cur->shape[i] == 1)
            continue;
        tide_tensor *r = NULL;
        tide_status  st = tide_reduce(ctx, TIDE_OP_SUM, cur, i, 1, &r, NULL);
        tide_tensor_release(cur);
        if (st != TIDE_OK)
            return tide_err_op(st, "sum_to");
        cur = r;
    }
    if (cur == a) {
        tide_tensor_release(cur);
        return tide_tensor_clone(ctx, a, out);
    }
    *out = cur;
    return TIDE_OK;
}

/* ---- where, fill, random, arange ---------------------------------------------------------- */

tide_status tide_where(tide_ctx *ctx, const tide_tensor *cond, const tide_tensor *a,
                       const tide_tensor *b, tide_tensor **out) {
    static const char name[] = "where";
    TIDE_TRY(tide_check_same_device(name, cond, a));
    TIDE_TRY(tide_check_same_device(name, cond, b));
    if (*out)
        TIDE_TRY(tide_check_same_device(name, cond, *out));
    if (cond->dtype != TIDE_DTYPE_BOOL)
        return tide_seterr(TIDE_EDTYPE,
                           "where: the condition must be bool, got %s; make one with a "
                           "comparison such as t:gt(0)",
                           tide_dtype_name(cond->dtype));
    tide_device *dev = cond->storage->dev;
    tide_dtype   cdt = tide_promote_operands(a, b);
    TIDE_TRY(out_dtype(name, *out, cdt, &cdt));
    int     n1, n;
    int64_t s1[TIDE_MAX_DIMS], shape[TIDE_MAX_DIMS], numel;
    TIDE_TRY(tide_broadcast_shape(name, a->ndim, a->shape, b->ndim, b->shape, &n1, s1));
    TIDE_TRY(tide_broadcast_shape(name, cond->ndim, cond->shape, n1, s1, &n, shape));
    if (tide_shape_numel(n, shape, &numel) != TIDE_OK)
        return tide_err_op(TIDE_ESHAPE, name);
    bool created;
    TIDE_TRY(tide_prepare_out(ctx, name, dev, cdt, n, shape, out, &created));
    if (numel == 0)
        return TIDE_OK;
    tide_entry_where_fn fn;
    tide_status         st = tide_entry_where(dev, name, &fn);
    if (st != TIDE_OK)
        return dispatch_fail(st, name, out, created);
    tide_tensor *ca = NULL, *cb = NULL;
    st = tide_cast(ctx, name, a, cdt, &ca);
    if (st == TIDE_OK)
        st = tide_cast(ctx, name, b, cdt, &cb);
    if (st == TIDE_OK) {
        tide_kview ov = tide_kview_of(*out), cv = tide_kview_expand(cond, n, shape);
        tide_kview av = tide_kview_expand(ca, n, shape), bv = tide_kview_expand(cb, n, shape);
        st = fn(dev, &ov, &cv, &av, &bv);
    }
    tide_tensor_release(ca);
    tide_tensor_release(cb);
    return st == TIDE_OK ? st : dispatch_fail(st, name, out, created);
}

/* v as dtype dt holds it: integer dtypes saturate (NaN is 0), as the CPU's casts do, so that no
 * backend converts an out-of-range double itself (a C cast of one is undefined) */
static tide_scalar fill_value(tide_dtype dt, tide_scalar v) {
    switch (dt) {
    case TIDE_DTYPE_I64:
        return v.is_int ? v : tide_scalar_i(tide_sat_i64(v.d));
    case TIDE_DTYPE_I32:
        if (!v.is_int)
            return tide_scalar_i(tide_sat_i32(v.d));
        return tide_scalar_i(v.i < INT32_MIN ? INT32_MIN : v.i > INT32_MAX ? INT32_MAX : v.i);
    case TIDE_DTYPE_U8: /* check_fits let -255..255 through: a negative one wraps, as PyTorch's */
        if (!v.is_int)
            return tide_scalar_i(isfinite(v.d) && v.d > -256 && v.d < 0 ? (int64_t)v.d & 0xff
                                                                        : tide_sat_u8(v.d));
        return tide_scalar_i(v.i < 0 && v.i > -256 ? v.i & 0xff
                             : v.i < 0             ? 0
                             : v.i > 255           ? 255
                                                   : v.i);
    case TIDE_DTYPE_BOOL:
        return tide_scalar_i(v.is_int ? v.i != 0 : v.d != 0);
    default:
        return v;
    }
}

/* PyTorch's checked conversion of a value that fills a tensor (full, fill_, masked_fill, a
 * number in where): one past the dtype's range raises instead of becoming inf or saturating.
 * Infinities and NaN fit the float dtypes; negative integers down to -255 wrap into uint8 (-1
 * is 255), as PyTorch's two's complement rule lets them */
tide_status tide_scalar_fits(const char *op, tide_dtype dt, tide_scalar v) {
    double d = v.is_int ? (double)v.i : v.d;
    double lo, hi;
    switch (dt) {
    case TIDE_DTYPE_F32:
        lo = -FLT_MAX, hi = FLT_MAX;
        break;
    case TIDE_DTYPE_F16:
        lo = -65504.0, hi = 65504.0;
        break;
    case TIDE_DTYPE_BF16:
        lo = -3.3895313892515355e38, hi = 3.3895313892515355e38;
        break;
    case TIDE_DTYPE_I64:
        if (v.is_int)
            return TIDE_OK;
        lo = -9223372036854775808.0, hi = 9223372036854775807.0;
        break;
    case TIDE_DTYPE_I32:
        lo = INT32_MIN, hi = INT32_MAX;
        break;
    case TIDE_DTYPE_U8: /* a negative integer wraps (-1 is 255), a negative fraction does not */
        lo = d < 0 && d != floor(d) ? 0.0 : -255.0, hi = 255.0;
        break;
    default: /* float64, bool: every value */
        return TIDE_OK;
    }
    /* (NaN fails every comparison: it fits no integer dtype; 2^63, int64's hi as a double, is
     * past its range) */
    if (tide_dtype_is_float(dt) ? !isfinite(d) || (d >= lo && d <= hi)
                                : d >= lo && (dt == TIDE_DTYPE_I64 ? d < hi : d <= hi))
        return TIDE_OK;
    return tide_seterr(TIDE_EINVAL,
                       "%s: the value %.17g cannot be converted to %s without overflow (its "
                       "range is %.9g to %.9g); give a value in range or another dtype",
                       op, d, tide_dtype_name(dt), lo, hi);
}

/* fill without counting a write (a new tensor has version 0) */
tide_status tide_fill_for(tide_ctx *ctx, const char *op, tide_tensor *t, tide_scalar v) {
    tide_device *dev = t->storage->dev;
    TIDE_TRY(tide_scalar_fits(op, t->dtype, scalar_norm(v)));
    if (tide_tensor_numel(t) == 0)
        return TIDE_OK;
    v = fill_value(t->dtype, scalar_norm(v));
    if (needs_operand(t->dtype, v)) {
        tide_tensor *e;
        TIDE_TRY(int64_operand(ctx, op, dev, v.i, &e));
        tide_status st = tide_copy_into(ctx, t, e);
        tide_tensor_release(e);
        return st == TIDE_OK ? st : tide_err_op(st, op);
    }
    tide_entry_fill_fn fn;
    TIDE_TRY(tide_entry_fill(dev, op, &fn));
    tide_kview  kv = tide_kview_of(t);
    tide_status st = fn(dev, &kv, v.d);
    return st == TIDE_OK ? st : tide_err_op(st, op);
}

tide_status tide_fill_(tide_ctx *ctx, tide_tensor *t, double value) {
    return tide_fill_x_(ctx, t, tide_scalar_f(value));
}

/* t with each expanded dim (stride 0) narrowed to one element: one value written everywhere
 * reaches every element of t (PyTorch's fill_ and zero_ accept expanded tensors); NULL when t
 * has no expanded dim */
static tide_status unexpanded_view(const tide_tensor *t, tide_tensor **out) {
    int64_t shape[TIDE_MAX_DIMS];
    bool    expanded = false;
    *out = NULL;
    for (int i = 0; i < t->ndim; i++) {
        shape[i] = t->strides[i] == 0 && t->shape[i] > 1 ? 1 : t->shape[i];
        expanded |= shape[i] != t->shape[i];
    }
    if (!expanded || tide_tensor_numel(t) == 0)
        return TIDE_OK;
    return tide_tensor_as_strided(t, t->ndim, shape, t->strides, t->offset, out);
}

tide_status tide_fill_x_(tide_ctx *ctx, tide_tensor *t, tide_scalar value) {
    tide_tensor *one;
    TIDE_TRY(unexpanded_view(t, &one));
    tide_status st = tide_fill_for(ctx, "fill_", one ? one : t, value);
    if (one)
        tide_tensor_release(one);
    if (st == TIDE_OK) /* counted once written: a failed call changes nothing */
        tide_mark_written(t);
    return st;
}
