-- The two places a list module (Sequential, ModuleList) keeps a layer, kept the same module.
-- s[i] is a raw slot (ipairs and # read it on every Lua host, forward runs it) and s["1"]
-- (or s.conv1) the named child that parameters(), state_dict(), print and named_children()
-- walk. A Lua assignment to an existing key is raw, so PyTorch's seq[0] = m (tide's s[1] = m)
-- and setattr(seq, name, m) (tide's s[name] = m, as replace_linear_with_lora writes it) each
-- changed only one of them: s[1] = m ran m in forward while parameters() listed the old
-- layer's, s["1"] = m listed m's parameters while forward ran the old layer. The list hides
-- its `_modules` (the names) behind __index, so every walk of the children (Module's, and
-- forward's) first reconciles them: the one that differs from the layer last seen there wins
-- and is written into the other. A value that is not a Module (s[1] = 5, s[1] = nil) is put
-- back and raises, as PyTorch's `cannot assign 'int' as child module`.
local raise = require("tide.autograd").raise
local is_integer = require("tide._compat").is_integer

local M = {}

local function is_module(v)
    return type(v) == "table" and v.__ismodule == true and rawget(v, "_kind") ~= nil
end

-- moves self._modules behind __index (call first in init)
function M.hide(self)
    if rawget(self, "_slot_names") == nil then
        rawset(self, "_slot_names", rawget(self, "_modules"))
        rawset(self, "_modules", nil)
        rawset(self, "_slot_shadow", {})
    end
end

-- runs fn(...) with reconciling off (a list's own edits move both forms together)
function M.busy(self, fn, ...)
    local was = rawget(self, "_slot_busy")
    rawset(self, "_slot_busy", true)
    local ok, err = pcall(fn, ...)
    rawset(self, "_slot_busy", was)
    if not ok then
        error(err, 0)
    end
end

-- records slots 1..n as seen now
function M.record(self)
    local shadow = rawget(self, "_slot_shadow")
    if not shadow then
        return
    end
    local n = rawget(self, "n") or 0
    for i = 1, n do
        shadow[i] = rawget(self, i)
    end
    for i = n + 1, #shadow do
        shadow[i] = nil
    end
end

-- names(self) -> the name of each slot 1..n (nil when they no longer pair up: rebuild(self)
-- then makes the slots from the names); who names the class for errors
function M.sync(self, who, names, rebuild)
    local n = rawget(self, "n")
    local shadow = rawget(self, "_slot_shadow")
    if n == nil or shadow == nil or rawget(self, "_slot_busy") then
        return
    end
    local list = names(self)
    if list == nil then
        M.busy(self, rebuild, self)
        M.record(self)
        return
    end
    for i = 1, n do
        local name = list[i]
        local s, v = rawget(self, i), rawget(self, name)
        if s ~= v then
            local old = shadow[i]
            local new, form
            if v == old then
                new, form = s, string.format("s[%d] = v", i)
            elseif s == old then
                new, form = v, string.format("s[\"%s\"] = v", name)
            else
                rawset(self, i, old)
                rawset(self, name, old)
                raise(string.format("tide: %s: layer %d was set twice, as s[%d] and as " ..
                    "s[\"%s\"], to different modules; set one of them (the layer is put back)",
                    who, i, i, name))
            end
            if not is_module(new) then
                rawset(self, i, old)
                rawset(self, name, old)
                raise(string.format("tide: %s: %s with v a %s: a layer must be a Module (the " ..
                    "layer is put back; remove one with s:pop(%d))", who, form,
                    new == nil and "nil" or type(new), i))
            end
            rawset(self, i, new)
            rawset(self, name, new)
        end
        shadow[i] = rawget(self, i)
    end
    for i = n + 1, #shadow do
        shadow[i] = nil
    end
end

-- the class's __index for "_modules": the names, after reconciling
function M.names_list(self, who, names, rebuild)
    M.sync(self, who, names, rebuild)
    return rawget(self, "_slot_names")
end

-- i as a position 1..last of a list with n entries (negative from the end: -1 is the n-th),
-- else raises naming the class and the method (who: "Sequential:insert")
function M.position(n, who, i, last)
    if is_integer(i) and i < 0 and i >= -n then
        i = n + 1 + i
    end
    if not is_integer(i) or i < 1 or i > last then
        raise(string.format("tide: %s: index %s out of range 1..%d (or -%d..-1)", who,
            tostring(i), last, n))
    end
    return i
end

return M
