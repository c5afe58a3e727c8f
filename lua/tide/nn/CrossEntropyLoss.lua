-- nn.CrossEntropyLoss([{weight =, ignore_index = -100, label_smoothing = 0, reduction = "mean" |
-- "sum" | "none"}]): loss(logits {N, C} or {N, C, d1, ...}, 1-based int64 class targets {N} or
-- {N, d1, ...}); log_softmax fused for stability, one autograd node when no option is in play
local core = require "tide.core"
local Module = require "tide.nn.Module"
local I = require "tide.nn._internal"

local CrossEntropyLoss = Module:extend("CrossEntropyLoss")

function CrossEntropyLoss:init(opts)
    if type(opts) == "table" then
        core._check_options(opts, "CrossEntropyLoss", { "reduction", "weight", "ignore_index",
            "label_smoothing" })
        if opts.weight ~= nil then -- a buffer, as PyTorch's: it follows the module's :to()
            self:register_buffer("weight", opts.weight)
        end
        self.ignore_index, self.label_smoothing = opts.ignore_index, opts.label_smoothing
        opts = opts.reduction
    end
    self.reduction = I.check_reduction(opts or "mean", "CrossEntropyLoss")
end

function CrossEntropyLoss:forward(input, target)
    return I.class_loss_entry(input, target, self.reduction, { weight = self.weight,
        ignore_index = self.ignore_index, label_smoothing = self.label_smoothing }, false,
        "CrossEntropyLoss")
end

return CrossEntropyLoss
