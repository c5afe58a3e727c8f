/* transfer.c — copies between devices: byte moves, transfer statistics and the guard.
 *
 * cpu:0 is the host. Any copy from it is host-to-device, any copy to it device-to-host, and a
 * copy between two other devices (cpu:1 -> cuda:0 included) device-to-device, so the virtual
 * CPU devices show the same traffic a GPU would. */
#include "tide_impl.h"
#include "dtype_convert.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tide_count_transfer(tide_ctx *ctx, const tide_device *src, const tide_device *dst,
                         size_t nbytes) {
    if (src == dst)
        return;
    tide_transfer_stats *s = &tide_ctx_or_default(ctx)->stats;
    if (tide_device_is_host(src)) {
        s->h2d_bytes += nbytes;
        s->h2d_count++;
    } else if (tide_device_is_host(dst)) {
        s->d2h_bytes += nbytes;
        s->d2h_count++;
    } else {
        s->d2d_bytes += nbytes;
        s->d2d_count++;
    }
}

tide_status tide_copy_bytes(tide_device *dst_dev, void *dst, tide_device *src_dev, const void *src,
                            size_t nbytes, int non_blocking) {
    if (nbytes == 0)
        return TIDE_OK;
    if (dst_dev->type == TIDE_DEVICE_CPU && src_dev->type == TIDE_DEVICE_CPU) {
        memmove(dst, src, nbytes);
        return TIDE_OK;
    }
    if (dst_dev->backend == src_dev->backend && dst_dev->backend->copy_peer)
        return dst_dev->backend->copy_peer(dst_dev, dst, src_dev, src, nbytes);
    if (src_dev->type == TIDE_DEVICE_CPU)
        return dst_dev->backend->copy_from_host(dst_dev, dst, src, nbytes, non_blocking);
    if (dst_dev->type == TIDE_DEVICE_CPU)
        return src_dev->backend->copy_to_host(src_dev, dst, src, nbytes, non_blocking);
    /* two devices without a direct path: stage through host memory */
    void *tmp = malloc(nbytes);
    if (!tmp)
        return tide_seterr(TIDE_ENOMEM, "copy: out of host memory staging %zu bytes", nbytes);
    tide_status st = src_dev->backend->copy_to_host(src_dev, tmp, src, nbytes, 0);
    if (st == TIDE_OK)
        st = dst_dev->backend->copy_from_host(dst_dev, dst, tmp, nbytes, 0);
    free(tmp);
    return st;
}

/* c's bytes (c contiguous) in a malloc'd host array: the core's own reads of values that decide
 * a result's size (tide_read_host, index checks), not a user transfer */
tide_status tide_host_copy(const char *op, const tide_tensor *c, void **out) {
    size_t       n = tide_tensor_nbytes(c);
    void        *buf = malloc(n ? n : 1);
    tide_device *host = NULL;
    tide_status  st = buf ? tide_device_get_index(TIDE_DEVICE_CPU, 0, &host)
                          : tide_seterr(TIDE_ENOMEM, "%s: out of host memory", op);
    if (st == TIDE_OK)
        st = tide_copy_bytes(host, buf, c->storage->dev, tide_tensor_data(c), n, 0);
    if (st != TIDE_OK) {
        free(buf);
        return st;
    }
    *out = buf;
    return TIDE_OK;
}

/* asks the context's guard about an implicit copy of nbytes */
static tide_status guard(tide_ctx *ctx, const char *op, const tide_device *src,
                         const tide_device *dst, size_t nbytes) {
    if (ctx->guard == TIDE_GUARD_ALLOW)
        return TIDE_OK;
    char fix[48];
    if (tide_device_is_host(dst))
        snprintf(fix, sizeof fix, ":cpu()");
    else
        snprintf(fix, sizeof fix, ":to(\"%s\")", dst->name);
    if (ctx->guard == TIDE_GUARD_DISALLOW)
        return tide_seterr(TIDE_EGUARD,
                           "%s: implicit transfer from %s to %s refused by "
                           "transfer_guard(\"disallow\"); call %s explicitly",
                           op, src->name, dst->name, fix);
    char m[256];
    snprintf(m, sizeof m, "tide: %s: implicit transfer from %s to %s (%zu bytes)", op, src->name,
             dst->name, nbytes);
    if (ctx->log)
        ctx->log(ctx->log_ud, m);
    return TIDE_OK;
}

