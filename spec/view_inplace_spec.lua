-- view_inplace_spec.lua — in-place ops on views of a tensor in the graph (engine.lua's
-- CopySlices and view replay) against PyTorch 1.13: random programs of views (narrow, select,
-- t, transpose, diagonal, chained), in-place ops on them (scaled, shifted, squashed, filled,
-- zeroed, copied into, multiplied by a tensor that requires grad), and the views used before and
-- after each change; the gradients of every input and the base's values equal PyTorch's, and
-- where PyTorch's backward refuses (a value a gradient needs was changed) tide's does too.
-- spec/fixtures/make_view_inplace.py writes the programs in both languages.
local tide = require("tide")
local D = require("spec.support.device")

local PROGRAMS = dofile("spec/fixtures/view_inplace_torch.lua")

describe("in-place ops on views, PyTorch's gradients (" .. D.name .. ")", function()
    local function T(v)
        return tide.tensor(v, { dtype = "float64", device = D.name })
    end
    for i, p in ipairs(PROGRAMS) do
        it("program " .. i, function()
            local run = assert((loadstring or load)(p.lua, "=program " .. i)) -- luacheck: ignore
            if p.modified then
                local ok, err = pcall(run, tide, T)
                assert.is_false(ok, "PyTorch's backward refused this program")
                assert.matches("was modified in place after it was used", tostring(err), 1, true)
                return
            end
            local got = run(tide, T)
            assert.are.equal(#p.expected, #got)
            for k, want in ipairs(p.expected) do
                local have = got[k]:to("cpu"):reshape(-1):totable()
                assert.are.equal(#want, #have)
                for j = 1, #want do
                    local diff = math.abs(have[j] - want[j])
                    assert(diff <= 1e-12 * (1 + math.abs(want[j])), string.format(
                        "program %d, result %d, element %d: tide %.17g, PyTorch %.17g", i, k, j,
                        have[j], want[j]))
                end
            end
        end)
    end
end)
