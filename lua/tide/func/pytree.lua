-- tide.func.pytree: PyTorch's pytrees, as tide.func reads arguments and results. A tree's
-- containers are plain Lua tables (no metatable: lists, string-keyed maps, nested); anything
-- else is a leaf (a tensor, a number, a Module, a table with a metatable). flatten lists the
-- leaves in a fixed order (the list part 1..n, then the other keys sorted: pairs' order is
-- unspecified) with a spec that unflatten rebuilds the same tree from.
local core = require("tide.core")
local raise = require("tide.autograd.raise")

local is_tensor = core.is_tensor

local M = {}

local function is_container(v)
    return type(v) == "table" and getmetatable(v) == nil
end
M.is_container = is_container

-- the keys of a container in flatten's order: numbers ascending, then strings
local function keys_of(who, t)
    local keys = {}
    for k in pairs(t) do
        local kt = type(k)
        if kt ~= "number" and kt ~= "string" then
            raise(("tide: %s: a table in the arguments or results has a %s key; tide.func " ..
                "reads tables as lists and string-keyed maps only"):format(who, kt))
        end
        keys[#keys + 1] = k
    end
    table.sort(keys, function(a, b)
        local ta, tb = type(a), type(b)
        if ta ~= tb then
            return ta == "number"
        end
        return a < b
    end)
    return keys
end

M.keys = keys_of

-- the leaves of tree, appended to leaves (a new list when nil; leaves.n counts them, as a nil
-- tree is one leaf), and the tree's spec: true for a leaf, {keys = ..., [i] = spec of the i-th
-- key's value} for a container
function M.flatten(who, tree, leaves)
    leaves = leaves or { n = 0 }
    if not is_container(tree) then
        leaves.n = leaves.n + 1
        leaves[leaves.n] = tree
        return leaves, true
    end
    local keys = keys_of(who, tree)
    local spec = { keys = keys }
    for i, k in ipairs(keys) do
        local _, s = M.flatten(who, tree[k], leaves)
        spec[i] = s
    end
    return leaves, spec
end

-- the tree of spec whose leaves are leaves[pos], leaves[pos + 1], ...; and the next pos
function M.unflatten(spec, leaves, pos)
    pos = pos or 1
    if spec == true then
        return leaves[pos], pos + 1
    end
    local t = {}
    for i, k in ipairs(spec.keys) do
        t[k], pos = M.unflatten(spec[i], leaves, pos)
    end
    return t, pos
end

-- the number of leaves a spec holds
function M.count(spec)
    if spec == true then
        return 1
    end
    local n = 0
    for i = 1, #spec.keys do
        n = n + M.count(spec[i])
    end
    return n
end

function M.same_spec(a, b)
    if a == true or b == true then
        return a == b
    end
    if #a.keys ~= #b.keys then
        return false
    end
    for i, k in ipairs(a.keys) do
        if b.keys[i] ~= k or not M.same_spec(a[i], b[i]) then
            return false
        end
    end
    return true
end

-- the tree with fn(leaf) in place of each tensor leaf
function M.map_tensors(tree, fn)
    if is_tensor(tree) then
        return fn(tree)
    elseif not is_container(tree) then
        return tree
    end
    local t = {}
    for k, v in pairs(tree) do
        t[k] = M.map_tensors(v, fn)
    end
    return t
end

-- where a leaf sits, for messages: path(spec, i) of the i-th leaf, as `.w`, `[2]`, `.fc.bias`
function M.paths(spec, prefix, out)
    out, prefix = out or {}, prefix or ""
    if spec == true then
        out[#out + 1] = prefix
        return out
    end
    for i, k in ipairs(spec.keys) do
        local step = type(k) == "number" and ("[" .. k .. "]") or
            (k:match("^[%a_][%w_]*$") and ("." .. k) or ("[\"" .. k .. "\"]"))
        M.paths(spec[i], prefix .. step, out)
    end
    return out
end

-- a value for messages: "a tensor", "a number", "nil"
function M.what(v)
    if is_tensor(v) then
        return "a tensor"
    elseif v == nil then
        return "nil"
    end
    return "a " .. type(v)
end

return M
