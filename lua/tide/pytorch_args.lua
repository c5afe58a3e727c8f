-- tide.pytorch_args: what PyTorch's positional parameters share across tide (nn.functional,
-- the nn modules, the optimizers and lr schedulers, DataLoader, the distributions, the legacy
-- constructors). A ported call passes optional parameters by position in PyTorch's order, then
-- optionally one table by name (Python's keywords); tide's own form passes them all in that
-- table. One rule tells the two apart everywhere, and one message names a parameter given both
-- ways.
local autograd = require("tide.autograd")
local raise = autograd.raise
local is_tensor = autograd.is_tensor

local M = {}

--- is_options(v): v is a table of options by name rather than a value: a table, not a tensor
--- nor an object of a class (its metatable names the class, __name: a Module, a Generator, a
--- Sampler) nor a class (nn.BatchNorm2d: its own __name and __index), whose keys are all
--- strings ({} included). A list ({2, 2}, {30, 80}, {nil, 7}) is a
--- value. A table whose metatable names no class (a config with __index defaults) is options.
function M.is_options(v)
    if type(v) ~= "table" or is_tensor(v) then
        return false
    end
    local mt = getmetatable(v)
    if mt ~= nil and (type(mt) ~= "table" or rawget(mt, "__name") ~= nil) then
        return false
    end
    -- a class itself (nn.BatchNorm2d passed as a norm_layer argument): a value
    if mt ~= nil and type(rawget(v, "__name")) == "string" and rawget(v, "__index") ~= nil then
        return false
    end
    for k in pairs(v) do
        if type(k) ~= "string" then
            return false
        end
    end
    return true
end

--- position(names, k): k's index in the list names, or nil
function M.position(names, k)
    for i, v in ipairs(names) do
        if v == k then
            return i
        end
    end
end

--- twice(who, name, argno): raises for a parameter given both by position (argument #argno of
--- the call) and by name
function M.twice(who, name, argno)
    raise(("tide: %s: %s given twice, as argument #%d and by name; pass it once"):format(who,
        name, argno))
end

--- merge(who, names, ...) -> one options table: the arguments after a call's first (the
--- parameters of an optimizer, the optimizer of a scheduler, a DataLoader's dataset) as torch
--- 1.13 orders them, names[i] the i-th, optionally followed by an options table for the rest:
---
---     optim.SGD(params, 0.1, {momentum = 0.9})  ==  optim.SGD(params, {lr = 0.1, momentum = 0.9})
---     lr_scheduler.MultiStepLR(opt, {30, 80}, 0.1)
---         ==  MultiStepLR(opt, {milestones = {30, 80}, gamma = 0.1})
---
--- nil holds a place (the default). Without positional arguments the options table comes back as
--- it was given (nil, or whatever the caller's checks then refuse).
function M.merge(who, names, ...)
    local n = select("#", ...)
    local values = { ... }
    while n > 0 and values[n] == nil do
        n = n - 1
    end
    local opts = nil
    if n > 0 and M.is_options(values[n]) then
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
        if M.is_options(v) then
            raise(string.format("tide: %s: the options table must come last; got it in the " ..
                "place of %s", who, name))
        end
        if v ~= nil then
            if merged[name] ~= nil then
                M.twice(who, name, i + 1)
            end
            merged[name] = v
        end
    end
    return merged
end

return M
