-- BertEncoder: num_hidden_layers BertLayers in a ModuleList named `layer` (state_dict keys
-- encoder.layer.1... in tide, encoder.layer.0... in Hugging Face's files).
local nn = require("tide.nn")
local BertLayer = require("tide.models.bert.layer").BertLayer

local BertEncoder = nn.Module:extend("BertEncoder")

function BertEncoder:init(config)
    local layers = {}
    for i = 1, config.num_hidden_layers do
        layers[i] = BertLayer(config)
    end
    self.layer = nn.ModuleList(layers)
end

-- x [B, T, H] (or [N, H] with a packing pk: BertLayer) -> the same shape
function BertEncoder:forward(x, mask, pk)
    for i = 1, #self.layer do
        x = self.layer[i](x, mask, pk)
    end
    return x
end

return BertEncoder
