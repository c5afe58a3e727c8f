-- Optimizer:state_dict() and Optimizer:load_state_dict(sd): PyTorch's layout, flattened into
-- names so that tide.save / tide.load take it as it is (see flat_state.lua):
--
--     state.<i>.<name>          tensor state of the i-th parameter (1-based, over the groups in
--                               order, as PyTorch numbers them from 0); Lua numbers ("step")
--                               as 0-d tensors
--     param_groups.<g>.params   int64: the indices of group g's parameters
--     param_groups.<g>.<key>    each hyperparameter (lr, betas, momentum, ...)
--
-- The state's tensors are the optimizer's own (as PyTorch's); load_state_dict copies them onto
-- each parameter's device and dtype, so training resumes on any device. All checks come first:
-- a failed load changes nothing.
local compat = require("tide._compat")
local core = require("tide.core")
local autograd = require("tide.autograd")
local raise = autograd.raise
local is_tensor = autograd.is_tensor
local flat = require("tide.optim.flat_state")
local Complex = require("tide.complex.tensor")

local M = {}

-- state entries kept as Lua numbers, not tensors: "step", and an optimizer's own
-- (cls.scalar_state: NAdam's mu_product)
local SCALAR = { step = true }

-- the key of p's state: the real pair of a complex parameter, which tide's optimizers step
-- (Optimizer.real_param); the parameter itself in a subclass's own step (Optimizer.init's)
local function state_key(self, p)
    if Complex.is(p) and not self._python_init then
        return Complex.ri(p)
    end
    return p
end

local function sorted_keys(t)
    local r = {}
    for k in pairs(t) do
        r[#r + 1] = k
    end
    table.sort(r)
    return r
end

-- PyTorch's nested view of a flat sd, built on reading sd.state or sd.param_groups (the
-- what_is_state_dict recipe's optimizer.state_dict()["param_groups"]): state[i][name] (the
-- tensor, or step as a number) and param_groups[g] ({lr = 0.001, params = {1, 2}, ...}). The
-- flat names stay the table's keys, so pairs, tide.save and load_state_dict see them only.
-- A view is kept per sd (weakly) and is PyTorch's dict to write into: what a script changes
-- in it (sd.param_groups[1].lr = 0.01 before opt:load_state_dict(sd)) goes into the flat names
-- when the sd is next read, loaded or saved (M.settle).
local views = setmetatable({}, { __mode = "k" })

-- the view's Lua values as plain tables: the names' tensors decoded
local function build(sd, key)
    local out = flat.nested(sd, key) or {}
    for _, entry in pairs(out) do
        for name, v in pairs(entry) do
            if key == "param_groups" or SCALAR[name] then
                entry[name] = flat.decode(v, "state_dict", key .. "." .. name)
            end
        end
    end
    return out
end

-- a copy of a view, one level of lists deep, to tell what a script changed since
local function snapshot(view)
    local out = {}
    for i, entry in pairs(view) do
        if type(entry) == "table" then
            out[i] = {}
            for name, v in pairs(entry) do
                if type(v) == "table" and not is_tensor(v) then
                    local list = {}
                    for j, x in pairs(v) do
                        list[j] = x
                    end
                    v = list
                end
                out[i][name] = v
            end
        end
    end
    return out
end

local function same(a, b)
    if type(a) == "table" and type(b) == "table" and not is_tensor(a) and not is_tensor(b) then
        for k, x in pairs(a) do
            if b[k] ~= x then
                return false
            end
        end
        for k in pairs(b) do
            if a[k] == nil then
                return false
            end
        end
        return true
    end
    return rawequal(a, b)
end

-- writes what a script changed in sd's views into its flat names; all values are checked
-- before any is written. Reading a view again (lenient) writes the good ones and keeps the
-- others in the view (returned as {[key] = {[i] = {[name] = true}}}) for load or save to name.
function M.settle(sd, lenient, who)
    local cache = views[sd]
    if not cache then
        return {}
    end
    local writes, kept = {}, {}
    for key, c in pairs(cache) do
        kept[key] = {}
        for i, entry in pairs(c.view) do
            for name, v in pairs(type(entry) == "table" and entry or {}) do
                if not same(v, c.was[i] and c.was[i][name]) then
                    local flat_name = key .. "." .. tostring(i) .. "." .. tostring(name)
                    local t = is_tensor(v) and v or flat.encode(v)
                    if t ~= nil and compat.is_integer(i) then
                        writes[flat_name] = t
                    elseif lenient then
                        kept[key][i] = kept[key][i] or {}
                        kept[key][i][name] = true
                    else
                        raise(string.format("tide: %s: %s was set to a %s, which has no " ..
                            "place in a state dict (numbers, booleans, lists of numbers and " ..
                            "tensors under 1-based indices have)", who or "save", flat_name,
                            type(v)))
                    end
                end
            end
        end
    end
    for name, t in pairs(writes) do
        sd[name] = t
    end
    for _, c in pairs(cache) do
        c.was = snapshot(c.view)
    end
    return kept
end

local VIEW = { __settle = M.settle }
function VIEW.__index(sd, key)
    if key ~= "state" and key ~= "param_groups" then
        return nil
    end
    local kept = M.settle(sd, true)[key] or {}
    local cache = views[sd] or {}
    views[sd] = cache
    local fresh = build(sd, key)
    local c = cache[key]
    if not c then
        c = { view = fresh }
        cache[key] = c
    else -- the same tables as before, brought up to the flat names' values
        for i in pairs(c.view) do
            if fresh[i] == nil and not kept[i] then
                c.view[i] = nil
            end
        end
        for i, entry in pairs(fresh) do
            local old = c.view[i]
            if type(old) ~= "table" then
                c.view[i] = entry
            else
                for name in pairs(old) do
                    if not (kept[i] and kept[i][name]) then
                        old[name] = entry[name]
                    end
                end
                for name, v in pairs(entry) do
                    if not (kept[i] and kept[i][name]) then
                        old[name] = v
                    end
                end
            end
        end
    end
    -- what could not be written stays a change, for load or save to name
    local was = snapshot(c.view)
    for i, names in pairs(kept) do
        for name in pairs(names) do
            if was[i] then
                was[i][name] = nil
            end
        end
    end
    c.was = was
    return c.view
end

-- a plain table of the names state_dict writes (tide.load's, a checkpoint's "optimizer" entry)
-- reads as PyTorch's nested dict too: it takes the view; true when it did
function M.adopt(t)
    if type(t) ~= "table" or getmetatable(t) ~= nil then
        return false
    end
    local groups = false
    for k, v in pairs(t) do
        if type(k) ~= "string" or not is_tensor(v) then
            return false
        elseif k:match("^param_groups%.%d+%.") then
            groups = true
        elseif not k:match("^state%.%d+%.") then
            return false
        end
    end
    if groups then
        setmetatable(t, VIEW)
    end
    return groups
end

function M.state_dict(self)
    local sd, index = setmetatable({}, VIEW), 0
    for gi, g in ipairs(self.param_groups) do
        local ids = {}
        for _, p in ipairs(g.params) do
            index = index + 1
            ids[#ids + 1] = index
            local st = self.state[state_key(self, p)]
            if st then
                for _, k in ipairs(sorted_keys(st)) do
                    local v = st[k]
                    if k ~= "device" and k ~= "dtype" then
                        sd["state." .. index .. "." .. k] = is_tensor(v) and v or flat.encode(v)
                    end
                end
            end
        end
        sd["param_groups." .. gi .. ".params"] = core.tensor(ids, { dtype = "int64",
            device = "cpu" })
        if #ids == 0 then
            sd["param_groups." .. gi .. ".params"] = core.zeros({ 0 }, { dtype = "int64",
                device = "cpu" })
        end
        for k, v in pairs(g) do
            if k ~= "params" then
                sd["param_groups." .. gi .. "." .. k] = flat.encode(v)
            end
        end
    end
    return sd
end

-- raises unless the decoded value of key k has the type of the default (a number, a boolean,
-- or a list of numbers as betas)
local function value_type(who, k, v, default)
    local want = type(default)
    if type(v) ~= want then
        raise(string.format("tide: %s: '%s' must be a %s, got a %s; pass the state dict " ..
            "opt:state_dict() gave", who, k, want, type(v)))
    end
    if want == "number" and v ~= v then
        raise(string.format("tide: %s: '%s' must be a number, got nan", who, k))
    end
    if want == "table" then
        for j = 1, #default do
            if type(v[j]) ~= type(default[j]) then
                raise(string.format("tide: %s: '%s' must be a list of %d %ss, got %s at " ..
                    "position %d", who, k, #default, type(default[j]), type(v[j]), j))
            end
        end
    end
end

function M.load_state_dict(self, sd)
    local who = self.__name .. ":load_state_dict"
    if type(sd) ~= "table" then
        raise("tide: " .. who .. ": expected a state dict (opt:state_dict() or tide.load's " ..
            "table), got " .. type(sd))
    end
    M.settle(sd, false, who) -- what the script wrote into sd.param_groups / sd.state
    -- parse every key first
    local groups, states, defaults = {}, {}, self.defaults or {}
    local scalar = self.scalar_state or SCALAR
    for k, v in pairs(sd) do
        local i, name = tostring(k):match("^state%.(%d+)%.(.+)$")
        local gi, key = tostring(k):match("^param_groups%.(%d+)%.(.+)$")
        if i then
            i = compat.tointeger(tonumber(i))
            states[i] = states[i] or {}
            states[i][name] = scalar[name] and flat.decode(v, who, k) or v
            if not scalar[name] and not is_tensor(v) then
                raise("tide: " .. who .. ": expected a tensor for '" .. k .. "', got " .. type(v))
            end
            if scalar[name] then
                value_type(who, k, states[i][name], 0)
            end
        elseif gi then
            gi = compat.tointeger(tonumber(gi))
            groups[gi] = groups[gi] or {}
            local value = flat.decode(v, who, k)
            if defaults[key] ~= nil then
                value_type(who, k, value, defaults[key])
            end
            groups[gi][key] = value
        else
            raise("tide: " .. who .. ": unexpected key '" .. tostring(k) .. "'; expected " ..
                "state.<i>.<name> and param_groups.<g>.<key>")
        end
    end
    local n = #self.param_groups
    for gi in pairs(groups) do
        if gi < 1 or gi > n then
            raise(string.format("tide: %s: the state dict has parameter group %d, the optimizer " ..
                "has %d group%s (loaded state dict has a different number of parameter " ..
                "groups)", who, gi, n, n == 1 and "" or "s"))
        end
    end
    local params = {}
    for gi, g in ipairs(self.param_groups) do
        local saved = groups[gi]
        if not saved or type(saved.params) ~= "table" then
            raise(string.format("tide: %s: the state dict lacks parameter group %d (it has a " ..
                "different number of groups: loaded state dict has a different number of " ..
                "parameter groups)", who, gi))
        end
        if #saved.params ~= #g.params then
            raise(string.format("tide: %s: parameter group %d has %d parameters in the state " ..
                "dict and %d in the optimizer (loaded state dict contains a parameter group " ..
                "that doesn't match the size of optimizer's group); build the optimizer " ..
                "over the same parameters", who, gi, #saved.params, #g.params))
        end
        for j, id in ipairs(saved.params) do
            params[id] = state_key(self, g.params[j])
        end
    end
    for i in pairs(states) do
        if not params[i] then
            raise(string.format("tide: %s: state.%d belongs to no parameter of the groups", who, i))
        end
    end
    -- then change things: the state, moved onto each parameter's device and dtype
    -- a subclass's own state table (Optimizer.init's defaultdict(dict), Lookahead's) stays one,
    -- its entries PyTorch's plain ones (no device / dtype)
    local meta = getmetatable(self.state)
    local plain = self._python_init or meta ~= nil
    local new_state = {}
    autograd.no_grad(function()
        for i, st in pairs(states) do
            local p = params[i]
            local out = plain and {} or { device = p.device, dtype = p.dtype }
            for k, v in pairs(st) do
                if is_tensor(v) then
                    if autograd.FLOAT[v.dtype] and v.dtype ~= p.dtype and not Complex.is(p) then
                        v = v:to(p.dtype)
                    end
                    v = v:to(p.device, { copy = true })
                end
                out[k] = v
            end
            new_state[p] = out
        end
    end)
    self.state = setmetatable(new_state, meta)
    for gi, g in ipairs(self.param_groups) do
        for k, v in pairs(groups[gi]) do
            if k ~= "params" then
                g[k] = v
            end
        end
    end
end

return M
