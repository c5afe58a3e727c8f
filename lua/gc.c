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
 *
 * Training loops end a backward pass every step, the moment the step's graph dies: from the
 * first full collection on (which tells tide the mode: tl_gc_pass_end), a generational
 * collector's minor collection runs there, not in the middle of the step, and full
 * collections only when garbage outgrows the slack (the MLP step: none; it had done one a
 * step, a fifth of its time).
 *
 * A step of more tensors than that (a CNN's) frees them as it goes, close to what reference
 * counting would: a minor collection at the pass's start (the forward pass's unkept results),
 * others while the pass runs (what the nodes that have run let go of: tl_gc_dropped), and a
 * full collection at its end whenever a collection during the step aged the graph (gc_aged).
 * The small CNN of bench/cnn_memory.lua: 38.7 MB at the allocator's peak before, 24.5 after.
 */
#include "state.h"

#ifndef GC_STEP_BYTES
#define GC_STEP_BYTES ((size_t)1 << 18)
#endif
#ifndef GC_GARBAGE_CAP
#define GC_GARBAGE_CAP ((size_t)16 << 20) /* device memory held by garbage between collections */
#endif
/* tensor bytes made in a step (or let go of in its pass) before a collection in the pass */
#ifndef GC_PASS_GARBAGE
#define GC_PASS_GARBAGE ((size_t)4 << 20)
#endif
/* what a tensor holds outside Lua besides its data: the core's tensor + storage header (one
 * malloc'd block of about 240 bytes) and the allocator's rounding of a small buffer */
#define TENSOR_HOST_BYTES 256
/* the tensors made between a generational collector's minor collections at the most: as many
 * as GC_STEP_BYTES of host blocks */
#define GC_SMALL_TENSORS (GC_STEP_BYTES / TENSOR_HOST_BYTES)

