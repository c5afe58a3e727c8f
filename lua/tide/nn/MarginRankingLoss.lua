-- nn.MarginRankingLoss([{margin = 0, reduction = "mean"}]): loss(x1, x2, y), as
-- F.margin_ranking_loss
return require("tide.nn._loss3")("MarginRankingLoss", { "margin", "reduction" },
    "margin_ranking_loss")
