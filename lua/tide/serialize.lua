--- tide.save / tide.load: checkpoints in the safetensors format.
--
--     tide.save("model.safetensors", model:state_dict() [, metadata])
--     local sd, metadata = tide.load("model.safetensors" [, {device = "cuda"}])
--     model:load_state_dict(sd)
--
--     tide.save("ckpt.safetensors", {model = model:state_dict(), optimizer = opt:state_dict(),
--         epoch = 5, config = {lr = 0.1, name = "run1"}})   -- PyTorch's checkpoint dict
--
-- A table of tensors under string names, none requiring grad, is written as it is (the bytes of
-- Python's safetensors.save). Any other table (nested tables, numbers, strings, booleans, list
-- keys, a tensor that requires grad or an nn.Parameter, which load gives back as such) is
-- a checkpoint tree: its tensors are written under their paths joined by "." (as Python's
-- reader sees them) and the tree itself, leaves and tensor names, as JSON in the metadata key
-- "tide-tree" (lua/tide/checkpoint_tree.lua), from which load rebuilds it.
-- save: a table name -> tensor (tensors on any device and with any strides: they are copied to
-- the host as needed), and optional metadata, a table of strings (numbers are converted).
-- Tensors are laid out as the reference writer lays them out (by dtype, widest first, then by
-- name), so the same table gives the same bytes as Python's safetensors.save. The file is
-- written under a temporary name and renamed: a failed save leaves no partial file.
-- load: every tensor, on opts.device (default: the CPU), and the metadata table (empty when the
-- file has none). The file is validated completely before any tensor is allocated; a bad file
-- raises "tide: load: <file>: <fault>". Files of the reference Python `safetensors` package
-- load, and the files tide writes load there (dtypes F32 F64 F16 BF16 I32 I64 U8 BOOL).

local core = require("tide.core")
local tree = require("tide.checkpoint_tree")
local pytorch_args = require("tide.pytorch_args")

local M = {}

-- the metadata key of the devices the tensors were saved from
local DEVICES = "tide-devices"

-- the reference writer's order: dtypes in descending order of its Dtype enum, then names
local RANK = { int64 = 8, float64 = 7, float32 = 6, int32 = 5, bfloat16 = 4, float16 = 3,
    uint8 = 2, bool = 1 }

-- re-raises a core error at the caller of save/load (level 3: past this helper and save/load)
local function check(ok, ...)
    if not ok then
        local msg = tostring((...))
        error(msg:match("tide:.*") or msg, 3)
    end
    return ...
end

-- a table of tensors under string names: the plain safetensors layout
local function flat_tensors(t)
    for k, v in pairs(t) do
        if type(k) ~= "string" or not core.is_tensor(v) then
            return false
        end
    end
    return true
end

-- a table of tensors of which one requires grad or is an nn.Parameter: torch.save keeps both
-- (torch.load gives a Parameter that requires grad back), which the checkpoint tree records
local function grad_flags(t)
    local params = require("tide.nn._parameters")
    for _, v in pairs(t) do
        if v.requires_grad or params[v] then
            return true
        end
    end
    return false
end

