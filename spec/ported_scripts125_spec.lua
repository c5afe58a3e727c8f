-- ported_scripts125_spec.lua — facebookresearch/dinov2's vision transformer: dinov2/layers/
-- (patch_embed.py PatchEmbed and make_2tuple, layer_scale.py LayerScale, mlp.py Mlp,
-- swiglu_ffn.py SwiGLUFFN / SwiGLUFFNFused as xformers-less, attention.py Attention and
-- MemEffAttention's plain path, drop_path.py drop_path / DropPath, block.py Block with
-- drop_add_residual_stochastic_depth) and dinov2/models/vision_transformer.py
-- (DinoVisionTransformer: cls and register tokens, pos_embed, interpolate_pos_encoding with
-- bicubic interpolate by scale_factor, prepare_tokens_with_masks, forward_features,
-- get_intermediate_layers chunked and not, init_weights), ported line for line at tiny sizes.
-- Checked against PyTorch 1.13 (no xformers; its 1.13 has no F.scaled_dot_product_attention,
-- so the reference script writes that op's math) for the same weights (a formula over each
-- parameter's index in named_parameters order). The Python line stands above each Lua line
-- that differs. Python's keyword arguments are an options table; block indices given to
-- get_intermediate_layers are 1-based.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim

local ported = require("spec.support.ported")
local assert_close_list = ported.assert_close_list

local unpack = table.unpack or unpack -- luacheck: ignore

-- Python's a // b on integers (Lua 5.1 and LuaJIT have no //)
local function fdiv(a, b)
    return math.floor(a / b)
end

local function default(v, d)
    if v == nil then return d end
    return v
end

---------------------------------------------------------------------------------------------
-- 1. dinov2/layers
---------------------------------------------------------------------------------------------
-- def make_2tuple(x):
local function make_2tuple(x)
    -- if isinstance(x, tuple):
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
function PatchEmbed:init(o)
    o = o or {}
    local img_size, patch_size = o.img_size or 224, o.patch_size or 16
    local in_chans, embed_dim = o.in_chans or 3, o.embed_dim or 768
    local image_HW = make_2tuple(img_size)
    local patch_HW = make_2tuple(patch_size)
    -- patch_grid_size = (image_HW[0] // patch_HW[0], image_HW[1] // patch_HW[1])
    local patch_grid_size = { fdiv(image_HW[1], patch_HW[1]), fdiv(image_HW[2], patch_HW[2]) }
    self.img_size = image_HW
    self.patch_size = patch_HW
    self.patches_resolution = patch_grid_size
    self.num_patches = patch_grid_size[1] * patch_grid_size[2]
    self.in_chans = in_chans
    self.embed_dim = embed_dim
    self.flatten_embedding = default(o.flatten_embedding, true)
    -- self.proj = nn.Conv2d(in_chans, embed_dim, kernel_size=patch_HW, stride=patch_HW)
    self.proj = nn.Conv2d(in_chans, embed_dim, { kernel_size = patch_HW, stride = patch_HW })
    -- self.norm = norm_layer(embed_dim) if norm_layer else nn.Identity()
    self.norm = o.norm_layer and o.norm_layer(embed_dim) or nn.Identity()
end

function PatchEmbed:forward(x)
    -- _, _, H, W = x.shape
    local H, W = x:size(3), x:size(4)
    local patch_H, patch_W = self.patch_size[1], self.patch_size[2]
    assert(H % patch_H == 0, ("Input image height %d is not a multiple of patch height %d")
        :format(H, patch_H))
    assert(W % patch_W == 0, ("Input image width %d is not a multiple of patch width: %d")
        :format(W, patch_W))
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

-- class LayerScale(nn.Module):
local LayerScale = nn.Module:extend("LayerScale")
function LayerScale:init(dim, o)
    o = o or {}
    self.inplace = o.inplace or false
    self.init_values = o.init_values or 1e-5
    -- self.gamma = nn.Parameter(torch.empty(dim, device=device, dtype=dtype))
    self.gamma = nn.Parameter(tide.empty(dim))
    self:reset_parameters()
end

function LayerScale:reset_parameters()
    nn.init.constant_(self.gamma, self.init_values)
end

function LayerScale:forward(x)
    -- return x.mul_(self.gamma) if self.inplace else x * self.gamma
    return self.inplace and x:mul_(self.gamma) or x * self.gamma
end

-- class Mlp(nn.Module):
local Mlp = nn.Module:extend("Mlp")
function Mlp:init(o)
    local in_features = o.in_features
    -- out_features = out_features or in_features
    local out_features = o.out_features or in_features
    local hidden_features = o.hidden_features or in_features
    local bias = default(o.bias, true)
    -- self.fc1 = nn.Linear(in_features, hidden_features, bias=bias)
    self.fc1 = nn.Linear(in_features, hidden_features, { bias = bias })
    -- self.act = act_layer()
    self.act = (o.act_layer or nn.GELU)()
    self.fc2 = nn.Linear(hidden_features, out_features, { bias = bias })
    self.drop = nn.Dropout(o.drop or 0.0)
end

function Mlp:forward(x)
    x = self.fc1(x)
    x = self.act(x)
    x = self.drop(x)
    x = self.fc2(x)
    x = self.drop(x)
    return x
end

-- class SwiGLUFFN(nn.Module):
local SwiGLUFFN = nn.Module:extend("SwiGLUFFN")
function SwiGLUFFN:init(o)
    local in_features = o.in_features
    local out_features = o.out_features or in_features
    local hidden_features = o.hidden_features or in_features
    local bias = default(o.bias, true)
    -- self.w12 = nn.Linear(in_features, 2 * hidden_features, bias=bias)
    self.w12 = nn.Linear(in_features, 2 * hidden_features, { bias = bias })
    self.w3 = nn.Linear(hidden_features, out_features, { bias = bias })
end

function SwiGLUFFN:forward(x)
    local x12 = self.w12(x)
    -- x1, x2 = x12.chunk(2, dim=-1)
    local x1, x2 = unpack(x12:chunk(2, -1))
    local hidden = F.silu(x1) * x2
    return self.w3(hidden)
end

-- except ImportError: SwiGLU = SwiGLUFFN (xformers is absent)
local SwiGLU = SwiGLUFFN

-- class SwiGLUFFNFused(SwiGLU):
local SwiGLUFFNFused = SwiGLU:extend("SwiGLUFFNFused")
function SwiGLUFFNFused:init(o)
    local out_features = o.out_features or o.in_features
    local hidden_features = o.hidden_features or o.in_features
    -- hidden_features = (int(hidden_features * 2 / 3) + 7) // 8 * 8
    hidden_features = fdiv(math.floor(hidden_features * 2 / 3) + 7, 8) * 8
    -- super().__init__(in_features=..., hidden_features=..., out_features=..., bias=bias)
    SwiGLU.init(self, { in_features = o.in_features, hidden_features = hidden_features,
        out_features = out_features, bias = o.bias })
end

-- class Attention(nn.Module):
local Attention = nn.Module:extend("Attention")
function Attention:init(dim, o)
    o = o or {}
    self.dim = dim
    self.num_heads = o.num_heads or 8
    -- head_dim = dim // num_heads
    local head_dim = fdiv(dim, self.num_heads)
    self.scale = head_dim ^ -0.5
    -- self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
    self.qkv = nn.Linear(dim, dim * 3, { bias = o.qkv_bias or false })
    self.attn_drop = o.attn_drop or 0.0
    self.proj = nn.Linear(dim, dim, { bias = default(o.proj_bias, true) })
    self.proj_drop = nn.Dropout(o.proj_drop or 0.0)
end

function Attention:forward(x, is_causal)
    -- B, N, C = x.shape
    local B, N, C = x:size(1), x:size(2), x:size(3)
    -- qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, C // self.num_heads)
    local qkv = self.qkv(x):reshape(B, N, 3, self.num_heads, fdiv(C, self.num_heads))
    -- q, k, v = torch.unbind(qkv, 2)
    local q, k, v = unpack(tide.unbind(qkv, 3))
    -- q, k, v = [t.transpose(1, 2) for t in [q, k, v]]
    q, k, v = q:transpose(2, 3), k:transpose(2, 3), v:transpose(2, 3)
    -- x = nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=None,
    --     dropout_p=self.attn_drop if self.training else 0, is_causal=is_causal)
    x = F.scaled_dot_product_attention(q, k, v, { attn_mask = nil,
        dropout_p = self.training and self.attn_drop or 0, is_causal = is_causal or false })
    -- x = x.transpose(1, 2).contiguous().view(B, N, C)
    x = x:transpose(2, 3):contiguous():view(B, N, C)
    x = self.proj_drop(self.proj(x))
    return x
end

-- class MemEffAttention(Attention):
local MemEffAttention = Attention:extend("MemEffAttention")
function MemEffAttention:forward(x, attn_bias)
    -- if not XFORMERS_AVAILABLE: (the only path here)
    if attn_bias ~= nil then
        error("xFormers is required for using nested tensors")
    end
    return Attention.forward(self, x)
end

-- def drop_path(x, drop_prob: float = 0.0, training: bool = False):
local function drop_path(x, drop_prob, training)
    drop_prob = drop_prob or 0.0
    if drop_prob == 0.0 or not training then
        return x
    end
    local keep_prob = 1 - drop_prob
    -- shape = (x.shape[0],) + (1,) * (x.ndim - 1)
    local shape = { x:size(1) }
    for i = 2, x.ndim do shape[i] = 1 end
    -- random_tensor = x.new_empty(shape).bernoulli_(keep_prob)
    local random_tensor = x:new_empty(shape):bernoulli_(keep_prob)
    if keep_prob > 0.0 then
        random_tensor:div_(keep_prob)
    end
    local output = x * random_tensor
    return output
end

-- class DropPath(nn.Module):
local DropPath = nn.Module:extend("DropPath")
function DropPath:init(drop_prob)
    self.drop_prob = drop_prob
end

function DropPath:forward(x)
    return drop_path(x, self.drop_prob, self.training)
end

-- def drop_add_residual_stochastic_depth(x, residual_func, sample_drop_ratio=0.0):
local function drop_add_residual_stochastic_depth(x, residual_func, sample_drop_ratio)
    sample_drop_ratio = sample_drop_ratio or 0.0
    -- 1) extract subset using permutation
    -- b, n, d = x.shape
    local b = x:size(1)
    -- sample_subset_size = max(int(b * (1 - sample_drop_ratio)), 1)
    local sample_subset_size = math.max(math.floor(b * (1 - sample_drop_ratio)), 1)
    -- brange = (torch.randperm(b, device=x.device))[:sample_subset_size]
    local brange = tide.randperm(b, { device = x.device })[{ { 1, sample_subset_size } }]
    local x_subset = x[brange]
    -- 2) apply residual_func to get residual
    local residual = residual_func(x_subset)
    local x_flat = x:flatten(2)
    residual = residual:flatten(2)
    local residual_scale_factor = b / sample_subset_size
    -- 3) add the residual
    -- x_plus_residual = torch.index_add(x_flat, 0, brange, residual.to(dtype=x.dtype),
    --     alpha=residual_scale_factor)
    local x_plus_residual = tide.index_add(x_flat, 1, brange, residual:to(x.dtype),
        { alpha = residual_scale_factor })
    return x_plus_residual:view_as(x)
