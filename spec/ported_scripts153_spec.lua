-- ported_scripts153_spec.lua — lucidrains/x-transformers x_transformers/x_transformers.py at HEAD
-- (9252ed78): the positional pieces AbsolutePositionalEmbedding (l2norm_embed, scale),
-- ScaledSinusoidalEmbedding, RelativePositionBias (T5 buckets, causal and not),
-- DynamicPositionBias (MLP over (log-)distances, LayerNorm, bias lookup), AlibiPositionalBias
-- (_get_slopes, pad_at_dim, the cached bias buffer), RotaryEmbedding with use_xpos, rotate_half,
-- apply_rotary_pos_emb (partial rotary dims), with torch_einops_utils' pad_at_dim / Sequential
-- and attend.py's einsum attention that adds each bias to the dots. Ported line for line at
-- tiny sizes (heads 4, seq 6, dim 16), weights set by a formula on both sides; values checked
-- against PyTorch 1.13 (a sum, a cosine-weighted sum and the max |x| of each result).
-- HEAD's rotary is the interleaved one ('... (d r)' pairs), not the older half-split
-- '(r d)'; that is what is ported. einx.subtract is written as broadcasting (not PyTorch).
-- The Python line stands above each Lua line that differs from it. Positions stay 0-based
-- values (they are numbers in formulas); index tensors are shifted by one where they index.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local einops = tide.einops
local rearrange = einops.rearrange
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_close_list = ported.assert_close_list

-- def exists(val): return val is not None
local function exists(v)
    return v ~= nil
end

-- def default(*args)
local function default(...)
    for i = 1, select("#", ...) do
        local a = select(i, ...)
        if a ~= nil then return a end
    end
end

