-- close_lua54_spec.lua — `local t <close> = ...` frees a tensor at the end of its scope: 5.4
-- syntax, so a file of its own that only Lua 5.4 runs (spec/support/host_suite.sh skips
-- *_lua54_spec.lua); t:free() is the same release on every Lua (tensor_spec.lua).
local tide = require("tide")

local function catch(f)
    local ok, err = pcall(f)
    assert.is_false(ok, "expected an error")
    return tostring(err)
end

describe("tensor lifetime on Lua 5.4", function()
    it("<close> frees at the end of the scope", function()
        local outer
        do
            local t <close> = tide.ones(2)
            outer = t
            assert.are.same({ 1, 1 }, t:totable())
        end
        assert.matches("attempt to use a freed tensor", catch(function() return outer:totable() end))
    end)
end)
