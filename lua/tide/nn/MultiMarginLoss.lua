-- nn.MultiMarginLoss([{p = 1, margin = 1, weight = (one per class, a buffer), reduction =}]):
-- loss(input, target) with 1-based class targets, as nn.functional.multi_margin_loss
return require("tide.nn._loss_weighted")("MultiMarginLoss",
    { "reduction", "p", "margin", "weight" }, "multi_margin_loss")
