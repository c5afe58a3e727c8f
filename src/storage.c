/* storage.c — refcounted buffers on one device, charged to a context's memory limit.
 *
 * A fresh tensor and its storage come from one block (struct fresh below): the common op
 * result costs one host allocation plus the device allocator's (cached) buffer. The tensor
 * header inside the block is released with the storage, so a view may outlive it. */
#include "sanitizer.h"
#include "tide_impl.h"

#include <stdlib.h>
#include <string.h>

typedef struct fresh {
    tide_storage s;
    tide_tensor  t;
} fresh;

/* Every storage is the head of a `fresh` block, and freed blocks are kept for reuse on a list of
 * the thread that freed them (at most FRESH_CACHE_MAX, about 1 MiB): Lua's collector frees dead
 * tensors by the hundred, past glibc's per-thread cache of 7 blocks a size, so malloc and free
 * took their slow paths (about 300 instructions of a 1-element `a + b`). One list per thread
 * needs no lock (a spin lock's locked instruction was two of the dozen an op paid); a thread's
 * blocks are freed when it exits. Off under AddressSanitizer, so that a use after free stays
 * visible. */
#if TIDE_ASAN
#define FRESH_CACHE_MAX 0
#else
#define FRESH_CACHE_MAX 4096
#endif

#if FRESH_CACHE_MAX
typedef union cached_block {
    fresh               f;
    union cached_block *next;
} cached_block;

typedef struct block_list {
    cached_block *head;
    int           len;
    bool          registered; /* with tide_at_thread_exit, which frees it */
} block_list;

static _Thread_local block_list thread_blocks;

static void free_list(block_list *l) {
    cached_block *b = l->head;
    l->head = NULL;
    l->len = 0;
    while (b) {
        cached_block *next = b->next;
        free(b);
        b = next;
    }
}

static void thread_exit(void *l) {
    free_list(l);
}

/* once per thread, at its first cached block (a thread that could not register frees its
 * blocks at once instead) */
static bool register_thread(block_list *l) {
    l->registered = tide_at_thread_exit(thread_exit, l);
    return l->registered;
}
#endif

static fresh *fresh_alloc(void) {
#if FRESH_CACHE_MAX
    block_list *l = &thread_blocks;
    if (l->head) {
        cached_block *b = l->head;
        l->head = b->next;
        l->len--;
        return &b->f;
    }
#endif
    return malloc(sizeof(fresh));
}

static void fresh_free(fresh *f) {
#if FRESH_CACHE_MAX
    block_list *l = &thread_blocks;
    if (l->len < FRESH_CACHE_MAX && (l->registered || register_thread(l))) {
        cached_block *b = (cached_block *)(void *)f;
        b->next = l->head;
        l->head = b;
        l->len++;
        return;
    }
#endif
    free(f);
}

void tide_storage_cache_flush(void) {
#if FRESH_CACHE_MAX
    free_list(&thread_blocks);
#endif
}

int tide_storage_cache_count(void) {
#if FRESH_CACHE_MAX
    return thread_blocks.len;
#else
    return 0;
#endif
}

static bool is_embedded(const tide_tensor *t) {
    return t == &((fresh *)(void *)t->storage)->t;
}

/* checks the limit, charges ctx, allocates on dev; fills s (refs 1) */
static tide_status storage_init(tide_storage *s, tide_ctx *ctx, tide_device *dev, size_t nbytes) {
    ctx = tide_ctx_or_default(ctx);
    if (ctx->mem_limit) {
        uint64_t before = atomic_fetch_add_explicit(&ctx->mem_in_use, nbytes, memory_order_relaxed);
        if (before + nbytes > ctx->mem_limit || before + nbytes < before) {
            atomic_fetch_sub_explicit(&ctx->mem_in_use, nbytes, memory_order_relaxed);
            return tide_seterr(TIDE_ELIMIT,
                               "memory limit of %zu bytes reached: %llu in use, tried to "
                               "allocate %zu; raise it with tide.set_memory_limit",
                               ctx->mem_limit, (unsigned long long)before, nbytes);
        }
    } else {
        atomic_fetch_add_explicit(&ctx->mem_in_use, nbytes, memory_order_relaxed);
    }
    void *data = NULL;
    if (nbytes) {
        tide_status st = dev->backend->alloc(dev, nbytes, &data);
        if (st != TIDE_OK) {
            atomic_fetch_sub_explicit(&ctx->mem_in_use, nbytes, memory_order_relaxed);
            return st;
        }
    }
    atomic_fetch_add_explicit(&ctx->mem_allocated, nbytes, memory_order_relaxed);
    atomic_init(&s->refs, 1);
    s->dev = dev;
    s->ctx = ctx;
    s->data = data;
    s->nbytes = nbytes;
    s->deleter = NULL;
    s->deleter_ud = NULL;
    s->external = false;
    s->allocator = dev->backend;
    s->pinned = false;
    atomic_init(&s->in_flight, NULL);
    atomic_init(&s->version, 0);
    tide_ctx_retain_storage(ctx);
    return TIDE_OK;
}