-- torch_einops_utils: def Sequential(*modules): nn.Sequential(*filter(exists, modules))
local function Sequential(...)
    local mods = {}
    for i = 1, select("#", ...) do
        local m = select(i, ...)
        -- false stands for None in a Lua argument list (nil would end it)
        if m then mods[#mods + 1] = m end
    end
    return nn.Sequential(unpack(mods))
end

-- torch_einops_utils: def pad_at_dim(t, pad, dim = -1, value = 0.)
local function pad_at_dim(t, pad, dim, value)
    dim, value = dim or -1, value or 0
    -- dims_from_right = (- dim - 1) if dim < 0 else (t.ndim - dim - 1)
    local dims_from_right = dim < 0 and (-dim - 1) or (t.ndim - dim)
    -- zeros = ((0, 0) * dims_from_right)
    local p = {}
    for _ = 1, dims_from_right do
        p[#p + 1] = 0; p[#p + 1] = 0
    end
    -- return F.pad(t, (*zeros, *pad), value = value)
    p[#p + 1] = pad[1]; p[#p + 1] = pad[2]
    return F.pad(t, p, "constant", value)
end

-- def l2norm(t, groups = 1)
local function l2norm(t, groups)
    -- t = rearrange(t, '... (g d) -> ... g d', g = groups)
    t = rearrange(t, "... (g d) -> ... g d", { g = groups or 1 })
    -- t = F.normalize(t, p = 2, dim = -1)
    t = F.normalize(t, 2, -1)
    return rearrange(t, "... g d -> ... (g d)")
end

---------------------------------------------------------------------------------------------
-- x_transformers.py
---------------------------------------------------------------------------------------------
-- class AbsolutePositionalEmbedding(Module):
local AbsolutePositionalEmbedding = nn.Module:extend("AbsolutePositionalEmbedding")
function AbsolutePositionalEmbedding:init(dim, max_seq_len, l2norm_embed)
    -- self.scale = dim ** -0.5 if not l2norm_embed else 1.
    self.scale = not l2norm_embed and dim ^ -0.5 or 1
    self.max_seq_len = max_seq_len
    self.l2norm_embed = l2norm_embed
    self.emb = nn.Embedding(max_seq_len, dim)
end

-- def forward(self, x, pos = None, seq_start_pos = None, offset = 0):
function AbsolutePositionalEmbedding:forward(x, pos, seq_start_pos, offset)
    offset = offset or 0
    -- seq_len, device = x.shape[1], x.device
    local seq_len = x.shape[2]
    assert(seq_len <= self.max_seq_len, ("you are passing in a sequence length of %d but your "
        .. "absolute positional embedding has a max sequence length of %d")
        :format(seq_len, self.max_seq_len))
    if not exists(pos) then
        -- pos = arange(seq_len, device = device) + offset
        pos = tide.arange(0, seq_len) + offset
    end
    if exists(seq_start_pos) then
        -- pos = (pos - seq_start_pos[..., None]).clamp(min = 0)
        pos = (pos - seq_start_pos:unsqueeze(-1)):clamp({ min = 0 })
    end
    -- pos_emb = self.emb(pos)   (tide's Embedding takes 1-based ids)
    local pos_emb = self.emb(pos + 1)
    pos_emb = pos_emb * self.scale
    return self.l2norm_embed and l2norm(pos_emb) or pos_emb
end

-- class ScaledSinusoidalEmbedding(Module):
local ScaledSinusoidalEmbedding = nn.Module:extend("ScaledSinusoidalEmbedding")
function ScaledSinusoidalEmbedding:init(dim, theta)
    theta = theta or 10000
    -- assert divisible_by(dim, 2)
    assert(dim % 2 == 0)
    -- self.scale = nn.Parameter(torch.ones(1) * dim ** -0.5)
    self.scale = nn.Parameter(tide.ones(1) * dim ^ -0.5)
    -- half_dim = dim // 2
    -- half_dim = dim // 2   (math.floor: Lua 5.1 has no //)
    local half_dim = math.floor(dim / 2)
    -- freq_seq = arange(half_dim).float() / half_dim
    local freq_seq = tide.arange(0, half_dim):float() / half_dim
    -- inv_freq = theta ** -freq_seq
    local inv_freq = theta ^ -freq_seq
    -- self.register_buffer('inv_freq', inv_freq, persistent = False)
    self:register_buffer("inv_freq", inv_freq, false)
end

function ScaledSinusoidalEmbedding:forward(x, pos, seq_start_pos, offset)
    offset = offset or 0
    local seq_len = x.shape[2]
    if not exists(pos) then
        pos = tide.arange(0, seq_len) + offset
    end
    if exists(seq_start_pos) then
        pos = pos - seq_start_pos:unsqueeze(-1)
    end
    -- emb = einsum('i, j -> i j', pos, self.inv_freq)
    local emb = tide.einsum("i, j -> i j", pos, self.inv_freq)
    -- emb = cat((emb.sin(), emb.cos()), dim = -1)
    emb = tide.cat({ emb:sin(), emb:cos() }, -1)
    return emb * self.scale
end

-- class RelativePositionBias(Module):
local RelativePositionBias = nn.Module:extend("RelativePositionBias")
-- def __init__(self, scale, causal = False, num_buckets = 32, max_distance = 128, heads = 8):
function RelativePositionBias:init(scale, causal, num_buckets, max_distance, heads)
    self.scale = scale
    self.causal = causal or false
    self.num_buckets = num_buckets or 32
    self.max_distance = max_distance or 128
    -- self.relative_attention_bias = nn.Embedding(num_buckets, heads)
    self.relative_attention_bias = nn.Embedding(self.num_buckets, heads or 8)
end

-- @staticmethod
-- def _relative_position_bucket(relative_position, causal = True, num_buckets = 32,
--                               max_distance = 128):
function RelativePositionBias._relative_position_bucket(relative_position, causal, num_buckets,
                                                        max_distance)
    if causal == nil then causal = true end
    num_buckets, max_distance = num_buckets or 32, max_distance or 128
    local ret = 0
    local n = -relative_position
    if not causal then
        -- num_buckets //= 2
        num_buckets = math.floor(num_buckets / 2)
        -- ret += (n < 0).long() * num_buckets   (Lua's < gives a boolean: the method lt)
        ret = ret + n:lt(0):long() * num_buckets
        n = tide.abs(n)
    else
        n = tide.max(n, tide.zeros_like(n))
    end
    -- max_exact = num_buckets // 2
    local max_exact = math.floor(num_buckets / 2)
    -- is_small = n < max_exact
    local is_small = n:lt(max_exact)
    -- val_if_large = max_exact + (torch.log(n.float() / max_exact)
    --     / math.log(max_distance / max_exact) * (num_buckets - max_exact)).long()
    local val_if_large = max_exact + (tide.log(n:float() / max_exact)
        / math.log(max_distance / max_exact) * (num_buckets - max_exact)):long()
    -- val_if_large = torch.min(val_if_large, torch.full_like(val_if_large, num_buckets - 1))
    val_if_large = tide.min(val_if_large, tide.full_like(val_if_large, num_buckets - 1))
    -- ret += torch.where(is_small, n, val_if_large)
    ret = ret + tide.where(is_small, n, val_if_large)
    return ret
end

function RelativePositionBias:forward(i, j)
    -- q_pos = arange(j - i, j, dtype = torch.long, device = device)
    local q_pos = tide.arange(j - i, j, { dtype = "int64" })
    local k_pos = tide.arange(0, j, { dtype = "int64" })
    -- rel_pos = einx.subtract('j, i -> i j', k_pos, q_pos)
    local rel_pos = k_pos:unsqueeze(1) - q_pos:unsqueeze(2)
    -- rp_bucket = self._relative_position_bucket(rel_pos, causal = self.causal, ...)
    local rp_bucket = self._relative_position_bucket(rel_pos, self.causal, self.num_buckets,
        self.max_distance)
    self.last_bucket = rp_bucket -- (kept for the test)
    -- values = self.relative_attention_bias(rp_bucket)   (1-based ids)
    local values = self.relative_attention_bias(rp_bucket + 1)
    local bias = rearrange(values, "i j h -> h i j")
    return bias * self.scale
end

-- class LayerNorm(Module):  (x-transformers' bias-less one)
local LayerNorm = nn.Module:extend("XLayerNorm")
function LayerNorm:init(dim, unit_offset)
    self.unit_offset = unit_offset or false
    -- self.ln = nn.LayerNorm(dim, elementwise_affine = False)
    self.ln = nn.LayerNorm(dim, { elementwise_affine = false })
    self.gamma = nn.Parameter(tide.ones(dim))
    -- nn.init.constant_(self.gamma, 1. - float(unit_offset))
    nn.init.constant_(self.gamma, 1 - (self.unit_offset and 1 or 0))
end

function LayerNorm:forward(x)
    local normed = self.ln(x)
    -- gamma = self.gamma + float(self.unit_offset)
    local gamma = self.gamma + (self.unit_offset and 1 or 0)
    return normed * gamma
end

-- class DynamicPositionBias(Module):
local DynamicPositionBias = nn.Module:extend("DynamicPositionBias")
-- def __init__(self, dim, *, heads, depth, log_distance = False, norm = False):
function DynamicPositionBias:init(dim, opts)
    local heads, depth = opts.heads, opts.depth
    assert(depth >= 1, "depth for dynamic position bias MLP must be greater or equal to 1")
    self.log_distance = opts.log_distance or false
    self.mlp = nn.ModuleList({})
    -- self.mlp.append(Sequential(nn.Linear(1, dim), LayerNorm(dim) if norm else None, nn.SiLU()))
    self.mlp:append(Sequential(nn.Linear(1, dim), opts.norm and LayerNorm(dim) or false,
        nn.SiLU()))
    -- for _ in range(depth - 1):
    for _ = 1, depth - 1 do
        self.mlp:append(Sequential(nn.Linear(dim, dim), opts.norm and nn.LayerNorm(dim) or false,
            nn.SiLU()))
    end
    self.mlp:append(nn.Linear(dim, heads))
end

function DynamicPositionBias:forward(i, j)
    -- seq_arange = arange(j - i, j, device = device)
    local seq_arange = tide.arange(j - i, j)
    local context_arange = tide.arange(0, j)
    -- indices = einx.subtract('i, j -> i j', seq_arange, context_arange)
    local indices = seq_arange:unsqueeze(2) - context_arange:unsqueeze(1)
    -- indices += (j - 1)   (and + 1: tide's index tensors are 1-based)
    indices = indices + (j - 1) + 1
    -- pos = arange(-j + 1, j, device = device).float()
    local pos = tide.arange(-j + 1, j):float()
    pos = rearrange(pos, "... -> ... 1")
    if self.log_distance then
        -- pos = torch.sign(pos) * torch.log(pos.abs() + 1)
        pos = tide.sign(pos) * tide.log(pos:abs() + 1)
    end
    -- for layer in self.mlp:
    for _, layer in ipairs(self.mlp:children()) do
        pos = layer(pos)
    end
    -- bias = pos[indices]
    local bias = pos[indices]
    bias = rearrange(bias, "i j h -> h i j")
    return bias
end

-- class AlibiPositionalBias(Module):
local AlibiPositionalBias = nn.Module:extend("AlibiPositionalBias")
-- def __init__(self, heads, total_heads = None, slopes: list[int] | None = None, **kwargs):
function AlibiPositionalBias:init(heads, total_heads, slopes)
    self.heads = heads
    self.total_heads = default(total_heads, heads)
    -- slopes = Tensor(default(slopes, self._get_slopes(heads)))
    slopes = tide.tensor(default(slopes, self._get_slopes(heads)), { dtype = "float32" })
    slopes = rearrange(slopes, "h -> h 1 1")
    self:register_buffer("slopes", slopes, false)
    -- self.register_buffer('bias', None, persistent = False)
    self:register_buffer("bias", nil, false)
end

-- def _get_slopes(heads):
function AlibiPositionalBias._get_slopes(heads)
    -- math.log2 (Lua 5.1's math.log takes no base; exact at powers of two, as Python's)
    local function log2(x)
        local r = math.log(x) / math.log(2)
        local n = math.floor(r + 0.5)
        return 2 ^ n == x and n or r
    end
    local function get_slopes_power_of_2(n)
        -- start = (2**(-2**-(math.log2(n)-3)))
        local start = 2 ^ (-2 ^ -(log2(n) - 3))
        local ratio = start
        -- return [start*ratio**i for i in range(n)]
        local r = {}
        for i = 0, n - 1 do r[#r + 1] = start * ratio ^ i end
        return r
    end
    -- if math.log2(heads).is_integer():
    if log2(heads) % 1 == 0 then
        return get_slopes_power_of_2(heads)
    end
    -- closest_power_of_2 = 2 ** math.floor(math.log2(heads))
    local closest_power_of_2 = 2 ^ math.floor(log2(heads))
    -- return get_slopes_power_of_2(closest_power_of_2)
    --     + get_slopes_power_of_2(2 * closest_power_of_2)[0::2][:heads-closest_power_of_2]
    local r = get_slopes_power_of_2(closest_power_of_2)
    local extra = get_slopes_power_of_2(2 * closest_power_of_2)
    for k = 1, heads - closest_power_of_2 do r[#r + 1] = extra[2 * k - 1] end
    return r
end

function AlibiPositionalBias:forward(i, j)
    local h = self.total_heads
    -- if exists(self.bias) and self.bias.shape[-1] >= j and self.bias.shape[-2] >= i:
    if exists(self.bias) and self.bias.shape[-1] >= j and self.bias.shape[-2] >= i then
        -- return self.bias[..., -i:, -j:]
        return self.bias[{ "...", { -i, -1 }, { -j, -1 } }]
    end
    local seq_arange = tide.arange(j - i, j)
    local context_arange = tide.arange(0, j)
    -- bias = -einx.subtract('j, i -> 1 i j', context_arange, seq_arange).abs()
    local bias = -(context_arange:view(1, 1, j) - seq_arange:view(1, i, 1)):abs()
    bias = bias * self.slopes
    -- num_heads_unalibied = h - bias.shape[-3]
    local num_heads_unalibied = h - bias.shape[-3]
    bias = pad_at_dim(bias, { 0, num_heads_unalibied }, -3)
    self:register_buffer("bias", bias, false)
    return self.bias
end

-- class RotaryEmbedding(Module):
local RotaryEmbedding = nn.Module:extend("RotaryEmbedding")
-- def __init__(self, dim, use_xpos = False, scale_base = 512, interpolation_factor = 1.,
--              base = 10000, base_rescale_factor = 1.):
function RotaryEmbedding:init(dim, opts)
    opts = opts or {}
    local base = opts.base or 10000
    local interpolation_factor = opts.interpolation_factor or 1
    -- base *= base_rescale_factor ** (dim / (dim - 2))
    base = base * (opts.base_rescale_factor or 1) ^ (dim / (dim - 2))
    -- inv_freq = 1. / (base ** (arange(0, dim, 2).float() / dim))
    local inv_freq = 1 / (base ^ (tide.arange(0, dim, 2):float() / dim))
    self:register_buffer("inv_freq", inv_freq)
    assert(interpolation_factor >= 1)
    self.interpolation_factor = interpolation_factor
    if not opts.use_xpos then
        self:register_buffer("scale", nil)
        return
    end
    -- scale = (arange(0, dim, 2) + 0.4 * dim) / (1.4 * dim)
    local scale = (tide.arange(0, dim, 2) + 0.4 * dim) / (1.4 * dim)
    self.scale_base = opts.scale_base or 512
    self:register_buffer("scale", scale)
end

function RotaryEmbedding:forward_from_seq_len(seq_len)
    local t = tide.arange(0, seq_len)
    return self:forward(t)
end

function RotaryEmbedding:forward(t)
    -- max_pos = t.max() + 1
    local max_pos = t:max() + 1
    if t.ndim == 1 then
        t = rearrange(t, "n -> 1 n")
    end
    -- freqs = torch.einsum('b i , j -> b i j', t.type_as(self.inv_freq), self.inv_freq)
    --     / self.interpolation_factor
    local freqs = tide.einsum("b i , j -> b i j", t:type_as(self.inv_freq), self.inv_freq)
        / self.interpolation_factor
    freqs = tide.stack({ freqs, freqs }, -1)
    freqs = rearrange(freqs, "... d r -> ... (d r)")
    if not exists(self.scale) then
        -- return freqs, 1.
        return freqs, 1
    end
    -- power = (t - (max_pos // 2)) / self.scale_base
    local power = (t - max_pos:floor_divide(2)) / self.scale_base
    -- scale = self.scale ** rearrange(power, '... n -> ... n 1')
    local scale = self.scale ^ rearrange(power, "... n -> ... n 1")
    scale = tide.stack({ scale, scale }, -1)
    scale = rearrange(scale, "... d r -> ... (d r)")
    return freqs, scale
end

-- def rotate_half(x):
local function rotate_half(x)
    x = rearrange(x, "... (d r) -> ... d r", { r = 2 })
    -- x1, x2 = x.unbind(dim = -1)
    local x1, x2 = unpack(x:unbind(-1))
    x = tide.stack({ -x2, x1 }, -1)
    return rearrange(x, "... d r -> ... (d r)")
end

-- def apply_rotary_pos_emb(t, freqs, scale = 1):
local function apply_rotary_pos_emb(t, freqs, scale)
    scale = scale or 1
    -- rot_dim, seq_len, orig_dtype = freqs.shape[-1], t.shape[-2], t.dtype
    local rot_dim, seq_len, orig_dtype = freqs.shape[-1], t.shape[-2], t.dtype
    -- freqs = freqs[:, -seq_len:, :]
    freqs = freqs[{ {}, { -seq_len, -1 }, {} }]
    -- scale = scale[:, -seq_len:, :] if is_tensor(scale) else scale
    local scale_is_tensor = tide.is_tensor(scale)
    if scale_is_tensor then scale = scale[{ {}, { -seq_len, -1 }, {} }] end
    if t.ndim == 4 and freqs.ndim == 3 then
        freqs = rearrange(freqs, "b n d -> b 1 n d")
        if scale_is_tensor then
            scale = rearrange(scale, "b n d -> b 1 n d")
        end
    end
    -- t, t_unrotated = t[..., :rot_dim], t[..., rot_dim:]
    local t_unrotated = t[{ "...", { rot_dim + 1, -1 } }]
    t = t[{ "...", { 1, rot_dim } }]
    t = (t * freqs:cos() * scale) + (rotate_half(t) * freqs:sin() * scale)
    local out = tide.cat({ t, t_unrotated }, -1)
    -- return out.type(orig_dtype)
    return out:to(orig_dtype)
end

-- attend.py's Attend.forward (no flash, no mask): the einsum path with attn_bias
local function attend(q, k, v, attn_bias)
    -- scale = default(self.scale, q.shape[-1] ** -0.5)
    local scale = q.shape[-1] ^ -0.5
    -- sim = einsum(f'b h i d, b h j d -> b h i j', q, k)
    local sim = einops.einsum(q, k, "b h i d, b h j d -> b h i j")
    sim = sim * scale
    if exists(attn_bias) then
        sim = sim + attn_bias
    end
    -- attn = self.attn_fn(sim)   (softmax over the last dim, in float32)
    local attn = F.softmax(sim, -1)
    -- out = einsum(f'b h i j, {kv_einsum_eq} -> b h i d', attn, v)
    return einops.einsum(attn, v, "b h i j, b h j d -> b h i d")
end

---------------------------------------------------------------------------------------------
-- the checks: weights by formula, PyTorch's sum / cos-weighted sum / max|x|
---------------------------------------------------------------------------------------------
-- W(*shape, c): sin(arange(n) * 0.37 + c) * 0.5, float32
local function W(shape, c)
    local n = 1
    for _, s in ipairs(shape) do n = n * s end
    return ((tide.arange(0, n):double() * 0.37 + (c or 0)):sin() * 0.5):float():view(shape)
end

local function sig(t)
    t = t:detach():double():flatten()
    local w = (tide.arange(0, t:numel()):double() * 0.71):cos()
    return { t:sum():item(), (t * w):sum():item(), t:abs():max():item() }
end

local function check(name, t, shape, want, tol)
    assert.are.same(shape, t:size(), name .. " shape")
    assert_close_list(want, sig(t), tol or 2e-5, name)
end

local H, N, D = 4, 6, 16
local function qkv()
    return W({ 1, H, N, D }, 0.1), W({ 1, H, N, D }, 0.2), W({ 1, H, N, D }, 0.3)
end

describe("x-transformers positional biases (x_transformers.py at HEAD)", function()
    it("AbsolutePositionalEmbedding (scale, l2norm_embed, offset) and ScaledSinusoidal", function()
        local x = W({ 2, N, D })
        local m = AbsolutePositionalEmbedding(D, 8, false)
        m.emb.weight.data:copy_(W({ 8, D }, 0.4))
        check("abs", m(x), { 6, 16 }, { 0.462168703, 0.111515695, 0.124955371 })
        -- m(x[:, :4], offset = 2)
        check("abs_off", m(x[{ {}, { 1, 4 } }], nil, nil, 2), { 4, 16 },
            { 0.426525941, -0.366883333, 0.124955371 })
        m = AbsolutePositionalEmbedding(D, 8, true)
        m.emb.weight.data:copy_(W({ 8, D }, 0.4))
        check("abs_l2", m(x), { 6, 16 }, { 1.32901127, 0.362336925, 0.364187241 })
        check("abs_l2_off", m(x[{ {}, { 1, 4 } }], nil, nil, 2), { 4, 16 },
            { 1.23049044, -1.06824406, 0.364187241 })
        assert.error_matches(function() m(W({ 1, 9, D })) end, "a sequence length of 9 but your "
            .. "absolute positional embedding has a max sequence length of 8")
        local s = ScaledSinusoidalEmbedding(D)
        check("sin", s(x), { 6, 16 }, { 11.272718, -0.660650062, 0.25 })
    end)

    it("RelativePositionBias: T5 buckets (causal and not, clamped) and the bias", function()
        local q, k, v = qkv()
        local want = {
            [false] = {
                bucket = { 0, 5, 6, 7, 7, 7, 1, 0, 5, 6, 7, 7, 2, 1, 0, 5, 6, 7, 3, 2, 1, 0, 5, 6,
                    3, 3, 2, 1, 0, 5, 3, 3, 3, 2, 1, 0 },
                t5 = { -18.7711689, 13.9445467, 1.99846327 },
                t5q = { -7.15857446, 1.91312638, 1.99846327 },
                att = { 2.3238864, -0.3874307, 0.482234001 },
            },
            [true] = {
                bucket = { 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 2, 1, 0, 0, 0, 0, 3, 2, 1, 0, 0, 0,
                    4, 3, 2, 1, 0, 0, 4, 4, 3, 2, 1, 0 },
                t5 = { 130.782117, -13.20698, 1.99846327 },
                t5q = { 56.4497839, -3.87052767, 1.99846327 },
                att = { 2.46301686, 0.710623418, 0.464368522 },
            },
        }
        for _, causal in ipairs({ false, true }) do
            local w = want[causal]
            -- RelativePositionBias(scale = D ** 0.5, causal, num_buckets = 8,
            --     max_distance = 4 if not causal else 16, heads = H)
            local rp = RelativePositionBias(D ^ 0.5, causal, 8, causal and 16 or 4, H)
            rp.relative_attention_bias.weight.data:copy_(W({ 8, H }, 0.5))
            local b = rp(N, N)
            assert.are.same(w.bucket, rp.last_bucket:flatten():tolist())
            assert.are.equal("int64", rp.last_bucket.dtype)
            check("t5", b, { 4, 6, 6 }, w.t5)
            local b2 = rp(4, N)
            local tail = {}
            for n = 13, 36 do tail[#tail + 1] = w.bucket[n] end
            assert.are.same(tail, rp.last_bucket:flatten():tolist())
            check("t5q", b2, { 4, 4, 6 }, w.t5q)
            check("att_t5", attend(q, k, v, b), { 1, 4, 6, 16 }, w.att)
        end
    end)

    it("DynamicPositionBias: MLP over (log-)distances, lookup, gradient through the MLP", function()
        local q, k, v = qkv()
        local want = {
            [false] = {
                dyn = { 7.30551025, 0.481497457, 0.897842228 },
                dynq = { 4.9047206, 0.668667651, 0.885663152 },
                att = { 2.39838352, 0.286263361, 0.41652143 },
                loss = 28.3118763,
                grads = {
                    { 5.0291419e-08, 0.360307284, 0.1370309 },
                    { -1.90921128e-08, -0.0263622768, 0.0437296331 },
                    { 0.116381023, -0.160137191, 0.111035079 },
                    { -3.86598913e-08, -0.22279909, 0.0638641492 },
                    { -4.19095159e-08, 0.0606216003, 0.0653082356 },
                    { 0.147020885, -0.0151030661, 0.249299869 },
                    { 0.0318084935, -0.0488863432, 0.0652416497 },
                    { -1.51266123, 0.522401338, 0.593467653 },
                    { -7.4505806e-07, -5.02173915e-07, 3.42726707e-07 },
                },
            },
            [true] = {
                dyn = { 7.54216328, 0.390123415, 0.856038213 },
                dynq = { 4.98330814, 0.62984903, 0.839280963 },
                att = { 2.37542279, 0.285264437, 0.41555661 },
                loss = 28.2796535,
                grads = {
                    { 1.86264515e-09, 0.0721427973, 0.0601248108 },
                    { -1.51339918e-09, 0.0367167529, 0.0407422185 },
                    { 0.0347981788, -0.152004311, 0.071984455 },
                    { 1.1708471e-07, -0.0776754519, 0.0390876234 },
                    { 8.14907253e-08, 0.00811010926, 0.027062133 },
                    { 0.0228279079, 0.00219339124, 0.0974872038 },
                    { 0.00868463493, -0.0244315112, 0.0282022823 },
                    { -0.346571703, -0.0298972942, 0.210634232 },
                    { -1.86264515e-07, 6.55591205e-08, 1.04308128e-07 },
                },
            },
        }
        local names = { "mlp.1.1.weight", "mlp.1.1.bias", "mlp.1.2.gamma", "mlp.2.1.weight",
            "mlp.2.1.bias", "mlp.2.2.weight", "mlp.2.2.bias", "mlp.3.weight", "mlp.3.bias" }
        for _, logd in ipairs({ false, true }) do
            local w = want[logd]
            local dp = DynamicPositionBias(8, { heads = H, depth = 2, log_distance = logd,
                norm = true })
            local params = dp:named_parameters()
            local got_names = {}
            -- for idx, p in enumerate(dp.parameters()): p.data.copy_(W(*p.shape, c = 0.6 + idx))
            for idx, np in ipairs(params) do
                got_names[idx] = np[1]
                np[2].data:copy_(W(np[2]:size(), 0.6 + idx - 1))
            end
            assert.are.same(names, got_names)
            local b = dp(N, N)
            check("dyn", b, { 4, 6, 6 }, w.dyn)
            check("dynq", dp(4, N), { 4, 4, 6 }, w.dynq)
            local out = attend(q, k, v, b)
            check("att_dyn", out, { 1, 4, 6, 16 }, w.att)
            -- loss = (out * W(*out.shape, c = 0.9)).sum(); loss.backward()
            local loss = (out * W(out:size(), 0.9)):sum()
            loss:backward()
            assert_close_list({ w.loss }, { loss:item() }, 1e-5, "dyn loss")
            for idx, np in ipairs(params) do
                check("grad " .. np[1], np[2].grad, np[2]:size(), w.grads[idx], 1e-5)
            end
        end
    end)

    it("AlibiPositionalBias: slopes, padded heads, the cached bias reused", function()
        local q, k, v = qkv()
        assert.are.same({ 0.25, 0.0625, 0.015625, 0.00390625 }, AlibiPositionalBias._get_slopes(4))
        assert.are.same({ 0.0625, 0.00390625, 0.25 }, AlibiPositionalBias._get_slopes(3))
        assert.are.same({ 0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125 },
            AlibiPositionalBias._get_slopes(6))
        local al = AlibiPositionalBias(H)
        assert.is_nil(al.bias)
        local b = al(N, N)
        check("alibi", b, { 4, 6, 6 }, { -23.2421875, 2.86803261, 1.25 })
        -- b[0, 1].tolist()
        assert.are.same({ -0.25, 0, -0.25, -0.5, -0.75, -1 }, b[{ 1, 2 }]:tolist())
        assert.are.equal(b, al.bias)
        -- the registered buffer is reused: bias[..., -4:, -5:]
        local b2 = al(4, 5)
        check("alibi_reuse", b2, { 4, 4, 5 }, { -9.9609375, -0.27435228, 1 })
        check("att_alibi", attend(q, k, v, b), { 1, 4, 6, 16 },
            { 2.32929979, 0.252125447, 0.431689471 })
        local al3 = AlibiPositionalBias(3, H)
        b = al3(N, N)
        check("alibi3", b, { 4, 6, 6 }, { -22.1484375, 2.27626515, 1.25 })
        assert.are.equal(0, b[4]:abs():sum():item())
    end)

    it("RotaryEmbedding with and without xpos, partial rotary dims, in attention", function()
        local q, k, v = qkv()
        check("rotate_half", rotate_half(q), { 1, 4, 6, 16 },
            { 0.126876283, 0.282492476, 0.499978811 })
        local want = {
            [false] = { qr = { 6.99192994, -3.08307932, 0.686926126 },
                kr = { 6.54093689, -3.33916722, 0.674164414 },
                att = { 2.27906396, 0.312769255, 0.418251395 } },
            [true] = { qr = { 9.18508257, -5.13283208, 1.26722419 },
                kr = { 4.72926753, -2.04703675, 1.14829648 },
                att = { 2.23237271, 0.349989142, 0.419002622 } },
        }
        for _, xpos in ipairs({ false, true }) do
            local w = want[xpos]
            local rot = RotaryEmbedding(8, { use_xpos = xpos, scale_base = 4 })
            local freqs, scale = rot:forward_from_seq_len(N)
            check("freqs", freqs, { 1, 6, 8 }, { 33.33, -4.91488155, 5 })
            if xpos then
                check("xscale", scale, { 1, 6, 8 }, { 55.3042088, 5.3631237, 2.55888653 })
            else
                assert.are.equal(1, scale)
            end
            -- q_xpos_scale, k_xpos_scale = (xpos_scale, xpos_scale ** -1.)
            --     if exists(xpos_scale) else (1., 1.)
            local q_scale, k_scale = 1, 1
            if xpos then q_scale, k_scale = scale, scale ^ -1 end
            local qr = apply_rotary_pos_emb(q, freqs, q_scale)
            local kr = apply_rotary_pos_emb(k, freqs, k_scale)
            check("qr", qr, { 1, 4, 6, 16 }, w.qr)
            check("kr", kr, { 1, 4, 6, 16 }, w.kr)
            -- the unrotated half passes through unchanged
            local kept = qr[{ "...", { 9, 16 } }] - q[{ "...", { 9, 16 } }]
            assert.are.equal(0, kept:abs():max():item())
            check("att_rot", attend(qr, kr, v), { 1, 4, 6, 16 }, w.att)
        end
    end)
end)
