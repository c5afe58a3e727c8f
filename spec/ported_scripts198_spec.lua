-- ported_scripts198_spec.lua — HazyResearch/safari src/models/sequence/hyena.py: fftconv_ref
-- (rfft/irfft with n = 2L, the D skip, gelu off and on, the dropout mask, k_rev), Sin,
-- PositionalEmbedding (the complex exponential z, t), ExponentialModulation, HyenaFilter (the
-- implicit filter MLP, the modulation, filter(L), forward via fftconv_ref) and HyenaOperator's
-- forward (in_proj, the depthwise short Conv1d with padding 2, the 5-D head/block rearranges,
-- the order-2 recurrence, out_proj), with src/utils/train.py's OptimModule.register; ported line
-- for line at tiny sizes (d_model 4, l_max 16, order 2, filter_order 8, emb_dim 3, batch 2,
-- dropout 0) on tide's complex tensors, tide.fft and tide.einops. The Python line stands above
-- each Lua line that differs from it; dims are 1-based.
-- The values were computed with PyTorch 1.13 on the same weights: every parameter, in
-- named_parameters order (k = 0, 1, ...), is 0.3 * sin(0.731 * arange(numel) + 1.37 * k) in its
-- shape, except pos_emb.z and the Sin's freq (they keep their init). The reference script writes
-- the rearranges with reshape / permute (the venv has no einops).
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local fft = tide.fft
local rearrange = tide.einops.rearrange

local ported = require("spec.support.ported")
local assert_close_list = ported.assert_close_list

