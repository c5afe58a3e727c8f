-- nn.KLDivLoss([{log_target =, reduction = "mean" | "sum" | "none" | "batchmean"}]):
-- loss(input, target), as nn.functional.kl_div
local core = require "tide.core"
local Module = require "tide.nn.Module"
local I = require "tide.nn._internal"
local F = require "tide.nn.functional"

local KLDivLoss = Module:extend("KLDivLoss")

function KLDivLoss:init(opts)
    if opts ~= nil then
        core._check_options(opts, "KLDivLoss", { "reduction", "log_target" })
        if opts.reduction ~= nil and opts.reduction ~= "batchmean" then
            I.check_reduction(opts.reduction, "KLDivLoss")
        end
    end
    self.opts = opts
end

function KLDivLoss:forward(input, target)
    I.same_shape_check(input, target, "KLDivLoss") -- errors name the module
    return F.kl_div(input, target, self.opts)
end

return KLDivLoss
