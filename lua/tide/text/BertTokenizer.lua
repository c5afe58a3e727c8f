--- tide.text.BertTokenizer: BERT's WordPiece tokenizer, the same output as Hugging Face's
--- BertTokenizerFast (transformers 4.46, tokenizers 0.20) for the same files.
--
--   local tok = BertTokenizer.from_pretrained(dir)  -- tokenizer.json, or vocab.txt (+ config)
--   tok:encode(s[, pair][, {add_special_tokens = true, max_length =, truncation =}]) -> ids
--   tok:decode(ids[, {skip_special_tokens = false, clean_up_tokenization_spaces =}]) -> string
--   tok:tokenize(s) -> tokens;  tok:token_to_id(s);  tok:id_to_token(i);  tok.vocab_size
--   tok(batch[, pairs][, {padding =, truncation =, max_length =, device =,
--       add_special_tokens = true}]) -> {input_ids =, attention_mask =, token_type_ids =}
--
-- Ids are the vocabulary's own, 0-based ([CLS] is 101 in bert-base-uncased's). The work
-- (normalising, splitting, WordPiece, truncation, the [CLS]/[SEP] template, padding) runs in C
-- (src/text/wordpiece.c through tide.core._text); this file reads the files, checks options
-- and decodes.
local core = require("tide.core")
local raise = require("tide.autograd.raise") -- at the user's line
local files = require("tide._files")

local ctext = core._text

local BertTokenizer = {}
BertTokenizer.__index = BertTokenizer

local TRUNC = { none = 0, longest_first = 1, only_first = 2, only_second = 3 }
-- tokenizer_config.json's "no limit" (transformers' VERY_LARGE_INTEGER is 1e30)
local NO_LIMIT = 1e29

local function read_file(path)
  if not io or not io.open then
    raise("tide: BertTokenizer.from_pretrained: the io library is not available in this Lua "
      .. "state; the host opens it with luaL_openlibs")
  end
  return (files.read(path))
end

local function read_json(path, what)
  local s = read_file(path)
  if not s then
    return nil
  end
  local v, at = ctext.json_decode(s)
  if v == nil and at then
    raise(("tide: BertTokenizer.from_pretrained: %s is not valid JSON (near byte %d); save "
      .. "the tokenizer again with save_pretrained"):format(path, at))
  end
  if type(v) ~= "table" then
    raise(("tide: BertTokenizer.from_pretrained: %s holds no JSON object (%s)"):format(path,
      what))
  end
  return v
end

-- a special token in tokenizer_config.json / special_tokens_map.json: "x" or {content = "x"}
local function token_text(v)
  if type(v) == "table" then
    return v.content
  end
  return v
end

local function unsupported(path, what, fix)
  raise(("tide: BertTokenizer.from_pretrained: %s: %s is not supported; %s"):format(path, what,
    fix))
end

