-- nn.CosineEmbeddingLoss([{margin = 0, reduction = "mean"}]): loss(x1, x2, y), as
-- F.cosine_embedding_loss
return require("tide.nn._loss3")("CosineEmbeddingLoss", { "margin", "reduction" },
    "cosine_embedding_loss")
