-- tide.models.bert: Hugging Face's BERT, checkpoints read and written as transformers does.
--   BertConfig(t), BertModel, BertForSequenceClassification, BertForMaskedLM: each
--   X(config) fresh (Hugging Face's initialisation), X.from_pretrained(dir[, {device =,
--   dtype =, strict = true}]) -> model (eval mode), info; model:save_pretrained(dir).
-- docs/API.md, "Pretrained text models", has the calls.
return {
    BertConfig = require("tide.models.bert.config"),
    BertModel = require("tide.models.bert.model"),
    BertForSequenceClassification = require("tide.models.bert.sequence_classification"),
    BertForMaskedLM = require("tide.models.bert.masked_lm"),
}
