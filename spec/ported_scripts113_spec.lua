-- ported_scripts113_spec.lua — the Hyena operator (HazyResearch/safari standalone_hyena.py:
-- fftconv, OptimModule.register with its per-parameter _optim settings, Sin, PositionalEmbedding,
-- ExponentialModulation, HyenaFilter, HyenaOperator) and standalone_cifar.py's setup_optimizer
-- (AdamW over the parameter groups the _optim attributes imply), ported line for line at tiny
-- sizes (d_model 8, l_max 16, order 2, filter_order 8, emb_dim 3, batch 2, sequence 16) on
-- tide's complex tensors and tide.fft. The Python line stands above each Lua line that differs
-- from it; dims are 1-based.
-- The values were computed with PyTorch 1.13 on the same weights: every parameter, in
-- named_parameters order (k = 0, 1, ...), is 0.3 * sin(0.731 * arange(numel) + 1.37 * k) in its
-- shape, except the two whose init is not random (pos_emb.z and the Sin's freq keep theirs).
-- The reference script writes the rearranges with reshape / permute (the venv has no einops);
-- here they are tide.einops.rearrange, as in the source.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local fft = tide.fft
local rearrange = tide.einops.rearrange

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

local REF = {
    pos_z = { 0.0, 1.0, 0.0, 0.0666667, 1.0, -3.93e-05, 23.9952888, 24.0047112, 20.2713776 },
    t = { 0.0, 0.0666667, 0.1333333, 8.0, 8.0, 4.2666664 },
    deltas = { -3.0701134, -4.8244638, -6.5788145, -8.3331652, -10.0875149, -11.8418655,
        -13.5962162, -15.3505669, -73.682724, 73.682724, 28.0696068 },
    k = { -0.2295418, 0.0714502, 0.3591224, 0.5798488, 0.6924818, 0.6760246, 5.4295688,
        7.8196893, 9.9496746 },
    fftconv = { 0.0100499, -0.0034652, -0.1070432, -0.2554733, -0.3943239, -0.4743127,
        -0.6303755, 101.7619324, 101.7471542 },
    y = { -0.2525961, -0.3016415, -0.1978893, 0.0063098, 0.2074033, 0.3034037, 2.5727623,
        51.5998726, 51.2121162 },
    -- PyTorch's, with tide's 1-based Sequential positions (implicit_filter.0 is .1 here)
    names = { "in_proj.weight", "in_proj.bias", "out_proj.weight", "out_proj.bias",
        "short_filter.weight", "short_filter.bias", "filter_fn.bias", "filter_fn.pos_emb.z",
        "filter_fn.implicit_filter.1.weight", "filter_fn.implicit_filter.1.bias",
        "filter_fn.implicit_filter.2.freq", "filter_fn.implicit_filter.3.weight",
        "filter_fn.implicit_filter.3.bias", "filter_fn.implicit_filter.5.weight",
        "filter_fn.implicit_filter.5.bias", "filter_fn.implicit_filter.7.weight" },
    -- (#params, lr, weight_decay) per group
    groups = { { 7, 0.01, 0.05 }, { 1, 1e-05, 0.0 }, { 8, 0.001, 0 } },
    losses = { 0.1774616, 0.1722046 },
    -- each parameter after the 2 steps, in named_parameters order: first value, sum, abs sum,
    -- abs sum about the mean
    after = {
        { -0.018437, 0.7632264, 37.7167778, 37.7326736 },
        { 0.3130114, -0.1337128, 4.7224903, 4.7224903 },
        { 0.0977134, -0.4887998, 11.7194967, 11.7042217 },
        { -0.2269707, 0.0661401, 1.4258618, 1.4093268 },
        { -0.1960031, -0.5823391, 13.6336727, 13.6174965 },
        { 0.1421752, 0.262539, 4.3532891, 4.3314109 },
        { 0.2992886, -0.2278981, 1.4796635, 1.4796633 },
        { 1.99e-05, 23.9950867, 24.0049725, 20.2713223 },
        { -0.3017809, 0.2515121, 4.685329, 4.6643696 },
        { -0.0722237, 0.1324854, 1.5360404, 1.5360404 },
        { 0.9980379, 7.9923573, 7.9923573, 0.0117913 },
        { 0.1767029, -0.3203131, 12.1518402, 12.1518402 },
        { -0.1985516, 0.0268744, 1.6406121, 1.6406122 },
        { -0.2566786, -0.0034389, 12.161828, 12.161829 },
        { 0.0953632, 0.045312, 1.5905252, 1.5905253 },
        { 0.2993798, 0.2853394, 12.1173229, 12.1173229 },
    },
    final = 0.167554,
}

-- the checks: the first n values, then sum, abs sum and abs sum about the mean
local function summary(t, n)
    local d = t:detach()
    local f = d:flatten():tolist()
    local out = {}
    for i = 1, n or 0 do out[i] = f[i] end
    out[#out + 1] = d:sum():item()
    out[#out + 1] = d:abs():sum():item()
    out[#out + 1] = (d - d:mean()):abs():sum():item()
    return out
end

-- torch.sin(a * torch.arange(n).float() + b)
local function seq(n, a, b)
    return (tide.arange(n):float() * a + b):sin()
end

-- setattr(p, "_optim", o) is p._optim = o (a field a script sets on a tensor, as PyTorch's
-- setattr); hasattr(p, "_optim") is p._optim ~= nil, getattr(p, "_optim", None) is p._optim

---------------------------------------------------------------------------------------------
-- standalone_hyena.py
---------------------------------------------------------------------------------------------
-- def fftconv(u, k, D):
local function fftconv(u, k, D)
    -- seqlen = u.shape[-1]
    local seqlen = u:size(-1)
    local fft_size = 2 * seqlen

    -- k_f = torch.fft.rfft(k, n=fft_size) / fft_size
    local k_f = fft.rfft(k, { n = fft_size }) / fft_size
    -- u_f = torch.fft.rfft(u.to(dtype=k.dtype), n=fft_size)
    local u_f = fft.rfft(u:to(k.dtype), { n = fft_size })

    -- if len(u.shape) > 3: k_f = k_f.unsqueeze(1)
    if u.ndim > 3 then k_f = k_f:unsqueeze(2) end
    -- y = torch.fft.irfft(u_f * k_f, n=fft_size, norm='forward')[..., :seqlen]
    local y = fft.irfft(u_f * k_f, { n = fft_size, norm = "forward" })[{ "...", { 1, seqlen } }]

    -- out = y + u * D.unsqueeze(-1)
    local out = y + u * D:unsqueeze(-1)
    -- return out.to(dtype=u.dtype)
    return out:to(u.dtype)
end

-- class OptimModule(nn.Module):
local OptimModule = nn.Module:extend("OptimModule")

-- def register(self, name, tensor, lr=None, wd=0.0):
function OptimModule:register(name, tensor, lr, wd)
    if wd == nil then wd = 0.0 end
    if lr == 0.0 then
        self:register_buffer(name, tensor)
    else
        self:register_parameter(name, nn.Parameter(tensor))

        local optim = {}
        if lr ~= nil then optim.lr = lr end
        -- if wd is not None: optim["weight_decay"] = wd
        optim.weight_decay = wd
        -- setattr(getattr(self, name), "_optim", optim)
        self[name]._optim = optim
    end
end

-- class Sin(nn.Module):
local Sin = nn.Module:extend("Sin")
-- def __init__(self, dim, w=10, train_freq=True):
function Sin:init(dim, w, train_freq)
    nn.Module.init(self)
    w = w or 10
    if train_freq == nil then train_freq = true end
    -- self.freq = nn.Parameter(w * torch.ones(1, dim)) if train_freq else w * torch.ones(1, dim)
    self.freq = train_freq and nn.Parameter(tide.ones(1, dim) * w) or tide.ones(1, dim) * w
end

function Sin:forward(x)
    -- return torch.sin(self.freq * x)
    return tide.sin(self.freq * x)
end

-- class PositionalEmbedding(OptimModule):
local PositionalEmbedding = OptimModule:extend("PositionalEmbedding")
-- def __init__(self, emb_dim: int, seq_len: int, lr_pos_emb: float=1e-5, **kwargs):
function PositionalEmbedding:init(emb_dim, seq_len, lr_pos_emb)
    -- """Complex exponential positional embeddings for Hyena filters."""
    OptimModule.init(self)
    lr_pos_emb = lr_pos_emb or 1e-5

    self.seq_len = seq_len
    -- The time embedding fed to the filteres is normalized so that t_f = 1
    -- t = torch.linspace(0, 1, self.seq_len)[None, :, None] # 1, L, 1
    local t = tide.linspace(0, 1, self.seq_len):view(1, -1, 1)

    local bands
    if emb_dim > 1 then
        -- bands = (emb_dim - 1) // 2
        bands = math.floor((emb_dim - 1) / 2)
    end
    -- To compute the right embeddings we use the "proper" linspace
    -- t_rescaled = torch.linspace(0, seq_len - 1, seq_len)[None, :, None]
    local t_rescaled = tide.linspace(0, seq_len - 1, seq_len):view(1, -1, 1)
    -- w = 2 * math.pi * t_rescaled / seq_len # 1, L, 1
    local w = 2 * math.pi * t_rescaled / seq_len

    -- f = torch.linspace(1e-4, bands - 1, bands)[None, None]
    local f = tide.linspace(1e-4, bands - 1, bands):view(1, 1, -1)
    -- z = torch.exp(-1j * f * w)
    -- GAP: Lua has no complex literal: -1j * f * w is tide.complex(zeros, -(f * w))
    local fw = f * w
    local z = tide.complex(tide.zeros_like(fw), -fw):exp()
    -- z = torch.cat([t, z.real, z.imag], dim=-1)
    z = tide.cat({ t, z.real, z.imag }, -1)
    -- self.register("z", z, lr=lr_pos_emb)
    self:register("z", z, lr_pos_emb)
    -- self.register("t", t, lr=0.0)
    self:register("t", t, 0.0)
end

function PositionalEmbedding:forward(L)
    -- return self.z[:, :L], self.t[:, :L]
    return self.z[{ {}, { 1, L } }], self.t[{ {}, { 1, L } }]
end

-- class ExponentialModulation(OptimModule):
local ExponentialModulation = OptimModule:extend("ExponentialModulation")
-- def __init__(self, d_model, fast_decay_pct=0.3, slow_decay_pct=1.5, target=1e-2,
--              modulation_lr=0.0, modulate: bool=True, shift: float = 0.0, **kwargs):
function ExponentialModulation:init(d_model, kw)
    kw = kw or {}
    local fast_decay_pct, slow_decay_pct = kw.fast_decay_pct or 0.3, kw.slow_decay_pct or 1.5
    local target, modulation_lr = kw.target or 1e-2, kw.modulation_lr or 0.0
    OptimModule.init(self)
    -- self.modulate = modulate
    if kw.modulate == nil then self.modulate = true else self.modulate = kw.modulate end
    -- self.shift = shift
    self.shift = kw.shift or 0.0
    local max_decay = math.log(target) / fast_decay_pct
    local min_decay = math.log(target) / slow_decay_pct
    -- deltas = torch.linspace(min_decay, max_decay, d_model)[None, None]
    local deltas = tide.linspace(min_decay, max_decay, d_model):view(1, 1, -1)
    -- self.register("deltas", deltas, lr=modulation_lr)
    self:register("deltas", deltas, modulation_lr)
end

function ExponentialModulation:forward(t, x)
    if self.modulate then
        -- decay = torch.exp(-t * self.deltas.abs())
        local decay = tide.exp(-t * self.deltas:abs())
        x = x * (decay + self.shift)
    end
    return x
end

-- class HyenaFilter(OptimModule):
local HyenaFilter = OptimModule:extend("HyenaFilter")
-- def __init__(self, d_model, emb_dim=3, order=16, fused_fft_conv=False, seq_len=1024,
--              lr=1e-3, lr_pos_emb=1e-5, dropout=0.0, w=1, wd=0, bias=True,
--              num_inner_mlps=2, normalized=False, **kwargs):
function HyenaFilter:init(d_model, kw)
    kw = kw or {}
    local emb_dim, order, seq_len = kw.emb_dim or 3, kw.order or 16, kw.seq_len or 1024
    local lr, lr_pos_emb, dropout = kw.lr or 1e-3, kw.lr_pos_emb or 1e-5, kw.dropout or 0.0
    local w, wd, num_inner_mlps = kw.w or 1, kw.wd or 0, kw.num_inner_mlps or 2
    OptimModule.init(self)
    self.d_model = d_model
    -- self.use_bias = bias
    self.use_bias = kw.bias ~= false
    -- self.fused_fft_conv = fused_fft_conv
    self.fused_fft_conv = kw.fused_fft_conv or false
    -- self.bias = nn.Parameter(torch.randn(self.d_model))
    self.bias = nn.Parameter(tide.randn(self.d_model))
    self.dropout = nn.Dropout(dropout)

    -- act = Sin(dim=order, w=w)
    local act = Sin(order, w)
    self.emb_dim = emb_dim
    -- assert emb_dim % 2 != 0 and emb_dim >= 3, "emb_dim must be odd and greater or equal
    --     to 3 (time, sine and cosine)"
    assert(emb_dim % 2 ~= 0 and emb_dim >= 3,
        "emb_dim must be odd and greater or equal to 3 (time, sine and cosine)")
    self.seq_len = seq_len

    self.pos_emb = PositionalEmbedding(emb_dim, seq_len, lr_pos_emb)

    self.implicit_filter = nn.Sequential(
        nn.Linear(emb_dim, order),
        act
    )
    -- for i in range(num_inner_mlps):
    for _ = 1, num_inner_mlps do
        self.implicit_filter:append(nn.Linear(order, order))
        self.implicit_filter:append(act)
    end

    -- self.implicit_filter.append(nn.Linear(order, d_model, bias=False))
    self.implicit_filter:append(nn.Linear(order, d_model, false))

    -- self.modulation = ExponentialModulation(d_model, **kwargs)
    self.modulation = ExponentialModulation(d_model, kw)

    self.normalized = kw.normalized or false
    -- for c in self.implicit_filter.children():
    for _, c in ipairs(self.implicit_filter:children()) do
        -- for name, v in c.state_dict().items():
        for name in pairs(c:state_dict()) do
            local optim = { weight_decay = wd, lr = lr }
            -- setattr(getattr(c, name), "_optim", optim)
            c[name]._optim = optim
        end
    end
end

-- def filter(self, L, *args, **kwargs):
function HyenaFilter:filter(L)
    local z, t = self.pos_emb(L)
    local h = self.implicit_filter(z)
    -- h = self.modulation(t, h)
    h = self.modulation(t, h)
    return h
end

-- def forward(self, x, L, k=None, bias=None, *args, **kwargs):
function HyenaFilter:forward(x, L, k, bias)
    -- if k is None: k = self.filter(L)
    if k == nil then k = self:filter(L) end

    -- Ensure compatibility with filters that return a tuple
    -- k = k[0] if type(k) is tuple else k  (filter returns one tensor here)

    local y = fftconv(x, k, bias)
    return y
end

-- class HyenaOperator(nn.Module):
local HyenaOperator = nn.Module:extend("HyenaOperator")
-- def __init__(self, d_model, l_max, order=2, filter_order=64, dropout=0.0,
--              filter_dropout=0.0, **filter_args):
function HyenaOperator:init(d_model, l_max, kw)
    kw = kw or {}
    local order, filter_order = kw.order or 2, kw.filter_order or 64
    local dropout, filter_dropout = kw.dropout or 0.0, kw.filter_dropout or 0.0
    nn.Module.init(self)
    self.d_model = d_model
    self.l_max = l_max
    self.order = order
    local inner_width = d_model * (order + 1)
    self.dropout = nn.Dropout(dropout)
    self.in_proj = nn.Linear(d_model, inner_width)
    self.out_proj = nn.Linear(d_model, d_model)

    -- self.short_filter = nn.Conv1d(inner_width, inner_width, 3, padding=2,
    --     groups=inner_width)
    self.short_filter = nn.Conv1d(inner_width, inner_width, 3,
        { padding = 2, groups = inner_width })
    -- self.filter_fn = HyenaFilter(d_model * (order - 1), order=filter_order, seq_len=l_max,
    --     channels=1, dropout=filter_dropout, **filter_args)
    local filter_args = { order = filter_order, seq_len = l_max, channels = 1,
        dropout = filter_dropout }
    for key, v in pairs(kw.filter_args or {}) do filter_args[key] = v end
    self.filter_fn = HyenaFilter(d_model * (order - 1), filter_args)
end

-- def forward(self, u, *args, **kwargs):
function HyenaOperator:forward(u)
    -- l = u.size(-2)
    local l = u:size(-2)
    local l_filter = math.min(l, self.l_max)
    u = self.in_proj(u)
    u = rearrange(u, "b l d -> b d l")

    -- uc = self.short_filter(u)[...,:l_filter]
    local uc = self.short_filter(u)[{ "...", { 1, l_filter } }]
    -- *x, v = uc.split(self.d_model, dim=1)
    local x = uc:split(self.d_model, 2)
    local v = table.remove(x)

    -- k = self.filter_fn.filter(l_filter)[0]
    local k = self.filter_fn:filter(l_filter)[1]
    -- k = rearrange(k, 'l (o d) -> o d l', o=self.order - 1)
    k = rearrange(k, "l (o d) -> o d l", { o = self.order - 1 })
    -- bias = rearrange(self.filter_fn.bias, '(o d) -> o d', o=self.order - 1)
    local bias = rearrange(self.filter_fn.bias, "(o d) -> o d", { o = self.order - 1 })

    -- for o, x_i in enumerate(reversed(x[1:])):  (o 0-based: k[o] is k[o + 1])
    for o = 0, #x - 2 do
        local x_i = x[#x - o]
        v = self.dropout(v * x_i)
        -- v = self.filter_fn(v, l_filter, k=k[o], bias=bias[o])
        v = self.filter_fn(v, l_filter, k[o + 1], bias[o + 1])
    end

    -- y = rearrange(v * x[0], 'b d l -> b l d')
    local y = rearrange(v * x[1], "b d l -> b l d")

    y = self.out_proj(y)
    return y
end

---------------------------------------------------------------------------------------------
-- standalone_cifar.py's setup_optimizer (the scheduler and the printing left out)
---------------------------------------------------------------------------------------------
-- a dict's identity for dict equality and dict.fromkeys(frozenset(hp.items()) ...)
local function hp_key(hp)
    local keys = {}
    for key in pairs(hp) do keys[#keys + 1] = key end
    table.sort(keys)
    local parts = {}
    for _, key in ipairs(keys) do
        parts[#parts + 1] = key .. "=" .. string.format("%.17g", hp[key])
    end
    return table.concat(parts, ",")
end

-- def setup_optimizer(model, lr, weight_decay, epochs):
local function setup_optimizer(model, lr, weight_decay)
    -- All parameters in the model
    -- all_parameters = list(model.parameters())
    local all_parameters = model:parameters()

    -- General parameters don't contain the special _optim key
    -- params = [p for p in all_parameters if not hasattr(p, "_optim")]
    local params = {}
    for _, p in ipairs(all_parameters) do
        if p._optim == nil then params[#params + 1] = p end
    end

    -- Create an optimizer with the general parameters
    -- optimizer = optim.AdamW(params, lr=lr, weight_decay=weight_decay)
    local optimizer = tide.optim.AdamW(params, { lr = lr, weight_decay = weight_decay })

    -- Add parameters with special hyperparameters
    -- hps = [getattr(p, "_optim") for p in all_parameters if hasattr(p, "_optim")]
    -- hps = [dict(s) for s in sorted(list(dict.fromkeys(frozenset(hp.items()) for hp in hps)))]
    -- (unique dicts in first-seen order: sorted() of frozensets, none a subset of another,
    -- keeps that order)
    local hps, seen = {}, {}
    for _, p in ipairs(all_parameters) do
        local hp = p._optim
        if hp ~= nil and not seen[hp_key(hp)] then
            seen[hp_key(hp)] = true
            hps[#hps + 1] = hp
        end
    end
    for _, hp in ipairs(hps) do
        -- params = [p for p in all_parameters if getattr(p, "_optim", None) == hp]
        params = {}
        for _, p in ipairs(all_parameters) do
            if p._optim ~= nil and hp_key(p._optim) == hp_key(hp) then params[#params + 1] = p end
        end
        -- optimizer.add_param_group({"params": params, **hp})
        local group = { params = params }
        for key, v in pairs(hp) do group[key] = v end
        optimizer:add_param_group(group)
    end
    return optimizer
end

-- every random parameter, in named_parameters order, from the formula in the header
local function fill(model)
    tide.no_grad(function()
        for k, np_ in ipairs(model:named_parameters()) do
            local name, p = np_[1], np_[2]
            if not (name:match("%.z$") or name:match("%.freq$")) then
                local v = (tide.arange(p:numel()):float() * 0.731 + 1.37 * (k - 1)):sin() * 0.3
                p:copy_(v:view(p.shape))
            end
        end
    end)
end

describe("ported safari standalone_hyena.py (Hyena operator on tide.fft)", function()
    local TOL = 2e-5

    it("builds the positional embedding, the modulation and the parameter list", function()
        tide.manual_seed(0)
        -- layer = HyenaOperator(d_model=8, l_max=16, order=2, filter_order=8)
        local layer = HyenaOperator(8, 16, { order = 2, filter_order = 8 })
        local pe = layer.filter_fn.pos_emb
        assert.same({ 1, 16, 3 }, pe.z.shape)
        assert_close_list(REF.pos_z, summary(pe.z, 6), TOL, "pos_emb.z")
        assert_close_list(REF.t, summary(pe.t, 3), TOL, "pos_emb.t")
        assert_close_list(REF.deltas, summary(layer.filter_fn.modulation.deltas, 8), TOL,
            "modulation.deltas")
        -- t and deltas are buffers (lr=0.0), z a parameter with its _optim
        assert.is_true(pe.z.requires_grad)
        assert.is_false(pe.t.requires_grad)
        local names = {}
        for i, np_ in ipairs(layer:named_parameters()) do names[i] = np_[1] end
        assert.same(REF.names, names)
        assert.same({ lr = 1e-5, weight_decay = 0.0 }, pe.z._optim)
        -- the Sin is one module at positions 1, 3, 5: one freq, with the implicit filter's _optim
        local freq = layer.filter_fn.implicit_filter[2].freq
        assert.same({ lr = 1e-3, weight_decay = 0 }, freq._optim)
        assert.is_nil(layer.filter_fn.bias._optim)
        assert.is_nil(layer.in_proj.weight._optim)
        -- a field a script sets on a tensor stays with that tensor object (not with a view)
        assert.is_nil(freq:view(-1)._optim)
    end)

    it("matches PyTorch's filter, fftconv, operator output and 2 AdamW steps", function()
        tide.manual_seed(0)
        local layer = HyenaOperator(8, 16, { order = 2, filter_order = 8 })
        fill(layer)
        local x = seq(2 * 16 * 8, 0.37, 0.1):view(2, 16, 8)
        local target = 0.5 * seq(2 * 16 * 8, 0.23, 0.7):view(2, 16, 8)

        -- the implicit filter k: [1, L, d_model * (order - 1)]
        local h = layer.filter_fn:filter(16)
        assert.same({ 1, 16, 8 }, h.shape)
        assert_close_list(REF.k, summary(h, 6), TOL, "filter k")

        -- fftconv(u, h[0].permute(1, 0), filter_fn.bias) on u [2, 8, 16]
        local u = seq(2 * 8 * 16, 0.53, 0.2):view(2, 8, 16)
        local yc = fftconv(u, h[1]:permute(2, 1), layer.filter_fn.bias)
        assert.same({ 2, 8, 16 }, yc.shape)
        assert_close_list(REF.fftconv, summary(yc, 6), TOL, "fftconv")

        local y = layer(x)
        assert.same({ 2, 16, 8 }, y.shape)
        assert_close_list(REF.y, summary(y, 6), TOL, "operator output")

        -- optimizer = setup_optimizer(model, lr=0.01, weight_decay=0.05) (standalone_cifar.py)
        local optimizer = setup_optimizer(layer, 0.01, 0.05)
        assert.equal(#REF.groups, #optimizer.param_groups)
        for i, g in ipairs(optimizer.param_groups) do
            assert.same(REF.groups[i], { #g.params, g.lr, g.weight_decay })
        end
        local losses = {}
        for _ = 1, 2 do
            optimizer:zero_grad()
            local loss = F.mse_loss(layer(x), target)
            loss:backward()
            optimizer:step()
            losses[#losses + 1] = loss:item()
            assert_finite(losses[#losses], "loss")
        end
        assert_close_list(REF.losses, losses, TOL, "losses")
        assert.is_true(losses[2] < losses[1])
        for i, np_ in ipairs(layer:named_parameters()) do
            assert_close_list(REF.after[i], summary(np_[2], 1), 1e-4, "after: " .. np_[1])
        end
        tide.no_grad(function()
            assert_close_list({ REF.final }, { F.mse_loss(layer(x), target):item() }, TOL,
                "loss after the steps")
        end)
    end)
end)
