-- tide.distributions.Beta(concentration1, concentration0): the beta distribution on [0, 1],
-- PyTorch's: a Dirichlet of {concentration1, concentration0} read at {x, 1 - x} (log_prob and
-- entropy as there); rsample(shape) by two gamma draws, differentiable to both (Dirichlet's).
-- Both must be positive.
local core = require("tide.core")
local Distribution = require("tide.distributions.Distribution")
local ExponentialFamily = require("tide.distributions.ExponentialFamily")
local Dirichlet = require("tide.distributions.Dirichlet")

local Beta = ExponentialFamily:extend("Beta") -- (PyTorch's base)
Beta.arg_constraints = require("tide.distributions._arg_constraints").Beta
Beta.has_rsample = true -- (PyTorch's class field)
Beta.arg_names = { "concentration1", "concentration0" } -- (PyTorch's, by name too)

function Beta:init(concentration1, concentration0, ...)
    require("tide.op_args").no_extra("Beta", 3, ...)
    local p, shape = Distribution.broadcast_params("Beta", { "concentration1", "concentration0" },
        { concentration1, concentration0 })
    self.concentration1, self.concentration0 = p[1], p[2]
    self._dirichlet = Dirichlet(core.stack({ p[1], p[2] }, -1))
    self.batch_shape, self.event_shape = shape, {}
    self._params = { "concentration1", "concentration0" }
end

function Beta:mean()
    return self.concentration1 / (self.concentration1 + self.concentration0)
end

function Beta:variance()
    local total = self.concentration1 + self.concentration0
    return self.concentration1 * self.concentration0 / (total:pow(2) * (total + 1))
end

function Beta:rsample(shape)
    self:extended_shape(shape, "Beta.rsample") -- (its errors named as this call)
    return self._dirichlet:rsample(shape):select(-1, 1)
end

function Beta:log_prob(value)
    local who = "Beta.log_prob"
    value = self:value_tensor(value, who, self.concentration1)
    Distribution.require(value:detach():ge(0):logical_and(value:detach():le(1)), who,
        "the values must lie in [0, 1]")
    local shape = (value:detach() + self.concentration1:detach()):size()
    local v = value:expand(shape)
    return self._dirichlet:log_prob(core.stack({ v, -v + 1 }, -1))
end

function Beta:entropy()
    return self._dirichlet:entropy()
end

-- the exponential family's parts (ExponentialFamily's KL; PyTorch's: no carrier measure, so
-- no Bregman entropy)
function Beta:_natural_params()
    return { self.concentration1, self.concentration0 }
end

function Beta:_log_normalizer(x, y)
    return x:lgamma() + y:lgamma() - (x + y):lgamma()
end

-- PyTorch 1.13's mode: the Dirichlet's of (concentration1, concentration0), first entry
function Beta:mode()
    local a, b = self.concentration1, self.concentration0
    return Dirichlet._mode(core.stack({ a, b }, -1)):select(-1, 1)
end

return Beta
