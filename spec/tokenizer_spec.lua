-- tide.text.BertTokenizer against Hugging Face's BertTokenizerFast (transformers 4.46.3,
-- tokenizers 0.20.3): spec/fixtures/tokenizer_hf.lua holds its outputs for the tokenizers in
-- spec/fixtures/tokenizer/ (written by spec/fixtures/make_tokenizer.py).
local tide = require("tide")

local fx = dofile("spec/fixtures/tokenizer_hf.lua")
local DIR = "spec/fixtures/tokenizer/"

local function load(name)
  return tide.text.BertTokenizer.from_pretrained(DIR .. name)
end

local function opts_of(o)
  local t = {}
  for k, v in pairs(o) do
    t[k] = v
  end
  return t
end

describe("tide.text.BertTokenizer", function()
  it("is tide.text's, loaded on first use", function()
    assert.are.equal(require("tide.text.BertTokenizer"), tide.text.BertTokenizer)
  end)

  for _, name in ipairs({ "uncased", "cased", "left", "keep_accents", "cased_strip", "no_cjk",
    "vocab_only" }) do
    describe(name, function()
      local tok = load(name)
      local F = fx[name]

      it("encodes, tokenizes and decodes hostile text as BertTokenizerFast", function()
        assert.are.equal(F.vocab_size, tok.vocab_size)
        for i, c in ipairs(F.texts) do
          local where = ("text %d %q"):format(i, c.text)
          local ids = tok:encode(c.text)
          assert.are.same(c.ids, ids, where)
          assert.are.same(c.plain, tok:encode(c.text, { add_special_tokens = false }), where)
          assert.are.same(c.tokens, tok:tokenize(c.text), where)
          assert.are.same(c.trunc6, tok:encode(c.text, { truncation = true, max_length = 6 }),
            where)
          assert.are.equal(c.decode, tok:decode(ids), where)
          assert.are.equal(c.decode_skip, tok:decode(ids, { skip_special_tokens = true }), where)
          if c.words then
            assert.are.same(c.words, tok._wp:pretokenize(c.text), where)
          end
        end
      end)

      it("encodes pairs with token type ids, truncated as BertTokenizerFast", function()
        for i, c in ipairs(F.pairs) do
          local where = ("pair %d"):format(i)
          assert.are.same(c.ids, tok:encode(c.a, c.b), where)
          local e = tok({ c.a }, { c.b })
          assert.are.same({ c.ids }, e.input_ids:totable(), where)
          assert.are.same({ c.types }, e.token_type_ids:totable(), where)
          for _, t in ipairs(c.trunc) do
            local o = { truncation = t.truncation, max_length = t.max_length }
            local w = where .. " " .. t.truncation .. " " .. t.max_length
            if t.error then
              local ok, err = pcall(tok.encode, tok, c.a, c.b, o)
              assert.is_false(ok, w)
              assert.matches("tide: BertTokenizer: truncation = \"only_", err, 1, true)
            else
              assert.are.same(t.ids, tok:encode(c.a, c.b, o), w)
              local b = tok({ c.a }, { c.b }, o)
              assert.are.same({ t.types }, b.token_type_ids:totable(), w)
            end
          end
        end
      end)

      it("pads batches (longest, max_length, truncated) as BertTokenizerFast", function()
        for i, c in ipairs(F.batches) do
          local where = ("batch %d"):format(i)
          local e = tok(F.batch_texts, c.pairs, opts_of(c.opts))
          assert.are.same(c.input_ids, e.input_ids:totable(), where)
          assert.are.same(c.attention_mask, e.attention_mask:totable(), where)
          assert.are.same(c.token_type_ids, e.token_type_ids:totable(), where)
          assert.are.equal("int64", e.input_ids.dtype)
        end
      end)

      it("decodes word pieces with Hugging Face's clean-up", function()
        assert.are.equal(F.decode_ids_text, tok:decode(F.decode_ids))
        assert.are.equal(F.decode_ids_skip,
          tok:decode(F.decode_ids, { skip_special_tokens = true }))
        assert.are.equal(F.decode_ids_first_piece,
          tok:decode({ tok:token_to_id("##s"), tok:token_to_id("hello") }))
      end)
    end)
  end

  describe("vocabulary", function()
    local tok = load("uncased")
    it("maps tokens and ids both ways, 0-based as the vocabulary", function()
      assert.are.equal(0, tok:token_to_id("[PAD]"))
      assert.are.equal(101, tok:token_to_id("[CLS]"))
      assert.are.equal("[SEP]", tok:id_to_token(102))
      assert.is_nil(tok:token_to_id("no such token"))
      assert.is_nil(tok:id_to_token(123456))
      assert.is_nil(tok:id_to_token(-1))
    end)
    it("gives a single text as a batch of one and moves tensors to a device", function()
      local e = tok("hello world", { device = "cpu:1" })
      assert.are.same({ { 101, tok:token_to_id("hello"), tok:token_to_id("world"), 102 } },
        e.input_ids:cpu():totable())
      assert.are.equal("cpu:1", tostring(e.attention_mask.device))
      assert.are.same({ 1, 4 }, { e.token_type_ids.shape[1], e.token_type_ids.shape[2] })
    end)
    it("decodes a tensor of ids", function()
      local e = tok("hello world")
      assert.are.equal("[CLS] hello world [SEP]", tok:decode(e.input_ids[1]))
    end)
    it("truncates when max_length alone is given, and leaves special tokens out on request",
      function()
        assert.are.equal(4, #tok:encode("a b c d e f", { max_length = 4 }))
        assert.are.equal(8, #tok:encode("a b c d e f"))
        local e = tok({ "hello" }, { add_special_tokens = false })
        assert.are.same({ { tok:token_to_id("hello") } }, e.input_ids:totable())
        assert.are.equal(512, tok.model_max_length)
      end)
    it("drops an empty second text in encode, as transformers does", function()
      assert.are.same(tok:encode("hello"), tok:encode("hello", ""))
    end)
  end)

  describe("all-MiniLM-L6-v2 (make models)", function()
    it("gives bert-base-uncased's ids, as BertTokenizerFast", function()
      local dir = "models/all-MiniLM-L6-v2"
      local f = io.open(dir .. "/tokenizer.json", "rb")
      if not f then
        pending("models/all-MiniLM-L6-v2 missing: make models fetches it")
        return
      end
      f:close()
      local tok = tide.text.BertTokenizer.from_pretrained(dir)
      assert.are.equal(30522, tok.vocab_size)
      assert.are.equal(512, tok.model_max_length)
      assert.are.same({ 101, 7592, 1010, 2088, 999, 102 }, tok:encode("Hello, world!"))
      assert.are.same({ 101, 14477, 20961, 3468, 2358, 27807, 15743, 1746, 1861, 102 },
        tok:encode("unaffable Straße naïve 中文"))
      local e = tok({ "a" }, { "b" })
      assert.are.same({ { 101, 1037, 102, 1038, 102 } }, e.input_ids:totable())
      assert.are.same({ { 0, 0, 0, 1, 1 } }, e.token_type_ids:totable())
    end)
  end)

  describe("refuses", function()
    local tok = load("uncased")
    local function fails(pattern, fn, ...)
      local ok, err = pcall(fn, ...)
      assert.is_false(ok)
      assert.matches(pattern, err, 1, true)
      return err
    end
    it("a directory without tokenizer files, naming it and the fix", function()
      local err = fails("tide: BertTokenizer.from_pretrained: spec/fixtures has no tokenizer.json "
        .. "and no vocab.txt", tide.text.BertTokenizer.from_pretrained, "spec/fixtures")
      assert.matches("save_pretrained", err, 1, true)
      fails("expected a directory path", tide.text.BertTokenizer.from_pretrained, 42)
    end)
    it("tokenizer files it cannot read, naming the file and the part", function()
      local dir = os.tmpname()
      os.remove(dir)
      assert(os.execute("mkdir '" .. dir .. "'"))
      local function write(text)
        local f = assert(io.open(dir .. "/tokenizer.json", "wb"))
        f:write(text)
        f:close()
      end
      write('{"model": {"type": "WordPiece", "vocab": {"a": 0}')
      fails(dir .. "/tokenizer.json is not valid JSON", tide.text.BertTokenizer.from_pretrained,
        dir)
      write('{"model": {"type": "BPE", "vocab": {}, "merges": []}}')
      fails("tokenizer.json: model type \"BPE\" is not supported",
        tide.text.BertTokenizer.from_pretrained, dir)
      write('{"model": {"type": "WordPiece", "vocab": {"a": 0}, "unk_token": "[UNK]"}}')
      fails("the unknown token \"[UNK]\" is not in the vocabulary",
        tide.text.BertTokenizer.from_pretrained, dir)
      os.remove(dir .. "/tokenizer.json")
      os.remove(dir)
    end)
    it("ids outside the vocabulary in decode", function()
      fails("tide: BertTokenizer:decode: id 99999 (position 2) is not in the vocabulary",
        tok.decode, tok, { 101, 99999 })
      fails("id -1", tok.decode, tok, { -1 })
      fails("expected a list of ids", tok.decode, tok, "hello")
    end)
    it("unknown option keys and bad option values", function()
      fails("tide: BertTokenizer:encode: unknown option \"max_len\"", tok.encode, tok, "x",
        { max_len = 3 })
      fails("tide: BertTokenizer: unknown option \"pading\"", tok, { "x" }, { pading = true })
      fails("tide: BertTokenizer:decode: unknown option", tok.decode, tok, { 1 }, { skip = 1 })
      fails("truncation = maybe is not valid", tok.encode, tok, "x", { truncation = "maybe" })
      fails("padding = left is not valid", tok, { "x" }, { padding = "left" })
      fails("max_length = -1 is not valid", tok.encode, tok, "x", { max_length = -1 })
      fails("max_length = 1 leaves no room for the 2 special tokens", tok.encode, tok, "x",
        { max_length = 1 })
    end)
    it("text that is not UTF-8, or not a string", function()
      fails("not valid UTF-8 (byte 2 of 3)", tok.encode, tok, "a\255b")
      fails("not valid UTF-8", tok.encode, tok, "\237\160\128") -- a surrogate
      fails("not valid UTF-8", tok.encode, tok, "\192\128")     -- overlong NUL
      fails("expected the text as a string, got number", tok.encode, tok, 5)
      fails("text 2 is a number, not a string", tok, { "a", 5 })
      fails("expected as many second texts as texts (2)", tok, { "a", "b" }, { "c" })
    end)
    it("a ragged batch without padding, and padding shorter than a text", function()
      fails("use padding = true", tok, { "hello", "hello world" })
      fails("add truncation = true", tok, { "hello world hello" }, { padding = "max_length",
        max_length = 3 })
    end)
  end)
end)
