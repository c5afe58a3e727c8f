-- ported_scripts70_spec.lua — lucidrains/perceiver-pytorch's perceiver_pytorch/
-- perceiver_pytorch.py (exists / default, l1norm, cache_fn, fourier_encode, PreNorm, GEGLU,
-- FeedForward, Attention with its mask and inverted-attention paths, Perceiver with the fourier
-- position encoding, weight tying through cache_fn, Reduce and return_embeddings) and
-- perceiver_pytorch/perceiver_io.py (its cache_fn, dropout_seq, FeedForward, Attention,
-- PerceiverIO with decoder queries), ported line for line at tiny sizes; then Adam steps of a
-- classification loss. The Python line stands above each Lua line that differs from it.
-- Python's keyword arguments are an options table; dims and class targets are 1-based.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local einops = tide.einops
local rearrange, repeat_ = einops.rearrange, einops.repeat_
local Reduce = einops.layers.Reduce
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

---------------------------------------------------------------------------------------------
-- perceiver_pytorch/perceiver_pytorch.py
---------------------------------------------------------------------------------------------
-- helpers

local function exists(val)
    -- return val is not None
    return val ~= nil
end

local function default(val, d)
    -- return val if exists(val) else d
    if exists(val) then return val end
    return d
end

-- def l1norm(t, dim = -1, eps = 1e-8):
local function l1norm(t, dim, eps)
    -- return F.normalize(t, p = 1, dim = dim, eps = eps)
    return F.normalize(t, { p = 1, dim = dim or -1, eps = eps or 1e-8 })
end

-- Python's None as a dict key (Lua tables take no nil key)
local NONE_KEY = {}

-- def cache_fn(f):
local function cache_fn(f)
    -- cache = dict()
    local cache = {}
    -- @wraps(f)
    -- def cached_fn(*args, _cache = True, key = None, **kwargs):
    local function cached_fn(opts, ...)
        opts = opts or {}
        -- if not _cache:
        if opts._cache == false then
            return f(...)
        end
        -- if key in cache:
        local key = default(opts.key, NONE_KEY)
        if cache[key] ~= nil then
            return cache[key]
        end
        local result = f(...)
        cache[key] = result
        return result
    end
    return cached_fn
end

