-- bert_examples_spec.lua — examples/semantic_search.lua and examples/bert_classify.lua end to
-- end, with the tiny sentence-transformers model of spec/fixtures (MiniLM's layout, 2 layers of
-- width 32, a vocabulary of 121 words) on a corpus of three small fortune files written here:
-- the search finds a fortune by its own words, caches the vectors and reads them back; the
-- fine-tune trains, prints its accuracy and saves a directory that loads again; bad flags stop
-- with the example's message and exit status 2 before any model is loaded.
local tide = require("tide")

local MODEL = "spec/fixtures/sentence_encoder"

-- runs an example with the checkout's paths; returns its output and whether it exited with 0
local function run(example, args)
    local cmd = "LUA_PATH='lua/?.lua;lua/?/init.lua;;' LUA_CPATH='build/lua/?.so;;' TERM=dumb " ..
        "lua5.4 examples/" .. example .. ".lua " .. args .. " 2>&1"
    local p = io.popen(cmd)
    local out = p:read("*a")
    local ok, _, code = p:close()
    return out, ok, code
end

-- three fortune files in the fixture's vocabulary, 20 fortunes each
local FILES = {
    pets = { "the cat sat on the mat", "the dog sat on the mat", "my cat is old",
        "her dog is new", "the cat and the dog play" },
    computers = { "the computer has a bug", "computers have bugs", "a program is work",
        "this program has no bugs", "my computer is old" },
    life = { "life is good", "love is good", "the world is old", "time is life",
        "what is love" },
}

local function write_corpus()
    local dir = os.tmpname()
    os.remove(dir)
    assert(os.execute("mkdir -p '" .. dir .. "'"))
    for name, lines in pairs(FILES) do
        local f = assert(io.open(dir .. "/" .. name, "wb"))
        for k = 1, 20 do
            local round = math.floor((k - 1) / #lines) -- a Lua 5.1 file too: no //
            f:write(lines[(k - 1) % #lines + 1], round > 0 and (" " .. ({ "one", "two",
                "three" })[round]) or "", "\n%\n")
        end
        f:close()
    end
    return dir
end

describe("examples/semantic_search.lua #lua53", function()
    local dir
    setup(function()
        dir = write_corpus()
    end)
    teardown(function()
        os.execute("rm -rf '" .. dir .. "'")
    end)

    it("embeds the corpus once, caches it, and ranks a fortune's own words first", function()
        local args = string.format("--model %s --data '%s' --cache '%s/cache' --device cpu " ..
            "--k 2 --query 'this program has no bugs'", MODEL, dir, dir)
        local out, ok = run("semantic_search", args)
        assert.is_true(ok, out)
        assert.matches("corpus: 60 fortunes from [^\n]*: embedding them once", out)
        assert.matches("\n1%. 1%.000  %[computers%]\n     this program has no bugs\n", out)
        assert.matches("\n2%. [01]%.%d%d%d  %[%a+%]\n", out)
        local cached = out:match("cached in (%S+%.safetensors)")
        assert.truthy(cached, out)
        local vectors = tide.load(cached)
        assert.same({ 60, 32 }, vectors[next(vectors)].shape)

        local again, ok2 = run("semantic_search", args)
        assert.is_true(ok2, again)
        assert.matches("vectors from " .. cached:gsub("%p", "%%%0"), again)
        assert.not_matches("embedding them once", again)
        assert.equal(out:match("\n1%..*$"), again:match("\n1%..*$"))
    end)

    it("stops with its message and status 2 when the model is missing", function()
        local out, ok, code = run("semantic_search", "--model " .. dir .. "/none --data '" ..
            dir .. "' --query x")
        assert.is_nil(ok)
        assert.equal(2, code)
        assert.matches("semantic_search: no sentence%-transformers model in [^\n]*/none; " ..
            "run `make models` first", out)
    end)
end)

