-- nn.LayerNorm(normalized_shape[, eps = 1e-5, elementwise_affine = true]): normalizes over the
-- last dims (biased variance, as PyTorch); weight ones, bias zeros
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local S = require("tide.nn._signature")

local LayerNorm = Module:extend("LayerNorm")

function LayerNorm:init(normalized_shape, eps, affine)
    I.norm_init(self, "LayerNorm", normalized_shape, eps, affine, 1e-5, true)
end

function LayerNorm:forward(x)
    I.check_tensor(x, "LayerNorm")
    I.check_trailing(x.shape, self.normalized_shape, "LayerNorm")
    local weight = self.weight -- read once: a parametrized weight is computed per read
    if weight then
        I.check_device(x, weight, "LayerNorm")
    end
    I.check_norm_dtype(x, weight, "LayerNorm", "weight", true)
    I.check_norm_dtype(x, self.bias, "LayerNorm", "bias", true)
    return I.layer_norm(x, self.d, weight, self.bias, self.eps)
end

function LayerNorm:extra_repr() -- PyTorch's
    return I.shape_str(self.normalized_shape) .. ", eps=" .. tostring(self.eps) ..
        ", elementwise_affine=" .. tostring(self.elementwise_affine)
end

S.define(LayerNorm, { names = { "normalized_shape", "eps", "elementwise_affine", "device", "dtype" },
    required = 1, factory = true })

-- m:reset_parameters(): PyTorch's, weight ones and bias zeros again (with affine parameters)
function LayerNorm:reset_parameters()
    I.reset_affine(self)
end

return LayerNorm
