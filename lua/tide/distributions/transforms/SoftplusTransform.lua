-- tide.distributions.transforms.SoftplusTransform([{cache_size =}]): y = log(1 + exp(x)), from
-- the reals to the positive reals (PyTorch's: x itself above 20); the inverse
-- log(-expm1(-y)) + y; log |dy/dx| = -softplus(-x).
local Transform = require("tide.distributions.transforms.Transform")

local Softplus = Transform:extend("SoftplusTransform")
Softplus.bijective = true
Softplus.sign = 1

function Softplus._getters.domain()
    return require("tide.distributions.constraints").real
end
function Softplus._getters.codomain()
    return require("tide.distributions.constraints").positive
end

Softplus._eq = Transform._same_class

function Softplus:_call(x)
    return x:softplus()
end

function Softplus:_inverse(y)
    return (-y):expm1():neg():log() + y
end

function Softplus:log_abs_det_jacobian(x)
    return -(-x):softplus()
end

return Softplus
