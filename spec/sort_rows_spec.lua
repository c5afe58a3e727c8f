-- sort_rows_spec.lua — the kernel rows sort, topk and kthvalue (include/tide_kernels.def): their
-- contract as tide.core._kernels gives it, the generic binding tide.core._internal.<name>(x, d,
-- inner, ...) on a dim that is not the last (0-based positions, PyTorch's stable order: NaN
-- largest, -0 equal to 0, ties in position order), the ALONG outputs' shapes (k, or 1, at the
-- dim), and the one dispatch's errors for a bad call. t:sort, t:topk, t:kthvalue and the
-- medians run these rows (spec/ordering_spec.lua, spec/selection_spec.lua).
local tide = require("tide")
local core = require("tide.core")
local K = core._internal

local ALL = { "float32", "float64", "float16", "bfloat16", "int32", "int64", "uint8", "bool" }
local nan = 0 / 0

-- PyTorch 1.13: x.sort(dim=1, stable=True), with descending=True, of these rows
local X = { { 3, nan, 1, 3, -1 / math.huge, 0 }, { 2, 2, nan, -1, 5, 2 } }
local ASC_I = { { 4, 5, 2, 0, 3, 1 }, { 3, 0, 1, 5, 4, 2 } }
local DESC_I = { { 1, 0, 3, 2, 4, 5 }, { 2, 4, 0, 1, 5, 3 } }

-- x [2, 6] as [2, 6, 1] seen along its dim 2 (d = 6, inner = 1) and again transposed to
-- [6, 2]: dim 1 of it, d = 12, inner = 2
local function both_layouts(rows)
    return tide.tensor(rows):view(2, 6, 1), tide.tensor(rows):t():contiguous()
end

local function same_nan(a, b)
    return a:isnan():equal(b:isnan()) and a:nan_to_num(99):equal(b:nan_to_num(99))
end

