-- bert_finetune.lua — the training step of examples/bert_classify.lua at batch 32 x 128 tokens:
-- all-MiniLM-L6-v2 (models/, `make models`) under a new 13-class head, forward in train mode
-- (dropout on), cross-entropy, backward, AdamW (lr 5e-5, weight decay 0.01); tide beside
-- transformers over PyTorch (bench/bert_finetune.py: the same batch, the same step).
--   * time per step: the mean of --steps steps after a warm-up step, under bench/compare.lua's
--     rule (PyTorch at its best thread setting, tide and PyTorch in turns, the median of the
--     rounds' ratios);
--   * memory: this process's resident set before the first step and its peak (VmHWM) after
--     the steps, beside PyTorch's at its fastest setting; the loop's own memory is the
--     difference (PyTorch's libraries alone map hundreds of MB tide's process never has).
--
--   lua5.4 bench/bert_finetune.lua [--steps 3] [--rounds 2] [--batch-size 32] [--max-length 128]
--       [--amp 0|1] [--fill 0|1]
--
-- The fortunes leave most of a 128-token row as padding, which tide's BertForSequenceClassification
-- skips (tide.models.bert.packing) and transformers computes. --fill 1 makes each text its
-- fortune and the next seven, every row cut full: the same work on both sides.
--
-- --amp 1: the forward and the loss under autocast to bfloat16 on both sides (tide.autocast,
-- torch.autocast("cpu")), the step PyTorch's AMP recipe takes on a CPU; the parameters, their
-- gradients and AdamW stay float32. tide's bfloat16 products run on oneDNN's kernels where the
-- CPU has bfloat16 instructions (tide.cpu_info().bf16_gemm).
--
-- Needs models/all-MiniLM-L6-v2 and, for the reference, .venv (sh tools/pyenv.sh); without them
-- it says so and exits 0.
local compare = require("bench.compare")

local o = { steps = 3, rounds = 2, batch_size = 32, max_length = 128, amp = 0, fill = 0,
    model = "models/all-MiniLM-L6-v2", data = "/usr/share/games/fortunes" }
compare.flags(o, "usage: lua5.4 bench/bert_finetune.lua [--steps N] [--rounds N] " ..
    "[--batch-size N] [--max-length N] [--model DIR] [--data DIR] [--amp 0|1] [--fill 0|1]")
if o.amp ~= 0 and o.amp ~= 1 and o.amp ~= "0" and o.amp ~= "1" then
    print("bert_finetune: --amp is 0 or 1, got " .. tostring(o.amp))
    os.exit(1)
end
local amp = tonumber(o.amp) == 1
if o.fill ~= 0 and o.fill ~= 1 and o.fill ~= "0" and o.fill ~= "1" then
    print("bert_finetune: --fill is 0 or 1, got " .. tostring(o.fill))
    os.exit(1)
end
local fill = tonumber(o.fill) == 1

local exists = compare.exists

if not exists(o.model .. "/model.safetensors") then
    print("bert_finetune: skipped (no " .. o.model .. "; run `make models`)")
    os.exit(0)
end
if not exists(o.data .. "/cookie") then
    print("bert_finetune: skipped (no fortunes in " .. o.data .. "; apt-get install fortunes)")
    os.exit(0)
end
if not exists("/proc/self/status") then
    print("bert_finetune: skipped (no /proc/self/status)")
    os.exit(0)
end
local VENV = ".venv/bin/python"

local tide = require("tide")
local core = require("tide.core")
local F = tide.nn.functional
local CLASSES = 13

local function status_kb(field)
    local f = assert(io.open("/proc/self/status", "r"))
    local s = f:read("a")
    f:close()
    return tonumber(s:match(field .. ":%s*(%d+)")) or 0
end

local fortunes = require("bench.fortunes")
local all = fortunes.read(o.data)
local texts = fortunes.sample(all, o.batch_size)
if fill then -- sample's fortune and the next seven (bench/bert_finetune.py --fill)
    for i = 1, #texts do
        local parts, first = {}, (i - 1) * #all // #texts
        for j = 0, 7 do
            parts[j + 1] = all[(first + j) % #all + 1]
        end
        texts[i] = table.concat(parts, " ")
    end
end

-- the model of examples/bert_classify.lua: the pretrained encoder under a new head of 13 labels
tide.manual_seed(0)
local bert = tide.models.bert
local tok = tide.text.BertTokenizer.from_pretrained(o.model)
local model = bert.BertForSequenceClassification.from_pretrained(o.model,
    { num_labels = CLASSES, strict = false })
model:train()
local enc = tok(texts, { padding = "max_length", truncation = true, max_length = o.max_length })
local labels = {}
for k = 1, #texts do
    labels[k] = (k - 1) % CLASSES + 1
end
labels = tide.tensor(labels)
local opt = tide.optim.AdamW(model:parameters(), { lr = 5e-5, weight_decay = 0.01 })

local function forward()
    local logits = model(enc.input_ids, { attention_mask = enc.attention_mask,
        token_type_ids = enc.token_type_ids }).logits
    return F.cross_entropy(logits, labels)
end

local function step()
    opt:zero_grad()
    local loss = amp and tide.autocast("cpu", forward) or forward()
    loss:backward()
    opt:step()
    return loss:item()
end

collectgarbage()
local rss_base = status_kb("VmRSS")
local function tide_side()
    step()
    local t0 = core.wall_time()
    local loss
    for _ = 1, o.steps do
        loss = step()
    end
    assert(loss == loss, "loss is NaN")
    return { step_s = (core.wall_time() - t0) / o.steps }
end

print(string.format("bert_finetune: all-MiniLM-L6-v2 + a %d-class head, batch %d x %d tokens, " ..
    "AdamW, train mode%s; %d cores, tide on %d threads", CLASSES, #texts, o.max_length,
    amp and ", autocast to bfloat16 (bfloat16 gemm: " .. (tide.cpu_info().bf16_gemm or
    "widened") .. ")" or "", compare.nproc(), tide.cpu_info().threads))
local real = enc.attention_mask:sum():item()
print(string.format("  the batch: %d real tokens of %d (%.0f%% padding, which tide skips and " ..
    "transformers computes)%s", real, #texts * o.max_length,
    100 * (1 - real / (#texts * o.max_length)), fill and "" or "; --fill 1: rows cut full"))

local function mb(kb)
    return kb / 1024
end

if not exists(VENV) then
    local r = tide_side()
    local peak = status_kb("VmHWM")
    print(string.format("  tide %.2f s/step, peak RSS %.0f MB (loop %.0f MB); reference " ..
        "skipped (no %s: sh tools/pyenv.sh makes it)", r.step_s, mb(peak), mb(peak - rss_base),
        VENV))
    os.exit(0)
end

local args = string.format("bench/bert_finetune.py --steps %d --batch-size %d " ..
    "--max-length %d --model '%s' --data '%s'%s", o.steps, o.batch_size, o.max_length, o.model,
    o.data, (amp and " --amp" or "") .. (fill and " --fill" or ""))
local res, why = compare.run { rounds = o.rounds, tide = tide_side, reference = args }
local peak = status_kb("VmHWM")
if not res or not res.step_s then
    print("bert_finetune: reference unavailable (" .. tostring(why) .. ")")
    os.exit(0)
end
local r = res.step_s
-- the reference's memory at its fastest setting (one more run of it)
local best
for _, s in ipairs(compare.settings()) do
    if compare.describe(s) == r.setting then
        best = s
    end
end
local mem = best and compare.run_reference(args, best)
print(string.format("  %-8s %6.2f s/step  peak RSS %5.0f MB (before the first step %4.0f MB, " ..
    "the loop's own %4.0f MB)", "tide", r.tide, mb(peak), mb(rss_base), mb(peak - rss_base)))
if mem then
    print(string.format("  %-8s %6.2f s/step  peak RSS %5.0f MB (before the first step %4.0f " ..
        "MB, the loop's own %4.0f MB)  (%s)", "PyTorch", r.ref, mb(mem.rss_peak),
        mb(mem.rss_base), mb(mem.rss_peak - mem.rss_base), r.setting))
end
print(string.format("  tide/PyTorch: step time %.2fx (%.2f-%.2f, medians of %d rounds' " ..
    "ratios)%s", r.ratio, r.lo, r.hi, o.rounds, mem and string.format(", peak RSS %.2fx, " ..
    "loop memory %.2fx", peak / mem.rss_peak, (peak - rss_base) /
    math.max(1, mem.rss_peak - mem.rss_base)) or ""))
print(string.format("result bert_finetune%s_step_ratio %.4f", amp and "_amp" or "", r.ratio))
