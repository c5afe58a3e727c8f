-- tide.distributions.transforms.CumulativeDistributionTransform(distribution[, {cache_size =}]):
-- y = distribution:cdf(x), from the distribution's support to [0, 1] (PyTorch's): the inverse
-- its icdf, log |dy/dx| its log_prob(x); bijective, sign +1. A Gaussian copula:
-- TransformedDistribution(MultivariateNormal(...), {CumulativeDistributionTransform(Normal(0,
-- 1))}).
local autograd = require("tide.autograd")
local args = require("tide.op_args")
local Transform = require("tide.distributions.transforms.Transform")

local CDT = Transform:extend("CumulativeDistributionTransform")
CDT.bijective = true
CDT.sign = 1

function CDT:init(distribution, opts, ...)
    local who = "CumulativeDistributionTransform"
    args.no_extra(who, 3, ...)
    if type(distribution) ~= "table" or not distribution.batch_shape then
        autograd.raise(("tide: %s: expected a distribution, got %s"):format(who,
            autograd.is_tensor(distribution) and "a tensor" or type(distribution)))
    end
    self.distribution = distribution
    self:_options(opts)
end

function CDT._getters.domain(self)
    return self.distribution:support()
end
function CDT._getters.codomain()
    return require("tide.distributions.constraints").unit_interval
end

function CDT:with_cache(n)
    n = n == nil and 1 or n
    if self._cache_size == n then
        return self
    end
    return CDT(self.distribution, { cache_size = n })
end

function CDT:_call(x)
    return self.distribution:cdf(x)
end

function CDT:_inverse(y)
    return self.distribution:icdf(y)
end

function CDT:log_abs_det_jacobian(x)
    return self.distribution:log_prob(x)
end

return CDT
