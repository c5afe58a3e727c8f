-- tide.checkpoint_tree: a checkpoint table as PyTorch scripts save one
-- (torch.save({model = ..., optimizer = ..., epoch = 5}, f)) in what a safetensors file holds:
-- flatten(t, path) -> {name = tensor}, and the tree as JSON for the metadata key "tide-tree";
-- rebuild(json, tensors, path) -> the same table, its tensors those the file loaded.
--
-- A node is a JSON array: ["t", name] a tensor (written once under the path that first reached
-- it, or a view of the same place, shape and strides: tied weights stay tied), ["i", "12"] an
-- integer, ["f", "0.1"] a float ("%.17g", "inf", "-inf", "nan", "-0.0": exact, and what JSON
-- cannot write), ["s", text] a string of printable ASCII, ["x", hex] any other string (the
-- header stays ASCII, whatever bytes it holds), ["b", true] a boolean, ["{", [[key, node], ...]]
-- a table, its keys nodes of the scalar kinds (an ordered table such as a state_dict loads as a
-- plain one). A table reached twice is written twice.
--
-- A whole module saves as torch.save(model, f) pickles one: ["m", class, entries] holds its own
-- fields (children, parameters, its bookkeeping) as a table's, and class the name its class
-- is found by again (lua/tide/checkpoint_names.lua: "tide.nn.Linear", or "Net" for a class
-- made by nn.Module:extend("Net")). Every "{" and "m" node has a number, its place in the
-- order the nodes open (from 1); a module reached again, or a table reached again inside a
-- module (a Sequential's child is its entry and in its _modules), is ["r", "n"]: the same
-- table again, so the loaded module's sharing (and any cycle) is the saved one's. A function
-- of tide's is ["fn", "tide.nn.functional.relu"] (a TransformerEncoderLayer's activation). A
-- tensor that requires grad is ["t", name, "g"], a parameter ["t", name, "p"] (and "pg" when
-- it requires grad), so a loaded module's parameters are parameters again.
-- A complex tensor (lua/tide/complex/tensor.lua) is ["c", name, flags]: its real [..., 2] pair
-- as a tensor node, wrapped again at load.
-- A cycle outside a module, another function (code is never saved: a closure, a hook), another
-- object (an Optimizer: save its state_dict()) or other userdata raise, naming where it is.
local core = require("tide.core")
local compat = require("tide._compat")
local json = require("tide.models._json")
local names = require("tide.checkpoint_names")
local PARAMS = require("tide.nn._parameters")
local Complex = require("tide.complex.tensor")

local M = { KEY = "tide-tree" }

local MAX_DEPTH = 200
local SCALAR_TYPE = { b = "boolean", s = "string" } -- the nodes whose value is stored as it is

local function printable(s)
    return not s:find("[^\32-\126]")
end

local function hex(s)
    return (s:gsub(".", function(c)
        return ("%02x"):format(c:byte())
    end))
end

-- a scalar's node, or nil and a description of what v is
local function scalar_node(v)
    local tv = type(v)
    if tv == "boolean" then
        return { "b", v }
    elseif tv == "number" then
        if v == 0 and 1 / v < 0 then
            return { "f", "-0.0" } -- (an integral value on Lua 5.1, but no integer)
        elseif compat.is_integer(v) then -- the integer subtype (where Lua has one)
            return { "i", ("%d"):format(v) }
        end
        local s = v ~= v and "nan" or v == math.huge and "inf" or v == -math.huge and "-inf"
            or ("%.17g"):format(v)
        return { "f", s }
    elseif tv == "string" then
        return printable(v) and { "s", v } or { "x", hex(v) }
    end
    return nil
end

-- keys in a fixed order (numbers, then strings, then booleans), so a table gives one file
local KEY_RANK = { number = 1, string = 2, boolean = 3 }
local function key_less(a, b)
    local ra, rb = KEY_RANK[type(a)], KEY_RANK[type(b)]
    if ra ~= rb then
        return ra < rb
    end
    if type(a) == "boolean" then
        return not a and b
    end
    return a < b
