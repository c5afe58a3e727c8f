-- nn.BCEWithLogitsLoss([{reduction = "mean" | "sum" | "none"}]): loss(input, target)
local core = require "tide.core"
local Module = require "tide.nn.Module"
local F = require "tide.nn.functional"

local BCEWithLogitsLoss = Module:extend("BCEWithLogitsLoss")

function BCEWithLogitsLoss:init(opts)
    if type(opts) == "table" then
        core._check_options(opts, "BCEWithLogitsLoss", { "reduction" })
        opts = opts.reduction
    end
    self.reduction = F.check_reduction(opts or "mean", "BCEWithLogitsLoss")
end

function BCEWithLogitsLoss:forward(input, target)
    return F.binary_cross_entropy_with_logits(input, target, self.reduction)
end

return BCEWithLogitsLoss
