-- porting_more_spec.lua — the third round of PyTorch's names for ported scripts, against PyTorch
-- 1.13's values and gradients (spec/fixtures/porting_more_torch.lua, written by
-- spec/fixtures/make_porting_more.py): the scatters into a copy, logaddexp2 and ldexp, the
-- in-place twins (written into a clone, as into an intermediate result), the numpy names of the
-- trigonometric functions; then the random fills (by their statistics: tide's generator is not
-- PyTorch's) and the small queries.
local tide = require("tide")
local D = require("spec.support.device")
local P = require("spec.support.porting")

local T = dofile("spec/fixtures/porting_more_torch.lua")
local DEV = D.name

local function on(v, dtype)
    return tide.tensor(v, { dtype = dtype or "float64", device = DEV })
end

local function check_case(name, fn, ...)
    P.check_case(T.cases[name], name, DEV, {}, fn, ...)
end

local X, Y, ROW, COLS2, DIAG = T.X, T.Y, T.ROW, T.COLS2, T.DIAG
local POS, UNIT, OVER, EXP2, A3, B32 = T.POS, T.UNIT, T.OVER, T.EXP2, T.A3, T.B32
local L = tide.linalg

-- a a^T + 3 I, as the fixture's spd()
local function spd(a)
    return a:matmul(a:transpose(-2, -1)) + tide.eye(a:size(1), { dtype = a.dtype,
        device = a.device }) * 3
end

describe("scatters into a copy, base 2, in-place twins, numpy names: PyTorch's values (" ..
    DEV .. ")", function()
    local function exps()
        return on(EXP2, "int64")
    end
    P.run_cases(it, T, {
        select_scatter = { function(x, s) return x:select_scatter(s, 1, 2) end, X, ROW },
        select_scatter_col = { function(x, s) return tide.select_scatter(x, s, 2, 4) end, X,
            DIAG },
        slice_scatter_step = { function(x, s)
            return x:slice_scatter(s, { dim = 2, start = 1, step = 2 })
        end, X, COLS2 },
        slice_scatter_range = { function(x, s)
            return tide.slice_scatter(x, s, { dim = 2, start = 2, ["end"] = 3 })
        end, X, COLS2 },
        slice_scatter_rows = { function(x, s) return x:slice_scatter(s, { start = 2 }) end, X,
            { ROW, ROW } },
        diagonal_scatter = { function(x, s) return x:diagonal_scatter(s) end, X, DIAG },
        diagonal_scatter_offset = { function(x, s) return x:diagonal_scatter(s, 1) end, X, DIAG },
        diagonal_scatter_below = { function(x, s)
            return tide.diagonal_scatter(x, s, -1, 1, 2)
        end, X, { DIAG[1], DIAG[2] } },
        logaddexp2 = { function(a, b) return tide.logaddexp2(a, b) end, X, Y },
        ldexp = { function(a) return a:ldexp(exps()) end, { 1.5, -0.25, 3.0, 0.125 } },
        ldexp_ = { function(a) return a:clone():ldexp_(exps()) end, { 1.5, -0.25, 3.0, 0.125 } },
        xlogy_ = { function(a, b) return a:clone():xlogy_(b) end, X, POS },
        tril_ = { function(a) return a:clone():tril_(1) end, X },
        triu_ = { function(a) return a:clone():triu_(-1) end, X },
        cumsum_ = { function(a) return a:clone():cumsum_(2) end, X },
        cumprod_ = { function(a) return a:clone():cumprod_(1) end, X },
        gt_ = { function(a, b) return a:clone():gt_(b) end, X, Y },
        le_ = { function(a) return a:clone():le_(0.25) end, X },
        logical_and_ = { function(a, b) return a:clone():logical_and_(b) end, X, Y },
        logical_not_ = { function(a) return a:clone():logical_not_() end, X },
        arcsin = { function(a) return a:arcsin() end, UNIT },
        arccos = { function(a) return tide.arccos(a) end, UNIT },
        arctan = { function(a) return a:arctan() end, X },
        arcsinh = { function(a) return a:arcsinh() end, X },
        arccosh = { function(a) return a:arccosh() end, OVER },
        arctanh = { function(a) return a:arctanh() end, UNIT },
        sinh = { function(a) return tide.sinh(a) end, X },
        cosh = { function(a) return a:cosh() end, X },
        arctan2 = { function(a, b) return a:arctan2(b) end, X, Y },
        svd_method = { function(a)
            local u, s, v = a:svd()
            return tide.cat({ s, (u * u):reshape(-1), (v * v):reshape(-1) })
        end, X },
        cholesky_solve = { function(b, a) return b:cholesky_solve(L.cholesky(spd(a))) end, B32,
            A3 },
        cholesky_solve_upper = { function(b, a)
            return tide.cholesky_solve(b, L.cholesky(spd(a)):transpose(-2, -1), true)
        end, B32, A3 },
        cholesky_inverse = { function(a) return L.cholesky(spd(a)):cholesky_inverse() end, A3 },
        unfold = { function(a) return a:unfold(2, 2, 1) end, X },
        unfold_step = { function(a) return a:reshape(-1):unfold(1, 3, 4) end, X },
        unfold_rows = { function(a) return a:unfold(1, 2, 1) * 1.5 end, X },
        unfold_inplace = { function(a)
            local h = a * 1
            h:unfold(2, 2, 2):select(-1, 1):mul_(10)
            return h
        end, X },
    }, check_case)

    it("the aliases are the same functions, in-place twins too", function()
        local Tensor = tide.Tensor
        for alias, name in pairs({ arcsin = "asin", absolute = "abs" }) do
            assert.are.equal(Tensor[name], Tensor[alias], alias)
        end
        -- those with PyTorch's keyword names (tide.tensor_keywords) have a trampoline per name
        -- over the one function: the same results, positional and by name
        local a, b = tide.tensor({ 1.5, -2, 3 }), tide.tensor({ 2, -2, 0.5 })
        for alias, name in pairs({ multiply = "mul", greater_equal = "ge", not_equal = "ne",
            subtract = "sub" }) do
            assert.are.same(a[name](a, b):totable(), a[alias](a, b):totable(), alias)
            assert.are.same(a[name](a, b):totable(), a[alias](a, { other = b }):totable(), alias)
        end
        assert.are.same(a:clone():mul_(b):totable(), a:clone():multiply_(b):totable())
        assert.are.same(tide.mul(a, b):totable(), tide.multiply(a, { other = b }):totable())
    end)

    it("errors name the op and the fix", function()
        local x = on(X)
        assert.has_error(function() x:select_scatter(on({ 1, 2 }), 1, 2) end,
            "tide: select_scatter: src has shape {2}, the region {4}; give src the region's shape")
        assert.has_error(function() x:slice_scatter(on(COLS2), { dim = 2, step = 0 }) end,
            "tide: slice_scatter: step must be >= 1, got 0")
        assert.has_error(function() x:slice_scatter(on(COLS2), { dim = 2, stop = 3 }) end,
            'tide: slice_scatter: unknown option "stop" (did you mean "step"?)')
        assert.has_error(function() x:slice_scatter(on(COLS2)) end,
            "tide: slice_scatter: src has shape {3, 2}, the slice {3, 4}; give src the slice's shape")
        assert.has_error(function() x:unfold(2, 5, 1) end,
            "tide: unfold: size 5 does not fit dim 2 of size 4; use 0 to 4")
        assert.has_error(function() x:unfold(2, 2, 0) end, "tide: unfold: step must be >= 1, got 0")
        assert.has_error(function() x:is_nonzero() end,
            "tide: is_nonzero: needs a tensor of one element, got 12; use any() or all()")
        assert.has_error(function() tide.logaddexp2(on({ 1 }, "int64"), on({ 2 }, "int64")) end,
            'tide: logaddexp2: needs a floating-point tensor, got int64; convert with ' ..
            ':to("float32")')
    end)
end)

describe("random fills: their distributions, dtype and device (" .. DEV .. ")", function()
    local N = 20000
    local function empty(dtype)
        return tide.empty({ N }, { dtype = dtype or "float64", device = DEV })
    end
    local function mean(t)
        return t:double():mean():item()
    end

    it("bernoulli_, exponential_, geometric_, log_normal_, cauchy_ and random_", function()
        tide.manual_seed(11)
        -- a mean of 20000 draws is within 4 standard errors of the true one
        local b = empty():bernoulli_(0.3)
        assert.is_true(math.abs(mean(b) - 0.3) < 4 * math.sqrt(0.21 / N))
        assert.are.same({ 0, 1 }, { b:min():item(), b:max():item() })
        local probs = on({ 0, 1, 0, 1 })
        assert.are.same({ 0, 1, 0, 1 }, on({ 5, 5, 5, 5 }):bernoulli_(probs):cpu():totable())
        local e = empty("float32"):exponential_(2)
        assert.are.equal("float32", e.dtype)
        assert.is_true(math.abs(mean(e) - 0.5) < 4 * 0.5 / math.sqrt(N))
        assert.is_true(e:min():item() >= 0)
        local g = empty("int64"):geometric_(0.25)
        assert.are.equal("int64", g.dtype)
        assert.are.equal(1, g:min():item())
        assert.is_true(math.abs(mean(g) - 4) < 4 * math.sqrt(0.75 / 0.0625 / N))
        local l = empty():log_normal_(1, 0.5)
        assert.is_true(math.abs(l:log():mean():item() - 1) < 4 * 0.5 / math.sqrt(N))
        local c = empty():cauchy_(3, 2)
        assert.is_true(math.abs(c:median():item() - 3) < 0.1)
        local r = empty("int32"):random_(-3, 4)
        assert.are.same({ -3, 3 }, { r:min():item(), r:max():item() })
        assert.is_true(math.abs(mean(r)) < 4 * 2 / math.sqrt(N))
        local u8 = empty("uint8"):random_()
        assert.is_true(u8:max():item() > 200)
        local up = empty():random_(5)
        assert.are.same({ 0, 4 }, { up:min():item(), up:max():item() })
        assert.are.equal(0, (up - up:floor()):abs():max():item())
        for _, t in ipairs({ b, e, g, l, c, r }) do
            assert.are.equal(tide.device(DEV), t.device)
        end
    end)

    it("refuse bad parameters and integer targets of the float draws", function()
        local x = empty()
        assert.has_error(function() x:bernoulli_(1.5) end,
            "tide: bernoulli_: p must be a probability in [0, 1] or a tensor of them, got 1.5")
        -- a tensor of probabilities is checked too (PyTorch's CPU kernel checks), NaN included;
        -- a refused draw writes nothing and moves no generator
        x:fill_(0.25) -- (empty's memory may hold NaN, which compares unequal to itself)
        local before = x:clone()
        local state = tide.get_rng_state(x.device)
        local bad = tide.tensor({ 0.5, 1.25, 0.1 }):to(x.device)
        assert.has_error(function() x:narrow(1, 1, 3):bernoulli_(bad) end,
            "tide: bernoulli_: p must hold probabilities in [0, 1], got 1.25; clamp it first " ..
            "(p:clamp(0, 1)) or check how it was computed")
        assert.has_error(function() tide.bernoulli(tide.tensor({ 0.2, -0.5 })) end,
            "tide: bernoulli: the input must hold probabilities in [0, 1], got -0.5; clamp it " ..
            "first (p:clamp(0, 1)) or check how it was computed")
        assert.has_error(function() tide.bernoulli(tide.tensor({ 0 / 0 })) end)
        assert.has_error(function() tide.bernoulli(tide.zeros(2), 0 / 0) end,
            "tide: bernoulli: p must be in [0, 1], got " .. tostring(0 / 0))
        assert.are.same(before:cpu():totable(), x:cpu():totable())
        assert.are.same(state:totable(), tide.get_rng_state(x.device):totable())
        assert.has_error(function() x:exponential_(0) end,
            "tide: exponential_: lambd must be a positive number, got 0")
        assert.has_error(function() x:geometric_() end,
            "tide: geometric_: p must be given, a probability in (0, 1]")
        assert.has_error(function() empty("int64"):exponential_() end,
            'tide: exponential_: needs a floating-point tensor, got int64 (as PyTorch\'s); ' ..
            'convert with :to("float32")')
        assert.has_error(function() x:random_(4, 4) end,
            "tide: random_: from (4) must be below to (4): the draws are in [from, to)")
        assert.has_error(function() x:random_(1.5) end,
            "tide: random_: to must be an integer, got 1.5")
    end)
end)

describe("small queries (" .. DEV .. ")", function()
    it("ndimension, is_same_size, is_signed, is_nonzero, get_device, moveaxis, narrow_copy",
        function()
        local x = on(X)
        assert.are.equal(2, x:ndimension())
        assert.is_true(x:is_same_size(on(Y)))
        assert.is_false(x:is_same_size(on(ROW)))
        assert.is_true(x:is_signed())
        assert.is_false(on({ 1 }, "uint8"):is_signed())
        assert.is_false(on({ 0 }):is_nonzero())
        assert.is_true(tide.is_nonzero(on({ { -2 } })))
        local dev = tide.device(DEV)
        assert.are.equal(dev.type == "cpu" and -1 or dev.index, x:get_device())
        assert.are.same({ 4, 3 }, tide.moveaxis(x, 1, 2):size())
        local c = x:narrow_copy(2, 2, 2)
        assert.are.same({ { -1.25, 2 }, { 3, -0.75 }, { 0.25, 0.25 } }, c:to("cpu"):totable())
        c:fill_(0)
        assert.are.equal(-1.25, x[1][2]:item()) -- a copy
    end)
end)
