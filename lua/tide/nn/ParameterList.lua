-- nn.ParameterList({t1, t2, ...}): a list of parameters, registered under the names "1", "2",
-- ... (as ModuleList's children, so state_dict keys read "weights.1"; PyTorch's "weights.0").
-- A tensor that is not an nn.Parameter becomes one (PyTorch's rule: requires_grad set). pl[i],
-- #pl and ipairs(pl) reach them. No forward.
local autograd = require("tide.autograd")
local compat = require("tide._compat")
local Module = require("tide.nn.Module")
local Parameter = require("tide.nn.Parameter")
local PARAMS = require("tide.nn._parameters")
local entry = require("tide.nn._param_repr")
local is_complex = require("tide.complex.tensor").is

local raise = autograd.raise

local ParameterList = Module:extend("ParameterList")

-- pl[i] = t on an existing slot is a raw Lua assignment: the slot i and the registered "i" part
-- ways. So the list hides `_params` (as ModuleList its `_modules`, tide.nn._list_slots; modules
-- are told apart by their raw `_kind`) and every walk (parameters, state_dict, to, zero_grad, an
-- optimizer's parameters()) first reconciles them, as PyTorch's pl[i] = t registers t (a tensor
-- becomes an nn.Parameter; any other value is put back and raises).

-- a parameter's value: a tensor or a complex tensor (a complex parameter)
local function is_value(v)
    return autograd.is_tensor(v) or is_complex(v)
end

local function as_parameter(t, who)
    if not is_value(t) then
        raise("tide: ParameterList:" .. who .. ": expected a tensor, got " .. type(t))
    end
    return PARAMS[t] and t or Parameter(t)
end

local function list_arg(ts, who)
    if type(ts) ~= "table" or is_value(ts) or Module.is_module(ts) then
        raise("tide: ParameterList:" .. who .. ": expected a list of tensors such as " ..
            "{tide.zeros(2)}, got " .. (is_value(ts) and "a tensor" or type(ts)))
    end
    for i = 1, #ts do
        if not is_value(ts[i]) then
            raise("tide: ParameterList:" .. who .. ": expected a tensor at " .. i .. ", got " ..
                type(ts[i]))
        end
    end
    return ts
end

local sync -- below

-- pl[-1]: the last parameter; pl._params: the names after reconciling
function ParameterList.__index(self, k)
    if k == "_params" then
        sync(self)
        return rawget(self, "_slot_params")
    end
    return Module.list_index(self, k)
end

-- the slots that differ from the names' parameters: the one changed since last seen wins
function sync(self)
    local n, shadow = rawget(self, "n"), rawget(self, "_slot_shadow")
    if n == nil or shadow == nil then
        return
    end
    for i = 1, n do
        local name = tostring(i)
        local s, v = rawget(self, i), rawget(self, name)
        if s ~= v or (s ~= nil and not PARAMS[s]) then
            local old = shadow[i]
            local new = v == old and s or v
            if not is_value(new) then
                rawset(self, i, old)
                rawset(self, name, old)
                raise(("tide: ParameterList: cannot assign '%s' as parameter %d (a tensor or " ..
                    "nn.Parameter expected); the parameter is put back"):format(
                    new == nil and "nil" or type(new), i))
            end
            new = as_parameter(new, "set")
            rawset(self, i, new)
            rawset(self, name, new)
        end
        shadow[i] = rawget(self, i)
    end
end

function ParameterList:init(ts)
    if rawget(self, "_slot_params") == nil then
        rawset(self, "_slot_params", rawget(self, "_params"))
        rawset(self, "_params", nil)
        rawset(self, "_slot_shadow", {})
    end
    rawset(self, "n", 0)
    if ts ~= nil then
        self:extend(list_arg(ts, "init"))
    end
end

function ParameterList:append(t)
    t = as_parameter(t, "append")
    local n = self.n + 1
    rawset(self, "n", n)
    self:register_parameter(tostring(n), t)
    rawset(self, n, t)
    local shadow = rawget(self, "_slot_shadow")
    if shadow then
        shadow[n] = t
    end
    return self
end

--- pl:extend(ts) appends each tensor; on a class it stays Module.extend (a subclass)
function ParameterList:extend(ts, ...)
    if not Module.is_module(self) then
        return Module.extend(self, ts, ...)
    end
    list_arg(ts, "extend")
    for i = 1, #ts do
        self:append(ts[i])
    end
    return self
end

-- pl[i] for i past #pl is refused (append adds one); an existing slot: see sync
function ParameterList.__newindex(self, k, v)
    local n = rawget(self, "n") or 0
    if compat.is_integer(k) and k < 0 and k >= -n then
        rawset(self, n + 1 + k, v) -- pl[-1] = t: the last slot, as pl[n] = t
        return
    end
    if type(k) == "number" then
        raise(("tide: ParameterList: index %s out of range 1..%d; append to add one")
            :format(tostring(k), self.n))
    end
    Module.__newindex(self, k, v)
end

function ParameterList:forward()
    raise("tide: ParameterList: has no forward; use its parameters (for i, p in ipairs(pl))")
end

function ParameterList.__len(self)
    return self.n
end

function ParameterList:extra_repr()
    local parts = {}
    for i = 1, self.n do
        parts[i] = entry(tostring(i), rawget(self, i))
    end
    return table.concat(parts, ", ")
end

return ParameterList
