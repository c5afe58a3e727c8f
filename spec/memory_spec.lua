-- memory_spec.lua — tensor memory stays bounded by what is alive, whichever collector mode the
-- host or the script chose (lua/gc.c). Lua's collector sees only the small userdata of a
-- tensor; tide paces it by tensor bytes, and in generational mode (lua.c's default) the
-- autograd graph of each step used to reach the old generation and stay there: the loop below
-- then grew by every step's activations (24x its live set after 200 steps).
--
-- The loop runs in a process of its own (spec/support/cnn_memory.lua) so that the Lua heap is
-- the loop's, not busted's: the pace of full collections follows the Lua heap's size.

-- runs the loop under collectgarbage(mode) with the checkout's paths; returns its figures
local function run(mode, steps, side, batch)
    local cmd = string.format("LUA_PATH='%s' LUA_CPATH='%s' %s spec/support/cnn_memory.lua %s %d %d %d 2>&1",
        package.path, package.cpath, require("spec.support.host").lua, mode, steps, side or 16,
        batch or 16)
    local p = io.popen(cmd)
    local out = p:read("*a")
    local ok = p:close()
    assert(ok, out)
    local live, most, faults = out:match("^live=(%d+) max=(%d+) faults=(%S+)")
    local after_backward = out:match("backward=(%d+)")
    assert(live and after_backward, out)
    return tonumber(live), tonumber(most), tonumber(faults), out, tonumber(after_backward)
end

describe("tensor memory under either collector mode", function()
    -- 5.3, 5.1 and LuaJIT have one collector, incremental, and no option to choose it
    local modes = _VERSION == "Lua 5.4" and { "generational", "incremental" } or { "default" }
    -- The peak is the live set and one step's activations (4.25-4.62 MB of a 2.46 MB live
    -- set), and now and then (1 run in 20 on Lua 5.3, whose string hashes, and so the
    -- collector's timing, change from run to run) one more step's garbage awaiting its cycle:
    -- 5.42 MB, 2.2x. The bound is 2.5x: the growth this guards against reached 24x. The hosts
    -- with one collector, incremental ("default"), pace its cycles by the Lua heap's size, so
    -- where a step's garbage waits for the next cycle moves with the library's size: on Lua 5.3
    -- a Lua heap 50 KB larger (2.41 -> 2.46 MB, the same C) took this loop's peak from 5.7-6.0
    -- to 7.5 MB in most runs, one step's garbage more, the same at 50, 200 and 800 steps: 3.2x
    -- there.
    for _, mode in ipairs(modes) do
        local bound = mode == "default" and 3.2 or 2.5
        it(("200 CNN training steps stay below %g times the live set (%s)"):format(bound, mode),
            function()
                local live, most, _, out = run(mode, 200)
                assert.is_true(live > 1e6, out) -- the model, its gradients and momentum: ~2.4 MB
                assert.is_true(most < bound * live, mode .. ": " .. out)
            end)
    end

    -- Inference makes big tensors that die young, and no backward pass paces the collector:
    -- in generational mode its minor collections wait for a quarter of the memory in use
    -- or for the slack (lua/gc.c), so the garbage stays below the live set.
    for _, mode in ipairs(modes) do
        -- 40 steps make 320 MB of garbage, 20 times the live set: a pace that lets more than a
        -- step's worth wait fails here (200 steps cost 3 s a mode, for nothing more)
        it("40 inference steps under no_grad stay below twice the live set (" .. mode .. ")",
            function()
            local cmd = string.format("LUA_PATH='%s' LUA_CPATH='%s' %s " ..
                "spec/support/infer_memory.lua %s 40 2>&1", package.path, package.cpath,
                require("spec.support.host").lua, mode)
            local p = io.popen(cmd)
            local out = p:read("*a")
            p:close()
            local live, most = out:match("^live=(%d+) max=(%d+)")
            assert(live, out)
            live, most = tonumber(live), tonumber(most)
            assert.is_true(live > 16e6, out) -- the weights, 16 MB, and the last output
            assert.is_true(most < 2 * live, mode .. ": " .. out)
        end)
    end

    if _VERSION == "Lua 5.4" then
        -- A step of 128 images of 28 x 28 makes about 20 MB of tensors, past the garbage a
        -- generational collector may leave before a full collection in the middle of the step;
        -- that collection makes the graph alive then old, which the minor collection at the
        -- pass's end does not free: the step's graph stayed on top of the next step's
        -- (18.6 MB right after backward against 8.7 MB live).
        it("a step's graph is freed when its backward pass ends, after a collection during it", function()
            local live, _, _, out, after_backward = run("generational", 20, 28, 128)
            assert.is_true(after_backward < live + 2 ^ 20, out)
        end)

        -- A full collection walks the whole Lua heap: behind a host's 32 MB of tables, the
        -- one at each pass's end that freed a graph aged by a collection during the pass cost
        -- 2-3 times a small model's step (busted's heap made the ported scripts' specs that
        -- slow). It waits until the step's tensors reach the heap's size, and the garbage
        -- stays within the heap's size, as Lua's own pace lets its heap grow.
        -- A full collection makes old every tensor alive then, the one just made included: a
        -- loop's temporary (y = x:neg(), 4 MB) died old, and the next minor collection left it,
        -- so a full collection ran every iteration (50 of 50, 7x the op's time). The tensors
        -- aged as they were made are allowed as garbage on top of the slack (lua/gc.c).
        it("a loop of large temporaries does not cost a full collection an iteration", function()
            local cmd = string.format("LUA_PATH='%s' LUA_CPATH='%s' %s " ..
                "spec/support/loop_temporaries_gc.lua 50 2>&1", package.path, package.cpath,
                require("spec.support.host").lua)
            local p = io.popen(cmd)
            local out = p:read("*a")
            p:close()
            local full, live, most = out:match("^full=(%d+) steps=50 live=(%d+) max=(%d+)")
            assert(full, out)
            full, live, most = tonumber(full), tonumber(live), tonumber(most)
            assert.is_true(full <= 5, out) -- before: 50 of 50
            assert.is_true(most <= 3 * live, out) -- x, y and the one aged y
        end)

        it("a host's big Lua heap does not cost a full collection every step", function()
            local cmd = string.format("LUA_PATH='%s' LUA_CPATH='%s' %s " ..
                "spec/support/big_heap_gc.lua 20 2>&1", package.path, package.cpath,
                require("spec.support.host").lua)
            local p = io.popen(cmd)
            local out = p:read("*a")
            p:close()
            local full, live, most, heap = out:match("^full=(%d+) steps=20 live=(%d+) " ..
                "max=(%d+) heap_kb=(%d+)")
            assert(full, out)
            full, live, most, heap = tonumber(full), tonumber(live), tonumber(most),
                tonumber(heap) * 1024
            assert.is_true(heap > 30e6, out)
            assert.is_true(full <= 10, out) -- before: 20 of 20
            assert.is_true(most < 2 * live + heap, out)
        end)
    end
end)

-- The Lua heap too: in generational mode tide's minor collections at each backward pass's end
-- stood in for Lua's own, and with them Lua's test for a major collection; the heap (and RSS)
-- grew ~2 KB a step, without bound (issue 27; lua/gc.c, tl_gc_pass_end).
describe("a training loop's memory is flat over 5000 steps", function()
    local modes = _VERSION == "Lua 5.4" and { "generational", "incremental" } or { "default" }
    for _, mode in ipairs(modes) do
        it("in " .. mode .. " mode: Lua heap, tide's memory and RSS", function()
            local cmd = string.format("LUA_PATH='%s' LUA_CPATH='%s' %s spec/support/mlp_memory.lua %s 5000 2>&1",
                package.path, package.cpath, require("spec.support.host").lua, mode)
            local p = io.popen(cmd)
            local out = p:read("*a")
            p:close()
            local h1, m1, r1 = out:match("early: heap=(%d+) mem=(%d+) rss=(%d+)")
            local h2, m2, r2 = out:match("late: heap=(%d+) mem=(%d+) rss=(%d+)")
            assert(h2, out)
            h1, m1, r1, h2, m2, r2 = tonumber(h1), tonumber(m1), tonumber(r1), tonumber(h2),
                tonumber(m2), tonumber(r2)
            -- 4000 steps apart: before the fix the heap had grown by 9 MB and RSS by 10 MB
            assert.is_true(h2 < 2 * h1 + 256, out)
            assert.is_true(m2 < 2 * m1 + 65536, out)
            -- under ASan (spec/support/run_asan.sh) freed memory waits in its quarantine
            if not (os.getenv("LD_PRELOAD") or ""):find("asan", 1, true) then
                assert.is_true(r2 < r1 + 2048, out)
            end
        end)
    end
end)

-- The CPU allocator keeps the free large blocks of as much memory as it has had in use at once
-- (at least 1 GiB): a training loop frees most of its peak after each step and needs it again,
-- and unmapped pages came back faulted and zeroed (85,000 page faults a BERT step). Without
-- the caching allocator (TIDE_EXACT_ALLOC, the sanitizer build) every block goes back at once.
describe("the CPU allocator's cache of large blocks", function()
    local tide = require("tide")
    local function reserved()
        return tide.memory_stats("cpu").reserved
    end
    local function drop()
        collectgarbage()
        collectgarbage()
    end

    it("keeps what a loop's peak used (past 1 GiB) until tide.empty_cache", function()
        -- the garbage earlier specs left is collected first, then the cache emptied: the other
        -- way round their freed blocks filled it again, and the probe below took one of them,
        -- so the cache looked absent
        drop()
        tide.empty_cache("cpu")
        local base = reserved()
        local probe = tide.empty({ 1024 * 1024 })
        local caching = reserved() > base
        probe = nil -- luacheck: ignore
        drop()
        caching = caching and reserved() > base
        -- 1.25 GiB of float32, never written: mapped, but no page of it resident
        local n = 320 * 1024 * 1024
        local t = tide.empty({ n })
        local held = reserved()
        assert.is_true(held - base >= n * 4)
        t = nil -- luacheck: ignore
        drop()
        if caching then
            assert.are.equal(held, reserved()) -- before: trimmed back to 1 GiB of free blocks
        else
            assert.is_true(reserved() < held)
        end
        tide.empty_cache("cpu")
        assert.is_true(reserved() <= base)
        assert.has_error(function() tide.empty_cache("nodevice") end)
    end)
end)