end

-- class Block(nn.Module):
local Block = nn.Module:extend("Block")
function Block:init(o)
    local dim, num_heads = o.dim, o.num_heads
    local mlp_ratio, drop = o.mlp_ratio or 4.0, o.drop or 0.0
    local init_values, dp = o.init_values, o.drop_path or 0.0
    local norm_layer = o.norm_layer or nn.LayerNorm
    local attn_class, ffn_layer = o.attn_class or Attention, o.ffn_layer or Mlp
    self.norm1 = norm_layer(dim)
    -- self.attn = attn_class(dim, num_heads=num_heads, qkv_bias=qkv_bias, ...)
    self.attn = attn_class(dim, { num_heads = num_heads, qkv_bias = o.qkv_bias or false,
        proj_bias = default(o.proj_bias, true), attn_drop = o.attn_drop or 0.0,
        proj_drop = drop })
    -- self.ls1 = LayerScale(dim, init_values=init_values) if init_values else nn.Identity()
    self.ls1 = (init_values and init_values ~= 0) and
        LayerScale(dim, { init_values = init_values }) or nn.Identity()
    -- self.drop_path1 = DropPath(drop_path) if drop_path > 0.0 else nn.Identity()
    self.drop_path1 = dp > 0.0 and DropPath(dp) or nn.Identity()
    self.norm2 = norm_layer(dim)
    -- mlp_hidden_dim = int(dim * mlp_ratio)
    local mlp_hidden_dim = math.floor(dim * mlp_ratio)
    self.mlp = ffn_layer({ in_features = dim, hidden_features = mlp_hidden_dim,
        act_layer = o.act_layer or nn.GELU, drop = drop, bias = default(o.ffn_bias, true) })
    self.ls2 = (init_values and init_values ~= 0) and
        LayerScale(dim, { init_values = init_values }) or nn.Identity()
    self.drop_path2 = dp > 0.0 and DropPath(dp) or nn.Identity()
    self.sample_drop_ratio = dp
