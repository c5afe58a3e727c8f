-- tide.distributions.transforms.PowerTransform(exponent[, {cache_size =}]): y = x^exponent on
-- the positive reals (PyTorch's), exponent a number or a tensor (broadcast against x); the
-- inverse y^(1 / exponent); log |dy/dx| = log |exponent y / x|. The field exponent is a tensor
-- (a number taken in the default dtype), as PyTorch's.
local core = require("tide.core")
local autograd = require("tide.autograd")
local args = require("tide.op_args")
local Transform = require("tide.distributions.transforms.Transform")
local U = require("tide.distributions.transforms._util")

local Power = Transform:extend("PowerTransform")
Power.bijective = true
Power.sign = 1

function Power:init(exponent, opts, ...)
    args.no_extra("PowerTransform", 3, ...)
    if type(exponent) == "number" then
        self._e = exponent -- (computed with as a number: its exact value)
        self.exponent = core.full({}, exponent, { dtype = core.get_default_dtype() })
    elseif autograd.is_tensor(exponent) then
        self._e, self.exponent = exponent, exponent
    else
        autograd.raise(("tide: PowerTransform: exponent must be a number or a tensor, got %s")
            :format(type(exponent)))
    end
    self:_options(opts)
end

function Power._getters.domain()
    return require("tide.distributions.constraints").positive
end
function Power._getters.codomain()
    return require("tide.distributions.constraints").positive
end

function Power:with_cache(n)
    n = n == nil and 1 or n
    if self._cache_size == n then
        return self
    end
    return Power(self._e, { cache_size = n })
end

function Power:_eq(other)
    if getmetatable(other) ~= Power then
        return false
    end
    return self.exponent:eq(other.exponent:to(self.exponent.device)):all():item()
end

function Power:_call(x)
    return x:pow(self._e)
end

function Power:_inverse(y)
    if type(self._e) == "number" then
        return y:pow(1 / self._e)
    end
    return y:pow(self._e:reciprocal())
end

function Power:log_abs_det_jacobian(x, y)
    return (y * self._e / x):abs():log()
end

local function shape_with(self, shape, who)
    shape = self:_shape(shape, who)
    return U.broadcast_shapes(who, shape, self.exponent:size())
end

function Power:forward_shape(shape)
    return shape_with(self, shape, "PowerTransform.forward_shape")
end

function Power:inverse_shape(shape)
    return shape_with(self, shape, "PowerTransform.inverse_shape")
end

return Power
