-- BertConfig(t): Hugging Face's BertConfig, the fields of config.json with the same names and
-- defaults. Keys tide does not use are kept (and written back by save_pretrained); values tide
-- cannot honour raise. num_labels (not a field of config.json, as in transformers) makes
-- id2label/label2id ({["0"] = "LABEL_0", ...}) when they are not given; config.num_labels is
-- the number of labels either way.
local compat = require("tide._compat")
local raise = require("tide.autograd").raise
local json = require("tide.models._json")
local files = require("tide._files")

local BertConfig = { __name = "BertConfig" }

-- the default label names ({["0"] = "LABEL_0", ...}), made when first read: num_labels alone
-- costs nothing until then, however large
local function default_labels(c)
    local id2label, label2id = {}, {}
    for i = 0, rawget(c, "num_labels") - 1 do
        id2label[tostring(i)] = "LABEL_" .. i
        label2id["LABEL_" .. i] = i
    end
    rawset(c, "id2label", id2label)
    rawset(c, "label2id", label2id)
end

BertConfig.__index = function(c, k)
    if (k == "id2label" or k == "label2id") and rawget(c, "id2label") == nil then
        default_labels(c)
        return rawget(c, k)
    end
    return BertConfig[k]
end

-- transformers 4.46.3's BertConfig defaults
local DEFAULTS = {
    vocab_size = 30522, hidden_size = 768, num_hidden_layers = 12, num_attention_heads = 12,
    intermediate_size = 3072, hidden_act = "gelu", hidden_dropout_prob = 0.1,
    attention_probs_dropout_prob = 0.1, max_position_embeddings = 512, type_vocab_size = 2,
    initializer_range = 0.02, layer_norm_eps = 1e-12, pad_token_id = 0,
    position_embedding_type = "absolute", use_cache = true, classifier_dropout = json.null,
}

-- hidden_act values tide implements (tide.models.bert.activations)
BertConfig.ACTIVATIONS = { gelu = true, gelu_new = true, gelu_pytorch_tanh = true,
    gelu_fast = true, relu = true, silu = true, swish = true, tanh = true }

local INTS = { "vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
    "intermediate_size", "max_position_embeddings", "type_vocab_size" }
local PROBS = { "hidden_dropout_prob", "attention_probs_dropout_prob" }

local function is_null(v)
    return v == nil or v == json.null
end
BertConfig.is_null = is_null

local function bad(msg)
    raise("tide: BertConfig: " .. msg)
end

local function count(t)
    local n = 0
    for _ in pairs(t) do
        n = n + 1
    end
    return n
end