tide_status tide_storage_new(tide_ctx *ctx, tide_device *dev, size_t nbytes, tide_storage **out) {
    fresh *f = fresh_alloc(); /* a whole block: tide_storage_release hands it back */
    if (!f)
        return tide_seterr(TIDE_ENOMEM, "alloc: out of host memory");
    tide_status st = storage_init(&f->s, ctx, dev, nbytes);
    if (st != TIDE_OK) {
        fresh_free(f);
        return st;
    }
    *out = &f->s;
    return TIDE_OK;
}

void tide_storage_settle(tide_storage *s) {
    tide_device *dev = atomic_load_explicit(&s->in_flight, memory_order_acquire);
    if (!dev)
        return;
    /* a failure here is the device's sticky error, which its next operation reports. Cleared
     * only once the copy has landed: a thread that finds it cleared reads the data at once */
    dev->backend->synchronize(dev);
    atomic_store_explicit(&s->in_flight, NULL, memory_order_release);
}

void tide_storage_release(tide_storage *s) {
    if (atomic_load_explicit(&s->refs, memory_order_acquire) != 1 &&
        atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) != 1)
        return;
    tide_storage_settle(s); /* the copy must be done before its memory is reused */
    if (s->external) {
        if (s->deleter)
            s->deleter(s->deleter_ud);
    } else {
        if (s->data && s->pinned)
            s->allocator->free_pinned(s->data);
        else if (s->data)
            s->allocator->free(s->dev, s->data, s->nbytes);
        atomic_fetch_sub_explicit(&s->ctx->mem_in_use, s->nbytes, memory_order_relaxed);
    }
    tide_ctx_release_storage(s->ctx);
    fresh_free((fresh *)(void *)s); /* also frees a tensor header embedded after it */
}

tide_status tide_tensor_alloc(tide_ctx *ctx, const char *op, tide_device *dev, tide_dtype dt,
                              int ndim, const int64_t *shape, tide_tensor **out) {
    int64_t numel;
    if (tide_shape_numel(ndim, shape, &numel) != TIDE_OK)
        return tide_err_op(TIDE_ESHAPE, op);
    size_t esz = tide_dtype_size(dt);
    if ((uint64_t)numel > SIZE_MAX / 2 / esz) {
        char sb[200];
        tide_shape_fmt(sb, sizeof sb, ndim, shape);
        return tide_seterr(TIDE_ESHAPE, "%s: a %s tensor of shape %s is too large to allocate", op,
                           tide_dtype_name(dt), sb);
    }
    fresh *f = fresh_alloc();
    if (!f)
        return tide_seterr(TIDE_ENOMEM, "%s: out of host memory", op);
    tide_status st = storage_init(&f->s, ctx, dev, (size_t)numel * esz);
    if (st != TIDE_OK) {
        fresh_free(f);
        return tide_err_op(st, op);
    }
    tide_tensor *t = &f->t;
    atomic_init(&t->refs, 1);
    t->storage = &f->s;
    t->dtype = dt;
    t->ndim = ndim;
    t->offset = 0;
    if (ndim)
        memcpy(t->shape, shape, (size_t)ndim * sizeof *shape);
    tide_contiguous_strides(ndim, shape, t->strides);
    *out = t;
    return TIDE_OK;
}

void tide_tensor_retain(tide_tensor *t) {
    atomic_fetch_add_explicit(&t->refs, 1, memory_order_relaxed);
}

void tide_tensor_release(tide_tensor *t) {
    if (!t)
        return;
    /* the only reference (the common case) cannot be shared meanwhile: no locked instruction */
    if (atomic_load_explicit(&t->refs, memory_order_acquire) != 1 &&
        atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel) != 1)
        return;
    tide_storage *s = t->storage;
    if (!is_embedded(t))
        free(t);
    tide_storage_release(s);
}

