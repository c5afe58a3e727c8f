-- tools/fuzz_api.lua — a fuzzer over tide's public Lua API (GitHub issue 27).
--
--   lua5.4 tools/fuzz_api.lua [--seconds N] [--seed S] [--out DIR] [--calls N] [--last FILE]
--                             [--slow SECONDS] [--quiet] [--selftest]
--
-- Calls every function of `tide`, every Tensor method and metamethod, tide.nn.functional,
-- tide.nn.init / utils, the nn modules (constructor, forward, methods), the optimizers and
-- schedulers (step, state_dict, load_state_dict), tide.data and tide.autograd with hostile
-- arguments: tensors of every dtype, 0-d / empty / non-contiguous / expanded views on cpu and
-- cpu:1 (TIDE_CPU_DEVICES=2), with and without requires_grad, special numbers (nan, inf,
-- 2^31, 2^53, math.mininteger, ...), strings, booleans, nil, nested tables, options tables
-- with known and unknown keys. Each call runs under pcall with an instruction-count hook.
-- A finding is
--   error    a message that does not start with `tide:` (after the `file:line: ` prefix)
--   hang     the call ran past the instruction limit (a loop in Lua)
--   slow     the call took longer than --slow seconds of wall time (a loop in C)
--   changed  a tensor argument (or a module's parameter) changed although the call failed
--   mutated  a Tensor method or tide function not in place (no trailing _) that returned
--            changed a tensor argument
--   memory   Lua holds more than 1.5 x the memory limit the fuzzer sets (1 GiB) after a call
--            (Lua's own memory is not under tide's limit: a call built huge tables unchecked)
-- and each is written once per kind (class, call, message shape) to DIR/finding-S-N.lua as a
-- replayable Lua snippet, and to stderr. A crash (ASan/UBSan report, segfault) ends the
-- process: --last FILE holds the snippet of the call being run (rewritten, closed and renamed
-- into place before each call), so tools/fuzz.sh can name the reproducer. Every run is deterministic for its
-- seed (the fuzzer has its own random generator).
-- Exit status 0 when nothing was found, 1 otherwise; the last line is "N passed, N failed"
-- (calls without a finding, findings) for spec/support/suite.sh. --selftest fuzzes three
-- planted faults instead and passes when each is reported (the checks themselves work).
-- FUZZ_DEBUG=1 prints every error raised (where calls stop: to tune the generator).
--
-- The pretrained group calls the tokenizer (tide.text), BERT and SentenceEncoder
-- (tide.models) on the committed fixtures (spec/fixtures), make_grid / save_image and the
-- TensorBoard writer (tide.utils), whose files go under --out. Names left out: what writes
-- files elsewhere or changes the process: save, safetensors_save, set_memory_limit,
-- set_autograd_hook, DistributedDataParallel, tide.distributed; and the internals: names that
-- start with _ (tide._internal's kernels), the engine's part of tide.autograd, base classes
-- (Optimizer, LRScheduler), and classes' helper methods (only the documented ones are called).

local args = { seconds = 60, seed = os.time(), out = "fuzz-out", slow = 10, calls = math.huge }
do
    local argv, i = { ... }, 1
    while i <= #argv do
        local a = argv[i]
        local key = a:match("^%-%-(%w+)$")
        if key == "quiet" then
            args.quiet = true
        elseif key == "selftest" then
            args.selftest = true
        elseif key and args[key] ~= nil then
            local v = argv[i + 1]
            args[key] = (key == "out" or key == "last") and v or tonumber(v)
            i = i + 1
        elseif key == "last" then
            args.last = argv[i + 1]
            i = i + 1
        else
            io.stderr:write("usage: lua5.4 tools/fuzz_api.lua [--seconds N] [--seed S] [--out DIR]"
                .. " [--calls N] [--last FILE] [--slow SECONDS] [--quiet] [--selftest]\n")
            os.exit(2)
        end
        i = i + 1
    end
end

-- ---- the prelude: shared by the fuzzer and every reproducer it prints ----------------------
-- T{seed, shape, dtype, device, requires_grad, view, mode} builds a tensor deterministically
-- (its own generator, not tide's): view is nil (contiguous), "t" (permuted), "expand",
-- "narrow", "select" or "graph" (a non-leaf result of requires_grad); mode "s" mixes in
-- special values (nan, inf, huge, negative zero; extreme integers).
local PRELUDE = [==[
local tide = require("tide")
local nn, F, optim, data = tide.nn, tide.nn.functional, tide.optim, tide.data
local function T(s)
    local x, shape, dtype, dev, rg, view, mode = s[1], s[2], s[3], s[4], s[5], s[6], s[7]
    local base = {}
    for i, d in ipairs(shape) do
        base[i] = d
        if d == 0 and (view == "expand" or view == "narrow") then view = nil end -- stays empty
    end
    local nd = #shape
    if view == "t" then
        for i = 1, nd do base[i] = shape[nd + 1 - i] end
    elseif view == "expand" then
        for i = 1, nd do if (x >> i) & 1 == 1 then base[i] = 1 end end
    elseif view == "narrow" then
        base[1] = base[1] + 2
    elseif view == "select" then
        table.insert(base, 1, 2)
    end
    local n = 1
    for _, d in ipairs(base) do n = n * d end
    local function nxt()
        x = x * 6364136223846793005 + 1442695040888963407
        return (x >> 33) % 1000
    end
    local float = dtype:match("^float") or dtype == "bfloat16"
    local sp = { 0 / 0, 1 / 0, -1 / 0, 1e30, -1e30, 1e-40, -0.0, 70000.0, 3.5e38, 0.0 }
    local ip = { 0, -1, 2147483647, -2147483648, 1 << 62, math.mininteger, 255, 256, 2 ^ 31 | 0 }
    local v = {}
    for i = 1, n do
        local r = nxt()
        if dtype == "bool" then
            v[i] = r % 2 == 0
        elseif float then
            v[i] = (mode == "s" and r % 6 == 0) and sp[r % #sp + 1] or (r - 500) / 150
        else
            v[i] = (mode == "s" and r % 6 == 0) and ip[r % #ip + 1] or r % 7 - 1
        end
    end
    local t
    if n == 0 then
        t = tide.zeros(base, { dtype = dtype })
    elseif nd == 0 and view ~= "select" then
        t = tide.tensor(v[1], { dtype = dtype == "bool" and "bool" or float and "float64" or "int64" })
    else
        t = tide.tensor(v, { dtype = dtype == "bool" and "bool" or float and "float64" or "int64" })
            :view(base)
    end
    t = t:to(dtype):to(dev)
    if rg then t:requires_grad_(true) end
    if view == "t" then
        local p = {}
        for i = 1, nd do p[i] = nd + 1 - i end
        t = t:permute(p)
    elseif view == "expand" then
        t = t:expand(shape)
    elseif view == "narrow" then
        t = t:narrow(1, 2, shape[1])
    elseif view == "select" then
        t = t:select(1, 2)
    elseif view == "graph" then
        t = t * 2
    end
    return t
end
-- the pretrained models, tokenizer and writer of the "pretrained" targets: small committed
-- fixtures, each loaded once (FIX.tok(), FIX.bert("cls"), FIX.enc(), FIX.writer(dir))
local FIX = setmetatable({}, { __index = function(fix, k)
    local cache = {}
    local make = {
        tok = function(name)
            return tide.text.BertTokenizer.from_pretrained("spec/fixtures/tokenizer/" .. (name or "uncased"))
        end,
        bert = function(name)
            local classes = { base = "BertModel", cls = "BertForSequenceClassification",
                reg = "BertForSequenceClassification", mlm = "BertForMaskedLM" }
            name = name or "base"
            return tide.models.bert[classes[name]].from_pretrained("spec/fixtures/bert/" .. name)
        end,
        enc = function()
            return tide.models.SentenceEncoder.from_pretrained("spec/fixtures/sentence_encoder")
        end,
        writer = function(dir)
            return require("tide.utils.tensorboard").SummaryWriter(dir)
        end,
    }
    local f = function(name)
        local key = tostring(name)
        if cache[key] == nil then cache[key] = make[k](name) end
        return cache[key]
    end
    rawset(fix, k, f)
    return f
end })
]==]

-- ---- the fuzzer's own random generator (deterministic for a seed) --------------------------
local state = (math.tointeger(args.seed) or 1) * 2654435761 + 12345
local function rnd(n) -- 1..n
    state = state * 6364136223846793005 + 1442695040888963407
    return ((state >> 33) % n) + 1
end
local function chance(p)
    return rnd(1000) <= p * 1000
end
local function pick(list)
    return list[rnd(#list)]
end
local function wpick(pairs_) -- {{weight, value}, ...}
    local total = 0
    for _, p in ipairs(pairs_) do total = total + p[1] end
    local r = rnd(total)
    for _, p in ipairs(pairs_) do
        r = r - p[1]
        if r <= 0 then return p[2] end
    end
end

-- ---- hostile values, as Lua source -------------------------------------------------------------
local DTYPES = { "float32", "float32", "float32", "float64", "float16", "bfloat16", "int32", "int64",
    "int64", "uint8", "bool" }
local FLOATS = { "float32", "float64", "float16", "bfloat16" }
local NUMBERS = { "0", "-1", "1", "2", "3", "2147483647", "2147483648", "2^53", "math.maxinteger",
    "math.mininteger", "1/0", "-1/0", "0/0", "0.5", "1e308", "-2", "1.0", "-0.0", "4", "65536",
    "-2147483649", "2.5", "1e-12", "-0.5" }
local SMALL = { "1", "2", "3", "-1", "0", "1", "2", "4" }
local STRINGS = { '"float32"', '"int64"', '"bool"', '"float16"', '"uint8"', '"cpu"', '"cpu:1"',
    '"cpu:2"', '"cuda"', '"cuda:7"', '"sum"', '"mean"', '"none"', '""', '"x"', '"relu"',
    '"gelu"', '"tanh"', '"ij,jk->ik"', '"i,i->"', '"...ij->ji"', '"\\0"', '("a"):rep(300)', '"/"',
    '"/nonexistent/x"', '"max"', '"fro"', '"inf"', '"constant"', '"reflect"', '"replicate"',
    '"circular"', '"linear"', '"fan_in"', '"leaky_relu"', '"min"', '"triangular"', '"cos"',
    '"%s%d"', '"1"', '"-1"' }
-- texts for the tokenizer: accents, CJK, emoji, controls, invalid UTF-8 (cut, overlong,
-- surrogates), special tokens, a word past max_input_chars_per_word, many words
local TEXTS = { '"hello world"', '"Héllo, WÖRLD!"', '"\\xff\\xfe"', '"\\xe4\\xb8"', '"中文字 and 日本"',
    '"a\\0b"', '"[CLS] x [SEP] [MASK] [PAD] [UNK]"', '("x"):rep(150)', '("word "):rep(200)',
    '"e\\u{301}\\u{301}"', '"\\t\\n\\r\\v"', '"\\u{1F600}!"', '"can\'t"', '""', '"   "',
    '"\\u{FEFF}x\\u{200B}y"', '"\\u{10FFFF}"', '"\\xed\\xa0\\x80"', '"\\xc0\\xaf"', '"Ⅻ ﬁ ǅ ß"',
    '"##a ##"', '"\\u{E9}t\\u{E9}"', '"1,000.5%"', '"\\x7f\\u{85}\\u{A0}"' }

local KEYS = { "dim", "keepdim", "dtype", "device", "requires_grad", "copy", "non_blocking",
    "reduction", "weight", "bias", "ignore_index", "label_smoothing", "lr", "momentum",
    "weight_decay", "betas", "eps", "nesterov", "dampening", "amsgrad", "maximize", "alpha",
    "centered", "lr_decay", "initial_accumulator_value", "batch_size", "shuffle", "drop_last",
    "collate_fn", "sampler", "seed", "replacement", "num_layers", "batch_first", "dropout",
    "bidirectional", "stride", "padding", "dilation", "groups", "kernel_size", "ceil_mode",
    "count_include_pad", "p", "training", "inplace", "negative_slope", "min_val", "max_val",
    "beta", "threshold", "attn_mask", "is_causal", "dropout_p", "key_padding_mask",
    "need_weights", "dim_feedforward", "activation", "norm_first", "affine",
    "track_running_stats", "elementwise_affine", "padding_idx", "max_norm", "mode", "value",
    "unbiased", "descending", "largest", "sorted", "step_size", "gamma", "milestones", "T_max",
    "eta_min", "total_iters", "start_factor", "end_factor", "max_lr", "total_steps",
    "lr_lambda", "last_epoch", "num_replicas", "rank", "devices", "log_target", "delta",
    "pos_weight", "scale", "nonlinearity", "proj_size", "norm_type", "mean", "std", "a", "b",
    "gain", "correction", "create_graph", "retain_graph", "allow_unused", "grad_outputs",
    "strict", "padding_value", "enforce_sorted", "total_length", "kdim", "vdim",
    "add_bias_kv", "add_zero_attn", "nhead", "d_model", "epochs", "steps_per_epoch",
    "anneal_strategy", "three_phase", "cycle_momentum", "base_momentum", "max_momentum",
    "min_lr", "threshold_mode", "cooldown", "patience", "factor", "T_0", "T_mult",
    "memory_format", "layer_norm_eps", "average_attn_weights", "mask", "out",
    "require_grad", "bogus_key", "Dim", "" }

-- plausible options for the tame calls: key -> values
local COMMON_KEYS = {
    dim = { "1", "2", "-1" }, keepdim = { "true", "false" }, dtype = { '"float64"', '"int64"' },
    device = { '"cpu"', '"cpu:1"' }, requires_grad = { "true", "false" },
    reduction = { '"mean"', '"sum"', '"none"' }, bias = { "true", "false" },
    batch_first = { "true", "false" }, p = { "0", "0.5", "1" }, lr = { "0.1", "0" },
    momentum = { "0", "0.9" }, weight_decay = { "0", "0.01" }, batch_size = { "1", "2", "3" },
    shuffle = { "true", "false" }, drop_last = { "true", "false" }, stride = { "1", "2" },
    padding = { "0", "1" }, num_layers = { "1", "2" }, bidirectional = { "true", "false" },
    unbiased = { "true", "false" }, descending = { "true", "false" }, value = { "0", "1.5" },
}
do
    local names = {}
    for k in pairs(COMMON_KEYS) do names[#names + 1] = k end
    table.sort(names)
    for i, k in ipairs(names) do COMMON_KEYS[i] = k end
end

local gen -- forward
local run_pretrained -- forward

-- a tensor's source: shapes come from the call's shape pool most of the time, so binary ops
-- get past their shape checks and into the kernels
local function shape_src(dims)
    local t = {}
    for i, d in ipairs(dims) do t[i] = tostring(d) end
    return "{" .. table.concat(t, ", ") .. "}"
end
local function random_shape()
    if chance(0.02) then -- empty, with a size whose products overflow 32 bits (or 64 together)
        return pick { { 0, 1 << 32 }, { 1 << 31, 0, 3 }, { 1 << 32, 1 << 32, 0 }, { 0, 0 } }
    end
    local nd = wpick { { 10, 0 }, { 25, 1 }, { 35, 2 }, { 20, 3 }, { 10, 4 } }
    local dims, n = {}, 1
    for i = 1, nd do
        local d = wpick { { 6, 1 }, { 10, 2 }, { 10, 3 }, { 6, 4 }, { 3, 5 }, { 2, 0 }, { 2, 8 },
            { 1, 16 }, { 1, 64 } }
        if n * math.max(d, 1) > 4096 then d = 1 end
        dims[i] = d
        n = n * math.max(d, 1)
    end
    return dims
end

local complex_src -- a complex tensor's source (below tensor_src, which it uses)
local function tensor_src(ctx, opts)
    opts = opts or {}
    local dims
    if ctx.shapes and chance(ctx.tame and 0.9 or 0.65) then
        dims = pick(ctx.shapes)
    else
        dims = random_shape()
    end
    local dtype = opts.dtype or ((opts.float or (ctx.tame and chance(0.7))) and pick(FLOATS))
        or pick(DTYPES)
    local isfloat = dtype:match("^float") or dtype == "bfloat16"
    local dev = chance(0.2) and "cpu:1" or "cpu"
    local rg = isfloat and (opts.rg or chance(0.2)) and not opts.norg
    local view = nil
    local nd = #dims
    local r = rnd(10)
    if r == 1 and nd >= 2 then
        view = "t"
    elseif r == 2 and nd >= 1 then
        view = "expand"
    elseif r == 3 and nd >= 1 then
        view = "narrow"
    elseif r == 4 then
        view = "select"
    elseif r == 5 and rg then
        view = "graph"
    end
    local mode = chance(0.25) and "s" or "n"
    return ("T{%d, %s, %q, %q, %s, %s, %q}"):format(rnd(1000000), shape_src(dims), dtype, dev,
        tostring(rg and true or false), view and ("%q"):format(view) or "nil", mode)
end

-- a complex tensor: from parts, a factory with a complex dtype, a view of a [..., 2] pair, a
-- real tensor converted, or an fft
complex_src = function(ctx)
    local r = rnd(5)
    if r == 1 then
        return "tide.complex(tide.randn(3), tide.randn(3))"
    elseif r == 2 then
        return pick { "tide.zeros(2, 3, {dtype = tide.cfloat})",
            "tide.randn(4, {dtype = tide.cdouble})", "tide.ones({2, 2}, {dtype = \"complex64\"})" }
    elseif r == 3 then
        return "tide.view_as_complex(tide.randn(2, 3, 2))"
    elseif r == 4 then
        return "(" .. tensor_src(ctx) .. "):to(tide.cfloat)"
    end
    return "tide.fft.fft(tide.randn(" .. pick { "5", "8", "2, 6" } .. "))"
end

local function list_src(ctx, depth, elem)
    local n = wpick { { 2, 0 }, { 5, 1 }, { 6, 2 }, { 4, 3 }, { 1, 5 } }
    local t = {}
    for i = 1, n do t[i] = elem(ctx, depth) end
    return "{" .. table.concat(t, ", ") .. "}"
end

-- a key's source in a table constructor: ["end"] for a Lua keyword (arange's end) or a name
-- that is no identifier
local LUA_KEYWORDS = {}
for w in ("and break do else elseif end false for function goto if in local nil not or " ..
    "repeat return then true until while"):gmatch("%a+") do
    LUA_KEYWORDS[w] = true
end
local function key_src(k)
    return (k:match("^[%a_][%w_]*$") and not LUA_KEYWORDS[k]) and k or ("[%q]"):format(k)
end

local function options_src(ctx, depth)
    local n = rnd(3)
    local t = {}
    for _ = 1, n do
        local k = pick(ctx.keys and chance(0.5) and ctx.keys or KEYS)
        local key = key_src(k)
        t[#t + 1] = key .. " = " .. gen(ctx, depth + 1)
    end
    if chance(0.1) then t[#t + 1] = "[1] = " .. gen(ctx, depth + 1) end
    return "{" .. table.concat(t, ", ") .. "}"
end

-- one hostile value's source; depth bounds nesting
gen = function(ctx, depth)
    depth = depth or 0
    if ctx.tame then
        -- plausible arguments (dims, small sizes, tensors of the call's shapes, a dtype, a
        -- flag): calls get past the argument checks into the kernels
        local kind = wpick { { 40, "tensor" }, { 40, "small" }, { 5, "bool" }, { 4, "nil" },
            { depth < 1 and 8 or 0, "shape" }, { 3, "dtype" }, { depth < 1 and 6 or 0, "options" } }
        if kind == "tensor" then
            return tensor_src(ctx)
        elseif kind == "small" then
            return pick(SMALL)
        elseif kind == "bool" then
            return pick { "true", "false" }
        elseif kind == "nil" then
            return "nil"
        elseif kind == "shape" then
            return list_src(ctx, depth, function() return pick(SMALL) end)
        elseif kind == "options" then -- keys many calls take, values they may accept
            local t = {}
            for _ = 1, rnd(2) do
                local k = pick(ctx.keys and chance(0.6) and ctx.keys or COMMON_KEYS)
                t[#t + 1] = key_src(k) .. " = " .. (COMMON_KEYS[k] and pick(COMMON_KEYS[k]) or pick(SMALL))
            end
            return "{" .. table.concat(t, ", ") .. "}"
        else
            return pick { '"float32"', '"float64"', '"int64"', '"bool"' }
        end
    end
    local kind = wpick {
        { 34, "tensor" }, { 14, "small" }, { 10, "number" }, { 6, "string" }, { 3, "bool" },
        { 3, "nil" }, { depth < 2 and 8 or 0, "shape" }, { depth < 2 and 6 or 0, "options" },
        { depth < 2 and 4 or 0, "tlist" }, { depth < 1 and 2 or 0, "nested" },
        { 1, "function" }, { 1, "device" }, { 1, "module" }, { 1, "empty" }, { 1, "sparse" },
        { 2, "complex" },
    }
    if kind == "tensor" then
        return tensor_src(ctx)
    elseif kind == "small" then
        return pick(SMALL)
    elseif kind == "number" then
        return pick(NUMBERS)
    elseif kind == "string" then
        return pick(STRINGS)
    elseif kind == "bool" then
        return pick { "true", "false" }
    elseif kind == "nil" then
        return "nil"
    elseif kind == "shape" then
        return list_src(ctx, depth, function() return chance(0.8) and pick(SMALL) or pick(NUMBERS) end)
    elseif kind == "options" then
        return options_src(ctx, depth)
    elseif kind == "tlist" then
        return list_src(ctx, depth, function() return tensor_src(ctx) end)
    elseif kind == "nested" then
        return list_src(ctx, depth, function(c, d) return gen(c, d + 1) end)
    elseif kind == "function" then
        return pick { "function(...) return ... end", "function() return 0.5 end",
            "function(x) return x end", "function() end" }
    elseif kind == "device" then
        return pick { 'tide.device("cpu:1")', 'tide.device("cpu")' }
    elseif kind == "module" then
        return pick { "nn.Linear(3, 3)", "nn.ReLU()", "nn.Conv2d(1, 2, 3)", "nn.Sequential()" }
    elseif kind == "complex" then -- a complex tensor (a Lua class over a real [..., 2] pair)
        return complex_src(ctx)
    elseif kind == "sparse" then -- a COO tensor (a Lua table that is no dense tensor)
        return pick { "tide.sparse_coo_tensor({{1, 2, 1}, {3, 1, 3}}, {1.5, -2, 0.5}, {2, 4})",
            "(" .. tensor_src(ctx) .. "):to_sparse()" }
    else
        return "{}"
    end
end

-- n arguments, the first one a tensor when self_tensor
local function args_src(ctx, first_tensor)
    local n = ctx.tame and wpick { { 4, 0 }, { 8, 1 }, { 6, 2 }, { 2, 3 } }
        or wpick { { 2, 0 }, { 8, 1 }, { 10, 2 }, { 7, 3 }, { 3, 4 }, { 1, 5 } }
    local a = {}
    for i = 1, n do
        a[i] = (i == 1 and first_tensor) and tensor_src(ctx) or gen(ctx, 0)
    end
    return a
end

-- ---- the surface ----------------------------------------------------------------------------
local prelude_fn = assert(load(PRELUDE .. "\nreturn tide, T, FIX", "=prelude"))
local tide, T, FIX = prelude_fn()
local nn = tide.nn

local SKIP = {
    -- write files or change the whole process
    save = true, safetensors_save = true, set_memory_limit = true, set_autograd_hook = true,
    DistributedDataParallel = true, raise = true,
}

local targets = {} -- {group, name, src (callee), kind}
local function add(group, name, callee, kind)
    targets[#targets + 1] = { group = group, name = name, callee = callee, kind = kind or "fn" }
end
local function sorted_keys(t)
    local r = {}
    for k in pairs(t) do
        if type(k) == "string" then r[#r + 1] = k end
    end
    table.sort(r)
    return r
end
local function public(k)
    return not k:match("^_") and not SKIP[k]
end

for _, k in ipairs(sorted_keys(tide)) do
    -- PyTorch's _foreach_* ops are public under their underscore names
    if type(tide[k]) == "function" and (public(k) or k:match("^_foreach_")) then
        add("tide", "tide." .. k, "tide." .. k)
    end
end
for _, k in ipairs(sorted_keys(tide.cuda)) do
    if type(tide.cuda[k]) == "function" then add("tide", "tide.cuda." .. k, "tide.cuda." .. k) end
end
for _, k in ipairs(sorted_keys(tide.Tensor)) do
    if type(tide.Tensor[k]) == "function" and public(k) then
        add("method", "Tensor:" .. k, k, "method")
    end
end
-- a complex tensor's methods (lua/tide/complex/tensor.lua), each on a complex receiver
for _, k in ipairs(sorted_keys(require("tide.complex.tensor").methods)) do
    if public(k) then add("complex", "Complex:" .. k, k, "cmethod") end
end
for _, op in ipairs { "+", "-", "*", "/", "%", "^", "//", "&", "|", "~", "<<", ">>" } do
    add("meta", "a " .. op .. " b", op, "binop")
end
for _, op in ipairs { "unm", "bnot", "len", "tostring", "index", "newindex", "close" } do
    add("meta", op, op, "meta")
end
for _, k in ipairs(sorted_keys(nn.functional)) do
    if public(k) then add("F", "F." .. k, "F." .. k) end
end
for _, k in ipairs(sorted_keys(nn.init)) do
    if public(k) then add("init", "nn.init." .. k, "nn.init." .. k) end
end
for _, k in ipairs(sorted_keys(nn.utils)) do
    if type(nn.utils[k]) == "function" and public(k) then
        add("init", "nn.utils." .. k, "nn.utils." .. k)
    end
end
for _, ns in ipairs({ "rnn", "parametrize", "parametrizations", "stateless", "prune" }) do
    for _, k in ipairs(sorted_keys(nn.utils[ns] or {})) do
        if type(nn.utils[ns][k]) == "function" and public(k) then
            add("init", "nn.utils." .. ns .. "." .. k, "nn.utils." .. ns .. "." .. k)
        end
    end
end
-- the namespaces of PyTorch's names: tide.special's functions, tide.autograd.functional's,
-- tide.utils.checkpoint, the distributions' constructors and kl_divergence
-- (the sub-namespaces of distributions: transforms, constraints, constraint_registry, are
-- walked for their own callables, not called themselves)
local function callable(v)
    return type(v) == "function" or (getmetatable(v) or {}).__call ~= nil
end
local function add_namespace(ns)
    local t = tide
    for part in ns:gmatch("[^.]+") do
        t = t[part]
    end
    local lazy = (getmetatable(t) or {}).__lazy or {}
    local keys = sorted_keys(t)
    for _, k in ipairs(sorted_keys(lazy)) do -- every class, loaded or not
        if rawget(t, k) == nil then
            keys[#keys + 1] = k
        end
    end
    for _, k in ipairs(keys) do
        local v = t[k]
        if public(k) and callable(v) then
            add("tide", "tide." .. ns .. "." .. k, "tide." .. ns .. "." .. k)
        elseif public(k) and type(v) == "table" and ns == "distributions" then
            add_namespace(ns .. "." .. k)
        end
    end
end
for _, ns in ipairs({ "special", "autograd.functional", "distributions", "fft" }) do
    add_namespace(ns)
end
add("tide", "tide.utils.checkpoint", "tide.utils.checkpoint")
-- tide.autograd's documented functions; the rest of the table (hook, get_grad, set_grad,
-- register_grad_ready_hook, queue_callback, has_formula, raise) is the engine's, for nn/optim
local AUTOGRAD_PUBLIC = { grad = true, backward = true, no_grad = true, enable_grad = true,
    is_grad_enabled = true, set_grad_enabled = true, is_tensor = true }
for _, k in ipairs(sorted_keys(tide.autograd)) do
    if type(tide.autograd[k]) == "function" and AUTOGRAD_PUBLIC[k] then
        add("autograd", "tide.autograd." .. k, "tide.autograd." .. k)
    end
end
add("autograd", "backward chain", "backward", "backward")
for _, k in ipairs(sorted_keys(nn)) do
    if type(nn[k]) == "table" and k:match("^%u") and public(k) then
        add("module", "nn." .. k, "nn." .. k, "module")
    end
end
for _, k in ipairs(sorted_keys(tide.optim)) do
    if type(tide.optim[k]) == "table" and k:match("^%u") and k ~= "Optimizer" then
        add("optim", "optim." .. k, "optim." .. k, "optim")
    end
end
for _, k in ipairs(sorted_keys(tide.optim.lr_scheduler)) do
    if type(tide.optim.lr_scheduler[k]) == "table" and public(k) and k ~= "LRScheduler" then
        add("optim", "lr_scheduler." .. k, "optim.lr_scheduler." .. k, "sched")
    end
end
-- tide.optim.swa_utils: SWALR as a scheduler, AveragedModel of a small model with a BatchNorm
-- (random options after it), update_bn with random arguments and with a list of batches
add("optim", "swa_utils.SWALR", "optim.swa_utils.SWALR", "sched")
add("optim", "swa_utils.AveragedModel", "(function(...) return optim.swa_utils.AveragedModel(" ..
    "nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2)), ...) end)", "module")
add("optim", "swa_utils.update_bn", "optim.swa_utils.update_bn")
add("optim", "swa_utils.update_bn batches", "(function(a, ...) return optim.swa_utils.update_bn(" ..
    "{a}, nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2)), ...) end)")
for _, k in ipairs(sorted_keys(tide.data)) do
    if public(k) then
        local v = tide.data[k]
        add("data", "data." .. k, "data." .. k, type(v) == "table" and "object" or "fn")
    end
end
add("data", "DataLoader iteration", "data.DataLoader", "loader")
-- the pretrained models, the tokenizer, make_grid/save_image and the TensorBoard writer, on the
-- committed fixtures (PRELUDE's FIX); whatever they write goes under --out
for _, m in ipairs { "encode", "decode", "tokenize", "token_to_id", "id_to_token", "__call" } do
    add("pretrained", "BertTokenizer:" .. m, m, "tokenizer")
end
add("pretrained", "tide.text.BertTokenizer.from_pretrained", "tide.text.BertTokenizer.from_pretrained",
    "from_pretrained")
for _, m in ipairs { "BertModel", "BertForSequenceClassification", "BertForMaskedLM" } do
    add("pretrained", "bert." .. m .. ".from_pretrained", "tide.models.bert." .. m .. ".from_pretrained",
        "from_pretrained")
    add("pretrained", "bert." .. m, "tide.models.bert." .. m, "bert_new")
end
add("pretrained", "bert.BertConfig", "tide.models.bert.BertConfig", "bert_new")
add("pretrained", "bert forward", "forward", "bert")
add("pretrained", "SentenceEncoder.from_pretrained", "tide.models.SentenceEncoder.from_pretrained",
    "from_pretrained")
add("pretrained", "SentenceEncoder:encode", "encode", "encoder")
add("pretrained", "tide.utils.make_grid", "tide.utils.make_grid", "image")
add("pretrained", "tide.utils.save_image", "tide.utils.save_image", "image")
for _, m in ipairs { "add_scalar", "add_scalars", "add_histogram", "add_image", "add_images",
    "add_text", "add_hparams", "add_embedding", "flush", "close" } do
    add("pretrained", "SummaryWriter:" .. m, m, "writer")
end

-- --selftest: three planted faults the fuzzer must report (a message without `tide:`, a failed
-- call that changes its tensor, a call not in place that changes its argument), nothing else
local SELFTEST = {
    plain_error = function(x) error("not a tide error") end,
    changes_then_fails = function(x) x:fill_(7) error("tide: changes_then_fails: planted") end,
    mutates = function(x) if require("tide").is_tensor(x) then x:fill_(7) end return x end,
}
if args.selftest then
    targets = {}
    for _, k in ipairs { "plain_error", "changes_then_fails", "mutates" } do
        add("tide", "SELFTEST." .. k, "SELFTEST." .. k)
    end
end

local by_group = {}
for _, t in ipairs(targets) do
    by_group[t.group] = by_group[t.group] or {}
    table.insert(by_group[t.group], t)
end
local GROUP_WEIGHTS = { { 30, "method" }, { 22, "tide" }, { 10, "F" }, { 12, "module" }, { 4, "complex" },
    { 8, "optim" }, { 6, "data" }, { 5, "meta" }, { 4, "init" }, { 3, "autograd" },
    { 6, "pretrained" } }

-- ---- running one step ---------------------------------------------------------------------------
local env = setmetatable({ T = T, FIX = FIX, tide = tide, nn = nn, F = nn.functional, optim = tide.optim,
    data = tide.data }, { __index = _G })

local INSTR_STEP, INSTR_LIMIT = 1000000, 200
local HANG = "fuzz: instruction limit reached (a loop that does not end?)"
local hung, ticks = false, 0
local function hook()
    ticks = ticks + 1
    if ticks >= INSTR_LIMIT then
        hung = true
        error(HANG, 0)
    end
end

local MEMORY_LIMIT = 1 << 30
tide.set_memory_limit(MEMORY_LIMIT)
local function reset_globals()
    pcall(tide.set_default_device, "cpu")
    pcall(tide.set_grad_enabled, true)
    pcall(tide.transfer_guard, "allow")
    pcall(tide.trace_transfers, false)
    tide.set_memory_limit(MEMORY_LIMIT)
end

-- a tensor's state: identity of shape, dtype, device, requires_grad and every value (of a
-- large tensor, a digest: its values as Lua numbers would outweigh what is fuzzed)
local function flat(t)
    local ok, v = pcall(function()
        local c = t:detach():to("cpu"):contiguous()
        local vals
        if c:numel() > 65536 then
            local d = c:to("float64"):reshape(-1)
            -- (arange(n): n weights; arange(1, n) was one short, so mul raised and every large
            -- tensor compared as "?")
            local w = tide.arange(d:numel(), { dtype = "float64" }):remainder(97)
            local e = d:nan_to_num({ nan = 7, posinf = 8, neginf = 9 })
            vals = { e:sum():item(), (e * w):sum():item(), d:isnan():sum():item() }
        else
            vals = c:reshape(-1):totable()
        end
        return { shape = table.concat(t.shape, "x"), dtype = t.dtype, dev = tostring(t.device),
            rg = t.requires_grad, vals = vals }
    end)
    return ok and v or nil
end
local function same(a, b)
    if a.shape ~= b.shape or a.dtype ~= b.dtype or a.dev ~= b.dev or a.rg ~= b.rg then
        return false, ("shape/dtype/device/requires_grad %s %s %s %s -> %s %s %s %s"):format(
            a.shape, a.dtype, a.dev, a.rg, b.shape, b.dtype, b.dev, b.rg)
    end
    for i = 1, #a.vals do
        local x, y = a.vals[i], b.vals[i]
        if x ~= y and not (x ~= x and y ~= y) then
            return false, ("element %d: %s -> %s"):format(i, tostring(x), tostring(y))
        end
    end
    return true
end

-- an object's state (a module's, optimizer's or scheduler's state_dict) as one string: tensors
-- by their values, tables by sorted keys; nil when it has none or state_dict fails
local function state_of(obj)
    if type(obj) ~= "table" or type(obj.state_dict) ~= "function" then return nil end
    local ok, sd = pcall(obj.state_dict, obj)
    if not ok then return nil end
    local parts, seen_ = {}, {}
    local function walk(v, depth)
        if tide.is_tensor(v) then
            local f = flat(v)
            parts[#parts + 1] = f and (f.shape .. f.dtype .. f.dev .. ":" ..
                table.concat((function()
                    local t = {}
                    for i, x in ipairs(f.vals) do t[i] = x ~= x and "nan" or tostring(x) end
                    return t
                end)(), ",")) or "?"
        elseif type(v) == "table" and depth < 8 and not seen_[v] then
            seen_[v] = true
            local keys = {}
            for k in pairs(v) do keys[#keys + 1] = k end
            table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
            parts[#parts + 1] = "{"
            for _, k in ipairs(keys) do
                parts[#parts + 1] = tostring(k) .. "="
                walk(v[k], depth + 1)
            end
            parts[#parts + 1] = "}"
        elseif type(v) == "number" then
            parts[#parts + 1] = v ~= v and "nan" or ("%.17g"):format(v)
        elseif type(v) ~= "function" then
            parts[#parts + 1] = tostring(v)
        end
    end
    walk(sd, 0)
    return table.concat(parts, " ")
end

local function watched()
    local list = {}
    for _, name in ipairs(env.__vars or {}) do
        local v = rawget(env, name)
        if tide.is_tensor(v) then
            list[#list + 1] = { name, v }
        elseif type(v) == "table" and type(v.parameters) == "function" and name == "M" then
            local ok, ps = pcall(v.parameters, v)
            if ok and type(ps) == "table" then
                for i, p in ipairs(ps) do
                    if tide.is_tensor(p) then list[#list + 1] = { name .. ":parameters()[" .. i .. "]", p } end
                end
            end
        end
    end
    return list
end

local findings, seen, nfind, ncalls, nclean, nfailed = {}, {}, 0, 0, 0, 0
local nsucceeded = 0 -- calls that returned (the rest raised)
os.execute(("mkdir -p %q"):format(args.out))
local last_file = args.last

-- a scenario as a script: the prelude, the earlier steps each under pcall (a step that raised a
-- tide: error did not stop the fuzzer either), then the step of the finding as it is
-- the profiler's options while one records (windows of calls run under tide.profiler, so its
-- timed closures meet every input too), written into a reproducer; nil while none records
local profiling = nil
local function reproducer(chunks)
    local parts = { PRELUDE }
    if profiling then
        parts[#parts + 1] = "tide.profiler.profile(" .. profiling .. "):start()"
    end
    for i = 1, #chunks - 1 do
        parts[#parts + 1] = "pcall(function()\n" .. chunks[i] .. "\nend)"
    end
    parts[#parts + 1] = chunks[#chunks]
    return table.concat(parts, "\n") .. "\n"
end

local function report(class, target, msg, chunks)
    local shape = tostring(msg):gsub("^[^\n]-:%d+: ", ""):gsub("%-?%d[%d%.e+-]*", "N"):sub(1, 120)
    local key = class .. "|" .. target .. "|" .. shape
    findings[#findings + 1] = key
    if seen[key] then
        seen[key] = seen[key] + 1
        return
    end
    seen[key] = 1
    nfind = nfind + 1
    local repro = reproducer(chunks)
    local path = ("%s/finding-%d-%d.lua"):format(args.out, math.tointeger(args.seed) or 0, nfind)
    local f = io.open(path, "w")
    local head = ("-- fuzz finding (%s) in %s, seed %s, call %d\n-- %s\n"):format(class, target,
        tostring(args.seed), ncalls, (tostring(msg):gsub("\n", "\n-- ")))
    if f then
        f:write(head, repro)
        f:close()
    end
    io.stderr:write(("FINDING %s %s: %s\n  reproducer: %s\n"):format(class, target,
        tostring(msg):sub(1, 300), path))
end

local function write_last(chunks, target)
    if not last_file then return end
    -- written aside, then renamed over: a crash while writing leaves the previous call's file
    local f = io.open(last_file .. ".tmp", "w")
    if f then
        f:write(("-- last call: %s (seed %s, call %d)\n"):format(target, tostring(args.seed), ncalls),
            reproducer(chunks))
        f:close()
        os.rename(last_file .. ".tmp", last_file)
    end
end

-- runs one chunk of source (statements assigning globals of env, ending in the call);
-- returns ok, results...; records findings. chunks: the scenario so far (for reproducers)
local DEBUG = os.getenv("FUZZ_DEBUG") == "1"
local PURE_GROUP = { method = true, tide = true, meta = false }
local MUTATES = {}
-- (Torch7's apply, map and map2 write into the tensor, their names notwithstanding)
for name in ([[Tensor:free Tensor:backward Tensor:register_hook Tensor:retain_grad Tensor:set_
    Tensor:copy_ tide.manual_seed tide.set_rng_state newindex close Tensor:apply Tensor:map
    Tensor:map2]]):gmatch("%S+") do
    MUTATES[name] = true
end
local target_group -- the group of the target being run

-- runs one piece of source under pcall and the hook; records what it finds; returns ok, res
local function run_src(target, src, chunks, before)
    local fn, cerr = load(src, "=fuzz", "t", env)
    if not fn then
        io.stderr:write("fuzz: internal error, bad source: " .. cerr .. "\n" .. src .. "\n")
        os.exit(3)
    end
    hung, ticks = false, 0
    local t0 = tide.wall_time()
    debug.sethook(hook, "", INSTR_STEP)
    local res = table.pack(pcall(fn))
    debug.sethook()
    local dt = tide.wall_time() - t0
    reset_globals()
    local ok, err = res[1], res[2]
    local found = false
    if DEBUG and not ok then -- FUZZ_DEBUG=1: every error, to see where calls stop
        io.stderr:write("raised: ", target, ": ", tostring(err):sub(1, 160), "\n")
    end
    if hung then
        report("hang", target, HANG, chunks)
        found = true
    elseif not ok then
        local m = type(err) == "string" and err:gsub("^[^\n]-:%d+: ", "", 1) or nil
        if not (m and m:match("^tide:")) then
            report("error", target, type(err) == "string" and err or ("error object of type "
                .. type(err) .. ": " .. tostring(err)), chunks)
            found = true
        end
    end
    if dt > args.slow then
        report("slow", target, ("took %.1f s"):format(dt), chunks)
        found = true
    end
    -- Lua's memory is not under tide's limit: a call that built more than the budget the
    -- fuzzer sets (MEMORY_LIMIT) in Lua values did not check it
    if collectgarbage("count") > MEMORY_LIMIT / 1024 * 1.5 then
        collectgarbage()
        if collectgarbage("count") > MEMORY_LIMIT / 1024 * 1.5 then
            report("memory", target, ("Lua holds %.0f MB after the call, over 1.5 x the %d MB "
                .. "memory limit"):format(collectgarbage("count") / 1024, MEMORY_LIMIT >> 20), chunks)
            found = true
            for _, k in ipairs(env.__vars) do rawset(env, k, nil) end
            for _, k in ipairs { "R", "x", "y", "M", "S", "D" } do rawset(env, k, nil) end
            collectgarbage()
        end
    end
    -- a failed call changes nothing; a call that is not in place (no trailing _) changes none
    -- of its tensor arguments either (pure: Tensor methods, tide.*, the metamethods)
    local pure = PURE_GROUP[target_group] and not target:match("_$") and not MUTATES[target]
        and not src:match("inplace")
    if not ok and not hung then
        for _, b in ipairs(before or {}) do
            if b.state and b.state ~= state_of(b[2]) then
                report("changed", target, ("failed call changed %s's state_dict; the error: %s")
                    :format(b[1], tostring(err)), chunks)
                found = true
                break
            end
        end
    end
    if (not ok and not hung) or (ok and pure) then
        for _, b in ipairs(before or {}) do
            -- O, a call's out= (tide.tensor_keywords.out), is written by a call that succeeds
            if b[3] and not (ok and b[1] == "O") then
                local now = flat(b[2])
                local same_, why = true, nil
                if now then same_, why = same(b[3], now) end
                if not same_ then
                    if ok then
                        report("mutated", target, ("a call that is not in place changed %s (%s)")
                            :format(b[1], why), chunks)
                    else
                        report("changed", target, ("failed call changed %s (%s); the error: %s")
                            :format(b[1], why, tostring(err)), chunks)
                    end
                    found = true
                    break
                end
            end
        end
    end
    return ok, res, found
end

-- one call: src's lines up to the last assign its arguments (checked too: building them is
-- API calls), the last line is the call; a snapshot of every tensor argument (and of M's
-- parameters) is taken between the two, for the failed-call check. chunks: the scenario so
-- far (the reproducer); vars: the globals that hold arguments
local function step(target, src, chunks, vars)
    chunks[#chunks + 1] = src
    for _, v in ipairs(vars or {}) do
        env.__vars[#env.__vars + 1] = v
    end
    ncalls = ncalls + 1
    write_last(chunks, target)
    local setup, call = src:match("^(.*)\n([^\n]*)$")
    if not setup then
        call = src
    end
    local found = false
    if setup then
        local ok, _, f = run_src(target, setup, chunks)
        if not ok then
            if f then nfailed = nfailed + 1 else nclean = nclean + 1 end
            return false
        end
    end
    local before = {}
    for _, w in ipairs(watched()) do
        before[#before + 1] = { w[1], w[2], flat(w[2]) }
    end
    -- the objects a scenario made (M, S: a module, an optimizer, a scheduler) keep their state
    -- when a call fails
    for _, name in ipairs { "M", "S" } do
        local obj = rawget(env, name)
        local st = state_of(obj)
        if st then before[#before + 1] = { name, obj, state = st } end
    end
    local ok, res
    ok, res, found = run_src(target, call, chunks, before)
    if ok then nsucceeded = nsucceeded + 1 end
    if found then nfailed = nfailed + 1 else nclean = nclean + 1 end
    if not ok then return false end
    return true, table.unpack(res, 2, res.n)
end

-- ---- scenarios ----------------------------------------------------------------------------------
local function assign(names, srcs)
    local lines = {}
    for i, n in ipairs(names) do lines[i] = n .. " = " .. srcs[i] end
    return table.concat(lines, "\n")
end
-- obj:name(args) as source; a method named by a Lua keyword (t["repeat"], PyTorch's
-- Tensor.repeat) is called as obj["name"](obj, args)
local LUA_KEYWORDS = { ["and"] = true, ["break"] = true, ["do"] = true, ["else"] = true,
    ["elseif"] = true, ["end"] = true, ["false"] = true, ["for"] = true, ["function"] = true,
    ["goto"] = true, ["if"] = true, ["in"] = true, ["local"] = true, ["nil"] = true,
    ["not"] = true, ["or"] = true, ["repeat"] = true, ["return"] = true, ["then"] = true,
    ["true"] = true, ["until"] = true, ["while"] = true }
local function method_call(obj, name, names)
    if LUA_KEYWORDS[name] then
        local all = { obj }
        for k = 1, #names do
            all[k + 1] = names[k]
        end
        return ("%s[%q](%s)"):format(obj, name, table.concat(all, ", "))
    end
    return obj .. ":" .. name .. "(" .. table.concat(names, ", ") .. ")"
end

local function call_args(prefix, srcs)
    local names = {}
    for i = 1, #srcs do names[i] = prefix .. i end
    return names
end

-- the documented methods of modules, optimizers, schedulers, datasets, loaders and samplers
-- (their classes also hold internals: formula_update, state_spec, extra_repr, ...)
local PUBLIC_METHODS = {}
for name in ([[forward to cpu cuda float double train eval zero_grad parameters named_parameters
    buffers named_buffers children named_children modules named_modules state_dict
    load_state_dict register_buffer register_parameter add_module apply requires_grad_
    num_parameters step get_last_lr get_lr add_param_group iter len append insert keys values
    items set_epoch flatten_parameters get update_parameters]]):gmatch("%S+") do
    PUBLIC_METHODS[name] = true
end

-- random methods of an object (a table whose metatable chain has __index tables)
local function methods_of(obj)
    local names, seen_ = {}, {}
    local mt = getmetatable(obj)
    local depth = 0
    while mt and type(mt.__index) == "table" and depth < 8 do
        for k, v in pairs(mt.__index) do
            if type(k) == "string" and type(v) == "function" and PUBLIC_METHODS[k] and
                not seen_[k] then
                seen_[k] = true
                names[#names + 1] = k
            end
        end
        mt = getmetatable(mt.__index)
        depth = depth + 1
    end
    table.sort(names)
    return names
end

local function follow_up(ctx, target, chunks, objname, nsteps)
    for _ = 1, nsteps do
        local obj = rawget(env, objname)
        if type(obj) ~= "table" then return end
        local ms = methods_of(obj)
        local a = args_src(ctx, chance(0.6))
        local names = call_args("b", a)
        local mcall
        local r = rnd(10)
        if r <= 3 and getmetatable(obj) and getmetatable(obj).__call then
            mcall = objname .. "(" .. table.concat(names, ", ") .. ")"
        elseif r == 4 and type(obj.iter) == "function" then
            mcall = ("(function() local n = 0 for a, b in %s:iter(%s) do n = n + 1 if n > 3 then break end end return n end)()")
                :format(objname, table.concat(names, ", "))
        elseif r == 5 and type(obj.state_dict) == "function" and type(obj.load_state_dict) == "function" then
            -- its own state_dict back, perturbed or not
            -- (an optimizer's nested view, PyTorch's sd["param_groups"][0]["lr"] = ..., is
            -- written into as the dict it stands for)
            local view = 'if type(sd.param_groups) == "table" and type(sd.param_groups[1]) == ' ..
                '"table" then sd.param_groups[1].' .. pick { "lr", "params", "betas", "momentum" } ..
                " = " .. gen(ctx, 1) .. " end"
            local state = 'if type(sd.state) == "table" then sd.state[' .. pick { "1", "2", '"x"' } ..
                "] = " .. gen(ctx, 1) .. " end"
            local edit = pick { "", "for k in pairs(sd) do sd[k] = " .. gen(ctx, 1) .. " break end",
                "sd[" .. pick { '"bogus"', "1", '"state"', '"param_groups"', '"weight"' } .. "] = " .. gen(ctx, 1),
                view, state }
            mcall = ("(function() local sd = %s:state_dict() %s return %s:load_state_dict(sd) end)()")
                :format(objname, edit, objname)
        elseif r == 6 and type(obj.named_parameters) == "function" then
            -- a value assigned over one of its own parameters, the parameters listed (Lua's
            -- __newindex does not see it: the listing names a plain tensor), the parameter put
            -- back (the assignment is the script's change, not the failed call's)
            mcall = ("(function() local m = %s for _, pr in ipairs(m:named_parameters()) do " ..
                'if not pr[1]:find(".", 1, true) then local old = m[pr[1]] m[pr[1]] = %s ' ..
                "local ok, err = pcall(m.parameters, m) m[pr[1]] = old " ..
                "if not ok then error(err, 0) end break end end " ..
                "return m:parameters() end)()"):format(objname, gen(ctx, 1))
        elseif #ms > 0 then
            mcall = objname .. ":" .. pick(ms) .. "(" .. table.concat(names, ", ") .. ")"
        else
            return
        end
        step(target, assign(names, a) .. "\nR = " .. mcall, chunks, names)
    end
end

-- an op with PyTorch's keyword names (tide.tensor_keywords): its options tables draw those;
-- a function taking PyTorch's out= draws it now and then
local KEYWORD_SIGNATURES = require("tide.tensor_keywords").signatures
local OUT_NAMES = require("tide.tensor_keywords.out").names

-- a table of the op's keyword names (now and then one it does not know), plausible values
-- in tame calls, hostile ones otherwise
local function keyword_src(ctx)
    local t = {}
    for _ = 1, rnd(3) do
        local k = chance(0.9) and pick(ctx.keys) or pick(KEYS)
        local key = key_src(k)
        local v = (ctx.tame and COMMON_KEYS[k]) and pick(COMMON_KEYS[k]) or gen(ctx, 1)
        t[#t + 1] = key .. " = " .. v
    end
    return "{" .. table.concat(t, ", ") .. "}"
end

local function new_ctx(target)
    local ctx = { shapes = {}, tame = chance(0.5) }
    for i = 1, rnd(2) do ctx.shapes[i] = random_shape() end
    local sig = (target.kind == "fn" or target.kind == "method")
        and KEYWORD_SIGNATURES[target.callee:match("([%w_]+)$")]
    if sig and #sig.known > 0 then ctx.keys, ctx.keyword = sig.known, true end
    return ctx
end

-- ---- the pretrained group: tokenizer, BERT, sentence encoder, images, TensorBoard ----------
local function text_src(ctx)
    local r = rnd(10)
    if r <= 6 then
        return pick(TEXTS)
    elseif r <= 8 then
        return list_src(ctx, 1, function() return pick(TEXTS) end)
    end
    return gen(ctx, 0)
end
local BERT_KEYS = { "attention_mask", "token_type_ids", "position_ids", "labels", "device",
    "dtype", "strict", "num_labels", "id2label", "vocab_size", "hidden_size",
    "num_hidden_layers", "num_attention_heads", "intermediate_size", "hidden_act",
    "max_position_embeddings", "type_vocab_size", "layer_norm_eps", "pad_token_id",
    "position_embedding_type", "problem_type", "classifier_dropout", "hidden_dropout_prob",
    "attention_probs_dropout_prob", "model_type", "add_special_tokens", "max_length",
    "truncation", "padding", "skip_special_tokens", "clean_up_tokenization_spaces",
    "batch_size", "normalize", "nrow", "pad_value", "value_range", "scale_each", "bins",
    "dataformats", "metadata", "label_img", "tag", "global_step", "format" }
local FIXTURE_DIRS = { '"spec/fixtures/bert/base"', '"spec/fixtures/bert/cls"', '"spec/fixtures/bert/mlm"',
    '"spec/fixtures/bert/reg"', '"spec/fixtures/sentence_encoder"', '"spec/fixtures/tokenizer/uncased"',
    '"spec/fixtures/tokenizer/vocab_only"', '"spec/fixtures"', '"/nonexistent"' }

-- ids for a tiny BERT: [B, T] integers of the fixture's vocabulary (64) or outside it
local function ids_src(ctx)
    local b, t = rnd(3), pick { 1, 2, 5, 8, 40 }
    local dtype = pick { "int64", "int64", "int32", "float32", "uint8" }
    local shape = pick { { b, t }, { b, t }, { t }, { b, t, 2 }, { 0, t } }
    return ("T{%d, %s, %q, %q, false, nil, %q}"):format(rnd(1000000), shape_src(shape), dtype,
        chance(0.15) and "cpu:1" or "cpu", chance(0.2) and "s" or "n")
end

run_pretrained = function(t, ctx, chunks)
    ctx.keys = BERT_KEYS
    local out = ("%q"):format(args.out)
    if t.kind == "tokenizer" then
        local a = { text_src(ctx) }
        for i = 2, wpick { { 3, 1 }, { 4, 2 }, { 2, 3 } } do
            a[i] = chance(0.4) and text_src(ctx) or (chance(0.5) and options_src(ctx, 0) or gen(ctx, 0))
        end
        if t.callee == "decode" or t.callee == "id_to_token" then
            a[1] = chance(0.5) and ids_src(ctx) or list_src(ctx, 1, function() return pick(NUMBERS) end)
        end
        local names = call_args("a", a)
        local tok = ("FIX.tok(%q)"):format(pick { "uncased", "uncased", "cased", "left", "vocab_only",
            "keep_accents", "no_cjk" })
        local call = t.callee == "__call" and tok .. "(" or tok .. ":" .. t.callee .. "("
        step(t.name, assign(names, a) .. "\nR = " .. call .. table.concat(names, ", ") .. ")",
            chunks, names)
    elseif t.kind == "from_pretrained" then
        local a = { chance(0.8) and pick(FIXTURE_DIRS) or gen(ctx, 0) }
        if chance(0.7) then a[2] = chance(0.8) and options_src(ctx, 0) or gen(ctx, 0) end
        local names = call_args("a", a)
        step(t.name, assign(names, a) .. "\nM = " .. t.callee .. "(" .. table.concat(names, ", ") .. ")",
            chunks, names)
    elseif t.kind == "bert_new" then
        -- a config: the tiny fixture's with one to three values changed, or anything
        local fields = { "vocab_size = 40", "hidden_size = 16", "num_hidden_layers = 1",
            "num_attention_heads = 2", "intermediate_size = 8", "max_position_embeddings = 16" }
        for _ = 1, rnd(3) do
            local k = pick(BERT_KEYS)
            -- (65536 layers are a legal model that takes minutes to build: small counts only)
            local v = k == "num_hidden_layers" and pick(SMALL) or
                (chance(0.5) and pick(NUMBERS) or gen(ctx, 1))
            fields[#fields + 1] = k .. " = " .. v
        end
        -- (never the default config: BERT-base's 110M weights cost seconds, minutes under ASan)
        local tiny = "{" .. table.concat(fields, ", ") .. "}"
        local other = gen(ctx, 0)
        if other:sub(1, 1) == "{" and other ~= "{}" then -- other keys beside the tiny sizes
            other = "{" .. table.concat(fields, ", ") .. ", " .. other:sub(2)
        end
        local a = { (chance(0.85) or other == "nil" or other == "{}") and tiny or other }
        if t.name ~= "bert.BertConfig" and chance(0.7) then
            a[1] = "tide.models.bert.BertConfig(" .. a[1] .. ")"
        end
        local names = call_args("a", a)
        local ok = step(t.name, assign(names, a) .. "\nM = " .. t.callee .. "(" .. names[1] .. ")",
            chunks, names)
        if ok and t.name ~= "bert.BertConfig" then
            local b = { ids_src(ctx), chance(0.7) and options_src(ctx, 0) or "nil" }
            local n2 = call_args("b", b)
            step(t.name, assign(n2, b) .. "\nR = M(" .. table.concat(n2, ", ") .. ")", chunks, n2)
        end
    elseif t.kind == "bert" then
        local name = pick { "base", "cls", "mlm", "reg" }
        local mode = chance(0.3) and ":train()" or ":eval()"
        local opts = {}
        for _ = 1, rnd(3) - 1 do
            local k = pick { "attention_mask", "token_type_ids", "position_ids", "labels",
                pick(BERT_KEYS) }
            opts[#opts + 1] = k .. " = " .. (chance(0.8) and ids_src(ctx) or gen(ctx, 1))
        end
        local a = { ids_src(ctx), "{" .. table.concat(opts, ", ") .. "}" }
        local names = call_args("a", a)
        local ok = step(t.name, ("M = FIX.bert(%q)%s\n"):format(name, mode) .. assign(names, a) ..
            "\nR = M(" .. table.concat(names, ", ") .. ")", chunks, { "M", table.unpack(names) })
        if ok and chance(0.3) then
            step(t.name, "R = (R.loss or (R.logits or R.last_hidden_state):sum()):backward()", chunks)
        end
        if ok and chance(0.2) then follow_up(ctx, t.name, chunks, "M", 1) end
    elseif t.kind == "encoder" then
        local a = { text_src(ctx) }
        if chance(0.7) then a[2] = chance(0.8) and options_src(ctx, 0) or gen(ctx, 0) end
        local names = call_args("a", a)
        step(t.name, assign(names, a) .. "\nR = FIX.enc():encode(" .. table.concat(names, ", ") .. ")",
            chunks, names)
    elseif t.kind == "image" then
        ctx.shapes = { { 3, 4, 5 }, { 2, 3, 4, 4 }, { 1, 1, 2, 2 }, { 4, 1, 3, 3 }, { 2, 4, 4 } }
        local a = { tensor_src(ctx) }
        if t.name:match("save_image") then
            a[2] = ("%s .. \"/image.png\""):format(out)
        end
        if chance(0.7) then a[#a + 1] = chance(0.8) and options_src(ctx, 0) or gen(ctx, 0) end
        local names = call_args("a", a)
        step(t.name, assign(names, a) .. "\nR = " .. t.callee .. "(" .. table.concat(names, ", ") .. ")",
            chunks, names)
    elseif t.kind == "writer" then
        ctx.shapes = { { 3, 4, 5 }, { 2, 3, 4, 4 }, { 5 }, { 4, 3 }, { 1, 4, 4 } }
        -- a writer of its own for close (the shared one stays open), the shared one otherwise
        local w = t.callee == "close" and ("require(\"tide.utils.tensorboard\").SummaryWriter(%s .. \"/tb-%d\"%s)")
            :format(out, rnd(20), chance(0.5) and ", " .. options_src(ctx, 0) or "")
            or ("FIX.writer(%s .. \"/tb\")"):format(out)
        local a = {}
        a[1] = chance(0.8) and pick { '"loss"', '"a/b"', '""', '"x y"' } or gen(ctx, 0)
        for i = 2, wpick { { 1, 1 }, { 3, 2 }, { 4, 3 }, { 2, 4 } } do
            a[i] = chance(0.4) and tensor_src(ctx) or gen(ctx, 0)
        end
        if t.callee == "add_embedding" then a[1] = tensor_src(ctx) end
        local names = call_args("a", a)
        local mcall = t.callee == "close" and "W:close() R = W:" .. pick { "add_scalar", "flush", "close" }
            or "R = W:" .. t.callee
        step(t.name, "W = " .. w .. "\n" .. assign(names, a) .. "\n" .. mcall .. "(" ..
            table.concat(names, ", ") .. ")", chunks, names)
    end
end

local function run_target(t)
    target_group = t.group
    env = setmetatable({ T = T, FIX = FIX, tide = tide, nn = nn, F = nn.functional, optim = tide.optim,
        SELFTEST = SELFTEST,
        data = tide.data, __vars = {} }, { __index = _G })
    local ctx = new_ctx(t)
    local chunks = {}
    if t.kind == "fn" then
        local a = args_src(ctx, chance(0.75))
        local out = ""
        if OUT_NAMES[t.callee:match("^tide%.([%w_]+)$") or ""] and chance(0.3) then
            -- PyTorch's out= (a tensor, now and then a list of two or something else), with
            -- the op's keywords or alone; O's values are checked after a failed call
            local kw = (ctx.keyword and chance(0.4)) and keyword_src(ctx) or "{}"
            out = "O = " .. (chance(0.8) and tensor_src(ctx) or chance(0.7) and
                ("{" .. tensor_src(ctx) .. ", " .. tensor_src(ctx) .. "}") or gen(ctx, 1)) .. "\n"
            a[#a + 1] = "{out = O" .. (kw == "{}" and "}" or ", " .. kw:sub(2))
        elseif ctx.keyword and chance(0.4) then
            -- PyTorch's keywords after the positionals (tide.tensor_keywords)
            a[#a + 1] = keyword_src(ctx)
        end
        local names = call_args("a", a)
        local src = out .. assign(names, a) .. "\nR = " .. t.callee .. "(" ..
            table.concat(names, ", ") .. ")"
        if out ~= "" then names[#names + 1] = "O" end
        step(t.name, src, chunks, names)
    elseif t.kind == "method" or t.kind == "cmethod" then
        local a = args_src(ctx, false)
        if ctx.keyword and chance(0.4) then a[#a + 1] = keyword_src(ctx) end
        local names = call_args("a", a)
        local self = t.kind == "cmethod" and complex_src(ctx) or tensor_src(ctx)
        step(t.name, "x = " .. self .. "\n" .. assign(names, a) .. "\nR = " ..
            method_call("x", t.callee, names), chunks, { "x", table.unpack(names) })
        -- a chain: a method of the result (views of views, graphs of results)
        for _ = 1, 3 do
            if not (tide.is_tensor(rawget(env, "R")) and chance(0.4)) then break end
            local m = pick(by_group.method)
            local a2 = args_src(ctx, false)
            local n2 = call_args("c", a2)
            local ok2 = step(m.name, "x = R\n" .. assign(n2, a2) .. "\nR = " ..
                method_call("x", m.callee, n2), chunks, n2)
            if not ok2 then break end
        end
        if tide.is_tensor(rawget(env, "R")) and rawget(env, "R").requires_grad and chance(0.3) then
            step("backward of a result", "y = R:sum()\nR = y:backward()", chunks)
        end
    elseif t.kind == "binop" then
        -- one operand at least is a tensor (two non-tensors are Lua's business, not tide's)
        local a, b = tensor_src(ctx), chance(0.8) and tensor_src(ctx) or gen(ctx)
        if chance(0.5) then a, b = b, a end
        step(t.name, ("a = %s\nb = %s\nR = a %s b"):format(a, b, t.callee), chunks, { "a", "b" })
    elseif t.kind == "meta" then
        local x = tensor_src(ctx)
        local body
        if t.callee == "unm" then body = "R = -x"
        elseif t.callee == "bnot" then body = "R = ~x"
        elseif t.callee == "len" then body = "R = #x"
        elseif t.callee == "tostring" then body = "R = tostring(x)"
        elseif t.callee == "close" then body = "getmetatable(x).__close(x) R = x + 1"
        elseif t.callee == "index" then
            body = "R = x[" .. pick { gen(ctx), '"grad"', '"shape"', '"T"', '"data"', '"grad_fn"', '"is_leaf"' } .. "]"
        else
            body = "x[" .. pick { gen(ctx), '"grad"', '"requires_grad"', '"data"', '"shape"', '"foo"' } ..
                "] = " .. gen(ctx)
        end
        step(t.name, "x = " .. x .. "\n" .. body, chunks, { "x" })
    elseif t.kind == "backward" then
        local x = tensor_src(ctx, { float = true, rg = true })
        local ops = pick { ":sum()", ":exp():sum()", "", ":softmax(1):sum()", ":relu():mean()", "[1]" }
        local a = args_src(ctx, false)
        local names = call_args("a", a)
        step(t.name, "x = " .. x .. "\ny = x" .. ops .. "\n" .. assign(names, a) .. "\nR = y:backward(" ..
            table.concat(names, ", ") .. ")", chunks, { "x", "y", table.unpack(names) })
    elseif t.kind == "module" or t.kind == "object" then
        ctx.keys = nil
        local a = {}
        for i = 1, wpick { { 2, 0 }, { 5, 1 }, { 6, 2 }, { 4, 3 }, { 2, 4 } } do
            a[i] = chance(0.6) and pick(SMALL) or gen(ctx)
        end
        if t.kind == "object" and chance(0.5) then a[1] = tensor_src(ctx) end
        -- inputs shaped after the first size given (in_features, channels, ...) get past the
        -- shape checks of forward more often
        local k = math.tointeger(tonumber(a[1] or "")) or 3
        if k < 1 or k > 16 then k = 3 end
        ctx.shapes = { { 2, k }, { 2, k, 5 }, { 2, k, 6, 6 }, { 3, 2, k }, { 4 } }
        local names = call_args("a", a)
        local ok = step(t.name, assign(names, a) .. "\nM = " .. t.callee .. "(" .. table.concat(names, ", ") .. ")",
            chunks, { "M", table.unpack(names) })
        if ok then follow_up(ctx, t.name, chunks, "M", rnd(4)) end
    elseif t.kind == "optim" or t.kind == "sched" then
        local ps = {}
        for i = 1, rnd(3) do ps[i] = tensor_src(ctx, { float = true, rg = true, norg = false }) end
        local pnames = call_args("p", ps)
        local params = pick { "{" .. table.concat(pnames, ", ") .. "}", "nn.Linear(3, 2):parameters()",
            "{{params = {" .. table.concat(pnames, ", ") .. "}, lr = " .. gen(ctx) .. "}}", gen(ctx) }
        local o = chance(0.7) and options_src(ctx, 0) or gen(ctx)
        local grads = {}
        for _, n in ipairs(pnames) do
            if chance(0.7) then grads[#grads + 1] = ("pcall(function() (%s * %s):sum():backward() end)"):format(n, n) end
        end
        local cls = t.kind == "optim" and t.callee or pick { "optim.SGD", "optim.Adam", "optim.AdamW" }
        local ok = step(t.name, assign(pnames, ps) .. "\n" .. table.concat(grads, "\n") ..
            "\nM = " .. cls .. "(" .. params .. ", " .. o .. ")", chunks, { table.unpack(pnames) })
        if ok and t.kind == "sched" then
            local sa = args_src(ctx, false)
            local snames = call_args("s", sa)
            ok = step(t.name, assign(snames, sa) .. "\nS = " .. t.callee .. "(" ..
                table.concat({ "M", table.unpack(snames) }, ", ") .. ")", chunks, snames)
            if ok then follow_up(ctx, t.name, chunks, "S", rnd(4)) end
        elseif ok then
            follow_up(ctx, t.name, chunks, "M", rnd(4))
        end
    elseif t.kind == "loader" then
        local n = pick { 0, 1, 3, 5, 7 }
        local a = {}
        for i = 1, rnd(2) do
            a[i] = chance(0.85) and tensor_src({ shapes = { { n, rnd(3) } } }) or gen(ctx)
        end
        local names = call_args("a", a)
        local o = chance(0.8) and options_src(ctx, 0) or gen(ctx)
        local ok = step(t.name, assign(names, a) .. "\nD = data.TensorDataset(" .. table.concat(names, ", ") ..
            ")\nM = data.DataLoader(D, " .. o .. ")", chunks, names)
        if ok then
            step(t.name, "R = 0 for x, y in M:iter() do R = R + 1 if R > 4 then break end end", chunks)
            follow_up(ctx, t.name, chunks, "M", rnd(2))
        end
    else
        run_pretrained(t, ctx, chunks)
    end
end

-- ---- main loop ----------------------------------------------------------------------------------
local deadline = tide.wall_time() + args.seconds
local t_start = tide.wall_time()
if not args.quiet then
    io.stdout:write(("fuzz: seed %s, %d targets, %s s, out %s\n"):format(tostring(args.seed), #targets,
        tostring(args.seconds), args.out))
end
local groups_seen = {}
local nrun = 0
local PROFILER, nprofiled = nil, 0
while tide.wall_time() < deadline and ncalls < args.calls do
    local g = args.selftest and "tide" or wpick(GROUP_WEIGHTS)
    local t = pick(by_group[g])
    groups_seen[t.name] = (groups_seen[t.name] or 0) + 1
    run_target(t)
    nrun = nrun + 1
    if nrun % 200 == 0 then collectgarbage() end
    if nrun % 300 == 0 then -- a window of calls in three, about, under the profiler
        if profiling then
            PROFILER:stop()
            profiling = nil
        elseif chance(0.5) then
            profiling = ("{record_shapes = %s, profile_memory = %s, with_stack = %s, " ..
                "with_flops = %s}"):format(tostring(chance(0.5)), tostring(chance(0.5)),
                tostring(chance(0.3)), tostring(chance(0.5)))
            PROFILER = tide.profiler.profile(load("return " .. profiling)()):start()
            nprofiled = nprofiled + 1
        end
    end
end
if profiling then PROFILER:stop() end
local covered = 0
for _ in pairs(groups_seen) do covered = covered + 1 end
io.stdout:write(("fuzz: seed %s: %d calls in %.1f s (%d returned, the rest raised), %d of %d "
    .. "targets called, %d windows of 300 under the profiler, %d findings (%d kinds)\n"):format(
    tostring(args.seed), ncalls, tide.wall_time() - t_start, nsucceeded, covered, #targets,
    nprofiled, #findings, nfind))
if last_file then os.remove(last_file) os.remove(last_file .. ".tmp") end
if args.selftest then
    local classes = {}
    for _, key in ipairs(findings) do
        classes[key:match("^(%w+)|SELFTEST%.")] = true
    end
    local ok = classes.error and classes.changed and classes.mutated and #findings == nfailed
    io.stdout:write(("fuzz: selftest %s: planted faults reported as%s%s%s\n"):format(
        ok and "passed" or "FAILED", classes.error and " error" or "",
        classes.changed and " changed" or "", classes.mutated and " mutated" or ""))
    io.stdout:write(ok and "1 passed, 0 failed\n" or "0 passed, 1 failed\n")
    io.stdout:flush()
    os.exit(ok and 0 or 1)
end
io.stdout:write(("%d passed, %d failed\n"):format(nclean, nfailed))
io.stdout:flush()
os.exit(nfailed == 0 and 0 or 1)
