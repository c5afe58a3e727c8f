-- nn.Module: the base class of every layer and model.
--
-- A class is a table that is also its instances' metatable. Lua does not inherit metamethods
-- through __index, so extend() copies them into each subclass. Parameters, buffers and
-- children are kept in ordered name lists (never discovered with pairs, whose order is
-- unspecified): assigning a tensor with requires_grad, or a Module, to a new field registers
-- it in assignment order; the values are read back from the fields by name.
local compat = require("tide._compat")
local core = require("tide.core")
local autograd = require("tide.autograd")
local args = require("tide.op_args")
local Complex = require("tide.complex.tensor")
local is_complex = Complex.is
local view_as_real = Complex.ri
local raise = autograd.raise

-- a sparse COO tensor (tide.sparse.coo, loaded on first use: none exists before)
local function is_sparse(v)
    local Sparse = package.loaded["tide.sparse.coo"]
    return Sparse ~= nil and Sparse.is(v)
end

local is_tensor = autograd.is_tensor
local PARAMS = require("tide.nn._parameters") -- nn.Parameter's tensors
-- tensors that stand in a parameter's field for one call (functional_call's), weak
local STAND_INS = setmetatable({}, { __mode = "k" })
local BUFFERS = require("tide.nn._buffers") -- nn.Buffer's tensors

local Module = { __name = "Module", __ismodule = true }
Module.__index = Module
-- Python's m.__class__ (the class) and m.__class__.__name__ (its name, as m.__name):
-- classname = m.__class__.__name__ reads the same in Lua
Module.__class__ = Module
Module.__name__ = "Module"

local METAMETHODS = { "__call", "__tostring", "__newindex", "__len", "__add", "__mul" }

local signature = require("tide.nn._signature")

-- cls(...): PyTorch's constructor arguments where the class declares its signature
-- (tide.nn._signature), else those its init takes; an argument past them raises
local adopt_replaced -- (self): the fields init turned from plain values into modules

local function construct(cls, ...)
    local self = { _params = {}, _buffers = {}, _modules = {}, _kind = {}, training = true,
        _plain = {} }
    setmetatable(self, cls)
    local init = cls.init
    local spec = signature.of(init) or signature.of_class(cls)
    if spec then
        signature.call(self, cls.__name, init, spec, ...)
    else
        signature.check_init(cls, init, ...)
        init(self, ...)
    end
    adopt_replaced(self)
    return self
end

local function is_module(v)
    return type(v) == "table" and v.__ismodule == true and rawget(v, "_kind") ~= nil
end
Module.is_module = is_module

-- m's registered child `name`, or nil; one set to anything but a Module (m.fc = 5 on a field
-- already set passes __newindex) raises where a walk meets it, as PyTorch's assignment does
local function child(m, name)
    local c = rawget(m, name)
    if c ~= nil and not is_module(c) then
        raise(("tide: %s.%s was set to %s after it was registered as a child module (PyTorch " ..
            "refuses it: cannot assign '%s' as child module '%s'); assign a Module, or nil to " ..
            "remove it"):format(m.__name, name, is_tensor(c) and "a tensor" or "a " .. type(c),
            type(c), name))
    end
    return c
end
Module._stand_ins = STAND_INS

local CLASSES = require("tide.nn._classes")

-- Module:extend("Name") -> a subclass; calling the class constructs an instance
function Module:extend(name)
    local cls = { __name = name or "Module" }
    cls.__class__ = cls
    cls.__name__ = cls.__name
    if name ~= nil then
        CLASSES[name] = cls
    end
    cls.__index = cls
    local index = rawget(self, "__index")
    if type(index) == "function" then -- a list's (Module.list_index): its subclasses' too
        cls.__index = index
    end
    for _, k in ipairs(METAMETHODS) do
        cls[k] = rawget(self, k) or self[k]
    end
    return setmetatable(cls, { __index = self, __call = construct })
end

setmetatable(Module, { __call = construct })

function Module:init() end

-- the __index of the lists (Sequential, ModuleList, ParameterList: entries at 1..self.n):
-- list[-1] is the last entry, list[-n] the first, as PyTorch's; further out nil, as past the
-- end. Any other key is the class's (methods).
function Module.list_index(self, k)
    if compat.is_integer(k) and k < 0 then
        local n = rawget(self, "n") or 0
        return k >= -n and rawget(self, n + 1 + k) or nil
    end
    return getmetatable(self)[k]
end

