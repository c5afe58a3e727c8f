-- ordering_spec.lua — gather, scatter(_), scatter_add(_), sort, argsort and topk against
-- PyTorch 1.13's values (spec/fixtures/ordering_torch.lua, from make_ordering.py), their
-- gradients by finite differences, and their errors. Runs on the device under test
-- (spec/support/device.lua).
local tide = require("tide")
local gradcheck = require("spec.support.gradcheck")
local D = require("spec.support.device")
local cases = require("spec.fixtures.ordering_torch")

if D.kind == "cuda" and not tide.cuda.is_available() then
    describe("ordering ops on " .. D.name, function()
        it("needs a CUDA device", function()
            pending("no CUDA device")
        end)
    end)
    return
end

local function T(v, dtype)
    return tide.tensor(v, { dtype = dtype, device = D.name })
end
local function L(v)
    return tide.tensor(v, { dtype = "int64", device = D.name })
end
local function vals(t)
    return t:cpu():totable()
end
local function same(expect, got)
    -- NaN == NaN here: compare through tostring of each leaf
    local function norm(v)
        if type(v) == "table" then
            local r = {}
            for i, x in ipairs(v) do
                r[i] = norm(x)
            end
            return r
        end
        return v ~= v and "nan" or v
    end
    assert.are.same(norm(expect), norm(got))
end
local function catch(f)
    local ok, err = pcall(f)
    assert.is_false(ok, "expected an error")
    return tostring(err)
end
-- err carries the caller's position and contains text (plain, not a pattern)
local function raises(text, f)
    local err = catch(f)
    assert.matches("^spec/ordering_spec%.lua:%d+: ", err)
    assert.is_truthy(err:find(text, 1, true), ("expected %q in %q"):format(text, err))
end

describe("gather / scatter / scatter_add against PyTorch on " .. D.name, function()
    for _, c in ipairs(cases) do
        if c.op == "gather" or c.op == "scatter" or c.op == "scatter_add" then
            it(("%s %s dim %d"):format(c.op, c.dtype, c.dim), function()
                local x = T(c.x, c.dtype)
                if c.op == "gather" then
                    same(c.out, vals(x:gather(c.dim, L(c.index))))
                    same(c.out, vals(tide.gather(x, c.dim, L(c.index))))
                else
                    local src = T(c.src, c.dtype)
                    local r = x[c.op](x, c.dim, L(c.index), src)
                    same(c.out, vals(r))
                    same(c.x, vals(x)) -- out of place
                    x[c.op .. "_"](x, c.dim, L(c.index), src)
                    same(c.out, vals(x))
                end
            end)
        end
    end

    it("scatter takes a number for src, and bool tensors", function()
        local x = T({ { 1, 2 }, { 3, 4 } }, "float32")
        same({ { 9, 2 }, { 3, 9 } }, vals(x:scatter(2, L({ { 1 }, { 2 } }), 9)))
        local b = T({ false, false, false }, "bool")
        same({ true, false, false }, vals(b:scatter_add(1, L({ 1, 3, 1 }), T({ true, false, true }, "bool"))))
        same({ true, false, true }, vals(b:scatter_add(1, L({ 1, 3, 1 }), T({ false, true, true }, "bool"))))
    end)

    it("raises on a bad index, a bad shape or a float index, changing nothing", function()
        local x = T({ { 1, 2 }, { 3, 4 } }, "float32")
        raises("tide: gather: index 3 is out of range for dim 2 of size 2; indices are 1-based: " ..
            "use 1..2", function() x:gather(2, L({ { 1, 3 } })) end)
        raises("tide: gather: index of shape [2] does not fit the input of shape [2, 2]: it " ..
            "needs the same number of dims and sizes no larger (except in dim)",
            function() x:gather(1, L({ 1, 2 })) end)
        raises("tide: gather: index must be an int64 or int32 tensor, got float32; convert " ..
            "with :long()", function() x:gather(1, T({ { 1 } }, "float32")) end)
        raises("tide: scatter_: index 0 is out of range for dim 1 of size 2",
            function() x:scatter_(1, L({ { 0 } }), 5) end)
        raises("tide: scatter_add_: index of shape [1, 3] does not fit self of shape [2, 2]",
            function() x:scatter_add_(1, L({ { 1, 1, 1 } }), x) end)
        raises("tide: scatter: index of shape [1, 2] does not fit src of shape [1, 1]",
            function() x:scatter(1, L({ { 1, 1 } }), x:narrow(1, 1, 1):narrow(2, 1, 1)) end)
        raises("tide: scatter_: cannot write float32 values into a int64 tensor in place",
            function() L({ 1, 2 }):scatter_(1, L({ 1 }), T({ 0.5 }, "float32")) end)
        same({ { 1, 2 }, { 3, 4 } }, vals(x))
    end)

    it("gradients: gather, scatter and scatter_add (finite differences)", function()
        tide.manual_seed(3)
        local x = tide.randn({ 3, 4 }, { dtype = "float64", device = D.name }):requires_grad_(true)
        local s = tide.randn({ 2, 4 }, { dtype = "float64", device = D.name }):requires_grad_(true)
        local gi = L({ { 1, 3, 3, 2 }, { 3, 1, 2, 2 } })
        assert.is_true(gradcheck(function(t) return t:gather(1, gi) end, { x }))
        assert.is_true(gradcheck(function(t) return t:gather(2, L({ { 4, 4 }, { 1, 2 }, { 3, 1 } })) end, { x }))
        local si = L({ { 1, 3, 2, 2 }, { 3, 1, 3, 1 } }) -- distinct per column: scatter is defined
        assert.is_true(gradcheck(function(t, u) return t:scatter(1, si, u) end, { x, s }))
        assert.is_true(gradcheck(function(t, u) return t:scatter_add(1, gi, u) end, { x, s }))
        local small = L({ { 2 }, { 1 } }) -- src larger than the index
        local x2 = tide.randn({ 2, 4 }, { dtype = "float64", device = D.name }):requires_grad_(true)
        assert.is_true(gradcheck(function(t, u) return t:scatter_add(2, small, u) end, { x2, s }))
        s.grad = nil
        local y = x * 1 -- in place on a non-leaf
        y:scatter_(1, si, s)
        y:sum():backward()
        same({ 1, 1, 1, 1 }, vals(s.grad[1]))
    end)
end)

