-- tide.distributions.transforms.TanhTransform([{cache_size =}]): y = tanh(x), from the reals to
-- [-1, 1] (PyTorch's): the inverse atanh(y), unclamped (±1 give ±inf: cache_size 1 keeps the
-- x instead); log |dy/dx| = 2 (log 2 - x - softplus(-2 x)), stable for large |x|.
local Transform = require("tide.distributions.transforms.Transform")

local Tanh = Transform:extend("TanhTransform")
Tanh.bijective = true
Tanh.sign = 1

function Tanh._getters.domain()
    return require("tide.distributions.constraints").real
end
function Tanh._getters.codomain()
    return require("tide.distributions.constraints").interval(-1, 1)
end

Tanh._eq = Transform._same_class

function Tanh:_call(x)
    return x:tanh()
end

function Tanh:_inverse(y)
    return y:atanh()
end

function Tanh:log_abs_det_jacobian(x)
    return ((x * -2):softplus() + x):neg():add(math.log(2)):mul(2)
end

return Tanh
