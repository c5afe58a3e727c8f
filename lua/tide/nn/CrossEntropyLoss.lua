-- nn.CrossEntropyLoss([{weight =, ignore_index = -100, label_smoothing = 0, reduction = "mean" |
-- "sum" | "none"}]): loss(logits {N, C} or {N, C, d1, ...}, 1-based int64 class targets {N} or
-- {N, d1, ...}); log_softmax fused for stability, one autograd node when no option is in play
local L = require("tide.nn._loss")

return L.class("CrossEntropyLoss", { "reduction", "weight", "ignore_index",
    "label_smoothing" }, false)
