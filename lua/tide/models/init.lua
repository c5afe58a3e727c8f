-- tide.models: pretrained model families, each loaded on first use (tide.models.bert).
local lazy = { bert = "tide.models.bert", SentenceEncoder = "tide.models.SentenceEncoder" }

return require("tide._lazy")({}, lazy)
