-- tensor_keywords_spec.lua — the mechanism behind PyTorch's keyword arguments on Tensor methods
-- and tide.X functions (lua/tide/tensor_keywords/init.lua, the trampoline lua/keywords.c): names
-- put in their places, lists and objects passed through, the errors at the caller's line, and
-- every signature naming an op that exists. The ops' own keyword forms: keywords_*_spec.lua.
local tide = require("tide")
local core = require("tide.core")
local keywords = require("tide.tensor_keywords")

local function catch(f)
    local ok, err = pcall(f)
    assert.is_false(ok, "expected an error")
    return tostring(err)
end

local function X()
    return tide.tensor({ { 1, 5, 3 }, { 4, 2, 6 } }, { dtype = "float64" })
end

describe("PyTorch's keyword arguments (tide.tensor_keywords)", function()
    it("put each name in its place, on the method and the function alike", function()
        local x = X()
        assert.are.same({ { 9 }, { 12 } }, x:sum({ dim = 2, keepdim = true }):totable())
        assert.are.same({ { 9 }, { 12 } }, x:sum(2, { keepdim = true }):totable())
        assert.are.same({ { 9 }, { 12 } }, tide.sum(x, { keepdim = true, dim = 2 }):totable())
        assert.are.same({ 5, 7, 9 }, tide.sum(x, { dim = 1 }):totable())
        -- an empty table is a value, not keywords: sum's empty list of dims (every dim), flip's
        assert.are.equal(21, x:sum({}):item())
        assert.are.same(x:totable(), x:flip({}):totable())
        -- both results of max over a dim come back through the trampoline
        local v, i = x:max({ dim = 2 })
        assert.are.same({ 5, 6 }, v:totable())
        assert.are.same({ 2, 3 }, i:totable())
        assert.are.same({ { 1, 5, 3, 1, 5, 3 }, { 4, 2, 6, 4, 2, 6 } },
            tide.cat({ x, x }, { dim = 2 }):totable())
    end)

    it("leave a call with no keyword table as it was: nils, lists, and tide's own errors", function()
        local x = X()
        assert.are.equal(21, x:sum(nil, nil):item())
        assert.are.equal(6, x:amax({ 1, 2 }):item()) -- a list of dims is a value
        assert.matches("tide: sum: keepdim must be a boolean, got string",
            catch(function() return x:sum(1, "yes") end))
        assert.matches("tide: sum: expected at most 3 arguments, got 4",
            catch(function() return x:sum(1, true, 4) end))
    end)

    it("name an unknown key and a parameter given twice, at the caller's line", function()
        local x = X()
        -- (not a tail call: LuaJIT would then report the pcall's line)
        local line = debug.getinfo(1, "l").currentline + 1
        local err = catch(function() local r = x:sum({ dimm = 1 }) return r end)
        assert.are.equal(("spec/tensor_keywords_spec.lua:%d: tide: sum: unknown option \"dimm\" " ..
            "(did you mean \"dim\"?)"):format(line), err)
        -- out= is a function's (keywords_out_spec.lua), not a method's, as in PyTorch
        assert.matches('tide: add: unknown option "out"; options are other, alpha',
            catch(function() return x:add(x, { out = x }) end))
        assert.matches("tide: sum: dim given twice, as argument #2 and by name; pass it once",
            catch(function() return x:sum(1, { dim = 1 }) end))
        assert.matches("tide: sum: keepdim must be a boolean, got number",
            catch(function() return x:sum({ dim = 1, keepdim = 3 }) end))
    end)

    it("take every parameter in one table where a signature names the first", function()
        assert.are.same({ 0, 2, 4 }, tide.arange({ start = 0, ["end"] = 6, step = 2 }):totable())
        assert.are.same({ 0, 0.5, 1 }, tide.linspace({ start = 0, ["end"] = 1, steps = 3,
            dtype = "float64" }):totable())
        assert.are.same({ { 1, 0, 0 }, { 0, 1, 0 } }, tide.eye({ n = 2, m = 3 }):totable())
        assert.are.same({ 7, 7 }, tide.full({ size = { 2 }, fill_value = 7 }):totable())
        local g1, g2 = tide.Generator():manual_seed(3), tide.Generator():manual_seed(3)
        assert.are.same(tide.randint(0, 10, { 5 }, { generator = g1 }):totable(),
            tide.randint({ high = 10, size = { 5 }, generator = g2 }):totable()) -- low 0
        local n = tide.normal({ mean = tide.zeros({ 3 }) }) -- std 1, PyTorch's default
        assert.are.same({ 3 }, n:size())
        assert.matches('tide: arange: unknown option "stop" %(did you mean "step"%?%)',
            catch(function() return tide.arange({ start = 0, stop = 3 }) end))
    end)

    it("call a Lua function behind the trampoline the same way, and pass objects through", function()
        local seen
        local f = core._keywords(keywords.call, function(...)
            seen = { n = select("#", ...), ... }
            return "a", "b"
        end, "sum")
        local r1, r2 = f("x", 2)
        assert.are.same({ "a", "b" }, { r1, r2 })
        assert.are.same({ n = 2, "x", 2 }, seen)
        f("x", { dim = 3, keepdim = true })
        assert.are.same({ "x", 3, true }, { seen[1], seen[2], seen[3] })
        -- a list, and an object of a class (its metatable names it), are values
        f("x", { 1, 2 })
        assert.are.same({ 1, 2 }, seen[2])
        local obj = setmetatable({}, { __name = "Thing" })
        f("x", obj)
        assert.are.equal(obj, seen[2])
    end)

    it("send a call with more arguments than nmax to the adapter, as PyTorch's positional form", function()
        -- copy_'s signature: nmax = 2, and an adapter that checks non_blocking and drops it
        local seen
        local f = core._keywords(keywords.call, function(...)
            seen = { n = select("#", ...), ... }
            return "done"
        end, "copy_", nil, 2)
        assert.are.equal("done", f("x", "s"))
        assert.are.same({ n = 2, "x", "s" }, seen)
        seen = nil
        assert.are.equal("done", f("x", "s", true)) -- x.copy_(s, True)
        assert.are.same({ n = 2, "x", "s" }, seen)
        assert.matches("tide: copy_: non_blocking must be true or false, got 7",
            catch(function() return f("x", "s", 7) end), 1, true)
        -- more than PyTorch's parameters: the function's own answer
        f("x", "s", true, "extra")
        assert.are.same({ n = 4, "x", "s", true, "extra" }, seen)
    end)

    -- every signature, as a method and as a tide.X function: the names are checked before the
    -- op runs, so any first argument will do
    it("raises for an unknown name and a parameter given twice, on every op", function()
        local names = {}
        for name in pairs(keywords.signatures) do
            names[#names + 1] = name
        end
        table.sort(names)
        for _, name in ipairs(names) do
            local sig = keywords.signatures[name]
            local calls = {}
            if sig.methods ~= false then
                calls[#calls + 1] = function(...) local t = X() return t[name](t, ...) end
            end
            if sig.functions ~= false then
                calls[#calls + 1] = function(...) return tide[name](X(), ...) end
            end
            for _, call in ipairs(calls) do
                assert.matches(('tide: %s: unknown option "bogus_key"'):format(name),
                    catch(function() return call({ bogus_key = 1 }) end), 1, true)
                local p = sig.params[1]
                if p then
                    assert.matches(("tide: %s: %s given twice, as argument #2 and by name; " ..
                        "pass it once"):format(name, p),
                        catch(function() return call(1, { [p] = 1 }) end), 1, true)
                end
            end
        end
    end)

    it("has a signature only for ops that exist, with its parameters named once", function()
        for name, sig in pairs(keywords.signatures) do
            if sig.methods ~= false then
                assert.is_not_nil(core.Tensor[name], name .. " is not a Tensor method")
            end
            if sig.functions ~= false then
                assert.is_not_nil(tide[name], name .. " is not a tide function")
            end
            local seen = {}
            for _, k in ipairs(sig.known) do
                assert.is_nil(seen[k], name .. ": " .. k .. " named twice")
                seen[k] = true
            end
        end
    end)
end)
