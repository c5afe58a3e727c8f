-- ported_scripts124_spec.lua — state-spaces/s4's models/s4/s4d.py (S4DKernel with log_dt, the
-- complex C kept as its view_as_real, log_A_real, A_imag, the register helper with per-parameter
-- _optim; S4D with the FFT convolution, the D skip, GELU and the Conv1d + GLU output), its
-- src/models/nn/dropout.py DropoutNd, and example.py's setup_optimizer (AdamW parameter groups
-- from _optim, CosineAnnealingLR), ported line for line at tiny sizes (d_model 4, d_state 8,
-- seq 16, batch 2), then 2 AdamW steps on a regression target. The Python line stands above
-- each Lua line that differs from it. Dims are 1-based.
-- Reference values: PyTorch 1.13 on the same parameters (set by formula below, C through its
-- view_as_real) and inputs.
local tide = require("tide")
local nn = tide.nn
local fft = tide.fft
local einops = tide.einops

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

---------------------------------------------------------------------------------------------
-- 1. src/models/nn/dropout.py
---------------------------------------------------------------------------------------------
-- class DropoutNd(nn.Module):
local DropoutNd = nn.Module:extend("DropoutNd")
-- def __init__(self, p: float = 0.5, tie=True, transposed=True):
function DropoutNd:init(p, tie, transposed)
    nn.Module.init(self)
    if p == nil then p = 0.5 end
    if tie == nil then tie = true end
    if transposed == nil then transposed = true end
    if p < 0 or p >= 1 then
        -- raise ValueError("dropout probability has to be in [0, 1), " "but got {}".format(p))
        error("dropout probability has to be in [0, 1), but got " .. tostring(p))
    end
    self.p = p
    self.tie = tie
    self.transposed = transposed
    -- self.binomial = torch.distributions.binomial.Binomial(probs=1-self.p)
    self.binomial = tide.distributions.Binomial(nil, { probs = 1 - self.p })
end

