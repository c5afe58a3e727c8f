-- nn.SoftMarginLoss([{reduction = "mean" | "sum" | "none"}]): loss(input, target), as
-- nn.functional.soft_margin_loss
local L = require("tide.nn._loss")

return L.pointwise("SoftMarginLoss", { "reduction" }, "soft_margin_loss")
