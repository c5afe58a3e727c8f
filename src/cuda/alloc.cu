/*
 * alloc.cu — the caching device allocator, one per device.
 *
 * cudaMalloc and cudaFree cost tens of microseconds and cudaFree synchronizes the device, so
 * freed blocks stay cached and are split and reused (PyTorch's design, reduced):
 *   - sizes round up to 512 bytes;
 *   - blocks of at most 1 MiB come from 2 MiB segments (small pool); larger ones from 20 MiB
 *     segments below 10 MiB, else from a segment of their own rounded to 2 MiB (large pool);
 *   - a request takes the smallest cached block that fits (best fit), splitting off the rest
 *     when it is worth keeping; a freed block merges with free neighbours of its segment.
 * Reuse needs no event: every kernel and copy of a device runs on its one stream, so work that
 * used a block before it was freed is ordered before any later use.
 */
#include "common.cuh"

#include <mutex>
#include <set>
#include <stdio.h>
#include <string>
#include <unordered_map>

namespace {

const size_t kRound = 512;
const size_t kSmallMax = 1 << 20;      /* small pool: requests up to 1 MiB */
const size_t kSmallSegment = 2 << 20;  /* 2 MiB */
const size_t kLargeSegment = 20 << 20; /* for requests below kLargeAlone */
const size_t kLargeAlone = 10 << 20;   /* at or above: a segment of its own */
const size_t kSegmentRound = 2 << 20;

struct Block {
    char  *ptr;
    size_t size;      /* bytes of the block */
    size_t requested; /* what the caller asked for (counted in `allocated`) */
    bool   small;
    bool   free;
    Block *prev, *next; /* neighbours within the segment */
};

struct BlockLess {
    bool operator()(const Block *a, const Block *b) const {
        return a->size != b->size ? a->size < b->size : a->ptr < b->ptr;
    }
};

struct Pool {
    std::mutex                          mu;
    std::set<Block *, BlockLess>        free_small, free_large;
    std::unordered_map<void *, Block *> live;
    size_t                              allocated = 0, reserved = 0, peak = 0;
};

/* never destroyed: tensors may be freed by finalizers that run after static destructors */
Pool *const g_pool = new Pool[TIDE_CUDA_MAX_DEVICES];

size_t round_size(size_t bytes) {
    if (bytes < kRound)
        return kRound;
    return (bytes + kRound - 1) / kRound * kRound;
}

size_t segment_size(size_t size) {
    if (size <= kSmallMax)
        return kSmallSegment;
    if (size < kLargeAlone)
        return kLargeSegment;
    return (size + kSegmentRound - 1) / kSegmentRound * kSegmentRound;
}

std::set<Block *, BlockLess> &free_set(Pool &p, bool small) {
    return small ? p.free_small : p.free_large;
}

/* left takes in right, its neighbour within the segment (neither in a free set) */
void merge_into(Block *left, Block *right) {
    left->size += right->size;
    left->next = right->next;
    if (right->next)
        right->next->prev = left;
    delete right;
}

/* Frees every segment that is entirely cached (one free block without neighbours). cudaFree
 * synchronizes the device, so cached blocks are idle by then. Caller holds p.mu. */
tide_status release_cached(Pool &p) {
    for (int s = 0; s < 2; s++) {
        auto &set = free_set(p, s == 0);
        for (auto it = set.begin(); it != set.end();) {
            Block *b = *it;
            if (b->prev || b->next) {
                ++it;
                continue;
            }
            it = set.erase(it);
            p.reserved -= b->size;
            cudaError_t e = cudaFree(b->ptr);
            delete b;
            TIDE_CUDA_TRY(e);
        }
    }
    return TIDE_OK;
}

std::string human(size_t bytes) {
    char buf[32];
    if (bytes >= (size_t)1 << 30)
        snprintf(buf, sizeof buf, "%.2f GiB", bytes / 1073741824.0);
    else if (bytes >= (size_t)1 << 20)
        snprintf(buf, sizeof buf, "%.2f MiB", bytes / 1048576.0);
    else if (bytes >= 1024)
        snprintf(buf, sizeof buf, "%.2f KiB", bytes / 1024.0);
    else
        snprintf(buf, sizeof buf, "%zu bytes", bytes);
    return buf;
}

} // namespace

