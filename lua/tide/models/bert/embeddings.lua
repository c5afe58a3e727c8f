-- BertEmbeddings: word + token type + position embeddings, then LayerNorm and dropout, as
-- Hugging Face's (children word_embeddings, position_embeddings, token_type_embeddings,
-- LayerNorm, dropout).
--
-- Ids are the vocabulary's own, 0-based as in Hugging Face; tide's lookups are 1-based, so the
-- ids are shifted by one (one small integer add over B x T ids, nothing over the embeddings).
-- Without position_ids (or token_type_ids) there is no lookup at all: the first T rows of the
-- position table (the first row of the token type table) are a view, broadcast over the batch.
-- The word embeddings' pad_token_id row gets no gradient (Hugging Face's padding_idx).
local compat = require("tide._compat")
local raise = require("tide.autograd").raise
local nn = require("tide.nn")
local I = require("tide.nn._internal")
local P = require("tide.models.bert.params")

local BertEmbeddings = nn.Module:extend("BertEmbeddings")

function BertEmbeddings:init(config)
    local H = config.hidden_size
    local pad = config.pad_token_id
    local padding_idx = compat.is_integer(pad) and pad + 1 or nil
    self.word_embeddings = P.Embedding(config.vocab_size, H, padding_idx)
    self.position_embeddings = P.Embedding(config.max_position_embeddings, H)
    self.token_type_embeddings = P.Embedding(config.type_vocab_size, H)
    self.LayerNorm = nn.LayerNorm(H, { eps = config.layer_norm_eps })
    self.dropout = nn.Dropout(config.hidden_dropout_prob)
end

-- ids (0-based, integer) looked up in the Embedding emb; what names them in errors, and name
-- the table, with fix what to do (on the host the range is checked here, with 0-based numbers;
-- elsewhere index_select checks it)
local function lookup(emb, name, fix, ids, what, who)
    if ids.dtype ~= "int64" and ids.dtype ~= "int32" then
        raise(string.format("tide: %s: expected %s as integer ids (int64), got %s", who, what,
            ids.dtype))
    end
    local n = emb.num_embeddings
    if ids:numel() > 0 and I.on_host(ids) then
        local lo, hi = ids:min():item(), ids:max():item()
        if lo < 0 or hi >= n then
            local bad = lo < 0 and lo or hi
            raise(string.format("tide: %s: %s holds %d, outside 0..%d (%d entries in %s); %s",
                who, what, compat.tointeger(bad) or bad, n - 1, n, name, fix))
        end
    end
    return I.embedding(ids:add(1), emb.weight, who, emb.padding_idx, true)
end

-- input_ids [B, T]; token_type_ids, position_ids [B, T] or nil -> [B, T, H]
function BertEmbeddings:forward(input_ids, token_type_ids, position_ids, who)
    who = who or "BertEmbeddings"
    local T = input_ids:size(2)
    local words = lookup(self.word_embeddings, "the vocabulary",
        "ids are the vocabulary's own (the tokenizer's)", input_ids, "input_ids", who)
    local types
    if token_type_ids then
        types = lookup(self.token_type_embeddings, "token_type_embeddings",
            "token types are 0 and 1 for a pair (type_vocab_size in config.json)",
            token_type_ids, "token_type_ids", who)
    else
        types = self.token_type_embeddings.weight:narrow(1, 1, 1)
    end
    local positions
    if position_ids then
        positions = lookup(self.position_embeddings, "position_embeddings",
            "positions count from 0 (max_position_embeddings in config.json)", position_ids,
            "position_ids", who)
    else
        local P_ = self.position_embeddings.num_embeddings
        if T > P_ then
            raise(string.format("tide: %s: a sequence of %d tokens is longer than " ..
                "max_position_embeddings %d; truncate the input to %d tokens " ..
                "(the tokenizer's truncation = true, max_length = %d)", who, T, P_, P_, P_, P_))
        end
        positions = self.position_embeddings.weight:narrow(1, 1, T)
    end
    local x = words:add(types):add(positions)
    return self.dropout(self.LayerNorm(x))
end

return BertEmbeddings
