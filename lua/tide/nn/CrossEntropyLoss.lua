-- nn.CrossEntropyLoss([{reduction = "mean" | "sum" | "none"}]): loss(logits {N, C}, target {N})
-- with 1-based int64 class targets; log_softmax fused for stability
local core = require "tide.core"
local Module = require "tide.nn.Module"
local I = require "tide.nn._internal"

local CrossEntropyLoss = Module:extend("CrossEntropyLoss")

function CrossEntropyLoss:init(opts)
    if type(opts) == "table" then
        -- weight, ignore_index and label_smoothing are in API.md but not built yet
        core._check_options(opts, "CrossEntropyLoss", { "reduction" },
            { "weight", "ignore_index", "label_smoothing" })
        opts = opts.reduction
    end
    self.reduction = I.check_reduction(opts or "mean", "CrossEntropyLoss")
end

function CrossEntropyLoss:forward(input, target)
    return I.cross_entropy(input, target, self.reduction, "CrossEntropyLoss")
end

return CrossEntropyLoss
