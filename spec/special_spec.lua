-- special_spec.lua — the special functions of the op table (lgamma, digamma, erfinv, zeta) and
-- polygamma over them, against PyTorch 1.13 (spec/fixtures/special_torch.lua, written by
-- spec/fixtures/make_special.py): values and gradients in float64 on the device under test,
-- the poles, signed zeros, infinities and NaN as PyTorch gives them, float32 as the float64
-- value rounded once, and erfinv in its tails, where tide is more exact than PyTorch; the
-- Bessel functions, ndtri, log_ndtr, erfcx and the incomplete gamma against mpmath.
local tide = require("tide")
local D = require("spec.support.device")
local P = require("spec.support.porting")

local T = dofile("spec/fixtures/special_torch.lua")
local DEV = D.name

local function t64(v)
    return P.t64(v, DEV)
end

-- PyTorch's trigamma (digamma's gradient, polygamma(1, x)) is good to about 1e-10: tide's
-- comes from the Hurwitz zeta, checked against the series sum of 1/(x + k)^2 to 1e-15 below
local TOL = {
    digamma = { grad = 1e-9 },
    polygamma1 = { out = 1e-9, grad = 1e-12 },
    polygamma2 = { grad = 1e-12 },
}

describe("special functions (" .. DEV .. ")", function()
    local CASES = {
        lgamma = function(x) return x:lgamma() end,
        digamma = function(x) return tide.digamma(x) end,
        erfinv = function(x) return x:erfinv() end,
        polygamma1 = function(x) return tide.polygamma(1, x) end,
        polygamma2 = function(x) return x:polygamma(2) end,
        polygamma3 = function(x) return tide.polygamma(3, x) end,
        zeta_q = function(q) return tide.zeta(t64(T.ZETA_X), q) end,
        zeta_scalar = function(q) return tide.zeta(2, q) end,
    }
    local INPUT = { erfinv = T.ERFINV_IN, zeta_q = T.ZETA_Q,
        zeta_scalar = { T.GAMMA_IN[1], T.GAMMA_IN[2], T.GAMMA_IN[3], T.GAMMA_IN[4], -2.5 } }
    for name, fn in pairs(CASES) do
        it(name .. ": PyTorch's values and gradients", function()
            local tol = TOL[name] or {}
            P.check_case(T.cases[name], name, DEV, { out = tol.out or 1e-13,
                grad = tol.grad or 1e-12 }, fn, INPUT[name] or T.GAMMA_IN)
        end)
    end

    it("poles, signed zeros, infinities and NaN as PyTorch's", function()
        local poles = t64(T.POLES)
        P.close(T.values.lgamma_poles, poles:lgamma(), 1e-15, "lgamma")
        P.close(T.values.digamma_poles, poles:digamma(), 1e-15, "digamma")
        local edge = t64(T.ERFINV_EDGE):erfinv()
        P.close(T.values.erfinv_edge, edge, 0, "erfinv")
        assert.are.equal(-math.huge, 1 / edge[3]:item(), "erfinv(-0) is -0")
        local z = tide.zeta(t64({ 1, 0.5, 2, 2, 2.5, 0 / 0, 2 }), t64({ 1, 1, -1, 0, -1.5, 1, 0 / 0 }))
        P.close(T.values.zeta_edge, z, 0, "zeta")
    end)

    it("trigamma from zeta: the series sum of 1/(x + k)^2 to 1e-15", function()
        -- sum over k < 100000, then the Euler-Maclaurin remainder at a = x + 100000
        local xs = { 0.3, 2.5, 7 }
        local got = tide.polygamma(1, t64(xs)):to("cpu"):totable()
        for i, x in ipairs(xs) do
            local s = 0
            for k = 100000 - 1, 0, -1 do -- smallest terms first
                s = s + 1 / ((x + k) * (x + k))
            end
            local a = x + 100000
            s = s + 1 / a + 1 / (2 * a * a) + 1 / (6 * a ^ 3) - 1 / (30 * a ^ 5)
            assert.is_true(math.abs(got[i] - s) <= 1e-15 * s, ("trigamma(%g): %.17g, series %.17g")
                :format(x, got[i], s))
        end
    end)

    it("erfinv in its tails: erfc(erfinv(y)) = 1 - y to 1e-13", function()
        local ys = { 0.9, 0.99, 0.999999, 1 - 1e-10, 1 - 2 ^ -50, -0.9999 }
        local x = t64(ys):erfinv()
        local back = x:abs():erfc():to("cpu"):totable()
        for i, y in ipairs(ys) do
            local want = 1 - math.abs(y)
            assert.is_true(math.abs(back[i] - want) <= 1e-13 * want,
                ("erfc(erfinv(%.17g)) = %.17g, expected %.17g"):format(y, back[i], want))
        end
        assert.is_true(x[6]:item() < 0)
    end)

    it("float32 is the float64 value rounded once; integers compute in float32", function()
        local x = t64(T.GAMMA_IN)
        for _, op in ipairs({ "lgamma", "digamma" }) do
            local f32 = x:float()[op](x:float())
            assert.are.same(x:float():double()[op](x:float():double()):float():cpu():totable(),
                f32:cpu():totable(), op)
            P.close(T.values[op .. "_f32"], f32:double(), 1e-6, op .. " float32")
        end
        local i = tide.tensor({ 1, 2, 3 }, { device = DEV })
        assert.are.equal("float32", i:lgamma().dtype)
        assert.are.equal("float32", tide.polygamma(1, i).dtype)
    end)

    it("in place: lgamma_, digamma_, erfinv_, polygamma_", function()
        local x = t64({ 0.25, 3 })
        local want = x:polygamma(2)
        assert.are.equal(x, x:polygamma_(2))
        P.close(want:to("cpu"):totable(), x, 0, "polygamma_")
        local y = t64({ 0.5, -0.25 })
        y:erfinv_()
        P.close({ 0.47693627620446987, -0.22531205501217808 }, y, 1e-15, "erfinv_")
        -- while autograd records, polygamma_ reads a copy: the gradient sees the old values
        local l = t64({ 0.25, 3 }):requires_grad_(true)
        local h = l * 1
        h:polygamma_(1)
        h:sum():backward()
        P.close(tide.polygamma(2, t64({ 0.25, 3 })):to("cpu"):totable(), l.grad, 1e-15,
            "polygamma_ gradient")
    end)

    it("errors: polygamma's order, zeta's exponent gradient, devices", function()
        local x = t64({ 1, 2 })
        assert.has_error(function() tide.polygamma(1.5, x) end,
            "tide: polygamma: n must be an integer >= 0 (the derivative's order), got 1.5")
        assert.has_error(function() x:polygamma(-1) end,
            "tide: polygamma: n must be an integer >= 0 (the derivative's order), got -1")
        assert.has_error(function() tide.polygamma(1, { 1, 2 }) end,
            "tide: polygamma: expected a tensor at argument #2, got table")
        local e = t64({ 2.5, 3 }):requires_grad_(true)
        local refusal = "tide: zeta: not differentiable with respect to x (argument #1, the " ..
            "exponent), as in PyTorch; detach x, or pass the exponent as a number"
        assert.has_error(function() tide.zeta(e, t64({ 1, 2 })) end, refusal)
        assert.has_error(function() e:zeta(t64({ 1, 2 })) end, refusal)
        local z = tide.no_grad(function() return tide.zeta(e, t64({ 1, 2 })) end)
        assert.is_false(z.requires_grad)
        local other = tide.tensor({ 1, 2 }, { dtype = "float64", device = D.other })
        assert.has_error(function() tide.zeta(x, other) end)
        local ok2, err2 = pcall(tide.zeta, x, other)
        assert.is_false(ok2)
        assert.matches("expected all tensors on the same device", err2, 1, true)
    end)
end)

