-- tide.distributions.RelaxedOneHotCategorical(temperature, {probs =} or {logits =}): the
-- Concrete (Gumbel-softmax) relaxation of OneHotCategorical on the simplex, PyTorch 1.13's: a
-- TransformedDistribution of ExpRelaxedCategorical through ExpTransform, event shape {K};
-- rsample's gradients reach the parameters and temperature. Fields temperature, probs, logits.
local args = require("tide.op_args")
local TD = require("tide.distributions.TransformedDistribution")
local ERC = require("tide.distributions.ExpRelaxedCategorical")

local ROHC = TD:extend("RelaxedOneHotCategorical")
ROHC.arg_constraints = require("tide.distributions._arg_constraints").RelaxedOneHotCategorical
ROHC.arg_names = { "temperature", options = true } -- (PyTorch's, by name too)
ROHC.positional_params = { after = 1, names = { "probs", "logits" } } -- (PyTorch's order)

function ROHC:init(temperature, opts, ...)
    args.no_extra("RelaxedOneHotCategorical", 3, ...)
    local base = setmetatable({}, ERC)
    base:_setup("RelaxedOneHotCategorical", temperature, opts)
    TD.init(self, base, require("tide.distributions.transforms.ExpTransform")())
    self.has_rsample = true
    self.temperature, self.probs, self.logits = base.temperature, base.probs, base.logits
    self._params = base._params
end

function ROHC:support()
    return require("tide.distributions.constraints").simplex
end

return ROHC
