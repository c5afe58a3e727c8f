-- nn.MultiLabelMarginLoss([{reduction = "mean" | "sum" | "none"}]): loss(input, target), each
-- row of target 1-based classes ended by 0, as nn.functional.multilabel_margin_loss
return require("tide.nn._loss_weighted")("MultiLabelMarginLoss", { "reduction" },
    "multilabel_margin_loss")
