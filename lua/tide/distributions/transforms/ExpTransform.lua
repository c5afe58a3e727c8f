-- tide.distributions.transforms.ExpTransform([{cache_size =}]): y = exp(x), from the reals to
-- the positive reals (PyTorch's); log |dy/dx| = x.
local Transform = require("tide.distributions.transforms.Transform")

local Exp = Transform:extend("ExpTransform")
Exp.bijective = true
Exp.sign = 1

function Exp._getters.domain()
    return require("tide.distributions.constraints").real
end
function Exp._getters.codomain()
    return require("tide.distributions.constraints").positive
end

Exp._eq = Transform._same_class

function Exp:_call(x)
    return x:exp()
end

function Exp:_inverse(y)
    return y:log()
end

function Exp:log_abs_det_jacobian(x)
    return x
end

return Exp
