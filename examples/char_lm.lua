-- char_lm.lua — train a character-level language model on a text and sample from it, on the
-- best device tide finds (Torch7's char-rnn, modernised).
--
--   lua5.4 examples/char_lm.lua                              gpt on the fortunes, 2000 steps
--   lua5.4 examples/char_lm.lua --model lstm --steps 1000 --save lstm.safetensors
--   lua5.4 examples/char_lm.lua --load lstm.safetensors --steps 2000    resume to step 2000
--   lua5.4 examples/char_lm.lua --load lstm.safetensors --sample 1000 --temperature 0.8
--
-- Flags: --model gpt|lstm (gpt)   --data PATH (a text file or a directory of them; default the
--        plain-text files of /usr/share/games/fortunes in name order)   --steps N (2000)
--        --batch-size N (32)   --lr X (AdamW's peak step size: gpt 1e-3, lstm 2e-3)
--        --seed N (1)   --device DEV (tide.best_device())   --eval-every N (250)
--        --layers N (gpt 4, lstm 2)   --width N (gpt 128, lstm's hidden size 256)
--        --heads N (4)   --context N (gpt's window, 128)   --save PATH   --load PATH
--        --sample N (300)   --prompt TEXT ("The ")   --temperature X (1.0; 0: the likeliest)
--        --top-k N (0: all)   --stop-at N (end the run after step N, a checkpoint to resume)
--        --logdir DIR (off: a TensorBoard log of the training loss, gradient norm, step size,
--        validation loss, weight histograms and a 200-byte sample at each eval)
--
-- Vocabulary: the bytes that occur in the text; the last 10% of it is the validation split.
-- Training reads random windows of 128 bytes (the window starts of step s are a hash of the
-- seed and s, which bench/char_lm.py computes the same way); AdamW (weight decay 0.01), a
-- linear warmup over 10% of the steps (at most 100) then a cosine decay to 0, gradients
-- clipped at norm 1.0. The validation loss is in nats per character, the mean over every
-- non-overlapping window of the validation split. A checkpoint (--save) holds the model, the
-- optimizer, the scheduler and the run's settings, written at each eval and at the end;
-- --load resumes exactly where it was written, towards the checkpoint's --steps (each step
-- reseeds the generator the dropout draws from with (seed, step), and the window starts are a
-- function of the step). The last line printed is "val loss: X.XXXX".
local tide = require("tide")
local core = require("tide.core")
local nn = tide.nn
local F = nn.functional

local USAGE = [==[
usage: lua5.4 examples/char_lm.lua [--model gpt|lstm] [--data PATH] [--steps N]
       [--batch-size N] [--lr X] [--seed N] [--device DEV] [--eval-every N] [--layers N]
       [--width N] [--heads N] [--context N] [--save PATH] [--load PATH] [--sample N]
       [--prompt TEXT] [--temperature X] [--top-k N] [--stop-at N] [--logdir DIR]]==]

local FORTUNES = "/usr/share/games/fortunes"
local WINDOW = 128 -- bytes a training or validation window holds (gpt: --context)
local DEFAULTS = {
    gpt = { lr = 1e-3, layers = 4, width = 128 },
    lstm = { lr = 2e-3, layers = 2, width = 256 },
}
-- what a checkpoint records of the run: --load takes them unless given again
local RUN_FLAGS = { "model", "layers", "width", "heads", "context", "steps", "batch_size", "seed",
    "lr" }

local function die(msg)
    io.stderr:write("char_lm: ", msg, "\n")
    os.exit(2)
end

local function parse(argv)
    local o = { model = "gpt", steps = 2000, batch_size = 32, seed = 1, eval_every = 250,
        heads = 4, context = WINDOW, sample = 300, prompt = "The ", temperature = 1.0,
        top_k = 0, given = {} }
    local kinds = { model = "string", data = "string", steps = "int", ["batch-size"] = "int",
        lr = "number", seed = "int", device = "string", ["eval-every"] = "int", layers = "int",
        width = "int", heads = "int", context = "int", save = "string", load = "string",
        sample = "int", prompt = "string", temperature = "number", ["top-k"] = "int",
        ["stop-at"] = "int", logdir = "string" }
    local i = 1
    while i <= #argv do
        local a = argv[i]
        if a == "-h" or a == "--help" then
            print(USAGE)
            os.exit(0)
        end
        local name, val = a:match("^%-%-([%w-]+)=(.*)$")
        if not name then
            name = a:match("^%-%-([%w-]+)$")
            i = i + 1
            val = argv[i]
        end
        local kind = name and kinds[name]
        if not kind then
            die("unknown argument '" .. a .. "'\n" .. USAGE)
        end
        if val == nil then
            die("--" .. name .. " needs a value")
        end
        local v = val
        if kind ~= "string" then
            v = tonumber(val)
            if not v or (kind == "int" and (math.type(v) ~= "integer" or v < 0)) then
                die("--" .. name .. " expects " .. (kind == "int" and "a non-negative integer"
                    or "a number") .. ", got '" .. val .. "'")
            end
        end
        local key = name:gsub("-", "_")
        o[key], o.given[key] = v, true
        i = i + 1
    end
    for _, k in ipairs({ "steps", "batch_size", "eval_every", "layers", "width", "heads",
        "context" }) do
        if o[k] == 0 then
            die("--" .. k:gsub("_", "-") .. " must be at least 1")
        end
    end
    return o
end

local function check_model(o)
    if not DEFAULTS[o.model] then
        die("--model must be gpt or lstm, got '" .. o.model .. "'")
    end
    local d = DEFAULTS[o.model]
    o.lr = o.lr or d.lr
    o.layers = o.layers or d.layers
    o.width = o.width or d.width
    if o.model == "gpt" and o.width % o.heads ~= 0 then
        die(string.format("--width %d must be a multiple of --heads %d", o.width, o.heads))
    end
end

-- the text's bytes: a file, or a directory's plain-text files (not fortune's .dat/.u8
-- indexes) concatenated in sorted name order
local function read_text(path)
    local f = io.open(path .. "/.", "rb")
    if not f then
        return tide.data.text(path)
    end
    f:close()
    local names = {}
    local ls = io.popen("ls -1 '" .. path:gsub("'", "'\\''") .. "'")
    for name in ls:lines() do
        local file = io.open(path .. "/" .. name .. "/.", "rb") -- skip subdirectories
        if file then
            file:close()
        elseif not name:match("%.dat$") and not name:match("%.u8$") then
            names[#names + 1] = name
        end
    end
    ls:close()
    table.sort(names)
    if #names == 0 then
        die("no text files in " .. path)
    end
    local parts = {}
    for _, name in ipairs(names) do
        parts[#parts + 1] = tide.data.text(path .. "/" .. name)
    end
    return tide.cat(parts, 1)
end

-- ids (1-based, int64) of every byte and the vocabulary (the bytes that occur, in order)
local function encode(bytes)
    local codes = bytes:long() + 1
    local counts = tide.zeros({ 256 }):scatter_add(1, codes, tide.ones({ codes:size(1) }))
    local vocab, lut = {}, {}
    for b, c in ipairs(counts:totable()) do
        if c > 0 then
            vocab[#vocab + 1] = b - 1
        end
        lut[b] = #vocab
    end
    return tide.tensor(lut):index_select(1, codes), vocab, lut
end

-- the window starts of training step `step`: splitmix64 of a counter, the same integers as
-- bench/char_lm.py (Lua's integers wrap like C's uint64; >> is a logical shift)
local function splitmix(x)
    local z = x + 0x9E3779B97F4A7C15
    z = (z ~ (z >> 30)) * 0xBF58476D1CE4E5B9
    z = (z ~ (z >> 27)) * 0x94D049BB133111EB
    return z ~ (z >> 31)
end

local function window_starts(seed, step, batch, n_starts)
    local starts = {}
    for b = 1, batch do
        local key = (seed << 40) + (step - 1) * batch + (b - 1)
        starts[b] = (splitmix(key) >> 1) % n_starts + 1
    end
    return starts
end

-- the training split as a dataset of windows: sample i is the window starting at byte i,
-- inputs bytes i..i+w-1 and targets i+1..i+w; batch() gathers a whole batch with one index
local Windows = tide.data.Dataset:extend("Windows")

function Windows:init(ids, width)
    self.ids, self.width = ids, width
    self.offsets = tide.arange(width + 1):view(1, width + 1)
end

function Windows:len()
    return self.ids:size(1) - self.width
end

function Windows:batch(index)
    local pos = index:view(-1, 1) + self.offsets
    local w = self.ids:index_select(1, pos:reshape(-1)):view(index:size(1), self.width + 1)
    return w:narrow(2, 1, self.width), w:narrow(2, 2, self.width)
end

function Windows:get(i)
    local w = self.ids:narrow(1, i, self.width + 1)
    return w:narrow(1, 1, self.width), w:narrow(1, 2, self.width)
end

-- models: ids [B, T] -> logits [B, T, vocab]
local LSTM = nn.Module:extend("CharLSTM")

function LSTM:init(vocab, o)
    self.embed = nn.Embedding(vocab, 64)
    self.rnn = nn.LSTM(64, o.width, { num_layers = o.layers, batch_first = true })
    self.head = nn.Linear(o.width, vocab)
end

function LSTM:forward(x, state)
    local out, new_state = self.rnn(self.embed(x), state)
    return self.head(out), new_state
end

local GPT = nn.Module:extend("CharGPT")

function GPT:init(vocab, o)
    self.tok = nn.Embedding(vocab, o.width)
    self.pos = nn.Embedding(o.context, o.width)
    self.drop = nn.Dropout(0.1)
    local layer = nn.TransformerEncoderLayer(o.width, o.heads, { dim_feedforward = 4 * o.width,
        dropout = 0.1, activation = "gelu", batch_first = true, norm_first = true })
    self.blocks = nn.TransformerEncoder(layer, o.layers)
    self.norm = nn.LayerNorm(o.width)
    self.head = nn.Linear(o.width, vocab)
    self.masks = {} -- causal masks by length and device: true where attention is not allowed
end

function GPT:forward(x)
    local t, dev = x:size(2), x.device
    local key = t .. "@" .. tostring(dev)
    if not self.masks[key] then
        self.masks[key] = tide.ones({ t, t }):triu(1):bool():to(dev)
    end
    local pos = tide.arange(1, t + 1, { device = dev })
    local h = self.drop(self.tok(x) + self.pos(pos))
    return self.head(self.norm(self.blocks(h, self.masks[key])))
end

local function loss_of(model, x, y, reduction)
    local logits = model(x)
    return F.cross_entropy(logits:reshape(-1, logits:size(3)), y:reshape(-1),
        { reduction = reduction })
end

-- nats per character over every non-overlapping window of the validation split
local function validate(model, val_ids, width, dev)
    local n = (val_ids:size(1) - 1) // width
    local per_batch = 64
    local total = 0
    model:eval()
    tide.no_grad(function()
        for first = 0, n - 1, per_batch do
            local k = math.min(per_batch, n - first)
            local pos = (tide.arange(k):view(k, 1) + first) * width + tide.arange(width + 1) + 1
            local w = val_ids:index_select(1, pos:reshape(-1)):view(k, width + 1):to(dev)
            total = total + loss_of(model, w:narrow(2, 1, width), w:narrow(2, 2, width), "sum")
                :item()
        end
    end)
    model:train()
    return total / (n * width)
end

-- the warmup-then-cosine factor of step s's learning rate (s counts from 0)
local function lr_factor(steps)
    local warmup = math.min(100, steps // 10)
    return function(s)
        if s < warmup then
            return (s + 1) / warmup
        end
        local t = (s - warmup) / math.max(1, steps - warmup)
        return 0.5 * (1 + math.cos(math.pi * math.min(t, 1)))
    end
end

-- next id from the logits of one position (sampled with temperature and top-k)
local function draw(logits, temperature, top_k)
    if temperature <= 0 then
        return logits:argmax(1):item()
    end
    local l = logits / temperature
    if top_k > 0 and top_k < l:size(1) then
        local v, i = tide.topk(l, top_k)
        return i[tide.multinomial(v:softmax(1), 1):item()]:item()
    end
    return tide.multinomial(l:softmax(1), 1):item()
end

local function sample(model, kind, prompt_ids, o, dev)
    local ids = table.move(prompt_ids, 1, #prompt_ids, 1, {})
    model:eval()
    tide.no_grad(function()
        local logits, state
        if kind == "lstm" then -- carry the state: one step per character
            logits, state = model(tide.tensor({ prompt_ids }):to(dev))
        end
        for _ = 1, o.sample do
            if kind == "gpt" then -- the last context's characters, again each time
                local first = math.max(1, #ids - o.context + 1)
                logits = model(tide.tensor({ table.move(ids, first, #ids, 1, {}) }):to(dev))
            end
            local last = logits:narrow(2, logits:size(2), 1):reshape(-1):cpu()
            local id = draw(last, o.temperature, o.top_k)
            ids[#ids + 1] = id
            if kind == "lstm" then
                logits, state = model(tide.tensor({ { id } }):to(dev), state)
            end
        end
    end)
    model:train()
    return ids
end

-- progress: a redrawn bar on a terminal; off a terminal the eval lines are the progress
local Progress = {}
Progress.__index = Progress

function Progress.new(first, total)
    local tty = core.isatty(1) and (os.getenv("TERM") or "dumb") ~= "dumb"
    return setmetatable({ first = first, total = total, tty = tty, t0 = core.wall_time(),
        last = 0 }, Progress)
end

function Progress:update(step, chars, loss)
    local now = core.wall_time()
    if not self.tty or (now - self.last < 0.2 and step < self.total) then
        return
    end
    self.last = now
    local dt = math.max(now - self.t0, 1e-9)
    local done = step - self.first
    local eta = (self.total - step) * dt / math.max(done, 1)
    local width = 30
    local fill = math.floor(step / self.total * width + 0.5)
    io.write(string.format("\rstep %d/%d [%s%s] loss %.4f  %6.0f chars/s  ETA %d:%02d ", step,
        self.total, string.rep("=", fill), string.rep(" ", width - fill), loss, chars / dt,
        math.floor(eta / 60), math.floor(eta % 60)))
    io.flush()
end

function Progress:clear()
    if self.tty then
        io.write("\r", string.rep(" ", 100), "\r")
    end
end

local function main(argv)
    local o = parse(argv)
    local state, meta
    if o.load then
        state, meta = tide.load(o.load)
        if not meta or not meta.step or not meta.vocab then
            die(o.load .. " is not a char_lm checkpoint (no step or vocab metadata)")
        end
        -- the checkpoint's model and sizes win over the defaults, not over explicit flags
        for _, k in ipairs(RUN_FLAGS) do
            if meta[k] and not o.given[k] then
                o[k] = k == "model" and meta[k] or tonumber(meta[k])
            end
        end
    end
    check_model(o)
    local width = o.model == "gpt" and o.context or WINDOW
    tide.manual_seed(o.seed)
    local dev = tide.device(o.device or tide.best_device())
    print(string.format("device: %s", tostring(dev)))

    local ids, vocab, lut = encode(read_text(o.data or FORTUNES))
    local n = ids:size(1)
    local n_train = n - n // 10
    if n // 10 < width + 1 or n_train < width + 2 then
        die(string.format("the text has %d bytes: too few for windows of %d (it needs %d)", n,
            width, 10 * (width + 2)))
    end
    local vocab_str = table.concat(vocab, ",")
    if meta and meta.vocab ~= vocab_str then
        die(o.load .. " was trained on a text with another vocabulary; pass its --data")
    end
    local train = Windows(ids:narrow(1, 1, n_train), width)
    local val_ids = ids:narrow(1, n_train + 1, n - n_train)
    print(string.format("text: %s, %d bytes (%d train, %d validation), vocabulary %d",
        o.data or FORTUNES, n, n_train, n - n_train, #vocab))

    local model = (o.model == "gpt" and GPT or LSTM)(#vocab, o)
    local nparams = 0
    for _, p in ipairs(model:parameters()) do
        nparams = nparams + p:numel()
    end
    local parts = { model = {}, optim = {}, sched = {} }
    for k, v in pairs(state or {}) do
        local part, rest = k:match("^(%a+)%.(.*)$")
        parts[part][rest] = v
    end
    if state then
        model:load_state_dict(parts.model)
    end
    model:to(dev) -- once, before the optimizer: its state lives on the parameters' device
    local opt_params = model:parameters()
    local opt = tide.optim.AdamW(opt_params, { lr = o.lr, weight_decay = 0.01 })
    local sched = tide.optim.lr_scheduler.LambdaLR(opt, { lr_lambda = lr_factor(o.steps) })
    local start = 0
    if state then
        opt:load_state_dict(parts.optim)
        sched:load_state_dict(parts.sched)
        start = tonumber(meta.step)
    end
    print(string.format("model: %s, %d layers, width %d%s, %d parameters; %d steps of %d " ..
        "windows of %d, lr %g", o.model, o.layers, o.width,
        o.model == "gpt" and (", " .. o.heads .. " heads") or "", nparams, o.steps,
        o.batch_size, width, o.lr))

    local function save(step, val)
        local sd = {}
        for part, t in pairs({ model = model:state_dict(), optim = opt:state_dict(),
            sched = tide.optim.lr_scheduler.to_tensors(sched:state_dict()) }) do
            for k, v in pairs(t) do
                sd[part .. "." .. k] = v
            end
        end
        local m = { model = o.model, step = tostring(step), vocab = vocab_str,
            val_loss = string.format("%.4f", val) }
        for _, k in ipairs(RUN_FLAGS) do
            m[k] = tostring(o[k])
        end
        tide.save(o.save, sd, m)
        print("saved: " .. o.save)
    end

    -- the window starts of the remaining steps, in order: the DataLoader batches them
    local starts = {}
    local last = math.min(o.steps, o.stop_at or o.steps)
    for step = start + 1, last do
        table.move(window_starts(o.seed, step, o.batch_size, #train), 1, o.batch_size,
            #starts + 1, starts)
    end
    local loader = tide.data.DataLoader(train, { batch_size = o.batch_size, sampler = starts,
        pin_memory = dev.type == "cuda" })
    -- the prompt's ids (the default prompt, or the text's first byte, when it does not fit)
    local function prompt_ids()
        local prompt = {}
        for i = 1, #o.prompt do
            local id = lut[o.prompt:byte(i) + 1]
            if (id == 0 or vocab[id] ~= o.prompt:byte(i)) and not o.given.prompt then
                prompt = {} -- the default prompt does not fit this text: start from nothing
                break
            elseif id == 0 or vocab[id] ~= o.prompt:byte(i) then
                die(string.format("--prompt: byte %d ('%s') never occurs in the text",
                    o.prompt:byte(i), o.prompt:sub(i, i)))
            end
            prompt[i] = id
        end
        if #prompt == 0 then -- the text's first byte
            prompt[1] = ids[1]:item()
        end
        return prompt
    end
    local function text_of(out_ids)
        local out = {}
        for i, id in ipairs(out_ids) do
            out[i] = string.char(vocab[id])
        end
        return table.concat(out)
    end

    -- --logdir: what TensorBoard shows (tide.utils.tensorboard, PyTorch's SummaryWriter)
    local writer = o.logdir and tide.utils.tensorboard.SummaryWriter(o.logdir)
    local function log_eval(step, val)
        writer:add_scalar("val/loss", val, step)
        for _, np in ipairs(model:named_parameters()) do
            writer:add_histogram("weights/" .. np[1], np[2], step)
        end
        local so = { sample = 200, context = o.context, temperature = o.temperature,
            top_k = o.top_k }
        local text = text_of(sample(model, o.model, prompt_ids(), so, dev))
        -- four spaces: a Markdown code block, the sample's line breaks kept
        writer:add_text("sample", "    " .. text:gsub("\n", "\n    "), step)
        writer:flush()
    end

    local bar = Progress.new(start, last)
    local step, chars, loss_sum, loss_n = start, 0, 0, 0
    local t0 = core.wall_time()
    local val, paused = nil, 0 -- seconds spent evaluating and saving: not training
    for x, y in loader:iter() do
        step = step + 1
        tide.manual_seed(o.seed * 1000003 + step) -- the dropout draws of this step
        x, y = x:to(dev, { non_blocking = true }), y:to(dev, { non_blocking = true })
        opt:zero_grad()
        local loss = loss_of(model, x, y)
        loss:backward()
        local norm = nn.utils.clip_grad_norm_(opt_params, 1.0)
        local lr = opt.param_groups[1].lr
        opt:step()
        sched:step()
        chars = chars + x:numel()
        -- reading the loss waits for the device: every 10 steps, and at each eval
        local eval_now = step % o.eval_every == 0 or step == last
        if step % 10 == 0 or eval_now or bar.tty then
            local l = loss:item()
            loss_sum, loss_n = loss_sum + l, loss_n + 1
            bar:update(step, chars, loss_sum / loss_n)
            if writer and (step % 10 == 0 or eval_now) then
                writer:add_scalar("train/loss", l, step)
                writer:add_scalar("train/grad_norm", norm, step)
                writer:add_scalar("train/lr", lr, step)
            end
        end
        if eval_now then
            local t_eval = core.wall_time()
            local secs = t_eval - t0 - paused
            val = validate(model, val_ids, width, dev)
            bar:clear()
            print(string.format("step %d/%d: train loss %.4f, val loss %.4f nats/char, " ..
                "%.0f chars/s, %.1f ms/step", step, o.steps, loss_sum / loss_n, val,
                chars / secs, 1000 * secs / (step - start)))
            io.flush()
            if o.save then
                save(step, val)
            end
            if writer then
                log_eval(step, val)
            end
            paused = paused + core.wall_time() - t_eval
            loss_sum, loss_n = 0, 0
        end
    end
    if not val then -- no step ran (a loaded checkpoint at its last step)
        val = validate(model, val_ids, width, dev)
        if o.save then
            save(step, val)
        end
    end

    if writer then
        writer:close()
    end
    if o.sample > 0 then
        local prompt = prompt_ids()
        tide.manual_seed(o.seed) -- the same text for the same model and seed
        print(string.format("sample (temperature %g, top-k %s):", o.temperature,
            o.top_k > 0 and o.top_k or "all"))
        print(text_of(sample(model, o.model, prompt, o, dev)))
    end
    print(string.format("val loss: %.4f", val))
end

-- a tide error (bad --device, unreadable file or checkpoint) is the user's to fix: print it as
-- one line and exit 1; anything else is a bug here and keeps its traceback
local ok, err = xpcall(main, function(e)
    if type(e) == "string" and e:find("tide: ", 1, true) then
        return e
    end
    return debug.traceback(tostring(e), 2)
end, arg)
if not ok then
    io.stderr:write("char_lm: ", tostring(err), "\n")
    os.exit(1)
end
