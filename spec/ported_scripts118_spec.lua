-- ported_scripts118_spec.lua — lucidrains/rotary-embedding-torch
-- rotary_embedding_torch/rotary_embedding_torch.py at HEAD 8bb4643d1c29f944c47d2e807452ac437689af18
-- (exists, default, broadcat, slice_at_dim, rotate_half, apply_rotary_emb, apply_learned_rotations,
-- RotaryEmbedding: freqs_for 'lang' / 'pixel' / 'constant', theta rescale, learned_freq, xpos,
-- interpolate_factor, the cached freqs and scales, get_seq_pos, rotate_queries_or_keys,
-- rotate_queries_with_cached_keys, rotate_queries_and_keys, get_scale, get_axial_freqs, forward),
-- ported line for line at tiny sizes (dim 8, heads 2, seq 6, batch 2) on inputs built from sin and
-- cos of an arange, the same on both sides. The values are PyTorch 1.13's for the same module
-- (einops' rearrange / repeat written out with reshape / unsqueeze there, as the venv has no
-- einops). The Python line stands above each Lua line that differs from it. Python's keyword
-- arguments are a trailing options table; Python's 0-based dims and slices are 1-based ranges.
local tide = require("tide")
local nn = tide.nn
local einops = tide.einops
local rearrange, repeat_ = einops.rearrange, einops.repeat_
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local close = ported.close
local assert_close_list = ported.assert_close_list

local pi = math.pi

-- helper functions

local function exists(val)
    return val ~= nil
end

local function default(val, d)
    -- return val if exists(val) else d
    if exists(val) then return val end
    return d
end

-- broadcat, as tortoise-tts was using it

-- def broadcat(tensors, dim = -1):
local function broadcat(tensors, dim)
    dim = dim or -1
    -- broadcasted_tensors = broadcast_tensors(*tensors)
    local broadcasted_tensors = tide.broadcast_tensors(tensors)
    return tide.cat(broadcasted_tensors, dim)
end

-- def slice_at_dim(t, dim_slice: slice, *, dim):  (dim_slice a range table {a, b})
local function slice_at_dim(t, dim_slice, dim)
    -- dim += (t.ndim if dim < 0 else 0)
    if dim < 0 then dim = dim + t.ndim + 1 end
    -- colons = [slice(None)] * t.ndim
    local colons = {}
    for i = 1, t.ndim do colons[i] = {} end
    colons[dim] = dim_slice
    -- return t[tuple(colons)]
    return t[colons]
end

-- rotary embedding helper functions

local function rotate_half(x)
    -- x = rearrange(x, '... (d r) -> ... d r', r = 2)
    x = rearrange(x, "... (d r) -> ... d r", { r = 2 })
    -- x1, x2 = x.unbind(dim = -1)
    local x1, x2 = unpack(x:unbind(-1))
    -- x = torch.stack((-x2, x1), dim = -1)
    x = tide.stack({ -x2, x1 }, -1)
    return rearrange(x, "... d r -> ... (d r)")
end

-- @autocast('cuda', enabled = False)
-- def apply_rotary_emb(freqs, t, start_index = 0, scale = 1., seq_dim = -2, freqs_seq_dim = None):
local apply_rotary_emb = tide.amp.autocast("cuda", { enabled = false })(function(freqs, t, opts)
    opts = opts or {}
    local start_index, scale = opts.start_index or 0, opts.scale or 1.
    local seq_dim, freqs_seq_dim = opts.seq_dim or -2, opts.freqs_seq_dim
    local dtype = t.dtype

    if not exists(freqs_seq_dim) then
        if freqs.ndim == 2 or t.ndim == 3 then
            -- freqs_seq_dim = 0
            freqs_seq_dim = 1
        end
    end

    if t.ndim == 3 or exists(freqs_seq_dim) then
        -- seq_len = t.shape[seq_dim]
        local seq_len = t:size(seq_dim)
        -- freqs = slice_at_dim(freqs, slice(-seq_len, None), dim = freqs_seq_dim)
        freqs = slice_at_dim(freqs, { -seq_len, -1 }, freqs_seq_dim)
    end

    -- rot_dim = freqs.shape[-1]
    local rot_dim = freqs:size(-1)
    local end_index = start_index + rot_dim

    -- assert rot_dim <= t.shape[-1], f'feature dimension {t.shape[-1]} is not of ...'
    assert(rot_dim <= t:size(-1), string.format("feature dimension %d is not of sufficient "
        .. "size to rotate in all the positions %d", t:size(-1), rot_dim))

    -- Split t into three parts: left, middle (to be transformed), and right
    -- t_left = t[..., :start_index]
    local t_left = t[{ "...", { 1, start_index } }]
    -- t_middle = t[..., start_index:end_index]
    local t_middle = t[{ "...", { start_index + 1, end_index } }]
    -- t_right = t[..., end_index:]
    local t_right = t[{ "...", { end_index + 1, -1 } }]

    -- Apply rotary embeddings without modifying t in place
    -- t_transformed = (t_middle * freqs.cos() * scale) +
    --     (rotate_half(t_middle) * freqs.sin() * scale)
    local t_transformed = (t_middle * freqs:cos() * scale)
        + (rotate_half(t_middle) * freqs:sin() * scale)

    -- out = torch.cat((t_left, t_transformed, t_right), dim=-1)
    local out = tide.cat({ t_left, t_transformed, t_right }, -1)

    return out:type(dtype)
end)

