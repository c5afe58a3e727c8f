-- nn.LayerNorm(normalized_shape[, eps = 1e-5, elementwise_affine = true]): normalizes over the
-- last dims (biased variance, as PyTorch); weight ones, bias zeros
local core = require "tide.core"
local autograd = require "tide.autograd"
local raise = autograd.raise
local Module = require "tide.nn.Module"
local I = require "tide.nn._internal"

local LayerNorm = Module:extend("LayerNorm")

function LayerNorm:init(normalized_shape, eps, affine)
    if type(eps) == "table" then
        core._check_options(eps, "LayerNorm", { "eps", "elementwise_affine" })
        eps, affine = eps.eps, eps.elementwise_affine
    end
    if type(normalized_shape) ~= "table" then
        normalized_shape = { normalized_shape }
    end
    local d = 1
    for i, s in ipairs(normalized_shape) do
        I.check_int(s, "normalized_shape[" .. i .. "]", "LayerNorm")
        d = d * s
    end
    eps = I.check_number(eps, 1e-5, "eps", "LayerNorm")
    self.normalized_shape, self.d, self.eps = normalized_shape, d, eps
    if affine ~= false then
        self:register_parameter("weight", I.const_param(normalized_shape, 1))
        self:register_parameter("bias", I.const_param(normalized_shape, 0))
    end
end

function LayerNorm:forward(x)
    I.check_tensor(x, "LayerNorm")
    local ns, shape = self.normalized_shape, x.shape
    local k, nd = #ns, #shape
    local ok = nd >= k
    for i = 1, k do
        ok = ok and shape[nd - k + i] == ns[i]
    end
    if not ok then
        raise("tide: LayerNorm: expected input ending in " .. I.shape_str(ns) .. ", got " ..
            I.shape_str(shape))
    end
    if self.weight then
        I.check_device(x, self.weight, "LayerNorm")
    end
    return I.layer_norm(x, self.d, self.weight, self.bias, self.eps)
end

function LayerNorm:extra_repr()
    return I.shape_str(self.normalized_shape) .. ", eps " .. self.eps
end

return LayerNorm
