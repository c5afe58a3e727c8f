-- nn.TripletMarginLoss([{margin = 1, p = 2, eps = 1e-6, swap = false, reduction = "mean"}]):
-- loss(anchor, positive, negative), as F.triplet_margin_loss
return require("tide.nn._loss3")("TripletMarginLoss", { "margin", "p", "eps", "swap",
    "reduction" }, "triplet_margin_loss")
