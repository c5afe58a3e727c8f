-- ported_scripts114_spec.lua — PyTorch 1.13's "Complex Numbers" note
-- (docs/source/complex_numbers.rst) and the Examples blocks of torch.fft's docstrings
-- (torch/fft/__init__.py: fft ifft fft2 rfft irfft rfft2 irfft2 hfft ihfft fftn fftfreq
-- rfftfreq fftshift ifftshift) with torch.stft / torch.istft's doc notes, ported example by
-- example on tide's complex tensors and tide.fft. The Python lines stand as comments above the
-- Lua; where tide prints the same body as PyTorch the printout is asserted (tostring(z) less
-- tide's last line, the "[tide.Tensor of shape ...]" one). Values PyTorch does not print in the
-- docs were computed with PyTorch 1.13 in the venv. Dims are 1-based. -- GAP: marks each place
-- tide differs or refuses.
local tide = require("tide")
local fft = tide.fft

local ported = require("spec.support.ported")
local assert_close_list = ported.assert_close_list

-- tostring(z) without tide's last line: the body PyTorch prints inside tensor(...)
local function body(z)
    return (tostring(z):gsub("\n[^\n]*$", ""))
end

-- a complex tensor's parts, re1, im1, re2, ... (view_as_real flattened)
local function parts(z)
    return tide.view_as_real(z):flatten():totable()
end

-- z's shape as a plain list
local function dims(z)
    local s, t = z:size(), {}
    for i = 1, #s do
        t[i] = s[i]
    end
    return t
end

local function cplx(re, im)
    -- (float32 explicitly: Lua 5.1 has no 1.0 / 1 distinction for tide.tensor to read)
    return tide.complex(tide.tensor(re, { dtype = tide.float32 }),
        tide.tensor(im, { dtype = tide.float32 }))
end

local function raises(pattern, f)
    local ok, err = pcall(f)
    assert.is_false(ok)
    assert.matches(pattern, tostring(err), 1, true)
end

describe("ported: PyTorch's Complex Numbers note", function()
    it("creates complex tensors (two dtypes; the default follows the float dtype)", function()
        -- >>> x = torch.randn(2,2, dtype=torch.cfloat)
        tide.manual_seed(0)
        local x = tide.randn(2, 2, { dtype = tide.cfloat })
        assert.are.same({ 2, 2 }, dims(x))
        assert.are.equal("complex64", x.dtype)
        -- randn's parts are N(0, 1/2) each (PyTorch's); random values differ from PyTorch's
        assert.is_true(x:abs():max():item() < 10)
        -- torch.set_default_dtype(torch.float64); torch.tensor([1j]).dtype -> complex128.
        -- tide has no complex literal: tide.complex(re, im) takes the parts' dtype.
        tide.set_default_dtype(tide.float64)
        local ok, d = pcall(function()
            return tide.complex(tide.tensor({ 1.5 }), tide.tensor({ 2.5 })).dtype
        end)
        tide.set_default_dtype(tide.float32)
        assert.is_true(ok, d)
        assert.are.equal("complex128", d)
        local c64 = tide.complex(tide.tensor({ 1.5 }), tide.tensor({ 2.5 }))
        assert.are.equal("complex64", c64.dtype)
        -- "All factory functions apart from linspace, logspace and arange are supported"
        -- (1.13 does support linspace / logspace; arange raises there too)
        assert.are.equal("[0.0000+0.j, 0.5000+0.j, 1.0000+0.j]",
            body(tide.linspace(0, 1, 3, { dtype = tide.cfloat })))
        assert.are.equal("[ 1.0000+0.j,  3.1623+0.j, 10.0000+0.j]",
            body(tide.logspace(0, 1, 3, { dtype = tide.cfloat })))
        assert.are.equal("complex128", tide.zeros(2, { dtype = tide.cdouble }).dtype)
        raises("tide: arange: unknown dtype complex64", function()
            tide.arange(0, 3, { dtype = tide.cfloat })
        end)
        -- >>> torch.eye(2, dtype=torch.cfloat)   -> [[1.+0.j, 0.+0.j], [0.+0.j, 1.+0.j]]
        local eye = tide.eye(2, { dtype = tide.cfloat })
        assert.are.equal("complex64", eye.dtype)
        assert.are.equal("[[1.+0.j, 0.+0.j],\n [0.+0.j, 1.+0.j]]", body(eye))
        local rect = tide.eye(2, 3, { dtype = tide.cdouble, device = "cpu:1" })
        assert.are.same({ { { 1, 0 }, { 0, 0 }, { 0, 0 } }, { { 0, 0 }, { 1, 0 }, { 0, 0 } } },
            tide.view_as_real(rect):cpu():totable())
        assert.are.equal("cpu:1", tostring(rect.device))
    end)

    it("moves from the old (..., 2) representation: view_as_complex / view_as_real", function()
        -- >>> x = torch.randn(3, 2)   (the note's printed values)
        local x = tide.tensor({ { 0.6125, -0.1681 }, { -0.3773, 1.3487 }, { -0.0861, -0.7981 } })
        assert.are.equal("[[ 0.6125, -0.1681],\n [-0.3773,  1.3487],\n [-0.0861, -0.7981]]",
            body(x))
        -- >>> y = torch.view_as_complex(x)
        local y = tide.view_as_complex(x)
        assert.are.equal("[ 0.6125-0.1681j, -0.3773+1.3487j, -0.0861-0.7981j]", body(y))
        -- >>> torch.view_as_real(y)
        assert.are.equal(body(x), body(tide.view_as_real(y)))
        -- no copy: a write to x shows in y
        x[1][1] = 1.5
        assert_close_list({ 1.5, -0.1681 }, { y[1]:item() }, 1e-6, "y[1]")
        -- accessing real and imag
        x[1][1] = 0.6125
        -- >>> y.real / >>> y.imag
        assert.are.equal("[ 0.6125, -0.3773, -0.0861]", body(y.real))
        assert.are.equal("[-0.1681,  1.3487, -0.7981]", body(y.imag))
        -- >>> y.real.mul_(2)
        assert.are.equal("[ 1.2250, -0.7546, -0.1722]", body(y.real:mul_(2)))
        -- >>> y
        assert.are.equal("[ 1.2250-0.1681j, -0.7546+1.3487j, -0.1722-0.7981j]", body(y))
        -- >>> y.real.stride()   -> (2,)   ("the returned real and imag are not contiguous")
        assert.are.same({ 2 }, y.real:stride())
        assert.is_false(y.real:is_contiguous())

        -- Serialization:
        -- >>> torch.save(y, 'complex_tensor.pt'); torch.load('complex_tensor.pt')
        -- GAP: tide.save takes a table (documented, as for a real tensor):
        local path = os.tmpname()
        raises("tide: save: expected a table of name -> tensor", function()
            tide.save(y, path)
        end)
        tide.save({ y = y }, path)
        local back = tide.load(path).y
        os.remove(path)
        assert.are.equal("[ 1.2250-0.1681j, -0.7546+1.3487j, -0.1722-0.7981j]", body(back))
        assert.are.equal("complex64", back.dtype)
    end)

    it("computes angle and abs", function()
        -- >>> x1=torch.tensor([3j, 4+4j])   (no complex literal: tide.complex(re, im))
        local x1 = cplx({ 0.0, 4.0 }, { 3.0, 4.0 })
        -- >>> x1.abs()   -> tensor([3.0000, 5.6569])
        assert.are.equal("[3.0000, 5.6569]", body(x1:abs()))
        -- >>> x1.angle()   -> tensor([1.5708, 0.7854])
        assert.are.equal("[1.5708, 0.7854]", body(x1:angle()))
        assert.are.equal(body(x1:abs()), body(tide.abs(x1)))
        assert.are.equal(body(x1:angle()), body(tide.angle(x1)))
        -- integer parts (Python's 3j has float parts) raise a clear error; give floats:
        raises("tide: complex: real and imag must both be float32 or both float64, got int64",
            function()
                tide.complex(tide.tensor({ 0, 4 }), tide.tensor({ 3, 4 }))
            end)
    end)

    it("does linear algebra: matmul, solve, inv, det, svdvals; the rest of linalg raises", function()
        local a = cplx({ { 1.0, 2 }, { 3, 4 } }, { { 0.5, -1 }, { 2, 0 } })
        local b = cplx({ { 0.0, 1 }, { -1, 2 } }, { { 1.0, 1 }, { 0, -2 } })
        -- >>> a @ b   (PyTorch 1.13)
        local want = "[[-2.5000+2.0000j,  2.5000-4.5000j],\n [-6.0000+3.0000j,  9.0000-3.0000j]]"
        assert.are.equal(want, body(a:matmul(b)))
        assert.are.equal(want, body(tide.matmul(a, b)))
        assert.are.equal(want, body(a:mm(b)))
        -- >>> torch.mv(a, b[0])   -> tensor([2.5000+2.j, 2.0000+7.j])   (the note names mv)
        -- GAP (documented: mv is not among the complex methods); a:matmul(v) computes it:
        raises("tide: mv: complex tensors support", function() a:mv(b[1]) end)
        raises("tide: mv: expected a tensor at argument #1, got a complex tensor",
            function() tide.mv(a, b[1]) end)
        assert.are.equal("[2.5000+2.j, 2.0000+7.j]", body(a:matmul(b[1])))
        -- torch.linalg.solve / inv / det / slogdet take complex, as PyTorch 1.13's:
        -- >>> torch.linalg.det(a), torch.linalg.solve(a, b), torch.linalg.inv(a), slogdet(a)
        assert.are.equal("-4.0000+1.0000j", body(tide.linalg.det(a)))
        assert.are.equal("[[-0.2941-0.8235j,  0.1176-2.4706j],\n [-0.4412+0.7647j, " ..
            "-0.8235+1.2941j]]", body(tide.linalg.solve(a, b)))
        assert.are.equal("[[-0.9412-0.2353j,  0.5294-0.1176j],\n [ 0.5882+0.6471j, " ..
            "-0.2059-0.1765j]]", body(tide.linalg.inv(a)))
        local sign, logabs = tide.linalg.slogdet(a)
        assert.are.equal("-0.9701+0.2425j", body(sign))
        assert.is_true(math.abs(logabs:item() - 1.4166) < 1e-4)
        -- >>> torch.linalg.svdvals(a)  -> tensor([5.8958, 0.6993])
        local sv = tide.linalg.svdvals(a)
        assert.is_true(math.abs(sv[1]:item() - 5.8958) < 1e-4 and
            math.abs(sv[2]:item() - 0.6993) < 1e-4)
        -- torch.linalg.*'s others: PyTorch supports complex; tide refuses (documented: the
        -- real ops given a complex tensor), each a clear tide: error (svd now works:
        -- spec/complex_svd_ex_spec.lua)
        local ops = { "eigh", "eigvalsh",
            "qr", "cholesky", "matrix_norm", "pinv", "lstsq", "lu_factor",
            "matrix_exp", "matrix_power", "matrix_rank", "cond" }
        for _, n in ipairs(ops) do
            local ok, err = pcall(tide.linalg[n], a, b)
            assert.is_false(ok, n)
            assert.matches("tide: linalg%.[%w_]+: expected a tensor at argument #1, got a " ..
                "complex tensor %(for the real ops", tostring(err))
        end
        -- but vector norms are those of |a|, as PyTorch's: torch.linalg.norm(a) = 5.9372,
        -- torch.linalg.vector_norm(a, 1) = 10.9597
        assert.is_true(math.abs(tide.linalg.norm(a):item() - math.sqrt(35.25)) < 1e-5)
        assert.is_true(math.abs(tide.linalg.vector_norm(a, 1):item() - (math.sqrt(1.25) +
            math.sqrt(5) + math.sqrt(13) + 4)) < 1e-5)
        raises("tide: linalg.multi_dot: expected a tensor at argument #1, got a complex tensor",
            function() tide.linalg.multi_dot({ a, b }) end)
        -- PyTorch: "Expected A and B to have the same dtype"
        raises("tide: linalg.solve: argument #1: expected a complex tensor with the other one",
            function() tide.linalg.solve(a.real, b) end)
        raises("tide: trace: complex tensors support", function() a:trace() end)
        -- tide.inverse(a) is torch.inverse(a)
        assert.are.equal(body(tide.linalg.inv(a)), body(tide.inverse(a)))
    end)

    it("gives the conjugate Wirtinger gradient of a real loss (PyTorch's z.grad)", function()
        -- z = torch.view_as_complex(xr).clone().requires_grad_()
        -- w = torch.complex(torch.tensor([0.3,-0.2,0.1]), torch.tensor([0.7,0.4,-0.6]))
        -- loss = ((z*w).exp() + z.conj()*z.sin()).abs().sum(); loss.backward()
        local want_loss = 12.028938293457031
        local want_grad = { 1.6732802, -4.3207006, -0.2271708, 0.180874, -1.0930767, 7.1040764 }
        local w = cplx({ 0.3, -0.2, 0.1 }, { 0.7, 0.4, -0.6 })
        -- a complex leaf: z.grad is PyTorch's
        local z = cplx({ 0.5, 2.0, -0.75 }, { -1.0, 0.25, 1.5 }):requires_grad_()
        local loss = ((z * w):exp() + z:conj() * z:sin()):abs():sum()
        loss:backward()
        assert.is_true(ported.close(loss:item(), want_loss, 1e-5))
        assert.is_true(z.is_leaf)
        assert_close_list(want_grad, parts(z.grad), 1e-4, "z.grad")
        -- the old representation: the real leaf's grad is view_as_real(z.grad)
        local xr = tide.tensor({ { 0.5, -1.0 }, { 2.0, 0.25 }, { -0.75, 1.5 } },
            { requires_grad = true })
        local zr = tide.view_as_complex(xr)
        local lr = ((zr * w):exp() + zr:conj() * zr:sin()):abs():sum()
        lr:backward()
        assert_close_list(want_grad, xr.grad:flatten():totable(), 1e-4, "xr.grad")
        -- one SGD step along -grad lowers the loss ("optimizers work out of the box")
        local z2 = (z:detach() - z.grad * 0.01)
        local l2 = ((z2 * w):exp() + z2:conj() * z2:sin()):abs():sum():item()
        assert.is_true(l2 < loss:item())
        -- z:backward() of a complex z raises (reduce to a real loss first)
        local ok = pcall(function() (z * w):backward() end)
        assert.is_false(ok)
    end)

    it("names the subsystems without complex support (sparse, distributed)", function()
        local v = cplx({ 1.0, 2.0 }, { 0.0, 1.0 })
        -- torch.sparse_coo_tensor of complex values: PyTorch 1.13 builds one; tide refuses
        -- (was a wrong "values must be [nnz, ...] ... got {0}": fixed, lua/tide/sparse/ops.lua)
        raises("tide: sparse_coo_tensor: expected indices and values tensors, got a tensor " ..
            "and a complex tensor", function()
                tide.sparse_coo_tensor(tide.tensor({ { 1, 2 } }), v, { 3 })
            end)
        raises("tide: to_sparse: complex tensors support", function() v:to_sparse() end)
        -- distributed: named a complex tensor (was "got table": lua/tide/distributed/init.lua)
        raises("tide: all_reduce: expected a tensor, got a complex tensor", function()
            tide.distributed.all_reduce(v)
        end)
    end)
end)

describe("ported: torch.fft's docstring examples", function()
    it("fft and ifft", function()
        -- >>> t = torch.arange(4)
        local t = tide.arange(0, 4)
        assert.are.equal("[0, 1, 2, 3]", body(t))
        -- >>> torch.fft.fft(t)
        assert.are.equal("[ 6.+0.j, -2.+2.j, -2.+0.j, -2.-2.j]", body(fft.fft(t)))
        -- >>> t = torch.tensor([0.+1.j, 2.+3.j, 4.+5.j, 6.+7.j]); torch.fft.fft(t)
        local c = cplx({ 0.0, 2, 4, 6 }, { 1.0, 3, 5, 7 })
        assert.are.equal("[12.+16.j, -8.+0.j, -4.-4.j,  0.-8.j]", body(fft.fft(c)))
        -- >>> t = torch.tensor([ 6.+0.j, -2.+2.j, -2.+0.j, -2.-2.j]); torch.fft.ifft(t)
        local T = cplx({ 6.0, -2, -2, -2 }, { 0.0, 2, 0, -2 })
        assert.are.equal("[0.+0.j, 1.+0.j, 2.+0.j, 3.+0.j]", body(fft.ifft(T)))
    end)

    it("fft2 and fftn are two 1-D ffts", function()
        -- >>> x = torch.rand(10, 10, dtype=torch.complex64)
        tide.manual_seed(1)
        local x = tide.rand(10, 10, { dtype = tide.complex64 })
        -- >>> fft2 = torch.fft.fft2(x)
        local f2 = fft.fft2(x)
        -- >>> two_ffts = torch.fft.fft(torch.fft.fft(x, dim=0), dim=1)
        local two = fft.fft(fft.fft(x, { dim = 1 }), { dim = 2 })
        -- >>> torch.testing.assert_close(fft2, two_ffts, check_stride=False)
        assert.is_true(f2:allclose(two, { rtol = 1.3e-6, atol = 1e-5 }))
        -- >>> fftn = torch.fft.fftn(x); assert_close(fftn, two_ffts)
        assert.is_true(fft.fftn(x):allclose(two, { rtol = 1.3e-6, atol = 1e-5 }))
        assert.are.same({ 10, 10 }, dims(f2))
        -- the DC term is the sum
        assert_close_list(parts(x:sum()), parts(f2[1][1]), 1e-5, "fft2 DC")
    end)

    it("rfft, irfft", function()
        local t = tide.arange(0, 4)
        -- >>> torch.fft.rfft(t)
        assert.are.equal("[ 6.+0.j, -2.+2.j, -2.+0.j]", body(fft.rfft(t)))
        -- >>> torch.fft.fft(t)
        assert.are.equal("[ 6.+0.j, -2.+2.j, -2.+0.j, -2.-2.j]", body(fft.fft(t)))
        -- >>> t = torch.linspace(0, 1, 5)
        local tl = tide.linspace(0, 1, 5)
        assert.are.equal("[0.0000, 0.2500, 0.5000, 0.7500, 1.0000]", body(tl))
        -- >>> T = torch.fft.rfft(t)
        local T = fft.rfft(tl)
        assert.are.equal("[ 2.5000+0.0000j, -0.6250+0.8602j, -0.6250+0.2031j]", body(T))
        -- >>> torch.fft.irfft(T)
        assert.are.equal("[0.1562, 0.3511, 0.7812, 1.2114]", body(fft.irfft(T)))
        -- >>> roundtrip = torch.fft.irfft(T, t.numel())
        local roundtrip = fft.irfft(T, tl:numel())
        -- >>> torch.testing.assert_close(roundtrip, t, check_stride=False)
        -- (PyTorch's roundtrip[0] is 0.0; tide's is -3.7e-09, float32 rounding)
        assert.is_true(roundtrip:allclose(tl, { rtol = 1.3e-6, atol = 1e-5 }))
    end)

    it("rfft2, irfft2", function()
        -- >>> t = torch.rand(10, 10); rfft2 = torch.fft.rfft2(t); rfft2.size()
        tide.manual_seed(2)
        local t = tide.rand(10, 10)
        local r2 = fft.rfft2(t)
        assert.are.same({ 10, 6 }, dims(r2))
        -- >>> fft2 = torch.fft.fft2(t); assert_close(fft2[..., :6], rfft2)
        local f2 = fft.fft2(t)
        assert.is_true(f2[{ "...", { 1, 6 } }]:allclose(r2, { rtol = 1.3e-6, atol = 1e-5 }))
        -- >>> two_ffts = torch.fft.fft(torch.fft.rfft(t, dim=1), dim=0)
        local two = fft.fft(fft.rfft(t, { dim = 2 }), { dim = 1 })
        assert.is_true(r2:allclose(two, { rtol = 1.3e-6, atol = 1e-5 }))
        -- >>> t = torch.rand(10, 9); T = torch.fft.rfft2(t)
        local t9 = tide.rand(10, 9)
        local T = fft.rfft2(t9)
        -- >>> torch.fft.irfft2(T).size()   -> torch.Size([10, 8])
        assert.are.same({ 10, 8 }, dims(fft.irfft2(T)))
        -- >>> roundtrip = torch.fft.irfft2(T, t.size()); roundtrip.size()
        local roundtrip = fft.irfft2(T, t9:size())
        assert.are.same({ 10, 9 }, dims(roundtrip))
        assert.is_true(roundtrip:allclose(t9, { rtol = 1.3e-6, atol = 1e-5 }))
    end)

    it("hfft, ihfft", function()
        local tl = tide.linspace(0, 1, 5)
        -- >>> T = torch.fft.ifft(t)
        local T = fft.ifft(tl)
        -- PyTorch prints " 0.5000-0.0000j": its DC imaginary part is -0.0.
        -- GAP: tide's is +0.0, so the body differs in that one sign (not a wrong value):
        assert.are.equal("[ 0.5000+0.0000j, -0.1250-0.1720j, -0.1250-0.0406j, -0.1250+0.0406j,\n" ..
            " -0.1250+0.1720j]", body(T))
        assert_close_list({ 0.5, -0.0, -0.125, -0.1720477, -0.125, -0.040615, -0.125, 0.040615,
            -0.125, 0.1720477 }, parts(T), 1e-5, "ifft(t)")
        -- >>> torch.fft.hfft(T[:3], n=5)   -> tensor([0.0000, 0.2500, 0.5000, 0.7500, 1.0000])
        -- GAP: tide's first value is 1.5e-08 (float32 rounding; PyTorch's is 0.0), so tide
        -- prints it in scientific notation; the values:
        local h5 = fft.hfft(T[{ { 1, 3 } }], { n = 5 })
        assert_close_list({ 0.0, 0.25, 0.5, 0.75, 1.0 }, h5:totable(), 1e-6, "hfft n=5")
        -- >>> torch.fft.hfft(T[:3])
        assert.are.equal("[0.1250, 0.2809, 0.6250, 0.9691]", body(fft.hfft(T[{ { 1, 3 } }])))
        -- >>> t = torch.arange(5); torch.fft.ihfft(t)
        -- PyTorch: tensor([ 2.0000-0.0000j, -0.5000-0.6882j, -0.5000-0.1625j]); GAP: +0.0000j
        local t5 = tide.arange(0, 5)
        assert.are.equal("[ 2.0000+0.0000j, -0.5000-0.6882j, -0.5000-0.1625j]",
            body(fft.ihfft(t5)))
        assert_close_list({ 2.0, -0.0, -0.5, -0.688191, -0.5, -0.1624598 }, parts(fft.ihfft(t5)),
            1e-5, "ihfft")
        -- >>> torch.fft.ifft(t)   (same sign of zero at DC)
        assert.are.equal("[ 2.0000+0.0000j, -0.5000-0.6882j, -0.5000-0.1625j, -0.5000+0.1625j,\n" ..
            " -0.5000+0.6882j]", body(fft.ifft(t5)))
    end)

    it("fftfreq, rfftfreq, fftshift, ifftshift", function()
        -- >>> torch.fft.fftfreq(5) / fftfreq(4) / rfftfreq(5) / rfftfreq(4)
        assert.are.equal("[ 0.0000,  0.2000,  0.4000, -0.4000, -0.2000]", body(fft.fftfreq(5)))
        assert.are.equal("[ 0.0000,  0.2500, -0.5000, -0.2500]", body(fft.fftfreq(4)))
        assert.are.equal("[0.0000, 0.2000, 0.4000]", body(fft.rfftfreq(5)))
        assert.are.equal("[0.0000, 0.2500, 0.5000]", body(fft.rfftfreq(4)))
        -- >>> f = torch.fft.fftfreq(4); torch.fft.fftshift(f)
        assert.are.equal("[-0.5000, -0.2500,  0.0000,  0.2500]", body(fft.fftshift(fft.fftfreq(4))))
        -- >>> x = torch.fft.fftfreq(5, d=1/5) + 0.1 * torch.fft.fftfreq(5, d=1/5).unsqueeze(1)
        local x = fft.fftfreq(5, 1 / 5) + fft.fftfreq(5, 1 / 5):unsqueeze(2) * 0.1
        assert.are.equal(table.concat({
            "[[ 0.0000,  1.0000,  2.0000, -2.0000, -1.0000],",
            " [ 0.1000,  1.1000,  2.1000, -1.9000, -0.9000],",
            " [ 0.2000,  1.2000,  2.2000, -1.8000, -0.8000],",
            " [-0.2000,  0.8000,  1.8000, -2.2000, -1.2000],",
            " [-0.1000,  0.9000,  1.9000, -2.1000, -1.1000]]" }, "\n"), body(x))
        -- >>> torch.fft.fftshift(x)
        assert.are.equal(table.concat({
            "[[-2.2000, -1.2000, -0.2000,  0.8000,  1.8000],",
            " [-2.1000, -1.1000, -0.1000,  0.9000,  1.9000],",
            " [-2.0000, -1.0000,  0.0000,  1.0000,  2.0000],",
            " [-1.9000, -0.9000,  0.1000,  1.1000,  2.1000],",
            " [-1.8000, -0.8000,  0.2000,  1.2000,  2.2000]]" }, "\n"), body(fft.fftshift(x)))
        -- >>> x_centered = torch.arange(-5, 5)
        local x_centered = tide.arange(-5, 5)
        -- >>> x_uncentered = torch.fft.ifftshift(x_centered)
        local x_uncentered = fft.ifftshift(x_centered)
        assert.are.same({ 0, 1, 2, 3, 4, -5, -4, -3, -2, -1 }, x_uncentered:totable())
        -- >>> fft_uncentered = torch.fft.fft(x_uncentered)
        local fft_uncentered = fft.fft(x_uncentered)
        -- >>> fft_centered = torch.fft.fftshift(fft_uncentered)
        local fft_centered = fft.fftshift(fft_uncentered)
        -- >>> x_centered_2 = torch.fft.fftshift(torch.fft.ifft(torch.fft.ifftshift(fft_centered)))
        local x_centered_2 = fft.fftshift(fft.ifft(fft.ifftshift(fft_centered)))
        -- >>> torch.testing.assert_close(x_centered.to(torch.complex64), x_centered_2)
        assert.is_true(x_centered:to(tide.complex64):allclose(x_centered_2,
            { rtol = 1.3e-6, atol = 1e-5 }))
        -- >>> f = torch.fft.fftfreq(5); shifted = torch.fft.fftshift(f)
        -- >>> torch.fft.ifftshift(shifted)
        assert.are.equal("[ 0.0000,  0.2000,  0.4000, -0.4000, -0.2000]",
            body(fft.ifftshift(fft.fftshift(fft.fftfreq(5)))))
    end)
end)

