-- nn.NLLLoss([{reduction =}]): loss(log_probs {N, C}, target {N}), 1-based int64 targets
local core = require "tide.core"
local Module = require "tide.nn.Module"
local F = require "tide.nn.functional"

local NLLLoss = Module:extend("NLLLoss")

function NLLLoss:init(opts)
    if type(opts) == "table" then
        core._check_options(opts, "NLLLoss", { "reduction" })
        opts = opts.reduction
    end
    self.reduction = F.check_reduction(opts or "mean", "NLLLoss")
end

function NLLLoss:forward(input, target)
    return F.nll_loss(input, target, self.reduction)
end

return NLLLoss
