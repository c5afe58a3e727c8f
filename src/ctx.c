/* ctx.c — contexts: transfer stats, guard, random seed, memory limit, log callback. */
#include "tide_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

void tide_ctx_release(tide_ctx *ctx) {
    if (!ctx || ctx == &default_ctx)
        return;
    if (atomic_fetch_sub_explicit(&ctx->refs, 1, memory_order_acq_rel) == 1)
        free(ctx);
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

void tide_ctx_set_memory_limit(tide_ctx *ctx, size_t bytes) {
    tide_ctx_or_default(ctx)->mem_limit = bytes;
}

size_t tide_ctx_memory_limit(tide_ctx *ctx) {
    return tide_ctx_or_default(ctx)->mem_limit;
}

size_t tide_ctx_memory_in_use(tide_ctx *ctx) {
    return (size_t)atomic_load_explicit(&tide_ctx_or_default(ctx)->mem_in_use,
                                        memory_order_relaxed);
}

void tide_ctx_set_log(tide_ctx *ctx, void (*fn)(void *ud, const char *msg), void *ud) {
    ctx = tide_ctx_or_default(ctx);
    ctx->log = fn ? fn : log_stderr;
    ctx->log_ud = fn ? ud : NULL;
}
