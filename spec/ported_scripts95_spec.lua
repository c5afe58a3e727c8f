-- ported_scripts95_spec.lua — CompVis/stable-diffusion's UNet pieces: ldm/modules/attention.py
-- (exists, uniq, default, max_neg_value, init_, GEGLU, FeedForward, zero_module, Normalize,
-- LinearAttention, SpatialSelfAttention, CrossAttention with its mask path,
-- BasicTransformerBlock, SpatialTransformer), ldm/modules/diffusionmodules/util.py
-- (timestep_embedding, zero_module, normalization, conv_nd) and
-- ldm/modules/diffusionmodules/openaimodel.py (TimestepBlock, TimestepEmbedSequential,
-- Upsample, Downsample, ResBlock), with a tiny UNet assembled by hand from them (UNetModel's
-- forward: hs, one down, a middle with a SpatialTransformer, the ups with skip cats), ported
-- line for line at tiny sizes (channels 8, heads 2, d_head 4, context_dim 6, 8x8 maps).
-- Each forward is checked against PyTorch 1.13 on the same deterministic weights (the i-th
-- parameter of named_parameters(), 0-based, filled with sin(arange(numel) * 0.37 + i) * 0.3,
-- zero_module's zeros overwritten too; eval mode), then the UNet trains 2 steps with MSE on
-- random noise targets. The Python line stands above each Lua line that differs from it.
-- Sizes: GroupNorm's 32 groups (Normalize, normalization) are 4 here, 8 channels having no 32.
-- checkpoint(...) runs the forward directly (checkpoint=False / use_checkpoint=False).
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite, assert_close_list = ported.assert_finite, ported.assert_close_list

local einops = tide.einops
local rearrange, repeat_ = einops.rearrange, einops.repeat_

-- the number of GroupNorm groups (32 in the sources; channels are 8 here)
local NUM_GROUPS = 4

-- the deterministic fill of the Python reference (named_parameters order, 0-based i)
local function fill(model)
    tide.no_grad(function()
        for i, p in ipairs(model:parameters()) do
            local v = tide.sin(tide.arange(p:numel(), { dtype = tide.float64 }) * 0.37 + (i - 1))
            p:copy_((v * 0.3):view(p.shape))
        end
    end)
    return model:eval()
end

-- compares sum, abs-sum, the first 4 and the last 3 values with PyTorch's
local function check(t, shape, sum, abssum, first4, last3, what)
    assert.are.same(shape, t.shape)
    local flat = t:detach():double():reshape(-1)
    assert_close_list({ sum, abssum }, { flat:sum():item(), flat:abs():sum():item() }, 1e-4, what)
    assert_close_list(first4, flat[{ { 1, 4 } }]:tolist(), 1e-5, what .. " first")
    assert_close_list(last3, flat[{ { -3, -1 } }]:tolist(), 1e-5, what .. " last")
end

-- inputs: sin(arange(n) * a + b).view(shape), as the reference's X
local function X(shape, a, b)
    local n = 1
    for _, s in ipairs(shape) do n = n * s end
    return tide.sin(tide.arange(n) * (a or 0.1) + (b or 0)):view(shape)
end

---------------------------------------------------------------------------------------------
-- 1. ldm/modules/attention.py
---------------------------------------------------------------------------------------------
-- def exists(val): return val is not None
local function exists(val)
    return val ~= nil
end

-- def uniq(arr): return{el: True for el in arr}.keys()
local function uniq(arr)
    local seen, keys = {}, {}
    for _, el in ipairs(arr) do
        if not seen[el] then
            seen[el] = true
            keys[#keys + 1] = el
        end
    end
    return keys
end

-- def default(val, d):
local function default(val, d)
    if exists(val) then
        return val
    end
    -- return d() if isfunction(d) else d
    if type(d) == "function" then return d() end
    return d
end

-- def max_neg_value(t): return -torch.finfo(t.dtype).max
local function max_neg_value(t)
    return -tide.finfo(t.dtype).max
end

-- def init_(tensor):
local function init_(tensor)
    -- dim = tensor.shape[-1]
    local dim = tensor.shape[#tensor.shape]
    local std = 1 / math.sqrt(dim)
    tensor:uniform_(-std, std)
    return tensor
end

-- class GEGLU(nn.Module):
local GEGLU = nn.Module:extend("GEGLU")
function GEGLU:init(dim_in, dim_out)
    self.proj = nn.Linear(dim_in, dim_out * 2)
end
function GEGLU:forward(x)
    -- x, gate = self.proj(x).chunk(2, dim=-1)
    local gate
    x, gate = unpack(self.proj(x):chunk(2, { dim = -1 }))
    return x * F.gelu(gate)
end

-- class FeedForward(nn.Module):
local FeedForward = nn.Module:extend("FeedForward")
-- def __init__(self, dim, dim_out=None, mult=4, glu=False, dropout=0.):
nn.signature(FeedForward, "dim, dim_out=None, mult=4, glu=False, dropout=0.")
function FeedForward:init(dim, dim_out, mult, glu, dropout)
    -- inner_dim = int(dim * mult)
    local inner_dim = math.floor(dim * mult)
    dim_out = default(dim_out, dim)
    -- project_in = nn.Sequential(nn.Linear(dim, inner_dim), nn.GELU()) if not glu
    --     else GEGLU(dim, inner_dim)
    local project_in = (not glu) and nn.Sequential(nn.Linear(dim, inner_dim), nn.GELU())
        or GEGLU(dim, inner_dim)
    self.net = nn.Sequential(project_in, nn.Dropout(dropout), nn.Linear(inner_dim, dim_out))
end
function FeedForward:forward(x)
    return self.net(x)
end

-- def zero_module(module):
local function zero_module(module)
    -- for p in module.parameters(): p.detach().zero_()
    for _, p in ipairs(module:parameters()) do
        p:detach():zero_()
    end
    return module
end

-- def Normalize(in_channels):
local function Normalize(in_channels)
    -- return torch.nn.GroupNorm(num_groups=32, num_channels=in_channels, eps=1e-6, affine=True)
    return nn.GroupNorm(NUM_GROUPS, in_channels, { eps = 1e-6, affine = true })
end

-- class LinearAttention(nn.Module):
local LinearAttention = nn.Module:extend("LinearAttention")
-- def __init__(self, dim, heads=4, dim_head=32):
nn.signature(LinearAttention, "dim, heads=4, dim_head=32")
function LinearAttention:init(dim, heads, dim_head)
    self.heads = heads
    local hidden_dim = dim_head * heads
    -- self.to_qkv = nn.Conv2d(dim, hidden_dim * 3, 1, bias = False)
    self.to_qkv = nn.Conv2d(dim, hidden_dim * 3, 1, { bias = false })
    self.to_out = nn.Conv2d(hidden_dim, dim, 1)
end
function LinearAttention:forward(x)
    -- b, c, h, w = x.shape
    local _, _, h, w = unpack(x.shape)
    local qkv = self.to_qkv(x)
    -- q, k, v = rearrange(qkv, 'b (qkv heads c) h w -> qkv b heads c (h w)', heads=self.heads,
    --     qkv=3)
    local q, k, v = unpack(rearrange(qkv, "b (qkv heads c) h w -> qkv b heads c (h w)",
        { heads = self.heads, qkv = 3 }):unbind())
    -- k = k.softmax(dim=-1)
    k = k:softmax({ dim = -1 })
    local context = tide.einsum("bhdn,bhen->bhde", k, v)
    local out = tide.einsum("bhde,bhdn->bhen", context, q)
    -- out = rearrange(out, 'b heads c (h w) -> b (heads c) h w', heads=self.heads, h=h, w=w)
    out = rearrange(out, "b heads c (h w) -> b (heads c) h w", { heads = self.heads, h = h, w = w })
    return self.to_out(out)
end

-- class SpatialSelfAttention(nn.Module):
local SpatialSelfAttention = nn.Module:extend("SpatialSelfAttention")
function SpatialSelfAttention:init(in_channels)
    self.in_channels = in_channels
    self.norm = Normalize(in_channels)
    -- self.q = torch.nn.Conv2d(in_channels, in_channels, kernel_size=1, stride=1, padding=0)
    self.q = nn.Conv2d(in_channels, in_channels, { kernel_size = 1, stride = 1, padding = 0 })
    self.k = nn.Conv2d(in_channels, in_channels, { kernel_size = 1, stride = 1, padding = 0 })
    self.v = nn.Conv2d(in_channels, in_channels, { kernel_size = 1, stride = 1, padding = 0 })
    self.proj_out = nn.Conv2d(in_channels, in_channels,
        { kernel_size = 1, stride = 1, padding = 0 })
end
function SpatialSelfAttention:forward(x)
    local h_ = x
    h_ = self.norm(h_)
    local q = self.q(h_)
    local k = self.k(h_)
    local v = self.v(h_)
    -- compute attention
    -- b,c,h,w = q.shape
    local _, c, h = unpack(q.shape)
    q = rearrange(q, "b c h w -> b (h w) c")
    k = rearrange(k, "b c h w -> b c (h w)")
    -- w_ = torch.einsum('bij,bjk->bik', q, k)
    local w_ = tide.einsum("bij,bjk->bik", q, k)
    -- w_ = w_ * (int(c)**(-0.5))
    w_ = w_ * (math.floor(c) ^ -0.5)
    -- w_ = torch.nn.functional.softmax(w_, dim=2)
    w_ = F.softmax(w_, { dim = 3 })
    -- attend to values
    v = rearrange(v, "b c h w -> b c (h w)")
    w_ = rearrange(w_, "b i j -> b j i")
    h_ = tide.einsum("bij,bjk->bik", v, w_)
    -- h_ = rearrange(h_, 'b c (h w) -> b c h w', h=h)
    h_ = rearrange(h_, "b c (h w) -> b c h w", { h = h })
    h_ = self.proj_out(h_)
    return x + h_
end

-- class CrossAttention(nn.Module):
local CrossAttention = nn.Module:extend("CrossAttention")
-- def __init__(self, query_dim, context_dim=None, heads=8, dim_head=64, dropout=0.):
nn.signature(CrossAttention, "query_dim, context_dim=None, heads=8, dim_head=64, dropout=0.")
function CrossAttention:init(query_dim, context_dim, heads, dim_head, dropout)
    local inner_dim = dim_head * heads
    context_dim = default(context_dim, query_dim)
    -- self.scale = dim_head ** -0.5
    self.scale = dim_head ^ -0.5
    self.heads = heads
    -- self.to_q = nn.Linear(query_dim, inner_dim, bias=False)
    self.to_q = nn.Linear(query_dim, inner_dim, { bias = false })
    self.to_k = nn.Linear(context_dim, inner_dim, { bias = false })
    self.to_v = nn.Linear(context_dim, inner_dim, { bias = false })
    self.to_out = nn.Sequential(nn.Linear(inner_dim, query_dim), nn.Dropout(dropout))
end
-- def forward(self, x, context=None, mask=None): (nn.signature below gives it the keywords)
function CrossAttention:forward(x, context, mask)
    local h = self.heads
    local q = self.to_q(x)
    context = default(context, x)
    local k = self.to_k(context)
    local v = self.to_v(context)
    -- q, k, v = map(lambda t: rearrange(t, 'b n (h d) -> (b h) n d', h=h), (q, k, v))
    -- (written with view / permute: (h d) splits h outer, (b h) merges b outer)
    local function split_heads(t)
        local b, n, hd = unpack(t.shape)
        local d = math.floor(hd / h) -- hd // h (no // in Lua 5.1)
        return t:view(b, n, h, d):permute(1, 3, 2, 4):reshape(b * h, n, d)
    end
    q, k, v = split_heads(q), split_heads(k), split_heads(v)
    -- sim = einsum('b i d, b j d -> b i j', q, k) * self.scale
    local sim = tide.einsum("b i d, b j d -> b i j", q, k) * self.scale
    if exists(mask) then
        -- mask = rearrange(mask, 'b ... -> b (...)')
        mask = rearrange(mask, "b ... -> b (...)")
        -- max_neg_value = -torch.finfo(sim.dtype).max
        local neg = max_neg_value(sim)
        -- mask = repeat(mask, 'b j -> (b h) () j', h=h)
        mask = repeat_(mask, "b j -> (b h) () j", { h = h })
        -- sim.masked_fill_(~mask, max_neg_value)
        sim:masked_fill_(mask:logical_not(), neg)
    end
    -- attention, what we cannot get enough of
    -- attn = sim.softmax(dim=-1)
    local attn = sim:softmax({ dim = -1 })
    local out = tide.einsum("b i j, b j d -> b i d", attn, v)
    -- out = rearrange(out, '(b h) n d -> b n (h d)', h=h)
    out = rearrange(out, "(b h) n d -> b n (h d)", { h = h })
    return self.to_out(out)
end
nn.signature(CrossAttention, "self, x, context=None, mask=None", "forward")

-- class BasicTransformerBlock(nn.Module):
local BasicTransformerBlock = nn.Module:extend("BasicTransformerBlock")
-- def __init__(self, dim, n_heads, d_head, dropout=0., context_dim=None, gated_ff=True,
--     checkpoint=True):
nn.signature(BasicTransformerBlock,
    "dim, n_heads, d_head, dropout=0., context_dim=None, gated_ff=True, checkpoint=True")
function BasicTransformerBlock:init(dim, n_heads, d_head, dropout, context_dim, gated_ff,
                                    checkpoint)
    -- self.attn1 = CrossAttention(query_dim=dim, heads=n_heads, dim_head=d_head, dropout=dropout)
    self.attn1 = CrossAttention({ query_dim = dim, heads = n_heads, dim_head = d_head,
        dropout = dropout }) -- is a self-attention
    -- self.ff = FeedForward(dim, dropout=dropout, glu=gated_ff)
    self.ff = FeedForward(dim, { dropout = dropout, glu = gated_ff })
    -- self.attn2 = CrossAttention(query_dim=dim, context_dim=context_dim, heads=n_heads, ...)
    self.attn2 = CrossAttention({ query_dim = dim, context_dim = context_dim,
        heads = n_heads, dim_head = d_head, dropout = dropout }) -- self-attn if context is none
    self.norm1 = nn.LayerNorm(dim)
    self.norm2 = nn.LayerNorm(dim)
    self.norm3 = nn.LayerNorm(dim)
    self.checkpoint = checkpoint
end
-- def forward(self, x, context=None):
--     return checkpoint(self._forward, (x, context), self.parameters(), self.checkpoint)
function BasicTransformerBlock:forward(x, context)
    -- x = self.attn1(self.norm1(x)) + x
    x = self.attn1(self.norm1(x)) + x
    -- x = self.attn2(self.norm2(x), context=context) + x
    x = self.attn2(self.norm2(x), { context = context }) + x
    x = self.ff(self.norm3(x)) + x
    return x
end

-- class SpatialTransformer(nn.Module):
local SpatialTransformer = nn.Module:extend("SpatialTransformer")
-- def __init__(self, in_channels, n_heads, d_head, depth=1, dropout=0., context_dim=None):
nn.signature(SpatialTransformer, "in_channels, n_heads, d_head, depth=1, dropout=0., "
    .. "context_dim=None")
function SpatialTransformer:init(in_channels, n_heads, d_head, depth, dropout, context_dim)
    self.in_channels = in_channels
    local inner_dim = n_heads * d_head
    self.norm = Normalize(in_channels)
    -- self.proj_in = nn.Conv2d(in_channels, inner_dim, kernel_size=1, stride=1, padding=0)
    self.proj_in = nn.Conv2d(in_channels, inner_dim, { kernel_size = 1, stride = 1, padding = 0 })
    -- self.transformer_blocks = nn.ModuleList([BasicTransformerBlock(inner_dim, n_heads, d_head,
    --     dropout=dropout, context_dim=context_dim) for d in range(depth)])
    local blocks = {}
    for d = 1, depth do
        blocks[d] = BasicTransformerBlock(inner_dim, n_heads, d_head,
            { dropout = dropout, context_dim = context_dim, checkpoint = false })
    end
    self.transformer_blocks = nn.ModuleList(blocks)
    -- self.proj_out = zero_module(nn.Conv2d(inner_dim, in_channels, kernel_size=1, stride=1,
    --     padding=0))
    self.proj_out = zero_module(nn.Conv2d(inner_dim, in_channels,
        { kernel_size = 1, stride = 1, padding = 0 }))
end
-- def forward(self, x, context=None):
function SpatialTransformer:forward(x, context)
    -- note: if no context is given, cross-attention defaults to self-attention
    -- b, c, h, w = x.shape
    local _, _, h, w = unpack(x.shape)
    local x_in = x
    x = self.norm(x)
    x = self.proj_in(x)
    x = rearrange(x, "b c h w -> b (h w) c")
    -- for block in self.transformer_blocks: x = block(x, context=context)
    for _, block in ipairs(self.transformer_blocks) do
        x = block(x, context)
    end
    -- x = rearrange(x, 'b (h w) c -> b c h w', h=h, w=w)
    x = rearrange(x, "b (h w) c -> b c h w", { h = h, w = w })
    x = self.proj_out(x)
    return x + x_in
end

---------------------------------------------------------------------------------------------
-- 2. ldm/modules/diffusionmodules/util.py and openaimodel.py
---------------------------------------------------------------------------------------------
-- def timestep_embedding(timesteps, dim, max_period=10000, repeat_only=False):
local function timestep_embedding(timesteps, dim, max_period, repeat_only)
    max_period = max_period or 10000
    local embedding
    if not repeat_only then
        -- half = dim // 2
        local half = math.floor(dim / 2)
        -- freqs = torch.exp(-math.log(max_period) * torch.arange(start=0, end=half,
        --     dtype=torch.float32) / half).to(device=timesteps.device)
        local freqs = tide.exp(-math.log(max_period)
            * tide.arange({ start = 0, ["end"] = half, dtype = tide.float32 }) / half)
            :to({ device = timesteps.device })
        -- args = timesteps[:, None].float() * freqs[None]
        local args = timesteps[{ {}, tide.newaxis }]:float() * freqs[{ tide.newaxis }]
        -- embedding = torch.cat([torch.cos(args), torch.sin(args)], dim=-1)
        embedding = tide.cat({ tide.cos(args), tide.sin(args) }, { dim = -1 })
        -- if dim % 2:
        if dim % 2 == 1 then
            -- embedding = torch.cat([embedding, torch.zeros_like(embedding[:, :1])], dim=-1)
            embedding = tide.cat({ embedding, tide.zeros_like(embedding[{ {}, { 1, 1 } }]) },
                { dim = -1 })
        end
    else
        -- embedding = repeat(timesteps, 'b -> b d', d=dim)
        embedding = repeat_(timesteps, "b -> b d", { d = dim })
    end
    return embedding
end

-- def normalization(channels): return GroupNorm32(32, channels)
-- (GroupNorm32.forward: super().forward(x.float()).type(x.dtype); float32 throughout here)
local function normalization(channels)
    return nn.GroupNorm(NUM_GROUPS, channels)
end

-- def conv_nd(dims, *args, **kwargs):
local function conv_nd(dims, ...)
    if dims == 1 then
        return nn.Conv1d(...)
    elseif dims == 2 then
        return nn.Conv2d(...)
    elseif dims == 3 then
        return nn.Conv3d(...)
    end
    -- raise ValueError(f"unsupported dimensions: {dims}")
    error("unsupported dimensions: " .. tostring(dims))
end

-- def avg_pool_nd(dims, *args, **kwargs): (dims 2 only here)
local function avg_pool_nd(dims, ...)
    assert(dims == 2)
    return nn.AvgPool2d(...)
end

-- class TimestepBlock(nn.Module): (an abstract forward(self, x, emb))
local TimestepBlock = nn.Module:extend("TimestepBlock")

-- class TimestepEmbedSequential(nn.Sequential, TimestepBlock):
-- (one base in Lua: a Sequential; no TimestepEmbedSequential is nested in another here)
local TimestepEmbedSequential = nn.Sequential:extend("TimestepEmbedSequential")
-- def forward(self, x, emb, context=None):
function TimestepEmbedSequential:forward(x, emb, context)
    -- for layer in self:
    for _, layer in ipairs(self) do
        -- if isinstance(layer, TimestepBlock):
        if tide.isinstance(layer, TimestepBlock) then
            x = layer(x, emb)
        -- elif isinstance(layer, SpatialTransformer):
        elseif tide.isinstance(layer, SpatialTransformer) then
            x = layer(x, context)
        else
            x = layer(x)
        end
    end
    return x
end

-- class Upsample(nn.Module):
local Upsample = nn.Module:extend("Upsample")
-- def __init__(self, channels, use_conv, dims=2, out_channels=None, padding=1):
nn.signature(Upsample, "channels, use_conv, dims=2, out_channels=None, padding=1")
function Upsample:init(channels, use_conv, dims, out_channels, padding)
    self.channels = channels
    self.out_channels = out_channels or channels
    self.use_conv = use_conv
    self.dims = dims
    if use_conv then
        -- self.conv = conv_nd(dims, self.channels, self.out_channels, 3, padding=padding)
        self.conv = conv_nd(dims, self.channels, self.out_channels, 3, { padding = padding })
    end
end
function Upsample:forward(x)
    -- assert x.shape[1] == self.channels
    assert(x.shape[2] == self.channels)
    if self.dims == 3 then
        -- x = F.interpolate(x, (x.shape[2], x.shape[3] * 2, x.shape[4] * 2), mode="nearest")
        x = F.interpolate(x, { size = { x.shape[3], x.shape[4] * 2, x.shape[5] * 2 },
            mode = "nearest" })
    else
        -- x = F.interpolate(x, scale_factor=2, mode="nearest")
        x = F.interpolate(x, { scale_factor = 2, mode = "nearest" })
    end
    if self.use_conv then
        x = self.conv(x)
    end
    return x
end

-- class Downsample(nn.Module):
local Downsample = nn.Module:extend("Downsample")
-- def __init__(self, channels, use_conv, dims=2, out_channels=None,padding=1):
nn.signature(Downsample, "channels, use_conv, dims=2, out_channels=None, padding=1")
function Downsample:init(channels, use_conv, dims, out_channels, padding)
    self.channels = channels
    self.out_channels = out_channels or channels
    self.use_conv = use_conv
    self.dims = dims
    -- stride = 2 if dims != 3 else (1, 2, 2)
    local stride = dims ~= 3 and 2 or { 1, 2, 2 }
    if use_conv then
        -- self.op = conv_nd(dims, self.channels, self.out_channels, 3, stride=stride,
        --     padding=padding)
        self.op = conv_nd(dims, self.channels, self.out_channels, 3,
            { stride = stride, padding = padding })
    else
        assert(self.channels == self.out_channels)
        -- self.op = avg_pool_nd(dims, kernel_size=stride, stride=stride)
        self.op = avg_pool_nd(dims, { kernel_size = stride, stride = stride })
    end
end
function Downsample:forward(x)
    -- assert x.shape[1] == self.channels
    assert(x.shape[2] == self.channels)
    return self.op(x)
end

-- class ResBlock(TimestepBlock):
local ResBlock = TimestepBlock:extend("ResBlock")
-- def __init__(self, channels, emb_channels, dropout, out_channels=None, use_conv=False,
--     use_scale_shift_norm=False, dims=2, use_checkpoint=False, up=False, down=False):
nn.signature(ResBlock, "channels, emb_channels, dropout, out_channels=None, use_conv=False, "
    .. "use_scale_shift_norm=False, dims=2, use_checkpoint=False, up=False, down=False")
function ResBlock:init(channels, emb_channels, dropout, out_channels, use_conv,
                       use_scale_shift_norm, dims, use_checkpoint, up, down)
    self.channels = channels
    self.emb_channels = emb_channels
    self.dropout = dropout
    self.out_channels = out_channels or channels
    self.use_conv = use_conv
    self.use_checkpoint = use_checkpoint
    self.use_scale_shift_norm = use_scale_shift_norm

    self.in_layers = nn.Sequential(
        normalization(channels),
        nn.SiLU(),
        -- conv_nd(dims, channels, self.out_channels, 3, padding=1),
        conv_nd(dims, channels, self.out_channels, 3, { padding = 1 })
    )

    self.updown = up or down

    if up then
        self.h_upd = Upsample(channels, false, dims)
        self.x_upd = Upsample(channels, false, dims)
    elseif down then
        self.h_upd = Downsample(channels, false, dims)
        self.x_upd = Downsample(channels, false, dims)
    else
        -- self.h_upd = self.x_upd = nn.Identity()
        self.h_upd = nn.Identity()
        self.x_upd = self.h_upd
    end

    self.emb_layers = nn.Sequential(
        nn.SiLU(),
        -- linear(emb_channels, 2 * self.out_channels if use_scale_shift_norm
        --     else self.out_channels)
        nn.Linear(emb_channels, use_scale_shift_norm and 2 * self.out_channels
            or self.out_channels)
    )
    self.out_layers = nn.Sequential(
        normalization(self.out_channels),
        nn.SiLU(),
        -- nn.Dropout(p=dropout),
        nn.Dropout({ p = dropout }),
        -- zero_module(conv_nd(dims, self.out_channels, self.out_channels, 3, padding=1))
        zero_module(conv_nd(dims, self.out_channels, self.out_channels, 3, { padding = 1 }))
    )

    if self.out_channels == channels then
        self.skip_connection = nn.Identity()
    elseif use_conv then
        -- self.skip_connection = conv_nd(dims, channels, self.out_channels, 3, padding=1)
        self.skip_connection = conv_nd(dims, channels, self.out_channels, 3, { padding = 1 })
    else
        self.skip_connection = conv_nd(dims, channels, self.out_channels, 1)
    end
end
-- def forward(self, x, emb):
--     return checkpoint(self._forward, (x, emb), self.parameters(), self.use_checkpoint)
function ResBlock:forward(x, emb)
    local h
    if self.updown then
        -- in_rest, in_conv = self.in_layers[:-1], self.in_layers[-1]
        local in_rest, in_conv = self.in_layers[{ { 1, -2 } }], self.in_layers[-1]
        h = in_rest(x)
        h = self.h_upd(h)
        x = self.x_upd(x)
        h = in_conv(h)
    else
        h = self.in_layers(x)
    end
    -- emb_out = self.emb_layers(emb).type(h.dtype)
    local emb_out = self.emb_layers(emb):type(h.dtype)
    -- while len(emb_out.shape) < len(h.shape): emb_out = emb_out[..., None]
    while #emb_out.shape < #h.shape do
        emb_out = emb_out[{ "...", tide.newaxis }]
    end
    if self.use_scale_shift_norm then
        -- out_norm, out_rest = self.out_layers[0], self.out_layers[1:]
        local out_norm, out_rest = self.out_layers[1], self.out_layers[{ { 2, -1 } }]
        -- scale, shift = th.chunk(emb_out, 2, dim=1)
        local scale, shift = unpack(tide.chunk(emb_out, 2, { dim = 2 }))
        h = out_norm(h) * (1 + scale) + shift
        h = out_rest(h)
    else
        h = h + emb_out
        h = self.out_layers(h)
    end
    return self.skip_connection(x) + h
end

-- a tiny UNetModel (model_channels 8, one down, a middle with a SpatialTransformer, the ups
-- with skip cats), its __init__ written out by hand; forward is UNetModel.forward's
local TinyUNet = nn.Module:extend("TinyUNet")
function TinyUNet:init()
    local mc, ed = 8, 16
    self.model_channels = mc
    -- self.time_embed = nn.Sequential(linear(model_channels, time_embed_dim), nn.SiLU(),
    --     linear(time_embed_dim, time_embed_dim))
    self.time_embed = nn.Sequential(nn.Linear(mc, ed), nn.SiLU(), nn.Linear(ed, ed))
    self.input_blocks = nn.ModuleList({
        TimestepEmbedSequential(conv_nd(2, 4, mc, 3, { padding = 1 })),
        TimestepEmbedSequential(ResBlock(mc, ed, 0.0)),
        TimestepEmbedSequential(Downsample(mc, true, { dims = 2 })),
    })
    self.middle_block = TimestepEmbedSequential(
        ResBlock(mc, ed, 0.0),
        SpatialTransformer(mc, 2, 4, { context_dim = 6 }),
        ResBlock(mc, ed, 0.0))
    self.output_blocks = nn.ModuleList({
        TimestepEmbedSequential(ResBlock(2 * mc, ed, 0.0, { out_channels = mc }),
            Upsample(mc, true, { dims = 2 })),
        TimestepEmbedSequential(ResBlock(2 * mc, ed, 0.0,
            { out_channels = mc, use_scale_shift_norm = true })),
        TimestepEmbedSequential(ResBlock(2 * mc, ed, 0.0, { out_channels = mc, use_conv = true })),
    })
    -- self.out = nn.Sequential(normalization(ch), nn.SiLU(),
    --     zero_module(conv_nd(dims, model_channels, out_channels, 3, padding=1)))
    self.out = nn.Sequential(normalization(mc), nn.SiLU(),
        zero_module(conv_nd(2, mc, 4, 3, { padding = 1 })))
end
-- def forward(self, x, timesteps=None, context=None, y=None, **kwargs):
function TinyUNet:forward(x, timesteps, context)
    local hs = {}
    -- t_emb = timestep_embedding(timesteps, self.model_channels, repeat_only=False)
    local t_emb = timestep_embedding(timesteps, self.model_channels, nil, false)
    local emb = self.time_embed(t_emb)
    local h = x
    -- for module in self.input_blocks: h = module(h, emb, context); hs.append(h)
    for _, module in ipairs(self.input_blocks) do
        h = module(h, emb, context)
        hs[#hs + 1] = h
    end
    h = self.middle_block(h, emb, context)
    for _, module in ipairs(self.output_blocks) do
        -- h = th.cat([h, hs.pop()], dim=1)
        h = tide.cat({ h, table.remove(hs) }, { dim = 2 })
        h = module(h, emb, context)
    end
    return self.out(h)
end

---------------------------------------------------------------------------------------------
-- the checks
---------------------------------------------------------------------------------------------
describe("stable-diffusion attention.py / openaimodel.py", function()
    -- the inputs of the reference: x = X(2, 5, 8); ctx = X(2, 3, 6, a=0.2, b=1.0)
    local x = X({ 2, 5, 8 })
    local ctx = X({ 2, 3, 6 }, 0.2, 1.0)

    it("helpers: exists, uniq, default, max_neg_value, init_, zero_module", function()
        assert.is_true(exists(0))
        assert.is_false(exists(nil))
        assert.are.same({ 3, 1, 2 }, uniq({ 3, 1, 3, 2, 1 }))
        assert.are.equal(5, default(nil, function() return 5 end))
        assert.are.equal(4, default(4, 5))
        assert.are.equal(-3.4028234663852886e38, max_neg_value(tide.zeros(1)))
        local w = init_(tide.empty(3, 16))
        assert.is_true(w:abs():max():item() <= 0.25)
        assert.is_true(w:abs():max():item() > 0)
        local conv = zero_module(nn.Conv2d(2, 3, 1))
        assert.are.equal(0, conv.weight:abs():sum():item())
        assert.are.equal(0, conv.bias:abs():sum():item())
    end)

    it("timestep_embedding matches PyTorch (even and odd dim, repeat_only)", function()
        local t = tide.tensor({ 3, 250 })
        check(timestep_embedding(t, 8), { 2, 8 }, 3.577479365, 9.365514817,
            { -0.9899924994, 0.9553365111, 0.9995500445, 0.9999955297 },
            { -0.1323536336, 0.5984721184, 0.2474039495 }, "temb")
        check(timestep_embedding(t, 7), { 2, 7 }, 1.679502099, 7.241673439,
            { -0.9899924994, 0.9903206825, 0.9999791384, 0.1411200017 },
            { -0.8205651641, 0.5129421353, 0.0 }, "temb7")
        check(timestep_embedding(t, 5, nil, true), { 2, 5 }, 1265, 1265,
            { 3, 3, 3, 3 }, { 250, 250, 250 }, "temb_rep")
    end)

    it("CrossAttention matches PyTorch: self, with context, with a mask", function()
        -- CrossAttention(8, heads=2, dim_head=4)
        local self_attn = fill(CrossAttention(8, { heads = 2, dim_head = 4 }))
        check(self_attn(x), { 2, 5, 8 }, -13.6213775, 15.76137394,
            { -0.1507079601, -0.3757051229, -0.1930436492, -0.3936485946 },
            { -0.1984778643, 0.0445354953, 0.0382863171 }, "ca_self")
        local ca = fill(CrossAttention(8, { context_dim = 6, heads = 2, dim_head = 4 }))
        check(ca(x, ctx), { 2, 5, 8 }, -13.54207273, 15.70215611,
            { -0.2085203826, -0.3084341288, -0.2675608993, -0.314335525 },
            { 0.0063368231, -0.1441030651, 0.2045452595 }, "ca_ctx")
        local mask = tide.tensor({ { true, false, true }, { true, true, false } })
        check(ca(x, ctx, mask), { 2, 5, 8 }, -13.47783963, 16.67633819,
            { -0.2380364686, -0.2729335129, -0.3078786135, -0.270526588 },
            { 0.0383701026, -0.1814381182, 0.2459543347 }, "ca_mask")
        -- by name, as forward(x, context=ctx, mask=mask)
        check(ca(x, { context = ctx, mask = mask }), { 2, 5, 8 }, -13.47783963, 16.67633819,
            { -0.2380364686, -0.2729335129, -0.3078786135, -0.270526588 },
            { 0.0383701026, -0.1814381182, 0.2459543347 }, "ca_mask by name")
    end)

    it("SpatialTransformer matches PyTorch; GEGLU and plain FeedForward", function()
        local st = fill(SpatialTransformer(8, 2, 4, { context_dim = 6 }))
        assert.are.equal(26, #st:parameters())
        local xi = X({ 2, 8, 8, 8 }, 0.05)
        check(st(xi, ctx), { 2, 8, 8, 8 }, 167.0702249, 574.5068283,
            { -0.3741488755, -0.3242290616, -0.274428457, -0.224871397 },
            { 0.7634716034, 0.797939837, 0.8305600286 }, "st")
        local ff = FeedForward(8, { glu = false })
        assert.are.equal("Sequential", ff.net[1].__name)
        assert.are.same({ 2, 5, 8 }, ff(x).shape)
        assert.is_true(tide.isinstance(FeedForward(8, { glu = true }).net[1], GEGLU))
    end)

    it("LinearAttention and SpatialSelfAttention match PyTorch", function()
        local xs = X({ 2, 8, 4, 4 })
        check(fill(LinearAttention(8, { heads = 2, dim_head = 4 }))(xs), { 2, 8, 4, 4 },
            -7.891229175, 46.92557862, { 0.2725355625, 0.2723601758, 0.2721890807, 0.2720240057 },
            { -0.2949698567, -0.2953720689, -0.2957980931 }, "la")
        check(fill(SpatialSelfAttention(8))(xs), { 2, 8, 4, 4 }, -42.57292257, 187.2620694,
            { 0.2868443429, 0.3866777718, 0.4855136871, 0.5823645592 },
            { -0.4507201314, -0.3531131744, -0.2581430376 }, "ssa")
    end)

    it("ResBlock matches PyTorch with and without scale-shift; Up / Downsample", function()
        local xi = X({ 2, 8, 8, 8 }, 0.05)
        local emb = X({ 2, 16 }, 0.3)
        check(fill(ResBlock(8, 16, 0.0))(xi, emb), { 2, 8, 8, 8 }, -156.8880748, 684.5684816,
            { 0.249909088, 0.3418294489, 0.3488266766, 0.3834593594 },
            { 0.7003872395, 0.7316451073, 0.6810860634 }, "rb")
        local rb_ss = fill(ResBlock(8, 16, 0.0, { out_channels = 4, use_scale_shift_norm = true }))
        check(rb_ss(xi, emb), { 2, 4, 8, 8 }, -169.4595935, 170.6563665,
            { -0.0163679719, 0.0136880279, 0.0028100312, -0.0046215057 },
            { -0.2561532259, -0.2605144382, -0.2780199647 }, "rb_ss")
        assert.are.same({ 2, 8, 16, 16 }, Upsample(8, false)(xi).shape)
        assert.are.same({ 2, 8, 4, 4 }, Downsample(8, false)(xi).shape)
        assert.are.same({ 2, 8, 4, 4 }, ResBlock(8, 16, 0.0, { down = true })(xi, emb).shape)
        assert.are.same({ 2, 8, 16, 16 }, ResBlock(8, 16, 0.0, { up = true })(xi, emb).shape)
    end)

    it("the tiny UNet matches PyTorch, then trains 2 MSE steps on noise", function()
        local unet = fill(TinyUNet())
        local params = unet:parameters()
        assert.are.equal(106, #params)
        -- the numels of PyTorch's named_parameters(), in order (a check of the order)
        local want = { 128, 16, 256, 16, 288, 8, 8, 8, 576, 8, 128, 8, 8, 8, 576, 8, 576, 8, 8, 8,
            576, 8, 128, 8, 8, 8, 576, 8, 8, 8, 64, 8, 64, 64, 64, 64, 8, 512, 64, 256, 8, 64, 48,
            48, 64, 8, 8, 8, 8, 8, 8, 8, 64, 8, 8, 8, 576, 8, 128, 8, 8, 8, 576, 8, 16, 16, 1152,
            8, 128, 8, 8, 8, 576, 8, 128, 8, 576, 8, 16, 16, 1152, 8, 256, 16, 8, 8, 576, 8, 128,
            8, 16, 16, 1152, 8, 128, 8, 8, 8, 576, 8, 1152, 8, 8, 8, 288, 4 }
        for i, p in ipairs(params) do
            assert.are.equal(want[i], p:numel(), "parameter " .. i)
        end
        local xu = X({ 2, 4, 8, 8 }, 0.07)
        local t = tide.tensor({ 3, 250 })
        check(unet(xu, t, ctx), { 2, 4, 8, 8 }, -128.2026796, 239.4992266,
            { -0.1463402063, -0.0056062639, 0.079865098, 0.0915772915 },
            { 0.3988542855, 0.3656087816, 0.2207706869 }, "unet")

        -- 2 steps of MSE on random noise targets
        unet:train()
        tide.manual_seed(0)
        local opt = optim.Adam(unet:parameters(), { lr = 1e-3 })
        local noise = tide.randn(2, 4, 8, 8)
        local losses = {}
        for step = 1, 3 do
            local loss = F.mse_loss(unet(xu, t, ctx), noise)
            losses[step] = loss:item()
            assert_finite(losses[step])
            if step < 3 then
                opt:zero_grad()
                loss:backward()
                opt:step()
            end
        end
        assert.is_true(losses[3] < losses[2] and losses[2] < losses[1])
    end)
end)