-- the post-processing template items of tokenizer.json (TemplateProcessing / BertProcessing)
local function template_items(pp, path, tok_id)
  if pp == nil then
    return {}, {}
  end
  if pp.type == "BertProcessing" then
    local cls, sep = pp.cls[2], pp.sep[2]
    return { { cls, 0 }, { -1, 0 }, { sep, 0 } },
        { { cls, 0 }, { -1, 0 }, { sep, 0 }, { -2, 1 }, { sep, 1 } }
  elseif pp.type == "TemplateProcessing" then
    local function items(list)
      local out = {}
      for _, piece in ipairs(list or {}) do
        if piece.Sequence then
          out[#out + 1] = { piece.Sequence.id == "A" and -1 or -2, piece.Sequence.type_id or 0 }
        elseif piece.SpecialToken then
          local name = piece.SpecialToken.id
          local st = pp.special_tokens and pp.special_tokens[name]
          local ids = st and st.ids or { tok_id(name) }
          for _, id in ipairs(ids) do
            out[#out + 1] = { id, piece.SpecialToken.type_id or 0 }
          end
        end
      end
      return out
    end
    return items(pp.single), items(pp.pair)
  end
  unsupported(path, ("post_processor %q"):format(tostring(pp.type)),
    "tide reads BERT tokenizers (TemplateProcessing or BertProcessing)")
end

local function check_dir(dir)
  if type(dir) ~= "string" then
    raise("tide: BertTokenizer.from_pretrained: expected a directory path (a string), got "
      .. type(dir))
  end
end

--- Reads a tokenizer directory as Hugging Face's BertTokenizerFast.from_pretrained(dir) does.
function BertTokenizer.from_pretrained(dir, opts)
  check_dir(dir)
  core._check_options(opts, "BertTokenizer.from_pretrained", {})
  local base = dir:gsub("/+$", "")
  if base == "" then
    base = "/"
  end
  local function path(name)
    return base .. "/" .. name
  end
  local tj = read_json(path("tokenizer.json"), "a tokenizer")
  local vocab_txt = not tj and read_file(path("vocab.txt"))
  if not tj and not vocab_txt then
    raise(("tide: BertTokenizer.from_pretrained: %s has no tokenizer.json and no vocab.txt; "
      .. "give a directory written by Hugging Face's save_pretrained (or a "
      .. "sentence-transformers model directory, e.g. models/all-MiniLM-L6-v2 from `make "
      .. "models`)"):format(dir))
  end
  local cfg = read_json(path("tokenizer_config.json"), "the tokenizer's settings") or {}
  local stm = read_json(path("special_tokens_map.json"), "the special tokens") or {}

  local self = setmetatable({}, BertTokenizer)
  local special = {}
  for _, k in ipairs({ "unk", "sep", "pad", "cls", "mask" }) do
    local key = k .. "_token"
    special[k] = token_text(stm[key]) or token_text(cfg[key]) or ("[" .. k:upper() .. "]")
  end

  -- the normaliser: transformers' BertTokenizerFast replaces tokenizer.json's lowercase,
  -- strip_accents and handle_chinese_chars by tokenizer_config.json's values (or defaults)
  local lowercase = cfg.do_lower_case
  if lowercase == nil then
    lowercase = true
  end
  local handle_chinese = cfg.tokenize_chinese_chars
  if handle_chinese == nil then
    handle_chinese = true
  end
  local strip_accents = cfg.strip_accents
  local clean_text = true

  local vocab, unk_token, prefix, max_chars = {}, special.unk, "##", 100
  local added = {} -- {content, id, special}
  local single, pair
  local trunc_left, pad_left = cfg.truncation_side == "left", cfg.padding_side == "left"
  local pad_type = 0
  local decoder = { prefix = "##", cleanup = true }
  local src
  if tj then
    src = path("tokenizer.json")
    local m = tj.model or {}
    if m.type ~= "WordPiece" then
      unsupported(src, ("model type %q"):format(tostring(m.type)),
        "tide.text.BertTokenizer reads WordPiece models")
    end
    vocab = m.vocab or {}
    unk_token = m.unk_token or unk_token
    prefix = m.continuing_subword_prefix or prefix
    max_chars = m.max_input_chars_per_word or max_chars
    local n = tj.normalizer
    if n ~= nil then
      if n.type ~= "BertNormalizer" then
        unsupported(src, ("normalizer %q"):format(tostring(n.type)),
          "tide.text.BertTokenizer reads BertNormalizer")
      end
      if n.clean_text ~= nil then
        clean_text = n.clean_text
      end
    end
    local pt = tj.pre_tokenizer
    if pt ~= nil and pt.type ~= "BertPreTokenizer" then
      unsupported(src, ("pre_tokenizer %q"):format(tostring(pt.type)),
        "tide.text.BertTokenizer reads BertPreTokenizer")
    end
    for _, a in ipairs(tj.added_tokens or {}) do
      if a.lstrip or a.rstrip or a.single_word or a.normalized then
        unsupported(src, ("added token %q with lstrip, rstrip, single_word or normalized = true")
          :format(a.content), "BERT's special tokens have none of them")
      end
      added[#added + 1] = { a.content, a.id, a.special }
    end
    if tj.decoder ~= nil then
      if tj.decoder.type ~= "WordPiece" then
        unsupported(src, ("decoder %q"):format(tostring(tj.decoder.type)),
          "tide.text.BertTokenizer decodes WordPiece")
      end
      decoder = { prefix = tj.decoder.prefix or "##", cleanup = tj.decoder.cleanup ~= false }
    else
      decoder = nil
    end
    if tj.truncation and cfg.truncation_side == nil then
      trunc_left = tj.truncation.direction == "Left"
    end
    if tj.padding then
      if cfg.padding_side == nil then
        pad_left = tj.padding.direction == "Left"
      end
      pad_type = tj.padding.pad_type_id or 0
    end
  else
    src = path("vocab.txt")
    local id = 0
    -- read as Python reads a text file: \r\n and \r end lines too
    vocab_txt = vocab_txt:gsub("\r\n?", "\n")
    if vocab_txt ~= "" and vocab_txt:sub(-1) ~= "\n" then
      vocab_txt = vocab_txt .. "\n"
    end
    for line in vocab_txt:gmatch("([^\n]*)\n") do
      vocab[line] = id -- a repeated line takes the name over, as in transformers' load_vocab
      id = id + 1
    end
  end

  local wp = ctext.new({
    clean_text = clean_text,
    handle_chinese_chars = handle_chinese,
    strip_accents = strip_accents,
    lowercase = lowercase,
    max_input_chars_per_word = max_chars,
    prefix = prefix,
  })
  wp:add_vocab(vocab)
  local nvocab = 0
  for _ in pairs(vocab) do
    nvocab = nvocab + 1
  end
  local unk_id = wp:token_to_id(unk_token)
  if unk_id == nil then
    raise(("tide: BertTokenizer.from_pretrained: %s: the unknown token %q is not in the "
      .. "vocabulary; add it, or name the vocabulary's own in unk_token"):format(src, unk_token))
  end
  wp:set_unk(unk_id)

  -- added tokens: tokenizer.json's, then the special tokens transformers adds at load time
  -- (from vocab.txt: the five special tokens and tokenizer_config's added_tokens_decoder)
  local is_added, special_ids = {}, {}
  local function add(content, id, is_special)
    if type(content) ~= "string" or content == "" then
      return
    end
    id = id or wp:token_to_id(content)
    if id == nil then
      return -- transformers would append it to the vocabulary; BERT's files have them all
    end
    if not is_added[content] then
      wp:add_added(content, id)
      is_added[content] = true
    end
    if is_special then
      special_ids[id] = true
    end
  end
  for _, a in ipairs(added) do
    add(a[1], a[2], a[3])
  end
  if type(cfg.added_tokens_decoder) == "table" then
    local ids = {}
    for k in pairs(cfg.added_tokens_decoder) do
      ids[#ids + 1] = tonumber(k)
    end
    table.sort(ids)
    for _, id in ipairs(ids) do
      local a = cfg.added_tokens_decoder[tostring(id)]
      add(a.content, id, a.special)
    end
  end
  for _, k in ipairs({ "unk", "sep", "pad", "cls", "mask" }) do
    add(special[k], nil, true)
  end

  local function tok_id(name)
    local id = wp:token_to_id(name)
    if id == nil then
      raise(("tide: BertTokenizer.from_pretrained: %s: the special token %q is not in the "
        .. "vocabulary"):format(src, name))
    end
    return id
  end
  if tj then
    single, pair = template_items(tj.post_processor, src, tok_id)
  else
    local cls, sep = tok_id(special.cls), tok_id(special.sep)
    single = { { cls, 0 }, { -1, 0 }, { sep, 0 } }
    pair = { { cls, 0 }, { -1, 0 }, { sep, 0 }, { -2, 1 }, { sep, 1 } }
  end
  wp:set_template(single, pair)
  -- the special tokens each template adds (transformers' num_special_tokens_to_add)
  local n_special = { 0, 0 }
  for k, list in ipairs({ single, pair }) do
    for _, item in ipairs(list) do
      if item[1] >= 0 then
        n_special[k] = n_special[k] + 1
      end
    end
  end

  self._wp = wp
  self._special_ids = special_ids
  self._decoder = decoder
  self._clean_up = cfg.clean_up_tokenization_spaces == true
  self._n_special = n_special
  self._pad_type = pad_type
  -- Hugging Face's names; padding_side, truncation_side and pad_token_id are read by each call
  self.padding_side = pad_left and "left" or "right"
  self.truncation_side = trunc_left and "left" or "right"
  self.do_lower_case = lowercase
  self.model_input_names = { "input_ids", "token_type_ids", "attention_mask" }
  self.all_special_tokens, self.all_special_ids = {}, {}
  for _, k in ipairs({ "unk", "sep", "pad", "cls", "mask" }) do
    local id = wp:token_to_id(special[k])
    self[k .. "_token"], self[k .. "_token_id"] = special[k], id
    if id ~= nil then
      self.all_special_tokens[#self.all_special_tokens + 1] = special[k]
      self.all_special_ids[#self.all_special_ids + 1] = id
    end
  end
  self.vocab_size = nvocab
  local mml = cfg.model_max_length
  self.model_max_length = type(mml) == "number" and mml < NO_LIMIT and math.floor(mml) or nil
  self.special_tokens = special
  self.name_or_path = dir
  return self
end

-- ---- options ----------------------------------------------------------------------------------

local function trunc_code(v, who)
  if v == nil then
    return nil
  elseif v == true then
    return TRUNC.longest_first
  elseif v == false or v == "do_not_truncate" then
    return TRUNC.none
  elseif type(v) == "string" and TRUNC[v] and v ~= "none" then
    return TRUNC[v]
  end
  raise(("tide: %s: truncation = %s is not valid; use true, false, \"longest_first\", "
    .. "\"only_first\" or \"only_second\""):format(who, tostring(v)))
end

local function pad_code(v, who)
  if v == nil or v == false or v == "do_not_pad" then
    return 0
  elseif v == true or v == "longest" then
    return 1
  elseif v == "max_length" then
    return 2
  end
  raise(("tide: %s: padding = %s is not valid; use true (\"longest\"), \"max_length\" or "
    .. "false"):format(who, tostring(v)))
end

local function check_max_length(v, who)
  if v ~= nil and (type(v) ~= "number" or v < 0 or v ~= math.floor(v)) then
    raise(("tide: %s: max_length = %s is not valid; use a whole number >= 0"):format(who,
      tostring(v)))
  end
  return v
end

-- transformers' _get_padding_truncation_strategies: the truncation code and its max_length
local function strategies(self, opts, pad, who, is_pair)
  local max_length = check_max_length(opts.max_length, who)
  local trunc = trunc_code(opts.truncation, who)
  if trunc == nil then
    -- max_length alone (no padding) turns truncation on, as in transformers
    trunc = (max_length ~= nil and pad == 0) and TRUNC.longest_first or TRUNC.none
  end
  if max_length == nil and (trunc ~= TRUNC.none or pad == 2) then
    max_length = self.model_max_length
    if max_length == nil then
      -- no model_max_length: transformers warns and neither truncates nor pads to it
      if pad == 2 then
        pad = 0
      end
      trunc = TRUNC.none
    end
  end
  if trunc ~= TRUNC.none and max_length ~= nil then
    local nadd = opts.add_special_tokens ~= false and self._n_special[is_pair and 2 or 1] or 0
    if max_length == nadd then
      -- no room for any text: tokenizers empties every sequence whatever the strategy (no
      -- only_first / only_second error, and only_second needs no pair)
      trunc = TRUNC.longest_first
    end
  end
  return trunc, max_length, pad
end

-- tok.padding_side / tok.truncation_side ("left" or "right", settable as in transformers)
local function side(self, name, who)
  local v = self[name]
  if v ~= "left" and v ~= "right" then
    raise(("tide: %s: %s = %s is not valid; use \"left\" or \"right\""):format(who, name,
      tostring(v)))
  end
  return v == "left"
end

local function check_text(s, who, what)
  if type(s) ~= "string" then
    raise(("tide: %s: expected %s as a string, got %s"):format(who, what, type(s)))
  end
end

--- The ids of a text (or a pair), with [CLS] ... [SEP] unless add_special_tokens = false.
function BertTokenizer:encode(s, pair, opts)
  local who = "BertTokenizer:encode"
  if type(pair) == "table" and opts == nil then
    pair, opts = nil, pair
  end
  opts = opts or {}
  core._check_options(opts, who, { "add_special_tokens", "max_length", "truncation" })
  check_text(s, who, "the text")
  if pair ~= nil then
    check_text(pair, who, "the second text")
    if pair == "" then
      pair = nil -- transformers drops an empty second text (tokenizer(a, "") == tokenizer(a))
    end
  end
  local trunc, max_length = strategies(self, opts, 0, who, pair ~= nil)
  local ids = self._wp:encode(s, pair, opts.add_special_tokens ~= false, trunc, max_length,
    side(self, "truncation_side", who))
  return ids
end

--- The tokens of a text (WordPiece pieces, [UNK] for unknown words), no special tokens.
function BertTokenizer:tokenize(s)
  check_text(s, "BertTokenizer:tokenize", "the text")
  local ids = self._wp:encode(s, nil, false, TRUNC.none, nil, false)
  return (self._wp:tokens(ids))
end

function BertTokenizer:token_to_id(s)
  check_text(s, "BertTokenizer:token_to_id", "the token")
  return self._wp:token_to_id(s)
end

--- transformers' convert_tokens_to_ids: a token or a list; an unknown token gives unk_token_id
function BertTokenizer:convert_tokens_to_ids(tokens)
  local function one(t)
    check_text(t, "BertTokenizer:convert_tokens_to_ids", "a token")
    local id = self._wp:token_to_id(t)
    if id == nil then
      return self.unk_token_id
    end
    return id
  end
  if type(tokens) ~= "table" then
    return one(tokens)
  end
  local out = {}
  for i, t in ipairs(tokens) do
    out[i] = one(t)
  end
  return out
end

--- transformers' convert_ids_to_tokens: an id or a list (an id outside the vocabulary: nil)
function BertTokenizer:convert_ids_to_tokens(ids)
  if type(ids) ~= "table" then
    return self:id_to_token(ids)
  end
  local out = {}
  for i, id in ipairs(ids) do
    out[i] = self:id_to_token(id)
  end
  return out
end

function BertTokenizer:id_to_token(i)
  if type(i) ~= "number" then
    raise("tide: BertTokenizer:id_to_token: expected an id (an integer), got " .. type(i))
  end
  return self._wp:id_to_token(i)
end

local function replace(s, from, to)
  local out, i = {}, 1
  while true do
    local a, b = s:find(from, i, true)
    if not a then
      break
    end
    out[#out + 1] = s:sub(i, a - 1)
    out[#out + 1] = to
    i = b + 1
  end
  if i == 1 then
    return s
  end
  out[#out + 1] = s:sub(i)
  return table.concat(out)
end

-- tokenizers' WordPiece decoder cleanup (per token) and transformers' clean_up_tokenization
local CLEANUP = { { " .", "." }, { " ?", "?" }, { " !", "!" }, { " ,", "," }, { " ' ", "'" },
  { " n't", "n't" }, { " 'm", "'m" }, { " do not", " don't" }, { " 's", "'s" },
  { " 've", "'ve" }, { " 're", "'re" } }
local CLEANUP_PY = { { " .", "." }, { " ?", "?" }, { " !", "!" }, { " ,", "," }, { " ' ", "'" },
  { " n't", "n't" }, { " 'm", "'m" }, { " 's", "'s" }, { " 've", "'ve" }, { " 're", "'re" } }

local function clean(s, rules)
  for _, r in ipairs(rules) do
    s = replace(s, r[1], r[2])
  end
  return s
end

--- The text of a list of ids (a Lua list or a 1-D tensor), as transformers' decode.
function BertTokenizer:decode(ids, opts)
  local who = "BertTokenizer:decode"
  opts = opts or {}
  core._check_options(opts, who, { "skip_special_tokens", "clean_up_tokenization_spaces" })
  if core.is_tensor(ids) then
    ids = ids:totable()
  end
  if type(ids) ~= "table" then
    raise(("tide: %s: expected a list of ids, got %s"):format(who, type(ids)))
  end
  local tokens, bad = self._wp:tokens(ids)
  if not tokens then
    raise(("tide: %s: id %s (position %d) is not in the vocabulary (ids 0 to %d)"):format(who,
      tostring(ids[bad]), bad, self._wp:id_count() - 1))
  end
  local kept = tokens
  if opts.skip_special_tokens then
    kept = {}
    for i, t in ipairs(tokens) do
      if not self._special_ids[ids[i]] then
        kept[#kept + 1] = t
      end
    end
  end
  local text
  local d = self._decoder
  if d then
    local out, plen = {}, #d.prefix
    for i, t in ipairs(kept) do
      if i > 1 then
        if plen > 0 and t:sub(1, plen) == d.prefix then
          t = t:sub(plen + 1)
        else
          t = " " .. t
        end
      end
      if d.cleanup then
        t = clean(t, CLEANUP)
      end
      out[i] = t
    end
    text = table.concat(out)
  else
    text = table.concat(kept, " ")
  end
  local cu = opts.clean_up_tokenization_spaces
  if cu == nil then
    cu = self._clean_up
  end
  if cu then
    text = clean(text, CLEANUP_PY)
  end
  return text
end

--- transformers' batch_decode: decode over a list of id lists (or a 2-D tensor)
function BertTokenizer:batch_decode(seqs, opts)
  if core.is_tensor(seqs) then
    seqs = seqs:totable()
  end
  if type(seqs) ~= "table" then
    raise(("tide: BertTokenizer:batch_decode: expected a list of id lists, got %s"):format(
      type(seqs)))
  end
  local out = {}
  for i, ids in ipairs(seqs) do
    out[i] = self:decode(ids, opts)
  end
  return out
end

--- tok(batch[, pairs][, opts]) -> {input_ids, attention_mask, token_type_ids}, int64 [B, T]
function BertTokenizer.__call(self, batch, pairs, opts)
  local who = "BertTokenizer"
  if type(pairs) == "table" and opts == nil and (next(pairs) == nil or pairs[1] == nil) then
    pairs, opts = nil, pairs
  end
  opts = opts or {}
  core._check_options(opts, who,
    { "padding", "truncation", "max_length", "device", "add_special_tokens" })
  if type(batch) == "string" then
    batch = { batch }
  end
  if type(pairs) == "string" then
    pairs = { pairs }
  end
  if type(batch) ~= "table" then
    raise(("tide: %s: expected a string or a list of strings, got %s"):format(who, type(batch)))
  end
  if pairs ~= nil and (type(pairs) ~= "table" or #pairs ~= #batch) then
    raise(("tide: %s: expected as many second texts as texts (%d), got %s"):format(who, #batch,
      type(pairs) == "table" and tostring(#pairs) or type(pairs)))
  end
  for i = 1, #batch do
    if type(batch[i]) ~= "string" then
      raise(("tide: %s: text %d is a %s, not a string"):format(who, i, type(batch[i])))
    end
    if pairs and type(pairs[i]) ~= "string" then
      raise(("tide: %s: second text %d is a %s, not a string"):format(who, i, type(pairs[i])))
    end
  end
  local pad = pad_code(opts.padding, who)
  local trunc, max_length
  trunc, max_length, pad = strategies(self, opts, pad, who, pairs ~= nil)
  local pad_id = self.pad_token_id
  if pad > 0 and type(pad_id) ~= "number" then
    raise(("tide: %s: padding needs a pad token, and %q is not in the vocabulary"):format(who,
      tostring(self.special_tokens.pad)))
  end
  local ids, mask, types = self._wp:batch(batch, pairs, opts.add_special_tokens ~= false, trunc,
    max_length, side(self, "truncation_side", who), pad, max_length, pad_id or 0,
    self._pad_type, side(self, "padding_side", who))
  if opts.device ~= nil then
    ids, mask, types = ids:to(opts.device), mask:to(opts.device), types:to(opts.device)
  end
  return { input_ids = ids, attention_mask = mask, token_type_ids = types }
end

-- len(tokenizer): the vocabulary with the added tokens (#tok on Lua 5.2+)
function BertTokenizer.__len(self)
  return self._wp:id_count()
end

function BertTokenizer.__tostring(self)
  return ("BertTokenizer(%s, vocab_size = %d)"):format(tostring(self.name_or_path),
    self.vocab_size)
end

return BertTokenizer
