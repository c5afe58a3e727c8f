-- nn.ParameterList({t1, t2, ...}): a list of parameters, registered under the names "1", "2",
-- ... (as ModuleList's children, so state_dict keys read "weights.1"; PyTorch's "weights.0").
-- A tensor that is not an nn.Parameter becomes one (PyTorch's rule: requires_grad set). pl[i],
-- #pl and ipairs(pl) reach them. No forward.
local autograd = require("tide.autograd")
local Module = require("tide.nn.Module")
local Parameter = require("tide.nn.Parameter")
local PARAMS = require("tide.nn._parameters")
local entry = require("tide.nn._param_repr")

local raise = autograd.raise

local ParameterList = Module:extend("ParameterList")
ParameterList.__index = Module.list_index -- pl[-1]: the last parameter

local function as_parameter(t, who)
    if not autograd.is_tensor(t) then
        raise("tide: ParameterList:" .. who .. ": expected a tensor, got " .. type(t))
    end
    return PARAMS[t] and t or Parameter(t)
end

local function list_arg(ts, who)
    if type(ts) ~= "table" or autograd.is_tensor(ts) or Module.is_module(ts) then
        raise("tide: ParameterList:" .. who .. ": expected a list of tensors such as " ..
            "{tide.zeros(2)}, got " .. (autograd.is_tensor(ts) and "a tensor" or type(ts)))
    end
    for i = 1, #ts do
        if not autograd.is_tensor(ts[i]) then
            raise("tide: ParameterList:" .. who .. ": expected a tensor at " .. i .. ", got " ..
                type(ts[i]))
        end
    end
    return ts
end

function ParameterList:init(ts)
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

-- pl[i] for i past #pl is refused (append adds one); an existing slot is a plain field, as
-- ModuleList's: replacing one does not re-register it
function ParameterList.__newindex(self, k, v)
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
