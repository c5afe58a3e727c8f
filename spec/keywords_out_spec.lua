-- keywords_out_spec.lua: PyTorch's out= on tide.X functions (lua/tide/tensor_keywords/out.lua):
-- the result written into out (resized, cast where PyTorch casts), lists of outs for several
-- results, the creation functions making out's dtype, and the errors (a method's out, a
-- function without out=, dtype, device, autograd), each leaving out and the random state as
-- they were.
local tide = require("tide")
local out = require("tide.tensor_keywords.out")

local function catch(f)
    local ok, err = pcall(f)
    assert.is_false(ok, "expected an error")
    return tostring(err)
end

local function has(msg, f)
    assert.matches(msg, catch(f), 1, true)
end

-- x = torch.tensor([[1., 2.], [3., 4.]])
local function X()
    return tide.tensor({ { 1, 2 }, { 3, 4 } }):float()
end

describe("out= on tide.X functions", function()
    local x = X()

    it("writes the result into out and returns out itself", function()
        local z = tide.zeros(2, 2)
        local r = tide.add(x, x, { out = z })
        assert.are.equal(z, r)
        assert.are.same({ { 2, 4 }, { 6, 8 } }, z:tolist())
        -- beside the op's own names: torch.add(x, x, alpha=2, out=z)
        tide.add(x, x, { alpha = 2, out = z })
        assert.are.same({ { 3, 6 }, { 9, 12 } }, z:tolist())
        assert.are.same({ { 1, 4 }, { 9, 16 } }, tide.mul(x, x, { out = tide.empty(2, 2) }):tolist())
        -- an out that is an input: torch.sin(x, out=x)
        local y = X()
        tide.neg(y, { out = y })
        assert.are.same({ { -1, -2 }, { -3, -4 } }, y:tolist())
        -- a non-contiguous out keeps its place: torch.mm(x, x, out=torch.empty(2, 2).t())
        local base = tide.zeros(2, 2)
        tide.mm(x, x, { out = base:t() })
        assert.are.same({ { 7, 15 }, { 10, 22 } }, base:tolist())
    end)

    it("resizes an out of another shape, as PyTorch does", function()
        local z = tide.empty(7)
        tide.sum(x, 1, { out = z })
        assert.are.same({ 1, 2 }, { z:dim(), z:size(1) })
        assert.are.same({ 4, 6 }, z:tolist())
        local c = tide.empty(0)
        tide.cat({ x, x }, { dim = 2, out = c })
        assert.are.same({ { 1, 2, 1, 2 }, { 3, 4, 3, 4 } }, c:tolist())
        local w = tide.empty(1)
        tide.where(x:gt(2), x, tide.zeros(2, 2), { out = w })
        assert.are.same({ { 0, 0 }, { 3, 4 } }, w:tolist())
        assert.are.same({ { 7, 10 }, { 15, 22 } },
            tide.tensordot(x, x, 1, { out = tide.empty(0) }):tolist())
    end)

    it("casts to out's dtype where PyTorch does, and refuses where it does not", function()
        -- torch.add(long, long, out=float): the ints become floats
        local f = tide.zeros(2, 2)
        tide.add(x:long(), x:long(), { out = f })
        assert.are.equal("float32", f.dtype)
        assert.are.same({ { 2, 4 }, { 6, 8 } }, f:tolist())
        -- torch.sin(x, out=long): "result type Float can't be cast to the desired output type Long"
        local l = tide.full({ 2, 2 }, 9):long()
        has("tide: sin: the result's dtype float32 can't be cast to out's int64 (as PyTorch's); " ..
            "pass an out of dtype float32", function() return tide.sin(x, { out = l }) end)
        assert.are.same({ { 9, 9 }, { 9, 9 } }, l:tolist())
        -- a bool result into int64 is a cast PyTorch makes; a float one into bool is not
        local b = tide.empty(0):long()
        tide.gt(x, 2, { out = b })
        assert.are.same({ { 0, 0 }, { 1, 1 } }, b:tolist())
        has("tide: mul: the result's dtype float32 can't be cast to out's bool",
            function() return tide.mul(x, x, { out = tide.empty(0):bool() }) end)
    end)

    it("takes a list of outs for a function of several results", function()
        -- torch.max(x, 1, out=(values, indices)): values [2, 4], indices [1, 1] (0-based)
        local v, i = tide.empty(0), tide.empty(0):long()
        local rv, ri = tide.max(x, 2, { out = { v, i } })
        assert.are.equal(v, rv)
        assert.are.equal(i, ri)
        assert.are.same({ 2, 4 }, v:tolist())
        assert.are.same({ 2, 2 }, i:tolist())
        local sv, si = tide.empty(0), tide.empty(0):long()
        tide.sort(x, { dim = 1, descending = true, out = { sv, si } })
        assert.are.same({ { 3, 4 }, { 1, 2 } }, sv:tolist())
        assert.are.same({ { 2, 2 }, { 1, 1 } }, si:tolist())
        local keep = tide.full({ 2 }, 5):float()
        has("tide: max: this call has 2 results; out must be a list of 2 tensors, one for each, " ..
            "got a tensor", function() return tide.max(x, 2, { out = keep }) end)
        has("tide: max: this call has one result; out must be a tensor, got a list of 2",
            function() return tide.max(x, { out = { keep, keep } }) end)
        -- the indices' out must take int64: nothing is written when one out is wrong
        has("tide: max: the result's dtype int64 can't be cast to out[2]'s bool", function()
            return tide.max(x, 2, { out = { keep, tide.empty(0):bool() } })
        end)
        assert.are.same({ 5, 5 }, keep:tolist())
        has("tide: max: out must be a tensor, or a list of tensors for a function of several " ..
            "results; out[2] is 3", function() return tide.max(x, 2, { out = { keep, 3 } }) end)
    end)

    it("makes a creation function's result in out's dtype, on out's device", function()
        local l = tide.empty(1):long()
        tide.zeros(3, { out = l })
        assert.are.equal("int64", l.dtype)
        assert.are.same({ 0, 0, 0 }, l:tolist())
        local d = tide.empty(0):double()
        assert.are.same({ 0, 1, 2, 3, 4 }, tide.arange(5, { out = d }):tolist())
        assert.are.equal("float64", d.dtype)
        assert.are.same({ 0, 1, 2 }, tide.arange({ ["end"] = 3, out = d }):tolist())
        assert.are.same({ { 1, 0 }, { 0, 1 } }, tide.eye(2, { out = tide.empty(0):int() }):tolist())
        local on1 = tide.empty(0):to("cpu:1")
        tide.ones(2, { out = on1 })
        assert.are.equal("cpu:1", tostring(on1.device))
        assert.are.same({ 1, 1 }, on1:cpu():tolist())
        has("tide: zeros: dtype int32 does not match out's dtype (float32); leave dtype out, it " ..
            "is out's", function() return tide.zeros(2, { dtype = "int32", out = tide.empty(0) }) end)
        -- the plain call with options is untouched
        assert.are.equal("int32", tide.zeros(2, { dtype = "int32" }).dtype)
    end)

    it("needs out on the inputs' device, checked before anything runs", function()
        local z = tide.full({ 2 }, 7):float():to("cpu:1")
        has("tide: add: out is on cpu:1, the inputs on cpu; out= moves no values: pass an out " ..
            "on cpu (t:to(\"cpu\"))", function() return tide.add(x, x, { out = z }) end)
        assert.are.same({ 7, 7 }, z:cpu():tolist())
        -- a failed call draws no random number
        local p = tide.full({ 4 }, 0.5)
        tide.manual_seed(7)
        local want = tide.bernoulli(p):tolist()
        tide.manual_seed(7)
        has("tide: bernoulli: out is on cpu:1", function()
            return tide.bernoulli(p, { out = tide.empty(0):to("cpu:1") })
        end)
        local got = tide.empty(0)
        tide.bernoulli(p, { out = got })
        assert.are.same(want, got:tolist())
    end)

    it("takes no part in autograd, as PyTorch's", function()
        local w = X():requires_grad_()
        local z = tide.full({ 2, 2 }, 7):float()
        has("tide: mul: out= takes no part in autograd, and an input requires grad; call it " ..
            "without out= (its result records the gradient), or under tide.no_grad()",
            function() return tide.mul(w, x, { out = z }) end)
        assert.are.same({ { 7, 7 }, { 7, 7 } }, z:tolist())
        tide.no_grad(function() tide.mul(w, x, { out = z }) end)
        assert.are.same({ { 1, 4 }, { 9, 16 } }, z:tolist())
        assert.is_false(z.requires_grad)
        has("tide: add: out requires grad, and out= takes no part in autograd", function()
            return tide.add(x, x, { out = tide.zeros(2, 2):requires_grad_() })
        end)
    end)

    it("is the functions' only: a method, or a function PyTorch gives no out=, refuses it", function()
        has('tide: add: unknown option "out"; options are other, alpha',
            function() return x:add(x, { out = tide.empty(0) }) end)
        has('tide: reshape: unknown option "out"; options are shape',
            function() return tide.reshape(x, { 4 }, { out = tide.empty(0) }) end)
        has("tide: exp: out must be a tensor, or a list of tensors for a function of several " ..
            "results, got 3", function() return tide.exp(x, { out = 3 }) end)
        -- the error names the caller's line
        local line = debug.getinfo(1, "l").currentline + 1
        local err = catch(function() local r = tide.exp(x, { out = "z" }) return r end)
        assert.matches(("keywords_out_spec.lua:%d: tide: exp:"):format(line), err, 1, true)
    end)

    it("reaches every function listed, eager or lazy-loaded, and no method", function()
        local n = 0
        local t = tide.rand(3):add(0.5)
        for name in pairs(out.names) do
            assert.are.equal("function", type(tide[name]), name)
            n = n + 1
            -- whatever the arguments, out is never an unknown option of a listed function;
            -- f held across the calls: a lazy op's stub, called again once its module has
            -- loaded, puts the function back as it was first (it had put the method there)
            local f = tide[name]
            for _, args in ipairs({ { t }, { t, t }, { t, 1 }, { 3 }, { { t, t } } }) do
                local a = { args[1], args[2] }
                a[#args + 1] = { out = tide.empty(0) }
                local ok, e = pcall(f, a[1], a[2], a[3])
                assert.is_nil(not ok and tostring(e):find('unknown option "out"', 1, true) or nil,
                    name .. ": " .. tostring(e))
            end
            assert.are_not.equal(rawget(tide.Tensor, name), tide[name], name)
        end
        assert.is_true(n > 200)
        -- a lazy module's method (copysign's) keeps refusing it
        has('tide: copysign: unknown option "out"', function()
            return t:copysign(t, { out = tide.empty(0) })
        end)
    end)
end)
