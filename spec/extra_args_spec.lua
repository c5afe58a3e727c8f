-- extra_args_spec.lua — an argument a Tensor method does not take raises; it is never dropped
-- (docs/API.md "Conventions"). Before, t:cumsum(1, 2), t:clone({x = 1}) or
-- t:gather(2, idx, junk) ran as if the junk were not there, so a PyTorch keyword passed as an
-- options table that tide does not support gave a silently different result. Walks every public
-- Tensor method with the working arguments of spec/support/method_recipes.lua and adds one
-- more: a table { bogus_option = 1 }, or a number past the last parameter. A trailing nil is an
-- omitted argument, not an error. Runs on the device under test (spec/support/device.lua).
local tide = require("tide")
local D = require("spec.support.device")

if D.kind == "cuda" and not tide.cuda.is_available() then
    describe("extra arguments on " .. D.name, function()
        it("needs a CUDA device", function()
            pending("no CUDA device")
        end)
    end)
    return
end

local R = require("spec.support.method_recipes")(D)
local unpack = table.unpack or unpack -- luacheck: ignore

-- methods the gradient recipes do not need (no call there succeeds), with working arguments
local RECIPES = setmetatable({
    heaviside = function(_, y) return { y:detach(), y:detach() } end,
    heaviside_ = function(_, y, z) return { z, y:detach() } end,
    new_full = function(x) return { x, { 2 }, 1.5 } end,
}, { __index = R.RECIPES })

-- varargs methods: sizes, dims or reps as separate integers (view(2, 3), permute(2, 1),
-- flip(1, 2), tile(2, 2), new_zeros(2, 3)). More integers are more sizes, so a number past the
-- last one is not "one argument too many": it must raise, but with the method's own message
-- (a shape that does not fit, a dim given twice). A table there still raises.
local VARARGS = {
    view = true, reshape = true, expand = true, broadcast_to = true, sum_to = true,
    permute = true, flip = true, tile = true, ["repeat"] = true, new_zeros = true, new_ones = true, new_empty = true,
    -- to(device, dtype, opts) in any order: each argument is read by its type
    to = true,
    -- sizes as integers too (spec/tensor_gaps_spec.lua)
    new = true, resize_ = true, sum_to_size = true,
}

