-- nn.SmoothL1Loss([{beta =, reduction = "mean" | "sum" | "none"}]): loss(input, target), as
-- nn.functional.smooth_l1_loss
local L = require("tide.nn._loss")

return L.pointwise("SmoothL1Loss", { "reduction", "beta" }, "smooth_l1_loss")