describe("examples/bert_classify.lua #lua53", function()
    local dir
    setup(function()
        dir = write_corpus()
    end)
    teardown(function()
        os.execute("rm -rf '" .. dir .. "'")
    end)

    it("trains in mixed precision (--amp 1): bfloat16 forwards, float32 weights", function()
        -- --exact 1 prints each step's loss: the bfloat16 run follows the float32 one to
        -- bfloat16's precision, and what it saves is float32
        local function losses(out)
            local l = {}
            for v in out:gmatch("\nstep %d+ loss (%d+%.%d+)") do
                l[#l + 1] = tonumber(v)
            end
            return l
        end
        local args = string.format("--model %s --data '%s' --min-fortunes 10 --epochs 1 " ..
            "--batch-size 8 --max-length 16 --exact 1 --device cpu", MODEL, dir)
        local ref, ok = run("bert_classify", args .. " --save ''")
        assert.is_true(ok, ref)
        local out, ok2 = run("bert_classify", args .. string.format(" --amp 1 --save '%s/amp'",
            dir))
        assert.is_true(ok2, out)
        assert.matches("\nmixed precision: autocast to bfloat16", out)
        local want, got = losses(ref), losses(out)
        assert.equal(6, #want)
        assert.equal(#want, #got)
        for i = 1, #want do
            assert.is_true(math.abs(got[i] - want[i]) <= 0.02 * want[i],
                string.format("step %d: %g against float32's %g", i, got[i], want[i]))
        end
        local model = tide.models.bert.BertForSequenceClassification.from_pretrained(dir .. "/amp")
        assert.equal("float32", model.classifier.weight.dtype)
        local out3, ok3, code = run("bert_classify", "--amp 2")
        assert.is_falsy(ok3)
        assert.equal(2, code)
        assert.matches("^bert_classify: %-%-amp is 0 or 1, got 2\n", out3)
    end)

    it("fine-tunes, prints the validation accuracy and saves a loadable classifier", function()
        local out, ok = run("bert_classify", string.format("--model %s --data '%s' " ..
            "--min-fortunes 10 --epochs 2 --batch-size 8 --max-length 16 --save '%s/out' " ..
            "--device cpu", MODEL, dir, dir))
        assert.is_true(ok, out)
        assert.matches("^3 classes %(computers, life, pets%), 48 training and 12 validation " ..
            "fortunes", out)
        assert.matches("\nepoch 2/2: train loss %d%.%d+", out)
        local acc = tonumber(out:match("\nval accuracy: (%d%.%d%d%d%d)\n?$"))
        assert.truthy(acc, out)
        assert.is_true(acc >= 0 and acc <= 1)
        local bert = tide.models.bert
        local model = bert.BertForSequenceClassification.from_pretrained(dir .. "/out")
        assert.equal(3, model.config.num_labels)
        assert.same({ ["0"] = "computers", ["1"] = "life", ["2"] = "pets" },
            model.config.id2label)
        -- the saved directory is a working classifier, its tokenizer included
        local tok = tide.text.BertTokenizer.from_pretrained(dir .. "/out")
        local enc = tok({ "the cat sat on the mat" })
        local logits = model(enc.input_ids, { attention_mask = enc.attention_mask }).logits
        assert.same({ 1, 3 }, logits.shape)
        assert.is_true(logits:isfinite():all():item())
    end)

    it("stops before loading anything when --init-head names no file", function()
        local out, ok, code = run("bert_classify", "--model " .. MODEL .. " --data '" .. dir ..
            "' --init-head '" .. dir .. "/no-head.safetensors'")
        assert.is_nil(ok)
        assert.equal(2, code)
        assert.equal("bert_classify: --init-head " .. dir .. "/no-head.safetensors: no such " ..
            "file (bench/bert_classify.py --save-head FILE writes one)\n", out)
    end)

    it("stops with tide's reason when --init-head is not a safetensors file", function()
        local bad = dir .. "/bad.safetensors"
        local f = assert(io.open(bad, "wb"))
        f:write("junk")
        f:close()
        local out, ok, code = run("bert_classify", "--model " .. MODEL .. " --data '" .. dir ..
            "' --min-fortunes 10 --epochs 1 --max-length 16 --save '' --init-head '" .. bad ..
            "'")
        assert.is_nil(ok)
        assert.equal(2, code)
        assert.matches("\nbert_classify: %-%-init%-head: tide: load: [^\n]*bad%.safetensors: " ..
            "file too small", out)
    end)

    it("names an unknown flag", function()
        local out, ok, code = run("bert_classify", "--epoch 2")
        assert.is_nil(ok)
        assert.equal(2, code)
        assert.matches("^bert_classify: unknown argument '%-%-epoch'\nusage:", out)
    end)
end)
