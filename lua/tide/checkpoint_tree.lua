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
-- plain one). A table reached twice is written twice. A cycle, a function, an object (a table
-- whose metatable names its class, __name: a Module, an Optimizer: save its state_dict()) or
-- other userdata raise, naming where it is.
local core = require("tide.core")
local compat = require("tide._compat")
local json = require("tide.models._json")

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

--- flatten(t, path) -> tensors {name = tensor}, tree (a JSON string); raises naming the part
--- that cannot be saved (path names the file in messages)
function M.flatten(t, path)
    local flat, named, open = {}, {}, {}
    -- a view's identity: two tensors of one storage with the same place, shape and strides are
    -- one tensor (a state_dict gives a tied weight under each name as its own tensor object)
    local function view_key(x)
        local ok, key = pcall(function()
            return table.concat({ tostring(x.device), x.dtype, tostring(x:data_ptr()),
                table.concat(x:size(), "x"), table.concat(x:stride(), "x") }, "|")
        end)
        return ok and key or nil
    end
    local by_view = {}
    local function fail(where, msg)
        error(("tide: save: %s: %s %s"):format(path, where == "" and "the checkpoint" or where,
            msg), 0)
    end
    local function walk(v, where, depth)
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
            return { "t", name }
        end
        local node = scalar_node(v)
        if node then
            return node
        end
        -- a table whose metatable names a class is an object (a Module, an Optimizer:
        -- tide.pytorch_args's rule); an ordered table (a state_dict) or one with defaults
        -- behind __index is data (its own fields)
        local mt = type(v) == "table" and getmetatable(v)
        local object = mt ~= nil and (type(mt) ~= "table" or rawget(mt, "__name") ~= nil)
        if type(v) ~= "table" or object then
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
        open[v] = true
        local keys = {}
        for k in pairs(v) do
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
            entries[i] = { scalar_node(k), walk(v[k], child, depth + 1) }
        end
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
    local function build(node, depth)
        if type(node) ~= "table" or type(node[1]) ~= "string" then
            bad("a node is not [kind, value]")
        end
        if depth > MAX_DEPTH + 1 then
            bad(("tables nested more than %d deep"):format(MAX_DEPTH))
        end
        local kind, a = node[1], node[2]
        if kind == "t" then
            local t = type(a) == "string" and tensors[a]
            if not core.is_tensor(t) then
                bad(("tensor %s is not in the file"):format(tostring(a)))
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
        elseif kind == "{" then
            if type(a) ~= "table" then
                bad("a table node holds " .. type(a))
            end
            local t = {}
            for _, e in ipairs(a) do
                local key_kind = type(e) == "table" and type(e[1]) == "table" and e[1][1]
                if not key_kind or key_kind == "{" or key_kind == "t" then
                    bad("a table entry is not [key, node]")
                end
                local k = build(e[1], depth + 1)
                if k ~= k then
                    bad("a key is NaN")
                end
                t[k] = build(e[2], depth + 1)
            end
            return t
        end
        bad(("unknown node kind %q"):format(kind))
    end
    return build(root, 0)
end

return M
