-- ported_scripts128_spec.lua — NM512/dreamerv3-torch's tools.py distribution helpers: symlog /
-- symexp, RequiresGrad, SampleDist, OneHotDist (a OneHotCategorical with unimix_ratio and
-- straight-through sample / mode), DiscDist (twohot over 255 symlog buckets), MSEDist,
-- SymlogDist, ContDist (around Independent(Normal)), Bernoulli (around Independent(Bernoulli)),
-- UnnormalizedHuber and SafeTruncatedNormal (Normal subclasses), TanhBijector (a Transform
-- subclass), static_scan_for_lambda_return / lambda_return and the Optimizer wrapper (Adam,
-- GradScaler, clip_grad_norm_, weight decay), ported line for line at tiny sizes on fixed
-- values, checked against PyTorch 1.13 (the values from a throwaway script running the same
-- Python). The Python line stands above each Lua line that differs from it. Dims and classes
-- are 1-based: DiscDist's bucket indices are 1..255 here.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local torchd = tide.distributions

-- fixed inputs, the same on both sides: sin(a * arange(n)) * b, viewed to the shape
local function fx(shape, a, b)
    local n = 1
    for _, s in ipairs(shape) do
        n = n * s
    end
    return (tide.arange(n):float() * (a or 0.37)):sin():mul(b or 1.0):view(shape)
end

local function close(t, want, atol)
    local w = tide.tensor(want, { dtype = "float32" }):view(t:size())
    local ok = tide.allclose(t:detach():float(), w, { atol = atol or 1e-5, rtol = 1e-4 })
    if not ok then
        print(t, w)
    end
    assert.is_true(ok)
end

---------------------------------------------------------------------------------------------
-- tools.py
---------------------------------------------------------------------------------------------
-- def symlog(x):
local function symlog(x)
    -- return torch.sign(x) * torch.log(torch.abs(x) + 1.0)
    return tide.sign(x) * tide.log(tide.abs(x) + 1.0)
end

-- def symexp(x):
local function symexp(x)
    -- return torch.sign(x) * (torch.exp(torch.abs(x)) - 1.0)
    return tide.sign(x) * (tide.exp(tide.abs(x)) - 1.0)
end

-- class RequiresGrad: (a context manager: enter / exit as methods)
local RequiresGrad = {}
RequiresGrad.__index = RequiresGrad
setmetatable(RequiresGrad, { __call = function(cls, model)
    return setmetatable({ _model = model }, cls)
end })
-- def __enter__(self):
function RequiresGrad:enter()
    -- self._model.requires_grad_(requires_grad=True)
    self._model:requires_grad_(true)
end
-- def __exit__(self, *args):
function RequiresGrad:exit()
    -- self._model.requires_grad_(requires_grad=False)
    self._model:requires_grad_(false)
end

-- class SampleDist: (PyTorch's `sample(self._samples)` passes an int, which torch.Size
-- refuses; the list {samples} here)
local SampleDist = {}
-- def __getattr__(self, name): return getattr(self._dist, name)
SampleDist.__index = function(self, k)
    local v = rawget(SampleDist, k)
    if v ~= nil then
        return v
    end
    local d = rawget(self, "_dist")
    local dv = d[k]
    if type(dv) == "function" then -- a method of the wrapped dist, called on it
        return function(_, ...)
            return dv(d, ...)
        end
    end
    return dv
end
setmetatable(SampleDist, { __call = function(cls, dist, samples)
    return setmetatable({ _dist = dist, _samples = samples or 100 }, cls)
end })
SampleDist.name = "SampleDist"
function SampleDist:mean()
    -- samples = self._dist.sample(self._samples)
    local samples = self._dist:sample({ self._samples })
    -- return torch.mean(samples, 0)
    return tide.mean(samples, 1)
end
function SampleDist:mode()
    local sample = self._dist:sample({ self._samples })
    local logprob = self._dist:log_prob(sample)
    -- return sample[torch.argmax(logprob)][0]
    return sample:select(1, tide.argmax(logprob):item() + 1):select(1, 1)
end
function SampleDist:entropy()
    local sample = self._dist:sample({ self._samples })
    local logprob = self:log_prob(sample)
    -- return -torch.mean(logprob, 0)
    return -tide.mean(logprob, 1)
end

