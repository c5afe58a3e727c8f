-- namespace_torch_spec.lua — PyTorch 1.13's public callables of torch, torch.linalg,
-- torch.special and torch.fft that tide lacked (audit of dir(torch)): the names added in
-- lua/tide/torch_functions.lua against PyTorch's values (pasted from PyTorch 1.13), and the
-- names left, pending with the reason.
local tide = require("tide")

local function f64(v)
    return tide.tensor(v, { dtype = "float64" })
end

local function close(t, want, tol)
    local got = t:tolist()
    local function walk(a, b, path)
        if type(b) == "table" then
            assert.are.equal(#b, #a, "length at " .. path)
            for i = 1, #b do
                walk(a[i], b[i], path .. "[" .. i .. "]")
            end
        else
            assert(math.abs(a - b) <= (tol or 1e-12), ("%s: %s ~= %s"):format(path, a, b))
        end
    end
    walk(got, want, "")
end

local function W(r, c)
    return tide.arange(0, r * c, { dtype = "float64" }):reshape(r, c):div(10):sub(0.5)
end

describe("torch namespace (PyTorch 1.13 names)", function()
    local x = f64({ { 1, 2, 3 }, { 4, 5, 6 } })

    it("methods as functions: adjoint, conj_physical, resolve_*, is_conj, get_device", function()
        close(tide.adjoint(x), { { 1, 4 }, { 2, 5 }, { 3, 6 } })
        assert.are.equal(x, tide.resolve_conj(x))
        assert.are.equal(x, tide.resolve_neg(x))
        assert.is_false(tide.is_conj(x))
        assert.is_false(tide.is_neg(x))
        assert.is_false(tide.is_inference(x))
        close(tide.conj_physical(x), x:tolist())
        assert.are.equal(x:get_device(), tide.get_device(x))
        local parts = tide.unsafe_split_with_sizes(x, { 1, 2 }, 2)
        close(parts[2], { { 2, 3 }, { 5, 6 } })
        assert.has_error(function() tide.adjoint(3) end,
            "tide: adjoint: expected a tensor as input, got 3")
    end)

    it("*_copy: the view, a new tensor", function()
        local c = tide.transpose_copy(x, 1, 2)
        close(c, { { 1, 4 }, { 2, 5 }, { 3, 6 } })
        c[1][1] = 9
        assert.are.equal(1, x[1][1]:item())
        close(tide.unfold_copy(tide.arange(0, 5, { dtype = "float64" }), 1, 2, 1),
            { { 0, 1 }, { 1, 2 }, { 2, 3 }, { 3, 4 } })
        close(tide.diagonal_copy(x, 1), { 2, 6 })
        close(tide.view_copy(x, 3, 2), { { 1, 2 }, { 3, 4 }, { 5, 6 } })
        close(tide.unbind_copy(x, 1)[2], { 4, 5, 6 })
        local d = tide.detach_copy(x:clone():requires_grad_(true))
        assert.is_false(d.requires_grad)
        local a = tide.alias_copy(x)
        assert.are_not.equal(x, a)
        close(a, x:tolist())
    end)

    it("in-place nn.functional forms: celu_, selu_, threshold_, dropout_", function()
        local a = f64({ -1, 2 })
        assert.are.equal(a, tide.celu_(a, 0.5))
        close(a, { -0.43233235838169365, 2.0 })
        close(tide.selu_(f64({ -1, 2 })), { -1.1113307378125625, 2.101401974710961 })
        close(tide.threshold_(f64({ 0.5, 2 }), 1.0, -3.0), { -3.0, 2.0 })
        local b = f64({ 1, 2 })
        assert.are.equal(b, tide.dropout_(b, 0.5, false))
        close(tide.dropout_(f64({ 1, 2 }), 1.0, true), { 0, 0 })
    end)

    it("range: end included, default float dtype", function()
        close(tide.range(1, 2, 0.25), { 1.0, 1.25, 1.5, 1.75, 2.0 })
        assert.are.equal("float32", tide.range(1, 4).dtype)
        close(tide.range(0, 1, 0.3), { 0.0, 0.30000001192092896, 0.6000000238418579,
            0.8999999761581421 })
        close(tide.range(1, 3, { dtype = "float64" }), { 1, 2, 3 })
    end)

    it("empty_strided: the sizes and strides asked", function()
        local e = tide.empty_strided({ 2, 3 }, { 1, 2 })
        assert.are.same({ 1, 2 }, { e:stride(1), e:stride(2) })
        assert.are.same({ 2, 3 }, { e:size(1), e:size(2) })
    end)

    it("convolution, grid_sampler, affine_grid_generator", function()
        local xi = tide.arange(0, 16, { dtype = "float64" }):reshape(1, 1, 4, 4)
        local w = tide.ones(1, 1, 2, 2, { dtype = "float64" })
        close(tide.convolution(xi, w, nil, { 2, 2 }, { 0, 0 }, { 1, 1 }, false, { 0, 0 }, 1),
            { { { { 10, 18 }, { 42, 50 } } } })
        close(tide.convolution(tide.ones(1, 1, 2, 2, { dtype = "float64" }), w, nil, { 1, 1 },
            { 0, 0 }, { 1, 1 }, true, { 0, 0 }, 1),
            { { { { 1, 2, 1 }, { 2, 4, 2 }, { 1, 2, 1 } } } })
        local theta = f64({ { { 1, 0, 0 }, { 0, 1, 0 } } })
        local g = tide.affine_grid_generator(theta, { 1, 1, 2, 2 }, false)
        close(g, { { { { -0.5, -0.5 }, { 0.5, -0.5 } }, { { -0.5, 0.5 }, { 0.5, 0.5 } } } })
        local img = tide.arange(0, 4, { dtype = "float64" }):reshape(1, 1, 2, 2)
        close(tide.grid_sampler(img, g:mul(0.5), 0, 0, false),
            { { { { 0.75, 1.25 }, { 1.75, 2.25 } } } })
        close(tide.grid_sampler_2d(img, g:mul(1.5), 1, 1, true), { { { { 0, 1 }, { 2, 3 } } } })
    end)

    it("recurrent cells: lstm_cell, gru_cell, rnn_tanh_cell, rnn_relu_cell", function()
        local inp, h, c = f64({ { 0.5, -1.0, 2.0 } }), f64({ { 0.1, -0.2 } }), f64({ { 0.3, 0.4 } })
        local function b(n)
            return tide.arange(0, n, { dtype = "float64" }):div(20)
        end
        local hy, cy = tide.lstm_cell(inp, { h, c }, W(8, 3), W(8, 2), b(8), b(8))
        close(hy, { { 0.48283713685604346, 0.6511766711197132 } })
        close(cy, { { 0.5673314029044934, 0.8206720794708433 } })
        close(tide.gru_cell(inp, h, W(6, 3), W(6, 2), b(6), b(6)),
            { { 0.3841664817277234, 0.07782089824759764 } })
        close(tide.rnn_tanh_cell(inp, h, W(2, 3), W(2, 2), b(2), b(2)),
            { { -0.3969304320050775, 0.10955847021442952 } })
        close(tide.rnn_relu_cell(inp, h, W(2, 3), W(2, 2)), { { 0.0, 0.009999999999999978 } })
    end)

    pending("linalg.eig, linalg.eigvals: a general (non-symmetric) eigensolver with complex " ..
        "output needs a kernel")
    pending("lstm, gru, rnn_tanh, rnn_relu (whole sequences with flat weights), lobpcg, " ..
        "conv_tbc: larger than a wrapper; nn.LSTM / nn.GRU / nn.RNN cover the first four")
    pending("native_layer_norm, native_group_norm, native_batch_norm, native_dropout, " ..
        "native_norm, norm_except_dim: ATen internals returning saved stats (not done in time)")
    pending("slice_copy, as_strided_scatter, feature_dropout(_), embedding_renorm_, " ..
        "align_tensors: slice_copy's start needs a 0/1-based decision; others not done in time")
    pending("is_storage, set_default_tensor_type, set_warn_always, " ..
        "is_warn_always_enabled, set_flush_denormal (needs C), deterministic_debug_mode: " ..
        "runtime machinery, not done")
    pending("from_numpy, frombuffer, from_file, from_dlpack, to_dlpack, fork, wait: no Lua " ..
        "counterpart")
end)
