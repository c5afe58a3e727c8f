-- porting_nn2_spec.lua — the second batch of nn layers a ported script reaches for, against
-- PyTorch 1.13's values and gradients (spec/fixtures/porting_nn2_torch.lua, written by
-- spec/fixtures/make_porting_nn2.py): LocalResponseNorm, LPPool1d/2d, MaxUnpool1d/2d, RReLU
-- (eval by value, training by its statistics), EmbeddingBag (sum, mean, max, weights, padding,
-- 2-D input, include_last_offset), affine_grid and grid_sample (every mode and padding, and a
-- spatial transformer's gradient to theta), gumbel_softmax (by its properties: it draws);
-- errors, devices and modules.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local D = require("spec.support.device")
local P = require("spec.support.porting")

local T = dofile("spec/fixtures/porting_nn2_torch.lua")
local unpack = table.unpack or unpack -- 5.1, LuaJIT
local DEV = D.name

local function t64(v)
    return P.t64(v, DEV)
end

local function ids(v)
    return tide.tensor(v, { dtype = "int64", device = DEV })
end

local function catch(f)
    local ok, err = pcall(f)
    assert.is_false(ok, "expected an error")
    return tostring(err)
end

local BAG = { 3, 5, 1, 5, 4, 2, 3 } -- the fixture's ids plus one
local OFF = { 1, 4, 4, 6 }          -- its offsets plus one: bags of 3, 0, 2 and 2 lookups

describe("nn layers II, PyTorch's values (" .. DEV .. ")", function()
    local function r(x, ...)
        return x:reshape(...)
    end
    local function unpool(x, pool, unpool_fn, shape, k, opts, out_size)
        local y, i = pool(r(x, unpack(shape)), k, opts)
        local uo = {}
        for key, v in pairs(opts or {}) do
            if key ~= "return_indices" then
                uo[key] = v
            end
        end
        uo.output_size = out_size
        return unpool_fn(y, i, k, uo)
    end
    local CASES = {
        lrn = { function(x) return F.local_response_norm(r(x, 2, 5, 3), 3) end, T.S30 },
        lrn_4d = { function(x)
            return nn.LocalResponseNorm(2, { alpha = 1e-2, beta = 0.5, k = 2 })(r(x, 1, 5, 2, 3))
        end, T.S30 },
        lp_pool1d = { function(x) return F.lp_pool1d(r(x, 2, 3, 7), 2, 3) end, T.S42 },
        lp_pool1d_frac = { function(x)
            return nn.LPPool1d(1.5, 2, { stride = 3, ceil_mode = true })(r(x, 2, 3, 7))
        end, T.POS42 },
        lp_pool2d = { function(x) return F.lp_pool2d(r(x, 1, 2, 4, 6), 2, { 2, 3 }) end, T.S48 },
        lp_pool2d_stride = { function(x)
            return nn.LPPool2d(3, 2, { stride = { 1, 2 } })(r(x, 2, 4, 6))
        end, T.S48 },
        max_unpool1d = { function(x)
            return unpool(x, F.max_pool1d, F.max_unpool1d, { 2, 3, 7 }, 2,
                { stride = 2, return_indices = true })
        end, T.S42 },
        max_unpool2d = { function(x)
            local y, i = F.max_pool2d(r(x, 1, 2, 4, 6), { 2, 3 }, { return_indices = true })
            return nn.MaxUnpool2d({ 2, 3 })(y, i)
        end, T.S48 },
        max_unpool2d_size = { function(x)
            return unpool(x, F.max_pool2d, F.max_unpool2d, { 1, 2, 4, 6 }, 2,
                { stride = 2, return_indices = true }, { 5, 7 })
        end, T.S48 },
        rrelu_eval = { function(x)
            return F.rrelu(x, { lower = 0.1, upper = 0.3 })
        end, T.ACT },
        embedding_bag_mean = { function(w)
            return F.embedding_bag(ids(BAG), r(w, 5, 4), ids(OFF))
        end, T.W },
        embedding_bag_sum = { function(w)
            return F.embedding_bag(ids(BAG), r(w, 5, 4), ids(OFF), { mode = "sum" })
        end, T.W },
        embedding_bag_max = { function(w)
            return F.embedding_bag(ids(BAG), r(w, 5, 4), ids(OFF), { mode = "max" })
        end, T.W },
        embedding_bag_weighted = { function(w, psw)
            return F.embedding_bag(ids(BAG), r(w, 5, 4), ids(OFF), { mode = "sum",
                per_sample_weights = psw })
        end, T.W, T.PSW },
        embedding_bag_padding = { function(w)
            return F.embedding_bag(ids(BAG), r(w, 5, 4), ids(OFF), { padding_idx = 5 })
        end, T.W },
        embedding_bag_2d = { function(w)
            return F.embedding_bag(ids({ { 2, 3, 5 }, { 1, 1, 4 } }), r(w, 5, 4), { mode = "sum" })
        end, T.W },
        embedding_bag_last = { function(w)
            return F.embedding_bag(ids(BAG), r(w, 5, 4), ids({ 1, 4, 8 }),
                { include_last_offset = true })
        end, T.W },
        affine_grid = { function(t)
            return F.affine_grid(r(t, 2, 2, 3), { 2, 1, 3, 4 })
        end, T.THETA },
        affine_grid_align = { function(t)
            return F.affine_grid(r(t, 2, 2, 3), { 2, 3, 2, 5 }, { align_corners = true })
        end, T.THETA },
        grid_sample = { function(x, g)
            return F.grid_sample(r(x, 1, 2, 3, 4), r(g, 1, 3, 4, 2))
        end, T.IMG, T.GRID },
        grid_sample_align = { function(x, g)
            return F.grid_sample(r(x, 1, 2, 3, 4), r(g, 1, 3, 4, 2), { align_corners = true })
        end, T.IMG, T.GRID },
        grid_sample_border = { function(x, g)
            return F.grid_sample(r(x, 1, 2, 3, 4), r(g, 1, 3, 4, 2), { padding_mode = "border" })
        end, T.IMG, T.GRID },
        grid_sample_reflection = { function(x, g)
            return F.grid_sample(r(x, 1, 2, 3, 4), r(g, 1, 3, 4, 2),
                { padding_mode = "reflection" })
        end, T.IMG, T.GRID },
        grid_sample_reflection_align = { function(x, g)
            return F.grid_sample(r(x, 1, 2, 3, 4), r(g, 1, 3, 4, 2),
                { padding_mode = "reflection", align_corners = true })
        end, T.IMG, T.GRID },
        grid_sample_nearest = { function(x, g)
            return F.grid_sample(r(x, 1, 2, 3, 4), r(g, 1, 3, 4, 2), { mode = "nearest" })
        end, T.IMG, T.GRID },
        stn = { function(x, t)
            local theta = r(t, 2, 2, 3):narrow(1, 1, 1)
            return F.grid_sample(r(x, 1, 2, 3, 4), F.affine_grid(theta, { 1, 2, 3, 4 }))
        end, T.IMG, T.THETA },
    }
    P.run_cases(it, T, CASES, function(name, fn, ...)
        P.check_case(T.cases[name], name, DEV, {}, fn, ...)
    end)
end)

describe("nn layers II: draws, modules and errors (" .. DEV .. ")", function()
    it("RReLU draws each negative slope in [lower, upper] when training, its gradient", function()
        tide.manual_seed(3)
        local x = tide.full({ 2000 }, -2, { dtype = "float64", device = DEV }):requires_grad_(true)
        local m = nn.RReLU(0.1, 0.3)
        local y = m(x)
        local slope = (y / -2):to("cpu")
        assert.is_true(slope:min():item() >= 0.1 and slope:max():item() <= 0.3)
        assert.is_true(math.abs(slope:mean():item() - 0.2) < 0.01)
        y:sum():backward()
        assert.is_true(x.grad:to("cpu"):equal(slope)) -- the drawn slope is the gradient
        m:eval()
        assert.are.same({ -0.4, 3 }, m(t64({ -2, 3 })):to("cpu"):totable())
        local pos = F.rrelu(t64({ 1, 2 }), { training = true })
        assert.are.same({ 1, 2 }, pos:to("cpu"):totable())
    end)

    it("gumbel_softmax gives a distribution, or a one-hot with the soft gradient", function()
        tide.manual_seed(5)
        local logits = t64({ { 1, 2, 3, 0.5 }, { 0, 0, 0, 0 } }):requires_grad_(true)
        local y = F.gumbel_softmax(logits, { tau = 0.5 })
        local sums = y:sum(2):to("cpu"):totable()
        assert.is_true(math.abs(sums[1] - 1) < 1e-12 and math.abs(sums[2] - 1) < 1e-12)
        local h = F.gumbel_softmax(logits, { hard = true })
        local rows = h:to("cpu"):totable()
        for _, row in ipairs(rows) do
            local ones, zeros = 0, 0
            for _, v in ipairs(row) do
                ones = ones + (math.abs(v - 1) < 1e-12 and 1 or 0)
                zeros = zeros + (math.abs(v) < 1e-12 and 1 or 0)
            end
            assert.are.same({ 1, 3 }, { ones, zeros })
        end
        -- the hard sample's gradient is the soft one's: sum of each row is constant, so 0
        h:sum():backward()
        assert.is_true(logits.grad:abs():max():item() < 1e-12)
        -- the first logits win far more often than the last
        tide.manual_seed(7)
        local wins = F.gumbel_softmax(t64({ 5, 0 }):expand(500, 2), { hard = true }):sum(1)
        assert.is_true(wins:to("cpu"):totable()[1] > 450)
    end)

    it("embedding_bag's max of a bag of padding lookups only is 0, as PyTorch's", function()
        local w = t64({ { 1, -2 }, { -3, 4 }, { 5, 6 } })
        local out = F.embedding_bag(ids({ 3, 3, 2 }), w, ids({ 1, 3 }),
            { mode = "max", padding_idx = 3 })
        assert.are.same({ { 0, 0 }, { -3, 4 } }, out:to("cpu"):totable())
    end)

    it("EmbeddingBag looks up its own weight, with padding_idx zeroed", function()
        tide.manual_seed(1)
        local m = nn.EmbeddingBag(6, 3, { mode = "sum", padding_idx = 2 }):to(DEV)
        assert.are.same({ 6, 3 }, m.weight.shape)
        assert.are.same({ 0, 0, 0 }, m.weight[2]:to("cpu"):totable())
        local out = m(ids({ 1, 2, 3, 3 }), ids({ 1, 3 }))
        local want = (m.weight[1] + m.weight[2]):to("cpu"):totable()
        P.close(want, out[1], 1e-6, "bag 1")
        P.close((m.weight[3] * 2):to("cpu"):totable(), out[2], 1e-6, "bag 2")
        assert.matches("EmbeddingBag%(6, 3, mode=sum, padding_idx=2%)", tostring(m))
    end)

    it("LRN, LPPool, MaxUnpool and RReLU print as PyTorch's modules", function()
        local function shows(want, m)
            assert.matches(want, tostring(m), 1, true)
        end
        shows("LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1)", nn.LocalResponseNorm(2))
        shows("LPPool2d(norm_type=2, kernel_size=3, stride=nil, ceil_mode=false)",
            nn.LPPool2d(2, 3))
        shows("MaxUnpool1d(kernel_size=2, stride=2, padding=0)", nn.MaxUnpool1d(2))
        shows("RReLU(lower=0.125, upper=0.33333333333333", nn.RReLU())
    end)

    it("name the function, the value at fault and the fix", function()
        local x = t64({ { 1, 2, 3 } })
        assert.matches("tide: local_response_norm: expected input {N, C, *} with 3 or more " ..
            "dims, got {1, 3}", catch(function() return F.local_response_norm(x, 2) end), 1, true)
        assert.matches("tide: lp_pool1d: norm_type must be a non-zero number, got 0",
            catch(function() return F.lp_pool1d(x:view(1, 1, 3), 0, 2) end), 1, true)
        local y, i = F.max_pool1d(t64({ { { 1, 5, 2, 4 } } }), 2, { return_indices = true })
        assert.matches("tide: max_unpool1d: output_size 9 is outside 2..6 for dim 3",
            catch(function() return F.max_unpool1d(y, i, 2, { output_size = { 9 } }) end), 1,
            true)
        assert.matches("tide: max_unpool1d: expected int64 indices of the input's shape",
            catch(function() return F.max_unpool1d(y, i:float(), 2) end), 1, true)
        local w = t64({ { 1, 2 }, { 3, 4 } })
        assert.matches("tide: embedding_bag: offsets must start at 1 and not decrease up to 4",
            catch(function() return F.embedding_bag(ids({ 1, 2, 1 }), w, ids({ 2 })) end), 1,
            true)
        assert.matches('tide: embedding_bag: per_sample_weights needs mode "sum", got mode "mean"',
            catch(function()
                return F.embedding_bag(ids({ 1 }), w, ids({ 1 }), { per_sample_weights = t64({ 1 }) })
            end), 1, true)
        assert.matches("tide: embedding_bag: index 3 is out of range",
            catch(function() return F.embedding_bag(ids({ 3 }), w, ids({ 1 })) end), 1, true)
        assert.matches('tide: embedding_bag: mode must be "sum", "mean" or "max", got median',
            catch(function()
                return F.embedding_bag(ids({ 1 }), w, ids({ 1 }), { mode = "median" })
            end), 1, true)
        assert.matches("tide: rrelu: lower 0.5 must not exceed upper 0.2",
            catch(function() return F.rrelu(x, { lower = 0.5, upper = 0.2 }) end), 1, true)
        assert.matches("tide: gumbel_softmax: unknown option",
            catch(function() return F.gumbel_softmax(x, { temperature = 2 }) end), 1, true)
        local img = tide.zeros({ 1, 1, 2, 2 }, { dtype = "float64", device = DEV })
        assert.matches("tide: grid_sample: expected input {N, C, H, W} and grid {N, Ho, Wo, 2} " ..
            "with the same N, got {1, 1, 2, 2} and {1, 2, 2}", catch(function()
                return F.grid_sample(img, tide.zeros({ 1, 2, 2 }, { dtype = "float64",
                    device = DEV }))
            end), 1, true)
        local grid = tide.zeros({ 1, 1, 1, 2 }, { dtype = "float64", device = DEV })
        assert.matches('tide: grid_sample: mode must be "bilinear", "nearest" or "bicubic", ' ..
            "got area", catch(function()
                return F.grid_sample(img, grid, { mode = "area" })
            end), 1, true)
        assert.matches('tide: grid_sample: padding_mode must be "zeros", "border" or ' ..
            '"reflection", got wrap', catch(function()
                return F.grid_sample(img, grid, { padding_mode = "wrap" })
            end), 1, true)
        assert.matches("tide: affine_grid: expected theta {2, 2, 3} for size {2, 1, 4, 4}, got " ..
            "{1, 2, 3}", catch(function()
                return F.affine_grid(tide.zeros({ 1, 2, 3 }, { device = DEV }), { 2, 1, 4, 4 })
            end), 1, true)
    end)

    it("need their tensors on one device", function()
        local w = tide.zeros({ 3, 2 }, { dtype = "float64", device = D.other })
        assert.matches("tide: embedding_bag: ", catch(function()
            return F.embedding_bag(ids({ 1 }), w, ids({ 1 }))
        end), 1, true)
    end)
end)

describe("nn.utils.weight_norm and spectral_norm, PyTorch's values (" .. DEV .. ")", function()
    local V = T.values

    local function linear(w, b, out, inp)
        local lin = nn.Linear(inp, out, { bias = b ~= nil }):to("float64"):to(DEV)
        tide.no_grad(function()
            lin.weight:copy_(t64(w):view(out, inp))
            if b then
                lin.bias:copy_(t64(b))
            end
        end)
        return lin
    end

    local function run(lin)
        local y = lin(t64(T.WN_X):view(4, 3))
        local loss = (y * P.weight_like(y)):sum()
        loss:backward()
        return y
    end

    it("weight_norm: g the rows' norms, v the weight, gradients to both", function()
        local lin = nn.utils.weight_norm(linear(T.WN_W, T.WN_B, 2, 3))
        assert.is_nil(lin._kind.weight)
        local W = V.weight_norm
        P.close(W.g, lin.weight_g, 1e-14, "g")
        P.close(W.v, lin.weight_v, 1e-14, "v")
        P.close(W.out, run(lin), 1e-13, "out")
        P.close(W.grad_g, lin.weight_g.grad, 1e-12, "grad g")
        P.close(W.grad_v, lin.weight_v.grad, 1e-12, "grad v")
        P.close(W.grad_b, lin.bias.grad, 1e-12, "grad bias")
        local names = {}
        for name in lin:state_dict() do
            names[#names + 1] = name
        end
        table.sort(names)
        assert.are.same({ "bias", "weight_g", "weight_v" }, names)
    end)

    it("weight_norm over the whole tensor (dim = false), and a conv's output channels", function()
        local lin = nn.utils.weight_norm(linear(T.WN_W, T.WN_B, 2, 3), { dim = false })
        local W = V.weight_norm_whole
        P.close(W.g, lin.weight_g, 1e-14, "g")
        P.close(W.out, run(lin), 1e-13, "out")
        P.close(W.grad_g, lin.weight_g.grad, 1e-12, "grad g")
        P.close(W.grad_v, lin.weight_v.grad, 1e-12, "grad v")
        local conv = nn.Conv2d(2, 3, { 2, 3 }, { bias = false }):to("float64"):to(DEV)
        tide.no_grad(function() conv.weight:copy_(t64(T.CV_W):view(3, 2, 2, 3)) end)
        nn.utils.weight_norm(conv)
        assert.are.same(V.weight_norm_conv.g_shape, conv.weight_g.shape)
        P.close(V.weight_norm_conv.g, conv.weight_g:reshape(-1), 1e-14, "conv g")
    end)

    it("remove_weight_norm gives the weight back as a parameter", function()
        local lin = nn.utils.weight_norm(linear(T.WN_W, T.WN_B, 2, 3))
        tide.no_grad(function() lin.weight_g:mul_(2) end)
        nn.utils.remove_weight_norm(lin)
        assert.are.equal("parameter", lin._kind.weight)
        assert.is_nil(lin.weight_g)
        P.close(t64(T.WN_W):view(2, 3):mul(2):to("cpu"):totable(), lin.weight, 1e-14, "weight")
        assert.is_true(lin.weight.requires_grad)
    end)

    it("spectral_norm: one power iteration per training forward, sigma's gradient", function()
        local lin = nn.utils.spectral_norm(linear(T.SN_W, nil, 4, 3))
        tide.no_grad(function()
            lin.weight_u:copy_(t64(T.SN_U))
            lin.weight_v:copy_(t64(T.SN_V))
        end)
        local S = V.spectral_norm
        P.close(S.out, run(lin), 1e-12, "out")
        P.close(S.u, lin.weight_u, 1e-12, "u")
        P.close(S.v, lin.weight_v, 1e-12, "v")
        P.close(S.weight, lin.weight, 1e-12, "weight")
        P.close(S.grad_w, lin.weight_orig.grad, 1e-11, "grad weight_orig")
        lin:eval()
        P.close(S.eval_out, lin(t64(T.WN_X):view(4, 3)), 1e-12, "eval out")
        lin:train()
        for _ = 1, 30 do
            lin(t64(T.WN_X):view(4, 3))
        end
        local sigma = (lin.weight_orig / lin.weight)[1][1]:item()
        assert(math.abs(sigma - S.top_singular) < 1e-9, "sigma " .. sigma .. " vs the largest " ..
            "singular value " .. S.top_singular)
        nn.utils.remove_spectral_norm(lin)
        assert.are.equal("parameter", lin._kind.weight)
        assert.is_nil(lin.weight_u)
    end)

    it("refuse a missing parameter and a second reparametrization", function()
        local lin = linear(T.WN_W, T.WN_B, 2, 3)
        assert.matches("tide: weight_norm: Linear has no parameter 'kernel'",
            catch(function() nn.utils.weight_norm(lin, { name = "kernel" }) end), 1, true)
        nn.utils.weight_norm(lin)
        assert.matches("tide: spectral_norm: Linear has no parameter 'weight'",
            catch(function() nn.utils.spectral_norm(lin) end), 1, true)
        assert.matches("tide: remove_spectral_norm: spectral_norm of 'weight' not found",
            catch(function() nn.utils.remove_spectral_norm(lin) end), 1, true)
        assert.matches("tide: weight_norm: unknown option",
            catch(function() nn.utils.weight_norm(linear(T.WN_W, nil, 2, 3), { axis = 1 }) end),
            1, true)
    end)
end)