tide_status tide_transfer(tide_ctx *ctx, const char *op, const tide_tensor *t, tide_device *dev,
                          tide_dtype dt, int flags, tide_tensor **out) {
    ctx = tide_ctx_or_default(ctx);
    tide_device *src = t->storage->dev;
    if ((unsigned)dt >= TIDE_DTYPE_COUNT)
        return tide_seterr(TIDE_EDTYPE, "%s: invalid dtype %d", op, (int)dt);
    if (dev != src && (flags & TIDE_TO_IMPLICIT))
        TIDE_TRY(guard(ctx, op, src, dev, (size_t)tide_tensor_numel(t) * tide_dtype_size(dt)));
    tide_tensor *r;
    if (dev == src) {
        TIDE_TRY(tide_tensor_alloc(ctx, op, dev, dt, t->ndim, t->shape, &r));
        tide_status st = tide_copy_into(ctx, r, t);
        if (st != TIDE_OK) {
            tide_tensor_release(r);
            return tide_err_op(st, op);
        }
        *out = r;
        return TIDE_OK;
    }
    /* one contiguous block in the target dtype on the source side, then one byte copy */
    tide_tensor *c;
    if (tide_tensor_is_contiguous(t) && t->dtype == dt) {
        tide_tensor_retain((tide_tensor *)t);
        c = (tide_tensor *)t;
    } else {
        TIDE_TRY(tide_tensor_alloc(ctx, op, src, dt, t->ndim, t->shape, &c));
        tide_status st = tide_copy_into(ctx, c, t);
        if (st != TIDE_OK) {
            tide_tensor_release(c);
            return tide_err_op(st, op);
        }
    }
    /* A non-blocking copy from a GPU to the host lands in pinned memory and returns while it
     * runs; the result remembers the device, which is synchronized before the host first touches
     * it (tide_tensor_data): the overlap of PyTorch's non_blocking without its stale reads.
     * Where no pinned memory can be had, the copy waits. */
    int         non_blocking = (flags & TIDE_TO_NON_BLOCKING) != 0;
    bool        async_d2h = non_blocking && tide_device_is_host(dev) && src->backend->alloc_pinned;
    tide_status st = TIDE_EINVAL;
    if (async_d2h) /* pinned by the backend that copies into it */
        st = tide_tensor_alloc_pinned(ctx, op, src->backend, dt, t->ndim, t->shape, &r);
    if (st != TIDE_OK) {
        async_d2h = false;
        st = tide_tensor_alloc(ctx, op, dev, dt, t->ndim, t->shape, &r);
    }
    if (st == TIDE_OK) {
        size_t n = tide_tensor_nbytes(r);
        st = tide_copy_bytes(dev, tide_tensor_data(r), src, tide_tensor_data(c), n, non_blocking);
        if (st == TIDE_OK) {
            tide_count_transfer(ctx, src, dev, n);
            if (async_d2h && n)
                atomic_store_explicit(&r->storage->in_flight, src, memory_order_release);
        } else {
            tide_tensor_release(r);
        }
    }
    tide_tensor_release(c);
    if (st != TIDE_OK)
        return tide_err_op(st, op);
    *out = r;
    return TIDE_OK;
}

tide_status tide_tensor_to(tide_ctx *ctx, const tide_tensor *t, tide_device *dev, tide_dtype dt,
                           int flags, tide_tensor **out) {
    if (!dev)
        dev = t->storage->dev;
    return tide_transfer(ctx, "to", t, dev, dt, flags, out);
}

static bool same_geom(const tide_tensor *a, const tide_tensor *b) {
    if (a->storage != b->storage || a->ndim != b->ndim || a->offset != b->offset ||
        a->dtype != b->dtype)
        return false;
    for (int i = 0; i < a->ndim; i++)
        if (a->shape[i] != b->shape[i] || a->strides[i] != b->strides[i])
            return false;
    return true;
}

