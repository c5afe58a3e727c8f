-- Checkpoint directories as Hugging Face's save_pretrained writes them: config.json and
-- model.safetensors (or shards listed in model.safetensors.index.json). install(cls, name)
-- gives a model class
--   cls.from_pretrained(dir[, {device =, dtype = "float32", strict = true}]) -> model, info
--   model:save_pretrained(dir)
-- info = {missing_keys = {...}, unexpected_keys = {...}}, sorted, in Hugging Face's names:
-- missing ones are the model's (each tensor once: a tied decoder is not listed apart), the
-- unexpected ones as the file spells them. strict raises when either list is not empty.
--
-- Keys are read as transformers reads them: 0-based layer indices (tide's own 1-based
-- state_dict keys too), with or without the "bert." prefix of the task models (a BertModel
-- checkpoint loads into a task model and back), the old LayerNorm gamma/beta names, the tied
-- decoder under either name; "position_ids" keys (a buffer older versions saved) are ignored.
-- The tensors go straight to the device and dtype asked for: the model is built without
-- drawing, each parameter takes its checkpoint tensor (converted once), and only missing ones
-- are initialised (Hugging Face's init). A pickle (pytorch_model.bin) is never executed.
local core = require("tide.core")
local autograd = require("tide.autograd")
local serialize = require("tide.serialize")
local json = require("tide.models._json")
local files = require("tide._files")
local args = require("tide.op_args")
local BertConfig = require("tide.models.bert.config")
local P = require("tide.models.bert.params")
local raise = autograd.raise

local M = {}

local FLOAT = { float32 = true, float64 = true, float16 = true, bfloat16 = true }

-- the message of an error caught from tide's own code, without its position
local function message(err)
    local s = tostring(err)
    return s:match("tide: .*") or s
end

-- tide's 1-based list indices <-> Hugging Face's 0-based ones (every all-digit part of a key)
local function shift(name, by)
    return (name:gsub("[^.]+", function(part)
        if part:match("^%d+$") then
            return tostring(tonumber(part) + by)
        end
    end))
end
M.to_hf_name = function(name) return shift(name, -1) end
M.from_hf_name = function(name) return shift(name, 1) end

-- every parameter under each name it has (a tied one under two), in Hugging Face's names;
-- canonical[name] is the name its tensor is saved under (its first place)
local function parameter_names(model)
    local order, tensor, canonical, first = {}, {}, {}, {}
    for _, nm in ipairs(model:named_modules()) do
        local path, m = nm[1], nm[2]
        for _, pn in ipairs(m._params) do
            local p = rawget(m, pn)
            if p ~= nil then
                local name = M.to_hf_name(path == "" and pn or (path .. "." .. pn))
                if not first[p] then
                    first[p] = name
                    order[#order + 1] = name
                end
                tensor[name], canonical[name] = p, first[p]
            end
        end
    end
    return order, tensor, canonical
end

-- the checkpoint's tensors: model.safetensors, or the shards of model.safetensors.index.json
local function read_checkpoint(dir, cls_name, who)
    local path = dir .. "/model.safetensors"
    local shards = { path }
    if not files.exists(path) then
        local index = dir .. "/model.safetensors.index.json"
        if files.exists(index) then
            local ok, t = pcall(json.decode, files.read_or_raise(index, who), index)
            if not ok or type(t) ~= "table" or type(t.weight_map) ~= "table" then
                raise("tide: " .. who .. ": " .. index .. " has no weight_map object" ..
                    (ok and "" or (": " .. message(t))))
            end
            local seen
            shards, seen = {}, {}
            for _, f in pairs(t.weight_map) do
                if not seen[f] then
                    seen[f] = true
                    shards[#shards + 1] = dir .. "/" .. f
                end
            end
            table.sort(shards)
            path = index
        else
            for _, other in ipairs({ "pytorch_model.bin", "tf_model.h5", "flax_model.msgpack" }) do
                if files.exists(dir .. "/" .. other) then
                    raise(string.format("tide: %s: %s holds %s only; tide reads safetensors " ..
                        "and never runs a pickle. Convert it once with transformers: python " ..
                        "-c \"from transformers import %s as M; M.from_pretrained('%s')" ..
                        ".save_pretrained('%s', safe_serialization=True)\"", who, dir, other,
                        cls_name, dir, dir))
                end
            end
            raise(string.format("tide: %s: no model.safetensors in %s; expected a directory " ..
                "written by save_pretrained (config.json + model.safetensors)", who, dir))
        end
    end
    local tensors, from = {}, {}
    for _, f in ipairs(shards) do
        local ok, t = pcall(serialize.load, f, "cpu") -- a Hugging Face file is device-free
        if not ok then
            raise("tide: " .. who .. ": " .. message(t):gsub("^tide: load: ", ""))
        end
        for k, v in pairs(t) do
            tensors[k], from[k] = v, f
        end
    end
    return tensors, path
end

-- the old LayerNorm names gamma and beta, as transformers renames them on load
local function renamed(k)
    return (k:gsub("LayerNorm%.gamma$", "LayerNorm.weight"):gsub("LayerNorm%.beta$",
        "LayerNorm.bias"))
end

-- checkpoint key -> the model's (Hugging Face) name, or nil when it names nothing
local function map_keys(ckpt, tensor, prefix, num_layers)
    local one_based, zero_based = false, false
    local has_prefix = false
    for k in pairs(ckpt) do
        local n = k:match("%.layer%.(%d+)%.")
        if n == "0" then
            zero_based = true
        elseif n and tonumber(n) == num_layers then
            one_based = true
        end
        if k:sub(1, 5) == "bert." then
            has_prefix = true
        end
    end
    local map = {}
    for k in pairs(ckpt) do
        local name = renamed(k)
        if one_based and not zero_based then
            name = M.to_hf_name(name)
        end
        if prefix == "" and has_prefix and name:sub(1, 5) == "bert." then
            name = name:sub(6)
        elseif prefix ~= "" and not has_prefix and tensor[prefix .. name] then
            name = prefix .. name
        end
        if tensor[name] then
            map[k] = name
        end
    end
    return map
end

local function is_ignored(k)
    return k:match("position_ids$") ~= nil
end

function M.load(cls, cls_name, prefix, dir, opts)
    local who = cls_name .. ".from_pretrained"
    if type(dir) ~= "string" then
        raise("tide: " .. who .. ": expected a directory path (a string), got " .. type(dir))
    end
    opts = opts or {}
    if type(opts) ~= "table" then
        raise("tide: " .. who .. ": expected an options table {device =, dtype =, strict =, " ..
            "num_labels =, id2label =}, got " .. type(opts))
    end
    core._check_options(opts, who, { "device", "dtype", "strict", "num_labels", "id2label" })
    local dtype = opts.dtype or "float32"
    if not FLOAT[dtype] then
        raise(string.format('tide: %s: dtype "%s" is not a floating-point dtype; use ' ..
            '"float32", "float64", "float16" or "bfloat16"', who, tostring(dtype)))
    end
    local dev = core.device("cpu")
    if opts.device ~= nil then
        local ok, d = pcall(core.device, opts.device)
        if not ok then
            raise(message(d):gsub("^tide: device: ", "tide: " .. who .. ": "))
        end
        dev = d
    end
    local strict = opts.strict
    if strict == nil then
        strict = true
    elseif type(strict) ~= "boolean" then
        raise("tide: " .. who .. ": expected strict to be a boolean, got " .. tostring(strict))
    end
    dir = dir:gsub("/+$", "")
    if dir == "" then
        dir = "/"
    end
    local cfg_path = dir .. "/config.json"
    if not files.exists(cfg_path) then
        raise(string.format("tide: %s: no config.json in %s; expected a Hugging Face model " ..
            "directory (config.json + model.safetensors, as save_pretrained writes it; " ..
            "`make models` fetches all-MiniLM-L6-v2)", who, dir))
    end
    local ok, t = pcall(json.decode, files.read_or_raise(cfg_path, who), cfg_path)
    if not ok then
        raise("tide: " .. who .. ": " .. message(t):gsub("^tide: [^:]*: ", ""))
    end
    if type(t) ~= "table" or json.is_array(t) then
        raise("tide: " .. who .. ": " .. cfg_path .. " does not hold a JSON object")
    end
    if t.model_type ~= nil and t.model_type ~= "bert" then
        raise(string.format('tide: %s: %s is a "%s" model, not BERT; tide.models.bert loads ' ..
            'model_type "bert" only', who, cfg_path, tostring(t.model_type)))
    end
    -- a new head's labels, as transformers' from_pretrained(dir, num_labels = n): they replace
    -- the checkpoint's (whose head then no longer fits: load it with strict = false)
    if opts.id2label ~= nil or opts.num_labels ~= nil then
        t.id2label, t.label2id, t.num_labels = opts.id2label, nil, opts.num_labels
    end
    local config
    ok, config = pcall(BertConfig, t)
    if not ok then
        raise("tide: " .. who .. ": " .. cfg_path .. ": " ..
            message(config):gsub("^tide: BertConfig: ", ""))
    end
    local ckpt, ckpt_path = read_checkpoint(dir, cls_name, who)

    local model = cls(config, nil, true)
    local order, tensor, canonical = parameter_names(model)
    local map = map_keys(ckpt, tensor, prefix, config.num_hidden_layers)
    local found, unexpected = {}, {}
    local keys = {}
    for k in pairs(ckpt) do
        keys[#keys + 1] = k
    end
    table.sort(keys)
    -- canonical names first, so that a tied alias defers to its canonical key
    for pass = 1, 2 do
        for _, k in ipairs(keys) do
            local name = map[k]
            if name then
                local c = canonical[name]
                if (pass == 1) == (c == name) and not found[c] then
                    local v, p = ckpt[k], tensor[c]
                    if not args.same_shape(v.shape, p.shape) then
                        raise(string.format("tide: %s: %s: '%s' has shape %s, but config.json " ..
                            "makes it %s; the checkpoint and its config.json do not match",
                            who, ckpt_path, k, args.shape_str(v.shape), args.shape_str(p.shape)))
                    end
                    found[c] = v
                end
            elseif pass == 1 and not is_ignored(k) then
                unexpected[#unexpected + 1] = renamed(k)
            end
        end
    end
    table.sort(unexpected)
    local missing = {}
    for _, name in ipairs(order) do
        if not found[name] then
            missing[#missing + 1] = name
        end
    end
    table.sort(missing)
    local mismatch = strict and args.keys_mismatch(missing, unexpected)
    if mismatch then
        raise(string.format("tide: %s: %s does not match %s: %s; pass {strict = false} to " ..
            "load it anyway (missing weights initialised as Hugging Face does, unexpected " ..
            "ones ignored)", who, ckpt_path, cls_name, mismatch))
    end
    local fresh = {}
    autograd.no_grad(function()
        for _, name in ipairs(order) do
            local p, v = tensor[name], found[name]
            if v then
                if v.dtype ~= dtype then
                    v = v:to(dtype)
                end
                if v.device ~= dev then
                    v = v:to(dev)
                end
            else
                v = core.empty(p.shape, { dtype = dtype, device = dev })
                fresh[p] = true
            end
            p:set_(v)
        end
    end)
    if next(fresh) then
        P.init_weights(model, config.initializer_range, fresh)
    end
    model:eval()
    return model, { missing_keys = missing, unexpected_keys = unexpected }
end

-- mkdir -p: core._mkdir where the binding has it, else the shell's
local function make_dir(dir, who)
    if not core._mkdir then
        local quoted = "'" .. dir:gsub("'", "'\\''") .. "'"
        local r = os.execute("mkdir -p -- " .. quoted)
        if r ~= true and r ~= 0 then
            raise(string.format("tide: %s: cannot make directory %s", who, dir))
        end
        return
    end
    local path = dir:sub(1, 1) == "/" and "" or nil
    for part in dir:gmatch("[^/]+") do
        path = path and (path .. "/" .. part) or part
        local ok, err = core._mkdir(path)
        if not ok then
            raise(string.format("tide: %s: cannot make directory %s: %s", who, path,
                tostring(err)))
        end
    end
end

function M.save(model, cls_name, dir)
    local who = cls_name .. ":save_pretrained"
    if type(dir) ~= "string" or dir == "" then
        raise("tide: " .. who .. ": expected a directory path (a string), got " .. tostring(dir))
    end
    make_dir(dir, who)
    local order, tensor = parameter_names(model)
    local sd, dtype = {}, nil
    for _, name in ipairs(order) do
        -- on the host, as a Hugging Face file is (tide.save records other devices)
        sd[name] = tensor[name]:detach():to("cpu")
        dtype = dtype or sd[name].dtype
    end
    local cfg = model.config:to_dict()
    cfg.architectures = json.array({ cls_name })
    cfg.torch_dtype = dtype
    cfg.model_type = "bert"
    local ok, err = pcall(serialize.save, dir .. "/model.safetensors", sd, { format = "pt" })
    if not ok then
        raise("tide: " .. who .. ": " .. message(err):gsub("^tide: save: ", ""))
    end
    local path = dir .. "/config.json"
    files.write(path, json.encode(cfg) .. "\n", who)
    return dir
end

-- from_pretrained and save_pretrained on a model class; prefix: "bert." for the task models
function M.install(cls, cls_name, prefix)
    cls.from_pretrained = function(dir, opts)
        return M.load(cls, cls_name, prefix, dir, opts)
    end
    cls.save_pretrained = function(self, dir)
        return M.save(self, cls_name, dir)
    end
end

return M
