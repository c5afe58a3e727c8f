-- complex_spec.lua — complex tensors (lua/tide/complex/): values, gradients and printing against
-- PyTorch 1.13's (reference values computed there), shape ops, indexing, factories, errors.
local tide = require("tide")
local C = require("tide.complex")

local function flat(t)
    if C.is(t) then
        t = tide.view_as_real(t)
    end
    return t:detach():to("cpu"):reshape(-1):totable()
end

local function close(t, want, tol)
    local got = flat(t)
    assert.are.equal(#want, #got)
    for i = 1, #want do
        if math.abs(got[i] - want[i]) > (tol or 1e-4) then
            error(("element %d: got %.6f, want %.6f"):format(i, got[i], want[i]), 2)
        end
    end
end

-- the list a real-only method's error gives: every method and property of the class
local function supported_names()
    local Cl, names = require("tide.complex.tensor"), {}
    for k in pairs(Cl.methods) do
        names[#names + 1] = k
    end
    for k in pairs(Cl.props) do
        names[#names + 1] = k
    end
    table.sort(names)
    return table.concat(names, ", ")
end

local function err(f, msg)
    local ok, e = pcall(f)
    assert.is_false(ok)
    assert.are.equal(msg, tostring(e):match("tide: .*$"))
end

local function pair(rows, dtype)
    return tide.view_as_complex(tide.tensor(rows, { dtype = dtype or "float32" }))
end

local A = { { 1.0, 2.0 }, { 0.5, -1.0 }, { -0.3, 0.8 } }
local B = { { -1.0, 0.5 }, { 2.0, 0.0 }, { 0.25, -0.75 } }

describe("complex tensors", function()
    it("wrap a [..., 2] pair sharing storage, with the complex shape, dtype and parts", function()
        local x = tide.tensor(A)
        local z = tide.view_as_complex(x)
        assert.is_true(rawequal(tide.view_as_real(z), x))
        assert.are.same({ 3 }, { table.unpack and table.unpack(z:size()) or unpack(z:size()) })
        assert.are.equal(3, z.shape[1])
        assert.are.equal(1, z:dim())
        assert.are.equal(3, z:numel())
        assert.are.equal(3, z:size(-1))
        assert.are.equal("complex64", z.dtype)
        assert.are.equal(tide.cfloat, z.dtype)
        assert.are.equal("complex128", pair(A, "float64").dtype)
        assert.are.equal("cpu", tostring(z.device))
        assert.is_true(z:is_complex())
        assert.is_true(tide.is_complex(z))
        assert.is_false(tide.is_complex(x))
        z.real[2] = 7 -- a view: writes go through
        assert.are.equal(7, x[2][1]:item())
        close(z.imag, { 2, -1, 0.8 })
        close(tide.real(z), { 1, 7, -0.3 })
        close(tide.imag(z), { 2, -1, 0.8 })
        assert.is_true(rawequal(tide.real(x), x))
    end)

    for _, dt in ipairs({ "float32", "float64" }) do
        it("computes PyTorch's values (" .. dt .. ")", function()
            local a, b = pair(A, dt), pair(B, dt)
            local r = tide.tensor({ { 2.0 }, { -0.5 } }, { dtype = dt })
            close(a * b, { -2.0, -1.5, 1.0, -2.0, 0.525, 0.425 })
            close(a / b, { 0.0, -2.0, 0.25, -0.5, -1.08, -0.04 })
            close(a + b, { 0.0, 2.5, 2.5, -1.0, -0.05, 0.05 })
            close(a - b, { 2.0, 1.5, -1.5, -1.0, -0.55, 1.55 })
            local ar = a * r
            assert.are.same({ 2, 3 }, { ar:size(1), ar:size(2) })
            close(ar, { 2.0, 4.0, 1.0, -2.0, -0.6, 1.6, -0.5, -1.0, -0.25, 0.5, 0.15, -0.4 })
            close(a + r, { 3.0, 2.0, 2.5, -1.0, 1.7, 0.8, 0.5, 2.0, 0.0, -1.0, -0.8, 0.8 })
            close(-(a - r), { 1.0, -2.0, 1.5, 1.0, 2.3, -0.8, -1.5, -2.0, -1.0, 1.0, -0.2, -0.8 })
            close(a:reciprocal() * r, { 0.4, -0.8, 0.8, 1.6, -0.82192, -2.19178, -0.1, 0.2, -0.2,
                -0.4, 0.20548, 0.54795 })
            close(3 - a, { 2.0, -2.0, 2.5, 1.0, 3.3, -0.8 })
            close(2 / a, { 0.4, -0.8, 0.8, 1.6, -0.82192, -2.19178 })
            close(a + 1.5, { 2.5, 2.0, 2.0, -1.0, 1.2, 0.8 })
            close(a * -2, { -2.0, -4.0, -1.0, 2.0, 0.6, -1.6 })
            close(a:conj(), { 1.0, -2.0, 0.5, 1.0, -0.3, -0.8 })
            close(a:abs(), { 2.23607, 1.11803, 0.8544 })
            assert.are.equal(dt, a:abs().dtype)
            close(a:angle(), { 1.10715, -1.10715, 1.92957 })
            close(tide.angle(a), { 1.10715, -1.10715, 1.92957 })
            close(a:exp(), { -1.1312, 2.47173, 0.89081, -1.38735, 0.51613, 0.53143 })
            close(a:pow(2), { -3.0, 4.0, -0.75, -1.0, -0.55, -0.48 })
            close(a:square(), { -3.0, 4.0, -0.75, -1.0, -0.55, -0.48 })
            close(a:pow(0.5), { 1.27202, 0.78615, 0.89945, -0.55589, 0.5265, 0.75974 })
            close(a:pow(-1), { 0.2, -0.4, 0.4, 0.8, -0.41096, -1.09589 })
            close(a:pow(3), { -11.0, -2.0, -1.375, 0.25, 0.549, -0.296 })
            close(a:sum(), { 1.2, 1.8 })
            close(a:mean(), { 0.4, 0.6 })
            local m = C.stack({ a, b })
            close(m:sum(1), { 0.0, 2.5, 2.5, -1.0, -0.05, 0.05 })
            local k = m:sum({ dim = -1, keepdim = true })
            assert.are.same({ 2, 1 }, { k:size(1), k:size(2) })
            close(k, { 1.2, 1.8, 1.25, -0.25 })
            close(m:mean(2), { 0.4, 0.6, 0.41667, -0.08333 })
            close(m:matmul(m:t()), { -4.3, 2.52, -0.475, -3.075, -0.475, -3.075, 4.25, -1.375 })
            close(m:matmul(tide.tensor({ { 1.0 }, { 2.0 }, { -1.0 } }, { dtype = dt })),
                { 2.3, -0.8, 2.75, 1.25 })
        end)
    end

    it("promotes dtypes as the real ops do", function()
        local z = pair(A)
        assert.are.equal("complex128", (z * tide.tensor({ 2.0 }, { dtype = "float64" })).dtype)
        assert.are.equal("complex128", (z + pair(B, "float64")).dtype)
    end)

    it("sends PyTorch's gradients to the real leaves", function()
        local xr = tide.tensor({ 1.0, 0.5, -0.3, 0.0 }):requires_grad_()
        local xi = tide.tensor({ 2.0, -1.0, 0.8, 0.0 }):requires_grad_()
        local wx = tide.tensor({ { -1.0, 0.5 }, { 2.0, 0.0 }, { 0.25, -0.75 }, { 1.0, 1.0 } })
            :requires_grad_()
        local z, w = tide.complex(xr, xi), tide.view_as_complex(wx)
        local loss = (z * w):abs():sum() + (z / w):angle():sum() + (z:exp() * w:conj()).real:sum()
            + z:pow(2).imag:sum()
        loss:backward()
        assert.is_true(math.abs(loss:item() - 7.028156757354736) < 1e-4)
        close(xr.grad, { 6.46707, 1.47604, -0.04302, 1.0 })
        close(xi.grad, { 5.10612, 2.38585, -0.79068, 1.0 })
        close(wx.grad, { -2.7312, 4.27173, 2.00884, -1.88735, -0.41368, -0.67912, 1.0, 0.0 })
        local q = tide.zeros(2, 2):requires_grad_()
        local zz = tide.view_as_complex(q);
        (zz:abs():sum() + zz:angle():sum()):backward()
        close(q.grad, { 0, 0, 0, 0 }, 0) -- PyTorch's: 0 at 0, not NaN
    end)

    it("runs einsum over complex and real operands (FNO's spectral product)", function()
        local xa = tide.arange(0, 48, { dtype = "float32" }):reshape(2, 3, 2, 2, 2) / 10 - 1
        local wa = tide.arange(0, 96, { dtype = "float32" }):reshape(3, 4, 2, 2, 2) / 20 - 1
        local e = tide.einsum("bixy,ioxy->boxy", tide.view_as_complex(xa),
            tide.view_as_complex(wa))
        assert.are.equal(4, e:dim())
        assert.are.same({ 2, 4, 2, 2 }, { e:size(1), e:size(2), e:size(3), e:size(4) })
        local got = flat(e)
        assert.is_true(math.abs(got[1] + 0.165) < 1e-4 and math.abs(got[2] - 4.55) < 1e-4)
        assert.is_true(math.abs(got[64] - 41.45) < 1e-3 and math.abs(got[63] + 1.065) < 1e-4)
        local e2 = tide.einsum("bixy,ioxy->boxy", tide.view_as_complex(xa), wa:select(-1, 1))
        local g2 = flat(e2)
        assert.is_true(math.abs(g2[1] - 2.2) < 1e-4 and math.abs(g2[64] - 20.83) < 1e-3)
        -- the real path is untouched
        close(tide.einsum("i,i->", tide.tensor({ 1.0, 2 }), tide.tensor({ 3.0, 4 })), { 11 })
    end)

    it("reshapes, permutes and indexes over the complex dims", function()
        local x = tide.arange(0, 24, { dtype = "float32" }):reshape(2, 3, 2, 2)
        local z = tide.view_as_complex(x)
        assert.are.equal(3, z:dim())
        local p = z:permute(3, 1, 2)
        assert.are.same({ 2, 2, 3 }, { p:size(1), p:size(2), p:size(3) })
        close(p[{ 2, 1, 1 }], { 2, 3 })
        assert.are.equal(3, z:transpose(1, -2):size(1))
        assert.are.equal(12, z:view(-1):size(1))
        assert.are.equal(6, z:reshape(2, 6):size(2))
        assert.are.equal(1, z:unsqueeze(-1):size(4))
        assert.are.equal(3, z:unsqueeze(1):squeeze(1):dim())
        assert.are.equal(6, z:flatten(1, 2):size(1))
        assert.are.equal(4, z:unsqueeze(1):expand(4, 2, 3, 2):size(1))
        close(z:narrow(2, 2, 1):select(-1, 1), { 4, 5, 16, 17 })
        close(z[2][3], { 20, 21, 22, 23 })
        close(z[{ {}, 1, -1 }], { 2, 3, 14, 15 })
        close(z[{ "...", 1 }], { 0, 1, 4, 5, 8, 9, 12, 13, 16, 17, 20, 21 })
        err(function() return z:select(4, 1) end,
            "tide: select: dim 4 is out of range for a complex tensor of 3 dims (dims are " ..
            "1-based, -1 the last)")
        err(function() return z[{ 1, 1, 1, 1 }] end, "tide: index: 4 indices for a complex " ..
            "tensor of 3 dims")
    end)

    it("writes slices as FNO's out_ft[:, :, :m1, :m2] = w, and copy_ / zero_", function()
        local out = C.factory("zeros", 1, 2, 3, 3, { dtype = "complex64" })
        local w = pair({ { 1.0, -1.0 } }):reshape(1, 1, 1, 1):expand(1, 2, 2, 2)
        out[{ {}, {}, { 1, 2 }, { 1, 2 } }] = w
        close(out:sum(), { 8, -8 })
        close(out[{ 1, 1, 1, 1 }], { 1, -1 })
        close(out[{ 1, 1, 3, 3 }], { 0, 0 })
        out[{ 1, 1, 3, 3 }] = 5
        out[{ 1, 2, 3, 3 }] = tide.tensor(2.0)
        close(out:sum(), { 15, -8 })
        local z = pair(A)
        z:copy_(pair(B))
        close(z, { -1.0, 0.5, 2.0, 0.0, 0.25, -0.75 })
        z:copy_(tide.tensor({ 1.0, 2, 3 }))
        close(z, { 1, 0, 2, 0, 3, 0 })
        z:zero_()
        close(z, { 0, 0, 0, 0, 0, 0 })
    end)

    it("builds from parts: complex (broadcast), polar, factories", function()
        local f = { dtype = "float32" } -- (Lua 5.1 reads 1.0 as an integer)
        local z = tide.complex(tide.tensor({ { 1.0 }, { 2.0 } }, f), tide.tensor({ 3.0, 4.0 }, f))
        close(z, { 1, 3, 1, 4, 2, 3, 2, 4 })
        close(tide.polar(tide.tensor({ 2.0 }, f), tide.tensor({ math.pi / 3 })),
            { 1, math.sqrt(3) })
        -- the C factories hand a complex dtype to M.factory
        close(tide.zeros(2, { dtype = tide.cfloat }), { 0, 0, 0, 0 })
        assert.are.equal("complex128", tide.ones(2, { dtype = "complex128" }).dtype)
        close(tide.ones(2, { dtype = "complex128" }), { 1, 0, 1, 0 })
        local o = C.factory("ones", { 2 }, { dtype = "complex128", requires_grad = true })
        assert.are.equal("complex128", o.dtype)
        assert.is_true(o.requires_grad)
        close(o, { 1, 0, 1, 0 })
        close(C.factory("full", 2, 2.5, { dtype = "complex64" }), { 2.5, 0, 2.5, 0 })
        close(C.factory("tensor", { 1, 2 }, { dtype = tide.cfloat }), { 1, 0, 2, 0 })
        close(C.factory("zeros_like", pair(A)), { 0, 0, 0, 0, 0, 0 })
        assert.are.equal(3, C.factory("empty", 3, { dtype = "complex64" }):numel())
        local u = C.factory("rand", 500, { dtype = "complex64" })
        local ur = tide.view_as_real(u)
        assert.is_true(ur:min():item() >= 0 and ur:max():item() < 1)
        tide.manual_seed(0)
        local n = C.factory("randn", 4000, { dtype = "complex64" })
        local v = n:abs():pow(2):mean():item() -- E|z|^2 = 1: each part N(0, 1/2)
        assert.is_true(v > 0.9 and v < 1.1, tostring(v))
        local vr = n.real:var():item()
        assert.is_true(vr > 0.4 and vr < 0.6, tostring(vr))
    end)

    it("moves, detaches and clones through the pair", function()
        local z = pair(A):requires_grad_()
        assert.is_true(z.requires_grad)
        assert.is_false(z:detach().requires_grad)
        local d = z:to("complex128")
        assert.are.equal("complex128", d.dtype)
        assert.are.equal("complex64", d:to({ dtype = tide.cfloat }).dtype)
        assert.is_true(rawequal(z:to("cpu"), z))
        local c = z:clone()
        assert.is_false(rawequal(tide.view_as_real(c), tide.view_as_real(z)))
        close(c, flat(z))
    end)

    it("prints as PyTorch, with tide's last line", function()
        assert.are.equal("[1.0000+2.j, 0.5000-1.j]\n[tide.Tensor of shape [2], complex64, cpu]",
            tostring(pair({ { 1, 2 }, { 0.5, -1 } })))
        assert.are.equal("[1.2500+2.5000j, 0.5000-1.0000j]\n" ..
            "[tide.Tensor of shape [2], complex64, cpu]",
            tostring(pair({ { 1.25, 2.5 }, { 0.5, -1 } })))
        assert.are.equal("[[  1.2500+2.5000e+00j,   0.5000-1.0000e+00j],\n" ..
            " [ -3.1000+1.0000e-03j, 100.0000+7.0000e+00j]]\n" ..
            "[tide.Tensor of shape [2, 2], complex64, cpu]",
            tostring(pair({ { 1.25, 2.5 }, { 0.5, -1 }, { -3.1, 0.001 }, { 100, 7 } })
                :view(2, 2)))
        assert.are.equal("1.5000-2.j\n[tide.Tensor of shape [], complex128, cpu]",
            tostring(pair({ 1.5, -2 }, "float64")))
        assert.are.equal("[1.0000e-06+2.j, 3.0000e+07-1.j]\n" ..
            "[tide.Tensor of shape [2], complex64, cpu]",
            tostring(pair({ { 1e-6, 2 }, { 3e7, -1 } })))
        local big = tide.view_as_complex(tide.arange(0, 2002, { dtype = "float32" })
            :reshape(1001, 2) * 0.5)
        assert.are.equal("[   0.+5.0000e-01j,    1.+1.5000e+00j,    2.+2.5000e+00j,  ...,\n" ..
            "  998.+9.9850e+02j,  999.+9.9950e+02j, 1000.+1.0005e+03j]\n" ..
            "[tide.Tensor of shape [1001], complex64, cpu]", tostring(big))
    end)

    it("raises tide: errors naming the fix", function()
        local z = pair(A)
        local sup = "complex tensors support "
        local ok, e = pcall(function() return z:relu() end)
        assert.is_false(ok)
        assert.is_truthy(tostring(e):find("tide: relu: " .. sup, 1, true))
        assert.is_truthy(tostring(e):find("; use z.real / z.imag or tide.view_as_real(z) for " ..
            "the real ops", 1, true))
        err(function() return z:float() end, "tide: float: converting a complex tensor to " ..
            "float32 would drop its imaginary part (PyTorch warns and discards it); take z.real " ..
            "(or z:abs()) for a real tensor")
        err(function() return tide.view_as_complex(tide.zeros(3, 4)) end, "tide: " ..
            "view_as_complex: the last dim must have size 2 (real, imaginary), got shape " ..
            "[3, 4]; reshape it to [..., 2] first")
        err(function() return tide.view_as_complex(tide.zeros(2, 3):t()) end, "tide: " ..
            "view_as_complex: the last dim must have stride 1, got shape [3, 2] with strides " ..
            "[1, 3]; call x:contiguous() first")
        err(function() return tide.view_as_complex(tide.zeros(3, 2, { dtype = "int64" })) end,
            "tide: view_as_complex: expected a float32 or float64 tensor, got int64; convert " ..
            "it with :float() first")
        err(function() return tide.view_as_real(tide.zeros(2)) end, "tide: view_as_real: " ..
            "expected a complex tensor, got a float32 tensor (view_as_real is only for complex " ..
            "tensors)")
        err(function()
            return tide.complex(tide.zeros(2), tide.zeros(2, { dtype = "float64" }))
        end,
            "tide: complex: real and imag must both be float32 or both float64, got float32 " ..
            "and float64")
        -- (nn.Parameter(z) and a complex field that requires grad register a complex parameter:
        -- spec/complex_parameter_spec.lua)
        err(function() return z * "x" end, "tide: mul: a complex tensor combines with a complex " ..
            "tensor, a real tensor or a number, got string")
        err(function() return tide.ones(3) % z end,
            "tide: remainder: complex tensors do not support it; use z.real and z.imag")
        err(function() return tide.relu(z) end, "tide: relu: " .. sup ..
            supported_names() .. "; use z.real / z.imag or tide.view_as_real(z) for the real ops")
        err(function() return tide.mv(z, z) end, "tide: mv: expected a tensor at " ..
            "argument #1, got a complex tensor (for the real ops: z.real, z.imag, " ..
            "tide.view_as_real(z))")
        err(function() return tide.cat({ tide.ones(3), z }) end, "tide: cat: element 1 is a " ..
            "float32 tensor; convert real ones with tide.complex(x, tide.zeros_like(x))")
        err(function() return tide.ones(2):to("complex32") end,
            "tide: to: expected a complex dtype (complex64, complex128), got complex32")
        err(function() return tide.zeros(2, { dtype = "complex32" }) end,
            "tide: zeros: expected a complex dtype (complex64, complex128), got complex32")
    end)

    -- torch 1.13: z = torch.complex(torch.tensor([-4., 3., 0.]), torch.tensor([0., 4., -2.]))
    it("computes sqrt, log, sin, cos, norm, addcmul, masked_fill and in-place ops", function()
        local f32 = { dtype = "float32" }
        local z = tide.complex(tide.tensor({ -4, 3, 0 }, f32), tide.tensor({ 0, 4, -2 }, f32))
        close(z:sqrt(), { 0, 2, 2, 1, 1, -1 })
        close(z:log(), { 1.3863, 3.1416, 1.6094, 0.9273, 0.6931, -1.5708 })
        close(z:sin(), { 0.7568, 0, 3.8537, -27.0168, 0, -3.6269 }, 1e-3)
        close(z:cos(), { -0.6536, 0, -27.0349, -3.8512, 3.7622, 0 }, 1e-3)
        close(z:norm(), { 6.7082 })
        close(z:addcmul(z, z, { value = 2 }), { 28, 0, -11, 52, -8, -2 })
        close(z:masked_fill(tide.tensor({ true, false, false }), 7), { 7, 0, 3, 4, 0, -2 })
        assert.are.same({ true, true, true }, z:eq(z):totable())
        assert.is_true(z:allclose(z + 1e-9))
        assert.is_false(z:allclose(z + 1e-3))
        assert.are.same({ 3, 3 }, { z:outer(z):size(1), z:outer(z):size(2) })
        close(tide.zeros_like(z), { 0, 0, 0, 0, 0, 0 })
        assert.are.equal("complex64", tide.randn_like(z).dtype)
        assert.are.equal("complex128", z:new_zeros(2, { dtype = tide.cdouble }).dtype)
        local w = z:clone()
        assert.are.equal(w, w:mul_(z)) -- torch: w.mul_(z) is [16-0j, -7+24j, -4-0j]
        close(w, { 16, 0, -7, 24, -4, 0 })
        w:add_(1):div_(2)
        close(w, { 8.5, 0, -3, 12, -1.5, 0 })
        err(function() return w:add_(tide.ones(2, 3)) end,
            "tide: add_: output with shape [3] doesn't match the broadcast shape [2, 3]")
        close(tide.mul(z, 2), { -8, 0, 6, 8, 0, -4 })
        close(tide.matmul(z:view(1, 3), z:view(3, 1)), { 5, 24 }) -- 16 + (-7 + 24j) + (-4)
        close(tide.mm(tide.ones(1, 3), z:view(3, 1)), { -1, 2 })
        -- fuzz: an exponent of math.mininteger (whose math.abs is negative) took the product
        -- path and indexed nil; torch: (1+0.5j, 2) ** -3 = (0.128-0.704j, 0.125)
        local y = tide.complex(tide.tensor({ 1, 2 }, f32), tide.tensor({ 0.5, 0 }, f32))
        close(y:pow(-3), { 0.128, -0.704, 0.125, 0 })
        if math.mininteger then
            close(y:pow(math.mininteger), { 0, 0, 0, 0 })
        end
        err(function() return y:pow(2, 3) end, "tide: pow: takes one exponent, got more arguments")
    end)

    -- the binding's hand-offs (lua/tensor.c, join.c, transfers.c): a real tensor on the left of
    -- an operator, tide.cat / tide.stack of complex tensors, x:to(complex dtype)
    it("takes a real tensor on the left, joins and converts to complex in the real ops", function()
        local a = pair(A, "float64")
        local r = tide.tensor({ { 2.0 }, { -0.5 } }, { dtype = "float64" })
        close(r * a, flat(a * r))
        close(r + a, flat(a + r))
        close(r - a, flat(-(a - r)))
        close(r / a, flat(a:reciprocal() * r))
        close(tide.add(r, a), flat(a + r))
        close(r:mul(a), flat(a * r))
        local c = tide.cat({ a, a })
        assert.is_true(C.is(c))
        assert.are.equal(6, c:numel())
        close(c, { 1.0, 2.0, 0.5, -1.0, -0.3, 0.8, 1.0, 2.0, 0.5, -1.0, -0.3, 0.8 })
        local st = tide.stack({ a, a }, 2)
        assert.are.same({ 3, 2 }, { st:size(1), st:size(2) })
        close(st:select(2, 2), flat(a))
        local x = tide.tensor({ 1.5, -2.0 }, { requires_grad = true })
        local z = x:to(tide.cfloat)
        assert.are.equal("complex64", z.dtype)
        close(z, { 1.5, 0.0, -2.0, 0.0 })
        assert.are.equal("complex128", tide.arange(2):to({ dtype = tide.cdouble }).dtype)
        assert.are.equal("complex128", x:to(a).dtype)
        z:abs():sum():backward() -- torch: x.to(torch.cfloat).abs().sum() grads sign(x)
        close(x.grad, { 1.0, -1.0 })
    end)

    -- torch.save({"w": z}) / torch.load: a complex tensor in a checkpoint comes back complex
    it("saves and loads in a checkpoint table, sharing storage with its pair", function()
        local path = os.tmpname()
        local f32 = { dtype = "float32" }
        local z = tide.complex(tide.tensor({ 1, 1 }, f32), tide.tensor({ 1, -2 }, f32))
        tide.save({ w = z, pair = tide.view_as_real(z), epoch = 3 }, path)
        local r = tide.load(path)
        os.remove(path)
        assert.is_true(tide.is_complex(r.w))
        assert.are.equal("complex64", r.w.dtype)
        close(r.w, { 1, 1, 1, -2 })
        r.pair[1][1] = 5 -- one tensor in the file: the view is the pair again
        close(r.w, { 5, 1, 1, -2 })
        err(function() tide.save(z, path) end, "tide: save: expected a table of name -> tensor " ..
            "(e.g. model:state_dict()) or a checkpoint table ({model = model:state_dict(), " ..
            "epoch = 3}), got a complex tensor (save {name = z})")
    end)

    -- fuzz findings (ASan round of seeds 44030+): Lua errors where a tide: error belongs
    it("raises tide: errors for hostile arguments, and takes isclose's positions", function()
        local z = tide.complex(tide.ones(2), tide.ones(2))
        err(function() return z:reshape(nil, -1) end,
            "tide: reshape: sizes must be integers, got nil at position 1")
        err(function() return z:new_zeros(nil, 3) end,
            "tide: zeros: sizes must be integers, got nil at position 1")
        err(function() return z:addcmul(2, z) end,
            "tide: addcmul: tensor1 must be a tensor (complex or real), got number")
        err(function() return z:addcdiv_(z, 3) end,
            "tide: addcdiv: tensor2 must be a tensor (complex or real), got number")
        err(function() return z:addcdiv(nil, z) end, -- (CI's fuzz seed 1)
            "tide: addcdiv: tensor1 must be a tensor (complex or real), got nil")
        err(function() return z:isclose(z, tide.ones(1)) end,
            "tide: isclose: rtol must be a number, got a tensor")
        -- torch: z.isclose(z + 1e-3, 1e-2) is true, allclose(z + 1e-3) false
        assert.is_true(z:isclose(z + 1e-3, 1e-2):all():item())
        assert.is_true(z:allclose(z + 1e-3, 0, 1e-2))
        assert.is_false(z:allclose(z + 1e-3))
    end)

    -- torch.complex(real=a, imag=b), torch.polar(abs=, angle=), torch.view_as_real(input=z)
    it("takes PyTorch's keyword names for the functions' tensors", function()
        local a = tide.tensor({ 1, 2 }, { dtype = "float32" })
        close(tide.complex({ real = a, imag = a * 2 }), { 1, 2, 2, 4 })
        close(tide.complex(a, { imag = a }), { 1, 1, 2, 2 })
        close(tide.polar({ abs = a, angle = a * 0 }), { 1, 0, 2, 0 })
        close(tide.view_as_complex({ input = tide.ones(1, 2) }), { 1, 1 })
        assert.are.equal(2, tide.view_as_real({ input = tide.complex(a, a) }):dim())
        err(function() return tide.complex(a, a, { imag = a }) end,
            "tide: complex: imag given twice, as argument #2 and by name; pass it once")
        err(function() return tide.complex({ real = a, img = a }) end,
            "tide: complex: unknown argument img; it takes real, imag")
    end)

    -- RetNet's complex swish and ComplexGroupNorm: torch 1.13 values for
    -- z = complex([[0.5, -1], [2, 0.3]], [[1, 0.2], [-0.5, 0.7]])
    it("computes sigmoid, tanh, var and std as PyTorch's", function()
        local f32 = { dtype = "float32" }
        local z = tide.complex(tide.tensor({ { 0.5, -1 }, { 2, 0.3 } }, f32),
            tide.tensor({ { 1, 0.2 }, { -0.5, 0.7 } }, f32))
        close(z:sigmoid(), { 0.6562, 0.2523, 0.2671, 0.0394, 0.8908, -0.0517, 0.5841, 0.1779 })
        close(tide.sigmoid(z), flat(z:sigmoid()))
        close(z:tanh(), { 1.0428, 0.8069, -0.7744, 0.0832, 0.9799, -0.0302, 0.4697, 0.7270 })
        close(z:var(2), { 1.4450, 2.1650 })
        close(z:var(), { 1.9400 })
        close(z:std({ dim = 1 }), { 1.5000, 0.9849 })
        assert.are.equal("float32", z:var().dtype)
    end)

    -- the docs review's findings (torch 1.13 values)
    it("promotes 0-d tensors as scalars, raises for the orderless operators, takes any exponent",
        function()
            local z = tide.complex(tide.ones(2), tide.ones(2))
            local d = tide.tensor(2.0, { dtype = "float64" })
            for _, r in ipairs({ z * d, z + d, z / d, d * z, z - d }) do
                assert.are.equal("complex64", r.dtype) -- torch: complex64 (a 0-d float64)
            end
            local x = tide.tensor({ 1, 2 }, { dtype = "float32" })
            close(z:addcmul(x, x), { 2, 1, 5, 1 })
            close(z:addcdiv(x, x, 2), { 3, 1, 3, 1 })
            close(x ^ z, { 1, 0, 1.5385, 1.2779 }) -- torch: x ** z
            close(z ^ z, { 0.2740, 0.5837, 0.2740, 0.5837 })
            close(z ^ x, { 1, 1, 0, 2 })
            err(function() return z % 2 end, "tide: remainder: complex tensors do not support " ..
                "it (no order on complex numbers); use z.real and z.imag")
            err(function() return z < z end, "tide: lt: complex tensors do not support it (no " ..
                "order on complex numbers); use z.real and z.imag")
            if _VERSION ~= "Lua 5.1" then -- (5.1 and LuaJIT take no __len for a table)
                assert.are.equal(2, #z)
            end
            assert.are.equal("complex64", tide.rand_like(x, { dtype = tide.cfloat }).dtype)
            local leaf = tide.view_as_complex(tide.ones(2, 2, { requires_grad = true }))
            err(function() return leaf:mul_(2) end, "tide: mul_: in-place operation on a leaf " ..
                "tensor that requires grad; wrap it in tide.no_grad or use detach()")
        end)
end)
