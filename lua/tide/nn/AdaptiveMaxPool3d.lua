-- nn.AdaptiveMaxPool3d(output_size[, {return_indices = false}]): input {N, C, D, H, W} (or
-- {C, D, H, W}) to output_size (an integer or {d, h, w}; nil keeps that size) by the max of
-- PyTorch's windows (F.adaptive_max_pool3d)
local core = require("tide.core")
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")
local T = require("tide.nn._args3d")
local S = require("tide.nn._signature")

local AdaptiveMaxPool3d = Module:extend("AdaptiveMaxPool3d")

function AdaptiveMaxPool3d:init(output_size, opts)
    if type(output_size) ~= "table" then
        I.check_int(output_size, "output_size", "AdaptiveMaxPool3d", 0)
    end
    core._check_options(opts or {}, "AdaptiveMaxPool3d", { "return_indices" })
    self.output_size = output_size
    self.return_indices = (opts or {}).return_indices or false
end

function AdaptiveMaxPool3d:forward(x)
    I.check_tensor(x, "AdaptiveMaxPool3d")
    return F.adaptive_max_pool3d(x, self.output_size, { return_indices = self.return_indices })
end

function AdaptiveMaxPool3d:extra_repr()
    return T.output_size_repr(self.output_size)
end

S.define(AdaptiveMaxPool3d, { names = { "output_size", "return_indices" }, required = 1 })

return AdaptiveMaxPool3d
