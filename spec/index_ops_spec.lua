-- index_ops_spec.lua — nonzero, unique and repeat_interleave (issue 27): values against
-- PyTorch 1.13 (spec/fixtures/index_ops_torch.lua, from make_index_ops.py) on every dtype,
-- empty, 0-d and non-contiguous inputs, the device rules, the memory limit, the errors and
-- repeat_interleave's gradient. Runs on the device under test (spec/support/device.lua); the
-- #cuda block compares CUDA with the CPU.
local tide = require("tide")
local gradcheck = require("spec.support.gradcheck")
local D = require("spec.support.device")
local cases = require("spec.fixtures.index_ops_torch")

if D.kind == "cuda" and not tide.cuda.is_available() then
    describe("nonzero / unique / repeat_interleave on " .. D.name, function()
        it("needs a CUDA device", function()
            pending("no CUDA device")
        end)
    end)
    return
end

-- a {shape =, data =} fixture as a tensor of dtype on the device under test
local function F(r, dtype)
    local t = tide.tensor(#r.data > 0 and r.data or { 0 }, { dtype = dtype, device = D.name })
    if #r.data == 0 then
        t = t:narrow(1, 1, 0)
    end
    return t:reshape(r.shape)
end
local function T(v, dtype)
    return tide.tensor(v, { dtype = dtype, device = D.name })
end
local function L(v)
    return T(v, "int64")
end
local function vals(t)
    return t:cpu():totable()
end
-- a tensor as {shape =, data =} (row-major), for comparing with a fixture
local function R(t)
    return { shape = t.shape, data = t:cpu():contiguous():reshape(-1):totable() }
end
local function catch(f)
    local ok, err = pcall(f)
    assert.is_false(ok, "expected an error")
    return tostring(err)
end
-- err carries the caller's position and contains text (plain, not a pattern)
local function raises(text, f)
    local err = catch(f)
    assert.matches("^spec/index_ops_spec%.lua:%d+: ", err)
    assert.is_truthy(err:find(text, 1, true), ("expected %q in %q"):format(text, err))
end

describe("nonzero / unique / repeat_interleave against PyTorch on " .. D.name, function()
    for n, c in ipairs(cases) do
        local what = ("%s %s #%d"):format(c.op, c.dtype, n)
        if c.op == "nonzero" then
            it(what .. (c.transposed and " (transposed)" or ""), function()
                local x = F(c.x, c.dtype)
                if c.transposed then
                    x = x:t()
                end
                local r = x:nonzero()
                assert.are.equal("int64", r.dtype)
                assert.are.equal(D.name, tostring(r.device))
                assert.are.same(c.out, R(r))
                assert.are.same(c.out, R(tide.nonzero(x)))
            end)
        elseif c.op == "unique" then
            it(what .. (c.dim and (" dim " .. c.dim) or ""), function()
                local x = F(c.x, c.dtype)
                local v, i, k = x:unique({ return_inverse = true, return_counts = true, dim = c.dim })
                assert.are.equal(c.dtype, v.dtype)
                assert.are.same(c.values, R(v))
                assert.are.same(c.inverse, R(i))
                assert.are.same(c.counts, R(k))
                local v2 = tide.unique(x, { dim = c.dim })
                assert.are.same(c.values, R(v2))
            end)
        elseif c.op == "repeat_interleave" then
            it(what .. (c.x and "" or " (repeats alone)"), function()
                if not c.x then
                    local r = tide.repeat_interleave(L(c.repeats))
                    assert.are.same(c.out, R(r))
                    assert.are.equal("int64", r.dtype)
                    return
                end
                local x = F(c.x, c.dtype)
                local rep = type(c.repeats) == "table" and L(c.repeats) or c.repeats
                local r = x:repeat_interleave(rep, c.dim)
                assert.are.equal(c.dtype, r.dtype)
                assert.are.same(c.out, R(r))
                assert.are.same(c.out, R(tide.repeat_interleave(x, rep, { dim = c.dim })))
            end)
        end
    end
end)

describe("nonzero on " .. D.name, function()
    it("counts NaN as nonzero and -0 as zero, and works on every dtype", function()
        local x = T({ 0 / 0, 0, -0.0, 1, -2 }, "float32")
        assert.are.same({ { 1 }, { 4 }, { 5 } }, vals(x:nonzero()))
        for _, dt in ipairs({ "float64", "int32", "int64", "uint8", "bool" }) do
            assert.are.same({ { 2 }, { 3 } }, vals(T({ 0, 1, 1 }, dt):nonzero()))
        end
    end)

    it("as_tuple gives one 1-d tensor per dim (one for a 0-d tensor)", function()
        local x = T({ { 0, 1, 2 }, { 3, 0, 0 } }, "int32")
        local c = x:nonzero({ as_tuple = true })
        assert.are.equal(2, #c)
        assert.are.same({ 1, 1, 2 }, vals(c[1]))
        assert.are.same({ 2, 3, 1 }, vals(c[2]))
        assert.is_true(c[1]:is_contiguous())
        -- the tuple indexes the tensor back: x[i][j] ~= 0 for every pair
        for k = 1, 3 do
            assert.are_not.equal(0, vals(x)[vals(c[1])[k]][vals(c[2])[k]])
        end
        local s = tide.nonzero(T(3, "float32"), { as_tuple = true })
        assert.are.equal(1, #s)
        assert.are.same({ 1 }, vals(s[1]))
        assert.are.same({ 0 }, T(0, "float32"):nonzero({ as_tuple = true })[1].shape)
    end)

    it("tide.where(cond) alone is nonzero's tuple, torch.where's one-argument form", function()
        local x = T({ { true, false }, { false, true } }, "bool")
        local w = tide.where(x)
        assert.are.equal(2, #w)
        assert.are.same({ 1, 2 }, vals(w[1]))
        assert.are.same({ 1, 2 }, vals(w[2]))
        assert.are.equal(D.name, tostring(w[1].device))
        assert.matches("tide: where: argument #2 must be a tensor or a number, got nil",
            select(2, pcall(tide.where, x, nil, 1)), 1, true)
    end)

    it("takes a non-contiguous view and leaves its input alone", function()
        local base = T({ { 1, 0, 0 }, { 0, 0, 2 }, { 0, 3, 0 } }, "float64")
        local v = base:t():narrow(1, 2, 2) -- rows 2..3 of the transpose, strided
        assert.are.same({ { 1, 3 }, { 2, 2 } }, vals(v:nonzero()))
        assert.are.same({ { 1, 0, 0 }, { 0, 0, 2 }, { 0, 3, 0 } }, vals(base))
    end)

    it("gives an int64 result without history", function()
        local x = tide.tensor({ 0, 1.5 }, { dtype = "float64", device = D.name, requires_grad = true })
        local r = x:nonzero()
        assert.is_false(r.requires_grad)
        assert.are.same({ { 2 } }, vals(r))
    end)
end)

describe("unique on " .. D.name, function()
    it("returns values[, inverse][, counts] in PyTorch's order", function()
        local x = T({ 3, 1, 2, 3, 1 }, "int64")
        local v, k = x:unique({ return_counts = true })
        assert.are.same({ 1, 2, 3 }, vals(v))
        assert.are.same({ 2, 1, 2 }, vals(k))
        local v2, i2 = x:unique({ return_inverse = true })
        assert.are.same({ 1, 2, 3 }, vals(v2))
        assert.are.same({ 3, 1, 2, 3, 1 }, vals(i2))
        assert.are.equal(1, select("#", x:unique()))
        -- the inverse indexes the values back into x
        assert.are.same(vals(x), vals(v2:index_select(1, i2)))
        -- sorted = false: PyTorch leaves the order unspecified; tide's is sorted
        assert.are.same({ 1, 2, 3 }, vals(x:unique({ sorted = false })))
    end)

    it("gives each NaN its own entry (count 1), after every number", function()
        local v, i, k = T({ 0 / 0, 1, 0 / 0, 1 }, "float32"):unique({ return_inverse = true,
            return_counts = true })
        local vv = vals(v)
        assert.are.equal(3, #vv)
        assert.are.equal(1, vv[1])
        assert.is_true(vv[2] ~= vv[2] and vv[3] ~= vv[3])
        assert.are.same({ 2, 1, 1 }, vals(k))
        assert.are.same({ 2, 1, 3, 1 }, vals(i))
    end)

    it("keeps the first of -0.0 and 0.0, on every dtype, non-contiguous too", function()
        -- torch.unique(x, return_inverse=True, return_counts=True)
        local v, i, k = T({ -1 / math.huge, 0, 2, -1 / math.huge }, "float32"):unique({
            return_inverse = true, return_counts = true })
        assert.are.same({ 0, 2 }, vals(v))
        assert.are.equal(-math.huge, 1 / vals(v)[1])
        assert.are.same({ 1, 1, 2, 1 }, vals(i))
        assert.are.same({ 3, 1 }, vals(k))
        for _, dt in ipairs({ "int64", "int32", "float64", "float32", "uint8" }) do
            local x = T({ { 5, 3, 5, 0 }, { 3, 9, 5, 7 } }, dt):t() -- 5 3 3 9 5 5 0 7
            local v2, i2, k2 = x:unique({ return_inverse = true, return_counts = true })
            assert.are.equal(dt, v2.dtype)
            assert.are.same({ 0, 3, 5, 7, 9 }, vals(v2), dt)
            assert.are.same({ { 3, 2 }, { 2, 5 }, { 3, 3 }, { 1, 4 } }, vals(i2), dt)
            assert.are.same({ 1, 2, 3, 1, 1 }, vals(k2), dt)
        end
    end)

    it("gives values, inverse and counts of many elements, few or many distinct", function()
        -- (i * 7919) % m for i < n takes every value below m: m = 1000 each 100 times, m = 150001
        -- (more distinct values than the CPU's hash table takes) each once or twice
        for _, m in ipairs({ 1000, 150001 }) do
            local n = m == 1000 and 100000 or 200000
            local x = tide.arange(n, { dtype = "int64", device = D.name }):mul(7919):remainder(m)
            for _, dt in ipairs({ "int64", "float32" }) do
                local xd = x:to(dt)
                local v, i, k = xd:unique({ return_inverse = true, return_counts = true })
                assert.is_true(v:equal(tide.arange(m, { dtype = dt, device = D.name })), dt)
                assert.is_true(i:equal(x + 1), dt)
                assert.are.equal(n, k:sum():item())
                assert.is_true(k:equal((x + 1):bincount()), dt)
            end
        end
    end)

    it("over a dim: unique slices, negative dims, non-contiguous input, bool", function()
        local x = T({ { 1, 2, 1 }, { 3, 4, 3 } }, "float32")
        local v, i, k = x:unique({ dim = -1, return_inverse = true, return_counts = true })
        assert.are.same({ { 1, 2 }, { 3, 4 } }, vals(v))
        assert.are.same({ 1, 2, 1 }, vals(i))
        assert.are.same({ 2, 1 }, vals(k))
        assert.are.same({ { 1, 3 }, { 2, 4 } }, vals(x:t():unique({ dim = 1 })))
        local b = T({ { true, false }, { true, false }, { false, false } }, "bool")
        assert.are.same({ { false, false }, { true, false } }, vals(b:unique({ dim = 1 })))
        -- slices of no elements are all equal: one of them
        local z = tide.zeros({ 3, 0 }, { device = D.name })
        local zv, zk = z:unique({ dim = 1, return_counts = true })
        assert.are.same({ 1, 0 }, zv.shape)
        assert.are.same({ 3 }, vals(zk))
    end)

    it("handles empty and 0-d tensors", function()
        local v, i, k = tide.zeros({ 0 }, { device = D.name }):unique({ return_inverse = true,
            return_counts = true })
        assert.are.same({ 0 }, v.shape)
        assert.are.same({ 0 }, i.shape)
        assert.are.same({ 0 }, k.shape)
        local s, si = T(7, "int32"):unique({ return_inverse = true })
        assert.are.same({ 7 }, vals(s))
        assert.are.same({}, si.shape)
        assert.are.equal(1, si:item())
    end)

    it("is not differentiable (as PyTorch): it raises when its input requires grad", function()
        local x = tide.tensor({ 2, 1, 2 }, { dtype = "float64", device = D.name, requires_grad = true })
        raises("tide: unique: not differentiable: argument #1 requires grad; call it under "
            .. "tide.no_grad or on detach()ed tensors", function() x:unique() end)
        assert.are.same({ 1, 2 }, vals(x:detach():unique()))
        assert.are.same({ 1, 2 }, vals(tide.no_grad(function() return x:unique() end)))
    end)
end)

describe("repeat_interleave on " .. D.name, function()
    it("takes a number, a table, an int32 or int64 tensor, or one repeat for all", function()
        local x = T({ { 1, 2 }, { 3, 4 } }, "float32")
        assert.are.same({ 1, 1, 2, 2, 3, 3, 4, 4 }, vals(x:repeat_interleave(2)))
        assert.are.same({ { 1, 2 }, { 3, 4 }, { 3, 4 } }, vals(x:repeat_interleave({ 1, 2 }, 1)))
        assert.are.same({ { 1, 2 }, { 3, 4 }, { 3, 4 } },
            vals(x:repeat_interleave(T({ 1, 2 }, "int32"), { dim = 1 })))
        assert.are.same({ { 1, 1, 1, 2, 2, 2 }, { 3, 3, 3, 4, 4, 4 } },
            vals(x:repeat_interleave(L({ 3 }), 2)))
        assert.are.same({ { 1, 1, 2, 2 }, { 3, 3, 4, 4 } }, vals(x:repeat_interleave(L(2), -1)))
        assert.are.same({ 1, 2, 3, 3, 4, 4 }, vals(x:repeat_interleave({ 1, 1, 2, 2 })))
        assert.are.same({ 1, 3, 3 }, vals(x:repeat_interleave({ 1, 2 }, { dim = 1,
            output_size = 3 }):select(2, 1)))
        assert.are.same({ 1, 3, 3 }, vals(x:repeat_interleave({ 1, 2 }, 1, { output_size = 3 })
            :select(2, 1)))
    end)

    it("on every dtype, a 0-d tensor, empty tensors and zero repeats", function()
        for _, dt in ipairs({ "float64", "int32", "int64", "uint8", "bool" }) do
            local x = T({ 1, 0 }, dt)
            local r = x:repeat_interleave({ 2, 1 })
            assert.are.equal(dt, r.dtype)
            assert.are.same(vals(T({ 1, 1, 0 }, dt)), vals(r))
        end
        assert.are.same({ 5, 5, 5 }, vals(T(5, "int64"):repeat_interleave(3)))
        assert.are.same({ 0, 3 }, tide.zeros({ 0, 3 }, { device = D.name }):repeat_interleave(2, 1).shape)
        assert.are.same({ 2, 0 }, tide.zeros({ 2, 3 }, { device = D.name }):repeat_interleave(0, 2).shape)
        assert.are.same({ 0 }, T({ 1, 2 }, "int64"):repeat_interleave({ 0, 0 }).shape)
    end)

    it("takes a non-contiguous input", function()
        local x = T({ { 1, 2 }, { 3, 4 } }, "int64"):t()
        assert.are.same({ { 1, 3 }, { 1, 3 }, { 2, 4 } }, vals(x:repeat_interleave({ 2, 1 }, 1)))
        assert.are.same({ 1, 3, 3, 2, 4, 4 }, vals(x:repeat_interleave({ 1, 2 }, 2):reshape(-1)))
    end)

    it("alone, tide.repeat_interleave(repeats) gives 1-based positions in repeats' dtype", function()
        assert.are.same({ 1, 1, 3 }, vals(tide.repeat_interleave(L({ 2, 0, 1 }))))
        local r32 = tide.repeat_interleave(T({ 1, 2 }, "int32"), { output_size = 3 })
        assert.are.equal("int32", r32.dtype)
        assert.are.same({ 1, 2, 2 }, vals(r32))
        assert.are.same({ 1, 2, 2 }, vals(L({ 1, 2 }):repeat_interleave()))
        -- the positions select the repeated elements back
        local x = T({ 10, 20, 30 }, "float32")
        assert.are.same(vals(x:repeat_interleave({ 2, 0, 1 })),
            vals(x:index_select(1, tide.repeat_interleave(L({ 2, 0, 1 })))))
    end)

    it("raises on negative, misshapen, float or out-of-range arguments, naming them", function()
        local x = T({ { 1, 2 }, { 3, 4 } }, "float32")
        raises("tide: repeat_interleave: repeats must be non-negative, got -1",
            function() x:repeat_interleave(-1) end)
        raises("tide: repeat_interleave: repeats must be non-negative, got -2 at position 2",
            function() x:repeat_interleave(L({ 1, -2 }), 1) end)
        raises("tide: repeat_interleave: repeats must be non-negative, got -3",
            function() x:repeat_interleave(L({ -3 }), 1) end)
        raises("tide: repeat_interleave: repeats has 3 elements for dim 2 of size 2; give one per "
            .. "element of the dim or a single one", function() x:repeat_interleave({ 1, 2, 3 }, 2) end)
        raises("tide: repeat_interleave: repeats has 2 elements for a tensor of 4 elements "
            .. "(flattened, no dim given)", function() x:repeat_interleave({ 1, 2 }) end)
        raises("tide: repeat_interleave: repeats must be an integer or an int64 tensor, got a "
            .. "float32 tensor; convert it with :long()",
            function() x:repeat_interleave(T({ 1, 2 }, "float32"), 1) end)
        raises("tide: repeat_interleave: repeats must be an integer, got 2.5",
            function() x:repeat_interleave(2.5) end)
        raises("tide: repeat_interleave: repeats must be a 0-d or 1-d tensor, got 2 dims",
            function() x:repeat_interleave(L({ { 1, 2 } }), 1) end)
        raises("tide: repeat_interleave: repeats must be an integer, a table of integers or an "
            .. "int64 tensor, got string", function() x:repeat_interleave("2") end)
        raises("tide: repeat_interleave: dim 3 is out of range for a tensor with 2 dims",
            function() x:repeat_interleave(2, 3) end)
        raises("tide: repeat_interleave: dim -3 is out of range for a tensor with 2 dims",
            function() x:repeat_interleave(2, { dim = -3 }) end)
        raises("tide: repeat_interleave: dim 1 is out of range for a tensor with no dims",
            function() T(1, "float32"):repeat_interleave(2, 1) end)
        raises("tide: repeat_interleave: output_size is 5 but the repeats add up to 3; give "
            .. "their sum, or leave output_size out",
            function() x:repeat_interleave({ 1, 2 }, { dim = 1, output_size = 5 }) end)
        raises("tide: repeat_interleave: output_size must be non-negative, got -1",
            function() x:repeat_interleave(1, { dim = 1, output_size = -1 }) end)
        raises("tide: repeat_interleave: output_size is 2 but the repeats add up to 4",
            function() x:repeat_interleave(2, 2, { output_size = 2 }) end)
        raises('tide: repeat_interleave: unknown option "dims" (did you mean "dim"?)',
            function() x:repeat_interleave(1, { dims = 1 }) end)
        raises("tide: repeat_interleave: repeats alone must be an int64 tensor, got a float32 "
            .. "tensor; convert it with :long(), or give the repeats after the tensor to repeat",
            function() tide.repeat_interleave(T({ 1, 2 }, "float32")) end)
        raises("tide: repeat_interleave: repeats alone must be an int64 tensor, got a float32",
            function() x:repeat_interleave() end)
        raises("tide: repeat_interleave: repeats alone must be a 1-d tensor, got 0 dims",
            function() tide.repeat_interleave(L(2)) end)
        assert.are.same({ { 1, 2 }, { 3, 4 } }, vals(x)) -- a failed call changes nothing
    end)

    it("checks a huge repeat count before allocating anything", function()
        local x = T({ 1, 2, 3 }, "float32")
        collectgarbage()
        collectgarbage()
        local before = tide.memory_in_use()
        local limit = tide.memory_limit()
        tide.set_memory_limit(before + 2 ^ 20)
        local ok, err = pcall(function() return x:repeat_interleave(10 ^ 7) end)
        tide.set_memory_limit(limit)
        assert.is_false(ok)
        assert.matches("^spec/index_ops_spec%.lua:%d+: tide: repeat_interleave: a result of "
            .. "30000000 elements and its int64 source index would take 343%.3 MB, more than the "
            .. "1%.0 MB this process may use %(what tide%.memory_limit%(%) leaves%); ask for fewer "
            .. "repeats, or raise the limit with tide%.set_memory_limit", err)
        assert.is_true(tide.memory_in_use() <= before)
        -- no limit: the sum is checked for overflow, the size against the machine's memory
        raises("tide: repeat_interleave: the repeats add up to more than 2^63 - 1 elements",
            function() x:repeat_interleave(2 ^ 62) end)
        raises("tide: repeat_interleave: a result of 3298534883328 elements and its int64 source "
            .. "index would take 36.0 TB, more than the ", function() x:repeat_interleave(2 ^ 40) end)
        raises("this process may use (the machine's memory); ask for fewer repeats",
            function() x:repeat_interleave(L({ 2 ^ 40, 0, 0 })) end)
        raises("tide: repeat_interleave: the repeats add up to more than 2^63 - 1 elements",
            function() x:repeat_interleave(L({ 2 ^ 62, 2 ^ 62, 0 })) end)
        collectgarbage()
        collectgarbage()
        assert.is_true(tide.memory_in_use() <= before)
    end)

    it("gradients: each source sums its copies (finite differences)", function()
        tide.manual_seed(27)
        local x = tide.randn({ 2, 3 }, { dtype = "float64", device = D.name }):requires_grad_(true)
        assert.is_true(gradcheck(function(t) return t:repeat_interleave(2) end, { x }))
        assert.is_true(gradcheck(function(t) return t:repeat_interleave({ 2, 0, 1 }, 2) end, { x }))
        assert.is_true(gradcheck(function(t)
            return t:repeat_interleave(L({ 3, 1 }), { dim = -2, output_size = 4 })
        end, { x }))
        assert.is_true(gradcheck(function(t) return t:t():repeat_interleave(L({ 1, 2, 0 }), 1) end,
            { x }))
        local s = tide.tensor(2, { dtype = "float64", device = D.name }):requires_grad_(true)
        assert.is_true(gradcheck(function(t) return t:repeat_interleave(3) end, { s }))
        local y = tide.tensor({ 1, 2, 3 }, { dtype = "float64", device = D.name, requires_grad = true })
        y:repeat_interleave({ 1, 2, 3 }):sum():backward()
        assert.are.same({ 1, 2, 3 }, vals(y.grad))
    end)
end)

describe("nonzero / unique / repeat_interleave: device rules on " .. D.name, function()
    it("results stay on the input's device; repeats from another device are refused", function()
        local x = T({ { 0, 1 }, { 2, 2 } }, "int64")
        assert.are.equal(D.name, tostring(x:nonzero().device))
        local v, i, k = x:unique({ return_inverse = true, return_counts = true })
        for _, t in ipairs({ v, i, k }) do
            assert.are.equal(D.name, tostring(t.device))
        end
        assert.are.equal(D.name, tostring(x:repeat_interleave({ 1, 2 }, 1).device))
        assert.are.equal(D.name, tostring(tide.repeat_interleave(L({ 1, 2 })).device))
        local other = tide.tensor({ 1, 2 }, { dtype = "int64", device = D.other })
        raises("expected all tensors on the same device",
            function() x:repeat_interleave(other, 1) end)
    end)
end)

describe("nonzero / unique / repeat_interleave: cuda against cpu #cuda", function()
    local function same(a, b)
        assert.are.same(vals(a:to("float64")), vals(b:cpu():to("float64")))
    end
    local HALF = { float16 = true, bfloat16 = true }
    for _, dt in ipairs({ "float32", "float64", "float16", "bfloat16", "int32", "int64", "uint8",
        "bool" }) do
        it(dt, function()
            if not tide.cuda.is_available() then
                pending("no CUDA device")
                return
            end
            tide.manual_seed(27)
            local cdt = HALF[dt] and "float32" or dt
            local ints = (tide.rand({ 7, 30 }) * 4):floor()
            local xc = dt == "bool" and ints:gt(1) or ints:to(cdt)
            local xg = xc:to("cuda"):to(dt):t():contiguous():t() -- strided on the GPU
            same(xc:nonzero(), xg:nonzero())
            local a, b, c = xc:unique({ return_inverse = true, return_counts = true })
            local a2, b2, c2 = xg:unique({ return_inverse = true, return_counts = true })
            same(a, a2)
            same(b, b2)
            same(c, c2)
            for d = 1, 2 do
                local u, ui, uc = xc:unique({ dim = d, return_inverse = true, return_counts = true })
                local u2, ui2, uc2 = xg:unique({ dim = d, return_inverse = true, return_counts = true })
                same(u, u2)
                same(ui, ui2)
                same(uc, uc2)
            end
            local reps = (tide.rand({ 30 }) * 3):floor():long()
            same(xc:repeat_interleave(reps, 2), xg:repeat_interleave(reps:to("cuda"), 2))
            same(xc:repeat_interleave(2), xg:repeat_interleave(2))
            same(tide.repeat_interleave(reps), tide.repeat_interleave(reps:to("cuda")))
        end)
    end
end)
