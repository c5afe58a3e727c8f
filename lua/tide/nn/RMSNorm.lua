-- nn.RMSNorm(normalized_shape[, {eps = nil, elementwise_affine = true}]) (PyTorch 2's): y = x /
-- sqrt(mean(x^2 over the last dims) + eps) * weight, eps nil for the input dtype's machine
-- epsilon; weight ones (no bias). F.rms_norm does the work.
local core = require "tide.core"
local Module = require "tide.nn.Module"
local I = require "tide.nn._internal"
local F = require "tide.nn.functional"

local RMSNorm = Module:extend("RMSNorm")

function RMSNorm:init(normalized_shape, eps, affine)
    if type(eps) == "table" then
        core._check_options(eps, "RMSNorm", { "eps", "elementwise_affine" })
        eps, affine = eps.eps, eps.elementwise_affine
    end
    if type(normalized_shape) ~= "table" then
        normalized_shape = { normalized_shape }
    end
    for i, s in ipairs(normalized_shape) do
        I.check_int(s, "normalized_shape[" .. i .. "]", "RMSNorm")
    end
    if eps ~= nil then
        eps = I.check_number(eps, nil, "eps", "RMSNorm")
    end
    self.normalized_shape, self.eps = normalized_shape, eps
    if affine ~= false then
        self:register_parameter("weight", I.const_param(normalized_shape, 1))
    end
end

function RMSNorm:forward(x)
    I.check_tensor(x, "RMSNorm")
    return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)
end

function RMSNorm:extra_repr()
    return I.shape_str(self.normalized_shape) .. ", eps " .. tostring(self.eps)
end

return RMSNorm
