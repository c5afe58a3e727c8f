-- tide.distributions.NegativeBinomial(total_count, {probs =} or {logits =}[, validate_args =]):
-- the successes before total_count failures (total_count real, >= 0), each trial a success
-- with probability probs, PyTorch's formulas (the other parameter derived as Binomial's; log_prob
-- with log-sigmoids of the logits, its normalizer 0 where total_count + value is 0). sample(shape)
-- is PyTorch's gamma-Poisson mixture: Poisson(Gamma(total_count, exp(-logits))) (no gradient).
-- probs must lie in [0, 1), values be integers >= 0. No entropy, as PyTorch's.
local core = require("tide.core")
local autograd = require("tide.autograd")
local args = require("tide.op_args")
local raise = autograd.raise
local is_tensor = autograd.is_tensor
local Distribution = require("tide.distributions.Distribution")
local B = require("tide.distributions._binary")
local X = require("tide.distributions._extras")
local standard_gamma = require("tide.distributions.gamma_sampler")

local NegativeBinomial = Distribution:extend("NegativeBinomial")
NegativeBinomial.arg_constraints = require("tide.distributions._arg_constraints").NegativeBinomial
NegativeBinomial.arg_names = { "total_count", options = true } -- (PyTorch's, by name too)
NegativeBinomial.positional_params = { after = 1, names = { "probs", "logits" } }
NegativeBinomial.has_rsample = false

function NegativeBinomial:init(total_count, opts, ...)
    local who = "NegativeBinomial"
    args.no_extra(who, 2, ...)
    if opts == nil and type(total_count) == "table" and not is_tensor(total_count) then
        raise(("tide: %s: total_count comes first: NegativeBinomial(total_count, " ..
            "{probs = ...})"):format(who))
    end
    local o = B.options(who, opts, { "validate_args" }, "{probs = 0.3}")
    local validate = X.validate_flag(who, o)
    local which = o.probs ~= nil and "probs" or "logits"
    if total_count == nil then
        raise(("tide: %s: total_count is required (a number or a tensor >= 0)"):format(who))
    end
    if is_tensor(total_count) and not args.FLOAT[total_count.dtype] then
        -- integer counts take the parameter's dtype (PyTorch's type_as)
        local param = o[which]
        total_count = total_count:to(is_tensor(param) and param.dtype or core.get_default_dtype())
    end
    local p, shape = Distribution.broadcast_params(who, { which, "total_count" },
        { o[which], total_count })
    if validate then
        Distribution.require(p[2]:detach():ge(0), who, "total_count must be >= 0")
        if which == "probs" then
            local d = p[1]:detach()
            Distribution.require(d:ge(0):logical_and(d:lt(1)), who, "probs must lie in [0, 1)")
        end
    end
    self.total_count = p[2]
    B.derive(self, which, p[1])
    self._validate = validate
    self.batch_shape, self.event_shape = shape, {}
    self._params = { "total_count", which }
end

function NegativeBinomial:expand(batch_shape)
    local s = X.expand_shape(self, batch_shape)
    local new = X.copy(self)
    new.total_count, new.probs, new.logits = self.total_count:expand(s), self.probs:expand(s),
        self.logits:expand(s)
    new.batch_shape = s
    return new
end

function NegativeBinomial:support()
    return X.support("nonnegative_integer")
end

function NegativeBinomial:mean()
    return self.total_count * self.logits:exp()
end

function NegativeBinomial:mode()
    return ((self.total_count - 1) * self.logits:exp()):floor():clamp(0, nil)
end

function NegativeBinomial:variance()
    return self:mean() / (-self.logits):sigmoid()
end

function NegativeBinomial:stddev()
    return self:variance():sqrt()
end

function NegativeBinomial:sample(shape)
    local s = self:extended_shape(shape, "NegativeBinomial.sample")
    return autograd.no_grad(function()
        local rate = standard_gamma(self.total_count:detach():expand(s):contiguous()) *
            self.logits:detach():exp()
        return require("tide").poisson(rate:contiguous())
    end)
end

function NegativeBinomial:log_prob(value)
    local who = "NegativeBinomial.log_prob"
    value = B.value(self, value, who, self.logits)
    if self._validate then
        local v = value:detach()
        Distribution.require(v:ge(0):logical_and(v:eq(v:floor())):logical_and(v:lt(math.huge)),
            who, "the values must be integers >= 0")
    end
    local F = require("tide.nn.functional")
    local n, l = self.total_count, self.logits
    local log_unnormalized = n * F.logsigmoid(-l) + value * F.logsigmoid(l)
    local log_normalization = -(n + value):lgamma() + (value + 1):lgamma() + n:lgamma()
    log_normalization = core.where((n:detach() + value:detach()):eq(0), 0, log_normalization)
    return log_unnormalized - log_normalization
end

return NegativeBinomial
