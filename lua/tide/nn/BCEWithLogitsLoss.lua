-- nn.BCEWithLogitsLoss([{reduction = "mean" | "sum" | "none"}]): loss(input, target)
local core = require "tide.core"
local Module = require "tide.nn.Module"
local I = require "tide.nn._internal"

local BCEWithLogitsLoss = Module:extend("BCEWithLogitsLoss")

function BCEWithLogitsLoss:init(opts)
    if type(opts) == "table" then
        core._check_options(opts, "BCEWithLogitsLoss", { "reduction" })
        opts = opts.reduction
    end
    self.reduction = I.check_reduction(opts or "mean", "BCEWithLogitsLoss")
end

function BCEWithLogitsLoss:forward(input, target)
    return I.binary_cross_entropy_with_logits(input, target, self.reduction, "BCEWithLogitsLoss")
end

return BCEWithLogitsLoss
