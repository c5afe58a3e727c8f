-- nn.KLDivLoss([{log_target =, reduction = "mean" | "sum" | "none"}]): loss(input, target), as
-- nn.functional.kl_div
local core = require "tide.core"
local Module = require "tide.nn.Module"
local F = require "tide.nn.functional"

local KLDivLoss = Module:extend("KLDivLoss")

function KLDivLoss:init(opts)
    if opts ~= nil then
        core._check_options(opts, "KLDivLoss", { "reduction", "log_target" })
    end
    self.opts = opts
end

function KLDivLoss:forward(input, target)
    return F.kl_div(input, target, self.opts)
end

return KLDivLoss
