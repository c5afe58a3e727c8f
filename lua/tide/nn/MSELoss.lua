-- nn.MSELoss([{reduction = "mean" | "sum" | "none"}]): loss(input, target)
local core = require("tide.core")
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")

local MSELoss = Module:extend("MSELoss")

function MSELoss:init(opts)
    opts = I.legacy_reduction(opts, "MSELoss") -- PyTorch's size_average/reduce
    if type(opts) == "table" then
        core._check_options(opts, "MSELoss", { "reduction" })
        opts = opts.reduction
    end
    self.reduction = I.check_reduction(opts or "mean", "MSELoss")
end

function MSELoss:forward(...)
    local input, target = require("tide.nn._loss").forward_args("MSELoss", { "input", "target" },
        ...)
    return I.mse_loss(input, target, self.reduction, "MSELoss")
end

return require("tide.nn._loss").signature(MSELoss)
