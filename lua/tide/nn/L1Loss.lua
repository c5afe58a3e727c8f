-- nn.L1Loss([{reduction = "mean" | "sum" | "none"}]): loss(input, target), as
-- nn.functional.l1_loss
local core = require "tide.core"
local Module = require "tide.nn.Module"
local F = require "tide.nn.functional"

local L1Loss = Module:extend("L1Loss")

function L1Loss:init(opts)
    if opts ~= nil then
        core._check_options(opts, "L1Loss", { "reduction" })
    end
    self.opts = opts
end

function L1Loss:forward(input, target)
    return F.l1_loss(input, target, self.opts)
end

return L1Loss