tide_status tide_cuda_alloc(tide_device *dev, size_t bytes, void **ptr) {
    *ptr = NULL;
    cudaStream_t stream = NULL;
    TIDE_TRY(tide_cuda_enter(dev, &stream));
    Pool                       &p = g_pool[dev->index];
    size_t                      size = round_size(bytes);
    bool                        small = size <= kSmallMax;
    std::lock_guard<std::mutex> lock(p.mu);
    auto                       &set = free_set(p, small);

    Block  key = {NULL, size, 0, small, true, NULL, NULL};
    auto   it = set.lower_bound(&key);
    Block *b;
    if (it != set.end()) {
        b = *it;
        set.erase(it);
        /* split off the rest when it can serve another request of this pool */
        size_t rest = b->size - size;
        if ((small && rest >= kRound) || (!small && rest > kSmallMax)) {
            Block *r = new Block{b->ptr + size, rest, 0, small, true, b, b->next};
            if (b->next)
                b->next->prev = r;
            b->next = r;
            b->size = size;
            set.insert(r);
        }
    } else {
        size_t      seg = segment_size(size);
        void       *mem = NULL;
        cudaError_t e = cudaMalloc(&mem, seg);
        if (e == cudaErrorMemoryAllocation) {
            /* give the cache back to the driver and retry once */
            cudaGetLastError();
            TIDE_TRY(release_cached(p));
            e = cudaMalloc(&mem, seg);
            if (e == cudaErrorMemoryAllocation && seg > size) {
                cudaGetLastError();
                seg = size; /* a tight segment may still fit */
                e = cudaMalloc(&mem, seg);
            }
            if (e == cudaErrorMemoryAllocation) {
                cudaGetLastError();
                size_t free_b = 0, total_b = 0;
                if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess)
                    cudaGetLastError();
                return tide_cuda_seterr(
                    TIDE_ENOMEM,
                    "CUDA out of memory: tried to allocate %s; %s in use by tide, %s cached, %s "
                    "free on cuda:%d; free tensors you no longer need (t:free(), "
                    "collectgarbage()) or use smaller batches",
                    human(bytes).c_str(), human(p.allocated).c_str(),
                    human(p.reserved - p.allocated).c_str(), human(free_b).c_str(), dev->index);
            }
        }
        TIDE_CUDA_TRY(e);
        p.reserved += seg;
        b = new Block{(char *)mem, seg, 0, small, true, NULL, NULL};
        if (seg - size >= (small ? kRound : kSmallMax + 1)) {
            Block *r = new Block{b->ptr + size, seg - size, 0, small, true, b, NULL};
            b->next = r;
            b->size = size;
            set.insert(r);
        }
    }
    b->free = false;
    b->requested = bytes;
    p.live[b->ptr] = b;
    p.allocated += bytes;
    if (p.allocated > p.peak)
        p.peak = p.allocated;
    *ptr = b->ptr;
    return TIDE_OK;
}

void tide_cuda_free(tide_device *dev, void *ptr, size_t bytes) {
    (void)bytes;
    if (!ptr || dev->index < 0 || dev->index >= TIDE_CUDA_MAX_DEVICES)
        return;
    Pool                       &p = g_pool[dev->index];
    std::lock_guard<std::mutex> lock(p.mu);
    auto                        it = p.live.find(ptr);
    if (it == p.live.end())
        return; /* not ours: nothing safe to do */
    Block *b = it->second;
    p.live.erase(it);
    p.allocated -= b->requested;
    b->free = true;
    b->requested = 0;
    auto &set = free_set(p, b->small);
    /* merge with free neighbours (out of the free set first: it is ordered by size) */
    if (b->prev && b->prev->free) {
        Block *pr = b->prev;
        set.erase(pr);
        merge_into(pr, b);
        b = pr;
    }
    if (b->next && b->next->free) {
        set.erase(b->next);
        merge_into(b, b->next);
    }
    set.insert(b);
}

tide_status tide_cuda_memory_stats(tide_device *dev, tide_memory_stats *out) {
    if (dev->index < 0 || dev->index >= TIDE_CUDA_MAX_DEVICES)
        return tide_cuda_seterr(TIDE_EDEVICE, "memory_stats: no device cuda:%d", dev->index);
    Pool                       &p = g_pool[dev->index];
    std::lock_guard<std::mutex> lock(p.mu);
    out->allocated = p.allocated;
    out->reserved = p.reserved;
    out->peak = p.peak;
    return TIDE_OK;
}

tide_status tide_cuda_empty_cache(tide_device *dev) {
    cudaStream_t stream = NULL;
    TIDE_TRY(tide_cuda_enter(dev, &stream));
    Pool                       &p = g_pool[dev->index];
    std::lock_guard<std::mutex> lock(p.mu);
    return release_cached(p);
}