describe("sort / argsort / topk against PyTorch on " .. D.name, function()
    for _, c in ipairs(cases) do
        if c.op == "sort" then
            local name = ("sort %s dim %d descending %s"):format(c.dtype, c.dim,
                tostring(c.descending))
            it(name, function()
                local x = T(c.x, c.dtype)
                local v, i = x:sort(c.dim, c.descending)
                same(c.values, vals(v))
                same(c.indices, vals(i))
                assert.are.equal("int64", i.dtype)
                same(c.indices, vals(x:argsort(c.dim, c.descending)))
                local v2 = tide.sort(x, c.dim, c.descending)
                same(c.values, vals(v2))
            end)
        elseif c.op == "topk" then
            it(("topk %s dim %d largest %s"):format(c.dtype, c.dim, tostring(c.largest)), function()
                local x = T(c.x, c.dtype)
                local v, i = x:topk(c.k, c.dim, c.largest)
                same(c.values, vals(v))
                same(c.indices, vals(i))
            end)
        end
    end

    it("sorts the last dim by default, stably, and bool tensors", function()
        local v, i = T({ { 2, 1, 2, 1 } }, "int32"):sort()
        same({ { 1, 1, 2, 2 } }, vals(v))
        same({ { 2, 4, 1, 3 } }, vals(i))
        local _, j = T({ 2, 1, 2, 1 }, "int32"):sort(1, true)
        same({ 1, 3, 2, 4 }, vals(j))
        same({ false, true, true }, vals((T({ true, false, true }, "bool"):sort())))
    end)

    it("raises on a bad k, dim or flag", function()
        local x = T({ 1, 2, 3 }, "float32")
        raises("tide: topk: k = 4 is out of range for dim 1 of size 3; use 0..3",
            function() x:topk(4) end)
        raises("tide: sort: dim 2 is out of range for a tensor with 1 dims",
            function() x:sort(2) end)
        raises("tide: sort: descending must be a boolean, got number", function() x:sort(1, 1) end)
    end)

    it("gradients: sort and topk (finite differences)", function()
        tide.manual_seed(4)
        local x = tide.randn({ 3, 5 }, { dtype = "float64", device = D.name }):requires_grad_(true)
        assert.is_true(gradcheck(function(t) return (t:sort(2)) end, { x }))
        assert.is_true(gradcheck(function(t) return (t:sort(1, true)) end, { x }))
        assert.is_true(gradcheck(function(t) return (t:topk(2)) end, { x }))
        assert.is_true(gradcheck(function(t) return (t:topk(2, 1, false)) end, { x }))
        local _, i = x:sort()
        assert.is_false(i.requires_grad)
    end)
end)