end

function Block:forward(x)
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

-- class NestedTensorBlock(Block): a list input needs xformers; a tensor is Block's forward
local NestedTensorBlock = Block:extend("NestedTensorBlock")
function NestedTensorBlock:forward(x_or_x_list)
    if tide.is_tensor(x_or_x_list) then
        return Block.forward(self, x_or_x_list)
    end
    error("xFormers is required for using nested tensors")
end

---------------------------------------------------------------------------------------------
-- 2. dinov2/models/vision_transformer.py
---------------------------------------------------------------------------------------------
-- def named_apply(fn, module, name="", depth_first=True, include_root=False):
local function named_apply(fn, module, name, depth_first, include_root)
    name = name or ""
    depth_first = default(depth_first, true)
    if not depth_first and include_root then
        fn(module, name)
    end
    -- for child_name, child_module in module.named_children():
    for _, nc in ipairs(module:named_children()) do
        local child_name, child_module = nc[1], nc[2]
        -- child_name = ".".join((name, child_name)) if name else child_name
        child_name = name ~= "" and (name .. "." .. child_name) or child_name
        named_apply(fn, child_module, child_name, depth_first, true)
    end
    if depth_first and include_root then
        fn(module, name)
    end
    return module
end

-- class BlockChunk(nn.ModuleList):
local BlockChunk = nn.ModuleList:extend("BlockChunk")
function BlockChunk:forward(x)
    for _, b in ipairs(self) do
        x = b(x)
    end
    return x
end

-- def init_weights_vit_timm(module: nn.Module, name: str = ""):
local function init_weights_vit_timm(module, _)
    -- if isinstance(module, nn.Linear):
    if module.__class__ == nn.Linear then
        nn.init.trunc_normal_(module.weight, { std = 0.02 })
        if module.bias ~= nil then
            nn.init.zeros_(module.bias)
        end
    end
end

