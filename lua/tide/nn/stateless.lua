-- tide.nn.utils.stateless: functional_call, as torch.nn.utils.stateless.functional_call in
-- PyTorch 1.13 (torch.func.functional_call in 2.x): a module called with some of its
-- parameters and buffers replaced by other tensors for that call only (meta-learning's inner
-- steps, ensembles, a Jacobian with respect to the parameters). Names are state_dict's dotted
-- names; the module's own tensors are back in place when the call returns or raises.
local autograd = require("tide.autograd")
local Module = require("tide.nn.Module")
local compat = require("tide._compat")

local raise = autograd.raise
local is_complex = require("tide.complex.tensor").is
local function is_tensor(v) -- a real tensor or a complex one (a complex parameter's stand-in)
    return autograd.is_tensor(v) or is_complex(v)
end

local M = {}

local function describe(v)
    return is_tensor(v) and "a tensor" or Module.is_module(v) and "a Module" or type(v)
end

-- the module owning dotted name and the field, or an error naming both
local function owner_of(module, name, who)
    local path, field = name:match("^(.*)%.([^.]+)$")
    local owner = module
    if path then
        local ok, sub = pcall(module.get_submodule, module, path)
        owner = ok and sub or nil
        field = field or name
    else
        field = name
    end
    local kind = owner and owner._kind[field]
    if kind ~= "parameter" and kind ~= "buffer" and not (owner and rawget(owner,
        "parametrizations") and rawget(owner.parametrizations, field)) then
        raise(string.format("tide: %s: %s has no parameter or buffer named '%s'", who,
            module.__name, name))
    end
    return owner, field
end

-- functional_call(module, tensors, args): module(args...) with tensors[name] in place of each
-- named parameter or buffer; args is one tensor or a list of the call's arguments. Returns the
-- call's results. Gradients reach the given tensors, not the module's own.
function M.functional_call(module, tensors, call_args, ...)
    local who = "functional_call"
    require("tide.op_args").no_extra(who, 3, ...)
    if not Module.is_module(module) then
        raise("tide: " .. who .. ": expected a Module, got " .. describe(module))
    end
    if type(tensors) ~= "table" or is_tensor(tensors) or Module.is_module(tensors) then
        raise("tide: " .. who .. ": expected a table name -> tensor (state_dict's names), got " ..
            describe(tensors))
    end
    -- every name checked before anything is swapped
    local swaps = {}
    for name, t in pairs(tensors) do
        if type(name) ~= "string" then
            raise("tide: " .. who .. ": the names must be strings such as \"fc.weight\", got " ..
                describe(name))
        end
        if not is_tensor(t) then
            raise(string.format("tide: %s: '%s' must be a tensor, got %s", who, name, describe(t)))
        end
        local owner, field = owner_of(module, name, who)
        swaps[#swaps + 1] = { owner, field, t }
    end
    local saved, stand_ins = {}, Module._stand_ins
    for i, s in ipairs(swaps) do
        saved[i] = rawget(s[1], s[2])
        rawset(s[1], s[2], s[3])
        stand_ins[s[3]] = (stand_ins[s[3]] or 0) + 1 -- listed as the parameter while it runs
    end
    local args_list
    if is_tensor(call_args) or type(call_args) ~= "table" then
        args_list = compat.pack(call_args)
    else
        args_list = compat.pack(compat.unpack(call_args, 1, #call_args))
    end
    local res = compat.pack(pcall(module, compat.unpack(args_list, 1, args_list.n)))
    for i = #swaps, 1, -1 do
        rawset(swaps[i][1], swaps[i][2], saved[i])
        local t = swaps[i][3]
        stand_ins[t] = stand_ins[t] > 1 and stand_ins[t] - 1 or nil
    end
    if not res[1] then
        error(res[2], 0)
    end
    return compat.unpack(res, 2, res.n)
end

return M