describe("masked_fill / masked_select / tril / triu / flip / roll against PyTorch on " .. D.name, function()
    local function B(v)
        return tide.tensor(v, { dtype = "bool", device = D.name })
    end
    for _, c in ipairs(cases) do
        if c.op == "masked_fill" then
            it(("masked_fill %s mask %dx%d"):format(c.dtype, #c.mask, #c.mask[1]), function()
                local x = T(c.x, c.dtype)
                same(c.out, vals(x:masked_fill(B(c.mask), c.value)))
                same(c.out, vals(tide.masked_fill(x, B(c.mask), c.value)))
                same(c.x, vals(x))
                x:masked_fill_(B(c.mask), c.value)
                same(c.out, vals(x))
            end)
        elseif c.op == "masked_select" then
            it(("masked_select %s mask %dx%d"):format(c.dtype, #c.mask, #c.mask[1]), function()
                same(c.out, vals(T(c.x, c.dtype):masked_select(B(c.mask))))
            end)
        elseif c.op == "tril" or c.op == "triu" then
            it(("%s %s k %d"):format(c.op, c.dtype, c.k), function()
                local x = T(c.x, c.dtype)
                same(c.out, vals(x[c.op](x, c.k)))
                same(c.out, vals(tide[c.op](x, c.k)))
            end)
        elseif c.op == "flip" then
            it(("flip %s dims %s"):format(c.dtype, table.concat(c.dims, ",")), function()
                local x = T(c.x, c.dtype)
                same(c.out, vals(x:flip(c.dims)))
                same(c.out, vals(x:flip(table.unpack(c.dims))))
            end)
        elseif c.op == "roll" then
            local sh = type(c.shifts) == "table" and table.concat(c.shifts, ",") or c.shifts
            it(("roll %s shifts %s dims %s"):format(c.dtype, sh,
                c.dims and table.concat(c.dims, ",") or "none"), function()
                same(c.out, vals(T(c.x, c.dtype):roll(c.shifts, c.dims)))
            end)
        end
    end

    it("masked_select, one_hot and multinomial read values internally: no transfer counted", function()
        local x, c, p = T({ { 1, 2 }, { 3, 4 } }, "float32"), L({ 1, 2 }), T({ 1, 2 }, "float32")
        tide.reset_transfer_stats()
        x:masked_select(x:gt(1))
        tide.one_hot(c, 2)
        tide.multinomial(p, 2, { replacement = true })
        tide.multinomial(p, 2)
        local st = tide.transfer_stats()
        assert.are.same({ 0, 0 }, { st.d2h_count, st.h2d_count })
    end)

    it("defaults: tril/triu k = 0, batched over leading dims", function()
        local x = T({ { { 1, 2 }, { 3, 4 } }, { { 5, 6 }, { 7, 8 } } }, "float32")
        same({ { { 1, 0 }, { 3, 4 } }, { { 5, 0 }, { 7, 8 } } }, vals(x:tril()))
        same({ { { 1, 2 }, { 0, 4 } }, { { 5, 6 }, { 0, 8 } } }, vals(x:triu()))
    end)

    it("take PyTorch 1.13's deprecated uint8 mask (nonzero is true) with its warning, once", function()
        local W = require("tide._warn")
        local warned = require("spec.support.warnings")
        local byte = T({ 1, 0, 2 }, "uint8")
        local x = T({ 1, 2, 3 }, "float32")
        for _, k in ipairs({ "uint8_where", "uint8_mask.masked_fill_", "uint8_mask.masked_select" }) do
            W.reset(k)
        end
        local r
        local text = warned(function() r = tide.where(byte, x, 0) end)
        same({ 1, 0, 3 }, vals(r))
        assert.is_truthy(text:find("tide: warning: where received a uint8 condition tensor. This " ..
            "behavior is deprecated and will be removed in a future version of PyTorch. Use a " ..
            "boolean condition instead.", 1, true), text)
        assert.are.equal("", warned(function() r = x:where(byte, -1) end)) -- once
        same({ 1, -1, 3 }, vals(r))
        text = warned(function() r = x:masked_fill(byte, 9) end)
        same({ 9, 2, 9 }, vals(r))
        assert.is_truthy(text:find("tide: warning: masked_fill_ received a mask with dtype " ..
            "torch.uint8, this behavior is now deprecated,please use a mask with dtype " ..
            "torch.bool instead.", 1, true), text)
        text = warned(function() r = x:masked_select(byte) end)
        same({ 1, 3 }, vals(r))
        assert.is_truthy(text:find("masked_select received a mask with dtype torch.uint8", 1,
            true), text)
        local y = x:clone()
        assert.are.equal(y, y:masked_fill_(byte, 0))
        same({ 0, 2, 0 }, vals(y))
        -- the mask itself is left as it was, and gradients flow as with a bool one
        same({ 1, 0, 2 }, vals(byte))
        assert.are.equal("uint8", byte.dtype)
        local w = T({ 1, 2, 3 }, "float64"):requires_grad_(true)
        tide.where(byte, w * 2, w):sum():backward()
        same({ 2, 1, 2 }, vals(w.grad))
    end)

    it("raises on a non-bool mask, a mask that does not fit, a bad dim or shift", function()
        local x = T({ { 1, 2 }, { 3, 4 } }, "float32")
        raises("tide: masked_fill: mask must be a bool tensor, got float32; make one with a " ..
            "comparison or :bool()", function() x:masked_fill(T({ 1, 0 }, "float32"), 1) end)
        -- out of place the result takes the broadcast shape (PyTorch 1.13's); in place the mask
        -- must fit t, and t is left as it was
        local wide = x:masked_fill(B({ { { true } }, { { false } }, { { true } } }):expand(3, 2, 2),
            9)
        assert.are.same({ 3, 2, 2 }, wide.shape)
        same({ { { 9, 9 }, { 9, 9 } }, { { 1, 2 }, { 3, 4 } }, { { 9, 9 }, { 9, 9 } } }, vals(wide))
        raises("tide: masked_fill_: mask of shape [3, 2, 2] does not broadcast to the shape " ..
            "[2, 2]", function() x:masked_fill_(B({ { { true } } }):expand(3, 2, 2), 1) end)
        same({ { 1, 2 }, { 3, 4 } }, vals(x))
        raises("tide: masked_fill_: mask must be a bool tensor",
            function() x:masked_fill_(T({ 1, 0 }, "int64"), 1) end)
        raises("tide: masked_select: mask must be a bool tensor, got float32",
            function() x:masked_select(x) end)
        raises("tide: tril: needs a tensor of at least 2 dims, got 1",
            function() T({ 1, 2 }, "float32"):tril() end)
        raises("tide: flip: dim 3 is out of range for a tensor with 2 dims",
            function() x:flip(3) end)
        raises("tide: flip: dim 1 appears more than once", function() x:flip(1, -2) end)
        raises("tide: roll: 2 shifts for 1 dims; give one shift per dim",
            function() x:roll({ 1, 2 }, { 1 }) end)
        same({ { 1, 2 }, { 3, 4 } }, vals(x))
    end)

    it("gradients: masked_fill, masked_select, tril, triu, flip, roll (finite differences)", function()
        tide.manual_seed(5)
        local x = tide.randn({ 3, 4 }, { dtype = "float64", device = D.name }):requires_grad_(true)
        local m = B({ { true, false, true, false }, { false, false, true, true }, { true, true, false, false } })
        local r = B({ true, false, false, true })
        assert.is_true(gradcheck(function(t) return t:masked_fill(m, 2) end, { x }))
        assert.is_true(gradcheck(function(t) return t:masked_select(m) end, { x }))
        assert.is_true(gradcheck(function(t) return t:masked_select(r) end, { x }))
        local v = tide.tensor(1.5, { dtype = "float64", device = D.name }):requires_grad_(true)
        assert.is_true(gradcheck(function(t, u) return t:masked_fill(m, u) end, { x, v }))
        assert.is_true(gradcheck(function(t) return t:tril(1) end, { x }))
        assert.is_true(gradcheck(function(t) return t:triu(-1) end, { x }))
        assert.is_true(gradcheck(function(t) return t:flip(1, 2) end, { x }))
        assert.is_true(gradcheck(function(t) return t:roll({ 1, -3 }, { 1, 2 }) end, { x }))
        assert.is_true(gradcheck(function(t) return t:roll(5) end, { x }))
        x.grad = nil
        local y = x * 1
        y:masked_fill_(m, 0)
        y:sum():backward()
        same({ 0, 1, 0, 1 }, vals(x.grad[1]))
    end)
end)

describe("one_hot and multinomial on " .. D.name, function()
    for _, c in ipairs(cases) do
        if c.op == "one_hot" then
            it(("one_hot of %d classes against PyTorch"):format(c.n), function()
                local r = tide.one_hot(L(c.x), c.n)
                same(c.out, vals(r))
                assert.are.equal("int64", r.dtype)
                if c.n == -1 then
                    same(c.out, vals(tide.one_hot(L(c.x))))
                end
            end)
        end
    end

    it("one_hot raises on a class out of range or a float tensor", function()
        raises("tide: one_hot: class 4 is out of range for 3 classes; classes are 1-based: use " ..
            "1..3", function() tide.one_hot(L({ 1, 4 }), 3) end)
        raises("tide: one_hot: class 0 is out of range", function() tide.one_hot(L({ 0 }), 3) end)
        raises("tide: one_hot: classes must be an int64 tensor, got float32; convert with :long()",
            function() tide.one_hot(T({ 1 }, "float32"), 3) end)
    end)

    local function counts(t, k)
        local c = {}
        for i = 1, k do
            c[i] = 0
        end
        for _, v in ipairs(vals(t:reshape(-1))) do
            c[v] = c[v] + 1
        end
        return c
    end

    it("draws 1-based categories with the given frequencies, seeded by tide's generator", function()
        local p = T({ 1, 2, 7, 0 }, "float32") -- unnormalized, as PyTorch takes them
        tide.manual_seed(11)
        local s = tide.multinomial(p, 20000, { replacement = true })
        assert.are.equal("int64", s.dtype)
        assert.are.same({ 20000 }, s.shape)
        local c = counts(s, 4)
        assert.are.equal(0, c[4])
        assert.is_true(math.abs(c[1] / 20000 - 0.1) < 0.01, c[1])
        assert.is_true(math.abs(c[2] / 20000 - 0.2) < 0.015, c[2])
        assert.is_true(math.abs(c[3] / 20000 - 0.7) < 0.015, c[3])
        tide.manual_seed(11)
        same(vals(s), vals(tide.multinomial(p, 20000, { replacement = true })))
        tide.manual_seed(11)
        same(vals(s), vals(p:multinomial(20000, { replacement = true }))) -- the method
    end)

    it("without replacement: distinct categories per row, first draws as the probabilities", function()
        tide.manual_seed(12)
        local p = T({ { 1, 0, 3, 6 } }, "float64"):expand(4000, 4)
        local s = tide.multinomial(p, 3)
        assert.are.same({ 4000, 3 }, s.shape)
        for _, row in ipairs(vals(s)) do
            table.sort(row)
            assert.are.same({ 1, 3, 4 }, row)
        end
        local c = counts(s:narrow(2, 1, 1), 4)
        assert.is_true(math.abs(c[1] / 4000 - 0.1) < 0.02, c[1])
        assert.is_true(math.abs(c[4] / 4000 - 0.6) < 0.03, c[4])
    end)

    it("multinomial raises on bad probabilities, too many draws or an unknown option", function()
        raises("tide: multinomial: cannot draw 3 samples without replacement from 2 categories " ..
            "of nonzero probability (row 1); pass {replacement = true}",
            function() tide.multinomial(T({ 1, 0, 1 }, "float32"), 3) end)
        raises("tide: multinomial: probabilities must be finite and non-negative, got -1",
            function() tide.multinomial(T({ 1, -1 }, "float32"), 1) end)
        raises("tide: multinomial: the probabilities of row 1 sum to 0",
            function() tide.multinomial(T({ 0, 0 }, "float32"), 1, { replacement = true }) end)
        raises("tide: multinomial: probabilities must be a float tensor, got int64",
            function() tide.multinomial(L({ 1, 2 }), 1) end)
        raises('tide: multinomial: unknown option "replace"; options are num_samples, ' ..
            'replacement',
            function() tide.multinomial(T({ 1, 2 }, "float32"), 1, { replace = true }) end)
    end)
end)

-- the CUDA kernels against the CPU's on strided inputs of every dtype the GPU has (float16 and
-- bfloat16 against the CPU's float32: small integers, exact in both)
describe("ordering ops: cuda against cpu #cuda", function()
    local function check(cpu, gpu)
        same(vals(cpu:to("float64")), vals(gpu:cpu():to("float32"):to("float64")))
    end
    it("sort of long rows with ties and NaN: the CPU's stable order", function()
        if not tide.cuda.is_available() then
            pending("no CUDA device")
            return
        end
        tide.manual_seed(22)
        local xc = (tide.rand({ 3, 3001 }) * 100):floor()
        xc[2][7] = 0 / 0
        xc[2][2000] = 0 / 0
        for _, desc in ipairs({ false, true }) do
            local v1, i1 = xc:sort(2, desc)
            local v2, i2 = xc:to("cuda"):sort(2, desc)
            same(vals(v1), vals(v2))
            same(vals(i1), vals(i2))
            local v3, i3 = xc:t():to("cuda"):sort(1, desc) -- along a strided dim
            same(vals(v1:t()), vals(v3))
            same(vals(i1:t()), vals(i3))
        end
    end)

    local HALF = { float16 = true, bfloat16 = true }
    for _, dt in ipairs({ "float32", "float64", "float16", "bfloat16", "int32", "int64", "uint8",
        "bool" }) do
        it("gather, scatter, scatter_add, sort, topk, masks, flips, rolls: " .. dt, function()
            if not tide.cuda.is_available() then
                pending("no CUDA device")
                return
            end
            tide.manual_seed(21)
            local cdt = HALF[dt] and "float32" or dt -- the CPU reference's dtype
            local ints = (tide.rand({ 6, 40 }) * 50):floor()
            local xc = dt == "bool" and ints:gt(25) or ints:to(cdt)
            local xg = xc:to("cuda"):to(dt):t():contiguous():t() -- strided on the GPU
            local idx = (tide.rand({ 6, 30 }) * 40):floor():long():add(1)
            local gi = idx:to("cuda")
            check(xc:gather(2, idx), xg:gather(2, gi))
            local src = xc:narrow(2, 1, 30)
            local dc = tide.zeros({ 6, 40 }, { dtype = cdt })
            local dg = tide.zeros({ 6, 40 }, { dtype = dt, device = "cuda" })
            check(dc:scatter_add(2, idx, src), dg:scatter_add(2, gi, xg:narrow(2, 1, 30)))
            local perm = tide.arange(40, 0, -1):view(1, 40):expand(6, 40):contiguous()
            check(dc:scatter(2, perm, xc), dg:scatter(2, perm:to("cuda"), xg))
            local v1, i1 = xc:sort(2, true)
            local v2, i2 = xg:sort(2, true)
            check(v1, v2)
            check(i1, i2) -- ties keep their order on both
            local t1, j1 = xc:topk(5, 2, false)
            local t2, j2 = xg:topk(5, 2, false)
            check(t1, t2)
            check(j1, j2)
            local m = tide.rand({ 6, 40 }):gt(0.5)
            check(xc:masked_select(m), xg:masked_select(m:to("cuda")))
            check(xc:masked_fill(m, 1), xg:masked_fill(m:to("cuda"), 1))
            check(xc:tril(3), xg:tril(3))
            check(xc:triu(-2), xg:triu(-2))
            check(xc:flip(1, 2), xg:flip(1, 2))
            check(xc:roll({ 2, -7 }, { 1, 2 }), xg:roll({ 2, -7 }, { 1, 2 }))
        end)
    end
end)
