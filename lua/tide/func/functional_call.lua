-- tide.func.functional_call: PyTorch 2's torch.func.functional_call, on tide's
-- nn.utils.stateless.functional_call. functional_call(module, params_and_buffers, args[,
-- kwargs]): module(args...) with the tensors named in params_and_buffers (state_dict's dotted
-- names; or a list of such tables, as PyTorch's tuple of dicts, each name in one of them) in
-- place of the module's own for that call. args is one value or the list of arguments;
-- kwargs, a table, goes last, as tide's modules take their options (MultiheadAttention's).
local Module = require("tide.nn.Module")
local stateless = require("tide.nn.stateless")
local compat = require("tide._compat")
local args = require("tide.op_args")
local raise = require("tide.autograd.raise")
local pytree = require("tide.func.pytree")

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

function M.functional_call(module, params_and_buffers, call_args, kwargs, ...)
    local who = "func.functional_call"
    args.no_extra(who, 4, ...)
    if not Module.is_module(module) then
        raise(("tide: %s: expected a Module, got %s"):format(who, pytree.what(module)))
    end
    local tensors = merged(who, params_and_buffers)
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
