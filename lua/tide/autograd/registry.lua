-- tide.autograd.registry: the ops autograd differentiates, one entry an op, each declared by one
-- def{...} that holds everything the engine needs of it: the gradient formula and what that
-- formula reads, what the engine may free early, and the forward where the op is written in Lua.
-- A def checks its table when it runs (the module that declares the op is loaded), naming the op:
-- an op with a missing or misspelt piece fails there, not in a backward pass.
--
--   def {
--       name = "exp2",                 -- the name the binding records (tide.core._ops) or Lua's
--       backward = function(nd, g)     -- nd: the node (nd[1..n] the arguments, nd.out, fields)
--           return g:mul(nd.out):mul(0.6931471805599453)
--       end,
--       reads = { "out" },             -- the tensors backward reads the values of
--       frees = { 1 },                 -- what the engine may let go of early
--   }
--
-- reads: a list of up to three entries, each an argument's index, a field of the node ("out",
-- "indices", or one the op's forward keeps) or {what, when}: `what` read only for the gradient
-- of argument `when` (mul reads b for a's gradient only). The engine notes their versions when it
-- records the op and refuses a backward pass after one was modified in place; a node keeps its
-- result only when an op reads "out". Ops that read no tensor's values leave reads out.
-- reads_if: {field = reads}: when the node has that field, backward reads those instead (max over
-- a dim reads its indices, not its input).
-- frees: argument indices backward reads nothing of, not even the shape (the engine drops them
-- from the node when it records it, unless one routes the gradient to a leaf), and names of node
-- fields the op keeps for itself (released once backward has run, not when the graph dies).
-- list = true: the first argument is a list of tensors and backward returns a list (cat).
-- view = true: the result shares its input's storage (an in-place op on it is recorded on its
-- base as well: engine.lua's copy_slices).
-- forward: fn(nd, ...) for an op written in Lua; tide.autograd.def then returns the op.
-- A name is defined once: a second def raises, unless it comes from the file that made the
-- first (that file run again, as require does after package.loaded[name] = nil), which
-- replaces it.
local core = require("tide.core")
local raise = require("tide.autograd.raise")

local R = {}

local OPS = {} -- name -> entry; the engine's only look-up (one table index per recorded op)
R.OPS = OPS
local LIST_OPS = {} -- name -> true: the ops whose first argument is a list of tensors
R.LIST_OPS = LIST_OPS

local KEYS = { name = true, backward = true, forward = true, reads = true, reads_if = true,
    frees = true, list = true, view = true }

-- the engine keeps the versions of three read tensors in the node itself (v1..v3)
local MAX_READS = 3

local getinfo = core._frame_info -- debug.getinfo(level, "S"), also where debug is not opened

-- the source of the file that called def: the first Lua frame outside this file and
-- tide.autograd's init.lua (its def calls this one)
local function definer()
    local level = 2
    while true do
        local info = getinfo(level)
        if not info then
            return "?"
        end
        local src = info.source
        if info.what ~= "C" and info.what ~= "tail" and
            not src:find("autograd[/\\]registry%.lua$") and
            not src:find("autograd[/\\]init%.lua$") then
            return src
        end
        level = level + 1
    end
end

local function fail(name, msg)
    raise("tide: autograd.def: op '" .. name .. "' " .. msg)
end

local function is_index(v)
    return type(v) == "number" and v >= 1 and v % 1 == 0
end

local function is_field(v)
    return type(v) == "string" and v ~= ""
end

local function describe(v)
    if type(v) == "string" then
        return "'" .. v .. "'"
    end
    return type(v) == "number" and tostring(v) or "a " .. type(v)
end

-- the length of t, a list (keys 1..n, no holes), or a failure naming key
local function list_length(name, key, t, max)
    if type(t) ~= "table" then
        fail(name, "expects " .. key .. " to be a list, got a " .. type(t))
    end
    local n = 0
    for k in pairs(t) do
        if not is_index(k) or (max and k > max) then
            fail(name, "expects " .. key .. " to be a list" ..
                (max and " of at most " .. max or "") .. ", got the key " .. describe(k))
        end
        n = n + 1
    end
    if n ~= #t then
        fail(name, "expects " .. key .. " to be a list without holes")
    end
    return n
end

-- reads as a list of {what, when} pairs
local function reads_list(name, key, reads)
    local n, out = list_length(name, key, reads), {}
    if n > MAX_READS then
        fail(name, "reads " .. n .. " tensors in " .. key .. "; at most " .. MAX_READS)
    end
    for i = 1, n do
        local r, what, when = reads[i], reads[i], nil
        if type(r) == "table" then
            list_length(name, key .. "[" .. i .. "] ({what, when})", r, 2)
            what, when = r[1], r[2]
        end
        if not (is_index(what) or is_field(what)) or (when ~= nil and not is_index(when)) then
            fail(name, "expects " .. key .. "[" .. i .. "] to be an argument index, a field " ..
                "name or {what, when}, got " .. describe(what) ..
                (when ~= nil and " and " .. describe(when) or ""))
        end
        out[i] = { what, when }
    end
    return out
end

-- checks op (a def's table) and adds it; returns the entry
function R.def(op)
    if type(op) ~= "table" then
        raise("tide: autograd.def: expected a table {name =, backward =, ...}, got " .. type(op))
    end
    local name = op.name
    if not is_field(name) then
        raise("tide: autograd.def: expected name to be a non-empty string, got " ..
            describe(name))
    end
    for k in pairs(op) do
        if not KEYS[k] then
            raise("tide: autograd.def: unknown key " .. describe(k) .. " for op '" .. name .. "'")
        end
    end
    local source = definer()
    local old = OPS[name]
    if old and old.source ~= source then
        fail(name, "is already defined (in " .. old.source:gsub("^[@=]", "") .. ")")
    end
    if type(op.backward) ~= "function" then
        fail(name, "has no backward (a function(node, grad) returning the inputs' gradients)" ..
            (op.backward ~= nil and ", got a " .. type(op.backward) or ""))
    end
    if op.forward ~= nil and type(op.forward) ~= "function" then
        fail(name, "expects forward to be a function, got a " .. type(op.forward))
    end
    for _, k in ipairs({ "list", "view" }) do
        if op[k] ~= nil and type(op[k]) ~= "boolean" then
            fail(name, "expects " .. k .. " to be a boolean, got a " .. type(op[k]))
        end
    end
    local e = { name = name, backward = op.backward, forward = op.forward, list = op.list or nil,
        view = op.view or nil, source = source }
    -- keeps_out: only the nodes of ops whose formula reads their result keep it (and a node
    -- asked to retain_grad). Every node kept its result before, so each activation of a forward
    -- pass lived until backward ended, where a reference-counted engine frees it once the next
    -- op has run: a small CNN's ReLU outputs, which max-pooling does not read, 7.5 MB.
    local read_args = {}
    local function scan(list)
        for i = 1, #list do
            local what = list[i][1]
            if what == "out" then
                e.keeps_out = true
            end
            read_args[what] = true
        end
        return list
    end
    if op.reads ~= nil then
        e.reads = scan(reads_list(name, "reads", op.reads))
    end
    if op.reads_if ~= nil then
        if type(op.reads_if) ~= "table" then
            fail(name, "expects reads_if to be a table {field = reads}, got a " ..
                type(op.reads_if))
        end
        local alt = {}
        for field, reads in pairs(op.reads_if) do
            if not is_field(field) then
                fail(name, "expects reads_if's keys to be field names, got " .. describe(field))
            end
            alt[#alt + 1] = { field, scan(reads_list(name, "reads_if." .. field, reads)) }
        end
        table.sort(alt, function(a, b) return a[1] < b[1] end)
        e.reads_if = alt
    end
    if op.frees ~= nil then
        for i = 1, list_length(name, "frees", op.frees) do
            local f = op.frees[i]
            if is_index(f) then
                if read_args[f] then
                    fail(name, "both reads and frees argument " .. f)
                end
                e.drops = e.drops or {}
                e.drops[#e.drops + 1] = f
            elseif is_field(f) then
                e.releases = e.releases or {}
                e.releases[#e.releases + 1] = f
            else
                fail(name, "expects frees[" .. i .. "] to be an argument index or a field " ..
                    "name, got " .. describe(f))
            end
        end
    end
    OPS[name] = e
    LIST_OPS[name] = e.list
    return e
end

-- what nd's gradient reads (nil: nothing)
function R.reads_of(nd)
    local e = OPS[nd.name]
    if not e then
        return nil
    end
    local alt = e.reads_if
    if alt then
        for i = 1, #alt do
            if nd[alt[i][1]] then
                return alt[i][2]
            end
        end
    end
    return e.reads
end

function R.has_formula(name)
    return OPS[name] ~= nil
end

return R
