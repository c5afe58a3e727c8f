-- torch_functions_spec.lua — PyTorch's top-level names that ported scripts call, against
-- PyTorch 1.13's values and gradients (spec/fixtures/torch_functions_torch.lua, written by
-- spec/fixtures/make_torch_functions.py): tide.X for nn.functional's ops with torch.X's
-- positional arguments (lua/tide/nn_functions.lua), F.X_ in-place activations and the
-- *_with_indices pools (lua/tide/nn/_functional_forms.lua), as_tensor / asarray /
-- scalar_tensor / fill / rsub / t / is_complex (lua/tide/torch_functions.lua), the global modes
-- (lua/tide/global_modes.lua), set_printoptions (lua/tide/print_options.lua, lua/format.c);
-- and their errors, word for word.
local tide = require("tide")
local F = tide.nn.functional
local D = require("spec.support.device")
local P = require("spec.support.porting")

local T = dofile("spec/fixtures/torch_functions_torch.lua")
local DEV = D.name

local function t64(v)
    return P.t64(v, DEV)
end

-- 0-based ids of the fixture as tide's 1-based int64 ids
local function ids(v)
    local function plus(x)
        if type(x) == "table" then
            local r = {}
            for i, y in ipairs(x) do
                r[i] = plus(y)
            end
            return r
        end
        return x + 1
    end
    return tide.tensor(plus(v), { dtype = "int64", device = DEV })
end

local function r(x, ...)
    return x:reshape(...)
end

local function catch(f, ...)
    local ok, err = pcall(f, ...)
    assert.is_false(ok, "expected an error")
    return (tostring(err):gsub("^[^\n]-:%d+: ", ""))
end

local function first(f)
    return function(...)
        return (f(...))
    end
end

local TOL = { out = 1e-12, grad = 1e-10 }
-- PyTorch's celu gradient takes 1 / alpha in float32 (derivatives.yaml: 1.0/alpha.toFloat()),
-- 2e-8 off for alpha 0.7; tide's is float64's
local LOOSE = { celu = { out = 1e-12, grad = 1e-7 } }
local function check(name, fn, ...)
    P.check_case(T.cases[name], name, DEV, LOOSE[name] or TOL, fn, ...)
end

