-- gpu_bert_encode.lua — make gpu-check's MiniLM step (issue 29): the fortunes encoded into
-- sentence vectors by tide's SentenceEncoder on the GPU, per dtype, beside sentence-transformers
-- over PyTorch on the same GPU (bench/gpu_bert_encode.py), with a check of the vectors first.
--
--   lua5.4 bench/gpu_bert_encode.lua [--device cuda] [--dtypes float32,bfloat16,float16]
--       [--n 4096] [--batch-size 64] [--max-length 128] [--check 256] [--model DIR]
--       [--data DIR] [--reference PYTHON|none] [--reference-device DEV]
--       [--layers 6] [--hidden 384] [--heads 12] [--intermediate 1536]
--
-- Per dtype it prints, as `name value` lines for gpu_check.sh's results file:
--   - the check: the first --check fortunes' vectors on the device against the same model's
--     float32 vectors on the CPU (max |difference|, least cosine); beyond the dtype's tolerance
--     the script exits 1, after the figures, so a wrong GPU result fails gpu-check;
--   - encode: strings to vectors, as a user calls it (tokenization on the CPU included), in
--     sentences/s, best of 3 after a warm-up pass;
--   - model: the same batches tokenized beforehand, the encoder and the pooling alone, in
--     sentences/s and TFLOP/s. The TFLOP count is the work the sentences need (the
--     projections and the feed-forward on real tokens, attention on each sentence's own
--     length), the same count for tide and PyTorch, so padding done is not counted as work.
--
-- --model is a sentence-transformers directory (make models: models/all-MiniLM-L6-v2). A GPU
-- machine reaches no network, and MiniLM's weights (87 MB) are more than a device call carries:
-- with only the tokenizer's files there (tokenizer.json, tokenizer_config.json), the script
-- writes a stand-in directory (build/bench/gpu_bert_standin) with the tokenizer, a random
-- BertModel of --layers/--hidden/--heads/--intermediate (MiniLM's sizes by default) saved by
-- save_pretrained, mean pooling and normalisation. Random weights cost the same time, and the
-- lengths are the real tokenizer's. The PyTorch twin loads the same directory.
local tide = require("tide")
local compare = require("bench.compare")
local corpus = require("bench.fortunes")

local o = { device = "cuda", dtypes = "float32,bfloat16,float16", n = 4096, batch_size = 64,
    max_length = 128, check = 256, model = "models/all-MiniLM-L6-v2",
    data = "/usr/share/games/fortunes", reference = "none", reference_device = "",
    layers = 6, hidden = 384, heads = 12, intermediate = 1536 }
compare.flags(o, "usage: lua5.4 bench/gpu_bert_encode.lua [--device D] [--dtypes A,B] [--n N] " ..
    "[--batch-size N] [--max-length N] [--check N] [--model DIR] [--data DIR] " ..
    "[--reference PYTHON|none] [--reference-device D] [--layers N] [--hidden N] [--heads N] " ..
    "[--intermediate N]")
if o.reference_device == "" then
    o.reference_device = o.device
end
local exists = compare.exists

-- the check: each vector's distance from the CPU's, over the spread of the CPU's vectors (their
-- root-mean-square distance from their mean). Measured against the spread, not as a cosine,
-- because a random model's vectors all lie close together: a cosine near 1 would hide a
-- kernel that mixes sentences up. float32 runs the same arithmetic in another order; the half
-- types round every product and every stored activation
local TOLERANCE = { float32 = 1e-4, float16 = 0.02, bfloat16 = 0.1 }

local fortunes = corpus.read(o.data)
if #fortunes == 0 then
    print("gpu_bert_encode: skipped (no fortunes in " .. o.data .. ")")
    return
end
local sentences = corpus.sample(fortunes, o.n)

local function write(path, text)
    local f = assert(io.open(path, "wb"))
    f:write(text)
    f:close()
end

local function copy(from, to)
    local f = assert(io.open(from, "rb"))
    write(to, f:read("a"))
    f:close()
end

