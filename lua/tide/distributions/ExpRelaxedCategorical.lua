-- tide.distributions.ExpRelaxedCategorical(temperature, {probs =} or {logits =}): the log of a
-- RelaxedOneHotCategorical draw, PyTorch 1.13's (the Concrete distribution, Maddison et al.
-- 2017), event shape {K}: rsample(shape) is the log-softmax of (logits + g) / temperature, g
-- Gumbel noise from uniforms clamped to [eps, 1 - eps] (gradients reach the parameters and
-- temperature); log_prob(x) = lgamma(K) + (K - 1) log t + sum(s - logsumexp(s)), s = logits -
-- x t. The parameters as Categorical's (probs normalized, logits made log-probabilities);
-- temperature a positive number or tensor.
local core = require("tide.core")
local autograd = require("tide.autograd")
local args = require("tide.op_args")
local raise = autograd.raise
local is_tensor = autograd.is_tensor
local Distribution = require("tide.distributions.Distribution")
local B = require("tide.distributions._binary")
local LRB = require("tide.distributions.LogitRelaxedBernoulli")

local ERC = Distribution:extend("ExpRelaxedCategorical")
ERC.arg_constraints = require("tide.distributions._arg_constraints").ExpRelaxedCategorical
ERC.arg_names = { "temperature", options = true } -- (PyTorch's, by name too)
ERC.positional_params = { after = 1, names = { "probs", "logits" } } -- (PyTorch's order)
ERC.has_rsample = true

-- the parameters, named as who in the errors (RelaxedOneHotCategorical builds its base so)
function ERC:_setup(who, temperature, opts)
    local o = B.options(who, opts, nil, "{logits = t}")
    local which = o.probs ~= nil and "probs" or "logits"
    local t = o[which]
    if not is_tensor(t) or t:dim() < 1 then
        raise(("tide: %s: %s must be a tensor with at least one dim (the classes), got %s")
            :format(who, which, is_tensor(t) and "a 0-dim tensor" or type(t)))
    end
    if not args.FLOAT[t.dtype] then
        raise(("tide: %s: %s must be floating-point, got %s"):format(who, which, t.dtype))
    end
    if which == "probs" then
        Distribution.require(t:detach():ge(0), who, "probs must be >= 0")
    end
    local cat = require("tide.distributions.Categorical")({ [which] = t })
    self._categorical = cat
    self.probs, self.logits = cat.probs, cat.logits
    self.temperature = LRB.temperature_of(who, temperature, t)
    self.num_events = cat.num_events
    self.batch_shape, self.event_shape = cat.batch_shape, { cat.num_events }
    self._params = { which }
end

function ERC:init(temperature, opts, ...)
    args.no_extra("ExpRelaxedCategorical", 3, ...)
    self:_setup("ExpRelaxedCategorical", temperature, opts)
end

function ERC:support()
    return require("tide.distributions.constraints").real_vector
end

function ERC:rsample(shape)
    local s = self:extended_shape(shape, self.__name .. ".rsample")
    local eps = B.EPS[self.logits.dtype]
    local u = core.rand(s, { dtype = self.logits.dtype, device = self.logits.device })
        :clamp(eps, 1 - eps)
    local gumbels = -((-u:log()):log())
    local scores = (self.logits + gumbels) / self.temperature
    return scores - scores:logsumexp(-1, true)
end

function ERC:log_prob(value)
    local who = self.__name .. ".log_prob"
    value = B.value(self, value, who, self.logits)
    local k = self.num_events
    if value:dim() < 1 or value:size(-1) ~= k then
        raise(("tide: %s: the values must be vectors of %d (the classes) along the last dim, " ..
            "got the shape {%s}"):format(who, k, table.concat(value:size(), ", ")))
    end
    Distribution.require(value:detach():eq(value:detach()):all(-1), who,
        "the values must be real numbers (not NaN)")
    local t = self.temperature
    local log_scale = core.full(t:size(), k, { dtype = t.dtype, device = t.device }):lgamma() -
        t:log() * -(k - 1)
    local score = self.logits - value * t
    score = (score - score:logsumexp(-1, true)):sum(-1)
    return score + log_scale
end

return ERC
