-- nn.PoissonNLLLoss([{log_input = true, full = false, eps = 1e-8, reduction = "mean" |
-- "sum" | "none"}]): loss(input, target), as nn.functional.poisson_nll_loss
local L = require("tide.nn._loss")

return L.pointwise("PoissonNLLLoss", { "reduction", "log_input", "full", "eps" },
    "poisson_nll_loss")