-- class DinoVisionTransformer(nn.Module):
local DinoVisionTransformer = nn.Module:extend("DinoVisionTransformer")
function DinoVisionTransformer:init(o)
    o = o or {}
    local img_size, patch_size, in_chans = o.img_size or 224, o.patch_size or 16, o.in_chans or 3
    local embed_dim, depth, num_heads = o.embed_dim or 768, o.depth or 12, o.num_heads or 12
    local drop_path_rate = o.drop_path_rate or 0.0
    local embed_layer, block_fn = o.embed_layer or PatchEmbed, o.block_fn or NestedTensorBlock
    local ffn_layer = o.ffn_layer or "mlp"
    local block_chunks = default(o.block_chunks, 1)
    local num_register_tokens = o.num_register_tokens or 0
    -- norm_layer = partial(nn.LayerNorm, eps=1e-6)
    local norm_layer = tide.utils.partial(nn.LayerNorm, { eps = 1e-6 })
    -- self.num_features = self.embed_dim = embed_dim
    self.num_features, self.embed_dim = embed_dim, embed_dim
    self.num_tokens = 1
    self.n_blocks = depth
    self.num_heads = num_heads
    self.patch_size = patch_size
    self.num_register_tokens = num_register_tokens
    self.interpolate_antialias = o.interpolate_antialias or false
    self.interpolate_offset = default(o.interpolate_offset, 0.1)
    -- self.patch_embed = embed_layer(img_size=img_size, patch_size=patch_size, ...)
    self.patch_embed = embed_layer({ img_size = img_size, patch_size = patch_size,
        in_chans = in_chans, embed_dim = embed_dim })
    local num_patches = self.patch_embed.num_patches
    self.cls_token = nn.Parameter(tide.zeros(1, 1, embed_dim))
    self.pos_embed = nn.Parameter(tide.zeros(1, num_patches + self.num_tokens, embed_dim))
    assert(num_register_tokens >= 0)
    -- self.register_tokens = nn.Parameter(...) if num_register_tokens else None
    if num_register_tokens > 0 then
        self.register_tokens = nn.Parameter(tide.zeros(1, num_register_tokens, embed_dim))
    end
    local dpr = {}
    if o.drop_path_uniform == true then
        for i = 1, depth do dpr[i] = drop_path_rate end
    else
        -- dpr = np.linspace(0, drop_path_rate, depth).tolist()
        for i = 1, depth do
            dpr[i] = depth > 1 and drop_path_rate * (i - 1) / (depth - 1) or 0.0
        end
    end
    if ffn_layer == "mlp" then
        ffn_layer = Mlp
    elseif ffn_layer == "swiglufused" or ffn_layer == "swiglu" then
        ffn_layer = SwiGLUFFNFused
    elseif ffn_layer == "identity" then
        ffn_layer = function() return nn.Identity() end
    else
        error("NotImplementedError")
    end
    -- blocks_list = [block_fn(dim=embed_dim, ...) for i in range(depth)]
    local blocks_list = {}
    for i = 1, depth do
        blocks_list[i] = block_fn({ dim = embed_dim, num_heads = num_heads,
            mlp_ratio = o.mlp_ratio or 4.0, qkv_bias = default(o.qkv_bias, true),
            proj_bias = default(o.proj_bias, true), ffn_bias = default(o.ffn_bias, true),
            drop_path = dpr[i], norm_layer = norm_layer, act_layer = o.act_layer or nn.GELU,
            ffn_layer = ffn_layer, init_values = o.init_values })
    end
    if block_chunks > 0 then
        self.chunked_blocks = true
        local chunked_blocks = {}
        -- chunksize = depth // block_chunks
        local chunksize = fdiv(depth, block_chunks)
        -- for i in range(0, depth, chunksize):
        for i = 0, depth - 1, chunksize do
            -- chunked_blocks.append([nn.Identity()] * i + blocks_list[i : i + chunksize])
            local chunk = {}
            for _ = 1, i do chunk[#chunk + 1] = nn.Identity() end
            for k = i + 1, math.min(i + chunksize, depth) do chunk[#chunk + 1] = blocks_list[k] end
            chunked_blocks[#chunked_blocks + 1] = chunk
        end
        -- self.blocks = nn.ModuleList([BlockChunk(p) for p in chunked_blocks])
        local chunks = {}
        for k, p in ipairs(chunked_blocks) do chunks[k] = BlockChunk(p) end
        self.blocks = nn.ModuleList(chunks)
    else
        self.chunked_blocks = false
        self.blocks = nn.ModuleList(blocks_list)
    end
    self.norm = norm_layer(embed_dim)
    self.head = nn.Identity()
    self.mask_token = nn.Parameter(tide.zeros(1, embed_dim))
    self:init_weights()
end

function DinoVisionTransformer:init_weights()
    -- trunc_normal_(self.pos_embed, std=0.02)
    nn.init.trunc_normal_(self.pos_embed, { std = 0.02 })
    nn.init.normal_(self.cls_token, { std = 1e-6 })
    if self.register_tokens ~= nil then
        nn.init.normal_(self.register_tokens, { std = 1e-6 })
    end
    named_apply(init_weights_vit_timm, self)
end

function DinoVisionTransformer:interpolate_pos_encoding(x, w, h)
    local previous_dtype = x.dtype
    -- npatch = x.shape[1] - 1
    local npatch = x:size(2) - 1
    local N = self.pos_embed:size(2) - 1
    if npatch == N and w == h then
        return self.pos_embed
    end
    local pos_embed = self.pos_embed:float()
    -- class_pos_embed = pos_embed[:, 0]
    local class_pos_embed = pos_embed[{ {}, 1 }]
    -- patch_pos_embed = pos_embed[:, 1:]
    local patch_pos_embed = pos_embed[{ {}, { 2, -1 } }]
    local dim = x:size(-1)
    -- w0 = w // self.patch_size
    local w0 = fdiv(w, self.patch_size)
    -- h0 = h // self.patch_size
    local h0 = fdiv(h, self.patch_size)
    -- M = int(math.sqrt(N))  # Recover the number of patches in each dimension
    local M = math.floor(math.sqrt(N))
    assert(N == M * M)
    local kwargs = {}
    if self.interpolate_offset ~= 0 then
        -- sx = float(w0 + self.interpolate_offset) / M
        local sx = (w0 + self.interpolate_offset) / M
        local sy = (h0 + self.interpolate_offset) / M
        kwargs.scale_factor = { sx, sy }
    else
        kwargs.size = { w0, h0 }
    end
    -- patch_pos_embed = nn.functional.interpolate(
    --     patch_pos_embed.reshape(1, M, M, dim).permute(0, 3, 1, 2),
    --     mode="bicubic", antialias=self.interpolate_antialias, **kwargs)
    kwargs.mode, kwargs.antialias = "bicubic", self.interpolate_antialias
    patch_pos_embed = F.interpolate(patch_pos_embed:reshape(1, M, M, dim):permute(1, 4, 2, 3),
        kwargs)
    -- assert (w0, h0) == patch_pos_embed.shape[-2:]
    assert(w0 == patch_pos_embed:size(-2) and h0 == patch_pos_embed:size(-1))
    -- patch_pos_embed = patch_pos_embed.permute(0, 2, 3, 1).view(1, -1, dim)
    patch_pos_embed = patch_pos_embed:permute(1, 3, 4, 2):view(1, -1, dim)
    -- return torch.cat((class_pos_embed.unsqueeze(0), patch_pos_embed), dim=1).to(...)
    return tide.cat({ class_pos_embed:unsqueeze(1), patch_pos_embed }, 2):to(previous_dtype)
end

function DinoVisionTransformer:prepare_tokens_with_masks(x, masks)
    -- B, nc, w, h = x.shape
    local w, h = x:size(3), x:size(4)
    x = self.patch_embed(x)
    if masks ~= nil then
        -- x = torch.where(masks.unsqueeze(-1), self.mask_token.to(x.dtype).unsqueeze(0), x)
        x = tide.where(masks:unsqueeze(-1), self.mask_token:to(x.dtype):unsqueeze(1), x)
    end
    -- x = torch.cat((self.cls_token.expand(x.shape[0], -1, -1), x), dim=1)
    x = tide.cat({ self.cls_token:expand(x:size(1), -1, -1), x }, 2)
    x = x + self:interpolate_pos_encoding(x, w, h)
    if self.register_tokens ~= nil then
        -- x = torch.cat((x[:, :1], self.register_tokens.expand(x.shape[0], -1, -1),
        --     x[:, 1:]), dim=1)
        x = tide.cat({ x[{ {}, { 1, 1 } }], self.register_tokens:expand(x:size(1), -1, -1),
            x[{ {}, { 2, -1 } }] }, 2)
    end
    return x
end

function DinoVisionTransformer:forward_features(x, masks)
    -- if isinstance(x, list): return self.forward_features_list(x, masks)
    if not tide.is_tensor(x) then
        error("forward_features_list needs xFormers (NestedTensorBlock)")
    end
    x = self:prepare_tokens_with_masks(x, masks)
    for _, blk in ipairs(self.blocks) do
        x = blk(x)
    end
    local x_norm = self.norm(x)
    local r = self.num_register_tokens
    return {
        -- "x_norm_clstoken": x_norm[:, 0],
        x_norm_clstoken = x_norm[{ {}, 1 }],
        -- "x_norm_regtokens": x_norm[:, 1 : self.num_register_tokens + 1],
        x_norm_regtokens = x_norm[{ {}, { 2, r + 1 } }],
        -- "x_norm_patchtokens": x_norm[:, self.num_register_tokens + 1 :],
        x_norm_patchtokens = x_norm[{ {}, { r + 2, -1 } }],
        x_prenorm = x,
        masks = masks,
    }
end

-- blocks_to_take = range(total_block_len - n, total_block_len) if isinstance(n, int) else n
-- (1-based block numbers here)
local function blocks_to_take_set(n, total_block_len)
    local take, count = {}, 0
    if type(n) == "number" then
        for i = total_block_len - n + 1, total_block_len do take[i] = true; count = count + 1 end
    else
        for _, i in ipairs(n) do take[i] = true; count = count + 1 end
    end
    return take, count
end

function DinoVisionTransformer:_get_intermediate_layers_not_chunked(x, n)
    x = self:prepare_tokens_with_masks(x)
    -- If n is an int, take the n last blocks. If it's a list, take them
    local output, total_block_len = {}, #self.blocks
    local blocks_to_take, count = blocks_to_take_set(n or 1, total_block_len)
    for i, blk in ipairs(self.blocks) do
        x = blk(x)
        if blocks_to_take[i] then
            output[#output + 1] = x
        end
    end
    assert(#output == count, ("only %d / %d blocks found"):format(#output, count))
    return output
end

function DinoVisionTransformer:_get_intermediate_layers_chunked(x, n)
    x = self:prepare_tokens_with_masks(x)
    -- output, i, total_block_len = [], 0, len(self.blocks[-1])
    local output, i, total_block_len = {}, 0, #self.blocks[-1]
    local blocks_to_take, count = blocks_to_take_set(n or 1, total_block_len)
    for _, block_chunk in ipairs(self.blocks) do
        -- for blk in block_chunk[i:]:  # Passing the nn.Identity()
        for k = i + 1, #block_chunk do
            x = block_chunk[k](x)
            -- if i in blocks_to_take: (i counted 0-based, the blocks 1-based)
            if blocks_to_take[i + 1] then
                output[#output + 1] = x
            end
            i = i + 1
        end
    end
    assert(#output == count, ("only %d / %d blocks found"):format(#output, count))
    return output
end

-- def get_intermediate_layers(self, x, n=1, reshape=False, return_class_token=False, norm=True):
function DinoVisionTransformer:get_intermediate_layers(x, o)
    o = o or {}
    local outputs
    if self.chunked_blocks then
        outputs = self:_get_intermediate_layers_chunked(x, o.n)
    else
        outputs = self:_get_intermediate_layers_not_chunked(x, o.n)
    end
    if default(o.norm, true) then
        for k, out in ipairs(outputs) do outputs[k] = self.norm(out) end
    end
    -- class_tokens = [out[:, 0] for out in outputs]
    local class_tokens = {}
    for k, out in ipairs(outputs) do class_tokens[k] = out[{ {}, 1 }] end
    -- outputs = [out[:, 1 + self.num_register_tokens :] for out in outputs]
    for k, out in ipairs(outputs) do
        outputs[k] = out[{ {}, { 2 + self.num_register_tokens, -1 } }]
    end
    if o.reshape then
        -- B, _, w, h = x.shape
        local B, w, h = x:size(1), x:size(3), x:size(4)
        -- out.reshape(B, w // self.patch_size, h // self.patch_size, -1)
        --     .permute(0, 3, 1, 2).contiguous()
        for k, out in ipairs(outputs) do
            outputs[k] = out:reshape(B, fdiv(w, self.patch_size), fdiv(h, self.patch_size), -1)
                :permute(1, 4, 2, 3):contiguous()
        end
    end
    if o.return_class_token then
        -- return tuple(zip(outputs, class_tokens))
        local pairs_ = {}
        for k = 1, #outputs do pairs_[k] = { outputs[k], class_tokens[k] } end
        return pairs_
    end
    return outputs
end

-- def forward(self, *args, is_training=False, **kwargs):
function DinoVisionTransformer:forward(x, o)
    o = o or {}
    local ret = self:forward_features(x, o.masks)
    if o.is_training then
        return ret
    end
    return self.head(ret.x_norm_clstoken)
end

---------------------------------------------------------------------------------------------
-- 3. the checks against PyTorch 1.13 (the same classes in Python; values printed by it)
---------------------------------------------------------------------------------------------
-- for i, (n, p) in enumerate(m.named_parameters()):
--     p.copy_((0.3 * torch.sin(0.37 * (j + 1) + 0.91 * (i + 1))).view(p.shape)), j = arange
local function det_init(m)
    tide.no_grad(function()
        for i, np_ in ipairs(m:named_parameters()) do
            local p = np_[2]
            local j = tide.arange(0, p:numel(), { dtype = "float64" })
            p:copy_((0.3 * tide.sin(0.37 * (j + 1) + 0.91 * i)):view(p:size()))
        end
    end)
end

-- {sum, sum weighted by cos(0.3 k), first, last} of t, as the reference script prints them
local function summ(t)
    local f = t:detach():flatten():double()
    local w = tide.cos(tide.arange(0, f:numel()) * 0.3):double()
    return { f:sum():item(), (f * w):sum():item(), f[1]:item(), f[-1]:item() }
end

-- torch.cos(0.13 * j).float().view(2, 3, s, s)
local function img(s)
    local j = tide.arange(0, 2 * 3 * s * s, { dtype = "float64" })
    return tide.cos(0.13 * j):float():view(2, 3, s, s)
end

local function mk(o)
    local opts = { img_size = 14, patch_size = 7, embed_dim = 8, depth = 2, num_heads = 2,
        mlp_ratio = 2, init_values = 1e-5, num_register_tokens = 1 }
    for k, v in pairs(o or {}) do opts[k] = v end
    local m = DinoVisionTransformer(opts)
    det_init(m)
    return m
end

local TOL = 2e-4
local REF = {
    f14_x_norm_clstoken = { 2.045816861, 0.4452228024, 0.5534482002, -0.1288685203 },
    f14_x_norm_regtokens = { -0.3430924453, 0.5114066828, 0.3711406589, -0.2579486072 },
    f14_x_norm_patchtokens = { 1.891820058, -0.1358980017, 0.3956220746, -0.3513941169 },
    f14_x_prenorm = { 14.5935702, 0.8098179263, 0.5577058196, 1.794971108 },
    pe28 = { 1.678967532, 0.4722079578, 0.2443022728, -0.2808001935 },
    f28_x_norm_clstoken = { 2.044342343, 0.4448579113, 0.552988708, -0.1287846118 },
    f28_x_norm_patchtokens = { 7.358905189, 0.4948392432, 0.4738762379, -0.2357611507 },
    pe28aa = { 1.672184274, 0.5330274618, 0.2443022728, -0.2719041407 },
    mask_prenorm = { 10.51851068, -0.4699794248, 0.5575802326, 1.796253204 },
    il0_out = { 7.467473668, -2.376521133, 0.4761115611, -0.2361932546 },
    il0_cls = { 2.118975044, 0.5095895238, 0.5898298621, -0.1465195566 },
    il1_out = { 7.358905189, -2.402184627, 0.4738762379, -0.2357611507 },
    il1_cls = { 2.044342343, 0.4448579113, 0.552988708, -0.1287846118 },
    il_list0 = { 6.025281228, 2.76080939, 1.040378928, 1.757260442 },
    swiglu_cls = { 1.854193207, 0.4924883524, 0.5970972776, -0.1338615268 },
    probe_losses = { 0.8826922178, 0.8001919389 },
    probe_w = { 1.349464938, 4.197648038, 0.4270489812, -0.3040289283 },
    probe_b = { 0.6133166775, 0.5692479978, 0.3843644559, 0.2603280246 },
}

local function check(name, t)
    assert_close_list(REF[name], summ(t), TOL, name)
end

describe("dinov2 vision transformer (ported_scripts125)", function()
    local m = mk()
    m:eval()

    it("lists its parameters in PyTorch's named_parameters order, init_weights' stats",
        function()
            local names = {}
            for k, np_ in ipairs(m:named_parameters()) do names[k] = np_[1] end
            assert.are.same({ "cls_token", "pos_embed", "register_tokens", "mask_token",
                "patch_embed.proj.weight", "patch_embed.proj.bias",
                "blocks.1.1.norm1.weight" }, { unpack(names, 1, 7) })
            assert.are.equal(36, #names)
            assert.are.equal("blocks.1.2.ls2.gamma", names[34])
            assert.are.equal("norm.bias", names[36])
            -- init_weights before det_init: trunc_normal_(std=0.02) within 2 (its a, b),
            -- biases zero, LayerScale's gamma init_values
            tide.manual_seed(0)
            local fresh = DinoVisionTransformer({ img_size = 14, patch_size = 7,
                embed_dim = 8, depth = 2, num_heads = 2, mlp_ratio = 2, init_values = 1e-5 })
            local wq = fresh.blocks[1][1].attn.qkv.weight
            assert.is_true(wq:abs():max():item() <= 2)
            assert.is_true(wq:std():item() > 0.01 and wq:std():item() < 0.03)
            assert.are.equal(0, fresh.blocks[1][2].mlp.fc1.bias:abs():sum():item())
            assert.is_true(math.abs(fresh.blocks[1][1].ls1.gamma[1]:item() - 1e-5) < 1e-12)
            assert.is_true(fresh.cls_token:abs():max():item() < 1e-4)
            assert.is_nil(fresh.register_tokens)
        end)

    it("forward_features at 14 x 14 matches PyTorch (cls, register, patch, prenorm)",
        function()
            local d = tide.no_grad(function() return m:forward_features(img(14)) end)
            assert.are.same({ 2, 6, 8 }, d.x_prenorm.shape)
            assert.are.same({ 2, 8 }, d.x_norm_clstoken.shape)
            assert.are.same({ 2, 1, 8 }, d.x_norm_regtokens.shape)
            assert.are.same({ 2, 4, 8 }, d.x_norm_patchtokens.shape)
            assert.is_nil(d.masks)
            for _, k in ipairs({ "x_norm_clstoken", "x_norm_regtokens", "x_norm_patchtokens",
                "x_prenorm" }) do
                check("f14_" .. k, d[k])
            end
            -- forward (is_training=False) is head(cls) with the Identity head
            local y = tide.no_grad(function() return m(img(14)) end)
            assert.is_true(tide.equal(y, d.x_norm_clstoken))
        end)

    it("interpolates pos_embed (bicubic, scale_factor with the 0.1 offset) at 28 x 28",
        function()
            tide.no_grad(function()
                local pe = m:interpolate_pos_encoding(tide.zeros(2, 17, 8), 28, 28)
                assert.are.same({ 1, 17, 8 }, pe.shape)
                check("pe28", pe)
                m.interpolate_antialias = true
                check("pe28aa", m:interpolate_pos_encoding(tide.zeros(2, 17, 8), 28, 28))
                m.interpolate_antialias = false
                -- the same size: pos_embed itself
                assert.are.equal(m.pos_embed, m:interpolate_pos_encoding(tide.zeros(2, 5, 8),
                    14, 14))
                local d = m:forward_features(img(28))
                assert.are.same({ 2, 16, 8 }, d.x_norm_patchtokens.shape)
                check("f28_x_norm_clstoken", d.x_norm_clstoken)
                check("f28_x_norm_patchtokens", d.x_norm_patchtokens)
            end)
        end)

    it("puts mask_token at the masked patches as PyTorch's", function()
        local masks = tide.tensor({ { true, false, false, true }, { false, true, false, false } })
        local d = tide.no_grad(function() return m:forward_features(img(14), masks) end)
        check("mask_prenorm", d.x_prenorm)
        assert.are.equal(masks, d.masks)
    end)

    it("get_intermediate_layers: reshape, return_class_token, a list, chunked or not",
        function()
            tide.no_grad(function()
                local r = m:get_intermediate_layers(img(28), { n = 2, reshape = true,
                    return_class_token = true })
                assert.are.equal(2, #r)
                assert.are.same({ 2, 8, 4, 4 }, r[1][1].shape)
                check("il0_out", r[1][1]); check("il0_cls", r[1][2])
                check("il1_out", r[2][1]); check("il1_cls", r[2][2])
                -- n=[0] in Python: the first block, 1-based here
                r = m:get_intermediate_layers(img(14), { n = { 1 }, norm = false })
                assert.are.same({ 2, 4, 8 }, r[1].shape)
                check("il_list0", r[1])
                local m2 = mk({ block_chunks = 0 })
                assert.is_false(m2.chunked_blocks)
                r = m2:get_intermediate_layers(img(14), { n = { 1 }, norm = false })
                check("il_list0", r[1])
                assert.error_matches(function()
                    m2:get_intermediate_layers(img(14), { n = { 3 } })
                end, "only 0 / 1 blocks found", nil, true)
            end)
        end)

    it("SwiGLUFFNFused rounds its hidden size to 8s; the model with it matches", function()
        local ms = mk({ ffn_layer = "swiglufused" })
        -- int(16 * 2 / 3) = 10 -> (10 + 7) // 8 * 8 = 16, w12 twice that
        assert.are.same({ 32, 8 }, ms.blocks[1][1].mlp.w12.weight.shape)
        ms:eval()
        check("swiglu_cls", tide.no_grad(function()
            return ms:forward_features(img(14)).x_norm_clstoken
        end))
    end)

    it("trains a linear probe on the cls token: 2 AdamW steps as PyTorch's", function()
        local feats = tide.no_grad(function()
            return m:forward_features(img(14)).x_norm_clstoken
        end)
        local probe = nn.Linear(8, 3)
        det_init(probe)
        local opt = optim.AdamW(probe:parameters(), { lr = 0.1, weight_decay = 0.05 })
        -- y = torch.tensor([0, 2])
        local y = tide.tensor({ 1, 3 })
        local losses = {}
        for step = 1, 2 do
            opt:zero_grad()
            local loss = F.cross_entropy(probe(feats), y)
            loss:backward()
            opt:step()
            losses[step] = loss:item()
        end
        assert_close_list(REF.probe_losses, losses, TOL, "probe losses")
        assert.is_true(losses[2] < losses[1])
        check("probe_w", probe.weight)
        check("probe_b", probe.bias)
    end)

    it("drop_path and the stochastic-depth residuals keep or scale whole samples", function()
        tide.manual_seed(3)
        local x = tide.randn(6, 3, 8)
        local dp = DropPath(0.5)
        dp:train()
        local y = dp(x)
        assert.are.same(x.shape, y.shape)
        local kept = 0
        for b = 1, 6 do
            local yb, xb = y[b], x[b]
            if yb:abs():sum():item() ~= 0 then
                assert.is_true(tide.allclose(yb, xb * 2))
                kept = kept + 1
            end
        end
        assert.is_true(kept >= 1 and kept <= 5) -- seed 3: not all or none
        dp:eval()
        assert.are.equal(x, dp(x))
        -- drop_add_residual_stochastic_depth: the kept half gets 2 * residual, the rest stays
        local out = drop_add_residual_stochastic_depth(x, function(s) return s * 0 + 1 end, 0.5)
        local changed = 0
        for b = 1, 6 do
            local d = (out[b] - x[b])
            if d:abs():sum():item() ~= 0 then
                -- (x's dtype named: 2.0 is an integer on Lua 5.1 and LuaJIT)
                assert.is_true(tide.allclose(d, tide.full({ 3, 8 }, 2.0, { dtype = x.dtype })))
                changed = changed + 1
            end
        end
        assert.are.equal(3, changed)
        -- a Block in training with drop_path 0.5 runs that path; 0.05 the DropPath one
        for _, p in ipairs({ 0.5, 0.05 }) do
            local blk = Block({ dim = 8, num_heads = 2, mlp_ratio = 2, init_values = 1e-5,
                drop_path = p })
            blk:train()
            local z = blk(x)
            assert.are.same({ 6, 3, 8 }, z.shape)
            assert.is_true(ported.is_finite(z:sum():item()))
        end
    end)

    it("MemEffAttention without xformers is Attention; attn_bias raises as dinov2's", function()
        local a = MemEffAttention(8, { num_heads = 2, qkv_bias = true })
        det_init(a)
        local b = Attention(8, { num_heads = 2, qkv_bias = true })
        det_init(b)
        local x = tide.randn(2, 5, 8)
        assert.is_true(tide.allclose(a(x), b(x)))
        assert.error_matches(function() a(x, {}) end, "xFormers is required", nil, true)
        -- the plain math: softmax(q k^T / sqrt(4)) v
        local qkv = b.qkv(x):reshape(2, 5, 3, 2, 4)
        local q, k, v = qkv[{ {}, {}, 1 }]:transpose(2, 3), qkv[{ {}, {}, 2 }]:transpose(2, 3),
            qkv[{ {}, {}, 3 }]:transpose(2, 3)
        local att = ((q * 0.5):matmul(k:transpose(-2, -1))):softmax(-1):matmul(v)
        local want = b.proj(att:transpose(2, 3):reshape(2, 5, 8))
        assert.is_true(tide.allclose(b(x), want, { atol = 1e-6 }))
        -- PatchEmbed with flatten_embedding=False: B H W C
        local pe = PatchEmbed({ img_size = 14, patch_size = 7, in_chans = 3, embed_dim = 8,
            flatten_embedding = false })
        assert.are.same({ 2, 2, 2, 8 }, pe(img(14)).shape)
        assert.are.same({ 7, 7 }, make_2tuple(7))
    end)
end)
