-- nn.HuberLoss([{delta =, reduction = "mean" | "sum" | "none"}]): loss(input, target), as
-- nn.functional.huber_loss
local core = require "tide.core"
local Module = require "tide.nn.Module"
local I = require "tide.nn._internal"
local F = require "tide.nn.functional"

local HuberLoss = Module:extend("HuberLoss")

function HuberLoss:init(opts)
    if opts ~= nil then
        core._check_options(opts, "HuberLoss", { "reduction", "delta" })
        if opts.reduction ~= nil then
            I.check_reduction(opts.reduction, "HuberLoss")
        end
    end
    self.opts = opts
end

function HuberLoss:forward(input, target)
    I.same_shape_check(input, target, "HuberLoss") -- errors name the module
    return F.huber_loss(input, target, self.opts)
end

return HuberLoss
