-- tide.distributions.transforms.StickBreakingTransform([{cache_size =}]): from real vectors of
-- K - 1 to the simplex of K by stick-breaking (PyTorch's): z_k = sigmoid(x_k - log(K - k))
-- (clipped), y_k = z_k prod_{j<k} (1 - z_j), the last y the stick left. Bijective; the inverse
-- clamps the stick left to tiny; log |det J| = sum(-x' + logsigmoid(x') + log y_k), x' the
-- shifted x.
local core = require("tide.core")
local autograd = require("tide.autograd")
local raise = autograd.raise
local Transform = require("tide.distributions.transforms.Transform")
local U = require("tide.distributions.transforms._util")

local StickBreaking = Transform:extend("StickBreakingTransform")
StickBreaking.bijective = true

function StickBreaking._getters.domain()
    return require("tide.distributions.constraints").real_vector
end
function StickBreaking._getters.codomain()
    return require("tide.distributions.constraints").simplex
end

StickBreaking._eq = Transform._same_class

local function vector(x, who)
    if x:dim() < 1 then
        raise(("tide: %s: expected at least 1 dim (the vector), got a 0-dim tensor"):format(who))
    end
    return x:size(-1)
end

-- log of K, K - 1, ..., 1 for x of K entries along its last dim (PyTorch's offset)
local function log_offset(x, k)
    return core.arange(k, 0, -1, { dtype = x.dtype, device = x.device }):log()
end

function StickBreaking:_call(x)
    local k = vector(x, "StickBreakingTransform")
    local z = U.clipped_sigmoid(x - log_offset(x, k))
    local z_cumprod = (-z + 1):cumprod(-1)
    return U.pad_last(z, 0, 1, 1) * U.pad_last(z_cumprod, 1, 0, 1)
end

function StickBreaking:_inverse(y)
    local k = vector(y, "StickBreakingTransform.inv")
    if k < 2 then
        raise("tide: StickBreakingTransform.inv: expected vectors of at least 2 " ..
            "entries on the simplex, got 1")
    end
    local y_crop = y:narrow(-1, 1, k - 1)
    local sf = (-y_crop:cumsum(-1) + 1):clamp(U.TINY[y.dtype], nil)
    return y_crop:log() - sf:log() + log_offset(y, k - 1)
end

function StickBreaking:log_abs_det_jacobian(x, y)
    local k = vector(x, "StickBreakingTransform.log_abs_det_jacobian")
    x = x - log_offset(x, k)
    local logsigmoid = require("tide.nn.functional").logsigmoid
    return (-x + logsigmoid(x) + y:narrow(-1, 1, y:size(-1) - 1):log()):sum(-1)
end

local function check(self, shape, who)
    shape = self:_shape(shape, who)
    if #shape < 1 then
        raise(("tide: %s: expected at least 1 dim, got the shape {}"):format(who))
    end
    return shape
end

function StickBreaking:forward_shape(shape)
    shape = check(self, shape, "StickBreakingTransform.forward_shape")
    local out = U.drop_last(shape, 1)
    out[#out + 1] = shape[#shape] + 1
    return out
end

function StickBreaking:inverse_shape(shape)
    shape = check(self, shape, "StickBreakingTransform.inverse_shape")
    local out = U.drop_last(shape, 1)
    out[#out + 1] = shape[#shape] - 1
    return out
end

return StickBreaking
