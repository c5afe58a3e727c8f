-- nn.HingeEmbeddingLoss([{margin = 1, reduction = "mean" | "sum" | "none"}]): loss(input,
-- target), as nn.functional.hinge_embedding_loss
local L = require("tide.nn._loss")

return L.pointwise("HingeEmbeddingLoss", { "reduction", "margin" }, "hinge_embedding_loss")