-- class OneHotDist(torchd.one_hot_categorical.OneHotCategorical):
local OneHotCategorical = torchd.one_hot_categorical.OneHotCategorical
local OneHotDist = OneHotCategorical:extend("OneHotDist")
-- def __init__(self, logits=None, probs=None, unimix_ratio=0.0):
function OneHotDist:init(opts)
    local logits, probs, unimix_ratio = opts.logits, opts.probs, opts.unimix_ratio or 0.0
    if logits ~= nil and unimix_ratio > 0.0 then
        -- probs = F.softmax(logits, dim=-1)
        probs = F.softmax(logits, { dim = -1 })
        -- probs = probs * (1.0 - unimix_ratio) + unimix_ratio / probs.shape[-1]
        probs = probs * (1.0 - unimix_ratio) + unimix_ratio / probs:size(-1)
        logits = tide.log(probs)
        -- super().__init__(logits=logits, probs=None)
        OneHotCategorical.init(self, { logits = logits })
    else
        -- super().__init__(logits=logits, probs=probs)
        OneHotCategorical.init(self, { logits = logits, probs = probs })
    end
end
function OneHotDist:mode()
    -- _mode = F.one_hot(torch.argmax(super().logits, axis=-1), super().logits.shape[-1])
    local _mode = F.one_hot(tide.argmax(self.logits, -1), self.logits:size(-1))
    return _mode:detach() + self.logits - self.logits:detach()
end
-- def sample(self, sample_shape=(), seed=None):
function OneHotDist:sample(sample_shape, seed)
    if seed ~= nil then
        error("need to check")
    end
    -- sample = super().sample(sample_shape).detach()
    local sample = OneHotCategorical.sample(self, sample_shape):detach()
    local probs = self.probs
    -- while len(probs.shape) < len(sample.shape): probs = probs[None]
    while probs:dim() < sample:dim() do
        probs = probs:unsqueeze(1)
    end
    -- sample += probs - probs.detach()
    sample = sample + (probs - probs:detach())
    return sample
end

-- class DiscDist:
local DiscDist = {}
DiscDist.__index = DiscDist
-- def __init__(self, logits, low=-20.0, high=20.0, transfwd=symlog, transbwd=symexp,
--              device="cuda"):
setmetatable(DiscDist, { __call = function(cls, logits, opts)
    opts = opts or {}
    local self = setmetatable({}, cls)
    self.logits = logits
    -- self.probs = torch.softmax(logits, -1)
    self.probs = tide.softmax(logits, -1)
    -- self.buckets = torch.linspace(low, high, steps=255, device=device)
    self.buckets = tide.linspace(opts.low or -20.0, opts.high or 20.0, 255,
        { device = opts.device or "cpu" })
    -- self.width = (self.buckets[-1] - self.buckets[0]) / 255
    self.width = (self.buckets[-1] - self.buckets[1]) / 255
    self.transfwd = opts.transfwd or symlog
    self.transbwd = opts.transbwd or symexp
    return self
end })
function DiscDist:mean()
    local _mean = self.probs * self.buckets
    -- return self.transbwd(torch.sum(_mean, dim=-1, keepdim=True))
    return self.transbwd(tide.sum(_mean, { dim = -1, keepdim = true }))
end
function DiscDist:mode()
    local _mode = self.probs * self.buckets
    return self.transbwd(tide.sum(_mode, { dim = -1, keepdim = true }))
end
-- Inside OneHotCategorical, log_prob is calculated using only max element in targets
function DiscDist:log_prob(x)
    x = self.transfwd(x)
    local n = self.buckets:numel()
    -- below = torch.sum((self.buckets <= x[..., None]).to(torch.int32), dim=-1) - 1
    -- (1-based: the count of buckets <= x is the index of the last of them)
    local below = tide.sum(self.buckets:le(x:unsqueeze(-1)):to("int32"), -1)
    -- above = len(self.buckets) - torch.sum((self.buckets > x[..., None]).to(torch.int32),
    --                                        dim=-1)
    local above = n + 1 - tide.sum(self.buckets:gt(x:unsqueeze(-1)):to("int32"), -1)
    -- below = torch.clip(below, 0, len(self.buckets) - 1)
    below = tide.clip(below, 1, n)
    above = tide.clip(above, 1, n)
    -- equal = below == above
    local equal = below:eq(above)
    -- dist_to_below = torch.where(equal, 1, torch.abs(self.buckets[below] - x))
    local b_below = self.buckets:index_select(1, below:flatten()):view(below:size())
    local dist_to_below = tide.where(equal, 1, tide.abs(b_below - x))
    local b_above = self.buckets:index_select(1, above:flatten()):view(above:size())
    local dist_to_above = tide.where(equal, 1, tide.abs(b_above - x))
    local total = dist_to_below + dist_to_above
    local weight_below = dist_to_above / total
    local weight_above = dist_to_below / total
    -- target = (F.one_hot(below, num_classes=len(self.buckets)) * weight_below[..., None]
    --     + F.one_hot(above, num_classes=len(self.buckets)) * weight_above[..., None])
    local target = F.one_hot(below, n) * weight_below:unsqueeze(-1)
        + F.one_hot(above, n) * weight_above:unsqueeze(-1)
    -- log_pred = self.logits - torch.logsumexp(self.logits, -1, keepdim=True)
    local log_pred = self.logits - tide.logsumexp(self.logits, -1, true)
    target = target:squeeze(-2)
    return (target * log_pred):sum(-1)
