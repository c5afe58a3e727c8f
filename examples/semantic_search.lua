-- semantic_search.lua — find the fortunes closest in meaning to a query: every fortune of the
-- Debian fortunes corpus (the char LM's text) is embedded once with all-MiniLM-L6-v2
-- (tide.models.SentenceEncoder), the vectors are cached with tide.save, and a query is answered
-- with the k fortunes of highest cosine similarity.
--
--   make models                                                 once: models/all-MiniLM-L6-v2
--   lua5.4 examples/semantic_search.lua --query "computers never work when you need them"
--   lua5.4 examples/semantic_search.lua --query "cats" --k 3 --device cuda
--
-- Flags: --query TEXT (without it: embed and cache only)   --k N (5)
--        --device DEV (tide.best_device())   --model DIR (models/all-MiniLM-L6-v2)
--        --data DIR (/usr/share/games/fortunes: its plain-text files, in name order)
--        --cache DIR (models/cache)   --batch-size N (64)
--        --logdir DIR (off): the vectors for TensorBoard's projector, labelled by fortune file
--
-- The cache file's name holds the model's name and a hash of the corpus and the model's files
-- (models/cache/semantic_search-<model>-<hash>.safetensors): another model or corpus gets a
-- file of its own. The first run embeds all 15,221 fortunes (minutes on a 2-core CPU); the
-- next ones load the vectors and embed the query only.
local tide = require("tide")
local core = require("tide.core")

local USAGE = [==[
usage: lua5.4 examples/semantic_search.lua [--query TEXT] [--k N] [--device DEV] [--model DIR]
       [--data DIR] [--cache DIR] [--batch-size N] [--logdir DIR]]==]

local function die(msg)
    io.stderr:write("semantic_search: ", msg, "\n")
    os.exit(2)
end

local function parse(argv)
    local o = { k = 5, model = "models/all-MiniLM-L6-v2", data = "/usr/share/games/fortunes",
        cache = "models/cache", batch_size = 64 }
    local kinds = { query = "string", k = "int", device = "string", model = "string",
        data = "string", cache = "string", ["batch-size"] = "int", logdir = "string" }
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
        if kind == "int" then
            v = math.tointeger(tonumber(val))
            if not v or v < 1 then
                die("--" .. name .. " expects a positive integer, got '" .. val .. "'")
            end
        end
        o[name:gsub("-", "_")] = v
        i = i + 1
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

-- every fortune of dir's plain-text files (not fortune's .dat/.u8 indexes) in name order, as
-- {text =, file =}: the files hold fortunes separated by lines holding only "%"
local function read_fortunes(dir)
    local names = {}
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
    local out = {}
    for _, name in ipairs(names) do
        local text = "\n" .. (read(dir .. "/" .. name) or "")
        local pos = 1
        while pos <= #text + 1 do
            local a, b = text:find("\n%\n", pos, true)
            local piece = text:sub(pos, (a or #text + 1) - 1):match("^%s*(.-)%s*$")
            if piece ~= "" and piece ~= "%" then
                out[#out + 1] = { text = piece, file = name }
            end
            if not a then
                break
            end
            pos = b + 1
        end
    end
    return out
end

-- FNV-1a over the strings' bytes (32 bits): the cache key of a corpus and a model
local function hash(strings)
    local h = 2166136261
    for _, s in ipairs(strings) do
        for i = 1, #s, 4096 do
            local bytes = { s:byte(i, math.min(i + 4095, #s)) }
            for j = 1, #bytes do
                h = ((h ~ bytes[j]) * 16777619) & 0xffffffff
            end
        end
        h = ((h ~ 0xff) * 16777619) & 0xffffffff -- a separator: {"ab"} differs from {"a", "b"}
    end
    return string.format("%08x", h)
end

-- what identifies the model: its config, pooling and sentence config, and its weights' size
local function model_key(dir)
    local parts = {}
    for _, name in ipairs({ "config.json", "modules.json", "1_Pooling/config.json",
        "sentence_bert_config.json", "tokenizer.json" }) do
        parts[#parts + 1] = read(dir .. "/" .. name) or ""
    end
    local f = io.open(dir .. "/model.safetensors", "rb")
    parts[#parts + 1] = f and tostring(f:seek("end")) or ""
    if f then
        f:close()
    end
    return parts
end

local function main(argv)
    local o = parse(argv)
    local dev = o.device and tide.device(o.device) or tide.best_device()
    if not read(o.model .. "/modules.json") then
        die("no sentence-transformers model in " .. o.model .. "; run `make models` first")
    end
    local fortunes = read_fortunes(o.data)
    if #fortunes == 0 then
        die("no fortunes in " .. o.data .. " (apt-get install fortunes)")
    end
    local texts = {}
    for i, f in ipairs(fortunes) do
        texts[i] = f.text
    end
    local key = hash(model_key(o.model)) .. hash(texts):sub(1, 4)
    local model_name = o.model:gsub("/+$", ""):match("([^/]+)$")
    local cache = string.format("%s/semantic_search-%s-%s.safetensors", o.cache, model_name, key)

    local t0 = core.wall_time()
    local enc = tide.models.SentenceEncoder.from_pretrained(o.model, { device = dev })
    print(string.format("model: %s on %s (%.1f s to load)", model_name, tostring(dev),
        core.wall_time() - t0))

    local vectors
    local cached = read(cache) and tide.load(cache, { device = dev })
    if cached and cached.vectors and cached.vectors.shape[1] == #texts then
        vectors = cached.vectors
        print(string.format("corpus: %d fortunes from %s, vectors from %s", #texts, o.data,
            cache))
    else
        print(string.format("corpus: %d fortunes from %s: embedding them once ...", #texts,
            o.data))
        t0 = core.wall_time()
        vectors = enc:encode(texts, { batch_size = o.batch_size, progress = true })
        local dt = core.wall_time() - t0
        os.execute("mkdir -p '" .. o.cache:gsub("'", "'\\''") .. "'")
        tide.save(cache, { vectors = vectors }, { model = model_name, corpus = o.data,
            fortunes = #texts })
        print(string.format("embedded %d fortunes in %.1f s (%.0f sentences/s), cached in %s",
            #texts, dt, #texts / dt, cache))
    end

    if o.logdir then -- the projector: every fortune a point, coloured by its file
        local files = {}
        for i, f in ipairs(fortunes) do
            files[i] = f.file
        end
        local w = tide.utils.tensorboard.SummaryWriter(o.logdir)
        w:add_embedding(vectors, { metadata = files, tag = "fortunes" })
        w:close()
        print("projector files in " .. o.logdir .. " (tensorboard --logdir " .. o.logdir .. ")")
    end

    if not o.query then
        return
    end
    t0 = core.wall_time()
    local q = enc:encode({ o.query })                   -- [1, H], unit length
    local scores = vectors:matmul(q:t()):reshape({ -1 }) -- cosine similarity: unit vectors
    local k = math.min(o.k, #texts)
    local best, idx = scores:topk(k)
    best, idx = best:cpu():totable(), idx:cpu():totable()
    print(string.format("\nquery: %q  (%.0f ms)\n", o.query, (core.wall_time() - t0) * 1000))
    for r = 1, k do
        local f = fortunes[idx[r]]
        print(string.format("%d. %.3f  [%s]", r, best[r], f.file))
        for line in (f.text .. "\n"):gmatch("(.-)\n") do
            print("     " .. line)
        end
        print()
    end
end

main(arg)
