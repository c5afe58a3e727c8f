--- tide.models.SentenceEncoder: sentence vectors from a sentence-transformers directory (what
-- `SentenceTransformer.save` writes and the hub's sentence-transformers models ship, such as
-- all-MiniLM-L6-v2 from `make models`), the same vectors as sentence-transformers' `encode`.
--
--   local enc = tide.models.SentenceEncoder.from_pretrained("models/all-MiniLM-L6-v2")
--   local v = enc:encode({"A cat.", "A dog."})        -- [2, 384] float32, in the given order
--   local sim = v:matmul(v:t())                         -- cosine similarities (normalised)
--
-- The directory: modules.json lists the modules, in order: a Transformer (a BERT checkpoint with
-- its tokenizer, at the module's path), a Pooling (its config.json: the pooling_mode_* flags),
-- and optionally a Normalize (no files of its own; its folder may be absent). Other module types
-- (Dense, ...) raise. sentence_bert_config.json gives max_seq_length (else the smaller of the
-- model's max_position_embeddings and the tokenizer's model_max_length) and do_lower_case
-- (lowercases ASCII letters before tokenizing; uncased vocabularies lowercase anyway).
--
-- encode sorts the sentences by length (characters, longest first, as sentence-transformers),
-- encodes them batch_size at a time, so each batch pads to a similar length, and returns the
-- vectors in the caller's order. Fields: enc.model (tide.models.bert.BertModel), enc.tokenizer
-- (tide.text.BertTokenizer), enc.device, enc.dim (the vector size), enc.pooling (the modes, in
-- sentence-transformers' concatenation order), enc.normalize (whether the directory
-- normalises), enc.max_seq_length (may be set, as sentence-transformers' model.max_seq_length).
local compat = require("tide._compat")
local core = require("tide.core")
local tide = require("tide")
local raise = require("tide.autograd").raise
local json = require("tide.models._json")
local files = require("tide._files")

local SentenceEncoder = { __name = "SentenceEncoder" }
SentenceEncoder.__index = SentenceEncoder

local TRANSFORMER = "sentence_transformers.models.Transformer"
local POOLING = "sentence_transformers.models.Pooling"
local NORMALIZE = "sentence_transformers.models.Normalize"

-- the pooling modes sentence-transformers concatenates, in its order, with their config keys
local MODES = {
    { "cls", "pooling_mode_cls_token" },
    { "max", "pooling_mode_max_tokens" },
    { "mean", "pooling_mode_mean_tokens" },
    { "mean_sqrt_len", "pooling_mode_mean_sqrt_len_tokens" },
}
local UNSUPPORTED_MODES = { pooling_mode_weightedmean_tokens = "weightedmean",
    pooling_mode_lasttoken = "lasttoken" }

local function read_json(path, who)
    local s = files.read(path)
    if not s then
        return nil
    end
    local ok, v = pcall(json.decode, s, who .. ": " .. path)
    if not ok then
        raise(v)
    end
    return v
end

local function join(dir, path)
    if path == nil or path == "" or path == json.null then
        return dir
    end
    return dir .. "/" .. path
end

--- SentenceEncoder.from_pretrained(dir[, {device =, dtype =}]): device and dtype are the
-- model's (BertModel.from_pretrained's); encode returns float32 vectors on that device.
function SentenceEncoder.from_pretrained(dir, opts)
    local who = "SentenceEncoder.from_pretrained"
    if type(dir) ~= "string" then
        raise("tide: " .. who .. ": expected a directory path (a string), got " .. type(dir))
    end
    if opts ~= nil then
        core._check_options(opts, who, { "device", "dtype" })
    end
    opts = opts or {}
    if type(io) ~= "table" or type(io.open) ~= "function" then
        raise("tide: " .. who .. ": the io library is not available in this Lua host")
    end
    dir = dir:gsub("/+$", "")
    local modules = read_json(dir .. "/modules.json", who)
    if modules == nil then
        raise(string.format("tide: %s: %s is not a sentence-transformers directory (no " ..
            "modules.json); give the directory SentenceTransformer.save wrote (make models " ..
            "fetches models/all-MiniLM-L6-v2), or load a plain BERT checkpoint with " ..
            "tide.models.bert.BertModel.from_pretrained", who, dir))
    end
    if type(modules) ~= "table" or not json.is_array(modules) then
        raise("tide: " .. who .. ": " .. dir .. "/modules.json: expected a list of modules")
    end
    local transformer, pooling, normalize
    for i, m in ipairs(modules) do
        local kind = type(m) == "table" and m.type
        if kind == TRANSFORMER and not transformer and not pooling then
            transformer = join(dir, m.path)
        elseif kind == POOLING and transformer and not pooling then
            pooling = join(dir, m.path)
        elseif kind == NORMALIZE and pooling and not normalize then
            normalize = true
        else
            raise(string.format("tide: %s: %s/modules.json: module %d (%s) is not supported; " ..
                "tide runs a Transformer, then a Pooling, then optionally a Normalize", who, dir,
                i, tostring(kind)))
        end
    end
    if not transformer or not pooling then
        raise(string.format("tide: %s: %s/modules.json lists no %s; tide runs a Transformer, " ..
            "then a Pooling, then optionally a Normalize", who, dir,
            transformer and "Pooling module" or "Transformer module"))
    end

    local pcfg = read_json(pooling .. "/config.json", who)
    if type(pcfg) ~= "table" then
        raise(string.format("tide: %s: %s/config.json is missing: the Pooling module's " ..
            "configuration (pooling_mode_mean_tokens = true, ...)", who, pooling))
    end
    local modes = {}
    for _, m in ipairs(MODES) do
        if pcfg[m[2]] == true then
            modes[#modes + 1] = m[1]
        end
    end
    for key, name in pairs(UNSUPPORTED_MODES) do
        if pcfg[key] == true then
            raise(string.format("tide: %s: %s/config.json: pooling mode %s is not supported " ..
                "(tide pools cls, max, mean, mean_sqrt_len)", who, pooling, name))
        end
    end
    if #modes == 0 then
        raise(string.format("tide: %s: %s/config.json sets no pooling mode; set one of " ..
            "pooling_mode_cls_token, pooling_mode_max_tokens, pooling_mode_mean_tokens, " ..
            "pooling_mode_mean_sqrt_len_tokens to true", who, pooling))
    end

    local bert = require("tide.models.bert")
    local text = require("tide.text")
    local model = bert.BertModel.from_pretrained(transformer,
        { device = opts.device, dtype = opts.dtype })
    model:eval()
    local tokenizer = text.BertTokenizer.from_pretrained(transformer)

    local sbert = read_json(transformer .. "/sentence_bert_config.json", who) or {}
    local max_len = sbert.max_seq_length
    if type(max_len) ~= "number" then
        max_len = model.config.max_position_embeddings
        local tcfg = read_json(transformer .. "/tokenizer_config.json", who) or {}
        if type(tcfg.model_max_length) == "number" and tcfg.model_max_length < max_len then
            max_len = tcfg.model_max_length
        end
    end
    local dim = model.config.hidden_size
    if type(pcfg.word_embedding_dimension) == "number" and pcfg.word_embedding_dimension ~= dim then
        raise(string.format("tide: %s: %s/config.json: word_embedding_dimension %d does not " ..
            "match the model's hidden_size %d", who, pooling, pcfg.word_embedding_dimension, dim))
    end
    local device = model.embeddings.word_embeddings.weight.device
    return setmetatable({ model = model, tokenizer = tokenizer, device = device,
        dim = dim * #modes, pooling = modes, normalize = normalize == true,
        max_seq_length = max_len, do_lower_case = sbert.do_lower_case == true }, SentenceEncoder)
end

-- the number of characters (UTF-8 code points) of s: sentence-transformers' len(text)
local function length(s)
    return #s - select(2, s:gsub("[\128-\191]", ""))
end

-- [B, H] vectors of one batch's hidden states h [B, T, H] under its attention mask [B, T]
local function pool(modes, h, mask)
    local m = mask:to(h.dtype):unsqueeze(3) -- [B, T, 1]
    local out = {}
    local sum, count
    for _, mode in ipairs(modes) do
        if mode == "cls" then
            out[#out + 1] = h:select(2, 1)
        elseif mode == "max" then
            out[#out + 1] = (h:masked_fill(mask:eq(0):unsqueeze(3), -1e9):max(2))
        else
            if not sum then
                sum, count = (h * m):sum(2), m:sum(2):clamp(1e-9)
            end
            out[#out + 1] = mode == "mean" and sum / count or sum / count:sqrt()
        end
    end
    return #out == 1 and out[1] or tide.cat(out, 2)
end

-- progress on stderr: a redrawn line on a terminal, a line per ~10% otherwise
local function progress_bar(total)
    local tty = core.isatty(2) and (os.getenv("TERM") or "dumb") ~= "dumb"
    local t0, next_frac = core.wall_time(), 0.1
    return function(done)
        local dt = math.max(core.wall_time() - t0, 1e-9)
        local frac = done / total
        if tty then
            local fill = math.floor(frac * 30 + 0.5)
            io.stderr:write(string.format("\rencode [%s%s] %d/%d sentences  %.0f/s",
                string.rep("=", fill), string.rep(" ", 30 - fill), done, total, done / dt),
                done == total and "\n" or "")
        elseif frac >= next_frac or done == total then
            while next_frac <= frac do
                next_frac = next_frac + 0.1
            end
            io.stderr:write(string.format("encode %d/%d sentences  %.0f/s\n", done, total,
                done / dt))
        end
        io.stderr:flush()
    end
end

--- enc:encode(sentences[, {batch_size = 32, normalize =, progress =}]) -> [N, dim] float32 on
-- enc.device, row i the vector of sentences[i]. normalize: nil does what the directory says
-- (its Normalize module), true divides each vector by its L2 norm, false returns the pooled
-- vectors as they are. progress: true draws a bar on stderr; a function is called as
-- progress(done, total) after each batch.
function SentenceEncoder:encode(sentences, opts)
    local who = "SentenceEncoder:encode"
    if getmetatable(self) ~= SentenceEncoder then
        raise("tide: " .. who .. ": call it as a method, enc:encode(sentences)")
    end
    if opts ~= nil then
        core._check_options(opts, who, { "batch_size", "normalize", "progress" })
    end
    opts = opts or {}
    if type(sentences) == "string" then
        raise("tide: " .. who .. ": expected a list of strings, got a string; wrap it: " ..
            "enc:encode({s})")
    end
    if type(sentences) ~= "table" then
        raise("tide: " .. who .. ": expected a list of strings, got " .. type(sentences))
    end
    local n = #sentences
    for i = 1, n do
        if type(sentences[i]) ~= "string" then
            raise(string.format("tide: %s: sentence %d is a %s, expected a string", who, i,
                type(sentences[i])))
        end
    end
    local bs = opts.batch_size == nil and 32 or opts.batch_size
    if not compat.is_integer(bs) or bs < 1 then
        raise("tide: " .. who .. ": batch_size must be a positive integer, got " .. tostring(bs))
    end
    local normalize = opts.normalize
    if normalize == nil then
        normalize = self.normalize
    elseif type(normalize) ~= "boolean" then
        raise("tide: " .. who .. ": normalize must be true, false or nil (the directory's " ..
            "choice), got " .. type(normalize))
    end
    local progress = opts.progress
    if progress == true then
        progress = n > 0 and progress_bar(n) or nil
    elseif progress ~= nil and progress ~= false and type(progress) ~= "function" then
        raise("tide: " .. who .. ": progress must be true, false or a function(done, total), " ..
            "got " .. type(progress))
    elseif progress == false then
        progress = nil
    end
    local max_len = self.max_seq_length
    if not compat.is_integer(max_len) or max_len < 2 then
        raise("tide: " .. who .. ": max_seq_length must be an integer of at least 2, got " ..
            tostring(max_len))
    end
    if n == 0 then
        return core.zeros({ 0, self.dim }, { device = self.device })
    end

    -- longest first; equal lengths keep their order
    local order, len = {}, {}
    for i = 1, n do
        order[i], len[i] = i, length(sentences[i])
    end
    table.sort(order, function(a, b)
        if len[a] ~= len[b] then
            return len[a] > len[b]
        end
        return a < b
    end)

    local parts = {}
    local model, tok, lower = self.model, self.tokenizer, self.do_lower_case
    tide.no_grad(function()
        for first = 1, n, bs do
            local batch = {}
            for k = first, math.min(first + bs - 1, n) do
                local s = sentences[order[k]]:match("^%s*(.-)%s*$") -- sentence-transformers strips
                batch[#batch + 1] = lower and s:lower() or s
            end
            local enc = tok(batch, { padding = true, truncation = true, max_length = max_len,
                device = self.device })
            -- checked as model(...) would, then the real tokens only: the pooling reads nothing
            -- else (tide.models.bert.packing)
            local call = { attention_mask = enc.attention_mask,
                token_type_ids = enc.token_type_ids }
            model.check_call(model, enc.input_ids, call, who)
            local out = model:_forward(enc.input_ids, call, who, true)
            local v = pool(self.pooling, out.last_hidden_state, enc.attention_mask)
            if normalize then
                v = v / (v * v):sum(2, true):sqrt():clamp(1e-12)
            end
            parts[#parts + 1] = v:to("float32")
            if progress then
                progress(first + #batch - 1, n)
            end
        end
    end)
    local sorted = #parts == 1 and parts[1] or tide.cat(parts, 1)
    local inverse = {}
    for k = 1, n do
        inverse[order[k]] = k
    end
    return sorted:index_select(1, core.tensor(inverse, { dtype = "int64",
        device = self.device }))
end

return SentenceEncoder
