/* ctx.c — contexts: transfer stats, guard, random seed, memory limit, log callback. */
#include "tide_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void log_stderr(void *ud, const char *m) {
    (void)ud;
    fprintf(stderr, "%s\n", m);
}

#define CTX_INIT                                                                                   \
    { .refs = 1, .guard = TIDE_GUARD_ALLOW, .seed = 0x7469646500000000ULL, .log = log_stderr }

/* never freed: tensors made without a context point here */
static tide_ctx default_ctx = CTX_INIT;

tide_ctx *tide_ctx_default(void) {
    return &default_ctx;
}

tide_ctx *tide_ctx_or_default(tide_ctx *ctx) {
    return ctx ? ctx : &default_ctx;
}

tide_status tide_ctx_new(tide_ctx **out) {
    tide_ctx *c = malloc(sizeof *c);
    if (!c)
        return tide_seterr(TIDE_ENOMEM, "ctx_new: out of host memory");
    *c = (tide_ctx)CTX_INIT;
    *out = c;
    return TIDE_OK;
}

void tide_ctx_retain(tide_ctx *ctx) {
    if (ctx && ctx != &default_ctx)
        atomic_fetch_add_explicit(&ctx->refs, 1, memory_order_relaxed);
}

static void drop_refs(tide_ctx *ctx, int n) {
    if (atomic_fetch_sub_explicit(&ctx->refs, n, memory_order_acq_rel) == n)
        free(ctx);
}

/* ---- the storages' references, in batches per thread ---------------------------------------
 * Every storage holds its context (it is charged to it), so each tensor made and dropped took
 * and gave back a reference: two locked instructions of a small op's dozen. A thread instead
 * takes REF_BATCH references at once for the context it last used and hands them out and takes
 * them back without atomics, up to 2 * REF_BATCH. The batch keeps its context alive: it goes
 * back when the thread turns to another context, when the thread releases its own handle on the
 * context (a host closing its Lua state) and when the thread exits. */
#define REF_BATCH 64

typedef struct ref_batch {
    tide_ctx *ctx; /* NULL: none held */
    int       n;   /* references held for ctx, not yet handed to a storage */
    bool      registered;
} ref_batch;

static _Thread_local ref_batch batch;

static void batch_return(ref_batch *b) {
    tide_ctx *ctx = b->ctx;
    int       n = b->n;
    b->ctx = NULL;
    b->n = 0;
    if (ctx && n)
        drop_refs(ctx, n);
}

static void batch_thread_exit(void *b) {
    batch_return(b);
}

/* a thread holds a batch only once its exit is sure to give it back */
static bool batch_usable(ref_batch *b) {
    if (!b->registered)
        b->registered = tide_at_thread_exit(batch_thread_exit, b);
    return b->registered;
}

void tide_ctx_retain_storage(tide_ctx *ctx) {
    if (ctx == &default_ctx)
        return;
    ref_batch *b = &batch;
    if (b->ctx == ctx && b->n > 0) {
        b->n--;
        return;
    }
    if (!batch_usable(b)) {
        tide_ctx_retain(ctx);
        return;
    }
    batch_return(b); /* another context's, or none */
    atomic_fetch_add_explicit(&ctx->refs, 1 + REF_BATCH, memory_order_relaxed);
    b->ctx = ctx;
    b->n = REF_BATCH;
}

void tide_ctx_release_storage(tide_ctx *ctx) {
    if (ctx == &default_ctx)
        return;
    ref_batch *b = &batch;
    if (b->ctx == ctx && b->n < 2 * REF_BATCH) {
        b->n++; /* the batch holds references of its own: the count cannot reach 0 here */
        return;
    }
    drop_refs(ctx, 1);
}

void tide_ctx_release(tide_ctx *ctx) {
    if (!ctx || ctx == &default_ctx)
        return;
    if (batch.ctx == ctx) /* the batch goes back with the handle: the last one frees ctx */
        batch_return(&batch);
    drop_refs(ctx, 1);
}

void tide_ctx_transfer_stats(tide_ctx *ctx, tide_transfer_stats *out) {
    *out = tide_ctx_or_default(ctx)->stats;
}

void tide_ctx_reset_transfer_stats(tide_ctx *ctx) {
    memset(&tide_ctx_or_default(ctx)->stats, 0, sizeof(tide_transfer_stats));
}

void tide_ctx_set_guard(tide_ctx *ctx, tide_guard mode) {
    tide_ctx_or_default(ctx)->guard = mode;
}

tide_guard tide_ctx_guard(tide_ctx *ctx) {
    return tide_ctx_or_default(ctx)->guard;
}

void tide_ctx_manual_seed(tide_ctx *ctx, uint64_t seed) {
    ctx = tide_ctx_or_default(ctx);
    ctx->seed = seed;
    ctx->rng_offset = 0;
}

void tide_ctx_rng_state(tide_ctx *ctx, uint64_t *seed, uint64_t *offset) {
    ctx = tide_ctx_or_default(ctx);
    *seed = ctx->seed;
    *offset = ctx->rng_offset;
}

void tide_ctx_set_rng_state(tide_ctx *ctx, uint64_t seed, uint64_t offset) {
    ctx = tide_ctx_or_default(ctx);
    ctx->seed = seed;
    ctx->rng_offset = offset;
}

void tide_ctx_set_memory_limit(tide_ctx *ctx, size_t bytes) {
    tide_ctx_or_default(ctx)->mem_limit = bytes;
}

size_t tide_ctx_memory_limit(tide_ctx *ctx) {
    return tide_ctx_or_default(ctx)->mem_limit;
}

size_t tide_ctx_memory_budget(tide_ctx *ctx) {
    ctx = tide_ctx_or_default(ctx);
    size_t limit = ctx->mem_limit, in_use = tide_ctx_memory_in_use(ctx);
    if (limit)
        return limit > in_use ? limit - in_use : 0;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (size_t)pages * (size_t)page : (size_t)1 << 34;
}

size_t tide_ctx_memory_in_use(tide_ctx *ctx) {
    return (size_t)atomic_load_explicit(&tide_ctx_or_default(ctx)->mem_in_use,
                                        memory_order_relaxed);
}

uint64_t tide_ctx_memory_allocated(tide_ctx *ctx) {
    return (uint64_t)atomic_load_explicit(&tide_ctx_or_default(ctx)->mem_allocated,
                                          memory_order_relaxed);
}

void tide_ctx_set_log(tide_ctx *ctx, void (*fn)(void *ud, const char *msg), void *ud) {
    ctx = tide_ctx_or_default(ctx);
    ctx->log = fn ? fn : log_stderr;
    ctx->log_ud = fn ? ud : NULL;
}