describe("the sort rows", function()
    it("are rows of x along a dim: values and int64 indices, d, inner and their own", function()
        local want = {
            sort = { params = { "d", "inner", "descending" }, shape = "rows", width = 1 },
            topk = { params = { "d", "inner", "k", "largest" }, shape = "along", width = 0 },
            kthvalue = { params = { "d", "inner", "k" }, shape = "along", width = 1 },
        }
        for name, w in pairs(want) do
            local r = core._kernels[name]
            assert.are.equal("rows", r.kind, name)
            assert.are.same({ "x" }, r.inputs, name)
            assert.are.same({ "values", "indices" }, r.outputs, name)
            assert.are.same({ w.shape, w.shape }, r.outputs_shape, name)
            assert.are.same({ w.width, w.width }, r.outputs_width, name)
            assert.are.same({ false, true }, r.outputs_index, name)
            assert.are.same(w.params, r.params, name)
            assert.are.same(ALL, r.dtypes, name)
        end
    end)

    it("sort: PyTorch's stable order and 0-based positions, ascending and descending", function()
        local x3, xt = both_layouts(X)
        for _, desc in ipairs({ false, true }) do
            local want_i = tide.tensor(desc and DESC_I or ASC_I, { dtype = "int64" })
            local v, i = K.sort(x3, 6, 1, desc)
            assert.are.same({ 2, 6, 1 }, v.shape)
            assert.are.equal("int64", i.dtype)
            assert.is_true(i:view(2, 6):equal(want_i))
            assert.is_true(same_nan(v:view(2, 6), tide.tensor(X):gather(2, want_i:add(1))))
            v, i = K.sort(xt, 12, 2, desc) -- along dim 1 of [6, 2]
            assert.is_true(i:t():equal(want_i))
            -- the method: the same order, 1-based
            local mv, mi = tide.tensor(X):sort(2, desc)
            assert.is_true(mi:equal(want_i:add(1)))
            assert.is_true(same_nan(mv, v:t()))
        end
    end)

    it("topk and kthvalue: k (or 1) at the dim, sort's first k and k-th", function()
        local _, xt = both_layouts(X)
        local sv, si = K.sort(xt, 12, 2, true)
        local v, i = K.topk(xt, 12, 2, 3, true)
        assert.are.same({ 3, 2 }, v.shape)
        assert.are.same({ 3, 2 }, i.shape)
        assert.is_true(i:equal(si:narrow(1, 1, 3)))
        assert.is_true(same_nan(v, sv:narrow(1, 1, 3)))
        -- the 2nd in sort's order (PyTorch's x.kthvalue(2, 1) takes position 5 of row 2, another
        -- of its three 2s), PyTorch's median and nanmedian: 0-based positions 5, 0; 1, 2; 2, 1
        for k, pos in pairs({ [2] = { 5, 0 }, [0] = { 1, 2 }, [-1] = { 2, 1 } }) do
            v, i = K.kthvalue(xt, 12, 2, k)
            assert.are.same({ 1, 2 }, v.shape)
            assert.are.same({ pos }, i:totable(), "k = " .. k)
        end
        v = K.kthvalue(xt, 12, 2, -1)
        assert.are.same({ { 1, 2 } }, v:totable())
        -- the innermost dim of len 1 with inner after it: [2, 1, 1, 3] along its dim 3
        v = K.topk(tide.ones(2, 1, 1, 3), 3, 3, 1, true)
        assert.are.same({ 2, 1, 1, 3 }, v.shape)
        assert.are.same({ 2, 0, 3 }, (K.topk(tide.ones(2, 5, 3), 15, 3, 0, false)).shape)
        -- a 0-d tensor is one element: PyTorch's tensor(5.).topk(0) is (tensor(5.), tensor(0))
        for k = 0, 1 do
            local zv, zi = tide.tensor(5):topk(k)
            assert.are.same({}, zv.shape)
            assert.are.same({ 5, 1 }, { zv:item(), zi:item() })
        end
    end)

    it("answers a bad call with the dispatch's tide: errors, before any kernel runs", function()
        local x = tide.zeros(2, 3, 4)
        local function err(f, ...)
            local ok, e = pcall(f, ...)
            assert.is_false(ok)
            return e
        end
        assert.matches("tide: topk: k = 5 must be at most d / inner = 3",
            err(K.topk, x, 12, 4, 5, true), 1, true)
        assert.matches("tide: kthvalue: inner = 5 does not divide d = 12",
            err(K.kthvalue, x, 12, 5, 1), 1, true)
        assert.matches("tide: topk: x of shape [2, 3, 4] has no dim of d / inner = 4 elements " ..
            "with inner = 3 after it", err(K.topk, x, 12, 3, 1, true), 1, true)
        assert.matches("tide: kthvalue: k = -2 must be >= -1", err(K.kthvalue, x, 4, 1, -2), 1,
            true)
        assert.matches("tide: sort: descending = 2 must be in 0..1", err(K.sort, x, 4, 1, 2), 1,
            true)
        assert.matches("tide: sort: inner 3 does not divide the row's 4", err(K.sort, x, 4, 3, 0),
            1, true)
        -- the methods keep their own words, with the dim the caller named
        assert.matches("tide: topk: k = 5 is out of range for dim 2 of size 3; use 0..3",
            err(x.topk, x, 5, 2), 1, true)
    end)

    it("takes every dtype, float16 and bfloat16 through float32 on the CPU", function()
        local base = tide.tensor({ { 3, 0, 1, 2 }, { 1, 1, 0, 3 } })
        for _, dt in ipairs(ALL) do
            local x = base:to(dt)
            local v, i = K.sort(x, 4, 1, false)
            assert.are.equal(dt, v.dtype)
            local want = dt == "bool" and { { 1, 0, 2, 3 }, { 2, 0, 1, 3 } } or
                { { 1, 2, 3, 0 }, { 2, 0, 1, 3 } }
            assert.are.same(want, i:totable(), dt)
            local tv, ti = K.topk(x, 4, 1, 2, true)
            assert.is_true(ti:equal(select(2, K.sort(x, 4, 1, true)):narrow(2, 1, 2)), dt)
            assert.is_true(tv:equal(x:gather(2, ti:add(1))), dt)
        end
    end)
end)

-- CUDA has the sort row (a stable merge sort per line) but no topk or kthvalue: the generic
-- binding answers nil for those, and the methods take sort's answer there
describe("the sort rows on cuda #cuda", function()
    it("sort: the CPU's order along a middle dim; topk and kthvalue by sort", function()
        if not tide.cuda.is_available() then
            pending("no CUDA device")
            return
        end
        local _, xt = both_layouts(X)
        for _, desc in ipairs({ false, true }) do
            local v, i = K.sort(xt, 12, 2, desc)
            local gv, gi = K.sort(xt:to("cuda"), 12, 2, desc)
            assert.are.equal("cuda:0", tostring(gi.device))
            assert.is_true(gi:cpu():equal(i))
            assert.is_true(same_nan(gv:cpu(), v))
        end
        assert.is_nil(K.topk(xt:to("cuda"), 12, 2, 3, true))
        assert.is_nil(K.kthvalue(xt:to("cuda"), 12, 2, 2))
        local tv, ti = xt:to("cuda"):topk(3, 1)
        assert.is_true(ti:cpu():equal((select(2, xt:topk(3, 1)))))
        assert.is_true(same_nan(tv:cpu(), (xt:topk(3, 1))))
        local mv, mi = xt:to("cuda"):median(1)
        assert.is_true(mi:cpu():equal((select(2, xt:median(1)))))
        assert.is_true(same_nan(mv:cpu(), (xt:median(1))))
    end)
end)
