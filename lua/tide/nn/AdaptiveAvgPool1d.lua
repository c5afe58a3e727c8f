-- nn.AdaptiveAvgPool1d(output_size): input {N, C, L} (or {C, L}) to output_size (an integer)
-- by averaging PyTorch's windows (F.adaptive_avg_pool1d)
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")
local S = require("tide.nn._signature")

local AdaptiveAvgPool1d = Module:extend("AdaptiveAvgPool1d")

function AdaptiveAvgPool1d:init(output_size)
    if type(output_size) == "table" and #output_size == 1 then
        output_size = output_size[1]
    end
    self.output_size = I.check_int(output_size, "output_size", "AdaptiveAvgPool1d", 0)
end

function AdaptiveAvgPool1d:forward(x)
    I.check_tensor(x, "AdaptiveAvgPool1d")
    return F.adaptive_avg_pool1d(x, self.output_size)
end

S.define(AdaptiveAvgPool1d, { names = { "output_size" }, required = 1, flat = true })

function AdaptiveAvgPool1d:extra_repr() -- PyTorch's
    return "output_size=" .. require("tide.nn._args3d").show(self.output_size)
end

return AdaptiveAvgPool1d
