-- ported_scripts52_spec.lua — huggingface/pytorch-image-models (timm) layers ported line for line:
-- layers/mlp.py (Mlp, GluMlp, SwiGLUPacked, SwiGLU, GatedMlp, ConvMlp), layers/drop.py
-- (drop_path, DropPath, drop_block_2d, drop_block_fast_2d, DropBlock2d), LayerScale,
-- layers/patch_embed.py's PatchEmbed (flatten, strict_img_size, dynamic_img_pad),
-- layers/helpers.py (_ntuple/to_2tuple, make_divisible), models/vision_transformer.py's
-- Attention (fused and not) and Block, layers/pos_embed.py's resample_abs_pos_embed (bicubic
-- F.interpolate with antialias=True, new in tide), each checked against PyTorch 1.13's values on
-- deterministic weights (the classes pasted into the venv's Python) and trained a few steps.
-- The Python line stands above each Lua line that differs from it. Dims are 1-based.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite

-- the Python check's deterministic weights and inputs:
-- for i, (n, p) in enumerate(sorted(m.named_parameters())):
--     p.copy_((torch.arange(p.numel(), dtype=torch.float32)*0.37 + (i+1)).sin().reshape(p.shape)*0.3)
local function det(m)
    local nps = m:named_parameters()
    table.sort(nps, function(a, b) return a[1] < b[1] end)
    tide.no_grad(function()
        for i, np in ipairs(nps) do
            local p = np[2]
            p:copy_(((tide.arange(p:numel(), { dtype = "float32" }) * 0.37 + i):sin()
                :reshape(p.shape) * 0.3))
        end
    end)
    return m
end
-- (torch.arange(n, dtype=torch.float32)*0.13).sin().reshape(s)
local function inp(...)
    local s, n = { ... }, 1
    for _, v in ipairs(s) do n = n * v end
    return (tide.arange(n, { dtype = "float32" }) * 0.13):sin():reshape(s)
end
-- the Python check prints sum, the first 4 and the last value of y.flatten()
local function check(y, sum, first, last)
    y = y:detach():flatten()
    assert.is_true(math.abs(y:sum():item() - sum) < 1e-4 * math.max(1, math.abs(sum)),
        "sum " .. y:sum():item() .. " vs " .. sum)
    for i, v in ipairs(first) do
        assert.is_true(math.abs(y[i]:item() - v) < 1e-5, "y[" .. i .. "] " .. y[i]:item() .. " vs " .. v)
    end
    assert.is_true(math.abs(y[-1]:item() - last) < 1e-5, "last " .. y[-1]:item() .. " vs " .. last)
end

local function train(model, x, steps)
    local opt = optim.AdamW(model:parameters(), { lr = 1e-2 })
    local target = tide.randn_like(model(x))
    local first, loss
    for _ = 1, steps or 5 do
        opt:zero_grad()
        loss = F.mse_loss(model(x), target)
        loss:backward()
        opt:step()
        first = first or loss:item()
    end
    assert_finite(loss)
    assert.is_true(loss:item() < first)
end

---------------------------------------------------------------------------------------------
-- layers/helpers.py
---------------------------------------------------------------------------------------------
-- def _ntuple(n):
--     def parse(x):
--         if isinstance(x, collections.abc.Iterable) and not isinstance(x, str):
--             return tuple(x)
--         return tuple(repeat(x, n))
--     return parse
local function _ntuple(n)
    return function(x)
        if type(x) == "table" and not tide.is_tensor(x) then
            return { unpack(x) }
        end
        local t = {}
        for i = 1, n do t[i] = x end
        return t
    end
end
-- to_2tuple = _ntuple(2)
local to_2tuple = _ntuple(2)

-- def make_divisible(v, divisor=8, min_value=None, round_limit=.9):
local function make_divisible(v, divisor, min_value, round_limit)
    divisor, round_limit = divisor or 8, round_limit or 0.9
    -- min_value = min_value or divisor
    min_value = min_value or divisor
    -- new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    local new_v = math.max(min_value, math.floor(math.floor(v + divisor / 2) / divisor) * divisor)
    -- if new_v < round_limit * v:
    if new_v < round_limit * v then
        new_v = new_v + divisor
    end
    return new_v
end

describe("timm layers/helpers.py", function()
    it("to_2tuple and make_divisible as Python's", function()
        assert.are.same({ 3, 3 }, to_2tuple(3))
        assert.are.same({ 2, 5 }, to_2tuple({ 2, 5 }))
        assert.are.same({ true, true }, to_2tuple(true))
        -- [make_divisible(v) for v in (3, 10, 30, 37, 100)] == [8, 16, 32, 40, 104]
        local got = {}
        for i, v in ipairs({ 3, 10, 30, 37, 100 }) do got[i] = make_divisible(v) end
        assert.are.same({ 8, 16, 32, 40, 104 }, got)
        assert.are.equal(16, make_divisible(15, 16))
    end)
end)

---------------------------------------------------------------------------------------------
-- layers/mlp.py
---------------------------------------------------------------------------------------------
-- linear_layer = partial(nn.Conv2d, kernel_size=1) if use_conv else nn.Linear
local function conv1x1(i, o, kw)
    return nn.Conv2d(i, o, { kernel_size = 1, bias = kw.bias })
end

-- class Mlp(nn.Module):
local Mlp = nn.Module:extend("Mlp")
nn.signature(Mlp, "in_features, hidden_features=None, out_features=None, act_layer=nn.GELU, " ..
    "norm_layer=None, bias=True, drop=0., use_conv=False")
function Mlp:init(in_features, hidden_features, out_features, act_layer, norm_layer, bias, drop,
                  use_conv)
    out_features = out_features or in_features
    hidden_features = hidden_features or in_features
    bias = to_2tuple(bias)
    local drop_probs = to_2tuple(drop)
    local linear_layer = use_conv and conv1x1 or nn.Linear

    -- self.fc1 = linear_layer(in_features, hidden_features, bias=bias[0])
    self.fc1 = linear_layer(in_features, hidden_features, { bias = bias[1] })
    self.act = act_layer()
    self.drop1 = nn.Dropout(drop_probs[1])
    -- self.norm = norm_layer(hidden_features) if norm_layer is not None else nn.Identity()
    self.norm = norm_layer and norm_layer(hidden_features) or nn.Identity()
    self.fc2 = linear_layer(hidden_features, out_features, { bias = bias[2] })
    self.drop2 = nn.Dropout(drop_probs[2])
end
function Mlp:forward(x)
    x = self.fc1(x)
    x = self.act(x)
    x = self.drop1(x)
    x = self.norm(x)
    x = self.fc2(x)
    x = self.drop2(x)
    return x
end

-- class GluMlp(nn.Module):
local GluMlp = nn.Module:extend("GluMlp")
nn.signature(GluMlp, "in_features, hidden_features=None, out_features=None, " ..
    "act_layer=nn.Sigmoid, norm_layer=None, bias=True, drop=0., use_conv=False, gate_last=True")
function GluMlp:init(in_features, hidden_features, out_features, act_layer, norm_layer, bias,
                     drop, use_conv, gate_last)
    out_features = out_features or in_features
    hidden_features = hidden_features or in_features
    assert(hidden_features % 2 == 0)
    bias = to_2tuple(bias)
    local drop_probs = to_2tuple(drop)
    local linear_layer = use_conv and conv1x1 or nn.Linear
    -- self.chunk_dim = 1 if use_conv else -1
    self.chunk_dim = use_conv and 2 or -1
    self.gate_last = gate_last -- use second half of width for gate

    self.fc1 = linear_layer(in_features, hidden_features, { bias = bias[1] })
    self.act = act_layer()
    self.drop1 = nn.Dropout(drop_probs[1])
    -- norm_layer(hidden_features // 2)
    self.norm = norm_layer and norm_layer(math.floor(hidden_features / 2)) or nn.Identity()
    self.fc2 = linear_layer(math.floor(hidden_features / 2), out_features, { bias = bias[2] })
    self.drop2 = nn.Dropout(drop_probs[2])
end
function GluMlp:init_weights()
    -- override init of fc1 w/ gate portion set to weight near zero, bias=1
    -- if self.fc1.bias is not None:
    if self.fc1.bias ~= nil then
        -- nn.init.ones_(self.fc1.bias[self.fc1.bias.shape[0] // 2:])
        nn.init.ones_(self.fc1.bias[{ { math.floor(self.fc1.bias.shape[1] / 2) + 1, -1 } }])
    end
    -- nn.init.normal_(self.fc1.weight[self.fc1.weight.shape[0] // 2:], std=1e-6)
    nn.init.normal_(self.fc1.weight[{ { math.floor(self.fc1.weight.shape[1] / 2) + 1, -1 } }],
        { std = 1e-6 })
end
function GluMlp:forward(x)
    x = self.fc1(x)
    -- x1, x2 = x.chunk(2, dim=self.chunk_dim)
    -- (chunk returns a Lua list)
    local x1, x2 = unpack(x:chunk(2, { dim = self.chunk_dim }))
    -- x = x1 * self.act(x2) if self.gate_last else self.act(x1) * x2
    if self.gate_last then x = x1 * self.act(x2) else x = self.act(x1) * x2 end
    x = self.drop1(x)
    x = self.norm(x)
    x = self.fc2(x)
    x = self.drop2(x)
    return x
end

-- SwiGLUPacked = partial(GluMlp, act_layer=nn.SiLU, gate_last=False)
local function SwiGLUPacked(in_features, hidden_features)
    return GluMlp(in_features, hidden_features, { act_layer = nn.SiLU, gate_last = false })
end

-- class SwiGLU(nn.Module):
local SwiGLU = nn.Module:extend("SwiGLU")
nn.signature(SwiGLU, "in_features, hidden_features=None, out_features=None, act_layer=nn.SiLU, " ..
    "norm_layer=None, bias=True, drop=0.")
function SwiGLU:init(in_features, hidden_features, out_features, act_layer, norm_layer, bias, drop)
    out_features = out_features or in_features
    hidden_features = hidden_features or in_features
    bias = to_2tuple(bias)
    local drop_probs = to_2tuple(drop)

    self.fc1_g = nn.Linear(in_features, hidden_features, { bias = bias[1] })
    self.fc1_x = nn.Linear(in_features, hidden_features, { bias = bias[1] })
    self.act = act_layer()
    self.drop1 = nn.Dropout(drop_probs[1])
    self.norm = norm_layer and norm_layer(hidden_features) or nn.Identity()
    self.fc2 = nn.Linear(hidden_features, out_features, { bias = bias[2] })
    self.drop2 = nn.Dropout(drop_probs[2])
end
function SwiGLU:init_weights()
    if self.fc1_g.bias ~= nil then
        nn.init.ones_(self.fc1_g.bias)
    end
    nn.init.normal_(self.fc1_g.weight, { std = 1e-6 })
end
function SwiGLU:forward(x)
    local x_gate = self.fc1_g(x)
    x = self.fc1_x(x)
    x = self.act(x_gate) * x
    x = self.drop1(x)
    x = self.norm(x)
    x = self.fc2(x)
    x = self.drop2(x)
    return x
end

-- class GatedMlp(nn.Module):
local GatedMlp = nn.Module:extend("GatedMlp")
nn.signature(GatedMlp, "in_features, hidden_features=None, out_features=None, " ..
    "act_layer=nn.GELU, norm_layer=None, gate_layer=None, bias=True, drop=0.")
function GatedMlp:init(in_features, hidden_features, out_features, act_layer, norm_layer,
                       gate_layer, bias, drop)
    out_features = out_features or in_features
    hidden_features = hidden_features or in_features
    bias = to_2tuple(bias)
    local drop_probs = to_2tuple(drop)

    self.fc1 = nn.Linear(in_features, hidden_features, { bias = bias[1] })
    self.act = act_layer()
    self.drop1 = nn.Dropout(drop_probs[1])
    if gate_layer ~= nil then
        assert(hidden_features % 2 == 0)
        self.gate = gate_layer(hidden_features)
        hidden_features = math.floor(hidden_features / 2) -- FIXME base reduction on gate property?
    else
        self.gate = nn.Identity()
    end
    self.norm = norm_layer and norm_layer(hidden_features) or nn.Identity()
    self.fc2 = nn.Linear(hidden_features, out_features, { bias = bias[2] })
    self.drop2 = nn.Dropout(drop_probs[2])
end
function GatedMlp:forward(x)
    x = self.fc1(x)
    x = self.act(x)
    x = self.drop1(x)
    x = self.gate(x)
    x = self.norm(x)
    x = self.fc2(x)
    x = self.drop2(x)
    return x
end

-- class ConvMlp(nn.Module):
local ConvMlp = nn.Module:extend("ConvMlp")
nn.signature(ConvMlp, "in_features, hidden_features=None, out_features=None, act_layer=nn.ReLU, " ..
    "norm_layer=None, bias=True, drop=0.")
function ConvMlp:init(in_features, hidden_features, out_features, act_layer, norm_layer, bias, drop)
    out_features = out_features or in_features
    hidden_features = hidden_features or in_features
    bias = to_2tuple(bias)

    -- self.fc1 = nn.Conv2d(in_features, hidden_features, kernel_size=1, bias=bias[0])
    self.fc1 = nn.Conv2d(in_features, hidden_features, { kernel_size = 1, bias = bias[1] })
    self.norm = norm_layer and norm_layer(hidden_features) or nn.Identity()
    self.act = act_layer()
    self.drop = nn.Dropout(drop)
    self.fc2 = nn.Conv2d(hidden_features, out_features, { kernel_size = 1, bias = bias[2] })
end
function ConvMlp:forward(x)
    x = self.fc1(x)
    x = self.norm(x)
    x = self.act(x)
    x = self.drop(x)
    x = self.fc2(x)
    return x
end

describe("timm layers/mlp.py", function()
    it("Mlp (Linear and use_conv with a BatchNorm2d norm_layer) matches PyTorch", function()
        -- det(Mlp(8, 16))(inp(2,3,8))
        check(det(Mlp(8, 16))(inp(2, 3, 8)), -12.88116,
            { -0.03170256, -0.1065675, -0.1671977, -0.2051901 }, -0.2374922)
        -- det(Mlp(4, 6, use_conv=True, norm_layer=nn.BatchNorm2d)).eval()(inp(2,4,3,3))
        check(det(Mlp(4, 6, { use_conv = true, norm_layer = nn.BatchNorm2d })):eval()(inp(2, 4, 3, 3)),
            -4.973908, { 0.1687446, 0.1700538, 0.1714285, 0.1728341 }, -0.07752268)
        tide.manual_seed(0)
        local m = Mlp(8, 16, { drop = 0.1 })
        assert.are.equal(0.1, m.drop1.p)
        train(m, tide.randn(4, 8))
    end)

    it("GluMlp, SwiGLUPacked, SwiGLU, ConvMlp match PyTorch; init_weights; GatedMlp trains", function()
        check(det(GluMlp(8, 16))(inp(2, 3, 8)), -8.987902,
            { -0.05528213, 0.0364297, -0.2766635, -0.139763 }, 0.04298992)
        check(det(SwiGLUPacked(8, 16))(inp(2, 3, 8)), -8.03301,
            { 0.2324138, -0.2330056, -0.03434938, -0.3469874 }, 0.09080762)
        -- det(SwiGLU(8, 12, norm_layer=nn.LayerNorm))(inp(2,3,8))
        check(det(SwiGLU(8, 12, { norm_layer = nn.LayerNorm }))(inp(2, 3, 8)), 1.708409,
            { 0.08464798, -0.903635, -0.1689261, 0.6219634 }, 0.3356978)
        check(det(ConvMlp(4, 8, 5))(inp(2, 4, 3, 3)), -19.4155,
            { -0.3307489, -0.3406252, -0.353594, -0.3650873 }, -0.6451659)
        local g = GluMlp(8, 16, { use_conv = true })
        assert.are.equal(2, g.chunk_dim)
        g:init_weights()
        assert.are.same({ 1, 1, 1, 1, 1, 1, 1, 1 }, g.fc1.bias[{ { 9, 16 } }]:tolist())
        assert.is_true(g.fc1.weight[{ { 9, 16 } }]:abs():max():item() < 1e-4)
        assert.are.same({ 2, 8, 3, 3 }, g(tide.randn(2, 8, 3, 3)).shape)
        local s = SwiGLU(8, 12)
        s:init_weights()
        assert.is_true(s.fc1_g.weight:abs():max():item() < 1e-4)
        tide.manual_seed(1)
        -- GatedMlp(dim, hidden, gate_layer=SpatialGatingUnit): a LayerNorm-gated half here
        local Gate = nn.Module:extend("Gate")
        function Gate:init(dim)
            self.norm = nn.LayerNorm(math.floor(dim / 2))
        end
        function Gate:forward(x)
            local u, v = unpack(x:chunk(2, { dim = -1 }))
            return u * self.norm(v)
        end
        local gm = GatedMlp(8, 16, { gate_layer = Gate })
        assert.are.equal(8, gm.fc2.in_features)
        train(gm, tide.randn(4, 8))
        train(ConvMlp(4, 8, { norm_layer = nn.BatchNorm2d }), tide.randn(2, 4, 3, 3))
    end)
end)

---------------------------------------------------------------------------------------------
-- layers/drop.py
---------------------------------------------------------------------------------------------
-- def ndgrid(*tensors): return torch.meshgrid(*tensors, indexing='ij')   (layers/grid.py)
local function ndgrid(...)
    return unpack(tide.meshgrid({ ... }, { indexing = "ij" }))
end

-- def clip_mask_2d(h, w, kernel, device):
local function clip_mask_2d(h, w, kernel, device)
    -- assert kernel <= min(h, w), f"{kernel=} > min({h=}, {w=})"
    assert(kernel <= math.min(h, w))
    -- h_i, w_i = ndgrid(torch.arange(h, device=device), torch.arange(w, device=device))
    local h_i, w_i = ndgrid(tide.arange(h, { device = device }), tide.arange(w, { device = device }))
    -- return ((h_i >= kernel // 2) & (h_i < h - (kernel - 1) // 2) &
    --         (w_i >= kernel // 2) & (w_i < w - (kernel - 1) // 2)).reshape(h, w)
    -- (Lua 5.1 has no &: logical_and)
    local k2, k1 = math.floor(kernel / 2), math.floor((kernel - 1) / 2)
    return h_i:ge(k2):logical_and(h_i:lt(h - k1)):logical_and(w_i:ge(k2))
        :logical_and(w_i:lt(w - k1)):reshape(h, w)
end

-- def drop_block_2d(x, drop_prob=0.1, block_size=7, gamma_scale=1.0, with_noise=False,
--                   inplace=False, batchwise=False):
local function drop_block_2d(x, drop_prob, block_size, gamma_scale, with_noise, inplace, batchwise)
    -- B, C, H, W = x.shape
    local _, C, H, W = unpack(x.shape)
    local total_size = W * H
    local clipped_block_size = math.min(block_size, W, H)
    -- gamma = gamma_scale * drop_prob * total_size / clipped_block_size ** 2 / (
    --         (W - block_size + 1) * (H - block_size + 1))
    local gamma = gamma_scale * drop_prob * total_size / clipped_block_size ^ 2 /
        ((W - block_size + 1) * (H - block_size + 1))
    -- valid_block = clip_mask_2d(h=H, w=W, kernel=clipped_block_size, device=x.device,
    --     ).reshape((1, 1, H, W)).to(dtype=x.dtype)
    local valid_block = clip_mask_2d(H, W, clipped_block_size, x.device)
        :reshape({ 1, 1, H, W }):to({ dtype = x.dtype })
    local uniform_noise
    if batchwise then
        -- uniform_noise = torch.rand((1, C, H, W), dtype=x.dtype, device=x.device)
        uniform_noise = tide.rand({ 1, C, H, W }, { dtype = x.dtype, device = x.device })
    else
        uniform_noise = tide.rand_like(x)
    end
    -- block_mask = ((2 - gamma - valid_block + uniform_noise) >= 1).to(dtype=x.dtype)
    local block_mask = ((2 - gamma - valid_block + uniform_noise):ge(1)):to({ dtype = x.dtype })
    -- block_mask = -F.max_pool2d(-block_mask, kernel_size=clipped_block_size, stride=1,
    --     padding=clipped_block_size // 2)
    block_mask = -F.max_pool2d(-block_mask, { kernel_size = clipped_block_size, stride = 1,
        padding = math.floor(clipped_block_size / 2) })
    if with_noise then
        local normal_noise = batchwise and
            tide.randn({ 1, C, H, W }, { dtype = x.dtype, device = x.device }) or tide.randn_like(x)
        if inplace then
            x:mul_(block_mask):add_(normal_noise * (1 - block_mask))
        else
            x = x * block_mask + normal_noise * (1 - block_mask)
        end
    else
        -- normalize_scale = (block_mask.numel() / block_mask.to(dtype=torch.float32).sum().add(1e-7)).to(x.dtype)
        local normalize_scale = (block_mask:numel() /
            block_mask:to({ dtype = "float32" }):sum():add(1e-7)):to(x.dtype)
        if inplace then
            x:mul_(block_mask * normalize_scale)
        else
            x = x * block_mask * normalize_scale
        end
    end
    return x
end

-- def drop_block_fast_2d(x, drop_prob=0.1, block_size=7, gamma_scale=1.0, with_noise=False, inplace=False):
local function drop_block_fast_2d(x, drop_prob, block_size, gamma_scale, with_noise, inplace)
    local _, _, H, W = unpack(x.shape)
    local total_size = W * H
    -- clipped_block_size = min(block_size, min(W, H))
    local clipped_block_size = math.min(block_size, math.min(W, H))
    local gamma = gamma_scale * drop_prob * total_size / clipped_block_size ^ 2 /
        ((W - block_size + 1) * (H - block_size + 1))
    -- block_mask = torch.empty_like(x).bernoulli_(gamma)
    local block_mask = tide.empty_like(x):bernoulli_(gamma)
    -- block_mask = F.max_pool2d(block_mask.to(x.dtype), kernel_size=clipped_block_size, stride=1, padding=clipped_block_size // 2)
    block_mask = F.max_pool2d(block_mask:to(x.dtype), { kernel_size = clipped_block_size,
        stride = 1, padding = math.floor(clipped_block_size / 2) })
    if with_noise then
        -- normal_noise = torch.empty_like(x).normal_()
        local normal_noise = tide.empty_like(x):normal_()
        if inplace then
            x:mul_(1. - block_mask):add_(normal_noise * block_mask)
        else
            x = x * (1. - block_mask) + normal_noise * block_mask
        end
    else
        block_mask = 1 - block_mask
        -- normalize_scale = (block_mask.numel() / block_mask.to(dtype=torch.float32).sum().add(1e-6)).to(dtype=x.dtype)
        local normalize_scale = (block_mask:numel() /
            block_mask:to({ dtype = "float32" }):sum():add(1e-6)):to({ dtype = x.dtype })
        if inplace then
            x:mul_(block_mask * normalize_scale)
        else
            x = x * block_mask * normalize_scale
        end
    end
    return x
end

-- class DropBlock2d(nn.Module):
local DropBlock2d = nn.Module:extend("DropBlock2d")
nn.signature(DropBlock2d, "drop_prob: float = 0.1, block_size: int = 7, gamma_scale: float = 1.0, " ..
    "with_noise: bool = False, inplace: bool = False, batchwise: bool = False, fast: bool = True")
function DropBlock2d:init(drop_prob, block_size, gamma_scale, with_noise, inplace, batchwise, fast)
    self.drop_prob = drop_prob
    self.gamma_scale = gamma_scale
    self.block_size = block_size
    self.with_noise = with_noise
    self.inplace = inplace
    self.batchwise = batchwise
    self.fast = fast -- FIXME finish comparisons of fast vs not
end
function DropBlock2d:forward(x)
    -- if not self.training or not self.drop_prob:
    if not self.training or self.drop_prob == 0 then
        return x
    end
    if self.fast then
        return drop_block_fast_2d(
            x, self.drop_prob, self.block_size, self.gamma_scale, self.with_noise, self.inplace)
    else
        return drop_block_2d(
            x, self.drop_prob, self.block_size, self.gamma_scale, self.with_noise, self.inplace,
            self.batchwise)
    end
end

-- def drop_path(x, drop_prob: float = 0., training: bool = False, scale_by_keep: bool = True):
local function drop_path(x, drop_prob, training, scale_by_keep)
    drop_prob = drop_prob or 0
    if scale_by_keep == nil then scale_by_keep = true end
    if drop_prob == 0. or not training then
        return x
    end
    local keep_prob = 1 - drop_prob
    -- shape = (x.shape[0],) + (1,) * (x.ndim - 1)  # work with diff dim tensors, not just 2D ConvNets
    local shape = { x.shape[1] }
    for i = 2, x.ndim do shape[i] = 1 end
    -- random_tensor = x.new_empty(shape).bernoulli_(keep_prob)
    local random_tensor = x:new_empty(shape):bernoulli_(keep_prob)
    if keep_prob > 0.0 and scale_by_keep then
        random_tensor:div_(keep_prob)
    end
    return x * random_tensor
end

-- class DropPath(nn.Module):
local DropPath = nn.Module:extend("DropPath")
nn.signature(DropPath, "drop_prob: float = 0., scale_by_keep: bool = True")
function DropPath:init(drop_prob, scale_by_keep)
    self.drop_prob = drop_prob
    self.scale_by_keep = scale_by_keep
end
function DropPath:forward(x)
    return drop_path(x, self.drop_prob, self.training, self.scale_by_keep)
end
function DropPath:extra_repr()
    -- return f'drop_prob={round(self.drop_prob,3):0.3f}'
    return string.format("drop_prob=%0.3f", self.drop_prob)
end

describe("timm layers/drop.py", function()
    it("drop_path / DropPath: whole samples kept (scaled by 1/keep) or zeroed", function()
        tide.manual_seed(3)
        local x = tide.ones(64, 3, 2, 2)
        local m = DropPath(0.25)
        assert.are.equal("drop_prob=0.250", m:extra_repr())
        local y = m(x)
        local per = y:reshape(64, -1)
        local kept = 0
        for i = 1, 64 do
            local row = per[i]
            local v = row[1]:item()
            assert.is_true(v == 0 or math.abs(v - 1 / 0.75) < 1e-6)
            assert.is_true(math.abs(v * 12 - row:sum():item()) < 1e-5)
            if v ~= 0 then kept = kept + 1 end
        end
        assert.is_true(kept > 36 and kept < 60)
        m:eval()
        assert.are.equal(x, m(x))
        assert.are.equal(x, drop_path(x, 0.5, false))
        -- scale_by_keep=False keeps the values
        local z = drop_path(x, 0.5, true, false)
        assert.is_true(z:eq(0):logical_or(z:eq(1)):all():item())
        -- gradients flow through the kept samples
        local w = tide.ones(8, 4, { requires_grad = true })
        drop_path(w, 0.5, true):sum():backward()
        assert_finite(w.grad)
    end)

    it("clip_mask_2d, drop_block_2d and drop_block_fast_2d, DropBlock2d", function()
        -- clip_mask_2d(5, 6, 3, 'cpu').int().tolist()
        assert.are.same({ { 0, 0, 0, 0, 0, 0 }, { 0, 1, 1, 1, 1, 0 }, { 0, 1, 1, 1, 1, 0 },
            { 0, 1, 1, 1, 1, 0 }, { 0, 0, 0, 0, 0, 0 } }, clip_mask_2d(5, 6, 3, "cpu"):int():tolist())
        tide.manual_seed(4)
        local x = tide.ones(2, 3, 8, 8)
        for _, fast in ipairs({ false, true }) do
            local m = DropBlock2d({ drop_prob = 0.2, block_size = 3, fast = fast })
            local y = m(x)
            -- dropped cells are 0, the rest share one scale numel / kept
            local kept = y:ne(0):sum():item()
            assert.is_true(kept > 0 and kept < x:numel())
            local scale = y:max():item()
            assert.is_true(math.abs(scale - x:numel() / kept) < 1e-4)
            assert.is_true(y:eq(0):logical_or(y:eq(scale)):all():item())
            m:eval()
            assert.are.equal(x, m(x))
        end
        -- with_noise, inplace, batchwise
        local x2 = tide.ones(2, 3, 8, 8)
        local y2 = drop_block_2d(x2, 0.3, 3, 1.0, true, true, true)
        assert.are.equal(x2, y2) -- inplace returns x
        assert_finite(y2)
        local y3 = drop_block_fast_2d(tide.ones(2, 3, 8, 8), 0.3, 3, 1.0, true, false)
        assert_finite(y3)
        -- a conv net with DropBlock2d trains
        tide.manual_seed(5)
        local net = nn.Sequential(nn.Conv2d(3, 4, 3, { padding = 1 }),
            DropBlock2d(0.1, 3), nn.ReLU(), nn.Conv2d(4, 2, 1))
        train(net, tide.randn(2, 3, 8, 8), 8)
    end)
end)

---------------------------------------------------------------------------------------------
-- models/vision_transformer.py's LayerScale, layers/patch_embed.py's PatchEmbed
---------------------------------------------------------------------------------------------
-- class LayerScale(nn.Module):
local LayerScale = nn.Module:extend("LayerScale")
nn.signature(LayerScale, "dim: int, init_values: float = 1e-5, inplace: bool = False")
function LayerScale:init(dim, init_values, inplace)
    self.inplace = inplace
    -- self.gamma = nn.Parameter(init_values * torch.ones(dim))
    self.gamma = nn.Parameter(init_values * tide.ones(dim))
end
function LayerScale:forward(x)
    -- return x.mul_(self.gamma) if self.inplace else x * self.gamma
    if self.inplace then return x:mul_(self.gamma) end
    return x * self.gamma
end

-- class PatchEmbed(nn.Module):
local PatchEmbed = nn.Module:extend("PatchEmbed")
nn.signature(PatchEmbed, "img_size = 224, patch_size: int = 16, in_chans: int = 3, " ..
    "embed_dim: int = 768, norm_layer = None, flatten: bool = True, output_fmt = None, " ..
    "bias: bool = True, strict_img_size: bool = True, dynamic_img_pad: bool = False")
function PatchEmbed:init(img_size, patch_size, in_chans, embed_dim, norm_layer, flatten,
                         output_fmt, bias, strict_img_size, dynamic_img_pad)
    self.patch_size = to_2tuple(patch_size)
    -- self.img_size, self.grid_size, self.num_patches = self._init_img_size(img_size)
    self.img_size, self.grid_size, self.num_patches = self:_init_img_size(img_size)

    -- (output_fmt: timm's Format enum, NCHW only here)
    assert(output_fmt == nil or output_fmt == "NCHW")
    if output_fmt ~= nil then
        self.flatten = false
    else
        -- flatten spatial dim and transpose to channels last, kept for bwd compat
        self.flatten = flatten
    end
    self.strict_img_size = strict_img_size
    self.dynamic_img_pad = dynamic_img_pad

    -- self.proj = nn.Conv2d(in_chans, embed_dim, kernel_size=patch_size, stride=patch_size, bias=bias)
    self.proj = nn.Conv2d(in_chans, embed_dim, { kernel_size = patch_size, stride = patch_size,
        bias = bias })
    -- self.norm = norm_layer(embed_dim) if norm_layer else nn.Identity()
    self.norm = norm_layer and norm_layer(embed_dim) or nn.Identity()
end
function PatchEmbed:_init_img_size(img_size)
    assert(self.patch_size)
    if img_size == nil then
        return nil, nil, nil
    end
    img_size = to_2tuple(img_size)
    -- grid_size = tuple([s // p for s, p in zip(img_size, self.patch_size)])
    local grid_size = {}
    for i = 1, 2 do grid_size[i] = math.floor(img_size[i] / self.patch_size[i]) end
    local num_patches = grid_size[1] * grid_size[2]
    return img_size, grid_size, num_patches
end
function PatchEmbed:dynamic_feat_size(img_size)
    if self.dynamic_img_pad then
        return math.ceil(img_size[1] / self.patch_size[1]), math.ceil(img_size[2] / self.patch_size[2])
    else
        return math.floor(img_size[1] / self.patch_size[1]), math.floor(img_size[2] / self.patch_size[2])
    end
end
function PatchEmbed:forward(x)
    -- B, C, H, W = x.shape
    local _, _, H, W = unpack(x.shape)
    if self.img_size ~= nil then
        if self.strict_img_size then
            -- _assert(H == self.img_size[0], f"Input height ({H}) doesn't match model ({self.img_size[0]}).")
            tide._assert(H == self.img_size[1], string.format(
                "Input height (%d) doesn't match model (%d).", H, self.img_size[1]))
            tide._assert(W == self.img_size[2], string.format(
                "Input width (%d) doesn't match model (%d).", W, self.img_size[2]))
        elseif not self.dynamic_img_pad then
            tide._assert(H % self.patch_size[1] == 0, string.format(
                "Input height (%d) should be divisible by patch size (%d).", H, self.patch_size[1]))
            tide._assert(W % self.patch_size[2] == 0, string.format(
                "Input width (%d) should be divisible by patch size (%d).", W, self.patch_size[2]))
        end
    end
    if self.dynamic_img_pad then
        local pad_h = (self.patch_size[1] - H % self.patch_size[1]) % self.patch_size[1]
        local pad_w = (self.patch_size[2] - W % self.patch_size[2]) % self.patch_size[2]
        -- x = F.pad(x, (0, pad_w, 0, pad_h))
        x = F.pad(x, { 0, pad_w, 0, pad_h })
    end
    x = self.proj(x)
    if self.flatten then
        -- x = x.flatten(2).transpose(1, 2)  # NCHW -> NLC
        x = x:flatten(3):transpose(2, 3)
    end
    x = self.norm(x)
    return x
end

describe("timm LayerScale and layers/patch_embed.py", function()
    it("LayerScale (inplace too) and PatchEmbed match PyTorch; strict size raises", function()
        local ls = LayerScale(4, { init_values = 0.5 })
        assert.are.same({ 0.5, 0.5, 0.5, 0.5 }, ls.gamma:tolist())
        local x = tide.ones(2, 4)
        assert.are.same({ 0.5, 0.5, 0.5, 0.5 }, ls(x)[1]:tolist())
        assert.are.same({ 1, 1, 1, 1 }, x[1]:tolist())
        local lsi = LayerScale(4, 0.5, true)
        local y = lsi(tide.ones(2, 4))
        assert.are.same({ 0.5, 0.5, 0.5, 0.5 }, y[2]:tolist())

        -- det(PatchEmbed(img_size=8, patch_size=4, in_chans=3, embed_dim=6, norm_layer=nn.LayerNorm))(inp(2,3,8,8))
        local pe = det(PatchEmbed({ img_size = 8, patch_size = 4, in_chans = 3, embed_dim = 6,
            norm_layer = nn.LayerNorm }))
        assert.are.same({ 2, 2 }, pe.grid_size)
        assert.are.equal(4, pe.num_patches)
        local out = pe(inp(2, 3, 8, 8))
        assert.are.same({ 2, 4, 6 }, out.shape)
        check(out, 12.78925, { 0.5522786, 0.1837267, 0.1245121, 0.2494815 }, 0.2867499)
        assert.has_error(function() pe(inp(2, 3, 8, 12)) end,
            "Input width (12) doesn't match model (8).")
        local dyn = det(PatchEmbed({ img_size = 8, patch_size = 4, in_chans = 3, embed_dim = 6,
            strict_img_size = false, dynamic_img_pad = true }))
        check(dyn(inp(2, 3, 7, 9)), 16.39268, { -0.4650887, 0.04414354, 0.7819648, 0.9574138 },
            0.2505535)
        assert.are.same({ 2, 3 }, { dyn:dynamic_feat_size({ 7, 9 }) })
        local nchw = det(PatchEmbed({ img_size = { 8, 12 }, patch_size = 4, in_chans = 3,
            embed_dim = 6, flatten = false }))
        local o2 = nchw(inp(1, 3, 8, 12))
        assert.are.same({ 1, 6, 2, 3 }, o2.shape)
        check(o2, 5.48567, { -2.082979, 1.2419, 4.305202, -2.342867 }, -1.671561)
        local free = PatchEmbed({ img_size = 8, patch_size = 4, in_chans = 3, embed_dim = 6,
            strict_img_size = false })
        assert.has_error(function() free(inp(1, 3, 8, 10)) end,
            "Input width (10) should be divisible by patch size (4).")
        tide.manual_seed(6)
        train(PatchEmbed({ img_size = 8, patch_size = 4, in_chans = 3, embed_dim = 6 }),
            tide.randn(2, 3, 8, 8))
    end)
end)

---------------------------------------------------------------------------------------------
-- models/vision_transformer.py's Attention and Block, layers/pos_embed.py
---------------------------------------------------------------------------------------------
-- class Attention(nn.Module):
--     fused_attn: Final[bool]
local Attention = nn.Module:extend("Attention")
-- (fused: timm's use_fused_attn(), a config switch, as an argument here)
nn.signature(Attention, "dim: int, num_heads: int = 8, qkv_bias: bool = False, " ..
    "qk_norm: bool = False, proj_bias: bool = True, attn_drop: float = 0., " ..
    "proj_drop: float = 0., norm_layer = nn.LayerNorm, fused = True")
function Attention:init(dim, num_heads, qkv_bias, qk_norm, proj_bias, attn_drop, proj_drop,
                        norm_layer, fused)
    -- assert dim % num_heads == 0, 'dim should be divisible by num_heads'
    assert(dim % num_heads == 0, "dim should be divisible by num_heads")
    self.num_heads = num_heads
    -- self.head_dim = dim // num_heads
    self.head_dim = math.floor(dim / num_heads)
    -- self.scale = self.head_dim ** -0.5
    self.scale = self.head_dim ^ -0.5
    -- self.fused_attn = use_fused_attn()
    self.fused_attn = fused

    self.qkv = nn.Linear(dim, dim * 3, { bias = qkv_bias })
    -- self.q_norm = norm_layer(self.head_dim) if qk_norm else nn.Identity()
    self.q_norm = qk_norm and norm_layer(self.head_dim) or nn.Identity()
    self.k_norm = qk_norm and norm_layer(self.head_dim) or nn.Identity()
    self.attn_drop = nn.Dropout(attn_drop)
    self.proj = nn.Linear(dim, dim, { bias = proj_bias })
    self.proj_drop = nn.Dropout(proj_drop)
end
function Attention:forward(x)
    -- B, N, C = x.shape
    local B, N, C = unpack(x.shape)
    -- qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4)
    local qkv = self.qkv(x):reshape(B, N, 3, self.num_heads, self.head_dim):permute(3, 1, 4, 2, 5)
    -- q, k, v = qkv.unbind(0)
    local q, k, v = unpack(qkv:unbind(1))
    -- q, k = self.q_norm(q), self.k_norm(k)
    q, k = self.q_norm(q), self.k_norm(k)

    if self.fused_attn then
        -- x = F.scaled_dot_product_attention(q, k, v, dropout_p=self.attn_drop.p if self.training else 0.)
        x = F.scaled_dot_product_attention(q, k, v,
            { dropout_p = self.training and self.attn_drop.p or 0. })
    else
        q = q * self.scale
        -- attn = q @ k.transpose(-2, -1)
        local attn = q:matmul(k:transpose(-2, -1))
        -- attn = attn.softmax(dim=-1)
        attn = attn:softmax({ dim = -1 })
        attn = self.attn_drop(attn)
        -- x = attn @ v
        x = attn:matmul(v)
    end
    -- x = x.transpose(1, 2).reshape(B, N, C)
    x = x:transpose(2, 3):reshape(B, N, C)
    x = self.proj(x)
    x = self.proj_drop(x)
    return x
end

-- class Block(nn.Module):
local Block = nn.Module:extend("Block")
nn.signature(Block, "dim: int, num_heads: int, mlp_ratio: float = 4., qkv_bias: bool = False, " ..
    "qk_norm: bool = False, proj_drop: float = 0., attn_drop: float = 0., init_values = None, " ..
    "drop_path: float = 0., act_layer = nn.GELU, norm_layer = nn.LayerNorm, mlp_layer = Mlp, " ..
    "fused = False")
function Block:init(dim, num_heads, mlp_ratio, qkv_bias, qk_norm, proj_drop, attn_drop,
                    init_values, drop_path_, act_layer, norm_layer, mlp_layer, fused)
    self.norm1 = norm_layer(dim)
    -- self.attn = Attention(dim, num_heads=num_heads, qkv_bias=qkv_bias, qk_norm=qk_norm,
    --     attn_drop=attn_drop, proj_drop=proj_drop, norm_layer=norm_layer)
    self.attn = Attention(dim, { num_heads = num_heads, qkv_bias = qkv_bias, qk_norm = qk_norm,
        attn_drop = attn_drop, proj_drop = proj_drop, norm_layer = norm_layer, fused = fused })
    -- self.ls1 = LayerScale(dim, init_values=init_values) if init_values else nn.Identity()
    self.ls1 = init_values and LayerScale(dim, { init_values = init_values }) or nn.Identity()
    -- self.drop_path1 = DropPath(drop_path) if drop_path > 0. else nn.Identity()
    self.drop_path1 = drop_path_ > 0. and DropPath(drop_path_) or nn.Identity()

    self.norm2 = norm_layer(dim)
    -- self.mlp = mlp_layer(in_features=dim, hidden_features=int(dim * mlp_ratio), act_layer=act_layer, drop=proj_drop)
    self.mlp = mlp_layer({ in_features = dim, hidden_features = math.floor(dim * mlp_ratio),
        act_layer = act_layer, drop = proj_drop })
    self.ls2 = init_values and LayerScale(dim, { init_values = init_values }) or nn.Identity()
    self.drop_path2 = drop_path_ > 0. and DropPath(drop_path_) or nn.Identity()
end
function Block:forward(x)
    x = x + self.drop_path1(self.ls1(self.attn(self.norm1(x))))
    x = x + self.drop_path2(self.ls2(self.mlp(self.norm2(x))))
    return x
end

-- def resample_abs_pos_embed(posemb, new_size, old_size=None, num_prefix_tokens=1,
--         interpolation='bicubic', antialias=True, verbose=False):
local function resample_abs_pos_embed(posemb, new_size, old_size, num_prefix_tokens,
                                      interpolation, antialias)
    if num_prefix_tokens == nil then num_prefix_tokens = 1 end
    interpolation = interpolation or "bicubic"
    if antialias == nil then antialias = true end
    -- sort out sizes, assume square if old size not provided
    local num_pos_tokens = posemb.shape[2]
    local num_new_tokens = new_size[1] * new_size[2] + num_prefix_tokens
    if num_new_tokens == num_pos_tokens and new_size[1] == new_size[2] then
        return posemb
    end
    if old_size == nil then
        -- hw = int(math.sqrt(num_pos_tokens - num_prefix_tokens))
        local hw = math.floor(math.sqrt(num_pos_tokens - num_prefix_tokens))
        old_size = { hw, hw }
    end
    local posemb_prefix
    if num_prefix_tokens > 0 then
        -- posemb_prefix, posemb = posemb[:, :num_prefix_tokens], posemb[:, num_prefix_tokens:]
        posemb_prefix, posemb = posemb[{ {}, { 1, num_prefix_tokens } }],
            posemb[{ {}, { num_prefix_tokens + 1, -1 } }]
    end
    -- do the interpolation
    local embed_dim = posemb.shape[#posemb.shape]
    local orig_dtype = posemb.dtype
    posemb = posemb:float() -- interpolate needs float32
    -- posemb = posemb.reshape(1, old_size[0], old_size[1], -1).permute(0, 3, 1, 2)
    posemb = posemb:reshape(1, old_size[1], old_size[2], -1):permute(1, 4, 2, 3)
    -- posemb = F.interpolate(posemb, size=new_size, mode=interpolation, antialias=antialias)
    posemb = F.interpolate(posemb, { size = new_size, mode = interpolation, antialias = antialias })
    -- posemb = posemb.permute(0, 2, 3, 1).reshape(1, -1, embed_dim)
    posemb = posemb:permute(1, 3, 4, 2):reshape(1, -1, embed_dim)
    posemb = posemb:to(orig_dtype)
    -- add back extra (class, etc) prefix tokens
    if posemb_prefix ~= nil then
        -- posemb = torch.cat([posemb_prefix, posemb], dim=1)
        posemb = tide.cat({ posemb_prefix, posemb }, { dim = 2 })
    end
    return posemb
end

describe("timm vision_transformer.py Attention / Block, pos_embed.py", function()
    it("Attention (qk_norm, manual and fused via F.scaled_dot_product_attention) matches PyTorch", function()
        -- det(Attention(16, num_heads=4, qkv_bias=True, qk_norm=True, fused=False))(inp(2,5,16))
        local manual = det(Attention(16, { num_heads = 4, qkv_bias = true, qk_norm = true,
            fused = false }))
        local y = manual(inp(2, 5, 16))
        check(y, 1.518988, { -0.1318549, -0.5185803, -0.8373201, -1.045997 }, -0.3120222)
        local fused = det(Attention(16, { num_heads = 4, qkv_bias = true, qk_norm = true }))
        assert.is_true(fused.fused_attn)
        assert.is_true((fused(inp(2, 5, 16)) - y):abs():max():item() < 1e-5)
        tide.manual_seed(7)
        train(Attention(16, { num_heads = 4, attn_drop = 0.1 }), tide.randn(2, 5, 16))
    end)

    it("Block (LayerScale, DropPath, mlp_layer) matches PyTorch and trains", function()
        -- det(Block(16, 4, qkv_bias=True, init_values=1e-1))(inp(2,5,16))
        local b = det(Block(16, 4, { qkv_bias = true, init_values = 1e-1 }))
        assert.are.equal(64, b.mlp.fc1.out_features)
        check(b(inp(2, 5, 16)), -30.06831, { -0.3783022, -0.4984163, 0.2055008, 0.9165087 },
            0.02559531)
        tide.manual_seed(8)
        local b2 = Block(16, 4, { drop_path = 0.1, mlp_layer = SwiGLU, fused = true })
        assert.are.equal("DropPath", b2.drop_path1.__class__.__name__)
        train(b2, tide.randn(4, 5, 16))
    end)

    it("resample_abs_pos_embed: bicubic F.interpolate with antialias=True as PyTorch's", function()
        local posemb = inp(1, 1 + 9, 6)
        local out = resample_abs_pos_embed(posemb, { 4, 5 })
        assert.are.same({ 1, 21, 6 }, out.shape)
        check(out, 14.28827, { 0, 0.1296341, 0.2570806, 0.3801884 }, 1.10918)
        assert.are.equal(posemb, resample_abs_pos_embed(posemb, { 3, 3 }))
        -- F.interpolate(x, size=..., antialias=True), x = torch.arange(12.).reshape(1,1,3,4).sin()
        local x = tide.arange(12.):reshape(1, 1, 3, 4):sin()
        local function near(t, want)
            t = t:flatten()
            for i, v in ipairs(want) do
                assert.is_true(math.abs(t[i]:item() - v) < 1e-6, i .. ": " .. t[i]:item() .. " vs " .. v)
            end
        end
        near(F.interpolate(x, { size = { 5, 6 }, mode = "bicubic", antialias = true }),
            { -0.003424336202442646, 0.4888935685157776, 1.0435914993286133, 1.0589542388916016,
                0.5254961252212524, 0.04318496584892273 })
        near(F.interpolate(x, { size = { 2, 3 }, mode = "bilinear", antialias = true }),
            { -0.14876385033130646, 0.314926415681839, 0.3732580244541168, 0.20357678830623627,
                -0.27340829372406006, -0.39847493171691895 })
        near(F.interpolate(x, { size = { 2, 2 }, mode = "bicubic", antialias = true,
            align_corners = true }),
            { 0.024637384340167046, 0.26313072443008423, -0.031706444919109344, -0.7697233557701111 })
        near(F.interpolate(x, { size = { 2, 2 }, mode = "bicubic", antialias = true }),
            { -0.03588484227657318, 0.44038355350494385, 0.05048933997750282, -0.4418773353099823 })
        near(F.interpolate(x, { scale_factor = 0.5, mode = "bilinear", antialias = true }),
            { -0.04731116443872452, 0.16897186636924744 })
        -- differentiable, as the other modes
        local xg = x:clone():requires_grad_()
        F.interpolate(xg, { size = { 2, 2 }, mode = "bicubic", antialias = true }):sum():backward()
        assert_finite(xg.grad)
        -- PyTorch: "Anti-alias option is only supported for bilinear and bicubic modes"
        assert.has_error(function()
            F.interpolate(x, { size = { 2, 2 }, mode = "nearest", antialias = true })
        end, "tide: interpolate: antialias is for the modes \"bilinear\" and \"bicubic\" " ..
            "(as PyTorch's), not \"nearest\"; leave it out")
        -- a trained pos_embed resampled to a new grid keeps its gradient path
        local pos_embed = nn.Parameter(tide.randn(1, 1 + 4, 6) * .02)
        local r = resample_abs_pos_embed(pos_embed, { 3, 3 })
        r:sum():backward()
        assert_finite(pos_embed.grad)
    end)
end)

---------------------------------------------------------------------------------------------
-- layers/weight_init.py
---------------------------------------------------------------------------------------------
-- from torch.nn.init import _calculate_fan_in_and_fan_out
local _calculate_fan_in_and_fan_out = nn.init._calculate_fan_in_and_fan_out

-- def _trunc_normal_(tensor, mean, std, a, b):
local function _trunc_normal_(tensor, mean, std, a, b)
    -- def norm_cdf(x): return (1. + math.erf(x / math.sqrt(2.))) / 2.
    -- (Lua's math has no erf: tide.erf of a 0-d tensor)
    local function norm_cdf(x)
        return (1. + tide.erf(tide.tensor(x / math.sqrt(2.), { dtype = "float64" })):item()) / 2.
    end
    local l = norm_cdf((a - mean) / std)
    local u = norm_cdf((b - mean) / std)
    tensor:uniform_(2 * l - 1, 2 * u - 1)
    tensor:erfinv_()
    tensor:mul_(std * math.sqrt(2.))
    tensor:add_(mean)
    -- tensor.clamp_(min=a, max=b)
    tensor:clamp_({ min = a, max = b })
    return tensor
end

-- def trunc_normal_(tensor, mean=0., std=1., a=-2., b=2.):
local function trunc_normal_(tensor, o)
    o = o or {}
    -- with torch.no_grad():
    return tide.no_grad(function()
        return _trunc_normal_(tensor, o.mean or 0., o.std or 1., o.a or -2., o.b or 2.)
    end)
end

-- def trunc_normal_tf_(tensor, mean=0., std=1., a=-2., b=2.):
local function trunc_normal_tf_(tensor, o)
    o = o or {}
    tide.no_grad(function()
        _trunc_normal_(tensor, 0, 1.0, o.a or -2., o.b or 2.)
        tensor:mul_(o.std or 1.):add_(o.mean or 0.)
    end)
    return tensor
end

-- def variance_scaling_(tensor, scale=1.0, mode='fan_in', distribution='normal'):
local function variance_scaling_(tensor, o)
    o = o or {}
    local scale, mode, distribution = o.scale or 1.0, o.mode or "fan_in", o.distribution or "normal"
    -- fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    local fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    local denom
    if mode == "fan_in" then
        denom = fan_in
    elseif mode == "fan_out" then
        denom = fan_out
    elseif mode == "fan_avg" then
        denom = (fan_in + fan_out) / 2
    end
    local variance = scale / denom
    if distribution == "truncated_normal" then
        -- constant is stddev of standard normal truncated to (-2, 2)
        trunc_normal_tf_(tensor, { std = math.sqrt(variance) / .87962566103423978 })
    elseif distribution == "normal" then
        tide.no_grad(function()
            -- tensor.normal_(std=math.sqrt(variance))
            tensor:normal_({ std = math.sqrt(variance) })
        end)
    elseif distribution == "uniform" then
        local bound = math.sqrt(3 * variance)
        tide.no_grad(function()
            tensor:uniform_(-bound, bound)
        end)
    else
        -- raise ValueError(f"invalid distribution {distribution}")
        error("invalid distribution " .. tostring(distribution))
    end
end

-- def lecun_normal_(tensor):
local function lecun_normal_(tensor)
    variance_scaling_(tensor, { mode = "fan_in", distribution = "truncated_normal" })
end

describe("timm layers/weight_init.py", function()
    it("nn.init._calculate_fan_in_and_fan_out / _calculate_correct_fan as PyTorch's", function()
        -- _calculate_fan_in_and_fan_out(torch.empty(4,3,2,2)) == (12, 16); (5, 7) -> (7, 5)
        assert.are.same({ 12, 16 }, { _calculate_fan_in_and_fan_out(tide.empty(4, 3, 2, 2)) })
        assert.are.same({ 7, 5 }, { _calculate_fan_in_and_fan_out(tide.empty(5, 7)) })
        assert.are.equal(16, nn.init._calculate_correct_fan(tide.empty(4, 3, 2, 2), "fan_out"))
        assert.has_error(function() _calculate_fan_in_and_fan_out(tide.empty(3)) end,
            "tide: nn.init._calculate_fan_in_and_fan_out: fan in and fan out cannot be " ..
            "computed for a tensor with fewer than 2 dimensions (shape {3})")
        assert.has_error(function() _calculate_fan_in_and_fan_out({ 4, 3 }) end,
            "tide: nn.init._calculate_fan_in_and_fan_out: expected a tensor, got table")
        assert.has_error(function() nn.init._calculate_correct_fan(tide.empty(4, 3), "fan_avg") end,
            'tide: nn.init._calculate_correct_fan: mode fan_avg is not supported; use "fan_in" ' ..
            'or "fan_out"')
    end)

    it("trunc_normal_, trunc_normal_tf_, variance_scaling_, lecun_normal_ by their statistics", function()
        tide.manual_seed(9)
        local w = tide.empty(200, 100)
        trunc_normal_(w, { std = .02 })
        -- within [a, b] = [-2, 2] and std ~ 0.02 (the truncation at 100 sigma changes nothing)
        assert.is_true(math.abs(w:std():item() - 0.02) < 0.001)
        assert.is_true(math.abs(w:mean():item()) < 0.001)
        trunc_normal_(w, { mean = 0., std = 1., a = -1., b = 1. })
        assert.is_true(w:min():item() >= -1 and w:max():item() <= 1)
        -- std of N(0, 1) truncated to (-1, 1): 0.5376
        assert.is_true(math.abs(w:std():item() - 0.5376) < 0.02)
        trunc_normal_tf_(w, { mean = 1., std = 0.5 })
        assert.is_true(w:min():item() >= 0 and w:max():item() <= 2)
        assert.is_true(math.abs(w:std():item() - 0.5 * 0.8796) < 0.02)
        -- lecun_normal_: std sqrt(1 / fan_in) after truncation
        local c = tide.empty(64, 32, 3, 3)
        lecun_normal_(c)
        assert.is_true(math.abs(c:std():item() - math.sqrt(1 / (32 * 9))) < 0.003)
        variance_scaling_(c, { scale = 2.0, mode = "fan_out", distribution = "uniform" })
        local bound = math.sqrt(3 * 2.0 / (64 * 9))
        assert.is_true(c:abs():max():item() <= bound)
        variance_scaling_(c, { mode = "fan_avg" })
        assert.is_true(math.abs(c:std():item() - math.sqrt(1 / ((32 * 9 + 64 * 9) / 2))) < 0.003)
        assert.has_error(function() variance_scaling_(c, { distribution = "cauchy" }) end)
        -- on a module's parameters that require grad (timm's _init_weights)
        local lin = nn.Linear(16, 8)
        trunc_normal_(lin.weight, { std = .02 })
        lecun_normal_(lin.weight)
        assert.is_true(lin.weight.requires_grad)
    end)
end)
