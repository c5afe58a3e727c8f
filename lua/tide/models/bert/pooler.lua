-- BertPooler: tanh(dense(h[:, first token])), the [CLS] summary the classifier reads.
local nn = require("tide.nn")
local P = require("tide.models.bert.params")

local BertPooler = nn.Module:extend("BertPooler")

function BertPooler:init(config)
    self.dense = P.Linear(config.hidden_size, config.hidden_size)
end

-- [B, T, H] -> [B, H]
function BertPooler:forward(hidden)
    return self.dense(hidden:select(2, 1)):tanh()
end

return BertPooler
