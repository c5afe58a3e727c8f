-- keywords_arithmetic_spec.lua — PyTorch's keyword arguments on the products and the binary
-- pointwise ops (lua/tide/tensor_keywords/arithmetic.lua): method, in-place twin and tide.X,
-- the parameters added for them (tensordot's default dims = 2, ger), and the errors for an
-- unknown name and a parameter given twice. The values are PyTorch 1.13's.
local tide = require("tide")

local function catch(f)
    local ok, err = pcall(f)
    assert.is_false(ok, "expected an error")
    return tostring(err)
end

local function near(expected, t, tol)
    local got = type(t) == "number" and { t } or t:reshape(-1):totable()
    if type(expected) == "number" then
        expected = { expected }
    end
    assert.are.equal(#expected, #got)
    for i = 1, #expected do
        local e, g = expected[i], got[i]
        if e ~= e then
            assert(g ~= g, ("element %d: expected nan, got %s"):format(i, tostring(g)))
        else
            assert(math.abs(g - e) <= (tol or 1e-5),
                ("element %d: expected %s, got %s"):format(i, tostring(e), tostring(g)))
        end
    end
end

local function same(a, b)
    assert.are.same(a:size(), b:size())
    assert.are.equal(a.dtype, b.dtype)
    assert.are.same(a:totable(), b:totable())
end

local NAN = 0 / 0
local function A() return tide.tensor({ { 1, 2 }, { 3, 4 } }, { dtype = "float32" }) end
local function Bm() return tide.tensor({ { 0.5, 1 }, { 2, -1 } }, { dtype = "float32" }) end
local function V() return tide.tensor({ 1, 2 }, { dtype = "float32" }) end
local function W() return tide.tensor({ 3, -1 }, { dtype = "float32" }) end
local function B1() return tide.arange(8, { dtype = "float32" }):reshape(2, 2, 2) end
local function B2() return B1() * 0.5 - 1 end
local function X() return tide.tensor({ -3.5, -1.5, 2.5, 7 }, { dtype = "float32" }) end
local function Y() return tide.tensor({ 2, -2, 2, 2 }, { dtype = "float32" }) end

describe("keyword arguments: products", function()
    it("mm, bmm, matmul, mv, dot, vdot, inner, outer, ger, kron, matrix_power", function()
        local a, b, v, w = A(), Bm(), V(), W()
        near({ 4.5, -1, 9.5, -1 }, a:mm({ mat2 = b }))
        same(a:mm(b), tide.mm(a, { mat2 = b }))
        same(a:mm(b), tide.mm({ input = a, mat2 = b }))
        near({ 0, 0.5, -2, 0.5, 14, 18.5, 20, 26.5 }, B1():bmm({ mat2 = B2() }))
        same(tide.bmm(B1(), B2()), tide.bmm(B1(), { mat2 = B2() }))
        near({ 4.5, -1, 9.5, -1 }, a:matmul({ other = b }))
        same(a:matmul(b), tide.matmul(a, { other = b }))
        near({ 5, 11 }, a:mv({ vec = v }))
        same(a:mv(v), tide.mv(a, { vec = v }))
        -- dot's parameter is tensor in PyTorch's parser; other (its docs' name) is an alias
        near(1, v:dot({ tensor = w }))
        near(1, tide.dot(v, { other = w }))
        near(1, v:vdot({ other = w }))
        near(1, tide.vdot(v, { other = w }))
        near({ 2.5, 0, 5.5, 2 }, a:inner({ other = b }))
        same(a:inner(b), tide.inner(a, { other = b }))
        near({ 3, -1, 6, -2 }, v:outer({ vec2 = w }))
        same(v:outer(w), tide.outer(v, { vec2 = w }))
        -- ger: PyTorch's older name of outer
        same(v:outer(w), v:ger(w))
        same(v:outer(w), tide.ger(v, { vec2 = w }))
        assert.matches("tide: ger: the second vector must be 1%-D", catch(function()
            v:ger(a)
        end))
        local k = a:kron({ other = b })
        assert.are.same({ 4, 4 }, k:size())
        near({ 0.5, 1, 1, 2, 2, -1, 4, -2, 1.5, 3, 2, 4, 6, -3, 8, -4 }, k)
        same(k, tide.kron(a, { other = b }))
        near({ 37, 54, 81, 118 }, a:matrix_power({ n = 3 }))
        same(a:matrix_power(3), tide.matrix_power(a, { n = 3 }))
    end)

    it("addmm, addmv, addr, baddbmm, addbmm: beta and alpha by name, with the operands", function()
        local a, b, v, w = A(), Bm(), V(), W()
        -- torch.addmm(b, x, w, beta=0.5, alpha=2)
        near({ 9.5, -1, 20.5, 0 }, tide.addmm(a, a, b, { beta = 0.5, alpha = 2 }))
        same(tide.addmm(a, a, b, { beta = 0.5, alpha = 2 }),
            a:addmm({ mat1 = a, mat2 = b, beta = 0.5, alpha = 2 }))
        same(a:addmm(a, b), tide.addmm({ input = a, mat1 = a, mat2 = b }))
        near({ 2.5, 6.5 }, tide.addmv(v, a, w, { beta = 2, alpha = 0.5 }))
        same(tide.addmv(v, a, w, { beta = 2, alpha = 0.5 }),
            v:addmv({ mat = a, vec = w, beta = 2, alpha = 0.5 }))
        near({ 9, -3, 18, -6 }, a:addr({ vec1 = v, vec2 = w, beta = 0, alpha = 3 }))
        -- torch.baddbmm(b, q, k, beta=0, alpha=scale): the input left out, its NaNs too
        local nan = tide.full({ 2, 2, 2 }, NAN)
        near({ 0, 0.25, -1, 0.25, 7, 9.25, 10, 13.25 },
            tide.baddbmm(nan, B1(), B2(), { beta = 0, alpha = 0.5 }))
        same(tide.baddbmm(nan, B1(), B2(), { beta = 0, alpha = 0.5 }),
            nan:baddbmm({ batch1 = B1(), batch2 = B2(), beta = 0, alpha = 0.5 }))
        near({ 29, 40, 39, 58 }, tide.addbmm(a, B1(), B2(), { alpha = 2 }))
        same(tide.addbmm(a, B1(), B2(), { alpha = 2 }),
            a:addbmm({ batch1 = B1(), batch2 = B2(), alpha = 2 }))
        -- the in-place twins
        local c = A()
        local r = c:addmm_({ mat1 = A(), mat2 = b, beta = 0.5, alpha = 2 })
        assert.are.equal(c, r)
        near({ 9.5, -1, 20.5, 0 }, c)
        c = nan:clone()
        c:baddbmm_(B1(), { batch2 = B2(), beta = 0, alpha = 0.5 })
        near({ 0, 0.25, -1, 0.25, 7, 9.25, 10, 13.25 }, c)
    end)

    it("tensordot: dims by name, 2 when left out (PyTorch's default)", function()
        local a, b, v, w = A(), Bm(), V(), W()
        near(4.5, tide.tensordot(a, b))
        near(4.5, tide.tensordot(a, b, { dims = 2 }))
        same(tide.tensordot(a, b, 2), tide.tensordot(a, b))
        near({ 4.5, -1, 9.5, -1 }, tide.tensordot(a, b, { dims = 1 }))
        near({ 4.5, -1, 9.5, -1 }, tide.tensordot(a, b, { dims = { { 2 }, { 1 } } }))
        near({ 3, -1, 6, -2 }, tide.tensordot({ a = v, b = w, dims = 0 }))
        same(tide.tensordot(a, b, 1), a:tensordot({ b = b, dims = 1 }))
        assert.matches("tide: tensordot: dims = 2 must be between 0 and the smaller rank %(1%)",
            catch(function() tide.tensordot(v, w) end))
        assert.matches("tide: tensordot: dims must be an integer or", catch(function()
            tide.tensordot(a, b, { dims = "2" })
        end))
    end)

    it("raises for an unknown name and for a parameter given twice", function()
        local a, b = A(), Bm()
        assert.matches('tide: addmm: unknown option "gamma"; options are mat1, mat2, beta, alpha',
            catch(function() tide.addmm(a, a, b, { beta = 1, gamma = 2 }) end))
        assert.matches('tide: mm: unknown option "mat"', catch(function()
            a:mm({ mat = b })
        end))
        assert.matches('tide: tensordot: unknown option "dim" %(did you mean "dims"%?%)',
            catch(function() tide.tensordot(a, b, { dim = 1 }) end))
        assert.matches("tide: addmm: mat1 given twice, as argument #2 and by name; pass it once",
            catch(function() tide.addmm(a, a, { mat1 = a, mat2 = b }) end))
        assert.matches("tide: mm: mat2 given twice, as argument #2 and by name",
            catch(function() a:mm(b, { mat2 = b }) end))
        assert.matches("tide: dot: other given twice, as tensor %(argument #2%) and by name",
            catch(function() V():dot({ other = W(), tensor = W() }) end))
        assert.matches("tide: tensordot: dims given twice, as argument #3 and by name",
            catch(function() tide.tensordot(a, b, 1, { dims = 1 }) end))
    end)
end)

describe("keyword arguments: binary pointwise ops", function()
    it("add, sub, subtract, rsub: other and alpha by name (alpha by position too)", function()
        local x, y = X(), Y()
        near({ 0.5, -5.5, 6.5, 11 }, x:add(y, { alpha = 2 }))
        same(x:add(y, 2), x:add(y, { alpha = 2 }))
        same(x:add(y, 2), x:add({ other = y, alpha = 2 }))
        same(x:add(y, 2), tide.add(x, { other = y, alpha = 2 }))
        same(x:add(y, 2), tide.add({ input = x, other = y, alpha = 2 }))
        same(x:add(y), x:add({ other = y }))
        same(x:add(y), x:add(y, {})) -- {} is alpha 1 (an empty table is no keyword)
        near({ -4.5, -0.5, 1.5, 6 }, tide.sub(x, { other = y, alpha = 0.5 }))
        same(x:sub(y, 0.5), x:sub({ other = y, alpha = 0.5 }))
        near({ -9.5, 4.5, -3.5, 1 }, x:subtract({ other = y, alpha = 3 }))
        near({ 9, 1, -3, -12 }, tide.rsub(x, y, { alpha = 2 }))
        same(tide.rsub(x, y, 2), tide.rsub(x, { other = y, alpha = 2 }))
        -- the in-place twins: p:add_(g, {alpha = -lr})
        local p = X()
        assert.are.equal(p, p:add_({ other = y, alpha = -0.5 }))
        near({ -4.5, -0.5, 1.5, 6 }, p)
        p = X()
        p:sub_(y, { alpha = 0.5 })
        near({ -4.5, -0.5, 1.5, 6 }, p)
        p = X()
        p:subtract_({ other = y })
        near({ -5.5, 0.5, 0.5, 5 }, p)
    end)

    it("mul, divisions, remainders, pow and float_power by name", function()
        local x, y = X(), Y()
        near({ -7, 3, 5, 14 }, x:mul({ other = y }))
        same(x:mul(y), tide.multiply(x, { other = y }))
        near({ -1.75, 0.75, 1.25, 3.5 }, x:true_divide({ other = y }))
        same(x:true_divide(y), tide.true_divide(x, { other = y }))
        near({ -2, 0, 1, 3 }, x:floor_divide({ other = y }))
        same(x:floor_divide(y), tide.floor_divide(x, { other = y }))
        near({ 0.5, -1.5, 0.5, 1 }, x:remainder({ other = y }))
        near({ -1.5, -1.5, 0.5, 1 }, tide.fmod(x, { other = y }))
        -- x.pow(exponent=2)
        near({ 12.25, 2.25, 6.25, 49 }, x:pow({ exponent = 2 }))
        same(x:pow(2), tide.pow(x, { exponent = 2 }))
        near({ 4, 0.25, 4, 4 }, tide.pow(y, { exponent = y }))
        local f = y:abs():float_power({ exponent = 0.5 })
        assert.are.equal("float64", f.dtype)
        near({ 1.4142135623730951, 1.4142135623730951, 1.4142135623730951,
            1.4142135623730951 }, f, 1e-12)
        same(f, tide.float_power(y:abs(), { exponent = 0.5 }))
        local p = X()
        p:pow_({ exponent = 3 })
        near({ -42.875, -3.375, 15.625, 343 }, p)
        p = X()
        p:mul_({ other = y })
        near({ -7, 3, 5, 14 }, p)
    end)

    it("atan2, maximum, fmax, hypot, copysign, logaddexp, xlogy, heaviside by name", function()
        local x, y = X(), Y()
        local at = { -1.0516501665115356, -2.498091697692871, 0.8960554003715515,
            1.292496681213379 }
        near(at, x:atan2({ other = y }))
        near(at, tide.arctan2(x, { other = y }))
        same(x:atan2(y), x:arctan2({ other = y }))
        near({ 2, -1.5, 2.5, 7 }, x:maximum({ other = y }))
        near({ -3.5, -2, 2, 2 }, tide.minimum(x, { other = y }))
        local xn, yn = tide.tensor({ 1, NAN, 3, NAN }), tide.tensor({ 2, 0, NAN, NAN })
        near({ 2, 0, 3, NAN }, xn:fmax({ other = yn }))
        near({ 1, 0, 3, NAN }, tide.fmin(xn, { other = yn }))
        near({ 4.031128883361816, 2.5, 3.2015621662139893, 7.280109882354736 },
            x:hypot({ other = y }))
        near({ -2, -2, 2, 2 }, y:copysign({ other = x }))
        near({ 2.0040783882141113, -1.0259230136871338, 2.974076986312866, 7.006715297698975 },
            x:logaddexp({ other = y }))
        near({ 2.0315322875976562, -0.7284466624259949, 3.2715532779693604, 7.044394016265869 },
            tide.logaddexp2(x, { other = y }))
        near({ 0, -1.3862943649291992, -1.3862943649291992, 2.7725887298583984 },
            y:xlogy({ other = tide.tensor({ 1, 2, 0.5, 4 }, { dtype = "float32" }) }))
        local h = tide.tensor({ -1, 0, 2, 0 }, { dtype = "float32" })
        local vals = tide.tensor({ 0.5 }, { dtype = "float32" })
        near({ 0, 0.5, 1, 0.5 }, h:heaviside({ values = vals }))
        same(h:heaviside(vals), tide.heaviside(h, { values = vals }))
        local p = X()
        p:hypot_({ other = y })
        near({ 4.031128883361816, 2.5, 3.2015621662139893, 7.280109882354736 }, p)
        p = X()
        p:atan2_({ other = y })
        near(at, p)
        h:heaviside_({ values = vals })
        near({ 0, 0.5, 1, 0.5 }, h)
    end)

    it("comparisons, logical and bitwise ops by name (and their aliases and twins)", function()
        local x, y = X(), Y()
        assert.are.same({ false, false, true, false }, x:eq({ other = 2.5 }):totable())
        assert.are.same({ true, false, false, false }, tide.lt(x, { other = y }):totable())
        assert.are.same({ false, true, true, true }, x:greater_equal({ other = y }):totable())
        same(x:ge(y), tide.greater_equal(x, { other = y }))
        same(x:ne(y), x:not_equal({ other = y }))
        same(x:le(y), tide.less_equal(x, { other = y }))
        same(x:gt(y), x:greater({ other = y }))
        same(x:lt(y), x:less({ other = y }))
        local p = X()
        p:eq_({ other = y })
        near({ 0, 0, 0, 0 }, p)
        p = X()
        p:greater_({ other = y })
        near({ 0, 1, 1, 1 }, p)
        local ai, bi = tide.tensor({ 12, 10, 0, 7 }), tide.tensor({ 10, 3, 5, 0 })
        assert.are.same({ true, true, false, false }, ai:logical_and({ other = bi }):totable())
        assert.are.same({ false, false, true, true },
            tide.logical_xor(ai, { other = bi }):totable())
        assert.are.same({ 8, 2, 0, 0 }, ai:bitwise_and({ other = bi }):totable())
        assert.are.same({ 14, 11, 5, 7 }, tide.bitwise_or(ai, { other = bi }):totable())
        assert.are.same({ 6, 9, 5, 7 }, ai:bitwise_xor({ other = bi }):totable())
        local c = tide.tensor({ 12, 10, 0, 7 })
        c:bitwise_xor_({ other = bi })
        assert.are.same({ 6, 9, 5, 7 }, c:totable())
    end)

    it("raises for an unknown name and for a parameter given twice", function()
        local x, y = X(), Y()
        assert.matches('tide: add: unknown option "alpah" %(did you mean "alpha"%?%)',
            catch(function() x:add(y, { alpah = 2 }) end))
        assert.matches('tide: pow: unknown option "exponnt" %(did you mean "exponent"%?%)',
            catch(function() x:pow({ exponnt = 2 }) end))
        assert.matches('tide: mul: unknown option "value"', catch(function()
            x:mul({ value = y })
        end))
        assert.matches("tide: add: alpha given twice, as argument #3 and by name; pass it once",
            catch(function() x:add(y, 2, { alpha = 2 }) end))
        assert.matches("tide: add: other given twice, as argument #2 and by name",
            catch(function() tide.add(x, y, { other = y }) end))
        assert.matches("tide: pow: exponent given twice, as argument #2 and by name",
            catch(function() x:pow(2, { exponent = 2 }) end))
        assert.matches("tide: eq_: other given twice, as argument #2 and by name",
            catch(function() x:eq_(y, { other = y }) end))
        -- a bad value keeps the op's own error, and leaves an in-place target unchanged
        local p = X()
        assert.matches("tide: add_: alpha %(argument #3%) must be a number", catch(function()
            p:add_(y, { alpha = "two" })
        end))
        near({ -3.5, -1.5, 2.5, 7 }, p)
    end)
end)
