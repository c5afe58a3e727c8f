-- nn.AdaptiveAvgPool3d(output_size): input {N, C, D, H, W} (or {C, D, H, W}) to output_size (an
-- integer or {d, h, w}; nil keeps that size) by averaging PyTorch's windows
-- (F.adaptive_avg_pool3d)
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")
local T = require("tide.nn._args3d")
local S = require("tide.nn._signature")

local AdaptiveAvgPool3d = Module:extend("AdaptiveAvgPool3d")

function AdaptiveAvgPool3d:init(output_size)
    if type(output_size) ~= "table" then
        I.check_int(output_size, "output_size", "AdaptiveAvgPool3d", 0)
    end
    self.output_size = output_size
end

function AdaptiveAvgPool3d:forward(x)
    I.check_tensor(x, "AdaptiveAvgPool3d")
    return F.adaptive_avg_pool3d(x, self.output_size)
end

function AdaptiveAvgPool3d:extra_repr()
    return T.output_size_repr(self.output_size)
end

S.define(AdaptiveAvgPool3d, { names = { "output_size" }, required = 1, flat = true })

return AdaptiveAvgPool3d
