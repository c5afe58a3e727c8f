-- tide.optim.positional: PyTorch's positional parameters for the optimizers and the lr
-- schedulers. merge(who, names, ...) reads the arguments after the fixed one (the parameters,
-- or the optimizer) as torch 1.13 orders them, names[i] for the i-th, optionally followed by an
-- options table for the rest, and returns one options table:
--
--     optim.SGD(params, 0.1, {momentum = 0.9})  ==  optim.SGD(params, {lr = 0.1, momentum = 0.9})
--     lr_scheduler.MultiStepLR(opt, {30, 80}, 0.1)  ==  MultiStepLR(opt, {milestones = {30, 80}, gamma = 0.1})
--
-- A list ({0.9, 0.999}, {30, 80}) is a positional value; any other table (string keys, or
-- empty) is the options table, which comes last. nil holds a place (the default). A name given
-- both positionally and in the options table raises. Without positional arguments the options
-- table comes back as it was given (nil, or whatever the caller's checks then refuse).
local autograd = require("tide.autograd")
local raise = autograd.raise
local is_tensor = autograd.is_tensor
local is_integer = require("tide._compat").is_integer

local M = {}

-- a non-empty list: its keys exactly 1..#v
local function is_list(v)
    local n = #v
    if n == 0 then
        return false
    end
    local count = 0
    for k in pairs(v) do
        if not is_integer(k) or k < 1 or k > n then
            return false
        end
        count = count + 1
    end
    return count == n
end

-- an options table: a plain table (not a tensor, a module or an object of a class) that is
-- not a list
local function is_options(v)
    return type(v) == "table" and not is_tensor(v) and getmetatable(v) == nil and not is_list(v)
end
M.is_options = is_options

function M.merge(who, names, ...)
    local n = select("#", ...)
    local values = { ... }
    while n > 0 and values[n] == nil do
        n = n - 1
    end
    local opts = nil
    if n > 0 and is_options(values[n]) then
        opts, n = values[n], n - 1
    end
    if n == 0 then
        return opts
    end
    if n > #names then
        raise(string.format("tide: %s: got %d positional arguments; it takes at most %d (%s), " ..
            "then an options table", who, n, #names,
            #names == 0 and "none" or table.concat(names, ", ")))
    end
    local merged = {}
    for k, v in pairs(opts or {}) do
        merged[k] = v
    end
    for i = 1, n do
        local v, name = values[i], names[i]
        if is_options(v) then
            raise(string.format("tide: %s: the options table must come last; got it in the " ..
                "place of %s", who, name))
        end
        if v ~= nil then
            if merged[name] ~= nil then
                raise(string.format("tide: %s: %s is given twice, positionally and in the " ..
                    "options table; give it once", who, name))
            end
            merged[name] = v
        end
    end
    return merged
end

return M
