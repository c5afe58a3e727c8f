-- BertForSequenceClassification(config): bert (BertModel), dropout (classifier_dropout, else
-- hidden_dropout_prob), classifier (Linear hidden_size -> num_labels) on the pooled output.
-- out = model(input_ids[, {attention_mask =, token_type_ids =, position_ids =, labels =}]) ->
-- {logits = [B, num_labels], loss =} with labels: as Hugging Face's problem_type (given, or
-- inferred: num_labels == 1 -> "regression", MSE against float labels [B]; integer labels ->
-- "single_label_classification", cross-entropy over 0-based class ids [B] (-100 ignored);
-- else "multi_label_classification", BCE with logits against [B, num_labels]).
local core = require("tide.core")
local nn = require("tide.nn")
local F = require("tide.nn.functional")
local BertModel = require("tide.models.bert.model")
local P = require("tide.models.bert.params")
local pretrained = require("tide.models.bert.pretrained")
local is_null = require("tide.models.bert.config").is_null

local NAME = "BertForSequenceClassification"
local Cls = nn.Module:extend(NAME)

function Cls:init(config, opts, skip_init)
    config = BertModel.config_of(config, NAME)
    core._check_options(opts or {}, NAME, {})
    self.config = config
    self.num_labels = config.num_labels
    self.bert = BertModel(config, nil, true)
    local p = config.classifier_dropout
    self.dropout = nn.Dropout(is_null(p) and config.hidden_dropout_prob or p)
    self.classifier = P.Linear(config.hidden_size, config.num_labels)
    if not skip_init then
        P.init_weights(self, config.initializer_range)
    end
end

local INTEGER = { int64 = true, int32 = true, uint8 = true }

function Cls.loss(config, logits, labels)
    local n = config.num_labels
    local problem = config.problem_type
    if is_null(problem) then
        if n == 1 then
            problem = "regression"
        elseif INTEGER[labels.dtype] then
            problem = "single_label_classification"
        else
            problem = "multi_label_classification"
        end
    end
    if problem == "regression" then
        local y = labels:to(logits.dtype)
        if n == 1 then
            return F.mse_loss(logits:squeeze(), y:squeeze())
        end
        return F.mse_loss(logits, y)
    elseif problem == "single_label_classification" then
        -- 0-based class ids (Hugging Face's) to tide's 1-based targets; -100 stays ignored
        return F.cross_entropy(logits:reshape(-1, n), labels:reshape(-1):to("int64"):add(1),
            { ignore_index = -99 })
    end
    return F.binary_cross_entropy_with_logits(logits, labels:to(logits.dtype))
end

-- The encoder skips the padding (tide.models.bert.packing) whenever every row's [CLS] is a real
-- token: the logits read [CLS] alone, and no real token attends to padding, so they come out as
-- the padded forward's, and so do the gradients, in training too (where the dropout masks then
-- cover the real tokens only: the same distribution, other draws).
local function skip_padding(mask)
    return mask ~= nil and mask:select(2, 1):ne(0):all():item()
end

function Cls:forward(input_ids, opts)
    local o = BertModel.check_call(self.bert, input_ids, opts, NAME, "labels")
    local skip = skip_padding(o.attention_mask)
    local pooled = self.bert:_forward(input_ids, o, NAME, skip).pooler_output
    local logits = self.classifier(self.dropout(pooled))
    local out = { logits = logits }
    if o.labels ~= nil then
        out.loss = Cls.loss(self.config, logits, o.labels)
    end
    return out
end

pretrained.install(Cls, NAME, "bert.")

return Cls
