-- reduce_shape_spec.lua — the reductions, shape and creation ops of issue 13 (lua/tide/
-- reductions.lua, shapes.lua, creation_like.lua) against PyTorch 1.13's values
-- (spec/fixtures/make_reduce_shape.py), their gradients against finite differences, and their
-- errors. Runs on the device under test (spec/support/device.lua).
local tide = require("tide")
local gradcheck = require("spec.support.gradcheck")
local D = require("spec.support.device")
local fx = require("spec.fixtures.reduce_shape_torch")

-- src compiled with env as its globals (setfenv on 5.1, whose load takes no string)
local function load_in(src, name, env)
    if setfenv then
        local f, err = loadstring(src, name)
        return f and setfenv(f, env), err
    end
    return load(src, name, "t", env)
end

if D.kind == "cuda" and not tide.cuda.is_available() then
    describe("reductions and shape ops on " .. D.name, function()
        it("needs a CUDA device", function()
            pending("no CUDA device")
        end)
    end)
    return
end

local function flat(t)
    return t:cpu():reshape(-1):totable()
end

local function make(spec)
    local v = spec.values
    if #spec.shape == 0 then
        v = v[1]
    end
    local t = tide.tensor(v, { dtype = spec.dtype, device = D.name })
    return #spec.shape == 0 and t or t:reshape(spec.shape)
end

local function same_tensor(call, expected, got)
    assert(tide.is_tensor(got), call .. ": expected a tensor, got " .. type(got))
    assert.are.same(expected.shape, got:size(), call .. ": shape")
    assert.are.equal(expected.dtype, got.dtype, call .. ": dtype")
    assert.are.equal(D.name, tostring(got.device), call .. ": device")
    local g = flat(got)
    for i, e in ipairs(expected.values) do
        local a = g[i]
        local ok
        if type(e) == "boolean" or e == math.huge or e == -math.huge then
            ok = a == e
        elseif e ~= e then
            ok = a ~= a
        else
            ok = math.abs(a - e) <= 1e-12 * (1 + math.abs(e))
        end
        assert(ok, ("%s: element %d: expected %s, got %s"):format(call, i, tostring(e), tostring(a)))
    end
end

local function catch(f)
    local ok, err = pcall(f)
    assert.is_false(ok, "expected an error")
    return tostring(err)
end

local function F64(shape)
    return tide.randn(shape, { dtype = "float64", device = D.name }):requires_grad_(true)
end