-- def forward(self, X):
function DropoutNd:forward(X)
    if self.training then
        -- if not self.transposed: X = rearrange(X, 'b ... d -> b d ...')
        if not self.transposed then X = einops.rearrange(X, "b ... d -> b d ...") end
        -- mask_shape = X.shape[:2] + (1,)*(X.ndim-2) if self.tie else X.shape
        local mask_shape
        if self.tie then
            mask_shape = { X:size(1), X:size(2) }
            for _ = 1, X.ndim - 2 do mask_shape[#mask_shape + 1] = 1 end
        else
            mask_shape = X.shape
        end
        -- mask = torch.rand(*mask_shape, device=X.device) < 1.-self.p
        local mask = tide.rand(mask_shape, { device = X.device }):lt(1. - self.p)
        -- X = X * mask * (1.0/(1-self.p))
        X = X * mask * (1.0 / (1 - self.p))
        -- if not self.transposed: X = rearrange(X, 'b d ... -> b ... d')
        if not self.transposed then X = einops.rearrange(X, "b d ... -> b ... d") end
        return X
    end
    return X
end

---------------------------------------------------------------------------------------------
-- 2. models/s4/s4d.py
---------------------------------------------------------------------------------------------
-- Python's 1j (Lua has no complex literal): a 0-dim complex tensor, broadcast as a scalar
-- (dtype named: Lua 5.1's 0.0 is an integer to tide.tensor)
local J = tide.complex(tide.tensor(0, { dtype = tide.float32 }),
    tide.tensor(1, { dtype = tide.float32 }))

-- class S4DKernel(nn.Module):
local S4DKernel = nn.Module:extend("S4DKernel")
-- def __init__(self, d_model, N=64, dt_min=0.001, dt_max=0.1, lr=None):
function S4DKernel:init(d_model, opts)
    nn.Module.init(self)
    opts = opts or {}
    local N, dt_min, dt_max = opts.N or 64, opts.dt_min or 0.001, opts.dt_max or 0.1
    local lr = opts.lr
    -- Generate dt
    local H = d_model
    -- log_dt = torch.rand(H) * (math.log(dt_max) - math.log(dt_min)) + math.log(dt_min)
    local log_dt = tide.rand(H) * (math.log(dt_max) - math.log(dt_min)) + math.log(dt_min)

    -- C = torch.randn(H, N // 2, dtype=torch.cfloat)  (N // 2: math.floor(N / 2), 5.1 has no //)
    local C = tide.randn(H, math.floor(N / 2), { dtype = tide.cfloat })
    -- self.C = nn.Parameter(torch.view_as_real(C))
    self.C = nn.Parameter(tide.view_as_real(C))
    self:register("log_dt", log_dt, lr)

    -- log_A_real = torch.log(0.5 * torch.ones(H, N//2))
    local log_A_real = tide.log(0.5 * tide.ones(H, math.floor(N / 2)))
    -- A_imag = math.pi * repeat(torch.arange(N//2), 'n -> h n', h=H)
    local A_imag = math.pi * einops.repeat_(tide.arange(math.floor(N / 2)), "n -> h n", { h = H })
    self:register("log_A_real", log_A_real, lr)
    self:register("A_imag", A_imag, lr)
end

-- def forward(self, L):
function S4DKernel:forward(L)
    -- returns: (..., c, L) where c is number of channels (default 1)

    -- Materialize parameters
    -- dt = torch.exp(self.log_dt) # (H)
    local dt = tide.exp(self.log_dt)
    -- C = torch.view_as_complex(self.C) # (H N)
    local C = tide.view_as_complex(self.C)
    -- A = -torch.exp(self.log_A_real) + 1j * self.A_imag # (H N)
    local A = -tide.exp(self.log_A_real) + J * self.A_imag

    -- Vandermonde multiplication
    -- dtA = A * dt.unsqueeze(-1)  # (H N)
    local dtA = A * dt:unsqueeze(-1)
    -- K = dtA.unsqueeze(-1) * torch.arange(L, device=A.device) # (H N L)
    local K = dtA:unsqueeze(-1) * tide.arange(L, { device = A.device })
    -- C = C * (torch.exp(dtA)-1.) / A
    C = C * (tide.exp(dtA) - 1.) / A
    -- K = 2 * torch.einsum('hn, hnl -> hl', C, torch.exp(K)).real
    K = 2 * tide.einsum("hn, hnl -> hl", C, tide.exp(K)).real

    return K
end

-- def register(self, name, tensor, lr=None):
function S4DKernel:register(name, tensor, lr)
    -- Register a tensor with a configurable learning rate and 0 weight decay

    if lr == 0.0 then
        self:register_buffer(name, tensor)
    else
        self:register_parameter(name, nn.Parameter(tensor))

        -- optim = {"weight_decay": 0.0}
        local optim = { weight_decay = 0.0 }
        if lr ~= nil then optim["lr"] = lr end
        -- setattr(getattr(self, name), "_optim", optim)
        self[name]._optim = optim
    end
end

-- class S4D(nn.Module):
local S4D = nn.Module:extend("S4D")
-- def __init__(self, d_model, d_state=64, dropout=0.0, transposed=True, **kernel_args):
function S4D:init(d_model, opts)
    nn.Module.init(self)
    opts = opts or {}
    local d_state, dropout = opts.d_state or 64, opts.dropout or 0.0
    local transposed = opts.transposed
    if transposed == nil then transposed = true end
    local kernel_args = { dt_min = opts.dt_min, dt_max = opts.dt_max, lr = opts.lr }

    self.h = d_model
    self.n = d_state
    self.d_output = self.h
    self.transposed = transposed

    -- self.D = nn.Parameter(torch.randn(self.h))
    self.D = nn.Parameter(tide.randn(self.h))

    -- SSM Kernel
    -- self.kernel = S4DKernel(self.h, N=self.n, **kernel_args)
    kernel_args.N = self.n
    self.kernel = S4DKernel(self.h, kernel_args)

    -- Pointwise
    self.activation = nn.GELU()
    -- dropout_fn = nn.Dropout2d # NOTE: bugged in PyTorch 1.11
    local dropout_fn = DropoutNd
    -- self.dropout = dropout_fn(dropout) if dropout > 0.0 else nn.Identity()
    self.dropout = dropout > 0.0 and dropout_fn(dropout) or nn.Identity()

    -- position-wise output transform to mix features
    self.output_linear = nn.Sequential(
        -- nn.Conv1d(self.h, 2*self.h, kernel_size=1),
        nn.Conv1d(self.h, 2 * self.h, { kernel_size = 1 }),
        -- nn.GLU(dim=-2),
        nn.GLU({ dim = -2 })
    )
end

-- def forward(self, u, **kwargs): # absorbs return_output and transformer src mask
function S4D:forward(u)
    -- Input and output shape (B, H, L)
    -- if not self.transposed: u = u.transpose(-1, -2)
    if not self.transposed then u = u:transpose(-1, -2) end
    local L = u:size(-1)

    -- Compute SSM Kernel
    -- k = self.kernel(L=L) # (H L)
    local k = self.kernel(L)

    -- Convolution
    -- k_f = torch.fft.rfft(k, n=2*L) # (H L)
    local k_f = fft.rfft(k, { n = 2 * L })
    -- u_f = torch.fft.rfft(u, n=2*L) # (B H L)
    local u_f = fft.rfft(u, { n = 2 * L })
    -- y = torch.fft.irfft(u_f*k_f, n=2*L)[..., :L] # (B H L)
    local y = fft.irfft(u_f * k_f, { n = 2 * L })[{ "...", { 1, L } }]

    -- Compute D term in state space equation - essentially a skip connection
    -- y = y + u * self.D.unsqueeze(-1)
    y = y + u * self.D:unsqueeze(-1)

    y = self.dropout(self.activation(y))
    y = self.output_linear(y)
    -- if not self.transposed: y = y.transpose(-1, -2)
    if not self.transposed then y = y:transpose(-1, -2) end
    -- return y, None # Return a dummy state to satisfy this repo's interface
    return y, nil
end

---------------------------------------------------------------------------------------------
-- 3. example.py setup_optimizer
---------------------------------------------------------------------------------------------
-- a _optim dict as a key: Python's frozenset(hp.items()) and dict ==
local function hp_key(hp)
    local ks = {}
    for k, v in pairs(hp) do ks[#ks + 1] = k .. "=" .. tostring(v) end
    table.sort(ks)
    return table.concat(ks, ",")
end

-- def setup_optimizer(model, lr, weight_decay, epochs):
local function setup_optimizer(model, lr, weight_decay, epochs)
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
    -- (Unique dicts; sorted() of frozensets is a subset order, here one set)
    local hps, seen = {}, {}
    for _, p in ipairs(all_parameters) do
        if p._optim ~= nil and not seen[hp_key(p._optim)] then
            seen[hp_key(p._optim)] = true
            hps[#hps + 1] = p._optim
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
        for k, v in pairs(hp) do group[k] = v end
        optimizer:add_param_group(group)
    end

    -- Create a lr scheduler
    -- scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, epochs)
    local scheduler = tide.optim.lr_scheduler.CosineAnnealingLR(optimizer, epochs)

    -- (the group summary example.py prints, returned here for the checks)
    local info = {}
    for i, g in ipairs(optimizer.param_groups) do
        info[i] = { n = #g.params, lr = g.lr, weight_decay = g.weight_decay }
    end

    return optimizer, scheduler, info
end

---------------------------------------------------------------------------------------------
-- the checks
---------------------------------------------------------------------------------------------
local H, NS, L, B = 4, 8, 16, 2
local NS2 = math.floor(NS / 2) -- d_state // 2 (Lua 5.1 has no //)

-- each parameter in named_parameters order (k = 1, 2, ...):
-- torch.sin(0.731 * torch.arange(n) + 1.37 * (k - 1)) * 0.3, then log_dt, log_A_real and
-- A_imag set as S4DKernel makes them (their formulas, no draw)
local function fill(model)
    tide.no_grad(function()
        for k, np_ in ipairs(model:named_parameters()) do
            local p = np_[2]
            local v = (tide.arange(p:numel()):float() * 0.731 + 1.37 * (k - 1)):sin() * 0.3
            p:copy_(v:view(p.shape))
        end
        local kr = model.kernel
        -- log_dt = linspace(0, 1, H) * (log(dt_max) - log(dt_min)) + log(dt_min), dt 1e-3..0.1
        kr.log_dt:copy_(tide.linspace(0, 1, H) * (math.log(0.1) - math.log(0.001))
            + math.log(0.001))
        kr.log_A_real:copy_(tide.log(0.5 * tide.ones(H, NS2))
            + 0.1 * tide.arange(H * NS2):float():cos():view(H, NS2))
        kr.A_imag:copy_(math.pi * einops.repeat_(tide.arange(NS2), "n -> h n", { h = H }))
    end)
end

-- torch.sin(a * torch.arange(n).float() + b)
local function seq(n, a, b)
    return (tide.arange(n):float() * a + b):sin()
end

-- the checks: the first values, then sum, abs sum and abs sum about the mean
local function summary(t, n)
    local f = t:detach():flatten():tolist()
    local out = {}
    for i = 1, n or 0 do out[i] = f[i] end
    local d = t:detach()
    out[#out + 1] = d:sum():item()
    out[#out + 1] = d:abs():sum():item()
    out[#out + 1] = (d - d:mean()):abs():sum():item()
    return out
end

-- PyTorch 1.13's values (/tmp script: the same module in torch, the same fill and inputs)
local REF = {
    K = { 0.365372241, 1.18298697, 1.25616181 },
    K4 = {
        0.0461727679, 0.101518735, 0.107833415, 0.0493513346, -0.0405949429, -0.106911197,
        -0.114527442, -0.0714883059
    },
    y = {
        0.112363987, 0.125568613, 0.140829921, 0.157674357, 0.174664199, 0.187288687, 0.188589856,
        0.17533122, 0.28856802, 12.1591072, 12.1313381
    },
    losses = { 0.528177857, 0.524576306 },
    lrs = { 0.005, 0.0005 },
    D = {
        0.0184807535, 0.21878314, 0.316699117, 0.225310177, 0.779273152, 0.779273152, 0.35267511
    },
    C = {
        0.275457919, 0.258873433, 0.0729250386, -0.104377754, 0.0462442636, 6.00704479, 6.00548363
    },
    log_dt = {
        -6.90955925, -5.37455034, -3.83948112, -2.30443978, -18.42803, 18.42803, 6.14018869
    },
    log_A_real = {
        -0.591613948, -0.638008118, -0.736210942, -0.793418348, -11.0055017, 11.0055017, 1.01294589
    },
    A_imag = {
        0.00164003647, 3.14015651, 6.28151608, 9.42580414, 75.3979111, 75.3979111, 50.2499847
    },
    w = { 0.15742451, 0.307377338, 0.287563086, 0.0932299495, 0.253130674, 6.38439274, 6.36857224 },
    b = { -0.176852867, 1.45241809, 1.45241809 },
}

describe("state-spaces/s4 s4d.py", function()
    it("S4DKernel: shapes, _optim on the registered parameters, lr = 0 makes buffers", function()
        tide.manual_seed(0)
        local kr = S4DKernel(H, { N = NS, lr = 1e-3 })
        assert.same({ H, NS2, 2 }, kr.C.shape)
        assert.same({ H }, kr.log_dt.shape)
        local ldt = kr.log_dt:tolist()
        for i = 1, H do
            assert.is_true(ldt[i] >= math.log(0.001) and ldt[i] <= math.log(0.1))
        end
        assert.same({ weight_decay = 0.0, lr = 1e-3 }, kr.log_A_real._optim)
        assert.same({ weight_decay = 0.0, lr = 1e-3 }, kr.A_imag._optim)
        assert.is_nil(kr.C._optim)
        assert.equal(4, #kr:parameters())
        local kb = S4DKernel(H, { N = NS, lr = 0.0 })
        assert.equal(1, #kb:parameters())
        assert.equal(3, #kb:buffers())
        local kn = S4DKernel(H, { N = NS })
        assert.same({ weight_decay = 0.0 }, kn.log_dt._optim)
        assert.same({ H, L }, kn(L).shape)
    end)

    it("DropoutNd: a mask tied over the length, scaled by 1 / (1 - p); eval is identity", function()
        tide.manual_seed(1)
        local d = DropoutNd(0.5)
        local x = tide.ones(3, 4, 16)
        local y = d(x)
        assert.same({ 3, 4, 16 }, y.shape)
        local t = y:tolist()
        local zeros, twos = 0, 0
        for b = 1, 3 do
            for c = 1, 4 do
                local v = t[b][c][1]
                assert.is_true(v == 0 or v == 2)
                if v == 0 then zeros = zeros + 1 else twos = twos + 1 end
                for l = 2, 16 do assert.equal(v, t[b][c][l]) end
            end
        end
        assert.is_true(zeros > 0 and twos > 0)
        d:eval()
        assert.equal(x, d(x))
        assert.same({ 2 }, d.binomial:sample({ 2 }).shape)
        assert.has_error(function() DropoutNd(1.5) end,
            "dropout probability has to be in [0, 1), but got 1.5")
    end)

    it("S4D: kernel K, layer output, groups, losses and parameters after 2 AdamW steps", function()
        tide.manual_seed(0)
        -- S4D(d_model, dropout=dropout, transposed=True, lr=min(0.001, args.lr))
        local model = S4D(H, { d_state = NS, dropout = 0.0, transposed = true, lr = 1e-3 })
        fill(model)
        local u = seq(B * H * L, 0.37, 0.5):view(B, H, L)
        local target = seq(B * H * L, 0.23, 1.1):view(B, H, L)

        local K = model.kernel(L)
        assert.same({ H, L }, K.shape)
        assert_close_list(REF.K, summary(K), 1e-4, "K")
        assert_close_list(REF.K4, K[H]:narrow(1, 1, 8):tolist(), 1e-4, "K[H, :8]")
        local y0 = model(u)
        assert.same({ B, H, L }, y0.shape)
        assert_close_list(REF.y, summary(y0, 8), 1e-4, "S4D output")
        -- transposed=False: (B, L, H) in and out, the same layer
        model.transposed = false
        local y1, state = model(u:transpose(-1, -2))
        model.transposed = true
        assert.is_nil(state)
        assert.is_true(y1:transpose(-1, -2):allclose(y0, 1e-5, 1e-6))

        -- optimizer, scheduler = setup_optimizer(model, lr=args.lr, weight_decay=..., epochs=...)
        local optimizer, scheduler, info = setup_optimizer(model, 0.01, 0.01, 4)
        assert.same({ { n = 4, lr = 0.01, weight_decay = 0.01 },
            { n = 3, lr = 1e-3, weight_decay = 0.0 } }, info)

        local losses = {}
        for _ = 1, 2 do
            optimizer:zero_grad()
            local outputs = model(u)
            -- loss = F.mse_loss(outputs, targets)
            local loss = nn.functional.mse_loss(outputs, target)
            loss:backward()
            optimizer:step()
            scheduler:step()
            losses[#losses + 1] = loss:item()
        end
        assert_close_list(REF.losses, losses, 1e-5, "losses")
        assert.is_true(losses[2] < losses[1])
        assert_close_list(REF.lrs, { optimizer.param_groups[1].lr,
            optimizer.param_groups[2].lr }, 1e-6, "lrs")
        assert_close_list(REF.D, summary(model.D, 4), 1e-4, "D")
        assert_close_list(REF.C, summary(model.kernel.C, 4), 1e-4, "C")
        assert_close_list(REF.log_dt, summary(model.kernel.log_dt, 4), 1e-4, "log_dt")
        assert_close_list(REF.log_A_real, summary(model.kernel.log_A_real, 4), 1e-4, "log_A_real")
        assert_close_list(REF.A_imag, summary(model.kernel.A_imag, 4), 1e-4, "A_imag")
        assert_close_list(REF.w, summary(model.output_linear[1].weight, 4), 1e-4, "conv w")
        assert_close_list(REF.b, summary(model.output_linear[1].bias), 1e-4, "conv b")
        assert_finite(losses[2], "loss")
    end)
end)
