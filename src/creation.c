/* creation.c — tensors made from nothing: empty, full, rand/randn (and random_ in place, which
 * shares their checks), arange. Each allocates on the device asked for (cpu when NULL) and
 * fills through its backend's entry. */
#include "tide_impl.h"

#include <math.h>

tide_status tide_tensor_empty_for(tide_ctx *ctx, const char *op, tide_device *dev, tide_dtype dt,
                                  int ndim, const int64_t *shape, tide_tensor **out) {
    TIDE_TRY(tide_shape_check_ndim(op, ndim));
    if ((unsigned)dt >= TIDE_DTYPE_COUNT)
        return tide_seterr(TIDE_EDTYPE, "%s: invalid dtype %d", op, (int)dt);
    if (!dev)
        TIDE_TRY(tide_device_get_index(TIDE_DEVICE_CPU, 0, &dev));
    return tide_tensor_alloc(ctx, op, dev, dt, ndim, shape, out);
}

tide_status tide_tensor_empty(tide_ctx *ctx, tide_device *dev, tide_dtype dt, int ndim,
                              const int64_t *shape, tide_tensor **out) {
    return tide_tensor_empty_for(ctx, "empty", dev, dt, ndim, shape, out);
}

tide_status tide_tensor_full(tide_ctx *ctx, tide_device *dev, tide_dtype dt, int ndim,
                             const int64_t *shape, tide_scalar value, tide_tensor **out) {
    tide_tensor *t;
    TIDE_TRY(tide_tensor_empty_for(ctx, "full", dev, dt, ndim, shape, &t));
    tide_status st = tide_fill_for(ctx, "full", t, value);
    if (st != TIDE_OK) {
        tide_tensor_release(t);
        return st;
    }
    *out = t;
    return TIDE_OK;
}

static tide_status random_check(const char *name, tide_dtype dt, tide_random_kind kind, double lo,
                                double hi) {
    if (kind != TIDE_RANDOM_UNIFORM && kind != TIDE_RANDOM_NORMAL && kind != TIDE_RANDOM_KEEP)
        return tide_seterr(TIDE_EINVAL, "%s: unknown distribution %d", name, (int)kind);
    if (!tide_dtype_is_float(dt))
        return tide_seterr(TIDE_EDTYPE,
                           "%s: random values need a floating-point tensor, got %s; create it "
                           "with dtype float32",
                           name, tide_dtype_name(dt));
    if (!isfinite(lo) || !isfinite(hi))
        return tide_seterr(TIDE_EINVAL, "%s: parameters must be finite, got %g and %g", name, lo,
                           hi);
    if (kind == TIDE_RANDOM_UNIFORM && lo > hi)
        return tide_seterr(TIDE_EINVAL, "%s: from %g is greater than to %g", name, lo, hi);
    if (kind == TIDE_RANDOM_NORMAL && hi < 0)
        return tide_seterr(TIDE_EINVAL, "%s: std %g is negative", name, hi);
    if (kind == TIDE_RANDOM_KEEP && (lo < 0 || lo > 1))
        return tide_seterr(TIDE_EINVAL, "%s: probability %g is outside [0, 1]", name, lo);
    return TIDE_OK;
}

static tide_status random_run(tide_ctx *ctx, const char *name, tide_tensor *t,
                              tide_random_kind kind, double lo, double hi) {
    ctx = tide_ctx_or_default(ctx);
    tide_device *dev = t->storage->dev;
    int64_t      n = tide_tensor_numel(t);
    if (n == 0)
        return TIDE_OK;
    tide_entry_random_fn fn;
    TIDE_TRY(tide_entry_random(dev, name, &fn));
    tide_kview  v = tide_kview_of(t);
    tide_status st = fn(dev, &v, kind, lo, hi, ctx->seed, ctx->rng_offset);
    if (st != TIDE_OK)
        return tide_err_op(st, name);
    ctx->rng_offset += (uint64_t)n;
    return TIDE_OK;
}

