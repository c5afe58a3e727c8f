-- tide.distributions.transforms.SigmoidTransform([{cache_size =}]): y = 1 / (1 + exp(-x)),
-- from the reals to [0, 1] (PyTorch's): y clamped to [tiny, 1 - eps] of its dtype, the inverse
-- logit(y) of y so clamped; log |dy/dx| = -softplus(-x) - softplus(x).
local Transform = require("tide.distributions.transforms.Transform")
local U = require("tide.distributions.transforms._util")

local Sigmoid = Transform:extend("SigmoidTransform")
Sigmoid.bijective = true
Sigmoid.sign = 1

function Sigmoid._getters.domain()
    return require("tide.distributions.constraints").real
end
function Sigmoid._getters.codomain()
    return require("tide.distributions.constraints").unit_interval
end

Sigmoid._eq = Transform._same_class

function Sigmoid:_call(x)
    return U.clipped_sigmoid(x)
end

function Sigmoid:_inverse(y)
    y = y:clamp(U.TINY[y.dtype], 1 - U.EPS[y.dtype])
    return y:log() - (-y):log1p()
end

function Sigmoid:log_abs_det_jacobian(x)
    return -(-x):softplus() - x:softplus()
end

return Sigmoid
