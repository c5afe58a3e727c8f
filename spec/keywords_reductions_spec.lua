-- keywords_reductions_spec.lua — PyTorch's keyword arguments on the reductions, scans, order
-- statistics and sorts (lua/tide/tensor_keywords/reductions.lua), and the forms they needed:
-- sum / mean over a list of dims, dtype =, std / var's (dim, unbiased, keepdim), sort's stable,
-- norm over a list of dims; values checked against PyTorch 1.13's (indices 1-based here).
local tide = require("tide")

local function catch(f)
    local ok, err = pcall(f)
    assert.is_false(ok, "expected an error")
    return tostring(err)
end

-- a tensor's values (or a number) within 1e-9 of want, a nested list
local function near(want, got, what)
    if type(got) ~= "table" or tide.is_tensor(got) then
        got = tide.is_tensor(got) and got:cpu():to("float64"):totable() or got
    end
    local function walk(w, g, path)
        if type(w) == "table" then
            assert(type(g) == "table", (what or "") .. path .. ": expected a list")
            assert.are.equal(#w, #g, (what or "") .. path .. ": length")
            for i = 1, #w do
                walk(w[i], g[i], path .. "[" .. i .. "]")
            end
        else
            assert(math.abs(w - g) < 1e-9, ("%s%s: want %.12g, got %.12g"):format(what or "",
                path, w, g))
        end
    end
    walk(want, got, "")
end

-- the positional and the keyword call give the same results (each result compared)
local function same(a, b)
    local ra, rb = { a() }, { b() }
    assert.are.equal(#ra, #rb)
    for i = 1, #ra do
        assert.are.equal(ra[i].dtype, rb[i].dtype)
        assert.are.same(ra[i]:size(), rb[i]:size())
        assert.are.same(ra[i]:totable(), rb[i]:totable())
    end
end

local function X() -- PyTorch's x below: [[1, 5, 3], [4, 2, 6]]
    return tide.tensor({ { 1, 5, 3 }, { 4, 2, 6 } }, { dtype = "float64" })
end

local function Y() -- 3 x 2 x 2
    return tide.tensor({ { { 1, 2 }, { 3, 5 } }, { { 0, 4 }, { 7, 1 } }, { { 2, 2 }, { 6, 3 } } },
        { dtype = "float64" })
end

describe("PyTorch's keyword arguments on the reductions", function()
    it("sum and mean over a list of dims (PyTorch's tuple), keepdim, values and gradients", function()
        local y = Y()
        near({ 11, 12, 13 }, y:sum({ 2, 3 }))
        near({ 2.75, 3, 3.25 }, y:mean({ 2, 3 }))
        near({ { { 11 / 6 }, { 25 / 6 } } }, y:mean({ 1, 3 }, true))
        assert.are.same({ 1, 2, 1 }, y:mean({ 1, 3 }, true):size())
        near({ 11, 25 }, y:sum({ 1, -1 }))
        near({ 11, 25 }, tide.sum(y, { dim = { -1, 1 } }))
        same(function() return y:mean({ 2, 3 }, true) end,
            function() return y:mean({ dim = { 2, 3 }, keepdim = true }) end)
        same(function() return tide.mean(y, { 2, 3 }) end, function() return y:mean({ 2, 3 }) end)
        near(36, y:sum({})) -- {}: every dim
        -- the gradient of a global average pool: 1/4 to each of the 4 elements pooled
        local w = Y():requires_grad_()
        local r = w:mean({ 2, 3 }) * tide.tensor({ 1, 2, 3 }, { dtype = "float64" })
        r:sum():backward()
        near({ { { 0.25, 0.25 }, { 0.25, 0.25 } }, { { 0.5, 0.5 }, { 0.5, 0.5 } },
            { { 0.75, 0.75 }, { 0.75, 0.75 } } }, w.grad)
        -- nansum / nanmean take lists already, and skip NaNs
        local n = tide.tensor({ { 1, 0 / 0 }, { 3, 4 } }, { dtype = "float64" })
        near(8, n:nansum({ dim = { 1, 2 } }))
        near({ 1, 3.5 }, n:nanmean({ dim = 2 }))
        assert.matches("tide: sum: dim 2 appears twice", catch(function() return y:sum({ 2, -2 }) end))
    end)

    it("dtype = on sum, mean, prod, nansum, nanmean, cumsum, cumprod, softmax, norm", function()
        local x = X()
        local i = tide.tensor({ { 1, 2 }, { 3, 4 } }, { dtype = "int32" })
        assert.are.equal("float64", i:sum({ dtype = "float64" }).dtype)
        near(10, i:sum({ dtype = "float64" }))
        near({ 3, 7 }, i:sum(2, { dtype = "float64" }))
        near({ 1.5, 3.5 }, i:mean({ dim = 2, dtype = "float64" }))
        near({ 2, 12 }, i:prod({ dim = 2, dtype = "float64" }))
        assert.are.equal("float64", i:prod(2, false, { dtype = "float64" }).dtype)
        near({ 4, 6 }, i:nansum(1, { dtype = "float64" }))
        local c = x:to("float32"):cumsum({ dim = 2, dtype = "float64" })
        assert.are.equal("float64", c.dtype)
        near({ { 1, 6, 9 }, { 4, 6, 12 } }, c)
        near({ { 1, 5, 15 }, { 4, 8, 48 } }, x:cumprod({ dim = 2 }))
        local s = x:to("float32"):softmax(1, "float64")
        assert.are.equal("float64", s.dtype)
        near({ { 0.04742587317756679, 0.9525741268224334, 0.04742587317756679 },
            { 0.9525741268224334, 0.04742587317756679, 0.9525741268224334 } }, s)
        same(function() return x:to("float32"):softmax(1, "float64") end,
            function() return x:to("float32"):softmax({ dim = 1, dtype = "float64" }) end)
        assert.are.equal("float64", x:to("float32"):norm({ dim = 2, dtype = "float64" }).dtype)
        -- the in-place scans write back, dtype and all
        local z = X()
        z:cumsum_({ dim = 2 })
        near({ { 1, 6, 9 }, { 4, 6, 12 } }, z)
        -- prod reduces one dim, as PyTorch's
        assert.matches("tide: prod: dim must be one integer, got a list",
            catch(function() return x:prod({ 1, 2 }) end))
        assert.matches('tide: sum: unknown option "dtyp" %(did you mean "dtype"%?%)',
            catch(function() return x:sum({ dim = 1, dtyp = "float64" }) end))
        assert.matches("tide: sum: expected at most 3 arguments, got 4",
            catch(function() return x:sum(1, true, 4) end))
    end)

    it("max, min, amax, amin, aminmax, argmax, argmin, logsumexp, count_nonzero by name", function()
        local x = X()
        local v, i = x:max({ dim = 1 })
        near({ 4, 5, 6 }, v)
        assert.are.same({ 2, 1, 2 }, i:totable())
        same(function() return x:min(2, true) end, function() return tide.min(x, { dim = 2, keepdim = true }) end)
        near({ 4, 5, 6 }, x:amax({ dim = 1 }))
        near({ { 6 } }, x:amax({ dim = { 1, 2 }, keepdim = true }))
        same(function() return x:amin(2) end, function() return tide.amin(x, { dim = 2 }) end)
        local lo, hi = x:aminmax({ dim = 2 })
        near({ 1, 2 }, lo)
        near({ 5, 6 }, hi)
        assert.are.same({ 2, 3 }, x:argmax({ dim = 2 }):totable())
        same(function() return x:argmin(1, true) end, function() return x:argmin({ keepdim = true, dim = 1 }) end)
        near({ 5.1429316284999, 6.142931628499899 }, x:logsumexp({ dim = 2 }))
        near({ 5.185182452603812, 7.051811977232924, 6.08288636477961 },
            tide.logsumexp(Y(), { dim = { 2, 3 } }))
        near(6, x:count_nonzero({ dim = { 1, 2 } }))
        near({ 3, 3 }, tide.count_nonzero(x, { dim = 2 }))
    end)

    it("max(a, b) and min(a, b) with a tensor b are maximum and minimum, as PyTorch's", function()
        local a = tide.tensor({ 1, 5, 3 }, { requires_grad = true, dtype = "float64" })
        local b = tide.tensor({ { 2, 2, 2 }, { 6, 0, 3 } }, { dtype = "float64" })
        local m = tide.max(a, b) -- broadcast, as torch.max(a, b)
        near({ { 2, 5, 3 }, { 6, 5, 3 } }, m)
        near({ { 1, 2, 2 }, { 1, 0, 3 } }, a:min(b))
        assert.are.equal("MaximumBackward0", tostring(m.grad_fn))
        m:sum():backward()
        near({ 0, 2, 1.5 }, a.grad) -- a tie (3, 3) splits the gradient, as PyTorch's maximum
        local e = catch(function() return tide.max(a, b, true) end)
        assert.truthy(e:find("tide: maximum: takes one other operand", 1, true))
        near(5, tide.max(a)) -- the other forms unchanged
    end)

    it("std and var: dim, correction, unbiased, keepdim by name, and PyTorch's positional forms", function()
        local x = X()
        near({ 1.632993161855452, 1.632993161855452 }, x:std({ dim = 2, correction = 0 }))
        near({ { 2 }, { 2 } }, x:std(2, { keepdim = true }))
        near({ 8 / 3, 8 / 3 }, x:var({ dim = 2, unbiased = false }))
        near(3.5, x:var({ dim = { 1, 2 } }))
        same(function() return x:var(2, nil, true, { correction = 0 }) end,
            function() return x:var({ dim = 2, keepdim = true, correction = 0 }) end)
        -- PyTorch's x.std(0, False, True) (dim, unbiased, keepdim) and x.std(False) (unbiased)
        near({ { 1.5, 1.5, 1.5 } }, x:std(1, false, true))
        near(1.707825127659933, x:std(false))
        near(1.707825127659933, tide.std(x, { unbiased = false }))
        -- PyTorch's order: position 3 is unbiased, not keepdim
        near({ 2, 2 }, x:std(2, true))
        near({ { 1.632993161855452 }, { 1.632993161855452 } }, x:std(2, false, true))
        assert.matches("tide: std: unbiased given twice, as argument #3 and by name",
            catch(function() return x:std(2, false, { unbiased = false }) end))
        -- the gradient through the keyword form
        local w = X():requires_grad_()
        w:std({ dim = 2, correction = 0 }):sum():backward()
        near({ { -0.40824829046386296, 0.40824829046386296, 0 },
            { 0, -0.40824829046386296, 0.40824829046386296 } }, w.grad)
        assert.matches("tide: var: unbiased and correction given together",
            catch(function() return x:var({ dim = 1, unbiased = false, correction = 0 }) end))
        assert.matches("tide: std: unbiased must be a boolean, got number",
            catch(function() return x:std({ unbiased = 0 }) end))
        -- (axis and keepdims: PyTorch's NumPy names of dim and keepdim)
        assert.matches('tide: std: unknown option "ddof"; options are dim, unbiased, keepdim, ' ..
            "correction, axis, keepdims", catch(function() return x:std({ ddof = 0 }) end))
    end)

    it("std_mean and var_mean alike", function()
        local x = X()
        local s, m = tide.std_mean(x, { dim = 2 })
        near({ 2, 2 }, s)
        near({ 3, 4 }, m)
        local v, m2 = x:var_mean(1, false, true) -- PyTorch's (dim, unbiased, keepdim)
        near({ { 2.25, 2.25, 2.25 } }, v)
        near({ { 2.5, 3.5, 4.5 } }, m2)
        same(function() return x:var_mean(1, { keepdim = true, unbiased = false }) end,
            function() return tide.var_mean(x, { dim = 1, unbiased = false, keepdim = true }) end)
        local s2 = x:std_mean(false)
        near(1.707825127659933, s2)
        assert.matches("tide: std_mean: unbiased given twice, as argument #3 and by name",
            catch(function() return x:std_mean(1, true, { unbiased = true }) end))
        assert.matches("tide: std_mean: keepdim given twice, as argument #4 and by name",
            catch(function() return x:std_mean(1, true, false, { keepdim = true }) end))
    end)

    it("norm: p, dim (one or a list), keepdim by name, and its gradient over a list", function()
        local x = X()
        near({ { 5.916079783099616 }, { 7.483314773547883 } }, x:norm({ p = 2, dim = 2, keepdim = true }))
        same(function() return x:norm(2, 2, true) end, function() return x:norm(2, { dim = 2, keepdim = true }) end)
        near(21, x:norm({ p = 1, dim = { 1, 2 } }))
        near(9.539392014169456, x:norm({ dim = { 1, 2 } }))
        near(9.539392014169456, tide.norm(x, "fro", { 1, 2 }))
        near({ 5, 6 }, x:norm(math.huge, { dim = 2 }))
        local w = X():requires_grad_()
        w:norm({ dim = { 1, 2 } }):backward()
        near({ { 0.10482848367219183, 0.5241424183609592, 0.3144854510165755 },
            { 0.4193139346887673, 0.20965696734438366, 0.628970902033151 } }, w.grad)
        assert.matches("tide: norm: p given twice, as argument #2 and by name",
            catch(function() return x:norm(2, { p = 1 }) end))
    end)

    it("all, any, median, nanmedian, mode, kthvalue, quantile by name", function()
        local x = X()
        assert.are.same({ true, true, true }, x:all({ dim = 1 }):totable())
        assert.are.same({ { true }, { true } }, tide.any(x, { dim = 2, keepdim = true }):totable())
        local v, i = x:median({ dim = 2 })
        near({ 3, 4 }, v)
        assert.are.same({ 3, 1 }, i:totable())
        same(function() return x:nanmedian(2, true) end, function() return x:nanmedian({ dim = 2, keepdim = true }) end)
        v, i = x:mode({ dim = 1 })
        near({ 1, 2, 3 }, v)
        assert.are.same({ 1, 2, 1 }, i:totable())
        v, i = x:kthvalue(2, { dim = 2 })
        near({ 3, 4 }, v)
        assert.are.same({ 3, 1 }, i:totable())
        same(function() return x:kthvalue(2, 2) end, function() return tide.kthvalue(x, { k = 2, dim = 2 }) end)
        near({ { 3 }, { 4 } }, x:quantile(0.5, { dim = 2, keepdim = true, interpolation = "lower" }))
        near({ 2, 3 }, x:quantile({ q = 0.25, dim = 2 }))
        same(function() return x:nanquantile(0.5, 2) end, function() return x:nanquantile(0.5, { dim = 2 }) end)
        assert.matches('tide: quantile: unknown option "interp"',
            catch(function() return x:quantile(0.5, { interp = "lower" }) end))
    end)

    it("the scans cumsum, cumprod, cummax, cummin, logcumsumexp by name", function()
        local x = X()
        same(function() return x:cumsum(2) end, function() return tide.cumsum(x, { dim = 2 }) end)
        local v, i = x:cummax({ dim = 2 })
        near({ { 1, 5, 5 }, { 4, 4, 6 } }, v)
        assert.are.same({ { 1, 2, 2 }, { 1, 1, 3 } }, i:totable())
        v, i = tide.cummin(x, { dim = 2 })
        near({ { 1, 1, 1 }, { 4, 2, 2 } }, v)
        assert.are.same({ { 1, 1, 1 }, { 1, 2, 2 } }, i:totable())
        near({ { 1, 5.0181499279178094, 5.142931628499899 }, { 4, 4.126928011042972, 6.142931628499899 } },
            x:logcumsumexp({ dim = 2 }))
        assert.matches("tide: cumsum: dim given twice, as argument #2 and by name",
            catch(function() return x:cumsum(2, { dim = 2 }) end))
    end)

    it("softmax and log_softmax by name", function()
        local x = X()
        near({ { -4.1429316284999, -0.14293162849989968, -2.1429316284998996 },
            { -2.1429316284998996, -4.142931628499899, -0.1429316284998995 } }, x:log_softmax({ dim = 2 }))
        same(function() return x:softmax(1) end, function() return tide.softmax(x, { dim = 1 }) end)
        -- x.softmax(axis=0): PyTorch takes NumPy's name axis for dim
        same(function() return x:softmax({ axis = 1 }) end, function() return x:softmax(1) end)
        assert.matches('tide: softmax: unknown option "axes" %(did you mean "axis"%?%)',
            catch(function() return x:softmax({ axes = 1 }) end))
    end)

    it("topk, sort, argsort, msort by name, stable included", function()
        local x = X()
        local v, i = x:topk({ k = 2, dim = 2 })
        near({ { 5, 3 }, { 6, 4 } }, v)
        assert.are.same({ { 2, 3 }, { 3, 1 } }, i:totable())
        v, i = x:topk(2, { dim = 2, largest = false, sorted = true })
        near({ { 1, 3 }, { 2, 4 } }, v)
        assert.are.same({ { 1, 3 }, { 2, 1 } }, i:totable())
        same(function() return tide.topk(x, 2, 2, false) end, function() return tide.topk(x, 2, { dim = 2, largest = false }) end)
        v, i = x:sort({ dim = 2, descending = true, stable = true })
        near({ { 5, 3, 1 }, { 6, 4, 2 } }, v)
        assert.are.same({ { 2, 3, 1 }, { 3, 1, 2 } }, i:totable())
        same(function() return x:sort(2, true, true) end, function() return x:sort(2, true) end)
        assert.are.same({ { 2, 1, 2 }, { 1, 2, 1 } }, x:argsort({ dim = 1, descending = true }):totable())
        same(function() return tide.argsort(x, 1, true, true) end,
            function() return tide.argsort(x, { dim = 1, descending = true, stable = true }) end)
        -- stable: equal values keep their order
        local t = tide.tensor({ 2, 1, 2, 1 }, { dtype = "float64" })
        assert.are.same({ 2, 4, 1, 3 }, t:argsort({ stable = true }):totable())
        assert.are.same({ 1, 3, 2, 4 }, t:argsort({ descending = true, stable = true }):totable())
        same(function() return x:msort() end, function() return tide.msort(x) end)
        assert.matches("tide: sort: stable must be a boolean, got string",
            catch(function() return x:sort({ stable = "yes" }) end))
        assert.matches('tide: topk: unknown option "largets" %(did you mean "largest"%?%)',
            catch(function() return x:topk(1, { largets = false }) end))
        assert.matches("tide: topk: k given twice, as argument #2 and by name",
            catch(function() return x:topk(1, { k = 1 }) end))
        assert.matches('tide: msort: unknown option "dim"',
            catch(function() return x:msort({ dim = 1 }) end))
    end)

    it("run on a second device, the results staying there", function()
        local x = X():to("cpu:1")
        local r = x:sum({ 1, 2 }, true)
        assert.are.equal("cpu:1", tostring(r.device))
        near({ { 21 } }, r)
        assert.are.equal("cpu:1", tostring(x:std({ dim = 2, correction = 0 }).device))
        assert.are.equal("cpu:1", tostring(x:norm({ dim = { 1, 2 } }).device))
    end)
end)
