-- nn.KLDivLoss([{log_target =, reduction = "mean" | "sum" | "none" | "batchmean"}]):
-- loss(input, target), as nn.functional.kl_div
local L = require("tide.nn._loss")

return L.pointwise("KLDivLoss", { "reduction", "log_target" }, "kl_div", "batchmean")
