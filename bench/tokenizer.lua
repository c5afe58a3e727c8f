-- tokenizer.lua — tide.text.BertTokenizer against Hugging Face's BertTokenizerFast (Rust
-- tokenizers, one thread: TOKENIZERS_PARALLELISM=false, RAYON_NUM_THREADS=1) on the fortunes
-- corpus (/usr/share/games/fortunes, split on "%" lines): tokens per second for both and the
-- ratio, and the ids of both compared on every fortune.
--
--   lua5.4 bench/tokenizer.lua [--dir DIR] [--reps N] [--unicode]
--
-- DIR: a tokenizer directory (default models/all-MiniLM-L6-v2 when `make models` fetched it,
-- else spec/fixtures/tokenizer/uncased, whose small vocabulary makes most words [UNK]).
-- Modes (the same calls on both sides; Hugging Face's in bench/tokenizer.py):
--   ids      every fortune to a list of ids: tok:encode(s) per text / tok(texts) (ids only)
--   batch64  batches of 64 to padded int64 tensors, truncated to 128 tokens
--   (rust    Hugging Face's encode_batch alone, Rust objects without Python lists: printed
--            for reference)
-- --unicode also compares the normalised, pre-tokenised words of every code point (alone and
-- between two letters) with tokenizers' (about 20 s more).
-- The reference needs transformers: .venv/bin/python (sh tools/pyenv.sh) or
-- TIDE_BENCH_HF_PYTHON; without it tide's figures are printed alone.
local tide = require("tide")

local args = { reps = 5 }
do
  local i = 1
  while i <= #arg do
    local a = arg[i]
    if a == "--dir" or a == "--reps" then
      args[a:sub(3)] = arg[i + 1]
      i = i + 2
    elseif a == "--unicode" then
      args.unicode = true
      i = i + 1
    else
      io.stderr:write("tokenizer.lua: unknown argument " .. a .. "\n")
      os.exit(2)
    end
  end
end
local reps = tonumber(args.reps)

local function exists(p)
  local f = io.open(p, "rb")
  if f then
    f:close()
  end
  return f ~= nil
end

local dir = args.dir
if not dir then
  dir = exists("models/all-MiniLM-L6-v2/tokenizer.json") and "models/all-MiniLM-L6-v2"
      or "spec/fixtures/tokenizer/uncased"
end

-- the fortunes, split on lines holding only "%"
local FORTUNES = "/usr/share/games/fortunes"
local texts = {}
do
  local ls = io.popen("ls -1 " .. FORTUNES .. " 2>/dev/null")
  local names = {}
  for name in ls:lines() do
    if not name:match("%.dat$") and not name:match("%.u8$") then
      names[#names + 1] = name
    end
  end
  ls:close()
  table.sort(names)
  for _, name in ipairs(names) do
    local f = io.open(FORTUNES .. "/" .. name, "rb")
    local s = f and f:read("*a")
    if f then
      f:close()
    end
    if s and not s:find("\0", 1, true) then
      local cur = {}
      for line in (s .. "\n"):gmatch("([^\n]*)\n") do
        if line == "%" then
          if #cur > 0 then
            texts[#texts + 1] = table.concat(cur, "\n")
          end
          cur = {}
        else
          cur[#cur + 1] = line
        end
      end
      if #cur > 0 and table.concat(cur) ~= "" then
        texts[#texts + 1] = table.concat(cur, "\n")
      end
    end
  end
end
if #texts == 0 then
  print("tokenizer: no fortunes in " .. FORTUNES .. " (apt-get install fortunes); skipped")
  os.exit(0)
end
local nbytes = 0
for _, s in ipairs(texts) do
  nbytes = nbytes + #s
end

local tok = tide.text.BertTokenizer.from_pretrained(dir)
print(("tokenizer: %s (vocabulary %d) on %d fortunes, %.1f MB, one thread"):format(dir,
  tok.vocab_size, #texts, nbytes / 1e6))

local clock = tide.core.wall_time or os.clock
local function median(v)
  table.sort(v)
  local n = #v
  return n % 2 == 1 and v[(n + 1) / 2] or (v[n / 2] + v[n / 2 + 1]) / 2
end
local function timed(fn)
  local t = {}
  local out
  for r = 1, reps do
    collectgarbage()
    local t0 = clock()
    out = fn()
    t[r] = clock() - t0
  end
  return median(t), out
end

local batches = {}
for i = 1, #texts, 64 do
  local b = {}
  for j = i, math.min(i + 63, #texts) do
    b[#b + 1] = texts[j]
  end
  batches[#batches + 1] = b
end

local function run_tide()
  local t_ids, all = timed(function()
    local out = {}
    for i = 1, #texts do
      out[i] = tok:encode(texts[i])
    end
    return out
  end)
  local t_b64 = timed(function()
    for _, b in ipairs(batches) do
      tok(b, { padding = true, truncation = true, max_length = 128 })
    end
  end)
  return t_ids, t_b64, all
end

-- tide first, then the reference, then tide again: the better of tide's two medians
local t_ids, t_b64, ids = run_tide()

local python = os.getenv("TIDE_BENCH_HF_PYTHON") or ".venv/bin/python"
local ref = {}
local have_ref = exists(python)
local tmp = os.tmpname()
if have_ref then
  local f = assert(io.open(tmp .. ".txt", "wb"))
  f:write(table.concat(texts, "\0"))
  f:close()
  local p = io.popen(("%s bench/tokenizer.py --dir '%s' --corpus %s.txt --ids %s.ids "
    .. "--reps %d 2>&1"):format(python, dir, tmp, tmp, reps))
  local out = p:read("*a")
  p:close()
  for k, v in out:gmatch("result (%w+) ([%d.]+)") do
    ref[k] = tonumber(v)
  end
  ref.tokens = tonumber(out:match("tokens (%d+)"))
  if not ref.ids then
    print("tokenizer: the Hugging Face reference failed:\n" .. out)
    have_ref = false
  end
else
  print(("tokenizer: no reference (%s not found: sh tools/pyenv.sh)"):format(python))
end

do
  local a, b = run_tide()
  t_ids, t_b64 = math.min(t_ids, a), math.min(t_b64, b)
end

local ntok, nreal = 0, 0
for _, v in ipairs(ids) do
  ntok = ntok + #v
  nreal = nreal + math.min(#v, 128)
end

print(("  %-8s %14s %14s %8s"):format("mode", "tide tok/s", "HF tok/s", "ratio"))
local function row(name, n, t, r)
  print(("  %-8s %14.0f %14s %7.2fx"):format(name, n / t, r and ("%.0f"):format(n / r) or "-",
    r and r / t or 0))
end
row("ids", ntok, t_ids, have_ref and ref.ids)
row("batch64", nreal, t_b64, have_ref and ref.batch64)
if have_ref and ref.rust then
  print(("  %-8s %14s %14.0f   (Hugging Face's encode_batch alone, no Python lists)"):format(
    "rust", "-", ntok / ref.rust))
end

local failed = false
if have_ref then
  local mism, shown = 0, 0
  local i = 0
  for line in io.lines(tmp .. ".ids") do
    i = i + 1
    local want = {}
    for x in line:gmatch("%d+") do
      want[#want + 1] = tonumber(x)
    end
    local got = ids[i] or {}
    local same = #got == #want
    for j = 1, #want do
      same = same and got[j] == want[j]
    end
    if not same then
      mism = mism + 1
      if shown < 5 then
        shown = shown + 1
        print(("  mismatch: fortune %d %q"):format(i, texts[i]:sub(1, 60)))
      end
    end
  end
  print(("  ids compared on %d fortunes (%d tokens): %d mismatches"):format(i, ntok, mism))
  failed = mism > 0 or i ~= #texts
  print(("  tide / Hugging Face throughput: ids %.2fx, batch64 %.2fx"):format(ref.ids / t_ids,
    ref.batch64 / t_b64))
end

if have_ref and args.unicode then
  local p = io.popen(("%s bench/tokenizer.py --dir '%s' --unicode %s.uni 2>&1"):format(python,
    dir, tmp))
  p:read("*a")
  p:close()
  local bad, n = 0, 0
  local function utf8char(c)
    if c < 0x80 then
      return string.char(c)
    elseif c < 0x800 then
      return string.char(0xC0 + math.floor(c / 64), 0x80 + c % 64)
    elseif c < 0x10000 then
      return string.char(0xE0 + math.floor(c / 4096), 0x80 + math.floor(c / 64) % 64,
        0x80 + c % 64)
    end
    return string.char(0xF0 + math.floor(c / 262144), 0x80 + math.floor(c / 4096) % 64,
      0x80 + math.floor(c / 64) % 64, 0x80 + c % 64)
  end
  for line in io.lines(tmp .. ".uni") do
    local cp, w1, w2 = line:match("^(%d+)\t([^\t]*)\t([^\t]*)$")
    if cp then
      n = n + 1
      local ch = utf8char(tonumber(cp))
      local g1 = table.concat(tok._wp:pretokenize("a" .. ch .. "b"), " ")
      local g2 = table.concat(tok._wp:pretokenize(ch), " ")
      if g1 ~= w1 or g2 ~= w2 then
        bad = bad + 1
        if bad <= 5 then
          print(("  unicode mismatch: U+%04X: %q vs Hugging Face's %q"):format(tonumber(cp),
            g1, w1))
        end
      end
    end
  end
  print(("  every code point (%d) through the normaliser and pre-tokenizer: %d mismatches"):format(
    n, bad))
  failed = failed or bad > 0 or n < 1000000
  os.remove(tmp .. ".uni")
end
os.remove(tmp)
os.remove(tmp .. ".txt")
os.remove(tmp .. ".ids")
if failed then
  os.exit(1)
end
