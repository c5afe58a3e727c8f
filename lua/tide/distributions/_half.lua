-- tide.distributions._half: what HalfNormal and HalfCauchy share. PyTorch builds both as
-- |X| for X ~ Base(0, scale), a distribution symmetric about 0, so the density is twice
-- Base's on [0, inf), the cdf 2 F - 1, the icdf F^-1((p + 1) / 2) and the entropy Base's
-- minus log 2; rsample(shape) is |X| (gradients reach scale). scale must be positive,
-- values >= 0. Each file adds only its moments.
local core = require("tide.core")
local Distribution = require("tide.distributions.Distribution")

-- half(name, Base): the class `name` folding Base(0, scale)
return function(name, Base)
    local Half = Distribution:extend(name)
    Half.arg_names = { "scale" } -- (PyTorch's, by name too)
    Half.arg_constraints = require("tide.distributions._arg_constraints")[name]
    Half.has_rsample = true -- (PyTorch's class field)

    function Half:init(scale, ...)
        require("tide.op_args").no_extra(name, 2, ...)
        local p, shape = Distribution.broadcast_params(name, { "scale" }, { scale })
        self.scale = p[1]
        Distribution.require(self.scale:detach():gt(0), name, "scale must be positive")
        self.base_dist = Base(core.zeros(shape, { dtype = self.scale.dtype,
            device = self.scale.device }), self.scale)
        self.batch_shape, self.event_shape = shape, {}
        self._params = { "scale" }
    end

    function Half:rsample(shape)
        self:extended_shape(shape, name .. ".rsample")
        return self.base_dist:rsample(shape):abs()
    end

    local function nonnegative(self, value, who)
        value = self:value_tensor(value, who, self.scale)
        Distribution.require(value:detach():ge(0), who, "the values must be >= 0")
        return value
    end

    function Half:log_prob(value)
        value = nonnegative(self, value, name .. ".log_prob")
        return self.base_dist:log_prob(value) + math.log(2)
    end

    function Half:cdf(value)
        value = nonnegative(self, value, name .. ".cdf")
        return self.base_dist:cdf(value) * 2 - 1
    end

    function Half:icdf(value)
        value = self:value_tensor(value, name .. ".icdf", self.scale)
        return self.base_dist:icdf((value + 1) / 2)
    end

    function Half:entropy()
        return self.base_dist:entropy() - math.log(2)
    end

    return Half
end
