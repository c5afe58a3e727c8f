-- PyTorch's keyword calls of tide.X and Tensor methods (by name in a trailing table) against
-- the same call by position: a name not read would silently give another answer
local tide = require("tide")

describe("torch functions and Tensor methods by name", function()
    local T = tide.tensor
    local function pack(...) return { n = select("#", ...), ... } end
    local function same(a, b)
      if tide.is_tensor(a) and tide.is_tensor(b) then
        if a:dim() ~= b:dim() then return false end
        for d = 1, a:dim() do if a:size(d) ~= b:size(d) then return false end end
        if a.dtype ~= b.dtype then return false end
        if a:numel() == 0 then return true end
        if a.dtype == "bool" then return tide.equal(a, b) end
        return tide.allclose(a:double(), b:double(), 1e-6, 1e-6, true)
      elseif type(a) == "table" and type(b) == "table" then
        if #a ~= #b then return false end
        for i = 1, #a do if not same(a[i], b[i]) then return false end end
        return true
      end
      return a == b
    end
    local x = T({ { 1.5, -2, 3 }, { 0.5, 4, -1 }, { 2, 1, 0.25 } })
    local spd = x:matmul(x:t()) + tide.eye(3) * 3
    local v = T({ 1.0, 2.0, 3.0 })
    local li = T({ 12, 18, 7 }, { dtype = "int64" })
    local x4 = tide.arange(1, 17):double():view(1, 4, 2, 2)
    local p01 = T({ { 0.2, 0.7, 0.5 }, { 0.9, 0.1, 0.3 }, { 0.4, 0.6, 0.8 } })
    local C = {}
    local function c(name, kw, pos) C[#C + 1] = { name, kw, pos } end
    -- NOSIG methods/functions
    c("broadcast_to", function() return v:broadcast_to({ size = { 2, 3 } }) end, function() return v:broadcast_to({ 2, 3 }) end)
    c("tide.broadcast_to", function() return tide.broadcast_to(v, { size = { 2, 3 } }) end, function() return tide.broadcast_to(v, { 2, 3 }) end)
    c("permute", function() return x:permute({ dims = { 2, 1 } }) end, function() return x:permute(2, 1) end)
    c("tide.permute", function() return tide.permute(x, { dims = { 2, 1 } }) end, function() return tide.permute(x, { 2, 1 }) end)
    c("sum_to_size", function() return x:sum_to_size({ size = { 1, 3 } }) end, function() return x:sum_to_size(1, 3) end)
    c("resize_", function() return x:clone():resize_({ size = { 9 } }) end, function() return x:clone():resize_(9) end)
    c("resize_as_", function() return x:clone():resize_as_({ the_template = v }) end, function() return x:clone():resize_as_(v) end)
    c("is_same_size", function() return x:is_same_size({ other = v }) end, function() return x:is_same_size(v) end)
    c("equal", function() return x:equal({ other = x }) end, function() return x:equal(x) end)
    c("tide.equal", function() return tide.equal(x, { other = x:clone() }) end, function() return tide.equal(x, x:clone()) end)
    c("gcd", function() return li:gcd({ other = li + 6 }) end, function() return li:gcd(li + 6) end)
    c("lcm", function() return li:lcm({ other = li + 6 }) end, function() return li:lcm(li + 6) end)
    c("gcd_", function() return li:clone():gcd_({ other = li + 6 }) end, function() return li:clone():gcd_(li + 6) end)
    c("tide.gcd", function() return tide.gcd(li, { other = li + 6 }) end, function() return tide.gcd(li, li + 6) end)
    c("igamma", function() return x:abs():igamma({ other = x:abs() + 1 }) end, function() return x:abs():igamma(x:abs() + 1) end)
    c("igammac", function() return x:abs():igammac({ other = x:abs() + 1 }) end, function() return x:abs():igammac(x:abs() + 1) end)
    c("tide.igamma", function() return tide.igamma(x:abs(), { other = x:abs() + 1 }) end, function() return tide.igamma(x:abs(), x:abs() + 1) end)
    c("logit", function() return p01:logit({ eps = 0.25 }) end, function() return p01:logit(0.25) end)
    c("tide.logit", function() return tide.logit(p01, { eps = 0.25 }) end, function() return tide.logit(p01, 0.25) end)
    c("hardshrink", function() return x:hardshrink({ lambd = 1 }) end, function() return x:hardshrink(1) end)
    c("prelu", function() return x:prelu({ weight = T({ 0.25 }) }) end, function() return x:prelu(T({ 0.25 })) end)
    c("mvlgamma", function() return (x:abs() + 2):mvlgamma({ p = 2 }) end, function() return (x:abs() + 2):mvlgamma(2) end)
    c("tide.mvlgamma", function() return tide.mvlgamma(x:abs() + 2, { p = 2 }) end, function() return tide.mvlgamma(x:abs() + 2, 2) end)
    c("polygamma", function() return (x:abs() + 1):polygamma({ n = 1 }) end, function() return (x:abs() + 1):polygamma(1) end)
    c("tide.polygamma", function() return tide.polygamma(1, x:abs() + 1) end, function() return tide.polygamma(1, x:abs() + 1) end)
    c("cholesky", function() return spd:cholesky({ upper = true }) end, function() return spd:cholesky(true) end)
    c("tide.cholesky", function() return tide.cholesky(spd, { upper = true }) end, function() return tide.cholesky(spd, true) end)
    c("cholesky_inverse", function() return spd:cholesky():cholesky_inverse({ upper = false }) end, function() return spd:cholesky():cholesky_inverse(false) end)
    c("cholesky_inverse upper", function() return spd:cholesky(true):cholesky_inverse({ upper = true }) end, function() return spd:cholesky(true):cholesky_inverse(true) end)
    c("cholesky_solve", function() return x:cholesky_solve({ input2 = spd:cholesky(true), upper = true }) end, function() return x:cholesky_solve(spd:cholesky(true), true) end)
    c("pinverse", function() return x:pinverse({ rcond = 0.5 }) end, function() return x:pinverse(0.5) end)
    c("qr", function() return x:qr({ some = false }) end, function() return x:qr(false) end)
    c("svd", function() return pack(x:svd({ some = false }))[2] end, function() return pack(x:svd(false))[2] end)
    c("symeig", function() return pack(spd:symeig({ eigenvectors = true, upper = false })) end, function() return pack(spd:symeig(true, false)) end)
    c("triangular_solve", function() return x:triangular_solve({ A = spd:cholesky(), upper = false, transpose = true }) end, function() return x:triangular_solve(spd:cholesky(), false, true) end)
    c("lu", function() return pack(spd:lu({ pivot = true, get_infos = true })) end, function() return pack(spd:lu({ get_infos = true })) end)
    c("lu_solve", function() local lu, piv = spd:lu(); return x:lu_solve({ LU_data = lu, LU_pivots = piv }) end, function() local lu, piv = spd:lu(); return x:lu_solve(lu, piv) end)
    c("lu_unpack", function() local lu, piv = spd:lu(); return pack(tide.lu_unpack({ LU_data = lu, LU_pivots = piv, unpack_pivots = false })) end, function() local lu, piv = spd:lu(); return pack(tide.lu_unpack(lu, piv, { unpack_pivots = false })) end)
    c("orgqr", function() local a, tau = x:geqrf(); return a:orgqr({ input2 = tau }) end, function() local a, tau = x:geqrf(); return a:orgqr(tau) end)
    c("ormqr", function() local a, tau = x:geqrf(); return a:ormqr({ input2 = tau, input3 = spd, left = false, transpose = true }) end, function() local a, tau = x:geqrf(); return a:ormqr(tau, spd, false, true) end)
    c("slice_scatter", function() return x:slice_scatter({ src = x:narrow(2, 1, 1), dim = 2, start = 3, ["end"] = 4 }) end, function() return x:slice_scatter(x:narrow(2, 1, 1), { dim = 2, start = 3, ["end"] = 3 }) end)
    c("index_reduce", function() return x:index_reduce({ dim = 1, index = T({ 3, 1, 2 }, { dtype = "int64" }), source = x, reduce = "amax", include_self = false }) end, function() return x:index_reduce(1, T({ 3, 1, 2 }, { dtype = "int64" }), x, "amax", { include_self = false }) end)
    c("cov", function() return x:cov({ correction = 0 }) end, function() return x:cov({ correction = 0 }) end)
    c("combinations", function() return tide.combinations(v, { r = 2, with_replacement = true }) end, function() return tide.combinations(v, 2, { with_replacement = true }) end)
    c("frobenius_norm", function() return tide.frobenius_norm(x, { dim = 2, keepdim = true }) end, function() return tide.frobenius_norm(x, 2, true) end)
    c("nuclear_norm", function() return tide.nuclear_norm(x, { keepdim = true }) end, function() return tide.nuclear_norm(x, true) end)
    c("zeros_like", function() return tide.zeros_like(x, { dtype = "float64" }) end, function() return tide.zeros_like(x):double() end)
    c("full_like", function() return tide.full_like(x, { fill_value = 3 }) end, function() return tide.full_like(x, 3) end)
    c("cosine_similarity", function() return tide.cosine_similarity(x, { x2 = spd, dim = 1 }) end, function() return tide.cosine_similarity(x, spd, 1) end)
    c("pairwise_distance", function() return tide.pairwise_distance(x, { x2 = spd, p = 1, keepdim = true }) end, function() return tide.pairwise_distance(x, spd, 1, 1e-6, true) end)
    c("pdist", function() return tide.pdist(x, { p = 1 }) end, function() return tide.pdist(x, 1) end)
    c("pixel_shuffle", function() return tide.pixel_shuffle(x4, { upscale_factor = 2 }) end, function() return tide.pixel_shuffle(x4, 2) end)
    c("pixel_unshuffle", function() return tide.pixel_unshuffle(x4:view(1, 1, 4, 4), { downscale_factor = 2 }) end, function() return tide.pixel_unshuffle(x4:view(1, 1, 4, 4), 2) end)
    c("channel_shuffle", function() return tide.channel_shuffle(x4, { groups = 2 }) end, function() return tide.channel_shuffle(x4, 2) end)
    c("celu", function() return tide.celu(x, { alpha = 2 }) end, function() return tide.celu(x, 2) end)
    c("threshold", function() return tide.threshold(x, { threshold = 1, value = 5 }) end, function() return tide.threshold(x, 1, 5) end)
    c("rrelu", function() return tide.rrelu(x, { lower = 0.1, upper = 0.3 }) end, function() return tide.rrelu(x, 0.1, 0.3) end)
    c("dropout", function() return tide.dropout(x, { p = 0.5, train = false }) end, function() return tide.dropout(x, 0.5, false) end)
    c("constant_pad_nd", function() return tide.constant_pad_nd(x, { pad = { 1, 1 }, value = 2 }) end, function() return tide.constant_pad_nd(x, { 1, 1 }, 2) end)
    c("adaptive_avg_pool1d", function() return tide.adaptive_avg_pool1d(x4:view(1, 2, 8), { output_size = 3 }) end, function() return tide.adaptive_avg_pool1d(x4:view(1, 2, 8), 3) end)
    c("avg_pool1d", function() return tide.avg_pool1d(x4:view(1, 2, 8), { kernel_size = 2, stride = 1, padding = 1, count_include_pad = false }) end, function() return tide.avg_pool1d(x4:view(1, 2, 8), 2, 1, 1, false, false) end)
    c("max_pool1d", function() return tide.max_pool1d(x4:view(1, 2, 8), { kernel_size = 2, stride = 1, padding = 1 }) end, function() return tide.max_pool1d(x4:view(1, 2, 8), 2, 1, 1) end)
    c("max_pool2d", function() return tide.max_pool2d(x4, { kernel_size = 2, stride = 1 }) end, function() return tide.max_pool2d(x4, 2, 1) end)
    c("layer_norm", function() return tide.layer_norm(x, { normalized_shape = { 3 }, eps = 1e-3 }) end, function() return tide.layer_norm(x, { 3 }, nil, nil, 1e-3) end)
    c("group_norm", function() return tide.group_norm(x4, { num_groups = 2, eps = 1e-3 }) end, function() return tide.group_norm(x4, 2, nil, nil, 1e-3) end)
    c("conv1d", function() return tide.conv1d(x4:view(1, 2, 8), { weight = x4:view(2, 2, 4), stride = 2, padding = 1 }) end, function() return tide.conv1d(x4:view(1, 2, 8), x4:view(2, 2, 4), nil, 2, 1) end)
    c("gradient", function() return tide.gradient(v * v, { spacing = 2, edge_order = 2 }) end, function() return tide.gradient(v * v, { spacing = 2, edge_order = 2 }) end)
    c("pca_lowrank", function() tide.manual_seed(1); return pack(tide.pca_lowrank(x, { q = 2, center = false, niter = 1 }))[2] end, function() tide.manual_seed(1); return pack(tide.pca_lowrank(x, 2, false, 1))[2] end)
    c("svd_lowrank", function() tide.manual_seed(1); return pack(tide.svd_lowrank(x, { q = 2, niter = 1 }))[2] end, function() tide.manual_seed(1); return pack(tide.svd_lowrank(x, 2, 1))[2] end)
    c("kl_div", function() return tide.kl_div(x, { target = p01, reduction = "sum" }) end, function() return tide.kl_div(x, p01, "sum") end)
    c("embedding", function() return tide.embedding(x, { indices = li:clamp(1, 3) }) end, function() return tide.embedding(x, li:clamp(1, 3)) end)
    -- SIG name checks
    c("tensor_split sections", function() return tide.tensor_split(v, { sections = 3 }) end, function() return tide.tensor_split(v, 3) end)
    c("diag_embed", function() return v:diag_embed({ offset = 1 }) end, function() return v:diag_embed(1) end)
    c("fill_diagonal_", function() return x:clone():fill_diagonal_({ fill_value = 9 }) end, function() return x:clone():fill_diagonal_(9) end)
    c("narrow_copy", function() return x:narrow_copy({ dim = 1, start = 2, length = 1 }) end, function() return x:narrow_copy(1, 2, 1) end)
    c("put_", function() return x:clone():put_({ index = T({ 2 }, { dtype = "int64" }), source = T({ 7.5 }) }) end, function() return x:clone():put_(T({ 2 }, { dtype = "int64" }), T({ 7.5 })) end)
    c("split_with_sizes", function() return v:split_with_sizes({ split_sizes = { 1, 2 } }) end, function() return v:split_with_sizes({ 1, 2 }) end)
    c("swapaxes", function() return tide.swapaxes(x, { axis0 = 1, axis1 = 2 }) end, function() return tide.swapaxes(x, 1, 2) end)
    c("view", function() return x:view({ size = { 9 } }) end, function() return x:view(9) end)
    c("where", function() return tide.where(x:gt(0), { input = x, other = v }) end, function() return tide.where(x:gt(0), x, v) end)
    c("xlogy", function() return x:xlogy({ other = p01 }) end, function() return x:xlogy(p01) end)
    c("isin", function() return tide.isin({ elements = x, test_elements = v }) end, function() return tide.isin(x, v) end)
    c("searchsorted input", function() return tide.searchsorted(v, { input = x }) end, function() return tide.searchsorted(v, x) end)
    c("unsafe_split", function() return v:unsafe_split({ split_size = 2 }) end, function() return v:unsafe_split(2) end)
    c("randint_like", function() tide.manual_seed(2); return tide.randint_like(x, { high = 5 }) end, function() tide.manual_seed(2); return tide.randint_like(x, 5) end)

    it("fixed: layer_norm by name normalizes over normalized_shape (not over nothing)", function()
        local y = tide.layer_norm(x, { normalized_shape = { 3 } })
        -- each row: mean 0, biased variance 1 (PyTorch: rows of x normalized)
        local m = y:mean(2)
        assert.is_true(tide.allclose(m, tide.zeros(3), 1e-5, 1e-5))
        assert.is_true(tide.allclose(y:var(2, false), tide.ones(3), 1e-3, 1e-3))
        assert.is_true(tide.allclose(y, tide.layer_norm(x, { 3 })))
    end)

    it("fixed: a required argument by name and by position raises", function()
        assert.has_error(function()
            tide.layer_norm(x, { 3 }, { normalized_shape = { 3 } })
        end, "tide: layer_norm: unknown option \"normalized_shape\"; options are weight, bias, "
            .. "eps, cudnn_enable")
        assert.has_error(function()
            tide.layer_norm(x, { 3 }, { input = x })
        end)
        assert.has_error(function() tide.layer_norm(x, { eps = 1e-3 }) end,
            "tide: layer_norm: missing normalized_shape: give it as argument #2 or by name")
    end)

    it("fixed: searchsorted takes PyTorch 1.13's name input for the values", function()
        local r = tide.searchsorted(v, { input = T({ 2.5, 0.5 }) })
        assert.are.same({ 3, 1 }, r:totable())
    end)

    for _, k in ipairs(C) do
        it(k[1] .. " by name equals by position", function()
            local a, b = k[2](), k[3]()
            assert.is_true(same(a, b), k[1])
        end)
    end
end)
