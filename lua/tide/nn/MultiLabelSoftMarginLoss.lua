-- nn.MultiLabelSoftMarginLoss([{weight = (one per class, a buffer), reduction =}]):
-- loss(input, target), as nn.functional.multilabel_soft_margin_loss
return require("tide.nn._loss_weighted")("MultiLabelSoftMarginLoss", { "reduction", "weight" },
    "multilabel_soft_margin_loss")