describe("reductions and shape ops against PyTorch on " .. D.name, function()
    it("give PyTorch's values, shapes and dtypes (" .. #fx.cases .. " calls)", function()
        local env = { math = math, tide = tide }
        for k, spec in pairs(fx.inputs) do
            env[k] = make(spec)
        end
        for _, c in ipairs(fx.cases) do
            local got = assert(load_in("return " .. c.call, c.call, env))()
            if c.list then
                assert.are.equal("table", type(got), c.call)
                assert.are.equal(#c.list, #got, c.call .. ": number of pieces")
                for i = 1, #c.list do
                    same_tensor(c.call .. " [" .. i .. "]", c.list[i], got[i])
                end
            else
                same_tensor(c.call, c.result, got)
            end
        end
    end)

    it("are tide.X functions too", function()
        local x = make(fx.inputs.x)
        assert.is_true(tide.cumsum(x, 2):equal(x:cumsum(2)))
        assert.is_true(tide.std(x, 1):allclose(x:std(1)))
        assert.are.equal(3, #tide.unbind(x))
        assert.are.same({ 12 }, tide.flatten(x):size())
    end)
end)

describe("gradients of the reductions and shape ops on " .. D.name, function()
    it("match finite differences", function()
        tide.manual_seed(3)
        local checks = {
            { function(t) return t:cumsum(2) end, { 3, 4 } },
            { function(t) return t:cumsum(1) end, { 5 } },
            { function(t) return t:cumprod(2) end, { 3, 5 } },
            { function(t) return t:var() end, { 3, 4 } },
            { function(t) return t:std(2, true, true) end, { 3, 4 } },
            { function(t) return t:var(1, false) end, { 3, 4 } },
            { function(t) return t:logsumexp(2) end, { 3, 4 } },
            { function(t) return t:logsumexp({ 1, 3 }) end, { 2, 3, 2 } },
            { function(t) return t:std({ 1, 2 }, { keepdim = true }) end, { 2, 3, 2 } },
            { function(t) return t:norm() end, { 3, 4 } },
            { function(t) return t:norm(2, 1) end, { 3, 4 } },
            { function(t) return t:norm(2, 2, true) end, { 3, 4 } },
            { function(t) return t:norm(3, 2) end, { 3, 4 } },
            { function(t) return t:norm(1, 1, true) end, { 3, 4 } },
            { function(t) return t:norm(math.huge, 2) end, { 3, 4 } },
            { function(t) return t:chunk(2, 2)[2] * 2 end, { 3, 4 } },
            { function(t) return tide.cat(t:split({ 1, 3 }, 2), 2) * t end, { 3, 4 } },
            { function(t) return t:unbind(1)[3] end, { 3, 4 } },
            { function(t) return t:tile(2, 3) end, { 2, 3 } },
            { function(t) return t:flatten(2) end, { 2, 3, 2 } },
            { function(t) return t:unflatten(2, { 2, -1 }) end, { 3, 4 } },
            { function(t) return tide.einsum("ij,kj->ik", t, t) end, { 3, 4 } },
            { function(t) return tide.einsum("bij,bjk->bik", t, t:transpose(2, 3)) end, { 2, 3, 2 } },
            { function(t) return tide.einsum("ii->i", t) end, { 3, 3 } },
            { function(t) return tide.einsum("ij,jk,kl->il", t, t:t(), t) end, { 3, 4 } },
            { function(t) return tide.einsum("...ij,...jk->...ik", t, t:transpose(2, 3)) end,
                { 2, 3, 2 } },
            { function(t) return tide.einsum("...ij,...jk", t, t:narrow(1, 1, 1):transpose(2, 3))
            end, { 2, 3, 2 } },
            { function(t) return tide.einsum("b...,b...", t, t:narrow(2, 1, 1)) end, { 2, 3, 2 } },
        }
        for i, c in ipairs(checks) do
            assert.is_true(gradcheck(c[1], { F64(c[2]) }), "check " .. i)
        end
    end)

    it("of norm at a zero vector is 0, as PyTorch's (not nan)", function()
        local z = tide.zeros({ 2, 3 }, { dtype = "float64", device = D.name }):requires_grad_(true)
        z:norm():backward()
        assert.are.same({ 0, 0, 0, 0, 0, 0 }, flat(z.grad))
        local w = tide.tensor({ { 0, 0 }, { 3, 4 } }, { dtype = "float64", device = D.name })
            :requires_grad_(true)
        w:norm(2, 2):sum():backward()
        assert.are.same({ 0, 0, 0.6, 0.8 }, flat(w.grad))
    end)

    it("of cumprod at zeros, as PyTorch (exact products of the other factors)", function()
        local x = tide.tensor({ 2, 0, 3, 0.5 }, { dtype = "float64", device = D.name })
            :requires_grad_(true)
        x:cumprod(1):sum():backward()
        -- d/dx_k sum_j prod_{i<=j} x_i, from torch.autograd at [2, 0, 3, 0.5]
        assert.are.same({ 1, 11, 0, 0 }, flat(x.grad))
    end)
end)

describe("a 0-d tensor reduced over dim 1 or -1 (PyTorch's dim 0 / -1) on " .. D.name, function()
    it("is reduced over its one element: a 0-d result, gradients as PyTorch's", function()
        local x = tide.tensor(3, { dtype = "float64", device = D.name }):requires_grad_(true)
        for _, op in ipairs({ "sum", "mean", "prod", "amax", "amin", "nansum", "logsumexp" }) do
            local r = x[op](x, -1)
            assert.are.same({}, r.shape, op)
            assert.are.equal(3, r:item(), op)
            assert.are.same({}, x[op](x, 1, true).shape, op .. " keepdim")
        end
        local v, i = x:max(1)
        assert.are.same({ 3, 1 }, { v:item(), i:item() })
        assert.are.equal(1, x:argmax(-1):item())
        assert.are.equal(1, tide.softmax(x, 1):item())
        assert.are.equal(0, x:log_softmax():item())
        assert.is_true(tide.tensor(true, { device = D.name }):all(1):item())
        assert.are.equal(3, x:sum({ dim = 1 }):item())
        -- torch.autograd: d/dx (softmax(x, 0) * 2 + x.sum(0) * 3 + x.max(0)[0] + x.amax(-1)) = 5
        ;(x:softmax(1) * 2 + x:sum(1) * 3 + x:max(1) + x:amax(-1)):backward()
        assert.are.equal(5, x.grad:item())
        -- another dim raises, as PyTorch's (Dimension out of range)
        assert.has_error(function() x:sum(2) end,
            "tide: sum: dim 2 is out of range for a tensor with no dims")
        assert.has_error(function() x:amax(2) end,
            "tide: amax: dim 2 is out of range for a tensor with no dims; use 1 or -1")
    end)
end)

describe("creation ops on " .. D.name, function()
    it("*_like take the shape, dtype and device, or the ones given", function()
        local x = tide.zeros({ 2, 3 }, { dtype = "float64", device = D.name })
        local z = tide.ones_like(x)
        assert.are.same({ 2, 3 }, z:size())
        assert.are.equal("float64", z.dtype)
        assert.are.equal(D.name, tostring(z.device))
        assert.are.same({ 1, 1, 1, 1, 1, 1 }, flat(z))
        assert.are.same({ 0, 0, 0, 0, 0, 0 }, flat(tide.zeros_like(x:add(1))))
        assert.are.same({ 7, 7, 7, 7, 7, 7 }, flat(tide.full_like(x, 7, { dtype = "int32" })))
        assert.are.equal("int32", tide.full_like(x, 7, { dtype = "int32" }).dtype)
        assert.are.same({ 2, 3 }, tide.empty_like(x):size())
        local r = tide.rand_like(x)
        assert.is_true(r:ge(0):all():item() and r:lt(1):all():item())
        assert.are.equal("float64", tide.randn_like(x, { requires_grad = true }).dtype)
        assert.is_true(tide.randn_like(x, { requires_grad = true }).requires_grad)
        assert.matches("tide: zeros_like: unknown option \"dtpye\"",
            catch(function() tide.zeros_like(x, { dtpye = "int32" }) end), 1, true)
        assert.matches("^[^\n]*reduce_shape_spec.lua:%d+: tide: rand_like: random values need a " ..
            "floating%-point dtype, got int64; pass {dtype = \"float32\"}", catch(function()
                tide.rand_like(x, { dtype = "int64" })
            end))
    end)

    it("linspace gives PyTorch's points, ends exact", function()
        local l = tide.linspace(0, 1, 5, { device = D.name })
        assert.are.equal("float32", l.dtype)
        assert.are.same({ 0, 0.25, 0.5, 0.75, 1 }, flat(l))
        local m = tide.linspace(-1, 2, 7, { dtype = "float64", device = D.name })
        -- torch.linspace(-1, 2, 7, dtype=torch.float64)
        assert.are.same({ -1, -0.5, 0, 0.5, 1, 1.5, 2 }, flat(m))
        local t = flat(tide.linspace(0.1, 0.7, 4, { dtype = "float64", device = D.name }))
        assert.are.same({ 0.1, 0.3, 0.5, 0.7 }, t) -- torch: [0.1, 0.3, 0.5, 0.7] (repr)
        -- torch.linspace(-1.3, 2.9, 9) in float32, bit for bit
        assert.are.same({ -1.2999999523162842, -0.7749999761581421, -0.25, 0.2749999761581421,
            0.8000001907348633, 1.3250001668930054, 1.8500001430511475, 2.375, 2.9000000953674316 },
            flat(tide.linspace(-1.3, 2.9, 9, { device = D.name })))
        assert.are.same({ 3 }, flat(tide.linspace(3, 9, 1, { device = D.name })))
        assert.are.same({ 0 }, tide.linspace(3, 9, 0):size())
        assert.matches("tide: linspace: steps must be >= 0, got -1",
            catch(function() tide.linspace(0, 1, -1) end), 1, true)
    end)

    it("randint draws in [low, high), int64; bernoulli draws 0/1 with probability p", function()
        tide.manual_seed(5)
        local r = tide.randint(-2, 3, { 4000 }, { device = D.name })
        assert.are.equal("int64", r.dtype)
        assert.are.equal(-2, r:min():item())
        assert.are.equal(2, r:max():item())
        local h = tide.randint(4, { 10 }, { device = D.name })
        assert.is_true(h:ge(0):all():item() and h:lt(4):all():item())
        assert.matches("tide: randint: high (3) must be greater than low (3); high is excluded",
            catch(function() tide.randint(3, 3, { 2 }) end), 1, true)
        local p = tide.full({ 20000 }, 0.25, { dtype = "float64", device = D.name })
        local b = tide.bernoulli(p)
        assert.are.equal("float64", b.dtype)
        assert.is_true(b:eq(0):logical_or(b:eq(1)):all():item())
        assert.is_true(math.abs(b:mean():item() - 0.25) < 0.02)
        local z = tide.tensor({ 0, 1, 0, 1 }, { dtype = "float32", device = D.name }):bernoulli()
        assert.are.same({ 0, 1, 0, 1 }, flat(z))
        assert.is_true(math.abs(p:bernoulli(0.75):mean():item() - 0.75) < 0.02)
    end)
end)

describe("errors of the reductions and shape ops on " .. D.name, function()
    local x
    before_each(function()
        x = tide.zeros({ 3, 4 }, { dtype = "float64", device = D.name })
    end)

    it("name the op and the values at fault, at the user's line", function()
        local line = "^[^\n]*reduce_shape_spec.lua:%d+: "
        assert.matches(line .. "tide: cumsum: dim 3 is out of range for a tensor with 2 dims; " ..
            "use 1..2 or %-2..%-1 %(dims are 1%-based%)", catch(function() x:cumsum(3) end))
        assert.matches(line .. "tide: cumprod: dim is required, as in x:cumprod%(1%)",
            catch(function() x:cumprod() end))
        assert.matches(line .. "tide: var: unknown option \"unbaised\"",
            catch(function() x:var({ unbaised = false }) end))
        assert.matches(line .. "tide: std: needs a floating%-point tensor, got int64",
            catch(function() x:long():std() end))
        assert.matches(line .. "tide: norm: p must be a number, \"fro\" or \"nuc\", got \"nuk\"",
            catch(function() x:norm("nuk") end))
        assert.matches(line .. "tide: norm: p = \"nuc\" needs a matrix or two dims, got 1 dims",
            catch(function() x:norm("nuc", 1) end))
        assert.matches(line .. "tide: split: the sizes sum to 3 but dim 2 has size 4; give sizes " ..
            "that sum to 4", catch(function() x:split({ 1, 2 }, 2) end))
        assert.matches(line .. "tide: chunk: chunks must be > 0, got 0",
            catch(function() x:chunk(0) end))
        assert.matches(line .. "tide: unflatten: sizes {3, 2} do not multiply to dim 2's size 4",
            catch(function() x:unflatten(2, { 3, 2 }) end))
        assert.matches(line .. "tide: flatten: start dim 2 comes after end dim 1",
            catch(function() x:flatten(2, 1) end))
        assert.matches(line .. "tide: tile: reps 1 is %-1; reps must be >= 0",
            catch(function() x:tile(-1, 1) end))
        assert.matches(line .. "tide: allclose: the dtypes differ %(float64 and float32%)",
            catch(function() x:allclose(x:float()) end))
        assert.matches(line .. "tide: logsumexp: keepdim must be a boolean, got number",
            catch(function() tide.logsumexp(x, 1, 1) end))
        assert.matches(line .. "tide: unbind: expected a tensor at argument #1, got nil",
            catch(function() tide.unbind(nil) end))
        assert.matches(line .. "tide: einsum: equation \"ij,jk\" has 2 operands but 1 tensors were " ..
            "given", catch(function() tide.einsum("ij,jk", x) end))
        assert.matches(line .. "tide: einsum: subscript j has sizes 4 and 3",
            catch(function() tide.einsum("ij,jk->ik", x, x) end))
        assert.matches(line .. "tide: einsum: operand 1 has 3 subscripts for a tensor with 2 dims",
            catch(function() tide.einsum("ijk->i", x) end))
        assert.matches(line .. "tide: einsum: the ellipsis dims of operand 2 %({5, 4, 2}%) do " ..
            "not broadcast with the other operands' %(size 5 where another has 2%)",
            catch(function()
                tide.einsum("...ij,...jk", x:reshape(2, 3, 2), tide.zeros(5, 4, 2))
            end))
        assert.matches(line .. "tide: einsum: operand 1 has 3 subscripts and an ellipsis for a " ..
            "tensor with 2 dims", catch(function() tide.einsum("ij...k", x) end))
        assert.matches(line .. "tide: einsum: operand 1 has more than one ellipsis",
            catch(function() tide.einsum("...i...", x) end))
        assert.matches(line .. "tide: einsum: equation \"i..j\" has a '.' outside an ellipsis",
            catch(function() tide.einsum("i..j", x) end))
        assert.matches(line .. "tide: einsum: equation \"i%*j\" has characters other than " ..
            "letters, ',', '...' and '%->'", catch(function() tide.einsum("i*j", x) end))
        assert.matches(line .. "tide: einsum: output subscript q appears in no operand",
            catch(function() tide.einsum("ij->q", x) end))
    end)

    it("allclose and equal answer with Lua booleans", function()
        local a = tide.tensor({ 1, 2, 0 / 0 }, { dtype = "float64", device = D.name })
        local b = a + 1e-9
        assert.is_false(a:allclose(b))
        assert.is_true(a:allclose(b, { equal_nan = true }))
        assert.is_false(a:allclose(a + 1e-3, 1e-5, 1e-8, true))
        assert.is_true(a:allclose(a + 1e-3, 1e-2, 0, true))
        local c = tide.tensor({ 1, 2, 3 }, { device = D.name })
        assert.is_true(c:equal(c:clone()))
        assert.is_false(c:equal(c:view(3, 1)))
        assert.is_false(c:equal(tide.tensor({ 1, 2, 4 }, { device = D.name })))
    end)
end)
