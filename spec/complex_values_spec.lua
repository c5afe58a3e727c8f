-- Complex tensors' names and values against PyTorch 1.13 (lua/tide/complex/): constructors,
-- parts, arithmetic with real tensors and numbers, elementwise functions and their branch cuts,
-- reductions, matmul, comparisons and predicates, dtype conversion, printing, and gradients of
-- abs / angle / real / imag through complex ops (complex_grad_values_spec covers the single ops).
local tide = require("tide")
-- negative zero made at run time: Lua 5.1 and LuaJIT share one constant for 0.0 and -0.0
local NZ = -tonumber("0.0")

local W = { -- PyTorch 1.13 (CPU), pasted from /tmp/complex_values/py.py
  ["polar"] = {1.7551651237807455, 0.958851077208406, -0.4161468365471424, -0.9092974268256817},
  ["abs"] = {1.5811388300841898, 3.605551275463989, 1.0, 1.0},
  ["angle"] = {0.3217505543966422, 2.1587989303424644, -1.5707963267948966, 3.141592653589793},
  ["conj"] = {1.5, -0.5, -2.0, -3.0, 0.0, 1.0, -1.0, NZ},
  ["conj_physical"] = {1.5, -0.5, -2.0, -3.0, 0.0, 1.0, -1.0, NZ},
  ["resolve_conj"] = {1.5, -0.5, -2.0, -3.0, 0.0, 1.0, -1.0, NZ},
  ["add_zw"] = {1.75, -0.5, -1.0, 5.0, 2.0, -0.5, -1.5, 1.0},
  ["add_zx"] = {3.5, 0.5, -3.0, 3.0, 0.5, -1.0, 2.0, 0.0},
  ["add_xz"] = {3.5, 0.5, -3.0, 3.0, 0.5, -1.0, 2.0, 0.0},
  ["add_z2"] = {4.0, 0.5, 0.5, 3.0, 2.5, -1.0, 1.5, 0.0},
  ["add_2z"] = {2.75, -1.0, 3.5, 2.0, 4.5, 0.5, 2.0, 1.0},
  ["sub_zw"] = {1.25, 1.5, -3.0, 1.0, -2.0, -1.5, -0.5, -1.0},
  ["sub_zx"] = {-0.5, 0.5, -1.0, 3.0, -0.5, -1.0, -4.0, 0.0},
  ["sub_xz"] = {0.5, -0.5, 1.0, -3.0, 0.5, 1.0, 4.0, 0.0},
  ["sub_z2"] = {-1.0, 0.5, -4.5, 3.0, -2.5, -1.0, -3.5, 0.0},
  ["sub_2z"] = {2.25, 1.0, 1.5, -2.0, 0.5, -0.5, 3.0, -1.0},
  ["mul_zw"] = {0.875, -1.375, -8.0, -1.0, 0.5, -2.0, 0.5, -1.0},
  ["mul_zx"] = {3.0, 1.0, 2.0, -3.0, 0.0, -0.5, -3.0, 0.0},
  ["mul_xz"] = {3.0, 1.0, 2.0, -3.0, 0.0, -0.5, -3.0, 0.0},
  ["mul_z2"] = {3.75, 1.25, -5.0, 7.5, 0.0, -2.5, -2.5, 0.0},
  ["mul_2z"] = {0.625, -2.5, 2.5, 5.0, 5.0, 1.25, -1.25, 2.5},
  ["div_zw"] = {-0.11764705882352941, 1.5294117647058822, 0.8, 1.4, -0.11764705882352941,
    -0.47058823529411764, 0.4, 0.8},
  ["div_zx"] = {0.75, 0.25, 2.0, -3.0, 0.0, -2.0, -0.3333333333333333, 0.0},
  ["div_xz"] = {1.2, -0.4, 0.15384615384615385, 0.23076923076923078, 0.0, 0.5, -3.0, NZ},
  ["div_z2"] = {0.6, 0.2, -0.8, 1.2, 0.0, -0.4, -0.4, 0.0},
  ["div_2z"] = {0.5882352941176471, 2.3529411764705883, 0.5, -1.0, 1.1764705882352942,
    -0.29411764705882354, -1.0, -2.0},
  ["exp"] = {0.6937618934296856, -1.0804701318986034, -1.1312043837568135, 2.4717266720048188,
    6.484506781251244, 3.5425022000064983, 0.32770991402245986, 0.5103779515445728},
  ["log"] = {0.03031231090821742, -1.3258176636680326, 0.8047189562170503, 1.1071487177940904,
    0.7234594914681627, 0.24497866312686414, 0.11157177565710488, 2.0344439357957027},
  ["sqrt"] = {0.8002425902201205, -0.6248105338438266, 1.272019649514069, 0.7861513777574233,
    1.425053124063947, 0.17543205637629383, 0.5558929702514211, 0.8994537199739336},
  ["sin"] = {0.38176425850227397, -1.138667034530656, 3.165778513216168, 1.9596010414216063,
    1.0253473885839877, -0.21685216292078974, -0.7397922644560138, 1.0313360742545512},
  ["cos"] = {1.4951099947736368, 0.2907494282281178, 2.0327230070196656, -3.0518977991518,
    -0.4692579782290534, -0.473830620416407, 1.3541806567045842, 0.5634214652309818},
  ["tanh"] = {0.7324112324640304, -1.278038090223709, 1.16673625724092, -0.2434582011857253,
    0.979940849961738, 0.03021598732287757, -1.0428307283443607, 0.806877412163085},
  ["sigmoid"] = {0.5803619777105871, -0.2676919058407979, 1.0214153641721806, 0.4034387060815425,
    0.8908441535457298, 0.05166470383545819, 0.34378965374870557, 0.252250351349282},
  ["reciprocal"] = {0.23529411764705882, 0.9411764705882353, 0.2, -0.4, 0.47058823529411764,
    -0.11764705882352941, -0.4, -0.8},
  ["pow_z2"] = {-0.9375, -0.5, -3.0, 4.0, 3.75, 2.0, -0.75, -1.0},
  ["pow_z05"] = {0.8002425902201205, -0.6248105338438266, 1.272019649514069, 0.7861513777574233,
    1.425053124063947, 0.17543205637629383, 0.5558929702514211, 0.8994537199739336},
  ["pow_zw"] = {1.4379116440837585, -0.5705017804894877, 0.0005460158671930649,
    -0.04806564009500661, -2.1932800507380152, -2.6859933937700547e-16, 2.646089334017202e-18,
    -0.04321391826377226},
  ["pow_zm1"] = {0.23529411764705882, 0.9411764705882353, 0.2, -0.4, 0.47058823529411764,
    -0.11764705882352941, -0.4, -0.8},
  ["log_cut"] = {0.0, 3.141592653589793, 0.0, -3.141592653589793, -1/0, -3.141592653589793, -1/0,
    3.141592653589793, -1/0, NZ},
  ["sqrt_cut"] = {0.0, 1.0, 0.0, -1.0, 0.0, NZ, 0.0, 0.0, 0.0, NZ},
  ["angle_cut"] = {3.141592653589793, -3.141592653589793, -3.141592653589793, 3.141592653589793,
    NZ},
  ["reciprocal0"] = {0/0, 0/0},
  ["sum"] = {15.0, -0.5},
  ["sum0"] = {3.0, 3.0, 5.0, -1.0, 7.0, -2.5},
  ["sum1k"] = {3.0, 0.5, 12.0, -1.0},
  ["mean1"] = {1.0, 0.16666666666666666, 4.0, -0.3333333333333333},
  ["mean"] = {2.5, -0.08333333333333333},
  ["prod"] = {116.0, 216.0},
  ["prod0"] = {-2.0, 3.0, 4.0, -4.0, 11.5, -3.5},
  ["prod1"] = {1.5, 2.5, 84.0, 4.0},
  ["matmul"] = {2.75, 0.0, 13.5, -4.5, 13.5, -4.5, 37.0, -18.0},
  ["matmul_vec"] = {7.75, 3.25, 18.25, 2.0},
  ["eq"] = {true, false, false, true, true},
  ["ne"] = {false, true, true, false, false},
  ["eq_num"] = {true, false, false, false, false},
  ["eq_real"] = {true, false, false, false, false},
  ["isnan"] = {false, false, true, false, false},
  ["isinf"] = {false, false, false, true, true},
  ["isfinite"] = {true, true, false, false, false},
  ["isreal"] = {true, false, true, true, false},
  ["to64"] = {1.5, 0.5, -2.0, 3.0, 0.0, -1.0, -1.0, 0.0},
  ["tiny64"] = {0.10000000149011612, 0.20000000298023224},
  ["g_abs_div_a"] = {1.3416407864998736, 0.44721359549995787, -0.24806946917841688,
    0.3721042037676254, 0.19402850002906635, -0.7761140001162655},
  ["g_abs_div_b"] = {-2.2360679774997894, 2.2360679774997894, -0.322490309931942,
    -0.644980619863884, 0.5277575200790606, -0.39581814005929544},
  ["g_angle_mul_a"] = {-0.19999999999999996, 0.5999999999999999, -0.2307692307692308,
    -0.15384615384615388, 0.9411764705882351, 0.23529411764705876},
  ["g_angle_mul_b"] = {0.9999999999999998, 0.9999999999999998, -0.4000000000000001,
    0.20000000000000004, -0.47999999999999987, -0.6399999999999998},
  ["g_real_log_a"] = {0.6000000000000001, 0.2, -0.15384615384615385, 0.23076923076923078,
    0.23529411764705888, -0.9411764705882353},
  ["g_real_log_b"] = {1.0, -1.0, 0.2, 0.4, -0.64, 0.48},
  ["g_imag_exp_a"] = {2.2873552871788423, 1.4686939399158851, 0.041894373450204546,
    0.02690006784157161, -3.4344484199128673, -0.6221398650315562},
  ["g_imag_exp_b"] = {-2.2873552871788423, -1.4686939399158851, -0.041894373450204546,
    -0.02690006784157161, 3.4344484199128673, 0.6221398650315562},
  ["g_abs_sqrt_a"] = {0.2667419115058384, 0.0889139705019461, -0.3266085036533769,
    0.48991275548006524, 0.14930464594624496, -0.5972185837849796},
  ["g_abs_sqrt_b"] = {0.8891397050194615, -0.8891397050194615, 0.8491821094987799,
    1.6983642189975598, -0.8122172739475723, 0.6091629554606792},
  ["g_angle_recip_a"] = {0.023529411764705927, -0.3058823529411765, -0.029230769230769237,
    -0.026153846153846153, -0.3093728419863143, -0.40178291167053803},
  ["g_angle_recip_b"] = {0.411764705882353, 0.6470588235294119, -0.46, 0.22000000000000003,
    -0.49092849519743864, -0.22198505869797225},
  ["g_imag_matmul_a"] = {-0.5, 0.5, 2.0, 1.0, 0.75, -1.0},
  ["g_imag_matmul_b"] = {0.5, 1.5, 3.0, -2.0, -1.0, 0.25},
  ["g_real_tanh_prod_a"] = {-0.018697847004284833, -0.05032500278117239, 0.01739129814156021,
    0.009414705767816948, -0.002260295121448318, 0.5149778666218665},
  ["g_real_tanh_prod_b"] = {-0.10442569452596467, 0.010440328064064964, 0.028643064246835187,
    -0.10519465512437513, -0.19148094679620098, -0.08274028338453873},
}


