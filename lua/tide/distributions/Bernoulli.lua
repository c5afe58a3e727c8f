-- tide.distributions.Bernoulli({probs =} or {logits =}): 1 with probability probs (sigmoid of
-- logits), 0 otherwise, PyTorch's formulas: log_prob(value) is minus the binary cross-entropy
-- with logits, entropy() the same of the probabilities; the other parameter is derived (the
-- log-odds of probs clamped to [eps, 1 - eps], or the sigmoid). sample(shape) draws 0 and 1 in
-- the parameters' dtype (no gradient). probs (or a number) must lie in [0, 1].
local core = require("tide.core")
local autograd = require("tide.autograd")
local args = require("tide.op_args")
local raise = autograd.raise
local is_tensor = autograd.is_tensor
local Distribution = require("tide.distributions.Distribution")
local ExponentialFamily = require("tide.distributions.ExponentialFamily")

local Bernoulli = ExponentialFamily:extend("Bernoulli") -- (PyTorch's base)
Bernoulli.arg_constraints = require("tide.distributions._arg_constraints").Bernoulli
Bernoulli.has_enumerate_support = true -- (PyTorch's class field)
Bernoulli.has_rsample = false -- (PyTorch's class field)
Bernoulli.positional_params = { after = 0, names = { "probs", "logits" } } -- (PyTorch's order)

local LIMITS = require("tide._dtype_limits") -- each float dtype's eps

-- log(1 + e^x) - x t: binary cross-entropy with logits x and targets t (softplus, the op
-- table's: no overflow, and sigmoid(x) - t its gradient at 0 too)
local function bce_with_logits(x, t)
    return x:softplus() - x * t
end

function Bernoulli:init(opts, ...)
    args.no_extra("Bernoulli", 2, ...)
    local who = "Bernoulli"
    if type(opts) ~= "table" or is_tensor(opts) then
        raise(("tide: %s: expected {probs = ...} or {logits = ...}, got %s"):format(who,
            is_tensor(opts) and "a tensor" or type(opts)))
    end
    local o = args.options(who, opts, { "probs", "logits", "validate_args" },
        "{probs = 0.3}")
    if (o.probs == nil) == (o.logits == nil) then
        raise(("tide: %s: give exactly one of probs and logits"):format(who))
    end
    if o.probs ~= nil then
        local p = Distribution.broadcast_params(who, { "probs" }, { o.probs })
        self.probs = p[1]
        Distribution.require(self.probs:detach():ge(0):logical_and(self.probs:detach():le(1)),
            who, "probs must lie in [0, 1]")
        local eps = LIMITS[self.probs.dtype].eps
        local c = self.probs:clamp(eps, 1 - eps)
        self.logits = c:log() - c:neg():log1p()
        self._params = { "probs" }
    else
        local l = Distribution.broadcast_params(who, { "logits" }, { o.logits })
        self.logits = l[1]
        self.probs = self.logits:sigmoid()
        self._params = { "logits" }
    end
    self.batch_shape, self.event_shape = self.probs:size(), {}
end

function Bernoulli:mean()
    return self.probs
end

function Bernoulli:variance()
    return self.probs * (-self.probs + 1)
end

function Bernoulli:sample(shape)
    local s = self:extended_shape(shape, "Bernoulli.sample")
    return autograd.no_grad(function()
        return self.probs:expand(s):bernoulli()
    end)
end

function Bernoulli:log_prob(value)
    local who = "Bernoulli.log_prob"
    value = self:value_tensor(value, who, self.logits)
    value = value.dtype == self.logits.dtype and value or value:to(self.logits.dtype)
    Distribution.require(value:detach():eq(0):logical_or(value:detach():eq(1)), who,
        "the values must be 0 or 1")
    return -bce_with_logits(self.logits, value)
end

function Bernoulli:entropy()
    return bce_with_logits(self.logits, self.probs)
end

-- the exponential family's parts (ExponentialFamily's entropy and KL; PyTorch's)
Bernoulli._mean_carrier_measure = 0

function Bernoulli:_natural_params()
    return { (self.probs / (-self.probs + 1)):log() }
end

function Bernoulli:_log_normalizer(x)
    return (x:exp() + 1):log()
end

-- PyTorch 1.13's mode: 1 where probs >= 0.5, NaN at 0.5
function Bernoulli:mode()
    local p = self.probs
    local m = p:ge(0.5):to(p.dtype)
    return m:masked_fill(p:eq(0.5), 0 / 0)
end

-- PyTorch's enumerate_support([expand = true]): the values 0 and 1
function Bernoulli:enumerate_support(expand)
    local p = self.probs
    return self:_enumerate(core.tensor({ 0, 1 }, { dtype = p.dtype, device = p.device }), 0, expand)
end

return Bernoulli
