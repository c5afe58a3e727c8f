-- sentence_encoder_spec.lua — tide.models.SentenceEncoder on a tiny sentence-transformers
-- directory (spec/fixtures/sentence_encoder/, written with sentence-transformers' vectors by
-- spec/fixtures/make_sentence_encoder.py): the vectors, the caller's order under any batch size,
-- the pooling modes and the normalize option, the options and the errors.
local tide = require("tide")
local fx = require("spec.support.fixtures")

local DIR = "spec/fixtures/sentence_encoder"
local FILES = { "config.json", "model.safetensors", "modules.json", "sentence_bert_config.json",
    "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt",
    "config_sentence_transformers.json", "1_Pooling/config.json" }
local TOL = 1e-5 -- float32 through two layers; sentence-transformers' own batch noise is ~1e-7

local ref = dofile("spec/fixtures/sentence_encoder_torch.lua")
local SentenceEncoder = require("tide.models.SentenceEncoder")

local function slurp(path)
    local f = assert(io.open(path, "rb"))
    local s = f:read("*a")
    f:close()
    return s
end

local function write(path, s)
    local f = assert(io.open(path, "wb"))
    f:write(s)
    f:close()
end

-- a copy of the fixture directory, with files replaced by edits[name] = contents (false: left out)
local function copy_fixture(edits)
    local dir = os.tmpname()
    os.remove(dir)
    assert(os.execute("mkdir -p '" .. dir .. "/1_Pooling'"))
    for _, name in ipairs(FILES) do
        local v = edits and edits[name]
        if v ~= false then
            write(dir .. "/" .. name, v or slurp(DIR .. "/" .. name))
        end
    end
    return dir
end

local function remove_dir(dir)
    os.execute("rm -rf '" .. dir .. "'")
end