local f64, f32 = { dtype = "float64" }, { dtype = "float32" }
local function T(v) return tide.tensor(v, f64) end
local inf, nan = math.huge, 0 / 0

local function flat(t)
    if tide.is_complex(t) then
        t = tide.view_as_real(t)
    end
    return t:contiguous():view(-1):tolist()
end

-- exact for booleans and signed zeros (PyTorch's -0.0 parts), NaN equal to NaN, else 1e-12
local function check(name, got)
    local g, want = flat(got), W[name]
    assert.are.equal(#want, #g, name .. ": element count")
    for i = 1, #want do
        local a, b = g[i], want[i]
        local ok
        if type(b) == "boolean" or b == 0 or b == inf or b == -inf then
            ok = a == b and (b ~= 0 or 1 / a == 1 / b)
        elseif b ~= b then
            ok = a ~= a
        else
            ok = math.abs(a - b) <= 1e-12 * (1 + math.abs(b))
        end
        assert(ok, ("%s[%d]: got %s, PyTorch %s"):format(name, i, tostring(a), tostring(b)))
    end
end

local function raises(msg, f)
    local ok, e = pcall(f)
    assert.is_false(ok, msg)
    assert.are.equal(msg, tostring(e):match("tide: .*$"))
end

describe("complex tensors: PyTorch 1.13's values", function()
    local z = tide.complex(T({ 1.5, -2, 0, -1 }), T({ 0.5, 3, -1, 0 }))
    local w = tide.complex(T({ 0.25, 1, 2, -0.5 }), T({ -1, 2, 0.5, 1 }))
    local x = T({ 2, -1, 0.5, 3 })
    local m = tide.complex(tide.arange(0, 6, f64):view(2, 3), T({ { 1, -1, 0.5 }, { 2, 0, -3 } }))

    it("polar, abs, angle, conj, conj_physical, resolve_conj", function()
        check("polar", tide.polar(T({ 2, 1 }), T({ 0.5, -2 })))
        for _, k in ipairs({ "abs", "angle", "conj", "conj_physical" }) do
            check(k, z[k](z))
        end
        check("resolve_conj", z:conj():resolve_conj())
        -- tide's conj is physical: no conj bit (PyTorch's lazy z.conj().is_conj() is true)
        assert.is_false(z:conj():is_conj())
        assert.is_false(z:is_neg())
    end)

    it("add / sub / mul / div with complex, real tensors and Lua numbers, both orders", function()
        local ops = { add = function(a, b) return a + b end, sub = function(a, b) return a - b end,
            mul = function(a, b) return a * b end, div = function(a, b) return a / b end }
        for k, op in pairs(ops) do
            check(k .. "_zw", z[k](z, w))
            check(k .. "_zx", op(z, x))
            check(k .. "_xz", tide[k](x, z))
            check(k .. "_z2", z[k](z, 2.5))
            check(k .. "_2z", op(2.5, w))
        end
        local z64 = z:to("complex64")
        assert.are.equal("complex128", (z64 * x).dtype)
        assert.are.equal("complex64", (z64 * 2.5).dtype)
        assert.are.equal("complex64", (z64 * tide.tensor(2, f64)).dtype)
        assert.are.equal("float32", z64.real.dtype)
        assert.are.equal("float32", z64:abs().dtype)
    end)

    it("exp log sqrt sin cos tanh sigmoid reciprocal pow, methods and tide.X", function()
        local names = { "exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "reciprocal" }
        for _, k in ipairs(names) do
            check(k, w[k](w))
            check(k, tide[k](w))
        end
        check("pow_z2", w ^ 2)
        check("pow_z05", w:pow(0.5))
        check("pow_zw", z ^ w)
        check("pow_zm1", w ^ -1)
    end)

    it("branch cuts and zeros: log / sqrt / angle of -1 +-0j, -0 +-0j, 0 - 0j; 1 / 0", function()
        local bz = tide.complex(T({ -1, -1, NZ, NZ, 0 }), T({ 0, NZ, NZ, 0, NZ }))
        check("log_cut", bz:log())
        check("sqrt_cut", bz:sqrt())
        check("angle_cut", bz:angle())
        check("reciprocal0", tide.complex(T({ 0 }), T({ 0 })):reciprocal())
    end)

    it("sum / mean / prod over dims (1-based), matmul", function()
        check("sum", m:sum())
        check("sum0", m:sum(1))
        check("sum1k", m:sum(2, true))
        assert.are.same({ 2, 1 }, m:sum({ dim = 2, keepdim = true }).shape)
        check("mean1", m:mean({ dim = 2 }))
        check("mean", m:mean())
        check("prod", m:prod())
        check("prod0", m:prod(1))
        check("prod1", m:prod(2))
        check("matmul", m:matmul(m.T))
        check("matmul_vec", m:matmul(w:narrow(1, 1, 3)))
    end)

    it("eq / ne, isnan / isinf / isfinite / isreal", function()
        local e = tide.complex(T({ 1, 2, nan, inf, 1 }), T({ 0, 1, 0, 0, -inf }))
        local f = tide.complex(T({ 1, 2, nan, inf, 1 }), T({ 0, -1, 0, 0, -inf }))
        check("eq", e:eq(f))
        check("ne", e:ne(f))
        check("eq_num", e:eq(1))
        check("eq_real", e:eq(T({ 1, 2, 0, 0, 1 })))
        for _, k in ipairs({ "isnan", "isinf", "isfinite" }) do
            check(k, e[k](e))
            check(k, tide[k](e))
            assert.are.equal("bool", e[k](e).dtype)
        end
        check("isreal", e:isreal())
        check("isreal", tide.isreal(e))
    end)

    -- PyTorch: '"lt_cpu" not implemented for 'ComplexDouble'' (max_all, sorting, argmax_cpu, ...)
    it("order-based ops raise", function()
        for _, k in ipairs({ "lt", "gt", "le", "ge", "max", "min", "sort", "argmax", "clamp" }) do
            raises(("tide: %s: complex tensors do not support it (no order on complex numbers); " ..
                "use z.real and z.imag"):format(k), function() return z[k](z, w) end)
        end
        raises("tide: max: complex tensors do not support it (no order on complex numbers); " ..
            "use z.real and z.imag", function() return tide.max(z) end)
        raises("tide: lt: complex tensors do not support it (no order on complex numbers); " ..
            "use z.real and z.imag", function() return z < w end)
    end)

    it("to(dtype) complex128 <-> complex64", function()
        local z64 = z:to("complex64")
        assert.are.equal("complex64", z64.dtype)
        check("to64", z64)
        assert.are.equal("complex128", z64:to(tide.complex128).dtype)
        assert.are.equal("complex128", z64:to({ dtype = "complex128" }).dtype)
        local t = tide.complex(tide.tensor({ 0.1 }, f32), tide.tensor({ 0.2 }, f32))
        check("tiny64", t:to("complex128"))
    end)

    it("printing: PyTorch's repr body, tide's last line", function()
        -- PyTorch: tensor([1.0000+2.j, 0.5000-1.j])
        assert.are.equal("[1.0000+2.j, 0.5000-1.j]\n[tide.Tensor of shape [2], complex64, cpu]",
            tostring(tide.complex(tide.tensor({ 1, 0.5 }, f32), tide.tensor({ 2, -1 }, f32))))
        -- PyTorch: tensor([[0.+1.0000j, 1.-1.0000j, 2.+0.5000j],
        --                  [3.+2.0000j, 4.+0.0000j, 5.-3.0000j]], dtype=torch.complex128)
        assert.are.equal("[[0.+1.0000j, 1.-1.0000j, 2.+0.5000j],\n [3.+2.0000j, 4.+0.0000j, " ..
            "5.-3.0000j]]\n[tide.Tensor of shape [2, 3], complex128, cpu]", tostring(m))
        -- PyTorch: tensor(1.5000-2.j)
        assert.are.equal("1.5000-2.j\n[tide.Tensor of shape [], complex64, cpu]",
            tostring(tide.complex(tide.tensor(1.5, f32), tide.tensor(-2, f32))))
    end)

    it("gradients of abs / angle / real / imag through complex ops", function()
        local cases = {
            abs_div = function(p, q) return (p / q):abs():sum() end,
            angle_mul = function(p, q) return (p * q):angle():sum() end,
            real_log = function(p, q) return (p * q):log().real:sum() end,
            imag_exp = function(p, q) return (p - q):exp().imag:sum() end,
            abs_sqrt = function(p, q) return (p:sqrt() * q:conj()):abs():sum() end,
            angle_recip = function(p, q) return (p:reciprocal() + q):angle():sum() end,
            imag_matmul = function(p, q)
                return p:unsqueeze(1):matmul(q:unsqueeze(2)).imag:sum()
            end,
            real_tanh_prod = function(p, q) return (p:tanh() * q:sigmoid()):prod().real end,
        }
        for name, fn in pairs(cases) do
            local a = T({ { 1.5, 0.5 }, { -2, 3 }, { 0.25, -1 } }):requires_grad_()
            local b = T({ { 0.5, -0.5 }, { 1, 2 }, { -1, 0.75 } }):requires_grad_()
            fn(tide.view_as_complex(a), tide.view_as_complex(b)):backward()
            check("g_" .. name .. "_a", a.grad)
            check("g_" .. name .. "_b", b.grad)
        end
    end)

    pending("z > w raises naming lt (Lua evaluates it as w < z); PyTorch names gt")
    pending("z:conj():is_conj() is false (tide's conj is physical); PyTorch's lazy conj gives true")
end)