tide_status tide_view_make(const tide_tensor *t, int ndim, const int64_t *shape,
                           const int64_t *strides, int64_t offset, tide_tensor **out) {
    tide_tensor *v = malloc(sizeof *v);
    if (!v)
        return tide_seterr(TIDE_ENOMEM, "view: out of host memory");
    atomic_init(&v->refs, 1);
    v->storage = t->storage;
    atomic_fetch_add_explicit(&v->storage->refs, 1, memory_order_relaxed);
    v->dtype = t->dtype;
    v->ndim = ndim;
    v->offset = offset;
    if (ndim) {
        memcpy(v->shape, shape, (size_t)ndim * sizeof *shape);
        memcpy(v->strides, strides, (size_t)ndim * sizeof *strides);
    }
    *out = v;
    return TIDE_OK;
}

/* The checks of from_blob, under op's name (from_dlpack uses them too). Beyond the sizes: the
 * elements the strides reach must be countable in int64 (views add index * stride to the
 * offset), their bytes must fit too and not run past the end of the address space, and the
 * data must be aligned to the element size (the kernels load whole elements). */
tide_status tide_blob_check(const char *op, const void *data, tide_dtype dt, int ndim,
                            const int64_t *shape, const int64_t *strides) {
    int64_t numel, st[TIDE_MAX_DIMS];
    if (tide_shape_numel(ndim, shape, &numel) != TIDE_OK)
        return tide_err_op(TIDE_ESHAPE, op);
    if (!data && numel)
        return tide_seterr(TIDE_EINVAL, "%s: data is NULL for %lld elements", op, (long long)numel);
    if (strides) {
        for (int i = 0; i < ndim; i++)
            if (strides[i] < 0)
                return tide_seterr(TIDE_EINVAL, "%s: negative stride %lld at dim %d", op,
                                   (long long)strides[i], i + 1);
        memcpy(st, strides, (size_t)ndim * sizeof *st);
    } else {
        tide_contiguous_strides(ndim, shape, st);
    }
    /* the last element's index (size-0 dims aside: views of an empty tensor still index the
     * others), then the bytes up to the end of that element */
    int64_t last = 0, step, bytes = 0, es = (int64_t)tide_dtype_size(dt);
    bool    over_elems = false, over_bytes = false;
    for (int i = 0; i < ndim && !over_elems; i++)
        over_elems = shape[i] && (__builtin_mul_overflow(shape[i] - 1, st[i], &step) ||
                                  __builtin_add_overflow(last, step, &last));
    if (!over_elems && numel)
        over_bytes = __builtin_mul_overflow(last + 1, es, &bytes);
    if (over_elems || over_bytes) {
        tide_shape_strs sh = tide_shapes_fmt(ndim, shape, ndim, st);
        return tide_seterr(TIDE_ESHAPE,
                           "%s: shape %s with strides %s spans more %s%s than fit in 64 bits; "
                           "strides count elements, not bytes",
                           op, sh.a, sh.b, over_elems ? "elements" : "bytes of ",
                           over_elems ? "" : tide_dtype_name(dt));
    }
    if (numel && (uintptr_t)data > UINTPTR_MAX - (uint64_t)bytes)
        return tide_seterr(TIDE_EINVAL,
                           "%s: data %p plus the %lld bytes its shape and strides span wraps "
                           "around the address space",
                           op, data, (long long)bytes);
    if (numel && (uintptr_t)data % (uintptr_t)es)
        return tide_seterr(TIDE_EINVAL,
                           "%s: data %p is not aligned to the %lld-byte elements of %s; copy it "
                           "to memory aligned to %lld bytes",
                           op, data, (long long)es, tide_dtype_name(dt), (long long)es);
    return TIDE_OK;
}

