-- ported_scripts60_spec.lua — karpathy/pytorch-normalizing-flows: nflib/made.py (MaskedLinear
-- with set_mask, MADE with its masks, natural_ordering, num_masks, update_masks), nflib/nets.py
-- (LeafParam, MLP, ARMLP), nflib/flows.py (AffineConstantFlow, ActNorm, AffineHalfFlow,
-- SlowMAF, MAF, IAF, Invertible1x1Conv, NormalizingFlow, NormalizingFlowModel) and the training
-- loop of nflib1.ipynb (two moons, a logistic or a Gaussian prior, Adam, the summed NLL), ported
-- line for line at tiny sizes. The Python line stands above each Lua line that differs from it.
-- Dims are 1-based (Python's dim=1 is dim = 2); MADE's orderings m[l] keep Python's 0-based
-- values (they are ranks, compared with each other, never used as indices).
-- nflib/spline_flows.py (searchsorted, unconstrained_RQS, RQS, NSF_AR, NSF_CL).
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local D = tide.distributions
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

-- Python's truth of a parity bit: 0 is false there, true in Lua
local function truthy(v)
    return v ~= nil and v ~= false and v ~= 0
end

---------------------------------------------------------------------------------------------
-- nflib/made.py
---------------------------------------------------------------------------------------------
-- class MaskedLinear(nn.Linear):
local MaskedLinear = nn.Linear:extend("MaskedLinear")
-- def __init__(self, in_features, out_features, bias=True):
function MaskedLinear:init(in_features, out_features, bias)
    if bias == nil then bias = true end
    -- super().__init__(in_features, out_features, bias)
    nn.Linear.init(self, in_features, out_features, bias)
    -- self.register_buffer('mask', torch.ones(out_features, in_features))
    self:register_buffer("mask", tide.ones(out_features, in_features))
end

function MaskedLinear:set_mask(mask)
    -- self.mask.data.copy_(torch.from_numpy(mask.astype(np.uint8).T))
    self.mask.data:copy_(mask:to("uint8").T)
end

function MaskedLinear:forward(input)
    return F.linear(input, self.mask * self.weight, self.bias)
end

-- GAP (NET_FIELD): PyTorch's Module.__setattr__ registers a Module assigned to a field that
-- already holds a plain value (MADE's `self.net = []` then `self.net = nn.Sequential(...)`,
-- AffineHalfFlow's lambda then `net_class(...)`). tide's Module registers on a field's first
-- assignment only (Lua calls __newindex for absent keys), so there the Module would stay a
-- plain field, its parameters missing from parameters() without an error: each such field is
-- assigned once here.
-- class MADE(nn.Module):
local MADE = nn.Module:extend("MADE")
-- def __init__(self, nin, hidden_sizes, nout, num_masks=1, natural_ordering=False):
function MADE:init(nin, hidden_sizes, nout, num_masks, natural_ordering)
    num_masks, natural_ordering = num_masks or 1, natural_ordering or false
    self.nin = nin
    self.nout = nout
    self.hidden_sizes = hidden_sizes
    assert(self.nout % self.nin == 0, "nout must be integer multiple of nin")

    -- define a simple MLP neural net
    -- self.net = []
    local net = {} -- GAP: see NET_FIELD above
    -- hs = [nin] + hidden_sizes + [nout]
    local hs = { nin, unpack(hidden_sizes) }
    hs[#hs + 1] = nout
    -- for h0,h1 in zip(hs, hs[1:]):
    for i = 1, #hs - 1 do
        local h0, h1 = hs[i], hs[i + 1]
        -- self.net.extend([MaskedLinear(h0, h1), nn.ReLU()])
        net[#net + 1] = MaskedLinear(h0, h1)
        net[#net + 1] = nn.ReLU()
    end
    -- self.net.pop() # pop the last ReLU for the output layer
    table.remove(net)
    -- self.net = nn.Sequential(*self.net)
    self.net = nn.Sequential(unpack(net))

    -- seeds for orders/connectivities of the model ensemble
    self.natural_ordering = natural_ordering
    self.num_masks = num_masks
    self.seed = 0 -- for cycling through num_masks orderings

    self.m = {}
    -- self.update_masks() # builds the initial self.m connectivity
    self:update_masks()
end

function MADE:update_masks()
    -- if self.m and self.num_masks == 1: return # only a single seed, skip for efficiency
    if next(self.m) ~= nil and self.num_masks == 1 then return end
    -- L = len(self.hidden_sizes)
    local L = #self.hidden_sizes

    -- fetch the next seed and construct a random stream
    -- rng = np.random.RandomState(self.seed)
    -- GAP: numpy's RandomState stream: a tide.Generator seeded alike draws other numbers
    local rng = tide.Generator():manual_seed(self.seed)
    self.seed = (self.seed + 1) % self.num_masks

    -- sample the order of the inputs and the connectivity of all neurons
    -- self.m[-1] = np.arange(self.nin) if self.natural_ordering else rng.permutation(self.nin)
    self.m[-1] = self.natural_ordering and tide.arange(self.nin) or
        tide.randperm(self.nin, { generator = rng }) - 1
    -- for l in range(L):
    for l = 0, L - 1 do
        -- self.m[l] = rng.randint(self.m[l-1].min(), self.nin-1, size=self.hidden_sizes[l])
        self.m[l] = tide.randint(self.m[l - 1]:min():item(), self.nin - 1,
            { self.hidden_sizes[l + 1] }, { generator = rng })
    end

    -- construct the mask matrices
    -- masks = [self.m[l-1][:,None] <= self.m[l][None,:] for l in range(L)]
    local masks = {}
    for l = 0, L - 1 do
        masks[#masks + 1] = self.m[l - 1][{ {}, tide.newaxis }]:le(self.m[l][{ tide.newaxis, {} }])
    end
    -- masks.append(self.m[L-1][:,None] < self.m[-1][None,:])
    masks[#masks + 1] = self.m[L - 1][{ {}, tide.newaxis }]:lt(self.m[-1][{ tide.newaxis, {} }])

    -- handle the case where nout = nin * k, for integer k > 1
    if self.nout > self.nin then
        -- k = int(self.nout / self.nin)
        local k = math.floor(self.nout / self.nin)
        -- replicate the mask across the other outputs
        -- masks[-1] = np.concatenate([masks[-1]]*k, axis=1)
        local rep = {}
        for r = 1, k do rep[r] = masks[#masks] end
        masks[#masks] = tide.cat(rep, { dim = 2 })
    end

    -- set the masks in all MaskedLinear layers
    -- layers = [l for l in self.net.modules() if isinstance(l, MaskedLinear)]
    local layers = {}
    for _, l in ipairs(self.net:modules()) do
        if tide.isinstance(l, MaskedLinear) then layers[#layers + 1] = l end
    end
    -- for l,m in zip(layers, masks):
    for i = 1, math.min(#layers, #masks) do
        -- l.set_mask(m)
        layers[i]:set_mask(masks[i])
    end
end

function MADE:forward(x)
    return self.net(x)
end

---------------------------------------------------------------------------------------------
-- nflib/nets.py
---------------------------------------------------------------------------------------------
-- class LeafParam(nn.Module):
local LeafParam = nn.Module:extend("LeafParam")
function LeafParam:init(n)
    -- self.p = nn.Parameter(torch.zeros(1,n))
    self.p = nn.Parameter(tide.zeros(1, n))
end

function LeafParam:forward(x)
    -- return self.p.expand(x.size(0), self.p.size(1))
    return self.p:expand(x:size(1), self.p:size(2))
end

-- class MLP(nn.Module):
local MLP = nn.Module:extend("MLP")
function MLP:init(nin, nout, nh)
    self.net = nn.Sequential(
        nn.Linear(nin, nh),
        nn.LeakyReLU(0.2),
        nn.Linear(nh, nh),
        nn.LeakyReLU(0.2),
        nn.Linear(nh, nh),
        nn.LeakyReLU(0.2),
        nn.Linear(nh, nout)
    )
end

function MLP:forward(x)
    return self.net(x)
end

-- class ARMLP(nn.Module):
local ARMLP = nn.Module:extend("ARMLP")
function ARMLP:init(nin, nout, nh)
    -- self.net = MADE(nin, [nh, nh, nh], nout, num_masks=1, natural_ordering=True)
    self.net = MADE(nin, { nh, nh, nh }, nout, 1, true)
end

function ARMLP:forward(x)
    return self.net(x)
end

---------------------------------------------------------------------------------------------
-- nflib/flows.py
---------------------------------------------------------------------------------------------
-- class AffineConstantFlow(nn.Module):
local AffineConstantFlow = nn.Module:extend("AffineConstantFlow")
-- def __init__(self, dim, scale=True, shift=True):
function AffineConstantFlow:init(dim, opts)
    opts = opts or {}
    local scale, shift = opts.scale ~= false, opts.shift ~= false
    -- self.s = nn.Parameter(torch.randn(1, dim, requires_grad=True)) if scale else None
    self.s = scale and nn.Parameter(tide.randn(1, dim)) or nil
    -- self.t = nn.Parameter(torch.randn(1, dim, requires_grad=True)) if shift else None
    self.t = shift and nn.Parameter(tide.randn(1, dim)) or nil
end

function AffineConstantFlow:forward(x)
    -- s = self.s if self.s is not None else x.new_zeros(x.size())
    local s = self.s ~= nil and self.s or x:new_zeros(x:size())
    -- t = self.t if self.t is not None else x.new_zeros(x.size())
    local t = self.t ~= nil and self.t or x:new_zeros(x:size())
    -- z = x * torch.exp(s) + t
    local z = x * tide.exp(s) + t
    -- log_det = torch.sum(s, dim=1)
    local log_det = tide.sum(s, { dim = 2 })
    return z, log_det
end

function AffineConstantFlow:backward(z)
    -- s = self.s if self.s is not None else z.new_zeros(z.size())
    local s = self.s ~= nil and self.s or z:new_zeros(z:size())
    -- t = self.t if self.t is not None else z.new_zeros(z.size())
    local t = self.t ~= nil and self.t or z:new_zeros(z:size())
    -- x = (z - t) * torch.exp(-s)
    local x = (z - t) * tide.exp(-s)
    -- log_det = torch.sum(-s, dim=1)
    local log_det = tide.sum(-s, { dim = 2 })
    return x, log_det
end

-- class ActNorm(AffineConstantFlow):
local ActNorm = AffineConstantFlow:extend("ActNorm")
-- def __init__(self, *args, **kwargs):
function ActNorm:init(...)
    -- super().__init__(*args, **kwargs)
    AffineConstantFlow.init(self, ...)
    self.data_dep_init_done = false
end

function ActNorm:forward(x)
    -- first batch is used for init
    if not self.data_dep_init_done then
        -- assert self.s is not None and self.t is not None # for now
        assert(self.s ~= nil and self.t ~= nil) -- for now
        -- self.s.data = (-torch.log(x.std(dim=0, keepdim=True))).detach()
        self.s.data = (-tide.log(x:std({ dim = 1, keepdim = true }))):detach()
        -- self.t.data = (-(x * torch.exp(self.s)).mean(dim=0, keepdim=True)).detach()
        self.t.data = (-(x * tide.exp(self.s)):mean({ dim = 1, keepdim = true })):detach()
        self.data_dep_init_done = true
    end
    -- return super().forward(x)
    return AffineConstantFlow.forward(self, x)
end

-- class AffineHalfFlow(nn.Module):
local AffineHalfFlow = nn.Module:extend("AffineHalfFlow")
-- def __init__(self, dim, parity, net_class=MLP, nh=24, scale=True, shift=True):
function AffineHalfFlow:init(dim, parity, opts)
    opts = opts or {}
    local net_class, nh = opts.net_class or MLP, opts.nh or 24
    local scale, shift = opts.scale ~= false, opts.shift ~= false
    self.dim = dim
    self.parity = parity
    -- self.s_cond = lambda x: x.new_zeros(x.size(0), self.dim // 2)
    -- self.t_cond = lambda x: x.new_zeros(x.size(0), self.dim // 2)
    -- if scale:
    --     self.s_cond = net_class(self.dim // 2, self.dim // 2, nh)
    -- if shift:
    --     self.t_cond = net_class(self.dim // 2, self.dim // 2, nh)
    -- GAP: see NET_FIELD above: a field set to a function and then to a Module is no child, so
    -- each field is set once, the Module or the lambda
    local half = math.floor(self.dim / 2)
    self.s_cond = scale and net_class(half, half, nh) or
        function(x) return x:new_zeros(x:size(1), half) end
    self.t_cond = shift and net_class(half, half, nh) or
        function(x) return x:new_zeros(x:size(1), half) end
end

function AffineHalfFlow:forward(x)
    -- x0, x1 = x[:,::2], x[:,1::2]
    local x0, x1 = x[{ {}, { 1, -1, 2 } }], x[{ {}, { 2, -1, 2 } }]
    -- if self.parity:
    if truthy(self.parity) then
        x0, x1 = x1, x0
    end
    local s = self.s_cond(x0)
    local t = self.t_cond(x0)
    local z0 = x0 -- untouched half
    -- z1 = torch.exp(s) * x1 + t # transform this half as a function of the other
    local z1 = tide.exp(s) * x1 + t
    if truthy(self.parity) then
        z0, z1 = z1, z0
    end
    -- z = torch.cat([z0, z1], dim=1)
    local z = tide.cat({ z0, z1 }, { dim = 2 })
    -- log_det = torch.sum(s, dim=1)
    local log_det = tide.sum(s, { dim = 2 })
    return z, log_det
end

function AffineHalfFlow:backward(z)
    -- z0, z1 = z[:,::2], z[:,1::2]
    local z0, z1 = z[{ {}, { 1, -1, 2 } }], z[{ {}, { 2, -1, 2 } }]
    if truthy(self.parity) then
        z0, z1 = z1, z0
    end
    local s = self.s_cond(z0)
    local t = self.t_cond(z0)
    local x0 = z0 -- this was the same
    -- x1 = (z1 - t) * torch.exp(-s) # reverse the transform on this half
    local x1 = (z1 - t) * tide.exp(-s)
    if truthy(self.parity) then
        x0, x1 = x1, x0
    end
    -- x = torch.cat([x0, x1], dim=1)
    local x = tide.cat({ x0, x1 }, { dim = 2 })
    -- log_det = torch.sum(-s, dim=1)
    local log_det = tide.sum(-s, { dim = 2 })
    return x, log_det
end

-- class SlowMAF(nn.Module):
local SlowMAF = nn.Module:extend("SlowMAF")
-- def __init__(self, dim, parity, net_class=MLP, nh=24):
function SlowMAF:init(dim, parity, opts)
    opts = opts or {}
    local net_class, nh = opts.net_class or MLP, opts.nh or 24
    self.dim = dim
    self.layers = nn.ModuleDict()
    -- self.layers[str(0)] = LeafParam(2)
    self.layers[tostring(0)] = LeafParam(2)
    -- for i in range(1, dim):
    for i = 1, dim - 1 do
        -- self.layers[str(i)] = net_class(i, 2, nh)
        self.layers[tostring(i)] = net_class(i, 2, nh)
    end
    -- self.order = list(range(dim)) if parity else list(range(dim))[::-1]
    -- (1-based: the columns they index)
    self.order = {}
    for i = 1, dim do
        self.order[i] = truthy(parity) and i or dim + 1 - i
    end
end

function SlowMAF:forward(x)
    -- z = torch.zeros_like(x)
    local z = tide.zeros_like(x)
    -- log_det = torch.zeros(x.size(0))
    local log_det = tide.zeros(x:size(1))
    -- for i in range(self.dim):
    for i = 0, self.dim - 1 do
        -- st = self.layers[str(i)](x[:, :i])
        local st = self.layers[tostring(i)](x[{ {}, { 1, i } }])
        -- s, t = st[:, 0], st[:, 1]
        local s, t = st[{ {}, 1 }], st[{ {}, 2 }]
        -- z[:, self.order[i]] = x[:, i] * torch.exp(s) + t
        z[{ {}, self.order[i + 1] }] = x[{ {}, i + 1 }] * tide.exp(s) + t
        -- log_det += s
        log_det:add_(s)
    end
    return z, log_det
end

function SlowMAF:backward(z)
    -- x = torch.zeros_like(z)
    local x = tide.zeros_like(z)
    -- log_det = torch.zeros(z.size(0))
    local log_det = tide.zeros(z:size(1))
    for i = 0, self.dim - 1 do
        -- st = self.layers[str(i)](x[:, :i])
        local st = self.layers[tostring(i)](x[{ {}, { 1, i } }])
        -- s, t = st[:, 0], st[:, 1]
        local s, t = st[{ {}, 1 }], st[{ {}, 2 }]
        -- x[:, i] = (z[:, self.order[i]] - t) * torch.exp(-s)
        x[{ {}, i + 1 }] = (z[{ {}, self.order[i + 1] }] - t) * tide.exp(-s)
        -- log_det += -s
        log_det:add_(-s)
    end
    return x, log_det
end

-- class MAF(nn.Module):
local MAF = nn.Module:extend("MAF")
-- def __init__(self, dim, parity, net_class=ARMLP, nh=24):
function MAF:init(dim, parity, opts)
    opts = opts or {}
    local net_class, nh = opts.net_class or ARMLP, opts.nh or 24
    self.dim = dim
    -- self.net = net_class(dim, dim*2, nh)
    self.net = net_class(dim, dim * 2, nh)
    self.parity = parity
end

function MAF:forward(x)
    -- here we see that we are evaluating all of z in parallel, so density estimation will be fast
    local st = self.net(x)
    -- s, t = st.split(self.dim, dim=1)
    local s, t = unpack(st:split(self.dim, { dim = 2 }))
    -- z = x * torch.exp(s) + t
    local z = x * tide.exp(s) + t
    -- reverse order, so if we stack MAFs correct things happen
    -- z = z.flip(dims=(1,)) if self.parity else z
    z = truthy(self.parity) and z:flip({ 2 }) or z
    -- log_det = torch.sum(s, dim=1)
    local log_det = tide.sum(s, { dim = 2 })
    return z, log_det
end

function MAF:backward(z)
    -- we have to decode the x one at a time, sequentially
    -- x = torch.zeros_like(z)
    local x = tide.zeros_like(z)
    -- log_det = torch.zeros(z.size(0))
    local log_det = tide.zeros(z:size(1))
    -- z = z.flip(dims=(1,)) if self.parity else z
    z = truthy(self.parity) and z:flip({ 2 }) or z
    -- for i in range(self.dim):
    for i = 1, self.dim do
        -- st = self.net(x.clone()) # clone to avoid in-place op errors if using IAF
        local st = self.net(x:clone())
        -- s, t = st.split(self.dim, dim=1)
        local s, t = unpack(st:split(self.dim, { dim = 2 }))
        -- x[:, i] = (z[:, i] - t[:, i]) * torch.exp(-s[:, i])
        x[{ {}, i }] = (z[{ {}, i }] - t[{ {}, i }]) * tide.exp(-s[{ {}, i }])
        -- log_det += -s[:, i]
        log_det:add_(-s[{ {}, i }])
    end
    return x, log_det
end

-- class IAF(MAF):
local IAF = MAF:extend("IAF")
-- def __init__(self, *args, **kwargs):
function IAF:init(...)
    -- super().__init__(*args, **kwargs)
    MAF.init(self, ...)
    -- reverse the flow, giving an Inverse Autoregressive Flow (IAF) instead,
    -- where sampling will be fast but density estimation slow
    self.forward, self.backward = self.backward, self.forward
end

-- class Invertible1x1Conv(nn.Module):
local Invertible1x1Conv = nn.Module:extend("Invertible1x1Conv")
function Invertible1x1Conv:init(dim)
    self.dim = dim
    -- Q = torch.nn.init.orthogonal_(torch.randn(dim, dim))
    local Q = nn.init.orthogonal_(tide.randn(dim, dim))
    -- P, L, U = torch.lu_unpack(*Q.lu())
    local P, L, U = tide.lu_unpack(Q:lu())
    self.P = P -- remains fixed during optimization
    self.L = nn.Parameter(L) -- lower triangular portion
    -- self.S = nn.Parameter(U.diag()) # "crop out" the diagonal to its own parameter
    self.S = nn.Parameter(U:diag())
    -- self.U = nn.Parameter(torch.triu(U, diagonal=1)) # "crop out" diagonal, stored in S
    self.U = nn.Parameter(tide.triu(U, 1))
end

function Invertible1x1Conv:_assemble_W()
    -- assemble W from its pieces (P, L, U, S)
    -- L = torch.tril(self.L, diagonal=-1) + torch.diag(torch.ones(self.dim))
    local L = tide.tril(self.L, -1) + tide.diag(tide.ones(self.dim))
    -- U = torch.triu(self.U, diagonal=1)
    local U = tide.triu(self.U, 1)
    -- W = self.P @ L @ (U + torch.diag(self.S))
    local W = self.P:matmul(L):matmul(U + tide.diag(self.S))
    return W
end

function Invertible1x1Conv:forward(x)
    local W = self:_assemble_W()
    -- z = x @ W
    local z = x:matmul(W)
    -- log_det = torch.sum(torch.log(torch.abs(self.S)))
    local log_det = tide.sum(tide.log(tide.abs(self.S)))
    return z, log_det
end

function Invertible1x1Conv:backward(z)
    local W = self:_assemble_W()
    -- W_inv = torch.inverse(W)
    local W_inv = tide.inverse(W)
    -- x = z @ W_inv
    local x = z:matmul(W_inv)
    -- log_det = -torch.sum(torch.log(torch.abs(self.S)))
    local log_det = -tide.sum(tide.log(tide.abs(self.S)))
    return x, log_det
end

-- class NormalizingFlow(nn.Module):
local NormalizingFlow = nn.Module:extend("NormalizingFlow")
function NormalizingFlow:init(flows)
    self.flows = nn.ModuleList(flows)
end

function NormalizingFlow:forward(x)
    -- m, _ = x.shape
    local m = x:size(1)
    -- log_det = torch.zeros(m)
    local log_det = tide.zeros(m)
    -- zs = [x]
    local zs = { x }
    -- for flow in self.flows:
    for _, flow in ipairs(self.flows) do
        -- x, ld = flow.forward(x)
        local ld
        x, ld = flow:forward(x)
        -- log_det += ld
        log_det:add_(ld)
        -- zs.append(x)
        zs[#zs + 1] = x
    end
    return zs, log_det
end

function NormalizingFlow:backward(z)
    -- m, _ = z.shape
    local m = z:size(1)
    -- log_det = torch.zeros(m)
    local log_det = tide.zeros(m)
    -- xs = [z]
    local xs = { z }
    -- for flow in self.flows[::-1]:
    for i = #self.flows, 1, -1 do
        local flow = self.flows[i]
        -- z, ld = flow.backward(z)
        local ld
        z, ld = flow:backward(z)
        -- log_det += ld
        log_det:add_(ld)
        -- xs.append(z)
        xs[#xs + 1] = z
    end
    return xs, log_det
end

-- class NormalizingFlowModel(nn.Module):
local NormalizingFlowModel = nn.Module:extend("NormalizingFlowModel")
function NormalizingFlowModel:init(prior, flows)
    self.prior = prior
    self.flow = NormalizingFlow(flows)
end

function NormalizingFlowModel:forward(x)
    -- zs, log_det = self.flow.forward(x)
    local zs, log_det = self.flow:forward(x)
    -- prior_logprob = self.prior.log_prob(zs[-1]).view(x.size(0), -1).sum(1)
    local prior_logprob = self.prior:log_prob(zs[#zs]):view(x:size(1), -1):sum(2)
    return zs, prior_logprob, log_det
end

function NormalizingFlowModel:backward(z)
    -- xs, log_det = self.flow.backward(z)
    local xs, log_det = self.flow:backward(z)
    return xs, log_det
end

function NormalizingFlowModel:sample(num_samples)
    -- z = self.prior.sample((num_samples,))
    local z = self.prior:sample({ num_samples })
    -- xs, _ = self.flow.backward(z)
    local xs = self.flow:backward(z)
    return xs
end

---------------------------------------------------------------------------------------------
-- nflib/spline_flows.py
---------------------------------------------------------------------------------------------
local DEFAULT_MIN_BIN_WIDTH = 1e-3
local DEFAULT_MIN_BIN_HEIGHT = 1e-3
local DEFAULT_MIN_DERIVATIVE = 1e-3

-- def searchsorted(bin_locations, inputs, eps=1e-6):
local function searchsorted(bin_locations, inputs, eps)
    eps = eps or 1e-6
    -- bin_locations[..., -1] += eps
    bin_locations[{ "...", -1 }]:add_(eps)
    -- return torch.sum(inputs[..., None] >= bin_locations, dim=-1) - 1
    -- (1-based: the count itself is the bin, for gather)
    return tide.sum(inputs[{ "...", tide.newaxis }]:ge(bin_locations), { dim = -1 })
end

local function RQS(inputs, unnormalized_widths, unnormalized_heights,
                   unnormalized_derivatives, inverse, left, right, bottom, top, min_bin_width,
                   min_bin_height, min_derivative)
    -- if torch.min(inputs) < left or torch.max(inputs) > right:
    if tide.min(inputs):item() < left or tide.max(inputs):item() > right then
        error("Input outside domain")
    end

    -- num_bins = unnormalized_widths.shape[-1]
    local num_bins = unnormalized_widths:size(-1)

    if min_bin_width * num_bins > 1.0 then
        error("Minimal bin width too large for the number of bins")
    end
    if min_bin_height * num_bins > 1.0 then
        error("Minimal bin height too large for the number of bins")
    end

    -- widths = F.softmax(unnormalized_widths, dim=-1)
    local widths = F.softmax(unnormalized_widths, -1)
    widths = min_bin_width + (1 - min_bin_width * num_bins) * widths
    -- cumwidths = torch.cumsum(widths, dim=-1)
    local cumwidths = tide.cumsum(widths, -1)
    -- cumwidths = F.pad(cumwidths, pad=(1, 0), mode='constant', value=0.0)
    cumwidths = F.pad(cumwidths, { 1, 0 }, "constant", 0.0)
    cumwidths = (right - left) * cumwidths + left
    -- cumwidths[..., 0] = left
    cumwidths[{ "...", 1 }] = left
    -- cumwidths[..., -1] = right
    cumwidths[{ "...", -1 }] = right
    -- widths = cumwidths[..., 1:] - cumwidths[..., :-1]
    widths = cumwidths[{ "...", { 2, -1 } }] - cumwidths[{ "...", { 1, -2 } }]

    local derivatives = min_derivative + F.softplus(unnormalized_derivatives)

    -- heights = F.softmax(unnormalized_heights, dim=-1)
    local heights = F.softmax(unnormalized_heights, -1)
    heights = min_bin_height + (1 - min_bin_height * num_bins) * heights
    -- cumheights = torch.cumsum(heights, dim=-1)
    local cumheights = tide.cumsum(heights, -1)
    -- cumheights = F.pad(cumheights, pad=(1, 0), mode='constant', value=0.0)
    cumheights = F.pad(cumheights, { 1, 0 }, "constant", 0.0)
    cumheights = (top - bottom) * cumheights + bottom
    -- cumheights[..., 0] = bottom
    cumheights[{ "...", 1 }] = bottom
    -- cumheights[..., -1] = top
    cumheights[{ "...", -1 }] = top
    -- heights = cumheights[..., 1:] - cumheights[..., :-1]
    heights = cumheights[{ "...", { 2, -1 } }] - cumheights[{ "...", { 1, -2 } }]

    local bin_idx
    if inverse then
        -- bin_idx = searchsorted(cumheights, inputs)[..., None]
        bin_idx = searchsorted(cumheights, inputs)[{ "...", tide.newaxis }]
    else
        -- bin_idx = searchsorted(cumwidths, inputs)[..., None]
        bin_idx = searchsorted(cumwidths, inputs)[{ "...", tide.newaxis }]
    end

    -- input_cumwidths = cumwidths.gather(-1, bin_idx)[..., 0]
    local input_cumwidths = cumwidths:gather(-1, bin_idx)[{ "...", 1 }]
    -- input_bin_widths = widths.gather(-1, bin_idx)[..., 0]
    local input_bin_widths = widths:gather(-1, bin_idx)[{ "...", 1 }]

    -- input_cumheights = cumheights.gather(-1, bin_idx)[..., 0]
    local input_cumheights = cumheights:gather(-1, bin_idx)[{ "...", 1 }]
    local delta = heights / widths
    -- input_delta = delta.gather(-1, bin_idx)[..., 0]
    local input_delta = delta:gather(-1, bin_idx)[{ "...", 1 }]

    -- input_derivatives = derivatives.gather(-1, bin_idx)[..., 0]
    local input_derivatives = derivatives:gather(-1, bin_idx)[{ "...", 1 }]
    -- input_derivatives_plus_one = derivatives[..., 1:].gather(-1, bin_idx)
    local input_derivatives_plus_one = derivatives[{ "...", { 2, -1 } }]:gather(-1, bin_idx)
    -- input_derivatives_plus_one = input_derivatives_plus_one[..., 0]
    input_derivatives_plus_one = input_derivatives_plus_one[{ "...", 1 }]

    -- input_heights = heights.gather(-1, bin_idx)[..., 0]
    local input_heights = heights:gather(-1, bin_idx)[{ "...", 1 }]

    if inverse then
        local a = (((inputs - input_cumheights) * (input_derivatives
            + input_derivatives_plus_one - 2 * input_delta)
            + input_heights * (input_delta - input_derivatives)))
        local b = (input_heights * input_derivatives - (inputs - input_cumheights)
            * (input_derivatives + input_derivatives_plus_one
            - 2 * input_delta))
        local c = -input_delta * (inputs - input_cumheights)

        -- discriminant = b.pow(2) - 4 * a * c
        local discriminant = b:pow(2) - 4 * a * c
        -- assert (discriminant >= 0).all()
        assert(discriminant:ge(0):all():item())

        -- root = (2 * c) / (-b - torch.sqrt(discriminant))
        local root = (2 * c) / (-b - tide.sqrt(discriminant))
        local outputs = root * input_bin_widths + input_cumwidths

        local theta_one_minus_theta = root * (1 - root)
        local denominator = input_delta
            + ((input_derivatives + input_derivatives_plus_one
            - 2 * input_delta) * theta_one_minus_theta)
        -- derivative_numerator = input_delta.pow(2) * (input_derivatives_plus_one * root.pow(2)
        --     + 2 * input_delta * theta_one_minus_theta + input_derivatives * (1 - root).pow(2))
        local derivative_numerator = input_delta:pow(2)
            * (input_derivatives_plus_one * root:pow(2)
            + 2 * input_delta * theta_one_minus_theta
            + input_derivatives * (1 - root):pow(2))
        -- logabsdet = torch.log(derivative_numerator) - 2 * torch.log(denominator)
        local logabsdet = tide.log(derivative_numerator) - 2 * tide.log(denominator)
        return outputs, -logabsdet
    else
        local theta = (inputs - input_cumwidths) / input_bin_widths
        local theta_one_minus_theta = theta * (1 - theta)

        -- numerator = input_heights * (input_delta * theta.pow(2)
        --     + input_derivatives * theta_one_minus_theta)
        local numerator = input_heights * (input_delta * theta:pow(2)
            + input_derivatives * theta_one_minus_theta)
        local denominator = input_delta + ((input_derivatives
            + input_derivatives_plus_one - 2 * input_delta)
            * theta_one_minus_theta)
        local outputs = input_cumheights + numerator / denominator

        -- derivative_numerator = input_delta.pow(2) * (input_derivatives_plus_one * theta.pow(2)
        --     + 2 * input_delta * theta_one_minus_theta + input_derivatives * (1 - theta).pow(2))
        local derivative_numerator = input_delta:pow(2)
            * (input_derivatives_plus_one * theta:pow(2)
            + 2 * input_delta * theta_one_minus_theta
            + input_derivatives * (1 - theta):pow(2))
        -- logabsdet = torch.log(derivative_numerator) - 2 * torch.log(denominator)
        local logabsdet = tide.log(derivative_numerator) - 2 * tide.log(denominator)
        return outputs, logabsdet
    end
end

-- def unconstrained_RQS(inputs, unnormalized_widths, unnormalized_heights,
--                       unnormalized_derivatives, inverse=False, tail_bound=1., ...):
local function unconstrained_RQS(inputs, unnormalized_widths, unnormalized_heights,
                                 unnormalized_derivatives, inverse, tail_bound)
    tail_bound = tail_bound or 1.
    local min_bin_width, min_bin_height = DEFAULT_MIN_BIN_WIDTH, DEFAULT_MIN_BIN_HEIGHT
    local min_derivative = DEFAULT_MIN_DERIVATIVE
    -- inside_intvl_mask = (inputs >= -tail_bound) & (inputs <= tail_bound)
    local inside_intvl_mask = inputs:ge(-tail_bound):logical_and(inputs:le(tail_bound))
    -- outside_interval_mask = ~inside_intvl_mask
    local outside_interval_mask = inside_intvl_mask:logical_not()

    -- outputs = torch.zeros_like(inputs)
    local outputs = tide.zeros_like(inputs)
    -- logabsdet = torch.zeros_like(inputs)
    local logabsdet = tide.zeros_like(inputs)

    -- unnormalized_derivatives = F.pad(unnormalized_derivatives, pad=(1, 1))
    unnormalized_derivatives = F.pad(unnormalized_derivatives, { 1, 1 })
    -- constant = np.log(np.exp(1 - min_derivative) - 1)
    local constant = math.log(math.exp(1 - min_derivative) - 1)
    -- unnormalized_derivatives[..., 0] = constant
    unnormalized_derivatives[{ "...", 1 }] = constant
    -- unnormalized_derivatives[..., -1] = constant
    unnormalized_derivatives[{ "...", -1 }] = constant

    outputs[outside_interval_mask] = inputs[outside_interval_mask]
    logabsdet[outside_interval_mask] = 0

    -- outputs[inside_intvl_mask], logabsdet[inside_intvl_mask] = RQS(
    local o, l = RQS(
        inputs[inside_intvl_mask],
        -- unnormalized_widths=unnormalized_widths[inside_intvl_mask, :],
        unnormalized_widths[inside_intvl_mask],
        unnormalized_heights[inside_intvl_mask],
        unnormalized_derivatives[inside_intvl_mask],
        inverse,
        -tail_bound, tail_bound, -tail_bound, tail_bound,
        min_bin_width, min_bin_height, min_derivative
    )
    outputs[inside_intvl_mask], logabsdet[inside_intvl_mask] = o, l
    return outputs, logabsdet
end

-- class NSF_AR(nn.Module):
local NSF_AR = nn.Module:extend("NSF_AR")
-- def __init__(self, dim, K=5, B=3, hidden_dim=8, base_network=MLP):
function NSF_AR:init(dim, opts)
    opts = opts or {}
    local K, B, hidden_dim = opts.K or 5, opts.B or 3, opts.hidden_dim or 8
    local base_network = opts.base_network or MLP
    self.dim = dim
    self.K = K
    self.B = B
    self.layers = nn.ModuleList()
    -- self.init_param = nn.Parameter(torch.Tensor(3 * K - 1))
    self.init_param = nn.Parameter(tide.empty(3 * K - 1))
    -- for i in range(1, dim):
    for i = 1, dim - 1 do
        -- self.layers += [base_network(i, 3 * K - 1, hidden_dim)]
        self.layers:extend({ base_network(i, 3 * K - 1, hidden_dim) })
    end
    self:reset_parameters()
end

function NSF_AR:reset_parameters()
    -- init.uniform_(self.init_param, - 1 / 2, 1 / 2)
    nn.init.uniform_(self.init_param, -1 / 2, 1 / 2)
end

-- W, H, D of dim i (0-based, Python's loop variable) from x[:, :i]
-- (written once: forward and backward repeat these lines)
local function ar_params(self, x, i)
    local W, H, Dv
    if i == 0 then
        -- init_param = self.init_param.expand(x.shape[0], 3 * self.K - 1)
        local init_param = self.init_param:expand(x.shape[1], 3 * self.K - 1)
        -- W, H, D = torch.split(init_param, self.K, dim = 1)
        W, H, Dv = unpack(tide.split(init_param, self.K, { dim = 2 }))
    else
        -- out = self.layers[i - 1](x[:, :i])
        local out = self.layers[i](x[{ {}, { 1, i } }])
        W, H, Dv = unpack(tide.split(out, self.K, { dim = 2 }))
    end
    -- W, H = torch.softmax(W, dim = 1), torch.softmax(H, dim = 1)
    W, H = tide.softmax(W, 2), tide.softmax(H, 2)
    W, H = 2 * self.B * W, 2 * self.B * H
    Dv = F.softplus(Dv)
    return W, H, Dv
end

function NSF_AR:forward(x)
    local z = tide.zeros_like(x)
    -- log_det = torch.zeros(z.shape[0])
    local log_det = tide.zeros(z.shape[1])
    for i = 0, self.dim - 1 do
        local W, H, Dv = ar_params(self, x, i)
        -- z[:, i], ld = unconstrained_RQS(x[:, i], W, H, D, inverse=False, tail_bound=self.B)
        local zi, ld = unconstrained_RQS(x[{ {}, i + 1 }], W, H, Dv, false, self.B)
        z[{ {}, i + 1 }] = zi
        log_det:add_(ld)
    end
    return z, log_det
end

function NSF_AR:backward(z)
    local x = tide.zeros_like(z)
    local log_det = tide.zeros(x.shape[1])
    for i = 0, self.dim - 1 do
        local W, H, Dv = ar_params(self, x, i)
        -- x[:, i], ld = unconstrained_RQS(z[:, i], W, H, D, inverse = True, tail_bound = self.B)
        local xi, ld = unconstrained_RQS(z[{ {}, i + 1 }], W, H, Dv, true, self.B)
        x[{ {}, i + 1 }] = xi
        log_det:add_(ld)
    end
    return x, log_det
end

-- class NSF_CL(nn.Module):
local NSF_CL = nn.Module:extend("NSF_CL")
-- def __init__(self, dim, K=5, B=3, hidden_dim=8, base_network=MLP):
function NSF_CL:init(dim, opts)
    opts = opts or {}
    local K, B, hidden_dim = opts.K or 5, opts.B or 3, opts.hidden_dim or 8
    local base_network = opts.base_network or MLP
    self.dim = dim
    self.K = K
    self.B = B
    local half = math.floor(dim / 2)
    -- self.f1 = base_network(dim // 2, (3 * K - 1) * dim // 2, hidden_dim)
    self.f1 = base_network(half, math.floor((3 * K - 1) * dim / 2), hidden_dim)
    -- self.f2 = base_network(dim // 2, (3 * K - 1) * dim // 2, hidden_dim)
    self.f2 = base_network(half, math.floor((3 * K - 1) * dim / 2), hidden_dim)
end

-- the spline parameters of one half: W, H = softmax, scaled to 2B; D = softplus
-- (written once: NSF_CL's forward and backward repeat these five lines four times)
local function spline_params(self, out)
    -- out = self.f1(lower).reshape(-1, self.dim // 2, 3 * self.K - 1)
    out = out:reshape(-1, math.floor(self.dim / 2), 3 * self.K - 1)
    -- W, H, D = torch.split(out, self.K, dim = 2)
    local W, H, Dv = unpack(tide.split(out, self.K, { dim = 3 }))
    -- W, H = torch.softmax(W, dim = 2), torch.softmax(H, dim = 2)
    W, H = tide.softmax(W, 3), tide.softmax(H, 3)
    W, H = 2 * self.B * W, 2 * self.B * H
    Dv = F.softplus(Dv)
    return W, H, Dv
end

function NSF_CL:forward(x)
    -- log_det = torch.zeros(x.shape[0])
    local log_det = tide.zeros(x.shape[1])
    local h = math.floor(self.dim / 2)
    -- lower, upper = x[:, :self.dim // 2], x[:, self.dim // 2:]
    local lower, upper = x[{ {}, { 1, h } }], x[{ {}, { h + 1, -1 } }]
    local W, H, Dv = spline_params(self, self.f1(lower))
    local ld
    upper, ld = unconstrained_RQS(upper, W, H, Dv, false, self.B)
    -- log_det += torch.sum(ld, dim = 1)
    log_det:add_(tide.sum(ld, { dim = 2 }))
    W, H, Dv = spline_params(self, self.f2(upper))
    lower, ld = unconstrained_RQS(lower, W, H, Dv, false, self.B)
    log_det:add_(tide.sum(ld, { dim = 2 }))
    -- return torch.cat([lower, upper], dim = 1), log_det
    return tide.cat({ lower, upper }, { dim = 2 }), log_det
end

function NSF_CL:backward(z)
    local log_det = tide.zeros(z.shape[1])
    local h = math.floor(self.dim / 2)
    local lower, upper = z[{ {}, { 1, h } }], z[{ {}, { h + 1, -1 } }]
    local W, H, Dv = spline_params(self, self.f2(upper))
    local ld
    lower, ld = unconstrained_RQS(lower, W, H, Dv, true, self.B)
    log_det:add_(tide.sum(ld, { dim = 2 }))
    W, H, Dv = spline_params(self, self.f1(lower))
    upper, ld = unconstrained_RQS(upper, W, H, Dv, true, self.B)
    log_det:add_(tide.sum(ld, { dim = 2 }))
    return tide.cat({ lower, upper }, { dim = 2 }), log_det
end

---------------------------------------------------------------------------------------------
-- nflib1.ipynb
---------------------------------------------------------------------------------------------
-- class DatasetMoons:
--     def sample(self, n):
--         moons = datasets.make_moons(n_samples=n, noise=0.05)[0].astype(np.float32)
-- GAP: no sklearn; make_moons (shuffle=False) written out from sklearn's formula
local function make_moons(n, noise)
    local n_out = math.floor(n / 2)
    local n_in = n - n_out
    local a_out = tide.linspace(0, math.pi, n_out)
    local a_in = tide.linspace(0, math.pi, n_in)
    local outer = tide.stack({ tide.cos(a_out), tide.sin(a_out) }, { dim = 2 })
    local inner = tide.stack({ 1 - tide.cos(a_in), 1 - tide.sin(a_in) - 0.5 }, { dim = 2 })
    return tide.cat({ outer, inner }, { dim = 1 }) + noise * tide.randn(n, 2)
end

-- the fixed weights the PyTorch check sets in both: parameter k (named_parameters' order),
-- element i (0-based): 0.3 sin(0.37 (i + 1) + 1.3 k)
local function fill(model)
    tide.no_grad(function()
        for k, p in ipairs(model:parameters()) do
            local i = tide.arange(p:numel()):float()
            p:copy_((0.3 * tide.sin(0.37 * (i + 1) + 1.3 * k)):view(p.shape))
        end
    end)
end

-- PyTorch 1.13 (nflib's files as they are) on the model of the value check below:
-- NormalizingFlowModel(MultivariateNormal(zeros(2), eye(2)), [AffineHalfFlow(2, 0, nh=4),
-- MAF(2, 1, nh=4), AffineConstantFlow(2)]) with fill's weights, x = 1.5 sin(0.9 i + 0.2) (4 x 2),
-- then Adam(lr=1e-2, weight_decay=1e-5) three steps on the summed NLL
local PT = {
    z = { 2.4392264, 0.73516917, 1.3738806, 2.2274828, -0.64562678, -0.96693182, 1.3367445,
        -1.0076911 },
    prior_logprob = { -5.0830269, -5.2624907, -2.5137725, -3.2390409 },
    log_det = { 0.42525414, 0.44486916, 0.42043006, 0.42039892 },
    back_ld = { -0.42525411, -0.44486916, -0.42043003, -0.42039889 },
    losses = { 14.387379, 13.919373, 13.527493 },
}

local function close_tensors(a, b, tol)
    return (a - b):abs():max():item() <= tol
end

-- forward then backward gives x back and log dets of opposite signs
local function assert_invertible(flow, x, what)
    local z, ld = flow:forward(x)
    local xb, ldb = flow:backward(z)
    assert.are.same(x.shape, z.shape)
    assert.is_true(close_tensors(xb, x, 1e-5), what .. ": backward(forward(x)) is not x")
    assert.is_true(close_tensors(ld, -ldb, 1e-5), what .. ": log dets do not cancel")
    assert.is_true(close_tensors(z, x, 1e-3) == false, what .. ": forward is the identity")
    return z, ld
end

describe("karpathy/pytorch-normalizing-flows", function()
    it("each flow inverts, with log dets of opposite signs", function()
        tide.manual_seed(0)
        local x = tide.randn(6, 4)
        assert_invertible(AffineConstantFlow(4), x, "AffineConstantFlow")
        assert_invertible(AffineConstantFlow(4, { shift = false }), x, "AffineConstantFlow")
        local an = ActNorm(4)
        local z = an(x)
        -- the first batch comes out standardized
        assert.is_true(close_tensors(z:mean({ dim = 1 }), tide.zeros(4), 1e-5))
        assert.is_true(close_tensors(z:std({ dim = 1 }), tide.ones(4), 1e-4))
        assert_invertible(an, x * 2 + 1, "ActNorm")
        for parity = 0, 1 do
            local what = " parity " .. parity
            -- dim 2 only: forward's cat([z0, z1]) puts the halves side by side and backward
            -- splits by [::2] again, which undoes it only for halves of one column (PyTorch's
            -- AffineHalfFlow(4, 0) gives x back 0.8 off too)
            local x2 = x[{ {}, { 1, 2 } }]
            assert_invertible(AffineHalfFlow(2, parity, { nh = 8 }), x2, "AffineHalfFlow" .. what)
            assert_invertible(AffineHalfFlow(2, parity, { nh = 8, scale = false }), x2,
                "NICE" .. what)
            assert_invertible(SlowMAF(4, parity, { nh = 8 }), x, "SlowMAF" .. what)
            assert_invertible(MAF(4, parity, { nh = 8 }), x, "MAF" .. what)
            assert_invertible(IAF(4, parity, { nh = 8 }), x, "IAF" .. what)
        end
        local conv = Invertible1x1Conv(4)
        local _, ld = assert_invertible(conv, x, "Invertible1x1Conv")
        assert.are.equal(0, ld:dim())
        -- W = P L U is orthogonal at the start: |det W| = 1
        assert.is_true(math.abs(ld:item()) < 1e-5)
        -- the parameters PyTorch's modules hold
        assert.are.equal(3, #conv:parameters())
        -- SlowMAF(4): LeafParam's p and three MLPs of 4 Linears
        assert.are.equal(1 + 3 * 8, #SlowMAF(4, 1, { nh = 8 }):parameters())
    end)

    it("MADE's output i depends only on the inputs before i in its ordering", function()
        tide.manual_seed(1)
        -- nout = 2 nin: means then stds, each output chunk over the same ordering
        local made = MADE(4, { 12, 12 }, 8, 2, false)
        assert.are.equal(3, #made:buffers())
        local orders = {}
        for round = 1, 2 do
            local order = made.m[-1]:tolist() -- 0-based ranks, a permutation
            orders[round] = table.concat(order, ",")
            local x = tide.randn(1, 4, { requires_grad = true })
            local out = made(x)
            local nonzero = 0
            for k = 1, 8 do
                local i = (k - 1) % 4 + 1
                local g = tide.autograd.grad({ out[{ 1, k }] }, { x }, { retain_graph = true })[1]
                for j = 1, 4 do
                    local v = g[{ 1, j }]:item()
                    if order[j] >= order[i] then
                        assert.are.equal(0, v)
                    elseif v ~= 0 then
                        nonzero = nonzero + 1
                    end
                end
            end
            assert.is_true(nonzero > 0)
            -- num_masks = 2: the next ordering and connectivity
            made:update_masks()
        end
        assert.are.equal(1, made.seed) -- three orderings drawn (seeds 0, 1, 0): 1 is next
        assert.are_not.equal(orders[1], orders[2])
        -- natural_ordering, nin = 2: the hidden ranks are all 0 (randint(0, 1)), as in PyTorch
        local armlp = ARMLP(2, 4, 3)
        assert.are.same({ 0, 1 }, armlp.net.m[-1]:tolist())
        -- masks[0]: m[-1][:,None] <= m[0][None,:]; masks[-1]: m[L-1][:,None] < m[-1][None,:]
        -- twice over (nout = 2 nin); set_mask stores them transposed
        assert.are.same({ { 1, 1, 1 }, { 0, 0, 0 } }, armlp.net.net[1].mask:t():tolist())
        assert.are.same({ { 0, 1, 0, 1 }, { 0, 1, 0, 1 }, { 0, 1, 0, 1 } },
            armlp.net.net[-1].mask:t():tolist())
    end)

    it("a NormalizingFlowModel with fixed weights matches PyTorch and trains as PyTorch", function()
        -- flows = [AffineHalfFlow(dim=2, parity=0, nh=4), MAF(dim=2, parity=1, nh=4),
        --          AffineConstantFlow(dim=2)]
        local flows = { AffineHalfFlow(2, 0, { nh = 4 }), MAF(2, 1, { nh = 4 }),
            AffineConstantFlow(2) }
        -- prior = MultivariateNormal(torch.zeros(2), torch.eye(2))
        local prior = D.MultivariateNormal(tide.zeros(2), tide.eye(2))
        local model = NormalizingFlowModel(prior, flows)
        fill(model)
        assert.are.equal(26, #model:parameters())
        -- x = (1.5 * torch.sin(0.9 * i + 0.2)).view(4, 2)
        local x = (1.5 * tide.sin(0.9 * tide.arange(8):float() + 0.2)):view(4, 2)
        local zs, prior_logprob, log_det = model(x)
        assert.are.equal(4, #zs)
        assert_close_list(PT.z, zs[#zs]:view(-1):tolist(), 1e-5, "z")
        assert_close_list(PT.prior_logprob, prior_logprob:tolist(), 1e-5, "prior_logprob")
        assert_close_list(PT.log_det, log_det:tolist(), 1e-5, "log_det")
        local xs, ld = model:backward(zs[#zs])
        assert_close_list(x:view(-1):tolist(), xs[#xs]:view(-1):tolist(), 1e-5, "backward")
        assert_close_list(PT.back_ld, ld:tolist(), 1e-5, "backward log_det")
        -- optimizer = optim.Adam(model.parameters(), lr=1e-4, weight_decay=1e-5)
        local optimizer = optim.Adam(model:parameters(), { lr = 1e-2, weight_decay = 1e-5 })
        local losses = {}
        for _ = 1, 3 do
            -- zs, prior_logprob, log_det = model(x)
            local _, plp, ldet = model(x)
            -- logprob = prior_logprob + log_det
            local logprob = plp + ldet
            -- loss = -torch.sum(logprob) # NLL
            local loss = -tide.sum(logprob)
            model:zero_grad()
            loss:backward()
            optimizer:step()
            losses[#losses + 1] = loss:item()
        end
        assert_close_list(PT.losses, losses, 1e-4, "losses")
        assert.is_true(losses[3] < losses[2] and losses[2] < losses[1])
    end)

    it("SlowMAF, IAF and Invertible1x1Conv with fixed weights match PyTorch", function()
        -- x = (1.5 * torch.sin(0.9 * i + 0.2)).view(3, 2)
        local x = (1.5 * tide.sin(0.9 * tide.arange(6):float() + 0.2)):view(3, 2)
        local slow = SlowMAF(2, 0, { nh = 4 })
        fill(slow)
        local z, ld = slow(x)
        assert_close_list({ 1.099674, 0.66924906, 0.24897605, 2.1059995, -1.3708136,
            -0.96947789 }, z:view(-1):tolist(), 1e-5, "SlowMAF z")
        assert_close_list({ 0.16085978, 0.16251439, 0.15897255 }, ld:tolist(), 1e-5, "SlowMAF")
        -- IAF: forward is MAF's backward (one output at a time)
        local iaf = IAF(2, 1, { nh = 4 })
        fill(iaf)
        z, ld = iaf(x)
        assert_close_list({ 2.1407206, 0.46302697, 0.83063877, 2.2189751, -1.6594265,
            -1.5144471 }, z:view(-1):tolist(), 1e-5, "IAF z")
        assert_close_list({ 0.7983439, 0.78652811, 0.78324914 }, ld:tolist(), 1e-5, "IAF")
        local conv = Invertible1x1Conv(2)
        -- conv.P = torch.tensor([[0., 1.], [1., 0.]])
        conv.P = tide.tensor({ { 0, 1 }, { 1, 0 } })
        fill(conv)
        -- with torch.no_grad(): conv.S += 1
        tide.no_grad(function() conv.S:add_(1) end)
        z, ld = conv(x)
        assert_close_list({ 1.4680746, -0.13748133, 0.66461831, 1.0941198, -1.7700799,
            -0.3596912 }, z:view(-1):tolist(), 1e-5, "Invertible1x1Conv z")
        assert_close_list({ -0.010996129 }, { ld:item() }, 1e-5, "Invertible1x1Conv log_det")
        local xb, ldb = conv:backward(z)
        assert_close_list(x:view(-1):tolist(), xb:view(-1):tolist(), 1e-5, "Invertible1x1Conv")
        assert_close_list({ 0.010996129 }, { ldb:item() }, 1e-5, "Invertible1x1Conv backward")
    end)

    it("NSF_CL's rational quadratic splines match PyTorch, inside and outside the tails", function()
        -- x = (1.5 * torch.sin(0.9 * i + 0.2)).view(4, 2); x[1, 0] = 3.5 (past B = 3)
        local x = (1.5 * tide.sin(0.9 * tide.arange(8):float() + 0.2)):view(4, 2)
        x[{ 2, 1 }] = 3.5
        -- f = NSF_CL(dim=2, K=3, B=3, hidden_dim=4)
        local f = NSF_CL(2, { K = 3, B = 3, hidden_dim = 4 })
        fill(f)
        local z, ld = f(x)
        assert_close_list({ -0.22995824, 2.0397503, 3.5, 1.1563375, -1.408196, -1.0967882,
            -1.3957074, 1.2120095 }, z:view(-1):tolist(), 1e-5, "NSF_CL z")
        assert_close_list({ -0.4338904, 0.35483176, -0.038616985, -0.027365386 }, ld:tolist(),
            1e-5, "NSF_CL log_det")
        local xb, ldb = f:backward(z)
        assert_close_list(x:view(-1):tolist(), xb:view(-1):tolist(), 1e-5, "NSF_CL backward")
        assert_close_list({ 0.43389028, -0.35483176, 0.038616985, 0.027365386 }, ldb:tolist(),
            1e-5, "NSF_CL backward log_det")
        -- (z.sum() + ld.sum()).backward(): through the masked writes and searchsorted's add_
        local total = z:sum() + ld:sum()
        total:backward()
        assert_close_list({ 0.47812724, 0.47087023, 0.38909432, 0.2687166 },
            f.f1.net[1].weight.grad:view(-1):tolist(), 1e-4, "NSF_CL gradient")
    end)

    it("NSF_AR matches PyTorch, one dim at a time both ways", function()
        -- x = (1.5 * torch.sin(0.9 * i + 0.2)).view(3, 3); x[1, 2] = -3.5 (past -B)
        local x = (1.5 * tide.sin(0.9 * tide.arange(9):float() + 0.2)):view(3, 3)
        x[{ 2, 3 }] = -3.5
        -- f = NSF_AR(dim=3, K=3, B=3, hidden_dim=4)
        local f = NSF_AR(3, { K = 3, B = 3, hidden_dim = 4 })
        -- PyTorch's named_parameters order: init_param, then layers.0..., layers.1...
        local names = {}
        for _, np in ipairs(f:named_parameters()) do names[#names + 1] = np[1] end
        assert.are.equal("init_param", names[1])
        assert.are.equal(17, #names)
        fill(f)
        local z, ld = f(x)
        assert_close_list({ 0.53287303, 1.6714532, 1.5016549, 0.58920109, -0.6830259, -3.5,
            -0.67198324, 0.66411221, 1.6844976 }, z:view(-1):tolist(), 1e-5, "NSF_AR z")
        assert_close_list({ 0.20422852, 0.01128488, 0.51786101 }, ld:tolist(), 1e-5,
            "NSF_AR log_det")
        local xb, ldb = f:backward(z)
        assert_close_list(x:view(-1):tolist(), xb:view(-1):tolist(), 1e-5, "NSF_AR backward")
        assert_close_list({ -0.20422846, -0.01128488, -0.51786089 }, ldb:tolist(), 1e-5,
            "NSF_AR backward log_det")
    end)

    it("the notebook's spline model trains on two moons and samples", function()
        tide.manual_seed(2)
        local d = { sample = function(_, n) return make_moons(n, 0.05) end }
        -- prior = TransformedDistribution(Uniform(torch.zeros(2), torch.ones(2)),
        --                                 SigmoidTransform().inv) # Logistic distribution
        local prior = D.TransformedDistribution(D.Uniform(tide.zeros(2), tide.ones(2)),
            D.SigmoidTransform().inv)
        -- Neural splines, coupling
        -- flows = [nfs_flow(dim=2, K=8, B=3, hidden_dim=16) for _ in range(3)]
        local flows = {}
        for i = 1, 2 do flows[i] = NSF_CL(2, { K = 4, B = 3, hidden_dim = 8 }) end
        -- convs = [Invertible1x1Conv(dim=2) for _ in flows]
        -- norms = [ActNorm(dim=2) for _ in flows]
        local convs, norms = {}, {}
        for i = 1, #flows do
            convs[i] = Invertible1x1Conv(2)
            norms[i] = ActNorm(2)
        end
        -- flows = list(itertools.chain(*zip(norms, convs, flows)))
        local chain = {}
        for i = 1, #flows do
            chain[#chain + 1] = norms[i]
            chain[#chain + 1] = convs[i]
            chain[#chain + 1] = flows[i]
        end
        -- a Glow coupling, a MAF and an IAF (with their MADE nets) too
        chain[#chain + 1] = AffineHalfFlow(2, 1, { nh = 8 })
        chain[#chain + 1] = MAF(2, 0, { nh = 8 })
        chain[#chain + 1] = IAF(2, 1, { nh = 8 })
        local model = NormalizingFlowModel(prior, chain)
        -- optimizer = optim.Adam(model.parameters(), lr=1e-4, weight_decay=1e-5) # todo tune WD
        local optimizer = optim.Adam(model:parameters(), { lr = 5e-3, weight_decay = 1e-5 })
        -- x = d.sample(128): one batch for every step, so that the loss falls
        local x = d:sample(64)
        model:train()
        local losses = {}
        for _ = 1, 4 do
            local _, prior_logprob, log_det = model(x)
            local logprob = prior_logprob + log_det
            local loss = -tide.sum(logprob) -- NLL
            model:zero_grad()
            loss:backward()
            optimizer:step()
            losses[#losses + 1] = loss:item()
            assert_finite(losses[#losses], "loss")
        end
        for k = 2, 4 do
            assert.is_true(losses[k] < losses[k - 1], "the loss does not fall at step " .. k)
        end
        model:eval()
        -- zs = model.sample(128*8)
        local zs = model:sample(16)
        assert.are.equal(#chain + 1, #zs)
        assert.are.same({ 16, 2 }, zs[#zs].shape)
        -- p = model.prior.sample([128, 2]).squeeze()
        local p = model.prior:sample({ 8, 2 }):squeeze()
        assert.are.same({ 8, 2, 2 }, p.shape)
        -- the prior's own log_prob against PyTorch's logistic density: -x - 2 log(1 + e^-x)
        local lp = model.prior:log_prob(tide.tensor({ { 0.5, -1 } }))
        assert_close_list({ -0.5 - 2 * math.log(1 + math.exp(-0.5)),
            1 - 2 * math.log(1 + math.exp(1)) }, lp:view(-1):tolist(), 1e-5, "logistic")
    end)
end)
