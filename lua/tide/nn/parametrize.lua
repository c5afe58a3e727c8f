-- tide.nn.utils.parametrize: a parameter or buffer of a module computed from other tensors on
-- each read, as torch.nn.utils.parametrize in PyTorch 1.13.
--
--     local Symmetric = nn.Module:extend("Symmetric")
--     function Symmetric:forward(X) return X:triu() + X:triu(1):transpose(1, 2) end
--     P.register_parametrization(layer, "weight", Symmetric())
--     layer.weight                             -- Symmetric()(layer.parametrizations.weight.original)
--
-- The tensor moves to module.parametrizations[name].original (a ParametrizationList: the
-- parametrizations as children "1", "2", ..., applied in order; state_dict keys
-- "parametrizations.weight.original" as PyTorch's). The module gets a class of its own,
-- "Parametrized" .. its class's name, whose field lookup computes the parametrized tensors
-- (PyTorch injects a property the same way) and whose assignment calls right_inverse.
local compat = require("tide._compat")
local autograd = require("tide.autograd")
local Module = require("tide.nn.Module")
local ModuleList = require("tide.nn.ModuleList")
local ModuleDict = require("tide.nn.ModuleDict")
local raise = autograd.raise
local is_tensor = autograd.is_tensor

local P = {}

local function shape_str(t)
    return "{" .. table.concat(t.shape, ", ") .. "}"
end

local function same_shape(a, b)
    if #a.shape ~= #b.shape then
        return false
    end
    for i = 1, #a.shape do
        if a.shape[i] ~= b.shape[i] then
            return false
        end
    end
    return true
end

local function describe(v)
    return is_tensor(v) and "a tensor" or Module.is_module(v) and "a Module" or type(v)
end

local function check_module(module, who)
    if not Module.is_module(module) then
        raise("tide: " .. who .. ": expected a Module, got " .. describe(module))
    end
end

-- ---- the cache of cached() ----

local cache_depth, cache = 0, setmetatable({}, { __mode = "k" })

-- P.cached(fn, ...): fn(...) with each parametrized tensor computed once, at its first read
-- (PyTorch's `with P.cached():`); the values are dropped when the outermost call returns
function P.cached(fn, ...)
    if type(fn) ~= "function" then
        raise("tide: parametrize.cached: expected a function to run with the cache on, got " ..
            describe(fn))
    end
    cache_depth = cache_depth + 1
    local res = compat.pack(pcall(fn, ...))
    cache_depth = cache_depth - 1
    if cache_depth == 0 then
        cache = setmetatable({}, { __mode = "k" })
    end
    if not res[1] then
        error(res[2], 0)
    end
    return compat.unpack(res, 2, res.n)
end

-- ---- ParametrizationList ----

-- ModuleList:extend appends modules: the class comes from Module.extend
local ParametrizationList = Module.extend(ModuleList, "ParametrizationList")
P.ParametrizationList = ParametrizationList

-- the list's value: the first parametrization on the original(s), each next on the result
function ParametrizationList:forward()
    local x
    if rawget(self, "is_tensor") == false then
        local originals = {}
        for i = 1, self.ntensors do
            originals[i] = self["original" .. (i - 1)]
        end
        x = self[1](compat.unpack(originals, 1, self.ntensors))
    else
        x = self[1](self.original)
    end
    for i = 2, self.n do
        x = self[i](x)
    end
    return x
end

-- value through each right_inverse, last registered first (nil when one lacks it and
-- `required` is false); no gradient is recorded
local function inverse_chain(mods, value, required, who)
    for i = #mods, 1, -1 do
        local m = mods[i]
        if m.right_inverse then
            value = m:right_inverse(value)
        elseif required then
            raise(string.format("tide: %s: parametrization %s does not implement right_inverse; " ..
                "define %s:right_inverse(X), or write the original tensor " ..
                "(parametrizations.<name>.original) in place", who, m.__name, m.__name))
        end
    end
    return value
end

local function check_like(v, like, who, what)
    if not is_tensor(v) then
        raise("tide: " .. who .. ": " .. what .. " must return a tensor, got " .. describe(v))
    end
    if v.dtype ~= like.dtype then
        raise(string.format("tide: %s: %s returned %s, the tensor is %s; a parametrization " ..
            "keeps the dtype", who, what, v.dtype, like.dtype))
    end
end

-- ParametrizationList:right_inverse(value): the originals become right_inverse(value), in place
-- (each keeps its identity: an optimizer holding it sees the new values)
function ParametrizationList:right_inverse(value)
    local who = "parametrize"
    local mods = {}
    for i = 1, self.n do
        mods[i] = self[i]
    end
    autograd.no_grad(function()
        local new = inverse_chain(mods, value, true, who)
        if rawget(self, "is_tensor") == false then
            if type(new) ~= "table" or is_tensor(new) or #new ~= self.ntensors then
                raise(string.format("tide: %s: right_inverse must return a list of %d tensors, " ..
                    "got %s", who, self.ntensors, describe(new)))
            end
            for i = 1, self.ntensors do
                check_like(new[i], self["original" .. (i - 1)], who, "right_inverse")
            end
            for i = 1, self.ntensors do
                self["original" .. (i - 1)]:set_(new[i])
            end
        else
            check_like(new, self.original, who, "right_inverse")
            self.original:set_(new)
        end
    end)
end

-- ---- the parametrized class of a module ----

local function list_of(self, k)
    local dict = rawget(self, "parametrizations")
    if dict and type(k) == "string" and dict._kind[k] == "module" then
        return rawget(dict, k)
    end
end

local function parametrized_value(self, k, list)
    if cache_depth == 0 then
        return list()
    end
    local per = cache[self]
    if not per then
        per = {}
        cache[self] = per
    end
    local v = per[k]
    if v == nil then
        v = list()
        per[k] = v
    end
    return v
end

-- a class of the module's own: Parametrized<Name>, the original class behind it
local function inject_class(module)
    local base = getmetatable(module)
    local cls = { __name = "Parametrized" .. base.__name, _parametrize_base = base,
        __call = base.__call, __tostring = base.__tostring, __len = base.__len }
    cls.__index = function(self, k)
        local list = list_of(self, k)
        if list then
            return parametrized_value(self, k, list)
        end
        local v = rawget(cls, k)
        if v ~= nil then
            return v
        end
        return base[k]
    end
    cls.__newindex = function(self, k, v)
        local list = list_of(self, k)
        if list then
            list:right_inverse(v)
            return
        end
        return base.__newindex(self, k, v)
    end
    setmetatable(module, cls)
end

-- P.is_parametrized(module[, name]): whether any tensor, or that one, is parametrized
function P.is_parametrized(module, name)
    if type(name) == "table" and not autograd.is_tensor(name) then -- {tensor_name =}
        name = require("tide.op_args").options("is_parametrized", name, { "tensor_name" })
            .tensor_name
    end
    local dict = Module.is_module(module) and rawget(module, "parametrizations")
    if not dict or not Module.is_module(dict) then
        return false
    end
    if name == nil then
        return #dict._modules > 0
    end
    return dict._kind[name] == "module"
end

-- P.type_before_parametrizations(module): the module's class before any parametrization
function P.type_before_parametrizations(module)
    check_module(module, "type_before_parametrizations")
    local cls = getmetatable(module)
    return rawget(cls, "_parametrize_base") or cls
end

local function options(opts, who, keys)
    if opts == nil then
        return {}
    end
    if type(opts) ~= "table" or is_tensor(opts) then
        raise("tide: " .. who .. ": expected an options table, got " .. describe(opts))
    end
    for k in pairs(opts) do
        if not keys[k] then
            raise(string.format("tide: %s: unknown option \"%s\"", who, tostring(k)))
        end
    end
    return opts
end

-- the first parametrization of a tensor: originals from right_inverse (one tensor or a list),
-- checked before anything changes; returns the new ParametrizationList
local function first_list(module, name, parametrization, unsafe, who)
    local original = rawget(module, name)
    local kind = module._kind[name]
    local new = autograd.no_grad(function()
        return inverse_chain({ parametrization }, original, false, who)
    end)
    local originals
    if is_tensor(new) then
        check_like(new, original, who, "right_inverse")
    elseif type(new) == "table" and #new > 0 then
        for i, v in ipairs(new) do
            if not is_tensor(v) then
                raise(string.format("tide: %s: right_inverse returned a list whose element %d " ..
                    "is %s, expected tensors", who, i, describe(v)))
            end
        end
        originals = new
    else
        raise("tide: " .. who .. ": right_inverse must return a tensor or a list of tensors, " ..
            "got " .. describe(new))
    end
    if not unsafe then
        local z = originals and parametrization(compat.unpack(originals)) or parametrization(new)
        if not is_tensor(z) then
            raise("tide: " .. who .. ": a parametrization must return a tensor, got " ..
                describe(z))
        end
        if z.dtype ~= original.dtype then
            raise(string.format("tide: %s: the parametrization changes %s's dtype (%s -> %s); " ..
                "pass {unsafe = true} to allow it", who, name, original.dtype, z.dtype))
        end
        if not same_shape(z, original) then
            raise(string.format("tide: %s: the parametrization changes %s's shape (%s -> %s); " ..
                "pass {unsafe = true} to allow it", who, name, shape_str(original), shape_str(z)))
        end
    end
    local list = ParametrizationList({ parametrization })
    rawset(list, "unsafe", unsafe)
    -- PyTorch's is_tensor (one original tensor) and ntensors (how many originals)
    rawset(list, "is_tensor", originals == nil)
    rawset(list, "ntensors", originals and #originals or 1)
    local register = kind == "parameter" and list.register_parameter or list.register_buffer
    if originals then
        for i, v in ipairs(originals) do
            local o = v:detach()
            if kind == "parameter" or original.requires_grad then
                o:requires_grad_(original.requires_grad)
            end
            register(list, "original" .. (i - 1), o)
        end
    else
        autograd.no_grad(function()
            original:set_(new)
        end)
        register(list, "original", original)
    end
    return list
end

-- P.register_parametrization(module, name, parametrization[, {unsafe =}]): module[name] (a
-- parameter, a buffer or a tensor already parametrized) becomes parametrization(module[name])
-- on every read; parametrization is a Module whose forward takes the tensor (and whose
-- optional right_inverse(X) gives the original from a value). Returns module.
function P.register_parametrization(module, name, parametrization, opts)
    local who = "register_parametrization"
    check_module(module, who)
    if type(name) ~= "string" then
        raise("tide: " .. who .. ": the tensor's name must be a string, got " .. describe(name))
    end
    if not Module.is_module(parametrization) then
        raise("tide: " .. who .. ": the parametrization must be a Module with a forward(X) " ..
            "(PyTorch's nn.Module), got " .. describe(parametrization))
    end
    if type(opts) == "boolean" then -- PyTorch's unsafe by position
        opts = { unsafe = opts }
    end
    local unsafe = options(opts, who, { unsafe = true }).unsafe == true
    parametrization:train(module.training)
    if P.is_parametrized(module, name) then
        local list = rawget(module.parametrizations, name)
        if not unsafe then
            local y = module[name]
            local x = parametrization(y)
            if not is_tensor(x) then
                raise("tide: " .. who .. ": a parametrization must return a tensor, got " ..
                    describe(x))
            end
            -- what keeps y's dtype and shape, as PyTorch checks without unsafe
            local function keeps(what, got)
                if got.dtype ~= y.dtype or not same_shape(got, y) then
                    raise(string.format("tide: %s: %s changes %s (%s %s -> %s %s); pass " ..
                        "{unsafe = true} to allow it", who, what, name, y.dtype, shape_str(y),
                        got.dtype, shape_str(got)))
                end
            end
            keeps("the parametrization", x)
            -- PyTorch checks right_inverse(X) too (a right_inverse = false: none, the identity)
            if parametrization.right_inverse then
                local z = autograd.no_grad(function()
                    return parametrization:right_inverse(x)
                end)
                if not is_tensor(z) then
                    raise("tide: " .. who .. ": right_inverse must return a tensor, got " ..
                        describe(z))
                end
                keeps("right_inverse", z)
            end
        end
        list:append(parametrization)
        rawset(list, "unsafe", list.unsafe or unsafe)
        return module
    end
    local kind = module._kind[name]
    if (kind ~= "parameter" and kind ~= "buffer") or not is_tensor(rawget(module, name)) then
        raise(string.format("tide: %s: %s has no parameter, buffer or parametrized tensor " ..
            "named '%s'", who, module.__name, name))
    end
    local list = first_list(module, name, parametrization, unsafe, who)
    module:_unregister(name)
    if not P.is_parametrized(module) and not rawget(module, "parametrizations") then
        inject_class(module)
        module:add_module("parametrizations", ModuleDict())
    end
    module.parametrizations:add_module(name, list)
    return module
end

-- P.remove_parametrizations(module, name[, leave_parametrized]) (or {leave_parametrized =}):
-- module[name] is a plain tensor again, its current value (default) or the original; the
-- original tensor object stays the module's (an optimizer holding it goes on). Returns module.
function P.remove_parametrizations(module, name, leave)
    local who = "remove_parametrizations"
    check_module(module, who)
    if type(leave) == "table" then
        leave = options(leave, who, { leave_parametrized = true }).leave_parametrized
    end
    if leave == nil then
        leave = true
    elseif type(leave) ~= "boolean" then
        raise("tide: " .. who .. ": leave_parametrized must be a boolean, got " .. describe(leave))
    end
    if not P.is_parametrized(module, name) then
        raise(string.format("tide: %s: %s has no parametrization on '%s'", who, module.__name,
            tostring(name)))
    end
    local list = rawget(module.parametrizations, name)
    local kind = list._kind.original0 or list._kind.original
    local original
    if rawget(list, "is_tensor") == false then
        if not leave then
            raise("tide: " .. who .. ": '" .. name .. "' is parametrized by several tensors; " ..
                "only leave_parametrized = true can remove it")
        end
        original = autograd.no_grad(function()
            return list():detach()
        end)
        if list.original0.requires_grad then
            original:requires_grad_(true)
        end
    else
        original = list.original
        if leave then
            autograd.no_grad(function()
                local t = list()
                original:set_(t:detach())
            end)
        end
    end
    module.parametrizations:_unregister(name)
    if cache[module] then
        cache[module][name] = nil
    end
    if #module.parametrizations._modules == 0 then
        module:_unregister("parametrizations")
        setmetatable(module, P.type_before_parametrizations(module))
    end
    if kind == "parameter" then
        module:register_parameter(name, original)
    else
        module:register_buffer(name, original)
    end
    return module
end

return P
