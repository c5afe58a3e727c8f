-- torch.nn.init and the modules' default initialisation as PyTorch 1.13 has them: exact values
-- where they are deterministic (gains, fans, eye_, dirac_), else the bounds and moments
-- PyTorch's code implies (values printed by PyTorch 1.13; random streams differ from tide's)
local tide = require("tide")
local nn = tide.nn
local init = nn.init

local function close(want, got, tol, what)
    assert(math.abs(want - got) <= tol * math.max(1, math.abs(want)),
        string.format("%s: want %.10g, got %.10g", what or "value", want, got))
end

-- max |x|, mean and std (unbiased) of a tensor
local function stats(t)
    local x = t:detach():to("float64")
    return x:abs():max():item(), x:mean():item(), x:std():item()
end

-- a tensor drawn from U(-bound, bound): none outside, the largest near bound, std bound/sqrt(3)
local function assert_uniform(t, bound, what)
    local m, mean, sd = stats(t)
    assert(m <= bound * (1 + 1e-6) and m > 0.9 * bound,
        string.format("%s: max |x| %.6g for bound %.6g", what, m, bound))
    close(bound / math.sqrt(3), sd, 0.1, what .. " std")
    assert(math.abs(mean) < 0.15 * bound, what .. " mean")
end

describe("nn.init as PyTorch 1.13", function()
    it("calculate_gain for every nonlinearity and param", function()
        -- PyTorch: [nonlinearity, param, calculate_gain(nonlinearity, param)]
        local gains = { { "linear", nil, 1 }, { "conv1d", nil, 1 }, { "conv2d", nil, 1 },
            { "conv3d", nil, 1 }, { "conv_transpose1d", nil, 1 }, { "conv_transpose2d", nil, 1 },
            { "conv_transpose3d", nil, 1 }, { "sigmoid", nil, 1 },
            { "tanh", nil, 1.6666666666666667 }, { "relu", nil, 1.4142135623730951 },
            { "leaky_relu", nil, 1.4141428569978354 }, { "leaky_relu", 0.2, 1.3867504905630728 },
            { "leaky_relu", 0, 1.4142135623730951 },
            { "leaky_relu", 2.23606797749979, 0.5773502691896257 },
            { "leaky_relu", 3, 0.4472135954999579 }, { "selu", nil, 0.75 },
            { "relu", 0.3, 1.4142135623730951 }, { "tanh", 0.3, 1.6666666666666667 } }
        for _, g in ipairs(gains) do
            close(g[3], init.calculate_gain(g[1], g[2]), 1e-15, g[1] .. " " .. tostring(g[2]))
        end
        close(1.3867504905630728, init.calculate_gain("leaky_relu", { param = 0.2 }), 1e-15)
        -- PyTorch: ValueError for an unknown nonlinearity and a non-number slope
        assert.has_error(function() init.calculate_gain("gelu") end,
            "tide: nn.init.calculate_gain: unsupported nonlinearity gelu; use linear, conv1d, " ..
            "conv2d, conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d, sigmoid, " ..
            "tanh, relu, leaky_relu or selu")
        assert.has_error(function() init.calculate_gain("leaky_relu", true) end,
            "tide: nn.init.calculate_gain: negative_slope true is not a valid number")
    end)

    it("_calculate_fan_in_and_fan_out of 2-D to 5-D weights; a 1-D tensor raises", function()
        -- PyTorch: [shape, (fan_in, fan_out)]
        local fans = { { { 3, 4 }, { 4, 3 } }, { { 3, 4, 5 }, { 20, 15 } },
            { { 3, 4, 5, 6 }, { 120, 90 } }, { { 3, 4, 2, 3, 2 }, { 48, 36 } },
            { { 0, 4 }, { 4, 0 } }, { { 5, 0, 3 }, { 0, 15 } } }
        for _, f in ipairs(fans) do
            local fi, fo = init._calculate_fan_in_and_fan_out(tide.empty(f[1]))
            assert.are.same(f[2], { fi, fo })
            assert.are.equal(f[2][1], init._calculate_correct_fan(tide.empty(f[1]), "fan_in"))
            assert.are.equal(f[2][2], init._calculate_correct_fan(tide.empty(f[1]), "fan_out"))
        end
        local msg = "fan in and fan out cannot be computed for a tensor with fewer than 2 " ..
            "dimensions (shape {5})"
        for _, who in ipairs({ "_calculate_fan_in_and_fan_out", "xavier_uniform_",
            "xavier_normal_", "kaiming_uniform_", "kaiming_normal_" }) do
            assert.has_error(function() init[who](tide.empty({ 5 })) end,
                "tide: nn.init." .. who .. ": " .. msg)
        end
    end)

    it("kaiming_uniform_/kaiming_normal_: bound and std per mode, nonlinearity and a", function()
        -- PyTorch on {64, 48, 3, 3}: [mode, nonlinearity, a, gain / sqrt(fan)]
        local cases = { { "fan_in", "relu", 0, 0.06804138174397717 },
            { "fan_in", "leaky_relu", 0, 0.06804138174397717 },
            { "fan_in", "leaky_relu", 0.2, 0.06672006408545297 },
            { "fan_in", "leaky_relu", 2.23606797749979, 0.027777777777777776 },
            { "fan_in", "linear", 0, 0.048112522432468816 },
            { "fan_in", "relu", 0.5, 0.06804138174397717 },
            { "fan_out", "relu", 0, 0.05892556509887897 },
            { "fan_out", "leaky_relu", 0.2, 0.057781270440128034 },
            { "fan_out", "linear", 0, 0.041666666666666664 } }
        local t = tide.empty({ 64, 48, 3, 3 })
        for _, c in ipairs(cases) do
            local o = { mode = c[1], nonlinearity = c[2], a = c[3] }
            local what = c[1] .. " " .. c[2] .. " " .. c[3]
            assert.are.equal(t, init.kaiming_uniform_(t, o))
            local m = stats(t)
            local bound = math.sqrt(3) * c[4]
            assert(m <= bound * (1 + 1e-6) and m > 0.99 * bound, what)
            init.kaiming_normal_(t, c[3], c[1], c[2])
            local _, mean, sd = stats(t)
            close(c[4], sd, 0.03, what .. " std")
            assert(math.abs(mean) < 0.05 * c[4], what .. " mean")
        end
        -- a zero-element tensor: nothing to do (PyTorch warns only)
        assert.are.same({ 0, 3 }, init.kaiming_uniform_(tide.empty({ 0, 3 })).shape)
    end)

    it("xavier_uniform_/xavier_normal_ with gain", function()
        -- PyTorch on {64, 48, 3, 3}: [gain, std, bound]
        local t = tide.empty({ 64, 48, 3, 3 })
        for _, c in ipairs({ { 1.0, 0.0445435403187374, 0.07715167498104596 },
            { 2.5, 0.11135885079684349, 0.19287918745261487 } }) do
            init.xavier_uniform_(t, c[1])
            local m = stats(t)
            assert(m <= c[3] * (1 + 1e-6) and m > 0.99 * c[3], "xavier_uniform_ " .. c[1])
            init.xavier_normal_(t, { gain = c[1] })
            local _, _, sd = stats(t)
            close(c[2], sd, 0.03, "xavier_normal_ " .. c[1])
        end
    end)

    it("uniform_, normal_, trunc_normal_: bounds and moments", function()
        local t = tide.empty({ 20000 })
        init.uniform_(t, -0.5, 1.5)
        assert(t:min():item() >= -0.5 and t:max():item() <= 1.5)
        close(0.5, t:mean():item(), 0.03)
        close(2 / math.sqrt(12), t:std():item(), 0.03)
        init.normal_(t, { mean = 3, std = 0.5 })
        close(3, t:mean():item(), 0.01)
        close(0.5, t:std():item(), 0.03)
        -- PyTorch's defaults: mean 0, std 1, cut to [-2, 2] (std of the cut normal 0.8796)
        init.trunc_normal_(t)
        assert(t:min():item() >= -2 and t:max():item() <= 2)
        close(0, t:mean():item(), 0.03)
        close(0.8796256610342398, t:std():item(), 0.03)
        init.trunc_normal_(t, 1, 2, 0.5, 1.5)
        assert(t:min():item() >= 0.5 and t:max():item() <= 1.5)
        close(1, t:mean():item(), 0.03)
    end)

    it("constant_, ones_, zeros_, eye_ (non-square), dirac_ (groups)", function()
        local t = tide.empty({ 2, 3 })
        assert.are.same({ { 0.5, 0.5, 0.5 }, { 0.5, 0.5, 0.5 } }, init.constant_(t, 0.5):totable())
        assert.are.same({ { 1, 1, 1 }, { 1, 1, 1 } }, init.ones_(t):totable())
        assert.are.same({ { 0, 0, 0 }, { 0, 0, 0 } }, init.zeros_(t):totable())
        -- PyTorch's eye_ of 2x3 and 3x2
        assert.are.same({ { 1, 0, 0 }, { 0, 1, 0 } }, init.eye_(t):totable())
        assert.are.same({ { 1, 0 }, { 0, 1 }, { 0, 0 } }, init.eye_(tide.empty({ 3, 2 })):totable())
        -- PyTorch's dirac_(empty(4, 2, 3), 2) and dirac_(empty(2, 3, 2, 2))
        assert.are.same({ { { 0, 1, 0 }, { 0, 0, 0 } }, { { 0, 0, 0 }, { 0, 1, 0 } },
            { { 0, 1, 0 }, { 0, 0, 0 } }, { { 0, 0, 0 }, { 0, 1, 0 } } },
            init.dirac_(tide.empty({ 4, 2, 3 }), 2):totable())
        assert.are.same({ { { { 0, 0 }, { 0, 1 } }, { { 0, 0 }, { 0, 0 } }, { { 0, 0 }, { 0, 0 } } },
            { { { 0, 0 }, { 0, 0 } }, { { 0, 0 }, { 0, 1 } }, { { 0, 0 }, { 0, 0 } } } },
            init.dirac_(tide.empty({ 2, 3, 2, 2 })):totable())
        -- PyTorch: ValueError for each
        assert.has_error(function() init.eye_(tide.empty({ 2, 2, 2 })) end,
            "tide: nn.init.eye_: only 2-D tensors are supported, got 3-D")
        assert.has_error(function() init.dirac_(tide.empty({ 2, 2 })) end,
            "tide: nn.init.dirac_: only 3-, 4- and 5-D tensors are supported, got 2-D")
        assert.has_error(function() init.dirac_(tide.empty({ 6, 2, 3 }), 4) end,
            "tide: nn.init.dirac_: dim 1 (6) must be divisible by groups, got 4")
    end)

    it("orthogonal_: Q^T Q = gain^2 I for tall, wide and 3-D tensors", function()
        for _, s in ipairs({ { 6, 3 }, { 3, 6 }, { 2, 3, 2 } }) do
            local t = init.orthogonal_(tide.empty(s), { gain = 2 }):reshape(s[1], -1)
            local m = t:size(1) >= t:size(2) and t:t():matmul(t) or t:matmul(t:t())
            local want = tide.eye(m:size(1)):mul(4)
            assert(m:sub(want):abs():max():item() < 1e-4, table.concat(s, "x"))
        end
        assert.has_error(function() init.orthogonal_(tide.empty({ 5 })) end,
            "tide: nn.init.orthogonal_: only tensors with 2 or more dimensions are supported, " ..
            "got shape {5}")
    end)

    it("sparse_: ceil(sparsity * rows) zeros per column, std of the rest", function()
        -- PyTorch: sparse_(empty(10, 200), 0.35, std = 0.5): 4 zeros per column, std 0.4925
        local t = init.sparse_(tide.empty({ 10, 200 }), 0.35, 0.5)
        local zeros = t:eq(0):sum(1):totable()
        for c = 1, 200 do
            assert.are.equal(4, zeros[c])
        end
        local nz = t:masked_select(t:ne(0))
        close(0.5, nz:std():item(), 0.1)
        assert.has_error(function() init.sparse_(tide.empty({ 2, 2, 2 }), 0.5) end,
            "tide: nn.init.sparse_: only 2-D tensors are supported, got 3-D")
    end)

    it("fills a leaf or a non-leaf requiring grad in place, as PyTorch (no error)", function()
        local w = tide.ones({ 3, 4 }, { requires_grad = true })
        local y = w * 2
        init.constant_(y, 7)
        assert.are.equal(7, y:max():item())
        assert.is_true(y.requires_grad)
        init.constant_(w, 3)
        assert.are.equal(3, w:min():item())
        assert.is_true(w.requires_grad and w.grad_fn == nil)
    end)
end)

