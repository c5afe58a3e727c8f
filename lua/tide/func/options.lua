-- tide.func.options: the checks tide.func's transforms share: the function, the options table
-- (unknown keys raise), argnums (1-based: 1 is the first argument, PyTorch's argnums = 0),
-- has_aux, and the generator watch behind randomness = "error" / "same".
local core = require("tide.core")
local args = require("tide.op_args")
local compat = require("tide._compat")
local raise = require("tide.autograd.raise")
local pytree = require("tide.func.pytree")
local P = require("tide.pytorch_args")

local M = {}

function M.callable(who, f)
    if type(f) ~= "function" and not (getmetatable(f) or {}).__call then
        raise(("tide: %s: expected a function (or a callable table such as a Module) as f, " ..
            "got %s"):format(who, pytree.what(f)))
    end
    return f
end

-- PyTorch's optional parameters of a transform by position: vmap(f, (None, 0)) is
-- vmap(f, {nil, 1}), jacrev(f, 2) is jacrev(f, 3); names[i] the i-th after f, then (or in
-- place of any) one options table. A table with only string keys is the options table; a list
-- (number keys: in_dims, argnums) is a positional value. Returns one options table (nil when
-- nothing was given); a name given both ways raises.
function M.positional(who, names, ...)
    return P.merge(who, names, ...)
end

-- opts (nil: {}) with only the known keys
function M.options(who, opts, known, example)
    return args.options(who, opts, known, example)
end

function M.boolean(who, o, key)
    local v = o[key]
    if v ~= nil and type(v) ~= "boolean" then
        raise(("tide: %s: %s must be a boolean, got %s"):format(who, key, pytree.what(v)))
    end
    return v == true
end

-- chunk_size: nil or an integer >= 1 (PyTorch's memory/speed knob; tide's loops are the same
-- either way)
function M.chunk_size(who, o)
    local v = o.chunk_size
    if v ~= nil and (not compat.is_integer(v) or v < 1) then
        raise(("tide: %s: chunk_size must be nil or an integer >= 1, got %s"):format(who,
            type(v) == "number" and tostring(v) or pytree.what(v)))
    end
    return v
end

local function one_argnum(who, v)
    if not compat.is_integer(v) then
        raise(("tide: %s: argnums must be an integer or a list of integers such as {1, 2}, " ..
            "got %s"):format(who, type(v) == "number" and tostring(v) or pytree.what(v)))
    end
    if v == 0 then
        raise(("tide: %s: argnums = 0: argnums are 1-based in tide (1 is the first argument, " ..
            "PyTorch's 0; -1 the last)"):format(who))
    end
    return v
end

-- argnums (default 1) checked: returns the list of argument indices and whether one was
-- given as an integer (the gradient is then that argument's alone, not a list)
function M.argnums(who, v)
    if v == nil then
        return { 1 }, true
    end
    if type(v) ~= "table" or getmetatable(v) ~= nil then
        return { one_argnum(who, v) }, true
    end
    args.check_list(who, v, "argnums")
    if #v == 0 then
        raise(("tide: %s: argnums = {} is empty; give at least one argument index"):format(who))
    end
    local list = {}
    for i = 1, #v do
        list[i] = one_argnum(who, v[i])
    end
    return list, false
end

-- the argument indices of list for a call with n arguments (negative ones count from the
-- end), each once
function M.resolve(who, list, n)
    local out, seen = {}, {}
    for i, a in ipairs(list) do
        local k = a < 0 and n + a + 1 or a
        if k < 1 or k > n then
            raise(("tide: %s: argnums = %d, but f was given %d argument%s"):format(who, a, n,
                n == 1 and "" or "s"))
        end
        if seen[k] then
            raise(("tide: %s: argnums names argument %d twice; give each once"):format(who, k))
        end
        seen[k], out[i] = true, k
    end
    return out
end

local RANDOMNESS = { error = true, different = true, same = true }

function M.randomness(who, o)
    local v = o.randomness
    if v == nil then
        return "error"
    end
    if not RANDOMNESS[v] then
        raise(("tide: %s: randomness must be \"error\", \"different\" or \"same\", got %s")
            :format(who, type(v) == "string" and ('"' .. v .. '"') or pytree.what(v)))
    end
    return v
end

-- runs fn(...) once per slice under a randomness mode: "same" sets tide's generator back to
-- where it was before the first slice for each one, "error" raises when fn moved it (fn drew
-- random numbers), "different" lets each slice draw on. A watch is made per transform call.
function M.watch(who, mode)
    local start = core._rng_state()
    return function(fn, ...)
        if mode == "same" then
            core._set_rng_state(start)
        end
        local before = mode == "error" and core._rng_state()
        local r = compat.pack(fn(...))
        if before and core._rng_state() ~= before then
            raise(("tide: %s: f drew random numbers under randomness = \"error\"; pass " ..
                "{randomness = \"different\"} for each slice its own draws, or \"same\" for " ..
                "the same draws in every slice"):format(who))
        end
        return compat.unpack(r, 1, r.n)
    end
end

return M
