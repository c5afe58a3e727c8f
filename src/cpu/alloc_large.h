/*
 * alloc_large.h — the CPU allocator's arena for large blocks (alloc_large.c): best fit in
 * mapped segments, split and merged. One arena per device; callers hold alloc.c's lock.
 */
#ifndef TIDE_CPU_ALLOC_LARGE_H
#define TIDE_CPU_ALLOC_LARGE_H

#include <stddef.h>

#define CPU_LARGE_MIN ((size_t)1 << 20) /* requests of this many bytes or more */

typedef struct large_block large_block;
typedef struct large_seg   large_seg;

typedef struct cpu_large {
    large_seg   *segs;
    large_block *free;   /* free blocks in address order */
    size_t       mapped; /* bytes of segments */
    size_t       used;   /* bytes of blocks handed out (whole pages) */
    size_t       peak;   /* the most used has been since the last full trim */
} cpu_large;

/* a block of at least bytes (page-aligned), NULL when the system has no more memory */
void *cpu_large_alloc(cpu_large *a, size_t bytes);
/* gives back the block at ptr; 0 when ptr is not a block of a (nothing done) */
int cpu_large_free(cpu_large *a, void *ptr);
/* unmaps wholly free segments until at most keep bytes of them remain; the bytes unmapped */
size_t cpu_large_trim(cpu_large *a, size_t keep);

#endif
