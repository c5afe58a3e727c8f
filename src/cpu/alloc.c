/*
 * alloc.c — the CPU caching allocator.
 *
 * Fresh large buffers cost page faults on first touch (an add of 1e7 floats ran at 7 GB/s into
 * fresh memory against 45 GB/s into reused memory here), so freed blocks are kept and handed out
 * again. Blocks under CPU_LARGE_MIN go to free lists, one per size class, 4 classes per doubling
 * (at most 25% waste); larger ones to an arena that splits and merges them (alloc_large.c), so
 * memory freed at one size serves another. The cache is bounded; what does not fit is returned
 * to the system. Each device (cpu:0 and the virtual cpu:N) has its own cache and counters; one
 * spin lock guards them all, since the work under it is a few pointer moves (a pthread mutex
 * cost 4 times as many instructions, on every op's alloc and free); a waiter yields its time
 * slice.
 */
#include "alloc_large.h"
#include "cpu.h"
#include "sanitizer.h"
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

/* TIDE_EXACT_ALLOC=1 (on under ASan: `make asan`, CI's sanitizer runs): every buffer is its
 * own allocation of exactly the bytes asked for, freed at once, so that ASan reports a read
 * past a tensor's end or after its free; the cache's rounding and reuse would hide both */
#ifndef TIDE_EXACT_ALLOC
#define TIDE_EXACT_ALLOC TIDE_ASAN
#endif

#define ALIGN       64
#define NCLASSES    256
#define MAX_DEVICES 128 /* devices past this share the last slot's counters */
/* bytes of free blocks kept per device: small blocks up to this; large ones up to this or the
 * most the device has had in use at once, whichever is more (below) */
#define CACHE_LIMIT ((size_t)1 << 30)

typedef struct block {
    struct block *next;
} block;

typedef struct cpu_pool {
    block    *free[NCLASSES];
    size_t    allocated, reserved, peak, cached; /* reserved, cached: the small blocks' */
    cpu_large large;
} cpu_pool;

static atomic_flag lock = ATOMIC_FLAG_INIT;
static cpu_pool    pools[MAX_DEVICES];

static void pool_lock(void) {
    while (atomic_flag_test_and_set_explicit(&lock, memory_order_acquire))
        sched_yield();
}

static void pool_unlock(void) {
    atomic_flag_clear_explicit(&lock, memory_order_release);
}

static cpu_pool *pool_of(const tide_device *dev) {
    int i = dev ? dev->index : 0;
    return &pools[i < 0 ? 0 : (i >= MAX_DEVICES ? MAX_DEVICES - 1 : i)];
}

/* class c holds blocks of class_size(c) bytes, 2^e * (4 + k) / 4 for c = 4 * (e - 4) + k:
 * 4 steps per power of two; the smallest class in use is 8 (64 bytes) */
static size_t class_size(int c) {
    int e = c / 4 + 4, k = c % 4;
    return ((size_t)1 << (e - 2)) * (size_t)(4 + k);
}

static int class_of(size_t bytes) {
    if (bytes <= ALIGN)
        return 8;
    int e = 63 - __builtin_clzll((unsigned long long)bytes); /* 2^e <= bytes < 2^(e+1) */
    /* the smallest k in 0..4 with 2^e * (4 + k) / 4 >= bytes (k = 4 is the next class up) */
    size_t q = (size_t)1 << (e - 2);
    return (e - 4) * 4 + (int)((bytes - ((size_t)1 << e) + q - 1) / q);
}

static block *fresh(size_t sz) {
    void *q = NULL;
    return posix_memalign(&q, ALIGN, sz) == 0 ? q : NULL;
}

static void release_all(cpu_pool *p) {
    for (int c = 0; c < NCLASSES; c++) {
        while (p->free[c]) {
            block *b = p->free[c];
            p->free[c] = b->next;
            free(b);
            p->reserved -= class_size(c);
        }
    }
    p->cached = 0;
    cpu_large_trim(&p->large, 0);
}

static void count_alloc(cpu_pool *p, size_t bytes) {
    p->allocated += bytes;
    if (p->allocated > p->peak)
        p->peak = p->allocated;
}

