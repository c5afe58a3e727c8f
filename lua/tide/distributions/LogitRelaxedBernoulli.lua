-- tide.distributions.LogitRelaxedBernoulli(temperature, {probs =} or {logits =}): the logit
-- of a RelaxedBernoulli draw, PyTorch 1.13's (the binary Concrete distribution, Maddison et al.
-- 2017): rsample(shape) is (logit(u) + logit(probs)) / temperature for u uniform, u and probs
-- clamped to [eps, 1 - eps] (gradients reach probs or logits and temperature); log_prob(x) =
-- log t + d - 2 log(1 + e^d), d = logits - x t. temperature is a positive number or tensor
-- (not broadcast into the batch, as PyTorch's); probs in [0, 1], the other parameter derived
-- as Bernoulli's. has_rsample is false, as PyTorch's (RelaxedBernoulli's is true).
local core = require("tide.core")
local autograd = require("tide.autograd")
local args = require("tide.op_args")
local raise = autograd.raise
local is_tensor = autograd.is_tensor
local Distribution = require("tide.distributions.Distribution")
local B = require("tide.distributions._binary")

local LRB = Distribution:extend("LogitRelaxedBernoulli")
LRB.arg_constraints = require("tide.distributions._arg_constraints").LogitRelaxedBernoulli
LRB.arg_names = { "temperature", options = true } -- (PyTorch's, by name too)
LRB.positional_params = { after = 1, names = { "probs", "logits" } } -- (PyTorch's order)
LRB.has_rsample = false

-- temperature as a tensor of like's dtype and device, checked positive
function LRB.temperature_of(who, t, like)
    if type(t) == "number" then
        t = core.full({}, t, { dtype = like.dtype, device = like.device })
    elseif not is_tensor(t) then
        raise(("tide: %s: temperature must be a tensor or a number, got %s"):format(who, type(t)))
    elseif t.device ~= like.device then
        raise(("tide: %s: temperature is on %s and the %s on %s; move one with :to(\"%s\")")
            :format(who, tostring(t.device), "parameters", tostring(like.device),
            tostring(like.device)))
    end
    Distribution.require(t:detach():gt(0), who, "temperature must be positive")
    return t
end

-- the parameters, named as who in the errors (RelaxedBernoulli builds its base with them)
function LRB:_setup(who, temperature, opts)
    if not is_tensor(temperature) and type(temperature) == "table" and opts == nil then
        raise(("tide: %s: temperature comes first: %s(temperature, {probs = ...})"):format(who,
            who))
    end
    local o = B.options(who, opts, nil, "{probs = 0.3}")
    local which = o.probs ~= nil and "probs" or "logits"
    local v = o[which]
    if type(v) == "number" and is_tensor(temperature) and args.FLOAT[temperature.dtype] then
        -- (a number parameter takes the temperature's dtype and device)
        v = core.full({}, v, { dtype = temperature.dtype, device = temperature.device })
    end
    local p = Distribution.broadcast_params(who, { which }, { v })[1]
    if which == "probs" then
        Distribution.require(p:detach():ge(0):logical_and(p:detach():le(1)), who,
            "probs must lie in [0, 1]")
    end
    B.derive(self, which, p)
    self.temperature = LRB.temperature_of(who, temperature, p)
    self.batch_shape, self.event_shape = p:size(), {}
    self._params = { which }
end

function LRB:init(temperature, opts, ...)
    args.no_extra("LogitRelaxedBernoulli", 3, ...)
    self:_setup("LogitRelaxedBernoulli", temperature, opts)
end

function LRB:support()
    return require("tide.distributions.constraints").real
end

local function clamp_probs(p)
    local eps = B.EPS[p.dtype]
    return p:clamp(eps, 1 - eps)
end

function LRB:rsample(shape)
    local s = self:extended_shape(shape, self.__name .. ".rsample")
    local probs = clamp_probs(self.probs:expand(s))
    local u = clamp_probs(core.rand(s, { dtype = probs.dtype, device = probs.device }))
    return (u:log() - (-u):log1p() + probs:log() - (-probs):log1p()) / self.temperature
end

function LRB:log_prob(value)
    local who = self.__name .. ".log_prob"
    value = B.value(self, value, who, self.logits)
    Distribution.require(value:detach():eq(value:detach()), who,
        "the values must be real numbers (not NaN)")
    local diff = self.logits - value * self.temperature
    return self.temperature:log() + diff - diff:exp():log1p() * 2
end

return LRB
