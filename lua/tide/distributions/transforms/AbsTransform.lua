-- tide.distributions.transforms.AbsTransform([{cache_size =}]): y = |x|, from the reals to the
-- positive reals (PyTorch's); not bijective: its inverse returns y itself, and it has no
-- log_abs_det_jacobian or sign.
local Transform = require("tide.distributions.transforms.Transform")

local Abs = Transform:extend("AbsTransform")

function Abs._getters.domain()
    return require("tide.distributions.constraints").real
end
function Abs._getters.codomain()
    return require("tide.distributions.constraints").positive
end

Abs._eq = Transform._same_class

function Abs:_call(x)
    return x:abs()
end

function Abs:_inverse(y)
    return y
end

return Abs