void tl_full_collect(lua_State *L, tide_lua_state *S) {
    lua_gc(L, LUA_GCCOLLECT, 0);
    S->gc_debt = 0;
    S->gc_since = 0;
    S->gc_live = tide_ctx_memory_in_use(S->ctx);
    S->gc_heap = (size_t)lua_gc(L, LUA_GCCOUNT, 0) << 10;
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

/* the tensor bytes allowed past the live set between full collections: the Lua heap's size or
 * half the live set, whichever is larger, the latter capped at GC_GARBAGE_CAP */
static size_t slack(lua_State *L, const tide_lua_state *S) {
    size_t heap = (size_t)lua_gc(L, LUA_GCCOUNT, 0) << 10;
    size_t live = S->gc_live / 2 < GC_GARBAGE_CAP ? S->gc_live / 2 : GC_GARBAGE_CAP;
    return heap > live ? heap : live;
}

/* a full collection if the collector is generational (it notes the mode and the live set) */
static int full_if_generational(lua_State *L, tide_lua_state *S) {
    S->gc_since = 0;
    S->gc_pinned = 0;
    S->gc_gen = collect_if_generational(L);
    S->gc_aged = S->gc_gen;
    if (!S->gc_gen)
        S->gc_passes = 0;
    if (S->gc_gen) {
        S->gc_debt = 0;
        S->gc_live = tide_ctx_memory_in_use(S->ctx);
        S->gc_heap = (size_t)lua_gc(L, LUA_GCCOUNT, 0) << 10;
    }
    return S->gc_gen;
}

static void step(lua_State *L, tide_lua_state *S) {
    S->gc_made = 0;
    int kb = (int)(S->gc_debt >> 10 > 0x7fffffff ? 0x7fffffff : S->gc_debt >> 10);
    S->gc_debt = 0;
#if LUA_VERSION_NUM <= 504
    lua_gc(L, LUA_GCSTEP, kb); /* 5.1-5.4: the step as if kb KiB had been allocated */
#else
    (void)kb;
    lua_gc(L, LUA_GCSTEP, 0); /* 5.5 changed the argument's meaning: one basic step */
#endif
}

/* Counting the data alone let tiny tensors pile up as garbage by the ten thousand (a 1-element
 * add: ~12,000 dead tensors, 4 MB of headers and blocks out of cache): each counts its header.
 * While backward passes end often (S->gc_passes, below), a generational collector's minor
 * step waits for the pass's end; a full collection runs when the tensors made since reach
 * GC_GARBAGE_CAP, the slack or a quarter of the memory in use, whichever is largest. */
void tl_gc_hint(lua_State *L, tide_lua_state *S, size_t bytes) {
    S->gc_debt += bytes + TENSOR_HOST_BYTES;
    S->gc_made++;
    if (S->gc_debt < GC_STEP_BYTES)
        return;
    /* A generational collector's minor collection promotes every tensor alive at that moment,
     * and what then dies old waits for a full collection (a pass over the whole Lua heap).
     * Outside training steps, big tensors (an inference's activations, MBs each) made one
     * minor collection an op, which aged each layer's input, and a full collection followed
     * nearly every layer: 1,258 minor and 330 full for 512 MiniLM sentences, 11% of the
     * time. The minor ones wait for a quarter of the memory in use, as during training steps
     * (111 minor and 31 full), or for GC_SMALL_TENSORS tensors, so that small ones never pile
     * up by more than before behind a large model. */
    size_t quarter = S->gc_gen && !S->gc_passes ? tide_ctx_memory_in_use(S->ctx) / 4 : 0;
    if (S->gc_debt < quarter && S->gc_made < GC_SMALL_TENSORS)
        return;
    S->gc_since += S->gc_debt;
    size_t room = slack(L, S);
    room = room > quarter ? room : quarter; /* and so may the garbage that outlived them */
    if (S->gc_passes) {
        /* A training step's tensors are mostly alive until its backward pass ends anyway, so
         * the garbage allowed before a full collection grows with the memory in use (a
         * transformer step makes hundreds of MB: a full collection every 16 MB cost 4% of it) */
        size_t in_use = tide_ctx_memory_in_use(S->ctx), cap = in_use / 4;
        cap = cap > GC_GARBAGE_CAP ? cap : GC_GARBAGE_CAP;
        cap = cap > room ? cap : room;
        if (S->gc_since < cap) {
            S->gc_debt = 0;
            return;
        }
        if (S->gc_since < 4 * cap && full_if_generational(L, S))
            return;
        S->gc_passes = 0; /* no pass ended in that many bytes: steps pace the collector again */
    }
    if (S->gc_since >= room) {
        if (S->gc_gen) {
            /* a minor collection first: a full one only when the memory in use shows garbage
             * that outlived it (promoted); a loop of small ops never promotes any, and a full
             * collection every heap's size of tensors was a sixth of an `a + b` */
            size_t made = S->gc_since;
            step(L, S);
            S->gc_since = 0;
            S->gc_aged = 1;
            /* A full collection makes old every tensor alive at that moment, the ones just made
             * included: a loop's temporary (y = x:neg() of 4 MB) then died old, and its garbage
             * reached the slack at the next minor collection, so a full collection (0.3 ms for
             * tide's heap) ran every iteration, 7x the op. So the tensors made just before one
             * (gc_pinned) are allowed as garbage on top of the slack. */
            if (tide_ctx_memory_in_use(S->ctx) >= S->gc_live + room + S->gc_pinned &&
                full_if_generational(L, S))
                S->gc_pinned = made;
            return;
        }
        if (full_if_generational(L, S))
            return;
    }
    step(L, S);
}

/* The start of a backward pass. The forward pass's results that no node kept (a ReLU's output,
 * which max-pooling does not read) are garbage now; left to the pass's end, they sit under the
 * pass's own peak (a small CNN: 7.5 MB of its 33). When the step has made enough tensors since
 * the last collection, a minor collection frees them. The graph survives it, alive, and is
 * still young for the pass end's minor collection: Lua frees an object that survived one minor
 * collection at the next (two make it old). */
void tl_gc_pass_begin(lua_State *L, tide_lua_state *S) {
    S->gc_dropped = 0;
    if (!S->gc_gen || S->gc_since + S->gc_debt < GC_PASS_GARBAGE)
        return;
    lua_gc(L, LUA_GCSTEP, 0); /* generational: a minor collection */
}

/* During a pass, autograd's engine lets go of the tensors each node saved once the node has run
 * (engine.lua: drop_saved). Those the step made are garbage unless the user holds them; once
 * they add up to GC_PASS_GARBAGE, a minor collection frees those still young before the pass's
 * peak (a small CNN: 27.6 -> 24.5 MB at the allocator's peak; what a collection during the
 * forward pass made old waits for the pass's end). It ages the graph still alive, so the pass
 * ends with a full collection (gc_aged). Incremental mode paces itself (tl_gc_hint). */
int tl_gc_dropped(tide_lua_state *S, size_t nbytes) {
    S->gc_dropped += nbytes;
    if (!S->gc_gen || S->gc_dropped < GC_PASS_GARBAGE)
        return 0;
    S->gc_dropped = 0;
    return 1;
}

void tl_gc_young(lua_State *L, tide_lua_state *S) {
    lua_gc(L, LUA_GCSTEP, 0); /* generational: a minor collection */
    S->gc_aged = 1;
}

/* The end of a backward pass (autograd's engine), when the training step's graph has just
 * become garbage. In generational mode a minor collection here frees the tensors made since
 * the last one: they are young, since no step ran during the pass, and dead. A step in the
 * middle of a pass instead promoted the graph alive at that moment to the old generation,
 * which only a full collection (a pass over the whole Lua heap, 0.2 ms) frees: an MLP step did
 * one each. A full collection now runs only when the memory in use after the minor one exceeds
 * the live set by the slack (what reached the old generation anyway). */
void tl_gc_pass_end(lua_State *L, tide_lua_state *S) {
    if (!S->gc_gen) /* incremental, or not known yet: tl_gc_hint's steps pace the collector */
        return;
    S->gc_since += S->gc_debt;
    S->gc_debt = 0;
    S->gc_passes = 1;
    size_t heap = (size_t)lua_gc(L, LUA_GCCOUNT, 0) << 10;
    if (S->gc_aged) {
        /* a collection during the pass aged the graph alive then (a full one makes it old, two
         * minor ones too), and a minor collection would leave it: a small CNN step's 19 MB
         * stayed until the next step's collection, on top of that step's memory. A full
         * collection walks the whole Lua heap, so it runs when the tensors made since the last
         * collection are at least the heap's size: a host's 60 MB heap (a game's, busted's)
         * behind a small model had paid a full collection a step, 2-3 times the step's time.
         * Otherwise the graph waits, old, for the slack's test below, as other garbage does. */
        S->gc_aged = 0;
        if (S->gc_since >= heap) {
            full_if_generational(L, S);
            return;
        }
    }
    if (S->gc_since < GC_STEP_BYTES)
        return;
    lua_gc(L, LUA_GCSTEP, 0); /* generational: a minor collection */
    /* These minor collections replace the ones Lua's allocations would trigger, and with them
     * Lua's own test for a major collection: the Lua heap (tables and closures each step made,
     * promoted old by the next minor collection) grew ~2 KB a step, 12 MB over 5000 MLP steps.
     * So the test is here, as Lua makes it (genmajormul, 100%: the heap doubled since the last
     * full collection), besides the tensors' own. */
    heap = (size_t)lua_gc(L, LUA_GCCOUNT, 0) << 10;
    if (tide_ctx_memory_in_use(S->ctx) >= S->gc_live + slack(L, S) || heap > 2 * S->gc_heap)
        full_if_generational(L, S);
    S->gc_since = 0;
}
