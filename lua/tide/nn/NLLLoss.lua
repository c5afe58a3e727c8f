-- nn.NLLLoss([{weight =, ignore_index = -100, reduction =}]): loss(log_probs {N, C} or
-- {N, C, d1, ...}, 1-based int64 targets {N} or {N, d1, ...})
local L = require("tide.nn._loss")

return L.class("NLLLoss", { "reduction", "weight", "ignore_index" }, true)
