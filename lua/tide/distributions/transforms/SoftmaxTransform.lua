-- tide.distributions.transforms.SoftmaxTransform([{cache_size =}]): from real vectors to the
-- simplex by exp(x) normalized along the last dim (PyTorch's: x less its max first); not
-- bijective (its inverse is log y, one of the preimages), no log_abs_det_jacobian.
local Transform = require("tide.distributions.transforms.Transform")

local Softmax = Transform:extend("SoftmaxTransform")

function Softmax._getters.domain()
    return require("tide.distributions.constraints").real_vector
end
function Softmax._getters.codomain()
    return require("tide.distributions.constraints").simplex
end

Softmax._eq = Transform._same_class

local function at_least_one_dim(self, x, who)
    if x:dim() < 1 then
        require("tide.autograd").raise(("tide: %s: expected at least 1 dim (the vector), " ..
            "got a 0-dim tensor"):format(who))
    end
end

function Softmax:_call(x)
    at_least_one_dim(self, x, "SoftmaxTransform")
    local probs = (x - x:max(-1, true)):exp()
    return probs / probs:sum(-1, true)
end

function Softmax:_inverse(y)
    return y:log()
end

local function check_shape(self, shape, who)
    shape = self:_shape(shape, who)
    if #shape < 1 then
        require("tide.autograd").raise(("tide: %s: expected at least 1 dim, got the shape {}")
            :format(who))
    end
    return shape
end

function Softmax:forward_shape(shape)
    return check_shape(self, shape, "SoftmaxTransform.forward_shape")
end

function Softmax:inverse_shape(shape)
    return check_shape(self, shape, "SoftmaxTransform.inverse_shape")
end

return Softmax