-- learned rotation helpers

-- def apply_learned_rotations(rotations, t, start_index = 0, freq_ranges = None):
local function apply_learned_rotations(rotations, t, start_index, freq_ranges)
    start_index = start_index or 0
    if exists(freq_ranges) then
        -- rotations = einsum('..., f -> ... f', rotations, freq_ranges)
        rotations = tide.einsum("...,f->...f", rotations, freq_ranges)
        -- rotations = rearrange(rotations, '... r f -> ... (r f)')
        rotations = rearrange(rotations, "... r f -> ... (r f)")
    end

    -- rotations = repeat(rotations, '... n -> ... (n r)', r = 2)
    rotations = repeat_(rotations, "... n -> ... (n r)", { r = 2 })
    -- return apply_rotary_emb(rotations, t, start_index = start_index)
    return apply_rotary_emb(rotations, t, { start_index = start_index })
end

-- classes

-- class RotaryEmbedding(Module):
local RotaryEmbedding = nn.Module:extend("RotaryEmbedding")
-- def __init__(self, dim, custom_freqs = None, freqs_for = 'lang', theta = 10000, max_freq = 10,
--     num_freqs = 1, learned_freq = False, use_xpos = False, xpos_scale_base = 512,
--     interpolate_factor = 1., theta_rescale_factor = 1., seq_before_head_dim = False,
--     cache_if_possible = True, cache_max_seq_len = 8192):
function RotaryEmbedding:init(dim, opts)
    opts = opts or {}
    local custom_freqs, freqs_for = opts.custom_freqs, opts.freqs_for or "lang"
    local theta, max_freq, num_freqs = opts.theta or 10000, opts.max_freq or 10, opts.num_freqs or 1
    local learned_freq, use_xpos = opts.learned_freq or false, opts.use_xpos or false
    local xpos_scale_base = opts.xpos_scale_base or 512
    local interpolate_factor = opts.interpolate_factor or 1.
    local theta_rescale_factor = opts.theta_rescale_factor or 1.
    local seq_before_head_dim = opts.seq_before_head_dim or false
    local cache_if_possible = default(opts.cache_if_possible, true)
    local cache_max_seq_len = opts.cache_max_seq_len or 8192
    -- super().__init__()
    nn.Module.init(self)
    -- proposed by reddit user bloc97, to rescale rotary embeddings to longer sequence length
    -- without fine-tuning; has some connection to NTK literature

    -- theta *= theta_rescale_factor ** (dim / (dim - 2))
    theta = theta * theta_rescale_factor ^ (dim / (dim - 2))

    self.freqs_for = freqs_for

    local freqs
    if exists(custom_freqs) then
        freqs = custom_freqs
    elseif freqs_for == "lang" then
        -- freqs = 1. / (theta ** (torch.arange(0, dim, 2)[:(dim // 2)].float() / dim))
        freqs = 1. / (theta ^ (tide.arange(0, dim, 2)[{ { 1, math.floor(dim / 2) } }]:float()
            / dim))
    elseif freqs_for == "pixel" then
        -- freqs = torch.linspace(1., max_freq / 2, dim // 2) * pi
        freqs = tide.linspace(1., max_freq / 2, math.floor(dim / 2)) * pi
    elseif freqs_for == "constant" then
        freqs = tide.ones(num_freqs):float()
    end

    self.cache_if_possible = cache_if_possible
    self.cache_max_seq_len = cache_max_seq_len

    -- self.register_buffer('cached_freqs', torch.zeros(cache_max_seq_len, dim), persistent = False)
    self:register_buffer("cached_freqs", tide.zeros(cache_max_seq_len, dim), false)
    self.cached_freqs_seq_len = 0

    -- self.freqs = nn.Parameter(freqs, requires_grad = learned_freq)
    self.freqs = nn.Parameter(freqs, learned_freq)

    self.learned_freq = learned_freq

    -- dummy for device

    -- self.register_buffer('dummy', torch.tensor(0), persistent = False)
    self:register_buffer("dummy", tide.tensor(0), false)

    -- default sequence dimension

    self.seq_before_head_dim = seq_before_head_dim
    -- self.default_seq_dim = -3 if seq_before_head_dim else -2
    self.default_seq_dim = seq_before_head_dim and -3 or -2

    -- interpolation factors

    assert(interpolate_factor >= 1.)
    self.interpolate_factor = interpolate_factor

    -- xpos

    self.use_xpos = use_xpos

    if not use_xpos then
        return
    end

    -- scale = (torch.arange(0, dim, 2) + 0.4 * dim) / (1.4 * dim)
    local scale = (tide.arange(0, dim, 2) + 0.4 * dim) / (1.4 * dim)
    self.scale_base = xpos_scale_base

    self:register_buffer("scale", scale, false)
    self:register_buffer("cached_scales", tide.zeros(cache_max_seq_len, dim), false)
    self.cached_scales_seq_len = 0

    -- add apply_rotary_emb as static method

    -- self.apply_rotary_emb = staticmethod(apply_rotary_emb)
    self.apply_rotary_emb = apply_rotary_emb
end

-- @property
-- def device(self):  (a method here: `device` reads as Module's own field otherwise)
function RotaryEmbedding:device()
    return self.dummy.device
end

-- def get_seq_pos(self, seq_len, device = None, dtype = None, offset = 0):
function RotaryEmbedding:get_seq_pos(seq_len, opts)
    opts = opts or {}
    local offset = opts.offset or 0
    -- device = default(device, self.device)
    local device = default(opts.device, self:device())
    local dtype = default(opts.dtype, self.cached_freqs.dtype)

    -- return (torch.arange(seq_len, device = device, dtype = dtype) + offset) /
    --     self.interpolate_factor
    return (tide.arange(seq_len, { device = device, dtype = dtype }) + offset)
        / self.interpolate_factor
end

-- def rotate_queries_or_keys(self, t, seq_dim = None, offset = 0, scale = None):
function RotaryEmbedding:rotate_queries_or_keys(t, opts)
    opts = opts or {}
    local offset, scale = opts.offset or 0, opts.scale
    local seq_dim = default(opts.seq_dim, self.default_seq_dim)

    -- assert not self.use_xpos or exists(scale), 'you must use `.rotate_queries_and_keys` ...'
    assert(not self.use_xpos or exists(scale), "you must use `.rotate_queries_and_keys` method "
        .. "instead and pass in both queries and keys, for length extrapolatable rotary embeddings")

    -- device, dtype, seq_len = t.device, t.dtype, t.shape[seq_dim]
    local device, dtype, seq_len = t.device, t.dtype, t:size(seq_dim)

    -- seq = self.get_seq_pos(seq_len, device = device, dtype = dtype, offset = offset)
    local seq = self:get_seq_pos(seq_len, { device = device, dtype = dtype, offset = offset })

    -- freqs = self.forward(seq, seq_len = seq_len, offset = offset)
    local freqs = self:forward(seq, seq_len, offset)

    if seq_dim == -3 then
        -- freqs = rearrange(freqs, 'n d -> n 1 d')
        freqs = rearrange(freqs, "n d -> n 1 d")
    end

    -- return apply_rotary_emb(freqs, t, scale = default(scale, 1.), seq_dim = seq_dim)
    return apply_rotary_emb(freqs, t, { scale = default(scale, 1.), seq_dim = seq_dim })
end

-- def rotate_queries_with_cached_keys(self, q, k, seq_dim = None, offset = 0):
function RotaryEmbedding:rotate_queries_with_cached_keys(q, k, opts)
    opts = opts or {}
    local offset = opts.offset or 0
    -- dtype, device, seq_dim = q.dtype, q.device, default(seq_dim, self.default_seq_dim)
    local dtype, device, seq_dim = q.dtype, q.device, default(opts.seq_dim, self.default_seq_dim)

    -- q_len, k_len = q.shape[seq_dim], k.shape[seq_dim]
    local q_len, k_len = q:size(seq_dim), k:size(seq_dim)
    assert(q_len <= k_len)

    -- q_scale = k_scale = 1.
    local q_scale, k_scale = 1., 1.

    if self.use_xpos then
        -- seq = self.get_seq_pos(k_len, dtype = dtype, device = device)
        local seq = self:get_seq_pos(k_len, { dtype = dtype, device = device })

        -- q_scale = self.get_scale(seq[-q_len:]).type(dtype)
        q_scale = self:get_scale(seq[{ { -q_len, -1 } }]):type(dtype)
        k_scale = self:get_scale(seq):type(dtype)
    end

    -- rotated_q = self.rotate_queries_or_keys(q, seq_dim = seq_dim, scale = q_scale,
    --     offset = k_len - q_len + offset)
    local rotated_q = self:rotate_queries_or_keys(q, { seq_dim = seq_dim, scale = q_scale,
        offset = k_len - q_len + offset })
    -- rotated_k = self.rotate_queries_or_keys(k, seq_dim = seq_dim, scale = k_scale ** -1)
    local rotated_k = self:rotate_queries_or_keys(k, { seq_dim = seq_dim, scale = k_scale ^ -1 })

    rotated_q = rotated_q:type(q.dtype)
    rotated_k = rotated_k:type(k.dtype)

    return rotated_q, rotated_k
end

-- def rotate_queries_and_keys(self, q, k, seq_dim = None):
function RotaryEmbedding:rotate_queries_and_keys(q, k, seq_dim)
    seq_dim = default(seq_dim, self.default_seq_dim)

    assert(self.use_xpos)
    -- device, dtype, seq_len = q.device, q.dtype, q.shape[seq_dim]
    local device, dtype, seq_len = q.device, q.dtype, q:size(seq_dim)

    -- seq = self.get_seq_pos(seq_len, dtype = dtype, device = device)
    local seq = self:get_seq_pos(seq_len, { dtype = dtype, device = device })

    -- freqs = self.forward(seq, seq_len = seq_len)
    local freqs = self:forward(seq, seq_len)
    -- scale = self.get_scale(seq, seq_len = seq_len).to(dtype)
    local scale = self:get_scale(seq, seq_len):to(dtype)

    if seq_dim == -3 then
        freqs = rearrange(freqs, "n d -> n 1 d")
        scale = rearrange(scale, "n d -> n 1 d")
    end

    -- rotated_q = apply_rotary_emb(freqs, q, scale = scale, seq_dim = seq_dim)
    local rotated_q = apply_rotary_emb(freqs, q, { scale = scale, seq_dim = seq_dim })
    -- rotated_k = apply_rotary_emb(freqs, k, scale = scale ** -1, seq_dim = seq_dim)
    local rotated_k = apply_rotary_emb(freqs, k, { scale = scale ^ -1, seq_dim = seq_dim })

    rotated_q = rotated_q:type(q.dtype)
    rotated_k = rotated_k:type(k.dtype)

    return rotated_q, rotated_k
end

-- def get_scale(self, t: Tensor, seq_len: int | None = None, offset = 0):
function RotaryEmbedding:get_scale(t, seq_len, offset)
    offset = offset or 0
    assert(self.use_xpos)

    -- should_cache = (self.cache_if_possible and exists(seq_len) and
    --     (offset + seq_len) <= self.cache_max_seq_len)
    local should_cache = (self.cache_if_possible and exists(seq_len)
        and (offset + seq_len) <= self.cache_max_seq_len)

    if should_cache and exists(self.cached_scales)
        and (seq_len + offset) <= self.cached_scales_seq_len then
        -- return self.cached_scales[offset:(offset + seq_len)]
        return self.cached_scales[{ { offset + 1, offset + seq_len } }]
    end

    local scale = 1.
    if self.use_xpos then
        -- power = (t - len(t) // 2) / self.scale_base
        local power = (t - math.floor(t:size(1) / 2)) / self.scale_base
        -- scale = self.scale ** rearrange(power, 'n -> n 1')
        scale = self.scale ^ rearrange(power, "n -> n 1")
        -- scale = repeat(scale, 'n d -> n (d r)', r = 2)
        scale = repeat_(scale, "n d -> n (d r)", { r = 2 })
    end

    if should_cache and offset == 0 then
        -- self.cached_scales[:seq_len] = scale.detach()
        self.cached_scales[{ { 1, seq_len } }] = scale:detach()
        self.cached_scales_seq_len = seq_len
    end

    return scale
end

-- def get_axial_freqs(self, *dims, offsets = None):  (offsets in a trailing {offsets =})
function RotaryEmbedding:get_axial_freqs(...)
    local dims = { ... }
    local offsets
    if type(dims[#dims]) == "table" then
        offsets = table.remove(dims).offsets
    end
    -- Colon = slice(None)
    local Colon = {}
    local all_freqs = {}

    -- handle offset

    if exists(offsets) then
        -- if not is_tensor(offsets):
        if not tide.is_tensor(offsets) then
            -- offsets = tensor(offsets)
            offsets = tide.tensor(offsets)
        end

        -- assert len(offsets) == len(dims)
        assert(offsets:size(1) == #dims)
    end

    -- get frequencies for each axis

    -- for ind, dim in enumerate(dims):
    for ind, dim in ipairs(dims) do
        local offset = 0
        if exists(offsets) then
            offset = offsets[ind]
        end

        local pos
        if self.freqs_for == "pixel" then
            -- pos = torch.linspace(-1, 1, steps = dim, device = self.device)
            pos = tide.linspace(-1, 1, { steps = dim, device = self:device() })
        else
            -- pos = torch.arange(dim, device = self.device)
            pos = tide.arange(dim, { device = self:device() })
        end

        pos = pos + offset

        -- freqs = self.forward(pos, seq_len = dim)
        local freqs = self:forward(pos, dim)

        -- all_axis = [None] * len(dims)
        local all_axis = {}
        for i = 1, #dims do all_axis[i] = tide.newaxis end
        all_axis[ind] = Colon

        -- new_axis_slice = (Ellipsis, *all_axis, Colon)
        local new_axis_slice = { "...", unpack(all_axis) }
        new_axis_slice[#new_axis_slice + 1] = Colon
        -- all_freqs.append(freqs[new_axis_slice])
        all_freqs[#all_freqs + 1] = freqs[new_axis_slice]
    end

    -- concat all freqs

    -- all_freqs = broadcast_tensors(*all_freqs)
    all_freqs = tide.broadcast_tensors(all_freqs)
    -- return torch.cat(all_freqs, dim = -1)
    return tide.cat(all_freqs, -1)
end

-- @autocast('cuda', enabled = False)
-- def forward(self, t: Tensor, seq_len: int | None = None, offset = 0):
RotaryEmbedding.forward = tide.amp.autocast("cuda", { enabled = false })(
    function(self, t, seq_len, offset)
        offset = offset or 0
        -- should_cache = (self.cache_if_possible and not self.learned_freq and exists(seq_len)
        --     and self.freqs_for != 'pixel' and (offset + seq_len) <= self.cache_max_seq_len)
        local should_cache = (self.cache_if_possible and not self.learned_freq and exists(seq_len)
            and self.freqs_for ~= "pixel" and (offset + seq_len) <= self.cache_max_seq_len)

        if should_cache and exists(self.cached_freqs)
            and (offset + seq_len) <= self.cached_freqs_seq_len then
            -- return self.cached_freqs[offset:(offset + seq_len)].detach()
            return self.cached_freqs[{ { offset + 1, offset + seq_len } }]:detach()
        end

        local freqs = self.freqs

        -- freqs = einsum('..., f -> ... f', t.type(freqs.dtype), freqs)
        freqs = tide.einsum("...,f->...f", t:type(freqs.dtype), freqs)
        -- freqs = repeat(freqs, '... n -> ... (n r)', r = 2)
        freqs = repeat_(freqs, "... n -> ... (n r)", { r = 2 })

        if should_cache and offset == 0 then
            -- self.cached_freqs[:seq_len] = freqs.detach()
            self.cached_freqs[{ { 1, seq_len } }] = freqs:detach()
            self.cached_freqs_seq_len = seq_len
        end

        return freqs
    end)

---------------------------------------------------------------------------------------------
-- checks against PyTorch 1.13
---------------------------------------------------------------------------------------------

-- f(torch.arange(n, dtype=torch.float32) * a + b).reshape(*shape)
local function inp(shape, a, b, f)
    local n = 1
    for _, s in ipairs(shape) do n = n * s end
    return (f or tide.sin)(tide.arange(n, { dtype = "float32" }) * a + b):reshape(shape)
end

-- torch.cos(torch.arange(t.numel(), dtype=torch.float32) * 0.7).reshape(t.shape)
local function W(t)
    return tide.cos(tide.arange(t:numel(), { dtype = "float32" }) * 0.7):reshape(t:size())
end

-- the shape, the sum, the sum weighted by W and the last 8 values, as ref.py prints them
local function check(name, t, shape, sum, wsum, tail, tol)
    tol = tol or 1e-5
    assert.same(shape, { unpack(t:size()) }, name .. ": shape")
    local d = t:detach():double()
    assert(close(d:sum():item(), sum, 1e-4), name .. ": sum " .. d:sum():item() .. " vs " .. sum)
    local ws = (d * W(t):double()):sum():item()
    assert(close(ws, wsum, 1e-4), name .. ": weighted sum " .. ws .. " vs " .. wsum)
    assert_close_list(tail, d:reshape(-1)[{ { -8, -1 } }]:tolist(), tol, name)
end

local q = inp({ 2, 2, 6, 8 }, 0.37, 0.1)
local k = inp({ 2, 2, 6, 8 }, 0.53, -0.2, tide.cos)

describe("rotary-embedding-torch helpers", function()
    it("exists, default, broadcat, slice_at_dim, rotate_half", function()
        assert.is_true(exists(0) and not exists(nil))
        assert.equal(3, default(nil, 3))
        assert.equal(false, default(false, 3))
        check("rotate_half", rotate_half(q), { 2, 2, 6, 8 }, -0.53356289, -0.43847387,
            { 0.5354456, -0.8046217, -0.1740713, -0.1938060, -0.7925385, 0.5183819, -0.9964605,
                0.9594271 })
        check("broadcat", broadcat({ inp({ 2, 1, 3 }, 0.3, 0), inp({ 1, 4, 3 }, 0.2, 1) }, -1),
            { 2, 4, 6 }, 30.40984092, 1.53309359, { 0.6754631, 0.5155014, 0.7833269, 0.9320391,
                0.9974950, 0.3349880, 0.1411200, -0.0583742 })
        -- slice_at_dim(q, slice(-3, None), dim=-2)
        check("slice_at_dim", slice_at_dim(q, { -3, -1 }, -2), { 2, 2, 3, 8 }, 6.81899082,
            -1.51480586, { -0.8046217, -0.5354456, -0.1938060, 0.1740713, 0.5183819, 0.7925385,
                0.9594271, 0.9964605 })
    end)

    it("apply_rotary_emb: start_index, scale, the freqs' seq slice, the dtype cast", function()
        local fr = inp({ 10, 4 }, 0.11, 0.3)
        -- apply_rotary_emb(fr, q, start_index=2, scale=0.5)
        check("apply_si2", apply_rotary_emb(fr, q, { start_index = 2, scale = 0.5 }),
            { 2, 2, 6, 8 }, 1.44656115, 1.46061768, { -0.8046217, -0.5354456, 0.0078642, 0.1295614,
                0.4734269, -0.0004546, 0.9594271, 0.9964605 })
        local o = apply_rotary_emb(fr, q:double())
        assert.equal("float64", o.dtype)
        check("apply64", o, { 2, 2, 6, 8 }, 3.03840549, 0.35180135, { -0.9197665, 0.3357521,
            0.0348359, 0.2574384, 0.5183819, 0.7925385, 0.9594271, 0.9964605 })
        assert.error_matches(function() apply_rotary_emb(inp({ 6, 10 }, 0.1, 0), q) end,
            "feature dimension 8 is not of sufficient size to rotate in all the positions 10",
            1, true)
    end)

    it("apply_learned_rotations with and without freq_ranges", function()
        local rot = inp({ 2, 6, 2 }, 0.21, 0.0)
        -- apply_learned_rotations(rot, t, freq_ranges=torch.tensor([1., 2.]))
        check("learned_rot", apply_learned_rotations(rot, inp({ 2, 6, 8 }, 0.13, 0.4), 0,
            tide.tensor({ 1., 2. })), { 2, 6, 8 }, 18.65482214, 0.04779290, { -0.8325367,
                0.2518667, -0.1176614, 0.5452350, -0.1758178, 0.1299907, 0.1454390, -0.1227307 })
        check("learned_rot_nofr", apply_learned_rotations(inp({ 6, 4 }, 0.21, 0.0), q, 0),
            { 2, 2, 6, 8 }, 0.98646335, 0.59954286, { -0.9276719, 0.2711881, 0.0300564, 0.2587628,
                0.9470065, -0.0039541, 1.3586988, -0.2595602 })
    end)
end)

describe("rotary-embedding-torch RotaryEmbedding", function()
    it("lang: freqs, rotated q, the cache and its hits, offsets", function()
        local r = RotaryEmbedding(8)
        assert_close_list({ 1.0, 0.1, 0.01, 0.001 }, r.freqs:tolist(), 1e-6, "freqs")
        assert.is_false(r.freqs.requires_grad)
        check("lang_q", r:rotate_queries_or_keys(q), { 2, 2, 6, 8 }, 3.27226935, 0.59069859,
            { -0.7416925, 0.6196856, -0.2535350, 0.0598464, 0.4781236, 0.8174563, 0.9544328,
                1.0012453 })
        assert.equal(6, r.cached_freqs_seq_len)
        -- non-persistent buffers: not in the state dict
        assert.is_nil(r:state_dict()["cached_freqs"])
        -- a cache hit is a view of cached_freqs (a new tensor each call, as PyTorch's slice)
        local f2 = r(tide.arange(6):float(), 6)
        assert.equal(r.cached_freqs:data_ptr(), f2:data_ptr())
        assert.is_true(tide.equal(f2, r.cached_freqs[{ { 1, 6 } }]))
        -- f3 = r(torch.arange(3.) + 2, seq_len=3, offset=2): 2 rows of 8 float32 in
        local f3 = r(tide.arange(3):float() + 2, 3, 2)
        assert.equal(64, f3:data_ptr() - r.cached_freqs:data_ptr())
        -- r.rotate_queries_or_keys(q, offset=3): past the cache, computed
        check("lang_q_off", r:rotate_queries_or_keys(q, { offset = 3 }), { 2, 2, 6, 8 },
            3.51791487, -1.24913840, { 0.6468200, -0.7181517, -0.2598970, -0.0177513, 0.4533885,
                0.8314300, 0.9514248, 1.0041039 })
        assert.equal(6, r.cached_freqs_seq_len)
        local rq, rk = r:rotate_queries_with_cached_keys(q[{ {}, {}, { -3, -1 } }], k)
        check("cached_keys_q", rq, { 2, 2, 3, 8 }, 3.62140549, 0.49259754, { -0.7416925,
            0.6196856, -0.2535350, 0.0598464, 0.4781236, 0.8174563, 0.9544328, 1.0012453 })
        check("cached_keys_k", rk, { 2, 2, 6, 8 }, 2.42673782, 2.88677982, { -1.1419597,
            0.7025205, -0.4570181, -0.3068175, 0.4187286, 0.8687562, 0.9951180, 0.8830320 })
    end)

    it("partial rotation, seq_before_head_dim, theta rescale and interpolation", function()
        check("partial_q", RotaryEmbedding(4):rotate_queries_or_keys(q), { 2, 2, 6, 8 },
            3.47979055, 0.71285973, { -0.7416925, 0.6196856, -0.2022637, 0.1641674, 0.5183819,
                0.7925385, 0.9594271, 0.9964605 })
        local rs = RotaryEmbedding(8, { seq_before_head_dim = true, theta_rescale_factor = 2.,
            interpolate_factor = 2. })
        check("seqfirst_q", rs:rotate_queries_or_keys(q:transpose(2, 3)), { 2, 6, 2, 8 },
            1.14701075, 0.02870430, { 0.9650668, -0.0525748, -0.2243171, 0.1324515, 0.5058365,
                0.8006039, 0.9581808, 0.9976590 })
    end)

    it("pixel: axial freqs, offsets, applied to an image; no cache", function()
        local rp = RotaryEmbedding(8, { freqs_for = "pixel", max_freq = 10 })
        assert_close_list({ 3.1415927, 7.3303838, 11.5191727, 15.7079639 }, rp.freqs:tolist(),
            1e-6, "pixel freqs")
        local ax = rp:get_axial_freqs(3, 4)
        check("axial", ax, { 3, 4, 16 }, 0, 122.22885681, { 3.1415927, 3.1415927, 7.3303838,
            7.3303838, 11.5191727, 11.5191727, 15.7079639, 15.7079639 })
        -- rp.get_axial_freqs(3, 4, offsets=(1, 2))
        check("axial_off", rp:get_axial_freqs(3, 4, { offsets = { 1, 2 } }), { 3, 4, 16 },
            2714.33617544, 76.28618112, { 9.4247780, 9.4247780, 21.9911518, 21.9911518,
                34.5575180, 34.5575180, 47.1238937, 47.1238937 })
        check("axial_apply", apply_rotary_emb(ax, inp({ 2, 3, 4, 16 }, 0.17, 0.5)),
            { 2, 3, 4, 16 }, 6.61271945, 6.90123330, { -0.9998494, -0.9825005, -0.2799581,
                1.2433866, 0.9434587, -0.3404268, -0.5085010, -0.3554968 }, 1e-4)
        assert.equal(0, rp.cached_freqs_seq_len)
    end)

    it("constant freqs", function()
        -- cache_if_possible=False: the cache's width is dim, the constant freqs' 2 (PyTorch
        -- raises on the cache write too)
        local rc = RotaryEmbedding(8, { freqs_for = "constant", cache_if_possible = false })
        assert.same({ 1.0 }, rc.freqs:tolist())
        check("constant_q", rc:rotate_queries_or_keys(q), { 2, 2, 6, 8 }, 3.48139345, 0.72380278,
            { -0.7416925, 0.6196856, -0.1938060, 0.1740713, 0.5183819, 0.7925385, 0.9594271,
                0.9964605 })
    end)

    it("learned_freq: the gradient through the freqs, no cache", function()
        local rl = RotaryEmbedding(8, { learned_freq = true })
        assert.is_true(rl.freqs.requires_grad)
        assert.equal(1, #rl:parameters())
        local out = rl:rotate_queries_or_keys(q)
        -- (out * W(out)).sum().backward()
        local loss = (out * W(out)):sum()
        loss:backward()
        assert_close_list({ 2.3955259, -1.5322626, 0.0539988, 0.4131084 }, rl.freqs.grad:tolist(),
            1e-4, "freqs.grad")
        assert.equal(0, rl.cached_freqs_seq_len)
    end)

    it("xpos: scales, queries and keys, cached scales, cached keys", function()
        local rx = RotaryEmbedding(8, { use_xpos = true, xpos_scale_base = 4 })
        assert_close_list({ 0.2857143, 0.4642857, 0.6428571, 0.8214286 }, rx.scale:tolist(), 1e-6,
            "scale")
        local xq, xk = rx:rotate_queries_and_keys(q, k)
        check("xpos_q", xq, { 2, 2, 6, 8 }, -1.56767764, 1.06633241, { -0.3964514, 0.3312359,
            -0.1727550, 0.0407784, 0.3833517, 0.6554232, 0.8650282, 0.9074556 })
        check("xpos_k", xk, { 2, 2, 6, 8 }, -2.86854227, 3.05635040, { -2.1364110, 1.3142955,
            -0.6707191, -0.4502849, 0.5222463, 1.0835292, 1.0979680, 0.9742973 })
        assert.equal(6, rx.cached_scales_seq_len)
        check("xpos_scales", rx.cached_scales[{ { 1, 6 } }], { 6, 8 }, 55.30420876, 6.18789828,
            { 0.5345225, 0.5345225, 0.6813852, 0.6813852, 0.8017837, 0.8017837, 0.9063270,
                0.9063270 })
        local sc = rx:get_scale(tide.arange(6):float(), 6)
        assert.equal(rx.cached_scales:data_ptr(), sc:data_ptr())
        check("get_scale_nocache", rx:get_scale(tide.arange(4):float()), { 4, 8 }, 35.67886353,
            1.63605483, { 0.7311105, 0.7311105, 0.8254606, 0.8254606, 0.8954238, 0.8954238,
                0.9520121, 0.9520121 })
        local cq, ck = rx:rotate_queries_with_cached_keys(q[{ {}, {}, { -3, -1 } }], k)
        check("xpos_cached_q", cq, { 2, 2, 3, 8 }, 1.65412722, 1.13536376, { -0.2119122,
            0.1770530, -0.1177127, 0.0277858, 0.3073652, 0.5255076, 0.7839984, 0.8224514 })
        check("xpos_cached_k", ck, { 2, 2, 6, 8 }, -2.86854227, 3.05635040, { -2.1364110,
            1.3142955, -0.6707191, -0.4502849, 0.5222463, 1.0835292, 1.0979680, 0.9742973 })
        assert.error_matches(function() rx:rotate_queries_or_keys(q) end, "you must use "
            .. "`.rotate_queries_and_keys` method instead and pass in both queries and keys, "
            .. "for length extrapolatable rotary embeddings", 1, true)
    end)
end)
