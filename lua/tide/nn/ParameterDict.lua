-- nn.ParameterDict(params): parameters by name, registered under those names (state_dict keys
-- read "scales.alpha", as PyTorch's). params is a list of {name, tensor} pairs (kept in that
-- order) or a table name -> tensor (taken in sorted name order, as PyTorch takes a plain
-- dict's). A tensor that is not an nn.Parameter becomes one. pd.name or pd["name"] reaches
-- one, pd.name = t adds or replaces; keys(), values(), items() follow registration order.
local autograd = require("tide.autograd")
local Module = require("tide.nn.Module")
local Parameter = require("tide.nn.Parameter")
local PARAMS = require("tide.nn._parameters")
local entry = require("tide.nn._param_repr")
local dict_entries = require("tide.nn._dict_entries")

local raise = autograd.raise
local is_complex = require("tide.complex.tensor").is
-- a parameter's value: a tensor or a complex tensor (a complex parameter)
local function is_tensor(v)
    return autograd.is_tensor(v) or is_complex(v)
end

local ParameterDict = Module:extend("ParameterDict")

local KIND = { name = "ParameterDict", class = ParameterDict, item = "tensor",
    an_item = "a tensor", is_item = is_tensor }

local function set(self, name, t)
    t = PARAMS[t] and t or Parameter(t)
    if self._kind[name] == "parameter" then
        rawset(self, name, t)
    else
        self:register_parameter(name, t)
    end
    local shadow = rawget(self, "_slot_shadow")
    if shadow then
        shadow[name] = t
    end
end

-- pd.name = t on an existing name is a raw Lua assignment: the dict hides `_params` and every
-- walk first makes such a tensor an nn.Parameter (PyTorch's pd[k] = t); another value is put
-- back and raises (tide.nn.ParameterList's sync)

local function sync(self)
    local shadow = rawget(self, "_slot_shadow")
    for _, name in ipairs(rawget(self, "_slot_params")) do
        local v = rawget(self, name)
        if v ~= shadow[name] or (v ~= nil and not PARAMS[v]) then
            if not is_tensor(v) then
                rawset(self, name, shadow[name])
                raise(("tide: ParameterDict: cannot assign '%s' as parameter '%s' (a tensor or " ..
                    "nn.Parameter expected); the parameter is put back"):format(
                    v == nil and "nil" or type(v), name))
            end
            v = PARAMS[v] and v or Parameter(v)
            rawset(self, name, v)
            shadow[name] = v
        end
    end
end

function ParameterDict.__index(self, k)
    if k == "_params" and rawget(self, "_slot_params") then
        sync(self)
        return rawget(self, "_slot_params")
    end
    return getmetatable(self)[k]
end

function ParameterDict:init(ts)
    if rawget(self, "_slot_params") == nil then
        rawset(self, "_slot_params", rawget(self, "_params"))
        rawset(self, "_params", nil)
        rawset(self, "_slot_shadow", {})
    end
    if ts ~= nil then
        self:update(ts)
    end
end

-- adds or replaces parameters by name
function ParameterDict:update(ts)
    for _, e in ipairs(dict_entries.entries(KIND, ts, "update")) do
        set(self, e[1], e[2])
    end
    return self
end

-- pd.name = t adds or replaces a parameter; other fields as Module's
function ParameterDict.__newindex(self, k, v)
    if type(k) == "string" and is_tensor(v) and rawget(self, "_kind") then
        dict_entries.check_entry(KIND, k, v, "set")
        set(self, k, v)
        return
    end
    Module.__newindex(self, k, v)
end

function ParameterDict:keys()
    local r = {}
    for i, name in ipairs(self._params) do
        r[i] = name
    end
    return r
end

function ParameterDict:values()
    local r = {}
    for i, name in ipairs(self._params) do
        r[i] = rawget(self, name)
    end
    return r
end

-- the {name, tensor} pairs in order (for ipairs); also `for name, p in pairs(pd:items())`
function ParameterDict:items()
    return self:named_parameters()
end

function ParameterDict:contains(name)
    return self._kind[name] == "parameter"
end

-- removes the parameter name and returns it
function ParameterDict:pop(name)
    if not self:contains(name) then
        raise("tide: ParameterDict:pop: no parameter '" .. tostring(name) .. "'")
    end
    return self:_unregister(name)
end

-- pd:get(name[, default]): the parameter, or default (nil) when there is none (PyTorch's get)
function ParameterDict:get(name, default)
    if self:contains(name) then
        return rawget(self, name)
    end
    return default
end

-- pd:setdefault(name[, t]): the parameter name, added as t first when missing (PyTorch's)
function ParameterDict:setdefault(name, t)
    if not self:contains(name) then
        dict_entries.check_entry(KIND, name, t, "setdefault")
        set(self, name, t)
    end
    return rawget(self, name)
end

-- removes the last added parameter; returns its name and it (PyTorch's popitem, LIFO)
function ParameterDict:popitem()
    local name = self._params[#self._params]
    if name == nil then
        raise("tide: ParameterDict:popitem: the ParameterDict is empty")
    end
    return name, self:_unregister(name)
end

-- removes every parameter (PyTorch's clear)
function ParameterDict:clear()
    for _, name in ipairs(self:keys()) do
        self:_unregister(name)
    end
end

-- a new ParameterDict of the same parameters (not copied), in order (PyTorch's copy)
function ParameterDict:copy()
    return ParameterDict(self:items())
end

-- pd:fromkeys(names[, t]): a new ParameterDict with each name set to t (PyTorch's fromkeys)
function ParameterDict:fromkeys(names, t)
    local list = {}
    for i, name in ipairs(names) do
        list[i] = { name, t }
    end
    return ParameterDict(list)
end

function ParameterDict:forward()
    raise("tide: ParameterDict: has no forward; use its parameters (pd.name)")
end

function ParameterDict.__len(self)
    return #self._params
end

function ParameterDict:extra_repr()
    local parts = {}
    for i, name in ipairs(self._params) do
        parts[i] = entry(name, rawget(self, name))
    end
    return table.concat(parts, ", ")
end

return ParameterDict