-- the positions a list's slice takes, in order: list[{{a, b}}], list[{{a, b, step}}],
-- list[{{a}}] or list[{{}}], written as a tensor's first dim (1-based, inclusive, negative from
-- the end; step >= 1) but cut to 1..n and empty when a > b, as Python's slices of a list are
-- (a tensor's range past its end raises: its size is data, a list's length is code's). var and
-- hint name the list and show PyTorch's form beside tide's, for the error
function Module.list_slice(self, key, who, var, hint)
    local n = rawget(self, "n") or 0
    local r = key[1]
    if #key ~= 1 or type(r) ~= "table" or (r[1] ~= nil and not compat.is_integer(r[1])) or
        (r[2] ~= nil and not compat.is_integer(r[2])) or
        (r[3] ~= nil and (not compat.is_integer(r[3]) or r[3] < 1)) then
        raise(("tide: %s: a slice is %s[{{first, last}}] or %s[{{first, last, step}}] " ..
            "(1-based, inclusive, negative from the end; step >= 1), as a tensor's first dim: %s")
            :format(who, var, var, hint))
    end
    local a, b, step = r[1] or 1, r[2] or r[1] or n, r[3] or 1
    if a < 0 then
        a = n + 1 + a
    end
    if b < 0 then
        b = n + 1 + b
    end
    local at = {}
    for k = math.max(a, 1), math.min(b, n), step do
        at[#at + 1] = k
    end
    return at
end

function Module:forward()
    raise("tide: " .. self.__name .. ": forward is not defined; define " .. self.__name ..
        ":forward(x)")
end

local hooks = require("tide.nn.module_hooks")

-- model(x): a tail call, so error levels inside forward see the user's line as level 2; a
-- module with forward hooks runs them around it (tide.nn.module_hooks)
local global_hooks = hooks.globals
function Module.__call(self, ...)
    if rawget(self, "_forward_pre_hooks") or rawget(self, "_forward_hooks") or
        rawget(self, "_backward_hooks") or next(global_hooks) then
        return hooks.call(self, ...)
    end
    return self:forward(...)
end

Module.register_forward_pre_hook = hooks.register_forward_pre_hook
Module.register_forward_hook = hooks.register_forward_hook
Module.register_full_backward_hook = hooks.register_full_backward_hook
Module.register_backward_hook = hooks.register_backward_hook
Module._register_state_dict_hook = hooks._register_state_dict_hook
Module._register_load_state_dict_pre_hook = hooks._register_load_state_dict_pre_hook
Module.register_load_state_dict_post_hook = hooks.register_load_state_dict_post_hook

-- {module, prefix} for self and each module under it for which keep(module) holds: parents
-- before their children (post = true: after them, as state_dict runs its hooks)
local function modules_where(self, keep, prefix, post)
    local found = {}
    local function walk(m, p)
        if not post and keep(m) then
            found[#found + 1] = { m, p }
        end
        for _, name in ipairs(m._modules) do
            local c = child(m, name)
            if c then
                walk(c, p .. name .. ".")
            end
        end
        if post and keep(m) then
            found[#found + 1] = { m, p }
        end
    end
    walk(self, prefix or "")
    return found
end

-- the modules with hooks in list_name
local function hooked_modules(self, list_name, prefix, post)
    return modules_where(self, function(m) return rawget(m, list_name) end, prefix, post)
end

local function check_name(name, what)
    if type(name) ~= "string" or name == "" or name:find(".", 1, true) then
        raise("tide: " .. what .. ": expected a non-empty name without '.', got " ..
            tostring(name))
    end
end

-- PyTorch's register_parameter/register_buffer/add_module refuse a name the module already has
-- as something else (a plain field, a method such as train): it would hide it
local function check_free(self, name, who)
    if self._kind[name] == nil and self[name] ~= nil then
        raise(("tide: %s: attribute '%s' already exists on %s; use another name"):format(who,
            name, self.__name))
    end
end

local function add(self, list, kind, name, v)
    local k = self._kind[name]
    if k and k ~= kind then
        raise("tide: " .. self.__name .. ": '" .. name .. "' is already registered as a " .. k ..
            "; use another name")
    end
    if not k then
        list[#list + 1] = name
        self._kind[name] = kind
    end
    rawset(self, name, v)
end

function Module:register_parameter(name, p)
    check_name(name, "register_parameter")
    check_free(self, name, "register_parameter")
    if p ~= nil and not is_tensor(p) and not is_complex(p) then
        raise("tide: register_parameter: expected a tensor for '" .. name .. "', got " ..
            args.typename(p))
    end
    if p ~= nil and not p.requires_grad and not PARAMS[p] then -- nn.Parameter's as it is
        p:requires_grad_(true)
    end
    add(self, self._params, "parameter", name, p)
    if p ~= nil then
        PARAMS[p] = true
    end
    return p
end

-- register_buffer(name, tensor[, persistent]) or (name, tensor, {persistent =}): PyTorch's
-- persistent = false keeps the buffer out of state_dict() (and load_state_dict's keys); it
-- still moves with model:to() and is listed by buffers()
function Module:register_buffer(name, b, persistent)
    check_name(name, "register_buffer")
    check_free(self, name, "register_buffer")
    if type(persistent) == "table" and getmetatable(persistent) == nil then
        for k in pairs(persistent) do
            if k ~= "persistent" then
                raise("tide: register_buffer: unknown option '" .. tostring(k) ..
                    "'; it takes (name, tensor, persistent) or (name, tensor, " ..
                    "{persistent = false})")
            end
        end
        persistent = persistent.persistent
    end
    if persistent ~= nil and type(persistent) ~= "boolean" then
        raise("tide: register_buffer: persistent must be true or false, got " ..
            (type(persistent) == "number" and tostring(persistent) or type(persistent)) ..
            " for '" .. tostring(name) .. "'")
    end
    if b ~= nil and not is_tensor(b) and not is_complex(b) and not is_sparse(b) then
        raise("tide: register_buffer: expected a tensor for '" .. name .. "', got " ..
            args.typename(b))
    end
    add(self, self._buffers, "buffer", name, b)
    local np = rawget(self, "_non_persistent")
    if persistent == false then
        if not np then
            np = {}
            rawset(self, "_non_persistent", np)
        end
        np[name] = true
    elseif np then
        np[name] = nil
    end
    return b
end

function Module:add_module(name, m)
    check_name(name, "add_module")
    check_free(self, name, "add_module")
    if m ~= nil and not is_module(m) then
        raise("tide: add_module: expected a Module for '" .. name .. "', got " .. type(m))
    end
    add(self, self._modules, "module", name, m)
    return m
end

-- removes the parameter, buffer or child `name` (nn.utils' reparametrizations replace a
-- parameter by others); returns what it held
function Module:_unregister(name)
    local kind = self._kind[name]
    local list = kind == "parameter" and self._params or kind == "buffer" and self._buffers or
        kind == "module" and self._modules
    if not list then
        return nil
    end
    for i, n in ipairs(list) do
        if n == name then
            table.remove(list, i)
            break
        end
    end
    self._kind[name] = nil
    local np = rawget(self, "_non_persistent")
    if np then
        np[name] = nil
    end
    local v = rawget(self, name)
    rawset(self, name, nil)
    return v
end

Module.register_module = Module.add_module

-- get_submodule("a.b"), get_parameter("a.b.weight"), get_buffer("a.running_mean"): the
-- child, parameter or buffer a dotted name (state_dict's names) leads to, as PyTorch's
local function walk(self, who, path)
    if type(path) ~= "string" then
        raise("tide: " .. who .. ": expected a dotted name such as \"layers.1\", got " ..
            type(path))
    end
    local m = self
    if path == "" then
        return m
    end
    for part in (path .. "."):gmatch("([^.]*)%.") do
        if m._kind[part] ~= "module" then
            raise(("tide: %s: %s has no submodule '%s' (in \"%s\")"):format(who, m.__name, part,
                path))
        end
        m = rawget(m, part)
    end
    return m
end

function Module:get_submodule(target)
    return walk(self, "get_submodule", target)
end

local function get_tensor(self, who, kind, target)
    if type(target) ~= "string" then
        raise("tide: " .. who .. ": expected a dotted name such as \"fc.weight\", got " ..
            type(target))
    end
    local prefix, name = target:match("^(.*)%.([^.]*)$")
    local m = walk(self, who, prefix or "")
    name = name or target
    if m._kind[name] ~= kind then
        raise(("tide: %s: %s has no %s '%s' (in \"%s\")"):format(who, m.__name, kind, name,
            target))
    end
    return rawget(m, name)
end

function Module:get_parameter(target)
    return get_tensor(self, "get_parameter", "parameter", target)
end

function Module:get_buffer(target)
    return get_tensor(self, "get_buffer", "buffer", target)
end

-- first assignment of a field: a Module becomes a child, an nn.Buffer a buffer, a tensor that
-- requires grad (or an nn.Parameter) a parameter. Lua calls this for an absent key only, so a
-- field that init first sets to a plain value and then to a Module (Python's self.net = []
-- ... self.net = nn.Sequential(*self.net)) is noted while init runs (_plain) and registered
-- when it returns (adopt_replaced), in the order of the fields' first assignments
function Module.__newindex(self, k, v)
    if type(k) == "string" and rawget(self, "_kind") and not self._kind[k] then
        if is_module(v) then
            add(self, self._modules, "module", k, v)
            return
        elseif is_tensor(v) and BUFFERS[v] ~= nil and not PARAMS[v] then -- nn.Buffer(t)
            self:register_buffer(k, v, BUFFERS[v])
            return
        elseif is_tensor(v) and (PARAMS[v] or v.requires_grad and v.is_leaf ~= false) or
            is_complex(v) and (PARAMS[v] or v.requires_grad and v.is_leaf and
                not PARAMS[view_as_real(v)]) then -- (view_as_complex(self.w) is no new one)
            add(self, self._params, "parameter", k, v)
            PARAMS[v] = true -- a parameter now, as PyTorch's would be (isinstance, a frozen copy)
            return
        end
        local plain = rawget(self, "_plain")
        if plain and v ~= nil then
            plain[#plain + 1] = k
        end
    end
    rawset(self, k, v)
end

function adopt_replaced(self)
    local plain = rawget(self, "_plain")
    rawset(self, "_plain", nil)
    for _, k in ipairs(plain) do
        local v = rawget(self, k)
        if not self._kind[k] then
            if is_module(v) then
                add(self, self._modules, "module", k, v)
            elseif (is_tensor(v) or is_complex(v)) and PARAMS[v] then -- PyTorch's __setattr__
                add(self, self._params, "parameter", k, v)
            end
        end
    end
end

-- Python's self.__setattr__(name, value) and self.__getattr__(name), as DLA's Tree registers
-- and reads its subtrees by a computed name ('level_%d' % i): __setattr__ is self[name] = value
-- (a Module becomes a child, a Parameter a parameter, as an assignment does); __getattr__ is
-- self[name], and raises (as PyTorch's AttributeError) where the module has no such attribute
function Module:__setattr__(name, value)
    if type(name) ~= "string" then
        raise(("tide: %s.__setattr__: the attribute name must be a string, got %s %s; write " ..
            "self:__setattr__(string.format(\"level_%%d\", i), m)"):format(self.__name, type(name),
            tostring(name)))
    end
    self[name] = value
end

function Module:__getattr__(name)
    if type(name) ~= "string" then
        raise(("tide: %s.__getattr__: the attribute name must be a string, got %s %s")
            :format(self.__name, type(name), tostring(name)))
    end
    local v = self[name]
    if v == nil then
        raise(("tide: '%s' object has no attribute '%s' (%s.__getattr__)"):format(self.__name, name,
            self.__name))
    end
    return v
end

-- ---- ordered name -> value tables ----
-- named_parameters(), named_buffers(), named_children() and state_dict() return a table t with
-- t[name] = value whose iteration follows registration order: pairs(t) and `for name, v in t`
-- (t is callable) both give (name, value). The listings (not the state dict, which is saved
-- as is) also hold {name, value} pairs at 1..n for ipairs.
local Named = {}

local named_next -- (t, k) -> the next name and value

function Named.__pairs(t)
    return named_next, t, nil
end

-- keys added by the caller come after the registered ones (raw order), removed ones are skipped
local function next_extra(t, pos, k)
    local v
    repeat
        k, v = next(t, k)
    until k == nil or (pos[k] == nil and not compat.is_integer(k))
    return k, v
end

function named_next(t, last)
    local mt = getmetatable(t)
    local keys, pos = mt.keys, mt.pos
    local i = 1
    if last ~= nil then
        if pos[last] == nil then
            return next_extra(t, pos, last)
        end
        i = pos[last] + 1
    end
    for j = i, #keys do
        local k = keys[j]
        local v = rawget(t, k)
        if v ~= nil then
            return k, v
        end
    end
    return next_extra(t, pos, nil)
end

-- `for name, v in t do`: the generic for calls t(nil, last)
function Named.__call(t, _, last)
    return named_next(t, last)
end

local function named(names, vals, with_list)
    local t, pos = {}, {}
    for i = 1, #names do
        t[names[i]] = vals[i]
        pos[names[i]] = i
        if with_list then
            t[i] = { names[i], vals[i] }
        end
    end
    return setmetatable(t, { __pairs = Named.__pairs, __call = Named.__call, keys = names,
        pos = pos })
end

-- ---- traversal (registration order, depth first: own parameters, then children) ----

-- recurse false: self's own only; dedupe false: a tensor under two names is listed twice
local function each_named(self, listname, prefix, out_names, out_vals, seen, recurse, dedupe)
    for _, name in ipairs(self[listname]) do
        local v = rawget(self, name)
        if listname == "_params" and v ~= nil and not PARAMS[v] and not STAND_INS[v] then
            -- Lua's __newindex does not see m.weight = t on a field already set: the listing
            -- does, where PyTorch's assignment raises
            local path = prefix .. name
            raise(("tide: %s was set to %s after it was registered as a parameter (PyTorch " ..
                "refuses m.%s = t); assign nn.Parameter(t), or copy the values into the " ..
                "parameter: m.%s.data:copy_(t)"):format(prefix == "" and self.__name .. "." ..
                name or path, is_tensor(v) and "a plain tensor" or "a " .. type(v), path, path))
        end
        if v ~= nil and not (dedupe ~= false and seen[v]) then
            seen[v] = true
            out_names[#out_names + 1] = prefix .. name
            out_vals[#out_vals + 1] = v
        end
    end
    if recurse == false then
        return
    end
    for _, name in ipairs(self._modules) do
        local m = child(self, name)
        if m then
            each_named(m, listname, prefix .. name .. ".", out_names, out_vals, seen, true,
                dedupe)
        end
    end
end

-- the arguments of parameters([recurse]) and named_parameters([prefix, recurse,
-- remove_duplicate]) (buffers alike): PyTorch's, positionally or, the last of them (or all), in
-- a table by name ({recurse = false}); self is argument #1
local LISTING = { "recurse" }
local NAMED_LISTING = { "prefix", "recurse", "remove_duplicate" }
local function listing(who, names, ...)
    if select("#", ...) == 0 then -- the usual call: no argument to read
        return "", nil, nil
    end
    local o = signature.arguments(who, names, 1, ...)
    core._check_options(o, who, names)
    for _, k in ipairs({ "recurse", "remove_duplicate" }) do
        if o[k] ~= nil and type(o[k]) ~= "boolean" then
            raise(("tide: %s: expected %s to be a boolean, got %s"):format(who, k,
                is_tensor(o[k]) and "a tensor" or type(o[k])))
        end
    end
    if o.prefix ~= nil and type(o.prefix) ~= "string" then
        raise(("tide: %s: expected prefix to be a string, got %s"):format(who, type(o.prefix)))
    end
    local prefix = o.prefix or ""
    return prefix == "" and "" or prefix .. ".", o.recurse, o.remove_duplicate
end

local function list(self, listname, who, names, ...)
    local prefix, recurse, dedupe = listing(who, names, ...)
    local out_names, vals = {}, {}
    each_named(self, listname, prefix, out_names, vals, {}, recurse, dedupe)
    return out_names, vals
end

function Module:named_parameters(...)
    local names, vals = list(self, "_params", "named_parameters", NAMED_LISTING, ...)
    return named(names, vals, true)
end

function Module:parameters(...)
    local _, vals = list(self, "_params", "parameters", LISTING, ...)
    return vals
end

function Module:named_buffers(...)
    local names, vals = list(self, "_buffers", "named_buffers", NAMED_LISTING, ...)
    return named(names, vals, true)
end

function Module:buffers(...)
    local _, vals = list(self, "_buffers", "buffers", LISTING, ...)
    return vals
end

-- PyTorch's share_memory(): share_memory_() on every parameter and buffer (and gradient);
-- returns self
function Module:share_memory(...)
    args.no_extra("share_memory", 1, ...)
    return self:_apply(function(t)
        t:share_memory_()
    end)
end

function Module:children()
    local r = {}
    for _, name in ipairs(self._modules) do
        local m = child(self, name)
        if m then
            r[#r + 1] = m
        end
    end
    return r
end

function Module:named_children()
    local names, vals = {}, {}
    for _, name in ipairs(self._modules) do
        local m = child(self, name)
        if m then
            names[#names + 1], vals[#vals + 1] = name, m
        end
    end
    return named(names, vals, true)
end

-- self and every descendant, depth first, each once (a module shared by two parents is
-- listed at its first place, as in PyTorch); names are dotted paths, "" for self. seen false:
-- PyTorch's remove_duplicate=False, a shared module under each of its names
local function walk_modules(m, prefix, names, vals, seen)
    if seen then
        if seen[m] then
            return
        end
        seen[m] = true
    end
    names[#names + 1], vals[#vals + 1] = prefix, m
    for _, name in ipairs(m._modules) do
        local c = child(m, name)
        if c then
            walk_modules(c, prefix == "" and name or (prefix .. "." .. name), names, vals, seen)
        end
    end
end

function Module:modules()
    local names, vals = {}, {}
    walk_modules(self, "", names, vals, {})
    return vals
end

-- named_modules([memo, prefix, remove_duplicate]) (PyTorch's, positionally or by name): memo a
-- table whose keys are modules to leave out (filled with those listed), prefix before each name
local NAMED_MODULES = { "memo", "prefix", "remove_duplicate" }
function Module:named_modules(...)
    local memo, prefix, dedupe = nil, "", true
    if select("#", ...) > 0 then
        local o = signature.arguments("named_modules", NAMED_MODULES, 1, ...)
        core._check_options(o, "named_modules", NAMED_MODULES)
        if o.memo ~= nil and type(o.memo) ~= "table" then
            raise("tide: named_modules: expected memo to be a table (modules as keys), got " ..
                type(o.memo))
        end
        if o.prefix ~= nil and type(o.prefix) ~= "string" then
            raise("tide: named_modules: expected prefix to be a string, got " .. type(o.prefix))
        end
        if o.remove_duplicate ~= nil and type(o.remove_duplicate) ~= "boolean" then
            raise("tide: named_modules: expected remove_duplicate to be a boolean, got " ..
                type(o.remove_duplicate))
        end
        memo, prefix = o.memo, o.prefix or ""
        dedupe = o.remove_duplicate ~= false
    end
    local names, vals = {}, {}
    walk_modules(self, prefix, names, vals, dedupe and (memo or {}) or nil)
    return named(names, vals, true)
end

-- fn(m) on every child's subtree, then on self (PyTorch's order: children first); returns self
function Module:apply(fn)
    if type(fn) ~= "function" then
        raise("tide: Module:apply: expected a function of a module, got " .. type(fn))
    end
    for _, c in ipairs(self:children()) do
        c:apply(fn)
    end
    fn(self)
    return self
end

-- ---- modes and gradients ----

function Module:train(mode)
    if mode == nil then
        mode = true
    elseif type(mode) ~= "boolean" then
        raise("tide: " .. self.__name .. ":train: training mode is expected to be boolean " ..
            "(true or false), got " .. type(mode))
    end
    -- PyTorch's recursion: each child's own train runs (a subclass's override: loralib's merge)
    rawset(self, "training", mode and true or false)
    for _, m in ipairs(self:children()) do
        m:train(mode)
    end
    return self
end

--- model:compile([opts]): PyTorch 2.2's in-place nn.Module.compile. tide runs every op eagerly
--- (tide.compile gives the module back), so this checks torch.compile's options and changes
--- nothing; returns nothing, as PyTorch's.
function Module:compile(opts, ...)
    require("tide.compile")(self, opts, ...)
end

function Module:eval()
    return self:train(false)
end

-- m:zero_grad([set_to_none]): nil or true sets the gradients to nil, false zeroes them in
-- place (PyTorch 1.13's default; tide._set_to_none)
function Module:zero_grad(...)
    require("tide._set_to_none")("zero_grad", self:parameters(), ...)
    return self
end

function Module:requires_grad_(b)
    if b == nil then
        b = true
    end
    for _, p in ipairs(self:parameters()) do
        p:requires_grad_(b)
    end
    return self
end

-- ---- moving and casting in place ----

local DTYPES = {
    float32 = true, float64 = true, float16 = true, bfloat16 = true,
    int32 = true, int64 = true, uint8 = true, bool = true,
}

-- a device from a spec or device object; a bad one raises at Module:to's caller
local function device_of(spec)
    local ok, dev = pcall(core.device, spec)
    if not ok then
        local msg = tostring(dev)
        raise(msg:match("^[^\n]-:%d+: (tide:.*)") or msg)
    end
    return dev
end

local function parse_to(a, b)
    local dev, dt
    if type(a) == "string" and DTYPES[a] then
        dt = a
    elseif a == "meta" then
        raise('tide: Module:to: tide has no "meta" device (tensors with a shape and no ' ..
            'storage); a stateless copy for tide.func.functional_call needs none: keep ' ..
            'tide.deepcopy(model) as it is, functional_call swaps in every parameter and buffer')
    elseif type(a) == "string" and not (a:match("^cpu$") or a:match("^cuda$") or a:match("^cpu:") or
        a:match("^cuda:")) then
        raise(string.format('tide: Module:to: "%s" is neither a device nor a dtype; devices are ' ..
            '"cpu", "cpu:N", "cuda" or "cuda:N", dtypes "float32", "float64", "float16", ' ..
            '"bfloat16", "int32", "int64", "uint8" or "bool"', a))
    elseif is_tensor(a) then -- PyTorch's module.to(tensor): its device and dtype
        dev, dt = a.device, a.dtype
    elseif a ~= nil and type(a) ~= "table" then
        dev = device_of(a)
    end
    if type(b) == "string" then
        dt = b
    elseif type(b) == "table" then
        core._check_options(b, "Module:to", { "dtype" })
        dt = b.dtype or dt
    end
    if type(a) == "table" then
        -- PyTorch's model.to(memory_format=torch.channels_last): checked, layouts stay row-major
        core._check_options(a, "Module:to", { "device", "dtype", "memory_format" })
        require("tide.op_args").memory_format("Module:to", nil, a.memory_format)
        dt = a.dtype or dt
        dev = a.device and device_of(a.device) or dev
    end
    if dt ~= nil and type(dt) ~= "string" then -- {dtype = <a tensor>} (fuzz seed 8102)
        raise("tide: Module:to: dtype must be a string such as \"float32\", got a " ..
            (is_tensor(dt) and "tensor" or type(dt)))
    end
    if dt and not autograd.FLOAT[dt] then
        raise("tide: Module:to: expected a floating-point dtype, got " .. dt ..
            "; parameters stay floating point")
    end
    return dev, dt
end

-- moves/casts t in place with set_ (the object that others hold sees the change)
local function move(t, dev, dt, float_only)
    local u = t
    if dt and (not float_only or autograd.FLOAT[t.dtype]) and t.dtype ~= dt then
        u = u:to(dt)
    end
    if dev and u.device ~= dev then
        u = u:to(dev)
    end
    if not rawequal(u, t) then
        t:set_(u)
    end
end

function Module:_apply(fn)
    autograd.no_grad(function()
        for _, m in ipairs(self:modules()) do
            for _, name in ipairs(m._params) do
                local p = rawget(m, name)
                if p then
                    local cplx = is_complex(p) -- its real pair moves, in place
                    p = cplx and view_as_real(p) or p
                    fn(p, true, cplx)
                    local g = autograd.get_grad(p)
                    if g then
                        fn(g, true, cplx)
                    end
                end
            end
            for _, name in ipairs(m._buffers) do
                local b = rawget(m, name)
                if is_complex(b) then
                    fn(view_as_real(b), false, true)
                elseif is_sparse(b) then -- its indices and values, in place (Whisper's
                    fn(b._i, false) -- alignment_heads buffer)
                    fn(b._v, false)
                    b.device, b.dtype = b._v.device, b._v.dtype
                elseif b then
                    fn(b, false)
                end
            end
        end
    end)
    return self
end

-- model:to(dev), model:to(dtype), model:to(dev, dtype): in place, returns the model
-- A complex parameter takes the precision of a float32 or float64 dtype (complex64,
-- complex128) and keeps its dtype under another (tide has no complex float16, and PyTorch's
-- half() leaves a complex parameter as it is)
local COMPLEX_PRECISION = { float32 = true, float64 = true }
function Module:to(a, b)
    local dev, dt = parse_to(a, b)
    return self:_apply(function(t, _, cplx)
        move(t, dev, (not cplx or COMPLEX_PRECISION[dt]) and dt or nil, true)
    end)
end

function Module:cpu()
    return self:to("cpu")
end

function Module:cuda(n)
    if n ~= nil and not (compat.is_integer(n) and n >= 0) then
        raise("tide: cuda: expected a device index (an integer >= 0), got " ..
            (type(n) == "number" and tostring(n) or type(n)))
    end
    return self:to(n and ("cuda:" .. n) or "cuda")
end

function Module:float()
    return self:to("float32")
end

function Module:double()
    return self:to("float64")
end

function Module:half()
    return self:to("float16")
end

function Module:bfloat16()
    return self:to("bfloat16")
end

-- m:type(dst_type): PyTorch's Module.type, every parameter and buffer cast as t:type(dst_type)
-- casts a tensor (a dtype name, "torch.DoubleTensor", tide.cuda.FloatTensor, ... moving to CUDA
-- for a cuda type); returns m. Parameters stay floating point (Module:to's rule).
function Module:type(dst_type, ...)
    require("tide.op_args").no_extra("Module:type", 1, ...)
    local probe = core.empty({ 0 }):type(dst_type) -- t:type's names and errors
    local cuda = tostring(probe.device):match("^cuda") ~= nil
    return self:to({ dtype = probe.dtype, device = cuda and "cuda" or nil })
end

-- ---- state ----

-- Every name a tensor has, as PyTorch's state_dict: a tied weight (decoder.weight =
-- embedding.weight) is under both keys, one tensor (parameters() yields it once)
-- owners (optional): filled with {module, attribute name, is a parameter} per entry
local function state_entries(self, owners)
    local names, vals = {}, {}
    local function walk(m, prefix)
        local np = rawget(m, "_non_persistent")
        for li, list in ipairs({ m._params, m._buffers }) do
            for _, name in ipairs(list) do
                local v = rawget(m, name)
                if v ~= nil and not (li == 2 and np and np[name]) then
                    names[#names + 1] = prefix .. name
                    vals[#vals + 1] = v
                    if owners then
                        owners[#names] = { m, name, li == 1 }
                    end
                end
            end
        end
        for _, name in ipairs(m._modules) do
            local c = child(m, name)
            if c then
                walk(c, prefix .. name .. ".")
            end
        end
    end
    walk(self, "")
    return names, vals
end

-- state_dict([{destination =, prefix =, keep_vars =}]) (also PyTorch's deprecated positional
-- (destination, prefix, keep_vars)): prefix before each key; keep_vars true gives the
-- parameters and buffers themselves (not detached); destination a table filled and returned
local STATE_DICT = { destination = true, prefix = true, keep_vars = true }
function Module:state_dict(...)
    local destination, prefix, keep_vars = ...
    if select("#", ...) == 1 and type(destination) == "table" and next(destination) ~= nil and
        getmetatable(destination) == nil and not is_module(destination) then
        local o = destination
        for k in pairs(o) do
            if not STATE_DICT[k] then
                raise("tide: state_dict: unknown option '" .. tostring(k) .. "'; it takes " ..
                    "{destination =, prefix =, keep_vars =}")
            end
        end
        destination, prefix, keep_vars = o.destination, o.prefix, o.keep_vars
    end
    if destination ~= nil and type(destination) ~= "table" then
        raise("tide: state_dict: expected destination to be a table, got " .. type(destination))
    end
    if prefix ~= nil and type(prefix) ~= "string" then
        raise("tide: state_dict: expected prefix to be a string, got " .. type(prefix))
    end
    if keep_vars ~= nil and type(keep_vars) ~= "boolean" then
        raise("tide: state_dict: expected keep_vars to be a boolean, got " .. type(keep_vars))
    end
    local names, vals = state_entries(self)
    local out = {}
    for i = 1, #names do
        out[i] = keep_vars and vals[i] or vals[i]:detach()
        if prefix and prefix ~= "" then
            names[i] = prefix .. names[i]
        end
    end
    local sd = destination
    if destination then
        for i = 1, #names do
            destination[names[i]] = out[i]
        end
    else
        sd = named(names, out, false)
    end
    for _, mp in ipairs(hooked_modules(self, "_state_dict_hooks", prefix, true)) do
        for _, h in ipairs({ compat.unpack(rawget(mp[1], "_state_dict_hooks") or {}) }) do
            local r = h(mp[1], sd, mp[2], {})
            if r ~= nil and mp[1] == self then -- (a child's result is dropped, as PyTorch's)
                sd = r
            end
        end
    end
    return sd
end

local shape_str, same_shape = args.shape_str, args.same_shape

-- src in dst's dtype and on dst's device: what can fail (a conversion) happens here, before
-- any parameter is written
local function converted(dst, src)
    if src.dtype ~= dst.dtype then
        src = src:to(dst.dtype)
    end
    if src.device ~= dst.device then
        src = src:to(dst.device)
    end
    return src
end

-- the advice that ends a strict load's error about missing and unexpected keys: when every
-- unexpected key, with each list index one higher, is a key of the model, the state dict
-- counts from 0 as PyTorch's do (layers.0.weight for tide's layers.1.weight)
local function keys_advice(unexpected, expected)
    local shifted = 0
    for _, key in ipairs(unexpected) do
        local k = key:gsub("[^.]+", function(part)
            if part:match("^%d+$") then
                return tostring(tonumber(part) + 1)
            end
        end)
        if expected[k] == nil then
            return "; pass strict = false to load the matching keys only"
        end
        if k ~= key then
            shifted = shifted + 1
        end
    end
    if shifted == 0 then
        return "; pass strict = false to load the matching keys only"
    end
    return "; the state dict numbers list entries from 0, as PyTorch does (tide counts from " ..
        "1): load nn.utils.state_dict_from_torch(sd)"
end

-- PyTorch's per-module hook, called by load_state_dict before it reads any key:
-- _load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
-- unexpected_keys, error_msgs). A class overrides it to edit the state dict (a copy of the
-- caller's, as PyTorch's) under its prefix ("layer1.bn1.", list entries 1-based): Python's
-- `del state_dict[k]` is `state_dict[k] = nil` (torchvision's FrozenBatchNorm2d drops
-- num_batches_tracked so). The keys in the copy are then loaded as usual; keys the hook appends to
-- missing_keys / unexpected_keys join the result (and a strict load's check), and any message
-- in error_msgs makes the load raise, changing nothing. This default does nothing, so an
-- override may call Module._load_from_state_dict(self, ...) as Python's super() does.
function Module:_load_from_state_dict(...) -- luacheck: ignore
    -- (state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
end

-- the modules (self first, then depth first) whose class overrides _load_from_state_dict run it
-- on a copy of sd; returns the copy (or sd itself when none does) and the keys they report
local function run_load_hooks(self, sd, strict)
    local hooked = modules_where(self, function(m)
        return m._load_from_state_dict ~= Module._load_from_state_dict
    end)
    local pre = hooked_modules(self, "_load_state_dict_pre_hooks")
    if #hooked == 0 and #pre == 0 then
        return sd, {}, {}
    end
    local copy = {}
    for k, v in next, sd do
        copy[k] = v
    end
    local missing, unexpected, error_msgs = {}, {}, {}
    for _, h in ipairs(pre) do -- PyTorch's pre hooks run first in _load_from_state_dict
        for _, f in ipairs({ compat.unpack(rawget(h[1], "_load_state_dict_pre_hooks") or {}) }) do
            f(copy, h[2], {}, strict, missing, unexpected, error_msgs)
        end
    end
    for _, h in ipairs(hooked) do
        h[1]:_load_from_state_dict(copy, h[2], {}, strict, missing, unexpected, error_msgs)
    end
    if #error_msgs > 0 then
        local msgs = {}
        for i, m in ipairs(error_msgs) do
            msgs[i] = tostring(m)
        end
        raise("tide: load_state_dict: a module's _load_from_state_dict reported: " ..
            table.concat(msgs, "; ") .. " (nothing was loaded)")
    end
    return copy, missing, unexpected
end

-- PyTorch's _IncompatibleKeys: missing_keys and unexpected_keys, also at 1 and 2 (its
-- NamedTuple's r[0], r[1]: local missing, unexpected = table.unpack(r))
local function incompatible(missing, unexpected)
    return { missing_keys = missing, unexpected_keys = unexpected, missing, unexpected }
end

-- copies values in place (any device/dtype to the parameter's); all checks happen first, so a
-- failed load changes nothing. assign (PyTorch's load_state_dict(sd, strict, assign)): the
-- module takes the state dict's tensors themselves (their dtype and device) instead of copying
-- into its own; a parameter stays a parameter with its requires_grad (nn.Parameter(v,
-- p.requires_grad), sharing v's storage), so an optimizer must be built after such a load
function Module:load_state_dict(sd, strict, assign)
    if type(sd) ~= "table" then
        raise("tide: load_state_dict: expected a table of tensors, got " .. type(sd))
    end
    -- strict: PyTorch's positional boolean, or tide's options table {strict =, assign =}
    if type(strict) == "table" and not is_tensor(strict) then
        if assign ~= nil then
            raise("tide: load_state_dict: expected (state_dict[, strict[, assign]]) or " ..
                "(state_dict, {strict =, assign =}), got an options table and then " ..
                type(assign))
        end
        local o = args.options("load_state_dict", strict, { "strict", "assign" },
            "{strict = false, assign = true}")
        strict, assign = o.strict, o.assign
    elseif type(assign) == "table" and not is_tensor(assign) then
        local o = args.options("load_state_dict", assign, { "assign" }, "{assign = true}")
        assign = o.assign
    end
    if strict == nil then
        strict = true
    elseif type(strict) ~= "boolean" then
        raise("tide: load_state_dict: strict must be a boolean or {strict = false}, got " ..
            type(strict))
    end
    if assign == nil then
        assign = false
    elseif type(assign) ~= "boolean" then
        raise("tide: load_state_dict: assign must be a boolean ({assign = true}), got " ..
            tostring(assign))
    end
    local hook_missing, hook_unexpected
    sd, hook_missing, hook_unexpected = run_load_hooks(self, sd, strict)
    local owners = assign and {} or nil
    local names, vals = state_entries(self, owners)
    local expected, missing, unexpected = {}, {}, {}
    for i = 1, #names do
        expected[names[i]] = vals[i]
        local v = rawget(sd, names[i])
        if v == nil then
            missing[#missing + 1] = names[i]
        elseif is_sparse(vals[i]) ~= is_sparse(v) then -- (PyTorch's copy_ between them fails)
            raise("tide: load_state_dict: '" .. names[i] .. "' is " .. (is_sparse(v) and
                "a sparse tensor in the state dict and a dense one in the model" or
                "a dense tensor in the state dict and a sparse one in the model") ..
                "; convert it with " .. (is_sparse(v) and "v:to_dense()" or "v:to_sparse()"))
        elseif not is_tensor(v) and not is_complex(v) and not is_sparse(v) then
            raise("tide: load_state_dict: expected a tensor for '" .. names[i] .. "', got " ..
                type(v))
        elseif is_complex(v) and not is_complex(vals[i]) then
            raise("tide: load_state_dict: '" .. names[i] .. "' is a " .. v.dtype .. " tensor " ..
                "in the state dict and " .. vals[i].dtype .. " in the model, and copying it " ..
                "would drop its imaginary part; load v.real (or v:abs()) under that name")
        elseif not same_shape(v.shape, vals[i].shape) then
            raise("tide: load_state_dict: size mismatch for '" .. names[i] .. "': the model has " ..
                shape_str(vals[i].shape) .. ", the state dict has " .. shape_str(v.shape) ..
                "; check the model's sizes")
        end
    end
    for k in pairs(sd) do
        if expected[k] == nil then
            unexpected[#unexpected + 1] = tostring(k)
        end
    end
    for _, k in ipairs(hook_unexpected) do
        unexpected[#unexpected + 1] = tostring(k)
    end
    table.sort(unexpected)
    for _, k in ipairs(hook_missing) do
        missing[#missing + 1] = tostring(k)
    end
    -- with post hooks, as PyTorch: the load, then the hooks (they may edit the keys in place),
    -- then a strict load's check of the keys (which then raises after loading)
    local post = hooked_modules(self, "_load_state_dict_post_hooks")
    local function check(miss, unexp)
        local mismatch = strict and args.keys_mismatch(miss, unexp)
        if mismatch then
            raise("tide: load_state_dict: " .. mismatch .. keys_advice(unexp, expected))
        end
    end
    local function finish()
        local inc = incompatible(missing, unexpected)
        for _, mp in ipairs(post) do
            for _, h in ipairs({ compat.unpack(rawget(mp[1], "_load_state_dict_post_hooks")) }) do
                if h(mp[1], inc) ~= nil then
                    raise("tide: load_state_dict: a hook registered with " ..
                        "register_load_state_dict_post_hook returned a value; it should edit " ..
                        "incompatible_keys in place and return nothing")
                end
            end
        end
        if #post > 0 then
            check(inc.missing_keys, inc.unexpected_keys)
        end
        return inc
    end
    if #post == 0 then
        check(missing, unexpected)
    end
    -- every value converted first, then copied: a failure leaves the model as it was (the
    -- fill_(0):add_(v) this replaced zeroed a float16 parameter, then failed in add_)
    if assign then
        local Parameter = require("tide.nn.Parameter")
        -- one parameter per place in memory: weights tied in sd (a state_dict gives each name
        -- its own view of the one storage) stay tied
        local made = {}
        for i = 1, #names do
            local v = rawget(sd, names[i])
            if v ~= nil then
                local o = owners[i]
                if o[3] then
                    local place = v:numel() > 0 and args.view_place(is_complex(v) and
                        view_as_real(v) or v) or i
                    made[place] = made[place] or Parameter(v, vals[i].requires_grad)
                    v = made[place]
                end
                rawset(o[1], o[2], v)
            end
        end
        return finish()
    end
    local ready = {}
    for i = 1, #names do
        local v = rawget(sd, names[i])
        if v ~= nil then
            ready[i] = converted(vals[i], v)
        end
    end
    autograd.no_grad(function()
        for i = 1, #names do
            local dst, src = vals[i], ready[i]
            if is_sparse(dst) and src ~= nil then -- its entries replaced (the same object)
                dst._i, dst._v, dst._coalesced = src._i:clone(), src._v:clone(), src._coalesced
            elseif src ~= nil then
                dst:copy_(src)
            end
        end
    end)
    return finish()
end

-- ---- printing ----

function Module:num_parameters()
    local n = 0
    for _, p in ipairs(self:parameters()) do
        n = n + p:numel()
    end
    return n
end

-- one line describing the layer itself (layers override: "Linear(784 -> 128)")
function Module:extra_repr()
    return ""
end

local function tree(m, indent, name)
    local head = (name and (name .. ": ") or "") .. m.__name
    local extra = m:extra_repr()
    if extra ~= "" then
        head = head .. "(" .. extra .. ")"
    end
    local n = m:num_parameters()
    head = head .. "  [" .. n .. (n == 1 and " parameter]" or " parameters]")
    local lines = { indent .. head }
    for _, nc in ipairs(m:named_children()) do
        lines[#lines + 1] = tree(nc[2], indent .. "  ", nc[1])
    end
    return table.concat(lines, "\n")
end

function Module.__tostring(self)
    return tree(self, "", nil)
end

return Module
