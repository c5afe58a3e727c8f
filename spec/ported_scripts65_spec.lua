-- ported_scripts65_spec.lua — microsoft/Swin-Transformer's models/swin_transformer.py (Mlp,
-- window_partition, window_reverse, WindowAttention with the relative position bias table and
-- index, SwinTransformerBlock with the shifted-window attn_mask and torch.roll, PatchMerging,
-- BasicLayer, PatchEmbed, SwinTransformer with _init_weights) and timm's drop_path / DropPath
-- (timm/layers/drop.py), ported line for line at tiny sizes (img_size=16, patch_size=2,
-- embed_dim=8, depths=[2, 2], num_heads=[2, 4], window_size=4). The Python line stands above
-- each Lua line that differs from it. Dims are 1-based, and so is relative_position_index (it
-- indexes the bias table). Not ported: the fused_window_process CUDA kernel, checkpointing,
-- flops().
local tide = require("tide")
local nn = tide.nn
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite

-- Python's a // b (Lua 5.1 and LuaJIT have no //)
local function floordiv(a, b)
    return math.floor(a / b)
end

-- timm: to_2tuple
local function to_2tuple(x)
    if type(x) == "table" then return x end
    return { x, x }
end

-- timm: trunc_normal_(tensor, mean=0., std=1., a=-2., b=2.)
local function trunc_normal_(t, opts)
    return nn.init.trunc_normal_(t, opts)
end