-- the name a method's errors carry, where it is another op's (an alias or a twin's kernel)
local ERROR_NAME = {
    fix = "trunc", fix_ = "trunc", sgn = "sign", sgn_ = "sign", true_divide = "div",
    true_divide_ = "div", clip = "clamp", clip_ = "clamp", swapaxes = "transpose",
    swapdims = "transpose", nelement = "numel", broadcast_to = "expand", aminmax = "amin",
    std_mean = "std", var_mean = "var", diagonal_scatter = "diagonal",
}
for alias, name in pairs(require("tide.aliases").of) do
    ERROR_NAME[alias] = name
end

-- the public methods of core.Tensor (not the metamethods, not _-prefixed internals)
local function methods()
    local names = {}
    for _, m in ipairs((R.walk())) do
        if not m:match("^_") and type(tide.core.Tensor[m]) == "function" then
            names[#names + 1] = m
        end
    end
    return names
end

-- the argument lists to try for m, made from fresh inputs
local function candidates(m)
    -- the same inputs at every call: a list that works once works again (a random probability
    -- in [0.5, 1.5) passed bernoulli_ and geometric_ now and then: a flaky test)
    tide.manual_seed(20261206)
    local x, y, z = R.inputs()
    if RECIPES[m] then
        local a = RECIPES[m](x, y, z)
        return a ~= R.SKIP and { a } or {}
    end
    local list = R.tries(m, x, y, z)
    list[#list + 1] = { z } -- in place, into a tensor that does not require grad
    list[#list + 1] = { z, 0.5 }
    return list
end

-- pcall(f, args..., extra...) with extra = { n = k, ... } (nils kept)
local function call(f, args, extra)
    local a, n = {}, #args
    for i = 1, n do
        a[i] = args[i]
    end
    for i = 1, extra.n do
        a[n + i] = extra[i]
    end
    return pcall(f, unpack(a, 1, n + extra.n))
end

-- the index of m's first working argument list (nil: none works, or skipped on this device)
local function working(m, f)
    for i = 1, #candidates(m) do
        if call(f, candidates(m)[i], { n = 0 }) then
            return i
        end
    end
end

-- whether err is a tide error that names m, or the op it forwards to (clip_: clamp_)
local function names_method(m, err)
    local op = err:match("tide: ([%w_]+): ")
    local base = m:gsub("_$", "")
    return op ~= nil and (op == m or op == base or op == ERROR_NAME[m] or
        (ERROR_NAME[base] ~= nil and (op == ERROR_NAME[base] or op == ERROR_NAME[base] .. "_")))
end

local TOO_MANY = "expected at most %d+ arguments?, got %d+ %(argument #%d+ is a [%w]+%); remove it"

describe("a Tensor method given an argument it does not take on " .. D.name, function()
    local names = methods()
    local f = tide.core.Tensor

    it("walks every public method, each with working arguments", function()
        assert.is_true(#names > 250, "found " .. #names .. " methods")
        local missing = {}
        for _, m in ipairs(names) do
            if #candidates(m) > 0 and not working(m, f[m]) then
                missing[#missing + 1] = m
            end
        end
        assert.are.same({}, missing) -- add a recipe (spec/support/method_recipes.lua)
    end)

    it("takes trailing nils as omitted arguments", function()
        local problems = {}
        for _, m in ipairs(names) do
            local k = working(m, f[m])
            if k then
                local ok, err = call(f[m], candidates(m)[k], { n = 3, nil, nil, nil })
                if not ok then
                    problems[#problems + 1] = m .. ": " .. tostring(err)
                end
            end
        end
        assert.are.same({}, problems)
    end)

    it("raises for an extra options table, right after its arguments or after nils", function()
        local problems = {}
        for _, m in ipairs(names) do
            local k = working(m, f[m])
            if k then
                for pad = 0, 3 do
                    local extra = { n = pad + 1 }
                    extra[pad + 1] = { bogus_option = 1 }
                    local ok, err = call(f[m], candidates(m)[k], extra)
                    if ok then
                        problems[#problems + 1] = ("%s: accepted { bogus_option = 1 } after %d " ..
                            "nils"):format(m, pad)
                    elseif not names_method(m, tostring(err)) then
                        problems[#problems + 1] = m .. ": the error does not name it: " ..
                            tostring(err)
                    end
                end
            end
        end
        assert.are.same({}, problems)
    end)

    it("raises 'expected at most N arguments' for a number past the last parameter", function()
        local problems = {}
        for _, m in ipairs(names) do
            local k = working(m, f[m])
            if k then
                -- five nils: past every optional parameter of every method
                local ok, err = call(f[m], candidates(m)[k], { n = 6, nil, nil, nil, nil, nil, 7 })
                err = tostring(err)
                if ok then
                    problems[#problems + 1] = m .. ": accepted a number past its parameters"
                elseif not names_method(m, err) then
                    problems[#problems + 1] = m .. ": the error does not name it: " .. err
                elseif not VARARGS[m] and not err:find(TOO_MANY) and
                    not err:find("takes no argument, got argument #%d+ %(number%)") and
                    -- PyTorch's positional parameters (backward): tide.pytorch_args.merge's
                    not err:find("got %d+ positional arguments; it takes at most %d+") and
                    -- the same, after an options table (stft's recipe gives one)
                    not err:find("the options table must come last; got it in the place of") then
                    problems[#problems + 1] = m .. ": " .. err
                end
            end
        end
        assert.are.same({}, problems)
    end)
end)

describe("the wording on " .. D.name, function()
    local function X()
        return tide.tensor({ { 1, 2, 3 }, { 4, 5, 6 } }, { dtype = "float64", device = D.name })
    end
    local function catch(f)
        local ok, err = pcall(f)
        assert.is_false(ok, "expected an error")
        return tostring(err)
    end

    it("names the op, the count, the argument and the fix (C and Lua methods alike)", function()
        assert.matches("tide: clone: expected at most 1 argument, got 2 %(argument #2 is a " ..
            "table%); remove it: clone takes no such argument or option",
            catch(function() return X():clone({}) end))
        local idx = tide.tensor({ { 1 }, { 2 } }, { dtype = "int64", device = D.name })
        assert.matches("tide: gather: expected at most 3 arguments, got 4 %(argument #4 is a " ..
            "number%)", catch(function() return X():gather(2, idx, 1) end))
        assert.matches("tide: mm: expected at most 2 arguments, got 3 %(argument #3 is a " ..
            "table%); remove it", catch(function() return X():mm(X():t(), {}) end))
        -- the count is of the last non-nil argument; self is argument #1
        assert.matches("tide: trace: expected at most 1 argument, got 3 %(argument #3 is a " ..
            "string%)", catch(function() return X():trace(nil, "x") end))
    end)

    it("reports an options table's unknown key where the method takes options", function()
        assert.matches('tide: cumsum: unknown option "bogus_option"',
            catch(function() return X():cumsum(1, { bogus_option = 1 }) end))
        assert.matches("tide: cumsum: options must be a table",
            catch(function() return X():cumsum(1, 2) end))
        assert.matches("tide: cumsum: expected at most 3 arguments, got 4",
            catch(function() return X():cumsum(1, { dtype = "float64" }, true) end))
    end)

    it("refuses a table that is not a plain list where dims or sizes go", function()
        assert.matches('tide: amax: dim must be a list such as {1, 2}, got a table with the ' ..
            'key "bogus_option"', catch(function() return X():amax({ 1, bogus_option = 1 }) end))
        assert.matches("tide: new_zeros: the shape must be a list",
            catch(function() return X():new_zeros({ 2, dtype = "float32" }) end))
        -- the C methods' lists alike (tl_check_list), and movedim's
        for _, f in ipairs({
            function(x) return x:view({ 6, bogus_option = 1 }) end,
            function(x) return x:sum_to({ bogus_option = 1 }) end,
            function(x) return x:roll(1, { 1, bogus_option = 1 }) end,
            function(x) return x:flip({ 1, dims = 2 }) end,
            function(x) return x:permute({ 2, 1, bogus_option = 1 }) end,
            function(x) return x:movedim({ 1, bogus_option = 1 }, { 2 }) end,
        }) do
            assert.matches("tide: [%a_]+: [%a ]+ must be a list such as {1, 2}, got a table with " ..
                "the key \"%a+", catch(function() return f(X()) end))
        end
        assert.matches("tide: movedim: expected source and destination dims",
            catch(function() return X():movedim() end))
        assert.are.same({ 3 }, X():amax({ 1 }):size()) -- a list still works
        assert.are.same({ 3, 2 }, X():permute({ 2, 1 }):size())
    end)

    it("keeps the optional arguments that are real, and nil for an omitted one", function()
        local x = X()
        assert.are.same({ 2, 1 }, x:sum(2, true):size())
        assert.are.same({ 2 }, x:sum(2, nil):size())
        assert.are.equal(21, x:sum(nil, nil):item())
        assert.are.same({ 3, 2 }, x:view(3, 2):size())
        assert.are.same({ 2, 3 }, x:clamp(nil, 4):size())
        assert.are.same({ 4, 3 }, x:new_zeros(4, 3, nil):size())
        assert.are.same({ 4, 3 }, x:new_zeros({ 4, 3 }, nil, nil):size())
        assert.is_true(x:exp2(nil):equal(x:exp2()))
        assert.matches("tide: sum: keepdim must be a boolean, got table",
            catch(function() return x:sum(1, {}) end))
        assert.matches("tide: isclose: equal_nan must be a boolean, got string",
            catch(function() return x:isclose(x, nil, nil, "yes") end))
        assert.matches("tide: isclose: expected at most 3 arguments, got 4",
            catch(function() return x:isclose(x, { rtol = 0.1 }, 0.5) end))
    end)
end)