tide_status tide_tensor_from_blob(tide_ctx *ctx, void *data, tide_dtype dt, int ndim,
                                  const int64_t *shape, const int64_t *strides, tide_device *dev,
                                  void (*deleter)(void *ud), void *ud, tide_tensor **out) {
    tide_init();
    if ((unsigned)dt >= TIDE_DTYPE_COUNT)
        return tide_seterr(TIDE_EDTYPE, "from_blob: invalid dtype %d", (int)dt);
    if (ndim < 0 || ndim > TIDE_MAX_DIMS)
        return tide_seterr(TIDE_ESHAPE, "from_blob: %d dims given; tide supports 0 to %d", ndim,
                           TIDE_MAX_DIMS);
    if (ndim && !shape)
        return tide_seterr(TIDE_EINVAL, "from_blob: no shape given");
    TIDE_TRY(tide_blob_check("from_blob", data, dt, ndim, shape, strides));
    int64_t numel = 0;
    tide_shape_numel(ndim, shape, &numel);
    if (!dev)
        TIDE_TRY(tide_device_get_index(TIDE_DEVICE_CPU, 0, &dev));
    fresh *f = fresh_alloc();
    if (!f)
        return tide_seterr(TIDE_ENOMEM, "from_blob: out of host memory");
    tide_storage *s = &f->s;
    atomic_init(&s->refs, 1);
    s->dev = dev;
    s->ctx = tide_ctx_or_default(ctx);
    s->data = data;
    s->nbytes = (size_t)numel * tide_dtype_size(dt);
    s->deleter = deleter;
    s->deleter_ud = ud;
    s->external = true;
    s->allocator = NULL;
    s->pinned = false;
    atomic_init(&s->in_flight, NULL);
    atomic_init(&s->version, 0);
    tide_ctx_retain_storage(s->ctx);
    tide_tensor *t = &f->t;
    atomic_init(&t->refs, 1);
    t->storage = s;
    t->dtype = dt;
    t->ndim = ndim;
    t->offset = 0;
    if (ndim)
        memcpy(t->shape, shape, (size_t)ndim * sizeof *shape);
    if (strides && ndim)
        memcpy(t->strides, strides, (size_t)ndim * sizeof *strides);
    else
        tide_contiguous_strides(ndim, shape, t->strides);
    *out = t;
    return TIDE_OK;
}

tide_status tide_tensor_alloc_pinned(tide_ctx *ctx, const char *op, const tide_backend *be,
                                     tide_dtype dt, int ndim, const int64_t *shape,
                                     tide_tensor **out) {
    tide_device *host;
    TIDE_TRY(tide_device_get_index(TIDE_DEVICE_CPU, 0, &host));
    ctx = tide_ctx_or_default(ctx);
    int64_t numel;
    if (tide_shape_numel(ndim, shape, &numel) != TIDE_OK)
        return tide_err_op(TIDE_ESHAPE, op);
    size_t nbytes = (size_t)numel * tide_dtype_size(dt);
    if (ctx->mem_limit && tide_ctx_memory_in_use(ctx) + nbytes > ctx->mem_limit)
        return tide_seterr(TIDE_ELIMIT,
                           "%s: memory limit of %zu bytes reached: %zu in use, tried to "
                           "allocate %zu; raise it with tide.set_memory_limit",
                           op, ctx->mem_limit, tide_ctx_memory_in_use(ctx), nbytes);
    void       *data = NULL;
    tide_status st = nbytes ? be->alloc_pinned(nbytes, &data) : TIDE_OK;
    if (st != TIDE_OK)
        return tide_err_op(st, op);
    tide_tensor *r;
    st = tide_tensor_from_blob(ctx, data, dt, ndim, shape, NULL, host, NULL, NULL, &r);
    if (st != TIDE_OK) {
        if (data)
            be->free_pinned(data);
        return st;
    }
    r->storage->external = false;
    r->storage->allocator = be;
    r->storage->pinned = true;
    atomic_fetch_add_explicit(&ctx->mem_in_use, nbytes, memory_order_relaxed);
    atomic_fetch_add_explicit(&ctx->mem_allocated, nbytes, memory_order_relaxed);
    *out = r;
    return TIDE_OK;
}

int tide_tensor_is_pinned(const tide_tensor *t) {
    return t->storage->pinned;
}

/* ---- version counters --------------------------------------------------------------------- */

void tide_mark_written(tide_tensor *t) {
    atomic_fetch_add_explicit(&t->storage->version, 1, memory_order_relaxed);
}

uint64_t tide_tensor_version(const tide_tensor *t) {
    return atomic_load_explicit(&t->storage->version, memory_order_relaxed);
}

uint64_t tide_tensor_bump_version(tide_tensor *t, uint64_t past) {
    atomic_uint_fast64_t *v = &t->storage->version;
    uint_fast64_t         cur = atomic_load_explicit(v, memory_order_relaxed), next;
    do
        next = (cur > past ? cur : past) + 1;
    while (!atomic_compare_exchange_weak_explicit(v, &cur, next, memory_order_relaxed,
                                                  memory_order_relaxed));
    return next;
}
