-- ported_scripts94_spec.lua — NVlabs/SegFormer's mmseg/models/backbones/mix_transformer.py (Mlp
-- with DWConv, Attention with sr_ratio, Block with DropPath, OverlapPatchEmbed,
-- MixVisionTransformer with _init_weights and forward_features) and
-- mmseg/models/decode_heads/segformer_head.py's SegFormerHead without mmcv (MLP embeds, bilinear
-- resize, linear_fuse = ConvModule written out as Conv2d + BatchNorm2d + ReLU, Dropout2d,
-- linear_pred), with timm's DropPath / trunc_normal_ / to_2tuple inlined, ported line for line
-- at tiny sizes (img 32, embed_dims {4, 8, 16, 32}, one block a stage, 3 classes); values
-- checked against PyTorch 1.13 on weights from a fixed formula (eval mode), then 2 AdamW steps
-- on random images with a per-pixel CrossEntropyLoss. mmseg's registry, logger, checkpoint
-- loading and BaseDecodeHead's config plumbing are skipped. The Python line stands above each
-- Lua line that differs from it. Dims and class labels are 1-based; SegFormer's ignore label
-- 255 stays 255 (1-based labels 1..3 never reach it, so tide's ignore_index = 255 works as is).
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

-- Python's a // b on numbers (Lua 5.1 and LuaJIT have no //)
local function idiv(a, b)
    return math.floor(a / b)
end

-- def to_2tuple(x): (timm's helpers, for an int)
local function to_2tuple(x)
    if type(x) == "table" then return x end
    return { x, x }
end
-- from timm.models.layers import trunc_normal_
local trunc_normal_ = nn.init.trunc_normal_

-- def drop_path(x, drop_prob: float = 0., training: bool = False, scale_by_keep: bool = True):
local function drop_path(x, drop_prob, training, scale_by_keep)
    if drop_prob == 0. or not training then
        return x
    end
    local keep_prob = 1 - drop_prob
    -- shape = (x.shape[0],) + (1,) * (x.ndim - 1)
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

-- def _init_weights(self, m):  (the same method in every class below)
local function _init_weights(m)
    -- if isinstance(m, nn.Linear):
    if tide.isinstance(m, nn.Linear) then
        -- trunc_normal_(m.weight, std=.02)
        trunc_normal_(m.weight, { std = .02 })
        -- if isinstance(m, nn.Linear) and m.bias is not None:
        if tide.isinstance(m, nn.Linear) and m.bias ~= nil then
            nn.init.constant_(m.bias, 0)
        end
    elseif tide.isinstance(m, nn.LayerNorm) then
        nn.init.constant_(m.bias, 0)
        nn.init.constant_(m.weight, 1.0)
    elseif tide.isinstance(m, nn.Conv2d) then
        -- fan_out = m.kernel_size[0] * m.kernel_size[1] * m.out_channels
        local fan_out = m.kernel_size[1] * m.kernel_size[2] * m.out_channels
        -- fan_out //= m.groups
        fan_out = idiv(fan_out, m.groups)
        -- m.weight.data.normal_(0, math.sqrt(2.0 / fan_out))
        m.weight.data:normal_(0, math.sqrt(2.0 / fan_out))
        if m.bias ~= nil then
            m.bias.data:zero_()
        end
    end
end

-- class DWConv(nn.Module):
local DWConv = nn.Module:extend("DWConv")
nn.signature(DWConv, "dim=768")
function DWConv:init(dim)
    -- self.dwconv = nn.Conv2d(dim, dim, 3, 1, 1, bias=True, groups=dim)
    self.dwconv = nn.Conv2d(dim, dim, 3, 1, 1, { bias = true, groups = dim })
end
function DWConv:forward(x, H, W)
    -- B, N, C = x.shape
    local B, _, C = unpack(x.shape)
    -- x = x.transpose(1, 2).view(B, C, H, W)
    x = x:transpose(2, 3):view(B, C, H, W)
    x = self.dwconv(x)
    -- x = x.flatten(2).transpose(1, 2)
    x = x:flatten(3):transpose(2, 3)
    return x
end

-- class Mlp(nn.Module):
local Mlp = nn.Module:extend("Mlp")
nn.signature(Mlp, "in_features, hidden_features=None, out_features=None, act_layer=nn.GELU, " ..
    "drop=0.")
function Mlp:init(in_features, hidden_features, out_features, act_layer, drop)
    out_features = out_features or in_features
    hidden_features = hidden_features or in_features
    self.fc1 = nn.Linear(in_features, hidden_features)
    self.dwconv = DWConv(hidden_features)
    self.act = act_layer()
    self.fc2 = nn.Linear(hidden_features, out_features)
    self.drop = nn.Dropout(drop)
    -- self.apply(self._init_weights)
    self:apply(_init_weights)
end
function Mlp:forward(x, H, W)
    x = self.fc1(x)
    x = self.dwconv(x, H, W)
    x = self.act(x)
    x = self.drop(x)
    x = self.fc2(x)
    x = self.drop(x)
    return x
end

-- class Attention(nn.Module):
local Attention = nn.Module:extend("Attention")
nn.signature(Attention, "dim, num_heads=8, qkv_bias=False, qk_scale=None, attn_drop=0., " ..
    "proj_drop=0., sr_ratio=1")
function Attention:init(dim, num_heads, qkv_bias, qk_scale, attn_drop, proj_drop, sr_ratio)
    -- assert dim % num_heads == 0, f"dim {dim} should be divided by num_heads {num_heads}."
    assert(dim % num_heads == 0, ("dim %d should be divided by num_heads %d."):format(dim,
        num_heads))
    self.dim = dim
    self.num_heads = num_heads
    -- head_dim = dim // num_heads
    local head_dim = idiv(dim, num_heads)
    -- self.scale = qk_scale or head_dim ** -0.5
    self.scale = qk_scale or head_dim ^ -0.5

    -- self.q = nn.Linear(dim, dim, bias=qkv_bias)
    self.q = nn.Linear(dim, dim, { bias = qkv_bias })
    -- self.kv = nn.Linear(dim, dim * 2, bias=qkv_bias)
    self.kv = nn.Linear(dim, dim * 2, { bias = qkv_bias })
    self.attn_drop = nn.Dropout(attn_drop)
    self.proj = nn.Linear(dim, dim)
    self.proj_drop = nn.Dropout(proj_drop)

    self.sr_ratio = sr_ratio
    if sr_ratio > 1 then
        -- self.sr = nn.Conv2d(dim, dim, kernel_size=sr_ratio, stride=sr_ratio)
        self.sr = nn.Conv2d(dim, dim, { kernel_size = sr_ratio, stride = sr_ratio })
        self.norm = nn.LayerNorm(dim)
    end
    -- self.apply(self._init_weights)
    self:apply(_init_weights)
end
function Attention:forward(x, H, W)
    local B, N, C = unpack(x.shape)
    -- q = self.q(x).reshape(B, N, self.num_heads, C // self.num_heads).permute(0, 2, 1, 3)
    local q = self.q(x):reshape(B, N, self.num_heads, idiv(C, self.num_heads))
        :permute(1, 3, 2, 4)

    local kv
    if self.sr_ratio > 1 then
        -- x_ = x.permute(0, 2, 1).reshape(B, C, H, W)
        local x_ = x:permute(1, 3, 2):reshape(B, C, H, W)
        -- x_ = self.sr(x_).reshape(B, C, -1).permute(0, 2, 1)
        x_ = self.sr(x_):reshape(B, C, -1):permute(1, 3, 2)
        x_ = self.norm(x_)
        -- kv = self.kv(x_).reshape(B, -1, 2, self.num_heads, C // self.num_heads)
        --     .permute(2, 0, 3, 1, 4)
        kv = self.kv(x_):reshape(B, -1, 2, self.num_heads, idiv(C, self.num_heads))
            :permute(3, 1, 4, 2, 5)
    else
        -- kv = self.kv(x).reshape(B, -1, 2, self.num_heads, C // self.num_heads)
        --     .permute(2, 0, 3, 1, 4)
        kv = self.kv(x):reshape(B, -1, 2, self.num_heads, idiv(C, self.num_heads))
            :permute(3, 1, 4, 2, 5)
    end
    -- k, v = kv[0], kv[1]
    local k, v = kv[1], kv[2]

    -- attn = (q @ k.transpose(-2, -1)) * self.scale
    local attn = q:matmul(k:transpose(-2, -1)) * self.scale
    -- attn = attn.softmax(dim=-1)
    attn = attn:softmax({ dim = -1 })
    attn = self.attn_drop(attn)

    -- x = (attn @ v).transpose(1, 2).reshape(B, N, C)
    x = attn:matmul(v):transpose(2, 3):reshape(B, N, C)
    x = self.proj(x)
    x = self.proj_drop(x)

    return x
end

-- class Block(nn.Module):
local Block = nn.Module:extend("Block")
nn.signature(Block, "dim, num_heads, mlp_ratio=4., qkv_bias=False, qk_scale=None, drop=0., " ..
    "attn_drop=0., drop_path=0., act_layer=nn.GELU, norm_layer=nn.LayerNorm, sr_ratio=1")
function Block:init(dim, num_heads, mlp_ratio, qkv_bias, qk_scale, drop, attn_drop, drop_path_,
                    act_layer, norm_layer, sr_ratio)
    self.norm1 = norm_layer(dim)
    self.attn = Attention(
        dim,
        { num_heads = num_heads, qkv_bias = qkv_bias, qk_scale = qk_scale,
            attn_drop = attn_drop, proj_drop = drop, sr_ratio = sr_ratio })
    -- NOTE: drop path for stochastic depth, we shall see if this is better than dropout here
    -- self.drop_path = DropPath(drop_path) if drop_path > 0. else nn.Identity()
    self.drop_path = drop_path_ > 0. and DropPath(drop_path_) or nn.Identity()
    self.norm2 = norm_layer(dim)
    -- mlp_hidden_dim = int(dim * mlp_ratio)
    local mlp_hidden_dim = math.floor(dim * mlp_ratio)
    -- self.mlp = Mlp(in_features=dim, hidden_features=mlp_hidden_dim, act_layer=act_layer,
    --                drop=drop)
    self.mlp = Mlp({ in_features = dim, hidden_features = mlp_hidden_dim,
        act_layer = act_layer, drop = drop })

    self:apply(_init_weights)
end
function Block:forward(x, H, W)
    x = x + self.drop_path(self.attn(self.norm1(x), H, W))
    x = x + self.drop_path(self.mlp(self.norm2(x), H, W))

    return x
end

-- class OverlapPatchEmbed(nn.Module):
local OverlapPatchEmbed = nn.Module:extend("OverlapPatchEmbed")
nn.signature(OverlapPatchEmbed, "img_size=224, patch_size=7, stride=4, in_chans=3, " ..
    "embed_dim=768")
function OverlapPatchEmbed:init(img_size, patch_size, stride, in_chans, embed_dim)
    img_size = to_2tuple(img_size)
    patch_size = to_2tuple(patch_size)

    self.img_size = img_size
    self.patch_size = patch_size
    -- self.H, self.W = img_size[0] // patch_size[0], img_size[1] // patch_size[1]
    self.H, self.W = idiv(img_size[1], patch_size[1]), idiv(img_size[2], patch_size[2])
    self.num_patches = self.H * self.W
    -- self.proj = nn.Conv2d(in_chans, embed_dim, kernel_size=patch_size, stride=stride,
    --                       padding=(patch_size[0] // 2, patch_size[1] // 2))
    self.proj = nn.Conv2d(in_chans, embed_dim, { kernel_size = patch_size, stride = stride,
        padding = { idiv(patch_size[1], 2), idiv(patch_size[2], 2) } })
    self.norm = nn.LayerNorm(embed_dim)

    self:apply(_init_weights)
end
function OverlapPatchEmbed:forward(x)
    x = self.proj(x)
    -- _, _, H, W = x.shape
    local _, _, H, W = unpack(x.shape)
    -- x = x.flatten(2).transpose(1, 2)
    x = x:flatten(3):transpose(2, 3)
    x = self.norm(x)

    return x, H, W
end

-- class MixVisionTransformer(nn.Module):
local MixVisionTransformer = nn.Module:extend("MixVisionTransformer")
nn.signature(MixVisionTransformer, "img_size=224, patch_size=16, in_chans=3, num_classes=1000, " ..
    "embed_dims=[64, 128, 256, 512], num_heads=[1, 2, 4, 8], mlp_ratios=[4, 4, 4, 4], " ..
    "qkv_bias=False, qk_scale=None, drop_rate=0., attn_drop_rate=0., drop_path_rate=0., " ..
    "norm_layer=nn.LayerNorm, depths=[3, 4, 6, 3], sr_ratios=[8, 4, 2, 1]")
function MixVisionTransformer:init(img_size, _, in_chans, num_classes, embed_dims, num_heads,
                                   mlp_ratios, qkv_bias, qk_scale, drop_rate, attn_drop_rate,
                                   drop_path_rate, norm_layer, depths, sr_ratios)
    self.num_classes = num_classes
    self.depths = depths

    -- patch_embed
    -- self.patch_embed1 = OverlapPatchEmbed(img_size=img_size, patch_size=7, stride=4,
    --                                       in_chans=in_chans, embed_dim=embed_dims[0])
    self.patch_embed1 = OverlapPatchEmbed({ img_size = img_size, patch_size = 7, stride = 4,
        in_chans = in_chans, embed_dim = embed_dims[1] })
    -- self.patch_embed2 = OverlapPatchEmbed(img_size=img_size // 4, ...) and so on
    self.patch_embed2 = OverlapPatchEmbed({ img_size = idiv(img_size, 4), patch_size = 3,
        stride = 2, in_chans = embed_dims[1], embed_dim = embed_dims[2] })
    self.patch_embed3 = OverlapPatchEmbed({ img_size = idiv(img_size, 8), patch_size = 3,
        stride = 2, in_chans = embed_dims[2], embed_dim = embed_dims[3] })
    self.patch_embed4 = OverlapPatchEmbed({ img_size = idiv(img_size, 16), patch_size = 3,
        stride = 2, in_chans = embed_dims[3], embed_dim = embed_dims[4] })

    -- transformer encoder
    -- dpr = [x.item() for x in torch.linspace(0, drop_path_rate, sum(depths))]
    local total = 0
    for _, d in ipairs(depths) do total = total + d end
    local dpr = {}
    for i, x in ipairs(tide.linspace(0, drop_path_rate, total):tolist()) do dpr[i] = x end
    self.dpr = dpr
    local cur = 0
    -- self.block1 = nn.ModuleList([Block(
    --     dim=embed_dims[0], num_heads=num_heads[0], mlp_ratio=mlp_ratios[0], qkv_bias=qkv_bias,
    --     qk_scale=qk_scale, drop=drop_rate, attn_drop=attn_drop_rate, drop_path=dpr[cur + i],
    --     norm_layer=norm_layer, sr_ratio=sr_ratios[0])
    --     for i in range(depths[0])])
    -- self.norm1 = norm_layer(embed_dims[0])
    -- cur += depths[0]   (and the same for stages 2, 3, 4: written as one loop over s)
    for s = 1, 4 do
        local blocks = {}
        for i = 1, depths[s] do
            blocks[i] = Block({
                dim = embed_dims[s], num_heads = num_heads[s], mlp_ratio = mlp_ratios[s],
                qkv_bias = qkv_bias, qk_scale = qk_scale, drop = drop_rate,
                attn_drop = attn_drop_rate, drop_path = dpr[cur + i], norm_layer = norm_layer,
                sr_ratio = sr_ratios[s] })
        end
        self["block" .. s] = nn.ModuleList(blocks)
        self["norm" .. s] = norm_layer(embed_dims[s])
        cur = cur + depths[s]
    end

    self:apply(_init_weights)
end
function MixVisionTransformer:forward_features(x)
    -- B = x.shape[0]
    local B = x.shape[1]
    local outs = {}

    -- stage 1 .. stage 4 (the same four lines a stage)
    for s = 1, 4 do
        -- x, H, W = self.patch_embed1(x)
        local H, W
        x, H, W = self["patch_embed" .. s](x)
        -- for i, blk in enumerate(self.block1):
        for _, blk in ipairs(self["block" .. s]) do
            x = blk(x, H, W)
        end
        -- x = self.norm1(x)
        x = self["norm" .. s](x)
        -- x = x.reshape(B, H, W, -1).permute(0, 3, 1, 2).contiguous()
        x = x:reshape(B, H, W, -1):permute(1, 4, 2, 3):contiguous()
        -- outs.append(x)
        outs[#outs + 1] = x
    end

    return outs
end
function MixVisionTransformer:forward(x)
    x = self:forward_features(x)
    return x
end

-- segformer_head.py
-- class MLP(nn.Module):  """Linear Embedding"""
local MLP = nn.Module:extend("MLP")
nn.signature(MLP, "input_dim=2048, embed_dim=768")
function MLP:init(input_dim, embed_dim)
    self.proj = nn.Linear(input_dim, embed_dim)
end
function MLP:forward(x)
    -- x = x.flatten(2).transpose(1, 2)
    x = x:flatten(3):transpose(2, 3)
    x = self.proj(x)
    return x
end

-- def resize(input, size, mode, align_corners): mmseg.ops.resize, less its warning
local function resize(input, size, mode, align_corners)
    return F.interpolate(input, { size = size, mode = mode, align_corners = align_corners })
end

-- class SegFormerHead(BaseDecodeHead):  BaseDecodeHead's in_channels, channels-free config
-- and its dropout (nn.Dropout2d(dropout_ratio)) taken as arguments
local SegFormerHead = nn.Module:extend("SegFormerHead")
nn.signature(SegFormerHead, "in_channels, embedding_dim, num_classes, dropout_ratio=0.1")
function SegFormerHead:init(in_channels, embedding_dim, num_classes, dropout_ratio)
    -- c1_in_channels, c2_in_channels, c3_in_channels, c4_in_channels = self.in_channels
    local c1_in_channels, c2_in_channels, c3_in_channels, c4_in_channels =
        in_channels[1], in_channels[2], in_channels[3], in_channels[4]
    self.num_classes = num_classes

    self.linear_c4 = MLP({ input_dim = c4_in_channels, embed_dim = embedding_dim })
    self.linear_c3 = MLP({ input_dim = c3_in_channels, embed_dim = embedding_dim })
    self.linear_c2 = MLP({ input_dim = c2_in_channels, embed_dim = embedding_dim })
    self.linear_c1 = MLP({ input_dim = c1_in_channels, embed_dim = embedding_dim })

    -- self.linear_fuse = ConvModule(in_channels=embedding_dim*4, out_channels=embedding_dim,
    --     kernel_size=1, norm_cfg=dict(type='SyncBN', requires_grad=True))
    -- (mmcv's ConvModule: conv (bias='auto': none under a norm), norm, ReLU; SyncBN on one
    -- process is BatchNorm2d)
    self.linear_fuse = nn.Sequential(
        nn.Conv2d(embedding_dim * 4, embedding_dim, 1, { bias = false }),
        nn.BatchNorm2d(embedding_dim),
        nn.ReLU(true))

    -- self.dropout = nn.Dropout2d(dropout_ratio)  (BaseDecodeHead)
    self.dropout = nn.Dropout2d(dropout_ratio)
    -- self.linear_pred = nn.Conv2d(embedding_dim, self.num_classes, kernel_size=1)
    self.linear_pred = nn.Conv2d(embedding_dim, self.num_classes, { kernel_size = 1 })
end
function SegFormerHead:forward(inputs)
    -- x = self._transform_inputs(inputs)  # len=4, 1/4,1/8,1/16,1/32
    local x = inputs
    -- c1, c2, c3, c4 = x
    local c1, c2, c3, c4 = x[1], x[2], x[3], x[4]

    -- ############# MLP decoder on C1-C4 ###########
    -- n, _, h, w = c4.shape
    local n = c4.shape[1]
    -- c1.size()[2:]  (a Size slices as a tensor does, 1-based)
    local c1_hw = c1:size()[{ { 3, 4 } }]

    -- _c4 = self.linear_c4(c4).permute(0,2,1).reshape(n, -1, c4.shape[2], c4.shape[3])
    local _c4 = self.linear_c4(c4):permute(1, 3, 2):reshape(n, -1, c4.shape[3], c4.shape[4])
    -- _c4 = resize(_c4, size=c1.size()[2:],mode='bilinear',align_corners=False)
    _c4 = resize(_c4, c1_hw, "bilinear", false)

    local _c3 = self.linear_c3(c3):permute(1, 3, 2):reshape(n, -1, c3.shape[3], c3.shape[4])
    _c3 = resize(_c3, c1_hw, "bilinear", false)

    local _c2 = self.linear_c2(c2):permute(1, 3, 2):reshape(n, -1, c2.shape[3], c2.shape[4])
    _c2 = resize(_c2, c1_hw, "bilinear", false)

    local _c1 = self.linear_c1(c1):permute(1, 3, 2):reshape(n, -1, c1.shape[3], c1.shape[4])

    -- _c = self.linear_fuse(torch.cat([_c4, _c3, _c2, _c1], dim=1))
    local _c = self.linear_fuse(tide.cat({ _c4, _c3, _c2, _c1 }, { dim = 2 }))

    x = self.dropout(_c)
    x = self.linear_pred(x)

    return x
end

---------------------------------------------------------------------------------------------
-- the tests
---------------------------------------------------------------------------------------------

-- mit_b0's keys at a tiny size: qkv_bias, LayerNorm eps 1e-6, drop_path_rate 0.1
local function make_encoder()
    -- norm_layer=partial(nn.LayerNorm, eps=1e-6)
    local function norm_layer(dim) return nn.LayerNorm(dim, { eps = 1e-6 }) end
    return MixVisionTransformer({ img_size = 32, in_chans = 3, embed_dims = { 4, 8, 16, 32 },
        num_heads = { 1, 1, 2, 2 }, mlp_ratios = { 2, 2, 2, 2 }, qkv_bias = true,
        norm_layer = norm_layer, depths = { 1, 1, 1, 1 }, sr_ratios = { 8, 4, 2, 1 },
        drop_path_rate = 0.1 })
end

-- every parameter, in named_parameters order (k = 0, 1, ...), set from a fixed formula:
-- p.copy_((0.3 * torch.sin(0.731 * torch.arange(p.numel()) + 1.37 * k)).view(p.shape))
local function fill_from_formula(model)
    tide.no_grad(function()
        for k, np in ipairs(model:named_parameters()) do
            local p = np[2]
            local v = (tide.arange(p:numel()):float() * 0.731 + 1.37 * (k - 1)):sin() * 0.3
            p:copy_(v:view(p.shape))
        end
    end)
end

-- PyTorch's summary of a tensor: shape, sum, sum of |.|, its first four entries
local function summary(t)
    local f = t:flatten():tolist()
    return { t:sum():item(), t:abs():sum():item(), f[1], f[2], f[3], f[4] }
end

-- x = torch.sin(0.37 * torch.arange(2 * 3 * 32 * 32) + 0.5).view(2, 3, 32, 32)
local function image()
    return (tide.arange(2 * 3 * 32 * 32):float() * 0.37 + 0.5):sin():view(2, 3, 32, 32)
end

describe("NVlabs/SegFormer MiT encoder and SegFormerHead", function()
    local enc, head, outs
    setup(function()
        enc = make_encoder()
        head = SegFormerHead({ 4, 8, 16, 32 }, 8, 3)
        fill_from_formula(enc)
        fill_from_formula(head)
        enc:eval()
        head:eval()
        outs = tide.no_grad(function() return enc(image()) end)
    end)

    it("builds PyTorch's modules, parameter names and dpr", function()
        -- PyTorch's names with tide's 1-based list keys (block1.0. -> block1.1.,
        -- linear_fuse.0. -> linear_fuse.1.): the order, which the formula reads, is PyTorch's
        local function tide_name(n)
            return (n:gsub("%.(%d+)%.", function(d) return "." .. (tonumber(d) + 1) .. "." end))
        end
        local names = {}
        for i, np in ipairs(enc:named_parameters()) do names[i] = np[1] end
        assert.are.equal(100, #names)
        local want = { [1] = "patch_embed1.proj.weight", [17] = "block1.0.norm1.weight",
            [25] = "block1.0.attn.sr.weight", [33] = "block1.0.mlp.dwconv.dwconv.weight",
            [37] = "norm1.weight", [90] = "block4.0.attn.proj.bias",
            [91] = "block4.0.norm2.weight", [100] = "norm4.bias" }
        for i, n in pairs(want) do assert.are.equal(tide_name(n), names[i]) end
        local hnames = {}
        for i, np in ipairs(head:named_parameters()) do hnames[i] = np[1] end
        local hwant = { "linear_c4.proj.weight", "linear_c4.proj.bias",
            "linear_c3.proj.weight", "linear_c3.proj.bias", "linear_c2.proj.weight",
            "linear_c2.proj.bias", "linear_c1.proj.weight", "linear_c1.proj.bias",
            "linear_fuse.0.weight", "linear_fuse.1.weight", "linear_fuse.1.bias",
            "linear_pred.weight", "linear_pred.bias" }
        for i, n in ipairs(hwant) do hwant[i] = tide_name(n) end
        assert.are.same(hwant, hnames)
        -- dpr [0.0, 0.03333333507180214, 0.06666666269302368, 0.10000000149011612]
        assert_close_list({ 0.0, 0.03333333507180214, 0.06666666269302368, 0.10000000149011612 },
            enc.dpr, 1e-7, "dpr")
        assert.is_true(tide.isinstance(enc.block1[1].drop_path, nn.Identity))
        assert.is_true(tide.isinstance(enc.block4[1].drop_path, DropPath))
        assert.is_nil(enc.block4[1].attn.sr)
        assert.are.same({ 4, 4, 8, 8 }, enc.block1[1].attn.sr.weight.shape)
    end)

    it("_init_weights: trunc_normal_ linears, unit LayerNorms, fan_out normal convs", function()
        tide.manual_seed(0)
        local m = make_encoder()
        local function std(t) return t:std():item() end
        -- kv of stage 4: 64 x 32 weights, trunc_normal_(std=.02), bias constant_ 0
        local kv = m.block4[1].attn.kv
        assert.is_true(math.abs(std(kv.weight) - 0.02) < 0.002, "kv std " .. std(kv.weight))
        assert.are.equal(0, kv.bias:abs():sum():item())
        local n1 = m.block1[1].norm1
        assert.are.same({ 1, 1, 1, 1 }, n1.weight:tolist())
        assert.are.same({ 0, 0, 0, 0 }, n1.bias:tolist())
        -- patch_embed1.proj: fan_out = 7 * 7 * 4 = 196, std sqrt(2 / 196) ~ 0.101
        local pe = m.patch_embed1.proj
        assert.is_true(math.abs(std(pe.weight) - math.sqrt(2 / 196)) < 0.012,
            "proj std " .. std(pe.weight))
        assert.are.equal(0, pe.bias:abs():sum():item())
        -- stage 4's 3x3 depthwise conv of 64 channels: fan_out = 3 * 3 * 64 // 64 = 9
        local dw = m.block4[1].mlp.dwconv.dwconv
        assert.is_true(math.abs(std(dw.weight) - math.sqrt(2 / 9)) < 0.05,
            "dwconv std " .. std(dw.weight))
    end)

    it("DropPath drops whole samples in training only", function()
        local dp = enc.block4[1].drop_path
        assert.are.equal(0.10000000149011612, dp.drop_prob)
        local x = tide.ones(64, 3, 2)
        assert.are.same(x:tolist(), dp(x):tolist())
        dp:train()
        tide.manual_seed(2)
        local y = dp(x)
        dp:eval()
        -- each sample is all 0 or all 1 / keep_prob
        local per = y:sum({ dim = { 2, 3 } }):tolist()
        local kept = 0
        for _, v in ipairs(per) do
            if v ~= 0 then
                assert.is_true(math.abs(v - 6 / (1 - dp.drop_prob)) < 1e-4, "sample sum " .. v)
                kept = kept + 1
            end
        end
        assert.is_true(kept > 40 and kept < 64, "kept " .. kept)
    end)

    it("forward_features matches PyTorch stage by stage", function()
        local want = {
            { { 2, 4, 8, 8 }, { 198.79329, 198.79329, 0.4785841, 0.327511, 0.3141504, 0.3976681 } },
            { { 2, 8, 4, 4 }, { 54.421204, 66.702896, 0.0640731, 0.0350765, 0.0276604,
                0.0733339 } },
            { { 2, 16, 2, 2 }, { 3.1767943, 32.736916, -0.2579397, -0.2506236, -0.2507896,
                -0.2543281 } },
            { { 2, 32, 1, 1 }, { 1.9446276, 17.590269, -0.2389569, -0.2935808, -0.5753599,
                0.3388404 } },
        }
        assert.are.equal(4, #outs)
        for s = 1, 4 do
            assert.are.same(want[s][1], outs[s].shape)
            assert_close_list(want[s][2], summary(outs[s]), 2e-4, "stage" .. s)
        end
    end)

    it("Attention with sr_ratio 8 and 1 matches PyTorch", function()
        tide.no_grad(function()
            -- a = (torch.cos(0.53 * torch.arange(2 * 64 * 4)) * 0.8).view(2, 64, 4)
            local a = ((tide.arange(2 * 64 * 4):float() * 0.53):cos() * 0.8):view(2, 64, 4)
            local y = enc.block1[1].attn(a, 8, 8)
            assert.are.same({ 2, 64, 4 }, y.shape)
            assert_close_list({ 109.78119, 109.78119, 0.0645125, 0.2267474, 0.2512002,
                0.3151437 }, summary(y), 1e-4, "attn1")
            local b = ((tide.arange(2 * 4 * 32):float() * 0.53):cos() * 0.8):view(2, 4, 32)
            y = enc.block4[1].attn(b, 2, 2)
            assert.are.same({ 2, 4, 32 }, y.shape)
            assert_close_list({ -2.9840126, 250.61931, -1.338567, 0.26106, 1.1743722,
                -1.0772502 }, summary(y), 1e-4, "attn4")
        end)
    end)

    it("SegFormerHead's logits and the loss with ignored pixels match PyTorch", function()
        tide.no_grad(function()
            local logits = head(outs)
            assert.are.same({ 2, 3, 8, 8 }, logits.shape)
            assert_close_list({ -61.959164, 61.959164, -0.1681206, -0.1681796, -0.1684213,
                -0.1685661 }, summary(logits), 1e-4, "logits")
            -- lab = (torch.arange(2 * 32 * 32) * 7 % 3).view(2, 32, 32); lab[:, :4, :] = 255
            -- (plus one: 1-based classes; 255 stays the ignore label)
            local lab = ((tide.arange(2 * 32 * 32) * 7) % 3 + 1):view(2, 32, 32)
            lab[{ {}, { 1, 4 }, {} }] = 255
            -- seg = F.interpolate(logits, size=(32, 32), mode='bilinear', align_corners=False)
            local seg = resize(logits, { 32, 32 }, "bilinear", false)
            -- loss = nn.CrossEntropyLoss(ignore_index=255)(seg, lab)
            local loss = nn.CrossEntropyLoss({ ignore_index = 255 })(seg, lab)
            assert.is_true(ported.close(loss:item(), 1.0994018, 1e-5),
                "loss " .. loss:item())
        end)
    end)

    it("trains: 2 AdamW steps on random images lower the per-pixel loss", function()
        tide.manual_seed(1)
        local e = make_encoder()
        local h = SegFormerHead({ 4, 8, 16, 32 }, 8, 3)
        local params = e:parameters()
        for _, p in ipairs(h:parameters()) do params[#params + 1] = p end
        local opt = optim.AdamW(params, { lr = 1e-2, weight_decay = 0.01 })
        local crit = nn.CrossEntropyLoss({ ignore_index = 255 })
        local x = tide.randn(2, 3, 32, 32)
        local lab = tide.randint(1, 4, { 2, 32, 32 })
        lab[{ {}, {}, { 1, 3 } }] = 255
        e:train()
        h:train()
        local losses = {}
        for step = 1, 3 do
            opt:zero_grad()
            local seg = resize(h(e(x)), { 32, 32 }, "bilinear", false)
            local loss = crit(seg, lab)
            losses[step] = loss:item()
            assert_finite(losses[step], "loss")
            if step < 3 then
                loss:backward()
                opt:step()
            end
        end
        assert.is_true(losses[3] < losses[1], ("loss %g -> %g"):format(losses[1], losses[3]))
    end)
end)
