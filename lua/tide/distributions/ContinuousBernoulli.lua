-- tide.distributions.ContinuousBernoulli({probs = or logits =[, lims =]}): the continuous
-- Bernoulli on [0, 1] (Loaiza-Ganem and Cunningham), PyTorch's formulas: density
-- C(p) p^x (1 - p)^(1 - x), with probs clamped to [eps, 1 - eps] and, inside lims (default
-- {0.499, 0.501}) where the closed forms lose precision, PyTorch's Taylor expansions of the
-- normalizer and the moments. rsample(shape) is icdf(u) with u uniform (gradients reach the
-- parameter). probs must lie in [0, 1], values in [0, 1].
local core = require("tide.core")
local autograd = require("tide.autograd")
local args = require("tide.op_args")
local raise = autograd.raise
local is_tensor = autograd.is_tensor
local Distribution = require("tide.distributions.Distribution")
local ExponentialFamily = require("tide.distributions.ExponentialFamily")
local B = require("tide.distributions._binary")

local CB = ExponentialFamily:extend("ContinuousBernoulli") -- (PyTorch's base)
CB.arg_constraints = require("tide.distributions._arg_constraints").ContinuousBernoulli
CB.has_rsample = true -- (PyTorch's class field)
CB.positional_params = { after = 0, names = { "probs", "logits" } } -- (PyTorch's order)

function CB:init(opts, ...)
    local who = "ContinuousBernoulli"
    args.no_extra(who, 1, ...)
    local o = B.options(who, opts, { "lims" }, "{probs = 0.3}")
    local lims = o.lims
    if lims == nil then
        lims = { 0.499, 0.501 }
    end
    if type(lims) ~= "table" or is_tensor(lims) or type(lims[1]) ~= "number" or
        type(lims[2]) ~= "number" or not (lims[1] < lims[2]) then
        raise(("tide: %s: lims must be two numbers {low, high} with low < high, such as " ..
            "{0.499, 0.501}"):format(who))
    end
    self._lims = { lims[1], lims[2] }
    local which = o.probs ~= nil and "probs" or "logits"
    local p, shape = Distribution.broadcast_params(who, { which }, { o[which] })
    local eps = B.EPS[p[1].dtype]
    if which == "probs" then
        local d = p[1]:detach()
        Distribution.require(d:ge(0):logical_and(d:le(1)), who, "probs must lie in [0, 1]")
        self.probs = p[1]:clamp(eps, 1 - eps)
        self.logits = self.probs:log() - (-self.probs):log1p()
    else
        self.logits = p[1]
        self.probs = p[1]:sigmoid():clamp(eps, 1 - eps)
    end
    self.batch_shape, self.event_shape = shape, {}
    self._params = { which }
end

function CB:_outside_unstable_region()
    local p = self.probs:detach()
    return p:le(self._lims[1]):logical_or(p:gt(self._lims[2]))
end

function CB:_cut_probs()
    return core.where(self:_outside_unstable_region(), self.probs, self._lims[1])
end

-- the log normalizer log C(p)
function CB:_cont_bern_log_norm()
    local cut = self:_cut_probs()
    local c = cut:detach()
    local below = core.where(c:le(0.5), cut, 0)
    local above = core.where(c:ge(0.5), cut, 1)
    local log_norm = ((-cut):log1p() - cut:log()):abs():log() -
        core.where(c:le(0.5), (below * -2):log1p(), (above * 2 - 1):log())
    local x = (self.probs - 0.5):pow(2)
    local taylor = (x * (104 / 45) + 4 / 3) * x + math.log(2)
    return core.where(self:_outside_unstable_region(), log_norm, taylor)
end

function CB:mean()
    local cut = self:_cut_probs()
    local mus = cut / (cut * 2 - 1) + ((-cut):log1p() - cut:log()):reciprocal()
    local x = self.probs - 0.5
    local taylor = (x:pow(2) * (16 / 45) + 1 / 3) * x + 0.5
    return core.where(self:_outside_unstable_region(), mus, taylor)
end

function CB:variance()
    local cut = self:_cut_probs()
    local vars = cut * (cut - 1) / (-cut * 2 + 1):pow(2) +
        ((-cut):log1p() - cut:log()):pow(-2)
    local x = (self.probs - 0.5):pow(2)
    local taylor = -(-x * (128 / 945) + 1 / 15) * x + 1 / 12
    return core.where(self:_outside_unstable_region(), vars, taylor)
end

function CB:stddev()
    return self:variance():sqrt()
end

function CB:rsample(shape)
    local s = self:extended_shape(shape, "ContinuousBernoulli.rsample")
    local u = core.rand(s, { dtype = self.probs.dtype, device = self.probs.device })
    return self:icdf(u)
end

local function unit(self, value, who)
    value = B.value(self, value, who, self.probs)
    local v = value:detach()
    Distribution.require(v:ge(0):logical_and(v:le(1)), who, "the values must lie in [0, 1]")
    return value
end

function CB:log_prob(value)
    value = unit(self, value, "ContinuousBernoulli.log_prob")
    -- minus the binary cross-entropy with logits (the op table's softplus, as Bernoulli's)
    return -(self.logits:softplus() - self.logits * value) + self:_cont_bern_log_norm()
end

function CB:cdf(value)
    value = unit(self, value, "ContinuousBernoulli.cdf")
    local cut = self:_cut_probs()
    local cdfs = (cut:pow(value) * (-cut + 1):pow(-value + 1) + cut - 1) / (cut * 2 - 1)
    local unbounded = core.where(self:_outside_unstable_region(), cdfs, value)
    local v = value:detach()
    return core.where(v:le(0), 0, core.where(v:ge(1), 1, unbounded))
end

function CB:icdf(value)
    value = B.value(self, value, "ContinuousBernoulli.icdf", self.probs)
    local cut = self:_cut_probs()
    local inv = ((-cut + value * (cut * 2 - 1)):log1p() - (-cut):log1p()) /
        (cut:log() - (-cut):log1p())
    return core.where(self:_outside_unstable_region(), inv, value)
end

function CB:entropy()
    local log_probs0 = (-self.probs):log1p()
    local log_probs1 = self.probs:log()
    return self:mean() * (log_probs0 - log_probs1) - self:_cont_bern_log_norm() - log_probs0
end

-- the exponential family's parts (ExponentialFamily's entropy and KL): PyTorch's, whose
-- unstable region compares the logits with lims - 0.5
CB._mean_carrier_measure = 0

function CB:_natural_params()
    return { self.logits }
end

function CB:_log_normalizer(x)
    local xd = x:detach()
    local outside = xd:le(self._lims[1] - 0.5):logical_or(xd:gt(self._lims[2] - 0.5))
    local cut = core.where(outside, x, self._lims[1] - 0.5)
    local log_norm = (cut:exp() - 1):abs():log() - cut:abs():log()
    local taylor = x * 0.5 + x:pow(2) / 24 - x:pow(4) / 2880
    return core.where(outside, log_norm, taylor)
end

return CB
