-- nn.CTCLoss([{blank = 1, reduction = "mean", zero_infinity = false}]): forward(log_probs,
-- targets, input_lengths, target_lengths), the connectionist temporal classification loss of
-- F.ctc_loss (1-based classes and blank)
local core = require("tide.core")
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")
local L = require("tide.nn._loss")

local CTCLoss = Module:extend("CTCLoss")

function CTCLoss:init(opts)
    if opts ~= nil then
        core._check_options(opts, "CTCLoss", { "blank", "reduction", "zero_infinity" })
        if opts.reduction ~= nil then
            I.check_reduction(opts.reduction, "CTCLoss")
        end
    end
    self.opts = opts
    L.keep(self, "CTCLoss", opts) -- PyTorch's attributes (blank 1-based)
end

function CTCLoss:forward(log_probs, targets, input_lengths, target_lengths)
    I.check_tensor(log_probs, "CTCLoss")
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths,
        L.options(self, "CTCLoss"))
end

return L.signature(CTCLoss)
