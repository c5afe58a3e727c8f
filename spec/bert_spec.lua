-- bert_spec.lua — tide.models.bert against Hugging Face transformers 4.46.3 (the checkpoints and
-- outputs of spec/fixtures/make_bert.py): outputs, losses, key matching on load, one AdamW step,
-- save_pretrained round trips, fresh initialisation and the errors. The other direction (a
-- tide-saved directory read by transformers) is spec/support/bert_hf_check.sh.
local tide = require("tide")
local fx = require("spec.support.fixtures")
local bert = require("tide.models.bert")
local pretrained = require("tide.models.bert.pretrained")

local REF = dofile("spec/fixtures/bert_reference.lua")
local TOL = 1e-5

local function dir_of(c)
    return "spec/" .. c.dir
end

-- a fixture's inputs as the call's arguments (ids int64, float labels float32)
local function inputs(c)
    local ids, opts = nil, {}
    for k, r in pairs(c.inputs) do
        local t = fx.tensor(r)
        if t.dtype == "float64" then
            t = t:float()
        end
        if k == "input_ids" then
            ids = t
        else
            opts[k] = t
        end
    end
    return ids, opts
end

local function flat(t)
    return t:detach():to("cpu"):contiguous():reshape(-1):double():totable()
end

-- largest |t - r| over the elements, after a shape check
local function max_diff(t, r, what)
    assert.are.same(r.shape, t.shape, what .. " shape")
    local a, m = flat(t), 0
    for i = 1, #r.data do
        local d = math.abs(a[i] - r.data[i])
        if d ~= d then
            error(what .. ": NaN at element " .. i, 2)
        end
        if d > m then
            m = d
        end
    end
    return m
end

local function close(t, r, what, tol)
    local d = max_diff(t, r, what)
    if d > (tol or TOL) then
        error(string.format("%s: max abs diff %.3g > %.3g", what, d, tol or TOL), 2)
    end
end

local function raises(fn, ...)
    local ok, err = pcall(fn)
    assert.is_false(ok, "expected an error")
    err = tostring(err)
    assert.is_truthy(err:find("tide: ", 1, true), err)
    for _, s in ipairs({ ... }) do
        assert.is_truthy(err:find(s, 1, true), "expected '" .. s .. "' in: " .. err)
    end
    return err
end

-- a fresh temporary directory, and its removal (files one level deep)
local function tmpdir()
    local d = os.tmpname()
    os.remove(d)
    local r = os.execute("mkdir '" .. d .. "'")
    assert(r == true or r == 0, "mkdir " .. d)
    return d
end

local function rmdir(d, files)
    for _, f in ipairs(files or { "config.json", "model.safetensors" }) do
        os.remove(d .. "/" .. f)
    end
    os.remove(d)
end

local function write(path, s)
    local f = assert(io.open(path, "wb"))
    f:write(s)
    f:close()
end

local function read(path)
    local f = assert(io.open(path, "rb"))
    local s = f:read("*a")
    f:close()
    return s
end

local function copy_dir(src, files)
    local d = tmpdir()
    for _, f in ipairs(files or { "config.json", "model.safetensors" }) do
        write(d .. "/" .. f, read(src .. "/" .. f))
    end
    return d
end

local function tiny(t)
    local c = { vocab_size = 64, hidden_size = 16, num_hidden_layers = 2,
        num_attention_heads = 4, intermediate_size = 32, max_position_embeddings = 32 }
    for k, v in pairs(t or {}) do
        c[k] = v
    end
    return bert.BertConfig(c)
end

