-- nn.BCELoss([{weight =, reduction = "mean" | "sum" | "none"}]): loss(input, target), as
-- nn.functional.binary_cross_entropy
local core = require "tide.core"
local Module = require "tide.nn.Module"
local I = require "tide.nn._internal"
local F = require "tide.nn.functional"

local BCELoss = Module:extend("BCELoss")

function BCELoss:init(opts)
    if opts ~= nil then
        core._check_options(opts, "BCELoss", { "reduction", "weight" })
        if opts.reduction ~= nil then
            I.check_reduction(opts.reduction, "BCELoss")
        end
    end
    self.opts = opts
end

function BCELoss:forward(input, target)
    I.same_shape_check(input, target, "BCELoss") -- errors name the module
    return F.binary_cross_entropy(input, target, self.opts)
end

return BCELoss