describe("modules' default initialisation as PyTorch 1.13", function()
    -- PyTorch: hasattr(nn.X, "reset_parameters") is True for each
    it("reset_parameters: Linear, Bilinear, Conv*, ConvTranspose* (U(+-1/sqrt(fan_in)))", function()
        local cases = {
            { nn.Linear(40, 30), 1 / math.sqrt(40) },
            { nn.Bilinear(30, 5, 40), 1 / math.sqrt(30) },
            { nn.Conv1d(8, 30, 3), 1 / math.sqrt(24) },
            { nn.Conv2d(8, 30, 3), 1 / math.sqrt(72) },
            { nn.Conv3d(4, 30, 2), 1 / math.sqrt(32) },
            { nn.ConvTranspose1d(30, 8, 3), 1 / math.sqrt(24) },
            { nn.ConvTranspose2d(30, 8, 3, { groups = 2 }), 1 / math.sqrt(36) },
            { nn.ConvTranspose3d(30, 4, 2), 1 / math.sqrt(32) },
        }
        for _, c in ipairs(cases) do
            local m = c[1]
            assert_uniform(m.weight, c[2], m.__name .. " weight")
            tide.no_grad(function()
                m.weight:fill_(9)
                m.bias:fill_(9)
            end)
            assert.is_nil(m:reset_parameters())
            assert_uniform(m.weight, c[2], m.__name .. " weight")
            assert(m.bias:abs():max():item() <= c[2], m.__name .. " bias")
            assert.is_true(m.weight.requires_grad and m.weight.grad_fn == nil)
        end
    end)

    it("reset_parameters: Embedding, EmbeddingBag (N(0, 1), padding_idx row zero)", function()
        for _, cls in ipairs({ nn.Embedding, nn.EmbeddingBag }) do
            local m = cls(400, 20, { padding_idx = 2 })
            tide.no_grad(function() m.weight:fill_(9) end)
            m:reset_parameters()
            assert.are.same({ 0, 0, 0 }, m.weight[2]:narrow(1, 1, 3):totable())
            close(1, m.weight:std():item(), 0.05, "std")
        end
        local e = nn.Embedding(5, 3, { padding_idx = 1 })
        tide.no_grad(function() e.weight:fill_(2) end)
        e:_fill_padding_idx_with_zero()
        assert.are.same({ { 0, 0, 0 }, { 2, 2, 2 } }, e.weight:narrow(1, 1, 2):totable())
    end)

    it("reset_parameters: RNN, LSTM, GRU and cells (U(+-1/sqrt(hidden_size)))", function()
        for _, cls in ipairs({ nn.RNN, nn.LSTM, nn.GRU, nn.RNNCell, nn.LSTMCell, nn.GRUCell }) do
            local m = cls(30, 40)
            tide.no_grad(function()
                for _, p in ipairs(m:parameters()) do
                    p:fill_(9)
                end
            end)
            m:reset_parameters()
            for _, p in ipairs(m:parameters()) do
                assert(p:abs():max():item() <= 1 / math.sqrt(40), m.__name)
            end
            assert_uniform(m:parameters()[1], 1 / math.sqrt(40), m.__name)
        end
        local lstm = nn.LSTM(4, 8, { proj_size = 2 })
        lstm:reset_parameters()
        assert(lstm.weight_hr_l0:abs():max():item() <= 1 / math.sqrt(8))
    end)

    it("MultiheadAttention: xavier_uniform_ in_proj, zero biases; _reset_parameters", function()
        local m = nn.MultiheadAttention(16, 2, { add_bias_kv = true })
        local function check()
            -- PyTorch: in_proj_weight {48, 16}: bound sqrt(6 / 64); in_proj_bias, out_proj.bias 0
            assert_uniform(m.in_proj_weight, math.sqrt(6 / 64), "in_proj_weight")
            assert.are.equal(0, m.in_proj_bias:abs():max():item())
            assert.are.equal(0, m.out_proj.bias:abs():max():item())
            assert(m.out_proj.weight:abs():max():item() <= 1 / 4)
        end
        check()
        tide.no_grad(function()
            m.in_proj_weight:fill_(9)
            m.in_proj_bias:fill_(9)
            m.out_proj.bias:fill_(9)
            m.bias_k:fill_(9)
        end)
        m:_reset_parameters()
        check()
        assert(m.bias_k:abs():max():item() < 9)
        local kv = nn.MultiheadAttention(16, 2, { kdim = 4, vdim = 8 })
        tide.no_grad(function() kv.k_proj_weight:fill_(9) end)
        kv:_reset_parameters()
        assert(kv.k_proj_weight:abs():max():item() <= math.sqrt(6 / 20))
    end)

    it("LayerNorm, GroupNorm, BatchNorm: ones and zeros; reset_parameters", function()
        for _, m in ipairs({ nn.LayerNorm(6), nn.GroupNorm(2, 6), nn.BatchNorm1d(6),
            nn.InstanceNorm1d(6, { affine = true }) }) do
            assert.are.same({ 1, 1, 1, 1, 1, 1 }, m.weight:totable())
            assert.are.same({ 0, 0, 0, 0, 0, 0 }, m.bias:totable())
            tide.no_grad(function()
                m.weight:fill_(3)
                m.bias:fill_(3)
            end)
            m:reset_parameters()
            assert.are.same({ 1, 1, 1, 1, 1, 1 }, m.weight:totable(), m.__name)
            assert.are.same({ 0, 0, 0, 0, 0, 0 }, m.bias:totable(), m.__name)
        end
        nn.LayerNorm(6, { elementwise_affine = false }):reset_parameters()
    end)

    it("PReLU 0.25; Transformer: xavier_uniform_ of every matrix, _reset_parameters", function()
        assert.are.same({ 0.25 }, nn.PReLU().weight:totable())
        local t = nn.Transformer({ d_model = 8, nhead = 2, num_encoder_layers = 1,
            num_decoder_layers = 1, dim_feedforward = 16 })
        local lin = t.encoder.layers[1].linear1.weight -- {16, 8}: bound sqrt(6 / 24)
        tide.no_grad(function() lin:fill_(9) end)
        t:_reset_parameters()
        assert(lin:abs():max():item() <= math.sqrt(6 / 24))
        assert.are.same({ 1, 1, 1, 1, 1, 1, 1, 1 }, t.encoder.norm.weight:totable())
    end)
end)
