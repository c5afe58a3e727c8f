-- nn.NLLLoss([{weight =, ignore_index = -100, reduction =}]): loss(log_probs {N, C} or
-- {N, C, d1, ...}, 1-based int64 targets {N} or {N, d1, ...})
local core = require "tide.core"
local Module = require "tide.nn.Module"
local I = require "tide.nn._internal"

local NLLLoss = Module:extend("NLLLoss")

function NLLLoss:init(opts)
    if type(opts) == "table" then
        core._check_options(opts, "NLLLoss", { "reduction", "weight", "ignore_index" })
        if opts.weight ~= nil then -- a buffer, as PyTorch's: it follows the module's :to()
            self:register_buffer("weight", opts.weight)
        end
        self.ignore_index, self.label_smoothing = opts.ignore_index, opts.label_smoothing
        opts = opts.reduction
    end
    self.reduction = I.check_reduction(opts or "mean", "NLLLoss")
end

function NLLLoss:forward(input, target)
    return I.class_loss_entry(input, target, self.reduction, { weight = self.weight,
        ignore_index = self.ignore_index, label_smoothing = self.label_smoothing }, true,
        "NLLLoss")
end

return NLLLoss