describe("ported: torch.stft / torch.istft doc notes", function()
    -- x = torch.sin(0.7*torch.arange(16.0)) + 0.1*torch.arange(16.0)
    local function signal()
        local n = tide.arange(0, 16):float()
        return (n * 0.7):sin() + n * 0.1
    end

    it("stft: window padded to n_fft, centered frames, onesided, normalized", function()
        local x = signal()
        -- S = torch.stft(x, 8, hop_length=2, win_length=6, window=torch.hann_window(6),
        --                return_complex=True)   -> [5, 9]; S[:, 1]
        local S = tide.stft(x, 8, { hop_length = 2, win_length = 6,
            window = tide.hann_window(6), return_complex = true })
        assert.are.same({ 5, 9 }, dims(S))
        assert_close_list({ 2.79977, 0.0, -2.19702, 0.40595, 1.0017, -0.31424, -0.17388,
            0.03846, -0.06137, 0.0 }, parts(S[{ {}, 2 }]), 1e-4, "stft frame 2")
        -- torch.stft(x, 8, window=torch.hann_window(8), normalized=True, onesided=False,
        --            return_complex=True)   -> [8, 9]; [2, 1] = 0.28919-0.15725j
        local Sn = tide.stft(x, 8, { window = tide.hann_window(8), normalized = true,
            onesided = false, return_complex = true })
        assert.are.same({ 8, 9 }, dims(Sn))
        assert_close_list({ 0.28919, -0.15725 }, parts(Sn[3][2]), 1e-4, "normalized")
        -- return_complex=False: the real [..., 2] tensor (deprecated in PyTorch)
        local Sr = tide.stft(x, 8, { hop_length = 2, window = tide.hann_window(8),
            return_complex = false })
        assert.are.same({ 5, 9, 2 }, dims(Sr))
        -- center=False: frames start at t * hop (default hop floor(8 / 4) = 2) -> [5, 5]
        assert.are.same({ 5, 5 },
            dims(tide.stft(x, 8, { center = false, return_complex = true })))
    end)

    it("istft: least-squares inverse, length, NOLA", function()
        local x = signal()
        local w = tide.hann_window(8)
        -- y = torch.istft(torch.stft(x, 8, hop_length=2, window=w, return_complex=True), 8,
        --                 hop_length=2, window=w, length=16)   -> max |y - x| = 2.4e-07
        local S = tide.stft(x, 8, { hop_length = 2, window = w, return_complex = true })
        local y = tide.istft(S, 8, { hop_length = 2, window = w, length = 16 })
        assert.are.same({ 16 }, dims(y))
        assert.is_true((y - x):abs():max():item() < 1e-5)
        -- hop 8 with a Hann window: the squared overlap-add vanishes (PyTorch raises too)
        local S8 = tide.stft(x, 8, { hop_length = 8, window = w, return_complex = true })
        raises("tide: istft: window overlap add min: 0; the window's squared overlap-add must " ..
            "not vanish (NOLA)", function()
                tide.istft(S8, 8, { hop_length = 8, window = w })
            end)
        -- torch.istft(..., onesided=False, return_complex=True, length=16) -> complex64, x back
        local Sf = tide.stft(x, 8, { hop_length = 2, window = w, return_complex = true,
            onesided = false })
        local z = tide.istft(Sf, 8, { hop_length = 2, window = w, onesided = false,
            return_complex = true, length = 16 })
        assert.are.equal("complex64", z.dtype)
        assert.are.same({ 16 }, z.real:size())
        assert.is_true((z.real - x):abs():max():item() < 1e-6)
        assert.is_true(z.imag:abs():max():item() < 1e-6)
    end)
end)
