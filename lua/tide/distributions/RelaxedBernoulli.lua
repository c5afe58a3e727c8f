-- tide.distributions.RelaxedBernoulli(temperature, {probs =} or {logits =}): the binary
-- Concrete (Gumbel-softmax) relaxation of Bernoulli on (0, 1), PyTorch 1.13's: a
-- TransformedDistribution of LogitRelaxedBernoulli through SigmoidTransform; rsample's
-- gradients reach probs or logits and temperature. Fields temperature, probs, logits.
local args = require("tide.op_args")
local TD = require("tide.distributions.TransformedDistribution")
local LRB = require("tide.distributions.LogitRelaxedBernoulli")

local RelaxedBernoulli = TD:extend("RelaxedBernoulli")
RelaxedBernoulli.arg_constraints = require("tide.distributions._arg_constraints").RelaxedBernoulli
RelaxedBernoulli.arg_names = { "temperature", options = true } -- (PyTorch's, by name too)
RelaxedBernoulli.positional_params = { after = 1, names = { "probs", "logits" } }

function RelaxedBernoulli:init(temperature, opts, ...)
    args.no_extra("RelaxedBernoulli", 3, ...)
    local base = setmetatable({}, LRB)
    base:_setup("RelaxedBernoulli", temperature, opts)
    TD.init(self, base, require("tide.distributions.transforms.SigmoidTransform")())
    self.has_rsample = true
    self.temperature, self.probs, self.logits = base.temperature, base.probs, base.logits
    self._params = base._params
end

function RelaxedBernoulli:support()
    return require("tide.distributions.constraints").unit_interval
end

return RelaxedBernoulli