-- the directory to encode with: o.model itself when it has weights, else a stand-in
local function encoder_dir()
    if exists(o.model .. "/model.safetensors") then
        return o.model, "its own weights"
    end
    if not exists(o.model .. "/tokenizer.json") and not exists(o.model .. "/vocab.txt") then
        return nil
    end
    local dir = "build/bench/gpu_bert_standin"
    assert(os.execute("rm -rf '" .. dir .. "' && mkdir -p '" .. dir .. "/1_Pooling' '" .. dir ..
        "/2_Normalize'"))
    for _, name in ipairs({ "tokenizer.json", "tokenizer_config.json", "vocab.txt",
        "special_tokens_map.json" }) do
        if exists(o.model .. "/" .. name) then
            copy(o.model .. "/" .. name, dir .. "/" .. name)
        end
    end
    local vocab = tide.text.BertTokenizer.from_pretrained(dir).vocab_size
    tide.manual_seed(0)
    tide.models.bert.BertModel({ vocab_size = vocab, hidden_size = o.hidden,
        num_hidden_layers = o.layers, num_attention_heads = o.heads,
        intermediate_size = o.intermediate, max_position_embeddings = 512 }):save_pretrained(dir)
    write(dir .. "/modules.json", [[
[{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
 {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
 {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}]
]])
    write(dir .. "/1_Pooling/config.json", string.format('{"word_embedding_dimension": %d, ' ..
        '"pooling_mode_cls_token": false, "pooling_mode_mean_tokens": true, ' ..
        '"pooling_mode_max_tokens": false, "pooling_mode_mean_sqrt_len_tokens": false}\n',
        o.hidden))
    write(dir .. "/sentence_bert_config.json", string.format('{"max_seq_length": %d, ' ..
        '"do_lower_case": false}\n', o.max_length))
    return dir, "random weights (a stand-in: " .. o.model .. " has no model.safetensors)"
end

local dir, weights = encoder_dir()
if not dir then
    print("gpu_bert_encode: skipped (" .. o.model .. " has neither weights nor a tokenizer: " ..
        "make models, or carry its tokenizer.json and tokenizer_config.json)")
    return
end

local function encoder(device, dtype)
    local enc = tide.models.SentenceEncoder.from_pretrained(dir, { device = device, dtype = dtype })
    enc.max_seq_length = o.max_length
    return enc
end

-- batches as encode forms them (longest first, o.batch_size each), tokenized on the device, and
-- the multiply-adds the sentences need (×2: FLOPs)
local function batches_of(enc)
    local order = {}
    for i = 1, #sentences do
        order[i] = i
    end
    local function chars(s)
        return #s - select(2, s:gsub("[\128-\191]", ""))
    end
    table.sort(order, function(a, b)
        local la, lb = chars(sentences[a]), chars(sentences[b])
        if la ~= lb then
            return la > lb
        end
        return a < b
    end)
    local cfg = enc.model.config
    local H, I, L = cfg.hidden_size, cfg.intermediate_size, cfg.num_hidden_layers
    local list, flops = {}, 0
    for first = 1, #order, o.batch_size do
        local batch = {}
        for k = first, math.min(first + o.batch_size - 1, #order) do
            batch[#batch + 1] = sentences[order[k]]
        end
        local t = enc.tokenizer(batch, { padding = true, truncation = true,
            max_length = o.max_length, device = enc.device })
        list[#list + 1] = t
        for _, n in ipairs(t.attention_mask:sum(2):to("cpu"):totable()) do
            flops = flops + L * (2 * n * H * (4 * H + 2 * I) + 4 * n * n * H)
        end
    end
    return list, flops
end

-- the encoder and mean pooling on tokenized batches, as SentenceEncoder:encode runs them
local function run_model(enc, batches)
    local model = enc.model
    tide.no_grad(function()
        for _, t in ipairs(batches) do
            local call = { attention_mask = t.attention_mask, token_type_ids = t.token_type_ids }
            local h = model:_forward(t.input_ids, call, "gpu_bert_encode", true).last_hidden_state
            local m = t.attention_mask:to(h.dtype):unsqueeze(3)
            local v = (h * m):sum(2) / m:sum(2):clamp(1e-9)
            v = v / (v * v):sum(2, true):sqrt():clamp(1e-12)
        end
    end)
    tide.synchronize(enc.device)
end

-- best of 3 after one warm-up (kernels, cuBLAS handles, the allocator's cache)
local function best_time(fn)
    fn()
    local best = math.huge
    for _ = 1, 3 do
        local t0 = tide.wall_time()
        fn()
        best = math.min(best, tide.wall_time() - t0)
    end
    return best
end

local check = { table.unpack(sentences, 1, math.min(o.check, #sentences)) }
local want = encoder("cpu", "float32"):encode(check, { batch_size = o.batch_size })
local spread = math.sqrt(((want - want:mean(1, true)) ^ 2):sum(2):mean():item())
print(string.format("gpu_bert_encode: %d fortunes, batches of %d, at most %d tokens, %s, on %s; " ..
    "%d checked against the CPU", #sentences, o.batch_size, o.max_length, weights, o.device,
    #check))

local failed = {}
for dtype in o.dtypes:gmatch("[^,]+") do
    local enc = encoder(o.device, dtype)
    local got = enc:encode(check, { batch_size = o.batch_size }):to("cpu")
    local max_abs = (got - want):abs():max():item()
    local min_cos = (got * want):sum(2):min():item()
    local worst = ((got - want) ^ 2):sum(2):max():sqrt():item() / spread
    local tol = TOLERANCE[dtype] or TOLERANCE.bfloat16
    local ok = worst <= tol -- NaN fails too
    print(string.format("check %s against the CPU's float32: max |difference| %.3g, least " ..
        "cosine %.7f, largest distance %.3g of the vectors' spread (tolerance %g): %s", dtype,
        max_abs, min_cos, worst, tol, ok and "ok" or "FAILED"))
    if not ok then
        failed[#failed + 1] = dtype
    end

    local encode_s = best_time(function()
        enc:encode(sentences, { batch_size = o.batch_size })
        tide.synchronize(enc.device)
    end)
    local batches, flops = batches_of(enc)
    local model_s = best_time(function() run_model(enc, batches) end)
    print(string.format("MiniLM encode %s: %.0f sentences/s from the strings; the model alone " ..
        "%.0f sentences/s, %.2f TFLOP/s (%.1f ms for %d)", dtype, #sentences / encode_s,
        #sentences / model_s, flops / model_s / 1e12, model_s * 1e3, #sentences))
    print(string.format("tide_bert_encode_%s_sents_per_s %.1f", dtype, #sentences / encode_s))
    print(string.format("tide_bert_model_%s_sents_per_s %.1f", dtype, #sentences / model_s))
    print(string.format("tide_bert_model_%s_tflops %.3f", dtype, flops / model_s / 1e12))
end

-- the twin: sentence-transformers on the same directory, sentences and batches
if o.reference ~= "none" then
    local cmd = string.format("%s bench/gpu_bert_encode.py --model '%s' --data '%s' --n %d " ..
        "--batch-size %d --max-length %d --dtypes %s --device %s 2>&1", o.reference, dir, o.data,
        #sentences, o.batch_size, o.max_length, o.dtypes, o.reference_device)
    local p = io.popen(cmd)
    local out = p:read("a")
    p:close()
    local any = false
    for line in out:gmatch("[^\n]+") do
        local key, v = line:match("^result (%S+) (%S+)$")
        if key then
            print(key .. " " .. v)
            any = true
        elseif line:match("^PyTorch") then
            print(line)
        end
    end
    if not any then
        print("PyTorch reference: no figures (" .. (out:match("[^\n]*Error[^\n]*") or
            out:gsub("\n", " "):sub(1, 300)) .. ")")
    end
end

if #failed > 0 then
    print("gpu_bert_encode: the vectors on " .. o.device .. " differ from the CPU's in " ..
        table.concat(failed, ", "))
    os.exit(1)
end