end

local function what_is(v)
    if type(v) == "table" and getmetatable(v) ~= nil then
        local mt = getmetatable(v)
        local name = type(mt) == "table" and rawget(mt, "__name")
        return name and ("a " .. tostring(name) .. " object") or "a table with a metatable"
    end
    return "a " .. type(v)
end

-- a table that keeps views of itself (an optimizer's state dict: sd.param_groups) writes what a
-- script changed in them into its own entries before they are read for saving
function M.settle(t)
    local mt = getmetatable(t)
    if type(mt) == "table" and type(rawget(mt, "__settle")) == "function" then
        mt.__settle(t)
    end
end

--- flatten(t, path) -> tensors {name = tensor}, tree (a JSON string); raises naming the part
--- that cannot be saved (path names the file in messages)
function M.flatten(t, path)
    local flat, named, open = {}, {}, {}
    -- a view's identity: two tensors of one storage with the same place, shape and strides are
    -- one tensor (a state_dict gives a tied weight under each name as its own tensor object)
    local view_key = require("tide.op_args").view_place
    local by_view = {}
    local function fail(where, msg)
        error(("tide: save: %s: %s %s"):format(path, where == "" and "the checkpoint" or where,
            msg), 0)
    end
    -- ids: each table's node number (the first node written for it); inside: how many modules
    -- the walk is in
    local ids, count, inside = {}, 0, 0
    local walk
    -- a table's entries, [key node, value node] in key order: a module's own fields (raw), a
    -- table's as pairs gives them
    local function entries_of(v, where, depth, raw)
        local keys = {}
        local iter, state, init = next, v, nil
        if not raw then
            M.settle(v)
            iter, state, init = pairs(v)
        end
        for k in iter, state, init do
            if not KEY_RANK[type(k)] or k ~= k then
                fail(where, ("has a key that is %s; keys must be strings, numbers or booleans")
                    :format(what_is(k)))
            end
            keys[#keys + 1] = k
        end
        table.sort(keys, key_less)
        local entries = {}
        for i, k in ipairs(keys) do
            local part = type(k) == "string" and printable(k) and k or type(k) == "number" and
                (compat.is_integer(k) and ("%d"):format(k) or ("%.17g"):format(k)) or "#" .. i
            local child = where == "" and part or where .. "." .. part
            local val = v[k]
            if raw then
                val = rawget(v, k)
            end
            entries[i] = { scalar_node(k), walk(val, child, depth + 1) }
        end
        return entries
    end
    function walk(v, where, depth)
        if core.is_tensor(v) then
            local key = view_key(v)
            local name = named[v] or (key and by_view[key])
            if name == nil then
                name = where ~= "" and where or "tensor"
                local n = 1
                while flat[name] ~= nil do
                    n = n + 1
                    name = where .. "#" .. n
                end
                named[v], flat[name] = name, v
                if key then
                    by_view[key] = name
                end
            end
            local grad = v.requires_grad and "g" or ""
            return PARAMS[v] and { "t", name, "p" .. grad } or grad ~= "" and { "t", name, grad }
                or { "t", name }
        end
        if Complex.is(v) then -- a complex tensor: its real pair, wrapped again by rebuild
            local pair = walk(v._ri, where, depth)
            pair[1] = "c"
            return pair
        end
        local node = scalar_node(v)
        if node then
            return node
        end
        if type(v) == "function" then
            local fname = names.function_name(v)
            if fname == nil then
                fail(where, "is a function that is not one of tide's (a closure, a hook, your " ..
                    "own); a checkpoint holds no code, as PyTorch's pickle holds no lambda: " ..
                    "remove it, or save the state_dict() and build the model in code")
            end
            return { "fn", fname }
        end
        -- a table whose metatable names a class is an object (a Module, an Optimizer:
        -- tide.pytorch_args's rule); an ordered table (a state_dict) or one with defaults
        -- behind __index is data (its own fields)
        local mt = type(v) == "table" and getmetatable(v)
        local object = mt ~= nil and (type(mt) ~= "table" or rawget(mt, "__name") ~= nil)
        local module = object and type(v) == "table" and rawget(v, "_kind") ~= nil and
            v.__ismodule == true
        if (module or inside > 0) and ids[v] then
            return { "r", ("%d"):format(ids[v]) }
        end
        if inside > 0 and mt and not module and not object then
            -- a module's table with behaviour (a metatable): loaded back plain, it would lose it
            fail(where, "is a table with a metatable, which a checkpoint cannot name; save " ..
                "the module's state_dict() instead")
        end
        if type(v) ~= "table" or object and not module then
            local umt = type(v) == "userdata" and getmetatable(v)
            local device = type(umt) == "table" and rawget(umt, "__name") == "tide.Device"
            local fix = type(v) == "table" and "; save its state_dict() instead" or device and
                " (a tide.Device); save its name, tostring(device)" or
                "; a checkpoint holds tensors, numbers, strings, booleans and tables of them"
            fail(where, "is " .. what_is(v) .. fix)
        end
        if open[v] then
            fail(where, "holds the table it is in (a cycle); a checkpoint is a tree")
        end
        if depth > MAX_DEPTH then
            fail(where, ("nests more than %d tables"):format(MAX_DEPTH))
        end
        count = count + 1
        ids[v] = ids[v] or count
        if module then
            local class = names.class_name(mt)
            if rawget(mt, "_parametrize_base") then
                fail(where, ("is a parametrized module (%s); as PyTorch's, it saves through its " ..
                    "state_dict() only"):format(tostring(rawget(mt, "__name"))))
            end
            for k in next, v do
                local reparam = type(k) == "string" and k:match("^_reparam_(.*)")
                if reparam then
                    fail(where, ("has a weight_norm or spectral_norm on '%s', whose code a " ..
                        "checkpoint cannot hold; remove it first (nn.utils.remove_weight_norm) " ..
                        "or save the state_dict()"):format(reparam))
                end
            end
            if class == nil then
                fail(where, ("is a %s module whose class tide.load cannot find by its name; " ..
                    "make the class with nn.Module:extend(\"Name\"), or save its state_dict()")
                    :format(tostring(rawget(mt, "__name"))))
            end
            inside = inside + 1
            local entries = entries_of(v, where, depth, true)
            inside = inside - 1
            return { "m", class, entries }
        end
        open[v] = true
        local entries = entries_of(v, where, depth)
        open[v] = nil
        return { "{", entries }
    end
    local root = walk(t, "", 0)
    -- compact JSON: arrays of strings, booleans and arrays (the strings printable ASCII)
    local out = {}
    local function enc(x)
        if type(x) == "table" then
            out[#out + 1] = "["
            for i = 1, #x do
                if i > 1 then
                    out[#out + 1] = ","
                end
                enc(x[i])
            end
            out[#out + 1] = "]"
        elseif type(x) == "string" then
            out[#out + 1] = '"' .. x:gsub('[\\"]', "\\%0") .. '"'
        else
            out[#out + 1] = tostring(x)
        end
    end
    enc(root)
    return flat, table.concat(out)
end

--- rebuild(tree_json, tensors, path) -> the checkpoint table, its tensors taken from tensors;
--- a malformed tree raises "tide: load: <path>: its tide-tree metadata ..."
function M.rebuild(tree_json, tensors, path)
    local function bad(msg)
        error(("tide: load: %s: its %s metadata is malformed (%s); the file was not written by "
            .. "tide.save, or was changed since"):format(path, M.KEY, msg), 0)
    end
    local ok, root = pcall(json.decode, tree_json, path)
    if not ok then
        bad("not JSON")
    end
    local built = {} -- the "{" and "m" nodes' tables, by number
    local function build(node, depth)
        if type(node) ~= "table" or type(node[1]) ~= "string" then
            bad("a node is not [kind, value]")
        end
        if depth > MAX_DEPTH + 1 then
            bad(("tables nested more than %d deep"):format(MAX_DEPTH))
        end
        local kind, a = node[1], node[2]
        if kind == "t" or kind == "c" then
            local t = type(a) == "string" and tensors[a]
            if not core.is_tensor(t) then
                bad(("tensor %s is not in the file"):format(tostring(a)))
            end
            local flags = node[3]
            if flags ~= nil then
                if type(flags) ~= "string" or not flags:match("^p?g?$") then
                    bad(("tensor %s's flags %s"):format(a, tostring(flags)))
                end
                if flags:find("p", 1, true) then
                    PARAMS[t] = true
                end
                if flags:find("g", 1, true) and not t.requires_grad then
                    t:requires_grad_(true)
                end
            end
            if kind == "c" then -- a complex tensor's [..., 2] pair
                if t:dim() == 0 or t:size(-1) ~= 2 or not Complex.COMPLEX_OF[t.dtype] then
                    bad(("complex tensor %s is not a float [..., 2] pair"):format(a))
                end
                return Complex.wrap(t)
            end
            return t
        elseif SCALAR_TYPE[kind] then -- "b" and "s": the value as it is
            if type(a) ~= SCALAR_TYPE[kind] then
                bad(("a %s node holds %s"):format(SCALAR_TYPE[kind], type(a)))
            end
            return a
        elseif kind == "i" or kind == "f" then
            local n = type(a) == "string" and (a == "nan" and 0 / 0 or a == "inf" and math.huge or
                a == "-inf" and -math.huge or tonumber(a))
            if type(n) ~= "number" then
                bad(("number %s"):format(tostring(a)))
            end
            if kind == "i" then
                n = compat.tointeger(n) or n
            else
                n = n * 1.0 -- a float written as "3" stays a float (and -0.0 keeps its sign)
            end
            return n
        elseif kind == "x" then
            if type(a) ~= "string" or #a % 2 ~= 0 or a:find("[^%x]") then
                bad("a hex string node is not hex")
            end
            return (a:gsub("%x%x", function(h)
                return string.char(tonumber(h, 16))
            end))
        elseif kind == "r" then
            local t = type(a) == "string" and built[tonumber(a)]
            if not t then
                bad(("a reference to table %s, which comes later or not at all"):format(
                    tostring(a)))
            end
            return t
        elseif kind == "fn" then
            local f = type(a) == "string" and names.function_of(a)
            if not f then
                error(("tide: load: %s: the file names the function %s, which this tide does " ..
                    "not have"):format(path, tostring(a)), 0)
            end
            return f
        elseif kind == "{" or kind == "m" then
            local class
            if kind == "m" then
                class = type(a) == "string" and names.class_of(a)
                if not class then
                    error(("tide: load: %s: the file holds a module of class %s, which this " ..
                        "Lua state has not defined; define it first (%s = nn.Module:extend(%q) " ..
                        "and its methods, as Python imports a pickled model's class), or load " ..
                        "a state_dict into a model built in code"):format(path, tostring(a),
                        tostring(a), tostring(a)), 0)
                end
                a = node[3]
            end
            if type(a) ~= "table" then
                bad("a table node holds " .. type(a))
            end
            local t = {}
            built[#built + 1] = t
            for _, e in ipairs(a) do
                local key_kind = type(e) == "table" and type(e[1]) == "table" and e[1][1]
                if not key_kind or key_kind == "{" or key_kind == "t" or key_kind == "c" then
                    bad("a table entry is not [key, node]")
                end
                local k = build(e[1], depth + 1)
                if k ~= k then
                    bad("a key is NaN")
                end
                t[k] = build(e[2], depth + 1)
            end
            if class then
                setmetatable(t, class)
            end
            return t
        end
        bad(("unknown node kind %q"):format(kind))
    end
    return build(root, 0)
end

return M
