-- nn.HuberLoss([{delta =, reduction = "mean" | "sum" | "none"}]): loss(input, target), as
-- nn.functional.huber_loss
local L = require("tide.nn._loss")

return L.pointwise("HuberLoss", { "reduction", "delta" }, "huber_loss")
