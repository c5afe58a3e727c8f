-- nn.NLLLoss2d([{weight =, ignore_index = -100, reduction =}]): PyTorch's deprecated name of
-- nn.NLLLoss (a subclass of it, as PyTorch's): log-probabilities {N, C, d1, ...} (or {N, C}),
-- 1-based int64 targets; its errors name NLLLoss2d
local L = require("tide.nn._loss")

return L.class("NLLLoss2d", { "reduction", "weight", "ignore_index" }, true,
    require("tide.nn.NLLLoss"))