tide_status tide_copy_into(tide_ctx *ctx, tide_tensor *dst, const tide_tensor *src) {
    static const char op[] = "copy_";
    bool              ok = src->ndim <= dst->ndim;
    for (int i = 0; ok && i < src->ndim; i++) {
        int64_t s = src->shape[src->ndim - 1 - i], d = dst->shape[dst->ndim - 1 - i];
        ok = s == d || s == 1;
    }
    if (!ok) {
        tide_shape_strs sh = tide_shapes_fmt(src->ndim, src->shape, dst->ndim, dst->shape);
        return tide_seterr(TIDE_ESHAPE,
                           "%s: cannot copy a tensor of shape %s into one of shape %s; the source "
                           "must broadcast to the destination",
                           op, sh.a, sh.b);
    }
    tide_device *dev = dst->storage->dev;
    if (tide_tensor_numel(dst) == 0)
        return TIDE_OK;
    tide_tensor *tmp = NULL;
    if (src->storage->dev != dev && src->dtype == dst->dtype && tide_same_shape(src, dst) &&
        tide_tensor_is_contiguous(src) && tide_tensor_is_contiguous(dst)) {
        /* one byte copy straight into the destination (a pinned buffer gets the full speed of
         * the link), not into a new tensor first */
        size_t      n = tide_tensor_nbytes(dst);
        tide_status st = tide_copy_bytes(dev, tide_tensor_data(dst), src->storage->dev,
                                         tide_tensor_data(src), n, 0);
        if (st != TIDE_OK)
            return tide_err_op(st, op);
        tide_count_transfer(tide_ctx_or_default(ctx), src->storage->dev, dev, n);
        return TIDE_OK;
    }
    if (src->storage->dev != dev) {
        TIDE_TRY(tide_transfer(ctx, op, src, dev, dst->dtype, 0, &tmp));
        src = tmp;
    } else if (src->storage == dst->storage && !same_geom(src, dst)) {
        /* overlapping source and destination: read everything before writing */
        TIDE_TRY(tide_clone_for(ctx, op, src, &tmp));
        src = tmp;
    }
    tide_status st = TIDE_OK;
    if (!(src == dst || same_geom(src, dst))) {
        tide_entry_copy_fn fn;
        st = tide_entry_copy(dev, op, &fn);
        if (st == TIDE_OK) {
            tide_kview dv = tide_kview_of(dst), sv = tide_kview_expand(src, dst->ndim, dst->shape);
            st = fn(dev, &dv, &sv);
            if (st != TIDE_OK)
                st = tide_err_op(st, op);
        }
    }
    tide_tensor_release(tmp);
    return st;
}

tide_status tide_tensor_copy_(tide_ctx *ctx, tide_tensor *dst, const tide_tensor *src) {
    TIDE_TRY(tide_check_writable("copy_", dst));
    tide_status st = tide_copy_into(ctx, dst, src);
    if (st == TIDE_OK)
        tide_mark_written(dst);
    return st;
}

tide_status tide_tensor_pin_memory(tide_ctx *ctx, const tide_tensor *t, tide_tensor **out) {
    const tide_backend *be;
    TIDE_TRY(tide_pinned_backend("pin_memory", &be));
    if (t->storage->dev->type != TIDE_DEVICE_CPU)
        return tide_seterr(TIDE_EDEVICE,
                           "pin_memory: tensor is on %s; only CPU tensors can be "
                           "pinned; call :cpu() first",
                           t->storage->dev->name);
    tide_tensor *r;
    TIDE_TRY(tide_tensor_alloc_pinned(ctx, "pin_memory", be, t->dtype, t->ndim, t->shape, &r));
    tide_status st = tide_copy_into(ctx, r, t);
    if (st != TIDE_OK) {
        tide_tensor_release(r);
        return tide_err_op(st, "pin_memory");
    }
    *out = r;
    return TIDE_OK;
}

/* ---- item: one element to the host ------------------------------------------------------- */

tide_status tide_tensor_item(tide_ctx *ctx, const tide_tensor *t, double *out) {
    tide_scalar v = {0}; /* (set on success; gcc cannot see it once item_x is inlined) */
    TIDE_TRY(tide_tensor_item_x(ctx, t, &v));
    *out = v.d;
    return TIDE_OK;
}

tide_status tide_tensor_item_x(tide_ctx *ctx, const tide_tensor *t, tide_scalar *out) {
    int64_t n = tide_tensor_numel(t);
    if (n != 1)
        return tide_seterr(TIDE_ESHAPE,
                           "item: a tensor with %lld elements cannot be converted to a number; "
                           "only one-element tensors can",
                           (long long)n);
    tide_tensor *h = NULL;
    if (!tide_device_is_host(t->storage->dev)) {
        tide_device *host;
        TIDE_TRY(tide_device_get_index(TIDE_DEVICE_CPU, 0, &host));
        TIDE_TRY(tide_transfer(ctx, "item", t, host, t->dtype, TIDE_TO_IMPLICIT, &h));
        t = h;
    }
    const char *p = tide_tensor_data(t);
    if (t->dtype == TIDE_DTYPE_I64) {
        int64_t v;
        memcpy(&v, p, sizeof v);
        *out = tide_scalar_i(v);
    } else if (tide_dtype_is_float(t->dtype)) {
        *out = tide_scalar_f(tide_load_d(t->dtype, p));
    } else {
        *out = tide_scalar_i((int64_t)tide_load_d(t->dtype, p));
    }
    tide_tensor_release(h);
    return TIDE_OK;
}