-- the reference rows in the order given by idx (a list of 1-based sentence indices)
local function rows(r, idx)
    local h = r.shape[2]
    local data = {}
    for _, i in ipairs(idx) do
        for j = 1, h do
            data[#data + 1] = r.data[(i - 1) * h + j]
        end
    end
    return { shape = { #idx, h }, data = data }
end

local function pooling_config(modes)
    local keys = { cls = "pooling_mode_cls_token", max = "pooling_mode_max_tokens",
        mean = "pooling_mode_mean_tokens", mean_sqrt_len = "pooling_mode_mean_sqrt_len_tokens" }
    local parts = { '"word_embedding_dimension": 32' }
    for mode, key in pairs(keys) do
        parts[#parts + 1] = string.format('"%s": %s', key, tostring(modes[mode] == true))
    end
    return "{" .. table.concat(parts, ", ") .. "}"
end

local MODULES_NO_NORMALIZE = [[
[{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
 {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]
]]

describe("SentenceEncoder", function()
    local enc
    setup(function()
        enc = SentenceEncoder.from_pretrained(DIR)
    end)
    after_each(function() collectgarbage() end)

    it("reads the directory: pooling, Normalize, max_seq_length, vector size", function()
        assert.are.same({ "mean" }, enc.pooling)
        assert.is_true(enc.normalize) -- from modules.json: 2_Normalize has no files (nor folder)
        assert.are.equal(16, enc.max_seq_length)
        assert.are.equal(32, enc.dim)
        assert.are.equal("cpu", tostring(enc.device))
    end)

    it("gives sentence-transformers' vectors, in the caller's order", function()
        local v = enc:encode(ref.sentences)
        assert.are.equal("float32", v.dtype)
        fx.close(v, ref.normalized, TOL, "normalized")
    end)

    it("gives the same vectors whatever the batch size (length-sorted batches)", function()
        for _, bs in ipairs({ 1, 2, 3, 5, 100 }) do
            fx.close(enc:encode(ref.sentences, { batch_size = bs }), ref.normalized, TOL,
                "batch_size " .. bs)
        end
    end)

    it("returns row i for sentence i in any input order, duplicates included", function()
        local n = #ref.sentences
        local idx, sentences = {}, {}
        for k = 1, n do -- reversed, then the first three again
            idx[k] = n - k + 1
        end
        idx[n + 1], idx[n + 2], idx[n + 3] = 1, 2, 3
        for k, i in ipairs(idx) do
            sentences[k] = ref.sentences[i]
        end
        fx.close(enc:encode(sentences, { batch_size = 4 }), rows(ref.normalized, idx), TOL,
            "permuted")
        fx.close(enc:encode({ ref.sentences[2] }), rows(ref.normalized, { 2 }), TOL, "one")
    end)

    it("normalize = false returns the pooled vectors, true normalizes them", function()
        local raw = enc:encode(ref.sentences, { normalize = false, batch_size = 3 })
        fx.close(raw, ref.mean, TOL, "mean")
        local n = raw:norm(2, 2)
        assert.is_true(math.abs(n[1]:item() - 1) > 1e-3) -- really not unit length
        fx.close(enc:encode(ref.sentences, { normalize = true }), ref.normalized, TOL, "forced")
    end)

    it("runs the pooling modes of 1_Pooling/config.json, with or without Normalize", function()
        for _, mode in ipairs({ "cls", "max", "mean_sqrt_len" }) do
            local dir = copy_fixture({ ["1_Pooling/config.json"] = pooling_config({ [mode] = true }),
                ["modules.json"] = MODULES_NO_NORMALIZE })
            local e = SentenceEncoder.from_pretrained(dir)
            remove_dir(dir)
            assert.are.same({ mode }, e.pooling)
            assert.is_false(e.normalize)
            fx.close(e:encode(ref.sentences, { batch_size = 4 }), ref[mode], TOL, mode)
        end
        -- several modes: concatenated in sentence-transformers' order (cls, max, mean, ...)
        local dir = copy_fixture({ ["1_Pooling/config.json"] = pooling_config({ mean = true,
            cls = true }), ["modules.json"] = MODULES_NO_NORMALIZE })
        local e = SentenceEncoder.from_pretrained(dir)
        remove_dir(dir)
        assert.are.same({ "cls", "mean" }, e.pooling)
        assert.are.equal(64, e.dim)
        local v = e:encode(ref.sentences)
        fx.close(v:narrow(2, 1, 32), ref.cls, TOL, "cls part")
        fx.close(v:narrow(2, 33, 32), ref.mean, TOL, "mean part")
    end)

    it("honours a changed max_seq_length", function()
        local e = SentenceEncoder.from_pretrained(DIR)
        e.max_seq_length = 512 -- the long sentence (index 5) now keeps more tokens
        local v = e:encode(ref.sentences)
        fx.close(v:narrow(1, 1, 4), rows(ref.normalized, { 1, 2, 3, 4 }), TOL, "short ones")
        assert.is_true((v[5] - enc:encode({ ref.sentences[5] })[1]):abs():max():item() > 1e-4)
    end)

    it("encodes an empty list as a [0, dim] tensor", function()
        local v = enc:encode({})
        assert.are.same({ 0, 32 }, v.shape)
        assert.are.equal("float32", v.dtype)
    end)

    it("reports progress after each batch", function()
        local seen = {}
        enc:encode(ref.sentences, { batch_size = 4, progress = function(done, total)
            seen[#seen + 1] = { done, total }
        end })
        assert.are.same({ { 4, 11 }, { 8, 11 }, { 11, 11 } }, seen)
    end)

    it("puts the model and the vectors on the given device", function()
        if #tide.devices() < 2 then
            pending("one device (run with TIDE_CPU_DEVICES=2)")
            return
        end
        local dev = tostring(tide.devices()[2])
        local e = SentenceEncoder.from_pretrained(DIR, { device = dev })
        local v = e:encode(ref.sentences, { batch_size = 5 })
        assert.are.equal(dev, tostring(v.device))
        assert.are.equal(dev, tostring(e.device))
        fx.close(v, ref.normalized, TOL, dev)
    end)

    it("is reachable as tide.models.SentenceEncoder", function()
        local models = tide.models or require("tide.models")
        assert.are.equal(SentenceEncoder, models.SentenceEncoder)
    end)

    describe("errors", function()
        local function fails(pattern, fn, ...)
            local ok, err = pcall(fn, ...)
            assert.is_false(ok, "expected an error matching " .. pattern)
            assert.is_truthy(tostring(err):find(pattern, 1, true), tostring(err))
            assert.is_truthy(tostring(err):find("tide: ", 1, true), tostring(err))
        end

        it("rejects a directory that is not a sentence-transformers one", function()
            fails("spec/fixtures/bert/base is not a sentence-transformers directory (no " ..
                "modules.json)", SentenceEncoder.from_pretrained, "spec/fixtures/bert/base")
            fails("is not a sentence-transformers directory", SentenceEncoder.from_pretrained,
                "spec/fixtures/no_such_dir")
            fails("expected a directory path (a string), got nil",
                SentenceEncoder.from_pretrained)
        end)

        it("rejects unknown options, naming the closest", function()
            fails('unknown option "devcie" (did you mean "device"?)',
                SentenceEncoder.from_pretrained, DIR, { devcie = "cpu" })
            fails('unknown option "batchsize" (did you mean "batch_size"?)',
                enc.encode, enc, { "a" }, { batchsize = 2 })
        end)

        it("rejects bad sentences and option values", function()
            fails("expected a list of strings, got a string; wrap it", enc.encode, enc, "a cat")
            fails("expected a list of strings, got nil", enc.encode, enc)
            fails("sentence 2 is a number, expected a string", enc.encode, enc, { "a", 3 })
            fails("batch_size must be a positive integer, got 0", enc.encode, enc, { "a" },
                { batch_size = 0 })
            fails("normalize must be true, false or nil", enc.encode, enc, { "a" },
                { normalize = "yes" })
            fails("call it as a method", enc.encode, { "a" })
        end)

        it("rejects modules and pooling modes tide does not run", function()
            local dense = [[
[{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
 {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
 {"idx": 2, "name": "2", "path": "2_Dense", "type": "sentence_transformers.models.Dense"}]
]]
            local dir = copy_fixture({ ["modules.json"] = dense })
            fails("module 3 (sentence_transformers.models.Dense) is not supported",
                SentenceEncoder.from_pretrained, dir)
            remove_dir(dir)
            dir = copy_fixture({ ["1_Pooling/config.json"] =
                '{"pooling_mode_lasttoken": true, "pooling_mode_mean_tokens": false}' })
            fails("pooling mode lasttoken is not supported", SentenceEncoder.from_pretrained, dir)
            remove_dir(dir)
            dir = copy_fixture({ ["1_Pooling/config.json"] = pooling_config({}) })
            fails("sets no pooling mode", SentenceEncoder.from_pretrained, dir)
            remove_dir(dir)
            dir = copy_fixture({ ["1_Pooling/config.json"] = false })
            fails("1_Pooling/config.json is missing", SentenceEncoder.from_pretrained, dir)
            remove_dir(dir)
        end)
    end)
end)
