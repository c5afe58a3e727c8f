-- nn.CrossEntropyLoss([{reduction = "mean" | "sum" | "none"}]): loss(logits {N, C}, target {N})
-- with 1-based int64 class targets; log_softmax fused for stability
local Module = require "tide.nn.Module"
local F = require "tide.nn.functional"

local CrossEntropyLoss = Module:extend("CrossEntropyLoss")

function CrossEntropyLoss:init(opts)
    if type(opts) == "table" then
        opts = opts.reduction
    end
    self.reduction = F.check_reduction(opts or "mean", "CrossEntropyLoss")
end

function CrossEntropyLoss:forward(input, target)
    return F.cross_entropy(input, target, self.reduction)
end

return CrossEntropyLoss
