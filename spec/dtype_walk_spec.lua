-- dtype_walk_spec.lua — issue 13's "every dtype PyTorch accepts" for the tensor ops of the
-- wider surface outside the op table (spec/opinfo_spec.lua walks the table's): each op runs on
-- every dtype tide has on the CPU, on the device under test (spec/support/device.lua), and
-- wherever PyTorch 1.13 accepts the dtype (spec/fixtures/dtype_walk_torch.lua, written by
-- spec/fixtures/make_dtype_walk.py) tide must too, with PyTorch's result dtype, shape and
-- values. Where PyTorch refuses, tide may extend it, or refuse with a `tide:` error.
local tide = require("tide")
local D = require("spec.support.device")
local TORCH = dofile("spec/fixtures/dtype_walk_torch.lua")

local DTYPES = { "float32", "float64", "int32", "int64", "uint8", "bool" }
local X_VALUES = { 3, 1, 0, 2, 5, 4, 1, 0, 2, 6, 3, 1 }
local SRC_VALUES = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 }
local MASK = { true, false, false, true, false, true, true, false, false, false, true, false }
local IDX = { { 1, 4 }, { 2, 2 }, { 3, 1 } } -- make_dtype_walk.py's IDX, 1-based
local IDX_UNIQUE = { { 1, 4 }, { 2, 3 }, { 3, 1 } } -- and its IDX_UNIQUE

local function make(values, dt)
    local t = tide.tensor(values, { dtype = "float64", device = D.name }):reshape(3, 4)
    if dt == "bool" then
        return t:ne(0)
    end
    return t:to(dt)
end

-- the tide call of each case of the fixture (the torch call is beside it in the generator)
local function cases(dt)
    local x, src = make(X_VALUES, dt), make(SRC_VALUES, dt)
    local idx = tide.tensor(IDX, { dtype = "int64", device = D.name })
    local mask = tide.tensor(MASK, { device = D.name }):reshape(3, 4)
    local fill = dt == "bool" and true or 7
    return {
        gather = function() return x:gather(2, idx) end,
        scatter = function()
            local unique = tide.tensor(IDX_UNIQUE, { dtype = "int64", device = D.name })
            return x:scatter(2, unique, src:narrow(2, 1, 2))
        end,
        scatter_add = function() return x:scatter_add(2, idx, src:narrow(2, 1, 2)) end,
        index_add_ = function()
            return x:clone():index_add_(1, tide.tensor({ 3, 1 }, { device = D.name }),
                src:narrow(1, 1, 2))
        end,
        masked_fill = function() return x:masked_fill(mask, fill) end,
        masked_select = function() return x:masked_select(mask) end,
        topk = function() return { x:topk(2, 2) } end,
        sort = function() return { x:sort(2) } end,
        sort_descending = function() return { x:sort(2, true) } end,
        argsort = function() return x:argsort(2) end,
        argmin = function() return x:argmin(2) end,
        argmax = function() return x:argmax(2) end,
        cumsum = function() return x:cumsum(2) end,
        cumprod = function() return x:cumprod(2) end,
        std = function() return x:std(2) end,
        var = function() return x:var(2) end,
        logsumexp = function() return x:logsumexp(2) end,
        norm = function() return x:norm() end,
        any = function() return x:any(2) end,
        all = function() return x:all(2) end,
        prod = function() return x:prod(2) end,
        chunk = function() return x:chunk(2, 2) end,
        split = function() return x:split(3, 2) end,
        unbind = function() return x:unbind(1) end,
        tile = function() return x:tile(2, 1) end,
        flatten = function() return x:flatten() end,
        unflatten = function() return x:unflatten(2, { 2, 2 }) end,
        unsqueeze = function() return x:unsqueeze(1) end,
        squeeze = function() return x:unsqueeze(1):squeeze() end,
        flip = function() return x:flip(2) end,
        roll = function() return x:roll(1, 2) end,
        tril = function() return x:tril() end,
        triu = function() return x:triu(1) end,
        equal = function() return x:equal(x:clone()) end,
        allclose = function() return x:allclose(x:clone()) end,
        where = function() return tide.where(mask, x, src) end,
        zeros_like = function() return tide.zeros_like(x) end,
        ones_like = function() return tide.ones_like(x) end,
        full_like = function() return tide.full_like(x, fill) end,
    }, x