local REF = {
    pos_z = { 0, 1, 0, 0.0666666701, 1, -3.92699076e-05, 23.9952888, 24.0047112, 20.2713776 },
    deltas = { -3.07011342, -7.16359806, -11.257082, -15.3505669, -36.841362, 36.841362,
        16.3739376 },
    k = { -0.229541823, 0.0714501888, 0.359122425, 0.579848826, -0.187243402, 0.0440758727,
        0.575897634, 2.96601772, 3.19592762 },
    conv = { -0.0162475463, -0.091737248, -0.233069301, -0.384673655, -0.491247773, -0.51236558,
        -0.185214594, 57.7147102, 57.7089233 },
    conv_gelu = { -0.00801846571, -0.0425159372, -0.0950582325, -0.134727955, -0.153085351,
        -0.15586035, 13.0472536, 29.1157055, 30.7129421 },
    conv_mask = { -0.00801846571, -0.0425159372, -0.0950582325, -0.134727955, -0.153085351,
        -0.15586035, 21.6515522, 43.2677155, 50.8402176 },
    conv_krev = { -0.392073601, -0.396613598, -0.475984991, -0.574567139, -0.637681067,
        -0.625455856, -1.10634375, 62.860817, 62.8435287 },
    y = { 0.29120177, 0.261539698, 0.0888436064, -0.120447487, 0.292541653, 0.260500818,
        16.6693153, 24.2354374, 18.7066345 },
    loss = 0.166285813,
    -- the gradients times 1e4
    x_grad = { 0.0688722059, 0.0323187076, -0.0207492523, -0.0632145852, -0.878006935,
        12.6199684, 12.6211309 },
    in_proj_w_grad = { 0.0592550822, 0.0597717203, 0.0521985479, 0.0375605561, -6.53886509,
        28.976572, 29.9051952 },
    freq_grad = { -1.31323028, -3.66692829, -1.298365, -0.435488105, -4.86318207, 9.3361969,
        8.90966034 },
    z_grad = { 0.0432098284, -0.0691806525, -0.146220267, 0.0322714634, -0.50349021,
        0.720341682, 1.00802195 },
    -- PyTorch's, with tide's 1-based Sequential positions (implicit_filter.0 is .1 here)
    names = { "out_proj.weight", "out_proj.bias", "in_proj.weight", "in_proj.bias",
        "short_filter.weight", "short_filter.bias", "filter_fn.bias", "filter_fn.pos_emb.z",
        "filter_fn.implicit_filter.1.weight", "filter_fn.implicit_filter.1.bias",
        "filter_fn.implicit_filter.2.freq", "filter_fn.implicit_filter.3.weight",
        "filter_fn.implicit_filter.3.bias", "filter_fn.implicit_filter.5.weight",
        "filter_fn.implicit_filter.5.bias", "filter_fn.implicit_filter.7.weight" },
    -- each parameter after one AdamW step: first value, sum, abs sum, abs sum about the mean
    after = {
        { -0.00999872293, 0.273981094, 3.06206083, 3.06206083 },
        { 0.283943027, 0.501419127, 0.726821721, 0.564037561 },
        { 0.107270561, -0.749961197, 9.19326115, 9.13076401 },
        { -0.256980509, -0.804566145, 2.36170197, 2.22760773 },
        { -0.225836471, -0.37546891, 6.74221802, 6.7213583 },
        { 0.17105481, 0.848732114, 2.54432988, 2.30413795 },
        { 0.290088415, 0.110149458, 0.723753393, 0.723753333 },
        { -0.0099769095, 24.0482788, 24.1342716, 20.3320293 },
        { -0.289784729, 0.25449568, 4.74465466, 4.72498894 },
        { -0.0602460504, 0.132403076, 1.53587437, 1.53587425 },
        { 1.00989926, 8.01921177, 8.01921177, 0.0749718547 },
        { 0.188649312, -0.301324606, 12.2173138, 12.2173138 },
        { -0.210495517, 0.0268906504, 1.6403861, 1.64038599 },
        { -0.268627316, -0.00354427099, 12.3210411, 12.3209305 },
        { 0.107328959, 0.0452883244, 1.68609262, 1.68609262 },
        { 0.287519246, -0.207482308, 6.32602119, 6.31305361 },
    },
    final = 0.162226602,
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

---------------------------------------------------------------------------------------------
-- src/models/sequence/hyena.py
---------------------------------------------------------------------------------------------
-- reference convolution with residual connection
-- def fftconv_ref(u, k, D, dropout_mask, gelu=True, k_rev=None):
local function fftconv_ref(u, k, D, dropout_mask, gelu, k_rev)
    if gelu == nil then gelu = true end
    -- seqlen = u.shape[-1]
    local seqlen = u:size(-1)
    local fft_size = 2 * seqlen
    -- k_f = torch.fft.rfft(k, n=fft_size) / fft_size
    local k_f = fft.rfft(k, { n = fft_size }) / fft_size
    -- if k_rev is not None:
    if k_rev ~= nil then
        -- k_rev_f = torch.fft.rfft(k_rev, n=fft_size) / fft_size
        local k_rev_f = fft.rfft(k_rev, { n = fft_size }) / fft_size
        -- k_f = k_f + k_rev_f.conj()
        k_f = k_f + k_rev_f:conj()
    end
    -- u_f = torch.fft.rfft(u.to(dtype=k.dtype), n=fft_size)
    local u_f = fft.rfft(u:to(k.dtype), { n = fft_size })

    -- if len(u.shape) > 3: k_f = k_f.unsqueeze(1)
    if u.ndim > 3 then k_f = k_f:unsqueeze(2) end

    -- y = torch.fft.irfft(u_f * k_f, n=fft_size, norm='forward')[..., :seqlen]
    local y = fft.irfft(u_f * k_f, { n = fft_size, norm = "forward" })[{ "...", { 1, seqlen } }]

    -- out = y + u * D.unsqueeze(-1)
    local out = y + u * D:unsqueeze(-1)
    if gelu then
        out = F.gelu(out)
    end
    -- if dropout_mask is not None:
    if dropout_mask ~= nil then
        -- return (out * rearrange(dropout_mask, 'b H -> b H 1')).to(dtype=u.dtype)
        return (out * rearrange(dropout_mask, "b H -> b H 1")):to(u.dtype)
    else
        -- return out.to(dtype=u.dtype)
        return out:to(u.dtype)
    end
end

-- class OptimModule(nn.Module):  (src/utils/train.py)
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
    self.freq = train_freq and nn.Parameter(w * tide.ones(1, dim)) or w * tide.ones(1, dim)
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
    local t = tide.linspace(0, 1, self.seq_len)[{ tide.newaxis, {}, tide.newaxis }]

    local bands
    if emb_dim > 1 then
        -- bands = (emb_dim - 1) // 2
        bands = math.floor((emb_dim - 1) / 2)
    end
    -- To compute the right embeddings we use the "proper" linspace
    -- t_rescaled = torch.linspace(0, seq_len - 1, seq_len)[None, :, None]
    local t_rescaled = tide.linspace(0, seq_len - 1, seq_len)[{ tide.newaxis, {}, tide.newaxis }]
    -- w = 2 * math.pi * t_rescaled / seq_len # 1, L, 1
    local w = 2 * math.pi * t_rescaled / seq_len

    -- f = torch.linspace(1e-4, bands - 1, bands)[None, None]
    local f = tide.linspace(1e-4, bands - 1, bands)[{ tide.newaxis, tide.newaxis }]
    -- z = torch.exp(-1j * f * w)
    -- GAP: Lua has no complex literal: 1j is a 0-d complex tensor (docs/API.md's Complex tensors)
    local f32 = { dtype = "float32" }
    local J = tide.complex(tide.tensor(0, f32), tide.tensor(1, f32))
    local z = tide.exp(-J * f * w)
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
    local deltas = tide.linspace(min_decay, max_decay, d_model)[{ tide.newaxis, tide.newaxis }]
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
    -- assert emb_dim % 2 != 0 and emb_dim >= 3, "emb_dim must be odd and greater or equal to 3
    --     (time, sine and cosine)"
    assert(emb_dim % 2 ~= 0 and emb_dim >= 3,
        "emb_dim must be odd and greater or equal to 3 (time, sine and cosine)")
    self.seq_len = seq_len

    self.pos_emb = PositionalEmbedding(emb_dim, seq_len, lr_pos_emb)

    -- uses a variable number of inner linear layers
    self.implicit_filter = nn.Sequential(
        nn.Linear(emb_dim, order),
        act
    )
    -- for i in range(num_inner_mlps):
    for _ = 1, num_inner_mlps do
        self.implicit_filter:append(nn.Linear(order, order))
        self.implicit_filter:append(act)
    end
    -- final linear layer
    -- self.implicit_filter.append(nn.Linear(order, d_model, bias=False))
    self.implicit_filter:append(nn.Linear(order, d_model, false))

    -- self.modulation = ExponentialModulation(d_model, **kwargs)
    self.modulation = ExponentialModulation(d_model, kw)

    -- self.normalized = normalized
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

    h = self.modulation(t, h)

    -- if self.normalized: h = h / torch.norm(h, dim=-1, p=1, keepdim=True)
    if self.normalized then h = h / tide.norm(h, { p = 1, dim = -1, keepdim = true }) end

    return h
end

-- def forward(self, x, L, k=None, bias=None, *args, **kwargs):
function HyenaFilter:forward(x, L, k, bias)
    -- if k is None: k = self.filter(L)
    if k == nil then k = self:filter(L) end

    -- Ensure compatibility with filters that return a tuple
    -- k = k[0] if type(k) is tuple else k  (a Lua function returns one tensor, not a tuple)
    -- if bias is None: bias = self.bias
    if bias == nil then bias = self.bias end
    -- bias = bias if self.use_bias else 0 * bias
    bias = self.use_bias and bias or 0 * bias

    -- if self.fused_fft_conv: ... fftconv_func (a CUDA extension)
    -- GAP: fused_fft_conv (safari's fftconv CUDA kernel) is not ported; fftconv_ref is its value
    assert(not self.fused_fft_conv, "fused_fft_conv needs safari's CUDA extension")
    -- y = fftconv_ref(x, k, bias, dropout_mask=None, gelu=False)
    local y = fftconv_ref(x, k, bias, nil, false)

    return y
end

-- class HyenaOperator(nn.Module):
local HyenaOperator = nn.Module:extend("HyenaOperator")
-- def __init__(self, d_model, l_max, order=2, filter_order=64, num_heads=1, inner_factor=1,
--              num_blocks=1, fused_bias_fc=False, outer_mixing=False, dropout=0.0,
--              filter_dropout=0.0, filter_cls='hyena-filter', post_order_ffn=False,
--              jit_filter=False, short_filter_order=3, activation="id", return_state=False,
--              **filter_args):
function HyenaOperator:init(d_model, l_max, kw)
    kw = kw or {}
    nn.Module.init(self)
    local order, filter_order = kw.order or 2, kw.filter_order or 64
    local num_heads, inner_factor = kw.num_heads or 1, kw.inner_factor or 1
    local num_blocks, dropout = kw.num_blocks or 1, kw.dropout or 0.0
    -- assert d_model % num_heads == 0, f'Model dimension {d_model} must be divisible by num
    --     heads {num_heads}'
    assert(d_model % num_heads == 0, string.format(
        "Model dimension %d must be divisible by num heads %d", d_model, num_heads))
    assert(l_max % num_blocks == 0, string.format(
        "Maximum signal length %d must be divisible by block dimension %d", l_max, num_blocks))
    -- block_dim = l_max // num_blocks
    local block_dim = math.floor(l_max / num_blocks)
    -- head_dim = d_model // num_heads
    local head_dim = math.floor(d_model / num_heads)

    -- auto_assign_attrs(self, d_model=d_model, order=order, ...)
    self.d_model, self.order, self.l_max, self.num_heads = d_model, order, l_max, num_heads
    self.inner_factor, self.block_dim, self.head_dim = inner_factor, block_dim, head_dim
    self.filter_order, self.post_order_ffn = filter_order, kw.post_order_ffn or false
    self.short_filter_order, self.num_blocks = kw.short_filter_order or 3, num_blocks
    self.filter_dropout, self.outer_mixing = kw.filter_dropout or 0.0, kw.outer_mixing or false
    self.return_state = kw.return_state or false
    -- self.activation = Activation(activation)  (src/models/nn/components.py: "id" is Identity)
    self.activation = nn.Identity()
    self.dropout = nn.Dropout(dropout)
    -- self.setup_projections(fused_bias_fc, inner_factor)
    self:setup_projections(inner_factor)
    -- self.setup_filters(filter_cls, filter_args)
    self:setup_filters(kw.filter_args or {})
end

-- def setup_projections(self, fused_bias_fc, inner_factor):
function HyenaOperator:setup_projections(inner_factor)
    -- "Initializes input and output projections (over the width dimension)"
    -- linear_cls = nn.Linear if not fused_bias_fc else FusedDense  (FusedDense: flash_attn's)
    local linear_cls = nn.Linear
    self.out_proj = linear_cls(self.d_model * inner_factor, self.d_model)
    self.in_proj = linear_cls(self.d_model, (self.order + 1) * self.d_model)
    -- GAP: post_order_ffn (ord_proj_w, mul_sum) is not ported: False in the default config
    assert(not self.post_order_ffn, "post_order_ffn is not ported")
end

-- def setup_filters(self, filter_cls, filter_args):
function HyenaOperator:setup_filters(filter_args)
    -- "Initializes the explicit and implicit filters"
    -- assert self.order >= 2, f'Order must be at least 2, (got {self.order})'
    assert(self.order >= 2, string.format("Order must be at least 2, (got %d)", self.order))
    local total_width = self.d_model * self.inner_factor * (self.order + 1)

    -- self.short_filter = nn.Conv1d(in_channels=total_width, out_channels=total_width,
    --     kernel_size=self.short_filter_order, groups=total_width,
    --     padding=self.short_filter_order - 1)
    self.short_filter = nn.Conv1d(total_width, total_width, self.short_filter_order,
        { groups = total_width, padding = self.short_filter_order - 1 })

    -- filter_cls = instantiate(registry.layer, filter_cls, partial=True)  ('hyena-filter')
    local filter_cls = HyenaFilter

    -- self.filter_fn = filter_cls(self.head_dim * self.inner_factor * (self.order - 1),
    --     order=self.filter_order, seq_len=self.l_max, channels=1,
    --     dropout=self.filter_dropout, **filter_args)
    local args = { order = self.filter_order, seq_len = self.l_max, channels = 1,
        dropout = self.filter_dropout }
    for key, v in pairs(filter_args) do args[key] = v end
    self.filter_fn = filter_cls(self.head_dim * self.inner_factor * (self.order - 1), args)
end

-- def forward(self, u, *args, **kwargs):
function HyenaOperator:forward(u)
    -- l = u.size(-2)
    local l = u:size(-2)
    -- l_filter = min(l, self.l_max)
    local l_filter = math.min(l, self.l_max)
    u = self.in_proj(u)
    u = rearrange(u, "b l d -> b d l")

    -- uc = self.short_filter(u)[...,:l_filter]
    local uc = self.short_filter(u)[{ "...", { 1, l_filter } }]

    -- uc = rearrange(uc, 'b (ho v) (z l) -> b ho v z l', z=self.num_blocks, ho=self.num_heads,
    --     v=self.head_dim * (self.order + 1))
    uc = rearrange(uc, "b (ho v) (z l) -> b ho v z l", { z = self.num_blocks,
        ho = self.num_heads, v = self.head_dim * (self.order + 1) })

    -- *x, v = uc.split(self.d_model, dim=2)
    local x = uc:split(self.d_model, 3)
    local v = table.remove(x)
    -- k = self.filter_fn.filter(l_filter)
    local k = self.filter_fn:filter(l_filter)

    -- `c` is always 1 by default
    -- k = rearrange(k, 'c l (v o) -> c o v l', v=self.head_dim, o=self.order - 1)[0]
    k = rearrange(k, "c l (v o) -> c o v l", { v = self.head_dim, o = self.order - 1 })[1]

    -- bias = rearrange(self.filter_fn.bias, '(v o) -> o v', v=self.head_dim, o=self.order - 1)
    local bias = rearrange(self.filter_fn.bias, "(v o) -> o v",
        { v = self.head_dim, o = self.order - 1 })

    -- for o, x_i in enumerate(reversed(x[1:])):  (o 0-based: k[o] is k[o + 1])
    for o = 0, #x - 2 do
        local x_i = x[#x - o]
        if self.outer_mixing then
            -- v = rearrange(v, 'b h v z l -> b h 1 v z l')
            v = rearrange(v, "b h v z l -> b h 1 v z l")
            -- v = self.dropout(v * rearrange(x_i, 'b h v z l -> b h v 1 z l'))
            v = self.dropout(v * rearrange(x_i, "b h v z l -> b h v 1 z l"))
            -- v = v.sum(dim=2)
            v = v:sum(3)
        else
            v = self.dropout(v * x_i)
        end

        -- the bias term is broadcasted. Last dimension (l) is handled by fftconv
        -- v = self.filter_fn(v, l_filter, k=k[o], bias=bias[o, None, :, None])
        v = self.filter_fn(v, l_filter, k[o + 1],
            bias[{ o + 1, tide.newaxis, {}, tide.newaxis }])
    end

    -- y = self.activation(rearrange(v * x[0], 'b h v z l -> b (z l) (h v)', z=self.num_blocks,
    --     h=self.num_heads))
    local y = self.activation(rearrange(v * x[1], "b h v z l -> b (z l) (h v)",
        { z = self.num_blocks, h = self.num_heads }))
    y = self.out_proj(y)

    if self.return_state then
        return y, nil
    end
    return y
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

describe("ported safari src/models/sequence/hyena.py (HyenaOperator on tide.fft)", function()
    local TOL = 2e-5

    local function build()
        tide.manual_seed(0)
        -- layer = HyenaOperator(d_model=4, l_max=16, order=2, filter_order=8, emb_dim=3)
        local layer = HyenaOperator(4, 16, { order = 2, filter_order = 8,
            filter_args = { emb_dim = 3 } })
        fill(layer)
        return layer
    end

    it("builds z, t, deltas, the parameter list and the filter k", function()
        local layer = build()
        local pe = layer.filter_fn.pos_emb
        assert.same({ 1, 16, 3 }, pe.z.shape)
        assert.same({ 1, 16, 1 }, pe.t.shape)
        assert_close_list(REF.pos_z, summary(pe.z, 6), TOL, "pos_emb.z")
        assert_close_list(REF.deltas, summary(layer.filter_fn.modulation.deltas, 4), TOL,
            "modulation.deltas")
        -- t and deltas are buffers (lr=0.0), z a parameter with its _optim
        assert.is_true(pe.z.requires_grad)
        assert.is_false(pe.t.requires_grad)
        assert.same({ lr = 1e-5, weight_decay = 0.0 }, pe.z._optim)
        assert.same({ lr = 1e-3, weight_decay = 0 }, layer.filter_fn.implicit_filter[2].freq._optim)
        local names = {}
        for i, np_ in ipairs(layer:named_parameters()) do names[i] = np_[1] end
        assert.same(REF.names, names)

        -- the implicit filter k: [1, L, head_dim * (order - 1)]
        local k = layer.filter_fn:filter(16)
        assert.same({ 1, 16, 4 }, k.shape)
        assert_close_list(REF.k, summary(k, 6), TOL, "filter k")
    end)

    it("fftconv_ref matches PyTorch: D skip, gelu off and on, dropout mask, k_rev", function()
        local layer = build()
        local kk = layer.filter_fn:filter(16)[1]:permute(2, 1)
        local u = seq(2 * 4 * 16, 0.53, 0.2):view(2, 4, 16)
        local D = 0.5 * seq(4, 0.9, 0.3)
        local y = fftconv_ref(u, kk, D, nil, false)
        assert.same({ 2, 4, 16 }, y.shape)
        assert_close_list(REF.conv, summary(y, 6), TOL, "fftconv_ref")
        assert_close_list(REF.conv_gelu, summary(fftconv_ref(u, kk, D, nil, true), 6), TOL,
            "fftconv_ref gelu")
        local mask = tide.tensor({ { 1, 0, 2, 2 }, { 0, 2, 2, 1 } }, { dtype = "float32" })
        assert_close_list(REF.conv_mask, summary(fftconv_ref(u, kk, D, mask), 6), TOL,
            "fftconv_ref dropout_mask")
        assert_close_list(REF.conv_krev,
            summary(fftconv_ref(u, kk, D, nil, false, kk:flip(-1)), 6), TOL, "fftconv_ref k_rev")
    end)

    it("matches PyTorch's output, loss, gradients and one AdamW step", function()
        local layer = build()
        local x = seq(2 * 16 * 4, 0.37, 0.1):view(2, 16, 4):requires_grad_()
        local target = 0.5 * seq(2 * 16 * 4, 0.23, 0.7):view(2, 16, 4)
        local y = layer(x)
        assert.same({ 2, 16, 4 }, y.shape)
        assert_close_list(REF.y, summary(y, 6), TOL, "operator output")
        local loss = F.mse_loss(y, target)
        assert_close_list({ REF.loss }, { loss:item() }, TOL, "loss")
        loss:backward()
        local S = function(g) return g * 1e4 end
        assert_close_list(REF.x_grad, summary(S(x.grad), 4), 1e-4, "x.grad")
        assert_close_list(REF.in_proj_w_grad, summary(S(layer.in_proj.weight.grad), 4), 1e-4,
            "in_proj.weight.grad")
        local freq = layer.filter_fn.implicit_filter[2].freq
        assert_close_list(REF.freq_grad, summary(S(freq.grad), 4), 1e-4, "freq.grad")
        assert_close_list(REF.z_grad, summary(S(layer.filter_fn.pos_emb.z.grad), 4), 1e-4,
            "pos_emb.z.grad")

        -- opt = torch.optim.AdamW(layer.parameters(), lr=1e-2, weight_decay=0.01)
        local opt = tide.optim.AdamW(layer:parameters(), { lr = 1e-2, weight_decay = 0.01 })
        opt:step()
        for i, np_ in ipairs(layer:named_parameters()) do
            assert_close_list(REF.after[i], summary(np_[2], 1), 1e-4, "after: " .. np_[1])
        end
        tide.no_grad(function()
            local final = F.mse_loss(layer(x), target):item()
            assert_close_list({ REF.final }, { final }, TOL, "loss after the step")
            assert.is_true(final < loss:item())
        end)
    end)
end)
