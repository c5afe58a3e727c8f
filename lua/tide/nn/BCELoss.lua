-- nn.BCELoss([{weight =, reduction = "mean" | "sum" | "none"}]): loss(input, target), as
-- nn.functional.binary_cross_entropy
local L = require("tide.nn._loss")

return L.pointwise("BCELoss", { "reduction", "weight" }, "binary_cross_entropy")