tide_status tide_random_(tide_ctx *ctx, tide_tensor *t, tide_random_kind kind, double lo,
                         double hi) {
    const char *name = kind == TIDE_RANDOM_NORMAL ? "normal_" : "uniform_";
    if (kind == TIDE_RANDOM_KEEP)
        name = "keep_mask_";
    else if (kind != TIDE_RANDOM_UNIFORM && kind != TIDE_RANDOM_NORMAL)
        name = "random_";
    TIDE_TRY(random_check(name, t->dtype, kind, lo, hi));
    TIDE_TRY(tide_check_writable(name, t));
    tide_status st = random_run(ctx, name, t, kind, lo, hi);
    if (st == TIDE_OK)
        tide_mark_written(t);
    return st;
}

tide_status tide_tensor_random(tide_ctx *ctx, tide_device *dev, tide_dtype dt, int ndim,
                               const int64_t *shape, tide_random_kind kind, double lo, double hi,
                               tide_tensor **out) {
    const char *name = kind == TIDE_RANDOM_NORMAL ? "randn" : "rand";
    if ((unsigned)dt < TIDE_DTYPE_COUNT)
        TIDE_TRY(random_check(name, dt, kind, lo, hi));
    tide_tensor *t;
    TIDE_TRY(tide_tensor_empty_for(ctx, name, dev, dt, ndim, shape, &t));
    tide_status st = random_run(ctx, name, t, kind, lo, hi);
    if (st != TIDE_OK) {
        tide_tensor_release(t);
        return st;
    }
    *out = t;
    return TIDE_OK;
}

tide_status tide_arange(tide_ctx *ctx, tide_device *dev, tide_dtype dt, double start, double stop,
                        double step, tide_tensor **out) {
    static const char name[] = "arange";
    if (!isfinite(start) || !isfinite(stop) || !isfinite(step))
        return tide_seterr(TIDE_EINVAL,
                           "arange: start, stop and step must be finite, got %g, %g "
                           "and %g",
                           start, stop, step);
    if ((unsigned)dt >= TIDE_DTYPE_COUNT)
        return tide_seterr(TIDE_EDTYPE, "arange: invalid dtype %d", (int)dt);
    /* an integer dtype counts in integers, as PyTorch's: start, end and step truncated first
     * (arange(0, 5, 1.5) as int64 is 0, 1, 2, 3, 4) */
    double given = step;
    if (!tide_dtype_is_float(dt)) {
        start = trunc(start);
        stop = trunc(stop);
        step = trunc(step);
    }
    if (step == 0)
        return given == 0 ? tide_seterr(TIDE_EINVAL, "arange: step must not be zero")
                          : tide_seterr(TIDE_EINVAL,
                                        "arange: step %g is 0 as %s (an integer dtype truncates "
                                        "it, as PyTorch's); use a float dtype or a step >= 1",
                                        given, tide_dtype_name(dt));
    if ((step > 0 && stop < start) || (step < 0 && stop > start))
        return tide_seterr(TIDE_EINVAL,
                           "arange: end %g lies on the other side of start %g from step %g (as "
                           "PyTorch's: upper bound and larger bound inconsistent with step "
                           "sign); swap start and end or change step's sign",
                           stop, start, step);
    double count = ceil((stop - start) / step);
    if (count < 0)
        count = 0;
    if (count > 9.0e15)
        return tide_seterr(TIDE_ESHAPE, "arange: %g elements are too many", count);
    if (!dev)
        TIDE_TRY(tide_device_get_index(TIDE_DEVICE_CPU, 0, &dev));
    int64_t n = (int64_t)count;
    TIDE_TRY(tide_tensor_alloc(ctx, name, dev, dt, 1, &n, out));
    if (n == 0)
        return TIDE_OK;
    tide_entry_arange_fn fn;
    tide_status          st = tide_entry_arange(dev, name, &fn);
    if (st == TIDE_OK) {
        tide_kview v = tide_kview_of(*out);
        st = fn(dev, &v, start, step);
    }
    if (st != TIDE_OK) {
        tide_out_failed(out, true);
        return tide_err_op(st, name);
    }
    return TIDE_OK;
}
