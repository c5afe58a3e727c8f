-- nn.L1Loss([{reduction = "mean" | "sum" | "none"}]): loss(input, target), as
-- nn.functional.l1_loss
local L = require("tide.nn._loss")

return L.pointwise("L1Loss", { "reduction" }, "l1_loss")
