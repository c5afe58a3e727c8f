-- nn.AdaptiveAvgPool2d(output_size): input {N, C, H, W} (or {C, H, W}) to output_size (an
-- integer or {h, w}; nil keeps that size) by averaging PyTorch's windows
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")
local S = require("tide.nn._signature")

local AdaptiveAvgPool2d = Module:extend("AdaptiveAvgPool2d")

function AdaptiveAvgPool2d:init(output_size)
    if type(output_size) ~= "table" then
        I.check_int(output_size, "output_size", "AdaptiveAvgPool2d", 0)
    end
    self.output_size = output_size
end

function AdaptiveAvgPool2d:forward(x)
    I.check_tensor(x, "AdaptiveAvgPool2d")
    return F.adaptive_avg_pool2d(x, self.output_size)
end

S.define(AdaptiveAvgPool2d, { names = { "output_size" }, required = 1, flat = true })

function AdaptiveAvgPool2d:extra_repr() -- PyTorch's
    return "output_size=" .. require("tide.nn._args3d").show(self.output_size)
end

return AdaptiveAvgPool2d