-- def fourier_encode(x, max_freq, num_bands = 4):
local function fourier_encode(x, max_freq, num_bands)
    num_bands = num_bands or 4
    -- x = rearrange(x, '... -> ... 1')
    x = rearrange(x, "... -> ... 1")
    -- device, dtype, orig_x = x.device, x.dtype, x
    local device, dtype, orig_x = x.device, x.dtype, x

    -- scales = torch.linspace(1., max_freq / 2, num_bands, device = device, dtype = dtype)
    local scales = tide.linspace(1., max_freq / 2, num_bands, { device = device, dtype = dtype })
    -- scales = scales[(*((None,) * (len(x.shape) - 1)), Ellipsis)]
    local index = {}
    for i = 1, #x.shape - 1 do index[i] = tide.newaxis end
    index[#index + 1] = "..."
    scales = scales[index]

    -- x = x * scales * pi
    x = x * scales * math.pi
    -- x = cat([x.sin(), x.cos()], dim = -1)
    x = tide.cat({ x:sin(), x:cos() }, { dim = -1 })
    -- x = cat((x, orig_x), dim = -1)
    x = tide.cat({ x, orig_x }, { dim = -1 })
    return x
end

-- helper classes

-- class PreNorm(nn.Module):
local PreNorm = nn.Module:extend("PreNorm")
-- def __init__(self, dim, fn, context_dim = None):
function PreNorm:init(dim, fn, context_dim)
    self.fn = fn
    self.norm = nn.LayerNorm(dim)
    -- self.norm_context = nn.LayerNorm(context_dim) if exists(context_dim) else None
    self.norm_context = exists(context_dim) and nn.LayerNorm(context_dim) or nil
end

-- def forward(self, x, **kwargs):
function PreNorm:forward(x, kwargs)
    kwargs = kwargs or {}
    x = self.norm(x)

    if exists(self.norm_context) then
        -- context = kwargs['context']
        local context = kwargs.context
        local normed_context = self.norm_context(context)
        -- kwargs.update(context = normed_context)   (on the callee's own dict)
        local updated = {}
        for k, v in pairs(kwargs) do updated[k] = v end
        updated.context = normed_context
        kwargs = updated
    end

    return self.fn(x, kwargs)
end

-- class GEGLU(Module):
local GEGLU = nn.Module:extend("GEGLU")
function GEGLU:forward(x)
    -- x, gates = x.chunk(2, dim = -1)
    local gates
    x, gates = unpack(x:chunk(2, { dim = -1 }))
    -- return x * F.gelu(gates)
    return x * F.gelu(gates)
end

-- class FeedForward(Module):
local FeedForward = nn.Module:extend("FeedForward")
-- def __init__(self, dim, mult = 4, dropout = 0.):
function FeedForward:init(dim, mult, dropout)
    mult, dropout = mult or 4, dropout or 0.
    self.net = nn.Sequential(
        nn.Linear(dim, dim * mult * 2),
        GEGLU(),
        nn.Linear(dim * mult, dim),
        nn.Dropout(dropout)
    )
end

function FeedForward:forward(x)
    return self.net(x)
end

-- class Attention(nn.Module):
local Attention = nn.Module:extend("Attention")
-- def __init__(self, query_dim, context_dim = None, heads = 8, dim_head = 64, dropout = 0.):
function Attention:init(query_dim, context_dim, opts)
    opts = opts or {}
    local heads, dim_head, dropout = opts.heads or 8, opts.dim_head or 64, opts.dropout or 0.
    local inner_dim = dim_head * heads
    context_dim = default(context_dim, query_dim)

    self.scale = dim_head ^ -0.5
    self.heads = heads

    -- self.to_q = nn.Linear(query_dim, inner_dim, bias = False)
    self.to_q = nn.Linear(query_dim, inner_dim, { bias = false })
    -- self.to_kv = nn.Linear(context_dim, inner_dim * 2, bias = False)
    self.to_kv = nn.Linear(context_dim, inner_dim * 2, { bias = false })

    self.dropout = nn.Dropout(dropout)
    self.to_out = nn.Linear(inner_dim, query_dim)
end

-- def forward(self, x, context = None, mask = None, inverted_attention = False):
function Attention:forward(x, opts)
    opts = opts or {}
    local context, mask, inverted_attention = opts.context, opts.mask, opts.inverted_attention
    local h = self.heads

    local q = self.to_q(x)
    context = default(context, x)
    -- k, v = self.to_kv(context).chunk(2, dim = -1)
    local k, v = unpack(self.to_kv(context):chunk(2, { dim = -1 }))

    -- q, k, v = (rearrange(t, 'b n (h d) -> (b h) n d', h = h) for t in (q, k, v))
    q, k, v = rearrange(q, "b n (h d) -> (b h) n d", { h = h }),
        rearrange(k, "b n (h d) -> (b h) n d", { h = h }),
        rearrange(v, "b n (h d) -> (b h) n d", { h = h })

    -- sim = einsum('b i d, b j d -> b i j', q, k) * self.scale
    local sim = tide.einsum("b i d, b j d -> b i j", q, k) * self.scale

    if exists(mask) then
        mask = rearrange(mask, "b ... -> b (...)")
        -- max_neg_value = -torch.finfo(sim.dtype).max
        local max_neg_value = -tide.finfo(sim.dtype).max
        -- mask = repeat(mask, 'b j -> (b h) () j', h = h)
        mask = repeat_(mask, "b j -> (b h) () j", { h = h })
        -- sim.masked_fill_(~mask, max_neg_value)
        sim:masked_fill_(mask:logical_not(), max_neg_value)
    end

    -- attention, what we cannot get enough of

    local attn
    if inverted_attention then
        -- attn = sim.softmax(dim = -2)
        attn = sim:softmax({ dim = -2 })

        if exists(mask) then
            -- attn = attn.masked_fill(~mask, 0.)
            attn = attn:masked_fill(mask:logical_not(), 0.)
        end

        attn = l1norm(attn)
    else
        -- attn = sim.softmax(dim = -1)
        attn = sim:softmax({ dim = -1 })
    end

    attn = self.dropout(attn)

    -- aggregate

    -- out = einsum('b i j, b j d -> b i d', attn, v)
    local out = tide.einsum("b i j, b j d -> b i d", attn, v)
    -- out = rearrange(out, '(b h) n d -> b n (h d)', h = h)
    out = rearrange(out, "(b h) n d -> b n (h d)", { h = h })
    return self.to_out(out)
end

-- main class

-- class Perceiver(nn.Module):
local Perceiver = nn.Module:extend("Perceiver")
-- def __init__(self, *, num_freq_bands, depth, max_freq, input_channels = 3, input_axis = 2,
--              num_latents = 512, latent_dim = 512, cross_heads = 1, latent_heads = 8,
--              cross_dim_head = 64, latent_dim_head = 64, num_classes = 1000, attn_dropout = 0.,
--              ff_dropout = 0., weight_tie_layers = False, fourier_encode_data = True,
--              self_per_cross_attn = 1, final_classifier_head = True,
--              inverted_cross_attn: bool | tuple[bool, ...] = False):
function Perceiver:init(o)
    local num_freq_bands, depth, max_freq = o.num_freq_bands, o.depth, o.max_freq
    local input_channels, input_axis = o.input_channels or 3, o.input_axis or 2
    local num_latents, latent_dim = o.num_latents or 512, o.latent_dim or 512
    local cross_heads, latent_heads = o.cross_heads or 1, o.latent_heads or 8
    local cross_dim_head, latent_dim_head = o.cross_dim_head or 64, o.latent_dim_head or 64
    local num_classes = o.num_classes or 1000
    local attn_dropout, ff_dropout = o.attn_dropout or 0., o.ff_dropout or 0.
    local weight_tie_layers = o.weight_tie_layers or false
    local fourier_encode_data = default(o.fourier_encode_data, true)
    local self_per_cross_attn = o.self_per_cross_attn or 1
    local final_classifier_head = default(o.final_classifier_head, true)
    local inverted_cross_attn = o.inverted_cross_attn or false

    self.input_axis = input_axis
    self.max_freq = max_freq
    self.num_freq_bands = num_freq_bands

    -- if isinstance(inverted_cross_attn, bool):
    if type(inverted_cross_attn) == "boolean" then
        -- inverted_cross_attn = (inverted_cross_attn,) * depth
        local t = {}
        for i = 1, depth do t[i] = inverted_cross_attn end
        inverted_cross_attn = t
    end

    -- assert len(inverted_cross_attn) == depth, f'inverted_cross_attn tuple must have ...'
    assert(#inverted_cross_attn == depth,
        ("inverted_cross_attn tuple must have length of depth (%d)"):format(depth))
    self.inverted_cross_attn = inverted_cross_attn

    -- fourier

    self.fourier_encode_data = fourier_encode_data
    -- fourier_channels = (input_axis * ((num_freq_bands * 2) + 1)) if fourier_encode_data else 0
    local fourier_channels = fourier_encode_data and (input_axis * ((num_freq_bands * 2) + 1)) or 0
    local input_dim = fourier_channels + input_channels

    self.latents = nn.Parameter(tide.randn(num_latents, latent_dim))

    -- get_cross_attn = lambda: PreNorm(latent_dim, Attention(latent_dim, input_dim,
    --     heads = cross_heads, dim_head = cross_dim_head, dropout = attn_dropout),
    --     context_dim = input_dim)
    local get_cross_attn = function()
        return PreNorm(latent_dim, Attention(latent_dim, input_dim,
            { heads = cross_heads, dim_head = cross_dim_head, dropout = attn_dropout }), input_dim)
    end
    -- get_cross_ff = lambda: PreNorm(latent_dim, FeedForward(latent_dim, dropout = ff_dropout))
    local get_cross_ff = function()
        return PreNorm(latent_dim, FeedForward(latent_dim, nil, ff_dropout))
    end
    -- get_latent_attn = lambda: PreNorm(latent_dim, Attention(latent_dim, heads = latent_heads,
    --     dim_head = latent_dim_head, dropout = attn_dropout))
    local get_latent_attn = function()
        return PreNorm(latent_dim, Attention(latent_dim, nil,
            { heads = latent_heads, dim_head = latent_dim_head, dropout = attn_dropout }))
    end
    -- get_latent_ff = lambda: PreNorm(latent_dim, FeedForward(latent_dim, dropout = ff_dropout))
    local get_latent_ff = function()
        return PreNorm(latent_dim, FeedForward(latent_dim, nil, ff_dropout))
    end

    -- get_cross_attn, get_cross_ff, get_latent_attn, get_latent_ff = (cache_fn(fn) for fn in
    --     (get_cross_attn, get_cross_ff, get_latent_attn, get_latent_ff))
    get_cross_attn, get_cross_ff = cache_fn(get_cross_attn), cache_fn(get_cross_ff)
    get_latent_attn, get_latent_ff = cache_fn(get_latent_attn), cache_fn(get_latent_ff)

    -- self.layers = ModuleList([])
    self.layers = nn.ModuleList({})
    -- for i in range(depth):   (i 0-based as Python's: the first layer is never cached)
    for i = 0, depth - 1 do
        local should_cache = i > 0 and weight_tie_layers
        -- cache_args = {'_cache': should_cache}

        local self_attns = nn.ModuleList({})

        -- for block_ind in range(self_per_cross_attn):   (block_ind the cache key, 0-based)
        for block_ind = 0, self_per_cross_attn - 1 do
            self_attns:append(nn.ModuleList({
                -- get_latent_attn(**cache_args, key = block_ind),
                get_latent_attn({ _cache = should_cache, key = block_ind }),
                get_latent_ff({ _cache = should_cache, key = block_ind }),
            }))
        end

        self.layers:append(nn.ModuleList({
            -- get_cross_attn(**cache_args),
            get_cross_attn({ _cache = should_cache }),
            get_cross_ff({ _cache = should_cache }),
            self_attns,
        }))
    end

    -- self.to_logits = nn.Sequential(Reduce('b n d -> b d', 'mean'), nn.LayerNorm(latent_dim),
    --     nn.Linear(latent_dim, num_classes)) if final_classifier_head else nn.Identity()
    self.to_logits = final_classifier_head and nn.Sequential(
        Reduce("b n d -> b d", "mean"),
        nn.LayerNorm(latent_dim),
        nn.Linear(latent_dim, num_classes)
    ) or nn.Identity()
end

-- def forward(self, data, mask = None, return_embeddings = False):
function Perceiver:forward(data, opts)
    opts = opts or {}
    local mask, return_embeddings = opts.mask, opts.return_embeddings
    -- b, *axis, _, device, dtype = *data.shape, data.device, data.dtype
    local shape = data.shape
    local b, axis, device, dtype = shape[1], {}, data.device, data.dtype
    for i = 2, #shape - 1 do axis[#axis + 1] = shape[i] end
    -- assert len(axis) == self.input_axis, 'input data must have the right number of axis'
    assert(#axis == self.input_axis, "input data must have the right number of axis")

    if self.fourier_encode_data then
        -- calculate fourier encoded positions in the range of [-1, 1], for all axis

        -- axis_pos = [torch.linspace(-1., 1., steps = size, device = device, dtype = dtype)
        --             for size in axis]
        local axis_pos = {}
        for _, size in ipairs(axis) do
            axis_pos[#axis_pos + 1] = tide.linspace(-1., 1., { steps = size, device = device,
                dtype = dtype })
        end
        -- pos = stack(torch.meshgrid(*axis_pos, indexing = 'ij'), dim = -1)
        local pos = tide.stack(tide.meshgrid(axis_pos, { indexing = "ij" }), { dim = -1 })
        local enc_pos = fourier_encode(pos, self.max_freq, self.num_freq_bands)
        enc_pos = rearrange(enc_pos, "... n d -> ... (n d)")
        -- enc_pos = repeat(enc_pos, '... -> b ...', b = b)
        enc_pos = repeat_(enc_pos, "... -> b ...", { b = b })

        -- data = cat((data, enc_pos), dim = -1)
        data = tide.cat({ data, enc_pos }, { dim = -1 })
    end

    -- concat to channels of data and flatten axis

    data = rearrange(data, "b ... d -> b (...) d")

    -- x = repeat(self.latents, 'n d -> b n d', b = b)
    local x = repeat_(self.latents, "n d -> b n d", { b = b })

    -- layers

    -- for i, (cross_attn, cross_ff, self_attns) in enumerate(self.layers):
    for i, layer in ipairs(self.layers) do
        local cross_attn, cross_ff, self_attns = layer[1], layer[2], layer[3]
        -- x = cross_attn(x, context = data, mask = mask,
        --     inverted_attention = self.inverted_cross_attn[i]) + x
        x = cross_attn(x, { context = data, mask = mask,
            inverted_attention = self.inverted_cross_attn[i] }) + x
        x = cross_ff(x) + x

        -- for self_attn, self_ff in self_attns:
        for _, pair in ipairs(self_attns) do
            local self_attn, self_ff = pair[1], pair[2]
            x = self_attn(x) + x
            x = self_ff(x) + x
        end
    end

    -- allow for fetching embeddings

    if return_embeddings then
        return x
    end

    -- to logits

    return self.to_logits(x)
end

---------------------------------------------------------------------------------------------
-- perceiver_pytorch/perceiver_io.py (its own cache_fn, FeedForward and Attention)
---------------------------------------------------------------------------------------------
-- def cache_fn(f):
local function io_cache_fn(f)
    -- cache = None
    local cache = nil
    -- def cached_fn(*args, _cache = True, **kwargs):
    local function cached_fn(opts, ...)
        opts = opts or {}
        -- if not _cache:
        if opts._cache == false then
            return f(...)
        end
        -- if cache is not None:
        if cache ~= nil then
            return cache
        end
        cache = f(...)
        return cache
    end
    return cached_fn
end

-- structured dropout, more effective than traditional attention dropouts

-- def dropout_seq(seq, mask, dropout):
local function dropout_seq(seq, mask, dropout)
    -- b, n, *_, device = *seq.shape, seq.device
    local b, n, device = seq.shape[1], seq.shape[2], seq.device
    -- logits = torch.randn(b, n, device = device)
    local logits = tide.randn(b, n, { device = device })

    if exists(mask) then
        -- logits = logits.masked_fill(~mask, -torch.finfo(logits.dtype).max)
        logits = logits:masked_fill(mask:logical_not(), -tide.finfo(logits.dtype).max)
    end

    local keep_prob = 1. - dropout
    -- num_keep = max(1,  int(keep_prob * n))
    local num_keep = math.max(1, math.floor(keep_prob * n))
    -- keep_indices = logits.topk(num_keep, dim = 1).indices   (1-based indices)
    local _, keep_indices = logits:topk(num_keep, { dim = 2 })

    -- batch_indices = torch.arange(b, device = device)   (1-based)
    local batch_indices = tide.arange(1, b + 1, { device = device })
    batch_indices = rearrange(batch_indices, "b -> b 1")

    -- seq = seq[batch_indices, keep_indices]
    seq = seq[{ batch_indices, keep_indices }]

    if exists(mask) then
        -- seq_counts = mask.sum(dim = -1)
        local seq_counts = mask:sum({ dim = -1 })
        -- seq_keep_counts = torch.ceil(seq_counts * keep_prob).int()
        local seq_keep_counts = tide.ceil(seq_counts * keep_prob):int()
        -- keep_mask = torch.arange(num_keep, device = device) < rearrange(seq_keep_counts,
        --     'b -> b 1')   (Lua's < gives one boolean: lt)
        local keep_mask = tide.arange(num_keep, { device = device })
            :lt(rearrange(seq_keep_counts, "b -> b 1"))

        -- mask = mask[batch_indices, keep_indices] & keep_mask
        mask = mask[{ batch_indices, keep_indices }]:logical_and(keep_mask)
    end

    return seq, mask
end

-- class FeedForward(nn.Module):  (no Dropout)
local IOFeedForward = nn.Module:extend("FeedForward")
-- def __init__(self, dim, mult = 4):
function IOFeedForward:init(dim, mult)
    mult = mult or 4
    self.net = nn.Sequential(
        nn.Linear(dim, dim * mult * 2),
        GEGLU(),
        nn.Linear(dim * mult, dim)
    )
end

function IOFeedForward:forward(x)
    return self.net(x)
end

-- class Attention(nn.Module):  (no dropout, no inverted attention)
local IOAttention = nn.Module:extend("Attention")
-- def __init__(self, query_dim, context_dim = None, heads = 8, dim_head = 64):
function IOAttention:init(query_dim, context_dim, opts)
    opts = opts or {}
    local heads, dim_head = opts.heads or 8, opts.dim_head or 64
    local inner_dim = dim_head * heads
    context_dim = default(context_dim, query_dim)
    self.scale = dim_head ^ -0.5
    self.heads = heads

    -- self.to_q = nn.Linear(query_dim, inner_dim, bias = False)
    self.to_q = nn.Linear(query_dim, inner_dim, { bias = false })
    -- self.to_kv = nn.Linear(context_dim, inner_dim * 2, bias = False)
    self.to_kv = nn.Linear(context_dim, inner_dim * 2, { bias = false })
    self.to_out = nn.Linear(inner_dim, query_dim)
end

-- def forward(self, x, context = None, mask = None):
function IOAttention:forward(x, opts)
    opts = opts or {}
    local context, mask = opts.context, opts.mask
    local h = self.heads

    local q = self.to_q(x)
    context = default(context, x)
    -- k, v = self.to_kv(context).chunk(2, dim = -1)
    local k, v = unpack(self.to_kv(context):chunk(2, { dim = -1 }))

    -- q, k, v = map(lambda t: rearrange(t, 'b n (h d) -> (b h) n d', h = h), (q, k, v))
    local function split_heads(t) return rearrange(t, "b n (h d) -> (b h) n d", { h = h }) end
    q, k, v = split_heads(q), split_heads(k), split_heads(v)

    -- sim = einsum('b i d, b j d -> b i j', q, k) * self.scale
    local sim = tide.einsum("b i d, b j d -> b i j", q, k) * self.scale

    if exists(mask) then
        mask = rearrange(mask, "b ... -> b (...)")
        -- max_neg_value = -torch.finfo(sim.dtype).max
        local max_neg_value = -tide.finfo(sim.dtype).max
        -- mask = repeat(mask, 'b j -> (b h) () j', h = h)
        mask = repeat_(mask, "b j -> (b h) () j", { h = h })
        -- sim.masked_fill_(~mask, max_neg_value)
        sim:masked_fill_(mask:logical_not(), max_neg_value)
    end

    -- attention, what we cannot get enough of
    -- attn = sim.softmax(dim = -1)
    local attn = sim:softmax({ dim = -1 })

    -- out = einsum('b i j, b j d -> b i d', attn, v)
    local out = tide.einsum("b i j, b j d -> b i d", attn, v)
    -- out = rearrange(out, '(b h) n d -> b n (h d)', h = h)
    out = rearrange(out, "(b h) n d -> b n (h d)", { h = h })
    return self.to_out(out)
end

-- class PerceiverIO(nn.Module):
local PerceiverIO = nn.Module:extend("PerceiverIO")
-- def __init__(self, *, depth, dim, queries_dim, logits_dim = None, num_latents = 512,
--              latent_dim = 512, cross_heads = 1, latent_heads = 8, cross_dim_head = 64,
--              latent_dim_head = 64, weight_tie_layers = False, decoder_ff = False,
--              seq_dropout_prob = 0.):
function PerceiverIO:init(o)
    local depth, dim, queries_dim, logits_dim = o.depth, o.dim, o.queries_dim, o.logits_dim
    local num_latents, latent_dim = o.num_latents or 512, o.latent_dim or 512
    local cross_heads, latent_heads = o.cross_heads or 1, o.latent_heads or 8
    local cross_dim_head, latent_dim_head = o.cross_dim_head or 64, o.latent_dim_head or 64
    local weight_tie_layers, decoder_ff = o.weight_tie_layers or false, o.decoder_ff or false
    self.seq_dropout_prob = o.seq_dropout_prob or 0.

    self.latents = nn.Parameter(tide.randn(num_latents, latent_dim))

    self.cross_attend_blocks = nn.ModuleList({
        -- PreNorm(latent_dim, Attention(latent_dim, dim, heads = cross_heads,
        --     dim_head = cross_dim_head), context_dim = dim),
        PreNorm(latent_dim, IOAttention(latent_dim, dim,
            { heads = cross_heads, dim_head = cross_dim_head }), dim),
        PreNorm(latent_dim, IOFeedForward(latent_dim)),
    })

    -- get_latent_attn = lambda: PreNorm(latent_dim, Attention(latent_dim, heads = latent_heads,
    --     dim_head = latent_dim_head))
    local get_latent_attn = function()
        return PreNorm(latent_dim, IOAttention(latent_dim, nil,
            { heads = latent_heads, dim_head = latent_dim_head }))
    end
    local get_latent_ff = function() return PreNorm(latent_dim, IOFeedForward(latent_dim)) end
    -- get_latent_attn, get_latent_ff = map(cache_fn, (get_latent_attn, get_latent_ff))
    get_latent_attn, get_latent_ff = io_cache_fn(get_latent_attn), io_cache_fn(get_latent_ff)

    self.layers = nn.ModuleList({})
    -- cache_args = {'_cache': weight_tie_layers}
    local cache_args = { _cache = weight_tie_layers }

    for _ = 1, depth do
        self.layers:append(nn.ModuleList({
            get_latent_attn(cache_args),
            get_latent_ff(cache_args),
        }))
    end

    -- self.decoder_cross_attn = PreNorm(queries_dim, Attention(queries_dim, latent_dim,
    --     heads = cross_heads, dim_head = cross_dim_head), context_dim = latent_dim)
    self.decoder_cross_attn = PreNorm(queries_dim, IOAttention(queries_dim, latent_dim,
        { heads = cross_heads, dim_head = cross_dim_head }), latent_dim)
    -- self.decoder_ff = PreNorm(queries_dim, FeedForward(queries_dim)) if decoder_ff else None
    self.decoder_ff = decoder_ff and PreNorm(queries_dim, IOFeedForward(queries_dim)) or nil

    -- self.to_logits = nn.Linear(queries_dim, logits_dim) if exists(logits_dim)
    --     else nn.Identity()
    self.to_logits = exists(logits_dim) and nn.Linear(queries_dim, logits_dim) or nn.Identity()
end

-- def forward(self, data, mask = None, queries = None):
function PerceiverIO:forward(data, opts)
    opts = opts or {}
    local mask, queries = opts.mask, opts.queries
    -- b, *_, device = *data.shape, data.device
    local b = data.shape[1]

    -- x = repeat(self.latents, 'n d -> b n d', b = b)
    local x = repeat_(self.latents, "n d -> b n d", { b = b })

    -- cross_attn, cross_ff = self.cross_attend_blocks
    local cross_attn, cross_ff = self.cross_attend_blocks[1], self.cross_attend_blocks[2]

    -- structured dropout (as done in perceiver AR https://arxiv.org/abs/2202.07765)
    if self.training and self.seq_dropout_prob > 0. then
        data, mask = dropout_seq(data, mask, self.seq_dropout_prob)
    end

    -- cross attention only happens once for Perceiver IO

    -- x = cross_attn(x, context = data, mask = mask) + x
    x = cross_attn(x, { context = data, mask = mask }) + x
    x = cross_ff(x) + x

    -- layers

    -- for self_attn, self_ff in self.layers:
    for _, pair in ipairs(self.layers) do
        local self_attn, self_ff = pair[1], pair[2]
        x = self_attn(x) + x
        x = self_ff(x) + x
    end

    if not exists(queries) then
        return x
    end

    -- make sure queries contains batch dimension

    if queries.ndim == 2 then
        -- queries = repeat(queries, 'n d -> b n d', b = b)
        queries = repeat_(queries, "n d -> b n d", { b = b })
    end

    -- cross attend from decoder queries to latents

    -- latents = self.decoder_cross_attn(queries, context = x)
    local latents = self.decoder_cross_attn(queries, { context = x })

    -- optional decoder feedforward

    if exists(self.decoder_ff) then
        latents = latents + self.decoder_ff(latents)
    end

    -- final linear out

    return self.to_logits(latents)
end

---------------------------------------------------------------------------------------------
-- the checks
---------------------------------------------------------------------------------------------
-- the fixed weights the PyTorch check sets in both: parameter k (named_parameters' order),
-- element i (0-based): 0.5 sin(0.37 (i + 1) + 1.3 k)
local function fill(model)
    tide.no_grad(function()
        for k, p in ipairs(model:parameters()) do
            local i = tide.arange(p:numel()):float()
            p:copy_((0.5 * tide.sin(0.37 * (i + 1) + 1.3 * k)):view(p.shape))
        end
    end)
end

local function numel_sum(model)
    local n = 0
    for _, p in ipairs(model:parameters()) do n = n + p:numel() end
    return n
end

-- Perceiver(num_freq_bands=2, depth=3, max_freq=4., input_channels=2, input_axis=2,
--     num_latents=3, latent_dim=4, cross_heads=1, latent_heads=2, cross_dim_head=3,
--     latent_dim_head=2, num_classes=3, weight_tie_layers=True,
--     inverted_cross_attn=(False, True, False))
local function tiny_perceiver()
    return Perceiver({ num_freq_bands = 2, depth = 3, max_freq = 4., input_channels = 2,
        input_axis = 2, num_latents = 3, latent_dim = 4, cross_heads = 1, latent_heads = 2,
        cross_dim_head = 3, latent_dim_head = 2, num_classes = 3, weight_tie_layers = true,
        inverted_cross_attn = { false, true, false } })
end

-- data = torch.sin(0.7 * arange(24) + 0.3).view(2, 3, 2, 2); the mask b x 3 x 2
local function perceiver_inputs()
    local data = tide.sin(0.7 * tide.arange(24):float() + 0.3):view(2, 3, 2, 2)
    local mask = tide.tensor({ { { true, true }, { false, true }, { true, false } },
        { { true, true }, { true, true }, { false, false } } })
    return data, mask
end

-- PyTorch 1.13 on the same weights (perceiver-pytorch's files, einops written by hand)
local PT = {
    fourier = { 9e-08, 1.0, -1.7e-07, -1.0, 1e-08, 1.0, -1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0,
        -9e-08, -1.0, 1.7e-07, -1.0, 1e-08, 1.0, 1.0 },
    logits = { -0.17357928, -0.06830786, -0.28461608, -0.17493232, -0.06923693, -0.2834315 },
    logits_mask = { -0.17680229, -0.06991583, -0.28168467, -0.18774579, -0.07733911,
        -0.27208731 },
    emb = { 1.87209427, 2.81217909, 3.96361947, 3.70835018, 1.33946538, 2.10830331, 3.18419909,
        2.95773149, 0.92848861, 1.98874962, 3.360425, 3.41269636, 1.90334857, 2.79329252,
        3.8838284, 3.60955358, 1.37229133, 2.09167886, 3.10659719, 2.86108184, 0.96437937,
        1.99697948, 3.3294127, 3.37297177 },
    io = { -0.26809534, 0.07804433, 0.38197944, 0.47874039, -0.26809263, 0.07804594, 0.38197815,
        0.47873765, -0.26809528, 0.07804435, 0.38197941, 0.47874033, -0.26665944, 0.07897384,
        0.38137019, 0.47726908, -0.26665807, 0.07897485, 0.38136971, 0.47726762, -0.26665938,
        0.07897386, 0.38137016, 0.47726899 },
    -- Adam(lr=1e-2), cross_entropy(m(data, mask=mask), [2, 0]) three steps
    losses = { 1.15919447, 1.10181856, 1.03841186 },
}

describe("lucidrains/perceiver-pytorch", function()
    it("cache_fn caches by key, not when _cache is false", function()
        local calls = 0
        local f = cache_fn(function(x) calls = calls + 1; return { x } end)
        local a = f({ key = 0 }, 1)
        assert.are.equal(a, f({ key = 0 }, 2))
        assert.are_not.equal(a, f({ key = 1 }, 3))
        assert.are_not.equal(a, f({ _cache = false }, 4))
        local none = f(nil, 5)
        assert.are.equal(none, f({}, 6))
        assert.are.equal(4, calls)
        assert.are.equal(5, none[1])
    end)

    it("fourier_encode matches PyTorch", function()
        -- fourier_encode(torch.linspace(-1, 1, 3), 4., 3)
        local enc = fourier_encode(tide.linspace(-1, 1, 3), 4., 3)
        assert.are.same({ 3, 7 }, enc.shape)
        assert_close_list(PT.fourier, enc:view(-1):tolist(), 1e-5, "fourier_encode")
    end)

    it("Perceiver ties weights through cache_fn and matches PyTorch's logits", function()
        local m = tiny_perceiver()
        -- depth 3 with weight_tie_layers: layers 2 and 3 share (layer 1 is never cached)
        assert.are.equal(m.layers[2][1], m.layers[3][1])
        assert.are.equal(m.layers[2][3][1][2], m.layers[3][3][1][2])
        assert.are_not.equal(m.layers[1][1], m.layers[2][1])
        -- PyTorch: 57 parameters, 1395 numbers
        assert.are.equal(57, #m:parameters())
        assert.are.equal(1395, numel_sum(m))
        assert.are.equal("latents", m:named_parameters()[1][1])
        fill(m)
        m:eval()
        local data, mask = perceiver_inputs()
        local logits = m(data)
        assert.are.same({ 2, 3 }, logits.shape)
        assert_close_list(PT.logits, logits:view(-1):tolist(), 1e-5, "logits")
        local masked = m(data, { mask = mask })
        assert_close_list(PT.logits_mask, masked:view(-1):tolist(), 1e-5, "logits with mask")
        local emb = m(data, { return_embeddings = true })
        assert.are.same({ 2, 3, 4 }, emb.shape)
        assert_close_list(PT.emb, emb:view(-1):tolist(), 1e-5, "embeddings")
    end)

    it("PerceiverIO decodes queries as PyTorch", function()
        -- PerceiverIO(depth=2, dim=5, queries_dim=3, logits_dim=4, num_latents=3, latent_dim=4,
        --     cross_heads=1, latent_heads=2, cross_dim_head=2, latent_dim_head=2,
        --     weight_tie_layers=True, decoder_ff=True)
        local io = PerceiverIO({ depth = 2, dim = 5, queries_dim = 3, logits_dim = 4,
            num_latents = 3, latent_dim = 4, cross_heads = 1, latent_heads = 2,
            cross_dim_head = 2, latent_dim_head = 2, weight_tie_layers = true,
            decoder_ff = true })
        assert.are.equal(io.layers[1][1], io.layers[2][1])
        assert.are.equal(43, #io:parameters())
        assert.are.equal(820, numel_sum(io))
        fill(io)
        io:eval()
        local d2 = tide.cos(0.45 * tide.arange(40):float()):view(2, 4, 5)
        local q = tide.sin(0.8 * tide.arange(9):float()):view(3, 3)
        local m2 = tide.tensor({ { true, true, false, true }, { true, false, false, true } })
        local out = io(d2, { mask = m2, queries = q })
        assert.are.same({ 2, 3, 4 }, out.shape)
        assert_close_list(PT.io, out:view(-1):tolist(), 1e-5, "PerceiverIO logits")
        -- no queries: the latents
        assert.are.same({ 2, 3, 4 }, io(d2).shape)
    end)

    it("dropout_seq keeps the unmasked positions first and trims the mask", function()
        tide.manual_seed(3)
        local seq = tide.arange(24):float():view(2, 4, 3)
        local mask = tide.tensor({ { true, true, false, true }, { true, false, false, true } })
        local kept, kept_mask = dropout_seq(seq, mask, 0.5)
        assert.are.same({ 2, 2, 3 }, kept.shape)
        -- ceil(3 * 0.5) = 2 and ceil(2 * 0.5) = 1 of the kept positions stay unmasked
        assert.are.same({ { true, true }, { true, false } }, kept_mask:tolist())
        -- the rows kept are unmasked rows of seq: row j of batch 2 starts at 12 + 3 (j - 1)
        local firsts = kept[{ {}, {}, 1 }]:tolist()
        for bi = 1, 2 do
            for k = 1, 2 do
                local j = math.floor((firsts[bi][k] - 12 * (bi - 1)) / 3) + 1
                assert.is_true(mask[{ bi, j }]:item(), "a masked row was kept")
            end
        end
        assert.are_not.equal(firsts[1][1], firsts[1][2])
        -- PerceiverIO in training runs it: 2 of the 4 positions cross-attended
        local io = PerceiverIO({ depth = 1, dim = 3, queries_dim = 3, num_latents = 2,
            latent_dim = 4, latent_heads = 2, cross_dim_head = 2, latent_dim_head = 2,
            seq_dropout_prob = 0.5 })
        io:train()
        local out = io(seq, { mask = mask, queries = seq[{ 1 }] })
        assert.are.same({ 2, 4, 3 }, out.shape)
        assert_finite(out:sum():item(), "PerceiverIO with dropout_seq")
    end)

    it("Perceiver trains with Adam as PyTorch", function()
        local m = tiny_perceiver()
        fill(m)
        m:train()
        local data, mask = perceiver_inputs()
        local opt = tide.optim.Adam(m:parameters(), { lr = 1e-2 })
        -- y = torch.tensor([2, 0])
        local y = tide.tensor({ 3, 1 })
        local losses = {}
        for _ = 1, 3 do
            local loss = F.cross_entropy(m(data, { mask = mask }), y)
            opt:zero_grad()
            loss:backward()
            opt:step()
            losses[#losses + 1] = loss:item()
            assert_finite(losses[#losses], "loss")
        end
        assert_close_list(PT.losses, losses, 1e-5, "losses")
        assert.is_true(losses[3] < losses[1])
    end)
end)
