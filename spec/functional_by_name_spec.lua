-- functional_by_name_spec.lua: tide.nn.functional takes every parameter PyTorch 1.13 lets a
-- script pass by keyword in the call's last table, the required ones after the first included
-- (docs/API.md "nn.functional"): F.conv2d(x, {weight = w, stride = 2}) is
-- F.conv2d(input=x, weight=w, stride=2), F.layer_norm(x, {normalized_shape = {6}}) is
-- F.layer_norm(x, normalized_shape=[6]). Each call by name must equal the same call by position
-- (PyTorch's order; those forms are checked against PyTorch in the other specs). The sweep below
-- covers every public function of torch.nn.functional that tide has; the ones marked FIXED read
-- a required argument by name since this spec (before: a tide: error, or for layer_norm,
-- rms_norm and adaptive_max_pool{2,3}d_with_indices a silent wrong answer).
local tide = require("tide")
local F = tide.nn.functional

local SPEC = "spec/functional_by_name_spec.lua:"

tide.manual_seed(1)
local function r(...)
    return tide.randn(...)
end
local x4 = r(2, 4, 4, 4)
local x3 = r(2, 4, 6)
local x2 = r(3, 5)
local tgt = tide.tensor({1, 3, 5}, {dtype = "int64"})
local C, FIXED = {}, {}
local function add(name, byname, pos)
    C[#C + 1] = { name, byname, pos }
end
local function seeded(f)
    return function()
        tide.manual_seed(7)
        return f()
    end
end

-- activations
for _, n in ipairs({"relu", "relu6", "silu", "mish", "hardswish", "hardsigmoid", "selu"}) do
  add(n, function() return F[n](x2, {inplace = false}) end, function() return F[n](x2, false) end)
end
add("leaky_relu", function() return F.leaky_relu(x2, {negative_slope = 0.2, inplace = false}) end,
  function() return F.leaky_relu(x2, 0.2, false) end)
add("elu", function() return F.elu(x2, {alpha = 0.5, inplace = false}) end,
    function() return F.elu(x2, 0.5, false) end)
add("celu", function() return F.celu(x2, {alpha = 0.5, inplace = false}) end,
    function() return F.celu(x2, 0.5, false) end)
add("hardtanh", function() return F.hardtanh(x2, {min_val = -0.5, max_val = 0.5,
    inplace = false}) end,
  function() return F.hardtanh(x2, -0.5, 0.5, false) end)
add("threshold", function() return F.threshold(x2, {threshold = 0.1, value = 20,
    inplace = false}) end,
  function() return F.threshold(x2, 0.1, 20, false) end)
add("threshold_", function() local y = x2:clone(); return F.threshold_(y, {threshold = 0.1,
    value = 20}) end,
  function() local y = x2:clone(); return F.threshold_(y, 0.1, 20) end)
add("rrelu", function() return F.rrelu(x2, {lower = 0.1, upper = 0.3, training = false,
    inplace = false}) end,
  function() return F.rrelu(x2, 0.1, 0.3, false, false) end)
add("rrelu_", function() local y = x2:clone(); return F.rrelu_(y, {lower = 0.1, upper = 0.3,
    training = false}) end,
  function() local y = x2:clone(); return F.rrelu_(y, 0.1, 0.3, false) end)
add("softplus", function() return F.softplus(x2, {beta = 2, threshold = 1}) end,
    function() return F.softplus(x2, 2, 1) end)
add("hardshrink", function() return F.hardshrink(x2, {lambd = 0.3}) end,
    function() return F.hardshrink(x2, 0.3) end)
add("softshrink", function() return F.softshrink(x2, {lambd = 0.3}) end,
    function() return F.softshrink(x2, 0.3) end)
add("gelu", function() return F.gelu(x2, {approximate = "tanh"}) end, function() return F.gelu(x2,
    {approximate = "tanh"}) end)
add("glu", function() return F.glu(x2:narrow(2, 1, 4), {dim = 2}) end,
    function() return F.glu(x2:narrow(2, 1, 4), 2) end)
add("gumbel_softmax", seeded(function() return F.gumbel_softmax(x2, {tau = 0.5, hard = true,
    eps = 1e-10, dim = 1}) end),
  seeded(function() return F.gumbel_softmax(x2, 0.5, true, 1e-10, 1) end))
add("elu_", function() return F.elu_(x2:clone(), {alpha = 0.5}) end,
    function() return F.elu_(x2:clone(), 0.5) end)
add("celu_", function() return F.celu_(x2:clone(), {alpha = 0.5}) end,
    function() return F.celu_(x2:clone(), 0.5) end)
add("leaky_relu_", function() return F.leaky_relu_(x2:clone(), {negative_slope = 0.3}) end,
    function() return F.leaky_relu_(x2:clone(), 0.3) end)
add("hardtanh_", function() return F.hardtanh_(x2:clone(), {min_val = -0.5, max_val = 0.2}) end,
    function() return F.hardtanh_(x2:clone(), -0.5, 0.2) end)
for _, n in ipairs({"softmax", "log_softmax", "softmin"}) do
  add(n, function() return F[n](x2, {dim = 1, dtype = "float64"}) end, function() return F[n](x2,
      1, 3, "float64") end)
end
for _, n in ipairs({"dropout", "alpha_dropout", "feature_alpha_dropout", "dropout1d", "dropout2d",
    "dropout3d"}) do
  local inp = (n == "dropout3d") and r(2, 3, 2, 2,
      2) or (n == "dropout2d" and x4) or (n == "dropout1d" and x3) or x4
  add(n, seeded(function() return F[n](inp, {p = 0.3, training = true, inplace = false}) end),
    seeded(function() return F[n](inp, 0.3, true, false) end))
end
local prw = tide.tensor({0.25, 0.5, 0.1, 0.2})
add("prelu", function() return F.prelu(x4, {weight = prw}) end, function() return F.prelu(x4,
    prw) end)
-- linear family
local W = r(2, 5); local b = r(2)
add("linear", function() return F.linear(x2, {weight = W, bias = b}) end,
    function() return F.linear(x2, W, b) end)
local BW = r(2, 5, 5)
add("bilinear", function() return F.bilinear(x2, x2, {weight = BW, bias = b}) end,
    function() return F.bilinear(x2, x2, BW, b) end)
-- convs
local w1, w2, w3 = r(3, 4, 2), r(3, 4, 2, 2), r(3, 4, 2, 2, 2)
local x5 = r(1, 4, 3, 3, 3)
local cb = r(3)
add("conv1d", function() return F.conv1d(x3, {weight = w1, bias = cb, stride = 2, padding = 1,
    dilation = 1, groups = 1}) end,
  function() return F.conv1d(x3, w1, cb, 2, 1, 1, 1) end)
add("conv2d", function() return F.conv2d(x4, {weight = w2, bias = cb, stride = 2, padding = 1,
    dilation = 1, groups = 1}) end,
  function() return F.conv2d(x4, w2, cb, 2, 1, 1, 1) end)
add("conv3d", function() return F.conv3d(x5, {weight = w3, bias = cb, stride = 2, padding = 1,
    dilation = 1, groups = 1}) end,
  function() return F.conv3d(x5, w3, cb, 2, 1, 1, 1) end)
local t1, t2, t3 = r(4, 3, 2), r(4, 3, 2, 2), r(4, 3, 2, 2, 2)
add("conv_transpose1d", function() return F.conv_transpose1d(x3, {weight = t1, bias = cb,
    stride = 2, padding = 1, output_padding = 1, groups = 1, dilation = 1}) end,
  function() return F.conv_transpose1d(x3, t1, cb, 2, 1, 1, 1, 1) end)
add("conv_transpose2d", function() return F.conv_transpose2d(x4, {weight = t2, bias = cb,
    stride = 2, padding = 1, output_padding = 1, groups = 1, dilation = 1}) end,
  function() return F.conv_transpose2d(x4, t2, cb, 2, 1, 1, 1, 1) end)
add("conv_transpose3d", function() return F.conv_transpose3d(x5, {weight = t3, bias = cb,
    stride = 2, padding = 1, output_padding = 1, groups = 1, dilation = 1}) end,
  function() return F.conv_transpose3d(x5, t3, cb, 2, 1, 1, 1, 1) end)
-- pools
for d, inp in ipairs({x3, x4, x5}) do
  local mp = "max_pool" .. d .. "d"
  add(mp, function() return F[mp](inp, {kernel_size = 2, stride = 1, padding = 1, dilation = 1,
      ceil_mode = true, return_indices = true}) end,
    function() return F[mp](inp, 2, 1, 1, 1, true, true) end)
  add(mp .. "_with_indices", function() return F[mp .. "_with_indices"](inp, {kernel_size = 2,
      stride = 1, padding = 1, dilation = 1, ceil_mode = true}) end,
    function() return F[mp .. "_with_indices"](inp, 2, 1, 1, 1, true) end)
  local ap = "avg_pool" .. d .. "d"
  if d == 1 then
    add(ap, function() return F[ap](inp, {kernel_size = 2, stride = 1, padding = 1,
        ceil_mode = true, count_include_pad = false}) end,
      function() return F[ap](inp, 2, 1, 1, true, false) end)
  else
    add(ap, function() return F[ap](inp, {kernel_size = 2, stride = 1, padding = 1,
        ceil_mode = true, count_include_pad = false, divisor_override = 3}) end,
      function() return F[ap](inp, 2, 1, 1, true, false, 3) end)
  end
  local aa, am = "adaptive_avg_pool" .. d .. "d", "adaptive_max_pool" .. d .. "d"
  add(aa, function() return F[aa](inp, {output_size = 2}) end, function() return F[aa](inp, 2) end)
  add(am, function() return F[am](inp, {output_size = 2, return_indices = true}) end,
      function() return F[am](inp, 2, true) end)
  add(am .. "_with_indices", function() return F[am .. "_with_indices"](inp,
      {output_size = 2}) end, function() return F[am .. "_with_indices"](inp, 2) end)
  local mu = "max_unpool" .. d .. "d"
  add(mu, function() local o, i = F[mp](inp, 2, {return_indices = true}); return F[mu](o,
      {indices = i, kernel_size = 2, stride = 2, padding = 0, output_size = inp:size()}) end,
    function() local o, i = F[mp](inp, 2, {return_indices = true}); return F[mu](o, i, 2, 2, 0,
        inp:size()) end)
end
add("lp_pool1d", function() return F.lp_pool1d(x3:abs(), {norm_type = 2, kernel_size = 2,
    stride = 1, ceil_mode = true}) end,
  function() return F.lp_pool1d(x3:abs(), 2, 2, 1, true) end)
add("lp_pool2d", function() return F.lp_pool2d(x4:abs(), {norm_type = 2, kernel_size = 2,
    stride = 1, ceil_mode = true}) end,
  function() return F.lp_pool2d(x4:abs(), 2, 2, 1, true) end)
for d, inp in ipairs({x4, x5}) do
  local fp = "fractional_max_pool" .. (d + 1) .. "d"
  add(fp, seeded(function() return F[fp](inp, {kernel_size = 2, output_size = 2,
      return_indices = true}) end),
    seeded(function() return F[fp](inp, 2, 2, nil, true) end))
  add(fp .. "_with_indices", seeded(function() return F[fp .. "_with_indices"](inp,
      {kernel_size = 2, output_ratio = 0.5}) end),
    seeded(function() return F[fp .. "_with_indices"](inp, 2, nil, 0.5) end))
end
add("unfold", function() return F.unfold(x4, {kernel_size = 2, dilation = 1, padding = 1,
    stride = 2}) end,
  function() return F.unfold(x4, 2, 1, 1, 2) end)
local cols = F.unfold(x4, 2, 1, 0, 2)
add("fold", function() return F.fold(cols, {output_size = {4, 4}, kernel_size = 2, dilation = 1,
    padding = 0, stride = 2}) end,
  function() return F.fold(cols, {4, 4}, 2, 1, 0, 2) end)
-- vision
add("interpolate", function() return F.interpolate(x4, {size = nil, scale_factor = 2,
    mode = "bilinear", align_corners = true, recompute_scale_factor = false,
    antialias = false}) end,
  function() return F.interpolate(x4, nil, 2, "bilinear", true, false, false) end)
add("upsample", function() return F.upsample(x4, {scale_factor = 2, mode = "bilinear",
    align_corners = true}) end,
  function() return F.upsample(x4, nil, 2, "bilinear", true) end)
add("upsample_bilinear", function() return F.upsample_bilinear(x4, {scale_factor = 2}) end,
    function() return F.upsample_bilinear(x4, nil, 2) end)
add("upsample_nearest", function() return F.upsample_nearest(x4, {size = 6}) end,
    function() return F.upsample_nearest(x4, 6) end)
local theta = r(2, 2, 3)
add("affine_grid", function() return F.affine_grid(theta, {size = {2, 4, 3, 3},
    align_corners = false}) end,
  function() return F.affine_grid(theta, {2, 4, 3, 3}, false) end)
local grid = F.affine_grid(theta, {2, 4, 3, 3}, false)
add("grid_sample", function() return F.grid_sample(x4, {grid = grid, mode = "nearest",
    padding_mode = "border", align_corners = false}) end,
  function() return F.grid_sample(x4, grid, "nearest", "border", false) end)
add("pad", function() return F.pad(x2, {pad = {1, 2}, mode = "constant", value = 3}) end,
    function() return F.pad(x2, {1, 2}, "constant", 3) end)
add("pixel_shuffle", function() return F.pixel_shuffle(x4, {upscale_factor = 2}) end,
    function() return F.pixel_shuffle(x4, 2) end)
add("pixel_unshuffle", function() return F.pixel_unshuffle(x4, {downscale_factor = 2}) end,
    function() return F.pixel_unshuffle(x4, 2) end)
add("channel_shuffle", function() return F.channel_shuffle(x4, {groups = 2}) end,
    function() return F.channel_shuffle(x4, 2) end)
-- norms
local g4, b4 = r(4), r(4)
add("layer_norm", function() return F.layer_norm(x3, {normalized_shape = {6},
    weight = r(6):fill_(2), bias = tide.zeros(6), eps = 1e-3}) end,
  function() return F.layer_norm(x3, {6}, r(6):fill_(2), tide.zeros(6), 1e-3) end)
add("group_norm", function() return F.group_norm(x4, {num_groups = 2, weight = g4, bias = b4,
    eps = 1e-3}) end,
  function() return F.group_norm(x4, 2, g4, b4, 1e-3) end)
add("batch_norm", function() return F.batch_norm(x4, {running_mean = tide.zeros(4),
    running_var = tide.ones(4), weight = g4, bias = b4, training = false, momentum = 0.2,
    eps = 1e-3}) end,
  function() return F.batch_norm(x4, tide.zeros(4), tide.ones(4), g4, b4, false, 0.2, 1e-3) end)
add("instance_norm", function() return F.instance_norm(x4, {running_mean = nil, running_var = nil,
    weight = g4, bias = b4, use_input_stats = true, momentum = 0.2, eps = 1e-3}) end,
  function() return F.instance_norm(x4, nil, nil, g4, b4, true, 0.2, 1e-3) end)
add("local_response_norm", function() return F.local_response_norm(x4, {size = 3, alpha = 0.1,
    beta = 0.5, k = 2}) end,
  function() return F.local_response_norm(x4, 3, 0.1, 0.5, 2) end)
add("normalize", function() return F.normalize(x2, {p = 1, dim = 1, eps = 1e-3}) end,
    function() return F.normalize(x2, 1, 1, 1e-3) end)
if F.rms_norm then
  add("rms_norm", function() return F.rms_norm(x3, {normalized_shape = {6}, weight = r(6):fill_(2),
      eps = 1e-3}) end,
    function() return F.rms_norm(x3, {6}, r(6):fill_(2), 1e-3) end)
end
-- embeddings
local E = r(6, 3)
local idx = tide.tensor({{1, 2}, {3, 6}}, {dtype = "int64"})
add("embedding", function() return F.embedding(idx, {weight = E, padding_idx = 2, max_norm = nil,
    norm_type = 2, scale_grad_by_freq = false, sparse = false}) end,
  function() return F.embedding(idx, E, 2, nil, 2, false, false) end)
local bagi = tide.tensor({1, 2, 4, 5, 3, 6}, {dtype = "int64"})
local offs = tide.tensor({1, 3}, {dtype = "int64"})
add("embedding_bag", function() return F.embedding_bag(bagi, {weight = E, offsets = offs,
    mode = "sum", include_last_offset = false}) end,
  function() return F.embedding_bag(bagi, E, offs, nil, 2, false, "sum") end)
add("one_hot", function() return F.one_hot(tgt, {num_classes = 6}) end,
    function() return F.one_hot(tgt, 6) end)
add("cosine_similarity", function() return F.cosine_similarity(x2, {x2 = x2:flip(1), dim = 2,
    eps = 1e-3}) end,
  function() return F.cosine_similarity(x2, x2:flip(1), 2, 1e-3) end)
add("pairwise_distance", function() return F.pairwise_distance(x2, {x2 = x2:flip(1), p = 1,
    eps = 1e-3, keepdim = true}) end,
  function() return F.pairwise_distance(x2, x2:flip(1), 1, 1e-3, true) end)
add("pdist", function() return F.pdist(x2, {p = 1}) end, function() return F.pdist(x2, 1) end)
local q = r(1, 2, 3, 4)
add("scaled_dot_product_attention", function() return F.scaled_dot_product_attention(q,
    {key = q:flip(3), value = q, attn_mask = nil, dropout_p = 0, is_causal = true}) end,
  function() return F.scaled_dot_product_attention(q, q:flip(3), q, nil, 0, true) end)
-- losses
local p = x2:sigmoid()
local y01 = tide.rand(3, 5):gt(0.5):to("float32")
local ypm = y01:mul(2):sub(1)
local wC = tide.tensor({1, 2, 1, 0.5, 1})
add("cross_entropy", function() return F.cross_entropy(x2, {target = tgt, weight = wC,
    ignore_index = 3, reduction = "sum", label_smoothing = 0.1}) end,
  function() return F.cross_entropy(x2, tgt, wC, nil, 3, nil, "sum", 0.1) end)
add("nll_loss", function() return F.nll_loss(x2, {target = tgt, weight = wC, ignore_index = 3,
    reduction = "sum"}) end,
  function() return F.nll_loss(x2, tgt, wC, nil, 3, nil, "sum") end)
for _, n in ipairs({"mse_loss", "l1_loss", "soft_margin_loss"}) do
  add(n, function() return F[n](x2, {target = ypm, size_average = nil, reduce = nil,
      reduction = "sum"}) end,
    function() return F[n](x2, ypm, nil, nil, "sum") end)
end
local mlt = tide.tensor({{2, 1, 0, 0, 0}, {3, 0, 0, 0, 0}, {1, 2, 3, 0, 0}}, {dtype = "int64"})
add("multilabel_margin_loss", function() return F.multilabel_margin_loss(x2, {target = mlt,
    reduction = "sum"}) end,
  function() return F.multilabel_margin_loss(x2, mlt, nil, nil, "sum") end)
add("smooth_l1_loss", function() return F.smooth_l1_loss(x2, {target = ypm, reduction = "sum",
    beta = 0.5}) end,
  function() return F.smooth_l1_loss(x2, ypm, nil, nil, "sum", 0.5) end)
add("huber_loss", function() return F.huber_loss(x2, {target = ypm, reduction = "sum",
    delta = 0.5}) end,
  function() return F.huber_loss(x2, ypm, "sum", 0.5) end)
add("kl_div", function() return F.kl_div(x2:log_softmax(2), {target = x2:flip(1):log_softmax(2),
    reduction = "batchmean", log_target = true}) end,
  function() return F.kl_div(x2:log_softmax(2), x2:flip(1):log_softmax(2), nil, nil, "batchmean",
      true) end)
add("binary_cross_entropy", function() return F.binary_cross_entropy(p, {target = y01, weight = wC,
    reduction = "sum"}) end,
  function() return F.binary_cross_entropy(p, y01, wC, nil, nil, "sum") end)
add("multilabel_soft_margin_loss", function() return F.multilabel_soft_margin_loss(x2,
    {target = y01, weight = wC, reduction = "sum"}) end,
  function() return F.multilabel_soft_margin_loss(x2, y01, wC, nil, nil, "sum") end)
add("binary_cross_entropy_with_logits", function() return F.binary_cross_entropy_with_logits(x2,
    {target = y01, weight = wC, reduction = "sum", pos_weight = wC:mul(2)}) end,
  function() return F.binary_cross_entropy_with_logits(x2, y01, wC, nil, nil, "sum", wC:mul(2)) end)
add("multi_margin_loss", function() return F.multi_margin_loss(x2, {target = tgt, p = 2,
    margin = 0.5, weight = wC, reduction = "sum"}) end,
  function() return F.multi_margin_loss(x2, tgt, 2, 0.5, wC, nil, nil, "sum") end)
add("hinge_embedding_loss", function() return F.hinge_embedding_loss(x2, {target = ypm,
    margin = 0.5, reduction = "sum"}) end,
  function() return F.hinge_embedding_loss(x2, ypm, 0.5, nil, nil, "sum") end)
add("poisson_nll_loss", function() return F.poisson_nll_loss(x2, {target = y01, log_input = true,
    full = true, eps = 1e-3, reduction = "sum"}) end,
  function() return F.poisson_nll_loss(x2, y01, true, true, nil, 1e-3, nil, "sum") end)
add("gaussian_nll_loss", function() return F.gaussian_nll_loss(x2, {target = ypm, var = p,
    full = true, eps = 1e-3, reduction = "sum"}) end,
  function() return F.gaussian_nll_loss(x2, ypm, p, true, 1e-3, "sum") end)
local v1 = x2:narrow(2, 1, 1):squeeze(2); local v2 = x2:narrow(2, 2, 1):squeeze(2)
local s3 = tide.tensor({1, -1, 1})
add("margin_ranking_loss", function() return F.margin_ranking_loss(v1, {input2 = v2, target = s3,
    margin = 0.3, reduction = "sum"}) end,
  function() return F.margin_ranking_loss(v1, v2, s3, 0.3, nil, nil, "sum") end)
add("cosine_embedding_loss", function() return F.cosine_embedding_loss(x2, {input2 = x2:flip(1),
    target = s3, margin = 0.3, reduction = "sum"}) end,
  function() return F.cosine_embedding_loss(x2, x2:flip(1), s3, 0.3, nil, nil, "sum") end)
add("triplet_margin_loss", function() return F.triplet_margin_loss(x2, {positive = x2:flip(1),
    negative = x2:flip(2), margin = 0.5, p = 1, eps = 1e-3, swap = true, reduction = "sum"}) end,
  function() return F.triplet_margin_loss(x2, x2:flip(1), x2:flip(2), 0.5, 1, 1e-3, true, nil, nil,
      "sum") end)
add("triplet_margin_with_distance_loss", function() return F.triplet_margin_with_distance_loss(x2,
    {positive = x2:flip(1), negative = x2:flip(2), margin = 0.5, swap = true,
    reduction = "sum"}) end,
  function() return F.triplet_margin_with_distance_loss(x2, x2:flip(1), x2:flip(2), {margin = 0.5,
      swap = true, reduction = "sum"}) end)
local lp = r(5, 2, 4):log_softmax(3)
local ctg = tide.tensor({{2, 3}, {1, 2}}, {dtype = "int64"})
local il = tide.tensor({5, 4}, {dtype = "int64"}); local tl = tide.tensor({2, 1}, {dtype = "int64"})
add("ctc_loss", function() return F.ctc_loss(lp, {targets = ctg, input_lengths = il,
    target_lengths = tl, blank = 4, reduction = "sum", zero_infinity = true}) end,
  function() return F.ctc_loss(lp, ctg, il, tl, 4, "sum", true) end)


for _, n in ipairs({ "threshold", "threshold_", "prelu", "linear", "bilinear", "conv1d", "conv2d",
    "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d_with_indices", "max_unpool1d", "max_unpool2d", "max_unpool3d",
    "fractional_max_pool2d", "fractional_max_pool3d", "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d_with_indices", "unfold", "fold", "affine_grid", "grid_sample",
    "channel_shuffle", "layer_norm", "rms_norm", "group_norm", "batch_norm", "instance_norm",
    "local_response_norm", "embedding", "embedding_bag", "cosine_similarity",
    "pairwise_distance", "scaled_dot_product_attention", "triplet_margin_with_distance_loss",
    "ctc_loss" }) do
    FIXED[n] = true
end

-- the results of one call, each a tensor (so two calls that both return nothing cannot agree)
local function results(f)
    local out = table.pack(f())
    assert.is_true(out.n >= 1)
    for i = 1, out.n do
        assert.is_true(tide.is_tensor(out[i]), "result " .. i .. " is not a tensor")
    end
    return out
end

local function same_call(c)
    local want, got = results(c[3]), results(c[2])
    assert.are.equal(want.n, got.n)
    for i = 1, want.n do
        local a, b = want[i], got[i]
        assert.are.same(a.shape, b.shape)
        assert.are.equal(a.dtype, b.dtype)
        assert.is_true(tide.equal(a, b), c[1] .. ": result " .. i .. " differs by name")
    end
end

describe("tide.nn.functional: PyTorch's keywords by name", function()
    for _, c in ipairs(C) do
        if FIXED[c[1]] then
            it("F." .. c[1] .. ": its required arguments by name, as its positional call",
                function()
                same_call(c)
            end)
        end
    end

    it("every function swept: by name, the positional call's results", function()
        assert.is_true(#C >= 110)
        local seen = {}
        for _, c in ipairs(C) do
            seen[c[1]] = true
            local ok, err = pcall(same_call, c)
            assert.is_true(ok, c[1] .. ": " .. tostring(err))
        end
        for n in pairs(FIXED) do
            assert.is_true(seen[n], n .. " is not swept")
        end
    end)

    it("a required argument given both ways raises, naming it", function()
        local w = r(3, 4, 2)
        local line = debug.getinfo(1, "l").currentline + 1
        local ok, err = pcall(F.conv1d, x3, w, { weight = w })
        assert.is_false(ok)
        assert.are.equal(SPEC .. line .. ": tide: conv1d: weight given twice, as argument #2 " ..
            "and by name; pass it once", err)
        ok, err = pcall(F.layer_norm, x3, { 6 }, { normalized_shape = { 6 } })
        assert.is_false(ok)
        assert.truthy(err:find("tide: layer_norm: normalized_shape given twice", 1, true))
    end)

    it("a table by name in place of a required argument it does not hold raises", function()
        local cases = {
            { F.layer_norm, x3, "layer_norm", "normalized_shape", 2 },
            { F.rms_norm, x3, "rms_norm", "normalized_shape", 2 },
            { F.adaptive_max_pool2d_with_indices, x4, "adaptive_max_pool2d_with_indices",
                "output_size", 2 },
            { F.conv2d, x4, "conv2d", "weight", 2 },
            { F.cross_entropy, x2, "cross_entropy", "target", 2 },
        }
        for _, c in ipairs(cases) do
            local line = debug.getinfo(1, "l").currentline + 1
            local ok, err = pcall(c[1], c[2], { eps = 1e-3 })
            assert.is_false(ok)
            assert.are.equal(string.format("%s%d: tide: %s: missing required argument %s " ..
                "(argument #%d); pass it by position or by name in the last table", SPEC,
                line, c[3], c[4], c[5]), err)
        end
        -- the arguments PyTorch lets be None may be left out
        local want = F.instance_norm(x4, nil, nil, { eps = 1e-3 })
        assert.is_true(tide.equal(want, F.instance_norm(x4, { eps = 1e-3 })))
    end)

    it("an unknown name beside a required one raises", function()
        local ok, err = pcall(F.layer_norm, x3, { normalized_shape = { 6 }, epsilon = 1 })
        assert.is_false(ok)
        assert.truthy(err:find('tide: layer_norm: unknown option "epsilon"', 1, true))
        ok, err = pcall(F.conv2d, x4, { weight = r(3, 4, 2, 2), strid = 2 })
        assert.is_false(ok)
        assert.truthy(err:find('tide: conv2d: unknown option "strid"', 1, true))
    end)

    it("F.bilinear: bias by position or by name; the running stats of F.instance_norm by name",
        function()
        local W, b = r(2, 5, 5), r(2)
        local want = F.bilinear(x2, x2, W, b)
        assert.are.same({ 3, 2 }, want.shape)
        assert.is_true(tide.equal(want, F.bilinear(x2, x2, W, { bias = b })))
        assert.is_false(tide.equal(want, F.bilinear(x2, x2, W)))
        local rm, rv = tide.zeros(4), tide.ones(4)
        F.instance_norm(x4, { running_mean = rm, running_var = rv, momentum = 0.5 })
        local m = x4:mean({ 3, 4 }):mean(1):mul(0.5)
        assert.is_true(rm:allclose(m, 1e-5, 1e-6))
    end)
end)
