-- nn.RMSNorm(normalized_shape[, eps = nil[, elementwise_affine = true[, device[, dtype]]]]), or
-- by name {eps =, elementwise_affine =, device =, dtype =} (PyTorch 2.4's): y = x /
-- sqrt(mean(x^2 over the last dims) + eps) * weight, eps nil for the input dtype's machine
-- epsilon; weight ones (no bias). F.rms_norm does the work.
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")
local S = require("tide.nn._signature")

local RMSNorm = Module:extend("RMSNorm")

function RMSNorm:init(normalized_shape, eps, affine)
    I.norm_init(self, "RMSNorm", normalized_shape, eps, affine, nil, false)
end

function RMSNorm:forward(x)
    I.check_tensor(x, "RMSNorm")
    if self.weight then
        I.check_device(x, self.weight, "RMSNorm") -- its dtype may differ: PyTorch promotes
    end
    return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)
end

function RMSNorm:extra_repr()
    return I.shape_str(self.normalized_shape) .. ", eps " .. tostring(self.eps)
end

-- PyTorch's (normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None)
S.define(RMSNorm, { names = { "normalized_shape", "eps", "elementwise_affine", "device",
    "dtype" }, required = 1, factory = true })

return RMSNorm