end

local function values_of(t)
    return t:to("cpu"):contiguous():reshape(-1):totable()
end

local function close(a, b, dt)
    if type(a) ~= "number" or type(b) ~= "number" then
        return a == b
    end
    if a ~= a or b ~= b then
        return a ~= a and b ~= b
    end
    local tol = dt == "float32" and 1e-6 or (dt == "float64" and 1e-12 or 0)
    return math.abs(a - b) <= tol * math.max(1, math.abs(b))
end

local function check_tensor(got, want, what)
    assert(tide.is_tensor(got), what .. ": expected a tensor, got " .. type(got))
    assert.are.equal(want.dtype, got.dtype, what .. ": dtype")
    local shape = {}
    for i = 1, got:dim() do
        shape[i] = got.shape[i]
    end
    assert.are.same(want.shape, shape, what .. ": shape")
    assert.are.equal(D.name, tostring(got.device), what .. ": stays on the inputs' device")
    local v = values_of(got)
    for i = 1, #want.values do
        assert(close(v[i], want.values[i], want.dtype), string.format(
            "%s: element %d is %s, PyTorch's %s", what, i, tostring(v[i]),
            tostring(want.values[i])))
    end
end

-- ties among bool values leave sort's and topk's indices to the algorithm: there the indices
-- must select the values PyTorch's did, not be PyTorch's
local function check_indices_select(x, results, want, what)
    local picked = x:gather(2, results[2])
    check_tensor(picked, want[1], what .. " (x gathered at the indices)")
end

describe("every dtype PyTorch accepts, on " .. D.name, function()
    local names = {}
    for name in pairs(TORCH) do
        names[#names + 1] = name
    end
    table.sort(names)

    it("has a tide call for every case of the fixture and no other", function()
        local calls = cases("float32")
        for _, name in ipairs(names) do
            assert(calls[name], "no tide call for the fixture's case " .. name)
        end
        for name in pairs(calls) do
            assert(TORCH[name], "case " .. name .. " has no fixture: run make_dtype_walk.py")
        end
    end)

    for _, name in ipairs(names) do
        for _, dt in ipairs(DTYPES) do
            local want = TORCH[name][dt]
            if want.refused then
                it(name .. " on " .. dt .. " (PyTorch refuses): extends it or refuses", function()
                    local calls = cases(dt)
                    local ok, err = pcall(calls[name])
                    if not ok then
                        assert.is_truthy(tostring(err):find("tide: ", 1, true), tostring(err))
                    end
                end)
            else
                it(name .. " on " .. dt .. " gives PyTorch's result", function()
                    local calls, x = cases(dt)
                    local ok, r = pcall(calls[name])
                    assert(ok, name .. " on " .. dt .. " raised: " .. tostring(r))
                    local what = name .. " on " .. dt
                    if type(r) == "boolean" then
                        assert.are.equal(want[1].values[1], r, what)
                    elseif name == "argsort" and dt == "bool" then
                        check_tensor(x:gather(2, r), TORCH.sort.bool[1], what
                            .. " (x gathered at the indices, ties in any order)")
                    elseif tide.is_tensor(r) then
                        assert.are.equal(1, #want, what .. ": one result")
                        check_tensor(r, want[1], what)
                    else
                        assert.are.equal(#want, #r, what .. ": number of results")
                        local ties = dt == "bool" and (name == "sort" or name == "topk"
                            or name == "sort_descending")
                        for i = 1, #want do
                            if ties and i == 2 then
                                check_indices_select(x, r, want, what)
                            else
                                check_tensor(r[i], want[i], what .. " result " .. i)
                            end
                        end
                    end
                end)
            end
        end
    end
end)
