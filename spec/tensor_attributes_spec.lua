-- tensor_attributes_spec.lua — tide's tensor attributes and method names against PyTorch 1.13's
-- (dir(torch.Tensor) on a float CPU tensor, a leaf requiring grad, a non-leaf and a complex one;
-- the values below are PyTorch's output), and the thin methods added in tide.aliases
local tide = require("tide")

local f32 = { dtype = "float32" }
local function plain() return tide.tensor({ { 1, -2, 3 }, { 4, 5, 0 / 0 } }, f32) end
local function leaf()
    return tide.tensor({ { 1, 2, 3 }, { 4, 5, 6 } }, { dtype = "float32", requires_grad = true })
end

-- PyTorch: is_cpu True, every other is_<backend> False, layout torch.strided, name None
local FALSE = { "is_cuda", "is_ipu", "is_meta", "is_mkldnn", "is_mps", "is_nested", "is_ort",
    "is_quantized", "is_sparse", "is_sparse_csr", "is_vulkan", "is_xpu", "retains_grad" }

local function common(t, ndim, dtype)
    assert.are.equal("cpu", tostring(t.device))
    assert.are.equal(dtype, t.dtype)
    assert.are.equal(ndim, t.ndim)
    assert.is_true(t.is_cpu)
    assert.are.equal("strided", t.layout)
    assert.is_nil(t.name)
    for _, k in ipairs(FALSE) do
        assert.are.equal(false, t[k], k)
    end
end

describe("tensor attributes as PyTorch 1.13's", function()
    it("a float CPU tensor", function()
        local t = plain()
        common(t, 2, "float32")
        assert.are.same({ 2, 3 }, t.shape)
        assert.is_true(t.is_leaf)
        assert.is_false(t.requires_grad)
        assert.is_nil(t.grad)
        assert.is_nil(t.grad_fn)
        assert.are.same({ 3, 2 }, t.T.shape)
        assert.are.same({ 3, 2 }, t.mT.shape)
        assert.are.same({ 3, 2 }, t.H.shape)
        assert.are.same({ 3, 2 }, t.mH.shape)
        assert.are.same({ 2, 3 }, t.data.shape)
        assert.are.equal(-2, t.T[2][1]:item())
    end)

    it("a leaf requiring grad and a non-leaf", function()
        local x = leaf()
        common(x, 2, "float32")
        assert.is_true(x.is_leaf)
        assert.is_true(x.requires_grad)
        assert.is_nil(x.grad_fn)
        local y = x * 2
        common(y, 2, "float32")
        assert.is_false(y.is_leaf)
        assert.is_true(y.requires_grad)
        assert.are.equal("MulBackward0", tostring(y.grad_fn))
        assert.is_false(y.data.requires_grad)
    end)

    it("a complex tensor: dtype, real and imag", function()
        local z = tide.complex(tide.tensor({ { 1, 3 }, { 2, 4 } }, f32),
            tide.tensor({ { 2, -1 }, { 0, 1 } }, f32))
        assert.are.equal("complex64", z.dtype)
        assert.are.equal(2, z.ndim)
        assert.is_true(z.is_cpu)
        assert.are.equal("strided", z.layout)
        assert.are.equal("float32", z.real.dtype)
        assert.are.same({ { 2, -1 }, { 0, 1 } }, z.imag:tolist())
        assert.are.same({ 2, 2 }, z.mH.shape)
    end)

    pending("z.is_xpu ... is_sparse_csr, z.data: nil on a complex tensor (PyTorch: False, the " ..
        "tensor); lua/tide/complex/tensor.lua's PROPS needs them (not this file's owner)")
    pending("t.output_nr nil (PyTorch 0; the output's index for a multi-output op): needs C")
    pending("t.names nil (PyTorch (None, None): a tuple of None, which a Lua list cannot hold)")
    pending("t._version is tide's method t:_version() (PyTorch an int attribute); kept: tide " ..
        "code calls it")
end)

describe("PyTorch's thin tensor methods", function()
    it("conj, conj_physical(_), resolve_conj, resolve_neg return the real tensor itself", function()
        local t = plain()
        for _, k in ipairs({ "conj", "conj_physical", "conj_physical_", "resolve_conj",
            "resolve_neg" }) do
            assert.are.equal(t, t[k](t), k)
        end
        assert.has_error(function() t:conj(1) end)
    end)

    it("is_conj, is_neg, is_inference, is_distributed, has_names are false", function()
        local t = plain()
        for _, k in ipairs({ "is_conj", "is_neg", "is_inference", "is_distributed",
            "has_names" }) do
            assert.are.equal(false, t[k](t), k)
        end
    end)

    it("is_xpu and the other backends' flags cannot be set", function()
        local t = plain()
        assert.has_error(function() t.is_xpu = true end)
        assert.is_false(t.is_xpu)
    end)

    it("adjoint, angle, cfloat, cdouble", function()
        local t = plain()
        local adj = t:adjoint():tolist()
        assert.are.same({ { 1, 4 }, { -2, 5 } }, { adj[1], adj[2] })
        assert.are.equal(3, adj[3][1])
        assert.is_true(adj[3][2] ~= adj[3][2])
        assert.has_error(function() tide.ones(3):adjoint() end,
            "tide: adjoint: only supported on matrices or batches of matrices, got a tensor " ..
            "of 1 dims")
        -- torch: t.angle() -> [[0, 3.1416, 0], [0, 0, nan]]; int64 [1, -2] -> float [0, 3.1416]
        local a = t:angle():tolist()
        assert.are.same({ 0, 0 }, { a[1][1], a[1][3] })
        assert.is_true(math.abs(a[1][2] - math.pi) < 1e-6)
        assert.is_true(a[2][3] ~= a[2][3])
        local ai = tide.tensor({ 1, -2 }, { dtype = "int64" }):angle()
        assert.are.equal("float32", ai.dtype)
        assert.is_true(math.abs(ai[2]:item() - math.pi) < 1e-6)
        -- torch: angle of [-0., inf, -inf] -> [0, 0, pi]; grad of angle().sum() is 0
        local x = tide.tensor({ -0.0, 1 / 0, -1 / 0 }, f32):angle():tolist()
        assert.are.equal(0, x[1]); assert.are.equal(0, x[2])
        assert.is_true(math.abs(x[3] - math.pi) < 1e-6)
        local l = tide.tensor({ 1, -2 }, { dtype = "float32", requires_grad = true })
        local y = l:angle()
        assert.is_true(y.requires_grad)
        y:sum():backward()
        assert.are.same({ 0, 0 }, l.grad:tolist())
        assert.are.equal("complex64", t:cfloat().dtype)
        assert.are.same({ 5, 0 }, { t:cfloat()[2][2]:item() })
        assert.are.equal("complex128", tide.tensor({ 1, -2 }, { dtype = "int64" }):cdouble().dtype)
    end)

    it("stft is tide.stft", function()
        local x = tide.arange(16, f32)
        local a = x:stft(8, { hop_length = 4, return_complex = true, window = tide.ones(8, f32) })
        local b = tide.stft(x, 8, { hop_length = 4, return_complex = true,
            window = tide.ones(8, f32) })
        assert.are.same(b.shape, a.shape)
        assert.are.same(b.real:tolist(), a.real:tolist())
    end)

    it("is_set_to: the same memory and geometry", function()
        local t = plain()
        -- torch: t, t.view(2,3), t.t() vs t.T: True; t.clone(), t[0]: False
        assert.is_true(t:is_set_to(t))
        assert.is_true(t:is_set_to(t:view(2, 3)))
        assert.is_true(t:t():is_set_to(t.T))
        assert.is_false(t:is_set_to(t:clone()))
        assert.is_false(t:is_set_to(t[1]))
        assert.is_false(t:is_set_to(t:view(3, 2)))
    end)

    it("new_empty_strided and unsafe_split_with_sizes", function()
        local t = plain()
        local e = t:new_empty_strided({ 2, 2 }, { 1, 2 }) -- torch: stride() (1, 2)
        assert.are.same({ 1, 2 }, e:stride())
        assert.are.same({ 2, 2 }, e.shape)
        assert.are.equal("float32", e.dtype)
        local d = t:new_empty_strided({ 3 }, { 2 }, { dtype = "float64", requires_grad = true })
        assert.are.equal("float64", d.dtype)
        assert.is_true(d.requires_grad and d.is_leaf)
        assert.has_error(function() t:new_empty_strided({ 2 }, { 1, 1 }) end,
            "tide: new_empty_strided: 1 sizes and 2 strides; give one stride per size")
        local p = t:unsafe_split_with_sizes({ 1, 1 })
        assert.are.same({ 1, -2, 3 }, p[1][1]:tolist())
        assert.are.same({ 1, 3 }, p[2].shape)
        assert.has_error(function() t:unsafe_split_with_sizes(1) end)
    end)

    pending("not in tide (need kernels or other layouts): chalf (complex32), istft as a real " ..
        "tensor's method, as_strided_scatter, resize/resize_as (old Variable API), storage, " ..
        "storage_type, record_stream, ipu/xpu/to_mkldnn, named tensors (align_as, align_to, " ..
        "refine_names, rename(_)), sparse/quantized/nested (coalesce, indices, values, " ..
        "to_sparse_*, q_*, int_repr, dequantize, smm, sspaddmm, to_padded_tensor, ...), " ..
        "as_subclass, reinforce")
end)
