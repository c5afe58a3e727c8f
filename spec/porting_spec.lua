-- porting_spec.lua — the PyTorch names a ported script reaches for that tide lacked, against
-- PyTorch 1.13's values and gradients (spec/fixtures/porting_torch.lua, written by
-- spec/fixtures/make_porting.py): amax / amin (ties share the gradient), clamp_min / clamp_max,
-- lerp (both of PyTorch's formulas), addcmul / addcdiv, outer, bmm, addmm, isclose,
-- nan_to_num, count_nonzero, F.cosine_similarity (PyTorch's gradient at a clamped norm),
-- F.glu / mish / hardswish / selu, movedim, diag, meshgrid, median, F.pixel_shuffle /
-- pixel_unshuffle, F.interpolate (nearest, linear, bilinear, align_corners); the in-place
-- twins, the nn modules, tolist, inference_mode, and t:new_* / *_as keeping t's device and
-- dtype.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local D = require("spec.support.device")

local T = dofile("spec/fixtures/porting_torch.lua")
local unpack = table.unpack or unpack -- 5.1, LuaJIT
local DEV = D.name

local P = require("spec.support.porting")
local close = P.close

local function t64(v)
    return P.t64(v, DEV)
end

-- gradients PyTorch 1.13 computes in float32 whatever the dtype: its hardsigmoid gradient
-- multiplies by float32's 1/6
local GRAD_TOL = { hardsigmoid = 1e-7 }

local function check_case(name, fn, ...)
    P.check_case(T.cases[name], name, DEV, { grad = GRAD_TOL[name] }, fn, ...)
end

describe("PyTorch's names, PyTorch's values (" .. DEV .. ")", function()
    local X, Y, W, Z = T.X, T.Y, T.W, T.Z
    local CASES = {
        amax_dim2 = { function(x) return x:amax(2) end, X },
        amax_all = { function(x) return x:amax({ 1, 2 }):reshape(1) end, X },
        amin_dim1_keep = { function(x) return x:amin(1, true) end, X },
        amax_dims21 = { function(x) return tide.amax(x:reshape(3, 2, 2), { 2, 3 }) end, X },
        clamp_min = { function(x) return x:clamp_min(0.25) end, X },
        clamp_max = { function(x) return tide.clamp_max(x, 0.25) end, X },
        lerp_low = { function(x, y) return tide.lerp(x, y, 0.3) end, X, Y },
        lerp_high = { function(x, y) return x:lerp(y, 0.7) end, X, Y },
        lerp_tensor = { function(x, y, w) return tide.lerp(x, y, w) end, X, Y, W },
        addcmul = { function(x, y, w) return x:addcmul(y, w, { value = 0.5 }) end, X, Y, W },
        addcdiv = { function(x, y, z) return tide.addcdiv(x, y, z, { value = -2 }) end, X, Y, Z },
        addcdiv_bcast = { function(x, y, z)
            return x:addcdiv(y[1], z:narrow(2, 1, 1))
        end, X, Y, Z },
        outer = { function(a, b) return tide.outer(a, b) end, { 1, 2, -3 }, { 0.5, -1, 4, 2 } },
        bmm = { function(a, b) return a:reshape(3, 1, 4):bmm(b:reshape(3, 4, 1)) end, X, Y },
        addmm = { function(i, a, b)
            return tide.addmm(i, a, b:t(), { beta = 0.5, alpha = 2 })
        end, { { 1, -1, 0.5 } }, X, Y },
        cosine_dim2 = { function(a, b) return F.cosine_similarity(a, b) end, X, Y },
        cosine_dim1 = { function(a, b) return F.cosine_similarity(a, b, { dim = 1 }) end, X, Y },
        cosine_bcast = { function(a, b)
            return F.cosine_similarity(a, b:narrow(1, 1, 1), { dim = -1 })
        end, X, Y },
        cosine_zero = { function(a, b)
            return F.cosine_similarity(a, b, { eps = 1e-3 })
        end, { { 0, 0, 0 }, { 1e-4, 0, 0 }, { 1, 2, 3 } }, { { 1, 2, 3 }, { 1e-4, 1e-4, 0 },
            { 0, 0, 0 } } },
        glu = { function(x) return F.glu(x, 2) end, X },
        glu_dim1 = { function(x) return nn.GLU(1)(x:reshape(4, 3)) end, X },
        mish = { function(x) return nn.Mish()(x) end, T.ACT },
        hardswish = { function(x) return F.hardswish(x) end, T.ACT },
        selu = { function(x) return nn.SELU()(x) end, T.ACT },
        movedim = { function(x) return x:reshape(3, 2, 2):movedim(1, 3) end, X },
        movedim_list = { function(x)
            return tide.movedim(x:reshape(3, 2, 2), { 1, 2 }, { 3, 1 })
        end, X },
        diag_vec = { function(v) return tide.diag(v) end, { 1, -2, 3.5 } },
        diag_vec_k = { function(v) return v:diag(1) end, { 1, -2, 3.5 } },
        diag_mat = { function(x) return x:diag() end, X },
        diag_mat_k = { function(x) return tide.diag(x, -1) end, X },
        pixel_shuffle = { function(x) return nn.PixelShuffle(2)(x:reshape(1, 4, 1, 3)) end, X },
        pixel_unshuffle = { function(x) return F.pixel_unshuffle(x:reshape(1, 1, 2, 6), 2) end, X },
        nearest_size = { function(x)
            return F.interpolate(x:reshape(1, 1, 3, 4), { size = { 5, 7 } })
        end, X },
        nearest_scale = { function(x)
            return nn.Upsample({ scale_factor = 2 })(x:reshape(1, 1, 3, 4))
        end, X },
        nearest_1d = { function(x) return F.interpolate(x:reshape(1, 3, 4), { size = 6 }) end, X },
        bilinear = { function(x)
            return F.interpolate(x:reshape(1, 1, 3, 4), { size = { 5, 6 }, mode = "bilinear" })
        end, X },
        bilinear_corners = { function(x)
            return nn.Upsample({ size = { 5, 6 }, mode = "bilinear", align_corners = true })(
                x:reshape(1, 1, 3, 4))
        end, X },
        bilinear_scale = { function(x)
            return F.interpolate(x:reshape(1, 2, 2, 3), { scale_factor = 1.5, mode = "bilinear" })
        end, X },
        bilinear_down = { function(x)
            return F.interpolate(x:reshape(1, 1, 3, 4), { size = { 2, 3 }, mode = "bilinear" })
        end, X },
        linear_1d = { function(x)
            return F.interpolate(x:reshape(1, 3, 4), { size = 7, mode = "linear" })
        end, X },
        logaddexp = { function(x, y) return tide.logaddexp(x, y) end, X, Y },
        xlogy = { function(x, z) return x:abs():xlogy(z:abs()) end, X, Z },
        nansum = { function(x) return x:nansum(2) end, X },
        nanmean_dims = { function(x) return tide.nanmean(x:reshape(3, 2, 2), { 2, 3 }) end, X },
        trace = { function(x) return x:trace():reshape(1) end, X },
        diff = { function(x) return tide.diff(x) end, X },
        diff2_dim1 = { function(x) return x:diff(2, 1) end, X },
        diff_prepend = { function(x, y)
            return x:diff(1, 2, { prepend = y:narrow(2, 1, 1), append = y })
        end, X, Y },
        tensordot_k = { function(x, y)
            return tide.tensordot(x:reshape(3, 2, 2), y:reshape(2, 2, 3), 2)
        end, X, Y },
        tensordot_dims = { function(x, y) return x:tensordot(y, { { 1 }, { 1 } }) end, X, Y },
        cdist = { function(x, y) return tide.cdist(x, y) end, X, Y },
        cdist_p1 = { function(x, y) return x:cdist(y:narrow(1, 1, 2), { p = 1 }) end, X, Y },
        cdist_p3 = { function(x, y)
            return tide.cdist(x:reshape(1, 3, 4), y:reshape(1, 3, 4), { p = 3 })
        end, X, Y },
        cdist_inf = { function(x, y) return x:cdist(y, { p = math.huge }) end, X, Y },
        pairwise_distance = { function(x, y) return nn.PairwiseDistance()(x, y) end, X, Y },
        pairwise_distance_p1 = { function(x, y)
            return F.pairwise_distance(x, y, { p = 1, eps = 0.1, keepdim = true })
        end, X, Y },
        relu6 = { function(x) return nn.ReLU6()(x) end, (function()
            local v = {}
            for i, a in ipairs(T.ACT) do
                v[i] = a * 2
            end
            return v
        end)() },
        hardsigmoid = { function(x) return F.hardsigmoid(x) end, T.ACT },
        hardtanh = { function(x) return F.hardtanh(x, { min_val = -2.5, max_val = 3 }) end, T.ACT },
        hardtanh_default = { function(x) return nn.Hardtanh()(x) end, T.ACT },
        logsigmoid = { function(x) return nn.LogSigmoid()(x) end, (function()
            local v = { unpack(T.ACT) }
            v[#v + 1], v[#v + 2] = -800, 800
            return v
        end)() },
        softsign = { function(x) return nn.Softsign()(x) end, T.ACT },
        margin_ranking = { function(a, b, y)
            return nn.MarginRankingLoss({ margin = 0.5 })(a, b, y)
        end, { 1, -2, 0.5, 3 }, { 0.5, 1, 0.5, -1 }, { 1, -1, 1, -1 } },
        triplet = { function(a, p, n)
            return F.triplet_margin_loss(a, p, n, { margin = 2, reduction = "none" })
        end, X, Y, Z },
        triplet_swap = { function(a, p, n)
            return nn.TripletMarginLoss({ p = 1, swap = true })(a, p, n)
        end, X, Y, Z },
        cosine_embedding = { function(a, b)
            return F.cosine_embedding_loss(a, b, t64({ 1, -1, -1 }), { margin = 0.1,
                reduction = "none" })
        end, X, Y },
        cosine_embedding_mean = { function(a, b)
            return nn.CosineEmbeddingLoss()(a, b, tide.tensor({ 1, -1, 1 }, { device = DEV }))
                :reshape(1)
        end, X, Z },
    }
    P.run_cases(it, T, CASES, check_case)

    it("isclose, nan_to_num and count_nonzero", function()
        local a, b = t64(T.A), t64(T.B)
        close(T.values.isclose, tide.isclose(a, b), 0, "isclose")
        close(T.values.isclose_nan, a:isclose(b, { rtol = 1e-4, atol = 0, equal_nan = true }), 0,
            "isclose equal_nan")
        local s = t64(T.SPECIAL)
        close(T.values.nan_to_num, s:nan_to_num(), 0, "nan_to_num")
        close(T.values.nan_to_num_opts, tide.nan_to_num(s, { nan = 1, posinf = 100,
            neginf = -100 }), 0, "nan_to_num opts")
        close(T.values.nan_to_num_f32, s:float():nan_to_num(), 0, "nan_to_num float32")
        assert.are.equal("float32", s:float():nan_to_num().dtype)
        local x = t64(T.X)
        close(T.values.count_nonzero, x:count_nonzero():reshape(1), 0, "count_nonzero")
        close(T.values.count_nonzero_dim2, tide.count_nonzero(x, 2), 0, "count_nonzero dim")
        assert.are.equal("int64", x:count_nonzero().dtype)
        local g = tide.meshgrid(t64({ 1, 2, 3 }), t64({ 4, 5 }))
        close(T.values.meshgrid_ij[1], g[1], 0, "meshgrid ij 1")
        close(T.values.meshgrid_ij[2], g[2], 0, "meshgrid ij 2")
        g = tide.meshgrid({ t64({ 1, 2, 3 }), t64({ 4, 5 }) }, { indexing = "xy" })
        close(T.values.meshgrid_xy[1], g[1], 0, "meshgrid xy 1")
        close(T.values.meshgrid_xy[2], g[2], 0, "meshgrid xy 2")
        -- a lone list of tensors is the tensors, not the options (torch.meshgrid([a, b]))
        g = tide.meshgrid({ t64({ 1, 2, 3 }), t64({ 4, 5 }) })
        close(T.values.meshgrid_ij[1], g[1], 0, "meshgrid list 1")
        close(T.values.meshgrid_ij[2], g[2], 0, "meshgrid list 2")
        -- xlogy at x = 0 is 0, also where y is 0 or inf; its gradient for x is log(y) there
        -- too (0 where y is 0), PyTorch's; for y x / y, as PyTorch's: NaN at 0 / 0
        local xa = t64({ 0, 0, 0, 2 }):requires_grad_(true)
        local ya = t64({ 0, 1 / 0, 3, 4 }):requires_grad_(true)
        local r = xa:xlogy(ya)
        assert.are.same({ 0, 0, 0, 2 * math.log(4) }, r:cpu():totable())
        r:sum():backward()
        assert.are.same({ 0, 1 / 0, math.log(3), math.log(4) }, xa.grad:cpu():totable())
        local gy = ya.grad:cpu():totable()
        assert.is_true(gy[1] ~= gy[1], "0 / 0 is NaN")
        assert.are.same({ 0, 0, 0.5 }, { gy[2], gy[3], gy[4] })
        local nanx = t64({ { 1, 0 / 0, 2 }, { 0 / 0, 0 / 0, 0 / 0 } })
        close(T.values.nansum_nan, nanx:nansum(2), 0, "nansum with NaN")
        close(T.values.nanmean_nan, tide.nanmean(nanx, 2), 0, "nanmean with NaN")
        close(T.values.median, x:median():reshape(1), 0, "median")
        local v, i = x:median(2)
        close(T.values.median_dim2, v, 0, "median dim 2")
        close(T.values.median_dim2_idx, i, 0, "median dim 2 index")
        v, i = tide.median(x, 1)
        close(T.values.median_dim1, v, 0, "median dim 1")
        close(T.values.median_dim1_idx, i, 0, "median dim 1 index")
        -- NaN: the median is NaN, its index the first NaN's (PyTorch's)
        v, i = t64({ { 1, 0 / 0, 0, 2 }, { 3, 1, 2, 0 } }):median(2)
        assert.is_true(v:cpu()[1]:item() ~= v:cpu()[1]:item())
        assert.are.same({ 2, 2 }, i:cpu():totable())
        assert.are.equal(1, v:cpu()[2]:item())
        local _, ti = t64({ 5, 1, 5, 1 }):median(1)
        assert.are.equal(4, ti:cpu():item()) -- the second 1, as PyTorch's
        -- the median's gradient reaches the element it took
        local a = t64(X):requires_grad_(true)
        a:median():backward()
        assert.are.equal(1, a.grad:sum():item())
        assert.are.equal(1, a.grad:cpu()[3][2]:item() + a.grad:cpu()[3][3]:item())
    end)

    it("in place: clamp_min_, lerp_, addcmul_, addcdiv_, nan_to_num_ write into x", function()
        local x, y, w = t64(X), t64(Y), t64(W)
        local want = x:lerp(y, w)
        local same = x:lerp_(y, w)
        assert.are.equal(x, same)
        close(want:cpu():totable(), x, 0, "lerp_")
        x:clamp_min_(0):clamp_max_(1)
        assert.is_true(x:min():item() >= 0 and x:max():item() <= 1)
        local z = t64(X)
        z:addcmul_(y, w, { value = 2 }):addcdiv_(y, t64(Z))
        close((t64(X) + y * w * 2 + y / t64(Z)):cpu():totable(), z, 1e-15, "addcmul_ addcdiv_")
        -- recorded: the gradient reads the old x, also where x is an argument too
        local a = t64(X):requires_grad_(true)
        local h = a * 1
        h:addcmul_(h, y):clamp_min_(0.5)
        h:sum():backward()
        local want_g = (t64(X) * 1 + t64(X) * y):gt(0.5):double() * (y + 1)
        close(want_g:cpu():totable(), a.grad, 1e-15, "addcmul_(x, y) then clamp_min_ gradient")
        local s = t64(T.SPECIAL)
        s:nan_to_num_({ nan = 7 })
        assert.are.equal(7, s:cpu()[1][1]:item())
    end)
end)

describe("porting: the rest", function()
    it("tolist is totable, and its errors say tolist", function()
        assert.are.same({ { 1, 2 }, { 3, 4 } }, tide.tensor({ { 1, 2 }, { 3, 4 } }):tolist())
        local other = tide.zeros(2, { device = "cpu:1" })
        assert.has_error(function() other:tolist() end,
            "tide: tolist: tensor is on cpu:1; call :cpu() first to copy it to the host")
        assert.has_error(function() other:totable() end,
            "tide: totable: tensor is on cpu:1; call :cpu() first to copy it to the host")
    end)

    it("inference_mode runs fn without recording", function()
        local x = tide.ones(2):requires_grad_(true)
        local y = tide.inference_mode(function() return x * 2 end)
        assert.is_false(y.requires_grad)
    end)

    it("new_* keep the tensor's device and dtype unless told", function()
        local t = tide.ones({ 2 }, { dtype = "float64", device = DEV })
        for _, z in ipairs({ t:new_zeros({ 2, 3 }), t:new_zeros(2, 3), t:new_ones(2, 3),
            t:new_empty({ 2, 3 }), t:new_full({ 2, 3 }, 7) }) do
            assert.are.same({ 2, 3 }, z.shape)
            assert.are.equal("float64", z.dtype)
            assert.are.equal(tide.device(DEV), z.device)
        end
        assert.are.same({ { 7, 7, 7 }, { 7, 7, 7 } }, t:new_full({ 2, 3 }, 7):cpu():totable())
        assert.are.same({ 0, 0 }, t:new_zeros(2):cpu():totable())
        local i = t:new_ones({ 2 }, { dtype = "int32" })
        assert.are.equal("int32", i.dtype)
        assert.are.equal(tide.device(DEV), i.device)
        local n = t:new_tensor({ 1.5, 2 })
        assert.are.same({ 1.5, 2 }, n:cpu():totable())
        assert.are.equal("float64", n.dtype)
        local src = tide.ones(2):requires_grad_(true)
        local c = t:new_tensor(src)
        assert.is_false(c.requires_grad)
        c:add_(1)
        assert.are.same({ 1, 1 }, src:totable()) -- a copy
        assert.has_error(function() t:new_zeros({ 2 }, { dtyp = "int32" }) end,
            'tide: new_zeros: unknown option "dtyp" (did you mean "dtype"?)')
    end)

    it("expand_as, view_as and reshape_as take the other tensor's shape", function()
        local x = tide.arange(1, 7)
        local o = tide.zeros(2, 3)
        assert.are.same({ { 1, 2, 3 }, { 4, 5, 6 } }, x:view_as(o):totable())
        assert.are.same({ 2, 3 }, x:reshape_as(o).shape)
        assert.are.same({ 4, 3 }, tide.ones(1, 3):expand_as(tide.zeros(4, 3)).shape)
    end)

    it("the modules: CosineSimilarity, Unflatten, Hardswish in place", function()
        local a, b = tide.randn(4, 5), tide.randn(4, 5)
        local cos = nn.CosineSimilarity({ dim = 2 })
        assert.is_true((cos(a, b) - F.cosine_similarity(a, b)):abs():max():item() == 0)
        assert.is_true((cos(a, a) - 1):abs():max():item() < 1e-6)
        assert.are.same({ 2, 3, 4 }, nn.Unflatten(2, { 3, 4 })(tide.zeros(2, 12)).shape)
        local x = tide.tensor({ -4.5, 0, 1.5, 4 })
        local h = nn.Hardswish({ inplace = true })
        assert.are.equal(x, h(x))
        assert.are.same({ 0, 0, 1.125, 4 }, x:totable())
    end)

    it("refuses what PyTorch refuses, naming the op and the values", function()
        local x = tide.zeros(3, 4)
        assert.has_error(function() tide.bmm(x, x) end,
            "tide: bmm: batch1 must be 3-D, got {3, 4}")
        assert.has_error(function() tide.bmm(tide.zeros(2, 3, 4), tide.zeros(3, 4, 5)) end,
            "tide: bmm: batch1 {2, 3, 4} and batch2 {3, 4, 5} do not match: expected " ..
            "[B, n, m] and [B, m, p]")
        assert.has_error(function() tide.outer(x, tide.zeros(2)) end,
            "tide: outer: the first vector must be 1-D, got {3, 4}")
        assert.has_error(function() tide.addmm(tide.zeros(5), x, tide.zeros(4, 2)) end,
            "tide: addmm: input {5} does not broadcast to the product's shape {3, 2}")
        assert.has_error(function() F.glu(tide.zeros(2, 3)) end,
            "tide: glu: dim -1 has size 3; it must be even (two halves)")
        assert.has_error(function() F.cosine_similarity(x, tide.zeros(2, 4)) end,
            "tide: cosine_similarity: x1 {3, 4} and x2 {2, 4} do not broadcast (dim 1: 3 and 2)")
        assert.has_error(function() x:amax(1, "yes") end,
            "tide: amax: keepdim must be a boolean, got string")
        assert.has_error(function() tide.zeros(0, 3):amax(1) end,
            "tide: amax: dim 1 has size 0, and the max of nothing is undefined")
        assert.has_error(function() tide.addcdiv(x, tide.ones(3, 4, { dtype = "int64" }),
            tide.ones(3, 4, { dtype = "int64" })) end,
            "tide: addcdiv: integer division (int64 / int64) is not supported; convert " ..
            "tensor1 and tensor2 with :to(\"float32\"), or use addcmul with their quotient")
        assert.has_error(function() x:addcmul(x, x, { valu = 2 }) end,
            'tide: addcmul: unknown option "valu" (did you mean "value"?)')
        local img = tide.zeros(1, 1, 2, 2)
        assert.has_error(function() F.interpolate(img, { size = { 3, 3 }, mode = "cubic" }) end,
            'tide: interpolate: mode "cubic" is not one of PyTorch\'s; use "nearest", ' ..
            '"nearest-exact", "area", "linear", "bilinear", "bicubic" or "trilinear"')
        assert.has_error(function() F.interpolate(img, { size = { 3, 3 }, scale_factor = 2 }) end,
            "tide: interpolate: give either size or scale_factor, not both or neither")
        assert.has_error(function() F.interpolate(img, { size = 3, mode = "linear" }) end,
            'tide: interpolate: mode "linear" takes a 3-D {N, C, L} input, got {1, 1, 2, 2}')
        assert.has_error(function() nn.Upsample({ size = 3, scal_factor = 2 }) end,
            'tide: Upsample: unknown option "scal_factor" (did you mean "scale_factor"?)')
        assert.has_error(function() F.pixel_shuffle(tide.zeros(1, 3, 2, 2), 2) end,
            "tide: pixel_shuffle: expected {*, C * 4, H, W} (channels divisible by " ..
            "upscale_factor^2 = 4), got {1, 3, 2, 2}")
        assert.has_error(function() tide.zeros(2, 3):movedim({ 1, 2 }, 1) end,
            "tide: movedim: source and destination must have as many dims, got 2 and 1")
        assert.has_error(function() tide.zeros(2, 3, 4):diag() end,
            "tide: diag: needs a 1-D or 2-D tensor, got 3-D")
        assert.has_error(function() tide.meshgrid(tide.zeros(2, 2), tide.zeros(3)) end,
            "tide: meshgrid: tensor 1 must be 0-D or 1-D, got 2-D")
        assert.has_error(function() tide.zeros(2, 0):median(2) end,
            "tide: median: dim 2 has size 0, and the median of nothing is undefined")
        assert.has_error(function() x:isclose(x:double()) end,
            "tide: isclose: the dtypes differ (float32 and float64); convert one with " ..
            ":to(\"float32\")")
    end)
end)
