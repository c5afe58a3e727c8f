-- ported_scripts97_spec.lua — tommyip/mamba2-minimal's mamba2.py (Mamba2Config, InferenceCache,
-- Mamba2LMHeadModel, Mamba2 with its chunked ssd / segsum and its step() decode, gated RMSNorm)
-- and Jamie-Stirling/RetNet's src/retention.py (SimpleRetention, MultiScaleRetention),
-- src/xpos_relative_position.py (XPOS) and src/retnet.py (RetNet), ported line for line at tiny
-- sizes. The Python line stands above each Lua line that differs from it. Dims are 1-based.
-- Reference values: PyTorch 1.13 with parameter i (named_parameters order, 1-based here) set to
-- 0.3 * sin(0.7 * k + 1.3 * i) over its flat 0-based index k.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local einops = tide.einops
local rearrange, repeat_ = einops.rearrange, einops.repeat_
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite, assert_close_list = ported.assert_finite, ported.assert_close_list

-- the formula above, over named_parameters (whose names are checked against PyTorch's)
local function init(model, want_names)
    local names = {}
    tide.no_grad(function()
        for i, np in ipairs(model:named_parameters()) do
            local p = np[2]
            names[i] = np[1]
            local k = tide.arange(0, p:numel(), { dtype = "float64" })
            p:copy_((0.3 * tide.sin(0.7 * k + 1.3 * i)):view(unpack(p.shape)))
        end
    end)
    assert.are.same(want_names, names)
end

local function flat(t)
    return t:contiguous():view(-1):tolist()
end

---------------------------------------------------------------------------------------------
-- 1. tommyip/mamba2-minimal mamba2.py
---------------------------------------------------------------------------------------------
local function silu(x)
    -- return x * F.sigmoid(x)
    return x * tide.sigmoid(x)
end

-- @dataclass class Mamba2Config: (fields by name; __post_init__ derives the rest)
local function Mamba2Config(c)
    local self = { d_model = c.d_model, n_layer = c.n_layer or 24, d_state = c.d_state or 128,
        d_conv = c.d_conv or 4, expand = c.expand or 2, headdim = c.headdim or 64,
        chunk_size = c.chunk_size or 64, vocab_size = c.vocab_size or 50277,
        pad_vocab_size_multiple = c.pad_vocab_size_multiple or 16 }
    self.d_inner = self.expand * self.d_model
    assert(self.d_inner % self.headdim == 0)
    -- self.nheads = self.d_inner // self.headdim
    self.nheads = math.floor(self.d_inner / self.headdim)
    if self.vocab_size % self.pad_vocab_size_multiple ~= 0 then
        self.vocab_size = self.vocab_size
            + (self.pad_vocab_size_multiple - self.vocab_size % self.pad_vocab_size_multiple)
    end
    return self
end

-- class InferenceCache(NamedTuple): conv_state, ssm_state
local InferenceCache = {}
function InferenceCache.alloc(batch_size, args)
    return {
        conv_state = tide.zeros(batch_size, args.d_inner + 2 * args.d_state, args.d_conv),
        ssm_state = tide.zeros(batch_size, args.nheads, args.headdim, args.d_state),
    }
end

-- class RMSNorm(nn.Module):
local RMSNorm = nn.Module:extend("RMSNorm")
function RMSNorm:init(d, eps)
    self.eps = eps or 1e-5
    self.weight = nn.Parameter(tide.ones(d))
end

function RMSNorm:forward(x, z)
    if z ~= nil then
        x = x * silu(z)
    end
    -- return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight
    return x * tide.rsqrt(x:pow(2):mean(-1, true) + self.eps) * self.weight
end

local function segsum(x)
    -- T = x.size(-1)
    local T = x:size(-1)
    -- x = repeat(x, "... d -> ... d e", e=T)
    x = repeat_(x, "... d -> ... d e", { e = T })
    -- mask = torch.tril(torch.ones(T, T, dtype=torch.bool, device=device), diagonal=-1)
    local mask = tide.tril(tide.ones(T, T, { dtype = "bool" }), -1)
    -- x = x.masked_fill(~mask, 0)
    x = x:masked_fill(mask:logical_not(), 0)
    -- x_segsum = torch.cumsum(x, dim=-2)
    local x_segsum = tide.cumsum(x, -2)
    mask = tide.tril(tide.ones(T, T, { dtype = "bool" }), 0)
    -- x_segsum = x_segsum.masked_fill(~mask, -torch.inf)
    x_segsum = x_segsum:masked_fill(mask:logical_not(), -math.huge)
    return x_segsum
end

local function ssd(x, A, B, C, chunk_size, initial_states)
    -- assert x.shape[1] % chunk_size == 0
    assert(x.shape[2] % chunk_size == 0)
    -- x, A, B, C = [rearrange(m, "b (c l) ... -> b c l ...", l=chunk_size) for m in ...]
    local m4 = { x, A, B, C }
    for i = 1, 4 do
        m4[i] = rearrange(m4[i], "b (c l) ... -> b c l ...", { l = chunk_size })
    end
    x, A, B, C = unpack(m4)
    A = rearrange(A, "b c l h -> b h c l")
    local A_cumsum = tide.cumsum(A, -1)
    -- 1. Compute the output for each intra-chunk (diagonal blocks)
    local L = tide.exp(segsum(A))
    local Y_diag = tide.einsum("bclhn, bcshn, bhcls, bcshp -> bclhp", C, B, L, x)
    -- 2. Compute the state for each intra-chunk
    -- decay_states = torch.exp(A_cumsum[:, :, :, -1:] - A_cumsum)
    local decay_states = tide.exp(A_cumsum[{ {}, {}, {}, { -1, -1 } }] - A_cumsum)
    local states = tide.einsum("bclhn, bhcl, bclhp -> bchpn", B, decay_states, x)
    -- 3. Compute the inter-chunk SSM recurrence
    if initial_states == nil then
        -- initial_states = torch.zeros_like(states[:, :1])
        initial_states = tide.zeros_like(states[{ {}, { 1, 1 } }])
    end
    -- states = torch.cat([initial_states, states], dim=1)
    states = tide.cat({ initial_states, states }, 2)
    -- decay_chunk = torch.exp(segsum(F.pad(A_cumsum[:, :, :, -1], (1, 0)), device=device))
    local decay_chunk = tide.exp(segsum(F.pad(A_cumsum[{ {}, {}, {}, -1 }], { 1, 0 })))
    local new_states = tide.einsum("bhzc, bchpn -> bzhpn", decay_chunk, states)
    -- states, final_state = new_states[:, :-1], new_states[:, -1]
    local final_state
    states, final_state = new_states[{ {}, { 1, -2 } }], new_states[{ {}, -1 }]
    -- 4. Compute state -> output conversion per chunk
    local state_decay_out = tide.exp(A_cumsum)
    local Y_off = tide.einsum("bclhn, bchpn, bhcl -> bclhp", C, states, state_decay_out)
    local Y = rearrange(Y_diag + Y_off, "b c l h p -> b (c l) h p")
    return Y, final_state
end

-- class Mamba2(nn.Module):
local Mamba2 = nn.Module:extend("Mamba2")
function Mamba2:init(args)
    self.args = args
    -- Order: (z, x, B, C, dt)
    local d_in_proj = 2 * args.d_inner + 2 * args.d_state + args.nheads
    -- self.in_proj = nn.Linear(args.d_model, d_in_proj, bias=False, device=device)
    self.in_proj = nn.Linear(args.d_model, d_in_proj, { bias = false })
    local conv_dim = args.d_inner + 2 * args.d_state
    -- self.conv1d = nn.Conv1d(in_channels=conv_dim, out_channels=conv_dim,
    --     kernel_size=args.d_conv, groups=conv_dim, padding=args.d_conv - 1)
    self.conv1d = nn.Conv1d({ in_channels = conv_dim, out_channels = conv_dim,
        kernel_size = args.d_conv, groups = conv_dim, padding = args.d_conv - 1 })
    self.dt_bias = nn.Parameter(tide.empty(args.nheads))
    self.A_log = nn.Parameter(tide.empty(args.nheads))
    self.D = nn.Parameter(tide.empty(args.nheads))
    self.norm = RMSNorm(args.d_inner)
    self.out_proj = nn.Linear(args.d_inner, args.d_model, { bias = false })
end

function Mamba2:forward(u, h)
    if h then
        return self:step(u, h)
    end
    local args = self.args
    -- A = -torch.exp(self.A_log)  # (nheads,)
    local A = -tide.exp(self.A_log)
    local zxbcdt = self.in_proj(u) -- (batch, seqlen, d_in_proj)
    -- z, xBC, dt = torch.split(zxbcdt, [d_inner, d_inner + 2 * d_state, nheads], dim=-1)
    local z, xBC, dt = unpack(tide.split(zxbcdt,
        { args.d_inner, args.d_inner + 2 * args.d_state, args.nheads }, -1))
    dt = F.softplus(dt + self.dt_bias) -- (batch, seqlen, nheads)
    -- Pad or truncate xBC seqlen to d_conv
    -- conv_state = F.pad(rearrange(xBC, "b l d -> b d l"), (self.args.d_conv - u.shape[1], 0))
    local conv_state = F.pad(rearrange(xBC, "b l d -> b d l"), { args.d_conv - u.shape[2], 0 })
    -- xBC = silu(self.conv1d(xBC.transpose(1, 2)).transpose(1, 2)[:, : u.shape[1], :])
    xBC = silu(self.conv1d(xBC:transpose(2, 3)):transpose(2, 3)[{ {}, { 1, u.shape[2] }, {} }])
    local x, B, C = unpack(tide.split(xBC, { args.d_inner, args.d_state, args.d_state }, -1))
    -- x = rearrange(x, "b l (h p) -> b l h p", p=self.args.headdim)
    x = rearrange(x, "b l (h p) -> b l h p", { p = args.headdim })
    -- y, ssm_state = ssd(x * dt.unsqueeze(-1), A * dt, rearrange(B, "b l n -> b l 1 n"),
    --     rearrange(C, "b l n -> b l 1 n"), self.args.chunk_size, device=self.device)
    local y, ssm_state = ssd(x * dt:unsqueeze(-1), A * dt, rearrange(B, "b l n -> b l 1 n"),
        rearrange(C, "b l n -> b l 1 n"), args.chunk_size)
    y = y + x * self.D:unsqueeze(-1)
    y = rearrange(y, "b l h p -> b l (h p)")
    y = self.norm(y, z)
    y = self.out_proj(y)
    -- h = InferenceCache(conv_state, ssm_state)
    h = { conv_state = conv_state, ssm_state = ssm_state }
    return y, h
end

function Mamba2:step(u, h)
    local args = self.args
    -- assert u.shape[1] == 1, "Only one token can be decoded per inference step"
    assert(u.shape[2] == 1, "Only one token can be decoded per inference step")
    -- zxbcdt = self.in_proj(u.squeeze(1))  # (batch, d_in_proj)
    local zxbcdt = self.in_proj(u:squeeze(2))
    local z, xBC, dt = unpack(tide.split(zxbcdt,
        { args.d_inner, args.d_inner + 2 * args.d_state, args.nheads }, -1))
    -- Advance convolution input
    -- h.conv_state.copy_(torch.roll(h.conv_state, shifts=-1, dims=-1))
    h.conv_state:copy_(tide.roll(h.conv_state, -1, -1))
    -- h.conv_state[:, :, -1] = xBC
    h.conv_state[{ {}, {}, -1 }] = xBC
    -- Convolution step
    -- xBC = torch.sum(h.conv_state * rearrange(self.conv1d.weight, "d 1 w -> d w"), dim=-1)
    xBC = tide.sum(h.conv_state * rearrange(self.conv1d.weight, "d 1 w -> d w"), -1)
    -- xBC += self.conv1d.bias
    xBC:add_(self.conv1d.bias)
    xBC = silu(xBC)
    local x, B, C = unpack(tide.split(xBC, { args.d_inner, args.d_state, args.d_state }, -1))
    local A = -tide.exp(self.A_log) -- (nheads,)
    -- SSM step
    dt = F.softplus(dt + self.dt_bias) -- (batch, nheads)
    local dA = tide.exp(dt * A) -- (batch, nheads)
    x = rearrange(x, "b (h p) -> b h p", { p = args.headdim })
    local dBx = tide.einsum("bh, bn, bhp -> bhpn", dt, B, x)
    -- h.ssm_state.copy_(h.ssm_state * rearrange(dA, "b h -> b h 1 1") + dBx)
    h.ssm_state:copy_(h.ssm_state * rearrange(dA, "b h -> b h 1 1") + dBx)
    local y = tide.einsum("bhpn, bn -> bhp", h.ssm_state, C)
    y = y + rearrange(self.D, "h -> h 1") * x
    y = rearrange(y, "b h p -> b (h p)")
    y = self.norm(y, z)
    y = self.out_proj(y)
    -- return y.unsqueeze(1), h
    return y:unsqueeze(2), h
end

-- class Mamba2LMHeadModel(nn.Module):
local Mamba2LMHeadModel = nn.Module:extend("Mamba2LMHeadModel")
function Mamba2LMHeadModel:init(args)
    self.args = args
    local layers = {}
    for i = 1, args.n_layer do
        -- nn.ModuleDict(dict(mixer=Mamba2(args), norm=RMSNorm(args.d_model)))
        layers[i] = nn.ModuleDict({ { "mixer", Mamba2(args) }, { "norm", RMSNorm(args.d_model) } })
    end
    -- self.backbone = nn.ModuleDict(dict(embedding=..., layers=..., norm_f=...))
    self.backbone = nn.ModuleDict({
        { "embedding", nn.Embedding(args.vocab_size, args.d_model) },
        { "layers", nn.ModuleList(layers) },
        { "norm_f", RMSNorm(args.d_model) },
    })
    -- self.lm_head = nn.Linear(args.d_model, args.vocab_size, bias=False, device=device)
    self.lm_head = nn.Linear(args.d_model, args.vocab_size, { bias = false })
    self.lm_head.weight = self.backbone.embedding.weight
end

function Mamba2LMHeadModel:forward(input_ids, h)
    -- seqlen = input_ids.shape[1]
    local seqlen = input_ids.shape[2]
    if h == nil then
        -- h = [None for _ in range(self.args.n_layer)]
        h = {}
    end
    local x = self.backbone.embedding(input_ids)
    -- for i, layer in enumerate(self.backbone.layers):
    for i = 1, self.args.n_layer do
        local layer = self.backbone.layers[i]
        local y
        -- y, h[i] = layer.mixer(layer.norm(x), h[i])
        y, h[i] = layer.mixer(layer.norm(x), h[i])
        x = y + x
    end
    x = self.backbone.norm_f(x)
    local logits = self.lm_head(x)
    -- return logits[:, :seqlen], cast(list[InferenceCache], h)
    return logits[{ {}, { 1, seqlen } }], h
end

-- PyTorch's names, but for ModuleList children named "1".."n" (tide's 1-based positions)
local MAMBA_NAMES = { "backbone.embedding.weight" }
for l = 1, 2 do
    for _, n in ipairs({ "mixer.dt_bias", "mixer.A_log", "mixer.D", "mixer.in_proj.weight",
        "mixer.conv1d.weight", "mixer.conv1d.bias", "mixer.norm.weight", "mixer.out_proj.weight",
        "norm.weight" }) do
        MAMBA_NAMES[#MAMBA_NAMES + 1] = "backbone.layers." .. l .. "." .. n
    end
end
MAMBA_NAMES[#MAMBA_NAMES + 1] = "backbone.norm_f.weight"

describe("tommyip/mamba2-minimal mamba2.py", function()
    it("Mamba2Config derives d_inner, nheads and the padded vocab", function()
        local c = Mamba2Config({ d_model = 8, headdim = 4, vocab_size = 10 })
        assert.are.same({ 16, 4, 16 }, { c.d_inner, c.nheads, c.vocab_size })
        assert.are.equal(50288, Mamba2Config({ d_model = 768 }).vocab_size)
    end)

    it("chunked forward equals the step() decode and PyTorch; Adam trains it", function()
        local args = Mamba2Config({ d_model = 8, n_layer = 2, d_state = 4, headdim = 4,
            chunk_size = 4, vocab_size = 16 })
        local m = Mamba2LMHeadModel(args)
        init(m, MAMBA_NAMES)
        m:eval()
        -- ids = (torch.arange(16) * 5 + 3).remainder(16).view(2, 8)  (+1: 1-based tokens)
        local ids = (tide.arange(0, 16) * 5 + 3):remainder(16):view(2, 8) + 1
        local logits, h, step, hs
        tide.no_grad(function()
            logits, h = m(ids)
            -- hs = [InferenceCache.alloc(2, args) for _ in range(2)]
            hs = { InferenceCache.alloc(2, args), InferenceCache.alloc(2, args) }
            local outs = {}
            for t = 1, 8 do
                local o
                o, hs = m(ids[{ {}, { t, t } }], hs)
                outs[t] = o
            end
            step = tide.cat(outs, 2)
        end)
        assert.are.same({ 2, 8, 16 }, logits.shape)
        assert_close_list({ -0.05184282, -0.04285456, -0.01463026, 0.04930652, 0.04131874,
            0.01478428, -0.04960222, -0.04057378, -0.01333306, -0.03613317, -0.03037058,
            -0.01097563, 0.04603215, 0.03880778, 0.01416383, -0.05187734, -0.04332429,
            -0.01532436, -0.003401787, -0.002852487, -0.0010228, 0.01716474, 0.01431252,
            0.005035907, -0.02658574, -0.02189079, -0.007369761, 0.02707487, 0.02228303,
            0.007489044, -0.01627135, -0.01313768, -0.004106976, 0.003250609, 0.002605307,
            0.0007905604, 0.01046609, 0.008334353, 0.002461589, -0.04854186, -0.03933463,
            -0.01247132, 0.0357461, 0.02937286, 0.009815108, -0.02382683, -0.01939637,
            -0.006259519 }, flat(logits[{ {}, {}, { 1, 3 } }]), 1e-4, "logits")
        assert.is_true(ported.close(logits:abs():sum():item(), 5.34507417678833, 1e-4))
        -- the token-by-token decode through the conv and ssm states gives the same logits,
        -- and leaves the states the chunked forward returned
        assert.is_true(tide.allclose(step, logits, { atol = 1e-6 }))
        assert.is_true(tide.allclose(hs[2].ssm_state, h[2].ssm_state, { atol = 1e-6 }))
        assert.is_true(tide.allclose(hs[2].conv_state, h[2].conv_state, { atol = 1e-6 }))
        assert.are.same({ 2, 24, 4 }, h[1].conv_state.shape)
        assert_close_list({ 0.01955024, 0.03918845, 0.03482782, 0.0156018, 0.008827577,
            0.01768928, 0.01572354, 0.007043581, -0.002891778, -0.005800632, -0.005154285,
            -0.002309114, -0.01355678, -0.0271635, -0.02414467, -0.01081578 },
            flat(h[2].ssm_state[{ 1, 1 }]), 1e-4, "ssm_state")

        -- next-token cross entropy, Adam(lr=0.01): PyTorch's three losses
        local opt = tide.optim.Adam(m:parameters(), { lr = 0.01 })
        local losses = {}
        for s = 1, 3 do
            opt:zero_grad()
            local lg = m(ids)
            -- F.cross_entropy(lg[:, :-1].reshape(-1, 16), ids[:, 1:].reshape(-1))
            local loss = F.cross_entropy(lg[{ {}, { 1, -2 } }]:reshape(-1, 16),
                ids[{ {}, { 2, -1 } }]:reshape(-1))
            loss:backward()
            opt:step()
            losses[s] = loss:item()
            assert_finite(losses[s])
        end
        assert_close_list({ 2.794691, 2.726065, 2.664387 }, losses, 1e-4, "losses")
    end)
end)

---------------------------------------------------------------------------------------------
-- 2. Jamie-Stirling/RetNet src/xpos_relative_position.py, src/retention.py, src/retnet.py
---------------------------------------------------------------------------------------------
local function fixed_pos_embedding(x)
    -- seq_len, dim = x.shape
    local seq_len, dim = unpack(x.shape)
    -- inv_freq = 1.0 / (10000 ** (torch.arange(0, dim) / dim))
    local inv_freq = 1.0 / (10000 ^ (tide.arange(0, dim) / dim))
    -- sinusoid_inp = (torch.einsum("i , j -> i j", torch.arange(0, seq_len,
    --     dtype=torch.float), inv_freq).to(x))
    local sinusoid_inp = tide.einsum("i , j -> i j", tide.arange(0, seq_len,
        { dtype = "float32" }), inv_freq):to(x)
    return tide.sin(sinusoid_inp), tide.cos(sinusoid_inp)
end

local function rotate_every_two(x)
    -- x1 = x[:, :, ::2]
    local x1 = x[{ {}, {}, { 1, -1, 2 } }]
    -- x2 = x[:, :, 1::2]
    local x2 = x[{ {}, {}, { 2, -1, 2 } }]
    -- x = torch.stack((-x2, x1), dim=-1)
    x = tide.stack({ -x2, x1 }, -1)
    -- (the odd-hidden_size branch: head sizes here are even)
    return x:flatten(-2)
end

local function duplicate_interleave(m)
    local dim0 = m.shape[1]
    m = m:view(-1, 1) -- flatten the matrix
    -- m = m.repeat(1, 2)
    m = m["repeat"](m, 1, 2)
    m = m:view(dim0, -1)
    return m
end

local function apply_rotary_pos_emb(x, sin, cos, scale)
    scale = scale or 1
    -- sin, cos = map(lambda t: duplicate_interleave(t * scale), (sin, cos))
    sin, cos = duplicate_interleave(sin * scale), duplicate_interleave(cos * scale)
    -- return (x * cos[:, :x.shape[-1]]) + (rotate_every_two(x) * sin)[:, :, :x.shape[-1]]
    return (x * cos[{ {}, { 1, x.shape[#x.shape] } }])
        + (rotate_every_two(x) * sin)[{ {}, {}, { 1, x.shape[#x.shape] } }]
end

local XPOS = nn.Module:extend("XPOS")
function XPOS:init(head_dim, scale_base)
    self.head_dim = head_dim
    self.scale_base = scale_base or 512
    -- self.register_buffer("scale", (torch.arange(0, head_dim, 2) + 0.4 * head_dim)
    --     / (1.4 * head_dim))
    self:register_buffer("scale", (tide.arange(0, head_dim, 2) + 0.4 * head_dim)
        / (1.4 * head_dim))
end

function XPOS:forward(x, offset, downscale)
    offset = offset or 0
    -- length = x.shape[1]
    local length = x.shape[2]
    local min_pos = 0
    local max_pos = length + offset + min_pos
    -- scale = self.scale ** torch.arange(min_pos, max_pos, 1).to(self.scale)
    --     .div(self.scale_base)[:, None]
    local scale = self.scale ^ tide.arange(min_pos, max_pos, 1):to(self.scale)
        :div(self.scale_base)[{ {}, tide.newaxis }]
    local sin, cos = fixed_pos_embedding(scale)
    -- if scale.shape[0] > length:
    if scale.shape[1] > length then
        -- scale = scale[-length:]
        scale = scale[{ { -length, -1 } }]
        sin = sin[{ { -length, -1 } }]
        cos = cos[{ { -length, -1 } }]
    end
    if downscale then
        scale = 1 / scale
    end
    x = apply_rotary_pos_emb(x, sin, cos, scale)
    return x
end

local SimpleRetention = nn.Module:extend("SimpleRetention")
function SimpleRetention:init(hidden_size, gamma, head_size, double_v_dim)
    self.hidden_size = hidden_size
    if head_size == nil then
        head_size = hidden_size
    end
    self.head_size = head_size
    self.v_dim = double_v_dim and head_size * 2 or head_size
    self.gamma = gamma
    -- self.W_Q = nn.Parameter(torch.randn(hidden_size, head_size) / hidden_size)
    self.W_Q = nn.Parameter(tide.randn(hidden_size, head_size) / hidden_size)
    self.W_K = nn.Parameter(tide.randn(hidden_size, head_size) / hidden_size)
    self.W_V = nn.Parameter(tide.randn(hidden_size, self.v_dim) / hidden_size)
    self.xpos = XPOS(head_size)
end

function SimpleRetention:forward(X)
    -- sequence_length = X.shape[1]
    local sequence_length = X.shape[2]
    -- D = self._get_D(sequence_length).to(self.W_Q.device)
    local D = self:_get_D(sequence_length):to(self.W_Q.device)
    -- Q = (X @ self.W_Q)
    local Q = X:matmul(self.W_Q)
    local K = X:matmul(self.W_K)
    Q = self.xpos(Q)
    -- K = self.xpos(K, downscale=True)
    K = self.xpos(K, 0, true)
    local V = X:matmul(self.W_V)
    -- ret = (Q @ K.permute(0, 2, 1)) * D.unsqueeze(0)
    local ret = Q:matmul(K:permute(1, 3, 2)) * D:unsqueeze(1)
    return ret:matmul(V)
end

-- n: the 0-based position, an offset into XPOS as in Python
function SimpleRetention:forward_recurrent(x_n, s_n_1, n)
    local Q = x_n:matmul(self.W_Q)
    local K = x_n:matmul(self.W_K)
    Q = self.xpos(Q, n + 1)
    K = self.xpos(K, n + 1, true)
    local V = x_n:matmul(self.W_V)
    -- s_n = self.gamma * s_n_1 + (K.transpose(-1, -2) @ V)
    local s_n = self.gamma * s_n_1 + K:transpose(-1, -2):matmul(V)
    return Q:matmul(s_n), s_n
end

-- i: the 0-based chunk number, as in Python (its positions start at i * chunk_size)
function SimpleRetention:forward_chunkwise(x_i, r_i_1, i)
    -- batch, chunk_size, _ = x_i.shape
    local batch, chunk_size = unpack(x_i.shape)
    local D = self:_get_D(chunk_size)
    local Q = x_i:matmul(self.W_Q)
    local K = x_i:matmul(self.W_K)
    Q = self.xpos(Q, i * chunk_size)
    K = self.xpos(K, i * chunk_size, true)
    local V = x_i:matmul(self.W_V)
    -- r_i =(K.transpose(-1, -2) @ (V * D[-1].view(1, chunk_size, 1)))
    --     + (self.gamma ** chunk_size) * r_i_1
    local r_i = K:transpose(-1, -2):matmul(V * D[-1]:view(1, chunk_size, 1))
        + (self.gamma ^ chunk_size) * r_i_1
    -- inner_chunk = ((Q @ K.transpose(-1, -2)) * D.unsqueeze(0)) @ V
    local inner_chunk = (Q:matmul(K:transpose(-1, -2)) * D:unsqueeze(1)):matmul(V)
    --e[i,j] = gamma ** (i+1)
    local e = tide.zeros(batch, chunk_size, 1)
    -- for _i in range(chunk_size): e[:, _i, :] = self.gamma ** (_i + 1)
    for _i = 1, chunk_size do
        e[{ {}, _i, {} }] = self.gamma ^ _i
    end
    -- cross_chunk = (Q @ r_i_1) * e
    local cross_chunk = Q:matmul(r_i_1) * e
    return inner_chunk + cross_chunk, r_i
end

function SimpleRetention:_get_D(sequence_length)
    -- n = torch.arange(sequence_length).unsqueeze(1)
    local n = tide.arange(sequence_length):unsqueeze(2)
    local m = tide.arange(sequence_length):unsqueeze(1)
    -- D = (self.gamma ** (n - m)) * (n >= m).float()
    local D = (self.gamma ^ (n - m)) * n:ge(m):float()
    -- D[D != D] = 0
    D[D:ne(D)] = 0
    return D
end

local MultiScaleRetention = nn.Module:extend("MultiScaleRetention")
function MultiScaleRetention:init(hidden_size, heads, double_v_dim)
    self.hidden_size = hidden_size
    self.v_dim = double_v_dim and hidden_size * 2 or hidden_size
    self.heads = heads
    assert(hidden_size % heads == 0, "hidden_size must be divisible by heads")
    -- self.head_size = hidden_size // heads
    self.head_size = math.floor(hidden_size / heads)
    self.head_v_dim = double_v_dim and hidden_size * 2 or hidden_size
    -- self.gammas = (1 - torch.exp(torch.linspace(math.log(1/32), math.log(1/512), heads)))
    --     .detach().cpu().tolist()
    self.gammas = (1 - tide.exp(tide.linspace(math.log(1 / 32), math.log(1 / 512), heads)))
        :detach():cpu():tolist()
    -- self.swish = lambda x: x * torch.sigmoid(x)
    self.swish = function(x) return x * tide.sigmoid(x) end
    self.W_G = nn.Parameter(tide.randn(hidden_size, self.v_dim) / hidden_size)
    self.W_O = nn.Parameter(tide.randn(self.v_dim, hidden_size) / hidden_size)
    self.group_norm = nn.GroupNorm(heads, self.v_dim)
    local rets = {}
    for j, gamma in ipairs(self.gammas) do
        rets[j] = SimpleRetention(self.hidden_size, gamma, self.head_size, double_v_dim)
    end
    self.retentions = nn.ModuleList(rets)
end

-- the shared tail of the three forms
function MultiScaleRetention:_out(X, Y)
    -- Y = torch.cat(Y, dim=2)
    Y = tide.cat(Y, 3)
    local Y_shape = Y.shape
    -- Y = self.group_norm(Y.reshape(-1, self.v_dim)).reshape(Y_shape)
    Y = self.group_norm(Y:reshape(-1, self.v_dim)):reshape(Y_shape)
    -- return (self.swish(X @ self.W_G) * Y) @ self.W_O
    return (self.swish(X:matmul(self.W_G)) * Y):matmul(self.W_O)
end

function MultiScaleRetention:forward(X)
    local Y = {}
    for i = 1, self.heads do
        Y[i] = self.retentions[i](X)
    end
    return self:_out(X, Y)
end

function MultiScaleRetention:forward_recurrent(x_n, s_n_1s, n)
    local Y, s_ns = {}, {}
    for i = 1, self.heads do
        -- y, s_n = self.retentions[i].forward_recurrent(x_n[:, :, :], s_n_1s[i], n)
        Y[i], s_ns[i] = self.retentions[i]:forward_recurrent(x_n, s_n_1s[i], n)
    end
    return self:_out(x_n, Y), s_ns
end

function MultiScaleRetention:forward_chunkwise(x_i, r_i_1s, i)
    local Y, r_is = {}, {}
    for j = 1, self.heads do
        Y[j], r_is[j] = self.retentions[j]:forward_chunkwise(x_i, r_i_1s[j], i)
    end
    return self:_out(x_i, Y), r_is
end

local RetNet = nn.Module:extend("RetNet")
function RetNet:init(layers, hidden_dim, ffn_size, heads, double_v_dim)
    self.layers = layers
    self.hidden_dim = hidden_dim
    self.ffn_size = ffn_size
    self.heads = heads
    self.v_dim = double_v_dim and hidden_dim * 2 or hidden_dim
    local rets, ffns, ln1, ln2 = {}, {}, {}, {}
    for l = 1, layers do
        rets[l] = MultiScaleRetention(hidden_dim, heads, double_v_dim)
        ffns[l] = nn.Sequential(nn.Linear(hidden_dim, ffn_size), nn.GELU(),
            nn.Linear(ffn_size, hidden_dim))
        ln1[l], ln2[l] = nn.LayerNorm(hidden_dim), nn.LayerNorm(hidden_dim)
    end
    self.retentions = nn.ModuleList(rets)
    self.ffns = nn.ModuleList(ffns)
    self.layer_norms_1 = nn.ModuleList(ln1)
    self.layer_norms_2 = nn.ModuleList(ln2)
end

function RetNet:forward(X)
    for i = 1, self.layers do
        local Y = self.retentions[i](self.layer_norms_1[i](X)) + X
        X = self.ffns[i](self.layer_norms_2[i](Y)) + Y
    end
    return X
end

function RetNet:forward_recurrent(x_n, s_n_1s, n)
    local s_ns = {}
    for i = 1, self.layers do
        local o_n, s_n = self.retentions[i]:forward_recurrent(self.layer_norms_1[i](x_n),
            s_n_1s[i], n)
        local y_n = o_n + x_n
        s_ns[i] = s_n
        x_n = self.ffns[i](self.layer_norms_2[i](y_n)) + y_n
    end
    return x_n, s_ns
end

function RetNet:forward_chunkwise(x_i, r_i_1s, i)
    local r_is = {}
    for j = 1, self.layers do
        local o_i, r_i = self.retentions[j]:forward_chunkwise(self.layer_norms_1[j](x_i),
            r_i_1s[j], i)
        local y_i = o_i + x_i
        r_is[j] = r_i
        x_i = self.ffns[j](self.layer_norms_2[j](y_i)) + y_i
    end
    return x_i, r_is
end

-- PyTorch's named_parameters, each 0-based position renumbered 1-based as tide names them
local function renumber(names)
    local out = {}
    for i, n in ipairs(names) do
        out[i] = n:gsub("%.(%d+)", function(d) return "." .. (tonumber(d) + 1) end)
    end
    return out
end

describe("Jamie-Stirling/RetNet retention.py, retnet.py", function()
    it("parallel, recurrent and chunkwise RetNet agree with each other and PyTorch", function()
        local py = {}
        for l = 0, 1 do
            for _, n in ipairs({ "W_G", "W_O", "group_norm.weight", "group_norm.bias" }) do
                py[#py + 1] = "retentions." .. l .. "." .. n
            end
            for h = 0, 1 do
                for _, w in ipairs({ "W_Q", "W_K", "W_V" }) do
                    py[#py + 1] = "retentions." .. l .. ".retentions." .. h .. "." .. w
                end
            end
        end
        for l = 0, 1 do
            for _, n in ipairs({ "0.weight", "0.bias", "2.weight", "2.bias" }) do
                py[#py + 1] = "ffns." .. l .. "." .. n
            end
        end
        for _, ln in ipairs({ "layer_norms_1", "layer_norms_2" }) do
            for l = 0, 1 do
                py[#py + 1] = ln .. "." .. l .. ".weight"
                py[#py + 1] = ln .. "." .. l .. ".bias"
            end
        end
        local net = RetNet(2, 8, 16, 2)
        init(net, renumber(py))
        net:eval()
        assert_close_list({ 0.96875, 0.998046875 }, net.retentions[1].gammas, 1e-6, "gammas")
        -- X = (0.5 * torch.sin(0.3 * torch.arange(2 * 6 * 8.) + 0.2)).view(2, 6, 8)
        local X = (0.5 * tide.sin(0.3 * tide.arange(0, 2 * 6 * 8.0) + 0.2)):view(2, 6, 8)
        local Yp, Yr, Yc
        tide.no_grad(function()
            Yp = net(X)
            -- s = [[torch.zeros(2, 4, 4) for _ in range(2)] for _ in range(2)]
            local s = { { tide.zeros(2, 4, 4), tide.zeros(2, 4, 4) },
                { tide.zeros(2, 4, 4), tide.zeros(2, 4, 4) } }
            Yr = {}
            for i = 1, 6 do
                -- y, s = net.forward_recurrent(X[:, i:i+1], s, i)  (i 0-based)
                Yr[i], s = net:forward_recurrent(X[{ {}, { i, i } }], s, i - 1)
            end
            Yr = tide.cat(Yr, 2)
            local r = { { tide.zeros(2, 4, 4), tide.zeros(2, 4, 4) },
                { tide.zeros(2, 4, 4), tide.zeros(2, 4, 4) } }
            Yc = {}
            for i = 1, 3 do
                -- y, r = net.forward_chunkwise(X[:, i*2:(i+1)*2], r, i)  (i 0-based)
                Yc[i], r = net:forward_chunkwise(X[{ {}, { 2 * i - 1, 2 * i } }], r, i - 1)
            end
            Yc = tide.cat(Yc, 2)
        end)
        assert.are.same({ 2, 6, 8 }, Yp.shape)
        assert_close_list({ 0.5409787, 0.7921655, 0.5718448, 0.8415906, -0.02899495, 0.06480783,
            0.8076441, 1.218981, 0.08959068, 0.3717921, 0.2709948, 0.4591193, 0.7794067,
            1.083081, -0.05186912, 0.02572721, 0.6764101, 1.029889, 0.3915709, 0.6670835,
            0.05111429, 0.1782056, 0.8409019, 1.21087 }, flat(Yp[{ {}, {}, { 1, 2 } }]), 1e-4,
            "parallel")
        assert.is_true(ported.close(Yp:abs():sum():item(), 60.214298248291016, 1e-4))
        assert.is_true(tide.allclose(Yr, Yp, { atol = 1e-5 }))
        assert.is_true(tide.allclose(Yc, Yp, { atol = 1e-5 }))

        -- mse to cos(X), Adam(lr=0.01): PyTorch's three losses
        local opt = tide.optim.Adam(net:parameters(), { lr = 0.01 })
        local target = tide.cos(X)
        local losses = {}
        for st = 1, 3 do
            opt:zero_grad()
            local loss = F.mse_loss(net(X), target)
            loss:backward()
            opt:step()
            losses[st] = loss:item()
            assert_finite(losses[st])
        end
        assert_close_list({ 1.192095, 0.9892592, 0.8327494 }, losses, 1e-4, "losses")
    end)
end)