end
-- def log_prob_target(self, target): (Python's super().logits on a plain class raises; the
-- logits here)
function DiscDist:log_prob_target(target)
    local log_pred = self.logits - tide.logsumexp(self.logits, -1, true)
    return (target * log_pred):sum(-1)
end

-- the dims from the third on: list(range(len(shape)))[2:], 1-based
local function dims_from_3(t)
    local dims = {}
    for d = 3, t:dim() do
        dims[#dims + 1] = d
    end
    return dims
end

-- class MSEDist:
local MSEDist = {}
MSEDist.__index = MSEDist
setmetatable(MSEDist, { __call = function(cls, mode, agg)
    return setmetatable({ _mode = mode, _agg = agg or "sum" }, cls)
end })
function MSEDist:mode() return self._mode end
function MSEDist:mean() return self._mode end
function MSEDist:log_prob(value)
    -- assert self._mode.shape == value.shape, (self._mode.shape, value.shape)
    assert(tide.Size(self._mode:size()) == tide.Size(value:size()))
    local distance = (self._mode - value) ^ 2
    local loss
    if self._agg == "mean" then
        -- loss = distance.mean(list(range(len(distance.shape)))[2:])
        loss = distance:mean(dims_from_3(distance))
    elseif self._agg == "sum" then
        loss = distance:sum(dims_from_3(distance))
    else
        error(self._agg)
    end
    return -loss
end

-- class SymlogDist:
local SymlogDist = {}
SymlogDist.__index = SymlogDist
-- def __init__(self, mode, dist="mse", agg="sum", tol=1e-8):
setmetatable(SymlogDist, { __call = function(cls, mode, dist, agg, tol)
    return setmetatable({ _mode = mode, _dist = dist or "mse", _agg = agg or "sum",
        _tol = tol or 1e-8 }, cls)
end })
function SymlogDist:mode() return symexp(self._mode) end
function SymlogDist:mean() return symexp(self._mode) end
function SymlogDist:log_prob(value)
    local distance
    if self._dist == "mse" then
        distance = (self._mode - symlog(value)) ^ 2.0
        -- distance = torch.where(distance < self._tol, 0, distance)
        distance = tide.where(distance:lt(self._tol), 0, distance)
    elseif self._dist == "abs" then
        distance = tide.abs(self._mode - symlog(value))
        distance = tide.where(distance:lt(self._tol), 0, distance)
    else
        error(self._dist)
    end
    local loss
    if self._agg == "mean" then
        loss = distance:mean(dims_from_3(distance))
    elseif self._agg == "sum" then
        loss = distance:sum(dims_from_3(distance))
    else
        error(self._agg)
    end
    return -loss
end

-- a wrapper's __getattr__: the wrapper's own, else the wrapped dist's (methods bound to it)
local function wrapper_index(cls)
    return function(self, k)
        local v = rawget(cls, k)
        if v ~= nil then
            return v
        end
        local d = rawget(self, "_dist")
        local dv = d[k]
        if type(dv) == "function" then
            return function(_, ...)
                return dv(d, ...)
            end
        end
        return dv
    end
end

-- class ContDist:
local ContDist = {}
ContDist.__index = wrapper_index(ContDist)
-- def __init__(self, dist=None, absmax=None):
setmetatable(ContDist, { __call = function(cls, dist, absmax)
    -- self.mean = dist.mean (a property in PyTorch, a method here: its value kept)
    return setmetatable({ _dist = dist, mean = dist:mean(), absmax = absmax }, cls)
end })
function ContDist:entropy() return self._dist:entropy() end
function ContDist:mode()
    -- out = self._dist.mean
    local out = self._dist:mean()
    if self.absmax ~= nil then
        -- out *= (self.absmax / torch.clip(torch.abs(out), min=self.absmax)).detach()
        -- (Python's *= writes into the Normal's loc, since .mean returns it; out of place here)
        out = out * (self.absmax / tide.clip(tide.abs(out), self.absmax)):detach()
    end
    return out
end
-- def sample(self, sample_shape=()):
function ContDist:sample(sample_shape)
    local out = self._dist:rsample(sample_shape)
    if self.absmax ~= nil then
        out = out * (self.absmax / tide.clip(tide.abs(out), self.absmax)):detach()
    end
    return out
end
function ContDist:log_prob(x) return self._dist:log_prob(x) end

-- class Bernoulli:
local Bernoulli = {}
Bernoulli.__index = wrapper_index(Bernoulli)
setmetatable(Bernoulli, { __call = function(cls, dist)
    return setmetatable({ _dist = dist, mean = dist:mean() }, cls)
end })
function Bernoulli:entropy() return self._dist:entropy() end
function Bernoulli:mode()
    -- _mode = torch.round(self._dist.mean)
    local mean = self._dist:mean()
    local _mode = tide.round(mean)
    return _mode:detach() + mean - mean:detach()
end
function Bernoulli:sample(sample_shape) return self._dist:rsample(sample_shape) end
function Bernoulli:log_prob(x)
    local _logits = self._dist.base_dist.logits
    -- log_probs0 = -F.softplus(_logits)
    local log_probs0 = -F.softplus(_logits)
    local log_probs1 = -F.softplus(-_logits)
    -- return torch.sum(log_probs0 * (1 - x) + log_probs1 * x, -1)
    return tide.sum(log_probs0 * (1 - x) + log_probs1 * x, -1)
end

-- class UnnormalizedHuber(torchd.normal.Normal):
local Normal = torchd.normal.Normal
local UnnormalizedHuber = Normal:extend("UnnormalizedHuber")
-- def __init__(self, loc, scale, threshold=1, **kwargs):
function UnnormalizedHuber:init(loc, scale, threshold, kwargs)
    -- super().__init__(loc, scale, **kwargs)
    Normal.init(self, loc, scale, kwargs)
    self._threshold = threshold or 1
end
function UnnormalizedHuber:log_prob(event)
    -- return -(torch.sqrt((event - self.mean) ** 2 + self._threshold**2) - self._threshold)
    return -(tide.sqrt((event - self:mean()) ^ 2 + self._threshold ^ 2) - self._threshold)
end
-- def mode(self): return self.mean
function UnnormalizedHuber:mode() return Normal.mean(self) end

-- class SafeTruncatedNormal(torchd.normal.Normal):
local SafeTruncatedNormal = Normal:extend("SafeTruncatedNormal")
-- def __init__(self, loc, scale, low, high, clip=1e-6, mult=1):
function SafeTruncatedNormal:init(loc, scale, low, high, clip, mult)
    Normal.init(self, loc, scale)
    self._low, self._high = low, high
    self._clip = clip == nil and 1e-6 or clip
    self._mult = mult == nil and 1 or mult
end
function SafeTruncatedNormal:sample(sample_shape)
    local event = Normal.sample(self, sample_shape)
    -- if self._clip: (0 is falsy in Python)
    if self._clip and self._clip ~= 0 then
        -- clipped = torch.clip(event, self._low + self._clip, self._high - self._clip)
        local clipped = tide.clip(event, self._low + self._clip, self._high - self._clip)
        event = event - event:detach() + clipped:detach()
    end
    if self._mult and self._mult ~= 0 then
        -- event *= self._mult
        event = event * self._mult
    end
    return event
end

-- class TanhBijector(torchd.Transform):
local TanhBijector = torchd.Transform:extend("TanhBijector")
-- def __init__(self, validate_args=False, name="tanh"): super().__init__()
function TanhBijector:init()
    torchd.Transform.init(self)
end
function TanhBijector:_forward(x)
    return tide.tanh(x)
end
function TanhBijector:_inverse(y)
    -- y = torch.where((torch.abs(y) <= 1.0), torch.clamp(y, -0.99999997, 0.99999997), y)
    y = tide.where(tide.abs(y):le(1.0), tide.clamp(y, -0.99999997, 0.99999997), y)
    y = tide.atanh(y)
    return y
end
function TanhBijector:_forward_log_det_jacobian(x)
    -- log2 = torch.math.log(2.0)   (torch 1.13 has no torch.math: math.log)
    local log2 = math.log(2.0)
    -- return 2.0 * (log2 - x - torch.softplus(-2.0 * x))   (nor torch.softplus: F.softplus)
    return 2.0 * (log2 - x - F.softplus(-2.0 * x))
end

-- def static_scan_for_lambda_return(fn, inputs, start):
local function static_scan_for_lambda_return(fn, inputs, start)
    local last = start
    local outputs
    -- indices = reversed(range(inputs[0].shape[0]))
    for index = inputs[1]:size(1), 1, -1 do
        -- last = fn(last, *inp(index))
        last = fn(last, inputs[1][index], inputs[2][index])
        if outputs == nil then
            outputs = last
        else
            -- outputs = torch.cat([outputs, last], dim=-1)
            outputs = tide.cat({ outputs, last }, -1)
        end
    end
    -- outputs = torch.reshape(outputs, [outputs.shape[0], outputs.shape[1], 1])
    outputs = tide.reshape(outputs, { outputs:size(1), outputs:size(2), 1 })
    -- outputs = torch.flip(outputs, [1])
    outputs = tide.flip(outputs, { 2 })
    -- outputs = torch.unbind(outputs, dim=0)
    outputs = tide.unbind(outputs, 1)
    return outputs
end

-- def lambda_return(reward, value, pcont, bootstrap, lambda_, axis): (axis 1-based; dreamer
-- calls it with axis=0, the only one whose result static_scan's tuple can carry)
local function lambda_return(reward, value, pcont, bootstrap, lambda_, axis)
    assert(reward:dim() == value:dim())
    -- if isinstance(pcont, (int, float)): pcont = pcont * torch.ones_like(reward)
    if type(pcont) == "number" then
        pcont = pcont * tide.ones_like(reward)
    end
    -- (axis != 0 permutes, then returns.permute fails on static_scan's tuple: dreamer passes 0)
    assert(axis == 1, "lambda_return: only axis 1 (Python's 0), as dreamer calls it")
    if bootstrap == nil then
        -- bootstrap = torch.zeros_like(value[-1])
        bootstrap = tide.zeros_like(value[-1])
    end
    -- next_values = torch.cat([value[1:], bootstrap[None]], 0)
    local next_values = tide.cat({ value:narrow(1, 2, value:size(1) - 1),
        bootstrap:unsqueeze(1) }, 1)
    local inputs = reward + pcont * next_values * (1 - lambda_)
    local returns = static_scan_for_lambda_return(function(agg, cur0, cur1)
        return cur0 + cur1 * lambda_ * agg
    end, { inputs, pcont }, bootstrap)
    return returns
end

-- class Optimizer:
local Optimizer = {}
Optimizer.__index = Optimizer
-- def __init__(self, name, parameters, lr, eps=1e-4, clip=None, wd=None, wd_pattern=r".*",
--              opt="adam", use_amp=False):
setmetatable(Optimizer, { __call = function(cls, name, parameters, lr, o)
    o = o or {}
    local self = setmetatable({}, cls)
    local eps, clip, wd = o.eps or 1e-4, o.clip, o.wd
    -- assert 0 <= wd < 1   (wd=None would raise in Python; nil means 0 here)
    assert(0 <= (wd or 0) and (wd or 0) < 1)
    assert(not clip or 1 <= clip)
    self._name, self._parameters, self._clip, self._wd = name, parameters, clip, wd
    self._wd_pattern = o.wd_pattern or ".*"
    local opt = o.opt or "adam"
    self._opt = ({
        adam = function() return tide.optim.Adam(parameters, { lr = lr, eps = eps }) end,
        adamax = function() return tide.optim.Adamax(parameters, { lr = lr, eps = eps }) end,
        sgd = function() return tide.optim.SGD(parameters, { lr = lr }) end,
        momentum = function()
            return tide.optim.SGD(parameters, { lr = lr, momentum = 0.9 })
        end,
    })[opt]()
    -- self._scaler = torch.cuda.amp.GradScaler(enabled=use_amp)
    self._scaler = tide.cuda.amp.GradScaler({ enabled = o.use_amp or false })
    return self
end })
-- def __call__(self, loss, params, retain_graph=True):
function Optimizer:__call(loss, params, retain_graph)
    if retain_graph == nil then retain_graph = true end
    assert(loss:dim() == 0)
    local metrics = {}
    metrics[self._name .. "_loss"] = loss:detach():item()
    self._opt:zero_grad()
    -- self._scaler.scale(loss).backward(retain_graph=retain_graph)
    self._scaler:scale(loss):backward({ retain_graph = retain_graph })
    self._scaler:unscale_(self._opt)
    -- norm = torch.nn.utils.clip_grad_norm_(params, self._clip)
    local norm = nn.utils.clip_grad_norm_(params, self._clip)
    if self._wd and self._wd ~= 0 then
        self:_apply_weight_decay(params)
    end
    self._scaler:step(self._opt)
    self._scaler:update()
    self._opt:zero_grad()
    metrics[self._name .. "_grad_norm"] = norm
    return metrics
end
function Optimizer:_apply_weight_decay(varibs)
    local nontrivial = self._wd_pattern ~= ".*"
    if nontrivial then
        error("NotImplementedError")
    end
    for _, var in ipairs(varibs) do
        -- var.data = (1 - self._wd) * var.data
        var.data = (1 - self._wd) * var.data
    end
end

---------------------------------------------------------------------------------------------
-- the checks (values from PyTorch 1.13 running the Python above on the same fixed inputs)
---------------------------------------------------------------------------------------------
describe("dreamerv3-torch tools.py distributions", function()
    it("symlog and symexp", function()
        local x = fx({ 5 }, 0.37, 3.0)
        close(symlog(x), { 0.0, 0.7346953, 1.1062046, 1.3048391, 1.3832002 })
        close(symexp(x), { 0.0, 1.9589853, 6.5599446, 13.6889591, 18.8388577 })
        close(symexp(symlog(x)), x:totable())
    end)

    it("OneHotDist: unimix logits, log_prob, entropy, mode and sample straight through", function()
        local lg = fx({ 2, 4 }, 0.37, 2.0):requires_grad_()
        local d = OneHotDist({ logits = lg, unimix_ratio = 0.01 })
        close(d.logits, { -2.5360351, -1.8291925, -1.2111137, -0.7712995, -1.0989838,
            -1.1676575, -1.4939466, -2.030951 })
        local probs = { 0.0791797, 0.1605432, 0.2978654, 0.4624118, 0.3332095, 0.3110949,
            0.224485, 0.1312107 }
        close(d.probs, probs)
        close(d:mean(), probs)
        local v = tide.tensor({ { 0, 1, 0, 0 }, { 0, 0, 0, 1 } })
        close(d:log_prob(v), { -1.8291925, -2.030951 })
        close(d:entropy(), { 1.2118738, 1.3312951 })
        local w = fx({ 2, 4 }, 0.91)
        local m = d:mode()
        close(m, { 0, 0, 0, 1, 1, 0, 0, 0 })
        local g = tide.autograd.grad({ (m * w):sum() }, { lg }, { retain_graph = true })[1]
        close(g, { -0.1654494, 0.4362048, 0.3236749, -0.5944304, 0.2248758, -0.3263605,
            -0.2557403, 0.357225 })
        -- the draw is tide's; its gradient is the probs' whatever it is
        local s = d:sample({ 3 })
        assert.are.same({ 3, 2, 4 }, s:size())
        close(s:detach():sum(-1), { 1, 1, 1, 1, 1, 1 })
        close(s:detach():eq(0):logical_or(s:detach():eq(1)):all():float(), { 1 })
        g = tide.autograd.grad({ (s * w):sum() }, { lg })[1]
        close(g, { -0.138259, 0.0893639, 0.3261589, -0.2772638, 0.1413042, -0.3391994,
            -0.0751614, 0.2730566 })
        -- no unimix: the plain OneHotCategorical's logits
        local d0 = OneHotDist({ logits = lg })
        close(d0.logits, (lg - lg:logsumexp(-1, true)):detach():totable())
    end)

    it("DiscDist: twohot log_prob and its gradient, mean, width", function()
        local dl = fx({ 2, 2, 255 }, 0.13, 3.0):requires_grad_()
        local dd = DiscDist(dl)
        close(dd.width, { 0.1568628 })
        close(dd:mean(), { -0.7834362, 1.3172514, 0.6731758, -2.6754465 })
        close(dd:mode(), { -0.7834362, 1.3172514, 0.6731758, -2.6754465 })
        local xv = tide.tensor({ { { 0.5 }, { -3.0 } }, { { 1e9 }, { 0.0 } } })
        local lp = dd:log_prob(xv)
        close(lp, { -9.8941841, -10.1033859, -9.8820505, -6.2590756 }, 1e-4)
        local g = tide.autograd.grad({ lp:sum() }, { dl })[1]
        close(g:sum(-1), { 0, 0, 0, 0 }, 1e-5)
        close(g[1][1]:narrow(1, 121, 16), { -0.0010545, -0.0007144, -0.0004845, -0.0003312,
            -0.0002295, -0.0001624, -0.0001179, -8.83e-05, -6.87e-05, 0.4252416, 0.5746558,
            -4.17e-05, -3.88e-05, -3.8e-05, -3.92e-05, -4.24e-05 })
    end)

    it("MSEDist and SymlogDist log_prob over the dims from the third", function()
        local mode, val = fx({ 2, 2, 3 }), fx({ 2, 2, 3 }, 0.53, 2.0)
        close(MSEDist(mode):log_prob(val), { -1.5675923, -1.7230639, -7.1724911, -4.5670485 })
        close(MSEDist(mode, "mean"):log_prob(val),
            { -0.5225307, -0.5743546, -2.3908303, -1.5223495 })
        close(SymlogDist(mode):log_prob(val), { -0.2260876, -0.1290341, -3.7804651, -1.0606408 })
        close(SymlogDist(mode, "abs", "mean"):log_prob(val),
            { -0.2241459, -0.16658, -1.1095723, -0.510703 })
        close(SymlogDist(mode):mode(), { 0.0, 0.4356468, 0.9626349, 1.4490461, 1.7071078,
            1.6150291, 1.2179103, 0.688844, 0.1979314, -0.2059824, -0.6986539, -1.2270255 })
        assert.has_error(function() MSEDist(mode, "max"):log_prob(val) end)
    end)

    it("ContDist and Bernoulli around Independent", function()
        local mean = fx({ 2, 3 }, 0.37, 2.0)
        local std = fx({ 2, 3 }, 0.7):abs() + 0.5
        local val = fx({ 2, 2, 3 }, 0.53, 2.0)[1]
        local cd = ContDist(torchd.Independent(torchd.Normal(mean, std), 1), 1.0)
        close(cd:log_prob(val), { -2.6613059, -3.4563689 })
        close(cd:entropy(), { 4.0941072, 4.2247219 })
        close(cd:mode(), { 0.0, 0.7232309, 1.0, 0.9999999, 1.0, 0.9999999 })
        close(cd.mean, mean:totable())
        assert.are.same({ 2 }, cd.batch_shape) -- through __getattr__
        local s = cd:sample({ 4 })
        assert.are.same({ 4, 2, 3 }, s:size())
        assert.is_true(s:abs():max():item() <= 1.0 + 1e-6)

        local bl = fx({ 2, 3 }, 0.37, 2.0):requires_grad_()
        local bd = Bernoulli(torchd.Independent(torchd.Bernoulli({ logits = bl }), 1))
        local bm = bd:mode()
        close(bm, { 0.0, 1.0, 0.9999999, 1.0, 0.9999999, 1.0 })
        local w = fx({ 2, 4 }, 0.91):narrow(2, 1, 3)
        close(tide.autograd.grad({ (bm * w):sum() }, { bl })[1],
            { 0.0, 0.1736599, 0.1585702, -0.0585491, -0.1042637, -0.081619 })
        local xb = tide.tensor({ { 1, 0, 1 }, { 0, 0, 1 } })
        close(bd:log_prob(xb), { -2.0427175, -4.2017565 })
        close(bd:entropy(), { 1.8336989, 1.1590171 })
        -- PyTorch's Bernoulli has no rsample either (NotImplementedError)
        assert.has_error(function() bd:sample() end,
            "tide: Bernoulli: rsample (the draw is not differentiable; use sample) is not " ..
            "defined for this distribution")
    end)

    it("UnnormalizedHuber and SafeTruncatedNormal subclass Normal", function()
        local mean = fx({ 2, 3 }, 0.37, 2.0)
        local std = fx({ 2, 3 }, 0.7):abs() + 0.5
        local val = fx({ 2, 2, 3 }, 0.53, 2.0)[1]
        local h = UnnormalizedHuber(mean, std, 0.5)
        close(h:log_prob(val), { 0.0, -0.0769311, -0.1379052, -0.0416284, -0.0759581,
            -0.5988362 })
        close(h:entropy(), { 0.7257913, 1.5536597, 1.8146561, 1.7287804, 1.2386009, 1.2573407 })
        close(h:mode(), mean:totable())
        -- a tiny scale: the draw is loc to 1e-5, then clipped to [low + clip, high - clip]
        local loc = tide.tensor({ -3.0, -0.5, 0.25, 2.0 }):requires_grad_()
        local tn = SafeTruncatedNormal(loc, 1e-7, -1.0, 1.0, 1e-3, 2)
        local e = tn:sample({ 2 })
        assert.are.same({ 2, 4 }, e:size())
        close(e, { -1.998, -1.0, 0.5, 1.998, -1.998, -1.0, 0.5, 1.998 }, 1e-4)
        assert.is_false(e.requires_grad) -- super().sample draws without a graph
    end)

    it("TanhBijector: forward, clamped inverse, log det against TanhTransform", function()
        local tb = TanhBijector()
        local tx = fx({ 5 }, 0.37, 2.0)
        close(tb:_forward(tx), tide.tanh(tx):totable())
        close(tb:_forward_log_det_jacobian(tx),
            { 0.0, -0.4829598, -1.4413036, -2.2513375, -2.6341264 })
        close(torchd.TanhTransform():log_abs_det_jacobian(tx, tide.tanh(tx)),
            { 0.0, -0.4829598, -1.4413036, -2.2513375, -2.6341264 })
        close(tb:_inverse(tide.tensor({ -1.0, -0.5, 0.0, 0.999999999, 1.0 })),
            { -8.66434, -0.5493062, 0.0, 8.66434, 8.66434 }, 1e-4)
    end)

    it("SampleDist over fixed draws: mean, mode, entropy", function()
        -- a Normal whose draws are fixed (PyTorch's RNG replaced on both sides)
        local Fixed = Normal:extend("FixedDraws")
        function Fixed:sample(shape)
            return fx({ shape[1], 3 }, 0.61, 1.5)
        end
        local sd = SampleDist(torchd.Independent(Fixed(tide.zeros(3), tide.ones(3)), 1), 5)
        local draws = fx({ 5, 3 }, 0.61, 1.5)
        close(sd:mean(), draws:mean(1):totable())
        assert.are.equal("SampleDist", sd.name)
        -- the draw of the largest log_prob (the smallest norm), its first entry
        local norms = (draws ^ 2):sum(-1)
        close(sd:mode(), { draws[norms:argmin():item() + 1][1]:item() })
        close(sd:entropy(), { (0.5 * norms + 1.5 * math.log(2 * math.pi)):mean():item() })
    end)

    it("lambda_return through static_scan_for_lambda_return", function()
        local rew = fx({ 4, 2, 1 })
        local vals = fx({ 5, 2, 1 }, 0.29, 2.0)
        local disc = 0.9 + 0.05 * fx({ 4, 2, 1 }, 1.3)
        local ret = lambda_return(rew, vals:narrow(1, 1, 4), disc, vals[-1], 0.95, 1)
        -- torch.stack(target, dim=1), as dreamer's caller
        close(tide.stack(ret, 2), { 2.8482013, 3.0218229, 3.2735429, 2.872807, 2.8589187,
            2.2997768, 2.1876986, 1.452652 })
        ret = lambda_return(rew, vals:narrow(1, 1, 4), 0.99, nil, 0.0, 1)
        close(tide.stack(ret, 2), { 1.0850874, 1.8749868, 2.4895582, 2.8612704, 2.9476049,
            2.7361586, 0.7965655, 0.5240442 })
    end)

    it("Optimizer: Adam, GradScaler, clip_grad_norm_, weight decay; RequiresGrad", function()
        local lin = nn.Linear(3, 2)
        tide.no_grad(function()
            lin.weight:copy_(fx({ 2, 3 }, 0.7))
            lin.bias:copy_(fx({ 2 }, 1.1))
        end)
        local rg = RequiresGrad(lin)
        rg:exit()
        assert.is_false(lin.weight.requires_grad)
        rg:enter()
        assert.is_true(lin.weight.requires_grad)
        local params = lin:parameters()
        local opt = Optimizer("model", params, 0.01, { clip = 1.0, wd = 0.1 })
        local inp = fx({ 4, 3 }, 0.45, 2.0)
        local want = { { 4.3243041, 6.286129 }, { 3.3652766, 5.5267596 } }
        for i = 1, 2 do
            local loss = (lin(inp) ^ 2):mean()
            local metrics = opt(loss, params)
            assert.is_true(math.abs(metrics.model_loss - want[i][1]) < 1e-5)
            assert.is_true(math.abs(metrics.model_grad_norm - want[i][2]) < 1e-5)
        end
        close(lin.weight, { -0.018995, 0.502819, 0.7792161, 0.6802078, 0.2523529, -0.3031114 })
        close(lin.bias, { -0.0189198, 0.7028857 })
    end)
end)
