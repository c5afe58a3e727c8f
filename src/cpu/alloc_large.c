/*
 * alloc_large.c — the CPU allocator's large blocks (CPU_LARGE_MIN bytes and more): first fit in
 * segments mapped from the system, split and merged.
 *
 * Size classes (alloc.c) keep a freed block for its own class only. A training step's large
 * tensors come in many sizes (a convolution's output, its blocked copy, pooling indices, their
 * gradients), and the blocks of one class sat unused while another class asked the system for
 * more: a small CNN's loop held 38.5 MB for a peak of 24.5 MB in use. Large blocks come instead
 * from segments. A request takes the free block at the lowest address that fits (blocks pack
 * toward a segment's start and a loop's placements repeat; best fit touched as many pages),
 * split when the rest is worth keeping, and a freed block merges with its free neighbours, as
 * in PyTorch's CUDA caching allocator. The small CNN's loop: 27.6 MB resident in its segment.
 *
 * A segment is mapped with mmap: its pages become resident when first written and stay so while
 * it is kept, so reuse takes no page faults and a segment's untouched tail costs no memory
 * (memory_stats's reserved counts whole segments). A segment is unmapped when all of it is free
 * and the cache holds too much (alloc.c: more than the most ever in use at once), on
 * empty_cache, or when the system runs short.
 *
 * The block records live outside the segments (malloc'd), so the free lists touch no page of
 * a tensor. Callers hold alloc.c's lock.
 */
#include "alloc_large.h"
#include <stdlib.h>
#include <sys/mman.h>

#define SEG_MIN   ((size_t)32 << 20) /* a segment's least size: room for several tensors */
#define SEG_ROUND ((size_t)2 << 20)
#define GRAIN     ((size_t)4096)    /* block sizes and offsets: whole pages */
#define SPLIT_MIN ((size_t)1 << 20) /* a rest smaller than this stays with the block */

struct large_block {
    large_block *prev, *next; /* physical neighbours in the segment (NULL at its ends) */
    large_block *fnext;       /* the arena's list of free blocks, by address */
    large_seg   *seg;
    char        *ptr;
    size_t       size;
    int          free;
};

struct large_seg {
    large_seg   *next;
    char        *base;
    size_t       size;
    large_block *first;
};

static size_t round_up(size_t n, size_t to) {
    return (n + to - 1) / to * to;
}

/* the free list is kept in address order: best fit then prefers the lowest address */
static void free_insert(cpu_large *a, large_block *b) {
    large_block **at = &a->free;
    while (*at && (*at)->ptr < b->ptr)
        at = &(*at)->fnext;
    b->fnext = *at;
    *at = b;
    b->free = 1;
}

static void free_remove(cpu_large *a, large_block *b) {
    large_block **at = &a->free;
    while (*at && *at != b)
        at = &(*at)->fnext;
    if (*at)
        *at = b->fnext;
    b->fnext = NULL;
    b->free = 0;
}

static large_seg *seg_map(cpu_large *a, size_t size) {
    large_seg   *s = malloc(sizeof *s);
    large_block *b = malloc(sizeof *b);
    void        *p = MAP_FAILED;
    if (s && b)
        p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        free(s);
        free(b);
        return NULL;
    }
    *s = (large_seg){a->segs, p, size, b};
    *b = (large_block){NULL, NULL, NULL, s, p, size, 0};
    a->segs = s;
    a->mapped += size;
    free_insert(a, b);
    return s;
}

static int seg_idle(const large_seg *s) {
    return s->first->free && !s->first->next;
}

/* unmaps the segments all of whose memory is free (all of them: keep == 0) until at most keep
 * bytes of free segments remain, the smallest first: a loop's big allocation keeps the segment
 * it will need again, and the small leftovers of earlier work go; returns the bytes unmapped */
size_t cpu_large_trim(cpu_large *a, size_t keep) {
    size_t freed = 0, idle = 0;
    for (large_seg *s = a->segs; s; s = s->next)
        idle += seg_idle(s) ? s->size : 0;
    while (idle > keep) {
        large_seg **pick = NULL;
        for (large_seg **at = &a->segs; *at; at = &(*at)->next)
            if (seg_idle(*at) && (!pick || (*at)->size < (*pick)->size))
                pick = at;
        if (!pick)
            break;
        large_seg *s = *pick;
        *pick = s->next;
        free_remove(a, s->first);
        munmap(s->base, s->size);
        idle -= s->size;
        freed += s->size;
        a->mapped -= s->size;
        free(s->first);
        free(s);
    }
    if (keep == 0)
        a->peak = a->used; /* empty_cache: the loop's high-water mark starts again */
    return freed;
}

/* the free block of at least size bytes at the lowest address */
static large_block *first_fit(cpu_large *a, size_t size) {
    for (large_block *b = a->free; b; b = b->fnext)
        if (b->size >= size)
            return b;
    return NULL;
}

void *cpu_large_alloc(cpu_large *a, size_t bytes) {
    size_t       size = round_up(bytes ? bytes : 1, GRAIN);
    large_block *b = first_fit(a, size);
    if (!b) {
        size_t seg = size < SEG_MIN ? SEG_MIN : round_up(size, SEG_ROUND);
        if (!seg_map(a, seg) && !(cpu_large_trim(a, 0) && seg_map(a, seg)))
            return NULL;
        b = first_fit(a, size);
    }
    free_remove(a, b);
    if (b->size - size >= SPLIT_MIN) { /* the rest becomes a free block of its own */
        large_block *r = malloc(sizeof *r);
        if (r) {
            *r = (large_block){b, b->next, NULL, b->seg, b->ptr + size, b->size - size, 0};
            if (b->next)
                b->next->prev = r;
            b->next = r;
            b->size = size;
            free_insert(a, r);
        }
    }
    a->used += b->size;
    if (a->used > a->peak)
        a->peak = a->used;
    return b->ptr;
}

/* the block that starts at ptr (NULL: not one of this arena's) */
static large_block *block_at(const cpu_large *a, const char *ptr) {
    for (large_seg *s = a->segs; s; s = s->next)
        if (ptr >= s->base && ptr < s->base + s->size)
            for (large_block *b = s->first; b; b = b->next)
                if (b->ptr == ptr)
                    return b->free ? NULL : b;
    return NULL;
}

/* b's free neighbour n (after b) folds into b */
static void merge_next(cpu_large *a, large_block *b) {
    large_block *n = b->next;
    free_remove(a, n);
    b->size += n->size;
    b->next = n->next;
    if (n->next)
        n->next->prev = b;
    free(n);
}

int cpu_large_free(cpu_large *a, void *ptr) {
    large_block *b = block_at(a, ptr);
    if (!b)
        return 0;
    a->used -= b->size;
    if (b->next && b->next->free)
        merge_next(a, b);
    if (b->prev && b->prev->free) {
        large_block *p = b->prev;
        merge_next(a, p); /* b was not on the free list: merge_next's removal finds nothing */
        b = p;
    } else {
        free_insert(a, b);
    }
    return 1;
}
