-- BertModel(config[, {add_pooling_layer = true}]): embeddings, encoder, pooler, as Hugging
-- Face's. out = model(input_ids[, {attention_mask =, token_type_ids =, position_ids =}]) ->
-- {last_hidden_state = [B, T, H], pooler_output = [B, H]} (no pooler_output without the
-- pooling layer). input_ids are int64 [B, T] of the vocabulary's own (0-based) ids;
-- attention_mask [B, T] holds 1 (or true) where a token takes part, 0 at padding.
local core = require("tide.core")
local autograd = require("tide.autograd")
local nn = require("tide.nn")
local I = require("tide.nn._internal")
local shape_str = require("tide.op_args").shape_str
local BertConfig = require("tide.models.bert.config")
local BertEmbeddings = require("tide.models.bert.embeddings")
local BertEncoder = require("tide.models.bert.encoder")
local BertPooler = require("tide.models.bert.pooler")
local P = require("tide.models.bert.params")
local packing = require("tide.models.bert.packing")
local pretrained = require("tide.models.bert.pretrained")
local raise = autograd.raise

local BertModel = nn.Module:extend("BertModel")

-- each float dtype's limits: the lowest finite value, -max, is Hugging Face's padding mask
-- (torch.finfo.min)
local LIMITS = require("tide._dtype_limits")

function BertModel.config_of(config, who)
    if type(config) ~= "table" then
        raise("tide: " .. who .. ": expected a BertConfig (or a table of its fields) as the " ..
            "first argument, got " .. type(config) .. "; use " .. who ..
            ".from_pretrained(dir) to load a checkpoint")
    end
    return getmetatable(config) == BertConfig and config or BertConfig(config)
end

-- skip_init: from_pretrained's (the values come from the checkpoint)
function BertModel:init(config, opts, skip_init)
    config = BertModel.config_of(config, "BertModel")
    opts = opts or {}
    core._check_options(opts, "BertModel", { "add_pooling_layer" })
    self.config = config
    self.embeddings = BertEmbeddings(config)
    self.encoder = BertEncoder(config)
    if opts.add_pooling_layer ~= false then
        self.pooler = BertPooler(config)
    end
    if not skip_init then
        P.init_weights(self, config.initializer_range)
    end
end

local CALL_KEYS = { "attention_mask", "token_type_ids", "position_ids" }

-- the call's checks (who names the model in errors); returns the options table
function BertModel.check_call(self, input_ids, opts, who, extra)
    if not autograd.is_tensor(input_ids) then
        raise("tide: " .. who .. ": expected input_ids, an int64 tensor {batch, length} of " ..
            "token ids (the tokenizer's input_ids), got " .. type(input_ids))
    end
    if input_ids:dim() ~= 2 then
        raise(string.format("tide: %s: expected input_ids of shape {batch, length}, got %s; " ..
            "for one sequence use ids:view(1, -1)", who, shape_str(input_ids.shape)))
    end
    opts = opts or {}
    if type(opts) ~= "table" then
        raise("tide: " .. who .. ": expected an options table {attention_mask =, " ..
            "token_type_ids =, position_ids =} as the second argument, got " .. type(opts))
    end
    local keys = { CALL_KEYS[1], CALL_KEYS[2], CALL_KEYS[3], extra }
    core._check_options(opts, who, keys)
    local w = self.embeddings.word_embeddings.weight
    I.check_device(input_ids, w, who)
    for _, k in ipairs(keys) do
        local t = opts[k]
        if t ~= nil then
            if not autograd.is_tensor(t) then
                raise(string.format("tide: %s: expected %s to be a tensor, got %s", who, k,
                    type(t)))
            end
            I.check_device(t, w, who)
        end
    end
    for _, k in ipairs(CALL_KEYS) do
        local t = opts[k]
        if t ~= nil and not (t:dim() == 2 and t:size(1) == input_ids:size(1) and
            t:size(2) == input_ids:size(2)) and not (k == "position_ids" and t:dim() == 2 and
            t:size(1) == 1 and t:size(2) == input_ids:size(2)) then
            raise(string.format("tide: %s: expected %s of input_ids' shape %s, got %s", who, k,
                shape_str(input_ids.shape), shape_str(t.shape)))
        end
    end
    return opts
end

-- attention_mask [B, T] -> [B, 1, 1, T] of dtype: 0 where attended, the lowest finite value at
-- padding, as Hugging Face's get_extended_attention_mask
local function extended_mask(mask, dtype)
    local B, T = mask:size(1), mask:size(2)
    return mask:to(dtype):neg():add(1):mul(-LIMITS[dtype].max):view(B, 1, 1, T)
end

-- the forward without the checks (the task models have made them). skip_padding: the encoder
-- works on the real tokens only (tide.models.bert.packing) and last_hidden_state holds zeros
-- at padding (SentenceEncoder's pooling reads none of it; the pooler reads [CLS])
function BertModel:_forward(input_ids, o, who, skip_padding)
    local h = self.embeddings(input_ids, o.token_type_ids, o.position_ids, who)
    local mask = o.attention_mask and extended_mask(o.attention_mask, h.dtype)
    local pk = skip_padding and o.attention_mask and packing.of_mask(o.attention_mask)
    if skip_padding and not pk then
        mask = nil -- no padding anywhere: the mask adds zeros, and attention needs none
    end
    if pk then
        h = packing.unpack(pk, self.encoder(packing.pack(pk, h), mask, pk))
    else
        h = self.encoder(h, mask)
    end
    return { last_hidden_state = h, pooler_output = self.pooler and self.pooler(h) or nil }
end

function BertModel:forward(input_ids, opts)
    local o = BertModel.check_call(self, input_ids, opts, "BertModel")
    return self:_forward(input_ids, o, "BertModel")
end

function BertModel:extra_repr()
    local c = self.config
    return string.format("hidden_size=%d, layers=%d, heads=%d", c.hidden_size,
        c.num_hidden_layers, c.num_attention_heads)
end

pretrained.install(BertModel, "BertModel", "")

return BertModel
