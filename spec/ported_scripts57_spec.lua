-- ported_scripts57_spec.lua — KellerJordan/Muon's muon.py (zeropower_via_newtonschulz5,
-- muon_update, SingleDeviceMuon, adam_update, SingleDeviceMuonWithAuxAdam) and karpathy/nanochat's
-- nanochat/gpt.py (GPTConfig, rotary embeddings, F.rms_norm, GQA attention through
-- flash_attention.py's SDPA fallback with enable_gqa, relu^2 MLP, smear/backout/value embeddings,
-- init_weights, forward with targets and loss_reduction, generate), ported line for line at tiny
-- sizes on random data. The Python line stands above each Lua line that differs from it.
-- Dims and class targets are 1-based; nanochat's layer_idx stays 0-based (it names modules).
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite

---------------------------------------------------------------------------------------------
-- 1. KellerJordan/Muon muon.py
---------------------------------------------------------------------------------------------
-- the dtype of the iteration: bfloat16 as muon.py; the value check below sets float32 on both
-- sides (PyTorch's bf16 rounding differs from tide's, and 5 steps amplify it)
local NS_DTYPE = "bfloat16"

-- def zeropower_via_newtonschulz5(G, steps: int):
local function zeropower_via_newtonschulz5(G, steps)
    -- assert G.ndim >= 2
    assert(G.ndim >= 2)
    -- a, b, c = (3.4445, -4.7750,  2.0315)
    local a, b, c = 3.4445, -4.7750, 2.0315
    -- X = G.bfloat16()
    local X = G:to(NS_DTYPE)
    if G:size(-2) > G:size(-1) then
        X = X.mT
    end
    -- Ensure spectral norm is at most 1
    -- X = X / (X.norm(dim=(-2, -1), keepdim=True) + 1e-7)
    X = X / (X:norm({ dim = { -2, -1 }, keepdim = true }) + 1e-7)
    -- for _ in range(steps):
    for _ = 1, steps do
        -- A = X @ X.mT
        local A = X:matmul(X.mT)
        -- B = b * A + c * A @ A
        local B = b * A + c * A:matmul(A)
        -- X = a * X + B @ X
        X = a * X + B:matmul(X)
    end
    if G:size(-2) > G:size(-1) then
        X = X.mT
    end
    return X
end

