-- tide.func.functional_call: PyTorch 2's torch.func.functional_call, on tide's
-- nn.utils.stateless.functional_call. functional_call(module, params_and_buffers, args[,
-- kwargs][, {tie_weights = true, strict = false}]): module(args...) with the tensors named in
-- params_and_buffers (state_dict's dotted names; or a list of such tables, as PyTorch's tuple
-- of dicts, each name in one of them) in place of the module's own for that call. args is one
-- value or the list of arguments; kwargs, a table, goes last, as tide's modules take their
-- options (MultiheadAttention's). tie_weights: a tensor given for one name of a tied (shared)
-- parameter or buffer replaces it under all its names; strict: every name of the module's
-- parameters and buffers must be given, and no other.
local Module = require("tide.nn.Module")
local stateless = require("tide.nn.stateless")
local compat = require("tide._compat")
local args = require("tide.op_args")
local raise = require("tide.autograd.raise")
local pytree = require("tide.func.pytree")
local options = require("tide.func.options")

local is_tensor = require("tide.core").is_tensor

local M = {}

-- one table name -> tensor from a table or a list of tables
local function merged(who, t)
    if type(t) ~= "table" or is_tensor(t) or Module.is_module(t) then
        raise(("tide: %s: params_and_buffers must be a table name -> tensor (or a list of " ..
            "them), got %s"):format(who, Module.is_module(t) and "a Module" or pytree.what(t)))
    end
    if t[1] == nil then
        return t
    end
    local all, from = {}, {}
    for i = 1, #t do
        local part = t[i]
        if type(part) ~= "table" or is_tensor(part) then
            raise(("tide: %s: params_and_buffers[%d] must be a table name -> tensor, got %s")
                :format(who, i, pytree.what(part)))
        end
        for name, v in pairs(part) do
            if from[name] then
                raise(("tide: %s: '%s' is in params_and_buffers[%d] and [%d]; give each " ..
                    "name once"):format(who, tostring(name), from[name], i))
            end
            all[name], from[name] = v, i
        end
    end
    return all
end

-- every name of module's parameters and buffers (shared ones under each name), in order
local function all_names(module)
    local list = {}
    for _, method in ipairs({ "named_parameters", "named_buffers" }) do
        for _, pair in ipairs(module[method](module, { remove_duplicate = false })) do
            list[#list + 1] = pair
        end
    end
    return list
end

local function quoted(names)
    table.sort(names)
    for i, n in ipairs(names) do
        names[i] = "'" .. n .. "'"
    end
    return table.concat(names, ", ")
end

-- PyTorch's _untie_named_tensors_map: a name given for a tied tensor gives it under each of
-- its names (different tensors given for names of one tied tensor raise)
local function untied(who, list, tensors)
    local groups, of = {}, {}
    for _, pair in ipairs(list) do
        local g = groups[pair[2]] or {}
        groups[pair[2]] = g
        g[#g + 1] = pair[1]
        of[pair[1]] = g
    end
    local out = {}
    for name, t in pairs(tensors) do
        out[name] = t
    end
    for name, t in pairs(tensors) do
        local g = of[name]
        if g and #g > 1 then
            for _, other in ipairs(g) do
                if tensors[other] ~= nil and not rawequal(tensors[other], t) then
                    local names = {}
                    for i, n in ipairs(g) do
                        names[i] = n
                    end
                    raise(("tide: %s: got different tensors for %s, which are tied (one " ..
                        "tensor); give one of them, or {tie_weights = false}"):format(who,
                        quoted(names)))
                end
                out[other] = t
            end
        end
    end
    return out
end

-- PyTorch's strict: the names missing from tensors and those the module has not
local function check_strict(who, module, list, tensors)
    local known, missing, unexpected = {}, {}, {}
    for _, pair in ipairs(list) do
        known[pair[1]] = true
        if tensors[pair[1]] == nil then
            missing[#missing + 1] = pair[1]
        end
    end
    for name in pairs(tensors) do
        if not known[name] then
            unexpected[#unexpected + 1] = tostring(name)
        end
    end
    local msgs = {}
    if #unexpected > 0 then
        msgs[#msgs + 1] = "unexpected key(s) " .. quoted(unexpected)
    end
    if #missing > 0 then
        msgs[#msgs + 1] = "missing key(s) " .. quoted(missing)
    end
    if #msgs > 0 then
        raise(("tide: %s: {strict = true}: error(s) in reparametrizing for %s: %s"):format(who,
            module.__name, table.concat(msgs, "; ")))
    end
end

function M.functional_call(module, params_and_buffers, call_args, kwargs, opts, ...)
    local who = "func.functional_call"
    args.no_extra(who, 5, ...)
    if not Module.is_module(module) then
        raise(("tide: %s: expected a Module, got %s"):format(who, pytree.what(module)))
    end
    local o = args.options(who, opts, { "tie_weights", "strict" },
        "{tie_weights = true, strict = false}")
    local tensors = merged(who, params_and_buffers)
    options.boolean(who, o, "tie_weights")
    local tie, strict = o.tie_weights ~= false, options.boolean(who, o, "strict")
    if tie or strict then
        local list = all_names(module)
        if tie then
            tensors = untied(who, list, tensors)
        end
        if strict then
            check_strict(who, module, list, tensors)
        end
    end
    if kwargs ~= nil then
        if type(kwargs) ~= "table" or is_tensor(kwargs) then
            raise(("tide: %s: kwargs must be a table (the module's options), got %s")
                :format(who, pytree.what(kwargs)))
        end
        local list = {}
        if is_tensor(call_args) or type(call_args) ~= "table" then
            list = { call_args }
        else
            for i = 1, #call_args do
                list[i] = call_args[i]
            end
        end
        list[#list + 1] = kwargs
        call_args = list
    end
    return args.as_op(who, "functional_call", stateless.functional_call, module, tensors,
        call_args)
end

return M