static tide_status out_of_memory(const tide_device *dev, size_t bytes) {
    return tide_seterr(TIDE_ENOMEM,
                       "cpu alloc: out of memory allocating %zu bytes on %s; free tensors you no "
                       "longer need or use smaller batches",
                       bytes, dev ? dev->name : "cpu");
}

tide_status cpu_alloc(tide_device *dev, size_t bytes, void **ptr) {
    if (bytes > ((size_t)1 << 46))
        return tide_seterr(TIDE_ENOMEM, "cpu alloc: %zu bytes is more than the host can give",
                           bytes);
    cpu_pool *p = pool_of(dev);
    if (TIDE_EXACT_ALLOC) {
        void *q = NULL;
        if (posix_memalign(&q, ALIGN, bytes ? bytes : 1) != 0)
            return out_of_memory(dev, bytes);
        pool_lock();
        count_alloc(p, bytes);
        p->reserved += bytes;
        pool_unlock();
        *ptr = q;
        return TIDE_OK;
    }
    if (bytes >= CPU_LARGE_MIN) {
        pool_lock();
        void *q = cpu_large_alloc(&p->large, bytes);
        if (!q) { /* give the small blocks back too and try once more */
            release_all(p);
            q = cpu_large_alloc(&p->large, bytes);
        }
        if (q)
            count_alloc(p, bytes);
        pool_unlock();
        if (!q)
            return out_of_memory(dev, bytes);
        *ptr = q;
        return TIDE_OK;
    }
    int    c = class_of(bytes);
    size_t sz = class_size(c);
    pool_lock();
    block *b = p->free[c];
    if (b) {
        p->free[c] = b->next;
        p->cached -= sz;
    } else {
        b = fresh(sz);
        if (!b) { /* give the cache back to the system and try once more */
            release_all(p);
            b = fresh(sz);
        }
        if (!b) {
            pool_unlock();
            return out_of_memory(dev, bytes);
        }
        p->reserved += sz;
    }
    count_alloc(p, bytes);
    pool_unlock();
    *ptr = b;
    return TIDE_OK;
}

void cpu_free(tide_device *dev, void *ptr, size_t bytes) {
    if (!ptr)
        return;
    cpu_pool *p = pool_of(dev);
    pool_lock();
    p->allocated -= bytes < p->allocated ? bytes : p->allocated;
    if (TIDE_EXACT_ALLOC) {
        p->reserved -= bytes < p->reserved ? bytes : p->reserved;
        pool_unlock();
        free(ptr);
        return;
    }
    if (bytes >= CPU_LARGE_MIN) { /* an arena block (anything else is not this allocator's) */
        cpu_large_free(&p->large, ptr);
        /* A training loop frees most of its peak at the end of each step and needs it again in
         * the next: segments unmapped here came back as fresh pages, 85,000 page faults (0.1 s)
         * a step of a BERT fine-tune. So the arena keeps as much as it has had in use at once,
         * and an eighth more for the segments that fragmentation adds (at least CACHE_LIMIT);
         * empty_cache gives it back. */
        size_t peak = p->large.peak + p->large.peak / 8;
        size_t keep = peak > CACHE_LIMIT ? peak : CACHE_LIMIT;
        if (p->large.mapped - p->large.used > keep)
            cpu_large_trim(&p->large, keep);
        pool_unlock();
        return;
    }
    int    c = class_of(bytes);
    size_t sz = class_size(c);
    if (p->cached + sz <= CACHE_LIMIT) {
        block *b = ptr;
        b->next = p->free[c];
        p->free[c] = b;
        p->cached += sz;
    } else {
        free(ptr);
        p->reserved -= sz;
    }
    pool_unlock();
}

tide_status cpu_memory_stats(tide_device *dev, tide_memory_stats *out) {
    cpu_pool *p = pool_of(dev);
    pool_lock();
    out->allocated = p->allocated;
    out->reserved = p->reserved + p->large.mapped;
    out->peak = p->peak;
    pool_unlock();
    return TIDE_OK;
}

/* the device's free blocks, and the calling thread's cached tensor headers (host memory: what a
 * host asking any CPU device to give memory back expects to go too; other threads' go when
 * they exit) */
tide_status cpu_empty_cache(tide_device *dev) {
    cpu_pool *p = pool_of(dev);
    pool_lock();
    release_all(p);
    pool_unlock();
    tide_storage_cache_flush();
    return TIDE_OK;
}