-- def muon_update(grad, momentum, beta=0.95, ns_steps=5, nesterov=True):
local function muon_update(grad, momentum, opts)
    opts = opts or {}
    local beta, ns_steps, nesterov = opts.beta or 0.95, opts.ns_steps or 5, opts.nesterov
    if nesterov == nil then nesterov = true end
    momentum:lerp_(grad, 1 - beta)
    -- update = grad.lerp_(momentum, beta) if nesterov else momentum
    local update = nesterov and grad:lerp_(momentum, beta) or momentum
    if update.ndim == 4 then -- for the case of conv filters
        -- update = update.view(len(update), -1)
        update = update:view(#update, -1)
    end
    update = zeropower_via_newtonschulz5(update, ns_steps)
    -- update *= max(1, grad.size(-2) / grad.size(-1))**0.5
    update = update * math.max(1, grad:size(-2) / grad:size(-1)) ^ 0.5
    return update
end

-- class SingleDeviceMuon(torch.optim.Optimizer):
local SingleDeviceMuon = optim.Optimizer:extend("SingleDeviceMuon")
-- def __init__(self, params, lr=0.02, weight_decay=0, momentum=0.95):
function SingleDeviceMuon:init(params, lr, weight_decay, momentum)
    -- defaults = dict(lr=lr, weight_decay=weight_decay, momentum=momentum)
    local defaults = { lr = lr or 0.02, weight_decay = weight_decay or 0,
        momentum = momentum or 0.95 }
    -- super().__init__(params, defaults)
    optim.Optimizer.init(self, params, defaults)
end

-- @torch.no_grad()
-- def step(self, closure=None):
SingleDeviceMuon.step = tide.no_grad()(function(self, closure)
    local loss = nil
    if closure ~= nil then
        -- with torch.enable_grad(): loss = closure()
        loss = tide.enable_grad(closure)
    end
    for _, group in ipairs(self.param_groups) do
        for _, p in ipairs(group["params"]) do
            if p.grad == nil then
                p.grad = tide.zeros_like(p) -- Force synchronization
            end
            local state = self.state[p]
            -- if len(state) == 0:
            if next(state) == nil then
                state["momentum_buffer"] = tide.zeros_like(p)
            end
            -- update = muon_update(p.grad, state["momentum_buffer"], beta=group["momentum"])
            local update = muon_update(p.grad, state["momentum_buffer"],
                { beta = group["momentum"] })
            p:mul_(1 - group["lr"] * group["weight_decay"])
            -- p.add_(update.reshape(p.shape), alpha=-group["lr"])
            p:add_(update:reshape(p.shape), { alpha = -group["lr"] })
        end
    end
    return loss
end)

-- def adam_update(grad, buf1, buf2, step, betas, eps):
local function adam_update(grad, buf1, buf2, step, betas, eps)
    -- buf1.lerp_(grad, 1 - betas[0])
    buf1:lerp_(grad, 1 - betas[1])
    buf2:lerp_(grad:square(), 1 - betas[2])
    -- buf1c = buf1 / (1 - betas[0]**step)
    local buf1c = buf1 / (1 - betas[1] ^ step)
    local buf2c = buf2 / (1 - betas[2] ^ step)
    return buf1c / (buf2c:sqrt() + eps)
end

-- set(group.keys()) == set([...])
local function keys_are(group, names)
    local n = 0
    for _ in pairs(group) do n = n + 1 end
    for _, k in ipairs(names) do
        if group[k] == nil then return false end
    end
    return n == #names
end

-- class SingleDeviceMuonWithAuxAdam(torch.optim.Optimizer):
local SingleDeviceMuonWithAuxAdam = optim.Optimizer:extend("SingleDeviceMuonWithAuxAdam")
function SingleDeviceMuonWithAuxAdam:init(param_groups)
    for _, group in ipairs(param_groups) do
        -- assert "use_muon" in group
        assert(group["use_muon"] ~= nil)
        if group["use_muon"] then
            -- group["lr"] = group.get("lr", 0.02)
            group["lr"] = group["lr"] or 0.02
            group["momentum"] = group["momentum"] or 0.95
            group["weight_decay"] = group["weight_decay"] or 0
            assert(keys_are(group, { "params", "lr", "momentum", "weight_decay", "use_muon" }))
        else
            group["lr"] = group["lr"] or 3e-4
            -- group["betas"] = group.get("betas", (0.9, 0.95))
            group["betas"] = group["betas"] or { 0.9, 0.95 }
            group["eps"] = group["eps"] or 1e-10
            group["weight_decay"] = group["weight_decay"] or 0
            assert(keys_are(group, { "params", "lr", "betas", "eps", "weight_decay", "use_muon" }))
        end
    end
    -- super().__init__(param_groups, dict())
    optim.Optimizer.init(self, param_groups, {})
end

SingleDeviceMuonWithAuxAdam.step = tide.no_grad()(function(self, closure)
    local loss = nil
    if closure ~= nil then
        loss = tide.enable_grad(closure)
    end
    for _, group in ipairs(self.param_groups) do
        if group["use_muon"] then
            for _, p in ipairs(group["params"]) do
                if p.grad == nil then
                    p.grad = tide.zeros_like(p) -- Force synchronization
                end
                local state = self.state[p]
                if next(state) == nil then
                    state["momentum_buffer"] = tide.zeros_like(p)
                end
                local update = muon_update(p.grad, state["momentum_buffer"],
                    { beta = group["momentum"] })
                p:mul_(1 - group["lr"] * group["weight_decay"])
                p:add_(update:reshape(p.shape), { alpha = -group["lr"] })
            end
        else
            for _, p in ipairs(group["params"]) do
                if p.grad == nil then
                    p.grad = tide.zeros_like(p) -- Force synchronization
                end
                local state = self.state[p]
                if next(state) == nil then
                    state["exp_avg"] = tide.zeros_like(p)
                    state["exp_avg_sq"] = tide.zeros_like(p)
                    state["step"] = 0
                end
                -- state["step"] += 1
                state["step"] = state["step"] + 1
                local update = adam_update(p.grad, state["exp_avg"], state["exp_avg_sq"],
                    state["step"], group["betas"], group["eps"])
                p:mul_(1 - group["lr"] * group["weight_decay"])
                p:add_(update, { alpha = -group["lr"] })
            end
        end
    end
    return loss
end)

describe("KellerJordan/Muon muon.py", function()
    it("zeropower_via_newtonschulz5 matches PyTorch (float32) and is near-orthogonal", function()
        -- G = torch.arange(1., 13.).view(4, 3).sin()  (rows > cols: the transposed path)
        local G = tide.arange(1., 13.):view(4, 3):sin()
        NS_DTYPE = "float32"
        local X = zeropower_via_newtonschulz5(G, 5)
        NS_DTYPE = "bfloat16"
        -- PyTorch 1.13, the same function with G.float() in place of G.bfloat16()
        local want = tide.tensor({
            { 0.5776958465576172, 0.1705339550971985, -0.3934246301651001 },
            { -0.3303741216659546, -0.24432575702667236, 0.06634534150362015 },
            { 0.07643246650695801, 0.313234806060791, 0.2620551586151123 },
            { 0.17904075980186462, -0.37587642669677734, -0.5852086544036865 } })
        assert.are.same({ 4, 3 }, X.shape)
        assert.is_true(tide.allclose(X, want, { atol = 1e-5, rtol = 1e-4 }))
        -- a well-conditioned square matrix: the quintic lands every singular value in about
        -- (0.5, 1.5) (muon.py's docstring: US'V^T, S' ~ Uniform(0.5, 1.5)), so U U^T ~ I
        tide.manual_seed(0)
        local M = tide.randn(8, 8) + 4 * tide.eye(8)
        local U = zeropower_via_newtonschulz5(M, 5) -- bfloat16, as muon.py
        assert.are.equal("bfloat16", U.dtype)
        local s = tide.linalg.svdvals(U:float())
        assert.is_true(s:min():item() > 0.5 and s:max():item() < 1.5)
        local UUt = U:float():matmul(U:float().mT)
        assert.is_true((UUt - tide.eye(8)):abs():max():item() < 0.7)
        -- conv filters: muon_update views a 4-d update as (len(update), -1)
        local g4, m4 = tide.randn(4, 2, 3, 3), tide.zeros(4, 2, 3, 3)
        local up = muon_update(g4, m4)
        assert.are.same({ 4, 18 }, up.shape)
        assert_finite(up:float())
    end)

    it("SingleDeviceMuon and SingleDeviceMuonWithAuxAdam train an MLP", function()
        tide.manual_seed(1)
        local x, y = tide.randn(32, 8), tide.randn(32, 1)
        local function make()
            tide.manual_seed(2)
            return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(),
                nn.Linear(16, 1))
        end
        -- SingleDeviceMuon over the hidden matrix only, Adam over the rest (the README's advice)
        local model = make()
        local hidden = { model[3].weight }
        local muon = SingleDeviceMuon(hidden, 0.02)
        assert.is_true(tide.isinstance(muon, optim.Optimizer))
        assert.are.same({ lr = 0.02, weight_decay = 0, momentum = 0.95 }, muon.defaults)
        local others = {}
        for _, p in ipairs(model:parameters()) do
            if p ~= model[3].weight then others[#others + 1] = p end
        end
        local adam = optim.Adam(others, { lr = 1e-2 })
        local losses = {}
        for step = 1, 8 do
            local loss = F.mse_loss(model(x), y)
            losses[step] = loss:item()
            muon:zero_grad()
            adam:zero_grad()
            loss:backward()
            muon:step()
            adam:step()
        end
        assert.is_true(losses[8] < losses[1])
        assert.is_not_nil(muon.state[model[3].weight]["momentum_buffer"])

        -- hidden_weights = [p for p in model.body.parameters() if p.ndim >= 2]
        -- param_groups = [dict(params=hidden_weights, use_muon=True, lr=0.02, weight_decay=0.01),
        --                 dict(params=hidden_gains_biases+nonhidden_params, use_muon=False,
        --                      lr=3e-4, betas=(0.9, 0.95), weight_decay=0.01)]
        model = make()
        local hidden_weights, rest = {}, {}
        for _, p in ipairs(model:parameters()) do
            if p.ndim >= 2 and p ~= model[5].weight then
                hidden_weights[#hidden_weights + 1] = p
            else
                rest[#rest + 1] = p
            end
        end
        local param_groups = {
            { params = hidden_weights, use_muon = true, lr = 0.02, weight_decay = 0.01 },
            { params = rest, use_muon = false, lr = 1e-2, betas = { 0.9, 0.95 },
                weight_decay = 0.01 } }
        local optimizer = SingleDeviceMuonWithAuxAdam(param_groups)
        assert.are.equal(0.95, optimizer.param_groups[1].momentum)
        assert.are.equal(1e-10, optimizer.param_groups[2].eps)
        losses = {}
        for step = 1, 8 do
            -- loss = optimizer.step(closure) with the closure's enable_grad
            local loss = optimizer:step(function()
                optimizer:zero_grad()
                local l = F.mse_loss(model(x), y)
                l:backward()
                return l
            end)
            losses[step] = loss:item()
        end
        assert.is_true(losses[8] < losses[1])
        assert.are.equal(8, optimizer.state[model[5].weight]["step"])
    end)
end)

---------------------------------------------------------------------------------------------
-- 2. karpathy/nanochat nanochat/gpt.py (+ flash_attention.py's SDPA fallback)
---------------------------------------------------------------------------------------------
-- COMPUTE_DTYPE: nanochat/common.py's bfloat16 on CUDA, float32 elsewhere
local COMPUTE_DTYPE = tide.float32

-- @dataclass class GPTConfig:
local function GPTConfig(o)
    o = o or {}
    return {
        sequence_len = o.sequence_len or 2048,
        vocab_size = o.vocab_size or 32768,
        n_layer = o.n_layer or 12,
        n_head = o.n_head or 6, -- number of query heads
        n_kv_head = o.n_kv_head or 6, -- number of key/value heads (GQA)
        n_embd = o.n_embd or 768,
        window_pattern = o.window_pattern or "SSSL",
    }
end

local function norm(x)
    -- return F.rms_norm(x, (x.size(-1),))
    return F.rms_norm(x, { x:size(-1) })
end

-- class Linear(nn.Linear): casts weights to match input dtype in forward
local Linear = nn.Linear:extend("Linear")
function Linear:forward(x)
    -- return F.linear(x, self.weight.to(dtype=x.dtype))
    return F.linear(x, self.weight:to({ dtype = x.dtype }))
end

local function has_ve(layer_idx, n_layer)
    return layer_idx % 2 == (n_layer - 1) % 2
end

local function apply_rotary_emb(x, cos, sin)
    assert(x.ndim == 4) -- multihead attention
    -- d = x.shape[3] // 2
    local d = math.floor(x.shape[4] / 2)
    -- x1, x2 = x[..., :d], x[..., d:]
    local x1, x2 = x[{ "...", { 1, d } }], x[{ "...", { d + 1, -1 } }]
    local y1 = x1 * cos + x2 * sin -- rotate pairs of dims
    local y2 = x1 * (-sin) + x2 * cos
    -- return torch.cat([y1, y2], 3)
    return tide.cat({ y1, y2 }, 4)
end

-- flash_attention.py: _sdpa_attention(q, k, v, window_size, enable_gqa), q, k, v (B, H, T, D)
local function _sdpa_attention(q, k, v, window_size, enable_gqa)
    local Tq = q:size(3)
    local Tk = k:size(3)
    local window = window_size[1]
    -- Full context, same length
    if (window < 0 or window >= Tq) and Tq == Tk then
        -- return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=enable_gqa)
        return F.scaled_dot_product_attention(q, k, v,
            { is_causal = true, enable_gqa = enable_gqa })
    end
    -- Single token generation
    if Tq == 1 then
        if window >= 0 and window < Tk then
            -- start = max(0, Tk - (window + 1)); k = k[:, :, start:, :]
            local start = math.max(0, Tk - (window + 1))
            k = k[{ {}, {}, { start + 1, -1 }, {} }]
            v = v[{ {}, {}, { start + 1, -1 }, {} }]
        end
        return F.scaled_dot_product_attention(q, k, v,
            { is_causal = false, enable_gqa = enable_gqa })
    end
    local device = q.device
    -- row_idx = (Tk - Tq) + torch.arange(Tq, device=device).unsqueeze(1)
    local row_idx = (Tk - Tq) + tide.arange(Tq, { device = device }):unsqueeze(2)
    local col_idx = tide.arange(Tk, { device = device }):unsqueeze(1)
    -- mask = col_idx <= row_idx
    local mask = col_idx:le(row_idx)
    if window >= 0 and window < Tk then
        -- mask = mask & ((row_idx - col_idx) <= window)
        mask = mask:logical_and((row_idx - col_idx):le(window))
    end
    return F.scaled_dot_product_attention(q, k, v, { attn_mask = mask, enable_gqa = enable_gqa })
end

-- flash_attention.py: flash_attn_func(q, k, v, causal=False, window_size=(-1, -1)), the SDPA path
local flash_attn = {}
function flash_attn.flash_attn_func(q, k, v, opts)
    local window_size = opts.window_size or { -1, -1 }
    q = q:transpose(2, 3)
    k = k:transpose(2, 3)
    v = v:transpose(2, 3)
    -- enable_gqa = q.size(1) != k.size(1)
    local enable_gqa = q:size(2) ~= k:size(2)
    local y = _sdpa_attention(q, k, v, window_size, enable_gqa)
    return y:transpose(2, 3) -- back to (B, T, H, D)
end

local CausalSelfAttention = nn.Module:extend("CausalSelfAttention")
function CausalSelfAttention:init(config, layer_idx)
    self.layer_idx = layer_idx
    self.n_head = config.n_head
    self.n_kv_head = config.n_kv_head
    self.n_embd = config.n_embd
    -- self.head_dim = self.n_embd // self.n_head
    self.head_dim = math.floor(self.n_embd / self.n_head)
    assert(self.n_embd % self.n_head == 0)
    assert(self.n_kv_head <= self.n_head and self.n_head % self.n_kv_head == 0)
    -- self.c_q = Linear(self.n_embd, self.n_head * self.head_dim, bias=False)
    self.c_q = Linear(self.n_embd, self.n_head * self.head_dim, { bias = false })
    self.c_k = Linear(self.n_embd, self.n_kv_head * self.head_dim, { bias = false })
    self.c_v = Linear(self.n_embd, self.n_kv_head * self.head_dim, { bias = false })
    self.c_proj = Linear(self.n_embd, self.n_embd, { bias = false })
    self.ve_gate_channels = 12
    -- self.ve_gate = Linear(...) if has_ve(layer_idx, config.n_layer) else None
    self.ve_gate = has_ve(layer_idx, config.n_layer)
        and Linear(self.ve_gate_channels, self.n_kv_head, { bias = false }) or nil
end

function CausalSelfAttention:forward(x, ve, cos_sin, window_size, kv_cache)
    -- B, T, C = x.size()
    local B, T = unpack(x:size())
    local q = self.c_q(x):view(B, T, self.n_head, self.head_dim)
    local k = self.c_k(x):view(B, T, self.n_kv_head, self.head_dim)
    local v = self.c_v(x):view(B, T, self.n_kv_head, self.head_dim)
    if ve ~= nil then
        ve = ve:view(B, T, self.n_kv_head, self.head_dim)
        -- gate = 3 * torch.sigmoid(self.ve_gate(x[..., :self.ve_gate_channels]))
        local gate = 3 * tide.sigmoid(self.ve_gate(x[{ "...", { 1, self.ve_gate_channels } }]))
        v = v + gate:unsqueeze(-1) * ve
    end
    -- cos, sin = cos_sin
    local cos, sin = cos_sin[1], cos_sin[2]
    q, k = apply_rotary_emb(q, cos, sin), apply_rotary_emb(k, cos, sin)
    q, k = norm(q), norm(k) -- QK norm
    q = q * 1.2
    k = k * 1.2
    assert(kv_cache == nil) -- (the KV-cache path is engine.py's; not ported)
    -- y = flash_attn.flash_attn_func(q, k, v, causal=True, window_size=window_size)
    local y = flash_attn.flash_attn_func(q, k, v, { causal = true, window_size = window_size })
    y = y:contiguous():view(B, T, -1)
    y = self.c_proj(y)
    return y
end

local MLP = nn.Module:extend("MLP")
function MLP:init(config)
    self.c_fc = Linear(config.n_embd, 4 * config.n_embd, { bias = false })
    self.c_proj = Linear(4 * config.n_embd, config.n_embd, { bias = false })
end

function MLP:forward(x)
    x = self.c_fc(x)
    x = F.relu(x):square()
    x = self.c_proj(x)
    return x
end

local Block = nn.Module:extend("Block")
function Block:init(config, layer_idx)
    self.attn = CausalSelfAttention(config, layer_idx)
    self.mlp = MLP(config)
end

function Block:forward(x, ve, cos_sin, window_size, kv_cache)
    x = x + self.attn(norm(x), ve, cos_sin, window_size, kv_cache)
    x = x + self.mlp(norm(x))
    return x
end

local GPT = nn.Module:extend("GPT")
function GPT:init(config, pad_vocab_size_to)
    pad_vocab_size_to = pad_vocab_size_to or 64
    self.config = config
    self.window_sizes = self:_compute_window_sizes(config)
    -- padded_vocab_size = ((config.vocab_size + pad_vocab_size_to - 1) // pad_vocab_size_to)
    --     * pad_vocab_size_to
    local padded_vocab_size = math.floor((config.vocab_size + pad_vocab_size_to - 1) /
        pad_vocab_size_to) * pad_vocab_size_to
    -- "h": nn.ModuleList([Block(config, layer_idx) for layer_idx in range(config.n_layer)])
    local h = {}
    for layer_idx = 0, config.n_layer - 1 do
        h[#h + 1] = Block(config, layer_idx)
    end
    self.transformer = nn.ModuleDict({
        wte = nn.Embedding(padded_vocab_size, config.n_embd),
        h = nn.ModuleList(h),
    })
    self.lm_head = Linear(config.n_embd, padded_vocab_size, { bias = false })
    self.resid_lambdas = nn.Parameter(tide.ones(config.n_layer))
    self.x0_lambdas = nn.Parameter(tide.zeros(config.n_layer))
    self.smear_gate = Linear(24, 1, { bias = false })
    self.smear_lambda = nn.Parameter(tide.zeros(1))
    self.backout_lambda = nn.Parameter(0.2 * tide.ones(1))
    local head_dim = math.floor(config.n_embd / config.n_head)
    local kv_dim = config.n_kv_head * head_dim
    -- nn.ModuleDict({str(i): nn.Embedding(padded_vocab_size, kv_dim)
    --     for i in range(config.n_layer) if has_ve(i, config.n_layer)})
    local ves = {}
    for i = 0, config.n_layer - 1 do
        if has_ve(i, config.n_layer) then
            ves[tostring(i)] = nn.Embedding(padded_vocab_size, kv_dim)
        end
    end
    self.value_embeds = nn.ModuleDict(ves)
    self.rotary_seq_len = config.sequence_len * 10
    local cos, sin = self:_precompute_rotary_embeddings(self.rotary_seq_len, head_dim)
    -- self.register_buffer("cos", cos, persistent=False)
    self:register_buffer("cos", cos, { persistent = false })
    self:register_buffer("sin", sin, { persistent = false })
end

-- @torch.no_grad()
-- def init_weights(self):
GPT.init_weights = tide.no_grad()(function(self)
    -- torch.nn.init.normal_(self.transformer.wte.weight, mean=0.0, std=0.8)
    nn.init.normal_(self.transformer.wte.weight, { mean = 0.0, std = 0.8 })
    nn.init.normal_(self.lm_head.weight, { mean = 0.0, std = 0.001 })
    local n_embd = self.config.n_embd
    -- s = 3**0.5 * n_embd**-0.5
    local s = 3 ^ 0.5 * n_embd ^ -0.5
    -- for block in self.transformer.h:
    for _, block in ipairs(self.transformer.h) do
        nn.init.uniform_(block.attn.c_q.weight, -s, s)
        nn.init.uniform_(block.attn.c_k.weight, -s, s)
        nn.init.uniform_(block.attn.c_v.weight, -s, s)
        nn.init.zeros_(block.attn.c_proj.weight)
        nn.init.uniform_(block.mlp.c_fc.weight, -s * 0.4, s * 0.4)
        nn.init.zeros_(block.mlp.c_proj.weight)
    end
    local n_layer = self.config.n_layer
    -- for i in range(n_layer): self.resid_lambdas.data[i] = 1.15 - (0.10 * i / max(n_layer - 1, 1))
    for i = 0, n_layer - 1 do
        self.resid_lambdas.data[i + 1] = 1.15 - (0.10 * i / math.max(n_layer - 1, 1))
    end
    for i = 0, n_layer - 1 do
        self.x0_lambdas.data[i + 1] = 0.20 - (0.15 * i / math.max(n_layer - 1, 1))
    end
    nn.init.zeros_(self.smear_lambda)
    nn.init.constant_(self.backout_lambda, 0.2)
    nn.init.uniform_(self.smear_gate.weight, 0.0, 0.02)
    -- for ve in self.value_embeds.values():
    for _, ve in ipairs(self.value_embeds:values()) do
        nn.init.uniform_(ve.weight, -s, s)
    end
    for _, block in ipairs(self.transformer.h) do
        if block.attn.ve_gate ~= nil then
            nn.init.uniform_(block.attn.ve_gate.weight, 0.0, 0.02)
        end
    end
    local head_dim = math.floor(self.config.n_embd / self.config.n_head)
    local cos, sin = self:_precompute_rotary_embeddings(self.rotary_seq_len, head_dim)
    self.cos, self.sin = cos, sin
    if COMPUTE_DTYPE ~= tide.float16 then
        -- self.transformer.wte.to(dtype=COMPUTE_DTYPE)
        self.transformer.wte:to({ dtype = COMPUTE_DTYPE })
        for _, ve in ipairs(self.value_embeds:values()) do
            ve:to({ dtype = COMPUTE_DTYPE })
        end
    end
end)

function GPT:_precompute_rotary_embeddings(seq_len, head_dim, base, device)
    base = base or 100000
    if device == nil then
        device = self.transformer.wte.weight.device
    end
    -- channel_range = torch.arange(0, head_dim, 2, dtype=torch.float32, device=device)
    local channel_range = tide.arange(0, head_dim, 2, { dtype = tide.float32, device = device })
    -- inv_freq = 1.0 / (base ** (channel_range / head_dim))
    local inv_freq = 1.0 / (base ^ (channel_range / head_dim))
    local t = tide.arange(seq_len, { dtype = tide.float32, device = device })
    local freqs = tide.outer(t, inv_freq)
    local cos, sin = freqs:cos(), freqs:sin()
    cos, sin = cos:to(COMPUTE_DTYPE), sin:to(COMPUTE_DTYPE)
    -- cos, sin = cos[None, :, None, :], sin[None, :, None, :]
    cos = cos[{ tide.newaxis, {}, tide.newaxis, {} }]
    sin = sin[{ tide.newaxis, {}, tide.newaxis, {} }]
    return cos, sin
end

function GPT:_compute_window_sizes(config)
    local pattern = config.window_pattern:upper()
    assert(not pattern:find("[^SL]"),
        ("Invalid window_pattern: %s. Use only S and L."):format(pattern))
    local long_window = config.sequence_len
    -- short_window = -(-long_window // 4 // 128) * 128
    local short_window = -math.floor(math.floor(-long_window / 4) / 128) * 128
    local char_to_window = { L = { long_window, 0 }, S = { short_window, 0 } }
    local window_sizes = {}
    for layer_idx = 0, config.n_layer - 1 do
        -- char = pattern[layer_idx % len(pattern)]
        local ch = pattern:sub(layer_idx % #pattern + 1, layer_idx % #pattern + 1)
        window_sizes[#window_sizes + 1] = char_to_window[ch]
    end
    -- window_sizes[-1] = (long_window, 0)
    window_sizes[#window_sizes] = { long_window, 0 }
    return window_sizes
end

function GPT:get_device()
    return self.transformer.wte.weight.device
end

function GPT:num_matmul_params()
    -- sum(m.weight.numel() for m in self.modules() if isinstance(m, Linear))
    local n = 0
    for _, m in ipairs(self:modules()) do
        if tide.isinstance(m, Linear) then n = n + m.weight:numel() end
    end
    return n
end

function GPT:forward(idx, targets, kv_cache, loss_reduction)
    loss_reduction = loss_reduction or "mean"
    local B, T = unpack(idx:size()) -- luacheck: ignore B
    assert(T <= self.cos:size(2),
        ("Sequence length grew beyond the rotary embeddings cache: %d > %d")
            :format(T, self.cos:size(2)))
    assert(self.cos.dtype == COMPUTE_DTYPE)
    local T0 = kv_cache == nil and 0 or kv_cache:get_pos()
    -- cos_sin = self.cos[:, T0:T0+T], self.sin[:, T0:T0+T]
    local cos_sin = { self.cos[{ {}, { T0 + 1, T0 + T } }], self.sin[{ {}, { T0 + 1, T0 + T } }] }
    local x = self.transformer.wte(idx)
    x = x:to(COMPUTE_DTYPE)
    x = norm(x)
    assert(kv_cache == nil) -- (the KV-cache branches are engine.py's; not ported)
    assert(T > 1, "Training forward pass should have T > 1")
    -- gate = self.smear_lambda.to(x.dtype) * torch.sigmoid(self.smear_gate(x[:, 1:, :24]))
    local gate = self.smear_lambda:to(x.dtype)
        * tide.sigmoid(self.smear_gate(x[{ {}, { 2, -1 }, { 1, 24 } }]))
    -- x = torch.cat([x[:, :1], x[:, 1:] + gate * x[:, :-1]], dim=1)
    x = tide.cat({ x[{ {}, { 1, 1 } }], x[{ {}, { 2, -1 } }] + gate * x[{ {}, { 1, -2 } }] },
        { dim = 2 })
    local x0 = x
    local n_layer = self.config.n_layer
    -- backout_layer = n_layer // 2
    local backout_layer = math.floor(n_layer / 2)
    local x_backout = nil
    -- for i, block in enumerate(self.transformer.h):  (i stays 0-based: it names layers)
    for j, block in ipairs(self.transformer.h) do
        local i = j - 1
        -- x = self.resid_lambdas[i] * x + self.x0_lambdas[i] * x0
        x = self.resid_lambdas[i + 1] * x + self.x0_lambdas[i + 1] * x0
        -- ve = self.value_embeds[str(i)](idx).to(x.dtype) if str(i) in self.value_embeds else None
        local ve = self.value_embeds:contains(tostring(i))
            and self.value_embeds[tostring(i)](idx):to(x.dtype) or nil
        x = block(x, ve, cos_sin, self.window_sizes[i + 1], kv_cache)
        if i == backout_layer then
            x_backout = x
        end
    end
    if x_backout ~= nil then
        x = x - self.backout_lambda:to(x.dtype) * x_backout
    end
    x = norm(x)
    local softcap = 15
    local logits = self.lm_head(x)
    -- logits = logits[..., :self.config.vocab_size]
    logits = logits[{ "...", { 1, self.config.vocab_size } }]
    logits = logits:float()
    logits = softcap * tide.tanh(logits / softcap)
    if targets ~= nil then
        -- loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1),
        --     ignore_index=-1, reduction=loss_reduction)
        local loss = F.cross_entropy(logits:view(-1, logits:size(-1)), targets:view(-1),
            { ignore_index = -1, reduction = loss_reduction })
        return loss
    else
        return logits
    end
end

-- @torch.inference_mode()
-- def generate(self, tokens, max_tokens, temperature=1.0, top_k=None, seed=42):  (a Python
-- generator: a coroutine.wrap iterator; each step runs under tide.inference_mode and the yield
-- stands outside it, as Lua 5.1 cannot yield across its pcall)
function GPT:generate(tokens, max_tokens, temperature, top_k, seed)
    temperature, seed = temperature or 1.0, seed or 42
    return coroutine.wrap(function()
        local device = self:get_device()
        local rng = nil
        if temperature > 0 then
            -- rng = torch.Generator(device=device)
            rng = tide.Generator({ device = device })
            rng:manual_seed(seed)
        end
        -- ids = torch.tensor([tokens], dtype=torch.long, device=device)
        local ids = tide.tensor({ tokens }, { dtype = tide.long, device = device })
        for _ = 1, max_tokens do
            local next_ids = tide.inference_mode(function()
                local logits = self:forward(ids)
                -- logits = logits[:, -1, :]
                logits = logits[{ {}, -1, {} }]
                if top_k ~= nil and top_k > 0 then
                    -- v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                    local v = tide.topk(logits, math.min(top_k, logits:size(-1)))
                    -- logits[logits < v[:, [-1]]] = -float('Inf')
                    logits[logits:lt(v[{ {}, { -1 } }])] = -math.huge
                end
                if temperature > 0 then
                    logits = logits / temperature
                    local probs = F.softmax(logits, { dim = -1 })
                    -- torch.multinomial(probs, num_samples=1, generator=rng)
                    return tide.multinomial(probs, { num_samples = 1, generator = rng })
                else
                    -- torch.argmax(logits, dim=-1, keepdim=True)
                    return tide.argmax(logits, { dim = -1, keepdim = true })
                end
            end)
            ids = tide.cat({ ids, next_ids }, { dim = 2 })
            local token = next_ids:item()
            -- yield token
            coroutine.yield(token)
        end
    end)
end

describe("karpathy/nanochat nanochat/gpt.py", function()
    local config = GPTConfig({ sequence_len = 8, vocab_size = 50, n_layer = 2, n_head = 4,
        n_kv_head = 2, n_embd = 32, window_pattern = "SL" })

    it("GPT with GQA, rotary, QK norm, value embeddings: init_weights, loss, training", function()
        tide.manual_seed(3)
        local model = GPT(config)
        model:init_weights()
        -- padded vocab, window sizes, value embeddings on layer 1 only (n_layer - 1 odd)
        assert.are.same({ 64, 32 }, model.transformer.wte.weight.shape)
        assert.are.same({ { 128, 0 }, { 8, 0 } }, model.window_sizes)
        assert.is_true(model.value_embeds:contains("1") and not model.value_embeds:contains("0"))
        assert.is_nil(model.transformer.h[1].attn.ve_gate)
        assert.are.same({ 1, 80, 1, 4 }, model.cos.shape)
        -- persistent=False: the rotary buffers stay out of the checkpoint
        assert.is_nil(model:state_dict()["cos"])
        assert.is_true(tide.allclose(model.resid_lambdas, tide.tensor({ 1.15, 1.05 })))
        assert.is_true(tide.allclose(model.x0_lambdas, tide.tensor({ 0.20, 0.05 })))
        -- per block c_q 32x32, c_k and c_v 32x16, c_proj 32x32, c_fc and c_proj 32x128; layer 1's
        -- ve_gate 12x2, lm_head 32x64, smear_gate 24x1
        assert.are.equal(2 * (1024 + 512 + 512 + 1024 + 4096 + 4096) + 24 + 2048 + 24,
            model:num_matmul_params())

        local idx = tide.randint(1, 51, { 2, 8 })
        local targets = tide.randint(1, 51, { 2, 8 })
        targets[{ 1, 1 }] = -1 -- ignore_index=-1
        local loss = model(idx, targets)
        assert_finite(loss)
        -- with lm_head ~ N(0, 0.001) the first loss is about log(vocab_size)
        assert.is_true(math.abs(loss:item() - math.log(50)) < 0.05)
        local none = model(idx, targets, nil, "none")
        assert.are.same({ 16 }, none.shape)
        assert.are.equal(0, none[1]:item())

        -- train with muon.py's SingleDeviceMuonWithAuxAdam: the blocks' matrices on Muon
        local matrix_params = model.transformer.h:parameters()
        local adam_params = {}
        for _, p in ipairs(model:parameters()) do
            local in_h = false
            for _, q in ipairs(matrix_params) do
                if p == q then in_h = true end
            end
            if not in_h then adam_params[#adam_params + 1] = p end
        end
        local optimizer = SingleDeviceMuonWithAuxAdam({
            { params = matrix_params, use_muon = true, lr = 0.02 },
            { params = adam_params, use_muon = false, lr = 0.02, betas = { 0.8, 0.95 } } })
        local losses = {}
        for step = 1, 6 do
            optimizer:zero_grad()
            loss = model(idx, targets)
            loss:backward()
            optimizer:step()
            losses[step] = loss:item()
        end
        assert.is_true(losses[6] < losses[1] - 0.1)

        -- generate (a generator of ints): top_k and greedy
        local out = {}
        for token in model:generate({ 1, 2, 3 }, 4, 1.0, 5) do
            out[#out + 1] = token
        end
        assert.are.equal(4, #out)
        for _, t in ipairs(out) do
            assert.is_true(t >= 1 and t <= 50)
        end
        local greedy = {}
        for token in model:generate({ 1, 2, 3 }, 3, 0) do
            greedy[#greedy + 1] = token
        end
        local ids = tide.tensor({ { 1, 2, 3 } })
        local first = tide.argmax(model(ids)[{ 1, -1 }]):item()
        assert.are.equal(first, greedy[1])
    end)

    it("flash_attention's SDPA fallback: enable_gqa, the sliding-window mask", function()
        tide.manual_seed(4)
        local q, k, v = tide.randn(2, 4, 6, 8), tide.randn(2, 2, 6, 8), tide.randn(2, 2, 6, 8)
        -- enable_gqa=True (PyTorch 2.5) is repeat_interleave of key/value heads
        local y = F.scaled_dot_product_attention(q, k, v, { is_causal = true, enable_gqa = true })
        local want = F.scaled_dot_product_attention(q, k:repeat_interleave(2, { dim = 2 }),
            v:repeat_interleave(2, { dim = 2 }), { is_causal = true })
        assert.is_true(tide.allclose(y, want, { atol = 1e-6 }))
        -- PyTorch's positional order: (q, k, v, attn_mask, dropout_p, is_causal, scale, enable_gqa)
        local y2 = F.scaled_dot_product_attention(q, k, v, nil, 0.0, true, nil, true)
        assert.is_true(tide.allclose(y2, want, { atol = 1e-6 }))
        -- bad head counts raise naming them, and leave the inputs as they were
        local k3 = tide.randn(2, 3, 6, 8)
        assert.has_error(function()
            F.scaled_dot_product_attention(q, k3, k3, { enable_gqa = true })
        end, "tide: scaled_dot_product_attention: enable_gqa=true needs key and value with the " ..
            "same number of heads, dividing the query's: got 4 query, 3 key and 3 value heads " ..
            "(shapes {2, 4, 6, 8}, {2, 3, 6, 8}, {2, 3, 6, 8})")
        assert.are.same({ 2, 3, 6, 8 }, k3.shape)
        assert.has_error(function()
            F.scaled_dot_product_attention(q, k, v, { enable_gqa = "yes" })
        end)
        -- window 2: each query sees itself and 2 keys back
        local w = _sdpa_attention(q, k, v, { 2, 0 }, true)
        local kk, vv = k:repeat_interleave(2, { dim = 2 }), v:repeat_interleave(2, { dim = 2 })
        local row = tide.arange(6):unsqueeze(2)
        local col = tide.arange(6):unsqueeze(1)
        local mask = col:le(row):logical_and((row - col):le(2))
        local ref = F.scaled_dot_product_attention(q, kk, vv, { attn_mask = mask })
        assert.is_true(tide.allclose(w, ref, { atol = 1e-6 }))
        -- single-token decode against a longer cache
        local one = _sdpa_attention(q[{ {}, {}, { 6, 6 }, {} }], k, v, { 2, 0 }, true)
        local ref1 = F.scaled_dot_product_attention(q[{ {}, {}, { 6, 6 }, {} }],
            kk[{ {}, {}, { 4, 6 }, {} }], vv[{ {}, {}, { 4, 6 }, {} }])
        assert.is_true(tide.allclose(one, ref1, { atol = 1e-6 }))
    end)
end)
