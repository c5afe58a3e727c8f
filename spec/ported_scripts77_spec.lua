-- ported_scripts77_spec.lua — facebookresearch/ConvNeXt-V2's models/convnextv2.py (Block with GRN,
-- ConvNeXtV2 with its downsample_layers / stages ModuleLists, _init_weights, head_init_scale) and
-- models/utils.py (LayerNorm with data_format "channels_first", GRN), timm's trunc_normal_ and
-- DropPath written out; facebookresearch/dinov2's dinov2/layers (layer_scale.py, swiglu_ffn.py,
-- mlp.py, patch_embed.py, attention.py as of 81b2b64 (qkv permute, scale, softmax; MemEffAttention
-- without xformers), block.py (Block, drop_add_residual_stochastic_depth), dino_head.py), ported
-- line for line at tiny sizes. The Python line stands above each Lua line that differs from it.
-- Dims and indices are 1-based. Weights for the value checks come from a formula over each
-- parameter's index in named_parameters order (fill below), the same in the PyTorch 1.13 script
-- that gave the reference values.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

---------------------------------------------------------------------------------------------
-- timm.models.layers: trunc_normal_ and DropPath, written out
---------------------------------------------------------------------------------------------
local function erf(x)
    return tide.tensor(x, { dtype = "float64" }):erf():item()
end

-- def _trunc_normal_(tensor, mean, std, a, b):
local function _trunc_normal_(tensor, mean, std, a, b)
    -- def norm_cdf(x): return (1. + math.erf(x / math.sqrt(2.))) / 2.
    local function norm_cdf(x) return (1 + erf(x / math.sqrt(2))) / 2 end
    local l = norm_cdf((a - mean) / std)
    local u = norm_cdf((b - mean) / std)
    tensor:uniform_(2 * l - 1, 2 * u - 1)
    tensor:erfinv_()
    tensor:mul_(std * math.sqrt(2))
    tensor:add_(mean)
    -- tensor.clamp_(min=a, max=b)
    tensor:clamp_(a, b)
    return tensor
end

-- def trunc_normal_(tensor, mean=0., std=1., a=-2., b=2.):
local function trunc_normal_(tensor, opts)
    opts = opts or {}
    -- with torch.no_grad():
    return tide.no_grad(function()
        return _trunc_normal_(tensor, opts.mean or 0, opts.std or 1, opts.a or -2, opts.b or 2)
    end)
end

