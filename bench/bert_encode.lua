-- bert_encode.lua — sentence vectors from all-MiniLM-L6-v2 (models/, `make models`) for N
-- fortunes, tide's SentenceEncoder beside sentence-transformers over PyTorch and ONNX Runtime
-- (bench/bert_encode.py): batches of --batch-size sentences sorted by length, at most
-- --max-length tokens, mean pooling and normalisation, timed from the strings to the vectors
-- (tokenization included, the model loaded beforehand). The fortunes: N spread evenly over
-- the corpus (every file of /usr/share/games/fortunes in name order, bench/bert_encode.py's
-- rule). The references run under bench/compare.lua's rule (every thread count with and without
-- OMP_WAIT_POLICY=PASSIVE, the best by median, tide and the references in turns); the ratios
-- are tide's time over theirs (issue 29's target: tide <= 0.8x PyTorch's best). Then tide's
-- vectors for the first --check fortunes of the sample are compared with sentence-transformers'.
--
--   lua5.4 bench/bert_encode.lua [--n 1024] [--batch-size 64] [--max-length 128] [--rounds 2]
--       [--check 128] [--model DIR] [--data DIR] [--dtype float32|bfloat16]
--
-- --dtype bfloat16: both sides' models in bfloat16 (tide: from_pretrained's dtype; its CPU
-- matmuls then run on oneDNN's bfloat16 kernels where the CPU has them, tide.cpu_info().bf16_gemm;
-- PyTorch: the model cast, on its own oneDNN); no ONNX Runtime then (no bfloat16 CPU kernels).
-- The vectors are checked against sentence-transformers' float32 ones to bfloat16's precision.
--
-- Needs models/all-MiniLM-L6-v2 (make models) and, for the references, the pinned venv
-- (.venv: sh tools/pyenv.sh); without them it says so and exits 0 (benchmarks never gate CI).
local compare = require("bench.compare")

local o = { n = 1024, batch_size = 64, max_length = 128, rounds = 2, check = 128,
    model = "models/all-MiniLM-L6-v2", data = "/usr/share/games/fortunes", dtype = "float32" }
compare.flags(o, "usage: lua5.4 bench/bert_encode.lua [--n N] [--batch-size N] " ..
    "[--max-length N] [--rounds N] [--check N] [--model DIR] [--data DIR] " ..
    "[--dtype float32|bfloat16]")
if o.dtype ~= "float32" and o.dtype ~= "bfloat16" then
    print("bert_encode: --dtype is float32 or bfloat16, got " .. tostring(o.dtype))
    os.exit(1)
end

local exists = compare.exists

if not exists(o.model .. "/model.safetensors") then
    print("bert_encode: skipped (no " .. o.model .. "; run `make models`)")
    os.exit(0)
end
if not exists(o.data .. "/cookie") then
    print("bert_encode: skipped (no fortunes in " .. o.data .. "; apt-get install fortunes)")
    os.exit(0)
end
local VENV = ".venv/bin/python"
local have_venv = exists(VENV)

local tide = require("tide")
local core = require("tide.core")

local corpus = require("bench.fortunes")
local fortunes = corpus.read(o.data)
local sentences = corpus.sample(fortunes, o.n)
local warm = { table.unpack(sentences, 1, math.min(o.batch_size, #sentences)) }
local enc = tide.models.SentenceEncoder.from_pretrained(o.model, { dtype = o.dtype })
enc.max_seq_length = o.max_length

local function tide_encode(list)
    return enc:encode(list, { batch_size = o.batch_size })
end

local function tide_side()
    tide_encode(warm)
    local t0 = core.wall_time()
    tide_encode(sentences)
    local s = core.wall_time() - t0
    return { encode = s, encode_ort = s }
end

print(string.format("bert_encode: all-MiniLM-L6-v2 in %s, %d of %d fortunes, batch %d, max " ..
    "length %d, length-sorted; %d cores, tide on %d threads%s", o.dtype, #sentences, #fortunes,
    o.batch_size, o.max_length, compare.nproc(), tide.cpu_info().threads,
    o.dtype == "bfloat16" and ", bfloat16 gemm: " .. (tide.cpu_info().bf16_gemm or "widened")
    or ""))

local function per_s(s)
    return #sentences / s
end

if not have_venv then
    local r = tide_side()
    print(string.format("  tide %.2f s (%.1f sentences/s); references skipped (no %s: " ..
        "sh tools/pyenv.sh makes it)", r.encode, per_s(r.encode), VENV))
    os.exit(0)
end

local ref_args = string.format("bench/bert_encode.py --n %d --batch-size %d --max-length %d " ..
    "--model '%s' --data '%s' --dtype %s", o.n, o.batch_size, o.max_length, o.model, o.data,
    o.dtype)
local res, why = compare.run { rounds = o.rounds, tide = tide_side, reference = ref_args }
if not res or not res.encode then
    print("bert_encode: references unavailable (" .. tostring(why) .. ")")
    os.exit(0)
end
local t, pt, ort = res.encode.tide, res.encode, res.encode_ort
print(string.format("  %-14s %7.2f s  %6.1f sentences/s", "tide", t, per_s(t)))
print(string.format("  %-14s %7.2f s  %6.1f sentences/s  (sentence-transformers; best setting: " ..
    "%s)", "PyTorch", pt.ref, per_s(pt.ref), pt.setting))
if ort then
    print(string.format("  %-14s %7.2f s  %6.1f sentences/s  (best setting: %s)",
        "ONNX Runtime", ort.ref, per_s(ort.ref), ort.setting))
end
print(string.format("  tide/PyTorch %.2fx (%.2f-%.2f; target <= 0.8x)%s; medians of %d " ..
    "rounds' ratios", pt.ratio, pt.lo, pt.hi, ort and string.format(", tide/ONNX Runtime " ..
    "%.2fx (%.2f-%.2f), ONNX Runtime/PyTorch %.2fx", ort.ratio, ort.lo, ort.hi,
    ort.ref / pt.ref) or "", o.rounds))
print(string.format("result bert_encode%s_ratio %.4f", o.dtype == "float32" and "" or "_bf16",
    res.encode.ratio))

-- the vectors themselves, beside sentence-transformers' (one thread, the first --check)
if o.check > 0 then
    local n = math.min(o.check, #sentences)
    local path = os.tmpname() .. ".safetensors"
    local p = io.popen(string.format("TIDE_BENCH_THREADS=1 %s bench/bert_encode.py --n %d " ..
        "--first %d --batch-size %d --max-length %d --model '%s' --data '%s' --no-ort " ..
        "--vectors '%s' 2>&1", VENV, o.n, n, o.batch_size, o.max_length, o.model, o.data, path))
    local out = p:read("a")
    p:close()
    local ok, ref = pcall(tide.load, path)
    os.remove(path)
    if not ok or not ref.vectors then
        print("  vectors: no reference (" .. (out:match("[^\n]*Error[^\n]*") or "?") .. ")")
    else
        local mine = tide_encode({ table.unpack(sentences, 1, n) })
        local diff = (mine:float() - ref.vectors:narrow(1, 1, n)):abs():max():item()
        print(string.format("  vectors: max |tide - sentence-transformers| = %.2e over %d " ..
            "fortunes (target <= %s)", diff, n, o.dtype == "float32" and "1e-5" or
            "bfloat16's precision, the float32 model's vectors"))
    end
end
