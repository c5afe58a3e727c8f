-- BertEncoder: num_hidden_layers BertLayers in a ModuleList named `layer` (state_dict keys
-- encoder.layer.1... in tide, encoder.layer.0... in Hugging Face's files).
local nn = require("tide.nn")
local check_budget = require("tide.op_args").check_budget
local BertLayer = require("tide.models.bert.layer").BertLayer

local BertEncoder = nn.Module:extend("BertEncoder")

function BertEncoder:init(config)
    -- the layers' parameters checked at once: each layer is small, so a huge count would
    -- otherwise build layers until memory runs out
    local h, i = config.hidden_size, config.intermediate_size
    local per_layer = 4.0 * h * (h + 1) + 2.0 * h * i + i + 5.0 * h
    check_budget("BertModel", config.num_hidden_layers * per_layer, 4,
        ("num_hidden_layers = %d layers of %.0f parameters"):format(config.num_hidden_layers,
            per_layer), "use a smaller num_hidden_layers")
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