-- def drop_path(x, drop_prob: float = 0., training: bool = False, scale_by_keep: bool = True):
local function drop_path(x, drop_prob, training, scale_by_keep)
    if drop_prob == 0 or not training then
        return x
    end
    local keep_prob = 1 - drop_prob
    -- shape = (x.shape[0],) + (1,) * (x.ndim - 1)
    local shape = { x.shape[1] }
    for _ = 1, x.ndim - 1 do shape[#shape + 1] = 1 end
    local random_tensor = x:new_empty(shape):bernoulli_(keep_prob)
    if keep_prob > 0 and scale_by_keep then
        random_tensor:div_(keep_prob)
    end
    return x * random_tensor
end

-- class DropPath(nn.Module):
local DropPath = nn.Module:extend("DropPath")
function DropPath:init(drop_prob, scale_by_keep)
    self.drop_prob = drop_prob or 0
    -- self.scale_by_keep = scale_by_keep  (default True)
    self.scale_by_keep = scale_by_keep ~= false
end
function DropPath:forward(x)
    return drop_path(x, self.drop_prob, self.training, self.scale_by_keep)
end

---------------------------------------------------------------------------------------------
-- 1. ConvNeXt-V2 models/utils.py and models/convnextv2.py
---------------------------------------------------------------------------------------------
-- class LayerNorm(nn.Module):
local LayerNorm = nn.Module:extend("LayerNorm")
-- def __init__(self, normalized_shape, eps=1e-6, data_format="channels_last"):
function LayerNorm:init(normalized_shape, opts)
    opts = opts or {}
    self.weight = nn.Parameter(tide.ones(normalized_shape))
    self.bias = nn.Parameter(tide.zeros(normalized_shape))
    self.eps = opts.eps or 1e-6
    self.data_format = opts.data_format or "channels_last"
    if self.data_format ~= "channels_last" and self.data_format ~= "channels_first" then
        -- raise NotImplementedError
        error("NotImplementedError")
    end
    -- self.normalized_shape = (normalized_shape, )
    self.normalized_shape = { normalized_shape }
end
function LayerNorm:forward(x)
    if self.data_format == "channels_last" then
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
    elseif self.data_format == "channels_first" then
        -- u = x.mean(1, keepdim=True)
        local u = x:mean(2, { keepdim = true })
        -- s = (x - u).pow(2).mean(1, keepdim=True)
        local s = (x - u):pow(2):mean(2, { keepdim = true })
        -- x = (x - u) / torch.sqrt(s + self.eps)
        x = (x - u) / tide.sqrt(s + self.eps)
        -- x = self.weight[:, None, None] * x + self.bias[:, None, None]
        x = self.weight[{ {}, tide.newaxis, tide.newaxis }] * x
            + self.bias[{ {}, tide.newaxis, tide.newaxis }]
        return x
    end
end

-- class GRN(nn.Module):
local GRN = nn.Module:extend("GRN")
function GRN:init(dim)
    self.gamma = nn.Parameter(tide.zeros(1, 1, 1, dim))
    self.beta = nn.Parameter(tide.zeros(1, 1, 1, dim))
end
function GRN:forward(x)
    -- Gx = torch.norm(x, p=2, dim=(1,2), keepdim=True)
    local Gx = tide.norm(x, { p = 2, dim = { 2, 3 }, keepdim = true })
    -- Nx = Gx / (Gx.mean(dim=-1, keepdim=True) + 1e-6)
    local Nx = Gx / (Gx:mean({ dim = -1, keepdim = true }) + 1e-6)
    return self.gamma * (x * Nx) + self.beta + x
end

-- class Block(nn.Module):
local Block = nn.Module:extend("Block")
-- def __init__(self, dim, drop_path=0.):
function Block:init(dim, drop_path_)
    drop_path_ = drop_path_ or 0
    -- self.dwconv = nn.Conv2d(dim, dim, kernel_size=7, padding=3, groups=dim) # depthwise conv
    self.dwconv = nn.Conv2d(dim, dim, { kernel_size = 7, padding = 3, groups = dim })
    -- self.norm = LayerNorm(dim, eps=1e-6)
    self.norm = LayerNorm(dim, { eps = 1e-6 })
    self.pwconv1 = nn.Linear(dim, 4 * dim) -- pointwise/1x1 convs, implemented with linear layers
    self.act = nn.GELU()
    self.grn = GRN(4 * dim)
    self.pwconv2 = nn.Linear(4 * dim, dim)
    -- self.drop_path = DropPath(drop_path) if drop_path > 0. else nn.Identity()
    self.drop_path = drop_path_ > 0 and DropPath(drop_path_) or nn.Identity()
end
function Block:forward(x)
    local input = x
    x = self.dwconv(x)
    -- x = x.permute(0, 2, 3, 1) # (N, C, H, W) -> (N, H, W, C)
    x = x:permute(1, 3, 4, 2)
    x = self.norm(x)
    x = self.pwconv1(x)
    x = self.act(x)
    x = self.grn(x)
    x = self.pwconv2(x)
    -- x = x.permute(0, 3, 1, 2) # (N, H, W, C) -> (N, C, H, W)
    x = x:permute(1, 4, 2, 3)
    x = input + self.drop_path(x)
    return x
end

-- class ConvNeXtV2(nn.Module):
local ConvNeXtV2 = nn.Module:extend("ConvNeXtV2")
-- def __init__(self, in_chans=3, num_classes=1000, depths=[3, 3, 9, 3],
--              dims=[96, 192, 384, 768], drop_path_rate=0., head_init_scale=1.):
function ConvNeXtV2:init(opts)
    opts = opts or {}
    local in_chans, num_classes = opts.in_chans or 3, opts.num_classes or 1000
    local depths, dims = opts.depths or { 3, 3, 9, 3 }, opts.dims or { 96, 192, 384, 768 }
    local drop_path_rate, head_init_scale = opts.drop_path_rate or 0, opts.head_init_scale or 1
    self.depths = depths
    self.downsample_layers = nn.ModuleList() -- stem and 3 intermediate downsampling conv layers
    local stem = nn.Sequential(
        nn.Conv2d(in_chans, dims[1], { kernel_size = 4, stride = 4 }),
        LayerNorm(dims[1], { eps = 1e-6, data_format = "channels_first" })
    )
    self.downsample_layers:append(stem)
    -- for i in range(3):
    for i = 1, 3 do
        local downsample_layer = nn.Sequential(
            LayerNorm(dims[i], { eps = 1e-6, data_format = "channels_first" }),
            nn.Conv2d(dims[i], dims[i + 1], { kernel_size = 2, stride = 2 })
        )
        self.downsample_layers:append(downsample_layer)
    end
    self.stages = nn.ModuleList() -- 4 feature resolution stages, each of residual blocks
    -- dp_rates=[x.item() for x in torch.linspace(0, drop_path_rate, sum(depths))]
    local dp_rates = {}
    local total = depths[1] + depths[2] + depths[3] + depths[4]
    for _, x in ipairs(tide.linspace(0, drop_path_rate, total):unbind()) do
        dp_rates[#dp_rates + 1] = x:item()
    end
    -- cur = 0
    local cur = 1
    for i = 1, 4 do
        -- stage = nn.Sequential(*[Block(dim=dims[i], drop_path=dp_rates[cur + j])
        --                        for j in range(depths[i])])
        local blocks = {}
        for j = 0, depths[i] - 1 do blocks[#blocks + 1] = Block(dims[i], dp_rates[cur + j]) end
        local stage = nn.Sequential(unpack(blocks))
        self.stages:append(stage)
        cur = cur + depths[i]
    end
    -- self.norm = nn.LayerNorm(dims[-1], eps=1e-6) # final norm layer
    self.norm = nn.LayerNorm(dims[#dims], { eps = 1e-6 })
    self.head = nn.Linear(dims[#dims], num_classes)

    -- self.apply(self._init_weights)
    self:apply(function(m) self:_init_weights(m) end)
    self.head.weight.data:mul_(head_init_scale)
    self.head.bias.data:mul_(head_init_scale)
end
function ConvNeXtV2:_init_weights(m)
    -- if isinstance(m, (nn.Conv2d, nn.Linear)):
    if tide.isinstance(m, { nn.Conv2d, nn.Linear }) then
        -- trunc_normal_(m.weight, std=.02)
        trunc_normal_(m.weight, { std = .02 })
        nn.init.constant_(m.bias, 0)
    end
end
function ConvNeXtV2:forward_features(x)
    -- for i in range(4):
    for i = 1, 4 do
        x = self.downsample_layers[i](x)
        x = self.stages[i](x)
    end
    -- return self.norm(x.mean([-2, -1])) # global average pooling, (N, C, H, W) -> (N, C)
    return self.norm(x:mean({ -2, -1 }))
end
function ConvNeXtV2:forward(x)
    x = self:forward_features(x)
    x = self.head(x)
    return x
end

---------------------------------------------------------------------------------------------
-- 2. dinov2/layers
---------------------------------------------------------------------------------------------
-- class LayerScale(nn.Module):  (layer_scale.py)
local LayerScale = nn.Module:extend("LayerScale")
-- def __init__(self, dim, init_values=1e-5, inplace=False, device=None, dtype=None):
function LayerScale:init(dim, opts)
    opts = opts or {}
    self.inplace = opts.inplace or false
    self.init_values = opts.init_values or 1e-5
    -- self.gamma = nn.Parameter(torch.empty(dim, device=device, dtype=dtype))
    self.gamma = nn.Parameter(tide.empty(dim, { device = opts.device, dtype = opts.dtype }))
    self:reset_parameters()
end
function LayerScale:reset_parameters()
    nn.init.constant_(self.gamma, self.init_values)
end
function LayerScale:forward(x)
    -- return x.mul_(self.gamma) if self.inplace else x * self.gamma
    if self.inplace then return x:mul_(self.gamma) end
    return x * self.gamma
end

-- class SwiGLUFFN(nn.Module):  (swiglu_ffn.py)
local SwiGLUFFN = nn.Module:extend("SwiGLUFFN")
-- def __init__(self, in_features, hidden_features=None, out_features=None, act_layer=None,
--              drop=0.0, bias=True):
function SwiGLUFFN:init(opts)
    local bias = opts.bias ~= false
    local out_features = opts.out_features or opts.in_features
    local hidden_features = opts.hidden_features or opts.in_features
    -- self.w12 = nn.Linear(in_features, 2 * hidden_features, bias=bias)
    self.w12 = nn.Linear(opts.in_features, 2 * hidden_features, { bias = bias })
    self.w3 = nn.Linear(hidden_features, out_features, { bias = bias })
end
function SwiGLUFFN:forward(x)
    local x12 = self.w12(x)
    -- x1, x2 = x12.chunk(2, dim=-1)
    local x1, x2 = unpack(x12:chunk(2, -1))
    local hidden = F.silu(x1) * x2
    return self.w3(hidden)
end
-- without xformers: SwiGLU = SwiGLUFFN
local SwiGLU = SwiGLUFFN

-- class SwiGLUFFNFused(SwiGLU):
local SwiGLUFFNFused = SwiGLU:extend("SwiGLUFFNFused")
function SwiGLUFFNFused:init(opts)
    local out_features = opts.out_features or opts.in_features
    local hidden_features = opts.hidden_features or opts.in_features
    -- hidden_features = (int(hidden_features * 2 / 3) + 7) // 8 * 8
    hidden_features = math.floor((math.floor(hidden_features * 2 / 3) + 7) / 8) * 8
    -- super().__init__(in_features=in_features, hidden_features=hidden_features, ...)
    SwiGLU.init(self, { in_features = opts.in_features, hidden_features = hidden_features,
        out_features = out_features, bias = opts.bias })
end

-- class Mlp(nn.Module):  (mlp.py)
local Mlp = nn.Module:extend("Mlp")
-- def __init__(self, in_features, hidden_features=None, out_features=None,
--              act_layer=nn.GELU, drop=0.0, bias=True):
function Mlp:init(opts)
    local out_features = opts.out_features or opts.in_features
    local hidden_features = opts.hidden_features or opts.in_features
    local bias = opts.bias ~= false
    self.fc1 = nn.Linear(opts.in_features, hidden_features, { bias = bias })
    self.act = (opts.act_layer or nn.GELU)()
    self.fc2 = nn.Linear(hidden_features, out_features, { bias = bias })
    self.drop = nn.Dropout(opts.drop or 0)
end
function Mlp:forward(x)
    x = self.fc1(x)
    x = self.act(x)
    x = self.drop(x)
    x = self.fc2(x)
    x = self.drop(x)
    return x
end

-- def make_2tuple(x):  (patch_embed.py)
local function make_2tuple(x)
    -- if isinstance(x, tuple): assert len(x) == 2; return x
    if type(x) == "table" then
        assert(#x == 2)
        return x
    end
    -- assert isinstance(x, int)
    assert(type(x) == "number" and x % 1 == 0)
    return { x, x }
end

-- class PatchEmbed(nn.Module):
local PatchEmbed = nn.Module:extend("PatchEmbed")
-- def __init__(self, img_size=224, patch_size=16, in_chans=3, embed_dim=768, norm_layer=None,
--              flatten_embedding=True):
function PatchEmbed:init(opts)
    opts = opts or {}
    local image_HW = make_2tuple(opts.img_size or 224)
    local patch_HW = make_2tuple(opts.patch_size or 16)
    -- patch_grid_size = (image_HW[0] // patch_HW[0], image_HW[1] // patch_HW[1])
    local patch_grid_size = { math.floor(image_HW[1] / patch_HW[1]),
        math.floor(image_HW[2] / patch_HW[2]) }
    self.img_size = image_HW
    self.patch_size = patch_HW
    self.patches_resolution = patch_grid_size
    self.num_patches = patch_grid_size[1] * patch_grid_size[2]
    self.in_chans = opts.in_chans or 3
    self.embed_dim = opts.embed_dim or 768
    self.flatten_embedding = opts.flatten_embedding ~= false
    -- self.proj = nn.Conv2d(in_chans, embed_dim, kernel_size=patch_HW, stride=patch_HW)
    self.proj = nn.Conv2d(self.in_chans, self.embed_dim, { kernel_size = patch_HW,
        stride = patch_HW })
    -- self.norm = norm_layer(embed_dim) if norm_layer else nn.Identity()
    self.norm = opts.norm_layer and opts.norm_layer(self.embed_dim) or nn.Identity()
end
function PatchEmbed:forward(x)
    -- _, _, H, W = x.shape
    local _, _, H, W = unpack(x.shape)
    -- patch_H, patch_W = self.patch_size
    local patch_H, patch_W = unpack(self.patch_size)
    -- assert H % patch_H == 0, f"Input image height {H} is not a multiple of patch height ..."
    assert(H % patch_H == 0, string.format(
        "Input image height %d is not a multiple of patch height %d", H, patch_H))
    assert(W % patch_W == 0, string.format(
        "Input image width %d is not a multiple of patch width: %d", W, patch_W))
    x = self.proj(x) -- B C H W
    -- H, W = x.size(2), x.size(3)
    H, W = x:size(3), x:size(4)
    -- x = x.flatten(2).transpose(1, 2)  # B HW C
    x = x:flatten(3):transpose(2, 3)
    x = self.norm(x)
    if not self.flatten_embedding then
        x = x:reshape(-1, H, W, self.embed_dim) -- B H W C
    end
    return x
end
function PatchEmbed:flops()
    local Ho, Wo = unpack(self.patches_resolution)
    local flops = Ho * Wo * self.embed_dim * self.in_chans * (self.patch_size[1]
        * self.patch_size[2])
    if self.norm ~= nil then
        flops = flops + Ho * Wo * self.embed_dim
    end
    return flops
end

-- class Attention(nn.Module):  (attention.py)
local Attention = nn.Module:extend("Attention")
-- def __init__(self, dim, num_heads=8, qkv_bias=False, proj_bias=True, attn_drop=0.0,
--              proj_drop=0.0):
function Attention:init(dim, opts)
    opts = opts or {}
    self.num_heads = opts.num_heads or 8
    -- head_dim = dim // num_heads
    local head_dim = math.floor(dim / self.num_heads)
    self.scale = head_dim ^ -0.5
    -- self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
    self.qkv = nn.Linear(dim, dim * 3, { bias = opts.qkv_bias or false })
    self.attn_drop = nn.Dropout(opts.attn_drop or 0)
    self.proj = nn.Linear(dim, dim, { bias = opts.proj_bias ~= false })
    self.proj_drop = nn.Dropout(opts.proj_drop or 0)
end
function Attention:forward(x)
    -- B, N, C = x.shape
    local B, N, C = unpack(x.shape)
    -- qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, C // self.num_heads)
    --     .permute(2, 0, 3, 1, 4)
    local qkv = self.qkv(x):reshape(B, N, 3, self.num_heads, math.floor(C / self.num_heads))
        :permute(3, 1, 4, 2, 5)
    -- q, k, v = qkv[0] * self.scale, qkv[1], qkv[2]
    local q, k, v = qkv[1] * self.scale, qkv[2], qkv[3]
    -- attn = q @ k.transpose(-2, -1)
    local attn = q:matmul(k:transpose(-2, -1))
    -- attn = attn.softmax(dim=-1)
    attn = attn:softmax(-1)
    attn = self.attn_drop(attn)
    -- x = (attn @ v).transpose(1, 2).reshape(B, N, C)
    x = attn:matmul(v):transpose(2, 3):reshape(B, N, C)
    x = self.proj(x)
    x = self.proj_drop(x)
    return x
end

local XFORMERS_AVAILABLE = false
-- class MemEffAttention(Attention):
local MemEffAttention = Attention:extend("MemEffAttention")
function MemEffAttention:forward(x, attn_bias)
    if not XFORMERS_AVAILABLE then
        if attn_bias ~= nil then
            -- raise AssertionError("xFormers is required for using nested tensors")
            error("AssertionError: xFormers is required for using nested tensors")
        end
        -- return super().forward(x)
        return Attention.forward(self, x)
    end
    error("memory_efficient_attention: not ported (xformers)")
end

-- def drop_add_residual_stochastic_depth(x, residual_func, sample_drop_ratio=0.0):  (block.py)
-- (brange_: the check passes PyTorch's permutation here; None draws it as block.py does)
local function drop_add_residual_stochastic_depth(x, residual_func, sample_drop_ratio, brange_)
    -- 1) extract subset using permutation
    -- b, n, d = x.shape
    local b = x.shape[1]
    -- sample_subset_size = max(int(b * (1 - sample_drop_ratio)), 1)
    local sample_subset_size = math.max(math.floor(b * (1 - sample_drop_ratio)), 1)
    -- brange = (torch.randperm(b, device=x.device))[:sample_subset_size]
    local perm = brange_ or tide.randperm(b, { device = x.device })
    local brange = perm[{ { 1, sample_subset_size } }]
    local x_subset = x[brange]
    -- 2) apply residual_func to get residual
    local residual = residual_func(x_subset)
    -- x_flat = x.flatten(1)
    local x_flat = x:flatten(2)
    residual = residual:flatten(2)
    local residual_scale_factor = b / sample_subset_size
    -- 3) add the residual
    -- x_plus_residual = torch.index_add(x_flat, 0, brange, residual.to(dtype=x.dtype),
    --                                   alpha=residual_scale_factor)
    local x_plus_residual = tide.index_add(x_flat, 1, brange, residual:to({ dtype = x.dtype }),
        { alpha = residual_scale_factor })
    return x_plus_residual:view_as(x)
end

-- class Block(nn.Module):
local DinoBlock = nn.Module:extend("Block")
-- def __init__(self, dim, num_heads, mlp_ratio=4.0, qkv_bias=False, proj_bias=True,
--              ffn_bias=True, drop=0.0, attn_drop=0.0, init_values=None, drop_path=0.0,
--              act_layer=nn.GELU, norm_layer=nn.LayerNorm, attn_class=Attention, ffn_layer=Mlp):
function DinoBlock:init(dim, num_heads, opts)
    opts = opts or {}
    local norm_layer, attn_class = opts.norm_layer or nn.LayerNorm, opts.attn_class or Attention
    local ffn_layer, drop, dp = opts.ffn_layer or Mlp, opts.drop or 0, opts.drop_path or 0
    local init_values = opts.init_values
    self.norm1 = norm_layer(dim)
    self.attn = attn_class(dim, { num_heads = num_heads, qkv_bias = opts.qkv_bias or false,
        proj_bias = opts.proj_bias ~= false, attn_drop = opts.attn_drop or 0, proj_drop = drop })
    -- self.ls1 = LayerScale(dim, init_values=init_values) if init_values else nn.Identity()
    self.ls1 = init_values and LayerScale(dim, { init_values = init_values }) or nn.Identity()
    -- self.drop_path1 = DropPath(drop_path) if drop_path > 0.0 else nn.Identity()
    self.drop_path1 = dp > 0 and DropPath(dp) or nn.Identity()
    self.norm2 = norm_layer(dim)
    -- mlp_hidden_dim = int(dim * mlp_ratio)
    local mlp_hidden_dim = math.floor(dim * (opts.mlp_ratio or 4.0))
    self.mlp = ffn_layer({ in_features = dim, hidden_features = mlp_hidden_dim,
        act_layer = opts.act_layer or nn.GELU, drop = drop, bias = opts.ffn_bias ~= false })
    self.ls2 = init_values and LayerScale(dim, { init_values = init_values }) or nn.Identity()
    self.drop_path2 = dp > 0 and DropPath(dp) or nn.Identity()
    self.sample_drop_ratio = dp
end
function DinoBlock:forward(x)
    local function attn_residual_func(x_)
        return self.ls1(self.attn(self.norm1(x_)))
    end
    local function ffn_residual_func(x_)
        return self.ls2(self.mlp(self.norm2(x_)))
    end
    if self.training and self.sample_drop_ratio > 0.1 then
        -- the overhead is compensated only for a drop path rate larger than 0.1
        x = drop_add_residual_stochastic_depth(x, attn_residual_func, self.sample_drop_ratio)
        x = drop_add_residual_stochastic_depth(x, ffn_residual_func, self.sample_drop_ratio)
    elseif self.training and self.sample_drop_ratio > 0.0 then
        x = x + self.drop_path1(attn_residual_func(x))
        x = x + self.drop_path1(ffn_residual_func(x)) -- FIXME: drop_path2
    else
        x = x + attn_residual_func(x)
        x = x + ffn_residual_func(x)
    end
    return x
end

-- def _build_mlp(nlayers, in_dim, bottleneck_dim, hidden_dim=None, use_bn=False, bias=True):
local function _build_mlp(nlayers, in_dim, bottleneck_dim, hidden_dim, use_bn, bias)
    if nlayers == 1 then
        return nn.Linear(in_dim, bottleneck_dim, { bias = bias })
    end
    local layers = { nn.Linear(in_dim, hidden_dim, { bias = bias }) }
    if use_bn then layers[#layers + 1] = nn.BatchNorm1d(hidden_dim) end
    layers[#layers + 1] = nn.GELU()
    for _ = 1, nlayers - 2 do
        layers[#layers + 1] = nn.Linear(hidden_dim, hidden_dim, { bias = bias })
        if use_bn then layers[#layers + 1] = nn.BatchNorm1d(hidden_dim) end
        layers[#layers + 1] = nn.GELU()
    end
    layers[#layers + 1] = nn.Linear(hidden_dim, bottleneck_dim, { bias = bias })
    return nn.Sequential(unpack(layers))
end

-- class DINOHead(nn.Module):  (dino_head.py)
local DINOHead = nn.Module:extend("DINOHead")
-- def __init__(self, in_dim, out_dim, use_bn=False, nlayers=3, hidden_dim=2048,
--              bottleneck_dim=256, mlp_bias=True):
function DINOHead:init(in_dim, out_dim, opts)
    opts = opts or {}
    -- nlayers = max(nlayers, 1)
    local nlayers = math.max(opts.nlayers or 3, 1)
    self.mlp = _build_mlp(nlayers, in_dim, opts.bottleneck_dim or 256, opts.hidden_dim or 2048,
        opts.use_bn or false, opts.mlp_bias ~= false)
    self:apply(function(m) self:_init_weights(m) end)
    -- self.last_layer = weight_norm(nn.Linear(bottleneck_dim, out_dim, bias=False))
    self.last_layer = nn.utils.weight_norm(nn.Linear(opts.bottleneck_dim or 256, out_dim,
        { bias = false }))
    self.last_layer.weight_g.data:fill_(1)
end
function DINOHead:_init_weights(m)
    if tide.isinstance(m, nn.Linear) then
        -- trunc_normal_(m.weight, std=0.02)  (torch.nn.init's)
        nn.init.trunc_normal_(m.weight, { std = 0.02 })
        if tide.isinstance(m, nn.Linear) and m.bias ~= nil then
            nn.init.constant_(m.bias, 0)
        end
    end
end
function DINOHead:forward(x)
    x = self.mlp(x)
    -- eps = 1e-6 if x.dtype == torch.float16 else 1e-12
    local eps = x.dtype == "float16" and 1e-6 or 1e-12
    -- x = nn.functional.normalize(x, dim=-1, p=2, eps=eps)
    x = F.normalize(x, { dim = -1, p = 2, eps = eps })
    x = self.last_layer(x)
    return x
end

---------------------------------------------------------------------------------------------
-- checks against PyTorch 1.13 (the script: the same classes, fills and inputs)
---------------------------------------------------------------------------------------------
-- every parameter: a sin(0.37 k + 0.7 i), k its flat index, i its place in named_parameters,
-- a 0.02 for biases (GRN's beta too), else 0.3
local fill = tide.no_grad()(function(m)
    for i, np in ipairs(m:named_parameters()) do
        local name, p = np[1], np[2]
        local k = tide.arange(1, p:numel() + 1, { dtype = "float64" })
        local a = (name:find("bias") or name:find("beta")) and 0.02 or 0.3
        p:copy_((a * (0.37 * k + 0.7 * i):sin()):view(p:size()))
    end
end)
-- sin(0.11 k + 0.5) + cos(0.0007 k^2) over the flat index k, as float32
local function data(...)
    local shape, n = { ... }, 1
    for _, s in ipairs(shape) do n = n * s end
    local k = tide.arange(1, n + 1, { dtype = "float64" })
    return ((0.11 * k + 0.5):sin() + (0.0007 * k * k):cos()):float():view(unpack(shape))
end
local function shape(t)
    return { unpack(t:size()) }
end
local function list(t)
    return t:detach():double():reshape(-1):tolist()
end
-- PyTorch's names (all-digit parts one less) of m's parameters, in order
local function names(m)
    local out = {}
    for _, np in ipairs(m:named_parameters()) do
        local parts = {}
        for part in np[1]:gmatch("[^.]+") do
            parts[#parts + 1] = part:match("^%d+$") and tostring(tonumber(part) - 1) or part
        end
        out[#out + 1] = table.concat(parts, ".")
    end
    return out
end

-- PyTorch 1.13's values (/tmp script: the classes above in Python, the same fill and data)
local WANT_LOGITS = {
    0.019875024, 0.06683661, 0.076350905, 0.046177424, -0.0057343245, 0.020736974, 0.068650298,
    0.078200758, 0.047129579, -0.0061605386
}
local WANT_GRN = {
    8.2271843, 8.038763, 7.5557303, 6.8351974, 5.9651189, 5.0471663, -0.84447628, -0.91630232,
    -1.0061038, -1.0969652, -1.1668273, -1.195382
}
local WANT_DBLOCK = {
    1.577607, 1.6467838, 1.7248075, 1.8021548, 1.8898156, 1.9536523, 1.982175, 1.9966899,
    2.0008073, 1.9913079, 1.979358, 1.9533855, 1.9356432, 1.9021289, 1.8430697, 1.7724869,
    1.6823231, 1.5811601, 1.4854888, 1.3826289, 1.2919854, 1.1877487, 1.0628505, 0.93621409,
    0.80299133, 0.66556948, 0.54402804, 0.42482755, 0.32624459, 0.22203921, 0.10600559,
    -0.0019235127, -0.10660701, -0.20839572, -0.28528428, -0.35319167, -0.39618373, -0.44147086,
    -0.49443024, -0.53435999, -0.5679152, -0.58724034, -0.60136771, -0.60452265, -0.58955956,
    -0.56360126, -0.53677475, -0.5119217, -0.48992133, -0.46697509, -0.4371123, -0.38749048,
    -0.32210732, -0.26310074, -0.22560596, -0.20189478, -0.17643489, -0.15387602, -0.1279157,
    -0.087132528, -0.03815439, -0.0030333214, 0.0062304772, 0.0010693492, -0.00010768528,
    -0.0031141811, -0.010475136, -0.013234391, -0.0055212723, 0.00014808215, -0.007555129,
    -0.025425386, -0.048318233, -0.069185302, -0.081583932, -0.08249899, -0.074237168,
    -0.073162496, -0.084771976, -0.097248472
}
local WANT_DBLOCK_SWIGLU = {
    1.579339, 1.6566874, 1.7487565, 1.8151675, 1.8620682, 1.9366535, 1.9448599, 1.9929138,
    2.0014811, 1.9935173, 2.0037849, 1.9599253, 1.937281, 1.8933294, 1.8175757, 1.769803,
    1.6833645, 1.5862337, 1.5051758, 1.3910005, 1.279806, 1.1774677, 1.0365103, 0.93369591,
    0.80410355, 0.67149985, 0.56140476, 0.43328041, 0.31020573, 0.21124753, 0.080596022,
    -0.0043534734, -0.10543533, -0.20136563, -0.27162099, -0.3450278, -0.41698, -0.45296958,
    -0.51766813, -0.53663623, -0.56800789, -0.58927011, -0.57651734, -0.60912585, -0.56577253,
    -0.57352316, -0.55101985, -0.51286244, -0.48832661, -0.45958412, -0.40702352, -0.37545788,
    -0.34041467, -0.2784628, -0.26565471, -0.20529969, -0.17472458, -0.14405152, -0.10415939,
    -0.07431455, -0.065486617, -0.019988095, -0.030669596, -0.0026907646, 0.0005067056,
    -0.0015494516, 0.015327815, -0.0069141062, -0.0010925499, -0.0082310066, -0.033381652,
    -0.028119456, -0.047090273, -0.061562475, -0.06951841, -0.07423649, -0.097874753,
    -0.084955357, -0.10745817, -0.099438891
}
local WANT_DROPADD = {
    1.5824291, 1.6678232, 1.7496827, 1.8126374, 1.8701065, 1.9159758, 1.9521233, 1.9843808,
    2.0049655, 2.0050943, 1.9990743, 1.9686929, 1.9322537, 1.8821723, 1.8215598, 1.7602031,
    1.6869205, 1.5965379, 1.5047784, 1.3929927, 1.2813817, 1.1625971, 1.0405673, 0.92592251,
    0.79761857, 0.67343938, 0.55006212, 0.42865315, 0.31033444, 0.19616961, 0.087151177,
    -0.015811233, -0.11190147, -0.20040616, -0.28072256, -0.35236466, -0.41496801, -0.46829244,
    -0.51222312, -0.54677016, -0.57206583, -0.58836055, -0.596017, -0.59550267, -0.58738071,
    -0.57229954, -0.55098152, -0.5242098, -0.48752353, -0.4432399, -0.41427481, -0.36929223,
    -0.33799437, -0.29907295, -0.25312048, -0.22180614, -0.17386737, -0.12962148, -0.1069546,
    -0.073641852, -0.059114676, -0.041314948, -0.020186165, -0.016608935, 0.0015827897,
    0.013920264, 0.0057134093, 0.0064694257, -0.0088128289, -0.019815011, -0.025692973,
    -0.043758873, -0.051588994, -0.063553788, -0.074912801, -0.085121818, -0.093692087,
    -0.1002067, -0.10433558, -0.10584851, -0.10462599, -0.10066716, -0.094094686, -0.08515621,
    -0.074221902, -0.061778162, -0.048417173, -0.03482243, -0.021750217, -0.010007365,
    -0.0004255547, 0.0061672954, 0.0089779841, 0.00728057, 0.00044963681, -0.012006679
}
local WANT_HEAD = {
    0.2544634, 0.083561987, -0.074270524, 0.015438166, -0.091619484, -0.13312042, 0.23741138,
    0.13217363, -0.059173401, 0.022778569, -0.053042591, -0.18532062, 0.19985315, 0.16225465,
    -0.040293299, 0.027052434, -0.014140971, -0.21349293
}
local WANT_PATCH = {
    7.5023284, 4.3242779, -3.6290612, -7.3451228, -4.9044781, -8.3398733, 4.8972721, 10.382747
}

describe("ported ConvNeXt-V2 and DINOv2 layers", function()
    it("ConvNeXtV2's init, parameter order and logits match PyTorch", function()
        tide.manual_seed(0)
        local m = ConvNeXtV2({ num_classes = 5, depths = { 1, 1, 2, 1 }, dims = { 4, 8, 16, 32 } })
        -- _init_weights: biases zero, weights N(0, 0.02) (trunc at +-2); head_init_scale scales
        assert.equal(0, m.stages[3][2].pwconv1.bias:abs():sum():item())
        local sd = m.stages[3][2].pwconv1.weight:std():item()
        assert.is_true(sd > 0.012 and sd < 0.028, tostring(sd))
        tide.manual_seed(0)
        local half = ConvNeXtV2({ num_classes = 5, depths = { 1, 1, 2, 1 }, dims = { 4, 8, 16, 32 },
            head_init_scale = 0.5 })
        assert.is_true(tide.allclose(half.head.weight * 2, m.head.weight))
        local n = names(m)
        assert.same({ "downsample_layers.0.0.weight", "downsample_layers.0.0.bias",
            "downsample_layers.0.1.weight", "downsample_layers.0.1.bias",
            "downsample_layers.1.0.weight" }, { unpack(n, 1, 5) })
        assert.equal("head.bias", n[#n])
        fill(m)
        m:eval()
        local logits = m(data(2, 3, 32, 32))
        assert.same({ 2, 5 }, shape(logits))
        assert_close_list(WANT_LOGITS, list(logits), 1e-4, "logits")
    end)

    it("GRN and the channels_first LayerNorm match PyTorch and F.layer_norm", function()
        local g = GRN(6)
        fill(g)
        local out = g(data(2, 3, 3, 6)):sum({ 2, 3 })
        assert_close_list(WANT_GRN, list(out), 1e-4, "grn")
        local ln = LayerNorm(5, { eps = 1e-6, data_format = "channels_first" })
        fill(ln)
        local x = data(2, 5, 3, 4)
        local want = F.layer_norm(x:permute(1, 3, 4, 2), { 5 }, ln.weight, ln.bias, 1e-6)
        assert.is_true(tide.allclose(ln(x), want:permute(1, 4, 2, 3), 1e-5, 1e-5))
        assert.has_error(function() LayerNorm(5, { data_format = "nhwc" }) end,
            "NotImplementedError")
    end)

    it("DINOv2 Blocks (Mlp and SwiGLUFFNFused, MemEffAttention) match PyTorch in eval", function()
        local b = DinoBlock(8, 2, { init_values = 0.5 })
        assert.same({ "norm1.weight", "norm1.bias", "attn.qkv.weight", "attn.proj.weight",
            "attn.proj.bias", "ls1.gamma", "norm2.weight", "norm2.bias", "mlp.fc1.weight",
            "mlp.fc1.bias", "mlp.fc2.weight", "mlp.fc2.bias", "ls2.gamma" }, names(b))
        fill(b)
        b:eval()
        local xb = data(2, 5, 8)
        local y = b(xb)
        assert.same({ 2, 5, 8 }, shape(y))
        assert_close_list(WANT_DBLOCK, list(y), 2e-4, "dblock")
        local b2 = DinoBlock(8, 2, { init_values = 0.5, ffn_layer = SwiGLUFFNFused,
            attn_class = MemEffAttention })
        -- (int(32 * 2 / 3) + 7) // 8 * 8 = 24
        assert.same({ 48, 8 }, shape(b2.mlp.w12.weight))
        fill(b2)
        b2:eval()
        assert_close_list(WANT_DBLOCK_SWIGLU, list(b2(xb)), 2e-4, "dblock_swiglu")
        assert.has_error(function() b2.attn(xb, {}) end,
            "AssertionError: xFormers is required for using nested tensors")
    end)

    it("drop_add_residual_stochastic_depth with PyTorch's permutation matches it", function()
        local b = DinoBlock(8, 2, { init_values = 0.5 })
        fill(b)
        local x4 = data(4, 3, 8)
        local function rf(x) return b.ls1(b.attn(b.norm1(x))) end
        -- torch.tensor([2, 0, 3, 1]), 1-based
        local y = drop_add_residual_stochastic_depth(x4, rf, 0.5, tide.tensor({ 3, 1, 4, 2 }))
        assert_close_list(WANT_DROPADD, list(y), 2e-4, "dropadd")
        -- rows 2 and 4 are not in brange[:2] and pass through
        assert.is_true(tide.equal(y[2], x4[2]) and tide.equal(y[4], x4[4]))
        -- the training path (sample_drop_ratio 0.5 > 0.1) draws its own permutation
        local bt = DinoBlock(8, 2, { init_values = 0.5, drop_path = 0.5 })
        fill(bt)
        bt:train()
        tide.manual_seed(1)
        local yt = bt(x4)
        assert.same({ 4, 3, 8 }, shape(yt))
        assert_finite(yt:sum():item(), "training output")
        -- ... the same two draws of randperm(4), each cut to 2 rows, scaled by 4 / 2
        tide.manual_seed(1)
        local p1, p2 = tide.randperm(4), tide.randperm(4)
        local want = drop_add_residual_stochastic_depth(x4, function(x)
            return bt.ls1(bt.attn(bt.norm1(x)))
        end, 0.5, p1)
        want = drop_add_residual_stochastic_depth(want, function(x)
            return bt.ls2(bt.mlp(bt.norm2(x)))
        end, 0.5, p2)
        assert.is_true(tide.allclose(yt, want, 1e-5, 1e-6))
        assert.is_false(tide.allclose(yt, x4 + 0, 1e-3, 1e-3))
        -- 0 < drop_path <= 0.1 in training: x + drop_path1(...) twice, per-sample masks
        local bd = DinoBlock(8, 2, { init_values = 0.5, drop_path = 0.1 })
        fill(bd)
        bd:train()
        assert_finite(bd(x4):sum():item(), "drop_path1 output")
    end)

    it("LayerScale in place, PatchEmbed and DINOHead match PyTorch", function()
        local ls = LayerScale(4, { init_values = 2, inplace = true })
        local x = tide.ones(2, 4) * 3
        local y = ls(x)
        assert.equal(48, x:sum():item())
        assert.is_true(rawequal(x, y) or tide.equal(x, y))
        local pe = PatchEmbed({ img_size = 8, patch_size = 4, in_chans = 3, embed_dim = 8 })
        fill(pe)
        assert_close_list(WANT_PATCH, list(pe(data(2, 3, 8, 8)):sum(-1)), 2e-4, "patch")
        assert.equal(4, pe.num_patches)
        local pe2 = PatchEmbed({ img_size = 8, patch_size = 4, embed_dim = 8,
            flatten_embedding = false })
        assert.same({ 2, 2, 2, 8 }, shape(pe2(data(2, 3, 8, 8))))
        assert.error_matches(function() pe2(data(1, 3, 6, 8)) end,
            "Input image height 6 is not a multiple of patch height 4")
        local h = DINOHead(8, 6, { hidden_dim = 16, bottleneck_dim = 4 })
        assert.equal(6, h.last_layer.weight_g:sum():item())
        assert.same({ "mlp.0.weight", "mlp.0.bias", "mlp.2.weight", "mlp.2.bias",
            "mlp.4.weight", "mlp.4.bias", "last_layer.weight_g", "last_layer.weight_v" },
            names(h))
        fill(h)
        assert_close_list(WANT_HEAD, list(h(data(3, 8))), 2e-4, "head")
    end)

    it("2 AdamW steps on ConvNeXtV2 and on a DINOv2 Block + DINOHead: losses fall", function()
        tide.manual_seed(0)
        local m = ConvNeXtV2({ num_classes = 3, depths = { 1, 1, 1, 1 }, dims = { 4, 8, 8, 8 },
            drop_path_rate = 0.1 })
        local blk = DinoBlock(8, 2, { init_values = 1e-1, drop_path = 0.2 })
        local head = DINOHead(8, 6, { hidden_dim = 16, bottleneck_dim = 4 })
        -- (trunc_normal_(std=0.02) leaves the head's mlp output ~1e-4, which F.normalize turns
        -- into the direction of the first step's bias update: the formula's weights train)
        fill(head)
        local params = m:parameters()
        for _, p in ipairs(blk:parameters()) do params[#params + 1] = p end
        for _, p in ipairs(head:parameters()) do params[#params + 1] = p end
        local opt = optim.AdamW(params, { lr = 1e-2, weight_decay = 0.05 })
        local x, target = data(2, 3, 32, 32), tide.tensor({ 1, 3 })
        local tok = data(2, 4, 8)
        local losses = {}
        for step = 1, 3 do
            opt:zero_grad()
            tide.manual_seed(5) -- the same DropPath masks and permutations each step
            local l1 = F.cross_entropy(m(x), target)
            local l2 = F.cross_entropy(head(blk(tok):mean(2)), tide.tensor({ 2, 5 }))
            local loss = l1 + l2
            losses[step] = { l1:item(), l2:item() }
            assert_finite(losses[step][1], "ConvNeXtV2 loss")
            assert_finite(losses[step][2], "DINOv2 loss")
            if step < 3 then
                loss:backward()
                opt:step()
            end
        end
        for j = 1, 2 do
            assert.is_true(losses[3][j] < losses[2][j] and losses[2][j] < losses[1][j],
                string.format("%g %g %g", losses[1][j], losses[2][j], losses[3][j]))
        end
    end)
end)
