-- bert_classify.lua — fine-tune a pretrained BERT (all-MiniLM-L6-v2, `make models`) with a
-- classification head to tell which fortune file a fortune comes from: the Debian fortunes
-- corpus's files with at least 500 fortunes (13 of them: computers, cookie, definitions, ...).
--
--   make models                                                  once: models/all-MiniLM-L6-v2
--   lua5.4 examples/bert_classify.lua --limit 2000 --epochs 2     a short CPU run (README)
--   lua5.4 examples/bert_classify.lua --device cuda --epochs 3    every training fortune
--
-- Flags: --epochs N (3)   --lr X (AdamW's peak step size, 5e-5)   --batch-size N (32)
--        --max-length N (tokens per fortune, longer ones are cut; 128)
--        --limit N (train on the first N fortunes of the training split; 0: all)
--        --val-limit N (evaluate on the first N of the validation split; 0: all)
--        --seed N (1)   --device DEV (tide.best_device())   --model DIR (models/all-MiniLM-L6-v2)
--        --data DIR (/usr/share/games/fortunes)   --save DIR (models/fortune-classifier;
--        "" saves nothing)   --min-fortunes N (500: the files that become classes)
--        --logdir DIR (off): loss, learning rate, gradient norm and accuracy for TensorBoard
--        --exact 1 (0): a deterministic run, to hold against the PyTorch twin step by step
--        (bench/bert_classify.lua --exact 1): no dropout, the new head's weights zero, each
--        step's loss printed
--        --init-head FILE: the new head starts from FILE's classifier.weight and
--        classifier.bias (safetensors; the PyTorch twin's --save-head writes one)
--        --amp 1 (0): mixed precision, the forward passes under tide.autocast to bfloat16 (the
--        weights, their gradients and AdamW stay float32; bfloat16 keeps float32's range, so
--        no GradScaler): on a CPU with bfloat16 instructions (tide.cpu_info().bf16_gemm) a
--        step takes about 0.6x the float32 one, and on a GPU it runs on the tensor cores
--
-- The split is fixed by --seed: the fortunes of every class file, shuffled together, 80% for
-- training and 20% for validation. The model is BertForSequenceClassification: the
-- pretrained encoder and pooler with a new linear head (the checkpoint's missing keys),
-- initialised as Hugging Face does; AdamW (weight decay 0.01), the
-- step size rising linearly over the first 10% of the steps then falling linearly to 0
-- (transformers' get_linear_schedule_with_warmup), gradients clipped at norm 1.0. After each
-- epoch it prints the validation accuracy; at the end it saves the model with
-- save_pretrained, the class names in config.json's id2label (transformers loads the directory
-- as it is). The last line printed is "val accuracy: 0.xxxx".
local tide = require("tide")
local core = require("tide.core")
local nn = tide.nn
local F = nn.functional

local USAGE = [==[
usage: lua5.4 examples/bert_classify.lua [--epochs N] [--lr X] [--batch-size N]
       [--max-length N] [--limit N] [--val-limit N] [--seed N] [--device DEV] [--model DIR]
       [--data DIR] [--save DIR] [--min-fortunes N] [--logdir DIR] [--exact 1]
       [--init-head FILE] [--amp 1]]==]

local function die(msg)
    io.stderr:write("bert_classify: ", msg, "\n")
    os.exit(2)
end

local function parse(argv)
    local o = { epochs = 3, lr = 5e-5, batch_size = 32, max_length = 128, limit = 0,
        val_limit = 0, seed = 1, model = "models/all-MiniLM-L6-v2",
        data = "/usr/share/games/fortunes", save = "models/fortune-classifier",
        min_fortunes = 500, exact = 0, amp = 0 }
    local kinds = { epochs = "int", lr = "number", ["batch-size"] = "int",
        ["max-length"] = "int", limit = "int", ["val-limit"] = "int", seed = "int",
        device = "string", model = "string", data = "string", save = "string",
        ["min-fortunes"] = "int", logdir = "string", exact = "int", ["init-head"] = "string",
        amp = "int" }
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
        o[name:gsub("-", "_")] = v
        i = i + 1
    end
    for _, k in ipairs({ "epochs", "batch_size", "max_length" }) do
        if o[k] == 0 then
            die("--" .. k:gsub("_", "-") .. " must be at least 1")
        end
    end
    if o.max_length < 2 then
        die("--max-length must be at least 2 ([CLS] and [SEP])")
    end
    if o.amp > 1 then
        die("--amp is 0 or 1, got " .. o.amp)
    end
    local head = o.init_head and io.open(o.init_head, "rb")
    if o.init_head and not head then -- before the model is loaded
        die("--init-head " .. o.init_head .. ": no such file (bench/bert_classify.py " ..
            "--save-head FILE writes one)")
    end
    if head then
        head:close()
    end
    return o
end

local function read(path)
    local f = io.open(path, "rb")
    if not f then
        return nil
    end
    local s = f:read("a")
    f:close()
    return s
end

-- the fortunes of each plain-text file of dir (not the .dat/.u8 indexes), by file name; the
-- files hold fortunes separated by lines holding only "%"
local function read_fortunes(dir)
    local by_file, names = {}, {}
    local ls = io.popen("ls -1 '" .. dir:gsub("'", "'\\''") .. "' 2>/dev/null")
    for name in ls:lines() do
        local sub = io.open(dir .. "/" .. name .. "/.", "rb") -- skip subdirectories
        if sub then
            sub:close()
        elseif not name:match("%.dat$") and not name:match("%.u8$") then
            names[#names + 1] = name
        end
    end
    ls:close()
    table.sort(names)
    for _, name in ipairs(names) do
        local text, list, pos = "\n" .. (read(dir .. "/" .. name) or ""), {}, 1
        while pos <= #text + 1 do
            local a, b = text:find("\n%\n", pos, true)
            local piece = text:sub(pos, (a or #text + 1) - 1):match("^%s*(.-)%s*$")
            if piece ~= "" and piece ~= "%" then
                list[#list + 1] = piece
            end
            if not a then
                break
            end
            pos = b + 1
        end
        by_file[name] = list
    end
    return by_file, names
end

-- a seeded generator of its own (Park-Miller), so the split does not depend on tide's
local function rng(seed)
    local s = (seed * 48271 + 11) % 2147483647
    if s == 0 then
        s = 1
    end
    return function(n) -- an integer in 1..n
        s = s * 48271 % 2147483647
        return s % n + 1
    end
end

local function shuffle(list, rand)
    for i = #list, 2, -1 do
        local j = rand(i)
        list[i], list[j] = list[j], list[i]
    end
    return list
end

-- a redrawn bar on a terminal; off a terminal a line every ~10% of the epoch
local Progress = {}
Progress.__index = Progress

function Progress.new(title, total)
    local tty = core.isatty(1) and (os.getenv("TERM") or "dumb") ~= "dumb"
    return setmetatable({ title = title, total = total, tty = tty, t0 = core.wall_time(),
        last = 0, next_frac = 0.1 }, Progress)
end

function Progress:update(step, items, loss)
    local now = core.wall_time()
    local dt = math.max(now - self.t0, 1e-9)
    local frac = step / self.total
    local eta = (self.total - step) * dt / math.max(step, 1)
    local line = string.format("%s step %d/%d  loss %.4f  %.1f fortunes/s  ETA %d:%02d",
        self.title, step, self.total, loss, items / dt, math.floor(eta / 60),
        math.floor(eta % 60))
    if self.tty then
        if now - self.last < 0.2 and step < self.total then
            return
        end
        self.last = now
        local fill = math.floor(frac * 20 + 0.5)
        io.write("\r", line:gsub(" step ", " [" .. string.rep("=", fill) ..
            string.rep(" ", 20 - fill) .. "] ", 1), "  ")
        if step == self.total then
            io.write("\r", string.rep(" ", 100), "\r")
        end
    elseif frac >= self.next_frac and step < self.total then
        while self.next_frac <= frac do
            self.next_frac = self.next_frac + 0.1
        end
        print(line)
    end
    io.flush()
end

-- fn() under autocast to bfloat16 on dev's device type with --amp 1, else as it is
local function mixed(o, dev, fn)
    if o.amp == 1 then
        return tide.autocast(dev.type, { dtype = "bfloat16" }, fn)
    end
    return fn()
end

-- the accuracy of model on the (text, label) pairs, in length-sorted batches
local function evaluate(model, tok, examples, o, dev)
    model:eval()
    local order = {}
    for i = 1, #examples do
        order[i] = i
    end
    table.sort(order, function(a, b)
        local la, lb = #examples[a].text, #examples[b].text
        if la ~= lb then
            return la > lb
        end
        return a < b
    end)
    local correct = 0
    tide.no_grad(function()
        for first = 1, #order, 64 do
            local texts, labels = {}, {}
            for k = first, math.min(first + 63, #order) do
                local e = examples[order[k]]
                texts[#texts + 1], labels[#labels + 1] = e.text, e.label
            end
            local enc = tok(texts, { padding = true, truncation = true,
                max_length = o.max_length, device = dev })
            local logits = mixed(o, dev, function()
                return model(enc.input_ids, { attention_mask = enc.attention_mask,
                    token_type_ids = enc.token_type_ids }).logits
            end)
            local pred = logits:argmax(2):cpu():totable()
            for j, p in ipairs(pred) do
                if p == labels[j] then
                    correct = correct + 1
                end
            end
        end
    end)
    model:train()
    return correct / #examples
end

local function main(argv)
    local o = parse(argv)
    local dev = o.device and tide.device(o.device) or tide.best_device()
    if not read(o.model .. "/config.json") then
        die("no model in " .. o.model .. "; run `make models` first")
    end

    -- the classes: the files with at least --min-fortunes fortunes, in name order
    local by_file, names = read_fortunes(o.data)
    local classes, examples = {}, {}
    for _, name in ipairs(names) do
        if #by_file[name] >= o.min_fortunes then
            classes[#classes + 1] = name
            for _, text in ipairs(by_file[name]) do
                examples[#examples + 1] = { text = text, label = #classes }
            end
        end
    end
    if #classes < 2 then
        die(string.format("fewer than 2 files with at least %d fortunes in %s (apt-get " ..
            "install fortunes)", o.min_fortunes, o.data))
    end
    shuffle(examples, rng(o.seed))
    local n_train = math.floor(#examples * 0.8)
    local train, val = {}, {}
    for i, e in ipairs(examples) do
        if i <= n_train then
            if o.limit == 0 or #train < o.limit then
                train[#train + 1] = e
            end
        elseif o.val_limit == 0 or #val < o.val_limit then
            val[#val + 1] = e
        end
    end
    print(string.format("%d classes (%s), %d training and %d validation fortunes%s",
        #classes, table.concat(classes, ", "), #train, #val,
        (o.limit > 0 or o.val_limit > 0) and " (limited)" or ""))

    -- the pretrained encoder under a new head of #classes labels (Hugging Face's
    -- initialisation for the head: its weights are the checkpoint's missing keys)
    tide.manual_seed(o.seed)
    local bert = tide.models.bert
    local tok = tide.text.BertTokenizer.from_pretrained(o.model)
    local id2label = {}
    for i, name in ipairs(classes) do
        id2label[tostring(i - 1)] = name
    end
    local model = bert.BertForSequenceClassification.from_pretrained(o.model,
        { device = dev, id2label = id2label, strict = false })
    model.config.architectures = { "BertForSequenceClassification" }
    model:train()
    if o.init_head then
        local ok, head = pcall(tide.safetensors_load, o.init_head)
        if not ok then -- tide's message names the file and what is wrong with it
            die("--init-head: " .. tostring(head):gsub("^.-tide: ", "tide: "))
        end
        tide.no_grad(function()
            for _, k in ipairs({ "weight", "bias" }) do
                local t = head["classifier." .. k]
                local p = model.classifier[k]
                local want = table.concat(p.shape, "x")
                if not t or t.dtype ~= "float32" or table.concat(t.shape, "x") ~= want then
                    die(string.format("--init-head %s: expected classifier.%s, float32 %s",
                        o.init_head, k, want))
                end
                p:copy_(t)
            end
        end)
    end
    if o.exact == 1 then
        for _, m in ipairs(model:modules()) do
            if getmetatable(m) == nn.Dropout then
                m.p = 0
            end
        end
        tide.no_grad(function()
            model.classifier.weight:zero_()
        end)
    end

    local steps_per_epoch = math.ceil(#train / o.batch_size)
    local total = steps_per_epoch * o.epochs
    local warmup = math.floor(total * 0.1)
    local opt = tide.optim.AdamW(model:parameters(), { lr = o.lr, weight_decay = 0.01 })
    local sched = tide.optim.lr_scheduler.LambdaLR(opt, { lr_lambda = function(step)
        if step < warmup then
            return step / math.max(1, warmup)
        end
        return math.max(0, (total - step) / math.max(1, total - warmup))
    end })
    print(string.format("model: %s + a %d-class head, %d parameters, on %s; %d steps of %d " ..
        "(max length %d), lr %g, warmup %d steps", o.model, #classes,
        (function()
            local n = 0
            for _, p in ipairs(model:parameters()) do
                n = n + p:numel()
            end
            return n
        end)(), tostring(dev), total, o.batch_size, o.max_length, o.lr, warmup))
    if o.amp == 1 then
        print("mixed precision: autocast to bfloat16" .. (dev.type == "cpu" and
            (", bfloat16 gemm: " .. (tide.cpu_info().bf16_gemm or "none, widened to float32"))
            or ""))
    end

    local rand = rng(o.seed + 1)
    local acc
    -- --logdir: TensorBoard scalars (loss, learning rate, gradient norm each step; validation
    -- accuracy each epoch)
    local writer = o.logdir and tide.utils.tensorboard.SummaryWriter(o.logdir)
    local global = 0
    local t_all = core.wall_time()
    for epoch = 1, o.epochs do
        shuffle(train, rand)
        local bar = Progress.new(string.format("epoch %d/%d", epoch, o.epochs), steps_per_epoch)
        local t0, loss_sum, seen = core.wall_time(), 0, 0
        for step = 1, steps_per_epoch do
            local texts, labels = {}, {}
            for k = (step - 1) * o.batch_size + 1, math.min(step * o.batch_size, #train) do
                texts[#texts + 1], labels[#labels + 1] = train[k].text, train[k].label
            end
            local enc = tok(texts, { padding = true, truncation = true,
                max_length = o.max_length, device = dev })
            local target = tide.tensor(labels, { device = dev })
            local loss = mixed(o, dev, function()
                local logits = model(enc.input_ids, { attention_mask = enc.attention_mask,
                    token_type_ids = enc.token_type_ids }).logits
                return F.cross_entropy(logits, target)
            end)
            opt:zero_grad()
            loss:backward()
            local norm = nn.utils.clip_grad_norm_(model:parameters(), 1.0)
            local lr = opt.param_groups[1].lr
            opt:step()
            sched:step()
            local l = loss:item()
            if o.exact == 1 then
                print(string.format("step %d loss %.6f", global + 1, l))
            end
            global = global + 1
            if writer then
                writer:add_scalar("train/loss", l, global)
                writer:add_scalar("train/lr", lr, global)
                writer:add_scalar("train/grad_norm", tide.is_tensor(norm) and norm:item() or norm,
                    global)
            end
            loss_sum, seen = loss_sum + l * #texts, seen + #texts
            bar:update(step, seen, l)
        end
        local train_s = core.wall_time() - t0
        t0 = core.wall_time()
        acc = evaluate(model, tok, val, o, dev)
        if writer then
            writer:add_scalar("val/accuracy", acc, global)
            writer:flush()
        end
        print(string.format("epoch %d/%d: train loss %.4f, %.1f s (%.2f s/step); val accuracy " ..
            "%.4f (%d fortunes, %.1f s)", epoch, o.epochs, loss_sum / seen, train_s,
            train_s / steps_per_epoch, acc, #val, core.wall_time() - t0))
    end
    print(string.format("trained in %.1f s (chance: %.4f, the largest class: %.4f)",
        core.wall_time() - t_all, 1 / #classes, (function()
            local count = {}
            for _, e in ipairs(val) do
                count[e.label] = (count[e.label] or 0) + 1
            end
            local m = 0
            for _, c in pairs(count) do
                m = math.max(m, c)
            end
            return m / #val
        end)()))
    if o.save ~= "" then
        os.execute("mkdir -p '" .. o.save:gsub("'", "'\\''") .. "'")
        model:save_pretrained(o.save)
        -- the tokenizer's files beside it, so the directory is complete for either side
        for _, name in ipairs({ "tokenizer.json", "tokenizer_config.json",
            "special_tokens_map.json", "vocab.txt" }) do
            local bytes = read(o.model .. "/" .. name)
            if bytes then
                local f = assert(io.open(o.save .. "/" .. name, "wb"))
                f:write(bytes)
                f:close()
            end
        end
        print("saved to " .. o.save .. " (save_pretrained's config.json + model.safetensors, " ..
            "and the tokenizer's files)")
    end
    print(string.format("val accuracy: %.4f", acc))
end

main(arg)