describe("tide.models.bert", function()
    after_each(function()
        collectgarbage()
    end)

    describe("outputs", function()
        local names = {}
        for name in pairs(REF.cases) do
            names[#names + 1] = name
        end
        table.sort(names)
        for _, name in ipairs(names) do
            local c = REF.cases[name]
            it("match transformers: " .. name .. " (" .. c.model .. ")", function()
                local m = bert[c.model].from_pretrained(dir_of(c),
                    { strict = name ~= "cls_into_base" })
                assert.is_false(m.training)
                local ids, opts = inputs(c)
                local out = m(ids, opts)
                for k, r in pairs(c.outputs) do
                    close(out[k], r, name .. " " .. k)
                end
                for k in pairs(out) do
                    assert.is_not_nil(c.outputs[k], name .. ": unexpected output " .. k)
                end
            end)
        end

        it("keeps a fully padded row finite (uniform attention, as transformers)", function()
            local c = REF.cases.base
            local m = bert.BertModel.from_pretrained(dir_of(c))
            local ids, opts = inputs(c)
            local h = m(ids, opts).last_hidden_state:select(1, 3)
            assert.is_true(h:isfinite():all():item())
        end)

        it("skips padding on request (SentenceEncoder): the real tokens as padded, zeros at " ..
            "padding", function()
            local c = REF.cases.base
            local m = bert.BertModel.from_pretrained(dir_of(c))
            local ids, opts = inputs(c)
            local mask = opts.attention_mask
            assert.is_true(mask:eq(0):any():item(), "the fixture has padding")
            local padded = m(ids, opts)
            local packed = m:_forward(ids, opts, "BertModel", true)
            local real = mask:to("float32"):unsqueeze(3)
            local diff = (padded.last_hidden_state - packed.last_hidden_state):mul(real)
            assert.is_true(diff:abs():max():item() < TOL)
            assert.are.equal(0, packed.last_hidden_state:mul(real:neg():add(1)):abs():max():item())
            -- [CLS] is a real token in every row but the fully padded one
            local checked = 0
            for b = 1, mask:size(1) do
                if mask[b][1]:item() == 1 then
                    checked = checked + 1
                    local d = (padded.pooler_output[b] - packed.pooler_output[b]):abs():max()
                    assert.is_true(d:item() < TOL)
                end
            end
            assert.is_true(checked >= 2)
        end)

        it("classifies padded rows with a real [CLS] as transformers, skipping the padding",
            function()
            for _, name in ipairs({ "cls", "reg" }) do
                local c = REF.cases[name]
                local m = bert.BertForSequenceClassification.from_pretrained(dir_of(c))
                local ids, opts = inputs(c)
                local mask = opts.attention_mask
                local keep = {}
                for b = 1, mask:size(1) do
                    if mask[b][1]:item() ~= 0 then
                        keep[#keep + 1] = b
                    end
                end
                local rows = tide.tensor(keep, { dtype = "int64" })
                assert.is_true(#keep >= 2 and mask:index_select(1, rows):eq(0):any():item())
                for k, v in pairs(opts) do
                    opts[k] = v:index_select(1, rows)
                end
                local want = fx.tensor(c.outputs.logits):float():index_select(1, rows)
                local packing = require("tide.models.bert.packing")
                local of_mask, packed = packing.of_mask, 0
                packing.of_mask = function(...)
                    local pk = of_mask(...)
                    packed = packed + (pk and 1 or 0)
                    return pk
                end
                local ok, got = pcall(function()
                    return m(ids:index_select(1, rows), opts).logits
                end)
                packing.of_mask = of_mask
                assert(ok, got)
                assert.are.equal(1, packed, name .. ": the padding was skipped")
                assert.is_true((got - want):abs():max():item() < TOL, name)
            end
        end)

        it("takes tide.models.bert through tide.models too", function()
            assert.are.equal(bert, tide.models.bert)
        end)
    end)

    describe("loading", function()
        -- transformers' lists, less two quirks of its own: a BertModel's missing keys carry
        -- the "bert." prefix of the checkpoint, and the tied cls.predictions.decoder.bias is
        -- listed beside cls.predictions.bias; tide lists each tensor once, by the model's name
        local function hf_lists(l)
            local missing = {}
            for _, k in ipairs(l.missing_keys) do
                if l.model == "BertModel" then
                    k = k:gsub("^bert%.", "")
                end
                if k ~= "cls.predictions.decoder.bias" then
                    missing[#missing + 1] = k
                end
            end
            table.sort(missing)
            return missing, l.unexpected_keys
        end

        for name, l in pairs(REF.loading) do
            it("lists missing and unexpected keys as transformers: " .. name, function()
                local m, info = bert[l.model].from_pretrained(dir_of(l), { strict = false })
                local missing, unexpected = hf_lists(l)
                assert.are.same(missing, info.missing_keys)
                assert.are.same(unexpected, info.unexpected_keys)
                assert.is_false(m.training)
                if #missing + #unexpected > 0 then
                    raises(function()
                        bert[l.model].from_pretrained(dir_of(l))
                    end, l.model .. ".from_pretrained", (missing[1] or unexpected[1]),
                        "strict = false")
                end
            end)
        end

        it("reads old gamma/beta names and ignores position_ids (the mlm checkpoint)", function()
            local _, info = bert.BertForMaskedLM.from_pretrained(dir_of(REF.cases.mlm))
            assert.are.same({}, info.missing_keys)
            assert.are.same({}, info.unexpected_keys)
        end)

        it("initialises missing weights as transformers (strict = false)", function()
            local m = bert.BertForSequenceClassification.from_pretrained(
                dir_of(REF.cases.base), { strict = false })
            local w, b = m.classifier.weight, m.classifier.bias
            assert.are.same({ 2, 32 }, w.shape)
            assert.are.equal(0, b:abs():max():item())
            local sd = w:std():item()
            assert.is_true(sd > 0.1 and sd < 0.3, "std " .. sd) -- initializer_range 0.2
        end)

        it("puts the weights on the device and dtype asked for", function()
            local c = REF.cases.cls
            local m = bert.BertForSequenceClassification.from_pretrained(dir_of(c),
                { device = "cpu:1", dtype = "float64" })
            for _, p in ipairs(m:parameters()) do
                assert.are.equal("float64", p.dtype)
                assert.are.equal("cpu:1", tostring(p.device))
            end
            local ids, opts = inputs(c)
            for k, v in pairs(opts) do
                opts[k] = v:to("cpu:1")
            end
            local out = m(ids:to("cpu:1"), opts)
            close(out.logits, c.outputs.logits, "float64 logits")
            assert.are.equal("cpu:1", tostring(out.logits.device))
        end)

        it("mirrors Hugging Face's module tree, with 1-based list indices", function()
            local m = bert.BertForMaskedLM.from_pretrained(dir_of(REF.cases.mlm))
            local sd = m:state_dict()
            for _, k in ipairs({ "bert.embeddings.word_embeddings.weight",
                "bert.embeddings.position_embeddings.weight",
                "bert.embeddings.token_type_embeddings.weight", "bert.embeddings.LayerNorm.bias",
                "bert.encoder.layer.1.attention.self.query.weight",
                "bert.encoder.layer.2.attention.output.LayerNorm.weight",
                "bert.encoder.layer.2.intermediate.dense.bias",
                "bert.encoder.layer.1.output.dense.weight", "cls.predictions.bias",
                "cls.predictions.transform.dense.weight",
                "cls.predictions.transform.LayerNorm.weight" }) do
                assert.is_not_nil(sd[k], k)
            end
            -- the tied decoder weight is under its own key too, as in PyTorch's state_dict
            assert.is_not_nil(sd["cls.predictions.decoder.weight"])
            assert.is_nil(sd["bert.encoder.layer.0.output.dense.weight"])
            assert.is_nil(rawget(m.bert, "pooler"))
            -- the decoder is the word embeddings (one tensor), its bias cls.predictions.bias
            local dec = m.cls.predictions.decoder
            assert.are.equal(m.bert.embeddings.word_embeddings.weight, dec.weight)
            assert.are.equal(m.cls.predictions.bias, dec.bias)
            local n, seen = 0, {}
            for _, p in ipairs(m:parameters()) do
                assert.is_nil(seen[p])
                seen[p] = true
                n = n + 1
            end
            assert.are.equal(5 + 2 * 16 + 5, n)
        end)

        it("loads tide's own state_dict keys (1-based) and a BertModel checkpoint", function()
            local c = REF.cases.base
            local m = bert.BertModel.from_pretrained(dir_of(c))
            local d = tmpdir()
            write(d .. "/config.json", read(dir_of(c) .. "/config.json"))
            tide.save(d .. "/model.safetensors", m:state_dict())
            local m2, info = bert.BertModel.from_pretrained(d)
            assert.are.same({}, info.missing_keys)
            local ids, opts = inputs(c)
            close(m2(ids, opts).last_hidden_state, c.outputs.last_hidden_state, "1-based")
            rmdir(d)
        end)
    end)

    describe("save_pretrained", function()
        it("round-trips each model with identical outputs and transformers' names", function()
            for _, name in ipairs({ "base", "cls", "mlm" }) do
                local c = REF.cases[name]
                local cls = bert[c.model]
                local m = cls.from_pretrained(dir_of(c))
                local d = tmpdir() .. "/saved"
                m:save_pretrained(d)
                local sd = tide.load(d .. "/model.safetensors")
                local prefix = name == "base" and "" or "bert."
                assert.is_not_nil(sd[prefix .. "encoder.layer.0.attention.self.query.weight"])
                assert.is_nil(sd[prefix .. "encoder.layer.2.attention.self.query.weight"])
                assert.is_nil(sd["cls.predictions.decoder.weight"])
                local cfg = read(d .. "/config.json")
                assert.is_truthy(cfg:find('"architectures": [\n    "' .. c.model .. '"\n  ]', 1,
                    true), cfg)
                assert.is_truthy(cfg:find('"model_type": "bert"', 1, true))
                assert.is_truthy(cfg:find('"transformers_version": "4.46.3"', 1, true))
                local m2, info = cls.from_pretrained(d)
                assert.are.same({}, info.missing_keys)
                assert.are.same({}, info.unexpected_keys)
                local ids, opts = inputs(c)
                local a, b = m(ids, opts), m2(ids, opts)
                for k in pairs(c.outputs) do
                    assert.are.equal(0, max_diff(b[k], { shape = a[k].shape, data = flat(a[k]) },
                        k))
                end
                rmdir(d)
                os.remove(d:sub(1, -7))
            end
        end)

        it("writes a fresh model's config with the labels", function()
            local m = bert.BertForSequenceClassification(tiny({ num_labels = 3 }))
            local d = tmpdir()
            m:save_pretrained(d)
            local m2 = bert.BertForSequenceClassification.from_pretrained(d)
            assert.are.equal(3, m2.config.num_labels)
            assert.are.equal("LABEL_2", m2.config.id2label["2"])
            assert.are.same({ 3, 16 }, m2.classifier.weight.shape)
            rmdir(d)
        end)

        it("names the default labels when they are read, not when num_labels is set", function()
            -- 2^40 names would not fit in memory: the config holds the count alone
            local many = math.floor(2 ^ 40)
            local c = bert.BertConfig({ num_labels = many })
            assert.are.equal(many, c.num_labels)
            local m = bert.BertForMaskedLM(tiny({ num_labels = many }))
            assert.are.equal(many, m.config.num_labels)
            local small = bert.BertConfig({ num_labels = 2 })
            assert.are.same({ ["0"] = "LABEL_0", ["1"] = "LABEL_1" }, small.id2label)
            assert.are.same({ LABEL_0 = 0, LABEL_1 = 1 }, small.label2id)
            assert.truthy(small:to_json_string():find('"LABEL_1"', 1, true))
        end)

        it("refuses more layers than memory holds before building any", function()
            local ok, err = pcall(bert.BertForMaskedLM, tiny({ num_hidden_layers = math.floor(2 ^ 31) }))
            assert.is_false(ok)
            assert.truthy(err:find("tide: BertModel: num_hidden_layers = 2147483648 layers of "
                .. "%d+ parameters would take [%d.]+ TB, more than the .- this process may use "
                .. "%(.-%); use a smaller num_hidden_layers$"), err)
        end)
    end)

    describe("fresh models", function()
        it("initialise as Hugging Face (normal(0, initializer_range), zeros, LayerNorm 1/0, " ..
            "zero padding row)", function()
            tide.manual_seed(3)
            local m = bert.BertForMaskedLM(tiny({ pad_token_id = 5, vocab_size = 256,
                initializer_range = 0.05 }))
            assert.is_true(m.training)
            local we = m.bert.embeddings.word_embeddings.weight
            assert.are.equal(0, we:select(1, 6):abs():max():item()) -- id 5, row 6
            local sd = we:std():item()
            assert.is_true(sd > 0.045 and sd < 0.055, "std " .. sd)
            local l1 = m.bert.encoder.layer[1]
            assert.are.equal(0, l1.attention.self.query.bias:abs():max():item())
            assert.are.equal(1, l1.output.LayerNorm.weight:min():item())
            assert.are.equal(0, m.cls.predictions.bias:abs():max():item())
            local q = l1.intermediate.dense.weight:std():item()
            assert.is_true(q > 0.04 and q < 0.06, "std " .. q)
        end)

        it("train: one AdamW step matches PyTorch's gradients and parameters", function()
            local tr = REF.train
            local m = bert.BertForSequenceClassification.from_pretrained(dir_of(tr))
            m:train()
            local opt = tide.optim.AdamW(m:parameters(), { lr = tr.lr,
                weight_decay = tr.weight_decay })
            local ids, opts = inputs(tr)
            local out = m(ids, opts)
            close(out.loss, tr.loss, "loss")
            out.loss:backward()
            local named = m:named_parameters()
            local n = 0
            for _, np in ipairs(named) do
                local hf = pretrained.to_hf_name(np[1])
                close(np[2].grad, tr.grads[hf], "grad " .. hf)
                n = n + 1
            end
            assert.are.equal(41, n)
            -- the padding row (id 0) gets no gradient
            local g = m.bert.embeddings.word_embeddings.weight.grad
            assert.are.equal(0, g:select(1, 1):abs():max():item())
            opt:step()
            for _, np in ipairs(named) do
                local hf = pretrained.to_hf_name(np[1])
                -- the key biases' exact gradient is 0 (softmax ignores a shift of a row); both
                -- sides hold rounding noise there, which Adam scales up to +-lr
                if not hf:find("attention.self.key.bias", 1, true) then
                    close(np[2], tr.params[hf], "param " .. hf)
                end
            end
        end)

        it("dropout only in training, the two probabilities apart", function()
            local m = bert.BertModel(tiny({ hidden_dropout_prob = 0.5,
                attention_probs_dropout_prob = 0.25 }))
            local a = m.encoder.layer[1].attention
            assert.are.equal(0.25, a.self.dropout.p)
            assert.are.equal(0.5, a.output.dropout.p)
            assert.are.equal(0.5, m.embeddings.dropout.p)
            local ids = tide.tensor({ { 2, 7, 9, 3 } }, { dtype = "int64" })
            m:eval()
            local x = m(ids).last_hidden_state
            assert.are.equal(0, max_diff(m(ids).last_hidden_state,
                { shape = x.shape, data = flat(x) }, "eval"))
            m:train()
            assert.is_true(max_diff(m(ids).last_hidden_state,
                { shape = x.shape, data = flat(x) }, "train") > 0)
        end)
    end)

    describe("errors", function()
        local base = dir_of(REF.cases.base)

        it("a directory without config.json", function()
            raises(function() bert.BertModel.from_pretrained("spec/fixtures") end,
                "BertModel.from_pretrained", "no config.json in spec/fixtures")
        end)

        it("a config of another model_type", function()
            local d = tmpdir()
            write(d .. "/config.json", '{"model_type": "gpt2", "n_layer": 2}')
            raises(function() bert.BertModel.from_pretrained(d) end, '"gpt2"', "not BERT")
            rmdir(d)
        end)

        it("a pickle checkpoint only, with the conversion to run", function()
            local d = tmpdir()
            write(d .. "/config.json", read(base .. "/config.json"))
            write(d .. "/pytorch_model.bin", "not read")
            raises(function() bert.BertForMaskedLM.from_pretrained(d) end,
                "pytorch_model.bin", "never runs a pickle",
                "from transformers import BertForMaskedLM as M",
                "safe_serialization=True")
            rmdir(d, { "config.json", "pytorch_model.bin" })
        end)

        it("a tensor of the wrong shape in the checkpoint", function()
            local d = copy_dir(base)
            local cfg = read(d .. "/config.json"):gsub('"intermediate_size": 64',
                '"intermediate_size": 48')
            write(d .. "/config.json", cfg)
            raises(function() bert.BertModel.from_pretrained(d) end,
                "'encoder.layer.0.intermediate.dense.bias' has shape {64}", "makes it {48}")
            rmdir(d)
        end)

        it("unsupported config values and bad options", function()
            raises(function() bert.BertConfig({ position_embedding_type = "relative_key" }) end,
                '"relative_key"', '"absolute" only')
            raises(function() bert.BertConfig({ is_decoder = true }) end, "is_decoder")
            -- an object is no config (a Module's fields built BERT-base in silence: a fuzz
            -- finding)
            raises(function() bert.BertModel(tide.nn.Conv2d(1, 2, 3)) end,
                "expected a BertConfig or a plain table of config.json's fields, got a Conv2d")
            raises(function() bert.BertConfig({ hidden_act = "mish" }) end, '"mish"')
            raises(function() bert.BertConfig({ hidden_size = 30, num_attention_heads = 4 }) end,
                "hidden_size 30", "num_attention_heads 4")
            raises(function() bert.BertModel.from_pretrained(base, { devcie = "cpu" }) end,
                "devcie")
            raises(function() bert.BertModel.from_pretrained(base, { dtype = "int64" }) end,
                '"int64"')
            local c = bert.BertConfig({ foo = "kept", vocab_size = 10 })
            assert.are.equal("kept", c.foo)
            assert.are.equal(12, c.num_hidden_layers)
            assert.are.equal(1e-12, c.layer_norm_eps)
        end)

        it("ids outside the vocabulary, a sequence too long, bad shapes", function()
            local m = bert.BertModel(tiny())
            raises(function() m(tide.tensor({ { 2, 64 } }, { dtype = "int64" })) end,
                "input_ids holds 64, outside 0..63")
            raises(function() m(tide.tensor({ { 2, -1 } }, { dtype = "int64" })) end,
                "input_ids holds -1")
            raises(function()
                m(tide.tensor({ { 1, 1 } }, { dtype = "int64" }),
                    { token_type_ids = tide.tensor({ { 0, 2 } }, { dtype = "int64" }) })
            end, "token_type_ids holds 2")
            raises(function() m(tide.zeros({ 1, 33 }, { dtype = "int64" })) end,
                "33 tokens", "max_position_embeddings 32", "truncat")
            raises(function() m(tide.zeros({ 4 }, { dtype = "int64" })) end,
                "{batch, length}", "view(1, -1)")
            raises(function()
                m(tide.zeros({ 2, 4 }, { dtype = "int64" }),
                    { attention_mask = tide.ones({ 2, 3 }, { dtype = "int64" }) })
            end, "attention_mask", "{2, 4}", "{2, 3}")
            raises(function() m(tide.zeros({ 1, 4 }, { dtype = "int64" }), { label = 1 }) end,
                "label")
        end)
    end)

    -- on cuda:0 (`lua5.4 /usr/bin/busted --run=gpu`; the emulator runs it on any machine)
    describe("on cuda #cuda", function()
        local function cuda_it(name, fn)
            it(name, function()
                if not tide.cuda.is_available() then
                    pending("no CUDA device")
                    return
                end
                fn()
            end)
        end

        cuda_it("from_pretrained(dir, {device = \"cuda\"}) gives transformers' outputs", function()
            for _, name in ipairs({ "base", "mlm" }) do
                local c = REF.cases[name]
                local m = bert[c.model].from_pretrained(dir_of(c), { device = "cuda" })
                assert.are.equal("cuda", m.bert and m.bert.embeddings.word_embeddings.weight.device.type
                    or m.embeddings.word_embeddings.weight.device.type)
                local ids, opts = inputs(c)
                for k, v in pairs(opts) do
                    opts[k] = v:to("cuda")
                end
                local out = m(ids:to("cuda"), opts)
                for k, r in pairs(c.outputs) do
                    close(out[k], r, name .. " " .. k .. " on cuda")
                end
            end
        end)

        cuda_it("skips padding on cuda as on the CPU (SentenceEncoder's path)", function()
            local c = REF.cases.base
            local m = bert.BertModel.from_pretrained(dir_of(c), { device = "cuda" })
            local ids, opts = inputs(c)
            for k, v in pairs(opts) do
                opts[k] = v:to("cuda")
            end
            local packed = m:_forward(ids:to("cuda"), opts, "BertModel", true)
            local real = opts.attention_mask:to("float32"):unsqueeze(3)
            local want = m(ids:to("cuda"), opts).last_hidden_state:mul(real)
            assert.are.equal("cuda", packed.last_hidden_state.device.type)
            local d = (packed.last_hidden_state - want):abs():max():to("cpu"):item()
            assert.is_true(d < TOL, tostring(d))
        end)

        cuda_it("one training step on cuda matches PyTorch's gradients", function()
            local tr = REF.train
            local m = bert.BertForSequenceClassification.from_pretrained(dir_of(tr),
                { device = "cuda" })
            m:train()
            local ids, opts = inputs(tr)
            for k, v in pairs(opts) do
                opts[k] = v:to("cuda")
            end
            local out = m(ids:to("cuda"), opts)
            close(out.loss, tr.loss, "loss on cuda")
            out.loss:backward()
            for _, np in ipairs(m:named_parameters()) do
                local hf = pretrained.to_hf_name(np[1])
                close(np[2].grad, tr.grads[hf], "grad " .. hf .. " on cuda")
            end
        end)
    end)
end)

describe("from_pretrained with a new head (num_labels)", function()
    local dir = "spec/" .. REF.cases.base.dir

    it("builds a classifier of num_labels classes on a BertModel checkpoint", function()
        local m, info = bert.BertForSequenceClassification.from_pretrained(dir,
            { num_labels = 3, strict = false })
        assert.are.equal(3, m.config.num_labels)
        assert.are.same({ 3, m.config.hidden_size }, m.classifier.weight:size())
        local found = false
        for _, k in ipairs(info.missing_keys) do
            found = found or k == "classifier.weight"
        end
        assert.is_true(found)
        local ok, err = pcall(bert.BertForSequenceClassification.from_pretrained, dir,
            { num_labels = 3, bogus = 1 })
        assert.is_false(ok)
        assert.matches("bogus", err)
    end)
end)