local function new(t)
    if t ~= nil and type(t) ~= "table" then
        bad("expected a table of config.json's fields (e.g. {hidden_size = 384}), got " .. type(t))
    end
    if t ~= nil and getmetatable(t) == BertConfig then
        t = t:to_dict()
    elseif t ~= nil and getmetatable(t) ~= nil then -- an object: a Module, a tensor's table...
        local mt = getmetatable(t)
        bad("expected a BertConfig or a plain table of config.json's fields, got " ..
            (type(mt) == "table" and type(rawget(mt, "__name")) == "string" and
            "a " .. mt.__name or "a table with a metatable") .. " (its fields are no config)")
    end
    local c = setmetatable({}, BertConfig)
    for k, v in pairs(DEFAULTS) do
        c[k] = v
    end
    for k, v in pairs(t or {}) do
        if type(k) ~= "string" then
            bad("keys are field names (strings), got a " .. type(k) .. " key")
        end
        c[k] = v
    end
    if c.model_type ~= nil and c.model_type ~= "bert" then
        bad(string.format('model_type "%s" is not BERT; tide.models.bert reads config.json ' ..
            'files with model_type "bert"', tostring(c.model_type)))
    end
    c.model_type = "bert"
    for _, k in ipairs(INTS) do
        local v = c[k]
        if not compat.is_integer(v) or v < 1 then
            bad(string.format("expected %s to be an integer >= 1, got %s", k, tostring(v)))
        end
    end
    for _, k in ipairs(PROBS) do
        local v = c[k]
        if type(v) ~= "number" or v < 0 or v > 1 then
            bad(string.format("expected %s to be a probability in [0, 1], got %s", k, tostring(v)))
        end
    end
    if not is_null(c.classifier_dropout) and (type(c.classifier_dropout) ~= "number" or
        c.classifier_dropout < 0 or c.classifier_dropout > 1) then
        bad("expected classifier_dropout to be null or a probability in [0, 1], got " ..
            tostring(c.classifier_dropout))
    end
    if c.hidden_size % c.num_attention_heads ~= 0 then
        bad(string.format("hidden_size %d is not a multiple of num_attention_heads %d",
            c.hidden_size, c.num_attention_heads))
    end
    if type(c.layer_norm_eps) ~= "number" or c.layer_norm_eps < 0 then
        bad("expected layer_norm_eps to be a number >= 0, got " .. tostring(c.layer_norm_eps))
    end
    if type(c.initializer_range) ~= "number" or c.initializer_range < 0 then
        bad("expected initializer_range to be a number >= 0, got " ..
            tostring(c.initializer_range))
    end
    if not BertConfig.ACTIVATIONS[c.hidden_act] then
        bad(string.format('hidden_act "%s" is not supported; use "gelu", "gelu_new", ' ..
            '"gelu_pytorch_tanh", "gelu_fast", "relu", "silu" or "tanh"', tostring(c.hidden_act)))
    end
    if c.position_embedding_type ~= "absolute" then
        bad(string.format('position_embedding_type "%s" is not supported; tide implements ' ..
            '"absolute" only', tostring(c.position_embedding_type)))
    end
    for _, k in ipairs({ "is_decoder", "add_cross_attention" }) do
        if c[k] == true then
            bad(k .. " = true is not supported: tide's BERT models are encoders; set " .. k ..
                " to false")
        end
    end
    if type(c.pruned_heads) == "table" and next(c.pruned_heads) ~= nil then
        bad("pruned_heads is not supported; use a checkpoint without pruned heads")
    end
    if not is_null(c.pad_token_id) and (not compat.is_integer(c.pad_token_id) or
        c.pad_token_id < 0 or c.pad_token_id >= c.vocab_size) then
        bad(string.format("pad_token_id %s is not a token id in 0..%d (vocab_size - 1)",
            tostring(c.pad_token_id), c.vocab_size - 1))
    end
    -- labels: id2label wins over num_labels, as transformers' PretrainedConfig does
    local n = c.num_labels
    if type(rawget(c, "id2label")) == "table" and count(c.id2label) > 0 then
        n = count(c.id2label)
    elseif n ~= nil then
        if not compat.is_integer(n) or n < 1 then
            bad("expected num_labels to be an integer >= 1, got " .. tostring(n))
        end
        c.id2label, c.label2id = nil, nil
    else
        n = 2
    end
    if type(rawget(c, "id2label")) ~= "table" or count(c.id2label) == 0 then
        c.id2label, c.label2id = nil, nil -- default_labels, when first read
    elseif type(c.label2id) ~= "table" then
        c.label2id = {}
        for k, v in pairs(c.id2label) do
            if type(v) ~= "string" and (type(v) ~= "number" or v ~= v) then -- (NaN: no key)
                bad(string.format("id2label maps ids to label names (strings), got %s at %s",
                    type(v) == "number" and "nan" or type(v), tostring(k)))
            end
            c.label2id[v] = compat.tointeger(tonumber(k)) or k
        end
    end
    c.num_labels = n
    local p = c.problem_type
    if not is_null(p) and p ~= "regression" and p ~= "single_label_classification" and
        p ~= "multi_label_classification" then
        bad(string.format('problem_type "%s" is not one of "regression", ' ..
            '"single_label_classification", "multi_label_classification"', tostring(p)))
    end
    return c
end

setmetatable(BertConfig, { __call = function(_, t)
    return new(t)
end })

-- the fields as config.json holds them (num_labels is implied by id2label)
function BertConfig:to_dict()
    local _ = self.id2label -- the default names, written as transformers writes them
    local t = {}
    for k, v in pairs(self) do
        if k ~= "num_labels" then
            t[k] = v
        end
    end
    return t
end

function BertConfig:to_json_string()
    return json.encode(self:to_dict()) .. "\n"
end

-- reads a config.json file (path names it in errors)
function BertConfig.from_json_file(path)
    local ok, t = pcall(json.decode, files.read_or_raise(path, "BertConfig"), path)
    if not ok then
        raise(tostring(t))
    end
    if type(t) ~= "table" or json.is_array(t) then
        raise("tide: BertConfig: " .. path .. " does not hold a JSON object")
    end
    return new(t)
end

function BertConfig.__tostring(self)
    return "BertConfig " .. self:to_json_string()
end

return BertConfig
