-- tide.distributions.Uniform(low, high): uniform on [low, high), PyTorch's formulas;
-- rsample(shape) is low + u (high - low) with u uniform in [0, 1) (gradients reach low and
-- high); log_prob is -log(high - low), a value outside [low, high) refused as PyTorch's
-- (validate_args on). low must be below high.
local core = require("tide.core")
local Distribution = require("tide.distributions.Distribution")

local Uniform = Distribution:extend("Uniform")
Uniform.arg_constraints = require("tide.distributions._arg_constraints").Uniform
Uniform.has_rsample = true -- (PyTorch's class field)
Uniform.arg_names = { "low", "high" } -- (PyTorch's, by name too)

function Uniform:init(low, high, ...)
    require("tide.op_args").no_extra("Uniform", 3, ...)
    local p, shape = Distribution.broadcast_params("Uniform", { "low", "high" }, { low, high })
    self.low, self.high = p[1], p[2]
    Distribution.require(self.low:detach():lt(self.high:detach()), "Uniform",
        "low must be below high")
    self.batch_shape, self.event_shape = shape, {}
    self._params = { "low", "high" }
end

function Uniform:mean()
    return (self.high + self.low) / 2
end

function Uniform:stddev()
    return (self.high - self.low) / math.sqrt(12)
end

function Uniform:variance()
    return (self.high - self.low):pow(2) / 12
end

function Uniform:rsample(shape)
    local s = self:extended_shape(shape, "Uniform.rsample")
    local u = core.rand(s, { dtype = self.low.dtype, device = self.low.device })
    return self.low + u * (self.high - self.low)
end

local function inside(self, value, who)
    value = self:value_tensor(value, who, self.low)
    Distribution.require(self.low:detach():le(value:detach())
        :logical_and(self.high:detach():gt(value:detach())), who,
        "the values must lie in [low, high)")
    return value
end

function Uniform:log_prob(value)
    value = inside(self, value, "Uniform.log_prob")
    local lb = self.low:le(value):to(self.low.dtype) -- 1 inside (checked): the value's shape
    local ub = self.high:gt(value):to(self.low.dtype)
    return lb:mul(ub):log() - (self.high - self.low):log()
end

function Uniform:cdf(value)
    value = self:value_tensor(value, "Uniform.cdf", self.low)
    return ((value - self.low) / (self.high - self.low)):clamp(0, 1)
end

-- (PyTorch's: no check of value; Kumaraswamy's icdf goes through it)
function Uniform:icdf(value)
    value = self:value_tensor(value, "Uniform.icdf", self.low)
    return value * (self.high - self.low) + self.low
end

function Uniform:entropy()
    return (self.high - self.low):log()
end

-- PyTorch 1.13's mode: NaN
function Uniform:mode()
    return self.high * (0 / 0)
end

return Uniform