describe("tide.X, PyTorch's torch.X for nn.functional's ops (" .. DEV .. ")", function()
    local S12, S14, S24, S48, S54 = T.S12, T.S14, T.S24, T.S48, T.S54
    local CASES = {
        conv1d = { function(x, w, b)
            return tide.conv1d(r(x, 1, 2, 7), r(w, 3, 2, 3), b, 2, 1, 1, 1)
        end, S14, T.S18, { 0.5, -0.25, 1.0 } },
        conv2d = { function(x, w, b)
            return tide.conv2d(r(x, 1, 2, 4, 6), r(w, 2, 2, 3, 3), b, 2, { 1, 2 })
        end, S48, T.S36, { 0.25, -0.5 } },
        conv3d = { function(x, w)
            return tide.conv3d(r(x, 1, 2, 3, 3, 3), r(w, 2, 2, 2, 2, 2), nil, 1, 1)
        end, S54, T.W32 },
        conv_transpose1d = { function(x, w, b)
            return tide.conv_transpose1d(r(x, 1, 2, 6), r(w, 2, 3, 3), b, 2, 1, 1)
        end, S12, T.S18, { 0.5, -0.25, 1.0 } },
        conv_transpose2d = { function(x, w, b)
            return tide.conv_transpose2d(r(x, 1, 2, 2, 3), r(w, 2, 1, 3, 3), b, 2, 1, 1, 1, 1)
        end, S12, T.S18, { 0.75 } },
        conv_transpose3d = { function(x, w)
            return tide.conv_transpose3d(r(x, 1, 2, 2, 2, 3), r(w, 2, 1, 2, 2, 2))
        end, S24, T.W16 },
        bilinear = { function(a, b, w, c)
            return tide.bilinear(r(a, 3, 2), r(b, 3, 4), r(w, 3, 2, 4), c)
        end, T.S6, S12, S24, { 0.1, 0.2, -0.3 } },
        max_pool1d = { function(x)
            return tide.max_pool1d(r(x, 1, 2, 7), 3, 2, 1)
        end, S14 },
        max_pool2d = { function(x)
            return tide.max_pool2d(r(x, 1, 2, 4, 6), 2, 1, 0, 2, true)
        end, S48 },
        max_pool3d = { function(x)
            return tide.max_pool3d(r(x, 1, 2, 3, 3, 3), 2, 1)
        end, S54 },
        max_pool1d_with_indices = { first(function(x)
            return tide.max_pool1d_with_indices(r(x, 1, 2, 7), 3, 2)
        end), S14 },
        avg_pool1d = { function(x)
            return tide.avg_pool1d(r(x, 1, 2, 7), 3, 2, 1, true, false)
        end, S14 },
        adaptive_avg_pool1d = { function(x)
            return tide.adaptive_avg_pool1d(r(x, 1, 2, 7), 3)
        end, S14 },
        adaptive_max_pool1d = { first(function(x)
            return tide.adaptive_max_pool1d(r(x, 1, 2, 7), 3)
        end), S14 },
        constant_pad_nd = { function(x)
            return tide.constant_pad_nd(r(x, 2, 6), { 1, 2, 0, 1 }, 2.5)
        end, S12 },
        layer_norm = { function(x, w, b)
            return tide.layer_norm(r(x, 2, 3, 4), { 4 }, w, b, 1e-3, true)
        end, S24, { 1.0, 0.5, -1.0, 2.0 }, { 0.1, 0.0, -0.1, 0.2 } },
        group_norm = { function(x, w, b)
            return tide.group_norm(r(x, 2, 4, 3), 2, w, b, 1e-5, true)
        end, S24, { 1.0, 0.5, -1.0, 2.0 }, { 0.1, 0.0, -0.1, 0.2 } },
        batch_norm_train = { function(x, w, b)
            return tide.batch_norm(r(x, 3, 2, 4), w, b, nil, nil, true, 0.1, 1e-5, true)
        end, S24, { 1.5, -0.5 }, { 0.2, 0.3 } },
        batch_norm_eval = { function(x, w, b)
            return tide.batch_norm(r(x, 3, 2, 4), w, b, t64({ 0.5, -0.25 }), t64({ 2.0, 0.5 }),
                false, 0.1, 1e-5, true)
        end, S24, { 1.5, -0.5 }, { 0.2, 0.3 } },
        instance_norm = { function(x, w, b)
            return tide.instance_norm(r(x, 2, 3, 4), w, b, nil, nil, true, 0.1, 1e-5, true)
        end, S24, { 1.0, 2.0, -1.0 }, { 0.5, 0.0, 0.25 } },
        embedding = { function(w)
            return tide.embedding(r(w, 6, 2), ids(T.EMB_IDS), 3) -- PyTorch's padding_idx 2
        end, S12 },
        embedding_bag_sum = { function(w)
            return tide.embedding_bag(r(w, 6, 2), ids(T.BAG_IDS), ids(T.BAG_OFF))
        end, S12 },
        embedding_bag_mean = { function(w)
            return tide.embedding_bag(r(w, 6, 2), ids(T.BAG_IDS), ids(T.BAG_OFF), false, 1)
        end, S12 },
        embedding_bag_max = { function(w)
            return tide.embedding_bag(r(w, 6, 2), ids(T.BAG_IDS), ids(T.BAG_OFF), false, 2)
        end, S12 },
        pdist = { function(x)
            return tide.pdist(r(x, 4, 3), 1.5)
        end, S12 },
        pairwise_distance = { function(a, b)
            return tide.pairwise_distance(r(a, 3, 4), r(b, 3, 4), 3, 1e-6, true)
        end, S12, T.POS12 },
        cosine_similarity = { function(a, b)
            return tide.cosine_similarity(r(a, 3, 4), r(b, 3, 4), 1) -- PyTorch's dim 0
        end, S12, T.POS12 },
        kl_div = { function(x, y)
            return tide.kl_div(x, y)
        end, S12, T.POS12 },
        kl_div_sum_log_target = { function(x, y)
            return tide.kl_div(x, y, 2, { log_target = true })
        end, S12, (function()
            local rev = {}
            for i = #S12, 1, -1 do
                rev[#rev + 1] = S12[i]
            end
            return rev
        end)() },
        cosine_embedding_loss = { function(a, b)
            return tide.cosine_embedding_loss(r(a, 3, 4), r(b, 3, 4), t64(T.Y3), 0.2, 0)
        end, S12, T.POS12 },
        hinge_embedding_loss = { function(x)
            return tide.hinge_embedding_loss(x, t64(T.Y6), 0.5, 2)
        end, { S12[1], S12[2], S12[3], S12[4], S12[5], S12[6] } },
        margin_ranking_loss = { function(a, b)
            return tide.margin_ranking_loss(a, b, t64(T.Y5), 0.3, 1)
        end, { S12[1], S12[2], S12[3], S12[4], S12[5] },
            { S12[6], S12[7], S12[8], S12[9], S12[10] } },
        poisson_nll_loss = { function(x)
            return tide.poisson_nll_loss(x, t64(T.P6), false, true, 1e-8, 2)
        end, { T.POS12[1], T.POS12[2], T.POS12[3], T.POS12[4], T.POS12[5], T.POS12[6] } },
        triplet_margin_loss = { function(a, p, n)
            return tide.triplet_margin_loss(r(a, 3, 4), r(p, 3, 4), r(n, 3, 4), 0.5, 1.5, 1e-6,
                true, 0)
        end, S12, T.POS12, { S24[1], S24[2], S24[3], S24[4], S24[5], S24[6], S24[7], S24[8],
            S24[9], S24[10], S24[11], S24[12] } },
        binary_cross_entropy_with_logits = { function(x)
            return tide.binary_cross_entropy_with_logits(r(x, 2, 3), r(t64(T.T6), 2, 3),
                t64({ 1.0, 0.5, 2.0 }), t64({ 2.0, 1.0, 0.5 }), 1)
        end, { S12[1], S12[2], S12[3], S12[4], S12[5], S12[6] } },
        ctc_loss = { function(x)
            return tide.ctc_loss(r(x, 6, 2, 4):log_softmax(3), ids(T.CTC_TARGETS), { 6, 5 },
                { 3, 2 }, 1, 1, false) -- blank: PyTorch's class 0
        end, S48 },
        prelu = { function(x, w)
            return tide.prelu(r(x, 2, 3, 2), w)
        end, S12, { 0.25, -0.5, 2.0 } },
        selu = { function(x) return tide.selu(x) end, S12 },
        celu = { function(x) return tide.celu(x, 0.7) end, S12 },
        rrelu = { function(x) return tide.rrelu(x, 0.1, 0.3, false) end, S12 },
        threshold = { function(x) return tide.threshold(x, 0.2, -1.0) end, S12 },
        hardshrink = { function(x) return tide.hardshrink(x, 0.4) end, S12 },
        pixel_shuffle = { function(x)
            return tide.pixel_shuffle(r(x, 1, 4, 2, 3), 2)
        end, S24 },
        pixel_unshuffle = { function(x)
            return tide.pixel_unshuffle(r(x, 1, 1, 4, 6), 2)
        end, S24 },
        channel_shuffle = { function(x)
            return tide.channel_shuffle(r(x, 1, 6, 2), 3)
        end, S12 },
        native_channel_shuffle = { function(x)
            return tide.native_channel_shuffle(r(x, 1, 6, 2), 2)
        end, S12 },
    }
    P.run_cases(it, T, CASES, check)

    it("max_pool1d_with_indices and adaptive_max_pool1d give 1-based indices", function()
        local x = r(t64(S14), 1, 2, 7)
        local _, i = tide.max_pool1d_with_indices(x, 3, 2)
        assert.are.same(T.values.max_pool1d_with_indices, i:cpu():totable())
        assert.are.equal("int64", i.dtype)
        _, i = tide.adaptive_max_pool1d(x, 3)
        assert.are.same(T.values.adaptive_max_pool1d, i:cpu():totable())
    end)

    it("batch_norm and instance_norm update the running estimates as torch's", function()
        local x = r(t64(S24), 3, 2, 4)
        local rm, rv = t64({ 0.5, -0.25 }), t64({ 2.0, 0.5 })
        local out = tide.batch_norm(x, nil, nil, rm, rv, true, 0.2, 1e-5, true)
        local v = T.values.batch_norm_running
        P.close(v.out, out, 1e-12, "out")
        P.close(v.running_mean, rm, 1e-12, "running_mean")
        P.close(v.running_var, rv, 1e-12, "running_var")
        rm, rv = t64({ 0.5, -0.25, 1.0 }), t64({ 2.0, 0.5, 1.5 })
        out = tide.instance_norm(r(t64(S24), 2, 3, 4), nil, nil, rm, rv, true, 0.3, 1e-5, true)
        v = T.values.instance_norm_running
        P.close(v.out, out, 1e-12, "out")
        P.close(v.running_mean, rm, 1e-12, "running_mean")
        P.close(v.running_var, rv, 1e-12, "running_var")
    end)

    it("take the optional arguments by position, by name, or both", function()
        local x = r(t64(S48), 1, 2, 4, 6)
        local w, b = r(t64(T.S36), 2, 2, 3, 3), t64({ 0.25, -0.5 })
        local want = F.conv2d(x, w, b, { stride = 2, padding = { 1, 2 } })
        for _, y in ipairs({ tide.conv2d(x, w, b, 2, { 1, 2 }),
            tide.conv2d(x, w, b, { stride = 2, padding = { 1, 2 } }),
            tide.conv2d(x, w, { bias = b, stride = 2, padding = { 1, 2 } }),
            tide.conv2d(x, w, b, 2, { padding = { 1, 2 } }) }) do
            assert.is_true(tide.equal(want, y))
        end
        local y = t64(S12)
        assert.is_true(tide.equal(tide.layer_norm(r(y, 3, 4), { 4 }, { eps = 1e-3 }),
            F.layer_norm(r(y, 3, 4), { 4 }, { eps = 1e-3 })))
        assert.is_true(tide.equal(tide.kl_div(y:abs(), y:abs(), { reduction = "sum" }),
            tide.kl_div(y:abs(), y:abs(), 2)))
        -- the losses' reduction: "none" by default, as torch.X's in PyTorch 1.13
        local m = r(y, 3, 4)
        assert.are.same({ 3, 4 }, tide.binary_cross_entropy_with_logits(m, m:sigmoid()).shape)
        assert.are.same({}, tide.binary_cross_entropy_with_logits(m, m:sigmoid(), nil, nil,
            "mean").shape)
        -- F.X's table of options is taken as it is where the names are torch.X's
        assert.is_true(tide.equal(tide.pairwise_distance(r(y, 3, 4), r(y, 3, 4):flip({ 2 }),
            { p = 1 }), F.pairwise_distance(r(y, 3, 4), r(y, 3, 4):flip({ 2 }), { p = 1 })))
    end)

    it("dropout(input, p, train): torch's arguments, both required", function()
        local x = tide.ones({ 2000 }, { device = DEV })
        assert.are.equal(x, tide.dropout(x, 0.5, false))
        assert.are.equal(x, tide.alpha_dropout(x, 0.3, false))
        local m = x:view(20, 100)
        assert.are.equal(m, tide.feature_alpha_dropout(m, 0.3, false))
        local y = tide.dropout(x, 0.5, true)
        local kept = y:ne(0):sum():item()
        assert.is_true(kept > 800 and kept < 1200, "kept " .. kept)
        assert.is_true(y:eq(0):logical_or(y:eq(2)):all():item())
        assert.are.equal(0, tide.dropout(x, 1, true):abs():sum():item())
        assert.are.equal(0, tide.alpha_dropout(x, 1, true):abs():sum():item())
    end)

    it("embedding_bag's mode: PyTorch's 0, 1, 2 or the names", function()
        local w = r(t64(S12), 6, 2)
        local a = tide.embedding_bag(w, ids(T.BAG_IDS), ids(T.BAG_OFF), false, 2)
        local b = tide.embedding_bag(w, ids(T.BAG_IDS), ids(T.BAG_OFF), { mode = "max" })
        assert.is_true(tide.equal(a, b))
    end)

    it("raise with the op's name, the bad value and the fix", function()
        local x = t64(S12)
        local img = r(t64(S48), 1, 2, 4, 6)
        local w = r(t64(T.S36), 2, 2, 3, 3)
        assert.are.equal("tide: conv2d: stride given twice, as argument #4 and by name; " ..
            "pass it once", catch(tide.conv2d, img, w, nil, 2, { stride = 2 }))
        assert.are.equal("tide: conv2d: expected at most 7 arguments (input, weight, bias, " ..
            "stride, padding, dilation, groups), got 8",
            catch(tide.conv2d, img, w, nil, 1, 0, 1, 1, 1))
        assert.are.equal("tide: selu: expected at most 1 argument (input), got 2",
            catch(tide.selu, x, { inplace = true }))
        assert.are.equal('tide: conv2d: unknown option "strid" (did you mean "stride"?)',
            catch(tide.conv2d, img, w, nil, { strid = 2 }))
        assert.are.equal("tide: dropout: expected train to be a boolean, got nil; call " ..
            "dropout(input, p, train)", catch(tide.dropout, x, 0.5))
        assert.are.equal("tide: alpha_dropout: expected p to be a number, got table; call " ..
            "alpha_dropout(input, p, train)", catch(tide.alpha_dropout, x, { p = 0.5 }, true))
        assert.are.equal("tide: embedding: weight is int64 and indices float64: " ..
            "torch.embedding takes (weight, indices), F.embedding (input, weight); swap them",
            catch(tide.embedding, ids({ 0, 1 }), r(x, 6, 2)))
        -- sparse = true: the same lookups (the gradient dense)
        assert.is_true(tide.equal(tide.embedding(r(x, 6, 2), ids({ 0, 1 })),
            tide.embedding(r(x, 6, 2), ids({ 0, 1 }), nil, false, true)))
        assert.are.equal('tide: kl_div: reduction must be "none", "mean" or "sum" (or ' ..
            "PyTorch's 0, 1, 2), got 3", catch(tide.kl_div, x, x, 3))
        assert.are.equal("tide: layer_norm: expected cudnn_enable to be a boolean (it changes " ..
            "nothing here), got number", catch(tide.layer_norm, x, { 12 }, nil, nil, 1e-5, 1))
        assert.are.equal('tide: rrelu: option "generator" is not supported yet',
            catch(tide.rrelu, x, 0.1, 0.3, true, tide.Generator()))
        -- F.X's errors under torch.X's name
        assert.are.equal("tide: native_channel_shuffle: expected groups to be an integer >= " ..
            "1, got 0", catch(tide.native_channel_shuffle, r(x, 1, 6, 2), 0))
        assert.are.equal("tide: constant_pad_nd: expected pad as a table of 2 sizes per " ..
            "padded dim (at most 2 for a 1-D input), got 3 sizes",
            catch(tide.constant_pad_nd, x, { 1, 1, 1 }))
        assert.are.equal("tide: constant_pad_nd: expected at most 3 arguments (input, pad, " ..
            "value), got 4", catch(tide.constant_pad_nd, x, { 1, 1 }, 0, 0))
        assert.are.equal("tide: max_pool1d_with_indices: expected input {N, C, L} or {C, L}, " ..
            "got {12}",
            catch(tide.max_pool1d_with_indices, x, 2))
    end)
end)

describe("nn.functional's in-place activations and *_with_indices pools (" .. DEV .. ")",
    function()
        local S12 = T.S12
        local CASES = {
            relu_ = { function(x) return F.relu_(x * 1) end, S12 },
            elu_ = { function(x) return F.elu_(x * 1, 0.7) end, S12 },
            celu_ = { function(x) return F.celu_(x * 1, { alpha = 1.5 }) end, S12 },
            selu_ = { function(x) return F.selu_(x * 1) end, S12 },
            leaky_relu_ = { function(x) return F.leaky_relu_(x * 1, 0.2) end, S12 },
            hardtanh_ = { function(x)
                return F.hardtanh_(x * 1, { min_val = -0.5, max_val = 1.5 })
            end, S12 },
            rrelu_ = { function(x)
                return F.rrelu_(x * 1, { lower = 0.1, upper = 0.3, training = false })
            end, S12 },
            threshold_ = { function(x) return F.threshold_(x * 1, 0.2, -1.0) end, S12 },
            max_pool2d_with_indices = { first(function(x)
                return F.max_pool2d_with_indices(r(x, 1, 2, 4, 6), 2, { stride = 1, padding = 0,
                    dilation = 2, ceil_mode = true })
            end), T.S48 },
            max_pool3d_with_indices = { first(function(x)
                return F.max_pool3d_with_indices(r(x, 1, 2, 3, 3, 3), 2, { stride = 1 })
            end), T.S54 },
            adaptive_max_pool2d_with_indices = { first(function(x)
                return F.adaptive_max_pool2d_with_indices(r(x, 1, 2, 4, 6), { 3, 2 })
            end), T.S48 },
            adaptive_max_pool3d_with_indices = { first(function(x)
                return F.adaptive_max_pool3d_with_indices(r(x, 1, 2, 3, 3, 3), 2)
            end), T.S54 },
        }
        P.run_cases(it, T, CASES, check)

        it("write into the input and return it", function()
            for _, f in ipairs({ F.relu_, F.elu_, F.celu_, F.selu_, F.leaky_relu_, F.hardtanh_,
                F.rrelu_ }) do
                local x = t64(S12)
                local before = x:clone()
                local y = f(x)
                assert.are.equal(x, y)
                assert.is_false(tide.equal(before, x))
            end
            local x = t64(S12)
            assert.are.equal(x, F.threshold_(x, 0.2, -1))
            assert.are.same(T.cases.threshold_.out, x:cpu():totable())
        end)

        it("the pools give PyTorch's indices, 1-based", function()
            local img, vol = r(t64(T.S48), 1, 2, 4, 6), r(t64(T.S54), 1, 2, 3, 3, 3)
            local _, i = F.max_pool2d_with_indices(img, 2, { stride = 1, dilation = 2,
                ceil_mode = true })
            assert.are.same(T.values.max_pool2d_with_indices, i:cpu():totable())
            _, i = F.max_pool3d_with_indices(vol, 2, { stride = 1 })
            assert.are.same(T.values.max_pool3d_with_indices, i:cpu():totable())
            _, i = F.adaptive_max_pool2d_with_indices(img, { 3, 2 })
            assert.are.same(T.values.adaptive_max_pool2d_with_indices, i:cpu():totable())
            _, i = F.adaptive_max_pool3d_with_indices(vol, 2)
            assert.are.same(T.values.adaptive_max_pool3d_with_indices, i:cpu():totable())
            local y, j = F.max_pool1d_with_indices(r(t64(T.S14), 1, 2, 7), 3, { stride = 2 })
            local y2, j2 = tide.max_pool1d_with_indices(r(t64(T.S14), 1, 2, 7), 3, 2)
            assert.is_true(tide.equal(y, y2) and tide.equal(j, j2))
        end)

        it("refuse as t:relu_() does, naming the fixed form, and change nothing", function()
            local leaf = t64(S12):requires_grad_(true)
            assert.are.equal("tide: elu_: in-place operation on a leaf tensor that requires " ..
                "grad; wrap it in tide.no_grad or use detach()", catch(F.elu_, leaf))
            assert.are.equal("tide: relu_: in-place operation on a leaf tensor that requires " ..
                "grad; wrap it in tide.no_grad or use detach()", catch(F.relu_, leaf))
            assert.are.equal("tide: threshold_: in-place operation on a leaf tensor that " ..
                "requires grad; wrap it in tide.no_grad or use detach()",
                catch(F.threshold_, leaf, 0, 1))
            local x = t64(S12)
            local before = x:clone()
            assert.are.equal('tide: elu_: unknown option "inplace"; options are alpha',
                catch(F.elu_, x, { inplace = true }))
            assert.are.equal("tide: hardtanh_: expected min_val <= max_val, got 2 > 1",
                catch(F.hardtanh_, x, { min_val = 2, max_val = 1 }))
            assert.are.equal("tide: leaky_relu_: expected negative_slope to be a number, got " ..
                "string", catch(F.leaky_relu_, x, { negative_slope = "x" }))
            assert.are.equal('tide: max_pool2d_with_indices: unknown option "return_indices"; ' ..
                "options are stride, padding, dilation, ceil_mode",
                catch(F.max_pool2d_with_indices, r(x, 1, 1, 3, 4), 2, { return_indices = false }))
            assert.are.equal("tide: adaptive_max_pool2d_with_indices: expected at most 2 " ..
                "arguments, got 3 (argument #3 is a table); remove it: " ..
                "adaptive_max_pool2d_with_indices takes no such argument or option",
                catch(F.adaptive_max_pool2d_with_indices, r(x, 1, 1, 3, 4), 2, {}))
            assert.is_true(tide.equal(before, x))
            -- under no_grad a leaf is written, as t:relu_()
            tide.no_grad(function() F.relu_(leaf) end)
            assert.are.equal(0, leaf:lt(0):sum():item())
        end)
    end)

describe("as_tensor, asarray, scalar_tensor, fill, rsub, t, is_complex", function()
    it("as_tensor keeps a tensor of the asked dtype and device, else converts", function()
        local a = tide.tensor({ 1.5, 2.5 }, { device = DEV })
        assert.are.equal(a, tide.as_tensor(a))
        assert.are.equal(a, tide.as_tensor(a, { dtype = "float32", device = DEV }))
        local b = tide.as_tensor(a, { dtype = "float64" })
        assert.are_not.equal(a, b)
        assert.are.equal("float64", b.dtype)
        assert.are.same({ 1.5, 2.5 }, b:cpu():totable())
        local c = tide.as_tensor(a, { device = D.other })
        assert.are.equal(tide.device(D.other), c.device)
        assert.are.equal("int64", tide.as_tensor({ 1, 2 }).dtype)
        assert.are.equal("bool", tide.as_tensor({ true, false }).dtype)
        assert.are.same({ { 1, 2 }, { 3, 4 } }, tide.as_tensor({ { 1, 2 }, { 3, 4 } },
            { dtype = "float64" }):totable())
        assert.are.equal(2.5, tide.as_tensor(2.5):item())
        -- a converted tensor keeps its graph (t:to's)
        local g = tide.tensor({ 1.0, 2.0 }, { requires_grad = true })
        tide.as_tensor(g, { dtype = "float64" }):sum():backward()
        assert.are.same({ 1, 1 }, g.grad:totable())
    end)

    it("asarray copies on copy = true and never on copy = false", function()
        local a = tide.tensor({ 1.5, 2.5 })
        assert.are.equal(a, tide.asarray(a))
        local b = tide.asarray(a, { copy = true })
        assert.are_not.equal(a, b)
        b:fill_(0)
        assert.are.same({ 1.5, 2.5 }, a:totable())
        assert.are.equal(a, tide.asarray(a, { copy = false, dtype = "float32" }))
        assert.are.equal("float64", tide.asarray(a, { dtype = "float64" }).dtype)
        assert.are.same({ 1, 2 }, tide.asarray({ 1, 2 }):totable())
        assert.are.equal("tide: asarray: copy = false, but the float32 tensor on cpu must be " ..
            "converted to float64 on cpu; leave copy unset to convert it",
            catch(tide.asarray, a, { dtype = "float64", copy = false }))
        assert.are.equal("tide: asarray: copy = false cannot alias a Lua table: its values " ..
            "are copied into a new tensor; leave copy unset",
            catch(tide.asarray, { 1, 2 }, { copy = false }))
        assert.are.equal('tide: as_tensor: unknown option "copy"; options are dtype, device',
            catch(tide.as_tensor, a, { copy = true }))
        assert.are.equal("tide: as_tensor: expected a tensor, a number, a boolean or a nested " ..
            "table, got string", catch(tide.as_tensor, "x"))
        assert.are.equal('tide: as_tensor: unknown device "gpu"; use "cpu", "cpu:N", "cuda" ' ..
            'or "cuda:N"', catch(tide.as_tensor, a, { device = "gpu" }))
    end)

    it("scalar_tensor is 0-d, of the default float dtype unless told", function()
        local s = tide.scalar_tensor(3)
        assert.are.same({}, s.shape)
        assert.are.equal("float32", s.dtype)
        assert.are.equal(3, s:item())
        assert.are.equal(1, tide.scalar_tensor(true):item())
        local i = tide.scalar_tensor(3, { dtype = "int64", device = DEV })
        assert.are.equal("int64", i.dtype)
        assert.are.equal(tide.device(DEV), i.device)
        assert.is_true(tide.scalar_tensor(1.5, { requires_grad = true }).requires_grad)
        assert.are.equal("tide: scalar_tensor: expected a number or a boolean, got a tensor",
            catch(tide.scalar_tensor, s))
    end)

    it("fill and rsub give PyTorch's values and gradients", function()
        check("fill_tensor", function(x, v) return tide.fill(x * 1, v) end,
            { T.S12[1], T.S12[2], T.S12[3], T.S12[4] }, 2.5)
        check("rsub_tensor", function(a, b) return tide.rsub(a, b, 3) end,
            { T.S12[1], T.S12[2], T.S12[3], T.S12[4] }, { T.S12[5], T.S12[6], T.S12[7], T.S12[8] })
        check("rsub_number", function(a) return tide.rsub(a, 5.5, 2) end,
            { T.S12[1], T.S12[2], T.S12[3], T.S12[4] })
        local n = tide.tensor({ 1, 2, 3 })
        assert.are.same(T.values.rsub_int, tide.rsub(n, 5, 2):totable())
        assert.are.equal("int64", tide.rsub(n, 5, 2).dtype)
        assert.are.same(T.values.rsub_int_float, tide.rsub(n, 2.5):totable())
        assert.are.same(T.values.fill_int, tide.fill(n, 2.5):totable())
        assert.are.same({ 1, 2, 3 }, n:totable()) -- out of place
        local x = tide.tensor({ 1.0, 2.0 }, { requires_grad = true })
        local y = tide.fill(x, 7)
        assert.are.same({ 7, 7 }, y:totable())
        y:sum():backward()
        assert.are.same({ 0, 0 }, x.grad:totable())
        assert.are.equal("tide: fill: expected a number or a 0-d tensor as value, got a " ..
            "tensor of shape {2}; pass value:reshape({}) or value:item()",
            catch(tide.fill, n, tide.tensor({ 1, 2 })))
        assert.are.equal("tide: rsub: subtraction with a bool tensor is not supported; to " ..
            "invert a mask use logical_not()", catch(tide.rsub, tide.tensor({ true }), 1))
        assert.are.equal("tide: rsub: alpha must be an integer for an integer result, got 2.5;" ..
            " convert the input with :double() first", catch(tide.rsub, n, 5, 2.5))
        assert.are.equal("tide: rsub: expected other to be a tensor or a number, got nil",
            catch(tide.rsub, n))
    end)

    it("t and is_complex are the methods", function()
        local m = tide.tensor({ { 1, 2, 3 }, { 4, 5, 6 } })
        assert.are.same({ { 1, 4 }, { 2, 5 }, { 3, 6 } }, tide.t(m):totable())
        assert.are.same({ 1, 2 }, tide.t(tide.tensor({ 1, 2 })):totable())
        assert.is_false(tide.is_complex(m))
        assert.are.equal("tide: is_complex: argument #1 must be a tensor, got number",
            catch(tide.is_complex, 1))
    end)
end)

describe("PyTorch's global modes", function()
    it("inference_mode: no_grad whose mode reads back, restored on error", function()
        assert.is_false(tide.is_inference_mode_enabled())
        local x = tide.ones(2):requires_grad_(true)
        local on, grad, y = tide.inference_mode(function()
            return tide.is_inference_mode_enabled(), tide.is_grad_enabled(), x * 2
        end)
        assert.is_true(on)
        assert.is_false(grad)
        assert.is_false(y.requires_grad)
        assert.is_false(tide.no_grad(tide.is_inference_mode_enabled))
        -- inference_mode(false, fn): grad mode on and inference mode off, as PyTorch's
        local inner = tide.inference_mode(function()
            return { tide.inference_mode(false, function()
                return tide.is_inference_mode_enabled(), tide.is_grad_enabled()
            end) }
        end)
        assert.are.same({ false, true }, inner)
        assert.has_error(function()
            tide.inference_mode(function() error("boom") end)
        end)
        assert.is_false(tide.is_inference_mode_enabled())
        assert.is_true(tide.is_grad_enabled())
        assert.are.equal("tide: inference_mode: expected a function (or a boolean mode, then a " ..
            "function), got nil", catch(tide.inference_mode, nil))
    end)

    it("deterministic algorithms, matmul precision, inter-op threads: kept", function()
        assert.is_false(tide.are_deterministic_algorithms_enabled())
        tide.use_deterministic_algorithms(true, { warn_only = true })
        assert.is_true(tide.are_deterministic_algorithms_enabled())
        assert.is_true(tide.is_deterministic_algorithms_warn_only_enabled())
        tide.use_deterministic_algorithms(false)
        assert.is_false(tide.are_deterministic_algorithms_enabled())
        assert.is_false(tide.is_deterministic_algorithms_warn_only_enabled())
        assert.are.equal("tide: use_deterministic_algorithms: expected mode to be a boolean, " ..
            "got number; call use_deterministic_algorithms(true)",
            catch(tide.use_deterministic_algorithms, 1))
        assert.are.equal('tide: use_deterministic_algorithms: unknown option "warnonly" ' ..
            '(did you mean "warn_only"?)',
            catch(tide.use_deterministic_algorithms, true, { warnonly = true }))
        assert.is_false(tide.are_deterministic_algorithms_enabled())

        assert.are.equal("highest", tide.get_float32_matmul_precision())
        tide.set_float32_matmul_precision("medium")
        assert.are.equal("medium", tide.get_float32_matmul_precision())
        assert.are.equal('tide: set_float32_matmul_precision: expected "highest", "high" or ' ..
            '"medium", got "low"', catch(tide.set_float32_matmul_precision, "low"))
        assert.are.equal("medium", tide.get_float32_matmul_precision())
        tide.set_float32_matmul_precision("highest")

        assert.are.equal(1, tide.get_num_interop_threads())
        tide.set_num_interop_threads(4)
        assert.are.equal(4, tide.get_num_interop_threads())
        assert.are.equal("tide: set_num_interop_threads: expected an integer >= 1, got 0",
            catch(tide.set_num_interop_threads, 0))
        tide.set_num_interop_threads(1)
    end)
end)

describe("set_printoptions", function()
    local built = tide.core._set_print_options ~= nil
    local function printed(t, opts)
        tide.set_printoptions({ profile = "default" })
        tide.set_printoptions(opts)
        local ok, s = pcall(tostring, t)
        tide.set_printoptions({ profile = "default" })
        assert(ok, s)
        return (s:gsub("\n%[tide%.Tensor of shape [^\n]*%]$", ""))
    end

    it("prints as PyTorch's options say (its body, tide's \"...\")", function()
        if not built then
            pending("tide.core was built before print options (lua/format.c): run make")
            return
        end
        local W = T.values.print
        local f12 = tide.tensor(T.F12)
        assert.are.equal(W.default, printed(f12))
        assert.are.equal(W.precision2, printed(f12, { precision = 2 }))
        assert.are.equal(W.sci, printed(tide.tensor(T.SCI), { precision = 3, sci_mode = true }))
        local thirds = tide.arange(0, 40):float():div(3)
        assert.are.equal(W.linewidth, printed(thirds, { linewidth = 40 }))
        assert.are.equal(W.rows, printed(tide.tensor(T.S16):float():view(2, 8),
            { linewidth = 30, precision = 3 }))
        assert.are.equal(W.cube, printed(tide.tensor(T.S24):float():view(2, 3, 4)))
        local ints = tide.arange(0, 10)
        assert.are.equal(W.edgeitems, printed(ints, { threshold = 5, edgeitems = 2 }))
        assert.are.equal(W.edgeitems_rows, printed(tide.arange(0, 40):view(4, 10),
            { threshold = 5, edgeitems = 1 }))
        local many = tide.arange(0, 1200):float():div(7):add(0.5)
        assert.are.equal(W.short, printed(many, { profile = "short" }))
        assert.are.equal(W.default_many, printed(many))
        -- the profile first, then the options given (threshold 5 over "full"'s inf)
        assert.are.equal(W.full_ints, printed(ints, { threshold = 5, profile = "full" }))
        tide.set_printoptions({ threshold = 5 })
        tide.set_printoptions({ profile = "full" })
        local ok, s = pcall(tostring, ints)
        tide.set_printoptions({ profile = "default" })
        assert(ok, s)
        assert.are.equal("[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]", s:match("^[^\n]*"))
        assert.are.equal("[...]", printed(ints, { threshold = 5, edgeitems = 0 }))
    end)

    it("keeps what was set, sci_mode back to automatic unless given", function()
        if not built then
            pending("tide.core was built before print options (lua/format.c): run make")
            return
        end
        local x = tide.tensor({ 0.5, 1.25 })
        tide.set_printoptions({ precision = 2, sci_mode = true })
        local ok, a = pcall(tostring, x)
        tide.set_printoptions({ linewidth = 60 })
        local ok2, b = pcall(tostring, x)
        tide.set_printoptions({ profile = "default" })
        assert(ok and ok2)
        assert.are.equal("[5.00e-01, 1.25e+00]", a:match("^[^\n]*"))
        assert.are.equal("[0.50, 1.25]", b:match("^[^\n]*"))
        assert.are.equal("[0.5000, 1.2500]", tostring(x):match("^[^\n]*"))
    end)

    it("rejects a bad value, changing nothing", function()
        local x = tide.tensor({ 0.5, 1.25 })
        local before = tostring(x)
        assert.are.equal("tide: set_printoptions: precision must be an integer in 0..100, " ..
            "got 2.5", catch(tide.set_printoptions, { precision = 2.5, linewidth = 10 }))
        assert.are.equal('tide: set_printoptions: profile must be "default", "short" or ' ..
            '"full", got "long"', catch(tide.set_printoptions, { profile = "long" }))
        assert.are.equal("tide: set_printoptions: threshold must be a number >= 0 " ..
            "(math.huge: never summarize), got -1", catch(tide.set_printoptions,
            { threshold = -1 }))
        assert.are.equal("tide: set_printoptions: sci_mode must be true, false or nil " ..
            "(chosen from the values), got 1", catch(tide.set_printoptions, { sci_mode = 1 }))
        assert.are.equal('tide: set_printoptions: unknown option "precison" (did you mean ' ..
            '"precision"?)', catch(tide.set_printoptions, { precison = 2 }))
        assert.are.equal("tide: set_printoptions: expected an options table such as " ..
            "{precision = 2}, got number", catch(tide.set_printoptions, 2))
        assert.are.equal("tide: set_printoptions: edgeitems must be an integer in 0..2^30, " ..
            "got 4294967296", catch(tide.set_printoptions,
            { edgeitems = 4294967296 })) -- bounded: 2 * edgeitems in C must not overflow
        assert.are.equal(before, tostring(x))
    end)

    it("the core's setter bounds its integers itself (no wrap into int, no 2 * edgeitems " ..
        "overflow)", function()
        local set = tide.core._set_print_options
        if not set then
            pending("tide.core was built before print options (lua/format.c): run make")
            return
        end
        local x = tide.arange(0, 5)
        local before = tostring(x)
        for _, bad in ipairs({
            { 4294967300, 1000, 3, 80 }, -- 2^32 + 4: 4 once cast to int
            { -4294967296, 1000, 3, 80 },
            { 4, 2, 9007199254740992, 80 }, -- 2^53 (math.maxinteger exists on 5.3+ only)
            { 4, 2, 4294967296, 80 },
            { 4, 1000, 3, -9007199254740992 },
            { 4, 1000, 3, 9007199254740992 },
        }) do
            local ok, err = pcall(set, bad[1], bad[2], bad[3], bad[4], nil)
            assert.is_false(ok, table.concat(bad, ", "))
            assert.truthy(tostring(err):find("out of range", 1, true), tostring(err))
        end
        assert.are.equal(before, tostring(x))
    end)
end)