function M.save(path, tensors, metadata)
    -- torch.save(obj, f)'s order, as a ported script calls it: the file last, unambiguous
    -- beside tide's (a string is never a table of tensors)
    if (type(path) == "table" or core.is_tensor(path)) and type(tensors) == "string" and
        metadata == nil then
        path, tensors = tensors, path
    end
    if type(path) ~= "string" then
        error("tide: save: path must be a string, got " .. type(path), 2)
    end
    local complex = require("tide.complex.tensor").is(tensors)
    if type(tensors) ~= "table" or core.is_tensor(tensors) or complex then
        error("tide: save: expected a table of name -> tensor (e.g. model:state_dict()) or a "
            .. "checkpoint table ({model = model:state_dict(), epoch = 3}), got "
            .. (core.is_tensor(tensors) and "a tensor (save {name = tensor})" or complex and
                "a complex tensor (save {name = z})" or type(tensors)), 2)
    end
    local tree_json
    tree.settle(tensors)
    if not flat_tensors(tensors) or grad_flags(tensors) then
        local ok, flat, tj = pcall(tree.flatten, tensors, path)
        if not ok then
            error(flat, 2)
        end
        tensors, tree_json = flat, tj
    end
    local names = {}
    for k in pairs(tensors) do
        if type(k) ~= "string" then
            error(string.format("tide: save: %s: key %s is a %s; tensor names must be strings",
                path, tostring(k), type(k)), 2)
        end
        names[#names + 1] = k
    end
    local rank = {}
    for _, k in ipairs(names) do
        local ok, dt = pcall(function() return tensors[k].dtype end)
        rank[k] = ok and RANK[dt] or 0 -- not a tensor: the core names it below
    end
    table.sort(names, function(a, b)
        if rank[a] ~= rank[b] then
            return rank[a] > rank[b]
        end
        return a < b
    end)
    local list = {}
    for i, k in ipairs(names) do
        list[i] = tensors[k]
    end
    local meta
    if metadata ~= nil then
        if type(metadata) ~= "table" then
            error("tide: save: metadata must be a table of strings, got " .. type(metadata), 2)
        end
        meta = {}
        for k, v in pairs(metadata) do
            if (type(k) ~= "string" and type(k) ~= "number")
                or (type(v) ~= "string" and type(v) ~= "number") then
                error(string.format("tide: save: %s: metadata %s = %s: keys and values must be "
                    .. "strings or numbers", path, tostring(k), tostring(v)), 2)
            end
            meta[tostring(k)] = tostring(v)
        end
        if meta[tree.KEY] ~= nil then
            error(("tide: save: %s: metadata key %q is tide's (the checkpoint tree); use "
                .. "another name"):format(path, tree.KEY), 2)
        end
    end
    if tree_json then
        meta = meta or {}
        meta[tree.KEY] = tree_json
    end
    -- torch.save records each storage's device and torch.load restores it: the names of the
    -- tensors not on "cpu", one "device\tname" a line (none for an all-CPU file, whose bytes
    -- stay those of Python's safetensors.save)
    local placed = {}
    for _, k in ipairs(names) do
        local ok, d = pcall(function() return tostring(tensors[k].device) end)
        if ok and d ~= "cpu" then
            placed[#placed + 1] = d .. "\t" .. k
        end
    end
    if #placed > 0 then
        meta = meta or {}
        if meta[DEVICES] ~= nil then
            error(("tide: save: %s: metadata key %q is tide's (the tensors' devices); use "
                .. "another name"):format(path, DEVICES), 2)
        end
        meta[DEVICES] = table.concat(placed, "\n")
    end
    check(pcall(core.safetensors_save, path, names, list, meta))
end

-- an optimizer's state dict in what was loaded (the file itself, or a checkpoint's entry)
-- reads as PyTorch's nested dict again: sd["param_groups"][1].lr (optim/state_dict.lua)
local function adopt_state_dicts(t, depth, seen)
    if seen[t] or depth > 16 or require("tide.optim.state_dict").adopt(t) then
        return
    end
    seen[t] = true
    for _, v in pairs(t) do
        if type(v) == "table" and getmetatable(v) == nil then
            adopt_state_dicts(v, depth + 1, seen)
        end
    end
end

-- what a file torch.save wrote is, named when tide.load cannot read it: PyTorch's zip archive
-- (torch.save since 1.6) or its legacy pickle (a protocol 2-5 opcode first)
local function torch_file_hint(path)
    local f = io and io.open(path, "rb") -- (a sandboxed host may have no io library)
    local head = f and f:read(2) or ""
    if f then
        f:close()
    end
    local zip, pickle = head == "PK", head:byte(1) == 128 and (head:byte(2) or 0) >= 2 and
        (head:byte(2) or 0) <= 5
    if not (zip or pickle) then
        return ""
    end
    return ("; it looks like a file of torch.save (%s), which tide does not read (unpickling "
        .. "runs code): convert it in Python with safetensors.torch.save_file(torch.load(f), "
        .. "\"model.safetensors\") (a state_dict: a dict of tensors)"):format(zip and
        "a zip archive of pickles" or "a legacy pickle")
end

-- load(path[, map_location][, {device =, map_location =, weights_only =, mmap =}]): torch.load's
-- map_location by position too (a device or its name)
function M.load(path, ...)
    if type(path) ~= "string" then
        error("tide: load: path must be a string, got " .. type(path), 2)
    end
    local opts = pytorch_args.merge("load", { "map_location" }, ...) or {}
    if type(opts) ~= "table" then
        error("tide: load: options must be a table, e.g. {device = \"cuda\"}", 2)
    end
    core._check_options(opts, "load", { "device", "map_location", "weights_only", "mmap" })
    -- torch.load's mmap: tide reads the file's tensors into memory either way (the values are
    -- the same; only when the bytes are read differs), so true and false load alike
    if opts.mmap ~= nil and type(opts.mmap) ~= "boolean" then
        error("tide: load: mmap must be a boolean, got " .. tostring(opts.mmap), 2)
    end
    -- torch.load's weights_only: tide never runs code from a file, so both load the same
    if opts.weights_only ~= nil and type(opts.weights_only) ~= "boolean" then
        error("tide: load: weights_only must be a boolean, got " .. type(opts.weights_only), 2)
    end
    -- torch.load's map_location, as a device: the one spelling of it tide takes
    local where = opts.device
    local mapper -- torch.load's callable map_location(storage, location)
    if opts.map_location ~= nil then
        if where ~= nil then
            error("tide: load: device and map_location name the same thing; give one", 2)
        end
        local ml = opts.map_location
        if type(ml) == "table" and not core.is_tensor(ml) and getmetatable(ml) == nil then
            -- torch.load's dict: saved location -> location ({["cuda:1"] = "cuda:0"})
            for k, v in pairs(ml) do
                -- a key is a saved location, matched as a string (torch.load's dict): it need
                -- not exist here ({["cuda:0"] = "cpu"} on a machine without CUDA)
                local okk = type(k) == "string" and (k:match("^cpu:?%d*$") or
                    k:match("^cuda:?%d*$") or pcall(core.device, k))
                local okv = (type(v) == "string" or type(v) == "userdata") and pcall(core.device, v)
                if not (okk and okv) then
                    error(("tide: load: map_location[%s] = %s: a dict map_location maps device "
                        .. "names to devices ({[\"cuda:1\"] = \"cuda:0\"})"):format(tostring(k),
                        tostring(v)), 2)
                end
            end
            mapper = function(t, loc)
                local to = ml[loc]
                return to ~= nil and t:to(to) or nil
            end
        elseif type(ml) == "function" then
            mapper = ml
        else
            where = opts.map_location
        end
    end
    -- a device only (never a dtype name, which t:to would take as a cast), checked before
    -- the file is read
    local dev
    if where ~= nil then
        local ok, d = pcall(core.device, where)
        if not ok then -- the device's message, named after the call the user made
            d = tostring(d):gsub("tide: device: ", "tide: load: ", 1)
        end
        dev = check(ok, d)
    end
    local okl, tensors, metadata = pcall(core.safetensors_load, path)
    if not okl then
        local msg = tostring(tensors)
        msg = (msg:match("tide:.*") or msg) .. torch_file_hint(path)
        error(msg, 2)
    end
    -- each tensor's saved device ("cpu" unless the file records another)
    local saved = {}
    if metadata[DEVICES] ~= nil then
        for line in tostring(metadata[DEVICES]):gmatch("[^\n]+") do
            local d, name = line:match("^([^\t]+)\t(.*)$")
            if d then
                saved[name] = d
            end
        end
        metadata[DEVICES] = nil
    end
    if dev == nil then
        -- PyTorch's map_location function is called with each storage, read onto the CPU, and
        -- its saved location; nil (or no map_location) restores it to that location
        local mapped, order = {}, {}
        for name in pairs(tensors) do
            order[#order + 1] = name
        end
        table.sort(order) -- the map_location calls (and a bad result's message) in name order
        for _, name in ipairs(order) do
            local t = tensors[name]
            local loc = saved[name] or "cpu"
            local r = mapper and mapper(t, loc)
            if r ~= nil and not core.is_tensor(r) then
                error(("tide: load: %s: map_location returned a %s for %s; return a tensor "
                    .. "(storage:to(device)) or nil"):format(path, type(r), name), 2)
            end
            if r == nil and loc ~= "cpu" then
                local ok, moved = pcall(function() return t:to(loc) end)
                if not ok then
                    error(("tide: load: %s: %s was saved on %s, which is not available here "
                        .. "(%s); pass map_location = \"cpu\" (or another device)"):format(path,
                        name, loc, tostring(moved):match("tide:.*") or tostring(moved)), 2)
                end
                r = moved
            end
            mapped[name] = r or t
        end
        tensors = mapped
    end
    if dev ~= nil then
        local ok, err = pcall(function()
            for name, t in pairs(tensors) do
                tensors[name] = t:to(dev)
            end
        end)
        check(ok, err)
    end
    if metadata[tree.KEY] ~= nil then
        local ok, t = pcall(tree.rebuild, metadata[tree.KEY], tensors, path)
        if not ok then
            error(t, 2)
        end
        metadata[tree.KEY] = nil
        adopt_state_dicts(t, 1, {})
        return t, metadata
    end
    adopt_state_dicts(tensors, 1, {})
    return tensors, metadata
end

return M
