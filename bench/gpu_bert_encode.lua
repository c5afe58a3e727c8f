-- gpu_bert_encode.lua — make gpu-check's MiniLM figure: the fortunes encoded by a BERT of
-- all-MiniLM-L6-v2's size (6 layers, width 384, 12 heads) in batches of 64 sorted by length, at
-- most 128 tokens, under no_grad, per dtype; prints sentences/s and the achieved TFLOP/s of the
-- encoder's matmuls (projections, feed-forward, attention), as lines `name value` for the
-- results file:
--
--   lua5.4 bench/gpu_bert_encode.lua [--device cuda] [--dtypes float32,bfloat16,float16]
--       [--n 4096] [--batch-size 64] [--max-length 128] [--layers 6] [--hidden 384]
--       [--heads 12] [--intermediate 1536] [--model DIR] [--data DIR]
--
-- With models/all-MiniLM-L6-v2 (make models) its weights and tokenizer are used. Without them
-- (a GPU machine cannot download) the weights are random, which costs the same, and with only
-- the tokenizer's files carried the lengths are still the real ones; with neither, each
-- fortune's length is its word count plus a third (WordPiece's rate on the fortunes) plus 2.
local tide = require("tide")
local bert = tide.models.bert

local o = { device = "cuda", dtypes = "float32,bfloat16,float16", n = 4096, batch_size = 64,
    max_length = 128, layers = 6, hidden = 384, heads = 12, intermediate = 1536,
    model = "models/all-MiniLM-L6-v2", data = "/usr/share/games/fortunes" }
for i = 1, #arg, 2 do
    local k = arg[i]:match("^%-%-([%w-]+)$")
    k = k and k:gsub("-", "_")
    if not k or o[k] == nil or arg[i + 1] == nil then
        io.stderr:write("gpu_bert_encode: unknown or incomplete flag " .. arg[i] .. "\n")
        os.exit(2)
    end
    o[k] = type(o[k]) == "number" and math.tointeger(tonumber(arg[i + 1])) or arg[i + 1]
end

local exists = require("bench.compare").exists

-- the fortunes, every file in name order, split on "%" lines
local fortunes = {}
local ls = io.popen("ls " .. o.data .. " 2>/dev/null")
for name in ls:lines() do
    if not name:match("%.") then
        local f = io.open(o.data .. "/" .. name, "rb")
        if f then
            for text in (f:read("a") .. "\n%\n"):gmatch("(.-)\n%%\n") do
                if text:match("%S") then
                    fortunes[#fortunes + 1] = text
                end
            end
            f:close()
        end
    end
end
ls:close()
if #fortunes == 0 then
    print("gpu_bert_encode: skipped (no fortunes in " .. o.data .. ")")
    return
end
local sentences = {}
for i = 1, o.n do -- spread over the corpus
    sentences[i] = fortunes[math.floor((i - 1) * #fortunes / o.n) + 1]
end

-- token ids per sentence: the real tokenizer's when its files are here
local tok = (exists(o.model .. "/tokenizer.json") or exists(o.model .. "/vocab.txt"))
    and tide.text.BertTokenizer.from_pretrained(o.model)
local lengths = {}
for i, s in ipairs(sentences) do
    local n
    if tok then
        n = #tok:encode(s, { max_length = o.max_length, truncation = true })
    else
        local words = select(2, s:gsub("%S+", ""))
        n = math.min(o.max_length, math.floor(words * 4 / 3) + 2)
    end
    lengths[i] = n
end
table.sort(lengths, function(a, b) return a > b end) -- sentence-transformers' order

local config = { vocab_size = 30522, hidden_size = o.hidden, num_hidden_layers = o.layers,
    num_attention_heads = o.heads, intermediate_size = o.intermediate,
    max_position_embeddings = 512 }
local with_weights = exists(o.model .. "/model.safetensors")
print(string.format("gpu_bert_encode: %d fortunes, batches of %d, at most %d tokens (%s), %s " ..
    "weights, on %s", o.n, o.batch_size, o.max_length, tok and "tokenizer" or "estimated lengths",
    with_weights and "MiniLM's" or "random", o.device))

for dtype in o.dtypes:gmatch("[^,]+") do
    local model = with_weights and bert.BertModel.from_pretrained(o.model,
        { device = o.device, dtype = dtype }) or bert.BertModel(config):to(o.device, dtype)
    model:eval()
    local batches, flops = {}, 0
    local H, I, L = o.hidden, o.intermediate, o.layers
    for at = 1, #lengths, o.batch_size do
        local B, T = math.min(o.batch_size, #lengths - at + 1), lengths[at]
        local ids = tide.randint(1000, 30000, { B, T }, { device = o.device })
        local mask = tide.ones({ B, T }, { dtype = "int64", device = o.device })
        for b = 1, B do -- padding past each sentence's own length
            local n = lengths[at + b - 1]
            if n < T then
                mask[b]:narrow(1, n + 1, T - n):fill_(0)
            end
        end
        batches[#batches + 1] = { ids, mask }
        -- per layer: Q, K, V, output projections, the feed-forward, scores and context
        flops = flops + L * (2 * B * T * H * (4 * H + 2 * I) + 4 * B * T * T * H)
    end
    local function run()
        tide.no_grad(function()
            for _, b in ipairs(batches) do
                model(b[1], { attention_mask = b[2] })
            end
        end)
        tide.synchronize(o.device)
    end
    run() -- warm-up: kernels, cuBLAS handles, the allocator's cache
    local best = math.huge
    for _ = 1, 3 do
        local t0 = tide.wall_time()
        run()
        best = math.min(best, tide.wall_time() - t0)
    end
    print(string.format("MiniLM encode %s: %.0f sentences/s, %.2f TFLOP/s (%.1f ms for %d)",
        dtype, o.n / best, flops / best / 1e12, best * 1e3, o.n))
    print(string.format("tide_bert_encode_%s_sents_per_s %.1f", dtype, o.n / best))
    print(string.format("tide_bert_encode_%s_tflops %.3f", dtype, flops / best / 1e12))
end
