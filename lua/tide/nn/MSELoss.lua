-- nn.MSELoss([{reduction = "mean" | "sum" | "none"}]): loss(input, target)
local core = require "tide.core"
local Module = require "tide.nn.Module"
local F = require "tide.nn.functional"

local MSELoss = Module:extend("MSELoss")

function MSELoss:init(opts)
    if type(opts) == "table" then
        core._check_options(opts, "MSELoss", { "reduction" })
        opts = opts.reduction
    end
    self.reduction = F.check_reduction(opts or "mean", "MSELoss")
end

function MSELoss:forward(input, target)
    return F.mse_loss(input, target, self.reduction)
end

return MSELoss
