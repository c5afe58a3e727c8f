-- ported_scripts104_spec.lua — lucidrains/vit-pytorch's vit_pytorch/cait.py (exists,
-- dropout_layers, LayerScale with its depth-dependent init_eps, FeedForward, Attention with the
-- talking heads mix_heads_pre_attn / mix_heads_post_attn and the context concat, Transformer,
-- CaiT: patch embedding through einops' Rearrange, pos embedding, cls token repeat, the patch
-- transformer then the class transformer over the patches as context) and lucidrains/linformer's
-- linformer/linformer.py (default, init_, PreNorm, FeedForward with GELU,
-- LinformerSelfAttention with proj_k / proj_v and share_kv, the einsum projections along the
-- sequence, Linformer over reversible.py's SequentialSequence), ported line for line at tiny
-- sizes (image 3x8x8, patch 4, dim 8, depth 2, cls_depth 1, heads 2, dim_head 4, mlp_dim 16,
-- 3 classes; Linformer dim 8, seq_len 6, k 3, depth 1). The Python line stands above each Lua
-- line that differs from it. Dims are 1-based; ModuleList children are "1".."n".
-- The values were computed with PyTorch 1.13 on the same weights (a formula over each
-- parameter's index in named_parameters order) and the same inputs.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local einops = tide.einops
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list
local close = ported.close

-- from einops.layers.torch import Rearrange
local Rearrange = einops.layers.Rearrange

---------------------------------------------------------------------------------------------
-- 1. vit_pytorch/cait.py
---------------------------------------------------------------------------------------------
-- def exists(val):
local function exists(val)
    -- return val is not None
    return val ~= nil
end

-- def dropout_layers(layers, dropout):
local function dropout_layers(layers, dropout)
    if dropout == 0 then
        return layers
    end

    -- num_layers = len(layers)
    local num_layers = #layers
    -- to_drop = torch.zeros(num_layers).uniform_(0., 1.) < dropout
    -- GAP: Lua's < always yields one boolean, so an elementwise compare is t:lt(v) (tide raises
    -- "tide: <: a tensor of 3 elements has no single truth value; compare elementwise with ...")
    local to_drop = tide.zeros(num_layers):uniform_(0, 1):lt(dropout)

    -- make sure at least one layer makes it
    -- if all(to_drop):
    if to_drop:all():item() then
        -- rand_index = randrange(num_layers)
        local rand_index = math.random(num_layers)
        -- to_drop[rand_index] = False
        to_drop[rand_index] = false
    end

    -- layers = [layer for (layer, drop) in zip(layers, to_drop) if not drop]
    local kept = {}
    for i = 1, num_layers do
        if not to_drop[i]:item() then kept[#kept + 1] = layers[i] end
    end
    return kept
end

-- class LayerScale(nn.Module):
local LayerScale = nn.Module:extend("LayerScale")
-- def __init__(self, dim, fn, depth):
function LayerScale:init(dim, fn, depth)
    local init_eps
    if depth <= 18 then -- epsilon detailed in section 2 of paper
        init_eps = 0.1
    elseif depth > 18 and depth <= 24 then
        init_eps = 1e-5
    else
        init_eps = 1e-6
    end

    -- scale = torch.zeros(1, 1, dim).fill_(init_eps)
    local scale = tide.zeros(1, 1, dim):fill_(init_eps)
    self.scale = nn.Parameter(scale)
    self.fn = fn
end
-- def forward(self, x, **kwargs):
function LayerScale:forward(x, ...)
    -- return self.fn(x, **kwargs) * self.scale
    return self.fn(x, ...) * self.scale
end

-- class FeedForward(nn.Module):
local FeedForward = nn.Module:extend("FeedForward")
-- def __init__(self, dim, hidden_dim, dropout = 0.):
function FeedForward:init(dim, hidden_dim, dropout)
    dropout = dropout or 0
    self.net = nn.Sequential(
        nn.LayerNorm(dim),
        nn.Linear(dim, hidden_dim),
        nn.GELU(),
        nn.Dropout(dropout),
        nn.Linear(hidden_dim, dim),
        nn.Dropout(dropout)
    )
end
function FeedForward:forward(x)
    return self.net(x)
end

-- class Attention(nn.Module):
local Attention = nn.Module:extend("Attention")
-- def __init__(self, dim, heads = 8, dim_head = 64, dropout = 0.):
function Attention:init(dim, heads, dim_head, dropout)
    heads, dim_head, dropout = heads or 8, dim_head or 64, dropout or 0
    -- inner_dim = dim_head *  heads
    local inner_dim = dim_head * heads
    self.heads = heads
    self.scale = dim_head ^ -0.5

    self.norm = nn.LayerNorm(dim)
    -- self.to_q = nn.Linear(dim, inner_dim, bias = False)
    self.to_q = nn.Linear(dim, inner_dim, { bias = false })
    -- self.to_kv = nn.Linear(dim, inner_dim * 2, bias = False)
    self.to_kv = nn.Linear(dim, inner_dim * 2, { bias = false })

    -- self.attend = nn.Softmax(dim = -1)
    self.attend = nn.Softmax({ dim = -1 })
    self.dropout = nn.Dropout(dropout)

    self.mix_heads_pre_attn = nn.Parameter(tide.randn(heads, heads))
    self.mix_heads_post_attn = nn.Parameter(tide.randn(heads, heads))

    self.to_out = nn.Sequential(
        nn.Linear(inner_dim, dim),
        nn.Dropout(dropout)
    )
end

-- def forward(self, x, context = None):
function Attention:forward(x, context)
    -- b, n, _, h = *x.shape, self.heads
    local h = self.heads

    x = self.norm(x)
    -- context = x if not exists(context) else torch.cat((x, context), dim = 1)
    context = not exists(context) and x or tide.cat({ x, context }, 2)

    -- qkv = (self.to_q(x), *self.to_kv(context).chunk(2, dim = -1))
    local qkv = { self.to_q(x), unpack(self.to_kv(context):chunk(2, -1)) }
    -- q, k, v = map(lambda t: rearrange(t, 'b n (h d) -> b h n d', h = h), qkv)
    local q, k, v = unpack((function()
        local r = {}
        for i, t in ipairs(qkv) do r[i] = einops.rearrange(t, "b n (h d) -> b h n d", { h = h }) end
        return r
    end)())

    -- dots = einsum('b h i d, b h j d -> b h i j', q, k) * self.scale
    local dots = einops.einsum(q, k, "b h i d, b h j d -> b h i j") * self.scale

    -- talking heads, pre-softmax
    -- dots = einsum('b h i j, h g -> b g i j', dots, self.mix_heads_pre_attn)
    dots = einops.einsum(dots, self.mix_heads_pre_attn, "b h i j, h g -> b g i j")

    local attn = self.attend(dots)
    attn = self.dropout(attn)

    -- talking heads, post-softmax
    -- attn = einsum('b h i j, h g -> b g i j', attn, self.mix_heads_post_attn)
    attn = einops.einsum(attn, self.mix_heads_post_attn, "b h i j, h g -> b g i j")

    -- out = einsum('b h i j, b h j d -> b h i d', attn, v)
    local out = einops.einsum(attn, v, "b h i j, b h j d -> b h i d")
    -- out = rearrange(out, 'b h n d -> b n (h d)')
    out = einops.rearrange(out, "b h n d -> b n (h d)")
    return self.to_out(out)
end

-- class Transformer(nn.Module):
local Transformer = nn.Module:extend("Transformer")
-- def __init__(self, dim, depth, heads, dim_head, mlp_dim, dropout = 0., layer_dropout = 0.):
function Transformer:init(dim, depth, heads, dim_head, mlp_dim, dropout, layer_dropout)
    -- self.layers = nn.ModuleList([])
    self.layers = nn.ModuleList({})
    self.layer_dropout = layer_dropout or 0

    -- for ind in range(depth):
    for ind = 0, depth - 1 do
        -- self.layers.append(nn.ModuleList([
        --     LayerScale(dim, Attention(dim, heads = heads, dim_head = dim_head,
        --                dropout = dropout), depth = ind + 1),
        --     LayerScale(dim, FeedForward(dim, mlp_dim, dropout = dropout), depth = ind + 1)
        -- ]))
        self.layers:append(nn.ModuleList({
            LayerScale(dim, Attention(dim, heads, dim_head, dropout), ind + 1),
            LayerScale(dim, FeedForward(dim, mlp_dim, dropout), ind + 1)
        }))
    end
end
-- def forward(self, x, context = None):
function Transformer:forward(x, context)
    -- layers = dropout_layers(self.layers, dropout = self.layer_dropout)
    local layers = dropout_layers(self.layers:children(), self.layer_dropout)
    self.kept = #layers -- (not in cait.py: for the test of the layer drop)

    -- for attn, ff in layers:
    for _, layer in ipairs(layers) do
        local attn, ff = layer[1], layer[2]
        -- x = attn(x, context = context) + x
        x = attn(x, context) + x
        x = ff(x) + x
    end
    return x
end

-- class CaiT(nn.Module):
local CaiT = nn.Module:extend("CaiT")
-- def __init__(self, *, image_size, patch_size, num_classes, dim, depth, cls_depth, heads,
--              mlp_dim, dim_head = 64, dropout = 0., emb_dropout = 0., layer_dropout = 0.):
function CaiT:init(o)
    local image_size, patch_size, num_classes, dim = o.image_size, o.patch_size, o.num_classes,
        o.dim
    local depth, cls_depth, heads, mlp_dim = o.depth, o.cls_depth, o.heads, o.mlp_dim
    local dim_head, dropout = o.dim_head or 64, o.dropout or 0
    local emb_dropout, layer_dropout = o.emb_dropout or 0, o.layer_dropout or 0
    -- assert image_size % patch_size == 0, 'Image dimensions must be divisible by the patch size.'
    assert(image_size % patch_size == 0, "Image dimensions must be divisible by the patch size.")
    -- num_patches = (image_size // patch_size) ** 2
    local num_patches = math.floor(image_size / patch_size) ^ 2
    local patch_dim = 3 * patch_size ^ 2

    self.to_patch_embedding = nn.Sequential(
        -- Rearrange('b c (h p1) (w p2) -> b (h w) (p1 p2 c)', p1 = patch_size, p2 = patch_size),
        Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", { p1 = patch_size, p2 = patch_size }),
        nn.LayerNorm(patch_dim),
        nn.Linear(patch_dim, dim),
        nn.LayerNorm(dim)
    )

    self.pos_embedding = nn.Parameter(tide.randn(1, num_patches, dim))
    self.cls_token = nn.Parameter(tide.randn(1, 1, dim))

    self.dropout = nn.Dropout(emb_dropout)

    -- self.patch_transformer = Transformer(dim, depth, heads, dim_head, mlp_dim, dropout,
    --                                      layer_dropout)
    self.patch_transformer = Transformer(dim, depth, heads, dim_head, mlp_dim, dropout,
        layer_dropout)
    -- self.cls_transformer = Transformer(dim, cls_depth, heads, dim_head, mlp_dim, dropout,
    --                                    layer_dropout)
    self.cls_transformer = Transformer(dim, cls_depth, heads, dim_head, mlp_dim, dropout,
        layer_dropout)

    self.mlp_head = nn.Sequential(
        nn.LayerNorm(dim),
        nn.Linear(dim, num_classes)
    )
end

function CaiT:forward(img)
    local x = self.to_patch_embedding(img)
    -- b, n, _ = x.shape
    local b, n = x:size(1), x:size(2)

    -- x += self.pos_embedding[:, :n]
    x = x + self.pos_embedding[{ {}, { 1, n } }]
    x = self.dropout(x)

    x = self.patch_transformer(x)
    self.patch_out = x -- (not in cait.py: the test reads the patch tokens)

    -- cls_tokens = repeat(self.cls_token, '() n d -> b n d', b = b)
    local cls_tokens = einops.repeat_(self.cls_token, "() n d -> b n d", { b = b })
    -- x = self.cls_transformer(cls_tokens, context = x)
    x = self.cls_transformer(cls_tokens, x)

    -- return self.mlp_head(x[:, 0])
    return self.mlp_head(x[{ {}, 1 }])
end

---------------------------------------------------------------------------------------------
-- 2. linformer/linformer.py (and reversible.py's SequentialSequence)
---------------------------------------------------------------------------------------------
-- def default(val, default_val):
local function default(val, default_val)
    -- return val if val is not None else default_val
    if val ~= nil then return val end
    return default_val
end

-- def init_(tensor):
local function init_(tensor)
    -- dim = tensor.shape[-1]
    local dim = tensor:size(-1)
    local std = 1 / math.sqrt(dim)
    tensor:uniform_(-std, std)
    return tensor
end

-- class PreNorm(nn.Module):
local PreNorm = nn.Module:extend("PreNorm")
function PreNorm:init(dim, fn)
    self.fn = fn
    self.norm = nn.LayerNorm(dim)
end
function PreNorm:forward(x)
    x = self.norm(x)
    return self.fn(x)
end

-- GELU = nn.GELU if hasattr(nn, 'GELU') else GELU_
local GELU = nn.GELU

-- class FeedForward(nn.Module):
local LFeedForward = nn.Module:extend("FeedForward")
-- def __init__(self, dim, mult = 4, dropout = 0., activation = None, glu = False):
function LFeedForward:init(dim, mult, dropout, activation, glu)
    mult, dropout, glu = mult or 4, dropout or 0, glu or false
    activation = default(activation, GELU)

    self.glu = glu
    -- self.w1 = nn.Linear(dim, dim * mult * (2 if glu else 1))
    self.w1 = nn.Linear(dim, dim * mult * (glu and 2 or 1))
    self.act = activation()
    self.dropout = nn.Dropout(dropout)
    self.w2 = nn.Linear(dim * mult, dim)
end

-- def forward(self, x, **kwargs):
function LFeedForward:forward(x)
    if not self.glu then
        x = self.w1(x)
        x = self.act(x)
    else
        -- x, v = self.w1(x).chunk(2, dim=-1)
        local v
        x, v = unpack(self.w1(x):chunk(2, -1))
        x = self.act(x) * v
    end

    x = self.dropout(x)
    x = self.w2(x)
    return x
end

-- class LinformerSelfAttention(nn.Module):
local LinformerSelfAttention = nn.Module:extend("LinformerSelfAttention")
-- def __init__(self, dim, seq_len, k = 256, heads = 8, dim_head = None, one_kv_head = False,
--              share_kv = False, dropout = 0.):
function LinformerSelfAttention:init(dim, seq_len, k, heads, dim_head, one_kv_head, share_kv,
                                     dropout)
    k, heads, dropout = k or 256, heads or 8, dropout or 0
    -- assert (dim % heads) == 0, 'dimension must be divisible by the number of heads'
    assert(dim % heads == 0, "dimension must be divisible by the number of heads")

    self.seq_len = seq_len
    self.k = k

    self.heads = heads

    -- dim_head = default(dim_head, dim // heads)
    dim_head = default(dim_head, math.floor(dim / heads))
    self.dim_head = dim_head

    -- self.to_q = nn.Linear(dim, dim_head * heads, bias = False)
    self.to_q = nn.Linear(dim, dim_head * heads, { bias = false })

    -- kv_dim = dim_head if one_kv_head else (dim_head * heads)
    local kv_dim = one_kv_head and dim_head or (dim_head * heads)
    -- self.to_k = nn.Linear(dim, kv_dim, bias = False)
    self.to_k = nn.Linear(dim, kv_dim, { bias = false })
    self.proj_k = nn.Parameter(init_(tide.zeros(seq_len, k)))

    self.share_kv = share_kv or false
    if not share_kv then
        -- self.to_v = nn.Linear(dim, kv_dim, bias = False)
        self.to_v = nn.Linear(dim, kv_dim, { bias = false })
        self.proj_v = nn.Parameter(init_(tide.zeros(seq_len, k)))
    end

    self.dropout = nn.Dropout(dropout)
    self.to_out = nn.Linear(dim_head * heads, dim)
end

-- def forward(self, x, context = None, **kwargs):
function LinformerSelfAttention:forward(x, context)
    -- b, n, d, d_h, h, k = *x.shape, self.dim_head, self.heads, self.k
    local b, n = x:size(1), x:size(2)
    local d_h, h, k = self.dim_head, self.heads, self.k

    -- kv_len = n if context is None else context.shape[1]
    local kv_len = context == nil and n or context:size(2)
    -- assert kv_len <= self.seq_len, f'the sequence length of the key / values must be
    --     {self.seq_len} - {kv_len} given'
    assert(kv_len <= self.seq_len, string.format(
        "the sequence length of the key / values must be %d - %d given", self.seq_len, kv_len))

    local queries = self.to_q(x)

    -- proj_seq_len = lambda args: torch.einsum('bnd,nk->bkd', *args)
    local function proj_seq_len(t, p) return tide.einsum("bnd,nk->bkd", t, p) end

    -- kv_input = x if context is None else context
    local kv_input = context == nil and x or context

    local keys = self.to_k(kv_input)
    -- values = self.to_v(kv_input) if not self.share_kv else keys
    local values = not self.share_kv and self.to_v(kv_input) or keys

    -- kv_projs = (self.proj_k, self.proj_v if not self.share_kv else self.proj_k)
    local kv_projs = { self.proj_k, not self.share_kv and self.proj_v or self.proj_k }

    -- allow for variable sequence lengths (less than maximum sequence length) by slicing
    -- projections

    if kv_len < self.seq_len then
        -- kv_projs = map(lambda t: t[:kv_len], kv_projs)
        kv_projs = { kv_projs[1][{ { 1, kv_len } }], kv_projs[2][{ { 1, kv_len } }] }
    end

    -- project keys and values along the sequence length dimension to k

    -- keys, values = map(proj_seq_len, zip((keys, values), kv_projs))
    keys, values = proj_seq_len(keys, kv_projs[1]), proj_seq_len(values, kv_projs[2])

    -- merge head into batch for queries and key / values

    -- queries = queries.reshape(b, n, h, -1).transpose(1, 2)
    queries = queries:reshape(b, n, h, -1):transpose(2, 3)

    -- merge_key_values = lambda t: t.reshape(b, k, -1, d_h).transpose(1, 2)
    --     .expand(-1, h, -1, -1)
    local function merge_key_values(t)
        return t:reshape(b, k, -1, d_h):transpose(2, 3):expand(-1, h, -1, -1)
    end
    -- keys, values = map(merge_key_values, (keys, values))
    keys, values = merge_key_values(keys), merge_key_values(values)

    -- attention

    -- dots = torch.einsum('bhnd,bhkd->bhnk', queries, keys) * (d_h ** -0.5)
    local dots = tide.einsum("bhnd,bhkd->bhnk", queries, keys) * (d_h ^ -0.5)
    -- attn = dots.softmax(dim=-1)
    local attn = dots:softmax(-1)
    attn = self.dropout(attn)
    local out = tide.einsum("bhnk,bhkd->bhnd", attn, values)

    -- split heads
    -- out = out.transpose(1, 2).reshape(b, n, -1)
    out = out:transpose(2, 3):reshape(b, n, -1)
    return self.to_out(out)
end

-- reversible.py: class SequentialSequence(nn.Module):
local SequentialSequence = nn.Module:extend("SequentialSequence")
-- def __init__(self, layers, args_route = {}, layer_dropout = 0.):
-- GAP: args_route / route_args and layer_drop are left out (Linformer passes neither)
function SequentialSequence:init(layers)
    self.layers = layers
end
-- def forward(self, x, **kwargs):
function SequentialSequence:forward(x)
    -- for (f, g), (f_args, g_args) in layers_and_args:
    for _, layer in ipairs(self.layers:children()) do
        local f, g = layer[1], layer[2]
        -- x = x + f(x, **f_args)
        x = x + f(x)
        x = x + g(x)
    end
    return x
end

-- class Linformer(nn.Module):
local Linformer = nn.Module:extend("Linformer")
-- def __init__(self, dim, seq_len, depth, k = 256, heads = 8, dim_head = None,
--              one_kv_head = False, share_kv = False, reversible = False, dropout = 0.):
function Linformer:init(dim, seq_len, depth, o)
    o = o or {}
    local k, heads, dim_head, one_kv_head = o.k or 256, o.heads or 8, o.dim_head, o.one_kv_head
    local share_kv, reversible, dropout = o.share_kv, o.reversible, o.dropout or 0
    -- layers = nn.ModuleList([])
    local layers = nn.ModuleList({})
    -- for _ in range(depth):
    for _ = 1, depth do
        -- attn = LinformerSelfAttention(dim, seq_len, k = k, heads = heads, dim_head = dim_head,
        --     one_kv_head = one_kv_head, share_kv = share_kv, dropout = dropout)
        local attn = LinformerSelfAttention(dim, seq_len, k, heads, dim_head, one_kv_head,
            share_kv, dropout)
        -- ff = FeedForward(dim, dropout = dropout)
        local ff = LFeedForward(dim, nil, dropout)

        -- layers.append(nn.ModuleList([
        layers:append(nn.ModuleList({
            PreNorm(dim, attn),
            PreNorm(dim, ff)
        }))
    end

    -- execute_type = ReversibleSequence if reversible else SequentialSequence
    -- GAP: ReversibleSequence (reversible.py's _ReversibleFunction, an autograd.Function whose
    -- backward re-runs each block under saved RNG states) is not ported: only
    -- SequentialSequence
    assert(not reversible, "ReversibleSequence is not ported")
    local execute_type = SequentialSequence
    self.net = execute_type(layers)
end

function Linformer:forward(x)
    return self.net(x)
end

---------------------------------------------------------------------------------------------
-- the checks
---------------------------------------------------------------------------------------------
-- for i, (n, p) in enumerate(model.named_parameters()):
--     j = torch.arange(p.numel())
--     p.copy_(((((j * j * 7 + j * 3 + i * 5) % 23) / 23 - 0.5) * 0.8).reshape(p.shape))
-- (a pseudo-random pattern, not a sinusoid, so no weight matrix is of rank 2)
local function det_init(model)
    tide.no_grad(function()
        for i, np_ in ipairs(model:named_parameters()) do
            local p = np_[2]
            local j = tide.arange(0, p:numel())
            p:copy_(((((j * j * 7 + j * 3 + (i - 1) * 5) % 23) / 23 - 0.5) * 0.8)
                :reshape(p.shape))
        end
    end)
end

-- k = torch.arange(2*3*8*8); img = (((k * k * 7 + k * 3) % 23) / 11.0 - 1).reshape(2, 3, 8, 8)
local function image()
    local k = tide.arange(0, 2 * 3 * 8 * 8)
    return (((k * k * 7 + k * 3) % 23) / 11.0 - 1):reshape(2, 3, 8, 8)
end

local function cait(layer_dropout)
    -- CaiT(image_size=8, patch_size=4, num_classes=3, dim=8, depth=2, cls_depth=1, heads=2,
    --      dim_head=4, mlp_dim=16)
    return CaiT({ image_size = 8, patch_size = 4, num_classes = 3, dim = 8, depth = 2,
        cls_depth = 1, heads = 2, dim_head = 4, mlp_dim = 16, layer_dropout = layer_dropout })
end

describe("ported lucidrains/vit-pytorch cait.py (CaiT)", function()
    it("builds PyTorch's parameters: names in order, LayerScale's init_eps", function()
        local m = cait(0)
        local names = {}
        for _, np_ in ipairs(m:named_parameters()) do names[#names + 1] = np_[1] end
        assert.are.equal(60, #names)
        assert.are.same({ "pos_embedding", "cls_token", "to_patch_embedding.2.weight",
            "to_patch_embedding.2.bias", "to_patch_embedding.3.weight",
            "to_patch_embedding.3.bias", "to_patch_embedding.4.weight",
            "to_patch_embedding.4.bias", "patch_transformer.layers.1.1.scale",
            "patch_transformer.layers.1.1.fn.mix_heads_pre_attn",
            "patch_transformer.layers.1.1.fn.mix_heads_post_attn" },
            { unpack(names, 1, 11) })
        assert.are.equal("mlp_head.2.bias", names[60])
        assert.are.same({ 1, 4, 8 }, m.pos_embedding:size())
        assert_close_list({ 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1 },
            m.patch_transformer.layers[2][1].scale:reshape(-1):totable(), 1e-7, "scale")
        -- init_eps over depth: 0.1 up to 18, 1e-5 to 24, 1e-6 after
        assert.is_true(close(LayerScale(2, nn.Identity(), 18).scale:max():item(), 0.1, 1e-7))
        assert.is_true(close(LayerScale(2, nn.Identity(), 19).scale:max():item(), 1e-5, 1e-7))
        assert.is_true(close(LayerScale(2, nn.Identity(), 25).scale:max():item(), 1e-6, 1e-7))
    end)

    it("forward (layer_dropout 0, eval): patch tokens and logits match PyTorch 1.13", function()
        local m = cait(0)
        det_init(m)
        m:eval()
        local logits = m(image())
        assert.are.same({ 2, 3 }, logits:size())
        local po = m.patch_out
        assert.are.same({ 2, 4, 8 }, po:size())
        assert.is_true(close(po:sum():item(), -10.154044151306152, 1e-4))
        assert.is_true(close(po:abs():sum():item(), 21.7728328704834, 1e-4))
        assert_close_list({ -0.05880517140030861, 0.20694087445735931, -0.7154828906059265,
            0.0812772810459137, -0.11792203038930893, 0.3000530004501343, -0.8034191131591797,
            -0.11554747819900513 }, po[{ 2, 4 }]:totable(), 1e-4, "patch tokens[1, 3]")
        -- the class token attends over the patches, so the two images' logits differ a little
        assert_close_list({ -0.05806785821914673, -0.6036573052406311, 0.1772102564573288,
            -0.05798777937889099, -0.6040253043174744, 0.17734269797801971 },
            logits:reshape(-1):totable(), 2e-5, "logits")
        assert.is_true(logits[2][2]:item() < logits[1][2]:item())
    end)

    it("2 Adam steps on cross entropy: PyTorch's losses, falling", function()
        local m = cait(0)
        det_init(m)
        m:train()
        local img, y = image(), tide.tensor({ 1, 3 })
        local opt = optim.Adam(m:parameters(), { lr = 1e-2 })
        local losses = {}
        for _ = 1, 2 do
            opt:zero_grad()
            local loss = F.cross_entropy(m(img), y)
            losses[#losses + 1] = loss:item()
            loss:backward()
            opt:step()
        end
        tide.no_grad(function() losses[#losses + 1] = F.cross_entropy(m(img), y):item() end)
        for _, l in ipairs(losses) do assert_finite(l, "loss") end
        assert_close_list({ 0.9277796745300293, 0.9045616984367371, 0.884850263595581 }, losses,
            1e-4, "losses")
        assert.is_true(losses[3] < losses[2] and losses[2] < losses[1])
    end)

    it("dropout_layers: layer_dropout 0 keeps every layer; 0.1 keeps 1..depth", function()
        local ls = { "a", "b", "c" }
        assert.are.equal(ls, dropout_layers(ls, 0))
        -- every layer dropped: one is kept at random
        local one = dropout_layers(ls, 1)
        assert.are.equal(1, #one)
        assert.truthy(({ a = true, b = true, c = true })[one[1]])
        tide.manual_seed(0)
        math.randomseed(0)
        local m = cait(0.1)
        det_init(m)
        m:eval()
        local seen = {}
        for _ = 1, 8 do
            local logits = m(image())
            assert.are.same({ 2, 3 }, logits:size())
            local kept = m.patch_transformer.kept
            assert.is_true(kept >= 1 and kept <= 2)
            assert.are.equal(1, m.cls_transformer.kept)
            seen[kept] = true
        end
        -- 8 draws of 2 layers at p = 0.1: both counts show with probability ~0.99 (seeded)
        assert.is_true(seen[2] ~= nil)
    end)
end)

local function linformer(share_kv)
    -- Linformer(dim=8, seq_len=6, depth=1, k=3, heads=2, share_kv=share_kv)
    local L = Linformer(8, 6, 1, { k = 3, heads = 2, share_kv = share_kv })
    det_init(L)
    return L
end

-- x = torch.cos(torch.arange(2*6*8) * 0.53).reshape(2, 6, 8)
-- tgt = torch.sin(torch.arange(2*6*8) * 0.29).reshape(2, 6, 8)
local function lin_data()
    local k = tide.arange(0, 2 * 6 * 8)
    return tide.cos(k * 0.53):reshape(2, 6, 8), tide.sin(k * 0.29):reshape(2, 6, 8)
end

local LIN = {
    [false] = { names = 15, sum = -8.034469604492188, abs = 66.02421569824219,
        o00 = { 0.8526642322540283, 0.9716235399246216, 0.5992894172668457,
            -0.14620867371559143, -0.6777300834655762, -0.5350335240364075,
            -1.4431369304656982, -1.236565113067627 },
        o15 = { -0.8151432275772095, -1.0877941846847534, -0.7342793345451355,
            -0.44630521535873413, -0.22936615347862244, 1.030045986175537, 0.4594658315181732,
            0.4531971216201782 },
        o5 = { -0.062162548303604126, 0.4879135489463806, 0.8030662536621094,
            1.0180577039718628, 0.5633656978607178, 0.8550748229026794, -0.5538514852523804,
            -0.9872390627861023 },
        losses = { 1.123552918434143, 1.0661449432373047, 1.011447548866272 } },
    [true] = { names = 13, sum = -9.518491744995117, abs = 65.7416000366211,
        o00 = { 1.0626044273376465, 0.823124885559082, 0.4363153874874115, -0.6779030561447144,
            -0.7635900378227234, -1.1148566007614136, -0.5954058170318604, -1.167297124862671 },
        o15 = { -0.9418940544128418, -0.9188464283943176, -0.23728853464126587,
            -1.0952575206756592, -0.20177295804023743, 0.015418320894241333, 1.3589155673980713,
            0.6529425382614136 },
        o5 = { -0.11900784075260162, 0.4550101161003113, 0.874458372592926, 0.2204807996749878,
            0.64128178358078, 0.24853907525539398, 0.4593990445137024, -0.6675973534584045 },
        losses = { 1.1887420415878296, 1.100044846534729, 1.0313125848770142 } },
}

describe("ported lucidrains/linformer linformer.py (Linformer)", function()
    it("init_ draws proj_k / proj_v within 1/sqrt(k); share_kv drops to_v and proj_v", function()
        local a = LinformerSelfAttention(8, 6, 3, 2)
        assert.are.same({ 6, 3 }, a.proj_k:size())
        assert.is_true(a.proj_k:abs():max():item() <= 1 / math.sqrt(3))
        assert.is_true(a.proj_v:abs():max():item() <= 1 / math.sqrt(3))
        assert.is_true(a.proj_k:std():item() > 0)
        local s = LinformerSelfAttention(8, 6, 3, 2, nil, false, true)
        assert.is_nil(s.to_v)
        assert.is_nil(s.proj_v)
        local names = {}
        for _, np_ in ipairs(linformer(false):named_parameters()) do names[#names + 1] = np_[1] end
        assert.are.same({ "net.layers.1.1.fn.proj_k", "net.layers.1.1.fn.proj_v",
            "net.layers.1.1.fn.to_q.weight" }, { unpack(names, 1, 3) })
        assert.has_error(function() Linformer(8, 6, 1, { k = 3, heads = 2, reversible = true }) end)
        -- a longer sequence than seq_len is refused by the port's assert
        local ok, err = pcall(function() linformer(false)(tide.zeros(1, 7, 8)) end)
        assert.is_false(ok)
        assert.truthy(tostring(err):find("must be 6 - 7 given", 1, true))
    end)

    for _, share_kv in ipairs({ false, true }) do
        it("share_kv = " .. tostring(share_kv) .. ": output, a shorter sequence, 2 Adam steps " ..
            "match PyTorch 1.13", function()
            local want = LIN[share_kv]
            local L = linformer(share_kv)
            assert.are.equal(want.names, #L:parameters())
            local x, tgt = lin_data()
            local out = L(x)
            assert.are.same({ 2, 6, 8 }, out:size())
            assert.is_true(close(out:sum():item(), want.sum, 1e-4))
            assert.is_true(close(out:abs():sum():item(), want.abs, 1e-4))
            assert_close_list(want.o00, out[{ 1, 1 }]:totable(), 1e-4, "out[0, 0]")
            assert_close_list(want.o15, out[{ 2, 6 }]:totable(), 1e-4, "out[1, 5]")
            -- kv_len 5 < seq_len 6: the projections are sliced to the first 5 rows
            local out5 = L(x[{ {}, { 1, 5 } }])
            assert.are.same({ 2, 5, 8 }, out5:size())
            assert_close_list(want.o5, out5[{ 2, 5 }]:totable(), 1e-4, "out5[1, 4]")
            local opt = optim.Adam(L:parameters(), { lr = 1e-2 })
            local losses = {}
            for _ = 1, 2 do
                opt:zero_grad()
                local loss = F.mse_loss(L(x), tgt)
                losses[#losses + 1] = loss:item()
                loss:backward()
                opt:step()
            end
            tide.no_grad(function() losses[#losses + 1] = F.mse_loss(L(x), tgt):item() end)
            assert_close_list(want.losses, losses, 1e-4, "losses")
            assert.is_true(losses[3] < losses[2] and losses[2] < losses[1])
        end)
    end
end)
