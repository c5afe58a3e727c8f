-- memory_spec.lua — tensor memory stays bounded by what is alive, whichever collector mode the
-- host or the script chose (lua/gc.c). Lua's collector sees only the small userdata of a
-- tensor; tide paces it by tensor bytes, and in generational mode (lua.c's default) the
-- autograd graph of each step used to reach the old generation and stay there: the loop below
-- then grew by every step's activations (24x its live set after 200 steps).
--
-- The loop runs in a process of its own (spec/support/cnn_memory.lua) so that the Lua heap is
-- the loop's, not busted's: the pace of full collections follows the Lua heap's size.

-- runs the loop under collectgarbage(mode) with the checkout's paths; returns its figures
local function run(mode, steps)
    local cmd = string.format("LUA_PATH='%s' LUA_CPATH='%s' lua5.4 spec/support/cnn_memory.lua %s %d 2>&1",
        package.path, package.cpath, mode, steps)
    local p = io.popen(cmd)
    local out = p:read("a")
    local ok = p:close()
    assert(ok, out)
    local live, most, faults = out:match("^live=(%d+) max=(%d+) faults=(%S+)")
    assert(live, out)
    return tonumber(live), tonumber(most), tonumber(faults), out
end

describe("tensor memory under either collector mode", function()
    for _, mode in ipairs({ "generational", "incremental" }) do
        it("200 CNN training steps stay below twice the live set (" .. mode .. ")", function()
            local live, most, _, out = run(mode, 200)
            assert.is_true(live > 1e6, out) -- the model, its gradients and momentum: ~2.4 MB
            assert.is_true(most < 2 * live, mode .. ": " .. out)
        end)
    end
end)
