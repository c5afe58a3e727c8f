/*
 * gc.c — pacing Lua's collector by tensor bytes, which it cannot see (it sees small userdata).
 *
 * After every GC_STEP_BYTES of new tensors (never from a finalizer), a collector step as if
 * the bytes were Lua's. In incremental mode that is enough: a step on a small heap ends a
 * cycle, and a large heap's cycle ends after about its size in new bytes.
 *
 * In generational mode (the default of lua.c) a step is a minor collection: it frees young
 * garbage but promotes every tensor alive at that moment (the autograd graph of the training
 * step under way) to the old generation, which Lua collects only in a major collection, when
 * its own heap has grown: a small CNN's loop kept every step's activations (1.1 GB, 51 MB and
 * 13,000 page faults a step). So once the tensor bytes allocated since the last full
 * collection reach a threshold, a generational collector does a full one instead of the step.
 * A full collection costs a pass over the Lua heap (0.2-0.4 ms for tide's 700 KB), so the
 * threshold is the larger of the heap's size and half the tensor bytes alive after the last
 * full collection (so a loop stays below twice its live set with the step's own tensors on
 * top: spec/memory_spec.lua), the latter capped at GC_GARBAGE_CAP so that dead tensors never
 * hold more than that: with the heap's size alone an MLP step of 1.4 MB did three full
 * collections a step (1.95 ms against 1.1-1.2 with half the live set as the slack).
 */
#include "binding.h"

#ifndef GC_STEP_BYTES
#define GC_STEP_BYTES ((size_t)1 << 18)
#endif
#ifndef GC_GARBAGE_CAP
#define GC_GARBAGE_CAP ((size_t)16 << 20) /* device memory held by garbage between collections */
#endif
/* what a tensor holds outside Lua besides its data: the core's tensor + storage header (one
 * malloc'd block of about 240 bytes) and the allocator's rounding of a small buffer */
#define TENSOR_HOST_BYTES 256

void tl_full_collect(lua_State *L, tide_lua_state *S) {
    lua_gc(L, LUA_GCCOLLECT, 0);
    S->gc_debt = 0;
    S->gc_since = 0;
    S->gc_live = tide_ctx_memory_in_use(S->ctx);
}

/* A full collection when the collector is generational; 0 when it is not. Lua 5.4 tells the
 * mode only by changing it: leaving generational mode costs a pass over the heap, and entering
 * it again is exactly the full collection lua_gc(LUA_GCCOLLECT) would do in that mode. The
 * zero arguments keep the host's parameters. */
static int collect_if_generational(lua_State *L) {
#if LUA_VERSION_NUM == 504
    if (lua_gc(L, LUA_GCINC, 0, 0, 0) != LUA_GCGEN)
        return 0;
    lua_gc(L, LUA_GCGEN, 0, 0);
    return 1;
#elif defined(LUA_GCGEN)
    lua_gc(L, LUA_GCCOLLECT, 0); /* 5.2, 5.5: mode unknown; full collections suit both */
    return 1;
#else
    (void)L; /* 5.1, LuaJIT, 5.3: incremental only */
    return 0;
#endif
}

/* Counting the data alone let tiny tensors pile up as garbage by the ten thousand (a 1-element
 * add: ~12,000 dead tensors, 4 MB of headers and blocks out of cache): each counts its header. */
void tl_gc_hint(lua_State *L, tide_lua_state *S, size_t bytes) {
    S->gc_debt += bytes + TENSOR_HOST_BYTES;
    if (S->gc_debt < GC_STEP_BYTES)
        return;
    S->gc_since += S->gc_debt;
    size_t heap = (size_t)lua_gc(L, LUA_GCCOUNT, 0) << 10;
    size_t live = S->gc_live / 2 < GC_GARBAGE_CAP ? S->gc_live / 2 : GC_GARBAGE_CAP;
    if (S->gc_since >= (heap > live ? heap : live)) {
        S->gc_since = 0;
        if (collect_if_generational(L)) {
            S->gc_debt = 0;
            S->gc_live = tide_ctx_memory_in_use(S->ctx);
            return;
        }
    }
    int kb = (int)(S->gc_debt >> 10 > 0x7fffffff ? 0x7fffffff : S->gc_debt >> 10);
    S->gc_debt = 0;
#if LUA_VERSION_NUM <= 504
    lua_gc(L, LUA_GCSTEP, kb); /* 5.1-5.4: the step as if kb KiB had been allocated */
#else
    (void)kb;
    lua_gc(L, LUA_GCSTEP, 0); /* 5.5 changed the argument's meaning: one basic step */
#endif
}