-- timm: def drop_path(x, drop_prob: float = 0., training: bool = False, scale_by_keep=True):
local function drop_path(x, drop_prob, training, scale_by_keep)
    drop_prob = drop_prob or 0
    if scale_by_keep == nil then scale_by_keep = true end
    if drop_prob == 0 or not training then
        return x
    end
    local keep_prob = 1 - drop_prob
    -- shape = (x.shape[0],) + (1,) * (x.ndim - 1)
    local shape = { x.shape[1] }
    for _ = 1, x.ndim - 1 do shape[#shape + 1] = 1 end
    -- random_tensor = x.new_empty(shape).bernoulli_(keep_prob)
    local random_tensor = x:new_empty(shape):bernoulli_(keep_prob)
    if keep_prob > 0.0 and scale_by_keep then
        random_tensor:div_(keep_prob)
    end
    return x * random_tensor
end

-- class DropPath(nn.Module):
local DropPath = nn.Module:extend("DropPath")
function DropPath:init(drop_prob, scale_by_keep)
    self.drop_prob = drop_prob or 0
    if scale_by_keep == nil then scale_by_keep = true end
    self.scale_by_keep = scale_by_keep
end

function DropPath:forward(x)
    return drop_path(x, self.drop_prob, self.training, self.scale_by_keep)
end

-- class Mlp(nn.Module):
local Mlp = nn.Module:extend("Mlp")
-- def __init__(self, in_features, hidden_features=None, out_features=None, act_layer=nn.GELU,
--              drop=0.):
function Mlp:init(in_features, hidden_features, out_features, act_layer, drop)
    act_layer = act_layer or nn.GELU
    out_features = out_features or in_features
    hidden_features = hidden_features or in_features
    self.fc1 = nn.Linear(in_features, hidden_features)
    self.act = act_layer()
    self.fc2 = nn.Linear(hidden_features, out_features)
    self.drop = nn.Dropout(drop or 0)
end

function Mlp:forward(x)
    x = self.fc1(x)
    x = self.act(x)
    x = self.drop(x)
    x = self.fc2(x)
    x = self.drop(x)
    return x
end

-- def window_partition(x, window_size):
local function window_partition(x, window_size)
    -- B, H, W, C = x.shape
    local B, H, W, C = unpack(x.shape)
    -- x = x.view(B, H // window_size, window_size, W // window_size, window_size, C)
    x = x:view(B, floordiv(H, window_size), window_size, floordiv(W, window_size), window_size,
        C)
    -- windows = x.permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, window_size, window_size, C)
    local windows = x:permute(1, 2, 4, 3, 5, 6):contiguous():view(-1, window_size, window_size, C)
    return windows
end

-- def window_reverse(windows, window_size, H, W):
local function window_reverse(windows, window_size, H, W)
    -- B = int(windows.shape[0] / (H * W / window_size / window_size))
    local B = math.floor(windows.shape[1] / (H * W / window_size / window_size))
    -- x = windows.view(B, H // window_size, W // window_size, window_size, window_size, -1)
    local x = windows:view(B, floordiv(H, window_size), floordiv(W, window_size), window_size,
        window_size, -1)
    -- x = x.permute(0, 1, 3, 2, 4, 5).contiguous().view(B, H, W, -1)
    x = x:permute(1, 2, 4, 3, 5, 6):contiguous():view(B, H, W, -1)
    return x
end

-- class WindowAttention(nn.Module):
local WindowAttention = nn.Module:extend("WindowAttention")
-- def __init__(self, dim, window_size, num_heads, qkv_bias=True, qk_scale=None, attn_drop=0.,
--              proj_drop=0.):
function WindowAttention:init(dim, window_size, num_heads, qkv_bias, qk_scale, attn_drop,
                              proj_drop)
    if qkv_bias == nil then qkv_bias = true end
    self.dim = dim
    self.window_size = window_size -- Wh, Ww
    self.num_heads = num_heads
    -- head_dim = dim // num_heads
    local head_dim = floordiv(dim, num_heads)
    self.scale = qk_scale or head_dim ^ -0.5
    -- define a parameter table of relative position bias
    -- self.relative_position_bias_table = nn.Parameter(
    --     torch.zeros((2 * window_size[0] - 1) * (2 * window_size[1] - 1), num_heads))
    self.relative_position_bias_table = nn.Parameter(
        tide.zeros((2 * window_size[1] - 1) * (2 * window_size[2] - 1), num_heads))
    -- get pair-wise relative position index for each token inside the window
    -- coords_h = torch.arange(self.window_size[0])
    local coords_h = tide.arange(self.window_size[1])
    local coords_w = tide.arange(self.window_size[2])
    -- coords = torch.stack(torch.meshgrid([coords_h, coords_w]))  # 2, Wh, Ww
    local coords = tide.stack(tide.meshgrid({ coords_h, coords_w })) -- 2, Wh, Ww
    -- coords_flatten = torch.flatten(coords, 1)  # 2, Wh*Ww
    local coords_flatten = tide.flatten(coords, 2) -- 2, Wh*Ww
    -- relative_coords = coords_flatten[:, :, None] - coords_flatten[:, None, :]
    local relative_coords = coords_flatten[{ {}, {}, tide.newaxis }]
        - coords_flatten[{ {}, tide.newaxis, {} }] -- 2, Wh*Ww, Wh*Ww
    -- relative_coords = relative_coords.permute(1, 2, 0).contiguous()  # Wh*Ww, Wh*Ww, 2
    relative_coords = relative_coords:permute(2, 3, 1):contiguous() -- Wh*Ww, Wh*Ww, 2
    -- relative_coords[:, :, 0] += self.window_size[0] - 1  # shift to start from 0
    relative_coords[{ {}, {}, 1 }]:add_(self.window_size[1] - 1)
    -- relative_coords[:, :, 1] += self.window_size[1] - 1
    relative_coords[{ {}, {}, 2 }]:add_(self.window_size[2] - 1)
    -- relative_coords[:, :, 0] *= 2 * self.window_size[1] - 1
    relative_coords[{ {}, {}, 1 }]:mul_(2 * self.window_size[2] - 1)
    -- relative_position_index = relative_coords.sum(-1)  # Wh*Ww, Wh*Ww
    -- (+ 1: tide's index tensors are 1-based)
    local relative_position_index = relative_coords:sum(-1) + 1 -- Wh*Ww, Wh*Ww
    self:register_buffer("relative_position_index", relative_position_index)
    -- self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
    self.qkv = nn.Linear(dim, dim * 3, { bias = qkv_bias })
    self.attn_drop = nn.Dropout(attn_drop or 0)
    self.proj = nn.Linear(dim, dim)
    self.proj_drop = nn.Dropout(proj_drop or 0)
    -- trunc_normal_(self.relative_position_bias_table, std=.02)
    trunc_normal_(self.relative_position_bias_table, { std = .02 })
    -- self.softmax = nn.Softmax(dim=-1)
    self.softmax = nn.Softmax({ dim = -1 })
end

-- def forward(self, x, mask=None):
function WindowAttention:forward(x, mask)
    -- B_, N, C = x.shape
    local B_, N, C = unpack(x.shape)
    -- qkv = self.qkv(x).reshape(B_, N, 3, self.num_heads, C // self.num_heads)
    --     .permute(2, 0, 3, 1, 4)
    local qkv = self.qkv(x):reshape(B_, N, 3, self.num_heads, floordiv(C, self.num_heads))
        :permute(3, 1, 4, 2, 5)
    -- q, k, v = qkv[0], qkv[1], qkv[2]
    local q, k, v = qkv[1], qkv[2], qkv[3]
    q = q * self.scale
    -- attn = (q @ k.transpose(-2, -1))
    local attn = q:matmul(k:transpose(-2, -1))
    -- relative_position_bias = self.relative_position_bias_table[
    --     self.relative_position_index.view(-1)].view(
    --     self.window_size[0] * self.window_size[1], self.window_size[0] * self.window_size[1], -1)
    local relative_position_bias = self.relative_position_bias_table[
        self.relative_position_index:view(-1)]:view(
        self.window_size[1] * self.window_size[2], self.window_size[1] * self.window_size[2], -1)
    -- relative_position_bias = relative_position_bias.permute(2, 0, 1).contiguous()
    relative_position_bias = relative_position_bias:permute(3, 1, 2):contiguous() -- nH, N, N
    attn = attn + relative_position_bias:unsqueeze(1)
    if mask ~= nil then
        -- nW = mask.shape[0]
        local nW = mask.shape[1]
        -- attn = attn.view(B_ // nW, nW, self.num_heads, N, N) + mask.unsqueeze(1).unsqueeze(0)
        attn = attn:view(floordiv(B_, nW), nW, self.num_heads, N, N)
            + mask:unsqueeze(2):unsqueeze(1)
        attn = attn:view(-1, self.num_heads, N, N)
        attn = self.softmax(attn)
    else
        attn = self.softmax(attn)
    end
    attn = self.attn_drop(attn)
    -- x = (attn @ v).transpose(1, 2).reshape(B_, N, C)
    x = attn:matmul(v):transpose(2, 3):reshape(B_, N, C)
    x = self.proj(x)
    x = self.proj_drop(x)
    return x
end

-- def flops(self, N):
function WindowAttention:flops(N)
    local flops = 0
    flops = flops + N * self.dim * 3 * self.dim
    flops = flops + self.num_heads * N * floordiv(self.dim, self.num_heads) * N
    flops = flops + self.num_heads * N * N * floordiv(self.dim, self.num_heads)
    flops = flops + N * self.dim * self.dim
    return flops
end

-- class SwinTransformerBlock(nn.Module):
local SwinTransformerBlock = nn.Module:extend("SwinTransformerBlock")
-- def __init__(self, dim, input_resolution, num_heads, window_size=7, shift_size=0,
--              mlp_ratio=4., qkv_bias=True, qk_scale=None, drop=0., attn_drop=0., drop_path=0.,
--              act_layer=nn.GELU, norm_layer=nn.LayerNorm, fused_window_process=False):
-- (keyword arguments: one options table)
function SwinTransformerBlock:init(o)
    local dim, input_resolution, num_heads = o.dim, o.input_resolution, o.num_heads
    local window_size, shift_size, mlp_ratio = o.window_size or 7, o.shift_size or 0,
        o.mlp_ratio or 4.
    local qkv_bias = o.qkv_bias
    if qkv_bias == nil then qkv_bias = true end
    local drop, attn_drop, drop_path_ = o.drop or 0., o.attn_drop or 0., o.drop_path or 0.
    local act_layer, norm_layer = o.act_layer or nn.GELU, o.norm_layer or nn.LayerNorm
    self.dim = dim
    self.input_resolution = input_resolution
    self.num_heads = num_heads
    self.window_size = window_size
    self.shift_size = shift_size
    self.mlp_ratio = mlp_ratio
    -- if min(self.input_resolution) <= self.window_size:
    if math.min(unpack(self.input_resolution)) <= self.window_size then
        -- if window size is larger than input resolution, we don't partition windows
        self.shift_size = 0
        self.window_size = math.min(unpack(self.input_resolution))
    end
    assert(0 <= self.shift_size and self.shift_size < self.window_size,
        "shift_size must in 0-window_size")
    self.norm1 = norm_layer(dim)
    -- self.attn = WindowAttention(dim, window_size=to_2tuple(self.window_size), ...)
    self.attn = WindowAttention(dim, to_2tuple(self.window_size), num_heads, qkv_bias,
        o.qk_scale, attn_drop, drop)
    -- self.drop_path = DropPath(drop_path) if drop_path > 0. else nn.Identity()
    self.drop_path = drop_path_ > 0. and DropPath(drop_path_) or nn.Identity()
    self.norm2 = norm_layer(dim)
    -- mlp_hidden_dim = int(dim * mlp_ratio)
    local mlp_hidden_dim = math.floor(dim * mlp_ratio)
    -- self.mlp = Mlp(in_features=dim, hidden_features=mlp_hidden_dim, act_layer=act_layer,
    --                drop=drop)
    self.mlp = Mlp(dim, mlp_hidden_dim, nil, act_layer, drop)
    local attn_mask
    if self.shift_size > 0 then
        -- calculate attention mask for SW-MSA
        local H, W = unpack(self.input_resolution)
        -- img_mask = torch.zeros((1, H, W, 1))  # 1 H W 1
        local img_mask = tide.zeros({ 1, H, W, 1 }) -- 1 H W 1
        -- h_slices = (slice(0, -self.window_size),
        --             slice(-self.window_size, -self.shift_size),
        --             slice(-self.shift_size, None))
        -- (Python's a:b is tide's inclusive {a + 1, b}; a negative end -e is {.., -e - 1})
        local h_slices = { { 1, -self.window_size - 1 },
            { -self.window_size, -self.shift_size - 1 },
            { -self.shift_size, -1 } }
        local w_slices = { { 1, -self.window_size - 1 },
            { -self.window_size, -self.shift_size - 1 },
            { -self.shift_size, -1 } }
        local cnt = 0
        -- for h in h_slices:
        for _, h in ipairs(h_slices) do
            -- for w in w_slices:
            for _, w in ipairs(w_slices) do
                -- img_mask[:, h, w, :] = cnt
                img_mask[{ {}, h, w, {} }] = cnt
                cnt = cnt + 1
            end
        end
        -- nW, window_size, window_size, 1
        local mask_windows = window_partition(img_mask, self.window_size)
        mask_windows = mask_windows:view(-1, self.window_size * self.window_size)
        attn_mask = mask_windows:unsqueeze(2) - mask_windows:unsqueeze(3)
        -- attn_mask = attn_mask.masked_fill(attn_mask != 0, float(-100.0))
        --     .masked_fill(attn_mask == 0, float(0.0))
        attn_mask = attn_mask:masked_fill(attn_mask:ne(0), -100.0)
            :masked_fill(attn_mask:eq(0), 0.0)
    else
        attn_mask = nil
    end
    self:register_buffer("attn_mask", attn_mask)
    self.fused_window_process = o.fused_window_process or false
    assert(not self.fused_window_process) -- (the CUDA kernel path is not ported)
end

function SwinTransformerBlock:forward(x)
    -- H, W = self.input_resolution
    local H, W = unpack(self.input_resolution)
    -- B, L, C = x.shape
    local B, L, C = unpack(x.shape)
    assert(L == H * W, "input feature has wrong size")
    local shortcut = x
    x = self.norm1(x)
    x = x:view(B, H, W, C)
    local shifted_x, x_windows
    -- cyclic shift
    if self.shift_size > 0 then
        -- shifted_x = torch.roll(x, shifts=(-self.shift_size, -self.shift_size), dims=(1, 2))
        shifted_x = tide.roll(x, { -self.shift_size, -self.shift_size }, { 2, 3 })
        -- partition windows
        x_windows = window_partition(shifted_x, self.window_size)
    else
        shifted_x = x
        -- partition windows
        x_windows = window_partition(shifted_x, self.window_size)
    end
    -- nW*B, window_size*window_size, C
    x_windows = x_windows:view(-1, self.window_size * self.window_size, C)
    -- W-MSA/SW-MSA
    -- attn_windows = self.attn(x_windows, mask=self.attn_mask)
    local attn_windows = self.attn(x_windows, self.attn_mask)
    -- merge windows
    attn_windows = attn_windows:view(-1, self.window_size, self.window_size, C)
    -- reverse cyclic shift
    if self.shift_size > 0 then
        shifted_x = window_reverse(attn_windows, self.window_size, H, W) -- B H' W' C
        -- x = torch.roll(shifted_x, shifts=(self.shift_size, self.shift_size), dims=(1, 2))
        x = tide.roll(shifted_x, { self.shift_size, self.shift_size }, { 2, 3 })
    else
        shifted_x = window_reverse(attn_windows, self.window_size, H, W) -- B H' W' C
        x = shifted_x
    end
    x = x:view(B, H * W, C)
    x = shortcut + self.drop_path(x)
    -- FFN
    x = x + self.drop_path(self.mlp(self.norm2(x)))
    return x
end

-- class PatchMerging(nn.Module):
local PatchMerging = nn.Module:extend("PatchMerging")
-- def __init__(self, input_resolution, dim, norm_layer=nn.LayerNorm):
function PatchMerging:init(input_resolution, dim, norm_layer)
    norm_layer = norm_layer or nn.LayerNorm
    self.input_resolution = input_resolution
    self.dim = dim
    -- self.reduction = nn.Linear(4 * dim, 2 * dim, bias=False)
    self.reduction = nn.Linear(4 * dim, 2 * dim, { bias = false })
    self.norm = norm_layer(4 * dim)
end

function PatchMerging:forward(x)
    local H, W = unpack(self.input_resolution)
    local B, L, C = unpack(x.shape)
    assert(L == H * W, "input feature has wrong size")
    assert(H % 2 == 0 and W % 2 == 0, ("x size (%d*%d) are not even."):format(H, W))
    x = x:view(B, H, W, C)
    -- x0 = x[:, 0::2, 0::2, :]  # B H/2 W/2 C
    local x0 = x[{ {}, { 1, -1, 2 }, { 1, -1, 2 }, {} }] -- B H/2 W/2 C
    -- x1 = x[:, 1::2, 0::2, :]  # B H/2 W/2 C
    local x1 = x[{ {}, { 2, -1, 2 }, { 1, -1, 2 }, {} }] -- B H/2 W/2 C
    -- x2 = x[:, 0::2, 1::2, :]  # B H/2 W/2 C
    local x2 = x[{ {}, { 1, -1, 2 }, { 2, -1, 2 }, {} }] -- B H/2 W/2 C
    -- x3 = x[:, 1::2, 1::2, :]  # B H/2 W/2 C
    local x3 = x[{ {}, { 2, -1, 2 }, { 2, -1, 2 }, {} }] -- B H/2 W/2 C
    -- x = torch.cat([x0, x1, x2, x3], -1)  # B H/2 W/2 4*C
    x = tide.cat({ x0, x1, x2, x3 }, -1) -- B H/2 W/2 4*C
    x = x:view(B, -1, 4 * C) -- B H/2*W/2 4*C
    x = self.norm(x)
    x = self.reduction(x)
    return x
end

-- class BasicLayer(nn.Module):
local BasicLayer = nn.Module:extend("BasicLayer")
-- def __init__(self, dim, input_resolution, depth, num_heads, window_size,
--              mlp_ratio=4., qkv_bias=True, qk_scale=None, drop=0., attn_drop=0.,
--              drop_path=0., norm_layer=nn.LayerNorm, downsample=None, use_checkpoint=False,
--              fused_window_process=False):
-- (keyword arguments: one options table)
function BasicLayer:init(o)
    local dim, input_resolution, depth, window_size = o.dim, o.input_resolution, o.depth,
        o.window_size
    local drop_path_ = o.drop_path or 0.
    self.dim = dim
    self.input_resolution = input_resolution
    self.depth = depth
    self.use_checkpoint = o.use_checkpoint or false
    assert(not self.use_checkpoint) -- (torch.utils.checkpoint is not ported)
    -- build blocks
    -- self.blocks = nn.ModuleList([SwinTransformerBlock(...) for i in range(depth)])
    local blocks = {}
    for i = 0, depth - 1 do
        blocks[#blocks + 1] = SwinTransformerBlock({
            dim = dim, input_resolution = input_resolution,
            num_heads = o.num_heads, window_size = window_size,
            -- shift_size=0 if (i % 2 == 0) else window_size // 2,
            shift_size = (i % 2 == 0) and 0 or floordiv(window_size, 2),
            mlp_ratio = o.mlp_ratio,
            qkv_bias = o.qkv_bias, qk_scale = o.qk_scale,
            drop = o.drop, attn_drop = o.attn_drop,
            -- drop_path=drop_path[i] if isinstance(drop_path, list) else drop_path,
            drop_path = type(drop_path_) == "table" and drop_path_[i + 1] or drop_path_,
            norm_layer = o.norm_layer,
            fused_window_process = o.fused_window_process })
    end
    self.blocks = nn.ModuleList(blocks)
    -- patch merging layer
    if o.downsample ~= nil then
        -- self.downsample = downsample(input_resolution, dim=dim, norm_layer=norm_layer)
        self.downsample = o.downsample(input_resolution, dim, o.norm_layer)
    else
        self.downsample = nil
    end
end

function BasicLayer:forward(x)
    -- for blk in self.blocks:
    for _, blk in ipairs(self.blocks) do
        x = blk(x)
    end
    if self.downsample ~= nil then
        x = self.downsample(x)
    end
    return x
end

-- class PatchEmbed(nn.Module):
local PatchEmbed = nn.Module:extend("PatchEmbed")
-- def __init__(self, img_size=224, patch_size=4, in_chans=3, embed_dim=96, norm_layer=None):
function PatchEmbed:init(img_size, patch_size, in_chans, embed_dim, norm_layer)
    img_size = to_2tuple(img_size or 224)
    patch_size = to_2tuple(patch_size or 4)
    -- patches_resolution = [img_size[0] // patch_size[0], img_size[1] // patch_size[1]]
    local patches_resolution = { floordiv(img_size[1], patch_size[1]),
        floordiv(img_size[2], patch_size[2]) }
    self.img_size = img_size
    self.patch_size = patch_size
    self.patches_resolution = patches_resolution
    self.num_patches = patches_resolution[1] * patches_resolution[2]
    self.in_chans = in_chans or 3
    self.embed_dim = embed_dim or 96
    -- self.proj = nn.Conv2d(in_chans, embed_dim, kernel_size=patch_size, stride=patch_size)
    self.proj = nn.Conv2d(self.in_chans, self.embed_dim,
        { kernel_size = patch_size, stride = patch_size })
    if norm_layer ~= nil then
        self.norm = norm_layer(self.embed_dim)
    else
        self.norm = nil
    end
end

function PatchEmbed:forward(x)
    -- B, C, H, W = x.shape
    local _, _, H, W = unpack(x.shape)
    assert(H == self.img_size[1] and W == self.img_size[2],
        ("Input image size (%d*%d) doesn't match model (%d*%d)."):format(H, W,
            self.img_size[1], self.img_size[2]))
    -- x = self.proj(x).flatten(2).transpose(1, 2)  # B Ph*Pw C
    x = self.proj(x):flatten(3):transpose(2, 3) -- B Ph*Pw C
    if self.norm ~= nil then
        x = self.norm(x)
    end
    return x
end

-- class SwinTransformer(nn.Module):
local SwinTransformer = nn.Module:extend("SwinTransformer")
-- def __init__(self, img_size=224, patch_size=4, in_chans=3, num_classes=1000,
--              embed_dim=96, depths=[2, 2, 6, 2], num_heads=[3, 6, 12, 24],
--              window_size=7, mlp_ratio=4., qkv_bias=True, qk_scale=None,
--              drop_rate=0., attn_drop_rate=0., drop_path_rate=0.1,
--              norm_layer=nn.LayerNorm, ape=False, patch_norm=True,
--              use_checkpoint=False, fused_window_process=False, **kwargs):
-- (keyword arguments: one options table)
function SwinTransformer:init(o)
    local img_size, patch_size, in_chans = o.img_size or 224, o.patch_size or 4, o.in_chans or 3
    local num_classes, embed_dim = o.num_classes or 1000, o.embed_dim or 96
    local depths, num_heads = o.depths or { 2, 2, 6, 2 }, o.num_heads or { 3, 6, 12, 24 }
    local window_size, drop_rate = o.window_size or 7, o.drop_rate or 0.
    local drop_path_rate = o.drop_path_rate or 0.1
    local norm_layer = o.norm_layer or nn.LayerNorm
    local patch_norm = o.patch_norm
    if patch_norm == nil then patch_norm = true end
    self.num_classes = num_classes
    self.num_layers = #depths
    self.embed_dim = embed_dim
    self.ape = o.ape or false
    self.patch_norm = patch_norm
    -- self.num_features = int(embed_dim * 2 ** (self.num_layers - 1))
    self.num_features = math.floor(embed_dim * 2 ^ (self.num_layers - 1))
    self.mlp_ratio = o.mlp_ratio or 4.
    -- split image into non-overlapping patches
    -- self.patch_embed = PatchEmbed(img_size=img_size, patch_size=patch_size, in_chans=in_chans,
    --     embed_dim=embed_dim, norm_layer=norm_layer if self.patch_norm else None)
    self.patch_embed = PatchEmbed(img_size, patch_size, in_chans, embed_dim,
        self.patch_norm and norm_layer or nil)
    local num_patches = self.patch_embed.num_patches
    local patches_resolution = self.patch_embed.patches_resolution
    self.patches_resolution = patches_resolution
    -- absolute position embedding
    if self.ape then
        self.absolute_pos_embed = nn.Parameter(tide.zeros(1, num_patches, embed_dim))
        trunc_normal_(self.absolute_pos_embed, { std = .02 })
    end
    -- self.pos_drop = nn.Dropout(p=drop_rate)
    self.pos_drop = nn.Dropout({ p = drop_rate })
    -- stochastic depth
    -- dpr = [x.item() for x in torch.linspace(0, drop_path_rate, sum(depths))]
    local sum_depths = 0
    for _, d in ipairs(depths) do sum_depths = sum_depths + d end
    local dpr = {}
    for _, x in ipairs(tide.linspace(0, drop_path_rate, sum_depths):unbind()) do
        dpr[#dpr + 1] = x:item()
    end
    -- build layers
    self.layers = nn.ModuleList()
    local start = 0
    -- for i_layer in range(self.num_layers):
    for i_layer = 0, self.num_layers - 1 do
        -- drop_path=dpr[sum(depths[:i_layer]):sum(depths[:i_layer + 1])],
        local layer_dpr = { unpack(dpr, start + 1, start + depths[i_layer + 1]) }
        start = start + depths[i_layer + 1]
        local layer = BasicLayer({
            dim = math.floor(embed_dim * 2 ^ i_layer),
            input_resolution = { floordiv(patches_resolution[1], 2 ^ i_layer),
                floordiv(patches_resolution[2], 2 ^ i_layer) },
            depth = depths[i_layer + 1],
            num_heads = num_heads[i_layer + 1],
            window_size = window_size,
            mlp_ratio = self.mlp_ratio,
            qkv_bias = o.qkv_bias, qk_scale = o.qk_scale,
            drop = drop_rate, attn_drop = o.attn_drop_rate or 0.,
            drop_path = layer_dpr,
            norm_layer = norm_layer,
            -- downsample=PatchMerging if (i_layer < self.num_layers - 1) else None,
            downsample = (i_layer < self.num_layers - 1) and PatchMerging or nil,
            use_checkpoint = o.use_checkpoint,
            fused_window_process = o.fused_window_process })
        self.layers:append(layer)
    end
    self.norm = norm_layer(self.num_features)
    self.avgpool = nn.AdaptiveAvgPool1d(1)
    -- self.head = nn.Linear(self.num_features, num_classes) if num_classes > 0 else nn.Identity()
    self.head = num_classes > 0 and nn.Linear(self.num_features, num_classes) or nn.Identity()
    -- self.apply(self._init_weights)
    self:apply(function(m) self:_init_weights(m) end)
end

function SwinTransformer:_init_weights(m)
    -- if isinstance(m, nn.Linear):
    if tide.isinstance(m, nn.Linear) then
        trunc_normal_(m.weight, { std = .02 })
        if tide.isinstance(m, nn.Linear) and m.bias ~= nil then
            nn.init.constant_(m.bias, 0)
        end
    elseif tide.isinstance(m, nn.LayerNorm) then
        nn.init.constant_(m.bias, 0)
        nn.init.constant_(m.weight, 1.0)
    end
end

-- def no_weight_decay(self): return {'absolute_pos_embed'}
function SwinTransformer:no_weight_decay()
    return { absolute_pos_embed = true }
end

-- def no_weight_decay_keywords(self): return {'relative_position_bias_table'}
function SwinTransformer:no_weight_decay_keywords()
    return { relative_position_bias_table = true }
end

function SwinTransformer:forward_features(x)
    x = self.patch_embed(x)
    if self.ape then
        x = x + self.absolute_pos_embed
    end
    x = self.pos_drop(x)
    -- for layer in self.layers:
    for _, layer in ipairs(self.layers) do
        x = layer(x)
    end
    x = self.norm(x) -- B L C
    -- x = self.avgpool(x.transpose(1, 2))  # B C 1
    x = self.avgpool(x:transpose(2, 3)) -- B C 1
    -- x = torch.flatten(x, 1)
    x = tide.flatten(x, 2)
    return x
end

function SwinTransformer:forward(x)
    x = self:forward_features(x)
    x = self.head(x)
    return x
end

-- the tiny configuration of this port
local function tiny(extra)
    local o = { img_size = 16, patch_size = 2, in_chans = 3, num_classes = 5, embed_dim = 8,
        depths = { 2, 2 }, num_heads = { 2, 4 }, window_size = 4 }
    for k, v in pairs(extra or {}) do o[k] = v end
    return SwinTransformer(o)
end

-- p = 0.3 * sin(0.37 * i + 1.1 * k): parameter k (0-based, named_parameters order), element i
local function fill_weights(model)
    tide.no_grad(function()
        local k = 0
        for _, p in ipairs(model:parameters()) do
            local i = tide.arange(p:numel()):float()
            p:copy_((0.3 * tide.sin(0.37 * i + 1.1 * k)):view(p.shape))
            k = k + 1
        end
    end)
end

describe("microsoft/Swin-Transformer models/swin_transformer.py", function()
    it("window_partition / window_reverse round trip, relative_position_index, attn_mask",
        function()
            local x = tide.arange(2 * 8 * 8 * 3):float():view(2, 8, 8, 3)
            local w = window_partition(x, 4)
            assert.are.same({ 8, 4, 4, 3 }, w.shape)
            -- window 2 of image 1 is rows 1..4, cols 5..8
            assert.is_true(tide.equal(w[2], x[{ 1, { 1, 4 }, { 5, 8 } }]))
            assert.is_true(tide.equal(window_reverse(w, 4, 8, 8), x))

            local m = tiny()
            local rpi = m.layers[1].blocks[1].attn.relative_position_index
            assert.are.same({ 16, 16 }, rpi.shape)
            assert.are.equal("int64", rpi.dtype)
            -- PyTorch 1.13's rows 1 and 16 (0-based values, so + 1 here)
            local want1 = { 24, 23, 22, 21, 17, 16, 15, 14, 10, 9, 8, 7, 3, 2, 1, 0 }
            local want16 = { 48, 47, 46, 45, 41, 40, 39, 38, 34, 33, 32, 31, 27, 26, 25, 24 }
            for j = 1, 16 do
                want1[j], want16[j] = want1[j] + 1, want16[j] + 1
            end
            assert.are.same(want1, rpi[1]:tolist())
            assert.are.same(want16, rpi[16]:tolist())
            -- each row is row 1 shifted: rpi[i][j] = base + 7 * dh + dw
            assert.are.same({ 25, 26, 27, 28, 32, 33, 34, 35, 39, 40, 41, 42, 46, 47, 48, 49 },
                rpi[{ {}, 1 }]:tolist())

            -- the first block is W-MSA (no mask), the second SW-MSA; layer 2's 4x4 resolution
            -- equals the window: no shift, no mask
            assert.is_nil(m.layers[1].blocks[1].attn_mask)
            assert.is_nil(m.layers[2].blocks[2].attn_mask)
            assert.are.equal(4, m.layers[2].blocks[2].window_size)
            assert.are.equal(0, m.layers[2].blocks[2].shift_size)
            local am = m.layers[1].blocks[2].attn_mask
            assert.are.same({ 4, 16, 16 }, am.shape)
            -- PyTorch: (attn_mask != 0).sum(dim=(1, 2)), attn_mask[1, 0], attn_mask[3, 5]
            assert.are.same({ 0, 128, 128, 192 }, am:ne(0):sum({ 2, 3 }):tolist())
            local a, b = 0.0, -100.0
            assert.are.same({ a, a, b, b, a, a, b, b, a, a, b, b, a, a, b, b },
                am[{ 2, 1 }]:tolist())
            assert.are.same({ a, a, b, b, a, a, b, b, b, b, b, b, b, b, b, b },
                am[{ 4, 6 }]:tolist())
            -- the buffers are registered: named_buffers lists the mask and both layers' indices
            local names = {}
            for _, nv in ipairs(m:named_buffers()) do names[#names + 1] = nv[1] end
            -- (PyTorch's names, with tide's 1-based ModuleList keys: layers.0.blocks.0 is 1.1)
            assert.are.same({ "layers.1.blocks.1.attn.relative_position_index",
                "layers.1.blocks.2.attn_mask", "layers.1.blocks.2.attn.relative_position_index",
                "layers.2.blocks.1.attn.relative_position_index",
                "layers.2.blocks.2.attn.relative_position_index" }, names)
        end)

    it("the forward matches PyTorch 1.13 for the same weights; shapes at every stage", function()
        tide.manual_seed(0)
        local m = tiny({ drop_path_rate = 0.0 })
        m:eval()
        -- _init_weights: Linear weights trunc_normal_(std=.02), biases 0; LayerNorm 1 and 0
        -- (timm's a=-2, b=2 are absolute, so std=.02 cuts nothing in practice)
        assert.are.equal(0, m.head.bias:abs():sum():item())
        local sd = m.layers[1].blocks[1].mlp.fc1.weight:std():item()
        assert.is_true(sd > 0.015 and sd < 0.025, "fc1 weight std " .. sd)
        assert.is_true(m.norm.weight:eq(1):all():item())
        local rpb = m.layers[1].blocks[1].attn.relative_position_bias_table
        assert.are.same({ 49, 2 }, rpb.shape)
        assert.is_true(rpb:abs():max():item() < 0.1 and rpb:std():item() > 0.01)
        assert.are.equal(63, #m:parameters())
        fill_weights(m)
        -- x = (torch.arange(2*3*16*16, dtype=torch.float32) * 0.37).sin().view(2, 3, 16, 16)
        local x = (tide.arange(2 * 3 * 16 * 16):float() * 0.37):sin():view(2, 3, 16, 16)
        -- x[1] = x[1] * 2 - 0.5
        x[2] = x[2] * 2 - 0.5
        local pe = m.patch_embed(x)
        assert.are.same({ 2, 64, 8 }, pe.shape)
        local h = m.layers[1].blocks[1](pe)
        assert.are.same({ 2, 64, 8 }, h.shape)
        h = m.layers[1](pe)
        assert.are.same({ 2, 16, 16 }, h.shape)
        -- PyTorch: h.sum(), (h * h).sum()
        assert.is_true(ported.close(h:sum():item(), 13.956127166748047, 1e-4))
        assert.is_true(ported.close((h * h):sum():item(), 317.0570068359375, 1e-4))
        assert.are.same({ 2, 16, 16 }, m.layers[2](h).shape)
        local f = m:forward_features(x)
        assert.are.same({ 2, 16 }, f.shape)
        local want_f = tide.tensor({
            { 0.2303531, -0.2536233, -0.2899185, -0.2835907, -0.5251644, -0.3714819, -0.003333,
                -0.1769254, -0.3676395, 0.0687249, 0.4131166, 0.2909312, 0.3442385, 0.4336796,
                0.0576013, -0.1245033 },
            { 0.2281982, -0.2551422, -0.2902512, -0.2835922, -0.5252234, -0.371585, -0.003824,
                -0.1774909, -0.3674602, 0.0692324, 0.4130402, 0.2907217, 0.3446342, 0.4343109,
                0.0580543, -0.1243433 } })
        assert.is_true(tide.allclose(f, want_f, { atol = 2e-6, rtol = 1e-5 }))
        -- the rows differ as PyTorch's do (the check above is not just the shared part)
        assert.is_true(tide.allclose(f[2] - f[1], want_f[2] - want_f[1], { atol = 4e-6 }))
        local y = m(x)
        assert.are.same({ 2, 5 }, y.shape)
        local want_y = tide.tensor({
            { 0.2522649, 0.547695, 0.7724303, 0.8966527, 0.9036132 },
            { 0.2535239, 0.549013, 0.7736345, 0.8975865, 0.9041545 } })
        assert.is_true(tide.allclose(y, want_y, { atol = 2e-6, rtol = 1e-5 }))
    end)

    it("trains two steps with CrossEntropyLoss and AdamW; DropPath in training", function()
        tide.manual_seed(0)
        local m = tiny({ drop_path_rate = 0.1 })
        -- dpr = torch.linspace(0, 0.1, 4): block 1 gets an Identity, the others DropPath
        assert.is_true(tide.isinstance(m.layers[1].blocks[1].drop_path, nn.Identity))
        local dp = m.layers[2].blocks[2].drop_path
        assert.is_true(tide.isinstance(dp, DropPath))
        assert.is_true(ported.close(dp.drop_prob, 0.1, 1e-6))
        assert.is_true(ported.close(m.layers[1].blocks[2].drop_path.drop_prob, 0.1 / 3, 1e-6))
        -- drop_path keeps whole samples, scaled by 1 / keep_prob, or zeroes them
        local ones = tide.ones(64, 3, 2)
        local d = drop_path(ones, 0.5, true)
        local per = d:sum({ 2, 3 })
        assert.is_true(per:eq(0):logical_or(per:eq(12)):all():item())
        assert.is_true(tide.equal(drop_path(ones, 0.5, false), ones))

        m:train()
        local criterion = nn.CrossEntropyLoss()
        -- optimizer = optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.05)
        local optimizer = optim.AdamW(m:parameters(), { lr = 1e-2, weight_decay = 0.05 })
        local x = tide.randn(4, 3, 16, 16)
        local target = tide.tensor({ 1, 2, 3, 5 })
        local losses = {}
        for step = 1, 3 do
            optimizer:zero_grad()
            local loss = criterion(m(x), target)
            loss:backward()
            optimizer:step()
            losses[step] = loss:item()
            assert_finite(losses[step], "loss")
        end
        assert.is_true(losses[3] < losses[1])
        -- a gradient reached the relative position bias through the gathered index
        local g = m.layers[1].blocks[2].attn.relative_position_bias_table.grad
        assert.is_true(g ~= nil and g:abs():sum():item() > 0)
    end)
end)
