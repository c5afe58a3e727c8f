-- BertForMaskedLM(config): bert (BertModel without the pooler) and cls.predictions, Hugging
-- Face's BertLMPredictionHead: transform (dense, hidden_act, LayerNorm), decoder (Linear
-- hidden_size -> vocab_size) whose weight is the word embeddings' (tie_word_embeddings, the
-- default) and whose bias is cls.predictions.bias. Tied tensors are one tensor: parameters(),
-- state_dict() and save_pretrained hold each once.
-- out = model(input_ids[, {attention_mask =, token_type_ids =, position_ids =, labels =}]) ->
-- {logits = [B, T, vocab_size], loss =}: cross-entropy against labels [B, T] of token ids,
-- positions labelled -100 ignored (Hugging Face's convention).
local core = require("tide.core")
local nn = require("tide.nn")
local F = require("tide.nn.functional")
local BertModel = require("tide.models.bert.model")
local P = require("tide.models.bert.params")
local activation = require("tide.models.bert.activations")
local pretrained = require("tide.models.bert.pretrained")

local NAME = "BertForMaskedLM"

local Transform = nn.Module:extend("BertPredictionHeadTransform")

function Transform:init(config)
    self.dense = P.Linear(config.hidden_size, config.hidden_size)
    self.act = activation(config.hidden_act)
    self.LayerNorm = nn.LayerNorm(config.hidden_size, { eps = config.layer_norm_eps })
end

function Transform:forward(x)
    return self.LayerNorm(activation.apply(self.act, self.dense, x))
end

local Head = nn.Module:extend("BertLMPredictionHead")

function Head:init(config)
    -- registered before the decoder: the bias is saved as cls.predictions.bias
    self:register_parameter("bias", core.empty({ config.vocab_size }))
    self.transform = Transform(config)
    self.decoder = P.Linear(config.hidden_size, config.vocab_size, { bias = false })
    self.decoder:register_parameter("bias", self.bias)
end

function Head:forward(x)
    return self.decoder(self.transform(x))
end

local OnlyMLMHead = nn.Module:extend("BertOnlyMLMHead")

function OnlyMLMHead:init(config)
    self.predictions = Head(config)
end

function OnlyMLMHead:forward(x)
    return self.predictions(x)
end

local MLM = nn.Module:extend(NAME)

function MLM:init(config, opts, skip_init)
    config = BertModel.config_of(config, NAME)
    core._check_options(opts or {}, NAME, {})
    self.config = config
    self.bert = BertModel(config, { add_pooling_layer = false }, true)
    self.cls = OnlyMLMHead(config)
    if config.tie_word_embeddings ~= false then
        rawset(self.cls.predictions.decoder, "weight", self.bert.embeddings.word_embeddings.weight)
    end
    if not skip_init then
        P.init_weights(self, config.initializer_range)
    end
end

function MLM:forward(input_ids, opts)
    local o = BertModel.check_call(self.bert, input_ids, opts, NAME, "labels")
    local h = self.bert:_forward(input_ids, o, NAME).last_hidden_state
    local logits = self.cls(h)
    local out = { logits = logits }
    if o.labels ~= nil then
        local V = logits:size(-1)
        out.loss = F.cross_entropy(logits:reshape(-1, V),
            o.labels:reshape(-1):to("int64"):add(1), { ignore_index = -99 })
    end
    return out
end

function MLM:get_output_embeddings()
    return self.cls.predictions.decoder
end

function MLM:get_input_embeddings()
    return self.bert.embeddings.word_embeddings
end

pretrained.install(MLM, NAME, "bert.")

return MLM
