-- nn.NLLLoss([{reduction =}]): loss(log_probs {N, C}, target {N}), 1-based int64 targets
local core = require "tide.core"
local Module = require "tide.nn.Module"
local I = require "tide.nn._internal"

local NLLLoss = Module:extend("NLLLoss")

function NLLLoss:init(opts)
    if type(opts) == "table" then
        core._check_options(opts, "NLLLoss", { "reduction" })
        opts = opts.reduction
    end
    self.reduction = I.check_reduction(opts or "mean", "NLLLoss")
end

function NLLLoss:forward(input, target)
    return I.nll_loss(input, target, self.reduction, "NLLLoss")
end

return NLLLoss