-- the modified Bessel functions against mpmath (30 digits: mpmath.besseli(n, x), times e^-|x|
-- for the scaled ones): PyTorch 1.13 agrees to 1e-15 below 700 (spec/opinfo_spec.lua compares
-- with it on every dtype) but overflows to inf at 710, where I0 is 3.3e306
describe("modified Bessel functions (" .. DEV .. ")", function()
    local X = { 0.1, 1, 5, 29.9, 30, 30.1, 100, 700, 710, -710, -3.5 }
    local WANT = {
        i0 = { 1.0025015629340956, 1.2660658777520083, 27.239871823604447, 708478330489.01453,
            781672297823.97749, 862432920031.77921, 1.0737517071310738e+42,
            1.5295933476718737e+302, 3.345334558619656e+306, 3.345334558619656e+306,
            7.3782034322254797 },
        i1 = { 0.050062526047092695, 0.56515910399248503, 24.335642142450527, 696528308361.09269,
            768532038938.957, 847983630191.54143, 1.0683693903381625e+42,
            1.5285003902339007e+302, 3.3429778585097629e+306, -3.3429778585097629e+306,
            -6.2058349222583655 },
        i0e = { 0.90710092578230109, 0.46575960759364044, 0.18354081260932835,
            0.073269219046001908, 0.073145946482237294, 0.073023294131060942,
            0.039944379299096683, 0.015081295651531358, 0.014974675005024157,
            0.014974675005024157, 0.22280243801077916 },
        i1e = { 0.045298446808809327, 0.20791041534970845, 0.16397226694454236,
            0.072033374911868788, 0.071916330598647555, 0.071799854351014333,
            0.039744153025130253, 0.015070519444716847, 0.014964125740784195,
            -0.014964125740784195, -0.18739997660304999 },
    }

    it("match mpmath to 1e-14 in float64, across the switch at 30 and past e^709", function()
        local x = t64(X)
        for name, want in pairs(WANT) do
            local got = x[name](x):to("cpu"):totable()
            for i, w in ipairs(want) do
                assert(math.abs(got[i] - w) <= 1e-14 * math.abs(w), ("%s(%s) = %.17g, want %.17g")
                    :format(name, X[i], got[i], w))
            end
        end
    end)

    it("keep NaN, and give the infinities' limits (PyTorch 1.13: NaN for i0 and i1)", function()
        local x = t64({ 0 / 0, math.huge, -math.huge })
        local i0, i1, i0e = x:i0():to("cpu"):totable(), x:i1():to("cpu"):totable(),
            x:i0e():to("cpu"):totable()
        assert.is_true(i0[1] ~= i0[1])
        assert.are.same({ math.huge, math.huge }, { i0[2], i0[3] })
        assert.are.same({ math.huge, -math.huge }, { i1[2], i1[3] })
        assert.are.same({ 0, 0 }, { i0e[2], i0e[3] })
    end)

    it("differentiate as PyTorch: i1 and i1e have the slope 1/2 at 0", function()
        local x = t64({ 0, 1.5, -2 }):requires_grad_(true)
        x:i1():sum():backward()
        local g = x.grad:to("cpu"):totable()
        assert.are.equal(0.5, g[1])
        -- i1' = i0 - i1 / x
        assert(math.abs(g[2] - (1.6467231897728908 - 0.98166642857790759 / 1.5)) < 1e-14)
        x.grad = nil
        x:i1e():sum():backward()
        assert.are.equal(0.5, x.grad:to("cpu"):totable()[1])
    end)
end)

