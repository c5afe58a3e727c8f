-- math_ops_spec.lua — the ops added through the op table (include/tide_ops.def) with values from
-- PyTorch 1.13's semantics: erf, erfc, log1p, expm1, log2, tan, floor, ceil, round (half to
-- even), trunc, frac, reciprocal, square, softplus, silu, atan2, isnan, isinf, isfinite and
-- logical_and/or/xor/not; their dtype rules, their gradients against finite differences, and
-- the no-grad rows.
local atan2 = math.atan2 or math.atan -- math.atan(y, x) from 5.3; 5.1 ignores x
local tide = require("tide")

local function T(x, dt)
    return tide.tensor(x, { dtype = dt or "float64" })
end

local function near(expected, got, tol)
    tol = tol or 1e-12
    assert.are.equal(#expected, #got)
    for i = 1, #expected do
        local e, g = expected[i], got[i]
        if e ~= e then
            assert(g ~= g, ("element %d: expected nan, got %s"):format(i, g))
        elseif e == math.huge or e == -math.huge then
            assert.are.equal(e, g)
        else
            assert(math.abs(e - g) <= tol * (1 + math.abs(e)),
                ("element %d: expected %.17g, got %.17g"):format(i, e, g))
        end
    end
end

local nan, inf = 0 / 0, math.huge

describe("ops from the op table", function()
    it("erf, erfc, log1p, expm1, log2, tan in float64", function()
        local x = T({ 0.5, -1, 0 })
        near({ 0.52049987781304652, -0.84270079294971487, 0 }, x:erf():totable())
        near({ 0.47950012218695348, 1.8427007929497148, 1 }, x:erfc():totable())
        near({ 1e-10 }, T({ 1e-10 }):log1p():totable(), 1e-15)
        near({ 1.00000000005e-10 }, T({ 1e-10 }):expm1():totable(), 1e-15)
        near({ 3, -1, -inf }, T({ 8, 0.5, 0 }):log2():totable())
        near({ 0.54630248984379051, -1.5574077246549023, 0 }, x:tan():totable())
        near({ -inf, nan }, T({ -1, -2 }):log1p():totable())
    end)

    it("floor, ceil, round (half to even), trunc and frac", function()
        local x = T({ -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.7 })
        assert.are.same({ -3, -2, -1, 0, 1, 2, 2 }, x:floor():totable())
        assert.are.same({ -2, -1, 0, 1, 2, 3, 3 }, x:ceil():totable())
        assert.are.same({ -2, -2, 0, 0, 2, 2, 3 }, x:round():totable())
        assert.are.same({ -2, -1, 0, 0, 1, 2, 2 }, x:trunc():totable())
        near({ -0.5, -0.5, -0.5, 0.5, 0.5, 0.5, 0.7 }, x:frac():totable(), 1e-15)
        near({ nan, nan }, T({ inf, nan }):frac():totable())
        local f = T({ 0.5, 1.5, 2.5 }, "float32")
        assert.are.same({ 0, 2, 2 }, f:round():totable())
        assert.are.equal("float32", f:round().dtype)
    end)

    it("integer inputs to floor, ceil, round and trunc keep their dtype and values #lua53", function()
        local big = 2 ^ 62 + 1
        local i = tide.tensor({ -3, 7, math.tointeger(big) }, { dtype = "int64" })
        for _, op in ipairs({ "floor", "ceil", "round", "trunc" }) do
            local r = i[op](i)
            assert.are.equal("int64", r.dtype, op)
            assert.are.same({ -3, 7, math.tointeger(big) }, r:totable(), op)
        end
        assert.are.equal("uint8", T({ 200 }, "uint8"):floor().dtype)
    end)

    it("reciprocal, square (integers wrap), softplus, silu", function()
        near({ 0.5, -4, inf }, T({ 2, -0.25, 0 }):reciprocal():totable())
        local sq = tide.tensor({ 3, -4, 46341 }, { dtype = "int32" }):square()
        assert.are.equal("int32", sq.dtype)
        assert.are.same({ 9, 16, -2147479015 }, sq:totable()) -- 46341^2 wraps as in PyTorch
        near({ 2.25, 0 }, T({ -1.5, 0 }):square():totable())
        near({ 0.69314718055994531, 30, 9.3576229688401746e-14 },
            T({ 0, 30, -30 }):softplus():totable(), 1e-14)
        near({ 0.73105857863000490, -0.26894142136999510, 0 }, T({ 1, -1, 0 }):silu():totable())
        local s = T({ -1000 }):silu():totable()[1]
        assert.are.equal(0, s)
    end)

    it("atan2 broadcasts and promotes integers to float32", function()
        near({ 2.3561944901923448, -0.78539816339744828, math.pi / 2 },
            tide.atan2(T({ 1, -1, 1 }), T({ -1, 1, 0 })):totable())
        local r = tide.atan2(tide.tensor({ 1, 0 }, { dtype = "int64" }), tide.tensor({ 1, -1 },
            { dtype = "int32" }))
        assert.are.equal("float32", r.dtype)
        near({ math.pi / 4, math.pi }, r:totable(), 1e-6)
        near({ atan2(2, 3) }, T({ 2 }):atan2(3):totable())
        near({ math.pi / 4, atan2(2, 1) }, T({ { 1 }, { 2 } }):atan2(T({ 1 })):view(-1):totable())
    end)

    it("float-only ops promote integer inputs to float32", function()
        for _, op in ipairs({ "erf", "erfc", "log1p", "expm1", "log2", "tan", "reciprocal",
            "softplus", "silu" }) do
            local r = tide.tensor({ 1, 2 }, { dtype = "int32" })[op](tide.tensor({ 1, 2 },
                { dtype = "int32" }))
            assert.are.equal("float32", r.dtype, op)
        end
        near({ 1 }, tide.tensor({ 2 }, { dtype = "int64" }):reciprocal():mul(2):totable())
        -- but frac, whose integer result is 0 by definition, is refused as PyTorch's
        local ok, err = pcall(tide.frac, tide.tensor({ 1, 2 }, { dtype = "int32" }))
        assert.is_false(ok)
        assert.matches("tide: frac: not implemented for int32 tensors %(as PyTorch's%); convert "
            .. "with :float%(%) first", err)
    end)

    it("isnan, isinf, isfinite give bool for every dtype", function()
        local x = T({ 1, nan, inf, -inf })
        assert.are.same({ false, true, false, false }, x:isnan():totable())
        assert.are.same({ false, false, true, true }, x:isinf():totable())
        assert.are.same({ true, false, false, false }, x:isfinite():totable())
        assert.are.equal("bool", x:isnan().dtype)
        local i = tide.tensor({ 0, -5 }, { dtype = "int64" })
        assert.are.same({ false, false }, i:isnan():totable())
        assert.are.same({ false, false }, i:isinf():totable())
        assert.are.same({ true, true }, i:isfinite():totable())
        assert.are.same({ true }, T({ nan }, "float32"):isnan():totable())
    end)

    it("logical_and/or/xor/not: nonzero (NaN too) is true, the result is bool", function()
        local a, b = T({ 1, 0, 2, nan }), T({ 3, 3, 0, 0 })
        assert.are.same({ true, false, false, false }, a:logical_and(b):totable())
        assert.are.same({ true, true, true, true }, a:logical_or(b):totable())
        assert.are.same({ false, true, true, true }, a:logical_xor(b):totable())
        assert.are.same({ false, true, false, false }, a:logical_not():totable())
        local i = tide.tensor({ 0, 7 }, { dtype = "int32" })
        assert.are.same({ false, true }, i:logical_and(T({ 1, 1 })):totable()) -- mixed dtypes
        assert.are.same({ true, false }, tide.logical_not(i):totable())
        assert.are.equal("bool", a:logical_and(b).dtype)
        assert.are.same({ false, true }, i:logical_or(0):totable())
    end)

    it("no in-place twin for predicates; an argument is refused", function()
        assert.is_nil(tide.Tensor.isnan_)
        assert.is_function(tide.Tensor.floor_)
        -- comparisons and logical ops write their 0/1 into the tensor's own dtype, as PyTorch's
        local c = T({ 1, 5, 3 })
        assert.are.equal(c, c:gt_(2))
        assert.are.same({ 0, 1, 1 }, c:totable())
        assert.are.equal("float64", c.dtype)
        local l = tide.tensor({ 0, 2, 0 }, { dtype = "int32" })
        l:logical_or_(T({ 1, 0, 0 }))
        assert.are.same({ 1, 1, 0 }, l:totable())
        l:logical_not_()
        assert.are.same({ 0, 0, 1 }, l:totable())
        local x = T({ 1.5 })
        x:floor_()
        assert.are.same({ 1 }, x:totable())
        local ok, err = pcall(function()
            return x:erf(2)
        end)
        assert.is_false(ok)
        assert.matches("tide: erf: takes no argument, got argument #2 %(number%)", err)
    end)

    it("bool-valued ops do not require grad; the others record", function()
        local x = T({ 0.5, -1 })
        x.requires_grad = true
        assert.is_false(x:isnan().requires_grad)
        assert.is_false(x:logical_and(x).requires_grad)
        assert.is_false(x:logical_not().requires_grad)
        assert.is_true(x:floor().requires_grad)
    end)

    -- central differences of sum(op(x)) in float64
    local function check_grad(op, xs, other)
        local x = T(xs)
        x.requires_grad = true
        local y = other and x[op](x, other) or x[op](x)
        y:sum():backward()
        local g = x.grad:totable()
        local h = 1e-6
        for i = 1, #xs do
            local p, m = { table.unpack(xs) }, { table.unpack(xs) }
            p[i], m[i] = p[i] + h, m[i] - h
            local tp, tm = T(p), T(m)
            local fp = (other and tp[op](tp, other) or tp[op](tp)):sum():item()
            local fm = (other and tm[op](tm, other) or tm[op](tm)):sum():item()
            local fd = (fp - fm) / (2 * h)
            assert(math.abs(fd - g[i]) <= 1e-5 * (1 + math.abs(fd)),
                ("%s: d/dx[%d] is %.10g, finite differences %.10g"):format(op, i, g[i], fd))
        end
    end

    it("gradients match finite differences", function()
        local xs = { 0.3, -0.7, 1.2 }
        for _, op in ipairs({ "erf", "erfc", "log1p", "expm1", "tan", "reciprocal", "square",
            "softplus", "silu", "frac" }) do
            check_grad(op, xs)
        end
        check_grad("log2", { 0.3, 0.7, 1.2 })
        check_grad("softplus", { 25, -25 })
        check_grad("atan2", xs, T({ 0.5, -2, 1 }))
        check_grad("atan2", xs, 0.5)
        local b = T({ 0.5, -2, 1 })
        b.requires_grad = true
        tide.atan2(T(xs), b):sum():backward()
        near({ -0.3 / 0.34, 0.7 / 4.49, -1.2 / 2.44 }, b.grad:totable(), 1e-12)
        for _, op in ipairs({ "floor", "ceil", "round", "trunc" }) do
            local x = T(xs)
            x.requires_grad = true
            x[op](x):sum():backward()
            assert.are.same({ 0, 0, 0 }, x.grad:totable(), op)
        end
    end)
end)
