-- porting_functional3_spec.lua: tide.nn.functional as ported scripts call it (docs/API.md
-- "nn.functional"). No function drops an argument in silence: each raises for one past those it
-- takes (every public name, the lazily loaded ones included). PyTorch's positional parameters
-- are taken in PyTorch's order, optionally followed by a table by name for the rest: the
-- dropouts' training and inplace, softmax's dim and dtype, the activations' inplace, the norms'
-- weight, bias and eps, pad's mode and value, the convolutions' and pools' geometry. The
-- modules take PyTorch's positional inplace, Softmax({dim =}), and Dropout2d a 2-D input with
-- PyTorch 1.13's warning.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local warn = require("tide._warn")

local SPEC = "spec/porting_functional3_spec.lua:"

local function close(got, want, tol)
    local g = got:double():reshape(-1):totable()
    local w = tide.is_tensor(want) and want:double():reshape(-1):totable() or want
    assert.are.equal(#w, #g)
    for i = 1, #w do
        if math.abs(g[i] - w[i]) > (tol or 1e-6) then
            error(string.format("element %d: got %.9g, expected %.9g", i, g[i], w[i]), 2)
        end
    end
end

-- f(...) must fail with "tide: " .. msg at this file's line that called it
local function raises_here(msg, f, ...)
    local line = debug.getinfo(1, "l").currentline + 1
    local ok, err = pcall(f, ...)
    assert.is_false(ok, "expected an error: " .. msg)
    assert.are.equal(SPEC .. line .. ": tide: " .. msg, err)
end

local function too_many(name, n, m, k, kind)
    return string.format("%s: expected at most %d argument%s, got %d (argument #%d is a %s); " ..
        "remove it: %s takes no such argument or option", name, n, n == 1 and "" or "s", m, k,
        kind, name)
end

-- every public name of F: those defined, and those its files define on first use
local function public_names()
    local names, seen = {}, {}
    for k in pairs(F) do
        if k:sub(1, 1) ~= "_" then
            names[#names + 1], seen[k] = k, true
        end
    end
    for k in pairs(getmetatable(F).__lazy) do
        if not seen[k] then
            names[#names + 1] = k
        end
    end
    table.sort(names)
    return names
end

-- the most arguments each F function takes: PyTorch 1.13's positional parameters where tide
-- takes them by position (a trailing options table may stand for the last ones), else tide's
-- own form (its required arguments and one options table)
local MOST = {
    adaptive_avg_pool1d = 2, adaptive_avg_pool2d = 2, adaptive_avg_pool3d = 2,
    adaptive_max_pool1d = 3, adaptive_max_pool2d = 3, adaptive_max_pool3d = 3,
    adaptive_max_pool1d_with_indices = 2, adaptive_max_pool2d_with_indices = 2,
    adaptive_max_pool3d_with_indices = 2, affine_grid = 3, alpha_dropout = 4, avg_pool1d = 6,
    avg_pool2d = 7, avg_pool3d = 7, batch_norm = 8, bilinear = 4, binary_cross_entropy = 6,
    binary_cross_entropy_with_logits = 7, celu = 3, celu_ = 2, channel_shuffle = 2,
    native_channel_shuffle = 2, conv_tbc = 4, conv1d = 7,
    conv2d = 7, conv3d = 7, conv_transpose1d = 8, conv_transpose2d = 8, conv_transpose3d = 8,
    cosine_embedding_loss = 7, cosine_similarity = 4, cross_entropy = 8, ctc_loss = 7,
    dropout = 4, dropout1d = 4, dropout2d = 4, dropout3d = 4, elu = 3, elu_ = 2, embedding = 7,
    embedding_bag = 11, feature_alpha_dropout = 4, fold = 6, fractional_max_pool2d = 6,
    fractional_max_pool2d_with_indices = 4, fractional_max_pool3d = 6,
    fractional_max_pool3d_with_indices = 4, gaussian_nll_loss = 6, gelu = 2, glu = 2,
    grid_sample = 5, group_norm = 5, gumbel_softmax = 5, hardshrink = 2, hardsigmoid = 2,
    hardswish = 2, hardtanh = 4, hardtanh_ = 3, hinge_embedding_loss = 6, huber_loss = 4,
    instance_norm = 8, interpolate = 7, kl_div = 6, l1_loss = 5, layer_norm = 5,
    leaky_relu = 3, leaky_relu_ = 2, linear = 3, local_response_norm = 5, log_softmax = 4,
    logsigmoid = 1, lp_pool1d = 5, lp_pool2d = 5, margin_ranking_loss = 7, max_pool1d = 7,
    max_pool1d_with_indices = 6, max_pool2d = 7, max_pool2d_with_indices = 6, max_pool3d = 7,
    max_pool3d_with_indices = 6, max_unpool1d = 6, max_unpool2d = 6, max_unpool3d = 6,
    mish = 2, mse_loss = 5, multi_head_attention_forward = 24, multi_margin_loss = 8,
    multilabel_margin_loss = 5, multilabel_soft_margin_loss = 6, nll_loss = 7, normalize = 4,
    one_hot = 2, pad = 4, pairwise_distance = 5, pdist = 2, pixel_shuffle = 2,
    pixel_unshuffle = 2, poisson_nll_loss = 8, prelu = 2, relu = 2, relu6 = 2, relu_ = 1,
    rms_norm = 4, rrelu = 5, rrelu_ = 4, scaled_dot_product_attention = 8, selu = 2, selu_ = 2,
    sigmoid = 1, silu = 2, smooth_l1_loss = 6, soft_margin_loss = 5, softmax = 4, softmin = 4,
    softplus = 3, softshrink = 2, softsign = 1, tanh = 1, tanhshrink = 1, threshold = 4,
    threshold_ = 3, triplet_margin_loss = 10, triplet_margin_with_distance_loss = 4, unfold = 5,
    upsample = 5, upsample_bilinear = 3, upsample_nearest = 3,
}

describe("no F function drops an argument", function()
    it("every public function raises for one past the most it takes, before anything else",
        function()
            local names = public_names()
            assert.is_true(#names > 120, "found only " .. #names .. " functions")
            for _, name in ipairs(names) do
                local n = MOST[name]
                assert.is_not_nil(n, "F." .. name .. " is not in MOST: add its arity")
                -- n omitted arguments, then one: raised before any argument is read
                for _, extra in ipairs({ "extra", tide.ones(1) }) do
                    local a = {}
                    a[n + 1] = extra
                    local ok, err = pcall(F[name], table.unpack(a, 1, n + 1))
                    assert.is_false(ok, "F." .. name .. " took " .. (n + 1) .. " arguments")
                    local want = too_many(name, n, n + 1, n + 1,
                        type(extra) == "string" and "string" or "tensor")
                    assert.are.equal(want, tostring(err):match("tide: (.*)$"), "F." .. name)
                    assert.are.equal(SPEC, tostring(err):sub(1, #SPEC), "F." .. name)
                end
                -- the arity is exact: n arguments never hit that error
                local a = {}
                a[n] = "last"
                local _, err = pcall(F[name], table.unpack(a, 1, n))
                assert.is_nil(tostring(err):find("expected at most", 1, true), "F." .. name ..
                    ": " .. tostring(err))
            end
        end)

    it("real calls: the forms the survey found dropped now raise or take effect", function()
        local x = tide.ones(3, 4)
        raises_here(too_many("dropout", 3, 4, 4, "number"), F.dropout, x, 0.5,
            { training = false }, 1)
        raises_here(too_many("dropout", 4, 5, 5, "number"), F.dropout, x, 0.5, false, false, 1)
        -- a table after them all is the options table (nothing left for it), then no more
        raises_here(too_many("dropout", 5, 6, 6, "table"), F.dropout, x, 0.5, false, false, {},
            {})
        raises_here(too_many("sigmoid", 1, 2, 2, "table"), F.sigmoid, x, { inplace = true })
        raises_here(too_many("linear", 3, 4, 4, "boolean"), F.linear, x, tide.ones(2, 4), nil,
            true)
        raises_here(too_many("softmax", 4, 5, 5, "number"), F.softmax, x, 1, 3, "float64", 1)
        raises_here(too_many("layer_norm", 3, 4, 4, "number"), F.layer_norm, x, { 4 },
            { eps = 1e-5 }, 1)
        raises_here(too_many("relu_", 1, 2, 2, "boolean"), F.relu_, x, true)
        -- trailing nils are omitted arguments
        assert.are.equal(x, F.dropout(x, 0.5, false, nil, nil))
        assert.is_true(F.sigmoid(x, nil):equal(x:sigmoid()))
    end)

    it("a name given both ways raises", function()
        local x = tide.ones(2, 3)
        raises_here("dropout: p given twice, as argument #2 and by name; pass it once",
            F.dropout, x, 0.5, { p = 0.1 })
        raises_here("layer_norm: weight given twice, as argument #3 and by name; pass it once",
            F.layer_norm, x, { 3 }, tide.ones(3), { weight = tide.ones(3) })
        raises_here("conv2d: bias given twice, as argument #3 and by name; pass it once",
            F.conv2d, tide.ones(1, 1, 3, 3), tide.ones(1, 1, 2, 2), tide.ones(1),
            { bias = tide.ones(1) })
        raises_here('dropout: unknown option "train"; options are p, training, inplace', F.dropout,
            x, 0.5, { train = false })
    end)
end)

describe("the dropouts take PyTorch's (x, p, training, inplace)", function()
    local cases = {
        { "dropout", { 3, 4 } }, { "dropout1d", { 2, 3, 4 } }, { "dropout2d", { 2, 3, 4, 4 } },
        { "dropout3d", { 2, 3, 2, 2, 2 } }, { "alpha_dropout", { 3, 4 } },
        { "feature_alpha_dropout", { 2, 3, 4 } },
    }

    it("training = false (by position or by name) returns the input", function()
        for _, c in ipairs(cases) do
            local x = tide.randn(c[2])
            assert.are.equal(x, F[c[1]](x, 0.5, false), c[1])
            assert.are.equal(x, F[c[1]](x, 0.5, { training = false }), c[1])
            assert.are.equal(x, F[c[1]](x, { p = 0.5, training = false }), c[1])
        end
    end)

    it("in training the positional form draws as the options form", function()
        for _, c in ipairs(cases) do
            local x = tide.randn(c[2])
            tide.manual_seed(7)
            local a = F[c[1]](x, 0.3, true)
            tide.manual_seed(7)
            local b = F[c[1]](x, { p = 0.3, training = true })
            assert.is_true(a:equal(b), c[1])
            assert.is_false(a:equal(x), c[1])
        end
    end)

    it("inplace by position or after p writes into the input", function()
        for _, c in ipairs(cases) do
            local x0 = tide.randn(c[2])
            local x = x0:clone()
            tide.manual_seed(3)
            local y = F[c[1]](x, 0.5, true, true)
            tide.manual_seed(3)
            local want = F[c[1]](x0, { p = 0.5, training = true })
            assert.is_true(x:equal(want), c[1])
            assert.is_true(y:equal(want), c[1])
            local z = x0:clone()
            tide.manual_seed(3)
            F[c[1]](z, 0.5, true, { inplace = true })
            assert.is_true(z:equal(want), c[1])
        end
    end)

    it("nn.Dropout(p, inplace) and its kin", function()
        for _, name in ipairs({ "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
            "FeatureAlphaDropout" }) do
            local m = nn[name](0.25, true)
            assert.are.equal(0.25, m.p)
            assert.is_true(m.inplace)
            assert.is_true(nn[name](0.25, { inplace = true }).inplace)
            assert.is_true(nn[name]({ p = 0.25, inplace = true }).inplace)
            assert.is_false(nn[name](0.25).inplace) -- PyTorch's default, False
        end
        local x0 = tide.randn(4, 5)
        local x = x0:clone()
        tide.manual_seed(5)
        nn.Dropout(0.5, true)(x)
        tide.manual_seed(5)
        assert.is_true(x:equal(nn.Dropout(0.5)(x0)))
        raises_here("Dropout: expected inplace to be a boolean, got number", nn.Dropout, 0.5, 1)
        raises_here(too_many("Dropout", 2, 3, 3, "number"), nn.Dropout, 0.5, true, 1)
    end)
end)

describe("softmax, log_softmax and softmin", function()
    local x = tide.tensor({ { 1, 2, 3 }, { 0.5, -1, 2 } }, { dtype = "float32" })

    it("take dim by position or by name, and dtype (the input cast first)", function()
        -- F.softmax(x, -1, dtype=torch.float64)
        local want = { 0.09003057317038045, 0.2447284710547976, 0.6652409557748218,
            0.1752903921400367, 0.039112573270687456, 0.7855970345892759 }
        local a = F.softmax(x, -1, { dtype = "float64" })
        assert.are.equal("float64", a.dtype)
        close(a, want, 1e-15)
        local b = F.softmax(x, { dim = -1, dtype = "float64" })
        assert.are.equal("float64", b.dtype)
        close(b, want, 1e-15)
        assert.are.equal("float64", F.softmax(x, 2, 3, "float64").dtype) -- _stacklevel, dtype
        -- F.log_softmax(x, dim=1): tide's dim 2
        close(F.log_softmax(x, { dim = 2 }), { -2.4076058864593506, -1.4076058864593506,
            -0.40760594606399536, -1.7413113117218018, -3.2413113117218018,
            -0.24131132662296295 }, 1e-6)
        assert.are.equal("float64", F.log_softmax(x, 2, { dtype = "float64" }).dtype)
        -- F.softmin(x, dim=0)
        close(F.softmin(x, { dim = 1 }), { 0.3775406777858734, 0.04742587357759476,
            0.2689414322376251, 0.622459352016449, 0.9525741338729858, 0.7310585975646973 })
        assert.are.equal("float64", F.softmin(x, 1, { dtype = "float64" }).dtype)
        assert.is_true(F.softmax(x, 1):equal(x:softmax(1)))
    end)

    it("choose the dim PyTorch 1.13 chooses when none is given, with its warning once", function()
        local function captured(who, f)
            local lines, real = {}, io.stderr
            io.stderr = { write = function(_, s) lines[#lines + 1] = s end } -- luacheck: ignore
            warn.reset("implicit_dim." .. who)
            local ok, a = pcall(f)
            io.stderr = real -- luacheck: ignore
            assert(ok, a)
            return a, table.concat(lines)
        end
        local function msg(who)
            return "tide: warning: Implicit dimension choice for " .. who .. " has been " ..
                "deprecated. Change the call to include dim=X as an argument.\n"
        end
        -- x = (torch.arange(24.).reshape(2, 3, 4) / 10).sin(): F.softmax(x)[:, 0, 0] (dim 0)
        local x3 = (tide.arange(24, { dtype = "float64" }):reshape(2, 3, 4) / 10):sin()
        local line = debug.getinfo(1, "l").currentline + 1
        local s3, text = captured("softmax", function() local r = F.softmax(x3) return r end)
        assert.are.equal(SPEC .. line .. ": " .. msg("softmax"), text)
        close(s3[{ {}, 1, 1 }], { 0.28251121134510415, 0.7174887886548958 }, 1e-15)
        local _, again = captured("softmax", function() return F.softmax(x3) end)
        assert.are.equal(msg("softmax"), again:gsub("^.-: tide", "tide")) -- reset: warned again
        -- y = (torch.arange(24.).reshape(1, 2, 3, 4) / 7).cos(): dim 1, the channels
        local y = (tide.arange(24, { dtype = "float64" }):reshape(1, 2, 3, 4) / 7):cos()
        local l4, t2 = captured("log_softmax", function() return nn.LogSoftmax()(y) end)
        assert.is_truthy(t2:find(msg("log_softmax"), 1, true))
        close(l4[{ 1, {}, 2, 3 }], { -0.20206869251536466, -1.6984811790272463 }, 1e-15)
        local m4 = captured("softmin", function() return nn.Softmin()(y) end)
        close(m4[{ 1, {}, 3, 4 }], { 0.2711096026774552, 0.7288903973225447 }, 1e-15)
        -- a 1-D input's only dim, a 2-D input's last
        local v = tide.tensor({ 1, 2, 3 }, { dtype = "float64" })
        close(captured("softmax", function() return F.softmax(v) end),
            { 0.09003057317038045, 0.2447284710547976, 0.6652409557748218 }, 1e-15)
        assert.is_true(captured("softmax", function() return nn.Softmax()(x) end)
            :equal(x:softmax(2)))
        assert.are.equal("Softmax(dim=nil)", tostring(nn.Softmax()):match("^%S+"))
    end)

    it("check dim and dtype", function()
        raises_here("softmax: expected dim to be an integer, got 1.5", F.softmax, x, 1.5)
        raises_here("log_softmax: expected dim to be an integer, got 1.5", F.log_softmax, x,
            { dim = 1.5 })
        raises_here('softmax: expected dtype to be a floating-point dtype ("float32", ' ..
            '"float64", "float16" or "bfloat16"), got int64', F.softmax, x, -1,
            { dtype = "int64" })
        raises_here('softmin: unknown option "dims" (did you mean "dim"?)', F.softmin, x,
            { dims = 1 })
    end)

    it("nn.Softmax, nn.LogSoftmax and nn.Softmin take {dim =}", function()
        assert.is_true(nn.Softmax({ dim = 1 })(x):equal(x:softmax(1)))
        assert.are.equal(1, nn.Softmax({ dim = 1 }).dim)
        assert.is_true(nn.LogSoftmax({ dim = 1 })(x):equal(x:log_softmax(1)))
        assert.is_true(nn.Softmin({ dim = 1 })(x):equal(F.softmin(x, 1)))
        assert.is_true(nn.Softmax(2)(x):equal(x:softmax(2)))
        assert.is_nil(nn.LogSoftmax().dim) -- PyTorch's None: the implicit choice at each call
        raises_here("Softmax: expected dim to be an integer, got x", nn.Softmax, { dim = "x" })
        raises_here(too_many("LogSoftmax", 1, 2, 2, "number"), nn.LogSoftmax, 1, 2)
        raises_here(too_many("Softmax2d", 0, 1, 1, "number"), nn.Softmax2d, 1)
    end)
end)

describe("inplace as PyTorch's positional boolean", function()
    local x0 = tide.tensor({ { -2, -0.5, 0 }, { 0.5, 1, 3 } }, { dtype = "float32" })

    it("F.X(x, ..., inplace) writes into x what F.X(x, ...) returns", function()
        local cases = {
            { "relu", {} }, { "relu6", {} }, { "silu", {} }, { "selu", {} }, { "mish", {} },
            { "hardswish", {} }, { "hardsigmoid", {} }, { "elu", { 2.0 } }, { "celu", { 1.5 } },
            { "leaky_relu", { 0.2 } }, { "hardtanh", { -0.5, 0.5 } },
            { "threshold", { 0.1, 20 } }, { "rrelu", { 0.1, 0.3, false } },
        }
        for _, c in ipairs(cases) do
            local args = { table.unpack(c[2]) }
            local want = F[c[1]](x0, table.unpack(args))
            args[#args + 1] = true
            local x = x0:clone()
            local y = F[c[1]](x, table.unpack(args))
            assert.is_true(x:equal(want), c[1])
            assert.is_true(y:equal(want), c[1])
            assert.is_false(x:equal(x0), c[1])
        end
        -- the survey's: a table after the positional number is the options table
        local x = x0:clone()
        F.leaky_relu(x, 0.2, { inplace = true })
        close(x, { -0.4, -0.1, 0, 0.5, 1, 3 })
        x = x0:clone()
        F.elu(x, 1.0, { inplace = true })
        close(x, F.elu(x0))
        -- F.elu(torch.tensor([[1., 2, 3], [0.5, -1, 2]]) - 1.5, 2.0)
        local px = tide.tensor({ { 1, 2, 3 }, { 0.5, -1, 2 } }, { dtype = "float32" })
        close(F.elu(px:sub(1.5), 2.0), { -0.7869386672973633, 0.5, 1.5, -1.264241099357605,
            -1.8358299732208252, 0.5 })
        raises_here("relu: expected inplace to be a boolean, got string", F.relu, x0, "yes")
        raises_here(too_many("relu", 2, 3, 3, "boolean"), F.relu, x0, true, false)
    end)

    it("the modules take it as PyTorch's constructors do", function()
        local cases = {
            { "ReLU", {} }, { "ReLU6", {} }, { "SiLU", {} }, { "SELU", {} }, { "Mish", {} },
            { "Hardswish", {} }, { "Hardsigmoid", {} }, { "ELU", { 2.0 } }, { "CELU", { 1.5 } },
            { "LeakyReLU", { 0.2 } }, { "Hardtanh", { -0.5, 0.5 } }, { "Threshold", { 0.1, 20 } },
        }
        for _, c in ipairs(cases) do
            local want = nn[c[1]](table.unpack(c[2]))(x0)
            local args = { table.unpack(c[2]) }
            args[#args + 1] = true
            local m = nn[c[1]](table.unpack(args))
            assert.is_true(m.inplace, c[1])
            local x = x0:clone()
            m(x)
            assert.is_true(x:equal(want), c[1])
        end
        assert.is_true(nn.ReLU({ inplace = true }).inplace)
        assert.is_false(nn.ReLU().inplace)
        assert.are.equal(0.2, nn.LeakyReLU(0.2, true).negative_slope)
        assert.is_true(nn.ELU(1.0, { inplace = true }).inplace)
        assert.is_true(nn.Threshold(0.1, 20, { inplace = true }).inplace)
        local r = nn.RReLU(0.1, 0.3, true)
        assert.are.same({ 0.1, 0.3, true }, { r.lower, r.upper, r.inplace })
        raises_here("ReLU: expected inplace to be a boolean, got number", nn.ReLU, 1)
        raises_here(too_many("ReLU", 1, 2, 2, "boolean"), nn.ReLU, true, true)
        raises_here(too_many("Sigmoid", 0, 1, 1, "boolean"), nn.Sigmoid, true)
        raises_here("ELU: alpha given twice, as argument #1 and by name; pass it once", nn.ELU,
            1.0, { alpha = 2 })
    end)

    it("nn.GELU takes approximate, by position or by name", function()
        local want = F.gelu(x0, { approximate = "tanh" })
        assert.is_true(nn.GELU("tanh")(x0):equal(want))
        assert.is_true(nn.GELU({ approximate = "tanh" })(x0):equal(want))
        assert.is_true(nn.GELU()(x0):equal(x0:gelu()))
        raises_here('GELU: unknown approximate "fast"; use "none" or "tanh"', nn.GELU, "fast")
        -- PyTorch's F.gelu takes approximate by name only
        raises_here("gelu: expected an options table, got string", F.gelu, x0, "tanh")
    end)
end)

describe("norms, pad and the other functions by PyTorch's positions", function()
    local x = tide.tensor({ { 1, 2, 3 }, { 0.5, -1, 2 } }, { dtype = "float32" })

    it("layer_norm(x, shape, weight, bias, eps) as nanoGPT calls it", function()
        local w = tide.tensor({ 1, 2, 3 }, { dtype = "float32" })
        -- F.layer_norm(x, (3,), w, None, 1e-5)
        local want = { -1.2247356176376343, 0, 3.6742067337036133, 0, -2.44948148727417,
            3.674222230911255 }
        close(F.layer_norm(x, w.shape, w, nil, 1e-5), want, 1e-5)
        local b = tide.tensor({ 0.5, 0, -1 }, { dtype = "float32" })
        assert.is_true(F.layer_norm(x, { 3 }, w, b, 1e-3):equal(F.layer_norm(x, { 3 },
            { weight = w, bias = b, eps = 1e-3 })))
        assert.is_true(F.layer_norm(x, { 3 }, w, { eps = 1e-3 }):equal(F.layer_norm(x, { 3 },
            { weight = w, eps = 1e-3 })))
    end)

    it("group_norm, batch_norm and instance_norm", function()
        local img = tide.randn(2, 4, 3, 3)
        local w, b = tide.rand(4), tide.randn(4)
        assert.is_true(F.group_norm(img, 2, w, b, 1e-3):equal(F.group_norm(img, 2,
            { weight = w, bias = b, eps = 1e-3 })))
        local rm, rv = tide.randn(4), tide.rand(4):add(0.5)
        assert.is_true(F.batch_norm(img, rm, rv, w, b, false, 0.1, 1e-3):equal(F.batch_norm(img,
            rm, rv, { weight = w, bias = b, eps = 1e-3 })))
        -- training: the running estimates move by momentum, as by name
        local rm1, rv1, rm2, rv2 = rm:clone(), rv:clone(), rm:clone(), rv:clone()
        local a = F.batch_norm(img, rm1, rv1, nil, nil, true, 0.3)
        local c = F.batch_norm(img, rm2, rv2, { training = true, momentum = 0.3 })
        assert.is_true(a:equal(c))
        assert.is_true(rm1:equal(rm2) and rv1:equal(rv2))
        assert.is_false(rm1:equal(rm))
        assert.is_true(F.instance_norm(img, nil, nil, w, b, true, 0.1, 1e-3):equal(
            F.instance_norm(img, { weight = w, bias = b, eps = 1e-3 })))
    end)

    it("pad(x, pad, mode, value)", function()
        -- F.pad(x, (1, 1), 'constant', 5)
        close(F.pad(x, { 1, 1 }, "constant", 5), { 5, 1, 2, 3, 5, 5, 0.5, -1, 2, 5 })
        local img = tide.randn(1, 2, 3, 3)
        assert.is_true(F.pad(img, { 1, 1, 1, 1 }, "reflect"):equal(F.pad(img, { 1, 1, 1, 1 },
            { mode = "reflect" })))
        assert.is_true(F.pad(img, { 1, 2 }, "constant", { value = 3 }):equal(F.pad(img, { 1, 2 },
            { value = 3 })))
        raises_here("pad: mode given twice, as argument #3 and by name; pass it once", F.pad,
            img, { 1, 1 }, "constant", { mode = "reflect" })
    end)

    it("convolutions and pools", function()
        local img = tide.randn(2, 3, 8, 8)
        local w, b = tide.randn(4, 3, 3, 3), tide.randn(4)
        assert.is_true(F.conv2d(img, w, b, 2, 1, 1, 1):equal(F.conv2d(img, w, b,
            { stride = 2, padding = 1 })))
        assert.is_true(F.conv2d(img, w, nil, { 2, 2 }, { 1, 1 }):equal(F.conv2d(img, w, nil,
            { stride = 2, padding = 1 })))
        assert.is_true(F.conv2d(img, w, { bias = b, stride = 2 }):equal(F.conv2d(img, w, b,
            { stride = 2 })))
        local s, w1 = tide.randn(2, 3, 10), tide.randn(4, 3, 3)
        assert.is_true(F.conv1d(s, w1, nil, 2, 1, 2):equal(F.conv1d(s, w1, nil,
            { stride = 2, padding = 1, dilation = 2 })))
        local wt = tide.randn(3, 2, 4, 4)
        assert.is_true(F.conv_transpose2d(img, wt, nil, 2, 1):equal(F.conv_transpose2d(img, wt,
            nil, { stride = 2, padding = 1 })))
        assert.is_true(F.max_pool2d(img, 3, 2):equal(F.max_pool2d(img, 3, { stride = 2 })))
        assert.is_true(F.max_pool2d(img, 3, 2, 1, 1, true):equal(F.max_pool2d(img, 3,
            { stride = 2, padding = 1, ceil_mode = true })))
        local y, i = F.max_pool2d(img, 2, nil, 0, 1, false, true)
        local y2, i2 = F.max_pool2d(img, 2, { return_indices = true })
        assert.is_true(y:equal(y2) and i:equal(i2))
        assert.is_true(F.avg_pool2d(img, 2, 2, 1, false, false):equal(F.avg_pool2d(img, 2,
            { stride = 2, padding = 1, count_include_pad = false })))
        local _, ai = F.adaptive_max_pool2d(img, 3, true)
        assert.is_true(ai:equal(select(2, F.adaptive_max_pool2d(img, 3,
            { return_indices = true }))))
        assert.is_true(F.interpolate(img, nil, 2, "bilinear", false):equal(F.interpolate(img,
            { scale_factor = 2, mode = "bilinear", align_corners = false })))
        assert.is_true(F.interpolate(img, { 4, 4 }):equal(F.interpolate(img,
            { size = { 4, 4 } })))
    end)

    it("losses, embedding, normalize, cosine_similarity", function()
        local logits = tide.randn(4, 5)
        local t = tide.tensor({ 1, 2, 3, 5 }, { dtype = "int64" })
        local cw = tide.rand(5)
        assert.is_true(F.cross_entropy(logits, t, cw):equal(F.cross_entropy(logits, t,
            { weight = cw })))
        assert.is_true(F.nll_loss(logits, t, nil, nil, -100, nil, "sum"):equal(F.nll_loss(
            logits, t, { reduction = "sum" })))
        assert.is_true(F.normalize(logits, 1, 1):equal(F.normalize(logits, { p = 1, dim = 1 })))
        local other = logits:flip(1)
        assert.is_true(F.cosine_similarity(logits, other, 1):equal(F.cosine_similarity(logits,
            other, { dim = 1 })))
        local E = tide.randn(6, 3)
        assert.is_true(F.embedding(t, E, 2):equal(F.embedding(t, E, { padding_idx = 2 })))
        -- PyTorch's legacy size_average in its slot: False is reduction="sum", with PyTorch's
        -- deprecation warning (kept off the terminal here; spec/ported_scripts4_spec.lua)
        local stderr = io.stderr
        io.stderr = { write = function() end } -- luacheck: ignore
        local ok, legacy = pcall(F.mse_loss, logits, other, false)
        io.stderr = stderr -- luacheck: ignore
        assert.is_true(ok, legacy)
        assert.is_true(legacy:equal(F.mse_loss(logits, other, { reduction = "sum" })))
    end)
end)

describe("dropout2d on a 2-D input {N, C}", function()
    -- PyTorch 1.13's warning for it, once per process
    local MSG = "dropout2d: Received a 2-D input to dropout2d, which is deprecated and will " ..
        "result in an error in a future release. To retain the behavior and silence this " ..
        "warning, please use dropout instead. Note that dropout2d exists to provide " ..
        "channel-wise dropout on inputs with 2 spatial dimensions, a channel dimension, and an " ..
        "optional batch dimension (i.e. 3D or 4D inputs)."

    local function captured(f)
        local lines, real = {}, io.stderr
        io.stderr = { write = function(_, s) lines[#lines + 1] = s end } -- luacheck: ignore
        warn.reset("dropout2d.2d")
        local ok, a = pcall(f)
        io.stderr = real -- luacheck: ignore
        assert(ok, a)
        return a, table.concat(lines)
    end

    it("warns as PyTorch and drops each element as its own channel", function()
        local x = tide.randn(4, 6)
        tide.manual_seed(9)
        local keep = tide.rand(4, 6):ge(0.5)
        tide.manual_seed(9)
        local line = debug.getinfo(1, "l").currentline + 1
        local y, text = captured(function() local r = F.dropout2d(x, 0.5) return r end)
        assert.are.equal(SPEC .. line .. ": tide: warning: " .. MSG .. "\n", text)
        assert.is_true(y:equal(x:mul(keep):mul(2)))
        local m = nn.Dropout2d(0.25)
        local z, text2 = captured(function() return m(tide.randn(4, 64)) end)
        assert.are.same({ 4, 64 }, z.shape)
        assert.is_truthy(text2:find("tide: warning: " .. MSG, 1, true))
        m:eval()
        local v = tide.randn(4, 64)
        assert.are.equal(v, (captured(function() return m(v) end)))
        assert.are.equal(x, (captured(function() return F.dropout2d(x, 0.5, false) end)))
        -- in place, and zeros with p = 1
        local w = x:clone()
        captured(function() return F.dropout2d(w, 1, true, true) end)
        assert.is_true(w:equal(tide.zeros(4, 6)))
        -- other ranks than 2, 3 and 4 still raise
        raises_here("dropout2d: expected input {N, C, H, W} or {C, H, W}, got {6}", F.dropout2d,
            tide.ones(6))
    end)
end)