describe("the normal distribution's functions and the incomplete gamma (" .. DEV .. ")", function()
    -- mpmath at 40 (ndtri: 400) digits on the same doubles
    local CASES = {
        ndtri = { { 1e-300, 1e-20, 1e-5, 0.02, 0.3, 0.5, 0.975, 1 - 1e-12 },
            { -37.047096299361201, -9.262340089798407, -4.2648907939228247, -2.053748910631823,
                -0.52440051270804078, 0, 1.9599639845400538, 7.0344869100478356 } },
        log_ndtr = { { -40, -10, -1.5, -0.5, 0, 3, 10 },
            { -804.6084420137538, -53.23128515051247, -2.7059444008238898, -1.1759117615936185,
                -0.69314718055994529, -0.0013508099647481938, -7.6198530241605255e-24 } },
        erfcx = { { -26, -3, -0.5, 0, 0.5, 11.9, 12.1, 50, 1e9 },
            { 7.6577249314905682e+293, 16205.988853999586, 1.952360489182557, 1,
                0.6156903441929259, 0.047245232484087671, 0.04646960733983501,
                0.011281536265323773, 5.6418958354775633e-10 } },
    }
    -- (a, x) across the series, the fraction and Temme's expansion (past a = 1e5)
    local A = { 0.5, 3, 25, 100, 99999, 100001, 2147483647 }
    local X = { 0.1, 3.5, 25, 101, 100500, 100001, 2147483647 }
    local P = { 0.345279153981423, 0.67915280113786591, 0.52660153144365063, 0.5528962934345113,
        0.94325787230874869, 0.50042052000777015, 0.50000286961661622 }
    local Q = { 0.65472084601857705, 0.32084719886213409, 0.47339846855634937,
        0.44710370656548876, 0.05674212769125131, 0.49957947999222985, 0.49999713038338378 }

    local function close(got, want, tol, what)
        for i, w in ipairs(want) do
            assert(got[i] == w or math.abs(got[i] - w) <= tol * math.abs(w),
                ("%s case %d = %.17g, want %.17g"):format(what, i, got[i], w))
        end
    end

    it("match mpmath to 1e-14 in float64 (the incomplete gamma 5e-14), far into the tails",
        function()
        for name, c in pairs(CASES) do
            local x = t64(c[1])
            close(x[name](x):to("cpu"):totable(), c[2], 1e-14, name)
            close(tide.special[name](x):to("cpu"):totable(), c[2], 1e-14, "special." .. name)
        end
        local a, x = t64(A), t64(X)
        -- PyTorch 1.13 gives 0.52660153107352 at a = x = 25 (Temme's expansion, 7e-10 off)
        close(a:igamma(x):to("cpu"):totable(), P, 5e-14, "igamma")
        close(tide.igammac(a, x):to("cpu"):totable(), Q, 5e-14, "igammac")
        close(tide.special.gammainc(a, x):to("cpu"):totable(), P, 5e-14, "special.gammainc")
        local q = tide.special.gammaincc(a, 2147483647):to("cpu"):totable()
        close({ q[7] }, { Q[7] }, 5e-14, "special.gammaincc")
    end)

    it("give PyTorch's edge values", function()
        local nd = t64({ 0, 1, 1.5, -0.5, 0 / 0 }):ndtri():to("cpu"):totable()
        assert.are.same({ -math.huge, math.huge }, { nd[1], nd[2] })
        assert.is_true(nd[3] ~= nd[3] and nd[4] ~= nd[4] and nd[5] ~= nd[5])
        assert.are.same({ math.huge, 0 }, t64({ -math.huge, math.huge }):erfcx():to("cpu"):totable())
        assert.are.same({ -math.huge, 0 },
            t64({ -math.huge, math.huge }):log_ndtr():to("cpu"):totable())
        -- P(0, x > 0) = 1, P(a, 0) = 0, P(a, inf) = 1 (a NaN too), P(inf, x) = 0, a < 0: NaN
        local p = t64({ 0, 2, 0 / 0, math.huge, -1 }):igamma(t64({ 1, 0, math.huge, 5, 1 }))
            :to("cpu"):totable()
        assert.are.same({ 1, 0, 1, 0 }, { p[1], p[2], p[3], p[4] })
        assert.is_true(p[5] ~= p[5])
    end)

    it("differentiate as PyTorch, and refuse a gradient to igamma's a", function()
        local x = t64({ 0.3, 2.5 }):requires_grad_(true)
        local a = t64({ 2, 0.5 })
        a:igamma(x):sum():backward()
        -- x^(a - 1) e^-x / Gamma(a)
        close(x.grad:to("cpu"):totable(), { 0.3 * math.exp(-0.3),
            math.exp(-2.5) / math.sqrt(2.5 * math.pi) }, 1e-14, "igamma'")
        x.grad = nil
        tide.igammac(a, x):sum():backward()
        close(x.grad:to("cpu"):totable(), { -0.3 * math.exp(-0.3),
            -math.exp(-2.5) / math.sqrt(2.5 * math.pi) }, 1e-14, "igammac'")
        local ok, err = pcall(function() return a:requires_grad_(true):igamma(x) end)
        assert.is_false(ok)
        assert.matches("tide: igamma: not differentiable with respect to a (argument #1, the " ..
            "shape), as in PyTorch; detach a, or pass it as a number", tostring(err), 1, true)
        local p = t64({ 0.5 }):ndtri()
        assert.are.equal(0, p:item())
        local y = t64({ 0.975 }):requires_grad_(true)
        y:ndtri():backward()
        -- 1 / phi(ndtri(p))
        close(y.grad:to("cpu"):totable(), { math.sqrt(2 * math.pi) *
            math.exp(0.5 * 1.9599639845400538 ^ 2) }, 1e-13, "ndtri'")
    end)
end)
