-- nn.L1Loss([{reduction = "mean" | "sum" | "none"}]): loss(input, target), as
-- nn.functional.l1_loss
local core = require "tide.core"
local Module = require "tide.nn.Module"
local I = require "tide.nn._internal"
local F = require "tide.nn.functional"

local L1Loss = Module:extend("L1Loss")

function L1Loss:init(opts)
    if opts ~= nil then
        core._check_options(opts, "L1Loss", { "reduction" })
        if opts.reduction ~= nil then
            I.check_reduction(opts.reduction, "L1Loss")
        end
    end
    self.opts = opts
end

function L1Loss:forward(input, target)
    I.same_shape_check(input, target, "L1Loss") -- errors name the module
    return F.l1_loss(input, target, self.opts)
end

return L1Loss
