-- nn.AdaptiveMaxPool2d(output_size[, {return_indices = false}]): input {N, C, H, W} (or
-- {C, H, W}) to output_size (an integer or {h, w}; nil keeps that size) by the max of
-- PyTorch's windows (F.adaptive_max_pool2d)
local core = require("tide.core")
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")
local S = require("tide.nn._signature")

local AdaptiveMaxPool2d = Module:extend("AdaptiveMaxPool2d")

function AdaptiveMaxPool2d:init(output_size, opts)
    if type(output_size) ~= "table" then
        I.check_int(output_size, "output_size", "AdaptiveMaxPool2d", 0)
    end
    core._check_options(opts or {}, "AdaptiveMaxPool2d", { "return_indices" })
    self.output_size = output_size
    self.return_indices = (opts or {}).return_indices or false
end

function AdaptiveMaxPool2d:forward(x)
    I.check_tensor(x, "AdaptiveMaxPool2d")
    return F.adaptive_max_pool2d(x, self.output_size, { return_indices = self.return_indices })
end

S.define(AdaptiveMaxPool2d, { names = { "output_size", "return_indices" }, required = 1 })

function AdaptiveMaxPool2d:extra_repr() -- PyTorch's
    return "output_size=" .. require("tide.nn._args3d").show(self.output_size)
end

return AdaptiveMaxPool2d
