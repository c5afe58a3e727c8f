-- A layer's dtypes. The normalization layers follow one rule: the weight, bias and running
-- estimates have the input's dtype, or float32 under a float16/bfloat16 input (computed in
-- float32 and rounded once to the input's dtype, as PyTorch's mixed-type norms); anything else
-- raises before a running estimate moves. Before, LayerNorm, GroupNorm and BatchNorm ran a
-- float64 batch through a float32 model at float64, and returned float32 for a half one.
local tide = require("tide")
local nn, F = tide.nn, tide.nn.functional

local X = { { 0.5, -1.25, 2.0, 0.75 }, { 1.5, 0.25, -0.5, 3.0 }, { -2.0, 1.0, 0.5, 0.0 } }
local W, B = { 1.5, 0.5, -1.0, 2.0 }, { 0.1, -0.2, 0.3, 0.0 }

local function affine(m)
    tide.no_grad(function()
        m.weight:copy_(tide.tensor(W))
        m.bias:copy_(tide.tensor(B))
    end)
    return m
end

local function close(t, expected, tol)
    local got = t:float():tolist()
    local function walk(g, e)
        if type(e) == "table" then
            assert.are.equal(#e, #g)
            for i = 1, #e do
                walk(g[i], e[i])
            end
        else
            assert.is_true(math.abs(g - e) <= tol, ("got %.8g, expected %.8g"):format(g, e))
        end
    end
    walk(got, expected)
end

local function x3() -- {3, 4, 2}: each row of X times {1, -0.5} along the last dim
    return tide.tensor(X):view(3, 4, 1):mul(tide.tensor({ 1.0, -0.5 }))
end

describe("a normalization layer's dtypes", function()
    local modules = {
        { "LayerNorm", function() return affine(nn.LayerNorm(4)) end, tide.tensor(X) },
        { "GroupNorm", function() return affine(nn.GroupNorm(2, 4)) end, tide.tensor(X) },
        { "BatchNorm1d", function() return affine(nn.BatchNorm1d(4)) end, tide.tensor(X) },
        { "InstanceNorm1d", function() return affine(nn.InstanceNorm1d(4, { affine = true,
            track_running_stats = true })) end, x3() },
    }
    for _, c in ipairs(modules) do
        local name, make, x = c[1], c[2], c[3]
        it(name .. " refuses a float64 input into a float32 model, its state unchanged", function()
            local m = make()
            local state = {}
            for k, v in pairs(m:state_dict()) do
                state[k] = v:clone()
            end
            local ok, err = pcall(m.forward, m, x:double())
            assert.is_false(ok)
            assert.are.equal("tide: " .. name .. ": the input is float64 and the weight " ..
                "float32; convert the input (x:to(\"float32\")) or the model " ..
                "(model:to(\"float64\"))", tostring(err):match("tide: .*"))
            for k, v in pairs(m:state_dict()) do
                assert.is_true(tide.equal(v, state[k]), k)
            end
        end)
        for _, dt in ipairs({ "float16", "bfloat16" }) do
            it(name .. " computes a " .. dt .. " input in float32, rounded once to " .. dt,
                function()
                    local y = make()(x:to(dt))
                    assert.are.equal(dt, y.dtype)
                    -- the float32 layer on the input's values, then one rounding
                    local ref = make()(x:to(dt):float()):to(dt)
                    assert.is_true(tide.equal(y, ref))
                end)
        end
        it(name .. " runs a float64 model on a float64 input", function()
            local m = make():to("float64")
            assert.are.equal("float64", m(x:double()).dtype)
        end)
    end

    it("BatchNorm1d on bfloat16 matches PyTorch 1.13's mixed-type kernel", function()
        local m = affine(nn.BatchNorm1d(4))
        local y = m(tide.tensor(X):to("bfloat16"))
        -- torch: bn(x.bfloat16()) with the same weight and bias
        close(y, { { 0.609375, -0.8671875, -0.99609375, -0.78515625 },
            { 1.625, -0.06640625, 1.4375, 2.75 },
            { -1.9375, 0.333984375, 0.462890625, -1.9609375 } }, 1e-6)
        close(m.running_mean, { 0.0, 0.0, 0.06666667014360428, 0.125 }, 1e-7)
        assert.are.equal("float32", m.running_mean.dtype)
    end)

    it("InstanceNorm1d on bfloat16 matches PyTorch 1.13's", function()
        local m = affine(nn.InstanceNorm1d(4, { affine = true }))
        local y = m(x3():to("bfloat16"))
        close(y, { { { 1.6015625, -1.3984375 }, { -0.69921875, 0.30078125 },
            { -0.69921875, 1.296875 }, { 2.0, -2.0 } },
            { { 1.6015625, -1.3984375 }, { 0.30078125, -0.69921875 },
                { 1.296875, -0.69921875 }, { 2.0, -2.0 } },
            { { -1.3984375, 1.6015625 }, { 0.30078125, -0.69921875 },
                { -0.69921875, 1.296875 }, { 0.0, 0.0 } } }, 1e-6)
    end)

    it("the functional forms name the tensor at fault and how to fix it", function()
        local x, w = tide.tensor(X):double(), tide.tensor(W)
        local cases = {
            { "layer_norm", "weight", function() F.layer_norm(x, 4, { weight = w }) end },
            { "layer_norm", "bias", function()
                F.layer_norm(x, 4, { weight = w:double(), bias = w }) end },
            { "group_norm", "weight", function() F.group_norm(x, 2, { weight = w }) end },
            { "batch_norm", "running_mean", function()
                F.batch_norm(x, w, w:double(), { training = true }) end },
            { "batch_norm", "weight", function()
                F.batch_norm(x, nil, nil, { training = true, weight = w }) end },
            { "instance_norm", "bias", function()
                F.instance_norm(x:view(3, 4, 1):expand(3, 4, 2), nil, nil, { bias = w }) end },
        }
        for _, c in ipairs(cases) do
            local ok, err = pcall(c[3])
            assert.is_false(ok)
            assert.are.equal(("tide: %s: the input is float64 and the %s float32; convert " ..
                "the input (x:to(\"float32\")) or the %s (%s:to(\"float64\"))"):format(c[1],
                c[2], c[2], c[2]), tostring(err):match("tide: .*"))
        end
    end)

    it("a failed batch_norm leaves its running estimates as they were", function()
        local rm, rv = tide.zeros(4, { dtype = "float64" }), tide.ones(4)
        local ok = pcall(F.batch_norm, tide.tensor(X):double(), rm, rv, { training = true })
        assert.is_false(ok)
        assert.is_true(tide.equal(rm, tide.zeros(4, { dtype = "float64" })))
    end)

    it("an integer input is told to convert itself", function()
        local ok, err = pcall(nn.LayerNorm(4), tide.tensor({ { 1, 2, 3, 4 } }))
        assert.is_false(ok)
        assert.are.equal("tide: LayerNorm: the input is int64 and the weight float32; " ..
            "convert the input (x:to(\"float32\"))", tostring(err):match("tide: .*"))
    end)
end)

describe("a recurrent layer's input dtype", function()
    -- PyTorch: "mat1 and mat2 must have the same dtype"; tide ran a float64 batch through a
    -- float32 LSTM at float64
    local layers = {
        { "RNN", function() return nn.RNN(4, 3) end, { 5, 2, 4 } },
        { "LSTM", function() return nn.LSTM(4, 3) end, { 5, 2, 4 } },
        { "GRU", function() return nn.GRU(4, 3) end, { 5, 2, 4 } },
        { "LSTMCell", function() return nn.LSTMCell(4, 3) end, { 2, 4 } },
        { "GRUCell", function() return nn.GRUCell(4, 3) end, { 2, 4 } },
        { "RNNCell", function() return nn.RNNCell(4, 3) end, { 2, 4 } },
    }
    for _, c in ipairs(layers) do
        it(c[1] .. " is the weights' dtype, as Linear's", function()
            local ok, err = pcall(c[2](), tide.randn(c[3]):double())
            assert.is_false(ok)
            assert.are.equal("tide: " .. c[1] .. ": the input is float64 and the weight " ..
                "float32; convert the input (x:to(\"float32\")) or the model " ..
                "(model:to(\"float64\"))", tostring(err):match("tide: .*"))
            local y = c[2]():to("float64")(tide.randn(c[3]):double())
            assert.are.equal("float64", (tide.is_tensor(y) and y or y[1]).dtype)
        end)
    end

    it("a PackedSequence's data too", function()
        local p = nn.utils.rnn.pack_sequence({ tide.randn(3, 4):double(),
            tide.randn(2, 4):double() })
        local ok, err = pcall(nn.GRU(4, 3), p)
        assert.is_false(ok)
        assert.matches("tide: GRU: the input is float64 and the weight float32", err, 1, true)
    end)
end)

describe("attention's dtypes", function()
    it("MultiheadAttention names itself, not its projection's Linear", function()
        local q = tide.randn(2, 3, 4):double()
        local ok, err = pcall(nn.MultiheadAttention(4, 2), q, q, q)
        assert.is_false(ok)
        assert.matches("tide: MultiheadAttention: the input is float64 and the weight float32",
            err, 1, true)
    end)

    it("scaled_dot_product_attention takes query, key and value of one dtype (PyTorch 2's " ..
        "rule; tide promoted them)", function()
        local q = tide.randn(2, 3, 4):double()
        local ok, err = pcall(F.scaled_dot_product_attention, q, q:float(), q)
        assert.is_false(ok)
        assert.matches("tide: scaled_dot_product_attention: expected query, key and value of " ..
            "one dtype, got float64, float32 and float64 (as PyTorch's); convert them with " ..
            ":to(\"float64\")", err, 1, true)
        assert.are.equal("float64", F.scaled_dot_product_attention(q, q, q).dtype)
    end)
end)
