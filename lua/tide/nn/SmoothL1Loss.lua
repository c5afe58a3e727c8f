-- nn.SmoothL1Loss([{beta =, reduction = "mean" | "sum" | "none"}]): loss(input, target), as
-- nn.functional.smooth_l1_loss
local core = require "tide.core"
local Module = require "tide.nn.Module"
local I = require "tide.nn._internal"
local F = require "tide.nn.functional"

local SmoothL1Loss = Module:extend("SmoothL1Loss")

function SmoothL1Loss:init(opts)
    if opts ~= nil then
        core._check_options(opts, "SmoothL1Loss", { "reduction", "beta" })
        if opts.reduction ~= nil then
            I.check_reduction(opts.reduction, "SmoothL1Loss")
        end
    end
    self.opts = opts
end

function SmoothL1Loss:forward(input, target)
    I.same_shape_check(input, target, "SmoothL1Loss") -- errors name the module
    return F.smooth_l1_loss(input, target, self.opts)
end

return SmoothL1Loss
