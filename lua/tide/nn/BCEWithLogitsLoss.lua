-- nn.BCEWithLogitsLoss([{reduction = "mean" | "sum" | "none", weight =, pos_weight =}]) (or the
-- reduction alone): loss(input, target), F.binary_cross_entropy_with_logits; weight and
-- pos_weight are buffers (they follow :to())
local core = require("tide.core")
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")

local BCEWithLogitsLoss = Module:extend("BCEWithLogitsLoss")

function BCEWithLogitsLoss:init(opts)
    opts = I.legacy_reduction(opts, "BCEWithLogitsLoss") -- PyTorch's size_average/reduce
    local weight, pos_weight
    if type(opts) == "table" then
        core._check_options(opts, "BCEWithLogitsLoss", { "reduction", "weight", "pos_weight" })
        weight, pos_weight = opts.weight, opts.pos_weight
        opts = opts.reduction
    end
    self.reduction = I.check_reduction(opts or "mean", "BCEWithLogitsLoss")
    if weight ~= nil then
        self:register_buffer("weight", weight)
    end
    if pos_weight ~= nil then
        self:register_buffer("pos_weight", pos_weight)
    end
end

function BCEWithLogitsLoss:forward(...)
    local input, target = require("tide.nn._loss").forward_args("BCEWithLogitsLoss",
        { "input", "target" }, ...)
    return I.binary_cross_entropy_with_logits(input, target, self.reduction, "BCEWithLogitsLoss",
        self.weight, self.pos_weight)
end

return require("tide.nn._loss").signature(BCEWithLogitsLoss)
